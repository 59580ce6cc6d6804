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
    ``excess``): ``O(n * excess)`` for ``n`` growing rewrites; or, when the shrinking rewrites save less than
    that, as what is kept, a packing knapsack over ``0 .. savings``: ``O(n * min(excess, savings))`` either
    way (2,000 growing rewrites 2,000 bytes over: about 1.5 s of CPU; on the corpus jars a few at most).

Ties (same input, same choice, whatever the order the results came in)
    The growing rewrites are sorted by ``key`` (class name, method name, descriptor) and the withdrawn sets are
    compared by ``(total gain, mask)``, where ``mask`` has bit ``n-1-k`` for the ``k``-th rewrite in that order:
    among the sets of least gain, the one that keeps the first rewrite of the order if any such set does, then
    the second, and so on. That order is total on sets, so the choice is unique, and additive (a set's value is
    the sum of its members'; translation-invariant), so the dynamic programme, which keeps the least value per
    capped byte count (or the greatest kept value per byte count), finds it exactly.
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
    predicted gain (module docstring: exact; ties by the (class, method, descriptor) order, equal keys in the
    order given)."""
    growing = sorted((i for i, r in enumerate(rewrites) if r.delta > 0), key=lambda i: rewrites[i].key)
    savings = -sum(r.delta for r in rewrites if r.delta < 0)
    excess = sum(rewrites[i].delta for i in growing) - savings
    if excess <= 0:
        return Choice((), excess)
    items = [(rewrites[i].delta, rewrites[i].gain) for i in growing]
    # the smaller of the two tables: what is withdrawn over 0..excess, or what is kept over 0..savings (a jar
    # of loop nests has little to save and much over, a jar of round trips the other way)
    mask = _withdrawn_by_covering(items, excess) if excess <= savings else _withdrawn_by_packing(items, savings)
    n = len(items)
    return Choice(tuple(sorted(i for k, i in enumerate(growing) if mask >> (n - 1 - k) & 1)), excess)


def _withdrawn_by_covering(items: list[tuple[int, int]], excess: int) -> int:
    """The withdrawn set (as a mask, bit ``n-1-k`` for item ``k``) of least (gain, mask) whose bytes are at
    least ``excess``: ``best[c]``, the least value of a set of the items seen so far whose bytes, capped at
    ``excess``, are ``c``."""
    n = len(items)
    best: list[tuple[int, int] | None] = [None] * (excess + 1)
    best[0] = (0, 0)
    for k, (w, g) in enumerate(items):
        bit = 1 << (n - 1 - k)
        new = list(best)  # each item at most once: read the old row, write a new one
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
    assert chosen is not None  # withdrawing every item always covers the excess
    return chosen[1]


def _withdrawn_by_packing(items: list[tuple[int, int]], savings: int) -> int:
    """The same set by its complement: the kept set of greatest (gain, mask) whose bytes are at most ``savings``
    (``best[c]``: the greatest value of a kept set of exactly ``c`` bytes). Withdrawn gain is the total minus
    the kept, and the withdrawn mask all bits minus the kept one, so the orders agree: the same answer as
    :func:`_withdrawn_by_covering`."""
    n = len(items)
    best: list[tuple[int, int] | None] = [None] * (savings + 1)
    best[0] = (0, 0)
    for k, (w, g) in enumerate(items):
        if w > savings:
            continue
        bit = 1 << (n - 1 - k)
        new = list(best)
        for c in range(savings - w + 1):
            value = best[c]
            if value is None:
                continue
            cand = (value[0] + g, value[1] | bit)
            old = new[c + w]
            if old is None or cand > old:
                new[c + w] = cand
        best = new
    kept = max(v for v in best if v is not None)[1]
    return ((1 << n) - 1) ^ kept
