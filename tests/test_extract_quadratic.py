"""The quadratic phase of extraction (``extract/quadratic.py``): the model of Max-2-SAT-shaped e-graphs weighs
every selection as the checker does, the spectral bound never proves a weight the optimum does not have (and
proves the odd cycle's and the 3-cube's max-cut with no solver), the tabu search and ``solve`` with it agree
with brute force, and the shape is refused where it does not hold (cycles, three literals, tensat-like)."""
from __future__ import annotations

import itertools
import math
import random

from peggy_jvm.extract.maxsat import Status, solve
from peggy_jvm.extract.problem import ExtractionProblem, Node, evaluate_selection, integer_costs
from peggy_jvm.extract.quadratic import (_bareiss_positive_definite, quadratic_model, spectral_proves,
                                         tabu_search)
from support.extraction import brute_force, problem_of, random_problem


def random_quadratic(seed: int, n_vars: int = 6, n_leaves: int = 14) -> ExtractionProblem:
    """A Max-2-SAT-shaped e-graph with everything the model must price: decision nodes with costs of their
    own, leaves of positive, negative and fractional cost reached by one literal, two, or both nodes of one
    decision class."""
    rng = random.Random(seed)
    kids: dict[str, list[str]] = {f"v{i}{s}": [] for i in range(n_vars) for s in "+-"}
    nodes = []
    for j in range(n_leaves):
        kind = rng.random()
        if kind < 0.2:
            lits = [f"v{rng.randrange(n_vars)}{rng.choice('+-')}"]
        elif kind < 0.3:
            v = rng.randrange(n_vars)
            lits = [f"v{v}+", f"v{v}-"]
        else:
            lits = [f"v{v}{rng.choice('+-')}" for v in rng.sample(range(n_vars), 2)]
        for lit in lits:
            kids[lit].append(f"k{j}")
        nodes.append(Node(f"k{j}", "clause", rng.choice([-3.0, -1.0, -0.5, 1.0, 2.0]), f"k{j}"))
    for i in range(n_vars):
        for s in "+-":
            cost = rng.choice([0.0, 0.0, 0.25, 1.0, -1.0])
            nodes.append(Node(f"v{i}{s}", s, cost, f"v{i}", tuple(kids[f"v{i}{s}"])))
    nodes.append(Node("root", "root", 1.0, "r", tuple(f"v{i}" for i in range(n_vars))))
    return ExtractionProblem.build(nodes, ["r"], name=f"quadratic-{seed}")


def max_cut(n: int, edges: list[tuple[int, int]]) -> ExtractionProblem:
    """Max-cut as Max-2-SAT as an e-graph (as in ../shared/extraction's maxsat family): ``(a | b)`` and
    ``(-a | -b)`` per edge, each clause a leaf of cost -1."""
    kids: dict[str, list[str]] = {f"v{i}{s}": [] for i in range(n) for s in "+-"}
    nodes = []
    for j, (a, b) in enumerate(edges):
        for s, name in (("+", f"p{j}"), ("-", f"n{j}")):
            kids[f"v{a}{s}"].append(name)
            kids[f"v{b}{s}"].append(name)
            nodes.append(Node(name, "clause", -1.0, name))
    nodes += [Node(f"v{i}{s}", s, 0.0, f"v{i}", tuple(kids[f"v{i}{s}"])) for i in range(n) for s in "+-"]
    nodes.append(Node("root", "root", 0.0, "r", tuple(f"v{i}" for i in range(n))))
    return ExtractionProblem.build(nodes, ["r"])


def test_the_model_weighs_every_selection_as_the_checker_does() -> None:
    for seed in range(40):
        p = random_quadratic(seed)
        weight, unit = integer_costs(p)
        model = quadratic_model(p, weight)
        assert model is not None, seed
        for x in itertools.product((1, -1), repeat=len(model.lin)):
            report = evaluate_selection(p, model.selection(x))
            assert report.valid
            assert model.value(x) % 4 == 0
            assert float(model.value(x) // 4 * unit) == report.cost, (seed, x)
            assert model.assignment(model.selection(x).choices) == list(x)


def test_the_shape_is_refused_where_it_does_not_hold() -> None:
    three = problem_of(("R", "r", 0, ["a", "b", "c"]),
                       ("A+", "a", 0, ["k"]), ("A-", "a", 0, []), ("B+", "b", 0, ["k"]), ("B-", "b", 0, []),
                       ("C+", "c", 0, ["k"]), ("C-", "c", 0, []), ("K", "k", -1, []))
    deeper = problem_of(("R", "r", 0, ["a"]), ("A+", "a", 0, ["b"]), ("A-", "a", 0, []),
                        ("B+", "b", 0, []), ("B-", "b", 1, []))
    cyclic = problem_of(("R", "r", 0, ["a"]), ("A+", "a", 0, ["k"]), ("A-", "a", 0, []),
                        ("K", "k", -1, ["a"]))
    for p in (three, deeper, cyclic):
        assert quadratic_model(p, integer_costs(p)[0]) is None
    for seed in range(30):  # random e-graphs (cycles, may-close edges): solve is unchanged there
        p = random_problem(seed, n_classes=6, may_close=0.3 if seed % 2 else 0.0)
        if quadratic_model(p, integer_costs(p)[0]) is None and brute_force(p) < math.inf:
            assert solve(p).cost == brute_force(p)


def test_bareiss_decides_positive_definiteness_exactly() -> None:
    assert _bareiss_positive_definite([[2, 1], [1, 2]])
    assert not _bareiss_positive_definite([[1, 2], [2, 1]])
    assert not _bareiss_positive_definite([[1, 1], [1, 1]])  # semidefinite only
    assert _bareiss_positive_definite([[4, 2, 0], [2, 5, 3], [0, 3, 6]])
    assert not _bareiss_positive_definite([[4, 2, 0], [2, 1, 3], [0, 3, 6]])


def test_spectral_bound_never_proves_more_than_the_optimum() -> None:
    """At the optimum's weight plus one it never claims a proof; at the optimum it sometimes does (the
    check is not vacuous)."""
    proved = 0
    for seed, size in itertools.product(range(40), ((3, 6), (5, 10))):
        p = random_quadratic(seed, n_vars=size[0], n_leaves=size[1])
        weight, unit = integer_costs(p)
        model = quadratic_model(p, weight)
        assert model is not None
        best = min(model.value(x) for x in itertools.product((1, -1), repeat=len(model.lin))) // 4
        assert float(best * unit) == brute_force(p)
        assert not spectral_proves(model, best + 1, 10**6)[0], (seed, size)
        proved += spectral_proves(model, best, 10**6)[0]
    assert proved >= 3, proved


def test_spectral_bound_within_its_work() -> None:
    """The checks cost about N^3/3 units each: with less work there is no proof and nothing is spent; the
    5-cycle (N = 5) needs 2 * (41 + 25) units."""
    cycle = max_cut(5, [(i, (i + 1) % 5) for i in range(5)])
    model = quadratic_model(cycle, integer_costs(cycle)[0])
    assert model is not None
    assert spectral_proves(model, -9, 131) == (False, 0)
    assert spectral_proves(model, -9, 132) == (True, 132)
    assert spectral_proves(model, -10, 132) == (True, 132)  # a weaker claim, proved as well
    assert spectral_proves(model, -8, 132) == (False, 66)  # above the optimum: the float check refuses it


def test_spectral_bound_proves_max_cut_of_the_odd_cycle_and_the_cube_with_no_solver() -> None:
    """The 5-cycle's max-cut (4 edges; the bound 4.52, so a weight of -9 in whole units) and the 3-cube's (all
    12: it is bipartite) are proved with no solver configuration and no neighbourhood search; a random graph's
    is not, and RC2 proves it."""
    cycle = max_cut(5, [(i, (i + 1) % 5) for i in range(5)])
    cube = max_cut(8, [(a, a ^ (1 << b)) for a in range(8) for b in range(3) if a < a ^ (1 << b)])
    for p, cut, edges in ((cycle, 4, 5), (cube, 12, 12)):
        result = solve(p, configs=(), work=100_000)
        assert result.status is Status.OPTIMAL and result.cost == -(edges + cut) == brute_force(p), result
        assert any("spectral bound proves" in n for n in result.notes)
        assert not any(n.startswith(("lns", "lagrangian")) for n in result.notes), result.notes
    rng = random.Random(5)
    sparse = max_cut(10, rng.sample(list(itertools.combinations(range(10), 2)), 16))
    result = solve(sparse, work=100_000)
    assert any("spectral bound does not prove" in n for n in result.notes)
    assert result.status is Status.OPTIMAL and result.cost == brute_force(sparse)


def test_solve_with_the_quadratic_phase_agrees_with_brute_force_and_is_reproducible() -> None:
    """With no solver configuration (tabu search, spectral bound, neighbourhood search only) and with the
    default ones: never below the optimum, equal to it when called optimal, the same twice."""
    for seed in range(12):
        p = random_quadratic(seed, n_vars=8, n_leaves=20)
        expected = brute_force(p)
        for configs in ((), None):
            kwargs = {"work": 200_000} if configs is None else {"work": 200_000, "configs": configs}
            first, second = solve(p, **kwargs), solve(p, **kwargs)
            assert (first.selection, first.status, first.lower_bound) == \
                   (second.selection, second.status, second.lower_bound)
            assert first.cost >= expected and first.lower_bound <= expected
            if first.status is Status.OPTIMAL:
                assert first.cost == expected
            if configs is None:
                assert first.status is Status.OPTIMAL, (seed, first.notes)


def test_tabu_search_finds_the_optimum_of_small_problems_within_its_work() -> None:
    for seed in range(20):
        p = random_quadratic(seed, n_vars=10, n_leaves=30)
        model = quadratic_model(p, integer_costs(p)[0])
        assert model is not None
        best = min(model.value(x) for x in itertools.product((1, -1), repeat=len(model.lin)))
        result = tabu_search(model, [1] * len(model.lin), 50_000)
        assert result.value == best == model.value(result.x), seed
        assert result.work <= 50_000 + len(model.lin) + sum(len(r) for r in model.adj)
        assert tabu_search(model, [1] * len(model.lin), 50_000) == result
