"""Budgets of ``optimize`` (peggy_jvm/budget.py, docs/cli.md "Budgets") and the worker processes of ``--jobs``:
reproducible output (work budgets decide it: two runs, ``--jobs 1`` and ``--jobs 2``, different
``PYTHONHASHSEED``s, a slowed-down machine and a 4x smaller safety net all give the same bytes), and the
wall-clock safety net (``--method-timeout``) that keeps a method's original bytes, with a named reason, when
it fires, leaving every other method as in the normal run.

Timing is never asserted tightly (a loaded 2-core machine): the tests assert structure (statuses, reasons,
byte-identical output) and bounds the pipeline guarantees by construction.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from peggy_jvm.budget import DEFAULT_METHOD_TIMEOUT, MethodTimeout, SafetyNet, alarm, checkpoint, cooperative
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.pipeline import Stage, optimize_input
from conftest import javac_command
from support.javac_cache import run_javac

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
    run_javac([*javac_command(java_home), "-d", str(d), *[str(d / f"{n}.java") for n in SOURCES]],
              check=True)
    for p in d.glob("*.java"):
        p.unlink()
    return d


def _rows(report) -> dict[str, object]:
    return {m.name: m for m in report.methods}



def _outputs(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.class"))}


def _codes(data: bytes) -> dict[str, bytes]:
    """Each method's Code attribute bytes, by name + descriptor."""
    cf = read_class(data)
    return {m.name + m.descriptor: (a.data if (a := m.code_attribute()) is not None else b"") for m in cf.methods}


@pytest.fixture(scope="module")
def normal(classes, tmp_path_factory) -> tuple[dict[str, bytes], dict]:
    """The reference run: in-process, default safety net."""
    out = tmp_path_factory.mktemp("normal")
    _, report = optimize_input(classes, out, Stage.FULL, jobs=1)
    return _outputs(out), _rows(report)


# -- reproducible output -------------------------------------------------------------------------------------
def test_the_solver_proves_what_it_must_and_some_method_is_rewritten(normal):
    """The reference run does real work (so that the comparisons below can fail): the solver proves the
    extraction of NEEDS_SOLVER optimal (greedy alone does not), and methods are rewritten."""
    _, rows = normal
    for name in NEEDS_SOLVER:
        assert rows[name].extraction == "optimal (proved)", (name, rows[name])
    assert any(m.status == "rewritten" for m in rows.values())
    assert not any(m.status == "fallback" for m in rows.values())


def test_a_second_run_and_jobs_2_give_identical_bytes(classes, normal, tmp_path):
    """The same input optimized again, and on 2 worker processes: byte-identical classes, the same rows."""
    outputs, rows = normal
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        _, report = optimize_input(classes, out, Stage.FULL, jobs=jobs)
        assert _outputs(out) == outputs, jobs
        assert {n: (m.status, m.extraction, m.cost_after) for n, m in _rows(report).items()} == \
               {n: (m.status, m.extraction, m.cost_after) for n, m in rows.items()}, jobs


def test_other_hash_seeds_give_identical_bytes(classes, normal, tmp_path):
    """Two CLI processes with different PYTHONHASHSEEDs (string hashing, so the order of sets and dicts of
    strings, differs between them): the same bytes as each other and as the reference run."""
    outputs, _ = normal
    for seed in ("1", "2"):
        out = tmp_path / f"seed{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([str(Path(sys.executable).parent / "peggy-jvm"), "optimize", str(classes), "-o",
                               str(out), "--jobs", seed], env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert _outputs(out) == outputs, seed


def test_a_slow_machine_and_a_4x_smaller_safety_net_change_nothing(classes, normal, tmp_path, monkeypatch):
    """Artificial slowness (every e-graph rebuild and every checked selection sleeps) under a safety net 4x
    smaller than the default (still far above what the work needs): the same bytes as the reference run.
    With wall-clock budgets the slowed run stopped saturation and the solver early and extracted less."""
    from peggy_jvm.egraph.egraph import EGraph
    from peggy_jvm.extract import maxsat

    outputs, _ = normal
    rebuild, check = EGraph.rebuild, maxsat._Worker.check

    def slow_rebuild(self, *a, **k):
        time.sleep(0.002)
        return rebuild(self, *a, **k)

    def slow_check(self, *a, **k):
        time.sleep(0.02)
        return check(self, *a, **k)

    monkeypatch.setattr(EGraph, "rebuild", slow_rebuild)
    monkeypatch.setattr(maxsat._Worker, "check", slow_check)
    out = tmp_path / "slow"
    _, report = optimize_input(classes, out, Stage.FULL, jobs=1, method_timeout=DEFAULT_METHOD_TIMEOUT / 4)
    assert not [m for m in report.methods if m.status == "fallback"]
    assert _outputs(out) == outputs


# -- the safety net ------------------------------------------------------------------------------------------
#: the net of the test whose one slow method sleeps past it: the net reads the wall clock, and every other method
#: must finish within it however loaded the machine (at 0.5 s another method fell back too at load 27: the
#: largest, ``strength``, takes 0.07-0.09 s of CPU and 0.9-1.5 s of wall-clock time at load 34)
NET_S = 3.0


def test_a_net_that_fires_keeps_that_method_and_leaves_the_others_as_in_the_normal_run(classes, normal, tmp_path,
                                                                                     monkeypatch):
    """One method made slow (its lifting sleeps past the net): it alone falls back, reason ``timeout:``, with
    its original bytes; every other method's code is byte-identical to the normal run's."""
    import peggy_jvm.pipeline as pipeline

    outputs, rows = normal
    lift = pipeline.lift_method

    def slow_lift(cf, m, *a, **k):
        if m.name == "dbl":
            time.sleep(NET_S + 0.2)  # asleep: wall-clock time only, no CPU
        return lift(cf, m, *a, **k)

    monkeypatch.setattr(pipeline, "lift_method", slow_lift)
    out = tmp_path / "net"
    _, report = optimize_input(classes, out, Stage.FULL, jobs=1, method_timeout=NET_S)
    got = _rows(report)
    assert got["dbl"].status == "fallback" and got["dbl"].reason.startswith("timeout: "), got["dbl"]
    assert rows["dbl"].status == "rewritten"  # the net changed this one's outcome
    for name, m in got.items():
        if name != "dbl":
            assert (m.status, m.extraction) == (rows[name].status, rows[name].extraction), name
    original = _codes((classes / "BudgetB.class").read_bytes())
    now, before = _codes((out / "BudgetB.class").read_bytes()), _codes(outputs["BudgetB.class"])
    for key, code in now.items():
        assert code == (original[key] if key.startswith("dbl(") else before[key]), key
    assert _outputs(out)["BudgetA.class"] == outputs["BudgetA.class"]


def test_a_slow_self_check_stops_at_the_net_and_the_other_methods_are_as_in_the_normal_run(classes, normal, tmp_path,
                                                                                          monkeypatch):
    """The self-check reads the shared class hierarchy, so no alarm interrupts it: the net stops it at its
    checkpoints (budget.cooperative). One method's self-check made slow (every e-graph rebuild of its proof
    sleeps): it falls back with the self-check named in its reason, stopped inside the proof (not by the
    end-of-method check, whose reason says "at the end"), with its original bytes; the class's other method
    and the other class are byte-identical to the normal run's."""
    from peggy_jvm.egraph.egraph import EGraph
    from peggy_jvm.validate import selfcheck

    outputs, rows = normal
    assert rows["licm"].status == rows["fold"].status == "rewritten"
    slow = {"on": False, "sleeps": 0}
    prove_rewrite, rebuild = selfcheck.prove_rewrite, EGraph.rebuild

    def slow_prove_rewrite(cf, m, *a, **k):  # both its ways: in the optimizer's E-PEG, and the full proof
        slow["on"] = m.name == "licm"
        try:
            return prove_rewrite(cf, m, *a, **k)
        finally:
            slow["on"] = False

    def slow_rebuild(self, *a, **k):
        if slow["on"]:
            slow["sleeps"] += 1
            time.sleep(0.8)  # three rebuilds pass the 2 s net (the proof in the optimizer's E-PEG has few)
        return rebuild(self, *a, **k)

    monkeypatch.setattr(selfcheck, "prove_rewrite", slow_prove_rewrite)
    monkeypatch.setattr(EGraph, "rebuild", slow_rebuild)
    out = tmp_path / "slow-self-check"
    _, report = optimize_input(classes, out, Stage.FULL, jobs=1, method_timeout=2.0)
    got = _rows(report)
    assert got["licm"].status == "fallback", got["licm"]
    assert got["licm"].reason.startswith("timeout: the self-check stopped at the 2 s safety net"), got["licm"]
    assert "at the end" not in got["licm"].reason
    assert slow["sleeps"] >= 1
    assert got["fold"].status == "rewritten"
    original = _codes((classes / "BudgetA.class").read_bytes())
    now, before = _codes((out / "BudgetA.class").read_bytes()), _codes(outputs["BudgetA.class"])
    assert now["licm(III)I"] == original["licm(III)I"]
    assert now["fold(I)I"] == before["fold(I)I"] != original["fold(I)I"]
    assert _outputs(out)["BudgetB.class"] == outputs["BudgetB.class"]


def test_a_spent_net_keeps_the_original_bytes_with_a_named_reason(classes, tmp_path):
    """A net too small for anything: every method with code falls back with a ``timeout:`` reason naming
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


def test_every_method_ends_within_its_net_or_falls_back(classes, tmp_path):
    """A row that is not a timeout fallback took no more than the net (the pipeline checks at the end, whatever
    a sub-stage did). Several nets, so that some sub-stage boundary is crossed by some method whatever the
    machine's load."""
    for net in (0.05, 0.2):
        _, report = optimize_input(classes, tmp_path / f"b{net}", Stage.FULL, jobs=1, method_timeout=net)
        for m in report.methods:
            if not m.bytes_before:
                continue
            if m.status == "fallback":
                assert m.reason.startswith("timeout: "), (net, m.name, m.reason)
            else:
                # the row's time is the time the pipeline checked against the net
                assert m.time_ms["full"] <= net * 1000, (net, m.name, m.status, m.time_ms)


def test_rewritten_rows_report_the_sub_stage_times(normal):
    _, rows = normal
    rewritten = [m for m in rows.values() if m.status == "rewritten"]
    assert rewritten
    for m in rewritten:
        assert {"full", "full.prepare", "full.saturate", "full.extract", "full.lower",
                "full.self_check"} <= set(m.time_ms), m.time_ms
        assert m.extraction in ("optimal (proved)", "best found", "greedy")
    for m in rows.values():
        assert m.to_json()["extraction"] == m.extraction


def test_the_net_checks_and_the_alarm_interrupts_code_that_checks_no_clock():
    SafetyNet(None, start=time.perf_counter() - 99).check("extraction")  # no net: never fires
    SafetyNet(2.0, start=time.perf_counter() - 1.9).check("anything")  # 0.1 s left: not yet
    with pytest.raises(MethodTimeout, match="before extraction"):
        SafetyNet(2.0, start=time.perf_counter() - 2.5).check("extraction")
    t0 = time.perf_counter()
    with pytest.raises(MethodTimeout, match="busy loop interrupted"):
        with alarm(SafetyNet(0.05), "busy loop"):
            while True:  # checks no clock: only the alarm can stop it
                pass
    assert time.perf_counter() - t0 < 5
    import signal
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN)
    with alarm(SafetyNet(5.0), "quick"):  # finishes in time: nothing raised, nothing left armed
        pass
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    with alarm(SafetyNet(None), "none"):  # no net: no alarm at all
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    # cooperative: a checkpoint raises only inside a block whose net has passed, the innermost block's net
    checkpoint()  # outside every block: nothing
    with cooperative(SafetyNet(2.0, start=time.perf_counter() - 2.5), "the outer check"):
        with cooperative(SafetyNet(5.0), "the inner check"):
            checkpoint()  # the inner net has time left
        with pytest.raises(MethodTimeout, match="the outer check stopped at the 2 s safety net"):
            checkpoint()
    checkpoint()


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


# -- the extraction checker's budget for the reverter (pegextract/select.py, ACCEPT_WORK) ---------------------
@pytest.mark.slow  # the slow tier: 6 s of CPU, over the fast tier's share (docs/ci.md, session 16)
def test_the_reverter_s_work_per_extraction_stays_within_its_budget(fixture_classes, tmp_path, monkeypatch):
    """WideLocals.manyInts (300 chained int locals, a PEG of ~2 200 nodes) once spent seconds of CPU per
    candidate in the reverter, uncounted (5 candidates, ~25 M node pairs): under load the safety net fired and
    the output depended on the machine. Now every method's reverter work, in node pairs, stays within
    ACCEPT_WORK plus the one re-check of the extracted PEG, and manyInts is still rewritten, by the budget and
    not by the net (no net)."""
    import peggy_jvm.pipeline as pipeline
    from peggy_jvm.pegextract.select import ACCEPT_WORK, accept_cost

    spent: dict[str, list[int]] = {}
    real = pipeline.revertible

    def counting(ir):
        accept = real(ir)

        def counted(peg):
            spent.setdefault(ir.name, []).append(accept_cost(peg))
            return accept(peg)
        return counted

    monkeypatch.setattr(pipeline, "revertible", counting)
    _, report = optimize_input(fixture_classes["release17"] / "WideLocals.class", tmp_path / "W.class", Stage.FULL,
                               method_timeout=None)
    rows = _rows(report)
    assert rows["manyInts"].status == "rewritten", rows["manyInts"]
    assert max(spent["manyInts"]) > ACCEPT_WORK // 4  # a candidate large enough for the budget to matter
    for name, costs in spent.items():
        assert sum(costs) <= ACCEPT_WORK + max(costs), (name, costs)
