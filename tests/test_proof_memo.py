"""The PEGs of one pair built once for all its proof attempts (validate/prove.py ``PegMemo``, made per pair by
validate/driver.py): the optimizer's rules' proof and the default rules' proof, each of the loop shapes, see the
same lifted code, so each shape's two PEGs are built (and minimized) once, and the verdict and reason are the
ones the attempts give without the memo.

The pair: javac's top-tested loop against the same loop tested at its bottom behind a guard (so both loop
shapes are tried, validate/loopshape.py), the bottom-tested side adding one more each iteration (a difference:
never proved, so every attempt runs). Counterexample search off: only the proofs are under test.
"""
from __future__ import annotations

import pytest
from conftest import compile_versions

import peggy_jvm.validate.driver as driver
import peggy_jvm.validate.prove as prove
from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs

ORIG = """
public class Loop {
    static int sum(int n) { int s = 0; int i = 0; while (i < n) { s += i * i; i++; } return s; }
}
"""
OPT = """
public class Loop {
    static int sum(int n) { int s = 0; int i = 0; if (i < n) { do { s += i * i + 1; i++; } while (i < n); } return s; }
}
"""


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    return compile_versions(java_home, tmp_path_factory.mktemp("proof-memo"), "Loop.java", {"orig": ORIG, "opt": OPT})


def _run(trees, monkeypatch, memo: bool) -> tuple[tuple, list[bool]]:
    """The ``sum`` row (verdict, reason without its timing) and the shape of each ``build_peg`` pair of calls."""
    built: list[bool] = []
    real = prove._build

    def counting(pair, orig_h, opt_h, view, shape):
        if pair.orig.name == "sum":  # (not the constructor's pair)
            built.append(shape)
        return real(pair, orig_h, opt_h, view, shape)
    with monkeypatch.context() as m:
        m.setattr(prove, "_build", counting)
        if not memo:
            m.setattr(driver, "PegMemo", lambda: None)
        rep = validate_inputs(trees["orig"], trees["opt"], ValidateOptions(method_timeout=4.0, counterexamples=False))
    row = next(r for r in rep.pairs if r.name == "sum")
    return (row.verdict, row.reason), built


def test_each_shape_is_built_once_per_pair_and_the_verdict_is_unchanged(trees, monkeypatch):
    with_memo, built = _run(trees, monkeypatch, memo=True)
    without, built_each_time = _run(trees, monkeypatch, memo=False)
    assert with_memo[0] is Verdict.UNKNOWN and without[0] is Verdict.UNKNOWN
    # the same saturation outcome (stop reason, calls); the node counts and times are the budget's
    assert with_memo[1].split(" after ")[0] == without[1].split(" after ")[0]
    assert sorted(built) == [False, True], built  # the shaped and the as-lifted code, once each
    # without the memo: each attempt (the optimizer's rules, then the default rules) builds both shapes again
    assert len(built_each_time) >= 4 and sorted(set(built_each_time)) == [False, True], built_each_time
