"""Which loops of a nest are tested at the bottom (revert.tidy._middle_loops_tested_at_the_top): javac's methods
through the round trip with loops rotated as ``--goal speed`` does (support.fullstage.round_trip_rotated), the
loop shapes read off the bytecode, and the code run against javac's on the JVM (``-Xverify:all``).

The rule: a loop holding another, whose entry test stays, is tested at its top as javac writes it (its test,
then its body, then a ``goto`` back to the test), the outermost loop of a nest as well as a middle one; the
loops in it are tested at their bottom. A loop entered with no test (its entry test decided by the enclosing
loop's, matmul's ``j``) stays tested at its bottom. Why (HotSpot's JIT ran shellSort's rotated middle loop
1.03-1.05x javac's code, 0.96-0.99x tested at its top; matmul's rotated outermost loop 1.03-1.05x, 0.99 at
its top): docs/benchmarks.md, sections ``shelljit`` and "Issue 15's goals on main, session 15"."""
from __future__ import annotations

import itertools

import pytest

import difftest as dt
from support.fullstage import assert_behaves_like_original, listing, round_trip_rotated

SOURCE = r"""
public class Nests {
    // the j loop's entry test (0 < n) is decided by the r loop's (0 < n, then r < n): the j loop entered untested
    static long cube(int[] a, int n) {
        long s = 0;
        for (int r = 0; r < n; r++) {
            for (int j = 0; j < n; j++) {
                for (int k = 0; k < n; k++) { s += a[(r + j + k) & 7] ^ k; }
                s -= j;
            }
        }
        return s;
    }
    // BenchKernels.shellSort's nest: the i loop's entry test (i < n with i = gap) is decided by nothing before
    static long shell(int[] a, int n) {
        int gap = 1;
        while (gap < n / 3) { gap = 3 * gap + 1; }
        for (; gap > 0; gap /= 3) {
            for (int i = gap; i < n; i++) {
                int x = a[i];
                int j = i;
                while (j >= gap && a[j - gap] > x) { a[j] = a[j - gap]; j -= gap; }
                a[j] = x;
            }
        }
        long h = 0;
        for (int i = 0; i < n; i++) { h = h * 31 + a[i]; }
        return h;
    }
}
"""


@pytest.fixture(scope="module")
def round_trip(java_home, tmp_path_factory):
    return round_trip_rotated(java_home, tmp_path_factory.mktemp("rotmid"), "Nests", SOURCE)


def _jumps(java_home, classes, name: str) -> list[tuple[int, str, int]]:
    """(offset, mnemonic, target) of each jump of ``Nests.name``."""
    return [(off, mn, int(rest)) for off, mn, rest in listing(java_home, classes, "Nests", name)
            if mn.startswith(("if", "goto"))]


def _conditional(mnemonic: str) -> bool:
    return mnemonic.startswith("if")


def _loops(code) -> list[tuple[int, int, str]]:
    """(first offset, offset of the backward jump, its mnemonic) of each loop, outermost first at equal starts."""
    return sorted(((t, off, mn) for off, mn, t in code if t <= off), key=lambda x: (x[0], -x[1]))


def _depth(loops, loop) -> int:
    """How many of ``loops`` hold ``loop``."""
    return sum(1 for lo, hi, _ in loops if (lo, hi) != loop[:2] and lo <= loop[0] and loop[1] <= hi)


def test_the_middle_loop_of_shellsorts_nest_is_tested_at_its_top(round_trip, java_home):
    """shell: the insertion loop ends with a conditional jump back (tested at its bottom); the i loop and the
    gap loop around it, each holding a loop and keeping its entry test, end with a ``goto`` back to their test,
    the test at the i loop's top jumping forward past the loop; the two loops before and after the nest (at
    depth 0, holding none) are single loops tested at their bottom."""
    _, out = round_trip
    code = _jumps(java_home, out, "shell")
    loops = _loops(code)
    by_depth = {d: [x for x in loops if _depth(loops, x) == d] for d in range(3)}
    assert [len(by_depth[d]) for d in range(3)] == [3, 1, 1], loops
    (mid_lo, mid_hi, mid_op), = by_depth[1]
    (in_lo, in_hi, in_op), = by_depth[2]
    gap = next(x for x in by_depth[0] if x[0] <= mid_lo and mid_hi <= x[1])
    assert gap[2].startswith("goto"), code  # the gap loop: back to its test at the top
    assert all(_conditional(x[2]) for x in by_depth[0] if x is not gap), code  # the single loops: at the bottom
    assert _conditional(in_op), code  # the insertion loop: tested at its bottom
    assert mid_op.startswith("goto"), code  # the i loop: back to its test ...
    test = next((off, t) for off, mn, t in code if mid_lo <= off < in_lo and _conditional(mn))
    assert test[1] > mid_hi, code  # ... which leaves the loop forward, the loop's first jump


def test_a_middle_loop_entered_with_no_test_stays_tested_at_its_bottom(round_trip, java_home):
    """cube: the j loop's entry test is decided by the r loop's, so the j loop has none to put back on top: it
    and the k loop in it end with a conditional jump back; the r loop, holding them and keeping its entry test
    ``0 < n``, is tested at its top (the one backward goto)."""
    _, out = round_trip
    code = _jumps(java_home, out, "cube")
    loops = _loops(code)
    assert sorted(_depth(loops, x) for x in loops) == [0, 1, 2], loops
    assert [_conditional(mn) for x in sorted(loops, key=lambda x: _depth(loops, x)) for mn in [x[2]]] == \
        [False, True, True], code


def _calls() -> list[dt.Call]:
    """Empty and short arrays (the i loop running zero times when n <= gap), sorted, reversed and repeated
    values, arrays shorter than n (an exception in the middle of the sort), null; cube on n from -1 to 4 (an
    array too short for the index: the exception at the first read)."""
    c = "Nests"
    ints = [None, [], [1], [2, 1], [3, 1, 2], [5, 4, 3, 2, 1], [1, 2, 3, 4, 5, 6, 7, 8],
            [9, 3, 7, 3, 1, 8, 2, 6, 4, 5, 0, 11, 10, 12], list(range(40, 0, -1))]
    calls = [dt.Call(c, "shell", "([II)J", (a, n)) for a, n in itertools.product(ints, [-1, 0, 1, 2, 5, 14, 40])]
    eight = [[3, 1, 4, 1, 5, 9, 2, 6], [1, 2], None]
    calls += [dt.Call(c, "cube", "([II)J", (a, n)) for a, n in itertools.product(eight, [-1, 0, 1, 2, 4])]
    return calls


def test_nests_behave_like_javacs(round_trip, java_home):
    orig, out = round_trip
    assert_behaves_like_original(java_home, orig, out, {}, _calls())
