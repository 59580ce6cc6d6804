"""Construction of a PEG from an IR method (Tate's CFG-to-PEG translation, with the heap and exceptions).

What this module owns
    :func:`build_peg`: IR method -> :class:`~.graph.PEG` whose root says how the method ends (``return`` of a
    value and the final sigma, or ``throw`` of an exception and the sigma it was thrown in), as a phi-tree when
    the method can end in several ways. :class:`PegUnsupported` says why a method has no PEG (irreducible control
    flow, a construct the builder does not model) in one line.

How (Tate 2012, chapter 7; DESIGN section 3)
    1. The IR blocks become *segments*: a block with exception handlers is split after every statement that may
       throw, and such a segment ends in a two-way branch on ``threw`` of that statement's outcome; the
       exceptional edge goes to a chain of *dispatch* segments that test the handlers' catch types in order
       (``instanceof``) and rethrow when none matches. A statement that may throw outside any handler is not a
       branch: its projections propagate the exception (see :mod:`.ops`). Every exit (return, uncaught throw,
       rethrow) is an edge into one virtual EXIT.
    2. Reducibility is checked on the segment graph; an irreducible method raises PegUnsupported. A loop that
       nothing leaves gets a virtual exit edge guarded by ``false`` (so ``pass`` never fires), which keeps
       infinite loops, with or without effects, in the PEG instead of silently dropping them. That edge ends the
       method with ``return`` of the iteration's heap and the zero of the return type, so the method's result
       there is ``eval_d(return(sigma_d, zero), pass_d(guard(sigma_d, false)))``: an ``eval`` at a pass that
       never exists. Exact: the pass reads the guard, hence the iteration's heap, at every index, so an effect of
       the loop that throws ends the method with its exception (projections propagate it), and otherwise no
       index exists and the method does not end; the zero is never seen (it gives the result its type). Such a
       loop is on the method's result as other loops are on the sigma chain (the extraction checks count an
       eval of a result as such, ``pegextract.select.loops_on_sigma``), and no rule drops it (docs/axioms.md,
       "The model the axioms are sound for").
    3. Values flow per loop context, innermost loops collapsed to single nodes, back edges cut (the acyclic
       "region" of a loop): the value of a variable where control joins is a phi-tree decided from the join's
       immediate dominator (Tate's Decide), built once per join as a tree over the incoming edges and mapped per
       live variable, with unreachable leaves dropped and equal branches merged. A loop header's values are
       ``theta_d(init, next)``; the loop's break condition is the same kind of tree over its back and exit edges
       (true at exits), guarded by the sigma its iteration ends with; a value leaving the loop is
       ``eval_d(value at the exit edge, pass_d(break))``, and which exit was taken is ``eval_d`` of a tree that is
       true at that exit.
    4. The heap is the variable ``$sigma``; every loop carries it in a theta, so a loop's place among the method's
       effects is kept even when the loop computes nothing else (a non-terminating loop must stay where it was).
    5. The graph is minimized (equal thetas merged by bisimulation, then everything re-hash-consed) and only what
       the root reaches is kept: the PEG is the smallest graph with this meaning, which is where copy
       propagation, common-subexpression elimination and dead-code removal come from.

Inputs: an :class:`~peggy_jvm.ir.nodes.IRMethod` (from :func:`peggy_jvm.ir.lift.lift_method`).
Outputs: a sealed PEG; ``param`` nodes carry the parameter index (receiver first), ``sigma0`` is the heap at entry.
Invariants: the PEG satisfies :func:`.check.check_peg`; every effect of the method appears on the sigma chain in
program order (a read of the class's own static field in a static method is no effect: it has no exceptional edge,
and when its value is unused it is left out, see :func:`peggy_jvm.semantics.static_read_is_pure`); nothing the
method computes only on some path is computed on others (phi-trees keep it under the conditions that lead to it).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any, Callable

import networkx as nx

from ..ir import cfg as C
from ..ir.nodes import (ArrayLength, ArrayLoad, ArrayStore, Binary, Block, Catch, CheckCast, ClassInit, Const,
                        Copy, FieldRef, GetField, GetStatic, Goto, If, InstanceOf, Invoke, InvokeDynamic, IRMethod,
                        IRType, Kind, MonitorEnter, MonitorExit, New, NewArray, PutField, PutStatic, Return, Stmt,
                        Switch, Throw, Unary, Var)
from ..semantics import double_to_raw_long_bits, float_to_raw_int_bits
from .graph import PEG, Node, bisimulation_blocks
from .ops import THROWING_DIVISIONS

EXIT = -1
SIGMA = "$sigma"
EXC = "$exc"
RESULT = "$result"


class PegUnsupported(Exception):
    """The method has no PEG (irreducible control flow, an unmodelled construct): one line saying why."""


# -- constants ------------------------------------------------------------------------------------------------
def const_node(peg: PEG, c: Const) -> int:
    k = c.type.kind
    if k is Kind.INT or k is Kind.LONG:
        assert isinstance(c.value, int)  # an int or long Const holds a Python int
        return peg.add("const.i" if k is Kind.INT else "const.l", c.value)
    if k is Kind.FLOAT:
        assert isinstance(c.value, (int, float))  # a float Const holds a number
        return peg.add("const.f", float_to_raw_int_bits(float(c.value)))
    if k is Kind.DOUBLE:
        assert isinstance(c.value, (int, float))  # a double Const holds a number
        return peg.add("const.d", double_to_raw_long_bits(float(c.value)))
    return peg.add("const.a", c)


def default_node(peg: PEG, t: IRType) -> int:
    """The zero of type ``t``: the value of a variable on a path that never reads it."""
    k = t.kind
    if k is Kind.INT:
        return peg.add("const.i", 0)
    if k is Kind.LONG:
        return peg.add("const.l", 0)
    if k is Kind.FLOAT:
        return peg.add("const.f", 0)
    if k is Kind.DOUBLE:
        return peg.add("const.d", 0)
    return peg.add("const.a", Const(IRType(Kind.REF, None), None))


# -- segments -------------------------------------------------------------------------------------------------
@dataclass(eq=False, slots=True)
class _Seg:
    id: int
    block: Block
    stmts: list[Stmt]
    kind: str  # goto | if | switch | return | throw | try | dispatch | athrow
    # by ``kind``: the IR terminator, the throwing statement (try), or the Handler tuple (dispatch); typed Any
    # because ``kind`` is the tag that says which (a string tag mypy cannot narrow on)
    term: Any = None
    succ: list[tuple[object, int]] = field(default_factory=list)  # (label, target segment id or EXIT)
    index: int = 0  # dispatch: which handler this segment tests


def _segments(m: IRMethod, pure: frozenset[FieldRef] = frozenset()) -> tuple[dict[int, _Seg], dict[int, int]]:
    """Split ``m``'s blocks into segments; returns them and the segment each block starts with. ``pure``: the
    static fields whose reads cannot throw here (no exceptional edge after them)."""
    segs: dict[int, _Seg] = {}
    first: dict[int, int] = {}
    next_id = [0]
    dispatch: dict[tuple, int] = {}

    def new(block: Block, stmts: list[Stmt], kind: str, term: object = None) -> _Seg:
        s = _Seg(next_id[0], block, stmts, kind, term)
        segs[s.id] = s
        next_id[0] += 1
        return s

    pending: list[tuple[_Seg, object, int]] = []  # (seg, label, block id) to resolve to the block's first seg

    def dispatch_chain(block: Block) -> int:
        key = block.handlers
        if key in dispatch:
            return dispatch[key]
        ids = []
        for k, h in enumerate(key):
            d = new(block, [], "dispatch", key)
            d.index = k
            ids.append(d.id)
        dispatch[key] = ids[0]
        for k, h in enumerate(key):
            d = segs[ids[k]]
            pending.append((d, "match", h.target))
            if h.catch_type is not None:
                d.succ.append(("nomatch", ids[k + 1] if k + 1 < len(ids) else EXIT))
        return ids[0]

    for b in m.block_order():
        term = b.terminator
        if term is None:
            raise PegUnsupported(f"block B{b.id} has no terminator")
        handled = bool(b.handlers)
        cur: list[Stmt] = []
        segs_of_block: list[_Seg] = []
        if handled:
            for s in b.stmts:
                cur.append(s)
                if _may_throw(s, pure):
                    seg = new(b, cur, "try", s)
                    segs_of_block.append(seg)
                    cur = []
        kind = {Goto: "goto", If: "if", Switch: "switch", Return: "return", Throw: "throw"}.get(type(term))
        if kind is None:
            raise PegUnsupported(f"terminator {type(term).__name__}")
        if kind == "throw" and handled:
            kind = "athrow"
        last = new(b, cur if handled else list(b.stmts), kind, term)
        segs_of_block.append(last)
        first[b.id] = segs_of_block[0].id
        for a, nxt in zip(segs_of_block, segs_of_block[1:]):
            a.succ.append(("n", nxt.id))
            a.succ.append(("x", dispatch_chain(b)))
        if isinstance(term, Goto):
            pending.append((last, "goto", term.target))
        elif isinstance(term, If):
            if term.if_true == term.if_false:
                last.kind = "goto"
                pending.append((last, "goto", term.if_true))
            else:
                pending.append((last, True, term.if_true))
                pending.append((last, False, term.if_false))
        elif isinstance(term, Switch):
            for k, t in enumerate(term.cases):
                pending.append((last, ("case", k), t))
            pending.append((last, "default", term.default))
        elif kind == "athrow":
            last.succ.append(("x", dispatch_chain(b)))
        else:
            last.succ.append(("exit", EXIT))
    for seg, label, target in pending:
        if target not in first:
            raise PegUnsupported(f"jump to missing block B{target}")
        seg.succ.append((label, first[target]))
    # successor order as the labels were added; for dispatch, "match" was appended after "nomatch": put it first
    for seg in segs.values():
        if seg.kind == "dispatch":
            seg.succ.sort(key=lambda e: e[0] != "match")
    return segs, first


def _may_throw(s: Stmt, pure: frozenset[FieldRef] = frozenset()) -> bool:
    if isinstance(s, GetStatic) and s.field in pure:
        return False
    if isinstance(s, Binary) and s.op in THROWING_DIVISIONS:
        b = s.b
        return not (isinstance(b, Const) and b.value != 0)
    return s.may_throw and not isinstance(s, InstanceOf)


# -- the builder ----------------------------------------------------------------------------------------------
Edge = tuple[int, object, int]  # (source segment, label, target)


class _Tree:
    """A decision tree over edges: a leaf is an edge; a branch tests a bool PEG node."""

    __slots__ = ("cond", "a", "b", "edge")

    def __init__(self, cond: int = -1, a: _Tree | None = None, b: _Tree | None = None, edge: Edge | None = None):
        self.cond, self.a, self.b, self.edge = cond, a, b, edge


@dataclass(eq=False)
class _Loop:
    info: C.Loop
    depth: int
    header: int
    thetas: dict[object, int] = field(default_factory=dict)
    pass_node: int = -1
    tree: _Tree | None = None
    exit_cond: dict[Edge, int] = field(default_factory=dict)
    exits: list[Edge] = field(default_factory=list)
    started: bool = False


class _Builder:
    def __init__(self, m: IRMethod) -> None:
        self.m = m
        self.peg = PEG(name=f"{m.class_name}.{m.name}{m.descriptor}", class_name=m.class_name,
                       is_static=m.is_static, synchronized=m.synchronized, param_types=[p.type for p in m.params])
        # static fields this method reads without any effect (peggy_jvm.semantics.static_read_is_pure), as the
        # lifter found them in the class file
        self.pure: frozenset[FieldRef] = getattr(m, "pure_static_reads", frozenset())
        self.segs, self.first = _segments(m, self.pure)
        self.entry = self.first[m.entry]
        self.ret_type = _return_type(m.descriptor)
        self.env_end: dict[int, dict] = {}
        self.pending: dict[int, tuple[int, Var | None, Callable[[int], int] | None]] = {}
        self.entry_env: dict[int, dict] = {}
        self.origin = -1  # bytecode offset of the statement being translated
        self.decide_memo: dict[tuple, _Tree | None] = {}
        self.cond_memo: dict[tuple, int] = {}
        self.reach_memo: dict[tuple, bool] = {}
        self.edge_env_memo: dict[tuple, dict] = {}
        self.loops: dict[int, _Loop] = {}  # by header segment

    # -- control-flow facts ---------------------------------------------------------------------------------
    def graph(self) -> nx.DiGraph:
        g = nx.DiGraph()
        g.add_node(self.entry)
        for s in self.segs.values():
            g.add_node(s.id)
        g.add_node(EXIT)
        for s in self.segs.values():
            for _, t in s.succ:
                g.add_edge(s.id, t)
        return g

    def analyze(self) -> None:
        info = C.analyze(self.graph(), self.entry, include_exceptional=False)
        if info.witness is not None:  # not reducible
            a, b = info.witness
            raise PegUnsupported(f"irreducible control flow (edge into B{self.segs[b].block.id} from "
                                 f"B{self.segs[a].block.id} enters a cycle not through its header)")
        changed = False
        for loop in info.loops:
            if not loop.exits:
                self.segs[loop.header].succ.insert(0, ("never", EXIT))
                changed = True
        if changed:
            info = C.analyze(self.graph(), self.entry, include_exceptional=False)
        self.info = info
        self.reach = info.reachable
        self.idom = {n: p for n, p in ((n, self._idom(n)) for n in info.rpo)}
        for loop in info.loops:
            self.loops[loop.header] = _Loop(loop, loop.depth, loop.header)
        self.live = self.liveness()

    def _idom(self, n: int) -> int | None:
        doms = self.info.domtree.dominators_of(n)
        return doms[1] if len(doms) > 1 else None

    def innermost(self, n: int) -> _Loop | None:
        if n == EXIT:
            return None
        lp = self.info.loops.loop_of(n)
        return None if lp is None else self.loops[lp.header]

    def collapse(self, n: int, ctx: _Loop | None) -> int | tuple[str, int]:
        """``n`` as seen from context ``ctx``: itself, or ``("L", header)`` of the outermost loop inside ctx
        containing it."""
        lp = self.innermost(n)
        if lp is ctx:
            return n
        return ("L", self.outermost_inside(lp, ctx, n).header)

    def outermost_inside(self, lp: _Loop | None, ctx: _Loop | None, n: int) -> _Loop:
        """The outermost loop inside ``ctx`` containing ``lp``, the innermost loop of segment ``n``, which is not
        ``ctx``."""
        stop = None if ctx is None else ctx.info
        while lp is not None and lp.info.parent is not stop:
            parent = lp.info.parent
            assert parent is not None, (n, ctx)  # lp is inside ctx: it has a parent
            lp = self.loops[parent.header]
        assert lp is not None, (n, ctx)
        return lp

    def in_ctx(self, n: int, ctx: _Loop | None) -> bool:
        return ctx is None or (n != EXIT and n in ctx.info.body)

    # -- liveness -------------------------------------------------------------------------------------------
    def liveness(self) -> dict[int, frozenset]:
        use: dict[int, set] = {}
        defs: dict[int, set] = {}
        for s in self.segs.values():
            u: set = set()
            d: set = set()
            for st in s.stmts:
                for x in st.operands():
                    if isinstance(x, Var) and x not in d:
                        u.add(x)
                if isinstance(st, Catch) and EXC not in d:
                    u.add(EXC)
                dv = st.defined()
                if dv is not None and not (s.kind == "try" and st is s.term):
                    d.add(dv)
            if s.kind in ("if", "switch", "return", "throw", "athrow"):
                for x in s.term.operands():
                    if isinstance(x, Var) and x not in d:
                        u.add(x)
            if s.kind == "dispatch" and EXC not in d:
                u.add(EXC)
            use[s.id], defs[s.id] = u, d
        live: dict[int, frozenset] = {s: frozenset() for s in self.segs}
        live[EXIT] = frozenset()
        order = [n for n in reversed(self.info.rpo) if n != EXIT]
        changed = True
        while changed:
            changed = False
            for n in order:
                s = self.segs[n]
                out: set = set()
                for label, t in s.succ:
                    lt = live.get(t, frozenset())
                    if label == "n":  # the deferred statement's result is defined on its normal edge only
                        out |= lt - {s.term.defined()}
                    elif label == "x":
                        out |= lt - {EXC}
                    else:
                        out |= lt
                new = frozenset(use[n] | (out - defs[n]))
                if new != live[n]:
                    live[n] = new
                    changed = True
        return live

    def keys_for(self, n: int) -> list:
        """The variables carried into segment ``n`` (its live variables and the heap), in a stable order."""
        ks = sorted((k for k in self.live[n] if isinstance(k, Var)), key=lambda v: v.id)
        out: list = [SIGMA, *ks]
        if EXC in self.live[n]:
            out.append(EXC)
        return out

    # -- statements -----------------------------------------------------------------------------------------
    def operand(self, env: dict, x: Var | Const) -> int:
        if isinstance(x, Var):
            try:
                return env[x]
            except KeyError:
                raise PegUnsupported(f"variable {x!r} read before it is written") from None
        return const_node(self.peg, x)

    def effect(self, env: dict, op: str, attr: object, args: list[int]) -> int:
        nid = self.peg.add(op, attr, (env[SIGMA], *args))
        if self.origin >= 0:
            self.peg.origins.setdefault(nid, self.origin)
        return nid

    def translate(self, env: dict, st: Stmt, deferred: bool) -> tuple[int, Var | None, Callable[[int], int] | None] | None:
        """Apply ``st`` to ``env``. A statement that may throw yields (outcome, destination, how its value is
        made from rho_value); when ``deferred`` (a try segment's last statement) the projections are left to the
        edges, otherwise they are applied here."""
        peg = self.peg
        self.origin = st.origin  # for the effects this statement makes
        val = lambda x: self.operand(env, x)  # noqa: E731
        if isinstance(st, Copy):
            env[st.dst] = val(st.src)
            return None
        if isinstance(st, Unary):
            env[st.dst] = peg.add(st.op, None, (val(st.a),))
            return None
        if isinstance(st, Binary):
            a, b = val(st.a), val(st.b)
            op = st.op
            if op in THROWING_DIVISIONS and _may_throw(st):
                o = self.effect(env, THROWING_DIVISIONS[op], None, [b])
                return self.finish(env, o, st.dst, lambda v: peg.add(op, None, (a, v)), deferred)
            env[st.dst] = peg.add(op, None, (a, b))
            return None
        if isinstance(st, Catch):
            env[st.dst] = env[EXC]
            return None
        if isinstance(st, InstanceOf):
            env[st.dst] = peg.add("instanceof", st.cls, (val(st.src),))
            return None
        if isinstance(st, GetField):
            o = self.effect(env, "getfield", st.field, [val(st.obj)])
        elif isinstance(st, PutField):
            o = self.effect(env, "putfield", st.field, [val(st.obj), val(st.value)])
        elif isinstance(st, GetStatic):
            o = self.effect(env, "getstatic", st.field, [])
        elif isinstance(st, PutStatic):
            o = self.effect(env, "putstatic", st.field, [val(st.value)])
        elif isinstance(st, ArrayLoad):
            o = self.effect(env, "aload", st.elem, [val(st.array), val(st.index)])
        elif isinstance(st, ArrayStore):
            o = self.effect(env, "astore", st.elem,
                            [val(st.array), val(st.index), val(st.value)])
        elif isinstance(st, ArrayLength):
            o = self.effect(env, "arraylength", None, [val(st.array)])
        elif isinstance(st, NewArray):
            o = self.effect(env, "newarray", st.array_type, [val(x) for x in st.sizes])
        elif isinstance(st, ClassInit):
            o = self.effect(env, "classinit", st.cls, [])
        elif isinstance(st, New):
            o = self.effect(env, "new", (st.cls, st.constructor), [val(x) for x in st.args])
        elif isinstance(st, Invoke):
            args = ([val(st.receiver)] if st.receiver is not None else []) + [val(x) for x in st.args]
            o = self.effect(env, f"invoke.{st.kind.value}", st.method, args)
        elif isinstance(st, InvokeDynamic):
            o = self.effect(env, "invokedynamic", (st.name, st.descriptor, st.bootstrap),
                            [val(x) for x in st.args])
        elif isinstance(st, CheckCast):
            o = self.effect(env, "checkcast", st.cls, [val(st.src)])
        elif isinstance(st, MonitorEnter):
            o = self.effect(env, "monitorenter", None, [val(st.obj)])
        elif isinstance(st, MonitorExit):
            o = self.effect(env, "monitorexit", None, [val(st.obj)])
        else:
            raise PegUnsupported(f"statement {type(st).__name__}")
        return self.finish(env, o, st.defined(), None, deferred)

    def finish(self, env: dict, o: int, dst: Var | None, make: Callable[[int], int] | None, deferred: bool):
        if deferred:
            return (o, dst, make)
        self.normal_edge(env, o, dst, make)
        return None

    def normal_edge(self, env: dict, o: int, dst: Var | None, make: Callable[[int], int] | None) -> None:
        peg = self.peg
        if dst is not None:
            v = peg.add("rho_value", None, (o,))
            env[dst] = make(v) if make is not None else v
        env[SIGMA] = peg.add("rho_sigma", None, (o,))

    # -- environments ---------------------------------------------------------------------------------------
    def end_env(self, n: int) -> dict:
        env = self.env_end.get(n)
        if env is not None:
            return env
        if n not in self.entry_env:
            self.compute_entry(n)
        s = self.segs[n]
        env = dict(self.entry_env[n])
        for st in s.stmts:
            deferred = s.kind == "try" and st is s.term
            r = self.translate(env, st, deferred)
            if r is not None:
                self.pending[n] = r
        if s.kind == "athrow":
            o = self.effect(env, "athrow", None, [self.operand(env, s.term.value)])
            self.pending[n] = (o, None, None)
        self.env_end[n] = env
        return env

    def out_env(self, e: Edge) -> dict:
        """The variables on edge ``e`` leaving a segment of the edge's own loop context."""
        src, label, dst = e
        env = self.end_env(src)
        s = self.segs[src]
        peg = self.peg
        if s.kind in ("try", "athrow"):
            o, dv, make = self.pending[src]
            env = dict(env)
            if label == "n":
                self.normal_edge(env, o, dv, make)
            else:
                env[EXC] = peg.add("rho_exc", None, (o,))
                env[SIGMA] = peg.add("rho_esigma", None, (o,))
            return env
        if label == "exit":
            env = dict(env)
            term = s.term
            if isinstance(term, Return):
                v = peg.add("unit") if term.value is None else self.operand(env, term.value)
                env[RESULT] = peg.add("return", None, (env[SIGMA], v))
            else:
                env[RESULT] = peg.add("throw", None, (env[SIGMA], self.operand(env, term.value)))
            return env
        if label == "nomatch" and dst == EXIT:
            env = dict(env)
            env[RESULT] = peg.add("throw", None, (env[SIGMA], env[EXC]))
            return env
        if label == "never":
            env = dict(env)
            v = peg.add("unit") if self.ret_type is None else default_node(peg, self.ret_type)
            env[RESULT] = peg.add("return", None, (env[SIGMA], v))
            return env
        return env

    def edge_env(self, e: Edge, ctx: _Loop | None) -> dict:
        """The variables on edge ``e`` as seen from context ``ctx`` (evals when ``e`` leaves inner loops)."""
        key = (e, None if ctx is None else ctx.header)
        env = self.edge_env_memo.get(key)
        if env is not None:
            return env
        inner = self.innermost(e[0])
        if inner is ctx:
            env = self.out_env(e)
        else:
            lp = self.outermost_inside(inner, ctx, e[0])
            self.process_loop(lp)
            inside = self.edge_env(e, lp)
            target_keys = self.keys_for(e[2]) if e[2] != EXIT else [SIGMA, RESULT]
            env = {}
            for k in target_keys:
                v = inside.get(k)
                if v is not None:
                    env[k] = self.peg.add("eval", lp.depth, (v, lp.pass_node))
        self.edge_env_memo[key] = env
        return env

    def branch_labels(self, n: int) -> list[object]:
        """The labels of segment ``n``'s ways out, in the order they are tested; the last one is 'otherwise'."""
        s = self.segs[n]
        labels = [label for label, _ in s.succ]
        if s.kind in ("if", "switch", "try", "dispatch"):
            orders: dict[str, list[object]] = {"if": [True, False], "try": ["x", "n"], "dispatch": ["match", "nomatch"]}
            order = orders.get(s.kind)
            rest = [lb for lb in labels if lb != "never"]
            if order is not None:
                rest = [lb for lb in order if lb in rest]
            return (["never"] if "never" in labels else []) + rest
        return labels

    def cond_node(self, n: int, label: object) -> int:
        """The condition under which segment ``n`` leaves by ``label`` (given the earlier labels did not fire)."""
        key = (n, label)
        got = self.cond_memo.get(key)
        if got is not None:
            return got
        s = self.segs[n]
        peg = self.peg
        env = self.end_env(n)
        if label == "never":
            c = peg.add("const.b", False)
        elif s.kind == "if":
            term: If = s.term
            a, b = self.operand(env, term.a), self.operand(env, term.b)
            if term.a.type.kind is Kind.REF or term.b.type.kind is Kind.REF:
                op = "eq.a" if term.cond.value == "eq" else "ne.a"
            else:
                op = f"{term.cond.value}.i"
            c = peg.add(op, None, (a, b))
        elif s.kind == "switch":
            term2: Switch = s.term
            v = self.operand(env, term2.value)
            assert isinstance(label, tuple)  # a case label is ('case', k)
            c = peg.add("eq.i", None, (v, peg.add("const.i", term2.keys[label[1]])))
        elif s.kind == "try":
            c = peg.add("threw", None, (self.pending[n][0],))
        elif s.kind == "dispatch":
            h = s.term[s.index]
            test = peg.add("instanceof", h.catch_type, (env[EXC],))
            c = peg.add("ne.i", None, (test, peg.add("const.i", 0)))
        else:
            raise AssertionError((s.kind, label))
        self.cond_memo[key] = c
        return c

    # -- Decide ---------------------------------------------------------------------------------------------
    def decide(self, x: int | tuple[str, int], target: object, ctx: _Loop | None) -> _Tree | None:
        """The decision tree from node ``x`` (a segment or a collapsed loop of ``ctx``) to ``target`` (a segment,
        EXIT, or "ITER": the back and exit edges of ``ctx``)."""
        key = (x, target, None if ctx is None else ctx.header)
        if key in self.decide_memo:
            return self.decide_memo[key]
        self.decide_memo[key] = None  # no cycles in a region; guards against malformed input
        if isinstance(x, tuple):
            lp = self.loops[x[1]]
            self.process_loop(lp)
            tree: _Tree | None = None
            for edge in reversed(lp.exits):
                sub = self.via(edge, target, ctx)
                if tree is None:
                    tree = sub
                elif sub is not None:
                    tree = _Tree(lp.exit_cond[edge], sub, tree)
        else:
            n = x
            label_target = dict(self.segs[n].succ)
            labels = self.branch_labels(n)
            subs = [self.via((n, label, label_target[label]), target, ctx) for label in labels]
            tree = subs[-1]
            for label, sub in zip(reversed(labels[:-1]), reversed(subs[:-1])):
                if sub is not None:
                    # the condition is built only when both ways lead to the target: it is then evaluated
                    # exactly when the original program tests it on its way there
                    tree = sub if tree is None else _Tree(self.cond_node(n, label), sub, tree)
        self.decide_memo[key] = tree
        return tree

    def loop_exits(self, lp: _Loop) -> list[Edge]:
        """Every labelled edge leaving the loop, by the RPO of its source, then successor order."""
        body = lp.info.body
        return [(u, label, v) for u in self.info.rpo if u in body
                for label, v in self.segs[u].succ if v == EXIT or v not in body]

    def via(self, e: Edge, target: object, ctx: _Loop | None) -> _Tree | None:
        y = e[2]
        if y == target:
            return _Tree(edge=e)
        if ctx is not None and (y == ctx.header or not self.in_ctx(y, ctx)):
            return _Tree(edge=e) if target == "ITER" else None
        if y == EXIT:
            return None
        x = self.collapse(y, ctx)
        if target != "ITER" and not self.reaches(x, target, ctx):
            return None  # never look into code that cannot lead to the target (it may depend on the target)
        return self.decide(x, target, ctx)

    def region_succ(self, x: object, ctx: _Loop | None) -> list[tuple[int, object, bool]]:
        """Successors of ``x`` as seen in the acyclic region of ``ctx``: the segment, the node it is part of
        in the region, and whether it is inside the region (back edges and exits are not)."""
        edges: Sequence[tuple[Any, Any]]
        if isinstance(x, tuple):  # a collapsed inner loop: ("loop", header)
            edges = self.loops[x[1]].info.exits
        else:
            assert isinstance(x, int)  # a segment id
            edges = [(x, t) for _, t in self.segs[x].succ]
        out: list[tuple[int, object, bool]] = []
        for _, y in edges:
            if y == EXIT or (ctx is not None and (y == ctx.header or not self.in_ctx(y, ctx))):
                out.append((y, y, False))
            else:
                out.append((y, self.collapse(y, ctx), True))
        return out

    def reaches(self, x: object, target: object, ctx: _Loop | None) -> bool:
        key = (x, target, None if ctx is None else ctx.header)
        got = self.reach_memo.get(key)
        if got is None:
            self.reach_memo[key] = False
            got = any(y == target or (inside and self.reaches(c, target, ctx))
                      for y, c, inside in self.region_succ(x, ctx))
            self.reach_memo[key] = got
        return got

    def merge(self, tree: _Tree | None, keys: list, leaf: Callable[[Edge], dict]) -> dict:
        """Map a decision tree to per-variable phi-trees."""
        memo: dict[int, dict | None] = {}
        peg = self.peg

        def go(t: _Tree | None) -> dict | None:
            if t is None:
                return None
            if id(t) in memo:
                return memo[id(t)]
            r: dict | None
            if t.edge is not None:
                env = leaf(t.edge)
                r = {k: env[k] for k in keys if k in env}
            else:
                a, b = go(t.a), go(t.b)
                if a is None:
                    r = b
                elif b is None:
                    r = a
                elif self.peg.nodes[t.cond].op == "const.b":
                    r = a if self.peg.nodes[t.cond].attr else b
                else:
                    r = {}
                    for k in keys:
                        x, y = a.get(k), b.get(k)
                        if x is None or y is None:
                            r_k = x if y is None else y
                        elif x == y:
                            r_k = x
                        else:
                            r_k = peg.add("phi", None, (t.cond, x, y))
                        if r_k is not None:
                            r[k] = r_k
            memo[id(t)] = r
            return r

        return go(tree) or {}

    # -- regions --------------------------------------------------------------------------------------------
    def compute_entry(self, n: int) -> None:
        if n in self.entry_env:
            return
        ctx = self.innermost(n)
        if ctx is not None and ctx.header == n:
            self.process_loop(ctx)
            return
        if n == self.entry:
            self.entry_env[n] = self.initial_env()
            return
        d = self.idom[n]
        assert d is not None
        tree = self.decide(self.collapse(d, ctx), n, ctx)
        self.entry_env[n] = self.merge(tree, self.keys_for(n), lambda e: self.edge_env(e, ctx))

    def initial_env(self) -> dict:
        env: dict = {SIGMA: self.peg.add("sigma0")}
        for i, p in enumerate(self.m.params):
            env[p] = self.peg.add("param", i)
        return env

    def process_loop(self, lp: _Loop) -> None:
        if lp.started:
            if lp.pass_node == -1 and lp.tree is None and lp.header not in self.entry_env:
                raise PegUnsupported("loop values depend on themselves")
            return
        lp.started = True
        peg = self.peg
        parent = None if lp.info.parent is None else self.loops[lp.info.parent.header]
        lp.exits = self.loop_exits(lp)
        # init values: from the loop's entry edges, decided in the parent context
        keys = self.keys_for(lp.header)
        if lp.header == self.entry:  # a method that starts with a loop: the entry values are the arguments
            init = self.initial_env()
        else:
            d = self.idom[lp.header]
            assert d is not None  # only the entry has no idom
            init_tree = self.decide(self.collapse(d, parent), lp.header, parent)
            init = self.merge(init_tree, keys, lambda e: self.edge_env(e, parent))
        header = self.segs[lp.header]
        for k in keys:
            th = peg.new_theta(lp.depth)
            lp.thetas[k] = th
            if isinstance(k, Var) and k.slot is not None and self.first.get(header.block.id) == lp.header:
                peg.locals[th] = (k.slot, header.block.origin)  # the loop starts where its header block does
        self.entry_env[lp.header] = dict(lp.thetas)
        tree = self.decide(lp.header, "ITER", lp)
        lp.tree = tree
        exits = lp.exits
        exit_set = set(exits)
        inside = lambda e: self.edge_env(e, lp)  # noqa: E731
        nxt = self.merge(tree, keys, lambda e: inside(e) if e not in exit_set else {})
        for k in keys:
            th = lp.thetas[k]
            i = init.get(k)
            if i is None:
                i = default_node(peg, k.type) if isinstance(k, Var) else peg.add("sigma0")
            peg.set_theta(th, i, nxt.get(k, th))
        true, false = peg.add("const.b", True), peg.add("const.b", False)
        brk = self.merge(tree, ["c", "s"], lambda e: {"c": true if e in exit_set else false, "s": inside(e)[SIGMA]})
        lp.pass_node = peg.add("pass", lp.depth, (peg.add("guard", None, (brk["s"], brk["c"])),))
        for e in exits[:-1]:
            def exit_taken(x: Edge, e: Edge = e) -> dict:
                return {"c": true if x == e else false} if x in exit_set else {}

            which = self.merge(tree, ["c"], exit_taken)
            lp.exit_cond[e] = peg.add("eval", lp.depth, (which["c"], lp.pass_node))

    def build(self) -> PEG:
        self.analyze()
        d = self.idom[EXIT]
        assert d is not None  # only the entry has no idom
        exit_tree = self.decide(self.collapse(d, None), EXIT, None)
        res = self.merge(exit_tree, [RESULT], lambda e: self.edge_env(e, None))
        if RESULT not in res:
            raise PegUnsupported("the method has no way to end")
        self.peg.root = res[RESULT]
        return self.peg


def _return_type(desc: str) -> IRType | None:
    from ..ir.nodes import type_of_descriptor
    r = desc[desc.index(")") + 1:]
    return None if r == "V" else type_of_descriptor(r)


def build_peg(m: IRMethod) -> PEG:
    """The PEG of ``m`` (see the module docstring); raises PegUnsupported with the reason when there is none."""
    b = _Builder(m)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 100_000))
    try:
        peg = b.build()
    except RecursionError:
        raise PegUnsupported("method too deep for the PEG builder") from None
    finally:
        sys.setrecursionlimit(old)
    return minimize(_without_dead_reads(peg, b.pure))


def _without_dead_reads(peg: PEG, pure: frozenset[FieldRef]) -> PEG:
    """``peg`` without the reads of ``pure`` static fields whose value nothing uses: such a read cannot throw and
    changes nothing, so the heap after it is the heap before it. Only these reads go: a read that may initialize
    a class (another class's field, or any static read of an instance method) stays on the sigma chain even when
    its value is dead, and a used read stays where it is (the reverter emits effects in sigma order)."""
    if not pure:
        return peg
    nodes = peg.nodes
    reach = peg.reachable()
    read = {n for n in reach if nodes[n].op == "getstatic" and nodes[n].attr in pure}
    if not read:
        return peg
    used = {nodes[n].children[0] for n in reach if nodes[n].op == "rho_value" and nodes[n].children[0] in read}
    alias = {n: nodes[nodes[n].children[0]].children[0] for n in reach
             if nodes[n].op == "rho_sigma" and nodes[n].children[0] in read - used}
    if not alias:
        return peg

    def res(x: int) -> int:  # dead reads one after another: the heap before the first of them
        while x in alias:
            x = alias[x]
        return x

    out = list(nodes)
    for n, node in enumerate(nodes):
        if any(c in alias for c in node.children):
            out[n] = Node(node.op, node.attr, tuple(res(c) for c in node.children))
    return PEG(name=peg.name, class_name=peg.class_name, is_static=peg.is_static, synchronized=peg.synchronized,
               nodes=out, root=res(peg.root), param_types=peg.param_types, origins=peg.origins,
               locals=peg.locals)


# -- minimization ---------------------------------------------------------------------------------------------
def minimize(peg: PEG) -> PEG:
    """The smallest PEG with the same meaning: keep what the root reaches, merge bisimilar nodes (equal thetas
    left by construction), renumber so that children come before parents except through theta back edges."""
    nodes = list(peg.nodes)  # the input PEG is left as it is
    # a theta whose next value is itself never changes: it is its initial value (theta_l(a, self)[i] = a)
    alias: dict[int, int] = {}
    for n, node in enumerate(nodes):
        if node.op == "theta" and node.children[1] == n:
            alias[n] = node.children[0]

    def res(x: int) -> int:
        seen = 0
        while x in alias and seen < len(alias) + 1:
            x = alias[x]
            seen += 1
        return x

    for n, node in enumerate(nodes):
        if alias and n not in alias and any(c in alias for c in node.children):
            nodes[n] = Node(node.op, node.attr, tuple(res(c) for c in node.children))
    root = res(peg.root)
    work = PEG(nodes=nodes, root=root)
    reach = work.reachable()
    cls = bisimulation_blocks(nodes, reach)
    rep: dict[int, int] = {}
    for n in reach:
        rep.setdefault(cls[n], n)
    out = PEG(name=peg.name, class_name=peg.class_name, is_static=peg.is_static, synchronized=peg.synchronized,
              param_types=peg.param_types)
    new_id: dict[int, int] = {}
    thetas: list[tuple[int, int]] = []

    def visit(root: int) -> int:
        # iterative post-order; theta back edges are patched after
        stack: list[tuple[int, bool]] = [(rep[cls[root]], False)]
        while stack:
            n, done = stack.pop()
            if n in new_id:
                continue
            node = nodes[n]
            if node.op == "theta":
                t = out.new_theta(node.int_attr())
                new_id[n] = t
                thetas.append((n, t))
                for c in node.children:
                    stack.append((rep[cls[c]], False))
                continue
            kids = [rep[cls[c]] for c in node.children]
            if not done:
                stack.append((n, True))
                for c in reversed(kids):
                    if c not in new_id:
                        stack.append((c, False))
                continue
            new_id[n] = out.add(node.op, node.attr, tuple(new_id[c] for c in kids))
        return new_id[rep[cls[root]]]

    out.root = visit(root)
    for n, t in thetas:
        a, b = (rep[cls[c]] for c in nodes[n].children)
        for c in (a, b):
            if c not in new_id:
                visit(c)
        out.set_theta(t, new_id[a], new_id[b])
    for n, off in sorted(peg.origins.items()):  # merged nodes: the first statement's offset
        if n in cls and rep[cls[n]] in new_id:
            out.origins.setdefault(new_id[rep[cls[n]]], off)
    for n, local in sorted(peg.locals.items()):  # merged thetas have equal values: the first one's local
        if n in cls and rep[cls[n]] in new_id and out.nodes[new_id[rep[cls[n]]]].op == "theta":
            out.locals.setdefault(new_id[rep[cls[n]]], local)
    out.seal()
    return out


def rebuilt_peg(peg: PEG, nodes: list[Node], alias: dict[int, int]) -> PEG:
    """``peg``'s rewritten ``nodes`` as a minimized PEG, every reference to a node of ``alias`` (followed to its
    end) made to the node it stands for."""
    def resolve(c: int) -> int:
        while c in alias:
            c = alias[c]
        return c

    out = PEG(name=peg.name, class_name=peg.class_name, is_static=peg.is_static, synchronized=peg.synchronized,
              nodes=[Node(n.op, n.attr, tuple(resolve(c) for c in n.children)) for n in nodes],
              root=resolve(peg.root), param_types=peg.param_types)
    out.seal()
    return minimize(out)
