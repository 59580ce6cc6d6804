"""The work cap of validate's loop rules (rules/loopwork.py): ``loop-peel-decided``, ``loop-peel-shifted`` and
``phi-first-exit`` read loops' first iterations far beyond their matches, and on a method of many loops they took
most of a proof's time (commons-math3's ``AdamsMoultonIntegrator.integrate``: millions of first-value reads for
two merges). Each e-graph's meter bounds them; the test counts their reads itself, on a pair of four loops with
phis between them, with a small cap and without one (so that it fails when the cap is not applied).
"""
from __future__ import annotations

import pytest
from conftest import compile_old_new

from peggy_jvm.rules import firsttest, loopshift, loopwork
from peggy_jvm.rules.library import default_rules
from peggy_jvm.rules.peel import LoopPeel
from peggy_jvm.validate.pairing import load_side, pair_methods
from peggy_jvm.validate.prove import ProofBudget, prove_pair

OLD = r"""
public class Old {
    static int many(int n, int m) {
        int x = 0, y = 1;
        for (int i = 0; i <= n; i++) { x = x + i * y; }
        if (x > m) { y = x - m; } else { y = m - x; }
        for (int i = 0; i <= m; i++) { y = y + x * i; }
        if (y > n) { x = y ^ n; }
        for (int i = 0; i <= n; i++) { x = x * 3 + y; }
        if (x < y) { y = x + 1; } else { y = y + 2; }
        for (int i = 0; i <= m; i++) { y = y + i; }
        return x + y;
    }
}
"""
NEW = OLD.replace("class Old", "class New").replace("for (int i = 0;", "for (int i = 1;")
CAP = 60
#: the most one step may spend past the cap: a first-value read stops at the cap, a peel is charged once done
OVERSHOOT = 2 * LoopPeel().max_classes


@pytest.fixture(scope="module")
def pair(java_home, tmp_path_factory):
    trees = compile_old_new(java_home, tmp_path_factory.mktemp("loopwork"), OLD, NEW)
    orig, opt = load_side(trees["orig"]), load_side(trees["opt"])
    found = [p for p in pair_methods(orig, opt, {"Old": "New"}).pairs if p.orig.name == "many"]
    return found[0], orig.hierarchy, opt.hierarchy


def _work(pair, monkeypatch, cap: int) -> tuple[int, list[int]]:
    """(first-iteration reads and loop-rule matches tried, counted here; each e-graph's units spent) of one proof
    with the meter started at ``cap``, work limits only (the same work on any machine)."""
    monkeypatch.setattr(loopwork, "MAX_LOOP_WORK", cap)
    reads = [0]
    meters: list[loopwork.LoopWork] = []

    def counted(fn):
        def wrapper(*a, **k):
            reads[0] += 1
            return fn(*a, **k)
        return wrapper

    def recorded(eg):
        fresh = eg not in loopwork._METERS
        got = meter(eg)
        if fresh:
            meters.append(got)
        return got

    meter = loopwork.meter
    for module in (loopwork, firsttest, loopshift):
        monkeypatch.setattr(module, "meter", recorded)
    monkeypatch.setattr(firsttest, "_node_first", counted(firsttest._node_first))
    monkeypatch.setattr(loopshift._FirstIteration, "_build", counted(loopshift._FirstIteration._build))
    monkeypatch.setattr(loopshift.DecidedFirstExit, "apply", counted(loopshift.DecidedFirstExit.apply))
    p, orig_h, opt_h = pair
    budget = ProofBudget(time_s=None, max_nodes=20_000, max_iterations=30)
    prove_pair(p, orig_h, opt_h, default_rules().active(), budget, view=None)
    return reads[0], [cap - m.left for m in meters]


def test_the_loop_rules_stay_within_their_work_cap(pair, monkeypatch):
    uncapped, spent_free = _work(pair, monkeypatch, 10**9)
    capped, spent = _work(pair, monkeypatch, CAP)
    assert spent and all(s <= CAP + OVERSHOOT for s in spent), spent
    # the cap is what bounds them: without it the same proof reads many times as much
    assert max(spent_free) > 4 * CAP, spent_free
    assert uncapped > 4 * capped, (uncapped, capped)
