"""Models of ``java.lang.Object``, ``Class``, ``Enum``, ``Objects`` and reflection on the program's classes.

What this module owns
    Object's identity-based ``equals``/``hashCode``/``toString`` and ``getClass``; ``Class``'s names, assertion
    status, ``getInterfaces``/``isSealed``/``getPermittedSubclasses`` (program classes only); ``Enum``'s name,
    ordinal, comparison, declaring class and ``valueOf``; ``Objects.requireNonNull``/``equals``; ``Record.<init>``.
    Also the helpers other areas call the way JDK code calls these methods: :func:`_non_null` (NPE on null),
    :func:`_java_equals`, :func:`_objects_eq`, :func:`_hash_or_zero`.

Inputs / outputs
    Models registered into :data:`~peggy_jvm.jdk.registry.MODELS` at import.

Invariants
    Reference identity is the interpreter's (``_same_ref``: equal strings' identity is Unsupported).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ..classfile.model import Access, ClassFile, attribute_named
from ..ir.interp import (NPE, ClassValue, Interpreter, JArray, JObject, Unsupported, Value, _same_ref,
                         runtime_class)
from ..ir.nodes import FieldRef
from .facts import OBJECT, OBJECT_EQUALS, OBJECT_HASH_CODE, OBJECT_TO_STRING
from .registry import MODELS, implements, model

if TYPE_CHECKING:
    from .handler import DefaultCallHandler


# java.lang.Object
@model(OBJECT, "<init>", "()V")
def _object_init(h, interp, recv, args):
    return None


@model(OBJECT, "getClass", "()Ljava/lang/Class;")
def _object_get_class(h, interp, recv, args):
    return interp.heap.class_value(runtime_class(recv))


@implements(OBJECT_EQUALS)
def _object_equals(h, interp, recv, args):
    return int(_same_ref(recv, args[0]))


@implements(OBJECT_HASH_CODE)
@implements(OBJECT_TO_STRING)
def _object_identity(h, interp, recv, args):
    raise Unsupported("identity hash code")


# java.lang.Class
@model("java/lang/Class", "getName", "()Ljava/lang/String;")
def _class_name(h, interp, recv, args):
    return recv.name.replace("/", ".")


@model("java/lang/Class", "getSimpleName", "()Ljava/lang/String;")
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


@model("java/lang/Class", "desiredAssertionStatus", "()Z")
def _class_assertions(h, interp, recv, args):
    return 0


@model("java/util/Objects", "requireNonNull", "(Ljava/lang/Object;)Ljava/lang/Object;",
       "(Ljava/lang/Object;Ljava/lang/String;)Ljava/lang/Object;")
def _require_non_null(h, interp, recv, args):
    if args[0] is None:
        interp.throw(NPE, args[1] if len(args) > 1 else None)
    return args[0]


@model("java/util/Objects", "equals", "(Ljava/lang/Object;Ljava/lang/Object;)Z")
def _objects_equals(h, interp, recv, args):
    a, b = args
    if a is b and type(a) is not str:
        return 1
    if a is None:
        return int(b is None)
    return h.call_virtual(interp, OBJECT_EQUALS, a, [b])


MODELS[("java/lang/Record", "<init>", "()V")] = _object_init


# java.lang.Enum
@model("java/lang/Enum", "<init>", "(Ljava/lang/String;I)V")
def _enum_init(h, interp, recv, args):
    recv.native.update(name=args[0], ordinal=args[1])
    return None


@model("java/lang/Enum", "name", "()Ljava/lang/String;")
@model("java/lang/Enum", "toString", "()Ljava/lang/String;")
def _enum_name(h, interp, recv, args):
    return recv.native["name"]


@model("java/lang/Enum", "ordinal", "()I")
def _enum_ordinal(h, interp, recv, args):
    return recv.native["ordinal"]


@model("java/lang/Enum", "equals", "(Ljava/lang/Object;)Z")
def _enum_equals(h, interp, recv, args):
    return int(recv is args[0])


@model("java/lang/Enum", "compareTo", "(Ljava/lang/Enum;)I")
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
    assert sup is not None  # an enum constant's class has a superclass
    return e.cls if sup == "java/lang/Enum" else sup


@model("java/lang/Enum", "getDeclaringClass", "()Ljava/lang/Class;")
def _enum_get_declaring(h, interp, recv, args):
    return interp.heap.class_value(_enum_declaring(h, interp, recv))


@model("java/lang/Enum", "valueOf", "(Ljava/lang/Class;Ljava/lang/String;)Ljava/lang/Enum;")
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


@model("java/lang/Enum", "compareTo", "(Ljava/lang/Object;)I")
def _enum_compare_object(h, interp, recv, args):
    if args[0] is not None and not interp.heap.is_assignable(runtime_class(args[0]), "java/lang/Enum"):
        interp.throw("java/lang/ClassCastException")
    return _enum_compare(h, interp, recv, args)


def _non_null(interp: Interpreter, v: Value) -> Value:
    if v is None:
        interp.throw(NPE)
    return v


def _class_file_of(h: DefaultCallHandler, recv: Value) -> ClassFile:
    cf = h.program.get(recv.name) if type(recv) is ClassValue else None
    if cf is None:
        raise Unsupported(f"reflection on library class {getattr(recv, 'name', recv)}")
    return cf


@model("java/lang/Class", "getInterfaces", "()[Ljava/lang/Class;")
def _class_interfaces(h, interp, recv, args):
    cf = _class_file_of(h, recv)
    return JArray("[Ljava/lang/Class;", [interp.heap.class_value(i) for i in cf.interfaces])


def _permitted(cf: ClassFile) -> list[str] | None:
    attr = attribute_named(cf.attributes, "PermittedSubclasses")
    if attr is None:
        return None
    n = int.from_bytes(attr.data[:2], "big")
    return [cf.pool.class_name(int.from_bytes(attr.data[2 + 2 * k:4 + 2 * k], "big")) for k in range(n)]


@model("java/lang/Class", "isSealed", "()Z")
def _class_is_sealed(h, interp, recv, args):
    return int(_permitted(_class_file_of(h, recv)) is not None)


@model("java/lang/Class", "getPermittedSubclasses", "()[Ljava/lang/Class;")
def _class_permitted(h, interp, recv, args):
    names = _permitted(_class_file_of(h, recv))
    if names is None:
        return None
    if any(h.program.get(n) is None for n in names):  # the JDK drops those it cannot load as subclasses
        raise Unsupported("permitted subclasses outside the program")
    return JArray("[Ljava/lang/Class;", [interp.heap.class_value(n) for n in names])


def _java_equals(h: DefaultCallHandler, interp: Interpreter, a: Value, b: Value) -> bool:
    """``a.equals(b)`` for a non-null ``a``."""
    return bool(h.call_virtual(interp, OBJECT_EQUALS, a, [b]))


def _objects_eq(h: DefaultCallHandler, interp: Interpreter, a: Value, b: Value) -> bool:
    """``Objects.equals(a, b)``: identity first (two equal strings are equal either way: String.equals has no
    effects), then ``a.equals(b)``."""
    if type(a) is str and type(b) is str:
        return a == b
    if a is b:
        return True
    return a is not None and _java_equals(h, interp, a, b)


def _hash_or_zero(h: DefaultCallHandler, interp: Interpreter, e: Value) -> int:
    return 0 if e is None else cast(int, h.call_virtual(interp, OBJECT_HASH_CODE, e, []))  # hashCode(): an int
