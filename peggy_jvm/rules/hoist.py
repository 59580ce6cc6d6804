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

Inputs / outputs: an e-graph after rebuild; new nodes and one union per ``eval`` of the loop.

Invariants
    * The read is not used by the break test (that test would need it before the entry test could guard it).
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

    def __init__(self, eg: EPeg, loop: int, tops: list[int], limit: int, theta: int, read: int,
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
        for proj, to in (("rho_sigma", self.shifted[heap]), ("rho_value", eg.add("rho_value", None, (hoisted,)))):
            got = eg.lookup(proj, None, (read,))
            if got is not None:
                self.shifted[find(got)] = to
        self._busy: set[int] = set()
        start = eg.add("rho_sigma", None, (hoisted,))
        for cid, (op, _attr, ch) in list(self.chosen.items()):
            if op == "theta":
                init = start if cid == heap else find(ch[0])
                self._close(self.shifted[cid], (init, self.after_first(ch[1])), loop, cid)


class LoopHoist:
    """See the module docstring. ``guarded=False`` builds the rule WITHOUT the entry test (``eval_l(X, P) =
    eval_l(X~, pass_l(C~))``): unsound on loops that run zero times, kept only so tests can show their inputs
    catch it."""

    name = "loop-hoist"
    group = "peg.loop.hoist"
    source = "builtin"
    depth = None
    cache_matches = False

    def __init__(self, max_classes: int = 160, max_chain: int = 64, max_rounds: int = 4,
                 guarded: bool = True) -> None:
        self.max_classes = max_classes  # classes of the loop body a hoist may copy
        self.max_chain = max_chain  # effects on the body's heap chain
        self.max_rounds = max_rounds
        self.guarded = guarded
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
                found = _hoistable_read(eg, attr, evals, self.max_chain) if evals else None
                if found is not None and not _test_reads(eg, attr, _unguarded(eg, ch[0]), found[2]):
                    out.append((p, attr, ch[0], tuple(evals), *found))
                    break
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        p, loop, cond, evals, theta, s0, read = match
        self._state(eg)
        self._done.add(p)
        node = next((n for n in eg.nodes(read) if n[0] in ("aload", "arraylength")
                     and eg.find(n[2][0]) == eg.find(theta)), None)
        if node is None:
            return False
        op, attr, ch = node
        try:
            hoisted = eg.add(op, attr, (s0,) + tuple(ch[1:]))
            copier = _HoistCopier(eg, loop, [cond] + [x for _e, x in evals], self.max_classes, theta, read,
                                  hoisted)
            new_pass, rhs = _split_evals(eg, copier, loop, cond, evals, self.guarded)
            self._round[new_pass] = self._round.get(p, 0) + 1
        except _NotPeelable:
            return False  # the copies made so far are unused classes: harmless, and the extractor skips them
        return _union_evals(eg, self.name, p, rhs)


def _hoistable_read(eg: EPeg, loop: int, evals: list[tuple[int, int]], max_chain: int
                    ) -> tuple[int, int, int] | None:
    """(heap theta, its initial heap, read class) of a loop whose heap ``theta_loop(s0, N)`` (a sequence one of
    its evals reads) starts every iteration with a read of invariant operands, and whose chain from that read to
    ``N`` cannot change what it reads; None when there is none."""
    find = eg.find
    for _e, x in evals:
        if not eg.is_linear(x):
            continue
        for op, attr, ch in eg.nodes(x):
            if op != "theta" or attr != loop or eg.varies(ch[0], loop):
                continue
            heap, s0, nxt = find(x), find(ch[0]), find(ch[1])
            for read in _first_reads(eg, heap, loop):
                node = next(n for n in eg.nodes(read) if n[0] in ("aload", "arraylength")
                            and find(n[2][0]) == heap)
                after = eg.lookup("rho_sigma", None, (read,))
                if after is not None and _chain_keeps(eg, nxt, find(after), node, max_chain):
                    return heap, s0, read
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


def _first_reads(eg: EPeg, heap: int, loop: int) -> list[int]:
    """Classes of ``aload``/``arraylength`` nodes on ``heap`` whose array and index are invariant in ``loop``."""
    find = eg.find
    out = []
    for pid in eg._classes[heap].parents:
        node = eg._cur[pid]
        if node is None or node[0] not in ("aload", "arraylength") or find(node[2][0]) != heap:
            continue
        if any(eg.varies(c, loop) for c in node[2][1:]):
            continue
        cid = find(pid)
        if cid not in out:
            out.append(cid)
    return sorted(out)


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
