"""The price of emitted bytecode: what a method's code costs the JVM to run, and its size.

What this module owns
    :class:`Kind` (the instruction groups the JVM prices alike), :data:`WEIGHTS` (THE per-group interpreter
    weights, integers relative to ``iadd``), :data:`LOOP_FACTOR`, :class:`EmittedCost` and the functions that
    price decoded code: :func:`instruction_weight`, :func:`loop_depths`, :func:`price_instructions`,
    :func:`price_code`; :class:`Goal` (what a rewrite must pay in). ``docs/cost-model.md`` gives the measured
    numbers behind the weights (``scripts/calibrate_cost.py`` measures them on the running JVM).

The model
    ``cost = sum over instructions of WEIGHTS[kind] * LOOP_FACTOR ** depth``, where ``depth`` is the number of
    natural loops of the bytecode's control-flow graph containing the instruction's basic block (exception
    edges count: a handler that jumps back into a loop is part of it). ``size`` is the code length in bytes.
    Unlike the PEG model (:mod:`peggy_jvm.pegextract.cost`), this prices what the lowering actually emitted:
    loads, stores, stack shuffles and jumps included, so a PEG that is cheaper but lowers to more or slower
    instructions is seen for what it is.

Inputs: decoded instructions (:func:`peggy_jvm.classfile.bytecode.decode`) and the exception table, or a parsed
:class:`~peggy_jvm.classfile.model.CodeAttribute`. Outputs: :class:`EmittedCost` (integers).
Invariants: every opcode of :data:`peggy_jvm.classfile.opcodes.OPCODES` has exactly one kind and a positive
weight; the price depends only on the code (never on time or the machine); an instruction in a loop nested
``k`` deep costs ``LOOP_FACTOR ** k`` times its weight.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Sequence

import networkx as nx

from .classfile.bytecode import Instruction, decode
from .classfile.model import CodeAttribute
from .classfile.opcodes import CONDITIONAL_BRANCHES, JSR, JSR_W, NO_FALLTHROUGH, OPCODES, RET
from .ir.cfg import natural_loops

__all__ = ["Goal", "Kind", "WEIGHTS", "LOOP_FACTOR", "KIND_OF", "EmittedCost", "kind_of", "instruction_weight",
           "loop_depths", "price_instructions", "price_code"]


class Goal(str, Enum):
    """What ``optimize --goal`` aims at: ``speed`` (the emitted cost first) or ``size`` (the bytes first)."""

    SPEED = "speed"
    SIZE = "size"


#: a loop body is assumed to run this many times per execution of the code around it (per nesting level)
LOOP_FACTOR = 10


class Kind(Enum):
    """Instruction groups with one interpreter weight each."""

    NOP = "nop"
    LOCAL = "local load/store"  # iload..astore_3 and their wide forms
    CONST = "constant"  # aconst_null, iconst_*, lconst_*, fconst_*, dconst_*, bipush, sipush
    LDC = "ldc"  # ldc, ldc_w, ldc2_w (resolved pool constant)
    STACK = "stack"  # pop, pop2, dup*, swap
    INT_ARITH = "int arith"  # iadd isub ineg, shifts and logic on int
    INT_MUL = "int mul"
    WIDE_ARITH = "long/float/double arith"  # add sub mul neg shifts logic on long, float, double
    DIV_REM = "div/rem"
    CONVERT = "conversion"  # i2l ... i2s
    COMPARE = "compare"  # lcmp, fcmpl/g, dcmpl/g
    IINC = "iinc"
    ARRAY_LOAD = "array load"
    ARRAY_STORE = "array store"
    ARRAY_LENGTH = "arraylength"
    FIELD = "instance field"  # getfield, putfield
    STATIC = "static field"  # getstatic, putstatic
    INVOKE_STATIC = "invokestatic/special"
    INVOKE_VIRTUAL = "invokevirtual"
    INVOKE_INTERFACE = "invokeinterface"
    INVOKE_DYNAMIC = "invokedynamic"
    NEW = "new"
    NEW_ARRAY = "newarray"  # newarray, anewarray, multianewarray
    BRANCH = "branch"  # conditional branches, goto, goto_w, jsr, ret
    SWITCH = "switch"
    RETURN = "return"
    THROW = "athrow"
    TYPE_CHECK = "checkcast/instanceof"
    MONITOR = "monitor"


#: THE weights (interpreter, ``-Xint``; ``iadd`` = 2): the measurements of ``scripts/calibrate_cost.py``
#: rounded (docs/cost-model.md has them, the JIT's for comparison, and the command). The interpreter's dispatch
#: dominates every simple instruction (about 1.2 ns each, whatever it computes); calls and allocations cost a
#: hundred times more. Groups no benchmark isolates (switch, return, athrow, invokedynamic, nop) are estimates.
WEIGHTS: dict[Kind, int] = {
    Kind.NOP: 1, Kind.LOCAL: 2, Kind.CONST: 2, Kind.LDC: 2, Kind.STACK: 1, Kind.INT_ARITH: 2,
    Kind.INT_MUL: 2, Kind.WIDE_ARITH: 2, Kind.DIV_REM: 2, Kind.CONVERT: 2, Kind.COMPARE: 2, Kind.IINC: 3,
    Kind.ARRAY_LOAD: 2, Kind.ARRAY_STORE: 2, Kind.ARRAY_LENGTH: 2, Kind.FIELD: 2, Kind.STATIC: 3,
    Kind.INVOKE_STATIC: 180, Kind.INVOKE_VIRTUAL: 160, Kind.INVOKE_INTERFACE: 160, Kind.INVOKE_DYNAMIC: 200,
    Kind.NEW: 40, Kind.NEW_ARRAY: 45, Kind.BRANCH: 2, Kind.SWITCH: 3, Kind.RETURN: 2, Kind.THROW: 200,
    Kind.TYPE_CHECK: 3, Kind.MONITOR: 2,
}


#: the mnemonics whose group their name alone does not tell by its prefix or suffix
_EXACT = {"nop": Kind.NOP, "iinc": Kind.IINC, "imul": Kind.INT_MUL, "arraylength": Kind.ARRAY_LENGTH,
          "getfield": Kind.FIELD, "putfield": Kind.FIELD, "getstatic": Kind.STATIC, "putstatic": Kind.STATIC,
          "invokestatic": Kind.INVOKE_STATIC, "invokespecial": Kind.INVOKE_STATIC,
          "invokevirtual": Kind.INVOKE_VIRTUAL, "invokeinterface": Kind.INVOKE_INTERFACE,
          "invokedynamic": Kind.INVOKE_DYNAMIC, "new": Kind.NEW, "newarray": Kind.NEW_ARRAY,
          "anewarray": Kind.NEW_ARRAY, "multianewarray": Kind.NEW_ARRAY, "athrow": Kind.THROW,
          "checkcast": Kind.TYPE_CHECK, "instanceof": Kind.TYPE_CHECK, "monitorenter": Kind.MONITOR,
          "monitorexit": Kind.MONITOR, "tableswitch": Kind.SWITCH, "lookupswitch": Kind.SWITCH,
          "goto": Kind.BRANCH, "goto_w": Kind.BRANCH, "jsr": Kind.BRANCH, "jsr_w": Kind.BRANCH,
          "ret": Kind.BRANCH, "wide": Kind.NOP, "bipush": Kind.CONST, "sipush": Kind.CONST,
          "aconst_null": Kind.CONST, "pop": Kind.STACK, "pop2": Kind.STACK, "swap": Kind.STACK}


def kind_of(name: str) -> Kind:
    """The group of the opcode named ``name`` (a mnemonic of the opcode table)."""
    if name in _EXACT:
        return _EXACT[name]
    if name.startswith("if"):
        return Kind.BRANCH
    if name.startswith("ldc"):
        return Kind.LDC
    if name.startswith("dup"):
        return Kind.STACK
    if name.endswith("return"):
        return Kind.RETURN
    if "const_" in name:
        return Kind.CONST
    if name[1:].startswith(("load", "store")):
        return Kind.LOCAL
    if name[1:] in ("aload", "astore"):
        return Kind.ARRAY_LOAD if name.endswith("load") else Kind.ARRAY_STORE
    if name[1] == "2":
        return Kind.CONVERT
    if name[1:].startswith("cmp"):
        return Kind.COMPARE
    if name[1:] in ("div", "rem"):
        return Kind.DIV_REM
    if name[1:] in ("add", "sub", "mul", "neg", "shl", "shr", "ushr", "and", "or", "xor"):
        return Kind.INT_ARITH if name[0] == "i" else Kind.WIDE_ARITH
    raise ValueError(f"opcode {name!r} has no cost kind")


#: opcode -> kind, for every opcode of the one opcode table (None: not an opcode)
KIND_OF: list[Kind | None] = [kind_of(OPCODES[i].name) if i in OPCODES else None for i in range(256)]


@dataclass(frozen=True, slots=True)
class EmittedCost:
    """A method's emitted code: its loop-weighted interpreter cost and its length in bytes."""

    cost: int
    size: int


def instruction_weight(insn: Instruction) -> int:
    """The weight of one instruction outside any loop."""
    return WEIGHTS[KIND_OF[insn.opcode]]  # type: ignore[index]


def _block_graph(insns: Sequence[Instruction], handlers: Iterable[tuple[int, int, int]]
                 ) -> tuple[nx.DiGraph, list[int]]:
    """The basic blocks (named by their first offset) and their control flow, exception edges marked; returns
    the graph and, per instruction, the start of its block. ``handlers``: (start, end, handler) offsets."""
    handlers = list(handlers)
    offsets = [i.offset for i in insns]
    known = set(offsets)
    leaders = {offsets[0]}
    returns: list[int] = []  # where a jsr's subroutine returns to (the targets of every ret)
    for k, insn in enumerate(insns):
        nxt = offsets[k + 1] if k + 1 < len(insns) else None
        if insn.opcode in CONDITIONAL_BRANCHES or insn.opcode in NO_FALLTHROUGH or insn.opcode in (JSR, JSR_W):
            leaders.update(insn.successors_targets())
            if nxt is not None:
                leaders.add(nxt)
        if insn.opcode in (JSR, JSR_W) and nxt is not None:
            returns.append(nxt)
    for start, end, handler in handlers:  # range boundaries too: a block is wholly inside a range or outside
        leaders.update(x for x in (start, end, handler) if x in known)
    g = nx.DiGraph()
    block_of: list[int] = []
    current = offsets[0]
    for k, insn in enumerate(insns):
        if insn.offset in leaders:
            current = insn.offset
            g.add_node(current)
        block_of.append(current)
    for k, insn in enumerate(insns):
        last = k + 1 == len(insns) or offsets[k + 1] in leaders
        if not last:
            continue
        src = block_of[k]
        targets = list(insn.successors_targets()) if insn.opcode != RET else list(returns)
        if insn.opcode not in NO_FALLTHROUGH and insn.opcode not in (JSR, JSR_W) and k + 1 < len(insns):
            targets.append(offsets[k + 1])
        for t in targets:
            g.add_edge(src, t, kind="normal")
    for start, end, handler in handlers:
        for b in g.nodes:
            if start <= b < end and not g.has_edge(b, handler):
                g.add_edge(b, handler, kind="exception")
    return g, block_of


def loop_depths(insns: Sequence[Instruction], handlers: Iterable[tuple[int, int, int]] = ()) -> list[int]:
    """Per instruction, the number of natural loops containing it (0 outside loops and in unreachable code)."""
    if not insns:
        return []
    g, block_of = _block_graph(insns, handlers)
    forest = natural_loops(g, insns[0].offset)
    depth = {b: forest.depth_of(b) for b in g.nodes}
    return [depth[b] for b in block_of]


def price_instructions(insns: Sequence[Instruction], handlers: Iterable[tuple[int, int, int]] = ()) -> EmittedCost:
    """The emitted cost of decoded code with its exception table (as (start, end, handler) offsets)."""
    depths = loop_depths(insns, handlers)
    cost = sum(instruction_weight(i) * LOOP_FACTOR ** d for i, d in zip(insns, depths))
    size = insns[-1].offset + insns[-1].length if insns else 0
    return EmittedCost(cost, size)


def price_code(code: CodeAttribute) -> EmittedCost:
    """The emitted cost of a parsed Code attribute."""
    return price_instructions(decode(code.code), [(x.start, x.end, x.handler) for x in code.exception_table])
