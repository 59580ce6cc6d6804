"""The case split again after saturation: each side's root read back out of the saturated e-graph, then split
on its branch conditions.

What this module owns
    :func:`equal_by_cases_after`: when saturation leaves the two roots of a pair in different e-classes, extract
    one term of each root's class (the smallest by :mod:`peggy_jvm.pegextract`'s size prices, the greedy
    extraction), simplify each with the conditions known in its branches and run
    :func:`~.normalize.equal_by_cases` on the two.

Why: the case split (:mod:`.normalize`) runs before saturation and lines up exception dispatch that two compilers
nested in different orders, but it cannot decide a condition only the axioms decide. ecj's ``StringBuilder``
chain inside a ``try`` block branches to the handler after each of its calls; only saturation
(``concat-nothrow``, ``concat-indy-fresh`` in ``rules/strings.py``) finds that none of them throws and that the
chain is javac's one ``makeConcatWithConstants``. The e-graph then holds both, but congruence closure cannot
reorder the two compilers' nesting of the handler's ``instanceof`` test and the calls' ``threw`` tests
(commons-lang3's ``ClassUtils.getClass(ClassLoader, String, boolean)``), which the case split does once the
terms no longer carry the builder's branches.

Soundness: every term of an e-class means what the class's PEG means (each union was made by a sound axiom on
this pair, or by hash-consing), so each extracted PEG is equivalent to its side's method, and the case split
shows two PEGs equal only when they are equal in every case of the conditions it splits on.

Inputs: the saturated :class:`~peggy_jvm.epeg.EPeg`, the two roots' classes, each side's PEG as built (the
template of its extraction: name, parameters), a deadline on :func:`~peggy_jvm.egraph.clock.clock`. Output: True
when shown equal; never raises for a term it cannot extract (then False).

Invariants
    * Deterministic: the greedy extraction breaks ties in a fixed order and the case split is bounded by its
      number of cases, not only by the deadline.
    * Reads the e-graph, never changes it.
"""
from __future__ import annotations

from ..choices import Goal
from ..egraph.clock import clock
from ..epeg import EPeg
from ..extract.greedy import greedy_extract
from ..peg.graph import PEG
from ..pegextract.peg_problem import build_problem, selection_to_peg
from .normalize import equal_by_cases, joint_peg, simplify_known_conditions

__all__ = ["equal_by_cases_after"]


def _extracted(eg: EPeg, root: int, template: PEG, deadline: float) -> PEG | None:
    """The smallest term of ``root``'s class as a PEG, simplified by its known conditions; None if none."""
    pp = build_problem(eg, root, template, Goal.SIZE)
    try:
        peg, _ = selection_to_peg(pp, greedy_extract(pp.problem).selection)
    except ValueError:  # a reached class with no valid choice (InfeasibleProblemError too): nothing to read
        return None
    return simplify_known_conditions(peg, deadline=deadline)


def equal_by_cases_after(eg: EPeg, ra: int, rb: int, pa: PEG, pb: PEG, deadline: float) -> bool:
    """Whether the terms extracted from ``ra``'s and ``rb``'s classes are equal in every case of their branch
    conditions (see the module docstring), within ``deadline``."""
    xa = _extracted(eg, ra, pa, deadline)
    xb = _extracted(eg, rb, pb, deadline) if xa is not None else None
    if xa is None or xb is None or clock() > deadline:
        return False
    joint, _, _ = joint_peg(xa, xb)
    return equal_by_cases(joint, deadline=deadline) is not None
