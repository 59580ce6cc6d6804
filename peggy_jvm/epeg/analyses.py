"""The Java analyses of an E-PEG: facts per e-class with Java semantics (each an egg-style
:class:`~peggy_jvm.egraph.analysis.Analysis`, passed to the generic e-graph by :class:`~peggy_jvm.epeg.graph.EPeg`).

What this module owns
    The three analyses every E-PEG has, and the constant keys rules and extraction share:

    * :class:`ConstantAnalysis` (``const``): the Java constant a class is known to equal, as the key
      ``(const op, attribute)`` of the constant node that denotes it (``("const.i", 5)``, ``("const.d", raw
      bits)``, ``("const.b", True)``). Pure operators are folded with their semantics function ``OPS[op].fn``
      (never re-implemented here); float and double constants are raw bits, converted with
      :mod:`peggy_jvm.semantics`' bit views; a folded NaN gets the canonical NaN bits (Java does not promise a
      payload). Integer division and remainder by zero are never folded (in our PEGs ``div.i`` only ever sees a
      checked divisor; a zero there is unreachable, not a value). ``phi`` with a constant condition, and
      ``theta``/``eval`` of constants, fold too. Two different constants merged is an unsound rule: the
      conflict is recorded in :attr:`ConstantAnalysis.conflicts` (tests require it to stay empty).
    * :class:`VarianceAnalysis` (``variance``): an int bit mask of the loop depths the class MAY vary in (bit
      ``l`` set: not known to be invariant in ``l``), Tate's invariant_l per class. A node's mask follows
      :meth:`PEG.variance <peggy_jvm.peg.graph.PEG.variance>` (theta_l adds ``l``; eval_l/pass_l remove ``l``
      from their sequence; others union their children); a class's mask is the INTERSECTION of its nodes'
      masks (every node denotes the same value, so any node that is invariant in ``l`` proves the class is).
    * :class:`SortAnalysis` (``sort``): the class's PEG type (:class:`~peggy_jvm.peg.ops.T`), ``T.ANY`` for a
      value of unknown type that is certainly not the heap (``rho_value``), None when unknown. Rules use it to
      tell heap values (sigma, outcomes) from ordinary values.

Why the variance analysis is sound with cycles (the choice documented for rule conditions)
    A least fixpoint of the intersection equations would be unsound in an e-graph: a class ``{theta_l(a, b),
    add.i(self, 0)}`` would make itself invariant through the node that refers to itself. Instead the facts are
    maintained by induction over TIME, egg-style (:mod:`peggy_jvm.egraph.analysis`): a new node's mask is computed
    from its children's CURRENT masks (each already sound), a union intersects two sound masks, and when a child's
    mask shrinks its parents are re-made and intersected again; every step keeps every mask a sound
    over-approximation, so the masks only shrink and stay sound. A class that exists before its nodes (a theta
    imported from a PEG closes a cycle) starts at "varies everywhere" (``unknown``, all bits set).
    :meth:`EPeg.add_peg <peggy_jvm.epeg.graph.EPeg.add_peg>` then seeds
    every imported class with the PEG's own least-fixpoint variance, which is exact for a well-formed PEG
    (every cycle through a theta's second child, Tate Def 6.1) -- without the seed, loop-carried values would
    vary in every depth. Hence "bit ``l`` clear" means DEFINITELY invariant in ``l``, which is what rule
    conditions (``invariant(?x, $l)``) need.

Inputs / outputs
    Each analysis reads its children's facts through the e-graph it is given (:class:`JavaFacts`: ``const``,
    ``variance``, ``sort``, which :class:`~peggy_jvm.epeg.graph.EPeg` provides); operator meanings come from
    :data:`peggy_jvm.peg.ops.OPS` and :mod:`peggy_jvm.semantics`, never re-implemented here.

Invariants (after :meth:`EGraph.rebuild <peggy_jvm.egraph.egraph.EGraph.rebuild>`)
    For every class ``C`` and node ``n`` in ``C``: ``merge(data(C), make(n)) == data(C)`` for every analysis.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Protocol

from .. import semantics as S
from ..egraph.analysis import Analysis
from ..egraph.types import ENode
from ..peg.ops import OPS, POLYMORPHIC, Role, T

__all__ = ["JavaFacts", "ConstantAnalysis", "VarianceAnalysis", "SortAnalysis",
           "const_value", "const_key", "fold_keys", "CONST_OPS", "ALL_LOOPS", "LINEAR_SORTS"]

ALL_LOOPS = -1  # the variance mask "may vary in every loop depth" (all bits set)
LINEAR_SORTS = frozenset({T.SIGMA, T.OUTCOME, T.RESULT})
CONST_OPS = frozenset({"const.i", "const.l", "const.f", "const.d", "const.b"})

_F_NAN = 0x7FC00000
_D_NAN = 0x7FF8000000000000


class JavaFacts(Protocol):
    """What the analyses read of the e-graph: their children's facts (the accessors of ``EPeg``)."""

    def const(self, cid: int) -> tuple[str, Any] | None: ...

    def variance(self, cid: int) -> int: ...

    def sort(self, cid: int) -> T | None: ...


# -- constants ------------------------------------------------------------------------------------------------
def _canon_key(op: str, attr: Any) -> tuple[str, Any]:
    """The analysis key of a constant node: NaNs of any payload share one key (the payload is not semantics)."""
    if op == "const.f":
        if (attr & 0x7F800000) == 0x7F800000 and (attr & 0x007FFFFF):
            return op, _F_NAN
    elif op == "const.d":
        if (attr & 0x7FF0000000000000) == 0x7FF0000000000000 and (attr & 0x000FFFFFFFFFFFFF):
            return op, _D_NAN
    elif op == "const.b":
        return op, bool(attr)
    return op, attr


def const_value(key: tuple[str, Any]) -> Any:
    """The Python value (as :mod:`peggy_jvm.semantics` represents it) of a constant key."""
    op, attr = key
    if op == "const.f":
        return S.int_bits_to_float(attr)
    if op == "const.d":
        return S.long_bits_to_double(attr)
    return attr


_KEY_OF_TYPE: dict[T, Callable[[Any], tuple[str, Any]]] = {
    T.INT: lambda v: ("const.i", v),
    T.LONG: lambda v: ("const.l", v),
    T.FLOAT: lambda v: ("const.f", _F_NAN if v != v else S.float_to_raw_int_bits(v)),
    T.DOUBLE: lambda v: ("const.d", _D_NAN if v != v else S.double_to_raw_long_bits(v)),
    T.BOOL: lambda v: ("const.b", bool(v)),
}
_CONST_OF_TYPE = {T.INT: "const.i", T.LONG: "const.l", T.FLOAT: "const.f", T.DOUBLE: "const.d", T.BOOL: "const.b"}


def const_key(t: T, value: Any) -> tuple[str, Any] | None:
    """The constant key of a Python ``value`` of PEG type ``t`` (None for types without constants)."""
    f = _KEY_OF_TYPE.get(t)
    return f(value) if f is not None else None


def _foldable() -> dict[str, tuple[Callable, tuple[str, ...], Callable]]:
    """op -> (semantics function, the constant op each input must be, key maker of the output)."""
    out = {}
    for name, spec in OPS.items():
        if spec.role is not Role.PURE or spec.fn is None or name == "succ":
            continue  # succ/zero are iteration indexes, not Java ints
        ins = tuple(_CONST_OF_TYPE.get(t, "") for t in spec.inputs)
        if "" in ins or spec.output not in _KEY_OF_TYPE:
            continue
        out[name] = (spec.fn, ins, _KEY_OF_TYPE[spec.output])
    return out


_DIVISIONS = frozenset(S.THROWING)
_FOLDABLE = _foldable()


def fold_keys(op: str, keys: Iterable[tuple[str, Any] | None]) -> tuple[str, Any] | None:
    """The constant key of pure ``op`` applied to constant inputs (their keys), or None when ``op`` does not fold
    or an input is not a constant of its type. A division by zero is never folded: our PEGs divide only by a
    checked divisor, so a zero there is unreachable, not a value (semantics would raise). Shared by this module's
    :class:`ConstantAnalysis` and the optimistic analysis (:mod:`peggy_jvm.rules.optimistic`)."""
    f = _FOLDABLE.get(op)
    if f is None:
        return None
    fn, ins, mk = f
    args = []
    for k, want in zip(keys, ins):
        if k is None or k[0] != want:
            return None
        args.append(const_value(k))
    if op in _DIVISIONS and args[1] == 0:
        return None
    return mk(fn(*args))


class ConstantAnalysis(Analysis[JavaFacts, "tuple[str, Any] | None"]):
    name = "const"
    unknown = None

    def __init__(self) -> None:
        super().__init__()
        self.fold = _FOLDABLE

    def make(self, eg: JavaFacts, node: ENode) -> tuple[str, Any] | None:
        op, attr, ch = node
        if op in CONST_OPS:
            return _canon_key(op, attr)
        if not ch:
            return None
        const = eg.const
        if op in self.fold:
            return fold_keys(op, (const(c) for c in ch))  # lazily: the first non-constant input ends it
        if op == "phi":
            c = const(ch[0])
            if c is not None and c[0] == "const.b":
                return const(ch[1] if c[1] else ch[2])
            a = const(ch[1])
            return a if a is not None and a == const(ch[2]) else None
        if op == "theta":
            a = const(ch[0])
            return a if a is not None and a == const(ch[1]) else None
        if op == "eval":
            return const(ch[0])
        return None

    def merge(self, a: Any, b: Any) -> Any:
        if a is None:
            return b
        if b is None or a == b:
            return a
        self.conflicts.append((a, b))  # two different constants in one class: some rule is unsound
        return a


# -- loop variance --------------------------------------------------------------------------------------------
class VarianceAnalysis(Analysis[JavaFacts, int]):
    name = "variance"
    unknown = ALL_LOOPS

    def make(self, eg: JavaFacts, node: ENode) -> int:
        op, attr, ch = node
        if not ch:
            return 0
        var = eg.variance
        if op == "theta":
            return var(ch[0]) | var(ch[1]) | (1 << attr)
        if op == "eval":
            return (var(ch[0]) & ~(1 << attr)) | var(ch[1])
        if op == "pass":
            return var(ch[0]) & ~(1 << attr)
        if op == "shift" or op == "peel":
            return var(ch[0]) | (1 << attr)  # conservative: these are not folded or matched by any rule today
        m = 0
        for c in ch:
            m |= var(c)
        return m

    def merge(self, a: int, b: int) -> int:
        return a & b


# -- sorts ----------------------------------------------------------------------------------------------------
_POLY_SOURCES = {"phi": (1, 2), "theta": (0, 1), "eval": (0,), "shift": (0,), "peel": (0,)}


class SortAnalysis(Analysis[JavaFacts, "T | None"]):
    name = "sort"
    unknown = None

    def make(self, eg: JavaFacts, node: ENode) -> T | None:
        op = node[0]
        spec = OPS.get(op)
        if spec is None:
            return None
        if spec.output is not T.ANY:
            return spec.output
        if op in POLYMORPHIC:
            sort = eg.sort
            best = None
            for i in _POLY_SOURCES[op]:
                s = sort(node[2][i])
                if s is not None and s is not T.ANY:
                    return s
                best = best or s
            return best
        if op == "rho_value":
            return T.ANY  # some value, never the heap
        return None  # param: seeded by add_peg from the PEG's parameter types

    def merge(self, a: T | None, b: T | None) -> T | None:
        if a is None or a is T.ANY:
            return b if b is not None else a
        if b is None or b is T.ANY or a is b:
            return a
        self.conflicts.append((a, b))
        return a
