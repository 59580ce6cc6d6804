#!/usr/bin/env python3
"""Benchmark of the extraction package on egraph-serialize e-graphs (the extraction-gym instances).

For every JSON file under the given directories (default: ``../shared/extraction`` beside the checkout), it
reads the problem, runs ``peggy_jvm.extract.maxsat.solve`` with ``--work`` units per solver configuration
(propagations plus variables per oracle call: no clock, so the results are the same on any machine), and prints
one table row per instance: file, classes and nodes before/after shrinking, tree and DAG greedy costs (the
DAG greedy run again without a work limit, outside the time measured: the baseline, whether or not ``solve``'s
own run of it finished within its share), our DAG cost, status
(``optimal``/``best_found``/``greedy``), the proved lower bound and the CPU time of ``solve`` (the solvers run
in-process; on a machine shared with other jobs the wall time says little, so the 10 s goal is judged on CPU
time).  The summary
line gives the instances proved optimal (count and %), checks that no result is worse than a greedy (tree or
bottom-up DAG; the exit status is 1 otherwise), the mean gain over the DAG greedy and the worst times; then a
line per instance that could not be solved (unreadable, no valid selection, or a crash: the run goes on past it), one
naming the instances not proved, and for each of those why (:func:`why_unproved`: the gap to the proved lower
bound and how each phase of the solver ended).  Goals (issue 21): never worse than the DAG greedy, mean gain over it
>= 6%, proved optimal on >= 90% of the instances within 10 s each.

    scripts/bench_extract.py [PATH ...] [--work UNITS (default 2e6)] [--jobs N] [--json OUT] [--reference]

``--reference`` also runs, on every instance and in the same run, the reference RC2 set-up the issue compares
against (docs/benchmarks.md): ``RC2Stratified`` (Glucose 3, core exhaustion and minimisation, pysat's default
stratification) on :func:`peggy_jvm.extract.maxsat.encode` of the problem as read (no shrinking, no incumbent,
no bound, no neighbourhood search), in a child process with a 10 s CPU limit that counts its encoding; RC2 is not
anytime, so when the limit ends it the reference's answer is the DAG greedy's selection (extraction-gym's
baseline).  Its columns: the reference's cost and whether it proved it; the summary gets a line of its own.

Each solve runs its RC2 configurations one after the other in its own process; on a 2-core machine keep
``--jobs 1`` (the default) for honest times.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import statistics
import sys
import time
import typing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pysat.examples.rc2 import RC2Stratified  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from peggy_jvm.extract.greedy import dag_greedy_extract  # noqa: E402
from peggy_jvm.extract.maxsat import Status, encode, solve  # noqa: E402
from peggy_jvm.extract.problem import InfeasibleProblemError, Selection, evaluate_selection  # noqa: E402
from peggy_jvm.extract.shrink import ShrinkResult, ShrinkStats  # noqa: E402
from peggy_jvm.extract.serialize import ExtractionFormatError, read_problem  # noqa: E402

#: the shared instances live beside the checkout (``../shared/extraction``), wherever that is
DEFAULT_DIR = ROOT.parent / "shared" / "extraction"


@dataclass
class Row:
    file: str
    classes: int
    nodes: int
    classes_after: int
    nodes_after: int
    greedy: float | None
    #: the bottom-up DAG greedy's cost without a work limit (the baseline of the goals, as extraction-gym runs
    #: it); ``solve`` runs it within its extra work share and goes on without it when that is spent
    dag_greedy: float | None
    cost: float | None
    lower: float | None
    status: str
    #: CPU seconds of ``solve`` (this process: the solvers run in it), what the 10 s goal is judged on
    seconds: float
    read_seconds: float
    source: str
    notes: str = ""
    #: work units spent outside the RC2 configurations (DAG greedy, encoding, Lagrangian bound, neighbourhood
    #: search)
    extra_work: int = 0
    #: wall-clock seconds of ``solve`` (on a loaded machine far above the CPU time)
    wall: float = 0.0
    #: the reference RC2 set-up (``--reference``): its cost (the DAG greedy's when its 10 s ran out), whether it
    #: proved it optimal, and its CPU seconds (encoding included)
    ref_cost: float | None = None
    ref_proved: bool | None = None
    ref_seconds: float | None = None


def collect(paths: list[Path]) -> list[tuple[Path, str]]:
    """The JSON files under ``paths`` with their names in the table: relative to the one folder given, or,
    with several, prefixed by their folder's own name."""
    files: list[tuple[Path, str]] = []
    for p in paths:
        if p.is_dir():
            prefix = Path() if len(paths) == 1 else Path(p.resolve().name)
            files.extend((f, str(prefix / f.relative_to(p))) for f in sorted(p.rglob("*.json")))
        elif p.is_file():
            files.append((p, str(p)))
        else:
            raise SystemExit(f"bench_extract: {p}: no such file or directory")
    return files


#: the reference set-up's CPU limit per instance (the issue's 10 s budget)
REFERENCE_CPU_S = 10


def _reference_child(path: str, conn: typing.Any) -> None:
    """In a child process: the reference RC2 set-up on ``path``; sends (cost, cpu s), or (None, cpu s) when
    RC2 finds no model.  The CPU limit (set after reading, so it counts the encoding and the search) ends the
    process with SIGXCPU, which the parent reads as "out of time"."""
    problem = read_problem(path)
    cpu0 = time.process_time()
    used = resource.getrusage(resource.RUSAGE_SELF)
    limit = int(used.ru_utime + used.ru_stime) + REFERENCE_CPU_S
    resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))
    n_c, n_n = problem.size()
    # the problem as read: every root forced, nothing fixed, nothing dropped
    enc = encode(ShrinkResult(problem, frozenset(problem.roots), frozenset(), ShrinkStats(n_c, n_n, n_c, n_n, 0, 0,
                                                                                           0, 0, 0)))
    with RC2Stratified(enc.wcnf, solver="g3", exhaust=True, minz=True) as rc2:
        model = rc2.compute()
    cost = None
    if model is not None:
        chosen = {problem.nodes[n].eclass: n for n in enc.nodes if model[enc.var[n] - 1] > 0}
        report = evaluate_selection(problem, Selection(chosen))
        cost = report.cost if report.valid else None
    conn.send((cost, time.process_time() - cpu0))
    conn.close()


def run_reference(path: str, dag_greedy: float | None) -> tuple[float | None, bool, float]:
    """The reference set-up's (cost, proved, CPU s) on one instance: RC2's optimum when it finishes within
    :data:`REFERENCE_CPU_S`, else the DAG greedy's cost, unproved (RC2 has nothing better to give)."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_reference_child, args=(path, child))
    proc.start()
    child.close()
    try:
        cost, cpu = parent.recv()
    except EOFError:  # killed by its CPU limit (or crashed): out of time
        cost, cpu = None, None
    proc.join()
    if cpu is None or cost is None:
        return dag_greedy, False, float(REFERENCE_CPU_S)
    return cost, True, cpu


def run_one(path: str, work: int, name: str, reference: bool = False) -> Row:
    """One instance's row; a file that cannot be read or has no valid selection gives an ``error`` row."""
    t0 = time.monotonic()
    try:
        problem = read_problem(path)
        read_s = time.monotonic() - t0
        cpu0 = time.process_time()
        result = solve(problem, work=work)
        cpu = time.process_time() - cpu0
    except (ExtractionFormatError, InfeasibleProblemError) as e:
        return Row(name, 0, 0, 0, 0, None, None, None, None, "error", time.monotonic() - t0, 0.0, "-", str(e))
    except Exception as e:  # noqa: BLE001 (a crash on one instance is that instance's row, not the run's end)
        return Row(name, 0, 0, 0, 0, None, None, None, None, "error", time.monotonic() - t0, 0.0, "-",
                   f"{name}: {type(e).__name__}: {e}")
    baseline = dag_greedy_extract(problem).result  # outside the CPU time measured
    st = result.shrink
    row = Row(name, st.classes_before, st.nodes_before, st.classes_after, st.nodes_after, result.greedy_cost,
              None if baseline is None else baseline.cost, result.cost, result.lower_bound,
              result.status.value, cpu, read_s, result.source, "; ".join(result.notes), result.extra_work,
              result.elapsed)
    if reference:
        row.ref_cost, row.ref_proved, row.ref_seconds = run_reference(path, row.dag_greedy)
    return row


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.6g}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", type=Path, help="JSON files or directories (searched recursively)")
    # 2e6 units per configuration keep every instance of ../shared/extraction within 10 s of CPU time on this
    # machine (the goal's set-up; measured worst 4.8 s, docs/benchmarks.md); the optimizer's own default is 1e6
    # (budget.DEFAULT_SOLVER_WORK)
    ap.add_argument("--work", type=int, default=2_000_000,
                    help="work units per solver configuration and instance (default 2e6)")
    ap.add_argument("--jobs", type=int, default=1, help="instances solved at once (default 1)")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    ap.add_argument("--reference", action="store_true",
                    help="also run the reference RC2 set-up (10 s CPU each) on every instance")
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
    console = Console(width=None if sys.stdout.isatty() else 200)
    t0 = time.monotonic()
    if args.jobs <= 1:
        rows = []
        for f, name in files:
            rows.append(run_one(str(f), args.work, name, args.reference))
            console.print(f"[dim]{rows[-1].file}: {rows[-1].status} in {rows[-1].seconds:.2f} s CPU[/dim]")
    else:
        with ProcessPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(run_one, [str(f) for f, _ in files], [args.work] * len(files),
                                 [name for _, name in files], [args.reference] * len(files)))
    wall = time.monotonic() - t0

    table = Table(title=f"extraction, {args.work:g} work units per configuration and instance")
    cols = ["file", "classes", "nodes", "greedy", "dag greedy", "ours", "lower bound", "status", "cpu s", "by"]
    if args.reference:
        cols += ["reference", "ref cpu s"]
    for col in cols:
        table.add_column(col, justify="left" if col in ("file", "status", "by") else "right")
    style = {"optimal": "green", "best_found": "yellow", "greedy": "red", "none": "red", "error": "red"}
    for r in rows:
        cells = [r.file, f"{r.classes} -> {r.classes_after}", f"{r.nodes} -> {r.nodes_after}",
                 _fmt(r.greedy), _fmt(r.dag_greedy), _fmt(r.cost), _fmt(r.lower),
                 f"[{style[r.status]}]{r.status}[/]", f"{r.seconds:.2f}", r.source]
        if args.reference:
            cells += [_fmt(r.ref_cost) + (" (proved)" if r.ref_proved else ""),
                      "-" if r.ref_seconds is None else f"{r.ref_seconds:.2f}"]
        table.add_row(*cells)
    console.print(table)
    console.print(summary(rows, wall, args.work))
    if args.reference:
        console.print(reference_summary(rows))
    errors = [r for r in rows if r.status == "error"]
    for r in errors:
        console.print(f"error: {r.notes}", markup=False)
    unproved = [r for r in rows if r.status not in (Status.OPTIMAL.value, "error")]
    if unproved:
        console.print(f"not proved optimal: {', '.join(r.file for r in unproved)}")
        for r in unproved:
            console.print(f"  {r.file}: {why_unproved(r)}", markup=False, soft_wrap=True)  # one line each
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in rows], indent=1))
    return 1 if worse_than_greedy(rows) else 0


def why_unproved(r: Row) -> str:
    """Why a row is not proved optimal: the gap between its cost and the proved lower bound (relative to the
    cost's magnitude), then how each phase of ``solve`` ended (its notes: a configuration's work spent, the
    Lagrangian bound reached, the neighbourhood search's rounds)."""
    if r.cost is None:
        head = "no selection"
    elif r.lower is None:
        head = f"cost {_fmt(r.cost)}, no lower bound"
    else:
        gap = r.cost - r.lower
        rel = f" ({100 * gap / abs(r.cost):.1f}%)" if r.cost else ""
        head = f"gap {gap:.6g}{rel} between cost {_fmt(r.cost)} and lower bound {_fmt(r.lower)}"
    return f"{head}; {r.notes}" if r.notes else head


def worse_than_greedy(rows: list[Row]) -> list[str]:
    """Instances whose result is dearer than a greedy's (tree or DAG), or missing while a greedy had one."""
    out = []
    for r in rows:
        floor = min((g for g in (r.greedy, r.dag_greedy) if g is not None), default=None)
        if floor is not None and (r.cost is None or r.cost > floor):
            out.append(r.file)
    return out


def reference_summary(rows: list[Row]) -> str:
    """The reference set-up's line: proved share, never worse than the DAG greedy (by construction), mean gain
    over the DAG greedy, and where ours is cheaper or dearer than it."""
    solved = [r for r in rows if r.status != "error" and r.ref_cost is not None]
    n = max(1, len(solved))
    proved = sum(bool(r.ref_proved) for r in solved)
    gains = [(r.dag_greedy - r.ref_cost) / abs(r.dag_greedy) for r in solved
             if r.dag_greedy is not None and r.ref_cost is not None and r.dag_greedy != 0]
    ours_better = sum(r.cost is not None and r.ref_cost is not None and r.cost < r.ref_cost for r in solved)
    ours_worse = sum(r.cost is not None and r.ref_cost is not None and r.cost > r.ref_cost for r in solved)
    return (f"reference (RC2Stratified, exhaust + minz, {REFERENCE_CPU_S} s CPU, DAG greedy when out of time): "
            f"proved optimal {proved} ({100 * proved / n:.1f}%) of {len(solved)}; mean gain over the DAG greedy "
            f"{100 * statistics.fmean(gains) if gains else 0:.2f}%; ours cheaper on {ours_better}, dearer on "
            f"{ours_worse}")


def summary(rows: list[Row], wall: float, work: int) -> str:
    """The one-line summary: proved share, the never-worse check, the mean gain over the DAG greedy, times."""
    solved = [r for r in rows if r.status != "error"]
    n = max(1, len(solved))
    worse = worse_than_greedy(rows)
    proved = sum(r.status == Status.OPTIMAL.value for r in solved)
    gains = [(r.dag_greedy - r.cost) / abs(r.dag_greedy) for r in solved
             if r.dag_greedy is not None and r.cost is not None and r.dag_greedy != 0]
    slow = sorted(solved, key=lambda r: r.seconds, reverse=True)[:3]
    over = [r for r in solved if r.seconds > 10.0]
    # the configurations stop within their own work by construction; the extra share is what can overrun
    over_work = [r for r in solved if r.extra_work > 1.1 * work]
    return (f"{len(solved)} instances ({len(rows) - len(solved)} errors): proved optimal {proved} "
            f"({100 * proved / n:.1f}%); "
            f"never worse than a greedy: {'yes' if not worse else 'NO: ' + ', '.join(worse)}; "
            f"mean gain over the DAG greedy {100 * statistics.fmean(gains) if gains else 0:.2f}% "
            f"(> 1% better on {sum(g > 0.01 for g in gains)}, on {len(gains)} instances with a DAG greedy cost); "
            f"best_found {sum(r.status == 'best_found' for r in solved)}, "
            f"greedy {sum(r.status == 'greedy' for r in solved)}; "
            f"worst CPU times {', '.join(f'{r.file} {r.seconds:.2f} s' for r in slow)}; "
            f"over 10 s: {len(over)}; extra work over its share by > 10%: {len(over_work)} "
            f"(most {max((r.extra_work for r in solved), default=0) / work:.3f} of it); total wall {wall:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
