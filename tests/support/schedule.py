"""How ``--dist loadfile`` spreads the suite over pytest-xdist's workers (``make test`` runs ``-n auto --dist
loadfile``): one work unit per test file, except the heavy files split by :data:`SPLITS`, and the costliest
units handed out first.

Also :func:`replay`: a run's schedule replayed from each test's cost (a CPU log, support/cputime.py).

Input: the test ids the workers collected (in the controller of a ``--dist loadfile`` run); :data:`SPLITS`,
how a heavy file divides into units; :data:`UNIT_CPU`, the measured CPU seconds of the heavy units. Output: the
scheduler pytest-xdist uses (:class:`UnitScheduling`, its own ``loadfile`` scheduler with these units): a
worker that needs work gets the costliest unit left, else the next in xdist's own order. Without the split one
file held ~350 s of a clean-clone run (ProGuard on three jars) on one worker, and xdist's order (most tests
first) started that file and the other few-test heavy ones (the ecj pair) last: one worker ran alone for
minutes at the end.

Invariants: only the units and the order of the run change, never which tests run or what they check; without
``--dist loadfile`` nothing changes. A unit holds every test that uses one instance of a costly module fixture
(the split files compute such fixtures per key, lazily, so a unit computes only its own keys). A unit missing
from :data:`UNIT_CPU`, or measured wrong, costs wall time, nothing else. (The ``xdist_group`` marks of
``--dist loadgroup`` do not work with pytest 9: xdist 3.8 renames the tests' ids through an attribute pytest
no longer reads, so every test became its own unit and module fixtures ran on both workers.)
"""
from __future__ import annotations

import re
from typing import Any

import pytest

#: a heavy file's units: (pattern searched in a test id, the unit's name; ``\\1`` is the pattern's group), the
#: first that matches; a test matching none is in the file's own unit
SPLITS: dict[str, list[tuple[str, str]]] = {
    # one unit per jar (ProGuard's run and its validation)
    "tests/test_proguard_pairs.py": [(r"\[(jama|jsoup|commons-lang3)\]", r"\1"), (r"::test_jamas_svd", "jama")],
    # one unit per jar: its four stages (its workload compiled once)
    "tests/test_corpus.py": [(r"\[(?:classfile|ir|peg|full)-([\w.-]+)\]$", r"\1")],
    # every fixture method against the JVM, one unit per tree
    "tests/test_interp.py": [(r"::test_interpreter_agrees_with_jvm_on_fixtures\[(\w+)\]", r"fixtures-\1")],
    "tests/test_peg.py": [(r"::test_peg_evaluator_agrees_with_the_interpreter_on_fixtures\[(\w+)\]",
                           r"fixtures-\1")],
}

#: CPU seconds of the heavy units on the 2-core machine idle: the clean-clone run's slowest phases (762cea7,
#: idle, so wall ~ CPU), the fast tier's CPU log, a unit's parts summed where only those were measured
#: (docs/ci.md, "Session 16"); a unit not here counts 0 and runs after these, in xdist's own order. Only the
#: order matters: a rough number is enough
UNIT_CPU: dict[str, float] = {
    "tests/test_proguard_pairs.py[commons-lang3]": 200.0,
    "tests/test_corpus.py[commons-math3]": 150.0,
    "tests/test_interp.py[fixtures-release17]": 125.0,
    "tests/test_interp.py[fixtures-release8]": 110.0,
    "tests/test_proguard_pairs.py[jsoup]": 110.0,
    "tests/test_ecj_pair.py": 100.0,
    "tests/test_optimize_full.py": 100.0,
    "tests/test_corpus.py[commons-lang3]": 90.0,
    "tests/test_stage_peg.py": 90.0,
    "tests/test_proguard_pairs.py[jama]": 45.0,  # the svd test saturates once since session 20 (ci22)
    "tests/test_peg.py[fixtures-release17]": 25.0,  # its methods the same as release 8's left out (session 20)
    "tests/test_peg.py[fixtures-release8]": 60.0,
    "tests/test_stage_ir.py": 60.0,
    "tests/test_corpus.py[jsoup]": 50.0,
    "tests/test_corpus.py": 40.0,  # guava whole, through the class-file stage
    "tests/test_corpus.py[jama]": 30.0,
    "tests/test_peg.py": 40.0,
    "tests/test_jdk_verify.py": 40.0,
    "tests/test_pairsuite.py": 40.0,
    "tests/test_interp.py": 40.0,
    "tests/test_validate_heap.py": 32.0,
    "tests/test_validate_ecj_shapes.py": 30.0,
    "tests/test_backend.py": 30.0,
    "tests/test_cli.py": 25.0,
}


def unit_of(nodeid: str) -> str:
    """The work unit of the test ``nodeid``: its file, or ``file[unit]`` for a file :data:`SPLITS` divides."""
    file = nodeid.split("::", 1)[0]
    for pattern, name in SPLITS.get(file, ()):
        found = re.search(pattern, nodeid)
        if found:
            return f"{file}[{found.expand(name)}]"
    return file


def replay(costs: dict[str, float], workers: int = 2) -> list[float]:
    """When each of ``workers`` workers would end if the tests ``costs`` (node id -> seconds, in collection
    order) were handed out as :class:`UnitScheduling` does, each test taking its cost: the units in xdist's order
    (most tests first), the costliest by :data:`UNIT_CPU` taken first; each worker takes one unit, then another
    whenever 2 or fewer of its tests are left (xdist's ``_reschedule``). For reading a run's CPU log (docs/ci.md):
    whether the order, not the work, makes a worker wait at the end."""
    units: dict[str, list[str]] = {}
    for nodeid in costs:
        units.setdefault(unit_of(nodeid), []).append(nodeid)
    queue = dict(sorted(units.items(), key=lambda item: -len(item[1])))

    def take(tests: list[str]) -> None:
        heaviest = max(queue, key=lambda unit: UNIT_CPU.get(unit, 0.0))
        tests.extend(queue.pop(heaviest))

    ends = [0.0] * workers
    pending: list[list[str]] = [[] for _ in range(workers)]
    for mine in pending:
        if queue:
            take(mine)
    for mine in pending:
        if queue and len(mine) <= 2:
            take(mine)
    while any(pending):
        w = min((i for i in range(workers) if pending[i]), key=lambda i: (ends[i], i))
        ends[w] += costs[pending[w].pop(0)]
        if queue and len(pending[w]) <= 2:
            take(pending[w])
    return ends


def _unit_scheduling() -> type:
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        """xdist's scope scheduler over :func:`unit_of`'s units, the costliest left first."""

        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            # xdist hands out the queue's first unit: put the costliest left there (ties keep xdist's order)
            heaviest = max(self.workqueue, key=lambda unit: UNIT_CPU.get(unit, 0.0))
            self.workqueue.move_to_end(heaviest, last=False)
            super()._assign_work_unit(node)

    return UnitScheduling


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None  # xdist's own
    return _unit_scheduling()(config, log)
