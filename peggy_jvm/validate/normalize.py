"""Normal forms of PEGs for comparing two methods: conditions known inside branches and at loop exits, and
bisimilar roots.

What this module owns
    * :func:`simplify_known_conditions`: inside an arm of ``phi(c, a, b)`` the condition ``c`` is known (true in
      ``a``, false in ``b``), so a ``phi(c, x, y)`` met again below picks its arm. Two CFGs of one method differ
      this way when an optimizer duplicates a join into its predecessors (a return copied into each branch, an
      exception dispatch written once per copy): the copy's PEG tests each condition once, javac's tests it
      again after the join. Equality saturation would need context-dependent rewriting for it.
    * :func:`settle_exit_phis`: a loop's phis on its own exit condition pick their arm (a theta's next value
      before the exit, a value taken at the exit), where the graph shows the implication.
    * :func:`equal_by_cases`: the two roots of a :func:`joint_peg` are bisimilar in every case of the branch
      conditions they test outside loops (split on one condition at a time, each side simplified with it known, until the roots meet
      or the budget ends). Every run gives each such condition one value, and in that case both methods mean
      what their simplified PEGs mean; equal in every case is equal. It lines up exception dispatch and returns
      that two compilers nested in different orders.
    * :func:`expand_library_calls`: a call of a pure library method that the ``java.lang`` axioms define
      (``Math.max``, ``Integer.signum`` ...) replaced by its definition, the heap after it by the heap before, as
      those axioms say: so that the normal forms above decide the definition's phis by the branch conditions
      (``lo = Math.min(a, b)`` against ``if (a <= b) lo = a; ...``) where the e-graph cannot.
    * :func:`hoist_loop_lengths`: a loop whose iterations each begin by reading the length of one array (javac's
      ``for (i = 0; i < a.length; i++)``) read as the loop that reads it once in front (a for-each loop's copy
      of the length): only the first read can throw, and every later one sees the same length on the same heap;
      the same for a field read (``this.items``) in a loop whose effects are all reads.
    * :func:`trivial_forms`: choices that are no choice made (an ``eval`` of a value its loop does not vary, a
      phi of one value twice, and so a theta that never changes), ``x - k`` as ``x + (-k)`` and a commutative
      operator's constant operand second: javac's ``low`` that stays 0 against ProGuard's folded 0.
    * :func:`merge_repeated_reads`: a read made again with only reads between it and the same read of the same
      operands is that read (javac's second ``H[i]`` of ``H[i][j] = H[i][j] - x`` against ProGuard's ``dup2``).
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
from typing import Callable

from .. import semantics as S
from ..egraph.clock import clock
from ..peg.build import minimize, rebuilt_peg
from ..peg.graph import PEG, Node
from ..peg.loops import poly_sigma
from ..peg.ops import EFFECTS, LOOP_OPS, OPS, Role, T

__all__ = ["expand_library_calls", "hoist_loop_lengths", "merge_repeated_reads", "trivial_forms", "accesses_of_this",
           "simplify_known_conditions", "settle_exit_phis", "bisimilar", "equal_by_cases", "joint_peg", "joint_pegs",
           "pair_of"]

MAX_KNOWN = 8
GROWTH = 4
#: int operators never folded here: division and remainder (a zero divisor throws), the loop index successor
_NOT_FOLDED = frozenset(S.THROWING) | {"succ"}

_NONE: frozenset[tuple[int, bool]] = frozenset()


class _TooBig(Exception):
    pass


def _known(nodes: list[Node], c: int, ctx: frozenset[tuple[int, bool]]) -> bool | None:
    """The value ``ctx`` gives condition ``c`` (negations looked through), or None: the condition itself known,
    or implied by the known comparisons of the same term (:func:`_implied`)."""
    base, negated = _cond(nodes, c)
    for value in (True, False):
        if (base, value) in ctx:
            return value != negated
    implied = _implied(nodes, base, ctx)
    return None if implied is None else implied != negated


# An int comparison read as a relation of one exact integer term with a constant: ``x op k`` for an int ``x``;
# ``cmp.l(x, k) op 0`` is ``x op k`` for a long ``x`` (cmp.l is -1, 0 or 1 as x <, ==, > k); and two terms
# compared, ``x op y``, is ``x - y op 0`` over the mathematical integers (the difference is never computed, so
# nothing wraps). Its term: ("v", x) or ("d", x, y) with x < y as node numbers (the relation flipped to match).
_RELATIONS = {"eq.i": "eq", "ne.i": "ne", "lt.i": "lt", "le.i": "le", "gt.i": "gt", "ge.i": "ge"}
_MIRROR = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
_NEGATION = {"eq": "ne", "ne": "eq", "lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}
Term = tuple


def _relation(nodes: list[Node], c: int) -> tuple[Term, str, int] | None:
    """Condition ``c`` (no ``not`` on top) as (term, relation, constant), or None when it is no such comparison."""
    node = nodes[c]
    rel = _RELATIONS.get(node.op)
    if rel is None:
        return None
    x, y = node.children
    kx, ky = _int_const(nodes[x], "const.i"), _int_const(nodes[y], "const.i")
    if kx is not None and ky is not None:
        return None  # folded elsewhere
    if kx is not None:
        x, y, kx, ky, rel = y, x, ky, kx, _MIRROR[rel]
    if ky is not None:
        inner = nodes[x]
        if inner.op == "cmp.l" and ky == 0:  # cmp.l(a, b) op 0 is a op b, over the longs
            a, b = inner.children
            ka, kb = _int_const(nodes[a], "const.l"), _int_const(nodes[b], "const.l")
            if ka is not None and kb is not None:
                return None
            if kb is not None:
                return ("v", a), rel, kb
            if ka is not None:
                return ("v", b), _MIRROR[rel], ka
            return (("d", a, b), rel, 0) if a < b else (("d", b, a), _MIRROR[rel], 0)
        return ("v", x), rel, ky
    return (("d", x, y), rel, 0) if x < y else (("d", y, x), _MIRROR[rel], 0)


def _int_const(node: Node, op: str) -> int | None:
    return node.attr if node.op == op and isinstance(node.attr, int) else None


def _implied(nodes: list[Node], c: int, ctx: frozenset[tuple[int, bool]]) -> bool | None:
    """The value of comparison ``c`` wherever the known conditions ``ctx`` hold, when the known comparisons of
    the same term (the conditions or their negations) bound it to an interval minus some points that decide
    ``c``; None otherwise. Exact: every relation is one of integers, with no arithmetic."""
    want = _relation(nodes, c)
    return None if want is None else _implied_relation(nodes, *want, ctx)


def known_interval(nodes: list[Node], term: Term, ctx: frozenset[tuple[int, bool]]
                   ) -> tuple[float, float, set[int]]:
    """(low, high, holes): the values of ``term`` wherever the known conditions ``ctx`` hold lie in [low, high]
    (either may be infinite) and are none of ``holes`` (inside the interval); low > high when none does. Read
    off the known comparisons of the same term, exactly (integers, no arithmetic)."""
    lo, hi, holes = -math.inf, math.inf, set()
    for known, value in ctx:
        base, negated = _cond(nodes, known)
        got = _relation(nodes, base)
        if got is None or got[0] != term:
            continue
        r, j = got[1] if value != negated else _NEGATION[got[1]], got[2]
        if r == "eq":
            lo, hi = max(lo, j), min(hi, j)
        elif r == "ne":
            holes.add(j)
        elif r in ("lt", "le"):
            hi = min(hi, j - 1 if r == "lt" else j)
        else:
            lo = max(lo, j + 1 if r == "gt" else j)
    while lo in holes:  # an excluded end moves the end
        lo += 1
    while hi in holes:
        hi -= 1
    return lo, hi, {h for h in holes if lo < h < hi}


def _implied_relation(nodes: list[Node], term: Term, rel: str, k: int,
                      ctx: frozenset[tuple[int, bool]]) -> bool | None:
    """:func:`_implied` of the relation ``term rel k``."""
    lo, hi, holes = known_interval(nodes, term, ctx)
    if lo > hi:
        return None  # no value satisfies the context: an arm never taken; leave it as it is
    if rel in ("eq", "ne"):
        if lo == hi == k:
            return rel == "eq"
        if k < lo or k > hi or k in holes:
            return rel == "ne"
        return None
    if rel in ("gt", "ge"):  # x > k is not x <= k
        k, rel, flip = k, _NEGATION[rel], True
    else:
        flip = False
    bound = k - 1 if rel == "lt" else k  # x <= bound
    if hi <= bound:
        return not flip
    if lo > bound:
        return flip
    return None


def _tie_arm(nodes: list[Node], phi: Node, ctx: frozenset[tuple[int, bool]]) -> int | None:
    """The arm a ``phi(c, a, b)`` whose condition compares its own two arms (min or max of two ints, with ``<`` or
    ``<=``, either way round) takes wherever ``ctx`` holds, or None. Where ``a == b`` both arms are one value, so
    the strictness of the test does not matter: a min is ``a`` wherever ``a <= b`` is known and ``b`` wherever
    ``a >= b`` is, a max the other way; ``phi(a == b, a, b)`` is ``b`` and ``phi(a != b, a, b)`` is ``a``."""
    c, a, b = phi.children
    base, negated = _cond(nodes, c)
    got = _relation(nodes, base)
    if got is None or got[2] != 0 or got[0] not in (("d", a, b), ("d", b, a)):
        return None
    rel = got[1] if got[0] == ("d", a, b) else _MIRROR[got[1]]  # the phi takes a when a rel b (or when not)
    if negated:
        rel = _NEGATION[rel]
    if rel in ("eq", "ne"):
        return b if rel == "eq" else a
    term = ("d", a, b) if a < b else ("d", b, a)
    flip = a > b  # the term is b - a: a <= b is b - a >= 0
    a_le_b = _implied_relation(nodes, term, "ge" if flip else "le", 0, ctx)
    a_ge_b = _implied_relation(nodes, term, "le" if flip else "ge", 0, ctx)
    smaller, larger = (a, b) if a_le_b else (b, a) if a_ge_b else (None, None)
    if smaller is None:
        return None
    return smaller if rel in ("lt", "le") else larger


def _terms(nodes: list[Node], c: int) -> frozenset[Term]:
    """The terms comparison ``c`` relates (:func:`_relation`), for deciding which known conditions matter below."""
    got = _relation(nodes, c)
    return frozenset() if got is None else frozenset([got[0]])


def _cond(nodes: list[Node], c: int) -> tuple[int, bool]:
    """(condition without its negations, whether it was negated an odd number of times)."""
    negate = False
    while nodes[c].op == "not":
        c, negate = nodes[c].children[0], not negate
    return c, negate


_LIBRARY: dict[object, tuple[object, tuple[str, ...]]] | None = None  # method -> (value pattern, its variables)


def _library_definitions() -> dict[object, tuple[object, tuple[str, ...]]]:
    """The ``java.lang`` axioms that define a static library method: ``rho_value(invoke.static[m](?s, ?x..))``
    rewritten to a pattern of its arguments, for the methods whose heap after the call is also the heap before
    (``rho_sigma(invoke.static[m](?s, ..)) => ?s``). Read once from the bundled ``java-lang.ax``: one table of
    library meanings, the axioms'."""
    global _LIBRARY
    if _LIBRARY is None:
        from ..egraph.pattern import AttrLit, PNode, PVar
        from ..rules.library import axiom_files, default_axiom_dir, parse_axiom_files
        values: dict[object, tuple[object, tuple[str, ...]]] = {}
        heaps: set[object] = set()
        files = [f for f in axiom_files(default_axiom_dir()) if f.name == "java-lang.ax"]
        for ast in (r for af in parse_axiom_files(files) for r in af.rules):
            lhs = ast.lhs
            if ast.group != "java.lang" or ast.conds or not isinstance(lhs, PNode) or len(lhs.children) != 1:
                continue
            call = lhs.children[0]
            if not (isinstance(call, PNode) and call.op == "invoke.static" and isinstance(call.attr, AttrLit)
                    and all(isinstance(c, PVar) for c in call.children)):
                continue
            names = tuple(c.name for c in call.children if isinstance(c, PVar))  # all are (checked above)
            if len(set(names)) != len(names):
                continue
            if lhs.op == "rho_value":
                values[call.attr.value] = (ast.rhs, names)
            elif lhs.op == "rho_sigma" and ast.rhs == PVar(names[0]):
                heaps.add(call.attr.value)
        _LIBRARY = {m: v for m, v in values.items() if m in heaps}
    return _LIBRARY


def expand_library_calls(peg: PEG) -> PEG:
    """``peg`` with every call of a library method :func:`_library_definitions` knows replaced by the method's
    definition (its value) and the heap before the call (its heap), when nothing else reads the call's outcome
    (no handler in a try region tests it); the input itself when there is none."""
    defs = _library_definitions()
    nodes = list(peg.nodes)
    readers: dict[int, set[str]] = {}
    for n in nodes:
        for c in n.children:
            readers.setdefault(c, set()).add(n.op)
    calls = [i for i, n in enumerate(nodes) if n.op == "invoke.static" and n.attr in defs
             and readers.get(i, set()) <= {"rho_value", "rho_sigma"}]
    if not calls:
        return peg
    from ..egraph.pattern import AttrLit, PNode, PVar
    alias: dict[int, int] = {}

    def build(p: object, env: dict[str, int]) -> int:
        if isinstance(p, PVar):
            return env[p.name]
        assert isinstance(p, PNode) and isinstance(p.op, str)
        kids = tuple(build(c, env) for c in p.children)
        nodes.append(Node(p.op, p.attr.value if isinstance(p.attr, AttrLit) else None, kids))
        return len(nodes) - 1

    for call in calls:
        rhs, names = defs[nodes[call].attr]
        env = dict(zip(names, nodes[call].children))
        for i, n in enumerate(peg.nodes):
            if call in n.children and n.op == "rho_value":
                v = build(rhs, env)
                nodes[i] = nodes[v]  # the projection's node becomes the definition's root
            elif call in n.children and n.op == "rho_sigma":
                alias[i] = nodes[call].children[0]

    return rebuilt_peg(peg, nodes, alias)


#: effects that change nothing a field read sees (reads, divisor checks): a loop with only these on its heap
#: reads the same field values at every iteration
_READ_ONLY = frozenset({"getfield", "arraylength", "aload", "check.zero.i", "check.zero.l"})


def hoist_loop_lengths(peg: PEG) -> PEG:
    """``peg`` with each loop heap ``T = theta_l(S, N)`` whose only reader is ``E = arraylength(T, a)`` or
    ``E = getfield[f](T, a)``, ``a`` not varying in loop ``l`` and ``E``'s outcome read only by its value and
    heap, turned into ``theta_l(S', N)`` with ``S' = rho_sigma(E0)``, ``E0`` the same read on ``S``: the read
    done once before the loop, ``rho_value(E0)`` wherever ``E``'s value was read, and ``E``'s heap the new theta
    itself; repeated while some loop begins so (``i < this.items.length`` reads a field, then a length).
    Exact: at iteration 0 both read on ``S`` (the same exception if ``a`` is null); at a later iteration that
    read succeeded, so ``a`` (the same reference: it does not vary) is not null and the read cannot throw and
    leaves the heap as it was; an array's length is final, and a field read sees the value read first when
    every effect of the loop is a read (:data:`_READ_ONLY`; otherwise fields are not hoisted). The input itself
    when there is no such loop."""
    out = peg
    for _ in range(16):  # each round hoists the first read of each loop; a bound against a cycle of rewrites
        got = _hoist_first_reads(out)
        if got is out:
            break
        out = got
    return out


#: the reads a repeated read can be matched with (:func:`merge_repeated_reads`): same operator, attribute and
#: operands read the same thing on the same heap
_KEYED_READS = frozenset({"getfield", "aload", "arraylength"})
#: how far back along a heap chain a read looks for its earlier copy (as rules/conditions.read_before)
_READ_LOOKBACK = 64


def merge_repeated_reads(peg: PEG) -> PEG:
    """``peg`` in which a read (``aload``, ``getfield``, ``arraylength``) made again on a heap that only reads
    and divisor checks (:data:`_READ_ONLY`) separate from the same read of the same operands is that earlier
    read: its value the earlier value, its heap the heap it was made on, its ``threw`` false. javac evaluates
    ``H[i][j] = H[i][j] - x`` as two reads of ``this.H`` and of the row ``H[i]``; ProGuard's ``dup2`` keeps the
    one row: the PEGs differ by the second reads, on the heap chain of every later effect. Operands are compared
    after the earlier reads are merged (the second ``this.H`` first, then the row read through it), to a fixed
    point. Exact, the heap axioms' ``get-over-get``, ``aload-over-aload``, ``get-after-same-get-heap``,
    ``aload-after-aload-heap`` and ``aload-accessed-nothrow`` composed: the heap the second read sees is the
    one the first left (the effects between change nothing when they complete, and a path through one that
    throws never reaches the second read), so it reads the same value; the first read succeeded, so the
    reference is not null and the index in bounds (an array's length never changes), and the second cannot
    throw. The input itself when no read repeats."""
    nodes = list(peg.nodes)
    proj: dict[tuple[str, int], int] = {}
    for i, n in enumerate(nodes):
        if OPS[n.op].role is Role.PROJECTION:
            proj[(n.op, n.children[0])] = i
    alias: dict[int, int] = {}
    merged: set[int] = set()
    false_node: list[int] = []

    def res(x: int) -> int:
        while x in alias:
            x = alias[x]
        return x

    def projection(op: str, e: int) -> int:
        got = proj.get((op, e))
        if got is None:
            nodes.append(Node(op, None, (e,)))
            got = proj[(op, e)] = len(nodes) - 1
        return got

    def key(e: int) -> tuple:
        n = nodes[e]
        return n.op, n.attr, tuple(res(c) for c in n.children[1:])

    def earlier(e: int) -> int | None:
        want = key(e)
        s = res(nodes[e].children[0])
        for _ in range(_READ_LOOKBACK):
            sn = nodes[s]
            if sn.op != "rho_sigma":
                return None
            f = sn.children[0]
            fn = nodes[f]
            if fn.op not in _READ_ONLY:
                return None
            if fn.op in _KEYED_READS and key(f) == want:
                return f
            s = res(fn.children[0])
        return None

    reads = [i for i, n in enumerate(peg.nodes) if n.op in _KEYED_READS]
    for _ in range(16):  # each round can expose more (a row read through a merged field read)
        more = False
        for e in reads:
            if e in merged:
                continue
            f = earlier(e)
            if f is None:
                continue
            merged.add(e)
            more = True
            for op, to in (("rho_value", lambda: projection("rho_value", f)),
                           ("rho_sigma", lambda: nodes[e].children[0])):
                r = proj.get((op, e))
                if r is not None:
                    alias[r] = to()
            r = proj.get(("threw", e))
            if r is not None:
                if not false_node:
                    nodes.append(Node("const.b", False, ()))
                    false_node.append(len(nodes) - 1)
                alias[r] = false_node[0]
        if not more:
            break
    if not alias:
        return peg
    return rebuilt_peg(peg, nodes, alias)


def accesses_of_this(peg: PEG) -> PEG:
    """``peg`` in which a field access of ``this`` (``getfield``/``putfield`` on parameter 0 of an instance
    method) does not throw (its ``threw`` false) and a field read of ``this`` leaves the heap as it was (its heap
    the heap it was made on). javac keeps such accesses inside try ranges and ProGuard shrinks the ranges past
    them, so javac's PEG tests whether each threw and dispatches to the handler, ProGuard's does not (jsoup's
    ``W3CDom$W3CBuilder.head``). Exact, the axioms ``get-nonnull-nothrow``, ``put-nonnull-nothrow`` and
    ``get-nonnull-heap`` with ``this``, which is never null (JVMS 4.10.1.9: the receiver of an instance method
    is an initialized or uninitialized object, never null). The input itself when there is no such access."""
    if peg.is_static:
        return peg
    this = [i for i, n in enumerate(peg.nodes) if n.op == "param" and n.attr == 0]
    if not this:
        return peg
    nodes = list(peg.nodes)
    alias: dict[int, int] = {}
    false_node = -1
    for i, n in enumerate(peg.nodes):
        if OPS[n.op].role is not Role.PROJECTION or n.op not in ("threw", "rho_sigma"):
            continue
        e = peg.nodes[n.children[0]]
        if e.op not in ("getfield", "putfield") or e.children[1] != this[0]:
            continue
        if n.op == "threw":
            if false_node < 0:
                nodes.append(Node("const.b", False, ()))
                false_node = len(nodes) - 1
            alias[i] = false_node
        elif e.op == "getfield":
            alias[i] = e.children[0]
    if not alias:
        return peg
    return rebuilt_peg(peg, nodes, alias)


def trivial_forms(peg: PEG) -> PEG:
    """``peg`` with the choices that are no choice made: ``eval_l(x, p)`` of a value ``x`` that does not vary
    in loop ``l`` is ``x`` (the axiom ``eval-invariant``; a heap keeps its ``eval``: a loop's non-termination
    and exceptions are on its heap); ``phi(c, x, x)`` is ``x`` (``phi-same``); a phi of a constant condition is
    the arm it selects (``phi-true``, ``phi-false``: the ``threw`` of an access that cannot throw, made false by
    :func:`merge_repeated_reads` and :func:`accesses_of_this`); and so a theta whose next value then is itself
    is its initial value (minimize). Also ``x - k`` of an int or long constant
    ``k`` is ``x + (-k)`` (two's complement: ``-k`` wraps exactly as the subtraction does, ``MIN_VALUE``
    included), the form of ``iinc`` and of ProGuard's ``iadd`` of a negated constant; and a commutative operator
    (``OpSpec.commutative``: ``+``, ``*``, ``&``, ``|``, ``^``, ``==``; floating point too, where IEEE 754 makes
    ``+`` and ``*`` commutative, NaN included) with a constant and a non-constant operand has the constant second
    (javac's ``-0.4375 * s`` against ProGuard's ``s * -0.4375``). The PEG builder threads
    a variable no inner loop writes through each inner loop's exit as ``eval`` of the outer theta (javac's
    ``low``, a local that stays 0 in JAMA's ``hqr2``: ``theta_1(0, eval_2(theta_1, pass_2))``), and through a
    branch that does not write it as a phi of the same value twice, where the other side's constant (ProGuard
    folded ``low``) has no loop at all. The input itself when there is nothing to do."""
    out = peg
    for _ in range(8):  # dropping an eval can make a theta constant, which makes an outer eval invariant
        var = out.variance()
        nodes = list(out.nodes)
        alias: dict[int, int] = {}
        for i, n in enumerate(out.nodes):
            if n.op == "eval" and n.int_attr() not in var[n.children[0]] and not poly_sigma(out, i) \
                    and OPS[out.nodes[n.children[0]].op].output not in (T.SIGMA, T.OUTCOME, T.RESULT):
                alias[i] = n.children[0]
            elif n.op == "phi" and n.children[1] == n.children[2]:
                alias[i] = n.children[1]
            elif n.op == "phi" and out.nodes[n.children[0]].op == "const.b":
                alias[i] = n.children[1] if out.nodes[n.children[0]].attr else n.children[2]
            elif n.op in ("sub.i", "sub.l") and out.nodes[n.children[1]].op == "const." + n.op[-1]:
                k = out.nodes[n.children[1]].int_attr()
                bits = 32 if n.op == "sub.i" else 64
                neg = (-k + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))
                nodes.append(Node("const." + n.op[-1], neg, ()))
                nodes[i] = Node("add." + n.op[-1], None, (n.children[0], len(nodes) - 1))
            elif OPS[n.op].commutative and OPS[out.nodes[n.children[0]].op].role is Role.CONST \
                    and OPS[out.nodes[n.children[1]].op].role is not Role.CONST:
                nodes[i] = Node(n.op, n.attr, n.children[::-1])
        if not alias and len(nodes) == len(out.nodes):
            break
        out = rebuilt_peg(out, nodes, alias)
    return out


def _reads_only(peg: PEG, variance: list[frozenset[int]], loop: object) -> bool:
    """Whether every effect that varies in ``loop`` (its own and its inner loops') is a read."""
    return not any(loop in variance[i] and n.op in EFFECTS and n.op not in _READ_ONLY
                   for i, n in enumerate(peg.nodes))


def _read_this_once(peg: PEG, nodes: list[Node], users: dict[int, list[int]], variance: list[frozenset[int]],
                    t: int, this: int, alias: dict[int, int]) -> None:
    """A read of a field of ``this`` (never null: it cannot throw and leaves the heap as it was) right on loop
    heap ``t`` of a loop that only reads: its heap is ``t`` itself, and its value the field's value on the loop's
    entry heap (nothing in the loop writes it), read off the heap chain."""
    loop = peg.nodes[t].attr
    for e in users.get(t, []):
        read = nodes[e]
        if read.op != "getfield" or read.children != (t, this):
            continue
        readers = users.get(e, [])
        if not readers or any(nodes[r].op not in ("rho_value", "rho_sigma") or r in alias for r in readers):
            continue
        if not _reads_only(peg, variance, loop):
            return
        nodes.append(Node("getfield", read.attr, (peg.nodes[t].children[0], this)))
        nodes.append(Node("rho_value", None, (len(nodes) - 1,)))
        for r in readers:
            alias[r] = t if nodes[r].op == "rho_sigma" else len(nodes) - 1


def _hoist_first_reads(peg: PEG) -> PEG:
    """One round of :func:`hoist_loop_lengths`: the first read of each loop (and :func:`_read_this_once`)."""
    nodes = list(peg.nodes)
    users: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        for c in n.children:
            users.setdefault(c, []).append(i)
    variance = None
    alias: dict[int, int] = {}
    this = next((i for i, n in enumerate(nodes) if n.op == "param" and n.attr == 0), None) \
        if not peg.is_static else None
    for t, node in enumerate(peg.nodes):
        if node.op == "theta" and this is not None:
            variance = variance if variance is not None else peg.variance()
            _read_this_once(peg, nodes, users, variance, t, this, alias)
        if node.op != "theta" or len(users.get(t, [])) != 1:
            continue
        e = users[t][0]
        first = nodes[e]
        if first.op not in ("arraylength", "getfield") or first.children[0] != t:
            continue
        readers = users.get(e, [])
        if not readers or any(nodes[r].op not in ("rho_value", "rho_sigma") or r in alias for r in readers):
            continue  # read by a handler, or taken off the chain already (a field of this)
        if variance is None:
            variance = peg.variance()
        a = first.children[1]
        if node.attr in variance[a]:
            continue
        if first.op == "getfield" and not _reads_only(peg, variance, node.attr):
            continue  # the loop may write the field
        init, nxt = node.children
        nodes.append(Node(first.op, first.attr, (init, a)))
        read = len(nodes) - 1
        nodes.append(Node("rho_sigma", None, (read,)))
        nodes.append(Node("rho_value", None, (read,)))
        for r in readers:
            alias[r] = t if nodes[r].op == "rho_sigma" else len(nodes) - 1
        nodes[t] = Node("theta", node.attr, (len(nodes) - 2, nxt))
    if not alias:
        return peg

    return rebuilt_peg(peg, nodes, alias)


def simplify_known_conditions(peg: PEG, known: frozenset[tuple[int, bool]] = _NONE,
                              deadline: float = math.inf) -> PEG:
    """A PEG with the same meaning in which no phi re-tests a condition its enclosing arm already decided.
    ``known``: (condition node, value) pairs assumed at the root (a case of :func:`equal_by_cases`). Past
    ``deadline`` (:func:`~peggy_jvm.egraph.clock.clock`) the input is returned as it is.

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

    related: dict[int, frozenset[Term]] = {}  # node -> the terms the comparisons phis below it test relate

    def terms(n: int) -> frozenset[Term]:
        if n not in related:
            related[n] = frozenset().union(*(_terms(nodes, t) for t in tests(n)))
        return related[n]

    def key(n: int, ctx: frozenset) -> tuple[int, frozenset]:
        # only what a phi below can use (its condition, or a comparison of a term one below compares, which may
        # imply it): the copies of a subtree that tests nothing known are one copy
        if not ctx or nodes[n].op in barrier:
            return (n, _NONE)
        below = tests(n)
        return (n, frozenset(x for x in ctx if x[0] in below or (_terms(nodes, x[0]) & terms(n))))

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
            if steps & 1023 == 0 and clock() > deadline:
                raise _TooBig()
            n, ctx = stack[-1]
            k = key(n, ctx)
            if k in memo:
                stack.pop()
                continue
            node = nodes[n]
            if node.op == "theta":
                memo[k] = out.new_theta(node.int_attr())
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
                arm = None if v is not None else _tie_arm(nodes, node, ctx)
                if v is not None or arm is not None:  # the arm is decided: this phi is that arm
                    if arm is None:
                        arm = node.children[1] if v else node.children[2]
                    target = key(arm, ctx)
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


def settle_exit_phis(peg: PEG) -> PEG:
    """A PEG with the same meaning in which a loop's phis on its own exit condition pick their arm.

    Let ``P = pass_l(E)`` be the only pass that observes a theta ``T = theta_l(i, phi(c, a, b))`` (every eval of
    loop ``l`` whose value depends on ``T`` is taken at ``P``), and let ``c`` being true imply ``E`` (the loop
    exits on that iteration). Before ``P`` the condition ``c`` is false, so ``T``'s next value is ``b`` at every
    iteration up to ``P``; after ``P`` nothing is observed. So ``T`` may be ``theta_l(i, b)``. Likewise
    ``eval_l(phi(c, a, b), P)`` is ``eval_l(a, P)`` when ``E`` implies ``c``: at ``P`` the loop exits. javac's
    ``do { ok = f(); if (!ok) g(); } while (!ok)`` carries such a phi on its heap, code that leaves the loop
    where ``f`` succeeds does not; equality saturation cannot make this rewrite, since it holds only at ``P``
    while a theta's e-class is shared by every loop that computes the same sequence.

    Only the implications this module can read off the graph count: the same condition (negations looked
    through), complementary int comparisons of the same operands (``eq``/``ne``, ``lt``/``ge`` in either
    order), constants, and ``and``/``or``/``phi``/``guard`` of those."""
    nodes = peg.nodes
    exit_of = {n: _guarded(nodes, node.children[0]) for n, node in enumerate(nodes) if node.op == "pass"}
    if not exit_of:
        return peg
    parents: list[list[tuple[int, int]]] = [[] for _ in nodes]
    for n, node in enumerate(nodes):
        for i, c in enumerate(node.children):
            parents[c].append((n, i))
    new = list(nodes)
    changed = False
    for n, node in enumerate(nodes):
        if node.op == "theta":
            p = _only_pass(nodes, parents, n, node.attr, peg.root)
            if p is None:
                continue
            nxt = _settled_arm(nodes, node.children[1], exit_of[p], False)  # before the exit: not exiting
            if nxt != node.children[1]:
                new[n], changed = Node("theta", node.attr, (node.children[0], nxt)), True
        elif node.op == "eval" and nodes[node.children[1]].op == "pass":
            x, p = node.children
            x = _settled_arm(nodes, x, exit_of[p], True)  # the value at the exit
            if x != node.children[0]:
                new[n], changed = Node("eval", node.attr, (x, p)), True
    if not changed:
        return peg
    out = PEG(name=peg.name, class_name=peg.class_name, is_static=peg.is_static, synchronized=peg.synchronized,
              nodes=new, root=peg.root, param_types=peg.param_types)
    out.seal()
    return minimize(out)


def _settled_arm(nodes: list[Node], x: int, exit_cond: int, exiting: bool) -> int:
    """``x`` with its phis picked where ``exit_cond`` is ``exiting`` decides their conditions: ``c`` is true
    there when ``c`` false would make the exit condition the other value, and false likewise."""
    while nodes[x].op == "phi":
        c, a, b = nodes[x].children
        if _holds(nodes, c, False, exit_cond, not exiting, 0):
            x = a
        elif _holds(nodes, c, True, exit_cond, not exiting, 0):
            x = b
        else:
            break
    return x


def _guarded(nodes: list[Node], c: int) -> int:
    """A pass's condition without its guards (``guard(s, c)`` is ``c`` after ``s``)."""
    while nodes[c].op == "guard":
        c = nodes[c].children[1]
    return c


def _only_pass(nodes: list[Node], parents: list[list[tuple[int, int]]], theta: int, loop: object,
               root: int) -> int | None:
    """The one pass of loop ``loop`` through which ``theta`` is observed (every pass depending on it, and the
    pass of every eval of the loop taking a value depending on it), or None."""
    found: set[int] = set()
    seen, work = {theta}, [theta]
    while work:
        n = work.pop()
        if n == root:
            return None  # a value of the loop reaching the result without an eval: not a loop PEG
        for q, i in parents[n]:
            op, attr = nodes[q].op, nodes[q].attr
            if op in ("shift", "peel"):
                return None  # a later iteration's value, or one without the first: observed past the exit
            if op == "pass" and attr == loop:
                found.add(q)
            elif op == "eval" and attr == loop and i == 0:
                found.add(nodes[q].children[1])
            elif q not in seen:
                seen.add(q)
                work.append(q)
            if len(found) > 1:
                return None
    (p,) = found or (None,)
    return p if p is not None and nodes[p].op == "pass" else None


_FLIPPED = {"gt.i": "lt.i", "ge.i": "le.i"}
_COMPLEMENT = {"eq.i": "ne.i", "ne.i": "eq.i", "lt.i": "le.i", "le.i": "lt.i", "eq.a": "ne.a", "ne.a": "eq.a"}


def _comparison(node: Node) -> tuple[str, int, int] | None:
    """An int or reference comparison as (eq/ne/lt/le, left, right), gt and ge turned around."""
    if node.op in _FLIPPED:
        return _FLIPPED[node.op], node.children[1], node.children[0]
    if node.op in _COMPLEMENT:
        return node.op, node.children[0], node.children[1]
    return None


def _decides(nodes: list[Node], c: int, v: bool, d: int) -> bool | None:
    """The value of condition ``d`` wherever condition ``c`` is ``v``, when the graph shows it."""
    bc, nc = _cond(nodes, c)
    bd, nd = _cond(nodes, d)
    if bc == bd:
        return (v ^ nc) ^ nd
    x, y = _comparison(nodes[bc]), _comparison(nodes[bd])
    if x is None or y is None:
        return None
    value = v != nc  # of the comparison bc
    same = (x[0], x[1], x[2]) == y or (x[0] in ("eq.i", "ne.i", "eq.a", "ne.a") and (x[0], x[2], x[1]) == y)
    # the complement of lt(a, b) is le(b, a); of eq(a, b), ne(a, b) or ne(b, a)
    opposite = _COMPLEMENT[x[0]]
    if x[0] in ("lt.i", "le.i"):
        complement = (opposite, x[2], x[1]) == y
    else:
        complement = (opposite, x[1], x[2]) == y or (opposite, x[2], x[1]) == y
    if same:
        return value != nd
    if complement:
        return (not value) != nd
    return None


def _holds(nodes: list[Node], c: int, v: bool, x: int, want: bool, depth: int) -> bool:
    """Wherever condition ``c`` is ``v``, condition ``x`` is ``want`` (as far as the graph shows)."""
    return _value(nodes, c, v, x, depth) is want


def _value(nodes: list[Node], c: int, v: bool, x: int, depth: int) -> object:
    """The constant (bool or int) node ``x`` is wherever condition ``c`` is ``v``, or None when the graph does not
    show one: constants, conditions :func:`_decides` settles, phis whose condition is settled or whose arms
    agree, and int or bool operators of such values (a flag kept in an int local and compared with 0)."""
    if depth > 32:
        return None
    node = nodes[x]
    op = node.op
    if op == "const.b":
        return bool(node.attr)
    if op == "const.i":
        return node.attr
    if op == "guard":
        return _value(nodes, c, v, node.children[1], depth + 1)
    if op == "phi":
        d, a, b = node.children
        k = _value(nodes, c, v, d, depth + 1)
        if k is not None:
            return _value(nodes, c, v, a if k else b, depth + 1)
        va = _value(nodes, c, v, a, depth + 1)
        return va if va is not None and va == _value(nodes, c, v, b, depth + 1) else None
    k = _decides(nodes, c, v, x)
    if k is not None:
        return k
    spec = OPS.get(op)
    if spec is None or spec.role is not Role.PURE or spec.fn is None or op in _NOT_FOLDED or not node.children \
            or not all(t in (T.INT, T.BOOL) for t in spec.inputs) or spec.output not in (T.INT, T.BOOL):
        return None
    args = []
    for child in node.children:
        arg = _value(nodes, c, v, child, depth + 1)
        if arg is None:
            return None
        args.append(arg)
    out = spec.fn(*args)
    return bool(out) if spec.output is T.BOOL else out


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


def _union(*pegs: PEG) -> PEG:
    nodes: list[Node] = []
    roots: list[int] = []
    for g in pegs:
        shift = len(nodes)
        nodes.extend(Node(n.op, n.attr, tuple(c + shift for c in n.children)) for n in g.nodes)
        roots.append(g.root + shift)
    nodes.append(Node(PAIR, None, tuple(roots)))
    a = pegs[0]
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


def joint_pegs(pegs: list[PEG]) -> tuple[PEG, list[int]]:
    """:func:`joint_peg` of any number of PEGs: the union and the nodes of their roots, in order."""
    u = _union(*pegs)
    return u, list(u.nodes[u.root].children)


def pair_of(joint: PEG, x: int, y: int) -> PEG:
    """Two of :func:`joint_pegs`' roots as a :func:`joint_peg` of their own, without minimizing again (the nodes
    are shared, the other roots left unreached)."""
    out = PEG(name=joint.name, class_name=joint.class_name, is_static=joint.is_static,
              synchronized=joint.synchronized, nodes=joint.nodes + [Node(PAIR, None, (x, y))],
              root=len(joint.nodes), param_types=joint.param_types)
    out.seal()
    return out


def _met(u: PEG) -> bool:
    x, y = u.nodes[u.root].children[:2]
    return x == y


def _first_phi(u: PEG, start: int, barrier: frozenset[str]) -> int | None:
    """The condition of the first phi met from ``start`` (breadth first, not ``start`` itself, not below
    ``barrier`` operators; of the root's children only the two roots, not the facts of :func:`_with_fact`)."""
    seen = {start}
    queue = [start]
    for n in queue:
        node = u.nodes[n]
        if node.op == "phi" and n != start:
            return _cond(u.nodes, node.children[0])[0]
        if node.op in barrier:
            continue
        for c in node.children[:2] if node.op == PAIR else node.children:
            if c not in seen:
                seen.add(c)
                queue.append(c)
    return None


def _top_condition(u: PEG) -> int | None:
    """The condition to split on: that of the first phi met from the two roots (breadth first, not inside loops),
    or, when that condition is itself computed from phis (a flag set in each branch and tested after the join),
    the first condition those test, and so on: once it is known the flag folds to a constant, where a case of the
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


def _with_fact(u: PEG, c: int) -> PEG:
    """``u`` with condition ``c`` one more child of its root (after the two roots and the earlier facts): the
    conditions a case assumes travel with the PEG through simplification and minimizing, so that a case of a
    case still knows them (x <= 0, then x >= 0: x is 0)."""
    root = u.nodes[u.root]
    out = PEG(name=u.name, class_name=u.class_name, is_static=u.is_static, synchronized=u.synchronized,
              nodes=u.nodes + [Node(PAIR, None, root.children + (c,))], root=len(u.nodes),
              param_types=u.param_types)
    out.seal()
    return out


def _known_facts(u: PEG, values: tuple[bool, ...]) -> frozenset[tuple[int, bool]]:
    """The known conditions of a case: its facts (the root's children after the two roots) with their values."""
    facts = u.nodes[u.root].children[2:]
    return frozenset((_cond(u.nodes, f)[0], v != _cond(u.nodes, f)[1]) for f, v in zip(facts, values))


def equal_by_cases(joint: PEG, max_cases: int = 64, deadline: float = math.inf,
                   leaf: Callable[[PEG, frozenset[tuple[int, bool]], float], bool] | None = None) -> int | None:
    """How many cases it took to show the two roots of ``joint`` (:func:`joint_peg`) equal (0: bisimilar as they
    are), or None when not shown within ``max_cases`` simplified copies and ``deadline`` (a reading of
    :func:`~peggy_jvm.egraph.clock.clock`). See the module docstring. Each case knows the conditions of the cases it
    is in (kept as children of the root after the two roots, their values in ``values``), so comparisons they imply
    are decided too. ``leaf`` (the PEG of a case, its known conditions, the deadline) may still show a case no
    condition left splits (validate/finite.py: few values of a parameter, each computed)."""
    made = 0

    def split(u: PEG, values: tuple[bool, ...]) -> bool:
        nonlocal made
        if _met(u):
            return True
        c = _top_condition(u)
        if c is None:
            return leaf is not None and leaf(u, _known_facts(u, values), deadline)
        for value in (True, False):
            made += 1
            if made > max_cases or clock() > deadline:
                return False
            w = _with_fact(u, c)
            known = _known_facts(w, values + (value,))
            case = simplify_known_conditions(w, known, deadline)
            if case is w:  # unchanged: the condition decides nothing
                return leaf is not None and leaf(u, _known_facts(u, values), deadline)
            if not split(case, values + (value,)):
                return False
        return True

    return made if split(joint, ()) else None
