"""Models of ``java.util.Arrays``' text and comparison: ``toString``, ``deepToString``, ``equals``.

What this module owns
    ``Arrays.toString`` of every primitive array and of ``Object[]``, ``deepToString`` (cycles printed as the
    JDK prints them), ``Arrays.equals`` of primitive arrays (float and double by bits). ``Arrays.asList`` is a
    list: :mod:`.collections`.

Inputs / outputs
    Models registered into :data:`~peggy_jvm.jdk.registry.MODELS` at import.
"""
from __future__ import annotations

from typing import cast

from ..ir.interp import JArray, Unsupported
from .numbers import _prim_eq_bits
from .registry import MODELS, Model, model


def _arrays_to_string(desc: str) -> Model:
    def to_string(h, interp, recv, args):
        a = args[0]
        if a is None:
            return "null"
        return "[" + ", ".join(h.to_java_string(interp, e, desc) for e in a.items) + "]"
    return to_string


for _d in ("I", "J", "S", "B", "C", "Z", "F", "D"):
    MODELS[("java/util/Arrays", "toString", f"([{_d})Ljava/lang/String;")] = _arrays_to_string(_d)
MODELS[("java/util/Arrays", "toString", "([Ljava/lang/Object;)Ljava/lang/String;")] = \
    _arrays_to_string("Ljava/lang/Object;")  # String.valueOf of each element


@model("java/util/Arrays", "deepToString", "([Ljava/lang/Object;)Ljava/lang/String;")
def _arrays_deep_to_string(h, interp, recv, args):
    a = args[0]
    if a is None:
        return "null"
    if len(a.items) > 1_000_000:
        raise Unsupported("Arrays.deepToString of a large array (its StringBuilder's capacity)")
    out: list[str] = []
    seen: list[JArray] = []  # the arrays being printed (the JDK's identity-based dejaVu set)

    def deep(arr: JArray) -> None:
        if not arr.items:
            out.append("[]")
            return
        seen.append(arr)
        out.append("[")
        for i, e in enumerate(arr.items):
            if i:
                out.append(", ")
            if e is None:
                out.append("null")
            elif type(e) is JArray:
                if e.desc[1] not in "L[":
                    out.append(cast(str, _arrays_to_string(e.desc[1])(h, interp, None, [e])))
                elif any(e is x for x in seen):
                    out.append("[...]")
                else:
                    deep(e)
            else:
                out.append(h.to_java_string(interp, e, "Ljava/lang/Object;"))
        out.append("]")
        seen.pop()

    deep(a)
    return "".join(out)


def _arrays_equals(h, interp, recv, args):
    a, b = args
    if a is b:
        return 1
    if a is None or b is None:
        return 0
    if len(a.items) != len(b.items):
        return 0
    if a.desc[1] in "FD":  # Float/Double.equals per element: by bits, NaN equal to NaN
        return int(all(_prim_eq_bits(a.desc[1], x, y) for x, y in zip(a.items, b.items)))
    return int(a.items == b.items)


for _d in ("I", "J", "S", "B", "C", "Z", "F", "D"):
    MODELS[("java/util/Arrays", "equals", f"([{_d}[{_d})Z")] = _arrays_equals
