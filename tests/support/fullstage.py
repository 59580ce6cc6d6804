"""One Java source through the full stage with every rewrite kept, for tests of the rewrites themselves.

Inputs: a JDK, a work directory, a pytest MonkeyPatch, the class name and its source. Output: the original class
directory, the optimized one and the report rows by method name. The emitted-cost rule is switched off
(``conftest.keep_every_rewrite``: the rewrites' behaviour is tested, not whether they pay), and with
``self_check=False`` the self-check too (what extraction's own checks let through).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import keep_every_rewrite
import peggy_jvm.pipeline as pipeline
from peggy_jvm.pipeline import Stage, optimize_input


def optimize_source(java_home: Path, work: Path, mp: pytest.MonkeyPatch, name: str, source: str,
                    self_check: bool = True) -> tuple[Path, Path, dict]:
    src = work / "src"
    src.mkdir(parents=True)
    (src / f"{name}.java").write_text(source)
    orig = work / "orig"
    subprocess.run([str(java_home / "bin" / "javac"), "-d", str(orig), str(src / f"{name}.java")], check=True)
    out = work / "out"
    keep_every_rewrite(mp)
    if not self_check:
        mp.setattr(pipeline, "_self_check", lambda *args, **kwargs: None)
    _, report = optimize_input(orig / f"{name}.class", out / f"{name}.class", Stage.FULL, jobs=1)
    return orig, out, {m.name: m for m in report.methods}
