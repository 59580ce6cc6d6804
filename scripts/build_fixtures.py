#!/usr/bin/env python3
"""Compile the Java test fixtures under ``fixtures/src`` into class files (``make fixtures`` runs this).

    python3 scripts/build_fixtures.py [--force]

The command line of ``tests/support/fixture_build.py`` (which owns the trees, their staleness check and the
build): builds ``fixtures/classes/release17``, ``release8``, ``old``, ``pairs``, ``loops`` and ``classic`` when
stale (``--force``: always) and prints one line saying what it did. A missing or failing javac is one line on stderr
and exit 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.fixture_build import (  # noqa: E402
    CLASSES, BuildError, build, build_classic, build_loops, build_pairs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true",
                        help="rebuild even if the outputs are up to date")
    args = parser.parse_args(argv)
    report: list[str] = []
    try:
        build(force=args.force, _report=report)
        report.append(f"pairs: {sum(1 for _ in build_pairs(args.force).glob('*.class'))} classes")
        report.append(f"loops: {sum(1 for _ in build_loops(args.force).glob('*.class'))} classes")
        report.append(f"classic: {sum(1 for _ in build_classic(args.force).glob('*.class'))} classes")
    except BuildError as exc:
        print(f"build_fixtures: error: {exc}", file=sys.stderr)
        return 1
    print(f"build_fixtures: {'; '.join(report)} "
          f"(in {CLASSES.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
