"""Text and Graphviz renderings of a saturated E-PEG, for people (``peggy-jvm show --epeg``).

What this module owns: :func:`format_egraph` (one line per e-class reachable from the root class, each with all
its e-nodes) and :func:`egraph_to_dot` (a DOT digraph: one cluster per e-class, edges from each e-node to the
classes of its children, theta back edges dashed, the e-nodes an extraction chose filled and bold). Inputs: an
:class:`~peggy_jvm.egraph.egraph.EGraph` holding an E-PEG (the dashed theta edges are what makes this PEG-specific),
a root class and optionally the chosen e-nodes. Outputs: text. Invariant: only classes reachable from the root are
shown, children before parents.
"""
from __future__ import annotations

from typing import Collection

from ..egraph.egraph import EGraph
from ..peg.printer import dot_quote


def _label(node: tuple) -> str:
    op, attr, _ = node
    return op if attr is None else f"{op}[{attr}]"


def _reachable(eg: EGraph, root: int) -> list[int]:
    root = eg.find(root)
    order: list[int] = []
    seen: set[int] = set()
    stack: list[tuple[int, bool]] = [(root, False)]
    while stack:
        c, done = stack.pop()
        if done:
            order.append(c)
            continue
        if c in seen:
            continue
        seen.add(c)
        stack.append((c, True))
        for node in eg.nodes(c):
            for ch in node[2]:
                ch = eg.find(ch)
                if ch not in seen:
                    stack.append((ch, False))
    return order


def format_egraph(eg: EGraph, root: int, selected: Collection[str] = ()) -> list[str]:
    """``selected`` (as in :func:`egraph_to_dot`): chosen e-nodes are starred."""
    order = _reachable(eg, root)
    chosen = set(selected)
    lines = [f"e-peg: {len(order)} classes reachable from c{eg.find(root)} "
             f"({eg.class_count} classes, {eg.node_count} nodes in all)"]
    for c in order:
        alts = " | ".join(("*" if f"c{c}.{k}" in chosen else "")
                          + (f"{_label(n)}({', '.join(f'c{eg.find(x)}' for x in n[2])})" if n[2] else _label(n))
                          for k, n in enumerate(eg.nodes(c)))
        lines.append(f"  c{c} = {alts}")
    return lines


def egraph_to_dot(eg: EGraph, root: int, name: str = "epeg", selected: Collection[str] = ()) -> str:
    """``selected``: e-nodes to mark, named as the extraction problem names them (``c<class>.<k>``: the k-th
    node of canonical class ``class``, in ``eg.nodes`` order, which is also this drawing's order)."""
    order = _reachable(eg, root)
    chosen = set(selected)
    out = [f"digraph {dot_quote(name)} {{", "  compound=true; node [shape=box, fontname=monospace];"]
    for c in order:
        out.append(f"  subgraph cluster_c{c} {{ label={dot_quote(f'c{c}')}; style=rounded;"
                   + (" penwidth=2;" if c == eg.find(root) else ""))
        for k, n in enumerate(eg.nodes(c)):
            mark = ", style=\"filled,bold\", fillcolor=palegreen" if f"c{c}.{k}" in chosen else ""
            out.append(f"    c{c}_{k} [label={dot_quote(_label(n))}{mark}];")
        out.append("  }")
    for c in order:
        for k, n in enumerate(eg.nodes(c)):
            for i, ch in enumerate(n[2]):
                ch = eg.find(ch)
                style = ", style=dashed, constraint=false" if n[0] == "theta" and i == 1 else ""
                out.append(f"  c{c}_{k} -> c{ch}_0 [lhead=cluster_c{ch}, label={i}{style}];")
    out.append("}")
    return "\n".join(out) + "\n"
