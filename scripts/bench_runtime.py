#!/usr/bin/env python3
"""The runtime benchmark: how fast and how big the optimizer's output is, against what javac wrote.

    scripts/bench_runtime.py [--kernels-only] [--jars NAME,...] [--quick] [--rounds N] [--jobs N] [--json OUT]
                             [--keep DIR] [OPTIMIZE-ARGS ...]

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
    * The jar part (slow: optimizing commons-lang3 takes minutes; ``--kernels-only`` skips it): per corpus jar
      (``scripts/fetch_corpus.sh``), ``optimize`` of the whole jar, ProGuard's intra-method output
      (``proguard.proguard_intra``), the methods rewritten and their predicted gain (the JSON report's
      cost_before/cost_after summed over the rewritten methods), the bytecode of all methods of the three jars,
      and our workload (``tests/java/workloads/``) run ``--rounds`` times on the original, the optimized and the
      original jar again (the A/A control), in rotation, in separate JVMs (``workloads.run_workload``):
      identical output required, ratios of the median CPU times.

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
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import fixture_build, proguard, workloads  # noqa: E402
from tests.support.bench_harness import (  # noqa: E402
    CHECK, FULL_MODES, KERNEL_CLASS, KERNELS, QUICK_MODES, BenchError, Difference, Kernel, Mode, code_bytes,
    compile_harness, run_harness,
)
from tests.support.corpus import JAR_DEPS, WORKLOAD_OF, fetch_jars  # noqa: E402

DEFAULT_JARS = ("jama", "commons-lang3", "jsoup")


# the goals (issue 15, item 5)
XINT_WORST = 1.02  # -Xint: no kernel slower than this
XINT_OPPORTUNITY_GEOMEAN = 0.90  # -Xint: geometric mean over the kernels with an opportunity at most this
JIT_WORST = 1.03  # default JIT: no kernel slower than this


@dataclass
class KernelRow:
    name: str
    n: int
    opportunities: str
    status: str = "missing"
    bytes_before: int = 0
    bytes_after: int = 0
    cost_before: float | None = None
    cost_after: float | None = None
    ratio: dict[str, float] = field(default_factory=dict)  # mode -> median opt / median orig
    control: dict[str, float] = field(default_factory=dict)  # mode -> median orig again / median orig (A/A)
    samples: dict[str, int] = field(default_factory=dict)
    result: str = ""


@dataclass
class JarRow:
    name: str
    methods: int = 0
    rewritten: int = 0
    fallback: int = 0
    cost_before: float = 0.0  # over the rewritten methods
    cost_after: float = 0.0
    rewritten_bytes_before: int = 0
    rewritten_bytes_after: int = 0
    code_orig: int = 0  # bytecode of every method of the jar
    code_opt: int = 0
    code_proguard: int = 0
    workload: str = ""
    workload_rounds: int = 0
    workload_cpu_ratio: float | None = None
    workload_cpu_control: float | None = None  # the original against itself (A/A)

    @property
    def predicted_gain(self) -> float:
        return 1.0 - self.cost_after / self.cost_before if self.cost_before else 0.0


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


def bench_kernels(work: Path, modes: tuple[Mode, ...], extra: list[str],
                  kernels: tuple[Kernel, ...] = KERNELS) -> list[KernelRow]:
    """Compile, optimize and time the kernels (the check run first); one row per kernel."""
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
    harness = compile_harness()
    for mode in (CHECK, *modes):
        for name, fields in run_harness(harness, orig, opt, mode, kernels).items():
            row = rows[name]
            row.result = fields["result"]
            if mode is not CHECK:
                row.ratio[mode.name] = float(fields["ratio"])
                row.samples[mode.name] = int(fields["samples"])
                row.control[mode.name] = float(fields["control"])
    return list(rows.values())


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


def bench_jar(name: str, jars: dict[str, Path], work: Path, extra: list[str], rounds: int) -> JarRow:
    jar = jars.get(name)
    if jar is None:
        raise BenchError(f"no corpus jar {name} (fetched: {', '.join(sorted(jars))})")
    deps = [jars[d] for d in JAR_DEPS.get(name, [])]
    opt = work / f"{name}-opt.jar"
    cp = ["--classpath", os.pathsep.join(map(str, deps))] if deps else []
    report = optimize(jar, opt, work / f"{name}-report.json", [*cp, *extra])
    row = JarRow(name, methods=len(report["methods"]))
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
    pg = work / f"{name}.pg.jar"
    proguard.proguard_intra(proguard.proguard_jar(), jar, pg, [proguard.jdk_library_jar(), *deps])
    row.code_orig, row.code_opt, row.code_proguard = code_bytes(jar), code_bytes(opt), code_bytes(pg)
    if name in WORKLOAD_OF and rounds > 0:
        row.workload, row.workload_rounds = WORKLOAD_OF[name], rounds
        row.workload_cpu_ratio, row.workload_cpu_control = workload_ratio(name, jar, opt, deps, rounds)
    return row


def _fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _worst(rows: list[KernelRow], mode: str) -> tuple[str, float]:
    return max(((r.name, r.ratio[mode]) for r in rows if mode in r.ratio), key=lambda t: t[1], default=("-", 0.0))


def _geomeans(rows: list[KernelRow], mode: str, control: bool) -> dict[str, float | None]:
    """Geometric means of one column (B/A, or A/A when ``control``) over all kernels and the opportunity subset."""
    def of(r: KernelRow) -> dict[str, float]:
        return r.control if control else r.ratio
    measured = [r for r in rows if mode in of(r)]
    return {"all": geomean([of(r)[mode] for r in measured]),
            "opportunity": geomean([of(r)[mode] for r in measured if r.opportunities])}


def summary(rows: list[KernelRow], modes: tuple[Mode, ...]) -> dict:
    """Geometric means (all kernels, the opportunity subset) per mode and its A/A control, and the goals."""
    out: dict = {"geomean": {}, "goals": []}
    for mode in modes:
        out["geomean"][mode.name] = _geomeans(rows, mode.name, control=False)
        out["geomean"][f"{mode.name} A/A"] = _geomeans(rows, mode.name, control=True)
    names = {m.name for m in modes}
    if "xint" in names:
        w = _worst(rows, "xint")
        out["goals"].append((f"-Xint: no kernel slower than {XINT_WORST}x", w[1] <= XINT_WORST,
                             f"worst {w[0]} {w[1]:.3f}"))
        g = out["geomean"]["xint"]["opportunity"]
        out["goals"].append((f"-Xint: geomean over I/S/R kernels <= {XINT_OPPORTUNITY_GEOMEAN}",
                             g is not None and g <= XINT_OPPORTUNITY_GEOMEAN, f"{_fmt(g)}"))
    if "jit" in names:
        w = _worst(rows, "jit")
        out["goals"].append((f"JIT: no kernel slower than {JIT_WORST}x", w[1] <= JIT_WORST,
                             f"worst {w[0]} {w[1]:.3f}"))
    before = sum(r.bytes_before for r in rows if r.status == "rewritten")
    after = sum(r.bytes_after for r in rows if r.status == "rewritten")
    out["goals"].append(("size: rewritten kernels no larger than their originals", after <= before,
                         f"{after}/{before} bytes"))
    return out


def print_kernels(rows: list[KernelRow], modes: tuple[Mode, ...], summ: dict) -> None:
    cols = [c for m in modes for c in (m.name, f"{m.name} A/A")]
    head = f"{'kernel':<18}{'opp':>4}{'n':>7}{'bytes':>12}{'size':>7}{'status':>11}{'cost pred':>10}" + "".join(
        f"{c:>10}" for c in cols)
    print(head)
    print("-" * len(head))
    for r in rows:
        pred = (r.cost_after / r.cost_before if r.status == "rewritten" and r.cost_before else None)
        print(f"{r.name:<18}{r.opportunities or '-':>4}{r.n:>7}{f'{r.bytes_before}->{r.bytes_after}':>12}"
              f"{_fmt(r.bytes_after / r.bytes_before if r.bytes_before else None, 2):>7}{r.status:>11}"
              f"{_fmt(pred, 2):>10}" + "".join(f"{_fmt(r.ratio.get(m.name)):>10}{_fmt(r.control.get(m.name)):>10}"
                                              for m in modes))
    for subset in ("all", "opportunity"):
        label = "geomean (all)" if subset == "all" else "geomean (I/S/R)"
        print(f"{label:<69}" + "".join(f"{_fmt(summ['geomean'][c][subset]):>10}" for c in cols))
    _print_goals(summ["goals"])


def jar_goals(rows: list[JarRow]) -> list[tuple[str, bool, str]]:
    """The size goals per jar: rewritten methods no larger than their originals; the whole jar's bytecode smaller
    than the original's and ProGuard's (the issue asks this of ``--goal size``; measured on every run)."""
    goals = []
    for r in rows:
        goals.append((f"{r.name}: rewritten methods no larger than their originals",
                      r.rewritten_bytes_after <= r.rewritten_bytes_before,
                      f"{r.rewritten_bytes_after}/{r.rewritten_bytes_before} bytes"))
        goals.append((f"{r.name}: code smaller than the original and ProGuard's (--goal size)",
                      r.code_opt < min(r.code_orig, r.code_proguard),
                      f"{r.code_opt} vs {r.code_orig} and {r.code_proguard} bytes"))
    return goals


def _print_goals(goals: list[tuple[str, bool, str]]) -> None:
    for goal, ok, detail in goals:
        print(f"goal  {'pass' if ok else 'FAIL':<5} {goal} ({detail})")


def print_jars(rows: list[JarRow]) -> None:
    head = (f"{'jar':<15}{'methods':>8}{'rewritten':>10}{'fallback':>9}{'pred gain':>10}{'rw bytes':>14}"
            f"{'code orig':>10}{'opt/orig':>9}{'pg/orig':>8}{'opt/pg':>7}{'workload cpu':>30}")
    print(head)
    print("-" * len(head))
    for r in rows:
        work = (f"{r.workload} {_fmt(r.workload_cpu_ratio)} (A/A {_fmt(r.workload_cpu_control)})" if r.workload
                else "-")
        print(f"{r.name:<15}{r.methods:>8}{r.rewritten:>10}{r.fallback:>9}{100 * r.predicted_gain:>9.1f}%"
              f"{f'{r.rewritten_bytes_before}->{r.rewritten_bytes_after}':>14}{r.code_orig:>10}"
              f"{r.code_opt / r.code_orig:>9.4f}{r.code_proguard / r.code_orig:>8.4f}"
              f"{r.code_opt / r.code_proguard:>7.3f}{work:>30}")
    _print_goals(jar_goals(rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Arguments not listed here are passed to `peggy-jvm optimize`.")
    ap.add_argument("--kernels-only", action="store_true", help="skip the jar part (which takes minutes)")
    ap.add_argument("--jars", default=",".join(DEFAULT_JARS),
                    help=f"comma-separated corpus jars for the jar part (default {','.join(DEFAULT_JARS)})")
    ap.add_argument("--quick", action="store_true", help="few samples: a differential smoke run, not a measurement")
    ap.add_argument("--rounds", type=int, default=5, help="workload runs per jar (default 5; 0: none)")
    ap.add_argument("--jobs", type=int, default=2, help="optimize --jobs for the jars (default 2)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="write the rows and goals as JSON")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="keep the optimized classes, jars and reports in DIR")
    args, extra = ap.parse_known_args(argv)
    modes = QUICK_MODES if args.quick else FULL_MODES
    try:
        with tempfile.TemporaryDirectory(prefix="bench-runtime-") as tmp:
            work = args.keep or Path(tmp)
            work.mkdir(parents=True, exist_ok=True)
            rows = bench_kernels(work, modes, extra)
            summ = summary(rows, modes)
            print(f"kernels: ratio = optimized / original ({'quick: few samples' if args.quick else 'median'} of "
                  f"alternating calls, thread CPU time); size = bytecode optimized / original")
            print_kernels(rows, modes, summ)
            jar_rows: list[JarRow] = []
            if not args.kernels_only:
                jars = fetch_jars()
                for name in filter(None, args.jars.split(",")):
                    jar_rows.append(bench_jar(name, jars, work, [*extra, "--jobs", str(args.jobs)],
                                              args.rounds))
                    print(f"(jar {name} done)", file=sys.stderr)
                print()
                print("jars: pred gain = 1 - cost after / cost before over the rewritten methods; code = bytecode "
                      "of all methods; pg = ProGuard intra-method; workload cpu = median CPU optimized / original")
                print_jars(jar_rows)
            if args.json:
                args.json.write_text(json.dumps({
                    "kernels": [asdict(r) for r in rows],
                    "geomean": summ["geomean"],
                    "goals": [{"goal": g, "met": ok, "detail": d}
                              for g, ok, d in [*summ["goals"], *jar_goals(jar_rows)]],
                    "jars": [asdict(r) | {"predicted_gain": r.predicted_gain} for r in jar_rows],
                }, indent=1))
    except Difference as e:
        print(f"bench_runtime: DIFFERENCE: {e}", file=sys.stderr)
        return 1
    except (BenchError, subprocess.TimeoutExpired) as e:
        print(f"bench_runtime: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
