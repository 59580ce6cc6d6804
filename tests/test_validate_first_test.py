"""Validation's peel of a loop whose first test is decided (rules/firsttest.py, ``loop-peel-decided``): a loop
started one step later, whose first iteration the other side runs with a test its constants decide, is
proved (EqBench's ``REVE/simpleloop``); the mutants beside each, whose first iteration or bound differs, are
never proved and are shown different on the JVM.
"""
from __future__ import annotations

import pytest
from conftest import compile_old_new, validate_rows

from peggy_jvm.epeg import EPeg
from peggy_jvm.rules.firsttest import first_value
from peggy_jvm.validate import Verdict

OLD = r"""
public class Old {
    static int count(int z) { int i = 0; while (i <= 10) { i++; } return i; }
    static int sum(int x) { int s = 0; for (int i = 0; i < 10; i++) { s += i * x; } return s; }
    static int countBad(int z) { int i = 0; while (i < 10) { i++; } return i + z; }
    static int sumBad(int x) { int s = 0; for (int i = 0; i < 10; i++) { s += i + x; } return s; }
}
"""
NEW = r"""
public class New {
    static int count(int z) { int i = 1; while (i <= 10) { i++; } return i; }
    static int sum(int x) { int s = 0; for (int i = 1; i < 10; i++) { s += i * x; } return s; }
    static int countBad(int z) { int i = 1; while (i <= 10) { i++; } return i + z; }
    static int sumBad(int x) { int s = 0; for (int i = 1; i < 10; i++) { s += i + x; } return s; }
}
"""


@pytest.fixture(scope="module")
def rows(java_home, tmp_path_factory):
    base = tmp_path_factory.mktemp("first-test")
    trees = compile_old_new(java_home, base, OLD, NEW)
    return validate_rows(trees, method_timeout=6.0, class_map={"Old": "New"})


@pytest.mark.parametrize("name", ["count", "sum"])
def test_a_loop_started_one_step_later_is_proved(rows, name):
    assert rows[name].verdict is Verdict.EQUIVALENT, rows[name].reason


@pytest.mark.parametrize("name", ["countBad", "sumBad"])
def test_mutants_are_shown_different(rows, name):
    """``i < 10`` from 0 against ``i <= 10`` from 1 (one iteration more), and a first iteration that adds
    ``0 + x``, not nothing."""
    row = rows[name]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"], row.counterexample


def test_first_value_reads_a_condition_at_iteration_zero():
    """``theta(0, i + 1) > 10`` is false at iteration 0, ``theta(p, i + 1) > 10`` is not decided."""
    eg = EPeg()
    for start, want in ((eg.add("const.i", 0), ("const.b", False)), (eg.add("param", 0), None)):
        ph = eg.add_placeholder()
        eg._classes[ph].data[1] = 1  # varies in loop 0
        th = eg.add("theta", 0, (start, eg.add("add.i", None, (ph, eg.add("const.i", 1)))))
        eg.union(ph, th)
        eg.rebuild()
        cond = eg.add("gt.i", None, (th, eg.add("const.i", 10)))
        assert first_value(eg, 0, cond) == want
