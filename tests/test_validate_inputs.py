"""The counterexample search's inputs (issue 17 item 3): values from the pair's own code (its constants and
their neighbours, the values that flip its linear conditions), floating point edges (-0.0, NaN, subnormals),
``Math`` functions the interpreter does not model (those inputs are evaluated on the JVM), and two-dimensional
arrays (square, ragged, a null row, one row object twice). Each mutant is shown not-equivalent with the input the
JVM confirmed; each equivalent twin is never called not-equivalent.
"""
from __future__ import annotations

import pytest
from conftest import compile_versions, validate_rows

from peggy_jvm.validate import Verdict
from peggy_jvm.validate.counterexample import encode_arg, generate_inputs

COMMON = r"""
    static double[][] identity(int n) { double[][] a = new double[n & 7][n & 7]; FILL return a; }
    static void fill(double[][] m, double v) { for (int i = 0; i < m.length; i++) { INNER } }
    static int sumRows(int[][] m) { int s = 0; for (int i = 0; i < m.length; i++) { m[i][0] += 1; s += m[i][0]; } return s; }
    static int rowAlias(int[][] m) { m[0][0] = 5; m[1][0] = 7; return RESULT; }
"""
ORIG = r"""
public class K {
    static int atConst(int x) { return x == 37 ? 1 : 0; }
    static int snippet(int a, int b) { int r = 0; if (a * 3 + 2 == 5) { if (b - 4 > 5) { r = 1000; } } return r; }
    static int clamp(int x) { return x > 1000 ? 1000 : x; }
    static int clampTwin(int x) { return x > 1000 ? 1000 : x; }
    static double plusZero(double x) { return x + 0.0; }
    static int nonNegative(double x) { return x >= 0 ? 1 : 0; }
    static double absTwin(double x) { return x <= 0 ? 0.0 - x : x; }
    static int big(double x) { return Math.exp(x) > 100 ? 1 : 0; }
    static int bigTwin(double x) { return Math.exp(x) > 100 ? 1 : 0; }
    static double[][] identityTwin(int n) { double[][] a = new double[n & 7][n & 7]; for (int i = 0; i < a.length; i++) { a[i][i] = 1; } return a; }
    static void fillTwin(double[][] m, double v) { for (int i = 0; i < m.length; i++) { for (int j = 0; j < m[i].length; j++) { m[i][j] = v; } } }
""" + COMMON.replace("FILL", "for (int i = 0; i < a.length; i++) { a[i][i] = 1; }").replace(
    "INNER", "for (int j = 0; j < m[i].length; j++) { m[i][j] = v; }").replace("RESULT", "m[0][0]") + "}"
OPT = r"""
public class K {
    static int atConst(int x) { return x == 38 ? 1 : 0; }
    static int snippet(int a, int b) { int r = 0; if (a * 3 + 2 == 5) { if (b - 4 > 6) { r = 1000; } } return r; }
    static int clamp(int x) { return x > 1001 ? 1000 : x; }
    static int clampTwin(int x) { return x >= 1000 ? 1000 : x; }
    static double plusZero(double x) { return x; }
    static int nonNegative(double x) { return x < 0 ? 0 : 1; }
    static double absTwin(double x) { return Math.abs(x); }
    static int big(double x) { return x > 4.6 ? 1 : 0; }
    static int bigTwin(double x) { return 100 < Math.exp(x) ? 1 : 0; }
    static double[][] identityTwin(int n) { int k = n & 7; double[][] a = new double[k][k]; for (int i = k - 1; i >= 0; i--) { a[i][i] = 1.0; } return a; }
    static void fillTwin(double[][] m, double v) { for (int i = 0; i < m.length; i++) { double[] r = m[i]; for (int j = 0; j < r.length; j++) { r[j] = v; } } }
""" + COMMON.replace("FILL", "").replace("INNER", "double[] r = m[i];").replace(
    "m[i][0] += 1; s += m[i][0];", "int x = m[i][0] + 1; m[i][0] = x; s += x;").replace("RESULT", "5") + "}"

MUTANTS = ["atConst", "snippet", "clamp", "plusZero", "nonNegative", "big", "identity", "fill", "rowAlias"]
TWINS = ["clampTwin", "absTwin", "bigTwin", "identityTwin", "fillTwin", "sumRows"]


@pytest.fixture(scope="module")
def rows(java_home, tmp_path_factory):
    trees = compile_versions(java_home, tmp_path_factory.mktemp("inputs"), "K.java", {"orig": ORIG, "opt": OPT})
    return validate_rows(trees, "K", method_timeout=4.0)


@pytest.mark.parametrize("name", MUTANTS)
def test_mutant_is_shown_with_a_jvm_confirmed_input(rows, name):
    row = rows[name]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    cx = row.counterexample
    assert cx["orig"] != cx["opt"]


@pytest.mark.parametrize("name", TWINS)
def test_equivalent_twin_is_never_not_equivalent(rows, name):
    assert rows[name].verdict is not Verdict.NOT_EQUIVALENT, rows[name].counterexample


def test_the_inputs_shown_are_the_ones_that_differ(rows):
    assert rows["atConst"].counterexample["args"][0] in ("37", "38")
    assert rows["snippet"].counterexample["args"] == ["1", "10"]
    assert rows["snippet"].counterexample["orig"] == "returns 1000"
    assert rows["clamp"].counterexample["args"] == ["1001"]
    assert rows["plusZero"].counterexample["args"] == ["-0.0"]
    assert rows["nonNegative"].counterexample["args"] == ["NaN"]


def test_row_aliasing_is_generated_encoded_and_shown(rows):
    inputs = generate_inputs("([[I)I")
    shared = [a[0] for a in inputs if a[0] and len(a[0]) == 2 and a[0][0] is a[0][1]]
    assert shared, "no matrix whose two rows are one array"
    assert encode_arg("[[I", shared[0]) == "A" + encode_arg("[I", shared[0][0], 1) + "|^0"
    assert any(a[0] and None in a[0] for a in inputs) and [[]] in [a for a in inputs]
    # the write to row 1 changes row 0 only when they are one array
    assert "(row 0 again)" in rows["rowAlias"].counterexample["args"][0]
    assert "7" in rows["rowAlias"].counterexample["orig"] and "5" in rows["rowAlias"].counterexample["opt"]


def test_the_reason_says_why_a_difference_is_one_in_java(rows):
    assert "-0.0 and 0.0" in rows["plusZero"].reason
    assert "at a NaN argument" in rows["nonNegative"].reason
    assert "(" not in rows["snippet"].reason  # a plain difference needs no note


def test_hints_solve_linear_conditions_and_skip_what_has_no_neighbours(java_home, tmp_path):
    """From the IR: ``a*3 + 2 == 5`` gives a = 1 (and 0, 2), ``b - 4 > 5`` gives b = 9, 10; a ``switch (k + 1)``
    gives each key minus one; NaN and infinite constants give no integer hints (and no error)."""
    from conftest import compile_versions as cv
    from peggy_jvm.classfile.reader import read_class
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.validate.hints import input_hints
    src = """public class H {
        static int snippet(int a, int b) { int r = 0; if (a * 3 + 2 == 5) { if (b - 4 > 5) { r = 1000; } } return r; }
        static int sw(int k) { switch (k + 1) { case 40: return 1; case 77: return 2; } return 0; }
        static int odd(int x, double y) { return y == Double.NaN || y > Double.POSITIVE_INFINITY ? x : -x; }
    }"""
    tree = cv(java_home, tmp_path, "H.java", {"h": src})["h"]
    cf = read_class((tree / "H.class").read_bytes())
    hints = {m.name: input_hints(lift_method(cf, m, None), None, m.descriptor) for m in cf.methods}
    assert hints["snippet"].get(0)[:3] == [1, 2, 0] and {9, 10} <= set(hints["snippet"].get(1)[:4])
    assert {39, 76} <= set(hints["sw"].get(0))
    assert 1000 in hints["snippet"].get(0)  # a constant of the method, for every int parameter
    assert set(hints["odd"].get(0)) <= {0, 1, -1}  # from the comparisons with 0 only
