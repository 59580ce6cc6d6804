"""Compiling the Java test fixtures under ``fixtures/src`` into class files (``scripts/build_fixtures.py`` is
its command line, ``conftest.fixture_classes`` and the benchmark scripts call it).

Two output trees are produced (both under ``fixtures/classes/``, which is
git-ignored):

* ``fixtures/classes/release17``: ``fixtures/src/common/*.java`` and
  ``fixtures/src/java17/*.java`` compiled with ``javac --release 17 -g``
  (class file version 61: indy string concatenation, nestmates, records,
  sealed classes, ...).
* ``fixtures/classes/release8``: ``fixtures/src/common/*.java`` only, compiled
  with ``javac --release 8 -g -Xlint:-options`` (class file version 52:
  StringBuilder concatenation, synthetic accessors, ...).

The runtime benchmark's kernels (``fixtures/src/bench``) are built only on
request, by :func:`build_bench` (the runtime benchmark's harness calls it), into
``fixtures/classes/bench``, and so are the labelled validation pairs
(``fixtures/src/pairs``, both versions of each pair in one tree), by
:func:`build_pairs` (the pair suite) into ``fixtures/classes/pairs``, and
the loops that never exit (``fixtures/src/loops``), by :func:`build_loops`
into ``fixtures/classes/loops``, and the twelve classic optimizations
(``fixtures/src/classic``) by :func:`build_classic` into
``fixtures/classes/classic``: they are not fixtures every test sweeps
(some of the loops' methods never return). The command line builds the
pairs, the loops and the classic shapes too.

The build is idempotent: an output tree is rebuilt only when it is missing,
when any source (or this module) is newer than its stamp file, or when the
set of sources changed.  ``force`` rebuilds unconditionally.  Every
rebuild starts from an empty directory so that no stale class survives a
deleted or renamed source.

Every fixture class that declares ``public static void main(String[])`` is a
"runnable fixture": run it with ``java -cp fixtures/classes/<release> Name``.
Its output is deterministic, so it can be compared before and after an
optimization pass.

Use::

    dirs = fixture_build.build()          # {"release17": Path, "release8": Path, "old": Path}

On failure (javac missing, or a compile error) ``build`` raises
``BuildError``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "fixtures"
SRC_COMMON = FIXTURES / "src" / "common"
SRC_JAVA17 = FIXTURES / "src" / "java17"
SRC_BENCH = FIXTURES / "src" / "bench"
SRC_PAIRS = FIXTURES / "src" / "pairs"
SRC_LOOPS = FIXTURES / "src" / "loops"
SRC_CLASSIC = FIXTURES / "src" / "classic"
CLASSES = FIXTURES / "classes"

STAMP_NAME = ".build-stamp"

# release name -> (javac --release value, source directories, extra javac flags)
RELEASES: dict[str, tuple[str, tuple[Path, ...], tuple[str, ...]]] = {
    "release17": ("17", (SRC_COMMON, SRC_JAVA17), ()),
    "release8": ("8", (SRC_COMMON,), ("-Xlint:-options",)),
}


class BuildError(RuntimeError):
    """javac is missing or failed to compile the fixtures."""


def find_javac() -> str:
    """Return the path of javac (PATH first, then $JAVA_HOME/bin)."""
    javac = shutil.which("javac")
    if javac:
        return javac
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "javac"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise BuildError(
        "javac not found: install a JDK (17 or later) and put javac on PATH "
        "or set JAVA_HOME"
    )


def sources_for(src_dirs: tuple[Path, ...]) -> list[Path]:
    """All .java files of the given directories, sorted."""
    files: list[Path] = []
    for d in src_dirs:
        if d.is_dir():
            files.extend(sorted(d.glob("*.java")))
    return files


def _stamp_text(sources: list[Path]) -> str:
    return "".join(str(p.relative_to(ROOT)) + "\n" for p in sources)


def _up_to_date(out_dir: Path, sources: list[Path]) -> bool:
    stamp = out_dir / STAMP_NAME
    try:
        stamp_mtime = stamp.stat().st_mtime
        recorded = stamp.read_text(encoding="utf-8")
    except OSError:
        return False
    if recorded != _stamp_text(sources):
        return False
    inputs = list(sources) + [Path(__file__).resolve()]
    return all(p.stat().st_mtime < stamp_mtime for p in inputs)


@contextmanager
def _lock() -> Iterator[None]:
    """Serialize concurrent builds (e.g. parallel test workers) on POSIX."""
    CLASSES.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX
        yield
        return
    with open(CLASSES / ".build-lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _compile(javac: str, release: str, flags: tuple[str, ...],
             sources: list[Path], out_dir: Path) -> int:
    """Compile into a fresh temp dir, then move it into place.  Returns the
    number of class files produced."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
    try:
        cmd = [javac, "--release", release, "-g", "-encoding", "UTF-8",
               *flags, "-d", str(tmp), *map(str, sources)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as exc:
            raise BuildError(f"could not run javac ({javac}): {exc}") from exc
        if proc.returncode != 0:
            output = (proc.stdout + proc.stderr).strip()
            raise BuildError(
                f"javac --release {release} failed (exit {proc.returncode}) "
                f"compiling {len(sources)} sources into {out_dir}:\n{output}"
            )
        (tmp / STAMP_NAME).write_text(_stamp_text(sources), encoding="utf-8")
        count = sum(1 for _ in tmp.rglob("*.class"))
        if out_dir.exists():
            shutil.rmtree(out_dir)
        tmp.rename(out_dir)
        return count
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def build(force: bool = False, *, _report: list[str] | None = None) -> dict[str, Path]:
    """Build both fixture trees (if needed) and return
    ``{"release17": Path, "release8": Path}``.

    Raises ``BuildError`` if javac is missing or fails."""
    result: dict[str, Path] = {}
    javac: str | None = None
    with _lock():
        for name, (release, src_dirs, flags) in RELEASES.items():
            out_dir = CLASSES / name
            sources = sources_for(src_dirs)
            if not sources:
                raise BuildError(f"no Java sources found in "
                                 f"{', '.join(str(d) for d in src_dirs)}")
            if not force and _up_to_date(out_dir, sources):
                if _report is not None:
                    _report.append(f"{name}: up to date")
            else:
                if javac is None:
                    javac = find_javac()
                count = _compile(javac, release, flags, sources, out_dir)
                if _report is not None:
                    _report.append(f"{name}: {len(sources)} sources -> "
                                   f"{count} classes")
            result[name] = out_dir
        result["old"] = _build_old(force, _report)
    return result


def build_bench(force: bool = False) -> Path:
    """``fixtures/classes/bench``: the benchmark kernels (``fixtures/src/bench``, ``--release 17``), rebuilt
    when stale like the other trees. Raises ``BuildError``."""
    return _build_on_request("bench", SRC_BENCH, force)


def build_pairs(force: bool = False) -> Path:
    """``fixtures/classes/pairs``: the labelled validation pairs (``fixtures/src/pairs``, ``--release 17``),
    rebuilt when stale like the other trees. Raises ``BuildError``."""
    return _build_on_request("pairs", SRC_PAIRS, force)


def build_loops(force: bool = False) -> Path:
    """``fixtures/classes/loops``: the loops that never exit (``fixtures/src/loops``, ``--release 17``; a sweep
    of every fixture method would wait on them), rebuilt when stale like the other trees. Raises
    ``BuildError``."""
    return _build_on_request("loops", SRC_LOOPS, force)


def build_classic(force: bool = False) -> Path:
    """``fixtures/classes/classic``: the twelve classic optimizations, one method each (``fixtures/src/classic``,
    ``--release 17``; tests/test_classic.py), rebuilt when stale like the other trees. Raises ``BuildError``."""
    return _build_on_request("classic", SRC_CLASSIC, force)


def _build_on_request(name: str, src_dir: Path, force: bool) -> Path:
    out_dir = CLASSES / name
    sources = sources_for((src_dir,))
    if not sources:
        raise BuildError(f"no Java sources found in {src_dir}")
    with _lock():
        if force or not _up_to_date(out_dir, sources):
            _compile(find_javac(), "17", (), sources, out_dir)
    return out_dir


def _build_old(force: bool, report: list[str] | None) -> Path:
    """``fixtures/classes/old``: class files of version < 50 (jsr/ret), assembled by peggy-jvm itself since no
    current javac writes them (``fixtures/old/*.py``, each with ``build(out_dir)``)."""
    import importlib.util

    out_dir = CLASSES / "old"
    generators = sorted((ROOT / "fixtures" / "old").glob("*.py"))
    if not force and _up_to_date(out_dir, generators):
        if report is not None:
            report.append("old: up to date")
        return out_dir
    sys.path.insert(0, str(ROOT))
    try:
        for gen in generators:
            spec = importlib.util.spec_from_file_location(f"peggy_old_fixture_{gen.stem}", gen)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            module.build(out_dir)
    except Exception as exc:
        raise BuildError(f"assembling {out_dir}: {type(exc).__name__}: {exc}") from exc
    finally:
        sys.path.remove(str(ROOT))
    (out_dir / STAMP_NAME).write_text(_stamp_text(generators), encoding="utf-8")
    if report is not None:
        report.append(f"old: {len(generators)} generators")
    return out_dir
