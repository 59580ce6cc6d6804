"""A loop counter read only to offset a value the loop does not change is replaced by that value
(ir/coalesce._rebase_counters, issue 15: JAMA's ``LUDecomposition.solve`` came out of extraction with
``k = n - 1 - t`` for javac's ``k = n - 1; ...; k--``, 8 bytes and five instructions per iteration more).

The shapes come from javac's code written with such a counter, through the round trip with loops rotated
(lift, PEG, revert, lower: what the reverter makes of any PEG with that shape), read off the bytecode, and the
code run against javac's on the JVM (``-Xverify:all``) with loops that run zero times, once and many times and
that throw at their first or a later iteration."""
from __future__ import annotations

import itertools

import pytest

import difftest as dt
from support.fullstage import assert_behaves_like_original, listing, round_trip_rotated
from peggy_jvm.ir.coalesce import coalesce_copies
from peggy_jvm.ir.nodes import INT, Binary, Block, Cond, Const, Copy, Goto, If, IRMethod, Return, Var

SOURCE = r"""
public class Rebase {
    static long down(int[] a, int n) {
        long s = 0;
        for (int t = 0; ; t++) {
            int k = n - 1 - t;
            if (k < 0) { break; }
            s += a[k] * 3;
        }
        return s;
    }
    static long up(int[] a, int n, int m) {
        long s = 0;
        for (int k = 0; k < n; k++) {
            int b = k + 1;
            for (int t = 0; ; t++) {
                int i = b + t;
                if (i >= m) { break; }
                s += a[i] ^ k;
            }
        }
        return s;
    }
}
"""


@pytest.fixture(scope="module")
def round_trip(java_home, tmp_path_factory):
    """javac's class and its round trip with loops rotated, as (orig dir, out dir)."""
    return round_trip_rotated(java_home, tmp_path_factory.mktemp("rebase"), "Rebase", SOURCE)


def _ops(java_home, out, method: str) -> list[str]:
    return [mnemonic + (" " + args if mnemonic == "iinc" else "")
            for _, mnemonic, args in listing(java_home, out, "Rebase", method)]


def test_a_counter_down_from_n_minus_one_is_the_value_itself(round_trip, java_home):
    """``k = n - 1 - t`` per iteration becomes ``k = n - 1`` before the loop and ``k--`` (``iinc k, -1``): no
    ``isub`` left in the loop and one ``iinc`` in all: ``t`` is gone."""
    _, out = round_trip
    ops = _ops(java_home, out, "down")
    assert ops.count("isub") == 1, ops  # n - 1, once
    iincs = [o for o in ops if o.startswith("iinc")]
    assert len(iincs) == 1 and iincs[0].endswith("-1"), ops


def test_an_inner_counter_from_an_outer_value_is_the_value_itself(round_trip, java_home):
    """``i = b + t`` per inner iteration becomes ``i = b`` before the inner loop and ``i++``: the inner loop's
    body and test read ``i`` and add nothing to it but its step."""
    _, out = round_trip
    ops = _ops(java_home, out, "up")
    # javac's k + 1 is the only int addition left (the long s += ... is ladd)
    assert ops.count("iadd") == 1, ops
    assert len([o for o in ops if o.startswith("iinc")]) == 2, ops


def test_rebased_counters_behave_like_javacs(round_trip, java_home):
    orig, out = round_trip
    arrays = [None, [], [7], [1, -2, 3], [5, 4, 3, 2, 1, 0, -1]]
    calls = [dt.Call("Rebase", "down", "([II)J", (a, n)) for a, n in itertools.product(arrays, [-1, 0, 1, 2, 3, 7, 9])]
    calls += [dt.Call("Rebase", "up", "([III)J", (a, n, m))
              for a, n, m in itertools.product(arrays, [-1, 0, 1, 3, 8], [0, 1, 3, 7, 9])]
    assert_behaves_like_original(java_home, orig, out, {}, calls)


def _v(i: int) -> Var:
    return Var(i, INT, f"v{i}")


def _counted(read_after_step: bool) -> IRMethod:
    """``t = 0; loop: d = a - t; if d < 0 exit; s = s + d; t = t + 1`` with ``a`` a parameter; with
    ``read_after_step`` the latch reads ``d`` after the step (the original sees the old ``d`` there)."""
    a, t, d, s = _v(0), _v(1), _v(2), _v(3)
    latch = [Binary(s, "add.i", s, d), Binary(t, "add.i", t, Const(INT, 1))]
    if read_after_step:
        latch.append(Binary(s, "add.i", s, d))
    blocks = {
        0: Block(0, [Copy(s, Const(INT, 0)), Copy(t, Const(INT, 0))], Goto(1)),
        1: Block(1, [Binary(d, "sub.i", a, t)], If(Cond.LT, d, Const(INT, 0), 3, 2)),
        2: Block(2, latch, Goto(1)),
        3: Block(3, [], Return(s)),
    }
    return IRMethod("C", "m", "(I)I", True, [a], blocks, 0, variables=[t, d, s])


def test_the_rebased_loop_steps_the_value_where_the_counter_stepped():
    """``d`` starts as ``a`` (merged with the parameter, read nowhere else) and steps down where ``t`` stepped up;
    the header only tests it, and ``t`` is gone."""
    m = _counted(False)
    coalesce_copies(m)
    head, latch = m.blocks[1], m.blocks[2].stmts
    assert head.stmts == [] and not any(st.defined() is not None and st.defined().id == 1
                                        for b in m.blocks.values() for st in b.stmts), m.blocks
    tested = head.terminator.a
    step = latch[-1]
    assert isinstance(step, Binary) and step.op == "sub.i" and step.dst is tested and step.a is tested \
        and step.b == Const(INT, 1), latch


def test_a_value_read_after_the_counters_step_keeps_the_counter():
    """The original reads the old ``d`` after ``t``'s step; rebased it would read the new one: left alone."""
    m = _counted(True)
    coalesce_copies(m)
    assert any(isinstance(st, Binary) and st.dst.id == 2 and st.op == "sub.i" and st.b.id == 1
               for st in m.blocks[1].stmts), m.blocks[1].stmts
