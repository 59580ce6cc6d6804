#!/usr/bin/env python3
"""Extraction on the optimizer's own e-graphs: every method of the given jars through the full stage.

Runs ``pipeline.optimize_input`` (full stage, default budgets, one process, no result cache) on each jar
(default: commons-lang3 and jsoup from ``~/.cache/peggy-jvm/corpus/jars``) and prints per jar:
- how each method's extraction search ended, from the report's own rows (``search``: "optimal (proved)",
  "best found", "greedy", "none", or "no cheaper (bound)" when the triage's bound proved that no selection is
  cheaper than the original; methods with nothing to search are not counted) and the share proved (optimal or
  settled by the bound);
- the CPU time of extraction (``pipeline._extract``: the triage and ``extract_peg``, the checker's phi-profile
  checks and the reverter's trials included) against the CPU time of the whole run, and the report's wall
  ``full.triage`` + ``full.problem`` + ``full.extract`` against the run's wall time;
- from ``maxsat.solve``, wrapped to record every call (the triage's solves without a checker included): the
  mean gain over the bottom-up DAG greedy where the checker accepted its selection, and how many problems had the
  quadratic shape (``extract/quadratic.py``: its phase ran).

    scripts/bench_own_extract.py [JAR ...] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from peggy_jvm import pipeline  # noqa: E402
from peggy_jvm.extract import maxsat  # noqa: E402
from peggy_jvm.pegextract.select import NO_CHEAPER  # noqa: E402

CORPUS = Path.home() / ".cache" / "peggy-jvm" / "corpus" / "jars"


def run_jar(jar: Path, out_dir: Path) -> dict:
    """One jar through the full stage with every solver call recorded."""
    calls: list[dict] = []
    original = maxsat.solve

    def recording(problem, **kwargs):
        t0 = time.process_time()
        try:
            res = original(problem, **kwargs)
        except Exception as e:
            calls.append({"status": f"raised {type(e).__name__}", "cpu": time.process_time() - t0,
                          "nodes": len(problem.nodes)})
            raise
        calls.append({"status": res.status.value, "cpu": time.process_time() - t0, "nodes": len(problem.nodes),
                      "source": res.source, "cost": res.cost, "dag_greedy": res.dag_greedy_cost,
                      "quadratic": any(n.startswith("quadratic:") for n in res.notes)})
        return res

    extract = pipeline._extract
    extract_cpu = [0.0]

    def timed(*args, **kwargs):
        t0 = time.process_time()
        try:
            return extract(*args, **kwargs)
        finally:
            extract_cpu[0] += time.process_time() - t0

    maxsat.solve = recording  # pegextract.select and the triage call maxsat.solve through the module
    pipeline._extract = timed  # looked up in the module by _full at each call
    t0, w0 = time.process_time(), time.perf_counter()
    try:
        _, report = pipeline.optimize_input(jar, out_dir / jar.name, pipeline.Stage.FULL)
    finally:
        maxsat.solve = original
        pipeline._extract = extract
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    statuses = Counter(c["status"] for c in calls)
    search = Counter(m.search for m in report.methods if m.search is not None)
    extract_ms = sum(m.time_ms.get(k, 0.0) for m in report.methods
                     for k in ("full.triage", "full.problem", "full.extract"))
    # the gain over the bottom-up DAG greedy where both have a cost (the checker may reject the greedy's)
    gains = [(c["dag_greedy"] - c["cost"]) / abs(c["dag_greedy"]) for c in calls
             if c.get("cost") is not None and c.get("dag_greedy") not in (None, 0)]
    return {"jar": jar.name, "methods": len(report.methods), "searched": sum(search.values()),
            "search": dict(sorted(search.items())), "extract_cpu": extract_cpu[0], "solver_calls": len(calls),
            "statuses": dict(statuses), "solve_cpu": sum(c["cpu"] for c in calls), "run_cpu": cpu,
            "gain": sum(gains) / len(gains) if gains else 0.0, "gains": len(gains),
            "better": sum(g > 0 for g in gains), "worse": sum(g < 0 for g in gains),
            "quadratic": sum(bool(c.get("quadratic")) for c in calls),
            "run_wall": wall, "full_extract_wall": extract_ms / 1000,
            "slowest": sorted(calls, key=lambda c: -c["cpu"])[:5]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jars", nargs="*", type=Path)
    ap.add_argument("--json", type=Path, help="also write the results as JSON here")
    ap.add_argument("--out", type=Path, default=Path("/tmp/bench_own_extract"), help="output jars go here")
    args = ap.parse_args(argv)
    jars = args.jars or [CORPUS / "commons-lang3.jar", CORPUS / "jsoup.jar"]
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for jar in jars:
        r = run_jar(jar, args.out)
        rows.append(r)
        n = max(1, r["searched"])
        shares = ", ".join(f"{k} {v} ({100 * v / n:.1f}%)" for k, v in r["search"].items())
        proved = sum(v for k, v in r["search"].items() if k in ("optimal (proved)", NO_CHEAPER))
        share = 100 * r["extract_cpu"] / max(r["run_cpu"], 1e-9)
        calls = ", ".join(f"{k} {v}" for k, v in sorted(r["statuses"].items()))
        print(f"{r['jar']}: {r['methods']} methods, {r['searched']} searched: {shares}; proved "
              f"{proved} ({100 * proved / n:.1f}%); extraction {r['extract_cpu']:.1f} s CPU of {r['run_cpu']:.1f} s "
              f"({share:.1f}%); {r['solver_calls']} solver calls ({calls}, {r['solve_cpu']:.1f} s CPU); "
              f"mean gain over the DAG "
              f"greedy {100 * r['gain']:.2f}% on {r['gains']} (better on {r['better']}, worse on {r['worse']}); "
              f"of the quadratic shape {r['quadratic']}; "
              f"triage + extraction {r['full_extract_wall']:.1f} s of {r['run_wall']:.1f} s wall", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
