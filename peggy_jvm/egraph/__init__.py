"""The e-graph layer, generic as egg's: hash-consing, union-find, deferred rebuild, analyses passed in, e-matching,
saturation. It imports nothing outside this package and knows no operator's meaning.

Modules: :mod:`.types` (the e-node and id types), :mod:`.analysis` (the e-class analysis protocol: make / merge /
modify), :mod:`.egraph` (the e-graph), :mod:`.pattern` (patterns, compiled matchers and builders), :mod:`.runner`
(rewrites, limits, scheduling, reports), :mod:`.explain` (proof log and explanations), :mod:`.clock` (the
CPU-time clock time limits are read on). The e-graph of a PEG with
the Java analyses is :mod:`peggy_jvm.epeg`; the rule language that produces rewrites is :mod:`peggy_jvm.rules`.
"""
from __future__ import annotations

from .analysis import Analysis
from .egraph import EClass, EGraph, EGraphError
from .explain import Explanation, Reason
from .pattern import AttrLit, AttrVar, Matcher, OpVar, PAs, PNode, PVar, compile_builder, compile_pattern
from .runner import Limits, PatternRewrite, Rewrite, RuleStats, Runner, RunReport, StopReason, saturate
from .types import ClassId, ENode

__all__ = [
    "Analysis", "ClassId", "EClass", "EGraph", "EGraphError", "ENode",
    "Explanation", "Reason", "AttrLit", "AttrVar", "Matcher", "OpVar", "PAs", "PNode", "PVar", "compile_builder",
    "compile_pattern", "Limits", "PatternRewrite", "Rewrite", "RuleStats", "Runner", "RunReport", "StopReason",
    "saturate",
]
