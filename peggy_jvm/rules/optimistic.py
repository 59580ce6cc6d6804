"""Optimistic analysis of loops (Arbore, Cheung, Willsey, "Optimism in Equality Saturation"): facts about
loop-carried values that the pessimistic e-class analyses cannot learn across a theta's back edge, and the rule
that turns the converged ones into unions.

What this module owns
    * :func:`analyze`: the two-level fixpoint over a rebuilt E-PEG. The domain is per class: Java constants
      (bool, float and double keys as :mod:`peggy_jvm.epeg.analyses` writes them) and intervals of int and long
      values (:class:`Interval`; a constant is a one-value interval) with exact Java overflow: an operation
      whose exact result could leave the type's range gives no interval at all (top), never a wrapped one.
      Outer level, a least fixpoint over the back edges: every theta class of a value sort gets a hypothesis
      (its facts at every iteration), bottom at first; each round the hypotheses are joined with what the
      theta's initial value and next value are found to be under them, after two rounds widened (a bound that
      grew goes to the next of the method's constants, or to the type's limit), until no hypothesis grows;
      then up to two narrowing rounds, each kept only when it is again a post-fixpoint. Inner level, for fixed
      hypotheses: the facts of every class in one pass in rank order (see below), each the meet of the
      pessimistic constant (``EPeg.const``) and what each usable node of the class computes from its children's
      facts; a theta node's fact is its class's hypothesis, so the inner level ignores back-edge inputs (after
      the first round only the classes that depend on a hypothesis are computed again). :class:`Facts` is the
      result.
    * :func:`value_numbers`: optimistic value numbering across loops, groups of thetas equal at every
      iteration (thetas of one depth with equal initial values assumed equal, split by their next values'
      numbers under that hypothesis until no group splits; docs/optimistic.md).
    * :func:`loop_contexts`: facts from a loop's exit test. For each loop (a pass class and the thetas its evals
      read), the same fixpoint over the classes varying in the loop, true only at the iterations before its
      exit: the exit test false there, its int comparisons met in as interval bounds (``i < n``: ``i`` at most
      ``hi(n) - 1``), each class starting from its global fact. What it decides (a test, a divisor check) is a
      substitution valid at those iterations only, never merged into a class.
    * :class:`LoopOptimism` (``loop-optimistic``, group ``peg.loop.optimistic``): the rule. Only converged facts
      gate rewrites: a class found equal to a constant (a loop-carried value that never changes, a test it
      decides) is merged with that constant; a divisor check (``check.zero.i``/``.l``) of a value whose interval
      excludes zero neither throws nor changes the heap (``rho_value`` is the divisor, ``rho_sigma`` the heap it
      got), as ``effects.divisor`` says of a non-zero constant; the thetas of a value-numbering group are merged.
      A loop context's substitution is applied to a copy of the loop (:class:`_InLoop`), and only the loop's
      thetas are merged with their copies at its exit (``eval(t, p) = eval(t', p)``), with ``p`` given a pass
      that reads the copies: those unions hold at every iteration (docs/optimistic.md, "Facts from a loop's exit
      test").

Why a converged fact holds (docs/optimistic.md has the argument in full)
    A naive optimistic analysis is unsound in an e-graph: a class ``{p, or(p, and(t, 0))}`` used as the initial
    value of ``t = theta(.., t + 1)`` would make ``t`` depend on ``t`` itself at the same iteration (a meet with
    its bottom hypothesis would leave ``t`` no value at all). Ranks rule that out:
    ``rank(c)`` is the least, over the class's nodes, of one more than the largest rank of the children the
    node READS at the same iteration (a pure operator and phi read all of theirs, a theta only its initial
    value, every other node none: eval, pass, effects, parameters give top). Only the nodes of a class whose
    read children all rank lower are used (``usable``), and a theta class is hypothesized through its usable
    theta nodes only. Then, by induction over the iteration vectors (lexicographic) and, at one vector, over
    ranks, every fact holds at every vector where the value is defined: a theta of loop ``l`` at iteration 0
    of ``l`` is its initial value at the same vector (lower rank), at iteration ``k + 1`` its next value at
    iteration ``k`` (an earlier vector), and both are within the final hypothesis because the hypotheses are
    a post-fixpoint. The facts hold at every iteration (also past a loop's exit), so the unions made from them
    hold as PEG equalities. A loop context's facts are proved the same way over the iterations before the exit
    (closed under going back one iteration of the loop), and used only through the loop copy.

Inputs / outputs: an ``EPeg`` after rebuild; unions with reasons (``Reason("loop-optimistic", ...)``), and the nodes
of the loop copies.

Invariants
    * Deterministic: classes are visited in id order, the rounds are bounded (:data:`MAX_ROUNDS`) and the work
      by :data:`MAX_VISITS` node visits per analysis (over it: no facts); no clock is read. The rule analyses
      an e-graph at its 1st, 2nd, 4th, 8th ... search (what the runner's iteration count decides, never time).
    * A hypothesis that did not converge gives nothing: the rule only ever sees a post-fixpoint.
    * The shortcuts change no answer and no visit count (tests/test_optimistic_identical.py compares them with
      the plain computations on real e-graphs): :func:`transfer` memoizes a pure function of immutable facts;
      the inner level reads a per-class plan of the nodes whose fact it computes (the others are top, which
      meets to nothing); value numbering lists no nodes when no two thetas start alike and makes, pass for pass,
      the unions the plain fixpoint makes, skipping only the calls that would find two equal representatives.
    * A loop is copied at most once per e-graph (:data:`MAX_CONTEXTS` loops; regions of at most
      :data:`MAX_REGION` classes; a copy explores at most ``max_classes`` classes).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Union

from ..egraph.explain import Reason
from ..epeg.analyses import fold_keys
from ..peg.ops import OPS, Role, T
from .branchfacts import LOOP_OPS, Assume, CopyTooLarge
from .peel import _evals_at

if TYPE_CHECKING:
    from ..egraph.types import ENode
    from ..epeg import EPeg

__all__ = ["Interval", "Facts", "analyze", "value_numbers", "LoopOptimism", "BOTTOM", "MAX_ROUNDS", "MAX_VISITS"]

#: outer rounds before the analysis gives up (no facts); widening makes real loops converge in a few
MAX_ROUNDS = 24
#: node visits (all rounds together) before the analysis gives up: keeps large E-PEGs within the time goal
MAX_VISITS = 400_000
_WIDEN_AFTER = 2  # rounds of plain joins before widening (a loop that settles after one step stays exact)
_NARROWINGS = 2


class _Bottom:
    """No value yet (the optimistic start of a hypothesis)."""

    def __repr__(self) -> str:
        return "BOTTOM"


BOTTOM = _Bottom()


@dataclass(frozen=True, slots=True)
class Interval:
    """The int (``bits`` 32) or long (64) values ``lo..hi``, both included."""

    bits: int
    lo: int
    hi: int

    @property
    def const(self) -> int | None:
        return self.lo if self.lo == self.hi else None


#: a class's fact: None = top (any value), BOTTOM, an Interval, or a constant key ("const.b", True)...
Fact = Union[None, _Bottom, Interval, tuple]

_LIMITS = {32: (-(1 << 31), (1 << 31) - 1), 64: (-(1 << 63), (1 << 63) - 1)}
_BITS = {T.INT: 32, T.LONG: 64}
_TRUE, _FALSE = ("const.b", True), ("const.b", False)
_VALUE_SORTS = frozenset({T.INT, T.LONG, T.BOOL, T.FLOAT, T.DOUBLE})
_CHECKS = {"check.zero.i": 32, "check.zero.l": 64}  # the divisor checks, and their divisor's width


def _interval(bits: int, lo: int, hi: int) -> Fact:
    """The interval, or top when the exact bounds leave the type's range (Java would wrap: no interval)."""
    mn, mx = _LIMITS[bits]
    return Interval(bits, lo, hi) if mn <= lo and hi <= mx else None


def _of_key(key: tuple | None) -> Fact:
    """The fact of a constant key (ints and longs as one-value intervals)."""
    if key is None:
        return None
    if key[0] == "const.i":
        return Interval(32, key[1], key[1])
    if key[0] == "const.l":
        return Interval(64, key[1], key[1])
    return key


def _key_of(f: Fact) -> tuple | None:
    """The constant key of a one-value fact, else None."""
    if isinstance(f, Interval):
        return None if f.lo != f.hi else ("const.i" if f.bits == 32 else "const.l", f.lo)
    return f if isinstance(f, tuple) else None


def meet(a: Fact, b: Fact) -> Fact:
    """What both facts say (two sound facts about one class)."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    if a is BOTTOM or b is BOTTOM:
        return BOTTOM
    if isinstance(a, Interval) and isinstance(b, Interval) and a.bits == b.bits:
        lo, hi = max(a.lo, b.lo), min(a.hi, b.hi)
        return Interval(a.bits, lo, hi) if lo <= hi else BOTTOM
    return BOTTOM if isinstance(a, tuple) and isinstance(b, tuple) else a  # contradiction: no value at all


def join(a: Fact, b: Fact) -> Fact:
    """A fact both values satisfy."""
    if a is BOTTOM:
        return b
    if b is BOTTOM or a == b:
        return a
    if isinstance(a, Interval) and isinstance(b, Interval) and a.bits == b.bits:
        return Interval(a.bits, min(a.lo, b.lo), max(a.hi, b.hi))
    return None


def leq(a: Fact, b: Fact) -> bool:
    """``a`` says at least what ``b`` says."""
    return join(a, b) == b


def widen(old: Fact, new: Fact, thresholds: dict[int, list[int]] | None = None) -> Fact:
    """``new`` (which includes ``old``) with every bound that moved pushed to the next threshold (the method's
    own constants, and one below each: ``k < 8`` bounds k by 7) or else to the type's limit; finitely many
    thresholds, so a hypothesis is widened finitely often."""
    if not isinstance(old, Interval) or not isinstance(new, Interval) or old.bits != new.bits:
        return new
    mn, mx = _LIMITS[new.bits]
    ts = (thresholds or {}).get(new.bits, [])
    lo, hi = new.lo, new.hi
    if lo < old.lo:
        lo = max((t for t in ts if t <= lo), default=mn)
    if hi > old.hi:
        hi = min((t for t in ts if t >= hi), default=mx)
    return Interval(new.bits, lo, hi)


def _thresholds(eg: EPeg) -> dict[int, list[int]]:
    out: dict[int, set[int]] = {32: set(), 64: set()}
    for op, bits in (("const.i", 32), ("const.l", 64)):
        for cid in eg.classes_with_op(op):
            for nop, attr, _ch in eg.nodes(cid):
                if nop == op:
                    out[bits].update((attr, attr - 1))
    return {b: sorted(v) for b, v in out.items()}


# -- transfer functions (what a node computes from its children's facts) -----------------------------------
def _fold(op: str, args: list[Fact]) -> Fact:
    """``op`` folded when every input is one value (the pessimistic analysis' folding: one mechanism)."""
    return _of_key(fold_keys(op, [_key_of(a) for a in args]))


def _arith(op: str, a: Interval, b: Interval | None) -> Fact:
    base, bits = op.split(".")[0], a.bits
    if b is None:
        if base == "neg":
            return _interval(bits, -a.hi, -a.lo)
        return None
    if base == "add":
        return _interval(bits, a.lo + b.lo, a.hi + b.hi)
    if base == "sub":
        return _interval(bits, a.lo - b.hi, a.hi - b.lo)
    if base == "mul":
        ps = (a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi)
        return _interval(bits, min(ps), max(ps))
    if base == "and":
        if a.lo >= 0 and b.lo >= 0:
            return Interval(bits, 0, min(a.hi, b.hi))
        if a.lo >= 0 or b.lo >= 0:
            return Interval(bits, 0, a.hi if a.lo >= 0 else b.hi)
        return None
    if base in ("or", "xor") and a.lo >= 0 and b.lo >= 0:
        return Interval(bits, 0, (1 << max(a.hi, b.hi).bit_length()) - 1)
    if base in ("shr", "ushr") and b.const is not None and (base == "shr" or a.lo >= 0):
        s = b.const & (bits - 1)
        return Interval(bits, a.lo >> s, a.hi >> s)  # floor shifts are monotone; ushr of a non-negative is shr
    if base == "rem" and b.const is not None and b.const != 0:
        m = abs(b.const) - 1  # |a % d| < |d|, with a's sign
        return Interval(bits, 0 if a.lo >= 0 else max(a.lo, -m), 0 if a.hi <= 0 else min(a.hi, m))
    if base == "div" and b.const is not None and b.const > 0:
        fn = OPS[op].fn
        assert fn is not None
        return Interval(bits, fn(a.lo, b.const), fn(a.hi, b.const))  # truncation by d > 0 is monotone
    return None


_NARROW = {"i2b": (-128, 127), "i2s": (-32768, 32767), "i2c": (0, 65535)}


def _convert(op: str, a: Interval) -> Fact:
    if op == "i2l":
        return Interval(64, a.lo, a.hi)
    if op == "l2i":
        return _interval(32, a.lo, a.hi)
    if op in _NARROW:
        lo, hi = _NARROW[op]
        return a if lo <= a.lo and a.hi <= hi else Interval(32, lo, hi)
    return None


def _compare(op: str, a: Interval, b: Interval) -> Fact:
    """A comparison decided by the intervals (``lt.i`` ... as a bool constant, ``cmp.l`` as -1/0/1 or its
    range), else top."""
    c = op.split(".")[0]
    if c == "cmp":
        if a.hi < b.lo:
            return Interval(32, -1, -1)
        if a.lo > b.hi:
            return Interval(32, 1, 1)
        return Interval(32, -1, 1)
    lt, gt = a.hi < b.lo, a.lo > b.hi  # certainly a < b, certainly a > b
    le, ge = a.hi <= b.lo, a.lo >= b.hi
    decided = {"lt": (lt, ge), "le": (le, gt), "gt": (gt, le), "ge": (ge, lt),
               "eq": (False, lt or gt), "ne": (lt or gt, False)}.get(c)
    if decided is None:
        return None
    yes, no = decided
    return _TRUE if yes else _FALSE if no else None


def _bools(op: str, args: list[Fact]) -> Fact:
    if op == "not":
        return _FALSE if args[0] == _TRUE else _TRUE if args[0] == _FALSE else None
    if op == "and" and _FALSE in args:
        return _FALSE
    if op == "or" and _TRUE in args:
        return _TRUE
    return None


#: :func:`transfer`'s answers by (op, *inputs' facts): it is a pure function of them (facts are immutable and
#: hashable), and the inner level asks the same questions round after round and loop after loop (most inputs
#: top); cleared when it reaches :data:`_MEMO_MAX` entries (which entries are kept decides nothing)
_MEMO: dict[tuple, Fact] = {}
_MEMO_MAX = 1 << 16


def transfer(op: str, args: list[Fact]) -> Fact:
    """The fact of a pure operator's value given its inputs' facts (top when nothing is known)."""
    key = (op, *args)
    if key in _MEMO:
        return _MEMO[key]
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    got = _MEMO[key] = _transfer(op, args)
    return got


def _transfer(op: str, args: list[Fact]) -> Fact:
    if any(a is BOTTOM for a in args):
        return BOTTOM
    folded = _fold(op, args)
    if folded is not None:
        return folded
    spec = OPS[op]
    if op in ("not", "and", "or") and spec.output is T.BOOL:
        return _bools(op, args)
    # an int or long input known nothing of is its type's whole range (``x & 7`` is in 0..7 whatever x is)
    ivs: list[Interval] = []
    for a, t in zip(args, spec.inputs):
        if a is None and t in _BITS:
            a = Interval(_BITS[t], *_LIMITS[_BITS[t]])
        if not isinstance(a, Interval):
            return None
        ivs.append(a)
    if not ivs:
        return None
    if spec.output is T.BOOL or op.startswith("cmp."):
        return _compare(op, ivs[0], ivs[1]) if len(ivs) == 2 and ivs[0].bits == ivs[1].bits else None
    if len(ivs) == 1:
        return _convert(op, ivs[0]) if op[1] == "2" else _arith(op, ivs[0], None)
    if ivs[0].bits != _BITS.get(spec.output):
        return None
    return _arith(op, ivs[0], ivs[1])


#: the operators whose fact is computed from their inputs' (``guard`` is a condition after a heap: its fact is top)
_COMPUTED = frozenset(n for n, spec in OPS.items() if spec.role is Role.PURE and n != "guard")


def _reads(op: str, ch: tuple) -> tuple:
    """The children a node's fact is computed from AT THE SAME ITERATION (its rank depends on them): all of a
    pure operator's and a phi's, a theta's initial value (its next value is read one iteration earlier), none of
    any other node's (eval, pass, effects, projections, parameters: their facts are top)."""
    if op == "theta":
        return ch[:1]
    return ch if op in _COMPUTED or op == "phi" else ()


# -- the analysis ---------------------------------------------------------------------------------------------
@dataclass
class Facts:
    """The converged facts of one analysis (``converged`` False: none, every class top). Class ids are the
    representatives of the e-graph's state that was analysed."""

    facts: dict[int, Fact]
    hypotheses: dict[int, Fact]
    converged: bool
    rounds: int
    graph: _Graph | None = field(default=None, repr=False, compare=False)  # what the loop contexts reuse
    budget: _Budget | None = field(default=None, repr=False, compare=False)  # the visits they may still spend
    thresholds: dict[int, list[int]] | None = field(default=None, repr=False, compare=False)  # widening's

    def of(self, eg: EPeg, cid: int) -> Fact:
        return self.facts.get(eg.find(cid)) if self.converged else None


class _Graph:
    """The e-graph's classes in rank order, with their usable nodes (read children already canonical)."""

    def __init__(self, eg: EPeg) -> None:
        find, parent = eg.find, eg._parent
        classes = eg._classes
        nodes: dict[int, list[tuple[str, Any, tuple, tuple]]] = {}
        users: dict[int, list[int]] = {}  # child class -> the slots (numbered nodes) that read it
        missing: list[int] = []  # per slot: read children not ranked yet
        owner: list[int] = []  # per slot: its node's class
        heap: list[tuple[int, int]] = []
        for cid in sorted(eg.class_ids()):
            lst = nodes[cid] = []
            for op, attr, ch in classes[cid].nodes:
                # (a representative is its own parent: no call for it, the commonest case)
                ch = tuple([c if parent[c] == c else find(c) for c in ch])
                reads = _reads(op, ch)
                if len(reads) > 1:
                    reads = tuple(sorted(set(reads)))
                s = len(missing)
                lst.append((op, attr, ch, reads))
                missing.append(len(reads))
                owner.append(cid)
                for r in reads:
                    got = users.get(r)
                    if got is None:
                        users[r] = [s]
                    else:
                        got.append(s)
                if not reads:
                    heapq.heappush(heap, (1, cid))
        rank: dict[int, int] = {}
        while heap:  # Knuth's generalization of Dijkstra: min over nodes of 1 + max over read children
            r, cid = heapq.heappop(heap)
            if cid in rank:
                continue
            rank[cid] = r
            for s in users.get(cid, ()):
                missing[s] -= 1
                if missing[s] == 0 and owner[s] not in rank:
                    heapq.heappush(heap, (r + 1, owner[s]))
        self.rank = rank
        self.order = sorted(rank, key=lambda c: (rank[c], c))
        self.usable: dict[int, list[tuple[str, Any, tuple]]] = {}
        #: per class, the usable nodes whose fact :func:`_inner` computes, as (kind, op, children): kind 0 a
        #: theta (its hypothesis), 1 a phi, 2 a pure operator with inputs; the others' facts are top, which
        #: meets to nothing (so the inner level, run many times per graph, never looks at them)
        self.plan: dict[int, list[tuple[int, str, tuple]]] = {}
        computed = _COMPUTED
        for cid in self.order:
            rc = rank[cid]
            usable = self.usable[cid] = []
            plan = self.plan[cid] = []
            for op, attr, ch, reads in nodes[cid]:
                for x in reads:  # usable: every read child ranks lower
                    if rank.get(x, rc) >= rc:
                        break
                else:
                    usable.append((op, attr, ch))
                    if op == "theta":
                        plan.append((0, op, ch))
                    elif op == "phi":
                        plan.append((1, op, ch))
                    elif ch and op in computed:
                        plan.append((2, op, ch))
        self.size = sum(len(v) for v in self.usable.values())


def _inner(g: _Graph, pess: dict[int, Fact], hyp: dict[int, Fact], base: dict[int, Fact] | None = None,
           order: list[int] | None = None, ctx: _Context | None = None) -> dict[int, Fact]:
    """The facts of every ranked class under the hypotheses ``hyp`` (one pass in rank order); with ``base`` (an
    earlier pass's facts) only the classes of ``order`` are computed again: those that depend on a hypothesis.
    With ``ctx`` (a loop's iterations before its exit), only the classes of ``order`` (the loop's region) are
    computed, starting from ``pess`` (the global facts, which also stand for every class outside the region),
    and the context's assumptions are met in (:meth:`_Context.refine`)."""
    facts: dict[int, Fact] = dict(base) if base is not None else {}
    get = facts.get if ctx is None else (lambda c: facts[c] if c in facts else pess.get(c))
    plans = g.plan
    for cid in (order if order is not None else g.order):
        f = pess.get(cid)
        for kind, op, ch in plans[cid]:
            if kind == 2:
                nf = transfer(op, [get(c) for c in ch])
            elif kind == 1:
                c = get(ch[0])
                nf = BOTTOM if c is BOTTOM else get(ch[1]) if c == _TRUE else get(ch[2]) if c == _FALSE \
                    else join(get(ch[1]), get(ch[2]))
            else:
                nf = hyp.get(cid)
            f = nf if f is None else meet(f, nf)  # (top meets to the other: the commonest case, no call)
        facts[cid] = f if ctx is None else ctx.refine(g, cid, f, get)
    return facts


def _thetas(eg: EPeg, g: _Graph) -> dict[int, list[tuple[int, int]]]:
    """Theta classes of a value sort -> their usable theta nodes as (initial value, next value) classes."""
    out: dict[int, list[tuple[int, int]]] = {}
    for cid in eg.classes_with_op("theta"):
        cid = eg.find(cid)
        if cid not in g.rank or eg.sort(cid) not in _VALUE_SORTS:
            continue
        pairs = [(ch[0], ch[1]) for op, _a, ch in g.usable[cid] if op == "theta"]
        if pairs:
            out[cid] = pairs
    return dict(sorted(out.items()))


def _dependent(g: _Graph, thetas: dict[int, list[tuple[int, int]]]) -> list[int]:
    """The classes whose facts depend on a hypothesis (the hypothesized thetas and every class a usable node of
    which reads one of them), in rank order."""
    dep: set[int] = set(thetas)
    for cid in g.order:
        if cid not in dep and any(op != "theta" and any(c in dep for c in ch) for op, _a, ch in g.usable[cid]):
            dep.add(cid)
    return [c for c in g.order if c in dep]


def _step(thetas: dict[int, list[tuple[int, int]]], facts: dict[int, Fact]) -> dict[int, Fact]:
    """What each hypothesized theta is found to be at some iteration: its initial or its next value."""
    out = {}
    for t, pairs in thetas.items():
        f: Fact = BOTTOM
        for init, nxt in pairs:
            f = join(f, join(facts.get(init), facts.get(nxt)))
        out[t] = f
    return out


class _Budget:
    """Node visits left for one analysis (the global fixpoint and every loop context share it)."""

    def __init__(self, visits: int) -> None:
        self.left = visits

    def take(self, n: int) -> bool:
        """Spend ``n`` visits; False (nothing spent) when fewer are left."""
        if n > self.left:
            return False
        self.left -= n
        return True


def _solve(thetas: dict[int, list[tuple[int, int]]], facts: dict[int, Fact],
           compute: Callable[[dict[int, Fact], dict[int, Fact]], dict[int, Fact]], cost: int,
           thresholds: dict[int, list[int]], budget: _Budget, max_rounds: int
           ) -> tuple[dict[int, Fact], dict[int, Fact], int] | None:
    """The outer level: the least post-fixpoint of the hypotheses of ``thetas`` (see the module docstring), from
    ``facts`` (computed under bottom hypotheses); ``compute(hyp, previous facts)`` is the inner level, ``cost``
    visits each. Returns (hypotheses, facts, rounds), or None when it did not converge within the rounds or the
    budget."""
    hyp: dict[int, Fact] = {t: BOTTOM for t in thetas}
    for rnd in range(max_rounds):
        if rnd:
            if not budget.take(cost):
                return None
            facts = compute(hyp, facts)
        found = _step(thetas, facts)
        grown = {t: f for t, f in found.items() if not leq(f, hyp[t])}
        if not grown:
            break
        for t, f in grown.items():
            new = join(hyp[t], f)
            hyp[t] = widen(hyp[t], new, thresholds) if rnd >= _WIDEN_AFTER else new
    else:
        return None
    for _ in range(_NARROWINGS):  # a post-fixpoint's image is one too (monotone transfer); checked anyway
        narrower = _step(thetas, facts)
        if narrower == hyp or not budget.take(cost):
            break
        nfacts = compute(narrower, facts)
        if not all(leq(f, narrower[t]) for t, f in _step(thetas, nfacts).items()):
            break
        hyp, facts = narrower, nfacts
    return hyp, facts, rnd + 1


def analyze(eg: EPeg, max_rounds: int = MAX_ROUNDS, max_visits: int = MAX_VISITS) -> Facts:
    """The optimistic facts of the (rebuilt) e-graph; see the module docstring."""
    none = Facts({}, {}, False, 0)
    if not any(eg.sort(t) in _VALUE_SORTS for t in eg.classes_with_op("theta")):
        return none  # no loop-carried value: nothing optimism could add
    g = _Graph(eg)
    pess = {cid: _of_key(eg.const(cid)) for cid in g.order}
    thetas = _thetas(eg, g)
    dep = _dependent(g, thetas)
    budget = _Budget(max_visits - g.size)
    thresholds = _thresholds(eg)
    solved = _solve(thetas, _inner(g, pess, {t: BOTTOM for t in thetas}),
                    lambda hyp, facts: _inner(g, pess, hyp, facts, dep), sum(len(g.usable[c]) for c in dep),
                    thresholds, budget, max_rounds)
    if solved is None:
        return none
    hyp, facts, rounds = solved
    return Facts(facts, hyp, True, rounds, g, budget, thresholds)


# -- facts inside a loop: what its exit test establishes -----------------------------------------------------
#: a comparison's relation when it is false, and with its operands swapped
_REL_NOT = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}
_REL_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
#: boolean classes assumed from one exit test, classes of one loop's region, contexts rewritten per e-graph
MAX_ASSUMED = 32
MAX_REGION = 3000
MAX_CONTEXTS = 8


def _assumed(eg: EPeg, cond: int, value: bool) -> dict[int, bool]:
    """Boolean classes whose value follows from ``cond`` being ``value``: through ``guard`` (its condition),
    ``not``, the operands of a false ``or`` and of a true ``and``, a phi of the two constants, and an int
    comparison's negation and mirror image where the e-graph has them."""
    find = eg.find
    out: dict[int, bool] = {}
    stack = [(find(cond), value)]
    while stack and len(out) < MAX_ASSUMED:
        c, v = stack.pop()
        if c in out:
            continue
        out[c] = v
        for op, _a, ch in eg.nodes(c):
            if op == "guard":
                stack.append((find(ch[1]), v))
            elif op == "not":
                stack.append((find(ch[0]), not v))
            elif (op == "or" and not v) or (op == "and" and v):
                stack.extend((find(k), v) for k in ch)
            elif op == "phi" and (eg.const(ch[1]), eg.const(ch[2])) in ((_TRUE, _FALSE), (_FALSE, _TRUE)):
                stack.append((find(ch[0]), v if eg.const(ch[1]) == _TRUE else not v))
            elif op.endswith(".i") and op[:-2] in _REL_NOT:
                rel, (x, y) = op[:-2], ch
                for other, args, same in ((_REL_NOT[rel], (x, y), False), (_REL_FLIP[rel], (y, x), True),
                                          (_REL_NOT[_REL_FLIP[rel]], (y, x), False)):
                    found = eg.lookup(other + ".i", None, args)
                    if found is not None:
                        stack.append((find(found), v if same else not v))
    return out


def _bound(rel: str, y: Fact, skew: dict[str, int]) -> Fact:
    """The int values ``x`` with ``x rel y`` for some ``y`` in the fact ``y`` (top for ``ne``); ``skew`` moves a
    bound the wrong way (the range mutants)."""
    if y is BOTTOM:
        return BOTTOM
    mn, mx = _LIMITS[32]
    if y is None:
        y = Interval(32, mn, mx)
    if not isinstance(y, Interval) or y.bits != 32:
        return None
    lo, hi = {"lt": (mn, y.hi - 1 - skew.get("lt", 0)), "le": (mn, y.hi), "gt": (y.lo + 1 + skew.get("gt", 0), mx),
              "ge": (y.lo, mx), "eq": (y.lo, y.hi)}.get(rel, (mn, mx))
    return Interval(32, lo, hi) if lo <= hi else BOTTOM


@dataclass
class _Context:
    """The iterations of a loop before its exit: at each, every class of ``assumed`` has its fact (the exit test
    is false), and for every ``x -> (rel, y)`` of ``relations``, ``x rel y`` holds."""

    region: set[int]
    assumed: dict[int, Fact]
    relations: dict[int, list[tuple[str, int]]]
    skew: dict[str, int]

    def refine(self, g: _Graph, cid: int, f: Fact, get: Callable[[int], Fact]) -> Fact:
        """``f`` met with what the context says of ``cid`` at an iteration where every class of lower rank (and
        every class outside the region: global facts) is within its fact."""
        a = self.assumed.get(cid)
        if a is not None:
            f = meet(f, a)
        rank = g.rank[cid]
        for rel, other in self.relations.get(cid, ()):
            if other in self.region and g.rank.get(other, rank) >= rank:
                continue  # not known yet at this iteration (the induction reaches it later)
            f = meet(f, _bound(rel, get(other), self.skew))
        return f


def _region(eg: EPeg, tops: list[int], depth: int) -> set[int] | None:
    """The classes varying in loop ``depth`` below ``tops`` (through every node), or None when more than
    :data:`MAX_REGION`."""
    find = eg.find
    seen: set[int] = set()
    stack = [find(t) for t in tops]
    while stack:
        c = stack.pop()
        if c in seen or not eg.varies(c, depth):
            continue
        seen.add(c)
        if len(seen) > MAX_REGION:
            return None
        for _op, _a, ch in eg.nodes(c):
            stack.extend(find(k) for k in ch)
    return seen


def _has_theta(eg: EPeg, cid: int, depth: int) -> bool:
    return any(op == "theta" and a == depth for op, a, _ch in eg.nodes(cid))


def loop_contexts(eg: EPeg, res: Facts, mutant: str | None = None) -> list[tuple]:
    """For every loop (a pass class and the thetas of its depth that ``eval`` reads at it), the substitutions
    that hold at its iterations before the exit and are not known globally: a class found to be one constant,
    and a divisor check whose divisor cannot be zero there (``rho_value`` its divisor, ``rho_sigma`` its heap).
    Each as a ``("context", depth, pass class, exit test, tops, substitutions, evals)`` match of
    :class:`LoopOptimism`; docs/optimistic.md says why the rewrite it makes holds."""
    g, budget = res.graph, res.budget
    if not res.converged or g is None or budget is None:
        return []
    find = eg.find
    evals: dict[tuple[int, int], set[int]] = {}  # (depth, pass class) -> the classes its evals read
    for p in sorted(eg.classes_with_op("pass")):
        for depth in sorted({a for op, a, _ch in eg.nodes(p) if op == "pass"}):
            evals[(depth, p)] = {x for _e, x in _evals_at(eg, p, depth)}
    thresholds = res.thresholds if res.thresholds is not None else _thresholds(eg)  # (the same e-graph's)
    skew = {"lt": 1} if mutant == "range-high" else {"gt": 1} if mutant == "range-low" else {}
    out: list[tuple] = []
    for (depth, p), seqs in sorted(evals.items()):
        conds = sorted({find(ch[0]) for op, a, ch in eg.nodes(p) if op == "pass" and a == depth})
        if not seqs or eg.variance(conds[0]) >> (depth + 1):
            continue  # no exit test, or one that varies in an inner loop (the exit is not one index)
        d = conds[0]
        if mutant == "after-exit":
            tops = sorted(t for t in seqs if eg.varies(t, depth))
        elif mutant == "sibling":
            tops = sorted({t for (dd, _q), ss in evals.items() if dd == depth for t in ss if _has_theta(eg, t, depth)})
        else:
            tops = sorted(t for t in seqs if _has_theta(eg, t, depth))
        region = _region(eg, [*tops, d], depth) if tops else None
        if region is None:
            continue
        assumed: dict[int, bool] = {}
        for c in conds:
            assumed.update(_assumed(eg, c, False))
        relations: dict[int, list[tuple[str, int]]] = {}
        for c, v in sorted(assumed.items()):
            for op, _a, ch in eg.nodes(c):
                if op.endswith(".i") and op[:-2] in _REL_NOT:
                    rel = op[:-2] if v else _REL_NOT[op[:-2]]
                    x, y = find(ch[0]), find(ch[1])
                    relations.setdefault(x, []).append((rel, y))
                    relations.setdefault(y, []).append((_REL_FLIP[rel], x))
        ctx = _Context(region, {c: _TRUE if v else _FALSE for c, v in assumed.items()}, relations, skew)
        # the region's ranked classes in rank order (g.order is sorted by (rank, id)): sorting the region is
        # cheaper than filtering every class of the e-graph once per loop
        rank = g.rank
        order = sorted((c for c in region if c in rank), key=lambda c: (rank[c], c))
        thetas = {t: [(ch[0], ch[1]) for op, a, ch in g.usable[t] if op == "theta" and a == depth]
                  for t in order if eg.sort(t) in _VALUE_SORTS and _has_theta(eg, t, depth)}
        thetas = {t: pairs for t, pairs in thetas.items() if pairs}
        cost = sum(len(g.usable[c]) for c in order)
        if not budget.take(cost):
            break
        # the initial values (computed before the loop, outside the region) as :func:`_step` reads them
        outside = {i: res.facts.get(i) for pairs in thetas.values() for i, _n in pairs if i not in region}

        def compute(hyp: dict[int, Fact], _prev: dict[int, Fact], order: list[int] = order,
                    ctx: _Context = ctx, outside: dict[int, Fact] = outside) -> dict[int, Fact]:
            return _inner(g, res.facts, hyp, outside, order, ctx)

        solved = _solve(thetas, compute({t: BOTTOM for t in thetas}, {}), compute, cost, thresholds, budget,
                        MAX_ROUNDS)
        if solved is None:
            continue
        facts = solved[1]
        subst: list[tuple] = []
        for c in order:
            k = _key_of(facts.get(c))
            if k is not None and _key_of(res.facts.get(c)) is None and eg.const(c) is None:
                subst.append((c, "const", k))
            for op, _a, ch in eg.nodes(c):
                if op not in _CHECKS:
                    continue
                dv = find(ch[1])
                fd, gd = facts.get(dv, res.facts.get(dv)), res.facts.get(dv)
                if isinstance(fd, Interval) and not fd.lo <= 0 <= fd.hi and \
                        not (isinstance(gd, Interval) and not gd.lo <= 0 <= gd.hi) and eg.const(dv) is None:
                    for proj, to in (("rho_value", dv), ("rho_sigma", find(ch[0]))):
                        t = eg.lookup(proj, None, (c,))
                        if t is not None:
                            subst.append((find(t), "class", to))
        if not subst:
            continue
        if mutant == "sibling":
            pairs = tuple((t, q) for (dd, q), ss in sorted(evals.items()) if dd == depth for t in sorted(ss) if t in tops)
        else:
            pairs = tuple((t, p) for t in tops)
        out.append(("context", depth, p, d, tuple(tops), tuple(subst), pairs))
    return out


class _InLoop(Assume):
    """A copy equal to its original at every iteration of loop ``depth`` before its exit, given substitutions
    true there (docs/optimistic.md): only classes varying in the loop are copied; through the loop's thetas
    whose initial value does not vary in it and through the loop operators of inner loops, every other loop
    operator (of an outer loop, and eval, pass, shift, peel of this one: they read other iterations) kept whole."""

    def __init__(self, eg: EPeg, subst: dict[int, int], depth: int, limit: int, copy_values: bool = True) -> None:
        super().__init__(eg, subst, limit, rule=LoopOptimism.name)
        self.depth = depth
        self.copy_values = copy_values

    def _leaf(self, cid: int) -> bool:
        return super()._leaf(cid) or not self.eg.varies(cid, self.depth)

    # a value that varies in the loop (a divisor check's divisor and heap) is copied too: the copy stays one loop
    def _explore(self, tops: list[int]) -> None:
        super()._explore([*tops, *sorted(set(self.subst.values()))] if self.copy_values else tops)

    def _source(self, cid: int) -> int:
        cid = self.eg.find(cid)
        value = self.subst.get(cid)
        return cid if value is None or not self.copy_values else self.eg.find(value)

    def _kept(self, node: ENode) -> bool:
        op, attr, ch = node
        if op not in LOOP_OPS or attr > self.depth:
            return False
        return not (op == "theta" and attr == self.depth and not self.eg.varies(ch[0], self.depth))


# -- value numbering across loops ----------------------------------------------------------------------------
_NOT_POINTWISE = frozenset({"eval", "pass", "shift", "peel"})  # they read other iterations than their own
_SAME_IS = {"eq.i": True, "eq.a": True, "le.i": True, "ge.i": True, "ne.i": False, "ne.a": False, "lt.i": False,
            "gt.i": False}  # a comparison of a value with itself


class _Numbers:
    """Value numbers of the classes under a hypothesis: a union-find over class ids (and the constants, as
    their keys), closed under congruence of the pointwise nodes and theta, a comparison of a value with itself
    decided, a phi under a decided condition its arm."""

    def __init__(self, nodes: list[tuple[int, str, Any, tuple]], groups: list[list[int]],
                 constants: dict[int, tuple]) -> None:
        self.parent: dict[Any, Any] = {}
        for g in groups:
            for c in g[1:]:
                self.union(g[0], c)
        for cid, key in constants.items():
            self.union(cid, key)
        self.visits = 0
        # the same passes and the same unions, in the same order, as the plain loop (so the same numbers and the
        # same visits): ``x not in parent`` is ``find(x) == x`` (no entry is its own parent), and a union of two
        # equal representatives changes nothing, so neither is called for them (most of a pass)
        parent, find, union = self.parent, self.find, self.union
        same_is = _SAME_IS
        changed = True
        while changed:
            changed = False
            table: dict[tuple, Any] = {}
            self.visits += len(nodes)
            for cid, op, attr, ch in nodes:
                r = find(cid) if cid in parent else cid
                kids = tuple([find(c) if c in parent else c for c in ch])
                other = table.setdefault((op, attr, kids), r)
                if other != r and union(other, r):
                    changed = True
                if op in same_is:
                    if kids[0] == kids[1] and union(r, ("const.b", same_is[op])):
                        changed = True
                elif op == "phi":
                    t = find(_TRUE)
                    if kids[0] == t or kids[0] == find(_FALSE):
                        if union(r, ch[1] if kids[0] == t else ch[2]):
                            changed = True

    def find(self, x: Any) -> Any:
        parent = self.parent
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: Any, b: Any) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[rb] = ra  # which is the representative decides nothing: groups keep their members' order
        return True


def theta_node_id(eg: EPeg, cid: int) -> int:
    """The id of the class's theta node that :func:`value_numbers` reads (the id it was created with), so that a
    union between two of them explains how each theta got into its class."""
    op, attr, ch = min(n for n in eg.nodes(cid) if n[0] == "theta")
    nid = eg._memo.get((op, attr, tuple(eg.find(c) for c in ch)))
    return cid if nid is None else nid


def value_numbers(eg: EPeg, facts: Facts, max_visits: int = MAX_VISITS) -> list[list[int]]:
    """Groups of theta classes equal at every iteration (optimistic value numbering): thetas of one loop depth
    with equal initial values (one class, or one constant) start in one group; the groups are split by their
    next values' numbers under the hypothesis that every group holds, until every group's next values are one
    number. Sound by induction over the iteration vectors (docs/optimistic.md): a group's thetas are equal at
    iteration 0 of their loop by their initial values, and at ``k + 1`` because the derivation of their next
    values' equality uses the hypothesis only at iteration ``k`` or earlier (congruence of pointwise nodes and
    theta; eval, pass, shift and peel, which read later iterations, are left out)."""
    if not facts.converged:
        return []
    find = eg.find
    constants = {cid: k for cid, f in sorted(facts.facts.items()) if (k := _key_of(f)) is not None}
    step: dict[int, int] = {}
    keyed: dict[tuple, list[int]] = {}
    for cid in sorted({find(c) for c in eg.classes_with_op("theta")}):
        theta = min(n for n in eg.nodes(cid) if n[0] == "theta")
        _op, loop, (init, nxt) = theta
        init = find(init)
        step[cid] = find(nxt)
        keyed.setdefault((loop, constants.get(init, init)), []).append(cid)
    groups = [g for g in keyed.values() if len(g) > 1]
    if not groups:
        return []  # no two thetas start alike (most e-graphs): nothing to number, and no node list to build
    parent = eg._parent  # (a representative is its own parent: no find for it, the commonest case)
    nodes = [(cid, op, attr, tuple([c if parent[c] == c else find(c) for c in ch])) for cid in sorted(eg.class_ids())
             for op, attr, ch in eg.nodes(cid) if op not in _NOT_POINTWISE]
    visits = 0
    while groups:
        numbers = _Numbers(nodes, groups, constants)
        visits += numbers.visits
        if visits > max_visits:
            return []
        split: list[list[int]] = []
        for g in groups:
            parts: dict[Any, list[int]] = {}
            for c in g:
                parts.setdefault(numbers.find(step[c]), []).append(c)
            split.extend(p for p in parts.values() if len(p) > 1)
        if split == groups:
            return groups
        groups = split
    return []


# -- the rule -------------------------------------------------------------------------------------------------
class LoopOptimism:
    """See the module docstring. ``mutant`` builds deliberately wrong variants for the tests that must catch
    them: ``"trust-init"`` takes every loop-carried value to be its initial value, never checking that the
    hypothesis converged; ``"range-high"`` and ``"range-low"`` take ``x < y`` as ``x < y - 1`` and ``x > y`` as
    ``x > y + 1`` in a loop's exit test; ``"sibling"`` rewrites the loops at the same depth with another loop's
    facts; ``"after-exit"`` also rewrites the values of the loop's body read at its exit (not only thetas).
    ``max_classes`` bounds the classes a loop copy explores."""

    name = "loop-optimistic"
    group = "peg.loop.optimistic"
    source = "builtin"
    depth = None
    cache_matches = True

    def __init__(self, mutant: str | None = None, max_classes: int = 64) -> None:
        self.mutant = mutant
        self.max_classes = max_classes
        self._graph = -1  # the serial of the e-graph searched last (one instance serves many in turn)
        self._searches = 0  # searches of that e-graph so far
        self._seen = -1  # its version when last analysed
        self._done: set[int] = set()  # its pass nodes whose loop was rewritten under its exit test
        self._loops = 0  # and how many loops that is

    def _analyze(self, eg: EPeg) -> Facts:
        return _first_guess(eg) if self.mutant == "trust-init" else analyze(eg)

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        if eg.serial != self._graph:
            self._graph, self._searches, self._seen = eg.serial, 0, -1
            self._done, self._loops = set(), 0
        self._searches += 1
        # analysed at the 1st, 2nd, 4th, 8th ... search of an e-graph: most facts are there in the PEG as built,
        # and a full analysis every iteration cost a tenth of the optimizer's time on commons-lang3
        if self._searches & (self._searches - 1) or eg.version == self._seen or not eg.classes_with_op("theta"):
            return [], False
        self._seen = eg.version
        res = self._analyze(eg)
        if not res.converged:
            return [], False
        out: list[tuple] = []
        find = eg.find
        for cid, f in res.facts.items():
            k = _key_of(f)
            if k is not None and eg.const(cid) is None:
                out.append(("const", cid, k))
        for op, bits in _CHECKS.items():
            for cid in sorted(eg.classes_with_op(op)):
                for nop, _a, ch in eg.nodes(cid):
                    d = res.facts.get(eg.find(ch[1])) if nop == op else None
                    if isinstance(d, Interval) and d.bits == bits and not d.lo <= 0 <= d.hi \
                            and eg.const(ch[1]) is None:
                        out.append(("nonzero", eg.find(cid), eg.find(ch[0]), eg.find(ch[1])))
        for group in value_numbers(eg, res):
            out.extend(("equal", theta_node_id(eg, group[0]), theta_node_id(eg, c)) for c in group[1:]
                       if find(c) != find(group[0]))
        if self._loops < MAX_CONTEXTS:
            out.extend(m for m in loop_contexts(eg, res, self.mutant) if not self._done & _pass_ids(eg, m[2]))
        return out[:limit], False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        if match[0] == "const":
            _k, cid, (op, attr) = match
            return eg.union(cid, eg.add(op, attr), Reason(self.name, ("class", "value"), (cid, attr)))
        if match[0] == "equal":
            _k, a, b = match
            return eg.union(a, b, Reason(self.name, ("theta", "theta'"), (a, b)))
        if match[0] == "context":
            return self._rewrite_loop(eg, match)
        _k, check, heap, divisor = match
        why = Reason(self.name, ("check", "nonzero"), (check, divisor))
        merged = eg.union(eg.add("rho_value", None, (check,)), divisor, why)
        return eg.union(eg.add("rho_sigma", None, (check,)), heap, why) or merged

    def _rewrite_loop(self, eg: EPeg, match: tuple) -> bool:
        """The loop of a context copied with its substitutions (docs/optimistic.md, "Facts from a loop's exit
        test"): ``eval(t, p) = eval(t', p)`` for each theta ``t`` the loop's evals read, and ``p = pass(d')``,
        the exit test ``d`` reading the copied thetas."""
        _k, depth, p, d, tops, subst, pairs = match
        if self._done & _pass_ids(eg, p) or self._loops >= MAX_CONTEXTS:
            return False
        find = eg.find
        facts = {find(t): eg.add(*v) if kind == "const" else find(v) for t, kind, v in subst}
        tops = [find(t) for t in tops]
        shape = _exit_heap(eg, find(d))
        try:  # (each copier copies once: a second copy would make new thetas)
            body = _InLoop(eg, facts, depth, self.max_classes)
            extra = [shape[3]] if shape else []
            changed = body.plan(tops + extra)
            if not changed.intersection(tops):
                return False
            if self.mutant != "after-exit" and any(
                    body.chosen[t][:2] != ("theta", depth) for t in tops if t in changed):
                return False  # the copy must be a theta of the loop: only its value at the exit is the original's
            made = body.copy(tops + extra)
            copies = dict(zip(tops, made))
            thetas = {c: body.copies[c] for c in changed if body.chosen[c][:2] == ("theta", depth)}
            at_exit = _InLoop(eg, thetas, depth, self.max_classes, copy_values=False)
            if shape is None:
                exit_test = at_exit.copy([d])[0]
            else:  # the iteration's heap before the exit as the body's copy has it, at the exit through thetas only
                cond, heap_cond, heap_exit, _heap_iter, first = shape
                c2, hc2, he2 = at_exit.copy([cond, heap_cond, heap_exit])
                heap = eg.add("phi", None, (hc2, he2, made[-1]) if first else (hc2, made[-1], he2))
                exit_test = eg.add("guard", None, (heap, c2))
        except CopyTooLarge:
            return False  # the copies made so far are unused classes: harmless
        why = Reason(self.name, ("loop", "exit"), (find(p), find(d)))
        merged = False
        if find(exit_test) != find(d):
            merged |= eg.union(p, eg.add("pass", depth, (exit_test,)), why)
        for t, q in pairs:
            t2 = copies.get(find(t))
            if t2 is not None and find(t2) != find(t):
                merged |= eg.union(eg.add("eval", depth, (t, q)), eg.add("eval", depth, (t2, q)), why)
        if merged:  # once per loop (a loop with nothing to rewrite yet is tried again at the next analysis)
            self._done |= _pass_ids(eg, p)
            self._loops += 1
        return merged


def _exit_heap(eg: EPeg, d: int) -> tuple[int, int, int, int, bool] | None:
    """The exit test's heap as the builder makes it, ``d = guard(phi(x, a, b), c)`` with ``x`` one value at every
    iteration before the exit and the other at the exit: (``c``, ``x``, the arm taken at the exit, the arm taken
    before it, whether the exit's arm is the first), else None."""
    before, at = _assumed(eg, d, False), _assumed(eg, d, True)
    for op, _a, ch in eg.nodes(d):
        if op != "guard":
            continue
        for hop, _ha, (x, a, b) in (n for n in eg.nodes(ch[0]) if n[0] == "phi"):
            x = eg.find(x)
            if x in before and at.get(x) is (not before[x]):
                return (eg.find(ch[1]), x, a, b, True) if at[x] else (eg.find(ch[1]), x, b, a, False)
    return None


def _pass_ids(eg: EPeg, p: int) -> set[int]:
    """The node ids of the pass nodes of class ``p`` (what marks a loop rewritten under its exit test)."""
    memo = eg._memo
    return {memo.get(n, -1) for n in eg.nodes(p) if n[0] == "pass"}


def _first_guess(eg: EPeg) -> Facts:
    """The ``trust-init`` mutant's facts: every theta taken to be its initial value, never checked."""
    g = _Graph(eg)
    pess = {cid: _of_key(eg.const(cid)) for cid in g.order}
    thetas = _thetas(eg, g)
    facts = _inner(g, pess, {t: BOTTOM for t in thetas})
    hyp = {t: facts.get(pairs[0][0]) for t, pairs in thetas.items()}
    return Facts(_inner(g, pess, hyp), hyp, True, 1)
