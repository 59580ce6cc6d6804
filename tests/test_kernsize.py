"""Rewritten code no larger than javac's where speed does not pay for the bytes (issue 15, `kernsize`): javac's
methods through the round trip (lift, PEG, revert with ``rotate_loops`` as ``--goal speed`` does, lower),
the shapes read off the bytecode, and the code run against javac's on the JVM (``-Xverify:all``) with loops that
run zero times, once, many times, and that throw at their first or a later iteration.

The shapes:

* a rotated loop's entry test of a counter just set to 0 (``0 < n``) is a test of ``n`` alone: ``iload; ifle``
  (ir/lower.py), and the prover still sees the loop top-tested (validate/loopshape.py);
* an invariant the reverter hoisted out of loops, one instruction on parameters the method never writes, read
  only outside the innermost loops, is computed where it is read as javac does (``iload; i2d``, no local:
  ir/coalesce.recompute_invariants); read in the innermost loop it stays hoisted;
* ``store n; load n`` (n > 3) of rebuilt code is ``dup; store n`` for ints and references, but for an ``iload``
  the interpreter fuses with the next load (the end-to-end shape: test_backend's relax);
* the prover's view shares a loop's tests only through variables that hold the same value on both paths;
* (session 12) nested loops' entry tests an enclosing loop's first test decides go, and the prover's view
  reads that test at its first evaluation (ir/known.py); a second loop over the same bound is entered with no
  test (the first one's entry test threaded past it, revert/tidy.py), the prover's view rejoining the arm
  (validate/loopshape.py); an accumulator loaded under a value ``dup2``ed for two uses (ir/lower.py)."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import difftest as dt
from support.fullstage import assert_behaves_like_original, optimize_source, round_trip_rotated
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.assembler import Insn
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.ir import lower
from peggy_jvm.ir.coalesce import recompute_invariants
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.revert import tidy
from peggy_jvm.ir.nodes import (DOUBLE, INT, Binary, Block, Cond, Const, Copy, Goto, If, IRMethod, Return, Unary,
                                Var)
from peggy_jvm.validate.loopshape import top_tested

SOURCE = r"""
public class Kern {
    static long cube(int[] a, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                for (int k = 0; k < n; k++) { s += a[k] ^ (i + j); }
            }
        }
        return s;
    }
    static double solve(double[][] l, double[] b, int n) {
        double[] x = new double[n];
        double sum = 0.0;
        for (int i = 0; i < n; i++) {
            double s = b[i];
            for (int j = 0; j < i; j++) { s -= l[i][j] * x[j]; }
            x[i] = s / (l[i][i] + n);
            sum += x[i];
        }
        return sum;
    }
    static double scale(double[] a, int n) { double s = 0; for (int i = 0; i < a.length; i++) { s += a[i] * n; } return s; }
    static int relax(int[] w, int n) {
        int best = 0;
        for (int i = 0; i < n; i++) {
            int through = w[i] + w[n - 1 - i];
            if (through > 0) { best += through; }
        }
        return best;
    }
}
"""
_JUMPS = (op.Operand.BRANCH2, op.Operand.BRANCH4)


@pytest.fixture(scope="module")
def round_trip(java_home, tmp_path_factory):
    """javac's class and its round trip with loops rotated, as (orig dir, out dir)."""
    return round_trip_rotated(java_home, tmp_path_factory.mktemp("kernsize"), "Kern", SOURCE)


@pytest.fixture(scope="module")
def outermost_rotated(java_home, tmp_path_factory):
    """The round trip with an outermost loop holding others left tested at its bottom and entered by a goto to
    that test (tidy.OUTERMOST_AT_THE_TOP off): the nests ecj writes, which the prover must read too; the out
    dir."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tidy, "OUTERMOST_AT_THE_TOP", False)
        return round_trip_rotated(java_home, tmp_path_factory.mktemp("kernsize-ecj"), "Kern", SOURCE)[1]


def _insns(classes: Path, name: str, cls: str = "Kern"):
    cf = read_class((classes / f"{cls}.class").read_bytes())
    m = next(m for m in cf.methods if m.name == name)
    return list(read_instructions(read_code(m.code_attribute().data, cf.pool)))


def _code(classes: Path, name: str, cls: str = "Kern") -> list[tuple[int, int, int | None]]:
    """(offset, opcode, branch target or None) of ``cls.name``."""
    return [(i.offset, i.opcode, i.arg if op.OPCODES[i.opcode].operand in _JUMPS else None)
            for i in _insns(classes, name, cls)]


def _loops(code) -> list[tuple[int, int]]:
    """(first, last offset) of each loop: a backward jump's target up to the jump, outermost first."""
    return sorted((t, off) for off, _, t in code if t is not None and t <= off)


def test_nested_entry_tests_an_enclosing_loops_test_decides_go(round_trip, outermost_rotated):
    """cube's three loops over ``n``: the outermost loop's test ``i < n`` (first evaluated as ``0 < n``) decides
    the nested loops' own ``0 < n`` (``n`` is not written in the loops: ir/known.py through the loop headers):
    they are entered with no test at all, not ``iload_1; ifle`` each (javac's code tests each at its top and
    jumps back with a goto). The outermost loop, holding them, is tested at its top (its one goto jumps back to
    that test: tidy._middle_loops_tested_at_the_top); in ecj's shape (entered by a goto to its bottom test) its
    bottom test decides them the same way."""
    _, out = round_trip
    code = _code(out, "cube")
    ops = [o for _, o, _ in code]
    assert len(_loops(code)) == 3 and ops.count(op.GOTO) == 1 and op.IFLE not in ops, code
    (goto, top), = [(off, t) for off, o, t in code if o == op.GOTO]
    assert (top, goto) == _loops(code)[0], code  # the outer loop's back edge, to its test
    code = _code(outermost_rotated, "cube")
    ops = [o for _, o, _ in code]
    assert len(_loops(code)) == 3 and ops.count(op.GOTO) == 1 and op.IFLE not in ops, code
    (goto, bottom), = [(off, t) for off, o, t in code if o == op.GOTO]
    assert goto < _loops(code)[0][0] and bottom > _loops(code)[0][0], code  # into the outer loop's bottom test


def test_the_prover_reads_the_first_test_of_a_loop_entered_at_its_bottom(outermost_rotated):
    """The prover's view of cube in ecj's shape puts the nested loops' entry tests back (validate/loopshape.py):
    it finds ``n > 0`` in the outer loop's bottom test as first evaluated from the method's start, ``i = 0;
    goto T`` (ir/known._first_evaluation), and ``n`` is written nowhere in the loops."""
    out = outermost_rotated
    cf = read_class((out / "Kern.class").read_bytes())
    ir = lift_method(cf, next(m for m in cf.methods if m.name == "cube"), None)
    before = len(ir.blocks)
    assert top_tested(ir)
    ifs = [b for b in ir.blocks.values() if isinstance(b.terminator, If)]
    assert len(ir.blocks) > before and len(ifs) >= 3


SWEEPS = r"""
public class Sweeps {
    static double sweeps(double[] a, int n) {
        double[] b = new double[n];
        for (int t = 0; t < 3; t++) {
            for (int i = 1; i < n - 1; i++) { b[i] = 0.5 * (a[i - 1] + a[i] + a[i + 1]); }
            for (int i = 1; i < n - 1; i++) { a[i] = 0.5 * (b[i - 1] + b[i] + b[i + 1]); }
        }
        double s = 0.0;
        for (int i = 0; i < n; i++) { s += a[i]; }
        return s;
    }
}
"""


@pytest.fixture(scope="module")
def sweeps(java_home, tmp_path_factory):
    """BenchKernels.jacobi1d's shape through the full stage (``n - 1`` hoisted and shared by both inner loops,
    self-check on): (orig dir, out dir, report rows)."""
    with pytest.MonkeyPatch.context() as mp:
        return optimize_source(java_home, tmp_path_factory.mktemp("sweeps"), mp, "Sweeps", SWEEPS)


def test_a_second_loop_over_the_same_bound_is_entered_without_a_test(sweeps):
    """The first inner loop's entry test ``n - 1 <= 1`` jumps past both inner loops (revert/tidy.
    _thread_decided_entries: the second one's test decides the same on that arm) and the second is entered
    from the first one's exit, where that test decided it (ir/known.py through the first loop's header): one
    entry test for the two loops, no jump into the second, and the self-check proved it."""
    _, out, rows = sweeps
    assert rows["sweeps"].status == "rewritten", rows["sweeps"].reason
    code = _code(out, "sweeps", "Sweeps")
    loops = _loops(code)
    outer, first, second = loops[0], loops[1], loops[2]
    assert outer[0] <= first[0] < first[1] < second[0] < second[1] <= outer[1], code
    forward = [(off, t) for off, o, t in code if t is not None and t > off and o != op.GOTO]
    inside = [(off, t) for off, t in forward if outer[0] <= off < outer[1]]
    (test, past), = inside  # the first loop's entry test, jumping past the second loop
    assert test < first[0] and past > second[1], code


def test_the_second_loop_behaves_like_javacs_and_the_prover_rejoins_the_threaded_arm(sweeps, java_home):
    """The prover's view of the rewrite (validate/loopshape._rejoin_threaded_arms) sends the arm that skips
    both loops through the second loop's entry again, so every loop is tested at its top as javac wrote it;
    and the code runs as javac's: zero-trip (n <= 2), one-trip, a null or short array (thrown at the first
    or a later iteration)."""
    orig, out, rows = sweeps
    cf = read_class((out / "Sweeps.class").read_bytes())
    ir = lift_method(cf, next(m for m in cf.methods if m.name == "sweeps"), None)
    assert top_tested(ir)
    # the outer loop's step (t++) is reached from the second loop's top test alone, as in javac's code
    outer = next(b.terminator.a for b in ir.blocks.values() if isinstance(b.terminator, If)
                 and b.terminator.b == Const(INT, 3))
    step, = [b.id for b in ir.blocks.values()
             if any(isinstance(st, Binary) and st.dst is outer for st in b.stmts)]
    into = [b.id for b in ir.blocks.values() if step in b.successors()]
    assert len(into) == 1 and isinstance(ir.blocks[into[0]].terminator, If), into
    arrays = [None, [], [1.5], [2.0, -1.0], [2.0, -1.0, 0.5], [1.0, 2.0, 3.0, 4.0, 5.0]]
    calls = [dt.Call("Sweeps", "sweeps", "([DI)D", (a, n)) for a, n in itertools.product(arrays, [-1, 0, 1, 2, 3, 4, 5, 7])]
    assert_behaves_like_original(java_home, orig, out, rows, calls)


def _nest(reader_depth: int, conv: str = "i2d", readers: int = 1) -> tuple[IRMethod, Block]:
    """``t = conv n`` before two nested loops, read by ``readers`` statements in the outer loop's body after the
    inner loop (``reader_depth`` 1) or in the inner loop's body (2); the method and the block defining ``t``."""
    n, i, j, s = _v(1), _v(2), _v(3), Var(4, DOUBLE, "s")
    t = Var(5, DOUBLE if conv == "i2d" else INT, "t")
    conv_st = Unary(t, "i2d", n) if conv == "i2d" else Binary(t, "div.i", n, Const(INT, 3))
    reads = [Binary(s, "add.d", s, t) if conv == "i2d" else Binary(j, "add.i", j, t) for _ in range(readers)]
    blocks = {
        0: Block(0, [conv_st, Copy(i, Const(INT, 0)), Copy(s, Const(DOUBLE, 0.0))], Goto(1)),
        1: Block(1, [], If(Cond.LT, i, n, 2, 5)),  # the outer loop
        2: Block(2, [Copy(j, Const(INT, 0))], Goto(3)),
        3: Block(3, [], If(Cond.LT, j, i, 4, 6)),  # the inner loop
        4: Block(4, [*(reads if reader_depth == 2 else []), Binary(j, "add.i", j, Const(INT, 1))], Goto(3)),
        6: Block(6, [*(reads if reader_depth == 1 else []), Binary(i, "add.i", i, Const(INT, 1))], Goto(1)),
        5: Block(5, [], Return(s)),
    }
    return IRMethod("Kern", "t", "(I)D", True, [n], blocks, 0, variables=[n, i, j, s, t]), blocks[0]


def test_an_invariant_read_outside_the_innermost_loop_is_recomputed():
    """``(double) n`` hoisted before two loops and read once per outer iteration (trisolv's, as the full stage
    extracts it) is computed where it is read (``iload; i2d``, javac's bytes, no local); read in the innermost
    loop, or twice where recomputing costs more bytes than a local (``n / 3``), it stays where it is."""
    m, b0 = _nest(1)
    assert recompute_invariants(m)
    assert not any(isinstance(st, Unary) for st in b0.stmts)
    conv, add = m.blocks[6].stmts[:2]
    assert isinstance(conv, Unary) and conv.op == "i2d" and conv.a.id == 1 and add.b is conv.dst
    for kept in (_nest(2), _nest(1, "div", readers=2)):
        m, b0 = kept
        before = list(b0.stmts)
        assert not recompute_invariants(m) and b0.stmts == before
    m, b0 = _nest(1, "div")  # n / 3 read once: recomputed (a division by a constant other than 0 cannot throw)
    assert recompute_invariants(m) and not any(isinstance(st, Binary) for st in b0.stmts)


def test_an_invariant_read_in_the_innermost_loop_stays_hoisted(round_trip):
    """scale: ``(double) n`` is read in its only loop, where the method spends its time: computed once before the
    loop and loaded in it (javac converts it every iteration)."""
    _, out = round_trip
    code = _code(out, "scale")
    (lo, hi), = _loops(code)
    conv = [off for off, o, _ in code if o == op.I2D]
    assert len(conv) == 1 and conv[0] < lo, code


def test_a_store_and_load_become_dup_and_store_where_it_pays_and_runs_as_fast():
    """``store n; load n`` under ``--goal speed``: ``dup; store n`` for an int or a reference in a slot above 3, but
    not for a float (the interpreter stalls on its ``dup``) nor a long (the prover's loop view), not below slot
    4 (no byte saved), and not where the ``iload`` would be fused with the next ``iload`` or ``caload``
    (insertionSort's ``istore 5; iload 5; iload 4``); under ``--goal size`` every one."""
    def run(*insns, for_size=False):
        items = [Insn(o, a) for o, a in insns]
        lower._store_load_dups(items, {}, for_size)
        return [(x.opcode, x.arg) for x in items]

    assert run((op.ISTORE, 5), (op.ILOAD, 5), (op.IFLE, 0)) == [(op.DUP, 0), (op.ISTORE, 5), (op.IFLE, 0)]
    assert run((op.ASTORE, 6), (op.ALOAD, 6), (op.ALOAD, 4)) == [(op.DUP, 0), (op.ASTORE, 6), (op.ALOAD, 4)]
    assert run((op.ISTORE, 5), (op.ILOAD, 5), (op.ILOAD, 2)) == [(op.DUP, 0), (op.ISTORE, 5), (op.ILOAD, 2)]
    for kept in [((op.ISTORE, 5), (op.ILOAD, 5), (op.ILOAD, 4)), ((op.ISTORE, 5), (op.ILOAD, 5), (op.CALOAD, 0)),
                 ((op.FSTORE, 5), (op.FLOAD, 5), (op.FNEG, 0)), ((op.ISTORE, 2), (op.ILOAD, 2), (op.IFLE, 0)),
                 ((op.LSTORE, 6), (op.LLOAD, 6), (op.LLOAD, 10))]:
        assert run(*kept) == list(kept)
        dup = op.DUP2 if kept[0][0] == op.LSTORE else op.DUP
        assert run(*kept, for_size=True)[:2] == [(dup, 0), kept[0]]


TWICE = r"""
public class Twice {
    static double twice(double[] x, double[] y, int n) {
        double s = 0.0;
        for (int r = 0; r < 3; r++) {
            for (int i = 0; i < n; i++) { s += x[i] * y[i] + (x[i] * y[i]) * 0.5 + r; }
        }
        return s;
    }
}
"""


def test_an_accumulator_is_loaded_under_a_value_computed_for_two_uses(java_home, tmp_path):
    """BenchKernels.redundantProduct through the full stage: ``p = x[i] * y[i]`` computed once and read twice,
    ``s += p + p * 0.5 + r``: ``s`` is loaded before ``p``'s code and ``p`` ``dup2``ed on the stack (javac's tree
    order), not stored into a local and loaded back above ``s`` (``dstore 7; dload_3; dload 7; dup2``, 4 bytes
    more): the loop's only ``dstore`` is the accumulator's. Same results as javac's code, zero-trip, one-trip,
    null and short arrays."""
    with pytest.MonkeyPatch.context() as mp:
        orig, out, rows = optimize_source(java_home, tmp_path, mp, "Twice", TWICE)
    assert rows["twice"].status == "rewritten", rows["twice"].reason
    code = _code(out, "twice", "Twice")
    lo, hi = _loops(code)[-1]
    body = [op.SHORT_FORMS.get(o, (o, None))[0] for off, o, _ in code if lo <= off <= hi]
    assert body.count(op.DSTORE) == 1 and body.count(op.DUP2) == 1, code
    assert body[:2] == [op.DLOAD, op.ALOAD], code  # s, then x[i] * y[i]
    dbls = [None, [], [1.5], [2.0, -1.0, 0.5]]
    calls = [dt.Call("Twice", "twice", "([D[DI)D", (a, b, n))
             for a, b, n in itertools.product(dbls, [None, [1.0], [3.0, -2.0, 0.25]], [-1, 0, 1, 2, 3])]
    assert_behaves_like_original(java_home, orig, out, rows, calls)


def _calls() -> list[dt.Call]:
    """Zero-trip (n <= 0), one-trip and longer loops; null and short arrays (an index out of bounds at the first
    or a later iteration), null rows."""
    c = "Kern"
    ints = [None, [], [0], [5, -3], [3, 1, 4], [1, 2, 3, 4, 5]]
    ns = [-1, 0, 1, 2, 3, 5]
    calls = [dt.Call(c, "cube", "([II)J", (a, n)) for a, n in itertools.product(ints, ns)]
    calls += [dt.Call(c, "relax", "([II)I", (a, n)) for a, n in itertools.product(ints, ns)]
    dbls = [None, [], [1.5], [2.0, -1.0, 0.5]]
    calls += [dt.Call(c, "scale", "([DI)D", (a, n)) for a, n in itertools.product(dbls, ns)]
    rows = [None, [], [[1.0]], [[2.0, 0.0], [1.0, 3.0]], [[2.0, 0.0], None], [[4.0, 0, 0], [1.0, 5.0, 0], [2.0, 1.0, 6.0]]]
    calls += [dt.Call(c, "solve", "([[D[DI)D", (m, b, n))
              for m, b, n in itertools.product(rows, [None, [1.0, 2.0], [1.0, 2.0, 3.0]], [-1, 0, 1, 2, 3])]
    return calls


def test_the_round_trip_behaves_like_javacs_code(round_trip, java_home):
    orig, out = round_trip  # no method fell back (round_trip_rotated)
    assert_behaves_like_original(java_home, orig, out, {}, _calls())


def _v(k: int) -> Var:
    return Var(k, INT, f"v{k}")


def test_the_prover_shares_a_test_only_through_a_variable_both_paths_hold():
    """A bottom-tested loop whose two tests read different variables that one local holds on both paths
    (``l4 = l3; if l3 < n`` entering, ``l4 = l6; if l6 < n`` at the bottom: shellSort's inner loop written with
    ``dup; istore``) is shared as a test of that local (``if l4 < n``), never of one path's own variable: from
    the entry, ``l6`` holds something else."""
    n, l3, l4, l6 = _v(1), _v(3), _v(4), _v(6)
    blocks = {
        0: Block(0, [Copy(l3, n), Copy(l6, n)], Goto(1)),
        1: Block(1, [Copy(l4, l3)], If(Cond.LT, l3, n, 4, 2)),  # the entry test
        2: Block(2, [Copy(l6, l4)], Goto(3)),  # the body
        3: Block(3, [Copy(l4, l6)], If(Cond.LT, l6, n, 4, 2)),  # the bottom test
        4: Block(4, [], Return(l4)),
    }
    m = IRMethod("Kern", "t", "(I)I", True, [n], blocks, 0, variables=[n, l3, l4, l6])
    assert top_tested(m)
    shared = [b for b in m.blocks.values() if b.id > 4]
    assert len(shared) == 1 and isinstance(shared[0].terminator, If)
    t = shared[0].terminator
    assert (t.a, t.b) == (l4, n), t
    assert all(isinstance(m.blocks[k].terminator, Goto) and m.blocks[k].terminator.target == shared[0].id
               for k in (1, 3))


def _preds(blocks: dict[int, Block]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for b in blocks.values():
        for t in dict.fromkeys(b.successors()):
            out.setdefault(t, []).append(b.id)
    return out


def _two_loops(write_bound_in_first: bool = False) -> dict[int, Block]:
    """jacobi1d's inner loops once threaded: ``m = n - 1; i = 1; if m <= 1 goto 5`` (B0), the first loop B1
    (``i++; if i < m goto B1``), ``j = 1`` (B2) and the second loop's entry test ``1 < m`` (B3), its body B4."""
    n, m, i, j = _v(1), _v(2), _v(3), _v(4)
    step = [Binary(i, "add.i", i, Const(INT, 1))] + ([Binary(m, "sub.i", m, Const(INT, 1))]
                                                     if write_bound_in_first else [])
    return {
        0: Block(0, [Binary(m, "sub.i", n, Const(INT, 1)), Copy(i, Const(INT, 1))], If(Cond.LE, m, Const(INT, 1), 5, 1)),
        1: Block(1, step, If(Cond.LT, i, m, 1, 2)),
        2: Block(2, [Copy(j, Const(INT, 1))], Goto(3)),
        3: Block(3, [], If(Cond.LT, Const(INT, 1), m, 4, 5)),
        4: Block(4, [Binary(j, "add.i", j, Const(INT, 1))], If(Cond.LT, j, m, 4, 5)),
        5: Block(5, [], Return(None)),
    }


def test_an_entry_test_is_decided_through_a_loop_that_keeps_the_bound():
    """ir/known: the second loop's test ``1 < m`` (put in place of B2's jump) is decided by the first loop's entry
    test ``m <= 1`` (false into B1) through the first loop's header, which only B0 enters from outside: given
    the method's entry; not without it (no dominance known), and not when the first loop writes ``m``."""
    from peggy_jvm.ir.known import decided_after
    blocks = _two_loops()
    test = blocks[3].terminator
    assert decided_after(blocks, 2, test, _preds(blocks), False, entry=0) == 4
    assert decided_after(blocks, 2, test, _preds(blocks), False) is None
    blocks = _two_loops(write_bound_in_first=True)
    assert decided_after(blocks, 2, blocks[3].terminator, _preds(blocks), False, entry=0) is None


def test_a_loop_entered_at_its_test_gives_its_first_evaluation_only_inside_it():
    """ir/known: ``i = 0; goto T`` with ``T: if i < n goto L else X``: inside the loop (``L``) ``n > 0`` holds, so
    an inner ``0 < n`` there is decided; at the exit ``X`` nothing is known of ``n`` (the loop may have run)."""
    from peggy_jvm.ir.known import decided_after
    n, i, k = _v(1), _v(2), _v(3)
    blocks = {
        0: Block(0, [Copy(i, Const(INT, 0))], Goto(3)),
        1: Block(1, [Copy(k, Const(INT, 0))], Goto(2)),  # L: the inner loop's preheader
        2: Block(2, [Binary(i, "add.i", i, Const(INT, 1))], Goto(3)),
        3: Block(3, [], If(Cond.LT, i, n, 1, 4)),  # T
        4: Block(4, [Copy(k, Const(INT, 0))], Goto(5)),  # X
        5: Block(5, [], Return(None)),
    }
    inner = If(Cond.LT, k, n, 2, 5)
    assert decided_after(blocks, 1, inner, _preds(blocks), False, entry=0) == 2
    assert decided_after(blocks, 4, If(Cond.LT, k, n, 5, 2), _preds(blocks), False, entry=0) is None


def test_a_first_evaluation_says_nothing_when_both_arms_stay_in_the_loop():
    """``i = 0; goto T; T: if i < n goto A else B``, A and B both in the loop (B steps ``i`` down and jumps back):
    A is also reached at later evaluations with ``n <= 0`` (B first, then ``i = -1 < n``), so ``0 < n`` is not
    decided at A."""
    from peggy_jvm.ir.known import decided_after
    n, i, k = _v(1), _v(2), _v(3)
    blocks = {
        0: Block(0, [Copy(i, Const(INT, 0))], Goto(3)),
        1: Block(1, [Copy(k, Const(INT, 0))], Goto(2)),  # A
        2: Block(2, [Binary(i, "add.i", i, Const(INT, 1))], If(Cond.LT, i, Const(INT, 10), 3, 5)),
        4: Block(4, [Binary(i, "sub.i", i, Const(INT, 1))], Goto(3)),  # B
        3: Block(3, [], If(Cond.LT, i, n, 1, 4)),  # T
        5: Block(5, [], Return(None)),
    }
    assert decided_after(blocks, 1, If(Cond.LT, k, n, 2, 5), _preds(blocks), False, entry=0) is None
