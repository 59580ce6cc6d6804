"""Validation-only loop-shift rules: a loop whose counter starts one step before another loop's meets it.

What this module owns
    * :class:`ShiftedCounterPeel` (``loop-peel-shifted``, group ``validate.loop.shift``): a loop ``l`` with a
      counter ``i = theta_l(k, i + c)`` (``k``, ``c`` int constants) compared with loop invariants in its break
      test is peeled (rules/peel.py's rewrite) when another break test of a loop at the same depth compares, in
      the same place and with the same invariants, a counter ``theta_l(k + c, j + c)`` of the same step:
      ``for (i = 0; i <= n; i++)`` against ``for (j = 1; j <= n; j++)`` (the bounds shifted alike). After the
      peel the first loop is ``phi(C@0, X@0, eval_l(X+, pass_l(C+)))``, and its loop from iteration 1 starts
      its counter at ``k + c``: the other loop's, which the theta-bisimulation rule then merges with it when
      the bodies agree.
    * :class:`DecidedFirstExit` (``phi-first-exit``, same group): ``phi(c0, a, eval_l(X, pass_l(C)))`` is
      ``eval_l(X, pass_l(C))`` when ``X@0`` is ``a`` and ``c0`` implies ``C@0`` (both int comparisons of one
      term with constants, :func:`implies`): when ``c0`` holds the loop exits before its first iteration, so
      its value is ``X@0 = a``; otherwise the phi is its else arm. This closes the peel above: ``phi(0 > n, 0,
      L)`` against ``L``, the loop from ``j = 1`` whose test at iteration 0 is ``1 > n``.
    * :class:`NextConstBound` (``cmp-next-const``, group ``validate.compare.next``): a loop bound written strict
      or not, ``x > k`` as ``x >= k + 1`` and ``x <= k`` as ``x < k + 1`` for an int constant ``k`` other than
      ``MAX_VALUE`` (the only ``k`` where ``k + 1`` wraps around).

Why they are sound
    The peel is :class:`~.peel.LoopPeel`'s rewrite with another trigger (its argument: ``pass_l(C)`` is 0 when
    ``C@0`` holds, else one more than in the shifted loop). For the second, ``pass_l(C)`` is 0 whenever ``C@0``
    holds (the definition of pass), and ``eval_l(X, 0)`` is ``X@0``; ``C@0`` is read unguarded, as the peel
    reads its first test (``peel._unguarded``: in front of the loop the heap the guard waits for is the entry
    heap of the loop, the same in both arms). ``X@0`` and ``C@0`` are built from the e-graph's own nodes: each
    ``theta_l(a, b)`` read as ``a``, every other operator of the body applied to its children at iteration 0
    (every operator but ``l``'s own loop operators is pointwise in ``l``'s index; a body using an inner loop or
    ``l``'s own eval/pass is left alone). :func:`implies` reads ``x < k``, ``x <= k``, ``x > k``, ``x >= k``
    (either operand order, ``not`` of one) as an interval of ``x`` over the ints, exactly (no wrap-around:
    constants only), and asks whether the first interval lies in the second.

Why validation only: the groups are not among rules/policy.py's ``SAFE_GROUPS``; the optimizer gains nothing
from a peeled copy it is not looking for.

Inputs / outputs: an e-graph after rebuild; new nodes and unions. Each loop is peeled at most once per e-graph
and its peeled copy never (:class:`~.peel.LoopPeel`'s bookkeeping); each phi and eval pair tried at most
:data:`MAX_ATTEMPTS` times. Every match tried, class read at iteration 0 and node added is charged to the
e-graph's loop-rule meter (rules/loopwork.py); once it is spent these rules find no more matches.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from ..egraph.explain import Reason
from .loopwork import LoopWork, MeteredPeel, meter
from .peel import _evals_at, _OWN_LOOP_OPS

if TYPE_CHECKING:
    from ..epeg import EPeg

__all__ = ["ShiftedCounterPeel", "DecidedFirstExit", "NextConstBound", "implies", "counters"]

INT_MIN, INT_MAX = -2**31, 2**31 - 1
MAX_FIRST_NODES = 60  # nodes DecidedFirstExit may build for X@0 and C@0: a loop's test and one value
MAX_ATTEMPTS = 3  # of DecidedFirstExit per phi and eval class


def _int(eg: EPeg, cid: int) -> int | None:
    k = eg.const(cid)
    return k[1] if k is not None and k[0] == "const.i" else None


def counters(eg: EPeg, loop: int) -> list[tuple[int, int, int]]:
    """(class, start, step) of every ``theta_loop(k, i + c)`` with int constants ``k`` and ``c``."""
    out = []
    find = eg.find
    for cid in eg.classes_with_op("theta"):
        for op, attr, ch in eg.nodes(cid):
            if op != "theta" or attr != loop:
                continue
            start = _int(eg, ch[0])
            if start is None:
                continue
            for nop, _na, nch in eg.nodes(ch[1]):
                if nop != "add.i":
                    continue
                for x, c in ((nch[0], nch[1]), (nch[1], nch[0])):
                    step = _int(eg, c)
                    if step is not None and find(x) == find(cid):
                        out.append((find(cid), start, step))
    return out


class ShiftedCounterPeel(MeteredPeel):
    """See the module docstring."""

    name = "loop-peel-shifted"
    group = "validate.loop.shift"

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        if meter(eg).spent:
            return [], False
        done = {eg.find(x) for x in self._seen(eg)}
        tests: dict[int, list[tuple[int, int, tuple, int, int]]] = {}  # loop -> (pass, cond, shape, start, step)
        known: dict[int, dict[int, tuple[int, int]]] = {}  # loop -> its counters' (start, step)
        for p in sorted(eg.classes_with_op("pass")):
            for op, attr, ch in eg.nodes(p):
                if op == "pass" and isinstance(attr, int):
                    if attr not in known:
                        known[attr] = {c: (start, step) for c, start, step in counters(eg, attr)}
                        tests[attr] = []
                    tests[attr] += [(p, ch[0], *t) for t in _counter_tests(eg, attr, ch[0], known[attr])]
        out = []
        for loop, found in sorted(tests.items()):
            later = {(shape, start, step) for _p, _c, shape, start, step in found}
            for p, cond, shape, start, step in found:
                if p in done or ((shape, _wrap(start + step), step) not in later):
                    continue
                evals = _evals_at(eg, p, loop)
                if evals:
                    done.add(p)
                    out.append((p, loop, cond, tuple(evals)))
            if len(out) >= limit:
                break
        return out[:limit], False


def _wrap(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def _counter_tests(eg: EPeg, loop: int, cond: int, counter: dict[int, tuple[int, int]]
                   ) -> list[tuple[tuple, int, int]]:
    """(shape, start, step) of each way the break test ``cond`` compares a counter of ``counter`` (class ->
    start, step) with loop invariants: the shape is the comparison with the counter's place marked and the
    other operands (the bound), so two tests of one shape differ only in their counter ("bounds shifted
    alike")."""
    find = eg.find
    classes = [find(cond)] + [find(ch[1]) for op, _a, ch in eg.nodes(cond) if op == "guard"]
    out = []
    for cls in classes:
        for op, attr, ch in eg.nodes(cls):
            if op not in _BOUNDS and op not in ("eq.i", "ne.i"):
                continue
            for i, c in enumerate(ch):
                got = counter.get(find(c))
                others = tuple(find(x) for j, x in enumerate(ch) if j != i)
                if got is not None and not any(eg.varies(x, loop) for x in others):
                    out.append(((op, attr, i, others), *got))
    return out


# -- a phi in front of a loop that exits at once under its condition ------------------------------------------
_BOUNDS = {"lt.i": (None, -1), "le.i": (None, 0), "gt.i": (1, None), "ge.i": (0, None)}
_FLIP = {"lt.i": "gt.i", "le.i": "ge.i", "gt.i": "lt.i", "ge.i": "le.i"}
_NEGATE = {"lt.i": "ge.i", "le.i": "gt.i", "gt.i": "le.i", "ge.i": "lt.i"}


def _intervals(eg: EPeg, cid: int) -> list[tuple[int, int, int]]:
    """(term class, low, high): each way ``cid`` reads as ``low <= term <= high`` (an int comparison of one term
    with a constant, or its ``not``)."""
    out = []
    for op, _attr, ch in eg.nodes(cid):
        negate = False
        if op == "not":
            inner = [(o, c) for o, _a, c in eg.nodes(ch[0]) if o in _BOUNDS]
            if not inner:
                continue
            op, ch = inner[0]
            negate = True
        if op not in _BOUNDS:
            continue
        for term, k, rel in ((ch[0], _int(eg, ch[1]), op), (ch[1], _int(eg, ch[0]), _FLIP[op])):
            if k is None or _int(eg, term) is not None:
                continue
            rel = _NEGATE[rel] if negate else rel
            lo_off, hi_off = _BOUNDS[rel]
            lo = INT_MIN if lo_off is None else k + lo_off
            hi = INT_MAX if hi_off is None else k + hi_off
            out.append((eg.find(term), lo, hi))
    return out


def implies(eg: EPeg, a: int, b: int) -> bool:
    """Condition ``a`` implies condition ``b``: both bound one int term by constants, and ``a``'s interval lies in
    ``b``'s (an empty interval of ``a`` implies anything of the same term)."""
    if eg.find(a) == eg.find(b):
        return True
    for term, lo, hi in _intervals(eg, a):
        for term2, lo2, hi2 in _intervals(eg, b):
            if term == term2 and (lo > hi or (lo2 <= lo and hi <= hi2)):
                return True
    return False


class _FirstIteration:
    """Classes at iteration 0 of loop ``loop``, each built from its oldest node that can be (a node whose children
    lead back to a class being built, ``phi(c, true, false)`` in the class of ``c``, is passed over; thetas are
    read as their initial values). Each class is read once, a failure too (without that, a class reached along
    many paths was read again along each: millions of reads for one phi), and each read and node built is
    charged to ``work``; once it is spent nothing more is built."""

    def __init__(self, eg: EPeg, loop: int, work: LoopWork) -> None:
        self.eg, self.loop, self.work = eg, loop, work
        self.memo: dict[int, int | None] = {}
        self.busy: set[int] = set()  # classes being built: a cycle not through a theta gives up
        self.built = 0

    def at(self, cid: int) -> int | None:
        eg = self.eg
        cid = eg.find(cid)
        if not eg.varies(cid, self.loop):
            return cid
        if cid in self.memo:
            return self.memo[cid]
        if cid in self.busy:
            return None  # on this path only: not remembered
        nodes = eg.nodes(cid)
        if not nodes or self.built >= MAX_FIRST_NODES or self.work.spent:
            return None
        self.work.charge(1)
        self.busy.add(cid)
        out = None
        try:
            for node in sorted(nodes, key=lambda n: eg._memo.get(n, 1 << 60)):  # oldest first
                out = self._build(cid, node)
                if out is not None:
                    break
        finally:
            self.busy.discard(cid)
        self.memo[cid] = out
        return out

    def _build(self, cid: int, node: tuple) -> int | None:
        eg = self.eg
        op, attr, ch = node
        if op == "theta":
            if attr != self.loop or eg.varies(ch[0], self.loop):
                return None  # an inner loop, or not a loop-entry value
            out = eg.find(ch[0])
        elif op == "guard":
            got = self.at(ch[1])
            if got is None:
                return None
            out = got
        elif attr == self.loop and op in _OWN_LOOP_OPS or op in ("eval", "pass"):
            return None
        else:
            kids = []
            for c in ch:
                got = self.at(c)
                if got is None:
                    return None
                kids.append(got)
            self.built += 1
            self.work.charge(1)
            out = eg.add(op, attr, kids)
        return out


class DecidedFirstExit:
    """See the module docstring."""

    name = "phi-first-exit"
    group = "validate.loop.shift"
    source = "builtin"
    depth = None
    cache_matches = False

    def __init__(self) -> None:
        self._graph: weakref.ref | None = None
        self._tried: dict[tuple[int, int], int] = {}

    def _seen(self, eg: EPeg) -> dict[tuple[int, int], int]:
        """(phi class, eval class) -> attempts so far in ``eg``: a pair is tried again (up to
        :data:`MAX_ATTEMPTS`) as other rules make ``X@0`` equal to the phi's arm (``x + 0`` is ``x``)."""
        if self._graph is None or self._graph() is not eg:
            self._graph = weakref.ref(eg)
            self._tried = {}
        return self._tried

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        if meter(eg).spent:
            return [], False
        tried = self._seen(eg)
        find = eg.find
        out = []
        for cid in sorted(eg.classes_with_op("phi")):
            for op, _attr, ch in eg.nodes(cid):
                if op != "phi" or not _intervals(eg, ch[0]):
                    continue
                for eop, loop, ech in eg.nodes(ch[2]):
                    key = (find(cid), find(ch[2]))
                    if eop != "eval" or not isinstance(loop, int) or tried.get(key, 0) >= MAX_ATTEMPTS:
                        continue
                    passes = [pch for pop, pattr, pch in eg.nodes(ech[1]) if pop == "pass" and pattr == loop]
                    if passes:
                        tried[key] = tried.get(key, 0) + 1
                        out.append((find(cid), find(ch[0]), find(ch[1]), find(ch[2]), loop, ech[0], passes[0][0]))
            if len(out) >= limit:
                break
        return out[:limit], False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        phi, c0, a, e, loop, x, cond = match
        work = meter(eg)
        work.charge(1)
        first = _FirstIteration(eg, loop, work)
        # the test first: it is a few nodes, and it rules out most matches before the value is built
        c_first = first.at(cond)
        if c_first is None or not implies(eg, c0, c_first):
            return False
        x0 = first.at(x)
        if x0 is None or eg.find(x0) != eg.find(a):
            return False
        return eg.union(phi, e, Reason(self.name, ("phi", "eval"), (phi, e)))


# -- a bound written strict or not -------------------------------------------------------------------------------
_NEXT = {"gt.i": "ge.i", "le.i": "lt.i"}  # x > k is x >= k + 1; x <= k is x < k + 1


class NextConstBound:
    """``x > k`` is ``x >= k + 1`` and ``x <= k`` is ``x < k + 1`` for an int constant ``k`` other than
    ``MAX_VALUE`` (where ``k + 1`` wraps: ``x > MAX_VALUE`` is false, ``x >= MIN_VALUE`` true): ``while (x <= 9)``
    and ``while (x < 10)`` are one test (``cmp-next-const``, group ``validate.compare.next``; EqBench
    ``REVE/bug15``). One way only, to ``k + 1``, so no chain of constants grows."""

    name = "cmp-next-const"
    group = "validate.compare.next"
    source = "builtin"
    depth = None
    cache_matches = True

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for op, to in _NEXT.items():
            for cid in sorted(eg.classes_with_op(op)):
                for nop, _attr, ch in eg.nodes(cid):
                    k = _int(eg, ch[1]) if nop == op else None
                    if k is not None and k != INT_MAX:
                        out.append((eg.find(cid), to, eg.find(ch[0]), k + 1))
        # more matches than the limit is the runner's to judge (it bans the rule for a while), not a deadline
        return out[:limit], False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        cid, op, x, bound = match
        rhs = eg.add(op, None, (x, eg.add("const.i", bound)))
        return eg.union(cid, rhs, Reason(self.name, ("x", "k"), (x, bound)))
