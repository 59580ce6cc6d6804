"""A plain (non-editable) install works on its own: the axioms (top-level ``axioms/`` in the source tree) and the
JVM harness source are package data, so the rules load from the installed package, wherever the source tree is;
an editable install reads the source tree's ``axioms/``."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from peggy_jvm.rules import default_axiom_dir


def test_a_non_editable_install_carries_the_axioms_and_the_harness(tmp_path: Path):
    # built from a copy of what the build reads: setuptools reuses a source tree's build/lib, whose stale files
    # (a package since dropped from the list, a deleted axiom file) would end up in the wheel and hide a fault
    src = tmp_path / "src"
    for name in ("peggy_jvm", "axioms"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(target), str(src)], check=True, capture_output=True, timeout=300)
    pkg = target / "peggy_jvm"
    assert sorted(p.name for p in (pkg / "axioms").glob("*.ax")) == \
        sorted(p.name for p in (ROOT / "axioms").glob("*.ax"))
    assert (pkg / "validate" / "Harness.java").is_file()
    # pyproject.toml lists the packages by hand (the axioms' package-dir mapping needs it): a subpackage left out
    # of that list is missing here
    source = {p.relative_to(ROOT).as_posix() for p in (ROOT / "peggy_jvm").rglob("*.py")}
    installed = {p.relative_to(target).as_posix() for p in pkg.rglob("*.py")}
    assert not source - installed, f"not installed (add the package to pyproject.toml): {sorted(source - installed)}"
    probe = ("import peggy_jvm, peggy_jvm.rules as r; rs = r.default_rules(); "
             "print(peggy_jvm.__file__); print(r.default_axiom_dir()); print(len(rs.active()))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}).stdout.split("\n")
    assert Path(out[0]).is_relative_to(target) and Path(out[1]).is_relative_to(target), out
    assert int(out[2]) > 100  # the axiom files' rules, not only the built-in ones


def test_the_source_tree_reads_the_top_level_axioms(monkeypatch):
    monkeypatch.delenv("PEGGY_AXIOMS", raising=False)
    assert default_axiom_dir() == ROOT / "axioms"
