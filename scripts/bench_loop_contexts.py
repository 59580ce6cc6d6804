#!/usr/bin/env python3
"""A/B of the optimistic analysis' facts from loop exit tests (rules/optimistic.py ``loop_contexts``; docs/optimistic.md
"Cost"): the same input optimized in-process (``optimize_input``, full stage, one job, no cache) with the loop
contexts off (``MAX_CONTEXTS = 0``) and on, alternating, and a table of run CPU, per-method time p50/p95 (the
report's ``time_ms["full"]``), methods rewritten, loops rewritten under their exit test and contexts found with a
substitution (both counted in every e-graph the rule searches: the optimizer's and the self-check's), and the
methods whose status or cost differs between the two.

Usage::

    scripts/bench_loop_contexts.py INPUT [--classpath JAR] [--repeat N]

INPUT is a class, jar or directory (a directory of classes unzipped from a jar, with the jar as class path, for a
sample). Output goes to a temporary directory. Timing on a loaded machine is noisy: compare medians of repeats.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import peggy_jvm.rules.optimistic as O  # noqa: E402
from peggy_jvm.pipeline import Stage, optimize_input  # noqa: E402

_counts = {"loops": 0, "found": 0}


def _instrument() -> None:
    rewrite, contexts = O.LoopOptimism._rewrite_loop, O.loop_contexts

    def counted_rewrite(self, eg, match):
        done = rewrite(self, eg, match)
        _counts["loops"] += bool(done)
        return done

    def counted_contexts(eg, res, mutant=None):
        out = contexts(eg, res, mutant)
        _counts["found"] += len(out)
        return out

    O.LoopOptimism._rewrite_loop = counted_rewrite  # type: ignore[method-assign]
    O.loop_contexts = counted_contexts


def _run(inp: Path, classpath: list[Path], on: bool, out: Path) -> dict:
    O.MAX_CONTEXTS = 8 if on else 0
    _counts.update(loops=0, found=0)
    t0 = time.process_time()
    _, rep = optimize_input(inp, out / inp.name, Stage.FULL, classpath=classpath or None, jobs=1)
    cpu = time.process_time() - t0
    times = sorted(m.time_ms["full"] / 1000 for m in rep.methods if "full" in m.time_ms)
    at = lambda q: times[min(len(times) - 1, int(q * len(times)))] if times else 0.0  # noqa: E731
    return {"cpu": cpu, "p50": at(0.5), "p95": at(0.95), "methods": len(times),
            "rewritten": sum(m.status == "rewritten" for m in rep.methods), **_counts,
            "rows": {(m.class_name, m.name, m.descriptor): (m.status, m.cost_after) for m in rep.methods}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", type=Path)
    ap.add_argument("--classpath", type=Path, action="append", default=[])
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    _instrument()
    runs: dict[bool, list[dict]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="bench-loop-contexts-") as tmp:
        print(f"{'contexts':8} {'cpu s':>7} {'p50 s':>7} {'p95 s':>7} {'methods':>7} {'rewritten':>9} "
              f"{'loops':>5} {'found':>5}")
        for rep in range(args.repeat):
            for on in (False, True):
                r = _run(args.input, args.classpath, on, Path(tmp) / f"{rep}-{int(on)}")
                runs[on].append(r)
                print(f"{'on' if on else 'off':8} {r['cpu']:7.1f} {r['p50']:7.3f} {r['p95']:7.3f} {r['methods']:7} "
                      f"{r['rewritten']:9} {r['loops']:5} {r['found']:5}", flush=True)
    for on in (False, True):
        rs = runs[on]
        print(f"{'on' if on else 'off':8} median cpu {statistics.median(r['cpu'] for r in rs):.1f} s, "
              f"p50 {statistics.median(r['p50'] for r in rs):.3f} s, p95 {statistics.median(r['p95'] for r in rs):.3f} s")
    a, b = runs[False][-1]["rows"], runs[True][-1]["rows"]
    differ = sorted(k for k in a if a[k] != b.get(k))
    print(f"methods whose result differs: {len(differ)}")
    for k in differ:
        print(f"  {k[0]}.{k[1]}{k[2]}: {a[k]} -> {b.get(k)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
