"""A value ``v + c`` the reverter shares between an inner loop's start and an outer counter's step is not carried
to the back edge in a local of its own: the counter steps in place (ir/coalesce._step_in_place, issue 15: JAMA's
``LUDecomposition.solve``, ``for (k ...) for (i = k + 1; ...)``, had ``iadd; dup; istore t; istore i`` and at the
outer loop's bottom ``iload t; istore k`` for javac's ``iinc k, 1``: 4 bytes and three instructions more per
outer iteration).

The shapes come from javac's code through the full stage (every rewrite kept: the e-graph makes the inner
loop's ``k + 1`` and the outer step one node, which the round trip alone does not), read off the bytecode, and
the code run against javac's on the JVM (``-Xverify:all``); the cases the rewrite must leave alone (``v`` written on a path between, the copy reached
again without ``t`` computed again, ``t``'s block not dominating the copy) on hand-made IR."""
from __future__ import annotations

import itertools

import pytest

import difftest as dt
from support.fullstage import assert_behaves_like_original, listing, optimize_source
from peggy_jvm.ir.coalesce import _step_in_place
from peggy_jvm.ir.nodes import INT, Binary, Block, Cond, Const, Copy, Goto, If, IRMethod, Return, Var

SOURCE = r"""
public class Steps {
    int n;
    double[][] lu;
    // LUDecomposition.solve's nest
    void solve(double[][] x, int nx) {
        for (int k = 0; k < n; k++) {
            for (int i = k + 1; i < n; i++) {
                for (int j = 0; j < nx; j++) { x[i][j] -= x[k][j] * lu[i][k]; }
            }
        }
    }
    static double of(double[][] lu, double[][] x, int n, int nx) {
        Steps s = new Steps();
        s.n = n;
        s.lu = lu;
        s.solve(x, nx);
        return n > 0 && nx > 0 ? x[n - 1][nx - 1] : 0.0;
    }
    static long down(int[] a, int n) {
        long s = 0;
        for (int k = n - 1; k >= 0; k--) {
            for (int i = k - 1; i >= 0; i--) { s = s * 3 + (a[i] ^ a[k]); }
        }
        return s;
    }
}
"""


@pytest.fixture(scope="module")
def optimized(java_home, tmp_path_factory):
    """javac's class and its full stage, as (orig dir, out dir, report rows by name)."""
    with pytest.MonkeyPatch.context() as mp:
        return optimize_source(java_home, tmp_path_factory.mktemp("steps"), mp, "Steps", SOURCE)


def _ops(java_home, out, method: str) -> list[str]:
    return [mnemonic + (" " + args if mnemonic == "iinc" else "")
            for _, mnemonic, args in listing(java_home, out, "Steps", method)]


@pytest.mark.parametrize("method, step, loops", [
    pytest.param("solve", "1", 3, marks=pytest.mark.xfail(strict=True, reason=(
        "session 17's reverter joins (revert.plan_joins): the middle loop's test `n > i && nx > 0` and the exit "
        "test `n > i` after it share one read of `this.n`, kept in a fifth local (`getfield n; istore 5`): one "
        "istore more than the three counters' starts; every counter still steps by iinc"))),
    ("down", "-1", 2)])
def test_the_outer_counter_steps_in_place(optimized, java_home, method, step, loops):
    """Every counter of the nest steps by ``iinc`` (the outer one too), ``k + step`` is computed once (for
    the inner loop's start) and stored only there: one ``istore`` per counter (its start), and no local is copied
    into another (``iload; istore``)."""
    _, out, rows = optimized
    assert rows[method].status == "rewritten", rows[method].reason
    ops = _ops(java_home, out, method)
    iincs = [o for o in ops if o.startswith("iinc")]
    assert len(iincs) == loops and all(o.endswith(f", {step}") for o in iincs), ops
    assert len([o for o in ops if o.startswith("istore")]) == len(iincs), ops  # each counter's start, no more
    assert not any(a.startswith("iload") and b.startswith("istore") for a, b in zip(ops, ops[1:])), ops


def test_stepped_counters_behave_like_javacs(optimized, java_home):
    orig, out, rows = optimized
    mats = [None, [], [[1.5]], [[4.0, 1.0], [2.0, 3.0]], [[2.0, 1.0, 0.5], [1.0, 3.0, 2.0], [0.5, 2.0, 4.0]],
            [[1.0, 2.0], [3.0]]]
    calls = [dt.Call("Steps", "of", "([[D[[DII)D", (lu, x, n, nx))
              for lu, x, n, nx in itertools.product(mats[2:5], mats, [-1, 0, 1, 2, 3], [0, 1, 3])]
    arrays = [None, [], [7], [1, -2, 3], [5, 4, 3, 2, 1, 0, -1]]
    calls += [dt.Call("Steps", "down", "([II)J", (a, n)) for a, n in itertools.product(arrays, [-1, 0, 1, 2, 3, 7, 9])]
    assert_behaves_like_original(java_home, orig, out, rows, calls)


def _v(i: int) -> Var:
    return Var(i, INT, f"v{i}")


def _nest(variant: str) -> tuple[IRMethod, Block]:
    """``k = 0; s = 0; outer: if k >= n exit; t = k + 1; i = t; inner: if i >= n goto latch; s = s + k;
    i = i + 1; goto inner; latch: k = t; goto outer`` with ``n`` a parameter. ``variant``: "plain"; "written"
    (the inner loop's body also writes ``k``); "twice" (the latch loops on itself while ``i`` is not 0:
    ``k = t`` runs twice for one ``t``); "undominated" (the latch also reached from the entry, past ``t``'s
    block); "dead" (nothing reads ``k`` while ``t`` lives: merging them is better); "copied" (the inner body
    only copies ``k``: the same); "split" (block 2 also jumps straight to a second ``k = t`` when ``t`` is 100, a
    path on which nothing reads ``k``: neither copy may change). Returns the method and the latch."""
    n, k, t, i, s = _v(0), _v(1), _v(2), _v(3), _v(4)
    body = [Binary(i, "add.i", i, Const(INT, 1))]
    if variant == "copied":
        body.insert(0, Copy(s, k))
    elif variant != "dead":
        body.insert(0, Binary(s, "add.i", s, k))
    if variant == "written":
        body.append(Binary(k, "add.i", k, i))
    latch_end = If(Cond.NE, i, Const(INT, 0), 4, 1) if variant == "twice" else Goto(1)
    blocks = {
        0: Block(0, [Copy(k, Const(INT, 0)), Copy(s, Const(INT, 0))],
                 If(Cond.LT, n, Const(INT, 0), 4, 1) if variant == "undominated" else Goto(1)),
        1: Block(1, [], If(Cond.GE, k, n, 5, 2)),
        2: Block(2, [Binary(t, "add.i", k, Const(INT, 1)), Copy(i, t)], Goto(3)),
        3: Block(3, [], If(Cond.GE, i, n, 4, 6)),
        6: Block(6, body, Goto(3)),
        4: Block(4, [Copy(k, t)], latch_end),
        5: Block(5, [], Return(s)),
    }
    if variant == "split":
        blocks[2].terminator = If(Cond.EQ, t, Const(INT, 100), 7, 3)
        blocks[7] = Block(7, [Copy(k, t)], Goto(1))
    # "undominated" reads t where it may be unset (no verifier would pass it): the dominance test alone refuses
    return IRMethod("C", "m", "(I)I", True, [n], blocks, 0, variables=[k, t, i, s]), blocks[4]


def test_the_copy_of_a_shared_step_becomes_the_step():
    m, latch = _nest("plain")
    assert _step_in_place(m)
    (st,) = latch.stmts
    assert isinstance(st, Binary) and st.op == "add.i" and st.dst.id == 1 and st.a.id == 1 \
        and st.b == Const(INT, 1), latch.stmts


@pytest.mark.parametrize("variant", ["written", "twice", "undominated", "dead", "copied", "split"])
def test_a_copy_the_step_may_not_equal_is_left_alone(variant):
    """``k`` written between ``t``'s definition and the copy, the copy run twice for one ``t``, or reached
    without ``t``'s block: ``k + 1`` at the copy may differ from ``t``; ``k`` read nowhere while ``t`` lives, or
    only copied: the two become one variable later, stepped where ``t`` is computed (BenchKernels.crc32's and
    insertionSort's shorter shapes); one of two copies of the step not changeable: neither changes."""
    m, _ = _nest(variant)
    assert not _step_in_place(m)
    assert all(isinstance(b.stmts[-1], Copy) for b in m.blocks.values() if b.id in (4, 7)), m.blocks
