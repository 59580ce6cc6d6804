"""The PEG evaluator: runs a PEG on concrete arguments with the IR interpreter's model heap.

What this module owns
    :func:`evaluate_peg`: the meaning of a PEG on one input, as an :data:`~peggy_jvm.ir.interp.Outcome`
    (``Returned`` or ``Threw``), so that a PEG can be held to the IR interpreter and to the JVM on the same
    inputs. The heap, the library models and the exceptions the VM raises are the interpreter's own: every
    effect is performed by :class:`~peggy_jvm.ir.interp.Interpreter` on an equivalent IR statement, so the Java
    meaning of each operation lives in one place.

Semantics (Tate 2012, chapter 6, with DESIGN section 3's heap and exceptions)
    * A node's value depends on the iteration indexes of the loops it varies in (:meth:`PEG.variance`);
      values are memoized per (node, those indexes), so each is computed at most once.
    * ``theta_d(a, b)`` at index i is ``a`` at 0 and ``b`` at i-1; ``eval_d(x, n)`` is ``x`` at index n;
      ``pass_d(c)`` is the first index where ``c`` holds (the step budget bounds the search: a loop that never
      ends raises Unsupported, it never hangs the caller).
    * ``phi`` evaluates only the branch it chooses; everything is lazy, so a node is computed only when the
      original program would have computed it.
    * sigma is a token of the one heap. An effect checks that its sigma is the heap's current version (sigma is
      linear: a PEG that uses one sigma twice is malformed and raises :class:`PegEvalError`) and bumps it.
    * An effect's outcome is a value or a thrown exception; ``rho_value``/``rho_sigma`` of a thrown outcome
      propagate it (the method ends with it), ``threw``/``rho_exc``/``rho_esigma`` read it for handlers.

Inputs: a PEG, argument values (receiver first), a Heap and a CallHandler (as :func:`ir.interp.run_method`).
Outputs: an Outcome; Unsupported when the model cannot say; PegEvalError when the PEG is malformed.
"""
from __future__ import annotations

import sys
from typing import Any

from ..ir import interp as I
from ..ir.nodes import (ArrayLength, ArrayLoad, ArrayStore, CheckCast, GetField, GetStatic, IRType, Kind,
                        MonitorEnter, MonitorExit, NewArray, PutField, PutStatic, Stmt, Var)
from ..ir.nodes import InvokeKind
from ..semantics import int_bits_to_float, long_bits_to_double
from .graph import PEG
from .ops import OPS, Role


class PegEvalError(Exception):
    """The PEG is malformed (a sigma used twice, a missing child, a type confusion)."""


class _Sigma:
    __slots__ = ("version",)

    def __init__(self, version: int) -> None:
        self.version = version


class _Outcome:
    __slots__ = ("threw", "value", "sigma")

    def __init__(self, threw: bool, value: object, sigma: _Sigma) -> None:
        self.threw, self.value, self.sigma = threw, value, sigma


_MISSING = object()
_INVOKE_KINDS = {f"invoke.{k.value}": k for k in InvokeKind}


class _Evaluator:
    def __init__(self, peg: PEG, args: list, heap: I.Heap, call: I.CallHandler | None, budget: int,
                 owner: str) -> None:
        self.peg = peg
        self.nodes = peg.nodes
        self.args = args
        self.interp = I.Interpreter(heap, call, budget=budget)
        self.heap = heap
        self.owner = owner
        self.variance = [tuple(sorted(v)) for v in peg.variance()]
        self.memo: dict[tuple, object] = {}
        self.version = 0
        self.stmts: dict[int, tuple] = {}

    def key(self, n: int, idx: tuple) -> tuple:
        return (n, *(idx[d - 1] for d in self.variance[n]))

    def step(self, k: int = 1) -> None:
        it = self.interp
        it.steps += k
        if it.steps > it.budget:
            raise I.Unsupported("step budget")

    def ev(self, n: int, idx: tuple) -> object:
        key = self.key(n, idx)
        v = self.memo.get(key, _MISSING)
        if v is not _MISSING:
            return v
        node = self.nodes[n]
        if node.op == "theta":
            v = self.theta(n, idx)
        else:
            v = self.compute(n, idx)
        self.memo[key] = v
        return v

    def theta(self, n: int, idx: tuple) -> object:
        d = self.nodes[n].int_attr()
        init, nxt = self.nodes[n].children
        i = idx[d - 1]
        if i == 0:
            return self.ev(init, idx)
        # climb from the highest index already known, so that long loops do not recurse deeply
        j = i - 1
        while j > 0 and self.key(n, _at(idx, d, j)) not in self.memo:
            j -= 1
        if j == 0 and self.key(n, _at(idx, d, 0)) not in self.memo:
            self.memo[self.key(n, _at(idx, d, 0))] = self.ev(init, _at(idx, d, 0))
        for k in range(j, i - 1):
            self.memo[self.key(n, _at(idx, d, k + 1))] = self.ev(nxt, _at(idx, d, k))
        return self.ev(nxt, _at(idx, d, i - 1))

    def compute(self, n: int, idx: tuple) -> object:
        node = self.nodes[n]
        op = node.op
        ch = node.children
        ev = self.ev
        if op == "phi":
            return ev(ch[1], idx) if ev(ch[0], idx) else ev(ch[2], idx)
        spec = OPS[op]
        role = spec.role
        if role is Role.PURE:
            if op == "guard":
                self.sigma_of(ev(ch[0], idx))
                return ev(ch[1], idx)
            vals = [ev(c, idx) for c in ch]
            self.step()
            if op == "instanceof":
                v = vals[0]
                cls = node.attr
                assert isinstance(cls, str)  # instanceof's attr is the class name
                return int(v is not None and self.heap.is_assignable(I.runtime_class(v), cls))
            if op in ("eq.a", "ne.a"):
                same = I._same_ref(vals[0], vals[1])
                return same if op == "eq.a" else not same
            fn = spec.fn
            assert fn is not None  # a pure op past the special cases has its semantics function
            return fn(*vals)
        if role is Role.CONST:
            return self.constant(op, node.attr)
        if role is Role.PARAM:
            if op == "sigma0":
                return _Sigma(0)
            return self.args[node.int_attr()]
        if role is Role.PROJECTION:
            o = ev(ch[0], idx)
            if not isinstance(o, _Outcome):
                raise PegEvalError(f"{op} of a non-outcome (node {n})")
            if op == "threw":
                return o.threw
            if op == "rho_exc":
                return o.value
            if op == "rho_esigma":
                return o.sigma
            if o.threw:
                raise I.JavaThrow(o.value)
            return o.value if op == "rho_value" else o.sigma
        if role is Role.LOOP:
            d = node.int_attr()
            if op == "eval":
                k = ev(ch[1], idx)
                assert isinstance(k, int)  # an eval's index is an int
                return ev(ch[0], _at(idx, d, k))
            if op == "pass":
                k = 0
                while True:
                    self.step()
                    if ev(ch[0], _at(idx, d, k)):
                        return k
                    k += 1
            raise PegEvalError(f"cannot evaluate {op}")
        if role is Role.EFFECT:
            return self.effect(n, idx)
        if role is Role.EXIT:
            s = ev(ch[0], idx)
            self.sigma_of(s)
            v = ev(ch[1], idx)
            if op == "return":
                return I.Returned(v)
            if v is None:
                self.interp.throw("java/lang/NullPointerException")
            raise I.JavaThrow(v)
        raise PegEvalError(f"cannot evaluate {op}")

    def constant(self, op: str, attr: Any) -> object:
        if op in ("const.i", "const.l", "const.b"):
            return attr
        if op == "const.f":
            return int_bits_to_float(attr)  # a float constant's attr is its raw int bits
        if op == "const.d":
            return long_bits_to_double(attr)  # a double constant's attr is its raw bits
        if op == "const.a":
            return self.interp._const(attr)  # const.a's attr is the IR constant
        if op == "unit":
            return None
        if op == "zero":
            return 0
        raise PegEvalError(f"cannot evaluate {op}")

    def sigma_of(self, s: object) -> _Sigma:
        if not isinstance(s, _Sigma):
            raise PegEvalError(f"expected a sigma, got {s!r}")
        return s

    def effect(self, n: int, idx: tuple) -> _Outcome:
        node = self.nodes[n]
        s = self.sigma_of(self.ev(node.children[0], idx))
        vals = [self.ev(c, idx) for c in node.children[1:]]
        if s.version != self.version:
            raise PegEvalError(f"sigma used twice (node {n}: {self.peg.describe(n)})")
        self.version += 1
        out = _Sigma(self.version)
        self.step()
        try:
            value = self.perform(n, node.op, node.attr, vals)
        except I.JavaThrow as e:
            return _Outcome(True, e.obj, out)
        return _Outcome(False, value, out)

    def perform(self, n: int, op: str, attr: Any, vals: list) -> object:
        it = self.interp
        call = it.call
        if op in ("check.zero.i", "check.zero.l"):
            if vals[0] == 0:
                it.throw("java/lang/ArithmeticException", "/ by zero")
            return vals[0]
        if op == "athrow":
            if vals[0] is None:
                it.throw("java/lang/NullPointerException")
            raise I.JavaThrow(vals[0])
        if op in _INVOKE_KINDS:
            kind = _INVOKE_KINDS[op]
            recv = None
            if kind is not InvokeKind.STATIC:
                recv, vals = vals[0], vals[1:]
                if recv is None:
                    it.throw("java/lang/NullPointerException")
            return call.invoke(it, kind, attr, recv, vals)  # an invoke's attr is its MethodRef
        if op == "new":
            cls, ctor = attr  # new's attr is (class, constructor)
            return call.new(it, cls, ctor, vals)
        if op == "invokedynamic":
            from ..ir.nodes import InvokeDynamic
            name, desc, bsm = attr  # invokedynamic's attr is (name, descriptor, bootstrap)
            st = self.stmts.get(n)
            if st is None:
                st = self.stmts[n] = (InvokeDynamic(None, name, desc, bsm, []),)
            return call.invoke_dynamic(it, st[0], vals)
        if op == "classinit":
            call.class_init(it, attr)  # classinit's attr is the class name
            return None
        # the rest are one IR statement each: let the interpreter perform it
        st, ins, dst = self.statement(n, op, attr, len(vals))
        env = dict(zip(ins, vals))
        it._stmt(st, type(st), env, self.owner)
        return env.get(dst) if dst is not None else None

    def statement(self, n: int, op: str, attr: Any, arity: int) -> tuple:
        got = self.stmts.get(n)
        if got is not None:
            return got
        ins = [Var(-1 - k, IRType(Kind.REF)) for k in range(arity)]
        out = Var(-100, IRType(Kind.REF))
        dst: Var | None = out
        st: Stmt
        if op == "getfield":
            st = GetField(out, ins[0], attr)
        elif op == "putfield":
            st, dst = PutField(ins[0], attr, ins[1]), None
        elif op == "getstatic":
            st = GetStatic(out, attr)
        elif op == "putstatic":
            st, dst = PutStatic(attr, ins[0]), None
        elif op == "aload":
            st = ArrayLoad(out, ins[0], ins[1], attr)
        elif op == "astore":
            st, dst = ArrayStore(ins[0], ins[1], ins[2], attr), None
        elif op == "arraylength":
            st = ArrayLength(out, ins[0])
        elif op == "newarray":
            st = NewArray(out, attr, list(ins))
        elif op == "checkcast":
            st = CheckCast(out, ins[0], attr)
        elif op == "monitorenter":
            st, dst = MonitorEnter(ins[0]), None
        elif op == "monitorexit":
            st, dst = MonitorExit(ins[0]), None
        else:
            raise PegEvalError(f"cannot evaluate effect {op}")
        got = self.stmts[n] = (st, ins, dst)
        return got


def _at(idx: tuple, d: int, k: int) -> tuple:
    if len(idx) < d:
        idx = idx + (0,) * (d - len(idx))
    return idx[:d - 1] + (k,) + idx[d:]


def evaluate_peg(peg: PEG, args: list, heap: I.Heap, call: I.CallHandler | None = None, *,
                 budget: int = I.DEFAULT_BUDGET) -> I.Outcome:
    """Run ``peg`` on ``args``; see the module docstring. As :meth:`Interpreter.run`, a static method's class is
    initialized first and a synchronized method holds its monitor while it runs."""
    ev = _Evaluator(peg, args, heap, call, budget, peg.class_name)
    depth = max((n.attr for n in peg.nodes if OPS[n.op].role is Role.LOOP and isinstance(n.attr, int)), default=0)
    idx = (0,) * depth
    lock: object = None
    ev.interp.depth = 1  # this frame counts towards the call-depth limit, as in Interpreter.execute
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 200_000))
    try:
        if peg.is_static:
            ev.interp.call.class_init(ev.interp, peg.class_name)
        if peg.synchronized:
            lock = args[0] if not peg.is_static else heap.class_value(peg.class_name)
            heap.monitor_enter(lock)
        r = ev.ev(peg.root, idx)
        if lock is not None and not heap.monitor_exit(lock):
            ev.interp.throw("java/lang/IllegalMonitorStateException")
    except I.JavaThrow as e:
        if lock is not None:
            heap.monitor_exit(lock)
        return I.Threw(I.runtime_class(e.obj), e.obj)
    except RecursionError:
        raise I.Unsupported("Python recursion limit") from None
    finally:
        sys.setrecursionlimit(old)
    if isinstance(r, I.Returned):
        return r
    if isinstance(r, I.Threw):
        return r
    raise PegEvalError(f"the root evaluated to {r!r}, not a method outcome")


_LOOP_NODES = frozenset(name for name, spec in OPS.items() if spec.role is Role.LOOP)


class _ClosedEvaluator(_Evaluator):
    """An evaluator of a computation that reads no argument and no heap: a parameter, an effect or a projection
    of one is Unsupported; a ``guard`` whose heap varies in no loop is read as its condition (see
    :func:`evaluate_closed`)."""

    def compute(self, n: int, idx: tuple) -> object:
        node = self.nodes[n]
        if node.op == "guard" and not self.variance[node.children[0]]:
            return self.ev(node.children[1], idx)
        if OPS[node.op].role in (Role.PARAM, Role.EFFECT, Role.PROJECTION, Role.EXIT):
            raise I.Unsupported(f"not closed: {node.op}")
        return super().compute(n, idx)


def evaluate_closed(peg: PEG, n: int, *, budget: int) -> object:
    """The value of node ``n`` of ``peg`` (one that varies in no loop) when it is a closed computation: built from
    constants by pure operators, phis and loops, reading no argument and no heap, done within ``budget`` steps.
    Raises :class:`~peggy_jvm.ir.interp.Unsupported` otherwise (an argument, a heap or an effect read, the
    budget spent: a loop that does not end), never returns a guess.

    A loop's break test is ``guard(sigma, c)``: ``c`` after the heap ``sigma`` its iteration ends with. When that
    heap varies in no loop (the loop has no effects, so it is the heap the loop was entered with), the test is read
    as ``c``: the heap is the one the program reached before the loop, on which everything after the loop, the
    method's own result included, is made, so whether it was reached (or an exception ended the method first)
    is decided there as well, not by this value."""
    ev = _ClosedEvaluator(peg, [], I.Heap(), None, budget, peg.class_name)
    depth = max((x.attr for x in peg.nodes if x.op in _LOOP_NODES and isinstance(x.attr, int)), default=0)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 200_000))
    try:
        return ev.ev(n, (0,) * depth)
    except (I.JavaThrow, RecursionError, PegEvalError) as e:
        raise I.Unsupported(f"not evaluated: {type(e).__name__}") from None
    finally:
        sys.setrecursionlimit(old)
