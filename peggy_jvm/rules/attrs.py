"""Attributes as written in axiom patterns: literals and attribute variables inside ``[...]`` and after ``const.X``.

What this module owns
    :func:`parse_attr` (the text between brackets, for a given operator) and :func:`parse_const_literal` (the
    literal of ``(const.i 0)``), both returning :class:`~peggy_jvm.egraph.pattern.AttrVar` or
    :class:`~peggy_jvm.egraph.pattern.AttrLit`; :func:`stored_kind` (which Java type a field or array element
    attribute stores, for the narrowing axioms).

How attributes are written (see docs/axioms.md)
    * ``$name``: an attribute variable.
    * constants: ``const.i``/``const.l`` integers (decimal or hex; hex is read as two's complement, ``L`` suffix
      allowed), ``const.f``/``const.d`` decimal floats, ``NaN``, ``Inf``, ``-Inf`` (stored as raw bits like the
      PEG does: a float literal that is not exactly a binary32 value is an error; ``NaN`` matches every NaN),
      ``const.b`` ``true``/``false``, ``const.a`` ``null`` or a quoted string.
    * ``method``: ``owner.name(descriptor)``, e.g. ``java/lang/Math.abs(I)I`` (matches a
      :class:`~peggy_jvm.ir.nodes.MethodRef` on owner, name and descriptor, whatever its ``interface`` flag).
    * ``field``: ``owner.name:descriptor``, e.g. ``java/awt/Point.x:I`` (a :class:`~peggy_jvm.ir.nodes.FieldRef`).
    * ``loop``: an integer depth; everything else (``elem``, ``class``...): a bare word or a quoted string.
"""
from __future__ import annotations

import math
import re
from typing import Any

from .. import semantics as S
from ..egraph.pattern import AttrLit, AttrVar
from ..ir.nodes import NULL_TYPE, Const, ConstKind, FieldRef, MethodRef
from ..peg.ops import OPS

__all__ = ["AttrParseError", "parse_attr", "parse_const_literal", "stored_kind"]


class AttrParseError(ValueError):
    pass


_F_NAN = 0x7FC00000
_D_NAN = 0x7FF8000000000000


def _float_text(text: str) -> float:
    t = text.strip().rstrip("fFdD") if not text.strip().lower().endswith(("inf", "nan")) else text.strip()
    low = t.lower()
    if low in ("nan", "+nan", "-nan"):
        return math.nan
    if low in ("inf", "+inf", "infinity"):
        return math.inf
    if low in ("-inf", "-infinity"):
        return -math.inf
    try:
        return float(t)
    except ValueError:
        raise AttrParseError(f"expected a floating-point literal, found {text!r}") from None


def _int_text(text: str, bits: int) -> int:
    t = text.strip()
    if t[-1:] in "lL":
        t = t[:-1]
    try:
        v = int(t, 0)
    except ValueError:
        raise AttrParseError(f"expected an integer literal, found {text!r}") from None
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if t.lower().lstrip("+-").startswith("0x") and 0 <= v < (1 << bits):
        v = v - (1 << bits) if v > hi else v  # hex literals are bit patterns, as in Java
    if not lo <= v <= hi:
        raise AttrParseError(f"{text} does not fit in {bits} bits")
    return v


def _is_nan_f(a: Any) -> bool:
    return isinstance(a, int) and (a & 0x7F800000) == 0x7F800000 and bool(a & 0x007FFFFF)


def _is_nan_d(a: Any) -> bool:
    return isinstance(a, int) and (a & 0x7FF0000000000000) == 0x7FF0000000000000 and bool(a & 0x000FFFFFFFFFFFFF)


def _is_null(a: Any) -> bool:
    return isinstance(a, Const) and a.kind is ConstKind.VALUE and a.value is None


def parse_const_literal(text: str, op: str) -> AttrLit:
    """The attribute of constant op ``op`` written as ``text``."""
    if op == "const.i":
        return AttrLit(_int_text(text, 32), text=text)
    if op == "const.l":
        return AttrLit(_int_text(text, 64), text=text)
    if op in ("const.f", "const.d"):
        v = _float_text(text)
        if v != v:
            return AttrLit(_F_NAN if op == "const.f" else _D_NAN, _is_nan_f if op == "const.f" else _is_nan_d, text)
        if op == "const.f":
            if S.to_f32(v) != v:
                raise AttrParseError(f"{text} is not exactly a float (binary32) value")
            return AttrLit(S.float_to_raw_int_bits(v), text=text)
        return AttrLit(S.double_to_raw_long_bits(v), text=text)
    if op == "const.b":
        if text in ("true", "false"):
            return AttrLit(text == "true", text=text)
        raise AttrParseError(f"expected true or false, found {text!r}")
    if op == "const.a":
        if text == "null":
            return AttrLit(Const(NULL_TYPE, None), _is_null, text)
        if text.startswith('"'):
            s = text[1:-1]
            return AttrLit(Const(NULL_TYPE, s), lambda a: isinstance(a, Const) and a.kind is ConstKind.VALUE
                           and a.value == s, text)
        raise AttrParseError(f"expected null or a string, found {text!r}")
    raise AttrParseError(f"{op} is not a constant operator")


_METHOD = re.compile(r"^(?P<owner>[^.()\s]+(?:\.[^.()\s]+)*)\.(?P<name>[^.()\s]+)(?P<desc>\(.*\).+)$")
_FIELD = re.compile(r"^(?P<owner>[^\s:]+)\.(?P<name>[^.\s:]+):(?P<desc>\S+)$")


def parse_attr(text: str, op: str) -> AttrVar | AttrLit:
    """The attribute written between brackets after operator ``op``."""
    t = text.strip()
    if not t:
        raise AttrParseError("empty attribute")
    if t.startswith("$"):
        if not re.fullmatch(r"\$[A-Za-z_][A-Za-z0-9_]*", t):
            raise AttrParseError(f"bad attribute variable {t!r}")
        return AttrVar(t[1:])
    kind = OPS[op].attr
    if kind == "value":
        return parse_const_literal(t, op)
    if kind in ("loop", "index"):
        return AttrLit(_int_text(t, 32), text=t)
    if kind == "method":
        m = _METHOD.match(t)
        if m is None:
            raise AttrParseError(f"expected a method as owner.name(descriptor), found {t!r}")
        ref = MethodRef(m["owner"], m["name"], m["desc"])
        key = (ref.owner, ref.name, ref.descriptor)
        return AttrLit(ref, lambda a: isinstance(a, MethodRef) and (a.owner, a.name, a.descriptor) == key, t)
    if kind == "field":
        m = _FIELD.match(t)
        if m is None:
            raise AttrParseError(f"expected a field as owner.name:descriptor, found {t!r}")
        return AttrLit(FieldRef(m["owner"], m["name"], m["desc"]), text=t)
    if t.startswith('"') and t.endswith('"') and len(t) >= 2:
        return AttrLit(t[1:-1], text=t)
    if re.fullmatch(r"[-+]?\d+", t):
        return AttrLit(int(t), text=t)
    return AttrLit(t, text=t)


def stored_kind(attr: Any) -> str | None:
    """The descriptor letter of what a field or array-element attribute stores (``I J F D B C S Z``; ``L`` for
    references and arrays), or None when the attribute does not say."""
    if isinstance(attr, FieldRef):
        d = attr.descriptor[:1]
    elif isinstance(attr, str) and len(attr) >= 1:
        d = attr[:1]
    else:
        return None
    if d in ("[", "L"):
        return "L"
    return d if d in "IJFDBCSZ" and d else None
