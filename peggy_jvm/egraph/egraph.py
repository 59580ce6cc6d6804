"""The e-graph: hash-consed e-nodes, union-find e-classes, egg-style deferred rebuilding, analyses, proof log.

What this module owns
    :class:`EGraph`. An e-node is a plain tuple ``(op, attr, children)`` (operator name from
    :data:`peggy_jvm.peg.ops.OPS`, a hashable attribute, a tuple of e-class ids): no per-node objects. An e-class
    (:class:`EClass`) holds its nodes, its parents (ids of the nodes that use it) and one fact per
    analysis. :meth:`EGraph.add_peg` imports a :class:`~peggy_jvm.peg.graph.PEG`.

Inputs / outputs
    Nodes come from :meth:`EGraph.add` (rules, tests) and :meth:`EGraph.add_peg`; equalities from
    :meth:`EGraph.union`, each with a :class:`~.explain.Reason` recorded in :attr:`EGraph.proof`. The runner
    (:mod:`.runner`) searches with :mod:`.pattern` between :meth:`EGraph.rebuild` calls; the extractor reads
    :meth:`EGraph.class_ids` / :meth:`EGraph.nodes`.

Invariants
    * Ids are created only for new nodes (a node's id is its first class) and for the placeholder classes of
      imported thetas; ``find`` maps an id to its class representative. Parent lists hold node ids, and the memo
      knows each node under exactly one key, its current version (``_cur``), so stale keys never linger.
    * Between :meth:`rebuild` calls (while rules are applied) nodes may hold stale child ids; congruence is
      repaired once per iteration, egg's deferred rebuilding. After :meth:`rebuild` (checked by
      :meth:`check_invariants`): every node is canonical and in exactly one class; the memo maps each canonical
      node to its class (and also keeps the nodes :meth:`prune` hid); two congruent nodes are in one class;
      ``by_op`` lists exactly the classes that contain an op; every analysis fact is consistent with every node
      of its class.
    * Cycles are allowed (theta second children and whatever rules build); nothing here recurses over the graph.
"""
from __future__ import annotations

import itertools

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Iterator, Sequence

from ..peg.ops import T
from .analysis import LINEAR_SORTS, Analysis, ConstantAnalysis, SortAnalysis, default_analyses
from .explain import CONGRUENCE, Explanation, ProofLog, Reason, explain

if TYPE_CHECKING:
    from ..peg.graph import PEG

__all__ = ["EGraph", "EClass", "ENode", "EGraphError"]

ENode = tuple  # (op: str, attr: Hashable, children: tuple[int, ...])

_IMPORT = Reason("import")
_SERIALS = itertools.count()
_IR_SORTS = {"int": T.INT, "long": T.LONG, "float": T.FLOAT, "double": T.DOUBLE, "ref": T.REF}


class EGraphError(Exception):
    """Misuse of the e-graph (a child id that is not a class, a malformed PEG)."""


@dataclass(slots=True, eq=False)
class EClass:
    id: int
    nodes: list  # list[ENode]
    parents: list  # list[int]: ids of the nodes that have this class as a child (find(id) is their class)
    data: list  # one fact per analysis, in EGraph.analyses order


@dataclass
class PegInfo:
    """What :meth:`EGraph.add_peg` remembers of the imported PEG (rules consult it, e.g. ``this`` is non-null)."""

    name: str = ""
    is_static: bool | None = None
    roots: list[int] = field(default_factory=list)
    #: class made by copying another (loop peeling's copies of a loop body) -> that class: debug information,
    #: so that copied effects keep their statement's line
    copied_from: dict[int, int] = field(default_factory=dict)


class EGraph:
    """See the module docstring. ``analyses`` come after the three default ones (const, variance, sort)."""

    def __init__(self, extra_analyses: Sequence[Analysis] = ()) -> None:
        self.analyses: list[Analysis] = default_analyses() + list(extra_analyses)
        self._aindex = {a.name: i for i, a in enumerate(self.analyses)}
        self.constants: ConstantAnalysis = self.analyses[0]  # type: ignore[assignment]
        self.sorts: SortAnalysis = self.analyses[2]  # type: ignore[assignment]
        self._parent: list[int] = []
        self._origin: list[ENode | None] = []  # the node each id was created for (None: placeholder)
        self._cur: list[ENode | None] = []  # the same node as the memo knows it now (its key there)
        self._memo: dict[ENode, int] = {}
        self._classes: dict[int, EClass] = {}
        self._by_op: dict[str, set[int]] = {}
        self._pending: list[int] = []  # nodes (ids) whose children were merged (congruence repair)
        self._apending: list[int] = []  # nodes (ids) whose children's facts changed (analysis repair)
        self._dirty: set[int] = set()  # classes whose node lists need canonicalizing
        self.proof = ProofLog()
        self.serial = next(_SERIALS)  # tells e-graphs apart in caches that outlive one (ids can be reused)
        self.version = 0  # bumped by every new node and every effective union
        self._index_version = -1
        self._touched: set[int] = set()  # classes that got nodes, members or facts since take_touched()
        self._op_index: dict[str, list[tuple[int, list]]] = {}  # op -> [(class, its nodes of op)]
        self._class_ops: dict[int, dict[str, list]] = {}  # class -> op -> its nodes of op
        self._root_cache: dict[tuple[str, int], tuple[set[int], list]] = {}  # (op, id(root set)) -> entries
        self.info = PegInfo()

    # -- basic queries ----------------------------------------------------------------------------------------
    def find(self, x: int) -> int:
        parent = self._parent
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    def equiv(self, a: int, b: int) -> bool:
        return self.find(a) == self.find(b)

    @property
    def node_count(self) -> int:
        """Distinct nodes, pruned ones included (exact after :meth:`rebuild`; between rebuilds it may count a few
        nodes that congruence will merge)."""
        return len(self._memo)

    @property
    def class_count(self) -> int:
        return len(self._classes)

    def class_ids(self) -> Iterator[int]:
        return iter(self._classes)

    def nodes(self, cid: int) -> list[ENode]:
        return self._classes[self.find(cid)].nodes

    def classes_with_op(self, op: str) -> set[int]:
        """Representatives of the classes that contain a node of ``op`` (exact after :meth:`rebuild`)."""
        return self._by_op.get(op, _EMPTY_SET)

    def take_touched(self) -> set[int]:
        """The (representatives of the) classes that got a node, a member or a new analysis fact since the last
        call. A match that did not exist before must visit one of them, which is what lets the runner search
        only near changes (semi-naive matching)."""
        find = self.find
        out = {find(c) for c in self._touched}
        self._touched = set()
        return out

    def ancestor_levels(self, cids: set[int], depth: int) -> list[set[int]]:
        """``levels[d]``: ``cids`` and every class reaching one of them through at most ``d`` parent edges, for
        ``d`` up to ``depth`` (one breadth-first pass)."""
        find = self.find
        classes = self._classes
        seen = set(cids)
        levels = [set(seen)]
        frontier = list(seen)
        for _ in range(depth):
            nxt = []
            for c in frontier:
                cls = classes.get(c)
                if cls is None:
                    continue
                for pc in cls.parents:
                    pc = find(pc)
                    if pc not in seen:
                        seen.add(pc)
                        nxt.append(pc)
            levels.append(set(seen) if nxt else levels[-1])
            frontier = nxt
        return levels

    def op_index(self) -> tuple[dict[str, list[tuple[int, list]]], dict[int, dict[str, list]]]:
        """Nodes grouped by operator, globally and per class, for e-matching. Built in one pass over the graph
        when the graph changed since the last call (so once per saturation iteration: matching does not change
        the graph); valid until the next change."""
        if self._index_version != self.version:
            op_index: dict[str, list[tuple[int, list]]] = {}
            class_ops: dict[int, dict[str, list]] = {}
            for cid, cls in self._classes.items():
                d: dict[str, list] = {}
                for n in cls.nodes:
                    lst = d.get(n[0])
                    if lst is None:
                        d[n[0]] = [n]
                    else:
                        lst.append(n)
                class_ops[cid] = d
                for op, ns in d.items():
                    entry = op_index.get(op)
                    if entry is None:
                        op_index[op] = [(cid, ns)]
                    else:
                        entry.append((cid, ns))
            self._op_index, self._class_ops = op_index, class_ops
            self._index_version = self.version
            self._root_cache = {}
        return self._op_index, self._class_ops

    def lookup(self, op: str, attr: Hashable = None, children: Sequence[int] = ()) -> int | None:
        """The class of the node, if the e-graph has it."""
        cid = self._memo.get((op, attr, tuple(self.find(c) for c in children)))
        return None if cid is None else self.find(cid)

    def has_node(self, cid: int, op: str, attr: Hashable = None) -> bool:
        return any(n[0] == op and n[1] == attr for n in self._classes[self.find(cid)].nodes)

    # -- analysis facts ---------------------------------------------------------------------------------------
    def const(self, cid: int) -> tuple[str, Any] | None:
        """The constant key (``("const.i", 3)``...) the class is known to equal, or None."""
        return self._classes[self.find(cid)].data[0]

    def variance(self, cid: int) -> int:
        """Bit mask of the loop depths the class may vary in."""
        return self._classes[self.find(cid)].data[1]

    def varies(self, cid: int, loop: int) -> bool:
        return bool((self._classes[self.find(cid)].data[1] >> loop) & 1)

    def sort(self, cid: int) -> T | None:
        return self._classes[self.find(cid)].data[2]

    def is_linear(self, cid: int) -> bool | None:
        """True for heap values (sigma, outcomes, results), False for other values, None when unknown."""
        s = self._classes[self.find(cid)].data[2]
        return None if s is None else s in LINEAR_SORTS

    def data(self, cid: int, analysis: str) -> Any:
        return self._classes[self.find(cid)].data[self._aindex[analysis]]

    @property
    def conflicts(self) -> list[tuple[Any, Any]]:
        """Contradictions the analyses saw (two constants, two types in one class): each means an unsound rule."""
        return self.constants.conflicts + self.sorts.conflicts

    # -- building ---------------------------------------------------------------------------------------------
    def add(self, op: str, attr: Hashable = None, children: Iterable[int] = ()) -> int:
        """The class of ``op[attr](children)``, adding the node if it is new."""
        find = self.find
        node = (op, attr, tuple([find(c) for c in children]))
        cid = self._memo.get(node)
        if cid is not None:
            return find(cid)
        return self._add_new(node)

    def _add_new(self, node: ENode) -> int:
        cid = len(self._parent)
        self._parent.append(cid)
        self._origin.append(node)
        self._cur.append(node)
        classes = self._classes
        ch = node[2]
        for c in ch:
            if c not in classes:
                raise EGraphError(f"child {c} of {node[0]} is not a class representative")
        data = [a.make(self, node) for a in self.analyses]
        classes[cid] = EClass(cid, [node], [], data)
        for c in (ch if len(ch) < 2 else dict.fromkeys(ch)):
            classes[c].parents.append(cid)
        self._memo[node] = cid
        self._touched.add(cid)
        s = self._by_op.get(node[0])
        if s is None:
            self._by_op[node[0]] = {cid}
        else:
            s.add(cid)
        self.version += 1
        return cid

    def add_placeholder(self) -> int:
        """A class with no node yet (it closes a cycle); every fact starts at its analysis' ``unknown``."""
        cid = len(self._parent)
        self._parent.append(cid)
        self._origin.append(None)
        self._cur.append(None)
        self._classes[cid] = EClass(cid, [], [], [a.unknown for a in self.analyses])
        self.version += 1
        return cid

    def union(self, a: int, b: int, reason: Reason | str = "asserted") -> bool:
        """Merge the classes of ``a`` and ``b`` (congruence is repaired by the next :meth:`rebuild`). Returns
        whether they were different. The reason is recorded in the proof log between ``a`` and ``b``."""
        find = self.find
        ra, rb = find(a), find(b)
        if ra == rb:
            return False
        if isinstance(reason, str):
            reason = Reason(reason)
        self.proof.record(a, b, reason)
        classes = self._classes
        ca, cb = classes[ra], classes[rb]
        if len(ca.parents) < len(cb.parents):
            ra, rb, ca, cb = rb, ra, cb, ca
        self._parent[rb] = ra
        self._pending.extend(cb.parents)
        da, db = ca.data, cb.data
        for k, an in enumerate(self.analyses):
            x, y = da[k], db[k]
            if x == y:
                continue
            m = an.merge(x, y)
            if m != x:
                da[k] = m
                self._apending.extend(ca.parents)
            if m != y:
                self._apending.extend(cb.parents)
        by_op = self._by_op
        for node in cb.nodes:
            s = by_op[node[0]]
            s.discard(rb)
            s.add(ra)
        ca.nodes.extend(cb.nodes)
        ca.parents.extend(cb.parents)
        del classes[rb]
        self._dirty.add(ra)
        self._touched.add(ra)
        self.version += 1
        return True

    def prune(self, cid: int, keep: Callable[[ENode], bool]) -> bool:
        """Drop the nodes of a class that ``keep`` rejects (a class known to be a constant needs nothing but its
        constant node). Pruned nodes stay in the memo, so adding one again finds this class and congruence
        through them is still repaired; they are just no longer matched or extracted."""
        cid = self.find(cid)
        cls = self._classes[cid]
        kept = [n for n in cls.nodes if keep(n)]
        if len(kept) == len(cls.nodes) or not kept:
            return False
        gone = {n[0] for n in cls.nodes} - {n[0] for n in kept}
        cls.nodes = kept
        for op in gone:
            self._by_op[op].discard(cid)
        self.version += 1
        return True

    def pending_work(self) -> int:
        """How much repair the next :meth:`rebuild` has queued (the runner budgets time for it)."""
        return len(self._pending) + len(self._apending)

    # -- rebuilding -------------------------------------------------------------------------------------------
    def rebuild(self) -> int:
        """Repair congruence and analysis facts (egg's deferred rebuild, worklist based). Returns the number of
        unions congruence caused."""
        find = self.find
        memo = self._memo
        classes = self._classes
        dirty = self._dirty
        unions = 0
        while self._pending or self._apending:
            while self._pending:
                todo = self._pending
                self._pending = []
                cur = self._cur
                for nid in todo:
                    node = cur[nid]
                    op, attr, ch = node  # type: ignore[misc]
                    canon = (op, attr, tuple([find(c) for c in ch]))
                    if canon != node:
                        # the memo knows each node under exactly one key, its current version: replace it
                        if memo.get(node) is not None and find(memo[node]) == find(nid):
                            del memo[node]
                        cur[nid] = canon
                    old = memo.get(canon)
                    if old is None:
                        memo[canon] = nid
                    elif find(old) != find(nid):
                        self.union(old, nid, Reason(CONGRUENCE, ("a", "b"), (self._node_children(old, canon), ch)))
                        unions += 1
                    dirty.add(nid)
            if self._apending:
                todo = self._apending
                self._apending = []
                analyses = self.analyses
                cur = self._cur
                for nid in todo:
                    cls = classes[find(nid)]
                    node = cur[nid]
                    canon = (node[0], node[1], tuple([find(c) for c in node[2]]))  # type: ignore[index]
                    data = cls.data
                    for k, an in enumerate(analyses):
                        old = data[k]
                        new = an.merge(old, an.make(self, canon))
                        if new != old:
                            data[k] = new
                            self._apending.extend(cls.parents)
                            self._touched.add(cls.id)
        if dirty:
            self._canonicalize_classes({find(c) for c in dirty})
            dirty.clear()
        return unions

    def _node_children(self, nid: int, canon: ENode) -> tuple[int, ...]:
        """Child ids of node ``nid`` as first created when it is that node (for a congruence reason), else the
        canonical children."""
        node = self._origin[nid] if nid < len(self._origin) else None
        if node is not None and node[0] == canon[0] and node[1] == canon[1] and len(node[2]) == len(canon[2]):
            return node[2]
        return canon[2]

    def _canonicalize_classes(self, cids: set[int]) -> None:
        find = self.find
        classes = self._classes
        for cid in cids:
            cls = classes.get(cid)
            if cls is None:
                continue
            nodes = {}
            for op, attr, ch in cls.nodes:
                n = (op, attr, tuple([find(c) for c in ch])) if ch else (op, attr, ch)
                nodes[n] = None
            cls.nodes = list(nodes)
            # one parent id per distinct canonical node (congruent duplicates are in one class already)
            cur = self._cur
            parents: dict[ENode, int] = {}
            for pid in cls.parents:
                n = cur[pid]
                parents.setdefault((n[0], n[1], tuple([find(c) for c in n[2]])), pid)  # type: ignore[index]
            cls.parents = list(parents.values())

    # -- import -----------------------------------------------------------------------------------------------
    def add_peg(self, peg: PEG, roots: Sequence[int] | None = None) -> dict[int, int]:
        """Import ``peg`` (all nodes, or those reachable from ``roots``); returns PEG node id -> class id.

        Thetas close cycles, so each gets a placeholder class first; the other nodes are added children first
        (a theta child is its placeholder), then each theta node is added and merged into its placeholder. The
        variance facts are seeded with the PEG's own least-fixpoint variance (see :mod:`.analysis`), and the
        sorts of parameters with the PEG's parameter types."""
        nodes = peg.nodes
        ids = peg.reachable(list(roots)) if roots is not None else list(range(len(nodes)))
        wanted = set(ids)
        mapping: dict[int, int] = {}
        for nid in ids:
            if nodes[nid].op == "theta":
                mapping[nid] = self.add_placeholder()
        for nid in ids:
            self._import_node(peg, nid, mapping, wanted)
        for nid in ids:
            n = nodes[nid]
            if n.op == "theta":
                if min(n.children) < 0:
                    raise EGraphError(f"theta {nid} of {peg.name or 'PEG'} has no children set")
                t = self.add("theta", n.attr, (mapping[n.children[0]], mapping[n.children[1]]))
                self.union(mapping[nid], t, _IMPORT)
        self.rebuild()
        self._seed_facts(peg, ids, mapping)
        self.rebuild()
        self.info = PegInfo(peg.name, getattr(peg, "is_static", None),
                            [self.find(mapping[r]) for r in (roots if roots is not None else [peg.root])
                             if r in mapping])
        return {nid: self.find(c) for nid, c in mapping.items()}

    def _import_node(self, peg: PEG, start: int, mapping: dict[int, int], wanted: set[int]) -> None:
        """Add ``start`` and the non-theta nodes below it, children first, with an explicit stack (PEGs of real
        methods are deep enough to overflow Python's recursion)."""
        nodes = peg.nodes
        stack = [(start, False)]
        while stack:
            nid, expanded = stack.pop()
            if nid in mapping:
                continue
            n = nodes[nid]
            if expanded:
                mapping[nid] = self.add(n.op, n.attr, [mapping[c] for c in n.children])
                continue
            stack.append((nid, True))
            for c in n.children:
                if c not in mapping:
                    if c not in wanted or c < 0:
                        raise EGraphError(f"node {nid} of {peg.name or 'PEG'} has a missing child {c}")
                    stack.append((c, False))
        return None

    def _seed_facts(self, peg: PEG, ids: list[int], mapping: dict[int, int]) -> None:
        var = peg.variance()
        classes = self._classes
        find = self.find
        params = getattr(peg, "param_types", None) or []
        for nid in ids:
            cls = classes[find(mapping[nid])]
            mask = 0
            for loop in var[nid]:
                mask |= 1 << loop
            if cls.data[1] & ~mask:
                cls.data[1] &= mask
                self._apending.extend(cls.parents)
            n = peg.nodes[nid]
            if n.op == "param" and cls.data[2] is None and isinstance(n.attr, int) and 0 <= n.attr < len(params):
                kind = getattr(getattr(params[n.attr], "kind", None), "value", None)
                if kind in _IR_SORTS:
                    cls.data[2] = _IR_SORTS[kind]
                    self._apending.extend(cls.parents)

    # -- explanations -----------------------------------------------------------------------------------------
    def explain(self, a: int, b: int, depth: int = 3) -> Explanation | None:
        """The chain of rule applications that made ``a`` and ``b`` equal (None when they are not)."""
        if self.find(a) != self.find(b):
            return None
        return explain(self, a, b, depth=depth)

    def term(self, cid: int, depth: int = 2) -> str:
        """A short rendering of the node id ``cid`` was created for (children to ``depth`` levels)."""
        node = self._origin[cid] if 0 <= cid < len(self._origin) else None
        if node is None:
            return f"#{cid}"
        op, attr, ch = node
        head = op if attr is None else f"{op}[{attr}]"
        if not ch:
            return head
        if depth <= 0:
            return f"({head} ...)#{cid}"
        return f"({head} {' '.join(self.term(c, depth - 1) for c in ch)})"

    # -- checking ---------------------------------------------------------------------------------------------
    def check_invariants(self) -> None:
        """Assert the post-rebuild invariants of the module docstring (tests call this)."""
        assert not self._pending and not self._apending, "rebuild() not called"
        find = self.find
        seen: dict[ENode, int] = {}
        for cid, cls in self._classes.items():
            assert find(cid) == cid, f"class {cid} is not a representative"
            for n in cls.nodes:
                assert all(find(c) == c for c in n[2]), f"node {n} in {cid} is not canonical"
                assert n not in seen, f"node {n} in classes {seen.get(n)} and {cid} (congruence lost)"
                seen[n] = cid
                assert self._memo.get(n) is not None and find(self._memo[n]) == cid, f"memo wrong for {n}"
                assert cid in self._by_op.get(n[0], ()), f"by_op misses {cid} for {n[0]}"
                const, var, sort = (a.make(self, n) for a in self.analyses[:3])
                assert const is None or const == cls.data[0], f"constant of {cid} contradicts {n}"
                assert cls.data[1] & ~var == 0, f"variance of {cid} not within that of {n}"
                assert sort in (None, T.ANY) or sort == cls.data[2], f"sort of {cid} contradicts {n}"
        for n, cid in self._memo.items():  # nodes pruned from their class stay here (see prune)
            assert all(find(c) == c for c in n[2]), f"memo key {n} is not canonical"
            assert find(cid) in self._classes, f"memo maps {n} to a dead class"
        for op, cids in self._by_op.items():
            for cid in cids:
                assert cid in self._classes and any(n[0] == op for n in self._classes[cid].nodes), \
                    f"by_op[{op}] lists {cid}"


_EMPTY_SET: set[int] = set()
