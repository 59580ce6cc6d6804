"""A plain (non-editable) install works on its own: the axioms and the JVM harness source are package data, so
the rules load from the installed package, wherever the source tree is."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_a_non_editable_install_carries_the_axioms_and_the_harness(tmp_path: Path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(target), str(ROOT)], check=True, capture_output=True, timeout=300)
    pkg = target / "peggy_jvm"
    assert sorted(p.name for p in (pkg / "axioms").glob("*.ax")) == \
        sorted(p.name for p in (ROOT / "peggy_jvm" / "axioms").glob("*.ax"))
    assert (pkg / "validate" / "Harness.java").is_file()
    probe = ("import peggy_jvm, peggy_jvm.rules as r; rs = r.default_rules(); "
             "print(peggy_jvm.__file__); print(r.default_axiom_dir()); print(len(rs.active()))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}).stdout.split("\n")
    assert Path(out[0]).is_relative_to(target) and Path(out[1]).is_relative_to(target), out
    assert int(out[2]) > 100  # the axiom files' rules, not only the built-in ones
