#!/usr/bin/env python3
"""The result cache's benchmark (issue 19): a run after changing one class against the first run.

    .venv/bin/python scripts/bench_cache.py [--jar commons-lang3] [--stage full] [--jobs 1] [--sample N]
                                            [--check] [--keep DIR]

Steps, each ``peggy-jvm`` as a subprocess, CPU time (user + system of it and its workers) measured:

1. ``optimize`` of the jar A into A' with an empty cache (the first run);
2. B: a copy of A in which one method's body is flipped (its first ``iconst_N`` made ``iconst_M``: the same
   length, still verifiable, another result), then ``optimize B`` -> B' with the same cache. (``validate`` has no
   cache: with modular validation a pair's verdict rests on its callees' pairs, see peggy_jvm/cache.py.)

Printed: the CPU seconds of each run, the ratio second/first per command (issue 19's goal: at most 0.05), how
many methods came from the cache, and the checks: B' equals
A' in every class but the flipped one; with ``--check`` also B optimized with ``--no-cache`` (the same bytes,
the same report rows but their times).
``--sample N``: the 1-in-N CRC-32 sample of the jar's classes (scripts/verify_corpus.py), the whole jar on the
class path. Exit 1 when a check fails, 0 otherwise (the ratio is reported, not enforced).
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from verify_corpus import cache_dir, write_subset  # noqa: E402  (a script beside this one)

from peggy_jvm.classfile.bytecode import decode  # noqa: E402
from peggy_jvm.classfile.reader import read_class, read_code  # noqa: E402

CLI = str(Path(sys.executable).parent / "peggy-jvm")
ICONST_0, ICONST_5 = 0x03, 0x08


def flip_one_method(data: bytes) -> tuple[bytes, str] | None:
    """``data`` with the first ``iconst_N`` of its first method that has one made ``iconst_(N+1 mod 6)``; None when
    no method has one. The Code attribute's bytes are found in the class bytes by their content (unique)."""
    cf = read_class(data)
    for m in cf.methods:
        attr = m.code_attribute()
        if attr is None:
            continue
        code = read_code(attr.data, cf.pool)
        for ins in decode(code.code):
            if ICONST_0 <= ins.opcode <= ICONST_5:
                new_code = bytearray(code.code)
                new_code[ins.offset] = ICONST_0 + (ins.opcode - ICONST_0 + 1) % 6
                at = data.find(attr.data)
                if at < 0 or data.find(attr.data, at + 1) >= 0:
                    continue
                body = at + 8  # max_stack, max_locals, code_length
                assert data[body:body + len(code.code)] == code.code
                out = bytearray(data)
                out[body:body + len(code.code)] = new_code
                return bytes(out), f"{cf.name}.{m.name}{m.descriptor} at {ins.offset}"
    return None


def make_changed_copy(jar: Path, dest: Path) -> tuple[str, str]:
    """``dest``: ``jar`` with one method of one class flipped (:func:`flip_one_method`); returns the entry and
    what was flipped."""
    with zipfile.ZipFile(jar) as src:
        infos = src.infolist()
        changed = None
        for info in sorted(infos, key=lambda i: i.filename):
            if info.filename.endswith(".class") and not info.filename.startswith("META-INF/"):
                flipped = flip_one_method(src.read(info))
                if flipped is not None:
                    changed = info.filename, flipped
                    break
        if changed is None:
            raise SystemExit(f"bench_cache: error: {jar}: no method with an iconst_N to flip")
        with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in infos:
                dst.writestr(info, changed[1][0] if info.filename == changed[0] else src.read(info))
    return changed[0], changed[1][1]


def run(args: list) -> tuple[float, subprocess.CompletedProcess]:
    """One CLI run; its CPU seconds (it and every process it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"bench_cache: error: {' '.join(map(str, args[:2]))} exited {proc.returncode}:\n"
                         f"{proc.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc


def classes(jar: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(jar) as z:
        return {n: z.read(n) for n in z.namelist() if n.endswith(".class")}


def rows(report: Path) -> list[dict]:
    return [{k: v for k, v in m.items() if k != "time_ms"} for m in json.loads(report.read_text())["methods"]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jar", default="commons-lang3", help="a corpus jar's name, or a path to a jar")
    ap.add_argument("--stage", default="full")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--sample", type=int, default=1, metavar="N", help="only the 1-in-N CRC-32 sample of classes")
    ap.add_argument("--check", action="store_true", help="also optimize B without the cache and compare")
    ap.add_argument("--keep", type=Path, help="work here (kept) instead of a temporary directory")
    args = ap.parse_args(argv)
    jar = Path(args.jar) if args.jar.endswith(".jar") else cache_dir() / "jars" / f"{args.jar}.jar"
    if not jar.is_file():
        print(f"bench_cache: error: {jar}: no such jar (scripts/fetch_corpus.sh fetches the corpus)", file=sys.stderr)
        return 2
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_cache-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        a = work / "A.jar"
        if args.sample > 1:
            write_subset(jar, a, args.sample)
        else:
            shutil.copy(jar, a)
        b = work / "B.jar"
        entry, what = make_changed_copy(a, b)
        cache = work / "cache"
        shutil.rmtree(cache, ignore_errors=True)
        common = ["--stage", args.stage, "--jobs", args.jobs, "--classpath", jar, "--cache", cache]
        t_opt1, _ = run(["optimize", a, "-o", work / "A-opt.jar", "--json", work / "A.json", *common])
        t_opt2, _ = run(["optimize", b, "-o", work / "B-opt.jar", "--json", work / "B.json", *common])
        rep_b = json.loads((work / "B.json").read_text())
        n_classes = rep_b["summary"]["classes"]
        print(f"{jar.name}{f' (1 in {args.sample})' if args.sample > 1 else ''}: {n_classes} classes, "
              f"--stage {args.stage}, --jobs {args.jobs}; flipped {what}")
        print(f"{'':10} {'first (s CPU)':>14} {'after the change':>17} {'ratio':>7}")
        print(f"{'optimize':10} {t_opt1:14.2f} {t_opt2:17.2f} {t_opt2 / t_opt1:7.3f}   "
              f"{rep_b['cache']['methods_cached']} of {len(rep_b['methods'])} methods from the cache")
        ok = True
        a_opt, b_opt = classes(work / "A-opt.jar"), classes(work / "B-opt.jar")
        differ = sorted(n for n in a_opt if a_opt[n] != b_opt.get(n))
        if differ and differ != [entry]:
            print(f"CHECK FAILED: classes other than {entry} differ: {differ[:5]}")
            ok = False
        if args.check:
            run(["optimize", b, "-o", work / "B-nocache.jar", "--json", work / "B-nocache.json", "--stage",
                 args.stage, "--jobs", args.jobs, "--classpath", jar, "--no-cache"])
            if classes(work / "B-nocache.jar") != b_opt:
                print("CHECK FAILED: B optimized without the cache has other bytes")
                ok = False
            elif rows(work / "B-nocache.json") != rows(work / "B.json"):
                print("CHECK FAILED: B optimized without the cache has another report")
                ok = False
            else:
                print("check: B optimized without the cache: the same bytes and report rows")
        return 0 if ok else 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
