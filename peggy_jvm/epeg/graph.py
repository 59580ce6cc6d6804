"""The E-PEG: the e-graph of a PEG, with the Java analyses, and the PEG import.

What this module owns
    :class:`EPeg`, the generic :class:`~peggy_jvm.egraph.egraph.EGraph` made with the analyses of
    :mod:`.analyses` (in that order: const, variance, sort) and the accessors rules, extraction and validation read
    them through (``const``, ``variance``, ``varies``, ``sort``, ``is_linear``); :meth:`EPeg.add_peg`, the import
    of a :class:`~peggy_jvm.peg.graph.PEG`; :class:`PegInfo`, what the import remembers of the PEG.

Inputs / outputs
    A PEG (all its nodes or those reachable from given roots) -> e-classes, PEG node id -> class id. Rules then add
    nodes and unions through the generic e-graph's interface.

Invariants
    * Every imported theta first gets a placeholder class (it closes a cycle); the other nodes are added children
      first; then the theta node itself is added and merged into its placeholder (reason ``import``).
    * After :meth:`EPeg.add_peg`, every imported class's variance is within the PEG's own least-fixpoint variance
      (exact for a well-formed PEG, see :mod:`.analyses`) and each parameter's sort is its declared type.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..egraph.analysis import Analysis
from ..egraph.egraph import EGraph, EGraphError
from ..egraph.explain import Reason
from ..peg.ops import T
from .analyses import LINEAR_SORTS, ConstantAnalysis, SortAnalysis, VarianceAnalysis

if TYPE_CHECKING:
    from ..peg.graph import PEG

__all__ = ["EPeg", "PegInfo"]

_IMPORT = Reason("import")
_IR_SORTS = {"int": T.INT, "long": T.LONG, "float": T.FLOAT, "double": T.DOUBLE, "ref": T.REF}
# the facts' places in every class's data list (the order EPeg passes the analyses in); the accessors below read
# them directly, since they are called once per child in every make (the saturation's hot path)
_CONST, _VARIANCE, _SORT = 0, 1, 2


@dataclass
class PegInfo:
    """What :meth:`EPeg.add_peg` remembers of the imported PEG (rules consult it, e.g. ``this`` is non-null)."""

    name: str = ""
    is_static: bool | None = None
    roots: list[int] = field(default_factory=list)
    #: class made by copying another (loop peeling's copies of a loop body) -> that class: debug information,
    #: so that copied effects keep their statement's line
    copied_from: dict[int, int] = field(default_factory=dict)
    #: indexes of the parameters declared ``java/lang/String`` (the verifier holds them to a String or null)
    string_params: frozenset[int] = frozenset()
    #: class name -> it is final in every program the e-graph's PEGs come from (set by the validator; by default
    #: nothing is known to be final)
    final_class: Callable[[str], bool] = field(default=lambda _name: False)
    #: static field -> it only ever holds null or an array of exactly its declared class, in every program the
    #: e-graph's PEGs come from (set by the validator: rules/arrays.py ``exact_array_fields``)
    exact_array_field: Callable[[Any], bool] = field(default=lambda _field: False)


class EPeg(EGraph):
    """See the module docstring. ``extra_analyses`` come after the three Java ones."""

    def __init__(self, extra_analyses: Sequence[Analysis] = ()) -> None:
        super().__init__([ConstantAnalysis(), VarianceAnalysis(), SortAnalysis(), *extra_analyses])
        self.info = PegInfo()

    # -- the Java facts ---------------------------------------------------------------------------------------
    def const(self, cid: int) -> tuple[str, Any] | None:
        """The constant key (``("const.i", 3)``...) the class is known to equal, or None."""
        if self._parent[cid] != cid:  # (a representative needs no find: the commonest case, and no call)
            cid = self.find(cid)
        return self._classes[cid].data[_CONST]

    def variance(self, cid: int) -> int:
        """Bit mask of the loop depths the class may vary in."""
        if self._parent[cid] != cid:
            cid = self.find(cid)
        return self._classes[cid].data[_VARIANCE]

    def varies(self, cid: int, loop: int) -> bool:
        if self._parent[cid] != cid:
            cid = self.find(cid)
        return bool((self._classes[cid].data[_VARIANCE] >> loop) & 1)

    def sort(self, cid: int) -> T | None:
        if self._parent[cid] != cid:
            cid = self.find(cid)
        return self._classes[cid].data[_SORT]

    def is_linear(self, cid: int) -> bool | None:
        """True for heap values (sigma, outcomes, results), False for other values, None when unknown."""
        if self._parent[cid] != cid:
            cid = self.find(cid)
        s = self._classes[cid].data[_SORT]
        return None if s is None else s in LINEAR_SORTS

    # -- import -----------------------------------------------------------------------------------------------
    def add_peg(self, peg: PEG, roots: Sequence[int] | None = None) -> dict[int, int]:
        """Import ``peg`` (all nodes, or those reachable from ``roots``); returns PEG node id -> class id.

        Thetas close cycles, so each gets a placeholder class first; the other nodes are added children first
        (a theta child is its placeholder), then each theta node is added and merged into its placeholder. The
        variance facts are seeded with the PEG's own least-fixpoint variance (see :mod:`.analyses`), and the
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
                             if r in mapping],
                            string_params=frozenset(i for i, t in enumerate(getattr(peg, "param_types", None) or [])
                                                    if getattr(t, "cls", None) == "java/lang/String"),
                            final_class=self.info.final_class, exact_array_field=self.info.exact_array_field)
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
        params = getattr(peg, "param_types", None) or []
        for nid in ids:
            cid = mapping[nid]
            mask = 0
            for loop in var[nid]:
                mask |= 1 << loop
            self.merge_data(cid, VarianceAnalysis.name, mask)  # an intersection: only ever more precise
            n = peg.nodes[nid]
            if n.op == "param" and self.sort(cid) is None and isinstance(n.attr, int) and 0 <= n.attr < len(params):
                kind = getattr(getattr(params[n.attr], "kind", None), "value", None)
                if kind in _IR_SORTS:
                    self.merge_data(cid, SortAnalysis.name, _IR_SORTS[kind])
