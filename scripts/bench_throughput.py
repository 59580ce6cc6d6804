#!/usr/bin/env python3
"""Whole-input throughput of ``peggy-jvm optimize``: methods per CPU-second of two builds, alternating, and
``--jobs 2`` against ``--jobs 1`` (issue 19, item 2).

What it measures: each run is ``python -m peggy_jvm.cli optimize SAMPLE.jar --classpath FULL.jar --no-cache
--json R.json`` in a child process; its CPU time is the child's and its workers' user + system time
(``RUSAGE_CHILDREN`` around the run: the pool's workers are reaped before the command ends), its wall time the
clock's. Methods are the report's rows with code (abstract and native methods excluded). The builds alternate
run by run (old, new, old, new ...) so that the machine's load falls on both alike; the table gives CPU and wall
seconds per run (means over the repetitions: the ratios are of sums); the 1-minute load average at each run's
start is printed beside it (the machine is shared). Each build's modules are byte-compiled before its first run
(``compileall``, as an installed tool has them: where ``PYTHONDONTWRITEBYTECODE`` is set every run, and every
worker process, would compile the ~130 modules it imports again, 0.4-0.8 CPU-s each; ``--no-compile``: as the
environment has it). For balance without the machine's load, two workers are also simulated from the ``--jobs 1``
run's per-method times (:func:`balance`: whole classes, and the pipeline's own tasks with large classes split).
Every run's output jar and every report row's status and reason are compared with the first run's of the same
build and sample: every job count must agree (a difference is reported and makes the exit status 1); two
builds may differ (noted).

Sampling: ``--classes N`` takes every k-th class of the jar in name order (k = count // N), so the sample
spreads over all packages; ``--with NAME`` adds a class by internal name (a huge class such as commons-lang3's
``org/apache/commons/lang3/StringUtils``); the whole jar is the class path, so the sampled classes see their
full hierarchy.

Usage::

    scripts/bench_throughput.py --old /tmp/old-src --classes 300 --repeat 1 \\
        --jar ~/.cache/peggy-jvm/corpus/jars/guava.jar --jar ~/.cache/peggy-jvm/corpus/jars/commons-math3.jar

``--old DIR`` (and ``--new DIR``, default this checkout): a source tree of the old build (``git archive <commit>
| tar -x -C DIR``), run with this venv's Python and ``PYTHONPATH=DIR`` at the job counts ``--old-jobs`` (default
1); without it only the current build is measured (jobs 1 against jobs 2).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Run:
    build: str
    jobs: int
    methods: int
    cpu: float
    wall: float
    out: bytes
    load: float  # the 1-minute load average when the run started
    rows: tuple  # every report row's method, status and reason: what must not change with the bytes


def sample_jar(jar: Path, classes: int | None, dest: Path, also: list[str] = ()) -> Path:
    """Every k-th class of ``jar`` by name (all of them when ``classes`` is None), and the classes named in
    ``also`` (internal names, ``org/apache/commons/lang3/StringUtils``), in a new jar at ``dest``."""
    with zipfile.ZipFile(jar) as z:
        names = sorted(n for n in z.namelist() if n.endswith(".class") and not n.startswith("META-INF/"))
        step = max(1, len(names) // classes) if classes else 1
        picked = names[::step][:classes] if classes else names
        picked = sorted(set(picked) | {f"{c}.class" for c in also if f"{c}.class" in names})
        with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as out:
            for n in picked:
                out.writestr(n, z.read(n))
    return dest


def compile_tree(src: Path) -> None:
    """The build's modules byte-compiled beside its sources (``__pycache__``, ignored by git), whatever
    ``PYTHONDONTWRITEBYTECODE`` says: the runs then read them as an installed tool's runs would."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src / "peggy_jvm")], env=env, check=True,
                   stdout=subprocess.DEVNULL)


def run_once(src: Path | None, sample: Path, full: Path, jobs: int, work: Path, build: str) -> Run:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    out, rep = work / f"out-{build}-{jobs}.jar", work / f"rep-{build}-{jobs}.json"
    for p in (out, rep):
        p.unlink(missing_ok=True)
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # a build from before the result cache (issue 19's own baseline) has no --no-cache: it never caches
    cache = ["--no-cache"] if src is None or "--no-cache" in (src / "peggy_jvm" / "cli.py").read_text() else []
    proc = subprocess.run([sys.executable, "-m", "peggy_jvm.cli", "optimize", str(sample), "-o", str(out),
                           "--classpath", str(full), *cache, "--jobs", str(jobs), "--json", str(rep)],
                          env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{build} --jobs {jobs} on {sample.name} failed ({proc.returncode}): {proc.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rows = json.loads(rep.read_text())["methods"]
    methods = sum(1 for m in rows if m["reason"] != "no code (abstract or native)")
    outcome = tuple((m["class"], m["name"], m["descriptor"], m["status"], m["reason"]) for m in rows)
    return Run(build, jobs, methods, cpu, wall, out.read_bytes(), load, outcome)


def balance(report: Path, sample: Path, src: Path, jobs: int = 2) -> tuple[float, float, float, float, float]:
    """Load-independent balance of ``jobs`` workers, simulated from a ``--jobs 1`` report's per-method times:
    each task to the first free worker, the tasks whole classes in input order, whole classes largest (bytes)
    first, and the pipeline's own tasks (``pipeline._tasks``: large classes in parts of their methods) largest
    first; returns each one's efficiency (total time / (jobs x finishing time); 1.0 is perfect), then the
    largest class's and the largest task's share of the total time."""
    sys.path.insert(0, str(src))  # the build measured (``--new``): its split
    from peggy_jvm.pipeline import SPLIT_BYTES, _tasks
    report_json = json.loads(report.read_text())
    stage = report_json["stage"]
    per_method: dict[str, list[float]] = {}
    for m in report_json["methods"]:
        per_method.setdefault(m["class"], []).append(m["time_ms"].get(stage, m["time_ms"].get("cache", 0.0)))
    with zipfile.ZipFile(sample) as z:
        data = {n[:-len(".class")]: z.read(n) for n in sorted(z.namelist())}
    order = [c for c in data if c in per_method]
    per_class = {c: sum(per_method[c]) for c in order}
    total = sum(per_class.values())
    tasks = _tasks([(k, c, data[c]) for k, c in enumerate(order)], SPLIT_BYTES)
    task_time = [(t.weight, sum(per_method[order[t.entry]][slice(*t.part)] if t.part else per_method[order[t.entry]]))
                 for t in tasks]

    def efficiency(times: list[float]) -> float:
        loads = [0.0] * jobs
        for t in times:
            loads[loads.index(min(loads))] += t
        return total / (jobs * max(loads)) if total else 1.0
    largest = sorted(order, key=lambda c: -len(data[c]))
    split = [t for _, t in sorted(task_time, key=lambda wt: -wt[0])]
    share = (lambda x: x / total if total else 0.0)
    return (efficiency([per_class[c] for c in order]), efficiency([per_class[c] for c in largest]),
            efficiency(split), share(max(per_class.values())), share(max(split)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jar", type=Path, action="append", required=True, help="a jar to sample (repeatable)")
    ap.add_argument("--classes", type=int, default=300, help="classes sampled per jar (0: the whole jar)")
    ap.add_argument("--with", dest="also", action="append", default=[],
                    help="a class (internal name) added to every sample where the jar has it (repeatable)")
    ap.add_argument("--old", type=Path, help="source tree of the old build (PYTHONPATH)")
    ap.add_argument("--new", type=Path, default=ROOT, help="source tree of the new build (default: this one)")
    ap.add_argument("--repeat", type=int, default=1, help="alternations per measurement")
    ap.add_argument("--jobs", type=int, nargs="*", default=[1, 2], help="job counts of the new build")
    ap.add_argument("--old-jobs", type=int, nargs="*", default=[1], help="job counts of the old build")
    ap.add_argument("--keep", type=Path, help="a folder for the samples, outputs and JSON reports (kept)")
    ap.add_argument("--no-compile", dest="compile", action="store_false",
                    help="do not byte-compile the builds first (each run reads or compiles as the environment says)")
    args = ap.parse_args()
    status = 0
    if args.compile:
        for src in [args.new] + ([args.old] if args.old is not None else []):
            compile_tree(src)
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp:
        work = Path(tmp) if args.keep is None else args.keep
        work.mkdir(parents=True, exist_ok=True)
        print(f"<!-- load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} -->")
        print(f"<!-- {args.repeat} run(s) each; CPU and wall seconds per run (means) -->")
        print("| jar | classes | methods | build | jobs | CPU s | wall s | methods/CPU-s | methods/wall-s | load |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for jar in args.jar:
            sample = sample_jar(jar, args.classes or None, work / f"sample-{jar.stem}.jar", args.also)
            with zipfile.ZipFile(sample) as z:
                n_classes = len(z.namelist())
            plan = [("old", j) for j in (args.old_jobs if args.old is not None else [])] + \
                [("new", j) for j in args.jobs]
            runs: list[Run] = []
            for _ in range(args.repeat):
                for build, jobs in plan:
                    runs.append(run_once(args.old if build == "old" else args.new, sample, jar, jobs, work, build))
            if ("new", 1) in plan:
                in_order, largest, split, share, task_share = balance(work / "rep-new-1.json", sample, args.new)
                print(f"<!-- {jar.stem}: 2 workers simulated from the new --jobs 1 run's method times: efficiency "
                      f"{in_order:.3f} classes in input order, {largest:.3f} classes largest first, {split:.3f} "
                      f"tasks (large classes split) largest first; largest class {100 * share:.1f}%, largest "
                      f"task {100 * task_share:.1f}% of the time -->", flush=True)
            # every job count of one build gives the same bytes (two builds may differ: a change of output)
            reference = {build: next((r.out, r.rows) for r in runs if r.build == build) for build, _ in plan}
            rate: dict[tuple[str, int], tuple[float, float]] = {}
            for build, jobs in plan:
                mine = [r for r in runs if (r.build, r.jobs) == (build, jobs)]
                cpu, wall = sum(r.cpu for r in mine), sum(r.wall for r in mine)
                methods = sum(r.methods for r in mine)
                same = all((r.out, r.rows) == reference[build] for r in mine)
                status |= not same
                rate[build, jobs] = (methods / cpu, methods / wall)
                load = sum(r.load for r in mine) / len(mine)
                print(f"| {jar.stem} | {n_classes} | {mine[0].methods} | {build} | {jobs} | {cpu / len(mine):.1f} | "
                      f"{wall / len(mine):.1f} | "
                      f"{methods / cpu:.1f} | {methods / wall:.2f} | {load:.2f} |"
                      + ("" if same else " OUTPUT DIFFERS"), flush=True)
            for build, jobs in plan:
                if jobs != 1 and (build, 1) in rate:
                    (cpu_n, wall_n), (cpu_1, wall_1) = rate[build, jobs], rate[build, 1]
                    print(f"<!-- {jar.stem} {build}: --jobs {jobs} / --jobs 1 = {wall_n / wall_1:.2f}x methods per "
                          f"wall-second, {cpu_n / cpu_1:.2f}x per CPU-second -->")
            if "old" in reference and reference["old"] != reference["new"]:
                print(f"<!-- {jar.stem}: the old and new builds' outputs differ (bytes: "
                      f"{reference['old'][0] != reference['new'][0]}, report rows: "
                      f"{reference['old'][1] != reference['new'][1]}) -->")
            elif "old" in reference:
                print(f"<!-- {jar.stem}: old and new: the same output bytes and report rows (status, reason) -->")
    return status


if __name__ == "__main__":
    sys.exit(main())
