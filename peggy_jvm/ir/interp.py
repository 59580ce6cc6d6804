"""The reference semantics of the IR: an interpreter of :class:`~.nodes.IRMethod` on a model heap.

What this module owns
    What an IR method *does* on concrete inputs: its result or the Java exception it ends with, the heap it
    leaves and what it printed. The tests hold the IR to the JVM with it (lifting is correct when interpreting
    the lifted IR behaves as the JVM runs the bytecode), and later stages hold their outputs to the IR.

Inputs
    An IRMethod, argument values, a :class:`Heap` and a :class:`CallHandler` for what lies outside the method
    (calls, allocation through constructors, static fields of other classes, invokedynamic, class
    initialization).

Outputs
    An :data:`Outcome`: :class:`Returned` (the value, None for void) or :class:`Threw` (the exception's class in
    internal form and the exception object). :class:`Unsupported` is raised, never returned, when the model
    cannot say what Java would do (a library call nobody modelled, the step budget, the identity of two equal
    strings, ...): a test must count such an input as not compared, never as passed. :class:`InterpError` means
    the IR itself is malformed (a variable read before any write, a jump to a missing block): a lifter bug.

Values
    int (also boolean, byte, char, short) and long: Python ints in range; float and double: Python floats (a float
    is binary32-exact); null: None; java/lang/String: a Python ``str`` of UTF-16 code units (an immutable value,
    see "identity" below); other objects: :class:`JObject` (class name, field dict keyed by the declaring
    class's FieldRef, and ``native`` state of modelled library classes); arrays: :class:`JArray` (array
    descriptor, Python list, elements of the component type's default value); class literals:
    :class:`ClassValue` (one per name and heap); boxed values: :class:`Boxed` (``valueOf`` returns the JDK's cached
    instance, one per heap, where the JDK caches: Integer/Long/Short/Byte -128..127, Character 0..127, Boolean;
    :func:`peggy_jvm.jdk.numbers.box`).

Invariants
    * Every arithmetic operator, conversion and comparison is computed by :data:`peggy_jvm.semantics.OPERATIONS`
      (and ``CONDITIONS``); this module never re-implements Java arithmetic.
    * The exceptions the IR raises itself are the JVM's: ArithmeticException (``div``/``rem`` by zero),
      NullPointerException (field and array access, invoke on a null receiver, ``monitorenter``/``monitorexit``
      and ``throw`` of null), ArrayIndexOutOfBoundsException, NegativeArraySizeException, ArrayStoreException,
      ClassCastException, IllegalMonitorStateException, StackOverflowError (call depth limit), and
      OutOfMemoryError for one array larger than the modelled JVM's whole heap (``max_heap_bytes``, when given;
      arrays too large for the model but not for that heap are Unsupported). They route to the
      handlers of the block they are raised in, in order (``catch_type`` None catches anything; otherwise the
      thrown class must be assignable, decided with the heap's :class:`ClassHierarchy`, which reads the JDK
      image for library classes).
    * Reference identity is Python identity, except for strings: two strings of different text are different
      objects, and comparing two strings of equal text by identity raises Unsupported (Java may or may not have
      one object there).
    * A synchronized method enters the monitor of its receiver (or its class) and leaves it on return or when an
      exception leaves the method; monitors are counted per object.
    * A step budget (blocks entered plus statements executed, shared by all frames of one run) bounds every run.

Every Invoke, New and InvokeDynamic goes to the handler, also for the method's own class (only the handler has
class files to lift callees from); static fields of the method's own class live in :attr:`Heap.statics`
directly, other classes' static fields go through the handler.

This module models no library method: :class:`BaseCallHandler` models nothing, and the handler the
tests and validation use, :class:`peggy_jvm.jdk.handler.DefaultCallHandler` (the program's classes by lifting,
the library by the models of :mod:`peggy_jvm.jdk`), lives above the IR and imports this module, never the
reverse. The value classes above (``native`` state, :class:`Boxed`) are what those models build on.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable, NoReturn, Protocol, cast

from .. import semantics as S
from ..classfile.descriptors import parse_method_descriptor
from ..classfile.errors import UnsupportedCodeError
from ..classfile.hierarchy import OBJECT, ClassHierarchy
from .nodes import (ArrayLength, ArrayLoad, ArrayStore, Binary, Block, Catch, CheckCast, ClassInit, Cond, Const,
                    ConstKind, Copy, FieldRef, GetField, GetStatic, Goto, If, InstanceOf, Invoke, InvokeDynamic,
                    InvokeKind, IRMethod, Kind, MethodRef, MonitorEnter, MonitorExit, New, NewArray, Operand,
                    PutField, PutStatic, Return, Stmt, Switch, Throw, Unary, Var)

__all__ = [
    "Value", "JObject", "JArray", "ClassValue", "Boxed", "Heap", "Returned", "Threw", "Outcome", "Unsupported",
    "InterpError", "JavaThrow", "CallHandler", "BaseCallHandler", "Interpreter", "run_method", "runtime_class",
    "default_value", "narrow", "DEFAULT_BUDGET", "DEFAULT_MAX_DEPTH",
]

DEFAULT_BUDGET = 2_000_000
"""Steps (statements executed plus blocks entered) one run may take before it raises Unsupported."""
DEFAULT_MAX_DEPTH = 150
"""Interpreted frames one run may nest before the call throws StackOverflowError (the JVM allows far more)."""
MAX_ARRAY_ELEMENTS = 1 << 24
"""Arrays larger than this are not modelled (Unsupported), so a huge ``new int[n]`` cannot exhaust memory."""

STRING = "java/lang/String"
THROWABLE = "java/lang/Throwable"
NPE = "java/lang/NullPointerException"
VM_MESSAGE = object()
"""The message of an exception the VM made whose exact text the model does not know (getMessage: Unsupported)."""


# -- values ---------------------------------------------------------------------------------------------------
class JObject:
    """An object of class ``cls`` (internal name). ``fields`` is keyed by the declaring class's FieldRef;
    ``native`` holds the state of modelled library classes (a Throwable's message, a StringBuilder's chars)."""

    __slots__ = ("cls", "fields", "native")

    def __init__(self, cls: str, native: dict | None = None) -> None:
        self.cls = cls
        self.fields: dict[FieldRef, Value] = {}
        self.native: dict = native if native is not None else {}

    def __repr__(self) -> str:
        return f"<{self.cls}@{id(self):x}>"


class JArray:
    """An array: ``desc`` is its descriptor (``[I``, ``[Ljava/lang/String;``), ``items`` its elements."""

    __slots__ = ("desc", "items")

    def __init__(self, desc: str, items: list) -> None:
        self.desc = desc
        self.items = items

    def __repr__(self) -> str:
        return f"<{self.desc} {self.items!r}>"


class ClassValue:
    """A ``java.lang.Class`` object (class literals, ``getClass()``); one per name per heap."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<class {self.name}>"


class Boxed:
    """A boxed primitive (``java/lang/Integer`` ...): the wrapper class and the primitive value (booleans and chars
    as ints). Made by the library's ``valueOf`` models (:func:`peggy_jvm.jdk.numbers.box`); identity is Python
    identity."""

    __slots__ = ("cls", "value")

    def __init__(self, cls: str, value: int | float) -> None:
        self.cls = cls
        self.value = value

    def __repr__(self) -> str:
        return f"<{self.cls} {self.value!r}>"


# object, not the union int | float | str | None | JObject | JArray | ClassValue | Boxed: which of them a value is
# follows from the verified IR's types and descriptors, which mypy does not see. Code that uses a value as the
# type the IR gives it says so (a cast, or on the hot path, where a cast's call costs, a type: ignore ending
# "(Value)")
Value = object


_DEFAULTS = {"I": 0, "J": 0, "S": 0, "B": 0, "C": 0, "Z": 0, "F": 0.0, "D": 0.0}


def default_value(desc: str) -> Value:
    """The default value of a field or array element of descriptor ``desc``."""
    return _DEFAULTS.get(desc[0])


def narrow(desc: str, v: Value) -> Value:
    """A value stored into a boolean/byte/char/short field, array element or returned as one (JVMS)."""
    c = desc[0]
    if c == "Z":
        return v & 1  # type: ignore[operator]  # desc says v is an int (Value)
    if c == "B":
        return S.i2b(v)  # type: ignore[arg-type]  # desc says v is an int (Value)
    if c == "C":
        return S.i2c(v)  # type: ignore[arg-type]  # desc says v is an int (Value)
    if c == "S":
        return S.i2s(v)  # type: ignore[arg-type]  # desc says v is an int (Value)
    return v


def runtime_class(v: Value) -> str:
    """The internal class name (or array descriptor) of a non-null reference value."""
    t = type(v)
    if t is str:
        return STRING
    if type(v) is JObject or type(v) is Boxed:  # type(v), not t: mypy narrows v only through type(v) itself
        return v.cls
    if type(v) is JArray:
        return v.desc
    if t is ClassValue:
        return "java/lang/Class"
    raise InterpError(f"{v!r} used as a reference")


class Heap:
    """The model heap: static fields, captured standard output, monitors, class-initialization state.

    ``statics`` maps the declaring class's FieldRef to the value (absent: the default value). ``out`` collects
    what the program printed on System.out (see :meth:`take_output`). ``hierarchy`` answers assignability
    (exception handlers, checkcast, instanceof, array stores); give it the program's class path.
    """

    def __init__(self, hierarchy: ClassHierarchy | None = None) -> None:
        self.hierarchy = hierarchy if hierarchy is not None else _jdk_hierarchy()
        self.statics: dict[FieldRef, Value] = {}
        self.out: list[str] = []
        self.monitors: dict[object, list] = {}  # key -> [object, count]
        self.initialized: set[str] = set()  # classes whose initialization started
        self.erroneous: set[str] = set()  # classes whose initialization failed
        self.classes: dict[str, ClassValue] = {}
        self.boxes: dict[object, Value] = {}  # cached boxes (Integer.valueOf ...) and non-capturing lambdas
        self._assignable: dict[tuple[str, str], bool] = {}

    def class_value(self, name: str) -> ClassValue:
        c = self.classes.get(name)
        if c is None:
            c = self.classes[name] = ClassValue(name)
        return c

    def take_output(self) -> str:
        """What was printed since the last call, and forget it."""
        text = "".join(self.out)
        self.out.clear()
        return text

    # monitors ------------------------------------------------------------------------------------------
    @staticmethod
    def _monitor_key(obj: Value) -> object:
        return ("str", obj) if type(obj) is str else id(obj)

    def monitor_count(self, obj: Value) -> int:
        entry = self.monitors.get(self._monitor_key(obj))
        return entry[1] if entry else 0

    def monitor_enter(self, obj: Value) -> None:
        key = self._monitor_key(obj)
        entry = self.monitors.get(key)
        if entry is None:
            self.monitors[key] = [obj, 1]
        else:
            entry[1] += 1

    def monitor_exit(self, obj: Value) -> bool:
        """Leave the monitor; False if it was not held."""
        key = self._monitor_key(obj)
        entry = self.monitors.get(key)
        if entry is None:
            return False
        entry[1] -= 1
        if entry[1] == 0:
            del self.monitors[key]
        return True

    # types ---------------------------------------------------------------------------------------------
    def is_assignable(self, source: str, target: str) -> bool:
        """Whether a value of runtime class ``source`` is an instance of ``target`` (JLS 5.2, JVMS checkcast;
        arrays included). Unknown classes raise Unsupported."""
        if source == target or target == OBJECT:
            return True
        key = (source, target)
        found = self._assignable.get(key)
        if found is None:
            found = self._assignable[key] = self._compute_assignable(source, target)
        return found

    def _compute_assignable(self, s: str, t: str) -> bool:
        if s.startswith("["):
            if t.startswith("["):
                sc, tc = s[1:], t[1:]
                if sc[0] in "L[" and tc[0] in "L[":
                    return self.is_assignable(_class_of(sc), _class_of(tc))
                return sc == tc
            return t in ("java/lang/Cloneable", "java/io/Serializable")
        if t.startswith("["):
            return False
        return t in self.supertypes(s)

    def supertypes(self, cls: str) -> set[str]:
        """``cls`` and all its superclasses and superinterfaces."""
        seen = {cls}
        work = deque([cls])
        try:
            while work:
                info = self.hierarchy.info(work.popleft())
                for sup in (info.super_name, *info.interfaces):
                    if sup is not None and sup not in seen:
                        seen.add(sup)
                        work.append(sup)
        except UnsupportedCodeError as e:
            raise Unsupported(f"class hierarchy: {e}") from None
        return seen

    def new_throwable(self, cls: str, message: object = None) -> JObject:
        """An exception object as the VM makes it (no cause, the given message or VM_MESSAGE)."""
        return JObject(cls, {"message": message, "cause": None, "suppressed": []})


def _class_of(desc: str) -> str:
    return desc[1:-1] if desc[0] == "L" else desc


_JDK_HIERARCHY: ClassHierarchy | None = None


def _jdk_hierarchy() -> ClassHierarchy:
    global _JDK_HIERARCHY
    if _JDK_HIERARCHY is None:
        _JDK_HIERARCHY = ClassHierarchy()
    return _JDK_HIERARCHY


# -- outcomes and control exceptions ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Returned:
    value: Value


@dataclass(frozen=True, slots=True)
class Threw:
    exception: str  # internal class name
    obj: Value


Outcome = Returned | Threw


class Unsupported(Exception):
    """The model cannot say what Java would do here; ``reason`` says why. Never a pass, never a failure."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class InterpError(Exception):
    """The IR is malformed (e.g. a variable read before it is written): a bug of whoever made the IR."""


class JavaThrow(Exception):
    """A Java exception in flight; ``obj`` is the exception object."""

    def __init__(self, obj: Value) -> None:
        super().__init__(runtime_class(obj))
        self.obj = obj


# -- the call handler protocol ------------------------------------------------------------------------------
class CallHandler(Protocol):
    """What lies outside the interpreted method. Every method may raise JavaThrow (the call threw) or
    Unsupported (not modelled); ``interp`` is the running interpreter (its ``heap``, :meth:`Interpreter.execute`
    for nested calls, :meth:`Interpreter.throw`)."""

    def invoke(self, interp: Interpreter, kind: InvokeKind, method: MethodRef, receiver: Value,
               args: list[Value]) -> Value:
        """Call ``method`` (receiver None for static calls; already checked non-null otherwise)."""
        ...

    def new(self, interp: Interpreter, cls: str, constructor: MethodRef, args: list[Value]) -> Value:
        """Allocate an object of ``cls`` and run ``constructor`` on it; return the object."""
        ...

    def invoke_dynamic(self, interp: Interpreter, stmt: InvokeDynamic, args: list[Value]) -> Value:
        ...

    def get_static(self, interp: Interpreter, field: FieldRef) -> Value:
        """A static field of a class other than the running method's own."""
        ...

    def put_static(self, interp: Interpreter, field: FieldRef, value: Value) -> None:
        ...

    def class_init(self, interp: Interpreter, cls: str) -> None:
        """Initialize ``cls`` if it is not yet (``new``; a static method being called)."""
        ...

    def resolve_field(self, field: FieldRef) -> FieldRef:
        """The FieldRef of the class that declares ``field`` (the key of heap fields and statics)."""
        ...


class BaseCallHandler:
    """A handler that models nothing: every call, allocation, invokedynamic and foreign static field raises
    Unsupported; class initialization does nothing; fields resolve to themselves. Subclass it to model only what
    a test needs."""

    def invoke(self, interp: Interpreter, kind: InvokeKind, method: MethodRef, receiver: Value,
               args: list[Value]) -> Value:
        raise Unsupported(f"call {method}")

    def new(self, interp: Interpreter, cls: str, constructor: MethodRef, args: list[Value]) -> Value:
        raise Unsupported(f"new {cls}{constructor.descriptor}")

    def invoke_dynamic(self, interp: Interpreter, stmt: InvokeDynamic, args: list[Value]) -> Value:
        raise Unsupported(f"invokedynamic {stmt.name}{stmt.descriptor}")

    def get_static(self, interp: Interpreter, field: FieldRef) -> Value:
        raise Unsupported(f"static field {field}")

    def put_static(self, interp: Interpreter, field: FieldRef, value: Value) -> None:
        raise Unsupported(f"static field {field}")

    def class_init(self, interp: Interpreter, cls: str) -> None:
        return None

    def resolve_field(self, field: FieldRef) -> FieldRef:
        return field


# -- the interpreter ----------------------------------------------------------------------------------------
_THROWING = S.THROWING
_OPS = S.OPERATIONS
_CONDS = {id(c): S.CONDITIONS[c.value] for c in Cond}  # by id: hashing an Enum member runs Python code
_VALUE = ConstKind.VALUE
_REF = Kind.REF


_CAUGHT = object()
"""The key under which a frame's variables hold the exception its handler caught (None before any)."""


class _Env(dict):
    """A frame's variables; reading one that was never written is malformed IR."""

    __slots__ = ()

    def __missing__(self, key: Var) -> NoReturn:
        raise InterpError(f"variable {key!r} read before it is written")


def _same_ref(a: Value, b: Value) -> bool:
    if type(a) is str and type(b) is str:
        if a == b:
            raise Unsupported("identity of two equal strings")
        return False
    return a is b


def _holds_lambda(v: Value) -> bool:
    """Whether ``v`` is, or is an array (at any depth) holding, an object made by a LambdaMetafactory model."""
    if type(v) is JObject:
        return "lambda" in v.native or "fn" in v.native
    if type(v) is JArray and v.desc[1] in "L[":
        return any(_holds_lambda(e) for e in v.items)
    return False


class Interpreter:
    """One run: the heap, the call handler, the shared step budget and call depth.

    :meth:`run` runs a method to an Outcome; :meth:`execute` runs it for a caller (a handler interpreting a
    callee): it returns the value or raises JavaThrow.
    """

    def __init__(self, heap: Heap, call: CallHandler | None = None, *, budget: int = DEFAULT_BUDGET,
                 max_depth: int = DEFAULT_MAX_DEPTH, max_heap_bytes: int | None = None) -> None:
        self.heap = heap
        self.call: CallHandler = call if call is not None else BaseCallHandler()
        self.budget = budget
        self.max_depth = max_depth
        self.max_heap_bytes = max_heap_bytes
        self.steps = 0
        self.depth = 0
        self._field_keys: dict[FieldRef, FieldRef] = {}
        self._compiled: dict[Block, tuple[tuple[Callable[[dict], None], ...], Callable[[dict], int] | None]] = {}
        self._switches: dict[Switch, dict[int, int]] = {}

    # public API -----------------------------------------------------------------------------------------
    def run(self, method: IRMethod, args: list[Value]) -> Outcome:
        """Run ``method`` on ``args`` (receiver first for instance methods). A static method's class is
        initialized first, through the handler (what invoking it on the JVM does)."""
        try:
            if method.is_static:
                self.call.class_init(self, method.class_name)
            value = self.execute(method, args)
            if _holds_lambda(value):
                raise Unsupported("a lambda object as the result (the JVM's hidden class name is not modelled)")
            return Returned(value)
        except JavaThrow as e:
            return Threw(runtime_class(e.obj), e.obj)
        except RecursionError:
            raise Unsupported("Python recursion limit") from None

    def throw(self, cls: str, message: object = VM_MESSAGE) -> NoReturn:
        """Throw a new exception of class ``cls`` as the VM would."""
        raise JavaThrow(self.heap.new_throwable(cls, message))

    def field_key(self, field: FieldRef) -> FieldRef:
        key = self._field_keys.get(field)
        if key is None:
            key = self._field_keys[field] = self.call.resolve_field(field)
        return key

    def execute(self, m: IRMethod, args: list[Value]) -> Value:
        """Run ``m`` in a new frame; return its value (None for void) or raise JavaThrow."""
        if len(args) != len(m.params):
            raise InterpError(f"{m.class_name}.{m.name}{m.descriptor}: {len(args)} arguments for "
                              f"{len(m.params)} parameters")
        if self.depth >= self.max_depth:
            self.throw("java/lang/StackOverflowError", None)
        env: dict[Var, Value] = _Env(zip(m.params, args))
        lock: Value = None
        if m.synchronized:
            lock = args[0] if not m.is_static else self.heap.class_value(m.class_name)
            self.heap.monitor_enter(lock)
        self.depth += 1
        try:
            return self._frame(m, env, lock)
        finally:
            self.depth -= 1

    # the frame ------------------------------------------------------------------------------------------
    def _value(self, x: Operand, env: dict) -> Value:
        return env[x] if type(x) is Var else self._const(x)

    def _const(self, c: Const) -> Value:
        if c.kind is _VALUE:
            return c.value
        if c.kind is ConstKind.CLASS:
            return self.heap.class_value(cast(str, c.value))  # a CLASS constant's value is its name
        raise Unsupported(f"constant of kind {c.kind.value}")

    def _frame(self, m: IRMethod, env: dict, lock: Value) -> Value:
        # this loop is the hot path: statements run as compiled closures (see _compile), and so do the
        # terminators that only pick a successor (goto, if on numbers). The others are dispatched on
        # type(term) with `is` (faster than isinstance; mypy narrows term through it)
        blocks = m.blocks
        try:
            b = blocks[m.entry]
        except KeyError:
            raise InterpError(f"entry block B{m.entry} missing") from None
        heap = self.heap
        const = self._const
        ret_desc = parse_method_descriptor(m.descriptor)[1]
        narrow_ret = ret_desc in ("Z", "B", "C", "S")
        owner = m.class_name
        compiled = self._compiled
        while True:
            found = compiled.get(b)
            if found is None:
                found = compiled[b] = (self._compile(b, owner), _compile_branch(b.terminator))
            code, branch = found
            self.steps += len(code) + 1
            if self.steps > self.budget:
                raise Unsupported("step budget")
            try:
                for f in code:
                    f(env)
                term = b.terminator
                if branch is not None:
                    nxt = branch(env)
                elif type(term) is Goto:
                    nxt = term.target
                elif type(term) is If:
                    x = term.a
                    y = term.b
                    a = env[x] if type(x) is Var else x.value if x.kind is _VALUE else const(x)
                    c = env[y] if type(y) is Var else y.value if y.kind is _VALUE else const(y)
                    if x.type.kind is _REF or y.type.kind is _REF:
                        cond = term.cond
                        if cond is not Cond.EQ and cond is not Cond.NE:
                            raise InterpError(f"reference comparison {cond.value}")
                        taken = _same_ref(a, c) is (cond is Cond.EQ)
                    else:
                        taken = _CONDS[id(term.cond)](a, c)  # type: ignore[arg-type]  # not references: numbers (Value)
                    nxt = term.if_true if taken else term.if_false
                elif type(term) is Switch:
                    table = self._switches.get(term)
                    if table is None:
                        table = self._switches[term] = dict(zip(term.keys, term.cases))
                    key = self._value(term.value, env)
                    nxt = table.get(key, term.default)  # type: ignore[call-overload]  # an int (Value)
                elif type(term) is Return:
                    v = None if term.value is None else self._value(term.value, env)
                    if lock is not None:
                        if not heap.monitor_exit(lock):
                            self.throw("java/lang/IllegalMonitorStateException")
                        lock = None
                    return narrow(ret_desc, v) if narrow_ret else v
                elif type(term) is Throw:
                    v = self._value(term.value, env)
                    if v is None:
                        self.throw(NPE)
                    raise JavaThrow(v)
                else:
                    raise InterpError(f"block B{b.id} has no terminator")
                try:
                    b = blocks[nxt]
                except KeyError:
                    raise InterpError(f"jump to missing block B{nxt}") from None
            except JavaThrow as e:
                target = self._handler(b, e.obj)
                if target is None:
                    if lock is not None:
                        heap.monitor_exit(lock)
                    raise
                env[_CAUGHT] = e.obj  # what the handler block's Catch reads
                try:
                    b = blocks[target]
                except KeyError:
                    raise InterpError(f"handler block B{target} missing") from None

    # statements as closures -------------------------------------------------------------------------
    def _compile(self, b: Block, owner: str) -> tuple[Callable[[dict], None], ...]:
        """``b``'s statements as functions of the frame's variables, each doing exactly what :meth:`_stmt` does
        for it, with the operands' kinds (variable or plain constant) and the operator resolved once: the hot
        path of the interpreter is a call per statement."""
        return tuple(self._compile_stmt(s, owner) for s in b.stmts)

    def _compile_stmt(self, s: Stmt, owner: str) -> Callable[[dict], None]:
        # dispatch on t = type(s) with `is` (faster than isinstance on the hot path), which mypy does not narrow
        # s through: each branch reads s as the statement class t is (cast)
        t = type(s)
        value = self._value
        if t is Copy:
            copy_stmt = cast(Copy, s)
            d, x = copy_stmt.dst, copy_stmt.src
            if type(x) is Var:
                def copy(env: dict) -> None:
                    env[d] = env[x]
                return copy
            if x.kind is _VALUE:
                v = x.value

                def copy_const(env: dict) -> None:
                    env[d] = v
                return copy_const

            def copy_other(env: dict) -> None:
                env[d] = value(x, env)
            return copy_other
        if t is Binary:
            binary_stmt = cast(Binary, s)
            d, a, c, op = binary_stmt.dst, binary_stmt.a, binary_stmt.b, binary_stmt.op
            fn = _OPS[op]
            if op in _THROWING:
                throw = self.throw

                def divide(env: dict) -> None:
                    try:
                        env[d] = fn(value(a, env), value(c, env))
                    except S.JavaArithmeticError:
                        throw("java/lang/ArithmeticException", "/ by zero")
                return divide
            if type(a) is Var:
                if type(c) is Var:
                    def binary(env: dict) -> None:
                        env[d] = fn(env[a], env[c])
                    return binary
                if c.kind is _VALUE:
                    cv = c.value

                    def binary_const(env: dict) -> None:
                        env[d] = fn(env[a], cv)
                    return binary_const

            def binary_other(env: dict) -> None:
                env[d] = fn(value(a, env), value(c, env))
            return binary_other
        if t is Unary:
            unary_stmt = cast(Unary, s)
            d, a, fn = unary_stmt.dst, unary_stmt.a, _OPS[unary_stmt.op]
            if type(a) is Var:
                def unary(env: dict) -> None:
                    env[d] = fn(env[a])
                return unary

            def unary_other(env: dict) -> None:
                env[d] = fn(value(a, env))
            return unary_other
        if t is Catch:
            d = cast(Catch, s).dst

            def catch(env: dict) -> None:
                env[d] = env.get(_CAUGHT)
            return catch
        if t is ArrayLoad:
            load = cast(ArrayLoad, s)
            if type(load.array) is Var:
                return self._compile_array_load(load)
        elif t is GetField:
            getf = cast(GetField, s)
            if type(getf.obj) is Var:
                return self._compile_get_field(getf, owner)
        elif t is ArrayStore:
            store = cast(ArrayStore, s)
            if type(store.array) is Var:
                return self._compile_array_store(store, owner)
        stmt = self._stmt

        def other(env: dict) -> None:
            stmt(s, t, env, owner)
        return other

    def _compile_array_load(self, s: ArrayLoad) -> Callable[[dict], None]:
        d, arr_var, ix = s.dst, s.array, s.index
        value, array, throw = self._value, self._array, self.throw

        ix_var = type(ix) is Var

        def array_load(env: dict) -> None:
            arr = env[arr_var]
            i = env[ix] if ix_var else value(ix, env)
            if type(arr) is not JArray:
                arr = array(arr)
            items = arr.items
            if not 0 <= i < len(items):  # type: ignore[operator]  # an index is an int (Value)
                throw("java/lang/ArrayIndexOutOfBoundsException", f"Index {i} out of bounds for length {len(items)}")
            env[d] = items[i]  # type: ignore[index]  # an index is an int (Value)
        return array_load

    def _compile_get_field(self, s: GetField, owner: str) -> Callable[[dict], None]:
        d, obj_var, stmt = s.dst, s.obj, self._stmt
        key: list[FieldRef] = []  # resolved on first use (resolution may raise Unsupported)

        def get_field(env: dict) -> None:
            obj = env[obj_var]
            if type(obj) is not JObject:
                stmt(s, GetField, env, owner)  # null, or not a modelled object: the general path says
                return
            if not key:
                key.append(self.field_key(s.field))
            k = key[0]
            fields = obj.fields
            env[d] = fields[k] if k in fields else default_value(k.descriptor)
        return get_field

    def _compile_array_store(self, s: ArrayStore, owner: str) -> Callable[[dict], None]:
        arr_var, ix, val = s.array, s.index, s.value
        value, stmt, throw = self._value, self._stmt, self.throw

        ix_var = type(ix) is Var

        def array_store(env: dict) -> None:
            arr = env[arr_var]
            if type(arr) is not JArray or arr.desc[1] not in "IJFD":  # narrowing, store checks, null: general
                stmt(s, ArrayStore, env, owner)
                return
            i = env[ix] if ix_var else value(ix, env)
            items = arr.items
            if not 0 <= i < len(items):  # type: ignore[operator]  # an index is an int (Value)
                throw("java/lang/ArrayIndexOutOfBoundsException", f"Index {i} out of bounds for length {len(items)}")
            items[i] = value(val, env)  # type: ignore[index]  # an index is an int (Value)
        return array_store

    def _handler(self, b: Block, exc: Value) -> int | None:
        cls = runtime_class(exc)
        for h in b.handlers:
            if h.catch_type is None or self.heap.is_assignable(cls, h.catch_type):
                return h.target
        return None

    def _stmt(self, s: Stmt, t: type, env: dict, owner: str) -> None:
        # t is type(s), dispatched on with `is` (faster than isinstance), which mypy does not narrow s through:
        # each branch reads s as the statement class t is (cast); an index or a size is read as the int the
        # verified IR gives it (cast: Value is object)
        heap = self.heap
        val = self._value
        if t is ArrayLoad:
            load = cast(ArrayLoad, s)
            arr = val(load.array, env)
            i = cast(int, val(load.index, env))
            items = self._array(arr).items
            if not 0 <= i < len(items):
                self.throw("java/lang/ArrayIndexOutOfBoundsException",
                           f"Index {i} out of bounds for length {len(items)}")
            env[load.dst] = items[i]
        elif t is ArrayStore:
            store = cast(ArrayStore, s)
            arr = val(store.array, env)
            i = cast(int, val(store.index, env))
            v = val(store.value, env)
            ja = self._array(arr)
            items = ja.items
            if not 0 <= i < len(items):
                self.throw("java/lang/ArrayIndexOutOfBoundsException",
                           f"Index {i} out of bounds for length {len(items)}")
            comp = ja.desc[1:]
            if comp[0] in "L[":
                if v is not None and not heap.is_assignable(runtime_class(v), _class_of(comp)):
                    self.throw("java/lang/ArrayStoreException")
            elif comp in "ZBCS":
                v = narrow(comp, v)
            items[i] = v
        elif t is ArrayLength:
            alen = cast(ArrayLength, s)
            env[alen.dst] = len(self._array(val(alen.array, env)).items)
        elif t is GetField:
            getf = cast(GetField, s)
            obj = val(getf.obj, env)
            if obj is None:
                self.throw(NPE)
            if type(obj) is not JObject:
                raise Unsupported(f"field {getf.field} of a {runtime_class(obj)}")
            key = self.field_key(getf.field)
            fields = obj.fields
            env[getf.dst] = fields[key] if key in fields else default_value(key.descriptor)
        elif t is PutField:
            putf = cast(PutField, s)
            obj = val(putf.obj, env)
            v = val(putf.value, env)
            if obj is None:
                self.throw(NPE)
            if type(obj) is not JObject:
                raise Unsupported(f"field {putf.field} of a {runtime_class(obj)}")
            key = self.field_key(putf.field)
            obj.fields[key] = narrow(key.descriptor, v)
        elif t is GetStatic:
            gets = cast(GetStatic, s)
            f = gets.field
            if f.owner == owner:
                key = self.field_key(f)
                statics = heap.statics
                v = statics[key] if key in statics else default_value(key.descriptor)
                env[gets.dst] = v
            else:
                env[gets.dst] = self.call.get_static(self, f)
        elif t is PutStatic:
            puts = cast(PutStatic, s)
            f = puts.field
            v = val(puts.value, env)
            if f.owner == owner:
                key = self.field_key(f)
                heap.statics[key] = narrow(key.descriptor, v)
            else:
                self.call.put_static(self, f, v)
        elif t is Invoke:
            inv = cast(Invoke, s)
            recv = None
            if inv.receiver is not None:
                recv = val(inv.receiver, env)
            args = [val(a, env) for a in inv.args]
            if inv.kind is not InvokeKind.STATIC and recv is None:
                self.throw(NPE)
            r = self.call.invoke(self, inv.kind, inv.method, recv, args)
            if inv.dst is not None:
                env[inv.dst] = r
        elif t is New:
            newo = cast(New, s)
            args = [val(a, env) for a in newo.args]
            env[newo.dst] = self.call.new(self, newo.cls, newo.constructor, args)
        elif t is NewArray:
            newa = cast(NewArray, s)
            sizes = cast(list[int], [val(x, env) for x in newa.sizes])
            for n in sizes:
                if n < 0:
                    self.throw("java/lang/NegativeArraySizeException", str(n))
            env[newa.dst] = self._new_array(newa.array_type, sizes)
        elif t is CheckCast:
            cc = cast(CheckCast, s)
            v = val(cc.src, env)
            if v is not None and not heap.is_assignable(runtime_class(v), cc.cls):
                self.throw("java/lang/ClassCastException")
            env[cc.dst] = v
        elif t is InstanceOf:
            inst = cast(InstanceOf, s)
            v = val(inst.src, env)
            is_instance = v is not None and heap.is_assignable(runtime_class(v), inst.cls)
            env[inst.dst] = int(is_instance)
        elif t is MonitorEnter:
            enter = cast(MonitorEnter, s)
            v = val(enter.obj, env)
            if v is None:
                self.throw(NPE)
            heap.monitor_enter(v)
        elif t is MonitorExit:
            exit_ = cast(MonitorExit, s)
            v = val(exit_.obj, env)
            if v is None:
                self.throw(NPE)
            if not heap.monitor_exit(v):
                self.throw("java/lang/IllegalMonitorStateException")
        elif t is InvokeDynamic:
            indy = cast(InvokeDynamic, s)
            args = [val(a, env) for a in indy.args]
            r = self.call.invoke_dynamic(self, indy, args)
            if indy.dst is not None:
                env[indy.dst] = r
        elif t is ClassInit:
            init = cast(ClassInit, s)
            self.call.class_init(self, init.cls)
        else:
            raise InterpError(f"unknown statement {type(s).__name__}")

    def _array(self, arr: Value) -> JArray:
        if arr is None:
            self.throw(NPE)
        if type(arr) is not JArray:
            raise InterpError(f"{arr!r} used as an array")
        return arr

    def _new_array(self, desc: str, sizes: list[int]) -> JArray:
        total, width, largest = 0, 1, 0
        for level, n in enumerate(sizes):  # elements of every level actually allocated (none below an empty one)
            largest = max(largest, n * _ELEMENT_BYTES.get(desc[level + 1], 4))
            width *= n
            total += width
            if width == 0:
                break
        if self.max_heap_bytes is not None and largest > self.max_heap_bytes:
            # one array larger than the whole heap of the JVM being modelled: its allocation fails at once (a
            # total beyond the heap made of smaller arrays fails too, but only after the JVM filled its heap)
            self.throw("java/lang/OutOfMemoryError")
        if total > MAX_ARRAY_ELEMENTS:
            raise Unsupported(f"array of {total} elements")
        self.steps += total // 16
        n = sizes[0]
        if len(sizes) == 1:
            return JArray(desc, [default_value(desc[1:])] * n)
        return JArray(desc, [self._new_array(desc[1:], sizes[1:]) for _ in range(n)])


def _compile_branch(term: object) -> Callable[[dict], int] | None:
    """A goto, or an if comparing numbers (variables or plain constants), as a function of the frame's variables
    giving the next block; None for other terminators (the frame loop handles them)."""
    if type(term) is Goto:
        target = term.target
        return lambda env: target
    if type(term) is not If:
        return None
    a, b = term.a, term.b
    if a.type.kind is _REF or b.type.kind is _REF:
        return None  # identity, with strings' Unsupported: the frame loop
    cond = _CONDS[id(term.cond)]
    yes, no = term.if_true, term.if_false
    if type(a) is Var:
        if type(b) is Var:
            return lambda env: yes if cond(env[a], env[b]) else no
        if b.kind is _VALUE:
            bv = b.value
            return lambda env: yes if cond(env[a], bv) else no  # type: ignore[arg-type]  # a number (Value)
    return None


def run_method(method: IRMethod, args: list[Value], heap: Heap, call: CallHandler | None = None, *,
               budget: int = DEFAULT_BUDGET, max_depth: int = DEFAULT_MAX_DEPTH,
               max_heap_bytes: int | None = None) -> Outcome:
    """Run ``method`` on ``args`` with a fresh :class:`Interpreter`; see :meth:`Interpreter.run`."""
    return Interpreter(heap, call, budget=budget, max_depth=max_depth, max_heap_bytes=max_heap_bytes).run(method, args)


_ELEMENT_BYTES = {"Z": 1, "B": 1, "C": 2, "S": 2, "I": 4, "F": 4, "J": 8, "D": 8}
"""Bytes an array element takes at least (references: 4, compressed; headers not counted: a lower bound)."""
