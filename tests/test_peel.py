"""Loop peeling (peggy_jvm/rules/peel.py, builtin ``loop-peel``): the exact e-graph shape of one peel, when it
fires and when it does not, and validation of hand-peeled loops (proved) against wrongly peeled ones (a
counterexample). The optimizer's use of it is in tests/test_optimize_full.py (``peelFirst`` and friends)."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import javac_command, keep_every_rewrite
from support.javac_cache import run_javac
from peggy_jvm.epeg import EPeg
from peggy_jvm.peg.graph import PEG
from peggy_jvm.rules.peel import LoopPeel
from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs


def _prev_diff(prev_next: str) -> tuple[PEG, dict[str, int]]:
    """``prev = 7; s = 0; for (i = 0; i < n; i++) { s += i - prev; prev = <prev_next>; } return s;`` where
    ``prev_next`` is ``"3"`` (first-iteration-only value) or ``"i"`` (the previous counter: varies)."""
    peg = PEG(name="prevDiff", param_types=["int"])
    s0, n = peg.add("sigma0"), peg.add("param", 0)
    zero, one = peg.add("const.i", 0), peg.add("const.i", 1)
    i, prev, s = peg.new_theta(1), peg.new_theta(1), peg.new_theta(1)
    peg.set_theta(i, zero, peg.add("add.i", None, (i, one)))
    peg.set_theta(prev, peg.add("const.i", 7), peg.add("const.i", 3) if prev_next == "3" else i)
    peg.set_theta(s, zero, peg.add("add.i", None, (s, peg.add("sub.i", None, (i, prev)))))
    cond = peg.add("ge.i", None, (i, n))
    p = peg.add("pass", 1, (cond,))
    result = peg.add("eval", 1, (s, p))
    peg.root = peg.add("return", None, (s0, result))
    peg.seal()
    return peg, {"n": n, "i": i, "prev": prev, "s": s, "cond": cond, "pass": p, "result": result}


def test_one_peel_has_the_exact_shape():
    peg, ids = _prev_diff("3")
    eg = EPeg()
    m = eg.add_peg(peg)
    rule = LoopPeel()
    matches, _ = rule.search(eg, 10, time.perf_counter() + 5)
    assert len(matches) == 1
    assert rule.apply(eg, matches[0])
    eg.rebuild()
    c = eg.add
    n, zero, three = m[ids["n"]], c("const.i", 0), c("const.i", 3)
    # eval(s, pass(i >= n)) == phi(0 >= n, 0, eval(s+, pass(i+ >= n)))
    phis = [ch for op, _a, ch in eg.nodes(m[ids["result"]]) if op == "phi"]
    assert len(phis) == 1
    first_test, at_first, later = phis[0]
    assert eg.equiv(first_test, c("ge.i", None, (zero, n)))
    assert eg.equiv(at_first, zero)
    (seq, new_pass), = [ch for op, a, ch in eg.nodes(later) if op == "eval" and a == 1]
    assert not eg.equiv(new_pass, m[ids["pass"]])
    # the shifted loop: i+ = theta(0 + 1, i+ + 1), prev+ = theta(3, 3), s+ = theta(0 + (0 - 7), s+ + (i+ - prev+))
    (i_next,), = [ch[:1] for op, _a, ch in eg.nodes(new_pass) if op == "pass"]
    (i_plus, _n), = [ch for op, _a, ch in eg.nodes(i_next) if op == "ge.i"]
    assert eg.nodes(i_plus) == [("theta", 1, (eg.find(c("add.i", None, (zero, c("const.i", 1)))),
                                              eg.find(c("add.i", None, (i_plus, c("const.i", 1))))))]
    assert eg.lookup("theta", 1, (three, three)) is not None  # prev from iteration 1 on: always 3
    (s_init, s_next), = [ch for op, a, ch in eg.nodes(seq) if op == "theta"]
    assert eg.equiv(s_init, c("add.i", None, (zero, c("sub.i", None, (zero, c("const.i", 7))))))
    assert eg.varies(seq, 1) and not eg.varies(later, 1)
    # a loop is peeled once, and the peeled copy never: saturation does not unroll
    assert rule.search(eg, 10, time.perf_counter() + 5)[0] == []


def test_loops_without_a_first_iteration_value_are_not_peeled():
    peg, _ = _prev_diff("i")
    eg = EPeg()
    eg.add_peg(peg)
    assert LoopPeel().search(eg, 10, time.perf_counter() + 5)[0] == []


def test_a_body_over_the_size_limit_is_not_peeled():
    peg, _ = _prev_diff("3")
    eg = EPeg()
    eg.add_peg(peg)
    assert LoopPeel(max_classes=3).search(eg, 10, time.perf_counter() + 5)[0] == []


ORIGINAL = """public class P {
    static int join(int[] a) {
        boolean first = true; int s = 0;
        for (int i = 0; i < a.length; i++) { if (first) { s = a[i]; first = false; } else { s = s * 31 + a[i]; } }
        return s;
    }
    static void print(java.io.PrintStream out, int n) {
        boolean first = true;
        for (int i = 0; i < n; i++) { if (!first) { out.print(','); } out.print(i); first = false; }
    }
}
"""
# peeled by hand: the first iteration in front of the loop, the flag gone
PEELED = """public class P {
    static int join(int[] a) {
        if (a.length <= 0) { return 0; }
        int s = a[0];
        for (int i = 1; i < a.length; i++) { s = s * 31 + a[i]; }
        return s;
    }
    static void print(java.io.PrintStream out, int n) {
        if (n <= 0) { return; }
        out.print(0);
        for (int i = 1; i < n; i++) { out.print(','); out.print(i); }
    }
}
"""
# peeled wrongly: join starts its loop at 2 (a[1] is lost), print prints the comma before the first number too
WRONG = PEELED.replace("for (int i = 1; i < a.length", "for (int i = 2; i < a.length") \
              .replace("out.print(0);", "out.print(','); out.print(0);")


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory) -> dict[str, Path]:
    out = {}
    for name, text in (("orig", ORIGINAL), ("peeled", PEELED), ("wrong", WRONG)):
        d = tmp_path_factory.mktemp(f"peel-{name}")
        (d / "P.java").write_text(text)
        run_javac([*javac_command(java_home), "-d", str(d), str(d / "P.java")], check=True)
        (d / "P.java").unlink()
        out[name] = d
    return out


def test_hand_peeled_loops_are_proved_by_peeling(trees):
    report = validate_inputs(trees["orig"], trees["peeled"], ValidateOptions(explain=True, method_timeout=5.0))
    rows = {p.name: p for p in report.pairs}
    for name in ("join", "print"):
        assert rows[name].verdict is Verdict.EQUIVALENT, (name, rows[name].reason)
        # loop-peel, or a validation-only rule making the same peel first (rules/firsttest.py, rules/loopshift.py)
        assert any(a.startswith("loop-peel") for a in rows[name].axioms or []), (name, rows[name].axioms)


def test_wrongly_peeled_loops_are_not_equivalent(trees):
    report = validate_inputs(trees["orig"], trees["wrong"], ValidateOptions(method_timeout=5.0))
    rows = {p.name: p for p in report.pairs}
    assert rows["join"].verdict is Verdict.NOT_EQUIVALENT, rows["join"].reason  # a counterexample on the JVM
    assert rows["print"].verdict is not Verdict.EQUIVALENT, rows["print"].reason


# loops where peeling meets other shapes: a test at the bottom, nested loops with a flag each, a first iteration
# that throws, a break and a return inside, two flags, long values, a division in the first iteration
SHAPES = """public class Adv {
    static int doWhile(int n) { boolean first = true; int s = 1; int i = 0;
        do { if (first) { s += 10; } else { s = s * 3 + i; } first = false; i++; } while (i < n); return s; }
    static int nestedFlag(int n, int m) { int t = 0;
        for (int i = 0; i < n; i++) { boolean first = true;
            for (int j = 0; j < m; j++) { if (first) { t += i; first = false; } else { t += j * 2; } } }
        return t; }
    static int throwsFirst(int[] a, int n) { boolean first = true; int s = 0;
        for (int i = 0; i <= n; i++) { if (first) { s = a[i] * 7; first = false; } else { s += a[i]; } } return s; }
    static int breakOnFlag(int n) { boolean first = true; int s = 0;
        for (int i = 0; i < n; i++) { if (!first && s > 20) break; s += i + (first ? 5 : 1); first = false; }
        return s; }
    static int returnInLoop(int n) { boolean first = true; int i = 0;
        while (true) { if (first) { i += 3; first = false; } else { i += 2; } if (i > n) return i; } }
    static long prevChain(int n) { long prev = 1, cur = 1, s = 0;
        for (int i = 0; i < n; i++) { s += prev * 2 + cur; prev = 4; cur = i; } return s; }
    static int divFirst(int n, int d) { boolean first = true; int s = 0;
        for (int i = 0; i < n; i++) { if (first) { s = 100 / d; first = false; } else { s += i; } } return s; }
    static int twoFlags(int n) { boolean a = true, b = true; int s = 0;
        for (int i = 0; i < n; i++) { if (a) { s += 1; a = false; } else if (b) { s += 100; b = false; } else { s += i; } }
        return s; }
}
"""


def test_peeled_shapes_behave_like_the_originals(java_home, tmp_path, monkeypatch):
    import difftest as dt
    from peggy_jvm.classfile.reader import read_class
    from peggy_jvm.pipeline import Stage, optimize_input

    keep_every_rewrite(monkeypatch)  # the peeled shapes are tested here, not whether they pay

    (tmp_path / "Adv.java").write_text(SHAPES)
    orig = tmp_path / "orig"
    run_javac([*javac_command(java_home), "-d", str(orig), str(tmp_path / "Adv.java")], check=True)
    _, report = optimize_input(orig, tmp_path / "out", Stage.FULL, jobs=1)  # work budgets: load changes nothing
    rewritten = {m.name for m in report.methods if m.status == "rewritten"}
    assert {"nestedFlag", "throwsFirst", "returnInLoop", "twoFlags"} <= rewritten, \
        {m.name: m.reason for m in report.methods}
    assert not [m for m in report.methods if m.status == "fallback"]
    # the array reads copied into the peeled first iteration keep their line (e-graph copies remember their class)
    assert "LineNumberTable" not in next(m.reason for m in report.methods if m.name == "throwsFirst")
    cf = read_class((orig / "Adv.class").read_bytes())
    calls = []
    for m in cf.methods:
        if m.name == "<init>":
            continue
        for a in dt.generate_args(m.descriptor, count=40, seed=3):  # small loop bounds: both sides end quickly
            a = tuple(max(-50, min(50, v)) if isinstance(v, int) and not isinstance(v, bool) else v for v in a)
            calls.append(dt.Call(cf.name, m.name, m.descriptor, a))
    result = dt.compare(orig, tmp_path / "out", calls, java_home=java_home, timeout_ms=3000)
    assert result.mismatches == [], result.report()
    assert result.compared == len(calls)
