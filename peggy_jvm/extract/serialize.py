"""Reader of egraph-serialize JSON (the extraction-gym benchmark format) into an :class:`ExtractionProblem`.

What this module owns
    The mapping from the file format to the problem model, and the error for a file that does not fit it.

Inputs and outputs
    A JSON object ``{"nodes": {node_id: {"op", "cost", "eclass", "children"}}, "root_eclasses": [...]}``
    (other top-level keys such as ``class_data`` and ``comment`` are ignored).  A child is a *node* id that
    stands for that node's e-class.  The result has one :class:`Node` per entry, with ``may_close`` empty:
    in this format every cycle is forbidden.

Invariants
    Every structural problem raises :class:`ExtractionFormatError` (a ``ValueError``) whose message starts
    with the file name and says what is wrong and where (which node, which key), never a ``KeyError`` or
    ``TypeError`` from deep inside.  Node order and child order are kept as in the file.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .problem import ExtractionProblem, Node

__all__ = ["ExtractionFormatError", "read_problem", "parse_problem"]


class ExtractionFormatError(ValueError):
    """An egraph-serialize file that cannot be read as an extraction problem."""


def read_problem(path: str | Path) -> ExtractionProblem:
    """Read and check one egraph-serialize JSON file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ExtractionFormatError(f"{p}: cannot read: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise ExtractionFormatError(f"{p}: not UTF-8 text (byte {e.start})") from e
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ExtractionFormatError(f"{p}: not JSON: {e.msg} at line {e.lineno} column {e.colno}") from e
    return parse_problem(data, source=str(p))


def parse_problem(data: Any, source: str = "<json>") -> ExtractionProblem:
    """Convert already-decoded JSON; ``source`` names it in error messages."""
    def fail(what: str) -> ExtractionFormatError:
        return ExtractionFormatError(f"{source}: {what}")

    if not isinstance(data, dict):
        raise fail(f"top level is a {_kind(data)}, expected an object with 'nodes' and 'root_eclasses'")
    raw_nodes = data.get("nodes")
    if not isinstance(raw_nodes, dict):
        raise fail("missing 'nodes' object" if raw_nodes is None
                   else f"'nodes' is a {_kind(raw_nodes)}, expected an object")
    if not raw_nodes:
        raise fail("'nodes' is empty")

    # First pass: each node's class, so children (node ids) can be resolved in the second.
    class_of: dict[str, str] = {}
    for nid, raw in raw_nodes.items():
        if not isinstance(raw, dict):
            raise fail(f"node {nid!r} is a {_kind(raw)}, expected an object")
        eclass = raw.get("eclass")
        if not isinstance(eclass, str):
            raise fail(f"node {nid!r}: 'eclass' is {_describe(eclass)}, expected a string")
        class_of[nid] = eclass

    nodes: list[Node] = []
    for nid, raw in raw_nodes.items():
        op = raw.get("op")
        if not isinstance(op, str):
            raise fail(f"node {nid!r}: 'op' is {_describe(op)}, expected a string")
        cost = raw.get("cost", 1.0)  # egraph-serialize's default cost is 1
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost):
            raise fail(f"node {nid!r}: 'cost' is {_describe(cost)}, expected a finite number")
        children = raw.get("children", [])
        if not isinstance(children, list):
            raise fail(f"node {nid!r}: 'children' is {_describe(children)}, expected a list of node ids")
        child_classes: list[str] = []
        for i, child in enumerate(children):
            if not isinstance(child, str):
                raise fail(f"node {nid!r}: child {i} is {_describe(child)}, expected a node id string")
            if child not in class_of:
                raise fail(f"node {nid!r}: child {i} is {child!r}, which is not a node")
            child_classes.append(class_of[child])
        nodes.append(Node(nid, op, float(cost), class_of[nid], tuple(child_classes)))

    roots = data.get("root_eclasses")
    if not isinstance(roots, list) or not roots:
        raise fail("missing or empty 'root_eclasses' list" if not roots else
                   f"'root_eclasses' is a {_kind(roots)}, expected a list of e-class ids")
    classes = set(class_of.values())
    for i, r in enumerate(roots):
        if not isinstance(r, str):
            raise fail(f"root {i} is {_describe(r)}, expected an e-class id string")
        if r not in classes:
            raise fail(f"root {i} is {r!r}, which is no node's e-class")
    name = Path(source).name if source != "<json>" else ""
    try:
        return ExtractionProblem.build(nodes, roots, name=name)
    except ValueError as e:  # cannot happen after the checks above; keep the promised error type anyway
        raise fail(str(e)) from e


def _kind(x: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(x), "number" if isinstance(x, (int, float)) else type(x).__name__)


def _describe(x: Any) -> str:
    if x is None:
        return "missing"
    text = json.dumps(x) if isinstance(x, (str, int, float, bool)) else _kind(x)
    return text if len(text) <= 40 else text[:37] + "..."
