"""Optimal extraction as weighted partial MaxSAT, solved by RC2 (python-sat) within a work budget.

What this module owns
    The encoding of an :class:`ExtractionProblem` into weighted partial MaxSAT (:func:`encode`), the solver
    driver (:func:`solve`) with its anytime behaviour, its time bound and its hook for a validity checker
    that rejects solutions with blocking clauses, and the result (:class:`ExtractionResult`, :class:`Status`).

The encoding (variables: ``x_n`` "node n chosen", ``u_c`` "class c used")
    hard  * roots are used; ``u_c -> x_n1 | ... | x_nk`` and at most one ``x_n`` per class (pairwise for
            small classes, a sequential counter for large ones); ``x_n -> u_c`` for n's class c; a class with
            a single node has ``u_c = x_n`` (one variable).  Forced classes and fixed nodes of ``shrink.py``
            are unit clauses.
          * ``x_n -> u_d`` for every child class d of n.
          * acyclicity, only where a cycle is possible: the strongly connected components of the class graph
            whose edges are the *strict* (cycle-forbidden) child edges.  A chosen node n of class c with a
            strict edge to class d of the same component implies an edge literal ``e(c, d)`` (shared by all
            nodes of that pair); the edge literals of each component are kept acyclic by *vertex elimination*
            (Rankooh and Rintanen, AAAI 2022: eliminating class v in a min-degree order adds
            ``e(u,v) & e(v,w) -> e(u,w)`` for its remaining neighbours, and ``-e(u,v) | -e(v,u)``; exactness
            argued in :func:`_elimination_clauses`), unless its fill-in would need more than ``_ELIM_FACTOR``
            times the clauses of the fallback: binary levels, each class a ``ceil(log2 s)``-bit number for a
            component of size s, ``e(c, d) -> level(c) > level(d)`` by a lexicographic comparator (3 clauses
            per bit).  Edges that may close a cycle get no constraint.  (The research note measured levels
            beating lazy cycle cuts by far; elimination beats levels on the tensat e-graphs, whose cycles are
            short: plain RC2 finds tensat/vgg's optimum in ~10 s instead of none in 60 s.)
          * when some cost is negative (or an extra clause asks for a node to be chosen), "used" must also
            mean "reached": ``u_c -> x_p1 | ... | x_pm`` over c's parents, for every non-root class.
          * extra hard clauses and the checker's blocking clauses, over ``x_n``.
    soft  one unit clause per non-fixed node of non-zero cost: ``-x_n`` with weight ``w_n`` if ``w_n > 0``,
          ``x_n`` with weight ``-w_n`` if ``w_n < 0`` (the constant ``w_n`` goes to the objective's offset).

Cost scaling (floats to RC2's integer weights)
    ``problem.integer_costs``: every float is a dyadic rational, so all costs are multiplied by the least
    common (power-of-two) denominator and divided by the gcd of the results.  The integer weights are
    *exactly* proportional to the costs, so the MaxSAT objective ranks selections exactly as the exact sums of
    their float costs do and never merges two different costs; ``math.fsum`` in ``problem.py`` rounds those
    exact sums monotonically, so the float DAG costs reported never contradict the integer ranking.  Weights
    may be large Python ints (the tensat e-graphs need 2**39); RC2 only adds and compares them.

Solving (anytime, bounded)
    1. greedy (``greedy.py``: tree-cost greedy on the original and on the shrunk problem, the chain
       greedy and the bottom-up DAG greedy on the original): the best valid one is the incumbent, if it
       satisfies the extra clauses and the checker (the checker's clauses for a rejected greedy selection are
       added to the encoding straight away).  The DAG greedy is extraction-gym's baseline: having it as an
       incumbent makes the result never worse than that baseline whenever it finishes within its work;
    2. on a problem of the quadratic shape (``quadratic.py``: Max-2-SAT and max-cut as e-graphs; never a PEG's
       in practice), a tabu search from the incumbent within a quarter of the extra work share (of the whole
       share, whatever the DAG greedy spent of it), then the
       spectral bound at the best incumbent's weight (checked in exact integer arithmetic): when it holds, the
       incumbent is optimal and no solver runs (hamming6-2 and johnson8-4-4, whose max-cut the bound meets);
    3. shrinking (``shrink.py``) also drops the nodes that only occur in selections dearer than the
       incumbent; if the incumbent reaches a solver-free lower bound (the cheapest node of each forced class
       plus every negative cost elsewhere, or with non-negative costs the dearest unavoidable chain of
       nodes or the disjoint-sum bound, whichever is largest), it is optimal and no solver runs; a solver's
       solution that reaches it
       later ends the search the same way (see docs/cost-model.md, "Proving optimality");
    4. otherwise the Lagrangian bound (``bound.py``: the LP relaxation's dual by subgradient ascent, exact
       integer arithmetic) runs within what is left of the extra work share (below) until its ascent
       stalls: it raises the solver-free bound (an incumbent meeting it is optimal with no solver; a
       solution meeting it later ends the search), and the nodes its reduced costs rule out (only in
       selections dearer than the incumbent) are dropped before the problem is shrunk and encoded again;
    5. then each :class:`SolverConfig` runs in turn, in this process, in a fixed order: by default
       RC2Stratified with core exhaustion, then plain RC2 with core exhaustion and minimisation, both on
       Glucose 3 (when a stratified config would search exactly like a plain one, which happens with a single
       soft weight, it becomes plain RC2 on Maplesat instead); plain RC2's oracle starts its polarities at the
       incumbent, the stratified one at the solver's own defaults.  Each gets ``work`` units: its oracle's
       unit propagations summed over every oracle call RC2 makes (its core heuristics included: all go through ``_call_oracle``, which sets the rest of the budget
       as the call's ``prop_budget`` and uses ``solve_limited``), plus the formula's variable count per call
       (what decoding a model costs); a call cut short ends that config, keeping the best model found so
       far.  The first proof ends the search; the next config starts from the best incumbent.
       No clock and no race decides anything: the same problem and options give the same selection on any
       machine, under any load, with any ``--jobs`` (SAT solvers are deterministic given their input).
       Every SAT model RC2's oracle finds along the way satisfies all hard clauses, so improving ones are
       kept as they appear: that is ``best_found`` when no proof comes within the work budget.  The cores
       a configuration proved before its work ran out bound the optimum from below (RC2's cost,
       :meth:`_Worker.core_bound`): that bound is kept, the next configuration and the neighbourhood search
       end when a solution meets it, and a selection already meeting it is optimal.
    6. when no configuration proved its result: large-neighbourhood search (:func:`_lns`), rounds of RC2 on the
       formula with every class the incumbent reaches outside a ball of classes held at the incumbent's node,
       improving the incumbent where whole-problem proofs are out of reach.
    Work: each configuration gets ``work`` units; one more share of ``work`` pays for the DAG greedy (candidates
    priced, bit-set operations on class sets, classes added to one), the quadratic phase (variables scanned and
    updated per tabu move, entries updated by the bound's eliminations), the encoding (one unit per clause), the
    Lagrangian bound (nodes and constraints per iteration, and the second encoding) and the neighbourhood search
    (its oracle work and its formulas' clauses), in that order, so those phases are bounded by work as well
    (``ExtractionResult.extra_work``).  The tree and chain greedies and shrinking are linear-time passes and
    are not counted.
    A proof is an RC2 optimum whose decoded selection costs exactly RC2's lower bound (with negative costs
    and may-close edges an unreachable "island" could make them differ; then it is only ``best_found``).

The checker hook (for the phi-profile checker of DESIGN section 4)
    ``checker(problem, selection)`` returns ``()`` to accept a valid selection, or clauses (:data:`NodeClause`:
    a disjunction of ``(node id, chosen?)`` literals over the *reached* chosen nodes) that every acceptable
    selection satisfies and this one violates (to block "these nodes together": ``((a, False), (b, False))``).
    The worker adds them with ``add_clause`` and calls RC2 again, incrementally, up to ``max_blocks`` times.
    A checker with a work budget of its own raises :class:`OutOfWork` when it is spent: the search stops there
    (deterministically: the checker is asked the same questions in the same order on every run).
    Because those constraints are not known in advance, shrinking does not use dominance when a checker is
    given, and RC2Stratified runs without clause hardening (hardening plus ``add_clause`` gave a wrong UNSAT
    in the research note).  An UNSAT after blocking is re-checked by a fresh SAT call before it is believed;
    if that finds a model, RC2 is rebuilt from scratch with all clauses.  The checker must be a pure function
    of its arguments (and bounded by work, not time, for the result to be reproducible).

Invariants
    * Every kept selection has been checked by :func:`evaluate_selection`, the extra clauses and the checker;
      one that fails is dropped.
    * ``lower_bound`` is always proved (solver-free bounds, the cores of an RC2 run cut short, or an RC2
      optimum), capped at the result's cost.
    * The result is never worse than the greedy incumbents: status ``optimal`` (proved), ``best_found``
      (found by a solver or the neighbourhood search, strictly better than every greedy, not proved),
      ``greedy`` (a greedy's selection, not proved), or ``none`` (only with
      extra clauses or a checker: neither greedy nor the solver produced an acceptable selection within the budget).
"""
from __future__ import annotations

import heapq
import time
import typing
from collections import deque
from dataclasses import dataclass, field, replace
from enum import Enum
from fractions import Fraction
from typing import Callable, Iterable, Sequence

import networkx as nx
from pysat.card import CardEnc, EncType
from pysat.examples.rc2 import RC2, RC2Stratified
from pysat.formula import WCNF, IDPool
from pysat.solvers import Solver

from ..budget import DEFAULT_SOLVER_WORK
from .bound import lagrangian_bound
from .greedy import chain_extract, dag_greedy_extract, greedy_extract
from .problem import (ClassId, ExtractionProblem, NodeId, Selection, evaluate_selection, integer_costs,
                      usable_nodes)
from .quadratic import quadratic_model, spectral_proves, tabu_search
from .shrink import ShrinkResult, ShrinkStats, disjoint_sum_bound, path_lower_bound, shrink

__all__ = [
    "Literal", "NodeClause", "Checker", "Status", "SolverConfig", "DEFAULT_CONFIGS", "Encoding",
    "ExtractionResult", "OutOfWork", "encode", "solve", "clause_holds",
]

#: ``(node id, True)``: the node is chosen and reached; ``(node id, False)``: it is not
Literal = tuple[NodeId, bool]
#: a disjunction of literals
NodeClause = tuple[Literal, ...]
#: ``checker(problem, selection) -> clauses``; empty means the selection is accepted
Checker = Callable[[ExtractionProblem, Selection], Sequence[NodeClause]]

_PAIRWISE_AMO_MAX = 6  # classes up to this size get pairwise at-most-one clauses (at most 15), larger a counter


class Status(Enum):
    OPTIMAL = "optimal"
    BEST_FOUND = "best_found"
    GREEDY = "greedy"
    NONE = "none"


@dataclass(frozen=True)
class SolverConfig:
    """One RC2 configuration; they run one after the other, each within its own work budget."""

    name: str
    stratified: bool
    solver: str = "g3"
    exhaust: bool = True
    minz: bool = True
    adapt: bool = False
    blo: str = "div"
    #: start the SAT oracle's polarities at the incumbent selection
    phases: bool = True


# Measured on the extraction-gym instances, one config at a time: core minimisation makes RC2Stratified miss
# tensat/resnet50 (no proof in 25 s; 0.5-1.5 s without it) and gains nothing elsewhere; plain RC2 keeps it
# (the research note's configuration).  The two prove different instances fast, so they run side by side.
# Starting the stratified oracle at the incumbent's polarities kept it near that incumbent on tensat/resnet50
# (no proof within 2e6 units, best_found 4.38847); at the solver's defaults it proves the optimum 4.38579 with
# 0.58e6 units, and every other instance of ../shared/extraction keeps its status and cost
# (scripts/bench_extract.py --work 2000000).  Plain RC2 keeps the incumbent's polarities: its models feed the
# best_found results where no proof comes.
DEFAULT_CONFIGS: tuple[SolverConfig, ...] = (
    SolverConfig("rc2-strat", stratified=True, minz=False, phases=False),
    SolverConfig("rc2", stratified=False, minz=True),
)
#: the default work budget of one configuration: its SAT oracle's unit propagations summed over all of RC2's
#: oracle calls, plus the formula's variable count per call (docs/cli.md, "Budgets")
DEFAULT_WORK = DEFAULT_SOLVER_WORK


# ============================================================================================ encoding

@dataclass
class Encoding:
    """The MaxSAT formula of a (shrunk) problem and the maps back to nodes."""

    problem: ExtractionProblem
    wcnf: WCNF
    #: node ids in variable order: ``x`` of ``nodes[i]`` is variable ``i + 1``
    nodes: list[NodeId]
    var: dict[NodeId, int]
    #: integer weight per node (exactly proportional to its cost, see the module docstring)
    weight: dict[NodeId, int]
    #: real cost = integer objective * unit
    unit: Fraction
    #: objective = RC2 cost + offset (fixed nodes and negative weights)
    offset: int
    #: a lower bound on the optimum objective (of the shrunk problem), without solving
    trivial_bound: int
    #: a clause reduced to nothing: the problem has no acceptable selection
    infeasible: bool = False
    stats: dict[str, int] = field(default_factory=dict)

    def objective(self, nodes: Iterable[NodeId]) -> int:
        return sum(self.weight[n] for n in nodes)

    def to_cost(self, objective: int) -> float:
        return float(objective * self.unit)

    def translate(self, clause: NodeClause) -> list[int] | None:
        return _translate(self.var, clause)


def _translate(var: dict[NodeId, int], clause: NodeClause) -> list[int] | None:
    """``clause`` over ``x`` variables; None when it holds anyway (a node the encoding dropped is never
    chosen).  An empty list means the clause cannot hold."""
    out: list[int] = []
    for nid, positive in clause:
        v = var.get(nid)
        if v is None:
            if not positive:
                return None
            continue
        out.append(v if positive else -v)
    return out


def encode(shrunk: ShrinkResult, extra_hard: Sequence[NodeClause] = (), *,
           weights: tuple[dict[NodeId, int], Fraction] | None = None, justify: bool | None = None) -> Encoding:
    """Encode ``shrunk.problem`` (see the module docstring).

    ``weights`` is ``problem.integer_costs`` of the original problem (so that selections using nodes the
    shrinking dropped can be weighed too); by default, of the shrunk one.  ``justify`` forces "used means
    reached" on or off.
    """
    p = shrunk.problem
    nodes = list(p.nodes)
    var = {nid: i + 1 for i, nid in enumerate(nodes)}
    pool = IDPool(start_from=len(nodes) + 1)
    weight, unit = weights if weights is not None else integer_costs(p)
    hard: list[list[int]] = []
    stats = {"amo_counter": 0, "scc_classes": 0, "level_pairs": 0, "elim_classes": 0, "elim_clauses": 0}

    if justify is None:
        justify = p.has_negative_cost or any(pos for cl in extra_hard for _, pos in cl)

    used: dict[ClassId, int] = {}
    for c, members in p.classes.items():
        if len(members) == 1:
            used[c] = var[members[0]]
            continue
        u = pool.id(("u", c))
        used[c] = u
        xs = [var[n] for n in members]
        hard.append([-u] + xs)
        hard.extend([-x, u] for x in xs)
        if len(xs) <= _PAIRWISE_AMO_MAX:
            hard.extend([-a, -b] for i, a in enumerate(xs) for b in xs[i + 1:])
        else:
            stats["amo_counter"] += 1
            hard.extend(CardEnc.atmost(xs, bound=1, vpool=pool, encoding=EncType.seqcounter).clauses)
    # in the problem's own order, not the sets' (string hashing varies per process: the clause order would,
    # and with it the SAT solver's search and which of equally cheap selections it returns)
    hard.extend([used[c]] for c in p.classes if c in shrunk.forced)
    hard.extend([var[nid]] for nid in nodes if nid in shrunk.fixed)
    for nid in nodes:
        for d in dict.fromkeys(p.nodes[nid].children):
            hard.append([-var[nid], used[d]])
    if justify:
        roots = set(p.roots)
        for c in p.classes:
            if c not in roots:
                hard.append([-used[c]] + [var[q] for q in p.parents[c]])

    hard.extend(_level_clauses(p, var, pool, stats))

    infeasible = False
    for cl in extra_hard:
        lits = _translate(var, cl)
        if lits is None:
            continue
        if not lits:
            infeasible = True
            continue
        hard.append(lits)

    soft: list[list[int]] = []
    wght: list[int] = []
    offset = 0
    for nid in nodes:
        w = weight[nid]
        if nid in shrunk.fixed:
            offset += w
        elif w > 0:
            soft.append([-var[nid]])
            wght.append(w)
        elif w < 0:
            soft.append([var[nid]])
            wght.append(-w)
            offset += w
    # Filled directly: WCNF.append re-scans every literal, a third of the encoding time on large e-graphs.
    wcnf = WCNF()
    wcnf.hard, wcnf.soft, wcnf.wght = hard, soft, wght
    wcnf.topw = sum(wght) + 1
    wcnf.nv = max(pool.top, len(nodes))  # every variable of every clause comes from var or pool
    bound = 0
    for c, members in p.classes.items():
        least = min(weight[n] for n in members)
        bound += least if c in shrunk.forced else min(0, least)
    for solver_free in (path_lower_bound(p, weight), disjoint_sum_bound(p, weight)):
        if solver_free is not None:
            bound = max(bound, solver_free)
    stats.update(vars=pool.top, hard=len(wcnf.hard), soft=len(wcnf.soft))
    return Encoding(p, wcnf, nodes, var, weight, unit, offset, bound, infeasible, stats)


def _level_clauses(p: ExtractionProblem, var: dict[NodeId, int], pool: IDPool, stats: dict[str, int]
                   ) -> list[list[int]]:
    """Acyclicity of the strict edges, per non-trivial SCC of the class graph: vertex elimination when its
    fill-in is small (:func:`_elimination_clauses`), else binary levels.

    Both share the edge literals: ``e(c, d)`` ("c's chosen node has a strict edge to d", implied by each
    such node of c) for the class pairs (c, d) inside one component.
    """
    graph = nx.DiGraph()
    for n in p.nodes.values():
        for d in n.strict_children():
            graph.add_edge(n.eclass, d)
    component: dict[ClassId, int] = {}
    members: list[list[ClassId]] = []
    index = {c: i for i, c in enumerate(p.classes)}  # sorting by it keeps the encoding off set order
    for i, scc in enumerate(nx.strongly_connected_components(graph)):
        members.append(sorted(scc, key=index.__getitem__))
        for c in scc:
            component[c] = i
    clauses: list[list[int]] = []
    edges: list[dict[tuple[ClassId, ClassId], int]] = [{} for _ in members]
    for n in p.nodes.values():
        c = n.eclass
        if c in set(n.strict_children()):
            clauses.append([-var[n.id]])  # a one-node cycle (shrinking removes these; without it, here)
            continue
        comp = component.get(c)
        if comp is None or len(members[comp]) < 2:
            continue  # a class alone in its component is on no cycle
        for d in dict.fromkeys(n.strict_children()):
            if component.get(d) != comp:
                continue
            lit = edges[comp].get((c, d))
            if lit is None:
                lit = edges[comp][(c, d)] = pool.id(("edge", c, d))
            clauses.append([-var[n.id], lit])
    for comp, edge in enumerate(edges):
        if not edge:
            continue
        bits = (len(members[comp]) - 1).bit_length()
        plan = _elimination_plan(members[comp], edge)
        # Elimination has no comparator chains: each clause is a shortcut or a two-cycle ban that unit
        # propagation uses directly (measured: tensat/resnet50 proved in 5.5 s against 20 s with levels, under
        # the same load); levels stay for components whose fill-in would blow up.
        if plan is not None and len(plan) <= _ELIM_FACTOR * (3 * bits + 1) * len(edge):
            stats["elim_classes"] += len(members[comp])
            stats["elim_clauses"] += len(plan)
            clauses.extend(_elimination_clauses(plan, edge, pool))
            continue
        level: dict[ClassId, list[int]] = {}
        for (c, d), lit in edge.items():
            for k in (c, d):
                if k not in level:
                    level[k] = [pool.id(("lvl", k, b)) for b in range(bits)]
            clauses.append([-lit, _greater_than(level[c], level[d], pool, clauses)])
        stats["scc_classes"] += len(level)
        stats["level_pairs"] += len(edge)
    return clauses


#: elimination is used while its clauses number at most this many times what levels would need
_ELIM_FACTOR = 4
#: and never more than this many clauses for one component (fill-in can be quadratic)
_ELIM_MAX = 400_000


def _elimination_plan(classes: list[ClassId], edge: dict[tuple[ClassId, ClassId], int]
                      ) -> list[tuple[ClassId, ClassId, ClassId]] | None:
    """The triples (u, v, w) of vertex elimination (Rankooh and Rintanen, AAAI 2022) over one component, in
    a greedy order of least (in-degree x out-degree), which keeps the fill-in small: eliminating v links each
    remaining predecessor u to each remaining successor w.  A triple with u == w is a two-cycle.  None when
    the plan would exceed ``_ELIM_MAX`` triples."""
    succ: dict[ClassId, set[ClassId]] = {c: set() for c in classes}
    pred: dict[ClassId, set[ClassId]] = {c: set() for c in classes}
    for c, d in edge:
        succ[c].add(d)
        pred[d].add(c)
    rank = {c: i for i, c in enumerate(classes)}
    alive = set(classes)
    heap = [(len(pred[c]) * len(succ[c]), rank[c], c) for c in classes]
    heapq.heapify(heap)
    plan: list[tuple[ClassId, ClassId, ClassId]] = []
    while heap:
        score, _, v = heapq.heappop(heap)
        if v not in alive:
            continue
        if score != len(pred[v]) * len(succ[v]):  # stale entry: re-queue with the current degree product
            heapq.heappush(heap, (len(pred[v]) * len(succ[v]), rank[v], v))
            continue
        alive.discard(v)
        ins = sorted(pred[v], key=rank.__getitem__)
        outs = sorted(succ[v], key=rank.__getitem__)
        for u in ins:
            for w in outs:
                plan.append((u, v, w))
                if u != w:
                    succ[u].add(w)
                    pred[w].add(u)
        if len(plan) > _ELIM_MAX:
            return None
        for u in ins:
            succ[u].discard(v)
        for w in outs:
            pred[w].discard(v)
        for t in set(ins) | set(outs):
            heapq.heappush(heap, (len(pred[t]) * len(succ[t]), rank[t], t))
    return plan


def _elimination_clauses(plan: list[tuple[ClassId, ClassId, ClassId]], edge: dict[tuple[ClassId, ClassId], int],
                         pool: IDPool) -> list[list[int]]:
    """Acyclicity by vertex elimination: ``e(u,v) & e(v,w) -> e(u,w)`` for each triple, and
    ``-e(u,v) | -e(v,u)`` for each two-cycle triple.

    Why it is exact.  If the true edges had a cycle, take its vertex v eliminated first, with neighbours u
    before and w after it on the cycle: the triple (u, v, w) was in the plan (both neighbours were still
    there), so ``e(u,w)`` is forced true, and the cycle without v is a shorter cycle of true literals over
    vertices eliminated later; repeating ends at a two-cycle, whose clause is violated.  Conversely, for
    acyclic true edges, setting every ``e`` literal to "u reaches w" satisfies all clauses (a DAG's
    reachability is transitive and never symmetric).  Fill-in literals are fresh variables.
    """
    lit = dict(edge)
    out: list[list[int]] = []
    for u, v, w in plan:
        if u == w:
            out.append([-lit[(u, v)], -lit[(v, u)]])
            continue
        uw = lit.get((u, w))
        if uw is None:
            uw = lit[(u, w)] = pool.id(("edge", u, w))
        out.append([-lit[(u, v)], -lit[(v, w)], uw])
    return out


def _greater_than(a: list[int], b: list[int], pool: IDPool, out: list[list[int]]) -> int:
    """A literal g with ``g -> (a > b)`` for binary numbers a, b (most significant bit first).

    ``p_i`` means "a > b must hold on bits i..0 given equal higher bits": ``p_i -> (a_i | -b_i)`` and, unless
    bit i decides it (``a_i & -b_i``), ``p_{i-1}``; ``p_{-1}`` is false.
    """
    g = pool.id()
    p = g
    for i in range(len(a)):
        ai, bi = a[i], b[i]
        out.append([-p, ai, -bi])
        if i == len(a) - 1:
            out.append([-p, ai])
            out.append([-p, -bi])
        else:
            nxt = pool.id()
            out.append([-p, ai, nxt])
            out.append([-p, -bi, nxt])
            p = nxt
    return g


def clause_holds(clause: NodeClause, selected: set[NodeId] | frozenset[NodeId]) -> bool:
    """Whether ``clause`` holds for the set of reached chosen nodes ``selected``."""
    return any((nid in selected) == positive for nid, positive in clause)


# ============================================================================================ result

@dataclass(frozen=True)
class ExtractionResult:
    status: Status
    #: the selection (reached classes only), None only with status NONE
    selection: Selection | None
    #: its DAG cost (None with status NONE)
    cost: float | None
    #: greedy's DAG cost on the original problem, None when greedy's selection was not acceptable
    greedy_cost: float | None
    #: a proved lower bound on the optimum (== cost when optimal), None when no selection is known
    lower_bound: float | None
    elapsed: float
    shrink: ShrinkStats
    #: what produced the selection: "greedy", "greedy-shrunk", or a SolverConfig's name
    source: str
    #: blocking rounds of the worker that produced the result (checker rejections)
    blocks: int = 0
    notes: tuple[str, ...] = ()
    #: the bottom-up DAG greedy's DAG cost (extraction-gym's baseline), None when it gave up (its work share
    #: spent, or its choice not valid or not acceptable)
    dag_greedy_cost: float | None = None
    #: work units spent outside the RC2 configurations: the DAG greedy, the quadratic phase, the encoding (one
    #: per clause), the Lagrangian bound and the neighbourhood search, all within the one extra ``work`` share
    #: (see :func:`solve`)
    extra_work: int = 0


# ============================================================================================ solving

@dataclass
class _Candidate:
    objective: int
    nodes: tuple[NodeId, ...]
    source: str
    blocks: int = 0


def solve(problem: ExtractionProblem, *, work: int | None = DEFAULT_WORK, extra_hard: Sequence[NodeClause] = (),
          checker: Checker | None = None, configs: Sequence[SolverConfig] = DEFAULT_CONFIGS,
          max_blocks: int = 100, use_shrink: bool = True, use_quadratic: bool = True,
          stop_below: float | None = None) -> ExtractionResult:
    """Extract a least-cost valid selection of ``problem``, each solver configuration within ``work`` units
    (its SAT oracle's propagations plus the variable count per oracle call; None: unbounded).  The result is
    a function of the arguments only (no clock).

    ``stop_below``: the caller only asks whether an acceptable selection costs less than this (the triage's
    question, ``triage.cannot_pay``): the search ends at the first one found that does (its cost, as
    :meth:`Encoding.to_cost` rounds it, below ``stop_below``), with the cheapest found so far, status greedy
    or best found and no ``lower_bound``. Until then the search is the one without it, step for step; after
    it, every bound the full search could prove is at most that selection's cost, so whoever compares the
    bound with ``stop_below`` gets the same answer.

    See the module docstring for the statuses, ``extra_hard`` and ``checker``; ``use_shrink`` and
    ``use_quadratic`` turn shrinking and the quadratic phase (step 2 above) off, for tests of the other
    phases.  Raises :class:`InfeasibleProblemError` when the problem itself (without extra clauses) has no
    valid selection.
    """
    t0 = time.monotonic()  # for the report only
    notes: list[str] = []
    extra = [tuple(cl) for cl in extra_hard]

    def acceptable(nodes: Iterable[NodeId]) -> tuple[bool, list[NodeClause]]:
        """(valid and accepted, the checker's clauses when rejected)."""
        sel = _selection_of(problem, nodes)
        report = evaluate_selection(problem, sel)
        if not report.valid:
            return False, []
        selected = frozenset(sel.choices.values())
        if not all(clause_holds(cl, selected) for cl in extra):
            return False, []
        if checker is not None:
            try:
                blocks = [tuple(cl) for cl in checker(problem, sel)]
            except OutOfWork:  # the checker cannot decide any more: not acceptable, nothing learnt
                return False, []
            if blocks:
                return False, blocks
        return True, []

    weights = integer_costs(problem)
    weight = weights[0]

    def below(objective: int) -> bool:
        # the rounding of Encoding.to_cost, by which the full search's bound would be compared
        return stop_below is not None and float(objective * weights[1]) < stop_below

    def stopped(at: str, stats: ShrinkStats, greedy_cost: float | None, dag_cost: float | None,
                spent: int) -> ExtractionResult | None:
        """The result when a candidate is below ``stop_below`` (None otherwise): the cheapest found so far."""
        if stop_below is None or not any(below(c.objective) for c in candidates):
            return None
        best = min(candidates, key=lambda c: c.objective)  # the first found among equals, as at the end
        sel = _selection_of(problem, best.nodes)
        notes.append(f"stopped {at}: a selection below {stop_below:g} found")
        return ExtractionResult(Status.GREEDY if best.source.startswith("greedy") else Status.BEST_FOUND, sel,
                                evaluate_selection(problem, sel).cost, greedy_cost, None, time.monotonic() - t0,
                                stats, best.source, best.blocks, tuple(notes), dag_cost, spent)

    usable = usable_nodes(problem)
    greedy = greedy_extract(problem, usable=usable)
    greedy_nodes = _reached_nodes(problem, greedy.selection)
    ok, blocks = acceptable(greedy_nodes)
    extra.extend(blocks)
    greedy_cost = greedy.cost if ok else None
    candidates: list[_Candidate] = []
    if ok:
        candidates.append(_Candidate(sum(weight[n] for n in greedy_nodes), greedy_nodes, "greedy"))
    # The chain greedy is a second incumbent: it sometimes meets the chain lower bound outright, and a
    # better incumbent prunes more in shrinking.
    chain_nodes = _reached_nodes(problem, chain_extract(problem, weight, usable=usable).selection)
    if set(chain_nodes) != set(greedy_nodes):  # often the same selection: do not run the checker twice
        ok_c, blocks_c = acceptable(chain_nodes)
        extra.extend(blocks_c)
        if ok_c:
            candidates.append(_Candidate(sum(weight[n] for n in chain_nodes), chain_nodes, "greedy-chain"))

    # The bottom-up DAG greedy, within the extra work share: it sees sharing the tree greedy counts twice.
    extra_budget = work
    dag = dag_greedy_extract(problem, usable=usable, work=extra_budget, weights=weights)
    extra_spent = dag.work
    dag_cost_ = None
    if dag.result is not None:
        dag_nodes = _reached_nodes(problem, dag.result.selection)
        if any(set(c.nodes) == set(dag_nodes) for c in candidates):
            dag_cost_ = dag.result.cost  # one of the other greedies' (accepted) selections
        elif set(dag_nodes) not in (set(greedy_nodes), set(chain_nodes)):  # not rejected already
            ok_d, blocks_d = acceptable(dag_nodes)
            extra.extend(blocks_d)
            if ok_d:
                dag_cost_ = dag.result.cost
                candidates.append(_Candidate(sum(weight[n] for n in dag_nodes), dag_nodes, "greedy-dag"))
    if stop_below is not None:
        early = stopped("after the greedies", _no_shrink(problem).stats, greedy_cost, dag_cost_, extra_spent)
        if early is not None:
            return early

    quad_bound = None
    if use_quadratic:
        # the tabu search's quarter is of the whole share, not of what the DAG greedy left: so its moves, and
        # the selection it ends at, do not shift whenever the greedy's work is counted differently
        quad_spent, quad_bound = _quadratic(problem, weights, candidates, acceptable, extra,
                                            None if extra_budget is None else extra_budget - extra_spent, notes,
                                            None if extra_budget is None else extra_budget // _QUAD_SHARE)
        extra_spent += quad_spent

    protected = {nid for cl in extra for nid, _ in cl}
    upper = min((c.objective for c in candidates), default=None)
    if use_shrink:
        shrunk = shrink(problem, dominance=checker is None, protected=protected, weight=weight, upper=upper,
                        usable=usable)
    else:
        shrunk = _no_shrink(problem)
    # shrink keeps only usable nodes: no need to compute them again
    g2 = greedy_extract(shrunk.problem, usable=set(shrunk.problem.nodes) if use_shrink else None)
    g2_nodes = _reached_nodes(shrunk.problem, g2.selection)
    ok2, blocks2 = acceptable(g2_nodes)
    if ok2:
        candidates.append(_Candidate(sum(weight[n] for n in g2_nodes), g2_nodes, "greedy-shrunk"))
    extra.extend(blocks2)
    if stop_below is not None:
        early = stopped("after shrinking", shrunk.stats, greedy_cost, dag_cost_, extra_spent)
        if early is not None:
            return early
    enc = encode(shrunk, extra, weights=weights)
    extra_spent += len(enc.wcnf.hard) + len(enc.wcnf.soft)
    if quad_bound is not None and quad_bound > enc.trivial_bound:
        enc = replace(enc, trivial_bound=quad_bound)
    best_known = min((c.objective for c in candidates), default=None)
    if (use_shrink and not enc.infeasible and best_known is not None and best_known > enc.trivial_bound
            and extra_budget is not None and extra_spent < extra_budget):
        # all that is left of the extra share: the ascent stops by itself when it stalls (after one iteration
        # on the MaxSAT e-graphs) and the neighbourhood search gets the rest. Measured (bench_extract, work
        # 2e6): with half of it, 105 nodes of tensat/bert_acyclic were ruled out instead of 273, and RC2 then
        # found 0.8158 instead of 0.7319 (greedy 0.827)
        enc, shrunk, lag_spent = _lagrangian(problem, enc, shrunk, weights, extra, best_known,
                                             extra_budget - extra_spent, notes)
        extra_spent += lag_spent

    lower: int | None = None  # proved: no acceptable selection weighs less (or the best one is optimal)
    if enc.infeasible:
        notes.append("the extra clauses cannot hold together")
    else:
        lower = enc.trivial_bound
        if best_known is None or best_known > lower:
            proof, cores, checker_done = _run_configs(problem, enc, _diversify(configs, enc), checker, max_blocks,
                                                      work, extra, candidates, notes,
                                                      below if stop_below is not None else None)
            if stop_below is not None:
                early = stopped("in the solver", shrunk.stats, greedy_cost, dag_cost_, extra_spent)
                if early is not None:
                    return early
            if cores is not None:
                # the cores RC2 proved before its work ran out (no candidate meets them: _run_configs would
                # have called that a proof): a bound that the neighbourhood search's solutions may meet
                notes.append(f"cores: lower bound {enc.to_cost(cores):.6g}")
                lower = cores
                enc = replace(enc, trivial_bound=cores)
            # unbounded configurations end with a proof or a reason the search cannot go on: no LNS then
            if (proof is None and candidates and extra_budget is not None and extra_spent < extra_budget
                    and not checker_done):
                proof, lns_spent = _lns(problem, enc, checker, max_blocks, extra_budget - extra_spent, extra,
                                        candidates, notes)
                extra_spent += lns_spent
            if proof is not None:
                lower = max(lower, proof)

    # the cheapest; at equal cost the one found first (greedy's own before the solvers', the configs in their
    # order): a fixed order, since the solvers run one after the other within work budgets
    chosen = min(candidates, key=lambda c: c.objective, default=None)
    elapsed = time.monotonic() - t0
    if chosen is None:
        return ExtractionResult(Status.NONE, None, None, greedy_cost, None, elapsed, shrunk.stats, "none",
                                0, tuple(notes), dag_cost_, extra_spent)
    selection = _selection_of(problem, chosen.nodes)
    cost = evaluate_selection(problem, selection).cost
    if greedy_cost is not None:
        assert cost <= greedy_cost, "never worse than greedy"
    if lower is not None and chosen.objective <= lower:
        status = Status.OPTIMAL
    elif chosen.source.startswith("greedy"):
        status = Status.GREEDY
    else:
        status = Status.BEST_FOUND
    # Bounds from shrinking by the incumbent hold for selections cheaper than it: cap at the best known.
    bound = None if lower is None else enc.to_cost(min(lower, chosen.objective))
    return ExtractionResult(status, selection, cost, greedy_cost, bound, elapsed, shrunk.stats, chosen.source,
                            chosen.blocks, tuple(notes), dag_cost_, extra_spent)


#: the quadratic phase's tabu search may take this share of the extra work (the rest goes on to the spectral
#: bound and the phases after it); without a work budget it gets this many units
_QUAD_SHARE = 4
_QUAD_UNBOUNDED = 1_000_000


def _quadratic(problem: ExtractionProblem, weights: tuple[dict[NodeId, int], Fraction],
               candidates: list[_Candidate],
               acceptable: Callable[[Iterable[NodeId]], tuple[bool, list[NodeClause]]],
               extra: list[NodeClause], work: int | None, notes: list[str], tabu_work: int | None = None
               ) -> tuple[int, int | None]:
    """On a problem of the quadratic shape (``quadratic.py``: Max-2-SAT and max-cut as e-graphs): a tabu
    search from the best candidate (its selection, when acceptable, becomes a candidate "tabu"), then the
    spectral bound at the best candidate's weight, within ``work`` units (the tabu search within ``tabu_work``
    of them, default a quarter).  Returns (the work spent, that weight when the bound proves
    that no selection weighs less, else None).  A checker's blocking clauses for the tabu selection go to
    ``extra``; the bound, proved over all valid selections, holds for the acceptable ones as well."""
    weight, unit = weights
    model = quadratic_model(problem, weight)
    if model is None or not candidates:
        return 0, None
    budget = _QUAD_UNBOUNDED if work is None else work
    if budget <= 0:
        return 0, None
    best = min(candidates, key=lambda c: c.objective)
    tabu = tabu_search(model, model.assignment(_selection_of(problem, best.nodes).choices),
                       budget // _QUAD_SHARE if tabu_work is None else min(tabu_work, budget))
    spent = tabu.work
    note = f"quadratic: tabu search {tabu.moves} moves, best {float(tabu.value // 4 * unit):.6g}"
    if tabu.value // 4 < best.objective:
        nodes = _reached_nodes(problem, model.selection(tabu.x))
        ok, blocks = acceptable(nodes)
        extra.extend(blocks)
        if ok:
            best = _Candidate(sum(weight[n] for n in nodes), nodes, "tabu")
            candidates.append(best)
    proved, bound_work = spectral_proves(model, best.objective, budget - spent)
    spent += bound_work
    notes.append(f"{note}; spectral bound {'proves' if proved else 'does not prove'} it optimal")
    return spent, best.objective if proved else None


def _lagrangian(problem: ExtractionProblem, enc: Encoding, shrunk: ShrinkResult,
                weights: tuple[dict[NodeId, int], Fraction], extra: Sequence[NodeClause], upper: int, work: int,
                notes: list[str]) -> tuple[Encoding, ShrinkResult, int]:
    """The Lagrangian bound (``bound.py``) within ``work`` units: it raises the encoding's solver-free bound
    (so a solution meeting it ends the search, and one already held is proved optimal), and the nodes its
    reduced costs rule out given the incumbent weighing ``upper`` are dropped, the rest shrunk and encoded
    again (its clauses counted) when any are.  Returns the encoding, the shrink result and the work spent."""
    lag = lagrangian_bound(shrunk.problem, weights[0], shrunk.forced, upper, work)
    spent = lag.work
    if lag.bound is None:
        return enc, shrunk, spent
    notes.append(f"lagrangian: bound {enc.to_cost(lag.bound):.6g} after {lag.iterations} iterations, "
                 f"{len(lag.prunable)} nodes ruled out")
    if lag.bound < upper and lag.prunable:
        p = shrunk.problem
        keep = [nid for nid in p.nodes if nid not in lag.prunable]
        reshrunk = shrink(p.restrict(keep, p.classes), dominance=False, weight=weights[0], upper=upper)
        enc = encode(reshrunk, extra, weights=weights)
        spent += len(enc.wcnf.hard) + len(enc.wcnf.soft)
        st = reshrunk.stats
        shrunk = ShrinkResult(reshrunk.problem, reshrunk.forced, reshrunk.fixed,
                              replace(shrunk.stats, classes_after=st.classes_after, nodes_after=st.nodes_after,
                                      unreachable=shrunk.stats.unreachable + st.unreachable,
                                      unusable=shrunk.stats.unusable + st.unusable,
                                      bounded=shrunk.stats.bounded + len(lag.prunable) + st.bounded,
                                      fixed=st.fixed))
    return replace(enc, trivial_bound=max(enc.trivial_bound, lag.bound)), shrunk, spent


#: the neighbourhood search: classes freed in the first round, and the share of its work one round may take
_LNS_START = 24
_LNS_ROUND_SHARE = 8
#: the configuration of its rounds (plain RC2: small formulas, a proof per round is what it is after)
_LNS_CONFIG = SolverConfig("lns", stratified=False, minz=True)


def _lns(problem: ExtractionProblem, enc: Encoding, checker: Checker | None, max_blocks: int, work: int,
         extra: Sequence[NodeClause], candidates: list[_Candidate], notes: list[str]) -> tuple[int | None, int]:
    """Large-neighbourhood search over the MaxSAT model when no configuration proved its result: each round
    frees a breadth-first ball of classes around a seed class (the incumbent's reached classes taken in turn),
    keeps every other class the incumbent reaches at the incumbent's choice or unused (unit clauses ``-x`` for
    its other nodes; classes it does not reach stay free), simplifies the formula under what that implies and
    solves it exactly with RC2 within a share of ``work``.
    A round whose neighbourhood is proved to hold nothing better doubles the ball; one cut short by its
    budget halves it.  A ball covering every class is the whole problem: its proof is a global one.

    Returns (the proved bound or None, the work spent: each round's oracle work plus its formula's clauses).
    Improving selections are appended to ``candidates``.  No clock: the rounds, their order and their
    budgets are functions of the problem and ``work`` only.
    """
    spent = len(enc.wcnf.hard)
    propagator = Solver(name="g3", bootstrap_with=enc.wcnf.hard)
    try:
        return _lns_rounds(problem, enc, checker, max_blocks, work, extra, candidates, notes, propagator, spent)
    finally:
        propagator.delete()


def _lns_rounds(problem: ExtractionProblem, enc: Encoding, checker: Checker | None, max_blocks: int, work: int,
                extra: Sequence[NodeClause], candidates: list[_Candidate], notes: list[str], propagator: Solver,
                spent: int) -> tuple[int | None, int]:
    """The rounds of :func:`_lns`; ``propagator`` holds the hard clauses (for what fixing implies)."""
    p = enc.problem
    best = min(candidates, key=lambda c: c.objective)
    neighbours = _class_neighbours(p)
    size = _LNS_START
    round_no = 0
    seed_at = 0
    improved = 0
    # seeds tried in a row whose fixed part the hard clauses refuse: such a round changes nothing but the seed,
    # so once every seed has failed in a row the rounds only repeat (until the work is spent: seconds of CPU,
    # each failed round being charged only its literals)
    refused = 0
    while spent < work:
        chosen = {p.nodes[n].eclass: n for n in best.nodes if n in enc.var}
        seeds = [c for c in (problem.nodes[n].eclass for n in best.nodes) if c in p.classes] or list(p.roots)
        whole = size >= len(p.classes)
        free = set(p.classes) if whole else _ball(seeds[seed_at % len(seeds)], neighbours, size)
        fixed_lits: list[int] = []
        for c, members in p.classes.items():
            keep = chosen.get(c)
            # classes the incumbent does not reach stay free: only a freed class can reach them, and they are
            # what a freed class may want to reach instead; so does a class whose incumbent node was dropped
            # by dominance
            if c in free or keep is None:
                continue
            fixed_lits.extend(-enc.var[m] for m in members if m != keep)
        # what the fixed classes imply (unused or unreachable classes above all) is fixed too
        ok, implied = propagator.propagate(assumptions=fixed_lits)
        spent += len(fixed_lits) + len(implied)
        if not ok:  # this neighbourhood cannot hold the fixed part: try the next seed
            refused += 1
            if whole or refused >= len(seeds):
                notes.append(f"lns: {round_no} rounds, {improved} improving, then every seed's neighbourhood "
                             f"refused by the hard clauses")
                return None, spent
            seed_at += 1
            continue
        refused = 0
        value = {abs(lit): lit > 0 for lit in implied}
        # fixed literals' soft clauses leave the formula (their weight goes to the offset when violated):
        # otherwise RC2 would find each of them a unit core, one oracle call apiece
        soft: list[list[int]] = []
        wght: list[int] = []
        offset = enc.offset
        for cl, w in zip(enc.wcnf.soft, enc.wcnf.wght):
            fixed = value.get(abs(cl[0]))
            if fixed is None:
                soft.append(cl)
                wght.append(w)
            elif fixed != (cl[0] > 0):
                offset += w
        formula = WCNF()
        formula.hard = _simplified(enc.wcnf.hard, implied, len(enc.nodes))
        formula.soft, formula.wght = soft, wght
        formula.topw, formula.nv = sum(wght) + 1, enc.wcnf.nv
        spent += len(formula.hard)
        share = min(work - spent, max(1, work // _LNS_ROUND_SHARE))
        if share <= 0:
            break
        worker = _Worker(problem, replace(enc, wcnf=formula, offset=offset), _LNS_CONFIG, checker, max_blocks,
                         best.objective, best.nodes, share, extra)
        outcome: str
        try:
            outcome = worker.run()[0]
        except _Settled:
            outcome = "settled"
        except OutOfWork as e:
            outcome = "final" if e.final else "out"
        except Exception as e:  # as in _run_configs: this round gives up, the incumbent stands
            outcome = f"error: {type(e).__name__}"
        except BaseException as e:  # the safety net or Ctrl-C, raised anywhere, pysat's own code included
            worker.abandon(e)
            raise
        finally:
            if worker.rc2 is not None:
                stats = worker.rc2.oracle.accum_stats()["propagations"]
                spent += stats + worker.rc2.calls * worker.rc2.call_charge
            worker.close()
        round_no += 1
        for cand in worker.found:
            cand.source = "lns"
        candidates.extend(worker.found)
        if worker.found:
            improved += 1
            best = min([best, *worker.found], key=lambda c: c.objective)
        if outcome == "final":
            notes.append(f"lns: {round_no} rounds, {improved} improving, then the checker accepted nothing more")
            return None, spent
        if outcome == "settled":
            notes.append(f"lns: {round_no} rounds, {improved} improving, met the lower bound")
            return enc.trivial_bound, spent
        if outcome == "proof" and whole and not worker.added:
            notes.append(f"lns: {round_no} rounds, {improved} improving, the last one over the whole problem")
            return best.objective, spent
        if outcome in ("proof", "infeasible") and not worker.found:  # nothing better here
            seed_at += 1
            if seed_at % max(1, len(seeds) // 4 + 1) == 0:
                size *= 2  # this size found nothing around several seeds: look wider
        elif outcome != "proof":
            size = max(_LNS_START // 2, size // 2)
            seed_at += 1
    notes.append(f"lns: {round_no} rounds, {improved} improving, work spent")
    return None, spent


def _simplified(hard: list[list[int]], implied: Sequence[int], node_vars: int) -> list[list[int]]:
    """``hard`` under the literals ``implied``: satisfied clauses dropped, false literals removed, plus the
    implied node literals as units (so every model still says which nodes are chosen).  A round's formula is
    then about its free part only, which keeps building its solver cheap."""
    true = set(implied)
    out = [[lit] for lit in implied if abs(lit) <= node_vars]
    for cl in hard:
        if any(lit in true for lit in cl):
            continue
        out.append([lit for lit in cl if -lit not in true])
    return out


def _class_neighbours(p: ExtractionProblem) -> dict[ClassId, list[ClassId]]:
    """Per class, its child classes and its parents' classes (each once, in node order)."""
    neighbours: dict[ClassId, list[ClassId]] = {c: [] for c in p.classes}
    for n in p.nodes.values():
        for d in dict.fromkeys(n.children):
            if d != n.eclass:
                neighbours[n.eclass].append(d)
                neighbours[d].append(n.eclass)
    return {c: list(dict.fromkeys(ns)) for c, ns in neighbours.items()}


def _ball(seed: ClassId, neighbours: dict[ClassId, list[ClassId]], size: int) -> set[ClassId]:
    """The first ``size`` classes of a breadth-first walk from ``seed`` (neighbours in their listed order)."""
    out = {seed}
    frontier = deque([seed])
    while frontier and len(out) < size:
        for d in neighbours[frontier.popleft()]:
            if d not in out:
                out.add(d)
                frontier.append(d)
                if len(out) >= size:
                    break
    return out


def _diversify(configs: Sequence[SolverConfig], enc: Encoding) -> list[SolverConfig]:
    """With a single soft weight, stratification has one level and RC2Stratified searches exactly like RC2:
    a stratified config that duplicates a plain one then runs plain RC2 on another SAT solver (Maplesat)."""
    out = list(configs)
    if len(set(enc.wcnf.wght)) > 1:
        return out
    plain = {(c.solver, c.exhaust, c.minz, c.adapt) for c in out if not c.stratified}
    for i, c in enumerate(out):
        if c.stratified and (c.solver, c.exhaust, c.minz, c.adapt) in plain:
            out[i] = replace(c, name=c.name + "-as-mgh", stratified=False, solver="mgh")
    return out


def _no_shrink(problem: ExtractionProblem) -> ShrinkResult:
    n_c, n_n = problem.size()
    return ShrinkResult(problem, frozenset(problem.roots), frozenset(),
                        ShrinkStats(n_c, n_n, n_c, n_n, 0, 0, 0, 0, 0))


def _reached_nodes(problem: ExtractionProblem, selection: Selection) -> tuple[NodeId, ...]:
    return evaluate_selection(problem, selection).reached_nodes(selection)


def _selection_of(problem: ExtractionProblem, nodes: Iterable[NodeId]) -> Selection:
    return Selection({problem.nodes[n].eclass: n for n in nodes})


class _Settled(Exception):
    """Raised out of RC2 by a model that meets the solver-free lower bound: the search is over."""


class _Enough(Exception):
    """Raised out of RC2 by a model below ``solve``'s ``stop_below``: the caller's question is answered."""


class OutOfWork(Exception):
    """A work budget is spent: raised out of RC2 when its oracle has spent the configuration's propagations, or
    by a checker whose own work budget is spent (the selection it was asked about is neither accepted nor
    blocked). The configuration stops with the best selection found so far. ``final``: the checker will accept
    nothing any more (its budget is for the whole search), so the search ends: no later configuration or
    neighbourhood round could add a candidate or a proof, both of which need an accepted selection."""

    def __init__(self, *args: object, final: bool = False) -> None:
        super().__init__(*args)
        self.final = final


def _run_configs(problem: ExtractionProblem, enc: Encoding, configs: Sequence[SolverConfig],
                 checker: Checker | None, max_blocks: int, work: int | None, extra: Sequence[NodeClause],
                 candidates: list[_Candidate], notes: list[str], enough: Callable[[int], bool] | None = None
                 ) -> tuple[int | None, int | None, bool]:
    """Run the configs one after the other, in their order, each within ``work`` units, until one proves
    its result optimal (or the problem infeasible) or the checker accepts nothing any more (a final
    :class:`OutOfWork`); returns (the proved bound or None, the best lower bound the configs' cores proved
    when there is no proof, or None, whether the checker is done).  A config that runs out of work still
    proved every core it took: RC2's cost is then a lower bound on the optimum (:meth:`_Worker.core_bound`),
    and the next config ends as soon as one of its models meets it.  Every improving solution met on the way
    is appended to ``candidates`` in the order found: the same on any machine, under any load. ``enough``: a
    model whose objective it holds for ends the configs there (``solve``'s ``stop_below``)."""
    best = min(candidates, key=lambda c: c.objective, default=None)
    cores: int | None = None
    final = False
    stop = False
    for cfg in configs:
        if final:
            notes.append(f"{cfg.name}: not run (the checker accepts nothing any more)")
            continue
        incumbent = None if best is None else best.objective
        hint = () if best is None else best.nodes
        worker = _Worker(problem, enc, cfg, checker, max_blocks, incumbent, hint, work, extra)
        worker.enough = enough
        outcome: _Outcome
        bound = None
        try:
            outcome = worker.run()
        except _Settled:
            outcome = ("proof", enc.trivial_bound)
        except _Enough:
            outcome, stop = ("note", "stopped: a model below the threshold"), True
        except OutOfWork as e:
            outcome = ("note", f"work budget spent ({str(e) or f'{work} units'})")  # str: the exception is truthy
            final = e.final
            bound = worker.core_bound()
        except Exception as e:  # e.g. RC2Stratified after blocking clauses can fail to return a model:
            # the config gives up, keeping what it found (but not its cores' bound); the next one carries on
            outcome = ("note", f"error: {type(e).__name__}: {e}")
        except BaseException as e:  # the safety net or Ctrl-C, raised anywhere, pysat's own code included
            worker.abandon(e)
            raise
        finally:
            worker.close()
        candidates.extend(worker.found)
        if worker.found:
            best = min([best, *worker.found] if best is not None else worker.found, key=lambda c: c.objective)
        if outcome[0] == "proof":
            return outcome[1], None, final
        if stop:
            return None, None, final
        kind, detail = outcome
        notes.append(f"{cfg.name}: {detail}")
        if kind == "infeasible":
            return None, None, final
        if bound is not None and bound > (enc.trivial_bound if cores is None else cores):
            cores = bound
            enc = replace(enc, trivial_bound=bound)  # the next config's model meeting it settles the search
            if best is not None and best.objective <= bound:
                return bound, None, final
    return None, cores, final


#: how a worker's run ends: its optimum proved (the bound), or a note saying why not, or "infeasible" and why
_Outcome = tuple[typing.Literal["proof"], int] | tuple[typing.Literal["note", "infeasible"], str]


#: solvers (and the interruptions that stopped them) never to be freed, see :meth:`_Worker.abandon`
_ABANDONED: list[tuple[RC2 | None, BaseException]] = []


class _Worker:
    """One RC2 configuration run in this process: improving solutions are collected in :attr:`found` (each
    re-checked), :meth:`run` returns ``("proof", bound)``, ``("infeasible", why)`` or ``("note", why)``."""

    def __init__(self, problem: ExtractionProblem, enc: Encoding, cfg: SolverConfig, checker: Checker | None,
                 max_blocks: int, incumbent: int | None, hint: tuple[NodeId, ...] = (),
                 work: int | None = None, extra: Sequence[NodeClause] = ()) -> None:
        self.problem, self.enc, self.cfg = problem, enc, cfg
        self.checker, self.max_blocks = checker, max_blocks
        self.best = incumbent
        self.hint = frozenset(hint)
        self.work = work
        self.extra = tuple(extra)
        self.added: list[list[int]] = []
        self.found: list[_Candidate] = []
        self.rc2: RC2 | None = None
        self.rebuilt = False
        #: ends the run (:class:`_Enough`) at an accepted model whose objective it holds for (``stop_below``)
        self.enough: Callable[[int], bool] | None = None

    def close(self) -> None:
        if self.rc2 is not None:
            self.rc2.delete()
            self.rc2 = None

    def abandon(self, interruption: BaseException) -> None:
        """Drop the solver without freeing it. An asynchronous interruption (the safety net's
        :class:`~peggy_jvm.budget.MethodTimeout`, Ctrl-C) may have stopped pysat's Python code mid-update (a
        totalizer merged into another but not yet marked merged), and freeing it then aborts the whole process
        (a double free in pycard: seen once in a CI run of test_budgets' safety-net test). The solver and the
        interrupted frames (the exception's traceback holds their locals, a solver being rebuilt included) stay
        alive for the life of the process: a leak, only for a method that hit its net."""
        _ABANDONED.append((self.rc2, interruption))
        self.rc2 = None

    def core_bound(self) -> int | None:
        """The lower bound on the objective that the cores RC2 has proved so far give (its cost plus the
        offset), or None after a rebuild that followed a doubtful UNSAT (not trusted then).

        Why it holds when RC2 stops early: its cost only grows by a core's weight once that core is proved (an
        oracle call cut short by the work budget raises before RC2 uses it), every valid selection is a model
        of the hard clauses, and hardening (stratified RC2 without a checker) keeps every solution no dearer
        than RC2's best model.  Blocking clauses only remove selections the checker rejects."""
        if self.rc2 is None or self.rebuilt:
            return None
        return self.rc2.cost + self.enc.offset

    def make_rc2(self) -> RC2:
        cfg = self.cfg
        # RC2 leaves unit soft clauses and the hard list alone, so shallow copies do (WCNF.copy() deep-copies,
        # which took seconds on the larger e-graphs); a rebuild after a doubtful UNSAT adds the blocks as hard.
        source = self.enc.wcnf
        formula = WCNF()
        formula.hard = source.hard + [list(cl) for cl in self.added]
        formula.soft = [list(cl) for cl in source.soft]
        formula.wght = list(source.wght)
        formula.topw = source.topw
        formula.nv = max([source.nv] + [abs(lit) for cl in self.added for lit in cl])
        if cfg.stratified:
            base: type[RC2] = RC2Stratified
            kwargs = dict(blo=cfg.blo, nohard=self.checker is not None)
        else:
            base, kwargs = RC2, {}
        solver = _hooked(base)(formula, solver=cfg.solver, adapt=cfg.adapt, exhaust=cfg.exhaust,
                               minz=cfg.minz, **kwargs)
        solver.on_model = self.on_model
        solver.work_limit = self.work
        solver.call_charge = self.enc.wcnf.nv
        if cfg.phases and self.hint:
            # the oracle's first guesses follow the incumbent, so the models met along the way resemble it
            solver.oracle.set_phases([v if nid in self.hint else -v for nid, v in self.enc.var.items()])
        return solver

    def decode(self, model: Sequence[int]) -> tuple[NodeId, ...]:
        """The reached chosen nodes of a model (first true node per class, walked from the roots)."""
        p, enc = self.problem, self.enc
        n = len(model)

        def chosen(c: ClassId) -> NodeId | None:
            for nid in enc.problem.classes.get(c, ()):
                v = enc.var[nid]
                if v <= n and model[v - 1] > 0:
                    return nid
            return None
        out: dict[ClassId, NodeId] = {}
        stack = list(p.roots)
        while stack:
            c = stack.pop()
            if c in out:
                continue
            nid = chosen(c)
            if nid is None:
                return ()  # not a selection: the re-check below rejects it
            out[c] = nid
            stack.extend(p.nodes[nid].children)
        return tuple(out.values())

    def check(self, nodes: tuple[NodeId, ...], valid: bool = False) -> tuple[bool, list[NodeClause]]:
        """(accepted, the checker's clauses when it refuses); ``valid``: the caller found the selection of
        ``nodes`` valid already (it is not evaluated again)."""
        sel = _selection_of(self.problem, nodes)
        if not valid and (not nodes or not evaluate_selection(self.problem, sel).valid):
            return False, []
        selected = frozenset(nodes)
        if not all(clause_holds(cl, selected) for cl in self.extra):
            return False, []
        if self.checker is not None:
            blocks = [tuple(cl) for cl in self.checker(self.problem, sel)]
            if blocks:
                return False, blocks
        return True, []

    def on_model(self, model: Sequence[int]) -> None:
        """An oracle model seen inside RC2: report it if it improves and is acceptable."""
        nodes = self.decode(model)
        if not nodes:
            return
        objective = self.enc.objective(nodes)
        if self.best is not None and objective >= self.best:
            return
        ok, _ = self.check(nodes)
        if ok:
            self.best = objective
            self.found.append(_Candidate(objective, nodes, self.cfg.name, len(self.added)))
            if objective <= self.enc.trivial_bound:  # meets a solver-free lower bound: optimal already
                raise _Settled
            if self.enough is not None and self.enough(objective):
                raise _Enough

    def run(self) -> _Outcome:
        self.rc2 = rc2 = self.make_rc2()
        while True:
            model = rc2.compute()
            if model is None:
                if self.added:
                    sat = self.satisfiable()
                    if sat is None:
                        return "note", "RC2 said UNSAT after blocking, not re-checked within the work budget"
                    if sat:
                        rc2.delete()
                        self.rc2 = rc2 = self.make_rc2()
                        self.rebuilt = True
                        continue
                return "infeasible", "no acceptable selection exists"
            lower = rc2.cost + self.enc.offset
            nodes = self.decode(model)
            valid = bool(nodes) and evaluate_selection(self.problem, _selection_of(self.problem, nodes)).valid
            if not valid:
                return "note", "error: RC2's optimum decodes to an invalid selection"
            ok, blocks = self.check(nodes, valid=True)
            if ok:
                objective = self.enc.objective(nodes)
                if self.best is None or objective < self.best:
                    self.found.append(_Candidate(objective, nodes, self.cfg.name, len(self.added)))
                if objective == lower:
                    return "proof", lower
                return "note", "optimum of RC2 not met by its decoded selection"
            if len(self.added) >= self.max_blocks:
                return "note", f"gave up after {len(self.added)} blocking rounds"
            selected = frozenset(nodes)
            for cl in blocks:
                if clause_holds(cl, selected):
                    raise ValueError(f"checker returned a clause the selection satisfies: {cl!r}")
                lits = self.enc.translate(cl)
                if lits is None:
                    continue
                if not lits:
                    return "infeasible", "no acceptable selection exists (a blocking clause is empty)"
                rc2.add_clause(lits)
                self.added.append(lits)

    def satisfiable(self) -> bool | None:
        """A fresh SAT call on the hard clauses and the blocks (None: not decided within the work budget)."""
        with Solver(name="g3", bootstrap_with=self.enc.wcnf.hard) as s:
            for cl in self.added:
                s.add_clause(cl)
            if self.work is not None:
                s.prop_budget(self.work)
            return s.solve_limited()


def _hooked(base: type[RC2]) -> type[RC2]:
    """``base`` with every satisfiable oracle call's model passed to ``self.on_model``.

    Every clause RC2 adds keeps the hard clauses (totalizers and relaxations only add fresh variables), so a
    model of any oracle call, whatever its assumptions, is a model of the hard part: a valid selection.
    """
    class Hooked(base):
        on_model: Callable[[Sequence[int]], None] | None = None
        #: work units this oracle may spend in all (None: unbounded): its unit propagations plus, per call,
        #: ``call_charge`` (the Python side of a call, decoding its model above all, grows with the formula,
        #: not with the propagations); a call cut short by it, or one made after it is spent, raises
        #: :class:`OutOfWork` (RC2 would take an undecided call for a core)
        work_limit: int | None = None
        call_charge: int = 0
        calls: int = 0

        def _call_oracle(self, assumptions=[], expect_interrupt=False):  # noqa: B006 (RC2's signature)
            limit = self.work_limit
            if limit is not None:
                used = self.oracle.accum_stats()["propagations"] + self.calls * self.call_charge
                if used >= limit:
                    raise OutOfWork
                # a budget relative to the oracle's own count (minisat's semantics); RC2's core minimisation
                # sets a conflict budget of its own, which this leaves alone
                self.oracle.prop_budget(limit - used)
            self.calls += 1
            res = super()._call_oracle(assumptions=assumptions, expect_interrupt=expect_interrupt)
            if res is None and limit is not None and \
                    self.oracle.accum_stats()["propagations"] + self.calls * self.call_charge >= limit:
                raise OutOfWork
            if res and self.on_model is not None:
                self.on_model(self.oracle.get_model())
            return res
    return Hooked
