"""Loops tested at the bottom, seen top-tested again before their PEG is built (the prover's view of loop inversion).

What this module owns
    :func:`top_tested`: in a lifted method, a block ``B`` that jumps backward by an ``if`` and ends with the same
    statements and an equivalent ``if`` as another block ``A`` (a loop's bottom test and its entry test, as
    the reverter emits a rotated loop, ``revert._rotate_loops``) has that common tail taken out into one new
    block that both jump to. The loop is then tested at the top, as javac writes it, and its PEG is the one the
    top-tested loop builds to (the PEG builder reads a loop whose test is at its bottom as a loop whose first
    test was peeled, which the prover cannot match with the original's). Before that, an entry test the
    reverter dropped as decided is put back (:func:`_decided_entry_tests`), and an arm of a test that the
    reverter sent past a loop whose entry test it decides is sent through that entry again
    (:func:`_rejoin_threaded_arms`), so that each loop is entered from the join javac's code enters it from.
    Last, a bottom-tested loop whose first block begins with statements before its first test (ProGuard's
    ``p = p.parent(); if (p == null) ...`` at the top of a loop that javac's code enters with ``p =
    e.parent()`` and ends with ``p = p.parent(); goto test``, after ProGuard gave ``e`` and ``p`` one slot and
    merged the two copies into the loop) gets a copy of those statements on each way in
    (:func:`_split_header_statements`): the loop then begins at its test, as javac's does. A test with several
    parts (``while (i < n && a[i] != x)`` rotated: each part a block, at the bottom and again at the entry) is
    shared part by part: once the last parts share a tail, the tests in front of it that lead to it are shared
    too, one round each (at most :data:`MAX_TEST_BLOCKS`). And a loop header that only copies variables and
    jumps to the header of a loop entered only from it (one loop with two back edges that ProGuard parted into
    two nested loops, lang3's ``Fraction.greatestCommonDivisor``) gets a copy of those copies on each edge into
    it and is dropped (:func:`_merge_nested_headers`): the inner header is the one header, as in javac's code.

Why it is sound
    Cross-jumping: the two tails are the same statements over the same variables (temporaries written in a
    tail and used nowhere else excepted: they are renamed into one another, each written before it is read),
    with the same handlers, ending in the same test with the same targets (``if a < b goto X else Y`` is ``if a
    >= b goto Y else X``). From the same state both tails do the same and go to the same place, so jumping to
    one shared copy instead changes no run. Splitting a loop's first statements onto the edges into it is the
    same in reverse (tail duplication): every way into the block ran those statements first and still does,
    each copy in the same try regions (the block's handlers), then goes on to the rest of the block; a block an
    exception handler enters, or that takes values on the operand stack, is left alone (the nested loops' header
    is copied with its operand stack: the values on it are variables of the lifted code, written by every edge
    into the block, and each copy reads them where the block did). Sharing the parts of a test one after
    another is cross-jumping again, each time of two tests that lead to the same shared tail. It is a rewrite of
    the code, not an assumption: the proof that follows is a proof about the code as it was emitted.

Inputs / outputs: an :class:`~peggy_jvm.ir.nodes.IRMethod` from ``ir.lift``, changed in place; True when a tail
was shared. Only tails ending in an ``if`` that jumps backward (a bottom test), the tests in front of a tail so
shared, and a header of copies alone in front of an inner loop's header are looked at, so javac's code is left
as lifted (but for an outer ``for (;;)`` whose body begins with copies and an inner loop: both sides of a pair
get the same view, and a failed proof is retried on the code as lifted).
"""
from __future__ import annotations

import math
from dataclasses import fields

from ..ir.known import constant_set, decided_after
from ..ir.coalesce import _MIRROR, copy_stmt, liveness
from ..ir.lower import _NEGATE
from ..ir.nodes import Block, Const, Copy, Goto, If, IRMethod, Stmt, Var

MAX_TAIL_STMTS = 4
"""Statements before the test a shared tail may have (a rotated loop's header copy: at most
``revert.tidy.ROTATE_MAX_HEADER_STMTS``, each possibly lifted into two: an operand stack temporary), and a
loop's first block may have to be copied onto each edge into it (ProGuard's ``p = p.parent()``: two)."""

MAX_TEST_BLOCKS = 8
"""Rounds of sharing: the first shares each bottom test with its entry test, each later one a test in front of
a shared tail (a condition of up to 8 parts joined by ``&&`` or ``||``)."""


def top_tested(m: IRMethod) -> bool:
    """See the module docstring."""
    changed = _decided_entry_tests(m)
    changed = _rejoin_threaded_arms(m) or changed
    tails: set[int] = set()  # the shared tails made so far
    for rnd in range(MAX_TEST_BLOCKS):
        # round 0: the bottom tests (an ``if`` jumping backward), each shared with the entry test it repeats;
        # later rounds, one share each: a test in front of a shared tail with another test in front of it (the
        # earlier parts of a condition, ``i < n && a[i] != x``, tested at the bottom and again at the entry)
        uses, defs = _uses_and_defs(m)
        shared = False
        for bid in sorted(m.blocks):
            b = m.blocks[bid]
            if not isinstance(b.terminator, If):
                continue
            into: set[int] = set()
            if rnd:
                into = {_through_jumps(m, t) for t in b.terminator.targets()} & tails
                if not into:
                    continue
            elif all(t > bid for t in b.terminator.targets()):
                continue
            for aid in sorted(m.blocks):
                a = m.blocks[aid]
                if aid == bid or not isinstance(a.terminator, If):
                    continue
                if rnd and not {_through_jumps(m, t) for t in a.terminator.targets()} & into:
                    continue  # both tests must lead to the same shared tail
                found = _common_tail(a, b, uses, defs, lambda t: _through_jumps(m, t))
                if found is None:
                    continue
                tails.add(_share_tail(m, a, b, *found).id)
                changed = shared = True
                break
            if shared and rnd:
                break  # uses and defs are counted again with the new tail's block
        if not shared:
            break
    changed = _split_header_statements(m) or changed
    return _merge_nested_headers(m) or changed


def _jump_predecessors(m: IRMethod) -> tuple[dict[int, list[int]], set[int]]:
    """Each block's predecessors by normal (not exceptional) edges, in block order, and the handlers' targets."""
    preds: dict[int, list[int]] = {}
    handled: set[int] = set()
    for b in m.blocks.values():
        for t in dict.fromkeys(b.successors(include_exceptional=False)):
            preds.setdefault(t, []).append(b.id)
        handled.update(h.target for h in b.handlers)
    return preds, handled


def _merge_nested_headers(m: IRMethod) -> bool:
    """A loop header ``H1`` (a block an edge comes back to from a block it dominates) that only copies variables
    (at most :data:`MAX_TAIL_STMTS` copies, or none) and jumps to the header ``H2`` of a loop entered only from
    ``H1`` (every other way into ``H2`` comes back from a block ``H2`` dominates, without passing ``H1``): the two loops are one loop with two back edges that ProGuard
    parted (lang3's ``Fraction.greatestCommonDivisor``: the inner ``while`` of a ``do``-``while``, its back
    edge sent to a store in front of the shared header). Each edge into ``H1`` gets its own copy of ``H1``'s
    statements, jumping to ``H2``, and ``H1``, then unreached, is dropped: ``H2`` is the one header, as javac's
    code has it, and the PEG builds one loop with one theta per variable, not two nested ones.
    Not for the method's entry or a handler's target."""
    preds, handled = _jump_predecessors(m)
    changed = False
    for hid in sorted(m.blocks):
        h = m.blocks.get(hid)
        if h is None or hid == m.entry or hid in handled or not isinstance(h.terminator, Goto) or \
                len(h.stmts) > MAX_TAIL_STMTS or not all(isinstance(st, Copy) for st in h.stmts):
            continue
        inner = h.terminator.target
        ins = preds.get(hid, [])
        backs = [p for p in preds.get(inner, []) if p != hid]
        if inner == hid or inner == m.entry or inner in handled or len(ins) < 2 or not backs or \
                not any(_dominates(m, hid, p) for p in ins) or \
                not all(_dominates(m, inner, p) and _reaches(m, inner, p, avoid=hid) for p in backs):
            continue  # not a loop header (a back edge into it) in front of an inner loop entered only from it
        for pid in ins:
            copy = Block(max(m.blocks) + 1, [copy_stmt(st) for st in h.stmts], Goto(inner, origin=h.terminator.origin),
                         handlers=h.handlers, origin=h.origin)
            m.blocks[copy.id] = copy
            new = copy.id  # read at once by retarget, in this iteration
            m.blocks[pid].retarget(lambda t: new if t == hid else t, handlers=False)
            preds.setdefault(inner, []).append(new)
        del m.blocks[hid]
        preds[inner] = [p for p in preds[inner] if p != hid]
        changed = True
    return changed


def _dominates(m: IRMethod, d: int, x: int) -> bool:
    """Whether every path from the method's entry to block ``x`` passes block ``d`` (exception edges included):
    an edge ``x -> d`` is then a loop's back edge and ``d`` that loop's header."""
    if x == d:
        return True
    seen = {d}
    todo = [m.entry]
    while todo:
        y = todo.pop()
        if y == x:
            return False
        if y in seen or y not in m.blocks:
            continue
        seen.add(y)
        todo.extend(m.blocks[y].successors())
    return True


def _reaches(m: IRMethod, src: int, dst: int, avoid: int) -> bool:
    """Whether a path of normal edges leads from ``src``'s successors to ``dst`` without entering ``avoid``."""
    seen: set[int] = set()
    todo = list(m.blocks[src].successors(include_exceptional=False))
    while todo:
        x = todo.pop()
        if x == dst:
            return True
        if x == avoid or x in seen or x not in m.blocks:
            continue
        seen.add(x)
        todo.extend(m.blocks[x].successors(include_exceptional=False))
    return False


def _uses_and_defs(m: IRMethod) -> tuple[dict[int, list[int]], dict[int, int]]:
    """Variable id -> the ids of the blocks using it (once per use, a write counted as a use); variable id -> how
    many statements write it."""
    uses: dict[int, list[int]] = {}
    defs: dict[int, int] = {}
    for b in m.blocks.values():
        for st in b.all_stmts():
            for x in st.operands():
                if isinstance(x, Var):
                    uses.setdefault(x.id, []).append(b.id)
            d = st.defined()
            if d is not None:
                uses.setdefault(d.id, []).append(b.id)
                defs[d.id] = defs.get(d.id, 0) + 1
    return uses, defs


def _split_header_statements(m: IRMethod) -> bool:
    """A block ``H`` that an ``if`` jumps back to (a bottom test), with at most :data:`MAX_TAIL_STMTS`
    statements before its own ``if`` that step a variable (:func:`_steps_a_variable`) and more than one way in,
    gets those statements copied into one new block per edge into it (each new block jumping to ``H``, which
    keeps only its test); see the module docstring.
    Not for the method's entry, a handler's target, or a block that starts with values on the operand stack."""
    preds, handled = _jump_predecessors(m)
    changed = False
    for hid in sorted(m.blocks):
        h = m.blocks[hid]
        if not h.stmts or len(h.stmts) > MAX_TAIL_STMTS or not isinstance(h.terminator, If) or \
                hid == m.entry or hid in handled or h.entry_stack or not _steps_a_variable(h.stmts):
            continue
        ins = preds.get(hid, [])
        if len(ins) < 2 or not any(_bottom_test(m, m.blocks[p], hid) for p in ins):
            continue  # not entered by a bottom test (javac's top-tested loops are left as lifted), or one way in
        for pid in ins:
            copy = Block(max(m.blocks) + 1, [copy_stmt(st) for st in h.stmts], Goto(hid, origin=h.terminator.origin),
                         handlers=h.handlers, origin=h.origin)
            m.blocks[copy.id] = copy
            new = copy.id  # read at once by _retarget, in this iteration
            m.blocks[pid].retarget(lambda t: new if t == hid else t)
        h.stmts = []
        changed = True
    return changed


def _bottom_test(m: IRMethod, b: Block, hid: int) -> bool:
    """Whether ``b`` ends in an ``if`` that jumps back to ``hid`` and whose other arm leaves the loop (never
    reaches ``hid`` again): a do-while's test, not a ``continue`` threaded into a backward ``if`` in the middle
    of a loop's body (``if (c1 == c2) continue``, whose other arm goes on with the body)."""
    t = b.terminator
    if not isinstance(t, If) or b.id < hid or hid not in (t.if_true, t.if_false) or t.if_true == t.if_false:
        return False
    seen: set[int] = set()
    todo = [t.if_false if t.if_true == hid else t.if_true]
    while todo:
        x = todo.pop()
        if x == hid:
            return False
        if x not in seen:
            seen.add(x)
            todo.extend(m.blocks[x].successors())
    return True


def _steps_a_variable(stmts: list[Stmt]) -> bool:
    """Whether the statements write a variable they read before (``t = p.parent(); p = t``: a loop's step
    merged into its top). Only such statements are copied out of a loop's first block: a top that only computes
    its test (``t = it.hasNext()``) stays as lifted."""
    read: set[int] = set()
    for st in stmts:
        read.update(x.id for x in st.operands() if isinstance(x, Var))
        d = st.defined()
        if d is not None and d.id in read:
            return True
    return False


def _decided_entry_tests(m: IRMethod) -> bool:
    """A bottom-tested loop entered by a jump (``P: ...; goto L``, ``L`` the loop's first block, its only other
    way in the back edge) whose test, put in place of that jump, is decided to enter the loop
    (:func:`peggy_jvm.ir.known.decided_after`: the reverter dropped the entry test as known) gets that test back
    in a block of its own between ``P`` and ``L``. Meaning unchanged: the test goes to ``L``, as the jump did."""
    preds: dict[int, list[int]] = {}
    for b in m.blocks.values():
        for t in dict.fromkeys(b.successors()):
            preds.setdefault(t, []).append(b.id)
    changed = False
    for bid in sorted(m.blocks):
        b = m.blocks[bid]
        term = b.terminator
        if not isinstance(term, If):
            continue
        for loop in dict.fromkeys(t for t in term.targets() if t <= bid):
            others = [p for p in preds.get(loop, []) if p != bid]
            if len(others) != 1:
                continue
            p = m.blocks[others[0]]
            jump = p.terminator
            if not isinstance(jump, Goto):
                continue
            test = If(term.cond, term.a, term.b, term.if_true, term.if_false, origin=term.origin)
            if decided_after(m.blocks, p.id, test, preds, entry=m.entry) != loop:
                continue
            entry = Block(max(m.blocks) + 1, [], test)
            m.blocks[entry.id] = entry
            p.terminator = Goto(entry.id, origin=jump.origin)
            preds[loop] = [bid, entry.id]
            changed = True
    return changed


def _rejoin_threaded_arms(m: IRMethod) -> bool:
    """An arm of a test that jumps past a loop whose entry test that arm decides (the reverter's
    ``revert.tidy._thread_decided_entries``: jacobi1d's ``if n1 <= 1`` skipping both loops over the same bound)
    goes through that loop's entry again: to the block ``J`` before the entry test (``J`` only sets variables
    by copies, dead where the arm went, and jumps to the test), whose test, put in place of ``J``'s jump and
    reached from that arm, goes where the arm went (:func:`peggy_jvm.ir.known.decided_after` on that one edge).
    Meaning unchanged: the copies are dead there and the test takes the arm's target. The loop is then entered
    as javac's code enters it, from the join of both ways, so its PEG is the original's."""
    joins: list[tuple[int, If]] = []  # J and its loop's entry test
    for jid in sorted(m.blocks):
        j = m.blocks[jid]
        if isinstance(j.terminator, Goto) and j.stmts and all(isinstance(st, Copy) for st in j.stmts):
            target = m.blocks[j.terminator.target]
            if not target.stmts and isinstance(target.terminator, If):
                joins.append((jid, target.terminator))
    changed = False
    live: dict[int, set[int]] | None = None
    for bid in sorted(m.blocks) if joins else []:
        t = m.blocks[bid].terminator
        if not isinstance(t, If) or t.if_true == t.if_false:
            continue
        for jid, test in joins:
            j = m.blocks[jid]
            if jid == bid or jid in (t.if_true, t.if_false):
                continue
            for arm in dict.fromkeys((t.if_true, t.if_false)):
                # the arm as if it went to J: does J's test then go where the arm goes?
                was = (t.if_true, t.if_false)
                t.if_true, t.if_false = (jid if x == arm else x for x in was)
                to = decided_after(m.blocks, jid, test, {jid: [bid]}, by_constants=False)
                t.if_true, t.if_false = was
                if to != arm:
                    continue
                if live is None:
                    live = liveness(m.blocks)
                if any(st.dst.id in live[to] for st in j.stmts if isinstance(st, Copy)):  # J holds only copies
                    continue
                t.if_true, t.if_false = (jid if x == arm else x for x in was)
                changed, live = True, None  # the new edge changes what is live
                break
            if changed and jid in (t.if_true, t.if_false):
                break
    return changed


def _share_tail(m: IRMethod, a: Block, b: Block, k: int, test: If) -> Block:
    """The last ``k`` statements of ``b`` and ``test`` (``b``'s, or the same test of variables holding the same
    values at the end of both blocks) in a new block; ``a`` and ``b`` end by jumping to it."""
    tail = Block(max(m.blocks) + 1, b.stmts[len(b.stmts) - k:], test, handlers=b.handlers if k else ())
    m.blocks[tail.id] = tail
    for blk in (a, b):
        assert blk.terminator is not None  # a and b end in tests (the caller's)
        origin = blk.terminator.origin
        del blk.stmts[len(blk.stmts) - k:]
        blk.terminator = Goto(tail.id, origin=origin)
    return tail


def _through_jumps(m: IRMethod, t: int) -> int:
    """Where a jump to block ``t`` leads once blocks that only jump on are passed (an arm the layout could not
    fall into, lifted as a block of its own)."""
    seen = set()
    while t not in seen:
        blk = m.blocks[t]
        jump = blk.terminator
        if blk.stmts or not isinstance(jump, Goto):
            break
        seen.add(t)
        t = jump.target
    return t


def _common_tail(a: Block, b: Block, uses: dict[int, list[int]], defs: dict[int, int], final
                 ) -> tuple[int, If] | None:
    """The most statements (at most :data:`MAX_TAIL_STMTS`) that ``a`` and ``b`` end with before equivalent
    tests (their targets compared through ``final``), with the test the shared tail ends with; None when their
    tests differ."""
    ta0, tb0 = a.terminator, b.terminator
    assert isinstance(ta0, If) and isinstance(tb0, If)
    ta = If(ta0.cond, ta0.a, ta0.b, final(ta0.if_true), final(ta0.if_false), origin=ta0.origin)
    tb = If(tb0.cond, tb0.a, tb0.b, final(tb0.if_true), final(tb0.if_false), origin=tb0.origin)
    # the entry test as lowering writes it: ``0 < n`` as ``n > 0`` (ifle), the same test mirrored
    forms = [f for f in (tb, _negated(tb), _mirrored(tb), _negated(_mirrored(tb))) if _test(f) == _test(ta)]
    best = None
    for k in range(0, min(len(a.stmts), len(b.stmts), MAX_TAIL_STMTS) + 1):
        if k and a.handlers != b.handlers:
            break
        sa, sb = a.stmts[len(a.stmts) - k:], b.stmts[len(b.stmts) - k:]
        for f in forms:
            held = _same(sa + [ta], sb + [f], a, b, uses, defs)
            if held is not None:
                best = (k, If(f.cond, held.get("a", f.a), held.get("b", f.b), f.if_true, f.if_false,
                              origin=tb.origin) if held else tb0)
                break
    return best


def _test(t: If) -> tuple:
    return (t.cond, t.if_true, t.if_false)


def _negated(t: If) -> If:
    return If(_NEGATE[t.cond], t.a, t.b, t.if_false, t.if_true, origin=t.origin)


def _mirrored(t: If) -> If:
    return If(_MIRROR[t.cond], t.b, t.a, t.if_true, t.if_false, origin=t.origin)


def _same(xs: list[Stmt], ys: list[Stmt], a: Block, b: Block, uses: dict[int, list[int]],
          defs: dict[int, int]) -> dict[str, Var] | None:
    """Whether two statement lists do the same: equal fields but origins, the tests equivalent, each variable
    the same one or both temporaries of their tail (written once, in it, before any read, used only there), or,
    in the tests, two variables that one variable holds at the end of both blocks (``dup; istore n; if..``
    against ``iload n; if..``). None when they differ, else the test's operands (by field) to be read from such
    a common variable."""
    own_a, own_b = _temporaries(xs, a.id, uses, defs), _temporaries(ys, b.id, uses, defs)
    pairs: dict[int, int] = {}
    back: dict[int, int] = {}

    def var(x: Var, y: Var) -> bool:
        if x is y:
            return True
        if x.id not in own_a or y.id not in own_b or x.type != y.type:
            return False
        return pairs.setdefault(x.id, y.id) == y.id and back.setdefault(y.id, x.id) == x.id

    held: dict[str, Var] = {}

    def value(x: object, y: object, in_test: str | None = None) -> bool:
        if in_test and len(xs) == 1 and isinstance(x, Var) and isinstance(y, Var) and x is not y:
            # (only for a tail of the test alone: with statements shared, a holder could be a temporary of a's
            # tail, which the shared tail does not write)
            common = _holders(a, x).keys() & _holders(b, y).keys()
            if common:  # the shared test reads a variable that holds the value on both paths
                held[in_test] = y if y.id in common else _holders(a, x)[min(common)]
                return True
        if in_test and isinstance(x, Const) and isinstance(y, Var) and not any(st.defined() is y for st in xs):
            # a's test of the constant its block set the variable to (revert._constants_into_tests)
            c = constant_set(a, y)
            return c is not None and value(x, c)
        if isinstance(x, Var) or isinstance(y, Var):
            return isinstance(x, Var) and isinstance(y, Var) and var(x, y)
        if isinstance(x, list) or isinstance(y, list):
            return isinstance(x, list) and isinstance(y, list) and len(x) == len(y) and \
                all(value(p, q) for p, q in zip(x, y))
        if isinstance(x, Stmt) or isinstance(y, Stmt):
            return False  # a New's ClassInit: not compared
        if isinstance(x, Const) and isinstance(y, Const) and isinstance(x.value, float):
            return x.type == y.type and x.kind == y.kind and isinstance(y.value, float) and \
                math.copysign(1, x.value) == math.copysign(1, y.value) and \
                (x.value == y.value or (math.isnan(x.value) and math.isnan(y.value)))
        return type(x) is type(y) and x == y

    for x, y in zip(xs, ys):
        if type(x) is not type(y):
            return None
        for f in fields(x):
            if f.name != "origin" and \
                    not value(getattr(x, f.name), getattr(y, f.name), f.name if isinstance(x, If) else None):
                return None
    return held


def _holders(blk: Block, x: Var) -> dict[int, Var]:
    """The variables (by id) that hold ``x``'s value at the end of ``blk``: ``x`` and those ``blk`` copies it
    into, neither written after the copy."""
    out = {x.id: x}
    written: set[int] = set()
    for st in reversed(blk.stmts):
        d = st.defined()
        if d is None:
            continue
        if d.id == x.id:
            break
        if isinstance(st, Copy) and st.src is x and d.id not in written:
            out[d.id] = d
        written.add(d.id)
    return out


def _temporaries(stmts: list[Stmt], block: int, uses: dict[int, list[int]], defs: dict[int, int]) -> set[int]:
    """The variables written once in the method, in ``stmts`` before any read there, and used only in
    ``stmts`` (counted in ``block``: every use of them in the block is one of these statements)."""
    in_tail: dict[int, int] = {}
    written: set[int] = set()
    read_first: set[int] = set()
    for st in stmts:
        for x in st.operands():
            if isinstance(x, Var):
                in_tail[x.id] = in_tail.get(x.id, 0) + 1
                if x.id not in written:
                    read_first.add(x.id)
        d = st.defined()
        if d is not None:
            in_tail[d.id] = in_tail.get(d.id, 0) + 1
            written.add(d.id)
    return {v for v in written - read_first
            if defs.get(v) == 1 and uses.get(v, []) == [block] * in_tail[v]}
