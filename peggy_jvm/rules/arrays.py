"""Arrays: a built-in rule for an array's ``clone()`` (group ``java.lang.array``; validation only, not among the
optimizer's safe groups).

What this module owns
    * ``array-clone-copy``: ``a.clone()`` of an array ``a`` whose class is known exactly is a new array of that
      class and ``a.length`` elements filled by ``System.arraycopy(a, 0, copy, 0, a.length)``: JLS 10.7 (the
      clone of an array is a new array of the same class, a shallow copy) and the specification of
      ``arraycopy`` (:data:`~peggy_jvm.jdk.facts.ARRAYCOPY`; nothing of it can fail on these arguments). A null
      ``a`` throws NullPointerException in both, before any other effect (``arraylength`` is the model's first
      step). The class is exact when the ``clone`` call's owner is a primitive array or an array of a class that is
      final in both versions (``PegInfo.final_class``): the verifier holds the receiver to the owner type, and a
      final class has no subclass an array of it could hold instead. ecj's enum ``values()`` is this copy where
      javac's is ``$VALUES.clone()``.
    * ``checkcast-new-array``: a ``checkcast`` to ``[T`` of a value that is a ``newarray [T`` is that value and
      changes nothing (the array is of that very class; JVMS checkcast).
    * ``array-store-default-new``: a store of the default value at a constant index inside a constant length,
      right after the allocation or after stores at other constant indexes of it, changes nothing (javac's
      ``{null}`` and ``{true, false}`` against ecj's nothing).

Inputs / outputs: :class:`~peggy_jvm.egraph.runner.Rewrite`-like objects over the E-PEG, listed by
:func:`~peggy_jvm.rules.builtin.builtin_rules`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..egraph.explain import Reason
from ..ir.nodes import Const, ConstKind, MethodRef
from ..jdk.facts import ARRAYCOPY

if TYPE_CHECKING:
    from ..epeg import EPeg

__all__ = ["ArrayCloneCopy", "CheckcastNewArray", "StoreDefaultIntoNew"]

CLONE_DESCRIPTOR = "()Ljava/lang/Object;"


def _exact_array(eg: EPeg, desc: str) -> bool:
    """An array of class ``desc`` holds exactly that class: primitive elements, or a final element class (any
    depth of nesting)."""
    elem = desc.lstrip("[")
    if not desc.startswith("[") or not elem:
        return False
    if elem[0] != "L":
        return True
    return elem.endswith(";") and eg.info.final_class(elem[1:-1])


class _ArrayRule:
    name = ""
    group = "java.lang.array"
    source = "builtin"
    depth = None
    cache_matches = True


class ArrayCloneCopy(_ArrayRule):
    name = "array-clone-copy"

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("invoke.virtual"):
            for op, m, ch in eg.nodes(cid):
                if op == "invoke.virtual" and isinstance(m, MethodRef) and m.name == "clone" \
                        and m.descriptor == CLONE_DESCRIPTOR and len(ch) == 2 and _exact_array(eg, m.owner):
                    out.append((eg.find(cid), eg.find(ch[0]), eg.find(ch[1]), m.owner))
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        outcome, sigma, array, desc = match
        length = eg.add("arraylength", None, (sigma, array))
        n = eg.add("rho_value", None, (length,))
        fresh = eg.add("newarray", desc, (eg.add("rho_sigma", None, (length,)), n))
        copy = eg.add("rho_value", None, (fresh,))
        zero = eg.add("const.i", 0)
        done = eg.add("invoke.static", ARRAYCOPY, (eg.add("rho_sigma", None, (fresh,)), array, zero, copy, zero, n))
        why = Reason(self.name, ("?s", "?a"), (sigma, array))
        changed = eg.union(eg.add("rho_value", None, (outcome,)), copy, why)
        return eg.union(eg.add("rho_sigma", None, (outcome,)), eg.add("rho_sigma", None, (done,)), why) or changed


class CheckcastNewArray(_ArrayRule):
    name = "checkcast-new-array"

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("checkcast"):
            for op, t, ch in eg.nodes(cid):
                if op != "checkcast" or not isinstance(t, str) or not t.startswith("[") or len(ch) != 2:
                    continue
                for vop, _a, vch in eg.nodes(ch[1]):
                    if vop == "rho_value" and any(e[0] == "newarray" and e[1] == t for e in eg.nodes(vch[0])):
                        out.append((eg.find(cid), eg.find(ch[0]), eg.find(ch[1])))
                        break
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        outcome, sigma, value = match
        why = Reason(self.name, ("?s", "?a"), (sigma, value))
        changed = eg.union(eg.add("rho_value", None, (outcome,)), value, why)
        return eg.union(eg.add("rho_sigma", None, (outcome,)), sigma, why) or changed


class StoreDefaultIntoNew(_ArrayRule):
    """``array-store-default-new``: storing an element's default value (``0``, ``false``, ``null``: JLS 4.12.5)
    at a constant index within a constant length into an array allocated just before (or with only stores at
    other constant indexes of it in between) changes nothing: the
    element already holds it, the index is in bounds, and ``null`` passes the store check. javac writes the
    ``null`` of ``new Type[] {null}`` and the ``false`` of ``{false, true}``; ecj leaves them out."""

    name = "array-store-default-new"

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("astore"):
            for op, _e, ch in eg.nodes(cid):
                if op != "astore" or len(ch) != 4 or not _is_default(eg, ch[3]):
                    continue
                index = eg.const(ch[2])
                if index is None or index[0] != "const.i":
                    continue
                fresh = _new_array_under(eg, _before_other_stores(eg, ch[0], ch[1], index[1]), ch[1])
                if fresh is None:
                    continue
                length = eg.const(fresh[1])
                if length is not None and length[0] == "const.i" and 0 <= index[1] < length[1]:
                    out.append((eg.find(cid), eg.find(ch[0])))
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        outcome, sigma = match
        return eg.union(eg.add("rho_sigma", None, (outcome,)), sigma, Reason(self.name, ("?s",), (sigma,)))


def _is_default(eg: EPeg, cid: int) -> bool:
    key = eg.const(cid)
    if key is not None and key[0] in ("const.i", "const.l") and key[1] == 0:
        return True
    return any(op == "const.a" and isinstance(a, Const) and a.kind is ConstKind.VALUE and a.value is None
               for op, a, _c in eg.nodes(cid))


#: stores into the same new array walked back over (javac's initializer of a long constant array stores every
#: element in turn; the walk is per match, so it stays short)
_MAX_OTHER_STORES = 64


def _before_other_stores(eg: EPeg, sigma: int, array: int, index: int) -> int:
    """The heap before the stores into ``array`` at constant indexes other than ``index`` that lead to ``sigma``
    (each leaves element ``index`` as it was; one that threw ended the method, so what follows is never seen):
    javac's ``{true, false}`` stores ``false`` at 1 after ``true`` at 0, and element 1 is still the default."""
    find = eg.find
    for _ in range(_MAX_OTHER_STORES):
        earlier = None
        for op, _a, ch in eg.nodes(sigma):
            if op != "rho_sigma":
                continue
            for node in eg.nodes(ch[0]):
                if node[0] == "astore" and len(node[2]) == 4 and find(node[2][1]) == find(array):
                    other = eg.const(node[2][2])
                    if other is not None and other[0] == "const.i" and other[1] != index:
                        earlier = node[2][0]
        if earlier is None:
            return sigma
        sigma = earlier
    return sigma


def _new_array_under(eg: EPeg, sigma: int, array: int) -> tuple | None:
    """The ``newarray`` node whose heap is ``sigma`` and whose array is ``array``, if there is one."""
    for op, _a, ch in eg.nodes(sigma):
        if op != "rho_sigma":
            continue
        for node in eg.nodes(ch[0]):
            if node[0] == "newarray" and eg.lookup("rho_value", None, (eg.find(ch[0]),)) == eg.find(array):
                return node[2]
    return None
