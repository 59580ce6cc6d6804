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
    instance, one per heap, where the JDK caches: Integer/Long/Short/Byte -128..127, Character 0..127, Boolean).

Invariants
    * Every arithmetic operator, conversion and comparison is computed by :data:`peggy_jvm.semantics.OPERATIONS`
      (and ``CONDITIONS``); this module never re-implements Java arithmetic.
    * The exceptions the IR raises itself are the JVM's: ArithmeticException (``div``/``rem`` by zero),
      NullPointerException (field and array access, invoke on a null receiver, ``monitorenter``/``monitorexit``
      and ``throw`` of null), ArrayIndexOutOfBoundsException, NegativeArraySizeException, ArrayStoreException,
      ClassCastException, IllegalMonitorStateException, StackOverflowError (call depth limit). They route to the
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

The default call handler (:class:`DefaultCallHandler`) interprets methods of the program's own classes (one
class-path directory or a dict of parsed classes) by lifting them, with virtual dispatch over the program's and
the JDK's class hierarchy, runs their static initializers, and models a small set of library methods exactly
(``Math.abs/min/max``, String and StringBuilder basics, string concatenation by ``invokedynamic``,
``System.out.print/println`` of ints, chars, booleans and strings into :attr:`Heap.out`, Throwable's message,
cause and suppressed list, enums' name/ordinal, the wrappers' valueOf (with the JDK's caches)/xxxValue/equals/
hashCode/compareTo, ``Arrays.toString``/``deepToString``, lambdas and method references made by
``LambdaMetafactory`` (an object of a made-up class ``<interface>$$Lambda`` that calls the implementation with JDK
17's argument and result conversions; one instance per non-capturing call site and heap; a run whose result holds
one is Unsupported, the JVM's hidden class name being unknown), and records' ``ObjectMethods`` toString, equals
and hashCode). Everything else raises Unsupported with the reason.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, NoReturn, Protocol

from .. import semantics as S
from ..classfile.descriptors import parse_method_descriptor
from ..classfile.errors import ClassFileError, UnsupportedCodeError
from ..classfile.hierarchy import OBJECT, ClassHierarchy, ClassInfo
from ..classfile.model import Access, ClassFile, MethodInfo, attribute_named
from ..classfile.reader import read_class
from .lift import lift_method
from .nodes import (ArrayLength, ArrayLoad, ArrayStore, Binary, Block, Catch, CheckCast, ClassInit, Cond, Const,
                    ConstKind, Copy, FieldRef, GetField, GetStatic, Goto, If, InstanceOf, Invoke, InvokeDynamic,
                    InvokeKind, IRMethod, Kind, MethodRef, MonitorEnter, MonitorExit, New, NewArray, Operand,
                    PutField, PutStatic, Return, Stmt, Switch, Throw, Unary, Var)

__all__ = [
    "Value", "JObject", "JArray", "ClassValue", "Boxed", "Heap", "Returned", "Threw", "Outcome", "Unsupported",
    "InterpError", "JavaThrow", "CallHandler", "BaseCallHandler", "DefaultCallHandler", "Interpreter",
    "run_method", "runtime_class", "default_value", "narrow", "DEFAULT_BUDGET", "DEFAULT_MAX_DEPTH",
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
    as ints). Made by the default handler's ``valueOf`` models (see :func:`box`); identity is Python identity."""

    __slots__ = ("cls", "value")

    def __init__(self, cls: str, value: int | float) -> None:
        self.cls = cls
        self.value = value

    def __repr__(self) -> str:
        return f"<{self.cls} {self.value!r}>"


Value = object  # int | float | str | None | JObject | JArray | ClassValue | Boxed


_DEFAULTS = {"I": 0, "J": 0, "S": 0, "B": 0, "C": 0, "Z": 0, "F": 0.0, "D": 0.0}


def default_value(desc: str) -> Value:
    """The default value of a field or array element of descriptor ``desc``."""
    return _DEFAULTS.get(desc[0])


def narrow(desc: str, v: Value) -> Value:
    """A value stored into a boolean/byte/char/short field, array element or returned as one (JVMS)."""
    c = desc[0]
    if c == "Z":
        return v & 1  # type: ignore[operator]
    if c == "B":
        return S.i2b(v)  # type: ignore[arg-type]
    if c == "C":
        return S.i2c(v)  # type: ignore[arg-type]
    if c == "S":
        return S.i2s(v)  # type: ignore[arg-type]
    return v


def runtime_class(v: Value) -> str:
    """The internal class name (or array descriptor) of a non-null reference value."""
    t = type(v)
    if t is str:
        return STRING
    if t is JObject or t is Boxed:
        return v.cls  # type: ignore[union-attr]
    if t is JArray:
        return v.desc  # type: ignore[union-attr]
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
_CONDS = {c: S.CONDITIONS[c.value] for c in Cond}
_VALUE = ConstKind.VALUE
_REF = Kind.REF


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
    t = type(v)
    if t is JObject:
        return "lambda" in v.native  # type: ignore[union-attr]
    if t is JArray and v.desc[1] in "L[":  # type: ignore[union-attr]
        return any(_holds_lambda(e) for e in v.items)  # type: ignore[union-attr]
    return False


class Interpreter:
    """One run: the heap, the call handler, the shared step budget and call depth.

    :meth:`run` runs a method to an Outcome; :meth:`execute` runs it for a caller (a handler interpreting a
    callee): it returns the value or raises JavaThrow.
    """

    def __init__(self, heap: Heap, call: CallHandler | None = None, *, budget: int = DEFAULT_BUDGET,
                 max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        self.heap = heap
        self.call: CallHandler = call if call is not None else BaseCallHandler()
        self.budget = budget
        self.max_depth = max_depth
        self.steps = 0
        self.depth = 0
        self._field_keys: dict[FieldRef, FieldRef] = {}
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
        return env[x] if type(x) is Var else self._const(x)  # type: ignore[arg-type]

    def _const(self, c: Const) -> Value:
        if c.kind is _VALUE:
            return c.value
        if c.kind is ConstKind.CLASS:
            return self.heap.class_value(c.value)  # type: ignore[arg-type]
        raise Unsupported(f"constant of kind {c.kind.value}")

    def _frame(self, m: IRMethod, env: dict, lock: Value) -> Value:
        # operands are read inline (env[x] for a Var, x.value for a plain constant): this loop is the hot path
        blocks = m.blocks
        try:
            b = blocks[m.entry]
        except KeyError:
            raise InterpError(f"entry block B{m.entry} missing") from None
        caught: Value = None
        heap = self.heap
        const = self._const
        ret_desc = parse_method_descriptor(m.descriptor)[1]
        narrow_ret = ret_desc in ("Z", "B", "C", "S")
        owner = m.class_name
        while True:
            self.steps += len(b.stmts) + 1
            if self.steps > self.budget:
                raise Unsupported("step budget")
            try:
                for s in b.stmts:
                    t = type(s)
                    if t is Copy:
                        x = s.src  # type: ignore[attr-defined]
                        env[s.dst] = (env[x] if type(x) is Var  # type: ignore[attr-defined]
                                      else x.value if x.kind is _VALUE else const(x))
                    elif t is Binary:
                        x = s.a  # type: ignore[attr-defined]
                        a = env[x] if type(x) is Var else x.value if x.kind is _VALUE else const(x)
                        x = s.b  # type: ignore[attr-defined]
                        c = env[x] if type(x) is Var else x.value if x.kind is _VALUE else const(x)
                        op = s.op  # type: ignore[attr-defined]
                        if op in _THROWING:
                            try:
                                env[s.dst] = _OPS[op](a, c)  # type: ignore[attr-defined]
                            except S.JavaArithmeticError:
                                self.throw("java/lang/ArithmeticException", "/ by zero")
                        else:
                            env[s.dst] = _OPS[op](a, c)  # type: ignore[attr-defined]
                    elif t is Unary:
                        x = s.a  # type: ignore[attr-defined]
                        a = env[x] if type(x) is Var else x.value if x.kind is _VALUE else const(x)
                        env[s.dst] = _OPS[s.op](a)  # type: ignore[attr-defined]
                    elif t is Catch:
                        env[s.dst] = caught  # type: ignore[attr-defined]
                    else:
                        self._stmt(s, t, env, owner)
                term = b.terminator
                tt = type(term)
                if tt is Goto:
                    nxt = term.target  # type: ignore[union-attr]
                elif tt is If:
                    x = term.a  # type: ignore[union-attr]
                    y = term.b  # type: ignore[union-attr]
                    a = env[x] if type(x) is Var else x.value if x.kind is _VALUE else const(x)
                    c = env[y] if type(y) is Var else y.value if y.kind is _VALUE else const(y)
                    if x.type.kind is _REF or y.type.kind is _REF:
                        cond = term.cond  # type: ignore[union-attr]
                        if cond is not Cond.EQ and cond is not Cond.NE:
                            raise InterpError(f"reference comparison {cond.value}")
                        taken = _same_ref(a, c) is (cond is Cond.EQ)
                    else:
                        taken = _CONDS[term.cond](a, c)  # type: ignore[union-attr]
                    nxt = term.if_true if taken else term.if_false  # type: ignore[union-attr]
                elif tt is Switch:
                    table = self._switches.get(term)  # type: ignore[arg-type]
                    if table is None:
                        table = self._switches[term] = dict(zip(term.keys, term.cases))  # type: ignore[union-attr]
                    nxt = table.get(self._value(term.value, env), term.default)  # type: ignore[union-attr, arg-type]
                elif tt is Return:
                    v = None if term.value is None else self._value(term.value, env)  # type: ignore[union-attr]
                    if lock is not None:
                        if not heap.monitor_exit(lock):
                            self.throw("java/lang/IllegalMonitorStateException")
                        lock = None
                    return narrow(ret_desc, v) if narrow_ret else v
                elif tt is Throw:
                    v = self._value(term.value, env)  # type: ignore[union-attr]
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
                caught = e.obj
                try:
                    b = blocks[target]
                except KeyError:
                    raise InterpError(f"handler block B{target} missing") from None

    def _handler(self, b: Block, exc: Value) -> int | None:
        cls = runtime_class(exc)
        for h in b.handlers:
            if h.catch_type is None or self.heap.is_assignable(cls, h.catch_type):
                return h.target
        return None

    def _stmt(self, s: Stmt, t: type, env: dict, owner: str) -> None:
        heap = self.heap
        val = self._value
        if t is ArrayLoad:
            arr = val(s.array, env)  # type: ignore[attr-defined]
            i = val(s.index, env)  # type: ignore[attr-defined]
            items = self._array(arr).items
            if not 0 <= i < len(items):  # type: ignore[operator]
                self.throw("java/lang/ArrayIndexOutOfBoundsException",
                           f"Index {i} out of bounds for length {len(items)}")
            env[s.dst] = items[i]  # type: ignore[attr-defined, index]
        elif t is ArrayStore:
            arr = val(s.array, env)  # type: ignore[attr-defined]
            i = val(s.index, env)  # type: ignore[attr-defined]
            v = val(s.value, env)  # type: ignore[attr-defined]
            ja = self._array(arr)
            items = ja.items
            if not 0 <= i < len(items):  # type: ignore[operator]
                self.throw("java/lang/ArrayIndexOutOfBoundsException",
                           f"Index {i} out of bounds for length {len(items)}")
            comp = ja.desc[1:]
            if comp[0] in "L[":
                if v is not None and not heap.is_assignable(runtime_class(v), _class_of(comp)):
                    self.throw("java/lang/ArrayStoreException")
            elif comp in "ZBCS":
                v = narrow(comp, v)
            items[i] = v  # type: ignore[index]
        elif t is ArrayLength:
            env[s.dst] = len(self._array(val(s.array, env)).items)  # type: ignore[attr-defined]
        elif t is GetField:
            obj = val(s.obj, env)  # type: ignore[attr-defined]
            if obj is None:
                self.throw(NPE)
            if type(obj) is not JObject:
                raise Unsupported(f"field {s.field} of a {runtime_class(obj)}")  # type: ignore[attr-defined]
            key = self.field_key(s.field)  # type: ignore[attr-defined]
            fields = obj.fields  # type: ignore[union-attr]
            env[s.dst] = fields[key] if key in fields else default_value(key.descriptor)  # type: ignore[attr-defined]
        elif t is PutField:
            obj = val(s.obj, env)  # type: ignore[attr-defined]
            v = val(s.value, env)  # type: ignore[attr-defined]
            if obj is None:
                self.throw(NPE)
            if type(obj) is not JObject:
                raise Unsupported(f"field {s.field} of a {runtime_class(obj)}")  # type: ignore[attr-defined]
            key = self.field_key(s.field)  # type: ignore[attr-defined]
            obj.fields[key] = narrow(key.descriptor, v)  # type: ignore[union-attr]
        elif t is GetStatic:
            f = s.field  # type: ignore[attr-defined]
            if f.owner == owner:
                key = self.field_key(f)
                statics = heap.statics
                v = statics[key] if key in statics else default_value(key.descriptor)
                env[s.dst] = v  # type: ignore[attr-defined]
            else:
                env[s.dst] = self.call.get_static(self, f)  # type: ignore[attr-defined]
        elif t is PutStatic:
            f = s.field  # type: ignore[attr-defined]
            v = val(s.value, env)  # type: ignore[attr-defined]
            if f.owner == owner:
                key = self.field_key(f)
                heap.statics[key] = narrow(key.descriptor, v)
            else:
                self.call.put_static(self, f, v)
        elif t is Invoke:
            recv = None
            if s.receiver is not None:  # type: ignore[attr-defined]
                recv = val(s.receiver, env)  # type: ignore[attr-defined]
            args = [val(a, env) for a in s.args]  # type: ignore[attr-defined]
            if s.kind is not InvokeKind.STATIC and recv is None:  # type: ignore[attr-defined]
                self.throw(NPE)
            r = self.call.invoke(self, s.kind, s.method, recv, args)  # type: ignore[attr-defined]
            if s.dst is not None:  # type: ignore[attr-defined]
                env[s.dst] = r  # type: ignore[attr-defined]
        elif t is New:
            args = [val(a, env) for a in s.args]  # type: ignore[attr-defined]
            env[s.dst] = self.call.new(self, s.cls, s.constructor, args)  # type: ignore[attr-defined]
        elif t is NewArray:
            sizes = [val(x, env) for x in s.sizes]  # type: ignore[attr-defined]
            for n in sizes:
                if n < 0:  # type: ignore[operator]
                    self.throw("java/lang/NegativeArraySizeException", str(n))
            env[s.dst] = self._new_array(s.array_type, sizes)  # type: ignore[attr-defined, arg-type]
        elif t is CheckCast:
            v = val(s.src, env)  # type: ignore[attr-defined]
            if v is not None and not heap.is_assignable(runtime_class(v), s.cls):  # type: ignore[attr-defined]
                self.throw("java/lang/ClassCastException")
            env[s.dst] = v  # type: ignore[attr-defined]
        elif t is InstanceOf:
            v = val(s.src, env)  # type: ignore[attr-defined]
            is_instance = v is not None and heap.is_assignable(runtime_class(v), s.cls)  # type: ignore[attr-defined]
            env[s.dst] = int(is_instance)  # type: ignore[attr-defined]
        elif t is MonitorEnter:
            v = val(s.obj, env)  # type: ignore[attr-defined]
            if v is None:
                self.throw(NPE)
            heap.monitor_enter(v)
        elif t is MonitorExit:
            v = val(s.obj, env)  # type: ignore[attr-defined]
            if v is None:
                self.throw(NPE)
            if not heap.monitor_exit(v):
                self.throw("java/lang/IllegalMonitorStateException")
        elif t is InvokeDynamic:
            args = [val(a, env) for a in s.args]  # type: ignore[attr-defined]
            r = self.call.invoke_dynamic(self, s, args)  # type: ignore[arg-type]
            if s.dst is not None:  # type: ignore[attr-defined]
                env[s.dst] = r  # type: ignore[attr-defined]
        elif t is ClassInit:
            self.call.class_init(self, s.cls)  # type: ignore[attr-defined]
        else:
            raise InterpError(f"unknown statement {type(s).__name__}")

    def _array(self, arr: Value) -> JArray:
        if arr is None:
            self.throw(NPE)
        if type(arr) is not JArray:
            raise InterpError(f"{arr!r} used as an array")
        return arr  # type: ignore[return-value]

    def _new_array(self, desc: str, sizes: list[int]) -> JArray:
        total, width = 0, 1
        for n in sizes:  # elements of every level actually allocated (none below an empty level)
            width *= n
            total += width
            if width == 0:
                break
        if total > MAX_ARRAY_ELEMENTS:
            raise Unsupported(f"array of {total} elements")
        self.steps += total // 16
        n = sizes[0]
        if len(sizes) == 1:
            return JArray(desc, [default_value(desc[1:])] * n)
        return JArray(desc, [self._new_array(desc[1:], sizes[1:]) for _ in range(n)])


def run_method(method: IRMethod, args: list[Value], heap: Heap, call: CallHandler | None = None, *,
               budget: int = DEFAULT_BUDGET, max_depth: int = DEFAULT_MAX_DEPTH) -> Outcome:
    """Run ``method`` on ``args`` with a fresh :class:`Interpreter`; see :meth:`Interpreter.run`."""
    return Interpreter(heap, call, budget=budget, max_depth=max_depth).run(method, args)


# -- the default call handler -------------------------------------------------------------------------------
Model = Callable[["DefaultCallHandler", Interpreter, Value, list], Value]
"""A library method's model: ``(handler, interp, receiver or None, args) -> result``."""

MODELS: dict[tuple[str, str, str], Model] = {}
"""(declaring class, name, descriptor) -> model. Looked up along the receiver's class chain like a method."""


def _model(owners: str | tuple[str, ...], name: str, *descs: str) -> Callable[[Model], Model]:
    def register(fn: Model) -> Model:
        for owner in (owners,) if isinstance(owners, str) else owners:
            for d in descs:
                MODELS[(owner, name, d)] = fn
        return fn
    return register


_TO_STRING = MethodRef(OBJECT, "toString", "()Ljava/lang/String;")
_GET_MESSAGE = MethodRef(THROWABLE, "getMessage", "()Ljava/lang/String;")
_GET_LOCALIZED = MethodRef(THROWABLE, "getLocalizedMessage", "()Ljava/lang/String;")
_EQUALS = MethodRef(OBJECT, "equals", "(Ljava/lang/Object;)Z")
_HASH_CODE = MethodRef(OBJECT, "hashCode", "()I")
# a lambda implementation's reference kind -> how the lambda calls it (None: static or a constructor)
_IMPL_KINDS = {"invokeVirtual": InvokeKind.VIRTUAL, "invokeSpecial": InvokeKind.SPECIAL,
               "invokeInterface": InvokeKind.INTERFACE, "invokeStatic": None, "newInvokeSpecial": None}
_SYSTEM_OUT = FieldRef("java/lang/System", "out", "Ljava/io/PrintStream;")
_BOOLEAN_CONSTANTS = {FieldRef("java/lang/Boolean", "TRUE", "Ljava/lang/Boolean;"): 1,
                      FieldRef("java/lang/Boolean", "FALSE", "Ljava/lang/Boolean;"): 0}
_THROWABLE_CTORS = ("()V", "(Ljava/lang/String;)V", "(Ljava/lang/String;Ljava/lang/Throwable;)V",
                    "(Ljava/lang/Throwable;)V")
# JDK exception classes whose constructors only pass their arguments to Throwable's
_PLAIN_EXCEPTION_PACKAGES = ("java/lang/", "java/io/", "java/util/")
_NATIVE_ALLOC = {"java/lang/Object": None, "java/lang/StringBuilder": "sb", "java/lang/StringBuffer": "sb"}


class _Program:
    """The program's classes by internal name: a class-path directory (read lazily) or a mapping."""

    def __init__(self, source: Path | str | Mapping[str, ClassFile] | None) -> None:
        self.dir: Path | None = None
        self.classes: dict[str, ClassFile | None] = {}
        if isinstance(source, (str, Path)):
            self.dir = Path(source)
        elif source is not None:
            self.classes.update(source)

    def get(self, name: str) -> ClassFile | None:
        try:
            return self.classes[name]
        except KeyError:
            pass
        cf = None
        if self.dir is not None and not name.startswith("["):
            p = self.dir / (name + ".class")
            if p.is_file():
                cf = read_class(p.read_bytes())
        self.classes[name] = cf
        return cf


def _find_method(cf: ClassFile, name: str, desc: str) -> MethodInfo | None:
    for m in cf.methods:
        if m.name == name and m.descriptor == desc:
            return m
    return None


class DefaultCallHandler(BaseCallHandler):
    """Interprets the program's own classes and models a few library methods exactly (see the module doc).

    ``classes``: the program, a class-path directory or a mapping of internal name -> ClassFile (the class of the
    method under test must be in it for its static initializer and calls to its own methods to be run).
    ``models``: extra or replacing library models, keyed like :data:`MODELS`.
    Use :meth:`make_heap` for a Heap whose hierarchy knows the program's classes.
    """

    def __init__(self, classes: Path | str | Mapping[str, ClassFile] | None = None, *,
                 models: Mapping[tuple[str, str, str], Model] | None = None) -> None:
        self.program = _Program(classes)
        self.models = dict(MODELS)
        if models:
            self.models.update(models)
        self._lifted: dict[tuple[str, str, str], IRMethod | str] = {}
        self._jdk_methods: dict[str, dict[tuple[str, str], int] | None] = {}
        self._targets: dict[tuple[str, str, str], tuple] = {}
        self._lambda_classes: dict[int, tuple[ClassHierarchy, set[str]]] = {}

    def make_heap(self) -> Heap:
        """A heap whose hierarchy reads the program's directory (if it is one) and the JDK."""
        cp = [self.program.dir] if self.program.dir is not None else []
        h = ClassHierarchy(classpath=cp)
        for name, cf in self.program.classes.items():
            if cf is not None:
                h.add_info(ClassInfo(cf.name, cf.super_name, tuple(cf.interfaces), cf.is_interface))
        return Heap(h)

    # lifting ---------------------------------------------------------------------------------------------
    def lifted(self, heap: Heap, cls: str, name: str, desc: str) -> IRMethod:
        """The IR of a program method (cached); Unsupported if it has no code or cannot be lifted."""
        key = (cls, name, desc)
        found = self._lifted.get(key)
        if found is None:
            cf = self.program.get(cls)
            mi = _find_method(cf, name, desc) if cf is not None else None
            if mi is None:
                found = f"no method {cls}.{name}{desc}"
            else:
                try:
                    found = lift_method(cf, mi, heap.hierarchy)  # type: ignore[arg-type]
                except (UnsupportedCodeError, ClassFileError) as e:
                    found = f"cannot lift {cls}.{name}{desc}: {e}"
            self._lifted[key] = found
        if isinstance(found, str):
            raise Unsupported(found)
        return found

    # class facts -----------------------------------------------------------------------------------------
    def _info(self, heap: Heap, cls: str) -> tuple[str | None, tuple[str, ...]]:
        cf = self.program.get(cls)
        if cf is not None:
            return cf.super_name, tuple(cf.interfaces)
        try:
            info = heap.hierarchy.info(cls)
        except UnsupportedCodeError as e:
            raise Unsupported(f"class hierarchy: {e}") from None
        return info.super_name, info.interfaces

    def _jdk_declared(self, heap: Heap, cls: str) -> dict[tuple[str, str], int]:
        found = self._jdk_methods.get(cls)
        if found is None:
            from ..classfile.jimage import default_image

            image = default_image()
            data = image.find_class(cls) if image is not None else None
            if data is None:
                raise Unsupported(f"library class {cls} not found")
            cf = read_class(data)
            found = self._jdk_methods[cls] = {(m.name, m.descriptor): m.access for m in cf.methods}
        return found

    def _model_for(self, heap: Heap, cls: str, name: str, desc: str) -> Model | None:
        fn = self.models.get((cls, name, desc))
        if fn is None and name == "<init>" and desc in _THROWABLE_CTORS and cls.startswith(_PLAIN_EXCEPTION_PACKAGES) \
                and heap.is_assignable(cls, THROWABLE):
            fn = self.models.get((THROWABLE, name, desc))
        return fn

    def _lookup_in(self, heap: Heap, cls: str, name: str, desc: str) -> tuple | None:
        cf = self.program.get(cls)
        if cf is not None:
            mi = _find_method(cf, name, desc)
            if mi is not None and not mi.access & Access.ABSTRACT:
                return ("program", cls)
            return None
        fn = self._model_for(heap, cls, name, desc)
        if fn is not None:
            return ("model", fn)
        access = self._jdk_declared(heap, cls).get((name, desc))
        if access is not None and not access & Access.ABSTRACT:
            return ("unsupported", f"library method {cls}.{name}{desc}")
        return None

    def target(self, heap: Heap, start: str, name: str, desc: str) -> tuple:
        """Where a call of ``name desc`` starting at class ``start`` goes: ``("program", declaring class)``,
        ``("model", fn)`` or ``("unsupported", reason)``. Superclasses first, then default methods."""
        key = (start, name, desc)
        found = self._targets.get(key)
        if found is not None:
            return found
        chain = []
        c: str | None = start
        while c is not None:
            chain.append(c)
            found = self._lookup_in(heap, c, name, desc)
            if found is not None:
                break
            c = self._info(heap, c)[0]
        if found is None:
            seen: set[str] = set()
            work = deque(i for k in chain for i in self._info(heap, k)[1])
            while work and found is None:
                i = work.popleft()
                if i in seen:
                    continue
                seen.add(i)
                found = self._lookup_in(heap, i, name, desc)
                work.extend(self._info(heap, i)[1])
        if found is None:
            found = ("unsupported", f"no implementation of {name}{desc} from {start}")
        self._targets[key] = found
        return found

    # the protocol ----------------------------------------------------------------------------------------
    def invoke(self, interp: Interpreter, kind: InvokeKind, method: MethodRef, receiver: Value,
               args: list[Value]) -> Value:
        heap = interp.heap
        if kind is InvokeKind.STATIC or kind is InvokeKind.SPECIAL:
            start = method.owner
        else:
            start = runtime_class(receiver)
        if start.startswith("["):
            if method.name == "clone" and method.descriptor == "()Ljava/lang/Object;" and type(receiver) is JArray:
                return JArray(receiver.desc, list(receiver.items))  # type: ignore[union-attr]
            start = OBJECT
        elif type(receiver) is JObject and "lambda" in receiver.native:  # type: ignore[union-attr]
            return self._call_lambda(interp, kind, method, receiver, args)  # type: ignore[arg-type]
        where = self.target(heap, start, method.name, method.descriptor)
        if where[0] == "program":
            if kind is InvokeKind.STATIC:
                self.class_init(interp, where[1])
            m = self.lifted(heap, where[1], method.name, method.descriptor)
            return interp.execute(m, args if kind is InvokeKind.STATIC else [receiver, *args])
        if where[0] == "model":
            return where[1](self, interp, receiver, args)
        raise Unsupported(where[1])

    def call_virtual(self, interp: Interpreter, method: MethodRef, receiver: Value, args: list[Value]) -> Value:
        """``receiver.method(args)`` by virtual dispatch (NullPointerException on a null receiver)."""
        if receiver is None:
            interp.throw(NPE)
        return self.invoke(interp, InvokeKind.VIRTUAL, method, receiver, args)

    def new(self, interp: Interpreter, cls: str, constructor: MethodRef, args: list[Value]) -> Value:
        heap = interp.heap
        self.class_init(interp, cls)
        if self.program.get(cls) is None and cls not in _NATIVE_ALLOC and not (
                cls.startswith(_PLAIN_EXCEPTION_PACKAGES) and heap.is_assignable(cls, THROWABLE)):
            raise Unsupported(f"new {cls}")
        obj = JObject(cls)
        if _NATIVE_ALLOC.get(cls) == "sb":
            obj.native["sb"] = []
        elif heap.is_assignable(cls, THROWABLE):
            obj.native.update(message=None, cause=None, suppressed=[], cause_set=False)
        self.invoke(interp, InvokeKind.SPECIAL, constructor, obj, args)
        return obj

    def invoke_dynamic(self, interp: Interpreter, stmt: InvokeDynamic, args: list[Value]) -> Value:
        handle = stmt.bootstrap.handle.value
        ref = handle[1] if isinstance(handle, tuple) else None
        if isinstance(ref, MethodRef) and ref.owner == "java/lang/invoke/StringConcatFactory":
            arg_descs = parse_method_descriptor(stmt.descriptor)[0]
            if ref.name == "makeConcatWithConstants":
                recipe = stmt.bootstrap.arguments[0].value
                constants = [c.value for c in stmt.bootstrap.arguments[1:]]
            elif ref.name == "makeConcat":
                recipe, constants = "\1" * len(args), []
            else:
                raise Unsupported(f"invokedynamic via StringConcatFactory.{ref.name}")
            parts = []
            ai = ci = 0
            for ch in recipe:  # type: ignore[union-attr]
                if ch == "\1":
                    parts.append(self.to_java_string(interp, args[ai], arg_descs[ai]))
                    ai += 1
                elif ch == "\2":
                    c = constants[ci]
                    ci += 1
                    if not isinstance(c, str):
                        raise Unsupported("non-string constant in a concatenation recipe")
                    parts.append(c)
                else:
                    parts.append(ch)
            return "".join(parts)
        if isinstance(ref, MethodRef) and ref.owner == "java/lang/invoke/LambdaMetafactory" and \
                handle[0] == "invokeStatic" and ref.name in ("metafactory", "altMetafactory"):
            return self._make_lambda(interp, stmt, ref.name, args)
        if isinstance(ref, MethodRef) and ref.owner == "java/lang/runtime/ObjectMethods" and handle[0] == "invokeStatic" \
                and ref.name == "bootstrap":
            return self._record_method(interp, stmt, args)
        what = f"{ref.owner}.{ref.name}" if isinstance(ref, MethodRef) else repr(stmt.bootstrap.handle)
        raise Unsupported(f"invokedynamic via {what}")

    # lambdas ---------------------------------------------------------------------------------------------
    def _make_lambda(self, interp: Interpreter, stmt: InvokeDynamic, bsm: str, args: list[Value]) -> Value:
        """A LambdaMetafactory call site: an object of a made-up class implementing the functional interface
        (and Serializable for altMetafactory's FLAG_SERIALIZABLE); a non-capturing site yields one instance."""
        b = stmt.bootstrap.arguments
        if len(b) < 3 or b[0].kind is not ConstKind.METHOD_TYPE or b[1].kind is not ConstKind.METHOD_HANDLE \
                or b[2].kind is not ConstKind.METHOD_TYPE:
            raise Unsupported("LambdaMetafactory with unexpected static arguments")
        interfaces: tuple[str, ...] = (_class_of(parse_method_descriptor(stmt.descriptor)[1]),)
        if bsm == "altMetafactory":
            flags = b[3].value if len(b) > 3 else None
            if type(flags) is not int or flags & ~1 or len(b) != 4:
                raise Unsupported("altMetafactory with marker interfaces or bridges")
            if flags & 1:
                interfaces += ("java/io/Serializable",)
        kind, impl = b[1].value  # type: ignore[misc]
        if kind not in _IMPL_KINDS or not isinstance(impl, MethodRef):
            raise Unsupported(f"lambda implementation of reference kind {kind}")
        heap = interp.heap
        cls = interfaces[0] + "$$Lambda" + ("$S" if len(interfaces) > 1 else "")
        known = self._lambda_classes.setdefault(id(heap.hierarchy), (heap.hierarchy, set()))[1]
        if cls not in known:
            heap.hierarchy.add_info(ClassInfo(cls, OBJECT, interfaces, False))
            known.add(cls)
        key = ("lambda", stmt)
        if not args and key in heap.boxes:
            return heap.boxes[key]
        obj = JObject(cls, {"lambda": (stmt.name, b[0].value, kind, impl, b[2].value, list(args), interfaces[0])})
        if not args:
            heap.boxes[key] = obj
        return obj

    def _call_lambda(self, interp: Interpreter, kind: InvokeKind, method: MethodRef, receiver: JObject,
                     args: list[Value]) -> Value:
        sam_name, sam_desc, impl_kind, impl, inst_desc, captured, iface = receiver.native["lambda"]
        heap = interp.heap
        if method.name != sam_name or method.descriptor != sam_desc:
            if method.name == "getClass" or kind is InvokeKind.SPECIAL:
                raise Unsupported(f"{method.name}{method.descriptor} of a lambda")
            where = self.target(heap, iface, method.name, method.descriptor)  # Object's methods, defaults
            if where[0] == "program":
                return interp.execute(self.lifted(heap, where[1], method.name, method.descriptor), [receiver, *args])
            if where[0] == "model" and method.name == "equals" and method.descriptor == "(Ljava/lang/Object;)Z":
                return where[1](self, interp, receiver, args)
            raise Unsupported(f"{method.name}{method.descriptor} of a lambda")
        sam_params, sam_ret = parse_method_descriptor(sam_desc)
        inst_params = parse_method_descriptor(inst_desc)[0]
        impl_params, impl_ret = parse_method_descriptor(impl.descriptor)
        if impl_kind in ("invokeVirtual", "invokeSpecial", "invokeInterface"):
            impl_params = (f"L{impl.owner};", *impl_params)
        elif impl_kind == "newInvokeSpecial":
            impl_ret = f"L{impl.owner};"
        n = len(captured)
        if len(impl_params) != n + len(args) or len(inst_params) != len(args):
            raise Unsupported("lambda whose implementation does not fit its interface method")
        full = list(captured)
        for i, a in enumerate(args):
            full.append(self._adapt(interp, a, sam_params[i], impl_params[n + i], inst_params[i]))
        if impl_kind == "invokeStatic":
            r = self.invoke(interp, InvokeKind.STATIC, impl, None, full)
        elif impl_kind == "newInvokeSpecial":
            r = self.new(interp, impl.owner, impl, full)
        else:
            if full[0] is None:
                interp.throw(NPE)
            k = _IMPL_KINDS[impl_kind]
            r = self.invoke(interp, k, impl, full[0], full[1:])
        if sam_ret == "V":
            return None
        if impl_ret == "V":
            raise Unsupported("void lambda implementation for a value-returning interface method")
        return self._adapt(interp, r, impl_ret, sam_ret, sam_ret)

    def _adapt(self, interp: Interpreter, v: Value, arg: str, target: str, functional: str) -> Value:
        """The conversion the lambda class applies to a value of type ``arg`` passed on as ``target`` (with
        ``functional``, the instantiated type, as the cast in between): JDK 17's
        TypeConvertingMethodAdapter.convertType, for widening, boxing and unboxing."""
        heap = interp.heap
        if arg == target == functional:
            return v
        if arg[0] not in "L[":
            if target[0] not in "L[":
                return _widen(v, arg, target)
            wt = PRIM_OF.get(target[1:-1]) if target[0] == "L" else None
            if wt is not None:
                return box(heap, wt, _widen(v, arg, wt))
            b = box(heap, arg, v)
            self._cast(interp, b, target)
            return b
        src = arg
        if functional[0] in "L[":
            self._cast(interp, v, functional)
            src = functional
        elif target[0] not in "L[":
            raise Unsupported("lambda argument conversion from a reference to a primitive instantiated type")
        if target[0] in "L[":
            self._cast(interp, v, target)
            return v
        wps = PRIM_OF.get(src[1:-1]) if src[0] == "L" else None
        if wps is None:
            intermediate = "Ljava/lang/Number;" if target in "BSIJFD" else f"L{BOX_OF[target]};"
            self._cast(interp, v, intermediate)
        if v is None:
            interp.throw(NPE)
        if type(v) is not Boxed:
            raise Unsupported(f"unboxing a {runtime_class(v)}")
        p = PRIM_OF[v.cls]  # type: ignore[attr-defined]
        if p in "ZC":
            return _widen(v.value, p, target)  # type: ignore[attr-defined]
        conv = _CONVERT.get((p, target))
        if conv is None:
            raise Unsupported(f"unboxing a {v.cls} to {target}")  # type: ignore[attr-defined]
        return conv(v.value)  # type: ignore[attr-defined]

    @staticmethod
    def _cast(interp: Interpreter, v: Value, desc: str) -> None:
        if v is not None and desc != "Ljava/lang/Object;" and \
                not interp.heap.is_assignable(runtime_class(v), _class_of(desc)):
            interp.throw("java/lang/ClassCastException")

    # records ---------------------------------------------------------------------------------------------
    def _record_method(self, interp: Interpreter, stmt: InvokeDynamic, args: list[Value]) -> Value:
        """``ObjectMethods.bootstrap`` (JDK 17): a record's toString, equals and hashCode from its getters."""
        b = stmt.bootstrap.arguments
        if len(b) < 2 or b[0].kind is not ConstKind.CLASS or not isinstance(b[1].value, str) \
                or any(g.kind is not ConstKind.METHOD_HANDLE or g.value[0] != "getField" for g in b[2:]):  # type: ignore[index]
            raise Unsupported("ObjectMethods.bootstrap with unexpected static arguments")
        rec_cls = b[0].value
        names = b[1].value.split(";") if b[1].value else []  # type: ignore[union-attr]
        getters = [g.value[1] for g in b[2:]]  # type: ignore[index]
        if len(names) != len(getters):
            raise Unsupported("ObjectMethods.bootstrap with unexpected static arguments")

        def get(obj: Value, f: FieldRef) -> Value:
            if obj is None:
                interp.throw(NPE)
            if type(obj) is not JObject:
                raise Unsupported(f"record component of a {runtime_class(obj)}")
            key = interp.field_key(f)
            return obj.fields[key] if key in obj.fields else default_value(f.descriptor)  # type: ignore[union-attr]

        name, desc = stmt.name, stmt.descriptor
        if name == "toString" and desc == f"(L{rec_cls};)Ljava/lang/String;":
            simple = _class_simple_name(self, interp, interp.heap.class_value(rec_cls), [])
            parts = [f"{n}={self.to_java_string(interp, get(args[0], f), f.descriptor)}"
                     for n, f in zip(names, getters)]
            return f"{simple}[{', '.join(parts)}]"
        if name == "equals" and desc == f"(L{rec_cls};Ljava/lang/Object;)Z":
            a, o = args
            if a is o:
                return 1
            if o is None or not interp.heap.is_assignable(runtime_class(o), rec_cls):
                return 0
            for f in reversed(getters):  # the JDK nests the tests so that the last component is compared first
                x, y = get(a, f), get(o, f)
                d = f.descriptor
                if d in ("F", "D"):
                    same = _float_compare(None, None, None, [x, y]) == 0
                elif d[0] in "L[":
                    same = _objects_equals(self, interp, None, [x, y])
                else:
                    same = x == y
                if not same:
                    return 0
            return 1
        if name == "hashCode" and desc == f"(L{rec_cls};)I":
            h = 0
            for f in getters:
                x = get(args[0], f)
                d = f.descriptor
                if d[0] in "L[":
                    fh = 0 if x is None else self.call_virtual(interp, _HASH_CODE, x, [])
                else:
                    fh = _prim_hash(d, x)
                h = S.wrap_i(h * 31 + fh)  # type: ignore[operator]
            return h
        raise Unsupported(f"ObjectMethods.bootstrap for {name}{desc}")

    def _field_owner(self, field: FieldRef) -> str | None:
        """The program class declaring ``field`` (itself, then superinterfaces and superclasses), or None."""
        work = deque([field.owner])
        seen: set[str] = set()
        while work:
            c = work.popleft()
            if c in seen:
                continue
            seen.add(c)
            cf = self.program.get(c)
            if cf is None:
                continue
            if any(f.name == field.name and f.descriptor == field.descriptor for f in cf.fields):
                return c
            work.extend(cf.interfaces)
            if cf.super_name:
                work.append(cf.super_name)
        return None

    def resolve_field(self, field: FieldRef) -> FieldRef:
        owner = self._field_owner(field)
        return field if owner is None or owner == field.owner else FieldRef(owner, field.name, field.descriptor)

    def get_static(self, interp: Interpreter, field: FieldRef) -> Value:
        heap = interp.heap
        if field == _SYSTEM_OUT:
            out = heap.statics.get(field)
            if out is None:
                out = heap.statics[field] = JObject("java/io/PrintStream", {"stream": "out"})
            return out
        if field in _BOOLEAN_CONSTANTS:
            return box(heap, "Z", _BOOLEAN_CONSTANTS[field])
        owner = self._field_owner(field)
        if owner is None:
            raise Unsupported(f"static field {field}")
        self.class_init(interp, owner)
        key = interp.field_key(field)
        return heap.statics[key] if key in heap.statics else default_value(field.descriptor)

    def put_static(self, interp: Interpreter, field: FieldRef, value: Value) -> None:
        owner = self._field_owner(field)
        if owner is None:
            raise Unsupported(f"static field {field}")
        self.class_init(interp, owner)
        interp.heap.statics[interp.field_key(field)] = narrow(field.descriptor, value)

    def class_init(self, interp: Interpreter, cls: str) -> None:
        heap = interp.heap
        if cls in heap.initialized:
            if cls in heap.erroneous:
                interp.throw("java/lang/NoClassDefFoundError")
            return
        cf = self.program.get(cls)
        if cf is None:
            return  # a library class: its initialization is not observable in the model
        heap.initialized.add(cls)
        if cf.super_name is not None:
            self.class_init(interp, cf.super_name)
        for f in cf.fields:
            attr = attribute_named(f.attributes, "ConstantValue")
            if attr is not None and f.access & Access.STATIC:
                heap.statics[FieldRef(cls, f.name, f.descriptor)] = _constant_value(cf, attr.data)
        if _find_method(cf, "<clinit>", "()V") is None:
            return
        clinit = self.lifted(heap, cls, "<clinit>", "()V")
        try:
            interp.execute(clinit, [])
        except JavaThrow as e:
            heap.erroneous.add(cls)
            if heap.is_assignable(runtime_class(e.obj), "java/lang/Error"):
                raise
            err = heap.new_throwable("java/lang/ExceptionInInitializerError", None)
            err.native["cause"] = e.obj
            raise JavaThrow(err) from None

    # strings ---------------------------------------------------------------------------------------------
    def to_java_string(self, interp: Interpreter, v: Value, desc: str) -> str:
        """``String.valueOf(v)`` for a value of static type ``desc`` (toString by virtual dispatch)."""
        c = desc[0]
        if c in "IJSB":
            return str(v)
        if c == "C":
            return chr(v)  # type: ignore[arg-type]
        if c == "Z":
            return "true" if v else "false"
        if c in "FD":
            raise Unsupported("float/double to string (Java's algorithm is not modelled)")
        if v is None:
            return "null"
        if type(v) is str:
            return v
        if desc == "[C":
            raise Unsupported("char[] to string")
        r = self.call_virtual(interp, _TO_STRING, v, [])
        return "null" if r is None else r  # type: ignore[return-value]


def _constant_value(cf: ClassFile, data: bytes) -> Value:
    from ..classfile.attributes import ConstantValue

    e = ConstantValue.parse(data).constant(cf.pool)
    tag = e[0]
    if tag == 4:
        return S.int_bits_to_float(e[1])
    if tag == 6:
        return S.long_bits_to_double(e[1])
    if tag == 8:
        return cf.pool.utf8(e[1])
    return e[1]


# -- library models -----------------------------------------------------------------------------------------
def _str_arg(interp: Interpreter, v: Value) -> str:
    if v is None:
        interp.throw(NPE)
    if type(v) is not str:
        raise Unsupported(f"a {runtime_class(v)} where a String is expected")
    return v  # type: ignore[return-value]


def _char_seq(h: DefaultCallHandler, interp: Interpreter, v: Value) -> str:
    """The text of a CharSequence argument (String or StringBuilder); NPE on null."""
    if v is None:
        interp.throw(NPE)
    if type(v) is str:
        return v  # type: ignore[return-value]
    if type(v) is JObject and "sb" in v.native:  # type: ignore[union-attr]
        return "".join(v.native["sb"])  # type: ignore[union-attr]
    raise Unsupported(f"CharSequence of class {runtime_class(v)}")


def _printable(text: str) -> str:
    """What a UTF-8 PrintStream writes for ``text``: an unpaired surrogate becomes '?'."""
    return text if text.isascii() else _replace_lone_surrogates(text)


def _replace_lone_surrogates(text: str) -> str:
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        o = ord(c)
        if 0xD800 <= o <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            out.append(c + text[i + 1])
            i += 2
            continue
        out.append("?" if 0xD800 <= o <= 0xDFFF else c)
        i += 1
    return "".join(out)


def _sioobe(interp: Interpreter) -> NoReturn:
    interp.throw("java/lang/StringIndexOutOfBoundsException")


def _ascii_only(s: str, what: str) -> None:
    if not s.isascii():
        raise Unsupported(f"{what} of non-ASCII text (Unicode tables not modelled)")


def _java_hash(s: str) -> int:
    h = 0
    for c in s:
        h = (31 * h + ord(c)) & 0xFFFFFFFF
    return S.wrap_i(h)


def _utf16(code_point: int) -> str:
    if code_point < 0x10000:
        return chr(code_point)
    o = code_point - 0x10000
    return chr(0xD800 + (o >> 10)) + chr(0xDC00 + (o & 0x3FF))


# java.lang.Object
@_model(OBJECT, "<init>", "()V")
def _object_init(h, interp, recv, args):
    return None


@_model(OBJECT, "getClass", "()Ljava/lang/Class;")
def _object_get_class(h, interp, recv, args):
    return interp.heap.class_value(runtime_class(recv))


@_model(OBJECT, "equals", "(Ljava/lang/Object;)Z")
def _object_equals(h, interp, recv, args):
    return int(_same_ref(recv, args[0]))


@_model(OBJECT, "hashCode", "()I")
@_model(OBJECT, "toString", "()Ljava/lang/String;")
def _object_identity(h, interp, recv, args):
    raise Unsupported("identity hash code")


# java.lang.Class
@_model("java/lang/Class", "getName", "()Ljava/lang/String;")
def _class_name(h, interp, recv, args):
    return recv.name.replace("/", ".")


@_model("java/lang/Class", "getSimpleName", "()Ljava/lang/String;")
def _class_simple_name(h, interp, recv, args):
    name = recv.name
    dims = 0
    while name.startswith("["):
        name, dims = name[1:], dims + 1
    if dims:
        prim = {"I": "int", "J": "long", "F": "float", "D": "double", "Z": "boolean", "B": "byte", "C": "char",
                "S": "short"}
        name = prim[name] if name in prim else name[1:-1]
    simple = name.rsplit("/", 1)[-1]
    if "$" in simple:
        simple = simple.rsplit("$", 1)[-1].lstrip("0123456789")
    return simple + "[]" * dims


@_model("java/lang/Class", "desiredAssertionStatus", "()Z")
def _class_assertions(h, interp, recv, args):
    return 0


# java.lang.String
@_model(STRING, "length", "()I")
def _s_length(h, interp, s, args):
    return len(s)


@_model(STRING, "isEmpty", "()Z")
def _s_is_empty(h, interp, s, args):
    return int(not s)


@_model(STRING, "charAt", "(I)C")
def _s_char_at(h, interp, s, args):
    i = args[0]
    if not 0 <= i < len(s):
        _sioobe(interp)
    return ord(s[i])


@_model(STRING, "equals", "(Ljava/lang/Object;)Z")
def _s_equals(h, interp, s, args):
    return int(type(args[0]) is str and args[0] == s)


@_model(STRING, "hashCode", "()I")
def _s_hash(h, interp, s, args):
    return _java_hash(s)


@_model(STRING, "toString", "()Ljava/lang/String;")
@_model(STRING, "intern", "()Ljava/lang/String;")
def _s_self(h, interp, s, args):
    return s


@_model(STRING, "concat", "(Ljava/lang/String;)Ljava/lang/String;")
def _s_concat(h, interp, s, args):
    return s + _str_arg(interp, args[0])


@_model(STRING, "substring", "(I)Ljava/lang/String;", "(II)Ljava/lang/String;")
def _s_substring(h, interp, s, args):
    begin = args[0]
    end = args[1] if len(args) > 1 else len(s)
    if begin < 0 or end > len(s) or begin > end:
        _sioobe(interp)
    return s[begin:end]


@_model(STRING, "indexOf", "(I)I", "(II)I")
def _s_index_of_char(h, interp, s, args):
    start = max(args[1], 0) if len(args) > 1 else 0
    if start >= len(s) or not 0 <= args[0] <= 0x10FFFF:
        return -1
    return s.find(_utf16(args[0]), start)


@_model(STRING, "lastIndexOf", "(I)I")
def _s_last_index_of_char(h, interp, s, args):
    if not 0 <= args[0] <= 0x10FFFF:
        return -1
    return s.rfind(_utf16(args[0]))


@_model(STRING, "indexOf", "(Ljava/lang/String;)I", "(Ljava/lang/String;I)I")
def _s_index_of(h, interp, s, args):
    sub = _str_arg(interp, args[0])
    start = args[1] if len(args) > 1 else 0
    start = min(max(start, 0), len(s))
    return s.find(sub, start)


@_model(STRING, "lastIndexOf", "(Ljava/lang/String;)I")
def _s_last_index_of(h, interp, s, args):
    return s.rfind(_str_arg(interp, args[0]))


@_model(STRING, "startsWith", "(Ljava/lang/String;)Z")
def _s_starts_with(h, interp, s, args):
    return int(s.startswith(_str_arg(interp, args[0])))


@_model(STRING, "endsWith", "(Ljava/lang/String;)Z")
def _s_ends_with(h, interp, s, args):
    return int(s.endswith(_str_arg(interp, args[0])))


@_model(STRING, "contains", "(Ljava/lang/CharSequence;)Z")
def _s_contains(h, interp, s, args):
    return int(_char_seq(h, interp, args[0]) in s)


@_model(STRING, "compareTo", "(Ljava/lang/String;)I")
def _s_compare_to(h, interp, s, args):
    t = _str_arg(interp, args[0])
    for a, b in zip(s, t):
        if a != b:
            return ord(a) - ord(b)
    return len(s) - len(t)


@_model(STRING, "toCharArray", "()[C")
def _s_to_char_array(h, interp, s, args):
    return JArray("[C", [ord(c) for c in s])


@_model(STRING, "replace", "(CC)Ljava/lang/String;")
def _s_replace_char(h, interp, s, args):
    return s.replace(chr(args[0]), chr(args[1]))


@_model(STRING, "replace", "(Ljava/lang/CharSequence;Ljava/lang/CharSequence;)Ljava/lang/String;")
def _s_replace(h, interp, s, args):
    target = _char_seq(h, interp, args[0])
    replacement = _char_seq(h, interp, args[1])
    return s.replace(target, replacement)  # Python and Java agree, also for an empty target


@_model(STRING, "trim", "()Ljava/lang/String;")
def _s_trim(h, interp, s, args):
    i, j = 0, len(s)
    while i < j and s[i] <= " ":
        i += 1
    while j > i and s[j - 1] <= " ":
        j -= 1
    return s[i:j]


@_model(STRING, "repeat", "(I)Ljava/lang/String;")
def _s_repeat(h, interp, s, args):
    if args[0] < 0:
        interp.throw("java/lang/IllegalArgumentException")
    if len(s) * args[0] > MAX_ARRAY_ELEMENTS:
        raise Unsupported("string too long")
    return s * args[0]


@_model(STRING, "toUpperCase", "()Ljava/lang/String;")
def _s_upper(h, interp, s, args):
    _ascii_only(s, "toUpperCase")
    return s.upper()


@_model(STRING, "toLowerCase", "()Ljava/lang/String;")
def _s_lower(h, interp, s, args):
    _ascii_only(s, "toLowerCase")
    return s.lower()


@_model(STRING, "equalsIgnoreCase", "(Ljava/lang/String;)Z")
def _s_equals_ignore_case(h, interp, s, args):
    t = args[0]
    if type(t) is not str:
        return 0
    _ascii_only(s + t, "equalsIgnoreCase")
    return int(s.lower() == t.lower())


@_model(STRING, "valueOf", "(I)Ljava/lang/String;", "(J)Ljava/lang/String;")
@_model("java/lang/Integer", "toString", "(I)Ljava/lang/String;")
@_model("java/lang/Long", "toString", "(J)Ljava/lang/String;")
def _s_value_of_int(h, interp, recv, args):
    return str(args[0])


@_model(STRING, "valueOf", "(C)Ljava/lang/String;")
@_model("java/lang/Character", "toString", "(C)Ljava/lang/String;")
def _s_value_of_char(h, interp, recv, args):
    return chr(args[0])


@_model(STRING, "valueOf", "(Z)Ljava/lang/String;")
@_model("java/lang/Boolean", "toString", "(Z)Ljava/lang/String;")
def _s_value_of_bool(h, interp, recv, args):
    return "true" if args[0] else "false"


@_model(STRING, "valueOf", "(Ljava/lang/Object;)Ljava/lang/String;")
def _s_value_of_object(h, interp, recv, args):
    return h.to_java_string(interp, args[0], "Ljava/lang/Object;")


@_model(STRING, "valueOf", "([C)Ljava/lang/String;")
def _s_value_of_chars(h, interp, recv, args):
    if args[0] is None:
        interp.throw(NPE)
    return "".join(map(chr, args[0].items))


# java.lang.Integer / Long / Character / Boolean (static helpers; no boxing)
def _register_bit_helpers(owner: str, bits: int, d: str) -> None:
    """Integer's or Long's static bit helpers, and Math.abs/min/max of that type."""
    mask = (1 << bits) - 1
    wrap = S.wrap_i if bits == 32 else S.wrap_l

    def unsigned_string(base: str) -> Model:
        return lambda h, interp, recv, a: format(a[0] & mask, base)

    def ntz(h, interp, recv, a):
        u = a[0] & mask
        return bits if u == 0 else (u & -u).bit_length() - 1

    def highest(h, interp, recv, a):
        u = a[0] & mask
        return wrap(1 << (u.bit_length() - 1)) if u else 0

    def rotate_left(h, interp, recv, a):
        u, k = a[0] & mask, a[1] % bits  # the distance is masked like a shift count
        return wrap(((u << k) | (u >> (bits - k))) & mask)

    def rotate_right(h, interp, recv, a):
        u, k = a[0] & mask, a[1] % bits
        return wrap(((u >> k) | (u << (bits - k))) & mask)

    string = "Ljava/lang/String;"
    table: dict[tuple[str, str], Model] = {
        ("toHexString", f"({d}){string}"): unsigned_string("x"),
        ("toOctalString", f"({d}){string}"): unsigned_string("o"),
        ("toBinaryString", f"({d}){string}"): unsigned_string("b"),
        ("bitCount", f"({d})I"): lambda h, i, r, a: bin(a[0] & mask).count("1"),
        ("numberOfLeadingZeros", f"({d})I"): lambda h, i, r, a: bits - (a[0] & mask).bit_length(),
        ("numberOfTrailingZeros", f"({d})I"): ntz,
        ("highestOneBit", f"({d}){d}"): highest,
        ("lowestOneBit", f"({d}){d}"): lambda h, i, r, a: wrap((a[0] & mask) & -(a[0] & mask)),
        ("signum", f"({d})I"): lambda h, i, r, a: (a[0] > 0) - (a[0] < 0),
        ("compare", f"({d}{d})I"): lambda h, i, r, a: (a[0] > a[1]) - (a[0] < a[1]),
        ("max", f"({d}{d}){d}"): lambda h, i, r, a: max(a[0], a[1]),
        ("min", f"({d}{d}){d}"): lambda h, i, r, a: min(a[0], a[1]),
        ("sum", f"({d}{d}){d}"): lambda h, i, r, a: wrap(a[0] + a[1]),
        ("reverse", f"({d}){d}"): lambda h, i, r, a: wrap(int(format(a[0] & mask, f"0{bits}b")[::-1], 2)),
        ("reverseBytes", f"({d}){d}"):
            lambda h, i, r, a: wrap(int.from_bytes((a[0] & mask).to_bytes(bits // 8, "big"), "little")),
        ("rotateLeft", f"({d}I){d}"): rotate_left,
        ("rotateRight", f"({d}I){d}"): rotate_right,
    }
    for (name, desc), fn in table.items():
        MODELS[(owner, name, desc)] = fn
    MODELS[("java/lang/Math", "abs", f"({d}){d}")] = lambda h, i, r, a: wrap(abs(a[0]))  # abs(MIN) is MIN
    MODELS[("java/lang/Math", "max", f"({d}{d}){d}")] = lambda h, i, r, a: max(a[0], a[1])
    MODELS[("java/lang/Math", "min", f"({d}{d}){d}")] = lambda h, i, r, a: min(a[0], a[1])


_register_bit_helpers("java/lang/Integer", 32, "I")
_register_bit_helpers("java/lang/Long", 64, "J")


def _parse_int(bits: int) -> Model:
    def parse(h, interp, recv, args):
        s = args[0]
        if s is None:
            interp.throw("java/lang/NumberFormatException")
        _ascii_only(s, "parseInt")
        body = s[1:] if s[:1] in ("+", "-") else s
        if not body or not body.isdigit():
            interp.throw("java/lang/NumberFormatException")
        v = int(s)
        if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
            interp.throw("java/lang/NumberFormatException")
        return v
    return parse


MODELS[("java/lang/Integer", "parseInt", "(Ljava/lang/String;)I")] = _parse_int(32)
MODELS[("java/lang/Long", "parseLong", "(Ljava/lang/String;)J")] = _parse_int(64)


def _floor_div(h, interp, recv, args):
    a, b = args
    if b == 0:
        interp.throw("java/lang/ArithmeticException", "/ by zero")
    return a // b  # Python's // is floor division; MIN / -1 wraps back to MIN below


def _floor_mod(h, interp, recv, args):
    a, b = args
    if b == 0:
        interp.throw("java/lang/ArithmeticException", "/ by zero")
    return a % b


for _d in ("II", "JJ"):
    _r = _d[0]
    MODELS[("java/lang/Math", "floorMod", f"({_d}){_r}")] = _floor_mod
MODELS[("java/lang/Math", "floorDiv", "(II)I")] = lambda h, i, r, a: S.wrap_i(_floor_div(h, i, r, a))
MODELS[("java/lang/Math", "floorDiv", "(JJ)J")] = lambda h, i, r, a: S.wrap_l(_floor_div(h, i, r, a))


def _exact(wrap: Callable[[int], int], fn: Callable[..., int]) -> Model:
    def exact(h, interp, recv, args):
        v = fn(*args)
        if wrap(v) != v:
            interp.throw("java/lang/ArithmeticException", "integer overflow" if wrap is S.wrap_i else "long overflow")
        return v
    return exact


for _d, _w in (("I", S.wrap_i), ("J", S.wrap_l)):
    MODELS[("java/lang/Math", "addExact", f"({_d}{_d}){_d}")] = _exact(_w, lambda a, b: a + b)
    MODELS[("java/lang/Math", "subtractExact", f"({_d}{_d}){_d}")] = _exact(_w, lambda a, b: a - b)
    MODELS[("java/lang/Math", "multiplyExact", f"({_d}{_d}){_d}")] = _exact(_w, lambda a, b: a * b)
    MODELS[("java/lang/Math", "negateExact", f"({_d}){_d}")] = _exact(_w, lambda a: -a)
MODELS[("java/lang/Math", "toIntExact", "(J)I")] = _exact(S.wrap_i, lambda a: a)


# Math on float / double: only the operations whose results IEEE 754 pins down exactly
def _fmin_max(is_min: bool, to: Callable[[float], float]) -> Model:
    def pick(h, interp, recv, args):
        a, b = args
        if a != a:
            return a
        if b != b:
            return b
        if a == b == 0.0:  # -0.0 is smaller than 0.0
            neg = math.copysign(1.0, a) < 0 or math.copysign(1.0, b) < 0 if is_min else \
                math.copysign(1.0, a) < 0 and math.copysign(1.0, b) < 0
            return -0.0 if neg else 0.0
        return min(a, b) if is_min else max(a, b)
    return pick


for _d in ("F", "D"):
    MODELS[("java/lang/Math", "abs", f"({_d}){_d}")] = lambda h, i, r, a: math.copysign(a[0], 1.0)
    MODELS[("java/lang/Math", "min", f"({_d}{_d}){_d}")] = _fmin_max(True, float)
    MODELS[("java/lang/Math", "max", f"({_d}{_d}){_d}")] = _fmin_max(False, float)


def _sqrt(h, interp, recv, args):
    x = args[0]
    if x != x or x < 0:
        return math.nan
    return math.sqrt(x)  # correctly rounded (IEEE 754), as Java's


MODELS[("java/lang/Math", "sqrt", "(D)D")] = _sqrt
def _rounding(fn: Callable[[float], int]) -> Model:
    """Math.floor / Math.ceil: NaN, infinities and zeros unchanged; the sign of a zero result kept."""
    def rounded(h, interp, recv, args):
        x = args[0]
        if x != x or math.isinf(x) or x == 0:
            return x
        return math.copysign(float(fn(x)), x)
    return rounded


MODELS[("java/lang/Math", "floor", "(D)D")] = _rounding(math.floor)
MODELS[("java/lang/Math", "ceil", "(D)D")] = _rounding(math.ceil)
MODELS[("java/lang/Float", "floatToRawIntBits", "(F)I")] = lambda h, i, r, a: S.float_to_raw_int_bits(a[0])
MODELS[("java/lang/Float", "floatToIntBits", "(F)I")] = \
    lambda h, i, r, a: 0x7FC00000 if a[0] != a[0] else S.float_to_raw_int_bits(a[0])
MODELS[("java/lang/Float", "intBitsToFloat", "(I)F")] = lambda h, i, r, a: S.int_bits_to_float(a[0])
MODELS[("java/lang/Double", "doubleToRawLongBits", "(D)J")] = lambda h, i, r, a: S.double_to_raw_long_bits(a[0])
MODELS[("java/lang/Double", "doubleToLongBits", "(D)J")] = \
    lambda h, i, r, a: 0x7FF8000000000000 if a[0] != a[0] else S.double_to_raw_long_bits(a[0])
MODELS[("java/lang/Double", "longBitsToDouble", "(J)D")] = lambda h, i, r, a: S.long_bits_to_double(a[0])
for _owner, _d in (("java/lang/Float", "F"), ("java/lang/Double", "D")):
    MODELS[(_owner, "isNaN", f"({_d})Z")] = lambda h, i, r, a: int(a[0] != a[0])
    MODELS[(_owner, "isInfinite", f"({_d})Z")] = lambda h, i, r, a: int(math.isinf(a[0]))
    MODELS[(_owner, "isFinite", f"({_d})Z")] = lambda h, i, r, a: int(math.isfinite(a[0]))


def _float_compare(h, interp, recv, args):
    """Float.compare / Double.compare: -0.0 < 0.0, NaN equals itself and is above everything."""
    def key(x: float) -> tuple:
        return (1, 0.0) if x != x else (0, x, math.copysign(1.0, x))
    a, b = key(args[0]), key(args[1])
    return (a > b) - (a < b)


MODELS[("java/lang/Float", "compare", "(FF)I")] = _float_compare
MODELS[("java/lang/Double", "compare", "(DD)I")] = _float_compare


# Character (ASCII only: Java's and Python's Unicode tables differ in version)
def _char_pred(pred: Callable[[str], bool]) -> Model:
    def test(h, interp, recv, args):
        if not 0 <= args[0] < 128:
            raise Unsupported("Character class of a non-ASCII char")
        return int(pred(chr(args[0])))
    return test


for _name, _pred in (("isDigit", str.isdigit), ("isLetter", str.isalpha), ("isLetterOrDigit", str.isalnum),
                     ("isUpperCase", str.isupper), ("isLowerCase", str.islower),
                     ("isWhitespace", lambda c: c in " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"),
                     ("isAlphabetic", str.isalpha)):
    for _d in ("(C)Z", "(I)Z"):  # the char and the code point forms (isAlphabetic has only the latter)
        MODELS[("java/lang/Character", _name, _d)] = _char_pred(_pred)


def _char_case(upper: bool) -> Model:
    def conv(h, interp, recv, args):
        if not 0 <= args[0] < 128:
            raise Unsupported("case of a non-ASCII char")
        c = chr(args[0])
        return ord(c.upper() if upper else c.lower())
    return conv


def _numeric_value(h, interp, recv, args):
    c = args[0]
    if not 0 <= c < 128:
        raise Unsupported("numeric value of a non-ASCII char")
    ch = chr(c)
    if ch.isdigit():
        return c - 48
    if ch.isalpha():
        return ord(ch.lower()) - ord("a") + 10
    return -1


MODELS[("java/lang/Character", "getNumericValue", "(C)I")] = _numeric_value
for _d in ("(C)C", "(I)I"):
    MODELS[("java/lang/Character", "toUpperCase", _d)] = _char_case(True)
    MODELS[("java/lang/Character", "toLowerCase", _d)] = _char_case(False)


# System, Thread, Objects
@_model("java/lang/Thread", "holdsLock", "(Ljava/lang/Object;)Z")
def _holds_lock(h, interp, recv, args):
    if args[0] is None:
        interp.throw(NPE)
    return int(interp.heap.monitor_count(args[0]) > 0)


@_model("java/util/Objects", "requireNonNull", "(Ljava/lang/Object;)Ljava/lang/Object;",
        "(Ljava/lang/Object;Ljava/lang/String;)Ljava/lang/Object;")
def _require_non_null(h, interp, recv, args):
    if args[0] is None:
        interp.throw(NPE, args[1] if len(args) > 1 else None)
    return args[0]


@_model("java/util/Objects", "equals", "(Ljava/lang/Object;Ljava/lang/Object;)Z")
def _objects_equals(h, interp, recv, args):
    a, b = args
    if a is b and type(a) is not str:
        return 1
    if a is None:
        return int(b is None)
    return h.call_virtual(interp, _EQUALS, a, [b])


@_model("java/lang/System", "arraycopy", "(Ljava/lang/Object;ILjava/lang/Object;II)V")
def _arraycopy(h, interp, recv, args):
    src, sp, dst, dp, n = args
    if src is None or dst is None:
        interp.throw(NPE)
    if type(src) is not JArray or type(dst) is not JArray:
        interp.throw("java/lang/ArrayStoreException")
    sc, dc = src.desc[1:], dst.desc[1:]
    refs = sc[0] in "L[" and dc[0] in "L["
    if not refs and sc != dc:
        interp.throw("java/lang/ArrayStoreException")
    if sp < 0 or dp < 0 or n < 0 or sp + n > len(src.items) or dp + n > len(dst.items):
        interp.throw("java/lang/ArrayIndexOutOfBoundsException")
    chunk = src.items[sp:sp + n]
    if refs and not interp.heap.is_assignable(src.desc, dst.desc):
        target = _class_of(dc)
        for k, v in enumerate(chunk):
            if v is not None and not interp.heap.is_assignable(runtime_class(v), target):
                dst.items[dp:dp + k] = chunk[:k]
                interp.throw("java/lang/ArrayStoreException")
    dst.items[dp:dp + n] = chunk
    interp.steps += n // 16
    return None


def _arrays_to_string(desc: str) -> Model:
    def to_string(h, interp, recv, args):
        a = args[0]
        if a is None:
            return "null"
        return "[" + ", ".join(h.to_java_string(interp, e, desc) for e in a.items) + "]"
    return to_string


for _d in ("I", "J", "S", "B", "C", "Z"):
    MODELS[("java/util/Arrays", "toString", f"([{_d})Ljava/lang/String;")] = _arrays_to_string(_d)
MODELS[("java/util/Arrays", "toString", "([Ljava/lang/Object;)Ljava/lang/String;")] = \
    _arrays_to_string("Ljava/lang/Object;")  # String.valueOf of each element
MODELS[("java/lang/Record", "<init>", "()V")] = _object_init


@_model("java/util/Arrays", "deepToString", "([Ljava/lang/Object;)Ljava/lang/String;")
def _arrays_deep_to_string(h, interp, recv, args):
    a = args[0]
    if a is None:
        return "null"
    if len(a.items) > 1_000_000:
        raise Unsupported("Arrays.deepToString of a large array (its StringBuilder's capacity)")
    out: list[str] = []
    seen: list[JArray] = []  # the arrays being printed (the JDK's identity-based dejaVu set)

    def deep(arr: JArray) -> None:
        if not arr.items:
            out.append("[]")
            return
        seen.append(arr)
        out.append("[")
        for i, e in enumerate(arr.items):
            if i:
                out.append(", ")
            if e is None:
                out.append("null")
            elif type(e) is JArray:
                if e.desc[1] not in "L[":
                    out.append(_arrays_to_string(e.desc[1])(h, interp, None, [e]))
                elif any(e is x for x in seen):
                    out.append("[...]")
                else:
                    deep(e)
            else:
                out.append(h.to_java_string(interp, e, "Ljava/lang/Object;"))
        out.append("]")
        seen.pop()

    deep(a)
    return "".join(out)


# java.io.PrintStream (System.out only)
def _print(newline: bool, desc: str) -> Model:
    def write(h, interp, recv, args):
        if type(recv) is not JObject or recv.native.get("stream") != "out":
            raise Unsupported("a PrintStream other than System.out")
        if not args:
            text = ""
        elif desc == "[C":
            if args[0] is None:
                interp.throw(NPE)
            text = "".join(map(chr, args[0].items))
        else:
            text = h.to_java_string(interp, args[0], desc)
        interp.heap.out.append(_printable(text + ("\n" if newline else "")))
        return None
    return write


MODELS[("java/io/PrintStream", "println", "()V")] = _print(True, "")
for _d in ("I", "J", "C", "Z", "Ljava/lang/String;", "Ljava/lang/Object;", "[C"):
    MODELS[("java/io/PrintStream", "println", f"({_d})V")] = _print(True, _d)
    MODELS[("java/io/PrintStream", "print", f"({_d})V")] = _print(False, _d)


# StringBuilder / StringBuffer: native["sb"] is a list of UTF-16 units
_SB = ("java/lang/StringBuilder", "java/lang/StringBuffer")


def _sb_init(h, interp, recv, args):
    if args and isinstance(args[0], int):
        if args[0] < 0:
            interp.throw("java/lang/NegativeArraySizeException")
        recv.native["sb"] = []
    else:
        recv.native["sb"] = list(_char_seq(h, interp, args[0])) if args else []
    return None


def _sb_append(desc: str) -> Model:
    def append(h, interp, recv, args):
        v = args[0]
        sb = recv.native["sb"]
        if desc == "[C":
            if v is None:
                interp.throw(NPE)
            sb.extend(map(chr, v.items))
        elif desc in ("Ljava/lang/CharSequence;", "Ljava/lang/StringBuffer;") and v is not None:
            sb.extend(_char_seq(h, interp, v))
        else:
            sb.extend(h.to_java_string(interp, v, desc))
        if len(sb) > MAX_ARRAY_ELEMENTS:
            raise Unsupported("string too long")
        return recv
    return append


def _sb_insert(desc: str) -> Model:
    def insert(h, interp, recv, args):
        i, v = args
        sb = recv.native["sb"]
        if not 0 <= i <= len(sb):
            _sioobe(interp)
        sb[i:i] = list(h.to_java_string(interp, v, desc))
        return recv
    return insert


def _sb_reverse(h, interp, recv, args):
    sb = recv.native["sb"]
    sb.reverse()
    i = 0
    while i < len(sb) - 1:  # keep valid surrogate pairs in order, as AbstractStringBuilder.reverse does
        if "\udc00" <= sb[i] <= "\udfff" and "\ud800" <= sb[i + 1] <= "\udbff":
            sb[i], sb[i + 1] = sb[i + 1], sb[i]
            i += 2
        else:
            i += 1
    return recv


def _sb_delete_char_at(h, interp, recv, args):
    sb = recv.native["sb"]
    if not 0 <= args[0] < len(sb):
        _sioobe(interp)
    del sb[args[0]]
    return recv


def _sb_delete(h, interp, recv, args):
    sb = recv.native["sb"]
    start, end = args
    end = min(end, len(sb))
    if start < 0 or start > end:
        _sioobe(interp)
    del sb[start:end]
    return recv


def _sb_replace(h, interp, recv, args):
    sb = recv.native["sb"]
    start, end, s = args
    text = _str_arg(interp, s)
    end = min(end, len(sb))
    if start < 0 or start > end:
        _sioobe(interp)
    sb[start:end] = list(text)
    return recv


def _sb_set_char_at(h, interp, recv, args):
    sb = recv.native["sb"]
    if not 0 <= args[0] < len(sb):
        _sioobe(interp)
    sb[args[0]] = chr(args[1])
    return None


def _sb_set_length(h, interp, recv, args):
    sb = recv.native["sb"]
    n = args[0]
    if n < 0:
        _sioobe(interp)
    if n > MAX_ARRAY_ELEMENTS:
        raise Unsupported("string too long")
    if n <= len(sb):
        del sb[n:]
    else:
        sb.extend("\0" * (n - len(sb)))
    return None


def _sb_char_at(h, interp, recv, args):
    sb = recv.native["sb"]
    if not 0 <= args[0] < len(sb):
        _sioobe(interp)
    return ord(sb[args[0]])


for _c in _SB:
    _self = f"L{_c};"
    for _d in ("()V", "(I)V", "(Ljava/lang/String;)V", "(Ljava/lang/CharSequence;)V"):
        MODELS[(_c, "<init>", _d)] = _sb_init
    for _d in ("I", "J", "C", "Z", "Ljava/lang/String;", "Ljava/lang/Object;", "Ljava/lang/CharSequence;", "[C",
               "Ljava/lang/StringBuffer;"):
        MODELS[(_c, "append", f"({_d}){_self}")] = _sb_append(_d)
    for _d in ("I", "J", "C", "Z", "Ljava/lang/String;", "Ljava/lang/Object;"):
        MODELS[(_c, "insert", f"(I{_d}){_self}")] = _sb_insert(_d)
    MODELS[(_c, "toString", "()Ljava/lang/String;")] = lambda h, i, r, a: "".join(r.native["sb"])
    MODELS[(_c, "length", "()I")] = lambda h, i, r, a: len(r.native["sb"])
    MODELS[(_c, "isEmpty", "()Z")] = lambda h, i, r, a: int(not r.native["sb"])
    MODELS[(_c, "charAt", "(I)C")] = _sb_char_at
    MODELS[(_c, "reverse", f"(){_self}")] = _sb_reverse
    MODELS[(_c, "deleteCharAt", f"(I){_self}")] = _sb_delete_char_at
    MODELS[(_c, "delete", f"(II){_self}")] = _sb_delete
    MODELS[(_c, "replace", f"(IILjava/lang/String;){_self}")] = _sb_replace
    MODELS[(_c, "setCharAt", "(IC)V")] = _sb_set_char_at
    MODELS[(_c, "setLength", "(I)V")] = _sb_set_length
    MODELS[(_c, "indexOf", "(Ljava/lang/String;)I")] = \
        lambda h, i, r, a: "".join(r.native["sb"]).find(_str_arg(i, a[0]))
    MODELS[(_c, "lastIndexOf", "(Ljava/lang/String;)I")] = \
        lambda h, i, r, a: "".join(r.native["sb"]).rfind(_str_arg(i, a[0]))


# java.lang.Throwable: native message / cause / suppressed
@_model(THROWABLE, "<init>", "()V", "(Ljava/lang/String;)V", "(Ljava/lang/String;Ljava/lang/Throwable;)V")
def _throwable_init(h, interp, recv, args):
    n = recv.native
    n.setdefault("suppressed", [])
    n["message"] = args[0] if args else None
    n["cause"] = args[1] if len(args) == 2 else None
    n["cause_set"] = len(args) == 2
    return None


@_model(THROWABLE, "<init>", "(Ljava/lang/Throwable;)V")
def _throwable_init_cause(h, interp, recv, args):
    cause = args[0]
    recv.native.setdefault("suppressed", [])
    recv.native.update(cause=cause, cause_set=True,
                       message=None if cause is None else h.to_java_string(interp, cause, "Ljava/lang/Object;"))
    return None



@_model(THROWABLE, "getMessage", "()Ljava/lang/String;")
@_model(NPE, "getMessage", "()Ljava/lang/String;")  # the helpful message exists only for the VM's own NPEs
def _throwable_get_message(h, interp, recv, args):
    m = recv.native.get("message")
    if m is VM_MESSAGE:
        raise Unsupported(f"the JVM's message of a {recv.cls}")
    return m


@_model(THROWABLE, "getLocalizedMessage", "()Ljava/lang/String;")
def _throwable_get_localized(h, interp, recv, args):
    return h.call_virtual(interp, _GET_MESSAGE, recv, [])


@_model(THROWABLE, "getCause", "()Ljava/lang/Throwable;")
def _throwable_get_cause(h, interp, recv, args):
    return recv.native.get("cause")


@_model(THROWABLE, "initCause", "(Ljava/lang/Throwable;)Ljava/lang/Throwable;")
def _throwable_set_cause(h, interp, recv, args):
    if recv.native.get("cause_set"):
        interp.throw("java/lang/IllegalStateException")
    if args[0] is recv:
        interp.throw("java/lang/IllegalArgumentException")
    recv.native.update(cause=args[0], cause_set=True)
    return recv


@_model(THROWABLE, "toString", "()Ljava/lang/String;")
def _throwable_to_string(h, interp, recv, args):
    msg = h.call_virtual(interp, _GET_LOCALIZED, recv, [])
    name = runtime_class(recv).replace("/", ".")
    return name if msg is None else f"{name}: {msg}"


@_model(THROWABLE, "fillInStackTrace", "()Ljava/lang/Throwable;")
def _throwable_fill(h, interp, recv, args):
    return recv


@_model(THROWABLE, "addSuppressed", "(Ljava/lang/Throwable;)V")
def _throwable_add_suppressed(h, interp, recv, args):
    e = args[0]
    if e is recv:
        interp.throw("java/lang/IllegalArgumentException", "Self-suppression not permitted")
    if e is None:
        interp.throw(NPE, "Cannot suppress a null exception.")
    recv.native.setdefault("suppressed", []).append(e)
    return None


@_model(THROWABLE, "getSuppressed", "()[Ljava/lang/Throwable;")
def _throwable_get_suppressed(h, interp, recv, args):
    return JArray("[Ljava/lang/Throwable;", list(recv.native.get("suppressed", [])))


# java.lang.Enum
@_model("java/lang/Enum", "<init>", "(Ljava/lang/String;I)V")
def _enum_init(h, interp, recv, args):
    recv.native.update(name=args[0], ordinal=args[1])
    return None


@_model("java/lang/Enum", "name", "()Ljava/lang/String;")
@_model("java/lang/Enum", "toString", "()Ljava/lang/String;")
def _enum_name(h, interp, recv, args):
    return recv.native["name"]


@_model("java/lang/Enum", "ordinal", "()I")
def _enum_ordinal(h, interp, recv, args):
    return recv.native["ordinal"]


@_model("java/lang/Enum", "equals", "(Ljava/lang/Object;)Z")
def _enum_equals(h, interp, recv, args):
    return int(recv is args[0])


@_model("java/lang/Enum", "compareTo", "(Ljava/lang/Enum;)I")
def _enum_compare(h, interp, recv, args):
    o = args[0]
    if o is None:
        interp.throw(NPE)
    if o.cls != recv.cls:
        interp.throw("java/lang/ClassCastException")
    return recv.native["ordinal"] - o.native["ordinal"]


@_model("java/lang/Enum", "valueOf", "(Ljava/lang/Class;Ljava/lang/String;)Ljava/lang/Enum;")
def _enum_value_of(h, interp, recv, args):
    cls_value, name = args
    if cls_value is None or name is None:
        interp.throw(NPE)
    cls = cls_value.name
    cf = h.program.get(cls)
    if cf is None:
        raise Unsupported(f"Enum.valueOf of library enum {cls}")
    h.class_init(interp, cls)
    for f in cf.fields:
        if f.name == name and f.access & Access.ENUM and f.access & Access.STATIC:
            key = FieldRef(cls, f.name, f.descriptor)
            return interp.heap.statics.get(key)
    interp.throw("java/lang/IllegalArgumentException",
                 f"No enum constant {cls.replace('/', '.').replace('$', '.')}.{name}")


# -- boxes ---------------------------------------------------------------------------------------------------
BOX_OF = {"I": "java/lang/Integer", "J": "java/lang/Long", "S": "java/lang/Short", "B": "java/lang/Byte",
          "C": "java/lang/Character", "Z": "java/lang/Boolean", "F": "java/lang/Float", "D": "java/lang/Double"}
"""Primitive descriptor -> its wrapper class."""
PRIM_OF = {cls: d for d, cls in BOX_OF.items()}
# the values valueOf returns a shared instance for (JDK 17 defaults: no AutoBoxCacheMax); Float/Double: none
_BOX_CACHE = {"java/lang/Integer": (-128, 127), "java/lang/Long": (-128, 127), "java/lang/Short": (-128, 127),
              "java/lang/Byte": (-128, 127), "java/lang/Character": (0, 127), "java/lang/Boolean": (0, 1)}


def box(heap: Heap, prim: str, v: Value) -> Boxed:
    """``Wrapper.valueOf(v)`` for a primitive of descriptor ``prim``: the cached instance where the JDK has one."""
    cls = BOX_OF[prim]
    rng = _BOX_CACHE.get(cls)
    if rng is not None and rng[0] <= v <= rng[1]:  # type: ignore[operator]
        key = (cls, v)
        b = heap.boxes.get(key)
        if b is None:
            b = heap.boxes[key] = Boxed(cls, v)  # type: ignore[arg-type]
        return b
    return Boxed(cls, v)  # type: ignore[arg-type]


def _float_bits(x: float, prim: str) -> int:
    """floatToIntBits / doubleToLongBits (NaN canonical), signed."""
    if x != x:
        return 0x7FC00000 if prim == "F" else 0x7FF8000000000000
    return S.float_to_raw_int_bits(x) if prim == "F" else S.double_to_raw_long_bits(x)


def _prim_hash(prim: str, v: Value) -> int:
    """``Wrapper.hashCode(v)`` for a primitive of descriptor ``prim``."""
    if prim in "ISBC":
        return v  # type: ignore[return-value]
    if prim == "Z":
        return 1231 if v else 1237
    if prim == "F":
        return _float_bits(v, "F")  # type: ignore[arg-type]
    bits = (v if prim == "J" else _float_bits(v, "D")) & 0xFFFFFFFFFFFFFFFF  # type: ignore[operator]
    return S.wrap_i(bits ^ (bits >> 32))


def _prim_compare(prim: str, a: Value, b: Value) -> int:
    """``Wrapper.compare(a, b)`` (Short, Byte, Character: the difference; Boolean: false < true)."""
    if prim in "SBC":
        return a - b  # type: ignore[operator]
    if prim in "FD":
        return _float_compare(None, None, None, [a, b])
    return (a > b) - (a < b)  # type: ignore[operator]


def _prim_eq_bits(prim: str, a: Value, b: Value) -> bool:
    if prim in "FD":
        return _float_bits(a, prim) == _float_bits(b, prim)  # type: ignore[arg-type]
    return a == b


# conversions of a box's value to each primitive (xxxValue): exactly the JLS casts
_CONVERT: dict[tuple[str, str], Callable[[Value], Value]] = {}
for _src in "ISBJFD":
    for _dst in "BSIJFD":
        if _src in "ISB":
            _fn = {"B": S.i2b, "S": S.i2s, "I": lambda x: x, "J": S.i2l, "F": S.i2f, "D": S.i2d}[_dst]
        elif _src == "J":
            _fn = {"B": lambda x: S.i2b(S.l2i(x)), "S": lambda x: S.i2s(S.l2i(x)), "I": S.l2i, "J": lambda x: x,
                 "F": S.l2f, "D": S.l2d}[_dst]
        elif _src == "F":
            _fn = {"B": lambda x: S.i2b(S.f2i(x)), "S": lambda x: S.i2s(S.f2i(x)), "I": S.f2i, "J": S.f2l,
                 "F": lambda x: x, "D": S.f2d}[_dst]
        else:
            _fn = {"B": lambda x: S.i2b(S.d2i(x)), "S": lambda x: S.i2s(S.d2i(x)), "I": S.d2i, "J": S.d2l,
                 "F": S.d2f, "D": lambda x: x}[_dst]
        _CONVERT[(_src, _dst)] = _fn
_CONVERT[("C", "C")] = _CONVERT[("Z", "Z")] = lambda x: x
_VALUE_METHOD = {"B": "byteValue", "S": "shortValue", "I": "intValue", "J": "longValue", "F": "floatValue",
                 "D": "doubleValue", "C": "charValue", "Z": "booleanValue"}


def _register_box(prim: str) -> None:
    cls = BOX_OF[prim]
    ref = f"L{cls};"

    def value_of(h, interp, recv, args):
        return box(interp.heap, prim, args[0])

    def to_string(h, interp, recv, args):
        return h.to_java_string(interp, recv.value, prim)

    def static_to_string(h, interp, recv, args):
        return h.to_java_string(interp, args[0], prim)

    def equals(h, interp, recv, args):
        o = args[0]
        return int(type(o) is Boxed and o.cls == cls and _prim_eq_bits(prim, recv.value, o.value))

    def compare_to(h, interp, recv, args):
        o = args[0]
        if o is None:
            interp.throw(NPE)
        if not (type(o) is Boxed and o.cls == cls):
            interp.throw("java/lang/ClassCastException")
        return _prim_compare(prim, recv.value, o.value)

    MODELS[(cls, "valueOf", f"({prim}){ref}")] = value_of
    MODELS[(cls, "toString", "()Ljava/lang/String;")] = to_string
    MODELS[(cls, "toString", f"({prim})Ljava/lang/String;")] = static_to_string
    MODELS[(cls, "equals", "(Ljava/lang/Object;)Z")] = equals
    MODELS[(cls, "hashCode", "()I")] = lambda h, i, r, a: _prim_hash(prim, r.value)
    MODELS[(cls, "hashCode", f"({prim})I")] = lambda h, i, r, a: _prim_hash(prim, a[0])
    MODELS[(cls, "compareTo", f"({ref})I")] = compare_to
    MODELS[(cls, "compareTo", "(Ljava/lang/Object;)I")] = compare_to  # the bridge (checkcast first)
    MODELS[(cls, "compare", f"({prim}{prim})I")] = lambda h, i, r, a: _prim_compare(prim, a[0], a[1])
    for dst in ("BSIJFD" if prim in "ISBJFD" else prim):
        conv = _CONVERT[(prim, dst)]
        MODELS[(cls, _VALUE_METHOD[dst], f"(){dst}")] = lambda h, i, r, a, conv=conv: conv(r.value)


for _p in "IJSBCZFD":
    _register_box(_p)


def _parse_boolean(s: Value) -> int:
    """``Boolean.parseBoolean``: ``"true".equalsIgnoreCase(s)`` (non-ASCII text of length 4: Unsupported)."""
    if s is None or len(s) != 4:  # type: ignore[arg-type]
        return 0
    _ascii_only(s, "Boolean.parseBoolean")  # type: ignore[arg-type]
    return int(s.lower() == "true")  # type: ignore[union-attr]


@_model("java/lang/Boolean", "parseBoolean", "(Ljava/lang/String;)Z")
def _boolean_parse(h, interp, recv, args):
    return _parse_boolean(_str_or_null(interp, args[0]))


@_model("java/lang/Boolean", "valueOf", "(Ljava/lang/String;)Ljava/lang/Boolean;")
def _boolean_value_of_string(h, interp, recv, args):
    return box(interp.heap, "Z", _parse_boolean(_str_or_null(interp, args[0])))


def _str_or_null(interp: Interpreter, v: Value) -> Value:
    return None if v is None else _str_arg(interp, v)


def _widen(v: Value, src: str, dst: str) -> Value:
    """A widening primitive conversion (JLS 5.1.2) or the identity; anything else is Unsupported."""
    if src == dst:
        return v
    ints = "BSCI"
    if src in ints and dst in "IJ" or src == "B" and dst == "S":
        return v
    if src in ints and dst == "F":
        return S.i2f(v)  # type: ignore[arg-type]
    if src in ints and dst == "D":
        return S.i2d(v)  # type: ignore[arg-type]
    if src == "J" and dst in "FD":
        return S.l2f(v) if dst == "F" else S.l2d(v)  # type: ignore[arg-type]
    if src == "F" and dst == "D":
        return S.f2d(v)  # type: ignore[arg-type]
    raise Unsupported(f"conversion {src} -> {dst}")
