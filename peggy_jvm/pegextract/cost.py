"""The extraction cost model: what a PEG node (or an e-node) costs, from the operator table.

What this module owns
    :func:`node_cost` (one node: base cost times the loop factor, or its byte size for ``--goal size``),
    :func:`loop_depths` (how many loop depths a variance set or mask counts) and :func:`peg_cost` (a whole PEG
    under the same model). ``docs/cost-model.md`` explains the choices.

The model (DESIGN section 4, Peggy's)
    ``cost(n) = OPS[op].cost * BASE_LOOP_MULTIPLIER ** d`` where ``d`` is the deepest loop depth in which the
    node's value (for an e-node: its e-class) varies. A node that varies in a loop runs once per iteration of
    that loop, and a loop at depth ``d`` runs inside one loop of every depth above it, so moving the node out of
    the loop (loop-invariant code motion) or replacing it by a cheaper per-iteration node (strength reduction)
    pays 20 times per depth. (The deepest depth, not the number of depths: a counter ``theta_2(0, k + 1)`` varies
    in depth 2 only, since every run of its loop starts it at 0, but it still runs once per iteration of the
    loop nest; counted as one depth it looked 20 times cheaper than ``theta_2(gap, i + 1)``, and extraction
    rebased ``shellSort``'s middle loop as ``gap + k``, one more addition per iteration.) ``pass`` has base
    cost 50 in the operator table: a second ``pass`` for one loop (a duplicated loop) costs more than any
    arithmetic it could save.

    A path that ends in a throw is cold (:func:`cold_nodes`): the nodes only a ``throw`` result or an ``athrow``
    effect needs (the exception's ``new``, its constructor and message) and those two operators themselves cost
    ``OPS[op].cost / COLD_DIVISOR``, with no loop factor. Such a path runs at most once per call of the method (it
    leaves it), and in the code that has them (argument checks, ``Validate``-style callees) almost never; priced
    as straight-line code, an inlined check that allocates its exception cost more than the call it replaced and
    was never chosen (docs/cost-model.md, "Paths that end in a throw"). A method that catches (any ``threw``,
    ``rho_exc``, ``rho_esigma``) prices ``athrow`` as any effect: a handler may go on with the method.

    The size flavour (``Goal.SIZE``): ``OPS[op].size``, the bytes the lowering typically emits for the node, with
    no loop factor (a byte in a loop is one byte).

Inputs: operator names and variance facts (a set of loop depths from :meth:`PEG.variance`, or an e-graph mask).
Outputs: float costs (``ExtractionProblem`` keeps floats).
Invariants: the same function prices the original PEG, every e-node and the extracted PEG, so "cheaper" means
the same thing everywhere; costs are finite and non-negative.
"""
from __future__ import annotations

from typing import Iterable

from ..codecost import Goal
from ..peg.graph import PEG
from ..peg.ops import BASE_LOOP_MULTIPLIER, OPS

__all__ = ["node_cost", "loop_depths", "peg_cost", "cold_nodes", "MAX_DEPTH", "COLD_DIVISOR", "THROWS",
           "HANDLER_READS"]

#: loop depths counted at most (a class of unknown variance has every bit set; nesting deeper than this does
#: not occur in real code and would only overflow the weights)
MAX_DEPTH = 8

#: what a node on a path that ends in a throw costs less than the same node run once per call: the inverse of a
#: loop level (a loop body runs ``BASE_LOOP_MULTIPLIER`` times per entry of its loop, a throw path at most once
#: per call and, in argument checks, almost never)
COLD_DIVISOR = BASE_LOOP_MULTIPLIER
#: the operators that end a path by throwing: a ``throw`` result, an ``athrow`` effect (an inlined callee's throw)
THROWS = frozenset({"throw", "athrow"})
#: the operators that read a caught exception: with any of them an ``athrow`` may be caught and the method go on
HANDLER_READS = frozenset({"threw", "rho_exc", "rho_esigma"})


def loop_depths(variance: int | Iterable[int], deepest: int = MAX_DEPTH) -> int:
    """The deepest loop depth in ``1..deepest`` the variance (a bit mask, bit ``l`` = depth ``l``, or a set of
    depths) contains, 0 for none: how many loops the node runs inside. ``deepest`` caps the unknown mask (-1:
    "varies everywhere") at the loops that exist."""
    deepest = min(deepest, MAX_DEPTH)
    if isinstance(variance, int):
        return max((lvl for lvl in range(1, deepest + 1) if (variance >> lvl) & 1), default=0)
    return max((lvl for lvl in set(variance) if 1 <= lvl <= deepest), default=0)


def node_cost(op: str, depths: int, goal: Goal = Goal.SPEED, cold: bool = False) -> float:
    """Base cost of ``op`` times ``BASE_LOOP_MULTIPLIER ** depths``, or over :data:`COLD_DIVISOR` when ``cold``
    (on a path that ends in a throw: :func:`cold_nodes`); for ``Goal.SIZE`` its size in bytes."""
    if goal is Goal.SIZE:
        return float(OPS[op].size)
    if cold:
        return OPS[op].cost / COLD_DIVISOR
    return float(OPS[op].cost * BASE_LOOP_MULTIPLIER ** depths)


def cold_nodes(peg: PEG) -> set[int]:
    """The nodes the root reaches only through the operands of a throw (:data:`THROWS`), and the throws
    themselves: what runs only on a path that leaves the method by an exception. Empty for a PEG that reads a
    caught exception (:data:`HANDLER_READS`: an ``athrow`` may be caught there) when it has an ``athrow``."""
    reach = peg.reachable()
    throws = [n for n in reach if peg.nodes[n].op in THROWS]
    if not throws:
        return set()
    if any(peg.nodes[n].op == "athrow" for n in throws) and any(peg.nodes[n].op in HANDLER_READS for n in reach):
        throws = [n for n in throws if peg.nodes[n].op == "throw"]
    hot: set[int] = set()
    stack = [peg.root]
    stop = set(throws)
    while stack:
        n = stack.pop()
        if n in hot:
            continue
        hot.add(n)
        if n not in stop:
            stack.extend(peg.nodes[n].children)
    return (set(reach) - hot) | stop


def max_loop_depth(peg: PEG) -> int:
    """The deepest loop attribute of the PEG's loop operators (0 without loops)."""
    return max((n.attr for n in peg.nodes if n.op in ("theta", "eval", "pass") and isinstance(n.attr, int)),
               default=0)


def peg_cost(peg: PEG, goal: Goal = Goal.SPEED) -> float:
    """The DAG cost of the nodes the root reaches, each priced with its own variance in the PEG (for ``goal``),
    those on a path that ends in a throw as cold (:func:`cold_nodes`, speed only)."""
    var = peg.variance()
    deepest = max_loop_depth(peg)
    cold = cold_nodes(peg) if goal is Goal.SPEED else set()
    return float(sum(node_cost(peg.nodes[i].op, loop_depths(var[i], deepest), goal, i in cold)
                     for i in peg.reachable()))
