"""The rule-soundness checker: both sides of a rule evaluated on concrete Java values.

What this module owns
    :func:`evaluate` (a small term evaluator over ``OPS[op].fn`` plus constants and ``phi``; Java arithmetic
    only through :mod:`peggy_jvm.semantics` via the operator table) and :func:`check_rule`, which instantiates a
    rule's variables with values of their inferred types -- edge values (0, +-1, MIN, MAX, NaN, +-0.0,
    +-inf, subnormals, 2^24, 2^31, 2^53 ...) crossed exhaustively when the combinations are few, plus seeded
    random values -- and reports the first assignment on which the two sides differ (floats compared bit for
    bit, any NaN equal to any NaN; ``true`` never equal to ``1``).

Which rules are checked
    A rule is checked when every operator in it is a constant, ``phi`` or a pure operator with a semantics
    function, and every condition has a concrete meaning (:attr:`Predicate.concrete`). Operator variables are
    expanded to each member of their class. Everything else -- effects, projections, loop operators,
    ``eq.a`` -- is EXEMPT here and tested on e-graph instances instead (tests/test_axioms_equalities.py); the
    result says why. (An operator-variable rule is checked on every member of its class that has value
    semantics; the others, ``eq.a``/``ne.a``, are listed in the result.) A left-hand side that throws (integer division by zero) is skipped: in our PEGs ``div.i``
    only sees a checked divisor. A right-hand side that throws where the left did not is a failure. A left-hand
    constant written without its value (``(const.i)``, any constant) has nothing to instantiate: an AxiomError at
    its position, which suggests ``(const.i[$c])``.
"""
from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field, replace
from typing import Any, cast

from .. import semantics as S
from ..egraph.pattern import AttrVar, OpVar, PAs, PNode, PVar, Pattern
from ..peg.ops import OPS, Role, T
from .conditions import PREDICATES
from .syntax import AxiomError, RuleAST
from .types import infer_types

__all__ = ["CheckResult", "check_rule", "evaluate", "values_of", "same_value", "Unevaluable"]


class Unevaluable(Exception):
    """The pattern has an operator without value semantics."""


_CONST_TYPES = {"const.i": T.INT, "const.l": T.LONG, "const.f": T.FLOAT, "const.d": T.DOUBLE, "const.b": T.BOOL}


def _evaluable(op: str) -> bool:
    spec = OPS[op]
    return op == "phi" or op in _CONST_TYPES or (spec.role is Role.PURE and spec.fn is not None and op != "succ")


def evaluate(p: Pattern, env: dict[str, Any]) -> Any:
    """The value of pattern ``p`` with class variables (``?x``) and attribute variables (``$c``) from ``env``."""
    if isinstance(p, PVar):
        return env["?" + p.name]
    if isinstance(p, PAs):
        raise Unevaluable("'@' patterns")
    op = p.op
    if isinstance(op, OpVar):
        raise Unevaluable("operator variable (expand it first)")
    if op in _CONST_TYPES:
        if p.attr is None:  # `(const.i)`, any constant: check_rule refuses it before evaluating
            raise Unevaluable(f"{op} without a value")
        a = env["$" + p.attr.name] if isinstance(p.attr, AttrVar) else p.attr.value
        if op == "const.f":  # a float or double constant's attr is its raw bits, an int
            return S.int_bits_to_float(cast(int, a))
        if op == "const.d":
            return S.long_bits_to_double(cast(int, a))
        return a
    if op == "phi":
        c = evaluate(p.children[0], env)
        return evaluate(p.children[1] if c else p.children[2], env)
    fn = OPS[op].fn
    if not _evaluable(op):
        raise Unevaluable(op)
    assert fn is not None  # _evaluable: not const nor phi, so a pure op with its semantics function
    return fn(*[evaluate(c, env) for c in p.children])


def same_value(a: Any, b: Any) -> bool:
    """Java equality of two results: bit-identical floats (any NaN equals any NaN), no bool/int confusion."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, float) and isinstance(b, float)):
            return False
        if a != a or b != b:
            return a != a and b != b
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return a == b


def _f32(x: float) -> float:
    return S.to_f32(x)


_EDGES: dict[T, list[Any]] = {
    T.INT: [0, 1, -1, 2, -2, 3, 5, 7, 31, 32, 33, 63, 64, 255, 256, 65535, 65536, 1 << 24, S.INT_MAX, S.INT_MIN,
            S.INT_MAX - 1, S.INT_MIN + 1, 0x55555555, -12345678],
    T.LONG: [0, 1, -1, 2, -2, 31, 32, 63, 64, S.INT_MAX, S.INT_MIN, 1 << 31, 1 << 32, 1 << 53, (1 << 53) + 1,
             S.LONG_MAX, S.LONG_MIN, S.LONG_MAX - 1, S.LONG_MIN + 1, -(1 << 40) + 3],
    T.FLOAT: [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -3.5, _f32(0.1), math.nan, math.inf, -math.inf, S.FLOAT_MAX,
              -S.FLOAT_MAX, _f32(1.4e-45), _f32(1.17549435e-38), 16777216.0, 16777218.0, _f32(1e10), _f32(-7e-40)],
    T.DOUBLE: [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -3.5, 0.1, math.nan, math.inf, -math.inf, 1.7976931348623157e308,
               -1.7976931348623157e308, 5e-324, 2.2250738585072014e-308, 9007199254740992.0, 9007199254740994.0,
               1e300, -3e-310, _f32(0.1)],
    T.BOOL: [False, True],
}


def values_of(t: T, rng: random.Random) -> Any:
    """One random value of type ``t`` (random bit patterns for floats, so NaNs and subnormals occur)."""
    if t is T.INT:
        return rng.choice((rng.randint(S.INT_MIN, S.INT_MAX), rng.randint(-100, 100)))
    if t is T.LONG:
        return rng.choice((rng.randint(S.LONG_MIN, S.LONG_MAX), rng.randint(-100, 100)))
    if t is T.FLOAT:
        return rng.choice((S.int_bits_to_float(rng.getrandbits(32)), _f32(rng.uniform(-100, 100))))
    if t is T.DOUBLE:
        return rng.choice((S.long_bits_to_double(rng.getrandbits(64)), rng.uniform(-100, 100)))
    if t is T.BOOL:
        return rng.random() < 0.5
    raise Unevaluable(f"no values of type {t.value}")


def _attr_of(t: T, v: Any) -> Any:
    if t is T.FLOAT:
        return S.float_to_raw_int_bits(v)
    if t is T.DOUBLE:
        return S.double_to_raw_long_bits(v)
    return v


@dataclass
class CheckResult:
    rule: str
    status: str  # "sound" (no counterexample found), "unsound", "exempt"
    reason: str = ""
    counterexample: dict[str, Any] = field(default_factory=dict)
    cases: int = 0

    def __str__(self) -> str:
        if self.status == "unsound":
            return f"{self.rule}: UNSOUND at {self.counterexample}: {self.reason}"
        if self.status == "exempt":
            return f"{self.rule}: exempt ({self.reason})"
        return f"{self.rule}: sound on {self.cases} cases"


def _ops(p: Pattern, out: list) -> list:
    if isinstance(p, PAs):
        out.append("@")
        _ops(p.pattern, out)
    elif isinstance(p, PNode):
        out.append(p.op)
        for c in p.children:
            _ops(c, out)
    return out


def _subst_op(p: Pattern, name: str, op: str) -> Pattern:
    if isinstance(p, PVar):
        return p
    if isinstance(p, PAs):
        return PAs(p.var, _subst_node(p.pattern, name, op))
    return _subst_node(p, name, op)


def _subst_node(p: PNode, name: str, op: str) -> PNode:
    new_op = op if isinstance(p.op, OpVar) and p.op.name == name else p.op
    return PNode(new_op, p.attr, tuple(_subst_op(c, name, op) for c in p.children))


def _attr_vars(p: Pattern, out: dict[str, T]) -> dict[str, T]:
    if isinstance(p, PAs):
        _attr_vars(p.pattern, out)
    elif isinstance(p, PNode):
        if isinstance(p.attr, AttrVar):
            t = _CONST_TYPES.get(p.op) if isinstance(p.op, str) else None
            if t is None:
                raise Unevaluable(f"attribute variable ${p.attr.name} of {p.op}")
            out["$" + p.attr.name] = t
        for c in p.children:
            _attr_vars(c, out)
    return out


def check_rule(ast: RuleAST, *, samples: int = 1500, exhaustive_limit: int = 4000, seed: int = 0) -> CheckResult:
    """Check ``ast`` (both directions are the same equation). Operator variables are expanded; each instance is
    checked and the first failure reported."""
    ops = _ops(ast.lhs, []) + _ops(ast.rhs, [])
    if "@" in ops:
        return CheckResult(ast.name, "exempt", "binds a class with '@' (a cyclic pattern)")
    opvars = {o.name: o for o in ops if isinstance(o, OpVar)}
    for c in ast.conds:
        if PREDICATES[c.pred].concrete is None:
            return CheckResult(ast.name, "exempt", f"condition {c.pred}() has no meaning on concrete values")
    instances = [ast]
    for name, ov in opvars.items():
        instances = [replace(r, lhs=_subst_op(r.lhs, name, op), rhs=_subst_op(r.rhs, name, op), positions={})
                     for r in instances for op in sorted(ov.ops)]
    total = 0
    skipped: list[str] = []
    for inst in instances:
        bad = [o for o in _ops(inst.lhs, []) + _ops(inst.rhs, []) if not _evaluable(o)]
        if bad:
            if not opvars or any(o for o in bad if not any(o in ov.ops for ov in opvars.values())):
                return CheckResult(ast.name, "exempt", f"operator {bad[0]} has no value semantics")
            skipped.append(bad[0])  # one member of an operator class (eq.a, ne.a): the other members are checked
            continue
        _refuse_valueless_consts(ast, ast.lhs)
        res = _check_instance(inst, samples, exhaustive_limit, seed)
        total += res.cases
        if res.status != "sound":
            res.rule = ast.name
            return res
    return CheckResult(ast.name, "sound", f"instances with {', '.join(sorted(set(skipped)))} not evaluated"
                       if skipped else "", cases=total)


def _refuse_valueless_consts(ast: RuleAST, p: Pattern) -> None:
    """A left-hand ``(const.i)`` matches any constant, which the fuzzer has no variable for: the writer is told
    where, and how to say the same checkably (a right-hand one is refused when the rule is compiled)."""
    if isinstance(p, PAs):
        _refuse_valueless_consts(ast, p.pattern)
    elif isinstance(p, PNode):
        if p.op in _CONST_TYPES and p.attr is None:
            raise AxiomError(ast.pos_of(p), f"({p.op}) without a value cannot be checked: write ({p.op}[$c]) "
                                            "to match any constant")
        for c in p.children:
            _refuse_valueless_consts(ast, c)


def _check_instance(ast: RuleAST, samples: int, exhaustive_limit: int, seed: int) -> CheckResult:
    try:
        types = infer_types(ast)
    except Exception as e:  # an operator-variable instance that does not type-check cannot be built: skip it
        return CheckResult(ast.name, "sound", f"ill-typed instance skipped: {e}")
    names: list[str] = []
    kinds: list[T] = []
    for v, t in types.items():
        names.append("?" + v)
        kinds.append(t if t is not None and t in _EDGES else T.INT)
    for v, t in _attr_vars(ast.lhs, _attr_vars(ast.rhs, {})).items():
        names.append(v)
        kinds.append(t)
    rng = random.Random(seed)
    edges = [_EDGES[t] for t in kinds]
    combos: list[tuple] = []
    size = math.prod(len(e) for e in edges) if edges else 1
    if size <= exhaustive_limit:
        combos.extend(itertools.product(*edges))
    else:
        combos.extend(tuple(rng.choice(e) for e in edges) for _ in range(samples))
    combos.extend(tuple(values_of(t, rng) if rng.random() < 0.7 else rng.choice(_EDGES[t]) for t in kinds)
                  for _ in range(samples // 3))
    conds = ast.conds
    cases = 0
    for combo in combos:
        env = {n: (_attr_of(t, v) if n[0] == "$" else v) for n, t, v in zip(names, kinds, combo)}
        if conds and not all(_concrete_cond(c, env) for c in conds):
            continue
        try:
            left = evaluate(ast.lhs, env)
        except S.JavaArithmeticError:
            continue  # a zero divisor never reaches div/rem in a PEG (it is checked first)
        try:
            right = evaluate(ast.rhs, env)
        except S.JavaArithmeticError:
            return CheckResult(ast.name, "unsound", "the right-hand side divides by zero", dict(zip(names, combo)))
        cases += 1
        if not same_value(left, right):
            return CheckResult(ast.name, "unsound", f"left gives {left!r}, right gives {right!r}",
                               dict(zip(names, combo)), cases)
    return CheckResult(ast.name, "sound", cases=cases)


def _concrete_cond(c: Any, env: dict[str, Any]) -> bool:
    pred = PREDICATES[c.pred]
    args = []
    for a in c.args:
        if a.kind == "class":
            args.append(env["?" + a.value])
        elif a.kind == "attr":
            args.append(env.get("$" + a.value))
        else:
            args.append(a.value)
    concrete = pred.concrete
    assert concrete is not None  # rules with an exempt condition (no concrete test) never get here
    return concrete(*args) != c.negated


def exempt_ops() -> frozenset[str]:
    """Operators the checker cannot evaluate."""
    return frozenset(o for o in OPS if not _evaluable(o))


