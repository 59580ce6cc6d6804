"""Loops entered by a goto to their bottom test (revert.tidy._enter_by_goto, ecj's loop shape): javac's methods
through the round trip (lift, PEG, revert with ``rotate_loops`` as ``--goal speed`` does, lower: no rewrite
needed to get the reverter's loop shapes), the shapes read off the bytecode, and the code run against javac's on
the JVM (``-Xverify:all``) on loops that run zero times, once, many times, and with a test that throws on entry
or at a later iteration.

The shapes: an outermost loop whose entry test stays and that holds no loop (one holding a loop is tested at its
top: tidy._middle_loops_tested_at_the_top) is entered by one ``goto`` to its bottom test, with javac's
bytes (the ``goto`` moved from its bottom to its top, the same instructions) and one conditional jump per
iteration; a loop nested in another keeps its copied test (entered by falling through), as a loop entered at its
bottom test is entered away from the target of its backward jump, where HotSpot compiles it on stack
replacement (an irreducible loop there: measured 2.4x slower, docs/benchmarks.md)."""
from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest

import difftest as dt
from support.fullstage import assert_behaves_like_original, round_trip_rotated
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions

SOURCE = r"""
public class Loops {
    static int count(int[] a, int n) { int s = 0; for (int i = 0; i < n; i++) { s += a[i]; } return s; }
    // the test reads a length: NullPointerException at the first test
    static int lenLoop(int[] a) { int s = 0; for (int i = 0; i < a.length; i++) { s += a[i] * 3; } return s; }
    // the test reads an element: ArrayIndexOutOfBoundsException at some test
    static int elemBound(int[] a) { int s = 0; for (int i = 0; i < a[i]; i++) { s += i; } return s; }
    // the entry test is decided by constants alone (0 < 8): the loop is entered with no test
    static int fixed(int[] a) { int s = 0; for (int r = 0; r < 8; r++) { s += a[r & 1]; } return s; }
    static long nested(int[][] a, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) { for (int j = 0; j < a[i].length; j++) { s += a[i][j] ^ j; } }
        return s;
    }
}
"""
SINGLE = ("count", "lenLoop", "elemBound")
_JUMPS = (op.Operand.BRANCH2, op.Operand.BRANCH4)


@pytest.fixture(scope="module")
def round_trip(java_home, tmp_path_factory):
    """javac's class and its round trip with loops rotated, as (orig dir, out dir)."""
    return round_trip_rotated(java_home, tmp_path_factory.mktemp("rotgoto"), "Loops", SOURCE)


def _code(classes: Path, name: str) -> list[tuple[int, int, int | None]]:
    """(offset, opcode, branch target or None) of ``Loops.name``."""
    cf = read_class((classes / "Loops.class").read_bytes())
    m = next(m for m in cf.methods if m.name == name)
    return [(i.offset, i.opcode, i.arg if op.OPCODES[i.opcode].operand in _JUMPS else None)
            for i in read_instructions(read_code(m.code_attribute().data, cf.pool))]


def _length(classes: Path, name: str) -> int:
    cf = read_class((classes / "Loops.class").read_bytes())
    m = next(m for m in cf.methods if m.name == name)
    return len(read_code(m.code_attribute().data, cf.pool).code)


def _loops(code) -> list[tuple[int, int]]:
    """(first, last offset) of each loop: a backward jump's target up to the jump."""
    return [(t, off) for off, _, t in code if t is not None and t <= off]


def _gotos(code) -> list[tuple[int, int]]:
    return [(off, t) for off, o, t in code if o in (op.GOTO, op.GOTO_W)]


def test_an_outermost_loop_is_entered_by_a_goto_with_javacs_bytes(round_trip):
    """javac: ``H: test; if !c goto X; body; goto H``. Here: ``goto T; L: body; T: test; if c goto L``: the same
    instructions (the conditional jump's sense aside) and the same length, the goto before the loop entering it
    at its test, one conditional jump inside the loop (at its bottom) and nothing else jumping in it."""
    orig, out = round_trip
    for name in SINGLE:
        before, after = _code(orig, name), _code(out, name)
        assert _length(out, name) == _length(orig, name), (name, after)
        kinds = lambda code: Counter("if" if o in op.CONDITIONAL_BRANCHES else o for _, o, _ in code)  # noqa: E731
        assert kinds(after) == kinds(before), (name, after)
        (lo, hi), = _loops(after)
        (g, target), = _gotos(after)
        assert g < lo and lo < target <= hi, (name, after)  # entering the loop at its test, past its body
        inside = [(off, o) for off, o, t in after if t is not None and lo <= off <= hi]
        assert inside == [(hi, next(o for off, o, _ in after if off == hi))], (name, after)
        assert inside[0][1] in op.CONDITIONAL_BRANCHES, (name, after)


def test_an_outermost_loop_of_constants_is_entered_with_no_test(round_trip):
    """fixed: ``for (r = 0; r < 8; r++)``, the outermost loop's entry test ``0 < 8`` decided by its constants
    (revert/tidy._settle_known_tests): the loop starts at the method's start with no test and no goto, tested
    at its bottom alone, three bytes less than javac's."""
    orig, out = round_trip
    after = _code(out, "fixed")
    assert _length(out, "fixed") == _length(orig, "fixed") - 3, after
    (lo, hi), = _loops(after)
    assert not _gotos(after) and [o for off, o, t in after if t is not None] == [op.IF_ICMPLT], after


def test_a_nested_loop_keeps_its_copied_test(round_trip):
    """nested: the inner loop entered by falling through its entry test and tested again at its bottom; the
    outer loop, holding it, tested at its top as javac writes it (revert.tidy._middle_loops_tested_at_the_top:
    HotSpot's JIT ran a nest whose outermost loop is tested at its bottom 1.03-1.05x javac's code), its one
    goto jumping back to that test: every loop is entered at the target of its backward jump."""
    orig, out = round_trip
    code = _code(out, "nested")
    loops = sorted(_loops(code))
    assert len(loops) == 2, code
    (outer_lo, outer_hi), (inner_lo, inner_hi) = loops
    assert outer_lo < inner_lo <= inner_hi < outer_hi, code
    (g, target), = _gotos(code)
    assert (target, g) == (outer_lo, outer_hi), code  # the outer loop's back edge, to its test at the top
    tests = [(off, t) for off, o, t in code if o in op.CONDITIONAL_BRANCHES]
    assert len(tests) == 3, code  # the outer's test at its top, the inner's entry and bottom tests
    assert tests[0][0] < inner_lo and tests[0][1] > outer_hi, code  # the outer's test leaves the loop forward
    assert _length(out, "nested") > _length(orig, "nested")  # the copied test's operands


def _calls() -> list[dt.Call]:
    """Zero-trip (n <= 0, empty arrays), one-trip and longer loops; null arrays (the length read at the first
    test throws), arrays elemBound's test reads past the end of, null rows."""
    c = "Loops"
    ints = [None, [], [0], [5], [3, 1, 4], [1, 2, 3, 4], [9, 9]]
    calls = [dt.Call(c, "count", "([II)I", (a, n)) for a, n in itertools.product(ints, [-1, 0, 1, 2, 5])]
    for a in ints:
        calls += [dt.Call(c, "lenLoop", "([I)I", (a,)), dt.Call(c, "elemBound", "([I)I", (a,)),
                  dt.Call(c, "fixed", "([I)I", (a,))]
    rows = [None, [], [[]], [[1, 2, 3]], [[1], None, [4]], [[5], [6, 7], [8, 9, 10]]]
    calls += [dt.Call(c, "nested", "([[II)J", (a, n)) for a, n in itertools.product(rows, [-1, 0, 1, 2, 3])]
    return calls


def test_loops_entered_by_a_goto_behave_like_javacs(round_trip, java_home):
    orig, out = round_trip  # no method fell back (round_trip_rotated)
    assert_behaves_like_original(java_home, orig, out, {}, _calls())


def test_a_goto_to_the_wrong_test_is_caught(round_trip, java_home, tmp_path):
    """The harness above sees a broken entry: count's entering goto sent past the test (into the body: the loop
    runs once even when n <= 0) is a difference on the JVM."""
    orig, out = round_trip
    code = _code(out, "count")
    (g, target), = _gotos(code)
    (lo, _), = _loops(code)
    data = bytearray((out / "Loops.class").read_bytes())
    cf = read_class(bytes(data))
    m = next(m for m in cf.methods if m.name == "count")
    attr = m.code_attribute()
    body = bytearray(attr.data)
    start = 8 + g  # Code attribute body: max_stack, max_locals, code_length (2 + 2 + 4 bytes), then the code
    assert body[start] == op.GOTO and int.from_bytes(body[start + 1:start + 3], "big", signed=True) == target - g
    body[start + 1:start + 3] = (lo - g).to_bytes(2, "big", signed=True)
    at = bytes(data).find(bytes(attr.data))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "Loops.class").write_bytes(bytes(data[:at]) + bytes(body) + bytes(data[at + len(body):]))
    calls = [x for x in _calls() if x.name == "count"]
    result = dt.compare(orig, broken, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches, "a loop entered past its test went unnoticed"
