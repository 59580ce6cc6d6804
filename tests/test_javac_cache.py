"""The tests' compile cache (tests/support/javac_cache.py): a compile served from the cache gives the class files
the compiler gives, an edited source or another flag is compiled again, a failing compile is never stored and
keeps its own result, and a command reading a directory (a class path) is not cached."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import javac_command
from support import javac_cache
from support.javac_cache import run_javac


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
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
