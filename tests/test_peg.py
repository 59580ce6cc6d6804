"""PEGs: the builder's shapes, the well-formedness checks, the evaluator against the IR interpreter, and what the
round trip (build + revert, no saturation) does to code.

The evaluator check runs every fixture method the interpreter can run (test_interp.py holds the interpreter to
the JVM on the same generated inputs) and requires the same outcome, output and exceptions from the PEG.
The round-trip checks compile purpose-written Java, send it through ``--stage peg`` and look at the reverted IR
(the redundant multiplication, the dead store and the copy are gone; a loop-invariant product leaves the loop;
two outputs of one loop come from one loop) and at its behaviour on the JVM (infinite loops with and without
effects stay infinite exactly where the original's are).
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import difftest as dt
import test_interp as TI
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.ir import interp as I
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.ir.nodes import Binary, Copy, Goto, If
from peggy_jvm.jdk.handler import DefaultCallHandler
from peggy_jvm.peg.build import PegUnsupported, build_peg
from peggy_jvm.peg.check import PegMalformed, check_peg, peg_problems
from peggy_jvm.peg.evaluate import PegEvalError, evaluate_peg
from peggy_jvm.peg.graph import PEG, Node
from peggy_jvm.pipeline import Stage, optimize_input
from peggy_jvm.revert.revert import RevertUnsupported, revert_peg
from peggy_jvm.validate.normalize import settle_exit_phis
from conftest import javac_command
from support.javac_cache import run_javac
from support.same_code import same_methods


# -- the evaluator against the interpreter ------------------------------------------------------------------
def _evaluate_all(classes_dir: Path, transform=None, skip: set = frozenset()) -> tuple[Counter, list]:
    stats: Counter = Counter()
    mismatches = []
    hierarchy = ClassHierarchy(classpath=[classes_dir])
    for cls, name, desc in TI.candidates(classes_dir):
        if (cls, name, desc) in skip:
            stats["run as in the other tree"] += 1
            continue
        h1, h2 = DefaultCallHandler(classes_dir), DefaultCallHandler(classes_dir)
        cf = h1.program.get(cls)
        mi = next(m for m in cf.methods if m.name == name and m.descriptor == desc)
        ir = lift_method(cf, mi, hierarchy)
        peg = build_peg(ir)
        check_peg(peg)
        if transform is not None:  # only the PEGs it changes: the others are the test above
            new = transform(peg)
            if new is peg:
                continue
            peg = new
            check_peg(peg)
        params, ret = dt.parse_descriptor(desc)
        heap1, heap2 = I.Heap(hierarchy), I.Heap(hierarchy)
        compared = True
        for args in dt.generate_args(desc, TI.MAIN_INPUTS if name == "main" else 12, TI.SEED):
            try:
                o1 = I.run_method(ir, [TI.to_interp(a, p) for a, p in zip(args, params)], heap1, h1,
                                  budget=TI.BUDGET)
            except I.Unsupported:
                compared = False
                break
            if isinstance(o1, I.Threw) and o1.exception == "java/lang/StackOverflowError":
                compared = False
                break
            o2 = evaluate_peg(peg, [TI.to_interp(a, p) for a, p in zip(args, params)], heap2, h2,
                              budget=TI.BUDGET * 4)
            r1 = TI.to_result(o1, heap1.take_output(), ret)
            r2 = TI.to_result(o2, heap2.take_output(), ret)
            if not dt.same_result(r1, r2):
                mismatches.append((cls, name, desc, args, r1, r2))
                break
        stats["compared" if compared else "not modelled by the interpreter"] += 1
    return stats, mismatches


@pytest.mark.slow  # the slow tier: every fixture method evaluated on generated arguments (360 s of a loaded run's 3,200)
@pytest.mark.parametrize("release", ["release17", "release8"])  # a work unit each (support/schedule.py)
def test_peg_evaluator_agrees_with_the_interpreter_on_fixtures(fixture_classes, release):
    # release 17's sweep leaves out the methods that run exactly as in release 8 (support/same_code.py: the same
    # code, reaching only the same code; 163 of 274), which release 8's sweep evaluates on the same inputs
    skip = same_methods(fixture_classes["release17"], fixture_classes["release8"]) if release == "release17" else set()
    stats, mismatches = _evaluate_all(fixture_classes[release], skip=skip)
    print(release, dict(stats))
    assert mismatches == []
    assert stats["compared"] >= (190 if release == "release8" else 80)


@pytest.mark.parametrize("release", ["release17", "release8"])
def test_settling_exit_phis_keeps_the_meaning_of_every_fixture_method(fixture_classes, release):
    # validate/normalize.py settle_exit_phis: a loop's phis on its own exit condition pick their arm (what the
    # self-check needs for javac's do { ok = f(); if (!ok) g(); } while (!ok)); the interpreter says the
    # settled PEGs mean what the methods do
    settled = []

    def settle(peg):
        out = settle_exit_phis(peg)
        if out is not peg:
            settled.append(peg.name)
        return out
    stats, mismatches = _evaluate_all(fixture_classes[release], settle)
    assert mismatches == []
    assert {"ExitFlags.acquire(I)I", "ExitFlags.firstNegative([I)I"} <= set(settled), settled


def test_evaluator_rejects_a_sigma_used_twice():
    peg = PEG(name="twice")
    s0 = peg.add("sigma0")
    from peggy_jvm.ir.nodes import FieldRef
    f = FieldRef("C", "x", "I")
    e1 = peg.add("getstatic", f, (s0,))
    e2 = peg.add("getstatic", FieldRef("C", "y", "I"), (s0,))  # the same sigma again
    v = peg.add("add.i", None, (peg.add("rho_value", None, (e1,)), peg.add("rho_value", None, (e2,))))
    peg.root = peg.add("return", None, (peg.add("rho_sigma", None, (e2,)), v))
    peg.class_name = "C"
    with pytest.raises(PegEvalError, match="sigma used twice"):
        evaluate_peg(peg, [], I.Heap())


# -- well-formedness ----------------------------------------------------------------------------------------
@pytest.mark.slow  # the slow tier: a sweep over every fixture method (47 s of a loaded fast-tier run)
def test_checks_accept_every_fixture_peg(fixture_classes):
    count = 0
    for release in ("release17", "release8", "old"):
        d = fixture_classes[release]
        h = ClassHierarchy(classpath=[d])
        for p in sorted(d.glob("*.class")):
            cf = read_class(p.read_bytes())
            for m in cf.methods:
                if m.code_attribute() is not None:
                    assert peg_problems(build_peg(lift_method(cf, m, h))) == [], (cf.name, m.name)
                    count += 1
    assert count > 900


def test_checks_reject_broken_pegs():
    peg = PEG()
    s0 = peg.add("sigma0")
    one = peg.add("const.i", 1)
    x = peg.add("add.i", None, (one, one))
    peg.root = peg.add("return", None, (s0, x))
    assert peg_problems(peg) == []
    # a cycle not through a theta's second child
    peg.nodes[x] = Node("add.i", None, (x, one))
    assert any("cycle" in p for p in peg_problems(peg))
    peg.nodes[x] = Node("add.i", None, (one, one))
    # an effect on a value instead of a sigma
    bad = peg.add("getstatic", None, (one,))
    peg.root = peg.add("return", None, (peg.add("rho_sigma", None, (bad,)), x))
    assert any("input 0 is not a sigma" in p for p in peg_problems(peg))
    # a theta whose initial value varies in its own loop, and an eval not indexed by a pass
    t = peg.new_theta(1)
    peg.set_theta(t, t, t)
    e = peg.add("eval", 1, (t, one))
    peg.root = peg.add("return", None, (s0, e))
    problems = peg_problems(peg)
    assert any("initial value varies" in p for p in problems)
    assert any("not pass[1]" in p for p in problems)
    with pytest.raises(PegMalformed):
        check_peg(peg)
    # an unknown operator, a wrong arity
    peg2 = PEG()
    peg2.root = peg2.add("frobnicate", None, ())
    assert peg_problems(peg2) == ["n0: unknown operator 'frobnicate'"]
    peg3 = PEG()
    peg3.root = peg3.add("add.i", None, ())
    assert "n0: add.i with 0 children" in peg_problems(peg3)


# -- shapes -------------------------------------------------------------------------------------------------
SHAPES = """
public class PegShapes {
    static int sideEffects;
    static int cse(int a, int b) { int x = a * b; int y = a * b; return x + y; }
    static int deadStore(int a) { int d = a * 7; d = a + 1; return d; }
    static int copies(int a) { int b = a; int c = b; int e = c; return e + 1; }
    static int licm(int n, int a, int b) { int s = 0; for (int i = 0; i < n; i++) s += a * b + i; return s; }
    static long twoOutputs(int n) {
        int s = 0, p = 1;
        for (int i = 1; i <= n; i++) { s += i; p *= i; }
        return ((long) s << 32) | (p & 0xffffffffL);
    }
    static int spinUnless(int n) { while (n > 0) { } return n; }
    static int spinPrinting(int n) { while (n > 0) { sideEffects++; if (sideEffects % 1000 == 0) System.out.print(""); } return n; }
    static int fillUntilThrow(int[] a) { int i = 0; while (true) { a[i] = i * 3; i++; } }
    static int divides(int a, int b) { int q = a / b; int r = a % b; return q * 10 + r + a / 7; }
    static String normalise(String s, boolean normaliseWhite, boolean stripLeading, boolean trimTrailing) {
        StringBuilder accum = new StringBuilder();
        boolean lastWasWhite = false, reachedNonWhite = false, skipped = false;
        for (int offset = 0; offset < s.length(); offset++) {
            char c = s.charAt(offset);
            if (normaliseWhite) {
                if (c == ' ' || c == '\\n') {
                    if (stripLeading && !reachedNonWhite) continue;
                    if (lastWasWhite) continue;
                    if (trimTrailing) { skipped = true; continue; }
                    accum.append(' ');
                    lastWasWhite = true;
                    continue;
                } else {
                    lastWasWhite = false;
                    reachedNonWhite = true;
                    if (skipped) { accum.append(' '); skipped = false; }
                }
            }
            accum.append(c);
        }
        return accum.toString();
    }
    static int mixed(int x, int[] arr) {
        int r = 0;
        for (int i = 0; i < arr.length; i++) {
            if (arr[i] < 0) break;
            if (arr[i] == x) { r = i; continue; }
            r += arr[i] % 3;
        }
        return r;
    }
}
"""


@pytest.fixture(scope="module")
def shapes(java_home, tmp_path_factory):
    src = tmp_path_factory.mktemp("pegshapes")
    (src / "PegShapes.java").write_text(SHAPES)
    run_javac([*javac_command(java_home), "-d", str(src), str(src / "PegShapes.java")], check=True)
    cf = read_class((src / "PegShapes.class").read_bytes())
    h = ClassHierarchy(classpath=[src])
    reverted = {}
    for m in cf.methods:
        if m.code_attribute() is not None and m.name not in ("<init>", "<clinit>"):
            ir = lift_method(cf, m, h)
            try:
                reverted[m.name] = (ir, revert_peg(build_peg(ir), ir))
            except RevertUnsupported:
                pass
    out = tmp_path_factory.mktemp("pegshapes-out") / "out"
    _, report = optimize_input(src, out, Stage.PEG)
    return src, out, reverted, report


def _stmts(ir):
    return [s for b in ir.block_order() for s in b.stmts]


def _ops(ir, op):
    return [s for s in _stmts(ir) if isinstance(s, Binary) and s.op == op]


def test_round_trip_removes_a_redundant_computation(shapes):
    _, _, rev, _ = shapes
    before, after = rev["cse"]
    assert len(_ops(before, "mul.i")) == 2 and len(_ops(after, "mul.i")) == 1


def test_round_trip_removes_a_dead_store(shapes):
    _, _, rev, _ = shapes
    before, after = rev["deadStore"]
    assert len(_ops(before, "mul.i")) == 1 and _ops(after, "mul.i") == []


def test_round_trip_removes_copies(shapes):
    _, _, rev, _ = shapes
    before, after = rev["copies"]
    assert sum(isinstance(s, Copy) for s in _stmts(before)) >= 3
    assert not any(isinstance(s, Copy) for s in _stmts(after))


def _loop_blocks(ir):
    """Blocks on a cycle of the reverted CFG (a back edge to a block at or before the source)."""
    import networkx as nx
    g = nx.DiGraph()
    for b in ir.block_order():
        for t in b.successors():
            g.add_edge(b.id, t)
    return {n for comp in nx.strongly_connected_components(g)
            if len(comp) > 1 or any(g.has_edge(x, x) for x in comp) for n in comp}


def test_loop_invariant_product_leaves_the_loop(shapes):
    _, _, rev, _ = shapes
    before, after = rev["licm"]
    inside = _loop_blocks(after)
    muls = [b.id for b in after.block_order() for s in b.stmts if isinstance(s, Binary) and s.op == "mul.i"]
    assert len(muls) == 1 and muls[0] not in inside
    muls_before = [b.id for b in before.block_order() for s in b.stmts if isinstance(s, Binary) and s.op == "mul.i"]
    assert muls_before[0] in _loop_blocks(before)  # javac computed it in the loop


def test_two_outputs_of_one_loop_come_from_one_loop(shapes):
    _, _, rev, _ = shapes
    _, after = rev["twoOutputs"]
    import networkx as nx
    g = nx.DiGraph()
    for b in after.block_order():
        for t in b.successors():
            g.add_edge(b.id, t)
    cycles = [c for c in nx.strongly_connected_components(g) if len(c) > 1 or any(g.has_edge(x, x) for x in c)]
    assert len(cycles) == 1


def test_divisions_keep_their_checks_once(shapes):
    _, _, rev, _ = shapes
    _, after = rev["divides"]
    assert len(_ops(after, "div.i")) == 2 and len(_ops(after, "rem.i")) == 1  # a / 7 needs no check


def test_infinite_loops_stay_where_they_were(shapes):
    _, _, rev, _ = shapes
    for name in ("spinUnless", "spinPrinting", "fillUntilThrow"):
        assert _loop_blocks(rev[name][1]), name


@pytest.mark.slow  # the slow tier: 19 s of CPU, over the fast tier's share (docs/ci.md, session 16)
def test_round_tripped_shapes_behave_identically(shapes, java_home, verifier):
    src, out, _, report = shapes
    statuses = {m.name: (m.status, m.reason) for m in report.methods if m.name not in ("<init>", "<clinit>")}
    # the whitespace normaliser (the shape of jsoup's Entities.escape, which the round trip once got wrong):
    # rewritten, or left alone because a value computed in a joined branch would be needed again
    status, reason = statuses.pop("normalise")
    assert status == "rewritten" or reason == "an effect is needed again after the branch it ran in"
    assert {n: st for n, (st, _) in statuses.items()} == \
        {n: "rewritten" for n in ("cse", "deadStore", "copies", "licm", "twoOutputs", "spinUnless", "spinPrinting",
                                  "fillUntilThrow", "divides", "mixed")}
    proc = verifier(out)
    assert proc.returncode == 0 and "verify_errors=0" in proc.stdout, proc.stdout[-2000:]
    calls = []
    for name, desc in (("cse", "(II)I"), ("deadStore", "(I)I"), ("copies", "(I)I"), ("licm", "(III)I"),
                       ("twoOutputs", "(I)J"), ("divides", "(II)I"), ("mixed", "(I[I)I")):
        calls += [dt.Call("PegShapes", name, desc, args) for args in dt.generate_args(desc, 25, seed=11)]
    texts = ["Apple  <b>red</b> ", "  lead and trail  ", "a\n\nb", "", " ", "x y  z"]
    calls += [dt.Call("PegShapes", "normalise", "(Ljava/lang/String;ZZZ)Ljava/lang/String;", (t, a, b, c))
              for t in texts for a in (0, 1) for b in (0, 1) for c in (0, 1)]
    # the infinite loops: only inputs on which the original ends (the others would time out on both sides)
    calls += [dt.Call("PegShapes", "spinUnless", "(I)I", (n,)) for n in (0, -1, -2**31)]
    calls += [dt.Call("PegShapes", "spinPrinting", "(I)I", (n,)) for n in (0, -5)]
    calls += [dt.Call("PegShapes", "fillUntilThrow", "([I)I", (a,)) for a in ([], [1, 2, 3], None)]
    result = dt.compare(src, out, calls, java_home=java_home, timeout_ms=3000)
    assert result.mismatches == [], result.report()
    assert result.compared > 0.9 * len(calls)  # loops to 2**31 on generated extremes time out on both sides
    # and a spinning input still spins (times out) after the round trip
    spin = dt.run_jvm(out, [dt.Call("PegShapes", "spinUnless", "(I)I", (1,))], java_home=java_home,
                      timeout_ms=1500)
    assert spin[0].kind == "TIMEOUT"


def test_irreducible_control_flow_is_reported(java_home, tmp_path):
    from peggy_jvm.ir.nodes import Block, Const, INT, IRMethod, Return, Var
    a = Var(0, INT, "a")
    blocks = {
        0: Block(0, [], If(__import__("peggy_jvm.ir.nodes", fromlist=["Cond"]).Cond.EQ, a, Const(INT, 0), 1, 2)),
        1: Block(1, [], Goto(2)),
        2: Block(2, [], If(__import__("peggy_jvm.ir.nodes", fromlist=["Cond"]).Cond.EQ, a, Const(INT, 1), 1, 3)),
        3: Block(3, [], Return(a)),
    }
    m = IRMethod("C", "m", "(I)I", True, [a], blocks, 0)
    with pytest.raises(PegUnsupported, match="irreducible"):
        build_peg(m)


# -- loops off the sigma chain (dead-loop deletion makes them) --------------------------------------------------
PURE_LOOPS = r"""
public class PureLoops {
    static int sumNested(int n, int m) { int s = 0; for (int i = 0; i < n; i++) { for (int j = 0; j < m; j++) { s += j; } } return s; }
    static int innerPerOuter(int n, int m) {
        int s = 0;
        for (int i = 0; i < n; i++) { int t = 0; for (int j = 0; j < m; j++) { t += i ^ j; } s += t * 3; }
        return s;
    }
    static int afterEffect(int[] a, int n) {
        int s = 0; for (int i = 0; i < n; i++) { s += i; }
        a[0] = s; int k = a[1];
        int u = 0; for (int j = 0; j < n; j++) { u += k ^ j; }
        return u + s;
    }
    static int effectBefore(int[] a, int n) { a[0] += 1; int s = 0; for (int i = 0; i < n; i++) { s += i ^ 5; } return s + a[0]; }
    static int inBranch(int n, boolean c) { int s = 0; for (int i = 0; i < n; i++) { s += i * i; } if (c) { return s; } return -1; }
}
"""


def test_pure_loops_off_the_sigma_chain_revert_where_their_values_are_wanted(java_home, tmp_path):
    """Extraction with the safe rules (dead-loop deletion included) takes these effect-free loops off the sigma
    chain; the reverter must compute each where its value is wanted (an inner loop again at every outer iteration,
    a loop reading a value an effect made only after that effect) and the result must run like the original."""
    from peggy_jvm.budget import DEFAULT_WORK_BUDGET
    from peggy_jvm.peg.check import _kinds
    from peggy_jvm.peg.loops import pure_loops
    from peggy_jvm.peg.ops import T
    from peggy_jvm.pegextract.select import extract_peg, loops_on_sigma
    from peggy_jvm.rules.policy import safe_rules
    from peggy_jvm.saturate import saturate

    (tmp_path / "PureLoops.java").write_text(PURE_LOOPS)
    run_javac([*javac_command(java_home), "-d", str(tmp_path), str(tmp_path / "PureLoops.java")],
              check=True)
    cf = read_class((tmp_path / "PureLoops.class").read_bytes())
    h = ClassHierarchy(classpath=[tmp_path])
    off_chain = 0
    for m in cf.methods:
        if m.name in ("<init>", "<clinit>"):
            continue
        ir = lift_method(cf, m, h)
        peg = build_peg(ir)
        new, _ = extract_peg(peg, saturate(peg, safe_rules(), DEFAULT_WORK_BUDGET.saturation()))
        check_peg(new)
        assert loops_on_sigma(new) == []
        kinds = _kinds(new)
        reached = new.reachable()
        on_sigma = {new.nodes[n].children[1] for n in reached
                    if new.nodes[n].op == "eval" and kinds[new.nodes[n].children[0]] is T.SIGMA}
        off = {n for n in reached if new.nodes[n].op == "pass"} - on_sigma
        assert off <= pure_loops(new)
        off_chain += len(off)
        out = revert_peg(new, ir)
        params, ret = dt.parse_descriptor(m.descriptor)
        for args in dt.generate_args(m.descriptor, 30, 3):
            args = [max(-40, min(40, a)) if isinstance(a, int) else a for a in args]
            if m.name in ("afterEffect", "effectBefore") and (args[0] is None or len(args[0]) < 2):
                continue
            results = []
            for method in (ir, out):
                heap = I.Heap(h)
                o = I.run_method(method, [TI.to_interp(a, p) for a, p in zip(args, params)], heap, None,
                                 budget=TI.BUDGET)
                results.append(TI.to_result(o, heap.take_output(), ret))
            assert dt.same_result(*results), (m.name, args, results)
    assert off_chain >= 4  # the test is about such loops: they must be there
