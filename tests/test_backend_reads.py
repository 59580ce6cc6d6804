"""The back end's order of reads and array initializers: code rebuilt from a PEG (``--stage peg`` and ``--stage
full``) reads a field where javac's expression reads it, and fills an array initializer where its consumer
pushes it, on purpose-written Java.

Shapes are read off the rewritten bytecode: a field read just before the test that uses it (no local holding it,
``revert/tidy._reads_to_their_use``), but never moved past a call, a write of a field, an instruction that may
throw, or into a loop; the value of ``c ? 1 : 0`` kept on the stack through the next conditional
(``(i < low) | (i > high)``, ``revert/tidy._value_under_the_branch``); ``new String[][]{{..}}`` and ``new E(String.format(f, new Object[]{x}))`` as
javac's ``dup; index; value; aastore`` chains with no local and no ``new; pop`` (``ir/lower._initializers``).
The rewritten classes are verified (``-Xverify:all``) and run against javac's on chosen arguments, aliasing and
null receivers included.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import difftest as dt
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.pipeline import Stage
from support.fullstage import named_code, optimize_stages

SOURCE = """
public class Reads {
    int x;
    boolean b1, b2, b3;

    Reads(int x, boolean b1, boolean b2, boolean b3) { this.x = x; this.b1 = b1; this.b2 = b2; this.b3 = b3; }

    int hash() {
        int h = x;
        h = 31 * h + (b1 ? 1 : 0);
        h = 31 * h + (b2 ? 1 : 0);
        return 31 * h + (b3 ? 1 : 0);
    }

    void bump(int k) { x += k; }

    int beforeCall(int k) {
        int a = x;
        bump(k);
        return a * 3 + (b1 ? 1 : 0);
    }

    static int beforeWrite(Reads p, Reads q, int k) {
        int a = p.x;
        q.x = k;
        return a * 3 + (p.b1 ? 1 : 0);
    }

    static int beforeDivide(Reads p, int n, int d) {
        int a = p.x;
        int q = n / d;
        return q + a;
    }

    int pastDivide(int n, int d) {
        int a = x;
        int q = n / d;
        return q + a;
    }

    int intoLoop(int n) {
        int a = x;
        int s = 0;
        for (int i = 0; i < n; i++) s += a ^ i;
        return s;
    }

    static boolean outside(int i, int low, int high) { return i < low | i > high; }

    static String[][] table() {
        return new String[][]{{"a", "b"}, {"c", "d"}, {"e", "f"}};
    }

    static void check(Object o, String name) {
        if (o == null) throw new IllegalArgumentException(String.format("%s is null", new Object[]{name}));
    }

    static int run(int x, boolean b1, boolean b2, boolean b3, int k, int sel) {
        Reads r = new Reads(x, b1, b2, b3);
        Reads s = new Reads(-x, b3, b2, b1);
        switch (sel) {
            case 0: return r.hash() + s.hash();
            case 1: return r.beforeCall(k) + r.x;
            case 2: return beforeWrite(r, r, k) + r.x;
            case 3: return beforeWrite(r, s, k) + r.x + s.x;
            case 4: return beforeDivide(r, x, k);
            case 5: return beforeDivide(null, x, k);
            case 6: return r.pastDivide(x, k);
            case 7: return r.intoLoop(k & 15);
            case 8: return beforeWrite(null, s, k);
            case 9: check(b1 ? r : null, "r"); return 1;
            case 10: return (outside(x, k - 2, k + 2) ? 1 : 0) + (outside(k, x, x) ? 2 : 0);
            default: String[][] t = table(); return t.length * 31 + t[k & 1][1].hashCode() + t[2][0].length();
        }
    }
}
"""
METHODS = ["hash", "beforeCall", "beforeWrite", "beforeDivide", "pastDivide", "intoLoop", "outside", "table", "check",
           "run"]
RUN = "(IZZZII)I"
_STORES = {op.ISTORE, op.LSTORE, op.FSTORE, op.DSTORE, op.ASTORE}


@pytest.fixture(scope="module")
def built(java_home, tmp_path_factory):
    return optimize_stages(java_home, tmp_path_factory.mktemp("reads"), "Reads", SOURCE)


def _code(classes: Path) -> dict[str, list[tuple[int, int, str]]]:
    """Method name -> [(offset, base opcode, the member or class an instruction names, else its operand)]."""
    return named_code(classes / "Reads.class", METHODS)


@pytest.fixture(scope="module", params=[Stage.PEG, Stage.FULL], ids=["peg", "full"])
def shapes(request, built):
    src, outs = built
    out, report = outs[request.param]
    for name in METHODS:
        assert report[name].status in ("rewritten", "unchanged"), (name, report[name].reason)
    return _code(src), _code(out), report


def _ops(insns) -> list[int]:
    return [o for _, o, _ in insns]


def _index(insns, opcode: int, name: str | None = None) -> int:
    return next(k for k, (_, o, n) in enumerate(insns) if o == opcode and (name is None or n == name))


def test_a_field_is_read_where_its_test_reads_it(shapes):
    # 31 * h + (f ? 1 : 0) three times: each getfield of this just before its ifeq (the reverter emits the reads
    # first, in their order, and each value waited in a local: 3 stores and 3 loads); no local at all, and not
    # longer than javac's, which stores h each time
    orig, new, report = shapes
    if report["hash"].status == "unchanged":  # --stage full: no cheaper PEG, javac's code kept
        assert new["hash"] == orig["hash"]
        return
    insns = new["hash"]
    assert not [o for o in _ops(insns) if o in _STORES], insns
    for f in ("b1", "b2", "b3"):
        k = _index(insns, op.GETFIELD, f)
        assert insns[k + 1][1] in (op.IFEQ, op.IFNE), (f, insns)
    assert insns[-1][0] <= orig["hash"][-1][0]


def test_a_read_is_not_moved_past_a_call(shapes):
    # bump(k) writes x: the read of x stays before the call
    _, new, _ = shapes
    insns = new["beforeCall"]
    assert _index(insns, op.GETFIELD, "x") < _index(insns, op.INVOKEVIRTUAL, "bump"), insns


def test_a_read_is_not_moved_past_a_write_that_may_alias_it(shapes):
    # q.x = k may write p.x (p == q): the read of p.x stays before the putfield
    _, new, _ = shapes
    insns = new["beforeWrite"]
    assert _index(insns, op.GETFIELD, "x") < _index(insns, op.PUTFIELD, "x"), insns


def test_a_read_is_not_moved_past_a_division(shapes):
    # p.x throws NullPointerException for p == null and n / d ArithmeticException for d == 0: the read stays first.
    # this.x cannot throw, but the division can: moved past it, the read would be skipped when it throws (a
    # volatile read's synchronization lost), so it stays first too
    _, new, _ = shapes
    for name in ("beforeDivide", "pastDivide"):
        insns = new[name]
        assert _index(insns, op.GETFIELD, "x") < _index(insns, op.IDIV), (name, insns)


def test_a_read_is_not_moved_into_a_loop(shapes):
    _, new, _ = shapes
    insns = new["intoLoop"]
    assert _ops(insns).count(op.GETFIELD) == 1, insns
    read = insns[_index(insns, op.GETFIELD, "x")][0]
    heads = [int(n) for off, o, n in insns if op.OPCODES[o].operand is op.Operand.BRANCH2 and int(n) < off]
    assert heads and all(read < h for h in heads), insns


def test_a_conditional_value_stays_on_the_stack_through_the_next_conditional(shapes):
    # (i < low) | (i > high), javac's `if_icmpge; iconst_1; goto; iconst_0; iload; iload; if_icmple; iconst_1;
    # goto; iconst_0; ior`: the first join's value stays on the stack under the second test and through its arms
    # (JAMA's hqr2), not stored in each arm and loaded back after the second join
    orig, new, report = shapes
    if report["outside"].status == "unchanged":  # --stage full: no cheaper PEG, javac's code kept
        assert new["outside"] == orig["outside"]
        return
    insns = new["outside"]
    assert not [o for o in _ops(insns) if o in _STORES], insns
    assert insns[-1][0] <= orig["outside"][-1][0], insns


def test_array_initializers_are_filled_where_they_are_consumed(shapes):
    # javac's shape: `iconst_3; anewarray; dup; iconst_0; iconst_2; anewarray; dup; iconst_0; ldc; aastore; ...`,
    # no local for the outer or the inner arrays; `new E; dup; ldc; iconst_1; anewarray; dup; ...; format`, no
    # `new E; pop` (the class initialized apart) and no local for the Object[]
    orig, new, report = shapes
    for name in ("table", "check"):
        if report[name].status == "unchanged":  # --stage full: no cheaper PEG, javac's code kept
            assert new[name] == orig[name]
            continue
        ops = _ops(new[name])
        assert not [o for o in ops if o in _STORES] and op.POP not in ops, (name, new[name])
        assert new[name][-1][0] <= orig[name][-1][0], (name, new[name])
    if report["table"].status == "rewritten":
        assert _ops(new["table"]).count(op.DUP) == 3 + 3 * 2


@pytest.mark.slow  # the slow tier: two stages' classes on the JVM
def test_rewritten_reads_verify_and_behave_identically(built, java_home, verifier):
    src, outs = built
    calls = [dt.Call("Reads", "run", RUN, (x, b1, b2, b3, k, sel))
             for sel in range(12) for x in (0, 7, -3) for k in (0, 1, 5)
             for b1, b2, b3 in ((False, False, False), (True, False, True), (True, True, True))]
    original = dt.run_jvm(src, calls, java_home=java_home, timeout_ms=3000)
    for stage, (out, _) in outs.items():
        proc = verifier(out)
        assert proc.returncode == 0 and "verify_errors=0" in proc.stdout, proc.stdout[-2000:]
        result = dt.compare(src, out, calls, java_home=java_home, timeout_ms=3000, original=original)
        assert result.mismatches == [], result.report()
        assert result.compared == len(calls), stage
