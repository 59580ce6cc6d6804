"""Saturation made cheaper with the same e-graphs (issue 19, session 15 ``thru7``).

* ``Assume.folds`` (rules/branchfacts.py) decides from the explored nodes with a target child, without the least
  fixpoint of the classes a copy would change: it must answer as the fixpoint would, on every phi the optimizer's
  saturations meet (both answers occur), and must not compute the fixpoint when nothing folds.
* An untimed run (the optimizer's work budget: no time limit) reads no clock inside its loop: the clock can read
  the CPU time, a system call, and nothing compares its reading with anything.
* The runner's rule plan keys its cache by the operators some pattern names only: methods that differ in other
  operators share one entry, with the answer computing every rule's ``possible`` gives.
"""
from __future__ import annotations

from pathlib import Path

import peggy_jvm.egraph.clock as clock_module
import peggy_jvm.egraph.pattern as pattern_module
import peggy_jvm.egraph.runner as runner_module
from peggy_jvm.egraph.egraph import op_bit
from peggy_jvm.egraph.runner import Limits, Runner, _RulePlan
from peggy_jvm.epeg import EPeg
from peggy_jvm.peg.ops import OPS
from peggy_jvm.rules.branchfacts import Assume

ROOT = Path(__file__).resolve().parent.parent
CLASSES = [ROOT / "fixtures/classes/bench/BenchKernels.class", ROOT / "fixtures/classes/classic/Classic.class"]


def _pegs():
    from peggy_jvm.classfile.hierarchy import ClassHierarchy
    from peggy_jvm.classfile.reader import read_class
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.peg.build import build_peg
    from peggy_jvm.peg.build import PegUnsupported

    for path in CLASSES:
        data = path.read_bytes()
        cf = read_class(data)
        hierarchy = ClassHierarchy([])
        hierarchy.add_lazy_classes({cf.name: data})
        for m in cf.methods:
            if m.code_attribute() is None:
                continue
            try:
                yield build_peg(lift_method(cf, m, hierarchy))
            except PegUnsupported:
                continue


def _folds_by_fixpoint(copier: Assume, tops: list[int]) -> bool:
    """What ``folds`` answered before: a changed class (the least fixpoint of ``plan``) whose node folds."""
    eg = copier.eg
    find = eg.find
    for cid in copier.plan(tops):
        op, _attr, ch = copier.chosen[cid]
        if op == "phi" and find(ch[0]) in copier.subst:
            return True
        if OPS[op].fn is not None and ch and all(
                eg.const(copier.subst.get(find(k), find(k))) is not None for k in ch):
            return True
    return False


def test_folds_answers_as_the_fixpoint_on_every_phi_of_the_optimizers_saturations(monkeypatch):
    from peggy_jvm.budget import DEFAULT_WORK_BUDGET
    from peggy_jvm.rules.policy import optimizer_rules

    answers: list[bool] = []
    fast = Assume.folds

    def both(self: Assume, tops: list[int]) -> bool:
        got = fast(self, tops)
        twin = type(self)(self.eg, dict(self.subst), self.limit, self.whole, self.rule)
        want = _folds_by_fixpoint(twin, tops)
        assert got == want, (tops, self.subst)
        assert self.chosen == twin.chosen  # the same exploration: a copy made after it is the same copy
        answers.append(got)
        return got

    monkeypatch.setattr(Assume, "folds", both)
    rules = optimizer_rules(None)
    pegs = list(_pegs())
    assert len(pegs) > 20
    for peg in pegs:
        eg = EPeg()
        eg.add_peg(peg)
        Runner(rules, DEFAULT_WORK_BUDGET.saturation()).run(eg)
    assert answers.count(True) >= 5 and answers.count(False) >= 5, answers.count(True)


def test_folds_computes_no_fixpoint_when_nothing_folds(monkeypatch):
    """``x + y`` under ``t := 7`` for a ``t`` it does not read: nothing folds, and the fixpoint is not needed."""
    eg = EPeg()
    x, y, t = (eg.add("param", k) for k in range(3))
    top = eg.add("add.i", None, (eg.add("mul.i", None, (x, y)), y))
    eg.rebuild()

    def no_fixpoint(self: Assume) -> set[int]:
        raise AssertionError("the least fixpoint was computed")

    monkeypatch.setattr(Assume, "_changed", no_fixpoint)
    copier = Assume(eg, {t: eg.add("const.i", 7)}, limit=32)
    assert copier.folds([top]) is False
    folding = Assume(eg, {y: eg.add("const.i", 7)}, limit=32)
    assert folding.folds([top]) is False  # mul(x, 7) and add(.., 7): x is no constant
    both = Assume(eg, {x: eg.add("const.i", 2), y: eg.add("const.i", 7)}, limit=32)
    assert both.folds([top]) is True


def _count_clock_reads(monkeypatch) -> list[int]:
    reads = [0]
    real = clock_module.clock

    def counting() -> float:
        reads[0] += 1
        return real()
    monkeypatch.setattr(runner_module, "budget_clock", counting)
    monkeypatch.setattr(pattern_module, "budget_clock", counting)
    return reads


def test_an_untimed_run_reads_the_clock_only_for_its_report(monkeypatch):
    from peggy_jvm.rules.policy import optimizer_rules

    reads = _count_clock_reads(monkeypatch)
    rules = optimizer_rules(None)
    pegs = [p for p in _pegs() if len(p.nodes) > 30][:5]
    assert pegs
    for peg in pegs:
        eg = EPeg()
        eg.add_peg(peg)
        before = reads[0]
        report = Runner(rules, Limits(time_limit_s=None, max_iterations=4)).run(eg)
        assert report.iterations >= 2
        assert reads[0] - before == 2  # the start and the end (RunReport.time_s), whatever the iterations
    # a timed run still reads it in its loop (its limit holds there)
    eg = EPeg()
    eg.add_peg(pegs[0])
    before = reads[0]
    Runner(rules, Limits(time_limit_s=10.0, max_iterations=4)).run(eg)
    assert reads[0] - before > 4


def test_the_rule_plan_keys_by_the_operators_patterns_name():
    from peggy_jvm.rules.policy import optimizer_rules

    rules = tuple(optimizer_rules(None))
    plan = _RulePlan(rules)
    named = plan.relevant
    spare = next(op for op in sorted(OPS) if not op_bit(op) & named)  # an operator no pattern names
    base = op_bit("add.i") | op_bit("phi") | op_bit("param") | op_bit("const.i")
    got = plan.split(base)
    assert plan.split(base | op_bit(spare)) is got  # one cache entry for both
    assert len(plan._by_mask) == 1
    for present in (base, base | op_bit(spare), base | op_bit("theta") | op_bit("mul.i")):
        live, dead = _RulePlan(rules).split(present)
        want = [i for i, lhs in enumerate(plan.matchers) if lhs is None or lhs.possible(present)]
        assert live == want and sorted(live + dead) == list(range(len(rules)))
