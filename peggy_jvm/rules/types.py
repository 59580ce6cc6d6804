"""Type inference for axiom patterns.

What this module owns
    :func:`infer_types`: unify the types :data:`peggy_jvm.peg.ops.OPS` gives every operator's inputs and output
    over both sides of a rule, and return the type of each class variable (None when the rule is polymorphic in
    it). A contradiction (``(add.i ?x (const.l 0))``, or two sides of different types) is an
    :class:`~.syntax.AxiomError` at the offending pattern. The soundness checker instantiates variables with
    values of these types.

Typing rules
    A concrete operator's inputs and output are its ``OpSpec`` types; ``T.ANY`` positions of the polymorphic
    primitives (phi's branches, theta's inputs, eval's sequence, shift/peel) share the node's own type, other
    ``T.ANY`` positions (a field's value, a projection's result) are unconstrained. An operator variable's inputs
    and output are unconstrained (each instance is checked after expansion).
"""
from __future__ import annotations

from ..egraph.pattern import OpVar, PAs, PVar, Pattern
from ..peg.ops import OPS, T
from .syntax import AxiomError, RuleAST

__all__ = ["infer_types"]

_POLY_INPUTS = {"phi": (1, 2), "theta": (0, 1), "eval": (0,), "shift": (0,), "peel": (0,)}


class _Unifier:
    def __init__(self) -> None:
        self.parent: list[int] = []
        self.bound: dict[int, T] = {}

    def fresh(self, t: T | None = None) -> int:
        v = len(self.parent)
        self.parent.append(v)
        if t is not None and t is not T.ANY:
            self.bound[v] = t
        return v

    def find(self, v: int) -> int:
        while self.parent[v] != v:
            v = self.parent[v]
        return v

    def unify(self, a: int, b: int) -> str | None:
        """Merge; returns an error text on a contradiction."""
        a, b = self.find(a), self.find(b)
        if a == b:
            return None
        ta, tb = self.bound.get(a), self.bound.get(b)
        if ta is not None and tb is not None and ta is not tb:
            return f"{ta.value} vs {tb.value}"
        self.parent[b] = a
        if ta is None and tb is not None:
            self.bound[a] = tb
        return None

    def type_of(self, v: int) -> T | None:
        return self.bound.get(self.find(v))


def infer_types(rule: RuleAST) -> dict[str, T | None]:
    """Class variable -> type (None: unconstrained). Raises AxiomError on a type contradiction."""
    u = _Unifier()
    vars_: dict[str, int] = {}

    def var(name: str) -> int:
        if name not in vars_:
            vars_[name] = u.fresh()
        return vars_[name]

    def walk(p: Pattern) -> int:
        if isinstance(p, PVar):
            return var(p.name)
        if isinstance(p, PAs):
            t = walk(p.pattern)
            err = u.unify(var(p.var), t)
            if err:
                raise AxiomError(rule.pos_of(p), f"type mismatch for ?{p.var}: {err}")
            return t
        kids = [walk(c) for c in p.children]
        if isinstance(p.op, OpVar):
            return u.fresh()
        spec = OPS[p.op]
        out = u.fresh(spec.output)
        poly = _POLY_INPUTS.get(p.op, ())
        for i, (c, k) in enumerate(zip(p.children, kids)):
            want = spec.inputs[i] if i < len(spec.inputs) else spec.variadic
            if want is None:
                continue
            if want is T.ANY:
                if i in poly:
                    err = u.unify(out, k)
                    if err:
                        raise AxiomError(rule.pos_of(c), f"{p.op} input {i + 1} has the node's own type: {err}")
                continue
            err = u.unify(k, u.fresh(want))
            if err:
                raise AxiomError(rule.pos_of(c), f"{p.op} input {i + 1} must be {want.value}: {err}")
        return out

    lt = walk(rule.lhs)
    rt = walk(rule.rhs)
    err = u.unify(lt, rt)
    if err:
        raise AxiomError(rule.pos, f"the two sides of {rule.name} have different types: {err}")
    return {name: u.type_of(v) for name, v in vars_.items()}
