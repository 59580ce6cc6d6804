"""The saturation stage: a PEG put into a fresh E-PEG (:class:`~peggy_jvm.epeg.EPeg`) and saturated with the
optimizer's rules (DESIGN section 4).

What this module owns
    :class:`Saturation` (the saturated E-PEG: e-graph, PEG node -> e-class, root class, the runner's report) and
    :func:`saturate`, the one place the full stage (``pipeline``) and ``show --epeg`` make an E-PEG, so that the
    two cannot drift apart (same rules, same limits, same e-graph).

Inputs: a sealed, well-formed PEG (``peg.build.build_peg``), the rewrites (``rules.policy.optimizer_rules``) and
:class:`~peggy_jvm.egraph.runner.Limits` (``budget.WorkBudget.saturation()`` in the optimizer). Outputs: a
:class:`Saturation`, which extraction (``pegextract``) starts from.
Invariants: the PEG is not changed; with limits that set no time limit (the optimizer's), the saturated e-graph
is a function of the PEG, the rewrites and the limits only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .egraph.runner import Limits, Rewrite, RunReport, Runner
from .epeg import EPeg
from .peg.graph import PEG
from .rules.inline import CalleeSource, choose_bodies, inline_calls

__all__ = ["Saturation", "saturate"]


@dataclass
class Saturation:
    """A PEG saturated in a fresh e-graph: what ``show --epeg`` draws and extraction starts from."""
    egraph: EPeg
    #: PEG node -> its e-class as added (not canonical: use ``egraph.find``)
    mapping: dict[int, int]
    root: int  # the root's canonical class after saturation
    run: RunReport
    inlined: int = 0  # calls merged with their callee's body (rules/inline.py) before the rules ran


def saturate(peg: PEG, rewrites: Sequence[Rewrite], limits: Limits, callees: CalleeSource | None = None
             ) -> Saturation:
    """The optimizer's saturation of ``peg`` with ``rewrites`` within ``limits``. ``callees``: the methods whose
    calls may be inlined (:mod:`peggy_jvm.rules.inline`), before the rules run, so that the inlined bodies are
    saturated with the rest."""
    eg = EPeg()
    mapping = eg.add_peg(peg)
    inlined = 0
    if callees is not None:
        # callees that throw too, where the self-check's split of the results applies (rules/inline.py)
        inlined = inline_calls(eg, peg, mapping, choose_bodies(peg, [peg.root], [(peg, callees)], throws=True))
    run = Runner(rewrites, limits).run(eg)
    return Saturation(eg, mapping, eg.find(mapping[peg.root]), run, inlined)
