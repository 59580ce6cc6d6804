"""A second counter of a counting loop read at the loop's exit (rules/counters.py, ``counter-at-exit``): counting
up to ``n + n`` against counting down from it (EqBench's ``REVE/loop5``), and a loop against its closed form where
the trip count passes ``MAX_VALUE`` (``a = MIN_VALUE``, ``n = MAX_VALUE``: int arithmetic wraps alike). The
mutants (one iteration more, a wrong start, the other counter stepping the other way, a closed form off by one)
are not proved and are shown different on the JVM.
"""
from __future__ import annotations

import pytest
from conftest import compile_old_new, validate_rows

from peggy_jvm.epeg import EPeg
from peggy_jvm.ir.nodes import INT
from peggy_jvm.peg.graph import PEG
from peggy_jvm.rules.counters import CounterAtExit
from peggy_jvm.validate import Verdict

OLD = r"""
public class Old {
    static int updown(int n) { int i = 0; int j = 0; while (i < n + n) { j++; i++; } return j; }
    static int updownOneMore(int n) { int i = 0; int j = 0; while (i < n + n) { j++; i++; } return j; }
    static int updownStart(int n) { int i = 0; int j = 0; while (i < n + n) { j++; i++; } return j; }
    static int updownBack(int n) { int i = 0; int j = 0; while (i < n + n) { j++; i++; } return j; }
    static int closed(int a, int n) { int j = 5; for (int i = a; i < n; i++) j--; return j; }
    static int closedOff(int a, int n) { int j = 5; for (int i = a; i < n; i++) j--; return j; }
}
"""
NEW = r"""
public class New {
    static int updown(int n) { int i = n + n; int j = 0; while (i > 0) { j++; i--; } return j; }
    static int updownOneMore(int n) { int i = n + n; int j = 0; while (i >= 0) { j++; i--; } return j; }
    static int updownStart(int n) { int i = n + n; int j = 1; while (i > 0) { j++; i--; } return j; }
    static int updownBack(int n) { int i = n + n; int j = 0; while (i > 0) { j--; i--; } return j; }
    static int closed(int a, int n) { return a >= n ? 5 : 5 - (n - a); }
    static int closedOff(int a, int n) { return a >= n ? 5 : 5 - (n - a) + 1; }
}
"""


@pytest.fixture(scope="module")
def rows(java_home, tmp_path_factory):
    base = tmp_path_factory.mktemp("counters")
    trees = compile_old_new(java_home, base, OLD, NEW)
    return validate_rows(trees, method_timeout=6.0, class_map={"Old": "New"}, explain=True)


@pytest.mark.parametrize("name", ["updown", "closed"])
def test_a_counter_at_the_exit_of_another_is_in_closed_form(rows, name):
    row = rows[name]
    assert row.verdict is Verdict.EQUIVALENT, row.reason


@pytest.mark.parametrize("name", ["updownOneMore", "updownStart", "updownBack", "closedOff"])
def test_mutants_are_shown_different(rows, name):
    row = rows[name]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"], row.counterexample


def _two_counters(step_i: int, step_j: int, exit_op: str) -> tuple[EPeg, int, dict[str, int]]:
    """``i = a, j = b; until (i exit_op n) { i += step_i; j += step_j }``; the e-graph, the class of ``j`` at the
    exit, and the classes of ``a``, ``n``, ``b``."""
    g = PEG(is_static=True, param_types=[INT, INT, INT])
    s0 = g.add("sigma0")
    a, n, b = (g.add("param", k) for k in range(3))
    i, j = g.new_theta(1), g.new_theta(1)
    g.set_theta(i, a, g.add("add.i", None, (i, g.add("const.i", step_i))))
    g.set_theta(j, b, g.add("add.i", None, (j, g.add("const.i", step_j))))
    done = g.add("pass", 1, (g.add("guard", None, (s0, g.add(exit_op, None, (i, n)))),))
    g.root = g.add("return", None, (g.add("eval", 1, (s0, done)), g.add("eval", 1, (j, done))))
    g.seal()
    eg = EPeg()
    ids = eg.add_peg(g)
    return eg, ids[g.nodes[g.root].children[1]], {"a": ids[a], "n": ids[n], "b": ids[b]}


def _saturate_once(eg: EPeg) -> None:
    rule = CounterAtExit()
    for match in rule.search(eg, 100, 0.0)[0]:
        rule.apply(eg, match)
    eg.rebuild()


def test_the_closed_form_counts_the_iterations_of_the_tested_counter():
    eg, at_exit, v = _two_counters(1, -1, "ge.i")  # up from a to n; j steps down from b
    _saturate_once(eg)
    count = eg.add("sub.i", None, (v["n"], v["a"]))
    want = eg.add("phi", None, (eg.add("ge.i", None, (v["a"], v["n"])), v["b"],
                                eg.add("sub.i", None, (v["b"], count))))
    assert eg.equiv(at_exit, want)


@pytest.mark.parametrize("step_i, exit_op", [(1, "le.i"), (-1, "ge.i"), (2, "ge.i")])
def test_no_closed_form_where_the_counter_does_not_meet_its_bound_step_by_step(step_i, exit_op):
    """Counting up to ``i <= n`` (exits at once or never), down to ``i >= n``, or by 2 (may step over ``n``)."""
    eg, at_exit, _v = _two_counters(step_i, 1, exit_op)
    before = len(eg.nodes(at_exit))
    _saturate_once(eg)
    assert len(eg.nodes(at_exit)) == before
