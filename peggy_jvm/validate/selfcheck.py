"""The optimizer's self-check (DESIGN section 6, step 2): a rewritten method proved equal to its original.

What this module owns
    :func:`prove_rewrite`, the one entry the pipeline calls after lowering: the emitted Code attribute is put in
    place of the original's in a copy of the method, and the pair is proved like any pair of ``peggy-jvm
    validate`` (:func:`.prove.prove_pair`: lifted again, both PEGs in one e-graph, the roots must meet);
    before that, when the optimizer's saturation of the original may be trusted (made with the proof's own rule
    objects, no call inlined, no analysis conflict), :func:`prove_in_saturation`: the emitted code's PEG (built
    from its bytes with the full proof's lifting, branch forms and top-tested loops, but not its later normal
    forms) imported into that saturated E-PEG and met with the original's
    root by hash-consing or loop induction. The soundness
    argument is in docs/validation.md ("The self-check in the optimizer's own E-PEG").

Inputs: the class, the original method, the emitted Code attribute's bytes, the class hierarchy (one for both
sides: the class is the same), the rewrites the proof may use (``rules.policy.proof_rules``) and a
:class:`~.prove.ProofBudget` (work only in the optimizer: ``budget.WorkBudget.proof()``, so that the verdict,
which decides the output, is a function of the inputs).
Outputs: a :class:`~.prove.ProofResult`; the caller keeps the original code unless it says ``proved``.
Invariants: the class and the method are not changed (the optimizer's saturation is: the emitted PEG is added
to it, so the self-check comes after extraction); never raises for a method the stages cannot handle (that is
"not proved", with the reason); the verdict is a function of the inputs (work limits only).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from ..budget import checkpoint
from ..classfile.errors import ClassFileError
from ..classfile.hierarchy import ClassHierarchy
from ..classfile.model import Attribute, ClassFile, MethodInfo
from ..egraph.explain import Reason
from ..egraph.runner import Rewrite
from ..epeg import EPeg
from ..ir.lift import LiftError, lift_method
from ..peg.build import PegUnsupported, build_peg
from ..peg.graph import PEG
from ..rules.induction import prove_by_induction
from ..rules.inline import CalleeSource
from .branchshape import drop_default_cases, equal_tests_first, thread_constant_switches
from .loopshape import top_tested
from .normalize import expand_library_calls
from .pairing import MethodPair
from .prove import ProofBudget, ProofResult, prove_pair

if TYPE_CHECKING:
    from ..saturate import Saturation

__all__ = ["prove_rewrite", "prove_in_saturation", "meet_in_saturation"]


def _with_code(m: MethodInfo, code: bytes) -> MethodInfo:
    return MethodInfo(m.access, m.name_index, m.descriptor_index,
                      [Attribute(a.name_index, a.name, code) if a.name == "Code" else a for a in m.attributes],
                      m.name, m.descriptor)


def prove_in_saturation(cf: ClassFile, m: MethodInfo, code: bytes, hierarchy: ClassHierarchy, sat: Saturation,
                        budget: ProofBudget) -> ProofResult | None:
    """The emitted code proved equal to the original in the optimizer's own saturated E-PEG ``sat`` (made from
    the original's PEG with rules the self-check would use): :func:`meet_in_saturation` of method ``m`` of ``cf``
    with ``code`` as its Code attribute's bytes. The proof, else None (the caller then runs the full proof).
    Changes ``sat``'s e-graph (the emitted PEG's classes are added): call it after extraction."""
    return meet_in_saturation(cf, _with_code(m, code), hierarchy, sat, budget)


def meet_in_saturation(cf: ClassFile, m: MethodInfo, hierarchy: ClassHierarchy, sat: Saturation,
                       budget: ProofBudget, view: Callable[[PEG], PEG] | None = None) -> ProofResult | None:
    """Method ``m`` of ``cf`` (lifted with ``hierarchy``, its own side's) proved equal to the PEG ``sat`` saturated:
    ``m`` lifted and built with the full proof's lifting, branch forms (not ``strict_tests_first``: the PEG in
    ``sat`` is not in that form) and top-tested loops, each PEG read through ``view`` (``validate``'s
    ``CallView.opt``; None in the self-check, whose two sides are one class), imported into ``sat``'s e-graph,
    and its root met with ``sat``'s by hash-consing or loop induction from the two roots. The proof, else None.
    Changes ``sat``'s e-graph (``m``'s PEG's classes are added). The self-check's ``m`` is the original with the
    emitted code; ``validate``'s replay of the optimizer (:mod:`.replay`) passes OPT's method."""
    eg = sat.egraph
    if eg.conflicts:  # some rule was unsound on this method: this e-graph proves nothing
        return None
    forms = []
    for shaped in (False, True):
        try:
            ir = lift_method(cf, m, hierarchy)
        except (LiftError, ClassFileError):
            return None
        equal_tests_first(ir)
        drop_default_cases(ir)
        thread_constant_switches(ir)
        if shaped and not top_tested(ir):
            break
        try:
            peg = build_peg(ir)
            forms.append(expand_library_calls(peg if view is None else view(peg)))
        except PegUnsupported:
            return None
    root = eg.find(sat.root)
    emitted = -1
    for peg in forms:
        checkpoint()  # (the optimizer's safety net: its e-graph can be large)
        got = eg.add_peg(peg)[peg.root]
        if emitted >= 0:
            eg.union(emitted, got, Reason("loop-shape"))
        emitted = got
    eg.rebuild()
    checkpoint()
    if eg.equiv(root, emitted):
        return ProofResult(True, "the same class in the optimizer's E-PEG (hash-consing)", ["saturation"])
    if _by_induction(eg, root, emitted, budget):
        return ProofResult(True, "in the optimizer's E-PEG by loop induction", ["saturation", "theta-bisimulation"])
    return None


def _by_induction(eg: EPeg, root: int, emitted: int, budget: ProofBudget) -> bool:
    """Loop induction from the two roots (as the full proof's last step); the witness's pairs merged."""
    checkpoint()
    pairs = prove_by_induction(eg, root, emitted, budget.induction_steps)
    if not pairs:
        return False
    for x, y, _n, _m in pairs:
        eg.union(x, y, Reason("theta-bisimulation", ("theta", "theta'"), (x, y)))
    eg.rebuild()
    return eg.equiv(root, emitted) and not eg.conflicts


def prove_rewrite(cf: ClassFile, m: MethodInfo, code: bytes, hierarchy: ClassHierarchy, rules: list,
                  budget: ProofBudget, callees: CalleeSource | None = None, sat: Saturation | None = None,
                  saturated_with: Sequence[Rewrite] = ()) -> ProofResult:
    """Prove method ``m`` of ``cf`` equal to itself with ``code`` as its Code attribute's bytes. ``callees``: the
    methods whose calls the optimizer may have inlined (``rules.inline``), the same for both sides. ``sat``: the
    optimizer's saturation of the original, made with the rewrites ``saturated_with``: the proof is tried there
    first (:func:`prove_in_saturation`) when every one of them is one of ``rules`` (the very objects) and no call
    was inlined in it (the bodies of other methods are read again by the full proof); else, or when that does not
    prove, the full proof (:func:`.prove.prove_pair`)."""
    if sat is not None and sat.inlined == 0 and _among(saturated_with, rules):
        try:
            proof = prove_in_saturation(cf, m, code, hierarchy, sat, budget)
        except Exception:  # a bug in a stage (or RecursionError) is no verdict: the full proof decides
            proof = None
        if proof is not None:
            return proof
    return prove_pair(MethodPair(cf, cf, m, _with_code(m, code)), hierarchy, hierarchy, rules, budget,
                      callees=None if callees is None else (callees, callees))


def _among(these: Sequence[Rewrite], rules: Sequence[Rewrite]) -> bool:
    """Every rewrite of ``these`` is one of ``rules`` (the same object: a rule of the same name may differ)."""
    ids = {id(r) for r in rules}
    return all(id(r) in ids for r in these)
