#!/usr/bin/env python3
"""Run ``optimize --stage classfile`` over real class files and let HotSpot verify every output class.

Corpora: Debian's Java library jars (fetched by ``scripts/fetch_corpus.sh``) and the running JDK's own classes
(extracted once with ``jimage extract``; each module's output is verified in place with
``java --patch-module MODULE=OUT -Xverify:all``). Prints one table row per corpus: classes, methods,
rewritten / fallback methods, verification failures, and the time to optimize and to verify.

    scripts/verify_corpus.py [--jars NAME,...|all|none] [--jdk all|none|MODULE,...] [--jobs N]
                             [--stage classfile] [--keep DIR]

Exit status 1 when any class fails verification. This is a measuring tool, not a test; the tests call the
same functions on smaller samples.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from peggy_jvm.classfile.jimage import find_java_home  # noqa: E402
from peggy_jvm.pipeline import Stage, optimize_input  # noqa: E402

DEFAULT_JARS = ["jama", "commons-lang3", "commons-math3", "jsoup", "guava"]
# classpath each jar needs to link its optional parts (jar name -> other corpus jars)
JAR_DEPS = {"commons-text": ["commons-lang3"]}


def cache_dir() -> Path:
    env = os.environ.get("PEGGY_CORPUS")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "peggy-jvm" / "corpus"


def fetch_jars(all_jars: bool = False) -> dict[str, Path]:
    cmd = ["sh", str(ROOT / "scripts" / "fetch_corpus.sh"), str(cache_dir())]
    if all_jars:
        cmd.append("--all")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return {p.stem: p for p in sorted((cache_dir() / "jars").glob("*.jar"))}


def extract_jdk() -> Path:
    """The JDK's classes, one directory per module, extracted once into the cache."""
    dest = cache_dir() / "jdk"
    if (dest / "java.base" / "java" / "lang" / "Object.class").exists():
        return dest
    home = find_java_home()
    if home is None:
        raise SystemExit("verify_corpus: no JDK found (javac on PATH or JAVA_HOME)")
    tmp = Path(tempfile.mkdtemp(prefix="jdk.", dir=cache_dir()))
    subprocess.run([str(home / "bin" / "jimage"), "extract", "--dir", str(tmp), str(home / "lib" / "modules")],
                   check=True)
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(tmp, dest)
    return dest


def harness_dir() -> Path:
    """tests/java/VerifyClasses.java compiled into the cache (recompiled when the source changes)."""
    src = ROOT / "tests" / "java" / "VerifyClasses.java"
    out = cache_dir() / "harness"
    cls = out / "VerifyClasses.class"
    if not cls.exists() or cls.stat().st_mtime < src.stat().st_mtime:
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run(["javac", "-d", str(out), str(src)], check=True)
    return out


@dataclass
class Row:
    name: str
    classes: int = 0
    methods: int = 0
    rewritten: int = 0
    fallback: int = 0
    verify_errors: int = 0
    other: int = 0
    optimize_s: float = 0.0
    verify_s: float = 0.0
    fallback_reasons: dict | None = None


def _parse_summary(out: str, row: Row) -> None:
    for line in out.splitlines():
        if " verify_errors=" in line and "classes=" in line:
            fields = dict(kv.split("=") for kv in line.rsplit(": ", 1)[1].split())
            row.verify_errors += int(fields["verify_errors"])
            row.other += int(fields["other_failures"])
        elif line.startswith("VERIFY"):
            print("   ", line[:300], file=sys.stderr)


def run_one(name: str, source: Path, out: Path, jobs: int, stage: Stage, verify_cmd: list[str]) -> Row:
    row = Row(name)
    t = time.perf_counter()
    _, report = optimize_input(source, out, stage, jobs=jobs)
    row.optimize_s = time.perf_counter() - t
    s = report.summary()
    row.classes, row.methods, row.rewritten, row.fallback = s["classes"], s["methods"], s["rewritten"], s["fallback"]
    reasons: dict[str, int] = {}
    for m in report.methods:
        if m.status == "fallback":
            key = m.reason.split(" at offset")[0][:80]
            reasons[key] = reasons.get(key, 0) + 1
    row.fallback_reasons = reasons
    t = time.perf_counter()
    proc = subprocess.run(verify_cmd, capture_output=True, text=True)
    row.verify_s = time.perf_counter() - t
    _parse_summary(proc.stdout, row)
    if proc.returncode not in (0, 1):
        print(f"    verifier failed on {name}: {proc.stderr[-500:]}", file=sys.stderr)
        row.verify_errors += 1
    return row


def print_table(rows: list[Row]) -> None:
    head = ("corpus", "classes", "methods", "rewritten", "fallback", "verify_err", "other", "optimize_s",
            "verify_s")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    total = Row("TOTAL")
    for r in rows:
        print(f"| {r.name} | {r.classes} | {r.methods} | {r.rewritten} | {r.fallback} | {r.verify_errors} | "
              f"{r.other} | {r.optimize_s:.1f} | {r.verify_s:.1f} |")
        for f in ("classes", "methods", "rewritten", "fallback", "verify_errors", "other", "optimize_s", "verify_s"):
            setattr(total, f, getattr(total, f) + getattr(r, f))
    if len(rows) > 1:
        r = total
        print(f"| **{r.name}** | {r.classes} | {r.methods} | {r.rewritten} | {r.fallback} | {r.verify_errors} | "
              f"{r.other} | {r.optimize_s:.1f} | {r.verify_s:.1f} |")
    reasons: dict[str, int] = {}
    for r in rows:
        for k, v in (r.fallback_reasons or {}).items():
            reasons[k] = reasons.get(k, 0) + v
    if reasons:
        print("\nfallback reasons:")
        for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])[:15]:
            print(f"  {v:6d}  {k}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jars", default=",".join(DEFAULT_JARS), help="jar names, 'all' or 'none'")
    ap.add_argument("--jdk", default="none", help="'all', 'none' or a comma-separated list of modules")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--stage", default="classfile", choices=[s.value for s in Stage])
    ap.add_argument("--keep", type=Path, help="keep the outputs in this directory")
    args = ap.parse_args(argv)
    stage = Stage(args.stage)
    work = args.keep or Path(tempfile.mkdtemp(prefix="peggy-verify-"))
    java = str((find_java_home() or Path("/usr")) / "bin" / "java")
    harness = harness_dir()
    rows: list[Row] = []
    if args.jars != "none":
        jars = fetch_jars(all_jars=args.jars == "all")
        names = list(jars) if args.jars == "all" else args.jars.split(",")
        for name in names:
            out = work / f"{name}.jar"
            deps = [str(jars[d]) for d in JAR_DEPS.get(name, []) if d in jars]
            cmd = [java, "-Xverify:all", "-cp", str(harness), "VerifyClasses", str(out), *deps]
            rows.append(run_one(name, jars[name], out, args.jobs, stage, cmd))
            print(f"  {name}: done", file=sys.stderr)
    if args.jdk != "none":
        jdk = extract_jdk()
        modules = sorted(p.name for p in jdk.iterdir() if p.is_dir()) if args.jdk == "all" else args.jdk.split(",")
        for mod in modules:
            out = work / "jdk" / mod
            # --add-modules: incubator modules are not resolved unless asked for, and their classes would
            # then be loaded from OUT as ordinary classes instead of as the patched module
            cmd = [java, f"--patch-module={mod}={out}", f"--add-modules={mod}", "-Xverify:all", "-cp",
                   str(harness), "VerifyClasses", str(out)]
            rows.append(run_one(f"jdk:{mod}", jdk / mod, out, args.jobs, stage, cmd))
            print(f"  jdk:{mod}: done", file=sys.stderr)
    print_table(rows)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if any(r.verify_errors for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
