"""The accumulator lemma (rules/accumulator.py): a helper ``g(n, s)`` that carries a running sum, against a plain
recursion ``g(n)`` (EqBench's ``REVE/triangular``), proved by induction on the recursion per pair and used by
the caller; either side may hold the accumulator, int or long. The mutants (a wrong start, a step that adds one
more than the plain recursion, a product accumulator that is equivalent but outside the lemma) are not proved;
the different ones are shown on the JVM.
"""
from __future__ import annotations

import pytest
from conftest import compile_old_new, validate_rows

from peggy_jvm.validate import Verdict

OLD = r"""
public class Old {
    private int g(int n) { int r = 0; if (n <= 0) { r = 0; } else { r = g(n - 1); r = n + r; } return r; }
    int triangle(int n) { return g(n); }
    private int h(int n) { return n <= 0 ? 0 : n + h(n - 1); }
    int triangleStart(int n) { return h(n); }
    private int k(int n) { return n <= 0 ? 0 : n + k(n - 1); }
    int triangleStep(int n) { return k(n); }
    static long squares(long n, long s) { return n <= 0 ? s : squares(n - 1, s + n * n); }
    static long sumSquares(long n) { return squares(n, 0L); }
    static int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
    static int factorial(int n) { return fact(n); }
}
"""
NEW = r"""
public class New {
    private int g(int n, int s) { int r = 0; if (n <= 0) { r = s; } else { r = g(n - 1, n + s); } return r; }
    int triangle(int n) { return g(n, 0); }
    private int h(int n, int s) { return n <= 0 ? s : h(n - 1, s + n); }
    int triangleStart(int n) { return h(n, 1); }
    private int k(int n, int s) { return n <= 0 ? s : k(n - 1, s + n + 1); }
    int triangleStep(int n) { return k(n, 0); }
    static long squares(long n) { return n <= 0 ? 0L : n * n + squares(n - 1); }
    static long sumSquares(long n) { return squares(n); }
    static int fact(int n, int p) { return n <= 1 ? p : fact(n - 1, p * n); }
    static int factorial(int n) { return fact(n, 1); }
}
"""


@pytest.fixture(scope="module")
def rows(java_home, tmp_path_factory):
    trees = compile_old_new(java_home, tmp_path_factory.mktemp("accumulator"), OLD, NEW)
    return validate_rows(trees, method_timeout=6.0, class_map={"Old": "New"}, explain=True)


@pytest.mark.parametrize("name", ["triangle", "sumSquares"])
def test_an_accumulator_is_read_as_the_plain_recursion_plus_its_start(rows, name):
    row = rows[name]
    assert row.verdict is Verdict.EQUIVALENT, row.reason
    assert "accumulator-lemma" in row.axioms and "partial equivalence" in row.reason, row.reason


@pytest.mark.parametrize("name", ["triangleStart", "triangleStep"])
def test_mutants_are_shown_different(rows, name):
    row = rows[name]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"], row.counterexample


def test_a_product_accumulator_is_outside_the_lemma(rows):
    """Equivalent, but ``p * w`` does not reach every outcome (``p = 0``), so the soundness argument of the
    lemma does not carry over: not proved by it."""
    row = rows["factorial"]
    assert row.verdict is Verdict.UNKNOWN, row.reason
    assert "accumulator-lemma" not in (row.axioms or []), row.reason
