"""Two loop shapes other optimizers produce (issue 17 "Also"), seen as javac's again by validate/loopshape.py:

* one loop with two back edges against two nested loops: ProGuard's code of commons-lang3's
  ``Fraction.greatestCommonDivisor`` sends the inner ``while``'s back edge to the store in front of the shared
  header, which makes that store the header of an outer loop. The store is copied onto each edge into it and the
  pair is proved (``Nst01``); a mutant of the nested side (``Nst02``) is never proved and is shown different.
* a rotated loop whose test has several parts (``while (i < n && a[i] != x)`` against the test peeled in front
  of a do-while): the bottom test's blocks and the entry test's are shared from the last part back (``Rot05``,
  ``Rot06``); a peeled test that differs (``Rot07``) is shown different.

The pairs are the suite's (``fixtures/src/pairs/Nested.java``, ``Rotated.java``).
"""
from __future__ import annotations

import pytest
from conftest import compile_versions
from support import fixture_build
from support import pairsuite as bp

import peggy_jvm.validate.loopshape as loopshape
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.ir.nodes import Copy, Goto, If
from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs

PAIRS = ("Nst01", "Nst02", "Rot05", "Rot06", "Rot07")

#: javac's nested loops whose inner loop starts with a copy (``k = 0``) that two arms of an ``if`` reach: that
#: block has two ways in and is inside the outer loop, but no edge comes back to it (it is no loop's header)
JOINED = """
public class Joined {
    static int f(int n, int m) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            int k;
            if (i % 2 == 0) s += i; else s -= 1;
            k = 0;
            while (k < m) { s += k; k++; }
        }
        return s;
    }
}
"""


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    specs = [s for s in bp.load_suite() if s.id in PAIRS]
    orig, opt = bp.stage(specs, fixture_build.build_pairs(), tmp_path_factory.mktemp("loop-nesting"))
    return {"orig": orig, "opt": opt, "map": {s.orig: s.opt for s in specs}}


def _rows(trees, method_timeout: float) -> dict:
    """Each pair's row of its method (``gcd``, ``find``, ``skip``), by pair id."""
    rep = validate_inputs(trees["orig"], trees["opt"],
                          ValidateOptions(method_timeout=method_timeout, class_map=trees["map"]))
    return {p.class_name[:-1]: p for p in rep.pairs if p.name in ("gcd", "find", "skip")}


@pytest.fixture(scope="module")
def rows(trees):
    return _rows(trees, 6.0)


@pytest.mark.parametrize("pair", ["Nst01", "Rot05", "Rot06"])
def test_the_other_loop_shape_is_proved(rows, pair):
    assert rows[pair].verdict is Verdict.EQUIVALENT, rows[pair].reason


@pytest.mark.parametrize("pair", ["Nst02", "Rot07"])
def test_mutants_are_shown_different(rows, pair):
    """``Nst02``: the inner test reads ``w & 3`` (``gcd(9, 6)``: 3 against 1); ``Rot07``: the peeled entry test
    compares with ``x + 1`` (``find({6}, 6)``: 0 against 1)."""
    row = rows[pair]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"], row.counterexample


def _lifted(tree, cls: str, name: str):
    cf = read_class((tree / f"{cls}.class").read_bytes())
    return lift_method(cf, next(m for m in cf.methods if m.name == name), None)


def _headers(m) -> list[int]:
    """The blocks some edge jumps back to (by bytecode order), sorted."""
    return sorted({t for b in m.blocks.values() for t in b.successors(include_exceptional=False) if t <= b.id})


def test_the_outer_header_copy_goes_onto_each_edge_into_it(trees):
    """``Nst01B.gcd``: the block ``w = t`` in front of the inner loop's header is gone, each of its two ways in
    (the entry and the outer loop's back edge) goes through its own copy of it to that header, which is then the
    header of one loop with three ways in; javac's ``Nst01A`` (one header, two back edges) is left alone."""
    new = _lifted(trees["opt"], "Nst01B", "gcd")
    heads = _headers(new)
    outer = next(b for b in new.blocks.values() if isinstance(b.terminator, Goto) and b.stmts and b.id in heads and
                 all(isinstance(st, Copy) for st in b.stmts) and b.terminator.target in heads)
    target = outer.terminator.target
    merged = [(st.dst.id, getattr(st.src, "id", st.src)) for st in outer.stmts]
    assert loopshape._merge_nested_headers(new)
    assert outer.id not in new.blocks
    ins = [b for b in new.blocks.values() if target in b.successors()]
    copies = [b for b in ins if isinstance(b.terminator, Goto) and b.stmts]
    assert len(ins) == 3 and len(copies) == 2
    assert all([(st.dst.id, getattr(st.src, "id", st.src)) for st in b.stmts] == merged for b in copies)
    assert not any(outer.id in b.successors() for b in new.blocks.values())
    assert not loopshape._merge_nested_headers(_lifted(trees["orig"], "Nst01A", "gcd"))


def test_a_copy_block_that_is_no_loop_header_is_left_alone(java_home, tmp_path):
    """``k = 0`` in front of the inner ``while`` has two ways in (the arms of the ``if``) and lies on the outer
    loop's cycle, but no back edge enters it: it is left as lifted (JAMA's ``tred2`` has this shape on both
    sides; copying it would only change what both PEGs look like)."""
    m = _lifted(compile_versions(java_home, tmp_path, "Joined.java", {"orig": JOINED})["orig"], "Joined", "f")
    heads = _headers(m)
    assert any(isinstance(b.terminator, Goto) and b.stmts and all(isinstance(st, Copy) for st in b.stmts) and
               b.terminator.target in heads and sum(b.id in p.successors() for p in m.blocks.values()) == 2
               for b in m.blocks.values())
    assert not loopshape._merge_nested_headers(m)


def test_a_two_part_rotated_test_is_shared_part_by_part(trees):
    """``Rot05B.find``: after top_tested, the code reached has one ``i < a.length`` test and one ``a[i] != x``
    test, as javac's ``while`` has; before, each part was there twice (the entry test and the bottom test)."""
    new = _lifted(trees["opt"], "Rot05B", "find")
    tests = sum(isinstance(b.terminator, If) for b in new.blocks.values())
    assert tests == 4
    assert loopshape.top_tested(new)
    reached = {new.entry}
    todo = [new.entry]
    while todo:
        for t in new.blocks[todo.pop()].successors():
            if t not in reached:
                reached.add(t)
                todo.append(t)
    assert sum(isinstance(new.blocks[b].terminator, If) for b in reached) == 2


def test_without_the_normalizations_the_pairs_are_not_proved(trees, monkeypatch):
    """What proves the three pairs is the copying and the part-by-part sharing, not some rule that would prove
    them anyway."""
    monkeypatch.setattr(loopshape, "_merge_nested_headers", lambda m: False)
    monkeypatch.setattr(loopshape, "MAX_TEST_BLOCKS", 1)
    rows = _rows(trees, 3.0)
    for pair in ("Nst01", "Rot05", "Rot06"):
        assert rows[pair].verdict is not Verdict.EQUIVALENT, rows[pair].reason
