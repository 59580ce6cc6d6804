"""Two kinds of counterexample inputs (validate/counterexample.py): arrays of k equal elements passed with an int
parameter that is k (a length beside its array: ``sum / n`` against a sum of ``a[i] / n`` differs for ten ones,
EqBench's ``REVE/average``), and the first powers of two where ``x + 1 == x`` (2^24 for float, 2^53 for double:
where a float counter stops, EqBench's ``REVE/loop``), tried before NaN and the infinities. Each mutant is shown
on the JVM with that input; the equivalent twin is never called different.
"""
from __future__ import annotations

import math

import pytest
from conftest import compile_versions, validate_rows

from peggy_jvm.validate import Verdict
from peggy_jvm.validate.counterexample import generate_inputs

ORIG = r"""
public class R {
    static double mean(int n, int[] a) {
        if (n <= 0) return 0;
        int s = 0;
        for (int i = 0; i < n; i++) s += a[i];
        return (double) s / n;
    }
    static double meanTwin(int n, int[] a) {
        if (n <= 0) return 0;
        int s = 0;
        for (int i = 0; i < n; i++) s += a[i];
        return (double) s / n;
    }
    static float unitF(float x) { return (x + 1) - x; }
    static double unitD(double x) { return (x + 1) - x; }
}
"""
OPT = r"""
public class R {
    static double mean(int n, int[] a) {
        if (n <= 0) return 0;
        double s = 0;
        for (int i = 0; i < n; i++) s += (double) a[i] / n;
        return s;
    }
    static double meanTwin(int n, int[] a) {
        if (n <= 0) return 0;
        int s = 0;
        for (int i = n - 1; i >= 0; i--) s += a[i];
        return (double) s / n;
    }
    static float unitF(float x) { return 1f; }
    static double unitD(double x) { return 1.0; }
}
"""


@pytest.fixture(scope="module")
def rows(java_home, tmp_path_factory):
    trees = compile_versions(java_home, tmp_path_factory.mktemp("kinds"), "R.java", {"orig": ORIG, "opt": OPT})
    return validate_rows(trees, "R", method_timeout=4.0)


def test_a_length_beside_an_array_of_equal_elements_shows_a_rounding_difference(rows):
    row = rows["mean"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    n, array = row.counterexample["args"][-2:]
    assert n in ("10", "7") and array == "{" + ", ".join(["1"] * int(n)) + "}", row.counterexample
    orig, opt = row.counterexample["orig"], row.counterexample["opt"]
    assert orig.startswith("returns 1.0,") and not opt.startswith("returns 1.0,"), row.counterexample


def test_the_equivalent_twin_is_not_called_different(rows):
    assert rows["meanTwin"].verdict is not Verdict.NOT_EQUIVALENT, rows["meanTwin"].reason


@pytest.mark.parametrize("name, shown", [("unitF", "16777216.0f"), ("unitD", "9007199254740992.0")])
def test_the_first_power_of_two_where_x_plus_one_is_x_is_tried_before_the_infinities(rows, name, shown):
    row = rows[name]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["args"] == [shown], row.counterexample
    assert row.counterexample["orig"].startswith("returns 0.0"), row.counterexample


def test_generation_order():
    """2^24 before NaN and infinity (an input the interpreter cannot finish goes to the JVM in this order);
    the runs of ones come with the edge values, before the hints and the random inputs."""
    floats = [a[0] for a in generate_inputs("(F)F")]
    assert floats.index(16777216.0) < next(i for i, v in enumerate(floats) if math.isnan(v))
    assert floats.index(16777216.0) < floats.index(math.inf)
    inputs = generate_inputs("(I[D)D")
    runs = [a for a in inputs if isinstance(a[1], list) and len(a[1]) in (7, 10)]
    assert runs[:2] == [[10, [1.0] * 10], [7, [1.0] * 7]]
    assert [[1] * 10] in generate_inputs("([I)I")  # no int parameter: the array alone
