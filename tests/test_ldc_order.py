"""An ``ldc`` constant of a commutative operation stays before the other operand (ir/coalesce's constants-second
rule moves only constants with a one- to three-byte form): HotSpot's interpreter stores an ``ldc``'s number to the
stack in memory, so the operation right after it reads it back (docs/cost-model.md, ``LDC_READ_EXTRA``);
``BenchKernels.crc32``'s rewrite had turned javac's ``0xedb88320 & -(crc & 1)`` into ``-(crc & 1) & 0xedb88320``,
one such read more per inner iteration. Shapes read off the round trip's bytecode (lift, PEG, revert with loops
rotated, lower), then both classes run on the JVM (``-Xverify:all``)."""
from __future__ import annotations

import itertools

import pytest

import difftest as dt
from support.fullstage import assert_behaves_like_original, listing, round_trip_rotated

SOURCE = r"""
public class Ldc {
    static int crc(int[] d, int n) {
        int crc = 0xffffffff;
        for (int i = 0; i < n; i++) {
            crc ^= d[i] & 0xff;
            for (int k = 0; k < 8; k++) { crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1)); }
        }
        return ~crc;
    }
    static int small(int x) { return 3 + x; }
    static long mix(long x, int n) {
        long h = x;
        for (int i = 0; i < n; i++) { h = 0x9e3779b97f4a7c15L * h + i; }
        return h;
    }
    static void last() {}  // javap's listing of a method ends at a blank line: mix is not the last
}
"""


@pytest.fixture(scope="module")
def round_trip(java_home, tmp_path_factory):
    return round_trip_rotated(java_home, tmp_path_factory.mktemp("ldcorder"), "Ldc", SOURCE)


def _after(code: list[tuple[int, str, str]], mnemonic: str) -> list[str]:
    """The mnemonic after each ``mnemonic`` of the listing."""
    ops = [o for _, o, _ in code]
    return [ops[k + 1] for k, o in enumerate(ops[:-1]) if o == mnemonic]


def test_an_ldc_constant_stays_before_the_operand_it_is_combined_with(round_trip, java_home):
    _, out = round_trip
    crc = listing(java_home, out, "Ldc", "crc")
    assert [o[:5] for o in _after(crc, "ldc")] == ["iload"], crc  # ldc; iload crc; iconst_1; iand; ineg; iand
    mix = listing(java_home, out, "Ldc", "mix")
    assert [o[:5] for o in _after(mix, "ldc2_w")] == ["lload"], mix  # ldc2_w; lload h; lmul
    small = [o for _, o, _ in listing(java_home, out, "Ldc", "small")]
    assert small == ["iload_0", "iconst_3", "iadd", "ireturn"]  # a short constant still goes second


def test_the_round_trip_behaves_like_javacs_code(round_trip, java_home):
    orig, out = round_trip
    ints = [None, [], [0], [255, -1], [1, 2, 3, 4, 5]]
    ns = [-1, 0, 1, 2, 5]
    calls = [dt.Call("Ldc", "crc", "([II)I", (a, n)) for a, n in itertools.product(ints, ns)]
    calls += [dt.Call("Ldc", "mix", "(JI)J", (x, n)) for x, n in itertools.product([0, 1, -7, 2 ** 62], ns)]
    calls += [dt.Call("Ldc", "small", "(I)I", (x,)) for x in (0, -3, 2 ** 31 - 1)]
    assert_behaves_like_original(java_home, orig, out, {}, calls)
