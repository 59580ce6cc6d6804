#!/usr/bin/env python3
"""Two compilers of one source: commons-lang3 3.12.0 built by javac (ORIG) and by ecj (OPT), then `validate`.

Builds the pair (``tests/support/ecjpair.py``: Debian's ecj and commons-lang3's Debian source tarball, fetched by
``scripts/fetch_corpus.sh --ecj`` on first use; both jars cached under the corpus directory) and prints the
ProGuard pairs' table for it (``tests/support/proguard.py``): methods, those whose code differs, equivalent /
not-equivalent / unknown among them, the share proved, and the commonest reasons of the unknown ones.
``tests/test_ecj_pair.py`` runs the same steps and holds the proved share to a floor.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.ecjpair import RELEASE, build_pair  # noqa: E402
from tests.support.proguard import print_table, validate_pair  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", type=int, default=RELEASE, help="javac/ecj --release (default %(default)s)")
    ap.add_argument("--method-timeout", type=float, default=4.0)
    ap.add_argument("--unknowns", type=int, default=20, help="reasons listed")
    args = ap.parse_args(argv)
    pair = build_pair(args.release)
    print(f"ORIG (javac) {pair.javac}\nOPT (ecj)    {pair.ecj}", file=sys.stderr)
    row = validate_pair(f"lang3 ecj r{pair.release}", pair.javac, pair.ecj, args.method_timeout)
    print_table([row], args.unknowns)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
