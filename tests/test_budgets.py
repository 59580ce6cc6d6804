"""Per-method budgets of ``optimize`` (``--method-timeout``) and the worker processes of ``--jobs``
(peggy_jvm/pipeline.py): the budget split over the full stage's sub-stages, timeouts that keep the original
bytes with a named reason, and the MaxSAT solver inside pool workers.

Timing is never asserted tightly (a loaded 2-core machine): the tests assert structure (statuses, reasons,
byte-identical output) and bounds the pipeline guarantees by construction.
"""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from peggy_jvm.classfile.reader import read_class
from peggy_jvm.pipeline import (DEFAULT_FULL_BUDGET, MethodBudget, MethodTimeout, Stage, _alarm,
                                optimize_input)

SOURCES = {
    "BudgetA": """
public class BudgetA {
    static int licm(int n, int a, int b) { int s = 0; for (int i = 0; i < n; i++) { s += a * b + i; } return s; }
    static int strength(int n) { int s = 0; for (int i = 0; i < n; i++) { s += i * 5; } return s; }
    static int fold(int x) { int a = 3; int b = a * 4; if (b > 10) { return x + b; } else { return x - b; } }
}
""",
    "BudgetB": """
public class BudgetB {
    static int divs(int x, int y) { int q = x / 3; if (y != 0) { q += x % y; } return q * 8; }
    static double dbl(double d, int n) { double s = 0; for (int i = 0; i < n; i++) { s += d * 2.0; } return s; }
}
""",
}
#: methods whose optimal extraction needs the solver (greedy alone does not prove it: "greedy" without RC2)
NEEDS_SOLVER = ("licm", "strength", "divs", "dbl")


@pytest.fixture(scope="module")
def classes(java_home, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("budgets")
    for name, text in SOURCES.items():
        (d / f"{name}.java").write_text(text)
    subprocess.run([str(java_home / "bin" / "javac"), "-d", str(d), *[str(d / f"{n}.java") for n in SOURCES]],
                   check=True)
    for p in d.glob("*.java"):
        p.unlink()
    return d


def _rows(report) -> dict[str, object]:
    return {m.name: m for m in report.methods}


# -- --jobs N uses the solver --------------------------------------------------------------------------------
def test_jobs_2_extracts_with_the_solver_like_jobs_1(classes, tmp_path):
    """Pool workers are not daemonic, so the extractor forks its RC2 workers there too: the extraction status
    of every method is the same with 2 workers as in-process (a daemonic worker fell back to greedy: the
    methods of NEEDS_SOLVER came out "greedy"). A generous budget keeps the solver from running out of time."""
    statuses = {}
    for jobs in (1, 2):
        _, report = optimize_input(classes, tmp_path / f"j{jobs}", Stage.FULL, jobs=jobs, method_timeout=60.0)
        rows = _rows(report)
        statuses[jobs] = {(m.class_name, m.name): m.extraction for m in report.methods}
        for name in NEEDS_SOLVER:
            assert rows[name].extraction == "optimal (proved)", (jobs, name, rows[name])
        assert not any("daemonic" in m.reason for m in report.methods)
    assert statuses[1] == statuses[2]
    # the same classes written either way
    for p in classes.glob("*.class"):
        assert (tmp_path / "j1" / p.name).read_bytes() == (tmp_path / "j2" / p.name).read_bytes(), p.name


# -- budgets ------------------------------------------------------------------------------------------------
def test_a_spent_budget_keeps_the_original_bytes_with_a_named_reason(classes, tmp_path):
    """A budget too small for anything: every method with code falls back with a ``timeout:`` reason naming
    where it stopped, and every class is written back byte-identical (never half-written)."""
    for jobs in (1, 2):
        out = tmp_path / f"tiny{jobs}"
        _, report = optimize_input(classes, out, Stage.FULL, jobs=jobs, method_timeout=1e-6)
        with_code = [m for m in report.methods if m.bytes_before]
        assert with_code
        for m in with_code:
            assert m.status == "fallback" and m.reason.startswith("timeout: "), (m.name, m.status, m.reason)
            assert m.bytes_after == m.bytes_before and m.cost_after == m.cost_before
        for p in classes.glob("*.class"):
            assert (out / p.name).read_bytes() == p.read_bytes(), p.name


def test_every_method_ends_within_its_budget_or_falls_back(classes, tmp_path):
    """With a hard budget, a row that is not a timeout fallback took no more than the budget (the pipeline
    checks at the end, whatever a sub-stage did); timeouts name the budget. Several budgets, so that some
    sub-stage boundary is crossed by some method whatever the machine's load."""
    for budget in (0.05, 0.2, 1.0):
        _, report = optimize_input(classes, tmp_path / f"b{budget}", Stage.FULL, jobs=1, method_timeout=budget)
        for m in report.methods:
            if not m.bytes_before:
                continue
            if m.status == "fallback":
                assert m.reason.startswith("timeout: "), (budget, m.name, m.reason)
            else:
                # the row's time is the time the pipeline checked against the budget
                assert m.time_ms["full"] <= budget * 1000, (budget, m.name, m.status, m.time_ms)


def test_rewritten_rows_report_the_sub_stage_times(classes, tmp_path):
    _, report = optimize_input(classes, tmp_path / "out", Stage.FULL, jobs=1, method_timeout=60.0)
    rewritten = [m for m in report.methods if m.status == "rewritten"]
    assert rewritten
    for m in rewritten:
        assert {"full", "full.prepare", "full.saturate", "full.extract", "full.lower",
                "full.self_check"} <= set(m.time_ms), m.time_ms
        assert m.extraction in ("optimal (proved)", "best found", "greedy")
    for m in report.methods:
        assert m.to_json()["extraction"] == m.extraction


def test_the_budget_split():
    """Shares: at most the nominal part of the budget, at most a share of what is left after the reserve,
    never below the minimum slice; a hard budget raises once spent, a soft one never."""
    b = MethodBudget(2.0, hard=True)
    assert 0.45 <= b.share(0.25, 0.25) <= 0.5  # nothing spent: the nominal quarter
    b.reserve = 1.0
    assert b.share(0.25, 0.25) <= 0.25  # a quarter of the ~1 s left after the reserve
    late = MethodBudget(2.0, hard=True, start=time.perf_counter() - 1.9)
    assert late.share(0.5, 0.55) <= 0.06
    assert late.share(0.5, 0.55, later=1.0) == pytest.approx(0.02)  # the minimum slice
    late.check("anything")  # 0.1 s left: not spent yet
    spent = MethodBudget(2.0, hard=True, start=time.perf_counter() - 2.5)
    with pytest.raises(MethodTimeout, match="before extraction"):
        spent.check("extraction")
    MethodBudget(DEFAULT_FULL_BUDGET, hard=False, start=time.perf_counter() - 99).check("extraction")


def test_the_alarm_interrupts_code_that_checks_no_clock_and_is_disarmed_after():
    b = MethodBudget(1.0, hard=True)
    t0 = time.perf_counter()
    with pytest.raises(MethodTimeout, match="busy loop interrupted"):
        with _alarm(0.05, b, "busy loop"):
            while True:  # checks no clock: only the alarm can stop it
                pass
    assert time.perf_counter() - t0 < 5
    import signal
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN)
    with _alarm(5.0, b, "quick"):  # finishes in time: nothing raised, nothing left armed
        pass
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    with _alarm(None, b, "soft"):  # no hard budget: no alarm at all
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0


def _dying_work(item: tuple) -> tuple:
    import os
    import signal
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")


def test_a_worker_that_dies_leaves_its_classes_as_they_were(classes, tmp_path, monkeypatch):
    """A pool worker killed mid-run (out of memory, a signal): its classes are written back unchanged, every
    method with code a ``fallback`` naming the dead worker; the run still completes."""
    import peggy_jvm.pipeline as pipeline

    monkeypatch.setattr(pipeline, "_work", _dying_work)  # the forked workers inherit the patched module
    _, report = optimize_input(classes, tmp_path / "out", Stage.FULL, jobs=2, method_timeout=10.0)
    with_code = [m for m in report.methods if m.bytes_before]
    assert with_code and all(m.status == "fallback" and "worker process died" in m.reason for m in with_code)
    for p in classes.glob("*.class"):
        assert (tmp_path / "out" / p.name).read_bytes() == p.read_bytes(), p.name
    assert {read_class(p.read_bytes()).name for p in classes.glob("*.class")} == {m.class_name for m in report.methods}
