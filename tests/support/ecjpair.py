"""Two compilers of one source as a source of real method pairs: commons-lang3 3.12.0 built by javac and by the
Eclipse compiler ecj (issue 17 item 7), shared by ``tests/test_ecj_pair.py`` and ``scripts/ecj_pair.py``.

What it owns
    * :func:`fetch_inputs`: ecj's jar and commons-lang3's source tarball (``scripts/fetch_corpus.sh --ecj``,
      fetched on first use).
    * :func:`build_pair`: the main sources (``src/main/java``) compiled twice, the same files, the same release
      and no class path, once by the running JDK's javac and once by ecj, each into a jar cached under
      ``<corpus>/ecj-pair/release<N>/`` (``javac.jar``, ``ecj.jar``; written whole or not at all, reused while
      the tarball, the ecj jar and the JDK are the ones they were built from).

``RELEASE`` is 11: the sources are Java 8, but from release 9 javac compiles a string concatenation to an
``invokedynamic`` of ``StringConcatFactory.makeConcatWithConstants`` while ecj 3.32 still emits a
``StringBuilder`` chain at every level, and javac 17 builds an enum's ``values()`` array in a ``$values()``
helper; so the pair holds every difference issue 17 names (lambda names, switch maps, concatenation shapes, enum
``values()``). A failed fetch or compilation raises SystemExit with a one-line message.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .corpus import ROOT, cache_dir

RELEASE = 11
FETCH = ROOT / "scripts" / "fetch_corpus.sh"
ECJ_MAIN = "org.eclipse.jdt.internal.compiler.batch.Main"
SOURCE_ROOT = "src/main/java/"  # inside the tarball's one top-level directory


@dataclass(frozen=True, slots=True)
class Pair:
    javac: Path  # ORIG
    ecj: Path  # OPT
    release: int


def fetch_inputs() -> tuple[Path, Path]:
    """(ecj's jar, commons-lang3's source tarball), fetched by fetch_corpus.sh --ecj when missing."""
    proc = subprocess.run(["sh", str(FETCH), "--ecj", str(cache_dir())], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    paths = [Path(ln.strip()) for ln in proc.stdout.splitlines() if ln.strip()]
    jar = next((p for p in paths if p.suffix == ".jar"), None)
    src = next((p for p in paths if p.name.endswith(".tar.xz")), None)
    if proc.returncode != 0 or jar is None or src is None:
        raise SystemExit(f"ecj_pair: could not fetch ecj or the sources: {proc.stderr.strip()[-500:]}")
    return jar, src


def _stamp(*paths: Path) -> str:
    """What a cached build depends on: the inputs' names and sizes, and the JDK that compiled it."""
    h = hashlib.sha256()
    for p in paths:
        h.update(f"{p.name}:{p.stat().st_size}\n".encode())
    h.update(subprocess.run(["javac", "-version"], capture_output=True, text=True).stdout.encode())
    return h.hexdigest()[:16]


def _compile(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"ecj_pair: {what} failed (exit {proc.returncode}): "
                         + " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-5:]))


def _jar(classes: Path, out: Path) -> None:
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    _compile(["jar", "cf", str(tmp), "-C", str(classes), "."], f"jar {out.name}")
    tmp.replace(out)


def build_pair(release: int = RELEASE) -> Pair:
    """commons-lang3's main sources compiled by javac and by ecj (cached; see the module docstring)."""
    ecj, tarball = fetch_inputs()
    out = cache_dir() / "ecj-pair" / f"release{release}"
    stamp = _stamp(ecj, tarball)
    pair = Pair(out / "javac.jar", out / "ecj.jar", release)
    if (out / "stamp").is_file() and (out / "stamp").read_text() == stamp and pair.javac.is_file() \
            and pair.ecj.is_file():
        return pair
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ecj-pair-") as tmp:
        work = Path(tmp)
        with tarfile.open(tarball) as tf:
            members = [m for m in tf.getmembers()
                       if m.isfile() and m.name.split("/", 1)[-1].startswith(SOURCE_ROOT) and m.name.endswith(".java")]
            tf.extractall(work / "src", members=members, filter="data")
        sources = sorted(str(p) for p in (work / "src").rglob("*.java"))
        if not sources:
            raise SystemExit(f"ecj_pair: no {SOURCE_ROOT}*.java in {tarball}")
        (work / "sources.txt").write_text("\n".join(sources) + "\n")
        common = ["-encoding", "UTF-8", "-nowarn", "--release", str(release)]
        _compile(["javac", *common, "-d", str(work / "javac"), f"@{work / 'sources.txt'}"], "javac")
        # -proc:none: Debian's jar lacks the annotation-processing manager (ecj prints a warning without it)
        _compile(["java", "-cp", str(ecj), ECJ_MAIN, "-proc:none", *common, "-d", str(work / "ecj"),
                  f"@{work / 'sources.txt'}"], "ecj")
        _jar(work / "javac", pair.javac)
        _jar(work / "ecj", pair.ecj)
    (out / "stamp").write_text(stamp)
    return pair
