"""Tests of peggy_jvm.extract: the model and its validity checker, the JSON reader, greedy, shrinking, and the
MaxSAT solver (optimality against brute force, budget, checker hook).

Everything here is self-contained (small hand-written instances in ``tests/data/extraction/`` and random
e-graphs generated from fixed seeds); nothing reads ``/work/shared``.
"""
from __future__ import annotations

import importlib.util
import json
import math
import random
import subprocess
import sys
import traceback
import typing
from dataclasses import replace
from pathlib import Path

import pytest

import networkx as nx
from pysat.formula import IDPool
from pysat.solvers import Solver

from peggy_jvm.extract import maxsat
from peggy_jvm.extract.greedy import chain_extract, dag_greedy_extract, greedy_extract
from peggy_jvm.extract.maxsat import DEFAULT_CONFIGS, SolverConfig, Status, encode, solve
from peggy_jvm.extract.problem import (ExtractionProblem, InfeasibleProblemError, InvalidSelectionError, Node,
                                       Selection, dag_cost, evaluate_selection, integer_costs, usable_nodes)
from peggy_jvm.extract.serialize import ExtractionFormatError, parse_problem, read_problem
from peggy_jvm.extract.shrink import disjoint_sum_bound, must_reach, path_lower_bound, shrink
from support.extraction import brute_force, problem_of, random_problem, valid_selections

DATA = Path(__file__).parent / "data" / "extraction"


# ============================================================================================ helpers

def max2sat_problem(n_vars: int, n_clauses: int, seed: int) -> ExtractionProblem:
    """A MaxSAT instance as an e-graph (negative costs), hard for RC2 at this size."""
    rng = random.Random(seed)
    pos: dict[int, list[str]] = {i: [] for i in range(n_vars)}
    neg: dict[int, list[str]] = {i: [] for i in range(n_vars)}
    nodes = []
    for j in range(n_clauses):
        for v in rng.sample(range(n_vars), 2):
            (pos if rng.random() < 0.5 else neg)[v].append(f"k{j}")
        nodes.append(Node(f"k{j}", "clause", -1.0, f"k{j}"))
    for i in range(n_vars):
        nodes.append(Node(f"v{i}+", "pos", 0.0, f"v{i}", tuple(pos[i])))
        nodes.append(Node(f"v{i}-", "neg", 0.0, f"v{i}", tuple(neg[i])))
    nodes.append(Node("root", "root", 0.0, "r", tuple(f"v{i}" for i in range(n_vars))))
    return ExtractionProblem.build(nodes, ["r"])


def check_against_brute_force(problem: ExtractionProblem, expect_proof: bool = True, **kwargs) -> None:
    expected = brute_force(problem)
    if expected == math.inf:
        with pytest.raises(InfeasibleProblemError):
            solve(problem)
        with pytest.raises(InfeasibleProblemError):
            greedy_extract(problem)
        return
    result = solve(problem, **kwargs)
    assert result.selection is not None
    assert evaluate_selection(problem, result.selection).valid
    assert result.cost == dag_cost(problem, result.selection)
    assert result.cost >= expected
    greedy = greedy_extract(problem)
    assert greedy.cost >= result.cost, "greedy must never beat the MaxSAT result"
    assert result.greedy_cost == greedy.cost
    if expect_proof:
        assert result.status is Status.OPTIMAL, (problem.name, result)
    if result.status is Status.OPTIMAL:
        assert result.cost == expected, problem.name
        assert result.lower_bound == result.cost


# ============================================================================================ the model

def test_validity_rejects_cycles_and_accepts_may_close_ones() -> None:
    strict = problem_of(("R", "r", 0, ["x"]), ("X", "x", 1, ["y"]), ("Y", "y", 1, ["x"]), ("L", "y", 5, []))
    cyclic = Selection({"r": "R", "x": "X", "y": "Y"})
    report = evaluate_selection(strict, cyclic)
    assert not report.valid and "cycle" in report.errors[0]
    with pytest.raises(InvalidSelectionError):
        dag_cost(strict, cyclic)
    assert dag_cost(strict, Selection({"r": "R", "x": "X", "y": "L"})) == 6.0

    # the same cycle, with X's edge to y allowed to close a cycle (a theta's second child)
    theta = problem_of(("R", "r", 0, ["x"]), ("X", "x", 1, ["y"], [0]), ("Y", "y", 1, ["x"]), ("L", "y", 5, []))
    assert evaluate_selection(theta, cyclic).valid
    assert dag_cost(theta, cyclic) == 2.0


def test_validity_needs_every_reached_class_chosen_by_its_own_node() -> None:
    p = problem_of(("R", "r", 1, ["a", "a"]), ("A", "a", 2, []), ("B", "b", 7, []))
    assert not evaluate_selection(p, Selection({"r": "R"})).valid
    assert not evaluate_selection(p, Selection({"r": "R", "a": "B"})).valid
    # unreached choices neither cost nor invalidate; a shared child counts once
    assert dag_cost(p, Selection({"r": "R", "a": "A", "b": "B"})) == 3.0


def test_build_rejects_malformed_models() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        problem_of(("R", "r", 0, []), ("R", "r", 1, []))
    with pytest.raises(ValueError, match="not a class"):
        problem_of(("R", "r", 0, ["nowhere"]))
    with pytest.raises(ValueError, match="finite"):
        problem_of(("R", "r", math.nan, []))
    with pytest.raises(ValueError, match="may-close"):
        problem_of(("R", "r", 0, ["r"], [3]))
    with pytest.raises(ValueError, match="root"):
        problem_of(("R", "r", 0, []), roots=("q",))


def test_integer_costs_are_exact() -> None:
    p = problem_of(("R", "r", 0.1, []), ("S", "s", 0.25, []), ("T", "t", 3.0, []))
    weight, unit = integer_costs(p)
    for nid, n in p.nodes.items():
        assert weight[nid] * unit == n.cost  # Fraction == float compares exactly


# ============================================================================================ JSON

def test_read_problem_maps_child_nodes_to_classes() -> None:
    p = read_problem(DATA / "shared.json")
    assert p.roots == ("r",)
    assert p.size() == (4, 6)
    assert p.nodes["f"].children == ("a", "b")
    assert p.nodes["A2"].children == ("s",)
    assert not p.has_may_close


@pytest.mark.parametrize("text, fragment", [
    ("{not json", "not JSON"),
    ("[1, 2]", "top level is a list"),
    ('{"root_eclasses": ["r"]}', "missing 'nodes'"),
    ('{"nodes": {}, "root_eclasses": ["r"]}', "'nodes' is empty"),
    ('{"nodes": {"a": {"op": "x", "cost": "1", "eclass": "r", "children": []}}, "root_eclasses": ["r"]}',
     "node 'a': 'cost'"),
    ('{"nodes": {"a": {"op": "x", "cost": NaN, "eclass": "r", "children": []}}, "root_eclasses": ["r"]}',
     "finite number"),
    ('{"nodes": {"a": {"op": "x", "cost": 1, "children": []}}, "root_eclasses": ["r"]}', "'eclass' is missing"),
    ('{"nodes": {"a": {"op": "x", "cost": 1, "eclass": "r", "children": "b"}}, "root_eclasses": ["r"]}',
     "'children'"),
    ('{"nodes": {"a": {"op": "x", "cost": 1, "eclass": "r", "children": []}}}', "root_eclasses"),
    ('{"nodes": {"a": {"op": "x", "cost": 1, "eclass": "r", "children": []}}, "root_eclasses": ["q"]}',
     "root 0 is 'q'"),
])
def test_malformed_json_gives_a_clear_error(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ExtractionFormatError) as info:
        read_problem(path)
    message = str(info.value)
    assert message.startswith(str(path) + ": ")
    assert fragment in message
    assert isinstance(info.value, ValueError)


def test_malformed_file_in_data_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ExtractionFormatError, match=r"bad_child\.json: node 'R': child 0 is 'missing'"):
        read_problem(DATA / "bad_child.json")
    with pytest.raises(ExtractionFormatError, match="cannot read"):
        read_problem(tmp_path / "absent.json")
    with pytest.raises(ExtractionFormatError, match="^src: "):
        parse_problem({"nodes": 3}, source="src")


# ============================================================================================ greedy

def test_greedy_is_valid_and_misses_sharing() -> None:
    p = read_problem(DATA / "shared.json")
    g = greedy_extract(p)
    assert evaluate_selection(p, g.selection).valid
    assert g.cost == 7.0
    result = solve(p)
    assert (result.status, result.cost, result.greedy_cost) == (Status.OPTIMAL, 6.0, 7.0)
    assert set(result.selection.choices.values()) == {"f", "A2", "B2", "S"}


def test_cycle_instance() -> None:
    p = read_problem(DATA / "cycle.json")
    result = solve(p)
    assert result.status is Status.OPTIMAL and result.cost == 10.0
    assert result.selection.choices["x"] == "X2"


def test_chain_greedy_meets_the_chain_bound_where_tree_greedy_does_not() -> None:
    # s and t are forced (through c); A1 shares them (chain 10) where A2 is a leaf of 15 (tree 15 < 20):
    # tree greedy pays A2, the chain greedy shares, and its cost 20 equals the forced classes' least costs,
    # a solver-free proof (no solver configured at all).
    p = problem_of(("R", "r", 0, ["a", "c"]), ("C", "c", 0, ["s", "t"]),
                   ("A1", "a", 0, ["s", "t"]), ("A2", "a", 15, []), ("S", "s", 10, []), ("T", "t", 10, []))
    weight, _ = integer_costs(p)
    assert greedy_extract(p).cost == 35.0
    chain = chain_extract(p, weight)
    assert chain.cost == 20.0 and chain.selection.choices["a"] == "A1"
    result = solve(p, configs=())
    assert (result.status, result.cost, result.lower_bound, result.source) == (Status.OPTIMAL, 20.0, 20.0,
                                                                                 "greedy-chain")


def test_chain_greedy_is_valid_on_random_problems() -> None:
    for seed in range(200):
        p = random_problem(seed, n_classes=6, may_close=0.3 if seed % 2 else 0.0, negative=seed % 3 == 0)
        weight, _ = integer_costs(p)
        try:
            c = chain_extract(p, weight)
        except InfeasibleProblemError:
            assert brute_force(p) == math.inf
            continue
        assert evaluate_selection(p, c.selection).valid, seed
        assert c.cost >= brute_force(p)


def test_greedy_is_valid_on_random_problems() -> None:
    for seed in range(200):
        p = random_problem(seed, n_classes=6, may_close=0.3 if seed % 2 else 0.0, negative=seed % 3 == 0)
        try:
            g = greedy_extract(p)
        except InfeasibleProblemError:
            assert brute_force(p) == math.inf
            continue
        assert evaluate_selection(p, g.selection).valid, seed
        assert g.cost >= brute_force(p)


def test_dag_greedy_shares_what_tree_greedy_counts_twice() -> None:
    # A1 pulls in b and c, which share s (10): its tree cost is 1 + 11 + 11 = 23, its DAG cost 13; A2 pulls in
    # two leaves of 7 (tree and DAG cost 15, dearest chain 8 < A1's 12).  Tree and chain greedy take A2 (root
    # total 16), the DAG greedy A1 (root total 14, the optimum).
    p = problem_of(("R", "r", 1, ["a"]), ("A1", "a", 1, ["b", "c"]), ("A2", "a", 1, ["t", "u"]),
                   ("B", "b", 1, ["s"]), ("C", "c", 1, ["s"]), ("S", "s", 10, []),
                   ("T", "t", 7, []), ("U", "u", 7, []))
    assert greedy_extract(p).cost == 16.0
    assert chain_extract(p, integer_costs(p)[0]).cost == 16.0
    run = dag_greedy_extract(p)
    assert run.result is not None and run.result.cost == 14.0 and run.result.selection.choices["a"] == "A1"
    assert run.work > 0
    # with no solver at all, the result is the DAG greedy's (never worse than it), proved by the chain bound
    result = solve(p, configs=())
    assert (result.cost, result.dag_greedy_cost, result.greedy_cost) == (14.0, 14.0, 16.0)
    assert result.source == "greedy-dag"
    # within too little work it gives up rather than answer late
    assert dag_greedy_extract(p, work=3).result is None


def deep_chain(n: int) -> ExtractionProblem:
    """n classes, each one's node using the two below (DAG cost: one per class), and at the root a wide
    alternative: n leaves of 2, whose dearest chain (3) is far below the chain's (n) but whose DAG cost is 2n+1."""
    return problem_of(("L0", "c0", 1, []), ("L1", "c1", 1, []),
                      *((f"S{i}", f"c{i}", 1, [f"c{i - 1}", f"c{i - 2}"]) for i in range(2, n)),
                      ("Y", f"c{n - 1}", 1, [f"f{j}" for j in range(n)]),
                      *((f"F{j}", f"f{j}", 2, []) for j in range(n)),
                      roots=(f"c{n - 1}",))


def test_dag_greedy_finishes_a_deep_shared_chain_within_little_work() -> None:
    # With copied sets the DAG greedy paid for every class below each node (n*n/2 = 20,000 units here) and gave
    # up within 5,000; the tree and chain greedies then took the wide alternative (401). Bit sets priced from the
    # largest child's set cost a few units per node.
    n = 200
    p = deep_chain(n)
    assert greedy_extract(p).cost == chain_extract(p, integer_costs(p)[0]).cost == 2.0 * n + 1
    run = dag_greedy_extract(p, work=5_000)
    assert run.result is not None and run.result.cost == float(n) and run.work <= 5_000
    result = solve(p, work=5_000, configs=())
    assert (result.cost, result.source) == (float(n), "greedy-dag")


def test_dag_greedy_is_valid_on_random_problems() -> None:
    for seed in range(200):
        p = random_problem(seed, n_classes=6, may_close=0.3 if seed % 2 else 0.0, negative=seed % 3 == 0)
        run = dag_greedy_extract(p)
        if run.result is None:
            continue
        assert evaluate_selection(p, run.result.selection).valid, seed
        assert run.result.cost >= brute_force(p)


def test_greedy_survives_tree_costs_beyond_the_float_range() -> None:
    # A deep DAG where each class uses the two below it: its DAG cost is one node per class, but its tree cost
    # doubles every level or two (Fibonacci) and leaves the float range near depth 1475. fsum raised
    # OverflowError there, which crashed solve (it runs the tree greedy again on the shrunk problem, whose
    # cheap leaves can be gone) and with it a whole benchmark run.
    n = 1600
    p = problem_of(("L0", "c0", 1, []), ("L1", "c1", 1, []),
                   *((f"S{i}", f"c{i}", 1, [f"c{i - 1}", f"c{i - 2}"]) for i in range(2, n)), roots=(f"c{n - 1}",))
    g = greedy_extract(p)
    assert g.cost == float(n) and evaluate_selection(p, g.selection).valid
    assert g.tree_cost[f"c{n - 1}"] == math.inf and g.tree_cost["c100"] < math.inf
    result = solve(p)
    assert result.status is Status.OPTIMAL and result.cost == float(n)


def test_result_never_worse_than_the_dag_greedy_on_random_problems() -> None:
    # the property the benchmark checks on every instance, here on small random e-graphs with sharing and
    # cycles: the DAG greedy (unbounded, as extraction-gym runs it) is a floor the result never goes below,
    # with the solvers (default budget) and without any (the incumbents alone)
    compared = 0
    for seed in range(120):
        p = random_problem(seed, n_classes=7 + seed % 4, max_nodes=3, may_close=0.2 if seed % 3 == 0 else 0.0,
                           negative=seed % 7 == 0, fractional=seed % 2 == 1)
        run = dag_greedy_extract(p)
        if run.result is None:
            continue
        compared += 1
        for configs in (DEFAULT_CONFIGS, ()):
            result = solve(p, configs=configs)
            assert result.cost is not None and result.cost <= run.result.cost, (seed, configs)
    assert compared >= 60


def test_shrinking_preserves_the_optimum() -> None:
    checked = 0
    for seed in range(150):
        p = random_problem(seed, n_classes=6, may_close=0.25 if seed % 2 else 0.0, negative=seed % 5 == 0)
        expected = brute_force(p)
        if expected == math.inf:
            continue
        checked += 1
        s = shrink(p)
        assert brute_force(s.problem) == expected, seed
        assert set(shrink(p, usable=usable_nodes(p)).problem.nodes) == set(s.problem.nodes), seed
        for nid in s.fixed:  # fixed nodes are in every valid selection: dropping them makes it infeasible
            assert s.problem.nodes[nid].eclass in s.forced
        weight, _ = integer_costs(p)
        g = greedy_extract(p)
        upper = sum(weight[n] for n in evaluate_selection(p, g.selection).reached_nodes(g.selection))
        bounded = shrink(p, weight=weight, upper=upper)
        assert brute_force(bounded.problem) == expected, seed
        bound = path_lower_bound(p, weight)
        if bound is not None:
            assert bound <= upper
    assert checked > 80


def test_forced_classes_are_reached_by_every_valid_selection() -> None:
    checked = 0
    for seed in range(120):
        p = random_problem(seed, n_classes=6, max_nodes=2, may_close=0.25 if seed % 2 else 0.0,
                           negative=seed % 4 == 0)
        try:
            s = shrink(p, dominance=False)
        except InfeasibleProblemError:
            continue
        # the shrunk problem keeps every node some valid selection can use: check all of its selections
        for sel, reached in valid_selections(s.problem):
            assert s.forced <= reached, seed
            assert s.fixed <= set(sel.choices[c] for c in reached), seed
            must = must_reach(s.problem)
            index = list(s.problem.classes)
            for c in reached:
                assert {index[i] for i in range(len(index)) if must[c] >> i & 1} <= reached, seed
            checked += 1
    assert checked > 200


def test_solver_free_lower_bound_is_never_above_the_optimum() -> None:
    checked = 0
    for seed in range(150):
        p = random_problem(seed, n_classes=6, may_close=0.25 if seed % 2 else 0.0, negative=seed % 3 == 0,
                           fractional=seed % 5 == 0)
        expected = brute_force(p)
        if expected == math.inf:
            continue
        enc = encode(shrink(p))
        assert enc.to_cost(enc.trivial_bound) <= expected, seed
        checked += 1
    assert checked > 80


def test_disjoint_sum_bound_is_never_above_the_optimum() -> None:
    tight = 0
    for seed in range(300):
        # zero costs are common here, so free classes (and their switch in the soundness argument) occur
        p = random_problem(seed, n_classes=6, fractional=seed % 5 == 0)
        expected = brute_force(p)
        if expected == math.inf:
            continue
        q = shrink(p).problem
        weight, unit = integer_costs(q)
        bound = disjoint_sum_bound(q, weight)
        assert bound is not None
        # both sides correctly rounded from exact sums (float of a Fraction, fsum), so rounding keeps <=
        assert float(bound * unit) <= expected, seed
        assert bound >= path_lower_bound(q, weight), seed
        tight += float(bound * unit) == expected
    assert tight > 50
    # a sum of four leaves built by a tree of additions: children share nothing, so the bound is the tree
    p = problem_of(("R", "r", 1, ["ab", "cd"]), ("AB", "ab", 1, ["a", "b"]), ("CD", "cd", 1, ["c", "d"]),
                   ("A", "a", 1, []), ("B", "b", 1, []), ("C", "c", 1, []), ("D", "d", 1, []))
    weight, _ = integer_costs(p)
    assert (path_lower_bound(p, weight), disjoint_sum_bound(p, weight)) == (3, 7)
    # shared below: the bound must not add the shared leaf twice
    q = problem_of(("R", "r", 0, ["a", "b"]), ("A", "a", 1, ["s"]), ("B", "b", 1, ["s"]), ("S", "s", 5, []))
    weight, _ = integer_costs(q)
    assert disjoint_sum_bound(q, weight) == 6 <= brute_force(q) == 7
    # may-close edges or negative costs: no bound
    assert disjoint_sum_bound(problem_of(("R", "r", 0, ["a"], [0]), ("A", "a", 1, [])), {"R": 0, "A": 1}) is None


def test_shrinking_drops_dominated_unusable_and_unreachable_nodes() -> None:
    p = problem_of(
        ("R", "r", 0, ["a"]),
        ("A1", "a", 1, ["b"]),        # dominated by A2: dearer, more children
        ("A2", "a", 1, []),
        ("A3", "a", 0, ["a"]),        # strict self-loop: never usable
        ("A4", "a", 0, ["z"]),        # z has no derivable node
        ("B", "b", 1, []),
        ("Z", "z", 0, ["z"]),
        ("U", "u", 0, []),            # unreachable
    )
    s = shrink(p)
    assert set(s.problem.nodes) == {"R", "A2"}
    assert s.fixed == {"R", "A2"}
    assert s.stats.dominated == 1 and s.stats.unreachable >= 1
    assert "A3" not in usable_nodes(p) and "A4" not in usable_nodes(p)


def test_dominance_keeps_cycle_freedom_and_negative_costs() -> None:
    # A2 is cheaper with fewer children, but its edge to b may not close a cycle while A1's may: keep A1.
    p = problem_of(("R", "r", 0, ["a"]), ("A1", "a", 2, ["b"], [0]), ("A2", "a", 1, ["b"]),
                   ("B", "b", 0, ["a"]), ("B2", "b", 9, []))
    assert "A1" in shrink(p).problem.nodes
    # dropping A1 would lose the negative node below c
    q = problem_of(("R", "r", 0, ["a"]), ("A1", "a", 1, ["c"]), ("A2", "a", 0, []), ("C", "c", -5, []))
    assert "A1" in shrink(q).problem.nodes
    assert solve(q).cost == -4.0


# ============================================================================================ MaxSAT

@pytest.mark.parametrize("seed", range(0, 60))
def test_optimum_equals_brute_force(seed: int) -> None:
    kinds = [dict(), dict(may_close=0.3), dict(fractional=True), dict(may_close=0.2, fractional=True)]
    p = random_problem(seed, n_classes=5 + seed % 3, **kinds[seed % 4])
    check_against_brute_force(p)


@pytest.mark.parametrize("seed", range(100, 120))
def test_optimum_with_negative_costs(seed: int) -> None:
    may_close = 0.3 if seed % 2 else 0.0
    p = random_problem(seed, n_classes=6, negative=True, may_close=may_close)
    # with negative costs and may-close edges an unreached "island" may block the proof, never correctness
    check_against_brute_force(p, expect_proof=may_close == 0.0)


@pytest.mark.parametrize("seed", range(200, 215))
def test_optimum_without_shrinking_and_with_one_config(seed: int) -> None:
    p = random_problem(seed, n_classes=6, may_close=0.3 if seed % 2 else 0.0)
    check_against_brute_force(p, use_shrink=False, configs=(SolverConfig("plain", stratified=False),))


@pytest.mark.parametrize("seed", range(300, 330))
@pytest.mark.parametrize("phases", [False, True])
def test_each_default_config_alone_with_and_without_incumbent_polarities(seed: int, phases: bool) -> None:
    # the default stratified config starts at the solver's polarities, the plain one at the incumbent's:
    # either start must still prove the brute-force optimum (fractional costs give several weight levels,
    # so stratification really splits; no shrinking, so the solver has the whole problem to search; on seeds
    # 306 and 325 only the solver reaches the optimum, the greedies do not)
    p = random_problem(seed, n_classes=8, fractional=True, may_close=0.2 if seed % 2 else 0.0)
    for cfg in DEFAULT_CONFIGS:
        check_against_brute_force(p, use_shrink=False, configs=(replace(cfg, phases=phases),))


@pytest.mark.parametrize("seed", range(10))
def test_elimination_encoding_forbids_exactly_the_cycles(seed: int) -> None:
    # every subset of a random digraph's edges: satisfiable with those edge literals true iff acyclic (the
    # other literals stay free, as in the encoding, where a chosen node only implies its edges' literals)
    rng = random.Random(seed)
    vertices = [f"v{i}" for i in range(5)]
    pairs = [(u, w) for u in vertices for w in vertices if u != w]
    edges = rng.sample(pairs, 8)
    pool = IDPool()
    lit = {e: pool.id(("edge",) + e) for e in edges}
    plan = maxsat._elimination_plan(vertices, lit)
    assert plan is not None
    clauses = maxsat._elimination_clauses(plan, lit, pool)
    with Solver(name="g3", bootstrap_with=clauses) as solver:
        for mask in range(1 << len(edges)):
            on = [e for i, e in enumerate(edges) if mask >> i & 1]
            assumptions = [lit[e] for e in on]
            acyclic = nx.is_directed_acyclic_graph(nx.DiGraph(on)) if on else True
            assert solver.solve(assumptions=assumptions) == acyclic, (seed, on)


@pytest.mark.parametrize("seed", range(400, 415))
def test_level_and_elimination_encodings_agree(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    p = random_problem(seed, n_classes=6, may_close=0.2 if seed % 2 else 0.0)
    expected = brute_force(p)
    if expected == math.inf:
        return
    for factor in (0, 10**6):  # 0: binary levels everywhere; huge: elimination everywhere
        monkeypatch.setattr(maxsat, "_ELIM_FACTOR", factor)
        enc = encode(shrink(p))
        if factor:
            assert enc.stats["level_pairs"] == 0
        else:
            assert enc.stats["elim_clauses"] == 0
        result = solve(p, configs=(SolverConfig("plain", stratified=False),))
        assert result.status is Status.OPTIMAL and result.cost == expected, (seed, factor)


def test_costs_are_ranked_exactly() -> None:
    # 0.1 + 0.2 > 0.3 in binary floating point (exactly, not just after rounding): {A, B} loses to {C}.
    p = problem_of(("R1", "r", 0, ["a", "b"]), ("R2", "r", 0, ["c"]),
                   ("A", "a", 0.1, []), ("B", "b", 0.2, []), ("C", "c", 0.3, []))
    result = solve(p)
    assert result.status is Status.OPTIMAL
    assert result.selection.choices["r"] == "R2" and result.cost == 0.3


def test_work_budget_is_honoured_and_the_result_reproducible() -> None:
    """A small propagation budget stops the solver short of a proof; the result (selection, status, bound) is
    the same on every run, since no clock and no race decides anything. An unbounded run proves more."""
    p = max2sat_problem(80, 700, seed=1)
    results = [solve(p, work=20_000) for _ in range(2)]
    result = results[0]
    assert result.status in (Status.GREEDY, Status.BEST_FOUND)
    assert any("work budget spent" in n for n in result.notes), result.notes
    assert result.cost <= result.greedy_cost
    assert result.lower_bound is not None and result.lower_bound <= result.cost
    assert evaluate_selection(p, result.selection).valid
    again = results[1]
    assert (again.selection, again.status, again.cost, again.lower_bound, again.source) == \
           (result.selection, result.status, result.cost, result.lower_bound, result.source)
    more = solve(p, work=2_000_000)
    assert more.cost <= result.cost


def test_cores_of_a_run_cut_short_bound_the_optimum() -> None:
    """RC2 stopped by its work budget keeps the bound its proved cores give: never above the optimum (proved by
    an unbounded run), with or without a checker, above the solver-free bound (all 60 clauses satisfied), the
    same on every run."""
    for seed in range(4):
        p = max2sat_problem(14, 60, seed=seed)
        opt = solve(p, work=None)
        assert opt.status is Status.OPTIMAL
        for work in (300, 1000, 3000):
            # a checker (accepting everything) turns off dominance and stratified RC2's hardening
            for checker in (None, lambda problem, selection: ()):
                result = solve(p, work=work, checker=checker)
                assert result.lower_bound is not None and result.lower_bound <= opt.cost, (seed, work)
    p = max2sat_problem(14, 60, seed=1)
    result, again = solve(p, work=1000), solve(p, work=1000)
    assert result.status is Status.BEST_FOUND and any(n.startswith("cores: ") for n in result.notes)
    assert result.lower_bound > -60.0
    assert (again.lower_bound, again.cost, again.notes) == (result.lower_bound, result.cost, result.notes)


def test_neighbourhood_search_improves_what_rc2_cannot_prove() -> None:
    """RC2 runs out of work on this Max-2-SAT e-graph; the neighbourhood search, within the extra work share,
    improves on every greedy (the DAG greedy's included), reproducibly, and stays within its share (the
    quadratic phase off: its tabu search would find a better selection first)."""
    p = max2sat_problem(80, 700, seed=1)
    work = 100_000
    results = [solve(p, work=work, use_quadratic=False) for _ in range(2)]
    result = results[0]
    assert any(n.startswith("rc2") and "work budget spent" in n for n in result.notes), result.notes
    assert result.source == "lns" and result.status is Status.BEST_FOUND
    assert result.dag_greedy_cost is not None
    assert result.cost < min(result.greedy_cost, result.dag_greedy_cost)
    assert evaluate_selection(p, result.selection).valid
    assert result.cost == dag_cost(p, result.selection)
    assert result.extra_work <= 1.1 * work
    again = results[1]
    assert (again.selection, again.cost, again.source, again.extra_work) == \
           (result.selection, result.cost, result.source, result.extra_work)


def test_neighbourhood_search_alone_reaches_the_optimum() -> None:
    """Without any RC2 configuration, the neighbourhood search grows its ball to the whole problem and proves
    the optimum there (checked against brute force)."""
    by_lns = 0
    for seed in range(60):
        p = random_problem(seed, n_classes=7, may_close=0.3 if seed % 2 else 0.0, negative=seed % 3 == 0)
        expected = brute_force(p)
        if expected == math.inf:
            continue
        result = solve(p, configs=(), work=10**6)
        assert result.status is Status.OPTIMAL and result.cost == expected, (seed, result)
        by_lns += any("the last one over the whole problem" in n for n in result.notes)
    assert by_lns >= 2


def test_neighbourhood_search_stops_once_every_seed_is_refused() -> None:
    """A neighbourhood whose fixed part the hard clauses refuse changes nothing but the seed: once every seed
    of the incumbent has been refused in a row, the rounds would only repeat until the work is spent (guava's
    ``Interners$InternerImpl.intern``: 239 122 refused rounds, 60 s, where the shrunk problem held nothing below
    the incumbent). The search stops there, with the incumbent, having spent next to none of its work."""
    p = max2sat_problem(80, 300, seed=3)
    weights = integer_costs(p)
    enc = encode(shrink(p, weight=weights[0]), weights=weights)
    enc.wcnf.hard.extend([[1], [-1]])  # nothing below the incumbent: every propagation conflicts
    incumbent = evaluate_selection(p, greedy_extract(p).selection).reached_nodes(greedy_extract(p).selection)
    candidates = [maxsat._Candidate(enc.objective(n for n in incumbent if n in enc.var), incumbent, "greedy")]
    notes: list[str] = []
    work = 1_000_000
    proof, spent = maxsat._lns(p, enc, None, 100, work, [], candidates, notes)
    assert proof is None and len(candidates) == 1
    assert notes == ["lns: 0 rounds, 0 improving, then every seed's neighbourhood refused by the hard clauses"]
    assert spent < work // 10  # the rounds used to go on until ``work`` was spent


def test_neighbourhood_search_only_adds_valid_improving_selections_and_is_reproducible() -> None:
    """Property of :func:`maxsat._lns` over small random e-graphs (cycles, may-close edges, negative and
    fractional costs), started from the tree greedy's selection with little work: every selection it adds is
    valid, strictly cheaper than the one before it and never below the optimum (brute force); a bound it
    returns is met by its best selection, which is then the optimum; and a second run gives the same
    selections, bound, work and notes."""
    improved = proved = 0
    for seed in range(80):
        p = random_problem(seed, n_classes=9, may_close=0.3 if seed % 2 else 0.0, negative=seed % 3 == 0,
                           fractional=seed % 5 == 0)
        expected = brute_force(p)
        if expected == math.inf:
            continue
        greedy = greedy_extract(p).selection
        report = evaluate_selection(p, greedy)
        if not report.valid:
            continue
        weights = integer_costs(p)
        enc = encode(shrink(p, weight=weights[0]), weights=weights)
        incumbent = report.reached_nodes(greedy)
        runs = []
        for _ in range(2):
            candidates = [maxsat._Candidate(enc.objective(incumbent), incumbent, "greedy")]
            notes: list[str] = []
            proof, spent = maxsat._lns(p, enc, None, 100, 20_000, [], candidates, notes)
            runs.append((proof, spent, [(c.objective, c.nodes, c.source) for c in candidates], notes))
        assert runs[0] == runs[1], seed
        proof, _, found, _ = runs[0]
        cost = report.cost
        for objective, nodes, source in found[1:]:
            sel = Selection({p.nodes[n].eclass: n for n in nodes})
            new = evaluate_selection(p, sel)
            assert new.valid and source == "lns", seed
            assert expected - 1e-9 <= new.cost < cost and objective == enc.objective(nodes), seed
            cost = new.cost
        if proof is not None:
            assert found[-1][0] <= proof and math.isclose(cost, expected, abs_tol=1e-9), seed
            proved += 1
        improved += len(found) > 1
    assert improved >= 5 and proved >= 60, (improved, proved)


# ============================================================================================ the hook

def test_checker_forbidding_a_node_blocks_and_resolves() -> None:
    p = read_problem(DATA / "shared.json")  # optimum {f, A2, B2, S} = 6
    calls: list[frozenset[str]] = []

    def no_b2(problem: ExtractionProblem, selection: Selection):
        chosen = frozenset(selection.choices.values())
        calls.append(chosen)
        return [(("B2", False),)] if "B2" in chosen else []

    result = solve(p, checker=no_b2)
    assert result.status is Status.OPTIMAL
    assert "B2" not in result.selection.choices.values()
    assert result.cost == brute_force(p, forbid=frozenset({"B2"})) == 7.0
    assert calls  # the parent ran it on the greedy incumbent, at least

    # a checker that rejects greedy's own choice: the first optimum is blocked in the worker, then re-solved
    def no_a1_no_a2(problem: ExtractionProblem, selection: Selection):
        chosen = frozenset(selection.choices.values())
        return [((n, False),) for n in ("A1", "A2") if n in chosen]

    result = solve(p, checker=no_a1_no_a2)
    assert result.status is Status.NONE and result.selection is None  # class a has no other node
    assert result.greedy_cost is None


def test_a_checker_done_for_good_ends_the_search_with_the_same_result() -> None:
    """A checker whose budget is for the whole search raises a final OutOfWork: nothing can be accepted after
    it, so no later configuration or neighbourhood round could add a candidate or a proof. The search ends
    there with the result it would have reached by asking on (and being refused) until its own work ran out
    (the quadratic phase off: it asks about its tabu selection first)."""
    p = max2sat_problem(80, 700, seed=1)

    def counting(final: bool):
        calls: list[int] = []

        def checker(problem: ExtractionProblem, selection: Selection):
            calls.append(1)
            if len(calls) > 3:
                raise maxsat.OutOfWork("spent", final=final)
            return []
        return checker, calls

    on, asked_on = counting(final=False)
    done, asked_done = counting(final=True)
    plain, ended = (solve(p, work=100_000, checker=on, use_quadratic=False),
                    solve(p, work=100_000, checker=done, use_quadratic=False))
    assert (ended.selection, ended.cost, ended.status, ended.lower_bound, ended.source) == \
           (plain.selection, plain.cost, plain.status, plain.lower_bound, plain.source)
    assert len(asked_done) == 4 <= len(asked_on)
    assert ended.extra_work < plain.extra_work  # the neighbourhood rounds after the refusal are not run
    assert ended.notes[-1].endswith("then the checker accepted nothing more"), ended.notes


def test_checker_blocking_inside_the_worker(tmp_path: Path) -> None:
    # Greedy (tree costs 3.5 < 3.75) picks the leaves A2 and B2 (7); the solver's first optimum shares X
    # (A1 + B1 + X = 4.75), which the checker forbids: the worker must add the blocking clause, call RC2
    # again incrementally, and prove 7.  The checker runs in the worker process, so it logs to a file.
    p = problem_of(
        ("R", "r", 0, ["a", "b"]),
        ("A1", "a", 1, ["x"]), ("A2", "a", 3.5, []),
        ("B1", "b", 1, ["x"]), ("B2", "b", 3.5, []),
        ("X", "x", 2.75, []),
    )
    log = tmp_path / "checked.txt"

    def not_a1_with_b1(problem: ExtractionProblem, selection: Selection):
        chosen = frozenset(selection.choices.values())
        with log.open("a") as f:
            f.write(" ".join(sorted(chosen)) + "\n")
        return [(("A1", False), ("B1", False))] if {"A1", "B1"} <= chosen else []

    assert greedy_extract(p).cost == 7.0
    assert solve(p).cost == 4.75
    result = solve(p, checker=not_a1_with_b1)
    assert result.status is Status.OPTIMAL and result.cost == 7.0
    assert not {"A1", "B1"} <= set(result.selection.choices.values())
    seen = log.read_text().splitlines()
    assert "A1 B1 R X" in seen  # rejected in a worker, then re-solved with the block


def test_checker_agrees_with_brute_force_on_random_problems() -> None:
    for seed in range(300, 330):
        p = random_problem(seed, n_classes=5, may_close=0.2 if seed % 2 else 0.0)
        if brute_force(p) == math.inf:
            continue
        victim = sorted(p.nodes)[seed % len(p.nodes)]

        def checker(problem: ExtractionProblem, selection: Selection, victim: str = victim):
            return [((victim, False),)] if victim in selection.choices.values() else []

        expected = brute_force(p, forbid=frozenset({victim}))
        result = solve(p, checker=checker)
        if expected == math.inf:
            assert result.status is Status.NONE, seed
            continue
        assert result.status is Status.OPTIMAL, (seed, result)
        assert result.cost == expected, seed
        assert victim not in result.selection.choices.values()

        via_clause = solve(p, extra_hard=[((victim, False),)])
        assert via_clause.status is Status.OPTIMAL and via_clause.cost == expected, seed


def test_data_files_are_json() -> None:
    for path in DATA.glob("*.json"):
        json.loads(path.read_text())


def test_the_encoding_does_not_depend_on_set_order() -> None:
    """Sub-problems keep the problem's class order whatever order the classes are handed over in (shrinking
    passes sets, whose order over string ids changes with PYTHONHASHSEED), and so the encoding's clauses, and
    the selection the SAT solver returns among equally cheap ones, are the same in every process."""
    p = max2sat_problem(12, 30, seed=3)
    keep = list(p.nodes)
    forward = p.restrict(keep, list(p.classes))
    backward = p.restrict(reversed(keep), list(reversed(list(p.classes))))
    assert list(forward.classes) == list(backward.classes) == list(p.classes)
    shrunk = shrink(p)
    again = shrink(p)
    assert encode(shrunk).wcnf.hard == encode(again).wcnf.hard


# ============================================================================================ the benchmark

def test_bench_goes_on_past_a_bad_instance_and_takes_two_folders(tmp_path: Path) -> None:
    good = {"nodes": {"R": {"op": "r", "cost": 1, "eclass": "r", "children": ["A"]},
                      "A": {"op": "a", "cost": 2, "eclass": "a", "children": []}}, "root_eclasses": ["r"]}
    bad = {"nodes": {"R": {"op": "r", "cost": 1, "eclass": "r", "children": []}}, "root_eclasses": ["x"]}
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (one / "a_bad.json").write_text(json.dumps(bad))
    (one / "b_good.json").write_text(json.dumps(good))
    (two / "c_good.json").write_text(json.dumps(good))
    out = tmp_path / "rows.json"
    bench = Path(__file__).parent.parent / "scripts" / "bench_extract.py"
    run = subprocess.run([sys.executable, str(bench), str(one), str(two), "--work", "10000", "--json", str(out)],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {r["file"]: r for r in json.loads(out.read_text())}
    assert set(rows) == {"one/a_bad.json", "one/b_good.json", "two/c_good.json"}
    assert rows["one/a_bad.json"]["status"] == "error"
    assert "a_bad.json" in rows["one/a_bad.json"]["notes"] and "'x'" in rows["one/a_bad.json"]["notes"]
    assert rows["two/c_good.json"]["status"] == "optimal" and rows["two/c_good.json"]["cost"] == 3.0
    text = run.stdout
    assert "2 instances (1 errors)" in text and "error: " in text


def test_bench_says_why_an_instance_is_not_proved(tmp_path: Path) -> None:
    """An instance the solver cannot prove within the bench's work gets a line saying why: the gap between its
    cost and the proved lower bound (those of its JSON row) and how the solver's phases ended."""
    p = max2sat_problem(40, 300, seed=1)
    nodes = {n.id: {"op": n.op, "cost": n.cost, "eclass": n.eclass,
                    "children": [p.classes[c][0] for c in n.children]} for n in p.nodes.values()}
    (tmp_path / "m.json").write_text(json.dumps({"nodes": nodes, "root_eclasses": list(p.roots)}))
    out = tmp_path / "rows.json"
    bench = Path(__file__).parent.parent / "scripts" / "bench_extract.py"
    run = subprocess.run([sys.executable, str(bench), str(tmp_path / "m.json"), "--work", "5000", "--json",
                          str(out)], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    (row,) = json.loads(out.read_text())
    assert row["status"] != "optimal" and row["lower"] < row["cost"]
    (line,) = [ln for ln in run.stdout.splitlines() if ln.strip().startswith(f"{row['file']}: gap ")]
    gap = line.split(": gap ", 1)[1].split(" ", 1)[0]
    assert math.isclose(float(gap), row["cost"] - row["lower"], rel_tol=1e-5)
    assert "rc2-strat: work budget spent (5000 units)" in line


def _bench_module() -> typing.Any:
    spec = importlib.util.spec_from_file_location("bench_extract_under_test",
                                                  Path(__file__).parent.parent / "scripts" / "bench_extract.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_bench_reference_solves_in_a_child_and_falls_back_to_the_dag_greedy(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``--reference``: the reference RC2 set-up runs in a child process on the problem as read.  Where it
    finishes it proves the optimum, here the shared child that every greedy misses (both greedies price
    ``a`` and ``b`` separately: 8 against 6); where its CPU limit ends it, its answer is the DAG greedy's cost,
    unproved, and the run goes on."""
    shared = {"nodes": {"R": {"op": "r", "cost": 1, "eclass": "r", "children": ["A1", "B1"]},
                        "A1": {"op": "a1", "cost": 1, "eclass": "a", "children": ["S"]},
                        "A2": {"op": "a2", "cost": 3.5, "eclass": "a", "children": []},
                        "B1": {"op": "b1", "cost": 1, "eclass": "b", "children": ["S"]},
                        "B2": {"op": "b2", "cost": 3.5, "eclass": "b", "children": []},
                        "S": {"op": "s", "cost": 3, "eclass": "s", "children": []}},
              "root_eclasses": ["r"]}
    path = tmp_path / "shared.json"
    path.write_text(json.dumps(shared))
    bench = _bench_module()
    dag = dag_greedy_extract(read_problem(path)).result
    assert dag is not None and dag.cost == 8.0
    cost, proved, cpu = bench.run_reference(str(path), dag.cost)
    assert (cost, proved) == (6.0, True) and 0.0 <= cpu < bench.REFERENCE_CPU_S
    # a solver that never finishes: the child's CPU limit (1 s) ends it. (A limit of 0 raced the kernel's CPU-timer
    # tick: a child that solves in 3 ms could answer before SIGXCPU, and did once in CI.)
    class Spinning:
        def __init__(self, *args, **kwargs) -> None:
            pass

        def __enter__(self) -> "Spinning":
            return self

        def __exit__(self, *exc) -> None:
            pass

        def compute(self) -> None:
            while True:
                pass

    monkeypatch.setattr(bench, "RC2Stratified", Spinning)
    monkeypatch.setattr(bench, "REFERENCE_CPU_S", 1)
    assert bench.run_reference(str(path), dag.cost) == (8.0, False, 1.0)


def test_bench_own_extract_records_every_extraction(tmp_path: Path) -> None:
    """The optimizer's own e-graphs: every call of maxsat.solve the full stage makes on a fixture class is
    recorded with its status and CPU time (none recorded would mean the wrapper no longer sees the calls); the
    shares of how the searches ended are the report's own ``search`` counts, and extraction's CPU (the triage
    included) is part of the run's."""
    fixture = Path(__file__).parent.parent / "fixtures" / "classes" / "release17" / "Iinc.class"
    if not fixture.exists():
        pytest.skip("make fixtures first")
    out = tmp_path / "own.json"
    bench = Path(__file__).parent.parent / "scripts" / "bench_own_extract.py"
    run = subprocess.run([sys.executable, str(bench), str(fixture), "--json", str(out), "--out", str(tmp_path)],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    (row,) = json.loads(out.read_text())
    assert row["solver_calls"] >= 3 and sum(row["statuses"].values()) == row["solver_calls"]
    assert set(row["statuses"]) <= {"optimal", "best_found", "greedy", "none"} and row["statuses"]["optimal"] >= 1
    assert 0 < row["solve_cpu"] <= row["extract_cpu"] <= row["run_cpu"]
    assert f"{row['solver_calls']} solver calls" in run.stdout
    assert row["searched"] == sum(row["search"].values()) >= 1 and row["search"].get("optimal (proved)", 0) >= 1
    assert set(row["search"]) <= {"optimal (proved)", "best found", "greedy", "none", "no cheaper (bound)"}
    assert f"{row['searched']} searched" in run.stdout


def test_the_engine_imports_no_peg_egraph_or_adapter_module():
    """``extract/`` is the generic engine (issue 20): importing all of it loads nothing of the PEG, the e-graph
    or the PEG adapter (``pegextract/``), which alone connects the two."""
    import subprocess
    import sys
    probe = ("import sys, peggy_jvm.extract, peggy_jvm.extract.maxsat, peggy_jvm.extract.serialize; "
             "print(sorted(m for m in sys.modules if m.startswith('peggy_jvm.')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert "peggy_jvm.extract.maxsat" in loaded, loaded
    for other in ("peggy_jvm.peg", "peggy_jvm.egraph", "peggy_jvm.pegextract", "peggy_jvm.saturate"):
        assert f"'{other}" not in loaded, loaded


def test_a_safety_net_interruption_leaves_the_solver_unfreed() -> None:
    """The safety net (MethodTimeout) can stop pysat's own Python code mid-update, and freeing its solver then
    can abort the process (a double free in pycard). Such a solver is abandoned instead: kept alive with the
    interruption, never deleted, and the interruption still propagates to the pipeline's fallback."""
    from peggy_jvm.budget import MethodTimeout

    p = max2sat_problem(40, 300, seed=2)

    def checker(problem: ExtractionProblem, selection: Selection):
        # the first checks are of the greedy incumbents, before any solver exists; the net fires inside RC2
        if any(f.name == "run" and f.filename.endswith("maxsat.py") for f in traceback.extract_stack()):
            raise MethodTimeout("net fired inside the search")
        return []

    before = len(maxsat._ABANDONED)
    with pytest.raises(MethodTimeout):
        solve(p, work=100_000, checker=checker)
    assert len(maxsat._ABANDONED) == before + 1
    rc2, interruption = maxsat._ABANDONED[-1]
    assert isinstance(interruption, MethodTimeout)
    assert rc2 is not None and rc2.oracle is not None  # not deleted
