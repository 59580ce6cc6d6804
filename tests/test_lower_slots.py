"""Slots of rebuilt code (ir/lower._Lowerer.color_slots, issue 15): a variable that carries an original local
(``Var.carries``, a loop's theta) takes that local's slot when it is free; when a variable placed before it
holds that slot, it takes its turn by weight with the other variables instead of the lowest slot left at once.
JAMA's ``LUDecomposition.solve`` had a loop counter in slot 2 before the column count all its inner loops test
(weighed more), which went to slot 4. Checked on constructed IR; BenchKernels' output is byte-identical with
and without the rule (docs/benchmarks.md)."""
from __future__ import annotations

from pathlib import Path

from peggy_jvm.classfile.reader import read_class
from peggy_jvm.ir.lower import _Lowerer
from peggy_jvm.ir.nodes import INT, Binary, Block, CarriedLocal, Cond, Const, Copy, Goto, If, IRMethod, Return, Var

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "classes"


def _method() -> tuple[IRMethod, Var, Var, Var]:
    """``x`` and ``y`` both carry local 1 (``x`` read more), ``z`` (no local) is read in the loop more than ``y``;
    the three are live together."""
    a = Var(0, INT, "a", slot=0)
    x, y, z, r = Var(1, INT, "x"), Var(2, INT, "y"), Var(3, INT, "z"), Var(4, INT, "r")
    x.carries = CarriedLocal(1, 0, 1)
    y.carries = CarriedLocal(1, 0, 1)
    blocks = {
        0: Block(0, [Copy(x, Const(INT, 0)), Copy(y, Const(INT, 0)), Copy(z, a)], Goto(1)),
        1: Block(1, [], If(Cond.LT, x, a, 2, 3)),
        2: Block(2, [Binary(y, "mul.i", y, z), Binary(z, "mul.i", z, z), Binary(z, "xor.i", z, x),
                     Binary(x, "add.i", x, y), Binary(x, "add.i", x, x)], Goto(1)),
        3: Block(3, [Binary(r, "add.i", y, z)], Return(r)),
    }
    return IRMethod("C", "m", "(I)I", True, [a], blocks, 0, variables=[x, y, z, r]), x, y, z


def _slots() -> dict[int, int]:
    cf = read_class((FIXTURES / "release17" / "Branches.class").read_bytes())
    ir, *_ = _method()
    lw = _Lowerer(cf, ir)
    lw.assign_slots()
    return lw.slots


def test_a_carried_variable_whose_local_is_taken_waits_for_its_turn():
    slots = _slots()
    assert slots[1] == 1  # x: its own local
    assert slots[3] == 2 and slots[2] == 3, slots  # z, used more, before y (which wanted local 1 too)
