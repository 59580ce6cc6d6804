"""The default call handler: the program's own classes by lifting, the JDK by the models of :mod:`peggy_jvm.jdk`.

What this module owns
    :class:`DefaultCallHandler`, the :class:`~peggy_jvm.ir.interp.CallHandler` the tests, the PEG evaluator's
    checks and validation's counterexample screen use: methods of the program (a class-path directory or a
    mapping of parsed classes) interpreted by lifting them, virtual dispatch over the program's and the JDK's
    class hierarchy (superclasses first, then default methods), static initializers run once per heap (with
    ExceptionInInitializerError / NoClassDefFoundError), static fields, ``new`` of the library classes whose
    constructors are modelled, and ``invokedynamic`` (string concatenation, lambdas, records) handed to the area
    modules. Library methods go to :data:`~peggy_jvm.jdk.registry.MODELS`; a library method without a model is
    Unsupported, never guessed.

Inputs / outputs
    The program's classes (+ extra or replacing models) -> a handler; :meth:`DefaultCallHandler.make_heap` gives
    a Heap whose hierarchy knows the program's classes.

Invariants
    Importing this module registers every area module's models (the imports below), so the handler's table is
    complete whoever imports it first.
"""
from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Mapping, cast

from .. import semantics as S
from ..classfile.errors import ClassFileError, UnsupportedCodeError
from ..classfile.hierarchy import ClassHierarchy, ClassInfo
from ..classfile.model import Access, ClassFile, MethodInfo, attribute_named
from ..classfile.reader import read_class
from ..ir.interp import (NPE, BaseCallHandler, Heap, Interpreter, JArray, JavaThrow, JObject, Unsupported, Value,
                         default_value, narrow, runtime_class)
from ..ir.lift import lift_method
from ..ir.nodes import FieldRef, InvokeDynamic, InvokeKind, IRMethod, MethodRef
from . import arrays, builders, collections, streams, system, throwable
from .facts import OBJECT, OBJECT_TO_STRING, STRING, THROWABLE
from .floattext import double_to_string, float_to_string
from .functions import call_fn, call_lambda, make_lambda
from .numbers import box
from .records import record_method
from .registry import MODELS, Model
from .strings import _LOCALE_ROOT, _new_string, concat_indy

__all__ = ["DefaultCallHandler"]

AREAS = (arrays, builders, collections, streams, system, throwable)
"""The area modules no code here calls by name, imported for the models they register (the others come with
the names imported from them)."""


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
    """Interprets the program's own classes and runs the library models of :mod:`peggy_jvm.jdk` (module doc).

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
        self._hierarchy: ClassHierarchy | None = None  # shared by the heaps it makes (make_heap)

    def make_heap(self) -> Heap:
        """A heap whose hierarchy reads the program's directory (if it is one) and the JDK. The heaps of one
        handler share that hierarchy: it holds only facts of class files, which no run changes (the lambda
        classes a run adds are the same in every run), and reading them again for each heap was a fifth of the
        counterexample screen's time (each ``new`` asked for ``java/lang/Object``'s supertypes afresh)."""
        if self._hierarchy is None:
            cp = [self.program.dir] if self.program.dir is not None else []
            self._hierarchy = ClassHierarchy(classpath=cp)
            for name, cf in self.program.classes.items():
                if cf is not None:
                    self._hierarchy.add_info(ClassInfo(cf.name, cf.super_name, tuple(cf.interfaces), cf.is_interface))
        return Heap(self._hierarchy)

    # lifting ---------------------------------------------------------------------------------------------
    def lifted(self, heap: Heap, cls: str, name: str, desc: str) -> IRMethod:
        """The IR of a program method (cached); Unsupported if it has no code or cannot be lifted."""
        key = (cls, name, desc)
        found = self._lifted.get(key)
        if found is None:
            cf = self.program.get(cls)
            mi = _find_method(cf, name, desc) if cf is not None else None
            if cf is None or mi is None:
                found = f"no method {cls}.{name}{desc}"
            else:
                try:
                    found = lift_method(cf, mi, heap.hierarchy)
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
                return JArray(receiver.desc, list(receiver.items))
            start = OBJECT
        elif type(receiver) is JObject and "lambda" in receiver.native:
            return call_lambda(self, interp, kind, method, receiver, args)
        elif type(receiver) is JObject and "fn" in receiver.native:
            return call_fn(self, interp, kind, method, receiver, args)
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
        kind, ref = (handle[0], handle[1]) if isinstance(handle, tuple) else (None, None)
        if isinstance(ref, MethodRef) and ref.owner == "java/lang/invoke/StringConcatFactory":
            return concat_indy(self, interp, stmt, ref.name, args)
        if isinstance(ref, MethodRef) and ref.owner == "java/lang/invoke/LambdaMetafactory" and \
                kind == "invokeStatic" and ref.name in ("metafactory", "altMetafactory"):
            return make_lambda(self, interp, stmt, ref.name, args)
        if isinstance(ref, MethodRef) and ref.owner == "java/lang/runtime/ObjectMethods" and kind == "invokeStatic" \
                and ref.name == "bootstrap":
            return record_method(self, interp, stmt, args)
        what = f"{ref.owner}.{ref.name}" if isinstance(ref, MethodRef) else repr(stmt.bootstrap.handle)
        raise Unsupported(f"invokedynamic via {what}")

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
        # a primitive's Python type follows desc (a Value's type is its descriptor's: cast)
        if c == "C":
            return chr(cast(int, v))
        if c == "Z":
            return "true" if v else "false"
        if c == "F":
            return float_to_string(cast(float, v))
        if c == "D":
            return double_to_string(cast(float, v))
        if v is None:
            return "null"
        if type(v) is str:
            return v
        if desc == "[C":
            raise Unsupported("char[] to string")
        r = self.call_virtual(interp, OBJECT_TO_STRING, v, [])
        return "null" if r is None else cast(str, r)  # toString() returns a String (a str) or null


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
