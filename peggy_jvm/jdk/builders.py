"""Models of ``StringBuilder`` and ``StringBuffer``.

What this module owns
    The builders' constructors, every ``append``/``insert`` overload, ``reverse``, ``delete``/``deleteCharAt``,
    ``replace``, ``setCharAt``, ``setLength``, ``charAt``, ``length``, ``indexOf``, ``toString``.

Inputs / outputs
    Models registered into :data:`~peggy_jvm.jdk.registry.MODELS` at import; a builder's characters are its
    ``native["sb"]``, a list of UTF-16 code units.

Invariants
    ``append`` returns its receiver (:func:`.facts.returns_receiver`, which the rules read too).
"""
from __future__ import annotations

from typing import cast

from ..ir.interp import MAX_ARRAY_ELEMENTS, NPE, JObject, Unsupported, Value
from .facts import BUILDER_CLASSES
from .registry import MODELS, Model
from .strings import _char_seq, _sioobe, _str_arg

# StringBuilder / StringBuffer: native["sb"] is a list of UTF-16 units
_SB = BUILDER_CLASSES


def _units(recv: Value) -> list[str]:
    return cast(JObject, recv).native["sb"]  # the receiver of a builder method


def _sb_init(h, interp, recv, args):
    if args and isinstance(args[0], int):
        if args[0] < 0:
            interp.throw("java/lang/NegativeArraySizeException")
        recv.native["sb"] = []
    else:
        recv.native["sb"] = list(_char_seq(h, interp, args[0])) if args else []
    return None


def _sb_append(desc: str) -> Model:
    def append(h, interp, recv, args):
        v = args[0]
        sb = recv.native["sb"]
        if desc == "[C":
            if v is None:
                interp.throw(NPE)
            sb.extend(map(chr, v.items))
        elif desc in ("Ljava/lang/CharSequence;", "Ljava/lang/StringBuffer;") and v is not None:
            sb.extend(_char_seq(h, interp, v))
        else:
            sb.extend(h.to_java_string(interp, v, desc))
        if len(sb) > MAX_ARRAY_ELEMENTS:
            raise Unsupported("string too long")
        return recv
    return append


def _sb_insert(desc: str) -> Model:
    def insert(h, interp, recv, args):
        i, v = args
        sb = recv.native["sb"]
        if not 0 <= i <= len(sb):
            _sioobe(interp)
        sb[i:i] = list(h.to_java_string(interp, v, desc))
        return recv
    return insert


def _sb_reverse(h, interp, recv, args):
    sb = recv.native["sb"]
    sb.reverse()
    i = 0
    while i < len(sb) - 1:  # keep valid surrogate pairs in order, as AbstractStringBuilder.reverse does
        if "\udc00" <= sb[i] <= "\udfff" and "\ud800" <= sb[i + 1] <= "\udbff":
            sb[i], sb[i + 1] = sb[i + 1], sb[i]
            i += 2
        else:
            i += 1
    return recv


def _sb_delete_char_at(h, interp, recv, args):
    sb = recv.native["sb"]
    if not 0 <= args[0] < len(sb):
        _sioobe(interp)
    del sb[args[0]]
    return recv


def _sb_delete(h, interp, recv, args):
    sb = recv.native["sb"]
    start, end = args
    end = min(end, len(sb))
    if start < 0 or start > end:
        _sioobe(interp)
    del sb[start:end]
    return recv


def _sb_replace(h, interp, recv, args):
    sb = recv.native["sb"]
    start, end, s = args
    text = _str_arg(interp, s)
    end = min(end, len(sb))
    if start < 0 or start > end:
        _sioobe(interp)
    sb[start:end] = list(text)
    return recv


def _sb_set_char_at(h, interp, recv, args):
    sb = recv.native["sb"]
    if not 0 <= args[0] < len(sb):
        _sioobe(interp)
    sb[args[0]] = chr(args[1])
    return None


def _sb_set_length(h, interp, recv, args):
    sb = recv.native["sb"]
    n = args[0]
    if n < 0:
        _sioobe(interp)
    if n > MAX_ARRAY_ELEMENTS:
        raise Unsupported("string too long")
    if n <= len(sb):
        del sb[n:]
    else:
        sb.extend("\0" * (n - len(sb)))
    return None


def _sb_char_at(h, interp, recv, args):
    sb = recv.native["sb"]
    if not 0 <= args[0] < len(sb):
        _sioobe(interp)
    return ord(sb[args[0]])


for _c in _SB:
    _self = f"L{_c};"
    for _d in ("()V", "(I)V", "(Ljava/lang/String;)V", "(Ljava/lang/CharSequence;)V"):
        MODELS[(_c, "<init>", _d)] = _sb_init
    for _d in ("I", "J", "F", "D", "C", "Z", "Ljava/lang/String;", "Ljava/lang/Object;", "Ljava/lang/CharSequence;",
               "[C", "Ljava/lang/StringBuffer;"):
        MODELS[(_c, "append", f"({_d}){_self}")] = _sb_append(_d)
    for _d in ("I", "J", "F", "D", "C", "Z", "Ljava/lang/String;", "Ljava/lang/Object;"):
        MODELS[(_c, "insert", f"(I{_d}){_self}")] = _sb_insert(_d)
    MODELS[(_c, "toString", "()Ljava/lang/String;")] = lambda h, i, r, a: "".join(_units(r))
    MODELS[(_c, "length", "()I")] = lambda h, i, r, a: len(_units(r))
    MODELS[(_c, "isEmpty", "()Z")] = lambda h, i, r, a: int(not _units(r))
    MODELS[(_c, "charAt", "(I)C")] = _sb_char_at
    MODELS[(_c, "reverse", f"(){_self}")] = _sb_reverse
    MODELS[(_c, "deleteCharAt", f"(I){_self}")] = _sb_delete_char_at
    MODELS[(_c, "delete", f"(II){_self}")] = _sb_delete
    MODELS[(_c, "replace", f"(IILjava/lang/String;){_self}")] = _sb_replace
    MODELS[(_c, "setCharAt", "(IC)V")] = _sb_set_char_at
    MODELS[(_c, "setLength", "(I)V")] = _sb_set_length
    MODELS[(_c, "indexOf", "(Ljava/lang/String;)I")] = \
        lambda h, i, r, a: "".join(_units(r)).find(_str_arg(i, a[0]))
    MODELS[(_c, "lastIndexOf", "(Ljava/lang/String;)I")] = \
        lambda h, i, r, a: "".join(_units(r)).rfind(_str_arg(i, a[0]))
