#!/usr/bin/env python3
"""The Dask executor's benchmark (issue 19 item 3): a two-worker LocalCluster against ``--jobs 1``.

    .venv/bin/python scripts/bench_dask.py [--jar commons-lang3] [--sample 8] [--rounds 2] [--workers 2]

A 1-in-``--sample`` CRC-32 sample of the jar's classes (tests/support/corpus.py, the whole jar on the class
path) is optimized by ``peggy-jvm optimize`` as a subprocess, alternately with ``--jobs 1`` and with
``--executor dask`` on a LocalCluster of ``--workers`` worker processes (one thread each) started once for the
whole run, ``--rounds`` times each, in the same minutes (the machine is shared and noisy: compare the two
columns of one run, never a lone time). Throughput is methods per wall-clock second (what a build waits for);
the client's own CPU seconds are printed beside it (the cluster's workers are other processes). Every run's
output must be byte-identical to the first ``--jobs 1`` run's: the script exits 1 otherwise.

Issue 19's goal: the cluster at least 1.5x the throughput of ``--jobs 1`` on a 2-core machine.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.support.corpus import cache_dir, write_subset  # noqa: E402

CLI = str(Path(sys.executable).parent / "peggy-jvm")


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(args: list[str], out: Path, report: Path) -> tuple[float, float, int]:
    """One CLI run: (wall seconds, CPU seconds of the client process, methods)."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    subprocess.run([CLI, "optimize", *args, "-o", str(out), "--json", str(report), "--no-cache"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    return wall, cpu, len(json.loads(report.read_text())["methods"])


def _contents(jar: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(jar) as z:
        return {n: z.read(n) for n in sorted(z.namelist())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jar", default="commons-lang3")
    ap.add_argument("--sample", type=int, default=8, help="1-in-N CRC-32 sample of the jar's classes")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    from distributed import LocalCluster

    jar = cache_dir() / "jars" / f"{a.jar}.jar"
    if not jar.is_file():
        print(f"bench_dask: {jar}: missing (run scripts/fetch_corpus.sh)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-dask-") as tmp, \
            LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                         silence_logs=50) as cluster:
        d = Path(tmp)
        sample = d / "sample.jar"
        names = write_subset(jar, sample, a.sample)
        base = [str(sample), "--classpath", str(jar)]
        kinds = {"jobs 1": ["--jobs", "1"],
                 f"dask {a.workers}w": ["--executor", "dask", "--scheduler", cluster.scheduler_address]}
        times: dict[str, list[tuple[float, float, int]]] = {k: [] for k in kinds}
        load_before = os.getloadavg()
        reference: dict[str, bytes] | None = None
        ok = True
        for r in range(a.rounds):
            for kind, extra in kinds.items():  # alternating, in the same minutes
                out = d / f"out-{r}-{kind.replace(' ', '')}.jar"
                times[kind].append(run_once([*base, *extra], out, d / "report.json"))
                got = _contents(out)
                if reference is None:
                    reference = got
                elif got != reference:
                    print(f"bench_dask: {kind} round {r + 1}: output differs from the first --jobs 1 run")
                    ok = False
        print(f"{a.jar}: {len(names)} classes (1 in {a.sample}), {a.rounds} rounds alternating, "
              f"LocalCluster of {a.workers} workers x 1 thread; load average (1, 5, 15 min) before "
              f"{' '.join(f'{x:.2f}' for x in load_before)}, after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"{'executor':<12} {'methods':>8} {'wall s':>8} {'client cpu s':>13} {'methods/s':>10} {'ratio':>7}")
        base_rate = None
        for kind, rows in times.items():
            wall = statistics.median(w for w, _, _ in rows)
            cpu = statistics.median(c for _, c, _ in rows)
            methods = rows[0][2]
            rate = methods / wall
            base_rate = base_rate or rate
            print(f"{kind:<12} {methods:>8} {wall:>8.1f} {cpu:>13.1f} {rate:>10.2f} {rate / base_rate:>7.2f}")
        print("outputs byte-identical" if ok else "OUTPUTS DIFFER")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
