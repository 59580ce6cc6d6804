"""The tests' compile cache (tests/support/javac_cache.py): a compile served from the cache gives the class files
the compiler gives, an edited source or another flag is compiled again, a failing compile is never stored and
keeps its own result, and a command reading a directory (a class path) is not cached."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import javac_command
from support import javac_cache
from support.javac_cache import run_javac
from support.toolserver import run_tool


@pytest.fixture
def cache(java_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    run_tool(java_home, "javap", ["-version"])  # the tool server's own compile is not one of the test's entries
    root = tmp_path / "cache"
    monkeypatch.setattr(javac_cache, "cache_root", lambda: root)
    monkeypatch.delenv(javac_cache.CACHE_ENV, raising=False)
    return root


def _source(where: Path, body: str) -> Path:
    where.mkdir(parents=True)
    (where / "K.java").write_text(f"public class K {{ static int f() {{ return {body}; }} }}\n")
    return where / "K.java"


def _entries(root: Path) -> list[Path]:
    return [p for p in root.iterdir() if not p.name.startswith(".")] if root.exists() else []


def test_a_hit_gives_the_compilers_class_files(java_home, tmp_path, cache):
    first = run_javac([*javac_command(java_home), "-d", str(tmp_path / "a"), str(_source(tmp_path / "s1", "1"))],
                      check=True, capture_output=True, text=True)
    # the same source written elsewhere (another test's directory) is the same compile
    second = run_javac([*javac_command(java_home), "-d", str(tmp_path / "b"), str(_source(tmp_path / "s2", "1"))],
                       check=True, capture_output=True, text=True)
    assert len(_entries(cache)) == 1
    assert (first.returncode, first.stdout, first.stderr) == (second.returncode, second.stdout, second.stderr)
    subprocess.run([*javac_command(java_home), "-d", str(tmp_path / "real"), str(tmp_path / "s1" / "K.java")],
                   check=True)
    assert (tmp_path / "b" / "K.class").read_bytes() == (tmp_path / "real" / "K.class").read_bytes()


def test_an_edited_source_or_another_flag_is_compiled_again(java_home, tmp_path, cache):
    run_javac([*javac_command(java_home), "-d", str(tmp_path / "a"), str(_source(tmp_path / "s1", "1"))], check=True)
    run_javac([*javac_command(java_home), "-d", str(tmp_path / "b"), str(_source(tmp_path / "s2", "2"))], check=True)
    run_javac([*javac_command(java_home), "-g", "-d", str(tmp_path / "c"), str(tmp_path / "s1" / "K.java")],
              check=True)
    assert len(_entries(cache)) == 3
    classes = [(tmp_path / d / "K.class").read_bytes() for d in "abc"]
    assert len(set(classes)) == 3  # return 1, return 2, return 1 with debug tables


def test_a_failing_compile_keeps_its_result_and_is_not_stored(java_home, tmp_path, cache):
    bad = _source(tmp_path / "s", "1 +")
    proc = run_javac([*javac_command(java_home), "-d", str(tmp_path / "o"), str(bad)], capture_output=True, text=True)
    assert proc.returncode != 0 and "error" in proc.stderr
    with pytest.raises(subprocess.CalledProcessError):
        run_javac([*javac_command(java_home), "-d", str(tmp_path / "o"), str(bad)], check=True, capture_output=True)
    assert _entries(cache) == []


def test_a_class_path_directory_is_not_cached(java_home, tmp_path, cache):
    lib = tmp_path / "lib"
    lib.mkdir()
    run_javac([*javac_command(java_home), "-cp", str(lib), "-d", str(tmp_path / "o"),
               str(_source(tmp_path / "s", "1"))], check=True)
    assert (tmp_path / "o" / "K.class").is_file() and _entries(cache) == []


def test_checkouts_share_entries_and_a_file_javac_could_read_in_the_working_directory_is_another_key(
        java_home, tmp_path, cache, monkeypatch):
    """javac reads the working directory (its default class path): the key holds what it could find at its top,
    not its path, so that every checkout's runs (a CI run's fresh clone too) share the compiles."""
    src = _source(tmp_path / "s", "1")
    for checkout in ("one", "two"):
        (tmp_path / checkout / "tests").mkdir(parents=True)
        monkeypatch.chdir(tmp_path / checkout)
        run_javac([*javac_command(java_home), "-d", str(tmp_path / f"out-{checkout}"), str(src)], check=True)
    assert len(_entries(cache)) == 1
    (tmp_path / "two" / "Helper.java").write_text("class Helper { }\n")  # a type K could have used
    run_javac([*javac_command(java_home), "-d", str(tmp_path / "out-three"), str(src)], check=True)
    assert len(_entries(cache)) == 2


@pytest.fixture
def commands_run(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The compiler commands the cache runs as processes (not in the tool server)."""
    ran: list[list[str]] = []
    real = javac_cache.subprocess.run

    def recording(command, *args, **kwargs):
        ran.append([str(a) for a in command])
        return real(command, *args, **kwargs)
    monkeypatch.setattr(javac_cache.subprocess, "run", recording)
    return ran


def test_a_compile_in_the_tool_server_gives_the_commands_class_files_and_messages(java_home, tmp_path, cache,
                                                                               commands_run, monkeypatch):
    """A compile the cache stores runs in the tool server (one JVM per test process); what it gives must be what
    the command gives: the class files byte for byte, the compiler's notes, and the classes it found through
    its default class path, the working directory (compiled implicitly into -d)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "Helper.java").write_text("class Helper { @Deprecated static int one() { return 1; } }\n")
    src = tmp_path / "s" / "K.java"
    src.parent.mkdir()
    src.write_text("public class K { static int f() { return Helper.one(); } }\n")
    monkeypatch.chdir(work)
    served = run_javac([*javac_command(java_home), "-d", str(tmp_path / "served"), str(src)], check=True,
                       capture_output=True, text=True)
    assert commands_run == []  # the server compiled it
    real = subprocess.run([*javac_command(java_home), "-d", str(tmp_path / "real"), str(src)], check=True,
                          capture_output=True, text=True)
    assert "deprecated" in real.stderr and (served.stdout, served.stderr) == (real.stdout, real.stderr)
    for name in ("K.class", "Helper.class"):
        assert (tmp_path / "served" / name).read_bytes() == (tmp_path / "real" / name).read_bytes(), name


def test_a_compile_the_server_fails_gives_the_commands_own_failure(java_home, tmp_path, cache, commands_run):
    bad = _source(tmp_path / "s", "1 +")
    proc = run_javac([*javac_command(java_home), "-d", str(tmp_path / "o"), str(bad)], capture_output=True,
                     text=True)
    assert len(commands_run) == 1  # failed in the server, then run as the command
    real = subprocess.run([*javac_command(java_home), "-d", str(tmp_path / "r"), str(bad)], capture_output=True,
                          text=True)
    assert proc.returncode == real.returncode != 0
    assert (proc.stdout, proc.stderr) == (real.stdout, real.stderr)


def test_a_test_process_leaves_no_compiled_harness_or_tool_server_behind(tmp_path):
    """The DiffRunner harness and the tool server are compiled into temporary directories that live as long as
    the test process; a process that ends normally removes them (92 were left in /tmp by earlier runs)."""
    tests = Path(__file__).resolve().parent
    script = ("import difftest, shutil\n"
              "from pathlib import Path\n"
              "from support.javap import javap\n"
              "home = Path(shutil.which('javac')).resolve().parent.parent\n"
              "assert (difftest.harness_dir(home) / 'DiffRunner.class').is_file()\n"
              "javap(home, '-version', check=True)\n")
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": os.pathsep.join([str(tests), str(tests.parent)])}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=tests.parent)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"peggy-jvm-javac-cache-{os.getuid()}"]
