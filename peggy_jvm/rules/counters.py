"""Validation-only closed form: a second counter of a counting loop, read at the loop's exit.

What this module owns
    :class:`CounterAtExit` (``counter-at-exit``, group ``validate.loop.counters``): in a loop ``l`` that exits on a
    counter ``i = theta_l(a, i + 1)`` reaching ``i >= n`` (or ``i = theta_l(a, i - 1)`` reaching ``i <= n``; ``a``
    and ``n`` invariant), the value at the exit of another counter ``j = theta_l(b, j + s)`` (``s`` is 1 or -1),
    ``eval_l(j, pass_l(i >= n))``, is ``phi(a >= n, b, b + s * (n - a))`` (counting down: ``phi(a <= n, b, b + s *
    (a - n))``). ``peg.loop.closed``'s ``count-up-exit`` gives the exit value of the tested counter itself; this
    gives the others: ``i = 0; j = 0; while (i < n + n) { j++; i++; }`` against ``i = n + n; j = 0; while (i > 0)
    { j++; i--; }`` (EqBench ``REVE/loop5``: both ``phi(n + n <= 0, 0, n + n)``).

Why it is sound
    Counting up, the loop exits at iteration 0 when ``a >= n`` (then ``j`` is ``b``); otherwise ``i`` takes ``a,
    a + 1, ...`` and the first value ``>= n`` is ``n`` itself (no value below ``n <= MAX_VALUE`` wraps), reached
    after ``K = n - a`` iterations, a number between 1 and 2^32 - 1. ``j`` after ``K`` iterations is ``b + s * K``
    in Z/2^32, and ``n - a`` computed with wrap-around is ``K`` modulo 2^32, so the int expression is exact even
    when ``K`` exceeds ``MAX_VALUE``. Counting down is the mirror image. A break test guarded by the iteration's
    heap (``guard(sigma, i >= n)``) may end the loop earlier by an exception, but then the method ends with that
    exception and the value is never observed (``count-up-exit-guarded``'s argument).

Why validation only: the group is not among rules/policy.py's ``SAFE_GROUPS``; the optimizer's extraction has no
use for it (the closed form costs what the loop's counter does).

Inputs / outputs: an e-graph after rebuild; new nodes and one union per eval of such a counter (each tried once).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..egraph.explain import Reason

if TYPE_CHECKING:
    from ..epeg import EPeg

__all__ = ["CounterAtExit"]

#: break test operator -> the step of the counter it ends (a counter stepping up ends on ``>=``, down on ``<=``)
_EXITS = {"ge.i": 1, "le.i": -1}


def _steps(eg: EPeg, cid: int, loop: int) -> list[tuple[int, int]]:
    """(initial value class, step) of each ``theta_loop(a, x + s)`` of class ``cid`` with ``s`` 1 or -1."""
    find = eg.find
    out = []
    for op, attr, ch in eg.nodes(cid):
        if op != "theta" or attr != loop:
            continue
        for nop, _a, nch in eg.nodes(ch[1]):
            if nop != "add.i":
                continue
            for x, c in ((nch[0], nch[1]), (nch[1], nch[0])):
                k = eg.const(c)
                if find(x) == find(cid) and k is not None and k[0] == "const.i" and k[1] in (1, -1):
                    out.append((find(ch[0]), k[1]))
    return out


def _exits(eg: EPeg, cond: int, loop: int) -> list[tuple[int, int, int, int]]:
    """(counter class, its initial value, its step, bound) of each counter exit ``cond`` reads as: ``i >= n`` for
    ``i`` stepping up, ``i <= n`` stepping down, ``n`` invariant; through a ``guard``."""
    classes = [eg.find(cond)] + [eg.find(ch[1]) for op, _a, ch in eg.nodes(cond) if op == "guard"]
    out = []
    for cls in classes:
        for op, _attr, ch in eg.nodes(cls):
            step = _EXITS.get(op)
            if step is None or eg.varies(ch[1], loop):
                continue
            for a, s in _steps(eg, ch[0], loop):
                if s == step:
                    out.append((eg.find(ch[0]), a, s, eg.find(ch[1])))
    return out


class CounterAtExit:
    """See the module docstring."""

    name = "counter-at-exit"
    group = "validate.loop.counters"
    source = "builtin"
    depth = None
    cache_matches = True

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        find = eg.find
        out = []
        for cid in sorted(eg.classes_with_op("eval")):
            for op, loop, ch in eg.nodes(cid):
                if op != "eval" or not isinstance(loop, int):
                    continue
                steps = _steps(eg, ch[0], loop)
                if not steps:
                    continue
                for pop, pattr, pch in eg.nodes(ch[1]):
                    if pop != "pass" or pattr != loop:
                        continue
                    for counter, a, step, bound in _exits(eg, pch[0], loop):
                        if counter == find(ch[0]):
                            continue  # the tested counter itself: peg.loop.closed's count-up-exit
                        for b, s in steps:
                            out.append((find(cid), a, step, bound, b, s))
            if len(out) >= limit:
                break
        return out[:limit], len(out) > limit

    def apply(self, eg: EPeg, match: tuple) -> bool:
        cid, a, step, bound, b, s = match
        if step == 1:  # i from a up to n: exits at once when a >= n, else after n - a iterations
            first, count = eg.add("ge.i", None, (a, bound)), eg.add("sub.i", None, (bound, a))
        else:  # i from a down to n
            first, count = eg.add("le.i", None, (a, bound)), eg.add("sub.i", None, (a, bound))
        later = eg.add("add.i" if s == 1 else "sub.i", None, (b, count))
        rhs = eg.add("phi", None, (first, b, later))
        return eg.union(cid, rhs, Reason(self.name, ("eval", "a", "n", "b"), (cid, a, bound, b)))
