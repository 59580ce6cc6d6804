"""``store n; load n`` across a line boundary of rebuilt code is ``dup; store n`` (ir/lower._store_load_dups,
issue 15): a line-number mark is no jump target, so it no longer keeps the load (JAMA's
``Matrix X = new Matrix(m, n); double[][] C = X.getArray();`` came out as ``astore 8; aload 8``, javac's own
code for ``C = (X = new Matrix(m, n)).getArray()`` is ``dup; astore``). The mark stays after the store: the
next line starts at the instruction that follows.

Through the round trip (lift, PEG, revert, lower: rebuilt code), read off the bytecode and the line table, and
run against javac's code on the JVM (``-Xverify:all``)."""
from __future__ import annotations

import itertools

import pytest

import difftest as dt
from support.fullstage import assert_behaves_like_original, listing, round_trip_rotated
from peggy_jvm.classfile.attributes import LineNumberTable
from peggy_jvm.classfile.reader import read_class, read_code

SOURCE = r"""
public class Lines {
    static int rows(int a, int b, int c, int d) {
        int[] t = new int[a];
        int n = t.length + b;
        t[0] = c;
        return t[0] * n + d;
    }
}
"""


@pytest.fixture(scope="module")
def round_trip(java_home, tmp_path_factory):
    return round_trip_rotated(java_home, tmp_path_factory.mktemp("lines"), "Lines", SOURCE)


def test_a_store_and_a_load_on_the_next_line_are_a_dup(round_trip, java_home):
    """javac: ``newarray; astore 4; aload 4; arraylength`` (the load starts line 5); rebuilt: ``newarray; dup;
    astore 4; arraylength``, and line 5 starts at the ``arraylength``."""
    orig, out = round_trip
    before = [m for _, m, _ in listing(java_home, orig, "Lines", "rows")]
    after = listing(java_home, out, "Lines", "rows")
    ops = [m for _, m, _ in after]
    k = before.index("astore")
    assert before[k + 1] == "aload", before
    k = ops.index("newarray")
    assert ops[k + 1:k + 4] == ["dup", "astore", "arraylength"], ops
    cf = read_class((out / "Lines.class").read_bytes())
    m = next(m for m in cf.methods if m.name == "rows")
    code = read_code(m.code_attribute().data, cf.pool)
    table = next(LineNumberTable.parse(a.data) for a in code.attributes if a.name == "LineNumberTable")
    starts = {e.line_number: e.start_pc for e in table.entries}
    assert starts[5] == after[k + 3][0], (starts, after)


def test_it_behaves_like_javacs(round_trip, java_home):
    orig, out = round_trip
    calls = [dt.Call("Lines", "rows", "(IIII)I", (a, b, 3, 4)) for a, b in itertools.product([-1, 0, 1, 5], [0, 7])]
    assert_behaves_like_original(java_home, orig, out, {}, calls)
