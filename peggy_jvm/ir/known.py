"""Tests whose outcome is known: an int ``if`` decided by the constants its block sets and by the tests on the
one path into it.

What this module owns
    :func:`decided_arm`: the arm an ``if`` of an int variable against a constant always takes, when the block's
    own constant copies and the test of a predecessor chain (each block the only predecessor of the next, none
    writing the variable) bound the variable so that only one outcome is possible (``if n > 0`` after the
    entry test ``if n <= 0`` was false). Given the method's entry, the chain also passes through a loop
    header entered from one block, its other predecessors inside the loop (the header dominates them), when
    no block of the loop writes the variable: a second loop's entry test after a first loop over the same
    bound (jacobi1d's ``1 < n - 1`` twice). A predecessor's test of a variable its block has just computed
    bounds it too (the test reads the value that leaves the block), and so does a test another variable holds
    a copy of (``dup; istore n; if..``). A loop entered by a jump to its test (``i = 0; goto T``, ecj's shape)
    gives the fact of that test's first evaluation, with the constants set before the jump (``0 < n``), to the
    blocks of the loop when the loop does not write the variable: it runs only if that evaluation entered it
    (:func:`deciding_test` also says whether the way back to the deciding test passed a loop header). The
    reverter drops such tests (a rotated loop's own entry test under the test of a hoisted read, or of an
    enclosing or earlier loop, revert._settle_known_tests); the prover's view of a rotated loop puts one back
    only where it is decided (validate/loopshape.py, :func:`decided_after`: a test put in place of a block's
    jump), so both rest on the same reasoning. :func:`constant_set`: the int constant a block leaves in a
    variable (a test of it tests the constant).

Inputs: blocks by id and the predecessor lists (terminator edges and handler edges). Output: a block id or None.
Invariant: only int comparisons; a variable is bounded by intervals of 32-bit ints, never guessed.
"""
from __future__ import annotations

from dataclasses import dataclass

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


def _comparison(b: Block, t: If, at_end: bool = False) -> tuple[Var, Cond, int] | bool | None:
    """``t`` (at the end of ``b``) as ``(var, cond, constant)``, its outcome when both sides are constants,
    or None when it is not an int test of one variable against a constant. ``at_end``: a fact about the values
    leaving ``b`` (a variable ``b`` computes is tested as it leaves), else about those entering it."""
    vals: list[Var | int] = []
    for x in (t.a, t.b):
        if isinstance(x, Var):
            c = constant_set(b, x)
            if c is None and _writes(b, x) and not at_end:
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
                by_constants: bool = True, entry: int | None = None) -> int | None:
    """The target block ``bid``'s int ``if`` always goes to (see the module docstring), else None.
    ``by_constants`` False: only a test an earlier test decides, not one of constants alone. ``entry``: the
    method's entry block (without it no loop header is passed)."""
    t = blocks[bid].terminator
    return decided_after(blocks, bid, t, preds, by_constants, entry) if isinstance(t, If) else None


def decided_after(blocks: dict[int, Block], bid: int, t: If, preds: dict[int, list[int]],
                  by_constants: bool = True, entry: int | None = None) -> int | None:
    """The target the int test ``t`` would always go to if it ended block ``bid`` (its own ``if`` or one put in
    place of its jump), else None; ``by_constants`` and ``entry`` as in :func:`decided_arm`."""
    found = deciding_test(blocks, bid, t, preds, by_constants, entry)
    return found.target if found is not None else None


@dataclass(frozen=True)
class Decision:
    """Where a test always goes (``target``), and whether the way back to the earlier test that decides it passed
    a loop header (``through_loop``; False when its own constants decide it)."""
    target: int
    through_loop: bool


def deciding_test(blocks: dict[int, Block], bid: int, t: If, preds: dict[int, list[int]],
                  by_constants: bool = True, entry: int | None = None) -> Decision | None:
    """As :func:`decided_after`, as a :class:`Decision`."""
    b = blocks[bid]
    if t.if_true == t.if_false:
        return None
    test = _comparison(b, t)
    if test is None:
        return None
    if isinstance(test, bool):
        return Decision(t.if_true if test else t.if_false, False) if by_constants else None
    v, cond, c = test
    cur = bid
    looped = False
    for _ in range(MAX_CHAIN):
        way_in = _way_in(blocks, cur, preds, v, entry)
        if way_in is None:
            return None
        looped = looped or len(set(preds.get(cur, []))) > 1
        p = blocks[way_in]
        if cur in {h.target for h in p.handlers}:
            return None
        pt = p.terminator
        if isinstance(pt, If) and pt.if_true != pt.if_false:
            fact = _comparison(p, pt, at_end=True)
            if not isinstance(fact, tuple) and entry is not None:
                fact = _first_evaluation(blocks, p, pt, cur, preds, v, entry)
            if isinstance(fact, tuple) and (fact[0] is v or _holds(p, v, fact[0])):
                span = _interval(fact[1] if pt.if_true == cur else _NEGATE[fact[1]], fact[2])
                known = _outcome(*span, cond, c) if span is not None else None
                if known is not None:
                    return Decision(t.if_true if known else t.if_false, looped)
        elif not isinstance(pt, Goto):
            return None
        if _writes(p, v):
            return None
        cur = p.id
    return None


def _first_evaluation(blocks: dict[int, Block], p: Block, pt: If, cur: int, preds: dict[int, list[int]], v: Var,
                      entry: int) -> tuple[Var, Cond, int] | None:
    """The test ``pt`` of a loop entered by a jump to it (``p`` holds only the test: a loop tested at its bottom
    and entered there, ecj's shape, ``revert.tidy._enter_by_goto``) as it is first evaluated, with the constants
    the one block outside the loop that jumps to it sets (``i = 0; goto T; ... T: if i < n``: ``0 < n``), when that
    is a test of ``v``, ``cur`` is in the loop and the test's other arm leaves it. ``v`` is written nowhere in
    the loop (:func:`_way_in`), so what the first evaluation found of it holds wherever the loop runs: it runs
    only if that evaluation entered it."""
    if p.stmts:
        return None
    outside = _way_in(blocks, p.id, preds, v, entry)
    if outside is None or not isinstance(blocks[outside].terminator, Goto):
        return None
    loop: set[int] = {p.id}
    for q in dict.fromkeys(preds.get(p.id, [])):
        back = _dominated_back(q, p.id, preds, entry)
        if back is not None:
            loop |= back
    other = pt.if_false if pt.if_true == cur else pt.if_true
    if cur not in loop or other in loop:
        return None  # the other arm must leave the loop: every way to cur passed the first evaluation's arm
    fact = _comparison(blocks[outside], pt, at_end=True)
    return fact if isinstance(fact, tuple) else None


def _holds(b: Block, v: Var, x: Var) -> bool:
    """Whether ``v`` holds ``x``'s value at the end of ``b``: ``b`` copies ``x`` into it last, neither written
    after the copy (lowering's ``dup; istore n; if..``, lifted: the test reads the stack's copy)."""
    for st in reversed(b.stmts):
        d = st.defined()
        if d is v:
            return isinstance(st, Copy) and st.src is x
        if d is x:
            return False
    return False


def _way_in(blocks: dict[int, Block], cur: int, preds: dict[int, list[int]], v: Var, entry: int | None
            ) -> int | None:
    """The one block ``v``'s value at the start of ``cur`` comes from: its only predecessor, or (given the
    entry) the only one outside the loops ``cur`` heads, when neither ``cur`` nor a block of those loops writes
    ``v`` (each other predecessor is one ``cur`` dominates: every way to it from the entry passes through
    ``cur``, so ``v`` reaches it unchanged from that one block)."""
    ps = list(dict.fromkeys(preds.get(cur, [])))
    if len(ps) == 1:
        return ps[0] if ps[0] != cur else None
    if entry is None or cur == entry or _writes(blocks[cur], v):
        return None
    outside: list[int] = []
    for q in ps:
        loop = _dominated_back(q, cur, preds, entry)
        if loop is None:
            outside.append(q)
        elif any(_writes(blocks[b], v) for b in loop):
            return None
    return outside[0] if len(outside) == 1 else None


def heads_loop(bid: int, preds: dict[int, list[int]], entry: int) -> bool:
    """Whether a predecessor of ``bid`` is one ``bid`` dominates (a back edge: ``bid`` heads a loop)."""
    return any(_dominated_back(q, bid, preds, entry) is not None for q in dict.fromkeys(preds.get(bid, [])))


def _dominated_back(q: int, cur: int, preds: dict[int, list[int]], entry: int) -> set[int] | None:
    """The blocks from which ``q`` is reached without passing through ``cur`` (``q`` included) when none of them
    is the entry (``cur`` dominates ``q``); else None."""
    if q == cur:
        return set()
    seen, work = {q}, [q]
    while work:
        b = work.pop()
        if b == entry:
            return None
        for p in preds.get(b, []):
            if p != cur and p not in seen:
                seen.add(p)
                work.append(p)
    return seen
