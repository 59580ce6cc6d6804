#!/usr/bin/env python3
"""Where ``peggy-jvm optimize`` spends its CPU: seconds per method outcome and per full-stage sub-stage (issue 19).

What it measures: one ``--jobs 1``, no-cache run of the full stage on a sample of a jar (``bench_throughput``'s
``sample_jar``: every k-th class, the whole jar as class path) in this process, with ``time.process_time``
around each method's ``pipeline._transform`` and around the sub-stages it calls (``_build``, ``_saturate``,
``triage.cannot_pay``, ``pegextract.select.extract_peg``, ``_self_check``; the rest is lifting, reverting,
lowering and pricing). CPU time, not the report's wall-clock ``time_ms``: on a loaded machine the wall clock
inflates every method by the load, unevenly. Outcomes are the report's reasons grouped (no rule fired, cannot
pay, no cheaper PEG, emitted code does not pay, self-check refused, rewritten, fallback ...). The last lines give
the whole run's CPU outside the methods (reading, the hierarchy, the rules, merging, writing) and the garbage
collector's CPU within the run (``gc.callbacks``, per generation).

The build measured is the one imported: run it with ``PYTHONPATH=<source tree>`` to measure another (an old
commit's ``git archive``). Prints a Markdown table; ``--out`` keeps the output jar (to compare two builds' bytes).

Usage::

    PYTHONPATH=/tmp/old .venv/bin/python scripts/profile_outcomes.py --jar ~/.cache/peggy-jvm/corpus/jars/guava.jar
"""
from __future__ import annotations

import argparse
import collections
import gc
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_throughput import sample_jar  # noqa: E402  (the same samples as the throughput benchmark)

from peggy_jvm import pipeline, triage  # noqa: E402
from peggy_jvm.pegextract import select  # noqa: E402

STAGES = ("build", "saturate", "triage", "extract", "self-check")


def outcome(report: pipeline.MethodReport) -> str:
    """The report row's outcome, grouped."""
    reason = report.reason
    if report.status in ("rewritten", "fallback"):
        return report.status
    for key, name in (("no rule fired", "no rule fired"), ("cannot pay", "cannot pay (triage)"),
                      ("reverter refuses every extraction", "reverter refuses (triage)"),
                      ("self-check", "self-check refused"), ("no code", "no code")):
        if key in reason:
            return name
    if reason.startswith("no cheaper PEG"):
        return "no cheaper PEG (extraction)"
    if reason.startswith("emitted code"):
        return "emitted code does not pay"
    return "other (unsupported code)"


class _Clock:
    """CPU seconds per method (its class, name, descriptor) and sub-stage, gathered by wrapped functions."""

    def __init__(self) -> None:
        self.method: tuple[str, str, str] | None = None
        self.spent: dict[tuple[str, str, str], collections.Counter] = collections.defaultdict(collections.Counter)
        self.collections: collections.Counter = collections.Counter()  # generation -> CPU s, and "n<gen>": count
        self._gc_started = 0.0

    def on_gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc_started = time.process_time()
        else:
            self.collections[info["generation"]] += time.process_time() - self._gc_started
            self.collections[f"n{info['generation']}"] += 1

    def wrap(self, owner, name: str, label: str) -> None:
        inner = getattr(owner, name)

        def timed(*args, **kwargs):
            t0 = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                if self.method is not None:
                    self.spent[self.method][label] += time.process_time() - t0
        setattr(owner, name, timed)

    def wrap_method(self) -> None:
        inner = pipeline._transform

        def timed(stage, cf, m, *args, **kwargs):
            self.method = (cf.name, m.name, m.descriptor)
            t0 = time.process_time()
            try:
                return inner(stage, cf, m, *args, **kwargs)
            finally:
                self.spent[self.method]["total"] += time.process_time() - t0
                self.method = None
        pipeline._transform = timed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jar", type=Path, required=True, help="the jar to sample (and its class path)")
    ap.add_argument("--classes", type=int, default=100, help="classes sampled (0: the whole jar)")
    ap.add_argument("--out", type=Path, help="keep the output jar here")
    args = ap.parse_args()
    clock = _Clock()
    clock.wrap_method()
    clock.wrap(pipeline, "_build", "build")
    clock.wrap(pipeline, "_saturate", "saturate")
    clock.wrap(triage, "cannot_pay", "triage")
    clock.wrap(select, "extract_peg", "extract")
    clock.wrap(pipeline, "_self_check", "self-check")
    with tempfile.TemporaryDirectory(prefix="profile-outcomes-") as tmp:
        sample = sample_jar(args.jar, args.classes or None, Path(tmp) / "sample.jar")
        out = args.out or Path(tmp) / "out.jar"
        out.unlink(missing_ok=True)
        t0 = time.process_time()
        gc.callbacks.append(clock.on_gc)
        try:
            _, report = pipeline.optimize_input(sample, out, pipeline.Stage.FULL, classpath=[args.jar], jobs=1,
                                                method_timeout=None)
        finally:
            gc.callbacks.remove(clock.on_gc)
        total = time.process_time() - t0
    per: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    count: collections.Counter = collections.Counter()
    for r in report.methods:
        kind = outcome(r)
        count[kind] += 1
        per[kind].update(clock.spent.get((r.class_name, r.name, r.descriptor), {}))
    print(f"{args.jar.name}, {args.classes or 'all'} classes: {len(report.methods)} methods, run CPU {total:.1f} s")
    print("| outcome | methods | CPU s | share | " + " | ".join(STAGES) + " | rest |")
    print("|---|---|---|---|" + "---|" * (len(STAGES) + 1))
    for kind, spent in sorted(per.items(), key=lambda kv: -kv[1]["total"]):
        rest = spent["total"] - sum(spent[s] for s in STAGES)
        print(f"| {kind} | {count[kind]} | {spent['total']:.2f} | {100 * spent['total'] / total:.0f}% | "
              + " | ".join(f"{spent[s]:.2f}" for s in STAGES) + f" | {rest:.2f} |")
    methods = sum(spent["total"] for spent in clock.spent.values())
    c = clock.collections
    print(f"outside the methods: {total - methods:.2f} CPU-s of {total:.2f}; garbage collection in all: "
          + ", ".join(f"generation {g} {c[g]:.2f} s ({c[f'n{g}']} collections)" for g in range(3)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
