"""The runtime benchmark's kernels and its JVM harness: what ``scripts/bench_runtime.py`` times and
``tests/test_bench_runtime.py`` checks.

What it owns
    * :data:`KERNELS`: the kernels of ``fixtures/src/bench/BenchKernels.java`` (written for the benchmark), the
      size N each runs at, and which have a loop invariant (``I``), a strength-reducible product (``S``) or a
      redundant computation (``R``): the "opportunity" subset the -Xint goal's geometric mean is taken over.
    * :class:`Mode` and the modes: one JVM run of ``tests/java/bench/BenchRunner.java`` (its flags, warm-up calls
      and samples): the ``-Xverify:all`` check (:data:`CHECK`), then ``-Xint`` and the default JIT, measured
      (:data:`FULL_MODES`) or a few samples only (:data:`QUICK_MODES`, a differential smoke run).
    * :func:`compile_harness` / :func:`run_harness` / :func:`parse_harness`: the harness compiled once into the
      workload cache and run on an original and an optimized class tree; it loads both through two class loaders
      in one JVM (and the original again through a third: the A/A control), calls them in rotation, measures the
      calling thread's CPU time, discards warm-up calls, reports the median per side, and compares the results of
      every call. A result that differs or a class that fails verification raises :class:`Difference`; a tool
      or usage failure raises :class:`BenchError`.
    * :func:`code_bytes`: the bytecode of every method of a jar (code arrays only), the size measure.
"""
from __future__ import annotations

import re
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

from peggy_jvm.classfile.reader import read_class

from . import workloads

ROOT = Path(__file__).resolve().parent.parent.parent
HARNESS = ROOT / "tests" / "java" / "bench" / "BenchRunner.java"
KERNEL_CLASS = "BenchKernels"


@dataclass(frozen=True)
class Kernel:
    name: str
    n: int  # the size: about 5 ms per call under -Xint on an idle machine
    opportunities: str = ""  # I: loop invariant, S: strength-reducible product, R: redundant computation


# By the source text: an invariant is an expression a loop recomputes with the same value (pure arithmetic, or a
# load from memory the loop does not write), a strength-reducible product one of an induction variable and an
# invariant, a redundant computation one computed twice on every path.
KERNELS: tuple[Kernel, ...] = (
    Kernel("matmul", 80, "I"),  # a[i] in the k loop
    Kernel("atax", 400, "I"),  # a[i] in the first j loop
    Kernel("jacobi1d", 10000, "I"),  # n - 1
    Kernel("jacobi2d", 120, "I"),  # n - 1, a[i], a[i - 1], a[i + 1] in the j loop
    Kernel("trisolv", 800, "I"),  # l[i] in the j loop
    Kernel("floydWarshall", 60),
    Kernel("lcs", 120),
    Kernel("editDistance", 100),
    Kernel("bellmanFord", 8000, "I"),  # vertices - 1
    Kernel("insertionSort", 1000),
    Kernel("shellSort", 10000, "R"),  # j - gap twice
    Kernel("stringBuild", 5000),
    Kernel("fnv1a", 100000),
    Kernel("crc32", 40000),
    Kernel("invariantSum", 30000, "I"),  # n - 1, a.length * 2
    Kernel("strideSum", 50000, "S"),  # i * stride
    Kernel("redundantProduct", 25000, "R"),  # x[i] * y[i] twice
)


@dataclass(frozen=True)
class Mode:
    """One JVM run of the harness: its flags and how many calls it records."""
    name: str
    jvm_flags: tuple[str, ...]
    warmup: int
    samples: int
    min_ms: int
    control: bool = True  # time the original a second time (A/A), the noise yardstick


CHECK = Mode("verify", ("-Xverify:all",), 0, 1, 0, control=False)
FULL_MODES = (Mode("xint", ("-Xint",), 2, 41, 1000), Mode("jit", (), 50, 51, 500))
QUICK_MODES = (Mode("xint", ("-Xint",), 1, 3, 0), Mode("jit", (), 5, 5, 0))


class BenchError(Exception):
    """A tool failed (javac, optimize, ProGuard, a harness usage error): exit 2."""


class Difference(Exception):
    """The original and the optimized code computed different things, or a class failed verification: exit 1."""


_FIELD = re.compile(r"(\w+)=(\S+)")


def parse_harness(stdout: str) -> dict[str, dict[str, str]]:
    """The harness's KERNEL lines: kernel name -> its fields (strings)."""
    rows = {}
    for line in stdout.splitlines():
        if line.startswith("KERNEL "):
            fields = dict(_FIELD.findall(line))
            rows[fields["name"]] = fields
    return rows


def compile_harness() -> Path:
    try:
        return workloads.compile_workload(HARNESS, [], workloads.default_cache().parent / "bench-harness")
    except workloads.WorkloadError as e:
        raise BenchError(str(e)) from None


def run_harness(harness: Path, orig: Path, opt: Path, mode: Mode, kernels: tuple[Kernel, ...],
                class_name: str = KERNEL_CLASS, timeout: float = 1800) -> dict[str, dict[str, str]]:
    """One JVM running every kernel in ``mode``; raises Difference on a result that differs (or a verify error),
    BenchError on a usage error."""
    java = workloads.java_home() / "bin" / "java"
    cmd = [str(java), *mode.jvm_flags, "-cp", str(harness), "BenchRunner", str(orig), str(opt), class_name,
           "--warmup", str(mode.warmup), "--samples", str(mode.samples), "--min-ms", str(mode.min_ms),
           *(["--control"] if mode.control else []), *(f"{k.name}:{k.n}" for k in kernels)]
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout)
    if proc.returncode == 2:
        raise BenchError(f"harness ({mode.name}): {proc.stderr.strip()[-2000:]}")
    if proc.returncode != 0:
        bad = [ln for ln in proc.stdout.splitlines() if ln.startswith(("MISMATCH", "ERROR"))]
        raise Difference(f"harness ({mode.name}): " + ("\n".join(bad) or proc.stderr.strip()[-2000:]))
    rows = parse_harness(proc.stdout)
    missing = [k.name for k in kernels if k.name not in rows]
    if missing:
        raise BenchError(f"harness ({mode.name}) reported no line for {', '.join(missing)}")
    return rows


def code_bytes(jar: Path) -> int:
    """The bytecode of every method of every class in the jar (code arrays only)."""
    total = 0
    with zipfile.ZipFile(jar) as z:
        for entry in z.namelist():
            if entry.endswith(".class") and not entry.endswith("module-info.class"):
                for m in read_class(z.read(entry)).methods:
                    code = m.code_attribute()
                    if code is not None:
                        total += int.from_bytes(code.data[4:8], "big")
    return total
