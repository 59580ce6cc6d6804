"""peggy_jvm.semantics against the real JVM.

tests/java/SemanticsOracle.java is compiled once per session and run once (one JVM) on every test vector: the edge
values of each type (zeros of both signs, +-1, MIN/MAX, infinities, NaNs, subnormals, powers of two and their
neighbours, values around 2**24, 2**31, 2**53, 2**63, float rounding ties) crossed with each other for binary
operations, plus seeded random values (random bit patterns for float and double), for EVERY operation in
``semantics.OPERATIONS`` and every branch condition.  Results must be bit-identical (any NaN equals any NaN), and
integer division/remainder must raise JavaArithmeticError exactly where Java throws ArithmeticException.
Hypothesis checks a few algebraic properties on top.
"""
from __future__ import annotations

import math
import random
import struct
import subprocess
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from peggy_jvm import semantics as S
from conftest import javac_command
from support.javac_cache import run_javac

ROOT = Path(__file__).resolve().parent.parent
ORACLE_SOURCE = ROOT / "tests" / "java" / "SemanticsOracle.java"

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
SEED = 20240917
RANDOM_PAIRS = 400      # per binary operation, on top of the edge-value cross product
RANDOM_SINGLES = 600    # per unary operation, on top of the edge values

BINARY = {"add", "sub", "mul", "div", "rem", "and", "or", "xor"}
SHIFTS = {"shl", "shr", "ushr"}
COMPARES = {"cmp", "cmpl", "cmpg"}
CONVERSION_TYPE = {"i": "i", "l": "l", "f": "f", "d": "d", "b": "i", "c": "i", "s": "i"}
CONDITION_OPS = {f"cond.{name}": fn for name, fn in S.CONDITIONS.items()}


def signature(op: str) -> tuple[tuple[str, ...], str]:
    """(operand types, result type) of a typed operator name: types i l f d, and b for a bool result."""
    name, dot, t = op.partition(".")
    if not dot:
        if len(op) == 3 and op[1] == "2" and op[0] in CONVERSION_TYPE and op[2] in CONVERSION_TYPE:
            return (CONVERSION_TYPE[op[0]],), CONVERSION_TYPE[op[2]]
    elif name == "cond" and op in CONDITION_OPS:
        return ("i", "i"), "b"
    elif t in ("i", "l", "f", "d"):
        if name in BINARY and (t in ("i", "l") or name not in ("and", "or", "xor")):
            return (t, t), t
        if name == "neg":
            return (t,), t
        if name in SHIFTS and t in ("i", "l"):
            return (t, "i"), t              # a long shift takes an int count
        if name in COMPARES and (t == "l") == (name == "cmp"):
            return (t, t), "i"
    raise KeyError(f"test_semantics has no signature for operation {op!r}: teach signature() about it")


# ------------------------------------------------------------------------------------------ wire format
# Vectors hold each operand in its wire form: int/long as the int itself, float/double as raw bits (unsigned).

def f_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def d_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f_of(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def d_of(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def wire_text(t: str, w: int) -> str:
    return str(w) if t in ("i", "l") else f"0x{w:x}"


def value_of(t: str, w: int):
    return f_of(w) if t == "f" else d_of(w) if t == "d" else w


def is_nan_bits(t: str, bits: int) -> bool:
    if t == "f":
        return (bits >> 23) & 0xFF == 0xFF and bits & 0x7FFFFF != 0
    return (bits >> 52) & 0x7FF == 0x7FF and bits & 0xFFFFFFFFFFFFF != 0


def normalize_expected(t: str, text: str) -> str:
    """The oracle's line in comparable form: THROW <class>, NaN for any NaN, decimal ints, hex bits."""
    if text.startswith("THROW "):
        return text.split(":", 1)[0]
    if t in ("f", "d"):
        bits = int(text, 16)
        return "NaN" if is_nan_bits(t, bits) else f"0x{bits:x}"
    return text


def render_ours(t: str, r) -> str:
    """Our result in the same form; a non-canonical value (wrong Python type, out of range, a double where a
    float is due) renders as a NONCANONICAL marker so that it cannot match."""
    if t == "b":
        return ("1" if r else "0") if type(r) is bool else f"NONCANONICAL {r!r}"
    if t in ("i", "l"):
        lo, hi = (INT_MIN, INT_MAX) if t == "i" else (LONG_MIN, LONG_MAX)
        if type(r) is not int or not lo <= r <= hi:
            return f"NONCANONICAL {r!r}"
        return str(r)
    if type(r) is not float:
        return f"NONCANONICAL {r!r}"
    if math.isnan(r):
        return "NaN"
    if t == "d":
        return f"0x{d_bits(r):x}"
    try:
        bits = f_bits(r)
    except OverflowError:
        return f"NONCANONICAL {r!r}"
    if d_bits(f_of(bits)) != d_bits(r):     # not exactly a binary32 value
        return f"NONCANONICAL {r!r}"
    return f"0x{bits:x}"


# ------------------------------------------------------------------------------------------ test vectors

def _ints() -> list[int]:
    v = {0, 1, -1, 2, -2, 3, -3, 5, -7, 7, 10, 31, 32, 33, 63, 64, 65, 100, 127, 128, -128, -129, 255, 256,
         32767, 32768, -32768, -32769, 65535, 65536, -65536, 0x55555555, -0x55555556, 0x12345678,
         2**24 - 1, 2**24, 2**24 + 1, -(2**24 + 1), 2**30, -(2**30), 46341, -46341,
         INT_MAX, INT_MAX - 1, INT_MIN, INT_MIN + 1}
    return sorted(v)


def _longs() -> list[int]:
    v = {0, 1, -1, 2, -2, 3, -7, 31, 32, 63, 64, 65, 127, 128, -128, 65535, 65536,
         INT_MAX, INT_MIN, 2**31, -(2**31) - 1, 2**32 - 1, 2**32, -(2**32), 3037000500, -3037000500,
         2**24 + 1, 2**53 - 1, 2**53, 2**53 + 1, -(2**53 + 1), 2**53 + 3, 2**54 + 2,
         2**62 + 2**38 + 1, -(2**62 + 2**38 + 1), 2**62 + 2**38, 2**62 + 3 * 2**38 - 1,
         2**63 - 2**39, 2**63 - 2**39 - 1, 2**63 - 2**38, 2**63 - 2**38 - 1,
         0x5555555555555555, -0x5555555555555556, 0x123456789ABCDEF0,
         LONG_MAX, LONG_MAX - 1, LONG_MIN, LONG_MIN + 1}
    return sorted(v)


def _shift_counts() -> list[int]:
    return sorted({-65, -64, -63, -33, -32, -31, -1, 0, 1, 2, 7, 8, 15, 16, 17, 30, 31, 32, 33, 47, 62, 63, 64,
                   65, 95, 96, 127, 128, 1000, INT_MAX, INT_MIN})


def _float_bits() -> list[int]:
    v = {0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0xBF000000, 0x3FC00000, 0xC0200000,
         0x40000000, 0xC0000000, 0x40400000, 0x3DCCCCCD, 0x3EAAAAAB,               # 1.5, -2.5, 2, 3, 0.1, 1/3
         0x00000001, 0x80000001, 0x00000002, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,  # subnormals
         0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000, 0x7F800000, 0xFF800000,                # max, 2**127, infs
         0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF,                            # NaNs (quiet, signaling)
         0x4B800000, 0x4B800001, 0x4B7FFFFF, 0xCB800001,                            # 2**24 and neighbours
         0x4F000000, 0x4EFFFFFF, 0x4F000001, 0xCF000000, 0xCF000001, 0xCEFFFFFF,    # 2**31 and neighbours
         0x5F000000, 0x5EFFFFFF, 0x5F000001, 0xDF000000, 0xDF000001, 0xDEFFFFFF,    # 2**63 and neighbours
         0x5A000000, 0x4B000000, 0x4AFFFFFF, 0x34000000, 0x33800000,                # 2**53, 2**23, ulps
         0x501502F9, 0x42F60000, 0xC2F60000, 0x3F7FFFFF, 0x3F800001}                # 1e10, +-123, 1-, 1+
    return sorted(v)


def _double_bits() -> list[int]:
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.0, 3.0, 0.1, 1 / 3, -1e-300, 1e300, 1e308,
            5e-324, -5e-324, 1e-323, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
            -1.7976931348623157e308, math.inf, -math.inf, 2.0**52, 2.0**53, 2.0**53 + 2, -(2.0**53),
            2.0**24, 2.0**24 + 1, 2.0**31, 2.0**31 - 1, 2.0**31 - 0.5, 2.0**31 + 0.5, -(2.0**31), -(2.0**31) - 1,
            -(2.0**31) - 0.5, -(2.0**31) + 0.5, 2147483647.4, 2.0**63, math.nextafter(2.0**63, 0),
            math.nextafter(2.0**63, math.inf), -(2.0**63), math.nextafter(-(2.0**63), 0),
            math.nextafter(-(2.0**63), -math.inf), 2.0**64, 1e19, -1e19, 123.456, -0.75,
            S.FLOAT_MAX, -S.FLOAT_MAX, 2.0**128, 2.0**128 - 2.0**103, math.nextafter(2.0**128 - 2.0**103, 0),
            2.0**-126, 2.0**-149, 2.0**-150, math.nextafter(2.0**-150, 1), 1.5 * 2.0**-149, 2.5 * 2.0**-149,
            2.0**-151, 1.0 + 2.0**-24, 1.0 + 2.0**-24 + 2.0**-52, 1.0 + 3 * 2.0**-24, 1.0 - 2.0**-25]
    v = {d_bits(x) for x in vals}
    v |= {0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0x7FF7FFFFFFFFFFFF}  # NaNs
    return sorted(v)


def _wrap(x: int, bits: int) -> int:
    return (x + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)


def _random_int(rng: random.Random) -> int:
    k = rng.randrange(4)
    if k == 0:
        return rng.randrange(INT_MIN, INT_MAX + 1)
    if k == 1:
        return rng.randrange(-1000, 1001)
    if k == 2:
        return _wrap(rng.choice((1, -1)) * (1 << rng.randrange(32)) + rng.randrange(-3, 4), 32)
    return rng.choice(_INTS)


def _random_long(rng: random.Random) -> int:
    k = rng.randrange(5)
    if k == 0:
        return rng.randrange(LONG_MIN, LONG_MAX + 1)
    if k == 1:
        return rng.randrange(INT_MIN, INT_MAX + 1)
    if k == 2:
        return _wrap(rng.choice((1, -1)) * (1 << rng.randrange(64)) + rng.randrange(-3, 4), 64)
    if k == 3:   # near a binary32 rounding tie above 2**53, where long -> double -> float rounds twice
        shift = rng.randrange(31, 40)
        m = rng.randrange(1 << 23, 1 << 24)
        return rng.choice((1, -1)) * ((m << shift) + (1 << (shift - 1)) + rng.randrange(-2, 3))
    return rng.choice(_LONGS)


def _random_float_bits(rng: random.Random) -> int:
    k = rng.randrange(4)
    if k == 0:
        return rng.getrandbits(32)
    if k == 1:
        return f_bits(rng.uniform(-1.0, 1.0) * 2.0 ** rng.randrange(-30, 70))   # struct rounds to binary32
    if k == 2:
        return f_bits(float(rng.randrange(-100, 101)))
    return rng.choice(_FLOATS)


def _random_double_bits(rng: random.Random) -> int:
    k = rng.randrange(6)
    if k == 0:
        return rng.getrandbits(64)
    if k == 1:
        return d_bits(rng.uniform(-1.0, 1.0) * 2.0 ** rng.randrange(-60, 70))
    if k == 2:
        return d_bits(float(rng.randrange(-100, 101)))
    if k == 3:   # a float value, exactly halfway to the next one (a d2f tie), or just beside the tie
        bits = rng.randrange(0, 0x7F7FFFFF)
        f, after = f_of(bits), f_of(bits + 1)
        tie = (f + after) / 2            # 25 significant bits: exact in binary64
        x = rng.choice((f, tie, math.nextafter(tie, 0.0), math.nextafter(tie, math.inf)))
        return d_bits(x if rng.randrange(2) else -x)
    if k == 4:   # around the int and long limits
        edge = rng.choice((2.0**31, -(2.0**31), 2.0**63, -(2.0**63)))
        return d_bits(edge + rng.randrange(-8, 9) * rng.choice((0.25, 1.0, 1024.0)))
    return rng.choice(_DOUBLES)


_INTS = _ints()
_LONGS = _longs()
_FLOATS = _float_bits()
_DOUBLES = _double_bits()
EDGES = {"i": _INTS, "l": _LONGS, "f": _FLOATS, "d": _DOUBLES}
RANDOM = {"i": _random_int, "l": _random_long, "f": _random_float_bits, "d": _random_double_bits}


def vectors_for(op: str, rng: random.Random) -> list[tuple[int, ...]]:
    operands, _ = signature(op)
    if len(operands) == 1:
        (t,) = operands
        out = [(w,) for w in EDGES[t]]
        out += [(RANDOM[t](rng),) for _ in range(RANDOM_SINGLES)]
        return out
    t1, t2 = operands
    second = _shift_counts() if op.split(".")[0] in SHIFTS else EDGES[t2]
    out = [(a, b) for a in EDGES[t1] for b in second]
    out += [(RANDOM[t1](rng), RANDOM[t2](rng)) for _ in range(RANDOM_PAIRS)]
    return out


ALL_OPS = {**S.OPERATIONS, **CONDITION_OPS}


@pytest.fixture(scope="session")
def oracle(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[tuple, str]]]:
    """``{op: [(wire operands, normalized JVM result)]}`` for every operation, from one JVM run."""
    classes = tmp_path_factory.mktemp("semantics-oracle")
    compiled = run_javac([*javac_command(java_home), "-d", str(classes), str(ORACLE_SOURCE)],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if compiled.returncode != 0:
        pytest.fail(f"could not compile {ORACLE_SOURCE}:\n{compiled.stdout}{compiled.stderr}", pytrace=False)
    rng = random.Random(SEED)
    jobs: list[tuple[str, tuple[int, ...]]] = []
    lines: list[str] = []
    for op in sorted(ALL_OPS):
        try:
            operands, _ = signature(op)
        except KeyError:
            continue                     # test_every_operation_has_a_signature reports it
        for vec in vectors_for(op, rng):
            jobs.append((op, vec))
            lines.append(" ".join([op, *(wire_text(t, w) for t, w in zip(operands, vec))]))
    proc = subprocess.run([str(java_home / "bin" / "java"), "-Xshare:auto", "-cp", str(classes),
                           "SemanticsOracle"], input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"SemanticsOracle failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}", pytrace=False)
    answers = proc.stdout.splitlines()
    assert len(answers) == len(jobs), (len(answers), len(jobs))
    results: dict[str, list[tuple[tuple, str]]] = defaultdict(list)
    for (op, vec), answer in zip(jobs, answers):
        results[op].append((vec, normalize_expected(signature(op)[1], answer)))
    return results


def run_ours(op: str, vec: tuple[int, ...]) -> str:
    operands, result = signature(op)
    args = [value_of(t, w) for t, w in zip(operands, vec)]
    try:
        r = ALL_OPS[op](*args)
    except S.JavaArithmeticError:
        return "THROW java.lang.ArithmeticException"
    except Exception as exc:  # anything else is a bug: Java semantics never raise it
        return f"PYTHON {type(exc).__name__}: {exc}"
    return render_ours(result, r)


def test_every_operation_has_a_signature():
    for op in ALL_OPS:
        signature(op)
    assert S.THROWING <= S.OPERATIONS.keys()


@pytest.mark.parametrize("op", sorted(ALL_OPS))
def test_operation_is_bit_identical_to_the_jvm(oracle, op):
    operands, _ = signature(op)
    cases = oracle[op]
    assert len(cases) > 100
    wrong = []
    for vec, expected in cases:
        got = run_ours(op, vec)
        if got != expected:
            shown = ", ".join(f"{wire_text(t, w)}" + (f" ({value_of(t, w)!r})" if t in "fd" else "")
                              for t, w in zip(operands, vec))
            wrong.append(f"{op}({shown}): JVM {expected}, ours {got}")
    assert not wrong, f"{len(wrong)} of {len(cases)} vectors differ:\n" + "\n".join(wrong[:25])


def test_jvm_throws_exactly_for_the_throwing_operations_on_a_zero_divisor(oracle):
    threw = {op for op, cases in oracle.items() for _, expected in cases if expected.startswith("THROW")}
    assert threw == set(S.THROWING)
    for op in S.THROWING:
        for vec, expected in oracle[op]:
            if vec[1] == 0:
                assert expected == "THROW java.lang.ArithmeticException", (op, vec, expected)
            else:
                assert not expected.startswith("THROW"), (op, vec, expected)


# ------------------------------------------------------------------------------------------ named cases
# The cases a naive implementation gets wrong, spelled out (also covered by the JVM vectors above).

def test_integer_division_corner_cases():
    assert S.idiv(INT_MIN, -1) == INT_MIN and S.irem(INT_MIN, -1) == 0
    assert S.ldiv(LONG_MIN, -1) == LONG_MIN and S.lrem(LONG_MIN, -1) == 0
    assert (S.idiv(-7, 2), S.irem(-7, 2), S.idiv(7, -2), S.irem(7, -2)) == (-3, -1, -3, 1)
    for fn in (S.idiv, S.irem, S.ldiv, S.lrem):
        with pytest.raises(S.JavaArithmeticError, match="/ by zero"):
            fn(5, 0)


def test_shift_counts_are_masked():
    assert S.ishl(1, 32) == 1 and S.ishl(1, 31) == INT_MIN and S.ishr(-8, 33) == -4
    assert S.iushr(-1, 0) == -1 and S.iushr(-1, 28) == 15 and S.iushr(-1, -4) == 15
    assert S.lshl(1, 64) == 1 and S.lshl(1, 63) == LONG_MIN and S.lushr(-1, 0) == -1 and S.lushr(-1, 60) == 15


def test_float_corner_cases():
    assert S.ddiv(1.0, -0.0) == -math.inf and math.isnan(S.ddiv(0.0, 0.0)) and S.fdiv(-1.0, 0.0) == -math.inf
    assert math.isnan(S.drem(math.inf, 1.0)) and math.isnan(S.frem(1.0, 0.0)) and S.drem(-3.0, math.inf) == -3.0
    assert math.copysign(1.0, S.drem(-4.0, 2.0)) == -1.0
    assert S.to_f32(2.0**128 - 2.0**103) == math.inf                           # the tie rounds to infinity
    assert S.to_f32(math.nextafter(2.0**128 - 2.0**103, 0)) == S.FLOAT_MAX
    assert S.to_f32(-1e300) == -math.inf and S.to_f32(2.0**-150) == 0.0 and S.to_f32(1.5 * 2.0**-149) == 2.0**-148
    assert S.fmul(S.FLOAT_MAX, 2.0) == math.inf and S.fadd(-S.FLOAT_MAX, -S.FLOAT_MAX) == -math.inf


def test_conversions_corner_cases():
    x = 2**62 + 2**38 + 1                         # just above a binary32 tie; via double it lands on the tie
    assert S.l2f(x) == 2.0**62 + 2.0**39 and S.to_f32(float(x)) == 2.0**62
    assert S.l2f(-x) == -(2.0**62 + 2.0**39) and S.l2f(LONG_MAX) == 2.0**63 and S.l2f(LONG_MIN) == -(2.0**63)
    assert S.i2f(2**24 + 1) == 2.0**24 and S.i2f(2**24 + 3) == 2.0**24 + 4
    assert (S.d2i(math.nan), S.d2i(1e10), S.d2i(-1e10), S.d2i(-2.9), S.d2i(2147483647.9)) == (0, INT_MAX, INT_MIN,
                                                                                              -2, INT_MAX)
    assert (S.f2l(math.nan), S.d2l(math.inf), S.d2l(-math.inf), S.d2l(2.0**63), S.d2l(-(2.0**63))) == (
        0, LONG_MAX, LONG_MIN, LONG_MAX, LONG_MIN)
    assert (S.i2b(200), S.i2c(-1), S.i2s(40000), S.l2i(2**32 + 5)) == (-56, 65535, -25536, 5)


def test_comparisons_with_nan_and_signed_zero():
    nan = math.nan
    assert (S.fcmpl(nan, 1.0), S.fcmpg(nan, 1.0), S.dcmpl(1.0, nan), S.dcmpg(1.0, nan)) == (-1, 1, -1, 1)
    assert S.dcmpl(-0.0, 0.0) == 0 and S.fcmpg(0.0, -0.0) == 0 and S.lcmp(LONG_MIN, LONG_MAX) == -1


def test_bit_views():
    assert S.float_to_raw_int_bits(-0.0) == INT_MIN and S.float_to_raw_int_bits(math.inf) == 0x7F800000
    assert S.float_to_raw_int_bits(1.0) == 0x3F800000 and S.float_to_raw_int_bits(-2.0) == -0x40000000
    assert S.double_to_raw_long_bits(-0.0) == LONG_MIN and S.double_to_raw_long_bits(1.0) == 0x3FF0000000000000
    assert S.int_bits_to_float(0x7F7FFFFF) == S.FLOAT_MAX and S.int_bits_to_float(-0x40000000) == -2.0
    assert math.isnan(S.int_bits_to_float(0x7FC00000)) and S.long_bits_to_double(LONG_MIN) == 0.0
    assert math.copysign(1.0, S.long_bits_to_double(LONG_MIN)) == -1.0 and S.long_bits_to_double(1) == 5e-324


# ------------------------------------------------------------------------------------------ properties

ints = st.integers(INT_MIN, INT_MAX)
longs = st.integers(LONG_MIN, LONG_MAX)
doubles = st.floats(allow_nan=True, allow_infinity=True)


@given(st.integers(-(2**80), 2**80))
def test_wrap_is_idempotent_and_keeps_the_low_bits(x):
    for wrap, bits in ((S.wrap_i, 32), (S.wrap_l, 64)):
        w = wrap(x)
        assert -(2 ** (bits - 1)) <= w < 2 ** (bits - 1) and wrap(w) == w and (w - x) % 2**bits == 0


@given(ints, ints)
def test_iadd_imul_commute(a, b):
    assert S.iadd(a, b) == S.iadd(b, a) and S.imul(a, b) == S.imul(b, a)


@given(longs, longs, longs)
def test_ladd_associates(a, b, c):
    assert S.ladd(S.ladd(a, b), c) == S.ladd(a, S.ladd(b, c))


@given(ints, ints.filter(lambda b: b != 0), longs, longs.filter(lambda b: b != 0))
def test_quotient_times_divisor_plus_remainder_is_the_dividend(a, b, la, lb):   # JLS 15.17.3
    assert S.iadd(S.imul(S.idiv(a, b), b), S.irem(a, b)) == a
    assert S.ladd(S.lmul(S.ldiv(la, lb), lb), S.lrem(la, lb)) == la


@given(ints, ints)
def test_shift_left_is_multiplication_by_a_power_of_two(a, n):
    assert S.ishl(a, n) == S.imul(a, S.wrap_i(1 << (n & 31)))


@given(doubles)
def test_to_f32_is_idempotent_and_lands_on_binary32(x):
    y = S.to_f32(x)
    if math.isnan(x):
        assert math.isnan(y)
        return
    assert d_bits(S.to_f32(y)) == d_bits(y)
    assert d_bits(f_of(f_bits(y))) == d_bits(y)
    assert S.float_to_raw_int_bits(y) == S.wrap_i(f_bits(y)) and S.int_bits_to_float(f_bits(y)) == y


@given(doubles)
def test_double_bits_round_trip(x):
    bits = S.double_to_raw_long_bits(x)
    assert LONG_MIN <= bits <= LONG_MAX and bits % 2**64 == d_bits(x)
    assert d_bits(S.long_bits_to_double(bits)) == d_bits(x) or math.isnan(x)


@settings(max_examples=300)
@given(st.one_of(longs, st.integers(2**53, 2**63 - 1), st.integers(-(2**63), -(2**53))))
def test_l2f_is_the_nearest_binary32_ties_to_even(x):
    r = S.l2f(x)
    assert (r > 0) == (x > 0) and (r < 0) == (x < 0)
    n, m = abs(x), abs(r)
    bits = f_bits(m)
    mine = abs(Fraction(m) - n)
    for neighbour in (f_of(bits - 1) if bits else None, f_of(bits + 1)):
        if neighbour is not None:
            theirs = abs(Fraction(neighbour) - n)
            assert theirs > mine or (theirs == mine and bits % 2 == 0), (x, r, neighbour)
