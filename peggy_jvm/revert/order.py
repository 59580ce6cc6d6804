"""Statement order in a block of reverted code: a value the code keeps in a local computed right after what it
reads, as the source statement that assigned it was (javac's order).

What this module owns
    :func:`values_after_their_reads`, the last step of the reverter (after :func:`.tidy.tidy_method`).

Why
    The reverter generates pure values on demand, at their first use; effects, heap reads included, run in sigma
    order. So a value the source computed in one statement from a heap read (``p = p + r * H[k+2][j];`` before
    ``H[k+2][j] = H[k+2][j] - p * z;``) is computed only where the store needs it, after the reads of the
    store's own array and element: the lowering then keeps the first read and the store's operands in fresh
    locals (``dstore 19; astore 21; dstore 22`` and their loads in JAMA's ``hqr2``). Computed right after the
    read, the value takes it from the operand stack and the store's operands stay on the stack too.

How
    In each block without handlers, a pure statement that cannot throw whose variable the code keeps anyway (read
    twice or more, or assigned twice or more: a local in any order) moves up, together with the pure
    single-use statements of the same block that compute its operands, to just after the last statement that
    writes one of their operands or reads or writes one of their variables. Nothing else moves.

Inputs: an :class:`~peggy_jvm.ir.nodes.IRMethod` (changed in place).
Invariants: meaning unchanged: the moved statements compute the same values (no statement they pass writes
their operands) into variables no statement they pass reads or writes, and throw nothing; a block with handlers
is left as it is (a statement they pass may throw, and a handler could read a moved variable's old value).
"""
from __future__ import annotations

from collections import Counter

from ..ir.nodes import Binary, Catch, IRMethod, Stmt, Unary, Var


def values_after_their_reads(m: IRMethod) -> bool:
    """Move each kept pure value of ``m`` up to just after what it reads (module docstring). True when any
    statement moved."""
    reads: Counter[int] = Counter()
    writes: Counter[int] = Counter()
    for b in m.blocks.values():
        for st in b.all_stmts():
            for x in st.operands():
                if type(x) is Var:
                    reads[x.id] += 1
            d = st.defined()
            if d is not None:
                writes[d.id] += 1
    moved = False
    for b in m.blocks.values():
        if b.handlers:
            continue
        i = 0
        while i < len(b.stmts):
            st = b.stmts[i]
            if _pure(st) and (reads[_dst(st).id] >= 2 or writes[_dst(st).id] >= 2):
                got = _move_up(b.stmts, i, reads, writes)
                if got is not None:
                    b.stmts = got
                    moved = True
            i += 1
    return moved


def _pure(st: Stmt) -> bool:
    return isinstance(st, (Binary, Unary)) and not st.may_throw


def _dst(st: Stmt) -> Var:
    d = st.defined()
    assert d is not None
    return d


def _move_up(stmts: list[Stmt], i: int, reads: Counter[int], writes: Counter[int]) -> list[Stmt] | None:
    """``stmts`` with statement ``i`` and the pure single-use statements before it that compute its operands
    moved up as far as they may go (module docstring), or None when they stay."""
    tree = {i}
    stack = [i]
    while stack:
        k = stack.pop()
        for x in stmts[k].operands():
            if type(x) is not Var or reads[x.id] != 1 or writes[x.id] != 1:
                continue
            for j in range(k - 1, -1, -1):
                if stmts[j].defined() is x:
                    if _pure(stmts[j]) and j not in tree:
                        tree.add(j)
                        stack.append(j)
                    break
    inner = {id(_dst(stmts[k])) for k in tree}
    outer = {id(x) for k in tree for x in stmts[k].operands() if type(x) is Var and id(x) not in inner}
    pos = -1
    for j in range(i - 1, -1, -1):
        if j in tree:
            continue
        st = stmts[j]
        d = st.defined()
        if isinstance(st, Catch) or (d is not None and (id(d) in outer or id(d) in inner)) or \
                any(type(x) is Var and id(x) in inner for x in st.operands()):
            pos = j
            break
    if all(j in tree for j in range(pos + 1, i)):
        return None  # already in place: no other statement lies between
    d = stmts[pos].defined() if pos >= 0 else None
    if d is None or id(d) not in outer or reads[d.id] != 1 or writes[d.id] != 1:
        return None  # the move keeps no read's value on the stack (and may cut another statement's tree)
    before = stmts[:pos + 1]  # with the statements of the tree the barrier comes after, in place
    moving = [stmts[k] for k in sorted(tree) if k > pos]
    passed = [stmts[j] for j in range(pos + 1, i) if j not in tree]
    return before + moving + passed + stmts[i + 1:]
