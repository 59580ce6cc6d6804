"""Reversion: a PEG back to an IR method (Tate 2012, chapter 8, in a demand-driven form).

What this module owns
    :func:`revert_peg`: PEG -> :class:`~peggy_jvm.ir.nodes.IRMethod` with the same meaning, or
    :class:`~.schedule.RevertUnsupported` for the PEGs it cannot turn into code yet (one line saying why);
    :func:`check_revertible`, the same verdict without the tidied code; and
    the emission: :class:`_Emitter` writes blocks, variables and statements for values, effects, conditions,
    phis, loops and results (``gen_*``). What is computed where (availability, the nodes certainly evaluated,
    reach sets, what to hoist, which phis share a branch, sigma chains) it asks its
    :class:`~.schedule.Schedule`, which also keeps the scopes; the blocks it wrote are then tidied by
    :func:`.tidy.tidy_method`.

How
    Code is generated on demand from the root, under one rule that makes it correct: *effects happen in sigma
    order and nothing is computed on a path where the PEG would not evaluate it*.
    * The root's phi-tree of ``return``/``throw`` becomes branches. Generating an effect first generates its sigma
      input (so every earlier effect is emitted first), then its arguments, then one statement. A value is
      computed once per scope and reused (a scope is a branch arm or a loop iteration), so the round trip alone
      removes common subexpressions, dead code and copies (the PEG has one node per distinct value).
    * The root's tests: the effects both arms of a test start with (their common sigma) are emitted before the
      test when the test needs no effect, so they and what follows them are written once; a method that this
      makes the reverter refuse is reverted again without it.
    * Joins: code that several paths of a branch of the root's result tree or of a loop iteration's sigma tree
      end in (the same result, or the same leaf of the iteration with the same break condition and next
      values: the *continuation*) is generated once, after the branch, in a join block every such path jumps
      to (:meth:`_Emitter.plan_joins`), as javac writes it. Each path first computes the continuation's
      *frontier*, the phis on the branch's conditions it reads (:meth:`~.schedule.Schedule.continuation`):
      a sigma phi by running its own effects, a value phi into one variable the join reads; a phi every path
      decides to the same node is that node at the join; a value every path already computed is carried in
      one variable (a copy at the end of each path); the join knows the conditions all paths know. Without a
      join each path writes its own copy, specialised by what it knows (constants for the frontier's values,
      its own tests decided): that is kept when the copies are smaller, counted in statements and tests
      (:meth:`~.schedule.Schedule.code_weight`): the copies' sum against the continuation once plus, per
      path, a jump (but one: a path falls into the join) and a copy per frontier value, and the join's reads
      of them (``a[2] = y; return 0;`` after ``y`` set to 5 or 9 keeps a copy per arm, with constants; a loop
      after the method's argument checks is written once). A path that cannot compute a frontier value writes its copy; a method whose join is
      refused (its continuation reads an effect's value only some paths ran) is reverted again without joins.
      A continuation is not only a leaf of the tree: a phi below an iteration tree's root that several paths
      reach is joined first, outermost first, with its whole subtree (:meth:`_Emitter.plan_tree_joins`;
      JAMA ``hqr2``: ``s = Math.sqrt(...); if (p < 0) s = -s; if (s != 0) {...}`` after ``if (k != m)
      {...; if (x == 0.0) continue; ...}``, reached from both arms); a sigma phi of its frontier that the
      subtree does not certainly run is tested again in the join (each path may only run what it certainly
      runs before it jumps). Leaves whose next values or outputs differ only in phis their paths decide are
      one continuation, its roots the nodes every path decides to its own (:meth:`_Emitter.continuations`).
    * A test of a flag, ``phi(d, 1, 0) == 0`` (javac's ``if (notlast)`` on a ``boolean`` local), is the test of
      its condition ``d`` when that is one comparison (:meth:`_Emitter.flag_test`), not the flag computed into
      1 or 0 by a branch in each scope and then tested.
    * Latches: the paths of an iteration that end in different effects but leave it alike (the same break
      condition) run their own effects and jump to one latch that tests the break condition and computes the
      next values (:meth:`_Emitter.plan_latch`), as javac writes a ``continue`` or the end of an ``if``/``else``
      in a loop body: a ``goto`` to the one increment. A next value that differs per path is a frontier value;
      it goes straight into its theta's variable when the latch does not read that theta. Before a branch of
      an iteration, the pure values every path of it certainly needs are computed once
      (:meth:`_Emitter.hoist_iteration_needs`; not a variable plus a constant, which ``iinc`` and the lowering
      recompute for free).
    * A phi becomes a branch. All phis with the same condition that are wanted at that point are emitted
      together as one branch (branch fusion), their values joined in fresh variables; a phi on sigma first emits
      the effects its two arms share (the sigma where control split), then the condition, then each arm.
    * A loop (one ``pass`` node) becomes a header, a body and an exit. Before the loop, the thetas' initial
      values are computed and invariant pure inputs that need no branch or loop are hoisted out (loop-invariant
      code motion when no theta or phi lies between; the result of an effect already run counts as an input:
      ``p / r`` with ``r = Math.sqrt(...)`` computed before the loop leaves it). In the header, one fused branch structure, driven by the
      phi-tree of the sigma the iteration ends with (the ``guard`` of the break condition), computes the break
      flag, every theta's next value and every value the loop's ``eval`` nodes read, each on the paths where
      the PEG defines it; the flag then decides between the exit and the latch, which assigns the thetas.
      Several ``eval`` nodes of one pass read one loop (loop fusion).
    * Loops off the sigma chain (dead-loop deletion makes them): a loop with no effect whose break condition
      provably becomes true (:func:`pure_loops`) is computed where its values are wanted, like a pure value; an
      inner one again at every iteration of its outer loop, and again wherever its scope has ended.
    * Before the operands of a pure node are generated, a value a later operand certainly needs and an earlier
      one may compute in a branch arm is computed first, once for every path (partial redundancy elimination);
      invariant branches with pure arms leave a loop like other invariant values (branch hoisting).
    * A value is computed on a path only when everything it needs is available there: no effect, loop on the
      sigma chain or theta that this path has not run. Otherwise the variable gets a zero that is never read
      (the sigma chain proves no run of that path needs it; a value that needs only a pure loop is never
      given that zero: the method is refused instead).
    * Exception handling: a branch on ``threw(o)`` puts the statement of effect ``o`` alone in a block whose
      handler catches any exception; the handler block binds ``rho_exc(o)`` (and ``rho_esigma(o)``) and goes on
      with the PEG's own dispatch (``instanceof`` tests, a ``throw`` of what no original handler takes: the same
      object, rethrown). The operands are computed before that block, so the handler can read every variable
      set before the statement. Refused (named): an exception value or heap needed outside its handler, a test
      of ``threw(o)`` after ``o`` ran, a checked division in a try region.

    * The code is then put in javac's shape: thetas that only carry a value through an inner loop are that value
      (before generation); afterwards :func:`.tidy.tidy_method` (copies coalesced, equal blocks merged, ``switch``
      rebuilt, javac's layout, under ``--goal speed`` loops tested at the bottom: see :mod:`.tidy`), and last
      :func:`.order.values_after_their_reads` (a value kept in a local computed right after the read it takes).

Inputs: a PEG from :func:`peggy_jvm.peg.build.build_peg` (or an extracted one) and the original IR method
(for its name, descriptor and parameter variables).
Outputs: an IRMethod for :func:`peggy_jvm.ir.lower.lower_method`.
Invariants: every effect node reachable from the root is emitted exactly once on every path that reaches it,
in sigma order; statements carry the bytecode origin of the effect they come from (``PEG.origins``), others
none (``origin = -1``).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable, Hashable, TypeVar, cast

from ..ir.nodes import (INT, LONG, ArrayLength, ArrayLoad, ArrayStore, Binary, Block, Bootstrap, Catch, CheckCast,
                        ClassInit, Cond, Const, Copy, FieldRef, GetField, GetStatic, Goto, Handler, If, InstanceOf,
                        Invoke, InvokeDynamic, InvokeKind, IRMethod, IRType, Kind, MethodRef, MonitorEnter,
                        MonitorExit, New, NewArray, Operand, PutField, PutStatic, Return, Stmt, Terminator, Throw,
                        Unary, Var)
from ..ir.nodes import FLOAT, DOUBLE, REF, NULL_TYPE, CarriedLocal
from ..peg.build import minimize
from ..peg.graph import PEG, Node
from ..peg.loops import poly_sigma
from ..peg.ops import HANDLER_OPS, OPS, Role, T
from ..semantics import int_bits_to_float, long_bits_to_double
from .order import values_after_their_reads
from .schedule import DONE, INVOKE, RevertUnsupported, Schedule
from .tidy import ReturnsInPlace, tidy_method


HANDLERS_NOT_REVERTED = "exception handlers are not reverted yet"
#: why a PEG with both exception handling and a monitor is refused (:func:`_unsupported_handling`); the triage
#: (``triage.never_revertible``) skips the saturation of such a method on this exact refusal
WITH_MONITORS = "exception handling with monitors"
#: reverted code of a method with exception handling may have this many statements per original one (plus 64)
STATEMENTS_PER_ORIGINAL = 4
#: a branch whose tree of paths (result or iteration phis) has more leaves than this plans no join of its own
#: (the tree is a DAG: its paths can be exponentially many); the branches inside it plan theirs
MAX_JOIN_LEAVES = 256
#: the int comparisons of a test (``eq.i`` ...), as Python predicates
_INT_TESTS: dict[str, Callable[[int, int], bool]] = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "ge": lambda a, b: a >= b, "gt": lambda a, b: a > b, "le": lambda a, b: a <= b}
_NO_VALUE = frozenset({"putfield", "putstatic", "astore", "classinit", "monitorenter", "monitorexit",
                       "check.zero.i", "check.zero.l"})


def _zero(t: IRType) -> Const:
    k = t.kind
    if k is Kind.INT:
        return Const(INT, 0)
    if k is Kind.LONG:
        return Const(LONG, 0)
    if k is Kind.FLOAT:
        return Const(FLOAT, 0.0)
    if k is Kind.DOUBLE:
        return Const(DOUBLE, 0.0)
    return Const(NULL_TYPE, None)


class _Emitter:
    """Writes the code: blocks, variables and statements for values, effects, conditions, phis, loops and
    results (the ``gen_*`` methods), asking its :class:`~.schedule.Schedule` what is computed where."""

    def __init__(self, peg: PEG, original: IRMethod, result_prefixes: bool = True,
                 returns: ReturnsInPlace = ReturnsInPlace.ALL, rotate_loops: bool = False, joins: bool = True,
                 tree_joins: bool = True) -> None:
        self.peg = peg
        # continuations several paths reach generated once (plan_joins); joined: whether any path took one
        self.joins = joins
        self.tree_joins = tree_joins  # also the phis below an iteration tree's root (plan_tree_joins)
        self.joined = False
        self.pending: dict[Hashable, _Join] = {}
        # the iteration joins planned, by loop header and node: a path whose loop code differs from a join's in
        # phis it decides alike reaches it too (:meth:`fitting_join`)
        self.pending_at: dict[tuple[int, int], list[_Join]] = {}
        self.rotate_loops = rotate_loops
        # emit the effects both arms of a result's test start with before the test (gen_result)
        self.result_prefixes = result_prefixes
        self.returns = returns
        self.nodes = peg.nodes
        self.m = original
        self.sched = Schedule(peg, original.params)
        self.blocks: dict[int, Block] = {}
        self.cur: Block | None = None
        self.result_outs: dict[int, tuple[str, Var | None]] = {}  # eval of a return/throw -> its value
        self.last_init: tuple[ClassInit, int] | None = None  # the latest ClassInit, for pairing with its New
        self.variables: list[Var] = list(original.params)
        self.next_var = max((v.id for v in original.params), default=-1) + 1
        self.room: int | None = None
        if uses_handlers(peg):
            why = _unsupported_handling(peg.nodes, self.sched.variance, self.sched.users)
            if why is not None:
                raise RevertUnsupported(f"{HANDLERS_NOT_REVERTED}: {why}")
            # each try region's continuation is generated on its normal path and again after its handler, so a
            # chain of them (a $SwitchMap <clinit>) doubles the code per region: refused past this many statements
            self.room = STATEMENTS_PER_ORIGINAL * sum(len(b.stmts) + 1 for b in original.blocks.values()) + 64
        # a theta's variable, the original local it carries (PEG.locals) and its loop's header block: debug
        # information, given to the variables whose header survives tidying (:meth:`mark_locals`)
        self.carried: list[tuple[Var, tuple[int, int], Block]] = []

    # -- blocks and variables -------------------------------------------------------------------------------
    def new_block(self) -> Block:
        b = Block(len(self.blocks))
        self.blocks[b.id] = b
        return b

    def new_var(self, t: IRType) -> Var:
        v = Var(self.next_var, t, f"p{self.next_var}")
        self.next_var += 1
        self.variables.append(v)
        return v

    def emit(self, st: Stmt) -> None:
        if self.cur is not None:
            self.cur.stmts.append(st)
            if self.room is not None:
                self.room -= 1
                if self.room < 0:
                    raise RevertUnsupported(f"{HANDLERS_NOT_REVERTED}: the try regions' code would be copied "
                                            f"more than {STATEMENTS_PER_ORIGINAL} times over")

    def end(self, term: Terminator) -> None:
        if self.cur is not None:
            self.cur.terminator = term
        self.cur = None

    def goto(self, b: Block) -> None:
        self.end(Goto(b.id))

    # -- values ---------------------------------------------------------------------------------------------
    def gen(self, n: int):
        """Emit what computes ``n`` (if not yet in scope) and return its operand (None for sigma)."""
        got = self.sched.lookup(n)
        if got is not None:
            return None if got is DONE else got
        node = self.nodes[n]
        op, attr, ch = node.op, node.attr, node.children
        spec = OPS[op]
        role = spec.role
        if role is Role.CONST:
            v = self.constant(op, attr)
            return v
        if op == "param":  # a node's attribute has the type its operator gives it (peg/ops.py, OpSpec.attr)
            return self.m.params[cast(int, attr)]
        if op == "sigma0":
            raise RevertUnsupported("the entry heap was not bound")
        if role is Role.PURE:
            if op == "guard":
                raise RevertUnsupported("guard used as a value")
            if spec.output is T.BOOL:
                return self.bool_value(n)
            if len(ch) > 1:
                self.hoist_common(ch)
            args = [self.gen(c) for c in ch]
            dst = self.new_var(self.sched.type_of(n))
            if op == "instanceof":
                self.emit(InstanceOf(dst, args[0], cast(str, attr)))
            elif len(args) == 1:
                self.emit(Unary(dst, op, args[0]))
            else:
                self.emit(Binary(dst, op, args[0], args[1]))
            self.sched.bind(n, dst)
            return dst
        if role is Role.PROJECTION:
            if op == "threw":
                return self.bool_value(n)
            if op in ("rho_exc", "rho_esigma"):  # bound by gen_try on the handler's path only
                raise RevertUnsupported(f"{HANDLERS_NOT_REVERTED}: an exception read outside its handler")
            o = ch[0]
            r = self.gen_effect(o)
            if op == "rho_sigma":
                return None
            if r is None:
                raise RevertUnsupported(f"value of {self.peg.describe(o)} has no variable")
            return r
        if role is Role.EFFECT:
            self.gen_effect(n)
            return None
        if op == "phi":
            return self.gen_phi(n)
        if op == "eval":
            return self.gen_eval(n)
        if op == "theta":
            raise RevertUnsupported("theta outside its loop")
        raise RevertUnsupported(f"cannot revert {op}")

    def constant(self, op: str, attr: object) -> Const:
        if op == "const.i":
            return Const(INT, attr)
        if op == "const.l":
            return Const(LONG, attr)
        if op == "const.f":
            return Const(FLOAT, int_bits_to_float(cast(int, attr)))  # the raw bits (peg/ops.py)
        if op == "const.d":
            return Const(DOUBLE, long_bits_to_double(cast(int, attr)))
        if op == "const.a":
            return cast(Const, attr)
        if op == "const.b":
            return Const(INT, 1 if attr else 0)
        raise RevertUnsupported(f"constant {op}")

    def bool_value(self, n: int) -> Var:
        dst = self.new_var(INT)
        t, f, j = self.new_block(), self.new_block(), self.new_block()
        self.gen_cond(n, t, f)
        for blk, v in ((t, 1), (f, 0)):
            self.cur = blk
            self.emit(Copy(dst, Const(INT, v)))
            self.goto(j)
        self.cur = j
        self.sched.bind(n, dst)
        return dst

    # -- effects --------------------------------------------------------------------------------------------
    def gen_sigma(self, s: int) -> None:
        if self.sched.lookup(s) is not None:
            return
        op = self.nodes[s].op
        if op == "rho_sigma":
            self.gen_effect(self.nodes[s].children[0])
        elif op == "phi":
            self.gen_phi(s)
        elif op == "eval":
            self.gen_eval(s)
        elif op == "sigma0":
            raise RevertUnsupported("the entry heap was not bound")
        elif op == "rho_esigma":  # bound by gen_try on the handler's path only
            raise RevertUnsupported(f"{HANDLERS_NOT_REVERTED}: an exception's heap needed outside its handler")
        else:
            raise RevertUnsupported(f"sigma from {op}")
        self.sched.bind(s, DONE)

    def gen_effect(self, o: int, handler: Block | None = None, normal: Block | None = None):
        """Emit effect ``o`` (after its heap and operands) and return its value's variable. With ``handler``, the
        statement is alone in a block whose exceptions go to ``handler`` (any type), and ``normal`` follows it."""
        got = self.sched.lookup(o)
        if got is not None:
            return None if got is DONE else got
        if self.sched.ran_in_joined_arm(o):
            raise RevertUnsupported("an effect is needed again after the branch it ran in")
        node = self.nodes[o]
        op, attr, ch = node.op, node.attr, node.children
        self.gen_sigma(ch[0])
        args = [self.gen(c) for c in ch[1:]]
        if op == "athrow" and handler is None:
            # an inlined callee's explicit throw (rules/inline.py): the method ends here on this path, and what
            # follows the throw's heap is never run (the block ends; emit and goto ignore a closed path)
            throw = Throw(args[0])
            throw.origin = self.peg.origins.get(o, -1)
            self.end(throw)
            self.sched.bind(o, DONE)
            return None
        dst: Var | None = None
        if op not in _NO_VALUE and not self._void(op, attr):
            dst = self.new_var(self.sched.value_type(o))
        if op in ("check.zero.i", "check.zero.l"):
            if handler is not None:
                raise RevertUnsupported(f"{HANDLERS_NOT_REVERTED}: a checked division in a try region")
            self.sched.bind(o, args[0])
            # the check is a division by the checked value: emit one the method needs here if its dividend is
            # at hand (javac's own shape), else divide zero by it
            d = self.sched.division_checked_by(o)
            if d is not None:
                dn = self.nodes[d]
                a = self.gen(dn.children[0])
                dst = self.new_var(self.sched.type_of(d))
                self.emit(Binary(dst, dn.op, a, args[0], origin=self.peg.origins.get(o, -1)))
                self.sched.bind(d, dst)
                return args[0]
            wide = op.endswith("l")
            tmp = self.new_var(LONG if wide else INT)
            self.emit(Binary(tmp, "div.l" if wide else "div.i", Const(LONG if wide else INT, 0), args[0],
                             origin=self.peg.origins.get(o, -1)))
            return args[0]
        # the attribute has the type its operator gives it (peg/ops.py, OpSpec.attr): the casts say which
        st: Stmt
        val = cast(Var, dst)  # the variable of an operator with a value (set above; read only by those)
        if op == "getfield":
            st = GetField(val, args[0], cast(FieldRef, attr))
        elif op == "putfield":
            st = PutField(args[0], cast(FieldRef, attr), args[1])
        elif op == "getstatic":
            st = GetStatic(val, cast(FieldRef, attr))
        elif op == "putstatic":
            st = PutStatic(cast(FieldRef, attr), args[0])
        elif op == "aload":
            st = ArrayLoad(val, args[0], args[1], cast(str, attr))
        elif op == "astore":
            st = ArrayStore(args[0], args[1], args[2], cast(str, attr))
        elif op == "arraylength":
            st = ArrayLength(val, args[0])
        elif op == "newarray":
            st = NewArray(val, cast(str, attr), list(args))
        elif op == "classinit":
            init_st = ClassInit(cast(str, attr))
            st = init_st
            self.last_init = (init_st, o)
        elif op == "new":
            init = None
            prev = self.nodes[ch[0]]
            li = self.last_init
            # the latest class initialization of this class in this block, if no New took it yet: lowering pairs
            # the two (``new; dup`` under the arguments) when what lies between computes only the arguments
            cls, constructor = cast(tuple[str, MethodRef], attr)
            if prev.op == "rho_sigma" and li is not None and self.nodes[li[1]].attr == cls \
                    and self.cur is not None and li[0] in self.cur.stmts:
                init = li[0]
                self.last_init = None
            st = New(val, cls, constructor, list(args), init)
        elif op in INVOKE:
            kind = INVOKE[op]
            recv = args[0] if kind is not InvokeKind.STATIC else None
            rest = args[1:] if kind is not InvokeKind.STATIC else args
            st = Invoke(dst, kind, cast(MethodRef, attr), recv, list(rest))
        elif op == "invokedynamic":
            name, desc, bsm = cast(tuple[str, str, Bootstrap], attr)
            st = InvokeDynamic(dst, name, desc, bsm, list(args))
        elif op == "checkcast":
            st = CheckCast(val, args[0], cast(str, attr))
        elif op == "monitorenter":
            st = MonitorEnter(args[0])
        elif op == "monitorexit":
            st = MonitorExit(args[0])
        elif op == "athrow" and handler is not None:
            st = Throw(args[0])  # always leaves through the handler
        else:
            raise RevertUnsupported(f"effect {op}")
        st.origin = self.peg.origins.get(o, -1)  # the original statement's line (debug information)
        if handler is None:
            self.emit(st)
        else:
            # alone in its try range: the operands were computed before it, so the handler may read every
            # variable set so far (one set inside the range would be unset there for the verifier)
            body = self.new_block()
            body.handlers = (Handler(None, handler.id),)
            self.goto(body)
            self.cur = body
            if isinstance(st, Throw):
                self.end(st)
            else:
                self.emit(st)
                self.goto(cast(Block, normal))  # given with every handler (gen_try)
        self.sched.bind(o, dst if dst is not None else DONE)
        return dst

    def gen_try(self, o: int, caught: Block, normal: Block) -> None:
        """The branch on ``threw(o)``: ``o`` runs in a try range whose handler (any exception) binds the exception
        and goes to ``caught``; the normal path goes to ``normal``. The PEG's own dispatch (``instanceof`` tests
        and a ``throw`` of what no handler takes) follows in ``caught``, so catching everything here changes
        nothing: an exception no original handler took is thrown again, the same object."""
        if self.sched.lookup(o) is not None:
            raise RevertUnsupported(f"{HANDLERS_NOT_REVERTED}: an exception test after its effect ran")
        handler = self.new_block()
        self.gen_effect(o, handler, normal)
        exc = self.new_var(REF)
        for u in self.sched.users.get(o, ()):
            if self.nodes[u].op == "rho_exc":
                self.sched.bind(u, exc)
            elif self.nodes[u].op == "rho_esigma":
                self.sched.bind(u, DONE)
        self.cur = handler
        self.emit(Catch(exc))
        self.goto(caught)

    @staticmethod
    def _void(op: str, attr: object) -> bool:
        if op in INVOKE:
            return cast(MethodRef, attr).descriptor.endswith(")V")  # typed by the operator, as in gen_effect
        if op == "invokedynamic":
            return cast(tuple[str, str, Bootstrap], attr)[1].endswith(")V")
        return False

    # -- conditions -----------------------------------------------------------------------------------------
    def gen_cond(self, c: int, t: Block, f: Block) -> None:
        """Branch to ``t`` when the bool node ``c`` holds, else to ``f``."""
        node = self.nodes[c]
        op, ch = node.op, node.children
        if self.cur is None:
            return
        known = self.sched.fact(c)
        same = self.sched.settled_as(c) if op == "phi" else None
        if known is not None:
            self.goto(t if known else f)
        elif same is not None:
            self.gen_cond(same, t, f)
        elif op == "const.b":
            self.goto(t if node.attr else f)
        elif op == "not":
            self.gen_cond(ch[0], f, t)
        elif op == "threw":
            self.gen_try(ch[0], t, f)
        elif op == "guard":
            self.gen_sigma(ch[0])
            self.gen_cond(ch[1], t, f)
        elif op in ("and", "or"):
            mid = self.new_block()
            if op == "and":
                self.gen_cond(ch[0], mid, f)
            else:
                self.gen_cond(ch[0], t, mid)
            self.cur = mid
            self.sched.arms()
            self.sched.push()
            self.gen_cond(ch[1], t, f)
            self.sched.pop()
            self.sched.join()
        elif op == "phi":
            a, b = self.new_block(), self.new_block()
            self.gen_cond(ch[0], a, b)
            self.sched.arms()
            for blk, k in ((a, 1), (b, 2)):
                self.cur = blk
                self.sched.push(known=(ch[0], k == 1))
                self.gen_cond(ch[k], t, f)
                self.sched.pop()
            self.sched.join()
        elif op in ("eq.a", "ne.a"):
            x, y = self.gen(ch[0]), self.gen(ch[1])
            self.end(If(Cond.EQ if op == "eq.a" else Cond.NE, x, y, t.id, f.id))
        elif op.endswith(".i") and op[:-2] in _INT_TESTS:
            folded = self.flag_test(op[:-2], ch[0], ch[1])
            if folded is not None:
                d, positive = folded
                if positive:
                    self.gen_cond(d, t, f)
                else:
                    self.gen_cond(d, f, t)
                return
            x, y = self.gen(ch[0]), self.gen(ch[1])
            self.end(If(Cond(op[:-2]), x, y, t.id, f.id))
        elif op == "eval":
            v = self.gen(c)
            self.end(If(Cond.NE, v, Const(INT, 0), t.id, f.id))
        else:
            raise RevertUnsupported(f"condition {op}")

    def flag_test(self, cmp: str, a: int, b: int) -> tuple[int, bool] | None:
        """A test of a flag against a constant, ``phi(d, 1, 0) == 0`` (javac's ``if (notlast)`` on ``boolean
        notlast = k != n - 1``), as the test of the flag's own condition ``d``: ``(d, True)`` when the test holds
        exactly where ``d`` does, ``(d, False)`` where ``d`` does not. Else None: the flag is computed (once per
        scope, into a variable, by a branch) and compared, 15 bytes a test where its condition alone takes 7.
        Only an int flag not computed yet whose arms are constants, a constant on the other side, and a
        condition that is one comparison (writing it again costs what reading the flag costs)."""
        first = self.nodes[b].op == "const.i"
        phi, k = (self._through_evals(a), b) if first else (self._through_evals(b), a)
        pn, kn = self.nodes[phi], self.nodes[k]
        if pn.op != "phi" or kn.op != "const.i" or self.sched.lookup(phi) is not None or \
                self.sched.settled_as(phi) is not None:
            return None
        d, x, y = pn.children
        if self.nodes[x].op != "const.i" or self.nodes[y].op != "const.i" or self.sched.fact(d) is not None:
            return None
        inner, _ = self.sched.tested(d)
        iop = self.nodes[inner].op
        if not (iop in ("eq.a", "ne.a") or (iop.endswith(".i") and iop[:-2] in _INT_TESTS)):
            return None

        def holds(v: int) -> bool:
            lhs, rhs = (v, cast(int, kn.attr)) if first else (cast(int, kn.attr), v)
            return _INT_TESTS[cmp](lhs, rhs)
        on_x, on_y = holds(cast(int, self.nodes[x].attr)), holds(cast(int, self.nodes[y].attr))
        if on_x == on_y:
            return None  # a constant test: the usual code decides it (no test written when its flag is known)
        return d, on_x

    # -- phi ------------------------------------------------------------------------------------------------
    def gen_phi(self, n: int):
        c = self.nodes[n].children[0]
        known = self.sched.fact(c)
        same = self.sched.settled_as(n)
        if known is not None or same is not None:
            r = self.gen(self.nodes[n].children[1 if known else 2] if same is None else same)
            self.sched.bind(n, r if r is not None else DONE)
            return r
        if self.sched.is_sigma(n):
            self.emit_common_prefix(n)  # first: then the siblings' needs are judged from the branch point
        else:
            self.pull_sigma_phi(n, c)  # a value made by effects of a branch: emit that branch as a whole
        if self.sched.lookup(n) is not None:
            r = self.sched.lookup(n)
            return None if r is DONE else r
        group = self.sched.siblings(n, c)
        if len([p for p in group if self.sched.is_sigma(p)]) > 1:
            group = [p for p in group if p == n or not self.sched.is_sigma(p)]
        self.branch_group(c, group)
        r = self.sched.lookup(n)
        return None if r is DONE else r

    def pull_sigma_phi(self, n: int, c: int) -> None:
        """Value phi ``n`` is wanted before the sigma phi of its branch: emit that branch now when its arms run
        effects ``n``'s arms need (:meth:`~.schedule.Schedule.branch_to_pull`)."""
        u = self.sched.branch_to_pull(n, c)
        if u is not None:
            self.gen_sigma(u)

    def emit_common_prefix(self, p: int) -> None:
        """Emit the effects both arms of sigma phi ``p`` certainly start from (the sigma where control split)."""
        first = self.sched.split_point(p)
        if first is not None:
            self.gen_sigma(first)

    def hoist_common(self, ch: tuple[int, ...]) -> None:
        """Before the operands of one pure node are generated in order: a value a later operand certainly needs,
        and that something else uses too, is computed first, here, so that it is computed once on every path
        (partial redundancy elimination: without this an earlier operand may compute it in a branch arm, whose
        scope ends at the join, and the later operand computes it again). Only pure values available here, which
        have no effect and always end, are moved."""
        for j in range(1, len(ch)):
            for x in self.sched.operand_hoists(ch[j]):
                if self.sched.lookup(x) is None and self.sched.hoistable(x, set()) and self.sched.available(x):
                    self.gen(x)

    def hoist_shared(self, arms: list[tuple[int, int]]) -> None:
        """Compute before a branch the values both arms certainly need (hoisting of always-evaluated nodes),
        when that needs no effect, loop or theta the branch point has not run."""
        for x in self.sched.shared_needs(arms):
            if self.sched.lookup(x) is None and self.sched.available(x):
                self.gen(x)

    def branch_group(self, c: int, group: list[int]) -> None:
        """One branch on ``c`` computing every phi of ``group``, values joined in fresh variables."""
        self.hoist_shared([(self.nodes[p].children[1], self.nodes[p].children[2]) for p in group
                              if not self.sched.is_sigma(p)])
        vals = {p: self.new_var(self.sched.type_of(p)) for p in group if not self.sched.is_sigma(p)}
        t, f, j = self.new_block(), self.new_block(), self.new_block()
        self.gen_cond(c, t, f)
        reached = False
        self.sched.arms()
        for blk, k in ((t, 1), (f, 2)):
            self.cur = blk
            self.sched.push(known=(c, k == 1))
            for p in group:
                if self.sched.is_sigma(p):
                    self.gen_sigma(self.nodes[p].children[k])
            for p, v in vals.items():
                r = self.gen(self.nodes[p].children[k])
                self.emit(Copy(v, r))
            self.sched.pop(joined=self.cur is not None)
            if self.cur is not None:
                reached = True
                self.goto(j)
        self.sched.join()
        self.cur = j if reached else None
        for p in group:
            self.sched.bind(p, vals.get(p, DONE))

    # -- loops ----------------------------------------------------------------------------------------------
    def gen_eval(self, n: int):
        x, p = self.nodes[n].children
        if self.nodes[p].op != "pass":
            raise RevertUnsupported("eval of a non-pass index")
        d = self.nodes[n].attr
        if d not in self.sched.variance[x]:  # invariant in the loop: its value once the loop has ended
            if p not in self.sched.pure:  # a pure loop ends and does nothing else: no need to run it for x
                self.gen_loop(p)
            r = self.gen(x)
            self.sched.bind(n, r if r is not None else DONE)
            return r
        self.gen_loop(p)
        r = self.sched.lookup(n)
        if r is None and p in self.sched.pure and self.cur is not None:
            # a pure loop that ran elsewhere (another arm, an earlier iteration) or without this output: running
            # it again here computes the same values and does nothing else
            self.gen_loop(p, only=n)
            r = self.sched.lookup(n)
        if r is None:
            raise RevertUnsupported("a loop output was not computed")
        return None if r is DONE else r

    def gen_loop(self, p: int, only: int | None = None) -> None:
        """Emit loop ``p`` here with the values its ``eval`` nodes read (``only``: a pure loop run again for
        that one eval)."""
        if only is None and self.sched.lookup(p) is not None:
            return
        if self.cur is None:
            self.sched.bind(p, DONE)
            return
        d = self.nodes[p].attr
        assert isinstance(d, int)
        if p in self.sched.pure and d in self.sched.open_depths:
            # its thetas may be shared with the open loop's (equal sequences are one class): values computed from
            # the open loop's variables would be reused inside this one
            raise RevertUnsupported("a loop is needed inside another loop of the same depth")
        guard = self.nodes[p].children[0]
        if self.nodes[guard].op != "guard":
            raise RevertUnsupported("a loop without a guarded break condition")
        s_end, brk = self.nodes[guard].children
        evals = [e for e in self.sched.evals_of.get(p, ()) if d in self.sched.variance[self.nodes[e].children[0]]]
        if p in self.sched.pure:
            # a pure loop computes the outputs that can be computed here; one wanted later, where more is
            # available, runs it again (an eval needing an effect not run yet must not get a dead zero)
            evals = [e for e in evals if e == only or
                     (only is None and self.sched.available(self.nodes[e].children[0], True, frozenset({p})))]
        thetas = self.sched.loop_thetas(p, d, evals)
        # preheader: initial values, then hoisted invariant inputs
        tvars: dict[int, object] = {}
        carried: list[tuple[Var, tuple[int, int]]] = []
        for th in thetas:
            init = self.nodes[th].children[0]
            if self.sched.is_sigma(th):
                self.gen_sigma(init)
                tvars[th] = DONE
            else:
                v = self.new_var(self.sched.type_of(th))
                self.emit(Copy(v, self.gen(init)))
                tvars[th] = v
                if th in self.peg.locals:
                    carried.append((v, self.peg.locals[th]))
        if p in self.sched.pure:
            # its heap does not change in the loop: any effect it still needs runs once, here, never in the header
            self.gen_sigma(s_end)
        self.hoist_invariants(p, d, thetas, evals)
        header, exit_ = self.new_block(), self.new_block()
        self.carried += [(v, local, header) for v, local in carried]
        self.goto(header)
        self.cur = header
        self.sched.arms()
        self.sched.push(dict(tvars))
        # the iteration: one fused branch structure over the sigma the iteration ends with; each path ends by
        # going to the exit (loop outputs assigned) or back to the header (thetas assigned)
        # outputs: every value the loop's evals read; a method result read at the exit (a return inside the
        # loop) is its value, and the return itself is emitted where the result is wanted
        outs: list[tuple[int, Var]] = []
        for e in evals:
            x = self.nodes[e].children[0]
            if self.nodes[x].op in ("return", "throw"):
                value = self.nodes[x].children[1]
                var = None
                if self.nodes[value].op != "unit":
                    var = self.new_var(self.sched.type_of(value))
                    outs.append((value, var))
                self.result_outs[e] = (self.nodes[x].op, var)
            elif self.sched.is_result(x):
                raise RevertUnsupported("a loop ends the method in several ways")
            elif not self.sched.is_sigma(e):
                outs.append((x, self.new_var(self.sched.type_of(e))))
        loop = _LoopCode(header, exit_, brk,
                         [(self.nodes[th].children[1], cast(Var, tvars[th]))  # a value theta's variable
                          for th in thetas if not self.sched.is_sigma(th)],
                         outs, {id(tvars[th]): th for th in thetas if not self.sched.is_sigma(th)})
        self.sched.open_loop(d)
        self.iteration(s_end, loop, [x for x, _ in loop.nexts] + [x for x, _ in loop.outs] + [brk])
        self.sched.close_loop()
        self.sched.pop()
        self.sched.join()
        self.cur = exit_
        self.sched.bind(p, DONE)
        by_node = {x: v for x, v in outs}
        for e in evals:
            x = self.nodes[e].children[0]
            own = e not in self.result_outs and not self.sched.is_sigma(e)
            self.sched.bind(e, by_node.get(x, DONE) if own else DONE)

    def iteration(self, s: int, loop: _LoopCode, wanted: list[int]) -> None:
        """Emit the effects of sigma tree ``s``; on each path, leave the iteration as the break condition says."""
        node = self.nodes[s]
        # a leaf, or a phi below a tree's root
        planned = self.pending.get(_LoopCode.leaf_key(s, loop)) or self.fitting_join(s, loop)
        if planned is not None and self.arrive(planned):
            return
        if node.op == "phi" and self.sched.lookup(s) is None:
            same = self.sched.settled_as(s)  # decided alike by every path to the join this is in
            if same is not None:
                self.iteration(same, loop, wanted)
                return
            c = node.children[0]
            known = self.sched.fact(c)  # a branch this path already took (e.g. an exception's, in its handler)
            if known is not None or self.nodes[c].op == "const.b":
                k = 1 if (known if known is not None else self.nodes[c].attr) else 2
                self.iteration(node.children[k], loop.split(self.sched, c, k), self.sched.split(wanted, c, k))
                return
            self.emit_common_prefix(s)
            leaves = self.iteration_leaves(s, loop)
            self.hoist_iteration_needs(leaves)
            if not self.joins:
                leaves = None
            outer = set(self.pending)
            joins, reached = self.plan_tree_joins(leaves, outer)
            joins += self.plan_latch(s, loop, reached, outer)
            t, f = self.new_block(), self.new_block()
            self.gen_cond(c, t, f)
            self.sched.arms()
            for blk, k in ((t, 1), (f, 2)):
                self.cur = blk
                self.sched.push(known=(c, k == 1))
                self.iteration(node.children[k], loop.split(self.sched, c, k), self.sched.split(wanted, c, k))
                self.sched.pop()
            self.sched.join()
            self.cur = None
            for key, j in joins:
                self.sched.arms()
                if self.enter_join(key, j):
                    leaf, split = cast(tuple[int, _LoopCode], j.leaf)
                    self.iteration(leaf, split, [])
                    self.sched.pop()
                self.sched.join()
            self.cur = None
            return
        latch = self.pending.get(loop.latch_key(self.sched, {}))
        if latch is not None:
            self.gen_sigma(s)  # this path's own effects: the latch's sigma on this path (arrive skips it)
            if self.arrive(latch):
                return
        self.gen_sigma(s)
        brk = self.nodes[loop.brk]
        if brk.op == "const.b":
            self.leave(loop, bool(brk.attr))
            return
        x, b = self.new_block(), self.new_block()
        self.gen_cond(loop.brk, x, b)
        self.sched.arms()
        for blk, out in ((x, True), (b, False)):
            self.cur = blk
            self.sched.push(known=(loop.brk, out))
            self.leave(loop, out)
            self.sched.pop()
        self.sched.join()
        self.cur = None

    def hoist_iteration_needs(self, leaves: list[_Leaf] | None) -> None:
        """Before a branch of a loop iteration: compute the pure values every path of it certainly needs (its
        effects' operands, its break condition, and the next values where it goes back or the outputs where it
        leaves), when they are available here, as javac computes ``w = H[i][i] - p;`` before the ``if`` that
        reads ``w`` in both arms (JAMA ``hqr2``). Otherwise each arm computes its own copy, and a value a theta
        carries takes a local on each path."""
        if not leaves:
            return
        memo: dict[int, frozenset[int]] = {}
        common: set[int] | None = None
        for leaf in leaves:
            x, lc = cast(tuple[int, _LoopCode], leaf.payload)
            need = set(self.sched.must(x, memo)) | self.sched.must(lc.brk, memo)
            brk = self.nodes[lc.brk]
            if brk.op == "const.b":
                for y, _ in (lc.outs if brk.attr else lc.nexts):
                    need |= self.sched.must(y, memo)
            common = need if common is None else common & need
            if not common:
                return
        for x in sorted(cast(set[int], common)):
            node = self.nodes[x]
            if OPS[node.op].role is not Role.PURE or OPS[node.op].output is T.BOOL or node.op == "guard" or \
                    self._step(x) or self._flag(x):
                continue
            if self.sched.lookup(x) is None and self.sched.available(x):
                self.gen(x)

    def _through_evals(self, x: int) -> int:
        """``x`` without the evals of loops it does not vary in that have run or need not run (a pure loop):
        what :meth:`gen_eval` computes for them."""
        for _ in range(len(self.nodes)):
            node = self.nodes[x]
            if node.op != "eval" or self.sched.lookup(x) is not None:
                return x
            y, p = node.children
            if node.attr in self.sched.variance[y] or (p not in self.sched.pure and self.sched.lookup(p) is None):
                return x
            x = y
        return x

    def _flag(self, x: int) -> bool:
        """Whether ``x`` is a flag, a phi of two int constants (``boolean notlast = k != n - 1``): its tests are
        tests of its condition (:meth:`flag_test`), so it needs no variable computed ahead of them."""
        node = self.nodes[x]
        return node.op == "phi" and all(self.nodes[c].op == "const.i" for c in node.children[1:])

    def _step(self, x: int) -> bool:
        """Whether ``x`` is a variable already computed plus or minus a constant int (``i + 1``): left where it
        is read, the lowering steps a loop's variable by ``iinc`` and recomputes it where an expression reads
        it, with no local (it is as short as a load)."""
        node = self.nodes[x]
        if node.op not in ("add.i", "sub.i"):
            return False
        a, b = node.children
        return self.nodes[b].op == "const.i" and isinstance(self.sched.lookup(a), Var)

    def leave(self, loop: _LoopCode, out: bool) -> None:
        """End one path of the iteration: to the exit with the loop's outputs, or to the header with the thetas'
        next values (assigned as one parallel copy)."""
        if self.cur is None:
            return
        if out:
            for x, v in loop.outs:
                self.emit(Copy(v, self.gen_on_path(x, v.type)))
            self.goto(loop.exit)
            return
        self.parallel_copy([(v, self.gen_on_path(x, v.type)) for x, v in loop.nexts])
        self.goto(loop.header)

    def parallel_copy(self, ops: list[tuple[Var, Operand]]) -> None:
        """Assign each variable its operand, all operands read before any variable is written."""
        targets = {id(v) for v, _ in ops}
        late: list[tuple[Var, Operand]] = []
        for v, op in ops:
            if op is v:
                continue
            if isinstance(op, Var) and id(op) in targets:  # read after another variable is written: via a temp
                t = self.new_var(op.type)
                self.emit(Copy(t, op))
                late.append((v, t))
            else:
                late.append((v, op))
        for v, op in late:
            self.emit(Copy(v, op))

    def gen_on_path(self, x: int, t: IRType):
        """The value of ``x`` at the end of the current path of a loop iteration. A phi whose condition this
        path has not decided is tested here; an arm that needs an effect or loop this path has not run cannot
        be the one taken (the sigma the path ran would then differ, and the iteration's branches follow the
        sigma), so it gets a zero that is never read."""
        if self.sched.available(x, loops=True):
            return self.gen(x)
        node = self.nodes[x]
        if node.op != "phi":
            return self.dead_value(x, t)
        c = node.children[0]
        k = self.sched.fact(c)
        if k is not None:
            return self.gen_on_path(node.children[1 if k else 2], t)
        same = self.sched.settled_as(x)
        if same is not None:
            return self.gen_on_path(same, t)
        if not self.sched.available(c, loops=True):
            return self.dead_value(x, t)
        v = self.new_var(t)
        a, b, j = self.new_block(), self.new_block(), self.new_block()
        self.gen_cond(c, a, b)
        self.sched.arms()
        for blk, arm in ((a, 1), (b, 2)):
            self.cur = blk
            self.sched.push(known=(c, arm == 1))
            self.emit(Copy(v, self.gen_on_path(node.children[arm], t)))
            self.sched.pop()
            self.goto(j)
        self.sched.join()
        self.cur = j
        return v

    def dead_value(self, x: int, t: IRType) -> Const:
        """A zero for a value no run of this path can need (:meth:`~.schedule.Schedule.refuse_unless_dead`)."""
        self.sched.refuse_unless_dead(x)
        return _zero(t)

    def hoist_invariants(self, p: int, d: int, thetas: list[int], evals: list[int]) -> None:
        """Compute before the loop the pure inputs of its body that do not vary in it and need no branch, loop
        or effect (loop-invariant code motion). One that reads the result of a call or field read already run
        leaves only when every iteration computes it, or every iteration of a loop nested in it (``p / r`` with
        ``r = Math.sqrt(...)``, read by the loop's stores): one read on a rare path (a test in a branch arm)
        would cost a local and its loads where it was computed in place (lang3's ``StringUtils.containsAny``,
        ``RandomStringUtils.random``)."""
        certain: frozenset[int] | None = None
        for x in self.sched.invariant_inputs(p, d, thetas, evals):
            if not self.sched.hoistable(x, set()):
                continue
            if self.sched.reads_effect_result(x, set()):
                if certain is None:
                    memo: dict[int, frozenset[int]] = {}
                    roots = [self.nodes[th].children[1] for th in thetas] + [self.nodes[p].children[0]]
                    # and what every iteration of a loop nested in this one computes (the next values of its
                    # thetas): `h - ort[m] * g` read by `f / h` in each of a row loop's inner loops (JAMA
                    # orthes), which javac's `h` computes once before the row loop
                    roots += [self.nodes[th].children[1] for th in self.sched.nested_thetas(p, d, thetas, evals)]
                    certain = frozenset().union(*(self.sched.must(r, memo) for r in roots))
                if x not in certain:
                    continue
            self.gen(x)

    # -- joins ----------------------------------------------------------------------------------------------
    def result_leaves(self, r: int) -> list[_Leaf] | None:
        """The paths of result phi ``r``'s branches, each as the result it ends in and what it knows; None past
        :data:`MAX_JOIN_LEAVES`."""
        out: list[_Leaf] = []
        stack: list[tuple[int, dict[int, bool]]] = [(r, {})]
        while stack:
            x, assumed = stack.pop()
            node = self.nodes[x]
            if node.op == "phi":
                c = node.children[0]
                k = self.sched.fact(c, assumed)
                if k is not None:
                    stack.append((node.children[1 if k else 2], assumed))
                    continue
                c0, v = self.sched.tested(c)
                stack.append((node.children[2], {**assumed, c0: not v}))
                stack.append((node.children[1], {**assumed, c0: v}))
                continue
            out.append(_Leaf(("result", x), [x], assumed, x))
            if len(out) > MAX_JOIN_LEAVES:
                return None
        return out

    def iteration_leaves(self, s: int, loop: _LoopCode) -> list[_Leaf] | None:
        """The paths of the iteration's sigma tree ``s`` (as :meth:`iteration` takes them), each as the leaf it
        ends in with the break condition and next values there, and what it knows; None past
        :data:`MAX_JOIN_LEAVES`."""
        out: list[_Leaf] = []
        stack: list[tuple[int, _LoopCode, dict[int, bool], tuple[_Leaf, ...]]] = [(s, loop, {}, ())]
        while stack:
            x, lc, assumed, via = stack.pop()
            node = self.nodes[x]
            roots = [x, lc.brk] + [y for y, _ in lc.nexts] + [y for y, _ in lc.outs]
            if node.op == "phi" and self.sched.lookup(x) is None:
                same = self.sched.settled_as(x)
                if same is not None:
                    stack.append((same, lc, assumed, via))
                    continue
                c = node.children[0]
                k = self.sched.fact(c, assumed)
                if k is not None:
                    stack.append((node.children[1 if k else 2], lc.split(self.sched, c, 1 if k else 2), assumed, via))
                    continue
                if x != s:  # a phi of the tree below its root: a continuation too, when several paths reach it
                    via = via + (_Leaf(_LoopCode.leaf_key(x, lc), roots, assumed, (x, lc), via),)
                c0, v = self.sched.tested(c)
                stack.append((node.children[2], lc.split(self.sched, c, 2), {**assumed, c0: not v}, via))
                stack.append((node.children[1], lc.split(self.sched, c, 1), {**assumed, c0: v}, via))
                continue
            out.append(_Leaf(_LoopCode.leaf_key(x, lc), roots, assumed, (x, lc), via))
            if len(out) > MAX_JOIN_LEAVES:
                return None
        return out

    def plan_joins(self, leaves: list[_Leaf] | None) -> list[tuple[Hashable, _Join]]:
        """Before a branch: the continuations that several of its paths reach (``leaves``), to be generated once
        after it, in a join block the paths jump to (:meth:`arrive`, :meth:`enter_join`), unless the copies are
        smaller. A path's copy of a continuation is specialised by what the path knows (its phis on the
        branch's conditions resolved: constants in place of variables, a test the path decided left out); the
        join computes each path's values of the frontier phis (:meth:`~.schedule.Schedule.continuation`) before
        the jump and reads them from variables. Sizes are counted in statements and tests
        (:meth:`~.schedule.Schedule.code_weight`): the copies, the continuation on each path; the join, the
        continuation once, a jump for each path but one, and a copy for each frontier value on each path and
        its reads. Continuations already planned by an enclosing branch are left to it."""
        if not leaves:
            return []
        out: list[tuple[Hashable, _Join]] = []
        for key, occ, roots, payload in self.continuations(leaves):
            got = self.frontier(roots, [leaf.assumed for leaf in occ])
            if got is None:
                continue
            frontier, settled, rest = got
            values = [x for x in frontier if not self.sched.is_sigma(x)]
            stop = frozenset(frontier)
            joined = self.sched.code_weight(roots, {}, stop, settled) + len(occ) - 1 + (len(occ) + 1) * len(values)
            copies = 0
            for leaf in occ:  # counted only until they are larger than the join
                copies += self.sched.code_weight(roots, leaf.assumed, stop, limit=joined - copies)
                if copies > joined:
                    break
            if copies <= joined:
                continue
            j = _Join(self.new_block(), self.sched.depth(), frontier, settled, rest,
                      {x: self.new_var(self.sched.type_of(x)) for x in values}, payload,
                      keys=sorted({key, *(leaf.key for leaf in occ)}, key=repr),
                      common={c: v for c, v in occ[0].assumed.items() if all(o.assumed.get(c) == v for o in occ)})
            for k in j.keys:
                self.pending[k] = j
            if isinstance(payload, tuple):
                x, lc = cast(tuple[int, _LoopCode], payload)
                self.pending_at.setdefault((lc.header.id, x), []).append(j)
            out.append((key, j))
        return out

    def fitting_join(self, s: int, loop: _LoopCode) -> _Join | None:
        """A join planned for node ``s`` of this loop's iteration whose roots this path decides to what it
        decides its own to (:meth:`continuations`: the join then computes this path's values), or None."""
        for j in self.pending_at.get((loop.header.id, s), ()):
            general = cast(tuple[int, _LoopCode], j.leaf)[1]
            if all(a == b or self.sched.decided(a, {}) == self.sched.decided(b, {})
                   for a, b in zip(general.roots(), loop.roots())):
                return j
        return None

    def frontier(self, roots: list[int], paths: list[dict[int, bool]]
                 ) -> tuple[list[int], dict[int, int], set[int]] | None:
        """:meth:`~.schedule.Schedule.continuation` of ``roots`` for ``paths``, where a sigma phi on the frontier
        is one the continuation certainly runs: a path runs its effects before it jumps to the join. That holds
        for a leaf (its phis are on its sigma chain), not always for a phi of the tree (``roots[0]``, its
        subtree: ``if (s != 0) { if (k != m) H[k][k-1] = ...; else ...; }`` after a branch on ``k != m``); such
        a phi is written in the join with its test again, which needs the test's operands before the branch
        (None: not joined)."""
        frontier, settled, rest = self.sched.continuation(roots, paths)
        if self.nodes[roots[0]].op != "phi":
            return frontier, settled, rest
        certain: frozenset[int] | None = None
        retest: frozenset[int] = frozenset()
        while True:
            sigmas = [x for x in frontier if self.sched.is_sigma(x)]
            if not sigmas:
                return frontier, settled, rest
            if certain is None:
                certain = self.sched.must(roots[0], {})
            late = [x for x in sigmas if x not in certain]
            if not late:
                return frontier, settled, rest
            if any(not self.sched.available(self.nodes[x].children[0]) for x in late):
                return None
            retest = retest.union(late)
            frontier, settled, rest = self.sched.continuation(roots, paths, retest)

    def continuations(self, leaves: list[_Leaf]) -> list[tuple[Hashable, list[_Leaf], list[int], object]]:
        """The continuations several of ``leaves`` reach (:meth:`plan_joins`), each as its key, those leaves,
        its roots and what its join generates. Leaves of one node are one continuation when, at each of their
        roots (a loop iteration's break condition, next values, outputs), one node is on every path what that
        path's own root is (the phis on the conditions it decides resolved): a next value a path takes from
        ``phi(k == m, q, q / x)`` after a branch on ``k == m``, and one that took ``q`` on the path that knows
        ``k == m``, are that phi (each path's value of it goes into the join's variable). Leaves are grouped in
        their order, each with the first group it fits; a continuation an enclosing branch planned is left to
        it."""
        groups: dict[Hashable, list[tuple[list[_Leaf], list[int]]]] = {}
        for leaf in leaves:
            coarse = leaf.key[:3] if isinstance(leaf.key, tuple) else leaf.key  # ("iteration", header, sigma)
            if leaf.key in self.pending:
                continue
            clusters = groups.setdefault(coarse, [])
            for i, (occ, _) in enumerate(clusters):
                roots = self._general_roots(occ + [leaf])
                if roots is not None:
                    clusters[i] = (occ + [leaf], roots)
                    break
            else:
                clusters.append(([leaf], list(leaf.roots)))
        out: list[tuple[Hashable, list[_Leaf], list[int], object]] = []
        for clusters in groups.values():
            for occ, roots in clusters:
                if len(occ) < 2:
                    continue
                payload = occ[0].payload
                key = occ[0].key
                if isinstance(payload, tuple):  # an iteration's leaf: its loop code with the general roots
                    x, lc = cast(tuple[int, _LoopCode], payload)
                    lc = lc.with_roots(roots[1:])
                    payload, key = (x, lc), _LoopCode.leaf_key(x, lc)
                    if key in self.pending:
                        continue
                out.append((key, occ, roots, payload))
        return out

    def _general_roots(self, occ: list[_Leaf]) -> list[int] | None:
        """Per root of leaves ``occ`` (:meth:`continuations`), one of their nodes that every leaf's path decides
        to what it decides its own root to; None when a root has none."""
        n = len(occ[0].roots)
        if any(len(o.roots) != n for o in occ):
            return None
        out: list[int] = []
        for i in range(n):
            cands = sorted({o.roots[i] for o in occ})
            if len(cands) == 1:
                out.append(cands[0])
                continue
            ends = [self.sched.decided(o.roots[i], o.assumed) for o in occ]
            for r in cands:
                if all(self.sched.decided(r, o.assumed) == e for o, e in zip(occ, ends)):
                    out.append(r)
                    break
            else:
                return None
        return out

    def plan_tree_joins(self, leaves: list[_Leaf] | None, outer: set[Hashable]
                        ) -> tuple[list[tuple[Hashable, _Join]], list[_Leaf] | None]:
        """Before the branch on an iteration's sigma tree: the joins of its continuations (:meth:`plan_joins`),
        first the phis below the tree's root that several paths reach (``_Leaf.via``), outermost first, then
        its leaves. A phi's continuation is its whole subtree: joined, the test on it and what it needs (a
        value every arm reads, computed from each path's values of the frontier) are written once, where
        joining its leaves alone writes them once per path (JAMA ``hqr2``: ``s = Math.sqrt(p * p + q * q +
        r * r); if (p < 0) s = -s; if (s != 0)`` after ``if (k != m) {...; if (x == 0.0) continue; ...}``
        reached from both arms). What lies below a joined phi is then reached once per path from its join,
        knowing what every path to it knows. Continuations an enclosing branch planned (``outer``) are left
        to it, with what lies below them. Returns the joins in the order they are to be entered (a join
        before those its code reaches) and the leaves as the branch's paths reach them (:meth:`plan_latch`)."""
        if not leaves:
            return [], leaves
        # by node: the longest path to a phi (every phi above it on some path is less deep)
        depth: dict[int, int] = {}
        occurrences: dict[int, list[_Leaf]] = {}
        seen: set[int] = set()
        for leaf in leaves:
            for i, occ in enumerate(leaf.via):
                x = cast(tuple[int, _LoopCode], occ.payload)[0]
                depth[x] = max(depth.get(x, 0), i)
                if id(occ) not in seen:
                    seen.add(id(occ))
                    occurrences.setdefault(x, []).append(occ)
        joined: dict[Hashable, _Join] = {}
        out: list[tuple[Hashable, _Join]] = []
        if not self.tree_joins:
            occurrences = {}
        for x in sorted(occurrences, key=lambda y: depth[y]):  # stable: first reached first among equals
            here = _reached(occurrences[x], joined, outer)
            if len(here) < 2:
                continue
            planned = self.plan_joins(here)
            out += planned
            for _, j in planned:
                joined.update((k, j) for k in j.keys)
        reached = _reached(leaves, joined, outer)
        out += self.plan_joins(reached)
        return out, reached

    def plan_latch(self, s: int, loop: _LoopCode, leaves: list[_Leaf] | None,
                   outer: set[Hashable]) -> list[tuple[Hashable, _Join]]:
        """Before the branch on iteration sigma tree ``s``: one *latch* for the paths that end in different
        effects (``leaves`` of different sigmas, which :meth:`plan_joins` keeps apart) and then go back to the
        header (a break condition every one of them decides false): each path runs its own effects and jumps to
        one block that computes the next values, as javac writes a ``continue`` and the end of an ``if``/``else``
        body (a ``goto`` to the one increment block). The latch's frontier is ``s`` itself (each path's
        effects, already run when it arrives) and the value phis on the branch's conditions the next values
        read (each path's value into the latch's variable, or into the theta's own variable when the latch does
        not read the theta: :meth:`arrive`). Only when the code after the paths' effects reads no effect or
        loop on the sigma chain that they have not all run before the branch (the latch may not run one some
        paths ran: :meth:`enter_join` would refuse), and only when smaller by
        :meth:`~.schedule.Schedule.code_weight`, each copy counting its jump back to the header too. A latch
        that tests the break condition is not planned: it tested what its paths knew again (a shape the
        self-check did not prove, ``InfiniteLoops.enter``). A continuation planned by an enclosing branch
        (``outer``) is left to it; a continuation :meth:`plan_joins` joined here arrives at the latch from its
        join block as one path."""
        if not leaves:
            return []
        groups: dict[Hashable, dict[Hashable, list[_Leaf]]] = {}
        for leaf in leaves:
            if leaf.key in outer:
                continue
            lc = cast(tuple[int, _LoopCode], leaf.payload)[1]
            assumed, ident = leaf.assumed, leaf.key
            join_of = self.pending.get(leaf.key)
            if join_of is not None:  # joined here: its join's code, knowing what all of its paths know
                lc = cast(tuple[int, _LoopCode], join_of.leaf)[1]
                assumed, ident = join_of.common, join_of.keys[0]
            groups.setdefault(lc.latch_key(self.sched, assumed), {}).setdefault(ident, []).append(leaf)
        out: list[tuple[Hashable, _Join]] = []
        for key, by_leaf in groups.items():
            if key in self.pending or len(by_leaf) < 2:
                continue
            paths: list[dict[int, bool]] = []
            for k, occ in by_leaf.items():
                if k in self.pending:  # joined here: one path
                    paths.append(self.pending[k].common)
                else:
                    paths.extend(leaf.assumed for leaf in occ)
            brk = cast(int, cast(tuple, key)[2])  # as every path decides it (latch_key)
            if self.nodes[brk].op != "const.b" or self.nodes[brk].attr:
                continue  # only paths that go back: a latch that tests would test what the paths know again
            latch = _LoopCode(loop.header, loop.exit, brk, loop.nexts, loop.outs, loop.thetas)
            roots = [s] + [x for x, _ in loop.nexts]
            frontier, settled, rest = self.sched.continuation(roots, paths)
            if any(self.sched.is_sigma(x) and x != s for x in frontier) or any(
                    OPS[self.nodes[x].op].role is Role.EFFECT or
                    (self.nodes[x].op == "pass" and x not in self.sched.pure) for x in rest):
                continue
            values = [x for x in frontier if not self.sched.is_sigma(x)]
            # a theta's next value that differs per path goes straight into the theta's variable, as a copy does,
            # when the latch does not read the theta's value of this iteration (frontier values are computed
            # before the jump, from this iteration's values, so they never read the new one)
            reads = set(roots).union(settled.values(), *(self.nodes[y].children for y in rest))
            owner: dict[int, list[Var]] = {}
            for x, v in loop.nexts:
                owner.setdefault(x, []).append(v)
            direct = {x: owner[x][0] for x in values
                      if len(owner.get(x, ())) == 1 and loop.thetas[id(owner[x][0])] not in reads}
            stop = frozenset(frontier)
            jumps = 1  # a copy's jump back to the header
            joined = self.sched.code_weight(roots, {}, stop, settled) + jumps + len(paths) - 1 + \
                (len(paths) + 1) * (len(values) - len(direct))
            copies = 0
            for a in paths:
                copies += self.sched.code_weight(roots, a, stop, limit=joined - copies) + jumps
                if copies > joined:
                    break
            if copies <= joined:
                continue
            j = _Join(self.new_block(), self.sched.depth(), frontier, settled, rest,
                      {x: direct.get(x) or self.new_var(self.sched.type_of(x)) for x in values}, (s, latch), latch=s,
                      keys=[key])
            self.pending[key] = j
            out.append((key, j))
        return out

    def arrive(self, j: _Join) -> bool:
        """A path reaches continuation ``j``: compute its frontier here (the effects of its sigma phis, its value
        phis into the join's variables) and jump to the join. False (nothing jumped; the path writes its own
        copy) when a frontier value cannot be computed on this path, or when it does not decide a phi the join
        takes as settled as the paths planned to reach it do. A latch's sigma (:meth:`plan_latch`) is
        the path's own effects, which the caller ran."""
        if any(self.sched.decided(x, {}) != y for x, y in j.settled.items()):
            return False  # the join reads a phi as the planned paths decide it: this one does not
        for x in j.frontier:
            if x not in j.values and x != j.latch:
                self.gen_sigma(x)
        if self.cur is None:
            return True
        if not all(self.on_path(x) for x in j.values):
            return False
        copies = [(v, self.gen_on_path(x, v.type)) for x, v in j.values.items()]
        if self.cur is None:
            return True
        bound: dict[int, object] = {}
        for x in sorted(j.rest):
            got = self.sched.lookup(x)
            if got is not None:
                bound[x] = got
        ran, known = self.sched.since(j.base)
        self.parallel_copy(copies)  # a latch's values may be its thetas' own variables (plan_latch)
        j.arrivals.append(_Arrival(self.cur, bound, ran, known, self.sched.settled_here()))
        self.goto(j.block)
        self.joined = True
        return True

    def on_path(self, x: int) -> bool:
        """Whether :meth:`gen_on_path` computes ``x`` on this path with no dead value."""
        if self.sched.available(x, loops=True):
            return True
        node = self.nodes[x]
        if node.op != "phi":
            return False
        c = node.children[0]
        k = self.sched.fact(c)
        if k is not None:
            return self.on_path(node.children[1 if k else 2])
        same = self.sched.settled_as(x)
        if same is not None:
            return self.on_path(same)
        return self.sched.available(c, loops=True) and self.on_path(node.children[1]) and \
            self.on_path(node.children[2])

    def enter_join(self, key: Hashable, j: _Join) -> bool:
        """After the branch that planned ``j``: open its join block with the scope every path to it shares (the
        frontier in the join's variables, the continuation's values every path computed, in one variable
        each: a copy at the end of each path; the conditions all of them know; the effects any of them ran
        may not run again). False when no path jumped to it. Refused: a value of an effect or loop some paths
        ran that the continuation reads (it would run again)."""
        for k in j.keys:
            del self.pending[k]
        if isinstance(j.leaf, tuple) and j.latch is None:
            x, lc = cast(tuple[int, _LoopCode], j.leaf)
            self.pending_at[(lc.header.id, x)].remove(j)
        if not j.arrivals:
            return False
        start: dict[int, object] = {x: j.values.get(x, DONE) for x in j.frontier}
        for x in sorted(j.rest):
            got = [a.bound.get(x) for a in j.arrivals]
            if all(g is None for g in got):
                continue
            if any(g is None or g is DONE for g in got):
                if all(g is DONE for g in got):
                    start[x] = DONE
                    continue
                if self._recomputable(x):
                    continue
                raise RevertUnsupported("a join's continuation reads an effect some paths to it ran")
            ops = cast(list[Operand], got)
            if all(g is ops[0] for g in ops):
                start[x] = ops[0]
                continue
            # an effect's node stands for its value (gen_effect): the paths' variable's type
            v = self.new_var(next((g.type for g in ops if isinstance(g, Var)), None) or self.sched.type_of(x))
            for a, g in zip(j.arrivals, ops):
                a.block.stmts.append(Copy(v, g))
            start[x] = v
        ran = set().union(*(a.ran for a in j.arrivals))
        known = {c: k for c, k in j.arrivals[0].known.items() if all(a.known.get(c) == k for a in j.arrivals)}
        self.cur = j.block
        # a phi every path to the join had settled (the join of a phi of the tree it came from: what that join
        # knew, which the paths' own facts no longer say) is settled in the join too
        shared = dict(j.arrivals[0].settled)
        for a in j.arrivals[1:]:
            shared = {x: y for x, y in shared.items() if a.settled.get(x) == y}
        self.sched.push_join(start, ran, known, {**shared, **j.settled})
        return True

    def _recomputable(self, x: int) -> bool:
        """Whether ``x`` is a pure value the join may compute again (no effect, loop or heap)."""
        node = self.nodes[x]
        role = OPS[node.op].role
        return role in (Role.PURE, Role.CONST, Role.PARAM) or (node.op == "phi" and not self.sched.is_sigma(x))

    # -- results --------------------------------------------------------------------------------------------
    def gen_result(self, r: int) -> None:
        node = self.nodes[r]
        if self.cur is None:
            return
        if node.op == "phi":
            c = node.children[0]
            known = self.sched.fact(c)  # a constant, or a test an enclosing branch made: one arm only
            if known is not None:
                self.gen_result(node.children[1 if known else 2])
                return
            # the effects both arms start with run before the test, once (as for a phi on sigma): otherwise each
            # arm writes them, and what follows them, again
            first = self.sched.results_split_point(node.children[1], node.children[2]) \
                if self.result_prefixes and not self.sched.effects_needed(c) else None
            if first is not None:
                self.gen_sigma(first)
                if self.cur is None:
                    return
            joins = self.plan_joins(self.result_leaves(r)) if self.joins else []
            t, f = self.new_block(), self.new_block()
            self.gen_cond(c, t, f)
            for blk, k in ((t, 1), (f, 2)):
                self.cur = blk
                self.sched.push(known=(c, k == 1))
                self.gen_result(node.children[k])
                self.sched.pop(joined=False)  # an arm that ends the method joins nothing
            self.cur = None
            for key, j in joins:
                if self.enter_join(key, j):
                    self.gen_result(cast(int, j.leaf))  # the result's node (result_leaves)
                    self.sched.pop(joined=False)
            self.cur = None
            return
        planned = self.pending.get(("result", r))
        if planned is not None and self.arrive(planned):
            return
        if node.op == "eval":
            x, p = node.children
            if node.attr not in self.sched.variance[x]:
                # a result the loop does not compute: the virtual exit of a loop without effects that never exits
                # (its heap is the entry's). The loop runs first (it does not end); the result is then its own
                self.gen_loop(p)
                self.gen_result(x)
                return
            self.gen_loop(p)
            if self.cur is None:
                return
            got = self.result_outs.get(r)
            if got is None:
                raise RevertUnsupported("a result computed by a loop")
            op, var = got
            self.end(Return(var) if op == "return" else Throw(cast(Var, var)))  # a throw's value is never unit
            return
        s, v = node.children
        self.gen_sigma(s)
        if node.op == "return":
            val = None if self.nodes[v].op == "unit" else self.gen(v)
            self.end(Return(val))
        elif node.op == "throw":
            self.end(Throw(self.gen(v)))
        else:
            raise RevertUnsupported(f"result {node.op}")

    def generate(self) -> Block:
        """The code, untidied (every refusal happens here); returns the entry block."""
        entry = self.new_block()
        self.cur = entry
        self.gen_result(self.peg.root)
        for b in self.blocks.values():
            if b.terminator is None:  # a block nothing reaches (a branch arm cut off by a constant)
                b.terminator = Goto(b.id)
        return entry

    def run(self) -> IRMethod:
        return self.tidied(self.generate())

    def tidied(self, entry: Block) -> IRMethod:
        """The generated code from ``entry`` tidied (with this emitter's ``returns`` and ``rotate_loops``)."""
        out, rotated = tidy_method(self.m, self.blocks, entry.id, self.variables, self.next_var,
                                   self.rotate_loops, self.returns)
        if rotated:
            self.carried = [(v, local, rotated.get(id(header), header)) for v, local, header in self.carried]
        values_after_their_reads(out)
        self.mark_locals(out.blocks)
        return out

    def mark_locals(self, blocks: dict[int, Block]) -> None:
        """Give each theta's variable its :class:`~peggy_jvm.ir.nodes.CarriedLocal` when its loop header is
        still a block (tidying may have merged it away: then nothing is claimed)."""
        ids = {id(b): bid for bid, b in blocks.items()}
        for v, (slot, at), header in self.carried:
            if id(header) in ids:
                v.carries = CarriedLocal(slot, at, ids[id(header)])


@dataclass
class _Leaf:
    """One path of a branch's tree (:meth:`_Emitter.plan_joins`): the continuation it ends in (``key``; its
    nodes ``roots``), the conditions it decides (in :meth:`~.schedule.Schedule.tested`'s form) and what the
    join generates (``payload``)."""
    key: Hashable
    roots: list[int]
    assumed: dict[int, bool]
    payload: object
    #: the phis of the tree above it that are continuations in their own right (:meth:`_Emitter.plan_tree_joins`),
    #: outermost first, each as the path's occurrence of it
    via: tuple[_Leaf, ...] = ()


def _reached(items: list[_Leaf], joined: dict[Hashable, _Join], outer: set[Hashable]) -> list[_Leaf]:
    """The paths to ``items`` (leaves or phis of a branch's tree, :meth:`_Emitter.plan_tree_joins`) as the code
    reaches them once the phis ``joined`` (by the keys paths reach them by) are generated once: one below a
    joined phi is reached from the innermost such join's code, knowing what every path to it knows and what the
    path decided below it (the same leaf on two paths to that join is one path); one below a continuation an
    enclosing branch planned (``outer``) is not reached here."""
    out: list[_Leaf] = []
    seen: set[tuple[Hashable, int, tuple[tuple[int, bool], ...]]] = set()
    for it in items:
        if any(a.key in outer for a in it.via):
            continue
        assumed, tag = it.assumed, 0
        for a in reversed(it.via):
            j = joined.get(a.key)
            if j is not None:
                assumed = {**j.common, **{c: v for c, v in it.assumed.items() if c not in a.assumed}}
                tag = id(j)
                break
        # the node, not the key: a leaf below a join is generated with the join's loop code (its general roots)
        sig = (it.key[:3] if isinstance(it.key, tuple) else it.key, tag, tuple(sorted(assumed.items())))
        if sig in seen:
            continue
        seen.add(sig)
        out.append(it if assumed is it.assumed else _Leaf(it.key, it.roots, assumed, it.payload, it.via))
    return out


@dataclass
class _Arrival:
    """A path's jump to a join: its last block (where the join's copies go), the continuation's nodes it
    computed, the effects and loops it ran, the conditions it knows since the branch and the phis settled on it
    (:meth:`~.schedule.Schedule.settled_here`)."""
    block: Block
    bound: dict[int, object]
    ran: set[int]
    known: dict[int, bool]
    settled: dict[int, int]


@dataclass
class _Join:
    """A continuation several paths of one branch reach, generated once after it (:meth:`_Emitter.plan_joins`):
    its block, the scope depth of the branch, its frontier (phis each path computes before the jump), the phis
    every path decides the same way and the rest of its nodes, the join's variables of the frontier's value
    phis, what to generate and the paths."""
    block: Block
    base: int
    frontier: list[int]
    settled: dict[int, int]
    rest: set[int]
    values: dict[int, Var]
    leaf: object
    #: a latch (:meth:`_Emitter.plan_latch`): the iteration's sigma tree, which each path runs before it arrives
    latch: int | None = None
    arrivals: list[_Arrival] = field(default_factory=list)
    #: the keys paths reach it by (its leaves' own, :meth:`_Emitter.continuations`), in :attr:`_Emitter.pending`
    keys: list[Hashable] = field(default_factory=list)
    #: what every path planned to reach it knows (:meth:`_Emitter.plan_tree_joins`)
    common: dict[int, bool] = field(default_factory=dict)


class _LoopCode:
    """What one path of a loop iteration needs to know to leave the iteration."""

    def __init__(self, header: Block, exit_: Block, brk: int, nexts: list[tuple[int, Var]],
                 outs: list[tuple[int, Var]], thetas: dict[int, int]) -> None:
        self.header, self.exit, self.brk, self.nexts, self.outs = header, exit_, brk, nexts, outs
        self.thetas = thetas  # id of a value theta's variable -> the theta

    def split(self, r: Schedule, c: int, k: int) -> _LoopCode:
        return _LoopCode(self.header, self.exit, r.arm(self.brk, c, k), [(r.arm(x, c, k), v) for x, v in self.nexts],
                         [(r.arm(x, c, k), v) for x, v in self.outs], self.thetas)

    def roots(self) -> list[int]:
        """The break condition, then the next values and outputs in order (:meth:`with_roots`)."""
        return [self.brk] + [x for x, _ in self.nexts] + [x for x, _ in self.outs]

    def with_roots(self, roots: list[int]) -> _LoopCode:
        """This loop code with break condition ``roots[0]``, then the next values and outputs in order."""
        k = len(self.nexts)
        return _LoopCode(self.header, self.exit, roots[0], [(x, v) for x, (_, v) in zip(roots[1:1 + k], self.nexts)],
                         [(x, v) for x, (_, v) in zip(roots[1 + k:], self.outs)], self.thetas)

    def latch_key(self, r: Schedule, assumed: dict[int, bool]) -> Hashable:
        """How a path of the iteration that knows ``assumed`` (and the facts of the current scope) leaves it once
        its effects have run (its latch, for :meth:`_Emitter.plan_latch`): the break condition through the phis
        the path decides (a latch must not test again what its paths know)."""
        return ("latch", self.header.id, r.decided(self.brk, assumed))

    @staticmethod
    def leaf_key(s: int, loop: _LoopCode) -> Hashable:
        """What a path of the iteration ending in sigma ``s`` still does (its continuation, for joins)."""
        return ("iteration", loop.header.id, s, loop.brk, tuple(x for x, _ in loop.nexts),
                tuple(x for x, _ in loop.outs))


def _unsupported_handling(nodes: list, variance: list, users: dict[int, list[int]]) -> str | None:
    """Why the PEG's exception handling is beyond the reverter, or None. Supported: try regions outside loops,
    without monitors, whose handlers use the exception only to dispatch on it (``instanceof``) and to rethrow
    it: it is caught as any Throwable, and the verifier would need casts for other uses."""
    for i, n in enumerate(nodes):
        if n.op in HANDLER_OPS and variance[i]:
            return "exception handling inside a loop"
        if n.op in ("monitorenter", "monitorexit"):
            return WITH_MONITORS
    stack = [i for i, n in enumerate(nodes) if n.op == "rho_exc"]
    seen: set[int] = set()
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        for u in users.get(x, ()):
            op = nodes[u].op
            if op == "phi" and nodes[u].children[0] != x:
                stack.append(u)
            elif op != "instanceof" and not (op in ("throw", "athrow") and nodes[u].children[-1] == x):
                return "the caught exception is used as a value"
    return None


def uses_handlers(peg: PEG) -> bool:
    """Whether the PEG branches on exceptions (a method with handlers)."""
    return any(n.op in HANDLER_OPS for n in peg.nodes)


def revert_peg(peg: PEG, original: IRMethod, returns: ReturnsInPlace = ReturnsInPlace.ALL,
               rotate_loops: bool = False, generated: Generated | None = None) -> IRMethod:
    """An IR method computing what ``peg`` means (see the module docstring). ``returns``: which ``goto``s to a
    block that only returns become that return (:class:`.tidy.ReturnsInPlace`); the full stage asks for all of
    them under ``--goal size``, and under ``--goal speed`` for those no loop reaches, since the self-check does
    not yet prove every such shape (peeled loops whose first iteration returns on its own path,
    tests/test_peel.py). ``rotate_loops``: loops tested at the bottom, one jump per iteration
    (:func:`.tidy._rotate_loops`: the test copied to the bottom, the entry test dropped where an earlier test
    decides it; :func:`.tidy._enter_by_goto`: an outermost loop whose entry test stays entered by a goto to its
    bottom test instead, javac's bytes); the full stage asks for it under ``--goal speed``, ``--stage peg``
    keeps javac's shape. ``generated``: what :func:`check_revertible` generated for this very ``peg`` and
    ``original``, tidied instead of generating the code again, once and only when ``peg``'s debug
    information is still what it was generated with (:meth:`Generated.fits`; else it is generated again)."""
    if generated is not None and generated.fits(peg, original):
        emitter, entry = generated.take()
        emitter.returns, emitter.rotate_loops = returns, rotate_loops  # tidying's options only (generate reads neither)
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 100_000))
        try:
            return emitter.tidied(entry)
        except RecursionError:
            raise RevertUnsupported("PEG too deep for the reverter") from None
        finally:
            sys.setrecursionlimit(old)
    return _emit(peg, original, _Emitter.run, returns=returns, rotate_loops=rotate_loops)


class Generated:
    """The untidied code :func:`check_revertible` generated for one PEG (the emitter that succeeded, with the
    options its attempts settled on), for :func:`revert_peg` of the same PEG to tidy instead of generating it
    again: generation is a function of the PEG, the original method and the PEG's debug information (effects'
    ``origins``, thetas' ``locals``, read into the statements as they are generated), and of nothing that
    ``revert_peg``'s options change. Used at most once (tidying changes the blocks in place)."""

    def __init__(self, peg: PEG, original: IRMethod, emitter: _Emitter, entry: Block) -> None:
        self.peg, self.original = peg, original
        self._taken: tuple[_Emitter, Block] | None = (emitter, entry)
        self._origins, self._locals = dict(peg.origins), dict(peg.locals)

    def fits(self, peg: PEG, original: IRMethod) -> bool:
        """Whether this is ``peg``'s code for ``original``, not yet tidied, with the same debug information."""
        return (self._taken is not None and peg is self.peg and original is self.original
                and peg.origins == self._origins and peg.locals == self._locals)

    def take(self) -> tuple[_Emitter, Block]:
        taken = self._taken
        assert taken is not None
        self._taken = None
        return taken


def check_revertible(peg: PEG, original: IRMethod) -> Generated:
    """Raise :class:`RevertUnsupported` when :func:`revert_peg` would, whatever its options: the code is
    generated as there (both attempts) but not tidied (:mod:`.tidy` refuses nothing; the options only change
    what it does; a recursion too deep in tidying alone is the one refusal this does not see). The full stage's
    acceptance test of each extraction candidate (``pipeline.revertible``): on commons-math3's methods whose
    rewrite does not pay, tidying was three quarters of that test's time. Returns the generated code, which
    :func:`revert_peg` of the same PEG may tidy instead of generating it again."""
    emitter, entry = _emit(peg, original, lambda e: (e, e.generate()))
    return Generated(peg, original, emitter, entry)


_T = TypeVar("_T")


def _emit(peg: PEG, original: IRMethod, finish: Callable[[_Emitter], _T],
          returns: ReturnsInPlace = ReturnsInPlace.ALL, rotate_loops: bool = False) -> _T:
    """``finish`` of the emitter of ``peg`` (with the options of :func:`revert_peg`), once more without result
    prefixes when that is refused; a recursion too deep is a refusal."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 100_000))
    try:
        peg = _without_passed_through_thetas(peg)
        refused: RevertUnsupported | None = None
        # the effects emitted before a result's test can be ones a value phi of an arm needed fused into their
        # branch (jsoup Attribute.equals): then the arms write them, as they did before. A join some path took
        # can be what refused (its continuation reads what one path computed): then each path writes its copy
        # (a join of a phi below an iteration tree's root can be what refused: then only the leaves are joined)
        for prefixes in (True, False):
            for joins, tree in ((True, True), (True, False), (False, False)):
                emitter = _Emitter(peg, original, result_prefixes=prefixes, returns=returns,
                                   rotate_loops=rotate_loops, joins=joins, tree_joins=tree)
                try:
                    return finish(emitter)
                except RevertUnsupported as e:
                    refused = e
                    if not emitter.joined:
                        break
        raise cast(RevertUnsupported, refused)
    except RecursionError:
        raise RevertUnsupported("PEG too deep for the reverter") from None
    finally:
        sys.setrecursionlimit(old)


def _without_passed_through_thetas(peg: PEG) -> PEG:
    """``peg`` without the value thetas that only pass their initial value through an inner loop: ``theta_l(a,
    eval_m(t, p))`` whose next value comes back to itself through evals of loops it does not vary in, and
    ``theta_m(t, eval_n(theta_m ...))`` like it, are ``a`` (``theta_l(a, self) = a``; ``eval_m(x, p) = x`` for
    ``x`` invariant in ``m``, the loop still running on the sigma chain). Without this, every variable an outer
    loop reads is copied into a fresh variable before each inner loop and back after it. Heap thetas stay: they
    are what keeps a loop on the sigma chain."""
    nodes, var = peg.nodes, peg.variance()
    alias: dict[int, int] = {}

    def follow(x: int) -> int:
        for _ in range(len(nodes)):
            if x in alias:
                x = alias[x]
                continue
            n = nodes[x]
            if n.op == "eval" and n.attr not in var[follow_alias(n.children[0])]:
                x = n.children[0]
                continue
            return x
        return x

    def follow_alias(x: int) -> int:
        for _ in range(len(nodes)):
            if x not in alias:
                return x
            x = alias[x]
        return x

    changed = True
    while changed:
        changed = False
        for i, n in enumerate(nodes):
            if n.op == "theta" and i not in alias and follow(n.children[1]) == i and not poly_sigma(peg, i):
                alias[i] = n.children[0]
                changed = True
    if not alias:
        return peg
    new_nodes = [Node(n.op, n.attr, tuple(follow_alias(c) for c in n.children)) for n in nodes]
    work = PEG(name=peg.name, class_name=peg.class_name, is_static=peg.is_static, synchronized=peg.synchronized,
               nodes=new_nodes, root=follow_alias(peg.root), param_types=peg.param_types,
               origins=dict(peg.origins), locals=dict(peg.locals))
    return minimize(work)
