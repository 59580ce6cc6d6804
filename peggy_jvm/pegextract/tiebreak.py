"""Ties between equally cheap extractions go to the smaller code: a bounded pass after the solve.

What this module owns
    :func:`break_ties`: a valid selection -> a valid selection whose pair (primary cost, secondary cost) is
    no higher, compared primary first (primary: the goal's PEG cost, :mod:`.cost`; secondary: the other
    goal's, the nodes' sizes for ``--goal speed``, their speed cost for ``--goal size``), and
    :data:`TIE_TRIES`, its work budget.

Why
    The solver returns one of the cheapest selections, and among equal ones whichever it met first. Two forms
    of one value often cost the same by the speed model but not in bytes: ``i - 1`` as ``sub(i, 1)`` or, with
    ``i = theta(1, i + 1)``, as a second loop variable ``theta(0, i)`` (``BenchKernels.jacobi1d``: an
    ``iload; istore`` per iteration and a store before the loop, 10 bytes more, at the same PEG and emitted
    cost). Weighting size into the MaxSAT objective (``cost * K + size``) would need ``K`` above any
    selection's size, and with speed costs up to ``50 * 20**8`` per node such weights no longer fit the exact
    integer range of the solver's float costs; it would also change how much work the solver spends proving
    optimality, so methods far from any tie could change. A swap pass after the solve changes nothing else.

How
    In rounds: over the reached classes in class-number order, each other node of the class whose children
    are all reached already (so no new class needs a choice) and that is locally no dearer by the primary cost
    and cheaper by either cost is tried: the whole selection is evaluated (:func:`evaluate_selection`:
    validity, DAG cost, so classes the swap leaves unreached stop counting). A swap helps when it lowers the
    whole selection's (primary, secondary, nodes that are not the builder's), in that order: a node of the
    builder (or of a copy of the builder's loop, :func:`.select.original_nodes`) as cheap and as small as the
    current one is taken too (jacobi2d's hoisted copies: ``j + 1`` as ``add(j, 1)``, not ``add(j - 1, 2)``, which
    made ``j - 1`` a value read twice and the loop's update a copy). The round takes the best swap first, then
    the other helping ones in the order of their gain, each evaluated again and kept only while it still
    helps (a loop body's independent ties in one round). Among equal pairs the fewest nodes that are not the
    builder's: a first-found swap took jacobi1d's ``i = theta(1, i + 1)`` for
    ``(i - 1) + 1`` over a ``theta(0, i)`` (one loop variable fewer, but ``i``, used three times, then
    lowered to a store and three loads: 133 bytes and a dearer emitted cost), where the builder's
    ``sub(i, 1)`` for ``i - 1`` is as small. It stops when no swap helps or after :data:`TIE_TRIES`
    evaluations (work, not time: the same selection gives the same result).

Inputs: a :class:`.peg_problem.PegProblem` (its ``secondary`` costs), a selection valid for its problem, and
the problem nodes that are the builder's own (:func:`.select.original_nodes`).
Outputs: a selection, valid for the problem, never dearer by the primary cost. It is not checked here beyond
validity: :func:`.select.extract_peg` runs the full checks on it and falls back to the solver's selection when
they reject it.
"""
from __future__ import annotations

import math

from ..extract.problem import NodeId, Selection, SelectionReport, evaluate_selection
from .peg_problem import PegProblem, class_number

__all__ = ["TIE_TRIES", "break_ties"]

#: whole-selection evaluations one call may spend (each walks the reached classes once); jacobi1d's tie takes
#: one, jacobi2d's seven swaps two rounds of about 60 candidates
TIE_TRIES = 256


def _key(pp: PegProblem, choices: dict[str, NodeId], report: SelectionReport,
         original: frozenset[NodeId]) -> tuple[float, float, int]:
    """(primary cost, secondary cost, chosen nodes that are not the builder's) of a valid selection."""
    chosen = [choices[c] for c in report.reached]
    return (report.cost, math.fsum(pp.secondary.get(n, 0.0) for n in chosen),
            sum(1 for n in chosen if n not in original))


def _candidates(pp: PegProblem, choices: dict[str, NodeId], reached: set[str], original: frozenset[NodeId]
                ) -> list[tuple[str, NodeId]]:
    """The swaps worth evaluating, in class-number then node order: another node of a reached class, its
    children reached already, no dearer by the primary cost and cheaper by one of the two costs, or as cheap
    by both and the builder's where the current node is not."""
    problem = pp.problem
    nodes = problem.nodes
    sec = pp.secondary
    out = []
    for c in sorted(reached, key=class_number):
        cur = nodes[choices[c]]
        for alt in problem.classes.get(c, ()):
            a = nodes[alt]
            if alt == cur.id or a.cost > cur.cost or not all(k in reached for k in a.children):
                continue
            if a.cost == cur.cost and sec.get(alt, 0.0) >= sec.get(cur.id, 0.0) and not (
                    sec.get(alt, 0.0) == sec.get(cur.id, 0.0) and alt in original and cur.id not in original):
                continue
            out.append((c, alt))
    return out


def break_ties(pp: PegProblem, sel: Selection, original: frozenset[NodeId] = frozenset(),
               tries: int = TIE_TRIES) -> Selection:
    """``sel`` with nodes swapped for others of their class while the whole selection's (primary, secondary)
    cost goes down (see the module docstring); ``sel`` itself when it is invalid or nothing helps. Each round
    takes the best swap: the lowest (primary, secondary) and among those the fewest nodes that are not the
    builder's (``original``), so that of two equally small forms the one javac wrote is kept."""
    problem = pp.problem
    report = evaluate_selection(problem, sel)
    if not report.valid or not pp.secondary:
        return sel
    choices = dict(sel.choices)
    best = _key(pp, choices, report, original)
    spent = 0

    def better(c: str, alt: NodeId) -> tuple[tuple[float, float, int], dict[str, NodeId], SelectionReport] | None:
        """The selection with ``alt`` for ``c``'s node, when valid and better than the best so far (one try)."""
        nonlocal spent
        spent += 1
        trial = {**choices, c: alt}
        r = evaluate_selection(problem, Selection(trial))
        k = _key(pp, trial, r, original) if r.valid else best
        return (k, trial, r) if k < best else None

    while spent < tries:
        steps: list[tuple[tuple[float, float, int], int, str, NodeId]] = []
        for order, (c, alt) in enumerate(_candidates(pp, choices, set(report.reached), original)):
            if spent >= tries:
                break
            if (got := better(c, alt)) is not None:
                steps.append((got[0], order, c, alt))
        # the best swap first; then the others in the order of their gain, each kept only when the selection
        # with it is still better than without (evaluated again): one round takes the independent swaps of a
        # loop body (its sums, its index arithmetic) instead of one per round
        for n, (_k, _order, c, alt) in enumerate(sorted(steps)):
            if n > 0 and spent >= tries:
                break
            got = better(c, alt)
            if got is not None:
                best, choices, report = got
        if not steps:
            break
    return Selection(choices)
