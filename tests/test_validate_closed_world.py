"""``--assume closed-world`` (validate/driver.py, ``CalleeSource.only_target``): a virtual call of a method that
no class of the input overrides runs that method when the input is the whole program, so a recursive call on
``this`` may be unfolded (EqBench's ``REVE/limit2``: base case ``n <= 0`` against ``n <= 1``). Without the
assumption the pair stays unknown (a subclass in the same package could override ``f`` and make the versions
differ); with it the proof says it relies on it. A mutant is still shown different, and where the input itself
holds an override (whose ``super.f`` call does make the versions differ) the assumption proves nothing.
"""
from __future__ import annotations

import pytest
from conftest import compile_old_new

from peggy_jvm.validate import Verdict

OLD = r"""
public class Old {
    int f(int n) { int r = 0; if (n <= 0) { r = n; } else { r = f(n - 1); r = n + r; } return r; }
}
class Wide { int f(int n) { return n <= 0 ? n : n + f(n - 1); } }
class Over { int f(int n) { return n <= 0 ? n : n + f(n - 1); } }
class OverSub extends Over { int f(int n) { return n == 0 ? 5 : super.f(n); } }
"""
NEW = r"""
public class New {
    int f(int n) { int r = 0; if (n <= 1) { r = n; } else { r = f(n - 1); r = n + r; } return r; }
}
class Wide2 { int f(int n) { return n <= 2 ? n : n + f(n - 1); } }
class Over2 { int f(int n) { return n <= 1 ? n : n + f(n - 1); } }
class Over2Sub extends Over2 { int f(int n) { return n == 0 ? 5 : super.f(n); } }
"""
MAP = {"Old": "New", "Wide": "Wide2", "Over": "Over2", "OverSub": "Over2Sub"}


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    return compile_old_new(java_home, tmp_path_factory.mktemp("closed"), OLD, NEW)


def _by_class(trees, assume):
    from peggy_jvm.validate import ValidateOptions, validate_inputs
    rep = validate_inputs(trees["orig"], trees["opt"], ValidateOptions(method_timeout=4.0, class_map=MAP,
                                                                       assumptions=assume))
    return {(p.class_name, p.name): p for p in rep.pairs}


@pytest.fixture(scope="module")
def strict(trees):
    return _by_class(trees, ())


@pytest.fixture(scope="module")
def closed(trees):
    return _by_class(trees, ("closed-world",))


def test_an_overridable_recursion_is_not_unfolded_by_default(strict):
    row = strict[("Old", "f")]
    assert row.verdict is Verdict.UNKNOWN, row.reason


def test_in_a_closed_world_it_is_and_the_proof_says_so(closed):
    row = closed[("Old", "f")]
    assert row.verdict is Verdict.EQUIVALENT, row.reason
    assert row.assumptions == ["closed-world"] and "--assume closed-world" in row.reason, row.reason


def test_a_mutant_is_still_shown_different(closed):
    row = closed[("Wide", "f")]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"], row.counterexample


def test_an_override_in_the_input_keeps_the_call_a_call(closed):
    """``OverSub.f(1)`` is ``super.f(1)`` = ``1 + this.f(0)`` = 6 against 1: ``Over.f`` differs on a receiver of
    the subclass, so it must not be proved."""
    row = closed[("Over", "f")]
    assert row.verdict is not Verdict.EQUIVALENT, row.reason
