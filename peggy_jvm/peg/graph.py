"""PEG nodes and the graph that owns them.

What this module owns
    :class:`Node` (operator name from :data:`.ops.OPS`, a hashable attribute, child node ids) and :class:`PEG`
    (the node table, hash-consing, the method's root, its parameter types), plus graph facts every later stage
    needs: reachability from the root and the loop depths each node varies in (Tate's invariant_l).

Inputs / outputs
    The builder (:mod:`.build`) creates a PEG from an IR method; the evaluator, the e-graph, the extractor and the
    reverter read it. A PEG is not changed after :meth:`PEG.seal`.

Invariants
    * Node ids are indexes into :attr:`PEG.nodes`; children are ids of the same PEG.
    * Every node except a theta is hash-consed: one id per (op, attr, children). Thetas are created before
      their children exist (they close cycles), so equal thetas can exist until :func:`.build` minimizes the
      graph (bisimulation), after which the PEG is a minimal graph: no two nodes have the same meaning
      structurally.
    * Every cycle passes through the second child of a theta.
    * Float and double constants hold their raw bits (an int) as attribute, so -0.0, 0.0 and NaNs stay apart.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable

from .ops import OPS, Role


@dataclass(frozen=True, slots=True)
class Node:
    op: str
    attr: Hashable
    children: tuple[int, ...]

    def int_attr(self) -> int:
        """``attr`` where the op makes it an int: a loop node's (theta, eval, pass) depth, a param's index, a
        constant's value (const.i, const.l) or raw bits (const.f, const.d). The attr's type follows the op, which
        one Node type cannot tell mypy: this says it once, checked."""
        a = self.attr
        assert isinstance(a, int), (self.op, a)
        return a


@dataclass(eq=False)
class PEG:
    """A PEG under construction or sealed. ``param_types`` are the IR types of the parameters (receiver
    first); ``root`` is a ``return``/``throw``/``phi`` of results."""

    name: str = ""
    class_name: str = ""
    is_static: bool = True
    synchronized: bool = False
    nodes: list[Node] = field(default_factory=list)
    root: int = -1
    param_types: list = field(default_factory=list)
    _index: dict[Node, int] = field(default_factory=dict, repr=False)
    sealed: bool = False
    #: effect node -> bytecode offset of the statement it was built from (debug information only: it gives the
    #: rewritten code its line numbers and takes no part in the PEG's meaning, equality or hashing)
    origins: dict[int, int] = field(default_factory=dict, repr=False)
    #: value theta -> (local slot, bytecode offset of its loop's header) when it was built from the variable of
    #: that slot: at that offset of the original code, in each iteration, the slot holds the theta's value
    #: (debug information only, like ``origins``: the rewritten code's LocalVariableTable)
    locals: dict[int, tuple[int, int]] = field(default_factory=dict, repr=False)
    #: :meth:`variance` of the sealed PEG: (the node list it was computed on, its length, the answer)
    _variance: tuple | None = field(default=None, repr=False, compare=False)

    def add(self, op: str, attr: Hashable = None, children: tuple[int, ...] = ()) -> int:
        assert not self.sealed
        node = Node(op, attr, tuple(children))
        nid = self._index.get(node)
        if nid is None:
            nid = len(self.nodes)
            self.nodes.append(node)
            self._index[node] = nid
        return nid

    def new_theta(self, loop: int) -> int:
        """A theta whose children are set later with :meth:`set_theta` (not hash-consed)."""
        assert not self.sealed
        self.nodes.append(Node("theta", loop, (-1, -1)))
        return len(self.nodes) - 1

    def set_theta(self, nid: int, init: int, nxt: int) -> None:
        n = self.nodes[nid]
        assert n.op == "theta"
        self.nodes[nid] = Node("theta", n.attr, (init, nxt))
        self._variance = None

    def seal(self) -> None:
        self.sealed = True

    def __len__(self) -> int:
        return len(self.nodes)

    def op(self, nid: int) -> str:
        return self.nodes[nid].op

    # -- graph facts --------------------------------------------------------------------------------------
    def reachable(self, roots: list[int] | None = None) -> list[int]:
        """Ids reachable from ``roots`` (default: the root), in depth-first preorder."""
        seen: set[int] = set()
        order: list[int] = []
        stack = list(reversed(roots if roots is not None else [self.root]))
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            order.append(n)
            stack.extend(reversed(self.nodes[n].children))
        return order

    def variance(self) -> list[frozenset[int]]:
        """For every node, the loop depths in which its value varies (Tate: not invariant_l). A theta_l varies
        in l and wherever its children vary; eval_l and pass_l remove l from what varies in their sequence
        (eval adds what its index varies in); every other node varies where its children do. Computed as a
        least fixpoint, so cycles through thetas are fine. A sealed PEG's answer is kept (the stages ask for it
        several times per PEG: check, cost, the reverter); each caller gets its own list."""
        memo = self._variance
        if memo is not None and memo[0] is self.nodes and memo[1] == len(self.nodes):
            return list(memo[2])
        var = self._compute_variance()
        if self.sealed:
            self._variance = (self.nodes, len(self.nodes), var)
            return list(var)
        return var

    def _compute_variance(self) -> list[frozenset[int]]:
        nodes = self.nodes
        var: list[frozenset[int]] = [frozenset()] * len(nodes)
        # only a theta makes anything vary (eval and pass only remove depths): without one, nothing varies. Most
        # methods have no loop, and the stages ask for this several times per method (check, cost, revert)
        if not any(n.op == "theta" for n in nodes):
            return var
        users: list[list[int]] = [[] for _ in nodes]
        for i, n in enumerate(nodes):
            for c in n.children:
                users[c].append(i)
        work = list(range(len(nodes)))
        in_work = [True] * len(nodes)
        while work:
            i = work.pop()
            in_work[i] = False
            n = nodes[i]
            if n.op == "theta":
                v = var[n.children[0]] | var[n.children[1]] | {n.int_attr()}
            elif n.op == "eval":
                v = (var[n.children[0]] - {n.int_attr()}) | var[n.children[1]]
            elif n.op == "pass":
                v = var[n.children[0]] - {n.int_attr()}
            else:
                v = frozenset().union(*(var[c] for c in n.children)) if n.children else frozenset()
            if v != var[i]:
                var[i] = frozenset(v)
                for u in users[i]:
                    if not in_work[u]:
                        in_work[u] = True
                        work.append(u)
        return var

    def effect_count(self) -> int:
        return sum(1 for i in self.reachable() if OPS[self.nodes[i].op].role is Role.EFFECT)

    def describe(self, nid: int) -> str:
        n = self.nodes[nid]
        a = "" if n.attr is None else f"[{n.attr}]"
        return f"{n.op}{a}"



def bisimulation_blocks(nodes: list[Node], reach: list[int]) -> dict[int, int]:
    """The coarsest bisimulation over ``reach``: node -> block number. Nodes in one block have the same
    unfolding, hence the same meaning in a well-formed PEG (every cycle through a theta's second child).

    Partition refinement from (op, attr, arity). Without thetas' children the graph is acyclic, so each pass
    gives the thetas their new blocks from the previous pass (their children come later) and then every other
    node, children first, from its children's new blocks: one pass settles the acyclic part, and only what flows
    around loops needs more passes. Bisimilar nodes never get apart (by induction along the pass), and the
    partition a pass leaves unchanged is stable, hence the coarsest bisimulation."""
    members = set(reach)
    order: list[int] = []  # non-theta nodes, children (other than thetas) first
    thetas = [n for n in reach if nodes[n].op == "theta"]
    placed: set[int] = set(thetas)
    for start in reach:
        if start in placed:
            continue
        stack = [start]
        while stack:
            n = stack[-1]
            if n in placed:
                stack.pop()
                continue
            todo = [c for c in nodes[n].children if c not in placed and c in members]
            if todo:
                stack.extend(todo)
                continue
            placed.add(n)
            order.append(n)
            stack.pop()
    ids: dict[object, int] = {}
    cls = {n: ids.setdefault((nodes[n].op, nodes[n].attr, len(nodes[n].children)), len(ids)) for n in reach}
    while True:
        ids2: dict[object, int] = {}
        new: dict[int, int] = {}
        for n in thetas:
            new[n] = ids2.setdefault((cls[n], tuple(cls[c] for c in nodes[n].children)), len(ids2))
        for n in order:
            new[n] = ids2.setdefault((cls[n], tuple(new[c] for c in nodes[n].children)), len(ids2))
        if len(ids2) == len(ids):
            return cls
        ids, cls = ids2, new
