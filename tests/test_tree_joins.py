"""A phi of a loop iteration's tree that several paths reach is written once (``revert.plan_tree_joins``).

Purpose-written Java in JAMA ``hqr2``'s shape: in a loop body, ``if (k != m) { p = ...; ...; if (x == 0.0)
continue; p = p / x; ... }`` and after it, reached from both arms, ``s = Math.sqrt(p * p + q * q + r * r); if (p
< 0) s = -s; if (s != 0) { if (k != m) H[k][k-1] = -s * x; else H[k][k-1] = -H[k][k-1]; ... }``. The code after
the ``if`` is one node of the PEG (reading ``p``, ``q``, ``r``, ``x`` as phis on ``k != m``), but a phi of the
iteration's tree: the reverter joined only the tree's leaves (the code after ``if (s != 0)``), so the square
root and the tests before the leaves were written once per arm (two ``Math.sqrt`` calls, 268 -> 324 bytes).
Joined, each arm computes its ``p``, ``q``, ``r``, ``x`` into the join's variables and jumps to one copy, as javac
writes it; the store under ``if (k != m)`` inside ``if (s != 0)`` is not run before the jump (it is not certain
to run) but tested again in the join. The rebuilt code (``--stage peg`` and the round trip with loops rotated as
``--goal speed`` does) calls ``Math.sqrt`` once, as javac's, verifies (``-Xverify:all``) and returns what javac's
code returns, also where ``s == 0`` (the store must not happen) and where ``x == 0`` (``continue``).

``rows`` is ``hqr2``'s row and column modification: ``if (notlast)`` in two loops on ``boolean notlast = k !=
n - 1``, a flag tested by its own condition (``revert._Emitter.flag_test``) rather than computed again into 1
or 0 in each loop and tested. ``span`` is a short-circuit test in a loop (jsoup
``CharacterReader.consumeLetterSequence``'s shape): a join inside a join keeps the phis the outer one settled.
"""
from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path

import pytest

import difftest as dt
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.reader import read_class, read_code
from peggy_jvm.pipeline import Stage, optimize_input
from support.fullstage import named_code, round_trip_rotated

SOURCE = """
public class TreeJoins {
    static double step(double[][] h, int m, int n, double p, double q, double r) {
        double x = 0, s;
        for (int k = m; k <= n - 1; k++) {
            boolean notlast = (k != n - 1);
            if (k != m) {
                p = h[k][k - 1];
                q = h[k + 1][k - 1];
                r = (notlast ? h[k + 2][k - 1] : 0.0);
                x = Math.abs(p) + Math.abs(q) + Math.abs(r);
                if (x == 0.0) {
                    continue;
                }
                p = p / x;
                q = q / x;
                r = r / x;
            }
            s = Math.sqrt(p * p + q * q + r * r);
            if (p < 0) {
                s = -s;
            }
            if (s != 0) {
                if (k != m) {
                    h[k][k - 1] = -s * x;
                } else {
                    h[k][k - 1] = -h[k][k - 1];
                }
                p = p + s;
                x = p / s;
                h[k][k] += x + q / s + r / s;
            }
        }
        return p + q + r + x;
    }

    static double rows(double[][] h, int k, int n, double x, double y, double z, double q, double r) {
        boolean notlast = (k != n - 1);
        double p = 0.0;
        for (int j = k; j < n; j++) {
            p = h[k][j] + q * h[k + 1][j];
            if (notlast) {
                p = p + r * h[k + 2][j];
                h[k + 2][j] = h[k + 2][j] - p * z;
            }
            h[k][j] = h[k][j] - p * x;
        }
        for (int i = 0; i <= Math.min(n, k + 3); i++) {
            p = x * h[i][k] + y * h[i][k + 1];
            if (notlast) {
                p = p + z * h[i][k + 2];
            }
            h[i][k] = h[i][k] - p;
        }
        return p;
    }

    static int span(char[] buf, int pos, int end) {
        int start = pos;
        while (pos < end) {
            char c = buf[pos];
            if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || Character.isDigit(c)) {
                pos++;
            } else {
                break;
            }
        }
        return pos - start;
    }

    static double run(double[][] h, int m, int n, double p, double q, double r) {
        double t = step(h, m, n, p, q, r);
        for (double[] row : h) {
            for (double v : row) {
                t = t * 31.0 + v;
            }
        }
        return t;
    }
}
"""
DESC = "([[DIIDDD)D"
SQRT = "sqrt"


@pytest.fixture(scope="module")
def built(java_home):
    root = Path(tempfile.mkdtemp(prefix="treejoins-"))
    try:
        src, rotated = round_trip_rotated(java_home, root, "TreeJoins", SOURCE)
        _, report = optimize_input(src / "TreeJoins.class", root / "peg" / "TreeJoins.class", Stage.PEG, jobs=1)
        yield src, {"peg": root / "peg", "speed": rotated}, {r.name: r for r in report.methods}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _step(classes: Path, method: str = "step") -> list[tuple[int, int, str]]:
    return named_code(classes / "TreeJoins.class", [method])[method]


def _sqrt_calls(code: list[tuple[int, int, str]]) -> int:
    return sum(1 for _, opcode, name in code if opcode == op.INVOKESTATIC and name == SQRT)


def _length(classes: Path, method: str = "step") -> int:
    cf = read_class((classes / "TreeJoins.class").read_bytes())
    m = next(m for m in cf.methods if m.name == method)
    return len(read_code(m.code_attribute().data, cf.pool).code)


def _flags_computed(code: list[tuple[int, int, str]]) -> int:
    """How many times the code computes a flag into 1 or 0 (``iconst_1; goto; iconst_0``)."""
    ops = [opcode for _, opcode, _ in code]
    return sum(1 for i in range(len(ops) - 2)
               if ops[i] == op.ICONST_1 and ops[i + 1] == op.GOTO and ops[i + 2] == op.ICONST_0)


@pytest.mark.parametrize("lowering", ["peg", "speed"])
def test_the_code_after_the_branch_is_written_once(built, lowering):
    src, outs, _ = built
    orig, new = _step(src), _step(outs[lowering])
    assert _sqrt_calls(orig) == 1
    # before: the square root and the tests before `if (s != 0)` once per arm of `k != m` (2 calls, 324 bytes)
    assert _sqrt_calls(new) == 1, (lowering, new)
    assert _length(outs[lowering]) <= _length(src) * 1.05, lowering


@pytest.mark.parametrize("lowering", ["peg", "speed"])
def test_a_flag_is_tested_by_its_condition(built, lowering):
    """``if (notlast)`` on ``boolean notlast = k != n - 1``, in two loops: javac computes the flag once into a
    local; the PEG has ``phi(k == n - 1, 0, 1) == 0``, which the reverter wrote as the flag computed again in
    each loop (1 or 0 by a branch, then tested: 206 bytes). Tested by its condition instead, the method is no
    longer than javac's and computes no flag."""
    src, outs, _ = built
    assert _flags_computed(_step(src, "rows")) == 1
    assert _flags_computed(_step(outs[lowering], "rows")) == 0, lowering
    assert _length(outs[lowering], "rows") <= _length(src, "rows"), lowering


@pytest.mark.parametrize("lowering", ["peg", "speed"])
def test_a_join_inside_a_join_knows_what_it_knew(built, lowering):
    """``(c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || Character.isDigit(c)`` in a loop: the second
    test and the call are phis of the iteration's tree that several paths reach, joined one inside the other;
    the increment's sigma is a phi on the first tests, which every path to the call's join decides alike, but
    only as the outer join knew it (its paths' facts differ). Taking the phis settled on every path into a join
    (and following them in the tree), the code tests ``c >= '0'`` once, as javac; before, the join tested the
    first two conditions again after the call (74 bytes, javac's 58)."""
    src, outs, _ = built
    for code in (_step(src, "span"), _step(outs[lowering], "span")):
        assert sum(1 for _, opcode, arg in code if opcode == op.BIPUSH and arg == "48") == 1, lowering
    assert _length(outs[lowering], "span") <= _length(src, "span"), lowering


def _calls() -> list[dt.Call]:
    rnd = random.Random(15)
    calls = []
    for _ in range(60):
        n = rnd.randint(1, 6)
        h = [[rnd.choice([0.0, 0.0, 1.5, -2.0, 3.25, round(rnd.uniform(-5, 5), 3)]) for _ in range(n + 2)]
             for _ in range(n + 2)]
        calls.append(dt.Call("TreeJoins", "run", DESC, (h, rnd.randint(0, 2), n, rnd.choice([0.0, 1.0, -2.0]),
                                                        rnd.choice([0.0, 0.5]), rnd.choice([0.0, 2.0]))))
    # s == 0 on the first iteration (k == m, p = q = r = 0): `h[m][m-1]` must stay as it is; x == 0 later
    zero = [[0.0] * 5 for _ in range(5)]
    calls += [dt.Call("TreeJoins", "run", DESC, ([row[:] for row in zero], m, 4, 0.0, 0.0, 0.0)) for m in (1, 2)]
    calls += [dt.Call("TreeJoins", "run", DESC, ([[1.0, -2.0, 0.5, 3.0, 0.0]] * 5, 1, 4, 0.0, 0.0, 0.0))]
    for text in ("09af", "0123456789abcdefg", "x12", "\u0663\u0664z", "ff0", ""):
        for pos in (0, 1):
            calls.append(dt.Call("TreeJoins", "span", "([CII)I", ([ord(ch) for ch in text], min(pos, len(text)), len(text))))
    for k, n in ((0, 4), (2, 3), (3, 4), (1, 1), (0, 0)):
        h = [[round(rnd.uniform(-3, 3), 2) for _ in range(6)] for _ in range(6)]
        calls.append(dt.Call("TreeJoins", "rows", "([[DIIDDDDD)D", (h, k, n, 0.5, -1.5, 2.0, 0.25, 3.0)))
    return calls


def test_joined_code_verifies_and_behaves_identically(built, java_home):
    src, outs, rows = built
    for name, row in rows.items():
        assert row.status == "rewritten", (name, row.reason)
    calls = _calls()
    original = dt.run_jvm(src, calls, java_home=java_home, timeout_ms=3000)
    for lowering, out in outs.items():
        result = dt.compare(src, out, calls, java_home=java_home, timeout_ms=3000, original=original)
        assert result.mismatches == [], (lowering, result.report())
        assert result.compared == len(calls), lowering


def test_a_refused_tree_join_keeps_the_leaves_joins():
    """A join of a phi below an iteration tree's root that the reverter refuses (its continuation reads an effect
    only some paths ran) must not cost the method its other joins: it is reverted again joining only the
    leaves, before it is reverted with no join at all. commons-lang3 ``RandomStringUtils.random``'s loop
    (javac 428 bytes) was written three times over without joins (1,561 bytes) when its tree join was refused;
    the leaves' joins give 489, as before tree joins."""
    import sys
    import zipfile
    from peggy_jvm.classfile.hierarchy import ClassHierarchy
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.ir.lower import lower_method
    from peggy_jvm.peg.build import build_peg
    from peggy_jvm.revert.revert import revert_peg
    from support.corpus import cache_dir
    jar = cache_dir() / "jars" / "commons-lang3.jar"
    if not jar.exists():
        pytest.skip("commons-lang3.jar is not in the corpus cache (scripts/fetch_corpus.sh)")
    with zipfile.ZipFile(jar) as z:
        cf = read_class(z.read("org/apache/commons/lang3/RandomStringUtils.class"))
    m = next(m for m in cf.methods
             if m.name == "random" and m.descriptor == "(IIIZZ[CLjava/util/Random;)Ljava/lang/String;")
    hierarchy = ClassHierarchy([jar])
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(50_000)
    try:
        ir = lift_method(cf, m, hierarchy)
        new = lower_method(cf, m, revert_peg(build_peg(ir), ir), hierarchy, None)
    finally:
        sys.setrecursionlimit(old)
    javac = len(read_code(m.code_attribute().data, cf.pool).code)
    assert int.from_bytes(new[4:8], "big") <= 1.2 * javac
