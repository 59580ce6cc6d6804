#!/usr/bin/env python3
"""Run a Java workload against an original jar and a rewritten one; fail on any difference in what they print.

    scripts/side_by_side.py ORIG.jar NEW.jar WORKLOAD [--rounds N] [--xint] [--cp EXTRA] [--arg A ...]
                            [--cache DIR] [--timeout S]

WORKLOAD is a ``.java`` file with a ``main`` method and no package (e.g. ``tests/java/workloads/JamaWork.java``)
or the bare name of one in ``tests/java/workloads/`` (``JamaWork``). It is compiled once against ORIG.jar into
a cache directory keyed by the hashes of the source, of ORIG.jar and by the ``javac`` version (default
``${XDG_CACHE_HOME:-~/.cache}/peggy-jvm/workloads``), then run N times (default 5) with each jar, alternating
which goes first::

    java -Xverify:all [-Xint] -cp ORIG.jar:CLASSES[:EXTRA] MAIN ARGS...
    java -Xverify:all [-Xint] -cp NEW.jar:CLASSES[:EXTRA]  MAIN ARGS...

Every run's stdout and exit status must equal the first run's on ORIG.jar (so a workload that is not
deterministic fails too). On a difference it prints a unified diff and exits 1; otherwise it prints a table of
the minimum and median wall time of both jars, with the median CPU time (user + system of the JVM, which a busy
machine disturbs less than wall time), and exits 0. Exit 2: bad usage, a workload that does not compile, or a
run that times out.

The compiling, running and comparing is ``tests/support/workloads.py``'s (shared with ``tests/test_corpus.py``).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.workloads import (  # noqa: E402
    RunResult, WorkloadError, compile_workload, default_cache, difference, java_home, resolve_workload, run_workload,
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Exit status: 0 same output, 1 different output, 2 error.")
    ap.add_argument("orig", type=Path, metavar="ORIG.jar", help="the original jar")
    ap.add_argument("new", type=Path, metavar="NEW.jar", help="the rewritten jar")
    ap.add_argument("workload", metavar="WORKLOAD", help="a .java file or a name in tests/java/workloads/")
    ap.add_argument("--rounds", type=int, default=5, help="runs per jar (default 5)")
    ap.add_argument("--xint", action="store_true", help="run the JVM with -Xint (interpreter only)")
    ap.add_argument("--cp", action="append", type=Path, default=[], metavar="EXTRA",
                    help="another class path entry both runs need (repeatable)")
    ap.add_argument("--arg", action="append", default=[], metavar="A",
                    help="an argument passed to the workload's main (repeatable)")
    ap.add_argument("--cache", type=Path, default=None, help=f"compile cache (default {default_cache()})")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per run (default 300)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    for jar in (args.orig, args.new, *args.cp):
        if not jar.exists():
            print(f"side_by_side: {jar}: no such file", file=sys.stderr)
            return 2
    try:
        home = java_home()
        source = resolve_workload(args.workload)
        classes = compile_workload(source, [args.orig.resolve(), *(c.resolve() for c in args.cp)],
                                   args.cache or default_cache(), home)
        main_class = source.stem
        times: dict[str, list[float]] = {"orig": [], "new": []}
        cpu: dict[str, list[float]] = {"orig": [], "new": []}
        jars = {"orig": args.orig, "new": args.new}
        reference: RunResult | None = None
        for r in range(args.rounds):
            order = ("orig", "new") if r % 2 == 0 else ("new", "orig")
            for which in order:
                run = run_workload(jars[which], classes, main_class, args.arg, xint=args.xint, extra_cp=args.cp,
                                   home=home, timeout=args.timeout)
                times[which].append(run.seconds)
                cpu[which].append(run.cpu_seconds)
                if reference is None:  # the first run is always ORIG's
                    reference = run
                    continue
                diff = difference(reference, run, f"{args.orig} (round 1)", f"{jars[which]} (round {r + 1})")
                if diff is not None:
                    print(f"side_by_side: {main_class}: output differs\n{diff}")
                    return 1
    except WorkloadError as e:
        print(f"side_by_side: {e}", file=sys.stderr)
        return 2
    assert reference is not None
    if reference.returncode != 0:
        print(f"side_by_side: note: {main_class} exits with status {reference.returncode} on both jars",
              file=sys.stderr)
    out_lines = reference.stdout_bytes.count(b"\n")
    print(f"{main_class}: identical output on both jars ({out_lines} lines, {len(reference.stdout_bytes)} bytes) "
          f"over {args.rounds} round(s){' with -Xint' if args.xint else ''}")
    print("| jar | min_s | median_s | median_cpu_s |")
    print("|---|---|---|---|")
    for which in ("orig", "new"):
        t = times[which]
        print(f"| {which}: {jars[which]} | {min(t):.3f} | {statistics.median(t):.3f} | "
              f"{statistics.median(cpu[which]):.3f} |")
    ratio = statistics.median(times["new"]) / statistics.median(times["orig"])
    cpu_ratio = statistics.median(cpu["new"]) / statistics.median(cpu["orig"])
    print(f"median new/orig: wall {ratio:.3f}, cpu {cpu_ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
