#!/usr/bin/env python3
"""Benchmark of the extraction package on egraph-serialize e-graphs (the extraction-gym instances).

For every JSON file under the given directories (default: ``/work/shared/extraction``), it reads the problem,
runs ``peggy_jvm.extract.maxsat.solve`` with ``--work`` units per solver configuration (propagations plus
variables per oracle call: no clock, so the results are the same on any machine), and prints one table row per
instance: file, classes and nodes before/after shrinking, greedy DAG cost, our DAG cost, status
(``optimal``/``best_found``/``greedy``), the proved lower bound and the wall time of ``solve``.  The summary
line gives the instances proved optimal (count and %), checks that no result is worse than greedy (the run
fails otherwise), the mean gain over greedy and the worst times; a last line names the instances not proved.
Target (issue 6): never worse than greedy, proved optimal on >= 95% of the instances within 10 s each.

    scripts/bench_extract.py [PATH ...] [--work UNITS] [--jobs N] [--json OUT]

Each solve runs its RC2 configurations one after the other in its own process; on a 2-core machine keep
``--jobs 1`` (the default) for honest times.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from peggy_jvm.extract.maxsat import Status, solve  # noqa: E402
from peggy_jvm.extract.serialize import read_problem  # noqa: E402

DEFAULT_DIR = Path("/work/shared/extraction")


@dataclass
class Row:
    file: str
    classes: int
    nodes: int
    classes_after: int
    nodes_after: int
    greedy: float | None
    cost: float | None
    lower: float | None
    status: str
    seconds: float
    read_seconds: float
    source: str
    notes: str = ""


def collect(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(p.rglob("*.json")))
        elif p.is_file():
            files.append(p)
        else:
            raise SystemExit(f"bench_extract: {p}: no such file or directory")
    return files


def run_one(path: str, work: int, base: str) -> Row:
    t0 = time.monotonic()
    problem = read_problem(path)
    read_s = time.monotonic() - t0
    result = solve(problem, work=work)
    st = result.shrink
    name = str(Path(path).relative_to(base)) if path.startswith(base) else path
    return Row(name, st.classes_before, st.nodes_before, st.classes_after, st.nodes_after, result.greedy_cost,
               result.cost, result.lower_bound, result.status.value, result.elapsed, read_s, result.source,
               "; ".join(result.notes))


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.6g}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", type=Path, help="JSON files or directories (searched recursively)")
    ap.add_argument("--work", type=int, default=100_000_000,
                    help="work units per solver configuration and instance (default 1e8)")
    ap.add_argument("--jobs", type=int, default=1, help="instances solved at once (default 1)")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = ap.parse_args(argv)
    paths = args.paths
    if not paths:
        if not DEFAULT_DIR.is_dir():
            raise SystemExit(f"bench_extract: {DEFAULT_DIR} does not exist; pass the instance files or "
                             f"directories to benchmark")
        paths = [DEFAULT_DIR]
    files = collect(paths)
    if not files:
        raise SystemExit("bench_extract: no .json files found")
    base = str(paths[0]) + "/" if len(paths) == 1 and paths[0].is_dir() else ""
    console = Console(width=None if sys.stdout.isatty() else 200)
    t0 = time.monotonic()
    if args.jobs <= 1:
        rows = []
        for f in files:
            rows.append(run_one(str(f), args.work, base))
            console.print(f"[dim]{rows[-1].file}: {rows[-1].status} in {rows[-1].seconds:.2f} s[/dim]")
    else:
        with ProcessPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(run_one, [str(f) for f in files], [args.work] * len(files),
                                 [base] * len(files)))
    wall = time.monotonic() - t0

    table = Table(title=f"extraction, {args.work:g} work units per configuration and instance")
    for col in ("file", "classes", "nodes", "greedy", "ours", "lower bound", "status", "time s", "by"):
        table.add_column(col, justify="left" if col in ("file", "status", "by") else "right")
    style = {"optimal": "green", "best_found": "yellow", "greedy": "red", "none": "red"}
    for r in rows:
        table.add_row(r.file, f"{r.classes} -> {r.classes_after}", f"{r.nodes} -> {r.nodes_after}",
                      _fmt(r.greedy), _fmt(r.cost), _fmt(r.lower), f"[{style[r.status]}]{r.status}[/]",
                      f"{r.seconds:.2f}", r.source)
    console.print(table)

    worse = [r.file for r in rows if r.greedy is not None and (r.cost is None or r.cost > r.greedy)]
    proved = sum(r.status == Status.OPTIMAL.value for r in rows)
    gains = [(r.greedy - r.cost) / abs(r.greedy) for r in rows
             if r.greedy is not None and r.cost is not None and r.greedy != 0]
    better = sum(g > 0.01 for g in gains)
    slow = sorted(rows, key=lambda r: r.seconds, reverse=True)[:3]
    over = [r for r in rows if r.seconds > 10.0]
    console.print(
        f"{len(rows)} instances: proved optimal {proved} ({100 * proved / len(rows):.1f}%); "
        f"never worse than greedy: {'yes' if not worse else 'NO: ' + ', '.join(worse)}; "
        f"mean gain over greedy {100 * statistics.fmean(gains) if gains else 0:.2f}% "
        f"(> 1% better on {better}); "
        f"best_found {sum(r.status == 'best_found' for r in rows)}, greedy {sum(r.status == 'greedy' for r in rows)}; "
        f"worst times {', '.join(f'{r.file} {r.seconds:.2f} s' for r in slow)}; "
        f"over 10 s: {len(over)}; total wall {wall:.0f} s")
    unproved = [r.file for r in rows if r.status != Status.OPTIMAL.value]
    if unproved:
        console.print(f"not proved optimal: {', '.join(unproved)}")
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in rows], indent=1))
    assert not worse, f"worse than greedy: {worse}"
    return 0


if __name__ == "__main__":
    sys.exit(main())
