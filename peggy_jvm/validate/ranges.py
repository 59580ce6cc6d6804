"""Two methods of one int parameter equal on every value it can take: its range split where their branches change.

What this module owns
    :func:`equal_on_ranges`: both lifted methods run on the whole range of their one int-like parameter at once
    (``int``: ``[MIN_VALUE, MAX_VALUE]``; ``char``, ``short``, ``byte``, ``boolean``: their own ranges), each
    variable holding a constant or a :class:`Sym`, a monotone function of the parameter on the current interval
    (the parameter itself, and what adding, subtracting or multiplying by a constant, dividing by a nonzero
    constant, shifting right by a constant, negating, adding two functions that move the same way or
    subtracting two that move opposite ways make of it, while no value on the interval wraps around). A branch
    on a comparison of such values splits the interval where its outcome changes (the comparison of a monotone
    difference with zero changes at most twice: found by binary search), each part going its own way; loops are
    run, iteration by iteration, in every part. Each side so ends as a list of intervals with the value it
    returns on each; where two intervals overlap, the two values must be the same constant, the same function
    (built the same way), or a function constant on the overlap equal to the other side's value. EqBench's
    ``REVE/digits10``: a loop that divides by 10 up to four times per iteration against one that divides by
    10000 once and compares with 10, 100, 1000, 10000, both counting the decimal digits: 10 intervals, each side
    three iterations at most, where the e-graph has no rule relating ``n / 10 / 10 > 0`` to ``n >= 100``.

Why it is sound
    Every interval of a side's list holds exactly the parameter values that run that path: the first state holds
    the type's whole range, and a branch gives each part of its interval the outcome the comparison has on every
    value of that part (the difference compared with zero is monotone on the interval, and its sign classes are
    found exactly, its values computed with Python's unbounded integers). A variable's :class:`Sym` computes the
    Java value exactly on every value of the interval it was made on (hence of every later part of it): each
    operation's result is checked to stay inside int at both ends of the interval, and a monotone function
    between them stays inside too, so no value wraps around and the unbounded result is the JVM's. Nothing else
    is modelled: a statement or operator outside this list (a field, an array, a call, a ``long``, a ``float``, a
    division by a non-constant, a receiver used as a value, a ``switch`` on a function, a ``throw``) gives up, and
    so does a side whose paths, steps or a function's size pass :data:`MAX_PATHS`, :data:`MAX_STEPS` or
    :data:`MAX_KEY` (a loop whose trip count
    grows with the parameter splits its interval once per trip). So every parameter value returns, on both
    sides, the value found for its interval (total equivalence, termination included), and equal values on
    every overlap are equal outcomes on every input. No exception is thrown by what is modelled (a constant
    divisor is nonzero, ``MIN_VALUE / -1`` is a wrap-around and gives up), and the receiver, never read, is
    any receiver.

Inputs: the two lifted :class:`~peggy_jvm.ir.nodes.IRMethod` of a pair (one descriptor). Output: the number of
intervals compared when shown equal, else None (not shown; never a difference). Deterministic: bounded by
counts, no clock.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..classfile.descriptors import parse_method_descriptor
from ..ir.nodes import Binary, Const, ConstKind, Copy, Goto, If, IRMethod, Return, Unary, Var
from ..semantics import CONDITIONS, INT_MAX, INT_MIN, OPERATIONS, JavaArithmeticError

__all__ = ["equal_on_ranges", "outcomes", "Sym", "MAX_PATHS", "MAX_STEPS", "MAX_KEY"]

MAX_PATHS = 64  # intervals one side may end in (a loop running once more per value would need one per value)
MAX_STEPS = 20_000  # statements and branches one side may run, all paths together
# the longest description of a function: bounds its size, so its evaluation's depth (a chain of closures, one
# frame each) and the text built per statement (``s = s + x`` in a loop, or ``x = x + x`` doubling it)
MAX_KEY = 1000
_RANGES = {"I": (INT_MIN, INT_MAX), "C": (0, 65535), "S": (-32768, 32767), "B": (-128, 127), "Z": (0, 1)}
_INT_OPS = frozenset({"add.i", "sub.i", "mul.i", "div.i", "shr.i", "neg.i"})


class GiveUp(Exception):
    """Something outside the model: the pair is not shown this way."""


@dataclass(frozen=True, slots=True)
class Sym:
    """A monotone function of the parameter: ``fn`` its exact value (no wrap-around on the interval it was made
    on), ``dir`` +1 non-decreasing, -1 non-increasing; ``key`` how it was built (two equal keys: one function)."""

    key: str
    fn: Callable[[int], int]
    dir: int


_RECEIVER = object()  # ``this``: never read as a value
Value = int | Sym | object


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _made(key: str, fn: Callable[[int], int], direction: int, lo: int, hi: int) -> Sym | int:
    """The function, checked to stay inside int on ``[lo, hi]`` (monotone: at its ends); constant if ``dir`` 0."""
    if len(key) > MAX_KEY:
        raise GiveUp("a function too large")
    a, b = fn(lo), fn(hi)
    if not (INT_MIN <= a <= INT_MAX and INT_MIN <= b <= INT_MAX):
        raise GiveUp(f"{key} may wrap around")
    return a if direction == 0 else Sym(key, fn, direction)


def _apply(op: str, x: Value, y: Value | None, lo: int, hi: int) -> Value:
    """``op`` of int values, one or both a :class:`Sym`, on the interval ``[lo, hi]``."""
    if x is _RECEIVER or y is _RECEIVER or op not in _INT_OPS:
        raise GiveUp(op)
    if isinstance(x, int) and (y is None or isinstance(y, int)):
        try:
            return OPERATIONS[op](x) if y is None else OPERATIONS[op](x, y)
        except JavaArithmeticError:
            raise GiveUp("division by zero") from None
    if op == "neg.i":
        assert isinstance(x, Sym)
        f = x.fn
        return _made(f"-({x.key})", lambda v: -f(v), -x.dir, lo, hi)
    if isinstance(x, Sym) and isinstance(y, int):
        f, c = x.fn, y
        if op == "add.i":
            return _made(f"({x.key})+{c}", lambda v: f(v) + c, x.dir, lo, hi)
        if op == "sub.i":
            return _made(f"({x.key})-{c}", lambda v: f(v) - c, x.dir, lo, hi)
        if op == "mul.i":
            return _made(f"({x.key})*{c}", lambda v: f(v) * c, x.dir * (c > 0) - x.dir * (c < 0), lo, hi)
        if op == "div.i" and c != 0:
            return _made(f"({x.key})/{c}", lambda v: _trunc_div(f(v), c), x.dir if c > 0 else -x.dir, lo, hi)
        if op == "shr.i":
            s = c & 31
            return _made(f"({x.key})>>{s}", lambda v: f(v) >> s, x.dir, lo, hi)
        raise GiveUp(op)
    if isinstance(x, int) and isinstance(y, Sym):
        g, c = y.fn, x
        if op == "add.i":
            return _made(f"({y.key})+{c}", lambda v: g(v) + c, y.dir, lo, hi)
        if op == "sub.i":
            return _made(f"{c}-({y.key})", lambda v: c - g(v), -y.dir, lo, hi)
        if op == "mul.i":
            return _made(f"({y.key})*{c}", lambda v: g(v) * c, y.dir * (c > 0) - y.dir * (c < 0), lo, hi)
        raise GiveUp(op)  # a constant divided or shifted by a function is not monotone
    assert isinstance(x, Sym) and isinstance(y, Sym)
    f, g = x.fn, y.fn
    if op == "add.i" and x.dir == y.dir:
        return _made(f"({x.key})+({y.key})", lambda v: f(v) + g(v), x.dir, lo, hi)
    if op == "sub.i" and x.dir == -y.dir:
        return _made(f"({x.key})-({y.key})", lambda v: f(v) - g(v), x.dir, lo, hi)
    raise GiveUp(op)


def _first(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    """The least ``v`` in ``[lo, hi]`` where the monotone ``pred`` (false, then true) holds; ``hi + 1`` if none."""
    while lo <= hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid - 1
        else:
            lo = mid + 1
    return lo


def _split(cond: str, x: Value, y: Value, lo: int, hi: int) -> list[tuple[int, int, bool]]:
    """``[lo, hi]`` cut into the parts on which ``x cond y`` has one outcome, with it (adjacent parts with the
    same outcome joined)."""
    if x is _RECEIVER or y is _RECEIVER:
        raise GiveUp("the receiver compared")
    if isinstance(x, int) and isinstance(y, int):
        return [(lo, hi, bool(CONDITIONS[cond](x, y)))]
    fx = x.fn if isinstance(x, Sym) else (lambda v, k=x: k)
    fy = y.fn if isinstance(y, Sym) else (lambda v, k=y: k)
    dx = x.dir if isinstance(x, Sym) else 0
    dy = y.dir if isinstance(y, Sym) else 0
    direction = dx or -dy
    if dx and dy and dx != -dy:
        raise GiveUp("a comparison of two functions moving the same way")

    def diff(v: int) -> int:  # non-decreasing in v
        return direction * (fx(v) - fy(v))
    below = _first(lambda v: diff(v) >= 0, lo, hi)  # diff < 0 before it
    above = _first(lambda v: diff(v) > 0, below, hi)  # diff == 0 in [below, above)
    signs = ((lo, below - 1, -direction), (below, above - 1, 0), (above, hi, direction))
    parts: list[tuple[int, int, bool]] = []
    for a, b, sign in signs:
        if a > b:
            continue
        outcome = bool(CONDITIONS[cond](sign, 0))  # the sign of x - y decides x cond y
        if parts and parts[-1][2] == outcome:
            parts[-1] = (parts[-1][0], b, outcome)
        else:
            parts.append((a, b, outcome))
    return parts


@dataclass(slots=True)
class _State:
    block: int
    env: dict[int, Value]
    lo: int
    hi: int


def _read(env: dict[int, Value], o: object) -> Value:
    if isinstance(o, Const):
        if o.kind is ConstKind.VALUE and isinstance(o.value, int) and not isinstance(o.value, bool):
            return o.value
        raise GiveUp("a constant that is not an int")
    if isinstance(o, Var):
        if o.id not in env:
            raise GiveUp("a variable read before it is set")
        return env[o.id]
    raise GiveUp(f"operand {o!r}")


def outcomes(m: IRMethod) -> list[tuple[int, int, Value]]:
    """(lo, hi, returned value) for every path of ``m`` over its parameter's range, in order of ``lo``; raises
    :class:`GiveUp` outside the model (see the module docstring)."""
    params, ret = parse_method_descriptor(m.descriptor)
    if len(params) != 1 or params[0] not in _RANGES or ret not in _RANGES or m.synchronized:
        raise GiveUp("not a method of one int parameter returning an int")
    lo, hi = _RANGES[params[0]]
    env: dict[int, Value] = {m.params[-1].id: Sym("x", lambda v: v, 1)}
    if not m.is_static:
        env[m.params[0].id] = _RECEIVER
    work = [_State(m.entry, env, lo, hi)]
    done: list[tuple[int, int, Value]] = []
    steps = 0
    while work:
        st = work.pop()
        block = m.blocks[st.block]
        for s in block.stmts:
            steps += 1
            if isinstance(s, Copy):
                st.env[s.dst.id] = _read(st.env, s.src)
            elif isinstance(s, Binary):
                st.env[s.dst.id] = _apply(s.op, _read(st.env, s.a), _read(st.env, s.b), st.lo, st.hi)
            elif isinstance(s, Unary):
                st.env[s.dst.id] = _apply(s.op, _read(st.env, s.a), None, st.lo, st.hi)
            else:
                raise GiveUp(type(s).__name__)
        t = block.terminator
        steps += 1
        if steps > MAX_STEPS:
            raise GiveUp("step limit")
        if isinstance(t, Goto):
            work.append(_State(t.target, st.env, st.lo, st.hi))
        elif isinstance(t, If):
            parts = _split(t.cond.value, _read(st.env, t.a), _read(st.env, t.b), st.lo, st.hi)
            for k, (a, b, outcome) in enumerate(parts):
                env = st.env if k == len(parts) - 1 else dict(st.env)
                work.append(_State(t.if_true if outcome else t.if_false, env, a, b))
        elif isinstance(t, Return) and t.value is not None:
            value = _read(st.env, t.value)
            if value is _RECEIVER:
                raise GiveUp("the receiver returned")
            done.append((st.lo, st.hi, value))
            if len(done) > MAX_PATHS:
                raise GiveUp("path limit")
        else:
            raise GiveUp(type(t).__name__)
        if len(work) + len(done) > MAX_PATHS:
            raise GiveUp("path limit")
    return sorted(done, key=lambda d: d[0])


def _constant(x: Value, lo: int, hi: int) -> int | None:
    """The one value ``x`` has on ``[lo, hi]``, or None (a monotone function equal at both ends is constant)."""
    if isinstance(x, int):
        return x
    if isinstance(x, Sym):
        first = x.fn(lo)
        return first if first == x.fn(hi) else None
    return None


def _same(x: Value, y: Value, lo: int, hi: int) -> bool:
    """``x`` and ``y`` (constants or functions) equal on every value of ``[lo, hi]``."""
    if isinstance(x, Sym) and isinstance(y, Sym) and x.key == y.key:
        return True
    cx = _constant(x, lo, hi)
    return cx is not None and cx == _constant(y, lo, hi)


def equal_on_ranges(a: IRMethod, b: IRMethod) -> int | None:
    """The number of intervals compared when ``a`` and ``b`` return the same int for every value of their one
    int parameter (both terminating; see the module docstring); None when not shown this way."""
    try:
        left, right = outcomes(a), outcomes(b)
    except (GiveUp, RecursionError):
        return None
    i = j = compared = 0
    while i < len(left) and j < len(right):
        lo = max(left[i][0], right[j][0])
        hi = min(left[i][1], right[j][1])
        if not _same(left[i][2], right[j][2], lo, hi):
            return None
        compared += 1
        if left[i][1] == hi:
            i += 1
        if right[j][1] == hi:
            j += 1
    return compared
