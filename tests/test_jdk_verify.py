"""Stage classfile on the JDK's own classes, with HotSpot as the judge of the recomputed frames.

A deterministic sample of the running JDK's classes (every class of ``java/util/**`` and ``java/lang/**`` in
java.base, all of java.sql and java.logging, the public API and two big implementation packages of java.xml,
the core packages of javac in jdk.compiler: see :data:`SAMPLE`) is extracted once per run with
``jimage extract`` into a temporary directory, so it always matches the JDK that verifies it. Then:

- every sampled class must read and write back byte-identical (``read_class`` -> ``write_class``);
- ``optimize_input(..., Stage.CLASSFILE)`` re-encodes every method and recomputes its StackMapTable and maxes,
  one output directory per module, with no fallbacks (beyond :data:`ALLOWED_FALLBACKS`, empty today);
- each output directory is verified by ``java --patch-module MODULE=OUTDIR -Xverify:all -cp HARNESS
  VerifyClasses OUTDIR``: the re-encoded classes replace the JDK's own in their module, every one is loaded and
  linked, and the test checks, from ``-Xlog:class+load``, that each of them really was loaded from OUTDIR.

Notes on what HotSpot checks here: VerifyClasses loads through a URLClassLoader whose parent is the platform
loader, so classes of boot and platform modules (java.base, java.logging, java.sql, java.xml) come from the
patched module; jdk.compiler belongs to the application loader, which the harness does not consult, so its
sampled classes are defined by the harness's loader from OUTDIR, with the whole original module behind them on
the class path for the classes outside the sample. HotSpot never verifies java.lang.Object, Class, String and
Throwable (bootstrap classes); those four are re-encoded and loaded from OUTDIR but checked only by the
round trip and the other tests.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from support import corpus

from peggy_jvm.classfile.reader import read_class, read_code
from peggy_jvm.classfile.writer import write_class, write_code
from peggy_jvm.pipeline import RunReport, Stage, optimize_input

# the slow tier: thousands of the JDK's classes re-encoded and verified (make test runs it; -m "not slow"
# leaves it out)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent

# module -> path prefixes of the sampled classes ("" = the whole module). Deterministic: a fixed list of
# packages of the running JDK, every class under them.
SAMPLE: dict[str, tuple[str, ...]] = {
    "java.base": ("java/util/", "java/lang/"),
    "java.sql": ("",),
    "java.logging": ("",),
    "java.xml": ("javax/xml/", "org/w3c/", "org/xml/", "jdk/", "com/sun/org/apache/xml/internal/serializer/",
                 "com/sun/org/apache/xerces/internal/impl/"),
    "jdk.compiler": tuple(f"com/sun/tools/javac/{p}/" for p in ("util", "parser", "tree", "code", "comp", "jvm")),
}
# Modules defined to the application class loader: the harness's loader cannot reach them through its parent,
# so it loads the sample itself and needs the rest of the module (extracted whole) on its class path.
APP_LOADER_MODULES = {"jdk.compiler"}

# Fallback reasons (prefix of MethodReport.reason) tolerated in the sample, each with its justification.
# Empty: stage classfile re-encodes every method of the sample today, so any fallback is a regression.
ALLOWED_FALLBACKS: dict[str, str] = {}

MIN_CLASSES = 1500
JOBS = 2
SUMMARY = re.compile(r": classes=(\d+) verified=(\d+) verify_errors=(\d+) other_failures=(\d+)\s*$")
LOADED = re.compile(r"\]\s*(\S+) source: (.*?)\s*$")


def _wanted(relative: str) -> bool:
    base = relative.rsplit("/", 1)[-1]
    return relative.endswith(".class") and base not in ("module-info.class", "package-info.class")


@pytest.fixture(scope="module")
def harness() -> Path:
    """tests/java/VerifyClasses.java compiled (once, cached) by ``support.corpus.harness_dir``."""
    try:
        return corpus.harness_dir()
    except (subprocess.CalledProcessError, OSError) as e:
        pytest.fail(f"could not compile the VerifyClasses harness: {e}", pytrace=False)


@pytest.fixture(scope="module")
def jdk_sample(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """module -> (directory of the sampled classes, directory of everything extracted for the module)."""
    image = tmp_path_factory.mktemp("jdk-image")
    alternatives = []
    for module, prefixes in SAMPLE.items():
        escaped = re.escape(module)
        if module in APP_LOADER_MODULES or prefixes == ("",):
            alternatives.append(f"/{escaped}/.*")
        else:
            alternatives.extend(f"/{escaped}/{re.escape(p)}.*" for p in prefixes)
    jimage = java_home / "bin" / "jimage"
    proc = subprocess.run([str(jimage), "extract", "--include", "regex:" + "|".join(alternatives), "--dir",
                           str(image), str(java_home / "lib" / "modules")],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"jimage extract failed (exit {proc.returncode}): {proc.stderr[-2000:]}", pytrace=False)
    samples = tmp_path_factory.mktemp("jdk-sample")
    result = {}
    for module, prefixes in SAMPLE.items():
        context = image / module
        dest = samples / module
        for p in sorted(context.rglob("*.class")):
            relative = p.relative_to(context).as_posix()
            if _wanted(relative) and relative.startswith(prefixes):
                (dest / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(p, dest / relative)
        result[module] = (dest, context)
    return result


@pytest.fixture(scope="module")
def recoded(jdk_sample, tmp_path_factory) -> dict[str, tuple[Path, RunReport, float]]:
    """module -> (output directory, report, seconds) of stage classfile over the module's sample."""
    out = {}
    base = tmp_path_factory.mktemp("jdk-out")
    for module, (sample, _) in jdk_sample.items():
        start = time.perf_counter()
        target, report = optimize_input(sample, base / module, Stage.CLASSFILE, jobs=JOBS)
        out[module] = (target, report, time.perf_counter() - start)
    return out


def _source_path(source: str) -> Path | None:
    """The directory in a ``-Xlog:class+load`` source: the boot loader logs a patch directory as a plain path,
    the platform loader and URLClassLoaders as a ``file:`` URL; ``jrt:/...`` and the like give None."""
    if source.startswith("file:"):
        return Path(unquote(urlparse(source).path)).resolve()
    if source.startswith("/"):
        return Path(source).resolve()
    return None


def _classes(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.class") if _wanted(p.relative_to(directory).as_posix()))


def test_the_sample_is_big_and_spans_the_modules(jdk_sample):
    counts = {m: len(_classes(sample)) for m, (sample, _) in jdk_sample.items()}
    assert sum(counts.values()) >= MIN_CLASSES, counts
    assert len([m for m, n in counts.items() if n > 0]) >= 4, counts
    base_sample, base_all = jdk_sample["java.base"]
    for package in ("java/util", "java/lang"):  # the whole of both trees, nothing left out
        everything = {p.relative_to(base_all) for p in _classes(base_all / package)}
        sampled = {p.relative_to(base_sample) for p in _classes(base_sample / package)}
        assert everything and sampled == everything, package
    assert (base_sample / "java/util/concurrent/ConcurrentHashMap.class").is_file()
    assert (base_sample / "java/lang/invoke/MethodHandles.class").is_file()


def test_every_sampled_class_writes_back_byte_identical(jdk_sample):
    mismatches = []
    total = 0
    for module, (sample, _) in jdk_sample.items():
        for p in _classes(sample):
            data = p.read_bytes()
            total += 1
            if write_class(read_class(data)) != data:
                mismatches.append(f"{module}/{p.relative_to(sample).as_posix()}")
    assert total >= MIN_CLASSES
    assert mismatches == [], f"{len(mismatches)} of {total} classes differ after read/write: {mismatches[:20]}"


def test_stage_classfile_rewrites_the_sample_without_fallbacks(recoded):
    unexpected = []
    for module, (_, report, _) in recoded.items():
        for m in report.methods:
            if m.status == "fallback" and not m.reason.startswith(tuple(ALLOWED_FALLBACKS)):
                unexpected.append(f"{module}: {m.class_name}.{m.name}{m.descriptor}: {m.reason}")
            # a method without a fallback either has no code or was re-encoded
            assert m.status != "unchanged" or m.bytes_before == 0, (module, m)
    assert unexpected == [], f"{len(unexpected)} fallbacks:\n" + "\n".join(unexpected[:50])
    with_code = sum(m.bytes_before > 0 for _, r, _ in recoded.values() for m in r.methods)
    rewritten = sum(m.status == "rewritten" for _, r, _ in recoded.values() for m in r.methods)
    assert rewritten == with_code > 0


def _verify_patched(java_home: Path, harness: Path, module: str, out: Path, log: Path, extra: list[str]
                    ) -> subprocess.CompletedProcess:
    cmd = [str(java_home / "bin" / "java"), f"--patch-module={module}={out}", "-Xverify:all",
           f"-Xlog:class+load=info:file={log}", "-cp", str(harness), "VerifyClasses", str(out), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)


def test_the_patched_module_check_catches_a_broken_class(recoded, java_home, harness, tmp_path):
    """A negative control: the same command must report a java.base class whose frames were removed."""
    out, _, _ = recoded["java.base"]
    name = "java/util/Scanner"  # has branches (so needs frames) and is not loaded while the JVM boots
    cf = read_class((out / f"{name}.class").read_bytes())
    stripped = 0
    for m in cf.methods:
        attr = m.code_attribute()
        if attr is None:
            continue
        code = read_code(attr.data, cf.pool)
        kept = [a for a in code.attributes if a.name != "StackMapTable"]
        stripped += len(code.attributes) - len(kept)
        code.attributes = kept
        attr.data = write_code(code)
    assert stripped > 0
    broken = tmp_path / "broken"
    (broken / name).parent.mkdir(parents=True)
    (broken / f"{name}.class").write_bytes(write_class(cf))
    proc = _verify_patched(java_home, harness, "java.base", broken, tmp_path / "load.log", [])
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "VERIFY java.util.Scanner: java.lang.VerifyError" in proc.stdout
    assert "verify_errors=1" in proc.stdout


@pytest.mark.parametrize("module", list(SAMPLE))
def test_hotspot_verifies_the_recoded_module(module, recoded, jdk_sample, java_home, harness, tmp_path):
    out, report, _ = recoded[module]
    _, context = jdk_sample[module]
    expected = {p.relative_to(out).as_posix()[: -len(".class")].replace("/", ".") for p in _classes(out)}
    assert expected and report.classes >= len(expected)
    log = tmp_path / "class-load.log"
    extra = [str(context)] if module in APP_LOADER_MODULES else []
    proc = _verify_patched(java_home, harness, module, out, log, extra)
    failures = "\n".join(line for line in proc.stdout.splitlines() if line.startswith(("VERIFY", "OTHER")))
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    found = SUMMARY.search(summary)
    assert found, f"no summary line (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    classes, verified, verify_errors, other = map(int, found.groups())
    assert verify_errors == 0, f"{module}: {verify_errors} classes fail verification:\n{proc.stdout[-6000:]}"
    assert other == 0, f"{module}: {other} classes not linked (so not verified):\n{failures[:6000]}"
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert classes == verified == len(expected), summary
    # Each verified class must be the re-encoded one: loaded from OUTDIR, not from the runtime image.
    loaded_from_out = set()
    for line in log.read_text().splitlines():
        m = LOADED.search(line)
        if m and _source_path(m.group(2)) == out.resolve():
            loaded_from_out.add(m.group(1))
    missing = sorted(expected - loaded_from_out)
    assert missing == [], f"{len(missing)} classes not loaded from {out}: {missing[:20]}"
