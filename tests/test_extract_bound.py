"""The Lagrangian lower bound (``extract/bound.py``) and its use in ``maxsat.solve``: never above the optimum
found by brute force, its reduced-cost pruning never removing a node of an optimal selection, and an instance
no other bound proves, proved by it alone (no solver configuration runs)."""
from __future__ import annotations

import math

from peggy_jvm.extract.bound import lagrangian_bound
from peggy_jvm.extract.maxsat import Status, solve
from peggy_jvm.extract.problem import evaluate_selection, integer_costs
from peggy_jvm.extract.shrink import disjoint_sum_bound, path_lower_bound, shrink
from support.extraction import brute_force, problem_of, random_problem, valid_selections


def _optimal_node_sets(problem, weight) -> tuple[int, list[set[str]]]:
    """The optimum's integer weight and the reached nodes of every optimal selection (brute force)."""
    best, sets = math.inf, []
    for sel, reached in valid_selections(problem):
        nodes = {sel.choices[c] for c in reached}
        w = sum(weight[n] for n in nodes)
        if w < best:
            best, sets = w, [nodes]
        elif w == best:
            sets.append(nodes)
    return best, sets


def test_bound_is_never_above_the_optimum_and_pruning_keeps_every_optimal_selection() -> None:
    """On random problems (cycles, may-close edges, negative and fractional costs), the bound computed on
    the shrunk problem with the optimum as the incumbent's weight is at most the optimum, and no node of any
    optimal selection is ruled out; with a weaker incumbent (optimum + 1) neither happens either."""
    checked = pruned = tight = 0
    for seed in range(120):
        p = random_problem(seed, n_classes=6, may_close=0.25 if seed % 2 else 0.0, negative=seed % 3 == 0,
                           fractional=seed % 5 == 0)
        if brute_force(p) == math.inf:
            continue
        weight, _ = integer_costs(p)
        best, optimal_sets = _optimal_node_sets(p, weight)
        s = shrink(p)
        for upper in (best, best + 1):
            lag = lagrangian_bound(s.problem, weight, s.forced, upper, 200_000)
            assert lag.bound is not None and lag.bound <= best, (seed, upper, lag)
            for nodes in optimal_sets:
                assert not (nodes & lag.prunable), (seed, upper, nodes & lag.prunable)
            pruned += bool(lag.prunable)
            tight += lag.bound == best
        checked += 1
    assert checked > 60
    assert pruned > 10 and tight > 30  # the checks above are not vacuous


def test_bound_is_within_its_work_and_reproducible() -> None:
    p = random_problem(7, n_classes=8, max_nodes=4)
    weight, _ = integer_costs(p)
    s = shrink(p)
    runs = [lagrangian_bound(s.problem, weight, s.forced, 10**6, 5_000) for _ in range(2)]
    assert runs[0] == runs[1]
    assert runs[0].work <= 5_000
    assert lagrangian_bound(s.problem, weight, s.forced, 10**6, 0).bound is None


def _shared_or_separate():
    """The root needs A and B; each can use the shared S (1 + S's 7, shared: 10 in all) or a leaf of its own
    (4): the optimum, 9, takes both leaves, and every greedy finds it. The chain and disjoint-sum bounds see
    only one of A and B (they may share S): 5; the forced classes' cheapest nodes sum to 3; pruning by chains
    keeps A1 and B1 (a chain through them weighs exactly 9). The LP relaxation is tight: 9."""
    return problem_of(("R", "r", 1, ["a", "b"]),
                      ("A1", "a", 1, ["s"]), ("A2", "a", 4, []),
                      ("B1", "b", 1, ["s"]), ("B2", "b", 4, []),
                      ("S", "s", 7, []))


def test_an_instance_only_the_lagrangian_bound_proves() -> None:
    p = _shared_or_separate()
    assert brute_force(p) == 9
    weight, _ = integer_costs(p)
    s = shrink(p, weight=weight, upper=9)
    assert s.problem.size() == p.size(), "chain pruning leaves the problem whole"
    assert path_lower_bound(s.problem, weight) == 5 and disjoint_sum_bound(s.problem, weight) == 5
    # it has the quadratic shape (two choices, a shared leaf): the spectral bound proves it too
    # (test_extract_quadratic.py), so that phase is off here
    result = solve(p, configs=(), work=100_000, use_quadratic=False)
    assert result.status is Status.OPTIMAL and result.cost == 9 and result.lower_bound == 9, result
    assert any(n.startswith("lagrangian: bound 9 ") for n in result.notes), result.notes
    assert not any(n.startswith("lns") for n in result.notes), "proved before any search"
    assert set(evaluate_selection(p, result.selection).reached_nodes(result.selection)) == {"R", "A2", "B2"}
