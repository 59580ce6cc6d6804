"""Cases computed value by value (validate/finite.py): where the branch conditions leave an int parameter a few
values, each is put in place and both methods computed, loops and calls included (EqBench's ``LoopMult*``: ``x``
in [5, 7) times ``+5`` against ``5`` times ``+x``; ``oneBound``: ``x > x - 1`` for every ``x`` the case leaves;
``factorial``: a loop against a private recursive method for ``x < 5``, the recursion unfolded once where ``x <=
0`` and computed call by call where ``x`` is 1 to 4; ``addhorn``: a recursive call whose constant argument decides
its body's test, ``f(0, j + 1)`` where ``i == 1``, unfolded with ``j`` left free). The
mutants beside them (a loop one short, a range one wider, a case open to ``MIN_VALUE``, a loop that never ends
for one of the values) are never proved, and are shown different on the JVM.
"""
from __future__ import annotations

import pytest
from conftest import compile_old_new, validate_rows

from peggy_jvm.peg.graph import PEG
from peggy_jvm.validate import Verdict
from peggy_jvm.validate.finite import evaluated, specialize

OLD = r"""
public class Old {
    private static int times(int a, int b) { int c = 0; for (int i = 1; i <= b; ++i) c += a; return c; }
    static int mult(int x) { if (x >= 5 && x < 7) return times(x, 5); return 0; }
    static int multShort(int x) { if (x >= 5 && x < 7) return times(x, 5); return 0; }
    static int multWider(int x) { if (x >= 5 && x < 7) return times(x, 5); return 0; }
    static int bound(int x) {
        if (x < -100 || x > 100) return x;
        return x > x - 1 ? x : 0;
    }
    static int unbounded(int x) { return x > x - 1 ? x : 0; }
    static int spin(int x) {
        if (x >= 0 && x < 3) { int i = 0; while (i != x) i += 2; return i; }
        return x;
    }
    private static int fact(int n) {
        if (n > 0) { int acc = 1; int x = 1; while (x < n + 1) { acc = acc * x; x = x + 1; } return acc; }
        return 0;
    }
    static int factorial(int x) { if (x < 5) return fact(x); return 0; }
    static int factorialBase(int x) { if (x < 5) return fact(x); return 0; }
    private static int step(int v) { return v + 1; }
    static int stepAt3(int x) { if (x == 3) return step(x); return 0; }
    static int addhorn(int i, int j) { return i == 0 ? j : addhorn(i - 1, j + 1); }
    static int addhornOff(int i, int j) { return i == 0 ? j : addhornOff(i - 1, j + 1); }
}
"""
NEW = r"""
public class New {
    private static int times(int a, int b) { int c = 0; for (int i = 1; i <= a; ++i) c += b; return c; }
    private static int timesShort(int a, int b) { int c = 0; for (int i = 1; i < a; ++i) c += b; return c; }
    static int mult(int x) { if (x >= 5 && x < 7) return times(x, 5); return 0; }
    static int multShort(int x) { if (x >= 5 && x < 7) return timesShort(x, 5); return 0; }
    static int multWider(int x) { if (x >= 5 && x <= 7) return times(x, 5); return 0; }
    static int bound(int x) {
        if (x < -100 || x > 100) return x;
        return x;
    }
    static int unbounded(int x) { return x; }
    static int spin(int x) {
        if (x >= 0 && x < 3) return x;
        return x;
    }
    private static int fact(int n) { if (n <= 0) return 0; else if (n == 1) return 1; else return n * fact(n - 1); }
    private static int factBase(int n) {
        if (n <= 0) return 0; else if (n == 1) return 2; else return n * factBase(n - 1);
    }
    static int factorial(int x) { if (x < 5) return fact(x); return 0; }
    static int factorialBase(int x) { if (x < 5) return factBase(x); return 0; }
    private static synchronized int step(int v) { return v + 2; }
    static int stepAt3(int x) { if (x == 3) return step(x); return 0; }
    static int addhorn(int i, int j) { if (i == 0) return j; if (i == 1) return j + 1; return addhorn(i - 1, j + 1); }
    static int addhornOff(int i, int j) {
        if (i == 0) return j; if (i == 1) return j + 2; return addhornOff(i - 1, j + 1);
    }
}
"""


@pytest.fixture(scope="module")
def rows(java_home, tmp_path_factory):
    base = tmp_path_factory.mktemp("finite")
    trees = compile_old_new(java_home, base, OLD, NEW)
    return validate_rows(trees, class_map={"Old": "New"})


@pytest.mark.parametrize("name", ["mult", "bound", "factorial", "addhorn"])
def test_a_case_with_few_values_is_computed_value_by_value(rows, name):
    row = rows[name]
    assert row.verdict is Verdict.EQUIVALENT, row.reason
    assert "computed for each value" in row.reason


@pytest.mark.parametrize("name", ["multShort", "multWider", "unbounded", "factorialBase", "stepAt3",
                                  "addhornOff"])
def test_mutants_are_shown_different(rows, name):
    """A loop one iteration short (``x = 5``: 20 against 25); the range one wider (``x = 7``: 0 against 35); no
    range at all (``MIN_VALUE``, where ``x > x - 1`` is false); a recursion's wrong base case (``x = 1``); a helper
    of the other version called on a constant (``step(3)``: OPT's is synchronized, so its body is not inlined,
    and ORIG's must not stand in for it); a recursion's case ``i == 1`` one off (``addhornOff(1, 0)``)."""
    row = rows[name]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"], row.counterexample


def test_a_loop_that_does_not_end_on_some_value_is_not_proved(rows):
    """``spin(1)``: the loop steps 0, 2, 4, ... past 1 for ever where the other version returns 1."""
    assert rows["spin"].verdict is not Verdict.EQUIVALENT, rows["spin"].reason


def _counting_loop(limit: int | None) -> tuple[PEG, int]:
    """``c = 0; for (i = 0; i != n; i++) c += 3; return c`` (n the parameter, or ``limit`` in its place)."""
    g = PEG(is_static=True, param_types=[])
    from peggy_jvm.ir.nodes import INT
    g.param_types = [INT]
    s0 = g.add("sigma0")
    n = g.add("const.i", limit) if limit is not None else g.add("param", 0)
    zero, one, three = g.add("const.i", 0), g.add("const.i", 1), g.add("const.i", 3)
    i, c = g.new_theta(1), g.new_theta(1)
    g.set_theta(i, zero, g.add("add.i", None, (i, one)))
    g.set_theta(c, zero, g.add("add.i", None, (c, three)))
    done = g.add("pass", 1, (g.add("guard", None, (s0, g.add("eq.i", None, (i, n)))),))
    g.root = g.add("return", None, (g.add("eval", 1, (s0, done)), g.add("eval", 1, (c, done))))
    g.seal()
    return g, n


def test_a_loop_of_constants_is_computed_and_one_that_does_not_end_is_left():
    g, n = _counting_loop(None)
    folded = evaluated(specialize(g, {n: 4}))
    ret = folded.nodes[folded.root]
    assert [folded.nodes[c].op for c in ret.children] == ["sigma0", "const.i"]
    assert folded.nodes[ret.children[1]].attr == 12
    endless = evaluated(specialize(g, {n: -1}))  # i steps 0, 1, 2, ... and meets -1 only after 2^32 - 1 steps
    assert any(x.op == "eval" for x in endless.nodes)
