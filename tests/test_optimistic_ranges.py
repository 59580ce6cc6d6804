"""Facts from a loop's exit test (peggy_jvm/rules/optimistic.py, ``loop_contexts`` and the ``context`` rewrite of
``loop-optimistic``; soundness in docs/optimistic.md, "Facts from a loop's exit test"): the contextual facts on
hand-built PEGs (``i`` in ``[0, n)`` before the exit of ``for (i = 0; i < n; i++)``, and nothing of it outside the
loop's iterations), then purpose-written methods through the full stage with the self-check on: the decided test or
divisor check gone from the disassembly, the sibling loop and the value read after the exit keeping their test,
every method run against the original on the JVM (``-Xverify:all``) and proved by ``validate``. The four mutants (a
range off by one at either end, a loop's facts carried to a sibling loop at the same depth, a body value read at
the exit rewritten) are refused by the self-check, and without it differ on the JVM and are not equivalent for
``validate``."""
from __future__ import annotations

import pytest

import difftest as dt
from support.fullstage import assert_behaves_like_original, listing, optimize_source
from peggy_jvm.epeg import EPeg
from peggy_jvm.peg.graph import PEG
from peggy_jvm.rules import policy
from peggy_jvm.rules.optimistic import LoopOptimism, analyze, loop_contexts
from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs

MAX = 2**31 - 1


def _counted(body_test) -> tuple[EPeg, dict[str, int]]:
    """``s = 0; for (i = 0; i < n; i++) s = test(i, n) ? s + 1 : s - 7``, returned ``eval(s)``, as an E-PEG; the
    ids of ``i``, ``s``, the test and the exit test."""
    g = PEG(name="counted", param_types=["int"])
    s0, n = g.add("sigma0"), g.add("param", 0)
    zero, one = g.add("const.i", 0), g.add("const.i", 1)
    i, s = g.new_theta(1), g.new_theta(1)
    g.set_theta(i, zero, g.add("add.i", None, (i, one)))
    test = body_test(g, i, n)
    g.set_theta(s, zero, g.add("phi", None, (test, g.add("add.i", None, (s, one)),
                                             g.add("sub.i", None, (s, g.add("const.i", 7))))))
    stop = g.add("ge.i", None, (i, n))
    p = g.add("pass", 1, (g.add("guard", None, (s0, stop)),))
    g.root = g.add("return", None, (g.add("eval", 1, (s0, p)), g.add("eval", 1, (s, p))))
    g.seal()
    eg = EPeg()
    ids = eg.add_peg(g)
    eg.rebuild()
    return eg, {"i": ids[i], "s": ids[s], "test": ids[test], "stop": ids[stop]}


def _decided(eg: EPeg, cid: int, mutant: str | None = None) -> object:
    """What the loop's context substitutes for class ``cid`` (a constant key), or None."""
    find = eg.find
    for m in loop_contexts(eg, analyze(eg), mutant):
        for t, kind, v in m[5]:
            if find(t) == find(cid) and kind == "const":
                return v
    return None


def test_the_counter_is_in_range_before_the_exit_only():
    """``i >= 0`` is true at every iteration before the exit (``i`` in ``0..MAX-1``: ``i < n`` there, so ``i + 1``
    cannot wrap), while the global analysis still gives ``i`` nothing (past the exit it wraps)."""
    eg, ids = _counted(lambda g, i, n: g.add("ge.i", None, (i, g.add("const.i", 0))))
    assert analyze(eg).of(eg, ids["i"]) is None
    assert _decided(eg, ids["test"]) == ("const.b", True)
    assert _decided(eg, ids["stop"]) == ("const.b", False)  # the exit test itself, before the exit


@pytest.mark.parametrize("k,want", [(-1, True), (0, None), (1, None), (MAX - 2, None), (MAX - 1, False)])
def test_the_range_is_exact_at_both_ends(k, want):
    """``i > k``: true below the range's low end 0, false from its high end ``MAX - 1`` on (``i < n <= MAX``),
    a test in between (``i > 0`` is false at the first iteration only)."""
    eg, ids = _counted(lambda g, i, n: g.add("gt.i", None, (i, g.add("const.i", k))))
    assert _decided(eg, ids["test"]) == (None if want is None else ("const.b", want))


def test_the_exit_bound_is_exact_and_the_mutant_is_not():
    """With a constant bound ``i < 10``: ``i == 9`` stays a test (the last iteration), ``i == 10`` is decided
    false; the ``range-high`` mutant (``i < 10`` taken as ``i < 9``) decides ``i == 9`` false."""
    def loop(k):
        g = PEG(name="ten", param_types=["int"])
        s0 = g.add("sigma0")
        zero, one, ten = g.add("const.i", 0), g.add("const.i", 1), g.add("const.i", 10)
        i, s = g.new_theta(1), g.new_theta(1)
        g.set_theta(i, zero, g.add("add.i", None, (i, one)))
        test = g.add("eq.i", None, (i, g.add("const.i", k)))
        g.set_theta(s, zero, g.add("phi", None, (test, g.add("add.i", None, (s, one)), s)))
        p = g.add("pass", 1, (g.add("guard", None, (s0, g.add("ge.i", None, (i, ten)))),))
        g.root = g.add("return", None, (g.add("eval", 1, (s0, p)), g.add("eval", 1, (s, p))))
        g.seal()
        eg = EPeg()
        ids = eg.add_peg(g)
        eg.rebuild()
        return eg, ids[test]
    eg, test = loop(9)
    assert _decided(eg, test) is None
    assert _decided(eg, test, "range-high") == ("const.b", False)
    eg, test = loop(10)
    assert _decided(eg, test) == ("const.b", False)


def test_the_rewrite_keeps_the_loop_whole():
    """The rule's unions for ``i >= 0``: the returned value's eval gets a copy of ``s`` whose next value reads no
    test (``i`` reaches no substituted class: not copied, so the exit test and its pass stay as they are); the
    class ``i >= 0`` itself is not merged with true (past the exit it may be false)."""
    eg, ids = _counted(lambda g, i, n: g.add("ge.i", None, (i, g.add("const.i", 0))))
    rule = LoopOptimism()
    matches, _ = rule.search(eg, 100, 0.0)
    assert [m for m in matches if m[0] == "context"]
    assert any(rule.apply(eg, m) for m in matches)
    eg.rebuild()
    assert eg.const(ids["test"]) is None
    assert sum(op == "pass" for c in eg.classes_with_op("pass") for op, _a, _c in eg.nodes(c)) == 1
    evals = [ch[0] for cid in eg.classes_with_op("eval") for op, _a, ch in eg.nodes(cid) if op == "eval"]
    copies = [t for t in evals if eg.find(t) != eg.find(ids["s"]) and any(op == "theta" for op, _a, _c in eg.nodes(t))]
    assert copies, "no copy of s is evaluated"
    # the copy's next value reads no comparison any more (a phi on the constant true, folded by other rules)
    nxt = [ch[1] for op, _a, ch in eg.nodes(copies[0]) if op == "theta"][0]
    reads = {op for _o, _a, ch in eg.nodes(nxt) for k in ch for op, _a2, _c2 in eg.nodes(k)}
    assert "const.b" in reads and not any(op.startswith("ge.") for op in reads), reads


# -- the full stage on Java --------------------------------------------------------------------------------------
SOURCE = r"""
public class Ranges {
    // i >= 0 before the exit: the test and its arm go
    static int nonNegative(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) { if (i >= 0) s += i; else s -= 7; }
        return s;
    }
    // the loop's own test, repeated in the body
    static int repeated(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) { if (i < n) s += i; else s -= 7; }
        return s;
    }
    // i >= 1: the unused division cannot throw, and goes
    static int divisor(int m, int n) {
        int s = 0;
        for (int i = 1; i < n; i++) { int q = m / i; s += i; }
        return s;
    }
    // counting down, i > 0 before the exit: i == 0 never holds; i == 1 does (the last iteration)
    static int down(int n) {
        int s = 0;
        for (int i = n; i > 0; i--) { if (i == 0) s -= 100; if (i == 1) s += 1000; s += i; }
        return s;
    }
    // i < 10: i == 9 holds at the last iteration and stays
    static int last(int n) {
        int s = n;
        for (int i = 0; i < 10; i++) { if (i == 9) s += 100; s += i; }
        return s;
    }
    // two loops with one counter class: the first loop's i < n says nothing in the second (its exit is j < m)
    static int sibling(int n, int m) {
        int s = 0;
        for (int i = 0; i < n; i++) s += i;
        for (int j = 0; j < m; j++) { if (j < n) s += 3; else s -= 1; }
        return s;
    }
    // t is read at the exit, where i < n is false: its test stays
    static int afterExit(int n) {
        int i = 0;
        while (true) { int t = i < n ? 1 : 2; if (i >= n) return t + i; i++; }
    }
    // (javap ends the last method's listing without a blank line, which listing() looks for)
    static int end() { return 0; }
}
"""

NS = [-2, -1, 0, 1, 2, 3, 9, 10, 12]


def _calls() -> list[dt.Call]:
    c = "Ranges"
    calls = [dt.Call(c, name, "(I)I", (n,)) for name in ("nonNegative", "repeated", "down", "last", "afterExit")
             for n in NS]
    calls += [dt.Call(c, name, "(II)I", (a, b)) for name in ("divisor", "sibling") for a in NS for b in NS]
    return calls


@pytest.fixture(scope="module")
def optimized(java_home, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        return optimize_source(java_home, tmp_path_factory.mktemp("ranges"), mp, "Ranges", SOURCE)


def _ops(java_home, cp, method: str) -> list[tuple[str, str]]:
    return [(op, rest) for _o, op, rest in listing(java_home, cp, "Ranges", method)]


def _tests(ops: list[tuple[str, str]]) -> int:
    return sum(op.startswith("if") for op, _r in ops)


def test_decided_tests_and_checks_are_gone(optimized, java_home):
    orig, out, rows = optimized
    for name in ("nonNegative", "repeated", "divisor", "down"):
        assert rows[name].status == "rewritten", (name, rows[name].reason)
    for name in ("nonNegative", "repeated"):  # the loop's own test is the only one left, and no -7
        after = _ops(java_home, out, name)
        assert _tests(_ops(java_home, orig, name)) == 2 and _tests(after) == 1, after
        assert not any(op == "iinc" and rest.endswith("-7") for op, rest in after), after
    assert ("idiv", "") in _ops(java_home, orig, "divisor")
    assert ("idiv", "") not in _ops(java_home, out, "divisor"), _ops(java_home, out, "divisor")
    after = _ops(java_home, out, "down")
    assert not any("-100" in rest for _op, rest in after), after
    assert any("1000" in rest for _op, rest in after), after  # i == 1 happens: kept


def test_tests_that_can_hold_are_kept(optimized, java_home):
    """``last``'s ``i == 9``, the sibling loop's ``j < n`` and the value read at the exit keep their tests."""
    _orig, out, _rows = optimized
    assert ("bipush", "9") in _ops(java_home, out, "last")
    assert ("iconst_m1", "") in _ops(java_home, out, "sibling")  # the else arm of j < n
    assert ("iconst_2", "") in _ops(java_home, out, "afterExit")


def test_rewritten_methods_behave_like_the_originals(optimized, java_home):
    orig, out, rows = optimized
    assert_behaves_like_original(java_home, orig, out, rows, _calls())


def test_validate_proves_the_rewritten_methods(optimized):
    orig, out, rows = optimized
    report = validate_inputs(orig, out, ValidateOptions(method_timeout=10.0))
    got = {p.name: p for p in report.pairs}
    for name in ("nonNegative", "repeated", "divisor", "down"):
        assert got[name].verdict is Verdict.EQUIVALENT, (name, got[name].reason)


# -- the mutants ---------------------------------------------------------------------------------------------------
#: mutant -> the method its wrong rewrite breaks
MUTANTS = {"range-high": "last", "range-low": "down", "sibling": "sibling", "after-exit": "afterExit"}


def _only(name: str) -> str:
    """The class with just the method ``name`` (and the one javap needs after it): a mutant's test optimizes and
    validates only the method its wrong rewrite breaks."""
    start = SOURCE.index(f" {name}(")
    start = SOURCE.rindex("\n    //", 0, start)
    end = SOURCE.index("\n    //", start + 1)
    return "public class Ranges {" + SOURCE[start:end] + "\n    static int end() { return 0; }\n}\n"


def _with_mutant(monkeypatch: pytest.MonkeyPatch, where: str, mutant: str) -> None:
    real = getattr(policy, where)
    monkeypatch.setattr(policy, where, lambda rules=None: [LoopOptimism(mutant=mutant)
                                                           if r.name == "loop-optimistic" else r for r in real(rules)])


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_the_self_check_refuses_the_mutant(java_home, tmp_path, monkeypatch, mutant):
    """Each mutant in the optimizer's rules only: the method it breaks keeps its original code (the self-check,
    proving with the real rules, does not prove the wrong rewrite)."""
    name = MUTANTS[mutant]
    _with_mutant(monkeypatch, "optimizer_rules", mutant)
    _orig, _out, rows = optimize_source(java_home, tmp_path, monkeypatch, "Ranges", _only(name))
    assert rows[name].status == "unchanged", rows[name].reason
    assert rows[name].reason.startswith("self-check: "), rows[name].reason


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_the_mutants_output_is_not_equivalent(java_home, tmp_path, monkeypatch, mutant):
    name = MUTANTS[mutant]
    _with_mutant(monkeypatch, "safe_rules", mutant)
    orig, out, rows = optimize_source(java_home, tmp_path, monkeypatch, "Ranges", _only(name), self_check=False)
    assert rows[name].status == "rewritten", rows[name].reason
    calls = [c for c in _calls() if c.name == name]
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches, f"the {mutant} mutant's {name} went unnoticed on the JVM"
    monkeypatch.undo()
    report = validate_inputs(orig, out, ValidateOptions(method_timeout=10.0))
    assert {p.name: p for p in report.pairs}[name].verdict is Verdict.NOT_EQUIVALENT
