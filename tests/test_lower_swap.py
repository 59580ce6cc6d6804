"""Two values on the stack in the wrong order for the statement that reads them are swapped, not stored and
loaded back (ir/lower._Lowerer.swaps, issue 15: commons-lang3's ``equals`` methods, ``b.equals(a)`` of two
calls made ``a`` first). Ints and references only: a float just computed would stall the interpreter on the
``swap`` (``FLOAT_SPILL_EXTRA``), and longs and doubles have no ``swap``.

Through the round trip (lift, PEG, revert, lower: rebuilt code, each value read once stays on the stack),
read off the bytecode, and run against javac's code on the JVM (``-Xverify:all``)."""
from __future__ import annotations


import pytest

import difftest as dt
from support.fullstage import assert_behaves_like_original, listing, round_trip_rotated

SOURCE = r"""
public class Swap {
    static String f(String s) { return s == null ? null : s.trim(); }
    static String g(String s) { return s == null ? "" : s.toLowerCase(); }
    static float h(float x) { return x * 2.0f; }
    static boolean same(String s) {
        String a = f(s);
        String b = g(s);
        return b.equals(a);
    }
    static int less(int[] v) {
        int a = v[0];
        int b = v[1] * 3;
        return b - a;
    }
    static float fless(float x) {
        float a = h(x);
        float b = h(x + 1.0f);
        return b - a;
    }
}
"""


@pytest.fixture(scope="module")
def round_trip(java_home, tmp_path_factory):
    return round_trip_rotated(java_home, tmp_path_factory.mktemp("swap"), "Swap", SOURCE)


def _ops(java_home, out, method: str) -> list[str]:
    return [m for _, m, _ in listing(java_home, out, "Swap", method)]


def test_two_calls_results_read_the_other_way_round_are_swapped(round_trip, java_home):
    """javac: ``astore_1; ...; astore_2; aload_2; aload_1; invokevirtual equals``; rebuilt: both results stay on
    the stack, ``swap; invokevirtual equals``, no local stored."""
    orig, out = round_trip
    ops = _ops(java_home, out, "same")
    k = ops.index("swap")
    assert ops[k + 1] == "invokevirtual" and not any(o.startswith("astore") for o in ops), ops
    assert "swap" not in _ops(java_home, orig, "same")


def test_ints_are_swapped_and_floats_are_not(round_trip, java_home):
    _, out = round_trip
    ops = _ops(java_home, out, "less")
    assert ops[ops.index("swap") + 1] == "isub", ops
    assert "swap" not in _ops(java_home, out, "fless")


def test_swapped_code_behaves_like_javacs(round_trip, java_home):
    orig, out = round_trip
    calls = [dt.Call("Swap", "same", "(Ljava/lang/String;)Z", (s,)) for s in [None, "", " a ", "a", "A", " "]]
    calls += [dt.Call("Swap", "less", "([I)I", (v,)) for v in [None, [], [1], [1, 2], [7, -3, 5]]]
    calls += [dt.Call("Swap", "fless", "(F)F", (x,)) for x in [0.0, -1.5, 3.25]]
    assert_behaves_like_original(java_home, orig, out, {}, calls)
