"""``optimize``'s input size budget under ``--goal speed`` (``--size-budget input``, the default; issue 15):
which rewrites of one run to withdraw so that the rewritten methods together are no larger than their originals.

What this module owns
    :class:`Rewrite` (one kept rewrite as the budget sees it: its key, bytes before and after, predicted gain),
    :class:`Choice` and :func:`choose` (the exact choice of the rewrites to withdraw). It knows nothing of class
    files, workers or reports: ``pipeline.py`` gathers every method's result of the run, asks :func:`choose`,
    and merges the classes with the withdrawn methods' original code.

The problem
    Each rewrite ``i`` changes its method by ``delta_i = after_i - before_i`` bytes for a predicted gain
    ``gain_i`` (the emitted cost saved, loop-weighted: ``codecost.py``). Rewrites with ``delta_i <= 0`` are always
    kept: they fund the growing ones. Of the growing ones, keep the set of the largest total gain whose bytes,
    with the shrinking ones', are no more than the originals': a 0/1 knapsack of capacity ``savings = -sum of
    the negative deltas``. Stated as what is withdrawn: the growing rewrites ``W`` of the least total gain with
    ``sum(delta, W) >= excess`` (``excess``: the growing deltas' sum minus ``savings``), a covering knapsack
    solved exactly by dynamic programming over ``0 .. excess`` (the withdrawn bytes so far, capped at
    ``excess``): ``O(n * excess)`` for ``n`` growing rewrites, and ``excess`` is the overrun, usually a few
    bytes to a few hundred.

Ties (same input, same choice, whatever the order the results came in)
    The growing rewrites are sorted by ``key`` (class name, method name, descriptor) and the withdrawn sets are
    compared by ``(total gain, mask)``, where ``mask`` has bit ``n-1-k`` for the ``k``-th rewrite in that order:
    among the sets of least gain, the one that keeps the first rewrite of the order if any such set does, then
    the second, and so on. That order is total on sets, so the choice is unique, and additive (a set's value is
    the sum of its members'; translation-invariant), so the dynamic programme, which keeps the least value per
    capped byte count, finds it exactly.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Rewrite", "Choice", "choose"]


@dataclass(frozen=True, slots=True)
class Rewrite:
    """One rewrite the run kept: ``key`` (class name, method name, descriptor), its code bytes before and after,
    and ``gain``: its predicted gain (emitted cost before minus after)."""

    key: tuple[str, str, str]
    before: int
    after: int
    gain: int

    @property
    def delta(self) -> int:
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class Choice:
    """:func:`choose`'s answer: ``withdrawn``, indices into the rewrites given, in increasing order; ``excess``,
    how many bytes the rewrites together were over their originals (0 or less: nothing withdrawn)."""

    withdrawn: tuple[int, ...]
    excess: int


def choose(rewrites: list[Rewrite]) -> Choice:
    """The rewrites to withdraw so that the others together are no larger than their originals, losing the least
    predicted gain (module docstring: exact; ties by the (class, method, descriptor) order). Keys must be
    distinct."""
    growing = sorted((i for i, r in enumerate(rewrites) if r.delta > 0), key=lambda i: rewrites[i].key)
    savings = -sum(r.delta for r in rewrites if r.delta < 0)
    excess = sum(rewrites[i].delta for i in growing) - savings
    if excess <= 0:
        return Choice((), excess)
    n = len(growing)
    # best[c]: the least (gain, mask) of a set of the growing rewrites seen so far whose bytes, capped at
    # ``excess``, are c; None: no such set
    best: list[tuple[int, int] | None] = [None] * (excess + 1)
    best[0] = (0, 0)
    for k, i in enumerate(growing):
        w, g, bit = rewrites[i].delta, rewrites[i].gain, 1 << (n - 1 - k)
        new = list(best)  # each rewrite at most once: read the old row, write a new one
        for c, value in enumerate(best):
            if value is None:
                continue
            t = min(excess, c + w)
            cand = (value[0] + g, value[1] | bit)
            old = new[t]
            if old is None or cand < old:
                new[t] = cand
        best = new
    chosen = best[excess]
    assert chosen is not None  # withdrawing every growing rewrite always covers the excess
    mask = chosen[1]
    return Choice(tuple(sorted(i for k, i in enumerate(growing) if mask >> (n - 1 - k) & 1)), excess)
