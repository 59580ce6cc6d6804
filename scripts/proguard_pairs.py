#!/usr/bin/env python3
"""Real method pairs for the validator: ProGuard's intra-method optimizations of a jar, then `validate` on them.

For each jar, ProGuard it (intra-method optimizations only, every class and member kept), validate input vs
output (`peggy_jvm.validate`) and print one table: methods, changed, equivalent / not-equivalent / unknown among
the changed, the share proved, the unknown ones proved once the callees they wait for are taken as equivalent
(``given``: a method calling a pair that is not proved is not proved itself) and the share whose own change is
proved (``own``), and the median and p95 time per pair; ``--unknowns N`` lists the commonest reasons.
The default is strict JVM semantics; ``--assume NAME`` (``validate --assume``, e.g. ``strings-by-value``)
validates under that assumption too and reports both numbers: the pairs proved strictly, and those proved only by
relying on it (the driver re-checks every proof an assumption took part in with the strict rules alone). The
steps (the ProGuard run, the JDK library jar it links against, the changed methods, the validation and the table)
are ``tests/support/proguard.py``'s, shared with ``tests/test_proguard_pairs.py``.

Inputs: jar names of the corpus (`scripts/fetch_corpus.sh`) or paths. Needs `java` and ProGuard's jar
(`scripts/fetch_corpus.sh --proguard`, fetched on first use). Outputs: DIR/<name>.pg.jar and the table; with
``--json FILE`` the rows as JSON.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from peggy_jvm.rules.strings import ASSUMPTIONS  # noqa: E402
from tests.support.corpus import cache_dir, fetch_jars  # noqa: E402
from tests.support.proguard import (  # noqa: E402
    jdk_library_jar, print_table, proguard_intra, proguard_jar, validate_pair,
)


def _resolve_jar(arg: str) -> Path:
    p = Path(arg)
    if p.suffix == ".jar" and p.is_file():
        return p
    jar = fetch_jars().get(arg)
    if jar is None:
        raise SystemExit(f"proguard_pairs: no jar {arg} (neither a path nor a corpus jar)")
    return jar


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jars", nargs="*", default=["jama", "commons-lang3", "jsoup"])
    ap.add_argument("--out", type=Path, default=cache_dir() / "proguard")
    ap.add_argument("--no-validate", action="store_true", help="only write the ProGuard outputs")
    ap.add_argument("--method-timeout", type=float, default=10.0)
    ap.add_argument("--unknowns", type=int, default=8, help="reasons listed per jar")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--assume", action="append", default=[], metavar="NAME", choices=sorted(ASSUMPTIONS),
                    help="validate under this assumption too (validate --assume; e.g. strings-by-value) and "
                         "report the strict and the assumed numbers")
    ap.add_argument("--library-jar", type=Path, metavar="OUT",
                    help="only write the JDK library jar for ProGuard to OUT (docs/ci.md's recipe)")
    args = ap.parse_args(argv)
    if args.library_jar:
        shutil.copyfile(jdk_library_jar(), args.library_jar)
        return 0
    pg = proguard_jar()
    lib = jdk_library_jar()
    rows = []
    for arg in args.jars:
        src = _resolve_jar(arg)
        out = args.out / f"{src.stem}.pg.jar"
        seconds = proguard_intra(pg, src, out, [lib])
        print(f"proguard intra {src.name} -> {out} in {seconds:.1f} s", file=sys.stderr)
        if args.no_validate:
            continue
        row = validate_pair(src.stem, src, out, args.method_timeout, tuple(args.assume))
        row.proguard_s = seconds
        rows.append(row)
    if rows:
        print_table(rows, args.unknowns, tuple(args.assume))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
