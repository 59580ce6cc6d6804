"""Built-in rules: the axioms that need code, with names and groups like the ``.ax`` ones.

What this module owns
    * ``const-fold`` (group ``fold``): a class the constant analysis knows to equal a Java constant gets the
      ``const.X`` node for it (the folding itself, with :mod:`peggy_jvm.semantics`, is the analysis'), and is
      pruned to its leaf nodes (:meth:`EGraph.prune <peggy_jvm.egraph.egraph.EGraph.prune>`).
    * ``theta-bisimulation`` (group ``peg.loop``): two thetas of loop ``l`` with the same initial class whose
      next values are structurally equal ASSUMING the two thetas are equal are equal (loop induction). This is
      what proves ``theta(0, add(T, 5))`` equal to a strength-reduced ``theta(0, add(M, 5))``: congruence closure
      alone never merges two cycles. The comparison is :func:`~peggy_jvm.rules.induction.prove_by_induction`
      (also used by validation from the two roots): it goes through loop nests, and its witness is kept only
      when every cycle steps some loop back through a theta's next value without an eval, pass or shift of that
      loop, so both sides solve one system of equations with a unique solution. Inner loops, their passes and
      evals, and the sigma threaded through a loop nest are matched that way.
    * ``mul-pow2-shl`` / ``shl-pow2-mul`` (group ``arith.shift``): ``x * 2^k == x << k`` for int (k in 1..31,
      ``2^31`` being ``MIN_VALUE``) and long (k in 1..63): true in two's complement with wrap-around.
    * ``theta-linear`` (group ``peg.loop.closed``) and ``theta-factor`` (group ``peg.loop.strength``): an
      accumulator of an invariant step in closed form, and one of products by an invariant factor as the factor
      times the accumulator of the other operands (the arguments on the classes).
    * ``shift-count-mask`` (group ``arith.shift``): a constant shift count is reduced to ``count & 31`` (int) or
      ``& 63`` (long), which is what the JVM shifts by.

Inputs / outputs: each implements the :class:`~peggy_jvm.egraph.runner.Rewrite` protocol; :func:`builtin_rules`
lists fresh instances.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from ..egraph.clock import clock
from ..egraph.explain import Reason
from .boundfacts import BoundFacts
from .branchfacts import BranchFacts
from .hoist import LoopHoist
from .optimistic import LoopOptimism
from .induction import InductionMemo, prove_by_induction
from .firsttest import DecidedFirstTest
from .counters import CounterAtExit
from .loopshift import DecidedFirstExit, NextConstBound, ShiftedCounterPeel
from .peel import LoopPeel
from .arrays import ArrayCloneCopy, CheckcastNewArray, StoreDefaultIntoNew
from .strings import (BuilderAppendReturnsThis, BuilderInitAppend, BuilderToStringFresh, ConcatIndyFresh,
                      ConcatNoThrow, StringClassInit, StringLengthConst)
from .unswitch import LoopUnswitch

if TYPE_CHECKING:
    from ..epeg import EPeg

__all__ = ["ConstFold", "ThetaBisimulation", "ThetaLinear", "ThetaFactor", "accumulator", "MulPow2", "ShlPow2",
           "ShiftCountMask", "builtin_rules"]


class ConstFold:
    name = "const-fold"
    group = "fold"
    source = "builtin"
    depth = None
    cache_matches = False  # a class that gains structure again must be pruned again

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        memo = eg._memo
        find = eg.find
        for cid, cls in eg._classes.items():
            k = cls.data[0]
            if k is None:
                continue
            have = memo.get((k[0], k[1], ()))
            if have is not None and find(have) == cid and all(not n[2] for n in cls.nodes):
                continue
            out.append((cid, k))
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        cid, (op, attr) = match
        merged = eg.union(cid, eg.add(op, attr), Reason(self.name, ("value",), (attr,)))
        # A constant class needs no structure: keeping it lets rules build ever new constants out of it
        # (5 = 1 * 5 with associativity makes 25, 125, ...). egg's constant folding prunes the same way.
        eg.prune(cid, _is_leaf)
        return merged


def _is_leaf(node: tuple) -> bool:
    return not node[2]


class ThetaBisimulation:
    name = "theta-bisimulation"
    group = "peg.loop"
    source = "builtin"
    depth = None
    cache_matches = False

    def __init__(self, budget: int = 1000, max_pairs: int = 60, retry_after: int = 3) -> None:
        self.budget = budget  # comparisons per attempted pair (a re-lifted loop nest of three loops needs ~500)
        self.max_pairs = max_pairs  # attempted pairs per search
        self.retry_after = retry_after  # searches before a failed pair is tried again
        self._graph: weakref.ref | None = None
        self._failed: dict[tuple[int, int], tuple[int, int]] = {}  # pair -> (search no., unions) at failure
        self._searches = 0

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        if self._graph is None or self._graph() is not eg:  # one instance serves many e-graphs in turn
            self._graph = weakref.ref(eg)
            self._failed = {}
            self._searches = 0
        self._searches += 1
        eg.op_index()
        buckets: dict[tuple, list[int]] = {}
        for cid in eg.classes_with_op("theta"):
            for op, attr, ch in eg._classes[cid].nodes:
                if op == "theta":
                    bucket = buckets.setdefault((attr, ch[0]), [])
                    if cid not in bucket:
                        bucket.append(cid)
        out: list[list] = []
        tried = 0
        memo = InductionMemo(eg)  # the graph does not change during a search
        local: dict[int, int] = {}  # classes already proved equal in this search (no need to retry)
        unions = eg.proof.unions

        def rep(x: int) -> int:
            while local.get(x, x) != x:
                x = local[x]
            return x
        for (loop, _init), cids in buckets.items():
            if len(cids) < 2:
                continue
            for i in range(len(cids)):
                for j in range(i + 1, len(cids)):
                    a, b = cids[i], cids[j]
                    if rep(a) == rep(b):
                        continue
                    failed = self._failed.get((a, b))
                    if failed is not None and (failed[1] == unions or
                                               self._searches - failed[0] < self.retry_after):
                        continue  # nothing was merged since, or tried too recently: it would fail again
                    tried += 1
                    if tried > self.max_pairs:
                        return out, False
                    if clock() > deadline:
                        return out, True
                    pairs = prove_by_induction(eg, a, b, self.budget, deadline, memo)
                    if not pairs:
                        self._failed[(a, b)] = (self._searches, unions)
                        continue
                    out.append(pairs)
                    for x, y, _n, _m in pairs:
                        rx, ry = rep(x), rep(y)
                        if rx != ry:
                            local[rx] = ry
                    if len(out) >= limit:
                        return out, False
        return out, False

    def apply(self, eg: EPeg, match: list[tuple[int, int, tuple, tuple]]) -> bool:
        changed = False
        for x, y, n, m in match:
            # record the union between the two theta nodes' own ids, so an explanation shows how each theta
            # got into its class (e.g. by strength reduction) before the induction step
            a, b = _node_id(eg, n, x), _node_id(eg, m, y)
            changed |= eg.union(a, b, Reason(self.name, ("theta", "theta'"), (a, b)))
        return changed


def _node_id(eg: EPeg, node: tuple, default: int) -> int:
    """The id a node was registered under (the id it was created with, for most nodes)."""
    canon = (node[0], node[1], tuple(eg.find(c) for c in node[2]))
    cid = eg._memo.get(canon)
    return default if cid is None else cid


def _pow2(v: int, bits: int) -> int | None:
    """k when v is 2^k as a ``bits``-bit two's-complement value, 1 <= k < bits."""
    u = v & ((1 << bits) - 1)
    if u < 2 or u & (u - 1):
        return None
    return u.bit_length() - 1


class MulPow2:
    """``mul.i(x, 2^k) == shl.i(x, k)`` (and long)."""

    name = "mul-pow2-shl"
    group = "arith.shift"
    source = "builtin"
    depth = None
    cache_matches = True

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for op, cop, bits in (("mul.i", "const.i", 32), ("mul.l", "const.l", 64)):
            for cid in eg.classes_with_op(op):
                for n in eg._classes[cid].nodes:
                    if n[0] != op:
                        continue
                    for x, c in ((n[2][0], n[2][1]), (n[2][1], n[2][0])):
                        k = eg.const(c)
                        if k is not None and k[0] == cop:
                            s = _pow2(k[1], bits)
                            if s is not None:
                                out.append((cid, op, x, s))
                if len(out) >= limit:
                    return out, False
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        cid, op, x, s = match
        shl = eg.add("shl" + op[3:], None, (x, eg.add("const.i", s)))
        return eg.union(cid, shl, Reason(self.name, ("?x", "k"), (x, s)))


class ShlPow2:
    """``shl.i(x, k) == mul.i(x, 2^k)`` for a constant count (masked as the JVM does)."""

    name = "shl-pow2-mul"
    group = "arith.shift"
    source = "builtin"
    depth = None
    cache_matches = True

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for op, bits in (("shl.i", 32), ("shl.l", 64)):
            for cid in eg.classes_with_op(op):
                for n in eg._classes[cid].nodes:
                    if n[0] != op:
                        continue
                    k = eg.const(n[2][1])
                    if k is not None and k[0] == "const.i" and (k[1] & (bits - 1)) >= 1:
                        out.append((cid, op, n[2][0], k[1] & (bits - 1)))
                if len(out) >= limit:
                    return out, False
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        cid, op, x, s = match
        bits = 32 if op == "shl.i" else 64
        v = 1 << s
        v = v - (1 << bits) if v >= 1 << (bits - 1) else v
        mul = eg.add("mul" + op[3:], None, (x, eg.add("const" + op[3:], v)))
        return eg.union(cid, mul, Reason(self.name, ("?x", "k"), (x, s)))


class ShiftCountMask:
    name = "shift-count-mask"
    group = "arith.shift"
    source = "builtin"
    depth = None
    cache_matches = True

    _OPS = {"shl.i": 31, "shr.i": 31, "ushr.i": 31, "shl.l": 63, "shr.l": 63, "ushr.l": 63}

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for op, mask in self._OPS.items():
            for cid in eg.classes_with_op(op):
                for n in eg._classes[cid].nodes:
                    if n[0] != op:
                        continue
                    k = eg.const(n[2][1])
                    if k is not None and k[0] == "const.i" and k[1] & mask != k[1]:
                        out.append((cid, op, n[2][0], k[1] & mask))
        return out[:limit], False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        cid, op, x, s = match
        new = eg.add(op, None, (x, eg.add("const.i", s)))
        return eg.union(cid, new, Reason(self.name, ("?x", "count"), (x, s)))


class ThetaLinear:
    """``s = theta_l(a, s + c)`` with ``c`` invariant in ``l`` is ``a + i * c`` for the counter ``i = theta_l(0,
    i + 1)`` (linear induction variables; with ``count-up-exit`` and ``eval`` distribution this gives a loop's
    accumulators in closed form). Sound by induction on the loop-``l`` index ``k``: at 0 both are ``a`` (``0 * c
    = 0``); at ``k + 1`` the left is ``s_k + c`` and the right ``a + (i_k + 1) * c = (a + i_k * c) + c``, which is
    distributivity in Z/2^32 (int arithmetic wraps around on both sides alike). ``a`` is invariant (a theta's
    initial value always is). The counter is made when the loop has none; its variance is exactly ``{l}`` (it is
    ``k`` at index ``k``), which is set on it directly since the analysis cannot see through the new cycle."""

    name = "theta-linear"
    group = "peg.loop.closed"
    source = "builtin"
    depth = None
    cache_matches = False

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        find = eg.find
        for cid in eg.classes_with_op("theta"):
            for op, attr, ch in eg.nodes(cid):
                if op != "theta" or not isinstance(attr, int) or eg.varies(ch[0], attr):
                    continue
                for nop, _na, nch in eg.nodes(ch[1]):
                    if nop != "add.i":
                        continue
                    for x, c in ((nch[0], nch[1]), (nch[1], nch[0])):
                        if find(x) != find(cid) or eg.varies(c, attr):
                            continue
                        if eg.const(ch[0]) == ("const.i", 0) and eg.const(c) == ("const.i", 1):
                            continue  # the counter itself
                        out.append((find(cid), attr, find(ch[0]), find(c)))
            if len(out) >= limit:
                break
        return out[:limit], False

    @staticmethod
    def counter(eg: EPeg, loop: int) -> int:
        """The class of ``theta_loop(0, i + 1)``, made if the e-graph has none."""
        return accumulator(eg, loop, eg.add("const.i", 0), eg.add("const.i", 1), "add.i", "theta-linear")

    def apply(self, eg: EPeg, match: tuple) -> bool:
        cid, loop, a, c = match
        i = self.counter(eg, loop)
        rhs = eg.add("add.i", None, (a, eg.add("mul.i", None, (i, c))))
        return eg.union(cid, rhs, Reason(self.name, ("s", "a", "c"), (cid, a, c)))


def accumulator(eg: EPeg, loop: int, init: int, step: int, add: str, rule: str) -> int:
    """The class of ``u = theta_loop(init, u + step)`` (``add``: ``add.i`` or ``add.l``), made if the e-graph has
    none. A made one varies in ``loop`` and wherever ``init`` or ``step`` does (set directly: the analysis cannot
    see through the new cycle); ``rule`` names the union that closes it."""
    find = eg.find
    for cid in eg.classes_with_op("theta"):
        for op, attr, ch in eg.nodes(cid):
            if op == "theta" and attr == loop and find(ch[0]) == find(init) and \
                    eg.lookup(add, None, (cid, step)) == find(ch[1]):
                return find(cid)
    ph = eg.add_placeholder()
    eg._classes[ph].data[1] = eg.variance(init) | eg.variance(step) | (1 << loop)
    th = eg.add("theta", loop, (init, eg.add(add, None, (ph, step))))
    eg.union(ph, th, Reason(rule, ("accumulator",), (loop,)))
    return find(ph)


class ThetaFactor:
    """An accumulator of products by an invariant factor is the factor times the accumulator of the other
    operands: ``s = theta_l(a, s + x * k)`` with ``k`` invariant in ``l`` is ``a + u * k`` for ``u = theta_l(0, u
    + x)`` (int and long). Sound by induction on the loop-``l`` index ``j``: at 0 both are ``a`` (``0 * k = 0``);
    at ``j + 1`` the left is ``s_j + x_j * k`` and the right ``a + (u_j + x_j) * k = (a + u_j * k) + x_j * k``,
    distributivity in Z/2^32 and Z/2^64 (int and long arithmetic wrap around on both sides alike; no
    float/double: rounding does not distribute). ``x`` is read at the same index on both sides, whatever it
    depends on (``s`` itself included), and ``k`` has one value in every iteration of ``l``. With the ``eval``
    distribution the loop then adds ``x`` and the multiplication by ``k`` happens once, after it (``s += i * 50``
    is ``s' += i``, ``s' * 50`` at the exit). Only where ``x`` varies in ``l`` (an invariant product is
    ``theta-linear``'s) and ``k`` is not the constant 0 or 1; ``u`` is shared by every accumulator of the same
    ``x`` (:func:`accumulator`), so saturation adds one theta per (loop, ``x``).

    ``mutant="drop-init"``: ``u * k`` without ``a`` (a deliberate error, for the tests that show the self-check,
    ``validate`` and the rewrite fuzzer refuse it)."""

    name = "theta-factor"
    group = "peg.loop.strength"
    source = "builtin"
    depth = None
    cache_matches = False

    _ADD_MUL = {"add.i": ("mul.i", "const.i"), "add.l": ("mul.l", "const.l")}

    def __init__(self, mutant: str | None = None) -> None:
        self.mutant = mutant

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        find = eg.find
        for cid in eg.classes_with_op("theta"):
            for op, attr, ch in eg.nodes(cid):
                if op != "theta" or not isinstance(attr, int):
                    continue
                for nop, _na, nch in eg.nodes(ch[1]):
                    if nop not in self._ADD_MUL:
                        continue
                    mul, const = self._ADD_MUL[nop]
                    for own, term in ((nch[0], nch[1]), (nch[1], nch[0])):
                        if find(own) != find(cid):
                            continue
                        for mop, _ma, mch in eg.nodes(term):
                            if mop != mul:
                                continue
                            for x, k in ((mch[0], mch[1]), (mch[1], mch[0])):
                                if eg.varies(k, attr) or not eg.varies(x, attr) or \
                                        eg.const(k) in ((const, 0), (const, 1)):
                                    continue
                                out.append((find(cid), attr, nop, find(ch[0]), find(x), find(k)))
            if len(out) >= limit:
                break
        return out[:limit], False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        cid, loop, add, a, x, k = match
        mul, const = self._ADD_MUL[add]
        u = accumulator(eg, loop, eg.add(const, 0), x, add, self.name)
        rhs = eg.add(mul, None, (u, k))
        if self.mutant != "drop-init":
            rhs = eg.add(add, None, (a, rhs))
        return eg.union(cid, rhs, Reason(self.name, ("s", "a", "x", "k"), (cid, a, x, k)))


def builtin_rules() -> list:
    return [ConstFold(), ThetaBisimulation(), ThetaLinear(), ThetaFactor(), MulPow2(), ShlPow2(), ShiftCountMask(),
            BuilderAppendReturnsThis(), BuilderInitAppend(), StringLengthConst(), BuilderToStringFresh(),
            ConcatIndyFresh(), ConcatNoThrow(), StringClassInit(), ArrayCloneCopy(), CheckcastNewArray(),
            StoreDefaultIntoNew(), LoopPeel(), DecidedFirstTest(), ShiftedCounterPeel(), DecidedFirstExit(),
            NextConstBound(), CounterAtExit(),
            LoopHoist(), LoopUnswitch(), BranchFacts(), BoundFacts(), LoopOptimism()]

