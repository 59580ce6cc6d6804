"""JAMA's round trip at javac's bytes: three shapes of ``CholeskyDecomposition.solve`` and
``EigenvalueDecomposition.orthes`` (``--stage peg``, and the round trip with loops rotated as ``--goal speed``
does), each checked against javac's code of the same purpose-written Java and run on the JVM against it.

- ``solve``: ``X[k][j] -= X[i][j] * L[k][i]`` with the row ``X[k]`` read twice in the IR. Lowering keeps it on
  the stack (``aaload; iload j; dup2``), but the row's variable was still given a slot, and a low one: ``astore_3;
  aload_3`` before each ``dup2`` (``ir.lower._drop_passing_stores`` drops it) and the column count the three
  loops test pushed to slot 7 (lowered again with the rows coloured last: ``_Lowerer.vanished``). JAMA's
  ``solve`` was 274 bytes against javac's 262.
- ``orth``: ``f = f / h`` after a loop summing ``f``, with ``h = h - ort[m] * g`` from before the row loop,
  read by the next inner loop. The reverter computed ``f / (h - ort[m] * g)`` in every iteration of that inner
  loop (the value reached through the first loop's ``eval`` was not taken as hoistable, nor as certainly computed
  by the loop reading it: ``revert.schedule.Schedule.hoistable``, ``must``, ``nested_thetas``).
- ``orth`` again: ``if (scale != 0.0) {...}`` at the end of a ``for (m ...; m++)`` body was written with the
  update ``m++`` at the end of both arms; the arm whose last statements are the other path's whole block now
  jumps to it (``revert.tidy._merge_equal_tails``), one ``iinc`` as javac's.
"""
from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path

import pytest

import difftest as dt
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.codecost import loop_depths
from peggy_jvm.pipeline import Stage, optimize_input
from support.fullstage import named_code, round_trip_rotated

SOURCE = """
public class RowOps {
    static double[][] solve(double[][] L, double[][] X, int n) {
        int nx = X[0].length;
        for (int k = 0; k < n; k++) {
            for (int j = 0; j < nx; j++) {
                for (int i = 0; i < k; i++) {
                    X[k][j] -= X[i][j] * L[k][i];
                }
                X[k][j] /= L[k][k];
            }
        }
        return X;
    }

    static double orth(double[][] H, double[] ort, int low, int high, int n) {
        double h = 0.0;
        for (int m = low + 1; m <= high - 1; m++) {
            double scale = 0.0;
            for (int i = m; i <= high; i++) {
                scale = scale + Math.abs(H[i][m - 1]);
            }
            if (scale != 0.0) {
                h = 0.0;
                for (int i = high; i >= m; i--) {
                    ort[i] = H[i][m - 1] / scale;
                    h += ort[i] * ort[i];
                }
                double g = Math.sqrt(h);
                if (ort[m] > 0) {
                    g = -g;
                }
                h = h - ort[m] * g;
                ort[m] = ort[m] - g;
                for (int j = m; j < n; j++) {
                    double f = 0.0;
                    for (int i = high; i >= m; i--) {
                        f += ort[i] * H[i][j];
                    }
                    f = f / h;
                    for (int i = m; i <= high; i++) {
                        H[i][j] -= f * ort[i];
                    }
                }
                ort[m] = scale * ort[m];
                H[m][m - 1] = scale * g;
            }
        }
        return h;
    }

    static double sum(double[][] a) {
        double t = 0.0;
        for (double[] row : a) {
            for (double v : row) {
                t = t * 31.0 + v;
            }
        }
        return t;
    }

    static double runSolve(double[][] L, double[][] X, int n) {
        return sum(solve(L, X, n));
    }

    static double runOrth(double[][] H, double[] ort, int low, int high, int n) {
        double t = orth(H, ort, low, high, n) + sum(H);
        for (double v : ort) {
            t = t * 17.0 + v;
        }
        return t;
    }
}
"""


@pytest.fixture(scope="module")
def built(java_home):
    root = Path(tempfile.mkdtemp(prefix="rowops-"))
    try:
        src, rotated = round_trip_rotated(java_home, root, "RowOps", SOURCE)
        _, report = optimize_input(src / "RowOps.class", root / "peg" / "RowOps.class", Stage.PEG, jobs=1)
        assert all(r.status != "fallback" for r in report.methods), [(r.name, r.reason) for r in report.methods]
        yield src, {"peg": root / "peg", "speed": rotated}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _code(classes: Path, method: str) -> list[tuple[int, int, str]]:
    return named_code(classes / "RowOps.class", [method])[method]


def _depths(classes: Path, method: str, opcode: int) -> list[int]:
    """The loop depth of each ``opcode`` instruction of ``method``, in order."""
    cf = read_class((classes / "RowOps.class").read_bytes())
    m = next(m for m in cf.methods if m.name == method)
    code = read_code(m.code_attribute().data, cf.pool)
    insns = read_instructions(code)
    return [d for ins, d in zip(insns, loop_depths(insns)) if ins.opcode == opcode]


def test_a_row_read_twice_stays_on_the_stack_as_javac_keeps_it(built):
    """javac's bytes exactly, under ``--stage peg``: no local for ``X[k]``, the column count in slot 3 (before:
    ``astore_3; aload_3`` before each ``dup2`` and ``iload 7`` for the column count, 12 bytes more)."""
    src, outs = built
    javac = [(opcode, arg) for _, opcode, arg in _code(src, "solve")]
    assert not any(opcode == op.ASTORE for opcode, _ in javac)
    assert [(opcode, arg) for _, opcode, arg in _code(outs["peg"], "solve")] == javac
    speed = _code(outs["speed"], "solve")
    assert not any(opcode == op.ASTORE for _, opcode, _ in speed), speed
    assert sum(1 for _, opcode, _ in speed if opcode == op.DUP2) == 2, speed


@pytest.mark.parametrize("lowering", ["peg", "speed"])
def test_an_invariant_read_through_a_loops_eval_leaves_the_inner_loop(built, lowering):
    """``f / h`` (and ``h - ort[m] * g``) are computed no deeper in the loops than javac computes them: before,
    ``f / (h - ort[m] * g)`` was computed in each iteration of the innermost loop (a ``ddiv`` at depth 3).
    The other ``ddiv`` (``H[i][m - 1] / scale``) is in a loop in javac's code too."""
    src, outs = built
    javac = _depths(src, "orth", op.DDIV)
    assert javac == [2, 2]  # ort[i] = H[i][m-1] / scale in an inner loop of m's; f / h in its row loop
    assert sorted(_depths(outs[lowering], "orth", op.DDIV)) == javac, lowering
    # and `h - ort[m] * g` before the row loop, once per `m` as javac's `h` (not once per row `j`)
    assert sorted(_depths(outs[lowering], "orth", op.DMUL)) == sorted(_depths(src, "orth", op.DMUL)), lowering


def test_an_arm_ending_as_the_other_path_jumps_to_it(built):
    """One ``iinc`` of the counter ``m`` as javac's (before: ``iinc; goto`` at the end of both arms of ``if
    (scale != 0.0)``)."""
    src, outs = built
    javac = _code(src, "orth")
    assert sum(1 for _, opcode, _ in javac if opcode == op.IINC) == 6  # m, j and four i loops
    for lowering, out in outs.items():
        new = _code(out, "orth")
        assert sum(1 for _, opcode, _ in new if opcode == op.IINC) == 6, (lowering, new)


def _calls() -> list[dt.Call]:
    rnd = random.Random(22)
    calls = []
    for n in (0, 1, 2, 3, 5):
        for cols in (1, 3):
            L = [[round(rnd.uniform(0.5, 3.0), 2) if i == k else round(rnd.uniform(-2, 2), 2) for i in range(n)]
                 for k in range(n)]
            X = [[round(rnd.uniform(-4, 4), 2) for _ in range(cols)] for _ in range(max(n, 1))]
            calls.append(dt.Call("RowOps", "runSolve", "([[D[[DI)D", (L, X, n)))
    for n in (1, 2, 3, 4, 6):
        for low, high in ((0, n - 1), (1, n - 1), (0, n // 2)):
            H = [[rnd.choice([0.0, 1.0, -2.5, round(rnd.uniform(-3, 3), 3)]) for _ in range(n)] for _ in range(n)]
            calls.append(dt.Call("RowOps", "runOrth", "([[D[DIII)D", (H, [0.0] * n, low, high, n)))
    zero = [[0.0] * 4 for _ in range(4)]  # scale == 0 everywhere: the arm without the reflection
    calls.append(dt.Call("RowOps", "runOrth", "([[D[DIII)D", (zero, [0.0] * 4, 0, 3, 4)))
    return calls


def test_the_round_trips_verify_and_behave_identically(built, java_home):
    src, outs = built
    calls = _calls()
    original = dt.run_jvm(src, calls, java_home=java_home, timeout_ms=3000)
    for lowering, out in outs.items():
        result = dt.compare(src, out, calls, java_home=java_home, timeout_ms=3000, original=original)
        assert result.mismatches == [], (lowering, result.report())
        assert result.compared == len(calls), lowering
