#!/usr/bin/env python3
"""A test run's schedule replayed from its CPU log: would the two workers of ``make test`` end together?

Input: a log written with ``PEGGY_TEST_CPU_LOG=FILE`` (tests/support/cputime.py: CPU seconds per test phase).
Output: each worker's end when every test takes its logged CPU seconds and the units go out as
``tests/support/schedule.py`` hands them out (``schedule.replay``), the ideal (the total over the workers), and
the costliest units. A makespan near the ideal means the order wastes nothing; what an idle machine's run loses
beyond it is waiting inside tests (sleeps, children) and collection, which CPU seconds do not show.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.schedule import replay, unit_of  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--units", type=int, default=20, help="how many of the costliest units to list")
    args = ap.parse_args()
    costs: dict[str, float] = {}
    for line in args.log.read_text().splitlines():
        fields = line.split("\t")
        costs[fields[2]] = costs.get(fields[2], 0.0) + float(fields[0])
    ends = replay(costs, args.workers)
    total = sum(costs.values())
    print(f"{len(costs)} tests, {total:.1f} s; workers end at " + ", ".join(f"{e:.1f}" for e in ends)
          + f" s; ideal {total / args.workers:.1f} s")
    units: Counter[str] = Counter()
    for nodeid, cost in costs.items():
        units[unit_of(nodeid)] += cost
    for unit, cost in units.most_common(args.units):
        print(f"{cost:8.1f}  {unit}")


if __name__ == "__main__":
    main()
