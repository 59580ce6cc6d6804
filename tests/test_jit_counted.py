"""Loops HotSpot's JIT counts (issue 15's JIT goal, session 17 `kern17`): ``codecost.uncounted_loops`` and the
full stage's refusal of a rewrite that leaves an innermost loop without a test of an induction variable against
an invariant (``pipeline._check_emitted``).

``BenchKernels.lcs``'s rewrite made ``k = j - 1`` the inner loop's counter and tested ``k + 1 <= n``: emitted
cost -0.4%, ``-Xint`` 0.99, but 1.08-1.16x slower under C2, which compiles such a loop without range-check
elimination or unrolling; the same code testing ``k < n`` ran 0.89x (docs/cost-model.md, "Loops the JIT
counts"). The shapes below are javac's code of Java variants of that kernel (the rewrite's shape written in Java
gives its bytecode), so what is pinned is the test's shape, not one lowering's bytes.
"""
from __future__ import annotations


import pytest

from conftest import javac_command
from support.javac_cache import run_javac
from peggy_jvm.classfile.reader import read_class, read_code
from peggy_jvm.codecost import EmittedCost, Goal, price_code
from peggy_jvm.pipeline import MethodUnchanged, Stage, _check_emitted, optimize_input

LCS = r"""
public class Lcs {
    public static int lcs(String s, String t) {
        int m = s.length(); int n = t.length();
        int[] prev = new int[n + 1]; int[] cur = new int[n + 1];
        for (int i = 1; i <= m; i++) {
            char c = (char) (s.charAt(i - 1) & 3);
            for (int j = 1; j <= n; j++) {
                if (c == (char) (t.charAt(j - 1) & 3)) { cur[j] = prev[j - 1] + 1; }
                else { cur[j] = Math.max(prev[j], cur[j - 1]); }
            }
            int[] swap = prev; prev = cur; cur = swap;
        }
        return prev[n];
    }
}
"""

VARIANTS = r"""
public class Shapes {
    // the session-16 rewrite of BenchKernels.lcs: counter k = j - 1, j recomputed, the test on k + 1 (JIT 1.08-1.16x)
    static int derivedTest(String s, String t) {
        int m = s.length(); int n = t.length();
        int[] prev = new int[n + 1]; int[] cur = new int[n + 1];
        int i = 0;
        while (i + 1 <= m) {
            char c = (char) (s.charAt(i) & 3);
            int k = 0; int j = k + 1;
            if (j <= n) {
                do {
                    if (c != (char) (t.charAt(k) & 3)) { cur[j] = Math.max(prev[j], cur[k]); k++; }
                    else { cur[j] = prev[k] + 1; k++; }
                    j = k + 1;
                } while (j <= n);
            }
            int[] swap = prev; prev = cur; cur = swap; i++;
        }
        return prev[n];
    }
    // the same with the test on the counter itself (JIT 0.89x)
    static int counterTest(String s, String t) {
        int m = s.length(); int n = t.length();
        int[] prev = new int[n + 1]; int[] cur = new int[n + 1];
        int i = 0;
        while (i + 1 <= m) {
            char c = (char) (s.charAt(i) & 3);
            int k = 0;
            if (k < n) {
                do {
                    int j = k + 1;
                    if (c != (char) (t.charAt(k) & 3)) { cur[j] = Math.max(prev[j], cur[k]); k++; }
                    else { cur[j] = prev[k] + 1; k++; }
                } while (k < n);
            }
            int[] swap = prev; prev = cur; cur = swap; i++;
        }
        return prev[n];
    }
    // the step stored through dup: still the counter, tested after its step
    static int dupStep(int[] a) {
        int s = 0; int i = 0;
        do { s += a[i]; } while ((i = i + 1) < a.length);
        return s;
    }
    // the step through a local of its own, then copied back (CharSequenceUtils.indexOf's rewrite): still the counter
    static int copyStep(int[] a, int n) {
        int s = 0; int i = 0;
        while (i < n) { int t = i + 1; s += a[i] ^ t; i = t; }
        return s;
    }
    // counting down against 0, the bound a field read in a loop that calls nothing
    int limit;
    int down(int[] a) {
        int s = 0;
        for (int i = a.length - 1; i >= 0; i--) { s += a[i]; }
        for (int i = 0; i < this.limit; i++) { s += a[i]; }
        return s;
    }
    // the bound a field read in a loop that calls: the JIT reads it again every iteration
    int calls(int[] a) {
        int s = 0;
        for (int i = 0; i < this.limit; i++) { s += Integer.bitCount(a[i]); }
        return s;
    }
    // a stride that is not a constant: no counted loop either way
    static int stride(int[] a, int step) {
        int s = 0;
        for (int i = 0; i < a.length; i += step) { s += a[i]; }
        return s;
    }
    // the step chosen between constants by an invariant test (classic 12/12b): C2 unswitches the loop on the
    // test and counts both copies; the same step kept in a local chosen before the loop (the strength-reduced
    // rewrite's shape) is `stride`'s, not counted: JIT 1.5-2.7x slower (docs/cost-model.md)
    static int chosenStep(int n, int d) {
        int s = 0;
        for (int i = 0; i < n; ) { s ^= i * 50; i += d == 150 ? 4 : 1; }
        return s;
    }
    static int chosenDown(int n, int d) {
        int s = 0;
        for (int i = n; i > 0; ) { s ^= i; i -= d < 0 ? 2 : 3; }
        return s;
    }
    // ... but not by a test the loop changes: no loop to unswitch
    static int chosenByTheLoop(int n) {
        int s = 0;
        for (int i = 0; i < n; ) { s += i; i += (s & 1) == 0 ? 5 : 1; }
        return s;
    }
    // an iterator's loop tests a call's result: not counted (whatever a rewrite does, it stays so)
    static int iterate(java.util.List<Integer> xs) {
        int s = 0;
        for (int x : xs) { s += x; }
        return s;
    }
}
"""


@pytest.fixture(scope="module")
def prices(java_home, tmp_path_factory) -> dict[str, EmittedCost]:
    work = tmp_path_factory.mktemp("jitcounted")
    (work / "Shapes.java").write_text(VARIANTS)
    (work / "Lcs.java").write_text(LCS)
    run_javac([*javac_command(java_home), "-d", str(work), str(work / "Shapes.java"), str(work / "Lcs.java")],
              check=True)
    out = {}
    for name in ("Shapes", "Lcs"):
        cf = read_class((work / f"{name}.class").read_bytes())
        for m in cf.methods:
            attr = m.code_attribute()
            if attr is not None:
                out[m.name] = price_code(read_code(attr.data, cf.pool), cf.pool)
    return out


def test_a_test_of_a_derived_counter_is_uncounted_and_of_the_counter_is_counted(prices):
    assert prices["lcs"].uncounted == 0  # javac's: j <= n, j the counter
    assert prices["derivedTest"].uncounted == 1  # k + 1 <= n: only the inner loop (the outer one is not innermost)
    assert prices["counterTest"].uncounted == 0
    assert prices["dupStep"].uncounted == 0
    assert prices["copyStep"].uncounted == 0
    assert prices["down"].uncounted == 0
    assert prices["calls"].uncounted == 1
    assert prices["stride"].uncounted == 1
    assert prices["iterate"].uncounted == 1


def test_a_step_chosen_between_constants_by_an_invariant_test_is_counted(prices):
    """javac's ``i += d == 150 ? 4 : 1`` (``iload; <test>; const; goto; const; iadd; istore``): a constant step
    once C2 has unswitched the loop on ``d == 150``, so the original of classic 12/12b is counted and the
    rewrite that keeps the step in a local (``stride``) is refused."""
    assert prices["chosenStep"].uncounted == 0
    assert prices["chosenDown"].uncounted == 0
    assert prices["chosenByTheLoop"].uncounted == 1


def test_a_rewrite_that_leaves_an_innermost_loop_uncounted_is_refused_whatever_it_gains(prices):
    before = prices["lcs"]
    cheaper = EmittedCost(before.cost // 2, before.size, prices["derivedTest"].uncounted)
    with pytest.raises(MethodUnchanged, match="loops the JIT cannot count.*0 -> 1"):
        _check_emitted(Goal.SPEED, before, cheaper)
    _check_emitted(Goal.SPEED, before, EmittedCost(before.cost // 2, before.size, prices["counterTest"].uncounted))
    # --goal size trades for bytes by its own rule
    _check_emitted(Goal.SIZE, before, EmittedCost(before.cost, before.size - 1, 1))


def test_lcs_keeps_its_original_code(java_home, tmp_path):
    (tmp_path / "Lcs.java").write_text(LCS)
    run_javac([*javac_command(java_home), "-d", str(tmp_path / "orig"), str(tmp_path / "Lcs.java")], check=True)
    _, report = optimize_input(tmp_path / "orig" / "Lcs.class", tmp_path / "out" / "Lcs.class", Stage.FULL, jobs=1)
    (lcs,) = [m for m in report.methods if m.name == "lcs"]
    assert lcs.status == "unchanged", lcs.reason
    assert "loops the JIT cannot count" in (lcs.reason or ""), lcs.reason
    codes = []
    for d in ("orig", "out"):
        cf = read_class((tmp_path / d / "Lcs.class").read_bytes())
        (m,) = [m for m in cf.methods if m.name == "lcs"]
        codes.append(read_code(m.code_attribute().data, cf.pool).code)
    assert codes[0] == codes[1]
