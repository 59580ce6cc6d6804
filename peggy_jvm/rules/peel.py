"""Loop peeling as an e-graph rewrite: a loop's first iteration taken out in front of it.

What this module owns
    :class:`LoopPeel` (``loop-peel``, group ``peg.loop.peel``). For a loop ``l`` exited at ``P = pass_l(C)``,
    every ``eval_l(X, P)`` equals::

        phi(C@0, X@0, eval_l(X+, pass_l(C+)))

    where ``v@0`` is ``v`` at iteration 0 of ``l`` (each ``theta_l(a, b)`` replaced by ``a``) and ``v+`` is the
    shifted sequence, ``v`` at iterations 1, 2, ... (each ``theta_l(a, b)`` replaced by ``theta_l(b@0, b+)``).
    Why it is sound: ``pass_l(C)`` is 0 when ``C@0`` holds, else ``1 + pass_l(C+)``, and ``X[1 + k] = X+[k]``;
    a loop that never exits never exits in either form (``pass_l(C+)`` has no value either). Every operator but
    ``l``'s own loop operators is pointwise in ``l``'s index, so the two substitutions go through them
    unchanged, inner loops included. Effects need nothing special: the heap is a value threaded through thetas
    like any other.

    What it is for: a value that is special on the first iteration only (a ``first`` flag ``theta_l(true,
    false)``, a "previous element" ``theta_l(x0, x)``) is loop-invariant in the shifted loop, so the other rules
    fold the tests of it out of the loop body; the extractor keeps the peeled form only when that pays for the
    copy of the first iteration (Peggy's loop peeling, Tate et al. 2009).

Inputs / outputs: an e-graph after rebuild; new nodes and one union per ``eval`` of the peeled loop.

Invariants
    * Each class is copied through ONE node, its oldest (smallest id): a node's children existed before it, so
      those choices can only form cycles through the placeholders that close thetas; a cycle through anything
      else, or an ``eval``/``pass``/``shift``/``peel`` of ``l`` itself inside the loop, leaves the loop alone.
    * A loop is peeled at most once per e-graph and a peeled copy never again (else saturation would unroll
      loops forever), by this rule or any subclass (the validator's, rules/firsttest.py, rules/loopshift.py:
      one record per e-graph, ``_PEELED``); only loops with a theta whose next value is invariant and whose
      body is small (:attr:`LoopPeel.max_classes`) are peeled, so the e-graph grows by a bounded amount.
    * Variance of each copy is set from the original (``v@0`` varies where ``v`` does, except in ``l``;
      ``v+`` where ``v`` does): the analysis alone cannot see through the new cycles.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from ..egraph.explain import Reason

if TYPE_CHECKING:
    from ..egraph.types import ENode
    from ..epeg import EPeg

__all__ = ["LoopPeel"]

_OWN_LOOP_OPS = frozenset({"eval", "pass", "shift", "peel"})  # with the loop's own depth: not pointwise in it
_PEELED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # e-graph -> LoopPeel._seen


class _NotPeelable(Exception):
    """The loop body has a shape the substitutions do not go through."""


class _Copier:
    """The two substitutions of one loop ``l`` over the loop body reached from ``tops``. Like
    :meth:`EPeg.add_peg <peggy_jvm.epeg.graph.EPeg.add_peg>`: every theta of the body first gets a
    placeholder class in each copy, the other nodes are copied children first (a theta child is its
    placeholder), then each theta's copy is added and merged into its placeholder."""

    def __init__(self, eg: EPeg, loop: int, tops: list[int], limit: int) -> None:
        self.eg = eg
        self.loop = loop
        self.chosen: dict[int, ENode] = {}  # body class -> the node it is copied through
        self.first: dict[int, int] = {}  # body class -> its value at iteration 0
        self.shifted: dict[int, int] = {}  # body class -> its sequence from iteration 1
        self._collect(tops, limit)
        for cid, (op, attr, ch) in self.chosen.items():
            if op != "theta":
                continue
            if attr == loop:
                self.first[cid] = eg.find(ch[0])  # invariant: checked by _collect
            else:
                self.first[cid] = self._placeholder(eg.variance(cid) & ~(1 << loop))
            self.shifted[cid] = self._placeholder(eg.variance(cid))
        self._busy: set[int] = set()
        for cid, (op, attr, ch) in list(self.chosen.items()):
            if op != "theta":
                continue
            if attr == loop:  # the sequence from iteration 1 starts at the next value of iteration 0
                kids = (self.at_first(ch[1]), self.after_first(ch[1]))
            else:
                kids = (self.after_first(ch[0]), self.after_first(ch[1]))
                self._close(self.first[cid], (self.at_first(ch[0]), self.at_first(ch[1])), attr, cid)
            self._close(self.shifted[cid], kids, attr, cid)

    def _placeholder(self, variance: int) -> int:
        ph = self.eg.add_placeholder()
        self.eg._classes[ph].data[1] = variance  # the analysis cannot see through the new cycle
        return ph

    def _close(self, ph: int, kids: tuple[int, int], loop: int, original: int) -> None:
        eg = self.eg
        eg.union(ph, eg.add("theta", loop, kids), Reason("loop-peel", ("copy of",), (original,)))
        # a copied loop's variable, as every other copied class: extraction prefers the builder's forms of the
        # copy's nodes (``pegextract.select.original_nodes``), ``s + a[i]`` over ``a[i] + s``
        eg.info.copied_from.setdefault(eg.find(ph), original)

    def _collect(self, tops: list[int], limit: int) -> None:
        """The body classes (varying in the loop) and their oldest nodes: a node's children existed before it,
        so those choices form cycles only through the placeholders thetas were closed with."""
        eg = self.eg
        memo = eg._memo
        stack = [eg.find(t) for t in tops]
        while stack:
            cid = stack.pop()
            if cid in self.chosen or not eg.varies(cid, self.loop):
                continue
            nodes = eg.nodes(cid)
            if not nodes or len(self.chosen) >= limit:
                raise _NotPeelable
            node = min(nodes, key=lambda n: memo.get(n, 1 << 60))
            op, attr, ch = node
            if attr == self.loop and op in _OWN_LOOP_OPS:
                raise _NotPeelable
            if op == "theta" and attr == self.loop and eg.varies(ch[0], self.loop):
                raise _NotPeelable
            self.chosen[cid] = node
            stack.extend(eg.find(c) for c in ch)

    def _copy(self, cid: int, memo: dict[int, int], child) -> int:
        eg = self.eg
        cid = eg.find(cid)
        got = memo.get(cid)
        if got is not None:
            return eg.find(got)
        node = self.chosen.get(cid)
        if node is None:
            return cid  # invariant in the loop: the same in every iteration
        if cid in self._busy:
            raise _NotPeelable  # a cycle not closed by a theta
        self._busy.add(cid)
        op, attr, ch = node
        out = eg.add(op, attr, [child(c) for c in ch])
        eg.info.copied_from.setdefault(out, cid)
        self._busy.discard(cid)
        memo[cid] = out
        return out

    def at_first(self, cid: int) -> int:
        """``cid`` at iteration 0 of the loop."""
        return self._copy(cid, self.first, self.at_first)

    def after_first(self, cid: int) -> int:
        """``cid`` from iteration 1 on."""
        return self._copy(cid, self.shifted, self.after_first)


class LoopPeel:
    """See the module docstring."""

    name = "loop-peel"
    group = "peg.loop.peel"
    source = "builtin"
    depth = None
    cache_matches = False

    def __init__(self, max_classes: int = 160) -> None:
        self.max_classes = max_classes  # classes of the loop body (varying in the loop) a peel may copy

    @staticmethod
    def _seen(eg: EPeg) -> set[int]:
        """The pass classes peeled in ``eg``, or made by a peel (representatives when recorded): one set for
        every peeling rule (the validator's subclasses too), so that no rule peels another's copy again."""
        done = _PEELED.get(eg)
        if done is None:
            done = _PEELED[eg] = set()
        return done

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        done = {eg.find(x) for x in self._seen(eg)}
        out = []
        for p in eg.classes_with_op("pass"):
            if p in done:
                continue
            for op, attr, ch in eg.nodes(p):
                if op != "pass":
                    continue
                evals = _evals_at(eg, p, attr)
                if evals and self.wants(eg, attr, ch[0], evals):
                    out.append((p, attr, ch[0], tuple(evals)))
                    break
            if len(out) >= limit:
                break
        return out, False

    def wants(self, eg: EPeg, loop: int, cond: int, evals: list[tuple[int, int]]) -> bool:
        """Whether to peel the loop exited at ``pass_loop(cond)`` with these evals: here, a loop with a value
        special on the first iteration (subclasses peel for other reasons)."""
        return _has_first_only_value(eg, loop, [x for _e, x in evals] + [cond], self.max_classes)

    def apply(self, eg: EPeg, match: tuple) -> bool:
        p, loop, cond, evals = match
        self._seen(eg).add(p)
        try:
            copier = _Copier(eg, loop, [cond] + [x for _e, x in evals], self.max_classes)
            new_pass, rhs = _split_evals(eg, copier, loop, cond, evals)
            self._seen(eg).add(new_pass)
        except _NotPeelable:
            return False  # the copies made so far are unused classes: harmless, and the extractor skips them
        return _union_evals(eg, self.name, p, rhs)


def _split_evals(eg: EPeg, copier: _Copier, loop: int, cond: int, evals: tuple[tuple[int, int], ...],
                 guarded: bool = True) -> tuple[int, list[tuple[int, int]]]:
    """The copied loop's ``pass_l(C')`` and, per ``eval_l(X, P)``, its new form ``phi(C@0, X@0, eval_l(X',
    pass_l(C')))`` (``X@0`` by ``copier.at_first``, ``X'`` by ``copier.after_first``); without the ``phi`` when
    not ``guarded`` (an unsound variant tests build)."""
    first_cond = _unguarded(eg, copier.at_first(cond))
    new_pass = eg.add("pass", loop, (copier.after_first(cond),))
    rhs = []
    for e, x in evals:
        later = eg.add("eval", loop, (copier.after_first(x), new_pass))
        rhs.append((e, eg.add("phi", None, (first_cond, copier.at_first(x), later)) if guarded else later))
    return new_pass, rhs


def _union_evals(eg: EPeg, rule: str, p: int, rhs: list[tuple[int, int]]) -> bool:
    """Each eval of the loop exited at ``p`` merged with its new form."""
    changed = False
    for e, r in rhs:
        changed |= eg.union(e, r, Reason(rule, ("eval", "pass"), (e, p)))
    return changed


def _unguarded(eg: EPeg, cond: int) -> int:
    """The first break test without its ``guard(s, c)``: in a loop the guard makes the exit wait for the
    iteration's heap, so that an exception inside the loop ends it even when ``c`` does not read the heap. In
    front of the loop, every ``eval`` of the loop gets the same ``phi`` and the loop's heap is one of them, so
    a failed ``s`` still ends the method, in both arms (the project's value semantics, as for
    ``eval-invariant``: non-termination and exceptions are carried by the heap). Code has no guard outside
    loops, so this is also the form a peeled loop is lifted back to."""
    for op, _attr, ch in eg.nodes(cond):
        if op == "guard":
            return eg.find(ch[1])
    return cond


def _evals_at(eg: EPeg, p: int, loop: int) -> list[tuple[int, int]]:
    """(class, sequence class) of every ``eval_loop(X, p)``."""
    find = eg.find
    out = []
    seen = set()
    for pid in eg._classes[p].parents:
        node = eg._cur[pid]
        if node is None or node[0] != "eval" or node[1] != loop or find(node[2][1]) != p:
            continue
        key = (find(pid), find(node[2][0]))
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out


def _has_first_only_value(eg: EPeg, loop: int, tops: list[int], limit: int) -> bool:
    """Whether the loop body reached from ``tops`` (at most ``limit`` classes varying in ``loop``) has a
    ``theta_loop(a, b)`` whose next value ``b`` is invariant and not ``a``: a value special on the first
    iteration only, which peeling makes invariant."""
    find = eg.find
    stack = [find(t) for t in tops]
    seen: set[int] = set()
    found = False
    while stack:
        c = stack.pop()
        if c in seen or not eg.varies(c, loop):
            continue
        seen.add(c)
        if len(seen) > limit:
            return False
        for op, attr, ch in eg.nodes(c):
            if op == "theta" and attr == loop and not eg.varies(ch[1], loop) and find(ch[0]) != find(ch[1]):
                found = True
            stack.extend(ch)
    return found
