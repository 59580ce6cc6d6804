"""Records' ``toString``, ``equals`` and ``hashCode`` as ``ObjectMethods.bootstrap`` (JDK 17) makes them.

What this module owns
    :func:`record_method`: the ``invokedynamic`` call sites of a record's generated methods, from its component
    getters, in the JDK's order of comparison and hashing.

Inputs / outputs
    The handler, the interpreter, the call site and its arguments -> the method's result.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, cast

from .. import semantics as S
from ..ir.interp import NPE, Interpreter, JObject, Unsupported, Value, default_value, runtime_class
from ..ir.nodes import Const, ConstKind, FieldRef, InvokeDynamic
from .facts import OBJECT_HASH_CODE
from .numbers import _float_compare, _prim_hash
from .objects import _class_simple_name, _objects_equals

if TYPE_CHECKING:
    from .handler import DefaultCallHandler


def record_method(h: DefaultCallHandler, interp: Interpreter, stmt: InvokeDynamic, args: list[Value]) -> Value:
    """``ObjectMethods.bootstrap`` (JDK 17): a record's toString, equals and hashCode from its getters."""
    b = stmt.bootstrap.arguments
    read = [_field_read(g) for g in b[2:]]
    getters = [f for f in read if f is not None]
    if len(b) < 2 or b[0].kind is not ConstKind.CLASS or not isinstance(b[1].value, str) \
            or len(getters) != len(read):
        raise Unsupported("ObjectMethods.bootstrap with unexpected static arguments")
    rec_cls = cast(str, b[0].value)  # a CLASS constant: the internal name
    names = b[1].value.split(";") if b[1].value else []
    if len(names) != len(getters):
        raise Unsupported("ObjectMethods.bootstrap with unexpected static arguments")

    def get(obj: Value, f: FieldRef) -> Value:
        if obj is None:
            interp.throw(NPE)
        if type(obj) is not JObject:
            raise Unsupported(f"record component of a {runtime_class(obj)}")
        key = interp.field_key(f)
        return obj.fields[key] if key in obj.fields else default_value(f.descriptor)

    name, desc = stmt.name, stmt.descriptor
    if name == "toString" and desc == f"(L{rec_cls};)Ljava/lang/String;":
        simple = _class_simple_name(h, interp, interp.heap.class_value(rec_cls), [])
        parts = [f"{n}={h.to_java_string(interp, get(args[0], f), f.descriptor)}"
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
            same: object
            if d in ("F", "D"):
                same = _float_compare(cast(float, x), cast(float, y)) == 0  # float fields hold floats
            elif d[0] in "L[":
                same = _objects_equals(h, interp, None, [x, y])
            else:
                same = x == y
            if not same:
                return 0
        return 1
    if name == "hashCode" and desc == f"(L{rec_cls};)I":
        acc = 0
        for f in getters:
            x = get(args[0], f)
            d = f.descriptor
            if d[0] in "L[":
                fh = 0 if x is None else cast(int, h.call_virtual(interp, OBJECT_HASH_CODE, x, []))  # an int
            else:
                fh = _prim_hash(d, cast("int | float", x))  # a primitive field
            acc = S.wrap_i(acc * 31 + fh)
        return acc
    raise Unsupported(f"ObjectMethods.bootstrap for {name}{desc}")


def _field_read(c: Const) -> FieldRef | None:
    """The field a ``getField`` method-handle constant reads (the constant's value is (reference kind, ref)), or
    None for any other constant."""
    v = c.value
    if c.kind is ConstKind.METHOD_HANDLE and isinstance(v, tuple) and v[0] == "getField" \
            and isinstance(v[1], FieldRef):
        return v[1]
    return None
