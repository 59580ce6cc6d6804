"""The operator table: the one source of truth for every PEG operator.

What this module owns
    For every operator name that may label a PEG node (and so an e-node, an axiom pattern, an extraction
    variable and a reverted statement): its role, its input and output types, which inputs and outputs carry
    the heap sigma (linear), whether it may throw, its base cost and byte size, what its attribute holds, and for
    pure value operators the function of :mod:`peggy_jvm.semantics` that computes it. The builder, the
    evaluator, the well-formedness checks, the axioms, the extractor's cost model and the reverter all read
    :data:`OPS`; none of them keeps its own list.

The model (DESIGN section 3)
    * Values are typed ``int long float double ref`` plus ``bool`` (branch conditions), ``sigma`` (the heap),
      ``outcome`` (what an effect yields: a value and a sigma, or an exception and the sigma it was thrown in)
      and ``result`` (how the method ends: ``return`` or ``throw``). ``any`` marks the polymorphic PEG
      primitives (phi, theta, eval), whose type is their value inputs' type.
    * Every operation that reads or writes memory, allocates, synchronizes, calls, or may throw is an *effect*:
      input 0 is a sigma, the output an outcome read with ``rho_value`` and ``rho_sigma``. Both projections are
      strict in the exception: if the effect threw, they propagate it (the method ends with it), which is
      how exceptions thread through a method without handlers. Inside a try region the builder branches on
      ``threw`` and reads ``rho_exc`` / ``rho_esigma`` on the exceptional path.
    * Integer division and remainder are split in two: ``check.zero.i`` (an effect that throws
      ArithmeticException on zero and otherwise yields its operand) and the pure ``div.i`` applied to the
      checked divisor. A divisor proved non-zero then needs no effect at all, and ``div.i`` is the same
      operator in the IR, the PEG and :mod:`peggy_jvm.semantics`.
    * ``guard(sigma, c)`` is ``c`` evaluated after ``sigma``: a loop's break condition is guarded by the sigma
      its iteration ends with, so an exception inside the loop ends the loop (and the method) even when the
      condition does not read the heap.
    * Loops: ``theta``/``eval``/``pass``/``shift``/``peel`` carry the loop depth (from 1) as attribute.

Invariants
    * Names of pure value operators are exactly :data:`peggy_jvm.semantics.OPERATIONS`' names.
    * An effect's sigma is input 0, and it is its only linear input; ``rho_sigma``/``rho_esigma`` and the
      polymorphic primitives at sigma type are the only other nodes with a linear output.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable

from .. import semantics as S


class T(Enum):
    """PEG value types."""

    INT = "int"
    LONG = "long"
    FLOAT = "float"
    DOUBLE = "double"
    REF = "ref"
    BOOL = "bool"
    SIGMA = "sigma"
    OUTCOME = "outcome"
    RESULT = "result"
    UNIT = "unit"  # the value of a void call or a void return
    ANY = "any"  # polymorphic (phi, theta, eval); also a typed effect's value decided by its attribute


class Role(Enum):
    CONST = "const"  # a literal (attribute: the value)
    PARAM = "param"  # a method parameter (attribute: its index, receiver = 0)
    PURE = "pure"  # a total function of its inputs
    EFFECT = "effect"  # sigma in, outcome out
    PROJECTION = "projection"  # reads one part of an outcome
    CHOICE = "choice"  # phi
    LOOP = "loop"  # theta, eval, pass, shift, peel
    EXIT = "exit"  # return, throw: the method's root


@dataclass(frozen=True, slots=True)
class OpSpec:
    name: str
    role: Role
    inputs: tuple[T, ...]  # the fixed inputs
    output: T
    variadic: T | None = None  # type of the extra inputs after the fixed ones (call arguments, array sizes)
    may_throw: bool = False
    cost: int = 1
    #: bytes the lowering typically emits for it (``--goal size``'s extraction cost, no loop factor): the
    #: instruction itself; its inputs' loads are their own nodes' (``param`` = a local load)
    size: int = 1
    attr: str | None = None  # what the attribute holds: value, index, field, method, class, elem, loop, ...
    fn: Callable | None = field(default=None, compare=False)  # PURE value operators: the semantics function
    commutative: bool = False

    @property
    def linear_inputs(self) -> tuple[int, ...]:
        """Inputs that carry sigma by declaration (polymorphic primitives carry it when their type is sigma)."""
        return tuple(i for i, t in enumerate(self.inputs) if t is T.SIGMA)

    @property
    def linear_output(self) -> bool:
        return self.output in (T.SIGMA, T.OUTCOME, T.RESULT)

    def arity_ok(self, n: int) -> bool:
        return n == len(self.inputs) or (self.variadic is not None and n >= len(self.inputs))


OPS: dict[str, OpSpec] = {}


def _add(spec: OpSpec) -> None:
    assert spec.name not in OPS, spec.name
    OPS[spec.name] = spec


_PRIM = {"i": T.INT, "l": T.LONG, "f": T.FLOAT, "d": T.DOUBLE}

# -- constants and parameters ---------------------------------------------------------------------------------
for _s, _t in _PRIM.items():
    _add(OpSpec(f"const.{_s}", Role.CONST, (), _t, cost=1, size=2, attr="value"))  # float/double: raw bits (exact)
_add(OpSpec("const.a", Role.CONST, (), T.REF, cost=1, size=2, attr="value"))  # an ir.nodes.Const (null, String, class)
_add(OpSpec("const.b", Role.CONST, (), T.BOOL, cost=0, size=0, attr="value"))
_add(OpSpec("unit", Role.CONST, (), T.UNIT, cost=0, size=0))
_add(OpSpec("param", Role.PARAM, (), T.ANY, cost=0, attr="index"))
_add(OpSpec("sigma0", Role.PARAM, (), T.SIGMA, cost=0, size=0))  # the heap the method starts with

# -- pure value operators (names and functions from semantics.OPERATIONS) -------------------------------------
_COST = {"mul": 3, "div": 8, "rem": 8}
_COMMUTATIVE = {"add", "mul", "and", "or", "xor"}
_CONV = {"i": T.INT, "l": T.LONG, "f": T.FLOAT, "d": T.DOUBLE, "b": T.INT, "c": T.INT, "s": T.INT}
_ins: tuple[T, ...]
for _name, _fn in sorted(S.OPERATIONS.items()):
    if "." in _name:
        _base, _s = _name.split(".")
        _t = _PRIM[_s]
        if _base in ("cmp", "cmpl", "cmpg"):
            _ins, _out = (_t, _t), T.INT
        elif _base == "neg":
            _ins, _out = (_t,), _t
        elif _base in ("shl", "shr", "ushr"):
            _ins, _out = (_t, T.INT), _t
        else:
            _ins, _out = (_t, _t), _t
        _cost = _COST.get(_base, 1) * (2 if _s in "fd" else 1)
        _add(OpSpec(_name, Role.PURE, _ins, _out, cost=_cost, fn=_fn, commutative=_base in _COMMUTATIVE))
    else:  # conversions: i2l, d2f, i2b, ...
        _add(OpSpec(_name, Role.PURE, (_CONV[_name[0]],), _CONV[_name[2]], cost=1, fn=_fn))

# -- conditions (bool) ----------------------------------------------------------------------------------------
for _c, _fn in S.CONDITIONS.items():
    _add(OpSpec(f"{_c}.i", Role.PURE, (T.INT, T.INT), T.BOOL, cost=1, size=3, fn=_fn, commutative=_c in ("eq", "ne")))
_add(OpSpec("eq.a", Role.PURE, (T.REF, T.REF), T.BOOL, cost=1, size=3, commutative=True))
_add(OpSpec("ne.a", Role.PURE, (T.REF, T.REF), T.BOOL, cost=1, size=3, commutative=True))
_add(OpSpec("not", Role.PURE, (T.BOOL,), T.BOOL, cost=0, size=0, fn=lambda a: not a))
_add(OpSpec("and", Role.PURE, (T.BOOL, T.BOOL), T.BOOL, cost=1, size=3, fn=lambda a, b: a and b, commutative=True))
_add(OpSpec("or", Role.PURE, (T.BOOL, T.BOOL), T.BOOL, cost=1, size=3, fn=lambda a, b: a or b, commutative=True))
_add(OpSpec("instanceof", Role.PURE, (T.REF,), T.INT, cost=2, size=3, attr="class"))
_add(OpSpec("guard", Role.PURE, (T.SIGMA, T.BOOL), T.BOOL, cost=0, size=0))

# -- effects (sigma in, outcome out) ----------------------------------------------------------------------------
_add(OpSpec("check.zero.i", Role.EFFECT, (T.SIGMA, T.INT), T.OUTCOME, may_throw=True, cost=1, size=0))
_add(OpSpec("check.zero.l", Role.EFFECT, (T.SIGMA, T.LONG), T.OUTCOME, may_throw=True, cost=1, size=0))
_add(OpSpec("getfield", Role.EFFECT, (T.SIGMA, T.REF), T.OUTCOME, may_throw=True, cost=3, size=3, attr="field"))
_add(OpSpec("putfield", Role.EFFECT, (T.SIGMA, T.REF, T.ANY), T.OUTCOME, may_throw=True, cost=3, size=3, attr="field"))
_add(OpSpec("getstatic", Role.EFFECT, (T.SIGMA,), T.OUTCOME, may_throw=True, cost=3, size=3, attr="field"))
_add(OpSpec("putstatic", Role.EFFECT, (T.SIGMA, T.ANY), T.OUTCOME, may_throw=True, cost=3, size=3, attr="field"))
_add(OpSpec("aload", Role.EFFECT, (T.SIGMA, T.REF, T.INT), T.OUTCOME, may_throw=True, cost=3, attr="elem"))
_add(OpSpec("astore", Role.EFFECT, (T.SIGMA, T.REF, T.INT, T.ANY), T.OUTCOME, may_throw=True, cost=3,
            attr="elem"))
_add(OpSpec("arraylength", Role.EFFECT, (T.SIGMA, T.REF), T.OUTCOME, may_throw=True, cost=2))
_add(OpSpec("newarray", Role.EFFECT, (T.SIGMA,), T.OUTCOME, variadic=T.INT, may_throw=True, cost=10,
            size=2, attr="array_type"))
_add(OpSpec("new", Role.EFFECT, (T.SIGMA,), T.OUTCOME, variadic=T.ANY, may_throw=True, cost=20,
            size=7, attr="constructor"))  # attribute: (class, constructor MethodRef)
_add(OpSpec("classinit", Role.EFFECT, (T.SIGMA,), T.OUTCOME, may_throw=True, cost=2, size=3, attr="class"))
for _k in ("virtual", "special", "interface"):
    _add(OpSpec(f"invoke.{_k}", Role.EFFECT, (T.SIGMA, T.REF), T.OUTCOME, variadic=T.ANY, may_throw=True,
                cost=20, size=5 if _k == "interface" else 3, attr="method"))
_add(OpSpec("invoke.static", Role.EFFECT, (T.SIGMA,), T.OUTCOME, variadic=T.ANY, may_throw=True, cost=20,
            size=3, attr="method"))
_add(OpSpec("invokedynamic", Role.EFFECT, (T.SIGMA,), T.OUTCOME, variadic=T.ANY, may_throw=True, cost=20,
            size=5, attr="callsite"))  # attribute: (name, descriptor, Bootstrap)
_add(OpSpec("checkcast", Role.EFFECT, (T.SIGMA, T.REF), T.OUTCOME, may_throw=True, cost=2, size=3, attr="class"))
_add(OpSpec("monitorenter", Role.EFFECT, (T.SIGMA, T.REF), T.OUTCOME, may_throw=True, cost=10))
_add(OpSpec("monitorexit", Role.EFFECT, (T.SIGMA, T.REF), T.OUTCOME, may_throw=True, cost=10))
_add(OpSpec("athrow", Role.EFFECT, (T.SIGMA, T.REF), T.OUTCOME, may_throw=True, cost=5))  # inside a try region

# -- projections ----------------------------------------------------------------------------------------------
_add(OpSpec("rho_value", Role.PROJECTION, (T.OUTCOME,), T.ANY, cost=0, size=0))
_add(OpSpec("rho_sigma", Role.PROJECTION, (T.OUTCOME,), T.SIGMA, cost=0, size=0))
_add(OpSpec("threw", Role.PROJECTION, (T.OUTCOME,), T.BOOL, cost=0, size=0))
_add(OpSpec("rho_exc", Role.PROJECTION, (T.OUTCOME,), T.REF, cost=0, size=0))
_add(OpSpec("rho_esigma", Role.PROJECTION, (T.OUTCOME,), T.SIGMA, cost=0, size=0))

# -- PEG primitives -------------------------------------------------------------------------------------------
_add(OpSpec("phi", Role.CHOICE, (T.BOOL, T.ANY, T.ANY), T.ANY, cost=1, size=3))  # a goto over one arm
_add(OpSpec("theta", Role.LOOP, (T.ANY, T.ANY), T.ANY, cost=1, size=2, attr="loop"))  # a store
_add(OpSpec("eval", Role.LOOP, (T.ANY, T.INT), T.ANY, cost=1, size=0, attr="loop"))
_add(OpSpec("pass", Role.LOOP, (T.BOOL,), T.INT, cost=50, size=3, attr="loop"))  # the back jump
_add(OpSpec("shift", Role.LOOP, (T.ANY,), T.ANY, cost=1, attr="loop"))
_add(OpSpec("peel", Role.LOOP, (T.ANY,), T.ANY, cost=1, attr="loop"))
_add(OpSpec("zero", Role.CONST, (), T.INT, cost=0, size=0))  # the first iteration index
_add(OpSpec("succ", Role.PURE, (T.INT,), T.INT, cost=1, fn=lambda n: n + 1))

# -- exits ----------------------------------------------------------------------------------------------------
_add(OpSpec("return", Role.EXIT, (T.SIGMA, T.ANY), T.RESULT, cost=0))
_add(OpSpec("throw", Role.EXIT, (T.SIGMA, T.REF), T.RESULT, may_throw=True, cost=0))

# the operators of exception handling (branching on an effect's outcome inside a try region)
HANDLER_OPS = frozenset({"threw", "rho_exc", "rho_esigma", "athrow"})
POLYMORPHIC = frozenset({"phi", "theta", "eval", "shift", "peel"})
EFFECTS = frozenset(n for n, s in OPS.items() if s.role is Role.EFFECT)
#: the throwing divisions (``semantics.THROWING``) -> the effect that checks their divisor (``div.l``: ``check.zero.l``)
THROWING_DIVISIONS = {name: f"check.zero.{name[-1]}" for name in sorted(S.THROWING)}
#: the loop operators (theta, eval, pass, shift, peel): they move iteration indexes, every other operator is
#: pointwise in every loop
LOOP_OPS = frozenset(name for name, spec in OPS.items() if spec.role is Role.LOOP)
BASE_LOOP_MULTIPLIER = 20  # Peggy's cost factor per loop depth in which a node varies


def spec(name: str) -> OpSpec:
    """The spec of ``name``; a KeyError names the unknown operator."""
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"unknown PEG operator {name!r}") from None
