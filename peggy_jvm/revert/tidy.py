"""The reverter's block-level cleanup: freshly emitted IR blocks put in javac's shape.

What this module owns
    :func:`tidy_method`, the cleanup :func:`~peggy_jvm.revert.revert.revert_peg` runs on the blocks its emission
    wrote, and the passes it is made of: :func:`tidy_blocks` (jumps to empty blocks threaded, single-predecessor
    gotos joined, ifs on two constants made gotos, javac's layout by :func:`_layout`), tests of constants just set
    threaded and the statements that left dead dropped (:func:`~peggy_jvm.ir.coalesce.drop_dead_stores`: whose
    variable is not live after them), :func:`~peggy_jvm.ir.coalesce.coalesce_copies`, tail merging
    of equal blocks, of a block's last statements equal to another block (:func:`_merge_equal_tails`) and of
    regions equal up to renaming of variables never live at once, ``switch`` rebuilt from
    a chain of equality tests, values set before a join moved into it (:func:`_values_into_joins`: a join's
    value received on the operand stack, and the value computed before the test that its first statement takes
    first kept under it: ``31 * h + (c ? 1 : 0)``); under ``rotate_loops`` (``--goal speed``)
    loops tested at the bottom (:func:`_rotate_loops`), a hoisted loop's zero-trip values set before its entry
    test (:func:`_zero_trip_values_first`), an arm of a loop's entry test that the next loop's entry test
    repeats sent past that loop (:func:`_thread_decided_entries`), entry tests an earlier test decides dropped
    (:func:`_settle_known_tests`: also through the loops between, and an outermost loop's test of constants),
    a loop holding another whose entry test stays tested at its top again
    (:func:`_middle_loops_tested_at_the_top`), an outermost loop whose entry test stays entered by a goto to its
    bottom test instead of the copy (:func:`_enter_by_goto`, laid out by :func:`_layout`), constants just set
    tested as constants; reads of the heap moved down to the one place their value is read, past code that
    touches no memory (:func:`_reads_to_their_use`, argued there); last, as ``returns`` (:class:`ReturnsInPlace`) allows, a ``goto`` to a block that only
    returns or throws replaced by that return.

Inputs: the original IR method (name, descriptor, parameters), the emitted blocks (every block terminated) and
their entry, the method's variable list (extended in place by coalescing and rotation) and the next free
variable id.
Outputs: the tidied :class:`~peggy_jvm.ir.nodes.IRMethod` (only reachable blocks, only the variables they use
plus the parameters) and, when loops were rotated, the map from a loop header's old block (by ``id``) to its
new one.
Invariants: meaning unchanged: no statement moves past a branch except as a copy on every path into a join
(the rotated test, the values into joins) or a read moved to its reader (:func:`_reads_to_their_use`), each pass leaves every block terminated and every jump target present;
the result depends only on the input blocks (no hash or timing order).
"""
from __future__ import annotations

import enum
import struct
from collections import Counter
from dataclasses import dataclass, fields
from typing import Callable

import networkx as nx

from ..ir.coalesce import (coalesce_copies, copy_stmt, drop_dead_stores, interference, liveness,
                           recompute_invariants, rename_variables)
from ..ir.cfg import is_reducible
from ..ir.known import HOLDS, constant_set, decided_arm, deciding_test, heads_loop
from ..ir.lower import blocks_on_cycles
from ..ir.nodes import (INT, ArrayLength, ArrayLoad, Binary, Block, Catch, Cond, Const, ConstKind, Copy, GetField, GetStatic,
                        Goto, If, IRMethod, IRType, Kind, Return, Stmt, Switch, Throw, Unary, Var)


class ReturnsInPlace(enum.Enum):
    """Which ``goto``s to a block that only returns or throws :func:`tidy_method` replaces by that return
    (:func:`_returns_in_place_of_gotos`)."""
    #: none: every path jumps to the one return (the speed goal's retries, ``pipeline._returns_by_jumps``)
    NONE = "none"
    #: those to a return no loop reaches (``--goal speed``): the self-check cannot yet prove a rotated or peeled
    #: loop whose exits each return on their own (tests/test_peel.py); a ``return a == b || f();`` returned in
    #: each arm it proves as a branch (where it does not, the full stage checks the shared return instead)
    BEFORE_LOOPS = "before loops"
    #: all (``--goal size``, ``--stage peg``'s round trip)
    ALL = "all"


def tidy_method(m: IRMethod, emitted: dict[int, Block], entry: int, variables: list[Var], next_var: int,
                rotate_loops: bool, returns: ReturnsInPlace) -> tuple[IRMethod, dict[int, Block]]:
    """``emitted`` (blocks from ``entry``, every one terminated) in javac's shape as the body of ``m`` (see the
    module docstring); ``variables`` grows in place by what coalescing and rotation add. Returns the method and
    the rotated loop headers (old header block's ``id`` -> its new block; empty without ``rotate_loops``)."""
    def method(blocks: dict[int, Block], entry_id: int) -> IRMethod:
        return IRMethod(m.class_name, m.name, m.descriptor, m.is_static, list(m.params), blocks, entry_id,
                        variables=variables)

    blocks, entry_id = tidy_blocks(_reachable_blocks(emitted, entry), entry)
    if _thread_known_tests(blocks):
        blocks, entry_id = tidy_blocks(_reachable_blocks(blocks, entry_id), entry_id)
        drop_dead_stores(blocks)
    coalesce_copies(method(blocks, entry_id))  # javac's shape: variables updated in place
    blocks, entry_id = tidy_blocks(blocks, entry_id)  # blocks the copies and flags left empty are jumped over
    coalesce_copies(method(blocks, entry_id))  # again on the blocks tidying joined
    merged = _merge_equal_blocks(blocks, entry_id)  # the same continuation generated on several paths is kept once
    # ... also when generated in other variables (a handler's dispatch per statement it covers, a loop per path)
    merged = _merge_renamed_blocks(method(blocks, entry_id)) or merged
    merged = _merge_equal_tails(blocks, entry_id) or merged  # ... and a block that ends as another one does
    if merged:
        blocks, entry_id = tidy_blocks(_reachable_blocks(blocks, entry_id), entry_id)
    _switches_from_chains(blocks)
    blocks = _reachable_blocks(blocks, entry_id)
    fresh = [max([next_var, *(v.id + 1 for v in variables)])]  # coalescing made some too

    def new_var(t: IRType) -> Var:
        v = Var(fresh[0], t, f"p{fresh[0]}")
        fresh[0] += 1
        variables.append(v)
        return v

    rotated, rotations = _rotate_loops(blocks, entry_id, new_var) if rotate_loops else ({}, [])
    if rotated and _zero_trip_values_first(blocks):
        blocks = _reachable_blocks(blocks, entry_id)
    if rotated:
        blocks, entry_id = tidy_blocks(blocks, entry_id)
        if _thread_decided_entries(blocks, entry_id):
            blocks = _reachable_blocks(blocks, entry_id)
        if _settle_known_tests(blocks, entry_id):
            blocks, entry_id = tidy_blocks(_reachable_blocks(blocks, entry_id), entry_id)
        if _middle_loops_tested_at_the_top(blocks, rotations, rotated):
            blocks, entry_id = tidy_blocks(_reachable_blocks(blocks, entry_id), entry_id)
        bottom = _enter_by_goto(blocks, entry_id, rotations, rotated)
        if bottom:
            blocks, entry_id = tidy_blocks(blocks, entry_id, bottom)
        _constants_into_tests(blocks)
    recompute_invariants(method(blocks, entry_id))  # after rotation: the readers a copied test added count
    _reads_to_their_use(blocks, entry_id, m)
    _values_into_joins(blocks, entry_id, {p.id for p in m.params})
    if returns is not ReturnsInPlace.NONE and _returns_in_place_of_gotos(blocks, returns):
        blocks = _reachable_blocks(blocks, entry_id)
    present = {x.id for b in blocks.values() for st in b.all_stmts()
               for x in [*st.operands(), st.defined()] if isinstance(x, Var)}
    kept = [v for v in variables if v.id in present or v in m.params]
    return IRMethod(m.class_name, m.name, m.descriptor, m.is_static, list(m.params), blocks, entry_id,
                    synchronized=m.synchronized, variables=kept), rotated



def tidy_blocks(blocks: dict[int, Block], entry: int, bottom: frozenset[int] = frozenset()
                ) -> tuple[dict[int, Block], int]:
    """Jumps to empty blocks go straight to where those lead; a block reached only by a goto from its one
    predecessor joins it; an if on two constants becomes a goto; blocks are renumbered in javac's layout
    (:func:`_layout`: joins after their predecessors, each block falling into its goto target or its if's false
    arm; lowering emits blocks in id order), the loop headers in ``bottom`` (by the identity of their blocks)
    at the bottom of their loops. Meaning unchanged: no statement moves past a branch."""
    def final(t: int) -> int:
        seen = set()
        while t not in seen:
            seen.add(t)
            b = blocks[t]
            if b.stmts or not isinstance(b.terminator, Goto) or b.terminator.target == t:
                return t
            t = b.terminator.target
        return t

    def retarget(b: Block) -> None:
        b.retarget(final, handlers=False)  # a switch's cases too (rotation tidies after _switches_from_chains)
        term = b.terminator
        if isinstance(term, If):
            known = _constant_test(term)
            if term.if_true == term.if_false or known is not None:
                b.terminator = Goto(term.if_true if known is not False else term.if_false)

    for b in blocks.values():
        retarget(b)
    entry = final(entry)
    blocks = _reachable_blocks(blocks, entry)
    preds: dict[int, int] = {}
    for b in blocks.values():
        for t in b.successors():
            preds[t] = preds.get(t, 0) + 1
    for bid in list(blocks):
        head = blocks.get(bid)
        while head is not None and isinstance(head.terminator, Goto):
            t = head.terminator.target
            if t == bid or t == entry or preds.get(t, 0) != 1 or t not in blocks or \
                    _handled_by(head) != _handled_by(blocks[t]):  # a try range holds just its own statement
                break
            nxt = blocks.pop(t)
            head.stmts.extend(nxt.stmts)
            head.terminator = nxt.terminator
    order = _layout(blocks, entry, {bid for bid, b in blocks.items() if id(b) in bottom})
    new_id = {old: k for k, old in enumerate(order)}
    out: dict[int, Block] = {}
    for old in order:
        b = blocks[old]
        b.retarget(new_id.__getitem__)
        b.id = new_id[old]
        out[b.id] = b
    return out, new_id[entry]


def _layout(blocks: dict[int, Block], entry: int, bottom: frozenset[int] | set[int] = frozenset()) -> list[int]:
    """Block order as javac lays code out: a block is placed once all its forward predecessors are (so a join
    comes after both arms and only a loop's back edge jumps backward); among the blocks ready, each block's
    goto target or if's false arm comes next (it falls through; a loop header's test falls into the arm that stays
    in the loop), else the block that became ready last (a loop body before the loop's exit).

    A header in ``bottom`` is laid out as ecj lays a loop out (:func:`_enter_by_goto`): its loop's first block
    ``L`` where the header would be, the header after the loop's body, falling into the exit and jumping back to
    ``L``. For the order the jumps into the header from outside the loop count as jumps to ``L`` (the block
    entering the loop falls into ``L``, and lowering writes its ``goto`` to the header), and the header's jump to
    ``L`` as the loop's back edge."""
    succs = {bid: list(dict.fromkeys(b.successors())) for bid, b in blocks.items()}
    into = _bottom_entries(blocks, entry, succs, bottom)  # a block entering a bottom loop -> (header, L)
    first_of = {h: first for h, first in into.values()}
    for p, (h, first) in into.items():
        succs[p] = [first if t == h else t for t in succs[p]]
    back = set(_back_edges(succs, entry))
    headers = {t for _, t in back}
    preds: dict[int, list[int]] = {bid: [] for bid in blocks}
    for bid, ts in succs.items():
        for t in ts:
            preds[t].append(bid)
    waiting = {bid: 0 for bid in blocks}
    for bid, ts in succs.items():
        for t in ts:
            if (bid, t) not in back:
                waiting[t] += 1
    order: list[int] = []
    placed: set[int] = set()
    ready: list[int] = []
    nxt: int | None = entry
    while len(order) < len(blocks):
        if nxt is None:
            while ready and ready[-1] in placed:
                ready.pop()
            nxt = ready.pop() if ready else min(b for b in blocks if b not in placed)
        bid, nxt = nxt, None
        placed.add(bid)
        order.append(bid)
        became = []
        for t in succs[bid]:
            if (bid, t) not in back:
                waiting[t] -= 1
                if waiting[t] == 0 and t not in placed:
                    became.append(t)
        term = blocks[bid].terminator
        prefer = term.target if isinstance(term, Goto) else term.if_false if isinstance(term, If) else None
        if bid in into:
            prefer = into[bid][1]  # the loop's first block, the header being at the bottom
        elif bid in first_of and isinstance(term, If):
            prefer = term.if_false if term.if_true == first_of[bid] else term.if_true  # it falls out of the loop
        elif isinstance(term, If) and bid in headers and term.if_true != term.if_false:
            # a loop's test falls into the arm that stays in the loop, as javac lays a loop out (the exit is the
            # taken branch, once; the lowering negates the test): not the exit, which would make every iteration
            # jump into the body
            inside = _natural_loop(bid, [p for p, t in back if t == bid], preds)  # not an enclosing loop's
            if term.if_true in inside and term.if_false not in inside:
                prefer = term.if_true
        for t in reversed(became):
            if t != prefer:
                ready.append(t)
        if prefer in became:
            nxt = prefer
    return order


def _bottom_entries(blocks: dict[int, Block], entry: int, succs: dict[int, list[int]],
                    bottom: frozenset[int] | set[int]) -> dict[int, tuple[int, int]]:
    """For each header ``h`` of ``bottom`` that can go to the bottom of its loop (its test has exactly one arm
    ``L`` in the loop, and every block entering the loop from outside ends with ``goto h``): each such entering
    block -> ``(h, L)``."""
    latches, preds = _loop_edges(succs, entry)
    into: dict[int, tuple[int, int]] = {}
    for h in sorted(bottom):
        term = blocks[h].terminator
        if h not in latches or not isinstance(term, If):
            continue
        body = _natural_loop(h, latches[h], preds)
        inside = [t for t in dict.fromkeys(term.targets()) if t in body]
        entering = [p for p in preds[h] if p not in body]
        if len(inside) != 1 or inside[0] == h or not entering or \
                any(not isinstance(blocks[p].terminator, Goto) or p in into for p in entering):
            continue
        into.update((p, (h, inside[0])) for p in entering)
    return into


ROTATE_MAX_HEADER_STMTS = 2
"""Loop inversion (:func:`_rotate_loops`) copies a loop's test to its bottom only when the header computes at
most this many statements before it, each one of :data:`_ROTATE_STMTS` (an ``arraylength``, a field read:
javac-sized loop tests have none to two); each copied statement costs its bytes again (one to three) for a
jump saved per iteration. A call is never copied: its three to five bytes and its arguments' are more than
the ``goto`` saved."""
_ROTATE_STMTS = (Binary, Unary, Copy, ArrayLength, ArrayLoad, GetField, GetStatic)


@dataclass(eq=False)
class _Rotation:
    """One loop :func:`_rotate_loops` tested at the bottom, by identity (later passes renumber and join
    blocks): the old header (now the entry test), its statements and test, and the copy's."""
    header: Block
    stmts: list[Stmt]
    entry: If
    copy_stmts: list[Stmt]
    bottom: If
    operands: tuple[object, object, object, object]  # the tests' a and b when copied
    nested: bool  # inside another loop
    holds: bool  # another loop inside


def _rotate_loops(blocks: dict[int, Block], entry: int, new_var: Callable[[IRType], Var]
                  ) -> tuple[dict[int, Block], list[_Rotation]]:
    """Loop inversion: a loop whose header only tests (``H: s; if c goto body else exit`` with at most
    :data:`ROTATE_MAX_HEADER_STMTS` statements ``s``) and whose back edges are ``goto H`` gets a copy of its header
    as the target of those back edges, so the loop is tested at the bottom (``if c goto body``, the one jump of
    an iteration) and ``H`` is left as the entry test, run once. Meaning unchanged: the copy does what ``H`` did
    at the same point, with ``H``'s handlers; the loop's header becomes ``body``, whose every entry comes from
    ``H`` or the copy. In place; returns the headers that stopped being one, by identity, mapped to the block
    now heading their loop (the thetas' debug information moves there: it holds the same iteration's values),
    and the rotations (:func:`_enter_by_goto` takes the copy back where the entry test stays). A temporary the
    header writes and only it reads gets a variable of its own in the copy: written once, it
    stays on the operand stack (lowering's expression trees)."""
    succs = {bid: b.successors() for bid, b in blocks.items()}
    back, preds = _loop_edges(succs, entry)  # latches by header
    handler_targets = {h.target for b in blocks.values() for h in b.handlers}
    used_in: dict[int, set[int]] = {}  # variable id -> the blocks that read or write it
    for b in blocks.values():
        for st in b.all_stmts():
            for x in [*st.operands(), st.defined()]:
                if isinstance(x, Var):
                    used_in.setdefault(x.id, set()).add(b.id)
    bodies = {h: _natural_loop(h, back[h], preds) for h in back}
    moved: dict[int, Block] = {}
    rotations: list[_Rotation] = []
    for h in sorted(back):
        hb, latches = blocks[h], sorted(set(back[h]))
        term = hb.terminator
        if not isinstance(term, If) or term.if_true == term.if_false or h in handler_targets or \
                len(hb.stmts) > ROTATE_MAX_HEADER_STMTS or hb.entry_stack or \
                not all(isinstance(st, _ROTATE_STMTS) for st in hb.stmts) or \
                any(not isinstance(blocks[p].terminator, Goto) for p in latches):
            continue
        body = bodies[h]
        inside = [t for t in term.targets() if t in body]
        if len(inside) != 1 or inside[0] == h:
            continue
        nested = any(h in other for g, other in bodies.items() if g != h)
        holds = any(g in body for g in bodies if g != h)
        out = term.if_false if inside[0] == term.if_true else term.if_true
        if out in bodies and h in bodies[out]:
            # the loop's exit is an enclosing loop's header: at the bottom both arms would jump back (an if and a
            # goto where the top-tested loop has one goto)
            continue
        copy = Block(max(blocks) + 1, [copy_stmt(st) for st in hb.stmts],
                     If(term.cond, term.a, term.b, term.if_true, term.if_false, origin=term.origin),
                     handlers=hb.handlers, origin=hb.origin)
        own: dict[int, Var] = {}
        for st in hb.stmts:  # written before any read, and used nowhere else
            own.update((x.id, own.get(x.id, x)) for x in st.operands() if isinstance(x, Var))
            d = st.defined()
            if d is not None and d.id not in own and used_in[d.id] == {h}:
                own[d.id] = new_var(d.type)
        own = {vid: v for vid, v in own.items() if v.id != vid}
        rename_variables({copy.id: copy}, lambda v: own.get(v.id, v))
        blocks[copy.id] = copy
        for p in latches:
            origin = blocks[p].terminator.origin  # type: ignore[union-attr]  # a latch ends in a jump
            blocks[p].terminator = Goto(copy.id, origin=origin)
        moved[id(hb)] = blocks[inside[0]]
        bottom = copy.terminator
        assert isinstance(bottom, If)
        rotations.append(_Rotation(hb, list(hb.stmts), term, list(copy.stmts), bottom,
                                   (term.a, term.b, bottom.a, bottom.b), nested, holds))
    return moved, rotations


def _enter_by_goto(blocks: dict[int, Block], entry: int, rotations: list[_Rotation], moved: dict[int, Block]
                   ) -> frozenset[int]:
    """Each rotated loop nested in no other whose entry test stayed (no earlier test decides it:
    :func:`_settle_known_tests`) is entered by a jump to its bottom test instead (``goto T; L: body; T: s; if c
    goto L``, as ecj writes loops): the entry test and its statements go, the block that ended with them jumps to
    the bottom copy, split from its latch when tidying joined them. The copy of the test cost its bytes again (2
    to 6) where the jump costs the ``goto`` javac's loop has at its bottom: the same bytes as javac's loop, and
    still one jump per iteration; a loop entered with no test at all (the copy's case) is smaller than javac's,
    by that ``goto``, and keeps its copy. So does a loop that more than one block would jump into (the entry
    test's block left empty, and not reached by one ``goto``: two arms of an ``if`` before the loop), where
    javac's layout falls into the loop from one of them.

    Why not a nested loop: HotSpot compiles a long-running loop on stack replacement from the target of its
    backward jump (here ``L``); an inner loop entered at ``T`` by its enclosing loop is then a loop with two
    entries in that compilation (irreducible, left unoptimized): BenchKernels.insertionSort's rewrite ran 2.4x
    slower under the JIT with its inner loop entered so, 0.99-1.01 with ``-XX:-UseOnStackReplacement`` or the
    copy (docs/benchmarks.md). An outermost loop is entered at ``T`` only from the method's start, which such a
    compilation does not contain.

    Meaning unchanged: the bottom copy does what the entry test did (the same statements but for temporaries of
    its own, the same test and targets, the same handlers), from the same state. In place; ``moved`` maps such a
    loop's old header to its bottom test (the loop's header again). Returns the bottom tests, by identity, for
    the layout (:func:`tidy_blocks`)."""
    ends = {id(b.terminator): b for b in blocks.values()}
    into: dict[int, list[Block]] = {}
    for b in blocks.values():
        for t in dict.fromkeys(b.successors()):
            into.setdefault(t, []).append(b)
    out: set[int] = set()
    for r in rotations:
        both = None if r.nested else _both_tests(r, ends)
        if both is None:
            continue
        e, b = both
        k = len(r.stmts)
        if len(e.stmts) == k and (e.id == entry or len(into.get(e.id, [])) != 1
                                  or not isinstance(into[e.id][0].terminator, Goto)):
            continue  # e left empty: the blocks jumping to it would jump to the loop
        tail = _split_tail(blocks, b, k, r.header, r.bottom) if len(b.stmts) > k else b  # joined to its one latch
        del e.stmts[len(e.stmts) - k:]
        e.terminator = Goto(tail.id, origin=r.entry.origin)
        moved[id(r.header)] = tail
        out.add(id(tail))
    return frozenset(out)


def _both_tests(r: _Rotation, ends: dict[int, Block]) -> tuple[Block, Block] | None:
    """The blocks ending with ``r``'s entry test and with its bottom copy (``ends``: blocks by the identity of
    their terminators), when both are still there as :func:`_rotate_loops` wrote them: the same statements
    last (by identity), the same test of the same operands with the same targets and the same handlers. None
    when the entry test went or a pass changed one of the two."""
    e, b = ends.get(id(r.entry)), ends.get(id(r.bottom))
    if e is None or b is None or e is b or e.handlers != b.handlers or \
            (r.entry.a, r.entry.b, r.bottom.a, r.bottom.b) != r.operands or r.entry.cond is not r.bottom.cond or \
            (r.entry.if_true, r.entry.if_false) != (r.bottom.if_true, r.bottom.if_false) or \
            not _ends_with(e.stmts, r.stmts) or not _ends_with(b.stmts, r.copy_stmts):
        return None
    return e, b


OUTERMOST_AT_THE_TOP = True
"""Whether an outermost loop holding another is put back at its top too (:func:`_middle_loops_tested_at_the_top`).
Always on in the optimizer; tests turn it off to make the nests ecj writes (the outermost loop entered by a
goto to its bottom test), which the prover must read as well."""


def _middle_loops_tested_at_the_top(blocks: dict[int, Block], rotations: list[_Rotation], moved: dict[int, Block]
                                    ) -> bool:
    """Each rotated loop holding another whose entry test stayed (no earlier test decides it:
    :func:`_settle_known_tests`), a middle loop of a nest or (:data:`OUTERMOST_AT_THE_TOP`) the outermost, is put
    back tested at its top, as javac writes it (``H: s; if c goto L else X; L: body; goto H``): the bottom copy
    goes and the block that ended with it jumps to the entry test, split from the statements before it. One
    ``goto`` more per iteration of that loop, which runs far less often than the loop it holds.

    Why: shellSort's ``for (i = gap; i < n; i++)`` between the gap loop and the insertion loop, tested at its
    bottom, ran 1.00-1.06x javac's code under HotSpot's default JIT (median 1.03), and 0.96-0.99x tested at
    its top (the other loops rotated; -Xint 0.88 against 0.86); strideSum's middle loop 0.944 against 0.966.
    Without on-stack replacement the two shapes run alike (0.79, 0.80), and with C2's loop predication,
    counted-loop safepoints or unrolling off the rotated one is the faster: the loss comes with C2's
    counted-loop work on a bottom-tested loop holding a loop (docs/benchmarks.md, ``shelljit``). The same holds
    for the outermost loop of a nest: matmul's, entered by a goto to its bottom test, ran 1.03-1.05x javac's
    code under the JIT and 0.99x tested at its top (docs/benchmarks.md, "Issue 15's goals on main, session
    15"). A loop entered with no test (matmul's ``j``, decided by the outer test) has no test to put back and
    stays rotated.

    Meaning unchanged: the entry test does at the top of each iteration what the copy did at the bottom of the
    one before (the same statements but for temporaries of the copy's own, the same test and targets, the same
    handlers). In place; ``moved`` maps such a loop's old header to its test again. True when a loop changed."""
    ends = {id(b.terminator): b for b in blocks.values()}
    changed = False
    for r in rotations:
        both = _both_tests(r, ends) if r.holds and (r.nested or OUTERMOST_AT_THE_TOP) else None
        if both is None:
            continue
        e, b = both
        k = len(r.stmts)
        h = _split_tail(blocks, e, k, r.header, r.entry) if len(e.stmts) > k else e  # the statements before stay
        del b.stmts[len(b.stmts) - k:]
        b.terminator = Goto(h.id, origin=r.bottom.origin)
        moved[id(r.header)] = h
        changed = True
    return changed


def _split_tail(blocks: dict[int, Block], b: Block, k: int, header: Block, test: If) -> Block:
    """``b``'s last ``k`` statements and its terminator (a rotated loop's ``test``) moved to a new block with
    ``b``'s handlers and the loop ``header``'s origin, which ``b`` now jumps to; the new block."""
    t = Block(max(blocks) + 1, b.stmts[len(b.stmts) - k:], b.terminator, handlers=b.handlers, origin=header.origin)
    blocks[t.id] = t
    del b.stmts[len(b.stmts) - k:]
    b.terminator = Goto(t.id, origin=test.origin)
    return t


def _ends_with(stmts: list[Stmt], tail: list[Stmt]) -> bool:
    """Whether ``stmts`` ends with the very statements ``tail`` (by identity)."""
    return len(stmts) >= len(tail) and all(x is y for x, y in zip(stmts[len(stmts) - len(tail):], tail))


def _zero_trip_values_first(blocks: dict[int, Block]) -> bool:
    """A test ``T: if c goto A else Z`` whose arm ``Z`` is a loop's zero-trip path (``phi(C@0, loop, zero)`` of
    a hoisted loop: ``A`` runs the loop) gets the zero-trip values set before it, so the loop's continuation is
    written once and falls out of its bottom test:

    * ``Z`` only sets constants that ``A`` sets too before reading or writing them (the loop's initial values):
      they are set in ``T`` instead and ``Z`` is left empty (the test jumps straight to the join);
    * ``Z`` is the continuation ``Y`` after the loop (``... goto J`` both) with constants where ``Y`` reads
      variables that ``A`` starts at those constants (``sum += 0.0`` against ``sum += c``): the variables are
      set in ``T``, and the test jumps to ``Y``, when none of them is read after ``J`` before it is written.

    Meaning unchanged: on ``Z``'s path the same values are computed, on ``A``'s nothing reads the variables
    before they get the value they had (a handler of ``A`` cannot either: only when nothing before the copy
    throws or ``A`` has none). True when a test changed."""
    preds: dict[int, int] = {}
    for b in blocks.values():
        for succ in set(b.successors()):
            preds[succ] = preds.get(succ, 0) + 1
    live: dict[int, set[int]] | None = None
    changed = False
    for t in list(blocks.values()):
        term = t.terminator
        if not isinstance(term, If) or term.if_true == term.if_false:
            continue
        for a_id, z_id in ((term.if_true, term.if_false), (term.if_false, term.if_true)):
            a, z = blocks[a_id], blocks[z_id]
            if preds.get(a_id) != 1 or preds.get(z_id) != 1 or not z.stmts or not isinstance(z.terminator, Goto):
                continue
            consts = [(st.dst, st.src) for st in z.stmts if isinstance(st, Copy) and isinstance(st.src, Const)]
            if len(consts) == len(z.stmts):
                sets, y = consts, None
            else:
                if live is None:
                    live = liveness(blocks)
                found = _continuation(blocks, z, live)
                if found is None:
                    continue
                y, sets = found
            at = [_initial_copy(a, v, c) for v, c in sets]
            if any(k is None for k in at) or any(x is v for v, _ in sets for x in term.operands()):
                continue
            t.stmts.extend(Copy(v, c) for v, c in sets)
            a.stmts = [st for k, st in enumerate(a.stmts) if k not in at]
            if y is None:
                z.stmts = []
            else:
                t.retarget(lambda b: y.id if b == z_id else b)
            changed = True
            break
    return changed


def _thread_decided_entries(blocks: dict[int, Block], entry: int) -> bool:
    """An arm of a test into a block that only sets variables by copies and tests what that arm decided
    (jacobi1d: ``if n1 <= 1`` skipping the first of two loops over the same bound, into ``i = 1; if n1 <= 1``
    before the second, :func:`peggy_jvm.ir.known.decided_after` on that one edge) goes straight to the
    decided target when the copies' variables are dead there. Meaning unchanged: on that edge the block's test
    takes that target, and what the block set is read by no one. The second loop's entry test then has one
    way in, from the first loop's exit, where the first test decides it (:func:`_settle_known_tests`). A block
    that heads a loop (a back edge comes into it: an outer loop's first block, itself the inner loop's entry
    test) is not jumped over: the loop would be entered in its middle, a shape the prover's view does not
    rejoin (jacobi2d's sum loop nest: its self-check failed). True when an arm changed."""
    changed = False
    live: dict[int, set[int]] | None = None
    preds: dict[int, list[int]] | None = None
    for bid in sorted(blocks):
        t = blocks[bid].terminator
        if not isinstance(t, If) or t.if_true == t.if_false:
            continue
        for arm in dict.fromkeys((t.if_true, t.if_false)):
            j = blocks[arm]
            jt = j.terminator
            if arm == bid or not isinstance(jt, If) or not all(isinstance(st, Copy) for st in j.stmts):
                continue
            if preds is None:
                preds = {}
                for b in blocks.values():
                    for succ in dict.fromkeys(b.successors()):
                        preds.setdefault(succ, []).append(b.id)
            if heads_loop(arm, preds, entry):
                continue
            to = decided_arm(blocks, arm, {arm: [bid]}, by_constants=False)
            if to is None or to == arm:
                continue
            if live is None:
                live = liveness(blocks)
            if any(st.dst.id in live[to] for st in j.stmts if isinstance(st, Copy)):  # j holds only copies
                continue
            if t.if_true == arm:
                t.if_true = to
            if t.if_false == arm:
                t.if_false = to
            changed = True
            preds = live = None  # both of the graph as it was: the next arm is judged on the graph as it is now
    return changed


def _settle_known_tests(blocks: dict[int, Block], entry: int) -> bool:
    """An int test an earlier test decides on every path into it (:func:`peggy_jvm.ir.known.deciding_test`: a
    rotated loop's entry test ``k < n`` with ``k = 0`` under the hoisted read's test ``n > 0``, or under the
    entry test of an enclosing loop or of a loop before it over the same ``n``, through loop headers where the
    prover's view can put the test back, :func:`_straight_into_loop`) becomes a jump to its arm. True when a
    test went. A test of constants alone (``0 < 8``) goes only outside every loop (an outermost loop's entry:
    the loop then starts at the method's first iteration, one entry for an on-stack-replacement compilation);
    a nested loop's (``0 < 16``) stays, as javac keeps it: a nested loop entered with no test at all ran 1.31x
    and 1.38x slower under HotSpot's JIT (strideSum, alternating runs; 0.94 with the test kept), a loop shape
    its compiler does not treat as a counted loop. (An outermost loop whose entry test stays is then entered by
    a goto, :func:`_enter_by_goto`: no test copied.)"""
    preds: dict[int, list[int]] = {}
    for b in blocks.values():
        for t in dict.fromkeys(b.successors()):
            preds.setdefault(t, []).append(b.id)
    looping = blocks_on_cycles(blocks)
    changed = False
    for bid in sorted(blocks):
        term = blocks[bid].terminator
        found = deciding_test(blocks, bid, term, preds, bid not in looping, entry) if isinstance(term, If) \
            else None
        if found is None or (found.through_loop and not _straight_into_loop(blocks, found.target, preds, entry)):
            continue
        arm = found.target
        if arm is not None:
            origin = blocks[bid].terminator.origin  # type: ignore[union-attr]  # term, an If, is it
            blocks[bid].terminator = Goto(arm, origin=origin)
            changed = True
            preds = {t: [p for p in ps if p != bid or t == arm] for t, ps in preds.items()}
    return changed


def _straight_into_loop(blocks: dict[int, Block], arm: int, preds: dict[int, list[int]], entry: int) -> bool:
    """Whether ``arm`` heads a loop, or only sets variables by copies: the prover's view of the code
    (validate/loopshape.py) puts a test dropped before ``arm`` back at the end of the block that jumps to the
    loop, which must be where it stood, before any read it guarded. matmul's row ``a[i]``, hoisted behind the
    inner loop's entry test ``n > 0`` that the outer loops' entry test decides: with the test dropped, the row is
    read first, and the self-check cannot prove the read safe (it does not know ``n > 0`` there: a fact of the
    path, which the PEGs do not carry into a loop's body), so the method would keep its original code."""
    return heads_loop(arm, preds, entry) or all(isinstance(st, Copy) for st in blocks[arm].stmts)


def _constants_into_tests(blocks: dict[int, Block]) -> None:
    """An int test of a variable its block has just set to a constant tests the constant (``i = 0; if n > i``
    is ``if n > 0``: ``ifgt``, one load fewer); the prover's view of a rotated loop reads it back
    (validate/loopshape.py)."""
    for b in blocks.values():
        t = b.terminator
        if isinstance(t, If):
            for name in ("a", "b"):
                x = getattr(t, name)
                c = constant_set(b, x) if isinstance(x, Var) else None
                if c is not None:
                    setattr(t, name, c)


def _continuation(blocks: dict[int, Block], z: Block, live: dict[int, set[int]]
                  ) -> tuple[Block, list[tuple[Var, Const]]] | None:
    """The block ``Y`` that does what ``z`` does with variables where ``z`` has constants, going to the same
    place, and those (variable, constant) pairs; None if there is none (or a variable is live after it)."""
    assert isinstance(z.terminator, Goto)
    for y in blocks.values():
        if y is z or not isinstance(y.terminator, Goto) or y.terminator.target != z.terminator.target or \
                len(y.stmts) != len(z.stmts) or y.handlers != z.handlers:
            continue
        sets: dict[int, tuple[Var, Const]] = {}
        written = {d.id for st in [*y.stmts, *z.stmts] if (d := st.defined()) is not None}
        ok = True
        for sz, sy in zip(z.stmts, y.stmts):
            if type(sz) is not type(sy):
                ok = False
                break
            for f in fields(sz):
                vz, vy = getattr(sz, f.name), getattr(sy, f.name)
                if f.name == "origin" or vz is vy or (isinstance(vz, Const) and isinstance(vy, Const)
                                                      and _same_constant(vz, vy)):
                    continue
                if isinstance(vz, Const) and isinstance(vy, Var) and vy.id not in written and vy.type == vz.type \
                        and (vy.id not in sets or _same_constant(sets[vy.id][1], vz)):
                    sets[vy.id] = (vy, vz)
                    continue
                if isinstance(vz, Var) and isinstance(vy, Var) and vz is vy:
                    continue
                ok = False
                break
            if not ok:
                break
        if ok and sets and not any(vid in live[z.terminator.target] for vid in sets):
            return y, list(sets.values())
    return None


def _initial_copy(a: Block, v: Var, c: Const) -> int | None:
    """The index of a statement of ``a`` setting ``v`` to the constant ``c``, with nothing before it reading or
    writing ``v`` (or throwing, when ``a`` has handlers)."""
    for k, st in enumerate(a.stmts):
        if isinstance(st, Copy) and st.dst is v and isinstance(st.src, Const) and _same_constant(st.src, c):
            return k
        if st.defined() is v or any(x is v for x in st.operands()) or (a.handlers and st.may_throw):
            return None
    return None


def _same_constant(x: Const, y: Const) -> bool:
    if x.type != y.type or x.kind is not y.kind:
        return False
    if isinstance(x.value, float) and isinstance(y.value, float):  # by bits: 0.0 is not -0.0
        return struct.pack(">d", x.value) == struct.pack(">d", y.value)
    return type(x.value) is type(y.value) and x.value == y.value


def _natural_loop(h: int, latches: list[int], preds: dict[int, list[int]]) -> set[int]:
    """The blocks of the loop headed by ``h``: what reaches a latch without passing through ``h``."""
    body: set[int] = {h}
    todo = list(latches)
    while todo:
        x = todo.pop()
        if x not in body:
            body.add(x)
            todo.extend(preds[x])
    return body


def _loop_edges(succs: dict[int, list[int]], entry: int) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """The latches of each loop header (:func:`_back_edges`) and every block's predecessors."""
    latches: dict[int, list[int]] = {}
    for latch, header in _back_edges(succs, entry):
        latches.setdefault(header, []).append(latch)
    preds: dict[int, list[int]] = {bid: [] for bid in succs}
    for bid, ts in succs.items():
        for t in ts:
            preds[t].append(bid)
    return latches, preds


def _back_edges(succs: dict[int, list[int]], entry: int) -> list[tuple[int, int]]:
    """(latch, header) of each DFS back edge from ``entry``: the loops' back edges in reducible code."""
    back: list[tuple[int, int]] = []
    state = {entry: 1}  # 1 on the DFS stack, 2 done
    stack: list[tuple[int, int]] = [(entry, 0)]
    while stack:
        bid, k = stack[-1]
        if k < len(succs[bid]):
            stack[-1] = (bid, k + 1)
            t = succs[bid][k]
            if state.get(t) == 1:
                back.append((bid, t))
            elif t not in state:
                state[t] = 1
                stack.append((t, 0))
        else:
            state[bid] = 2
            stack.pop()
    return back


def _reducible_merged(blocks: dict[int, Block], entry: int, alias: dict[int, int]) -> bool:
    """Whether the blocks' graph, with each key of ``alias`` dropped and jumps to it sent to its value, is
    reducible from ``entry``."""
    g = nx.DiGraph()
    for b in blocks.values():
        if b.id not in alias:
            g.add_node(b.id)
            g.add_edges_from((b.id, alias.get(t, t)) for t in b.successors())
    return is_reducible(g, alias.get(entry, entry))


def _keep_reducible(blocks: dict[int, Block], entry: int, alias: dict[int, int]) -> dict[int, int]:
    """``alias``, or when merging all of it would make reducible code irreducible, the merges (in ``alias``'s
    order) that keep it reducible. A block before a loop and its equal at the end of the loop's body (a value
    chosen before the loop and again by every iteration: joda-time ``IslamicChronology.getYear``) would give the
    loop a second entry: HotSpot's compilers treat such a loop as irreducible, and the self-check cannot build
    its PEG, so the method would lose its rewrite."""
    if _reducible_merged(blocks, entry, alias) or not _reducible_merged(blocks, entry, {}):
        return alias
    kept: dict[int, int] = {}
    for k, v in alias.items():
        if _reducible_merged(blocks, entry, {**kept, k: v}):
            kept[k] = v
    return kept


def _merge_equal_blocks(blocks: dict[int, Block], entry: int) -> bool:
    """Tail merging: blocks with the same statements (the same bytecode origins, the variables only they use
    renamed consistently), the same handlers and the same successors are one block; jumps to the others go to
    it, repeatedly (merged successors make their predecessors equal), unless that would make the code
    irreducible (:func:`_keep_reducible`). Meaning unchanged: both compute the same from the same values and go
    on to the same place. True when a block was merged."""
    merged_any = False
    while True:
        where: dict[int, set[int]] = {}
        for b in blocks.values():
            for st in b.all_stmts():
                for x in [*st.operands(), st.defined()]:
                    if isinstance(x, Var):
                        where.setdefault(x.id, set()).add(b.id)
        seen: dict[tuple, int] = {}
        alias: dict[int, int] = {}
        for bid in sorted(blocks):
            sig = _block_signature(blocks[bid], where)
            if sig is None:
                continue
            if sig in seen:
                alias[bid] = seen[sig]
            else:
                seen[sig] = bid
        alias = _keep_reducible(blocks, entry, alias)
        if not alias:
            return merged_any
        merged_any = True
        for b in blocks.values():
            b.retarget(lambda t: alias.get(t, t))
        for bid in alias:
            del blocks[bid]


def _stmt_key(st: Stmt) -> tuple | None:
    """A statement as a value (its variables by id, float constants by their bits, its origin included); None for
    one that refers to another statement (a New's ClassInit)."""
    def canon(x: object) -> object:
        if isinstance(x, Stmt):
            raise _NoKey
        if isinstance(x, Var):
            return ("var", x.id)
        if isinstance(x, (list, tuple)):
            return (type(x).__name__, *(canon(y) for y in x))
        if isinstance(x, Const) and isinstance(x.value, float):  # by its bits: 0.0 == -0.0, nan != nan
            return ("const", x.type, x.kind, struct.pack(">d", x.value))
        return x

    try:
        return (type(st).__name__, *(canon(getattr(st, f.name)) for f in fields(st)))
    except _NoKey:
        return None


class _NoKey(Exception):
    """A statement :func:`_stmt_key` does not turn into a value."""


def _merge_equal_tails(blocks: dict[int, Block], entry: int) -> bool:
    """Cross-jumping: a block ``b`` whose last statements are all of another block ``c``'s (the same
    statements, variables and origins), with the same handlers and the same ``goto``, ends by jumping to ``c``
    instead: ``if (s != 0) {...; m++;} else m++;`` as the reverter writes a loop's update on each path of its
    body is javac's ``if (s != 0) {...} m++;`` (JAMA ``orthes``: an ``iinc; goto`` fewer). Meaning unchanged:
    ``c`` computes what the dropped tail computed, from the same variables, and goes on to the same place.
    Kept only where the code stays reducible (:func:`_keep_reducible`'s reason). Blocks in id order, the
    lowest ``c`` first. True when a block changed."""
    keys: dict[int, list[tuple | None]] = {}
    ends: dict[tuple, list[int]] = {}  # (handlers, goto target, last statement) -> blocks ending so, by id
    for bid in sorted(blocks):
        b = blocks[bid]
        if isinstance(b.terminator, Goto) and b.stmts:
            keys[bid] = [_stmt_key(st) for st in b.stmts]
            if keys[bid][-1] is not None:
                ends.setdefault((b.handlers, b.terminator.target, keys[bid][-1]), []).append(bid)
    changed = False
    for group in ends.values():
        for cid in group:
            c = blocks[cid]
            n = len(c.stmts)
            if c.entry_stack or any(k is None for k in keys[cid]):
                continue
            for bid in group:
                b = blocks[bid]
                assert isinstance(b.terminator, Goto) and isinstance(c.terminator, Goto)
                if bid == cid or len(b.stmts) <= n or b.terminator.target != c.terminator.target \
                        or keys[bid][-n:] != keys[cid]:
                    continue
                target = b.terminator.target
                b.terminator.target = cid
                if not _reducible_merged(blocks, entry, {}):
                    b.terminator.target = target
                    continue
                del b.stmts[-n:]
                keys[bid] = keys[bid][:-n]
                changed = True
    return changed


def _merge_renamed_blocks(m: IRMethod) -> bool:
    """Tail merging up to renaming: a region of blocks of ``m`` (loops included) that repeats another up to the
    names of variables is dropped and jumps to it go to the other. Two blocks correspond when they have the same
    statements and handlers once the variables of one are renamed into those of the other, and their targets
    are the same blocks or correspond (:func:`_corresponding`). The renaming is done only when each renamed
    pair is never live at once (Chaitin's test on :func:`~peggy_jvm.ir.coalesce.interference`; parameters are
    never renamed), all of a region's renames or none, so no variable leaves its block (and the operand stack)
    for nothing; nor when the merge would make the code irreducible (:func:`_keep_reducible`). Meaning
    unchanged: a renamed variable is written only where the other is dead, so every read
    sees the value it saw, and a block then runs exactly what the block it stands for ran, going on to blocks
    that do the same. True when a block was dropped."""
    blocks = m.blocks
    fixed = {p.id for p in m.params}
    adj: dict[int, set[int]] | None = None
    members: dict[int, set[int]] = {}  # representative id -> ids merged into it (itself included)
    rename: dict[int, Var] = {}

    def find(v: Var) -> Var:
        while v.id in rename:
            v = rename[v.id]
        return v

    merged_any = False
    budget = [_RENAMED_MERGE_BUDGET]
    shapes: dict[tuple, list[int]] = {}
    for bid in sorted(blocks):
        sig = _block_signature(blocks[bid], {}, [], fixed, [])
        if sig is not None:
            shapes.setdefault(sig, []).append(bid)
    for group in shapes.values():
        for j in range(1, len(group)):
            for i in range(j):
                if budget[0] <= 0:
                    return merged_any
                ref, other = group[i], group[j]
                if ref not in blocks or other not in blocks or other == m.entry:
                    continue
                match = _corresponding(blocks, ref, other, fixed, m.entry, budget)
                if match is None:
                    continue
                bmap, pairs = match
                if _keep_reducible(blocks, m.entry, bmap) != bmap:
                    continue
                if adj is None:
                    adj = interference(m)
                trial = _trial_renames(pairs, find, adj, members)
                if trial is None:
                    continue
                for k, v in trial.items():
                    rename[k] = v
                rename_variables(blocks, find)
                for blk in blocks.values():
                    blk.retarget(lambda t: bmap.get(t, t))
                for dropped in bmap:
                    del blocks[dropped]
                merged_any = True
                break
    return merged_any


_RENAMED_MERGE_BUDGET = 20_000  # block pairs compared per method: the search stays linear in practice


def _corresponding(blocks: dict[int, Block], ref: int, other: int, fixed: set[int], entry: int,
                   budget: list[int]) -> tuple[dict[int, int], list[tuple[Var, Var]]] | None:
    """The blocks reachable from ``other`` that stand for blocks reachable from ``ref`` (dropped block ->
    kept block) and the variable pairs (kept, renamed) that make each pair equal; None when some pair
    differs in more than variables. A dropped block is never kept, nor the method's entry."""
    bmap: dict[int, int] = {other: ref}
    kept: set[int] = {ref}
    pairs: list[tuple[Var, Var]] = []
    work = [(ref, other)]
    while work:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        a, b = work.pop()
        va: list[Var] = []
        vb: list[Var] = []
        ea: list[int] = []
        eb: list[int] = []
        sa = _block_signature(blocks[a], {}, va, fixed, ea)
        sb = _block_signature(blocks[b], {}, vb, fixed, eb)
        if sa is None or sa != sb:
            return None
        pairs.extend(zip(va, vb))
        for ta, tb in zip(ea, eb):
            if ta == tb or bmap.get(tb) == ta:
                continue
            if tb in bmap or tb in kept or ta in bmap or tb == entry:
                return None
            bmap[tb] = ta
            kept.add(ta)
            work.append((ta, tb))
    return bmap, pairs


def _trial_renames(pairs: list[tuple[Var, Var]], find: Callable[[Var], Var], adj: dict[int, set[int]],
                   members: dict[int, set[int]]) -> dict[int, Var] | None:
    """The renames (variable id -> variable) that make each pair one variable, or None when two of them are
    live at once. On success ``adj`` and ``members`` (representative id -> the ids merged into it) are updated:
    a merged variable interferes with what any of its members did."""
    trial: dict[int, Var] = {}
    near: dict[int, set[int]] = {}  # the trial's classes: what interferes with them, and their members
    mem: dict[int, set[int]] = {}

    def tfind(v: Var) -> Var:
        v = find(v)
        while v.id in trial:
            v = trial[v.id]
        return v

    for x, y in pairs:
        a, b = tfind(x), tfind(y)
        if a is b:
            continue
        near_a = near[a.id] if a.id in near else adj.get(a.id, set())
        mem_b = mem[b.id] if b.id in mem else members.get(b.id, {b.id})
        if not near_a.isdisjoint(mem_b):
            return None
        trial[b.id] = a
        near[a.id] = near_a | (near[b.id] if b.id in near else adj.get(b.id, set()))
        mem[a.id] = (mem[a.id] if a.id in mem else members.get(a.id, {a.id})) | mem_b
    for k in trial:
        adj.pop(k, None)
        members.pop(k, None)
    adj.update((k, v) for k, v in near.items() if k not in trial)
    members.update((k, v) for k, v in mem.items() if k not in trial)
    return trial


def _block_signature(b: Block, where: dict[int, set[int]], renamed: list[Var] | None = None,
                     fixed: frozenset[int] | set[int] = frozenset(), exits: list[int] | None = None) -> tuple | None:
    """What a block computes, with the variables only it uses numbered in order of appearance; None for a block
    that takes values on the stack. With ``renamed`` (filled in), every variable but the ``fixed`` ones is
    numbered, each listed once in order of first appearance: the block's shape up to renaming. With ``exits``
    (filled in), the handlers' and the terminator's targets are numbered too, listed in order."""
    if b.entry_stack:
        return None
    local: dict[int, int] = {}
    stmts = b.all_stmts()
    index = {id(st): k for k, st in enumerate(stmts)}
    # its own variables: written in it before any read, and not used anywhere else (a parameter read only here
    # is not one: its value comes from outside)
    own: set[int] = set()
    exposed: set[int] = set()
    for st in stmts:
        exposed.update(x.id for x in st.operands() if isinstance(x, Var) and x.id not in own)
        d = st.defined()
        if d is not None and d.id not in exposed:
            own.add(d.id)

    def canon(x: object) -> object:
        if isinstance(x, Var):
            if renamed is not None and x.id not in fixed:
                if x.id not in local:
                    local[x.id] = len(local)
                    renamed.append(x)
                return ("local", local[x.id], x.type)
            if x.id in own and where.get(x.id) == {b.id}:
                return ("local", local.setdefault(x.id, len(local)), x.type)
            return ("var", x.id)
        if isinstance(x, list):
            return tuple(canon(y) for y in x)
        if isinstance(x, Stmt):  # a New's ClassInit
            return ("stmt", index.get(id(x), -1 - id(x)))
        if isinstance(x, Const) and isinstance(x.value, float):  # by its bits: 0.0 == -0.0, nan != nan
            return ("const", x.type, x.kind, struct.pack(">d", x.value))
        return x

    numbered = exits if exits is not None else []  # exit_ is only called with exits given

    def exit_(t: int) -> tuple:
        numbered.append(t)
        return ("exit", len(numbered) - 1)

    if exits is None:
        out: list[object] = [b.handlers]
    else:
        out = [tuple((h.catch_type, exit_(h.target)) for h in b.handlers)]
    for st in stmts:
        if exits is not None and st is b.terminator:
            out.append((type(st).__name__, *(
                exit_(getattr(st, f.name)) if f.name in _TARGET_FIELDS else
                tuple(exit_(t) for t in getattr(st, "cases")) if f.name == "cases" else
                canon(getattr(st, f.name)) for f in fields(st))))
            continue
        out.append((type(st).__name__, *(canon(getattr(st, f.name)) for f in fields(st))))
    return tuple(out)


_TARGET_FIELDS = frozenset(("target", "if_true", "if_false", "default"))  # a terminator's block ids


def _switches_from_chains(blocks: dict[int, Block]) -> None:
    """A chain of tests of one int variable against constants (``if v == 48 goto A else next``; each next block
    empty, reached only from the test before) becomes one ``switch`` when that is shorter, as the original
    bytecode had it (a PEG tests a switch's keys one by one). The blocks of the chain's inner tests are
    left for the caller to drop (nothing jumps to them any more)."""
    preds: dict[int, int] = {}
    for b in blocks.values():
        for t in set(b.successors()):
            preds[t] = preds.get(t, 0) + 1
    inner: set[int] = set()
    for bid in sorted(blocks):
        if bid in inner:
            continue
        b = blocks[bid]
        v = _switch_test(b)
        if v is None:
            continue
        keys: dict[int, int] = {}
        loads = 0
        cur = b
        visited: set[int] = set()
        while cur.id not in visited:
            visited.add(cur.id)
            test = _switch_test(cur)
            if test is None or test[0] is not v[0] or (cur is not b and (cur.stmts or preds.get(cur.id) != 1
                                                                          or cur.handlers != b.handlers)):
                break
            _, key, hit, miss = test
            keys.setdefault(key, hit)
            loads += _push_size(key)
            if cur is not b:
                inner.add(cur.id)
            default = miss
            cur = blocks[miss]
        if len(keys) < 3:
            continue
        live = {k: t for k, t in keys.items() if t != default}
        chain = loads + 5 * len(keys)  # each test: its load (1-2 bytes), its constant, a 3-byte branch
        lo, hi = min(live, default=0), max(live, default=0)
        table = 16 + 4 * (hi - lo + 1) if live else chain
        lookup = 12 + 8 * len(live)
        if min(table, lookup) + 2 >= chain:
            continue
        b.terminator = Switch(v[0], list(live), list(live.values()), default)


def _values_into_joins(blocks: dict[int, Block], entry: int, params: set[int]) -> None:
    """A join that reads, once, a variable every predecessor sets just before jumping to it (``c ? a : b``, or
    ``c ? a : x.f()``: the last statement of each defines it, a copy or not) receives it on the operand stack: its
    ``entry_stack``, which lowering passes on the stack as javac does when each predecessor can leave it there
    (otherwise it stays in its slot)."""
    preds: dict[int, list[Block]] = {}
    reads: dict[int, list[int]] = {}
    defs: dict[int, int] = {}
    for b in blocks.values():
        for t in set(b.successors()):
            preds.setdefault(t, []).append(b)
        for st in b.all_stmts():
            for x in st.operands():
                if isinstance(x, Var):
                    reads.setdefault(x.id, []).append(b.id)
            d = st.defined()
            if d is not None:
                defs[d.id] = defs.get(d.id, 0) + 1
    handler_targets = {h.target for b in blocks.values() for h in b.handlers}
    for bid, b in blocks.items():
        ps = preds.get(bid, [])
        if bid == entry or bid in handler_targets or len(ps) < 2 or b.entry_stack:
            continue
        lasts = [p.stmts[-1] for p in ps if isinstance(p.terminator, Goto) and p.stmts]
        v = lasts[0].defined() if len(lasts) == len(ps) else None
        if v is None or v.id in params or any(st.defined() is not v or isinstance(st, Catch) for st in lasts) \
                or reads.get(v.id) != [bid] or defs.get(v.id) != len(ps):
            continue
        if not b.stmts and isinstance(b.terminator, (Return, Throw)) and not all(isinstance(st, Copy) for st in lasts):
            continue  # returned where computed (_returns_in_place_of_gotos), as before: no stack to pass
        b.entry_stack = (v,)
        under = _value_under_the_branch(blocks, b, v, ps, reads, defs, params, handler_targets)
        if under is not None:
            below, arms = under
            b.entry_stack = (below, v)
            for arm in arms:
                arm.entry_stack = (below,)


def _value_under_the_branch(blocks: dict[int, Block], join: Block, v: Var, ps: list[Block],
                            reads: dict[int, list[int]], defs: dict[int, int], params: set[int],
                            handler_targets: set[int]) -> tuple[Var, list[Block]] | None:
    """``31 * h + (c ? 1 : 0)``: the join's first statement reads a variable ``t`` and then the value ``v`` its
    predecessors leave on the stack; ``t`` is computed, once, in the block whose test leads to those
    predecessors (each of them its arm, reached from nothing else), and read nowhere else. Then ``t`` too stays
    on the stack, under the test's operands and through the arms, as javac keeps it, instead of a store before
    the test and a load after the join (lowering passes it when every block can, else it keeps its slot).
    Returns ``t`` and the arms."""
    first = join.stmts[0] if join.stmts else join.terminator
    ops = first.operands() if first is not None else []
    if len(ops) < 2 or ops[1] is not v or type(ops[0]) is not Var or ops[0] is v:
        return None
    t = ops[0]
    assert isinstance(t, Var)
    seq = join.all_stmts()
    for k in range(len(seq) - 1):  # the tree ``first`` roots must be what the join pushes first (no `this` of a
        d = seq[k].defined()       # putfield before it): each statement reading the previous one's value first
        if d is None or not any(x is d for x in seq[k + 1].operands()):
            break
        if seq[k + 1].operands()[0] is not d:
            return None
    if t.id in params or reads.get(t.id) != [join.id]:
        return None
    heads = set()
    for p in ps:
        into = [b for b in blocks.values() if p.id in b.successors()]
        if len(into) != 1 or p.entry_stack or p.id in handler_targets or p.id == join.id:
            return None
        heads.add(into[0].id)
    if len(heads) != 1:
        return None
    head = blocks[heads.pop()]
    term = head.terminator
    if not isinstance(term, If) or {term.if_true, term.if_false} != {p.id for p in ps} or len(ps) != 2 \
            or head.id in (join.id, *(p.id for p in ps)):
        return None
    if defs.get(t.id) == 1 and any(st.defined() is t for st in head.stmts):
        return t, ps
    # ``(i < low) | (i > high)``: ``t`` is the value of the join before (``head``), set by each of its
    # predecessors just before it and untouched there; it is received on the stack there and handed on too
    into = [b for b in blocks.values() if head.id in b.successors()]
    if head.entry_stack or head.id in handler_targets or len(into) < 2 or defs.get(t.id) != len(into) \
            or any(x is t for st in head.all_stmts() for x in st.operands()) \
            or not all(isinstance(b.terminator, Goto) and b.stmts and isinstance(b.stmts[-1], Copy)
                       and b.stmts[-1].dst is t for b in into):
        return None
    head.entry_stack = (t,)
    return t, ps


def _returns_in_place_of_gotos(blocks: dict[int, Block], returns: ReturnsInPlace) -> bool:
    """A ``goto`` to a block that only returns (or throws) becomes that return: ``return`` is one byte,
    ``aload_1; areturn`` two, and ``goto`` three; a value a join receives on the stack (``c ? a : b``, see
    :func:`_values_into_joins`) is returned where it is computed. Done only where the copy is no longer than the
    jump (a constant pushed in one or two bytes, a variable, nothing) and the jumping block has the returning
    block's handlers (what the return may throw is caught as before); a block that falls into the returning
    block (the next one in the layout) keeps falling into it; under :attr:`ReturnsInPlace.BEFORE_LOOPS` only a
    returning block no loop reaches. Runs after layout: blocks are in lowering order.
    Meaning unchanged: the returning block has no statement, so it reads what the jumping block leaves. True when
    a jump was replaced."""
    order = sorted(blocks)
    after = {bid: nxt for bid, nxt in zip(order, order[1:])}
    past_loops = _reached_from(blocks, blocks_on_cycles(blocks)) if returns is ReturnsInPlace.BEFORE_LOOPS \
        else set()
    changed = False
    for bid in order:
        b = blocks[bid]
        term = b.terminator
        if not isinstance(term, Goto) or after.get(bid) == term.target:
            continue
        t = blocks[term.target]
        ret = t.terminator
        if t.stmts or not isinstance(ret, (Return, Throw)) or t.handlers != b.handlers or t.id in past_loops:
            continue
        value = ret.value
        if t.entry_stack:
            # the value arrives on the stack: the jumping block computes it last, into the join's variable
            last = b.stmts[-1] if b.stmts else None
            if t.entry_stack != (value,) or not isinstance(last, Copy) or last.dst is not value:
                continue
            b.stmts.pop()
            value = last.src
        elif not _short_operand(value):
            continue
        if isinstance(ret, Return):
            b.terminator = Return(value, origin=ret.origin)
        elif value is not None:  # a throw's operand never is None
            b.terminator = Throw(value, origin=ret.origin)
        changed = True
    return changed


def _reached_from(blocks: dict[int, Block], start: set[int]) -> set[int]:
    """Ids of the blocks ``start``'s blocks reach (themselves included)."""
    seen, work = set(start), list(start)
    while work:
        for t in blocks[work.pop()].successors():
            if t not in seen:
                seen.add(t)
                work.append(t)
    return seen


def _short_operand(x: object) -> bool:
    """Whether pushing ``x`` takes at most two bytes whatever slot or pool index it gets (a variable in a slot
    below 256; nothing; null; an int from -128 to 127)."""
    if x is None or isinstance(x, Var):
        return True
    if not isinstance(x, Const) or x.kind is not ConstKind.VALUE:
        return False
    if x.type.kind is Kind.REF:
        return x.value is None
    return x.type == INT and isinstance(x.value, int) and _push_size(x.value) <= 2


def _switch_test(b: Block) -> tuple[Var, int, int, int] | None:
    """(v, key, target when v == key, target otherwise) of a block ending in an int equality test of a
    variable against a constant."""
    t = b.terminator
    if not isinstance(t, If) or t.cond not in (Cond.EQ, Cond.NE):
        return None
    a, c = (t.a, t.b) if isinstance(t.b, Const) else (t.b, t.a)
    if not isinstance(a, Var) or a.type.kind is not Kind.INT or not isinstance(c, Const) or c.type != INT \
            or not isinstance(c.value, int):
        return None
    hit, miss = (t.if_true, t.if_false) if t.cond is Cond.EQ else (t.if_false, t.if_true)
    return a, c.value, hit, miss


def _push_size(key: int) -> int:
    return 1 if -1 <= key <= 5 else 2 if -128 <= key <= 127 else 3


def _thread_known_tests(blocks: dict[int, Block]) -> bool:
    """Jump threading: a goto into an empty test of values its block has just set to constants (a branch
    condition carried out of a loop as a 0/1 variable) goes straight to the arm the test takes. Meaning
    unchanged: the test would take that arm. True when a jump changed."""
    changed = False
    looping: set[int] | None = None
    for b in blocks.values():
        term = b.terminator
        seen = {b.id}
        while isinstance(term, Goto) and term.target not in seen:
            seen.add(term.target)
            arm = _known_arm(b, blocks[term.target])
            if arm is None:
                break
            if looping is None:
                looping = blocks_on_cycles(blocks)
            if term.target in looping:  # a loop's own test: skipping it would enter the loop past its header
                break
            term.target, changed = arm, True
    return changed


def _known_arm(b: Block, test: Block) -> int | None:
    """The arm ``test`` (a block with no statements, ending in an int ``if``) takes after ``b``, when ``b``
    leaves both operands constant; None when that is not known."""
    term = test.terminator
    if test.stmts or not isinstance(term, If):
        return None
    vals = []
    for x in (term.a, term.b):
        end = len(b.stmts)
        while isinstance(x, Var):  # through copies, back to a constant set in b
            k = next((k for k in range(end - 1, -1, -1) if getattr(b.stmts[k], "dst", None) == x), None)
            st = b.stmts[k] if k is not None else None
            if k is None or not isinstance(st, Copy):  # not set here, or not by a copy
                return None
            x, end = st.src, k
        if x.type != INT or not isinstance(x.value, int):
            return None
        vals.append(x.value)
    return term.if_true if HOLDS[term.cond](*vals) else term.if_false


def _constant_test(term: If) -> bool | None:
    """The outcome of an int ``if`` on two constants, or of a test of ``null`` against ``null`` (a path where a
    reference is known to be null tests it again), else None."""
    a, b = term.a, term.b
    if isinstance(a, Const) and isinstance(b, Const) and a.type == INT and b.type == INT \
            and isinstance(a.value, int) and isinstance(b.value, int):
        return HOLDS[term.cond](a.value, b.value)
    if _is_null(a) and _is_null(b) and term.cond in (Cond.EQ, Cond.NE):
        return term.cond is Cond.EQ
    return None


def _is_null(x: object) -> bool:
    return isinstance(x, Const) and x.kind is ConstKind.VALUE and x.type.kind is Kind.REF and x.value is None


def _handled_by(b: Block) -> tuple:
    return tuple((h.catch_type, h.target) for h in b.handlers)


def _reachable_blocks(blocks: dict[int, Block], entry: int) -> dict[int, Block]:
    return {k: blocks[k] for k in sorted(_reached_from(blocks, {entry}))}


#: statements a read may be moved past when they cannot throw (``may_throw``: not a division): they touch no
#: memory and have no effect but their variable
_NO_MEMORY = (Binary, Unary, Copy)
#: the reads :func:`_reads_to_their_use` moves
_READS = (GetField, GetStatic, ArrayLoad, ArrayLength)


def _reads_to_their_use(blocks: dict[int, Block], entry: int, m: IRMethod) -> bool:
    """A read of the heap (``getfield``, ``getstatic`` of the method's own class, an array element or length)
    whose value is read only later, in one block, moved down to just before its reader, as javac computes it in
    the expression that uses it: the reverter emits effects, reads among them, in sigma order first, and their
    values waited in locals (jsoup ``Tag.hashCode``: seven ``getfield``s, then ``31 * h + (f ? 1 : 0)`` seven
    times, each value stored and loaded back). Returns whether anything moved.

    Why the move keeps the meaning. Let ``r`` (defining ``d``, defined nowhere else) be moved from position ``p``
    (in block ``A``) to ``q`` (in block ``B``, before the first reader of ``d``; every reader of ``d`` is in
    ``B`` after ``q``). The code between ``p`` and ``q`` is: the statements after ``p`` in ``A``, every
    statement and terminator of the blocks ``R`` on a path from ``A`` to ``B``, and the statements of ``B``
    before ``q``. Required:

    - one entry, no cycle, no way out: every predecessor of ``B`` and of a block of ``R`` is ``A`` or in ``R``,
      every successor of ``A`` and of a block of ``R`` is in ``R`` or is ``B``, ``R`` holds no cycle and
      neither ``A`` nor ``B`` is in ``R``, no block from ``A`` to ``B`` has exception handlers;
    - the code between touches no memory, has no effect but on its own variables and cannot throw
      (``_NO_MEMORY``, less what ``may_throw``: arithmetic, conversions and copies; no field or array-element
      access, call, allocation (a class initializer), monitor, store of any kind, division), and defines
      neither ``d`` nor the variables ``r`` reads.

    Then every execution that reaches ``p`` goes on, through pure register computation, to ``q``, and every one
    that reaches ``q`` came from ``p`` along such a path: ``r`` runs exactly in the executions it ran in before
    (never skipped: a volatile read keeps its synchronization), reads the same location (the same object, field or
    element, index), which holds the same value there in this thread (no access to memory in between), and no
    other memory action of this thread is reordered with it, so the Java memory model's orders (volatile or
    monitor synchronization, ``r`` itself volatile) are unchanged. If ``r`` throws (a null receiver, an index out
    of bounds, the initializer of the class declaring a static field), it is still the first exception, leaving
    the method (no handler) from the same source line (the statement keeps its origin); what the code between
    computed in the meantime was only locals of this frame, which the exception discards.

    Classes are taken to link as compiled (a field that no longer resolves fails at its new place), as every
    pass that drops an unused read does.
    """
    defs: Counter[int] = Counter()
    readers: dict[int, list[int]] = {}
    for b in blocks.values():
        for st in b.all_stmts():
            d = st.defined()
            if d is not None:
                defs[d.id] += 1
            for x in st.operands():
                if type(x) is Var:
                    readers.setdefault(x.id, []).append(b.id)
    preds: dict[int, list[int]] = {bid: [] for bid in blocks}
    for b in blocks.values():
        for t in b.successors():
            preds[t].append(b.id)
    moved = False
    for a in blocks.values():
        if a.handlers or a.entry_stack:
            continue
        k = len(a.stmts) - 1
        while k >= 0:
            st = a.stmts[k]
            k -= 1
            d = st.defined()
            if not isinstance(st, _READS) or d is None or defs[d.id] != 1 or d in m.params \
                    or (isinstance(st, GetStatic) and st.field.owner != m.class_name):
                continue
            where = set(readers.get(d.id, []))
            if len(where) != 1:
                continue
            # an operand computed just for it (``a[i + k]``'s index) would be left behind, waiting in a local (a
            # read, ``this.a`` of ``this.a[i]``, follows it: it is looked at next, read only there)
            if any(type(x) is Var and len(readers[x.id]) == 1
                   and any(y.defined() is x and not isinstance(y, _READS) for y in a.stmts) for x in st.operands()):
                continue
            target = _read_target(blocks, a, st, where.pop(), preds)
            if target is None or (target[0] is not a and _read_before_a_conditional(blocks, preds, target[0], d)):
                continue
            b, at = target
            a.stmts.remove(st)
            if b is a:
                at -= 1  # the statement left from above
            b.stmts.insert(at, st)
            for x in st.operands():  # a read it reads (``a[i]`` of ``a = this.f``) is now read there
                if type(x) is Var:
                    readers[x.id].remove(a.id)
                    readers[x.id].append(b.id)
            moved = True
    return moved


def _read_before_a_conditional(blocks: dict[int, Block], preds: dict[int, list[int]], b: Block, d: Var) -> bool:
    """Whether join ``b`` begins with a tree that reads ``d`` and then the value each of its predecessors sets last
    (``X[i][j] = i == j ? 1.0 : 0.0``, ``X[i]`` being ``d``): javac reads ``d`` before the test, and lowering keeps
    it on the stack through the arms (``ir/lower._Lowerer.plan_leads``); moved into the join, it would wait in a
    local for the conditional's value instead (JAMA ``Matrix.identity``: 6 bytes)."""
    ps = [blocks[p] for p in preds[b.id]]
    if len(ps) < 2 or any(not p.stmts for p in ps):
        return False
    v = ps[0].stmts[-1].defined()
    if v is None or any(p.stmts[-1].defined() is not v for p in ps):
        return False
    seen = False
    for st in b.all_stmts():  # in the order the tree pushes them (``v & d``: the read after the test, as javac)
        for x in st.operands():
            seen = seen or x is d
            if x is v:
                return seen
        if st.defined() is None:
            return False
    return False


def _read_target(blocks: dict[int, Block], a: Block, r: Stmt, bid: int, preds: dict[int, list[int]]
                 ) -> tuple[Block, int] | None:
    """Where :func:`_reads_to_their_use` moves ``r`` (in ``a``, read in block ``bid`` only): the block and the
    index to insert it at (before its removal from ``a``), or None when it stays (see there)."""
    b = blocks[bid]
    if b.handlers or b.entry_stack:
        return None
    d = r.defined()
    assert d is not None
    seq = b.all_stmts()
    first = next(k for k, st in enumerate(seq) if any(x is d for x in st.operands()))
    if b is a and first <= a.stmts.index(r) + 1:
        return None  # it is just before its reader (or in its block, read before: a loop's next value)
    # the operand trees that the reader pushes after ``d`` come after it too
    reader = seq[first]
    ops = reader.operands()
    later = {x.id for x in ops[ops.index(d) + 1:] if type(x) is Var}
    at = first
    while at > 0 and (e := seq[at - 1].defined()) is not None and e.id in later and at - 1 < len(b.stmts):
        later |= {x.id for x in seq[at - 1].operands() if type(x) is Var}
        at -= 1
    if b is a and at <= a.stmts.index(r) + 1:
        return None
    inputs = {x.id for x in r.operands() if type(x) is Var}
    between: list[Stmt] = []
    region: set[int] = set()
    if b is a:
        between = a.stmts[a.stmts.index(r) + 1:at]
    else:
        # the blocks on a path from ``a`` to ``b``: reached from ``a`` without passing ``a`` or ``b``
        region = set()
        work = [t for t in a.successors() if t != bid]
        while work:
            t = work.pop()
            if t in region or t == a.id:
                continue
            region.add(t)
            work.extend(x for x in blocks[t].successors() if x != bid)
        if a.id in region or any(p != a.id and p not in region for x in [bid, *region] for p in preds[x]):
            return None
        if _has_cycle(blocks, region):
            return None
        for x in sorted(region):
            xb = blocks[x]
            if xb.handlers or xb.entry_stack or isinstance(xb.terminator, (Return, Throw)):
                return None
            between.extend(xb.all_stmts())
        between.extend(a.stmts[a.stmts.index(r) + 1:])
        assert a.terminator is not None
        between.append(a.terminator)
        between.extend(seq[:at])
    for st in between:
        if isinstance(st, (Goto, If, Switch)):
            continue
        if not isinstance(st, _NO_MEMORY) or st.may_throw:
            return None
        e = st.defined()
        if e is not None and (e is d or e.id in inputs):
            return None
    if b is not a and not all(t in region or t == bid for x in [a.id, *region] for t in blocks[x].successors()):
        return None
    return b, at


def _has_cycle(blocks: dict[int, Block], region: set[int]) -> bool:
    """Whether the blocks of ``region`` hold a cycle among themselves."""
    state: dict[int, int] = {}  # 1: on the path, 2: done

    def visit(n: int) -> bool:
        state[n] = 1
        for t in blocks[n].successors():
            if t in region and (state.get(t) == 1 or (t not in state and visit(t))):
                return True
        state[n] = 2
        return False
    return any(n not in state and visit(n) for n in sorted(region))
