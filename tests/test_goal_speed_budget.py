"""``--goal speed``'s size budget per class (``pipeline.merge_class``): a rewrite may grow by its own allowance
(``size_allowance``), but a class's rewritten methods together stay no larger than their original code.

On purpose-written Java: ``Grows`` has one method whose rewrite (loop invariants hoisted, rotated loops) is 2
bytes longer and nothing to pay for it, so it keeps javac's code with the budget named in its reason; ``Pays``
has the same method beside one whose rewrite is 6 bytes shorter, so both rewrites are kept. The kept rewrites
verify (``-Xverify:all``) and compute what the originals compute; which growing rewrite is given up first (the
least emitted cost bought per added byte) is checked on report rows.
"""
from __future__ import annotations

import pytest

import difftest as dt
from conftest import javac_command
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.codecost import Goal
from peggy_jvm.pipeline import MethodReport, Stage, _over_class_budget, optimize_input
from support.javac_cache import run_javac

MATMUL = """
    public static double matmul(double[][] a, double[][] b, int n) {
        double sum = 0.0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                double c = 0.0;
                for (int k = 0; k < n; k++) {
                    c += a[i][k] * b[k][j];
                }
                sum += c;
            }
        }
        return sum;
    }
"""
PRODUCT = """
    public static double redundantProduct(double[] x, double[] y, int n) {
        double s = 0.0;
        for (int r = 0; r < 8; r++) {
            for (int i = 0; i < n; i++) {
                s += x[i] * y[i] + (x[i] * y[i]) * 0.5 + r;
            }
        }
        return s;
    }
"""
SOURCES = {"Grows": f"public class Grows {{{MATMUL}}}\n", "Pays": f"public class Pays {{{MATMUL}{PRODUCT}}}\n"}


@pytest.fixture(scope="module")
def built(java_home, tmp_path_factory):
    src = tmp_path_factory.mktemp("budget")
    for name, text in SOURCES.items():
        (src / f"{name}.java").write_text(text)
    run_javac([*javac_command(java_home), "-d", str(src), *(str(src / f"{n}.java") for n in SOURCES)], check=True)
    out = tmp_path_factory.mktemp("budget-out") / "out"
    _, report = optimize_input(src, out, Stage.FULL, goal=Goal.SPEED)
    return src, out, {(m.class_name, m.name): m for m in report.methods}


def _code(classes, cls: str, name: str) -> bytes:
    cf = read_class((classes / f"{cls}.class").read_bytes())
    return next(m for m in cf.methods if m.name == name).code_attribute().data


def test_a_growing_rewrite_nothing_pays_for_keeps_the_original(built):
    src, out, rows = built
    r = rows[("Grows", "matmul")]
    assert r.status == "unchanged", (r.status, r.reason)
    assert r.reason.startswith("class size budget: its rewrites together +"), r.reason
    assert r.emitted_cost_after == r.emitted_cost_before and r.bytes_after == r.bytes_before
    assert _code(out, "Grows", "matmul") == _code(src, "Grows", "matmul")


def test_a_growing_rewrite_paid_for_by_its_class_is_kept(built, java_home, verifier):
    src, out, rows = built
    grows, pays = rows[("Pays", "matmul")], rows[("Pays", "redundantProduct")]
    assert grows.status == pays.status == "rewritten", (grows.reason, pays.reason)
    assert grows.bytes_after > grows.bytes_before and pays.bytes_after < pays.bytes_before
    assert grows.bytes_after + pays.bytes_after <= grows.bytes_before + pays.bytes_before
    proc = verifier(out)
    assert proc.returncode == 0 and "verify_errors=0" in proc.stdout, proc.stdout[-2000:]
    square = [[1.5, -2.0, 0.25], [3.0, 4.0, -1.0], [0.5, 7.0, 2.0]]
    calls = [dt.Call("Pays", "matmul", "([[D[[DI)D", (square, square, n)) for n in (0, 1, 3, 4)]
    calls += [dt.Call("Pays", "redundantProduct", "([D[DI)D", ([1.0, -2.5, 3.0], [0.5, 4.0, -1.0], n))
              for n in (0, 2, 3, 4)]
    calls += [dt.Call("Pays", name, desc, args) for name, desc in (("matmul", "([[D[[DI)D"),
                                                                    ("redundantProduct", "([D[DI)D"))
              for args in dt.generate_args(desc, 12, seed=5)]
    result = dt.compare(src, out, calls, java_home=java_home, timeout_ms=3000)
    assert result.mismatches == [], result.report()
    assert result.compared > 0.8 * len(calls)


def _row(name: str, before: int, after: int, cost_before: int, cost_after: int,
         status: str = "rewritten") -> MethodReport:
    return MethodReport("C", name, "()V", status, bytes_before=before, bytes_after=after,
                        emitted_cost_before=cost_before, emitted_cost_after=cost_after)


def test_the_rewrite_given_up_first_buys_the_least_cost_per_byte():
    # +2 bytes for 100 (50 a byte), +4 for 120 (30 a byte), -3 bytes: +3 in all, over budget
    rows = [_row("a", 10, 12, 1000, 900), _row("b", 20, 24, 1000, 880), _row("c", 30, 27, 500, 400)]
    assert _over_class_budget(rows) == 1
    rows[1] = _row("b", 20, 20, 1000, 1000, "unchanged")  # given up: -1 byte in all, within budget
    assert _over_class_budget(rows) is None
    # equal worth: the first; a fallback's or an unchanged method's figures do not count
    assert _over_class_budget([_row("a", 10, 12, 100, 80), _row("b", 10, 12, 100, 80)]) == 0
    assert _over_class_budget([_row("a", 10, 12, 100, 80, "fallback"), _row("b", 10, 9, 100, 80)]) is None
