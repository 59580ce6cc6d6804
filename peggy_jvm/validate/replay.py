"""``validate``'s replay of the optimizer's shortcut proof: a pair proved in ORIG's PEG saturated as the optimizer
saturates it (issue 17 item 8: what the optimizer proved, ``validate`` of its output proves too).

What this module owns
    :func:`prove_in_optimizer_saturation`: ORIG's method lifted and built as the full stage does
    (``lift_method``, ``build_peg``, ``check_peg``), read through the pair's :class:`~.modular.CallView` (OPT's
    names, calls to unproved pairs kept apart), saturated by :func:`peggy_jvm.saturate.saturate` (the one place
    the optimizer makes its E-PEG) with the optimizer's rules (``rules.policy.safe_rules``: what ``optimize``
    saturates with by default, every one of them a rule its self-check proves with) within its saturation work
    limits (``budget.DEFAULT_WORK_BUDGET``) and no call inlined; then OPT's method, lifted with its own class
    file and hierarchy and read through ``CallView.opt``, met with ORIG's root there
    (:func:`.selfcheck.meet_in_saturation`, the self-check's own shortcut). The optimizer's self-check proves some
    rewrites only so (commons-math3's ``Dfp.sqrt``: the full proof of the pair saturates without meeting the
    roots, with the optimizer's rules or the default ones).

Why it is a proof for ANY pair (not only the optimizer's output): every union in the e-graph is made by
congruence, by the import's closing of thetas, or by a rewrite of a sound rule list (the safe rules, a subset of
the proof's own), and OPT's PEG enters it only through its own bytes (the same per-side forms the full proof
uses: branch forms, top-tested loops, library calls expanded); the parameters and the entry heap are shared by
hash-consing, and calls are one operator on both sides only as the view allows, exactly as in
:func:`.prove.prove_pair`'s one e-graph of both methods. Saturating ORIG before OPT's PEG joins (no rule runs
after it) only finds fewer equalities than saturating both. An e-graph with analysis conflicts, before or
after OPT's PEG joins, proves nothing.

Inputs: the pair, both sides' hierarchies, the view, seconds of :func:`~peggy_jvm.egraph.clock.clock` (the
saturation's time limit on top of the optimizer's work limits). Outputs: a proved
:class:`~.prove.ProofResult`, or None (not proved here: the verdict stays the other proofs'). Never raises for a
method the stages cannot handle.
"""
from __future__ import annotations

from dataclasses import replace

from ..budget import DEFAULT_WORK_BUDGET
from ..classfile.errors import ClassFileError
from ..classfile.hierarchy import ClassHierarchy, UnknownClassError
from ..ir.lift import LiftError, lift_method
from ..peg.build import PegUnsupported, build_peg
from ..peg.check import check_peg
from ..rules.policy import safe_rules
from ..saturate import saturate
from .modular import CallView
from .pairing import MethodPair
from .prove import ProofResult
from .selfcheck import meet_in_saturation

__all__ = ["prove_in_optimizer_saturation", "REASON"]

#: the start of the reason of a pair proved so
REASON = "proved in the optimizer's saturation of ORIG"


def prove_in_optimizer_saturation(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, view: CallView,
                                  seconds: float) -> ProofResult | None:
    """The pair proved in ORIG's PEG saturated as ``optimize`` does (see the module docstring), the saturation
    within ``seconds`` as well; None when it is not proved so (or a stage cannot handle a method)."""
    if pair.orig.code_attribute() is None or pair.opt.code_attribute() is None or seconds <= 0:
        return None
    if (pair.orig.access ^ pair.opt.access) & 0x0008:  # static in one version only
        return None
    try:
        peg = build_peg(lift_method(pair.orig_class, pair.orig, orig_h))
        check_peg(peg)
        work = DEFAULT_WORK_BUDGET
        sat = saturate(view(peg), safe_rules(), replace(work.saturation(), time_limit_s=seconds))
        if sat.inlined:  # (no callees are offered: the bodies of other methods are the full proof's to read)
            return None
        proof = meet_in_saturation(pair.opt_class, pair.opt, opt_h, sat, work.proof(), view=view.opt)
    except (LiftError, ClassFileError, UnknownClassError, PegUnsupported):
        return None
    except Exception:  # a bug in a stage (or RecursionError) is no verdict: the other proofs' stands
        return None
    if proof is None or sat.egraph.conflicts:
        return None
    return replace(proof, reason=f"{REASON}: {proof.reason}")
