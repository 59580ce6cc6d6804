#!/usr/bin/env python3
"""Measure the JVM's relative cost of each instruction group and print it beside ``peggy_jvm.codecost.WEIGHTS``.

Each benchmark is a Java statement repeated ``REPS`` times in the body of a counted loop; the script compiles
one class of them with javac, reads the loop bodies back with our own decoder (the instructions at loop depth
>= 1, so the exact bytecode javac chose is what is priced, nothing assumed), and times every benchmark and an
empty loop of the same shape on the JVM: thread CPU time (ThreadMXBean), benchmarks alternated round by round,
the median of the rounds. The extra time per repetition over the empty loop is what the repeated statement's
instructions cost. The unit comes from the two reference benchmarks, ``local`` (``x = y``: two local
loads/stores) and ``iadd`` (``x = x + y``): their instructions on average weigh ``WEIGHTS[INT_ARITH]`` (the
interpreter's dispatch dominates such simple instructions; one of them alone is too short to time apart).
Every other benchmark's target group gets what its time leaves after its other instructions, priced with the
table's weights; a callee's own instructions (``extra``) are priced the same way and subtracted. So the
measured column reads in the table's units. More benchmarks (:data:`CONTEXT`) measure what an instruction's
neighbours change, each against a benchmark that differs from it only in that: the extra price of a taken jump
(``codecost.TAKEN_EXTRA``), the saving of HotSpot's fused ``iload n; iload m`` (``fast_iload2``, not priced:
it measures about nothing), the stall of a ``dup`` of a float just computed (``codecost.FLOAT_SPILL_EXTRA``), and
the read of an ``ldc``'s number by the instruction right after it (``codecost.LDC_READ_EXTRA``: ``y & 100000``
against ``100000 & y``).

    scripts/calibrate_cost.py [--mode xint|jit|both] [--rounds N]
    scripts/calibrate_cost.py --kernels [--rounds N]
    scripts/calibrate_cost.py --stencil [--rounds N]

Prints one table per mode: group, the weight in the code, the measured weight, the benchmark and its
nanoseconds per repetition. ``--kernels`` checks the model's predictive power instead: the fixture
``Kernels`` (fixtures/src/common/Kernels.java) through ``--stage full`` with every rewrite kept (the emitted-cost
rule off, so that the rewrites it would refuse are measured too), then per method the predicted change of the
emitted cost beside the measured change of its -Xint thread CPU time (a harness calling the method in a loop,
run on the original and the rewritten class in alternate JVMs, medians), and whether the signs agree.
``--stencil`` times five shapes of the jacobi2d stencil (docs/cost-model.md: the one rewrite whose gain the
model does not predict) with their instruction counts per inner iteration.
A measuring tool, not a test (timings depend on the machine and its load).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from peggy_jvm.classfile.reader import read_class, read_code  # noqa: E402
from peggy_jvm.classfile.bytecode import decode  # noqa: E402
from peggy_jvm.codecost import (FLOAT_SPILL_EXTRA, KIND_OF, LDC_READ_EXTRA, TAKEN_EXTRA, WEIGHTS,  # noqa: E402
                                Kind, kind_of, loop_depths, price_code)

REPS = 10


@dataclass(frozen=True)
class Bench:
    name: str
    target: Kind | None  # None: the reference benchmarks (local, iadd)
    stmt: str
    #: instructions a callee executes per repetition (opcode names), priced and subtracted
    extra: tuple[str, ...] = field(default=())


BENCHES = [
    Bench("local", None, "x = y;"),
    Bench("iadd", None, "x = x + y;"),
    Bench("const", Kind.CONST, "x = 3;"),
    Bench("ldc", Kind.LDC, "x = 100000;"),
    Bench("stack", Kind.STACK, "x = y = z;"),  # iload dup istore istore
    Bench("imul", Kind.INT_MUL, "x = x * y;"),
    Bench("ladd", Kind.WIDE_ARITH, "l = l + m;"),
    Bench("dmul", Kind.WIDE_ARITH, "d = d * e;"),
    Bench("idiv", Kind.DIV_REM, "x = z / y;"),
    Bench("i2l", Kind.CONVERT, "l = x;"),
    Bench("iinc", Kind.IINC, "x++;"),
    Bench("branch", Kind.BRANCH, "if (x < y) z = y;"),
    Bench("lcmp", Kind.COMPARE, "if (l > m) z = y;"),
    Bench("iaload", Kind.ARRAY_LOAD, "x = a[y];"),
    Bench("iastore", Kind.ARRAY_STORE, "a[y] = x;"),
    Bench("arraylength", Kind.ARRAY_LENGTH, "x = a.length;"),
    Bench("getfield", Kind.FIELD, "x = o.f;"),
    Bench("getstatic", Kind.STATIC, "x = S;"),
    Bench("checkcast", Kind.TYPE_CHECK, "o = (Holder) ob;"),
    Bench("invokestatic", Kind.INVOKE_STATIC, "x = id(x);", ("iload_0", "ireturn")),
    Bench("invokevirtual", Kind.INVOKE_VIRTUAL, "x = o.get(x);", ("aload_0", "getfield", "iadd", "iload_1",
                                                                   "ireturn")),
    Bench("invokeinterface", Kind.INVOKE_INTERFACE, "x = it.get(x);", ("aload_0", "getfield", "iadd", "iload_1",
                                                                         "ireturn")),
    Bench("newarray", Kind.NEW_ARRAY, "a2 = new int[4];"),
    Bench("new", Kind.NEW, "ob = new Object();", ("return",)),  # Object.<init> returns at once
    Bench("monitor", Kind.MONITOR, "synchronized (o) { x = y; }"),
]

#: the effects of an instruction's neighbours (``codecost.TAKEN_EXTRA``, ``codecost.fused_loads``), each measured
#: against a benchmark of BENCHES that differs from it in that effect only: (benchmark, its baseline)
CONTEXT = [
    # x = 1 < y = 3: `if_icmple` jumps over `z = y`, where the baseline `branch` falls through into it
    (Bench("taken", None, "if (x > y) z = y;"), "branch"),
    # p and q live in slots above 3: javac writes `iload p; iload q`, which HotSpot fuses (fast_iload2); the
    # baseline `iadd` reads x and y with `iload_1; iload_2`, which it does not
    (Bench("iload2", None, "p = p + q;"), "iadd"),
    # `fload; dup; fstore; fstore` against `stack`'s `iload_3; dup; istore_2; istore_1`: a float spilled by a
    # 4-byte store and read back by dup as an 8-byte word
    (Bench("fdup", None, "f = g = h;"), "stack"),
    # `iload y; ldc; iand` against `ldc; iload y; iand`: the same instructions, but HotSpot's interpreter pushes an
    # `ldc`'s constant to the stack in memory (the value before it too), and the `iand` right after reads it back
    (Bench("ldcsecond", None, "x = y & 100000;"), "ldcfirst"),
    (Bench("ldcfirst", None, "x = 100000 & y;"), "iadd"),
]

JAVA = """\
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class CostBench {
    interface Get { int get(int v); }
    static final class Holder implements Get {
        int f;
        Holder(int f) { this.f = f; }
        public int get(int v) { return f + v; }
    }
    static int S = 7;
    static int id(int v) { return v; }
    static volatile long sink;

%(methods)s

    static long run(int k, int n) {
        switch (k) {
%(cases)s
            default: throw new IllegalArgumentException();
        }
    }

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]), rounds = Integer.parseInt(args[1]), count = %(count)d;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        for (int r = -2; r < rounds; r++) {  // two warm-up rounds, not printed
            StringBuilder line = new StringBuilder();
            for (int j = 0; j < count; j++) {
                int k = (j + Math.max(r, 0)) %% count;  // each round starts at another benchmark
                long t0 = mx.getCurrentThreadCpuTime();
                sink += run(k, n);
                long t = mx.getCurrentThreadCpuTime() - t0;
                if (r >= 0) line.append(k).append('=').append(t).append(' ');
            }
            if (r >= 0) System.out.println(line);
        }
    }
}
"""

METHOD = """\
    static long b_%(name)s(int n) {
        int x = 1, y = 3, z = 5;
        long l = 2, m = 1;
        double d = 1.0, e = 1.0000001;
        int[] a = new int[8], a2 = a;
        Holder o = new Holder(2);
        Object ob = o;
        Get it = o;
        int p = 4, q = 6;
        float f = 1, g = 2, h = 3;
        for (int i = 0; i < n; i++) {
%(body)s
        }
        return x + y + z + l + m + (long) d + a[1] + a2.length + o.f + ob.hashCode() %% 2 + it.get(0) + p + q
            + (long) (f + g + h);
    }
"""


def generate() -> str:
    benches = [Bench("empty", None, "")] + BENCHES + [b for b, _ in CONTEXT]
    methods = "\n".join(METHOD % {"name": b.name, "body": "\n".join("            " + b.stmt for _ in range(REPS))
                                  if b.stmt else ""} for b in benches)
    cases = "\n".join(f"            case {k}: return b_{b.name}(n);" for k, b in enumerate(benches))
    return JAVA % {"methods": methods, "cases": cases, "count": len(benches)}


def loop_body_counts(class_file: Path) -> dict[str, Counter]:
    """Per benchmark method, the kinds of the instructions in its loop (depth >= 1), counted."""
    cf = read_class(class_file.read_bytes())
    out: dict[str, Counter] = {}
    for m in cf.methods:
        if not m.name.startswith("b_"):
            continue
        code = read_code(m.code_attribute().data, cf.pool)
        insns = decode(code.code)
        depths = loop_depths(insns, [(x.start, x.end, x.handler) for x in code.exception_table])
        out[m.name[2:]] = Counter(KIND_OF[i.opcode] for i, d in zip(insns, depths) if d >= 1)
    return out


def measure(workdir: Path, mode: str, rounds: int) -> dict[str, float]:
    """Median thread CPU nanoseconds per benchmark run."""
    n = 200_000 if mode == "xint" else 20_000_000
    flags = ["-Xint"] if mode == "xint" else []
    out = subprocess.run(["java", *flags, "-cp", str(workdir), "CostBench", str(n), str(rounds)],
                         capture_output=True, text=True, check=True).stdout
    names = ["empty"] + [b.name for b in BENCHES] + [b.name for b, _ in CONTEXT]
    samples: dict[str, list[int]] = {k: [] for k in names}
    for line in out.split("\n"):
        for item in line.split():
            k, t = item.split("=")
            samples[names[int(k)]].append(int(t))
    return {k: statistics.median(v) / n for k, v in samples.items()}  # ns per loop iteration


def weights(per_iter: dict[str, float], counts: dict[str, Counter]) -> tuple[dict[str, float], float]:
    """The measured weight of each benchmark's target group (in the table's units) and the unit in ns."""
    def extra_ns(name: str) -> float:  # per repetition, over the empty loop
        return (per_iter[name] - per_iter["empty"]) / REPS

    def per_rep(name: str) -> Counter:
        c = counts[name].copy()
        c.subtract(counts["empty"])
        return Counter({k: v / REPS for k, v in c.items() if v})

    # the unit: the reference benchmarks' simple instructions (local loads/stores, iadd) on average cost iadd's
    # weight; one of them alone is too short to time apart from the others
    ref = ("local", "iadd")
    unit = sum(extra_ns(r) for r in ref) / sum(sum(per_rep(r).values()) for r in ref) / WEIGHTS[Kind.INT_ARITH]
    result = {r: extra_ns(r) / unit / sum(per_rep(r).values()) for r in ref}
    for b in BENCHES[2:]:
        c = per_rep(b.name)
        for name in b.extra:
            c[kind_of(name)] += 1
        others = sum(v * WEIGHTS[k] for k, v in c.items() if k is not b.target)
        result[b.name] = (extra_ns(b.name) / unit - others) / c[b.target] if c[b.target] else float("nan")
    return result, unit


def context_effects(per_iter: dict[str, float], unit: float) -> dict[str, float]:
    """In the table's units: what a taken jump costs beyond falling through (the skipped ``z = y``, two local
    loads/stores, added back), what a fused ``iload`` pair saves against two short-form loads, and what a ``dup``
    of a float costs beyond one of an int."""
    def ns(name: str) -> float:
        return (per_iter[name] - per_iter["empty"]) / REPS

    return {"taken": (ns("taken") - ns("branch")) / unit + 2 * WEIGHTS[Kind.LOCAL],
            "iload2": (ns("iadd") - ns("iload2")) / unit,
            "fdup": (ns("fdup") - ns("stack")) / unit,
            "ldc": (ns("ldcsecond") - ns("ldcfirst")) / unit}


#: Kernels' methods, how the harness calls one (arguments from its setup) and how often per measurement
KERNEL_CALLS = [
    ("matrix", "matrix(30, 1)", 20), ("multiply", "multiply(a, b)", 20), ("trace", "trace(a)", 20000),
    ("checksum", "checksum(a)", 200), ("sieve", "sieve(100000)", 3), ("builderLoop", "builderLoop(1000)", 20),
    ("fnv1a", "fnv1a(data)", 50), ("mix64", "mix64(r)", 200000), ("xorshift", "xorshift(r + 1)", 200000),
    ("sortAndSearch", "sortAndSearch(2000)", 3), ("crc32", "crc32(data)", 20), ("isqrt", "isqrt(r * 99991L)", 20000),
    ("lcs", "lcs(s1, s2)", 200), ("mandelbrot", "mandelbrot(60, 40, 100)", 2),
]

TIMER = """\
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class KernelTimer {
    static volatile Object sink;
    public static void main(String[] args) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        double[][] a = Kernels.matrix(30, 1), b = Kernels.matrix(30, 2);
        byte[] data = new byte[5000];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 31 + (i >> 3));
        String s1 = "AGGTABQWERTYUIOPZXCVBNM", s2 = "GXTXAYBQWERTPOIUYTZXCVB";
        long t0;
%(calls)s
    }
}
"""


def kernels(rounds: int) -> int:
    """The predictive check (``--kernels``); prints the table and the share of agreeing signs."""
    from peggy_jvm import pipeline
    from peggy_jvm.pipeline import Stage, optimize_input

    src = ROOT / "fixtures" / "src" / "common" / "Kernels.java"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        orig, new, timer = work / "orig", work / "new", work / "timer"
        subprocess.run(["javac", "--release", "17", "-d", str(orig), str(src)], check=True)
        pipeline._check_emitted = lambda goal, before, after: None  # measure every rewrite, kept or not
        _, report = optimize_input(orig / "Kernels.class", new / "Kernels.class", Stage.FULL)
        rewritten = {m.name for m in report.methods if m.status == "rewritten"}
        calls = "\n".join(f"        t0 = mx.getCurrentThreadCpuTime(); for (int r = 0; r < {n}; r++) "
                          f"sink = Kernels.{call}; System.out.println(\"{name} \" + "
                          f"(mx.getCurrentThreadCpuTime() - t0));" for name, call, n in KERNEL_CALLS)
        timer.mkdir()
        (timer / "KernelTimer.java").write_text(TIMER % {"calls": calls})
        subprocess.run(["javac", "-cp", str(orig), "-d", str(timer), str(timer / "KernelTimer.java")], check=True)
        samples: dict[tuple[str, str], list[int]] = {}
        for _ in range(rounds):
            for side, cp in (("orig", orig), ("new", new)):
                out = subprocess.run(["java", "-Xint", "-cp", f"{timer}:{cp}", "KernelTimer"], capture_output=True,
                                     text=True, check=True).stdout
                for line in out.split("\n"):
                    if line:
                        name, ns = line.split()
                        samples.setdefault((name, side), []).append(int(ns))
        before, after = _kernel_prices(orig / "Kernels.class"), _kernel_prices(new / "Kernels.class")
    print(f"{'method':14} {'cost before':>11} {'after':>7} {'predicted':>9} {'-Xint ms':>9} {'after':>7} "
          f"{'measured':>8}  agree")
    agree = total = 0
    for name, _, _ in KERNEL_CALLS:
        if name not in rewritten:
            continue
        t0, t1 = (statistics.median(samples[(name, side)]) / 1e6 for side in ("orig", "new"))
        predicted = (after[name] - before[name]) / before[name]
        measured = (t1 - t0) / t0
        ok = (predicted > 0) == (measured > 0)
        agree += ok
        total += 1
        print(f"{name:14} {before[name]:>11} {after[name]:>7} {predicted:>+9.1%} {t0:>9.1f} {t1:>7.1f} "
              f"{measured:>+8.1%}  {'yes' if ok else 'NO'}")
    print(f"\nsigns agree on {agree} of {total} rewritten methods")
    return 0


def _kernel_prices(class_file: Path) -> dict[str, int]:
    cf = read_class(class_file.read_bytes())
    return {m.name: price_code(read_code(m.code_attribute().data, cf.pool), cf.pool).cost for m in cf.methods}


#: the jacobi2d stencil in five shapes (docs/cost-model.md): javac's form of the original, the index expressions
#: hoisted, and loaded values stored in locals first (three as the full stage's rewrite does, or all five)
STENCIL = """\
public class Stencil {
    static void original(double[][] a, double[][] b, int n) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                b[i][j] = 0.2 * (a[i][j] + a[i][j - 1] + a[i][j + 1] + a[i + 1][j] + a[i - 1][j]);
    }
    static void hoisted(double[][] a, double[][] b, int n) {
        int m = n - 1;
        for (int i = 1; i < m; i++) { int ip = i + 1, im = i - 1;
            for (int j = 1, jm = 0; j < m; jm = j, j++)
                b[i][j] = 0.2 * (a[i][j] + a[i][jm] + a[i][j + 1] + a[ip][j] + a[im][j]); }
    }
    static void hoistedStore3(double[][] a, double[][] b, int n) {
        int m = n - 1;
        for (int i = 1; i < m; i++) { int ip = i + 1, im = i - 1;
            for (int j = 1, jm = 0; j < m; jm = j, j++) {
                double p = a[i][j], q = a[i][jm], r = a[i][j + 1];
                b[i][j] = 0.2 * (p + q + r + a[ip][j] + a[im][j]); } }
    }
    static void hoistedStore5(double[][] a, double[][] b, int n) {
        int m = n - 1;
        for (int i = 1; i < m; i++) { int ip = i + 1, im = i - 1;
            for (int j = 1, jm = 0; j < m; jm = j, j++) {
                double p = a[i][j], q = a[i][jm], r = a[i][j + 1], u = a[ip][j], v = a[im][j];
                b[i][j] = 0.2 * (p + q + r + u + v); } }
    }
    static void store3(double[][] a, double[][] b, int n) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++) {
                double p = a[i][j], q = a[i][j - 1], r = a[i][j + 1];
                b[i][j] = 0.2 * (p + q + r + a[i + 1][j] + a[i - 1][j]); }
    }
    public static void main(String[] args) {
        int n = 120, rounds = Integer.parseInt(args[0]), count = 5;
        double[][] a = new double[n][n], b = new double[n][n];
        for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) a[i][j] = i * 0.5 + j;
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long[][] t = new long[count][rounds];
        for (int r = 0; r < rounds; r++) for (int v = 0; v < count; v++) {
            int w = (v + r) % count;
            long t0 = mx.getCurrentThreadCpuTime();
            for (int k = 0; k < 4; k++) switch (w) {
                case 0: original(a, b, n); break; case 1: hoisted(a, b, n); break;
                case 2: hoistedStore3(a, b, n); break; case 3: hoistedStore5(a, b, n); break;
                default: store3(a, b, n);
            }
            t[w][r] = mx.getCurrentThreadCpuTime() - t0;
        }
        String[] names = {"original", "hoisted", "hoistedStore3", "hoistedStore5", "store3"};
        for (int v = 0; v < count; v++) java.util.Arrays.sort(t[v]);
        for (int v = 0; v < count; v++)
            System.out.println(names[v] + " " + (double) t[v][rounds / 2] / t[0][rounds / 2]);
    }
}
"""


def stencil(rounds: int) -> int:
    """``--stencil``: the jacobi2d shapes under -Xint, each variant's instructions per inner iteration (our
    decoder, the deepest loop) and its median time over the original's."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "Stencil.java").write_text(STENCIL)
        subprocess.run(["javac", "-g:none", "--release", "17", "-d", str(work), str(work / "Stencil.java")],
                       check=True)
        cf = read_class((work / "Stencil.class").read_bytes())
        inner = {}
        for m in cf.methods:
            code = read_code(m.code_attribute().data, cf.pool)
            depths = loop_depths(decode(code.code))
            inner[m.name] = sum(1 for d in depths if d == max(depths, default=0))
        out = subprocess.run(["java", "-Xint", "-cp", str(work), "Stencil", str(max(rounds, 5) * 4 + 1)],
                             capture_output=True, text=True, check=True).stdout
    print(f"{'variant':14} {'instructions':>12} {'time / original':>16}")
    for line in out.split("\n"):
        if line:
            name, ratio = line.split()
            print(f"{name:14} {inner[name]:>12} {float(ratio):>16.3f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["xint", "jit", "both"], default="both")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--kernels", action="store_true", help="check the predictions on the fixture Kernels instead")
    ap.add_argument("--stencil", action="store_true", help="time the jacobi2d stencil shapes instead")
    args = ap.parse_args()
    if args.kernels:
        return kernels(args.rounds)
    if args.stencil:
        return stencil(args.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "CostBench.java").write_text(generate())
        subprocess.run(["javac", "-g:none", "--release", "17", "-d", str(work), str(work / "CostBench.java")],
                       check=True)
        counts = loop_body_counts(work / "CostBench.class")
        modes = ["xint", "jit"] if args.mode == "both" else [args.mode]
        for mode in modes:
            per_iter = measure(work, mode, args.rounds)
            result, unit = weights(per_iter, counts)
            print(f"\n{mode}: unit (iadd / {WEIGHTS[Kind.INT_ARITH]}) = {unit:.3f} ns; "
                  f"empty loop {per_iter['empty']:.2f} ns/iteration")
            print(f"{'benchmark':16} {'group':24} {'table':>6} {'measured':>9} {'ns/rep':>8}")
            for b in BENCHES:
                kind = b.target or (Kind.LOCAL if b.name == "local" else Kind.INT_ARITH)
                ns = (per_iter[b.name] - per_iter["empty"]) / REPS
                # the JIT can remove a whole benchmark loop (its statements are dead or invariant): no unit then
                measured = f"{result[b.name]:>9.1f}" if unit > 0.05 else f"{'n/a':>9}"
                print(f"{b.name:16} {kind.value:24} {WEIGHTS[kind]:>6} {measured} {ns:>8.2f}")
            if unit > 0.05:
                ctx = context_effects(per_iter, unit)
                print(f"taken jump, extra over falling through: table {TAKEN_EXTRA}, measured {ctx['taken']:.1f}")
                print(f"fused iload pair, saved against iload_1; iload_2: table {WEIGHTS[Kind.LOCAL]}, "
                      f"measured {ctx['iload2']:.1f}")
                print(f"dup of a float just computed, extra over an int's: table {FLOAT_SPILL_EXTRA}, "
                      f"measured {ctx['fdup']:.1f}")
                print(f"ldc read at once by the next instruction, extra over an ldc before a load: table "
                      f"{LDC_READ_EXTRA}, measured {ctx['ldc']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
