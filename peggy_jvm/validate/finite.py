"""Two PEGs equal on a finite domain: a case in which the known conditions leave an int parameter few values, each
value substituted, what it decides computed (loops included), and the two roots compared.

What this module owns
    :func:`equal_on_values`, the last resort of a case of :func:`~.normalize.equal_by_cases` that no further
    branch condition splits: when the conditions the case knows bound some int parameters to at most
    :data:`MAX_VALUES` combinations of values (``x >= 5 && x < 7`` around EqBench's ``LoopMult5``: ``foo(x, 5)``
    looping ``5`` times adding ``x`` against ``x`` times adding ``5``; ``-100 <= x <= 10`` in ``oneBound``, where
    ``x > x - 1`` holds for every value the case leaves but not for ``MIN_VALUE``), each combination is put in place
    of the parameters (:func:`specialize`) and the PEG folded (:func:`evaluated`): pure operators of constants
    (``epeg.analyses.fold_keys``, the constant analysis' own folding), phis of a constant condition, and loops
    whose value is a closed computation of constants (``peg.evaluate.evaluate_closed``, the PEG evaluator's
    semantics, within :data:`LOOP_STEPS`), and calls whose arguments are constants, replaced by their callees'
    bodies (``rules.inline.inline_bodies`` with the prover's callees, a recursive one unfolded once per call, so a
    recursion on constants is computed call by call); also a call only some of whose arguments are constants
    when the body's branch conditions read those parameters (REVE's ``addhorn``: ``f(0, j + 1)`` in the case
    ``i == 1``, whose body's ``i == 0`` folds with ``j`` left free). The case is shown when the two roots meet
    (bisimilar) for every combination, skipping those for which a known condition folds to its other value (no input of the
    case has them); a case whose conditions no value satisfies is shown as it is (no input reaches it).

Why it is sound
    Every step is an equality on the inputs of the case: the known conditions are pure comparisons of int
    parameters with constants, so an input that reaches the case gives each parameter one of the enumerated values
    (:func:`~.normalize.known_interval` reads them exactly, holes included); for an input whose parameters have
    those values, the PEG with the values in place means what the PEG means; folding a pure operator of constants,
    a phi of a constant condition or a loop the evaluator ran to its end replaces a node by its value. Equal on
    each combination is equal on the case. A call replaced by its callee's body is the prover's own inlining
    (``rules/inline.py``'s conditions: no dispatch, no class initialization, no null check left), a recursive
    callee's body keeping its own calls. A loop the evaluator cannot finish (it does not end, it reads the heap
    or an argument not substituted) is left as it is, so that combination, and the case, is not shown.

Inputs: a :func:`~.normalize.joint_peg` (its root a pair of the two roots, then the case's facts), the known
conditions (node, value) of the case, a deadline. Output: True (equal on every input of the case) or False (not
shown). Deterministic: the work is bounded by counts (:class:`Work` per case, for the optimizer's self-check,
which has no clock), the deadline only ends it early (then False).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..egraph.clock import clock
from ..epeg.analyses import fold_keys
from ..ir.interp import Unsupported
from ..ir.nodes import Kind, MethodRef
from ..peg.build import minimize
from ..peg.evaluate import evaluate_closed
from ..peg.graph import PEG, Node
from ..peg.loops import chosen_values
from ..peg.ops import OPS, T
from ..rules.inline import Body, CalleeSource, inlinable_calls, inline_bodies
from .modular import UNPROVED
from .normalize import _cond, known_interval

__all__ = ["equal_on_values", "specialize", "evaluated", "MAX_VALUES"]

MAX_VALUES = 256  # combinations of parameter values tried in one case
LOOP_STEPS = 20_000  # evaluator steps for one loop's value in one combination
MAX_ROUNDS = 6  # fold, then fold what the folded loops decide, ...
MAX_UNFOLDS = 64  # calls of constants replaced by their bodies in one combination
# the work of one case, all combinations together (the optimizer's self-check has no clock to stop it)
CASE_LOOP_RUNS = 256  # loops run by the evaluator
CASE_UNFOLDS = 256  # calls unfolded


@dataclass(slots=True)
class Work:
    """What one case may still spend: loop runs and call unfoldings."""

    loop_runs: int = CASE_LOOP_RUNS
    unfolds: int = CASE_UNFOLDS


INT_MIN, INT_MAX = -2**31, 2**31 - 1
_VALUE_TYPES = {T.INT: "const.i", T.LONG: "const.l", T.BOOL: "const.b"}


def equal_on_values(u: PEG, known: frozenset[tuple[int, bool]], deadline: float = math.inf,
                    callees: tuple[CalleeSource, CalleeSource] | None = None) -> bool:
    """The two roots of ``u`` are equal on every input satisfying ``known`` (see the module docstring);
    ``callees``: ORIG's and OPT's methods whose calls of constants may be unfolded (:func:`evaluated`)."""
    a, b = u.nodes[u.root].children[:2]
    domains = _domains(u, u.reachable([a, b]), known)
    if domains is None:
        return False
    if any(not values for _p, values in domains):
        return True  # no input reaches this case
    combos: list[dict[int, int]] = [{}]
    for p, values in domains:
        combos = [{**c, p: v} for c in combos for v in values]
    facts = u.nodes[u.root].children[2:]
    # each fact's value in this case: known holds its condition without negations
    given = dict(known)
    expect = [None if _cond(u.nodes, f)[0] not in given else given[_cond(u.nodes, f)[0]] != _cond(u.nodes, f)[1]
              for f in facts]
    work = Work()
    for combo in combos:
        if clock() > deadline:
            return False
        w = evaluated(specialize(u, combo), callees, work)
        x, y, *folded = w.nodes[w.root].children
        if x != y and not _outside(w, folded, expect):
            return False
    return True


def _outside(w: PEG, facts: list[int], expect: list[bool | None]) -> bool:
    """Some fact of the case folded to the other value: no input with these parameter values reaches the case
    (``x <= x - 1`` known true, which only ``MIN_VALUE`` satisfies, and ``x`` in [-100, 10])."""
    return any(want is not None and _const_key(w.nodes[f]) == ("const.b", not want) for f, want in zip(facts, expect))


def _domains(u: PEG, reach: list[int], known: frozenset[tuple[int, bool]]) -> list[tuple[int, list[int]]] | None:
    """(parameter node, its values) for the int parameters the roots read whose values ``known`` bounds, fewest
    values first, while their combinations stay within :data:`MAX_VALUES`; None when there is none."""
    found = []
    for n in reach:
        node = u.nodes[n]
        if node.op != "param" or not _is_int(u, node.attr):
            continue
        lo, hi, holes = known_interval(u.nodes, ("v", n), known)
        lo, hi = max(lo, INT_MIN), min(hi, INT_MAX)
        if hi - lo + 1 <= MAX_VALUES:
            found.append((n, [v for v in range(int(lo), int(hi) + 1) if v not in holes]))
    found.sort(key=lambda d: (len(d[1]), d[0]))
    out, total = [], 1
    for p, values in found:
        if total * max(len(values), 1) > MAX_VALUES:
            break
        total *= max(len(values), 1)
        out.append((p, values))
    return out or None


def _is_int(peg: PEG, index: object) -> bool:
    types = peg.param_types
    return isinstance(index, int) and index < len(types) and getattr(types[index], "kind", None) is Kind.INT


def specialize(u: PEG, values: dict[int, int]) -> PEG:
    """``u`` with each parameter node of ``values`` replaced by its int constant (the nodes keep their ids)."""
    nodes = list(u.nodes)
    for p, v in values.items():
        nodes[p] = Node("const.i", v, ())
    out = PEG(name=u.name, class_name=u.class_name, is_static=u.is_static, synchronized=u.synchronized,
              nodes=nodes, root=u.root, param_types=u.param_types)
    out.seal()
    return out


def evaluated(peg: PEG, callees: tuple[CalleeSource, CalleeSource] | None = None,
              work: Work | None = None) -> PEG:
    """``peg`` minimized with its pure operators of constants, phis of constant conditions and closed loops (a
    top-level ``eval`` whose value :func:`~peggy_jvm.peg.evaluate.evaluate_closed` computes) folded, again on
    what each round decides, up to :data:`MAX_ROUNDS` rounds; then each call no loop varies whose arguments are
    constants (the receiver aside) replaced by its callee's body when ``callees`` has one: a call ORIG's view
    kept apart (:data:`~.modular.UNPROVED`, ORIG's only) by ORIG's, any other (OPT's, or a pair proved or assumed
    equal) by OPT's (``rules.inline.inline_bodies``: a recursive callee unfolded once per call, its own calls folded
    in turn), up to :data:`MAX_UNFOLDS` calls; all within ``work`` (spent as it goes; a fresh :class:`Work` when
    None)."""
    work = Work() if work is None else work
    peg = minimize(peg)
    unfolds = 0
    while True:
        for _ in range(MAX_ROUNDS):
            folded = _fold_once(peg, work)
            if folded is None:
                break
            peg = folded
        room = min(MAX_UNFOLDS - unfolds, work.unfolds)
        bodies = _constant_calls(peg, callees, room) if callees is not None and room > 0 else {}
        if not bodies:
            return peg
        unfolds += len(bodies)
        work.unfolds -= len(bodies)
        peg = minimize(inline_bodies(peg, bodies))


def _constant_calls(peg: PEG, callees: tuple[CalleeSource, CalleeSource], room: int) -> dict[int, Body]:
    """The bodies of at most ``room`` calls of ``peg`` (``rules.inline.inlinable_calls``) that no loop varies and
    whose arguments are constants, or some of them constants where the body's branch conditions read those
    parameters (``f(0, j + 1)`` of a body testing ``i == 0``: the test folds, whatever ``j`` is)."""
    a, b = peg.nodes[peg.root].children[:2]
    variance = peg.variance()
    out: dict[int, Body] = {}
    for n in inlinable_calls(peg, [a, b]):
        node = peg.nodes[n]
        args = node.children[1:] if node.op == "invoke.static" else node.children[2:]
        constant = [_const_key(peg.nodes[c]) is not None for c in args]
        if len(out) >= room or variance[n] or not any(constant):
            continue
        ref = node.attr
        assert isinstance(ref, MethodRef)  # an invoke's attribute
        source = callees[0] if ref.name.endswith(UNPROVED) else callees[1]
        got = source.body(node.op.split(".")[1], ref)
        if not isinstance(got, Body):
            continue
        first = 0 if node.op == "invoke.static" else 1  # the index of the first argument's param node
        if all(constant) or _tested(got.peg) & {first + i for i, c in enumerate(constant) if c}:
            out[n] = got
    return out


def _tested(body: PEG) -> set[int]:
    """The parameter indexes a branch condition of ``body`` reads outside its loops (through pure operators)."""
    variance = body.variance()
    out: set[int] = set()
    seen: set[int] = set()
    stack = [body.nodes[n].children[0] for n in body.reachable([body.root])
             if body.nodes[n].op == "phi" and not variance[n]]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        node = body.nodes[n]
        if node.op == "param":
            out.add(node.attr)  # type: ignore[arg-type]
        elif OPS[node.op].fn is not None:
            stack.extend(node.children)
    return out


def _const_key(node: Node) -> tuple[str, object] | None:
    if node.op == "const.b":
        return node.op, bool(node.attr)
    return (node.op, node.attr) if node.op in ("const.i", "const.l", "const.f", "const.d") else None


def _fold_once(peg: PEG, work: Work) -> PEG | None:
    """One round of :func:`evaluated` over a minimized PEG (children before parents but for theta back edges), or
    None when nothing folds."""
    nodes = list(peg.nodes)
    variance = peg.variance()
    alias: dict[int, int] = {}

    def res(c: int) -> int:
        while c in alias:
            c = alias[c]
        return c

    changed = False
    ends: dict[int, bool] = {}
    for n, node in enumerate(peg.nodes):
        kids = tuple(res(c) for c in node.children)
        op = node.op
        if op == "phi":
            cond = _const_key(nodes[kids[0]])
            if cond is not None or kids[1] == kids[2]:
                alias[n] = kids[2] if cond is not None and not cond[1] else kids[1]
                changed = True
                continue
        elif op in OPS and kids and op != "theta":
            got = fold_keys(op, [_const_key(nodes[c]) for c in kids])
            if got is None and op == "eval" and not variance[n]:
                if node.attr not in variance[node.children[0]]:
                    # the loop's value at its exit of something it does not change (the heap of a loop without
                    # effects): that thing, once the loop is known to end
                    if _ends(peg, node.children[1], ends, work):
                        alias[n] = kids[0]
                        changed = True
                        continue
                else:
                    got = _loop_value(peg, n, work)
            if got is not None:
                nodes[n] = Node(got[0], got[1], ())
                changed = True
                continue
        if kids != node.children:
            nodes[n] = Node(op, node.attr, kids)
    if not changed:
        return None
    nodes = [Node(x.op, x.attr, tuple(res(c) for c in x.children)) if x.children else x for x in nodes]
    out = PEG(name=peg.name, class_name=peg.class_name, is_static=peg.is_static, synchronized=peg.synchronized,
              nodes=nodes, root=res(peg.root), param_types=peg.param_types)
    out.seal()
    return minimize(out)


def _ends(peg: PEG, p: int, memo: dict[int, bool], work: Work) -> bool:
    """The loop exit ``p`` (a ``pass`` no loop varies) is reached: the evaluator finds its iteration."""
    if p not in memo:
        if work.loop_runs <= 0:
            return False
        work.loop_runs -= 1
        try:
            evaluate_closed(peg, p, budget=LOOP_STEPS)
            memo[p] = True
        except Unsupported:
            memo[p] = False
    return memo[p]


def _loop_value(peg: PEG, n: int, work: Work) -> tuple[str, object] | None:
    """The constant key of loop value ``n`` (an ``eval`` no loop varies) when it is a closed computation of an int,
    long or boolean type the evaluator finishes, else None."""
    vt = _value_type(peg, n)
    want = _VALUE_TYPES.get(vt) if vt is not None else None
    if want is None or work.loop_runs <= 0:
        return None
    work.loop_runs -= 1
    try:
        v = evaluate_closed(peg, n, budget=LOOP_STEPS)
    except Unsupported:
        return None
    if want == "const.b":
        return (want, bool(v)) if isinstance(v, (bool, int)) else None
    return (want, v) if isinstance(v, int) and not isinstance(v, bool) else None


def _value_type(peg: PEG, n: int) -> T | None:
    """The PEG type of value node ``n``: its operator's output, through phis, thetas and evals to the values they
    choose from (None when unknown here)."""
    for x in chosen_values(peg, n):
        node = peg.nodes[x]
        if node.op == "param":
            return T.INT if _is_int(peg, node.attr) else None
        out = OPS[node.op].output
        if out is not T.ANY:
            return out
    return None
