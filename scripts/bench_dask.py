#!/usr/bin/env python3
"""The Dask executor's benchmark (issue 19 item 3): a two-worker LocalCluster against ``--jobs 1``.

    .venv/bin/python scripts/bench_dask.py [--jar commons-lang3] [--sample 8] [--rounds 2] [--workers 2]

A 1-in-``--sample`` CRC-32 sample of the jar's classes (tests/support/corpus.py, the whole jar on the class
path) is optimized by ``peggy-jvm optimize`` as a subprocess, alternately with ``--jobs 1`` and with
``--executor dask`` on a LocalCluster of ``--workers`` worker processes (one thread each) started once for the
whole run, ``--rounds`` times each, in the same minutes (the machine is shared and noisy: compare the two
columns of one run, never a lone time). Throughput is methods per wall-clock second (what a build waits for)
and per CPU-second: the CPU of a run is the client's (the ``peggy-jvm`` process and its workers) plus what the
cluster spent meanwhile, its worker processes and this process (which runs the scheduler and the nannies), read
with psutil (a dependency of Dask's); its idle CPU (timers, heartbeats: about 5% of a core for two workers) is
counted in the Dask runs only. The tool's modules are byte-compiled first (``bench_throughput``'s
``compile_tree``: as installed). Every run's output and report rows (status, reason) must be identical to the
first ``--jobs 1`` run's: the script exits 1 otherwise.

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

sys.path.insert(0, str(ROOT / "scripts"))
from bench_throughput import compile_tree, sample_jar  # noqa: E402

CLI = str(Path(sys.executable).parent / "peggy-jvm")


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _cluster_cpu() -> float:
    """CPU seconds so far of this process (the LocalCluster's scheduler and nannies run here) and of its live
    child processes (the cluster's workers; a finished CLI run is reaped, in :func:`_children_cpu`)."""
    import psutil
    me = psutil.Process()
    total = sum(me.cpu_times()[:2])
    for child in me.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.NoSuchProcess:
            pass
    return total


def run_once(args: list[str], out: Path, report: Path) -> tuple[float, float, float, int, tuple]:
    """One CLI run: (wall seconds, CPU seconds of the client and its workers, CPU seconds of the cluster
    meanwhile, methods with code, the report rows' outcomes)."""
    cpu0, cluster0, t0 = _children_cpu(), _cluster_cpu(), time.perf_counter()
    subprocess.run([CLI, "optimize", *args, "-o", str(out), "--json", str(report), "--no-cache"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall, cpu, cluster = time.perf_counter() - t0, _children_cpu() - cpu0, _cluster_cpu() - cluster0
    rows = json.loads(report.read_text())["methods"]
    outcome = tuple((m["class"], m["name"], m["descriptor"], m["status"], m["reason"]) for m in rows)
    return wall, cpu, cluster, sum(1 for m in rows if m["reason"] != "no code (abstract or native)"), outcome


def _contents(jar: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(jar) as z:
        return {n: z.read(n) for n in sorted(z.namelist())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jar", default="commons-lang3")
    ap.add_argument("--sample", type=int, default=8, help="1-in-N CRC-32 sample of the jar's classes")
    ap.add_argument("--classes", type=int,
                    help="instead of --sample: every k-th of the jar's classes, N in all (bench_throughput's samples)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    from distributed import LocalCluster
    compile_tree(ROOT)

    jar = cache_dir() / "jars" / f"{a.jar}.jar"
    if not jar.is_file():
        print(f"bench_dask: {jar}: missing (run scripts/fetch_corpus.sh)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-dask-") as tmp, \
            LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                         silence_logs=50) as cluster:
        d = Path(tmp)
        sample = d / "sample.jar"
        if a.classes:
            sample_jar(jar, a.classes, sample)
            with zipfile.ZipFile(sample) as z:
                names = z.namelist()
        else:
            names = write_subset(jar, sample, a.sample)
        base = [str(sample), "--classpath", str(jar)]
        kinds = {"jobs 1": ["--jobs", "1"],
                 f"dask {a.workers}w": ["--executor", "dask", "--scheduler", cluster.scheduler_address]}
        times: dict[str, list[tuple[float, float, float, int, tuple]]] = {k: [] for k in kinds}
        load_before = os.getloadavg()
        reference: tuple[dict[str, bytes], tuple] | None = None
        ok = True
        for r in range(a.rounds):
            for kind, extra in kinds.items():  # alternating, in the same minutes
                out = d / f"out-{r}-{kind.replace(' ', '')}.jar"
                times[kind].append(run_once([*base, *extra], out, d / "report.json"))
                got = (_contents(out), times[kind][-1][-1])
                if reference is None:
                    reference = got
                elif got != reference:
                    print(f"bench_dask: {kind} round {r + 1}: output differs from the first --jobs 1 run")
                    ok = False
        how = f"every k-th, {a.classes}" if a.classes else f"1 in {a.sample}"
        print(f"{a.jar}: {len(names)} classes ({how}), {a.rounds} rounds alternating, "
              f"LocalCluster of {a.workers} workers x 1 thread; load average (1, 5, 15 min) before "
              f"{' '.join(f'{x:.2f}' for x in load_before)}, after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"{'executor':<12} {'methods':>8} {'wall s':>8} {'client cpu s':>13} {'cluster cpu s':>14} "
              f"{'methods/s':>10} {'ratio':>7} {'methods/cpu-s':>14} {'ratio':>7}")
        base: tuple[float, float] | None = None
        for kind, rows in times.items():
            wall = statistics.median(r[0] for r in rows)
            cpu = statistics.median(r[1] for r in rows)
            # a local run's CPU is its own: the cluster idling meanwhile is not its cost (a Dask run's is)
            cluster = statistics.median(r[2] for r in rows) if kind.startswith("dask") else 0.0
            methods = rows[0][3]
            rate, cpu_rate = methods / wall, methods / (cpu + cluster)
            base = base or (rate, cpu_rate)
            print(f"{kind:<12} {methods:>8} {wall:>8.1f} {cpu:>13.1f} {cluster:>14.1f} {rate:>10.2f} "
                  f"{rate / base[0]:>7.2f} {cpu_rate:>14.1f} {cpu_rate / base[1]:>7.2f}")
        print("outputs byte-identical" if ok else "OUTPUTS DIFFER")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
