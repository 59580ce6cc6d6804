"""Java's float and double to text, exactly as JDK 17's ``FloatingDecimal`` writes them.

What this module owns
    :func:`double_to_string` (``Double.toString``, ``String.valueOf(double)``, ``"" + d``) and
    :func:`float_to_string` (the same for float): the JDK's digits and exponent, not the shortest digits Python's
    ``repr`` gives.

Inputs / outputs
    A Python float (a float argument is binary32-exact) -> the Java text.

Invariants
    Checked against the JVM's text on about 590,000 values (tests/test_interp.py,
    ``test_float_and_double_to_string_are_the_jdks``); a value the digit generator cannot handle raises
    :class:`~peggy_jvm.ir.interp.Unsupported`.
"""
from __future__ import annotations

import math

from .. import semantics as S
from ..ir.interp import Unsupported

__all__ = ["double_to_string", "float_to_string"]

# -- Java's float and double to string (JDK 17's FloatingDecimal) ----------------------------------------------
# Double.toString and Float.toString in JDK 17 are not the shortest-digits conversion Python's repr is: they run
# FloatingDecimal's digit generator, which has an integer fast path that keeps digits beyond the shortest (2^60
# prints as 1.15292150460684698E18), a symmetric stopping test, a forced second digit in E-form, and int/long
# arithmetic that may wrap around. What follows computes the same digits and exponent, re-derived from that
# behaviour and checked against the JVM on hundreds of thousands of values (tests/test_interp.py).

_N5_BITS = tuple(0 if i == 0 else (5 ** i).bit_length() for i in range(27))
"""Bits of 5^i as FloatingDecimal estimates them (0 for 5^0) for the exponents its tables hold."""


def _ins_digits_pow2(p2: int) -> int:
    """Decimal digits of 2^p2 that cannot matter (floor(log10 2^p2)) for 1 < p2 < 64, else 0."""
    return len(str(1 << p2)) - 1 if 1 < p2 < 64 else 0


def _estimate_dec_exp(fract: int, bin_exp: int) -> int:
    """floor(log10(value)) estimated in double arithmetic, as the JDK does (it may be one too high)."""
    d2 = S.long_bits_to_double(0x3FF0000000000000 | (fract & 0xFFFFFFFFFFFFF))
    d = (d2 - 1.5) * 0.289529654 + 0.176091259 + bin_exp * 0.301029995663981
    return math.floor(d)


def _long_digits(value: int, insignificant: int) -> tuple[str, int]:
    """An integer value's digits (trailing zeros dropped), the last ``insignificant`` rounded away half-up."""
    dec = 0
    if insignificant:
        pow10 = 10 ** insignificant
        value, residue = divmod(value, pow10)
        dec = insignificant
        if residue >= pow10 >> 1:
            value += 1
    text = str(value)
    return text.rstrip("0"), dec + len(text)


def _dtoa(bin_exp: int, fract: int, n_sig: int) -> tuple[str, int]:
    """Digits and decimal exponent (value = 0.DIGITS * 10^exp) of fract * 2^(bin_exp - 52), where ``fract`` has
    its highest bit at 52 and ``n_sig`` significant bits (53 for a double, 24 for a float, fewer if subnormal)."""
    tail = (fract & -fract).bit_length() - 1
    n_fract = 53 - tail  # significant bits up to the last one set
    n_tiny = max(0, n_fract - bin_exp - 1)  # bits right of the binary point
    if -21 <= bin_exp <= 62 and n_tiny == 0 and n_fract < 64:
        # an integer that fits a long: its digits, less those below the precision of the binary value
        insignificant = _ins_digits_pow2(bin_exp - n_sig - 1) if bin_exp > n_sig else 0
        value = fract << (bin_exp - 52) if bin_exp >= 52 else fract >> (52 - bin_exp)
        return _long_digits(value, insignificant)
    dec_exp = _estimate_dec_exp(fract, bin_exp)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny
    m5 = b5
    m2 = b2 - n_sig
    fract >>= tail
    b2 -= n_fract - 1
    common = min(b2, s2)
    b2 -= common
    s2 -= common
    m2 -= common
    if n_fract == 1:  # a power of two: the gap below is half the gap above, taken symmetric as the JDK does
        m2 -= 1
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0
    b_bits = n_fract + b2 + (_N5_BITS[b5] if b5 < 27 else b5 * 3)
    ten_s_bits = s2 + 1 + (_N5_BITS[s5 + 1] if s5 + 1 < 27 else (s5 + 1) * 3)
    if b_bits < 64 and ten_s_bits < 64:
        if b_bits < 32 and ten_s_bits < 32:
            digits, dec_exp, low, high, low_diff = _digits_fixed(fract, b5, b2, s5, s2, m5, m2, dec_exp, 32)
        else:
            digits, dec_exp, low, high, low_diff = _digits_fixed(fract, b5, b2, s5, s2, m5, m2, dec_exp, 64)
    else:
        digits, dec_exp, low, high, low_diff = _digits_big(fract, b5, b2, s5, s2, m5, m2, dec_exp)
    dec_exponent = dec_exp + 1
    if high and (not low or low_diff > 0 or low_diff == 0 and digits[-1] & 1):
        dec_exponent += _round_up(digits)
    return "".join(map(str, digits)), dec_exponent


def _e_form(dec_exp: int) -> bool:
    """Whether the first digit alone may not end the digits (E-form needs one after the point), by the JDK's
    bounds on the exponent before the first digit is placed."""
    return dec_exp < -3 or dec_exp >= 8


def _digits_fixed(fract: int, b5: int, b2: int, s5: int, s2: int, m5: int, m2: int, dec_exp: int, bits: int):
    """The digit loop in Java int (bits=32) or long (64) arithmetic, wrapping where Java's wraps."""
    if bits == 32:
        wrap, shl, div, rem = S.wrap_i, S.ishl, S.idiv, S.irem
    else:
        wrap, shl, div, rem = S.wrap_l, S.lshl, S.ldiv, S.lrem
    b = shl(wrap(wrap(fract) * 5 ** b5), b2)
    s = shl(5 ** s5, s2)
    m = shl(5 ** m5, m2)
    tens = wrap(s * 10)
    q = div(b, s)
    b = wrap(10 * rem(b, s))
    m = wrap(m * 10)
    low = b < m
    high = wrap(b + m) > tens
    digits: list[int] = []
    if q == 0 and not high:
        dec_exp -= 1  # the estimate was one too high
    else:
        digits.append(_digit(q))
    if _e_form(dec_exp):
        low = high = False
    while not low and not high:
        q = div(b, s)
        b = wrap(10 * rem(b, s))
        m = wrap(m * 10)
        if m > 0:
            low = b < m
            high = wrap(b + m) > tens
        else:  # m wrapped around: the JDK takes both tests as true
            low = high = True
        digits.append(_digit(q))
    return digits, dec_exp, low, high, wrap(shl(b, 1) - tens)


def _digits_big(fract: int, b5: int, b2: int, s5: int, s2: int, m5: int, m2: int, dec_exp: int):
    """The digit loop on big integers (its high test is B + M >= 10 S, where the fixed-width loops use >)."""
    s = 5 ** s5 << s2
    b = fract * 5 ** b5 << b2
    m = 5 ** (m5 + 1) << (m2 + 1)  # 10 M
    tens = 10 * s
    q, r = divmod(b, s)
    b = 10 * r
    low = b < m
    high = b + m >= tens
    digits: list[int] = []
    if q == 0 and not high:
        dec_exp -= 1
    else:
        digits.append(_digit(q))
    if _e_form(dec_exp):
        low = high = False
    while not low and not high:
        q, r = divmod(b, s)
        b = 10 * r
        m *= 10
        low = b < m
        high = b + m >= tens
        digits.append(_digit(q))
    low_diff = ((b << 1) > tens) - ((b << 1) < tens) if high and low else 0
    return digits, dec_exp, low, high, low_diff


def _digit(q: int) -> int:
    if not 0 <= q <= 9:
        raise Unsupported(f"FloatingDecimal model: digit {q}")  # never seen in testing; not guessed either
    return q


def _round_up(digits: list[int]) -> int:
    """Add one to the last digit, carrying; a carry out of the first makes it 1 (the rest are 0): returns 1
    then (the exponent grows), else 0. Digits keep their count, so trailing zeros may remain."""
    i = len(digits) - 1
    while digits[i] == 9 and i > 0:
        digits[i] = 0
        i -= 1
    if digits[i] == 9:
        digits[0] = 1
        return 1
    digits[i] += 1
    return 0


def _java_format(negative: bool, digits: str, dec_exponent: int) -> str:
    """Java's layout of 0.DIGITS * 10^dec_exponent: plain for 10^-3 <= |v| < 10^7, else d.dddE[-]n."""
    sign = "-" if negative else ""
    n = len(digits)
    if 0 < dec_exponent < 8:
        if n <= dec_exponent:
            return f"{sign}{digits}{'0' * (dec_exponent - n)}.0"
        return f"{sign}{digits[:dec_exponent]}.{digits[dec_exponent:]}"
    if -3 < dec_exponent <= 0:
        return f"{sign}0.{'0' * -dec_exponent}{digits}"
    e = dec_exponent - 1
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e}"


def double_to_string(x: float) -> str:
    """``Double.toString(x)`` exactly as JDK 17 prints it."""
    bits = S.double_to_raw_long_bits(x) & 0xFFFFFFFFFFFFFFFF
    negative = bits >> 63 == 1
    fract = bits & 0xFFFFFFFFFFFFF
    bin_exp = (bits >> 52) & 0x7FF
    if bin_exp == 0x7FF:
        return "NaN" if fract else ("-Infinity" if negative else "Infinity")
    if bin_exp == 0:
        if fract == 0:
            return "-0.0" if negative else "0.0"
        shift = 53 - fract.bit_length()  # normalize a subnormal: its highest bit to bit 52
        fract <<= shift
        bin_exp = 1 - shift
        n_sig = 53 - shift
    else:
        fract |= 1 << 52
        n_sig = 53
    return _java_format(negative, *_dtoa(bin_exp - 1023, fract, n_sig))


def float_to_string(x: float) -> str:
    """``Float.toString(x)`` exactly as JDK 17 prints it (``x`` is binary32-exact)."""
    bits = S.float_to_raw_int_bits(x) & 0xFFFFFFFF
    negative = bits >> 31 == 1
    fract = bits & 0x7FFFFF
    bin_exp = (bits >> 23) & 0xFF
    if bin_exp == 0xFF:
        return "NaN" if fract else ("-Infinity" if negative else "Infinity")
    if bin_exp == 0:
        if fract == 0:
            return "-0.0" if negative else "0.0"
        shift = 24 - fract.bit_length()
        fract <<= shift
        bin_exp = 1 - shift
        n_sig = 24 - shift
    else:
        fract |= 1 << 23
        n_sig = 24
    return _java_format(negative, *_dtoa(bin_exp - 127, fract << 29, n_sig))
