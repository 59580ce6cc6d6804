#!/usr/bin/env python3
"""Benchmark of the PEG round trip (build + revert + lower) and of its code size against javac, on jars or
class directories.

For every method with code: lift (not timed), build the PEG, check it, revert it (timed together: the issue's
"build + revert"), lower it (timed apart) and compare the new code length with the original (javac's), under
each lowering the pipeline uses:

- ``peg``: what ``--stage peg`` writes (``revert_peg``'s defaults, ``lower_method`` for speed);
- ``speed``: the full stage's reversion and lowering under ``--goal speed`` (returns in place before loops,
  loops tested at the bottom);
- ``size``: under ``--goal size`` (every return in place, ``lower_method(for_size=True)``).

Prints per input and lowering: methods, how many went through, why the others did not, median / p95 / max build +
revert time, lowering time, the code size of the round-tripped methods relative to the original; then, per
lowering, where the bytes of the methods that grew go (byte deltas by instruction family, summed over those
methods) and the methods that grew most (``--top``).

    scripts/bench_peg.py ~/.cache/peggy-jvm/corpus/jars/commons-lang3.jar [more jars or dirs] [--limit N]
        [--lowerings peg,speed,size] [--top N] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from peggy_jvm.classfile import opcodes as op  # noqa: E402
from peggy_jvm.classfile.attributes import LineNumberTable  # noqa: E402
from peggy_jvm.classfile.bytecode import decode  # noqa: E402
from peggy_jvm.classfile.hierarchy import ClassHierarchy  # noqa: E402
from peggy_jvm.classfile.reader import read_class, read_code  # noqa: E402
from peggy_jvm.ir.lift import lift_method  # noqa: E402
from peggy_jvm.ir.lower import lower_method  # noqa: E402
from peggy_jvm.peg.build import PegUnsupported, build_peg  # noqa: E402
from peggy_jvm.peg.check import check_peg  # noqa: E402
from peggy_jvm.revert.revert import RevertUnsupported, revert_peg  # noqa: E402
from peggy_jvm.revert.tidy import ReturnsInPlace  # noqa: E402

# name -> (revert_peg keyword arguments, lower_method's for_size): as pipeline._revert / _lower use them
LOWERINGS: dict[str, tuple[dict, bool]] = {
    "peg": ({}, False),
    "speed": ({"returns": ReturnsInPlace.BEFORE_LOOPS, "rotate_loops": True}, False),
    "size": ({"returns": ReturnsInPlace.ALL}, True),
}


def _family(opcode: int) -> str:
    """The instruction family a byte belongs to, for the loss table."""
    name = op.OPCODES[opcode].name
    if name == "iinc":
        return "iinc"
    if name in ("pop", "pop2"):
        return "pop"
    if name.startswith("dup") or name == "swap":
        return "dup/swap"
    if name[1:].startswith("load") or name[1:].startswith("store"):
        return "load/store"
    if "const" in name or name in ("bipush", "sipush", "ldc", "ldc_w", "ldc2_w"):
        return "constants"
    if name.startswith("invoke"):
        return "invoke"
    if name.startswith("if") or name.startswith("goto") or name.endswith("switch"):
        return "branches"
    if name.endswith("return") or name == "athrow":
        return "return/athrow"
    if name in ("new", "newarray", "anewarray", "multianewarray"):
        return "new"
    if name in ("getfield", "putfield", "getstatic", "putstatic"):
        return "field"
    if name.endswith("aload") or name.endswith("astore") or name == "arraylength":
        return "array"
    return "other"


def _families(code: bytes) -> Counter:
    out: Counter = Counter()
    for i in decode(code):
        out[_family(i.opcode)] += i.length
    return out


@dataclass
class Lowering:
    times: list[float] = field(default_factory=list)
    lower_times: list[float] = field(default_factory=list)
    reasons: Counter = field(default_factory=Counter)
    before: int = 0
    after: int = 0
    done: int = 0
    losses: Counter = field(default_factory=Counter)  # family -> bytes over the methods that grew
    grew: int = 0
    grown: list[tuple[int, str, int, int]] = field(default_factory=list)  # (delta, method, before, after)


def _code_bytes(attr_data: bytes) -> bytes:
    n = int.from_bytes(attr_data[4:8], "big")
    return attr_data[8:8 + n]


def bench(path: Path, limit: int | None, lowerings: list[str]) -> dict:
    datas = _classes(path)
    hierarchy = ClassHierarchy([path])
    res = {name: Lowering() for name in lowerings}
    methods = 0
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
            raw = next((a for a in read_code(attr.data, cf.pool).attributes if a.name == "LineNumberTable"), None)
            lnt = LineNumberTable.parse(raw.data) if raw is not None else None
            original = _code_bytes(attr.data)
            for name in lowerings:
                r = res[name]
                kwargs, for_size = LOWERINGS[name]
                try:
                    ir = lift_method(cf, m, hierarchy)
                except Exception as e:  # noqa: BLE001 - a benchmark counts, it does not stop
                    r.reasons[f"lift: {type(e).__name__}"] += 1
                    continue
                t0 = time.process_time()
                try:
                    peg = build_peg(ir)
                    check_peg(peg)
                    rev = revert_peg(peg, ir, **kwargs)
                except (PegUnsupported, RevertUnsupported) as e:
                    r.reasons[str(e)[:60]] += 1
                    continue
                except Exception as e:  # noqa: BLE001
                    r.reasons[f"error: {type(e).__name__}: {str(e)[:40]}"] += 1
                    continue
                r.times.append(time.process_time() - t0)
                t1 = time.process_time()
                try:
                    new = lower_method(cf, m, rev, hierarchy, lnt, for_size=for_size)
                except Exception as e:  # noqa: BLE001
                    r.reasons[f"lower: {type(e).__name__}: {str(e)[:40]}"] += 1
                    continue
                r.lower_times.append(time.process_time() - t1)
                r.done += 1
                new_code = _code_bytes(new)
                r.before += len(original)
                r.after += len(new_code)
                if len(new_code) > len(original):
                    r.grew += 1
                    d = _families(new_code)
                    d.subtract(_families(original))
                    r.losses.update(d)
                    r.grown.append((len(new_code) - len(original), f"{cf.name}.{m.name}{m.descriptor}",
                                    len(original), len(new_code)))
    sys.setrecursionlimit(old)
    out = {}
    for name, r in res.items():
        q = sorted(r.times)
        out[name] = {
            "input": path.name, "lowering": name, "methods": methods, "through": r.done,
            "reasons": dict(r.reasons.most_common(10)),
            "median_ms": statistics.median(q) * 1000 if q else 0.0,
            "p95_ms": q[int(0.95 * (len(q) - 1))] * 1000 if q else 0.0,
            "max_ms": q[-1] * 1000 if q else 0.0,
            "lower_median_ms": statistics.median(r.lower_times) * 1000 if r.lower_times else 0.0,
            "size_ratio": r.after / r.before if r.before else 0.0, "bytes_before": r.before,
            "bytes_after": r.after, "grew": r.grew, "losses": dict(r.losses),
            "top": sorted(r.grown, key=lambda t: (-t[0], t[1]))[:50],
        }
    return out


def _classes(path: Path) -> list[bytes]:
    if path.is_dir():
        return [p.read_bytes() for p in sorted(path.rglob("*.class"))]
    if path.suffix == ".class":
        return [path.read_bytes()]
    with zipfile.ZipFile(path) as z:
        return [z.read(n) for n in sorted(z.namelist()) if n.endswith(".class") and not n.startswith("META-INF/")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+", type=Path)
    ap.add_argument("--limit", type=int, help="at most this many methods per input")
    ap.add_argument("--lowerings", default="peg,speed,size", help="comma-separated: " + ",".join(LOWERINGS))
    ap.add_argument("--top", type=int, default=8, help="the methods that grew most, per input and lowering")
    ap.add_argument("--json", type=Path, help="write every number (and the top 50 methods) here")
    args = ap.parse_args()
    lowerings = [x for x in args.lowerings.split(",") if x]
    for x in lowerings:
        if x not in LOWERINGS:
            ap.error(f"unknown lowering {x!r}")
    console = Console(width=160)
    table = Table(title="PEG round trip (build + check + revert, CPU; lowering apart) and size vs javac")
    for col in ("input", "lowering", "methods", "through", "median ms", "p95 ms", "max ms", "lower median ms",
                "javac bytes", "ours", "size vs javac", "grew"):
        table.add_column(col, justify="left" if col in ("input", "lowering") else "right")
    rows = []
    for p in args.inputs:
        for r in bench(p, args.limit, lowerings).values():
            rows.append(r)
            table.add_row(r["input"], r["lowering"], str(r["methods"]),
                          f"{r['through']} ({r['through'] / max(r['methods'], 1):.1%})",
                          f"{r['median_ms']:.2f}", f"{r['p95_ms']:.1f}", f"{r['max_ms']:.0f}",
                          f"{r['lower_median_ms']:.2f}", f"{r['bytes_before']:,}", f"{r['bytes_after']:,}",
                          f"{r['size_ratio']:.4f}", str(r["grew"]))
    console.print(table)
    for r in rows:
        losses = sorted(((v, k) for k, v in r["losses"].items() if v), reverse=True)
        console.print(f"[bold]{r['input']} / {r['lowering']}[/bold]: methods that grew ({r['grew']}), bytes by "
                      "family: " + ", ".join(f"{k} {v:+,}" for v, k in losses))
        for delta, name, b, a in r["top"][:args.top]:
            console.print(f"  {delta:+6,}  {name}  {b:,} -> {a:,}")
        for reason, n in list(r["reasons"].items())[:5]:
            console.print(f"  not through: {n:6d}  {reason}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
