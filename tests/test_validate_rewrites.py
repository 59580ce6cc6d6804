"""Validation of the rewrites real optimizers make (ProGuard's intra-method optimizations, javac versions):
string-builder construction merged into the constructor, returns duplicated into branches, casts of null
removed, and unchanged loops under a rewritten constant pool. Each equivalence is proved; each near miss that
is NOT an equivalence (a builder that escapes, whose capacity differs) is never called equivalent, and where
the difference can be printed the JVM confirms a counterexample.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import compile_versions, validate_rows

from peggy_jvm.rules import default_rules
from peggy_jvm.validate import Verdict

ORIG = r"""
public class R {
    static String label(int x) { return new StringBuilder().append("n=").append(x).toString(); }
    static String buffer(String s) { return new StringBuffer().append("[").append(s).append("]").toString(); }
    static int capacity() { return new StringBuilder().append("abc").capacity(); }
    static StringBuilder escapes() { StringBuilder b = new StringBuilder(); b.append("abc"); return b; }
    static int pick(boolean c, int x) { int y; if (c) { y = x * 2; } else { y = x - 1; } return y; }
    static void fail(boolean c, int x) { RuntimeException e; if (c) { e = new IllegalStateException("" + x * 4); }
                                         else { e = new IllegalArgumentException(); } throw e; }
    static int sel(boolean c, int x) { int y; if (c) { y = x + 1; } else { y = x - 1; } return y; }
    static String cast() { return id((String) null); }
    static String id(String s) { return s; }
    static int nested(int[][] a) {
        int s = 0;
        for (int i = 0; i < a.length; i++) { for (int j = 0; j < a[i].length; j++) { s += a[i][j]; } }
        return s;
    }
    static int length() { return "h\u00e9llo \ud83d\ude00".length(); }
    static int flipped(int[] a) { int n = 0; for (int i = 0; i < a.length; i++) { if (a[i] > 0) { n++; } } return n; }
    static String message(String s) { return new StringBuilder().append("bad: ").append(s).toString(); }
    Object[] items;
    int[] counts;
    int dedup() {
        int n = 0;
        for (int i = 0; i < this.items.length; i++) {
            Object x = this.items[i];
            for (int j = i + 1; j < this.items.length; j++) { if (this.counts[j] > 0) { if (this.items[j] == x) { n++; } } }
        }
        return n;
    }
    int dedupWrong() {
        int n = 0;
        for (int i = 0; i < this.items.length; i++) {
            Object x = this.items[i];
            for (int j = i + 1; j < this.items.length; j++) { if (this.counts[j] > 0) { if (this.items[j] == x) { n++; } } }
        }
        return n;
    }
}
"""

# what ProGuard's intra-method optimizations make of ORIG (written by hand, as it writes them)
OPT = r"""
public class R {
    static final String UNUSED = "moves the constant pool";
    static String label(int x) { return new StringBuilder("n=").append(x).toString(); }
    static String buffer(String s) { return new StringBuffer("[").append(s).append("]").toString(); }
    static int capacity() { return new StringBuilder("abc").capacity(); }
    static StringBuilder escapes() { return new StringBuilder("abc"); }
    static int pick(boolean c, int x) { if (c) { return x << 1; } return x - 1; }
    static void fail(boolean c, int x) { if (c) { throw new IllegalStateException("" + (x << 2)); }
                                         throw new IllegalArgumentException(); }
    static int sel(boolean c, int x) { if (c) { return x + 1; } return x - 1; }
    static String cast() { return id(null); }
    static String id(String s) { return s; }
    static int nested(int[][] a) {
        int s = 0;
        for (int i = 0; i < a.length; i++) { for (int j = 0; j < a[i].length; j++) { s += a[i][j]; } }
        return s;
    }
    static int length() { return 8; }
    static int flipped(int[] a) { int n = 0; for (int i = 0; i < a.length; i++) { if (0 >= a[i]) { continue; } n++; }
                                  return n; }
    static String message(String s) { return "bad: ".concat(String.valueOf(s)); }
    Object[] items;
    int[] counts;
    int dedup() {  // the count test flipped inside the inner loop (continue)
        int n = 0;
        for (int i = 0; i < this.items.length; i++) {
            Object x = this.items[i];
            for (int j = i + 1; j < this.items.length; j++) { if (0 >= this.counts[j]) { continue; } if (this.items[j] == x) { n++; } }
        }
        return n;
    }
    int dedupWrong() {  // flipped the wrong way: counts the entries equal to x whose count is not positive
        int n = 0;
        for (int i = 0; i < this.items.length; i++) {
            Object x = this.items[i];
            for (int j = i + 1; j < this.items.length; j++) { if (0 < this.counts[j]) { continue; } if (this.items[j] == x) { n++; } }
        }
        return n;
    }
}
"""


@pytest.fixture(scope="module")
def trees(java_home: Path, tmp_path_factory) -> dict[str, Path]:
    return compile_versions(java_home, tmp_path_factory.mktemp("rewrites"), "R.java", {"orig": ORIG, "opt": OPT})


@pytest.fixture(scope="module")
def report(trees):
    return validate_rows(trees, explain=True)


def _without(trees, rule: str) -> dict:
    rules = default_rules()
    rules.disable(rule)
    # builder-tostring-fresh proves the builder pairs on its own (both chains end in the same new String)
    for other in ALSO_PROVED_BY.get(rule, ()):
        rules.disable(other)
    return validate_rows(trees, rules=rules.active(), counterexamples=False)


# loop-optimistic's value numbering and theta-bisimulation are both loop induction: either proves "flipped". The
# flipped tests also swap their operands (`0 >= a[i]`): a flipped `!=`/`==`, `>=`/`<` or `<=`/`>` on the same
# operands is one form before any axiom (validate/branchshape.py). Without phi-throw, "fail" is proved by
# validate's last attempt, the case split on the terms read back after saturation (validate/aftercases.py: both
# sides' `x * 4` read back as one term, then the two throws equal in each case of `c`); it runs only with
# theta-bisimulation on, which "fail" (no loop) needs for nothing else
ALSO_PROVED_BY = {"builder-init-append": ("builder-tostring-fresh",), "loop-optimistic": ("theta-bisimulation",),
                  "phi-throw": ("theta-bisimulation",)}


@pytest.mark.parametrize("name,axiom", [
    ("label", "builder-init-append"),
    ("buffer", "builder-init-append"),
    ("pick", "phi-return"),
    ("fail", "phi-throw"),
    ("cast", "checkcast-null"),
    ("length", "string-length-const"),
    ("flipped", "loop-optimistic"),  # value numbering: the two loops' thetas assumed equal, checked together
    # a branch flipped in an inner loop whose heap class also holds rho_sigma(getfield(itself, this)): loop
    # induction must not pair through that node (a cycle through no theta) when a theta or phi would do
    ("dedup", "theta-bisimulation"),
])
def test_rewrite_is_proved_by_its_axiom(report, trees, name, axiom):
    row = report[name]
    assert row.verdict is Verdict.EQUIVALENT, row.reason
    assert axiom in row.axioms, row.axioms  # --explain names it
    assert _without(trees, axiom)[name].verdict is Verdict.UNKNOWN  # and it is what proves it


def test_returns_duplicated_into_branches_are_equal_by_cases(report):
    # goto-to-return: the same PEG once the branch condition is split on, before any axiom
    row = report["sel"]
    assert row.verdict is Verdict.EQUIVALENT and row.axioms == ["case-split"], (row.reason, row.axioms)


def test_identical_loops_under_another_constant_pool_are_the_same_peg(report):
    # the code bytes differ only in constant-pool indexes; the two loop nests are one graph up to numbering
    row = report["nested"]
    assert row.verdict is Verdict.EQUIVALENT and row.reason == "same PEG" and row.axioms == ["bisimulation"], row


def test_a_builder_whose_capacity_shows_is_not_equivalent(report):
    row = report["capacity"]  # 16 against 19: the merge is only right for a builder nobody asks that
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"]


def test_a_branch_flipped_the_wrong_way_in_an_inner_loop_is_not_proved(report):
    assert report["dedupWrong"].verdict is not Verdict.EQUIVALENT, report["dedupWrong"].reason


def test_a_builder_that_escapes_is_not_proved(report):
    assert report["escapes"].verdict is not Verdict.EQUIVALENT, report["escapes"].reason


def test_a_library_rewrite_without_axioms_is_unknown_and_says_which_calls_differ(report):
    # equal contents, but String.concat returns its receiver for an empty argument where the builder makes a new
    # String: not claimed equivalent, and no input tells them apart by value
    row = report["message"]
    assert row.verdict is Verdict.UNKNOWN, row.reason
    assert "calls only in OPT: java/lang/String.concat, java/lang/String.valueOf" in row.reason
    assert "calls only in ORIG: java/lang/StringBuilder.append, java/lang/StringBuilder.toString" in row.reason
