"""``revert/tidy.tidy_blocks`` on a switch (issue 15's back end): ``_switches_from_chains`` turns if-chains into a
``Switch`` before rotation, and rotation tidies the blocks again, renumbering them in javac's layout. Every
target of the switch (its cases and default) must follow its block through the renumbering and past an empty
block that only jumps on: before, only gotos, ifs and handlers did, so a rotated method with a switch kept its
old case ids (commons-math3 ``Dfp.round``: a ``KeyError`` for a block that no longer existed, the method kept
its original code; with ids that still existed, the cases would lead to the wrong blocks)."""
from __future__ import annotations

from peggy_jvm.ir.nodes import INT, Block, Const, Goto, Return, Switch, Var
from peggy_jvm.revert.tidy import tidy_blocks


def _returned(blocks: dict[int, Block], bid: int) -> object:
    """The constant the path from ``bid`` returns (through gotos)."""
    seen = set()
    while bid not in seen:
        seen.add(bid)
        term = blocks[bid].terminator
        if isinstance(term, Return):
            assert isinstance(term.value, Const)
            return term.value.value
        assert isinstance(term, Goto), term
        bid = term.target
    raise AssertionError("a cycle")


def _method() -> tuple[dict[int, Block], dict[int, int]]:
    """A switch whose cases lead (some through an empty goto block) to returns of distinct constants, its blocks
    numbered against javac's layout (the default's block first, the cases' in reverse), so that tidying must
    renumber them; and key -> the constant that key's path returns."""
    v = Var(0, INT, "k")
    blocks = {
        0: Block(0, terminator=Switch(v, [1, 2, 3, 7], [6, 5, 9, 4], 3)),
        3: Block(3, terminator=Return(Const(INT, -1))),
        4: Block(4, terminator=Return(Const(INT, 70))),
        5: Block(5, terminator=Return(Const(INT, 20))),
        6: Block(6, terminator=Goto(8)),  # empty: jumped over
        8: Block(8, terminator=Return(Const(INT, 10))),
        9: Block(9, terminator=Return(Const(INT, 30))),
    }
    return blocks, {1: 10, 2: 20, 3: 30, 7: 70}


def test_a_switch_keeps_its_targets_through_tidying():
    blocks, expected = _method()
    out, entry = tidy_blocks(blocks, 0)
    succ = {t for b in out.values() for t in b.successors()}
    assert succ <= set(out), (succ, sorted(out))
    sw = out[entry].terminator
    assert isinstance(sw, Switch)
    assert {k: _returned(out, c) for k, c in zip(sw.keys, sw.cases)} == expected
    assert _returned(out, sw.default) == -1
    assert all(out[c].stmts or not isinstance(out[c].terminator, Goto) for c in sw.cases)  # the empty one skipped
    assert sorted(out) == list(range(len(out)))  # renumbered


def test_tidying_twice_keeps_them():
    """Rotation's second tidying (``tidy_blocks(blocks, entry, bottom)``) renumbers what the first numbered."""
    blocks, expected = _method()
    out, entry = tidy_blocks(*tidy_blocks(blocks, 0))
    sw = out[entry].terminator
    assert isinstance(sw, Switch)
    assert {k: _returned(out, c) for k, c in zip(sw.keys, sw.cases)} == expected and _returned(out, sw.default) == -1
