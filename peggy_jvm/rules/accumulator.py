"""The accumulator lemma, proved per pair: a helper with an accumulator read as a plain recursion plus its start.

What this module owns
    :func:`read_accumulators`: for a pair whose one side calls a helper ``h(x..., s)`` of its own (an ``int``
    or ``long`` accumulator ``s`` last, the helper returning that type) where the other side calls a helper
    ``g(x...)`` of its own (the same parameters otherwise, the same result type), the lemma

        h(x..., s) = s + g(x...)          (the value; the heap after both calls the same; an exception the same)

    is proved by induction on the recursion (:func:`_lemma_holds`): ``h``'s body, each of its own calls
    ``h(a..., b)`` read as ``b + g(a...)``, against ``g``'s body with ``s`` added to every value it returns,
    shown equal by the normal forms or by saturation with the pair's rules. When it holds, every call of ``h``
    in that side's PEG is read as ``s + g(...)`` (its ``rho_value`` as the sum, its ``rho_sigma`` as ``g``'s),
    so the two sides meet through ``g``'s calls. EqBench's ``triangular``: ``g(n)`` against ``g(n, 0)``.

Why it is sound (partial equivalence, as the regression-verification rule; docs/validation.md)
    Claim: whenever ``h(x, s)`` and ``g(x)`` both end on a heap, ``h``'s outcome is ``g``'s with ``s`` added to
    its value (the same exception on the same heap when ``g`` throws). By induction on the depth of ``h``'s run.
    The proof shows ``body_h[h(a, b) := b + g(a)] = body_g + s`` as terms in which the calls ``g(a)`` are
    uninterpreted: equal for *every* interpretation ``I`` of those calls' outcomes. Take ``I`` = ``g``'s real
    outcome where ``g`` ends. At an inner call ``h(a, b)`` of ``h``'s run (shallower: it ends): if ``g(a)``
    ends, the induction hypothesis gives ``h(a, b) = b + g(a)``; if not, let ``I(a)`` be ``h(a, b)``'s outcome
    with ``b`` subtracted (addition in 32 or 64 bits is a group: every outcome of ``h(a, b)`` is ``b + w`` for
    one ``w``), which changes ``I`` only where ``g`` does not end, where ``g``'s own ending run never calls it.
    So ``h``'s run computes ``body_h[h := b + I]`` = ``body_g[I] + s`` = ``g(x) + s``. A caller whose calls of
    ``h`` are read so is therefore proved equal whenever its calls end on both sides: the proof's reason says
    it is partial equivalence (:data:`LEMMA_NOTE`). Only addition: with a product, ``b * w`` need not reach
    every outcome (``b = 0``), and the step that picks ``I(a)`` fails.

Which calls
    Both helpers are each side's own (the callee sources' bodies, :class:`~.inline.CalleeSource` with
    recursion allowed: a call that cannot dispatch elsewhere, on ``this`` or static), called by nothing of the
    other side, and every reader of a call of ``h`` is its ``rho_value`` or ``rho_sigma`` (no handler). The
    lemma's proof is bounded (:data:`LEMMA_LIMITS`, and the caller's deadline); unproved, nothing changes.

Inputs: both sides' PEGs (ORIG's as the caller's view names its calls), their callee sources, the rules.
Outputs: the PEGs with the lemma applied, and the lemmas used (named for the reason).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..classfile.descriptors import parse_method_descriptor
from ..egraph import Limits, Runner
from ..egraph.clock import clock
from ..ir.nodes import MethodRef
from ..peg.graph import PEG, Node

if TYPE_CHECKING:
    from .inline import Body, CalleeSource

__all__ = ["read_accumulators", "LEMMA_NOTE", "LEMMA"]

#: the axiom name a proof that used the lemma lists
LEMMA = "accumulator-lemma"
#: appended to the reason of a pair proved with the lemma
LEMMA_NOTE = ("; a helper's accumulator read as its start plus the other side's recursion (proved by induction "
              "on the recursion): partial equivalence (equal whenever both return or throw)")
#: the lemma's saturation: a helper body of a few dozen nodes on each side
LEMMA_LIMITS = Limits(max_nodes=4_000, max_iterations=20, time_limit_s=1.0)
_CALL_OPS = frozenset({"invoke.static", "invoke.special", "invoke.virtual"})
_ADD = {"I": "add.i", "J": "add.l"}
_LEMMA_RULES = ("phi-distrib-left", "phi-distrib-right", "add-assoc", "add-assoc.l")


@dataclass(frozen=True, slots=True)
class _Lemma:
    """``acc(x..., s) = s + plain(x...)``: the call operators (op, ref) of both helpers, as their side names them."""

    acc: tuple[str, MethodRef]
    plain: tuple[str, MethodRef]
    add: str  # add.i / add.l


def read_accumulators(pa: PEG, pb: PEG, sources: tuple[CalleeSource, CalleeSource], rules: list,
                      deadline: float) -> tuple[PEG, PEG, list[str]]:
    """Both PEGs with every proved accumulator lemma applied to its side (see the module docstring), and the
    names of the helpers read so (empty: the PEGs as given)."""
    pegs = [pa, pb]
    used: list[str] = []
    for acc_side in (1, 0):
        plain_side = 1 - acc_side
        for lemma in _candidates(pegs[acc_side], pegs[plain_side]):
            if clock() >= deadline:
                break
            acc_body = sources[acc_side].body(lemma.acc[0].split(".")[1], lemma.acc[1])
            plain_body = sources[plain_side].body(lemma.plain[0].split(".")[1], lemma.plain[1])
            if isinstance(acc_body, str) or isinstance(plain_body, str) or acc_body.is_static != plain_body.is_static:
                continue
            if not _lemma_holds(lemma, acc_body, plain_body, rules, deadline):
                continue
            read = _read_calls(pegs[acc_side], lemma)
            if read is not None:
                pegs[acc_side] = read
                used.append(f"{lemma.acc[1].name}{lemma.acc[1].descriptor}")
    return pegs[0], pegs[1], used


def _calls(peg: PEG) -> set[tuple[str, MethodRef]]:
    return {(n.op, n.attr) for n in (peg.nodes[i] for i in peg.reachable([peg.root]))
            if n.op in _CALL_OPS and isinstance(n.attr, MethodRef)}


def _candidates(acc_peg: PEG, plain_peg: PEG) -> list[_Lemma]:
    """The (accumulator, plain) helper pairs whose descriptors fit the lemma, each called by its side only."""
    mine, theirs = _calls(acc_peg), _calls(plain_peg)
    out = []
    for op, ref in sorted(mine - theirs, key=str):
        params, ret = parse_method_descriptor(ref.descriptor)
        if ret not in _ADD or not params or params[-1] != ret:
            continue
        for op2, ref2 in sorted(theirs - mine, key=str):
            params2, ret2 = parse_method_descriptor(ref2.descriptor)
            if op2 == op and ret2 == ret and list(params2) == list(params[:-1]):
                out.append(_Lemma((op, ref), (op2, ref2), _ADD[ret]))
    return out


def _read_calls(peg: PEG, lemma: _Lemma) -> PEG | None:
    """``peg`` with every call of the accumulator helper read as its last argument plus the plain helper's call
    on the others; None when some call's outcome is read otherwise (a handler's ``threw``/``rho_exc``)."""
    from ..peg.build import rebuilt_peg
    calls = {i for i, n in enumerate(peg.nodes) if (n.op, n.attr) == lemma.acc}
    if not calls:
        return None
    nodes = list(peg.nodes)
    alias: dict[int, int] = {}
    plain: dict[int, int] = {}
    for i, node in enumerate(peg.nodes):
        if not any(c in calls for c in node.children):
            continue
        if node.op not in ("rho_value", "rho_sigma") or len(node.children) != 1:
            return None
        call = node.children[0]
        if call not in plain:
            nodes.append(Node(lemma.plain[0], lemma.plain[1], peg.nodes[call].children[:-1]))
            plain[call] = len(nodes) - 1
        nodes.append(Node(node.op, None, (plain[call],)))
        if node.op == "rho_value":
            nodes.append(Node(lemma.add, None, (peg.nodes[call].children[-1], len(nodes) - 1)))
        alias[i] = len(nodes) - 1
    return rebuilt_peg(peg, nodes, alias)


def _plus_start(body: PEG, start: int, add: str) -> PEG:
    """``body`` (a helper's PEG: a phi-tree of ``return`` results) with param ``start`` added to every value it
    returns (``s + v``)."""
    from ..peg.build import rebuilt_peg
    nodes = list(body.nodes)
    nodes.append(Node("param", start, ()))
    s = len(nodes) - 1
    alias: dict[int, int] = {}
    for i, node in enumerate(body.nodes):
        if node.op == "return":
            sigma, value = node.children
            nodes.append(Node(add, None, (s, value)))
            nodes.append(Node("return", None, (sigma, len(nodes) - 1)))
            alias[i] = len(nodes) - 1
    return rebuilt_peg(body, nodes, alias)


@functools.lru_cache(maxsize=1)
def _lemma_rules() -> list:
    """What the lemma's saturation adds to the pair's rules (both off by default, where they grow every e-graph):
    a sum with a phi on one side spread into its arms (``s + phi(c, a, b) = phi(c, s + a, s + b)``: the
    accumulator added to a body's returned phi) and sums reassociated (``(n + s) + r = s + (n + r)``). A helper
    body of a few dozen nodes affords them."""
    from .library import default_axiom_dir, load_rules
    where = default_axiom_dir()
    rs = load_rules([where / "peg-distrib.ax", where / "arith-int.ax", where / "arith-long.ax"], builtins=False)
    return [rs.get(name) for name in _LEMMA_RULES]


def _lemma_holds(lemma: _Lemma, acc: Body, plain: Body, rules: list, deadline: float) -> bool:
    """The induction step: ``acc``'s body with its own calls read by the lemma equals ``plain``'s body plus the
    accumulator parameter, by the normal forms or by saturation within :data:`LEMMA_LIMITS`."""
    from ..epeg import EPeg
    from ..validate.normalize import bisimilar, joint_peg
    stepped = _read_calls(acc.peg, lemma)
    if stepped is None:
        return False
    start = len(parse_method_descriptor(lemma.acc[1].descriptor)[0]) - (1 if acc.is_static else 0)
    wanted = _plus_start(plain.peg, start, lemma.add)
    wanted.param_types = stepped.param_types
    if bisimilar(stepped, wanted):
        return True
    joint, x, y = joint_peg(stepped, wanted)
    eg = EPeg()
    got = eg.add_peg(joint, roots=[x, y])
    left = deadline - clock()
    if left <= 0:
        return False
    # without a deadline (the optimizer's self-check) work limits only, so that the verdict is reproducible
    seconds = None if math.isinf(left) else min(LEMMA_LIMITS.time_limit_s or left, left)
    limits = Limits(max_nodes=LEMMA_LIMITS.max_nodes, max_iterations=LEMMA_LIMITS.max_iterations,
                    time_limit_s=seconds)
    Runner(list(rules) + _lemma_rules(), limits).run(eg)
    return not eg.conflicts and eg.equiv(got[x], got[y])
