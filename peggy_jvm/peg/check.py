"""Well-formedness and CFG-likeness of a PEG: the checks every stage that makes or picks a PEG calls.

What this module owns: :func:`peg_problems` (every violation found, as one-line strings) and :func:`check_peg`
(raises :class:`PegMalformed` with the first few).

The rules (Tate 2012, Definition 6.1 and the CFG-like conditions of chapter 8, with DESIGN section 3's sigma):
  * every node's operator is in the operator table and has an arity it allows; children are nodes of the PEG;
  * every cycle passes through the second child of a theta (cut those edges: the rest is acyclic);
  * a theta_l's initial value does not vary in loop l (it is the value before the loop);
  * an eval_l's index is a pass_l of the same loop (each loop is read at its exit only), and a pass_l's
    condition is a bool;
  * an effect's input 0 is a sigma, and sigma inputs of phi/theta/eval agree in kind (sigma with sigma);
  * the root is a method result (return / throw, or a phi of results).
Inputs: a PEG. Outputs: a list of problems (empty: well-formed).
"""
from __future__ import annotations

from .graph import PEG
from .ops import OPS, Role, T


class PegMalformed(Exception):
    """A PEG breaks the well-formedness rules (a bug in the stage that made it)."""


def _kinds(peg: PEG) -> list[T | None]:
    """The output type of each node, with the polymorphic primitives resolved from their value children."""
    nodes = peg.nodes
    out: list[T | None] = [None] * len(nodes)
    changed = True
    while changed:
        changed = False
        for i, n in enumerate(nodes):
            if out[i] is not None:
                continue
            spec = OPS.get(n.op)
            if spec is None:
                continue
            t: T | None = spec.output
            if n.op in ("phi", "theta", "eval", "shift", "peel"):
                kids = n.children[1:] if n.op == "phi" else n.children[:1]
                t = next((out[c] for c in kids if 0 <= c < len(nodes) and out[c] is not None), None)
            elif t is T.ANY:
                t = T.ANY  # a typed effect's value or a parameter: a value, not sigma
            if t is not None:
                out[i] = t
                changed = True
    return out


def peg_problems(peg: PEG) -> list[str]:
    nodes = peg.nodes
    problems: list[str] = []
    size = len(nodes)
    for i, n in enumerate(nodes):
        spec = OPS.get(n.op)
        if spec is None:
            problems.append(f"n{i}: unknown operator {n.op!r}")
            continue
        if not spec.arity_ok(len(n.children)):
            problems.append(f"n{i}: {n.op} with {len(n.children)} children")
        for c in n.children:
            if not 0 <= c < size:
                problems.append(f"n{i}: child {c} is not a node")
    if problems:
        return problems
    if not 0 <= peg.root < size:
        return [f"root {peg.root} is not a node"]
    # cycles only through theta back edges: a DFS over the other edges finds no back edge
    state = [0] * size
    for start in range(size):
        if state[start]:
            continue
        stack = [(start, 0)]
        state[start] = 1
        while stack:
            at, k = stack.pop()
            kids = nodes[at].children[:1] if nodes[at].op == "theta" else nodes[at].children
            if k < len(kids):
                stack.append((at, k + 1))
                c = kids[k]
                if state[c] == 1:
                    problems.append(f"n{c}: on a cycle that does not pass through a theta's second child")
                elif state[c] == 0:
                    state[c] = 1
                    stack.append((c, 0))
            else:
                state[at] = 2
    var = peg.variance()
    kinds = _kinds(peg)
    for i, n in enumerate(nodes):
        spec = OPS[n.op]
        if n.op == "theta" and n.attr in var[n.children[0]]:
            problems.append(f"n{i}: theta[{n.attr}]'s initial value varies in its own loop")
        if n.op == "eval":
            idx = nodes[n.children[1]]
            if idx.op != "pass" or idx.attr != n.attr:
                problems.append(f"n{i}: eval[{n.attr}] indexed by {idx.op}[{idx.attr}], not pass[{n.attr}]")
        if n.op == "pass" and kinds[n.children[0]] not in (T.BOOL, None):
            problems.append(f"n{i}: pass[{n.attr}] of a {kinds[n.children[0]]}")
        if spec.role is Role.EFFECT and kinds[n.children[0]] is not T.SIGMA:
            problems.append(f"n{i}: {n.op}'s input 0 is not a sigma")
        if n.op in ("phi", "theta"):
            arms = n.children[1:] if n.op == "phi" else n.children
            ks = {kinds[c] is T.SIGMA for c in arms}
            if len(ks) > 1:
                problems.append(f"n{i}: {n.op} mixes sigma and values")
    if kinds[peg.root] is not T.RESULT:
        problems.append(f"root n{peg.root} is a {kinds[peg.root]}, not a method result")
    return problems


def check_peg(peg: PEG) -> None:
    problems = peg_problems(peg)
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise PegMalformed("; ".join(problems[:3]) + more)
