"""Optimistic analysis of loops (peggy_jvm/rules/optimistic.py, builtin ``loop-optimistic``, group
``peg.loop.optimistic``; soundness in docs/optimistic.md): the fixpoint's exact facts on hand-built PEGs (a
loop-carried constant, a range, a value that wraps, an update in one arm, the ranks that stop a class from
justifying itself), then purpose-written methods through the full stage (every rewrite kept, the self-check on):
the shape read off javap, the code run against the original on the JVM (``-Xverify:all``), proved by
``validate``; a hand-written pair that ``validate`` proves only with the analysis. The mutant that trusts a loop-carried value's initial value is refused by the self-check, and
without it its output differs on the JVM and ``validate`` shows it not equivalent."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import difftest as dt
from support.fullstage import assert_behaves_like_original, listing, optimize_source
from peggy_jvm.epeg import EPeg
from peggy_jvm.egraph.explain import Reason
from peggy_jvm.peg.graph import PEG
from peggy_jvm.rules import policy
from peggy_jvm.rules.builtin import ThetaBisimulation
from peggy_jvm.rules.optimistic import BOTTOM, Interval, LoopOptimism, analyze, value_numbers
from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs
from conftest import javac_command
from support.javac_cache import run_javac

MAX = 2**31 - 1


def _loop(step, init: int = 0) -> tuple[EPeg, dict[str, int]]:
    """``x = init; for (i = 0; i < n; i++) x = step(g, x, i, n)``, returned ``eval(x)``, as an E-PEG; the ids
    of ``x``, its next value and the parts ``step`` names."""
    g = PEG(name="loop", param_types=["int"])
    s0, n = g.add("sigma0"), g.add("param", 0)
    zero, one = g.add("const.i", 0), g.add("const.i", 1)
    i, x = g.new_theta(1), g.new_theta(1)
    g.set_theta(i, zero, g.add("add.i", None, (i, one)))
    parts: dict[str, int] = {}
    nxt = step(g, x, i, n, parts)
    g.set_theta(x, g.add("const.i", init), nxt)
    stop = g.add("guard", None, (s0, g.add("ge.i", None, (i, n))))
    p = g.add("pass", 1, (stop,))
    g.root = g.add("return", None, (g.add("eval", 1, (s0, p)), g.add("eval", 1, (x, p))))
    g.seal()
    eg = EPeg()
    ids = eg.add_peg(g)
    return eg, {"x": ids[x], "next": ids[nxt], **{k: ids[v] for k, v in parts.items()}}


def _fact(eg: EPeg, cid: int):
    res = analyze(eg)
    assert res.converged
    return res.of(eg, cid)


def test_a_value_that_never_changes_is_its_initial_value():
    """``x = 7; loop { if (x != 7) x = x + 1; }``: optimistically 7, and then the test never holds."""
    def step(g, x, i, n, parts):
        parts["test"] = g.add("ne.i", None, (x, g.add("const.i", 7)))
        return g.add("phi", None, (parts["test"], g.add("add.i", None, (x, g.add("const.i", 1))), x))
    eg, ids = _loop(step, 7)
    assert _fact(eg, ids["x"]) == Interval(32, 7, 7)
    assert _fact(eg, ids["test"]) == ("const.b", False)
    assert eg.const(ids["x"]) is None  # the pessimistic analysis learns nothing across the back edge


def test_a_masked_value_is_in_its_range():
    """``k = 0; loop { k = (k + 3) & 7; }``: k + 3 may overflow once widened, the mask keeps 0..7 (narrowing
    brings the widened hypothesis back), and ``k < 8`` is decided."""
    def step(g, x, i, n, parts):
        nxt = g.add("and.i", None, (g.add("add.i", None, (x, g.add("const.i", 3))), g.add("const.i", 7)))
        parts["test"] = g.add("lt.i", None, (x, g.add("const.i", 8)))
        parts["use"] = g.add("phi", None, (parts["test"], nxt, x))
        return parts["use"]
    eg, ids = _loop(step)
    assert _fact(eg, ids["x"]) == Interval(32, 0, 7)
    assert _fact(eg, ids["test"]) == ("const.b", True)


def test_a_value_that_wraps_gets_no_interval():
    """``x = MAX; loop { if (x > 0) x = x + 1; }``: MAX + 1 wraps to MIN in Java, so x is not constant, and no
    interval is claimed."""
    def step(g, x, i, n, parts):
        test = g.add("gt.i", None, (x, g.add("const.i", 0)))
        return g.add("phi", None, (test, g.add("add.i", None, (x, g.add("const.i", 1))), x))
    eg, ids = _loop(step, MAX)
    assert _fact(eg, ids["x"]) is None


def test_an_update_in_one_arm_is_not_constant():
    """``x = 7; loop { if (i == 3) x = x + 1; }``: 7, then 8 from the fourth iteration on."""
    def step(g, x, i, n, parts):
        test = g.add("eq.i", None, (i, g.add("const.i", 3)))
        return g.add("phi", None, (test, g.add("add.i", None, (x, g.add("const.i", 1))), x))
    eg, ids = _loop(step, 7)
    assert _fact(eg, ids["x"]) is None  # 7, 8 widened to 7..MAX, and then x + 1 may wrap


def test_the_counter_is_not_ranged_past_its_test():
    """A counter's facts hold at every iteration, also past the loop's exit, so ``i = 0; i++`` is not in
    ``[0, n)``: it wraps; nothing is claimed from the exit test."""
    eg, ids = _loop(lambda g, x, i, n, parts: g.add("add.i", None, (x, g.add("const.i", 1))))
    assert _fact(eg, ids["x"]) is None


def test_a_class_cannot_justify_itself():
    """The initial value's class also holds ``p | (x & 0)`` (equal to p), a node that reads x at the same
    iteration: ranks leave it out, so x is not taken to have no value at all (bottom), which a meet with x's
    bottom hypothesis would otherwise give."""
    def step(g, x, i, n, parts):
        return g.add("add.i", None, (x, g.add("const.i", 1)))
    eg, ids = _loop(step)
    x = ids["x"]
    init = next(ch[0] for op, _a, ch in eg.nodes(x) if op == "theta")
    p = eg.add("param", 0)
    eg.union(init, eg.add("or.i", None, (p, eg.add("and.i", None, (x, eg.add("const.i", 0))))), Reason("test"))
    eg.union(init, p, Reason("test"))  # an initial value that is the parameter (not a constant) in this test
    eg.rebuild()
    res = analyze(eg)
    assert res.converged
    assert res.of(eg, x) is None and res.of(eg, x) is not BOTTOM


def test_the_rule_merges_the_constant_and_drops_a_divisor_check():
    """The rule's unions: the loop-carried 7 with the constant, and a check of a divisor in 1..8 off the heap."""
    def step(g, x, i, n, parts):
        test = g.add("ne.i", None, (x, g.add("const.i", 7)))
        return g.add("phi", None, (test, g.add("add.i", None, (x, g.add("const.i", 1))), x))
    eg, ids = _loop(step, 7)
    rule = LoopOptimism()
    matches, _ = rule.search(eg, 100, 0.0)
    assert any(rule.apply(eg, m) for m in matches)
    eg.rebuild()
    assert eg.const(ids["x"]) == ("const.i", 7)

    def divisor(g, x, i, n, parts):
        d = g.add("add.i", None, (g.add("and.i", None, (x, g.add("const.i", 7))), g.add("const.i", 1)))
        parts["d"] = d
        parts["check"] = g.add("check.zero.i", None, (g.add("sigma0"), d))
        return d
    eg, ids = _loop(divisor, 1)
    rule = LoopOptimism()
    matches, _ = rule.search(eg, 100, 0.0)
    assert ("nonzero", eg.find(ids["check"]), eg.find(eg.add("sigma0")), eg.find(ids["d"])) in matches
    for m in matches:
        rule.apply(eg, m)
    eg.rebuild()
    assert eg.lookup("rho_value", None, (ids["check"],)) == eg.find(ids["d"])


def _joint(x_moves: bool) -> tuple[EPeg, dict[str, int]]:
    """``a = b = 0; x = y = 1; loop { x = a == b ? x (+ 1) : 5; y = a == b ? y : 7; a += x; b += y; }``: a and b
    are equal only if x and y are, and x and y only if a and b are (``x_moves``: x also counts up, so not)."""
    g = PEG(name="joint", param_types=["int"])
    s0, n = g.add("sigma0"), g.add("param", 0)
    zero, one = g.add("const.i", 0), g.add("const.i", 1)
    i, a, b, x, y = (g.new_theta(1) for _ in range(5))
    g.set_theta(i, zero, g.add("add.i", None, (i, one)))
    same = g.add("eq.i", None, (a, b))
    x1 = g.add("phi", None, (same, g.add("add.i", None, (x, one)) if x_moves else x, g.add("const.i", 5)))
    y1 = g.add("phi", None, (same, y, g.add("const.i", 7)))
    g.set_theta(x, one, x1)
    g.set_theta(y, one, y1)
    g.set_theta(a, zero, g.add("add.i", None, (a, x1)))
    g.set_theta(b, zero, g.add("add.i", None, (b, y1)))
    p = g.add("pass", 1, (g.add("guard", None, (s0, g.add("ge.i", None, (i, n)))),))
    g.root = g.add("return", None, (g.add("eval", 1, (s0, p)), g.add("eval", 1, (g.add("sub.i", None, (a, b)), p))))
    g.seal()
    eg = EPeg()
    ids = eg.add_peg(g)
    return eg, {"a": ids[a], "b": ids[b], "x": ids[x], "y": ids[y]}


def test_value_numbering_proves_two_loops_equal_together():
    """a = b needs x = y and x = y needs a = b (their tests read a == b): optimistic value numbering assumes both
    and checks them together; theta-bisimulation's pairwise induction does not find it."""
    eg, ids = _joint(False)
    groups = value_numbers(eg, analyze(eg))
    find = eg.find
    as_sets = [{find(c) for c in g} for g in groups]
    assert {find(ids["a"]), find(ids["b"])} in as_sets and {find(ids["x"]), find(ids["y"])} in as_sets
    pairs, _ = ThetaBisimulation().search(eg, 100, float("inf"))
    assert not any({find(u), find(v)} == {find(ids["a"]), find(ids["b"])} for ps in pairs for u, v, _n, _m in ps)


def test_value_numbering_splits_what_differs():
    """x also counts up: the hypothesis x = y fails, and with it a = b."""
    eg, ids = _joint(True)
    find = eg.find
    assert not any(find(ids["a"]) in {find(c) for c in g} for g in value_numbers(eg, analyze(eg)))


# -- the full stage on Java --------------------------------------------------------------------------------------
SOURCE = r"""
public class Optimism {
    // x is 7 in every iteration: the test never holds
    static int keep(int n) { int x = 7; for (int i = 0; i < n; i++) { if (x != 7) x = x + 1; } return x; }
    // 1 * 1 == 1: x stays 1
    static int square(int n) { int x = 1; for (int i = 0; i < n; i++) { x = x * x; } return x; }
    // k stays in 0..7: k < 8 always holds
    static int ranged(int n) {
        int k = 0, s = 0;
        for (int i = 0; i < n; i++) { k = (k + 3) & 7; if (k < 8) s += k; else s -= 100; }
        return s;
    }
    // d is in 1..8: the unused division cannot throw, and goes
    static int divs(int n, int m) {
        int d = 1, s = 0;
        for (int i = 0; i < n; i++) { int q = m / d; s += i; d = (d & 7) + 1; }
        return s;
    }
    // two loops with the same counters: equal (value numbering across loops)
    static int twice(int n) {
        int s = 0; for (int i = 0; i < n; i++) s += i;
        int t = 0; for (int j = 0; j < n; j++) t += j;
        return s - t;
    }
    // a and b are equal only if x and y are, and x and y only if a and b are: value numbering proves both
    static int joint(int n) {
        int a = 0, b = 0, x = 1, y = 1;
        for (int i = 0; i < n; i++) { x = a == b ? x : 5; y = a == b ? y : 7; a += x; b += y; }
        return a - b;
    }
    // not equal: x also counts up
    static int jointMoves(int n) {
        int a = 0, b = 0, x = 1, y = 1;
        for (int i = 0; i < n; i++) { x = a == b ? x + 1 : 5; y = a == b ? y : 7; a += x; b += y; }
        return a - b;
    }
    // not constant: MAX + 1 wraps
    static int wraps(int n) { int x = 2147483647; for (int i = 0; i < n; i++) { if (x > 0) x = x + 1; } return x; }
    // not constant: an extra update in one arm
    static int arm(int n) { int x = 7; for (int i = 0; i < n; i++) { if (i == 3) x = x + 1; } return x; }
    // d may be zero (d & 7): the division stays
    static int divZero(int n, int m) {
        int d = 1, s = 0;
        for (int i = 0; i < n; i++) { int q = m / d; s += i; d = (d + 1) & 7; }
        return s;
    }
    // (javap ends the last method's listing without a blank line, which listing() looks for)
    static int last() { return 0; }
}
"""

NS = [-1, 0, 1, 2, 3, 4, 5, 9, 20]


def _calls() -> list[dt.Call]:
    c = "Optimism"
    calls = [dt.Call(c, name, "(I)I", (n,)) for name in ("keep", "square", "ranged", "twice", "joint", "jointMoves",
                                                           "wraps", "arm") for n in NS]
    calls += [dt.Call(c, name, "(II)I", (n, m)) for name in ("divs", "divZero")
              for n, m in itertools.product(NS, [0, 7, -2**31])]
    return calls


@pytest.fixture(scope="module")
def optimized(java_home, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        return optimize_source(java_home, tmp_path_factory.mktemp("optimism"), mp, "Optimism", SOURCE)


def _ops(java_home: Path, cp: Path, method: str) -> list[tuple[str, str]]:
    return [(op, rest) for _o, op, rest in listing(java_home, cp, "Optimism", method)]


def test_the_rule_is_among_the_optimizers_and_the_proofs_rules():
    assert "loop-optimistic" in {r.name for r in policy.safe_rules()}
    assert "loop-optimistic" in {r.name for r in policy.proof_rules(None)}


def test_loop_constants_are_returned(optimized, java_home):
    _orig, out, rows = optimized
    for name, want in (("keep", [("bipush", "7"), ("ireturn", "")]), ("square", [("iconst_1", ""), ("ireturn", "")]),
                       ("twice", [("iconst_0", ""), ("ireturn", "")]), ("joint", [("iconst_0", ""), ("ireturn", "")])):
        assert rows[name].status == "rewritten", (name, rows[name].reason)
        assert _ops(java_home, out, name) == want, name


def test_range_facts_remove_a_test_and_a_division(optimized, java_home):
    """``ranged``: the test ``k < 8`` (and its arm's -100) is gone; ``divs``: the unused ``m / d`` is gone, since
    ``d`` is never zero."""
    orig, out, rows = optimized
    before, after = _ops(java_home, orig, "ranged"), _ops(java_home, out, "ranged")
    assert ("bipush", "8") in before and ("bipush", "8") not in after, after
    assert not any("-100" in rest for _op, rest in after), after
    assert ("idiv", "") in _ops(java_home, orig, "divs")
    assert ("idiv", "") not in _ops(java_home, out, "divs"), _ops(java_home, out, "divs")


def test_values_that_change_get_no_fact(optimized, java_home):
    """The mutants of the shapes above: a value that wraps, an update in one arm and a divisor that may be zero
    keep their loop, their update and their division."""
    _orig, out, _rows = optimized
    for name in ("wraps", "arm"):
        assert ("iadd", "") in _ops(java_home, out, name) or any(op == "iinc" and rest.startswith("1,")
                                                                 for op, rest in _ops(java_home, out, name)), name
    assert ("idiv", "") in _ops(java_home, out, "divZero")
    assert ("isub", "") in _ops(java_home, out, "jointMoves")


def test_rewritten_methods_behave_like_the_originals(optimized, java_home):
    orig, out, rows = optimized
    assert_behaves_like_original(java_home, orig, out, rows, _calls())


def test_validate_proves_the_rewritten_methods(optimized):
    orig, out, _rows = optimized
    report = validate_inputs(orig, out, ValidateOptions(method_timeout=10.0))
    rows = {p.name: p for p in report.pairs}
    for name in ("keep", "square", "ranged", "divs", "twice", "joint"):
        assert rows[name].verdict is Verdict.EQUIVALENT, (name, rows[name].reason)


def _with_mutant(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    real = getattr(policy, where)
    monkeypatch.setattr(policy, where, lambda rules=None: [LoopOptimism(mutant="trust-init")
                                                           if r.name == "loop-optimistic" else r for r in real(rules)])


def test_the_self_check_refuses_the_mutant(java_home, tmp_path, monkeypatch):
    """The mutant (every loop-carried value its initial value) in the optimizer's rules only: ``arm`` would
    return 7; the self-check, proving with the real rules, keeps the original code."""
    _with_mutant(monkeypatch, "optimizer_rules")
    _orig, _out, rows = optimize_source(java_home, tmp_path, monkeypatch, "Optimism", SOURCE)
    assert rows["arm"].status == "unchanged", rows["arm"].reason
    assert rows["arm"].reason.startswith("self-check: "), rows["arm"].reason


def test_the_mutants_output_is_not_equivalent(java_home, tmp_path, monkeypatch):
    _with_mutant(monkeypatch, "safe_rules")
    orig, out, rows = optimize_source(java_home, tmp_path, monkeypatch, "Optimism", SOURCE, self_check=False)
    assert rows["arm"].status == "rewritten", rows["arm"].reason
    calls = [c for c in _calls() if c.name == "arm"]
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches, "the trust-init mutant's arm went unnoticed on the JVM"
    monkeypatch.undo()
    report = validate_inputs(orig, out, ValidateOptions(method_timeout=10.0))
    assert {p.name: p for p in report.pairs}["arm"].verdict is Verdict.NOT_EQUIVALENT


# -- the validator on a hand-written pair --------------------------------------------------------------------------
PAIR_ORIG = r"""
public class Pair {
    static int keep(int n) { int x = 7; for (int i = 0; i < n; i++) { if (x != 7) x = x + 1; } return x; }
    static int ranged(int n) {
        int k = 0, s = 0;
        for (int i = 0; i < n; i++) { k = (k + 3) & 7; if (k < 8) s += k; else s -= 100; }
        return s;
    }
}
"""
PAIR_OPT = r"""
public class Pair {
    static int keep(int n) { return 7; }
    static int ranged(int n) {
        int k = 0, s = 0;
        for (int i = 0; i < n; i++) { k = (k + 3) & 7; s += k; }
        return s;
    }
}
"""


def _compile(java_home: Path, work: Path, source: str) -> Path:
    work.mkdir(parents=True)
    (work / "Pair.java").write_text(source)
    run_javac([*javac_command(java_home), "-d", str(work), str(work / "Pair.java")], check=True)
    return work


@pytest.mark.slow  # the slow tier: 12 s of CPU, over the fast tier's share (docs/ci.md, session 16)
def test_validate_needs_the_analysis_for_a_loop_constant(java_home, tmp_path, monkeypatch):
    """A hand-written pair whose proofs need a loop-carried constant (``keep``) and a range that decides a test
    (``ranged``): equivalent with the default rules; without ``loop-optimistic`` (also in the optimizer's proof
    that ``validate`` tries second) neither is proved."""
    orig = _compile(java_home, tmp_path / "orig", PAIR_ORIG)
    opt = _compile(java_home, tmp_path / "opt", PAIR_OPT)
    report = validate_inputs(orig, opt, ValidateOptions(method_timeout=10.0))
    rows = {p.name: p for p in report.pairs}
    assert rows["keep"].verdict is Verdict.EQUIVALENT, rows["keep"].reason
    assert rows["ranged"].verdict is Verdict.EQUIVALENT, rows["ranged"].reason
    from peggy_jvm.rules import default_rules
    without = [r for r in default_rules().active() if r.name != "loop-optimistic"]
    real = policy.safe_rules
    monkeypatch.setattr(policy, "safe_rules", lambda rules=None: [r for r in real(rules) if r.name != "loop-optimistic"])
    report = validate_inputs(orig, opt, ValidateOptions(method_timeout=10.0, rules=without))
    rows = {p.name: p for p in report.pairs}
    assert rows["keep"].verdict is not Verdict.EQUIVALENT
    assert rows["ranged"].verdict is not Verdict.EQUIVALENT
