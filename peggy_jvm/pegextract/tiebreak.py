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
    validity, DAG cost, so classes the swap leaves unreached stop counting). The round keeps the best swap that
    lowers the pair (primary, secondary) of the whole selection, and among equal pairs the one leaving the
    fewest nodes that are not the builder's: a first-found swap took jacobi1d's ``i = theta(1, i + 1)`` for
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
#: one
TIE_TRIES = 64


def _key(pp: PegProblem, choices: dict[str, NodeId], report: SelectionReport,
         original: frozenset[NodeId]) -> tuple[float, float, int]:
    """(primary cost, secondary cost, chosen nodes that are not the builder's) of a valid selection."""
    chosen = [choices[c] for c in report.reached]
    return (report.cost, math.fsum(pp.secondary.get(n, 0.0) for n in chosen),
            sum(1 for n in chosen if n not in original))


def _candidates(pp: PegProblem, choices: dict[str, NodeId], reached: set[str]) -> list[tuple[str, NodeId]]:
    """The swaps worth evaluating, in class-number then node order: another node of a reached class, its
    children reached already, no dearer by the primary cost and cheaper by one of the two costs."""
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
            if a.cost == cur.cost and sec.get(alt, 0.0) >= sec.get(cur.id, 0.0):
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
    while spent < tries:
        step: tuple[tuple[float, float, int], dict[str, NodeId], SelectionReport] | None = None
        for c, alt in _candidates(pp, choices, set(report.reached)):
            if spent >= tries:
                break
            spent += 1
            trial = {**choices, c: alt}
            r = evaluate_selection(problem, Selection(trial))
            if not r.valid:
                continue
            k = _key(pp, trial, r, original)
            if k[:2] < best[:2] and (step is None or k < step[0]):
                step = (k, trial, r)
        if step is None:
            break
        best, choices, report = step
    return Selection(choices)
