"""Shared pytest fixtures for peggy-jvm's tests.

All are session-scoped, so each expensive step happens at most once per run.
A missing prerequisite makes the tests that need it ERROR (``pytest.fail``);
nothing here skips, because a silently skipped JVM check is worse than a red one.

``java_home``
    Path of the JDK whose ``javac`` is on PATH (symlinks resolved, so
    ``/usr/bin/javac`` gives e.g. ``/usr/lib/jvm/java-17-openjdk-amd64``).
    ``java_home / "bin" / "java"`` is the JVM the other fixtures run.

``fixture_classes``
    Compiles the Java sources in ``fixtures/src/`` with
    ``support.fixture_build.build()`` (what ``make fixtures`` runs); returns
    its result, ``{"release17": Path, "release8": Path}``: the class
    directories compiled with ``--release 17`` and ``--release 8``.

``verifier``
    Compiles ``tests/java/VerifyClasses.java`` once into a temporary directory
    and returns ``verify(path, *extra_cp, timeout=600)``, which runs what
    ``java -Xverify:all VerifyClasses PATH EXTRA...`` runs (in one
    ``VerifyClasses --serve`` JVM per test process) and returns it as a
    ``subprocess.CompletedProcess`` (stdout and stderr as text).
    PATH is a jar or a directory of classes; each extra argument is a jar,
    a directory or a ``:``-separated class path the classes may need.  Every
    class is loaded and linked (so verified) without running its static
    initializer.  Exit status 0: no class failed verification; 1: some did
    (``VERIFY <class>: <error>`` lines); 2: bad usage.  Other failures (e.g. a
    missing optional dependency) are ``OTHER <class>: <error>`` lines and do
    not change the exit status.  The last stdout line is
    ``<PATH>: classes=N verified=N verify_errors=N other_failures=N``.

``corpus_jars``
    Runs ``scripts/fetch_corpus.sh`` (Debian's builds of real Java libraries,
    cached in ``$PEGGY_CORPUS`` or ``~/.cache/peggy-jvm/corpus``; fetched once,
    later runs reuse them) and returns ``{name: Path}`` for commons-lang3,
    commons-math3, guava, jsoup and jama.  A failure to fetch is an ERROR.

The result cache of ``optimize`` and ``validate`` is off (``PEGGY_JVM_CACHE=off``) in every process the tests
start, unless a test passes ``--cache`` or its own environment.

Where ``PYTHONDONTWRITEBYTECODE`` is set, the run caches compiled bytecode under the temporary directory instead
(``PYTHONPYCACHEPREFIX``, for itself and every process it starts), never in the source tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import pytest
from support import fixture_build
from support.javac_cache import run_javac

# CPU seconds per test phase into $PEGGY_TEST_CPU_LOG when it is set (support/cputime.py); the work units of a
# --dist loadfile run and their order (support/schedule.py)
pytest_plugins = ["support.cputime", "support.schedule"]

ROOT = Path(__file__).resolve().parent.parent
VERIFY_SOURCE = ROOT / "tests" / "java" / "VerifyClasses.java"
FETCH_CORPUS = ROOT / "scripts" / "fetch_corpus.sh"

# The CLI's result cache (peggy_jvm/cache.py) is off in every test unless the test says otherwise: a test must see
# the work done, not what an earlier run (of this or another checkout) stored. Subprocesses inherit it.
os.environ["PEGGY_JVM_CACHE"] = "off"



def _cache_bytecode_outside_the_tree() -> None:
    """Let this run and every Python process it starts cache compiled bytecode, under the temporary directory
    (``PYTHONPYCACHEPREFIX``), never beside the sources: an environment with ``PYTHONDONTWRITEBYTECODE`` set
    (which keeps ``__pycache__`` out of the source tree) otherwise compiles the whole package again in each of
    the ``peggy-jvm`` subprocesses and pytest workers of a run (0.3 s of CPU each; test_cli.py took 25 s of CPU
    without the cache, 19 s with it; a worker's collection 6 s, 2 s). The cache is checked against each
    source's size and time, as any ``__pycache__`` is, so a stale entry is never used."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return  # bytecode is cached the usual way (or a prefix was chosen already)
    prefix = Path(tempfile.gettempdir()) / f"peggy-jvm-pycache-{os.getuid()}"
    os.environ.pop("PYTHONDONTWRITEBYTECODE")
    os.environ.setdefault("PYTHONPYCACHEPREFIX", str(prefix))
    # this process too: the test modules imported after this one (pytest's rewritten test modules follow
    # sys.pycache_prefix as well)
    sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"]
    sys.dont_write_bytecode = False


_cache_bytecode_outside_the_tree()

# Fetching five .deb files normally takes seconds; allow for a slow mirror
# and an `apt-get update`.
FETCH_TIMEOUT_S = 900


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


@pytest.fixture(scope="session")
def java_home() -> Path:
    javac = shutil.which("javac")
    if javac is None:
        pytest.fail(
            "javac is not on PATH: peggy-jvm's tests need a JDK 17 "
            "(Debian: apt-get install openjdk-17-jdk-headless)",
            pytrace=False,
        )
    home = Path(javac).resolve().parent.parent
    if not (home / "bin" / "java").exists():
        pytest.fail(f"{home}/bin/java not found (javac at {javac})", pytrace=False)
    return home


# javac's own JVM: C1 only and the serial collector. A test's compile of a file or two is over before the C2
# compiler's work would pay (the classes javac writes do not depend on it): 1.13 s -> 0.74 s of CPU per compile of
# test_validate_strings.py's source.
JAVAC_JVM_FLAGS = ("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC")


# The harnesses' JVMs (VerifyClasses, RunMains): the same, for the same reason (a verification or a fixture's
# main is over in a second; what they print does not depend on the compiler): 0.25 -> 0.18 s of CPU per run of
# the Kernels fixture.
JAVA_JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def javac_command(java_home: Path) -> list[str]:
    """The start of a ``javac`` command line for the tests' own small compiles (``JAVAC_JVM_FLAGS``)."""
    return [str(java_home / "bin" / "javac"), *JAVAC_JVM_FLAGS]


def compile_versions(java_home: Path, base: Path, file_name: str, sources: dict[str, str]) -> dict[str, Path]:
    """Compile each version's source (one file ``file_name``) into ``base/<version>``: the ORIG/OPT trees of the
    validation tests."""
    out = {}
    for version, src in sources.items():
        src_dir = base / f"{version}-src"
        src_dir.mkdir()
        (src_dir / file_name).write_text(src)
        out[version] = base / version
        run_javac([*javac_command(java_home), "-d", str(out[version]), str(src_dir / file_name)],
                  check=True, capture_output=True)
    return out


def compile_old_new(java_home: Path, base: Path, old: str, new: str) -> dict[str, Path]:
    """The ORIG/OPT trees of a pair written as two classes ``Old`` and ``New`` (validated with ``--map
    Old=New``): ``Old.java`` into ``base/orig``, ``New.java`` into ``base/opt``."""
    return {**compile_versions(java_home, base, "Old.java", {"orig": old}),
            **compile_versions(java_home, base, "New.java", {"opt": new})}


def validate_rows(trees: dict[str, Path], class_name: str | None = None, method_timeout: float = 8.0, **options):
    """``validate`` ORIG against OPT (a :func:`compile_versions` result): method name -> its row, for the
    methods of ``class_name`` (every class when None). ``options`` are further ``ValidateOptions`` fields."""
    from peggy_jvm.validate import ValidateOptions, validate_inputs
    rep = validate_inputs(trees["orig"], trees["opt"], ValidateOptions(method_timeout=method_timeout, **options))
    return {p.name: p for p in rep.pairs if class_name is None or p.class_name == class_name}


def keep_every_rewrite(mp: pytest.MonkeyPatch) -> None:
    """The full stage without its emitted-cost rule (``pipeline._check_emitted``) nor the input size budget
    (``sizebudget.choose``: nothing withdrawn): for tests of the rewrites themselves (their shapes, lines and
    behaviour on the JVM), many of which today's lowering does not make pay yet; ``test_codecost.py`` and
    ``test_sizebudget.py`` test the rules."""
    import peggy_jvm.pipeline as pipeline
    from peggy_jvm.sizebudget import Choice
    mp.setattr(pipeline, "_check_emitted", lambda goal, before, after: None)
    mp.setattr(pipeline, "choose", lambda rewrites: Choice((), 0))


@pytest.fixture(scope="session")
def fixture_classes(java_home: Path) -> dict[str, Path]:
    failure = None
    built: dict = {}
    try:
        built = fixture_build.build()
    except Exception as exc:  # a broken fixture build is an ERROR for every user
        failure = f"building the fixtures failed: {type(exc).__name__}: {exc}"
    if failure is not None:
        pytest.fail(failure, pytrace=False)
    return {str(release): Path(directory) for release, directory in built.items()}


@pytest.fixture(scope="session")
def verifier(
    java_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., subprocess.CompletedProcess]:
    harness = tmp_path_factory.mktemp("verify-harness")
    compiled = run_javac(
        [*javac_command(java_home), "-d", str(harness), str(VERIFY_SOURCE)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if compiled.returncode != 0:
        pytest.fail(
            f"could not compile {VERIFY_SOURCE}:\n{compiled.stdout}{compiled.stderr}",
            pytrace=False,
        )
    java = java_home / "bin" / "java"
    flags = (*JAVA_JVM_FLAGS, "-Xverify:all")

    def verify(path, *extra_cp, timeout: float = 600) -> subprocess.CompletedProcess:
        # one VerifyClasses JVM per test process answers every run (VerifyClasses --serve: each run's classes in a
        # class loader of its own, verified under the server's -Xverify:all as in a JVM of their own); timeout is
        # kept for the callers' sake: a run executes no code of the classes, so it cannot hang on them
        from support import toolserver  # not at the top: it imports the cputime plugin before pytest registers it
        args = [str(path), *(str(entry) for entry in extra_cp)]
        code, out, err = toolserver.run_harness(java_home, harness, "VerifyClasses", flags, args)
        return subprocess.CompletedProcess([str(java), *flags, "-cp", str(harness), "VerifyClasses", *args],
                                           code, out, err)

    return verify


@pytest.fixture(scope="session")
def run_mains(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    """``run_mains(classpath, names) -> str``: tests/java/RunMains.java runs each class's main in one JVM
    under -Xverify:all and returns the transcript (``=== Name``, output, ``=== Name end: ok|threw X``)."""
    harness = tmp_path_factory.mktemp("run-mains")
    source = ROOT / "tests" / "java" / "RunMains.java"
    compiled = run_javac([*javac_command(java_home), "-d", str(harness), str(source)],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if compiled.returncode != 0:
        pytest.fail(f"could not compile {source}:\n{compiled.stdout}{compiled.stderr}", pytrace=False)

    def run(classpath, names, timeout: float = 300) -> str:
        proc = subprocess.run([str(java_home / "bin" / "java"), *JAVA_JVM_FLAGS, "-Xverify:all", "-cp",
                               f"{classpath}{os.pathsep}{harness}", "RunMains", *names],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout

    return run


@pytest.fixture(scope="session")
def corpus_jars() -> dict[str, Path]:
    try:
        fetched = subprocess.run(
            ["sh", str(FETCH_CORPUS)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=FETCH_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{FETCH_CORPUS} took more than {FETCH_TIMEOUT_S}s", pytrace=False)
    if fetched.returncode != 0:
        pytest.fail(
            f"{FETCH_CORPUS} failed (exit {fetched.returncode}):\n{_tail(fetched.stderr)}",
            pytrace=False,
        )
    jars = {}
    for line in fetched.stdout.splitlines():
        line = line.strip()
        if line.endswith(".jar"):
            jar = Path(line)
            if not jar.is_file():
                pytest.fail(f"{FETCH_CORPUS} listed {jar}, which does not exist", pytrace=False)
            jars[jar.stem] = jar
    if not jars:
        pytest.fail(f"{FETCH_CORPUS} listed no jars:\n{_tail(fetched.stderr)}", pytrace=False)
    return jars
