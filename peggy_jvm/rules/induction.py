"""Loop induction between two e-classes: a witness of equal unfoldings, checked to have a unique solution.

What this module owns
    :func:`prove_by_induction`: are classes ``a`` and ``b`` of a saturated e-graph equal by loop induction? The
    search pairs e-nodes of the same operator and attribute class by class, depth first, and records each pair
    of classes it matched (the *witness*). A pair of thetas met again while it is being matched is assumed equal
    (that is the coinduction); any other pair met again fails that alternative (a cycle must pass a theta), or,
    in a second search when the first fails, is assumed equal too (the final check judges the cycles). A
    pair matched is shared by every later use, and a pair that failed without meeting the stack fails for good,
    so the search stays polynomial in the number of class pairs in practice, however many alternatives the
    e-graph holds (the same pairs would otherwise be matched again for every alternative above them). A pairing
    whose children include the pair itself (other than as a theta's next value) is never tried. E-nodes
    that reach their own class within two steps (the heap class of ``s`` holding ``rho_sigma(getfield(s,
    this))``) are tried last: the second search keeps the first alternative that matches, and one closing a
    cycle through no theta would make the whole witness fail the final check.

Why a witness proves equality
    The witness is one system of PEG equations, one per pair, each the operator of its two matched e-nodes
    applied to its child pairs (or to classes equal outright). Both sides' classes solve it, since each e-node
    means what its class means. It has only one solution when :func:`well_founded` holds: in every strongly
    connected part some loop depth ``l`` is moved only by thetas' second children (the iteration index of ``l``
    minus one: induction on it), with no eval, pass, shift or peel of ``l`` in the part (they move the index of
    ``l`` arbitrarily), and what is left of the part once those theta edges are cut is well founded in turn
    (induction on the next loop, with the index of ``l`` fixed). Every other operator keeps the index of ``l``.
    A witness without such an order proves nothing and is dropped: a cycle through a theta's initial value, or
    through an eval of the loop it steps, can have many solutions.

When the loose search's witness cannot be ordered, the pairs other than thetas in its unordered cycles are
ruled out and the loose search runs again (``retries`` times): it kept the first alternative that matched, and
one matching only through such a cycle hides the next alternative, which may be the right one. Every witness
is judged by :func:`well_founded`, so ruling pairs out can lose proofs, never make one.

The budget counts work, not time: each pair of classes matched costs a step, and each pair of e-nodes tried
costs 1/:data:`ALTERNATIVES_PER_STEP` of one (only e-nodes of the same operator, attribute and arity are paired:
:meth:`_Search._by_shape`). Pairs alone did not bound it: a pair met again is answered from the
search's own record for free, and two classes of a saturated graph can hold hundreds of e-nodes of one operator
each, so one pair could try tens of thousands of node pairs that each fail at a recorded child (JAMA's
``Matrix.read``: 14 million node pairs for 20,000 steps, 23 s of CPU in one self-check).

Inputs: an :class:`~peggy_jvm.egraph.EGraph` (its op index current), two class ids, a budget of steps and a
deadline; optionally an :class:`InductionMemo` shared by the searches made on one state of the graph.
Outputs: the matched pairs (class ids and e-nodes) to union, or None. Every 64 steps the search is a
:func:`~peggy_jvm.budget.checkpoint` of the optimizer's safety net (the self-check's loop induction ran 175 s
on one method in session 10): it raises ``MethodTimeout`` there when the net has passed, and otherwise changes
nothing.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..budget import checkpoint
from ..egraph.clock import clock
from ..peg.ops import LOOP_OPS

if TYPE_CHECKING:
    from ..egraph.egraph import EGraph

__all__ = ["InductionMemo", "prove_by_induction", "well_founded"]


#: e-node pairs tried per step of the budget (module docstring): the successful searches of JAMA's and the fixtures'
#: optimization (every rewrite kept, so every self-check run) try at most 66 per step, the pair suite's at most 1
ALTERNATIVES_PER_STEP = 100

Key = tuple[int, int]
Pair = tuple[int, int, tuple, tuple, list]  # class x, class y, node of x, node of y, child keys (None: equal)


class InductionMemo:
    """What searches on one unchanged e-graph can share: the pairs the strict search found unequal whatever was
    on its stack (they fail for every root pair), and each class's e-nodes oldest first. The theta-bisimulation
    rule tries hundreds of theta pairs per saturation step in a method with many loops; most fail on the same
    pairs below them, and without the memo every attempt matched those again (80% of JAMA's largest proofs)."""

    __slots__ = ("version", "failed", "sorted", "grouped")

    def __init__(self, eg: EGraph) -> None:
        self.version = eg.version
        self.failed: set[Key] = set()
        self.sorted: dict[tuple[int, str], list] = {}
        self.grouped: dict[tuple[int, str], dict] = {}


class _Search:
    def __init__(self, eg: EGraph, budget: int, deadline: float, strict: bool,
                 memo: InductionMemo | None = None) -> None:
        self.eg = eg
        self.strict = strict  # a pair met again closes a cycle only at a theta (else every pair may)
        self.budget = budget
        self.tries = budget * ALTERNATIVES_PER_STEP  # e-node pairs left to try (module docstring)
        self.deadline = deadline
        self.pairs: dict[Key, Pair] = {}
        self.order: list[Key] = []  # keys in the order they entered, for rollback
        # a strict failure holds in every context (recorded only when no pair on the stack was met): shareable
        self.failed: set[Key] = memo.failed if memo is not None and strict else set()
        self.sorted: dict[tuple[int, str], list] = memo.sorted if memo is not None else {}  # see _entries
        self.grouped: dict[tuple[int, str], dict] = memo.grouped if memo is not None else {}  # see _by_shape
        self.busy: set[Key] = set()  # non-theta pairs being matched
        self.circular = 0  # times a pair on the stack was met again (a failure after that depends on the stack)

    def eq(self, x: int, y: int) -> bool:
        eg = self.eg
        x, y = eg.find(x), eg.find(y)
        if x == y:
            return True
        key = (x, y) if x < y else (y, x)
        if key in self.pairs:  # matched, or a theta pair being matched (assumed: the order is checked at the end)
            return True
        if key in self.busy:
            self.circular += 1
            return False  # a cycle that does not close at a theta proves nothing: try another node
        if key in self.failed:
            return False
        self.budget -= 1
        if self.budget < 0:
            return False
        if (self.budget & 63) == 0:
            checkpoint()  # the optimizer's safety net (budget.cooperative): stops the self-check, decides nothing
            if clock() > self.deadline:
                self.budget = -1
                return False
        cx, cy = eg._class_ops.get(x), eg._class_ops.get(y)
        if cx is None or cy is None:
            self.failed.add(key)
            return False
        circular = self.circular
        self.busy.add(key)
        try:
            for op, n, m in self._alternatives(x, y, cx, cy):
                mark = len(self.order)
                entry: Pair = (x, y, n, m, [])
                if op == "theta" or not self.strict:
                    self.pairs[key] = entry
                    self.order.append(key)
                if all(self.eq(p, q) for p, q in zip(n[2], m[2])):
                    for p, q in zip(n[2], m[2]):
                        p, q = eg.find(p), eg.find(q)
                        entry[4].append(None if p == q else ((p, q) if p < q else (q, p)))
                    if key not in self.pairs:
                        self.pairs[key] = entry
                        self.order.append(key)
                    return True
                while len(self.order) > mark:  # pairs matched under this attempt go with it
                    self.pairs.pop(self.order.pop(), None)
                if self.budget < 0:
                    return False
            if self.tries < 0:  # out of work (the alternatives were cut short): no verdict, not recorded as failed
                self.budget = -1
                return False
        finally:
            self.busy.discard(key)
        if self.circular == circular:  # failed whatever is on the stack: it fails in every context
            self.failed.add(key)
        return False

    def _alternatives(self, x: int, y: int, cx: dict, cy: dict):
        """The (operator, e-node of x, e-node of y) pairs to try for the pair (x, y), same operator and attribute:
        e-nodes that reach their own class within two steps last. Such a node (``phi(c, true, false)`` in the
        class of ``c``, ``rho_sigma(getfield(s, o))`` in the class of ``s`` once the read is known not to throw)
        closes a cycle through no theta unless a theta lies on it, and a witness with such a cycle is not well
        founded; when every pair may close a cycle (the second search) the first alternative that matches is
        kept, so it should not be one of these while another alternative exists. Only the order changes: the
        witness is judged by :func:`well_founded` all the same."""
        late: list[tuple[str, tuple, tuple]] = []
        for op, xs in cx.items():
            ys = cy.get(op)
            if ys is None:
                continue
            shapes = self._by_shape(y, op, ys)
            for n, own_n, late_n in self._entries(x, op, xs):
                for m, own_m, late_m in shapes.get((n[1], len(n[2])), ()):
                    self.tries -= 1
                    if self.tries < 0:
                        return
                    if own_n and own_m and own_n & own_m:
                        continue  # (x, y) = op(.., (x, y), ..) not as a theta's next value: never well founded
                    if late_n or late_m:
                        late.append((op, n, m))
                    else:
                        yield op, n, m
        yield from late

    def _entries(self, cid: int, op: str, nodes: list) -> list[tuple[tuple, frozenset, bool]]:
        """The e-nodes of ``op`` in class ``cid``, each with the positions of its children that are ``cid``
        itself (a theta's next value left out) and whether it reaches ``cid`` within two steps (never said of a
        theta); in the order they were added: the imported PEGs' own nodes first. Their structure is well
        founded (a built PEG is); nodes that rewrites added later can close cycles through an eval or an initial
        value, which would make the witness useless. Computed once per class and operator (the e-graph does not
        change during a search, and a :class:`InductionMemo` shares them between searches).

        Pairing ``n`` with ``m`` makes the pair ``(x, y)`` its own child exactly when some position is in both
        nodes' sets: that pair's equation would refer to itself at the same loop index (``eval_l(x, i)`` in the
        class of an invariant ``x``), which no witness can order (:func:`well_founded`)."""
        key = (cid, op)
        done = self.sorted.get(key)
        if done is None:
            memo, find = self.eg._memo, self.eg.find
            if len(nodes) > 1:
                nodes = sorted(nodes, key=lambda n: memo.get((n[0], n[1], tuple(find(c) for c in n[2])), 1 << 60))
            done = []
            for n in nodes:
                kids = n[2][:1] if op == "theta" else n[2]
                own = frozenset(i for i, c in enumerate(kids) if find(c) == cid)
                done.append((n, own, op != "theta" and self._reaches(n, cid)))
            self.sorted[key] = done
        return done

    def _by_shape(self, cid: int, op: str, nodes: list) -> dict[tuple, list[tuple[tuple, frozenset, bool]]]:
        """:meth:`_entries` grouped by attribute and arity, each group in the same order: only e-nodes of the
        same shape can pair, and a class of a saturated graph can hold hundreds of one operator (looking at every
        pair of two such classes cost JAMA's and the fixtures' proofs most of their time)."""
        key = (cid, op)
        done = self.grouped.get(key)
        if done is None:
            done = {}
            for entry in self._entries(cid, op, nodes):
                node = entry[0]
                done.setdefault((node[1], len(node[2])), []).append(entry)
            self.grouped[key] = done
        return done

    def _reaches(self, node: tuple, cid: int) -> bool:
        """``node`` has ``cid`` as a child, or as a child of some e-node of a child's class."""
        eg = self.eg
        find = eg.find
        for c in node[2]:
            c = find(c)
            if c == cid:
                return True
            for grand in eg._class_ops.get(c, {}).values():
                if any(find(g) == cid for k in grand for g in k[2]):
                    return True
        return False


def well_founded(pairs: dict[Key, Pair], keep: set[Key] | None = None,
                 cut: frozenset[tuple[Key, int]] = frozenset()) -> bool:
    """The witness restricted to ``keep``, without the edges in ``cut``, can be ordered (module docstring)."""
    return next(_unordered_parts(pairs, keep, cut), None) is None


def _unordered_parts(pairs: dict[Key, Pair], keep: set[Key] | None = None,
                     cut: frozenset[tuple[Key, int]] = frozenset()):
    """The strongly connected parts of the witness (restricted to ``keep``, without the edges in ``cut``) that
    no loop order explains."""
    keep = set(pairs) if keep is None else keep

    def succ(k: Key) -> list[Key]:
        return [c for i, c in enumerate(pairs[k][4]) if c is not None and c in keep and (k, i) not in cut]

    for part in _strong_parts(keep, succ):
        if len(part) == 1 and part[0] not in succ(part[0]):
            continue  # no cycle
        members = set(part)
        loops = {pairs[k][2][1] for k in part if pairs[k][2][0] == "theta"}
        moved = {pairs[k][2][1] for k in part if pairs[k][2][0] in LOOP_OPS and pairs[k][2][0] != "theta"}
        for loop in sorted(loops - moved):
            steps = frozenset((k, 1) for k in part if pairs[k][2][0] == "theta" and pairs[k][2][1] == loop)
            if steps <= cut:
                continue  # cut already: the cycles left do not step this loop
            if well_founded(pairs, members, cut | steps):
                break
        else:
            yield part


def _strong_parts(keep: set[Key], succ) -> list[list[Key]]:
    """Tarjan's strongly connected components, iteratively."""
    index: dict[Key, int] = {}
    low: dict[Key, int] = {}
    stack: list[Key] = []
    on: set[Key] = set()
    parts: list[list[Key]] = []
    for root in keep:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        work = [(root, iter(succ(root)))]
        while work:
            k, it = work[-1]
            child = next(it, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(succ(child))))
                elif child in on:
                    low[k] = min(low[k], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[k])
            if low[k] == index[k]:
                part = []
                while True:
                    c = stack.pop()
                    on.discard(c)
                    part.append(c)
                    if c == k:
                        break
                parts.append(part)
    return parts


def prove_by_induction(eg: EGraph, a: int, b: int, budget: int = 20_000, deadline: float = float("inf"),
                       memo: InductionMemo | None = None,
                       retries: int = 0) -> list[tuple[int, int, tuple, tuple]] | None:
    """The matched pairs of a well-founded witness that ``a`` equals ``b``, or None (module docstring). ``memo``
    shares work between calls on the same e-graph; it must have been made for the graph as it is now.
    ``retries``: loose searches again after ruling out the pairs of the cycles no order explains (below)."""
    eg.op_index()
    if memo is not None and memo.version != eg.version:
        raise ValueError("induction memo made for another state of the e-graph")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))  # one frame per pair along a sigma chain
    try:
        # strict first: cycles close at thetas only, so a heap read that leaves the heap as it was (a class
        # holding rho_sigma(getfield(itself, o))) is not taken for a loop; then every pair may close one, which
        # finds witnesses whose first loop is met below a non-theta pair; each witness is checked the same way
        search = _Search(eg, budget, deadline, True, memo)
        if search.eq(a, b) and well_founded(search.pairs):
            return [(x, y, n, m) for x, y, n, m, _ in search.pairs.values()]
        # the loose search keeps the first alternative that matches, and one may match only through a cycle the
        # final check rejects (a heap after a row read paired with the loop's heap, both reaching themselves
        # through a field read that cannot throw) while the next alternative was the right one: the pairs of
        # such a cycle are ruled out and the search runs again (JAMA's SingularValueDecomposition.<init>)
        ruled_out: set[Key] = set()
        for _ in range(1 + retries):
            search = _Search(eg, budget, deadline, False, memo)
            search.failed |= ruled_out
            if not search.eq(a, b):
                return None
            if well_founded(search.pairs):
                return [(x, y, n, m) for x, y, n, m, _ in search.pairs.values()]
            bad = {k for part in _unordered_parts(search.pairs) for k in part
                   if search.pairs[k][2][0] != "theta"} - ruled_out
            if not bad:
                return None
            ruled_out |= bad
    except RecursionError:  # a chain of pairs deeper than the limit (a method of thousands of effects): no proof
        return None
    finally:
        sys.setrecursionlimit(limit)
    return None
