#!/usr/bin/env python3
"""Whole-input throughput of ``peggy-jvm optimize``: methods per CPU-second of two builds, alternating, and
``--jobs 2`` against ``--jobs 1`` (issue 19, item 2).

What it measures: each run is ``python -m peggy_jvm.cli optimize SAMPLE.jar --classpath FULL.jar --no-cache
--json R.json`` in a child process; its CPU time is the child's and its workers' user + system time
(``RUSAGE_CHILDREN`` around the run: the pool's workers are reaped before the command ends), its wall time the
clock's. Methods are the report's rows with code (abstract and native methods excluded). The builds alternate
run by run (old, new, old, new ...) so that the machine's load falls on both alike; ratios are of sums over the
repetitions. For balance without the machine's load, two workers are also simulated from the ``--jobs 1``
run's per-class times (:func:`balance`). Every run's output jar is compared byte for byte with the first run's of the same sample: the
old and new builds and both job counts must agree (a difference is reported and makes the exit status 1).

Sampling: ``--classes N`` takes every k-th class of the jar in name order (k = count // N), so the sample
spreads over all packages; the whole jar is the class path, so the sampled classes see their full hierarchy.

Usage::

    scripts/bench_throughput.py --old /tmp/old-src --classes 300 --repeat 1 \\
        --jar ~/.cache/peggy-jvm/corpus/jars/guava.jar --jar ~/.cache/peggy-jvm/corpus/jars/commons-math3.jar

``--old DIR`` (and ``--new DIR``, default this checkout): a source tree of the old build (``git archive <commit>
| tar -x -C DIR``), run with this venv's Python and ``PYTHONPATH=DIR``; without it only the current build is
measured (jobs 1 against jobs 2).
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


def sample_jar(jar: Path, classes: int | None, dest: Path) -> Path:
    """Every k-th class of ``jar`` by name (all of them when ``classes`` is None) in a new jar at ``dest``."""
    with zipfile.ZipFile(jar) as z:
        names = sorted(n for n in z.namelist() if n.endswith(".class") and not n.startswith("META-INF/"))
        step = max(1, len(names) // classes) if classes else 1
        picked = names[::step][:classes] if classes else names
        with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as out:
            for n in picked:
                out.writestr(n, z.read(n))
    return dest


def run_once(src: Path | None, sample: Path, full: Path, jobs: int, work: Path, build: str) -> Run:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    out, rep = work / f"out-{build}-{jobs}.jar", work / f"rep-{build}-{jobs}.json"
    for p in (out, rep):
        p.unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "peggy_jvm.cli", "optimize", str(sample), "-o", str(out),
                           "--classpath", str(full), "--no-cache", "--jobs", str(jobs), "--json", str(rep)],
                          env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{build} --jobs {jobs} on {sample.name} failed ({proc.returncode}): {proc.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rows = json.loads(rep.read_text())["methods"]
    methods = sum(1 for m in rows if m["reason"] != "no code (abstract or native)")
    return Run(build, jobs, methods, cpu, wall, out.read_bytes())


def balance(report: Path, sample: Path, jobs: int = 2) -> tuple[float, float, float]:
    """Load-independent balance of ``jobs`` workers, simulated from a ``--jobs 1`` report's per-class times:
    each class to the first free worker, in input order and largest (bytes) first; returns each order's
    efficiency (total time / (jobs x finishing time); 1.0 is perfect) and the largest class's share of the
    total time."""
    rows = json.loads(report.read_text())["methods"]
    stage = json.loads(report.read_text())["stage"]
    per_class: dict[str, float] = {}
    for m in rows:
        per_class[m["class"]] = per_class.get(m["class"], 0.0) + m["time_ms"].get(stage, 0.0)
    with zipfile.ZipFile(sample) as z:
        sizes = {n[:-len(".class")]: z.getinfo(n).file_size for n in z.namelist()}
    order = [c for c in sorted(sizes) if c in per_class]
    total = sum(per_class.values())

    def efficiency(classes: list[str]) -> float:
        loads = [0.0] * jobs
        for c in classes:
            loads[loads.index(min(loads))] += per_class[c]
        return total / (jobs * max(loads)) if total else 1.0
    largest = sorted(order, key=lambda c: -sizes[c])
    return efficiency(order), efficiency(largest), max(per_class.values()) / total if total else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jar", type=Path, action="append", required=True, help="a jar to sample (repeatable)")
    ap.add_argument("--classes", type=int, default=300, help="classes sampled per jar (0: the whole jar)")
    ap.add_argument("--old", type=Path, help="source tree of the old build (PYTHONPATH)")
    ap.add_argument("--new", type=Path, default=ROOT, help="source tree of the new build (default: this one)")
    ap.add_argument("--repeat", type=int, default=1, help="alternations per measurement")
    ap.add_argument("--jobs", type=int, nargs="*", default=[1, 2], help="job counts of the new build")
    args = ap.parse_args()
    status = 0
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp:
        work = Path(tmp)
        print("| jar | classes | methods | build | jobs | CPU s | wall s | methods/CPU-s | methods/wall-s |")
        print("|---|---|---|---|---|---|---|---|---|")
        for jar in args.jar:
            sample = sample_jar(jar, args.classes or None, work / f"sample-{jar.stem}.jar")
            with zipfile.ZipFile(sample) as z:
                n_classes = len(z.namelist())
            plan = [("old", 1)] * (args.old is not None) + [("new", j) for j in args.jobs]
            runs: list[Run] = []
            for _ in range(args.repeat):
                for build, jobs in plan:
                    runs.append(run_once(args.old if build == "old" else args.new, sample, jar, jobs, work, build))
            if ("new", 1) in plan:
                in_order, largest, share = balance(work / "rep-new-1.json", sample)
                print(f"<!-- {jar.stem}: 2 workers simulated from the new --jobs 1 run's class times: efficiency "
                      f"{in_order:.3f} in input order, {largest:.3f} largest first; largest class "
                      f"{100 * share:.1f}% of the time -->", flush=True)
            reference = runs[0].out
            for build, jobs in plan:
                mine = [r for r in runs if (r.build, r.jobs) == (build, jobs)]
                cpu, wall = sum(r.cpu for r in mine), sum(r.wall for r in mine)
                methods = sum(r.methods for r in mine)
                same = all(r.out == reference for r in mine)
                status |= not same
                print(f"| {jar.stem} | {n_classes} | {mine[0].methods} | {build} | {jobs} | {cpu:.1f} | {wall:.1f} | "
                      f"{methods / cpu:.1f} | {methods / wall:.2f} |" + ("" if same else " OUTPUT DIFFERS"), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
