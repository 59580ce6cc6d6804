"""The e-graph layer: hash-consing, union-find, egg-style deferred rebuild, analyses, e-matching, saturation.

Modules: :mod:`.egraph` (the e-graph and PEG import), :mod:`.analysis` (constants with Java semantics, loop
variance, sorts), :mod:`.pattern` (patterns, compiled matchers and builders), :mod:`.runner` (rewrites, limits,
scheduling, reports), :mod:`.explain` (proof log and explanations). The rule language that produces rewrites is
:mod:`peggy_jvm.rules`.
"""
from __future__ import annotations

from .analysis import ALL_LOOPS, Analysis, const_key, const_value
from .egraph import EClass, EGraph, EGraphError, ENode
from .explain import Explanation, Reason
from .pattern import AttrLit, AttrVar, Matcher, OpVar, PAs, PNode, PVar, compile_builder, compile_pattern
from .runner import Limits, PatternRewrite, Rewrite, RuleStats, Runner, RunReport, StopReason, saturate

__all__ = [
    "ALL_LOOPS", "Analysis", "const_key", "const_value", "EClass", "EGraph", "EGraphError", "ENode",
    "Explanation", "Reason", "AttrLit", "AttrVar", "Matcher", "OpVar", "PAs", "PNode", "PVar", "compile_builder",
    "compile_pattern", "Limits", "PatternRewrite", "Rewrite", "RuleStats", "Runner", "RunReport", "StopReason",
    "saturate",
]
