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

The default call handler (:class:`DefaultCallHandler`) interprets methods of the program's own classes (one
class-path directory or a dict of parsed classes) by lifting them, with virtual dispatch over the program's and
the JDK's class hierarchy, runs their static initializers, and models a set of library methods exactly:
``Math`` (abs/min/max, exact arithmetic, floor/ceil/sqrt), Integer/Long bit helpers, parsing and radix text,
String (the common methods, Java 11's strip/isBlank/lines, split by simple regexes, join, the constructors),
StringBuilder/StringBuffer, string concatenation by ``invokedynamic``, ``System.out.print/println`` into
:attr:`Heap.out`, float and double to text exactly as JDK 17's FloatingDecimal writes them
(:func:`double_to_string`, :func:`float_to_string`; not the shortest digits Python's repr gives), decimal
parsing, Throwable's message, cause and suppressed list, enums' name/ordinal/compareTo/getDeclaringClass, the
wrappers' valueOf (with the JDK's caches)/xxxValue/equals/hashCode/compareTo, ``Arrays.toString``/
``deepToString``/``equals``, lambdas and method references made by ``LambdaMetafactory`` (an object of a
made-up class ``<interface>$$Lambda`` that calls the implementation with JDK 17's argument and result
conversions; one instance per non-capturing call site and heap; a run whose result holds one is Unsupported, the
JVM's hidden class name being unknown), records' ``ObjectMethods`` toString, equals and hashCode, reflection on
the program's classes (getInterfaces, isSealed, getPermittedSubclasses), and java.util: ArrayList, LinkedList,
``List.of``, ``Arrays.asList`` (write-through), HashSet as long as it has at most one element (its order is the
hash table's), their iterators with ConcurrentModificationException, ``Collections.sort``/``List.sort`` with the
JDK's exact sequence of comparisons (below 32 elements; TimSort's merges are not modelled), Comparator and
Function/Predicate factories and default methods, and sequential streams (map, filter, count with JDK 9's
skipping of SIZED pipelines, forEach, sum, reduce, ``Collectors.joining``, ``IntStream.range``,
``String.lines``). Everything else raises Unsupported with the reason (threads, string identity, Unicode tables
beyond ASCII, the platform charset, ...).
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
    "double_to_string", "float_to_string", "MODELS", "box",
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
    t = type(v)
    if t is JObject:
        return "lambda" in v.native or "fn" in v.native  # type: ignore[union-attr]
    if t is JArray and v.desc[1] in "L[":  # type: ignore[union-attr]
        return any(_holds_lambda(e) for e in v.items)  # type: ignore[union-attr]
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
        return env[x] if type(x) is Var else self._const(x)  # type: ignore[arg-type]

    def _const(self, c: Const) -> Value:
        if c.kind is _VALUE:
            return c.value
        if c.kind is ConstKind.CLASS:
            return self.heap.class_value(c.value)  # type: ignore[arg-type]
        raise Unsupported(f"constant of kind {c.kind.value}")

    def _frame(self, m: IRMethod, env: dict, lock: Value) -> Value:
        # this loop is the hot path: statements run as compiled closures (see _compile), and so do the
        # terminators that only pick a successor (goto, if on numbers)
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
                tt = type(term)
                if branch is not None:
                    nxt = branch(env)
                elif tt is Goto:
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
                        taken = _CONDS[id(term.cond)](a, c)  # type: ignore[union-attr]
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
        t = type(s)
        value = self._value
        if t is Copy:
            d, x = s.dst, s.src  # type: ignore[attr-defined]
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
            d, a, c, op = s.dst, s.a, s.b, s.op  # type: ignore[attr-defined]
            fn = _OPS[op]
            if op in _THROWING:
                throw = self.throw

                def divide(env: dict) -> None:
                    try:
                        env[d] = fn(value(a, env), value(c, env))
                    except S.JavaArithmeticError:
                        throw("java/lang/ArithmeticException", "/ by zero")
                return divide
            if type(a) is Var and type(c) is Var:
                def binary(env: dict) -> None:
                    env[d] = fn(env[a], env[c])
                return binary
            if type(a) is Var and c.kind is _VALUE:
                cv = c.value

                def binary_const(env: dict) -> None:
                    env[d] = fn(env[a], cv)
                return binary_const

            def binary_other(env: dict) -> None:
                env[d] = fn(value(a, env), value(c, env))
            return binary_other
        if t is Unary:
            d, a, fn = s.dst, s.a, _OPS[s.op]  # type: ignore[attr-defined]
            if type(a) is Var:
                def unary(env: dict) -> None:
                    env[d] = fn(env[a])
                return unary

            def unary_other(env: dict) -> None:
                env[d] = fn(value(a, env))
            return unary_other
        if t is Catch:
            d = s.dst  # type: ignore[attr-defined]

            def catch(env: dict) -> None:
                env[d] = env.get(_CAUGHT)
            return catch
        if t is ArrayLoad and type(s.array) is Var:  # type: ignore[attr-defined]
            return self._compile_array_load(s)  # type: ignore[arg-type]
        if t is GetField and type(s.obj) is Var:  # type: ignore[attr-defined]
            return self._compile_get_field(s, owner)  # type: ignore[arg-type]
        if t is ArrayStore and type(s.array) is Var:  # type: ignore[attr-defined]
            return self._compile_array_store(s, owner)  # type: ignore[arg-type]
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
            if not 0 <= i < len(items):  # type: ignore[operator]
                throw("java/lang/ArrayIndexOutOfBoundsException", f"Index {i} out of bounds for length {len(items)}")
            env[d] = items[i]  # type: ignore[index]
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
            if not 0 <= i < len(items):  # type: ignore[operator]
                throw("java/lang/ArrayIndexOutOfBoundsException", f"Index {i} out of bounds for length {len(items)}")
            items[i] = value(val, env)  # type: ignore[index]
        return array_store

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
        target = term.target  # type: ignore[attr-defined]
        return lambda env: target
    if type(term) is not If:
        return None
    a, b = term.a, term.b  # type: ignore[attr-defined]
    if a.type.kind is _REF or b.type.kind is _REF:
        return None  # identity, with strings' Unsupported: the frame loop
    cond = _CONDS[id(term.cond)]  # type: ignore[attr-defined]
    yes, no = term.if_true, term.if_false  # type: ignore[attr-defined]
    if type(a) is Var and type(b) is Var:
        return lambda env: yes if cond(env[a], env[b]) else no
    if type(a) is Var and b.kind is _VALUE:
        bv = b.value
        return lambda env: yes if cond(env[a], bv) else no
    return None


def run_method(method: IRMethod, args: list[Value], heap: Heap, call: CallHandler | None = None, *,
               budget: int = DEFAULT_BUDGET, max_depth: int = DEFAULT_MAX_DEPTH,
               max_heap_bytes: int | None = None) -> Outcome:
    """Run ``method`` on ``args`` with a fresh :class:`Interpreter`; see :meth:`Interpreter.run`."""
    return Interpreter(heap, call, budget=budget, max_depth=max_depth, max_heap_bytes=max_heap_bytes).run(method, args)


_ELEMENT_BYTES = {"Z": 1, "B": 1, "C": 2, "S": 2, "I": 4, "F": 4, "J": 8, "D": 8}
"""Bytes an array element takes at least (references: 4, compressed; headers not counted: a lower bound)."""


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
_NATIVE_ALLOC = {"java/lang/Object": None, "java/lang/StringBuilder": "sb", "java/lang/StringBuffer": "sb",
                 "java/util/ArrayList": "list", "java/util/LinkedList": "list", "java/util/HashSet": "set"}
"""Library classes ``new`` may allocate (their constructors are modelled), with the kind of native state."""


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
        elif type(receiver) is JObject and "fn" in receiver.native:  # type: ignore[union-attr]
            return self._call_fn(interp, kind, method, receiver, args)  # type: ignore[arg-type]
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
        if cls == STRING:  # strings are values: the new one is its text (identity stays unmodelled)
            return _new_string(self, interp, constructor.descriptor, args)
        if self.program.get(cls) is None and cls not in _NATIVE_ALLOC and not (
                cls.startswith(_PLAIN_EXCEPTION_PACKAGES) and heap.is_assignable(cls, THROWABLE)):
            raise Unsupported(f"new {cls}")
        obj = JObject(cls)
        kind = _NATIVE_ALLOC.get(cls)
        if kind == "sb":
            obj.native["sb"] = []
        elif kind == "list":
            obj.native.update(list=[], mod=0)
        elif kind == "set":
            obj.native.update(set=[], mod=0)
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
            if where[0] == "model":  # Object's equals (identity), modelled default methods (andThen ...)
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

    def _call_fn(self, interp: Interpreter, kind: InvokeKind, method: MethodRef, receiver: JObject,
                 args: list[Value]) -> Value:
        """A call on a functional object a library model made (see :func:`_fn_object`): its interface method runs
        the Python function; other methods go to the interface's modelled default methods or Object's."""
        iface, sam_name, sam_desc, fn = receiver.native["fn"]
        if method.name == sam_name and method.descriptor == sam_desc:
            return fn(self, interp, args)
        if method.name == "getClass" or kind is InvokeKind.SPECIAL:
            raise Unsupported(f"{method.name}{method.descriptor} of a library-made functional object")
        where = self.target(interp.heap, iface, method.name, method.descriptor)
        if where[0] == "model":
            return where[1](self, interp, receiver, args)
        raise Unsupported(f"{method.name}{method.descriptor} of a library-made functional object")

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
        if field == _LOCALE_ROOT:
            root = heap.statics.get(field)
            if root is None:
                root = heap.statics[field] = JObject("java/util/Locale", {"locale": "root"})
            return root
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
        if c == "F":
            return float_to_string(v)  # type: ignore[arg-type]
        if c == "D":
            return double_to_string(v)  # type: ignore[arg-type]
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


# -- Java's float and double to string (JDK 17's FloatingDecimal) ----------------------------------------------
# Double.toString and Float.toString in JDK 17 are not the shortest-digits conversion Python's repr is: they run
# FloatingDecimal's digit generator, which has an integer fast path that keeps digits beyond the shortest (2^60
# prints as 1.15292150460684698E18), a symmetric stopping test, a forced second digit in E-form, and int/long
# arithmetic that may wrap around. What follows computes the same digits and exponent, re-derived from that
# behaviour and checked against the JVM on hundreds of thousands of values (tests/test_interp.py).

_N5_BITS = tuple(0 if i == 0 else (5 ** i).bit_length() for i in range(27))
"""Bits of 5^i as FloatingDecimal estimates them (0 for 5^0) for the exponents its tables hold."""


def _ins_digits_pow2(p2: int) -> int:
    """Decimal digits of 2^p2 that cannot matter (floor(log10 2^p2)) for 1 < p2 < 64, else 0."""
    return len(str(1 << p2)) - 1 if 1 < p2 < 64 else 0


def _estimate_dec_exp(fract: int, bin_exp: int) -> int:
    """floor(log10(value)) estimated in double arithmetic, as the JDK does (it may be one too high)."""
    d2 = S.long_bits_to_double(0x3FF0000000000000 | (fract & 0xFFFFFFFFFFFFF))
    d = (d2 - 1.5) * 0.289529654 + 0.176091259 + bin_exp * 0.301029995663981
    return math.floor(d)


def _long_digits(value: int, insignificant: int) -> tuple[str, int]:
    """An integer value's digits (trailing zeros dropped), the last ``insignificant`` rounded away half-up."""
    dec = 0
    if insignificant:
        pow10 = 10 ** insignificant
        value, residue = divmod(value, pow10)
        dec = insignificant
        if residue >= pow10 >> 1:
            value += 1
    text = str(value)
    return text.rstrip("0"), dec + len(text)


def _dtoa(bin_exp: int, fract: int, n_sig: int) -> tuple[str, int]:
    """Digits and decimal exponent (value = 0.DIGITS * 10^exp) of fract * 2^(bin_exp - 52), where ``fract`` has
    its highest bit at 52 and ``n_sig`` significant bits (53 for a double, 24 for a float, fewer if subnormal)."""
    tail = (fract & -fract).bit_length() - 1
    n_fract = 53 - tail  # significant bits up to the last one set
    n_tiny = max(0, n_fract - bin_exp - 1)  # bits right of the binary point
    if -21 <= bin_exp <= 62 and n_tiny == 0 and n_fract < 64:
        # an integer that fits a long: its digits, less those below the precision of the binary value
        insignificant = _ins_digits_pow2(bin_exp - n_sig - 1) if bin_exp > n_sig else 0
        value = fract << (bin_exp - 52) if bin_exp >= 52 else fract >> (52 - bin_exp)
        return _long_digits(value, insignificant)
    dec_exp = _estimate_dec_exp(fract, bin_exp)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny
    m5 = b5
    m2 = b2 - n_sig
    fract >>= tail
    b2 -= n_fract - 1
    common = min(b2, s2)
    b2 -= common
    s2 -= common
    m2 -= common
    if n_fract == 1:  # a power of two: the gap below is half the gap above, taken symmetric as the JDK does
        m2 -= 1
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0
    b_bits = n_fract + b2 + (_N5_BITS[b5] if b5 < 27 else b5 * 3)
    ten_s_bits = s2 + 1 + (_N5_BITS[s5 + 1] if s5 + 1 < 27 else (s5 + 1) * 3)
    if b_bits < 64 and ten_s_bits < 64:
        if b_bits < 32 and ten_s_bits < 32:
            digits, dec_exp, low, high, low_diff = _digits_fixed(fract, b5, b2, s5, s2, m5, m2, dec_exp, 32)
        else:
            digits, dec_exp, low, high, low_diff = _digits_fixed(fract, b5, b2, s5, s2, m5, m2, dec_exp, 64)
    else:
        digits, dec_exp, low, high, low_diff = _digits_big(fract, b5, b2, s5, s2, m5, m2, dec_exp)
    dec_exponent = dec_exp + 1
    if high and (not low or low_diff > 0 or low_diff == 0 and digits[-1] & 1):
        dec_exponent += _round_up(digits)
    return "".join(map(str, digits)), dec_exponent


def _e_form(dec_exp: int) -> bool:
    """Whether the first digit alone may not end the digits (E-form needs one after the point), by the JDK's
    bounds on the exponent before the first digit is placed."""
    return dec_exp < -3 or dec_exp >= 8


def _digits_fixed(fract: int, b5: int, b2: int, s5: int, s2: int, m5: int, m2: int, dec_exp: int, bits: int):
    """The digit loop in Java int (bits=32) or long (64) arithmetic, wrapping where Java's wraps."""
    if bits == 32:
        wrap, shl, div, rem = S.wrap_i, S.ishl, S.idiv, S.irem
    else:
        wrap, shl, div, rem = S.wrap_l, S.lshl, S.ldiv, S.lrem
    b = shl(wrap(wrap(fract) * 5 ** b5), b2)
    s = shl(5 ** s5, s2)
    m = shl(5 ** m5, m2)
    tens = wrap(s * 10)
    q = div(b, s)
    b = wrap(10 * rem(b, s))
    m = wrap(m * 10)
    low = b < m
    high = wrap(b + m) > tens
    digits: list[int] = []
    if q == 0 and not high:
        dec_exp -= 1  # the estimate was one too high
    else:
        digits.append(_digit(q))
    if _e_form(dec_exp):
        low = high = False
    while not low and not high:
        q = div(b, s)
        b = wrap(10 * rem(b, s))
        m = wrap(m * 10)
        if m > 0:
            low = b < m
            high = wrap(b + m) > tens
        else:  # m wrapped around: the JDK takes both tests as true
            low = high = True
        digits.append(_digit(q))
    return digits, dec_exp, low, high, wrap(shl(b, 1) - tens)


def _digits_big(fract: int, b5: int, b2: int, s5: int, s2: int, m5: int, m2: int, dec_exp: int):
    """The digit loop on big integers (its high test is B + M >= 10 S, where the fixed-width loops use >)."""
    s = 5 ** s5 << s2
    b = fract * 5 ** b5 << b2
    m = 5 ** (m5 + 1) << (m2 + 1)  # 10 M
    tens = 10 * s
    q, r = divmod(b, s)
    b = 10 * r
    low = b < m
    high = b + m >= tens
    digits: list[int] = []
    if q == 0 and not high:
        dec_exp -= 1
    else:
        digits.append(_digit(q))
    if _e_form(dec_exp):
        low = high = False
    while not low and not high:
        q, r = divmod(b, s)
        b = 10 * r
        m *= 10
        low = b < m
        high = b + m >= tens
        digits.append(_digit(q))
    low_diff = ((b << 1) > tens) - ((b << 1) < tens) if high and low else 0
    return digits, dec_exp, low, high, low_diff


def _digit(q: int) -> int:
    if not 0 <= q <= 9:
        raise Unsupported(f"FloatingDecimal model: digit {q}")  # never seen in testing; not guessed either
    return q


def _round_up(digits: list[int]) -> int:
    """Add one to the last digit, carrying; a carry out of the first makes it 1 (the rest are 0): returns 1
    then (the exponent grows), else 0. Digits keep their count, so trailing zeros may remain."""
    i = len(digits) - 1
    while digits[i] == 9 and i > 0:
        digits[i] = 0
        i -= 1
    if digits[i] == 9:
        digits[0] = 1
        return 1
    digits[i] += 1
    return 0


def _java_format(negative: bool, digits: str, dec_exponent: int) -> str:
    """Java's layout of 0.DIGITS * 10^dec_exponent: plain for 10^-3 <= |v| < 10^7, else d.dddE[-]n."""
    sign = "-" if negative else ""
    n = len(digits)
    if 0 < dec_exponent < 8:
        if n <= dec_exponent:
            return f"{sign}{digits}{'0' * (dec_exponent - n)}.0"
        return f"{sign}{digits[:dec_exponent]}.{digits[dec_exponent:]}"
    if -3 < dec_exponent <= 0:
        return f"{sign}0.{'0' * -dec_exponent}{digits}"
    e = dec_exponent - 1
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e}"


def double_to_string(x: float) -> str:
    """``Double.toString(x)`` exactly as JDK 17 prints it."""
    bits = S.double_to_raw_long_bits(x) & 0xFFFFFFFFFFFFFFFF
    negative = bits >> 63 == 1
    fract = bits & 0xFFFFFFFFFFFFF
    bin_exp = (bits >> 52) & 0x7FF
    if bin_exp == 0x7FF:
        return "NaN" if fract else ("-Infinity" if negative else "Infinity")
    if bin_exp == 0:
        if fract == 0:
            return "-0.0" if negative else "0.0"
        shift = 53 - fract.bit_length()  # normalize a subnormal: its highest bit to bit 52
        fract <<= shift
        bin_exp = 1 - shift
        n_sig = 53 - shift
    else:
        fract |= 1 << 52
        n_sig = 53
    return _java_format(negative, *_dtoa(bin_exp - 1023, fract, n_sig))


def float_to_string(x: float) -> str:
    """``Float.toString(x)`` exactly as JDK 17 prints it (``x`` is binary32-exact)."""
    bits = S.float_to_raw_int_bits(x) & 0xFFFFFFFF
    negative = bits >> 31 == 1
    fract = bits & 0x7FFFFF
    bin_exp = (bits >> 23) & 0xFF
    if bin_exp == 0xFF:
        return "NaN" if fract else ("-Infinity" if negative else "Infinity")
    if bin_exp == 0:
        if fract == 0:
            return "-0.0" if negative else "0.0"
        shift = 24 - fract.bit_length()
        fract <<= shift
        bin_exp = 1 - shift
        n_sig = 24 - shift
    else:
        fract |= 1 << 23
        n_sig = 24
    return _java_format(negative, *_dtoa(bin_exp - 127, fract << 29, n_sig))


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


@_model(STRING, "valueOf", "(F)Ljava/lang/String;")
def _s_value_of_float(h, interp, recv, args):
    return float_to_string(args[0])


@_model(STRING, "valueOf", "(D)Ljava/lang/String;")
def _s_value_of_double(h, interp, recv, args):
    return double_to_string(args[0])


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


for _d in ("I", "J", "S", "B", "C", "Z", "F", "D"):
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
for _d in ("I", "J", "F", "D", "C", "Z", "Ljava/lang/String;", "Ljava/lang/Object;", "[C"):
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
    for _d in ("I", "J", "F", "D", "C", "Z", "Ljava/lang/String;", "Ljava/lang/Object;", "Ljava/lang/CharSequence;",
               "[C", "Ljava/lang/StringBuffer;"):
        MODELS[(_c, "append", f"({_d}){_self}")] = _sb_append(_d)
    for _d in ("I", "J", "F", "D", "C", "Z", "Ljava/lang/String;", "Ljava/lang/Object;"):
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
    if o.cls != recv.cls and _enum_declaring(h, interp, o) != _enum_declaring(h, interp, recv):
        interp.throw("java/lang/ClassCastException")  # constants with bodies are subclasses of their enum
    return recv.native["ordinal"] - o.native["ordinal"]


def _enum_declaring(h: DefaultCallHandler, interp: Interpreter, e: JObject) -> str:
    """``getDeclaringClass()``: the class, or its superclass for a constant with a body."""
    sup = h._info(interp.heap, e.cls)[0]
    return e.cls if sup == "java/lang/Enum" else sup  # type: ignore[return-value]


@_model("java/lang/Enum", "getDeclaringClass", "()Ljava/lang/Class;")
def _enum_get_declaring(h, interp, recv, args):
    return interp.heap.class_value(_enum_declaring(h, interp, recv))


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


# -- more of java.lang: String constructors and methods, Locale.ROOT, Character.isWhitespace, Class ---------------
def _new_string(h: DefaultCallHandler, interp: Interpreter, desc: str, args: list[Value]) -> str:
    """``new String(...)``: its text (a new object in Java; identity of equal strings is not modelled anyway)."""
    if desc == "()V":
        return ""
    if desc in ("(Ljava/lang/String;)V", "(Ljava/lang/StringBuilder;)V", "(Ljava/lang/StringBuffer;)V"):
        return _char_seq(h, interp, args[0])
    if desc in ("([C)V", "([CII)V"):
        arr = args[0]
        if arr is None:
            interp.throw(NPE)
        items = arr.items  # type: ignore[union-attr]
        off, count = (args[1], args[2]) if len(args) == 3 else (0, len(items))
        if off < 0 or count < 0 or off > len(items) - count:  # type: ignore[operator]
            _sioobe(interp)
        return "".join(map(chr, items[off:off + count]))  # type: ignore[operator]
    if desc == "([B)V":
        arr = args[0]
        if arr is None:
            interp.throw(NPE)
        if any(b < 0 for b in arr.items):  # type: ignore[union-attr]
            raise Unsupported("new String(byte[]) of non-ASCII bytes (the default charset is the platform's)")
        return "".join(map(chr, arr.items))  # type: ignore[union-attr]
    raise Unsupported(f"new String{desc}")


_JAVA_WHITESPACE = frozenset("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                             "\u2008\u2009\u200a\u2028\u2029\u205f\u3000")
"""``Character.isWhitespace``: space, line and paragraph separators except the no-break ones (U+00A0, U+2007,
U+202F), and the ASCII controls 9-13 and 28-31 (unchanged in Unicode for decades, so exact for every char)."""


@_model("java/lang/Character", "isWhitespace", "(C)Z", "(I)Z")
def _char_is_whitespace(h, interp, recv, args):
    c = args[0]
    return int(0 <= c < 0x10000 and chr(c) in _JAVA_WHITESPACE)


@_model(STRING, "isBlank", "()Z")
def _s_is_blank(h, interp, s, args):
    return int(all(c in _JAVA_WHITESPACE for c in s))  # a surrogate is never whitespace


def _strip_left(s: str) -> int:
    i = 0
    while i < len(s) and s[i] in _JAVA_WHITESPACE:
        i += 1
    return i


def _strip_right(s: str, i: int) -> int:
    j = len(s)
    while j > i and s[j - 1] in _JAVA_WHITESPACE:
        j -= 1
    return j


MODELS[(STRING, "strip", "()Ljava/lang/String;")] = \
    lambda h, i, s, a: s[_strip_left(s):_strip_right(s, _strip_left(s))]
MODELS[(STRING, "stripLeading", "()Ljava/lang/String;")] = lambda h, i, s, a: s[_strip_left(s):]
MODELS[(STRING, "stripTrailing", "()Ljava/lang/String;")] = lambda h, i, s, a: s[:_strip_right(s, 0)]


@_model(STRING, "subSequence", "(II)Ljava/lang/CharSequence;")
def _s_sub_sequence(h, interp, s, args):
    return _s_substring(h, interp, s, args)


@_model(STRING, "compareTo", "(Ljava/lang/Object;)I")  # the bridge: checkcast String first
def _s_compare_to_object(h, interp, s, args):
    if args[0] is not None and type(args[0]) is not str:
        interp.throw("java/lang/ClassCastException")
    return _s_compare_to(h, interp, s, args)


@_model("java/lang/Enum", "compareTo", "(Ljava/lang/Object;)I")
def _enum_compare_object(h, interp, recv, args):
    if args[0] is not None and not interp.heap.is_assignable(runtime_class(args[0]), "java/lang/Enum"):
        interp.throw("java/lang/ClassCastException")
    return _enum_compare(h, interp, recv, args)


@_model(STRING, "getBytes", "()[B")
def _s_get_bytes(h, interp, s, args):
    _ascii_only(s, "getBytes() (the default charset is the platform's)")
    return JArray("[B", [ord(c) for c in s])


@_model(STRING, "join", "(Ljava/lang/CharSequence;[Ljava/lang/CharSequence;)Ljava/lang/String;")
def _s_join(h, interp, recv, args):
    delim = h.to_java_string(interp, _non_null(interp, args[0]), "Ljava/lang/Object;")
    elems = _non_null(interp, args[1])
    items = elems.items  # type: ignore[union-attr]
    return delim.join(h.to_java_string(interp, e, "Ljava/lang/Object;") for e in items)


def _non_null(interp: Interpreter, v: Value) -> Value:
    if v is None:
        interp.throw(NPE)
    return v


_REGEX_META = ".$|()[{^?*+\\"


def _simple_regex(regex: str) -> str | None:
    """A Python pattern that matches exactly what Java's ``regex`` matches, for a small sublanguage that cannot
    match the empty string: atoms (a literal char other than a metacharacter, ``\\`` + a non-alphanumeric ASCII
    char, or a class ``[...]`` of such literals and ranges, not negated) each optionally followed by ``+``; its
    chars are all below the surrogates. None for anything else."""
    out = []
    i, n = 0, len(regex)
    while i < n:
        c = regex[i]
        if c == "[":
            j = regex.find("]", i + 1)
            cls = _simple_class(regex[i + 1:j]) if j > i + 1 else None
            if cls is None:
                return None
            out.append(cls)
            i = j + 1
        elif c == "\\":
            if i + 1 >= n or regex[i + 1].isalnum() or not regex[i + 1].isascii():
                return None
            out.append("\\" + regex[i + 1])
            i += 2
        elif c in _REGEX_META or ord(c) >= 0xD800:
            return None
        else:
            out.append("\\" + c if not c.isalnum() else c)
            i += 1
        if i < n and regex[i] == "+":
            out.append("+")
            i += 1
    return "".join(out) if out else None


def _simple_class(body: str) -> str | None:
    """A Python class for the body of a Java class ``[...]`` made of printable ASCII literals (no ``^`` first, no
    ``[``, ``]``, ``\\``, ``&`` or ``-`` of its own) and ranges ``x-y`` of letters or digits, or None."""
    if not body or body[0] == "^" or not body.isascii() or any(ch in "[]\\&" or ch < " " for ch in body):
        return None
    parts, k = [], 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            lo, hi = body[k], body[k + 2]
            if not (lo.isalnum() and hi.isalnum() and lo <= hi):
                return None
            parts.append(f"{lo}-{hi}")
            k += 3
        elif body[k] == "-":
            return None
        else:
            parts.append(body[k] if body[k].isalnum() else "\\" + body[k])
            k += 1
    return "[" + "".join(parts) + "]"


@_model(STRING, "split", "(Ljava/lang/String;)[Ljava/lang/String;")
def _s_split(h, interp, s, args):
    """``split(regex)`` (limit 0): text between matches, a leading empty part kept, trailing empty parts
    dropped, the string itself if nothing matches. Only regexes of :func:`_simple_regex`'s sublanguage."""
    import re

    regex = _str_arg(interp, args[0])
    pattern = _simple_regex(regex)
    if pattern is None:
        raise Unsupported(f"split by regex {regex!r} (only simple character-class regexes are modelled)")
    parts, index = [], 0
    for m in re.finditer(pattern, s):
        parts.append(s[index:m.start()])
        index = m.end()
    if index == 0 and not parts:
        return JArray("[Ljava/lang/String;", [s])
    parts.append(s[index:])
    while parts and parts[-1] == "":
        parts.pop()
    return JArray("[Ljava/lang/String;", parts)


_LOCALE_ROOT = FieldRef("java/util/Locale", "ROOT", "Ljava/util/Locale;")


def _root_locale_case(upper: bool) -> Model:
    def conv(h, interp, s, args):
        loc = args[0]
        if loc is None:
            interp.throw(NPE)
        if type(loc) is not JObject or loc.native.get("locale") != "root":
            raise Unsupported("case conversion in a locale other than Locale.ROOT")
        _ascii_only(s, "toUpperCase" if upper else "toLowerCase")
        return s.upper() if upper else s.lower()
    return conv


MODELS[(STRING, "toUpperCase", "(Ljava/util/Locale;)Ljava/lang/String;")] = _root_locale_case(True)
MODELS[(STRING, "toLowerCase", "(Ljava/util/Locale;)Ljava/lang/String;")] = _root_locale_case(False)


def _to_radix(v: int, radix: int) -> str:
    """``Integer.toString(i, radix)`` / ``Long.toString``: radix outside 2..36 means 10; lower-case digits."""
    if not 2 <= radix <= 36:
        radix = 10
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    n, out = abs(v), []
    while True:
        n, r = divmod(n, radix)
        out.append(digits[r])
        if n == 0:
            break
    return ("-" if v < 0 else "") + "".join(reversed(out))


MODELS[("java/lang/Integer", "toString", "(II)Ljava/lang/String;")] = lambda h, i, r, a: _to_radix(a[0], a[1])
MODELS[("java/lang/Long", "toString", "(JI)Ljava/lang/String;")] = lambda h, i, r, a: _to_radix(a[0], a[1])


def _parse_floating(prim: str) -> Model:
    """``Double.parseDouble`` / ``Float.parseFloat`` for decimal text (surrounding chars <= ' ' trimmed, a sign,
    digits with an optional point, an optional exponent, an optional f/F/d/D suffix; NaN, Infinity): the
    correctly rounded value, as the JDK's; other text that Java rejects throws NumberFormatException; hexadecimal
    text is not modelled."""
    import re

    number = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?\Z")
    hexadecimal = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?\d+[fFdD]?\Z")

    def parse(h, interp, recv, args):
        s = args[0]
        if s is None:
            interp.throw(NPE)
        t = _str_arg(interp, s).strip("".join(map(chr, range(33))))
        if t in ("NaN", "+NaN", "-NaN"):
            return math.nan
        if t in ("Infinity", "+Infinity", "-Infinity"):
            return -math.inf if t[0] == "-" else math.inf
        if not t.isascii() or not number.match(t):
            if hexadecimal.match(t):
                raise Unsupported("parsing hexadecimal floating-point text")
            interp.throw("java/lang/NumberFormatException")
        body = t.rstrip("fFdD")
        # float(): correctly rounded to double; a float is rounded once more from the exact decimal, which
        # Python's float32 path does not offer, so only texts whose double rounds to float exactly are safe
        v = float(body)
        if prim == "D":
            return v
        f = S.to_f32(v)
        if f != v and not _decimal_rounds_like(body, f):
            raise Unsupported("Float.parseFloat of a text whose double rounding might differ")
        return f
    return parse


def _decimal_rounds_like(text: str, f: float) -> bool:
    """Whether the exact decimal ``text`` lies strictly inside the rounding interval of float ``f`` (then
    rounding it directly to float gives ``f``, whatever double rounding did)."""
    from fractions import Fraction

    if math.isinf(f):
        return False
    exact = Fraction(text)
    bits = S.float_to_raw_int_bits(f) & 0x7FFFFFFF
    lo = Fraction(S.int_bits_to_float(bits - 1)) if bits else -Fraction(S.int_bits_to_float(1))
    hi = Fraction(2 ** 128) if bits + 1 == 0x7F800000 else Fraction(S.int_bits_to_float(bits + 1))
    mid_lo, mid_hi = (Fraction(abs(f)) + lo) / 2, (Fraction(abs(f)) + hi) / 2
    return mid_lo < abs(exact) < mid_hi


MODELS[("java/lang/Double", "parseDouble", "(Ljava/lang/String;)D")] = _parse_floating("D")
MODELS[("java/lang/Float", "parseFloat", "(Ljava/lang/String;)F")] = _parse_floating("F")


def _arrays_equals(h, interp, recv, args):
    a, b = args
    if a is b:
        return 1
    if a is None or b is None:
        return 0
    if len(a.items) != len(b.items):
        return 0
    if a.desc[1] in "FD":  # Float/Double.equals per element: by bits, NaN equal to NaN
        return int(all(_prim_eq_bits(a.desc[1], x, y) for x, y in zip(a.items, b.items)))
    return int(a.items == b.items)


for _d in ("I", "J", "S", "B", "C", "Z", "F", "D"):
    MODELS[("java/util/Arrays", "equals", f"([{_d}[{_d})Z")] = _arrays_equals


def _class_file_of(h: DefaultCallHandler, recv: Value) -> ClassFile:
    cf = h.program.get(recv.name) if type(recv) is ClassValue else None  # type: ignore[union-attr]
    if cf is None:
        raise Unsupported(f"reflection on library class {getattr(recv, 'name', recv)}")
    return cf


@_model("java/lang/Class", "getInterfaces", "()[Ljava/lang/Class;")
def _class_interfaces(h, interp, recv, args):
    cf = _class_file_of(h, recv)
    return JArray("[Ljava/lang/Class;", [interp.heap.class_value(i) for i in cf.interfaces])


def _permitted(cf: ClassFile) -> list[str] | None:
    attr = attribute_named(cf.attributes, "PermittedSubclasses")
    if attr is None:
        return None
    n = int.from_bytes(attr.data[:2], "big")
    return [cf.pool.class_name(int.from_bytes(attr.data[2 + 2 * k:4 + 2 * k], "big")) for k in range(n)]


@_model("java/lang/Class", "isSealed", "()Z")
def _class_is_sealed(h, interp, recv, args):
    return int(_permitted(_class_file_of(h, recv)) is not None)


@_model("java/lang/Class", "getPermittedSubclasses", "()[Ljava/lang/Class;")
def _class_permitted(h, interp, recv, args):
    names = _permitted(_class_file_of(h, recv))
    if names is None:
        return None
    if any(h.program.get(n) is None for n in names):  # the JDK drops those it cannot load as subclasses
        raise Unsupported("permitted subclasses outside the program")
    return JArray("[Ljava/lang/Class;", [interp.heap.class_value(n) for n in names])


# -- java.util: lists, a minimal HashSet, iterators, comparators, sorting, streams --------------------------------
# A modelled collection is a JObject of the JDK's concrete class with native state: "list" (a Python list;
# for Arrays.asList the backing JArray's own item list, so writes go through both ways) and "mod" (modCount, for
# ConcurrentModificationException). Models apply to exactly these classes: a program subclass could override what
# the JDK's code calls internally (iterator(), get(), ...), so a subclass receiver is Unsupported.
_LIST_KINDS = {
    # class: (iterator class, kind); growable: ArrayList/LinkedList; fixed: Arrays.asList; immutable: List.of
    "java/util/ArrayList": ("java/util/ArrayList$Itr", "growable"),
    "java/util/LinkedList": ("java/util/LinkedList$ListItr", "growable"),
    "java/util/Arrays$ArrayList": ("java/util/Arrays$ArrayItr", "fixed"),
    "java/util/ImmutableCollections$List12": ("java/util/ImmutableCollections$ListItr", "immutable"),
    "java/util/ImmutableCollections$ListN": ("java/util/ImmutableCollections$ListItr", "immutable"),
}
_UOE = "java/lang/UnsupportedOperationException"
_CME = "java/util/ConcurrentModificationException"
_OBJ = "Ljava/lang/Object;"


def _fn_object(h: DefaultCallHandler, interp: Interpreter, iface: str, sam: str, desc: str,
               fn: Callable[[DefaultCallHandler, Interpreter, list], Value], cls: str | None = None) -> JObject:
    """A functional object a library method returns (``Comparator.comparingInt``, ``Function.andThen`` ...):
    calling ``iface.sam desc`` on it runs ``fn(handler, interp, args)``. Its class is made up like a lambda's
    (``iface$$Lambda``) unless the JDK's is given."""
    heap = interp.heap
    if cls is None:
        cls = iface + "$$Lambda"
        known = h._lambda_classes.setdefault(id(heap.hierarchy), (heap.hierarchy, set()))[1]
        if cls not in known:
            heap.hierarchy.add_info(ClassInfo(cls, OBJECT, (iface,), False))
            known.add(cls)
    return JObject(cls, {"fn": (iface, sam, desc, fn)})


def _call(h: DefaultCallHandler, interp: Interpreter, obj: Value, owner: str, name: str, desc: str,
          args: list[Value]) -> Value:
    """``obj.name(args)`` by virtual dispatch (NPE on null), as JDK code calling an interface method does."""
    return h.call_virtual(interp, MethodRef(owner, name, desc, True), obj, args)


def _java_equals(h: DefaultCallHandler, interp: Interpreter, a: Value, b: Value) -> bool:
    """``a.equals(b)`` for a non-null ``a``."""
    return bool(h.call_virtual(interp, _EQUALS, a, [b]))


def _objects_eq(h: DefaultCallHandler, interp: Interpreter, a: Value, b: Value) -> bool:
    """``Objects.equals(a, b)``: identity first (two equal strings are equal either way: String.equals has no
    effects), then ``a.equals(b)``."""
    if type(a) is str and type(b) is str:
        return a == b
    if a is b:
        return True
    return a is not None and _java_equals(h, interp, a, b)


def _hash_or_zero(h: DefaultCallHandler, interp: Interpreter, e: Value) -> int:
    return 0 if e is None else h.call_virtual(interp, _HASH_CODE, e, [])  # type: ignore[return-value]


def _jlist(interp: Interpreter, recv: Value, cls: str) -> list:
    if type(recv) is not JObject or recv.cls != cls:  # type: ignore[union-attr]
        raise Unsupported(f"a subclass of {cls}")
    return recv.native["list"]  # type: ignore[union-attr]


def _is_modelled_collection(v: Value) -> bool:
    return type(v) is JObject and (v.cls in _LIST_KINDS or v.cls == _HASH_SET)  # type: ignore[union-attr]


def _to_array(interp: Interpreter, c: Value) -> list:
    """``c.toArray()`` of a modelled collection (a snapshot); NPE on null; others are not modelled."""
    if c is None:
        interp.throw(NPE)
    if not _is_modelled_collection(c):
        raise Unsupported(f"toArray of a {runtime_class(c)}")
    if c.cls == _HASH_SET:  # type: ignore[union-attr]
        return list(_hset(interp, c))  # in hash-table order: known for at most one element only
    return list(c.native["list"])  # type: ignore[union-attr]


def _check_index(interp: Interpreter, i: int, n: int, exc: str) -> None:
    if not 0 <= i < n:
        interp.throw(exc)  # the JDK's messages differ by class; the model leaves them unknown


def _register_list(cls: str, itr_cls: str, kind: str) -> None:
    growable, fixed = kind == "growable", kind == "fixed"
    immutable = kind == "immutable"
    # what an out-of-range index throws: ArrayList/LinkedList/List12 check the index, ListN and Arrays.asList
    # index their array
    bad_index = "java/lang/ArrayIndexOutOfBoundsException" if cls.endswith(("ListN", "Arrays$ArrayList")) \
        else "java/lang/IndexOutOfBoundsException"

    def reg(name: str, desc: str, fn: Model) -> None:
        MODELS[(cls, name, desc)] = fn

    def bump(recv: JObject) -> None:
        recv.native["mod"] += 1

    def uoe(h, interp, recv, args):
        _jlist(interp, recv, cls)
        interp.throw(_UOE, None)

    reg("size", "()I", lambda h, i, r, a: len(_jlist(i, r, cls)))
    reg("isEmpty", "()Z", lambda h, i, r, a: int(not _jlist(i, r, cls)))

    def get(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        _check_index(interp, args[0], len(items), bad_index)
        return items[args[0]]
    reg("get", "(I)Ljava/lang/Object;", get)

    def set_(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        if immutable:
            interp.throw(_UOE, None)
        i, v = args
        _check_index(interp, i, len(items), bad_index)
        if fixed:
            comp = recv.native["array"].desc[1:]
            if v is not None and not interp.heap.is_assignable(runtime_class(v), _class_of(comp)):
                interp.throw("java/lang/ArrayStoreException")
        old = items[i]
        items[i] = v
        return old
    reg("set", "(ILjava/lang/Object;)Ljava/lang/Object;", set_)

    def index_of(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        o = args[0]
        if o is None:
            if immutable:
                interp.throw(NPE)
            return next((k for k, e in enumerate(items) if e is None), -1)
        for k in range(len(items)):  # o.equals(element), in order; the list may change under the calls
            if k < len(items) and _java_equals(h, interp, o, items[k]):
                return k
        return -1
    reg("indexOf", "(Ljava/lang/Object;)I", index_of)
    reg("contains", "(Ljava/lang/Object;)Z", lambda h, i, r, a: int(index_of(h, i, r, a) >= 0))

    def iterator(h, interp, recv, args):
        _jlist(interp, recv, cls)
        return JObject(itr_cls, {"itr": [recv, 0, recv.native.get("mod", 0), -1]})
    reg("iterator", "()Ljava/util/Iterator;", iterator)

    def to_string(h, interp, recv, args):  # AbstractCollection.toString, through the iterator
        _jlist(interp, recv, cls)
        parts = ["(this Collection)" if e is recv else h.to_java_string(interp, e, _OBJ)
                 for e in _iterate(h, interp, recv)]
        return "[" + ", ".join(parts) + "]"
    reg("toString", "()Ljava/lang/String;", to_string)

    def hash_code(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        acc = 1
        if cls == "java/util/ArrayList":  # by index, then a modCount check
            expected = recv.native["mod"]
            for k in range(len(items)):
                if k >= len(items):
                    raise Unsupported("hashCode of a list that shrank")
                e = items[k]
                acc = S.wrap_i(31 * acc + _hash_or_zero(h, interp, e))
            if recv.native["mod"] != expected:
                interp.throw(_CME, None)
            return acc
        for e in _iterate(h, interp, recv):
            acc = S.wrap_i(31 * acc + _hash_or_zero(h, interp, e))
        return acc
    reg("hashCode", "()I", hash_code)

    def equals(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        o = args[0]
        if o is recv:
            return 1
        if o is None or not interp.heap.is_assignable(runtime_class(o), "java/util/List"):
            return 0
        if not (type(o) is JObject and o.cls in _LIST_KINDS):
            raise Unsupported(f"equals with a {runtime_class(o)}")
        other = o.native["list"]
        if cls == "java/util/ArrayList" and o.cls == cls and len(other) != len(items):
            return 0  # equalsArrayList compares sizes first
        n = len(items)
        for k in range(n):
            if k >= len(other):
                return 0
            a, b = items[k], other[k]
            if cls == "java/util/ArrayList":
                same = _objects_eq(h, interp, a, b)
            elif immutable:
                same = _java_equals(h, interp, a, b)
            else:
                same = b is None if a is None else _java_equals(h, interp, a, b)
            if not same:
                return 0
        return int(len(other) == n)
    reg("equals", "(Ljava/lang/Object;)Z", equals)

    def for_each(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        action = _non_null(interp, args[0])
        if cls != "java/util/ArrayList":  # Iterable.forEach (Arrays.asList's loops over its array: the same)
            for e in _iterate(h, interp, recv):
                _call(h, interp, action, "java/util/function/Consumer", "accept", "(Ljava/lang/Object;)V", [e])
            return None
        expected = recv.native["mod"]  # ArrayList: by index while modCount is unchanged
        n = len(items)
        k = 0
        while k < n and recv.native.get("mod", 0) == expected:
            if k >= len(items):
                raise Unsupported("forEach over a list that shrank")
            _call(h, interp, action, "java/util/function/Consumer", "accept", "(Ljava/lang/Object;)V", [items[k]])
            k += 1
        if recv.native.get("mod", 0) != expected:
            interp.throw(_CME, None)
        return None
    reg("forEach", "(Ljava/util/function/Consumer;)V", for_each)

    def sort(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        if immutable:
            interp.throw(_UOE, None)
        c = args[0]
        if cls == "java/util/LinkedList":  # List.sort: sort a copy, write it back through a list iterator
            copy = list(items)
            _jdk_sort(h, interp, copy, c)
            if len(copy) != len(items):
                raise Unsupported("a list whose size changed while being sorted")
            items[:] = copy
            return None
        expected = recv.native.get("mod", 0)
        _jdk_sort(h, interp, items, c)  # in place, as Arrays.sort on the backing array
        if growable:
            if recv.native["mod"] != expected:
                interp.throw(_CME, None)
            bump(recv)
        return None
    reg("sort", "(Ljava/util/Comparator;)V", sort)
    reg("stream", "()Ljava/util/stream/Stream;",
        lambda h, i, r, a: _new_stream(i, "ref", r, _jlist(i, r, cls), sized=True))

    if not growable:
        for name, desc in (("add", "(Ljava/lang/Object;)Z"), ("add", "(ILjava/lang/Object;)V"),
                           ("remove", "(I)Ljava/lang/Object;"), ("clear", "()V"),
                           ("addAll", "(Ljava/util/Collection;)Z")):
            reg(name, desc, uoe)
        if immutable:
            reg("remove", "(Ljava/lang/Object;)Z", uoe)
            reg("removeIf", "(Ljava/util/function/Predicate;)Z", uoe)
        else:  # AbstractCollection.remove / Collection.removeIf: search, and fail only on a match
            def remove_fixed(h, interp, recv, args):
                items = _jlist(interp, recv, cls)
                o = args[0]
                for k in range(len(items)):
                    if (items[k] is None) if o is None else _java_equals(h, interp, o, items[k]):
                        interp.throw(_UOE, None)
                return 0
            reg("remove", "(Ljava/lang/Object;)Z", remove_fixed)

            def remove_if_fixed(h, interp, recv, args):
                items = _jlist(interp, recv, cls)
                p = _non_null(interp, args[0])
                for k in range(len(items)):
                    if _call(h, interp, p, "java/util/function/Predicate", "test", "(Ljava/lang/Object;)Z",
                             [items[k]]):
                        interp.throw(_UOE, None)
                return 0
            reg("removeIf", "(Ljava/util/function/Predicate;)Z", remove_if_fixed)
        return

    def add(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        bump(recv)
        items.append(args[0])
        if len(items) > MAX_ARRAY_ELEMENTS:
            raise Unsupported("list too long")
        return 1
    reg("add", "(Ljava/lang/Object;)Z", add)

    def add_at(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        i, v = args
        if not 0 <= i <= len(items):
            interp.throw("java/lang/IndexOutOfBoundsException")
        bump(recv)
        items.insert(i, v)
        return None
    reg("add", "(ILjava/lang/Object;)V", add_at)

    def remove_at(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        _check_index(interp, args[0], len(items), "java/lang/IndexOutOfBoundsException")
        bump(recv)
        return items.pop(args[0])
    reg("remove", "(I)Ljava/lang/Object;", remove_at)

    def remove(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        o = args[0]
        for k in range(len(items)):
            if k < len(items) and ((items[k] is None) if o is None else _java_equals(h, interp, o, items[k])):
                bump(recv)
                del items[k]
                return 1
        return 0
    reg("remove", "(Ljava/lang/Object;)Z", remove)

    def clear(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        bump(recv)
        items.clear()
        return None
    reg("clear", "()V", clear)

    def add_all(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        new = _to_array(interp, args[0])
        if cls == "java/util/LinkedList" and not new:
            return 0  # LinkedList.addAll: nothing to add leaves modCount alone
        bump(recv)
        items.extend(new)
        return int(bool(new))
    reg("addAll", "(Ljava/util/Collection;)Z", add_all)

    def remove_if(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        p = _non_null(interp, args[0])
        expected = recv.native["mod"]
        if cls == "java/util/LinkedList":  # Collection.removeIf: through the iterator, removing at once
            k, removed = 0, False
            while k < len(items):
                if recv.native["mod"] != expected:
                    interp.throw(_CME, None)
                if _call(h, interp, p, "java/util/function/Predicate", "test", "(Ljava/lang/Object;)Z", [items[k]]):
                    del items[k]
                    bump(recv)
                    expected = recv.native["mod"]
                    removed = True
                else:
                    k += 1
            return int(removed)
        n = len(items)  # ArrayList: test every element first (in order), then remove the marked ones
        doomed = []
        for k in range(n):
            if k >= len(items):
                raise Unsupported("removeIf over a list that shrank")
            if _call(h, interp, p, "java/util/function/Predicate", "test", "(Ljava/lang/Object;)Z", [items[k]]):
                doomed.append(k)
        if recv.native["mod"] != expected:
            interp.throw(_CME, None)
        if not doomed:
            return 0
        bump(recv)
        gone = set(doomed)
        items[:n] = [e for k, e in enumerate(items[:n]) if k not in gone]
        return 1
    reg("removeIf", "(Ljava/util/function/Predicate;)Z", remove_if)

    def init(h, interp, recv, args):
        recv.native.setdefault("list", [])
        recv.native.setdefault("mod", 0)
        return None
    reg("<init>", "()V", init)

    def init_collection(h, interp, recv, args):
        recv.native["list"] = _to_array(interp, args[0])
        recv.native.setdefault("mod", 0)
        return None
    reg("<init>", "(Ljava/util/Collection;)V", init_collection)
    if cls == "java/util/ArrayList":
        def init_capacity(h, interp, recv, args):
            if args[0] < 0:
                interp.throw("java/lang/IllegalArgumentException", f"Illegal Capacity: {args[0]}")
            return init(h, interp, recv, [])
        reg("<init>", "(I)V", init_capacity)


def _iterate(h: DefaultCallHandler, interp: Interpreter, coll: JObject):
    """The elements of a modelled collection through its iterator's hasNext/next models, as JDK code that loops
    over ``this`` sees them (ConcurrentModificationException included)."""
    it = MODELS[(coll.cls, "iterator", "()Ljava/util/Iterator;")](h, interp, coll, [])
    has_next = MODELS[(it.cls, "hasNext", "()Z")]  # type: ignore[union-attr]
    next_ = MODELS[(it.cls, "next", "()Ljava/lang/Object;")]  # type: ignore[union-attr]
    while has_next(h, interp, it, []):
        yield next_(h, interp, it, [])


for _cls, (_itr, _kind) in _LIST_KINDS.items():
    _register_list(_cls, _itr, _kind)


def _register_iterator(itr_cls: str, hasnext_ne: bool, checked: bool, removable: bool) -> None:
    """An iterator over a modelled collection: native["itr"] = [collection, cursor, expected modCount, last]."""
    def elements(it: JObject) -> list:
        n = it.native["itr"][0].native
        return n["list"] if "list" in n else n["set"]

    def has_next(h, interp, recv, args):
        st = recv.native["itr"]
        n = len(elements(recv))
        return int(st[1] != n if hasnext_ne else st[1] < n)

    def next_(h, interp, recv, args):
        st = recv.native["itr"]
        coll = st[0]
        if checked and coll.native.get("mod", 0) != st[2]:
            interp.throw(_CME, None)
        items = elements(recv)
        if st[1] >= len(items):
            interp.throw("java/util/NoSuchElementException", None)
        st[3] = st[1]
        st[1] += 1
        return items[st[3]]

    def remove(h, interp, recv, args):
        st = recv.native["itr"]
        coll = st[0]
        if not removable:
            interp.throw(_UOE, "remove")
        if st[3] < 0:
            interp.throw("java/lang/IllegalStateException", None)
        if coll.native["mod"] != st[2]:
            interp.throw(_CME, None)
        del elements(recv)[st[3]]
        coll.native["mod"] += 1
        st[1], st[2], st[3] = st[3], coll.native["mod"], -1
        return None

    MODELS[(itr_cls, "hasNext", "()Z")] = has_next
    MODELS[(itr_cls, "next", "()Ljava/lang/Object;")] = next_
    MODELS[(itr_cls, "remove", "()V")] = remove


_register_iterator("java/util/ArrayList$Itr", True, True, True)
_register_iterator("java/util/LinkedList$ListItr", False, True, True)
_register_iterator("java/util/ImmutableCollections$ListItr", True, False, False)
_register_iterator("java/util/Arrays$ArrayItr", False, False, False)


# HashSet: only what does not depend on the hash table's layout (its iteration order): the empty set, adding to
# it, and a set of one element
_HASH_SET = "java/util/HashSet"


def _hset(interp: Interpreter, recv: Value, at_most_one: bool = True) -> list:
    if type(recv) is not JObject or recv.cls != _HASH_SET:  # type: ignore[union-attr]
        raise Unsupported(f"a subclass of {_HASH_SET}")
    items = recv.native["set"]  # type: ignore[union-attr]
    if at_most_one and len(items) > 1:
        raise Unsupported("a HashSet of more than one element (its hash-table order is not modelled)")
    return items


@_model(_HASH_SET, "<init>", "()V")
def _hs_init(h, interp, recv, args):
    recv.native.setdefault("set", [])
    recv.native.setdefault("mod", 0)
    return None


@_model(_HASH_SET, "add", "(Ljava/lang/Object;)Z")
def _hs_add(h, interp, recv, args):
    items = _hset(interp, recv)
    if items:
        raise Unsupported("adding to a non-empty HashSet (its equals/hashCode calls follow the hash table)")
    e = args[0]
    if e is not None:
        h.call_virtual(interp, _HASH_CODE, e, [])  # HashMap.hash: one hashCode call
    items.append(e)
    recv.native["mod"] += 1
    return 1


MODELS[(_HASH_SET, "size", "()I")] = lambda h, i, r, a: len(_hset(i, r, False))
MODELS[(_HASH_SET, "isEmpty", "()Z")] = lambda h, i, r, a: int(not _hset(i, r, False))
def _hs_iterator(h, interp, recv, args):
    _hset(interp, recv)
    return JObject("java/util/HashMap$KeyIterator", {"itr": [recv, 0, recv.native["mod"], -1]})


MODELS[(_HASH_SET, "iterator", "()Ljava/util/Iterator;")] = _hs_iterator
MODELS[(_HASH_SET, "toString", "()Ljava/lang/String;")] = lambda h, i, r, a: "[" + ", ".join(
    "(this Collection)" if e is r else h.to_java_string(i, e, _OBJ) for e in _hset(i, r)) + "]"
_register_iterator("java/util/HashMap$KeyIterator", False, True, False)


# List.of, Arrays.asList, Collections.sort
def _immutable_list(interp: Interpreter, items: list) -> JObject:
    for e in items:
        if e is None:
            interp.throw(NPE)
    if not items:  # List.of() is one shared instance
        key = ("List.of",)
        if key not in interp.heap.boxes:
            interp.heap.boxes[key] = JObject("java/util/ImmutableCollections$ListN", {"list": []})
        return interp.heap.boxes[key]  # type: ignore[return-value]
    cls = "java/util/ImmutableCollections$List12" if len(items) <= 2 else "java/util/ImmutableCollections$ListN"
    return JObject(cls, {"list": list(items)})


for _n in range(0, 11):
    MODELS[("java/util/List", "of", "(" + _OBJ * _n + ")Ljava/util/List;")] = \
        lambda h, i, r, a: _immutable_list(i, list(a))


@_model("java/util/List", "of", "([Ljava/lang/Object;)Ljava/util/List;")
def _list_of_array(h, interp, recv, args):
    return _immutable_list(interp, list(_non_null(interp, args[0]).items))  # type: ignore[union-attr]


@_model("java/util/Arrays", "asList", "([Ljava/lang/Object;)Ljava/util/List;")
def _arrays_as_list(h, interp, recv, args):
    arr = _non_null(interp, args[0])
    return JObject("java/util/Arrays$ArrayList", {"list": arr.items, "array": arr})  # type: ignore[union-attr]


@_model("java/util/Collections", "sort", "(Ljava/util/List;)V")
def _collections_sort(h, interp, recv, args):
    return _call(h, interp, args[0], "java/util/List", "sort", "(Ljava/util/Comparator;)V", [None])


@_model("java/util/Collections", "sort", "(Ljava/util/List;Ljava/util/Comparator;)V")
def _collections_sort_with(h, interp, recv, args):
    return _call(h, interp, args[0], "java/util/List", "sort", "(Ljava/util/Comparator;)V", [args[1]])


_MIN_MERGE = 32


def _jdk_sort(h: DefaultCallHandler, interp: Interpreter, a: list, c: Value) -> None:
    """``Arrays.sort(a, c)`` (``c`` None: natural order) in place, with the JDK's exact sequence of comparisons:
    below 32 elements TimSort is a run scan then a binary insertion sort; longer arrays are not modelled."""
    n = len(a)
    if n < 2:
        return
    if n >= _MIN_MERGE:
        raise Unsupported(f"sorting {n} elements (TimSort's merges are not modelled)")
    if c is None:
        def cmp(x: Value, y: Value) -> int:  # ComparableTimSort: ((Comparable) x).compareTo(y)
            if x is not None and not interp.heap.is_assignable(runtime_class(x), "java/lang/Comparable"):
                interp.throw("java/lang/ClassCastException")
            return _compare_to(h, interp, x, y)
    else:
        def cmp(x: Value, y: Value) -> int:
            return _call(h, interp, c, "java/util/Comparator", "compare", "(Ljava/lang/Object;Ljava/lang/Object;)I",
                         [x, y])  # type: ignore[return-value]
    # countRunAndMakeAscending
    run = 2
    if cmp(a[1], a[0]) < 0:
        while run < n and cmp(a[run], a[run - 1]) < 0:
            run += 1
        a[:run] = a[:run][::-1]
    else:
        while run < n and cmp(a[run], a[run - 1]) >= 0:
            run += 1
    # binarySort from the end of the run
    for start in range(run, n):
        pivot = a[start]
        left, right = 0, start
        while left < right:
            mid = (left + right) >> 1
            if cmp(pivot, a[mid]) < 0:
                right = mid
            else:
                left = mid + 1
        a[left + 1:start + 1] = a[left:start]
        a[left] = pivot


# Comparators and default methods of functional interfaces
_COMPARE = "(Ljava/lang/Object;Ljava/lang/Object;)I"


@_model("java/util/Comparator", "comparingInt", "(Ljava/util/function/ToIntFunction;)Ljava/util/Comparator;")
def _comparing_int(h, interp, recv, args):
    key = _non_null(interp, args[0])

    def compare(h2, interp2, a):
        x = _call(h2, interp2, key, "java/util/function/ToIntFunction", "applyAsInt", "(Ljava/lang/Object;)I", [a[0]])
        y = _call(h2, interp2, key, "java/util/function/ToIntFunction", "applyAsInt", "(Ljava/lang/Object;)I", [a[1]])
        return (x > y) - (x < y)  # type: ignore[operator]
    return _fn_object(h, interp, "java/util/Comparator", "compare", _COMPARE, compare)


def _natural_compare(h2: DefaultCallHandler, interp2: Interpreter, x: Value, y: Value) -> int:
    """``x.compareTo(y)`` as a comparator of Comparables does it: its bridge casts both arguments first."""
    for v in (x, y):
        if v is not None and not interp2.heap.is_assignable(runtime_class(v), "java/lang/Comparable"):
            interp2.throw("java/lang/ClassCastException")
    return _compare_to(h2, interp2, x, y)


def _compare_to(h: DefaultCallHandler, interp: Interpreter, x: Value, y: Value) -> int:
    """``((Comparable) x).compareTo(y)`` after the cast: NPE on a null ``x``."""
    r = _call(h, interp, x, "java/lang/Comparable", "compareTo", "(Ljava/lang/Object;)I", [y])
    return r  # type: ignore[return-value]


@_model("java/util/Comparator", "reverseOrder", "()Ljava/util/Comparator;")
@_model("java/util/Collections", "reverseOrder", "()Ljava/util/Comparator;")
def _reverse_order(h, interp, recv, args):
    key = ("reverseOrder",)
    found = interp.heap.boxes.get(key)
    if found is None:  # Collections.ReverseComparator.REVERSE_ORDER: compare(a, b) is b.compareTo(a)
        found = interp.heap.boxes[key] = _fn_object(
            h, interp, "java/util/Comparator", "compare", _COMPARE,
            lambda h2, i2, a: _natural_compare(h2, i2, a[1], a[0]), "java/util/Collections$ReverseComparator")
    return found


@_model("java/util/Comparator", "naturalOrder", "()Ljava/util/Comparator;")
def _natural_order(h, interp, recv, args):
    key = ("naturalOrder",)
    found = interp.heap.boxes.get(key)
    if found is None:
        found = interp.heap.boxes[key] = _fn_object(
            h, interp, "java/util/Comparator", "compare", _COMPARE,
            lambda h2, i2, a: _natural_compare(h2, i2, a[0], a[1]), "java/util/Comparators$NaturalOrderComparator")
    return found


@_model("java/util/Comparator", "thenComparing", "(Ljava/util/Comparator;)Ljava/util/Comparator;")
def _then_comparing(h, interp, recv, args):
    first, other = recv, _non_null(interp, args[0])

    def compare(h2, interp2, a):
        res = _call(h2, interp2, first, "java/util/Comparator", "compare", _COMPARE, a)
        return res if res != 0 else _call(h2, interp2, other, "java/util/Comparator", "compare", _COMPARE, a)
    return _fn_object(h, interp, "java/util/Comparator", "compare", _COMPARE, compare)


@_model("java/util/Comparator", "reversed", "()Ljava/util/Comparator;")
def _reversed(h, interp, recv, args):
    if type(recv) is JObject and recv.cls == "java/util/Collections$ReverseComparator":
        return _natural_order(h, interp, None, [])  # ReverseComparator.reversed() is natural order
    raise Unsupported("Comparator.reversed of this comparator")


_FUNCTION = "java/util/function/Function"
_PREDICATE = "java/util/function/Predicate"
_APPLY = "(Ljava/lang/Object;)Ljava/lang/Object;"
_TEST = "(Ljava/lang/Object;)Z"


@_model(_FUNCTION, "andThen", "(Ljava/util/function/Function;)Ljava/util/function/Function;")
def _function_and_then(h, interp, recv, args):
    first, after = recv, _non_null(interp, args[0])
    return _fn_object(h, interp, _FUNCTION, "apply", _APPLY, lambda h2, i2, a: _call(
        h2, i2, after, _FUNCTION, "apply", _APPLY, [_call(h2, i2, first, _FUNCTION, "apply", _APPLY, a)]))


@_model(_FUNCTION, "compose", "(Ljava/util/function/Function;)Ljava/util/function/Function;")
def _function_compose(h, interp, recv, args):
    outer, before = recv, _non_null(interp, args[0])
    return _fn_object(h, interp, _FUNCTION, "apply", _APPLY, lambda h2, i2, a: _call(
        h2, i2, outer, _FUNCTION, "apply", _APPLY, [_call(h2, i2, before, _FUNCTION, "apply", _APPLY, a)]))


@_model(_FUNCTION, "identity", "()Ljava/util/function/Function;")
def _function_identity(h, interp, recv, args):
    key = ("Function.identity",)
    if key not in interp.heap.boxes:
        interp.heap.boxes[key] = _fn_object(h, interp, _FUNCTION, "apply", _APPLY, lambda h2, i2, a: a[0])
    return interp.heap.boxes[key]


@_model(_PREDICATE, "negate", "()Ljava/util/function/Predicate;")
def _predicate_negate(h, interp, recv, args):
    p = recv
    return _fn_object(h, interp, _PREDICATE, "test", _TEST,
                      lambda h2, i2, a: int(not _call(h2, i2, p, _PREDICATE, "test", _TEST, a)))


def _predicate_combine(is_and: bool) -> Model:
    def combine(h, interp, recv, args):
        p, q = recv, _non_null(interp, args[0])

        def test(h2, i2, a):
            r = _call(h2, i2, p, _PREDICATE, "test", _TEST, a)
            if bool(r) is not is_and:  # short-circuit: false && ..., true || ...
                return r
            return _call(h2, i2, q, _PREDICATE, "test", _TEST, a)
        return _fn_object(h, interp, _PREDICATE, "test", _TEST, test)
    return combine


MODELS[(_PREDICATE, "and", "(Ljava/util/function/Predicate;)Ljava/util/function/Predicate;")] = _predicate_combine(True)
MODELS[(_PREDICATE, "or", "(Ljava/util/function/Predicate;)Ljava/util/function/Predicate;")] = _predicate_combine(False)


# Streams: sequential pipelines, evaluated element by element through their stages at the terminal operation,
# as the JDK's are. native["stream"] = {"shape": "ref" | "int" | "long", "source": the collection object or
# None, "items": its list or a range, "sized", "stages": [(op, fn)], "used"}.
_STREAM_CLASSES = {"ref": ("java/util/stream/ReferencePipeline$Head", "java/util/stream/ReferencePipeline$StatelessOp"),
                   "int": ("java/util/stream/IntPipeline$Head", "java/util/stream/IntPipeline$StatelessOp"),
                   "long": ("java/util/stream/LongPipeline$Head", "java/util/stream/LongPipeline$StatelessOp")}


def _new_stream(interp: Interpreter, shape: str, source: Value, items, sized: bool) -> JObject:
    return JObject(_STREAM_CLASSES[shape][0], {"stream": {"shape": shape, "source": source, "items": items,
                                                          "sized": sized, "stages": [], "used": False}})


def _stream_state(interp: Interpreter, recv: Value) -> dict:
    st = recv.native.get("stream") if type(recv) is JObject else None  # type: ignore[union-attr]
    if st is None:
        raise Unsupported(f"a stream of class {runtime_class(recv)}")
    if st["used"]:
        interp.throw("java/lang/IllegalStateException", "stream has already been operated upon or closed")
    st["used"] = True
    return st


def _stage(shape_out: str, op: str, keeps_size: bool, fn_arg: bool = True) -> Model:
    """An intermediate operation: a new stage object; the receiver is linked (used) from now on."""
    def link(h, interp, recv, args):
        st = _stream_state(interp, recv)
        fn = _non_null(interp, args[0]) if fn_arg else None
        new = dict(st, shape=shape_out, stages=[*st["stages"], (op, fn)], used=False,
                   sized=st["sized"] and keeps_size)
        return JObject(_STREAM_CLASSES[shape_out][1], {"stream": new})
    return link


_STAGE_CALLS = {  # op -> (interface, method, descriptor) called per element
    "map.ref": ("java/util/function/Function", "apply", _APPLY),
    "filter.ref": (_PREDICATE, "test", _TEST),
    "map.int": ("java/util/function/IntUnaryOperator", "applyAsInt", "(I)I"),
    "filter.int": ("java/util/function/IntPredicate", "test", "(I)Z"),
    "map.long": ("java/util/function/LongUnaryOperator", "applyAsLong", "(J)J"),
    "filter.long": ("java/util/function/LongPredicate", "test", "(J)Z"),
}


def _run_stream(h: DefaultCallHandler, interp: Interpreter, st: dict, sink: Callable[[Value], None]) -> None:
    """Push each source element through the stages into ``sink``, in order."""
    stages = st["stages"]
    items = st["items"]
    source = st["source"]
    expected = source.native.get("mod") if type(source) is JObject else None
    n = len(items)
    for k in range(n):
        if k >= len(items):
            raise Unsupported("a stream source that shrank")
        v = items[k]
        keep = True
        for op, fn in stages:
            if op == "asLong":
                continue  # an int is a long already
            iface, name, desc = _STAGE_CALLS[op]
            r = _call(h, interp, fn, iface, name, desc, [v])
            if op.startswith("filter"):
                if not r:
                    keep = False
                    break
            else:
                v = r
        if keep:
            sink(v)
    if expected is not None and source.native.get("mod") != expected:  # ArrayListSpliterator checks at the end
        interp.throw(_CME, None)


for _shape, _desc_stream in (("ref", "Ljava/util/stream/Stream;"), ("int", "Ljava/util/stream/IntStream;"),
                             ("long", "Ljava/util/stream/LongStream;")):
    _owner = {"ref": "java/util/stream/Stream", "int": "java/util/stream/IntStream",
              "long": "java/util/stream/LongStream"}[_shape]
    _fn_desc = {"ref": ("Ljava/util/function/Function;", "Ljava/util/function/Predicate;"),
                "int": ("Ljava/util/function/IntUnaryOperator;", "Ljava/util/function/IntPredicate;"),
                "long": ("Ljava/util/function/LongUnaryOperator;", "Ljava/util/function/LongPredicate;")}[_shape]
    for _cls in _STREAM_CLASSES[_shape]:
        MODELS[(_cls, "map", f"({_fn_desc[0]}){_desc_stream}")] = _stage(_shape, f"map.{_shape}", True)
        MODELS[(_cls, "filter", f"({_fn_desc[1]}){_desc_stream}")] = _stage(_shape, f"filter.{_shape}", False)
for _cls in _STREAM_CLASSES["int"]:
    MODELS[(_cls, "asLongStream", "()Ljava/util/stream/LongStream;")] = _stage("long", "asLong", True, False)


def _stream_count(h, interp, recv, args):
    st = _stream_state(interp, recv)
    if st["sized"]:  # JDK 9+: a SIZED pipeline's count is its size; the stages do not run
        return len(st["items"])
    n = [0]
    _run_stream(h, interp, st, lambda v: n.__setitem__(0, n[0] + 1))
    return n[0]


def _stream_for_each(h, interp, recv, args):
    st = _stream_state(interp, recv)
    action = _non_null(interp, args[0])
    iface, desc = {"ref": ("java/util/function/Consumer", "(Ljava/lang/Object;)V"),
                   "int": ("java/util/function/IntConsumer", "(I)V"),
                   "long": ("java/util/function/LongConsumer", "(J)V")}[st["shape"]]
    _run_stream(h, interp, st, lambda v: _call(h, interp, action, iface, "accept", desc, [v]))
    return None


def _int_sum(h, interp, recv, args):
    st = _stream_state(interp, recv)
    total = [0]
    wrap = S.wrap_i if st["shape"] == "int" else S.wrap_l
    _run_stream(h, interp, st, lambda v: total.__setitem__(0, wrap(total[0] + v)))
    return total[0]


def _long_reduce(h, interp, recv, args):
    st = _stream_state(interp, recv)
    acc = [args[0]]
    op = _non_null(interp, args[1])
    _run_stream(h, interp, st, lambda v: acc.__setitem__(0, _call(
        h, interp, op, "java/util/function/LongBinaryOperator", "applyAsLong", "(JJ)J", [acc[0], v])))
    return acc[0]


def _stream_collect(h, interp, recv, args):
    st = _stream_state(interp, recv)
    coll = _non_null(interp, args[0])
    spec = coll.native.get("joining") if type(coll) is JObject else None  # type: ignore[union-attr]
    if spec is None:
        raise Unsupported(f"collect with a {runtime_class(coll)}")
    # the collector's supplier runs first: new StringJoiner(delimiter, prefix, suffix) checks and converts them
    delim, prefix, suffix = (h.to_java_string(interp, _non_null(interp, x), _OBJ) for x in spec)
    parts: list[str] = []

    def add(v: Value) -> None:  # StringJoiner::add(CharSequence): a checkcast, then String.valueOf
        if v is not None and not interp.heap.is_assignable(runtime_class(v), "java/lang/CharSequence"):
            interp.throw("java/lang/ClassCastException")
        parts.append(h.to_java_string(interp, v, _OBJ))
    _run_stream(h, interp, st, add)
    return prefix + delim.join(parts) + suffix


for _cls in _STREAM_CLASSES["ref"]:
    MODELS[(_cls, "count", "()J")] = _stream_count
    MODELS[(_cls, "forEach", "(Ljava/util/function/Consumer;)V")] = _stream_for_each
    MODELS[(_cls, "collect", "(Ljava/util/stream/Collector;)Ljava/lang/Object;")] = _stream_collect
for _cls in _STREAM_CLASSES["int"]:
    MODELS[(_cls, "sum", "()I")] = _int_sum
    MODELS[(_cls, "count", "()J")] = _stream_count
    MODELS[(_cls, "forEach", "(Ljava/util/function/IntConsumer;)V")] = _stream_for_each
for _cls in _STREAM_CLASSES["long"]:
    MODELS[(_cls, "sum", "()J")] = _int_sum
    MODELS[(_cls, "count", "()J")] = _stream_count
    MODELS[(_cls, "reduce", "(JLjava/util/function/LongBinaryOperator;)J")] = _long_reduce
    MODELS[(_cls, "forEach", "(Ljava/util/function/LongConsumer;)V")] = _stream_for_each


@_model("java/util/stream/Collectors", "joining",
        "(Ljava/lang/CharSequence;Ljava/lang/CharSequence;Ljava/lang/CharSequence;)Ljava/util/stream/Collector;")
def _collectors_joining(h, interp, recv, args):  # the arguments are only captured (checked when collecting)
    return JObject("java/util/stream/Collectors$CollectorImpl", {"joining": tuple(args)})


@_model("java/util/stream/Collectors", "joining", "(Ljava/lang/CharSequence;)Ljava/util/stream/Collector;")
def _collectors_joining_delim(h, interp, recv, args):
    return _collectors_joining(h, interp, recv, [args[0], "", ""])


def _int_range(closed: bool) -> Model:
    def make(h, interp, recv, args):
        lo, hi = args
        end = hi + 1 if closed else hi
        if end - lo > MAX_ARRAY_ELEMENTS:
            raise Unsupported("a stream range too long")
        return _new_stream(interp, "int", None, range(lo, max(lo, end)), sized=True)
    return make


MODELS[("java/util/stream/IntStream", "range", "(II)Ljava/util/stream/IntStream;")] = _int_range(False)
MODELS[("java/util/stream/IntStream", "rangeClosed", "(II)Ljava/util/stream/IntStream;")] = _int_range(True)


@_model(STRING, "lines", "()Ljava/util/stream/Stream;")
def _s_lines(h, interp, s, args):
    """``String.lines``: split at \\n, \\r and \\r\\n, no empty last line after a final terminator; a stream
    without a known size (its count runs the pipeline)."""
    lines, start, i, n = [], 0, 0, len(s)
    while i < n:
        c = s[i]
        if c == "\n" or c == "\r":
            lines.append(s[start:i])
            i += 2 if c == "\r" and i + 1 < n and s[i + 1] == "\n" else 1
            start = i
        else:
            i += 1
    if start < n:
        lines.append(s[start:])
    return _new_stream(interp, "ref", None, lines, sized=False)
