"""The plain types every module of the e-graph shares, so that none of them imports another for its types.

What this module owns
    :data:`ENode` (an e-node is a plain tuple ``(op, attr, children)``: an operator name, a hashable attribute,
    a tuple of e-class ids; no per-node objects) and :data:`ClassId`. It imports nothing.
"""
from __future__ import annotations

__all__ = ["ENode", "ClassId"]

ENode = tuple  # (op: str, attr: Hashable, children: tuple[ClassId, ...])
ClassId = int
