"""The three-address IR: typed values, statements, basic blocks, methods.

Owns the IR's data model (small, typed classes in the spirit of xDSL); nothing here knows bytecode or the
constant pool. Produced by :mod:`.lift`, consumed by the PEG builder, the interpreter and lowering.

Model:
- a :class:`Var` is a typed variable (``int long float double ref``; a ref carries the most precise class
  known, or ``None``). An :data:`Operand` is a Var or a :class:`Const`. There is no operand stack.
- statements compute into at most one destination variable; every statement that can throw says so
  (:attr:`Stmt.may_throw`), and the block it is in routes the exception to the block's handlers;
- a :class:`Block` is a list of statements ended by one terminator (:class:`Goto`, :class:`If`,
  :class:`Switch`, :class:`Return`, :class:`Throw`); its ``handlers`` are tried in order for any exception
  raised inside it (a handler block starts with :class:`Catch`);
- ``new C(args)`` is one :class:`New` statement; when side effects happen between the bytecode's ``new`` and
  the constructor call, a :class:`ClassInit` statement keeps class initialization where ``new`` put it;
- member references are resolved to names and descriptors (:class:`FieldRef`, :class:`MethodRef`), so the IR
  does not depend on a particular constant pool.

Invariants: every block ends with exactly one terminator; every target names a block of the method; a
variable has one type; the IR has no return addresses (jsr/ret subroutines are inlined by the lifter).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import final

from ..semantics import THROWING


class Kind(Enum):
    INT = "int"
    LONG = "long"
    FLOAT = "float"
    DOUBLE = "double"
    REF = "ref"

    @property
    def suffix(self) -> str:
        """The operator-name suffix of this kind (``add.i``)."""
        return _SUFFIX[self]

    @property
    def wide(self) -> bool:
        return self is Kind.LONG or self is Kind.DOUBLE


_SUFFIX = {Kind.INT: "i", Kind.LONG: "l", Kind.FLOAT: "f", Kind.DOUBLE: "d", Kind.REF: "a"}


@dataclass(frozen=True, slots=True)
class IRType:
    kind: Kind
    cls: str | None = None  # REF only: internal class name or array descriptor; None = unknown / null

    def __str__(self) -> str:
        if self.kind is Kind.REF and self.cls:
            return self.cls
        return self.kind.value


INT = IRType(Kind.INT)
LONG = IRType(Kind.LONG)
FLOAT = IRType(Kind.FLOAT)
DOUBLE = IRType(Kind.DOUBLE)
REF = IRType(Kind.REF)
NULL_TYPE = IRType(Kind.REF, None)

_DESC_TYPES = {"I": INT, "Z": INT, "B": INT, "C": INT, "S": INT, "J": LONG, "F": FLOAT, "D": DOUBLE}


def type_of_descriptor(desc: str) -> IRType:
    """The IR type of a value of field descriptor ``desc`` (boolean, byte, char, short are int)."""
    t = _DESC_TYPES.get(desc[0])
    if t is not None:
        return t
    return IRType(Kind.REF, desc[1:-1] if desc[0] == "L" else desc)


@dataclass(frozen=True, slots=True)
class CarriedLocal:
    """Debug information on a variable of rebuilt code (a loop's theta): each time control enters block
    ``header`` of its method, the variable holds what local ``slot`` of the original code held at offset ``at``
    (the original loop's header) in the same iteration. Lowering turns it into LocalVariableTable ranges."""

    slot: int
    at: int
    header: int


# final: code dispatches on ``type(x) is Var`` (faster than isinstance), which is exact only without subclasses,
# and lets mypy narrow an Operand that is not a Var to a Const
@final
@dataclass(eq=False, slots=True)
class Var:
    """A variable; compared by identity. ``name`` is for people (``l3i`` local 3, ``s0i`` stack 0, ``t7``).
    ``slot`` is the local-variable slot it came from, if any: a hint lowering follows so that code keeps
    the original layout of locals. ``carries``: see :class:`CarriedLocal` (debug information only)."""

    id: int
    type: IRType
    name: str = ""
    slot: int | None = None
    carries: CarriedLocal | None = None

    def __repr__(self) -> str:
        return self.name or f"v{self.id}"


class ConstKind(Enum):
    VALUE = "value"  # int/long/float/double/String/null: value holds it
    CLASS = "class"  # a class literal: value is the internal name / array descriptor
    METHOD_TYPE = "method_type"  # value is the descriptor
    METHOD_HANDLE = "method_handle"  # value is (reference kind, MethodRef | FieldRef)
    DYNAMIC = "dynamic"  # a dynamically computed constant: value is DynamicConst


@final
@dataclass(frozen=True, slots=True)
class Const:
    type: IRType
    value: object
    kind: ConstKind = ConstKind.VALUE

    def __repr__(self) -> str:
        if self.kind is not ConstKind.VALUE:
            return f"{self.kind.value}({self.value!r})"
        if self.type.kind is Kind.REF:
            return "null" if self.value is None else repr(self.value)
        return f"{self.value!r}{'' if self.type.kind is Kind.INT else self.type.kind.suffix.upper()}"


Operand = Var | Const


@dataclass(frozen=True, slots=True)
class FieldRef:
    owner: str
    name: str
    descriptor: str

    def __str__(self) -> str:
        return f"{self.owner}.{self.name}:{self.descriptor}"


@dataclass(frozen=True, slots=True)
class MethodRef:
    owner: str
    name: str
    descriptor: str
    interface: bool = False  # the owner is an interface (InterfaceMethodref)

    def __str__(self) -> str:
        return f"{self.owner}.{self.name}{self.descriptor}"


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """An invokedynamic or dynamic-constant bootstrap: the method handle and its static arguments, kept opaque
    (as Consts) so lowering can write them back exactly."""

    handle: Const
    arguments: tuple[Const, ...]


@dataclass(frozen=True, slots=True)
class DynamicConst:
    name: str
    descriptor: str
    bootstrap: Bootstrap


class InvokeKind(Enum):
    VIRTUAL = "virtual"
    SPECIAL = "special"
    STATIC = "static"
    INTERFACE = "interface"


# -- statements ---------------------------------------------------------------------------------------------
@dataclass(eq=False, slots=True)
class Stmt:
    """Base of all statements. ``dst`` is the variable written, if any. ``origin`` is the bytecode offset of the
    instruction the statement came from (-1: none), which lowering turns back into line numbers."""

    origin: int = field(default=-1, kw_only=True)

    @property
    def may_throw(self) -> bool:
        return True

    def operands(self) -> list[Operand]:
        return []

    def defined(self) -> Var | None:
        return getattr(self, "dst", None)


@dataclass(eq=False, slots=True)
class Copy(Stmt):
    dst: Var
    src: Operand

    @property
    def may_throw(self) -> bool:
        return False

    def operands(self) -> list[Operand]:
        return [self.src]


@dataclass(eq=False, slots=True)
class Unary(Stmt):
    """``dst = op a``: negation and conversions (``neg.i``, ``i2l``, ``d2f``, ``i2b``, ...)."""

    dst: Var
    op: str
    a: Operand

    @property
    def may_throw(self) -> bool:
        return False

    def operands(self) -> list[Operand]:
        return [self.a]


@dataclass(eq=False, slots=True)
class Binary(Stmt):
    """``dst = a op b`` with a typed operator (``add.i``, ``shl.l``, ``cmpg.d``, ``div.i`` ...)."""

    dst: Var
    op: str
    a: Operand
    b: Operand

    @property
    def may_throw(self) -> bool:
        return self.op in THROWING

    def operands(self) -> list[Operand]:
        return [self.a, self.b]


@dataclass(eq=False, slots=True)
class GetField(Stmt):
    dst: Var
    obj: Operand
    field: FieldRef

    def operands(self) -> list[Operand]:
        return [self.obj]


@dataclass(eq=False, slots=True)
class PutField(Stmt):
    obj: Operand
    field: FieldRef
    value: Operand

    def operands(self) -> list[Operand]:
        return [self.obj, self.value]


@dataclass(eq=False, slots=True)
class GetStatic(Stmt):
    dst: Var
    field: FieldRef

    # may throw: class initialization can fail


@dataclass(eq=False, slots=True)
class PutStatic(Stmt):
    field: FieldRef
    value: Operand

    def operands(self) -> list[Operand]:
        return [self.value]


@dataclass(eq=False, slots=True)
class ArrayLoad(Stmt):
    """``dst = array[index]``; ``elem`` is the element descriptor char (``I J F D B C S Z L``)."""

    dst: Var
    array: Operand
    index: Operand
    elem: str

    def operands(self) -> list[Operand]:
        return [self.array, self.index]


@dataclass(eq=False, slots=True)
class ArrayStore(Stmt):
    array: Operand
    index: Operand
    value: Operand
    elem: str

    def operands(self) -> list[Operand]:
        return [self.array, self.index, self.value]


@dataclass(eq=False, slots=True)
class ArrayLength(Stmt):
    dst: Var
    array: Operand

    def operands(self) -> list[Operand]:
        return [self.array]


@dataclass(eq=False, slots=True)
class NewArray(Stmt):
    """``newarray``, ``anewarray`` and ``multianewarray``: ``array_type`` is the array descriptor; one size per
    created dimension (fewer than the descriptor's dimensions leaves the inner arrays null)."""

    dst: Var
    array_type: str
    sizes: list[Operand]

    def operands(self) -> list[Operand]:
        return list(self.sizes)


@dataclass(eq=False, slots=True)
class ClassInit(Stmt):
    """Initializes class ``cls`` if it is not yet (what the bytecode ``new`` does before anything else)."""

    cls: str


@dataclass(eq=False, slots=True)
class New(Stmt):
    """``dst = new cls(args)``: allocation and constructor call as one statement. ``init`` is the
    :class:`ClassInit` that the bytecode's ``new`` left earlier (when effects happen in between), if any."""

    dst: Var
    cls: str
    constructor: MethodRef
    args: list[Operand]
    init: ClassInit | None = None

    def operands(self) -> list[Operand]:
        return list(self.args)


@dataclass(eq=False, slots=True)
class Invoke(Stmt):
    """A call; ``receiver`` is None for static calls. ``dst`` is None for void methods. A constructor call on
    ``this`` or on a superclass (``invokespecial <init>`` in a constructor) is an Invoke of kind SPECIAL."""

    dst: Var | None
    kind: InvokeKind
    method: MethodRef
    receiver: Operand | None
    args: list[Operand]

    def operands(self) -> list[Operand]:
        return ([self.receiver] if self.receiver is not None else []) + list(self.args)


@dataclass(eq=False, slots=True)
class InvokeDynamic(Stmt):
    dst: Var | None
    name: str
    descriptor: str
    bootstrap: Bootstrap
    args: list[Operand]

    def operands(self) -> list[Operand]:
        return list(self.args)


@dataclass(eq=False, slots=True)
class CheckCast(Stmt):
    dst: Var
    src: Operand
    cls: str

    def operands(self) -> list[Operand]:
        return [self.src]


@dataclass(eq=False, slots=True)
class InstanceOf(Stmt):
    dst: Var
    src: Operand
    cls: str

    def operands(self) -> list[Operand]:
        return [self.src]


@dataclass(eq=False, slots=True)
class MonitorEnter(Stmt):
    obj: Operand

    def operands(self) -> list[Operand]:
        return [self.obj]


@dataclass(eq=False, slots=True)
class MonitorExit(Stmt):
    obj: Operand

    def operands(self) -> list[Operand]:
        return [self.obj]


@dataclass(eq=False, slots=True)
class Catch(Stmt):
    """First statement of a handler block: ``dst`` receives the caught exception."""

    dst: Var

    @property
    def may_throw(self) -> bool:
        return False


# -- terminators --------------------------------------------------------------------------------------------
@dataclass(eq=False, slots=True)
class Terminator(Stmt):
    def targets(self) -> list[int]:
        return []

    @property
    def may_throw(self) -> bool:
        return False


@dataclass(eq=False, slots=True)
class Goto(Terminator):
    target: int

    def targets(self) -> list[int]:
        return [self.target]


class Cond(Enum):
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    GE = "ge"
    GT = "gt"
    LE = "le"


@dataclass(eq=False, slots=True)
class If(Terminator):
    """``if (a cond b) goto if_true else goto if_false``; ints compare as ints, refs only by eq/ne."""

    cond: Cond
    a: Operand
    b: Operand
    if_true: int
    if_false: int

    def targets(self) -> list[int]:
        return [self.if_true, self.if_false]

    def operands(self) -> list[Operand]:
        return [self.a, self.b]


@dataclass(eq=False, slots=True)
class Switch(Terminator):
    value: Operand
    keys: list[int]
    cases: list[int]
    default: int

    def targets(self) -> list[int]:
        return [*self.cases, self.default]

    def operands(self) -> list[Operand]:
        return [self.value]


@dataclass(eq=False, slots=True)
class Return(Terminator):
    value: Operand | None

    def operands(self) -> list[Operand]:
        return [self.value] if self.value is not None else []

    @property
    def may_throw(self) -> bool:
        return True  # IllegalMonitorStateException from a synchronized method's unbalanced monitors


@dataclass(eq=False, slots=True)
class Throw(Terminator):
    value: Operand

    def operands(self) -> list[Operand]:
        return [self.value]

    @property
    def may_throw(self) -> bool:
        return True


# -- blocks and methods -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Handler:
    """An exception handler in effect for a block: exceptions assignable to ``catch_type`` (None: any)."""

    catch_type: str | None
    target: int


@dataclass(eq=False, slots=True)
class Block:
    id: int
    stmts: list[Stmt] = field(default_factory=list)
    terminator: Terminator | None = None
    handlers: tuple[Handler, ...] = ()
    origin: int = -1  # bytecode offset the block starts at (for people and tests)
    # the stack variables the block starts with, bottom first (what the bytecode had on its operand stack);
    # lowering may pass them on the JVM stack instead of through slots
    entry_stack: tuple[Var, ...] = ()

    def all_stmts(self) -> list[Stmt]:
        """The statements, then the terminator (which only a block still being built lacks)."""
        return [*self.stmts, self.terminator] if self.terminator is not None else list(self.stmts)

    def successors(self, include_exceptional: bool = True) -> list[int]:
        out = list(self.terminator.targets()) if self.terminator is not None else []
        if include_exceptional and self.can_throw():
            out.extend(h.target for h in self.handlers)
        return out

    def retarget(self, new: Callable[[int], int], handlers: bool = True) -> None:
        """Every target of the terminator, and with ``handlers`` of the handlers, replaced by ``new`` of it."""
        term = self.terminator
        if isinstance(term, Goto):
            term.target = new(term.target)
        elif isinstance(term, If):
            term.if_true, term.if_false = new(term.if_true), new(term.if_false)
        elif isinstance(term, Switch):
            term.cases, term.default = [new(c) for c in term.cases], new(term.default)
        if handlers:
            self.handlers = tuple(Handler(h.catch_type, new(h.target)) for h in self.handlers)

    def can_throw(self) -> bool:
        return any(s.may_throw for s in self.stmts) or (self.terminator is not None and self.terminator.may_throw)


@dataclass(eq=False, slots=True)
class IRMethod:
    class_name: str
    name: str
    descriptor: str
    is_static: bool
    params: list[Var]  # receiver first for instance methods; one Var per parameter
    blocks: dict[int, Block]
    entry: int
    synchronized: bool = False
    variables: list[Var] = field(default_factory=list)

    def block_order(self) -> list[Block]:
        return [self.blocks[k] for k in sorted(self.blocks)]
