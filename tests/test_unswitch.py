"""Loop unswitching and facts from branch conditions (peggy_jvm/rules/unswitch.py, builtin ``loop-unswitch``,
group ``peg.loop.unswitch``; peggy_jvm/rules/branchfacts.py, builtin ``branch-facts``, group ``peg.phi.facts``;
soundness argued in their docstrings, above ``SAFE_GROUPS`` in peggy_jvm/rules/policy.py and in docs/axioms.md):
purpose-written methods optimized by the full stage (every rewrite kept, the self-check on: a rewritten method is
a proved one), the shape read off javap, the code run against the original on the JVM (``-Xverify:all``) with
loops that run zero times and inputs that throw, and proved again by ``validate``. Mutants of both rules (the
loops in the wrong arms, a loop's effects dropped in one arm, a wrong constant or the wrong arm's fact) are
refused by the self-check, and without it their output is shown not equivalent by ``validate`` and differs on
the JVM."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import difftest as dt
from support.fullstage import listing, optimize_source
from peggy_jvm.rules import policy
from peggy_jvm.rules.branchfacts import BranchFacts
from peggy_jvm.rules.unswitch import LoopUnswitch
from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs

SOURCE = r"""
import java.util.Arrays;

public class Unswitch {
    // n < 0 does not change in the loop: one loop per case, and the case without effects has no loop left
    static int mark(int[] a, int[] b, int m, int n) {
        int s = 0;
        for (int i = 0; i < m; i++) {
            if (n < 0) { a[i] = i; Arrays.fill(b, i); } else { s += 2; }
        }
        return s;
    }
    // both cases keep a loop that differs only by the test's arm: two copies of the loop do not pay
    static int pick(int n, int m) {
        int s = 0;
        for (int i = 0; i < m; i++) {
            if (n < 0) s += i; else s ^= i;
        }
        return s;
    }
    // facts from branch conditions: x is 5 in the first arm, 4 in the second; every return is 20
    static int facts(int x) { if (x == 5) return x << 2; if (x == 4) return 5 * x; return 20; }
    // a fact of one arm only: 15 when x is 5, else x + 1
    static int factsArm(int x) { if (x == 5) return x * 3; return x + 1; }

    static String observeMark(int[] a, int[] b, int m, int n) {
        String r;
        try { r = String.valueOf(mark(a, b, m, n)); } catch (RuntimeException e) { r = e.getClass().getName(); }
        return r + Arrays.toString(a) + Arrays.toString(b);
    }
}
"""

ARRAYS = [None, [], [7], [7, 8, 9]]
COUNTS = [-1, 0, 1, 2, 3]
SIGNS = [-5, -1, 0, 1]
XS = [-2**31, -1, 0, 3, 4, 5, 6, 2**31 - 1]


def _calls() -> list[dt.Call]:
    """Zero-trip loops (m <= 0, also with a null array), a null array, an array shorter than m, both signs."""
    c = "Unswitch"
    calls = [dt.Call(c, "observeMark", "([I[III)Ljava/lang/String;", (a, b, m, n))
             for a, b, m, n in itertools.product(ARRAYS, ARRAYS[:2] + ARRAYS[3:], COUNTS, SIGNS)]
    calls += [dt.Call(c, "pick", "(II)I", (n, m)) for n, m in itertools.product(SIGNS, COUNTS + [10])]
    calls += [dt.Call(c, name, "(I)I", (x,)) for name in ("facts", "factsArm") for x in XS]
    return calls


def _optimize(java_home: Path, work: Path, mp: pytest.MonkeyPatch, self_check: bool = True) -> tuple[Path, Path, dict]:
    return optimize_source(java_home, work, mp, "Unswitch", SOURCE, self_check)


@pytest.fixture(scope="module")
def optimized(java_home, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        return _optimize(java_home, tmp_path_factory.mktemp("unswitch"), mp)


def _listing(java_home: Path, cp: Path, method: str) -> list[tuple[int, str, str]]:
    return listing(java_home, cp, "Unswitch", method)


def _loops(listing: list[tuple[int, str, str]]) -> list[tuple[int, int]]:
    """The spans (target, offset) of backward branches: the loops."""
    return [(int(rest), off) for off, op, rest in listing
            if (op.startswith("if") or op.startswith("goto")) and rest.isdigit() and int(rest) <= off]


def _tests_of(listing: list[tuple[int, str, str]], load: str) -> list[tuple[int, bool]]:
    """(offset, inside a loop) of each conditional branch right after ``load`` (the test of that local)."""
    spans = _loops(listing)
    out = []
    for (_o1, op1, rest1), (off, op, _r) in zip(listing, listing[1:]):
        if f"{op1} {rest1}".strip() in (load, load.replace(" ", "_")) and op.startswith("if"):
            out.append((off, any(lo <= off <= hi for lo, hi in spans)))
    return out


def test_both_rules_are_among_the_optimizers_and_the_proofs_rules():
    for name in ("loop-unswitch", "branch-facts"):
        assert name in {r.name for r in policy.safe_rules()}, name
        assert name in {r.name for r in policy.proof_rules(None)}, name


def test_an_invariant_test_leaves_its_loop(optimized, java_home):
    """``mark``: the test of ``n`` (local 3) was in the loop; after unswitching it is done once, in front of the
    one loop left (the case without effects became a closed form), and the loop holds no test of ``n``."""
    orig, out, rows = optimized
    assert rows["mark"].status == "rewritten", rows["mark"].reason
    before, after = _listing(java_home, orig, "mark"), _listing(java_home, out, "mark")
    assert [inside for _o, inside in _tests_of(before, "iload_3")] == [True], before
    tests = _tests_of(after, "iload_3")
    assert len(tests) == 1 and tests[0][1] is False, after
    assert len(_loops(after)) == 1, after


def test_copies_that_do_not_pay_are_not_chosen(optimized, java_home):
    """``pick``: both cases keep a loop as large as the original without its test; the two copies cost more
    than the test they save, so the method keeps one loop with the test in it."""
    _orig, out, rows = optimized
    after = _listing(java_home, out, "pick")
    assert len(_loops(after)) == 1, after
    assert [inside for _o, inside in _tests_of(after, "iload_0")] == [True], after


def test_branch_facts_fold_every_arm(optimized, java_home):
    """``facts``: ``x << 2`` under ``x == 5`` and ``5 * x`` under ``x == 4`` fold to 20, the three returns are
    one: the method is ``return 20``."""
    _orig, out, rows = optimized
    assert rows["facts"].status == "rewritten", rows["facts"].reason
    assert [(op, rest) for _o, op, rest in _listing(java_home, out, "facts")] == [("bipush", "20"), ("ireturn", "")]


def test_rewritten_methods_behave_like_the_originals(optimized, java_home):
    orig, out, rows = optimized
    assert all(r.status != "fallback" for r in rows.values()), {n: r.reason for n, r in rows.items()}
    calls = _calls()
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [], result.report()
    assert result.compared == len(calls)


def test_validate_proves_the_rewritten_methods(optimized):
    orig, out, _rows = optimized
    report = validate_inputs(orig, out, ValidateOptions(explain=True, method_timeout=10.0))
    rows = {p.name: p for p in report.pairs}
    for name in ("mark", "facts", "factsArm"):
        assert rows[name].verdict is Verdict.EQUIVALENT, (name, rows[name].reason)


def _with_mutant(monkeypatch: pytest.MonkeyPatch, where: str, mutant: object) -> None:
    """The optimizer's rules (``where``: ``optimizer_rules``, or ``safe_rules`` to reach the self-check's too)
    with the rule of ``mutant``'s name replaced by ``mutant``."""
    real = getattr(policy, where)
    monkeypatch.setattr(policy, where, lambda rules=None: [mutant if r.name == mutant.name else r
                                                           for r in real(rules)])


MUTANTS = [("mark", lambda: LoopUnswitch(mutant="swap")), ("mark", lambda: LoopUnswitch(mutant="drop-effect")),
           ("factsArm", lambda: BranchFacts(mutant="wrong-constant")),
           ("factsArm", lambda: BranchFacts(mutant="wrong-arm"))]


@pytest.mark.parametrize("method,make", MUTANTS, ids=["swap", "drop-effect", "wrong-constant", "wrong-arm"])
def test_the_self_check_refuses_a_mutant(method, make, java_home, tmp_path, monkeypatch):
    """The mutant in the optimizer's rules only: the self-check, proving with the real rules, keeps the
    original code."""
    _with_mutant(monkeypatch, "optimizer_rules", make())
    _orig, _out, rows = _optimize(java_home, tmp_path, monkeypatch)
    assert rows[method].status == "unchanged", rows[method].reason
    assert rows[method].reason.startswith("self-check: "), rows[method].reason


# drop-effect's counterexample costs 8 s of CPU (the slow tier's; the other three show the check in the fast tier)
@pytest.mark.parametrize("method,make", [pytest.param(*m, id=i, marks=[pytest.mark.slow] if i == "drop-effect" else [])
                                         for m, i in zip(MUTANTS, ["swap", "drop-effect", "wrong-constant",
                                                                   "wrong-arm"])])
def test_a_mutants_output_is_not_equivalent(method, make, java_home, tmp_path, monkeypatch):
    """The mutant everywhere and no self-check: its code is emitted, differs on the JVM, and ``validate`` (with
    the real rules) finds it not equivalent."""
    _with_mutant(monkeypatch, "safe_rules", make())
    orig, out, rows = _optimize(java_home, tmp_path, monkeypatch, self_check=False)
    assert rows[method].status == "rewritten", rows[method].reason
    calls = [c for c in _calls() if c.name in (method, "observeMark" if method == "mark" else method)]
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches, f"the {make().mutant} mutant's {method} went unnoticed on the JVM"
    monkeypatch.undo()
    report = validate_inputs(orig, out, ValidateOptions(method_timeout=10.0))
    rows_v = {p.name: p for p in report.pairs}
    assert rows_v[method].verdict is Verdict.NOT_EQUIVALENT, rows_v[method].reason
