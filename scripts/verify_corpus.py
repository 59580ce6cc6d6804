#!/usr/bin/env python3
"""Run ``optimize --stage STAGE`` over real class files and let HotSpot verify every output class.

Corpora: Debian's Java library jars (fetched by ``scripts/fetch_corpus.sh``) and the running JDK's own classes
(extracted once with ``jimage extract``; each module's output is verified in place with
``java --patch-module MODULE=OUT -Xverify:all``). Prints one table row per corpus: classes, methods,
rewritten / fallback methods, verification failures, whether our workload (``tests/java/workloads/``, for the
jars that have one) prints the same on the rewritten jar, and the time to optimize and to verify.

With ``--stage full`` it also prints, per corpus, the optimizer's table, computed from the JSON report alone
(the one ``peggy-jvm optimize --json`` writes): methods rewritten / unchanged / fell back with their reasons
grouped, the total cost before and after, the bytecode size and emitted cost (codecost.py) of the rewritten
methods before and after, and the per-method time p50 / p95. ``--report FILE.json`` prints that table for an
existing report without running anything.

    scripts/verify_corpus.py [--jars NAME,...|all|none] [--jdk all|none|MODULE,...] [--jobs N]
                             [--stage classfile|ir|peg|full] [--goal speed|size] [--keep DIR] [--no-workloads]
                             [--sample N]
    scripts/verify_corpus.py --report REPORT.json [--report ...]

Exit status 1 when any class fails verification or a workload prints differently. This is a measuring tool,
not a test; the corpus table, the optimizer's table, the reason groups and the class sample are
``tests/support/corpus.py``'s, which ``tests/test_corpus.py`` uses too.
"""
from __future__ import annotations

import argparse
import json
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
from peggy_jvm.codecost import Goal  # noqa: E402
from peggy_jvm.pipeline import Stage, optimize_input  # noqa: E402
from tests.support import workloads  # noqa: E402
from tests.support.corpus import (  # noqa: E402
    DEFAULT_JARS, JAR_DEPS, WORKLOAD_OF, cache_dir, fetch_jars, full_table, harness_dir, print_full_table,
    reason_group, write_subset,
)

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
    workload: str = "-"  # same | DIFFERS | FAILS (on the original) | ERROR | - (no workload, or not run)
    report: dict | None = None  # the optimizer's JSON report (RunReport.to_json())


# -- running a corpus ----------------------------------------------------------------------------------------
def _parse_summary(out: str, row: Row) -> None:
    for line in out.splitlines():
        if " verify_errors=" in line and "classes=" in line:
            fields = dict(kv.split("=") for kv in line.rsplit(": ", 1)[1].split())
            row.verify_errors += int(fields["verify_errors"])
            row.other += int(fields["other_failures"])
        elif line.startswith("VERIFY"):
            print("   ", line[:300], file=sys.stderr)


def compare_workload(name: str, jar: Path, out: Path, extra_cp: list[Path]) -> str:
    """Our workload for ``name`` on the original and the rewritten jar (``tests/support/workloads.py``'s compile,
    run and comparison): ``same``, ``DIFFERS`` (the diff goes to stderr), ``FAILS`` on the original, or
    ``ERROR`` (does not compile, or times out). ``out`` comes first on the class path and the original jar after
    it, so that a sample's other classes are the original ones."""
    main = WORKLOAD_OF[name]
    try:
        classes = workloads.compile_workload(workloads.resolve_workload(main), [jar, *extra_cp],
                                             workloads.default_cache())
        original = workloads.run_workload(jar, classes, main, extra_cp=extra_cp, timeout=300)
        if original.returncode != 0:
            print(f"    {main} fails on the original {jar.name}:\n{original.stderr[-2000:]}", file=sys.stderr)
            return "FAILS"
        rewritten = workloads.run_workload(out, classes, main, extra_cp=[jar, *extra_cp], timeout=300)
    except workloads.WorkloadError as e:
        print(f"    {main}: {e}", file=sys.stderr)
        return "ERROR"
    diff = workloads.difference(original, rewritten, f"{jar.name} (original)", f"{name} (rewritten)")
    if diff is not None:
        print(f"    {main} prints differently on the rewritten {name}:\n{diff}", file=sys.stderr)
        return "DIFFERS"
    return "same"


def run_one(name: str, source: Path, out: Path, jobs: int, stage: Stage, verify_cmd: list[str],
            classpath: list[Path] | None = None, goal: Goal = Goal.SPEED) -> Row:
    row = Row(name)
    t = time.perf_counter()
    _, report = optimize_input(source, out, stage, classpath=classpath, jobs=jobs, goal=goal)
    row.optimize_s = time.perf_counter() - t
    row.report = report.to_json()
    s = report.summary()
    row.classes, row.methods, row.rewritten, row.fallback = s["classes"], s["methods"], s["rewritten"], s["fallback"]
    reasons: dict[str, int] = {}
    for m in report.methods:
        if m.status == "fallback":
            key = reason_group(m.reason)
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
    head = ("corpus", "classes", "methods", "rewritten", "fallback", "verify_err", "other", "workload",
            "optimize_s", "verify_s")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    total = Row("TOTAL")
    for r in rows:
        print(f"| {r.name} | {r.classes} | {r.methods} | {r.rewritten} | {r.fallback} | {r.verify_errors} | "
              f"{r.other} | {r.workload} | {r.optimize_s:.1f} | {r.verify_s:.1f} |")
        for f in ("classes", "methods", "rewritten", "fallback", "verify_errors", "other", "optimize_s", "verify_s"):
            setattr(total, f, getattr(total, f) + getattr(r, f))
    if len(rows) > 1:
        r = total
        print(f"| **{r.name}** | {r.classes} | {r.methods} | {r.rewritten} | {r.fallback} | {r.verify_errors} | "
              f"{r.other} | | {r.optimize_s:.1f} | {r.verify_s:.1f} |")
    reasons: dict[str, int] = {}
    for r in rows:
        for k, v in (r.fallback_reasons or {}).items():
            reasons[k] = reasons.get(k, 0) + v
    if reasons:
        print("\nfallback reasons:")
        for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])[:15]:
            print(f"  {v:6d}  {k}")
    for r in rows:
        if r.report is not None and r.report["stage"] == Stage.FULL.value:
            print_full_table(full_table(r.name, r.report))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jars", default=",".join(DEFAULT_JARS), help="jar names, 'all' or 'none'")
    ap.add_argument("--jdk", default="none", help="'all', 'none' or a comma-separated list of modules")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--stage", default="classfile", choices=[s.value for s in Stage])
    ap.add_argument("--goal", default=Goal.SPEED.value, choices=[g.value for g in Goal],
                    help="the full stage's goal (optimize --goal)")
    ap.add_argument("--keep", type=Path, help="keep the outputs (and, per jar, NAME.json: the report) here")
    ap.add_argument("--no-workloads", action="store_true", help="do not run the workloads")
    ap.add_argument("--sample", type=int, default=1, metavar="N",
                    help="jars: only the classes in the 1-in-N CRC-32 sample (what the CI tests do for big jars)")
    ap.add_argument("--report", type=Path, action="append", default=[],
                    help="only print the table of this JSON report (peggy-jvm optimize --json); repeatable")
    args = ap.parse_args(argv)
    if args.report:
        for path in args.report:
            print_full_table(full_table(path.stem, json.loads(path.read_text())))
        return 0
    stage = Stage(args.stage)
    work = args.keep or Path(tempfile.mkdtemp(prefix="peggy-verify-"))
    work.mkdir(parents=True, exist_ok=True)
    java = str((find_java_home() or Path("/usr")) / "bin" / "java")
    harness = harness_dir()
    rows: list[Row] = []
    if args.jars != "none":
        jars = fetch_jars(all_jars=args.jars == "all")
        names = list(jars) if args.jars == "all" else args.jars.split(",")
        for name in names:
            out = work / f"{name}.jar"
            source = jars[name]
            deps = [jars[d] for d in JAR_DEPS.get(name, []) if d in jars]
            if args.sample > 1:  # the rest of the jar stays on the class path (hierarchy, verifier, workload)
                source = work / f"{name}.sample.jar"
                write_subset(jars[name], source, args.sample)
                deps = [jars[name], *deps]
            cmd = [java, "-Xverify:all", "-cp", str(harness), "VerifyClasses", str(out), *map(str, deps)]
            row = run_one(name, source, out, args.jobs, stage, cmd, deps, Goal(args.goal))
            (work / f"{name}.json").write_text(json.dumps(row.report, indent=1))
            if name in WORKLOAD_OF and not args.no_workloads:
                row.workload = compare_workload(name, jars[name], out, deps[1:] if args.sample > 1 else deps)
            rows.append(row)
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
            rows.append(run_one(f"jdk:{mod}", jdk / mod, out, args.jobs, stage, cmd, goal=Goal(args.goal)))
            print(f"  jdk:{mod}: done", file=sys.stderr)
    print_table(rows)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if any(r.verify_errors or r.workload in ("DIFFERS", "FAILS", "ERROR") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
