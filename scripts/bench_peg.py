#!/usr/bin/env python3
"""Benchmark of the PEG round trip (build + revert) and of its code size, on jars or class directories.

For every method with code: lift (not timed), build the PEG, check it, revert it (timed together: the issue's
"build + revert"), lower it (timed apart) and compare the new code length with the original (javac's). Prints
a rich table per input: methods, how many went through, why the others did not, median / p95 / max build +
revert time per method, lowering time, and the code size of the round-tripped methods relative to the
original.

    scripts/bench_peg.py ~/.cache/peggy-jvm/corpus/jars/commons-lang3.jar [more jars or dirs] [--limit N]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from peggy_jvm.classfile.hierarchy import ClassHierarchy  # noqa: E402
from peggy_jvm.classfile.reader import read_class  # noqa: E402
from peggy_jvm.ir.lift import lift_method  # noqa: E402
from peggy_jvm.ir.lower import lower_method  # noqa: E402
from peggy_jvm.peg.build import PegUnsupported, build_peg  # noqa: E402
from peggy_jvm.peg.check import check_peg  # noqa: E402
from peggy_jvm.revert.revert import RevertUnsupported, revert_peg  # noqa: E402


def _classes(path: Path) -> list[bytes]:
    if path.is_dir():
        return [p.read_bytes() for p in sorted(path.rglob("*.class"))]
    if path.suffix == ".class":
        return [path.read_bytes()]
    with zipfile.ZipFile(path) as z:
        return [z.read(n) for n in sorted(z.namelist()) if n.endswith(".class") and not n.startswith("META-INF/")]


def bench(path: Path, limit: int | None) -> dict:
    datas = _classes(path)
    hierarchy = ClassHierarchy([path] if path.is_dir() else [path])
    times: list[float] = []
    lower_times: list[float] = []
    reasons: Counter = Counter()
    before = after = 0
    methods = done = 0
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(50_000)
    for data in datas:
        cf = read_class(data)
        for m in cf.methods:
            attr = m.code_attribute()
            if attr is None:
                continue
            if limit is not None and methods >= limit:
                break
            methods += 1
            try:
                ir = lift_method(cf, m, hierarchy)
            except Exception as e:  # noqa: BLE001 - a benchmark counts, it does not stop
                reasons[f"lift: {type(e).__name__}"] += 1
                continue
            t0 = time.perf_counter()
            try:
                peg = build_peg(ir)
                check_peg(peg)
                rev = revert_peg(peg, ir)
            except (PegUnsupported, RevertUnsupported) as e:
                reasons[str(e)[:60]] += 1
                continue
            except Exception as e:  # noqa: BLE001
                reasons[f"error: {type(e).__name__}: {str(e)[:40]}"] += 1
                continue
            times.append(time.perf_counter() - t0)
            t1 = time.perf_counter()
            try:
                code = lower_method(cf, m, rev, hierarchy, None)
            except Exception as e:  # noqa: BLE001
                reasons[f"lower: {type(e).__name__}: {str(e)[:40]}"] += 1
                continue
            lower_times.append(time.perf_counter() - t1)
            done += 1
            before += int.from_bytes(attr.data[4:8], "big")
            after += int.from_bytes(code[4:8], "big")
    sys.setrecursionlimit(old)
    q = sorted(times)
    return {
        "input": path.name, "methods": methods, "through": done, "reasons": reasons,
        "median_ms": statistics.median(q) * 1000 if q else 0.0,
        "p95_ms": q[int(0.95 * (len(q) - 1))] * 1000 if q else 0.0,
        "max_ms": q[-1] * 1000 if q else 0.0,
        "lower_median_ms": statistics.median(lower_times) * 1000 if lower_times else 0.0,
        "size_ratio": after / before if before else 0.0, "bytes_before": before, "bytes_after": after,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+", type=Path)
    ap.add_argument("--limit", type=int, help="at most this many methods per input")
    args = ap.parse_args()
    console = Console()
    table = Table(title="PEG round trip (build + check + revert; lowering apart)")
    for col in ("input", "methods", "through", "median ms", "p95 ms", "max ms", "lower median ms",
                "size vs javac"):
        table.add_column(col, justify="right" if col != "input" else "left")
    rows = []
    for p in args.inputs:
        r = bench(p, args.limit)
        rows.append(r)
        table.add_row(r["input"], str(r["methods"]), f"{r['through']} ({r['through'] / max(r['methods'], 1):.1%})",
                      f"{r['median_ms']:.2f}", f"{r['p95_ms']:.1f}", f"{r['max_ms']:.0f}",
                      f"{r['lower_median_ms']:.2f}", f"{r['size_ratio']:.3f}")
    console.print(table)
    for r in rows:
        if r["reasons"]:
            console.print(f"[bold]{r['input']}[/bold] not through the round trip:")
            for reason, n in r["reasons"].most_common(10):
                console.print(f"  {n:6d}  {reason}")


if __name__ == "__main__":
    main()
