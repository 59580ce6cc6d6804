"""``peggy-jvm optimize`` never destroys what it was not asked to write (issue 18, item 1; docs/cli.md, Output).

Covered: the reported data loss (``optimize proj/classes -o proj`` deleted ``proj/src``) and its variant without
overlap; ``-o`` equal to the input for a class, a jar and a directory, spelled differently or through a symlink;
an output inside the input directory; ``-o .`` and ``-o ..``; a file where a directory is needed and the reverse;
existing files of another form; report paths (``--json``, ``--junit``) checked before any work; re-running onto
an earlier output (replaced, stale files gone) and refusing once the user has added a file to it, even while
the run is under way; an unwritable parent; a failing final rename leaving the earlier output as it was and no
temporaries; ``show --dot``. Every refusal is exit 2 with one line
naming the user's path, no traceback and no temporary name, and leaves every file byte for byte as it was.
Everything runs ``--stage classfile`` on one or two small classes, in-process, to stay fast.
"""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from peggy_jvm import archive
from peggy_jvm.archive import OUTPUT_MARKER
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.cli import main
from peggy_jvm.pipeline import Stage, optimize_input

PREFIX = "peggy-jvm: error: "
CLASSES = ("IntArith", "Switches")
_SCRIPT = Path(sys.executable).parent / "peggy-jvm"
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "peggy_jvm.cli"]


def optimize(*args) -> Result:
    result = CliRunner().invoke(main, ["optimize", *map(str, args), "--stage", "classfile"])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result


def refused(result: Result, *words: str) -> str:
    """Exit 2 with one error line holding ``words`` and no temporary name (``.name.new-...``, ``.tmp``)."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX), result.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert ".new-" not in lines[0] and ".old-" not in lines[0] and ".tmp" not in lines[0], lines[0]
    return lines[0]


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and directory (None) under ``root``, hidden ones included."""
    return {p.relative_to(root).as_posix(): (None if p.is_dir() else p.read_bytes()) for p in root.rglob("*")}


def no_temporaries(where: Path) -> None:
    left = [p.name for p in where.iterdir() if ".new-" in p.name or ".old-" in p.name or p.name.startswith(".") and
            p.name != OUTPUT_MARKER]
    assert left == [], left


@pytest.fixture(scope="module")
def originals(fixture_classes) -> dict[str, bytes]:
    return {n: (fixture_classes["release17"] / f"{n}.class").read_bytes() for n in CLASSES}


@pytest.fixture
def classes(originals, tmp_path) -> Path:
    d = tmp_path / "in" / "classes"
    d.mkdir(parents=True)
    for name, data in originals.items():
        (d / f"{name}.class").write_bytes(data)
    return d


@pytest.fixture
def proj(originals, tmp_path) -> Path:
    """The reporter's layout: sources, notes and compiled classes in one project directory."""
    p = tmp_path / "proj"
    (p / "src" / "pkg").mkdir(parents=True)
    (p / "src" / "A.java").write_text("public class A { public static void main(String[] a) {} }\n")
    (p / "src" / "pkg" / "B.java").write_text("package pkg; class B {}\n")
    (p / "README.md").write_bytes(b"# proj\r\n\x00\xff")
    (p / "classes").mkdir()
    for name, data in originals.items():
        (p / "classes" / f"{name}.class").write_bytes(data)
    return p


# -- the report ----------------------------------------------------------------------------------------------
def test_the_reported_command_refuses_and_keeps_every_file(proj, tmp_path):
    """``optimize proj/classes -o proj``, run as the user ran it (console script, relative paths)."""
    before = tree(proj)
    done = subprocess.run([*CLI, "optimize", "proj/classes", "-o", "proj", "--stage", "classfile"], cwd=tmp_path,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == ["peggy-jvm: error: proj: contains the input proj/classes: choose an "
                                        "output that does not"]
    assert tree(proj) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj"]


def test_a_foreign_directory_is_never_replaced(proj, classes, tmp_path):
    """The same project as the output of another input (no overlap): still refused, nothing touched."""
    before = tree(proj)
    refused(optimize(classes, "-o", proj), f"{proj}: exists, is not empty and is not a peggy-jvm output")
    assert tree(proj) == before
    no_temporaries(tmp_path)


def test_an_empty_directory_becomes_the_output(classes, tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    assert optimize(classes, "-o", out).exit_code == 0
    assert sorted(tree(out)) == [OUTPUT_MARKER, "IntArith.class", "Switches.class"]


# -- output and input overlap --------------------------------------------------------------------------------
def test_output_equal_to_a_class_input(classes, originals, monkeypatch):
    inp = classes / "IntArith.class"
    monkeypatch.chdir(classes)
    for spelling in (inp, "IntArith.class", "./IntArith.class", "../classes/IntArith.class", classes, ".", "./"):
        refused(optimize(inp, "-o", spelling), "is the input")
    refused(optimize("IntArith.class", "-o", "."), "IntArith.class: is the input IntArith.class")
    (classes.parent / "link.class").symlink_to(inp)
    refused(optimize(inp, "-o", classes.parent / "link.class"), "link.class: is the input")
    assert inp.read_bytes() == originals["IntArith"]


def test_output_equal_to_a_jar_input(classes, tmp_path, monkeypatch):
    jar = tmp_path / "app.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.write(classes / "IntArith.class", "IntArith.class")
    data = jar.read_bytes()
    monkeypatch.chdir(tmp_path)
    for spelling in (jar, "app.jar", "./in/../app.jar"):
        refused(optimize(jar, "-o", spelling), "is the input")
    (tmp_path / "link.jar").symlink_to(jar)
    refused(optimize("link.jar", "-o", "app.jar"), "app.jar: is the input link.jar")
    assert jar.read_bytes() == data
    no_temporaries(tmp_path)


def test_output_equal_to_inside_or_around_a_directory_input(classes, tmp_path):
    before = tree(classes.parent)
    for spelling in (classes, f"{classes}/", f"{classes}/../classes", f"{classes}/."):
        refused(optimize(classes, "-o", spelling), "is the input")
    refused(optimize(classes, "-o", classes / "opt"), "is inside the input directory")
    refused(optimize(classes, "-o", classes.parent), "contains the input")
    (tmp_path / "alias").symlink_to(classes)
    refused(optimize(tmp_path / "alias", "-o", classes), "is the input")
    assert tree(classes.parent) == before


def test_dot_and_dotdot(classes, tmp_path, monkeypatch):
    """Once a traceback (``ValueError ... empty name``); a directory output is never the current directory."""
    before = tree(classes)
    monkeypatch.chdir(classes)
    refused(optimize(".", "-o", "."), ".: is the input .")
    refused(optimize(".", "-o", ".."), "..: contains the input .")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    refused(optimize(classes, "-o", "."), ".: is or contains the current directory")
    refused(optimize(classes, "-o", ".."), "..: contains the input")
    assert tree(classes) == before and list(empty.iterdir()) == []
    # a class input writes one file into the directory: that is fine in the current directory
    done = optimize(classes / "IntArith.class", "-o", ".")
    assert done.exit_code == 0, done.output
    assert read_class((empty / "IntArith.class").read_bytes()).name == "IntArith"


# -- files and directories in the way ------------------------------------------------------------------------
def test_a_file_where_a_directory_is_needed_and_the_reverse(classes, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    (tmp_path / "dir.jar").mkdir()
    jar = tmp_path / "app.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.write(classes / "IntArith.class", "IntArith.class")
    refused(optimize(classes, "-o", notes), f"{notes}: is a file")
    refused(optimize(classes / "IntArith.class", "-o", notes), f"{notes} is a file, not a directory")
    refused(optimize(classes, "-o", notes / "deeper" / "out"), f"{notes} is a file, not a directory")
    refused(optimize(jar, "-o", tmp_path / "dir.jar"), "dir.jar: is a directory")
    refused(optimize(jar, "-o", "/dev/null"), "/dev/null: is not a regular file")
    (tmp_path / "loop").symlink_to("loop")
    refused(optimize(classes, "-o", tmp_path / "loop"), "loop: is a symlink loop")
    refused(optimize(classes, "-o", tmp_path / "o", "--json", tmp_path / "loop" / "r.json"), "symlink loop")
    assert notes.read_text() == "mine"


def test_an_existing_file_is_replaced_only_when_it_has_the_outputs_form(classes, originals, tmp_path):
    target = tmp_path / "out" / "IntArith.class"
    target.parent.mkdir()
    target.write_text("class IntArith {}  // not a class file")
    refused(optimize(classes / "IntArith.class", "-o", target), "exists and is not a class file")
    assert target.read_text() == "class IntArith {}  // not a class file"
    target.write_bytes(b"")
    assert optimize(classes / "IntArith.class", "-o", target).exit_code == 0
    first = target.read_bytes()
    assert read_class(first).name == "IntArith"
    target.write_bytes(originals["IntArith"])  # a class file: an earlier output, replaced again
    assert optimize(classes / "IntArith.class", "-o", target.parent).exit_code == 0
    assert target.read_bytes() == first
    jar, opt = tmp_path / "app.jar", tmp_path / "app-opt.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.write(classes / "IntArith.class", "IntArith.class")
    opt.write_text("not a jar")
    refused(optimize(jar), "app-opt.jar: exists and is not a jar")
    assert opt.read_text() == "not a jar"
    opt.unlink()
    assert optimize(jar).exit_code == 0 and optimize(jar).exit_code == 0  # the second replaces the first
    assert zipfile.ZipFile(opt).namelist() == ["IntArith.class"]
    no_temporaries(tmp_path)


# -- report paths, checked before any work -------------------------------------------------------------------
def test_unwritable_json_fails_before_the_output_is_written(classes, proj, tmp_path):
    out = tmp_path / "out"
    notes = proj / "README.md"
    one = classes / "IntArith.class"
    cases = [(classes, notes / "r.json", f"{notes} is a file, not a directory"),
             (classes, proj / "src", "src: is a directory"),
             (classes, proj / "src" / "A.java", "A.java: exists and is not a JSON report"),
             (classes, out / "r.json", "is inside the output directory"),
             (classes, classes / "r.json", "is inside the input directory"),
             (one, one, "IntArith.class: is the input"),
             (one, out / "IntArith.class", "is also the output")]
    before, inputs = tree(proj), tree(classes)
    for inp, path, words in cases:
        refused(optimize(inp, "-o", out, "--json", path), words)
        assert not out.exists()
        assert tree(proj) == before and tree(classes) == inputs
    no_temporaries(tmp_path)
    report = tmp_path / "r.json"
    report.write_text('{"stage": "classfile"}')  # an earlier report is replaced
    assert optimize(classes, "-o", out, "--json", report).exit_code == 0
    assert len(json.loads(report.read_text())["methods"]) > 2


def test_validate_checks_its_report_paths_first(classes, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    inp = classes / "IntArith.class"
    for option, path, words in (("--junit", notes, "exists and is not an XML report"),
                                ("--json", notes / "r.json", "is a file, not a directory"),
                                ("--json", inp, "is the input")):
        result = CliRunner().invoke(main, ["validate", str(inp), str(inp), option, str(path)])
        refused(result, words)
        assert result.stdout == ""  # no table: nothing was validated
    assert notes.read_text() == "mine"


# -- re-running onto an earlier output -----------------------------------------------------------------------
def test_rerun_replaces_an_earlier_output_and_drops_its_stale_files(classes, java_home, tmp_path):
    out = tmp_path / "out"
    assert optimize(classes, "-o", out).exit_code == 0
    marker = json.loads((out / OUTPUT_MARKER).read_text())
    assert sorted(marker["files"]) == ["IntArith.class", "Switches.class"] and marker["input"] == "classes"
    (classes / "Switches.class").unlink()
    (classes / "res").mkdir()
    (classes / "res" / "x.txt").write_text("resource")
    assert optimize(classes, "-o", out).exit_code == 0
    assert sorted(tree(out)) == [OUTPUT_MARKER, "IntArith.class", "res", "res/x.txt"]
    fresh = tmp_path / "fresh"
    assert optimize(classes, "-o", fresh).exit_code == 0
    assert tree(out) == tree(fresh)
    ran = [subprocess.run([str(java_home / "bin" / "java"), "-Xverify:all", "-cp", str(cp), "IntArith"],
                          capture_output=True, text=True, timeout=120) for cp in (classes, out)]
    assert ran[1].returncode == 0 and (ran[1].stdout, ran[1].stderr) == (ran[0].stdout, ran[0].stderr)
    # an earlier output as the input: its marker is bookkeeping, not content
    again = tmp_path / "again"
    assert optimize(out, "-o", again).exit_code == 0
    assert sorted(json.loads((again / OUTPUT_MARKER).read_text())["files"]) == ["IntArith.class", "res/x.txt"]
    no_temporaries(tmp_path)


def test_an_earlier_output_the_user_added_to_is_no_longer_ours(classes, tmp_path):
    out = tmp_path / "out"
    assert optimize(classes, "-o", out).exit_code == 0
    for extra, named in (("notes.txt", "notes.txt"), ("res/notes.txt", "res")):
        (out / extra).parent.mkdir(exist_ok=True)
        (out / extra).write_text("mine")
        before = tree(out)
        refused(optimize(classes, "-o", out), f"holds {named}, which peggy-jvm did not write")
        assert tree(out) == before
        (out / extra).unlink()
    refused(optimize(classes, "-o", out), "holds res,")  # an empty directory of the user's is theirs too
    (out / "res").rmdir()
    assert optimize(classes, "-o", out).exit_code == 0
    (out / OUTPUT_MARKER).write_text("{broken")
    refused(optimize(classes, "-o", out), "is not a peggy-jvm output")
    no_temporaries(tmp_path)


def test_a_symlink_to_an_earlier_output_stays_a_symlink(classes, tmp_path):
    out = tmp_path / "out"
    assert optimize(classes, "-o", out).exit_code == 0
    (tmp_path / "link").symlink_to(out)
    assert optimize(classes, "-o", tmp_path / "link").exit_code == 0
    assert (tmp_path / "link").is_symlink() and sorted(tree(out)) == [OUTPUT_MARKER, "IntArith.class",
                                                                      "Switches.class"]


# -- failures while writing ----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["dir", "class"])
def test_a_failing_final_rename_keeps_the_earlier_output(classes, tmp_path, monkeypatch, kind):
    inp = classes if kind == "dir" else classes / "IntArith.class"
    out = tmp_path / "out"
    target = out if kind == "dir" else out / "IntArith.class"
    assert optimize(inp, "-o", out).exit_code == 0
    before = tree(out)
    real_replace = os.replace

    def full_disk(src, dst, *args, **kwargs):
        if Path(dst) == target and Path(src).name.startswith((".out.new-", ".IntArith.class.")):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(src))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(archive.os, "replace", full_disk)
    refused(optimize(inp, "-o", out), f"{target}: no space left on the device")
    monkeypatch.undo()
    assert tree(out) == before
    no_temporaries(tmp_path)
    no_temporaries(out)


def test_show_dot_replaces_only_a_graphviz_file(classes, tmp_path):
    dot = tmp_path / "m.dot"
    dot.write_text("notes, not a graph")
    args = ["show", str(classes / "IntArith.class"), "--method", "add", "--dot", str(dot)]
    result = CliRunner().invoke(main, args)
    refused(result, "m.dot: exists and is not a Graphviz file")
    assert result.stdout == "" and dot.read_text() == "notes, not a graph"
    dot.unlink()
    for _ in range(2):  # the second run replaces the first run's graph
        assert CliRunner().invoke(main, args).exit_code == 0
        assert dot.read_text().startswith("digraph")
    no_temporaries(tmp_path)


def test_a_file_added_during_the_run_is_seen_before_the_rename(classes, tmp_path):
    """The check runs again just before the earlier output is replaced: a file the user puts there meanwhile
    (here: while the classes are optimized) is kept, and the run fails instead."""
    out = tmp_path / "out"
    assert optimize(classes, "-o", out).exit_code == 0

    def meanwhile(progress) -> None:
        (out / "late.txt").write_text("mine")

    with pytest.raises(archive.OutputError, match="holds late.txt"):
        optimize_input(classes, out, Stage.CLASSFILE, progress=meanwhile)
    assert (out / "late.txt").read_text() == "mine"
    assert sorted(tree(out)) == [OUTPUT_MARKER, "IntArith.class", "Switches.class", "late.txt"]
    no_temporaries(tmp_path)


def test_an_unwritable_parent_is_refused_before_the_work(classes, tmp_path, monkeypatch):
    """Root may write anywhere, so the refusal is driven through ``os.access`` (what the check consults)."""
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(archive.os, "access", lambda p, mode: Path(p) != locked and real_access(p, mode))
    refused(optimize(classes, "-o", locked / "deeper" / "out"), f"permission denied (cannot write in {locked})")
    refused(optimize(classes, "-o", tmp_path / "out", "--json", locked / "r.json"), "r.json: permission denied")
    assert list(locked.iterdir()) == [] and not (tmp_path / "out").exists()
