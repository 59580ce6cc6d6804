"""Validation-only loop peeling where the loop's first test is decided: its first iteration taken out in front.

What this module owns
    :class:`DecidedFirstTest` (``loop-peel-decided``, group ``validate.loop.peel``): for a loop ``l`` exited at
    ``P = pass_l(C)`` whose break condition at iteration 0, ``C@0``, is a constant (the loop's initial values
    and invariants decide it), every ``eval_l(X, P)`` is merged with ``phi(C@0, X@0, eval_l(X+, pass_l(C+)))``,
    :class:`~.peel.LoopPeel`'s form (``X@0``: ``X`` with each ``theta_l(a, b)`` read as ``a``; ``X+``: the
    sequence from iteration 1), whose ``phi`` the constant folds away. So ``i = 0; while (i <= 10) i++`` and
    ``i = 1; while (i <= 10) i++`` meet: the first loop's test at ``i = 0`` is decided false, and its loop from
    iteration 1 is the second loop (``theta(0 + 1, ...)``), shifted by one iteration.

Why it is sound
    It is loop peeling (rules/peel.py's argument, ``pass_l(C)`` is 0 when ``C@0`` holds, else one more than in
    the shifted loop, and ``X[1 + k] = X+[k]``; a loop that never exits never exits in either form), with
    another trigger: :class:`~.peel.LoopPeel` peels loops with a value special on the first iteration, this
    rule loops whose first test is known. The constant ``C@0`` is found by :func:`first_value`, which reads the
    condition's classes at iteration 0 through the nodes already in the e-graph (a ``theta_l`` as its initial
    value, a pure operator folded by the constant analysis' own ``fold_keys``, a ``phi`` of a constant
    condition as its arm, a ``guard`` as its condition, as ``peel._unguarded`` does in front of the loop); every
    step is an equality of the class, so the constant is ``C@0``'s value.

Why validation only
    The group is not among the optimizer's ``SAFE_GROUPS`` (rules/policy.py): the optimizer has no use for the
    copy (the extractor would rarely pick it) and its budgets are work units tuned without it. ``validate``
    saturates with every default group, so it gets this rule.

Inputs / outputs: an e-graph after rebuild; new nodes and one union per ``eval`` of the peeled loop.

Invariants: each loop (its ``pass`` class) peeled at most once per e-graph, its peeled copy never (as
:class:`~.peel.LoopPeel`: else ``while (i <= 10)`` would be unrolled ten times); at most ``max_classes`` body
classes copied; every first-test read and peel charged to the e-graph's loop-rule meter (rules/loopwork.py),
and no loop tried once it is spent.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..epeg.analyses import fold_keys
from .loopwork import MeteredPeel, meter

if TYPE_CHECKING:
    from ..epeg import EPeg

__all__ = ["DecidedFirstTest", "first_value"]

MAX_VISITS = 400  # classes read by one first_value: a break test is a handful of nodes


def first_value(eg: EPeg, loop: int, cid: int, budget: list[int] | None = None,
                busy: set[int] | None = None) -> tuple[str, Any] | None:
    """The constant key of class ``cid`` at iteration 0 of ``loop``, or None when the e-graph's nodes do not
    decide it (within :data:`MAX_VISITS` classes)."""
    budget = [MAX_VISITS] if budget is None else budget
    busy = set() if busy is None else busy
    cid = eg.find(cid)
    if not eg.varies(cid, loop):
        return eg.const(cid)
    known = eg.const(cid)
    if known is not None:  # the same constant in every iteration
        return known
    if cid in busy or budget[0] <= 0:
        return None
    budget[0] -= 1
    busy.add(cid)
    try:
        for op, attr, ch in eg.nodes(cid):
            got = _node_first(eg, loop, op, attr, ch, budget, busy)
            if got is not None:
                return got
        return None
    finally:
        busy.discard(cid)


def _node_first(eg: EPeg, loop: int, op: str, attr: Any, ch: tuple, budget: list[int],
                busy: set[int]) -> tuple[str, Any] | None:
    def first(c: int) -> tuple[str, Any] | None:
        return first_value(eg, loop, c, budget, busy)

    if op == "theta":
        return first(ch[0]) if attr == loop else None  # an inner loop's theta: not read through here
    if op == "guard":
        return first(ch[1])
    if op == "phi":
        cond = first(ch[0])
        return None if cond is None or cond[0] != "const.b" else first(ch[1] if cond[1] else ch[2])
    if not ch:
        return None
    keys = []
    for c in ch:
        k = first(c)
        if k is None:
            return None
        keys.append(k)
    return fold_keys(op, keys)


class DecidedFirstTest(MeteredPeel):
    """See the module docstring."""

    name = "loop-peel-decided"
    group = "validate.loop.peel"

    def wants(self, eg: EPeg, loop: int, cond: int, evals: list[tuple[int, int]]) -> bool:
        """A loop whose first break test is a constant (each read charged to the e-graph's meter)."""
        work = meter(eg)
        if work.spent or not isinstance(loop, int):
            return False
        visits = min(MAX_VISITS, work.left)
        budget = [visits]
        decided = first_value(eg, loop, cond, budget)
        work.charge(1 + visits - budget[0])
        return decided is not None and decided[0] == "const.b"
