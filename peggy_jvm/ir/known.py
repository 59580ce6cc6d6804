"""Tests whose outcome is known: an int ``if`` decided by the constants its block sets and by the tests on the
one path into it.

What this module owns
    :func:`decided_arm`: the arm an ``if`` of an int variable against a constant always takes, when the block's
    own constant copies and the test of a predecessor chain (each block the only predecessor of the next, none
    writing the variable) bound the variable so that only one outcome is possible (``if n > 0`` after the
    entry test ``if n <= 0`` was false). The reverter drops such tests (a rotated loop's own entry test under
    the test of a hoisted read, revert._settle_known_tests); the prover's view of a rotated loop puts one back
    only where it is decided (validate/loopshape.py, :func:`decided_after`: a test put in place of a block's
    jump), so both rest on the same reasoning. :func:`constant_set`: the int constant a block leaves in a
    variable (a test of it tests the constant).

Inputs: blocks by id and the predecessor lists (terminator edges and handler edges). Output: a block id or None.
Invariant: only int comparisons; a variable is bounded by intervals of 32-bit ints, never guessed.
"""
from __future__ import annotations

from .lower import _NEGATE  # the one table of negated conditions
from .nodes import INT, Block, Const, Cond, Copy, Goto, If, Var

_MIN, _MAX = -(1 << 31), (1 << 31) - 1
_MIRROR = {Cond.EQ: Cond.EQ, Cond.NE: Cond.NE, Cond.LT: Cond.GT, Cond.GT: Cond.LT, Cond.LE: Cond.GE,
           Cond.GE: Cond.LE}
HOLDS = {Cond.EQ: lambda x, y: x == y, Cond.NE: lambda x, y: x != y, Cond.LT: lambda x, y: x < y,
         Cond.GE: lambda x, y: x >= y, Cond.GT: lambda x, y: x > y, Cond.LE: lambda x, y: x <= y}
"""Whether ``x cond y`` holds for two ints (the reverter's tests of constants use it too)."""
MAX_CHAIN = 8
"""Predecessors walked back from a test looking for one that decides it."""


def constant_set(b: Block, v: Var) -> Const | None:
    """The int constant ``b`` leaves in ``v`` by its last write of it (a copy of a constant), else None."""
    for st in reversed(b.stmts):
        if st.defined() is v:
            return st.src if isinstance(st, Copy) and isinstance(st.src, Const) and _int_const(st.src) else None
    return None


def _int_const(x: object) -> bool:
    return isinstance(x, Const) and x.type == INT and isinstance(x.value, int)


def _writes(b: Block, v: Var) -> bool:
    return any(st.defined() is v for st in b.stmts)


def _comparison(b: Block, t: If) -> tuple[Var, Cond, int] | bool | None:
    """``t`` (at the end of ``b``) as ``(var, cond, constant)``, its outcome when both sides are constants,
    or None when it is not an int test of one variable against a constant."""
    vals: list[Var | int] = []
    for x in (t.a, t.b):
        if isinstance(x, Var):
            c = constant_set(b, x)
            if c is None and _writes(b, x):
                return None
            if c is not None:
                x = c
        if isinstance(x, Var):
            if x.type != INT:
                return None
            vals.append(x)
        elif isinstance(x, Const) and isinstance(x.value, int) and _int_const(x):
            vals.append(x.value)
        else:
            return None
    p, q = vals
    if isinstance(p, int) and isinstance(q, int):
        return HOLDS[t.cond](p, q)
    if isinstance(p, int) and isinstance(q, Var):
        return q, _MIRROR[t.cond], p
    if isinstance(p, Var) and isinstance(q, int):
        return p, t.cond, q
    return None


def _interval(cond: Cond, c: int) -> tuple[int, int] | None:
    return {Cond.LT: (_MIN, c - 1), Cond.LE: (_MIN, c), Cond.GT: (c + 1, _MAX), Cond.GE: (c, _MAX),
            Cond.EQ: (c, c)}.get(cond)


def _outcome(lo: int, hi: int, cond: Cond, c: int) -> bool | None:
    """``v cond c`` for every ``v`` in ``[lo, hi]``: True, False, or None when it depends."""
    if lo > hi:
        return None  # no value: a path that cannot run; nothing is claimed
    ends = {HOLDS[cond](lo, c), HOLDS[cond](hi, c)}
    if cond in (Cond.EQ, Cond.NE):
        if lo == hi:
            return HOLDS[cond](lo, c)
        return (cond is Cond.NE) if not lo <= c <= hi else None
    return ends.pop() if len(ends) == 1 else None


def decided_arm(blocks: dict[int, Block], bid: int, preds: dict[int, list[int]],
                by_constants: bool = True) -> int | None:
    """The target block ``bid``'s int ``if`` always goes to (see the module docstring), else None.
    ``by_constants`` False: only a test an earlier test decides, not one of constants alone."""
    t = blocks[bid].terminator
    return decided_after(blocks, bid, t, preds, by_constants) if isinstance(t, If) else None


def decided_after(blocks: dict[int, Block], bid: int, t: If, preds: dict[int, list[int]],
                  by_constants: bool = True) -> int | None:
    """The target the int test ``t`` would always go to if it ended block ``bid`` (its own ``if`` or one put in
    place of its jump), else None; ``by_constants`` as in :func:`decided_arm`."""
    b = blocks[bid]
    if t.if_true == t.if_false:
        return None
    test = _comparison(b, t)
    if test is None:
        return None
    if isinstance(test, bool):
        return (t.if_true if test else t.if_false) if by_constants else None
    v, cond, c = test
    cur = bid
    for _ in range(MAX_CHAIN):
        ps = preds.get(cur, [])
        if len(ps) != 1 or ps[0] == cur:
            return None
        p = blocks[ps[0]]
        if cur in {h.target for h in p.handlers} or _writes(p, v):
            return None
        pt = p.terminator
        if isinstance(pt, If) and pt.if_true != pt.if_false:
            fact = _comparison(p, pt)
            if isinstance(fact, tuple) and fact[0] is v:
                span = _interval(fact[1] if pt.if_true == cur else _NEGATE[fact[1]], fact[2])
                known = _outcome(*span, cond, c) if span is not None else None
                if known is not None:
                    return t.if_true if known else t.if_false
        elif not isinstance(pt, Goto):
            return None
        cur = p.id
    return None
