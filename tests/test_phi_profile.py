"""The phi-profile validity checker (peggy_jvm/pegextract/phi_profile.py; Stepp 2011, section 8.7).

Hand-built PEGs: the thesis's example (a call whose value is used unconditionally while the call itself is on
one arm of the sigma only: rejected), its valid forms (call unconditional, value used conditionally; both under
the same condition; both arms of one condition joining again), pruning, the baseline excuse, minimal blocking
clauses through the extractor's checker, and every builder PEG of a small Java class passing against itself.
"""
from __future__ import annotations

import pytest

from peggy_jvm.pegextract.phi_profile import effect_profiles, find_violation, phi_profiles, prune
from peggy_jvm.ir.nodes import MethodRef
from peggy_jvm.peg.graph import PEG
from conftest import javac_command
from support.javac_cache import run_javac

CALL = MethodRef("C", "f", "(I)I")


def _base() -> tuple[PEG, int, int, int]:
    peg = PEG(name="m", param_types=[])
    s0 = peg.add("sigma0")
    x = peg.add("param", 0)
    c = peg.add("gt.i", None, (x, peg.add("const.i", 0)))
    return peg, s0, x, c


def _call(peg: PEG, s: int, x: int) -> tuple[int, int, int]:
    e = peg.add("invoke.static", CALL, (s, x))
    return e, peg.add("rho_sigma", None, (e,)), peg.add("rho_value", None, (e,))


def thesis_example() -> tuple[PEG, int, int]:
    """if (c) v = f(x) on the sigma only; return v unconditionally: the call is more conditional than its value.
    Returns (peg, the effect, an unrelated pure node that must not be blamed)."""
    peg, s0, x, c = _base()
    e, rs, rv = _call(peg, s0, x)
    unrelated = peg.add("mul.i", None, (x, peg.add("const.i", 7)))
    sig = peg.add("phi", None, (c, rs, s0))
    val = peg.add("add.i", None, (rv, unrelated))
    peg.root = peg.add("return", None, (sig, val))
    peg.seal()
    return peg, e, unrelated


def test_thesis_example_is_rejected():
    peg, e, unrelated = thesis_example()
    v = find_violation(peg)
    assert v is not None and v.effect == e
    assert "more conditional" in v.reason


def test_violation_explanation_is_small_and_relevant():
    peg, e, unrelated = thesis_example()
    v = find_violation(peg)
    assert e in v.explanation and peg.root in v.explanation
    assert unrelated not in v.explanation  # not the whole assignment
    assert len(v.explanation) < len(peg.reachable())


def test_unconditional_effect_with_conditional_use_is_valid():
    peg, s0, x, c = _base()
    e, rs, rv = _call(peg, s0, x)
    val = peg.add("phi", None, (c, rv, x))
    peg.root = peg.add("return", None, (rs, val))
    peg.seal()
    assert find_violation(peg) is None


def test_effect_and_use_under_the_same_condition_are_valid():
    peg, s0, x, c = _base()
    e, rs, rv = _call(peg, s0, x)
    sig = peg.add("phi", None, (c, rs, s0))
    val = peg.add("phi", None, (c, rv, x))
    peg.root = peg.add("return", None, (sig, val))
    peg.seal()
    assert find_violation(peg) is None


def test_value_read_where_the_effect_did_not_happen_is_rejected():
    peg, s0, x, c = _base()
    e, rs, rv = _call(peg, s0, x)
    sig = peg.add("phi", None, (c, rs, s0))
    val = peg.add("phi", None, (c, x, rv))  # value read on the false arm, effect on the true arm
    peg.root = peg.add("return", None, (sig, val))
    peg.seal()
    v = find_violation(peg)
    assert v is not None and v.effect == e


def _negated_test(value_where_effect_is: bool) -> tuple[PEG, int, int, int]:
    """``if (x > 0) f(x)`` on the sigma, and its value read under the other form of the same test, ``x <= 0``:
    on that test's false arm (where the call ran, ``value_where_effect_is``) or on its true arm (where it did
    not: a mutant that must stay refused). Returns (peg, the effect, ``x > 0``, ``x <= 0``)."""
    peg, s0, x, c = _base()
    e, rs, rv = _call(peg, s0, x)
    nc = peg.add("le.i", None, (x, peg.add("const.i", 0)))
    sig = peg.add("phi", None, (c, rs, s0))
    val = peg.add("phi", None, (nc, x, rv) if value_where_effect_is else (nc, rv, x))
    peg.root = peg.add("return", None, (sig, val))
    peg.seal()
    return peg, e, c, nc


def test_a_test_and_its_negation_are_one_branch_with_the_polarity():
    """The builder's PEG of one test uses one condition node; extraction may pick ``x > 0`` for the sigma and
    the class's other form ``x <= 0`` for the value (jacobi2d's sum loop: ``0 < n`` and ``0 >= n``). As
    independent conditions the value looks read where the call may not have run; named as one condition with
    its arms swapped (``polarity``, what ``select.negations`` finds in the e-graph) it is the valid PEG."""
    peg, e, c, nc = _negated_test(value_where_effect_is=True)
    v = find_violation(peg)
    assert v is not None and v.effect == e  # without the polarity: two unrelated tests
    polarity = {nc: (c, True)}
    assert find_violation(peg, polarity=lambda k: polarity.get(k, (k, False))) is None


def test_the_polarity_still_refuses_a_value_read_where_the_effect_did_not_run():
    peg, e, c, nc = _negated_test(value_where_effect_is=False)
    polarity = {nc: (c, True)}
    v = find_violation(peg, polarity=lambda k: polarity.get(k, (k, False)))
    assert v is not None and v.effect == e
    # and a polarity that does not swap the arms (the same test, not its negation) refuses the valid one
    ok, e2, c2, nc2 = _negated_test(value_where_effect_is=True)
    assert find_violation(ok, polarity=lambda k: (c2, False) if k == nc2 else (k, False)) is not None


def test_negations_are_found_through_not_nodes_in_either_direction():
    """``select.negations``: classes joined by ``not`` nodes are named by the least class number of their group,
    with their parity; a class negated twice is the same test; classes with no ``not`` stay themselves."""
    from peggy_jvm.extract.problem import ExtractionProblem, Node
    from peggy_jvm.pegextract.peg_problem import PegProblem
    from peggy_jvm.pegextract.select import negations

    def n(nid: str, op: str, kids: tuple[str, ...] = ()) -> Node:
        return Node(nid, op, 1.0, nid.split(".")[0], kids)
    # c3 = x < 0 = not(c5); c5 = x >= 0 = not(c3); c7 = not(c5) (= c3 again); c9 = not(c8): c8 = y > 0
    nodes = [n("c1.0", "use", ("c3", "c5", "c7", "c9", "c11")), n("c3.0", "lt.i"), n("c3.1", "not", ("c5",)),
             n("c5.0", "ge.i"), n("c5.1", "not", ("c3",)), n("c7.0", "not", ("c5",)), n("c8.0", "gt.i"),
             n("c9.0", "not", ("c8",)), n("c11.0", "eq.i")]
    problem = ExtractionProblem.build(nodes, ["c1"])
    enodes = {x.id: (x.op, None, tuple(int(k[1:]) for k in x.children)) for x in nodes}
    polarity = negations(PegProblem(problem, enodes, "c1", None))  # type: ignore[arg-type]
    assert polarity(3) == (3, False) and polarity(5) == (3, True) and polarity(7) == (3, False)
    assert polarity(8) == (8, False) and polarity(9) == (8, True)
    assert polarity(11) == (11, False)


def test_join_of_both_arms_prunes_to_unconditional():
    peg, s0, x, c = _base()
    e, rs, rv = _call(peg, s0, x)
    d = peg.add("lt.i", None, (x, peg.add("const.i", 5)))
    e2, rs2, _ = _call(peg, rs, peg.add("const.i", 1))
    sig = peg.add("phi", None, (d, rs2, rs))  # after the call: if (d) g(); the call's sigma reaches both arms
    peg.root = peg.add("return", None, (sig, rv))
    peg.seal()
    prof = phi_profiles(peg)
    assert prof[rs] == frozenset({frozenset()})
    assert find_violation(peg) is None


def test_prune_merges_sequences_differing_in_one_branch():
    f = frozenset
    assert prune({f({(1, True), (2, True)}), f({(1, True), (2, False)})}) == {f({(1, True)})}
    assert prune({f({(1, True)}), f({(1, False)})}) == {f()}
    assert prune({f({(1, True)}), f({(2, False)})}) == {f({(1, True)}), f({(2, False)})}
    # absorption, and order independence (the canonical form)
    assert prune({f({(1, True)}), f({(1, True), (3, True)})}) == {f({(1, True)})}
    routes = [f({(1, True), (2, True)}), f({(1, False), (3, True)}), f({(2, True), (3, True)}), f({(2, False)})]
    assert prune(set(routes)) == prune(set(reversed(routes)))


def test_baseline_excuses_only_what_is_no_worse():
    peg, e, _ = thesis_example()
    same = effect_profiles(peg)
    assert find_violation(peg, baseline=same) is None  # the trusted PEG itself passes against itself
    ok, s0, x, c = _base()
    e2, rs, rv = _call(ok, s0, x)
    ok.root = ok.add("return", None, (rs, rv))
    ok.seal()
    # a baseline where the call was unconditional does not excuse a PEG where it became conditional
    assert find_violation(peg, key=lambda n: n, baseline=effect_profiles(ok)) is not None


def test_checker_blocks_a_few_choices_not_the_whole_selection():
    from peggy_jvm.epeg import EPeg
    from peggy_jvm.extract.greedy import greedy_extract
    from peggy_jvm.pegextract.peg_problem import build_problem
    from peggy_jvm.pegextract.select import make_checker

    peg, e, unrelated = thesis_example()
    eg = EPeg()
    mapping = eg.add_peg(peg)
    pp = build_problem(eg, mapping[peg.root], peg)
    sel = greedy_extract(pp.problem).selection
    clauses = make_checker(pp)(pp.problem, sel)
    assert len(clauses) == 1
    blocked = {nid for nid, positive in clauses[0]}
    assert all(not positive for _, positive in clauses[0])
    reached = set(sel.choices.values())
    assert blocked < reached
    assert f"c{eg.find(mapping[e])}.0" in blocked
    unrelated_nodes = {n for n in reached if pp.problem.nodes[n].eclass == f"c{eg.find(mapping[unrelated])}"}
    assert unrelated_nodes and not (unrelated_nodes & blocked)


def _valid_call_problem():
    """A valid PEG (the checks before ``accept`` pass) returning a call's result or ``x`` by a condition, as an
    extraction problem, with the greedy selection of it."""
    from peggy_jvm.epeg import EPeg
    from peggy_jvm.extract.greedy import greedy_extract
    from peggy_jvm.pegextract.peg_problem import build_problem

    peg, s0, x, c = _base()
    _e, rs, rv = _call(peg, s0, x)
    peg.root = peg.add("return", None, (rs, peg.add("phi", None, (c, rv, x))))
    peg.seal()
    eg = EPeg()
    mapping = eg.add_peg(peg)
    pp = build_problem(eg, mapping[peg.root], peg)
    return pp, greedy_extract(pp.problem).selection


def test_checker_refuses_to_ask_accept_beyond_its_node_pair_budget():
    """The caller's accept (the reverter) costs n * n node pairs per candidate of n nodes: with a budget one
    pair short of the first candidate the checker raises OutOfWork without asking; with exactly enough it asks
    once and the next check is refused."""
    from peggy_jvm.extract import maxsat
    from peggy_jvm.pegextract.peg_problem import selection_to_peg
    from peggy_jvm.pegextract.select import accept_cost, make_checker, prefer_original

    pp, sel = _valid_call_problem()
    cost = accept_cost(selection_to_peg(pp, prefer_original(pp, sel, frozenset()))[0])
    asked: list[int] = []

    def accept(candidate):
        asked.append(len(candidate.nodes))
        return None

    with pytest.raises(maxsat.OutOfWork):
        make_checker(pp, accept=accept, accept_work=cost - 1)(pp.problem, sel)
    assert asked == []
    checker = make_checker(pp, accept=accept, accept_work=cost)
    checker(pp.problem, sel)
    assert len(asked) == 1
    with pytest.raises(maxsat.OutOfWork):
        checker(pp.problem, sel)
    assert len(asked) == 1


def test_checker_answers_a_selection_asked_again_at_the_same_price(monkeypatch):
    """The solver asks again about selections it met before (a model inside RC2's search, then as its optimum):
    the checker answers from what it found the first time, without computing the profiles or asking ``accept``
    again, yet charges its budgets as computing it again would, so that they run out at the same question."""
    from peggy_jvm.epeg import EPeg
    from peggy_jvm.extract import maxsat
    from peggy_jvm.extract.greedy import greedy_extract
    from peggy_jvm.pegextract import select
    from peggy_jvm.pegextract.peg_problem import build_problem

    peg, _e, _unrelated = thesis_example()  # rejected by the phi-profiles
    eg = EPeg()
    mapping = eg.add_peg(peg)
    pp = build_problem(eg, mapping[peg.root], peg)
    sel = greedy_extract(pp.problem).selection
    computed: list[int] = []
    real = select.find_violation
    monkeypatch.setattr(select, "find_violation", lambda *a, **k: computed.append(1) or real(*a, **k))
    checker = select.make_checker(pp)
    first = checker(pp.problem, sel)
    assert first and checker(pp.problem, sel) == first and len(computed) == 1

    def fits(work: int) -> bool:
        try:
            select.make_checker(pp, work=work)(pp.problem, sel)
        except maxsat.OutOfWork:
            return False
        return True
    low, high = 0, select.CHECK_WORK  # the comparisons one check of this selection takes: the least that fits
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if fits(mid) else (mid + 1, high)
    assert low > 0
    once = select.make_checker(pp, work=low)
    assert once(pp.problem, sel) == first
    with pytest.raises(maxsat.OutOfWork):  # computing it again would overdraw the comparisons: so does the answer
        once(pp.problem, sel)
    twice = select.make_checker(pp, work=2 * low)
    assert twice(pp.problem, sel) == twice(pp.problem, sel) == first
    with pytest.raises(maxsat.OutOfWork):
        twice(pp.problem, sel)

    # accept (the reverter) is asked once; the answer given again charges its node pairs again
    pp, sel = _valid_call_problem()
    asked: list[int] = []
    cost = select.accept_cost(select.selection_to_peg(pp, select.prefer_original(pp, sel, frozenset()))[0])
    checker = select.make_checker(pp, accept=lambda candidate: asked.append(1) or "refused", accept_work=2 * cost)
    first = checker(pp.problem, sel)
    assert first and checker(pp.problem, sel) == first and asked == [1]
    with pytest.raises(maxsat.OutOfWork):
        checker(pp.problem, sel)


def test_checker_refuses_a_selection_that_breaks_a_clause_it_gave_unchecked(monkeypatch):
    """A model met inside RC2's search can break a clause the checker gave before (it had not reached the
    oracle yet): the checker refuses it with that clause without building or checking its PEG, and still counts
    the call; a selection that keeps every clause given is checked as before."""
    from peggy_jvm.extract import maxsat
    from peggy_jvm.extract.problem import ExtractionProblem, Node, Selection
    from peggy_jvm.pegextract import select
    from peggy_jvm.pegextract.peg_problem import PegProblem

    problem = ExtractionProblem.build([Node("r.0", "add.i", 1.0, "r", ("x", "y")), Node("x.0", "neg.i", 1.0, "x", ()),
                                       Node("x.1", "neg.i", 2.0, "x", ()), Node("y.0", "neg.i", 1.0, "y", ()),
                                       Node("y.1", "neg.i", 2.0, "y", ())], ["r"])
    pp = PegProblem(problem, {nid: (n.op, None, ()) for nid, n in problem.nodes.items()}, "r", None)
    checked: list[frozenset[str]] = []

    def problems(pp_, sel, *args, **kwargs):  # rejects x.0 wherever it is chosen (PEG node 0 stands for it)
        checked.append(frozenset(sel.choices.values()))
        if sel.choices["x"] == "x.0":
            return object(), {0: ["x.0"]}, "refused", frozenset({0}), []
        return object(), {}, None, frozenset(), []
    monkeypatch.setattr(select, "_problems", problems)
    checker = select.make_checker(pp, max_checks=3)
    first = Selection({"r": "r.0", "x": "x.0", "y": "y.0"})
    assert checker(problem, first) == [(("x.0", False),)] and len(checked) == 1
    # another selection with x.0: the clause given, unchecked
    assert checker(problem, Selection({"r": "r.0", "x": "x.0", "y": "y.1"})) == [(("x.0", False),)]
    assert len(checked) == 1
    assert checker(problem, Selection({"r": "r.0", "x": "x.1", "y": "y.0"})) == [] and len(checked) == 2
    with pytest.raises(maxsat.OutOfWork):  # the unchecked answer counted: the fourth call is over max_checks
        checker(problem, Selection({"r": "r.0", "x": "x.0", "y": "y.1"}))


def test_checker_refuses_again_what_the_preferred_forms_make_the_same_peg(monkeypatch):
    """Two selections the solver tells apart (``y + x`` chosen for javac's ``x + y``) can be checked as one
    selection, the one with the builder's forms preferred (``prefer_original``), hence one PEG: the checker
    refuses the second from the first's verdict without building or checking it, blames the second selection's
    own node, and charges the comparisons and the reverter's node pairs the first check spent, so that its
    budgets run out where checking again would make them."""
    from peggy_jvm.extract import maxsat
    from peggy_jvm.extract.problem import ExtractionProblem, Node, Selection
    from peggy_jvm.pegextract import select
    from peggy_jvm.pegextract.peg_problem import PegProblem

    problem = ExtractionProblem.build([Node("r.0", "add.i", 1.0, "r", ("x", "y")),
                                       Node("r.1", "add.i", 1.0, "r", ("y", "x")),
                                       Node("x.0", "neg.i", 1.0, "x", ()), Node("y.0", "neg.i", 1.0, "y", ())], ["r"])
    pp = PegProblem(problem, {nid: (n.op, None, ()) for nid, n in problem.nodes.items()}, "r", None)
    original = frozenset({"r.0", "x.0", "y.0"})
    built: list[frozenset[str]] = []

    class Candidate:
        nodes = [0, 1, 2]  # three PEG nodes: the reverter's question costs 9 node pairs

    def problems(pp_, sel, baseline, accept, effort, *args, **kwargs):  # the refusal of a real check, its charges
        built.append(frozenset(sel.choices.values()))
        effort.spend(5)
        return Candidate(), {0: ["r.0"]}, accept(Candidate()), frozenset({0}), []
    monkeypatch.setattr(select, "_problems", problems)
    javac_order = Selection({"r": "r.0", "x": "x.0", "y": "y.0"})
    swapped = Selection({"r": "r.1", "x": "x.0", "y": "y.0"})

    def checker(**budgets):
        return select.make_checker(pp, accept=lambda peg: "refused", original=original, **budgets)

    check = checker()
    assert check(problem, javac_order) == [(("r.0", False),)]
    assert check(problem, swapped) == [(("r.1", False),)]  # this selection's own node is blamed
    assert built == [original]  # the PEG of the preferred forms, built and checked once
    check = checker(work=9)  # 4 comparisons left for the second: checking it would overdraw them
    check(problem, javac_order)
    with pytest.raises(maxsat.OutOfWork):
        check(problem, swapped)
    check = checker(accept_work=17)  # the reverter's 9 node pairs once, not twice
    check(problem, javac_order)
    with pytest.raises(maxsat.OutOfWork):
        check(problem, swapped)
    check = checker(work=10, accept_work=18)  # exactly enough for both
    assert check(problem, javac_order) == [(("r.0", False),)] and check(problem, swapped) == [(("r.1", False),)]


def test_builder_pegs_pass_against_themselves(tmp_path, java_home):

    from peggy_jvm.classfile.hierarchy import ClassHierarchy
    from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.peg.build import build_peg

    src = tmp_path / "P.java"
    src.write_text("""
public class P {
    static int a(int x) { int v = 0; if (x > 0) v = Integer.parseInt("" + x); return v; }
    static int b(int x) { int v = Integer.bitCount(x); if (x > 3) System.out.println(v); return x; }
    static int c(int[] a) { int s = 0; for (int i = 0; i < a.length; i++) if (a[i] > 0) s += a[i]; return s; }
}
""")
    run_javac([*javac_command(java_home), "-d", str(tmp_path), str(src)], check=True)
    cf = read_class((tmp_path / "P.class").read_bytes())
    h = ClassHierarchy([])
    for m in cf.methods:
        code = read_code(m.code_attribute().data, cf.pool)
        peg = build_peg(lift_method(cf, m, h, code, read_instructions(code)))
        assert find_violation(peg, baseline=effect_profiles(peg)) is None, m.name


def test_running_out_of_work_means_too_large_to_decide_never_valid(monkeypatch):
    # a valid PEG (the effect and its use under the same condition) is refused once the work limits are spent:
    # the extraction keeps the original instead of trusting profiles it did not finish
    from peggy_jvm.pegextract import phi_profile
    peg, s0, x, c = _base()
    e, rs, rv = _call(peg, s0, x)
    peg.root = peg.add("return", None, (peg.add("phi", None, (c, rs, s0)), peg.add("phi", None, (c, rv, x))))
    peg.seal()
    assert find_violation(peg) is None
    monkeypatch.setattr(phi_profile, "MAX_WORK", 0)
    assert effect_profiles(peg) == {e: None}
    late = find_violation(peg)
    assert late is not None and "too large to decide" in late.reason
    assert prune({frozenset({(1, True)}), frozenset({(1, False)})}) == {frozenset()}
    monkeypatch.setattr(phi_profile, "MAX_PRUNE_WORK", 1)
    assert prune({frozenset({(1, True)}), frozenset({(1, False)})}) is None


def test_a_peg_whose_own_profiles_are_too_large_is_not_saturated(monkeypatch):
    """The full stage's saturate step skips a PEG whose own phi-profiles the checker cannot finish (no
    extraction of it could be accepted: saturating would be wasted), and extraction then keeps the original,
    saying why (``pipeline._saturate``, ``pegextract.select.checkable``)."""
    from peggy_jvm.budget import DEFAULT_WORK_BUDGET
    from peggy_jvm.pegextract import phi_profile
    from peggy_jvm.pegextract.select import checkable, extract_peg
    from peggy_jvm.pipeline import _saturate
    from peggy_jvm.rules.policy import safe_rules
    peg, s0, x, c = _base()
    e, rs, rv = _call(peg, s0, x)
    peg.root = peg.add("return", None, (peg.add("phi", None, (c, rs, s0)), peg.add("phi", None, (c, rv, x))))
    peg.seal()
    assert checkable(peg) and _saturate(peg, safe_rules(), DEFAULT_WORK_BUDGET) is not None
    monkeypatch.setattr(phi_profile, "MAX_WORK", 0)
    assert not checkable(peg) and _saturate(peg, safe_rules(), DEFAULT_WORK_BUDGET) is None
    new, rep = extract_peg(peg, None)
    assert new is peg and rep.status == "original" and rep.epeg_nodes is None
    assert rep.notes == ["phi-profiles of the original PEG too large to check extractions"]
