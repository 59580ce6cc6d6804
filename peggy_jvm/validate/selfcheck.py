"""The optimizer's self-check (DESIGN section 6, step 2): a rewritten method proved equal to its original.

What this module owns
    :func:`prove_rewrite`, the one entry the pipeline calls after lowering: the emitted Code attribute is put in
    place of the original's in a copy of the method, and the pair is proved like any pair of ``peggy-jvm
    validate`` (:func:`.prove.prove_pair`: lifted again, both PEGs in one e-graph, the roots must meet).

Inputs: the class, the original method, the emitted Code attribute's bytes, the class hierarchy (one for both
sides: the class is the same), the rewrites the proof may use (``rules.policy.proof_rules``) and a
:class:`~.prove.ProofBudget` (work only in the optimizer: ``budget.WorkBudget.proof()``, so that the verdict,
which decides the output, is a function of the inputs).
Outputs: a :class:`~.prove.ProofResult`; the caller keeps the original code unless it says ``proved``.
Invariants: the class and the method are not changed; never raises for a method the stages cannot handle
(that is "not proved", with the reason).
"""
from __future__ import annotations

from ..classfile.hierarchy import ClassHierarchy
from ..classfile.model import Attribute, ClassFile, MethodInfo
from .pairing import MethodPair
from .prove import ProofBudget, ProofResult, prove_pair

__all__ = ["prove_rewrite"]


def prove_rewrite(cf: ClassFile, m: MethodInfo, code: bytes, hierarchy: ClassHierarchy, rules: list,
                  budget: ProofBudget) -> ProofResult:
    """Prove method ``m`` of ``cf`` equal to itself with ``code`` as its Code attribute's bytes."""
    new_m = MethodInfo(m.access, m.name_index, m.descriptor_index,
                       [Attribute(a.name_index, a.name, code) if a.name == "Code" else a for a in m.attributes],
                       m.name, m.descriptor)
    return prove_pair(MethodPair(cf, cf, m, new_m), hierarchy, hierarchy, rules, budget)
