"""The bridge between a saturated e-graph of one method and the generic extractor (``problem.py``).

What this module owns
    :func:`build_problem`: e-graph + root class -> :class:`PegProblem` (an :class:`ExtractionProblem` over the
    classes the root reaches, priced by :mod:`.cost`, plus the e-node behind each problem node and its price
    for the other goal, the tie-break's), and
    :func:`selection_to_peg`: a valid :class:`Selection` -> a sealed :class:`PEG` with one node per chosen class.

Inputs / outputs
    The e-graph after saturation (rebuilt: every node canonical), its root class and the PEG it was imported from
    (for the method's name, receiver and parameter types). Problem ids are strings: class ``c<id>`` and node
    ``c<id>.<k>`` (the k-th node of the class), so a blocking clause can name the nodes it blocks.

Invariants
    * :func:`build_problem` keeps the last problem it built: asked again about the same e-graph version, root,
      template and goal (the triage, then extraction), it returns that very problem, whose cached indexes and
      usable nodes (``extract/problem.py``) are then computed once; any change of the e-graph bumps its version.
    * Only classes reachable from the root through some node's children are in the problem; every node of such a
      class is (its children are reachable too).
    * A theta's second child is the only edge that may close a cycle (Tate Def 6.1); every other edge must be
      acyclic among chosen nodes, which is what ``extract/problem.py`` calls a valid selection.
    * :func:`selection_to_peg` creates every chosen theta first (:meth:`PEG.new_theta`), then the other nodes
      children first, then closes the thetas (:meth:`PEG.set_theta`); only the chosen reached classes appear.
      It also returns which problem nodes each PEG node stands for (PEG hash-consing may fold two classes whose
      chosen nodes became identical into one node), so a checker can answer in terms of the selection.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..codecost import Goal
from ..epeg import EPeg
from ..extract.problem import ExtractionProblem, Node, NodeId, Selection
from ..peg.graph import PEG
from ..peg.ops import OPS
from .cost import HANDLER_READS, THROWS, loop_depths, max_loop_depth, node_cost

__all__ = ["PegProblem", "build_problem", "cold_priced_exactly", "selection_to_peg"]


@dataclass(frozen=True)
class PegProblem:
    problem: ExtractionProblem
    #: problem node id -> the e-node ``(op, attr, child class ids)`` it stands for (children canonical)
    enodes: dict[NodeId, tuple]
    root: str
    #: the PEG the e-graph was made from (metadata for the extracted PEG)
    template: PEG
    deepest: int = 0
    meta: dict = field(default_factory=dict)
    #: problem node id -> its cost for the other goal (size when extracting for speed, speed for size): what
    #: :func:`.tiebreak.break_ties` compares among selections of equal cost
    secondary: dict[NodeId, float] = field(default_factory=dict)


def _cid(c: int) -> str:
    return f"c{c}"


def class_number(cid: str) -> int:
    """The e-class id a problem class id names (the inverse of the ``c<id>`` naming)."""
    return int(cid[1:])


#: the last problem built and what it was built from (e-graph serial and version, root class, template PEG,
#: goal): the triage (``peggy_jvm.triage``) and then extraction ask for the same method's problem, which keeps
#: the indexes and the usable nodes computed for it
_LAST: tuple[tuple[int, int, int, PEG, Goal], PegProblem] | None = None


def build_problem(eg: EPeg, root: int, template: PEG, goal: Goal = Goal.SPEED) -> PegProblem:
    """The extraction problem of the classes ``root`` reaches in ``eg`` (rebuilt), priced by :mod:`.cost` for
    ``goal``. Asked again about an unchanged e-graph (the same version), the same problem is returned."""
    global _LAST
    key = (eg.serial, eg.version, eg.find(root), template, goal)
    last = _LAST
    if last is not None and last[0][:3] == key[:3] and last[0][3] is template and last[0][4] is goal:
        return last[1]
    pp = _build_problem(eg, root, template, goal)
    _LAST = (key, pp)
    return pp


def _build_problem(eg: EPeg, root: int, template: PEG, goal: Goal) -> PegProblem:
    find = eg.find
    root = find(root)
    deepest = max_loop_depth(template)
    for cid in eg.class_ids():  # rules may have made loop operators of depths the PEG did not have (they don't)
        for op, attr, _ in eg.nodes(cid):
            if op in ("theta", "eval", "pass") and isinstance(attr, int):
                deepest = max(deepest, attr)
    other = Goal.SIZE if goal is Goal.SPEED else Goal.SPEED
    nodes: list[Node] = []
    enodes: dict[NodeId, tuple] = {}
    secondary: dict[NodeId, float] = {}
    seen = {root}
    stack = [root]
    hot = _hot_classes(eg, root)
    while stack:
        c = stack.pop()
        depth = loop_depths(eg.variance(c), deepest)
        for k, (op, attr, children) in enumerate(eg.nodes(c)):
            kids = tuple(find(x) for x in children)
            nid = f"{_cid(c)}.{k}"
            cold = hot is not None and (c not in hot or op in hot[c])
            nodes.append(Node(nid, op, node_cost(op, depth, goal, cold), _cid(c), tuple(_cid(x) for x in kids),
                              frozenset({1}) if op == "theta" else frozenset()))
            enodes[nid] = (op, attr, kids)
            secondary[nid] = node_cost(op, depth, other, cold)
            for x in kids:
                if x not in seen:
                    seen.add(x)
                    stack.append(x)
    problem = ExtractionProblem.build(nodes, [_cid(root)], name=template.name or "method")
    return PegProblem(problem, enodes, _cid(root), template, deepest, secondary=secondary)


def _hot_classes(eg: EPeg, root: int) -> dict[int, frozenset[str]] | None:
    """The classes ``root`` reaches other than only through the operands of a throw (``cost.THROWS``; an
    ``athrow`` only when no class reads a caught exception, as ``cost.cold_nodes`` says), each with the throw
    operators among its nodes (priced cold themselves); None when there is no throw (nothing is cold). A class
    cold here is cold in every selection that reaches it (a selection's paths are paths of the e-graph), so a
    selection's price in this problem is at least its PEG's ``cost.peg_cost``."""
    boundary = {op for op in THROWS if eg.classes_with_op(op)}
    if "athrow" in boundary and any(eg.classes_with_op(op) for op in HANDLER_READS):
        boundary.discard("athrow")
    if not boundary:
        return None
    find = eg.find
    hot: dict[int, frozenset[str]] = {}
    stack = [find(root)]
    while stack:
        c = stack.pop()
        if c in hot:
            continue
        ops = eg.nodes(c)
        hot[c] = frozenset(op for op, _, _ in ops if op in boundary)
        for op, _, children in ops:
            if op not in boundary:
                stack.extend(find(x) for x in children if find(x) not in hot)
    return hot


def cold_priced_exactly(eg: EPeg, root: int) -> bool:
    """Whether every selection's price in the problem of ``root`` (:func:`build_problem`) is its PEG's
    ``cost.peg_cost`` as far as coldness goes: no class that is hot (:func:`_hot_classes`) is also reachable
    through a throw's operands, but for classes whose every node costs nothing (the heap before a throw, a
    parameter, a projection: priced 0 hot or cold). A class hot and reachable only so is hot in every selection,
    a class not hot is cold in every selection, so then each is priced alike in the problem and in the PEG."""
    hot = _hot_classes(eg, root)
    if hot is None:
        return True
    find = eg.find
    boundary = {op for c in hot for op in hot[c]}
    stack = [find(x) for c in hot for op, _, children in eg.nodes(c) if op in boundary for x in children]
    seen: set[int] = set()
    while stack:
        c = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        if c in hot and any(OPS[op].cost for op, _, _ in eg.nodes(c)):
            return False
        stack.extend(find(x) for _, _, children in eg.nodes(c) for x in children if find(x) not in seen)
    return True


def selection_to_peg(pp: PegProblem, selection: Selection) -> tuple[PEG, dict[int, list[NodeId]]]:
    """The PEG of a valid selection and, per PEG node, the problem nodes it stands for. Raises ``ValueError``
    when a reached class has no choice or the strict edges among chosen nodes form a cycle."""
    t = pp.template
    peg = PEG(name=t.name, class_name=t.class_name, is_static=t.is_static, synchronized=t.synchronized,
              param_types=list(t.param_types))
    problem = pp.problem
    chosen: dict[str, NodeId] = {}
    order: list[str] = []  # reached classes, depth-first from the root
    stack = [pp.root]
    while stack:
        c = stack.pop()
        if c in chosen:
            continue
        nid = selection.get(c)
        if nid is None or nid not in problem.nodes or problem.nodes[nid].eclass != c:
            raise ValueError(f"class {c} is reached but has no valid choice")
        chosen[c] = nid
        order.append(c)
        stack.extend(reversed(problem.nodes[nid].children))
    ids: dict[str, int] = {}
    for c in order:  # thetas first: they close cycles, so other nodes may refer to them before they are set
        op, attr, _ = pp.enodes[chosen[c]]
        if op == "theta":
            ids[c] = peg.new_theta(attr)
    for c in order:  # everything else children first (strict edges are acyclic in a valid selection)
        if c in ids:
            continue
        work = [(c, False)]
        on_path: set[str] = set()
        while work:
            x, expanded = work.pop()
            if x in ids:
                continue
            node = problem.nodes[chosen[x]]
            if expanded:
                on_path.discard(x)
                op, attr, _ = pp.enodes[chosen[x]]
                ids[x] = peg.add(op, attr, tuple(ids[k] for k in node.children))
                continue
            if x in on_path:
                raise ValueError(f"class {x} is on a cycle that does not pass through a theta's second child")
            on_path.add(x)
            work.append((x, True))
            for k in node.children:
                if k not in ids:
                    if k in on_path:
                        raise ValueError(f"class {k} is on a cycle that does not pass through a theta's second "
                                         "child")
                    work.append((k, False))
    for c in order:
        op, _, _ = pp.enodes[chosen[c]]
        if op == "theta":
            kids = problem.nodes[chosen[c]].children
            peg.set_theta(ids[c], ids[kids[0]], ids[kids[1]])
    peg.root = ids[pp.root]
    peg.seal()
    back: dict[int, list[NodeId]] = {}
    for c in order:
        back.setdefault(ids[c], []).append(chosen[c])
    return peg, back
