"""The optimistic analysis's shortcuts give what the plain computations give (peggy_jvm/rules/optimistic.py): on
the e-graphs the optimizer's rules make of real loops (fixtures/classes/bench/BenchKernels: matrix, stencil, graph
and sorting kernels), at every search of ``loop-optimistic`` during saturation,

* value numbering: the same groups and the same visits (what its budget counts) as the plain fixpoint, every
  node of every class visited in each pass with every union made (kept here as the reference);
* the facts: the same facts, hypotheses and rounds with :func:`transfer`'s memo as with every transfer computed;
* no node list is built when no two thetas start alike (most e-graphs: it was the analysis' largest allocation).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import peggy_jvm.rules.optimistic as o
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.egraph import Limits, Runner
from peggy_jvm.epeg import EPeg
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.peg.build import build_peg
from peggy_jvm.peg.graph import PEG
from peggy_jvm.rules.policy import optimizer_rules

KERNELS = Path(__file__).resolve().parent.parent / "fixtures" / "classes" / "bench" / "BenchKernels.class"


class _PlainNumbers(o._Numbers):
    """The fixpoint as first written: every pass visits every node and calls ``find`` and ``union`` for each."""

    def __init__(self, nodes: list, groups: list[list[int]], constants: dict[int, tuple]) -> None:
        self.parent: dict[Any, Any] = {}
        for g in groups:
            for c in g[1:]:
                self.union(g[0], c)
        for cid, key in constants.items():
            self.union(cid, key)
        self.visits = 0
        changed = True
        while changed:
            changed = False
            table: dict[tuple, Any] = {}
            find = self.find
            for cid, op, attr, ch in nodes:
                self.visits += 1
                r = find(cid)
                kids = tuple(find(c) for c in ch)
                other = table.setdefault((op, attr, kids), r)
                changed |= self.union(other, r)
                if op in o._SAME_IS and kids[0] == kids[1]:
                    changed |= self.union(r, ("const.b", o._SAME_IS[op]))
                elif op == "phi" and kids[0] in (find(o._TRUE), find(o._FALSE)):
                    changed |= self.union(r, ch[1] if kids[0] == find(o._TRUE) else ch[2])


@pytest.fixture(scope="module")
def kernels() -> list[PEG]:
    if not KERNELS.exists():
        pytest.skip("fixtures not built")
    cf = read_class(KERNELS.read_bytes())
    h = ClassHierarchy([KERNELS.parent])
    return [build_peg(lift_method(cf, m, h)) for m in cf.methods
            if m.code_attribute() is not None and m.name != "<init>"]


@pytest.fixture(scope="module")
def searches(kernels) -> dict[str, int]:
    """Saturates every kernel with the optimizer's rules, checking each analysis of ``loop-optimistic`` against
    the plain computations as it happens; counts what was compared."""
    seen = {"analyses": 0, "numbered": 0, "passes": 0}
    real_analyze, real_numbers, real_class = o.analyze, o.value_numbers, o._Numbers

    def checked_analyze(eg, *a, **k):
        memoized = o.transfer
        o.transfer = o._transfer
        try:
            cold = real_analyze(eg, *a, **k)  # every transfer computed
        finally:
            o.transfer = memoized
        real_analyze(eg, *a, **k)  # (the memo filled)
        warm = real_analyze(eg, *a, **k)  # and again, every transfer answered by the memo
        assert (warm.facts, warm.hypotheses, warm.converged, warm.rounds) == \
            (cold.facts, cold.hypotheses, cold.converged, cold.rounds)
        seen["analyses"] += 1
        return warm

    def checked_numbers(eg, facts, *a, **k):
        passes: list[int] = []

        class Counting(real_class):  # type: ignore[misc, valid-type]  # a subclass of the module's class
            def __init__(self, *args: Any) -> None:
                super().__init__(*args)
                passes.append(self.visits)
        o._Numbers = Counting
        try:
            got = real_numbers(eg, facts, *a, **k)
        finally:
            o._Numbers = real_class
        plain: list[int] = []

        class Plain(_PlainNumbers):
            def __init__(self, *args: Any) -> None:
                super().__init__(*args)
                plain.append(self.visits)
        o._Numbers = Plain
        try:
            want = real_numbers(eg, facts, *a, **k)
        finally:
            o._Numbers = real_class
        assert got == want and passes == plain
        seen["numbered"] += bool(got)
        seen["passes"] += len(passes)
        return got

    mp = pytest.MonkeyPatch()
    mp.setattr(o, "analyze", checked_analyze)
    mp.setattr(o, "value_numbers", checked_numbers)
    try:
        rules = optimizer_rules(None)
        for peg in kernels:
            eg = EPeg()
            eg.add_peg(peg)
            Runner(rules, Limits(max_nodes=5000, max_iterations=8)).run(eg)
    finally:
        mp.undo()
    return seen


def test_value_numbers_and_facts_are_the_plain_computations(searches):
    # real work was compared: analyses, numbering fixpoints run, groups found
    assert searches["analyses"] >= 20 and searches["passes"] >= 20 and searches["numbered"] >= 1, searches


def test_no_node_list_without_two_thetas_alike():
    """One loop, one counter: no group to number, so the classes are never listed."""
    g = PEG(name="count", param_types=["int"])
    s0, n = g.add("sigma0"), g.add("param", 0)
    i = g.new_theta(1)
    g.set_theta(i, g.add("const.i", 0), g.add("add.i", None, (i, g.add("const.i", 1))))
    p = g.add("pass", 1, (g.add("guard", None, (s0, g.add("ge.i", None, (i, n)))),))
    g.root = g.add("return", None, (g.add("eval", 1, (s0, p)), g.add("eval", 1, (i, p))))
    g.seal()
    eg = EPeg()
    eg.add_peg(g)
    facts = o.analyze(eg)
    assert facts.converged
    listed = []
    real = eg.class_ids
    eg.class_ids = lambda: listed.append(1) or real()  # type: ignore[method-assign]  # counts the listings
    assert o.value_numbers(eg, facts) == []
    assert listed == []
