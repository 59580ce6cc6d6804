"""Loops off the sigma chain: which loops of a PEG are pure computations (no effect, provably ending).

What this module owns
    :func:`pure_loops` (the ``pass`` nodes of loops without effects whose break condition provably becomes
    true), :func:`poly_sigma` (whether a phi/theta/eval carries a heap) and :func:`chosen_values` (the nodes
    a phi/theta/eval takes its values from, which says its type). A PEG analysis: the extraction checker
    (``pegextract.select.loops_on_sigma``), the reverter and the validator's value-by-value cases
    (``validate/finite.py``) ask it.

Why: the builder puts every loop on the sigma chain (each loop threads the heap), and the reverter places
loops by that chain. Dead-loop deletion (eval-invariant-heap) takes an effect-free loop whose
index provably ends off the chain: its values are then read by ``eval`` nodes only. Such a loop is computed
where its value is wanted, like any pure value; that is faithful because it has no effect and ends (running it
again, or on a path where the PEG would not evaluate it, changes nothing observable but time). The two facts
are checked here on the PEG itself, independently of the e-graph that proved the deletion.

Inputs: a sealed PEG (and optionally its loop variance). Outputs: node sets and verdicts; nothing is changed.
Invariants: a node is reported pure only when both facts hold; anything not recognised counts as an effect.
"""
from __future__ import annotations

from typing import Iterator

from .graph import PEG
from .ops import OPS, Role, T

__all__ = ["pure_loops", "poly_sigma", "chosen_values"]


def _int_step(peg: PEG, var: list[frozenset[int]], i: int, loop: int) -> int | None:
    """+1 or -1 when node ``i`` is ``theta_loop(a, i + step)`` (or ``i - step``) with ``a`` invariant."""
    n = peg.nodes[i]
    if n.op != "theta" or n.attr != loop or loop in var[n.children[0]]:
        return None
    nxt = peg.nodes[n.children[1]]
    if nxt.op not in ("add.i", "sub.i"):
        return None
    pairs = [(nxt.children[0], nxt.children[1])]
    if nxt.op == "add.i":
        pairs.append((nxt.children[1], nxt.children[0]))
    for x, k in pairs:
        kn = peg.nodes[k]
        if x == i and kn.op == "const.i" and kn.attr in (1, -1):
            return kn.attr if nxt.op == "add.i" else -kn.attr
    return None


def _cond_terminates(peg: PEG, var: list[frozenset[int]], c: int, loop: int, depth: int = 0) -> bool:
    """The loop-``loop`` condition ``c`` is true at some iteration (the PEG form of
    :func:`peggy_jvm.rules.conditions.cond_terminates`): the constant true; ``guard(s, c')`` / ``or`` with such
    an operand; ``i >= n``, ``i <= n``, ``i == n`` for a counter stepping by +-1 from an invariant start and an
    invariant ``n`` (wrap-around makes the counter visit every int, so it meets ``n``)."""
    if depth > 12:
        return False
    n = peg.nodes[c]
    if n.op == "const.b":
        return bool(n.attr)
    if n.op == "guard":
        return _cond_terminates(peg, var, n.children[1], loop, depth + 1)
    if n.op == "or":
        return any(_cond_terminates(peg, var, x, loop, depth + 1) for x in n.children)
    if n.op in ("ge.i", "le.i", "eq.i"):
        a, b = n.children
        return any(loop not in var[bound] and _int_step(peg, var, ctr, loop) is not None
                   for ctr, bound in ((a, b), (b, a)))
    return False


def pure_loops(peg: PEG, var: list[frozenset[int]] | None = None) -> frozenset[int]:
    """The ``pass`` nodes whose loop provably ends (its break condition is true at some iteration) and has no
    effect: nothing that varies in the loop, from the break condition or from a value an ``eval`` reads, is an
    effect, a sigma or an outcome. Such a loop is a pure computation of its outputs."""
    var = peg.variance() if var is None else var
    nodes = peg.nodes
    readers: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        if n.op == "eval":
            readers.setdefault(n.children[1], []).append(n.children[0])
    out: set[int] = set()
    for p, n in enumerate(nodes):
        if n.op != "pass":
            continue
        d = n.attr
        assert isinstance(d, int)
        if not _cond_terminates(peg, var, n.children[0], d):
            continue
        pure = True
        seen: set[int] = set()
        stack = [n.children[0], *readers.get(p, ())]
        while stack and pure:
            x = stack.pop()
            if x in seen:
                continue
            seen.add(x)
            if d not in var[x]:
                continue  # computed before the loop: not part of its iterations
            spec = OPS[nodes[x].op]
            if spec.role is Role.EFFECT or spec.output in (T.SIGMA, T.OUTCOME, T.RESULT) or \
                    (nodes[x].op in ("phi", "theta", "eval") and poly_sigma(peg, x)):
                pure = False
            elif nodes[x].op == "guard":
                stack.append(nodes[x].children[1])
                if d in var[nodes[x].children[0]]:
                    pure = False  # the iteration's own heap: the loop has effects
            else:
                stack.extend(nodes[x].children)
        if pure:
            out.add(p)
    return frozenset(out)


def chosen_values(peg: PEG, n: int) -> Iterator[int]:
    """The nodes the phi/theta/eval ``n`` takes its values from (its arms, initial values, evaluated values, through
    nested ones), each once; ``n`` itself when it is none of these."""
    seen: set[int] = set()
    stack = [n]
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        node = peg.nodes[x]
        if node.op in ("phi", "theta", "eval"):
            stack.extend(node.children[1:] if node.op == "phi" else node.children[:1])
        else:
            yield x


def poly_sigma(peg: PEG, n: int) -> bool:
    """Whether the phi/theta/eval ``n`` carries a heap (its value inputs do)."""
    return any(OPS[peg.nodes[x].op].output in (T.SIGMA, T.OUTCOME, T.RESULT) for x in chosen_values(peg, n))
