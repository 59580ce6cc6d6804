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
not a test; ``tests/test_corpus.py`` calls the same functions (the table, the reason groups, the class subset).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from peggy_jvm.classfile.jimage import find_java_home  # noqa: E402
from peggy_jvm.codecost import Goal  # noqa: E402
from peggy_jvm.pipeline import Stage, optimize_input  # noqa: E402

DEFAULT_JARS = ["jama", "commons-lang3", "commons-math3", "jsoup", "guava"]
# classpath each jar needs to link its optional parts (jar name -> other corpus jars)
JAR_DEPS = {"commons-text": ["commons-lang3"]}
# jar name -> our workload for it (tests/java/workloads/NAME.java, compiled against the original jar)
WORKLOAD_OF = {
    "jama": "JamaWork",
    "commons-lang3": "Lang3Work",
    "jsoup": "JsoupWork",
    "commons-math3": "MathWork",
}


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
    workload: str = "-"  # same | DIFFERS | FAILS (on the original) | ERROR | - (no workload, or not run)
    report: dict | None = None  # the optimizer's JSON report (RunReport.to_json())


# -- the optimizer's table, from the JSON report -------------------------------------------------------------
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def reason_group(reason: str) -> str:
    """The group a reason belongs to: its numbers (offsets, costs, node and iteration counts, times) replaced by
    N, so that reasons differing only in them count together."""
    return _NUMBER.sub("N", reason.split(" at offset")[0])[:110]


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty list: a value that really occurred."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


@dataclass
class FullTable:
    """What one optimizer run did, per method with code (methods without code are only counted)."""
    name: str
    stage: str
    no_code: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {"rewritten": 0, "unchanged": 0, "fallback": 0})
    reasons: dict[tuple[str, str], int] = field(default_factory=dict)  # (status, reason group) -> methods
    costed: int = 0  # methods whose report carries a cost (the full stage built and costed their PEG)
    cost_before: float = 0.0  # over the costed methods (an unchanged method's cost_after is its cost_before)
    cost_after: float = 0.0
    rewritten_cost_before: float = 0.0  # over the rewritten methods: where the reduction comes from
    rewritten_cost_after: float = 0.0
    bytes_before: int = 0  # code length of the rewritten methods
    bytes_after: int = 0
    emitted_before: int = 0  # the emitted code's price (codecost.py) of the rewritten methods
    emitted_after: int = 0
    times_ms: list[float] = field(default_factory=list)  # whole per-method time, methods with code
    extraction: dict[str, int] = field(default_factory=dict)  # extraction status -> methods (reports that have it)

    @property
    def with_code(self) -> int:
        return sum(self.counts.values())


def full_table(name: str, report: dict) -> FullTable:
    """The table of one JSON report (``peggy-jvm optimize --json``, or ``RunReport.to_json()``)."""
    t = FullTable(name, report["stage"])
    for m in report["methods"]:
        if m["bytes_before"] == 0:  # abstract or native: nothing to optimize
            t.no_code += 1
            continue
        t.counts[m["status"]] += 1
        key = (m["status"], reason_group(m["reason"]))
        t.reasons[key] = t.reasons.get(key, 0) + 1
        if m["cost_before"] is not None:
            t.costed += 1
            t.cost_before += m["cost_before"]
            t.cost_after += m["cost_after"] if m["cost_after"] is not None else m["cost_before"]
        if m["status"] == "rewritten":
            t.rewritten_cost_before += m["cost_before"] or 0.0
            t.rewritten_cost_after += m["cost_after"] or 0.0
            t.bytes_before += m["bytes_before"]
            t.bytes_after += m["bytes_after"]
            t.emitted_before += m.get("emitted_cost_before") or 0
            t.emitted_after += m.get("emitted_cost_after") or 0
        if t.stage in m["time_ms"]:
            t.times_ms.append(m["time_ms"][t.stage])
        if m.get("extraction"):  # only the full stage's methods that reached extraction have one
            t.extraction[m["extraction"]] = t.extraction.get(m["extraction"], 0) + 1
    return t


def _change(before: float, after: float) -> str:
    return f"{(after - before) / before:+.1%}" if before else "n/a"


def print_full_table(t: FullTable, top: int = 12) -> None:
    total = t.with_code
    print(f"\n### {t.name}: --stage {t.stage}, {total} methods with code ({t.no_code} without)\n")
    print("| status | methods | share |")
    print("|---|---|---|")
    for status, n in t.counts.items():
        print(f"| {status} | {n} | {n / total:.1%} |" if total else f"| {status} | {n} | - |")
    print(f"\n- cost (methods with a cost, {t.costed}): {t.cost_before:.6g} -> {t.cost_after:.6g} "
          f"({_change(t.cost_before, t.cost_after)}); of the rewritten methods: {t.rewritten_cost_before:.6g} -> "
          f"{t.rewritten_cost_after:.6g} ({_change(t.rewritten_cost_before, t.rewritten_cost_after)})")
    print(f"- bytecode of the rewritten methods: {t.bytes_before} -> {t.bytes_after} bytes "
          f"({_change(t.bytes_before, t.bytes_after)}); emitted cost {t.emitted_before} -> {t.emitted_after} "
          f"({_change(t.emitted_before, t.emitted_after)})")
    if t.times_ms:
        print(f"- time per method: p50 {percentile(t.times_ms, 50):.1f} ms, p95 {percentile(t.times_ms, 95):.1f} ms, "
              f"max {max(t.times_ms):.0f} ms, sum {sum(t.times_ms) / 1000:.1f} s")
    if t.extraction:
        print("- extraction: " + ", ".join(f"{k} {v}" for k, v in sorted(t.extraction.items(), key=lambda kv: -kv[1])))
    print("\n| status | methods | reason (numbers as N) |")
    print("|---|---|---|")
    for status in t.counts:
        groups = sorted(((n, r) for (s, r), n in t.reasons.items() if s == status), key=lambda g: (-g[0], g[1]))
        for n, r in groups[:top]:
            print(f"| {status} | {n} | {r or '-'} |")
        if len(groups) > top:
            print(f"| {status} | {sum(n for n, _ in groups[top:])} | ({len(groups) - top} other groups) |")


# -- running a corpus ----------------------------------------------------------------------------------------
def _parse_summary(out: str, row: Row) -> None:
    for line in out.splitlines():
        if " verify_errors=" in line and "classes=" in line:
            fields = dict(kv.split("=") for kv in line.rsplit(": ", 1)[1].split())
            row.verify_errors += int(fields["verify_errors"])
            row.other += int(fields["other_failures"])
        elif line.startswith("VERIFY"):
            print("   ", line[:300], file=sys.stderr)


def _side_by_side():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import side_by_side
    finally:
        sys.path.pop(0)
    return side_by_side


def compare_workload(name: str, jar: Path, out: Path, extra_cp: list[Path]) -> str:
    """Our workload for ``name`` on the original and the rewritten jar (``scripts/side_by_side.py``'s compile,
    run and comparison): ``same``, ``DIFFERS`` (the diff goes to stderr), ``FAILS`` on the original, or
    ``ERROR`` (does not compile, or times out). ``out`` comes first on the class path and the original jar after
    it, so that a sample's other classes are the original ones."""
    sbs = _side_by_side()
    main = WORKLOAD_OF[name]
    try:
        classes = sbs.compile_workload(sbs.resolve_workload(main), [jar, *extra_cp], sbs.default_cache())
        original = sbs.run_workload(jar, classes, main, extra_cp=extra_cp, timeout=300)
        if original.returncode != 0:
            print(f"    {main} fails on the original {jar.name}:\n{original.stderr[-2000:]}", file=sys.stderr)
            return "FAILS"
        rewritten = sbs.run_workload(out, classes, main, extra_cp=[jar, *extra_cp], timeout=300)
    except sbs.WorkloadError as e:
        print(f"    {main}: {e}", file=sys.stderr)
        return "ERROR"
    diff = sbs.difference(original, rewritten, f"{jar.name} (original)", f"{name} (rewritten)")
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


# -- a deterministic subset of a jar's classes -----------------------------------------------------------------
def in_sample(entry: str, modulus: int) -> bool:
    """Whether a class entry is in the 1-in-``modulus`` sample: CRC-32 of its name, so the same classes on every
    machine and run, spread over all packages (no hand-picked list to go stale)."""
    return zlib.crc32(entry.encode()) % modulus == 0


def write_subset(jar: Path, dest: Path, modulus: int) -> list[str]:
    """``dest``: a jar of the classes of ``jar`` in the 1-in-``modulus`` sample (non-class entries dropped, they
    are copied verbatim anyway). Optimize it with the original jar on the class path, so the class hierarchy
    knows every class. Returns the sampled entry names."""
    with zipfile.ZipFile(jar) as src, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as dst:
        names = [i.filename for i in src.infolist() if i.filename.endswith(".class")
                 and not i.filename.startswith("META-INF/") and in_sample(i.filename, modulus)]
        for n in names:
            dst.writestr(src.getinfo(n), src.read(n))
    return names


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
