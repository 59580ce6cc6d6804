"""Normal forms of PEGs for comparing two methods: conditions known inside branches, and bisimilar roots.

What this module owns
    * :func:`simplify_known_conditions`: inside an arm of ``phi(c, a, b)`` the condition ``c`` is known (true in
      ``a``, false in ``b``), so a ``phi(c, x, y)`` met again below picks its arm. Two CFGs of one method differ
      this way when an optimizer duplicates a join into its predecessors (a return copied into each branch, an
      exception dispatch written once per copy): the copy's PEG tests each condition once, javac's tests it
      again after the join. Equality saturation would need context-dependent rewriting for it.
    * :func:`equal_by_cases`: the two roots of a :func:`joint_peg` are bisimilar in every case of the branch conditions they test
      outside loops (split on one condition at a time, each side simplified with it known, until the roots meet
      or the budget ends). Every run gives each such condition one value, and in that case both methods mean
      what their simplified PEGs mean; equal in every case is equal. It lines up exception dispatch and returns
      that two compilers nested in different orders.
    * :func:`bisimilar`: the roots of two PEGs have the same unfolding (partition refinement over both graphs,
      :func:`~peggy_jvm.peg.build.minimize` of their union). Congruence closure in an e-graph never merges two
      cycles, so two copies of one loop nest are only found equal this way (or by the ``theta-bisimulation`` rule).

Inputs: sealed, well-formed PEGs (peg/check.py). Outputs: a new PEG (the input is left as it is) / a verdict.

Invariants
    * A condition is only carried into the nodes evaluated at the same loop iteration as the phi testing it:
      the context is dropped at every loop operator (theta, eval, pass, shift, peel), whose children are
      evaluated at other iterations.
    * Bounded: a context holds at most :data:`MAX_KNOWN` of the conditions still tested below; when the copy grows
      past ``GROWTH`` times the input it is made again with the context dropped at every effect too (as at loop
      operators: never wrong, only less is decided), and when that grows too, or the deadline passes, the input
      is returned unchanged.
"""
from __future__ import annotations

import math
import time

from .build import minimize
from .graph import PEG, Node
from .. import semantics as S
from .ops import EFFECTS, LOOP_OPS, OPS, Role, T

__all__ = ["simplify_known_conditions", "bisimilar", "equal_by_cases", "joint_peg"]

MAX_KNOWN = 8
GROWTH = 4
#: int operators never folded here: division and remainder (a zero divisor throws), the loop index successor
_NOT_FOLDED = frozenset(S.THROWING) | {"succ"}

_NONE: frozenset[tuple[int, bool]] = frozenset()


class _TooBig(Exception):
    pass


def _known(nodes: list[Node], c: int, ctx: frozenset[tuple[int, bool]]) -> bool | None:
    """The value ``ctx`` gives condition ``c`` (negations looked through), or None."""
    base, negated = _cond(nodes, c)
    for value in (True, False):
        if (base, value) in ctx:
            return value != negated
    return None


def _cond(nodes: list[Node], c: int) -> tuple[int, bool]:
    """(condition without its negations, whether it was negated an odd number of times)."""
    negate = False
    while nodes[c].op == "not":
        c, negate = nodes[c].children[0], not negate
    return c, negate


def simplify_known_conditions(peg: PEG, known: frozenset[tuple[int, bool]] = _NONE,
                              deadline: float = math.inf) -> PEG:
    """A PEG with the same meaning in which no phi re-tests a condition its enclosing arm already decided.
    ``known``: (condition node, value) pairs assumed at the root (a case of :func:`equal_by_cases`). Past
    ``deadline`` (``time.monotonic()``) the input is returned as it is.

    When carrying every condition everywhere grows the copy past its bound, the conditions are carried again
    only up to the effects (an effect's inputs are simplified without context): a method that is one try region
    after another has a heap that is a phi over every earlier dispatch, so each later region would be copied once
    per path through all the earlier ones, while the re-tests that matter (a return or dispatch duplicated into
    the arms) sit above the effects."""
    if not any(n.op == "phi" for n in peg.nodes):
        return peg
    for through_effects in (True, False):
        out = _simplify(peg, known, deadline, through_effects)
        if out is not None:
            return out
    return peg


def _simplify(peg: PEG, known: frozenset[tuple[int, bool]], deadline: float, through_effects: bool) -> PEG | None:
    """:func:`simplify_known_conditions` with or without carrying conditions into effects; None when too big."""
    nodes = peg.nodes
    barrier = LOOP_OPS if through_effects else LOOP_OPS | EFFECTS
    out = PEG(name=peg.name, class_name=peg.class_name, is_static=peg.is_static, synchronized=peg.synchronized,
              param_types=peg.param_types)
    limit = GROWTH * len(nodes) + 64
    memo: dict[tuple[int, frozenset], int] = {}
    thetas: list[tuple[int, int]] = []  # (new theta, old theta)
    tested: dict[int, frozenset[int]] = {}  # node -> the conditions phis below it test (not inside loops)

    def tests(n0: int) -> frozenset[int]:
        if n0 in tested:
            return tested[n0]
        stack = [n0]
        while stack:
            n = stack[-1]
            node = nodes[n]
            if node.op in barrier:
                tested[n] = frozenset()
                stack.pop()
                continue
            todo = [c for c in node.children if c not in tested]
            if todo:
                stack.extend(todo)
                continue
            got = frozenset().union(*(tested[c] for c in node.children))
            tested[n] = got | {_cond(nodes, node.children[0])[0]} if node.op == "phi" else got
            stack.pop()
        return tested[n0]

    def key(n: int, ctx: frozenset) -> tuple[int, frozenset]:
        # only what a phi below can use: the copies of a subtree that tests nothing known are one copy
        if not ctx or nodes[n].op in barrier:
            return (n, _NONE)
        below = tests(n)
        return (n, frozenset(x for x in ctx if x[0] in below))

    def kids(n: int, ctx: frozenset) -> list[tuple[int, frozenset]]:
        node = nodes[n]
        if node.op in barrier:
            return [(c, _NONE) for c in node.children]
        if node.op == "phi":
            # only the conditions a phi below still tests count against the bound: a long chain of dispatches
            # (one try region after another) would otherwise fill the context with conditions nothing re-tests
            ctx = key(n, ctx)[1]
            if len(ctx) < MAX_KNOWN:
                c, a, b = node.children
                base, negated = _cond(nodes, c)
                return [(c, ctx), (a, ctx | {(base, not negated)}), (b, ctx | {(base, negated)})]
        return [(c, ctx) for c in node.children]

    steps = 0

    def ensure(n0: int, ctx0: frozenset) -> int:
        nonlocal steps
        stack = [(n0, ctx0)]
        while stack:
            steps += 1
            if steps & 1023 == 0 and time.monotonic() > deadline:
                raise _TooBig()
            n, ctx = stack[-1]
            k = key(n, ctx)
            if k in memo:
                stack.pop()
                continue
            node = nodes[n]
            if node.op == "theta":
                memo[k] = out.new_theta(node.attr)  # type: ignore[arg-type]
                thetas.append((memo[k], n))
                stack.pop()
                continue
            if node.op == "phi":
                v = _known(nodes, node.children[0], ctx)
                if v is None:  # the condition may fold to a constant once the known conditions are used
                    ck = key(node.children[0], ctx)
                    if ck not in memo:
                        stack.append(ck)
                        continue
                    v = _constant_bool(out, memo[ck])
                if v is not None:  # the arm is decided: this phi is that arm
                    target = key(node.children[1] if v else node.children[2], ctx)
                    if target in memo:
                        memo[k] = memo[target]
                        stack.pop()
                    else:
                        stack.append(target)
                    continue
            ks = kids(n, ctx)
            missing = [c for c in ks if key(*c) not in memo]
            if missing:
                if len(stack) > 4 * len(nodes) + 16:
                    raise _TooBig()  # a cycle without a theta: not a well-formed PEG
                stack.extend(missing)
                continue
            memo[k] = _add_folded(out, node.op, node.attr, tuple(memo[key(*c)] for c in ks))
            if len(out.nodes) > limit:
                raise _TooBig()
            stack.pop()
        return memo[key(n0, ctx0)]

    try:
        out.root = ensure(peg.root, known)
        done = 0
        while done < len(thetas):
            t, old = thetas[done]
            done += 1
            init, nxt = nodes[old].children
            out.set_theta(t, ensure(init, _NONE), ensure(nxt, _NONE))
    except _TooBig:
        return None
    out.seal()
    return minimize(out)


def _constant_bool(g: PEG, n: int) -> bool | None:
    node = g.nodes[n]
    return bool(node.attr) if node.op == "const.b" else None


def _add_folded(g: PEG, op: str, attr: object, kids: tuple[int, ...]) -> int:
    """``g.add(op, attr, kids)``, or what it is when that is plain: an int or bool operator of constants folded
    with its semantics (a flag set in each branch and tested after the join, known in a case of
    :func:`equal_by_cases`), a phi of two equal arms."""
    if op == "phi" and kids[1] == kids[2]:
        return kids[1]
    spec = OPS.get(op)  # None: the union's PAIR root
    if spec is not None and spec.role is Role.PURE and spec.fn is not None and op not in _NOT_FOLDED and kids and \
            all(t in (T.INT, T.BOOL) for t in spec.inputs) and spec.output in (T.INT, T.BOOL):
        consts = [g.nodes[c] for c in kids]
        want = ["const.i" if t is T.INT else "const.b" for t in spec.inputs]
        if [c.op for c in consts] == want:
            value = spec.fn(*(c.attr if c.op == "const.i" else bool(c.attr) for c in consts))
            return g.add("const.i", value) if spec.output is T.INT else g.add("const.b", bool(value))
    return g.add(op, attr, kids)


def bisimilar(a: PEG, b: PEG) -> bool:
    """The two roots have the same unfolding, the parameters and entry heap of both being the same."""
    return _met(_union(a, b))


PAIR = "pair"  # the root of the union of two PEGs inside this module (never an operator of a real PEG)


def _union(a: PEG, b: PEG) -> PEG:
    nodes = list(a.nodes)
    shift = len(nodes)
    nodes.extend(Node(n.op, n.attr, tuple(c + shift for c in n.children)) for n in b.nodes)
    nodes.append(Node(PAIR, None, (a.root, b.root + shift)))
    both = PEG(name=a.name, class_name=a.class_name, is_static=a.is_static, synchronized=a.synchronized,
               nodes=nodes, root=len(nodes) - 1, param_types=a.param_types)
    both.seal()
    return minimize(both)


def joint_peg(a: PEG, b: PEG) -> tuple[PEG, int, int]:
    """Both PEGs as one minimized PEG, bisimilar parts shared (loops included, which hash-consing in an e-graph
    never merges: a cycle is only met again through itself), and the nodes of ``a``'s and ``b``'s roots in it."""
    u = _union(a, b)
    x, y = u.nodes[u.root].children
    return u, x, y


def _met(u: PEG) -> bool:
    x, y = u.nodes[u.root].children
    return x == y


def _first_phi(u: PEG, start: int, barrier: frozenset[str]) -> int | None:
    """The condition of the first phi met from ``start`` (breadth first, not ``start`` itself, not below
    ``barrier`` operators)."""
    seen = {start}
    queue = [start]
    for n in queue:
        node = u.nodes[n]
        if node.op == "phi" and n != start:
            return _cond(u.nodes, node.children[0])[0]
        if node.op in barrier:
            continue
        for c in node.children:
            if c not in seen:
                seen.add(c)
                queue.append(c)
    return None


def _top_condition(u: PEG) -> int | None:
    """The condition to split on: that of the first phi met from the root (breadth first, not inside loops), or,
    when that condition is itself computed from phis (a flag set in each branch and tested after the join), the
    first condition those test, and so on: once it is known the flag folds to a constant, where a case of the
    flag alone would leave the phis it was made of undecided."""
    c = _first_phi(u, u.root, LOOP_OPS)
    seen: set[int] = set()
    while c is not None and c not in seen:
        seen.add(c)
        below = _first_phi(u, c, LOOP_OPS | EFFECTS)
        if below is None:
            return c
        c = below
    return c


def equal_by_cases(joint: PEG, max_cases: int = 64, deadline: float = math.inf) -> int | None:
    """How many cases it took to show the two roots of ``joint`` (:func:`joint_peg`) equal (0: bisimilar as they
    are), or None when not shown within ``max_cases`` simplified copies and ``deadline`` (``time.monotonic()``).
    See the module docstring."""
    made = 0

    def split(u: PEG) -> bool:
        nonlocal made
        if _met(u):
            return True
        c = _top_condition(u)
        if c is None:
            return False
        for value in (True, False):
            made += 1
            if made > max_cases or time.monotonic() > deadline:
                return False
            case = simplify_known_conditions(u, frozenset({(c, value)}), deadline)
            if case is u or not split(case):  # unchanged: the condition is not decided anywhere it matters
                return False
        return True

    return made if split(joint) else None
