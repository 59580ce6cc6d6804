"""Returns in place under ``--goal speed`` (``revert.tidy.ReturnsInPlace.BEFORE_LOOPS``): a ``goto`` to a block
that only returns becomes that return, as javac writes ``return a == b || f(a, b);`` (``iconst_1; ireturn``
in one arm, ``iconst_0; ireturn`` in the other) where the reverter's join wrote ``iconst_1; goto L; ...; L:
ireturn``; a return a loop reaches keeps its jumps (the self-check cannot yet prove a rotated loop whose exits
return on their own, tests/test_peel.py), checked on blocks built by hand.

The shapes are read off the round trip (lift, PEG, revert as ``--goal speed`` does, lower) and the code is run
against javac's on the JVM (``-Xverify:all``). The full stage's retry (``pipeline._returns_by_jumps``): when the
self-check does not prove the in-place returns, the same rewrite with one shared return is checked instead,
and kept.
"""
from __future__ import annotations

import functools
from collections import Counter

import pytest

import difftest as dt
from conftest import javac_command, keep_every_rewrite
from support.fullstage import assert_behaves_like_original, javap, method_listing
from support.javac_cache import run_javac
from peggy_jvm import pipeline
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.codecost import Goal
from peggy_jvm.pipeline import MethodUnchanged, Stage, optimize_input
from peggy_jvm.revert.revert import revert_peg
from peggy_jvm.ir.nodes import INT, Block, Cond, Const, Goto, If, Return, Var
from peggy_jvm.revert.tidy import ReturnsInPlace, _returns_in_place_of_gotos

SOURCE = r"""
public class Ret {
    static boolean same(String a, String b) { return a == b || a != null && a.equals(b); }
    static int pick(int x, boolean c) { return c ? x * 4 + x * 4 : 1; }
}
"""


def _build(java_home, work):
    src, orig = work / "src", work / "orig"
    src.mkdir(parents=True)
    (src / "Ret.java").write_text(SOURCE)
    run_javac([*javac_command(java_home), "-d", str(orig), str(src / "Ret.java")], check=True)
    return orig


def _calls(orig):
    cf = read_class((orig / "Ret.class").read_bytes())
    calls = [dt.Call("Ret", m.name, m.descriptor, a) for m in cf.methods if m.name != "<init>"
             for a in dt.generate_args(m.descriptor, count=30, seed=5)]
    same = "(Ljava/lang/String;Ljava/lang/String;)Z"
    calls += [dt.Call("Ret", "same", same, (None, None)), dt.Call("Ret", "same", same, ("x", "x"))]
    return calls


@pytest.fixture(scope="module")
def round_trip(java_home, tmp_path_factory):
    """javac's class and its round trip reverted as ``--goal speed`` does, as (orig dir, out dir, rows)."""
    work = tmp_path_factory.mktemp("retspeed")
    orig, out = _build(java_home, work), work / "out"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline, "revert_peg", functools.partial(revert_peg, rotate_loops=True,
                                                             returns=ReturnsInPlace.BEFORE_LOOPS))
        _, report = optimize_input(orig / "Ret.class", out / "Ret.class", Stage.PEG, jobs=1, cache=None)
    return orig, out, {r.name: r for r in report.methods}


def _ops(java_home, classes, name):
    return [o for _, o, _ in method_listing(javap(java_home, classes, "Ret"), name)]


def test_a_boolean_or_returns_in_each_arm(java_home, round_trip):
    orig, out, _ = round_trip
    before, after = _ops(java_home, orig, "same"), _ops(java_home, out, "same")
    assert Counter(before)["ireturn"] == 1 and "goto" in before, before  # javac's shared return
    assert Counter(after)["ireturn"] == 2 and "goto" not in after, after
    assert len(after) < len(before) + 1  # goto (3 bytes) gone, one ireturn (1 byte) added


def _blocks_with_a_loop_before_a_return() -> dict[int, Block]:
    """0: if x == 0 goto 3 else 1; 1: loop: if x < 9 goto 1 else 2; 2: goto 4; 3: goto 4; 4: return x."""
    x = Var(0, INT, "x")
    zero, nine = Const(INT, 0), Const(INT, 9)
    return {0: Block(0, [], If(Cond.EQ, x, zero, 3, 1)), 1: Block(1, [], If(Cond.LT, x, nine, 1, 2)),
            2: Block(2, [], Goto(4)), 3: Block(3, [], Goto(4)), 4: Block(4, [], Return(x))}


@pytest.mark.parametrize("returns, in_place", [(ReturnsInPlace.BEFORE_LOOPS, set()), (ReturnsInPlace.ALL, {2})])
def test_a_return_a_loop_reaches_stays_shared_before_loops(returns, in_place):
    # block 3 falls into 4 (the next block): it keeps falling; block 2 jumps to 4 from after the loop
    blocks = _blocks_with_a_loop_before_a_return()
    assert _returns_in_place_of_gotos(blocks, returns) is bool(in_place)
    assert {b.id for b in blocks.values() if isinstance(b.terminator, Return)} == {4, *in_place}


def test_a_return_no_loop_reaches_is_returned_in_place():
    blocks = _blocks_with_a_loop_before_a_return()
    blocks[1].terminator = Goto(4)  # no loop: block 1 jumps to the return
    assert _returns_in_place_of_gotos(blocks, ReturnsInPlace.BEFORE_LOOPS)
    assert isinstance(blocks[1].terminator, Return) and isinstance(blocks[2].terminator, Return)


def test_returned_in_place_behaves_like_the_original(java_home, round_trip):
    orig, out, rows = round_trip
    assert_behaves_like_original(java_home, orig, out, rows, _calls(orig))


def test_the_shared_return_when_the_self_check_cannot_prove_returns_in_place(java_home, tmp_path, monkeypatch):
    orig = _build(java_home, tmp_path)
    keep_every_rewrite(monkeypatch)
    real, checked = pipeline._self_check, []

    def one_return_only(cf, m, data, *args, **kwargs):  # a prover that fails on several returns
        returns = sum(i.opcode == op.IRETURN for i in read_instructions(read_code(data, cf.pool)))
        checked.append((m.name, returns))
        if returns > 1:
            raise MethodUnchanged("self-check: not proved (test)")
        real(cf, m, data, *args, **kwargs)
    monkeypatch.setattr(pipeline, "_self_check", one_return_only)
    out = tmp_path / "out"
    _, report = optimize_input(orig / "Ret.class", out / "Ret.class", Stage.FULL, jobs=1, cache=None,
                               goal=Goal.SPEED)
    rows = {r.name: r for r in report.methods}
    assert rows["pick"].status == "rewritten", rows["pick"].reason
    assert [n for n, _ in checked if n == "pick"] == ["pick", "pick"], checked  # in place first, then shared
    assert [r for n, r in checked if n == "pick"] == [2, 1], checked
    assert Counter(_ops(java_home, out, "pick"))["ireturn"] == 1
    assert_behaves_like_original(java_home, orig, out, rows, _calls(orig))
