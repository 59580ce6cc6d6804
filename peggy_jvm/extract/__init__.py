"""Extraction: choosing one node per e-class so that the chosen DAG is valid and cheapest (DESIGN section 4).

``problem``    the model (:class:`ExtractionProblem`, :class:`Selection`), validity and DAG cost
``serialize``  egraph-serialize JSON -> problem
``greedy``     bottom-up greedy extraction (the floor and the fallback)
``shrink``     problem reductions that keep the optimum
``bound``      the Lagrangian lower bound (LP relaxation) and the nodes its reduced costs rule out
``quadratic``  Max-2-SAT-shaped problems: tabu search and a spectral lower bound checked exactly
``maxsat``     weighted partial MaxSAT with RC2: :func:`solve` (anytime, bounded, with a checker hook)
"""
from __future__ import annotations

from .greedy import GreedyResult, greedy_extract
from .maxsat import Checker, ExtractionResult, NodeClause, SolverConfig, Status, solve
from .problem import (ExtractionProblem, InfeasibleProblemError, InvalidSelectionError, Node, Selection,
                      dag_cost, evaluate_selection)
from .serialize import ExtractionFormatError, read_problem
from .shrink import ShrinkResult, shrink

__all__ = [
    "ExtractionProblem", "Node", "Selection", "evaluate_selection", "dag_cost", "InvalidSelectionError",
    "InfeasibleProblemError", "ExtractionFormatError", "read_problem", "GreedyResult", "greedy_extract",
    "ShrinkResult", "shrink", "Checker", "NodeClause", "SolverConfig", "Status", "ExtractionResult", "solve",
]
