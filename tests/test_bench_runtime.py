"""The runtime benchmark (scripts/bench_runtime.py, its kernels and harness in support/bench_harness.py) as a
differential test, and its harness's own checks.

- ``--kernels-only --quick`` on ``--stage full``'s output: every kernel of ``fixtures/src/bench`` is optimized,
  run once under ``-Xverify:all`` and a few times under ``-Xint`` and the JIT, with the original's and the
  optimized result compared on every call; the table and the JSON must name every kernel with a ratio per mode.
- Every public static method of BenchKernels has a row in ``KERNELS`` (so none is silently left out of the
  goals), and the harness can fill its parameters.
- The harness detects a difference: two trees where one kernel computes something else must fail naming it, and
  one kernel that throws must fail naming the side.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import compile_versions
from support import bench_harness, fixture_build, workloads

from peggy_jvm.classfile.reader import read_class

ROOT = Path(__file__).resolve().parent.parent
BENCH_RUNTIME = ROOT / "scripts" / "bench_runtime.py"


@pytest.fixture(scope="module")
def harness() -> Path:
    return bench_harness.compile_harness()


def test_every_kernel_has_a_row() -> None:
    cf = read_class((fixture_build.build_bench() / "BenchKernels.class").read_bytes())
    public_static = {m.name for m in cf.methods if m.access & 0x0009 == 0x0009}
    assert public_static == {k.name for k in bench_harness.KERNELS}
    assert all(set(k.opportunities) <= set("ISR") for k in bench_harness.KERNELS)
    assert {c for k in bench_harness.KERNELS for c in k.opportunities} == set("ISR")  # every goal has kernels


@pytest.mark.slow  # the slow tier: every kernel optimized and timed on the JVM, -Xint and JIT (83 s, loaded)
def test_quick_run_is_a_differential_test(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    printed = subprocess.run([sys.executable, str(BENCH_RUNTIME), "--kernels-only", "--quick", "--json", str(out),
                              "--keep", str(tmp_path / "work"), "--stage", "full"],
                             capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=1800)
    assert printed.returncode == 0, printed.stdout[-3000:] + printed.stderr[-3000:]
    data = json.loads(out.read_text())
    names = [k.name for k in bench_harness.KERNELS]
    assert [r["name"] for r in data["kernels"]] == names
    for r in data["kernels"]:
        assert r["status"] in ("rewritten", "unchanged"), r
        assert set(r["ratio"]) == {"xint", "jit"} and all(v > 0 for v in r["ratio"].values()), r
        assert set(r["control"]) == {"xint", "jit"} and all(v > 0 for v in r["control"].values()), r
        assert re.fullmatch(r"[0-9a-f]+", r["result"]), r
    assert any(r["status"] == "rewritten" for r in data["kernels"])  # the optimizer did something to compare
    # the jar part's size measure agrees with optimize's report on the same classes
    report = json.loads((tmp_path / "work" / "bench-report.json").read_text())
    jar = tmp_path / "kernels.jar"
    with zipfile.ZipFile(jar, "w") as z:
        for cls in sorted(fixture_build.build_bench().glob("*.class")):
            z.write(cls, cls.name)
    assert bench_harness.code_bytes(jar) == sum(m["bytes_before"] for m in report["methods"]) > 0
    # the printed table: one line per kernel with both ratios, the geometric means and the goals
    lines = printed.stdout.splitlines()
    for name in names:
        row = next(ln for ln in lines if ln.startswith(name + " "))
        assert len(re.findall(r"\d+\.\d{3}\b", row)) == 4, row  # B/A and A/A under -Xint and the JIT
    assert sum(ln.startswith("geomean") for ln in lines) == 2
    assert sum(ln.startswith("goal ") for ln in lines) == len(data["goals"]) == 4


KERNEL_SOURCE = """
public final class K {
    public static long same(int[] a, int n) { long s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
    public static double other(double[] a, int n) { double s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
    public static int thrower(String s) { return s.length(); }
}
"""


def _trees(tmp_path: Path, java_home: Path, opt_source: str) -> dict[str, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    return compile_versions(java_home, tmp_path, "K.java", {"orig": KERNEL_SOURCE, "opt": opt_source})


def _run(harness: Path, trees: dict[str, Path], *kernels: str) -> subprocess.CompletedProcess:
    java = workloads.java_home() / "bin" / "java"
    return subprocess.run([str(java), "-cp", str(harness), "BenchRunner", str(trees["orig"]), str(trees["opt"]),
                           "K", "--warmup", "1", "--samples", "2", *kernels],
                          capture_output=True, text=True, timeout=120)


def test_harness_names_the_kernel_that_differs(tmp_path: Path, java_home: Path, harness: Path) -> None:
    # `other` adds one element too few on the optimized side: a real difference, found on the first call
    opt = KERNEL_SOURCE.replace("for (int i = 0; i < n; i++) s += a[i]; return s; }\n    public static int",
                                "for (int i = 1; i < n; i++) s += a[i]; return s; }\n    public static int")
    assert opt != KERNEL_SOURCE
    proc = _run(harness, _trees(tmp_path, java_home, opt), "same:50", "other:50")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "KERNEL name=same " in proc.stdout  # the equal kernel passed first
    assert re.search(r"^MISMATCH name=other call=0 ", proc.stdout, re.M), proc.stdout
    with pytest.raises(bench_harness.Difference, match="name=other"):
        bench_harness.run_harness(harness, *_trees(tmp_path / "again", java_home, opt).values(),
                                  bench_harness.QUICK_MODES[1],
                                  (bench_harness.Kernel("same", 50), bench_harness.Kernel("other", 50)), class_name="K")


def test_harness_reports_a_throwing_side_and_bad_usage(tmp_path: Path, java_home: Path, harness: Path) -> None:
    opt = KERNEL_SOURCE.replace("return s.length();", "return s.substring(5).length();")
    trees = _trees(tmp_path, java_home, opt)
    proc = _run(harness, trees, "thrower:3")
    assert proc.returncode == 1 and "ERROR name=thrower side=opt " in proc.stdout, proc.stdout + proc.stderr
    proc = _run(harness, trees, "missing:3")
    assert proc.returncode == 2 and "no public static method missing" in proc.stderr, proc.stderr
    same = _run(harness, _trees(tmp_path / "same", java_home, KERNEL_SOURCE), "same:50", "other:50", "thrower:9")
    assert same.returncode == 0, same.stdout + same.stderr
    assert len(bench_harness.parse_harness(same.stdout)) == 3
