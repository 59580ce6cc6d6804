#!/usr/bin/env python3
"""Benchmark of the class-file layer: parse + re-encode through the assembler + frame computation + write.

By default it takes every class of the running JDK's runtime image (read with our jimage reader, so no
extraction is timed) and runs ``pipeline.optimize_class`` (``--stage classfile``) on each in ``--jobs``
processes, then prints a table: classes, methods, rewritten / fallback, wall and CPU seconds, methods per
second, median and p99 time per method. Target (issue 2): the whole JDK in under 3 minutes on 2 cores.

    scripts/bench_classfile.py [--jobs N] [--limit N] [--jar JAR] [--stage classfile|ir] [--profile N]

``--stage ir`` measures lifting to the IR and lowering back instead (issue 3's target: commons-lang3 in under
30 s).

``--profile N`` instead profiles N classes in one process with cProfile and prints the top functions.
"""
from __future__ import annotations

import argparse
import cProfile
import multiprocessing
import os
import pstats
import statistics
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from peggy_jvm.classfile.hierarchy import ClassHierarchy  # noqa: E402
from peggy_jvm.classfile.jimage import default_image  # noqa: E402
from peggy_jvm.pipeline import Stage, optimize_class  # noqa: E402

_hierarchy: ClassHierarchy | None = None


def load_classes(jar: Path | None, limit: int | None) -> list[bytes]:
    if jar is not None:
        with zipfile.ZipFile(jar) as z:
            datas = [z.read(n) for n in z.namelist() if n.endswith(".class")]
    else:
        image = default_image()
        if image is None:
            raise SystemExit("bench_classfile: no JDK runtime image found")
        datas = [image.find_class(n) for n in sorted(image.class_names())]
    datas = [d for d in datas if d is not None]
    return datas[:limit] if limit else datas


_stage = Stage.CLASSFILE


def _init(jar: str | None, stage: Stage = Stage.CLASSFILE) -> None:
    global _hierarchy, _stage
    _hierarchy = ClassHierarchy([Path(jar)] if jar else [])
    _stage = stage


def _run(data: bytes) -> tuple[int, int, int, list[float], float]:
    start = time.process_time()
    _, reports = optimize_class(data, _hierarchy, _stage)
    cpu = time.process_time() - start
    rewritten = sum(r.status == "rewritten" for r in reports)
    fallback = sum(r.status == "fallback" for r in reports)
    times = [r.time_ms[_stage.value] for r in reports if r.time_ms]
    return len(reports), rewritten, fallback, times, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--limit", type=int, default=None, help="only the first N classes")
    ap.add_argument("--jar", type=Path, help="benchmark the classes of this jar instead of the JDK")
    ap.add_argument("--stage", default="classfile", choices=["classfile", "ir"])
    ap.add_argument("--profile", type=int, default=0, help="profile N classes in one process instead")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    datas = load_classes(args.jar, args.limit)
    load_s = time.perf_counter() - t0
    jar = str(args.jar) if args.jar else None
    stage = Stage(args.stage)
    if args.profile:
        _init(jar, stage)
        prof = cProfile.Profile()
        prof.enable()
        for d in datas[::max(1, len(datas) // args.profile)][:args.profile]:
            _run(d)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return 0
    t0 = time.perf_counter()
    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs, _init, (jar, stage)) as pool:
            results = pool.map(_run, datas, chunksize=32)
    else:
        _init(jar, stage)
        results = [_run(d) for d in datas]
    wall = time.perf_counter() - t0
    methods = sum(r[0] for r in results)
    rewritten = sum(r[1] for r in results)
    fallback = sum(r[2] for r in results)
    per_method = sorted(t for r in results for t in r[3])
    cpu = sum(r[4] for r in results)
    p99 = per_method[int(0.99 * (len(per_method) - 1))] if per_method else 0.0
    print("| corpus | stage | classes | methods | rewritten | fallback | jobs | load s | wall s | cpu s | methods/s "
          "| median ms/method | p99 ms/method |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    name = args.jar.name if args.jar else "JDK runtime image"
    print(f"| {name} | {stage.value} | {len(datas)} | {methods} | {rewritten} | {fallback} | {args.jobs} | {load_s:.1f} | "
          f"{wall:.1f} | {cpu:.1f} | {rewritten / wall if wall else 0:.0f} | "
          f"{statistics.median(per_method) if per_method else 0:.2f} | {p99:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
