"""The axiom language: grammar, errors with file:line:column, compilation checks, groups, the shipped axioms."""
from __future__ import annotations

import pytest

from peggy_jvm.egraph import Limits, Runner
from peggy_jvm.egraph.pattern import AttrLit, AttrVar, OpVar, PAs, PNode, PVar
from peggy_jvm.epeg import EPeg
from peggy_jvm.ir.nodes import FieldRef, MethodRef
from peggy_jvm.rules import AxiomError, default_rules, load_rules, parse_axioms
from peggy_jvm.rules.compile import compile_rule
from peggy_jvm.rules.types import infer_types
from peggy_jvm.peg.ops import T


def _err(text: str) -> AxiomError:
    with pytest.raises(AxiomError) as ei:
        f = parse_axioms(text, "t.ax")
        for r in f.rules:
            compile_rule(r)
    return ei.value


def test_grammar_examples_from_the_issue():
    f = parse_axioms("""
group arith.int
rule add-zero:  (add.i ?x (const.i 0)) => ?x
rule add-comm:  (add.i ?x ?y) <=> (add.i ?y ?x)
rule shl-mul2:  (mul.i ?x (const.i 2)) <=> (shl.i ?x (const.i 1))
rule read-over-write:  (rho_value (getfield[$f] (rho_sigma (putfield[$g] ?s ?o ?v)) ?p)) => (rho_value (getfield[$f] ?s ?p)) if $f != $g
rule theta-distrib: (add.i (theta[$l] ?a ?b) (theta[$l] ?c ?d)) => (theta[$l] (add.i ?a ?c) (add.i ?b ?d))
rule eval-invariant: (eval[$l] ?x ?i) => ?x if invariant(?x, $l)
""", "ex.ax")
    assert [r.name for r in f.rules] == ["add-zero", "add-comm", "shl-mul2", "read-over-write", "theta-distrib",
                                         "eval-invariant"]
    assert f.groups == {"arith.int": True}
    r = f.rules[0]
    assert r.lhs == PNode("add.i", None, (PVar("x"), PNode("const.i", AttrLit(0), ())))
    assert r.rhs == PVar("x") and not r.bidirectional
    assert f.rules[1].bidirectional
    rw = [w for r in f.rules for w in compile_rule(r)]
    assert [w.name for w in rw][:4] == ["add-zero", "add-comm", "add-comm-rev", "shl-mul2"]
    assert str(f.rules[0].pos) == "ex.ax:3:6"
    assert f.rules[5].conds[0].pred == "invariant"


def test_attributes_methods_fields_floats_and_continuations():
    f = parse_axioms("""
rule m: (rho_value (invoke.static[java/lang/Math.abs(I)I] ?s ?x))
        => (phi (lt.i ?x (const.i 0)) (neg.i ?x) ?x)
# a comment between continuation lines is fine
        if const(?x)
rule f: (rho_value (getfield[java/awt/Point.x:I] ?s ?o)) => (const.i 0x7fffffff)
rule d: (add.d ?x (const.d -0.0)) => ?x
rule n: (mul.f ?x (const.f NaN)) => (const.f NaN)
rule a: (astore[B] ?s ?a ?i ?v) => (astore[B] ?s ?a ?i ?v)
""", "a.ax")
    m = f.rules[0].lhs.children[0].attr  # type: ignore[union-attr]
    assert isinstance(m, AttrLit) and m.value == MethodRef("java/lang/Math", "abs", "(I)I")
    assert m.match is not None and m.match(MethodRef("java/lang/Math", "abs", "(I)I", interface=True))
    assert len(f.rules[0].conds) == 1
    fld = f.rules[1].lhs.children[0].attr  # type: ignore[union-attr]
    assert fld.value == FieldRef("java/awt/Point", "x", "I")  # type: ignore[union-attr]
    assert f.rules[1].rhs.attr.value == 2 ** 31 - 1  # type: ignore[union-attr]
    assert f.rules[2].lhs.children[1].attr.value == -(1 << 63)  # type: ignore[union-attr]  # raw bits of -0.0
    nan = f.rules[3].lhs.children[1].attr  # type: ignore[union-attr]
    assert nan.match(0x7FC00001) and not nan.match(0x7F800000)  # any NaN, not infinity
    assert f.rules[4].lhs.attr.value == "B"  # type: ignore[union-attr]


def test_as_patterns_and_operator_variables():
    f = parse_axioms("""
rule t: ?t@(theta[$l] ?a (add.i ?t ?c)) => ?a if invariant(?c, $l)
rule d: (%f:pure2 (phi ?c ?a ?b) (phi ?c ?d ?e)) => (phi ?c (%f ?a ?d) (%f ?b ?e))
""", "o.ax")
    assert isinstance(f.rules[0].lhs, PAs) and f.rules[0].lhs.var == "t"
    op = f.rules[1].lhs.op  # type: ignore[union-attr]
    assert isinstance(op, OpVar) and "add.i" in op.ops and "phi" not in op.ops
    assert f.rules[1].rhs.children[1].op is op  # type: ignore[union-attr]
    assert isinstance(f.rules[0].lhs.pattern.attr, AttrVar)  # type: ignore[union-attr]


@pytest.mark.parametrize("text,where,what", [
    ("rule a: (add.i ?x ?y => ?x", "t.ax:1:22", "expected a pattern, found '=>'"),
    ("rule a: (add.i ?x ?y", "t.ax:1:21", "unclosed"),
    ("rule a: (addd.i ?x ?y) => ?x", "t.ax:1:10", "unknown operator 'addd.i'"),
    ("rule a: (add.i ?x) => ?x", "t.ax:1:10", "add.i takes 2 inputs, given 1"),
    ("rule a: (neg.i ?x ?y) => ?x", "t.ax:1:10", "neg.i takes 1 input, given 2"),
    ("\n\nrule b: (add.i ?x ?y) -> ?x", "t.ax:3:23", "unexpected character"),
    ("rule c (add.i ?x ?y) => ?x", "t.ax:1:8", "expected ':'"),
    ("rule d: (add.i ?x ?y) => ?z", "t.ax:1:26", "?z is not bound"),
    ("rule e: (add.i ?x ?y) <=> ?x", "t.ax:1:6", "same variables"),
    ("rule f: (add.i ?x (const.l 0)) => ?x", "t.ax:1:20", "add.i input 2 must be int"),
    ("rule g: (add.i ?x ?y) => (add.l ?x ?y)", "t.ax:1:33", "add.l input 1 must be long"),
    ("rule g2: (add.i ?x ?y) => (const.l 0)", "t.ax:1:6", "different types"),
    ("rule h: (add.i ?x ?y) => ?x if bogus(?x)", "t.ax:1:32", "unknown condition 'bogus'"),
    ("rule i: (add.i ?x ?y) => ?x if invariant(?x)", "t.ax:1:32", "takes 2 argument"),
    ("rule j: (add.i ?x ?y) => ?x if ?x != ?y", "t.ax:1:32", "not classes"),
    ("rule k: (add.i ?x ?y) => ?x if const(?q)", "t.ax:1:38", "?q is not bound"),
    ("rule l: (const.i 99999999999) => (const.i 0)", "t.ax:1:18", "does not fit in 32 bits"),
    ("rule m: (const.f 0.1) => (const.f 0.0)", "t.ax:1:18", "not exactly a float"),
    ("rule n: (getfield[nonsense] ?s ?o) => ?s", "t.ax:1:19", "expected a field"),
    ("rule o: (add.i[3] ?x ?y) => ?x", "t.ax:1:10", "add.i has no attribute"),
    ("rule p: (theta ?a ?b) => (theta ?b ?a)", "t.ax:1:27", "needs an attribute"),
    ("rule q: (%f ?a ?b) => ?a", "t.ax:1:10", "needs a class"),
    ("rule r: (%f:pure7 ?a ?b) => ?a", "t.ax:1:13", "unknown operator class"),
    ("rule s: (%f:pure1 ?a ?b) => ?a", "t.ax:1:10", "arity 1"),
    ("rule t: ?x => (add.i ?x (const.i 0))", "t.ax:1:9", "bare variable"),
    ("rule u: (add.i ?x ?y) => ?x\nrule u: (add.i ?x ?y) => ?y", "t.ax:2:6", "already defined at t.ax:1:6"),
    ("rule v: (add.i ?x ?y) => ?x extra", "t.ax:1:29", "expected the end of the line"),
    ("group", "t.ax:1:6", "expected a group name"),
    ("banana", "t.ax:1:1", "expected 'rule' or 'group'"),
    ("rule w: (add.i ?x ?y) => ?x@(neg.i ?x)", "t.ax:1:26", "'@' may only be used"),
])
def test_errors_name_file_line_and_column(text, where, what):
    e = _err(text)
    assert str(e).startswith(where + ": "), str(e)
    assert what in str(e), str(e)


def test_types_are_inferred_across_both_sides():
    f = parse_axioms("rule a: (phi ?c ?x (neg.d ?y)) => ?x\nrule b: (phi ?c ?a ?a) => ?a", "t.ax")
    assert infer_types(f.rules[0]) == {"c": T.BOOL, "x": T.DOUBLE, "y": T.DOUBLE}
    assert infer_types(f.rules[1]) == {"c": T.BOOL, "a": None}


def test_groups_switch_on_and_off():
    rs = load_rules([], builtins=False, extra_text="""
group one
rule a: (neg.i (neg.i ?x)) => ?x
group two off
rule b: (add.i ?x (const.i 0)) => ?x
rule c: (add.i ?x ?y) <=> (add.i ?y ?x)
""")
    assert [r.name for r in rs.active()] == ["a"]
    rs.enable("two")
    assert [r.name for r in rs.active()] == ["a", "b", "c", "c-rev"]
    rs.disable("c")
    assert [r.name for r in rs.active()] == ["a", "b"]
    rs.disable("one")
    assert [r.name for r in rs.active()] == ["b"]
    with pytest.raises(KeyError):
        rs.disable("three")


def test_shipped_axioms_load_and_every_group_is_documented():
    rs = default_rules()
    assert len(rs.rewrites) > 300
    names = rs.names()
    assert len(names) == len(set(names))
    assert {"const-fold", "theta-bisimulation", "mul-pow2-shl", "shift-count-mask"} <= set(names)
    from pathlib import Path
    doc = (Path(__file__).resolve().parent.parent / "docs" / "axioms.md").read_text()
    for g in rs.groups:
        assert f"`{g}`" in doc, f"group {g} is not described in docs/axioms.md"


def test_loading_the_axioms_again_reuses_tokens_and_code_but_not_rules(monkeypatch):
    """A process loads the default axioms several times (the optimizer's rules, the self-check's, validate's):
    loads after the first lex nothing and compile no generated code (the text and the generated source are
    the keys), yet every load hands out rules of its own that match and rewrite as the first load's do."""
    from peggy_jvm.egraph import pattern
    from peggy_jvm.rules import syntax

    first = default_rules()
    lexed, compiled = [], []
    real_lex = syntax._lex
    monkeypatch.setattr(syntax, "_lex", lambda text, path: lexed.append(path) or real_lex(text, path))
    monkeypatch.setattr(pattern, "compile", lambda *a: compiled.append(a[1]) or compile(*a), raising=False)
    again = default_rules()
    assert lexed == [] and compiled == []
    assert again.names() == first.names()
    assert not {id(r) for r in again.rewrites} & {id(r) for r in first.rewrites}

    def saturated(rules):
        eg = EPeg()
        x = eg.add("param", 1)
        root = eg.add("mul.i", None, [eg.add("add.i", None, [x, eg.add("const.i", 0)]), eg.add("const.i", 8)])
        Runner(rules.active(), Limits(max_iterations=3)).run(eg)
        return sorted(map(repr, eg.nodes(root)))
    assert saturated(again) == saturated(first)
    assert len(saturated(first)) > 1  # the rules did rewrite


def test_rules_builtins_switch_like_the_others():
    rs = default_rules().disable("fold")
    assert "const-fold" not in [r.name for r in rs.active()]
    eg = EPeg()
    x = eg.add("add.i", None, [eg.add("const.i", 2), eg.add("const.i", 3)])
    Runner(rs.active(), Limits(time_limit_s=5)).run(eg)
    assert eg.const(x) == ("const.i", 5)  # the analysis still knows it
    assert not any(n[0] == "const.i" and n[1] == 5 for n in eg.nodes(x))  # but no node was added
