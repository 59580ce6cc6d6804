"""ProGuard's code of JAMA's ``EigenvalueDecomposition.hqr2`` (issue 17 "Also") in small: a matrix row read
twice against read once and reused (ProGuard's ``dup2``), a bound kept in a local that stays 0 against the
folded 0, a test flipped with its arms swapped, a constant multiplied from the other side and ``k - 2`` as
``k + -2``. validate/normalize.py's ``merge_repeated_reads`` and ``trivial_forms`` and validate/branchshape.py's
``strict_tests_first`` read both sides in one form, so the pair is "same PEG" (it took 11 saturation iterations
before; ``hqr2`` itself never met in 120 s). Each of the three is needed, and none merges what differs: the
mutants (the wrong row reused, the folded bound off by one) are shown different on the JVM, and a row read again
after a call that may replace it stays two reads. And a field access of ``this`` moved out of a try range (which
ProGuard does) is "same PEG" (``accesses_of_this``), where the same move of a read of an array parameter is shown
different.

The pairs are the suite's (``fixtures/src/pairs/Rows.java``).
"""
from __future__ import annotations

import pytest
from conftest import compile_versions, validate_rows
from support import fixture_build
from support import pairsuite as bp

from peggy_jvm.classfile.reader import read_class
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.peg.build import build_peg
from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs
from peggy_jvm.validate import prove
from peggy_jvm.validate.normalize import bisimilar, expand_library_calls, merge_repeated_reads, trivial_forms
from peggy_jvm.validate.pairing import load_side, pair_methods

PAIRS = ("Row01", "Row02", "Row03")


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    specs = [s for s in bp.load_suite() if s.id in PAIRS]
    orig, opt = bp.stage(specs, fixture_build.build_pairs(), tmp_path_factory.mktemp("rows"))
    return {"orig": orig, "opt": opt, "map": {s.orig: s.opt for s in specs}}


@pytest.fixture(scope="module")
def rows(trees):
    rep = validate_inputs(trees["orig"], trees["opt"], ValidateOptions(method_timeout=6.0, class_map=trees["map"]))
    return {p.class_name[:-1]: p for p in rep.pairs if p.name == "sweep"}


def test_the_reused_row_and_the_folded_bound_are_the_same_peg(rows):
    row = rows["Row01"]
    assert row.verdict is Verdict.EQUIVALENT, row.reason
    assert row.reason.startswith("same PEG"), row.reason


@pytest.mark.parametrize("pair", ["Row02", "Row03"])
def test_mutants_are_shown_different(rows, pair):
    """``Row02`` reuses ``h[j]`` for ``h[i]``, ``Row03`` stops at ``i > 0`` (``sweep({{1, 2}, {3, 4}}, 2)``)."""
    row = rows[pair]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"], row.counterexample


def _normal(row01, strict: bool, reads: bool, trivial: bool, monkeypatch) -> tuple:
    """Row01's two PEGs as the proof builds them, then the forms asked for."""
    pair, orig_h, opt_h = row01
    if not strict:
        monkeypatch.setattr(prove, "strict_tests_first", lambda m: False)
    built = prove._build(pair, orig_h, opt_h, None, True)
    monkeypatch.undo()
    out = []
    for g in (built.pa, built.pb):
        g = expand_library_calls(g)
        g = trivial_forms(g) if trivial else g
        out.append(merge_repeated_reads(g) if reads else g)
    return tuple(out)


@pytest.fixture(scope="module")
def row01(trees):
    a, b = load_side(trees["orig"]), load_side(trees["opt"])
    pair = next(p for p in pair_methods(a, b, trees["map"]).pairs
                if p.orig_class.name == "Row01A" and p.orig.name == "sweep")
    return pair, a.hierarchy, b.hierarchy


@pytest.mark.parametrize("left_out", [None, "strict", "reads", "trivial"])
def test_each_form_is_needed(row01, monkeypatch, left_out):
    pa, pb = _normal(row01, left_out != "strict", left_out != "reads", left_out != "trivial", monkeypatch)
    assert bisimilar(pa, pb) is (left_out is None)


AGAIN = """
public class Again {
    static int[] saved;
    static void swap(int[][] h, int i) { saved = h[i]; h[i] = new int[] {7}; }
    static int afterCall(int[][] h, int i) { int x = h[i][0]; swap(h, i); return x + h[i][0]; }
    static int afterStore(int[][] h, int i) { int x = h[i][0]; h[i] = new int[] {7}; return x + h[i][0]; }
    static int twice(int[][] h, int i) { return h[i][0] + h[i][0]; }
}
"""


def _count(peg, op: str) -> int:
    return sum(1 for n in peg.reachable() if peg.nodes[n].op == op)


def test_a_row_read_again_after_a_call_or_a_store_stays_two_reads(java_home, tmp_path):
    tree = compile_versions(java_home, tmp_path, "Again.java", {"orig": AGAIN})["orig"]
    cf = read_class((tree / "Again.class").read_bytes())
    pegs = {m.name: build_peg(lift_method(cf, m, None)) for m in cf.methods if m.name in
            ("afterCall", "afterStore", "twice")}
    for name in ("afterCall", "afterStore"):
        g = pegs[name]
        assert merge_repeated_reads(g) is g, name
    # with nothing but reads between them, the second h[i] and h[i][0] are the first
    g = pegs["twice"]
    assert (_count(g, "aload"), _count(merge_repeated_reads(g), "aload")) == (4, 2)


def test_subtracting_min_value_is_adding_it(java_home, tmp_path):
    """``x - k`` as ``x + (-k)``: for ``Integer.MIN_VALUE`` the negation wraps to itself, as the subtraction."""
    src = "public class Sub { static int f(int x) { return x - Integer.MIN_VALUE; } " \
          "static long g(long x) { return x - 5L; } }"
    tree = compile_versions(java_home, tmp_path, "Sub.java", {"orig": src})["orig"]
    cf = read_class((tree / "Sub.class").read_bytes())
    got = {}
    for m in cf.methods:
        if m.name in ("f", "g"):
            g = trivial_forms(build_peg(lift_method(cf, m, None)))
            got[m.name] = sorted((g.nodes[n].op, g.nodes[n].attr) for n in g.reachable()
                                 if g.nodes[n].op.startswith(("add", "sub", "const")))
    assert got == {"f": [("add.i", None), ("const.i", -2**31)], "g": [("add.l", None), ("const.l", -5)]}


TRY_ORIG = """
public class T {
    int a;
    static int g(int x) { if (x > 100) throw new IllegalStateException(); return x * 2; }
    int f() { try { int x = this.a; this.a = x + 1; return g(x); } catch (RuntimeException e) { return -1; } }
    static int h(int[] o) { try { int x = o[0]; return g(x); } catch (RuntimeException e) { return -1; } }
}
"""
#: the accesses moved out of the try range (ProGuard shrinks ranges past accesses that cannot throw)
TRY_OPT = """
public class T {
    int a;
    static int g(int x) { if (x > 100) throw new IllegalStateException(); return x * 2; }
    int f() { int x = this.a; this.a = x + 1; try { return g(x); } catch (RuntimeException e) { return -1; } }
    static int h(int[] o) { int x = o[0]; try { return g(x); } catch (RuntimeException e) { return -1; } }
}
"""


def test_an_access_of_this_moved_out_of_a_try_range_is_the_same_peg(java_home, tmp_path):
    """``this`` is never null, so its field accesses cannot throw (``accesses_of_this``): "same PEG" (saturation
    before). The same move of a read of an array parameter, which may be null or empty, is a difference:
    ``h(null)`` returns -1 against a NullPointerException."""
    trees = compile_versions(java_home, tmp_path, "T.java", {"orig": TRY_ORIG, "opt": TRY_OPT})
    got = validate_rows(trees, "T", method_timeout=6.0)
    assert got["f"].verdict is Verdict.EQUIVALENT and got["f"].reason.startswith("same PEG"), got["f"].reason
    assert got["h"].verdict is Verdict.NOT_EQUIVALENT, got["h"].reason
