"""``optimize --stage full``: saturation with the safe rule groups, MaxSAT extraction with the phi-profile
checker, reversion, lowering (peggy_jvm/pipeline.py, peggy_jvm/pegextract/select.py).

Purpose-written Java: constant folding through branches, loop-invariant code motion, strength reduction (no
``imul`` left in the loop), dead-loop deletion (also of loop nests), loops off the sigma chain, whole-loop closed
forms, loop-based code motion, branch hoisting out of loops, conditional constant folding, partial redundancy
elimination, loop peeling, nested loops, loops that never terminate, effects under conditions; each asserted on
the disassembly against the original's shape. Every output verifies under -Xverify:all and behaves like the original (differential runner, generated arguments); the
fixtures (release17) go through the full stage without an unnamed fallback and print exactly what they printed.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from peggy_jvm.classfile.model import Access
from peggy_jvm.classfile.reader import read_class
from conftest import javac_command, keep_every_rewrite
from support.javac_cache import run_javac
from support.javap import javap
from peggy_jvm.budget import DEFAULT_METHOD_TIMEOUT
from peggy_jvm.pipeline import Stage, optimize_input

SOURCE = r"""
public class Full {
    static int fold(int x) { int a = 3; int b = a * 4; if (b > 10) { return x + b; } else { return x - b; } }
    static int foldBranch(int x) { int k = 6; int y; if (k % 2 == 0) { y = k * 7; } else { y = k + 1; } return x * y; }
    static int licm(int n, int a, int b) { int s = 0; for (int i = 0; i < n; i++) { s += a * b + i; } return s; }
    static int strength(int n) { int s = 0; for (int i = 0; i < n; i++) { s += i * 5; } return s; }
    static long strengthLong(int n) { long s = 0; for (long i = 0; i < n; i++) { s += i * 12L; } return s; }
    static int deadLoop(int n) { int s = 0; for (int i = 0; i < n; i++) { s += i; } return n; }
    static int nested(int n, int m) {
        int s = 0;
        for (int i = 0; i < n; i++) { for (int j = 0; j < m; j++) { s += (n * m) + j * 3; } }
        return s;
    }
    static int callCond(int x) { if (x > 0) { System.out.println(x); } return x * 2; }
    static int divs(int x, int y) { int q = x / 3; if (y != 0) { q += x % y; } return q * 8; }
    static int arr(int[] a) { int s = 0; for (int i = 0; i < a.length; i++) { s += a[i] * 4; } return s; }
    static double dbl(double d, int n) { double s = 0; for (int i = 0; i < n; i++) { s += d * 2.0; } return s; }
    static int spinUnless(int x) { while (x < 0) { x = x | 0; } return x + 0; }
    static int forever(int x) { while (true) { x = x * 1 + 1; } }
    static void foreverPrint() { int i = 0; while (true) { i = i + 0; } }
    // loops off the sigma chain: dead-loop deletion takes effect-free loops off it; the reverter computes them
    // where their values are wanted (an inner loop inside its outer loop, again at every outer iteration)
    static int deadNested(int n, int m) { int s = 0; for (int i = 0; i < n; i++) { for (int j = 0; j < m; j++) { s += j; } } return n; }
    static int sumNested(int n, int m) { int s = 0; for (int i = 0; i < n; i++) { for (int j = 0; j < m; j++) { s += j; } } return s; }
    // whole-loop closed forms: a constant trip count folds to a constant, a symbolic one to n <= 0 ? 7 : 7 + n * 5
    static int closedForm(int x) { int s = 0; for (int i = 0; i < 10; i++) { s += 3; } return s + x; }
    static int closedFormN(int n) { int s = 7; for (int i = 0; i < n; i++) { s += 5; } return s; }
    // loop-based code motion: only the last y is used, so i * 3 is computed once, after the loop (i += 2 has no
    // closed form here, so the loop itself stays)
    static int codeMotion(int n) { int i = 0; int y; while (true) { y = i * 3; if (i >= n) { break; } i += 2; } return y; }
    // branch hoisting: the branch on the loop-invariant k leaves the loop (s * 3 is shared by both arms)
    static int hoistBranch(int n, int k) { int s = 1; for (int i = 0; i < n; i++) { if (k > 0) { s = s * 3 + 2; } else { s = s * 3 + 5; } } return s; }
    // conditional constant folding: in the arm where x == 5, x * 3 is 15, which the other arm is too
    static int condFold(int x) { int y; if (x == 5) { y = x * 3; } else { y = 15; } return y; }
    // partial redundancy: x * y is computed in one arm and again after the join; the rewritten code computes it
    // once on every path (x - x is there to make the PEG cheaper, else the method is left as it is)
    static int pre(int x, int y, boolean c) { int r; if (c) { r = x * y + 1; } else { r = 0; } return r + x * y + (x - x); }
    // loop peeling: the first iteration goes in front of the loop, where the flag (or prev) is a constant, so
    // the test of it leaves the loop body (with effects in the loop too)
    static int peelFirst(int[] a) {
        boolean first = true; int s = 0;
        for (int i = 0; i < a.length; i++) { if (first) { s = a[i]; first = false; } else { s = s * 31 + a[i]; } }
        return s;
    }
    // exception handlers: the code around a try region is optimized too (k * 4 becomes a shift); what the
    // handler catches and rethrows is unchanged (sumParsed: the self-check does not prove the loop version yet)
    static int parseOr(String s, int k) {
        int r;
        try { r = Integer.parseInt(s) * (k * 4); } catch (NumberFormatException e) { r = -1 * (k * 4); }
        return r;
    }
    static int sumParsed(String[] xs, int k) {
        int s = 0;
        for (int i = 0; i < xs.length; i++) {
            String x = xs[i];
            try { s += Integer.parseInt(x) * (k * 8); } catch (NumberFormatException e) { s -= i * 3; }
        }
        return s;
    }
    // a loop left by a return: the exit is not carried out of the loop as a 0/1 variable and tested again
    static boolean allTrue(boolean[] a) { for (boolean b : a) { if (!b) { return false; } } return true; }
    // line numbers: an exception thrown by the rewritten code names the original source line
    static int lineOf(int[] a, int k) {
        int s = 0;
        for (int i = 0; i < k; i++) { s += k * 4; }
        return s + a[k];
    }
    static int peelPrev(int n) { int prev = 7; int s = 0; for (int i = 0; i < n; i++) { s += i - prev; prev = 3; } return s; }
    static String peelJoin(int n) {
        StringBuilder sb = new StringBuilder(); boolean first = true;
        for (int i = 0; i < n; i++) { if (!first) { sb.append(','); } sb.append(i); first = false; }
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        System.out.println(fold(5) + " " + foldBranch(3) + " " + licm(10, 3, 4) + " " + strength(100));
        System.out.println(strengthLong(1000) + " " + deadLoop(50) + " " + nested(7, 9) + " " + callCond(3));
        System.out.println(divs(100, 7) + " " + arr(new int[] {1, 2, 3}) + " " + dbl(1.5, 4) + " " + spinUnless(4));
        System.out.println(deadNested(5, 6) + " " + sumNested(5, 6) + " " + closedForm(4) + " " + closedFormN(9) + " "
                           + codeMotion(11) + " " + hoistBranch(5, 1) + " " + hoistBranch(5, -1) + " " + condFold(5)
                           + " " + condFold(6) + " " + pre(3, 4, true) + " " + pre(3, 4, false));
        System.out.println(peelFirst(new int[] {4, 5, 6}) + " " + peelFirst(new int[0]) + " " + peelPrev(6) + " "
                           + peelPrev(-2) + " " + peelJoin(5) + " [" + peelJoin(0) + "]");
        System.out.println(parseOr("12", 3) + " " + parseOr("x", 3) + " " + sumParsed(new String[] {"1", "a", "30"}, 2));
        try {
            parseOr(null, 1);
        } catch (NumberFormatException e) {
            System.out.println("rethrown: " + e.getMessage());
        }
        try {
            lineOf(new int[2], 5);
        } catch (ArrayIndexOutOfBoundsException e) {
            System.out.println("thrown at line " + e.getStackTrace()[0].getLineNumber());
        }
        Thread t = new Thread(() -> forever(1));
        t.setDaemon(true);
        t.start();
        Thread u = new Thread(Full::foreverPrint);
        u.setDaemon(true);
        u.start();
        Thread.sleep(300);
        System.out.println("still looping: " + t.isAlive() + " " + u.isAlive());
    }
}
"""


@pytest.fixture(scope="module")
def compiled(java_home, tmp_path_factory) -> tuple[Path, Path, dict]:
    src_dir = tmp_path_factory.mktemp("full-src")
    (src_dir / "Full.java").write_text(SOURCE)
    orig = tmp_path_factory.mktemp("full-orig")
    run_javac([*javac_command(java_home), "-d", str(orig), str(src_dir / "Full.java")], check=True)
    out = tmp_path_factory.mktemp("full-out") / "out"
    with pytest.MonkeyPatch.context() as mp:
        keep_every_rewrite(mp)  # the rewrites' shapes and behaviour are tested here, not whether they pay
        _, report = optimize_input(orig, out, Stage.FULL, jobs=1)
    rows = {m.name: m for m in report.methods if m.class_name == "Full"}
    return orig, out, rows


def _javap(java_home: Path, cp: Path, cls: str) -> dict[str, list[tuple[int, str, str]]]:
    """method name -> [(offset, mnemonic, operands)] from ``javap -c -p``."""
    text = javap(java_home, "-c", "-p", "-cp", str(cp), cls, check=True).stdout
    out: dict[str, list[tuple[int, str, str]]] = {}
    cur: list | None = None
    for line in text.splitlines():
        m = re.match(r"\s+(?:static |public |private )*\S+ (\w+)\(", line)
        if m and line.rstrip().endswith(";"):
            cur = out.setdefault(m.group(1), [])
            continue
        m = re.match(r"\s+(\d+): (\w+)\s*(.*)", line)
        if m and cur is not None:
            cur.append((int(m.group(1)), m.group(2), m.group(3)))
    return out


def _loop_ranges(code: list[tuple[int, str, str]]) -> list[tuple[int, int]]:
    """(target, source) of every backward jump: the instructions in between are a loop."""
    ranges = []
    for off, op, args in code:
        if op.startswith(("goto", "if")) and args.split()[0].isdigit() and int(args.split()[0]) <= off:
            ranges.append((int(args.split()[0]), off))
    return ranges


# methods whose optimized code the self-check (re-lift, validate against the original) does not prove today
# (the method then keeps its original code, DESIGN section 6, step 2). Empty since theta-bisimulation goes
# through loop nests: the re-lifted nest of `nested` (n * m hoisted, j * 3 strength-reduced) is proved equal.
SELF_CHECK_REFUSES: set[str] = set()
# the methods the full stage must rewrite (each one an optimization the shape tests below look at)
MUST_REWRITE = ("fold", "foldBranch", "licm", "strength", "nested", "arr", "deadLoop", "deadNested", "sumNested",
                "closedForm", "closedFormN", "codeMotion", "hoistBranch", "condFold", "pre", "peelFirst", "peelPrev",
                "peelJoin", "lineOf", "allTrue", "parseOr")


def test_the_self_check_keeps_what_it_cannot_prove(tmp_path, java_home):
    """The emitted code of a method is validated against the original: other code (x + 2 for x + 1) is refused,
    the same code passes."""
    from peggy_jvm.classfile.hierarchy import ClassHierarchy
    from peggy_jvm.classfile.reader import read_class
    from peggy_jvm.budget import DEFAULT_WORK_BUDGET
    from peggy_jvm.pipeline import MethodUnchanged, _self_check

    (tmp_path / "Two.java").write_text("class Two { static int a(int x) { return x + 1; } "
                                       "static int b(int x) { return x + 2; } }")
    run_javac([*javac_command(java_home), "-d", str(tmp_path), str(tmp_path / "Two.java")], check=True)
    cf = read_class((tmp_path / "Two.class").read_bytes())
    a = next(m for m in cf.methods if m.name == "a")
    b = next(m for m in cf.methods if m.name == "b")
    h = ClassHierarchy([tmp_path])
    _self_check(cf, a, a.code_attribute().data, h, DEFAULT_WORK_BUDGET)
    with pytest.raises(MethodUnchanged, match="self-check"):
        _self_check(cf, a, b.code_attribute().data, h, DEFAULT_WORK_BUDGET)


def test_a_selection_the_reverter_refuses_gives_way_to_the_next_cheapest(tmp_path, java_home, monkeypatch):
    """Extraction hands each candidate to the reverter (``extract_peg(accept=...)``); one it cannot schedule is
    blocked and the next cheapest is extracted, instead of the method keeping its original code. (lang3's
    NumberUtils.max and min once came out unrevertable and were kept as they were.) Here a reverter that refuses shifts
    turns x * 4 + x * 4 into x * 8 rather than x << 3, and the result runs like the original."""
    import peggy_jvm.pipeline as pipeline
    from peggy_jvm.revert.revert import RevertUnsupported

    (tmp_path / "M.java").write_text("public class M { static int f(int x) { return x * 4 + x * 4; } "
                                     "public static void main(String[] a) { for (String s : a) "
                                     "System.out.println(f(Integer.parseInt(s))); } }")
    run_javac([*javac_command(java_home), "-d", str(tmp_path), str(tmp_path / "M.java")], check=True)
    real, real_check, refused = pipeline.revert_peg, pipeline.check_revertible, []

    def refuse_shifts(peg):
        if any(n.op == "shl.i" for n in peg.nodes):
            refused.append(peg)
            raise RevertUnsupported("no shifts here")

    def no_shifts(peg, ir, **options):  # options: returns, rotate_loops, as pipeline._revert passes them
        refuse_shifts(peg)
        return real(peg, ir, **options)

    def no_shifts_check(peg, ir):  # the acceptance test's verdict (pipeline.revertible)
        refuse_shifts(peg)
        real_check(peg, ir)
    monkeypatch.setattr(pipeline, "revert_peg", no_shifts)
    monkeypatch.setattr(pipeline, "check_revertible", no_shifts_check)
    out = tmp_path / "out"
    _, report = optimize_input(tmp_path / "M.class", out / "M.class", Stage.FULL)
    row = next(r for r in report.methods if r.name == "f")
    assert refused and row.status == "rewritten", row.reason
    assert row.cost_after < row.cost_before
    code = _javap(java_home, out, "M")["f"]
    assert "imul" in {op for _, op, _ in code} and "ishl" not in {op for _, op, _ in code}, code
    args = ["0", "1", "-3", "536870912", "2147483647"]
    run = [str(java_home / "bin" / "java"), "-Xverify:all", "-cp"]
    before = subprocess.run(run + [str(tmp_path), "M", *args], capture_output=True, text=True, check=True).stdout
    after = subprocess.run(run + [str(out), "M", *args], capture_output=True, text=True, check=True).stdout
    assert after == before and len(before.split()) == len(args)


def test_report_rows(compiled):
    _, _, rows = compiled
    assert all(r.status != "fallback" for r in rows.values()), {n: r.reason for n, r in rows.items()}
    for name in MUST_REWRITE:
        r = rows[name]
        if name in SELF_CHECK_REFUSES:  # optimized, but the self-check cannot prove the emitted code yet
            assert r.status == "unchanged" and r.reason.startswith("self-check: "), (name, r.reason)
            continue
        assert r.status == "rewritten", (name, r.reason)
        assert r.cost_after < r.cost_before, name
        assert {"full", "full.saturate", "full.extract"} <= set(r.time_ms), r.time_ms
    for r in rows.values():
        if r.status == "unchanged" and r.cost_before is not None:
            assert r.cost_after == r.cost_before


def test_rewritten_code_keeps_the_lines_of_its_effects(compiled, java_home):
    """Each effect of the rewritten code (call, array access, field access, ...) carries the line of the
    statement it came from: the LineNumberTable is kept, and the stack trace of an exception in a rewritten
    method names the original line (main prints it; the test below compares main's output)."""
    orig, out, rows = compiled
    for name in ("callCond", "lineOf", "peelJoin"):
        assert rows[name].status == "rewritten" and "LineNumberTable" not in rows[name].reason, rows[name].reason
    text = javap(java_home, "-l", "-c", "-p", "-cp", str(out), "Full", check=True).stdout
    src = SOURCE.splitlines()
    line_of_throw = next(k for k, t in enumerate(src, 1) if "return s + a[k];" in t)
    section = text[text.index("static int lineOf("):]
    section = section[:section.index("\n\n")]  # javap ends each method with a blank line
    table = section[section.index("LineNumberTable:"):]
    iaload = int(re.search(r"(\d+): iaload", section).group(1))
    entries = [(int(pc), int(line)) for line, pc in re.findall(r"line (\d+): (\d+)", table)]
    assert max((pc, line) for pc, line in entries if pc <= iaload)[1] == line_of_throw, table


def test_output_verifies_and_main_prints_the_same(compiled, verifier, java_home):
    orig, out, _ = compiled
    proc = verifier(out)
    assert proc.returncode == 0 and "verify_errors=0" in proc.stdout, proc.stdout[-3000:]
    run = [str(java_home / "bin" / "java"), "-Xverify:all", "-cp"]
    a = subprocess.run(run + [str(orig), "Full"], capture_output=True, text=True, timeout=120)
    b = subprocess.run(run + [str(out), "Full"], capture_output=True, text=True, timeout=120)
    assert a.returncode == 0 and "still looping: true true" in a.stdout
    assert (b.returncode, b.stdout, b.stderr) == (a.returncode, a.stdout, a.stderr)


def test_constant_folding_through_branches(compiled, java_home):
    _, out, _ = compiled
    code = _javap(java_home, out, "Full")
    for name in ("fold", "foldBranch"):
        ops = [op for _, op, _ in code[name]]
        assert not any(op.startswith("if") for op in ops), (name, ops)  # the branch on a constant is gone
        assert "imul" not in ops or name == "foldBranch", ops
    assert "irem" not in [op for _, op, _ in code["foldBranch"]]


def test_strength_reduction_leaves_no_multiplication_in_the_loop(compiled, java_home):
    orig, out, _ = compiled
    before = _javap(java_home, orig, "Full")
    after = _javap(java_home, out, "Full")
    for name, mul in (("strength", "imul"), ("arr", "imul"), ("strengthLong", "lmul")):
        in_loop_before = [op for off, op, _ in before[name] for lo, hi in _loop_ranges(before[name]) if lo <= off <= hi]
        assert mul in in_loop_before or (name == "arr" and "ishl" in in_loop_before), name
        loops = _loop_ranges(after[name])
        assert loops, name  # the loop itself stays
        in_loop = [op for off, op, _ in after[name] for lo, hi in loops if lo <= off <= hi]
        assert mul not in in_loop, (name, after[name])


def test_loop_invariant_code_motion(compiled, java_home):
    _, out, _ = compiled
    code = _javap(java_home, out, "Full")
    for name in ("licm", "nested"):
        if name in SELF_CHECK_REFUSES:
            continue
        loops = _loop_ranges(code[name])
        assert loops
        in_loop = [op for off, op, _ in code[name] for lo, hi in loops if lo <= off <= hi]
        muls = [op for _, op, _ in code[name] if op == "imul"]
        if name == "licm":
            assert muls and "imul" not in in_loop, code[name]
        else:  # n * m leaves the inner loop (the reverter keeps it in the outer one); j * 3 is strength-reduced
            inner = min(loops, key=lambda r: r[1] - r[0])
            assert [op for off, op, _ in code[name] if inner[0] <= off <= inner[1] and op == "imul"] == [], code[name]


def _cycles(code: list[tuple[int, str, str]]) -> list[set[int]]:
    """The loops of the method: strongly connected parts of its control-flow graph (offsets of the
    instructions in each). A backward jump alone is not a loop (the lowering may place a branch arm after a
    return and jump back to the join)."""
    import networkx as nx

    g = nx.DiGraph()
    for k, (off, op, args) in enumerate(code):
        g.add_node(off)
        nxt = code[k + 1][0] if k + 1 < len(code) else None
        target = args.split()[0] if args else ""
        if op.startswith(("if", "goto")) and target.isdigit():
            g.add_edge(off, int(target))
        if nxt is not None and not op.startswith(("goto", "ireturn", "lreturn", "freturn", "dreturn", "areturn",
                                                  "return", "athrow", "tableswitch", "lookupswitch")):
            g.add_edge(off, nxt)
    return [c for c in nx.strongly_connected_components(g) if len(c) > 1 or any(g.has_edge(x, x) for x in c)]


def _in_loops(code: list[tuple[int, str, str]]) -> list[str]:
    inside = set().union(*_cycles(code))
    return [op for off, op, _ in code if off in inside]


def test_dead_loops_are_deleted_and_infinite_loops_are_kept(compiled, java_home):
    from peggy_jvm.rules.policy import EXCLUDED_RULES, safe_rules

    orig, out, _ = compiled
    before = _javap(java_home, orig, "Full")
    code = _javap(java_home, out, "Full")
    assert "eval-invariant-heap" not in EXCLUDED_RULES
    assert "eval-invariant-heap" in {r.name for r in safe_rules()}
    for name in ("deadLoop", "deadNested"):  # loops whose values nobody reads and that provably end
        assert len(_loop_ranges(before[name])) == (1 if name == "deadLoop" else 2)
        assert _cycles(code[name]) == [], (name, code[name])
        assert [op for _, op, _ in code[name]] == ["iload_0", "ireturn"], code[name]
    for name in ("forever", "foreverPrint", "spinUnless"):
        assert _loop_ranges(code[name]), (name, code[name])  # never or not provably terminating: kept


def test_loops_off_the_sigma_chain_are_computed_where_wanted(compiled, java_home):
    """sumNested's loops have no effect: both leave the sigma chain, and the inner one (whose trip count does
    not vary in the outer loop) must still run at every outer iteration (it once came out as s = 0)."""
    _, out, rows = compiled
    code = _javap(java_home, out, "Full")
    assert rows["sumNested"].status == "rewritten"
    loops = _cycles(code["sumNested"])
    assert len(loops) == 1, code["sumNested"]  # one strongly connected part: the two loops are nested
    assert len(_loop_ranges(code["sumNested"])) == 2, code["sumNested"]  # two back edges: two loops


def test_whole_loop_closed_forms(compiled, java_home):
    orig, out, _ = compiled
    before = _javap(java_home, orig, "Full")
    code = _javap(java_home, out, "Full")
    for name in ("closedForm", "closedFormN"):
        assert _cycles(before[name]), name
        assert _cycles(code[name]) == [], (name, code[name])
    # 10 iterations of s += 3: the constant 30 (added second, as javac writes x + 30)
    assert [(op, args) for _, op, args in code["closedForm"]] == [("iload_0", ""), ("bipush", "30"), ("iadd", ""),
                                                                  ("ireturn", "")], code["closedForm"]
    assert "imul" in [op for _, op, _ in code["closedFormN"]]  # 7 + n * 5 when n > 0


def test_loop_based_code_motion(compiled, java_home):
    orig, out, _ = compiled
    before = _javap(java_home, orig, "Full")
    code = _javap(java_home, out, "Full")
    assert "imul" in _in_loops(before["codeMotion"])
    assert _cycles(code["codeMotion"]), code["codeMotion"]  # i += 2: the loop stays
    assert "imul" not in _in_loops(code["codeMotion"]), code["codeMotion"]
    assert [op for _, op, _ in code["codeMotion"]].count("imul") == 1, code["codeMotion"]


def test_branch_hoisting_out_of_loops(compiled, java_home):
    orig, out, _ = compiled
    before = _javap(java_home, orig, "Full")
    code = _javap(java_home, out, "Full")

    def branches(ops: list[str]) -> int:
        return sum(1 for op in ops if op.startswith("if"))
    assert branches(_in_loops(before["hoistBranch"])) == 2  # the exit test and k > 0
    assert _cycles(code["hoistBranch"]), code["hoistBranch"]  # s * 3 + c has no closed form here
    assert branches(_in_loops(code["hoistBranch"])) == 1, code["hoistBranch"]  # only the exit test is left
    # k > 0 tested once, before the loop, and the loop's entry test (it is tested at its bottom too, inside:
    # revert._rotate_loops; both arms of k > 0 enter the loop, so a goto to its bottom test would be one more
    # jump than javac's, revert.tidy._enter_by_goto)
    assert branches([op for _, op, _ in code["hoistBranch"]]) - branches(_in_loops(code["hoistBranch"])) == 2


def test_conditional_constant_folding(compiled, java_home):
    orig, out, _ = compiled
    assert any(op.startswith("if") for _, op, _ in _javap(java_home, orig, "Full")["condFold"])
    code = _javap(java_home, out, "Full")
    assert [(op, args) for _, op, args in code["condFold"]] == [("bipush", "15"), ("ireturn", "")], code["condFold"]


def test_partial_redundancy_elimination(compiled, java_home):
    orig, out, _ = compiled
    assert [op for _, op, _ in _javap(java_home, orig, "Full")["pre"]].count("imul") == 2
    code = _javap(java_home, out, "Full")
    assert [op for _, op, _ in code["pre"]].count("imul") == 1, code["pre"]
    assert [op for _, op, _ in code["pre"]].count("isub") == 0, code["pre"]


def test_a_known_exit_is_not_tested_again(compiled, java_home):
    """Reversion makes the loop's exits one join that tests which exit was taken (a 0/1 variable); jump
    threading sends each exit straight to its own return, as javac wrote it, and the copies into the variable go."""
    orig, out, _ = compiled
    before = [op for _, op, _ in _javap(java_home, orig, "Full")["allTrue"]]
    after = [op for _, op, _ in _javap(java_home, out, "Full")["allTrue"]]
    branches = lambda ops: sum(1 for o in ops if o.startswith("if"))  # noqa: E731
    # the loop's exit test and the element test; the loop tested at its bottom, entered by a goto to that test
    # (revert.tidy._enter_by_goto)
    assert branches(before) == 2 and branches(after) == 2 and after.count("goto") == 1, after
    assert after.count("ireturn") == 2 and "pop" not in after, after


def test_methods_with_exception_handlers_are_optimized(compiled, java_home):
    """A try region is reverted as a catch-all range around the one statement that may throw, followed by the
    PEG's own dispatch (instanceof, and athrow of what no handler takes): the exception table is kept in shape,
    the code around it is optimized (no imul by 4 or 8 left)."""
    orig, out, rows = compiled
    text = javap(java_home, "-c", "-p", "-cp", str(out), "Full", check=True).stdout
    for name, mul in (("parseOr", "4"),):
        assert rows[name].status == "rewritten", rows[name].reason
        section = text[text.index(f"static int {name}("):]
        section = section[:section.index("\n\n")]
        assert "Exception table:" in section and " any" in section, section
        assert "instanceof" in section and "athrow" in section, section  # the dispatch: NumberFormatException or rethrow
        code = _javap(java_home, out, "Full")[name]
        assert not any(op.startswith(("iconst", "bipush")) and args == mul for _, op, args in code) or \
            "imul" not in _in_loops(code), code


@pytest.mark.parametrize("body, why", [
    ("try { return Integer.parseInt(s); } catch (NumberFormatException e) { return e.getMessage().length(); }",
     "the caught exception is used as a value"),  # caught as any Throwable: the verifier would need a cast
    ("int t = 0; for (int i = 0; i < 3; i++) { try { t += Integer.parseInt(s); } catch (RuntimeException e) { t--; } }"
     " return t;", "exception handling inside a loop"),
    ("synchronized (s) { return s.length(); }", "exception handling with monitors"),
])
def test_exception_handling_the_reverter_refuses(tmp_path, java_home, body, why):
    from peggy_jvm.classfile.hierarchy import ClassHierarchy
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.peg.build import build_peg
    from peggy_jvm.revert.revert import RevertUnsupported, revert_peg

    (tmp_path / "R.java").write_text(f"class R {{ static int f(String s) {{ {body} }} }}")
    run_javac([*javac_command(java_home), "-d", str(tmp_path), str(tmp_path / "R.java")], check=True)
    cf = read_class((tmp_path / "R.class").read_bytes())
    ir = lift_method(cf, next(m for m in cf.methods if m.name == "f"), ClassHierarchy([tmp_path]))
    with pytest.raises(RevertUnsupported, match=f"exception handlers are not reverted yet: {why}"):
        revert_peg(build_peg(ir), ir)


def test_loop_peeling(compiled, java_home):
    """The first iteration goes in front of the loop, where the first-iteration flag (or the previous value) is a
    constant: the test of the flag leaves the loop body, also when the loop appends to a builder."""
    orig, out, _ = compiled
    before = _javap(java_home, orig, "Full")
    code = _javap(java_home, out, "Full")

    def branches(ops: list[str]) -> int:
        return sum(1 for op in ops if op.startswith("if"))
    for name in ("peelFirst", "peelJoin"):
        assert len(_cycles(before[name])) == 1 and branches(_in_loops(before[name])) == 2  # the exit test, the flag
        assert len(_cycles(code[name])) == 1, code[name]  # still one loop
        assert branches(_in_loops(code[name])) == 1, code[name]  # only the exit test is left in it
        # plus the first exit test, in front; the loop tested at its bottom, entered by a goto to that test
        # (revert.tidy._enter_by_goto)
        assert branches([op for _, op, _ in code[name]]) == 2, code[name]
    # the first iteration's append(int) is in front of the loop, the loop appends the comma unconditionally
    appends = [off for off, op, args in code["peelJoin"] if op == "invokevirtual" and "append:(I)" in args]
    loop = set().union(*_cycles(code["peelJoin"]))
    assert len(appends) == 2 and len([a for a in appends if a not in loop]) == 1, code["peelJoin"]

    def uses_of_three(c: list[tuple[int, str, str]]) -> list[str]:
        """What the loop does with the constant 3 (or -3) it pushes: the next instruction."""
        inside = set().union(*_cycles(c))
        return [c[k + 1][1] for k, (off, op, args) in enumerate(c)
                if off in inside and (op == "iconst_3" or (op == "bipush" and args in ("3", "-3")))]
    # prev (7, then 3) is a variable of the loop, set to 3 in it; peeled, the loop computes with the constant
    assert [u.split("_")[0] for u in uses_of_three(before["peelPrev"])] == ["istore"]
    assert uses_of_three(code["peelPrev"]) and not any(u.startswith("istore") for u in uses_of_three(code["peelPrev"]))


LOOP_BOUNDS = {"licm": (0,), "strength": (0,), "strengthLong": (0,), "deadLoop": (0,), "nested": (0, 1),
               "dbl": (1,), "deadNested": (0, 1), "sumNested": (0, 1), "closedFormN": (0,), "codeMotion": (0,),
               "hoistBranch": (0,), "peelPrev": (0,), "peelJoin": (0,), "lineOf": (1,)}


def test_static_methods_agree_with_the_originals(compiled, java_home):
    import difftest as dt

    orig, out, _ = compiled
    cf = read_class((orig / "Full.class").read_bytes())
    calls = []
    for m in cf.methods:
        if not m.access & Access.STATIC or m.name in ("main", "<clinit>") or m.name.startswith(("forever", "lambda")):
            continue
        args = dt.generate_args(m.descriptor, count=25, seed=11)
        if m.name == "spinUnless":
            args = [a for a in args if a[0] >= 0]
        if m.name in LOOP_BOUNDS:  # loop bounds up to 2^31 only make the JVM time out on both sides
            args = [tuple(max(-1000, min(1000, v)) if k in LOOP_BOUNDS[m.name] else v for k, v in enumerate(a))
                    for a in args]
        calls.extend(dt.Call(cf.name, m.name, m.descriptor, a) for a in args)
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [], result.report()
    assert result.compared > 0.9 * len(calls)


# -- the fixtures -----------------------------------------------------------------------------------------------
# Reasons a method may keep its original code (named, not failures): the reverter's refusals and the extractor
# finding nothing cheaper that passes its checks.
NAMED_UNCHANGED = ("no cheaper PEG", "exception handlers are not reverted yet", "PEG too deep for the reverter",
                   "an effect is needed again after the branch it ran in", "irreducible",
                   "self-check: the emitted code is not proved", "emitted code ",
                   # the reverter refuses a value it cannot place (it used to give such a value a zero and leave the
                   # rest to the self-check); Branches.labeled: one counter shared by two inner loops
                   "a value that varies in a loop is needed outside it",
                   "a value of a loop off the sigma chain cannot be computed where it is needed")


@pytest.fixture(scope="module")
def full17(fixture_classes, tmp_path_factory):
    target = tmp_path_factory.mktemp("full-release17") / "out"
    with pytest.MonkeyPatch.context() as mp:
        keep_every_rewrite(mp)  # every rewrite the optimizer makes runs on the JVM below, whether or not it pays
        # the work budgets decide the output; the wall-clock safety net (60 s by default) fired on the slowest
        # fixture method at load ~16-20 on this 2-core machine, a fallback the assertions below do not mean to
        # count: ten times the default keeps a net against a hang
        _, report = optimize_input(fixture_classes["release17"], target, Stage.FULL, jobs=1,
                                   method_timeout=10 * DEFAULT_METHOD_TIMEOUT)
    return target, report


@pytest.mark.slow  # the slow tier: every fixture class through the full stage (full17: 220 s of a loaded run's 3,200)
def test_fixtures_have_no_unnamed_fallback(full17):
    _, report = full17
    fallbacks = {f"{m.class_name}.{m.name}{m.descriptor}": m.reason for m in report.methods
                 if m.status == "fallback"}
    assert fallbacks == {}
    odd = [(m.class_name, m.name, m.reason) for m in report.methods
           if m.status == "unchanged" and m.bytes_before and not m.reason.startswith(NAMED_UNCHANGED)
           and "not reverted" not in m.reason]
    assert odd == []
    rewritten = [m for m in report.methods if m.status == "rewritten"]
    assert len(rewritten) >= 30
    assert all(m.cost_after < m.cost_before for m in rewritten)


@pytest.mark.slow  # the slow tier: uses full17 (above)
def test_fixtures_verify_and_print_the_same(full17, fixture_classes, verifier, run_mains):
    from test_stage_classfile import runnable

    target, _ = full17
    proc = verifier(target)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "verify_errors=0" in proc.stdout
    names = runnable(fixture_classes["release17"])
    before = run_mains(fixture_classes["release17"], names)
    assert before.count(" end: ok\n") == len(names)
    assert run_mains(target, names) == before


@pytest.mark.slow  # the slow tier: uses full17 (above)
def test_fixture_static_methods_agree(full17, fixture_classes, java_home):
    import difftest as dt

    target, report = full17
    changed = {(m.class_name, m.name, m.descriptor) for m in report.methods if m.status == "rewritten"}
    calls = []
    for p in sorted(fixture_classes["release17"].glob("*.class")):
        cf = read_class(p.read_bytes())
        for m in cf.methods:
            if (cf.name, m.name, m.descriptor) not in changed or not m.access & Access.STATIC or m.name == "main":
                continue
            params, _ = dt.parse_descriptor(m.descriptor)
            if not all(d[0] in "ZBCSIJFD" or d == "Ljava/lang/String;" or
                       (d[0] == "[" and d.lstrip("[")[0] in "ZBCSIJFD") for d in params):
                continue
            calls.extend(dt.Call(cf.name, m.name, m.descriptor, a) for a in dt.generate_args(m.descriptor, 4, 5))
    result = dt.compare(fixture_classes["release17"], target, calls, java_home=java_home, timeout_ms=2000)
    real = [m for m in result.mismatches
            if "java/lang/StackOverflowError" not in (m.original.exception, m.rewritten.exception)]
    assert real == [], result.report()


# -- extract_peg on hand-made PEGs ------------------------------------------------------------------------------
def _identity_peg():
    from peggy_jvm.peg.graph import PEG

    peg = PEG(name="id", param_types=[])
    peg.root = peg.add("return", None, (peg.add("sigma0"), peg.add("param", 0)))
    peg.seal()
    return peg


def _saturated(peg):
    """``peg`` saturated as the full stage saturates it (safe rules, the default work budget)."""
    from peggy_jvm.budget import DEFAULT_WORK_BUDGET
    from peggy_jvm.rules.policy import safe_rules
    from peggy_jvm.saturate import saturate
    return saturate(peg, safe_rules(), DEFAULT_WORK_BUDGET.saturation())


def test_extract_returns_the_original_when_nothing_is_cheaper():
    from peggy_jvm.pegextract.select import extract_peg

    peg = _identity_peg()
    new, rep = extract_peg(peg, _saturated(peg))
    assert new is peg and rep.status == "original" and rep.cost_after == rep.cost_before


def test_extract_folds_and_reports_costs():
    from peggy_jvm.pegextract.cost import peg_cost
    from peggy_jvm.pegextract.select import extract_peg
    from peggy_jvm.peg.graph import PEG

    peg = PEG(name="f", param_types=[])
    x = peg.add("param", 0)
    three = peg.add("mul.i", None, (peg.add("const.i", 1), peg.add("const.i", 3)))
    peg.root = peg.add("return", None, (peg.add("sigma0"), peg.add("mul.i", None, (x, three))))
    peg.seal()
    new, rep = extract_peg(peg, _saturated(peg))
    assert new is not peg and rep.status in ("optimal (proved)", "best found", "greedy")
    assert rep.cost_before == peg_cost(peg) and rep.cost_after == peg_cost(new) < rep.cost_before
    assert "mul.i" not in {new.nodes[n].op for n in new.reachable()} or len(new.reachable()) < len(peg.reachable())


def test_loops_off_the_sigma_chain_are_refused():
    from peggy_jvm.pegextract.select import loops_on_sigma
    from peggy_jvm.peg.graph import PEG

    peg = PEG(name="l", param_types=[])
    s0, n = peg.add("sigma0"), peg.add("param", 0)
    t = peg.new_theta(1)
    peg.set_theta(t, peg.add("const.i", 0), peg.add("add.i", None, (t, peg.add("const.i", 1))))
    p = peg.add("pass", 1, (peg.add("ge.i", None, (t, n)),))
    value = peg.add("eval", 1, (t, p))
    peg.root = peg.add("return", None, (s0, value))
    peg.seal()
    # read for its value only, but it has no effect and its counter meets n: a pure loop the reverter computes
    # where its value is wanted (dead-loop deletion makes such PEGs)
    assert loops_on_sigma(peg) == []
    for cmp, step in (("gt.i", 1), ("ge.i", 2)):  # may never end (n = MAX_VALUE; a step that skips n): refused
        bad = PEG(name="bad", param_types=[])
        s0, n = bad.add("sigma0"), bad.add("param", 0)
        t = bad.new_theta(1)
        bad.set_theta(t, bad.add("const.i", 0), bad.add("add.i", None, (t, bad.add("const.i", step))))
        p = bad.add("pass", 1, (bad.add(cmp, None, (t, n)),))
        bad.root = bad.add("return", None, (s0, bad.add("eval", 1, (t, p))))
        bad.seal()
        assert loops_on_sigma(bad), (cmp, step)
    peg2 = PEG(name="l2", param_types=[])
    s0, n = peg2.add("sigma0"), peg2.add("param", 0)
    t = peg2.new_theta(1)
    peg2.set_theta(t, peg2.add("const.i", 0), peg2.add("add.i", None, (t, peg2.add("const.i", 1))))
    p = peg2.add("pass", 1, (peg2.add("ge.i", None, (t, n)),))
    peg2.root = peg2.add("return", None, (peg2.add("eval", 1, (s0, p)), peg2.add("eval", 1, (t, p))))
    peg2.seal()
    assert loops_on_sigma(peg2) == []
