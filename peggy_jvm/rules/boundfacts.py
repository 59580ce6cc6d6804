"""Bounds from branch conditions: inside the arms of ``phi(x op k, a, b)`` (an int comparison with a constant),
``x`` lies in an interval, which decides other comparisons of ``x``, ``-x``, ``x + j`` and ``x - j`` with
constants met in the arm, and pins ``x`` to ``k`` where the interval is one value.

What this module owns
    :class:`BoundFacts` (``branch-bounds``, group ``validate.phi.bounds``, validation only): every
    ``phi(c, a, b)`` on such a ``c`` rewritten to ``phi(c, a', b')``, each arm copied (:class:`~.branchfacts.Assume`)
    with the comparisons its interval decides replaced by ``true``/``false`` and ``x`` by ``k`` when the interval
    is ``[k, k]``; an arm that is itself a ``phi`` on a comparison of the same ``x`` is split the same way with
    the two intervals intersected (``x <= 0`` and then ``x >= 0`` leave ``x == 0``). EqBench's ``pos``: under
    ``x > 0`` the closed form of a counting loop tests ``-x < 0``, which holds there; under ``x <= 0`` and
    ``x >= 0``, ``x`` is 0. ``branch-facts`` (rules/branchfacts.py) substitutes only the branch's own condition.

Why it is sound
    The same argument as ``branch-facts`` (docs/axioms.md, "Facts from branch conditions"): at every point where
    the phi takes arm ``a``, ``c`` holds, so ``x`` is in the arm's interval ``I`` (``x op k`` over the 32-bit
    ints). A term ``t`` of ``x`` (``x``, ``-x``, ``x + j``, ``x - j``, ``j`` a constant) then lies in the image of
    ``I``, computed over the mathematical integers and used only when it stays inside the int range: then no
    value of ``I`` wraps, and Java's ``t`` equals the mathematical one (``-x`` for ``x > MIN_VALUE``). A
    comparison ``t op' k'`` true (false) on the whole image has that value at those points; the copier
    replaces it (and ``x`` by ``k`` for ``I = [k, k]``: int equality is identity) only through nodes that read
    their inputs at the same loop indexes (``Assume``), so each copy equals its original wherever the arm is
    taken, and ``phi(c, a', b') = phi(c, a, b)``. A nested phi on ``c2`` of the same ``x`` takes its arm where
    ``c2`` holds (resp. fails), so there ``x`` is in the intersection.

Inputs / outputs: an e-graph after rebuild; new nodes and one union per rewritten phi. Bounded like
``branch-facts``: classes explored per arm, phis rewritten per e-graph, each phi once.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .branchfacts import LOOP_OPS, Assume, BranchFacts

if TYPE_CHECKING:
    from ..egraph.types import ENode
    from ..epeg import EPeg

__all__ = ["BoundFacts"]

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
Interval = tuple[int, int]
_HOLDS = {"lt.i": lambda a, b: a < b, "le.i": lambda a, b: a <= b, "gt.i": lambda a, b: a > b,
          "ge.i": lambda a, b: a >= b, "eq.i": lambda a, b: a == b, "ne.i": lambda a, b: a != b}
_MIRROR = {"lt.i": "gt.i", "le.i": "ge.i", "gt.i": "lt.i", "ge.i": "le.i", "eq.i": "eq.i", "ne.i": "ne.i"}


def _int(eg: EPeg, cid: int) -> int | None:
    key = eg.const(cid)
    return key[1] if key is not None and key[0] == "const.i" else None


def _comparison(eg: EPeg, cid: int) -> tuple[int, str, int] | None:
    """Class ``cid`` as ``t op k`` (``t`` a non-constant int class, ``k`` a constant), or None."""
    find = eg.find
    for op, _attr, ch in eg.nodes(cid):
        if op not in _HOLDS:
            continue
        a, b = find(ch[0]), find(ch[1])
        ka, kb = _int(eg, a), _int(eg, b)
        if kb is not None and ka is None:
            return a, op, kb
        if ka is not None and kb is None:
            return b, _MIRROR[op], ka
    return None


def _where(op: str, k: int, truth: bool) -> Interval | None:
    """The ints ``x`` with ``(x op k) == truth``, when they are one interval (None for ``x != k``)."""
    lo, hi = {("lt.i", True): (INT_MIN, k - 1), ("lt.i", False): (k, INT_MAX),
              ("le.i", True): (INT_MIN, k), ("le.i", False): (k + 1, INT_MAX),
              ("gt.i", True): (k + 1, INT_MAX), ("gt.i", False): (INT_MIN, k),
              ("ge.i", True): (k, INT_MAX), ("ge.i", False): (INT_MIN, k - 1),
              ("eq.i", True): (k, k), ("ne.i", False): (k, k)}.get((op, truth), (INT_MIN, INT_MAX))
    return (lo, hi) if (lo, hi) != (INT_MIN, INT_MAX) else None


def _meet(a: Interval, b: Interval | None) -> Interval:
    return a if b is None else (max(a[0], b[0]), min(a[1], b[1]))


def _image(eg: EPeg, t: int, x: int, iv: Interval, wraps: bool = False) -> Interval | None:
    """The values of term ``t`` for ``x`` in ``iv``, when ``t`` is ``x``, ``-x``, ``x + j`` or ``x - j`` and none
    of them wraps; else None (``wraps``: the mutant that forgets wrap-around)."""
    find = eg.find
    if t == x:
        return iv
    lo, hi = iv
    for op, _attr, ch in eg.nodes(t):
        kids = [find(c) for c in ch]
        if op == "neg.i" and kids == [x]:
            got = (-hi, -lo)
        elif op in ("add.i", "sub.i") and x in kids:
            other = kids[1] if kids[0] == x else kids[0]
            j = _int(eg, other)
            if j is None or (op == "sub.i" and kids[0] != x):
                continue
            j = j if op == "add.i" else -j
            got = (lo + j, hi + j)
        else:
            continue
        if wraps or INT_MIN <= got[0] and got[1] <= INT_MAX:
            return got
    return None


class _Arm(Assume):
    """The copier preferring, in each class, a phi whose condition is a target (the closed form a loop rule
    added to the loop's class is what the facts decide)."""

    def _choose(self, cid: int, nodes: list[ENode]) -> ENode:
        find = self.eg.find
        for node in nodes:
            if node[0] == "phi" and find(node[2][0]) in self.subst:
                return node
        return super()._choose(cid, nodes)


class BoundFacts(BranchFacts):
    """See the module docstring: ``branch-facts``'s matching and union, with other facts in the arms.
    ``mutant`` builds deliberately wrong variants for the tests that must catch them: ``"wrong-arm"`` gives each
    arm the other's interval, ``"wraps"`` reads ``-x`` and ``x + j`` as if ints did not wrap."""

    name = "branch-bounds"
    group = "validate.phi.bounds"

    def __init__(self, max_classes: int = 32, max_rewrites: int = 16, mutant: str | None = None) -> None:
        super().__init__(max_classes, max_rewrites, mutant)

    def _wanted(self, eg: EPeg, cond: int) -> bool:
        return _comparison(eg, eg.find(cond)) is not None

    def _arms(self, eg: EPeg, cond: int, yes_arm: int, no_arm: int) -> tuple[int, int] | None:
        found = _comparison(eg, eg.find(cond))
        if found is None:  # _wanted held when matched; a merge since may have made both sides constant
            return None
        x, op, k = found
        full = (INT_MIN, INT_MAX)
        yes, no = _meet(full, _where(op, k, True)), _meet(full, _where(op, k, False))
        if self.mutant == "wrong-arm":
            yes, no = no, yes
        return self._arm(eg, yes_arm, x, yes, 1), self._arm(eg, no_arm, x, no, 1)

    def _arm(self, eg: EPeg, arm: int, x: int, iv: Interval, depth: int) -> int:
        """``arm`` copied under ``x`` in ``iv`` (itself when nothing is decided there)."""
        find = eg.find
        arm = find(arm)
        if iv[0] > iv[1]:
            return arm  # an arm never taken: left as it is
        if depth > 0:  # an arm that is a phi on the same x: both its arms under the intersection
            for op, _attr, ch in eg.nodes(arm):
                inner = _comparison(eg, find(ch[0])) if op == "phi" else None
                if inner is None or inner[0] != x:
                    continue
                _x, op2, k2 = inner
                a = self._arm(eg, ch[1], x, _meet(iv, _where(op2, k2, True)), depth - 1)
                b = self._arm(eg, ch[2], x, _meet(iv, _where(op2, k2, False)), depth - 1)
                if find(a) != find(ch[1]) or find(b) != find(ch[2]):
                    return eg.add("phi", None, (ch[0], a, b))
        facts = self._facts(eg, arm, x, iv)
        if arm in facts:  # the arm is x pinned to one value, or a decided comparison
            return facts[arm]
        if not facts:
            return arm
        copier = _Arm(eg, facts, self.max_classes, rule=self.name)
        if not copier.folds([arm]) and iv[0] != iv[1]:  # x pinned: its copies fold whatever they are
            return arm
        return copier.copy([arm])[0]

    def _facts(self, eg: EPeg, arm: int, x: int, iv: Interval) -> dict[int, int]:
        """The comparisons below ``arm`` (at most ``max_classes`` classes, not through loop operators) that
        ``x`` in ``iv`` decides -> ``true``/``false``; and ``x`` -> ``k`` when ``iv`` is ``[k, k]``."""
        find = eg.find
        facts: dict[int, int] = {}
        if iv[0] == iv[1]:
            facts[x] = eg.add("const.i", iv[0])
        seen: set[int] = set()
        stack = [arm]
        while stack and len(seen) < self.max_classes:
            c = find(stack.pop())
            if c in seen or eg.const(c) is not None:
                continue
            seen.add(c)
            got = _comparison(eg, c)
            if got is not None:
                t, op, k = got
                image = _image(eg, t, x, iv, wraps=self.mutant == "wraps")
                if image is not None:
                    truths = {_HOLDS[op](image[0], k), _HOLDS[op](image[1], k)}
                    if len(truths) == 1 and _monotone_decided(op, image, k):
                        facts[c] = eg.add("const.b", truths.pop())
                        continue
            for node in eg.nodes(c):
                if node[0] not in LOOP_OPS:
                    stack.extend(node[2])
        return facts


def _monotone_decided(op: str, image: Interval, k: int) -> bool:
    """Whether ``t op k`` has one value on the whole interval (the ends agreeing suffices for the orderings; for
    ``==``/``!=`` the interval must not hold ``k`` unless it is ``[k, k]``)."""
    if op in ("eq.i", "ne.i"):
        return image[0] == image[1] or not image[0] <= k <= image[1]
    return True
