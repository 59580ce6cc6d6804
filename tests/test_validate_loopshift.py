"""Validation's loop-shift rules (rules/loopshift.py): a loop whose counter starts one step before the other
side's, and whose first iteration changes nothing else (``for (i = 0; i <= n; i++) x += i`` against ``j = 1``:
EqBench's ``REVE/barthe2``), is peeled and the phi in front of its copy absorbed; the mutants beside each, whose
first iteration or bound differs, are never proved and are shown different on the JVM.
"""
from __future__ import annotations

import pytest
from conftest import compile_old_new, validate_rows

from peggy_jvm.epeg import EPeg
from peggy_jvm.rules.loopshift import NextConstBound, implies
from peggy_jvm.validate import Verdict

OLD = r"""
public class Old {
    static int sum(int n) { int x = 0; for (int i = 0; i <= n; i++) { x = x + i; } return x; }
    static int twoLoops(int n) {
        int x = 1;
        for (int i = 1; i <= n; i++) { x = x * 3; }
        for (int i = 0; i <= n; i++) { x = x + i * i; }
        return x;
    }
    static int sumPlusOne(int n) { int x = 0; for (int i = 0; i <= n; i++) { x = x + i + 1; } return x; }
    static int sumBound(int n) { int x = 0; for (int i = 0; i < n; i++) { x = x + i; } return x; }
    static int doubling(int z) { int x = 1; while (x <= 9) { x = 2 * (x + 2); } return 2 * x + z; }
    static int doublingBad(int z) { int x = z; while (x <= 10) { x = 2 * (x + 2); } return x; }
}
"""
NEW = r"""
public class New {
    static int sum(int n) { int x = 0; for (int j = 1; j <= n; j++) { x = x + j; } return x; }
    static int twoLoops(int n) {
        int x = 1;
        for (int i = 1; i <= n; i++) { x = x * 3; }
        for (int i = 1; i <= n; i++) { x = x + i * i; }
        return x;
    }
    static int sumPlusOne(int n) { int x = 0; for (int j = 1; j <= n; j++) { x = x + j + 1; } return x; }
    static int sumBound(int n) { int x = 0; for (int j = 1; j <= n; j++) { x = x + j; } return x; }
    static int doubling(int z) { int x = 1; while (x < 10) { int y = 2 + x; x = y + y; } return x * 2 + z; }
    static int doublingBad(int z) { int x = z; while (x < 10) { int y = 2 + x; x = y + y; } return x; }
}
"""


@pytest.fixture(scope="module")
def rows(java_home, tmp_path_factory):
    base = tmp_path_factory.mktemp("loop-shift")
    trees = compile_old_new(java_home, base, OLD, NEW)
    return validate_rows(trees, method_timeout=6.0, class_map={"Old": "New"})


@pytest.mark.parametrize("name", ["sum", "twoLoops", "doubling"])
def test_a_counter_started_one_step_later_is_proved(rows, name):
    assert rows[name].verdict is Verdict.EQUIVALENT, rows[name].reason


@pytest.mark.parametrize("name", ["sumPlusOne", "sumBound", "doublingBad"])
def test_mutants_are_shown_different(rows, name):
    """A first iteration that adds 1, not 0; ``i < n`` from 0 against ``j <= n`` from 1 (0..n-1 against 1..n);
    ``x <= 10`` against ``x < 10`` (``z = 10``)."""
    row = rows[name]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"], row.counterexample


def test_implies_reads_comparisons_with_constants_as_intervals():
    eg = EPeg()
    n, m = eg.add("param", 0), eg.add("param", 1)
    k = {v: eg.add("const.i", v) for v in (0, 1, 5)}
    below0 = eg.add("gt.i", None, (k[0], n))  # 0 > n: n <= -1
    below1 = eg.add("lt.i", None, (n, k[1]))  # n < 1: n <= 0
    at_most0 = eg.add("le.i", None, (n, k[0]))
    not_ge5 = eg.add("not", None, (eg.add("ge.i", None, (n, k[5])),))  # n <= 4
    assert implies(eg, below0, below1) and implies(eg, below1, at_most0) and implies(eg, below1, not_ge5)
    assert not implies(eg, below1, below0)  # n = 0
    assert not implies(eg, not_ge5, below1)  # n = 3
    assert not implies(eg, below0, eg.add("lt.i", None, (m, k[1])))  # another term


def test_a_strict_bound_is_the_non_strict_one_with_the_next_constant():
    """``x > 9`` is ``x >= 10``, ``x <= 9`` is ``x < 10``; at ``MAX_VALUE`` nothing (``x > MAX`` is false,
    ``x >= MIN`` is true)."""
    eg = EPeg()
    x = eg.add("param", 0)
    gt9 = eg.add("gt.i", None, (x, eg.add("const.i", 9)))
    le9 = eg.add("le.i", None, (x, eg.add("const.i", 9)))
    gt_max = eg.add("gt.i", None, (x, eg.add("const.i", 2**31 - 1)))
    rule = NextConstBound()
    for match in rule.search(eg, 100, 0.0)[0]:
        rule.apply(eg, match)
    eg.rebuild()
    assert eg.equiv(gt9, eg.add("ge.i", None, (x, eg.add("const.i", 10))))
    assert eg.equiv(le9, eg.add("lt.i", None, (x, eg.add("const.i", 10))))
    assert not eg.equiv(gt_max, eg.add("ge.i", None, (x, eg.add("const.i", -2**31))))
    assert all(m[3] != -2**31 for m in rule.search(eg, 100, 0.0)[0])
