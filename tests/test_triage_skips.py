"""The full stage's skips before work that cannot pay (issue 19, ``peggy_jvm/triage.py``): each takes the path
it names on a method that must take it, and not on one that must not; the class's bytes are those of the run
without the skip."""
from __future__ import annotations

from pathlib import Path

import pytest

import peggy_jvm.pipeline as pipeline
from peggy_jvm.codecost import Goal
from peggy_jvm.pipeline import SizeBudget, Stage, optimize_input
from peggy_jvm.triage import MONITORS_REFUSED
from conftest import javac_command
from support.javac_cache import run_javac

SOURCE = """
public class Locks {
    private final Object lock = new Object();
    private int count;
    int guarded(int n, int a, int b) {
        synchronized (lock) {
            for (int i = 0; i < n; i++) { count += a * b + i; }
            return count;
        }
    }
    synchronized int whole(int n, int a, int b) { int s = 0; for (int i = 0; i < n; i++) { s += a * b + i; } return s; }
    static int caught(int[] xs, int a, int b) {
        try {
            return xs[0] + a * b * 1;
        } catch (ArrayIndexOutOfBoundsException e) {
            return -1;
        }
    }
}
"""


@pytest.fixture(scope="module")
def locks_class(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("locks")
    (work / "Locks.java").write_text(SOURCE)
    run_javac([*javac_command(java_home), "-d", str(work / "classes"), str(work / "Locks.java")], check=True)
    return work / "classes" / "Locks.class"


def _run(src: Path, out: Path, triage: bool, mp: pytest.MonkeyPatch, goal: Goal):
    mp.setattr(pipeline, "TRIAGE", triage)
    # the method scope: the synchronized method's rewrite (its invariant product hoisted) grows by 4 bytes, with
    # nothing in this class to pay for it under the input size budget
    _, report = optimize_input(src, out, Stage.FULL, goal=goal, method_timeout=None, size_budget=SizeBudget.METHOD)
    return {m.name: m for m in report.methods}


@pytest.mark.parametrize("goal", [Goal.SPEED, Goal.SIZE])
def test_monitor_block_is_not_saturated(locks_class, tmp_path, monkeypatch, goal):
    """A ``synchronized`` block (a monitor with its catch-any handler, which the reverter refuses in every
    extraction) is neither saturated nor extracted: its reason says why, it has no E-PEG, and the full run
    without the skip keeps it too, after extraction found no candidate the reverter takes. A ``synchronized``
    method (no monitor instruction) and a try/catch without a monitor are not skipped: the first is still
    rewritten (its loop-invariant product), the second still extracted."""
    on = _run(locks_class, tmp_path / "on.class", True, monkeypatch, goal)
    off = _run(locks_class, tmp_path / "off.class", False, monkeypatch, goal)
    assert (tmp_path / "on.class").read_bytes() == (tmp_path / "off.class").read_bytes()
    guarded = on["guarded"]
    assert guarded.epeg_nodes is None and guarded.extraction == "original", guarded.reason
    assert off["guarded"].epeg_nodes is not None and off["guarded"].extraction == "original"
    # --goal size: the size peepholes on the original code may still shorten it (the same bytes either way)
    assert guarded.status == off["guarded"].status
    for name in ("whole", "caught"):
        assert "reverter refuses" not in on[name].reason and on[name].epeg_nodes is not None, on[name].reason
        assert (on[name].status, on[name].reason) == (off[name].status, off[name].reason)
    if goal is Goal.SPEED:
        assert guarded.status == "unchanged"
        assert guarded.reason == f"no cheaper PEG (the reverter refuses every extraction: {MONITORS_REFUSED})"
        assert off["guarded"].reason == "no cheaper PEG (no selection passed the checks)", off["guarded"].reason
        assert on["whole"].status == "rewritten", on["whole"].reason


def test_acceptance_test_does_not_tidy(locks_class, monkeypatch):
    """The extraction's acceptance test of a candidate (``pipeline.revertible``) asks the reverter for its verdict
    only (``revert.check_revertible``): the same verdict as ``revert_peg``, refusal message included, with the
    code never tidied (tidying refuses nothing)."""
    import peggy_jvm.revert.revert as revert
    from peggy_jvm.classfile.hierarchy import ClassHierarchy
    from peggy_jvm.classfile.reader import read_class
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.peg.build import build_peg
    from peggy_jvm.pipeline import revertible

    data = locks_class.read_bytes()
    cf = read_class(data)
    hierarchy = ClassHierarchy([])
    hierarchy.add_lazy_classes({cf.name: data})
    verdicts = {}
    for m in cf.methods:
        ir = lift_method(cf, m, hierarchy)
        peg = build_peg(ir)
        try:
            revert.revert_peg(peg, ir)
            full = None
        except revert.RevertUnsupported as e:
            full = str(e)
        verdicts[m.name] = full
        tidied: list[int] = []
        real = revert.tidy_method
        monkeypatch.setattr(revert, "tidy_method", lambda *a, **k: tidied.append(1) or real(*a, **k))
        assert revertible(ir)(peg) == full and tidied == [], m.name
        monkeypatch.setattr(revert, "tidy_method", real)
    assert verdicts["guarded"] == MONITORS_REFUSED and verdicts["whole"] is None and verdicts["caught"] is None
