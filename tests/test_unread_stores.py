"""Under ``--goal speed`` a store into a slot nothing reads is not written (ir/lower._drop_unread_stores, issue
15): ``_dup2_pairs`` serves the second read of ``a[i]`` in ``a[i][j] -= e`` from the stack (``dup2`` of the
array and index), and ``_store_load_dups`` had already made the first ``astore n; aload n`` a ``dup; astore n``:
slot n was then written once per inner iteration and never read (``aaload; dup; astore 6; iload 5; dup2``).

javac's code through the round trip with loops rotated as ``--goal speed`` does, read off the bytecode (every
store's slot is loaded somewhere), and run against javac's on the JVM (``-Xverify:all``)."""
from __future__ import annotations

import itertools
import re

import pytest

import difftest as dt
from support.fullstage import assert_behaves_like_original, listing, round_trip_rotated

SOURCE = r"""
public class Unread {
    static double solve(double[][] a, int n, int nx) {
        for (int k = 0; k < n; k++) {
            for (int i = k + 1; i < n; i++) {
                for (int j = 0; j < nx; j++) { a[i][j] -= a[k][j] * a[i][k]; }
            }
        }
        return n > 0 && nx > 0 ? a[n - 1][nx - 1] : -1.0;
    }
    static int bump(int[][] c, int[] idx, int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) { c[idx[i]][j] += i ^ j; s += c[idx[i]][j]; }
        }
        return s;
    }
}
"""


@pytest.fixture(scope="module")
def round_trip(java_home, tmp_path_factory):
    return round_trip_rotated(java_home, tmp_path_factory.mktemp("unread"), "Unread", SOURCE)


@pytest.mark.parametrize("method", ["solve", "bump"])
def test_every_store_is_read(round_trip, java_home, method):
    _, out = round_trip
    code = listing(java_home, out, "Unread", method)
    access = re.compile(r"[ailfd](load|store)(?:_(\d))?$")
    stored: set[int] = set()
    loaded = {int(rest.split(",")[0]) for _, mn, rest in code if mn == "iinc"}
    for _, mn, rest in code:
        m = access.match(mn)
        if m:
            (stored if m.group(1) == "store" else loaded).add(int(m.group(2) or rest.split()[0]))
    assert stored and stored <= loaded, code


def test_the_stores_left_out_behave_like_javacs(round_trip, java_home):
    orig, out = round_trip
    mats = [None, [], [[1.5]], [[4.0, 1.0], [2.0, 3.0]], [[2.0, 1.0, 0.5], [1.0, 3.0, 2.0], [0.5, 2.0, 4.0]],
            [[1.0, 2.0], [3.0]]]
    calls = [dt.Call("Unread", "solve", "([[DII)D", (a, n, nx))
             for a, n, nx in itertools.product(mats, [-1, 0, 1, 2, 3, 4], [0, 1, 2, 3])]
    grids = [None, [[0, 1, 2], [3, 4, 5], [6, 7, 8]], [[1], [2]]]
    idx = [None, [0, 1, 2], [2, 2, 0], [5]]
    calls += [dt.Call("Unread", "bump", "([[I[II)I", (c, x, n))
              for c, x, n in itertools.product(grids, idx, [-1, 0, 1, 3])]
    assert_behaves_like_original(java_home, orig, out, {}, calls)
