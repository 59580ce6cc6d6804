"""The price of emitted bytecode: what a method's code costs the JVM to run, and its size.

What this module owns
    :class:`Kind` (the instruction groups the JVM prices alike), :data:`WEIGHTS` (THE per-group interpreter
    weights, integers relative to ``iadd``), :data:`LOOP_FACTOR`, :class:`EmittedCost` and the functions that
    price decoded code: :func:`instruction_weight`, :func:`taken_halves`, :data:`TAKEN_EXTRA`,
    :data:`FLOAT_SPILL_EXTRA`, :data:`LDC_READ_EXTRA`, :func:`pushes_number`,
    :func:`loop_depths`, :func:`instruction_prices`, :func:`uncounted_loops` (the loops HotSpot's JIT cannot
    count), :func:`price_instructions`, :func:`price_code`; :class:`Goal` (what a rewrite must pay in).
    ``docs/cost-model.md`` gives the measured numbers behind the weights (``scripts/calibrate_cost.py`` measures
    them on the running JVM).

The model
    ``cost = sum over instructions of (WEIGHTS[kind] + TAKEN_EXTRA * taken) * LOOP_FACTOR ** depth``, where
    ``depth`` is the number of natural loops of the bytecode's control-flow graph containing the instruction's
    basic block (exception edges count: a handler that jumps back into a loop is part of it) and ``taken`` how
    often a jump is expected to be taken (:func:`taken_halves`: always for ``goto``; for a conditional branch,
    by which of its two ways stays in its loop), plus :data:`FLOAT_SPILL_EXTRA` for a ``dup``/``swap`` right
    after an instruction that leaves a float, plus :data:`LDC_READ_EXTRA` for an instruction that takes the top
    of the stack right after an ``ldc`` of a number. The instructions of cold blocks (:func:`cold_blocks`: every
    path from them ends in an ``athrow`` no handler catches) count together, divided by :data:`COLD_DIVISOR`.
    ``size`` is the code length in bytes.
    Unlike the PEG model (:mod:`peggy_jvm.pegextract.cost`), this prices what the lowering actually emitted:
    loads, stores, stack shuffles and jumps included, so a PEG that is cheaper but lowers to more or slower
    instructions is seen for what it is.

Inputs: decoded instructions (:func:`peggy_jvm.classfile.bytecode.decode`) and the exception table, or a parsed
:class:`~peggy_jvm.classfile.model.CodeAttribute`; optionally the class's constant pool (which ``ldc`` loads a
number). Outputs: :class:`EmittedCost` (integers).
Invariants: every opcode of :data:`peggy_jvm.classfile.opcodes.OPCODES` has exactly one kind and a positive
weight; the price depends only on the code (never on time or the machine); an instruction in a loop nested
``k`` deep costs ``LOOP_FACTOR ** k`` times its weight.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Sequence

import networkx as nx

from .choices import Goal  # named there, for the CLI to offer without importing this module
from .classfile.bytecode import Instruction, decode
from .classfile.model import CodeAttribute
from .classfile.constpool import ConstantPool, Tag
from .classfile.opcodes import (ATHROW, BY_NAME, CONDITIONAL_BRANCHES, GOTO, GOTO_W, IINC, ISTORE, JSR, JSR_W, LDC, LDC2_W,
                                LDC_W, NAME_OF, NO_FALLTHROUGH, OPCODES, RET, SHORT_FORMS)
from .ir.cfg import LoopForest, natural_loops

__all__ = ["Goal", "Kind", "WEIGHTS", "LOOP_FACTOR", "TAKEN_EXTRA", "FLOAT_SPILL_EXTRA", "LDC_READ_EXTRA", "KIND_OF",
           "COLD_DIVISOR", "EmittedCost", "kind_of", "pushes_number", "cold_blocks",
           "instruction_weight", "taken_halves", "loop_depths", "instruction_prices",
           "uncounted_loops", "price_instructions", "price_code"]


#: a loop body is assumed to run this many times per execution of the code around it (per nesting level)
LOOP_FACTOR = 10

#: what the instructions of a path that ends in a throw (:func:`cold_blocks`) cost less than straight-line code:
#: the inverse of a loop level. Such a path runs at most once per call (it leaves the method), and in the code
#: that has them (argument checks) almost never; priced as straight-line code, a callee's inlined check
#: (``if (x == null) throw new NullPointerException(msg)``: ``new``, a constructor call, ``athrow``, 420) cost
#: more than the call it replaced (180) and was refused, though the path that runs is a test and a jump
#: (docs/cost-model.md, "Paths that end in a throw")
COLD_DIVISOR = LOOP_FACTOR


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


#: what a jump costs the interpreter beyond falling through, each time it is taken (HotSpot's template interpreter
#: then moves its bytecode pointer to the target, polls for a safepoint, and its dispatch jumps from elsewhere):
#: measured 6 more than a conditional branch that falls through (``scripts/calibrate_cost.py``: ``taken`` against
#: ``branch``), which itself measures about nothing: so a taken jump costs about 5-6 in all, the branch group's 2
#: plus this. Even, so that a branch taken half the time (:func:`taken_halves`) costs an integer.
TAKEN_EXTRA = 4

#: what a ``dup``, ``dup_x1``, ``dup_x2`` or ``swap`` costs beyond its weight when the instruction before it left a
#: float on the stack: the interpreter keeps that float in a register and spills it with a 4-byte store, and the
#: stack instruction reads the slot back as an 8-byte word, which the processor cannot forward from the narrower
#: store (a stall). Measured 10 (``scripts/calibrate_cost.py``: ``fdup``, ``f = g = h;`` against ``stack``'s
#: ``x = y = z;``, 8.1 against 3.5 ns per statement); an int or reference is spilled as a whole word, no stall.
FLOAT_SPILL_EXTRA = 10

#: what an instruction that takes its operand from the top of the stack costs beyond its weight right after an
#: ``ldc`` of a number (``ldc2_w``; ``ldc``/``ldc_w`` of an int or float): HotSpot's interpreter keeps the top of
#: the stack in a register, but its ``ldc`` template stores the number to the stack in memory (and the value in
#: the register before it), and the instruction after reads it back, a store forwarded to a load on the path of
#: every value computed from it. Measured 0.7-1.3 (``scripts/calibrate_cost.py``: ``ldcsecond``, ``y & 100000``,
#: against ``ldcfirst``, ``100000 & y``: the same instructions, the ``ldc`` before the load in one and after it in
#: the other). ``BenchKernels.crc32``'s rewrite had put its constant second in ``-(crc & 1) & 0xedb88320``: one
#: more such read per inner iteration for no fewer instructions, priced 4113 against javac's 4073 (4013 with the
#: constant first, as the lowering now leaves it).
LDC_READ_EXTRA = 1

#: the instructions that leave a float on top of the stack (a float field or call result is not known here)
_FLOAT_RESULTS = frozenset(op for op, info in OPCODES.items()
                           if info.name.startswith(("fload", "fconst_")) or info.name in (
                               "fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "i2f", "l2f", "d2f", "faload"))
#: the stack instructions that copy or move words
_WORD_MOVES = frozenset(op for op, info in OPCODES.items() if info.name in ("dup", "dup_x1", "dup_x2", "swap"))


#: the instructions that push a number to the stack in memory: ``ldc2_w``, and ``ldc``/``ldc_w`` of a pool entry
#: with one of :data:`_NUMBER_TAGS` (a String or Class constant stays in the register, HotSpot's ``fast_aldc``)
_NUMBER_LOADS = frozenset((LDC, LDC_W))
_NUMBER_TAGS = (Tag.INTEGER, Tag.FLOAT)

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

#: the instructions that take the top of the stack into the register at once: arithmetic, conversions,
#: comparisons, conditional branches, local and array stores, array loads (the index), returns
_TOP_READERS = frozenset(op for op, info in OPCODES.items()
                         if op in CONDITIONAL_BRANCHES or info.name[1:].startswith("store") or KIND_OF[op] in (
                             Kind.INT_ARITH, Kind.INT_MUL, Kind.WIDE_ARITH, Kind.DIV_REM, Kind.CONVERT,
                             Kind.COMPARE, Kind.ARRAY_LOAD, Kind.ARRAY_STORE, Kind.RETURN) and info.name != "return")


@dataclass(frozen=True, slots=True)
class EmittedCost:
    """A method's emitted code: its loop-weighted interpreter cost and its length in bytes; ``uncounted``: how
    many of its loops that test an int have no exit test of an induction variable against an invariant
    (:func:`uncounted_loops`, what the JIT would compile without its counted-loop optimizations)."""

    cost: int
    size: int
    uncounted: int = 0


def instruction_weight(insn: Instruction) -> int:
    """The weight of one instruction outside any loop, not counting a jump's taking (:func:`taken_halves`)."""
    return WEIGHTS[KIND_OF[insn.opcode]]  # type: ignore[index]  # a read instruction's opcode has a kind


def taken_halves(insn: Instruction, block: int, fallthrough: int | None, forest: LoopForest) -> int:
    """How often ``insn``, the last instruction of ``block``, is taken, in halves: 0 for anything but a jump; 2 for
    ``goto``; for a conditional branch, 2 when its
    target stays in the innermost loop of the block and its fall-through leaves it (the loop goes on by the
    jump), 0 the other way round (the jump leaves the loop, which runs more than once), else 1 (no telling)."""
    if insn.opcode in (GOTO, GOTO_W):
        return 2
    if insn.opcode not in CONDITIONAL_BRANCHES:
        return 0
    loop = forest.loop_of(block)
    if loop is None:
        return 1
    stays_taken = insn.successors_targets()[0] in loop.body
    stays_falling = fallthrough is not None and fallthrough in loop.body
    if stays_taken == stays_falling:
        return 1
    return 2 if stays_taken else 0


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
    return [depth for _, depth in instruction_prices(insns, handlers)]


def pushes_number(insn: Instruction, pool: ConstantPool | None = None) -> bool:
    """``insn`` is an ``ldc`` whose number the interpreter stores to the stack in memory (:data:`LDC_READ_EXTRA`):
    ``ldc2_w``, or ``ldc``/``ldc_w`` of an int or float; without the pool every ``ldc``/``ldc_w`` counts."""
    if insn.opcode == LDC2_W:
        return True
    if insn.opcode not in _NUMBER_LOADS:
        return False
    entry = pool.entries[insn.arg] if pool is not None and 0 < insn.arg < len(pool.entries) else None
    return entry is None or entry[0] in _NUMBER_TAGS


def instruction_prices(insns: Sequence[Instruction], handlers: Iterable[tuple[int, int, int]] = (),
                       pool: ConstantPool | None = None) -> list[tuple[int, int]]:
    """Per instruction, its weight (its group's, plus :data:`TAKEN_EXTRA` per expected taking of a jump, plus
    :data:`FLOAT_SPILL_EXTRA` for a word move of a float just computed in the same block, plus
    :data:`LDC_READ_EXTRA` for a reader of the top of the stack right after an ``ldc`` of a number in the same
    block, :func:`pushes_number` with ``pool``) and its loop depth."""
    if not insns:
        return []
    g, block_of = _block_graph(insns, handlers)
    return _prices(insns, g, block_of, natural_loops(g, insns[0].offset), pool)


def _prices(insns: Sequence[Instruction], g: nx.DiGraph, block_of: list[int], forest: LoopForest,
            pool: ConstantPool | None) -> list[tuple[int, int]]:
    """:func:`instruction_prices` over the block graph ``g`` (:func:`_block_graph`) and its loops."""
    out: list[tuple[int, int]] = []
    for k, insn in enumerate(insns):
        block = block_of[k]
        fallthrough = insns[k + 1].offset if k + 1 < len(insns) else None
        weight = instruction_weight(insn) + TAKEN_EXTRA * taken_halves(insn, block, fallthrough, forest) // 2
        if k > 0 and insn.offset not in g:  # the instruction before it is in the same block
            before = insns[k - 1]
            if insn.opcode in _WORD_MOVES and before.opcode in _FLOAT_RESULTS:
                weight += FLOAT_SPILL_EXTRA
            if insn.opcode in _TOP_READERS and pushes_number(before, pool):
                weight += LDC_READ_EXTRA
        out.append((weight, forest.depth_of(block)))
    return out


def price_instructions(insns: Sequence[Instruction], handlers: Iterable[tuple[int, int, int]] = (),
                       pool: ConstantPool | None = None) -> EmittedCost:
    """The emitted cost of decoded code with its exception table (as (start, end, handler) offsets); ``pool``
    tells which ``ldc`` loads a number (:func:`pushes_number`)."""
    if not insns:
        return EmittedCost(0, 0)
    g, block_of = _block_graph(insns, handlers)
    forest = natural_loops(g, insns[0].offset)
    cold = _cold(insns, g, block_of)
    hot_cost = cold_cost = 0
    for k, (w, d) in enumerate(_prices(insns, g, block_of, forest, pool)):
        if block_of[k] in cold:
            cold_cost += w  # a cold block is in no loop: it cannot reach a back edge
        else:
            hot_cost += w * LOOP_FACTOR ** d
    size = insns[-1].offset + insns[-1].length
    return EmittedCost(hot_cost + cold_cost // COLD_DIVISOR, size, _uncounted(insns, block_of, forest))


def cold_blocks(insns: Sequence[Instruction], handlers: Iterable[tuple[int, int, int]] = ()) -> set[int]:
    """The basic blocks (by their first offset) every path from which ends in an ``athrow`` outside every
    handler's range: a block ending so, or one whose every successor (exception edges included) is such a
    block. None of them is in a loop (no path from them comes back), and each runs at most once per call."""
    if not insns:
        return set()
    g, block_of = _block_graph(insns, handlers)
    return _cold(insns, g, block_of)


def _cold(insns: Sequence[Instruction], g: nx.DiGraph, block_of: list[int]) -> set[int]:
    """:func:`cold_blocks` over the block graph ``g`` (:func:`_block_graph`): a least fixpoint from the blocks
    that end in an uncaught ``athrow``, so a cycle is never cold."""
    last = {b: insns[k].opcode for k, b in enumerate(block_of)}  # each block's last instruction's opcode
    cold = {b for b, opcode in last.items() if opcode == ATHROW and g.out_degree(b) == 0}
    if not cold:
        return cold
    changed = True
    while changed:
        changed = False
        for b in g.nodes:
            if b not in cold and g.out_degree(b) > 0 and all(s in cold for s in g.successors(b)):
                cold.add(b)
                changed = True
    return cold


#: ``ifeq`` .. ``ifle`` (an int against 0) and ``if_icmpeq`` .. ``if_icmple`` (two ints): the tests a counted
#: loop can end by
_INT_TESTS = frozenset(range(0x99, 0xa5))
_INT_CONSTANTS = frozenset(op for op, info in OPCODES.items() if info.name.startswith("iconst_")
                           or info.name in ("bipush", "sipush"))
_IADD_ISUB = frozenset(op for op, info in OPCODES.items() if info.name in ("iadd", "isub"))
_INT_BINARY = frozenset(op for op, info in OPCODES.items() if info.name in (
    "iadd", "isub", "imul", "idiv", "irem", "ishl", "ishr", "iushr", "iand", "ior", "ixor"))
_INVOKES = frozenset(op for op, info in OPCODES.items() if info.name.startswith("invoke"))
_PUTFIELD, _PUTSTATIC, _GETFIELD, _GETSTATIC = (BY_NAME[n].opcode for n in ("putfield", "putstatic", "getfield",
                                                                             "getstatic"))
_ARRAYLENGTH, _DUP = BY_NAME["arraylength"].opcode, BY_NAME["dup"].opcode
_ISTORES = frozenset({ISTORE, *(op for op, (base, _) in SHORT_FORMS.items() if base == ISTORE)})


def _local_access(insn: Instruction) -> tuple[str, int] | None:
    """``("load"|"store", slot)`` of a local load or store (any type, short forms included), else None."""
    op, slot = SHORT_FORMS.get(insn.opcode, (insn.opcode, insn.arg))
    name = NAME_OF[op] or ""
    if name[1:] in ("load", "store"):
        return name[1:], slot
    return None


class _Value(Enum):
    """What an int test's operand is to the loop around it (:func:`uncounted_loops`)."""

    INDUCTION = "a basic induction variable, before or after its step"
    INVARIANT = "the same on every iteration"
    OTHER = "anything else (a derived induction variable, a load from memory the loop may write, ...)"


#: the operands of a test that ends a loop the JIT counts: the counter (before or after its step) and a bound
_COUNTED_TEST = frozenset({_Value.INDUCTION, _Value.INVARIANT})


def _loop_test_values(insns: Sequence[Instruction], first: int, k: int, induction: set[int], written: set[int],
                      memory_written: bool) -> list[_Value]:
    """The operands of the int test ``insns[k]`` read back through the instructions of its block (from index
    ``first``) that compute them: a local load, a constant, ``arraylength`` or a field of an invariant reference,
    int arithmetic of invariants, ``dup; store`` (the stored value); anything else is OTHER."""
    return [value for _start, value in _test_operands(insns, first, k, induction, written, memory_written)]


def _test_operands(insns: Sequence[Instruction], first: int, k: int, induction: set[int], written: set[int],
                   memory_written: bool) -> list[tuple[int, _Value]]:
    """:func:`_loop_test_values` with the index of each operand's first instruction (-1 for the 0 of ``if*``)."""

    def operand(end: int) -> tuple[int, _Value]:  # -> (index of its first instruction, what it is)
        if end < first:
            return end, _Value.OTHER
        insn = insns[end]
        access = _local_access(insn)
        if access is not None and access[0] == "load":
            slot = access[1]
            return end, (_Value.INDUCTION if slot in induction else
                         _Value.INVARIANT if slot not in written else _Value.OTHER)
        if insn.opcode in _INT_CONSTANTS or insn.opcode in _NUMBER_LOADS:
            return end, _Value.INVARIANT
        if insn.opcode in (_ARRAYLENGTH, _GETFIELD):
            start, ref = operand(end - 1)
            if insn.opcode == _GETFIELD and memory_written:
                return start, _Value.OTHER
            return start, ref if ref is _Value.INVARIANT else _Value.OTHER
        if insn.opcode == _GETSTATIC:
            return end, _Value.OTHER if memory_written else _Value.INVARIANT
        if insn.opcode in _INT_BINARY:
            mid, right = operand(end - 1)
            start, left = operand(mid - 1)
            both = left is _Value.INVARIANT and right is _Value.INVARIANT
            return start, _Value.INVARIANT if both else _Value.OTHER
        if access is not None and end - 1 >= first and insns[end - 1].opcode == _DUP:
            start, value = operand(end - 2)  # ``dup; istore n``: the value stays on the stack
            return start, _Value.INDUCTION if access[1] in induction else value  # a step stored: the counter
        return end, _Value.OTHER

    if insns[k].opcode >= 0x9f:  # if_icmp*: two operands
        right = operand(k - 1)
        return [operand(right[0] - 1), right]
    return [operand(k - 1), (-1, _Value.INVARIANT)]  # if*: against 0


def uncounted_loops(insns: Sequence[Instruction], handlers: Iterable[tuple[int, int, int]] = ()) -> int:
    """How many innermost natural loops end only by int tests none of which compares a basic induction variable
    (a local whose every write in the loop adds a constant to itself: ``iinc``, ``iload; const; iadd|isub;
    [dup;] istore``, a copy of a local written once so, or javac's ``v += c ? a : b`` with constants ``a``, ``b``
    and an invariant ``c``, whose step C2 makes a constant: classic 12/12b, whose rewrites with the step in a
    local ran 1.5-2.7x slower under the JIT) with an invariant (a local the loop does not write, a constant,
    ``arraylength`` of such a local, a field when the loop neither calls nor writes memory, int arithmetic of
    these). HotSpot's C2 compiles such a loop without its counted-loop
    optimizations (range-check elimination, unrolling): ``BenchKernels.lcs``'s rewrite tested
    ``k + 1 <= n`` with ``k`` the induction variable and ran 1.08-1.16x slower under the JIT; the same code
    testing ``k < n`` ran 0.89x (docs/cost-model.md, "Loops the JIT counts"). Loops with no int exit test
    (a null test, a reference comparison) are not counted here: no rewrite makes them counted or uncounted."""
    if not insns:
        return 0
    g, block_of = _block_graph(insns, handlers)
    return _uncounted(insns, block_of, natural_loops(g, insns[0].offset))


def _stored(insns: Sequence[Instruction], block_of: list[int], k: int) -> tuple[str, int] | None:
    """What the int store ``insns[k]`` writes, read back through its block: ``("step", s)`` for ``iload s; const;
    iadd|isub; [dup;] istore``, ``("copy", s)`` for ``iload s; [dup;] istore``, else None."""
    if insns[k].opcode not in _ISTORES:
        return None
    j = k - 1 if k >= 1 and insns[k - 1].opcode == _DUP else k  # ``iadd; dup; istore``: the value read on too
    if j >= 1 and block_of[j - 1] == block_of[k]:
        load = _local_access(insns[j - 1])
        if load is not None and load[0] == "load":
            return "copy", load[1]
    if (j >= 3 and block_of[j - 3] == block_of[k] and insns[j - 1].opcode in _IADD_ISUB
            and insns[j - 2].opcode in _INT_CONSTANTS):
        load = _local_access(insns[j - 3])
        if load is not None and load[0] == "load":
            return "step", load[1]
    return None


def _chosen_step(insns: Sequence[Instruction], block_of: list[int], k: int) -> tuple[int, int] | None:
    """``(slot, test)`` when the int store ``insns[k]`` ends javac's ``v += c ? a : b`` with constants ``a``,
    ``b``: ``iload v; <c's operands>; if<cond> L1; const; goto L2; L1: const; L2: iadd|isub; [dup;] istore v``,
    the test ``insns[test]`` (whether its operands are invariant is the caller's question), else None. With ``c``
    invariant C2 compiles only the arm its profile saw or unswitches the loop on ``c``, and counts each copy,
    whose step is then a constant (docs/cost-model.md, "A step chosen by an invariant test")."""
    access = _local_access(insns[k])
    if insns[k].opcode not in _ISTORES or access is None:
        return None
    j = k - 1 if k >= 1 and insns[k - 1].opcode == _DUP and block_of[k - 1] == block_of[k] else k
    if j < 6 or insns[j - 1].opcode not in _IADD_ISUB or block_of[j - 1] != block_of[k]:
        return None
    join, second, jump, first_const, test = j - 1, j - 2, j - 3, j - 4, j - 5
    if (block_of[join] != insns[join].offset or insns[second].opcode not in _INT_CONSTANTS
            or block_of[second] != insns[second].offset or insns[jump].opcode not in (GOTO, GOTO_W)
            or insns[jump].successors_targets()[0] != insns[join].offset
            or insns[first_const].opcode not in _INT_CONSTANTS or insns[test].opcode not in _INT_TESTS
            or insns[test].successors_targets()[0] != insns[second].offset
            or block_of[first_const] != insns[first_const].offset or block_of[jump] != block_of[first_const]):
        return None
    return access[1], test


def _uncounted(insns: Sequence[Instruction], block_of: list[int], forest: LoopForest) -> int:
    """:func:`uncounted_loops` over the blocks of :func:`_block_graph` and their loops."""
    index_of = {insn.offset: k for k, insn in enumerate(insns)}
    out = 0
    for loop in forest:
        if loop.children:
            continue  # an outer loop runs its body's loops: its own test runs LOOP_FACTOR times less often
        members = [k for k, insn in enumerate(insns) if block_of[k] in loop.body]
        writes: dict[int, list[tuple[str, int] | None]] = {}  # slot -> what each write in the loop stores
        memory_written = False
        choices: list[tuple[int, int, int]] = []  # (slot, which write, its test): v += c ? a : b
        for k in members:
            insn = insns[k]
            if insn.opcode in _INVOKES or insn.opcode in (_PUTFIELD, _PUTSTATIC):
                memory_written = True
            if insn.opcode == IINC:
                writes.setdefault(insn.arg, []).append(("step", insn.arg))
                continue
            access = _local_access(insn)
            if access is not None and access[0] == "store":
                writes.setdefault(access[1], []).append(_stored(insns, block_of, k))
                chosen = _chosen_step(insns, block_of, k) if writes[access[1]][-1] is None else None
                if chosen is not None:
                    choices.append((access[1], len(writes[access[1]]) - 1, chosen[1]))
        written = set(writes)
        for slot, n, test in choices:  # v += c ? a : b, c invariant: a step by a constant in each unswitched copy
            operands = _test_operands(insns, index_of[block_of[test]], test, set(), written, memory_written)
            if any(v is not _Value.INVARIANT for _, v in operands):
                continue
            start = min(i for i, _ in operands if i >= 0)  # the test's first operand: ``iload v`` just before it
            before = start - 1
            if before >= 0 and block_of[before] == block_of[test] and _local_access(insns[before]) == ("load", slot):
                writes[slot][n] = ("step", slot)

        def steps_itself(slot: int) -> bool:  # every write adds a constant to the slot, directly or by a copy
            return all(w == ("step", slot)
                       or w is not None and w[0] == "copy" and writes.get(w[1]) == [("step", slot)]
                       for w in writes[slot])

        induction = {slot for slot in writes if steps_itself(slot)}
        tests = []
        for k in members:
            insn = insns[k]
            if insn.opcode not in CONDITIONAL_BRANCHES:
                continue
            ways = [insn.successors_targets()[0], insns[k + 1].offset if k + 1 < len(insns) else None]
            if sum(w is not None and w in loop.body for w in ways) != 1:
                continue  # not an exit test of this loop
            tests.append(k)
        int_tests = [k for k in tests if insns[k].opcode in _INT_TESTS]
        if not int_tests:
            continue
        first_of = {k: index_of[block_of[k]] for k in int_tests}
        if not any(set(_loop_test_values(insns, first_of[k], k, induction, written, memory_written))
                   == _COUNTED_TEST for k in int_tests):
            out += 1
    return out


def price_code(code: CodeAttribute, pool: ConstantPool | None = None) -> EmittedCost:
    """The emitted cost of a parsed Code attribute, its ``ldc`` operands read in ``pool`` (the class's)."""
    return price_instructions(decode(code.code), [(x.start, x.end, x.handler) for x in code.exception_table],
                              pool)
