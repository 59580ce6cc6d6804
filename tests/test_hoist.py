"""Loop-invariant reads hoisted in front of their loop under its entry test (peggy_jvm/rules/hoist.py, builtin
``loop-hoist``, group ``peg.loop.hoist``; soundness argued in its docstring, above ``SAFE_GROUPS`` in
peggy_jvm/rules/policy.py and in docs/axioms.md): purpose-written loops whose first read (a matrix row, an
array's length) leaves the loop, optimized by the full stage (every rewrite kept, the self-check on: a rewritten
method is a proved one), the shape read off javap, and the code run against the original on the JVM with inputs
that throw at each access and loops that run zero times (n <= 0 with a null matrix, null and short rows). The
same inputs catch the rule without its entry test."""
from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

import difftest as dt
from support.fullstage import optimize_source
from support.javap import javap
from peggy_jvm.rules import policy
from peggy_jvm.rules.hoist import LoopHoist

SOURCE = r"""
import java.util.Arrays;

public class Hoist {
    // the row a[i] is the first read of every iteration: read once, before the loop, when the loop runs
    static int rowSum(int[][] a, int i, int n) { int s = 0; for (int k = 0; k < n; k++) { s += a[i][k]; } return s; }
    // the length first, then a read of the same array
    static long lenFirst(int[] a, int n) { long s = 0; for (int k = 0; k < n; k++) { s += a.length * 2 + a[k]; } return s; }
    // stores of another element kind through the row do not change the row (a double store, not a row store)
    static void scaleRow(double[][] a, int i, int n) { for (int j = 0; j < n; j++) { a[i][j] = a[i][j] * 2.0 + j; } }
    // a row store into b, which may be a: a[i] may change in the loop, it stays there
    static int aliasRows(int[][] a, int[][] b, int i, int n) {
        int s = 0;
        for (int k = 0; k < n; k++) { s += a[i][0]; b[k % 2] = b[(k + 1) % 2]; }
        return s;
    }

    static String observeScale(double[][] a, int i, int n) {
        String r = "ok";
        try { scaleRow(a, i, n); } catch (RuntimeException e) { r = e.getClass().getName(); }
        return r + Arrays.deepToString(a);
    }
    static String observeAlias(int[][] a, int i, int n) {
        String r;
        try { r = String.valueOf(aliasRows(a, a, i, n)); } catch (RuntimeException e) { r = e.getClass().getName(); }
        return r + Arrays.deepToString(a);
    }
}
"""

MATRICES = [None, [], [[1, 2, 3]], [[1, 2, 3], None, [4]], [[5], [6, 7], [8, 9, 10]]]
DMATRICES = [None, [], [[1.5, 2.0]], [[1.5, 2.0, 3.0], None, [4.0]]]
INTS = [None, [], [3], [3, -4, 5]]
INDEXES = [-1, 0, 1, 2, 3]
COUNTS = [-1, 0, 1, 2, 3]


def _calls(names: tuple[str, ...] = ("rowSum", "lenFirst", "observeScale", "observeAlias")) -> list[dt.Call]:
    """Every method on zero-trip loops and on inputs that throw at each access: a null matrix, a null row, a
    row shorter than n, an index off the matrix."""
    c = "Hoist"
    calls = []
    for a, i, n in itertools.product(MATRICES, INDEXES, COUNTS):
        calls.append(dt.Call(c, "rowSum", "([[III)I", (a, i, n)))
        calls.append(dt.Call(c, "observeAlias", "([[III)Ljava/lang/String;", (a, i, n)))
    for a, i, n in itertools.product(DMATRICES, INDEXES, COUNTS):
        calls.append(dt.Call(c, "observeScale", "([[DII)Ljava/lang/String;", (a, i, n)))
    for a, n in itertools.product(INTS, COUNTS + [4]):
        calls.append(dt.Call(c, "lenFirst", "([II)J", (a, n)))
    return [x for x in calls if x.name in names]


def _optimize(java_home: Path, work: Path, mp: pytest.MonkeyPatch, self_check: bool = True) -> tuple[Path, Path, dict]:
    return optimize_source(java_home, work, mp, "Hoist", SOURCE, self_check)


@pytest.fixture(scope="module")
def optimized(java_home, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        return _optimize(java_home, tmp_path_factory.mktemp("hoist"), mp)


def _listing(java_home: Path, cp: Path, method: str) -> list[tuple[int, str, str]]:
    """(offset, mnemonic, operands) of ``Hoist.method`` in ``cp``, in order."""
    return _listing_of(java_home, cp, "Hoist", method)


def _listing_of(java_home: Path, cp: Path, cls: str, method: str) -> list[tuple[int, str, str]]:
    """(offset, mnemonic, operands) of ``cls.method`` in ``cp``, in order."""
    text = javap(java_home, "-c", "-p", "-cp", str(cp), cls, check=True).stdout
    body = re.search(rf" {method}\(.*?\n(?:\n|\}})", text, re.S)  # the last method ends at the class's brace
    assert body is not None, text
    return [(int(o), op, rest.strip()) for o, op, rest in re.findall(r"(\d+): (\w+)(.*)", body.group(0))]


def _in_loops(listing: list[tuple[int, str, str]], mnemonic: str) -> int:
    """How many ``mnemonic`` instructions lie inside a loop: between a backward branch's target and itself."""
    spans = [(int(rest), off) for off, op, rest in listing
             if (op.startswith("if") or op.startswith("goto")) and rest.isdigit() and int(rest) <= off]
    return sum(1 for off, op, _ in listing if op == mnemonic and any(lo <= off <= hi for lo, hi in spans))


def test_the_hoist_is_among_the_optimizers_and_the_proofs_rules():
    assert "loop-hoist" in {r.name for r in policy.safe_rules()}
    assert "loop-hoist" in {r.name for r in policy.proof_rules(None)}


def test_invariant_first_reads_leave_their_loops(optimized, java_home):
    """The row (aaload) and the length (arraylength) are read in front of the loop in the rewritten code, which
    the self-check proved (status rewritten); the original read them in the loop."""
    orig, out, rows = optimized
    for name, op in (("rowSum", "aaload"), ("scaleRow", "aaload"), ("lenFirst", "arraylength")):
        assert rows[name].status == "rewritten", (name, rows[name].reason)
        before, after = _listing(java_home, orig, name), _listing(java_home, out, name)
        assert _in_loops(before, op) >= 1, before
        assert _in_loops(after, op) == 0, after
        assert [o for _, o, _ in after].count(op) == 1, after  # once, in front of the loop


def test_a_row_a_loop_may_store_stays_in_the_loop(optimized, java_home):
    """``b[k % 2] = ...`` stores rows into an array that may be ``a``: ``a[i]`` is read in every iteration."""
    _orig, out, rows = optimized
    assert rows["aliasRows"].status == "rewritten", rows["aliasRows"].reason  # other rules still apply
    listing = _listing(java_home, out, "aliasRows")
    assert _in_loops(listing, "aaload") == 2, listing  # a[i] and b[(k + 1) % 2]


def test_hoisted_reads_behave_like_the_originals(optimized, java_home):
    """Same results, exception classes and arrays afterwards, on zero-trip loops and on inputs that throw at
    every access."""
    orig, out, rows = optimized
    assert all(r.status != "fallback" for r in rows.values()), {n: r.reason for n, r in rows.items()}
    calls = _calls()
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [], result.report()
    assert result.compared == len(calls)


def test_the_hoist_without_its_entry_test_is_caught(java_home, tmp_path, monkeypatch):
    """The rule without the entry test (the read done before a loop that may run zero times) in the optimizer's
    rules, without the self-check behind it: the same inputs find rowSum throwing where the original did not."""
    real = policy.safe_rules
    monkeypatch.setattr(policy, "safe_rules", lambda rules=None: [
        LoopHoist(guarded=False) if r.name == "loop-hoist" else r for r in real(rules)])
    orig, out, rows = _optimize(java_home, tmp_path, monkeypatch, self_check=False)
    assert rows["rowSum"].status == "rewritten", rows["rowSum"].reason
    calls = _calls(("rowSum", "lenFirst"))
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches, "a read hoisted out of a loop that runs zero times went unnoticed"
    assert any(m.call.args[2] <= 0 for m in result.mismatches if m.call.name == "rowSum"), result.report()


def test_a_read_the_break_test_uses_is_not_hoisted():
    """``for (k = 0; k < a.length; k++)``: the length is the first read of every iteration, but the test needs
    it, so no entry test can come before it; the rule leaves the loop alone (the rowSum shape is hoisted)."""
    from peggy_jvm.epeg import EPeg
    from peggy_jvm.peg.graph import PEG

    def peg(bound_is_length: bool) -> PEG:
        # s = 0; for (k = 0; k < bound; k++) s += a.length, bound = a.length or n
        g = PEG(name="lenBound", param_types=["int[]", "int"])
        s0, a, n = g.add("sigma0"), g.add("param", 0), g.add("param", 1)
        zero, one = g.add("const.i", 0), g.add("const.i", 1)
        heap, k, s = g.new_theta(1), g.new_theta(1), g.new_theta(1)
        length = g.add("arraylength", None, (heap, a))
        after, value = g.add("rho_sigma", None, (length,)), g.add("rho_value", None, (length,))
        test = g.add("ge.i", None, (k, value if bound_is_length else n))
        g.set_theta(heap, s0, after)
        g.set_theta(k, zero, g.add("add.i", None, (k, one)))
        g.set_theta(s, zero, g.add("add.i", None, (s, value)))
        exit_ = g.add("guard", None, (g.add("phi", None, (test, heap, after)), test))
        p = g.add("pass", 1, (exit_,))
        g.root = g.add("return", None, (g.add("eval", 1, (heap, p)), g.add("eval", 1, (s, p))))
        g.seal()
        return g

    for bound_is_length, hoisted in ((True, False), (False, True)):
        eg = EPeg()
        eg.add_peg(peg(bound_is_length))
        matches, _ = LoopHoist().search(eg, 10, 0.0)
        assert bool(matches) is hoisted, bound_is_length


def test_the_self_check_refuses_the_unguarded_hoist(java_home, tmp_path, monkeypatch):
    """The unguarded rule in the optimizer's rules only: the self-check, proving with the real (guarded) rule,
    does not let rowSum's wrong code out (the test above shows that code is emitted without the self-check)."""
    real = policy.optimizer_rules
    monkeypatch.setattr(policy, "optimizer_rules", lambda rules=None: [
        LoopHoist(guarded=False) if r.name == "loop-hoist" else r for r in real(rules)])
    assert any(r.name == "loop-hoist" and r.guarded for r in policy.proof_rules(None))
    _orig, _out, rows = _optimize(java_home, tmp_path, monkeypatch)
    assert rows["rowSum"].status == "unchanged", rows["rowSum"].reason
    assert rows["rowSum"].reason.startswith("self-check: "), rows["rowSum"].reason


# Reads that are not the first of their iteration (LoopHoist(after_reads=N), off in the default rules: on the
# kernels its rewrites are no cheaper than what the rules find without it, docs/axioms.md). A read may be done in
# front of the loop after earlier reads of the SAME array only (a length after anything of it, an element after
# its length): whenever it throws, the first earlier read throws the same exception.
AFTER_SOURCE = r"""
public class After {
    // BenchKernels.invariantSum's shape: the length after a[k]
    static long lenAfter(int[] a, int n) { long s = 0; for (int k = 0; k < n; k++) { s += a[k] * (a.length * 2) + k; } return s; }
    // a row after the matrix's length
    static int rowAfterLen(int[][] a, int i, int n) { int s = 0; for (int k = 0; k < n; k++) { s += a.length + a[i][k]; } return s; }
    // the length of a after b[k]: b may throw another exception first, the length stays in the loop
    static long lenAfterOther(int[] a, int[] b, int n) { long s = 0; for (int k = 0; k < n; k++) { s += b[k] + a.length; } return s; }
}
"""


def _after_calls() -> list[dt.Call]:
    calls = []
    for a, n in itertools.product(INTS, COUNTS + [4]):
        calls.append(dt.Call("After", "lenAfter", "([II)J", (a, n)))
        for b in INTS:
            calls.append(dt.Call("After", "lenAfterOther", "([I[II)J", (a, b, n)))
    for a, i, n in itertools.product(MATRICES, INDEXES, COUNTS):
        calls.append(dt.Call("After", "rowAfterLen", "([[III)I", (a, i, n)))
    return calls


def _with_after_reads(monkeypatch, unsound: bool = False) -> None:
    """The optimizer's and the self-check's rules with the hoist past earlier reads (``unsound``: past any
    earlier reads, the same-array condition dropped)."""
    import peggy_jvm.rules.hoist as hoist
    real = policy.safe_rules
    monkeypatch.setattr(policy, "safe_rules", lambda rules=None: [
        LoopHoist(after_reads=6) if r.name == "loop-hoist" else r for r in real(rules)])
    if unsound:
        monkeypatch.setattr(hoist, "_throws_as_earlier", lambda node, earlier, find: True)


def test_reads_after_reads_of_the_same_array_leave_their_loops(java_home, tmp_path, monkeypatch):
    """With the rule on (and the self-check proving with it): the length after ``a[k]`` and the row after
    ``a.length`` are read once, in front of the loop; the length after ``b[k]`` stays; all behave as the
    originals on zero-trip loops and inputs that throw at every access."""
    _with_after_reads(monkeypatch)
    orig, out, rows = optimize_source(java_home, tmp_path, monkeypatch, "After", AFTER_SOURCE)
    for name, op, hoisted in (("lenAfter", "arraylength", True), ("rowAfterLen", "aaload", True),
                              ("lenAfterOther", "arraylength", False)):
        listing = _listing_of(java_home, out, "After", name)
        assert _in_loops(listing, op) == (0 if hoisted else 1), (name, rows[name].reason, listing)
    calls = _after_calls()
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [], result.report()
    assert result.compared == len(calls)


def test_the_hoist_past_another_arrays_read_is_caught(java_home, tmp_path, monkeypatch):
    """Without the same-array condition (and without the self-check behind it) the length of ``a`` leaves the
    loop ahead of ``b[k]``: the inputs find a call where the original threw ArrayIndexOutOfBounds or
    NullPointerException on ``b`` and the rewrite throws NullPointerException on ``a``."""
    _with_after_reads(monkeypatch, unsound=True)
    orig, out, rows = optimize_source(java_home, tmp_path, monkeypatch, "After", AFTER_SOURCE, self_check=False)
    assert _in_loops(_listing_of(java_home, out, "After", "lenAfterOther"), "arraylength") == 0, \
        rows["lenAfterOther"].reason
    calls = [c for c in _after_calls() if c.name == "lenAfterOther"]
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches, "a length hoisted past another array's read went unnoticed"
