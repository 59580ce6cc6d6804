"""Whole-input throughput (issue 19, item 2): the per-method triage (``peggy_jvm/triage.py``) skips only work
whose result would have been "original kept" (same bytes with and without it, and its bound never above what
extraction finds), the pool gets the largest classes first, the progress bar shows counts and the time left,
and the JSON report has the run's peak memory.
"""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from collections import Counter

import pytest

import peggy_jvm.pipeline as pipeline
from peggy_jvm import cli
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.codecost import Goal
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.pipeline import Stage, full_stage_view, optimize_input
from peggy_jvm.pegextract.select import NO_CHEAPER
from peggy_jvm.triage import cost_lower_bound
from peggy_jvm.workers import largest_first
from conftest import javac_command
from support.javac_cache import run_javac

SOURCE = """
public class Triage {
    static int id(int a) { return a; }
    static void verify(boolean e) { if (!e) { throw new IllegalStateException(); } }
    static int other(int x, int y) { if (x != y) { return x; } return 0; }
    static int licm(int n, int a, int b) { int s = 0; for (int i = 0; i < n; i++) { s += a * b + i; } return s; }
    static int sumNonZero(int[] a) {
        int s = 0; for (int i = 0; i < a.length; i++) { if (a[i] != 0) { s += a[i]; } } return s;
    }
    static int fold(int x) { int a = 3; int b = a * 4; if (b > 10) { return x + b; } else { return x - b; } }
}
"""
CANNOT_PAY = re.compile(r"no cheaper PEG \(cannot pay: every extraction costs at least (\d+) >= (\d+)\)"
                        r"(?:; its round trip: .*)?")  # --goal size judges the round trip


@pytest.fixture(scope="module")
def triage_class(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("triage")
    (work / "Triage.java").write_text(SOURCE)
    run_javac([*javac_command(java_home), "-d", str(work / "classes"), str(work / "Triage.java")],
              check=True)
    return work / "classes" / "Triage.class"


def _run(src: Path, out: Path, triage: bool, mp: pytest.MonkeyPatch, goal: Goal = Goal.SPEED, jobs: int = 1):
    mp.setattr(pipeline, "TRIAGE", triage)
    _, report = optimize_input(src, out, Stage.FULL, jobs=jobs, goal=goal)
    return {m.name: m for m in report.methods}, report


@pytest.mark.parametrize("goal", [Goal.SPEED, Goal.SIZE])
def test_triage_skips_only_what_keeps_the_original(triage_class, tmp_path, monkeypatch, goal):
    """With and without the triage: the same class bytes; a method the triage skips is one the full run keeps
    unchanged too (extraction finding nothing cheaper), with the bound it names at least its cost; a method no
    rule touches says so, and a rewritten method is rewritten either way (the loops of ``licm`` and
    ``sumNonZero`` get no verdict under ``speed``: not skipped)."""
    on, _ = _run(triage_class, tmp_path / "on.class", True, monkeypatch, goal)
    off, _ = _run(triage_class, tmp_path / "off.class", False, monkeypatch, goal)
    assert (tmp_path / "on.class").read_bytes() == (tmp_path / "off.class").read_bytes()
    skipped = [name for name, m in on.items() if "cannot pay" in m.reason]
    assert skipped, {n: m.reason for n, m in on.items()}
    for name in skipped:
        m = on[name]
        match = CANNOT_PAY.fullmatch(m.reason)
        assert match, m.reason
        bound, before = map(int, match.groups())
        assert bound >= before == m.cost_before
        assert m.status == "unchanged" and m.extraction == "original"
        assert off[name].status == "unchanged" and off[name].reason.startswith("no cheaper PEG ("), off[name].reason
        assert "cannot pay" not in off[name].reason
    assert on["id"].reason == off["id"].reason
    assert on["id"].reason.startswith("no cheaper PEG (no rule fired)")
    for name, m in off.items():  # the triage never stops a method the full run rewrites
        if m.status == "rewritten":
            assert on[name].status == "rewritten" and on[name].bytes_after == m.bytes_after
    if goal is Goal.SPEED:
        assert on["verify"].status == "unchanged" and "cannot pay" in on["verify"].reason
        assert on["licm"].status == "rewritten"


def test_bound_never_above_what_extraction_finds(triage_class, monkeypatch):
    """The triage's bound is a lower bound: never above the cost of the original PEG extraction keeps, nor of
    the PEG it chooses; it gives one only where the extraction problem's prices are exact (no loops, or
    ``--goal size``)."""
    monkeypatch.setattr(pipeline, "TRIAGE", False)
    data = triage_class.read_bytes()
    cf = read_class(data)
    hierarchy = ClassHierarchy([])
    hierarchy.add_lazy_classes({cf.name: data})
    bounds: dict[tuple[str, Goal], float | None] = {}
    for m in cf.methods:
        code = read_code(m.code_attribute().data, cf.pool)
        ir = lift_method(cf, m, hierarchy, code, read_instructions(code))
        for goal in Goal:
            view = full_stage_view(ir, None, goal, extract=True)
            if view.saturation is None or view.report is None:
                continue
            bound = bounds[m.name, goal] = cost_lower_bound(view.saturation, view.peg, goal)
            if bound is not None:
                assert bound <= view.report.cost_after <= view.report.cost_before, (m.name, goal)
    assert bounds["licm", Goal.SPEED] is None  # a loop: the problem's prices are not peg_cost's
    assert bounds["licm", Goal.SIZE] is not None and bounds["fold", Goal.SPEED] is not None
    assert sum(b is not None for b in bounds.values()) >= 8


def test_largest_first_order():
    """``largest_first``: decreasing size, ties in the order given."""
    items = [("a", 3), ("b", 5), ("c", 3), ("d", 1), ("e", 5)]
    assert [k for k, _ in largest_first(items, lambda item: item[1])] == ["b", "e", "a", "c", "d"]


@pytest.mark.parametrize("split", [None, pipeline.SPLIT_BYTES])
def test_pool_gets_the_largest_classes_first(fixture_classes, tmp_path, monkeypatch, split):
    """``optimize_input`` with ``--jobs 2`` hands the pool its classes largest first (the class bytes); a class
    split into parts of its methods (the default ``split_bytes``) as parts whose predicted work adds up to its
    bytes, each in its place by that work."""
    seen: list[tuple[int, int]] = []

    def fake_pool(items, jobs, task, initializer, initargs, record, died, tick=None, tick_seconds=1.0):
        initializer(*initargs)
        for item in items:
            seen.append((item.entry, item.weight))
            record(item, task(item))

    monkeypatch.setattr(pipeline, "run_pool", fake_pool)
    src = fixture_classes["release17"]
    optimize_input(src, tmp_path / "out", Stage.CLASSFILE, jobs=2, split_bytes=split)
    sizes = sorted((p.stat().st_size for p in src.rglob("*.class")), reverse=True)
    weights = [w for _, w in seen]
    assert weights == sorted(weights, reverse=True) and len(seen) > 3
    per_class: dict[int, int] = {}
    for k, w in seen:
        per_class[k] = per_class.get(k, 0) + w
    assert sorted(per_class.values(), reverse=True) == sizes
    assert (len(seen) > len(sizes)) == (split is not None)  # the fixtures have classes over SPLIT_BYTES


_PREPARED = """
import gc, os, sys
from pathlib import Path
from peggy_jvm import pipeline
from peggy_jvm.choices import Stage
from peggy_jvm.rules import policy

def note(what):
    with open(sys.argv[3], "a") as f:
        f.write(f"{os.getpid()} {what}\\n")

compile_rules, init_worker = policy._select_safe, pipeline._init_worker

def compiled(*args):
    note("compile")
    return compile_rules(*args)

def initialized(*args):
    note(f"init {'peggy_jvm.saturate' in sys.modules} {gc.get_freeze_count() > 0}")
    return init_worker(*args)

policy._select_safe, pipeline._init_worker = compiled, initialized
note(f"main {'peggy_jvm.saturate' in sys.modules}")
pipeline.optimize_input(Path(sys.argv[1]), Path(sys.argv[2]), Stage.FULL, jobs=2, method_timeout=None)
note(f"end {gc.get_freeze_count()}")
"""


@pytest.fixture
def small_input(fixture_classes, tmp_path) -> Path:
    """Four of the smallest fixture classes: tasks enough for two workers, seconds of work."""
    src = tmp_path / "in"
    src.mkdir()
    for name in ("Inheritance$A.class", "Inheritance$B.class", "Sealed17$Shape.class", "Lambdas$Thrower.class"):
        (src / name).write_bytes((fixture_classes["release17"] / name).read_bytes())
    return src


def test_workers_inherit_the_prepared_stage(small_input, tmp_path):
    """``--jobs 2`` in a fresh process: the full stage's modules are imported and its rules compiled once, in
    the main process before the workers are forked (each worker used to import and compile them again), and
    the workers start with the heap frozen for the collector (``workers.heap_frozen``), which the main
    process undoes at the end."""
    log = tmp_path / "log"
    subprocess.run([sys.executable, "-c", _PREPARED, str(small_input), str(tmp_path / "out"), str(log)],
                   check=True, timeout=300)
    rows = [line.split(" ", 1) for line in log.read_text().splitlines()]
    main = rows[0][0]
    assert rows[0][1] == "main False" and rows[-1] == [main, "end 0"]
    assert [what for pid, what in rows if what == "compile"] == ["compile"]  # once in all
    assert [pid for pid, what in rows if what == "compile"] == [main]
    workers = [(pid, what) for pid, what in rows if what.startswith("init")]
    assert len(workers) == 2 and all(pid != main and what == "init True True" for pid, what in workers)


def test_heap_frozen_while_the_tasks_run(small_input, tmp_path, monkeypatch):
    """``--jobs 1``: the tasks run with the heap frozen for the collector and its young generation collected
    less often (``workers.TASK_GC_THRESHOLD``), and both are undone after (a process that optimizes several
    inputs, the tests', keeps collecting its garbage as it did)."""
    import gc
    from peggy_jvm.workers import TASK_GC_THRESHOLD
    seen: list[tuple[int, tuple[int, int, int]]] = []
    work = pipeline._work
    monkeypatch.setattr(pipeline, "_work",
                        lambda task: (seen.append((gc.get_freeze_count(), gc.get_threshold())), work(task))[1])
    assert gc.get_freeze_count() == 0
    threshold = gc.get_threshold()
    assert threshold != TASK_GC_THRESHOLD
    optimize_input(small_input, tmp_path / "out", Stage.CLASSFILE, jobs=1)
    assert len(seen) == 4 and min(frozen for frozen, _ in seen) > 0
    assert {during for _, during in seen} == {TASK_GC_THRESHOLD}
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == threshold


def test_same_output_without_the_preparation_and_the_freeze(triage_class, tmp_path, monkeypatch):
    """The run's preparation (``pipeline._prepare``) and the frozen heap change no byte and no report row: the
    triage fixture (rewrites, triage verdicts, unchanged methods) with both, and with both turned off."""
    import contextlib
    _, frozen = optimize_input(triage_class, tmp_path / "a.class", Stage.FULL, method_timeout=None)
    monkeypatch.setattr(pipeline, "heap_frozen", contextlib.nullcontext)
    monkeypatch.setattr(pipeline, "_prepare", lambda stage, rules: None)
    _, plain = optimize_input(triage_class, tmp_path / "b.class", Stage.FULL, method_timeout=None)
    assert (tmp_path / "a.class").read_bytes() == (tmp_path / "b.class").read_bytes()
    rows = [[(m.name, m.descriptor, m.status, m.reason) for m in r.methods] for r in (frozen, plain)]
    assert rows[0] == rows[1] and any(m.status == "rewritten" for m in frozen.methods)

def test_progress_bar_counts_and_time_left(monkeypatch):
    """On a terminal the bar shows the classes, the caller's counts and its estimate of the time left."""
    from rich.console import Console

    display = cli._ProgressDisplay("optimize", "classes")
    buf = io.StringIO()
    display.console = Console(file=buf, force_terminal=True, width=200)
    display.started -= 90  # as if 90 s had passed
    display.update(30, 120, "400 methods, 12 rewritten", 3.0)
    assert display.bar is not None
    display.bar.refresh()
    display.close()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())
    assert "30/120 classes" in text and "400 methods, 12 rewritten" in text
    assert re.search(r"about 4m3\ds left", text), text  # 3 x 90 s to go


@pytest.mark.parametrize("jobs", [1, 2])
def test_json_has_peak_memory(fixture_classes, tmp_path, jobs):
    _, report = optimize_input(fixture_classes["release17"], tmp_path / "out", Stage.CLASSFILE, jobs=jobs)
    peak = report.to_json()["peak_memory_mib"]
    assert peak["main"] > 10  # a Python process with the class-file layer loaded
    if jobs == 1:
        assert peak["workers"] is None
    else:
        assert peak["workers"] > 10


def test_no_progress_on_a_pipe(fixture_classes, tmp_path):
    """With stderr a pipe (not a terminal) and the default pace, a run shorter than the pace prints no bar and
    no progress line: stderr stays empty (an input large enough for the bar on a terminal)."""
    src = fixture_classes["release17"]
    assert len(list(src.rglob("*.class"))) >= 20  # cli.MIN_BAR_TOTAL: a terminal would get the bar
    env = {k: v for k, v in os.environ.items() if k != "PEGGY_JVM_PROGRESS_INTERVAL"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "peggy_jvm.cli", "optimize", str(src), "-o", str(tmp_path / "o"),
                           "--stage", "ir", "--no-cache"], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=600)
    assert done.returncode == 0, done.stderr
    if time.monotonic() - started < cli.DEFAULT_PROGRESS_INTERVAL:  # a loaded machine may stretch it past one line
        assert done.stderr == ""
    else:
        assert all(line.startswith("peggy-jvm: optimize: ") for line in done.stderr.splitlines()), done.stderr
    assert "\x1b" not in done.stdout + done.stderr


def _problem(spec: dict[str, list[tuple[str, float, tuple[str, ...]]]], root: str):
    from peggy_jvm.extract.problem import ExtractionProblem, Node
    return ExtractionProblem.build([Node(f"{c}.{k}", op, cost, c, kids) for c, nodes in spec.items()
                                    for k, (op, cost, kids) in enumerate(nodes)], [root])


def _optimum(problem) -> float:
    from peggy_jvm.extract import maxsat
    res = maxsat.solve(problem, work=None)
    assert res.status is maxsat.Status.OPTIMAL
    return res.cost


def test_structural_bound_on_shapes():
    """The solver-free bound: exact where the alternatives differ only in which of two equally dear regions they
    use (a comparison and its negation through a free ``not``: the cycle between the two classes does not make
    ``not`` free), never above the optimum where a region is shared (an expensive call below both arms,
    counted once), and below the original's cost where an alternative is cheaper."""
    from peggy_jvm.triage import structural_bound
    flipped = _problem({
        "ret": [("return", 0, ("sig", "phi"))], "sig": [("sigma0", 0, ())],
        "phi": [("phi", 1, ("gt", "k4", "k5")), ("phi", 1, ("le", "k5", "k4"))],
        "gt": [("gt.i", 1, ("p", "k2")), ("lt.i", 1, ("k2", "p")), ("not", 0, ("le",))],
        "le": [("le.i", 1, ("p", "k2")), ("ge.i", 1, ("k2", "p")), ("not", 0, ("gt",))],
        "p": [("param", 0, ())], "k2": [("const.i", 1, ())], "k4": [("const.i", 1, ())], "k5": [("const.i", 1, ())],
    }, "ret")
    assert structural_bound(flipped) == _optimum(flipped) == 5
    shared = _problem({
        "ret": [("add.i", 1, ("a", "b"))],
        "a": [("neg.i", 1, ("call",)), ("sub.i", 1, ("k", "call"))],
        "b": [("neg.i", 1, ("call",))], "call": [("invoke", 20, ("k",))], "k": [("const.i", 1, ())],
    }, "ret")
    assert structural_bound(shared) <= _optimum(shared) == 24
    cheaper = _problem({
        "ret": [("mul.i", 3, ("p", "k2")), ("shl.i", 1, ("p", "k1"))],
        "p": [("param", 0, ())], "k2": [("const.i", 1, ())], "k1": [("const.i", 1, ())],
    }, "ret")
    assert structural_bound(cheaper) <= _optimum(cheaper) == 2


def test_structural_bound_never_above_the_optimum(triage_class, fixture_classes):
    """On the saturated methods of the triage fixture and the release17 fixtures whose problems are exactly
    priced: the structural bound is at most the optimum the solver proves (unbounded work), and it decides at
    least one "cannot pay" on its own."""
    from peggy_jvm.pegextract.cost import peg_cost
    from peggy_jvm.pegextract.peg_problem import build_problem
    from peggy_jvm.triage import exactly_priced, structural_bound
    checked = decided = 0
    for path in [triage_class, *sorted(fixture_classes["release17"].rglob("*.class"))[:3]]:
        data = path.read_bytes()
        cf = read_class(data)
        hierarchy = ClassHierarchy([])
        hierarchy.add_lazy_classes({cf.name: data})
        for m in cf.methods:
            if m.code_attribute() is None:
                continue
            code = read_code(m.code_attribute().data, cf.pool)
            try:
                ir = lift_method(cf, m, hierarchy, code, read_instructions(code))
                view = full_stage_view(ir, None, Goal.SPEED)
            except Exception:
                continue  # not lifted or built: the full stage leaves it as it is
            sat = view.saturation
            if sat is None or not sat.run.fired() or not exactly_priced(sat, Goal.SPEED):
                continue
            problem = build_problem(sat.egraph, sat.root, view.peg, Goal.SPEED).problem
            if len(problem.nodes) > 150:
                continue  # the exact optimum takes too long for a unit test
            bound = structural_bound(problem)
            assert bound is not None and bound <= _optimum(problem) + 1e-9, (cf.name, m.name)
            checked += 1
            decided += bound >= peg_cost(view.peg, Goal.SPEED)
    assert checked >= 5 and decided >= 1, (checked, decided)


def test_triage_decides_without_the_solver(triage_class, tmp_path, monkeypatch):
    """``verify``'s "cannot pay" comes from the structural bound: with the solver proving nothing the verdict
    stays, and so do the class's bytes."""
    import peggy_jvm.triage as triage
    on, _ = _run(triage_class, tmp_path / "on.class", True, monkeypatch)

    monkeypatch.setattr(triage, "_optimum", lambda problem, work: None)
    alone, _ = _run(triage_class, tmp_path / "alone.class", True, monkeypatch)
    assert "cannot pay" in alone["verify"].reason and alone["verify"].reason == on["verify"].reason
    assert (tmp_path / "alone.class").read_bytes() == (tmp_path / "on.class").read_bytes()


def test_report_says_how_each_search_ended(triage_class, tmp_path, monkeypatch):
    """Issue 21's share of searches proved optimal, from the report itself: every row carries how its
    extraction search ended (``search``), also where the method keeps its original code (``extraction`` then
    says only "original"), and the summary counts them. ``verify`` is settled by the triage's bound (the
    original proved no dearer than any extraction); without the triage its search runs and proves its optimum,
    no cheaper than the original; ``id`` has nothing to search; ``licm``'s search proves the rewrite optimal."""
    on, report = _run(triage_class, tmp_path / "on.class", True, monkeypatch)
    assert on["verify"].search == NO_CHEAPER and on["verify"].extraction == "original"
    assert on["id"].search is None and on["id"].reason.startswith("no cheaper PEG (no rule fired)")
    assert on["licm"].status == "rewritten" and on["licm"].search == "optimal (proved)"
    assert on["licm"].extraction == "optimal (proved)"
    assert "full.triage" in on["licm"].time_ms and "full.triage" in on["verify"].time_ms
    rows = report.to_json()
    assert rows["summary"]["search"] == dict(sorted(Counter(m.search for m in on.values() if m.search).items()))
    assert {r["name"]: r["search"] for r in rows["methods"]} == {n: m.search for n, m in on.items()}
    off, _ = _run(triage_class, tmp_path / "off.class", False, monkeypatch)
    assert off["verify"].search == "optimal (proved)" and off["verify"].extraction == "original"
    assert (tmp_path / "on.class").read_bytes() == (tmp_path / "off.class").read_bytes()


REUSE_SOURCE = """
public class Reuse {
    static int fold(int x) { int a = 3; int b = a * 4; if (b > 10) { return x + b; } else { return x - b; } }
    static int cse(int a, int b) { return a * b + a * b; }
    static int licm(int n, int a, int b) { int s = 0; for (int i = 0; i < n; i++) { s += a * b + i; } return s; }
    static int strength(int[] v, int n) { int s = 0; for (int i = 0; i < n; i++) { s += v[i * 4]; } return s; }
    static int branch(int x, int y) { int z = x * 2; if (x > 0) { return z + y * 2; } return z - y * 2; }
    static long shifts(long x) { return x * 8 + x / 1; }
}
"""


@pytest.fixture(scope="module")
def reuse_methods(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> list:
    work = tmp_path_factory.mktemp("reuse")
    (work / "Reuse.java").write_text(REUSE_SOURCE)
    run_javac([*javac_command(java_home), "-d", str(work / "classes"), str(work / "Reuse.java")], check=True)
    data = (work / "classes" / "Reuse.class").read_bytes()
    cf = read_class(data)
    hierarchy = ClassHierarchy([])
    hierarchy.add_lazy_classes({cf.name: data})
    out = []
    for m in cf.methods:
        if m.name.startswith("<"):
            continue
        code = read_code(m.code_attribute().data, cf.pool)
        out.append((m.name, lift_method(cf, m, hierarchy, code, read_instructions(code))))
    return out


def _extractions(methods: list, monkeypatch: pytest.MonkeyPatch, reuse: bool) -> tuple[dict, int]:
    """Every method's extraction (report fields, the chosen PEG printed with its origins) and how many times the
    reverter's acceptance test ran; ``reuse`` False: the checker records no accepted candidate."""
    from peggy_jvm.pegextract import select
    from peggy_jvm.peg.printer import format_peg
    asked = []
    real_check = pipeline.check_revertible
    monkeypatch.setattr(pipeline, "check_revertible", lambda *a: asked.append(1) or real_check(*a))
    real_checker = select.make_checker
    if not reuse:
        monkeypatch.setattr(select, "make_checker", lambda *a, **k: real_checker(*a, **{**k, "accepted": None}))
    out = {}
    for name, ir in methods:
        view = full_stage_view(ir, None, Goal.SPEED, extract=True)
        rep = view.report
        chosen = None if view.chosen is None else (format_peg(view.chosen), sorted(view.chosen.origins.items()),
                                                   sorted(view.chosen.locals.items()))
        out[name] = (rep.status, rep.cost_before, rep.cost_after, rep.notes, rep.selected, rep.search, rep.blocks,
                     chosen)
    monkeypatch.undo()
    return out, len(asked)


def test_the_final_check_takes_the_checkers_acceptance(reuse_methods, monkeypatch):
    """``extract_peg`` checks its final selection again; when the checker accepted that very selection (the
    common case) the PEG it built is taken with its verdict, not built and checked again: the reverter's
    acceptance test runs once less per extracted method, and every report field and the chosen PEG (origins
    included) are those of checking again. A candidate whose phi-profiles took more than a fresh check's allowance
    (``MAX_PROFILE_WORK``, here -1) is checked again, since a fresh check might refuse it."""
    from peggy_jvm.pegextract import select
    with_reuse, asked_reuse = _extractions(reuse_methods, monkeypatch, reuse=True)
    without, asked_without = _extractions(reuse_methods, monkeypatch, reuse=False)
    assert with_reuse == without
    extracted = [name for name, r in with_reuse.items() if r[-1] is not None]
    assert len(extracted) >= 4, with_reuse
    assert asked_reuse <= asked_without - len(extracted), (asked_reuse, asked_without, extracted)
    monkeypatch.setattr(select, "MAX_PROFILE_WORK", -1)
    guarded, asked_guarded = _extractions(reuse_methods, monkeypatch, reuse=True)
    assert guarded == without and asked_guarded == asked_without
