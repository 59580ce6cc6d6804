"""The runtime benchmark (scripts/bench_runtime.py, its kernels and harness in support/bench_harness.py) as a
differential test, and its harness's own checks.

- ``--kernels-only --quick`` on ``--stage full``'s output: every kernel of ``fixtures/src/bench`` is optimized,
  run once under ``-Xverify:all`` and a few times under ``-Xint`` and the JIT, with the original's and the
  optimized result compared on every call; the table and the JSON must name every kernel with a ratio per mode
  (a kernel left unchanged is the original's code: ``same bytes``, not timed).
- Re-measurement (``measure`` with a scripted harness): a kernel over its goal or with a noisy A/A runs again and
  reports the median of its runs, so a one-off outlier passes and a slowdown that reproduces still fails.
- Every public static method of BenchKernels has a row in ``KERNELS`` (so none is silently left out of the
  goals), and the harness can fill its parameters.
- The harness detects a difference: two trees where one kernel computes something else must fail naming it, and
  one kernel that throws must fail naming the side.
"""
from __future__ import annotations

import importlib.util
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
        # a method left unchanged is the original's code: not timed (ratio 1), every other one timed once
        assert r["same_bytes"] == (r["status"] == "unchanged"), r
        if r["same_bytes"]:
            assert r["ratio"] == {"xint": 1.0, "jit": 1.0} and r["control"] == {} and r["runs"] == {}, r
        else:
            assert set(r["control"]) == {"xint", "jit"} and all(v > 0 for v in r["control"].values()), r
            assert {m: len(runs) for m, runs in r["runs"].items()} == {"xint": 1, "jit": 1}, r  # --quick
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
    for r in data["kernels"]:
        row = next(ln for ln in lines if ln.startswith(r["name"] + " "))
        if r["same_bytes"]:
            assert row.split()[-4:] == ["same", "bytes"] * 2, row
        else:
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


def _bench_runtime():
    """scripts/bench_runtime.py as a module (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_runtime_script", BENCH_RUNTIME)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_identical_code_is_found_and_a_changed_method_is_not(tmp_path: Path, java_home: Path) -> None:
    """``same_code``: ``other`` differs by one constant, so it is timed; ``same`` and ``thrower`` are the original's
    code over the same constants (not timed, ratio 1); a class whose pool is not the original's as a prefix
    makes nothing the same (its indexes may name other constants)."""
    br = _bench_runtime()
    opt = KERNEL_SOURCE.replace("double s = 0; for (int i = 0;", "double s = 0; for (int i = 1;")
    assert opt != KERNEL_SOURCE
    trees = _trees(tmp_path, java_home, opt)
    names = {"same", "other", "thrower"}
    assert br.same_code(trees["orig"] / "K.class", trees["opt"] / "K.class", names) == {"same", "thrower"}
    assert br.same_code(trees["orig"] / "K.class", trees["orig"] / "K.class", names) == names
    moved = _trees(tmp_path / "moved", java_home, "// a constant first\n" + KERNEL_SOURCE.replace(
        "public final class K {", "public final class K {\n    static final String X = \"first\";"))
    assert br.same_code(trees["orig"] / "K.class", moved["opt"] / "K.class", names) == set()


def _fields(ratio: float, control: float, samples: int = 41) -> dict[str, str]:
    return {"ratio": f"{ratio:.4f}", "control": f"{control:.4f}", "samples": str(samples), "result": "0"}


def test_suspects_are_measured_again_and_their_median_reported() -> None:
    """``measure``: in each mode a kernel over its goal, or with an A/A as far from 1, is run again with more
    samples and reported as the median of its three runs: a noisy outlier (``noisy``: 1.195 once, A/A 1.088) no
    longer fails, a slowdown that reproduces (``slow``: over 1.02 in two runs of three) still does, and a kernel
    within its goal (``fine``) runs once."""
    br = _bench_runtime()
    kernels = tuple(br.Kernel(n, 10, "I") for n in ("fine", "noisy", "slow"))
    xint = br.Mode("xint", ("-Xint",), 2, 41, 1000)
    script = {  # kernel -> the (ratio, A/A) of its successive runs
        "fine": [(0.95, 1.00)], "noisy": [(1.195, 1.088), (1.004, 1.002), (0.990, 0.996)],
        "slow": [(1.06, 1.00), (1.00, 1.01), (1.05, 0.99)],
    }
    calls: list[tuple[int, tuple[str, ...]]] = []

    def run(mode, ks):
        calls.append((mode.samples, tuple(k.name for k in ks)))
        return {k.name: _fields(*script[k.name][sum(k.name in c for _, c in calls) - 1], samples=mode.samples)
                for k in ks}

    rows = {k.name: br.KernelRow(k.name, k.n, k.opportunities) for k in kernels}
    br.measure(rows, kernels, (xint,), 3, run)
    assert calls == [(41, ("fine", "noisy", "slow")), (82, ("noisy", "slow")), (82, ("noisy", "slow"))]
    assert rows["fine"].ratio["xint"] == 0.95 and len(rows["fine"].runs["xint"]) == 1
    assert rows["noisy"].ratio["xint"] == 1.004 and rows["noisy"].control["xint"] == 1.002
    assert rows["slow"].ratio["xint"] == 1.05 and rows["slow"].samples["xint"] == 41 + 82 + 82
    goals = dict((g, ok) for g, ok, _ in br.summary(list(rows.values()), (xint,))["goals"])
    assert goals[f"-Xint: no kernel slower than {br.XINT_WORST}x"] is False  # slow's reproduces
    rows.pop("slow")
    goals = dict((g, ok) for g, ok, _ in br.summary(list(rows.values()), (xint,))["goals"])
    assert goals[f"-Xint: no kernel slower than {br.XINT_WORST}x"] is True
    calls.clear()
    once = {k.name: br.KernelRow(k.name, k.n, k.opportunities) for k in kernels}
    br.measure(once, kernels, (xint,), 1, run)  # --remeasure 1 (and --quick): the first run stands
    assert len(calls) == 1 and once["noisy"].ratio["xint"] == 1.195


def test_a_runs_ratio_is_against_both_copies_of_the_original() -> None:
    """``run_ratio``: B's median over the geometric mean of A's and C's (the original loaded twice); without the
    control, the harness's B/A."""
    br = _bench_runtime()
    both = {"orig_ns": "1000", "opt_ns": "1050", "ctl_ns": "1210", "ratio": "1.0500", "control": "1.2100"}
    assert br.run_ratio(both) == pytest.approx(1050 / 1100)
    assert br.run_ratio({"orig_ns": "1000", "opt_ns": "1050", "ratio": "1.0500"}) == 1.05


def test_a_run_times_both_load_orders_and_the_order_effect_cancels(monkeypatch) -> None:
    """``run_both_orders``: two harness JVMs with half the mode's samples, the original loaded first (A, C) in one
    and the optimized class in the other; ``counterbalanced``: a side that runs 4% slower whenever it is B (the
    one loaded between two copies of the other) reads 0.95 * 1.04 forward and 1.04 / 0.95 backward, and the
    run's ratio is the true 0.95 again, its A/A the geometric mean of both controls."""
    br = _bench_runtime()
    calls: list[tuple[str, str, int, int]] = []

    def harness(h, a, b, mode, ks):
        calls.append((a.name, b.name, mode.samples, mode.min_ms))
        ratio, control = (0.95 * 1.04, 1.01) if a.name == "orig" else (1.04 / 0.95, 0.98)
        return {k.name: {"orig_ns": "1000", "opt_ns": f"{1000 * ratio}", "ctl_ns": "1000", "ratio": f"{ratio}",
                         "control": f"{control}", "samples": str(mode.samples), "result": "7"} for k in ks}

    monkeypatch.setattr(br, "run_harness", harness)
    kernel = br.Kernel("k", 10, "I")
    got = br.run_both_orders(Path("h"), Path("orig"), Path("opt"), br.Mode("xint", ("-Xint",), 2, 41, 1000),
                             (kernel,))["k"]
    assert calls == [("orig", "opt", 21, 500), ("opt", "orig", 21, 500)]
    assert float(got["ratio"]) == pytest.approx(0.95, abs=1e-6)
    assert float(got["control"]) == pytest.approx((1.01 * 0.98) ** 0.5, abs=1e-6)
    assert got["samples"] == "42" and got["result"] == "7"
    row = br.KernelRow("k", 10, "I")
    br._record(row, br.Mode("xint", ("-Xint",), 2, 41, 1000), got)
    assert row.ratio["xint"] == pytest.approx(0.95, abs=1e-6)
    assert br.order_effect(row, "xint") == pytest.approx(1.04, abs=1e-5)


def test_a_ratio_over_the_goal_within_its_A_A_is_noise_and_beyond_it_fails() -> None:
    """The "no kernel slower than" goal: a kernel at 1.03 whose identical-code control was 1.04 off is named as
    noise and the goal is met; at 1.03 with a control of 1.01 (or none) it fails; the worst reported is the worst
    kernel beyond noise."""
    br = _bench_runtime()
    xint = br.Mode("xint", ("-Xint",), 2, 41, 1000)
    goal = f"-Xint: no kernel slower than {br.XINT_WORST}x"

    def row(name: str, ratio: float, control: float | None) -> object:
        r = br.KernelRow(name, 10, "I")
        r.ratio["xint"] = ratio
        if control is not None:
            r.control["xint"] = control
        return r

    def verdict(*rows) -> tuple[bool, str]:
        return next((ok, d) for g, ok, d in br.summary(list(rows), (xint,))["goals"] if g == goal)

    ok, detail = verdict(row("fine", 0.95, 1.0), row("crc", 1.03, 1.04))
    assert ok and "noise: crc 1.030, A/A 1.040" in detail and detail.startswith("worst fine 0.950"), detail
    ok, detail = verdict(row("fine", 0.95, 1.0), row("crc", 1.03, 0.96))  # as far the other way: noise too
    assert ok, detail
    ok, detail = verdict(row("fine", 0.95, 1.0), row("crc", 1.03, 1.01))
    assert not ok and detail.startswith("worst crc 1.030, A/A 1.010"), detail
    ok, detail = verdict(row("crc", 1.03, None))
    assert not ok, detail


def test_the_prediction_shown_is_the_emitted_cost_the_rewrite_was_kept_by(capsys) -> None:
    """``print_kernels``: a rewritten kernel's ``emit pred`` is its emitted code's cost after / before (what the
    full stage decided with, ``pipeline._check_emitted``), ``peg pred`` the PEG model's; an unchanged kernel shows
    neither (its figures are a refused candidate's). The geometric means stay under their columns."""
    br = _bench_runtime()
    xint = br.Mode("xint", ("-Xint",), 2, 41, 1000)
    kept = br.KernelRow("kept", 10, "I", "rewritten", 100, 110, cost_before=1000.0, cost_after=700.0,
                        emitted_before=400.0, emitted_after=332.0)
    refused = br.KernelRow("refused", 10, "I", "unchanged", 100, 100, cost_before=1000.0, cost_after=900.0,
                           emitted_before=400.0, emitted_after=450.0)
    for r, x in ((kept, 0.81), (refused, 1.0)):
        r.ratio["xint"], r.control["xint"] = x, 1.0
    rows = [kept, refused]
    br.print_kernels(rows, (xint,), br.summary(rows, (xint,)))
    lines = capsys.readouterr().out.splitlines()
    head = lines[0].split()
    assert head[6:10] == ["emit", "pred", "peg", "pred"], lines[0]
    assert lines[2].split()[6:8] == ["0.83", "0.70"], lines[2]  # 332 / 400 and 700 / 1000
    assert lines[3].split()[6:8] == ["-", "-"], lines[3]
    geo = next(ln for ln in lines if ln.startswith("geomean (all)"))
    end = lines[0].index("xint ") + 3  # the xint column's last character
    assert geo[end - 4:end + 1] == "0.900" and lines[2][end - 4:end + 1] == "0.810", (geo, lines[0])


def test_a_jar_class_that_does_not_verify_is_counted(tmp_path: Path, java_home: Path) -> None:
    """``verify_jar``: every class of the jar loaded and linked under ``-Xverify:all``; one byte changed
    (``iconst_1; ireturn`` as ``fconst_1; ireturn``: a float returned by an int method) makes HotSpot refuse it,
    and the jar's count of refused classes says so."""
    br = _bench_runtime()
    trees = compile_versions(java_home, tmp_path, "V.java",
                             {"good": "public final class V { public static int one() { return 1; } }"})
    good = (trees["good"] / "V.class").read_bytes()
    assert good.count(bytes([0x04, 0xAC])) == 1
    jars = {}
    for name, data in (("good", good), ("bad", good.replace(bytes([0x04, 0xAC]), bytes([0x0C, 0xAC])))):
        jars[name] = tmp_path / f"{name}.jar"
        with zipfile.ZipFile(jars[name], "w") as z:
            z.writestr("V.class", data)
    assert br.verify_jar(jars["good"], []) == 0
    assert br.verify_jar(jars["bad"], []) == 1


def test_jar_goals_judge_what_the_run_was_for() -> None:
    """``jar_goals``: the rewritten methods' size and verification on every jar; the ProGuard comparison only for a
    ``--goal size`` run (a speed run is not meant to shrink the jar); the per-method time p50 / p95 only on
    commons-lang3, both bounds inclusive."""
    br = _bench_runtime()
    speed = br.JarRow("commons-lang3", rewritten_bytes_before=100, rewritten_bytes_after=100, code_orig=1000,
                      code_opt=1010, code_proguard=990, time_p50=0.1, time_p95=2.0, verify_errors=0)
    size = br.JarRow("jsoup", goal="size", rewritten_bytes_before=100, rewritten_bytes_after=101, code_orig=1000,
                     code_opt=989, code_proguard=990, time_p50=5.0, time_p95=50.0, verify_errors=2)
    goals = {g: ok for g, ok, _ in br.jar_goals([speed, size])}
    assert goals == {
        "commons-lang3: rewritten methods no larger than their originals": True,
        "commons-lang3: every class verifies (-Xverify:all)": True,
        "commons-lang3: per-method CPU time p50 <= 0.1 s, p95 <= 2.0 s": True,
        "jsoup: rewritten methods no larger than their originals": False,
        "jsoup: every class verifies (-Xverify:all)": False,
        "jsoup: code smaller than the original and ProGuard's (--goal size)": True,
    }
    slow = br.JarRow("commons-lang3", time_p50=0.05, time_p95=2.01)
    assert not dict((g, ok) for g, ok, _ in br.jar_goals([slow]))[
        "commons-lang3: per-method CPU time p50 <= 0.1 s, p95 <= 2.0 s"]


def test_per_method_times_are_the_reports_cpu_and_cache_hits_count_apart() -> None:
    """``method_cpu_seconds``: the report's ``cpu_ms`` of each method with code (not its wall clock), a method
    from the result cache counted apart (its CPU was an earlier run's)."""
    br = _bench_runtime()
    report = {"methods": [
        {"bytes_before": 10, "time_ms": {"full": 900.0}, "cpu_ms": 100.0},
        {"bytes_before": 10, "time_ms": {"full": 50.0}, "cpu_ms": 40.0},
        {"bytes_before": 10, "time_ms": {"cache": 0.1}, "cpu_ms": None},
        {"bytes_before": 0, "time_ms": {}, "cpu_ms": None},  # no code
    ]}
    assert br.method_cpu_seconds(report) == ([0.1, 0.04], 1)
