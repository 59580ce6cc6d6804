"""Operator classes: the sets an operator variable (``%f:pure2``) ranges over.

What this module owns
    :data:`OP_CLASSES`: class name -> (operator names, arity), derived from :data:`peggy_jvm.peg.ops.OPS` so a new
    pure operator joins the distribution rules without editing any axiom file.

Classes
    ``pure1`` / ``pure2``: the pure operators of one / two inputs without attribute (arithmetic, bitwise, shifts,
    comparisons, conversions, conditions, ``not``/``and``/``or``, ``eq.a``/``ne.a``). Excluded: ``guard`` (its
    input is the heap) and ``succ`` (an iteration index, not a Java value). Every member is a total function of
    its inputs, evaluated pointwise per loop iteration, which is what the distribution axioms over
    ``phi``/``theta``/``eval`` need.
"""
from __future__ import annotations

from ..peg.ops import OPS, Role, T

__all__ = ["OP_CLASSES"]

_EXCLUDED = frozenset({"guard", "succ"})


def _pure(arity: int) -> frozenset[str]:
    return frozenset(n for n, s in OPS.items()
                     if s.role is Role.PURE and s.attr is None and s.variadic is None and len(s.inputs) == arity
                     and n not in _EXCLUDED and T.SIGMA not in s.inputs)


OP_CLASSES: dict[str, tuple[frozenset[str], int]] = {
    "pure1": (_pure(1), 1),
    "pure2": (_pure(2), 2),
}
