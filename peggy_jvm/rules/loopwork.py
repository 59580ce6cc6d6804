"""The work cap of the validation-only loop rules in one e-graph (issue 17: validation bounded by work).

What this module owns
    :class:`LoopWork`, one meter per e-graph (:func:`meter`) shared by rules/firsttest.py's
    ``loop-peel-decided`` and rules/loopshift.py's ``loop-peel-shifted`` and ``phi-first-exit``, and
    :data:`MAX_LOOP_WORK`, what the meter starts with. Units: one per class read looking for a value at
    iteration 0 of a loop (``firsttest.first_value``, ``loopshift._FirstIteration``), one per match tried, one
    per e-node a peel or a first-iteration copy adds. When the meter is spent those rules find no more matches
    in that e-graph; the other rules go on.

Why
    These rules look far beyond their match (a loop's first value is read through its body) and are tried on
    every phi in front of every loop at every iteration; on a method with many loops and no pair they help
    (commons-math3's ``AdamsMoultonIntegrator.integrate``: 548 phi/loop matches tried, 2 merged) they took most
    of the proof's time, so a rewrite the optimizer proved in a second timed out in ``validate``. What they
    win, a loop started one step later or whose first test is decided, needs a few hundred units
    (:data:`MAX_LOOP_WORK` is set from the pair suite and EqBench, docs/validation.md).

Invariants: work, never time, so two runs of the same proof spend the cap alike; the meter of an e-graph lives
as long as it does (a weak reference), and nothing is charged for an e-graph the rules are not run on.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from .peel import LoopPeel

if TYPE_CHECKING:
    from ..egraph.egraph import EGraph
    from ..epeg import EPeg

__all__ = ["LoopWork", "MAX_LOOP_WORK", "MeteredPeel", "meter"]

#: units per e-graph for the validation-only loop rules together: EqBench's proofs spend at most 901 (p95 495), a
#: proof of commons-math3's AdamsMoultonIntegrator.integrate reaches the cap (module docstring)
MAX_LOOP_WORK = 5_000

_METERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # e-graph -> its LoopWork


class LoopWork:
    """What is left of one e-graph's loop-rule work (``left``; spent when not above 0)."""

    __slots__ = ("left",)

    def __init__(self, units: int) -> None:
        self.left = units

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def charge(self, units: int) -> None:
        self.left -= units


def meter(eg: EGraph) -> LoopWork:
    """The meter of ``eg``, started at :data:`MAX_LOOP_WORK` on first use (read through the module, so a test
    can set the cap)."""
    got = _METERS.get(eg)
    if got is None:
        got = _METERS[eg] = LoopWork(MAX_LOOP_WORK)
    return got


class MeteredPeel(LoopPeel):
    """:class:`~.peel.LoopPeel`'s rewrite for the validation-only triggers: no match once the e-graph's meter is
    spent, and each peel charged the e-nodes it adds."""

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        if meter(eg).spent:
            return [], False
        return super().search(eg, limit, deadline, roots)

    def apply(self, eg: EPeg, match: tuple) -> bool:
        before = eg.node_count
        try:
            return super().apply(eg, match)
        finally:
            meter(eg).charge(1 + eg.node_count - before)
