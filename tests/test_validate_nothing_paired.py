"""``validate`` on inputs where no method pairs (issue 17 item 5): a wrong ``--map``, unrelated classes, or a
class whose package differs from where it was looked for is bad input (exit 2, one line naming the unpaired
classes), never a vacuous "0 pairs" success. The same inputs with the right ``--map`` pair and exit 0.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import compile_versions

_SCRIPT = Path(sys.executable).parent / "peggy-jvm"
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "peggy_jvm.cli"]

OLD = "public class Old { static int twice(int x) { return x + x; } }"
NEW = "public class New { static int twice(int x) { return x * 2; } }"
OTHER = "public class Other { static int half(int x) { return x / 2; } }"
PKG = "package p; public class Old { static int twice(int x) { return x + x; } }"


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    base = tmp_path_factory.mktemp("nothing-paired")
    out = compile_versions(java_home, _mk(base / "a"), "Old.java", {"old": OLD, "pkg": PKG})
    out.update(compile_versions(java_home, _mk(base / "b"), "New.java", {"new": NEW}))
    out.update(compile_versions(java_home, _mk(base / "c"), "Other.java", {"other": OTHER}))
    return out


def _mk(d: Path) -> Path:
    d.mkdir()
    return d


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "validate", *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("case", ["no map", "wrong map", "unrelated", "package"])
def test_nothing_paired_is_exit_2_naming_the_classes(trees, case):
    orig, opt, extra = {"no map": ("old", "new", []), "wrong map": ("old", "new", ["--map", "Old=Neu"]),
                        "unrelated": ("old", "other", []), "package": ("pkg", "new", ["--map", "Old=New"])}[case]
    proc = run(trees[orig], trees[opt], *extra)
    assert proc.returncode == 2, proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"peggy-jvm: error: {trees[opt]}: "), proc.stderr
    assert "0 pairs" in lines[0] and "Traceback" not in proc.stderr
    old_name = "p/Old" if case == "package" else "Old"
    assert f"ORIG {old_name}" in lines[0], lines[0]
    assert f"OPT {'Other' if case == 'unrelated' else 'New'}" in lines[0], lines[0]


def test_the_right_map_pairs_and_proves(trees):
    proc = run(trees["old"], trees["new"], "--map", "Old=New")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 pairs: 2 equivalent" in proc.stdout
