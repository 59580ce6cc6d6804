"""Loop-invariant heap reads hoisted in front of their loop, under the loop's entry test.

What this module owns
    :class:`LoopHoist` (``loop-hoist``, group ``peg.loop.hoist``). For a loop ``l`` exited at ``P = pass_l(C)``
    whose heap is ``T = theta_l(s0, N)``, where the FIRST effect of every iteration is a read ``R = aload[e](T,
    a, i)`` (or ``arraylength(T, a)``) of loop-invariant ``a``, ``i``, and the rest of the iteration's heap
    chain, from ``rho_sigma(R)`` to ``N``, holds only effects that cannot change what ``R`` reads, every
    ``eval_l(X, P)`` equals::

        phi(C@0, X@0, eval_l(X~, pass_l(C~)))

    where ``H = aload[e](s0, a, i)`` is the read done once before the loop, ``v@0`` is ``v`` at iteration 0
    (each ``theta_l(a, b)`` replaced by ``a``, as in :mod:`.peel`) and ``v~`` is the same loop with its heap
    starting after ``H`` (``T~ = theta_l(rho_sigma(H), N~)``), ``rho_sigma(R)`` replaced by ``T~`` and
    ``rho_value(R)`` by ``rho_value(H)``: the read is gone from the body.

Why it is sound (docs/axioms.md and the comment above ``SAFE_GROUPS`` in ``rules/policy.py`` point here)
    * ``C@0`` true (the loop runs zero times): ``pass_l(C)`` is 0, so ``eval_l(X, P) = X@0``; ``H`` is only in
      the other arm, so a loop that never runs reads nothing (no NullPointerException or
      ArrayIndexOutOfBoundsException it would not have thrown). This is the guard; without it the rule is
      wrong, and tests/test_hoist.py shows its inputs catching the unguarded variant. (``X@0`` is iteration 0
      exactly: a loop that tests at the bottom ran its body once, and ``R@0`` there is ``H`` itself.)
    * ``C@0`` false: the original's first effect at iteration 0 is ``R`` on ``s0``, which is ``H``. The break
      test reads no heap but through its guard (``R`` is the first effect on ``T``, so the test performs none).
      If ``H`` throws, both forms end with that exception (``T~`` at 0 is ``H``'s failed heap, the guard of
      iteration 0 waits on it as the original's waits on ``R``). If it succeeds, by induction on ``k``:
      ``T~[k] = T[k]`` as heaps, and ``R`` at ``k`` reads ``a[i]`` of a heap that differs from ``s0`` only by
      the writes on the chain, none of which can write ``a[i]`` (other element kinds, fields; for a length
      anything: lengths are final), and ``a``, ``i`` are invariant, so ``R`` succeeds again with ``H``'s value
      and, being a read, leaves ``T[k]`` as it was; so ``rho_sigma(R)[k] = T~[k]``, ``rho_value(R)[k] =
      rho_value(H)``, and everything the body computes from them is equal, ``N~[k] = N[k]``.
    * ``pass_l(C~) = pass_l(C)`` and every sequence is equal pointwise, so their evals are.

Reads after reads (``LoopHoist(after_reads=N)``, off in the default rules)
    ``R`` may also come after up to ``N`` earlier reads ``E1..Ek`` of the iteration (the chain from ``T`` to
    ``R`` holds nothing else) when each ``Ej`` reads the SAME array ``a`` as ``R``, and, if ``R`` is an element
    read, each ``Ej`` is ``a``'s length (:func:`_throws_as_earlier`); ``rho_sigma(R)`` is then replaced by the
    copy of the heap before ``R``. Sound because whenever ``H`` throws, ``E1`` (iteration 0's first effect, on
    ``s0`` like ``H``) throws the same exception: ``a`` null makes every access of ``a`` throw
    NullPointerException; an element index out of bounds throws ``R``'s own ArrayIndexOutOfBoundsException (same
    index and length), since the lengths before it cannot throw on a non-null ``a``. When ``H`` succeeds, ``a``
    is not null, the ``Ej`` are reads (the heap is unchanged), and at every iteration ``R`` reads what ``H``
    read, as above. Not hoisted past a read of another array (``b[k]`` may throw first, something else; the
    length of a non-null ``a`` would not) nor past an element read for an element read (another index: another
    exception message). Off by default: on ``BenchKernels.invariantSum`` (``a.length`` after ``a[i]``) the
    extraction then prefers the hoisted length, whose lowering (the loop entered past its test, going on by a
    taken jump) is no cheaper than hoisting ``n - 1`` alone, which it displaces (docs/benchmarks.md).

Inputs / outputs: an e-graph after rebuild; new nodes and one union per ``eval`` of the loop.

Invariants
    * The read is not used by the break test (that test would need it before the entry test could guard it),
      nor are the earlier reads it is hoisted past.
    * Only innermost loops (no theta of another loop in the body) with a straight heap chain (no ``phi`` of
      heaps, no call, no allocation) are hoisted; the copy goes through one node per class, as
      :class:`.peel._Copier` (whose collection and copying this reuses).
    * Each loop is hoisted at most :attr:`LoopHoist.max_rounds` times along one line of hoisted copies (each
      round takes one read out of the body), so saturation adds a bounded number of nodes.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from .peel import _Copier, _evals_at, _NotPeelable, _split_evals, _unguarded, _union_evals

if TYPE_CHECKING:
    from ..egraph.types import ENode
    from ..epeg import EPeg

__all__ = ["LoopHoist"]

#: effects that change no heap (a read may throw; its failure ends the method in both forms)
_READS = frozenset({"aload", "arraylength", "getfield", "check.zero.i", "check.zero.l"})
#: element kinds one baload/bastore opcode serves: arrays of these may be one object
_BYTE_KINDS = frozenset({"B", "Z"})


def _may_change(write: ENode, read: ENode) -> bool:
    """Whether the chain effect ``write`` can change what ``read`` (an ``aload`` or ``arraylength``) reads."""
    op, attr, _ch = write
    if op in _READS or op == "putfield":  # fields are not array elements
        return False
    if op != "astore":
        return True  # calls, allocation, monitors, anything unknown
    if read[0] == "arraylength":
        return False  # lengths are final (JLS 10.7)
    kind = read[1]
    return attr == kind or (attr in _BYTE_KINDS and kind in _BYTE_KINDS)


class _HoistCopier(_Copier):
    """Iteration 0 of the loop (``first``, as peeling's) and the loop without the read (``shifted`` holds the
    copies ``v~``): the same thetas with the heap's initial value after ``H``, the read's heap and value mapped
    to the new theta and ``H``'s value."""

    def __init__(self, eg: EPeg, loop: int, tops: list[int], limit: int, theta: int, read: int, before: int,
                 hoisted: int) -> None:
        self.eg = eg
        self.loop = loop
        self.chosen: dict[int, ENode] = {}
        self.first: dict[int, int] = {}
        self.shifted: dict[int, int] = {}
        self._collect(tops, limit)
        find = eg.find
        for cid, (op, attr, ch) in self.chosen.items():
            if op != "theta":
                continue
            if attr != loop:
                raise _NotPeelable  # an inner loop: its thetas would need copies of their own
            self.first[cid] = find(ch[0])
            self.shifted[cid] = self._placeholder(eg.variance(cid))
        heap = find(theta)
        if heap not in self.shifted:
            raise _NotPeelable
        self._busy: set[int] = set()
        # the heap after R is the heap before it: the theta's copy, or the copy of the earlier reads' chain
        after_read = self.shifted[heap] if find(before) == heap else self.after_first(before)
        for proj, to in (("rho_sigma", after_read), ("rho_value", eg.add("rho_value", None, (hoisted,)))):
            got = eg.lookup(proj, None, (read,))
            if got is not None:
                self.shifted[find(got)] = to
        start = eg.add("rho_sigma", None, (hoisted,))
        for cid, (op, _attr, ch) in list(self.chosen.items()):
            if op == "theta":
                init = start if cid == heap else find(ch[0])
                self._close(self.shifted[cid], (init, self.after_first(ch[1])), loop, cid)


class LoopHoist:
    """See the module docstring. ``guarded=False`` builds the rule WITHOUT the entry test (``eval_l(X, P) =
    eval_l(X~, pass_l(C~))``): unsound on loops that run zero times, kept only so tests can show their inputs
    catch it. ``after_reads``: how many earlier reads of the same array a hoisted read may come after (0: the
    first read of the iteration only, the default rules' choice)."""

    name = "loop-hoist"
    group = "peg.loop.hoist"
    source = "builtin"
    depth = None
    cache_matches = False

    def __init__(self, max_classes: int = 160, max_chain: int = 64, max_rounds: int = 4,
                 guarded: bool = True, after_reads: int = 0) -> None:
        self.max_classes = max_classes  # classes of the loop body a hoist may copy
        self.max_chain = max_chain  # effects on the body's heap chain
        self.max_rounds = max_rounds
        self.guarded = guarded
        self.after_reads = after_reads  # earlier reads of the iteration a hoisted read may come after
        self._graph: weakref.ref | None = None
        self._round: dict[int, int] = {}  # pass class -> how many hoists made it (0: an original loop)
        self._done: set[int] = set()  # pass classes hoisted

    def _state(self, eg: EPeg) -> None:
        if self._graph is None or self._graph() is not eg:  # one instance serves many e-graphs in turn
            self._graph = weakref.ref(eg)
            self._round = {}
            self._done = set()

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        self._state(eg)
        find = eg.find
        done = {find(x) for x in self._done}
        rounds = {find(x): r for x, r in self._round.items()}
        out = []
        for p in sorted(eg.classes_with_op("pass")):
            if p in done or rounds.get(p, 0) >= self.max_rounds:
                continue
            for op, attr, ch in eg.nodes(p):
                if op != "pass":
                    continue
                evals = _evals_at(eg, p, attr)
                found = _hoistable_read(eg, attr, _unguarded(eg, ch[0]), evals, self.max_chain,
                                        self.after_reads) if evals else None
                if found is not None:
                    out.append((p, attr, ch[0], tuple(evals), *found))
                    break
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        p, loop, cond, evals, theta, s0, read, before = match
        self._state(eg)
        self._done.add(p)
        node = next((n for n in eg.nodes(read) if n[0] in ("aload", "arraylength")
                     and eg.find(n[2][0]) == eg.find(before)), None)
        if node is None:
            return False
        op, attr, ch = node
        try:
            hoisted = eg.add(op, attr, (s0,) + tuple(ch[1:]))
            copier = _HoistCopier(eg, loop, [cond] + [x for _e, x in evals], self.max_classes, theta, read,
                                  before, hoisted)
            new_pass, rhs = _split_evals(eg, copier, loop, cond, evals, self.guarded)
            self._round[new_pass] = self._round.get(p, 0) + 1
        except _NotPeelable:
            return False  # the copies made so far are unused classes: harmless, and the extractor skips them
        return _union_evals(eg, self.name, p, rhs)


def _hoistable_read(eg: EPeg, loop: int, test: int, evals: list[tuple[int, int]], max_chain: int,
                    after_reads: int) -> tuple[int, int, int, int] | None:
    """(heap theta, its initial heap, read class, the read's input heap) of a loop whose heap ``theta_loop(s0,
    N)`` (a sequence one of its evals reads) reaches, through earlier reads that throw as it does
    (:func:`_invariant_reads`), a read of invariant operands whose chain from that read to ``N`` cannot change
    what it reads; None when there is none, or when the break ``test`` uses the first such read or a read
    before it."""
    find = eg.find
    for _e, x in evals:
        if not eg.is_linear(x):
            continue
        for op, attr, ch in eg.nodes(x):
            if op != "theta" or attr != loop or eg.varies(ch[0], loop):
                continue
            heap, s0, nxt = find(x), find(ch[0]), find(ch[1])
            for read, before, earlier in _invariant_reads(eg, heap, loop, after_reads):
                node = next(n for n in eg.nodes(read) if n[0] in ("aload", "arraylength")
                            and find(n[2][0]) == before)
                after = eg.lookup("rho_sigma", None, (read,))
                if after is None or find(after) == before:
                    continue
                if not _chain_keeps(eg, nxt, find(after), node, max_chain):
                    continue
                if any(_test_reads(eg, loop, test, r) for r in (read, *earlier)):
                    return None  # the test reads before the entry test could guard: the loop stays as it is
                return heap, s0, read, before
    return None


def _test_reads(eg: EPeg, loop: int, test: int, read: int) -> bool:
    """Whether the loop's break ``test`` (without its guard) uses ``read``: then the read comes before the test
    in every iteration, the zero-trip arm would need its value, and the entry test could not guard it."""
    find = eg.find
    stack, seen = [find(test)], set[int]()
    while stack:
        c = stack.pop()
        if c == read:
            return True
        if c in seen or not eg.varies(c, loop):
            continue
        seen.add(c)
        for _op, _attr, ch in eg.nodes(c):
            stack.extend(find(k) for k in ch)
    return False


def _reads_on(eg: EPeg, heap: int) -> list[tuple[int, ENode]]:
    """(class, node) of the ``aload``/``arraylength`` nodes whose input heap is ``heap``, by class."""
    find = eg.find
    out: dict[int, ENode] = {}
    for pid in eg._classes[heap].parents:
        node = eg._cur[pid]
        if node is None or node[0] not in ("aload", "arraylength") or find(node[2][0]) != heap:
            continue
        out.setdefault(find(pid), node)
    return sorted(out.items())


def _throws_as_earlier(node: ENode, earlier: list[ENode], find) -> bool:
    """Whether ``node``, done before the loop instead of after ``earlier`` (the reads the iteration does first,
    in order), can throw only where the first of them to throw throws the same exception (docs/axioms.md):
    every earlier read is of the same array, so a null array makes the first one throw NullPointerException as
    ``node`` would; and for an element read, every earlier read is a length, which cannot throw on an array the
    element read finds non-null, so an index out of bounds is ``node``'s own ArrayIndexOutOfBoundsException
    (the same index and length) in both."""
    array = find(node[2][1])
    if any(find(e[2][1]) != array for e in earlier):
        return False
    return node[0] == "arraylength" or all(e[0] == "arraylength" for e in earlier)


def _invariant_reads(eg: EPeg, heap: int, loop: int, max_earlier: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """(read class, its input heap, the classes of the reads before it) of each read of invariant operands that
    an iteration starting on ``heap`` does after at most ``max_earlier`` reads it may be hoisted past
    (:func:`_throws_as_earlier`); the first reads of the iteration first."""
    find = eg.find
    out: list[tuple[int, int, tuple[int, ...]]] = []
    seen: set[int] = set()
    frontier: list[tuple[int, list[ENode], tuple[int, ...]]] = [(heap, [], ())]
    while frontier:
        cur, earlier, classes = frontier.pop(0)
        for cid, node in _reads_on(eg, cur):
            if cid in seen:
                continue
            seen.add(cid)
            if not any(eg.varies(c, loop) for c in node[2][1:]) and _throws_as_earlier(node, earlier, find):
                out.append((cid, cur, classes))
            after = eg.lookup("rho_sigma", None, (cid,))
            if after is not None and len(earlier) < max_earlier:
                frontier.append((find(after), earlier + [node], classes + (cid,)))
    return out


def _chain_keeps(eg: EPeg, nxt: int, after: int, read: ENode, max_chain: int) -> bool:
    """Whether some form of the heap ``nxt`` is a straight chain of effects from ``after`` none of which can
    change what ``read`` reads (any node of a class is equal to the class, so one such form suffices)."""
    find = eg.find
    stack, seen = [nxt], set[int]()
    while stack:
        cur = stack.pop()
        if cur == after:
            return True
        if cur in seen or len(seen) >= max_chain:
            continue
        seen.add(cur)
        for op, _attr, ch in eg.nodes(cur):
            if op != "rho_sigma":
                continue
            for eff in eg.nodes(ch[0]):
                if eff[0] in _READS or eff[0] in ("putfield", "astore"):
                    if not _may_change(eff, read):
                        stack.append(find(eff[2][0]))
    return False
