"""Control-flow-graph analyses: reachability, dominators, post-dominators, natural loops, reducibility.

Owns: the graph algorithms every later stage needs on a method's control flow, written once and generic over the
node type, so they neither know nor care what a basic block is.

Inputs: a :class:`networkx.DiGraph` (a ``MultiDiGraph`` is accepted too) whose nodes are any hashable values,
plus an ``entry`` node. An edge may carry the attribute ``kind``: ``"normal"`` (the default when absent) or
``"exception"`` (control reaches a handler); any other value raises :class:`ValueError`. Every analysis takes
``include_exceptional`` (default ``True``); with ``False`` the exceptional edges are ignored, as if absent. A
``DiGraph`` holds one edge per ordered pair: when a block both falls (or jumps) into and may throw to the same
block, record the edge as ``"normal"`` (in a ``MultiDiGraph`` a pair is kept when any of its edges is kept).

Outputs: plain values keyed by the graph's own nodes: node sets and lists, ``dict`` immediate dominators,
:class:`DominatorTree` (O(1) dominance queries), :class:`LoopForest` of :class:`Loop`\\ s, reducibility with a
witness edge, and Graphviz DOT text. The input graph is never modified.

Invariants:

* Only nodes reachable from ``entry`` (along the edges considered) take part; unreachable nodes are absent from
  every result (``to_dot`` draws them greyed out).
* Everything is deterministic given the graph's insertion order of nodes and successors: the depth-first search
  from ``entry`` visits successors in insertion order, and all orders below derive from its reverse postorder
  (RPO).
* Running time is linear or near-linear in nodes + edges (Cooper-Harvey-Kennedy dominators over RPO numbers,
  Tarjan-style loop nesting with union-find, one DFS for reducibility); the only super-linear cost is the size of
  the outputs themselves (each loop's ``body`` is a frozenset, so nested loops cost the sum of their sizes).
  Every algorithm is iterative: deep graphs never hit Python's recursion limit.
* Dominance is reflexive: every node dominates itself; ``dominators()[entry] == entry``.
* Post-dominators are computed towards :data:`VIRTUAL_EXIT`, a sentinel that no graph contains. The exits are the
  sink strongly-connected components of the reachable graph: a node without successors is one (a return or an
  uncaught throw), and so is a loop that nothing leaves (an infinite loop). From each sink component, the one
  node that comes first in RPO (for a loop entered at one place: its header) gets an edge to the virtual exit.
  So every reachable node has an immediate post-dominator, and a node of an infinite loop is post-dominated by
  the nodes every path from it to the loop's header passes through.
* Natural loops: a back edge is an edge ``u -> v`` where ``v`` dominates ``u``; the loop of a header ``h`` is
  ``h`` plus every node that reaches a source (latch) of a back edge into ``h`` without passing through ``h``;
  the back edges of one header make ONE loop. Two loops are either disjoint or nested, in any graph. On an
  irreducible graph, cycles that are not natural loops are not reported as loops: check :func:`is_reducible`
  first when that matters.
"""
from __future__ import annotations

import enum
from collections.abc import Callable, Hashable, Iterator, Mapping, MutableMapping
from typing import Generic, TypeVar
from dataclasses import dataclass, field

import networkx as nx

__all__ = [
    "CFGInfo",
    "DominatorTree",
    "EXCEPTION",
    "Loop",
    "LoopForest",
    "NORMAL",
    "VIRTUAL_EXIT",
    "analyze",
    "back_edges",
    "dominates",
    "dominator_tree",
    "dominators",
    "irreducible_witness",
    "is_reducible",
    "natural_loops",
    "post_dominator_tree",
    "post_dominators",
    "reachable",
    "remove_unreachable",
    "reverse_postorder",
    "successors",
    "to_dot",
]

N = TypeVar("N", bound=Hashable)
"""A graph's node type: the analyses are generic over it and return the caller's own nodes."""

NORMAL = "normal"
EXCEPTION = "exception"


class _Sentinel(enum.Enum):
    VIRTUAL_EXIT = "virtual-exit"

    def __repr__(self) -> str:
        return "<virtual exit>"


VIRTUAL_EXIT = _Sentinel.VIRTUAL_EXIT
"""The root of the post-dominator tree; never a node of an input graph. (An enum member: it pickles to itself.)"""


# ---------------------------------------------------------------------------------------------------------------
# tuple[N, N] selection and the RPO index every analysis starts from


def _successor_function(g: nx.DiGraph, include_exceptional: bool) -> Callable[[N], list[N]]:
    # The plain adjacency dict of networkx graphs (g.adj wraps it in views that cost ~3x per lookup).
    adj = getattr(g, "_adj", None)
    if not isinstance(adj, dict):
        adj = g.adj
    if g.is_multigraph():

        def succ_multi(u: N) -> list[N]:
            out = []
            for v, keyed in adj[u].items():
                keep = False
                for data in keyed.values():
                    kind = data.get("kind", NORMAL)
                    if kind == NORMAL or (kind == EXCEPTION and include_exceptional):
                        keep = True
                    elif kind != EXCEPTION:
                        raise ValueError(f"edge {u!r} -> {v!r}: unknown kind {kind!r}")
                if keep:
                    out.append(v)
            return out

        return succ_multi

    def succ(u: N) -> list[N]:
        out = []
        for v, data in adj[u].items():
            kind = data.get("kind", NORMAL)
            if kind == NORMAL or (kind == EXCEPTION and include_exceptional):
                out.append(v)
            elif kind != EXCEPTION:
                raise ValueError(f"edge {u!r} -> {v!r}: unknown kind {kind!r}")
        return out

    return succ


def successors(g: nx.DiGraph, node: N, include_exceptional: bool = True) -> list[N]:
    """The successors of ``node`` along the edges considered, in insertion order."""
    return _successor_function(g, include_exceptional)(node)


@dataclass(slots=True)
class _Index(Generic[N]):
    """Reachable nodes numbered 0..n-1 in RPO (entry = 0), with successor and predecessor lists of numbers."""

    nodes: list[N]
    index: dict[N, int]
    succ: list[list[int]]
    pred: list[list[int]]


def _build_index(g: nx.DiGraph, entry: N, include_exceptional: bool) -> _Index[N]:
    if entry not in g:
        raise ValueError(f"entry {entry!r} is not a node of the graph")
    succ_of = _successor_function(g, include_exceptional)
    node_succs: dict[N, list[N]] = {}
    first = node_succs[entry] = succ_of(entry)
    stack: list[tuple[N, Iterator[N]]] = [(entry, iter(first))]
    post: list[N] = []
    while stack:
        u, it = stack[-1]
        for v in it:
            if v not in node_succs:
                s = node_succs[v] = succ_of(v)
                stack.append((v, iter(s)))
                break
        else:
            stack.pop()
            post.append(u)
    post.reverse()
    index = {n: i for i, n in enumerate(post)}
    succ = [[index[v] for v in node_succs[n]] for n in post]
    pred: list[list[int]] = [[] for _ in post]
    for i, outs in enumerate(succ):
        for j in outs:
            pred[j].append(i)
    return _Index(post, index, succ, pred)


def _rpo_ints(root: int, succ: list[list[int]]) -> list[int]:
    seen = [False] * len(succ)
    seen[root] = True
    stack: list[tuple[int, Iterator[int]]] = [(root, iter(succ[root]))]
    post: list[int] = []
    while stack:
        u, it = stack[-1]
        for v in it:
            if not seen[v]:
                seen[v] = True
                stack.append((v, iter(succ[v])))
                break
        else:
            stack.pop()
            post.append(u)
    post.reverse()
    return post


def reachable(g: nx.DiGraph, entry: N, include_exceptional: bool = True) -> set[N]:
    """The nodes reachable from ``entry`` (``entry`` included)."""
    return set(_build_index(g, entry, include_exceptional).nodes)


def remove_unreachable(g: nx.DiGraph, entry: N, include_exceptional: bool = True) -> nx.DiGraph:
    """A copy of ``g`` (same class, node, edge and graph attributes) without the nodes unreachable from ``entry``.

    Edges between kept nodes are all kept, exceptional ones too, whatever ``include_exceptional`` says.
    """
    return g.subgraph(_build_index(g, entry, include_exceptional).nodes).copy()


def reverse_postorder(g: nx.DiGraph, entry: N, include_exceptional: bool = True) -> list[N]:
    """The reverse postorder of the depth-first search from ``entry`` visiting successors in insertion order."""
    return list(_build_index(g, entry, include_exceptional).nodes)


# ---------------------------------------------------------------------------------------------------------------
# Dominators


def _chk(order: list[int], pred: list[list[int]], size: int) -> list[int]:
    """Cooper-Harvey-Kennedy: ``order`` is an RPO from ``order[0]``; returns idom per number (-1: unreachable)."""
    rank = [-1] * size
    for r, v in enumerate(order):
        rank[v] = r
    root = order[0]
    idom = [-1] * size
    idom[root] = root
    rest = order[1:]
    changed = True
    while changed:
        changed = False
        for b in rest:
            new = -1
            for p in pred[b]:
                if idom[p] == -1:
                    continue
                if new == -1:
                    new = p
                    continue
                f1, f2 = p, new
                while f1 != f2:
                    while rank[f1] > rank[f2]:
                        f1 = idom[f1]
                    while rank[f2] > rank[f1]:
                        f2 = idom[f2]
                new = f1
            if idom[b] != new:
                idom[b] = new
                changed = True
    return idom


@dataclass(slots=True)
class _TreeInts:
    """A dominator tree over numbers: parent, children (increasing), DFS pre/post numbers, depth."""

    idom: list[int]
    children: list[list[int]]
    pre: list[int]
    post: list[int]
    depth: list[int]

    def dominates(self, a: int, b: int) -> bool:
        return self.pre[a] <= self.pre[b] and self.post[b] <= self.post[a]


def _tree_ints(root: int, order: list[int], idom: list[int]) -> _TreeInts:
    size = len(idom)
    children: list[list[int]] = [[] for _ in range(size)]
    depth = [0] * size
    for v in order[1:]:  # a parent comes before its children in RPO
        children[idom[v]].append(v)
        depth[v] = depth[idom[v]] + 1
    for c in children:
        c.sort()
    pre = [-1] * size
    post = [-1] * size
    _number_subtrees([root], children, pre, post)
    return _TreeInts(idom, children, pre, post, depth)


def _number_subtrees(roots: list[int], children: Mapping[int, list[int]] | list[list[int]],
                     pre: MutableMapping[int, int] | list[int], post: MutableMapping[int, int] | list[int]) -> None:
    """Number a forest's nodes in one depth-first walk (``roots`` in order, each node's ``children`` in order):
    ``pre[v]`` when the walk enters ``v``, ``post[v]`` when it leaves, from one counter. ``w`` lies in ``v``'s
    subtree exactly when ``pre[v] <= pre[w] < post[v]``: an O(1) ancestor test. Iterative, for deep trees."""
    counter = 0
    for r in roots:
        pre[r] = counter
        counter += 1
        stack: list[tuple[int, Iterator[int]]] = [(r, iter(children[r]))]
        while stack:
            u, it = stack[-1]
            for v in it:
                pre[v] = counter
                counter += 1
                stack.append((v, iter(children[v])))
                break
            else:
                stack.pop()
                post[u] = counter
                counter += 1


@dataclass(frozen=True, slots=True)
class DominatorTree(Generic[N]):
    """The dominator tree of the nodes reachable from ``root`` (or, for post-dominators, reaching the exit).

    ``idom`` maps every node to its immediate dominator (``root`` to itself); ``children`` lists each node's
    children in RPO (every node has an entry); ``pre``/``post`` are the entry and exit times of a DFS of the tree,
    so ``a`` dominates ``b`` iff ``pre[a] <= pre[b] and post[b] <= post[a]`` (O(1)); ``depth[root] == 0``.
    """

    root: N
    idom: dict[N, N]
    children: dict[N, tuple[N, ...]]
    pre: dict[N, int]
    post: dict[N, int]
    depth: dict[N, int]

    def __contains__(self, node: object) -> bool:
        return node in self.idom

    def dominates(self, a: N, b: N) -> bool:
        """``a`` dominates ``b`` (reflexive). False when either is not in the tree (unreachable)."""
        pre = self.pre
        if a not in pre or b not in pre:
            return False
        return pre[a] <= pre[b] and self.post[b] <= self.post[a]

    def strictly_dominates(self, a: N, b: N) -> bool:
        return a != b and self.dominates(a, b)

    def dominators_of(self, node: N) -> list[N]:
        """``node``, its immediate dominator, ..., up to ``root``."""
        out = [node]
        idom = self.idom
        while node != self.root:
            node = idom[node]
            out.append(node)
        return out


def _public_tree(nodes: list[N], root: int, t: _TreeInts, members: list[int]) -> DominatorTree[N]:
    return DominatorTree(
        root=nodes[root],
        idom={nodes[v]: nodes[t.idom[v]] for v in members},
        children={nodes[v]: tuple(nodes[c] for c in t.children[v]) for v in members},
        pre={nodes[v]: t.pre[v] for v in members},
        post={nodes[v]: t.post[v] for v in members},
        depth={nodes[v]: t.depth[v] for v in members},
    )


def _dom_ints(idx: _Index[N]) -> _TreeInts:
    order = list(range(len(idx.nodes)))
    return _tree_ints(0, order, _chk(order, idx.pred, len(order)))


def dominator_tree(g: nx.DiGraph, entry: N, include_exceptional: bool = True) -> DominatorTree[N]:
    """The dominator tree rooted at ``entry``."""
    idx = _build_index(g, entry, include_exceptional)
    return _public_tree(idx.nodes, 0, _dom_ints(idx), list(range(len(idx.nodes))))


def dominators(g: nx.DiGraph, entry: N, include_exceptional: bool = True) -> dict[N, N]:
    """Immediate dominators of the reachable nodes; ``entry`` maps to itself."""
    idx = _build_index(g, entry, include_exceptional)
    nodes = idx.nodes
    idom = _chk(list(range(len(nodes))), idx.pred, len(nodes))
    return {nodes[v]: nodes[d] for v, d in enumerate(idom)}


def dominates(idom: DominatorTree[N] | Mapping[N, N], a: N, b: N) -> bool:
    """``a`` dominates ``b`` (reflexive).

    With a :class:`DominatorTree` this is O(1). With a plain immediate-dominator mapping it walks from ``b`` up to
    the root, O(depth); the root may map to itself (as :func:`dominators` returns) or be absent (as networkx's
    ``immediate_dominators`` returns). Either way, a node outside the dominator tree (unreachable) dominates
    nothing and is dominated by nothing, not even by itself.
    """
    if isinstance(idom, DominatorTree):
        return idom.dominates(a, b)
    if b not in idom:  # unreachable, or the root of a networkx-style mapping
        return a == b and _is_root_of(idom, b)
    while True:
        if b == a:
            return True
        up = idom.get(b, b)
        if up == b:
            return False
        b = up


def _is_root_of(idom: Mapping[N, N], node: N) -> bool:
    return any(v == node for v in idom.values())


# ---------------------------------------------------------------------------------------------------------------
# Post-dominators


def _post_dom(idx: _Index[N]) -> tuple[list[N | _Sentinel], int, _TreeInts]:
    """Post-dominator tree over numbers 0..n-1 (the reachable nodes) plus n (the virtual exit)."""
    n = len(idx.nodes)
    succ = idx.succ
    comp = _scc_ids(succ)
    # A component is a sink when no edge leaves it; its representative is its first node in RPO.
    leaves = [False] * (max(comp) + 1 if comp else 0)
    for u in range(n):
        cu = comp[u]
        for v in succ[u]:
            if comp[v] != cu:
                leaves[cu] = True
                break
    reps: list[int] = []
    taken = [False] * len(leaves)
    for u in range(n):  # increasing RPO: the first member of each component is met first
        c = comp[u]
        if not leaves[c] and not taken[c]:
            taken[c] = True
            reps.append(u)
    exit_ = n
    # The reverse graph: its successors are the original predecessors, its predecessors the original successors.
    rsucc = [list(p) for p in idx.pred]
    rsucc.append(reps)
    rpred = [list(s) for s in succ]
    rpred.append([])
    for r in reps:
        rpred[r].append(exit_)
    order = _rpo_ints(exit_, rsucc)
    idom = _chk(order, rpred, n + 1)
    nodes: list[N | _Sentinel] = [*idx.nodes, VIRTUAL_EXIT]
    return nodes, exit_, _tree_ints(exit_, order, idom)


def _scc_ids(succ: list[list[int]]) -> list[int]:
    """Tarjan's strongly-connected components, iteratively; returns a component number per node."""
    n = len(succ)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    comp = [-1] * n
    stack: list[int] = []
    counter = 0
    ncomp = 0
    for start in range(n):
        if index[start] != -1:
            continue
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack[start] = True
        work: list[tuple[int, Iterator[int]]] = [(start, iter(succ[start]))]
        while work:
            u, it = work[-1]
            descended = False
            for v in it:
                if index[v] == -1:
                    index[v] = low[v] = counter
                    counter += 1
                    stack.append(v)
                    on_stack[v] = True
                    work.append((v, iter(succ[v])))
                    descended = True
                    break
                if on_stack[v] and index[v] < low[u]:
                    low[u] = index[v]
            if descended:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                if low[u] < low[parent]:
                    low[parent] = low[u]
            if low[u] == index[u]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp[w] = ncomp
                    if w == u:
                        break
                ncomp += 1
    return comp


def post_dominator_tree(g: nx.DiGraph, entry: N, include_exceptional: bool = True) -> DominatorTree[N | _Sentinel]:
    """The post-dominator tree of the reachable nodes, rooted at :data:`VIRTUAL_EXIT` (see the module docstring
    for how exits, including infinite loops, are connected to it)."""
    idx = _build_index(g, entry, include_exceptional)
    nodes, exit_, t = _post_dom(idx)
    return _public_tree(nodes, exit_, t, list(range(len(nodes))))


def post_dominators(g: nx.DiGraph, entry: N, include_exceptional: bool = True
                    ) -> dict[N | _Sentinel, N | _Sentinel]:
    """Immediate post-dominators of the reachable nodes; a node whose only post-dominator is the virtual exit
    maps to :data:`VIRTUAL_EXIT`, and ``VIRTUAL_EXIT`` maps to itself."""
    idx = _build_index(g, entry, include_exceptional)
    nodes, _, t = _post_dom(idx)
    return {nodes[v]: nodes[d] for v, d in enumerate(t.idom)}


# ---------------------------------------------------------------------------------------------------------------
# Back edges, natural loops, reducibility


def _tree_for(idx: _Index[N], domtree: DominatorTree[N] | None) -> _TreeInts:
    if domtree is None:
        return _dom_ints(idx)
    nodes = idx.nodes
    try:
        pre = [domtree.pre[v] for v in nodes]
        post = [domtree.post[v] for v in nodes]
    except KeyError as e:
        raise ValueError(f"the dominator tree does not cover node {e.args[0]!r} of this graph") from None
    n = len(nodes)
    index = idx.index
    idom = [index[domtree.idom[v]] for v in nodes]
    return _TreeInts(idom, [[] for _ in range(n)], pre, post, [domtree.depth[v] for v in nodes])


def _back_edges_ints(idx: _Index[N], t: _TreeInts) -> list[tuple[int, int]]:
    pre, post = t.pre, t.post
    out = []
    for u, s in enumerate(idx.succ):
        for v in s:
            # v dominates u implies v <= u in RPO; test the cheap condition first.
            if v <= u and pre[v] <= pre[u] and post[u] <= post[v]:
                out.append((u, v))
    return out


def back_edges(
    g: nx.DiGraph, entry: N, domtree: DominatorTree[N] | None = None, include_exceptional: bool = True
) -> list[tuple[N, N]]:
    """The reachable edges ``(u, v)`` where ``v`` dominates ``u`` (self-loops included), ordered by the RPO of
    ``u`` and then by successor order. ``domtree``, when given, must be the dominator tree of the same graph, entry
    and ``include_exceptional``."""
    idx = _build_index(g, entry, include_exceptional)
    nodes = idx.nodes
    return [(nodes[u], nodes[v]) for u, v in _back_edges_ints(idx, _tree_for(idx, domtree))]


@dataclass(eq=False)
class Loop(Generic[N]):
    """One natural loop (all back edges into one header merged).

    ``body`` includes ``header``; ``latches`` are the sources of the back edges into ``header`` in RPO; ``exits``
    are the edges from a body node to a node outside the body, ordered by the RPO of the source and then by
    successor order; ``depth`` is 1 for an outermost loop; ``parent`` is the innermost loop strictly containing
    this one; ``children`` are the loops directly nested in this one, by header RPO.
    """

    header: N
    body: frozenset[N]
    latches: tuple[N, ...]
    exits: tuple[tuple[N, N], ...]
    depth: int
    parent: Loop[N] | None = field(default=None, repr=False)
    children: tuple[Loop, ...] = field(default=(), repr=False)

    def __contains__(self, node: object) -> bool:
        return node in self.body

    @property
    def exit_targets(self) -> tuple[N, ...]:
        """The distinct targets of ``exits``, in first-seen order."""
        return tuple(dict.fromkeys(v for _, v in self.exits))

    def ancestors(self) -> list[Loop]:
        """This loop, its parent, ..., up to the outermost loop containing it."""
        out: list[Loop] = []
        cur: Loop[N] | None = self
        while cur is not None:
            out.append(cur)
            cur = cur.parent
        return out


@dataclass(frozen=True, eq=False)
class LoopForest(Generic[N]):
    """All natural loops of a graph.

    ``loops`` are ordered by the RPO position of their headers, which puts every loop after all loops enclosing it
    (an enclosing loop's header dominates the inner header, so it comes first in RPO); ``roots`` are the outermost
    loops in the same order; ``back_edges`` as :func:`back_edges` returns them.
    """

    loops: tuple[Loop, ...]
    roots: tuple[Loop, ...]
    back_edges: tuple[tuple[N, N], ...]
    _innermost: Mapping[N, Loop[N]] = field(repr=False)
    _by_header: Mapping[N, Loop[N]] = field(repr=False)

    def __iter__(self) -> Iterator[Loop]:
        return iter(self.loops)

    def __len__(self) -> int:
        return len(self.loops)

    def loop_of(self, node: N) -> Loop[N] | None:
        """The innermost loop whose body contains ``node``, or None."""
        return self._innermost.get(node)

    def loop_with_header(self, header: N) -> Loop[N] | None:
        return self._by_header.get(header)

    def is_header(self, node: N) -> bool:
        return node in self._by_header

    def depth_of(self, node: N) -> int:
        """The number of loops containing ``node`` (0 outside every loop)."""
        loop = self._innermost.get(node)
        return 0 if loop is None else loop.depth


def _loops_ints(idx: _Index[N], t: _TreeInts) -> LoopForest[N]:
    nodes = idx.nodes
    n = len(nodes)
    pred = idx.pred
    bedges = _back_edges_ints(idx, t)
    latches: dict[int, list[int]] = {}
    for u, v in bedges:
        latches.setdefault(v, []).append(u)
    headers = sorted(latches)
    # Tarjan-style nesting, innermost loops first (a nested header comes later in RPO than its enclosing header):
    # each loop's body is collapsed into its header with union-find, so an enclosing loop's backward walk steps
    # over a whole inner loop at once. Preds of a body node other than the header all lie in the body.
    uf = list(range(n))

    def find(x: int) -> int:
        while uf[x] != x:
            uf[x] = uf[uf[x]]
            x = uf[x]
        return x

    is_header = [False] * n
    for h in headers:
        is_header[h] = True
    innermost = [-1] * n
    stamp = [-1] * n
    members: dict[int, list[int]] = {}
    inner: dict[int, list[int]] = {}
    parent: dict[int, int] = {}
    for h in reversed(headers):
        innermost[h] = h
        own: list[int] = []
        nested: list[int] = []
        work = []
        stamp[h] = h
        for u in latches[h]:
            r = find(u)
            if stamp[r] != h:
                stamp[r] = h
                work.append(r)
        while work:
            y = work.pop()
            if is_header[y]:
                nested.append(y)
                parent[y] = h
            else:
                own.append(y)
                innermost[y] = h
            for p in pred[y]:
                r = find(p)
                if stamp[r] != h:
                    stamp[r] = h
                    work.append(r)
        for y in own:
            uf[y] = h
        for y in nested:
            uf[y] = h
        members[h] = own
        nested.sort()
        inner[h] = nested

    # Build the public loops bottom-up (bodies are unions of the children's bodies).
    body: dict[int, frozenset[N]] = {}
    for h in reversed(headers):
        parts = [nodes[h]]
        parts.extend(nodes[y] for y in members[h])
        fs = frozenset(parts)
        for c in inner[h]:
            fs = fs | body[c]
        body[h] = fs
    # Loop-tree intervals for O(1) "node v is in loop h": innermost[v] lies in the subtree of h.
    lpre: dict[int, int] = {}
    lpost: dict[int, int] = {}
    roots = [h for h in headers if h not in parent]
    _number_subtrees(roots, inner, lpre, lpost)

    def in_loop(v: int, h: int) -> bool:
        i = innermost[v]
        return i != -1 and lpre[h] <= lpre[i] and lpost[i] <= lpost[h]

    exits: dict[int, list[tuple[N, N]]] = {h: [] for h in headers}
    for u in range(n):
        lu = innermost[u]
        if lu == -1:
            continue
        for v in idx.succ[u]:
            if innermost[v] == lu:
                continue
            h = lu
            while h != -1 and not in_loop(v, h):  # every loop containing u but not v is exited
                exits[h].append((nodes[u], nodes[v]))
                h = parent.get(h, -1)

    depth: dict[int, int] = {}
    loop_obj: dict[int, Loop[N]] = {}
    for h in headers:  # parents first
        d = depth[h] = depth[parent[h]] + 1 if h in parent else 1
        loop_obj[h] = Loop(
            header=nodes[h],
            body=body[h],
            latches=tuple(nodes[u] for u in latches[h]),
            exits=tuple(exits[h]),
            depth=d,
            parent=loop_obj[parent[h]] if h in parent else None,
        )
    for h in headers:
        loop_obj[h].children = tuple(loop_obj[c] for c in inner[h])
    loops = tuple(loop_obj[h] for h in headers)
    innermost_map = {nodes[v]: loop_obj[innermost[v]] for v in range(n) if innermost[v] != -1}
    return LoopForest(
        loops=loops,
        roots=tuple(loop_obj[r] for r in roots),
        back_edges=tuple((nodes[u], nodes[v]) for u, v in bedges),
        _innermost=innermost_map,
        _by_header={nodes[h]: loop_obj[h] for h in headers},
    )


def natural_loops(
    g: nx.DiGraph, entry: N, domtree: DominatorTree[N] | None = None, include_exceptional: bool = True
) -> LoopForest[N]:
    """The natural loops of the reachable graph, one per header, nested into a forest."""
    idx = _build_index(g, entry, include_exceptional)
    return _loops_ints(idx, _tree_for(idx, domtree))


def _witness_ints(idx: _Index[N], t: _TreeInts) -> tuple[int, int] | None:
    pre, post = t.pre, t.post
    for u, s in enumerate(idx.succ):
        for v in s:
            # With RPO numbers of one DFS, u -> v is retreating (v is a DFS ancestor of u, or u itself) iff v <= u.
            if v <= u and not (pre[v] <= pre[u] and post[u] <= post[v]):
                return (u, v)
    return None


def irreducible_witness(
    g: nx.DiGraph, entry: N, domtree: DominatorTree[N] | None = None, include_exceptional: bool = True
) -> tuple[N, N] | None:
    """A retreating edge ``(u, v)`` of the DFS from ``entry`` whose target does not dominate its source, or None.

    Hecht-Ullman: the graph is reducible iff every retreating edge of a DFS is a back edge; the witness is the
    first offending edge by the RPO of its source, then successor order. ``v`` is a loop entry that can be
    reached around ``u``'s cycle without passing through ``v``: the cycle has more than one entry.
    """
    idx = _build_index(g, entry, include_exceptional)
    w = _witness_ints(idx, _tree_for(idx, domtree))
    return None if w is None else (idx.nodes[w[0]], idx.nodes[w[1]])


def is_reducible(
    g: nx.DiGraph, entry: N, domtree: DominatorTree[N] | None = None, include_exceptional: bool = True
) -> bool:
    """Whether the reachable graph is reducible (every cycle is entered only through one node that dominates it)."""
    return irreducible_witness(g, entry, domtree, include_exceptional) is None


# ---------------------------------------------------------------------------------------------------------------
# Everything at once


@dataclass(frozen=True, eq=False)
class CFGInfo(Generic[N]):
    """The analyses of one graph computed with one traversal: what a per-method driver wants."""

    entry: N
    rpo: tuple[N, ...]
    domtree: DominatorTree[N]
    loops: LoopForest[N]
    witness: tuple[N, N] | None

    @property
    def reducible(self) -> bool:
        return self.witness is None

    @property
    def reachable(self) -> frozenset[N]:
        return frozenset(self.rpo)


def analyze(g: nx.DiGraph, entry: N, include_exceptional: bool = True) -> CFGInfo[N]:
    """RPO, dominator tree, natural loops and reducibility of ``g`` from ``entry``, sharing one index."""
    idx = _build_index(g, entry, include_exceptional)
    t = _dom_ints(idx)
    n = len(idx.nodes)
    w = _witness_ints(idx, t)
    return CFGInfo(
        entry=entry,
        rpo=tuple(idx.nodes),
        domtree=_public_tree(idx.nodes, 0, t, list(range(n))),
        loops=_loops_ints(idx, t),
        witness=None if w is None else (idx.nodes[w[0]], idx.nodes[w[1]]),
    )


# ---------------------------------------------------------------------------------------------------------------
# Graphviz


def _dot_quote(text: str) -> str:
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    if "\n" in text:
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        return '"' + "".join(line + "\\l" for line in lines) + '"'
    return '"' + text + '"'


def to_dot(
    g: nx.DiGraph,
    entry: N,
    labels: Mapping[N, str] | None = None,
    include_exceptional: bool = True,
    name: str = "cfg",
) -> str:
    """Graphviz DOT text of ``g``.

    Nodes are boxes labelled ``labels[node]`` (default ``str(node)``; multi-line labels are left-aligned); the
    entry has a double border; loop headers are filled and say their loop depth; unreachable nodes are grey and
    dotted. Normal edges are solid, exceptional edges dashed, back edges blue. Reachable nodes come first in RPO,
    then the others in the graph's order; node ids are ``n0, n1, ...`` in that order.
    """
    info = analyze(g, entry, include_exceptional)
    order = list(info.rpo)
    seen = set(order)
    order.extend(v for v in g.nodes if v not in seen)
    ids = {v: f"n{i}" for i, v in enumerate(order)}
    back = set(info.loops.back_edges)
    lines = [f"digraph {_dot_quote(name)} {{", '  node [shape=box, fontname="monospace"];']
    for v in order:
        text = labels[v] if labels is not None and v in labels else str(v)
        attrs = [f"label={_dot_quote(text)}"]
        if v == entry:
            attrs.append("peripheries=2")
        loop = info.loops.loop_with_header(v)
        if loop is not None:
            attrs.append('style=filled, fillcolor="#ffe08a"')
            attrs.append(f'xlabel="loop depth {loop.depth}"')
        if v not in seen:
            attrs.append('style=dotted, color=gray, fontcolor=gray')
        lines.append(f"  {ids[v]} [{', '.join(attrs)}];")
    multi = g.is_multigraph()
    for u in order:
        for v, data in g.adj[u].items():
            datas = list(data.values()) if multi else [data]
            for d in datas:
                kind = d.get("kind", NORMAL)
                if kind not in (NORMAL, EXCEPTION):
                    raise ValueError(f"edge {u!r} -> {v!r}: unknown kind {kind!r}")
                attrs = []
                if kind == EXCEPTION:
                    attrs.append("style=dashed")
                if (u, v) in back and (kind == NORMAL or include_exceptional):
                    attrs.append("color=blue")
                suffix = f" [{', '.join(attrs)}]" if attrs else ""
                lines.append(f"  {ids[u]} -> {ids[v]}{suffix};")
    lines.append("}")
    return "\n".join(lines) + "\n"
