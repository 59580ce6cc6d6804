"""The E-PEG: a PEG's e-graph with the Java analyses (Tate et al.'s E-PEG), on top of the generic e-graph.

Modules: :mod:`.graph` (:class:`EPeg`: the e-graph with the Java facts, and the PEG import), :mod:`.analyses`
(constants folded with Java semantics, loop variance, sorts), :mod:`.printer` (text and DOT renderings). The
rules (:mod:`peggy_jvm.rules`), extraction and validation work on an :class:`EPeg`; the e-graph itself
(:mod:`peggy_jvm.egraph`) knows nothing of PEGs or Java.
"""
from __future__ import annotations

from .analyses import ALL_LOOPS, CONST_OPS, LINEAR_SORTS, const_key, const_value
from .graph import EPeg, PegInfo

__all__ = ["ALL_LOOPS", "CONST_OPS", "LINEAR_SORTS", "const_key", "const_value", "EPeg", "PegInfo"]
