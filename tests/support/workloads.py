"""Running a Java workload on a jar and comparing two runs: the mechanism of ``tests/test_corpus.py``,
``scripts/side_by_side.py`` (a workload on an original and a rewritten jar, with timings), ``verify_corpus.py``'s
workload check and the runtime benchmark's jar part.

A workload is a ``.java`` file with a ``main`` method and no package (e.g. ``tests/java/workloads/JamaWork.java``),
or the bare name of one in ``tests/java/workloads/`` (:func:`resolve_workload`). :func:`compile_workload` compiles
it once against a class path into a cache directory keyed by the hashes of the source, of the class path's jars
and by the ``javac`` version (default :func:`default_cache`, ``${XDG_CACHE_HOME:-~/.cache}/peggy-jvm/workloads``);
:func:`run_workload` runs it under ``-Xverify:all`` (optionally ``-Xint``) with the jar first on the class path
and returns its exit status, stdout (bytes and text), stderr, wall and CPU time; :func:`difference` is None when
two runs printed the same bytes and ended alike, else a report with a unified diff. Failures to find, compile or
finish a workload raise :class:`WorkloadError`.
"""
from __future__ import annotations

import difflib
import hashlib
import os
import resource
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
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
