"""Functional objects: lambdas and method references, ``Comparator``, ``Function`` and ``Predicate``.

What this module owns
    ``LambdaMetafactory`` call sites (:func:`make_lambda`: an object of a made-up class ``<interface>$$Lambda``,
    one instance per non-capturing call site and heap) and calls on them (:func:`call_lambda`, with JDK 17's
    argument and result conversions, :func:`_adapt`); the functional objects library models return
    (:func:`_fn_object`, :func:`call_fn`); ``Comparator``'s factories and default methods, ``Function``'s and
    ``Predicate``'s.

Inputs / outputs
    Models registered into :data:`~peggy_jvm.jdk.registry.MODELS` at import; the handler calls
    :func:`make_lambda`, :func:`call_lambda` and :func:`call_fn`.

Invariants
    A run whose result holds a lambda is Unsupported (the JVM's hidden class name is unknown): the interpreter
    checks ``native["lambda"]``/``native["fn"]``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, cast

from ..classfile.descriptors import parse_method_descriptor
from ..classfile.hierarchy import ClassInfo
from ..ir.interp import (NPE, Boxed, Heap, Interpreter, JObject, Unsupported, Value, _class_of,
                         runtime_class)
from ..ir.nodes import ConstKind, InvokeDynamic, InvokeKind, MethodRef
from .facts import OBJECT
from .numbers import _CONVERT, BOX_OF, PRIM_OF, _widen, box
from .objects import _non_null
from .registry import MODELS, Model, model

if TYPE_CHECKING:
    from .handler import DefaultCallHandler


def _declare_made_up_class(h: DefaultCallHandler, heap: Heap, cls: str, interfaces: tuple[str, ...]) -> None:
    """Make the heap's class hierarchy know ``cls``, a made-up class of Object implementing ``interfaces`` (the
    class of a lambda or of a library-made functional object), once per hierarchy."""
    known = h._lambda_classes.setdefault(id(heap.hierarchy), (heap.hierarchy, set()))[1]
    if cls not in known:
        heap.hierarchy.add_info(ClassInfo(cls, OBJECT, interfaces, False))
        known.add(cls)


def _fn_object(h: DefaultCallHandler, interp: Interpreter, iface: str, sam: str, desc: str,
               fn: Callable[[DefaultCallHandler, Interpreter, list], Value], cls: str | None = None) -> JObject:
    """A functional object a library method returns (``Comparator.comparingInt``, ``Function.andThen`` ...):
    calling ``iface.sam desc`` on it runs ``fn(handler, interp, args)``. Its class is made up like a lambda's
    (``iface$$Lambda``) unless the JDK's is given."""
    heap = interp.heap
    if cls is None:
        cls = iface + "$$Lambda"
        _declare_made_up_class(h, heap, cls, (iface,))
    return JObject(cls, {"fn": (iface, sam, desc, fn)})


def _call(h: DefaultCallHandler, interp: Interpreter, obj: Value, owner: str, name: str, desc: str,
          args: list[Value]) -> Value:
    """``obj.name(args)`` by virtual dispatch (NPE on null), as JDK code calling an interface method does."""
    return h.call_virtual(interp, MethodRef(owner, name, desc, True), obj, args)


# Comparators and default methods of functional interfaces
_COMPARE = "(Ljava/lang/Object;Ljava/lang/Object;)I"


@model("java/util/Comparator", "comparingInt", "(Ljava/util/function/ToIntFunction;)Ljava/util/Comparator;")
def _comparing_int(h, interp, recv, args):
    key = _non_null(interp, args[0])

    def compare(h2, interp2, a):
        x = _call(h2, interp2, key, "java/util/function/ToIntFunction", "applyAsInt", "(Ljava/lang/Object;)I", [a[0]])
        y = _call(h2, interp2, key, "java/util/function/ToIntFunction", "applyAsInt", "(Ljava/lang/Object;)I", [a[1]])
        x, y = cast(int, x), cast(int, y)  # applyAsInt() returns ints
        return (x > y) - (x < y)
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
    return cast(int, r)  # compareTo() returns an int


@model("java/util/Comparator", "reverseOrder", "()Ljava/util/Comparator;")
@model("java/util/Collections", "reverseOrder", "()Ljava/util/Comparator;")
def _reverse_order(h, interp, recv, args):
    key = ("reverseOrder",)
    found = interp.heap.boxes.get(key)
    if found is None:  # Collections.ReverseComparator.REVERSE_ORDER: compare(a, b) is b.compareTo(a)
        found = interp.heap.boxes[key] = _fn_object(
            h, interp, "java/util/Comparator", "compare", _COMPARE,
            lambda h2, i2, a: _natural_compare(h2, i2, a[1], a[0]), "java/util/Collections$ReverseComparator")
    return found


@model("java/util/Comparator", "naturalOrder", "()Ljava/util/Comparator;")
def _natural_order(h, interp, recv, args):
    key = ("naturalOrder",)
    found = interp.heap.boxes.get(key)
    if found is None:
        found = interp.heap.boxes[key] = _fn_object(
            h, interp, "java/util/Comparator", "compare", _COMPARE,
            lambda h2, i2, a: _natural_compare(h2, i2, a[0], a[1]), "java/util/Comparators$NaturalOrderComparator")
    return found


@model("java/util/Comparator", "thenComparing", "(Ljava/util/Comparator;)Ljava/util/Comparator;")
def _then_comparing(h, interp, recv, args):
    first, other = recv, _non_null(interp, args[0])

    def compare(h2, interp2, a):
        res = _call(h2, interp2, first, "java/util/Comparator", "compare", _COMPARE, a)
        return res if res != 0 else _call(h2, interp2, other, "java/util/Comparator", "compare", _COMPARE, a)
    return _fn_object(h, interp, "java/util/Comparator", "compare", _COMPARE, compare)


@model("java/util/Comparator", "reversed", "()Ljava/util/Comparator;")
def _reversed(h, interp, recv, args):
    if type(recv) is JObject and recv.cls == "java/util/Collections$ReverseComparator":
        return _natural_order(h, interp, None, [])  # ReverseComparator.reversed() is natural order
    raise Unsupported("Comparator.reversed of this comparator")


_FUNCTION = "java/util/function/Function"
_PREDICATE = "java/util/function/Predicate"
_APPLY = "(Ljava/lang/Object;)Ljava/lang/Object;"
_TEST = "(Ljava/lang/Object;)Z"


@model(_FUNCTION, "andThen", "(Ljava/util/function/Function;)Ljava/util/function/Function;")
def _function_and_then(h, interp, recv, args):
    first, after = recv, _non_null(interp, args[0])
    return _fn_object(h, interp, _FUNCTION, "apply", _APPLY, lambda h2, i2, a: _call(
        h2, i2, after, _FUNCTION, "apply", _APPLY, [_call(h2, i2, first, _FUNCTION, "apply", _APPLY, a)]))


@model(_FUNCTION, "compose", "(Ljava/util/function/Function;)Ljava/util/function/Function;")
def _function_compose(h, interp, recv, args):
    outer, before = recv, _non_null(interp, args[0])
    return _fn_object(h, interp, _FUNCTION, "apply", _APPLY, lambda h2, i2, a: _call(
        h2, i2, outer, _FUNCTION, "apply", _APPLY, [_call(h2, i2, before, _FUNCTION, "apply", _APPLY, a)]))


@model(_FUNCTION, "identity", "()Ljava/util/function/Function;")
def _function_identity(h, interp, recv, args):
    key = ("Function.identity",)
    if key not in interp.heap.boxes:
        interp.heap.boxes[key] = _fn_object(h, interp, _FUNCTION, "apply", _APPLY, lambda h2, i2, a: a[0])
    return interp.heap.boxes[key]


@model(_PREDICATE, "negate", "()Ljava/util/function/Predicate;")
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


# lambdas and method references (LambdaMetafactory)
# a lambda implementation's reference kind -> how the lambda calls it (None: static or a constructor)
_IMPL_KINDS = {"invokeVirtual": InvokeKind.VIRTUAL, "invokeSpecial": InvokeKind.SPECIAL,
               "invokeInterface": InvokeKind.INTERFACE, "invokeStatic": None, "newInvokeSpecial": None}


def make_lambda(h: DefaultCallHandler, interp: Interpreter, stmt: InvokeDynamic, bsm: str, args: list[Value]) -> Value:
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
    kind, impl = cast("tuple[str, object]", b[1].value)  # the implementation handle: (reference kind, ref)
    if kind not in _IMPL_KINDS or not isinstance(impl, MethodRef):
        raise Unsupported(f"lambda implementation of reference kind {kind}")
    heap = interp.heap
    cls = interfaces[0] + "$$Lambda" + ("$S" if len(interfaces) > 1 else "")
    _declare_made_up_class(h, heap, cls, interfaces)
    key = ("lambda", stmt)
    if not args and key in heap.boxes:
        return heap.boxes[key]
    obj = JObject(cls, {"lambda": (stmt.name, b[0].value, kind, impl, b[2].value, list(args), interfaces[0])})
    if not args:
        heap.boxes[key] = obj
    return obj


def call_lambda(h: DefaultCallHandler, interp: Interpreter, kind: InvokeKind, method: MethodRef, receiver: JObject,
                args: list[Value]) -> Value:
    sam_name, sam_desc, impl_kind, impl, inst_desc, captured, iface = receiver.native["lambda"]
    heap = interp.heap
    if method.name != sam_name or method.descriptor != sam_desc:
        if method.name == "getClass" or kind is InvokeKind.SPECIAL:
            raise Unsupported(f"{method.name}{method.descriptor} of a lambda")
        where = h.target(heap, iface, method.name, method.descriptor)  # Object's methods, defaults
        if where[0] == "program":
            return interp.execute(h.lifted(heap, where[1], method.name, method.descriptor), [receiver, *args])
        if where[0] == "model":  # Object's equals (identity), modelled default methods (andThen ...)
            return where[1](h, interp, receiver, args)
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
        full.append(_adapt(h, interp, a, sam_params[i], impl_params[n + i], inst_params[i]))
    if impl_kind == "invokeStatic":
        r = h.invoke(interp, InvokeKind.STATIC, impl, None, full)
    elif impl_kind == "newInvokeSpecial":
        r = h.new(interp, impl.owner, impl, full)
    else:
        if full[0] is None:
            interp.throw(NPE)
        k = _IMPL_KINDS[impl_kind]
        assert k is not None  # not invokeStatic nor newInvokeSpecial (above): a virtual kind
        r = h.invoke(interp, k, impl, full[0], full[1:])
    if sam_ret == "V":
        return None
    if impl_ret == "V":
        raise Unsupported("void lambda implementation for a value-returning interface method")
    return _adapt(h, interp, r, impl_ret, sam_ret, sam_ret)


def call_fn(h: DefaultCallHandler, interp: Interpreter, kind: InvokeKind, method: MethodRef, receiver: JObject,
            args: list[Value]) -> Value:
    """A call on a functional object a library model made (see :func:`_fn_object`): its interface method runs
    the Python function; other methods go to the interface's modelled default methods or Object's."""
    iface, sam_name, sam_desc, fn = receiver.native["fn"]
    if method.name == sam_name and method.descriptor == sam_desc:
        return fn(h, interp, args)
    if method.name == "getClass" or kind is InvokeKind.SPECIAL:
        raise Unsupported(f"{method.name}{method.descriptor} of a library-made functional object")
    where = h.target(interp.heap, iface, method.name, method.descriptor)
    if where[0] == "model":
        return where[1](h, interp, receiver, args)
    raise Unsupported(f"{method.name}{method.descriptor} of a library-made functional object")


def _adapt(h: DefaultCallHandler, interp: Interpreter, v: Value, arg: str, target: str, functional: str) -> Value:
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
        _cast(interp, b, target)
        return b
    src = arg
    if functional[0] in "L[":
        _cast(interp, v, functional)
        src = functional
    elif target[0] not in "L[":
        raise Unsupported("lambda argument conversion from a reference to a primitive instantiated type")
    if target[0] in "L[":
        _cast(interp, v, target)
        return v
    wps = PRIM_OF.get(src[1:-1]) if src[0] == "L" else None
    if wps is None:
        intermediate = "Ljava/lang/Number;" if target in "BSIJFD" else f"L{BOX_OF[target]};"
        _cast(interp, v, intermediate)
    if v is None:
        interp.throw(NPE)
    if type(v) is not Boxed:
        raise Unsupported(f"unboxing a {runtime_class(v)}")
    p = PRIM_OF[v.cls]
    if p in "ZC":
        return _widen(v.value, p, target)
    conv = _CONVERT.get((p, target))
    if conv is None:
        raise Unsupported(f"unboxing a {v.cls} to {target}")
    return conv(v.value)


def _cast(interp: Interpreter, v: Value, desc: str) -> None:
    if v is not None and desc != "Ljava/lang/Object;" and \
            not interp.heap.is_assignable(runtime_class(v), _class_of(desc)):
        interp.throw("java/lang/ClassCastException")
