"""Counterexamples for instance methods and constructors (issue 17 item 2): the receiver is allocated without a
constructor and its own fields set from generated values (shown as ``this: {...}`` first among the arguments);
the outcome includes the receiver's fields after the call, and a constructor's outcome is the object it builds.
Mutants are shown not-equivalent with a JVM-confirmed input; their equivalent twins never are.
"""
from __future__ import annotations

import pytest
from conftest import compile_versions

from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs

ORIG = r"""
public class Acc {
    int total; double scale; int[] hist;
    Acc(int start) { total = start; scale = 1.0; }
    Acc(int start, double s) { total = start * 2; scale = s; }
    int add(int x) { total += x; return total; }
    double scaled() { return total * scale; }
    void bump(int i) { hist[i] += 1; }
    int addTwin(int x) { total = total + x; return total; }
}
"""
OPT = r"""
public class Acc {
    int total; double scale; int[] hist;
    Acc(int start) { total = start; scale = 0.0; }
    Acc(int start, double s) { total = start + start; scale = s; }
    int add(int x) { int t = total + x; return t; }
    double scaled() { return scale * total + 0.0; }
    void bump(int i) { hist[i] = 1; }
    int addTwin(int x) { total += x; return total; }
}
"""


@pytest.fixture(scope="module")
def rows(java_home, tmp_path_factory):
    trees = compile_versions(java_home, tmp_path_factory.mktemp("instances"), "Acc.java", {"orig": ORIG, "opt": OPT})
    report = validate_inputs(trees["orig"], trees["opt"], ValidateOptions(method_timeout=4.0))
    return {p.name if p.name != "<init>" else f"<init>{p.descriptor}": p for p in report.pairs}


def test_instance_method_difference_in_the_receiver(rows):
    row = rows["add"]  # OPT forgets to store the sum: same return, different receiver after
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    cx = row.counterexample
    assert cx["args"][0].startswith("this: {total=") and "hist=" in cx["args"][0], cx
    assert "this after: {" in cx["orig"] and cx["orig"] != cx["opt"], cx


@pytest.mark.parametrize("name", ["scaled", "bump"])
def test_instance_method_mutants(rows, name):
    row = rows[name]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["args"][0].startswith("this: {"), row.counterexample


def test_constructor_difference_is_the_object_it_builds(rows):
    row = rows["<init>(I)V"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    cx = row.counterexample
    assert cx["orig"].startswith("builds {") and "scale=1.0" in cx["orig"], cx
    assert "scale=0.0" in cx["opt"], cx


def test_equivalent_twins_are_never_not_equivalent(rows):
    for name in ("addTwin", "<init>(ID)V"):  # start * 2 == start + start
        assert rows[name].verdict is not Verdict.NOT_EQUIVALENT, rows[name].counterexample


MAPPED_OLD = r"""
public class Old {
    static Object make(int k) { Old o = new Old(); o.k = k; return o; }
    static Object[] many(int n) { return new Old[n & 3]; }
    static Object bad(int k) { Old o = new Old(); o.k = k; return o; }
    int k;
}
"""
MAPPED_NEW = MAPPED_OLD.replace("Old", "New").replace("o.k = k; return o; }\n    int k;", "o.k = k + 1; return o; }\n    int k;")


def test_a_class_renamed_with_map_is_no_difference(java_home, tmp_path_factory):
    """Objects and arrays of the renamed class are the same class in both outcomes (--map), so ``make`` and
    ``many`` are no difference; the mutant ``bad`` is, through the field of the object it returns being read by
    nothing: the outcome shows objects by class only, so it stays unknown too, never a difference by name."""
    base = tmp_path_factory.mktemp("mapped")
    a = compile_versions(java_home, base / "a" if (base / "a").mkdir() is None else base, "Old.java", {"o": MAPPED_OLD})
    b = compile_versions(java_home, base / "b" if (base / "b").mkdir() is None else base, "New.java", {"n": MAPPED_NEW})
    report = validate_inputs(a["o"], b["n"], ValidateOptions(method_timeout=4.0, class_map={"Old": "New"}))
    rows = {p.name: p for p in report.pairs}
    assert set(rows) >= {"make", "many", "bad"}
    for name in ("make", "many"):
        assert rows[name].verdict is not Verdict.NOT_EQUIVALENT, rows[name].counterexample


def test_a_method_that_became_static_gets_no_call(java_home, tmp_path_factory):
    base = tmp_path_factory.mktemp("became-static")
    src = "public class S {{ int k; {}int f(int x) {{ return x + 1; }} }}"
    trees = compile_versions(java_home, base, "S.java", {"orig": src.format(""), "opt": src.format("static ")})
    report = validate_inputs(trees["orig"], trees["opt"], ValidateOptions(method_timeout=2.0))
    f = next(p for p in report.pairs if p.name == "f")
    assert f.verdict is Verdict.UNKNOWN and "became static" in f.reason, f.reason
