"""A loop's paths that end in different effects share one latch, and a value kept in a local is computed right
after its read (the reverter's ``plan_latch`` and ``revert/order.py``).

Purpose-written Java in JAMA's shapes: ``band`` is ``LUDecomposition.getL``'s nest (an ``if``/``else if``/
``else`` whose arms each store, then ``j++``), ``clamp`` a ``continue`` on one path with a sum the other path
updates, ``update`` ``hqr2``'s row modification (``p = p + r * h[k+2][j]; h[k+2][j] = h[k+2][j] - p * z;``).
Before, the reverter wrote the increment and the back edge on every path (``band``: 4 ``iinc`` and 4 backward
jumps, javac 2 and 2) and computed ``p`` only where the store needed it, after the store's own reads, which the
lowering then kept in fresh locals (``update``: 14 loads and stores of doubles, javac 10). The rebuilt
code (``--stage peg``, ``--stage full`` and the round trip with loops rotated as ``--goal speed`` does) has
javac's counts, verifies (``-Xverify:all``) and returns what javac's code returns.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

import difftest as dt
from peggy_jvm.pipeline import Stage
from support.fullstage import method_listing, javap, optimize_stages, round_trip_rotated

SOURCE = """
import java.util.Arrays;

public class Latches {
    static void band(double[][] l, double[][] lu, int m, int n) {
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                if (i > j) {
                    l[i][j] = lu[i][j];
                } else if (i == j) {
                    l[i][j] = 1.0;
                } else {
                    l[i][j] = 0.0;
                }
            }
        }
    }

    static int clamp(int[] a, int n) {
        int s = 0;
        for (int k = 0; k < n; k++) {
            if (a[k] < 0) {
                a[k] = 0;
                continue;
            }
            a[k] = a[k] * 3;
            s += a[k];
        }
        return s;
    }

    static double update(double[][] h, int k, int n, boolean more, double q, double r, double z) {
        double p = 0.0;
        for (int j = 0; j < n; j++) {
            p = h[k][j] + q * h[k + 1][j];
            if (more) {
                p = p + r * h[k + 2][j];
                h[k + 2][j] = h[k + 2][j] - p * z;
            }
            h[k][j] = h[k][j] - p;
        }
        return p;
    }

    static double[][] matrix(int m, int n, int seed) {
        double[][] a = new double[m][n];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                a[i][j] = ((i * 31 + j * 17 + seed) % 23) - 11.5;
        return a;
    }

    static String runBand(int m, int n) {
        double[][] l = new double[Math.max(m, 0)][Math.max(n, 0)];
        band(l, matrix(Math.max(m, 0), Math.max(n, 0), 3), m, n);
        return Arrays.deepToString(l);
    }

    static String runClamp(int n, int seed) {
        int[] a = new int[Math.max(n, 0)];
        for (int i = 0; i < a.length; i++) a[i] = (i * 7 + seed) % 11 - 5;
        int s = clamp(a, n);
        return s + " " + Arrays.toString(a);
    }

    static String runUpdate(int k, int n, boolean more, double q) {
        double[][] h = matrix(k + 3, Math.max(n, 0), k);
        double p = update(h, k, n, more, q, 0.25, -1.5);
        return p + " " + Arrays.deepToString(h);
    }
}
"""
CALLS = [("runBand", "(II)Ljava/lang/String;", args) for args in ((0, 3), (3, 0), (1, 1), (3, 4), (5, 2), (4, 4))]
CALLS += [("runClamp", "(II)Ljava/lang/String;", args) for args in ((0, 0), (1, 4), (7, 0), (9, 3), (12, 8))]
CALLS += [("runUpdate", "(IIZD)Ljava/lang/String;", args)
          for args in ((0, 0, 1, 0.5), (0, 4, 1, 0.5), (1, 5, 0, -2.0), (2, 3, 1, 3.25), (1, 6, 1, float("nan")))]


@pytest.fixture(scope="module")
def built(java_home):
    root = Path(tempfile.mkdtemp(prefix="latches-"))
    try:
        src, outs = optimize_stages(java_home, root, "Latches", SOURCE)
        _, rotated = round_trip_rotated(java_home, root / "rotated", "Latches", SOURCE)
        yield src, outs, rotated
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _counts(java_home: Path, classes: Path, name: str) -> dict[str, int]:
    """Of method ``name``: its backward jumps, ``iinc``s, and loads and stores of doubles (javap's listing)."""
    lines = method_listing(javap(java_home, classes, "Latches"), name)
    out = {"back": 0, "iinc": 0, "dmove": 0}
    for pc, opcode, arg in lines:
        if (opcode == "goto" or opcode.startswith("if")) and arg.isdigit() and int(arg) < pc:
            out["back"] += 1
        if opcode == "iinc":
            out["iinc"] += 1
        if opcode.startswith(("dload", "dstore")):
            out["dmove"] += 1
    return out


def test_paths_of_an_iteration_share_one_latch(built, java_home):
    src, outs, _ = built
    peg, report = outs[Stage.PEG]
    assert report["band"].status == "rewritten", report["band"].reason
    assert _counts(java_home, src, "band") == {"back": 2, "iinc": 2, "dmove": 0}
    assert _counts(java_home, peg, "band") == {"back": 2, "iinc": 2, "dmove": 0}
    # the `continue` jumps to the increment; the other path's new sum goes straight into the sum's local
    assert _counts(java_home, src, "clamp")["iinc"] == 1
    assert _counts(java_home, peg, "clamp") == {"back": 1, "iinc": 1, "dmove": 0}


def test_a_kept_value_is_computed_after_its_read(built, java_home):
    src, outs, _ = built
    peg, _ = outs[Stage.PEG]
    javac = _counts(java_home, src, "update")
    assert javac == {"back": 1, "iinc": 1, "dmove": 10}
    assert _counts(java_home, peg, "update") == javac


def test_latched_code_verifies_and_behaves_identically(built, java_home):
    src, outs, rotated = built
    calls = [dt.Call("Latches", name, desc, args) for name, desc, args in CALLS]
    original = dt.run_jvm(src, calls, java_home=java_home, timeout_ms=3000)
    assert all(r.kind == "RET" for r in original), original
    trees = {stage.value: out for stage, (out, _) in outs.items()}
    trees["rotated"] = rotated
    for name, tree in trees.items():
        result = dt.compare(src, tree, calls, java_home=java_home, timeout_ms=3000, original=original)
        assert result.mismatches == [], (name, result.report())
        assert result.compared == len(calls), name
