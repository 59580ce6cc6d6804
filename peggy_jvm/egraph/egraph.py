"""The e-graph: hash-consed e-nodes, union-find e-classes, egg-style deferred rebuilding, analyses, proof log.

What this module owns
    :class:`EGraph`, generic as egg's: an e-node is a plain tuple ``(op, attr, children)`` (:data:`.types.ENode`:
    any operator name, a hashable attribute, a tuple of e-class ids), no per-node objects, and nothing here knows
    what an operator means. An e-class (:class:`EClass`) holds its nodes, its parents (ids of the nodes that use
    it) and one fact per analysis; the analyses (:class:`~.analysis.Analysis`: make / merge / modify) are passed
    in. The e-graph of a PEG with the Java analyses is :class:`peggy_jvm.epeg.EPeg`, a subclass.

Inputs / outputs
    Nodes come from :meth:`EGraph.add` (rules, tests, importers such as ``EPeg.add_peg``) and
    :meth:`EGraph.add_placeholder`; equalities from :meth:`EGraph.union`, each with a :class:`~.explain.Reason`
    recorded in :attr:`EGraph.proof`; facts known from outside from :meth:`EGraph.merge_data`. The runner
    (:mod:`.runner`) searches with :mod:`.pattern` between :meth:`EGraph.rebuild` calls; an extractor reads
    :meth:`EGraph.class_ids` / :meth:`EGraph.nodes`.

Invariants
    * Ids are created only for new nodes (a node's id is its first class) and for placeholder classes (which
      close cycles while a graph is imported); ``find`` maps an id to its class representative. Parent lists hold
      node ids, and the memo knows each node under exactly one key, its current version (``_cur``), so stale keys
      never linger.
    * Between :meth:`rebuild` calls (while rules are applied) nodes may hold stale child ids; congruence is
      repaired once per iteration, egg's deferred rebuilding. After :meth:`rebuild` (checked by
      :meth:`check_invariants`): every node is canonical and in exactly one class; the memo maps each canonical
      node to its class (and also keeps the nodes :meth:`prune` hid); two congruent nodes are in one class;
      ``by_op`` lists exactly the classes that contain an op; every analysis fact is consistent with every node
      of its class.
    * :meth:`op_index` is, whenever the version changed since its last call, exactly a regrouping of every
      class's nodes by operator at that moment (each operator's classes in id order); it regroups only the
      classes made, changed or merged away since (``_unindexed``: every change of a class's node list adds it).
    * Cycles are allowed (through placeholders and whatever rules build); nothing here recurses over the graph.
"""
from __future__ import annotations

import itertools

from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Iterator, Sequence

from .analysis import Analysis
from .explain import CONGRUENCE, Explanation, ProofLog, Reason, explain
from .types import ENode

__all__ = ["EGraph", "EClass", "ENode", "EGraphError", "op_bit"]

_SERIALS = itertools.count()
_OP_BITS: dict[str, int] = {}  # operator name -> its bit in op masks (given on first sight, process-wide)


def op_bit(op: str) -> int:
    """The bit of ``op`` in operator masks (:meth:`EGraph.op_mask`): a set of operators as one int, so that "does
    the graph hold every operator a pattern needs" is one ``&`` (the runner asks it of every rule every
    iteration)."""
    bit = _OP_BITS.get(op)
    if bit is None:
        bit = _OP_BITS[op] = 1 << len(_OP_BITS)
    return bit


class EGraphError(Exception):
    """Misuse of the e-graph (a child id that is not a class, a malformed graph to import)."""


@dataclass(slots=True, eq=False)
class EClass:
    id: int
    nodes: list  # list[ENode]
    parents: list  # list[int]: ids of the nodes that have this class as a child (find(id) is their class)
    data: list  # one fact per analysis, in EGraph.analyses order


class EGraph:
    """See the module docstring. Each class keeps one fact per analysis, in the order of ``analyses``."""

    def __init__(self, analyses: Sequence[Analysis] = ()) -> None:
        self.analyses: list[Analysis] = list(analyses)
        self._aindex = {a.name: i for i, a in enumerate(self.analyses)}
        if len(self._aindex) != len(self.analyses):
            raise EGraphError("two analyses of one e-graph have the same name")
        # only the analyses that override modify are called after a class changes (egg's modify hook)
        self._modifiers = [a for a in self.analyses if type(a).modify is not Analysis.modify]
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
        self._op_index: dict[str, list[tuple[int, list]]] = {}  # op -> [(class, its nodes of op)], by class id
        self._class_ops: dict[int, dict[str, list]] = {}  # class -> op -> its nodes of op
        self._op_classes: dict[str, dict[int, list]] | None = None  # op -> class -> its nodes of op (op_index unsorted)
        self._unindexed: set[int] = set()  # classes made, changed or merged away since op_index was refreshed
        self._root_cache: dict[tuple[str, int], tuple[set[int], list]] = {}  # (op, id(root set)) -> entries
        self._op_mask = 0  # the operators of the op index (op_bit), built with it

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
        if self._parent[cid] != cid:
            cid = self.find(cid)
        return self._classes[cid].nodes

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
        find, parent = self.find, self._parent
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
                    if parent[pc] != pc:
                        pc = find(pc)
                    if pc not in seen:
                        seen.add(pc)
                        nxt.append(pc)
            levels.append(set(seen) if nxt else levels[-1])
            frontier = nxt
        return levels

    def op_index(self) -> tuple[dict[str, list[tuple[int, list]]], dict[int, dict[str, list]]]:
        """Nodes grouped by operator, globally (each operator's classes in id order) and per class, for
        e-matching. Refreshed when the graph changed since the last call (so once per saturation iteration:
        matching does not change the graph), after the first time for the classes that changed only; valid
        until the next change. The result is the same as regrouping every class then."""
        if self._index_version != self.version:
            if self._index_version < 0:
                self._index_all()
            else:
                self._index_changed()
            self._unindexed = set()
            self._index_version = self.version
            self._root_cache = {}
        return self._op_index, self._class_ops

    def _index_all(self) -> None:
        op_index: dict[str, list[tuple[int, list]]] = {}
        class_ops: dict[int, dict[str, list]] = {}
        for cid, cls in self._classes.items():  # in id order (ids only grow)
            d = _group(cls.nodes)
            class_ops[cid] = d
            for op, ns in d.items():
                entry = op_index.get(op)
                if entry is None:
                    op_index[op] = [(cid, ns)]
                else:
                    entry.append((cid, ns))
        mask = 0
        for op in op_index:
            mask |= _OP_BITS.get(op) or op_bit(op)
        self._op_index, self._class_ops, self._op_mask = op_index, class_ops, mask
        self._op_classes = None  # made from op_index when first needed (most saturations never change it)

    def _index_changed(self) -> None:
        classes, class_ops, op_index = self._classes, self._class_ops, self._op_index
        op_classes = self._op_classes
        if op_classes is None:
            op_classes = self._op_classes = {op: dict(entries) for op, entries in op_index.items()}
        changed_ops: set[str] = set()
        for cid in self._unindexed:
            old = class_ops.pop(cid, None)
            if old:
                for op in old:
                    del op_classes[op][cid]
                changed_ops.update(old)
            cls = classes.get(cid)
            if cls is None:  # merged away
                continue
            d = _group(cls.nodes)
            class_ops[cid] = d
            for op, ns in d.items():
                per = op_classes.get(op)
                if per is None:
                    op_classes[op] = {cid: ns}
                else:
                    per[cid] = ns
            changed_ops.update(d)
        for op in changed_ops:
            per = op_classes[op]
            if per:
                op_index[op] = sorted(per.items())  # class ids are unique: the node lists are never compared
                self._op_mask |= _OP_BITS.get(op) or op_bit(op)
            else:
                del op_classes[op], op_index[op]
                self._op_mask &= ~op_bit(op)

    def op_mask(self) -> int:
        """The operators present in the graph (those of :meth:`op_index`) as a mask of :func:`op_bit`."""
        self.op_index()
        return self._op_mask

    def lookup(self, op: str, attr: Hashable = None, children: Sequence[int] = ()) -> int | None:
        """The class of the node, if the e-graph has it."""
        cid = self._memo.get((op, attr, tuple(self.find(c) for c in children)))
        return None if cid is None else self.find(cid)

    def has_node(self, cid: int, op: str, attr: Hashable = None) -> bool:
        return any(n[0] == op and n[1] == attr for n in self._classes[self.find(cid)].nodes)

    # -- analysis facts ---------------------------------------------------------------------------------------
    def data(self, cid: int, analysis: str) -> Any:
        """The fact of the analysis named ``analysis`` about the class of ``cid``."""
        return self._classes[self.find(cid)].data[self._aindex[analysis]]

    def merge_data(self, cid: int, analysis: str, fact: Any) -> bool:
        """Merge a fact known from outside the graph (an importer's) into the class of ``cid``; its parents' facts
        are repaired by the next :meth:`rebuild`. Returns whether the class's fact changed."""
        k = self._aindex[analysis]
        an = self.analyses[k]
        cls = self._classes[self.find(cid)]
        old = cls.data[k]
        new = an.merge(old, fact)
        if new == old:
            return False
        cls.data[k] = new
        self._apending.extend(cls.parents)
        self._touched.add(cls.id)
        if self._modifiers:
            self._modify(cls.id)
        return True

    @property
    def conflicts(self) -> list[tuple[Any, Any]]:
        """Contradictions the analyses' merges saw (each means an unsound union: some rule is unsound)."""
        return [c for a in self.analyses for c in a.conflicts]

    def _modify(self, cid: int) -> None:
        for a in self._modifiers:
            a.modify(self, cid)

    # -- building ---------------------------------------------------------------------------------------------
    def add(self, op: str, attr: Hashable = None, children: Iterable[int] = ()) -> int:
        """The class of ``op[attr](children)``, adding the node if it is new."""
        find, parent = self.find, self._parent
        # (a representative is its own parent: no call for it, the commonest case)
        node = (op, attr, tuple([c if parent[c] == c else find(c) for c in children]))
        cid = self._memo.get(node)
        if cid is not None:
            return cid if parent[cid] == cid else find(cid)
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
        self._unindexed.add(cid)
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
        if self._modifiers:
            self._modify(cid)
        return cid

    def add_placeholder(self) -> int:
        """A class with no node yet (it closes a cycle); every fact starts at its analysis' ``unknown``."""
        cid = len(self._parent)
        self._parent.append(cid)
        self._origin.append(None)
        self._cur.append(None)
        self._classes[cid] = EClass(cid, [], [], [a.unknown for a in self.analyses])
        self._unindexed.add(cid)
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
        self._unindexed.add(ra)
        self._unindexed.add(rb)
        self._touched.add(ra)
        self.version += 1
        if self._modifiers:
            self._modify(ra)
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
        self._unindexed.add(cid)
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
        find, parent = self.find, self._parent
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
                    node: ENode = cur[nid]  # type: ignore[assignment]  # a pending id is a node, not a placeholder
                    op, attr, ch = node
                    canon = (op, attr, tuple([c if parent[c] == c else find(c) for c in ch]))
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
                    node = cur[nid]  # type: ignore[assignment]  # a pending id is a node, not a placeholder
                    canon = (node[0], node[1], tuple([c if parent[c] == c else find(c) for c in node[2]]))
                    data = cls.data
                    changed = False
                    for k, an in enumerate(analyses):
                        old = data[k]
                        new = an.merge(old, an.make(self, canon))
                        if new != old:
                            data[k] = new
                            self._apending.extend(cls.parents)
                            self._touched.add(cls.id)
                            changed = True
                    if changed and self._modifiers:
                        self._modify(cls.id)
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
        find, parent = self.find, self._parent
        classes = self._classes
        for cid in cids:
            cls = classes.get(cid)
            if cls is None:
                continue
            nodes: dict[ENode, None] = {}
            for op, attr, ch in cls.nodes:
                n = (op, attr, tuple([c if parent[c] == c else find(c) for c in ch])) if ch else (op, attr, ch)
                nodes[n] = None
            cls.nodes = list(nodes)
            self._unindexed.add(cid)
            # one parent id per distinct canonical node (congruent duplicates are in one class already)
            cur = self._cur
            parents: dict[ENode, int] = {}
            for pid in cls.parents:
                n = cur[pid]
                parents.setdefault((n[0], n[1], tuple([c if parent[c] == c else find(c) for c in n[2]])), pid)
            cls.parents = list(parents.values())

    # -- explanations -----------------------------------------------------------------------------------------
    def explain(self, a: int, b: int, depth: int = 3) -> Explanation | None:
        """The chain of rule applications that made ``a`` and ``b`` equal (None when they are not)."""
        if self.find(a) != self.find(b):
            return None
        return explain(self.proof, self.term, a, b, depth=depth)

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
                for k, an in enumerate(self.analyses):
                    seen_conflicts = len(an.conflicts)
                    merged = an.merge(cls.data[k], an.make(self, n))
                    new_conflicts = an.conflicts[seen_conflicts:]
                    del an.conflicts[seen_conflicts:]  # the check's own merge is no contradiction of the graph's
                    assert merged == cls.data[k] and not new_conflicts, f"{an.name} fact of {cid} contradicts {n}"
        for n, cid in self._memo.items():  # nodes pruned from their class stay here (see prune)
            assert all(find(c) == c for c in n[2]), f"memo key {n} is not canonical"
            assert find(cid) in self._classes, f"memo maps {n} to a dead class"
        for op, cids in self._by_op.items():
            for cid in cids:
                assert cid in self._classes and any(n[0] == op for n in self._classes[cid].nodes), \
                    f"by_op[{op}] lists {cid}"


def _group(nodes: list[ENode]) -> dict[str, list[ENode]]:
    """A class's nodes by operator, operators in the order of their first node."""
    d: dict[str, list[ENode]] = {}
    for n in nodes:
        lst = d.get(n[0])
        if lst is None:
            d[n[0]] = [n]
        else:
            lst.append(n)
    return d


_EMPTY_SET: set[int] = set()
