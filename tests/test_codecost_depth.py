"""The PEG cost model's loop depth (peggy_jvm/pegextract/cost.py): a node is priced by the deepest loop it varies
in, not by how many loops it varies in.

A loop at depth 2 runs inside a loop at depth 1, so a counter ``k = theta_2(0, k + 1)`` (invariant at depth 1:
every run of its loop restarts it at 0) still runs once per iteration of the nest. Counted as one depth it cost 20
times less than ``i = theta_2(gap, i + 1)``, and extraction rebased ``BenchKernels.shellSort``'s middle loop as
``i = gap + k``: an ``iadd; istore`` more per middle iteration, measured 1.05-1.06x under -Xint
(docs/cost-model.md). Here: the depth function on masks and sets, and shellSort through the full stage with the
emitted-cost rule on: rewritten (its inner loop reads ``a[j - gap]`` once), its middle loop no longer than javac's
(the rebased form had two instructions more there), and the same results on the JVM (``-Xverify:all``) on sorted,
reversed, short, empty and null arrays and negative sizes.

Also strideSum, whose rewrite (``i * stride`` out of the inner loop as ``i << 4``) needs ``effects.divisor`` in
the self-check's rules: ``n / stride`` with ``stride = 16`` is emitted as ``n / 16``, whose divisor the PEG
builder does not check, while the original's check of the local stays on its heap chain.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import difftest as dt
from peggy_jvm.classfile.reader import read_class, read_code
from peggy_jvm.codecost import instruction_prices
from peggy_jvm.classfile.bytecode import decode
from peggy_jvm.pegextract.cost import loop_depths
from peggy_jvm import pipeline
from peggy_jvm.pipeline import SizeBudget, Stage, optimize_input
from peggy_jvm.revert.tidy import ReturnsInPlace
from conftest import javac_command
from support.javac_cache import run_javac

ROOT = Path(__file__).resolve().parent.parent
KERNELS_SOURCE = ROOT / "fixtures" / "src" / "bench" / "BenchKernels.java"


def kernel_source(name: str) -> str:
    """The text of ``BenchKernels.name`` (fixtures/src/bench), so that these tests follow the benchmark's code."""
    text = KERNELS_SOURCE.read_text()
    at = text.index(f"public static long {name}(")
    depth, k = 0, text.index("{", at)
    while True:
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        k += 1
        if depth == 0:
            return text[at:k]


# shellSort and strideSum as the benchmark has them; strideSum's `n / stride` with stride = 16 becomes `n / 16`,
# which the PEG builder checks not; perRow: a divisor that may be zero keeps its check (and its
# ArithmeticException)
SOURCE = "public class Kern {\n" + kernel_source("shellSort") + "\n" + kernel_source("strideSum") + r"""
    public static int perRow(int[] a, int n, int d) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            s += a[i] / d + a[i] / d;
        }
        return s;
    }
}
"""


def test_a_node_is_priced_at_the_deepest_loop_it_varies_in():
    assert loop_depths(0) == 0
    assert loop_depths(0b100) == 2  # varies in depth 2 only: still inside a depth-1 loop
    assert loop_depths(0b110) == 2
    assert loop_depths({1, 3}) == 3
    assert loop_depths(-1, deepest=3) == 3  # unknown variance: the deepest loop there is
    assert loop_depths({5}, deepest=3) == 0  # depths past the method's loops do not count


@pytest.fixture(scope="module")
def kern(java_home, tmp_path_factory) -> tuple[Path, Path, dict]:
    """The kernels through the full stage with its real rules (the emitted-cost rule and the self-check on)."""
    work = tmp_path_factory.mktemp("kern")
    (work / "Kern.java").write_text(SOURCE)
    orig, out = work / "orig", work / "out"
    run_javac([*javac_command(java_home), "-d", str(orig), str(work / "Kern.java")], check=True)
    # javac's loop shape (loops tested at the top): what is compared below is where extraction puts the work
    # per loop depth, and a loop tested at the bottom moves its inner loop's entry test into the middle loop
    real_revert = pipeline.revert_peg
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline, "revert_peg", lambda peg, ir, returns=ReturnsInPlace.ALL, rotate_loops=False,
                   generated=None: real_revert(peg, ir, returns=returns, rotate_loops=False))
        # the method scope: shellSort's rewrite grows by 2 bytes (its allowance), with nothing in this class
        # to pay for it under the input size budget; its shape is what is tested here
        _, report = optimize_input(orig / "Kern.class", out / "Kern.class", Stage.FULL, jobs=1, cache=None,
                                   size_budget=SizeBudget.METHOD)
    return orig, out, {m.name: m for m in report.methods}


def _per_depth(path: Path, method: str) -> dict[int, int]:
    """How many instructions of ``method`` lie at each loop depth."""
    cf = read_class(path.read_bytes())
    m = next(m for m in cf.methods if m.name == method)
    code = read_code(m.code_attribute().data, cf.pool)
    out: dict[int, int] = {}
    for _weight, depth in instruction_prices(decode(code.code)):
        out[depth] = out.get(depth, 0) + 1
    return out


def test_shellsort_is_rewritten_without_rebasing_its_middle_loop(kern):
    orig, out, rows = kern
    row = rows["shellSort"]
    assert row.status == "rewritten", row.reason
    before, after = _per_depth(orig / "Kern.class", "shellSort"), _per_depth(out / "Kern.class", "shellSort")
    assert after[2] <= before[2], (before, after)  # `i = gap + k` made it before[2] + 2
    assert row.emitted_cost_after < row.emitted_cost_before


def test_shellsort_rewritten_behaves_like_the_original(kern, java_home):
    orig, out, _rows = kern
    arrays = [None, [], [5], [3, 1, 2], list(range(40)), list(range(40, 0, -1)),
              [(i * 7919) % 101 - 50 for i in range(120)]]
    calls = [dt.Call("Kern", "shellSort", "([II)J", (a, n))
             for a in arrays for n in (-3, 0, 1, 2, 3, 40, 120) if a is None or n <= len(a) or n == 3]
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [], result.report()
    assert result.compared == len(calls)


def test_a_constant_divisors_check_is_proved_away(kern, java_home):
    """``effects.divisor`` is among the optimizer's and the self-check's rules, and no other effect rule is;
    with it strideSum's rewrite (``i * stride`` out of the inner loop as ``i << 4``) is proved, kept (it pays)
    and behaves as the original on null, short and empty arrays and negative sizes."""
    from peggy_jvm.rules import policy
    names = {r.name for r in policy.safe_rules()}
    assert {"check-nonzero.i", "check-nonzero-heap.i", "check-nonzero.l", "check-nonzero-heap.l"} <= names
    assert not {"check-twice-heap.i", "checkcast-null-heap"} & names
    orig, out, rows = kern
    assert rows["strideSum"].status == "rewritten", rows["strideSum"].reason
    depth = _per_depth(out / "Kern.class", "strideSum")
    assert depth[3] < _per_depth(orig / "Kern.class", "strideSum")[3]  # the product left the inner loop
    arrays = [None, [], [1, 2, 3], list(range(16)), [(i * 37) % 11 - 5 for i in range(70)]]
    calls = [dt.Call("Kern", "strideSum", "([II)J", (a, n)) for a in arrays for n in (-20, 0, 15, 16, 17, 40, 70)]
    calls += [dt.Call("Kern", "perRow", "([III)I", (a, n, d)) for a in arrays for n in (0, 3) for d in (0, 2)]
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [], result.report()
    assert result.compared == len(calls)
