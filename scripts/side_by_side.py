#!/usr/bin/env python3
"""Run a Java workload against an original jar and a rewritten one; fail on any difference in what they print.

    scripts/side_by_side.py ORIG.jar NEW.jar WORKLOAD [--rounds N] [--xint] [--cp EXTRA] [--arg A ...]
                            [--cache DIR] [--timeout S]

WORKLOAD is a ``.java`` file with a ``main`` method and no package (e.g. ``tests/java/workloads/JamaWork.java``)
or the bare name of one in ``tests/java/workloads/`` (``JamaWork``). It is compiled once against ORIG.jar into
a cache directory keyed by the hashes of the source, of ORIG.jar and by the ``javac`` version (default
``${XDG_CACHE_HOME:-~/.cache}/peggy-jvm/workloads``), then run N times (default 5) with each jar, alternating
which goes first::

    java -Xverify:all [-Xint] -cp ORIG.jar:CLASSES[:EXTRA] MAIN ARGS...
    java -Xverify:all [-Xint] -cp NEW.jar:CLASSES[:EXTRA]  MAIN ARGS...

Every run's stdout and exit status must equal the first run's on ORIG.jar (so a workload that is not
deterministic fails too). On a difference it prints a unified diff and exits 1; otherwise it prints a table of
the minimum and median wall time of both jars, with the median CPU time (user + system of the JVM, which a busy
machine disturbs less than wall time), and exits 0. Exit 2: bad usage, a workload that does not compile, or a
run that times out.

The functions :func:`compile_workload` and :func:`run_workload` are also used by ``tests/test_corpus.py``.
"""
from __future__ import annotations

import argparse
import difflib
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ROOT / "tests" / "java" / "workloads"


class WorkloadError(Exception):
    """A workload that cannot be found, compiled or run to completion."""


@dataclass
class RunResult:
    returncode: int
    stdout_bytes: bytes  # compared byte for byte
    stdout: str  # the same, decoded (UTF-8, undecodable bytes replaced), for diffs
    stderr: str
    seconds: float  # wall time
    cpu_seconds: float  # user + system time of the JVM process (steadier than wall time on a busy machine)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def java_home() -> Path:
    """The JDK to use: ``$JAVA_HOME`` if it has ``bin/javac``, else ``javac`` on PATH resolved through links."""
    env = os.environ.get("JAVA_HOME")
    if env and (Path(env) / "bin" / "javac").exists():
        return Path(env)
    javac = shutil.which("javac")
    if javac is None:
        raise WorkloadError("no JDK found: set JAVA_HOME or put javac on PATH")
    return Path(javac).resolve().parent.parent


def resolve_workload(spec: str) -> Path:
    """A path to a ``.java`` file, or the name of one in tests/java/workloads/."""
    p = Path(spec)
    if p.suffix == ".java" and p.is_file():
        return p.resolve()
    named = WORKLOADS / (spec if spec.endswith(".java") else spec + ".java")
    if named.is_file():
        return named
    raise WorkloadError(f"no such workload: {spec} (neither a .java file nor a name in {WORKLOADS})")


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "peggy-jvm" / "workloads"


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def compile_workload(source: Path, classpath: list[Path], cache: Path, home: Path | None = None) -> Path:
    """Compile ``source`` against ``classpath`` into a directory under ``cache``; returns that directory.

    The directory is named by a hash of the source, the class path jars' contents and the javac version, so a
    later call with the same inputs reuses it. Raises WorkloadError when javac fails.
    """
    home = home or java_home()
    javac = home / "bin" / "javac"
    version = subprocess.run([str(javac), "-version"], capture_output=True, text=True).stdout.strip()
    key = hashlib.sha256()
    key.update(source.read_bytes())
    for entry in classpath:
        key.update(_digest(entry).encode() if entry.is_file() else str(entry.resolve()).encode())
    key.update(version.encode())
    target = cache / f"{source.stem}-{key.hexdigest()[:16]}"
    if (target / f"{source.stem}.class").exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{source.stem}.", dir=cache))
    proc = subprocess.run([str(javac), "-nowarn", "-encoding", "UTF-8", "-d", str(tmp), "-cp",
                           os.pathsep.join(str(c) for c in classpath), str(source)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise WorkloadError(f"javac {source.name} failed:\n{proc.stdout}{proc.stderr}")
    try:
        os.replace(tmp, target)
    except OSError:  # another process compiled the same workload first
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def run_workload(jar: Path, classes: Path, main: str, args: list[str] | None = None, *, xint: bool = False,
                 extra_cp: list[Path] | None = None, home: Path | None = None, timeout: float = 300
                 ) -> RunResult:
    """``java -Xverify:all [-Xint] -cp JAR:CLASSES[:EXTRA] MAIN ARGS``; raises WorkloadError on a timeout."""
    home = home or java_home()
    cp = [jar, classes, *(extra_cp or [])]
    cmd = [str(home / "bin" / "java"), "-Xverify:all", *(["-Xint"] if xint else []),
           "-cp", os.pathsep.join(str(c) for c in cp), main, *(args or [])]
    cpu = _children_cpu()
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise WorkloadError(f"{main} on {jar} took more than {timeout:.0f} s") from None
    seconds = time.perf_counter() - start
    return RunResult(proc.returncode, proc.stdout, proc.stdout.decode("utf-8", "replace"),
                     proc.stderr.decode("utf-8", "replace"), seconds, _children_cpu() - cpu)


def difference(expected: RunResult, actual: RunResult, expected_name: str, actual_name: str,
               context: int = 3, max_lines: int = 80) -> str | None:
    """None when the two runs printed the same stdout and ended with the same status, else a report."""
    if expected.stdout_bytes == actual.stdout_bytes and expected.returncode == actual.returncode:
        return None
    lines = []
    if expected.returncode != actual.returncode:
        lines.append(f"exit status: {expected_name}={expected.returncode} {actual_name}={actual.returncode}")
    diff = list(difflib.unified_diff(expected.stdout.splitlines(), actual.stdout.splitlines(), expected_name,
                                     actual_name, n=context, lineterm=""))
    if not diff and expected.stdout_bytes != actual.stdout_bytes:
        diff = [f"stdout differs in bytes that decode alike ({len(expected.stdout_bytes)} vs "
                f"{len(actual.stdout_bytes)} bytes)"]
    lines.extend(diff[:max_lines])
    if len(diff) > max_lines:
        lines.append(f"... ({len(diff) - max_lines} more diff lines)")
    for name, run in ((expected_name, expected), (actual_name, actual)):
        if run.stderr.strip():
            tail = "\n".join(run.stderr.strip().splitlines()[-15:])
            lines.append(f"stderr of {name}:\n{tail}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Exit status: 0 same output, 1 different output, 2 error.")
    ap.add_argument("orig", type=Path, metavar="ORIG.jar", help="the original jar")
    ap.add_argument("new", type=Path, metavar="NEW.jar", help="the rewritten jar")
    ap.add_argument("workload", metavar="WORKLOAD", help="a .java file or a name in tests/java/workloads/")
    ap.add_argument("--rounds", type=int, default=5, help="runs per jar (default 5)")
    ap.add_argument("--xint", action="store_true", help="run the JVM with -Xint (interpreter only)")
    ap.add_argument("--cp", action="append", type=Path, default=[], metavar="EXTRA",
                    help="another class path entry both runs need (repeatable)")
    ap.add_argument("--arg", action="append", default=[], metavar="A",
                    help="an argument passed to the workload's main (repeatable)")
    ap.add_argument("--cache", type=Path, default=None, help=f"compile cache (default {default_cache()})")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per run (default 300)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    for jar in (args.orig, args.new, *args.cp):
        if not jar.exists():
            print(f"side_by_side: {jar}: no such file", file=sys.stderr)
            return 2
    try:
        home = java_home()
        source = resolve_workload(args.workload)
        classes = compile_workload(source, [args.orig.resolve(), *(c.resolve() for c in args.cp)],
                                   args.cache or default_cache(), home)
        main_class = source.stem
        times: dict[str, list[float]] = {"orig": [], "new": []}
        cpu: dict[str, list[float]] = {"orig": [], "new": []}
        jars = {"orig": args.orig, "new": args.new}
        reference: RunResult | None = None
        for r in range(args.rounds):
            order = ("orig", "new") if r % 2 == 0 else ("new", "orig")
            for which in order:
                run = run_workload(jars[which], classes, main_class, args.arg, xint=args.xint, extra_cp=args.cp,
                                   home=home, timeout=args.timeout)
                times[which].append(run.seconds)
                cpu[which].append(run.cpu_seconds)
                if reference is None:  # the first run is always ORIG's
                    reference = run
                    continue
                diff = difference(reference, run, f"{args.orig} (round 1)", f"{jars[which]} (round {r + 1})")
                if diff is not None:
                    print(f"side_by_side: {main_class}: output differs\n{diff}")
                    return 1
    except WorkloadError as e:
        print(f"side_by_side: {e}", file=sys.stderr)
        return 2
    assert reference is not None
    if reference.returncode != 0:
        print(f"side_by_side: note: {main_class} exits with status {reference.returncode} on both jars",
              file=sys.stderr)
    out_lines = reference.stdout_bytes.count(b"\n")
    print(f"{main_class}: identical output on both jars ({out_lines} lines, {len(reference.stdout_bytes)} bytes) "
          f"over {args.rounds} round(s){' with -Xint' if args.xint else ''}")
    print("| jar | min_s | median_s | median_cpu_s |")
    print("|---|---|---|---|")
    for which in ("orig", "new"):
        t = times[which]
        print(f"| {which}: {jars[which]} | {min(t):.3f} | {statistics.median(t):.3f} | "
              f"{statistics.median(cpu[which]):.3f} |")
    ratio = statistics.median(times["new"]) / statistics.median(times["orig"])
    cpu_ratio = statistics.median(cpu["new"]) / statistics.median(cpu["orig"])
    print(f"median new/orig: wall {ratio:.3f}, cpu {cpu_ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
