"""The extraction problem, independent of where it came from, and what makes a selection of it valid.

What this module owns
    :class:`ExtractionProblem`: e-classes, e-nodes (operator label, cost, owning class, child classes in
    order), the root classes, and for every node the child positions whose edges MAY close a cycle (for a
    PEG: a theta node's second child; for the generic egraph-serialize benchmark: none).  :class:`Selection`
    (class -> chosen node) and the one definition of a selection's validity and DAG cost
    (:func:`evaluate_selection`), which every extractor's answer is re-checked against.  Also what every
    extractor needs: which nodes can be part of some valid selection at all (:func:`usable_nodes`), and
    integer weights exactly proportional to the float costs (:func:`integer_costs`).

Inputs and outputs
    Problems are built by :meth:`ExtractionProblem.build` (from ``serialize.py``, from the PEG stage, or by
    hand in tests).  Node and class ids are strings; they are kept as given, so a selection of a shrunk
    problem (``shrink.py``) is a selection of the original problem too.

Invariants
    * ``build`` rejects what the other modules must not see: duplicate node ids, a child or root class that
      is not a class, a may-close position outside the node's children, a cost that is not a finite number.
      The classes are those of the nodes plus any declared empty (an empty class can never be used).
    * A selection is **valid** when every class reached from the roots (through the chosen nodes' children)
      has a chosen node of that class, and every cycle among the reached chosen nodes passes through at
      least one may-close edge (equivalently: the reached chosen nodes with may-close edges removed form a
      DAG).  Choices for classes that are not reached are ignored: they neither cost nor invalidate.
    * The **DAG cost** counts each reached chosen node once, summed with :func:`math.fsum` (the correctly
      rounded exact sum), so comparing two DAG costs ranks them as their exact sums do (never inverted; equal
      exact sums give equal floats).
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Iterable, Iterator, Mapping, Sequence

__all__ = [
    "NodeId", "ClassId", "Node", "ExtractionProblem", "Selection", "SelectionReport",
    "InvalidSelectionError", "InfeasibleProblemError", "evaluate_selection", "dag_cost", "usable_nodes",
    "integer_costs",
]

NodeId = str
ClassId = str


@dataclass(frozen=True, slots=True)
class Node:
    """One e-node: ``op`` applied to one representative of each child class, in order."""

    id: NodeId
    op: str
    cost: float
    eclass: ClassId
    children: tuple[ClassId, ...] = ()
    #: positions in ``children`` whose edge may close a cycle (a theta node's second child in a PEG)
    may_close: frozenset[int] = frozenset()

    def strict_children(self) -> Iterator[ClassId]:
        """Child classes through edges that must not close a cycle (with repetitions, in order)."""
        for i, c in enumerate(self.children):
            if i not in self.may_close:
                yield c


@dataclass(frozen=True, eq=False)
class ExtractionProblem:
    """An e-graph to extract from: pick one node per reached class, starting at the roots.

    Build it with :meth:`build`, which checks the invariants in the module docstring.  The mappings are not
    to be mutated after construction (derived indexes are cached).
    """

    nodes: Mapping[NodeId, Node]
    classes: Mapping[ClassId, tuple[NodeId, ...]]
    roots: tuple[ClassId, ...]
    name: str = ""

    @staticmethod
    def build(nodes: Iterable[Node], roots: Sequence[ClassId], *, extra_classes: Iterable[ClassId] = (),
              name: str = "") -> ExtractionProblem:
        """Check and index ``nodes``; the classes are the nodes' classes plus ``extra_classes`` (empty ones).

        Raises ``ValueError`` naming the first offending node, class or root.
        """
        by_id: dict[NodeId, Node] = {}
        members: dict[ClassId, list[NodeId]] = {c: [] for c in extra_classes}
        for n in nodes:
            if n.id in by_id:
                raise ValueError(f"{name or 'problem'}: duplicate node id {n.id!r}")
            if isinstance(n.cost, bool) or not isinstance(n.cost, (int, float)) or not math.isfinite(n.cost):
                raise ValueError(f"{name or 'problem'}: node {n.id!r} has cost {n.cost!r}, not a finite number")
            bad = [p for p in n.may_close if not 0 <= p < len(n.children)]
            if bad:
                raise ValueError(f"{name or 'problem'}: node {n.id!r} marks may-close positions {sorted(bad)} "
                                 f"but has {len(n.children)} children")
            by_id[n.id] = n
            members.setdefault(n.eclass, []).append(n.id)
        for n in by_id.values():
            for c in n.children:
                if c not in members:
                    raise ValueError(f"{name or 'problem'}: node {n.id!r} has child class {c!r}, not a class")
        if not roots:
            raise ValueError(f"{name or 'problem'}: no root class")
        for r in roots:
            if r not in members:
                raise ValueError(f"{name or 'problem'}: root {r!r} is not a class")
        # Costs are kept as floats: an int cost would make fsum and the MaxSAT scaling see mixed types.
        fixed = {k: (v if isinstance(v.cost, float) else _with_float_cost(v)) for k, v in by_id.items()}
        return ExtractionProblem(fixed, {c: tuple(ns) for c, ns in members.items()},
                                 tuple(dict.fromkeys(roots)), name)

    # ------------------------------------------------------------------ derived indexes (cached)

    @cached_property
    def parents(self) -> Mapping[ClassId, tuple[NodeId, ...]]:
        """Class -> the nodes having it as a child (each node once)."""
        acc: dict[ClassId, list[NodeId]] = {c: [] for c in self.classes}
        for n in self.nodes.values():
            for c in dict.fromkeys(n.children):
                acc[c].append(n.id)
        return {c: tuple(ns) for c, ns in acc.items()}

    @cached_property
    def strict_kids(self) -> Mapping[NodeId, tuple[ClassId, ...]]:
        """Node -> its distinct strict child classes, in order (the hot loops' view of ``strict_children``)."""
        return {nid: tuple(dict.fromkeys(n.strict_children())) for nid, n in self.nodes.items()}

    @cached_property
    def reversed_children(self) -> Mapping[NodeId, tuple[ClassId, ...]]:
        """Node -> its child classes, last first (what a depth-first walk pushes to visit them in order)."""
        return {nid: n.children[::-1] for nid, n in self.nodes.items()}

    @cached_property
    def has_may_close(self) -> bool:
        return any(n.may_close for n in self.nodes.values())

    @cached_property
    def has_negative_cost(self) -> bool:
        return any(n.cost < 0 for n in self.nodes.values())

    def size(self) -> tuple[int, int]:
        """(number of classes, number of nodes)."""
        return len(self.classes), len(self.nodes)

    def restrict(self, keep: Iterable[NodeId], classes: Iterable[ClassId], name: str | None = None
                 ) -> ExtractionProblem:
        """The sub-problem with only ``keep`` nodes and ``classes`` (which must contain the kept nodes'
        classes, children and the roots).  Ids and node objects are shared, so selections carry over."""
        wanted = set(classes)
        # in this problem's class order, not the set's: string hashing varies per process, and the class order
        # is the encoding's clause order (and so which of equally cheap selections the SAT solver returns)
        cls: dict[ClassId, list[NodeId]] = {c: [] for c in self.classes if c in wanted}
        cls.update((c, []) for c in sorted(wanted - cls.keys()))
        keep_set = set(keep)
        for nid in self.nodes:  # original order, so results do not depend on set iteration order
            if nid in keep_set:
                cls[self.nodes[nid].eclass].append(nid)
        nodes = {nid: self.nodes[nid] for nid in self.nodes if nid in keep_set}
        sub = ExtractionProblem(nodes, {c: tuple(v) for c, v in cls.items()}, self.roots,
                                self.name if name is None else name)
        if "strict_kids" in self.__dict__:  # a cached index carries over to the sub-problem's nodes
            kids = self.strict_kids
            sub.__dict__["strict_kids"] = {nid: kids[nid] for nid in nodes}
        return sub


def _with_float_cost(n: Node) -> Node:
    return Node(n.id, n.op, float(n.cost), n.eclass, n.children, n.may_close)


@dataclass(frozen=True)
class Selection:
    """The chosen node per class.  Classes not mentioned are unchosen; see :func:`evaluate_selection`."""

    choices: Mapping[ClassId, NodeId] = field(default_factory=dict)

    def __getitem__(self, c: ClassId) -> NodeId:
        return self.choices[c]

    def get(self, c: ClassId) -> NodeId | None:
        return self.choices.get(c)

    def __len__(self) -> int:
        return len(self.choices)


@dataclass(frozen=True)
class SelectionReport:
    """What :func:`evaluate_selection` found: ``errors`` is empty iff the selection is valid."""

    errors: tuple[str, ...]
    #: reached classes, in the order a depth-first walk from the roots meets them
    reached: tuple[ClassId, ...]
    #: DAG cost of the reached chosen nodes (``math.inf`` when invalid)
    cost: float

    @property
    def valid(self) -> bool:
        return not self.errors

    def reached_nodes(self, selection: Selection) -> tuple[NodeId, ...]:
        return tuple(selection.choices[c] for c in self.reached if c in selection.choices)


class InvalidSelectionError(ValueError):
    """A selection that is not valid for its problem (the message lists why)."""


class InfeasibleProblemError(ValueError):
    """A problem without any valid selection (e.g. a root class none of whose nodes is usable)."""


#: how many of a problem's latest evaluations :func:`evaluate_selection` remembers
EVALUATIONS_KEPT = 16


def evaluate_selection(problem: ExtractionProblem, selection: Selection, max_errors: int = 5) -> SelectionReport:
    """Validity and DAG cost of ``selection`` (see the module docstring); at most ``max_errors`` listed."""
    # The same selection is evaluated several times in a row (a solver model: decoded, checked valid, then by
    # the extraction checker, the tie-break; 62% of the calls on commons-math3's 100-class sample): the report
    # is a function of the choices' contents (the map, not its order) and is immutable, so the latest
    # EVALUATIONS_KEPT reports per problem are kept by content. A key costs a fifth of a walk.
    memo: dict = problem.__dict__.setdefault("_evaluations", {})
    key = (frozenset(selection.choices.items()), max_errors)
    known = memo.get(key)
    if known is not None:
        return known
    report = _evaluate(problem, selection, max_errors)
    if len(memo) >= EVALUATIONS_KEPT:
        del memo[next(iter(memo))]  # the oldest
    memo[key] = report
    return report


def _evaluate(problem: ExtractionProblem, selection: Selection, max_errors: int) -> SelectionReport:
    """:func:`evaluate_selection` without the memo."""
    # The extractors call this on every candidate (the solver's models, the checker, the tie-break): the walk
    # reads the problem's cached per-node child tuples rather than building them per visit
    choices = selection.choices
    nodes = problem.nodes
    backwards = problem.reversed_children
    errors: list[str] = []
    reached: dict[ClassId, None] = {}
    stack: list[ClassId] = list(reversed(problem.roots))
    pop, extend = stack.pop, stack.extend
    while stack:
        c = pop()
        if c in reached:
            continue
        reached[c] = None
        nid = choices.get(c)
        if nid is None:
            errors.append(f"class {c!r} is reached but has no chosen node")
            continue
        node = nodes.get(nid)
        if node is None or node.eclass != c:
            errors.append(f"class {c!r} chooses {nid!r}, which is not one of its nodes")
            continue
        extend(backwards[nid])
    if errors:
        return SelectionReport(tuple(errors[:max_errors]), tuple(reached), math.inf)
    cycle = _strict_cycle(problem, selection, reached)
    if cycle is not None:
        shown = " -> ".join(repr(choices[c]) for c in cycle)
        return SelectionReport((f"cycle without a may-close edge: {shown}",), tuple(reached), math.inf)
    cost = math.fsum([nodes[choices[c]].cost for c in reached])
    return SelectionReport((), tuple(reached), cost)


def dag_cost(problem: ExtractionProblem, selection: Selection) -> float:
    """The DAG cost of a valid selection; raises :class:`InvalidSelectionError` for an invalid one."""
    report = evaluate_selection(problem, selection)
    if not report.valid:
        raise InvalidSelectionError("; ".join(report.errors))
    return report.cost


def _strict_cycle(problem: ExtractionProblem, selection: Selection, reached: Mapping[ClassId, None]
                  ) -> list[ClassId] | None:
    """A cycle of reached classes whose chosen nodes link them through strict edges only, or None: the first
    that a depth-first walk meets, starting from the reached classes in order, children in order."""
    # Iterative three-colour DFS: the e-graphs of real programs are deeper than Python's recursion limit. Each
    # frame keeps its child iterator, which the inner for-loop resumes where it left off.
    kids = problem.strict_kids
    choices = selection.choices
    colour = dict.fromkeys(reached, 0)  # 0: not visited, 1: on the current path, 2: done
    for start in reached:
        if colour[start]:
            continue
        colour[start] = 1
        path: list[ClassId] = [start]
        frames = [iter(kids[choices[start]])]
        while frames:
            for nxt in frames[-1]:
                seen = colour[nxt]
                if seen == 1:
                    return path[path.index(nxt):] + [nxt]
                if seen == 0:
                    colour[nxt] = 1
                    path.append(nxt)
                    frames.append(iter(kids[choices[nxt]]))
                    break
            else:
                colour[path.pop()] = 2
                frames.pop()
    return None


def usable_nodes(problem: ExtractionProblem) -> set[NodeId]:
    """The nodes that may be part of a valid selection; every other node never is. Computed once per problem
    (the triage's bounds, the greedies and the solver all ask): every call returns the same set, which callers
    must not change.

    A node is usable when (1) it has no strict edge to its own class (a one-node cycle), (2) its strict child
    classes can be built bottom-up from usable nodes, i.e. it is derivable in the least fixpoint where a node
    becomes available once each strict child class has an available node, (3) each may-close child class has
    a usable node, and (4) none of its strict child classes leads back to its own class whatever is chosen
    below it (:func:`_closing_nodes`).  These are iterated to a fixpoint.  Why this is sound: in a valid
    selection the reached chosen nodes without their may-close edges form a DAG, so they are derived in (2)
    in a topological order, each of their may-close child classes is reached, hence holds one of them, and
    what lies below a strict child never comes back to the parent's class.
    """
    known = problem.__dict__.get("_usable")
    if known is not None:
        return known
    skids = problem.strict_kids
    candidates = {nid for nid, n in problem.nodes.items() if n.eclass not in skids[nid]}
    while True:
        derived = _derivable(problem, candidates)
        have = {problem.nodes[nid].eclass for nid in derived}
        kept = {nid for nid in derived
                if all(problem.nodes[nid].children[p] in have for p in problem.nodes[nid].may_close)}
        if kept == candidates:
            kept -= _closing_nodes(problem, kept)
            if kept == candidates:
                problem.__dict__["_usable"] = kept
                return kept
        candidates = kept


def _derivable(problem: ExtractionProblem, candidates: set[NodeId]) -> set[NodeId]:
    """The least fixpoint of (2) in :func:`usable_nodes`, over ``candidates`` only (a worklist)."""
    waiting: dict[NodeId, int] = {}
    watchers: dict[ClassId, list[NodeId]] = {}
    ready: list[NodeId] = []
    for nid in candidates:
        kids = problem.strict_kids[nid]
        waiting[nid] = len(kids)
        for c in kids:
            watchers.setdefault(c, []).append(nid)
        if not kids:
            ready.append(nid)
    done: set[NodeId] = set()
    available: set[ClassId] = set()
    while ready:
        nid = ready.pop()
        done.add(nid)
        c = problem.nodes[nid].eclass
        if c in available:
            continue
        available.add(c)
        for parent in watchers.get(c, ()):
            waiting[parent] -= 1
            if waiting[parent] == 0:
                ready.append(parent)
    return done


def must_reach(problem: ExtractionProblem, usable: Iterable[NodeId] | None = None) -> dict[ClassId, int]:
    """Per class derivable from ``usable`` nodes (default: all), a bitmask (bit i: the i-th class of
    ``problem.classes``) of the classes that every well-founded derivation of it reaches through strict edges,
    itself included: ``must[k] = {k} | intersection over k's derivable nodes m of the union of must[j] for m's
    strict children j``. Computed bottom-up from "no derivation yet" and only ever shrinking once defined, so
    it over-approximates nothing: every class in ``must[k]`` is in every derivation (by induction on the
    derivation's height). In a valid selection the reached chosen nodes without their may-close edges form a
    DAG, so every class of ``must[k]`` is reached whenever k is."""
    index = {c: i for i, c in enumerate(problem.classes)}
    skids = problem.strict_kids
    kids = dict(skids) if usable is None else {nid: skids[nid] for nid in usable}
    watchers: dict[ClassId, list[NodeId]] = {}
    for nid, ks in kids.items():
        for k in ks:
            watchers.setdefault(k, []).append(nid)
    must: dict[ClassId, int] = {}
    work = deque(nid for nid, ks in kids.items() if not ks)
    queued = set(work)
    while work:
        nid = work.popleft()
        queued.discard(nid)
        if any(k not in must for k in kids[nid]):
            continue  # not derivable yet; re-queued when its last child gets a derivation
        c = problem.nodes[nid].eclass
        mask = 1 << index[c]
        for k in kids[nid]:
            mask |= must[k]
        old = must.get(c)
        new = mask if old is None else old & mask
        if new != old:
            must[c] = new
            for parent in watchers.get(c, ()):
                if parent not in queued:
                    queued.add(parent)
                    work.append(parent)
    return must


def _closing_nodes(problem: ExtractionProblem, usable: set[NodeId]) -> set[NodeId]:
    """Nodes n of class c with a strict child class k such that every valid choice below k reaches c
    through strict edges (:func:`must_reach`): choosing n always closes a forbidden cycle."""
    index = {c: i for i, c in enumerate(problem.classes)}
    must = must_reach(problem, usable)
    skids = problem.strict_kids
    out: set[NodeId] = set()
    for nid in usable:
        bit = 1 << index[problem.nodes[nid].eclass]
        if any(must.get(k, 0) & bit for k in skids[nid]):
            out.add(nid)
    return out


def integer_costs(problem: ExtractionProblem) -> tuple[dict[NodeId, int], Fraction]:
    """Integer weights exactly proportional to the node costs: ``cost == weight * unit`` for every node.

    Every float is a dyadic rational, so multiplying by the least common denominator (a power of two) makes
    all costs integers without rounding; dividing by their gcd keeps the numbers small when the costs allow.
    Sums of weights therefore rank selections exactly as the exact sums of their costs do. Computed once per
    problem: every call returns the same pair, whose mapping callers must not change.
    """
    known = problem.__dict__.get("_integer_costs")
    if known is not None:
        return known
    exact = {nid: Fraction(n.cost) for nid, n in problem.nodes.items()}
    lcm = 1
    for f in exact.values():
        lcm = lcm * f.denominator // math.gcd(lcm, f.denominator)
    ints = {nid: int(f * lcm) for nid, f in exact.items()}
    g = 0
    for v in ints.values():
        g = math.gcd(g, v)
    g = g or 1
    out = {nid: v // g for nid, v in ints.items()}, Fraction(g, lcm)
    problem.__dict__["_integer_costs"] = out
    return out
