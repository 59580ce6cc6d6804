"""A method of one int parameter proved by splitting the parameter's range where the branches change
(validate/ranges.py): digits counted by a loop that divides by 10 against comparisons with powers of ten and a
loop that divides by 100 (EqBench's ``REVE/digits10`` shape, written again), a clamp on ``char``; the mutants
(a bound moved by one, a step that wraps around) are not proved and are shown different on the JVM. The model
itself: where it gives up (a loop whose trip count grows with the parameter, a field read) and the intervals it
finds.
"""
from __future__ import annotations

import pytest
from conftest import compile_old_new, validate_rows

from peggy_jvm.ir.nodes import Binary, Block, Cond, Const, Goto, If, IRMethod, IRType, Kind, Return, Var
from peggy_jvm.validate import Verdict
from peggy_jvm.validate.ranges import MAX_KEY, MAX_PATHS, equal_on_ranges, outcomes

OLD = r"""
public class Old {
    static int digits(int n) {
        int d = 1;
        while (n >= 10) { n = n / 10; d++; }
        return d;
    }
    int digitsPaired(int n) {
        int d = 1;
        n = n / 10;
        while (n > 0) { d++; n = n / 10; if (n > 0) { d++; n = n / 10; } }
        return d;
    }
    static int digitsBound(int n) {
        int d = 1;
        while (n >= 10) { n = n / 10; d++; }
        return d;
    }
    static int clamp(char c) { return c > 'z' ? 'z' : c < 'a' ? 'a' : c; }
    static int scaled(int n) { return n > 0 ? n / 4 * 2 : 0; }
}
"""
NEW = r"""
public class New {
    static int digits(int n) {
        if (n < 10) return 1;
        if (n < 100) return 2;
        if (n < 1000) return 3;
        if (n < 10000) return 4;
        if (n < 100000) return 5;
        return 5 + digits(n / 100000);
    }
    int digitsPaired(int n) {
        int d = 1;
        while (n >= 100) { n = n / 100; d += 2; }
        if (n >= 10) d++;
        return d;
    }
    static int digitsBound(int n) {
        if (n < 10) return 1;
        int d = 1;
        while (n > 10) { n = n / 10; d++; }
        return d;
    }
    static int clamp(char c) { return c < 'a' ? 'a' : c > 'z' ? 'z' : c; }
    static int scaled(int n) { return n > 0 ? (n >> 1) - (n >> 1) % 2 : 1; }
}
"""


@pytest.fixture(scope="module")
def rows(java_home, tmp_path_factory):
    trees = compile_old_new(java_home, tmp_path_factory.mktemp("ranges"), OLD, NEW)
    return validate_rows(trees, method_timeout=6.0, class_map={"Old": "New"}, explain=True)


def test_digits_against_its_unrolled_loop_is_proved_on_intervals(rows):
    row = rows["digitsPaired"]
    assert row.verdict is Verdict.EQUIVALENT, row.reason
    assert row.axioms == ["int-ranges"] and "10 intervals" in row.reason, (row.axioms, row.reason)


def test_a_char_clamp_is_proved_on_the_char_range(rows):
    row = rows["clamp"]
    assert row.verdict is Verdict.EQUIVALENT, row.reason


def test_a_bound_moved_by_one_is_not_proved_and_shown(rows):
    row = rows["digitsBound"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"], row.counterexample


def test_a_recursive_side_is_outside_the_model(rows):
    """``New.digits`` calls itself: not run on intervals (a call gives up); whatever proves it, not this."""
    assert "int-ranges" not in (rows["digits"].axioms or []), rows["digits"].reason


def test_an_unmodelled_operator_gives_up_and_a_difference_is_shown(rows):
    """``%`` is not monotone: the model gives up; at 0 the two differ (0 against 1)."""
    row = rows["scaled"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert "int-ranges" not in (row.axioms or [])


def _method(blocks: dict[int, Block], x: Var) -> IRMethod:
    return IRMethod("T", "f", "(I)I", True, [x], blocks, 0)


def test_a_loop_running_once_per_value_passes_the_path_limit():
    """``i = 0; while (i < x) i++; return i``: one interval per trip count, never all of them."""
    int_t = IRType(Kind.INT)
    x, i = Var(0, int_t, "x"), Var(1, int_t, "i")
    c = lambda v: Const(int_t, v)  # noqa: E731
    blocks = {0: Block(0, [Binary(i, "add.i", c(0), c(0))], Goto(1)),
              1: Block(1, [], If(Cond.LT, i, x, 2, 3)),
              2: Block(2, [Binary(i, "add.i", i, c(1))], Goto(1)),
              3: Block(3, [], Return(i))}
    m = _method(blocks, x)
    assert equal_on_ranges(m, m) is None
    small = {**blocks, 1: Block(1, [], If(Cond.LT, i, c(MAX_PATHS // 2), 4, 3)),
             4: Block(4, [], If(Cond.LT, i, x, 2, 3))}
    got = outcomes(_method(small, x))  # bounded by a constant too: one interval per trip up to it
    assert [(lo, hi) for lo, hi, _v in got][:3] == [(-2**31, 0), (1, 1), (2, 2)]
    assert got[-1][0] == MAX_PATHS // 2 and got[-1][2] == MAX_PATHS // 2


def test_a_wrap_around_gives_up():
    """``x + 1`` wraps at ``MAX_VALUE``: not a monotone function on the whole range."""
    int_t = IRType(Kind.INT)
    x, y = Var(0, int_t, "x"), Var(1, int_t, "y")
    m = _method({0: Block(0, [Binary(y, "add.i", x, Const(int_t, 1))], Return(y))}, x)
    assert equal_on_ranges(m, m) is None
    guarded = _method({0: Block(0, [], If(Cond.LT, x, Const(int_t, 0), 1, 2)),
                       1: Block(1, [Binary(y, "add.i", x, Const(int_t, 1))], Return(y)),
                       2: Block(2, [], Return(Const(int_t, 0)))}, x)
    assert equal_on_ranges(guarded, guarded) == 2


def test_a_function_grown_by_a_loop_gives_up_at_its_size():
    """``s += x`` 500 times for ``0 <= x <= 10`` never wraps, but its description grows each time: given up at
    :data:`MAX_KEY` characters (its evaluation is a chain of closures, one frame each), not run to the end."""
    int_t = IRType(Kind.INT)
    x, s, i = Var(0, int_t, "x"), Var(1, int_t, "s"), Var(2, int_t, "i")
    c = lambda v: Const(int_t, v)  # noqa: E731
    m = _method({0: Block(0, [], If(Cond.LT, x, c(0), 5, 1)),
                 1: Block(1, [Binary(s, "add.i", c(0), c(0)), Binary(i, "add.i", c(0), c(0))],
                          If(Cond.GT, x, c(10), 5, 2)),
                 2: Block(2, [], If(Cond.LT, i, c(500), 3, 4)),
                 3: Block(3, [Binary(s, "add.i", s, x), Binary(i, "add.i", i, c(1))], Goto(2)),
                 4: Block(4, [], Return(s)),
                 5: Block(5, [], Return(c(0)))}, x)
    assert equal_on_ranges(m, m) is None
    assert MAX_KEY < 500 * len("+(x)")
