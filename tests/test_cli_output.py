"""What ``peggy-jvm optimize`` prints while it runs when nobody watches a terminal (issue 18, item 6): a CI log
gets plain progress lines at the pace of ``PEGGY_JVM_PROGRESS_INTERVAL`` (docs/cli.md), never rich's control
sequences. The CLI runs as a subprocess with stdout and stderr as pipes, as in CI.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import javac_command
from support.javac_cache import run_javac

_SCRIPT = Path(sys.executable).parent / "peggy-jvm"
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "peggy_jvm.cli"]
LINE = re.compile(r"peggy-jvm: optimize: (\d+)/(\d+) classes, (\d+) methods, (\d+) rewritten, "
                  r"(?:\d+h)?(?:\d+m)?\d+s elapsed(?:, about (?:\d+h)?(?:\d+m)?\d+s left)?")


def run(args: list, interval: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PEGGY_JVM_PROGRESS_INTERVAL"}
    if interval is not None:
        env["PEGGY_JVM_PROGRESS_INTERVAL"] = interval
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env=env, timeout=600)


@pytest.mark.parametrize("jobs", [1, 2])
def test_plain_progress_lines_without_a_terminal(fixture_classes, tmp_path, jobs):
    src = fixture_classes["release17"]
    done = run(["optimize", src, "-o", tmp_path / "out", "--stage", "ir", "--jobs", jobs], "0.05")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr  # no colour, no cursor movement, no bar
    lines = done.stderr.splitlines()
    assert lines, "no progress line"
    matches = [LINE.fullmatch(ln) for ln in lines]
    assert all(matches), lines
    total = len(list(src.rglob("*.class")))
    counts = [tuple(int(g) for g in m.groups()) for m in matches]
    assert all(c[1] == total for c in counts)
    for earlier, later in zip(counts, counts[1:]):  # classes, methods and rewritten only grow
        assert later[0] >= earlier[0] and later[2] >= earlier[2] and later[3] >= earlier[3]
    assert all(c[3] <= c[2] for c in counts)
    summary = done.stdout.splitlines()[0]
    assert f": {total} classes, " in summary and counts[-1][2] <= int(summary.split(" methods")[0].split()[-1])


def test_no_progress_line_before_the_interval(fixture_classes, tmp_path):
    """The first line comes after one interval (30 s by default): a short run's log has its summary only;
    ``0`` turns the lines off."""
    src = fixture_classes["release17"] / "IntArith.class"
    for interval in (None, "0"):
        done = run(["optimize", src, "-o", tmp_path / str(interval), "--stage", "ir"], interval)
        assert done.returncode == 0 and done.stderr == "", done.stderr


def test_a_bad_interval_is_one_line_exit_2(fixture_classes, tmp_path):
    done = run(["optimize", fixture_classes["release17"] / "IntArith.class", "-o", tmp_path / "o"], "soon")
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["peggy-jvm: error: PEGGY_JVM_PROGRESS_INTERVAL: not a number of seconds "
                                        "(0 or more): 'soon'"]
    assert not (tmp_path / "o").exists()


VALIDATE_LINE = re.compile(r"peggy-jvm: validate: (\d+)/(\d+) pairs, (\d+) proved, (?:\d+h)?(?:\d+m)?\d+s elapsed, "
                           r"about (?:\d+h)?(?:\d+m)?\d+s left")


def test_validate_progress_and_table_without_a_terminal(java_home, tmp_path):
    """The mutants of tests/java/validate: plain progress lines on stderr, and on stdout the table of the pairs
    not proved (all but the constructor) and the summary, without control sequences."""
    sources = Path(__file__).resolve().parent / "java" / "validate"
    trees = {}
    for name in ("orig", "mutant"):
        trees[name] = tmp_path / name
        run_javac([*javac_command(java_home), "-d", str(trees[name]), str(sources / name / "V.java")],
                  check=True, capture_output=True)
    done = run(["validate", trees["orig"], trees["mutant"], "--method-timeout", "1"], "0.05")
    assert done.returncode == 1, done.stderr
    assert "\x1b" not in done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert lines and all(VALIDATE_LINE.fullmatch(ln) for ln in lines), lines
    pairs = {int(VALIDATE_LINE.fullmatch(ln).group(2)) for ln in lines}
    assert pairs == {16}
    assert "<init>" not in done.stdout  # the one equivalent pair is left out of the table
    assert done.stdout.splitlines()[-1] == "(1 equivalent pair not listed; --all lists every pair)"
