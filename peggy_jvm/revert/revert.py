"""Reversion: a PEG back to an IR method (Tate 2012, chapter 8, in a demand-driven form).

What this module owns
    :func:`revert_peg`: PEG -> :class:`~peggy_jvm.ir.nodes.IRMethod` with the same meaning, and
    :class:`RevertUnsupported` for the PEGs it cannot turn into code yet (one line saying why).

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
    * A phi becomes a branch. All phis with the same condition that are wanted at that point are emitted
      together as one branch (branch fusion), their values joined in fresh variables; a phi on sigma first emits
      the effects its two arms share (the sigma where control split), then the condition, then each arm.
    * A loop (one ``pass`` node) becomes a header, a body and an exit. Before the loop, the thetas' initial
      values are computed and invariant pure inputs that need no branch or loop are hoisted out (loop-invariant
      code motion when no theta or phi lies between). In the header, one fused branch structure, driven by the
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
      (before generation); afterwards :func:`peggy_jvm.ir.coalesce.coalesce_copies` (copies gone, a loop
      variable updated in place in one variable), tail merging of equal blocks, ``switch`` rebuilt from a chain
      of equality tests, and a layout where a join follows its predecessors (only back edges jump backward);
      last, a ``goto`` to a block that only returns or throws becomes that return where it is no longer.
    * Under ``--goal speed`` (``rotate_loops``), before the layout, loops are tested at the bottom after an entry
      test (:func:`_rotate_loops`: one jump per iteration instead of a test and a ``goto``), a hoisted loop's
      zero-trip values are set before its entry test and its continuation written once
      (:func:`_zero_trip_values_first`), an entry test an earlier test decides is dropped
      (:func:`_settle_known_tests`) and a test of a constant just set tests the constant. The self-check proves
      these through the prover's view of them (validate/loopshape.py).

Inputs: a PEG from :func:`peggy_jvm.peg.build.build_peg` (or an extracted one) and the original IR method
(for its name, descriptor and parameter variables).
Outputs: an IRMethod for :func:`peggy_jvm.ir.lower.lower_method`.
Invariants: every effect node reachable from the root is emitted exactly once on every path that reaches it,
in sigma order; statements carry the bytecode origin of the effect they come from (``PEG.origins``), others
none (``origin = -1``).
"""
from __future__ import annotations

import struct
import sys
from dataclasses import fields
from typing import Callable

from ..ir.nodes import (INT, LONG, ArrayLength, ArrayLoad, ArrayStore, Binary, Block, Catch, CheckCast, ClassInit,
                        Cond, Const, Copy, GetField, GetStatic, Goto, Handler, If, InstanceOf, Invoke, InvokeDynamic,
                        InvokeKind, IRMethod, IRType, Kind, MonitorEnter, MonitorExit, New, NewArray, PutField,
                        PutStatic, Return, Stmt, Switch, Throw, Unary, Var, type_of_descriptor)
from ..ir.coalesce import coalesce_copies, interference, liveness, rename_variables
from ..ir.known import HOLDS, constant_set, decided_arm
from ..ir.lower import blocks_on_cycles
from ..ir.nodes import FLOAT, DOUBLE, REF, NULL_TYPE, CarriedLocal, ConstKind
from ..peg.build import minimize
from ..peg.graph import PEG, Node
from ..peg.loops import poly_sigma, pure_loops
from ..peg.ops import HANDLER_OPS, OPS, THROWING_DIVISIONS, Role, T
from ..semantics import int_bits_to_float, long_bits_to_double


class RevertUnsupported(Exception):
    """The PEG cannot be turned into code by this reverter (one line saying why)."""


_DONE = object()  # memo marker of an emitted sigma
_KIND_TYPE = {T.INT: INT, T.LONG: LONG, T.FLOAT: FLOAT, T.DOUBLE: DOUBLE, T.REF: REF, T.BOOL: INT}
HANDLERS_NOT_REVERTED = "exception handlers are not reverted yet"
#: reverted code of a method with exception handling may have this many statements per original one (plus 64)
STATEMENTS_PER_ORIGINAL = 4
_INVOKE = {f"invoke.{k.value}": k for k in InvokeKind}
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


class _Reverter:
    def __init__(self, peg: PEG, original: IRMethod, result_prefixes: bool = True,
                 returns_in_place: bool = True, rotate_loops: bool = False) -> None:
        self.peg = peg
        self.rotate_loops = rotate_loops
        # emit the effects both arms of a result's test start with before the test (gen_result)
        self.result_prefixes = result_prefixes
        self.returns_in_place = returns_in_place
        self.nodes = peg.nodes
        self.m = original
        self.variance = peg.variance()
        self.types: dict[int, IRType | None] = {}
        self.blocks: dict[int, Block] = {}
        self.cur: Block | None = None
        self.scopes: list[dict[int, object]] = [{}]
        self.spent: list[set[int]] = [set()]  # per scope: effects that ran in arms already joined
        self.joined: list[set[int]] = []  # per branch being generated: effects its finished arms ran
        self.facts: list[dict[int, bool]] = [{}]  # per scope: conditions known on the current path
        self.result_outs: dict[int, tuple[str, Var | None]] = {}
        self.last_init: tuple[ClassInit, int] | None = None  # the latest ClassInit, for pairing with its New  # eval of a return/throw -> its value
        self.next_var = 0
        self.variables: list[Var] = list(original.params)
        self.next_var = max((v.id for v in original.params), default=-1) + 1
        self.users: dict[int, list[int]] = {}
        for i, n in enumerate(peg.nodes):
            for c in n.children:
                self.users.setdefault(c, []).append(i)
        self.room: int | None = None
        if uses_handlers(peg):
            why = _unsupported_handling(peg.nodes, self.variance, self.users)
            if why is not None:
                raise RevertUnsupported(f"{HANDLERS_NOT_REVERTED}: {why}")
            # each try region's continuation is generated on its normal path and again after its handler, so a
            # chain of them (a $SwitchMap <clinit>) doubles the code per region: refused past this many statements
            self.room = STATEMENTS_PER_ORIGINAL * sum(len(b.stmts) + 1 for b in original.blocks.values()) + 64
        self.evals_of: dict[int, list[int]] = {}
        for i, n in enumerate(peg.nodes):
            if n.op == "eval" and self.nodes[n.children[1]].op == "pass":
                self.evals_of.setdefault(n.children[1], []).append(i)
        # loops without effects that provably end: computed where their values are wanted (see pure_loops)
        self.pure = pure_loops(peg, self.variance)
        self.open_depths: list[int] = []  # depths of the loops whose iteration is being generated
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

    def end(self, term) -> None:
        if self.cur is not None:
            self.cur.terminator = term
        self.cur = None

    def goto(self, b: Block) -> None:
        self.end(Goto(b.id))

    # -- scopes ---------------------------------------------------------------------------------------------
    def lookup(self, n: int) -> object:
        for s in reversed(self.scopes):
            v = s.get(n)
            if v is not None:
                return v
        return None

    def bind(self, n: int, v: object) -> None:
        self.scopes[-1][n] = v

    def push(self, start: dict | None = None, known: tuple[int, bool] | None = None) -> None:
        """Enter a branch arm or loop iteration; ``known``: the condition this arm knows the value of."""
        self.scopes.append(start if start is not None else {})
        self.spent.append(set())
        if known is not None:
            c, value = known
            while self.nodes[c].op == "not":  # kept under the operand: fact() looks through negations the same way
                c, value = self.nodes[c].children[0], not value
            known = (c, value)
        self.facts.append({} if known is None else {known[0]: known[1]})


    def fact(self, c: int) -> bool | None:
        """The value of bool node ``c`` on the current path, if a branch on it (or its negation) led here."""
        neg = False
        while self.nodes[c].op == "not":
            c, neg = self.nodes[c].children[0], not neg
        if self.nodes[c].op == "const.b":
            return bool(self.nodes[c].attr) != neg
        for f in reversed(self.facts):
            v = f.get(c)
            if v is not None:
                return v != neg
        return None

    def pop(self, joined: bool = True) -> None:
        """Leave a branch arm or loop. When control goes on after it (``joined``), the effects it ran have
        happened for everything after the join, so no later code may run them again."""
        d = self.scopes.pop()
        self.facts.pop()
        gone = self.spent.pop() | {k for k in d if OPS[self.nodes[k].op].role is Role.EFFECT
                                   or self.nodes[k].op == "pass"}
        if joined:
            self.joined[-1] |= gone

    def arms(self) -> None:
        """Start a branch whose arms are generated next: their spent effects apply only after all of them."""
        self.joined.append(set())

    def join(self) -> None:
        self.spent[-1] |= self.joined.pop()

    # -- types ----------------------------------------------------------------------------------------------
    def type_of(self, n: int) -> IRType:
        t = self.types.get(n)
        if t is None:
            t = self._type(n, set())
            self.types[n] = t
        return t

    def _type(self, n: int, seen: set) -> IRType:
        if n in self.types and self.types[n] is not None:
            return self.types[n]  # type: ignore[return-value]
        if n in seen:
            return REF
        seen.add(n)
        node = self.nodes[n]
        op, attr = node.op, node.attr
        spec = OPS[op]
        if op == "param":
            return self.m.params[attr].type  # type: ignore[index]
        if op == "const.a":
            return attr.type  # type: ignore[union-attr]
        if spec.output in _KIND_TYPE and op not in ("rho_value",):
            if op in ("checkcast",):
                return IRType(Kind.REF, attr)  # type: ignore[arg-type]
            return _KIND_TYPE[spec.output]
        if op in ("phi", "theta", "eval", "shift", "peel"):
            kids = node.children[1:] if op == "phi" else node.children[:1]
            for c in kids:
                t = self._type(c, seen)
                if t is not None:
                    return t
            return REF
        if op == "rho_value":
            return self.value_type(node.children[0])
        raise RevertUnsupported(f"no value type for {op}")

    def value_type(self, o: int) -> IRType:
        node = self.nodes[o]
        op, attr = node.op, node.attr
        if op in ("getfield", "getstatic"):
            return type_of_descriptor(attr.descriptor)  # type: ignore[union-attr]
        if op == "aload":
            return type_of_descriptor(attr if attr != "L" else "Ljava/lang/Object;")  # type: ignore[arg-type]
        if op == "arraylength":
            return INT
        if op == "newarray":
            return IRType(Kind.REF, attr)  # type: ignore[arg-type]
        if op == "new":
            return IRType(Kind.REF, attr[0])  # type: ignore[index]
        if op == "checkcast":
            return IRType(Kind.REF, attr)  # type: ignore[arg-type]
        if op in _INVOKE:
            r = attr.descriptor[attr.descriptor.index(")") + 1:]  # type: ignore[union-attr]
            return type_of_descriptor(r)
        if op == "invokedynamic":
            d = attr[1]  # type: ignore[index]
            return type_of_descriptor(d[d.index(")") + 1:])
        if op in ("check.zero.i",):
            return INT
        if op in ("check.zero.l",):
            return LONG
        raise RevertUnsupported(f"no value type for {op}")

    def is_sigma(self, n: int) -> bool:
        op = self.nodes[n].op
        spec = OPS[op]
        if spec.output is T.SIGMA:
            return True
        if op in ("phi", "theta", "eval"):
            return self._sigma_poly(n, set())
        return False

    def is_result(self, n: int) -> bool:
        node = self.nodes[n]
        if node.op == "phi":
            return self.is_result(node.children[1]) or self.is_result(node.children[2])
        if node.op == "eval":
            return self.is_result(node.children[0])
        return node.op in ("return", "throw")

    def _sigma_poly(self, n: int, seen: set) -> bool:
        if n in seen:
            return False
        seen.add(n)
        node = self.nodes[n]
        if node.op not in ("phi", "theta", "eval"):
            return OPS[node.op].output is T.SIGMA
        kids = node.children[1:] if node.op == "phi" else node.children[:1]
        return any(self._sigma_poly(c, seen) for c in kids)

    # -- availability ---------------------------------------------------------------------------------------
    def available(self, n: int, loops: bool = False, inside: frozenset[int] = frozenset()) -> bool:
        """Whether ``n`` can be computed here without running an effect, loop or theta this path has not run.
        With ``loops``, a pure loop (:func:`pure_loops`) not run yet counts as computable (it is then run
        here) when everything it needs is; ``inside``: the pure loops (passes) being judged (their thetas are
        computed by those loops)."""
        seen: set[tuple[int, frozenset[int]]] = set()
        stack = [(n, inside)]
        while stack:
            x, ins = stack.pop()
            if (x, ins) in seen or self.lookup(x) is not None:
                continue
            seen.add((x, ins))
            node = self.nodes[x]
            op = node.op
            depths = {self.nodes[q].attr for q in ins}
            if (op == "theta" and node.attr in depths) or x in ins:
                stack.extend((c, ins) for c in node.children)
                continue
            if op == "eval" and self.lookup(node.children[1]) is None:
                p = node.children[1]
                if p in ins:
                    stack.append((node.children[0], ins))
                    continue
                if not loops or p not in self.pure or node.attr in depths or node.attr in self.open_depths:
                    return False
                stack.append((node.children[0], ins | {p}))
                stack.append((p, ins | {p}))
                continue
            role = OPS[op].role
            if role is Role.EFFECT or op in ("pass", "theta", "sigma0"):
                return False
            if op == "eval":
                continue
            if op == "phi":
                k = self.fact(node.children[0])
                if k is not None:
                    stack.append((node.children[1 if k else 2], ins))
                    continue
            stack.extend((c, ins) for c in node.children)
        return True

    # -- values ---------------------------------------------------------------------------------------------
    def gen(self, n: int):
        """Emit what computes ``n`` (if not yet in scope) and return its operand (None for sigma)."""
        got = self.lookup(n)
        if got is not None:
            return None if got is _DONE else got
        node = self.nodes[n]
        op, attr, ch = node.op, node.attr, node.children
        spec = OPS[op]
        role = spec.role
        if role is Role.CONST:
            v = self.constant(op, attr)
            return v
        if op == "param":
            return self.m.params[attr]  # type: ignore[index]
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
            dst = self.new_var(self.type_of(n))
            if op == "instanceof":
                self.emit(InstanceOf(dst, args[0], attr))  # type: ignore[arg-type]
            elif len(args) == 1:
                self.emit(Unary(dst, op, args[0]))
            else:
                self.emit(Binary(dst, op, args[0], args[1]))
            self.bind(n, dst)
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
            return Const(FLOAT, int_bits_to_float(attr))  # type: ignore[arg-type]
        if op == "const.d":
            return Const(DOUBLE, long_bits_to_double(attr))  # type: ignore[arg-type]
        if op == "const.a":
            return attr  # type: ignore[return-value]
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
        self.bind(n, dst)
        return dst

    # -- effects --------------------------------------------------------------------------------------------
    def gen_sigma(self, s: int) -> None:
        if self.lookup(s) is not None:
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
        self.bind(s, _DONE)

    def gen_effect(self, o: int, handler: Block | None = None, normal: Block | None = None):
        """Emit effect ``o`` (after its heap and operands) and return its value's variable. With ``handler``, the
        statement is alone in a block whose exceptions go to ``handler`` (any type), and ``normal`` follows it."""
        got = self.lookup(o)
        if got is not None:
            return None if got is _DONE else got
        if any(o in sp for sp in self.spent):
            raise RevertUnsupported("an effect is needed again after the branch it ran in")
        node = self.nodes[o]
        op, attr, ch = node.op, node.attr, node.children
        self.gen_sigma(ch[0])
        args = [self.gen(c) for c in ch[1:]]
        dst: Var | None = None
        if op not in _NO_VALUE and not self._void(op, attr):
            dst = self.new_var(self.value_type(o))
        if op in ("check.zero.i", "check.zero.l"):
            if handler is not None:
                raise RevertUnsupported(f"{HANDLERS_NOT_REVERTED}: a checked division in a try region")
            self.bind(o, args[0])
            # the check is a division by the checked value: emit one the method needs here if its dividend is
            # at hand (javac's own shape), else divide zero by it
            for rv in self.users.get(o, ()):
                if self.nodes[rv].op != "rho_value":
                    continue
                for d in self.users.get(rv, ()):
                    dn = self.nodes[d]
                    if dn.op in THROWING_DIVISIONS and dn.children[1] == rv and \
                            self.lookup(d) is None and self.available(dn.children[0]):
                        a = self.gen(dn.children[0])
                        dst = self.new_var(self.type_of(d))
                        self.emit(Binary(dst, dn.op, a, args[0], origin=self.peg.origins.get(o, -1)))
                        self.bind(d, dst)
                        return args[0]
            wide = op.endswith("l")
            tmp = self.new_var(LONG if wide else INT)
            self.emit(Binary(tmp, "div.l" if wide else "div.i", Const(LONG if wide else INT, 0), args[0],
                             origin=self.peg.origins.get(o, -1)))
            return args[0]
        if op == "getfield":
            st = GetField(dst, args[0], attr)  # type: ignore[arg-type]
        elif op == "putfield":
            st = PutField(args[0], attr, args[1])  # type: ignore[arg-type]
        elif op == "getstatic":
            st = GetStatic(dst, attr)  # type: ignore[arg-type]
        elif op == "putstatic":
            st = PutStatic(attr, args[0])  # type: ignore[arg-type]
        elif op == "aload":
            st = ArrayLoad(dst, args[0], args[1], attr)  # type: ignore[arg-type]
        elif op == "astore":
            st = ArrayStore(args[0], args[1], args[2], attr)  # type: ignore[arg-type]
        elif op == "arraylength":
            st = ArrayLength(dst, args[0])  # type: ignore[arg-type]
        elif op == "newarray":
            st = NewArray(dst, attr, list(args))  # type: ignore[arg-type]
        elif op == "classinit":
            st = ClassInit(attr)  # type: ignore[arg-type]
            self.last_init = (st, o)
        elif op == "new":
            init = None
            prev = self.nodes[ch[0]]
            li = self.last_init
            # the latest class initialization of this class in this block, if no New took it yet: lowering pairs
            # the two (``new; dup`` under the arguments) when what lies between computes only the arguments
            if prev.op == "rho_sigma" and li is not None and self.nodes[li[1]].attr == attr[0] \
                    and self.cur is not None and li[0] in self.cur.stmts:  # type: ignore[index]
                init = li[0]
                self.last_init = None
            st = New(dst, attr[0], attr[1], list(args), init)  # type: ignore[index, arg-type]
        elif op in _INVOKE:
            kind = _INVOKE[op]
            recv = args[0] if kind is not InvokeKind.STATIC else None
            rest = args[1:] if kind is not InvokeKind.STATIC else args
            st = Invoke(dst, kind, attr, recv, list(rest))  # type: ignore[arg-type]
        elif op == "invokedynamic":
            name, desc, bsm = attr  # type: ignore[misc]
            st = InvokeDynamic(dst, name, desc, bsm, list(args))
        elif op == "checkcast":
            st = CheckCast(dst, args[0], attr)  # type: ignore[arg-type]
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
                self.goto(normal)  # type: ignore[arg-type]
        self.bind(o, dst if dst is not None else _DONE)
        return dst

    def gen_try(self, o: int, caught: Block, normal: Block) -> None:
        """The branch on ``threw(o)``: ``o`` runs in a try range whose handler (any exception) binds the exception
        and goes to ``caught``; the normal path goes to ``normal``. The PEG's own dispatch (``instanceof`` tests
        and a ``throw`` of what no handler takes) follows in ``caught``, so catching everything here changes
        nothing: an exception no original handler took is thrown again, the same object."""
        if self.lookup(o) is not None:
            raise RevertUnsupported(f"{HANDLERS_NOT_REVERTED}: an exception test after its effect ran")
        handler = self.new_block()
        self.gen_effect(o, handler, normal)
        exc = self.new_var(REF)
        for u in self.users.get(o, ()):
            if self.nodes[u].op == "rho_exc":
                self.bind(u, exc)
            elif self.nodes[u].op == "rho_esigma":
                self.bind(u, _DONE)
        self.cur = handler
        self.emit(Catch(exc))
        self.goto(caught)

    @staticmethod
    def _void(op: str, attr: object) -> bool:
        if op in _INVOKE:
            return attr.descriptor.endswith(")V")  # type: ignore[union-attr]
        if op == "invokedynamic":
            return attr[1].endswith(")V")  # type: ignore[index]
        return False

    # -- conditions -----------------------------------------------------------------------------------------
    def gen_cond(self, c: int, t: Block, f: Block) -> None:
        """Branch to ``t`` when the bool node ``c`` holds, else to ``f``."""
        node = self.nodes[c]
        op, ch = node.op, node.children
        if self.cur is None:
            return
        known = self.fact(c)
        if known is not None:
            self.goto(t if known else f)
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
            self.arms()
            self.push()
            self.gen_cond(ch[1], t, f)
            self.pop()
            self.join()
        elif op == "phi":
            a, b = self.new_block(), self.new_block()
            self.gen_cond(ch[0], a, b)
            self.arms()
            for blk, k in ((a, 1), (b, 2)):
                self.cur = blk
                self.push(known=(ch[0], k == 1))
                self.gen_cond(ch[k], t, f)
                self.pop()
            self.join()
        elif op in ("eq.a", "ne.a"):
            x, y = self.gen(ch[0]), self.gen(ch[1])
            self.end(If(Cond.EQ if op == "eq.a" else Cond.NE, x, y, t.id, f.id))
        elif op.endswith(".i") and op[:-2] in ("eq", "ne", "lt", "ge", "gt", "le"):
            x, y = self.gen(ch[0]), self.gen(ch[1])
            self.end(If(Cond(op[:-2]), x, y, t.id, f.id))
        elif op == "eval":
            v = self.gen(c)
            self.end(If(Cond.NE, v, Const(INT, 0), t.id, f.id))
        else:
            raise RevertUnsupported(f"condition {op}")

    # -- phi ------------------------------------------------------------------------------------------------
    def gen_phi(self, n: int):
        c = self.nodes[n].children[0]
        known = self.fact(c)
        if known is not None:
            k = 1 if known else 2
            r = self.gen(self.nodes[n].children[k])
            self.bind(n, r if r is not None else _DONE)
            return r
        if self.is_sigma(n):
            self.emit_common_prefix(n)  # first: then the siblings' needs are judged from the branch point
        else:
            self.pull_sigma_phi(n, c)  # a value made by effects of a branch: emit that branch as a whole
        if self.lookup(n) is not None:
            r = self.lookup(n)
            return None if r is _DONE else r
        group = self.siblings(n, c)
        if len([p for p in group if self.is_sigma(p)]) > 1:
            group = [p for p in group if p == n or not self.is_sigma(p)]
        self.branch_group(c, group)
        r = self.lookup(n)
        return None if r is _DONE else r

    def pull_sigma_phi(self, n: int, c: int) -> None:
        """Value phi ``n`` is wanted before the sigma phi of its branch (by a condition, say). If its arms need
        effects that only that branch's arms run, emit the branch now, with ``n`` fused into it; otherwise
        the arms would run those effects a second time after the branch."""
        arms_n = self.nodes[n].children[1:]
        need: set[int] = set()
        for a in arms_n:
            need |= self.effects_needed(a)
        if not need:
            return
        for u in self.users.get(c, ()):
            node = self.nodes[u]
            if node.op != "phi" or node.children[0] != c or u == n or self.lookup(u) is not None or \
                    self.variance[u] != self.variance[n] or not self.is_sigma(u):
                continue
            e1 = self.effects_needed(node.children[1])
            e2 = self.effects_needed(node.children[2])
            if not need & (e1 ^ e2):
                continue
            if self.reaches_node(node.children[1:], n):
                continue  # that branch comes after n's use: not n's branch
            self.gen_sigma(u)
            return

    def reaches_node(self, starts, target: int) -> bool:
        return any(target in self.reach_set(x) for x in starts)

    def siblings(self, n: int, c: int) -> list[int]:
        """The phis on condition ``c`` wanted with ``n`` (branch fusion): same condition, same loops, not yet
        emitted, and computable inside the arms without effects or loops beyond the arms' own."""
        out = [n]
        var = self.variance[n]
        for u in self.users.get(c, ()):
            if u == n or self.nodes[u].op != "phi" or self.nodes[u].children[0] != c or self.variance[u] != var:
                continue
            if self.lookup(u) is not None or self.is_result(u):
                continue  # a phi of method results is code, generated where the result is wanted
            if self.is_sigma(u) and not self.is_sigma(n):
                continue  # a value phi never pulls effects forward: its sigma phi is emitted in sigma order
            out.append(u)
        if len(out) == 1:
            return out
        # keep value phis whose arms need no effect or loop other than what the sigma phi's same arm runs, and
        # none that needs another value sibling (that one may come later in the program); sigma phis on the same
        # condition inside the arms are fine: the arms resolve them
        sig = [p for p in out if self.is_sigma(p)]
        members = {p for p in out if p == n or not self.is_sigma(p)}
        arm_reach = [self.reach_set(self.nodes[sig[0]].children[k]) if sig else set() for k in (1, 2)]
        keep = []
        for p in out:
            if p == n or self.is_sigma(p):
                keep.append(p)
                continue
            if all(self.arm_ok(self.nodes[p].children[k], arm_reach[k - 1], members) for k in (1, 2)):
                keep.append(p)
        return keep

    def reach_set(self, n: int) -> set[int]:
        """Nodes ``n`` needs that are not computed yet (through every child)."""
        seen: set[int] = set()
        stack = [n]
        while stack:
            x = stack.pop()
            if x in seen or self.lookup(x) is not None:
                continue
            seen.add(x)
            stack.extend(self.nodes[x].children)
        return seen

    def arm_ok(self, a: int, sigma_arm: set[int], members: set[int]) -> bool:
        """Whether value ``a`` can be computed at the end of an arm that runs ``sigma_arm``: every effect and
        loop it needs is one the arm runs, and it needs no other value sibling."""
        for x in self.reach_set(a):
            if x != a and x in members:
                return False
            op = self.nodes[x].op
            if (OPS[op].role is Role.EFFECT or op == "pass") and x not in sigma_arm:
                return False
            if op == "sigma0":
                return False
        return True

    def effects_needed(self, n: int) -> set[int]:
        """The effects ``n`` needs that are not emitted yet."""
        return {x for x in self.reach_set(n) if OPS[self.nodes[x].op].role is Role.EFFECT}

    def emit_common_prefix(self, p: int) -> None:
        """Emit the effects both arms of sigma phi ``p`` certainly start from (the sigma where control split)."""
        memo: dict[int, tuple[int, ...]] = {}
        a, b = self.nodes[p].children[1], self.nodes[p].children[2]
        common = _common_suffix(self.sigma_chain(a, memo), self.sigma_chain(b, memo))
        if common:
            self.gen_sigma(common[0])

    def sigma_chain(self, s: int, memo: dict[int, tuple[int, ...]]) -> tuple[int, ...]:
        """The sigma nodes every computation of ``s`` passes through, nearest first, down to the first one
        already emitted (a phi contributes only what both its arms pass through; a loop, what its sigma theta's
        initial value does)."""
        out: list[int] = []
        x: int | None = s
        while x is not None:
            if x in memo:
                out.extend(memo[x])
                break
            out.append(x)
            if self.lookup(x) is not None:
                break
            node = self.nodes[x]
            if node.op == "rho_sigma":
                x = self.nodes[node.children[0]].children[0]
            elif node.op == "theta":
                x = node.children[0]
            elif node.op == "eval":  # what the loop starts from: its iteration's own sigmas are not shared
                d = node.attr
                out.extend(y for y in self.sigma_chain(node.children[0], memo) if d not in self.variance[y])
                break
            elif node.op == "phi":
                rest = _common_suffix(self.sigma_chain(node.children[1], memo),
                                      self.sigma_chain(node.children[2], memo))
                out.extend(rest)
                break
            else:
                break
        memo[s] = tuple(out)
        return memo[s]

    def must(self, n: int, memo: dict[int, frozenset[int]]) -> frozenset[int]:
        """Nodes certainly evaluated whenever ``n`` is (not through one arm of a phi only, nor into loops), that
        are not computed yet."""
        got = memo.get(n)
        if got is not None:
            return got
        memo[n] = frozenset()
        if self.lookup(n) is not None:
            return memo[n]
        node = self.nodes[n]
        if node.op == "phi":
            r = self.must(node.children[0], memo) | (self.must(node.children[1], memo) &
                                                     self.must(node.children[2], memo))
        elif node.op in ("theta", "eval", "pass"):
            r = frozenset()
        else:
            r = frozenset().union(*(self.must(c, memo) for c in node.children)) if node.children else frozenset()
        r = r | {n}
        memo[n] = r
        return r

    def hoist_common(self, ch: tuple[int, ...]) -> None:
        """Before the operands of one pure node are generated in order: a value a later operand certainly needs,
        and that something else uses too, is computed first, here, so that it is computed once on every path
        (partial redundancy elimination: without this an earlier operand may compute it in a branch arm, whose
        scope ends at the join, and the later operand computes it again). Only pure values available here, which
        have no effect and always end, are moved; the walk is bounded (a smaller must-set is still one)."""
        for j in range(1, len(ch)):
            budget = [64]
            for x in sorted(self.must_bounded(ch[j], budget, {})):
                node = self.nodes[x]
                if OPS[node.op].role is not Role.PURE or OPS[node.op].output is T.BOOL or node.op == "guard" or \
                        self.lookup(x) is not None or len(self.users.get(x, ())) < 2:
                    continue
                if self.hoistable(x, set()) and self.available(x):
                    self.gen(x)

    def must_bounded(self, n: int, budget: list[int], memo: dict[int, frozenset[int]]) -> frozenset[int]:
        """A subset of :meth:`must` (nodes certainly evaluated whenever ``n`` is) found within ``budget`` steps."""
        got = memo.get(n)
        if got is not None:
            return got
        if self.lookup(n) is not None:
            return frozenset()
        budget[0] -= 1
        node = self.nodes[n]
        if budget[0] < 0 or node.op in ("theta", "eval", "pass"):
            r: frozenset[int] = frozenset()
        elif node.op == "phi":
            r = self.must_bounded(node.children[0], budget, memo) | \
                (self.must_bounded(node.children[1], budget, memo) & self.must_bounded(node.children[2], budget, memo))
        else:
            r = frozenset().union(*(self.must_bounded(c, budget, memo) for c in node.children))
        memo[n] = r | {n}
        return memo[n]

    def hoist_shared(self, c: int, arms: list[tuple[int, int]]) -> None:
        """Compute before a branch the values both arms certainly need (hoisting of always-evaluated nodes),
        when that needs no effect, loop or theta the branch point has not run."""
        memo: dict[int, frozenset[int]] = {}
        shared: set[int] = set()
        for a, b in arms:
            shared |= self.must(a, memo) & self.must(b, memo)
        for x in sorted(shared):
            node = self.nodes[x]
            if OPS[node.op].role in (Role.CONST, Role.PARAM) or self.is_sigma(x) or \
                    OPS[node.op].output is T.BOOL or self.lookup(x) is not None:
                continue
            if self.available(x):
                self.gen(x)

    def branch_group(self, c: int, group: list[int]) -> None:
        """One branch on ``c`` computing every phi of ``group``, values joined in fresh variables."""
        self.hoist_shared(c, [(self.nodes[p].children[1], self.nodes[p].children[2]) for p in group
                              if not self.is_sigma(p)])
        vals = {p: self.new_var(self.type_of(p)) for p in group if not self.is_sigma(p)}
        t, f, j = self.new_block(), self.new_block(), self.new_block()
        self.gen_cond(c, t, f)
        reached = False
        self.arms()
        for blk, k in ((t, 1), (f, 2)):
            self.cur = blk
            self.push(known=(c, k == 1))
            for p in group:
                if self.is_sigma(p):
                    self.gen_sigma(self.nodes[p].children[k])
            for p, v in vals.items():
                r = self.gen(self.nodes[p].children[k])
                self.emit(Copy(v, r))
            self.pop(joined=self.cur is not None)
            if self.cur is not None:
                reached = True
                self.goto(j)
        self.join()
        self.cur = j if reached else None
        for p in group:
            self.bind(p, vals.get(p, _DONE))

    # -- loops ----------------------------------------------------------------------------------------------
    def gen_eval(self, n: int):
        x, p = self.nodes[n].children
        if self.nodes[p].op != "pass":
            raise RevertUnsupported("eval of a non-pass index")
        d = self.nodes[n].attr
        if d not in self.variance[x]:  # invariant in the loop: its value once the loop has ended
            if p not in self.pure:  # a pure loop ends and does nothing else: no need to run it for x
                self.gen_loop(p)
            r = self.gen(x)
            self.bind(n, r if r is not None else _DONE)
            return r
        self.gen_loop(p)
        r = self.lookup(n)
        if r is None and p in self.pure and self.cur is not None:
            # a pure loop that ran elsewhere (another arm, an earlier iteration) or without this output: running
            # it again here computes the same values and does nothing else
            self.gen_loop(p, only=n)
            r = self.lookup(n)
        if r is None:
            raise RevertUnsupported("a loop output was not computed")
        return None if r is _DONE else r

    def loop_thetas(self, p: int, d: int, evals: list[int]) -> list[int]:
        roots = [self.nodes[p].children[0]] + [self.nodes[e].children[0] for e in evals]
        seen: set[int] = set()
        thetas: list[int] = []
        stack = list(roots)
        while stack:
            x = stack.pop()
            if x in seen or d not in self.variance[x]:
                continue
            seen.add(x)
            node = self.nodes[x]
            if node.op == "theta" and node.attr == d:
                thetas.append(x)
                stack.append(node.children[1])
                continue
            if node.op == "eval" and node.attr == d:
                continue
            stack.extend(node.children)
        return sorted(thetas)

    def gen_loop(self, p: int, only: int | None = None) -> None:
        """Emit loop ``p`` here with the values its ``eval`` nodes read (``only``: a pure loop run again for
        that one eval)."""
        if only is None and self.lookup(p) is not None:
            return
        if self.cur is None:
            self.bind(p, _DONE)
            return
        d = self.nodes[p].attr
        assert isinstance(d, int)
        if p in self.pure and d in self.open_depths:
            # its thetas may be shared with the open loop's (equal sequences are one class): values computed from
            # the open loop's variables would be reused inside this one
            raise RevertUnsupported("a loop is needed inside another loop of the same depth")
        guard = self.nodes[p].children[0]
        if self.nodes[guard].op != "guard":
            raise RevertUnsupported("a loop without a guarded break condition")
        s_end, brk = self.nodes[guard].children
        evals = [e for e in self.evals_of.get(p, ()) if d in self.variance[self.nodes[e].children[0]]]
        if p in self.pure:
            # a pure loop computes the outputs that can be computed here; one wanted later, where more is
            # available, runs it again (an eval needing an effect not run yet must not get a dead zero)
            evals = [e for e in evals if e == only or
                     (only is None and self.available(self.nodes[e].children[0], True, frozenset({p})))]
        thetas = self.loop_thetas(p, d, evals)
        # preheader: initial values, then hoisted invariant inputs
        tvars: dict[int, object] = {}
        carried: list[tuple[Var, tuple[int, int]]] = []
        for th in thetas:
            init = self.nodes[th].children[0]
            if self.is_sigma(th):
                self.gen_sigma(init)
                tvars[th] = _DONE
            else:
                v = self.new_var(self.type_of(th))
                self.emit(Copy(v, self.gen(init)))
                tvars[th] = v
                if th in self.peg.locals:
                    carried.append((v, self.peg.locals[th]))
        if p in self.pure:
            # its heap does not change in the loop: any effect it still needs runs once, here, never in the header
            self.gen_sigma(s_end)
        self.hoist_invariants(p, d, thetas, evals)
        header, exit_ = self.new_block(), self.new_block()
        self.carried += [(v, local, header) for v, local in carried]
        self.goto(header)
        self.cur = header
        self.arms()
        self.push(dict(tvars))
        # the iteration: one fused branch structure over the sigma the iteration ends with; each path ends by
        # going to the exit (loop outputs assigned) or back to the header (thetas assigned)
        # outputs: every value the loop's evals read; a method result read at the exit (a return inside the
        # loop) is its value, and the return itself is emitted where the result is wanted
        outs: list[tuple[int, Var]] = []
        for e in evals:
            x = self.nodes[e].children[0]
            if self.nodes[x].op in ("return", "throw"):
                v = self.nodes[x].children[1]
                var = None
                if self.nodes[v].op != "unit":
                    var = self.new_var(self.type_of(v))
                    outs.append((v, var))
                self.result_outs[e] = (self.nodes[x].op, var)
            elif self.is_result(x):
                raise RevertUnsupported("a loop ends the method in several ways")
            elif not self.is_sigma(e):
                outs.append((x, self.new_var(self.type_of(e))))
        loop = _LoopCode(header, exit_, brk,
                         [(self.nodes[th].children[1], tvars[th]) for th in thetas if not self.is_sigma(th)],
                         outs)
        self.open_depths.append(d)
        self.iteration(s_end, loop, [x for x, _ in loop.nexts] + [x for x, _ in loop.outs] + [brk])
        self.open_depths.pop()
        self.pop()
        self.join()
        self.cur = exit_
        self.bind(p, _DONE)
        by_node = {x: v for x, v in outs}
        for e in evals:
            x = self.nodes[e].children[0]
            self.bind(e, by_node.get(x, _DONE) if e not in self.result_outs and not self.is_sigma(e) else _DONE)

    def iteration(self, s: int, loop: _LoopCode, wanted: list[int]) -> None:
        """Emit the effects of sigma tree ``s``; on each path, leave the iteration as the break condition says."""
        node = self.nodes[s]
        if node.op == "phi" and self.lookup(s) is None:
            c = node.children[0]
            known = self.fact(c)  # a branch this path already took (e.g. an exception's, in its handler)
            if known is not None or self.nodes[c].op == "const.b":
                k = 1 if (known if known is not None else self.nodes[c].attr) else 2
                self.iteration(node.children[k], loop.split(self, c, k), self.split(wanted, c, k))
                return
            self.emit_common_prefix(s)
            t, f = self.new_block(), self.new_block()
            self.gen_cond(c, t, f)
            self.arms()
            for blk, k in ((t, 1), (f, 2)):
                self.cur = blk
                self.push(known=(c, k == 1))
                self.iteration(node.children[k], loop.split(self, c, k), self.split(wanted, c, k))
                self.pop()
            self.join()
            self.cur = None
            return
        self.gen_sigma(s)
        brk = self.nodes[loop.brk]
        if brk.op == "const.b":
            self.leave(loop, bool(brk.attr))
            return
        x, b = self.new_block(), self.new_block()
        self.gen_cond(loop.brk, x, b)
        self.arms()
        for blk, out in ((x, True), (b, False)):
            self.cur = blk
            self.push(known=(loop.brk, out))
            self.leave(loop, out)
            self.pop()
        self.join()
        self.cur = None

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
        ops = [(v, self.gen_on_path(x, v.type)) for x, v in loop.nexts]
        targets = {id(v) for v, _ in ops}
        late: list[tuple[Var, Var]] = []
        for v, op in ops:
            if op is v:
                continue
            if isinstance(op, Var) and id(op) in targets:  # read after another theta is written: via a temp
                t = self.new_var(op.type)
                self.emit(Copy(t, op))
                late.append((v, t))
            else:
                late.append((v, op))  # type: ignore[arg-type]
        for v, op in late:
            self.emit(Copy(v, op))
        self.goto(loop.header)

    def gen_on_path(self, x: int, t: IRType):
        """The value of ``x`` at the end of the current path of a loop iteration. A phi whose condition this
        path has not decided is tested here; an arm that needs an effect or loop this path has not run cannot
        be the one taken (the sigma the path ran would then differ, and the iteration's branches follow the
        sigma), so it gets a zero that is never read."""
        if self.available(x, loops=True):
            return self.gen(x)
        node = self.nodes[x]
        if node.op != "phi":
            return self.dead_value(x, t)
        c = node.children[0]
        k = self.fact(c)
        if k is not None:
            return self.gen_on_path(node.children[1 if k else 2], t)
        if not self.available(c, loops=True):
            return self.dead_value(x, t)
        v = self.new_var(t)
        a, b, j = self.new_block(), self.new_block(), self.new_block()
        self.gen_cond(c, a, b)
        self.arms()
        for blk, arm in ((a, 1), (b, 2)):
            self.cur = blk
            self.push(known=(c, arm == 1))
            self.emit(Copy(v, self.gen_on_path(node.children[arm], t)))
            self.pop()
            self.goto(j)
        self.join()
        self.cur = j
        return v

    def dead_value(self, x: int, t: IRType) -> Const:
        """A zero for a value no run of this path can need: it needs an effect or loop on the sigma chain that
        no path reaching this point has run. If one of those ran in a branch already joined, the value was
        computed there and is lost: that is not dead, and the method is left alone. A pure loop (off the sigma
        chain) proves nothing about the path: a value that needs only such loops is not dead, and when it
        cannot be computed here the method is left alone."""
        reach = self.reach_set(x)
        spent = set().union(*self.spent)
        if spent & reach:
            raise RevertUnsupported("an effect is needed again after the branch it ran in")
        if not any(OPS[self.nodes[y].op].role is Role.EFFECT or
                   (self.nodes[y].op == "pass" and y not in self.pure) for y in reach):
            if any(self.nodes[y].op == "theta" for y in reach):  # e.g. an inner loop's counter at an outer latch
                raise RevertUnsupported("a value that varies in a loop is needed outside it")
            raise RevertUnsupported("a value of a loop off the sigma chain cannot be computed where it is needed")
        return _zero(t)

    def split(self, wanted: list[int], c: int, k: int) -> list[int]:
        return [self.arm(x, c, k) for x in wanted]

    def arm(self, x: int, c: int, k: int) -> int:
        """``x`` on the arm ``k`` of a branch on ``c`` (phis on ``c`` resolved)."""
        while self.nodes[x].op == "phi" and self.nodes[x].children[0] == c:
            x = self.nodes[x].children[k]
        return x

    def hoist_invariants(self, p: int, d: int, thetas: list[int], evals: list[int]) -> None:
        """Compute before the loop the pure inputs of its body that do not vary in it and need no branch, loop
        or effect (loop-invariant code motion)."""
        roots = [self.nodes[th].children[1] for th in thetas] + [self.nodes[p].children[0]]
        roots += [self.nodes[e].children[0] for e in evals]
        seen: set[int] = set()
        inputs: list[int] = []
        stack = list(roots)
        while stack:
            x = stack.pop()
            if x in seen:
                continue
            seen.add(x)
            if d not in self.variance[x]:
                inputs.append(x)
                continue
            node = self.nodes[x]
            if node.op == "eval" and node.attr == d:
                continue
            stack.extend(node.children)
        for x in inputs:
            if self.hoistable(x, set()):
                self.gen(x)

    def hoistable(self, x: int, seen: set[int]) -> bool:
        """``x`` needs only pure operators, constants and parameters (and branches on such conditions), so it
        can be computed ahead of where it is needed: it has no effect and always ends."""
        if x in seen or self.lookup(x) is not None:
            return True
        seen.add(x)
        node = self.nodes[x]
        role = OPS[node.op].role
        if role in (Role.CONST,) or node.op == "param":
            return True
        if role is Role.PURE and OPS[node.op].output is not T.BOOL and node.op != "guard":
            return all(self.hoistable(c, seen) for c in node.children)
        if node.op == "phi" and not self.is_sigma(x) and not self.is_result(x):
            # a branch on an invariant condition (branch hoisting): the condition is tested, not materialized
            return self.cond_hoistable(node.children[0], seen) and \
                all(self.hoistable(c, seen) for c in node.children[1:])
        return False

    def cond_hoistable(self, c: int, seen: set[int]) -> bool:
        """Bool ``c`` is a condition :meth:`gen_cond` tests with pure, hoistable operands."""
        node = self.nodes[c]
        if node.op == "const.b":
            return True
        if node.op in ("not", "and", "or"):
            return all(self.cond_hoistable(k, seen) for k in node.children)
        if node.op == "phi":
            return self.cond_hoistable(node.children[0], seen) and \
                all(self.cond_hoistable(k, seen) for k in node.children[1:])
        if node.op in ("eq.a", "ne.a") or (node.op.endswith(".i") and
                                           node.op[:-2] in ("eq", "ne", "lt", "ge", "gt", "le")):
            return all(self.hoistable(k, seen) for k in node.children)
        return False

    # -- results --------------------------------------------------------------------------------------------
    def gen_result(self, r: int) -> None:
        node = self.nodes[r]
        if self.cur is None:
            return
        if node.op == "phi":
            c = node.children[0]
            if self.nodes[c].op == "const.b":
                self.gen_result(node.children[1 if self.nodes[c].attr else 2])
                return
            # the effects both arms start with run before the test, once (as for a phi on sigma): otherwise each
            # arm writes them, and what follows them, again
            common = _common_suffix(self.result_sigma_chain(node.children[1], {}, {}),
                                    self.result_sigma_chain(node.children[2], {}, {})) \
                if self.result_prefixes and not self.effects_needed(c) else ()
            if common:
                self.gen_sigma(common[0])
                if self.cur is None:
                    return
            t, f = self.new_block(), self.new_block()
            self.gen_cond(c, t, f)
            for blk, k in ((t, 1), (f, 2)):
                self.cur = blk
                self.push(known=(c, k == 1))
                self.gen_result(node.children[k])
                self.pop(joined=False)  # an arm that ends the method joins nothing
            self.cur = None
            return
        if node.op == "eval":
            self.gen_loop(node.children[1])
            if self.cur is None:
                return
            got = self.result_outs.get(r)
            if got is None:
                raise RevertUnsupported("a result computed by a loop")
            op, var = got
            self.end(Return(var) if op == "return" else Throw(var))
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

    def result_sigma_chain(self, r: int, memo: dict[int, tuple[int, ...]],
                           results: dict[int, tuple[int, ...]]) -> tuple[int, ...]:
        """The sigma nodes every path to result ``r`` (a ``return``/``throw`` or a phi of them) passes through,
        nearest first (:meth:`sigma_chain`; a result computed by a loop: none)."""
        got = results.get(r)
        if got is not None:
            return got
        node = self.nodes[r]
        if node.op == "phi":
            out = _common_suffix(self.result_sigma_chain(node.children[1], memo, results),
                                 self.result_sigma_chain(node.children[2], memo, results))
        elif node.op in ("return", "throw"):
            out = self.sigma_chain(node.children[0], memo)
        else:
            out = ()
        results[r] = out
        return out

    def run(self) -> IRMethod:
        entry = self.new_block()
        self.cur = entry
        for i, n in enumerate(self.nodes):
            if n.op == "sigma0":
                self.scopes[0][i] = _DONE
        self.gen_result(self.peg.root)
        for b in self.blocks.values():
            if b.terminator is None:  # a block nothing reaches (a branch arm cut off by a constant)
                b.terminator = Goto(b.id)
        m = self.m
        blocks, entry_id = tidy_blocks(_reachable_blocks(self.blocks, entry.id), entry.id)
        if _thread_known_tests(blocks):
            blocks, entry_id = tidy_blocks(_reachable_blocks(blocks, entry_id), entry_id)
            _drop_dead_copies(blocks)
        coalesce_copies(IRMethod(m.class_name, m.name, m.descriptor, m.is_static, list(m.params), blocks,
                                 entry_id, variables=self.variables))  # javac's shape: variables updated in place
        blocks, entry_id = tidy_blocks(blocks, entry_id)  # blocks the copies and flags left empty are jumped over
        coalesce_copies(IRMethod(m.class_name, m.name, m.descriptor, m.is_static, list(m.params), blocks,
                                 entry_id, variables=self.variables))  # again on the blocks tidying joined
        merged = _merge_equal_blocks(blocks)  # the same continuation generated on several paths is kept once
        # ... also when generated in other variables (a handler's dispatch per statement it covers, a loop per path)
        merged = _merge_renamed_blocks(IRMethod(m.class_name, m.name, m.descriptor, m.is_static, list(m.params),
                                                blocks, entry_id, variables=self.variables)) or merged
        if merged:
            blocks, entry_id = tidy_blocks(_reachable_blocks(blocks, entry_id), entry_id)
        _switches_from_chains(blocks)
        blocks = _reachable_blocks(blocks, entry_id)
        self.next_var = max([self.next_var, *(v.id + 1 for v in self.variables)])  # coalescing made some too
        rotated = _rotate_loops(blocks, entry_id, self.new_var) if self.rotate_loops else {}
        if rotated:
            self.carried = [(v, local, rotated.get(id(header), header)) for v, local, header in self.carried]
        if rotated and _zero_trip_values_first(blocks):
            blocks = _reachable_blocks(blocks, entry_id)
        if rotated:
            blocks, entry_id = tidy_blocks(blocks, entry_id)
            if _settle_known_tests(blocks):
                blocks, entry_id = tidy_blocks(_reachable_blocks(blocks, entry_id), entry_id)
            _constants_into_tests(blocks)
        _values_into_joins(blocks, entry_id, {p.id for p in m.params})
        if self.returns_in_place and _returns_in_place_of_gotos(blocks):
            blocks = _reachable_blocks(blocks, entry_id)
        present = {x.id for b in blocks.values() for st in [*b.stmts, b.terminator]
                   for x in [*st.operands(), st.defined()] if isinstance(x, Var)}
        variables = [v for v in self.variables if v.id in present or v in m.params]
        self.mark_locals(blocks)
        return IRMethod(m.class_name, m.name, m.descriptor, m.is_static, list(m.params), blocks, entry_id,
                        synchronized=m.synchronized, variables=variables)

    def mark_locals(self, blocks: dict[int, Block]) -> None:
        """Give each theta's variable its :class:`~peggy_jvm.ir.nodes.CarriedLocal` when its loop header is
        still a block (tidying may have merged it away: then nothing is claimed)."""
        ids = {id(b): bid for bid, b in blocks.items()}
        for v, (slot, at), header in self.carried:
            if id(header) in ids:
                v.carries = CarriedLocal(slot, at, ids[id(header)])


class _LoopCode:
    """What one path of a loop iteration needs to know to leave the iteration."""

    def __init__(self, header: Block, exit_: Block, brk: int, nexts: list[tuple[int, Var]],
                 outs: list[tuple[int, Var]]) -> None:
        self.header, self.exit, self.brk, self.nexts, self.outs = header, exit_, brk, nexts, outs

    def split(self, r: _Reverter, c: int, k: int) -> _LoopCode:
        return _LoopCode(self.header, self.exit, r.arm(self.brk, c, k), [(r.arm(x, c, k), v) for x, v in self.nexts],
                         [(r.arm(x, c, k), v) for x, v in self.outs])


def _common_suffix(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The part two sigma chains share (once chains meet they coincide: sigma is linear)."""
    inb = set(b)
    for i, x in enumerate(a):
        if x in inb:
            return a[i:]
    return ()


def tidy_blocks(blocks: dict[int, Block], entry: int) -> tuple[dict[int, Block], int]:
    """Jumps to empty blocks go straight to where those lead; a block reached only by a goto from its one
    predecessor joins it; an if on two constants becomes a goto; blocks are renumbered in javac's layout
    (:func:`_layout`: joins after their predecessors, each block falling into its goto target or its if's false
    arm; lowering emits blocks in id order). Meaning unchanged: no statement moves past a branch."""
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
        term = b.terminator
        if isinstance(term, Goto):
            term.target = final(term.target)
        elif isinstance(term, If):
            term.if_true, term.if_false = final(term.if_true), final(term.if_false)
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
        b = blocks.get(bid)
        while b is not None and isinstance(b.terminator, Goto):
            t = b.terminator.target
            if t == bid or t == entry or preds.get(t, 0) != 1 or t not in blocks or \
                    _handled_by(b) != _handled_by(blocks[t]):  # a try range holds just its own statement
                break
            nxt = blocks.pop(t)
            b.stmts.extend(nxt.stmts)
            b.terminator = nxt.terminator
    order = _layout(blocks, entry)
    new_id = {old: k for k, old in enumerate(order)}
    out: dict[int, Block] = {}
    for old in order:
        b = blocks[old]
        term = b.terminator
        if isinstance(term, Goto):
            term.target = new_id[term.target]
        elif isinstance(term, If):
            term.if_true, term.if_false = new_id[term.if_true], new_id[term.if_false]
        b.handlers = tuple(Handler(h.catch_type, new_id[h.target]) for h in b.handlers)
        b.id = new_id[old]
        out[b.id] = b
    return out, new_id[entry]


def _layout(blocks: dict[int, Block], entry: int) -> list[int]:
    """Block order as javac lays code out: a block is placed once all its forward predecessors are (so a join
    comes after both arms and only a loop's back edge jumps backward); among the blocks ready, each block's
    goto target or if's false arm comes next (it falls through; a loop header's test falls into the arm that stays
    in the loop), else the block that became ready last (a loop body before the loop's exit)."""
    succs = {bid: list(dict.fromkeys(b.successors())) for bid, b in blocks.items()}
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
        if isinstance(term, If) and bid in headers and term.if_true != term.if_false:
            # a loop's test falls into the arm that stays in the loop, as javac lays a loop out (the exit is the
            # taken branch, once; the lowering negates the test): not the exit, which would make every iteration
            # jump into the body
            inside = _reaching(preds, bid)
            if term.if_true in inside and term.if_false not in inside:
                prefer = term.if_true
        for t in reversed(became):
            if t != prefer:
                ready.append(t)
        if prefer in became:
            nxt = prefer
    return order


ROTATE_MAX_HEADER_STMTS = 2
"""Loop inversion (:func:`_rotate_loops`) copies a loop's test to its bottom only when the header computes at
most this many statements before it, each one of :data:`_ROTATE_STMTS` (an ``arraylength``, a field read:
javac-sized loop tests have none to two); each copied statement costs its bytes again (one to three) for a
jump saved per iteration. A call is never copied: its three to five bytes and its arguments' are more than
the ``goto`` saved."""
_ROTATE_STMTS = (Binary, Unary, Copy, ArrayLength, ArrayLoad, GetField, GetStatic)


def _rotate_loops(blocks: dict[int, Block], entry: int, new_var: Callable[[IRType], Var]) -> dict[int, Block]:
    """Loop inversion: a loop whose header only tests (``H: s; if c goto body else exit`` with at most
    :data:`ROTATE_MAX_HEADER_STMTS` statements ``s``) and whose back edges are ``goto H`` gets a copy of its header
    as the target of those back edges, so the loop is tested at the bottom (``if c goto body``, the one jump of
    an iteration) and ``H`` is left as the entry test, run once. Meaning unchanged: the copy does what ``H`` did
    at the same point, with ``H``'s handlers; the loop's header becomes ``body``, whose every entry comes from
    ``H`` or the copy. In place; returns the headers that stopped being one, by identity, mapped to the block
    now heading their loop (the thetas' debug information moves there: it holds the same iteration's values).
    A temporary the header writes and only it reads gets a variable of its own in the copy: written once, it
    stays on the operand stack (lowering's expression trees)."""
    succs = {bid: b.successors() for bid, b in blocks.items()}
    back: dict[int, list[int]] = {}  # latches by header
    for latch, header in _back_edges(succs, entry):
        back.setdefault(header, []).append(latch)
    preds: dict[int, list[int]] = {bid: [] for bid in blocks}
    for bid, ts in succs.items():
        for t in ts:
            preds[t].append(bid)
    handler_targets = {h.target for b in blocks.values() for h in b.handlers}
    used_in: dict[int, set[int]] = {}  # variable id -> the blocks that read or write it
    for b in blocks.values():
        for st in [*b.stmts, b.terminator]:
            for x in [*st.operands(), st.defined()]:
                if isinstance(x, Var):
                    used_in.setdefault(x.id, set()).add(b.id)
    bodies = {h: _natural_loop(h, back[h], preds) for h in back}
    moved: dict[int, Block] = {}
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
        out = term.if_false if inside[0] == term.if_true else term.if_true
        if out in bodies and h in bodies[out]:
            # the loop's exit is an enclosing loop's header: at the bottom both arms would jump back (an if and a
            # goto where the top-tested loop has one goto)
            continue
        copy = Block(max(blocks) + 1, [_copy_stmt(st) for st in hb.stmts],
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
            blocks[p].terminator = Goto(copy.id, origin=blocks[p].terminator.origin)  # type: ignore[union-attr]
        moved[id(hb)] = blocks[inside[0]]
    return moved


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
        for t in set(b.successors()):
            preds[t] = preds.get(t, 0) + 1
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
            if all(isinstance(st, Copy) and isinstance(st.src, Const) for st in z.stmts):
                sets, y = [(st.dst, st.src) for st in z.stmts], None  # type: ignore[attr-defined]
            else:
                if live is None:
                    live = liveness(blocks)
                found = _continuation(blocks, z, live)
                if found is None:
                    continue
                y, sets = found
            at = [_initial_copy(a, Copy(v, c)) for v, c in sets]
            if any(k is None for k in at) or any(x is v for v, _ in sets for x in term.operands()):
                continue
            t.stmts.extend(Copy(v, c) for v, c in sets)
            a.stmts = [st for k, st in enumerate(a.stmts) if k not in at]
            if y is None:
                z.stmts = []
            else:
                _retarget(t, lambda b: y.id if b == z_id else b)
            changed = True
            break
    return changed


def _settle_known_tests(blocks: dict[int, Block]) -> bool:
    """An int test an earlier test decides on every path into it (:func:`peggy_jvm.ir.known.decided_arm`: a
    rotated loop's entry test ``k < n`` with ``k = 0`` under the hoisted read's test ``n > 0``) becomes a jump to
    its arm. True when a test went. A test of constants alone (``0 < 16``) stays, as javac keeps it: a rotated
    loop entered with no test at all ran 1.31x slower under HotSpot's JIT (strideSum, alternating runs; 0.94 with
    the test kept), a loop shape its compiler does not treat as a counted loop."""
    preds: dict[int, list[int]] = {}
    for b in blocks.values():
        for t in dict.fromkeys(b.successors()):
            preds.setdefault(t, []).append(b.id)
    changed = False
    for bid in sorted(blocks):
        arm = decided_arm(blocks, bid, preds, by_constants=False)
        if arm is not None:
            blocks[bid].terminator = Goto(arm, origin=blocks[bid].terminator.origin)  # type: ignore[union-attr]
            changed = True
            preds = {t: [p for p in ps if p != bid or t == arm] for t, ps in preds.items()}
    return changed


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
            for f in fields(sz):  # type: ignore[arg-type]
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


def _initial_copy(a: Block, copy: Copy) -> int | None:
    """The index of a statement of ``a`` setting ``copy``'s variable to the same constant, with nothing before
    it reading or writing the variable (or throwing, when ``a`` has handlers)."""
    v, c = copy.dst, copy.src
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


def _copy_stmt(st: Stmt) -> Stmt:
    return type(st)(**{f.name: getattr(st, f.name) for f in fields(st)})  # type: ignore[arg-type]


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


def _reaching(preds: dict[int, list[int]], target: int) -> set[int]:
    """The blocks from which ``target`` can be reached (itself included)."""
    seen = {target}
    todo = [target]
    while todo:
        for p in preds[todo.pop()]:
            if p not in seen:
                seen.add(p)
                todo.append(p)
    return seen


def _merge_equal_blocks(blocks: dict[int, Block]) -> bool:
    """Tail merging: blocks with the same statements (the same bytecode origins, the variables only they use
    renamed consistently), the same handlers and the same successors are one block; jumps to the others go to
    it, repeatedly (merged successors make their predecessors equal). Meaning unchanged: both compute the same
    from the same values and go on to the same place. True when a block was merged."""
    merged_any = False
    while True:
        where: dict[int, set[int]] = {}
        for b in blocks.values():
            for st in [*b.stmts, b.terminator]:
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
        if not alias:
            return merged_any
        merged_any = True
        for b in blocks.values():
            _retarget(b, lambda t: alias.get(t, t))
        for bid in alias:
            del blocks[bid]


def _merge_renamed_blocks(m: IRMethod) -> bool:
    """Tail merging up to renaming: a region of blocks of ``m`` (loops included) that repeats another up to the
    names of variables is dropped and jumps to it go to the other. Two blocks correspond when they have the same
    statements and handlers once the variables of one are renamed into those of the other, and their targets
    are the same blocks or correspond (:func:`_corresponding`). The renaming is done only when each renamed
    pair is never live at once (Chaitin's test on :func:`~peggy_jvm.ir.coalesce.interference`; parameters are
    never renamed), all of a region's renames or none, so no variable leaves its block (and the operand stack)
    for nothing. Meaning unchanged: a renamed variable is written only where the other is dead, so every read
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
                if adj is None:
                    adj = interference(m)
                trial = _trial_renames(pairs, find, adj, members)
                if trial is None:
                    continue
                for k, v in trial.items():
                    rename[k] = v
                rename_variables(blocks, find)
                for blk in blocks.values():
                    _retarget(blk, lambda t: bmap.get(t, t))
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


def _retarget(b: Block, new: Callable[[int], int]) -> None:
    term = b.terminator
    if isinstance(term, Goto):
        term.target = new(term.target)
    elif isinstance(term, If):
        term.if_true, term.if_false = new(term.if_true), new(term.if_false)
    elif isinstance(term, Switch):
        term.cases, term.default = [new(c) for c in term.cases], new(term.default)
    b.handlers = tuple(Handler(h.catch_type, new(h.target)) for h in b.handlers)


def _block_signature(b: Block, where: dict[int, set[int]], renamed: list[Var] | None = None,
                     fixed: frozenset[int] | set[int] = frozenset(), exits: list[int] | None = None) -> tuple | None:
    """What a block computes, with the variables only it uses numbered in order of appearance; None for a block
    that takes values on the stack. With ``renamed`` (filled in), every variable but the ``fixed`` ones is
    numbered, each listed once in order of first appearance: the block's shape up to renaming. With ``exits``
    (filled in), the handlers' and the terminator's targets are numbered too, listed in order."""
    if b.entry_stack:
        return None
    local: dict[int, int] = {}
    stmts = [*b.stmts, b.terminator]
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

    def exit_(t: int) -> tuple:
        exits.append(t)  # type: ignore[union-attr]
        return ("exit", len(exits) - 1)  # type: ignore[arg-type]

    if exits is None:
        out: list[object] = [b.handlers]
    else:
        out = [tuple((h.catch_type, exit_(h.target)) for h in b.handlers)]
    for st in stmts:
        if exits is not None and st is b.terminator:
            out.append((type(st).__name__, *(
                exit_(getattr(st, f.name)) if f.name in _TARGET_FIELDS else
                tuple(exit_(t) for t in st.cases) if f.name == "cases" else  # type: ignore[attr-defined]
                canon(getattr(st, f.name)) for f in fields(st))))  # type: ignore[arg-type]
            continue
        out.append((type(st).__name__, *(canon(getattr(st, f.name)) for f in fields(st))))  # type: ignore[arg-type]
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
    """A join that reads, once, a variable every predecessor sets just before jumping to it (``c ? a : b``)
    receives it on the operand stack: its ``entry_stack``, which lowering passes on the stack as javac does when
    each predecessor can leave it there (otherwise it stays in its slot)."""
    preds: dict[int, list[Block]] = {}
    reads: dict[int, list[int]] = {}
    defs: dict[int, int] = {}
    for b in blocks.values():
        for t in set(b.successors()):
            preds.setdefault(t, []).append(b)
        for st in [*b.stmts, b.terminator]:
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
        if not all(isinstance(p.terminator, Goto) and p.stmts and isinstance(p.stmts[-1], Copy) for p in ps):
            continue
        v = ps[0].stmts[-1].dst  # type: ignore[attr-defined]
        if v.id in params or any(p.stmts[-1].dst is not v for p in ps) \
                or reads.get(v.id) != [bid] or defs.get(v.id) != len(ps):  # type: ignore[attr-defined]
            continue
        b.entry_stack = (v,)


def _returns_in_place_of_gotos(blocks: dict[int, Block]) -> bool:
    """A ``goto`` to a block that only returns (or throws) becomes that return: ``return`` is one byte,
    ``aload_1; areturn`` two, and ``goto`` three; a value a join receives on the stack (``c ? a : b``, see
    :func:`_values_into_joins`) is returned where it is computed. Done only where the copy is no longer than the
    jump (a constant pushed in one or two bytes, a variable, nothing) and the jumping block has the returning
    block's handlers (what the return may throw is caught as before); a block that falls into the returning
    block (the next one in the layout) keeps falling into it. Runs after layout: blocks are in lowering order.
    Meaning unchanged: the returning block has no statement, so it reads what the jumping block leaves. True when
    a jump was replaced."""
    order = sorted(blocks)
    after = {bid: nxt for bid, nxt in zip(order, order[1:])}
    changed = False
    for bid in order:
        b = blocks[bid]
        term = b.terminator
        if not isinstance(term, Goto) or after.get(bid) == term.target:
            continue
        t = blocks[term.target]
        ret = t.terminator
        if t.stmts or not isinstance(ret, (Return, Throw)) or t.handlers != b.handlers:
            continue
        value = ret.value
        if t.entry_stack:
            # the value arrives on the stack: the jumping block computes it last, into the join's variable
            if t.entry_stack != (value,) or not b.stmts or not isinstance(b.stmts[-1], Copy) \
                    or b.stmts[-1].dst is not value:
                continue
            value = b.stmts.pop().src
        elif not _short_operand(value):
            continue
        b.terminator = type(ret)(value, origin=ret.origin)
        changed = True
    return changed


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


def _drop_dead_copies(blocks: dict[int, Block]) -> None:
    """Copies into variables nothing reads (left behind by threaded tests) go: a copy has no effect."""
    while True:
        read = {x.id for b in blocks.values() for st in (*b.stmts, b.terminator) if st is not None
                for x in st.operands() if isinstance(x, Var)}
        dead = False
        for b in blocks.values():
            keep = [st for st in b.stmts if not (isinstance(st, Copy) and st.dst.id not in read)]
            if len(keep) != len(b.stmts):
                b.stmts, dead = keep, True
        if not dead:
            return


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
            if k is None or not isinstance(b.stmts[k], Copy):  # not set here, or not by a copy
                return None
            x, end = b.stmts[k].src, k
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
    seen = {entry}
    stack = [entry]
    while stack:
        b = blocks[stack.pop()]
        for t in b.successors():
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return {k: blocks[k] for k in sorted(seen)}


def _unsupported_handling(nodes: list, variance: list, users: dict[int, list[int]]) -> str | None:
    """Why the PEG's exception handling is beyond the reverter, or None. Supported: try regions outside loops,
    without monitors, whose handlers use the exception only to dispatch on it (``instanceof``) and to rethrow
    it: it is caught as any Throwable, and the verifier would need casts for other uses."""
    for i, n in enumerate(nodes):
        if n.op in HANDLER_OPS and variance[i]:
            return "exception handling inside a loop"
        if n.op in ("monitorenter", "monitorexit"):
            return "exception handling with monitors"
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


def revert_peg(peg: PEG, original: IRMethod, returns_in_place: bool = True, rotate_loops: bool = False
               ) -> IRMethod:
    """An IR method computing what ``peg`` means (see the module docstring). ``returns_in_place``: a ``goto`` to
    a block that only returns becomes that return (:func:`_returns_in_place_of_gotos`); the full stage asks for it
    only under ``--goal size``, since the self-check does not yet prove every such shape (peeled loops whose
    first iteration returns on its own path, tests/test_peel.py). ``rotate_loops``: loops tested at the bottom
    after an entry test (:func:`_rotate_loops`: one jump per iteration for a few bytes more); the full stage asks
    for it under ``--goal speed``, ``--stage peg`` keeps javac's shape."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 100_000))
    try:
        peg = _without_passed_through_thetas(peg)
        try:
            return _Reverter(peg, original, returns_in_place=returns_in_place, rotate_loops=rotate_loops).run()
        except RevertUnsupported:
            # the effects emitted before a result's test can be ones a value phi of an arm needed fused into
            # their branch (jsoup Attribute.equals): then the arms write them, as they did before
            return _Reverter(peg, original, result_prefixes=False, returns_in_place=returns_in_place,
                             rotate_loops=rotate_loops).run()
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
