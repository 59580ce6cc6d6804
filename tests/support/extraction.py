"""Small extraction problems for the extraction tests: random e-graphs, problems written as tuples, and the
brute-force optimum every extractor is checked against (``tests/test_extract.py``, ``tests/test_extract_bound.py``)."""
from __future__ import annotations

import itertools
import math
import random

from peggy_jvm.extract.problem import ExtractionProblem, Node, Selection, evaluate_selection


def brute_force(problem: ExtractionProblem, forbid: frozenset[str] = frozenset()) -> float:
    """The least DAG cost over all selections (``math.inf`` if none is valid), never choosing ``forbid``."""
    classes = list(problem.classes)
    options = []
    for c in classes:
        allowed = [n for n in problem.classes[c] if n not in forbid]
        options.append(allowed or [None])
    best = math.inf
    for combo in itertools.product(*options):
        sel = Selection({c: n for c, n in zip(classes, combo) if n is not None})
        report = evaluate_selection(problem, sel)
        if report.valid:
            best = min(best, report.cost)
    return best


def valid_selections(problem: ExtractionProblem) -> list[tuple[Selection, set[str]]]:
    """Every valid selection (one node per class, all classes chosen) with its reached classes."""
    classes = list(problem.classes)
    out = []
    for combo in itertools.product(*(problem.classes[c] or (None,) for c in classes)):
        sel = Selection({c: n for c, n in zip(classes, combo) if n is not None})
        report = evaluate_selection(problem, sel)
        if report.valid:
            out.append((sel, set(report.reached)))
    return out


def random_problem(seed: int, *, n_classes: int = 5, max_nodes: int = 3, may_close: float = 0.0,
                   negative: bool = False, fractional: bool = False) -> ExtractionProblem:
    """A random e-graph: children may point anywhere (so cycles are common), costs small."""
    rng = random.Random(seed)
    nodes = []
    for c in range(n_classes):
        for j in range(rng.randint(1, max_nodes)):
            k = rng.choice([0, 0, 1, 1, 2, 3])
            children = tuple(str(rng.randrange(n_classes)) for _ in range(k))
            marks = frozenset(i for i in range(k) if rng.random() < may_close)
            cost = float(rng.choice([0, 1, 1, 2, 3, 5]))
            if fractional:
                cost *= rng.choice([0.1, 0.25, 0.3, 1.0])
            if negative and rng.random() < 0.3:
                cost = -cost
            nodes.append(Node(f"n{c}.{j}", f"op{c}.{j}", cost, str(c), children, marks))
    roots = ["0"] if rng.random() < 0.7 else ["0", str(n_classes - 1)]
    return ExtractionProblem.build(nodes, roots, name=f"random-{seed}")


def problem_of(*specs: tuple, roots: tuple[str, ...] = ("r",)) -> ExtractionProblem:
    """``(id, class, cost, children[, may-close positions])`` tuples -> problem."""
    nodes = [Node(s[0], s[0], float(s[2]), s[1], tuple(s[3]), frozenset(s[4] if len(s) > 4 else ()))
             for s in specs]
    return ExtractionProblem.build(nodes, list(roots))
