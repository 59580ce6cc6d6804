"""Bounds from branch conditions (rules/boundfacts.py, ``branch-bounds``): under ``x > 0`` a counting loop's
closed form tests ``-x < 0``, which holds there; under ``x <= 0`` and then ``x >= 0``, ``x`` is 0 (EqBench's
``CLEVER/pos``); ``x - 1 >= 1`` under ``x > 1``; a test of ``-x`` under nested bounds. The mutants (the helper
differing at 0, a bound one too wide, ``-x`` at ``MIN_VALUE``, where it wraps to itself) are not proved and are
shown different on the JVM; the rule's own mutant that forgets wrap-around is caught on an e-graph.
"""
from __future__ import annotations

import pytest
from conftest import compile_old_new, validate_rows

from peggy_jvm.epeg import EPeg
from peggy_jvm.ir.nodes import INT
from peggy_jvm.peg.graph import PEG
from peggy_jvm.rules.boundfacts import BoundFacts
from peggy_jvm.validate import Verdict

OLD = r"""
public class Old {
    private int lib(int x) { int c = 0; while (x < 0) { x++; c++; } return c; }
    int client(int x) { if (x > 0) return -lib(-x); else return lib(x); }
    int clientZero(int x) { if (x > 0) return -lib(-x); else return lib(x); }
    static int pred(int x) { return x > 1 ? (x - 1 >= 1 ? 5 : 6) : 0; }
    static int predWide(int x) { return x > 0 ? (x - 1 >= 1 ? 5 : 6) : 0; }
    static int nested(int x) { if (x < 0) { if (x > -100) return -x > 0 ? 1 : 2; } return 3; }
    static int negMin(int x) { return x < 0 ? (-x < 0 ? 1 : 2) : 3; }
}
"""
NEW = r"""
public class New {
    private int lib(int x) { if (x < 0) return -x; else return x; }
    private int lib0(int x) { if (x < 0) return -x; else return x + 1; }
    int client(int x) { if (x > 0) return -lib(-x); else return lib(x); }
    int clientZero(int x) { if (x > 0) return -lib0(-x); else return lib0(x); }
    static int pred(int x) { return x > 1 ? 5 : 0; }
    static int predWide(int x) { return x > 0 ? 5 : 0; }
    static int nested(int x) { if (x < 0) { if (x > -100) return 1; } return 3; }
    static int negMin(int x) { return x < 0 ? 2 : 3; }
}
"""


@pytest.fixture(scope="module")
def rows(java_home, tmp_path_factory):
    trees = compile_old_new(java_home, tmp_path_factory.mktemp("bounds"), OLD, NEW)
    # the `>=` tests as they are lifted: read as `<` with the arms swapped (validate/branchshape.py
    # strict_tests_first), `pred` is proved without branch-bounds (phi-not only), and this file is about that rule
    from peggy_jvm.validate import prove
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(prove, "strict_tests_first", lambda _m: False)
        return validate_rows(trees, method_timeout=6.0, class_map={"Old": "New"}, explain=True)


@pytest.mark.parametrize("name", ["client", "pred", "nested"])
def test_bounds_of_the_branch_decide_tests_of_related_terms(rows, name):
    row = rows[name]
    assert row.verdict is Verdict.EQUIVALENT, row.reason
    assert "branch-bounds" in row.axioms, row.axioms


@pytest.mark.parametrize("name", ["clientZero", "predWide", "negMin"])
def test_mutants_are_shown_different(rows, name):
    row = rows[name]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"], row.counterexample


def _decided(rule: BoundFacts) -> bool:
    """``phi(x < 0, phi(-x < 0, 1, 2), 3)`` after one round of ``rule``: whether the inner test was decided (it
    must not be: at ``MIN_VALUE``, ``-x`` is ``MIN_VALUE``)."""
    g = PEG(is_static=True, param_types=[INT])
    s0, x, zero = g.add("sigma0"), g.add("param", 0), g.add("const.i", 0)
    inner = g.add("phi", None, (g.add("lt.i", None, (g.add("neg.i", None, (x,)), zero)), g.add("const.i", 1),
                                g.add("const.i", 2)))
    g.root = g.add("return", None, (s0, g.add("phi", None, (g.add("lt.i", None, (x, zero)), inner,
                                                            g.add("const.i", 3)))))
    g.seal()
    eg = EPeg()
    ids = eg.add_peg(g)
    for match in rule.search(eg, 100, 0.0)[0]:
        rule.apply(eg, match)
    eg.rebuild()
    return any(op == "phi" and eg.const(ch[1]) == ("const.i", 2)
               for op, _a, ch in eg.nodes(ids[g.nodes[g.root].children[1]]))


def test_wrap_around_is_respected():
    assert not _decided(BoundFacts())
    assert _decided(BoundFacts(mutant="wraps"))
