"""The e-class analysis protocol (egg's ``Analysis``): a fact kept per e-class and repaired with the e-graph.

What this module owns
    :class:`Analysis`, the interface an e-graph's analyses implement. An :class:`~.egraph.EGraph` is given its
    analyses when it is made (any number, composed: each class keeps one fact per analysis, in the order given)
    and knows nothing of what they mean; the analyses of PEGs with Java semantics are
    :mod:`peggy_jvm.epeg.analyses`.

The protocol
    * ``make(eg, node)``: the fact of a new node, computed from its children's CURRENT facts (read through
      ``eg``, whose type the analysis chooses: the parameter ``G``).
    * ``merge(a, b)``: the fact of a class that two facts hold for. It must be commutative, associative and
      idempotent and only ever make facts more precise. Two facts that contradict each other mean some union
      was unsound: ``merge`` appends the pair to :attr:`Analysis.conflicts` (what the e-graph's ``conflicts``
      report) and returns either.
    * ``modify(eg, cid)``: called after the class ``cid`` got a new node or a more precise fact (egg: after
      ``make`` in ``add``, after ``merge`` in ``union`` and in ``rebuild``); it may add nodes and unions (e.g.
      put a folded constant's node into the class). The default does nothing, and an e-graph calls only the
      ``modify`` of analyses that override it (so analyses without one cost nothing there).
    * ``unknown``: the fact of a class that exists before its nodes (a placeholder closing a cycle). It must be
      sound for any value, since the class's nodes are not known yet.

Why the facts stay sound with cycles
    The facts are maintained by induction over TIME, egg-style, not as a fixpoint of equations (a least fixpoint
    can be unsound in an e-graph: a class ``{f(a), g(self)}`` could justify itself through the node that refers
    to itself). A new node's fact is made from its children's current facts (each already sound), a union
    merges two sound facts, and when a child's fact changes its parents are made again and merged in; every step
    keeps every fact sound.

Invariant (after :meth:`EGraph.rebuild <peggy_jvm.egraph.egraph.EGraph.rebuild>`)
    For every class ``C``, node ``n`` in ``C`` and analysis ``A``: ``A.merge(data(C), A.make(n)) == data(C)``,
    with no new conflict.
"""
from __future__ import annotations

from typing import Any, Generic, TypeVar

from .types import ClassId, ENode

__all__ = ["Analysis"]

G = TypeVar("G")  # the e-graph type an analysis reads facts through (EGraph or a subclass of it)
D = TypeVar("D")  # the fact


class Analysis(Generic[G, D]):
    """See the module docstring. ``name`` is how :meth:`EGraph.data` asks for the analysis' facts."""

    name: str = ""
    unknown: Any = None

    def __init__(self) -> None:
        self.conflicts: list[tuple[Any, Any]] = []

    def make(self, eg: G, node: ENode) -> D:  # pragma: no cover - interface
        raise NotImplementedError

    def merge(self, a: D, b: D) -> D:  # pragma: no cover - interface
        raise NotImplementedError

    def modify(self, eg: G, cid: ClassId) -> None:
        """Nothing by default (see the module docstring)."""
