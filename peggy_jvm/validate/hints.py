"""Input hints for the counterexample search: the values a pair's own code makes interesting.

What this module owns
    :func:`input_hints`: from the lifted IR of both methods of a pair, per parameter, the values worth trying
    first: every numeric constant of either method and its neighbours (``k-1, k, k+1, -k``; for floating point
    also the next representable values), and the values that flip each branch condition that is a simple linear
    function of one parameter compared with a constant (``a*3 + 2 == 5`` -> ``a = 1`` and its neighbours;
    ``switch (k + 1)`` -> each case key minus one), including comparisons made through ``cmp*``.

Inputs: ``IRMethod`` of ORIG and OPT (one descriptor). Outputs: :class:`Hints` (per parameter index of the
descriptor, values in a deterministic order: solved conditions first, then constants; both methods' values).

Invariants
    * Hints only choose inputs: a wrong or missing hint makes the search weaker, never a verdict wrong (a
      difference still counts only when the JVM shows it).
    * Deterministic: the IR is walked in block order; no sets are iterated.
    * Values fit their parameter's type (out-of-range integers are dropped, floats rounded to ``float`` for F).
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

from ..classfile.descriptors import parse_method_descriptor
from ..ir.nodes import Binary, Const, ConstKind, Copy, If, IRMethod, Switch, Unary, Var
from ..semantics import to_f32

MAX_PER_PARAM = 24  # hints kept per parameter (solved conditions first): more only slows the screen
_DEPTH = 8  # definitions followed back from a condition's operand
_RANGES = {"I": (-2**31, 2**31 - 1), "J": (-2**63, 2**63 - 1), "S": (-32768, 32767), "B": (-128, 127),
           "C": (0, 65535)}


@dataclass(frozen=True, slots=True)
class Linear:
    """``m * param + c`` for the parameter of descriptor index ``param``."""

    param: int
    m: float
    c: float


@dataclass(slots=True)
class Hints:
    per_param: dict[int, list] = field(default_factory=dict)  # descriptor index -> values, best first

    def get(self, index: int) -> list:
        return self.per_param.get(index, [])


def input_hints(orig: IRMethod | None, opt: IRMethod | None, descriptor: str) -> Hints:
    params, _ret = parse_method_descriptor(descriptor)
    solved: dict[int, list[float]] = {}
    constants: list[float] = []
    for ir in (orig, opt):
        if ir is not None:
            _collect(ir, solved, constants)
    out = Hints()
    for i, d in enumerate(params):
        if d not in _RANGES and d not in ("F", "D"):
            continue
        values: list = []
        for v in solved.get(i, []):
            values.extend(_around(v, d, solved=True))
        for k in constants:
            values.extend(_around(k, d, solved=False))
        kept = _fit(values, d)
        if kept:
            out.per_param[i] = kept[:MAX_PER_PARAM]
    return out


def _collect(ir: IRMethod, solved: dict[int, list[float]], constants: list[float]) -> None:
    defs: dict[Var, list] = {}
    for block in ir.block_order():
        for s in block.stmts:
            dst = s.defined()
            if dst is not None:
                defs.setdefault(dst, []).append(s)
    first = 0 if ir.is_static else 1  # the receiver is no descriptor parameter
    index = {v: k - first for k, v in enumerate(ir.params) if k >= first}
    for block in ir.block_order():
        for s in block.all_stmts():
            if s is None:
                continue
            for o in s.operands():
                if isinstance(o, Const) and o.kind is ConstKind.VALUE and isinstance(o.value, (int, float)) \
                        and not isinstance(o.value, bool) and o.value not in constants \
                        and not (isinstance(o.value, float) and math.isnan(o.value)):
                    constants.append(o.value)
        t = block.terminator
        if isinstance(t, If):
            a, b = t.a, t.b
            if isinstance(b, Const) and b.value == 0 and isinstance(a, Var):
                d = _single_def(defs, a)
                if isinstance(d, Binary) and d.op.startswith("cmp"):
                    a, b = d.a, d.b  # the comparison the cmp* result stands for
            _solve(_linear(a, defs, index, _DEPTH), _linear(b, defs, index, _DEPTH), solved)
            _solve(_linear(b, defs, index, _DEPTH), _linear(a, defs, index, _DEPTH), solved)
        elif isinstance(t, Switch):
            lin = _linear(t.value, defs, index, _DEPTH)
            for key in t.keys:
                _solve(lin, float(key), solved)


def _single_def(defs: dict[Var, list], v: object):
    ds = defs.get(v) if isinstance(v, Var) else None
    return ds[0] if ds and len(ds) == 1 else None


def _linear(o: object, defs: dict[Var, list], index: dict[Var, int], depth: int) -> Linear | float | None:
    """``o`` as a constant, or as a linear function of one parameter, or None."""
    if isinstance(o, Const):
        value = o.value
        if o.kind is ConstKind.VALUE and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        return None
    if not isinstance(o, Var) or depth == 0:
        return None
    if o in index:
        return Linear(index[o], 1.0, 0.0)
    d = _single_def(defs, o)
    if isinstance(d, Copy):
        return _linear(d.src, defs, index, depth - 1)
    if isinstance(d, Unary):
        x = _linear(d.a, defs, index, depth - 1)
        if d.op.startswith("neg"):
            return -x if isinstance(x, float) else (Linear(x.param, -x.m, -x.c) if x else None)
        return x  # a conversion: the same value as far as choosing inputs goes
    if isinstance(d, Binary) and d.op.split(".")[0] in ("add", "sub", "mul"):
        x, y = _linear(d.a, defs, index, depth - 1), _linear(d.b, defs, index, depth - 1)
        op = d.op.split(".")[0]
        if isinstance(x, Linear) and isinstance(y, float):
            return {"add": Linear(x.param, x.m, x.c + y), "sub": Linear(x.param, x.m, x.c - y),
                    "mul": Linear(x.param, x.m * y, x.c * y)}[op]
        if isinstance(x, float) and isinstance(y, Linear):
            return {"add": Linear(y.param, y.m, y.c + x), "sub": Linear(y.param, -y.m, x - y.c),
                    "mul": Linear(y.param, y.m * x, y.c * x)}[op]
    return None


def _solve(lin: object, k: object, solved: dict[int, list[float]]) -> None:
    """``lin == k`` for the parameter: the value where the condition changes."""
    if isinstance(lin, Linear) and isinstance(k, float) and lin.m != 0 and math.isfinite(lin.m):
        x = (k - lin.c) / lin.m
        if math.isfinite(x):
            bucket = solved.setdefault(lin.param, [])
            if x not in bucket:
                bucket.append(x)


def _around(v: float, d: str, solved: bool) -> list[float | int]:
    """``v`` and its neighbours in the parameter's type (for a constant also its negation)."""
    if d == "F":
        v = to_f32(v)
        if not math.isfinite(v):
            return [v]
        return [v, _next_f32(v, True), _next_f32(v, False)] + ([] if solved else [-v])
    if d == "D":
        return [v, math.nextafter(v, math.inf), math.nextafter(v, -math.inf)] + ([] if solved else [-v])
    if not math.isfinite(v):
        return []  # NaN and infinities are among every float's edge values; no integer is near them
    lo = math.floor(v)
    out: list[float | int] = [lo, lo + 1, lo - 1] if lo == v else [lo, lo + 1, lo - 1, lo + 2]
    return out + ([] if solved else [-lo])


def _fit(values: list[float], d: str) -> list:
    """Values of type ``d``, in order, without repeats (floats by bits)."""
    out: list[float | int] = []
    seen: set[bytes | int] = set()
    for v in values:
        if d in ("F", "D"):
            f = to_f32(v) if d == "F" else float(v)
            key: bytes | int = struct.pack(">d", f)
            value: float | int = f
        else:
            value = int(v)
            lo, hi = _RANGES[d]
            if not lo <= value <= hi:
                continue
            key = value
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def _next_f32(v: float, up: bool) -> float:
    """The neighbouring ``float`` of a ``float`` value (not NaN, not infinite)."""
    if v == 0:
        return 1.401298464324817e-45 if up else -1.401298464324817e-45
    bits = struct.unpack(">i", struct.pack(">f", v))[0]
    bits += 1 if (v > 0) == up else -1
    return struct.unpack(">f", struct.pack(">i", bits))[0]

