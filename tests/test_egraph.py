"""The e-graph core (generic: hash-consing, union-find, deferred rebuild, the analysis protocol, explanations) and
the E-PEG on it (the Java analyses, PEG import)."""
from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from peggy_jvm import semantics as S
from peggy_jvm.egraph import Analysis, EGraph, PAs, PNode, PVar, compile_pattern
from peggy_jvm.egraph.pattern import AttrLit
from peggy_jvm.epeg import ALL_LOOPS, EPeg
from peggy_jvm.ir.nodes import INT, LONG
from peggy_jvm.peg.graph import PEG
from peggy_jvm.peg.ops import T


def test_hash_consing_and_congruence_after_rebuild():
    eg = EGraph()
    a, b = eg.add("param", 0), eg.add("param", 1)
    fa, fb = eg.add("neg.i", None, [a]), eg.add("neg.i", None, [b])
    assert eg.add("neg.i", None, [a]) == fa
    assert not eg.equiv(fa, fb)
    eg.union(a, b, "test")
    assert not eg.equiv(fa, fb)  # deferred: congruence is repaired by rebuild
    assert eg.rebuild() == 1
    assert eg.equiv(fa, fb)
    eg.check_invariants()
    ffa = eg.add("neg.i", None, [fb])
    assert eg.lookup("neg.i", None, [fa]) == ffa


def test_constant_folding_uses_java_semantics():
    eg = EPeg()

    def c(op: str, v: object) -> int:
        return eg.add(op, v)
    mx = eg.add("add.i", None, [c("const.i", S.INT_MAX), c("const.i", 1)])
    assert eg.const(mx) == ("const.i", S.INT_MIN)  # wrap-around
    sh = eg.add("shl.i", None, [c("const.i", 1), c("const.i", 33)])
    assert eg.const(sh) == ("const.i", 2)  # count masked with 31
    dv = eg.add("div.i", None, [c("const.i", S.INT_MIN), c("const.i", -1)])
    assert eg.const(dv) == ("const.i", S.INT_MIN)
    zero_div = eg.add("div.i", None, [c("const.i", 7), c("const.i", 0)])
    assert eg.const(zero_div) is None  # never folded: semantics would raise
    half = c("const.d", S.double_to_raw_long_bits(0.5))
    d = eg.add("add.d", None, [half, half])
    assert eg.const(d) == ("const.d", S.double_to_raw_long_bits(1.0))
    negz = eg.add("neg.d", None, [c("const.d", 0)])
    assert eg.const(negz) == ("const.d", S.double_to_raw_long_bits(-0.0))
    nan = eg.add("div.f", None, [c("const.f", 0), c("const.f", 0)])
    k = eg.const(nan)
    assert k is not None and k[0] == "const.f" and math.isnan(S.int_bits_to_float(k[1]))
    cond = eg.add("lt.i", None, [c("const.i", 3), c("const.i", 5)])
    assert eg.const(cond) == ("const.b", True)
    phi = eg.add("phi", None, [cond, c("const.i", 10), eg.add("param", 0)])
    assert eg.const(phi) == ("const.i", 10)  # through phi with a constant condition
    l2i = eg.add("l2i", None, [c("const.l", 1 << 40 | 7)])
    assert eg.const(l2i) == ("const.i", 7)


def test_constant_folding_ignores_ill_typed_children():
    eg = EPeg()
    bad = eg.add("add.i", None, [eg.add("const.l", 1), eg.add("const.i", 2)])
    assert eg.const(bad) is None


def _loop_peg() -> tuple[PEG, dict[str, int]]:
    """i = theta_1(0, i + 1); x = theta_2(p0, x + i) nested; e = eval_1(i, pass_1(i >= p1))."""
    peg = PEG("loops")
    peg.param_types = [INT, INT]
    p0, p1 = peg.add("param", 0), peg.add("param", 1)
    zero, one = peg.add("const.i", 0), peg.add("const.i", 1)
    i = peg.new_theta(1)
    peg.set_theta(i, zero, peg.add("add.i", None, (i, one)))
    x = peg.new_theta(2)
    peg.set_theta(x, p0, peg.add("add.i", None, (x, i)))
    ps = peg.add("pass", 1, (peg.add("ge.i", None, (i, p1)),))
    e = peg.add("eval", 1, (i, ps))
    peg.root = e
    return peg, {"p0": p0, "p1": p1, "i": i, "x": x, "pass": ps, "e": e}


def test_add_peg_cycles_and_variance_seeded_from_the_peg():
    peg, ids = _loop_peg()
    eg = EPeg()
    m = eg.add_peg(peg)
    eg.check_invariants()
    var = peg.variance()
    for nid, cid in m.items():
        mask = sum(1 << loop for loop in var[nid])
        assert eg.variance(cid) == mask, peg.describe(nid)
    assert eg.varies(m[ids["i"]], 1) and not eg.varies(m[ids["i"]], 2)
    assert eg.varies(m[ids["x"]], 1) and eg.varies(m[ids["x"]], 2)
    assert not eg.varies(m[ids["e"]], 1)
    assert eg.sort(m[ids["p0"]]) is T.INT
    # the theta's next refers to the theta's own class: a real cycle in the e-graph
    (theta,) = [n for n in eg.nodes(m[ids["i"]]) if n[0] == "theta"]
    (nxt,) = eg.nodes(theta[2][1])
    assert nxt[0] == "add.i" and eg.find(nxt[2][0]) == m[ids["i"]]


def test_variance_is_not_fooled_by_a_self_referential_class():
    """{theta_1(0, ...), add.i(self, 0)}: a least fixpoint of the intersection equations would call this class
    invariant through the node that refers to itself; the time-inductive analysis keeps it varying."""
    peg, ids = _loop_peg()
    eg = EPeg()
    m = eg.add_peg(peg)
    i = m[ids["i"]]
    selfref = eg.add("add.i", None, [i, eg.add("const.i", 0)])
    eg.union(selfref, i, "add-zero")
    eg.rebuild()
    assert eg.varies(i, 1)
    # a new node built on a varying class varies too, and an invariant node merged in makes the class invariant
    assert eg.varies(eg.add("neg.i", None, [i]), 1)
    eg.check_invariants()


def test_placeholder_classes_start_at_unknown():
    eg = EPeg()
    ph = eg.add_placeholder()
    assert eg.variance(ph) == ALL_LOOPS and eg.const(ph) is None and eg.sort(ph) is None
    user = eg.add("neg.i", None, [ph])
    t = eg.add("theta", 1, [eg.add("const.i", 0), user])
    eg.union(ph, t, "import")
    eg.rebuild()
    assert eg.varies(ph, 1)


def test_matching_with_as_pattern_and_ground_subpattern():
    peg, ids = _loop_peg()
    eg = EPeg()
    m = eg.add_peg(peg)
    # ?t@(theta ?a (add.i ?t (const.i 1)))
    pat = PAs("t", PNode("theta", None, (PVar("a"), PNode("add.i", None, (
        PVar("t"), PNode("const.i", AttrLit(1), ()))))))
    mt = compile_pattern(pat)
    found, late = mt.search(eg)
    assert not late
    assert [cid for cid, _env in found] == [m[ids["i"]]]  # x = theta(p0, x + i) does not step by a constant


def test_explanations_name_the_rules():
    eg = EGraph()
    x = eg.add("param", 0)
    a = eg.add("mul.i", None, [x, eg.add("const.i", 2)])
    b = eg.add("shl.i", None, [x, eg.add("const.i", 1)])
    c = eg.add("add.i", None, [x, x])
    eg.union(a, c, "add-self")
    eg.union(c, b, "shl-mul2")
    eg.rebuild()
    e = eg.explain(a, b)
    assert e is not None and e.rules() == ["add-self", "shl-mul2"]
    assert "shl-mul2" in str(e)
    assert eg.explain(a, x) is None


def test_explanation_expands_congruence():
    eg = EGraph()
    a, b = eg.add("param", 0), eg.add("param", 1)
    fa, fb = eg.add("neg.i", None, [a]), eg.add("neg.i", None, [b])
    eg.union(a, b, "because")
    eg.rebuild()
    e = eg.explain(fa, fb)
    assert e is not None and e.steps[0].rule == "congruence"
    assert e.rules() == ["because"]


# -- property: rebuild restores congruence and every invariant ---------------------------------------------------
_OPS = [("neg.i", 1), ("add.i", 2), ("mul.i", 2), ("phi", 3)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 10 ** 6), st.integers(0, 10 ** 6),
                          st.integers(0, 10 ** 6)), min_size=1, max_size=60),
       st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 10 ** 6)), max_size=25),
       st.integers(0, 3))
def test_rebuild_keeps_congruence(adds, unions, rebuild_every):
    eg = EGraph()
    # no constants: random unions of constant expressions would be contradictions the analysis rightly reports
    ids = [eg.add("param", k) for k in range(4)]
    ops = list(adds)
    for step, (k, a, b, c) in enumerate(ops):
        op, arity = _OPS[k]
        ch = [ids[x % len(ids)] for x in (a, b, c)[:arity]]
        ids.append(eg.add(op, None, ch))
        if step < len(unions):
            u, v = unions[step]
            eg.union(ids[u % len(ids)], ids[v % len(ids)], "random")
        if rebuild_every and step % (rebuild_every + 1) == 0:
            eg.rebuild()
    eg.rebuild()
    eg.check_invariants()
    # congruence, checked from scratch: equal canonical nodes are in one class
    canon: dict[tuple, int] = {}
    for cid in eg.class_ids():
        for op, attr, ch in eg.nodes(cid):
            key = (op, attr, tuple(eg.find(x) for x in ch))
            assert canon.setdefault(key, cid) == cid
    assert eg.conflicts == []
    # every id still finds its class, and explanations exist for every merged pair
    for x in ids[:8]:
        for y in ids[:8]:
            if eg.equiv(x, y):
                assert eg.explain(x, y) is not None


def test_sorts_and_linearity():
    eg = EPeg()
    s0 = eg.add("sigma0")
    o = eg.add("getfield", None, [s0, eg.add("param", 0)])
    v = eg.add("rho_value", None, [o])
    s1 = eg.add("rho_sigma", None, [o])
    assert eg.is_linear(s0) and eg.is_linear(o) and eg.is_linear(s1)
    assert eg.is_linear(v) is False
    ph = eg.add("phi", None, [eg.add("const.b", True), s0, s1])
    assert eg.sort(ph) is T.SIGMA
    assert eg.is_linear(eg.add("param", 3)) is None  # unknown without the PEG's parameter types


def test_long_params_are_seeded():
    peg = PEG("p")
    peg.param_types = [LONG]
    peg.root = peg.add("neg.l", None, (peg.add("param", 0),))
    eg = EPeg()
    m = eg.add_peg(peg)
    assert eg.sort(m[0]) is T.LONG


class _MinSize(Analysis):
    """The smallest term size of each class."""

    name = "size"
    unknown = 10 ** 9

    def make(self, eg, node):
        return 1 + sum(eg.data(c, "size") for c in node[2])

    def merge(self, a, b):
        return min(a, b)


class _Folding(Analysis):
    """egg's constant-folding example in a toy language of its own (``num``, ``+``, ``*``): ``modify`` puts the
    folded number's node into the class."""

    name = "fold"

    def make(self, eg, node):
        op, attr, ch = node
        if op == "num":
            return attr
        vals = [eg.data(c, "fold") for c in ch]
        if op in ("+", "*") and None not in vals:
            return vals[0] + vals[1] if op == "+" else vals[0] * vals[1]
        return None

    def merge(self, a, b):
        if a is None:
            return b
        if b is not None and a != b:
            self.conflicts.append((a, b))
        return a

    def modify(self, eg, cid):
        v = eg.data(cid, "fold")
        if v is not None:
            eg.union(cid, eg.add("num", v), "fold")


def test_a_custom_analysis_plugs_in():
    """The analysis interface: the smallest term size of each class, kept through unions and rebuilds."""
    eg = EGraph([_MinSize()])
    x = eg.add("param", 0)
    big = eg.add("neg.i", None, [eg.add("neg.i", None, [x])])
    assert eg.data(big, "size") == 3
    user = eg.add("add.i", None, [big, x])
    eg.union(big, x, "neg-neg")
    eg.rebuild()
    assert eg.data(big, "size") == 1 and eg.data(user, "size") == 3
    eg.check_invariants()


def test_analyses_compose_and_modify_adds_the_folded_constant():
    """Two analyses on one generic e-graph (each class keeps a fact of each), and egg's modify hook, called after
    a new node, after a union and after a fact repaired by rebuild."""
    eg = EGraph([_MinSize(), _Folding()])
    two, three = eg.add("num", 2), eg.add("num", 3)
    s = eg.add("+", None, [two, three])  # modify after add: the class gets (num 5)
    assert eg.lookup("num", 5) == eg.find(s) and eg.data(s, "size") == 1  # (num 5) is its smallest term
    x = eg.add("var", "x")
    p = eg.add("*", None, [x, two])
    assert eg.data(p, "fold") is None
    eg.union(x, three, "x=3")  # modify after the union; p's fact is repaired by rebuild, then modify adds (num 6)
    eg.rebuild()
    assert eg.data(p, "fold") == 6 and eg.lookup("num", 6) == eg.find(p)
    assert eg.data(p, "size") == 1  # the number is p's smallest term now
    eg.check_invariants()
    assert eg.conflicts == []
    eg.union(s, p, "wrong")  # 5 = 6: the analysis reports the contradiction
    eg.rebuild()
    assert eg.conflicts == [(5, 6)] or eg.conflicts == [(6, 5)]


def test_a_fact_known_from_outside_is_merged_and_its_parents_repaired():
    eg = EGraph([_MinSize()])
    x = eg.add("param", 0)
    user = eg.add("neg.i", None, [eg.add("neg.i", None, [x])])
    assert eg.merge_data(x, "size", 0) and not eg.merge_data(x, "size", 5)  # min: 5 tells nothing new
    eg.rebuild()
    assert eg.data(user, "size") == 2
    eg.check_invariants()


def test_the_egraph_package_imports_nothing_outside_itself_and_no_module_circle():
    """The e-graph is generic (as egg's): no import of the PEG, Java semantics or anything else of the project,
    and its modules import each other without a circle (type-only imports included)."""
    import ast
    import pathlib

    import peggy_jvm.egraph as pkg

    here = pathlib.Path(pkg.__file__).parent
    uses: dict[str, set[str]] = {}
    for f in sorted(here.glob("*.py")):
        mod = f.stem
        uses[mod] = set()
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] == "peggy_jvm" for a in node.names), f.name
            elif isinstance(node, ast.ImportFrom):
                assert node.level <= 1 and (node.level == 1 or node.module.split(".")[0] != "peggy_jvm"), \
                    f"{f.name} imports {'.' * node.level}{node.module}"
                if node.level == 1 and node.module and mod != "__init__":
                    uses[mod].add(node.module.split(".")[0])
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        assert state.get(m) != 1, f"import circle: {' -> '.join(path + [m])}"
        if state.get(m) == 2:
            return
        state[m] = 1
        for d in sorted(uses.get(m, ())):
            visit(d, path + [m])
        state[m] = 2

    for m in sorted(uses):
        visit(m, [])


def test_a_rule_set_serving_two_egraphs_at_the_same_version_matches_each_by_its_own_classes():
    # ground sub-patterns such as (const.i 0) are looked up once per e-graph version; two e-graphs built in the
    # same number of steps share a version, and a class id cached from the first is another class in the second
    # (here: the parameter), which made add-zero rewrite 0 + x into 0 in jama's Matrix.arrayLeftDivide
    from peggy_jvm.egraph import Limits, Runner
    from peggy_jvm.rules import default_rules

    add_zero = [r for r in default_rules().active() if r.name == "add-zero"]
    first = EGraph()
    zero, x = first.add("const.i", 0), first.add("param", 1)
    first.add("add.i", None, (x, zero))
    Runner(add_zero, Limits(max_iterations=1)).run(first)
    second = EGraph()
    x2, zero2 = second.add("param", 1), second.add("const.i", 0)  # the ids the other way round
    total = second.add("add.i", None, (zero2, x2))  # 0 + x: add-zero (x + 0) must not match it
    second.rebuild()
    Runner(add_zero, Limits(max_iterations=1)).run(second)
    assert not second.equiv(total, zero2) and not second.equiv(total, x2)


def test_rules_of_a_shared_explanation_are_collected_once():
    """explain() shares the explanation of a pair met again; rules() must walk that DAG, not the tree it unfolds
    to (24 levels of two congruence steps sharing one child take 2^24 steps as a tree; StringEscapeUtils.<clinit> of
    commons-lang3 took 421 s under --explain)."""
    import time

    from peggy_jvm.egraph.explain import CONGRUENCE, Explanation, Reason, Step

    leaf = Explanation(0, 1, [Step(0, 1, Reason("add-comm"), "a", "b")])
    e = leaf
    for k in range(24):
        cong = Reason(CONGRUENCE, ("a", "b"), ((0,), (1,)))
        e = Explanation(k, k + 1, [Step(0, 1, cong, "x", "y", [e]), Step(1, 2, cong, "y", "z", [e]),
                                   Step(2, 3, Reason("mul-one"), "z", "w")])
    start = time.perf_counter()
    assert set(e.rules()) == {"add-comm", "mul-one"}
    assert time.perf_counter() - start < 1.0


def test_a_search_stops_at_its_limit_inside_one_root_node():
    # phi(c, X, X) with 60 forms x + p_k of X has 3,600 matches of one root node; the runner bans a rule past
    # its limit, so a search must not build them all first (JAMA's SVD constructor: 93 million matches, 200 s)
    eg = EGraph()
    x, c = eg.add("param", 0), eg.add("param", 1)
    forms = [eg.add("add.i", None, [x, eg.add("param", 2 + k)]) for k in range(60)]
    for f in forms[1:]:
        eg.union(forms[0], f)
    eg.add("phi", None, [c, forms[0], forms[0]])
    eg.rebuild()
    pat = PNode("phi", None, (PVar("c"), PNode("add.i", None, (PVar("x"), PVar("a"))),
                              PNode("add.i", None, (PVar("x"), PVar("b")))))
    mt = compile_pattern(pat)
    assert len(mt.search(eg)[0]) == 3600
    found, late = mt.search(eg, limit=50)
    assert not late and len(found) == 50
