"""Compilation of parsed axioms to e-graph rewrites.

What this module owns
    :func:`compile_rule`: a :class:`~.syntax.RuleAST` -> one :class:`~peggy_jvm.egraph.runner.PatternRewrite`
    (``=>``) or two (``<=>``: the reverse is named ``NAME-rev``), after the checks that need the whole rule:
    types (:mod:`.types`), every right-hand variable bound by the left-hand side (for ``<=>`` both sides bind the
    same variables), no bare-variable left-hand side, no ``@`` on a right-hand side, right-hand operators that
    carry an attribute are given one, and conditions name known predicates (:mod:`.conditions`) with arguments of
    the right kinds, bound by the left-hand side. Each problem is an :class:`~.syntax.AxiomError` at its place.
"""
from __future__ import annotations

from typing import Any, Callable

from ..egraph.pattern import AttrVar, Matcher, OpVar, PAs, PNode, PVar, Pattern, compile_builder, pattern_vars
from ..egraph.runner import PatternRewrite
from ..peg.ops import OPS
from .conditions import PREDICATES
from .syntax import AxiomError, CondAST, RuleAST
from .types import infer_types

__all__ = ["compile_rule"]


def compile_rule(ast: RuleAST) -> list[PatternRewrite]:
    infer_types(ast)
    out = [_direction(ast, ast.lhs, ast.rhs, ast.name, "left")]
    if ast.bidirectional:
        lv, rv = set(pattern_vars(ast.lhs)), set(pattern_vars(ast.rhs))
        if lv != rv:
            missing = sorted(lv ^ rv)
            raise AxiomError(ast.pos, f"the two sides of a '<=>' rule must bind the same variables ({', '.join(missing)})")
        out.append(_direction(ast, ast.rhs, ast.lhs, ast.name + "-rev", "right"))
    return out


def _direction(ast: RuleAST, lhs: Pattern, rhs: Pattern, name: str, side: str) -> PatternRewrite:
    if isinstance(lhs, PVar):
        raise AxiomError(ast.pos_of(lhs), f"the {side} side of {ast.name} is a bare variable: it would match every "
                                          f"class (write '=>' from the other side instead)")
    guards = _guards(ast, set(pattern_vars(lhs)))
    matcher = Matcher(lhs, guards)
    slots = {v: i for i, v in enumerate(matcher.slots)}
    _check_rhs(ast, rhs, slots)
    builder = compile_builder(rhs, slots)
    deep = any(PREDICATES[c.pred].deep for c in ast.conds)
    # the conditions are checked inside the matcher, as soon as their variables are bound
    return PatternRewrite(name, matcher, builder, None, ast.group, str(ast.pos), deep)


def _check_rhs(ast: RuleAST, p: Pattern, slots: dict[str, int]) -> None:
    if isinstance(p, PVar):
        if "?" + p.name not in slots:
            raise AxiomError(ast.pos_of(p), f"?{p.name} is not bound by the left-hand side")
        return
    if isinstance(p, PAs):
        raise AxiomError(ast.pos_of(p), "'@' may only be used on a left-hand side")
    if isinstance(p.op, OpVar):
        if "%" + p.op.name not in slots:
            raise AxiomError(ast.pos_of(p), f"%{p.op.name} is not bound by the left-hand side")
    elif OPS[p.op].attr is not None and p.attr is None:
        raise AxiomError(ast.pos_of(p), f"{p.op} needs an attribute on a right-hand side (e.g. {p.op}[$a])")
    if isinstance(p.attr, AttrVar) and "$" + p.attr.name not in slots:
        raise AxiomError(ast.pos_of(p), f"${p.attr.name} is not bound by the left-hand side")
    for c in p.children:
        _check_rhs(ast, c, slots)


Guard = tuple  # (variable keys the check needs, in order; fn(eg, *values) -> bool)


def _guards(ast: RuleAST, bound: set[str]) -> list[Guard]:
    """The conditions as guards the matcher checks as soon as their variables are bound."""
    return [_guard(ast, c, bound) for c in ast.conds]


def _guard(ast: RuleAST, c: CondAST, bound: set[str]) -> Guard:
    pred = PREDICATES.get(c.pred)
    if pred is None:
        raise AxiomError(c.pos, f"unknown condition {c.pred!r} (known: {', '.join(sorted(PREDICATES))})")
    if len(c.args) != len(pred.params):
        raise AxiomError(c.pos, f"{c.pred} takes {len(pred.params)} argument(s), given {len(c.args)}")
    template: list[tuple[str, Any]] = []  # ("var", key) or ("lit", value), in argument order
    for want, arg in zip(pred.params, c.args):
        if want == "c" and arg.kind != "class":
            raise AxiomError(arg.pos, f"{c.pred} wants a class variable (?x) here, given {arg}")
        if want == "a" and arg.kind != "attr":
            raise AxiomError(arg.pos, f"{c.pred} wants an attribute variable ($a) here, given {arg}")
        if want == "v" and arg.kind == "class":
            raise AxiomError(arg.pos, f"{c.pred} compares attributes or literals, not classes: {arg} (different "
                                      f"e-classes are not different values; use differ() or distinct())")
        if arg.kind == "lit":
            template.append(("lit", arg.value))
            continue
        key = ("?" if arg.kind == "class" else "$") + str(arg.value)
        if key not in bound:
            raise AxiomError(arg.pos, f"{arg} is not bound by the left-hand side")
        template.append(("var", key))
    keys = tuple(k for kind, k in template if kind == "var")
    return keys, _guard_fn(pred.fn, template, c.negated)


def _guard_fn(fn: Callable[..., bool], template: list[tuple[str, Any]], neg: bool) -> Callable[..., bool]:
    kinds = tuple(kind for kind, _ in template)
    if kinds == ("var",):
        return lambda eg, a: fn(eg, a) != neg
    if kinds == ("var", "var"):
        return lambda eg, a, b: fn(eg, a, b) != neg
    if kinds == ("var", "lit"):
        lit = template[1][1]
        return lambda eg, a: fn(eg, a, lit) != neg

    def general(eg: Any, *vals: Any) -> bool:
        it = iter(vals)
        return fn(eg, *[next(it) if kind == "var" else v for kind, v in template]) != neg
    return general


def rule_ops(ast: RuleAST) -> set[str]:
    """Every concrete operator a rule mentions (operator variables contribute their whole class)."""
    out: set[str] = set()

    def walk(p: Pattern) -> None:
        if isinstance(p, PAs):
            walk(p.pattern)
        elif isinstance(p, PNode):
            out.update(p.op.ops if isinstance(p.op, OpVar) else (p.op,))
            for ch in p.children:
                walk(ch)
    walk(ast.lhs)
    walk(ast.rhs)
    return out
