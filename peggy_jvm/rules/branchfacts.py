"""Facts from branch conditions: inside the arms of ``phi(c, a, b)``, ``c`` is true in ``a`` and false in ``b``,
and an equality ``x == k`` (``k`` a constant) makes ``x`` be ``k`` in the arm where it holds.

What this module owns
    :class:`Assume`, the one substitution copier: a copy of a class's term with some classes (the *targets*)
    replaced by others (their *values*), shared by :class:`BranchFacts` (``branch-facts``, group
    ``peg.phi.facts``) and :mod:`.unswitch`. :class:`BranchFacts` rewrites every ``phi(c, a, b)`` to::

        phi(c, a[c := true, x := k], b[c := false])        c = eq.i(x, k), k constant
        phi(c, a[c := true], b[c := false, x := k])        c = ne.i(x, k)

    and the other rules finish the work (``x << 2`` with ``x := 5`` folds to 20, a nested ``phi(c, ..)``
    to its arm, two equal arms to one).

Why it is sound (docs/axioms.md, "Facts from branch conditions"; the comment above ``SAFE_GROUPS``)
    A PEG node's value is a function of its children's values at the same point of the loop indexes, except
    for the loop operators (``theta``, ``eval``, ``pass``, ``shift``, ``peel``) of a loop ``L``, which read
    their inputs at other indexes of ``L``. A target ``t`` that does not vary in ``L`` has one value at all
    indexes of ``L``. So when the copier replaces ``t`` by ``v`` only through nodes that are not loop operators
    of a loop ``t`` varies in (those are kept whole, as leaves), every copy reads ``t`` only at points where it
    reads it at the phi's own point, up to indexes ``t`` does not depend on. At every point where the phi takes
    the arm ``a``, ``c`` is true, so ``t`` (``c`` itself, or ``x`` with ``c = (x == k)``: int equality is
    identity of values) equals ``v`` there, and by induction over the copy (children first; a copied theta
    ``theta_L(a', b')`` by induction over ``L``'s index, which ``t`` does not vary in) each copy equals its
    original at those points. The phi never looks at ``a`` where ``c`` is false, so ``phi(c, a', b') = phi(c,
    a, b)`` pointwise. Effects need nothing special: a heap is a value like any other, an effect a function of
    its inputs, and the copy's effects are the original's with equal inputs wherever the arm is taken.
    A partial copy (classes not explored, kept as they are) is sound by the same argument: a class kept is
    equal to itself.

Inputs / outputs: an e-graph after rebuild; new nodes and one union per rewritten phi.

Invariants
    * Each class is copied through ONE node, its oldest (as :class:`.peel._Copier`): children existed before
      their node, so those choices form cycles only through thetas, which are closed through placeholders.
    * Only classes that reach a target through the chosen nodes are copied, and a phi is rewritten only when a
      copy of an arm has something to fold at once (:meth:`Assume.folds`); the walk below a phi's arm stops
      after :attr:`BranchFacts.max_classes` classes (what is not explored is kept), so a rewrite adds at most
      that many nodes per arm; each phi node is rewritten at most once, and at most
      :attr:`BranchFacts.max_rewrites` phis per e-graph.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from ..egraph.explain import Reason
from ..peg.ops import OPS

if TYPE_CHECKING:
    from ..egraph.types import ENode
    from ..epeg import EPeg

__all__ = ["Assume", "BranchFacts", "CopyTooLarge", "LOOP_OPS", "PerGraph", "arm_facts"]

#: operators that read their inputs at other indexes of their loop (their attribute)
LOOP_OPS = frozenset({"theta", "eval", "pass", "shift", "peel"})


class CopyTooLarge(Exception):
    """A copy that must be complete (:attr:`Assume.whole`) would exceed its class limit, or could not be made."""


class Assume:
    """Copies of terms with ``subst`` (class -> class) applied: see the module docstring for why each copy
    equals its original wherever every target equals its value.

    ``limit`` bounds the classes explored below the copied tops (beyond it classes are kept as they are).
    ``whole`` (a loop depth): every class varying in that loop is copied too, whether or not it reaches a
    target, so that the copy is a loop of its own (loop unswitching), and only those (what the loop reads from
    outside is kept as it is); then exceeding ``limit``, or a loop operator there that the targets forbid,
    raises :class:`CopyTooLarge`."""

    def __init__(self, eg: EPeg, subst: dict[int, int], limit: int, whole: int | None = None,
                 rule: str = "branch-facts") -> None:
        self.eg = eg
        self.rule = rule  # named in the proof log's reasons for the copied thetas
        find = eg.find
        self.subst = {find(t): find(v) for t, v in subst.items()}
        self.limit = limit
        self.whole = whole
        self.forbidden = 0  # loop depths some target varies in
        for t in self.subst:
            self.forbidden |= eg.variance(t)
        self.chosen: dict[int, ENode] = {}  # explored class -> the node it is copied through
        self.copies: dict[int, int] = {}  # copied class -> its copy
        self._changed_set: set[int] = set()
        self._explored = False  # chosen holds the exploration below the first tops asked about
        self._planned = False  # and _changed_set what a copy would change
        self._busy: set[int] = set()

    def _leaf(self, cid: int) -> bool:
        """Kept as it is whatever its node: a constant. (A subclass may keep more, never fewer: :meth:`folds`
        relies on no constant class ever being explored.)"""
        return self.eg.const(cid) is not None

    def _kept(self, node: ENode) -> bool:
        """A class copied through ``node`` would not equal its original: the node reads its children at other
        indexes of a loop some target varies in (the class is kept whole)."""
        return node[0] in LOOP_OPS and bool((self.forbidden >> node[1]) & 1)

    def _choose(self, cid: int, nodes: list[ENode]) -> ENode:
        """The node class ``cid`` is copied through: its oldest (a subclass may prefer another: any node of the
        class equals it, and a cycle not closed by a theta is refused by :meth:`_copy`)."""
        if len(nodes) == 1:  # most classes: no ids to compare
            return nodes[0]
        memo = self.eg._memo
        return min(nodes, key=lambda n: memo.get(n, 1 << 60))

    def _explore(self, tops: list[int]) -> None:
        eg = self.eg
        find = eg.find
        parent = eg._parent
        chosen, subst, whole, limit = self.chosen, self.subst, self.whole, self.limit
        leaf, choose, kept = self._leaf, self._choose, self._kept
        stack = [find(t) for t in tops]
        while stack:
            cid = stack.pop()
            if cid in chosen or cid in subst or leaf(cid):
                continue
            nodes = eg.nodes(cid)
            inside = whole is not None and eg.varies(cid, whole)
            if whole is not None and not inside:
                continue  # computed outside the loop: kept (the body's class limit is for the body)
            if not nodes or len(chosen) >= limit:
                if inside:
                    raise CopyTooLarge
                continue
            node = choose(cid, nodes)
            if kept(node):
                if inside:
                    raise CopyTooLarge
                continue
            chosen[cid] = node
            # (a representative is its own parent: no call for it, the commonest case)
            stack.extend([c if parent[c] == c else find(c) for c in node[2]])

    def _changed(self) -> set[int]:
        """The explored classes whose copy differs: those reaching a target through chosen nodes (and, with
        ``whole``, every class varying in that loop)."""
        eg = self.eg
        find = eg.find
        changed = {c for c in self.chosen if self.whole is not None and eg.varies(c, self.whole)}
        grew = True
        while grew:  # a least fixpoint over the chosen nodes (cycles through thetas included)
            grew = False
            for cid, (_op, _attr, ch) in self.chosen.items():
                if cid not in changed and any(find(k) in changed or find(k) in self.subst for k in ch):
                    changed.add(cid)
                    grew = True
        return changed

    def _explore_once(self, tops: list[int]) -> None:
        """:meth:`_explore` below the first ``tops`` asked about (later calls reuse that exploration)."""
        if not self._explored:
            self._explore(tops)
            self._explored = True

    def plan(self, tops: list[int]) -> set[int]:
        """Explore below ``tops`` and return the classes a copy would change (nothing is added yet)."""
        if not self._planned:
            self._explore_once(tops)
            self._changed_set = self._changed()
            self._planned = True
        return self._changed_set

    def folds(self, tops: list[int]) -> bool:
        """Whether the copy would give the other rules something to fold at once: a phi on a target, or a pure
        operator whose inputs all become constants (:class:`BranchFacts` copies nothing else: a copy that only
        renames would cost the e-graph and extraction for no gain)."""
        eg = self.eg
        find = eg.find
        if self.whole is None:
            # Without ``whole``, a changed class that folds has a target among its children: a phi on a target
            # does, and a pure operator whose inputs all become constants reads targets and constants only
            # (a class read that is neither is explored, so not a constant: :meth:`_leaf`), and it is changed
            # only through a changed child or a target. So the explored nodes with a target child that fold are
            # exactly those of the changed classes that fold, and most phis' arms (72% on guava: none folds) need
            # no least fixpoint (:meth:`_changed`, computed when a copy is made).
            self._explore_once(tops)
            subst, const = self.subst, eg.const
            for op, _attr, ch in self.chosen.values():
                if not ch:
                    continue
                kids = [find(k) for k in ch]
                if op == "phi" and kids[0] in subst:
                    return True
                if OPS[op].fn is not None and any(k in subst for k in kids) and all(
                        const(subst.get(k, k)) is not None for k in kids):
                    return True
            return False
        for cid in self.plan(tops):
            op, _attr, ch = self.chosen[cid]
            if op == "phi" and find(ch[0]) in self.subst:
                return True
            if OPS[op].fn is not None and ch and all(
                    eg.const(self.subst.get(find(k), find(k))) is not None for k in ch):
                return True
        return False

    def copy(self, tops: list[int]) -> list[int]:
        """The copies of ``tops`` (a top that reaches no target is returned as it is). Raises
        :class:`CopyTooLarge` before adding anything when the copy cannot be made (:meth:`_check_closed`)."""
        eg = self.eg
        changed = self.plan(tops)
        self._check_closed(changed, tops)
        for cid in sorted(changed):
            op, attr, ch = self.chosen[cid]
            if op == "theta":
                ph = eg.add_placeholder()
                eg._classes[ph].data[1] = eg.variance(cid)  # the analysis cannot see through the new cycle
                self.copies[cid] = ph
        for cid in sorted(changed):
            op, attr, ch = self.chosen[cid]
            if op == "theta":
                th = eg.add("theta", attr, (self._copy(ch[0]), self._copy(ch[1])))
                eg.union(self.copies[cid], th, Reason(self.rule, ("copy of",), (cid,)))
        return [self._copy(t) for t in tops]

    def _check_closed(self, changed: set[int], tops: list[int]) -> None:
        """Raise :class:`CopyTooLarge` when the copy of ``tops`` would meet a cycle of copied classes that no
        theta closes, before anything is added. :meth:`_copy` would find it half-way: the thetas' placeholders
        made, some without their theta, and copies already made reading them; such an empty class, merged by
        later rules into what the root reaches, left the extraction problem a child class without nodes (jsoup
        ``Elements.siblings``). A depth-first walk over what :meth:`_copy` visits, from the same starts (the
        copied thetas' children, then ``tops``): the thetas being copied, the classes copied before, the targets
        and the unchanged classes are its leaves, so it meets a cycle exactly when :meth:`_copy` would."""
        def inner(cid: int) -> int | None:
            """The class :meth:`_copy` would copy through its chosen node here, or None (a leaf)."""
            cid = self._source(cid)
            if cid in self.subst or cid in self.copies or cid not in changed or self.chosen[cid][0] == "theta":
                return None
            return cid
        thetas = [k for cid in sorted(changed) if self.chosen[cid][0] == "theta" for k in self.chosen[cid][2]]
        finished: dict[int, bool] = {}  # class -> whether its walk is done (False: on the current path)
        for start in (*thetas, *tops):
            top = inner(start)
            if top is None or top in finished:
                continue
            finished[top] = False
            walk = [(top, iter(self.chosen[top][2]))]
            while walk:
                cid, kids = walk[-1]
                k = next(kids, None)
                if k is None:
                    finished[cid] = True
                    walk.pop()
                    continue
                below = inner(k)
                if below is None:
                    continue
                state = finished.get(below)
                if state is False:
                    raise CopyTooLarge  # a cycle not closed by a theta
                if state is None:
                    finished[below] = False
                    walk.append((below, iter(self.chosen[below][2])))

    def _source(self, cid: int) -> int:
        """The class whose copy stands for ``cid`` (a subclass may copy a target's value in its place)."""
        return self.eg.find(cid)

    def _copy(self, cid: int) -> int:
        eg = self.eg
        cid = self._source(cid)
        if cid in self.subst:
            return self.subst[cid]
        got = self.copies.get(cid)
        if got is not None:
            return eg.find(got)
        if cid not in self._changed_set:
            return cid
        if cid in self._busy:
            raise CopyTooLarge  # a cycle not closed by a theta
        self._busy.add(cid)
        op, attr, ch = self.chosen[cid]
        out = eg.add(op, attr, [self._copy(c) for c in ch])
        eg.info.copied_from.setdefault(out, cid)
        self._busy.discard(cid)
        self.copies[cid] = out
        return out


def arm_facts(eg: EPeg, cond: int) -> tuple[dict[int, int], dict[int, int]]:
    """The substitutions that hold in the true and the false arm of a phi on ``cond``: ``cond`` itself, and
    ``x := k`` for ``eq.i(x, k)`` (true arm) or ``ne.i(x, k)`` (false arm) with ``k`` a constant."""
    find = eg.find
    cond = find(cond)
    yes, no = {cond: eg.add("const.b", True)}, {cond: eg.add("const.b", False)}
    for op, _attr, ch in eg.nodes(cond):
        if op not in ("eq.i", "ne.i"):
            continue
        x, k = find(ch[0]), find(ch[1])
        if eg.const(x) is not None:
            x, k = k, x
        if eg.const(k) is None or eg.const(x) is not None:
            continue
        (yes if op == "eq.i" else no).setdefault(x, k)
    return yes, no


class PerGraph:
    """A built-in copying rule's memory of what it did in one e-graph (one instance serves many e-graphs in
    turn, so the set starts empty for each new one)."""

    def __init__(self) -> None:
        self._graph: weakref.ref | None = None
        self._done: set[int] = set()

    def _seen(self, eg: EPeg) -> set[int]:
        if self._graph is None or self._graph() is not eg:
            self._graph = weakref.ref(eg)
            self._done = set()
        return self._done


class BranchFacts(PerGraph):
    """See the module docstring. ``mutant`` builds deliberately wrong variants for the tests that must catch
    them: ``"wrong-constant"`` substitutes ``k + 1`` for ``x``, ``"wrong-arm"`` applies the true arm's facts to
    the false arm."""

    name = "branch-facts"
    group = "peg.phi.facts"
    source = "builtin"
    depth = None
    cache_matches = False

    def __init__(self, max_classes: int = 32, max_rewrites: int = 32, mutant: str | None = None) -> None:
        self.max_classes = max_classes  # classes explored below one arm
        self.max_rewrites = max_rewrites  # phis rewritten per e-graph
        self.mutant = mutant
        super().__init__()  # the done set: phi node ids rewritten or made by a rewrite

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        done = self._seen(eg)
        if len(done) >= 2 * self.max_rewrites:
            return [], False
        memo = eg._memo
        out = []
        for cid in sorted(eg.classes_with_op("phi")):
            for node in eg.nodes(cid):
                if node[0] != "phi":
                    continue
                nid = memo.get(node)
                if nid is None or nid in done or eg.const(node[2][0]) is not None or not self._wanted(eg, node[2][0]):
                    continue
                out.append((cid, nid, node[2]))
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        cid, nid, (cond, yes_arm, no_arm) = match
        done = self._seen(eg)
        if nid in done or len(done) >= 2 * self.max_rewrites:
            return False
        done.add(nid)
        try:
            arms = self._arms(eg, cond, yes_arm, no_arm)
        except CopyTooLarge:
            return False  # the copies made so far are unused classes: harmless, and the extractor skips them
        if arms is None:
            return False
        new_yes, new_no = arms
        find = eg.find
        if find(new_yes) == find(yes_arm) and find(new_no) == find(no_arm):
            return False
        new = eg.add("phi", None, (cond, new_yes, new_no))
        new_id = eg._memo.get(("phi", None, (find(cond), find(new_yes), find(new_no))))
        if new_id is not None:
            done.add(new_id)
        return eg.union(cid, new, Reason(self.name, ("phi",), (cid,)))


    def _wanted(self, eg: EPeg, cond: int) -> bool:
        """Whether a phi on ``cond`` is a match (a subclass's narrower rule: :mod:`.boundfacts`)."""
        return True

    def _arms(self, eg: EPeg, cond: int, yes_arm: int, no_arm: int) -> tuple[int, int] | None:
        """The two arms copied with what ``cond`` establishes in each, or None when nothing would fold."""
        yes, no = arm_facts(eg, cond)
        if self.mutant == "wrong-constant":
            yes, no = _bumped(eg, yes), _bumped(eg, no)
        elif self.mutant == "wrong-arm":
            yes, no = no, yes
        copiers = [(Assume(eg, facts, self.max_classes), arm) for facts, arm in ((yes, yes_arm), (no, no_arm))]
        if not any(a.folds([arm]) for a, arm in copiers):
            return None
        new_yes, new_no = (a.copy([arm])[0] for a, arm in copiers)
        return new_yes, new_no


def _bumped(eg: EPeg, facts: dict[int, int]) -> dict[int, int]:
    """``facts`` with every int constant ``k`` replaced by ``k + 1``, wrapping (the wrong-constant mutant)."""
    out = {}
    for t, v in facts.items():
        key = eg.const(v)
        if key is not None and key[0] == "const.i":
            v = eg.add("const.i", key[1] + 1 if key[1] < 0x7FFFFFFF else -0x80000000)
        out[t] = v
    return out
