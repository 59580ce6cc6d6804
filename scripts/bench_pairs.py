#!/usr/bin/env python3
"""The labelled pair suite of issue 17 ("How it is checked"): validate every pair and measure the goals.

The command line of ``tests/support/pairsuite.py`` (which owns the manifest, the validation of the pairs in worker
processes, the judging against the labels and the report): builds the pairs (``fixture_build.build_pairs``),
validates every one (or those named by ``--only``) and prints the table against the issue's goals, the pairs by
kind and by tag, and the open pairs by cause.

Outputs: the table on stdout (times per pair: as their budgets count them, CPU time and JVM waits; then the run's
CPU in all and per pair, workers and JVMs included); ``--json FILE`` the outcomes. A malformed manifest, a failed
build or ``--only`` matching no pair is one line on stderr and exit 2.

Usage::

    python3 scripts/bench_pairs.py [--method-timeout S] [--jobs N] [--json FILE] [--only ID ...]
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import fixture_build  # noqa: E402
from tests.support.pairsuite import MANIFEST, SuiteError, load_suite, report_text, run_suite  # noqa: E402


def cpu_seconds() -> float:
    """CPU time of this process and of its children waited for (the workers, the JVMs), user and system."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method-timeout", type=float, default=10.0, help="validate's budget per method pair")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--json", type=Path, help="write the outcomes here")
    parser.add_argument("--only", nargs="*", help="pair ids")
    args = parser.parse_args(argv)
    try:
        specs = load_suite()
        classes = fixture_build.build_pairs()
    except (SuiteError, fixture_build.BuildError) as exc:
        print(f"bench_pairs: error: {exc}", file=sys.stderr)
        return 2
    if args.only:
        specs = [s for s in specs if s.id in set(args.only)]
        if not specs:
            print(f"bench_pairs: error: no pair of {MANIFEST} is named {' or '.join(args.only)}", file=sys.stderr)
            return 2
    t0, cpu0 = time.perf_counter(), cpu_seconds()
    outcomes = run_suite(specs, classes, args.method_timeout, max(1, args.jobs))
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
    print(report_text(specs, outcomes, wall, classes))
    print(f"\nCPU {cpu:.1f} s in all (this process, its workers and their JVMs), {cpu / len(outcomes):.3f} s per pair "
          f"on average; wall {wall:.1f} s on {max(1, args.jobs)} worker(s). The per-pair times above are what the "
          "pairs' budgets count (each pair's methods' time_ms: CPU time of proof and search, and the wall-clock time "
          "of the JVM calls), which the machine's load hardly changes.")
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
