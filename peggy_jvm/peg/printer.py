"""Text and Graphviz renderings of a PEG, for people.

What this module owns: :func:`format_peg` (one line per node reachable from the root, children first, theta back
edges shown as forward references) and :func:`peg_to_dot` (a DOT digraph: theta back edges dashed and not
constraining the layout, nodes clustered by the innermost loop depth they vary in, the root marked).
Inputs: a PEG. Outputs: text. Invariant: both show exactly the nodes reachable from the root.
"""
from __future__ import annotations

from ..ir.nodes import Const
from ..semantics import int_bits_to_float, long_bits_to_double
from .graph import PEG


def node_label(peg: PEG, n: int) -> str:
    node = peg.nodes[n]
    a = node.attr
    if node.op == "const.f":
        text = repr(int_bits_to_float(node.int_attr()))
    elif node.op == "const.d":
        text = repr(long_bits_to_double(node.int_attr()))
    elif isinstance(a, Const):
        text = repr(a)
    elif isinstance(a, tuple) and node.op in ("new", "invokedynamic"):
        text = f"{a[0]}" if node.op == "new" else f"{a[0]}{a[1]}"
    elif a is None:
        return node.op
    else:
        text = str(a)
    return f"{node.op}[{text}]"


def _postorder(peg: PEG) -> list[int]:
    out: list[int] = []
    seen: set[int] = set()
    stack: list[tuple[int, bool]] = [(peg.root, False)]
    while stack:
        n, done = stack.pop()
        if done:
            out.append(n)
            continue
        if n in seen:
            continue
        seen.add(n)
        stack.append((n, True))
        node = peg.nodes[n]
        kids = node.children[:1] if node.op == "theta" else node.children
        for c in reversed(kids):
            if c not in seen:
                stack.append((c, False))
        if node.op == "theta" and node.children[1] not in seen:
            stack.insert(0, (node.children[1], False))  # the back edge: after everything else
    return out


def format_peg(peg: PEG) -> list[str]:
    order = _postorder(peg)
    var = peg.variance()
    lines = [f"peg {peg.name}: {len(order)} nodes, root n{peg.root}"]
    for n in order:
        node = peg.nodes[n]
        kids = ", ".join(f"n{c}" for c in node.children)
        loops = f"  ; varies in {sorted(var[n])}" if var[n] else ""
        lines.append(f"  n{n} = {node_label(peg, n)}({kids}){loops}")
    return lines


def dot_quote(text: str) -> str:
    """``text`` as a Graphviz quoted string (the E-PEG's drawing uses it too)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def peg_to_dot(peg: PEG) -> str:
    order = _postorder(peg)
    var = peg.variance()
    by_depth: dict[int, list[int]] = {}
    for n in order:
        by_depth.setdefault(max(var[n], default=0), []).append(n)
    out = [f"digraph {dot_quote(peg.name or 'peg')} {{", "  node [shape=box, fontname=monospace];"]
    for depth, ns in sorted(by_depth.items()):
        indent = "  "
        if depth:
            out.append(f"  subgraph cluster_loop{depth} {{ label={dot_quote(f'varies in loop depth {depth}')}; style=dashed;")
            indent = "    "
        for n in ns:
            extra = ", peripheries=2" if n == peg.root else ""
            out.append(f"{indent}n{n} [label={dot_quote(node_label(peg, n))}{extra}];")
        if depth:
            out.append("  }")
    for n in order:
        node = peg.nodes[n]
        for k, c in enumerate(node.children):
            if node.op == "theta" and k == 1:
                out.append(f"  n{n} -> n{c} [style=dashed, constraint=false, label=next];")
            else:
                out.append(f"  n{n} -> n{c} [label={k}];")
    out.append("}")
    return "\n".join(out) + "\n"
