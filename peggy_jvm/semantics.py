"""Java's value semantics, exactly and once.

What this module owns
    The meaning of every typed JVM value operation: int/long wrap-around arithmetic, shifts (counts masked with
    ``& 31`` / ``& 63``), division and remainder (truncating, ``Integer.MIN_VALUE / -1``, ArithmeticException on a
    zero divisor), float/double arithmetic under IEEE 754 round-to-nearest-even (JVMS 2.8, JLS 15.17-15.18),
    the remainder ``frem``/``drem`` (C ``fmod``, JLS 15.17.3), every primitive conversion (JLS 5.1.2, 5.1.3;
    JVMS ``i2l`` ... ``d2f``, ``i2b``/``i2c``/``i2s``), the comparisons ``lcmp``, ``fcmpl``/``fcmpg``,
    ``dcmpl``/``dcmpg`` (JVMS 6.5) and the int branch conditions, and the raw bit views
    (``Float.floatToRawIntBits`` and friends).  The IR interpreter, the PEG evaluator, constant folding and the
    rule-soundness checker all call these functions; nothing else in peggy-jvm re-implements them.
    Arity, operand types and costs of the operators live in the PEG operator table, not here.

Value representation
    * int (and byte, short, char, boolean, which the JVM computes as int): a Python ``int`` in
      ``[-2**31, 2**31 - 1]``; long: a Python ``int`` in ``[-2**63, 2**63 - 1]``.  byte/short/char values are
      ints in their own ranges (char ``[0, 65535]``), produced by ``i2b``/``i2s``/``i2c``.
    * float: a Python ``float`` whose value is exactly representable in binary32 (``to_f32(x) == x``);
      double: any Python ``float``.  Signed zeros and NaN are kept as Python keeps them; the payload of a NaN
      is not part of the semantics (Java code can only observe it through ``floatToRawIntBits``, and the JVM
      itself does not promise which NaN an operation produces).

Invariants
    * Every function returns a canonical value of its result type (the representation above), given canonical
      operands.  Operands are not checked: these functions run in hot interpreter loops.  ``wrap_i``,
      ``wrap_l``, ``i2b``, ``i2c``, ``i2s`` accept any Python int and ``to_f32`` any Python float.
    * Nothing raises except :class:`JavaArithmeticError`, from integer division and remainder by zero
      (``idiv irem ldiv lrem``; the names in :data:`THROWING`).  In particular float division by zero gives
      +-inf or NaN, overflow gives +-inf, and float-to-integer conversions saturate (NaN gives 0).
    * Float (binary32) arithmetic is computed in binary64 and rounded once to binary32.  For ``+ - * /`` this is
      exactly the correctly rounded binary32 result, because binary64 carries more than 2*24 + 2 significand
      bits; ``frem`` is exact in either format.  Conversions to float round once from the exact value
      (``l2f`` does not go through double, which could round twice).

Class initialization
    :func:`static_read_is_pure`: when a ``getstatic`` neither initializes a class nor throws, so that it is a
    plain read of the heap (JVMS 5.5, 6.5 ``getstatic``).  Every other static access is an effect that may run
    another class's ``<clinit>``.

Tables
    :data:`OPERATIONS` maps the project's typed operator names (``add.i``, ``cmpl.d``, ``l2f``, ...) to these
    functions; :data:`THROWING` names the ones that may raise; :data:`CONDITIONS` maps the int branch conditions
    (``eq ne lt ge gt le``) to their predicates.
"""
from __future__ import annotations

import math
import struct
from typing import Callable, Collection

__all__ = [
    "JavaArithmeticError",
    "INT_MIN", "INT_MAX", "LONG_MIN", "LONG_MAX", "FLOAT_MAX",
    "wrap_i", "wrap_l", "to_f32", "i2b", "i2c", "i2s",
    "iadd", "isub", "imul", "idiv", "irem", "ineg", "ishl", "ishr", "iushr", "iand", "ior", "ixor",
    "ladd", "lsub", "lmul", "ldiv", "lrem", "lneg", "lshl", "lshr", "lushr", "land", "lor", "lxor",
    "fadd", "fsub", "fmul", "fdiv", "frem", "fneg",
    "dadd", "dsub", "dmul", "ddiv", "drem", "dneg",
    "i2l", "i2f", "i2d", "l2i", "l2f", "l2d", "f2i", "f2l", "f2d", "d2i", "d2l", "d2f",
    "lcmp", "fcmpl", "fcmpg", "dcmpl", "dcmpg",
    "cond_eq", "cond_ne", "cond_lt", "cond_ge", "cond_gt", "cond_le",
    "float_to_raw_int_bits", "int_bits_to_float", "double_to_raw_long_bits", "long_bits_to_double",
    "static_read_is_pure",
    "OPERATIONS", "THROWING", "CONDITIONS",
]

INT_MIN = -0x80000000
INT_MAX = 0x7FFFFFFF
LONG_MIN = -0x8000000000000000
LONG_MAX = 0x7FFFFFFFFFFFFFFF
FLOAT_MAX = 3.4028234663852886e38  # Float.MAX_VALUE, (2 - 2**-23) * 2**127

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF
_B31 = 0x80000000
_B63 = 0x8000000000000000
_INF = math.inf
_NAN = math.nan
_copysign = math.copysign
_fmod = math.fmod

_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")
_f32_pack = _F32.pack       # standard size "<f": rounds like a C (float) cast, ties to even, but raises
_f32_unpack = _F32.unpack   # OverflowError where the cast gives +-inf for a finite double (native "f" does not)


class JavaArithmeticError(Exception):
    """java.lang.ArithmeticException("/ by zero") from idiv, irem, ldiv, lrem with a zero divisor."""

    def __init__(self, message: str = "/ by zero") -> None:
        super().__init__(message)


# --------------------------------------------------------------------------------------------- wrapping

def wrap_i(x: int) -> int:
    """The int whose two's-complement low 32 bits are those of ``x`` (JLS 5.1.3 narrowing to int)."""
    if -0x80000000 <= x <= 0x7FFFFFFF:
        return x
    return ((x + _B31) & _M32) - _B31


def wrap_l(x: int) -> int:
    """The long whose two's-complement low 64 bits are those of ``x``."""
    if -0x8000000000000000 <= x <= 0x7FFFFFFFFFFFFFFF:
        return x
    return ((x + _B63) & _M64) - _B63


def to_f32(x: float) -> float:
    """``x`` rounded to the nearest binary32 value (ties to even), +-inf on overflow; -0.0 and NaN kept."""
    try:
        return _f32_unpack(_f32_pack(x))[0]
    except OverflowError:  # struct refuses finite doubles that round to infinity in binary32
        return _copysign(_INF, x)


def i2b(x: int) -> int:
    """``(byte) x``: the low 8 bits, sign-extended."""
    return ((x + 0x80) & 0xFF) - 0x80


def i2c(x: int) -> int:
    """``(char) x``: the low 16 bits, zero-extended."""
    return x & 0xFFFF


def i2s(x: int) -> int:
    """``(short) x``: the low 16 bits, sign-extended."""
    return ((x + 0x8000) & 0xFFFF) - 0x8000


# --------------------------------------------------------------------------------------------- int

def iadd(a: int, b: int) -> int:
    r = a + b
    if -0x80000000 <= r <= 0x7FFFFFFF:
        return r
    return ((r + _B31) & _M32) - _B31


def isub(a: int, b: int) -> int:
    r = a - b
    if -0x80000000 <= r <= 0x7FFFFFFF:
        return r
    return ((r + _B31) & _M32) - _B31


def imul(a: int, b: int) -> int:
    r = a * b
    if -0x80000000 <= r <= 0x7FFFFFFF:
        return r
    return ((r + _B31) & _M32) - _B31


def idiv(a: int, b: int) -> int:
    """Truncating division; ``INT_MIN / -1 == INT_MIN``; a zero divisor raises JavaArithmeticError."""
    if b == 0:
        raise JavaArithmeticError()
    q = a // b                     # floor; differs from truncation only when inexact with operands of
    if q < 0 and q * b != a:       # different signs, where the floor is one below the truncated quotient
        q += 1
    if q == 0x80000000:            # INT_MIN / -1 overflows back to INT_MIN
        return -0x80000000
    return q


def irem(a: int, b: int) -> int:
    """Remainder of the truncating division: sign of the dividend; ``INT_MIN % -1 == 0``."""
    if b == 0:
        raise JavaArithmeticError()
    r = (a if a >= 0 else -a) % (b if b >= 0 else -b)
    return r if a >= 0 else -r


def ineg(a: int) -> int:
    return -a if a != -0x80000000 else a


def ishl(a: int, n: int) -> int:
    return (((a << (n & 31)) + _B31) & _M32) - _B31


def ishr(a: int, n: int) -> int:
    return a >> (n & 31)


def iushr(a: int, n: int) -> int:
    s = n & 31
    if s == 0:
        return a
    return (a & _M32) >> s


def iand(a: int, b: int) -> int:
    return a & b


def ior(a: int, b: int) -> int:
    return a | b


def ixor(a: int, b: int) -> int:
    return a ^ b


# --------------------------------------------------------------------------------------------- long

def ladd(a: int, b: int) -> int:
    r = a + b
    if -0x8000000000000000 <= r <= 0x7FFFFFFFFFFFFFFF:
        return r
    return ((r + _B63) & _M64) - _B63


def lsub(a: int, b: int) -> int:
    r = a - b
    if -0x8000000000000000 <= r <= 0x7FFFFFFFFFFFFFFF:
        return r
    return ((r + _B63) & _M64) - _B63


def lmul(a: int, b: int) -> int:
    r = a * b
    if -0x8000000000000000 <= r <= 0x7FFFFFFFFFFFFFFF:
        return r
    return ((r + _B63) & _M64) - _B63


def ldiv(a: int, b: int) -> int:
    """Truncating division; ``LONG_MIN / -1 == LONG_MIN``; a zero divisor raises JavaArithmeticError."""
    if b == 0:
        raise JavaArithmeticError()
    q = a // b
    if q < 0 and q * b != a:
        q += 1
    if q == 0x8000000000000000:
        return -0x8000000000000000
    return q


def lrem(a: int, b: int) -> int:
    """Remainder of the truncating division: sign of the dividend; ``LONG_MIN % -1 == 0``."""
    if b == 0:
        raise JavaArithmeticError()
    r = (a if a >= 0 else -a) % (b if b >= 0 else -b)
    return r if a >= 0 else -r


def lneg(a: int) -> int:
    return -a if a != -0x8000000000000000 else a


def lshl(a: int, n: int) -> int:
    """``a << n`` for a long ``a`` and an int count ``n`` (masked with 63)."""
    return (((a << (n & 63)) + _B63) & _M64) - _B63


def lshr(a: int, n: int) -> int:
    return a >> (n & 63)


def lushr(a: int, n: int) -> int:
    s = n & 63
    if s == 0:
        return a
    return (a & _M64) >> s


def land(a: int, b: int) -> int:
    return a & b


def lor(a: int, b: int) -> int:
    return a | b


def lxor(a: int, b: int) -> int:
    return a ^ b


# --------------------------------------------------------------------------------------------- double

def dadd(a: float, b: float) -> float:
    return a + b   # Python float + - * never raise: overflow is inf, inf - inf is NaN


def dsub(a: float, b: float) -> float:
    return a - b


def dmul(a: float, b: float) -> float:
    return a * b


def ddiv(a: float, b: float) -> float:
    """IEEE division: x/0 is +-inf (sign: xor of the operand signs), 0/0 and NaN/0 are NaN."""
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0.0:
            return _NAN
        return _INF if (_copysign(1.0, a) == _copysign(1.0, b)) else -_INF


def drem(a: float, b: float) -> float:
    """``a % b`` (JLS 15.17.3): C fmod; NaN if either is NaN, ``a`` infinite or ``b`` zero; ``a`` if ``b`` is
    infinite and ``a`` finite; otherwise exact, with the sign of ``a`` (also for a zero result)."""
    try:
        return _fmod(a, b)
    except ValueError:     # math.fmod reports fmod(inf, y) and fmod(x, 0) as a domain error
        return _NAN


def dneg(a: float) -> float:
    return -a


# --------------------------------------------------------------------------------------------- float

def fadd(a: float, b: float) -> float:
    r = a + b
    try:
        return _f32_unpack(_f32_pack(r))[0]
    except OverflowError:
        return _copysign(_INF, r)


def fsub(a: float, b: float) -> float:
    r = a - b
    try:
        return _f32_unpack(_f32_pack(r))[0]
    except OverflowError:
        return _copysign(_INF, r)


def fmul(a: float, b: float) -> float:
    r = a * b
    try:
        return _f32_unpack(_f32_pack(r))[0]
    except OverflowError:
        return _copysign(_INF, r)


def fdiv(a: float, b: float) -> float:
    return to_f32(ddiv(a, b))


def frem(a: float, b: float) -> float:
    # fmod of two binary32 values is exact and itself a binary32 value: no rounding step is needed.
    try:
        return _fmod(a, b)
    except ValueError:
        return _NAN


def fneg(a: float) -> float:
    return -a


# --------------------------------------------------------------------------------------------- conversions

def i2l(a: int) -> int:
    return a


def i2f(a: int) -> float:
    if -0x1000000 <= a <= 0x1000000:      # |a| <= 2**24: exact in binary32
        return float(a)
    # an int is exact in binary64, so this rounds once
    return _f32_unpack(_f32_pack(float(a)))[0]


def i2d(a: int) -> float:
    return float(a)


def l2i(a: int) -> int:
    if -0x80000000 <= a <= 0x7FFFFFFF:
        return a
    return ((a + _B31) & _M32) - _B31


def l2f(a: int) -> float:
    """``(float) a`` rounded once from the exact value (round-to-nearest-even)."""
    if -0x1000000 <= a <= 0x1000000:      # |a| <= 2**24: exact in binary32
        return float(a)
    if -0x20000000000000 <= a <= 0x20000000000000:   # |a| <= 2**53
        return _f32_unpack(_f32_pack(float(a)))[0]   # exact in binary64: one rounding
    # Going through float(a) would round to 53 bits first and could land on a binary32 tie that the exact
    # value is not on (e.g. 2**62 + 2**38 + 1).  Round the magnitude to 24 significant bits by hand.
    n = a if a > 0 else -a
    shift = n.bit_length() - 24
    m = n >> shift
    rest = n & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if rest > half or (rest == half and m & 1):
        m += 1                          # m may become 2**24: still exact, still representable
    r = float(m << shift)               # at most 25 significant bits: exact
    return r if a > 0 else -r


def l2d(a: int) -> float:
    return float(a)   # int.__float__ rounds correctly (nearest, ties to even)


def f2i(a: float) -> int:
    """``(int) a``: truncation toward zero, saturating at INT_MIN/INT_MAX, NaN -> 0."""
    if a >= 2147483647.0:
        return 0x7FFFFFFF
    if a <= -2147483648.0:
        return -0x80000000
    if a == a:
        return int(a)
    return 0


def f2l(a: float) -> int:
    """``(long) a``: truncation toward zero, saturating at LONG_MIN/LONG_MAX, NaN -> 0."""
    if a >= 9223372036854775808.0:   # 2**63
        return 0x7FFFFFFFFFFFFFFF
    if a <= -9223372036854775808.0:
        return -0x8000000000000000
    if a == a:
        return int(a)
    return 0


def f2d(a: float) -> float:
    return a


def d2i(a: float) -> int:
    """``(int) a``: truncation toward zero, saturating at INT_MIN/INT_MAX, NaN -> 0."""
    if a >= 2147483647.0:
        return 0x7FFFFFFF
    if a <= -2147483648.0:
        return -0x80000000
    if a == a:
        return int(a)
    return 0


def d2l(a: float) -> int:
    """``(long) a``: truncation toward zero, saturating at LONG_MIN/LONG_MAX, NaN -> 0."""
    if a >= 9223372036854775808.0:   # 2**63
        return 0x7FFFFFFFFFFFFFFF
    if a <= -9223372036854775808.0:
        return -0x8000000000000000
    if a == a:
        return int(a)
    return 0


def d2f(a: float) -> float:
    try:
        return _f32_unpack(_f32_pack(a))[0]
    except OverflowError:
        return _copysign(_INF, a)


# --------------------------------------------------------------------------------------------- comparisons

def lcmp(a: int, b: int) -> int:
    return (a > b) - (a < b)


def fcmpl(a: float, b: float) -> int:
    """JVMS fcmpl: 1 if a > b, 0 if a == b (so -0.0 == 0.0), -1 if a < b or either is NaN."""
    if a > b:
        return 1
    if a == b:
        return 0
    return -1


def fcmpg(a: float, b: float) -> int:
    """JVMS fcmpg: 1 if a > b or either is NaN, 0 if a == b, -1 if a < b."""
    if a < b:
        return -1
    if a == b:
        return 0
    return 1


def dcmpl(a: float, b: float) -> int:
    """JVMS dcmpl: 1 if a > b, 0 if a == b (so -0.0 == 0.0), -1 if a < b or either is NaN."""
    if a > b:
        return 1
    if a == b:
        return 0
    return -1


def dcmpg(a: float, b: float) -> int:
    """JVMS dcmpg: 1 if a > b or either is NaN, 0 if a == b, -1 if a < b."""
    if a < b:
        return -1
    if a == b:
        return 0
    return 1


def cond_eq(a: int, b: int) -> bool:
    return a == b


def cond_ne(a: int, b: int) -> bool:
    return a != b


def cond_lt(a: int, b: int) -> bool:
    return a < b


def cond_ge(a: int, b: int) -> bool:
    return a >= b


def cond_gt(a: int, b: int) -> bool:
    return a > b


def cond_le(a: int, b: int) -> bool:
    return a <= b


# --------------------------------------------------------------------------------------------- bit views

def float_to_raw_int_bits(x: float) -> int:
    """``Float.floatToRawIntBits``: the binary32 encoding of ``x`` as a signed int."""
    try:
        return _I32.unpack(_f32_pack(x))[0]
    except OverflowError:       # not a float value; encode what to_f32 would make of it
        return _I32.unpack(_f32_pack(_copysign(_INF, x)))[0]


def int_bits_to_float(bits: int) -> float:
    """``Float.intBitsToFloat``: the float encoded by the low 32 bits of ``bits``."""
    return _f32_unpack(_U32.pack(bits & _M32))[0]


def double_to_raw_long_bits(x: float) -> int:
    """``Double.doubleToRawLongBits``: the binary64 encoding of ``x`` as a signed long."""
    return _I64.unpack(_F64.pack(x))[0]


def long_bits_to_double(bits: int) -> float:
    """``Double.longBitsToDouble``: the double encoded by the low 64 bits of ``bits``."""
    return _F64.unpack(_U64.pack(bits & _M64))[0]


# ------------------------------------------------------------------------------------ class initialization

def static_read_is_pure(owner: str, name: str, descriptor: str, current_class: str, method_is_static: bool,
                        declared_static_fields: Collection[tuple[str, str]]) -> bool:
    """Whether ``getstatic owner.name:descriptor`` in a method of ``current_class`` can neither throw nor run code.

    True exactly when the reference names the current class itself, that class declares a static field of this
    name AND descriptor (``declared_static_fields``: its (name, descriptor) pairs; field resolution looks in the
    class's own fields first, JVMS 5.4.3.2, so the reference resolves to that field, which the class may always
    access), and the method is static (``<clinit>`` included). A static method only runs once its class's
    initialization has completed or while this very thread is initializing it (invokestatic, reflection,
    method handles and JNI all initialize the class first, and another thread blocks until the initialization
    ends), and in both cases getstatic's initialization step does nothing (JVMS 5.5 steps 3-4). An instance
    method gets no such promise: ``this`` may have been created during ``<clinit>`` and handed to another thread,
    whose getstatic then waits for the initialization and may throw NoClassDefFoundError. A field declared in a
    superclass or superinterface is excluded too: an interface is not initialized with the classes that
    implement it, so reading its field may run its ``<clinit>``.
    """
    return method_is_static and owner == current_class and (name, descriptor) in declared_static_fields


# --------------------------------------------------------------------------------------------- tables

OPERATIONS: dict[str, Callable] = {
    "add.i": iadd, "sub.i": isub, "mul.i": imul, "div.i": idiv, "rem.i": irem, "neg.i": ineg,
    "shl.i": ishl, "shr.i": ishr, "ushr.i": iushr, "and.i": iand, "or.i": ior, "xor.i": ixor,
    "add.l": ladd, "sub.l": lsub, "mul.l": lmul, "div.l": ldiv, "rem.l": lrem, "neg.l": lneg,
    "shl.l": lshl, "shr.l": lshr, "ushr.l": lushr, "and.l": land, "or.l": lor, "xor.l": lxor,
    "add.f": fadd, "sub.f": fsub, "mul.f": fmul, "div.f": fdiv, "rem.f": frem, "neg.f": fneg,
    "add.d": dadd, "sub.d": dsub, "mul.d": dmul, "div.d": ddiv, "rem.d": drem, "neg.d": dneg,
    "i2l": i2l, "i2f": i2f, "i2d": i2d, "l2i": l2i, "l2f": l2f, "l2d": l2d,
    "f2i": f2i, "f2l": f2l, "f2d": f2d, "d2i": d2i, "d2l": d2l, "d2f": d2f,
    "i2b": i2b, "i2c": i2c, "i2s": i2s,
    "cmp.l": lcmp, "cmpl.f": fcmpl, "cmpg.f": fcmpg, "cmpl.d": dcmpl, "cmpg.d": dcmpg,
}
"""Typed operator name -> function.  Shift counts (second operand of ``shl/shr/ushr.l``) are ints."""

THROWING: frozenset[str] = frozenset({"div.i", "rem.i", "div.l", "rem.l"})
"""The operations of OPERATIONS that raise JavaArithmeticError (exactly when the divisor is zero)."""

CONDITIONS: dict[str, Callable[[int, int], bool]] = {
    "eq": cond_eq, "ne": cond_ne, "lt": cond_lt, "ge": cond_ge, "gt": cond_gt, "le": cond_le,
}
"""The int branch conditions (``if_icmp<cond>``, and ``if<cond>`` against 0) -> predicate."""
