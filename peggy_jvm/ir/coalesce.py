"""Copy coalescing and statement sinking: the IR the reverter builds, put in the shape javac's code lifts to.

What this module owns
    :func:`coalesce_copies`, run on an :class:`~.nodes.IRMethod` in place before lowering. The reverter names
    every value with a fresh variable and assigns a loop's variables by parallel copies (``t = i + 1; ...;
    i = t``); lowering keeps a variable on the operand stack only when it is a single-use temporary of one
    block used in expression order. This pass removes the copies that make the difference:

    * *propagation*: ``t = s`` where ``t`` has no other definition and every read of ``t`` sees the same value
      of ``s`` (``s`` is never assigned in the method, or all reads are later in the same block with no
      assignment of ``s`` between): the reads use ``s`` and the copy goes;
    * *coalescing*: ``t = e; ...; v = t`` in one block, ``t`` defined and read only there, ``v`` neither read
      nor written between: ``v = e`` and the copy goes. A loop variable's update then writes the variable
      itself (``i = i + 1``, which lowering turns into ``iinc``) and a back edge keeps one slot per variable;
    * *constants second*: ``c + x`` -> ``x + c`` for commutative int/long operators, ``c < x`` -> ``x > c``
      for int tests (javac's order; ``i = 1 + i`` becomes ``iinc``, ``0 > x`` becomes ``iflt``), but for a
      constant ``ldc`` loads;
    * *stepping in place*: ``t = v + c`` in one block and ``v = t`` in a later one it dominates, ``v`` written on
      no path between: the copy becomes ``v = v + c`` (``iinc``), so ``t`` is no longer carried to the back
      edge in a local of its own (see :func:`_step_in_place`);
    * *recomputing a step*: ``t = v + c; ...; S(t); v = t`` while an expression tree computed before ``t`` is
      still open gives S its own ``v + c``, so the update can follow the tree (see :func:`_recompute_steps`);
    * *rebasing counters*: a loop counter ``t`` (``t = c0`` before the loop, ``t = t + s`` at its back edges)
      read only by ``d = a - t`` (or ``a + t``) in the loop's header, ``a`` invariant in the loop: ``d`` becomes
      the counter (``d = a - c0`` before the loop, ``d = d - s`` where ``t`` stepped) and ``t`` goes (see
      :func:`_rebase_counters`);
    * *doubling*: ``x + x`` of an int or long read nowhere else -> ``x << 1``, so ``x`` stays on the stack;
    * *dead code*: a statement without effects whose result nothing reads goes;
    * *merging*: variables joined by a copy and never live at once become one (Chaitin's coalescing), so a
      value carried into an inner loop and back keeps one variable (merged with a parameter, it is the
      parameter);
    * *tree order*: the expression trees a statement reads are put in the order of its operands when they are
      the statements just before it, so lowering pushes them in place (effects keep their order);
    * *sinking*: an update of a variable from variables and constants that cannot throw
      (``i = i + 1``) moves down its block, past statements that neither read nor write what it touches, to
      the last point where no expression tree is open, so the trees of the statements it passes are not
      split (javac puts a loop counter's ``iinc`` just before the back edge).

    It also owns :func:`interference` (statement-level liveness), which lowering uses to share slots,
    :func:`rename_variables`, which merges variables the caller found never live at once, and
    :func:`recompute_invariants`, which the reverter runs once its loops have their final shape: a hoisted
    invariant computed again where it is read, as javac does, when that is shorter and no reader is in an
    innermost loop.

Inputs: an IRMethod whose blocks carry no ``entry_stack`` (values are passed in variables, as the reverter
does); IR lifted from bytecode is left alone by the caller.
Invariants: meaning unchanged. Every read sees the value it saw before; statements that can throw or have
effects keep their order among themselves; a statement without effects moves past one that can throw only when
no handler can see the difference (its result is a temporary of the block, or the block has no handlers);
statements never cross block boundaries.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from typing import Callable
from dataclasses import fields

import networkx as nx

from .cfg import natural_loops
from .nodes import INT, Binary, Block, ClassInit, Cond, Const, Copy, If, IRMethod, Kind, Stmt, Unary, Var
from .opmap import const_opcode

_MAX_ROUNDS = 8


def coalesce_copies(m: IRMethod) -> None:
    """Propagate, coalesce and sink (see the module docstring) until nothing changes."""
    if any(b.entry_stack for b in m.blocks.values()):
        return
    _constants_second(m)
    _simplify(m)
    if _rebase_counters(m):
        _simplify(m)  # the counter's start `d = a` is a copy
    _merge_copy_related(m)
    _doublings_as_shifts(m)
    temps = _temporaries(m)
    for b in m.blocks.values():
        _order_trees(b, temps)
        _sink_updates(b, temps)


def _simplify(m: IRMethod) -> None:
    for _ in range(_MAX_ROUNDS):
        changed = _recompute_steps(m)
        changed = _step_in_place(m) or changed
        changed = _propagate(m) or changed
        changed = _coalesce(m) or changed
        changed = _drop_dead(m) or changed
        if not changed:
            break


def _rebase_counters(m: IRMethod) -> bool:
    """A loop counter read only to offset a value the loop does not change, replaced by the offset value:
    ``t = c0`` before the loop, ``d = a - t`` (or ``a + t``, ``t + a``, ``t - a``) in its header, ``t = t + s``
    in blocks that then jump back to the header, and ``t`` read nowhere else, become ``d = a - c0`` before the
    loop and ``d = d - s`` wherever ``t`` was stepped (``iinc``), ``d``'s computation in the header gone
    (extraction may count a loop up from zero where the source counted down from ``n - 1``: ``k = n - 1 - t``,
    an ``iload; iconst_1; isub; iload; isub; istore; iload`` per iteration for javac's ``iload``). ``a`` is a
    constant, a variable the loop never writes, or one computed just for ``d`` in the header by an operation
    that cannot throw from such operands (moved before the loop with it).
    Meaning unchanged: ``a`` holds one value throughout the loop, so ``d`` enters the header holding
    ``a - t`` for the ``t`` the original has there (two's complement: ``a - (t + s) = (a - t) - s`` exactly),
    and ``d`` is read nowhere between ``t``'s step and the header, where only the original's ``d`` lags.
    True when a counter was rebased."""
    g = nx.DiGraph()
    for b in m.blocks.values():
        g.add_node(b.id)
        g.add_edges_from((b.id, t) for t in b.successors())
    forest = natural_loops(g, m.entry)
    params = {p.id for p in m.params}
    changed = False
    defs, uses = _counts(m)
    for loop in forest:
        if _rebase_one(m, loop.header, loop.body, defs, uses, params, list(g.predecessors(loop.header))):
            changed = True
            defs, uses = _counts(m)  # only after a change: counting every loop over the whole method is quadratic
    return changed


def _rebase_one(m: IRMethod, hid: int, body: frozenset[int], defs: Counter[int], uses: Counter[int],
                params: set[int], preds: list[int]) -> bool:
    """:func:`_rebase_counters` for the loop with header ``hid``, blocks ``body`` and the header's predecessors
    ``preds`` (in block order; a rebase changes no jump)."""
    h = m.blocks[hid]
    outside = [m.blocks[p] for p in preds if p not in body]
    if len(outside) != 1 or outside[0].successors() != [hid] or outside[0].handlers or h.handlers:
        return False
    pre = outside[0]
    written = {d.id for bid in body for st in m.blocks[bid].all_stmts() if (d := st.defined()) is not None}
    for k, st in enumerate(h.stmts):
        if not (isinstance(st, Binary) and st.op in ("add.i", "sub.i") and st.dst.id not in params
                and defs[st.dst.id] == 1 and not any(_reads(x, st.dst) for x in h.stmts[:k])):
            continue
        for t, a in ((st.a, st.b), (st.b, st.a)):
            if not isinstance(t, Var) or t is a or t.id in params:
                continue
            init = next((x for x in pre.stmts if _writes(x, t)), None)
            if not (isinstance(init, Copy) and isinstance(init.src, Const) and isinstance(init.src.value, int)):
                continue
            steps = _counter_steps(m, body, hid, t, st.dst)
            if not steps or defs[t.id] != 1 + len(steps) or uses[t.id] != 1 + len(steps):
                continue
            hoisted = _invariant_feed(h, k, a, written, defs, uses)
            if hoisted is False:
                continue
            sign = -1 if st.op == "sub.i" and t is st.b else 1
            start = [x for x in pre.stmts if x is not init]
            if isinstance(hoisted, Stmt):
                h.stmts.remove(hoisted)
                start.append(hoisted)
            c0 = init.src.value
            first: Stmt
            if c0 == 0 and (st.op == "add.i" or sign < 0):
                first = Copy(st.dst, a, origin=st.origin)
            else:
                first = Binary(st.dst, st.op, *((a, init.src) if t is st.b else (init.src, a)), origin=st.origin)
            pre.stmts = [*start, first]
            h.stmts.remove(st)
            for block, j, step in steps:
                delta = sign * step
                block.stmts[j] = Binary(st.dst, "add.i" if delta >= 0 else "sub.i", st.dst,
                                        Const(st.dst.type, abs(delta)), origin=block.stmts[j].origin)
            return True
    return False


def _counter_steps(m: IRMethod, body: frozenset[int], hid: int, t: Var, d: Var) -> list[tuple[Block, int, int]]:
    """(block, index, s) of each write of ``t`` in the loop: each must be ``t = t + s`` (an int constant s,
    |s| < 2**15) in a block of the loop that then jumps back to the header, with no read of ``d`` after it;
    empty when one is not."""
    found = []
    for bid in sorted(body):
        b = m.blocks[bid]
        for j, x in enumerate(b.stmts):
            if not _writes(x, t):
                continue
            if bid == hid or b.handlers or b.successors() != [hid] or \
                    not (isinstance(x, Binary) and x.op in ("add.i", "sub.i") and x.a is t
                         and isinstance(x.b, Const) and isinstance(x.b.value, int) and abs(x.b.value) < 2 ** 15) \
                    or any(_reads(y, d) for y in b.all_stmts()[j + 1:]):
                return []
            found.append((b, j, x.b.value if x.op == "add.i" else -x.b.value))
    return found


def _invariant_feed(h: Block, k: int, a: object, written: set[int], defs: Counter[int], uses: Counter[int]
                    ) -> Stmt | None | bool:
    """How operand ``a`` of statement k of the loop header ``h`` can be had before the loop: None when the loop
    never writes it (or it is a constant), the statement of ``h`` before k that computes it for statement k
    alone (one operation that cannot throw, on constants and variables the loop never writes) to be moved
    there, else False."""
    if isinstance(a, Const) or (isinstance(a, Var) and a.id not in written):
        return None
    assert isinstance(a, Var)
    src = next((x for x in h.stmts[:k] if _writes(x, a)), None)
    if src is None or not isinstance(src, (Binary, Unary)) or src.may_throw or defs[a.id] != 1 or uses[a.id] != 1:
        return False
    if any(isinstance(o, Var) and (o.id in written or any(_writes(x, o) for x in h.stmts)) for o in src.operands()):
        return False
    return src


def _reads(st: Stmt, v: Var) -> bool:
    return any(x is v for x in st.operands())


def _writes(st: Stmt, v: Var) -> bool:
    return st.defined() is v


def _counts(m: IRMethod) -> tuple[Counter[int], Counter[int]]:
    """Definitions and reads of every variable, by id (parameters count as defined once)."""
    defs: Counter[int] = Counter(p.id for p in m.params)
    uses: Counter[int] = Counter()
    for b in m.blocks.values():
        for st in b.all_stmts():
            d = st.defined()
            if d is not None:
                defs[d.id] += 1
            for x in st.operands():
                if isinstance(x, Var):
                    uses[x.id] += 1
    return defs, uses


def _substitute(st: Stmt, old: Var, new: object) -> None:
    """Replace reads of ``old`` in ``st`` by ``new`` (the destination is not a read)."""
    for f in fields(st):
        if f.name in ("dst", "origin"):
            continue
        val = getattr(st, f.name)
        if val is old:
            setattr(st, f.name, new)
        elif isinstance(val, list) and any(x is old for x in val):
            setattr(st, f.name, [new if x is old else x for x in val])


def _each_copy(m: IRMethod, rewrite) -> bool:
    """Offer every copy of a variable into one of its kind to ``rewrite(block, index, copy, defs, uses,
    params)``, which returns True when it removed the copy. True when some copy was removed."""
    defs, uses = _counts(m)
    params = {p.id for p in m.params}
    changed = False
    for b in m.blocks.values():
        k = 0
        while k < len(b.stmts):
            st = b.stmts[k]
            if isinstance(st, Copy) and isinstance(st.src, Var) and st.src is not st.dst \
                    and st.src.type.kind is st.dst.type.kind and rewrite(b, k, st, defs, uses, params):
                changed = True
                continue
            k += 1
    return changed


def _propagate(m: IRMethod) -> bool:
    return _each_copy(m, lambda *args: _propagate_copy(m, *args))


def _propagate_copy(m: IRMethod, b: Block, k: int, st: Copy, defs: Counter[int], uses: Counter[int],
                    params: set[int]) -> bool:
    t, s = st.dst, st.src
    assert isinstance(s, Var)
    if t.id in params or defs[t.id] != 1:
        return False
    if s.id in params and defs[s.id] == 1:
        # s never changes: every read of t (all dominated by this copy) sees s
        for bb in m.blocks.values():
            for x in bb.all_stmts():
                _substitute(x, t, s)
    elif _local_reads_see(b, k, t, s, uses[t.id]):
        for x in b.all_stmts()[k + 1:]:
            _substitute(x, t, s)
    else:
        return False
    del b.stmts[k]
    return True


def _local_reads_see(b: Block, k: int, t: Var, s: Var, reads: int) -> bool:
    """All ``reads`` reads of ``t`` come after statement k of ``b`` with ``s`` unchanged until the last one."""
    rest = b.all_stmts()[k + 1:]
    seen = 0
    for x in rest:
        n = sum(1 for y in x.operands() if y is t)
        seen += n
        if seen == reads:
            return True  # this statement reads s before it may write it
        if _writes(x, s) or _writes(x, t):
            return False
    return False


def _coalesce(m: IRMethod) -> bool:
    return _each_copy(m, _coalesce_copy)


def _coalesce_copy(b: Block, k: int, st: Copy, defs: Counter[int], uses: Counter[int], params: set[int]) -> bool:
    t, v = st.src, st.dst
    assert isinstance(t, Var)
    if t.id in params or defs[t.id] != 1 or uses[t.id] != 1:
        return False
    j = next((j for j in range(k - 1, -1, -1) if _writes(b.stmts[j], t)), None)
    if j is None:
        return False
    if not _can_retarget(b, j, k, v) and _can_move_down(b, j, k, defs, uses):
        # ``t = i + 1; s = s + i; i = t``: the update moves down to its copy (i is read between)
        b.stmts.insert(k - 1, b.stmts.pop(j))
        j = k - 1
    if not _can_retarget(b, j, k, v):
        return False
    b.stmts[j].dst = v  # type: ignore[attr-defined]  # statement j defines a variable, held in its dst field
    del b.stmts[k]
    return True


def _recompute_steps(m: IRMethod) -> bool:
    """``t = v + c; ...; S(t); ...; v = t`` where a temporary computed before ``t`` is read after it (a statement's
    operand trees are open there): merged with ``v``, the update would come before those trees are finished and
    lowering would store them in locals (``a[i + 1] = e[i]``, ``s += a[i] * k + a[i + 1]`` in a loop). S gets
    its own ``t' = v + c`` (javac's ``iload; iconst; iadd``), so ``t`` is left with its copy and becomes
    ``v = v + c`` (``iinc``) after S. Only for an int step of -1..5 read by a few statements of the copy's block.
    Meaning unchanged: ``v`` is not written between ``t``'s definition and the copy, so ``v + c`` there is
    ``t``."""
    temps = _temporaries(m)
    _, uses = _counts(m)
    next_id = max((v.id for v in [*m.variables, *m.params]), default=-1) + 1
    changed = False
    for b in m.blocks.values():
        for k, st in enumerate(b.stmts):
            if not (isinstance(st, Copy) and isinstance(st.src, Var) and st.src is not st.dst):
                continue
            t, v = st.src, st.dst
            j = next((j for j in range(k - 1, -1, -1) if _writes(b.stmts[j], t)), None)
            d = b.stmts[j] if j is not None else None
            if not (isinstance(d, Binary) and d.op in ("add.i", "sub.i") and d.a is v and isinstance(d.b, Const)
                    and isinstance(d.b.value, int) and -1 <= d.b.value <= 5):
                continue
            assert j is not None  # d is j's statement
            between = b.stmts[j + 1:k]
            readers = [x for x in between if _reads(x, t)]
            if not readers or len(readers) > 2 or any(_writes(x, v) for x in between) or \
                    uses[t.id] != 1 + sum(1 for x in readers for o in x.operands() if o is t):
                continue
            if not _tree_open_across(b, j, temps):
                continue
            for x in readers:
                fresh = Var(next_id, t.type, f"p{next_id}")
                next_id += 1
                m.variables.append(fresh)
                b.stmts.insert(b.stmts.index(x), Binary(fresh, d.op, v, d.b))
                _substitute(x, t, fresh)
            changed = True
            break  # the block's statements moved: its other copies are seen next round
    return changed


def _step_in_place(m: IRMethod) -> bool:
    """``t = v + c`` (or ``v - c``; int, ``c`` an ``iinc`` constant) in block B and ``v = t`` in another block C:
    the copy becomes ``v = v + c`` when ``v`` still holds, at the copy, the value ``t`` was computed from. The
    reverter shares ``k + 1`` between an inner loop's start and the outer counter's next value (JAMA's
    ``LUDecomposition.solve``: ``for (k...) for (i = k + 1; ...)``); kept in a local until the back edge, it
    was ``iadd; dup; istore t; istore i`` and ``iload t; istore k`` for javac's ``iinc k, 1`` (4 bytes and
    three instructions more per outer iteration).
    Meaning unchanged, given: B dominates C (every path to the copy computed ``t``); nothing in B before ``t``'s
    definition can throw to a handler (entering B again means computing ``t`` again from the ``v`` of then);
    ``t`` has no other definition; and on every path from ``t``'s definition to the copy that does not enter B
    again, nothing writes ``v`` (B after the definition, the blocks between, C before the copy), and C is not
    reached again from itself without entering B (the copy would step ``v`` twice). Only where something on
    those paths other than a copy reads ``v`` (``t`` and ``v`` live at once, so they cannot share a slot);
    otherwise merging them does better. Every copy of one ``t`` into ``v`` changes, or none. True when a copy
    changed."""
    defs, _ = _counts(m)
    where: dict[int, tuple[int, int]] = {}  # variable id -> (block id, index) of its one definition
    for b in m.blocks.values():
        for j, st in enumerate(b.stmts):
            w = st.defined()
            if w is not None and defs[w.id] == 1:
                where[w.id] = (b.id, j)
    succ: dict[int, list[int]] = {}  # the block graph, built at the first candidate (most methods have none)
    pred: dict[int, list[int]] = {}

    def build() -> None:
        for blk in m.blocks.values():
            succ[blk.id] = blk.successors()
            pred.setdefault(blk.id, [])
            for y in succ[blk.id]:
                pred.setdefault(y, []).append(blk.id)

    def reach(starts: list[int], edges: dict[int, list[int]], avoid: int) -> set[int]:
        seen: set[int] = set()
        todo = [x for x in starts if x != avoid]
        while todo:
            x = todo.pop()
            if x in seen:
                continue
            seen.add(x)
            todo.extend(y for y in edges.get(x, ()) if y != avoid and y not in seen)
        return seen

    def steps_in_place(c: Block, k: int, t: Var, v: Var) -> bool:
        """The copy ``v = t`` at ``c.stmts[k]`` may become ``v = v + c`` (see above)."""
        bid, j = where[t.id]
        b = m.blocks[bid]
        if bid == c.id or (b.handlers and any(x.may_throw for x in b.stmts[:j])):
            return False
        if not succ:
            build()
        if m.entry != bid and c.id in reach([m.entry], succ, bid):
            return False  # B does not dominate C
        after = reach(succ[bid], succ, bid)  # where control goes from B without entering it again
        if c.id not in after or c.id in reach(succ[c.id], succ, bid):
            return False
        between = after & reach(pred[c.id], pred, bid)
        path = [*b.stmts[j + 1:], *c.stmts[:k], *(x for i in between if i != c.id for x in m.blocks[i].stmts)]
        if any(_writes(x, v) for x in path):
            return False
        ends = [e for i in between if (e := m.blocks[i].terminator) is not None]
        # ``v`` dead while ``t`` lives, or only copied (into a variable merging may make it): merging
        # (:func:`_merge_copy_related`) steps ``v`` where ``t`` is computed and drops the copy, the shorter code
        # (BenchKernels.crc32: the outer step before the inner loop, whose exit then jumps straight to the outer
        # test; insertionSort: ``j = i - 1`` one slot with the outer counter)
        return any(_reads(x, v) and not isinstance(x, Copy) for x in [*path, *b.all_stmts()[j + 1:], *ends])

    params = {p.id for p in m.params}
    # every copy ``v = t`` of one step, all changed or none: one left a copy keeps ``t`` in a slot of its own
    # anyway, and its block no longer equals the changed ones (BenchKernels.jacobi2d: a loop's "inner loop
    # runs no iteration" exit and its latch, one block before, became two, 293 -> 305 bytes)
    groups: dict[tuple[int, int], list[tuple[Block, int, Binary]]] = {}
    refused: set[tuple[int, int]] = set()
    for c in m.blocks.values():
        for k, st in enumerate(c.stmts):
            if not (isinstance(st, Copy) and isinstance(st.src, Var) and st.src is not st.dst
                    and st.dst.type.kind is Kind.INT and st.src.id not in params and st.src.id in where):
                continue
            t, v = st.src, st.dst
            bid, j = where[t.id]
            d = m.blocks[bid].stmts[j]
            if not (isinstance(d, Binary) and d.op in ("add.i", "sub.i") and d.a is v and isinstance(d.b, Const)
                    and isinstance(d.b.value, int) and -128 <= (d.b.value if d.op == "add.i" else -d.b.value) <= 127):
                continue
            key = (t.id, v.id)
            groups.setdefault(key, []).append((c, k, d))
            if key not in refused and not steps_in_place(c, k, t, v):
                refused.add(key)
    changed = False
    for key, copies in groups.items():
        if key in refused:
            continue
        for c, k, d in copies:
            step = d.a
            assert isinstance(step, Var)  # the pattern above: d is ``t = v op c``
            c.stmts[k] = Binary(step, d.op, step, d.b, origin=c.stmts[k].origin)
            changed = True
    return changed


def recompute_invariants(m: IRMethod) -> bool:
    """A value hoisted out of loops that javac would compute where it is read: ``t = x op c`` (or ``op x``; one
    instruction that cannot throw, from constants and parameters the method never writes) read by few
    statements, none of them in the method's innermost loops, each reading it once. Each reader gets its own
    ``t' = x op c`` just before it (a tree lowering keeps on the stack) and ``t`` goes: fewer bytes than the
    store, the slot and its loads (``(double) n`` in an outer loop of BenchKernels.trisolv: ``iload_2; i2d``
    where the hoisted value took ``iload_2; i2d; dstore 11`` and ``dload 11``). The price is the operation
    again per reader, in loops that each run a whole inner loop per iteration, so never where the method
    spends its time. Meaning unchanged: the operands hold the same values everywhere, and the operation has
    no effect and cannot throw. True when a value was recomputed."""
    defs, uses = _counts(m)
    params = {p.id for p in m.params}
    depth = _loop_depths(m)
    deepest = max(depth.values(), default=0)
    readers: dict[int, list[tuple[Block, Stmt]]] = {}
    for b in m.blocks.values():
        for st in b.all_stmts():
            for x in dict.fromkeys(x for x in st.operands() if isinstance(x, Var)):
                readers.setdefault(x.id, []).append((b, st))
    changed = False
    for b in list(m.blocks.values()):
        for st in list(b.stmts):
            t = st.defined()
            if t is None or t.id in params or defs[t.id] != 1 or not _invariant_op(st, defs, params):
                continue
            at = readers.get(t.id, [])
            # recomputed k times against stored once and loaded k times (one byte each at best)
            if not at or len(at) != uses[t.id] or (len(at) - 1) * _op_bytes(st) >= 1 + len(at) or \
                    any(depth[rb.id] >= deepest for rb, _ in at):
                continue
            for rb, reader in at:
                vid = max(v.id for v in [*m.variables, *m.params]) + 1
                fresh = Var(vid, t.type, f"p{vid}")
                m.variables.append(fresh)
                k = len(rb.stmts) if reader is rb.terminator else rb.stmts.index(reader)
                rb.stmts.insert(k, copy_stmt(st, fresh))
                _substitute(reader, t, fresh)
            b.stmts.remove(st)
            changed = True
    return changed


def _invariant_op(st: Stmt, defs: Counter[int], params: set[int]) -> bool:
    """``st`` is one operation that cannot throw (a division only by a constant other than zero) on constants
    and parameters never written."""
    if isinstance(st, Binary):
        if st.may_throw and not (isinstance(st.b, Const) and isinstance(st.b.value, int) and st.b.value != 0):
            return False
    elif not isinstance(st, Unary):
        return False
    return all(isinstance(x, Const) or (x.id in params and defs[x.id] == 1) for x in st.operands())


def _op_bytes(st: Stmt) -> int:
    """The bytes of ``st`` as a tree at its reader, at least: the opcode, a load or short constant per operand
    (two for a constant outside ``iconst``'s range)."""
    return 1 + sum(2 if isinstance(x, Const) and not (isinstance(x.value, (int, float)) and -1 <= x.value <= 5)
                   else 1 for x in st.operands())


def copy_stmt(st: Stmt, dst: Var | None = None) -> Stmt:
    """A new statement with ``st``'s fields (the same operands), writing ``dst`` when given."""
    out = type(st)(**{f.name: getattr(st, f.name) for f in fields(st)})
    if dst is not None:
        out.dst = dst  # type: ignore[attr-defined]  # given only for statements that define a variable (dst)
    return out


def _loop_depths(m: IRMethod) -> dict[int, int]:
    """Block id -> the number of natural loops containing it (exception edges included)."""
    g = nx.DiGraph()
    for b in m.blocks.values():
        g.add_node(b.id)
        g.add_edges_from((b.id, t) for t in b.successors())
    forest = natural_loops(g, m.entry)
    return {bid: forest.depth_of(bid) for bid in m.blocks}


def _tree_open_across(b: Block, j: int, temps: set[int]) -> bool:
    """A temporary defined before statement j of ``b`` is read after it: lowering holds that value on the stack
    across statement j, and a variable update emitted there would split its tree."""
    before = {d.id for x in b.stmts[:j] if (d := x.defined()) is not None}
    return any(isinstance(o, Var) and o.id in temps and o.id in before
               for x in b.all_stmts()[j + 1:] for o in x.operands())


#: the int and long operators whose operands commute (exactly: two's complement, no rounding)
_COMMUTATIVE = frozenset(f"{o}.{t}" for o in ("add", "mul", "and", "or", "xor") for t in "il")
_MIRROR = {Cond.EQ: Cond.EQ, Cond.NE: Cond.NE, Cond.LT: Cond.GT, Cond.GE: Cond.LE, Cond.GT: Cond.LT,
           Cond.LE: Cond.GE}  # a cond b == b mirror(cond) a


def _constants_second(m: IRMethod) -> None:
    """``c op x`` of a commutative int or long operator becomes ``x op c``, and a test ``c cond x`` of ints
    ``x mirror(cond) c`` (the extraction does not keep the source's order): javac's ``iload; iconst; iadd``,
    ``iload; iflt`` for ``0 > x``, and ``v = 1 + v`` becomes the ``v = v + 1`` that coalescing and lowering
    turn into ``iinc``. A constant pushes no tree, so no evaluation moves. A constant that needs ``ldc`` stays
    where it is: HotSpot's interpreter stores an ``ldc``'s number to the stack in memory, and an operation right
    after it reads it back (``codecost.LDC_READ_EXTRA``: ``BenchKernels.crc32``'s ``0xedb88320 & -(crc & 1)``
    turned around cost one such read per inner iteration), and it has no ``iinc`` form."""
    for b in m.blocks.values():
        for st in b.stmts:
            if isinstance(st, Binary) and st.op in _COMMUTATIVE and isinstance(st.a, Const) \
                    and not isinstance(st.b, Const) and not _pooled(st.a):
                st.a, st.b = st.b, st.a
        t = b.terminator
        if isinstance(t, If) and isinstance(t.a, Const) and not isinstance(t.b, Const) \
                and t.a.type.kind is Kind.INT:
            t.a, t.b, t.cond = t.b, t.a, _MIRROR[t.cond]


def _pooled(c: Const) -> bool:
    """``c`` is pushed by ``ldc``/``ldc2_w`` (no ``iconst``, ``bipush`` or ``sipush`` form)."""
    return const_opcode(c) is None and not (c.type.kind is Kind.INT and isinstance(c.value, int)
                                            and -32768 <= c.value <= 32767)


def _doublings_as_shifts(m: IRMethod) -> None:
    """``x + x`` of an int or long read nowhere else becomes ``x << 1``: the same value (both wrap modulo
    2^32 or 2^64), but ``x`` is then read once and stays on the stack inside its tree, where two reads would
    give it a slot and a store (``arraylength; istore; ...; iload; dup; iadd``, BenchKernels.invariantSum)."""
    _, uses = _counts(m)
    for b in m.blocks.values():
        for k, st in enumerate(b.stmts):
            if isinstance(st, Binary) and st.op in ("add.i", "add.l") and isinstance(st.a, Var) \
                    and st.a is st.b and st.a.type.kind in (Kind.INT, Kind.LONG) and uses[st.a.id] == 2:
                b.stmts[k] = Binary(st.dst, "shl" + st.op[3:], st.a, Const(INT, 1), origin=st.origin)


def _can_retarget(b: Block, j: int, k: int, v: Var) -> bool:
    """Statement j of ``b`` may write ``v`` instead of the copy at k: nothing between reads or writes ``v``, and
    with handlers nothing between can throw (a handler would see ``v`` early)."""
    between = b.stmts[j + 1:k]
    if any(_reads(x, v) or _writes(x, v) for x in between):
        return False
    return not (b.handlers and any(x.may_throw for x in between))


def _drop_dead(m: IRMethod) -> bool:
    """Statements without effects whose result nothing reads go (a flag telling a loop's exits apart that no
    one tests, a copy made dead by propagation)."""
    _, uses = _counts(m)
    params = {p.id for p in m.params}
    changed = False
    for b in m.blocks.values():
        keep = [st for st in b.stmts if not (_pure(st) and (d := st.defined()) is not None and d.id not in params
                                             and uses[d.id] == 0)]
        if len(keep) != len(b.stmts):
            b.stmts, changed = keep, True
    return changed


def _merge_copy_related(m: IRMethod) -> None:
    """Variables joined by a copy that are never live at once become one variable, and the copy goes (Chaitin's
    coalescing): a loop variable carried into an inner loop and back keeps one variable, hence one slot; a
    variable merged with a parameter becomes the parameter (two parameters stay apart)."""
    params = {p.id for p in m.params}
    copies = [st for b in m.blocks.values() for st in b.stmts if isinstance(st, Copy) and isinstance(st.src, Var)
              and st.src is not st.dst and st.src.type.kind is st.dst.type.kind]
    if not copies:
        return
    adj = interference(m)
    rep: dict[int, Var] = {}

    def find(v: Var) -> Var:
        while v.id in rep:
            v = rep[v.id]
        return v

    members: dict[int, list[int]] = {}  # representative -> the variables merged into it (itself included)
    for st in copies:
        a, b = find(st.dst), find(st.src)  # type: ignore[arg-type]  # a copy between variables: both are Vars
        if b.id in params:  # a parameter keeps its slot: the other variable becomes it (javac assigns them too)
            a, b = b, a
        if a is b or b.id in params:
            continue
        near = adj.get(a.id, set())  # every variable interfering with some member of a's class
        if any(x in near for x in members.get(b.id, [b.id])):
            continue
        rep[b.id] = a
        adj.setdefault(a.id, set()).update(adj.pop(b.id, set()))
        members.setdefault(a.id, [a.id]).extend(members.pop(b.id, [b.id]))
    if not rep:
        return
    rename_variables(m.blocks, find)
    for blk in m.blocks.values():
        blk.stmts = [st for st in blk.stmts if not (isinstance(st, Copy) and st.src is st.dst)]
    m.variables = [v for v in m.variables if v.id not in rep]


def rename_variables(blocks: dict[int, Block], find: Callable[[Var], Var]) -> None:
    """Every read and write of a variable ``v`` in ``blocks`` becomes one of ``find(v)`` (the caller has
    checked that the variables it merges are never live at once)."""
    for blk in blocks.values():
        for st in blk.all_stmts():
            for x in st.operands():
                if isinstance(x, Var) and find(x) is not x:
                    _substitute(st, x, find(x))
            d = st.defined()
            if d is not None and find(d) is not d:
                st.dst = find(d)  # type: ignore[attr-defined]  # a statement that defines d holds it in dst


def interference(m: IRMethod) -> dict[int, set[int]]:
    """Variable id -> ids of variables live where it is written (a copy's source excepted: after ``a = b`` the
    two hold one value). What a block's handlers read counts as live all through the block."""
    live_in = liveness(m.blocks)
    adj: dict[int, set[int]] = {}
    for b in m.blocks.values():
        live = _live_out(b, live_in)
        for st in reversed(b.all_stmts()):
            d = st.defined()
            if d is not None:
                src = st.src.id if isinstance(st, Copy) and isinstance(st.src, Var) else None
                for o in live:
                    if o != d.id and o != src:
                        adj.setdefault(d.id, set()).add(o)
                        adj.setdefault(o, set()).add(d.id)
                live.discard(d.id)
            live.update(x.id for x in st.operands() if isinstance(x, Var))
            live |= _handler_live(b, live_in)
    return adj


def liveness(blocks: dict[int, Block]) -> dict[int, set[int]]:
    """Block id -> ids of the variables live where it starts (read on some path before written); what a
    block's handlers read counts as live all through the block."""
    live_in: dict[int, set[int]] = {bid: set() for bid in blocks}
    order = [blocks[k] for k in sorted(blocks, reverse=True)]
    changed = True
    while changed:
        changed = False
        for b in order:
            live = _live_out(b, live_in)
            for st in reversed(b.all_stmts()):
                d = st.defined()
                if d is not None:
                    live.discard(d.id)
                live.update(x.id for x in st.operands() if isinstance(x, Var))
                live |= _handler_live(b, live_in)
            if live != live_in[b.id]:
                live_in[b.id] = live
                changed = True
    return live_in


def drop_dead_stores(blocks: dict[int, Block]) -> bool:
    """Statements without effects whose variable is not live after them go, until none is left: a copy nothing
    reads, and one that only paths which no longer read it follow (the reverter's tests threaded past a loop's
    exit flags leave ``v = null`` behind a ``return dflt`` while another arm still returns ``v``:
    commons-lang3's ``EnumUtils.getEnumIgnoreCase`` kept ``aconst_null; astore_3`` before ``aload_2;
    areturn``). What a block's handlers read is live all through it. True when one went."""
    changed = False
    while True:
        live_in = liveness(blocks)
        dead = False
        for b in blocks.values():
            live = _live_out(b, live_in) | _handler_live(b, live_in)
            kept: list[Stmt] = []
            for st in reversed(b.all_stmts()):
                d = st.defined()
                if st is not b.terminator and _pure(st) and d is not None and d.id not in live:
                    dead = True
                    continue
                if d is not None:
                    live.discard(d.id)
                live.update(x.id for x in st.operands() if isinstance(x, Var))
                live |= _handler_live(b, live_in)
                if st is not b.terminator:
                    kept.append(st)
            b.stmts = kept[::-1]
        if not dead:
            return changed
        changed = True


def _live_out(b: Block, live_in: dict[int, set[int]]) -> set[int]:
    out: set[int] = set()
    for t in b.successors():
        out |= live_in[t]
    return out


def _handler_live(b: Block, live_in: dict[int, set[int]]) -> set[int]:
    out: set[int] = set()
    for h in b.handlers:
        out |= live_in[h.target]
    return out


def _order_trees(b: Block, temps: set[int]) -> None:
    """Put the expression trees a statement reads in the order of its operands, when the statements just before
    it are exactly those trees: lowering then pushes them in place (``x = x * c + a[i]``: the product first). A
    tree whose root is read again later (stored by lowering, see :meth:`_Positions.stored_root`) goes before them all.
    Each tree keeps its own order and the statements that can throw or have effects keep theirs; a tree writes
    only its temporaries, so nothing else it could depend on changes."""
    where = None if b.handlers else _Positions(b)
    k = 0
    while k < len(b.stmts) + (b.terminator is not None):
        st = b.stmts[k] if k < len(b.stmts) else b.terminator
        assert st is not None
        ops = [x for x in st.operands()
               if isinstance(x, Var) and (x.id in temps or where is not None and where.stored_root(k, x))]
        ops = list({x.id: x for x in ops}.values())  # a root read twice (r * r) is one tree, placed once
        seg = _tree_segment(b, k, ops, temps) if len(ops) > 1 else None
        if seg is not None:
            start, trees = seg
            # a stored root's tree first: lowering stores its value and loads it in place, while the trees of
            # temporaries leave theirs on the stack, where computing a stored tree after them would bury them
            ops.sort(key=lambda t: t.id in temps)
            new = [x for t in ops for x in trees[t.id]]
            if [x for x in new if not _pure(x)] == [x for x in b.stmts[start:k] if not _pure(x)]:
                b.stmts[start:k] = new
        k += 1


class _Positions:
    """Where each variable of a block without handlers is written and first read (statement indices, the
    terminator last), for :meth:`stored_root`: ``v``, read by statement k and again later, is the root of a tree
    just before it that lowering stores (``through = w[i][k] + w[k][j]; if (through < w[i][j])``): its definition
    may be ordered like a temporary's when it is the block's only one and nothing before k reads it. (A block
    with handlers could see ``v`` written earlier or later: no such roots there.) Computed once per block: the
    reordering of :func:`_order_trees` only permutes statements before the next k it asks about, which keeps
    every answer "before k" / "from k on" the same (a block of n statements: O(n) instead of O(n^2))."""

    def __init__(self, b: Block) -> None:
        self.defs: dict[int, list[int]] = {}  # id(var) -> the indices that write it, ascending
        self.first_read: dict[int, int] = {}  # id(var) -> the first index that reads it
        for j, st in enumerate(b.all_stmts()):
            d = st.defined()
            if d is not None:
                self.defs.setdefault(id(d), []).append(j)
            for x in st.operands():
                self.first_read.setdefault(id(x), j)

    def stored_root(self, k: int, v: Var) -> bool:
        defs = self.defs.get(id(v), [])
        return bisect_left(defs, k) == 1 and (not defs or defs[-1] < k) \
            and self.first_read.get(id(v), k) >= k


def _tree_segment(b: Block, k: int, ops: list[Var], temps: set[int]) -> tuple[int, dict[int, list[Stmt]]] | None:
    """(start, tree statements per operand) when statements start..k-1 of ``b`` are exactly the trees of
    ``ops`` (each temporary's definition and, recursively, those of the temporaries it reads)."""
    owner: dict[int, int] = {t.id: t.id for t in ops}  # temporary -> the operand whose tree reads it
    trees: dict[int, list[Stmt]] = {t.id: [] for t in ops}
    j = k - 1
    while j >= 0 and owner:
        d = b.stmts[j].defined()
        if d is None or d.id not in owner:
            break
        root = owner.pop(d.id)
        trees[root].insert(0, b.stmts[j])
        for x in b.stmts[j].operands():
            if isinstance(x, Var) and x.id in temps:
                owner[x.id] = root
        j -= 1
    if owner:
        return None
    return j + 1, trees


def _pure(st: Stmt) -> bool:
    return isinstance(st, (Copy, Binary, Unary)) and not st.may_throw


def _can_move_down(b: Block, j: int, k: int, defs: Counter[int], uses: Counter[int]) -> bool:
    """Statement j of ``b`` (no effect, cannot throw, its operands not single-use temporaries it would leave
    behind) may move to just before statement k: nothing between writes what it reads."""
    st = b.stmts[j]
    if not _pure(st):
        return False
    srcs = [x for x in st.operands() if isinstance(x, Var)]
    if any(defs[x.id] == 1 and uses[x.id] == 1 for x in srcs):
        return False
    return not any(_writes(x, s) for x in b.stmts[j + 1:k] for s in srcs)


def _temporaries(m: IRMethod) -> set[int]:
    """Variables defined once and read once, both in the same block: what lowering may keep on the stack."""
    where_def: dict[int, list[int]] = {}
    where_use: dict[int, list[int]] = {}
    for b in m.blocks.values():
        for st in b.all_stmts():
            d = st.defined()
            if d is not None:
                where_def.setdefault(d.id, []).append(b.id)
            for x in st.operands():
                if isinstance(x, Var):
                    where_use.setdefault(x.id, []).append(b.id)
    params = {p.id for p in m.params}
    return {vid for vid, ds in where_def.items()
            if vid not in params and len(ds) == 1 and where_use.get(vid) == ds}


def _sink_updates(b: Block, temps: set[int]) -> None:
    if b.handlers:
        return
    k = len(b.stmts) - 1
    while k >= 0:
        st = b.stmts[k]
        if _sinkable(st, temps):
            land = _landing(b, k, temps)
            if land > k:
                b.stmts.insert(land, b.stmts.pop(k))
        k -= 1


def _sinkable(st: Stmt, temps: set[int]) -> bool:
    d = st.defined()
    if not _pure(st) or d is None or d.id in temps:
        return False
    return not any(isinstance(x, Var) and x.id in temps for x in st.operands())


def _landing(b: Block, k: int, temps: set[int]) -> int:
    """Where statement k of ``b`` may go (the index it takes after being removed): as far down as it commutes
    with what follows, then back to the last point with no temporary defined before and read after."""
    st = b.stmts[k]
    dst = st.defined()
    assert dst is not None  # a sinkable statement is pure: it writes a variable
    srcs = [x for x in st.operands() if isinstance(x, Var)]
    far = k
    for x in b.stmts[k + 1:]:
        if isinstance(x, ClassInit) or _reads(x, dst) or _writes(x, dst) or any(_writes(x, s) for s in srcs):
            break
        far += 1
    # a temporary is open at point p (between statements p-1 and p of the list without st) when it is
    # defined before p and read at or after p: lowering holds it on the stack there
    rest = b.stmts[:k] + b.stmts[k + 1:]
    defined_at = {d.id: i for i, x in enumerate(rest) if (d := x.defined()) is not None and d.id in temps}
    opens = [0] * (len(rest) + 2)
    assert b.terminator is not None  # a lifted block always ends in one
    for i, x in enumerate([*rest, b.terminator]):
        for y in x.operands():
            if isinstance(y, Var) and y.id in defined_at and defined_at[y.id] < i:
                opens[defined_at[y.id] + 1] += 1
                opens[i + 1] -= 1
    depth, closed = 0, []
    for p in range(len(rest) + 1):
        depth += opens[p]
        closed.append(depth == 0)
    return next((p for p in range(far, k, -1) if closed[p]), k)
