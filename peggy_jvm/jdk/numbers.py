"""Models of numbers: Integer/Long bit helpers, parsing and radix text, ``Math``, boxing.

What this module owns
    Integer's and Long's static helpers (bit counts, rotations, unsigned text, signum/sum/min/max) and
    ``parseInt``/``parseLong``, radix ``toString``, ``Double.parseDouble``/``Float.parseFloat``; ``Math``'s
    operations whose results are exact (abs/min/max, the ``*Exact`` family, floorDiv/floorMod, sqrt, floor/ceil);
    float and double bits, ``isNaN``/``isInfinite``/``isFinite``; the wrappers (:func:`box` with the JDK's
    caches, ``valueOf``, ``xxxValue``, ``equals``, ``hashCode``, ``compare``/``compareTo``,
    ``Boolean.parseBoolean``) and the primitive conversions lambdas apply (:func:`_widen`, :data:`_CONVERT`).

Inputs / outputs
    Models registered into :data:`~peggy_jvm.jdk.registry.MODELS` at import; :func:`box` for the handler.

Invariants
    All arithmetic through :mod:`peggy_jvm.semantics`; ``valueOf`` returns one cached instance per heap where the
    JDK caches (:data:`_BOX_CACHE`).
"""
from __future__ import annotations

import math
from typing import Any, Callable, cast

from .. import semantics as S
from ..ir.interp import NPE, Boxed, Heap, Interpreter, Unsupported, Value
from .registry import MODELS, Model, model
from .strings import _ascii_only, _str_arg


# java.lang.Integer / Long (static helpers; no boxing)
def _register_bit_helpers(owner: str, bits: int, d: str) -> None:
    """Integer's or Long's static bit helpers, and Math.abs/min/max of that type."""
    mask = (1 << bits) - 1
    wrap = S.wrap_i if bits == 32 else S.wrap_l

    def unsigned_string(base: str) -> Model:
        return lambda h, interp, recv, a: format(a[0] & mask, base)

    def ntz(h, interp, recv, a):
        u = a[0] & mask
        return bits if u == 0 else (u & -u).bit_length() - 1

    def highest(h, interp, recv, a):
        u = a[0] & mask
        return wrap(1 << (u.bit_length() - 1)) if u else 0

    def rotate_left(h, interp, recv, a):
        u, k = a[0] & mask, a[1] % bits  # the distance is masked like a shift count
        return wrap(((u << k) | (u >> (bits - k))) & mask)

    def rotate_right(h, interp, recv, a):
        u, k = a[0] & mask, a[1] % bits
        return wrap(((u >> k) | (u << (bits - k))) & mask)

    string = "Ljava/lang/String;"
    table: dict[tuple[str, str], Model] = {
        ("toHexString", f"({d}){string}"): unsigned_string("x"),
        ("toOctalString", f"({d}){string}"): unsigned_string("o"),
        ("toBinaryString", f"({d}){string}"): unsigned_string("b"),
        ("bitCount", f"({d})I"): lambda h, i, r, a: bin(a[0] & mask).count("1"),
        ("numberOfLeadingZeros", f"({d})I"): lambda h, i, r, a: bits - (a[0] & mask).bit_length(),
        ("numberOfTrailingZeros", f"({d})I"): ntz,
        ("highestOneBit", f"({d}){d}"): highest,
        ("lowestOneBit", f"({d}){d}"): lambda h, i, r, a: wrap((a[0] & mask) & -(a[0] & mask)),
        ("signum", f"({d})I"): lambda h, i, r, a: (a[0] > 0) - (a[0] < 0),
        ("max", f"({d}{d}){d}"): lambda h, i, r, a: max(a[0], a[1]),
        ("min", f"({d}{d}){d}"): lambda h, i, r, a: min(a[0], a[1]),
        ("sum", f"({d}{d}){d}"): lambda h, i, r, a: wrap(a[0] + a[1]),
        ("reverse", f"({d}){d}"): lambda h, i, r, a: wrap(int(format(a[0] & mask, f"0{bits}b")[::-1], 2)),
        ("reverseBytes", f"({d}){d}"):
            lambda h, i, r, a: wrap(int.from_bytes((a[0] & mask).to_bytes(bits // 8, "big"), "little")),
        ("rotateLeft", f"({d}I){d}"): rotate_left,
        ("rotateRight", f"({d}I){d}"): rotate_right,
    }
    for (name, desc), fn in table.items():
        MODELS[(owner, name, desc)] = fn
    MODELS[("java/lang/Math", "abs", f"({d}){d}")] = lambda h, i, r, a: wrap(abs(a[0]))  # abs(MIN) is MIN
    MODELS[("java/lang/Math", "max", f"({d}{d}){d}")] = lambda h, i, r, a: max(a[0], a[1])
    MODELS[("java/lang/Math", "min", f"({d}{d}){d}")] = lambda h, i, r, a: min(a[0], a[1])


_register_bit_helpers("java/lang/Integer", 32, "I")
_register_bit_helpers("java/lang/Long", 64, "J")


def _parse_int(bits: int) -> Model:
    def parse(h, interp, recv, args):
        s = args[0]
        if s is None:
            interp.throw("java/lang/NumberFormatException")
        _ascii_only(s, "parseInt")
        body = s[1:] if s[:1] in ("+", "-") else s
        if not body or not body.isdigit():
            interp.throw("java/lang/NumberFormatException")
        v = int(s)
        if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
            interp.throw("java/lang/NumberFormatException")
        return v
    return parse


MODELS[("java/lang/Integer", "parseInt", "(Ljava/lang/String;)I")] = _parse_int(32)
MODELS[("java/lang/Long", "parseLong", "(Ljava/lang/String;)J")] = _parse_int(64)


def _floor_div(h, interp, recv, args):
    a, b = args
    if b == 0:
        interp.throw("java/lang/ArithmeticException", "/ by zero")
    return a // b  # Python's // is floor division; MIN / -1 wraps back to MIN below


def _floor_mod(h, interp, recv, args):
    a, b = args
    if b == 0:
        interp.throw("java/lang/ArithmeticException", "/ by zero")
    return a % b


for _d in ("II", "JJ"):
    _r = _d[0]
    MODELS[("java/lang/Math", "floorMod", f"({_d}){_r}")] = _floor_mod
MODELS[("java/lang/Math", "floorDiv", "(II)I")] = lambda h, i, r, a: S.wrap_i(_floor_div(h, i, r, a))
MODELS[("java/lang/Math", "floorDiv", "(JJ)J")] = lambda h, i, r, a: S.wrap_l(_floor_div(h, i, r, a))


def _exact(wrap: Callable[[int], int], fn: Callable[..., int]) -> Model:
    def exact(h, interp, recv, args):
        v = fn(*args)
        if wrap(v) != v:
            interp.throw("java/lang/ArithmeticException", "integer overflow" if wrap is S.wrap_i else "long overflow")
        return v
    return exact


for _d, _w in (("I", S.wrap_i), ("J", S.wrap_l)):
    MODELS[("java/lang/Math", "addExact", f"({_d}{_d}){_d}")] = _exact(_w, lambda a, b: a + b)
    MODELS[("java/lang/Math", "subtractExact", f"({_d}{_d}){_d}")] = _exact(_w, lambda a, b: a - b)
    MODELS[("java/lang/Math", "multiplyExact", f"({_d}{_d}){_d}")] = _exact(_w, lambda a, b: a * b)
    MODELS[("java/lang/Math", "negateExact", f"({_d}){_d}")] = _exact(_w, lambda a: -a)
MODELS[("java/lang/Math", "toIntExact", "(J)I")] = _exact(S.wrap_i, lambda a: a)


# Math on float / double: only the operations whose results IEEE 754 pins down exactly
def _fmin_max(is_min: bool, to: Callable[[float], float]) -> Model:
    def pick(h, interp, recv, args):
        a, b = args
        if a != a:
            return a
        if b != b:
            return b
        if a == b == 0.0:  # -0.0 is smaller than 0.0
            neg = math.copysign(1.0, a) < 0 or math.copysign(1.0, b) < 0 if is_min else \
                math.copysign(1.0, a) < 0 and math.copysign(1.0, b) < 0
            return -0.0 if neg else 0.0
        return min(a, b) if is_min else max(a, b)
    return pick


for _d in ("F", "D"):
    MODELS[("java/lang/Math", "abs", f"({_d}){_d}")] = lambda h, i, r, a: math.copysign(a[0], 1.0)
    MODELS[("java/lang/Math", "min", f"({_d}{_d}){_d}")] = _fmin_max(True, float)
    MODELS[("java/lang/Math", "max", f"({_d}{_d}){_d}")] = _fmin_max(False, float)


def _sqrt(h, interp, recv, args):
    x = args[0]
    if x != x or x < 0:
        return math.nan
    return math.sqrt(x)  # correctly rounded (IEEE 754), as Java's


MODELS[("java/lang/Math", "sqrt", "(D)D")] = _sqrt


def _rounding(fn: Callable[[float], int]) -> Model:
    """Math.floor / Math.ceil: NaN, infinities and zeros unchanged; the sign of a zero result kept."""
    def rounded(h, interp, recv, args):
        x = args[0]
        if x != x or math.isinf(x) or x == 0:
            return x
        return math.copysign(float(fn(x)), x)
    return rounded


MODELS[("java/lang/Math", "floor", "(D)D")] = _rounding(math.floor)
MODELS[("java/lang/Math", "ceil", "(D)D")] = _rounding(math.ceil)
MODELS[("java/lang/Float", "floatToRawIntBits", "(F)I")] = lambda h, i, r, a: S.float_to_raw_int_bits(a[0])
MODELS[("java/lang/Float", "floatToIntBits", "(F)I")] = \
    lambda h, i, r, a: 0x7FC00000 if a[0] != a[0] else S.float_to_raw_int_bits(a[0])
MODELS[("java/lang/Float", "intBitsToFloat", "(I)F")] = lambda h, i, r, a: S.int_bits_to_float(a[0])
MODELS[("java/lang/Double", "doubleToRawLongBits", "(D)J")] = lambda h, i, r, a: S.double_to_raw_long_bits(a[0])
MODELS[("java/lang/Double", "doubleToLongBits", "(D)J")] = \
    lambda h, i, r, a: 0x7FF8000000000000 if a[0] != a[0] else S.double_to_raw_long_bits(a[0])
MODELS[("java/lang/Double", "longBitsToDouble", "(J)D")] = lambda h, i, r, a: S.long_bits_to_double(a[0])
for _owner, _d in (("java/lang/Float", "F"), ("java/lang/Double", "D")):
    MODELS[(_owner, "isNaN", f"({_d})Z")] = lambda h, i, r, a: int(a[0] != a[0])
    MODELS[(_owner, "isInfinite", f"({_d})Z")] = lambda h, i, r, a: int(math.isinf(a[0]))
    MODELS[(_owner, "isFinite", f"({_d})Z")] = lambda h, i, r, a: int(math.isfinite(a[0]))


def _float_compare(x: float, y: float) -> int:
    """Float.compare / Double.compare: -0.0 < 0.0, NaN equals itself and is above everything."""
    def key(x: float) -> tuple:
        return (1, 0.0) if x != x else (0, x, math.copysign(1.0, x))
    a, b = key(x), key(y)
    return (a > b) - (a < b)


# -- boxes ---------------------------------------------------------------------------------------------------
BOX_OF = {"I": "java/lang/Integer", "J": "java/lang/Long", "S": "java/lang/Short", "B": "java/lang/Byte",
          "C": "java/lang/Character", "Z": "java/lang/Boolean", "F": "java/lang/Float", "D": "java/lang/Double"}
"""Primitive descriptor -> its wrapper class."""
PRIM_OF = {cls: d for d, cls in BOX_OF.items()}
# the values valueOf returns a shared instance for (JDK 17 defaults: no AutoBoxCacheMax); Float/Double: none
_BOX_CACHE = {"java/lang/Integer": (-128, 127), "java/lang/Long": (-128, 127), "java/lang/Short": (-128, 127),
              "java/lang/Byte": (-128, 127), "java/lang/Character": (0, 127), "java/lang/Boolean": (0, 1)}


def box(heap: Heap, prim: str, v: Value) -> Boxed:
    """``Wrapper.valueOf(v)`` for a primitive of descriptor ``prim``: the cached instance where the JDK has one."""
    cls = BOX_OF[prim]
    n = cast("int | float", v)  # a primitive of descriptor prim
    rng = _BOX_CACHE.get(cls)
    if rng is not None and rng[0] <= n <= rng[1]:
        key = (cls, n)
        b = heap.boxes.get(key)
        if b is None:
            b = heap.boxes[key] = Boxed(cls, n)
        return cast(Boxed, b)  # the (class, value) keys of heap.boxes hold boxes
    return Boxed(cls, n)


def _float_bits(x: float, prim: str) -> int:
    """floatToIntBits / doubleToLongBits (NaN canonical), signed."""
    if x != x:
        return 0x7FC00000 if prim == "F" else 0x7FF8000000000000
    return S.float_to_raw_int_bits(x) if prim == "F" else S.double_to_raw_long_bits(x)


def _prim_hash(prim: str, v: int | float) -> int:
    """``Wrapper.hashCode(v)`` for a primitive of descriptor ``prim``."""
    if prim in "ISBC":
        return cast(int, v)
    if prim == "Z":
        return 1231 if v else 1237
    if prim == "F":
        return _float_bits(v, "F")
    bits = (cast(int, v) if prim == "J" else _float_bits(v, "D")) & 0xFFFFFFFFFFFFFFFF
    return S.wrap_i(bits ^ (bits >> 32))


def _prim_compare(prim: str, a: int | float, b: int | float) -> int:
    """``Wrapper.compare(a, b)`` (Short, Byte, Character: the difference; Boolean: false < true)."""
    if prim in "SBC":
        return cast(int, a) - cast(int, b)
    if prim in "FD":
        return _float_compare(a, b)
    return (a > b) - (a < b)


def _prim_eq_bits(prim: str, a: int | float, b: int | float) -> bool:
    if prim in "FD":
        return _float_bits(a, prim) == _float_bits(b, prim)
    return a == b


# conversions of a box's value to each primitive (xxxValue): exactly the JLS casts
_CONVERT: dict[tuple[str, str], Callable[[Any], Value]] = {}
_fn: Callable[[Any], Value]
for _src in "ISBJFD":
    for _dst in "BSIJFD":
        if _src in "ISB":
            _fn = {"B": S.i2b, "S": S.i2s, "I": lambda x: x, "J": S.i2l, "F": S.i2f, "D": S.i2d}[_dst]
        elif _src == "J":
            _fn = {"B": lambda x: S.i2b(S.l2i(x)), "S": lambda x: S.i2s(S.l2i(x)), "I": S.l2i, "J": lambda x: x,
                 "F": S.l2f, "D": S.l2d}[_dst]
        elif _src == "F":
            _fn = {"B": lambda x: S.i2b(S.f2i(x)), "S": lambda x: S.i2s(S.f2i(x)), "I": S.f2i, "J": S.f2l,
                 "F": lambda x: x, "D": S.f2d}[_dst]
        else:
            _fn = {"B": lambda x: S.i2b(S.d2i(x)), "S": lambda x: S.i2s(S.d2i(x)), "I": S.d2i, "J": S.d2l,
                 "F": S.d2f, "D": lambda x: x}[_dst]
        _CONVERT[(_src, _dst)] = _fn
_CONVERT[("C", "C")] = _CONVERT[("Z", "Z")] = lambda x: x
_VALUE_METHOD = {"B": "byteValue", "S": "shortValue", "I": "intValue", "J": "longValue", "F": "floatValue",
                 "D": "doubleValue", "C": "charValue", "Z": "booleanValue"}


def _register_box(prim: str) -> None:
    cls = BOX_OF[prim]
    ref = f"L{cls};"

    def value_of(h, interp, recv, args):
        return box(interp.heap, prim, args[0])

    def to_string(h, interp, recv, args):
        return h.to_java_string(interp, recv.value, prim)

    def static_to_string(h, interp, recv, args):
        return h.to_java_string(interp, args[0], prim)

    def equals(h, interp, recv, args):
        o = args[0]
        return int(type(o) is Boxed and o.cls == cls and _prim_eq_bits(prim, recv.value, o.value))

    def compare_to(h, interp, recv, args):
        o = args[0]
        if o is None:
            interp.throw(NPE)
        if not (type(o) is Boxed and o.cls == cls):
            interp.throw("java/lang/ClassCastException")
        return _prim_compare(prim, recv.value, o.value)

    MODELS[(cls, "valueOf", f"({prim}){ref}")] = value_of
    MODELS[(cls, "toString", "()Ljava/lang/String;")] = to_string
    MODELS[(cls, "toString", f"({prim})Ljava/lang/String;")] = static_to_string
    MODELS[(cls, "equals", "(Ljava/lang/Object;)Z")] = equals
    MODELS[(cls, "hashCode", "()I")] = lambda h, i, r, a: _prim_hash(prim, cast(Boxed, r).value)
    MODELS[(cls, "hashCode", f"({prim})I")] = lambda h, i, r, a: _prim_hash(prim, a[0])
    MODELS[(cls, "compareTo", f"({ref})I")] = compare_to
    MODELS[(cls, "compareTo", "(Ljava/lang/Object;)I")] = compare_to  # the bridge (checkcast first)
    MODELS[(cls, "compare", f"({prim}{prim})I")] = lambda h, i, r, a: _prim_compare(prim, a[0], a[1])
    for dst in ("BSIJFD" if prim in "ISBJFD" else prim):
        MODELS[(cls, _VALUE_METHOD[dst], f"(){dst}")] = _value_method(_CONVERT[(prim, dst)])


def _value_method(conv: Callable[[Any], Value]) -> Model:
    """``xxxValue()`` of a box: its value converted by ``conv``."""
    return lambda h, i, r, a: conv(cast(Boxed, r).value)


for _p in "IJSBCZFD":
    _register_box(_p)


def _parse_boolean(s: str | None) -> int:
    """``Boolean.parseBoolean``: ``"true".equalsIgnoreCase(s)`` (non-ASCII text of length 4: Unsupported)."""
    if s is None or len(s) != 4:
        return 0
    _ascii_only(s, "Boolean.parseBoolean")
    return int(s.lower() == "true")


@model("java/lang/Boolean", "parseBoolean", "(Ljava/lang/String;)Z")
def _boolean_parse(h, interp, recv, args):
    return _parse_boolean(_str_or_null(interp, args[0]))


@model("java/lang/Boolean", "valueOf", "(Ljava/lang/String;)Ljava/lang/Boolean;")
def _boolean_value_of_string(h, interp, recv, args):
    return box(interp.heap, "Z", _parse_boolean(_str_or_null(interp, args[0])))


def _str_or_null(interp: Interpreter, v: Value) -> str | None:
    return None if v is None else _str_arg(interp, v)


def _widen(v: Value, src: str, dst: str) -> Value:
    """A widening primitive conversion (JLS 5.1.2) or the identity; anything else is Unsupported."""
    if src == dst:
        return v
    ints = "BSCI"
    if src in ints and dst in "IJ" or src == "B" and dst == "S":
        return v
    # v is a primitive of descriptor src (a Value's type is its descriptor's: cast)
    if src in ints and dst == "F":
        return S.i2f(cast(int, v))
    if src in ints and dst == "D":
        return S.i2d(cast(int, v))
    if src == "J" and dst in "FD":
        return S.l2f(cast(int, v)) if dst == "F" else S.l2d(cast(int, v))
    if src == "F" and dst == "D":
        return S.f2d(cast(float, v))
    raise Unsupported(f"conversion {src} -> {dst}")


def _to_radix(v: int, radix: int) -> str:
    """``Integer.toString(i, radix)`` / ``Long.toString``: radix outside 2..36 means 10; lower-case digits."""
    if not 2 <= radix <= 36:
        radix = 10
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    n, out = abs(v), []
    while True:
        n, r = divmod(n, radix)
        out.append(digits[r])
        if n == 0:
            break
    return ("-" if v < 0 else "") + "".join(reversed(out))


MODELS[("java/lang/Integer", "toString", "(II)Ljava/lang/String;")] = lambda h, i, r, a: _to_radix(a[0], a[1])
MODELS[("java/lang/Long", "toString", "(JI)Ljava/lang/String;")] = lambda h, i, r, a: _to_radix(a[0], a[1])


def _parse_floating(prim: str) -> Model:
    """``Double.parseDouble`` / ``Float.parseFloat`` for decimal text (surrounding chars <= ' ' trimmed, a sign,
    digits with an optional point, an optional exponent, an optional f/F/d/D suffix; NaN, Infinity): the
    correctly rounded value, as the JDK's; other text that Java rejects throws NumberFormatException; hexadecimal
    text is not modelled."""
    import re

    number = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?\Z")
    hexadecimal = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?\d+[fFdD]?\Z")

    def parse(h, interp, recv, args):
        s = args[0]
        if s is None:
            interp.throw(NPE)
        t = _str_arg(interp, s).strip("".join(map(chr, range(33))))
        if t in ("NaN", "+NaN", "-NaN"):
            return math.nan
        if t in ("Infinity", "+Infinity", "-Infinity"):
            return -math.inf if t[0] == "-" else math.inf
        if not t.isascii() or not number.match(t):
            if hexadecimal.match(t):
                raise Unsupported("parsing hexadecimal floating-point text")
            interp.throw("java/lang/NumberFormatException")
        body = t.rstrip("fFdD")
        # float(): correctly rounded to double; a float is rounded once more from the exact decimal, which
        # Python's float32 path does not offer, so only texts whose double rounds to float exactly are safe
        v = float(body)
        if prim == "D":
            return v
        f = S.to_f32(v)
        if f != v and not _decimal_rounds_like(body, f):
            raise Unsupported("Float.parseFloat of a text whose double rounding might differ")
        return f
    return parse


def _decimal_rounds_like(text: str, f: float) -> bool:
    """Whether the exact decimal ``text`` lies strictly inside the rounding interval of float ``f`` (then
    rounding it directly to float gives ``f``, whatever double rounding did)."""
    from fractions import Fraction

    if math.isinf(f):
        return False
    exact = Fraction(text)
    bits = S.float_to_raw_int_bits(f) & 0x7FFFFFFF
    lo = Fraction(S.int_bits_to_float(bits - 1)) if bits else -Fraction(S.int_bits_to_float(1))
    hi = Fraction(2 ** 128) if bits + 1 == 0x7F800000 else Fraction(S.int_bits_to_float(bits + 1))
    mid_lo, mid_hi = (Fraction(abs(f)) + lo) / 2, (Fraction(abs(f)) + hi) / 2
    return mid_lo < abs(exact) < mid_hi


MODELS[("java/lang/Double", "parseDouble", "(Ljava/lang/String;)D")] = _parse_floating("D")
MODELS[("java/lang/Float", "parseFloat", "(Ljava/lang/String;)F")] = _parse_floating("F")
