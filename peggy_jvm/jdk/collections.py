"""Models of ``java.util``'s lists, a minimal ``HashSet``, their iterators, and sorting.

What this module owns
    ArrayList, LinkedList, ``Arrays.asList`` (write-through to its array), ``List.of`` (ImmutableCollections),
    each with the JDK's exceptions (UnsupportedOperationException, ConcurrentModificationException, the index
    checks of each class); HashSet while it has at most one element (its order is the hash table's); their
    iterators; ``Collections.sort``/``List.sort`` with the JDK's exact sequence of comparisons (below 32
    elements: binary insertion sort; TimSort's merges are not modelled).

Inputs / outputs
    Models registered into :data:`~peggy_jvm.jdk.registry.MODELS` at import; a collection's state is its
    ``native`` dict ("list" or "set", "mod" for modCount).

Invariants
    Models apply to exactly the JDK's classes: a program subclass could override what the JDK's code calls
    internally, so a subclass receiver is Unsupported.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeGuard, cast

from .. import semantics as S
from ..ir.interp import (MAX_ARRAY_ELEMENTS, NPE, Interpreter, JArray, JObject, Unsupported, Value, _class_of,
                         runtime_class)
from .facts import OBJECT_HASH_CODE
from .functions import _call, _compare_to
from .objects import _hash_or_zero, _java_equals, _non_null, _objects_eq
from .registry import MODELS, Model, model

if TYPE_CHECKING:
    from .handler import DefaultCallHandler


# -- lists ----------------------------------------------------------------------------------------------------
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


def _jlist(interp: Interpreter, recv: Value, cls: str) -> list:
    if type(recv) is not JObject or recv.cls != cls:
        raise Unsupported(f"a subclass of {cls}")
    return recv.native["list"]


def _is_modelled_collection(v: Value) -> TypeGuard[JObject]:
    return type(v) is JObject and (v.cls in _LIST_KINDS or v.cls == _HASH_SET)


def _to_array(interp: Interpreter, c: Value) -> list:
    """``c.toArray()`` of a modelled collection (a snapshot); NPE on null; others are not modelled."""
    if c is None:
        interp.throw(NPE)
    if not _is_modelled_collection(c):
        raise Unsupported(f"toArray of a {runtime_class(c)}")
    if c.cls == _HASH_SET:
        return list(_hset(interp, c))  # in hash-table order: known for at most one element only
    return list(c.native["list"])


def _check_index(interp: Interpreter, i: int, n: int, exc: str) -> None:
    if not 0 <= i < n:
        interp.throw(exc)  # the JDK's messages differ by class; the model leaves them unknown


@dataclass(frozen=True)
class _ListClass:
    """One modelled list class: its iterator's class and its kind (growable: ArrayList/LinkedList; fixed:
    Arrays.asList; immutable: List.of)."""

    cls: str
    itr_cls: str
    kind: str

    @property
    def bad_index(self) -> str:
        """What an out-of-range index throws: ArrayList/LinkedList/List12 check the index, ListN and
        Arrays.asList index their array."""
        return "java/lang/ArrayIndexOutOfBoundsException" if self.cls.endswith(("ListN", "Arrays$ArrayList")) \
            else "java/lang/IndexOutOfBoundsException"


def _reg(cls: str, name: str, desc: str, fn: Model) -> None:
    MODELS[(cls, name, desc)] = fn


def _bump(recv: JObject) -> None:
    recv.native["mod"] += 1


def _register_list(lc: _ListClass) -> None:
    """Every model of one list class, by concern."""
    _register_list_access(lc)
    _register_list_object_methods(lc)
    _register_list_traversals(lc)
    if lc.kind == "growable":
        _register_list_mutators(lc)
        _register_list_constructors(lc)
    else:
        _register_list_refusals(lc)


def _register_list_access(lc: _ListClass) -> None:
    """size, isEmpty, get and set by index, indexOf, contains, iterator."""
    cls, itr_cls, bad_index = lc.cls, lc.itr_cls, lc.bad_index
    fixed, immutable = lc.kind == "fixed", lc.kind == "immutable"

    _reg(cls, "size", "()I", lambda h, i, r, a: len(_jlist(i, r, cls)))
    _reg(cls, "isEmpty", "()Z", lambda h, i, r, a: int(not _jlist(i, r, cls)))

    def get(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        _check_index(interp, args[0], len(items), bad_index)
        return items[args[0]]
    _reg(cls, "get", "(I)Ljava/lang/Object;", get)

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
    _reg(cls, "set", "(ILjava/lang/Object;)Ljava/lang/Object;", set_)

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
    _reg(cls, "indexOf", "(Ljava/lang/Object;)I", index_of)
    _reg(cls, "contains", "(Ljava/lang/Object;)Z", lambda h, i, r, a: int(index_of(h, i, r, a) >= 0))

    def iterator(h, interp, recv, args):
        _jlist(interp, recv, cls)
        return JObject(itr_cls, {"itr": [recv, 0, recv.native.get("mod", 0), -1]})
    _reg(cls, "iterator", "()Ljava/util/Iterator;", iterator)


def _register_list_object_methods(lc: _ListClass) -> None:
    """toString (AbstractCollection's), hashCode and equals (each class's own order of calls)."""
    cls, immutable = lc.cls, lc.kind == "immutable"

    def to_string(h, interp, recv, args):  # AbstractCollection.toString, through the iterator
        _jlist(interp, recv, cls)
        parts = ["(this Collection)" if e is recv else h.to_java_string(interp, e, _OBJ)
                 for e in _iterate(h, interp, recv)]
        return "[" + ", ".join(parts) + "]"
    _reg(cls, "toString", "()Ljava/lang/String;", to_string)

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
    _reg(cls, "hashCode", "()I", hash_code)

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
    _reg(cls, "equals", "(Ljava/lang/Object;)Z", equals)


def _register_list_traversals(lc: _ListClass) -> None:
    """forEach and sort (List.sort, in place or through a copy, with the modCount checks of each class)."""
    cls, immutable, growable = lc.cls, lc.kind == "immutable", lc.kind == "growable"

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
    _reg(cls, "forEach", "(Ljava/util/function/Consumer;)V", for_each)

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
            _bump(recv)
        return None
    _reg(cls, "sort", "(Ljava/util/Comparator;)V", sort)


def _register_list_refusals(lc: _ListClass) -> None:
    """The structural changes a fixed-size or immutable list refuses with UnsupportedOperationException
    (Arrays.asList's remove/removeIf search first, and refuse only on a match)."""
    cls, immutable = lc.cls, lc.kind == "immutable"

    def uoe(h, interp, recv, args):
        _jlist(interp, recv, cls)
        interp.throw(_UOE, None)

    for name, desc in (("add", "(Ljava/lang/Object;)Z"), ("add", "(ILjava/lang/Object;)V"),
                       ("remove", "(I)Ljava/lang/Object;"), ("clear", "()V"),
                       ("addAll", "(Ljava/util/Collection;)Z")):
        _reg(cls, name, desc, uoe)
    if immutable:
        _reg(cls, "remove", "(Ljava/lang/Object;)Z", uoe)
        _reg(cls, "removeIf", "(Ljava/util/function/Predicate;)Z", uoe)
    else:  # AbstractCollection.remove / Collection.removeIf: search, and fail only on a match
        def remove_fixed(h, interp, recv, args):
            items = _jlist(interp, recv, cls)
            o = args[0]
            for k in range(len(items)):
                if (items[k] is None) if o is None else _java_equals(h, interp, o, items[k]):
                    interp.throw(_UOE, None)
            return 0
        _reg(cls, "remove", "(Ljava/lang/Object;)Z", remove_fixed)

        def remove_if_fixed(h, interp, recv, args):
            items = _jlist(interp, recv, cls)
            p = _non_null(interp, args[0])
            for k in range(len(items)):
                if _call(h, interp, p, "java/util/function/Predicate", "test", "(Ljava/lang/Object;)Z",
                         [items[k]]):
                    interp.throw(_UOE, None)
            return 0
        _reg(cls, "removeIf", "(Ljava/util/function/Predicate;)Z", remove_if_fixed)


def _register_list_mutators(lc: _ListClass) -> None:
    """add, remove, clear, addAll, removeIf of a growable list (each bumps modCount as the JDK's does)."""
    cls = lc.cls

    def add(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        _bump(recv)
        items.append(args[0])
        if len(items) > MAX_ARRAY_ELEMENTS:
            raise Unsupported("list too long")
        return 1
    _reg(cls, "add", "(Ljava/lang/Object;)Z", add)

    def add_at(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        i, v = args
        if not 0 <= i <= len(items):
            interp.throw("java/lang/IndexOutOfBoundsException")
        _bump(recv)
        items.insert(i, v)
        return None
    _reg(cls, "add", "(ILjava/lang/Object;)V", add_at)

    def remove_at(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        _check_index(interp, args[0], len(items), "java/lang/IndexOutOfBoundsException")
        _bump(recv)
        return items.pop(args[0])
    _reg(cls, "remove", "(I)Ljava/lang/Object;", remove_at)

    def remove(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        o = args[0]
        for k in range(len(items)):
            if k < len(items) and ((items[k] is None) if o is None else _java_equals(h, interp, o, items[k])):
                _bump(recv)
                del items[k]
                return 1
        return 0
    _reg(cls, "remove", "(Ljava/lang/Object;)Z", remove)

    def clear(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        _bump(recv)
        items.clear()
        return None
    _reg(cls, "clear", "()V", clear)

    def add_all(h, interp, recv, args):
        items = _jlist(interp, recv, cls)
        new = _to_array(interp, args[0])
        if cls == "java/util/LinkedList" and not new:
            return 0  # LinkedList.addAll: nothing to add leaves modCount alone
        _bump(recv)
        items.extend(new)
        return int(bool(new))
    _reg(cls, "addAll", "(Ljava/util/Collection;)Z", add_all)

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
                    _bump(recv)
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
        _bump(recv)
        gone = set(doomed)
        items[:n] = [e for k, e in enumerate(items[:n]) if k not in gone]
        return 1
    _reg(cls, "removeIf", "(Ljava/util/function/Predicate;)Z", remove_if)


def _register_list_constructors(lc: _ListClass) -> None:
    """The constructors of a growable list: empty, from a collection, and ArrayList's with a capacity."""
    cls = lc.cls

    def init(h, interp, recv, args):
        recv.native.setdefault("list", [])
        recv.native.setdefault("mod", 0)
        return None
    _reg(cls, "<init>", "()V", init)

    def init_collection(h, interp, recv, args):
        recv.native["list"] = _to_array(interp, args[0])
        recv.native.setdefault("mod", 0)
        return None
    _reg(cls, "<init>", "(Ljava/util/Collection;)V", init_collection)
    if cls == "java/util/ArrayList":
        def init_capacity(h, interp, recv, args):
            if args[0] < 0:
                interp.throw("java/lang/IllegalArgumentException", f"Illegal Capacity: {args[0]}")
            return init(h, interp, recv, [])
        _reg(cls, "<init>", "(I)V", init_capacity)


def _iterate(h: DefaultCallHandler, interp: Interpreter, coll: JObject):
    """The elements of a modelled collection through its iterator's hasNext/next models, as JDK code that loops
    over ``this`` sees them (ConcurrentModificationException included)."""
    it = MODELS[(coll.cls, "iterator", "()Ljava/util/Iterator;")](h, interp, coll, [])
    it_cls = cast(JObject, it).cls  # a modelled collection's iterator is modelled
    has_next = MODELS[(it_cls, "hasNext", "()Z")]
    next_ = MODELS[(it_cls, "next", "()Ljava/lang/Object;")]
    while has_next(h, interp, it, []):
        yield next_(h, interp, it, [])


for _cls, (_itr, _kind) in _LIST_KINDS.items():
    _register_list(_ListClass(_cls, _itr, _kind))


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
    if type(recv) is not JObject or recv.cls != _HASH_SET:
        raise Unsupported(f"a subclass of {_HASH_SET}")
    items = recv.native["set"]
    if at_most_one and len(items) > 1:
        raise Unsupported("a HashSet of more than one element (its hash-table order is not modelled)")
    return items


@model(_HASH_SET, "<init>", "()V")
def _hs_init(h, interp, recv, args):
    recv.native.setdefault("set", [])
    recv.native.setdefault("mod", 0)
    return None


@model(_HASH_SET, "add", "(Ljava/lang/Object;)Z")
def _hs_add(h, interp, recv, args):
    items = _hset(interp, recv)
    if items:
        raise Unsupported("adding to a non-empty HashSet (its equals/hashCode calls follow the hash table)")
    e = args[0]
    if e is not None:
        h.call_virtual(interp, OBJECT_HASH_CODE, e, [])  # HashMap.hash: one hashCode call
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
        empty = interp.heap.boxes.get(key)
        if empty is None:
            empty = interp.heap.boxes[key] = JObject("java/util/ImmutableCollections$ListN", {"list": []})
        return cast(JObject, empty)  # the List.of key holds the one empty list
    cls = "java/util/ImmutableCollections$List12" if len(items) <= 2 else "java/util/ImmutableCollections$ListN"
    return JObject(cls, {"list": list(items)})


for _n in range(0, 11):
    MODELS[("java/util/List", "of", "(" + _OBJ * _n + ")Ljava/util/List;")] = \
        lambda h, i, r, a: _immutable_list(i, list(a))


@model("java/util/List", "of", "([Ljava/lang/Object;)Ljava/util/List;")
def _list_of_array(h, interp, recv, args):
    return _immutable_list(interp, list(cast(JArray, _non_null(interp, args[0])).items))  # an Object[]


@model("java/util/Arrays", "asList", "([Ljava/lang/Object;)Ljava/util/List;")
def _arrays_as_list(h, interp, recv, args):
    arr = cast(JArray, _non_null(interp, args[0]))  # an Object[] by the descriptor
    return JObject("java/util/Arrays$ArrayList", {"list": arr.items, "array": arr})


@model("java/util/Collections", "sort", "(Ljava/util/List;)V")
def _collections_sort(h, interp, recv, args):
    return _call(h, interp, args[0], "java/util/List", "sort", "(Ljava/util/Comparator;)V", [None])


@model("java/util/Collections", "sort", "(Ljava/util/List;Ljava/util/Comparator;)V")
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
            r = _call(h, interp, c, "java/util/Comparator", "compare", "(Ljava/lang/Object;Ljava/lang/Object;)I",
                      [x, y])
            return cast(int, r)  # compare() returns an int
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
