"""Loop unswitching as an e-graph rewrite: a loop-invariant test inside a loop becomes a test of two loops.

What this module owns
    :class:`LoopUnswitch` (``loop-unswitch``, group ``peg.loop.unswitch``). For a loop ``l`` exited at
    ``P = pass_l(C)`` whose body holds a ``phi(c, a, b)`` with ``c`` invariant in ``l`` (and in every deeper
    loop), every ``eval_l(X, P)`` equals::

        phi(c, eval_l(X[c := true], pass_l(C[c := true])), eval_l(X[c := false], pass_l(C[c := false])))

    where ``v[c := true]`` is the copy of the whole loop body (every class varying in ``l``, its thetas closed
    again) with ``c`` replaced by true, and the facts :func:`.branchfacts.arm_facts` finds (``x == k``) too; the
    copy is :class:`.branchfacts.Assume`'s, with ``whole=l``. The other rules then fold ``phi(true, a, b)`` to
    ``a`` in each copy, so each loop has only one arm of the test, and the test runs once, in front of them.

Why it is sound (docs/axioms.md, "Facts from branch conditions"; the comment above ``SAFE_GROUPS``)
    ``c`` does not vary in ``l`` or deeper, so at a point ``o`` of the loops outside ``l`` it has one value
    ``c(o)`` in every iteration of ``l``. When ``c(o)`` holds, every class of the body equals its copy under
    ``c := true`` at every iteration (``Assume``'s argument: the substitution only passes through loop
    operators of loops ``c`` does not vary in), so ``X`` and ``C`` equal their copies as sequences,
    ``pass_l(C) = pass_l(C')`` and ``eval_l(X, P) = eval_l(X', P')``; the phi takes exactly that arm. Likewise
    when it does not hold. Effects keep their order: the heap is threaded through the copied thetas like any
    value, and each copy performs the original's effects on equal heaps in the same order; a loop that never
    ends never ends in either copy. Computing ``c`` in front of the loop observes nothing: ``c`` is a value (a
    pure node never throws; a value read from the heap was read before the loop, on the chain the loop starts
    from, since ``c`` does not vary in ``l``).

The cost (docs/cost-model.md)
    Nothing is free: the two loops are two copies of the body, each priced as the original (their own thetas,
    operators and ``pass``, 50 per loop), so extraction takes the unswitched form only when the copies, with the
    test's arm folded away in each, cost less in total than the loop with the test in it: when an arm makes
    the loop simpler (a loop with nothing left to do in one case is deleted, a step that becomes invariant has
    a closed form), not when the copies merely lose the test (tests/test_unswitch.py has both).

Inputs / outputs: an e-graph after rebuild; new nodes and one union per ``eval`` of the loop.

Invariants
    * Each loop is unswitched at most once (on the invariant test of the smallest class id), and the rule stops
      in an e-graph once :attr:`LoopUnswitch.max_loops` loops were tried or made there (an unswitching makes
      two: with the default 4, at most two unswitchings), so saturation adds a bounded number of nodes; a body
      of more than :attr:`LoopUnswitch.max_classes` classes is left alone, and only the body is copied.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .branchfacts import Assume, CopyTooLarge, PerGraph, arm_facts
from .peel import _evals_at, _union_evals

if TYPE_CHECKING:
    from ..epeg import EPeg

__all__ = ["LoopUnswitch"]


class LoopUnswitch(PerGraph):
    """See the module docstring. ``mutant`` builds deliberately wrong variants for the tests that must catch
    them: ``"swap"`` puts the loops in the wrong arms, ``"drop-effect"`` takes each arm's heap after the loop to be
    its heap before (the loop's effects dropped)."""

    name = "loop-unswitch"
    group = "peg.loop.unswitch"
    source = "builtin"
    depth = None
    cache_matches = False

    def __init__(self, max_classes: int = 120, max_loops: int = 4, mutant: str | None = None) -> None:
        self.max_classes = max_classes  # classes of the loop body a copy may hold
        self.max_loops = max_loops
        self.mutant = mutant
        super().__init__()  # the done set: pass classes unswitched, tried or made by unswitching

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        seen = self._seen(eg)
        if len(seen) >= self.max_loops:
            return [], False
        done = {eg.find(x) for x in seen}
        out = []
        for p in sorted(eg.classes_with_op("pass")):
            if p in done:
                continue
            for op, attr, ch in eg.nodes(p):
                if op != "pass":
                    continue
                evals = _evals_at(eg, p, attr)
                cond = _invariant_test(eg, attr, [ch[0]] + [x for _e, x in evals], self.max_classes) \
                    if evals else None
                if cond is not None:
                    out.append((p, attr, ch[0], tuple(evals), cond))
                    break
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        p, loop, test, evals, cond = match
        seen = self._seen(eg)
        if eg.find(p) in {eg.find(x) for x in seen} or len(seen) >= self.max_loops:
            return False
        seen.add(p)
        tops = [test] + [x for _e, x in evals]
        yes, no = arm_facts(eg, cond)
        try:
            arms = []
            for facts in (yes, no):
                copies = Assume(eg, facts, self.max_classes, whole=loop, rule=self.name).copy(tops)
                new_pass = eg.add("pass", loop, (copies[0],))
                seen.add(new_pass)
                arm = [eg.add("eval", loop, (x, new_pass)) for x in copies[1:]]
                if self.mutant == "drop-effect":  # the heap after the loop as if it did nothing
                    arm = [(_initial_heap(eg, loop, x) or e) if eg.is_linear(orig) else e
                           for (_e, orig), x, e in zip(evals, copies[1:], arm)]
                arms.append(arm)
        except CopyTooLarge:
            return False  # the copies made so far are unused classes: harmless, and the extractor skips them
        if self.mutant == "swap":
            arms.reverse()
        rhs = [(e, eg.add("phi", None, (cond, t, f))) for (e, _x), t, f in zip(evals, arms[0], arms[1])]
        return _union_evals(eg, self.name, p, rhs)


def _invariant_test(eg: EPeg, loop: int, tops: list[int], limit: int) -> int | None:
    """The smallest class ``c`` of a ``phi(c, ..)`` in the loop body reached from ``tops`` (at most ``limit``
    classes varying in ``loop``) that varies in neither ``loop`` nor any deeper loop and is no constant."""
    find = eg.find
    stack = [find(t) for t in tops]
    seen: set[int] = set()
    best: int | None = None
    while stack:
        c = stack.pop()
        if c in seen or not eg.varies(c, loop):
            continue
        seen.add(c)
        if len(seen) > limit:
            return None
        for op, _attr, ch in eg.nodes(c):
            if op == "phi":
                k = find(ch[0])
                if eg.variance(k) >> loop == 0 and eg.const(k) is None and (best is None or k < best):
                    best = k
            stack.extend(ch)
    return best


def _initial_heap(eg: EPeg, loop: int, heap: int) -> int | None:
    """The initial value of the loop's heap theta in class ``heap`` (the ``drop-effect`` mutant's arm: the
    loop's effects skipped)."""
    for op, attr, ch in eg.nodes(heap):
        if op == "theta" and attr == loop:
            return eg.find(ch[0])
    return None
