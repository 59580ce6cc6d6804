"""A loop whose first statements are merged into its top and which is tested at its bottom (ProGuard's code of
jsoup's ``StructuralEvaluator$Parent.matches``), against javac's top-tested loop that computes the first value
before the loop and again at the end of each iteration: validate/loopshape.py copies the merged statements back
onto each edge into the loop, and the pair is proved; the mutants (the bottom test or the test after the merged
statement off by one) are never proved and are shown different on the JVM. The pairs are the suite's
(``fixtures/src/pairs/Rotated.java``: ``Rot01``-``Rot04``).
"""
from __future__ import annotations

import pytest
from conftest import compile_versions
from support import fixture_build
from support import pairsuite as bp

import peggy_jvm.validate.loopshape as loopshape
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.ir.nodes import Goto, If
from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs

#: javac's top-tested loops with a ``continue``, for the loops the copying must leave alone
CONTINUED = """
public class Continued {
    static int count(java.util.Iterator<String> it) {
        int c = 0;
        while (it.hasNext()) { String s = it.next(); c++; if (s.isEmpty()) continue; c += s.length(); }
        return c;
    }
    static int countDown(int n, int[] a) {
        int c = 0;
        while (n-- > 0) { c++; if (a[n] == 0) continue; c += a[n]; }
        return c;
    }
}
"""
PAIRS = ("Rot01", "Rot02", "Rot03", "Rot04")


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    specs = [s for s in bp.load_suite() if s.id in PAIRS]
    orig, opt = bp.stage(specs, fixture_build.build_pairs(), tmp_path_factory.mktemp("loop-rotation"))
    return {"orig": orig, "opt": opt, "map": {s.orig: s.opt for s in specs}}


def _rows(trees, method_timeout: float) -> dict:
    """Each pair's row of its loop method (``walk``, ``under``), by pair id."""
    rep = validate_inputs(trees["orig"], trees["opt"],
                          ValidateOptions(method_timeout=method_timeout, class_map=trees["map"]))
    return {p.class_name[:-1]: p for p in rep.pairs if p.name in ("walk", "under")}


@pytest.fixture(scope="module")
def rows(trees):
    return _rows(trees, 6.0)


@pytest.mark.parametrize("pair", ["Rot01", "Rot04"])
def test_a_loop_with_its_first_statements_merged_into_its_top_is_proved(rows, pair):
    assert rows[pair].verdict is Verdict.EQUIVALENT, rows[pair].reason


@pytest.mark.parametrize("pair", ["Rot02", "Rot03"])
def test_mutants_of_the_rotated_loop_are_shown_different(rows, pair):
    """The bottom test stops at ``k + 1`` (``walk(16, 3)``: 0 against 4), the test after the merged statement at
    1 (``walk(2, 5)``: 0 against 1)."""
    row = rows[pair]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"], row.counterexample


def _lifted(tree, cls: str, name: str):
    cf = read_class((tree / f"{cls}.class").read_bytes())
    return lift_method(cf, next(m for m in cf.methods if m.name == name), None)


def test_the_merged_statements_are_copied_onto_each_edge_into_the_loop(trees):
    """``Rot01B.walk``: the loop's top block keeps only its test, and each of its two ways in (the entry and the
    bottom test's back edge) goes through its own copy of ``n = n / 2``; javac's top-tested loop is left alone."""
    new = _lifted(trees["opt"], "Rot01B", "walk")
    top = next(b for b in new.blocks.values() if b.stmts and any(
        isinstance(p.terminator, If) and b.id in p.terminator.targets() and p.id >= b.id for p in new.blocks.values()))
    merged = [(type(st), getattr(st, "op", None)) for st in top.stmts]
    assert loopshape._split_header_statements(new)
    assert not top.stmts and isinstance(top.terminator, If)
    ins = [p for p in new.blocks.values() if top.id in p.successors()]
    assert len(ins) == 2 and all(isinstance(p.terminator, Goto) for p in ins)
    assert all([(type(st), getattr(st, "op", None)) for st in p.stmts] == merged for p in ins)
    assert not loopshape._split_header_statements(_lifted(trees["orig"], "Rot01A", "walk"))


@pytest.mark.parametrize("name", ["count", "countDown"])
def test_a_top_tested_loop_continued_by_a_backward_if_is_left_alone(java_home, tmp_path, name):
    """javac's ``while (it.hasNext())`` and ``while (n-- > 0)`` whose ``continue`` (``ifeq; goto top``) is
    threaded into one backward ``if``, as ProGuard does (lang3's ``CharSequenceUtils.regionMatches``): that
    ``if``'s other arm goes on with the body, so it is no bottom test, and the top keeps its statements (copying
    them would only part the two sides' PEGs: the pair took 1 s, not 18 ms, proved by the retry on the code as
    lifted). ``count``'s top steps no variable either."""
    m = _lifted(compile_versions(java_home, tmp_path, "Continued.java", {"orig": CONTINUED})["orig"], "Continued",
                name)
    top = next(b for b in m.blocks.values() if b.stmts and isinstance(b.terminator, If) and any(
        isinstance(p.terminator, Goto) and p.terminator.target == b.id and p.id > b.id for p in m.blocks.values()))
    threaded = 0
    for b in m.blocks.values():
        t = b.terminator
        if isinstance(t, If):
            for arm in ("if_true", "if_false"):
                j = m.blocks[getattr(t, arm)]
                if not j.stmts and isinstance(j.terminator, Goto) and j.terminator.target == top.id:
                    setattr(t, arm, top.id)
                    threaded += 1
    assert threaded == 1
    assert not loopshape._split_header_statements(m) and top.stmts


def test_without_the_copies_the_pair_is_not_proved(trees, monkeypatch):
    """What proves the two pairs is the copying (not some rule that would prove them anyway)."""
    monkeypatch.setattr(loopshape, "_split_header_statements", lambda m: False)
    rows = _rows(trees, 3.0)
    for pair in ("Rot01", "Rot04"):
        assert rows[pair].verdict is not Verdict.EQUIVALENT, rows[pair].reason
