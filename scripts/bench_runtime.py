#!/usr/bin/env python3
"""The runtime benchmark: how fast and how big the optimizer's output is, against what javac wrote.

    scripts/bench_runtime.py [--kernels-only|--jars-only] [--jars NAME,...] [--quick] [--rounds N]
                             [--remeasure N] [--jobs N] [--json OUT] [--keep DIR] [OPTIMIZE-ARGS ...]

What it owns (the kernels, the harness's modes and its run are ``tests/support/bench_harness.py``'s, shared with
``tests/test_bench_runtime.py``)
    * The kernel part: the kernels (``bench_harness.KERNELS``: ``fixtures/src/bench/BenchKernels.java``, the size
      each runs at, its opportunities) compiled (``fixture_build.build_bench``), optimized by ``peggy-jvm optimize``
      (any argument this script does not know, e.g. ``--stage peg`` or ``--method-timeout 5``, is passed on to
      optimize), then ``tests/java/bench/BenchRunner.java`` run three times: once under ``-Xverify:all`` (one
      call per side, a check), once under ``-Xint`` and once with the default JIT. The harness loads the original
      and the optimized class through two class loaders in one JVM (and the original again through a third: the
      A/A control, what noise alone makes of identical code), calls them in rotation, measures the calling
      thread's CPU time, discards warm-up calls, reports the median per side, and compares the results of every
      call (a difference fails the run, naming the kernel).
    * The ratio of a run is the optimized side's median over the geometric mean of the original's two copies
      (A and the control C, :func:`run_ratio`): each copy's placement shifts its time by more than the noise.
    * Each timed run is two harness JVMs, each with half the mode's samples (:func:`run_both_orders`): the
      original loaded first (A and C the original, B the optimized class) and the optimized class loaded first
      (A and C the optimized class, B the original); the run's ratio is the geometric mean of the first's ratio
      and the inverse of the second's (:func:`counterbalanced`), its A/A the geometric mean of their controls.
      The side loaded once, between two copies of other code, runs slower than it would as the majority: under
      ``-Xint`` BenchKernels.shellSort's rewrite measured 0.89 loaded once and the original 1.20-1.25 loaded once
      against it (a 4-5% penalty on whichever is B); no such penalty when all three sides are the same code.
    * A kernel whose optimized method is the original's code (the same bytes over the same constants) is not
      timed: its ratio is 1 by construction (``same bytes`` in the table), not a reading of the machine's noise.
    * Re-measurement (:func:`suspects`): a kernel whose ratio is above the mode's goal (``XINT_WORST``,
      ``JIT_WORST``), or whose A/A is as far from 1, is run again ``REMEASURE_RUNS - 1`` times (fresh JVMs,
      twice the samples: more alternating rounds) before the table is printed, and the median of all its runs
      (the first included) is reported, each run listed under the table. A slowdown that reproduces stays a
      slowdown (two runs of three above the goal keep the median above it).
    * Noise, named (:func:`within_noise`): a kernel still over its goal whose ratio is no farther above 1 than its
      A/A is from 1 is listed as noise in the goal's line, and the goal is met; one beyond its A/A fails it, so
      a FAIL means a slowdown identical code did not show in the same runs.
    * The jar part (slow: optimizing commons-lang3 takes minutes; ``--kernels-only`` skips it, ``--jars-only``
      runs it alone): per corpus jar (``scripts/fetch_corpus.sh``), ``optimize`` of the whole jar (any
      ``--goal``), ProGuard's intra-method output (``proguard.proguard_intra``), the methods rewritten and their
      predicted gain (the JSON report's emitted_cost_before/after, the emitted code's cost the rewrite was kept
      by, and cost_before/cost_after, the PEG cost model's, summed over the rewritten methods), the bytecode of
      all methods of the three jars, the per-method optimization time p50 / p95 (the report's ``cpu_ms``: the CPU
      time of each method with code in its worker, :func:`method_cpu_seconds`; results from the result cache are
      counted apart, their CPU being an earlier run's), the rewrites the input size budget withdrew, every class
      of the optimized jar loaded and linked under ``-Xverify:all`` (``tests/java/VerifyClasses.java``,
      :func:`verify_jar`: a refused class makes the exit status 1), and our workload (``tests/java/workloads/``)
      run ``--rounds`` times on the original, the optimized and the original jar again (the A/A control), in
      rotation, in separate JVMs (``workloads.run_workload``): identical output required, ratios of the median
      CPU times. Its goals (:func:`jar_goals`): the rewritten methods no larger
      than their originals, every class verified, under ``--goal size`` the jar's code smaller than the
      original's and ProGuard's, on commons-lang3 the per-method time p50 / p95 within the issue's bounds.

Output: one table (kernels, geometric means, the issue's goals as pass/FAIL, then the jars). Every ratio is
optimized / original from alternating runs (below 1 is faster or smaller): the machine is shared, so absolute
times are not reported. ``--json OUT`` writes the rows. Exit status: 0 measured (goals missed are reported, not
an error); 1 a difference in results or workload output, or a verification failure; 2 a tool failed.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from peggy_jvm.classfile.reader import read_class, read_code  # noqa: E402
from tests.support import fixture_build, proguard, workloads  # noqa: E402
from tests.support.bench_harness import (  # noqa: E402
    CHECK, FULL_MODES, KERNEL_CLASS, KERNELS, QUICK_MODES, BenchError, Difference, Kernel, Mode, code_bytes,
    compile_harness, run_harness,
)
from tests.support.corpus import JAR_DEPS, WORKLOAD_OF, fetch_jars, harness_dir, percentile  # noqa: E402

DEFAULT_JARS = ("jama", "commons-lang3", "jsoup")


# the goals (issue 15, item 5)
XINT_WORST = 1.02  # -Xint: no kernel slower than this
XINT_OPPORTUNITY_GEOMEAN = 0.90  # -Xint: geometric mean over the kernels with an opportunity at most this
JIT_WORST = 1.03  # default JIT: no kernel slower than this
WORST = {"xint": XINT_WORST, "jit": JIT_WORST}
TIMED_JAR, P50_GOAL_S, P95_GOAL_S = "commons-lang3", 0.1, 2.0  # per-method optimization time on this jar

#: a suspect kernel (see :func:`suspects`) is measured this many times in all, the median reported
REMEASURE_RUNS = 3
#: the re-measurements record this many times the mode's samples (more alternating rounds)
REMEASURE_SAMPLES = 2


@dataclass
class KernelRow:
    name: str
    n: int
    opportunities: str
    status: str = "missing"
    bytes_before: int = 0
    bytes_after: int = 0
    cost_before: float | None = None  # the PEG cost model's (pegextract/cost.py)
    cost_after: float | None = None
    #: the emitted code's cost (codecost.py): what the full stage decided with (``_check_emitted``)
    emitted_before: float | None = None
    emitted_after: float | None = None
    ratio: dict[str, float] = field(default_factory=dict)  # mode -> median opt / median orig
    control: dict[str, float] = field(default_factory=dict)  # mode -> median orig again / median orig (A/A)
    samples: dict[str, int] = field(default_factory=dict)
    result: str = ""
    same_bytes: bool = False  # the optimized method is the original's code: not timed, ratio 1
    runs: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # mode -> (ratio, A/A) of every run
    #: mode -> per run, the ratio with the optimized class loaded second and with the original loaded second
    orders: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


@dataclass
class JarRow:
    name: str
    methods: int = 0
    rewritten: int = 0
    fallback: int = 0
    cost_before: float = 0.0  # over the rewritten methods: the PEG cost model's
    cost_after: float = 0.0
    emitted_before: float = 0.0  # over the rewritten methods: the emitted code's (what the decision used)
    emitted_after: float = 0.0
    rewritten_bytes_before: int = 0
    rewritten_bytes_after: int = 0
    code_orig: int = 0  # bytecode of every method of the jar
    code_opt: int = 0
    code_proguard: int = 0
    workload: str = ""
    workload_rounds: int = 0
    workload_cpu_ratio: float | None = None
    workload_cpu_control: float | None = None  # the original against itself (A/A)
    goal: str = "speed"  # the optimize run's --goal (its report's)
    time_p50: float = 0.0  # per-method optimization CPU time (the report's cpu_ms, cache hits left out), seconds
    time_p95: float = 0.0
    cached: int = 0  # methods whose result came from the result cache (no CPU time of this run)
    withdrawn: int = 0  # rewrites the input size budget withdrew (original code kept)
    optimize_seconds: float = 0.0  # the report's whole run
    verify_errors: int | None = None  # VerifyClasses under -Xverify:all on the optimized jar (None: not run)

    @property
    def predicted_gain(self) -> float:
        return 1.0 - self.cost_after / self.cost_before if self.cost_before else 0.0

    @property
    def emitted_gain(self) -> float:
        return 1.0 - self.emitted_after / self.emitted_before if self.emitted_before else 0.0


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def optimize(source: Path, out: Path, report: Path, extra: list[str]) -> dict:
    """``peggy-jvm optimize SOURCE -o OUT --json REPORT EXTRA...``; the report as a dict."""
    cmd = [sys.executable, "-m", "peggy_jvm.cli", "optimize", str(source), "-o", str(out), "--json", str(report),
           *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, cwd=ROOT)
    if proc.returncode != 0:
        raise BenchError(f"optimize {source.name} failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return json.loads(report.read_text())


def same_code(orig: Path, opt: Path, names: set[str]) -> set[str]:
    """The methods of ``names`` whose code in the class file ``opt`` is the one in ``orig``: the same code bytes and
    exception table over the same constants (the original pool a prefix of the optimized one, entry by entry;
    a renumbered pool makes nothing the same)."""
    a, b = read_class(orig.read_bytes()), read_class(opt.read_bytes())
    if b.pool.entries[:len(a.pool.entries)] != a.pool.entries:
        return set()
    out = set()
    codes = {(m.name, m.descriptor): m.code_attribute() for m in b.methods}
    for m in a.methods:
        ca, cb = m.code_attribute(), codes.get((m.name, m.descriptor))
        if m.name in names and ca is not None and cb is not None:
            x, y = read_code(ca.data, a.pool), read_code(cb.data, b.pool)
            if x.code == y.code and x.exception_table == y.exception_table:
                out.add(m.name)
    return out


def suspects(rows: dict[str, KernelRow], mode: str, kernels: tuple[Kernel, ...]) -> tuple[Kernel, ...]:
    """The kernels whose last run in ``mode`` says too little: the ratio above the mode's goal, or the A/A (the
    original against itself) at least as far from 1 in either direction, so that noise alone could make the
    ratio fail."""
    worst = WORST.get(mode)
    if worst is None:
        return ()

    def out(r: KernelRow) -> bool:
        ratio, control = r.ratio[mode], r.control.get(mode, 1.0)
        return ratio > worst or not 1 / worst <= control <= worst
    return tuple(k for k in kernels if not rows[k.name].same_bytes and out(rows[k.name]))


def run_ratio(fields: dict[str, str]) -> float:
    """One harness run's ratio: the optimized side's median time over the original's, where the original's is the
    geometric mean of its two copies' medians (A and the control C) when the control ran, else A's alone. Two
    copies of the same code differ by more than the noise of one (crc32's C/A, the same code in every -Xint
    run recorded, was 1.02-1.09 in all 8, and its B/A followed it), and B is loaded between them: against A
    alone, A's own offset is read as B's."""
    if "ctl_ns" in fields:
        a, c = float(fields["orig_ns"]), float(fields["ctl_ns"])
        if a > 0 and c > 0:
            return float(fields["opt_ns"]) / math.sqrt(a * c)
    return float(fields["ratio"])


def counterbalanced(forward: dict[str, str], backward: dict[str, str]) -> dict[str, str]:
    """One kernel's figures from the two harness runs of :func:`run_both_orders`: ``forward`` timed the optimized
    class as B (the original as A and C), ``backward`` the original as B. The ratio is the geometric mean of the
    forward ratio and the inverse of the backward one, so an effect of being B cancels; the A/A the geometric
    mean of both runs' controls (each C/A of identical code)."""
    out = {"ratio": f"{math.sqrt(run_ratio(forward) / run_ratio(backward)):.6f}",
           "samples": str(int(forward["samples"]) + int(backward["samples"])), "result": forward["result"],
           "forward": f"{run_ratio(forward):.6f}", "backward": f"{run_ratio(backward):.6f}"}
    if "control" in forward and "control" in backward:
        out["control"] = f"{math.sqrt(float(forward['control']) * float(backward['control'])):.6f}"
    return out


def run_both_orders(harness: Path, orig: Path, opt: Path, mode: Mode, kernels: tuple[Kernel, ...]
                    ) -> dict[str, dict[str, str]]:
    """``mode``'s measurement of ``kernels``: two harness JVMs with half its samples each, the original loaded
    first in one and the optimized class in the other, combined per kernel by :func:`counterbalanced`."""
    half = replace(mode, samples=-(-mode.samples // 2), min_ms=mode.min_ms // 2)
    forward = run_harness(harness, orig, opt, half, kernels)
    backward = run_harness(harness, opt, orig, half, kernels)
    return {k.name: counterbalanced(forward[k.name], backward[k.name]) for k in kernels}


def _record(row: KernelRow, mode: Mode, fields: dict[str, str]) -> None:
    """One run's figures for ``row`` in ``mode``; the reported ratio and A/A are the medians over its runs."""
    runs = row.runs.setdefault(mode.name, [])
    runs.append((run_ratio(fields), float(fields["control"]) if "control" in fields else float("nan")))
    if "forward" in fields:
        row.orders.setdefault(mode.name, []).append((float(fields["forward"]), float(fields["backward"])))
    row.ratio[mode.name] = statistics.median(r for r, _ in runs)
    if mode.control:
        row.control[mode.name] = statistics.median(c for _, c in runs)
    row.samples[mode.name] = row.samples.get(mode.name, 0) + int(fields["samples"])


def bench_kernels(work: Path, modes: tuple[Mode, ...], extra: list[str], kernels: tuple[Kernel, ...] = KERNELS,
                  remeasure: int = REMEASURE_RUNS) -> list[KernelRow]:
    """Compile, optimize and time the kernels (the check run first, on all of them); one row per kernel. Kernels
    whose code is the original's are not timed; :func:`suspects` are measured ``remeasure`` times in all."""
    try:
        orig = fixture_build.build_bench()
    except fixture_build.BuildError as e:
        raise BenchError(str(e)) from None
    opt = work / "bench-opt"
    report = optimize(orig, opt, work / "bench-report.json", extra)
    rows = {k.name: KernelRow(k.name, k.n, k.opportunities) for k in kernels}
    for m in report["methods"]:
        row = rows.get(m["name"]) if m["class"] == KERNEL_CLASS else None
        if row is not None:
            row.status, row.bytes_before, row.bytes_after = m["status"], m["bytes_before"], m["bytes_after"]
            row.cost_before, row.cost_after = m.get("cost_before"), m.get("cost_after")
            row.emitted_before, row.emitted_after = m.get("emitted_cost_before"), m.get("emitted_cost_after")
    for name in same_code(orig / f"{KERNEL_CLASS}.class", opt / f"{KERNEL_CLASS}.class", set(rows)):
        rows[name].same_bytes = True
        rows[name].ratio = {mode.name: 1.0 for mode in modes}
    timed = tuple(k for k in kernels if not rows[k.name].same_bytes)
    harness = compile_harness()
    for name, fields in run_harness(harness, orig, opt, CHECK, kernels).items():
        rows[name].result = fields["result"]
    measure(rows, timed, modes, remeasure, lambda mode, ks: run_both_orders(harness, orig, opt, mode, ks))
    return list(rows.values())


Runner = Callable[[Mode, tuple[Kernel, ...]], dict[str, dict[str, str]]]


def measure(rows: dict[str, KernelRow], kernels: tuple[Kernel, ...], modes: tuple[Mode, ...], remeasure: int,
            run: Runner) -> None:
    """Time ``kernels`` in each mode (``run``: one harness JVM on the kernels given), then the :func:`suspects`
    again ``remeasure - 1`` times with :data:`REMEASURE_SAMPLES` times the samples; the rows get the medians."""
    for mode in modes:
        more = replace(mode, samples=mode.samples * REMEASURE_SAMPLES, min_ms=mode.min_ms * REMEASURE_SAMPLES)
        todo = kernels
        for n in range(remeasure if kernels else 0):
            for name, fields in run(mode if n == 0 else more, todo).items():
                _record(rows[name], mode, fields)
            if n == 0:
                todo = suspects(rows, mode.name, kernels)
            if not todo:
                break


def workload_ratio(name: str, jar: Path, opt: Path, deps: list[Path], rounds: int) -> tuple[float, float]:
    """Our workload ``rounds`` times on each of the original jar (A), the optimized one (B) and the original again
    (C, the control), in rotation like the kernels' harness: the median CPU time of B over A's, and C's over A's
    (the A/A ratio: the noise of whole-JVM runs on this machine). Raises Difference when any run prints
    differently from the first."""
    try:
        source = workloads.resolve_workload(WORKLOAD_OF[name])
        classes = workloads.compile_workload(source, [jar, *deps], workloads.default_cache())
        sides = (("orig", jar), ("opt", opt), ("control", jar))
        cpu: dict[str, list[float]] = {side: [] for side, _ in sides}
        reference = None
        for r in range(rounds):
            for k in range(len(sides)):
                side, path = sides[(k + r) % len(sides)]
                run = workloads.run_workload(path, classes, source.stem, extra_cp=deps)
                if reference is None:
                    reference = run
                diff = workloads.difference(reference, run, f"{jar.name} (first run)", f"{side} (round {r})")
                if diff is not None:
                    raise Difference(f"{source.stem}: output differs\n{diff}")
                cpu[side].append(run.cpu_seconds)
    except workloads.WorkloadError as e:
        raise BenchError(str(e)) from None
    base = statistics.median(cpu["orig"])
    return statistics.median(cpu["opt"]) / base, statistics.median(cpu["control"]) / base


def method_cpu_seconds(report: dict) -> tuple[list[float], int]:
    """The CPU seconds of each method with code that this run optimized (the report's ``cpu_ms``: the thread CPU
    time of its work in its worker; wall clock under load measures the load), and how many came from the result
    cache instead (``time_ms`` holds ``cache``; their CPU was spent by the run that stored them)."""
    times, cached = [], 0
    for m in report["methods"]:
        if not m["bytes_before"]:
            continue
        if "cache" in m["time_ms"]:
            cached += 1
        elif m.get("cpu_ms") is not None:
            times.append(m["cpu_ms"] / 1000)
    return times, cached


def bench_jar(name: str, jars: dict[str, Path], work: Path, extra: list[str], rounds: int) -> JarRow:
    jar = jars.get(name)
    if jar is None:
        raise BenchError(f"no corpus jar {name} (fetched: {', '.join(sorted(jars))})")
    deps = [jars[d] for d in JAR_DEPS.get(name, [])]
    opt = work / f"{name}-opt.jar"
    cp = ["--classpath", os.pathsep.join(map(str, deps))] if deps else []
    report = optimize(jar, opt, work / f"{name}-report.json", [*cp, *extra])
    row = JarRow(name, methods=len(report["methods"]), goal=report.get("goal") or "speed",
                 optimize_seconds=report["summary"]["seconds"])
    times, row.cached = method_cpu_seconds(report)
    row.withdrawn = report["summary"].get("withdrawn", 0)
    if times:
        row.time_p50, row.time_p95 = percentile(times, 50), percentile(times, 95)
    row.verify_errors = verify_jar(opt, deps)
    for m in report["methods"]:
        if m["status"] == "fallback":
            row.fallback += 1
        if m["status"] != "rewritten":
            continue
        row.rewritten += 1
        row.rewritten_bytes_before += m["bytes_before"]
        row.rewritten_bytes_after += m["bytes_after"]
        if m.get("cost_before") is not None and m.get("cost_after") is not None:
            row.cost_before += m["cost_before"]
            row.cost_after += m["cost_after"]
        if m.get("emitted_cost_before") is not None and m.get("emitted_cost_after") is not None:
            row.emitted_before += m["emitted_cost_before"]
            row.emitted_after += m["emitted_cost_after"]
    pg = work / f"{name}.pg.jar"
    proguard.proguard_intra(proguard.proguard_jar(), jar, pg, [proguard.jdk_library_jar(), *deps])
    row.code_orig, row.code_opt, row.code_proguard = code_bytes(jar), code_bytes(opt), code_bytes(pg)
    if name in WORKLOAD_OF and rounds > 0:
        row.workload, row.workload_rounds = WORKLOAD_OF[name], rounds
        row.workload_cpu_ratio, row.workload_cpu_control = workload_ratio(name, jar, opt, deps, rounds)
    return row


def verify_jar(jar: Path, deps: list[Path]) -> int:
    """How many classes of ``jar`` HotSpot refuses under ``-Xverify:all`` (``tests/java/VerifyClasses.java``, every
    class loaded and linked, ``deps`` on the class path); raises BenchError when the harness cannot run."""
    java = workloads.java_home() / "bin" / "java"
    cmd = [str(java), "-Xverify:all", "-cp", str(harness_dir()), "VerifyClasses", str(jar), *map(str, deps)]
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    summary = [line for line in proc.stdout.splitlines() if " verify_errors=" in line]
    if proc.returncode not in (0, 1) or not summary:
        raise BenchError(f"VerifyClasses {jar.name} failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    fields = dict(kv.split("=") for kv in summary[-1].rsplit(": ", 1)[1].split())
    return int(fields["verify_errors"]) + int(fields["other_failures"])


def predicted(before: float | None, after: float | None) -> float | None:
    """A cost model's prediction for a rewrite: cost after / cost before (None without both figures)."""
    return after / before if before and after is not None else None


def _fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _control_of(rows: list[KernelRow], name: str, mode: str) -> str:
    """``, A/A x`` of kernel ``name`` in ``mode`` (with its number of runs when re-measured), or nothing."""
    r = next((r for r in rows if r.name == name), None)
    if r is None or mode not in r.control:
        return ""
    runs = len(r.runs.get(mode, ()))
    return f", A/A {r.control[mode]:.3f}" + (f", median of {runs} runs" if runs > 1 else "")


def _geomeans(rows: list[KernelRow], mode: str, control: bool) -> dict[str, float | None]:
    """Geometric means of one column (B/A, or A/A when ``control``) over all kernels and the opportunity subset."""
    def of(r: KernelRow) -> dict[str, float]:
        return r.control if control else r.ratio
    measured = [r for r in rows if mode in of(r)]
    return {"all": geomean([of(r)[mode] for r in measured]),
            "opportunity": geomean([of(r)[mode] for r in measured if r.opportunities])}


def within_noise(row: KernelRow, mode: str) -> bool:
    """Whether ``row``'s ratio in ``mode`` is no farther above 1 than its A/A is from 1 (after re-measurement, both
    medians): what identical code did in the same runs covers it."""
    control = row.control.get(mode)
    return control is not None and row.ratio[mode] - 1 <= abs(control - 1)


def _worst_goal(rows: list[KernelRow], mode: str, goal: str) -> tuple[str, bool, str]:
    """The "no kernel slower than" goal of ``mode``: failed by a kernel over the limit beyond its A/A's distance
    from 1; one over it only within that distance is named as noise (the goal met)."""
    limit = WORST[mode]
    over = [r for r in rows if r.ratio.get(mode, 0.0) > limit]
    real = [r for r in over if not within_noise(r, mode)]
    rest = real or [r for r in rows if r not in over and mode in r.ratio] or rows
    w = max(rest, key=lambda r: r.ratio.get(mode, 0.0))
    detail = f"worst {w.name} {w.ratio.get(mode, 0.0):.3f}{_control_of(rows, w.name, mode)}"
    if over and not real:
        detail += "; over it within their A/A, noise: " + ", ".join(
            f"{r.name} {r.ratio[mode]:.3f}{_control_of(rows, r.name, mode)}" for r in over)
    return goal, not real, detail


def summary(rows: list[KernelRow], modes: tuple[Mode, ...]) -> dict:
    """Geometric means (all kernels, the opportunity subset) per mode and its A/A control, and the goals."""
    out: dict = {"geomean": {}, "goals": []}
    for mode in modes:
        out["geomean"][mode.name] = _geomeans(rows, mode.name, control=False)
        out["geomean"][f"{mode.name} A/A"] = _geomeans(rows, mode.name, control=True)
    names = {m.name for m in modes}
    if "xint" in names:
        out["goals"].append(_worst_goal(rows, "xint", f"-Xint: no kernel slower than {XINT_WORST}x"))
        g = out["geomean"]["xint"]["opportunity"]
        out["goals"].append((f"-Xint: geomean over I/S/R kernels <= {XINT_OPPORTUNITY_GEOMEAN}",
                             g is not None and g <= XINT_OPPORTUNITY_GEOMEAN, f"{_fmt(g)}"))
    if "jit" in names:
        out["goals"].append(_worst_goal(rows, "jit", f"JIT: no kernel slower than {JIT_WORST}x"))
    before = sum(r.bytes_before for r in rows if r.status == "rewritten")
    after = sum(r.bytes_after for r in rows if r.status == "rewritten")
    out["goals"].append(("size: rewritten kernels no larger than their originals", after <= before,
                         f"{after}/{before} bytes"))
    return out


def print_kernels(rows: list[KernelRow], modes: tuple[Mode, ...], summ: dict) -> None:
    cols = [c for m in modes for c in (m.name, f"{m.name} A/A")]
    head = (f"{'kernel':<18}{'opp':>4}{'n':>7}{'bytes':>12}{'size':>7}{'status':>11}{'emit pred':>10}"
            f"{'peg pred':>9}" + "".join(f"{c:>10}" for c in cols))
    print(head)
    print("-" * len(head))
    for r in rows:
        emit, peg = (predicted(r.emitted_before, r.emitted_after) if r.status == "rewritten" else None,
                     predicted(r.cost_before, r.cost_after) if r.status == "rewritten" else None)
        times = ("".join(f"{'same':>10}{'bytes':>10}" for _m in modes) if r.same_bytes else
                 "".join(f"{_fmt(r.ratio.get(m.name)):>10}{_fmt(r.control.get(m.name)):>10}" for m in modes))
        print(f"{r.name:<18}{r.opportunities or '-':>4}{r.n:>7}{f'{r.bytes_before}->{r.bytes_after}':>12}"
              f"{_fmt(r.bytes_after / r.bytes_before if r.bytes_before else None, 2):>7}{r.status:>11}"
              f"{_fmt(emit, 2):>10}{_fmt(peg, 2):>9}" + times)
    for subset in ("all", "opportunity"):
        label = "geomean (all)" if subset == "all" else "geomean (I/S/R)"
        print(f"{label:<78}" + "".join(f"{_fmt(summ['geomean'][c][subset]):>10}" for c in cols))
    _print_goals(summ["goals"])
    for r in rows:
        for mode, runs in r.runs.items():
            if len(runs) > 1:
                print(f"re-measured {r.name} {mode}: median of {len(runs)} runs, ratio "
                      f"{' '.join(_fmt(x) for x, _ in runs)}, A/A {' '.join(_fmt(c) for _, c in runs)}")
    for mode in modes:
        effect = {r.name: order_effect(r, mode.name) for r in rows if r.orders.get(mode.name)}
        if effect:
            worst = max(effect, key=lambda k: abs(math.log(effect[k])))
            print(f"load order ({mode.name}): the side loaded once between copies of the other ran "
                  f"{_fmt(geomean(list(effect.values())))} of its time as the majority (geomean over kernels, "
                  f"cancelled in the ratios); farthest {worst} {_fmt(effect[worst])}")


def order_effect(row: KernelRow, mode: str) -> float:
    """What being B did to ``row``'s times in ``mode``: the geometric mean over its runs of the square root of the
    product of its forward and backward ratios (1 when the load order does not matter)."""
    return geomean([math.sqrt(f * b) for f, b in row.orders[mode]]) or 1.0


def jar_goals(rows: list[JarRow]) -> list[tuple[str, bool, str]]:
    """The goals per jar (issue 15): rewritten methods no larger than their originals; every class verifies; under
    ``--goal size`` the whole jar's bytecode smaller than the original's and ProGuard's; on commons-lang3 the
    per-method optimization time p50 <= ``P50_GOAL_S`` and p95 <= ``P95_GOAL_S``."""
    goals = []
    for r in rows:
        goals.append((f"{r.name}: rewritten methods no larger than their originals",
                      r.rewritten_bytes_after <= r.rewritten_bytes_before,
                      f"{r.rewritten_bytes_after}/{r.rewritten_bytes_before} bytes"))
        if r.verify_errors is not None:
            goals.append((f"{r.name}: every class verifies (-Xverify:all)", r.verify_errors == 0,
                          f"{r.verify_errors} refused"))
        if r.goal == "size":
            goals.append((f"{r.name}: code smaller than the original and ProGuard's (--goal size)",
                          r.code_opt < min(r.code_orig, r.code_proguard),
                          f"{r.code_opt} vs {r.code_orig} and {r.code_proguard} bytes"))
        if r.name == TIMED_JAR:
            cached = f", {r.cached} methods from the cache left out" if r.cached else ""
            goals.append((f"{r.name}: per-method CPU time p50 <= {P50_GOAL_S} s, p95 <= {P95_GOAL_S} s",
                          r.time_p50 <= P50_GOAL_S and r.time_p95 <= P95_GOAL_S,
                          f"p50 {r.time_p50:.3f} s, p95 {r.time_p95:.3f} s{cached}"))
    return goals


def _print_goals(goals: list[tuple[str, bool, str]]) -> None:
    for goal, ok, detail in goals:
        print(f"goal  {'pass' if ok else 'FAIL':<5} {goal} ({detail})")


def print_jars(rows: list[JarRow]) -> None:
    head = (f"{'jar':<15}{'goal':>6}{'methods':>8}{'rewritten':>10}{'withdrawn':>10}{'fallback':>9}{'emit gain':>10}"
            f"{'peg gain':>9}"
            f"{'rw bytes':>14}{'code orig':>10}{'code opt':>9}{'opt/orig':>9}{'pg/orig':>8}{'opt/pg':>7}"
            f"{'p50 cpu':>8}{'p95 cpu':>8}{'verify':>7}{'workload cpu':>30}")
    print(head)
    print("-" * len(head))
    for r in rows:
        work = (f"{r.workload} {_fmt(r.workload_cpu_ratio)} (A/A {_fmt(r.workload_cpu_control)})" if r.workload
                else "-")
        verify = "-" if r.verify_errors is None else "ok" if r.verify_errors == 0 else f"{r.verify_errors} bad"
        print(f"{r.name:<15}{r.goal:>6}{r.methods:>8}{r.rewritten:>10}{r.withdrawn:>10}{r.fallback:>9}"
              f"{100 * r.emitted_gain:>9.1f}%"
              f"{100 * r.predicted_gain:>8.1f}%"
              f"{f'{r.rewritten_bytes_before}->{r.rewritten_bytes_after}':>14}{r.code_orig:>10}{r.code_opt:>9}"
              f"{r.code_opt / r.code_orig:>9.4f}{r.code_proguard / r.code_orig:>8.4f}"
              f"{r.code_opt / r.code_proguard:>7.3f}{r.time_p50:>8.3f}{r.time_p95:>8.3f}{verify:>7}{work:>30}")
    _print_goals(jar_goals(rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Arguments not listed here are passed to `peggy-jvm optimize`.")
    part = ap.add_mutually_exclusive_group()
    part.add_argument("--kernels-only", action="store_true", help="skip the jar part (which takes minutes)")
    part.add_argument("--jars-only", action="store_true", help="skip the kernel part")
    ap.add_argument("--jars", default=",".join(DEFAULT_JARS),
                    help=f"comma-separated corpus jars for the jar part (default {','.join(DEFAULT_JARS)})")
    ap.add_argument("--quick", action="store_true", help="few samples: a differential smoke run, not a measurement")
    ap.add_argument("--rounds", type=int, default=5, help="workload runs per jar (default 5; 0: none)")
    ap.add_argument("--jobs", type=int, default=2, help="optimize --jobs for the jars (default 2)")
    ap.add_argument("--remeasure", type=int, default=REMEASURE_RUNS, metavar="N",
                    help=f"runs in all of a kernel over its goal or with its A/A as far from 1, the median "
                         f"reported (default {REMEASURE_RUNS}; 1: none; --quick: 1)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="write the rows and goals as JSON")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="keep the optimized classes, jars and reports in DIR")
    args, extra = ap.parse_known_args(argv)
    modes = QUICK_MODES if args.quick else FULL_MODES
    try:
        with tempfile.TemporaryDirectory(prefix="bench-runtime-") as tmp:
            work = args.keep or Path(tmp)
            work.mkdir(parents=True, exist_ok=True)
            rows: list[KernelRow] = []
            summ: dict = {"geomean": None, "goals": []}
            if not args.jars_only:
                rows = bench_kernels(work, modes, extra, remeasure=1 if args.quick else max(1, args.remeasure))
                summ = summary(rows, modes)
                how = "quick: few samples" if args.quick else "medians"
                print(f"kernels: ratio = optimized / original (both its copies A and C; {how} of alternating "
                      f"calls, thread CPU time); A/A = C / A; size = bytecode optimized / original; emit pred, peg "
                      f"pred = cost after / before of a rewrite by the emitted code's cost (what it was kept by) and "
                      f"by the PEG cost model")
                print_kernels(rows, modes, summ)
            jar_rows: list[JarRow] = []
            if not args.kernels_only:
                jars = fetch_jars()
                for name in filter(None, args.jars.split(",")):
                    jar_rows.append(bench_jar(name, jars, work, [*extra, "--jobs", str(args.jobs)],
                                              args.rounds))
                    print(f"(jar {name} done)", file=sys.stderr)
                print()
                print("jars: emit gain, peg gain = 1 - cost after / cost before over the rewritten methods, by the "
                      "emitted code's cost (what the rewrite was kept by) and the PEG cost model's; code = bytecode "
                      "of all methods; pg = ProGuard intra-method; workload cpu = median CPU optimized / original")
                print_jars(jar_rows)
            if args.json:
                args.json.write_text(json.dumps({
                    "kernels": [asdict(r) for r in rows],
                    "geomean": summ["geomean"],
                    "goals": [{"goal": g, "met": ok, "detail": d}
                              for g, ok, d in [*summ["goals"], *jar_goals(jar_rows)]],
                    "jars": [asdict(r) | {"predicted_gain": r.predicted_gain, "emitted_gain": r.emitted_gain}
                             for r in jar_rows],
                }, indent=1))
            unverified = [r.name for r in jar_rows if r.verify_errors]
            if unverified:
                raise Difference(f"optimized jar fails -Xverify:all: {', '.join(unverified)}")
    except Difference as e:
        print(f"bench_runtime: DIFFERENCE: {e}", file=sys.stderr)
        return 1
    except (BenchError, subprocess.TimeoutExpired) as e:
        print(f"bench_runtime: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
