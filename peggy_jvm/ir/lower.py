"""Lowering: :class:`~.nodes.IRMethod` -> bytecode (through the label assembler), with frames and maxes.

Inputs: an IRMethod, the ClassFile it will live in (constants are interned into its append-only pool; an
invokedynamic's bootstrap is found in, or appended to, its BootstrapMethods), the class hierarchy. Output: the
body of a Code attribute (:func:`lower_method`).

How:
- blocks are laid out in id order (the original order for lifted code), so most jumps fall through;
- statements are emitted in their IR order, never reordered. A temporary defined and used once in the same
  block stays on the operand stack if, at its use, it is on top of the stack in operand order (an
  expression tree, as javac emits it; several trees stay pending until a statement takes them all, in order,
  or something else comes, which emits them first); otherwise what must be reordered is stored into a slot
  first;
- variables that came from a local slot keep that slot; other variables used in several blocks (in code
  rebuilt from a PEG also those read more than once) get slots above them, shared by variables that never
  interfere (:func:`.coalesce.interference`), a variable carrying an original local in that local's slot when
  it is free, the most loaded others lowest; single-use temporaries that must be
  stored get slots above those, reused from block to block;
- each operation's opcode comes from :mod:`.opmap` (the table lifting reads the other way round);
- instruction selection picks the short forms (``iconst``, ``bipush``, ``iinc``, compare-and-branch,
  ``tableswitch`` vs ``lookupswitch`` by javac's size rule, ``x < 1`` as ``x <= 0``, ``0 < n`` as ``n > 0``
  (and ``0 < 16`` as ``16 > 0``), ``dup``/``dup2`` for a local loaded twice in a row when that is shorter, and
  in rebuilt code ``store n; load n`` as ``dup; store n`` where that saves a byte (a line-number mark between
  them is no jump target: it stays after the store), two ints or references the stack holds the other way
  round for the statement that reads them as a ``swap`` (:meth:`_Lowerer.swaps`), and the locals a statement
  pushes first loaded under the stack values its operand trees read rather than those values stored and
  loaded back: ``dload s; <t>; dup2; ...`` for ``s = s + (t + t * 0.5)``, :meth:`_Lowerer.load_under`), and in
  rebuilt code a store whose slot no path reads before writing it again dropped (:func:`_drop_unread_stores`);
- a New is written as javac writes it, ``new C; dup; <arguments>; invokespecial``, where its ClassInit (the
  class initialization lifting keeps where the original's ``new`` stood when something observable came before
  the constructor call) starts its tree: every statement between the two computes its arguments
  (:meth:`_Lowerer.pair_class_inits`), what its consumer pushes before it emitted first (``aload_0; getfield;
  new; dup; ...``), also inside an array initializer's chain; otherwise the ClassInit is ``new C; pop`` where it
  stands. A New without one initializes its class after its arguments: an argument tree that may throw or
  touch the heap is emitted (and stored) before its ``new`` unless the class is initialized on every path to it
  (:meth:`_Lowerer.args_before_new`, :func:`_initialized_news`);
- values cross branches on the operand stack where the IR's blocks receive them (``entry_stack``: ``c ? a : b``,
  :meth:`_Lowerer.plan_stack_passing`), and in rebuilt code what a join's first tree pushes before them (a local,
  a constant, a value the test's block computes, the object of a ``new`` whose ClassInit that block runs) is
  pushed by the test's block under its operands and handed through both arms, as javac evaluates a tree's
  operands in order (``aload_0; <test>; iconst_1; goto; iconst_0; putfield``, :meth:`_Lowerer.plan_leads`);
- in rebuilt code an array initializer (a new array filled at constant indices, then read once:
  :func:`_initializers`) is a tree of its own: its creation and stores wait until its consumer pushes it, after
  that consumer's earlier operands, and are emitted there as ``dup; index; value; store`` (``new; dup; ldc;
  iconst_1; anewarray; dup; iconst_0; aload_1; aastore; invokestatic format`` and nested ``new String[][]{{..}}``
  as javac writes them, :meth:`_Lowerer.fill`);
- the exception table is built from runs of consecutive blocks with the same handlers, in handler order;
- frames and maxes come from :func:`peggy_jvm.classfile.recode.build_code_attribute`; a LineNumberTable is
  rebuilt from the statements' origins and the original table (an expression tree gets its root's line);
- the original LocalVariableTable and LocalVariableTypeTable (read from ``method``'s Code attribute) are
  remapped entry by entry, see :func:`remap_local_entries`: an entry survives only where it is still true.

Invariants: the code computes what the IR says, statement by statement and in order. A local-variable entry
(start_pc, length, name, type, index) is kept only when (1) the IR has a variable lifted from slot ``index`` of
the entry's width whose writes are the original code's stores into that slot, statement for instruction (true of
lifted IR; in IR rebuilt from a PEG no variable is lifted from a slot but the parameters), lowering
keeping it in that slot (other variables get slots above every lifted one), (2) the instructions made from statements whose origins lie in
the original range form one contiguous run of the new code, interrupted at most by instructions of no
statement (spills), which becomes the new range (an entry over the whole original code, a parameter's, covers
the whole new code), and (3) no instruction in that run stores a variable into
slot ``index`` (or an overlapping one) that does not belong there. A parameter's entry that fails these (a
parameter of rebuilt code that either code assigns) keeps instead the runs of instructions that no path reaches
after a store into its slot and that come from a statement the original ran before any store into it (or any
such instruction, if the original never writes it), see :func:`_parameter_ranges`. An entry of a local that a
variable of rebuilt code carries (``Var.carries``, a reverted loop's theta) names that variable's slot, see
:func:`_carried_ranges`: inside its loop where the slot holds the theta's value of the current iteration (no
store since the header) at statements the original runs inside its loop before storing into the local in that
iteration. Otherwise an entry is dropped, never emitted wrong.
Entries that come out identical are kept once, and a type-table entry only with its plain-table twin (HotSpot
rejects both otherwise). New ranges start and end at instruction boundaries (the code's end included).
"""
from __future__ import annotations

import struct
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable

import networkx as nx

from ..classfile import opcodes as op
from ..classfile.assembler import Handler as AsmHandler
from ..classfile.assembler import Assembled, Insn, Label, assemble
from ..classfile.attributes import (BootstrapMethod, BootstrapMethods, LineNumberEntry, LineNumberTable,
                                   LocalVariableEntry, LocalVariableTable, LocalVariableTypeEntry,
                                   LocalVariableTypeTable)
from ..classfile.constpool import ConstantPool
from ..classfile.errors import UnsupportedCodeError
from ..classfile.hierarchy import ClassHierarchy
from ..classfile.bytecode import Instruction
from ..classfile.model import Attribute, ClassFile, ExceptionEntry, MethodInfo
from ..classfile.reader import read_code, read_instructions
from ..classfile.recode import build_code_attribute
from .coalesce import _COMMUTATIVE, _MIRROR, interference
from .opmap import REFERENCE_KIND_NUMBERS, Form, const_opcode, opcode_of
from .nodes import (ArrayLength, ArrayLoad, ArrayStore, Binary, Block, Bootstrap, Catch, CheckCast, ClassInit,
                    Cond, Const, ConstKind, Copy, DynamicConst, FieldRef, GetField, GetStatic, Goto, If,
                    InstanceOf, Invoke, InvokeDynamic, InvokeKind, IRMethod, Kind, MethodRef, MonitorEnter,
                    MonitorExit, New, NewArray, PutField, PutStatic, Return, Stmt, Switch, Throw, Unary, Var,
                    type_of_descriptor)


class LowerError(UnsupportedCodeError):
    """The IR cannot be lowered; the message says why."""


_LOAD = {k: opcode_of(Form.LOAD, k) for k in Kind}
_STORE = {k: opcode_of(Form.STORE, k) for k in Kind}
_NEGATE = {Cond.EQ: Cond.NE, Cond.NE: Cond.EQ, Cond.LT: Cond.GE, Cond.GE: Cond.LT, Cond.GT: Cond.LE,
           Cond.LE: Cond.GT}
#: int tests against 1 or -1 that are tests against 0 (x < 1 is x <= 0, x > -1 is x >= 0, ...), looked up by
#: any constant's value
_TO_ZERO: dict[tuple[object, Cond], Cond] = {(1, Cond.LT): Cond.LE, (1, Cond.GE): Cond.GT, (-1, Cond.GT): Cond.GE,
                                             (-1, Cond.LE): Cond.LT}
#: operators whose operands the lowering may take in either order: the int and long ones (exactly), and float and
#: double ``+`` and ``*``, which the axioms take as commutative too (``axioms/arith-float.ax``: ``fadd-comm``, ...)
_COMMUTES = _COMMUTATIVE | frozenset({"add.f", "mul.f", "add.d", "mul.d"})
#: primitive element descriptor -> its ``newarray`` type code
_NEWARRAY_CODE = {desc[1:]: code for code, desc in op.NEWARRAY_TYPES.items()}


def _float_bits(x: float) -> int:
    return struct.unpack(">I", struct.pack(">f", x))[0]


def _double_bits(x: float) -> int:
    return struct.unpack(">Q", struct.pack(">d", x))[0]


def _number(c: Const) -> float:
    """The value of a float or double constant (an int, if one stands there, is the same number to ``struct``)."""
    assert isinstance(c.value, (int, float)), c
    return c.value


def _text(c: Const) -> str:
    """The string of a String, class or method-type constant."""
    assert isinstance(c.value, str), c
    return c.value


class _Lowerer:
    def __init__(self, cf: ClassFile, ir: IRMethod) -> None:
        self.cf = cf
        self.pool: ConstantPool = cf.pool
        self.ir = ir
        # --goal size: slots by use alone (no original local's slot kept for the interpreter's sake)
        self.for_size = False
        self.rebuilt = False  # IR rebuilt from a PEG: no variable lifted from a slot but the parameters
        self.items: list[Insn | Label] = []
        self.labels = {bid: Label(f"B{bid}") for bid in ir.blocks}
        self.slots: dict[int, int] = {}
        self.chains: dict[int, int] = {}  # values dup'ed for each use but the last: uses left
        # arrays created and filled in place, javac's initializers (:func:`_initializers`): id -> their consumer
        self.inits: dict[int, Stmt] = {}
        # id -> its stores, each with its value's tree: the root, and the pending statements under it in order
        self.fills: dict[int, list[tuple[ArrayStore, Stmt | None, list[Stmt]]]] = {}
        self.units_wanted: set[int] = set()  # initializers being emitted for their consumer: kept on the stack
        self.init_of: dict[int, ClassInit] = {}  # per block: id of a New -> the ClassInit it emits (pair_class_inits)
        self.waiting: list[ClassInit] = []  # per block: those whose `new; dup` is not emitted yet
        self.early: dict[int, list[Var]] = {}  # per block: id of a ClassInit -> values stored before it
        self.stmt_index: dict[int, int] = {}  # per block: id of a statement -> its position
        self.defining: dict[int, Stmt] = {}  # per block: id of a variable -> the statement defining it
        self.consumer: dict[int, Stmt] = {}  # per block: id of a variable -> a statement reading it
        self.initialized: set[int] = set()  # News whose class is initialized before them (_initialized_news)
        # stack passing (plan_stack_passing): each block's entry stack, IR entry values and leads (plan_leads)
        self.entry: dict[int, tuple[Var | Const | ClassInit, ...]] = {}
        self.lead_ids: dict[int, set[int]] = {}  # test block -> ids of the leads it pushes for its join
        self.leads_in: dict[int, set[int]] = {}  # arm or join -> ids of the leads it receives
        self.cross_news: dict[int, ClassInit] = {}  # id of a New -> its ClassInit, in its join's test block
        self.cross_inits: dict[int, New] = {}  # the other way round
        self.loaded_leads: set[int] = set()  # leads a test block computes that are read elsewhere too: loaded
        # commutative statements whose operands are taken in the other order (their trees computed, or on the
        # stack, that way round): ids (visit, settle_stack_for)
        self.commuted: set[int] = set()
        self.adj: dict[int, set[int]] | None = None  # coalesce.interference, for color_slots
        # variables coloured after all others (lower_method: their every load and store went in the peepholes
        # of a first lowering, so a low slot is wasted on them), and each variable's loads, stores and iincs
        self.light: frozenset[int] = frozenset()
        self.var_insns: dict[int, list[Insn]] = {}
        self.next_slot = 0
        self.block_slot_base = 0
        self.max_locals = 0
        self.bootstraps: BootstrapMethods | None = None
        self.line_starts: list[int] = []  # the original LineNumberTable, sorted: pcs and their lines
        self.line_numbers: list[int] = []
        self.line_marks: list[tuple[Label, int]] = []
        self.current_line: int | None = None
        self.current_stmt: Stmt | None = None  # whose instruction comes after the operands being pushed
        # for the local-variable tables: the statement origin of each emitted instruction (by id; the Insn is
        # kept with it so the id stays its own), and stores of a variable into a slot it was not lifted from
        self.origin_of: dict[int, tuple[Insn, int]] = {}
        self.foreign_stores: dict[int, tuple[Insn, int, int]] = {}  # id -> (insn, slot, width)
        # stores of variables that carry an original local (Var.carries): id -> (insn, variable id), and their
        # labels once placed
        self.carried_stores: dict[int, tuple[Insn, int]] = {}
        self.carried_marks: list[tuple[Label, int]] = []
        self.handed_on: set[int] = set()  # per block, see lower_block
        self.used_anywhere = {x.id for b in ir.blocks.values() for st in b.all_stmts()
                              for x in st.operands() if isinstance(x, Var)}

    # -- slots ------------------------------------------------------------------------------------------
    def assign_slots(self) -> None:
        ir = self.ir
        top = 0
        for p in ir.params:  # parameters are where the JVM puts them
            slot = p.slot if p.slot is not None else top
            self.slots[p.id] = slot
            top = max(top, slot + (2 if p.type.kind.wide else 1))
        for v in ir.variables:
            if v.slot is not None:
                self.slots[v.id] = v.slot
                top = max(top, v.slot + (2 if v.type.kind.wide else 1))
        # variables used in more than one block (stack variables) get their own slots; the rest are
        # block-local and get slots above those, reused from block to block
        blocks_of: dict[int, set[int]] = {}
        for b in ir.blocks.values():
            for s in b.all_stmts():
                for x in [*s.operands(), s.defined()]:
                    if isinstance(x, Var) and x.id not in self.slots:
                        blocks_of.setdefault(x.id, set()).add(b.id)
        by_id = {v.id: v for v in ir.variables}
        # in code rebuilt from a PEG (no variable lifted from a slot but the parameters), a block-local variable
        # read more than once needs a slot too: it takes part in the colouring, so it can reuse the slot of a
        # variable not live there instead of one above all of them
        params = {p.id for p in ir.params}
        rebuilt = self.rebuilt = all(v.slot is None or v.id in params for v in ir.variables)
        reads: Counter[int] = Counter(x.id for b in ir.blocks.values() for st in b.all_stmts()
                                      for x in st.operands() if isinstance(x, Var))
        self.inits = _initializers(ir) if rebuilt else {}
        self.chains = _dup_chains(ir, self.inits) if rebuilt else {}
        shared = [vid for vid, where in blocks_of.items()
                  if len(where) > 1 or (rebuilt and vid in by_id and reads[vid] > 1 and vid not in self.chains
                                        and vid not in self.inits)]
        self.shared, self.by_id, self.color_base = shared, by_id, top
        top = self.color_slots(shared, by_id, top)
        self.block_slot_base = top
        self.next_slot = top
        self.max_locals = top

    def stack_only(self) -> set[int]:
        """In rebuilt code, the variables that never need a slot across blocks (:meth:`plan_stack_passing`):
        every block defining one defines it once and hands it on on the stack (the copy into it replaced by its
        source, or computed there and kept on the stack), and every block reading it, or whose entry holds it,
        receives it on the stack. A store and load of one, if any, are then within one block (a spill), which a
        block-local slot serves (:meth:`slot_of`)."""
        ir = self.ir
        params = {p.id for p in ir.params}
        ok: dict[int, bool] = {}
        for b in ir.blocks.values():
            held = {x.id for x in self.entry[b.id] if isinstance(x, Var)}
            for vid in held:
                ok.setdefault(vid, True)
                if b.id not in self.receives:
                    ok[vid] = False
            for st in b.all_stmts():
                for x in st.operands():
                    if isinstance(x, Var) and (x.id not in held or b.id not in self.receives):
                        ok[x.id] = False
            exit_ops, copies = self.exits.get(b.id, ([], set()))
            defs = Counter(d.id for st in b.stmts if (d := st.defined()) is not None)
            kept = self.handed_on_of(b, exit_ops) if exit_ops else set()
            for st in b.all_stmts():
                d = st.defined()
                if d is None:
                    continue
                handed = (id(st) in copies) or (not isinstance(st, Copy) and d.id in kept)
                if defs[d.id] != 1 or not handed:
                    ok[d.id] = False
        return {vid for vid, good in ok.items() if good and vid not in self.loaded_leads and vid not in params
                and vid in self.by_id and self.by_id[vid].slot is None and vid not in self.chains
                and vid not in self.inits}

    def handed_on_of(self, b: Block, exit_ops: list) -> set[int]:
        """The variables ``b`` computes and keeps on the stack for its successors (as :meth:`lower_block` sets
        ``handed_on``)."""
        succs = b.successors(include_exceptional=False)
        entry = {w.id for w in self.entry[succs[0]] if isinstance(w, Var)} if succs and self.rebuilt else set()
        return {x.id for x in exit_ops if isinstance(x, Var) and x.id in entry and
                x.id not in self.loaded_leads and any(st.defined() is x for st in b.stmts)}

    def recolor(self) -> None:
        """Slots coloured again without the variables that stay on the stack (:meth:`stack_only`): a slot held
        for none of them pushes the others up (JAMA ``Matrix.identity``: ``astore 8`` for ``astore_2``)."""
        gone = self.stack_only() & set(self.shared)
        if not gone:
            return
        for vid in self.shared:
            del self.slots[vid]
        top = self.color_slots([v for v in self.shared if v not in gone], self.by_id, self.color_base)
        self.block_slot_base = self.next_slot = self.max_locals = top

    def color_slots(self, shared: list[int], by_id: dict[int, Var], base: int) -> int:
        """Slots for variables used in several blocks (and, in rebuilt code, block-local ones read more than
        once), shared by variables that are never live at once (:func:`~.coalesce.interference`: live where
        the other is written). Returns the first slot above them."""
        if not shared:
            return base
        wanted = set(shared)
        ir = self.ir
        if self.adj is None:  # computed once: recolor colours again
            self.adj = interference(ir)
        adj = self.adj
        conflicts: dict[int, set[int]] = {vid: adj.get(vid, set()) & wanted for vid in shared}
        placed: dict[int, tuple[int, int]] = {}  # vid -> (first slot, size)
        # the most loaded and stored variables first, so they get the lowest slots (`iload_3` is one byte,
        # `iload 4` two; an `iinc` is three bytes in any slot below 256); a use inside a loop counts for more
        looping = blocks_on_cycles(ir.blocks)
        weight: Counter[int] = Counter()
        for b in ir.blocks.values():
            for st in b.all_stmts():
                if isinstance(st, Binary) and st.a is st.dst and st.op in ("add.i", "sub.i") \
                        and isinstance(st.b, Const):
                    continue
                for x in [*st.operands(), st.defined()]:
                    if isinstance(x, Var) and x.id in wanted:
                        weight[x.id] += 8 if b.id in looping else 1
        # a variable that carries an original local (a loop's counter or accumulator, Var.carries) first takes
        # that local's own slot when it is free: the original's layout is what the interpreter was measured on
        # (HotSpot's interpreter rewrites frequent pairs such as `iload n; iload m`, so a "shorter" layout of
        # the same loop ran 17-28% slower under -Xint in BenchKernels.trisolv)
        def carried(vid: int) -> int | None:
            c = by_id[vid].carries
            return c.slot if c is not None and c.slot >= base and not self.for_size else None

        def occupied(vid: int) -> set[int]:
            out: set[int] = set()
            for o in conflicts[vid]:
                if o in placed:
                    s0, n0 = placed[o]
                    out.update(range(s0, s0 + n0))
            return out

        def place(vid: int, slot: int) -> None:
            placed[vid] = (slot, size_of(vid))
            self.slots[vid] = slot

        def size_of(vid: int) -> int:
            return 2 if by_id[vid].type.kind.wide else 1

        # a carried variable whose local an earlier one holds takes its turn by weight with the others: it has
        # no claim to a low slot over a variable used more (JAMA's LUDecomposition.solve: a loop counter took
        # slot 2 before the column count its inner loops all test, which went to slot 4, 8 loads a byte longer)
        rest = []
        for vid in sorted((v for v in shared if carried(v) is not None), key=lambda v: (-weight[v], v)):
            own = carried(vid)
            assert own is not None
            if occupied(vid) & set(range(own, own + size_of(vid))):
                rest.append(vid)
            else:
                place(vid, own)
        for vid in sorted([*rest, *(v for v in shared if carried(v) is None)],
                          key=lambda v: (v in self.light, -weight[v], v)):
            taken = occupied(vid)
            slot = base  # the lowest slot (pair) no interfering variable holds: linear in the conflicts
            while slot in taken or (size_of(vid) == 2 and slot + 1 in taken):
                slot += 1
            place(vid, slot)
        return max([base, *(s0 + n0 for s0, n0 in placed.values())])

    def vanished(self) -> frozenset[int]:
        """The coloured variables none of whose loads, stores and iincs is left in ``items`` (after the
        peepholes): ``a[i]`` of ``a[i][j] -= e``, passed on the stack once the second ``a[i]; j`` is a
        ``dup2`` (:func:`_drop_passing_stores`)."""
        left = {id(x) for x in self.items if isinstance(x, Insn)}
        return frozenset(vid for vid in self.shared if vid in self.slots and self.by_id[vid].carries is None
                         and not any(id(x) in left for x in self.var_insns.get(vid, ())))

    def slot_of(self, v: Var) -> int:
        s = self.slots.get(v.id)
        if s is None:  # a block-local variable that has to live in a slot
            s = self.slots[v.id] = self.next_slot
            self.next_slot += 2 if v.type.kind.wide else 1
            self.max_locals = max(self.max_locals, self.next_slot)
        return s

    # -- emission helpers -------------------------------------------------------------------------------
    def emit(self, opcode: int, arg: int = 0, arg2: int = 0, **kw) -> Insn:
        insn = Insn(opcode, arg, arg2, **kw)
        self.items.append(insn)
        st = self.current_stmt
        if st is not None and st.origin >= 0:
            self.origin_of[id(insn)] = (insn, st.origin)
        return insn

    def emit_store(self, v: Var) -> None:
        """Store ``v`` into its slot, noting a store into a slot ``v`` was not lifted from."""
        slot = self.slot_of(v)
        insn = self.emit(_STORE[v.type.kind], slot)
        self.var_insns.setdefault(v.id, []).append(insn)
        if v.slot != slot:
            self.foreign_stores[id(insn)] = (insn, slot, 2 if v.type.kind.wide else 1)
        if v.carries is not None:
            self.carried_stores[id(insn)] = (insn, v.id)

    def push(self, x: Var | Const) -> None:
        if isinstance(x, Var):
            opcode, slot = _LOAD[x.type.kind], self.slot_of(x)
            last = self.items[-1] if self.items else None
            if slot >= 4 and isinstance(last, Insn) and last.opcode == opcode and last.arg == slot:
                # the same local loaded twice in a row: dup is shorter than a second load (`iload 4` is 2 bytes)
                self.emit(op.DUP2 if x.type.kind.wide else op.DUP)
            else:
                self.var_insns.setdefault(x.id, []).append(self.emit(opcode, slot))
        else:
            self.push_const(x)

    def push_const(self, c: Const) -> None:
        k = c.type.kind
        v = c.value
        if c.kind is ConstKind.VALUE:
            short = const_opcode(c)
            if short is not None:
                self.emit(short)
                return
            if k is Kind.INT:
                assert isinstance(v, int)
                if -128 <= v <= 127:
                    self.emit(op.BIPUSH, v)
                elif -32768 <= v <= 32767:
                    self.emit(op.SIPUSH, v)
                else:
                    self.emit(op.LDC, self.pool.add((3, v)))
            elif k is Kind.LONG:
                self.emit(op.LDC2_W, self.pool.add((5, v)))
            elif k is Kind.FLOAT:
                self.emit(op.LDC, self.pool.add((4, _float_bits(_number(c)))))
            elif k is Kind.DOUBLE:
                self.emit(op.LDC2_W, self.pool.add((6, _double_bits(_number(c)))))
            else:
                self.emit(op.LDC, self.pool.add_string(_text(c)))
            return
        index = self.loadable_index(c)
        self.emit(op.LDC2_W if k.wide else op.LDC, index)

    def loadable_index(self, c: Const) -> int:
        """Pool index of a class / method type / method handle / dynamic constant."""
        if c.kind is ConstKind.CLASS:
            return self.pool.add_class(_text(c))
        if c.kind is ConstKind.METHOD_TYPE:
            return self.pool.add((16, self.pool.add_utf8(_text(c))))
        if c.kind is ConstKind.METHOD_HANDLE:
            assert isinstance(c.value, tuple), c  # (reference kind name, MethodRef | FieldRef)
            kind, ref = c.value
            return self.pool.add((15, REFERENCE_KIND_NUMBERS[kind], self.member_index(ref)))
        if c.kind is ConstKind.DYNAMIC:
            d = c.value
            assert isinstance(d, DynamicConst), c
            return self.pool.add((17, self.bootstrap_index(d.bootstrap),
                                  self.pool.add_name_and_type(d.name, d.descriptor)))
        return self.literal_index(c)

    def literal_index(self, c: Const) -> int:
        k = c.type.kind
        if k is Kind.INT:
            return self.pool.add((3, c.value))
        if k is Kind.LONG:
            return self.pool.add((5, c.value))
        if k is Kind.FLOAT:
            return self.pool.add((4, _float_bits(_number(c))))
        if k is Kind.DOUBLE:
            return self.pool.add((6, _double_bits(_number(c))))
        return self.pool.add_string(_text(c))

    def member_index(self, ref: FieldRef | MethodRef) -> int:
        tag = 9 if isinstance(ref, FieldRef) else (11 if ref.interface else 10)
        return self.pool.add_member_ref(tag, ref.owner, ref.name, ref.descriptor)

    def bootstrap_index(self, b: Bootstrap) -> int:
        if self.bootstraps is None:
            attr = next((a for a in self.cf.attributes if a.name == "BootstrapMethods"), None)
            self.bootstraps = BootstrapMethods.parse(attr.data) if attr is not None else BootstrapMethods([])
            self.bootstrap_attr = attr
        want = (self.loadable_index(b.handle), tuple(self.loadable_index(a) for a in b.arguments))
        for k, m in enumerate(self.bootstraps.methods):
            if (m.bootstrap_method_ref, tuple(m.bootstrap_arguments)) == want:
                return k
        self.bootstraps.methods.append(BootstrapMethod(want[0], list(want[1])))
        data = self.bootstraps.to_bytes()
        if self.bootstrap_attr is None:
            self.bootstrap_attr = Attribute(self.pool.add_utf8("BootstrapMethods"), "BootstrapMethods", data)
            self.cf.attributes.append(self.bootstrap_attr)
        else:
            self.bootstrap_attr.data = data
        return len(self.bootstraps.methods) - 1

    # -- values passed on the JVM stack from block to block ------------------------------------------------
    def plan_stack_passing(self) -> None:
        """Blocks that receive their entry stack variables on the JVM stack, as javac passes the operands of a
        conditional expression: every predecessor must be able to leave exactly those values there (its last
        statements copy into them, or it received them itself and leaves them alone), and every successor of
        such a predecessor must receive the same values."""
        ir = self.ir
        preds: dict[int, list[Block]] = {bid: [] for bid in ir.blocks}
        for b in ir.blocks.values():
            for t in b.successors(include_exceptional=False):
                preds[t].append(b)
        self.entry = {bid: tuple(b.entry_stack) for bid, b in ir.blocks.items()}
        leads = self.plan_leads(preds) if self.rebuilt else {}
        while True:
            receives = {bid for bid in ir.blocks if self.entry[bid] and preds[bid] and bid != ir.entry}
            changed = True
            while changed:
                changed = False
                for bid in sorted(receives):
                    if any(self.exit_plan(p, receives) is None for p in preds[bid]):
                        receives.discard(bid)
                        changed = True
            # a join whose leads cannot all be passed gets back the entry the IR gave it (and its arms theirs)
            lost = [j for j, (arms, _, _) in leads.items() if any(x not in receives for x in (j, *arms))]
            if not lost:
                break
            for j in lost:
                arms, head, new = leads.pop(j)
                for x in (j, *arms):
                    self.entry[x] = tuple(ir.blocks[x].entry_stack)
                    self.leads_in.pop(x, None)
                self.lead_ids.pop(head, None)
                if new is not None:
                    del self.cross_inits[id(self.cross_news.pop(id(new)))]
        self.receives = receives
        self.exits: dict[int, tuple[list, set[int]]] = {}
        for b in ir.blocks.values():
            plan = self.exit_plan(b, receives)
            if plan is not None:
                self.exits[b.id] = plan

    def plan_leads(self, preds: dict[int, list[Block]]) -> dict[int, tuple[tuple[int, ...], int, New | None]]:
        """In rebuilt code, what a join's first expression tree pushes before the values it receives on the stack
        (``this.f = c ? 1 : 0``: ``this``; ``a[i] = c ? x : y``: ``a`` and ``i``; ``new C(p, 0, n - (c ? 1 : 0))``:
        the object, ``p``, ``0`` and ``n``) is pushed by the block whose test leads to the join's two arms, under
        the test's operands, and handed through the arms on the stack, as javac evaluates the tree's operands in
        order. Such a lead is a constant, a variable in a slot that nothing writes from the test to the tree (a
        load, which has no effect), or, first, the object of the tree's New whose ClassInit the test block runs:
        its ``new; dup`` is emitted where the ClassInit stands, so class initialization keeps its place among the
        effects, and the statements after it in that block compute above the object. Each lead is read once by
        the tree and nowhere in the arms; the join's own entry values are read once there. Returns join ->
        (arms, test block, the New paired across blocks or None); the entries are in ``self.entry``, the leads'
        ids per pushing block in ``lead_ids`` and per receiving block in ``leads_in``."""
        ir = self.ir
        reads: Counter[int] = Counter(x.id for b in ir.blocks.values() for st in b.all_stmts()
                                      for x in st.operands() if isinstance(x, Var))
        out: dict[int, tuple[tuple[int, ...], int, New | None]] = {}
        for jid in sorted(ir.blocks):
            j = ir.blocks[jid]
            e, ps = j.entry_stack, preds[jid]
            if not e or jid == ir.entry or len(ps) != 2 or ps[0] is ps[1]:
                continue
            if any(len(preds[p.id]) != 1 for p in ps) or preds[ps[0].id][0] is not preds[ps[1].id][0]:
                continue
            h = preds[ps[0].id][0]
            t = h.terminator
            if h.id in (jid, ps[0].id, ps[1].id) or not isinstance(t, If) \
                    or {t.if_true, t.if_false} != {ps[0].id, ps[1].id} or h.id in self.lead_ids:
                continue
            if any(not isinstance(p.terminator, Goto) or p.entry_stack != e[:-1] for p in ps):
                continue
            tree = _first_tree(j, lambda d: reads[d.id] == 1 and d.id not in self.slots)
            if tree is None:
                continue
            root, members = tree
            seq = _static_pushes(root, members)
            at = next((k for k in range(len(seq) - len(e) + 1)
                       if all(seq[k + n] is e[n] for n in range(len(e)))), None)
            if not at:
                continue
            operands = [x for st in members.values() for x in st.operands()]
            if any(sum(x is v for x in operands) != 1 for v in e):
                continue  # an entry value read twice would be stored from under the leads
            lead: list[Var | Const | ClassInit] = []
            loaded: set[int] = set()
            new: New | None = None
            init: ClassInit | None = None
            for k, x in enumerate(seq[:at]):
                if isinstance(x, New):  # (a test block that receives values has them under the object)
                    init = self.initializes_first(h, x) if not k and not h.entry_stack else None
                    if init is None:
                        break
                    new = x
                    lead.append(init)
                elif isinstance(x, Const) or (isinstance(x, Var) and x.id in self.slots and x.id not in self.chains
                                              and x.id not in self.inits and all(x is not v for v in e)
                                              and not any(st.defined() is x for st in members.values())):
                    if sum(y is x for y in operands) != 1 or any(self.reads(p, x) for p in ps):
                        break
                    if isinstance(x, Var) and any(st.defined() is x for st in h.stmts) and reads[x.id] != 1:
                        loaded.add(x.id)  # read elsewhere too: stored where computed, loaded for the tree
                    lead.append(x)
                else:
                    break
            else:
                self.entry[jid] = (*lead, *e)
                for p in ps:
                    self.entry[p.id] = (*lead, *p.entry_stack)
                    self.leads_in[p.id] = {id(x) for x in lead}
                self.leads_in[jid] = {id(x) for x in lead}
                self.lead_ids[h.id] = {id(x) for x in lead}
                self.loaded_leads |= loaded
                if new is not None and init is not None:
                    self.cross_news[id(new)] = init
                    self.cross_inits[id(init)] = new
                out[jid] = ((ps[0].id, ps[1].id), h.id, new)
        return out

    def initializes_first(self, h: Block, new: New) -> ClassInit | None:
        """The ClassInit in ``h`` (the block whose test leads to ``new``'s block through two arms, so it runs
        before ``new`` on every path) that can be ``new``'s ``new; dup``: its own, or (the reverter pairs a New
        with a ClassInit of an earlier block with none) the latest one of its class no New claims, which
        initializes the class there (the New would initialize nothing more). Nothing before it in ``h`` may
        leave a value on the stack (each result goes to its slot), and no New of ``h`` takes it."""
        if new.init is not None:
            init: ClassInit | None = new.init
        else:
            claimed = {id(st.init) for b in self.ir.blocks.values() for st in b.stmts
                       if isinstance(st, New) and st.init is not None}
            init = next((st for st in reversed(h.stmts) if isinstance(st, ClassInit) and st.cls == new.cls
                         and id(st) not in claimed), None)
        at = next((k for k, st in enumerate(h.stmts) if st is init), None)
        if at is None or init is None or id(init) in self.cross_inits:
            return None
        for st in h.stmts[:at]:
            d = st.defined()
            if d is not None and (d.id not in self.slots or d.id in self.chains or d.id in self.inits):
                return None
        if any(isinstance(st, New) and st.cls == new.cls and st.init is None for st in h.stmts[at:]):
            return None
        return init

    def exit_plan(self, b: Block, receives: set[int]) -> tuple[list, set[int]] | None:
        """(operands the terminator leaves on the stack for its successors, ids of the copies they replace)."""
        succs = b.successors(include_exceptional=False)
        if not succs or any(t not in receives for t in succs):
            return None
        want = self.entry[succs[0]]
        if any(self.entry[t] != want for t in succs):
            return None
        copies: dict[int, Copy] = {}
        k = len(b.stmts)
        while k > 0:
            last = b.stmts[k - 1]
            if not (isinstance(last, Copy) and any(last.dst is w for w in want) and last.dst.id not in copies):
                break
            copies[last.dst.id] = last
            k -= 1
        ops: list = []
        own = self.entry[b.id]
        for d, w in enumerate(want):
            c = copies.get(w.id) if isinstance(w, Var) else None
            if c is not None:
                ops.append(c.src)
            elif b.id in receives and d < len(own) and own[d] is w and not self.reads(b, w):
                ops.append(w)  # received on the stack and handed on untouched
            elif id(w) in self.lead_ids.get(b.id, set()) and (
                    not isinstance(w, Var) or not any(st.defined() is w for st in b.stmts) or w.id in self.loaded_leads
                    or (sum(st.defined() is w for st in b.stmts) == 1 and not self.reads_only(b, w))):
                # a lead its successors receive: pushed here, under the test's operands (plan_leads): a constant,
                # a load, or a value computed here (once) and read only after the branch
                ops.append(w)
            elif not isinstance(w, Var):
                return None
            elif self.rebuilt and sum(st.defined() is w for st in b.stmts) == 1 and not self.reads_only(b, w):
                # computed here and read only after the branch (``31 * h + (c ? 1 : 0)``, the reverter's
                # tidying asks for it: revert/tidy._values_into_joins); lifted code keeps javac's passing
                ops.append(w)
            else:
                return None
        return ops, {id(c) for c in copies.values()}

    @staticmethod
    def reads_only(b: Block, v: Var) -> bool:
        return any(x is v for st in b.all_stmts() for x in st.operands())

    @staticmethod
    def reads(b: Block, v: object) -> bool:
        return any(x is v for st in b.all_stmts() for x in st.operands()) or \
            any(st.defined() is v for st in b.stmts)

    # -- blocks -----------------------------------------------------------------------------------------
    def lower(self) -> None:
        self.assign_slots()
        self.plan_stack_passing()
        if self.rebuilt:
            self.recolor()
        self.initialized = _initialized_news(self.ir)
        order = self.ir.block_order()
        for pos, block in enumerate(order):
            nxt = order[pos + 1].id if pos + 1 < len(order) else None
            self.next_slot = self.block_slot_base
            self.lower_block(block, nxt)

    def lower_block(self, block: Block, nxt: int | None) -> None:
        if block.terminator is None:
            raise LowerError(f"block B{block.id} without a terminator")
        self.items.append(self.labels[block.id])
        stmts = block.all_stmts()
        uses: Counter[int] = Counter()
        for st in stmts:
            for x in st.operands():
                if isinstance(x, Var):
                    uses[x.id] += 1
        exit_ops, exit_copies = self.exits.get(block.id, ([], set()))
        # values this block computes and hands on to its successors on the stack: kept there like a tree's
        # (the successors' own entry variables: a copy's source handed on in place of its copy is not one)
        succs = block.successors(include_exceptional=False)
        entry = {w.id for w in self.entry[succs[0]] if isinstance(w, Var)} if succs and self.rebuilt else set()
        self.handed_on = {x.id for x in exit_ops if isinstance(x, Var) and x.id in entry and
                          x.id not in self.loaded_leads and any(st.defined() is x for st in block.stmts)}
        self.block_uses = uses
        self.local_only = {vid for vid in uses if vid not in self.slots}
        # the values on the JVM stack, bottom first; a ClassInit stands for the object it left there (`new; dup`)
        self.estack: list[Var | Const | ClassInit] = []
        self.pending: list[Stmt] = []  # deferred statements whose single-use results feed what follows
        self.pending_by_dst: dict[int, Stmt] = {}
        # where the code of each value on the stack begins (by id of its variable): a local can be loaded there,
        # under it (:meth:`load_under`)
        self.est_start: dict[int, int] = {}
        self.loaded_under: tuple[Stmt, int, int] | None = None
        self.spill_floor = 0
        self.above = 0  # operands_in: operands pushed above the stack's model for the statement being emitted
        self.init_of, self.early = {}, {}
        self.paired = self.pair_class_inits(block)
        self.waiting = [c for c in block.stmts if isinstance(c, ClassInit) and id(c) in self.paired]
        for st in block.stmts:  # a New whose class its join's test block initialized (plan_leads): `new; dup` there
            if isinstance(st, New) and id(st) in self.cross_news:
                self.init_of[id(st)] = self.cross_news[id(st)]
        if block.id in self.receives:
            self.estack = list(self.entry[block.id])
            handed_on = {id(x) for x in exit_ops}
            # a lead (a constant, a local, the object of a `new`) is taken by the first tree (plan_leads)
            leads = self.leads_in.get(block.id, set())
            if any(isinstance(v, Var) and id(v) not in leads and uses[v.id] + (id(v) in handed_on) != 1
                   for v in self.estack):
                self.spill_from(0)  # read twice, or not at all: they go to their slots first
        self.exit_ops = exit_ops
        for st in block.stmts:
            if id(st) not in exit_copies:
                self.visit(st)
        self.visit(block.terminator, nxt)
        if self.estack or self.pending:
            raise LowerError(f"values left on the stack at the end of block B{block.id}")

    def visit(self, st: Stmt, nxt: int | None = None) -> None:
        """Defer or emit one statement. A statement whose result is a single-use temporary is deferred while
        the statements after it consume the deferred results in order (an expression tree); it is emitted,
        leaves first, by its consumer. Anything else first emits what is pending, in order."""
        deferred = [x for x in self.operands_of(st) if isinstance(x, Var) and x.id in self.pending_by_dst]
        # the trees pending so far, in order: ``st`` may take the last of them as its deferred operands (a tree
        # nested in another is not a root: ``t = a[i]; u = b[j]; w = c * u; v = t + w`` keeps t and w pending);
        # a statement emitted now must take all of them, or those left would be emitted after it; anything else
        # emits them first, in order
        inner = {x.id for p in self.pending for x in p.operands() if isinstance(x, Var)}
        roots = [d for d in map(_pending_dst, self.pending) if d.id not in inner]
        if isinstance(st, ClassInit) and id(st) in self.paired:
            return  # emitted as its New's `new; dup` (:meth:`pair_class_inits`), nothing flushed for it
        dst = st.defined()
        keep = dst if dst is not None and self.stackable(dst) and not isinstance(st, Catch) else None
        if isinstance(st, Binary) and st.op in _COMMUTES and type(st.a) is Var and type(st.b) is Var \
                and deferred == [st.a, st.b] and st.a is not st.b \
                and (roots[len(roots) - 2:] if keep is not None else roots) == [st.b, st.a]:
            # `eps * (max(m, n) * s[0])` with `eps` computed first: the operands in the order their trees were
            # (JAMA SingularValueDecomposition.rank: two doubles stored and loaded back)
            self.commuted.add(id(st))
            deferred = [st.b, st.a]
        if isinstance(st, NewArray) and st.dst.id in self.inits:
            keep = st.dst  # emitted, filled, where its consumer pushes it
        elif self.fill(st, roots):
            return
        if (roots[len(roots) - len(deferred):] if keep is not None else roots) != deferred:
            self.flush()
        if keep is not None:
            self.pending.append(st)
            self.pending_by_dst[keep.id] = st
            return
        self.class_inits_before(st)
        self.settle_stack_for(st)
        if isinstance(st, (Goto, If, Switch, Return, Throw)):
            self.mark_line(st)
            self.current_stmt = st
            self.lower_terminator(st, nxt)
            self.current_stmt = None
        else:
            self.lower_stmt(st)

    def fill(self, st: Stmt, roots: list[Var]) -> bool:
        """A store of a constant index into an initializer array still pending (:func:`_initializers`) is kept
        with it, its value's tree too, when they are the last trees pending (in the order the store pushes
        them): emitted after the array's creation as ``dup; index; value; store``, where the array's consumer
        pushes it (``new String[][]{{"a", "b"}}``, ``new E(String.format(f, new Object[]{x}))``, as javac).
        Only what comes after the array in the statements' order moves with it, and only stores into the new
        array, which nothing else reads before its consumer, wait: effects keep their order."""
        if not (isinstance(st, ArrayStore) and type(st.array) is Var and st.array.id in self.inits
                and st.array.id in self.pending_by_dst and isinstance(st.index, Const)):
            return False
        val = st.value
        tree = self.pending_by_dst.get(val.id) if type(val) is Var else None
        want = [st.array] if tree is None else [st.array, val]
        if roots[len(roots) - len(want):] != want:
            return False
        if type(val) is Var and tree is None and (val.id not in self.slots or val.id in self.chains
                                                  or any(v is val for v in self.estack)):
            return False  # a value in its slot is loaded where the store is emitted; nothing writes it before
        if tree is not None and self.reads_stack(tree):
            return False  # what it reads would have to be stored from under the array, its index and its copy
        under: list[Stmt] = []
        if tree is not None:  # the tree leaves the pending ones, the statements under it too (held for it)
            order = {id(c): k for k, c in enumerate(self.pending)}
            self.pending.remove(tree)
            del self.pending_by_dst[_pending_dst(tree).id]
            work = [tree]
            while work:
                for x in work.pop().operands():
                    child = self.pending_by_dst.pop(x.id, None) if type(x) is Var else None
                    if child is not None:
                        self.pending.remove(child)
                        under.append(child)
                        work.append(child)
            under.sort(key=lambda c: order[id(c)])
        self.fills.setdefault(st.array.id, []).append((st, tree, under))
        return True

    def reads_stack(self, st: Stmt) -> bool:
        """Whether ``st`` or a pending statement under it reads a value on the stack."""
        on_stack = {id(v) for v in self.estack}
        work = [st]
        while work:
            for x in work.pop().operands():
                if id(x) in on_stack:
                    return True
                child = self.pending_by_dst.get(x.id) if type(x) is Var else None
                if child is not None:
                    work.append(child)
        return False

    def emit_fills(self, arr: Var) -> None:
        """The stores :meth:`fill` kept with the initializer ``arr``, just created (on the stack, modelled)."""
        est = self.estack
        for store, tree, under in self.fills.pop(arr.id, []):
            outer, floor = self.current_stmt, self.spill_floor
            self.current_stmt = store
            self.mark_line(store)
            self.emit(op.DUP)
            est.append(arr)
            assert isinstance(store.index, Const)
            self.push_const(store.index)
            # nothing under the index (not in the model) may be stored from the stack while the value is computed
            self.spill_floor = len(est)
            try:
                if tree is not None:
                    v = tree.defined()
                    assert v is not None
                    if isinstance(tree, NewArray) and v.id in self.inits:
                        self.units_wanted.add(v.id)
                    for c in under:  # pending again, for the tree to take as its operands
                        self.pending.append(c)
                        self.pending_by_dst[_pending_dst(c).id] = c
                    self.lower_stmt(tree)
                    if est.pop() is not v:
                        raise LowerError("an initializer's value is not on top of the stack")
                else:
                    self.push(store.value)
            finally:
                self.spill_floor = floor
            self.emit(opcode_of(Form.ARRAY_STORE, store.elem))
            est.pop()
            self.current_stmt = outer
        est.pop()

    def mark_line(self, st: Stmt) -> None:
        """Start a line-number entry where the source line changes (a tree gets the line of its root)."""
        if st.origin < 0 or not self.line_starts:
            return
        k = bisect_right(self.line_starts, st.origin) - 1
        if k < 0:
            return
        line = self.line_numbers[k]
        if line != self.current_line:
            label = Label()
            self.items.append(label)
            self.line_marks.append((label, line))
            self.current_line = line

    def operands_of(self, st: Stmt) -> list:
        """A statement's operands; a terminator also pushes what it hands on to its successors, first."""
        if isinstance(st, (Goto, If, Switch, Return, Throw)):
            return [*self.exit_ops, *st.operands()]
        if id(st) in self.commuted:
            assert isinstance(st, Binary)
            return [st.b, st.a]
        return st.operands()

    def pushes(self, st: Stmt) -> list:
        """What emitting ``st`` (with its deferred operands, recursively) pushes, in order; None stands for
        what is pushed before the operands (``new; dup``), or the ClassInit that pushes it."""
        out: list = [self.init_of.get(id(st))] if isinstance(st, New) else []
        for x in self.operands_of(st):
            child = self.pending_by_dst.get(x.id) if isinstance(x, Var) else None
            out.extend(self.pushes(child) if child is not None else [x])
        if not isinstance(st, New) and st.defined() is not None:
            out.append(st)  # the statement's own result is pushed after its operands
        return out

    def settle_stack_for(self, st: Stmt) -> None:
        """Values already on the stack that ``st``'s tree reads must be its first pushes, in stack order;
        otherwise they would be buried under other operands, so they are stored into slots first."""
        if not self.estack:
            return
        seq = self.pushes(st)
        on_stack = {id(v) for v in self.estack}
        used = [x for x in seq if id(x) in on_stack]  # a lead constant or object too (plan_leads)
        if not used:
            return
        if self.takes_top(seq, used):
            return
        est = self.estack
        if isinstance(st, Binary) and st.op in _COMMUTES and len(used) == 2 and used[0] is st.a \
                and used[1] is st.b and st.a is not st.b and len(est) >= 2 and est[-1] is st.a and est[-2] is st.b \
                and not any(isinstance(x, Var) and x.id in self.chains for x in used):
            self.commuted.add(id(st))  # both on the stack the other way round: taken so
            return
        # an object under construction stays where it is (its New takes it: `new; dup` under the arguments)
        used = [x for x in used if not isinstance(x, ClassInit)]
        if not used:
            return
        if all(isinstance(x, Var) for x in used) and (self.swaps(seq, used) or self.load_under(st, used)):
            return
        self.spill_from(min(d for d, v in enumerate(self.estack) if id(v) in {id(u) for u in used}))

    def takes_top(self, seq: list, used: list[Var]) -> bool:
        """Whether the pushes ``seq`` begin with the stack values ``used`` (all it reads off the stack), and they
        are its top entries in that order. A value ``dup``ed for each use (a chain, :func:`_dup_chains`) read by
        a statement as its first operand and again first by the tree of its next operand is one entry: the
        statement ``dup``s it."""
        k = len(used)
        if any(a is not b for a, b in zip(seq[:k], used)) or len(seq) < k:
            return False
        entries = [x for n, x in enumerate(used)
                   if not (n and used[n - 1] is x and isinstance(x, Var) and x.id in self.chains)]
        return all(a is b for a, b in zip(self.estack[len(self.estack) - len(entries):], entries)) \
            and len(self.estack) >= len(entries)

    def swaps(self, seq: list, used: list[Var]) -> bool:
        """In rebuilt code, the pushes ``seq`` begin with the stack's top two values the other way round (all it
        reads off the stack; each an int or a reference, read once): one ``swap`` puts them in order, where
        storing both and loading them back takes four instructions (``x.equals(y)`` of two calls' results made
        in the other order). Never for a float (the interpreter stalls on a float it just spilled,
        ``FLOAT_SPILL_EXTRA``) nor a long or double (no ``swap`` for two-word values)."""
        est = self.estack
        if not self.rebuilt or len(used) != 2 or seq[:2] != used or len(est) < 2 or used[0] is used[1] \
                or est[-1] is not used[0] or est[-2] is not used[1]:
            return False
        if any(x.type.kind not in (Kind.INT, Kind.REF) or x.id in self.chains for x in used):
            return False
        self.emit(op.SWAP)
        est[-2:] = used
        for x in used:  # their code no longer ends in stack order: nothing is loaded under them
            self.est_start.pop(id(x), None)
        return True

    def load_under(self, st: Stmt, used: list[Var]) -> bool:
        """``s = s + t * 0.5`` with ``t`` already on the stack (a value ``dup``ed for two uses): the locals
        ``st`` pushes first are loaded where the code of the stack values it reads begins, under them, rather
        than those values stored and loaded again (javac's tree order: ``dload s; <t>; dup2; ...``). Only
        statements that push their own operands in order, in rebuilt code, and only when nothing between that
        point and here writes those locals' slots (the load then reads the same value) and the code there does
        not begin with a ``dup`` of the instruction before it. On success :meth:`operands_in` takes the loaded
        locals from under the values ``st``'s operand trees read (``loaded_under``)."""
        if not self.rebuilt or not isinstance(st, (Binary, ArrayStore, PutField)):
            return False
        ops, est = st.operands(), self.estack
        on_stack = {id(v) for v in est}
        lead: list[Var] = []
        for x in ops:
            if not (isinstance(x, Var) and id(x) not in on_stack and x.id not in self.pending_by_dst
                    and x.id in self.slots and x.id not in self.chains):
                break
            lead.append(x)
        if not lead or not self.takes_top(self.pushes(st)[len(lead):], used):
            return False
        entries = [x for n, x in enumerate(used) if not (n and used[n - 1] is x and x.id in self.chains)]
        at = self.est_start.get(id(entries[0]))
        if at is None or at >= len(self.items):
            return False
        first = self.items[at]
        if isinstance(first, Insn) and first.opcode in (op.DUP, op.DUP2):
            return False
        held = {self.slots[x.id] + w for x in lead for w in range(2 if x.type.kind.wide else 1)}
        for y in self.items[at:]:
            if isinstance(y, Insn) and (y.opcode in _STORE_OPS or y.opcode == op.IINC) \
                    and {y.arg, y.arg + (y.opcode in _TWO_WORD_STORES)} & held:
                return False
        loads = [Insn(_LOAD[x.type.kind], self.slots[x.id]) for x in lead]
        for x, insn in zip(lead, loads):
            self.var_insns.setdefault(x.id, []).append(insn)
        if st.origin >= 0:
            for insn in loads:
                self.origin_of[id(insn)] = (insn, st.origin)
        self.items[at:at] = loads
        for key, where in self.est_start.items():
            if where >= at:
                self.est_start[key] = where + len(loads)
        depth = len(est) - len(entries)
        est[depth:depth] = lead
        self.loaded_under = (st, len(lead), len(entries))
        return True

    def flush(self) -> None:
        """Emit the pending statements in order; their values stay on the stack."""
        # only the roots: a pending statement whose result another pending statement reads is emitted inside
        # that one (its leaves first), which keeps the post-order, i.e. the original order of statements
        inner = {x.id for st in self.pending for x in st.operands() if isinstance(x, Var)}
        roots = [st for st in self.pending if _pending_dst(st).id not in inner]
        for st in roots:
            self.pending.remove(st)
            del self.pending_by_dst[_pending_dst(st).id]
            self.class_inits_before(st)
            self.settle_stack_for(st)
            self.lower_stmt(st)
        assert not self.pending and not self.pending_by_dst

    def class_inits_before(self, st: Stmt) -> None:
        """Before ``st`` is emitted on its own (not by the tree that takes it): the ``new; dup`` of each paired
        ClassInit not yet emitted that comes before everything ``st``'s expression tree computes, when that tree
        does not hold its New (which emits it, :meth:`lower_new`: what the tree pushes before the New comes
        first, and a load of a local is no statement to see here). Such a tree is one of the New's operand
        trees, emitted before the New by a flush (the operands in another order than the pending trees, an
        earlier tree its consumer does not take), or a statement after the New, which then took it or flushed
        it already. The object stays on the stack under them, as javac leaves it: the New takes them from
        above it."""
        if not self.waiting:
            return
        tree = self.tree_of(st)
        first = min(self.stmt_index.get(k, -1) for k in tree)
        for init in [c for c in self.waiting if self.stmt_index[id(c)] < first and id(self.paired[id(c)]) not in tree]:
            if self.pushed_first(self.paired[id(init)]):
                self.emit_class_init(init)
            else:
                # what the New's consumer pushes before it would be loaded above the object: the class is
                # initialized here, apart (`new; pop`), and the New writes its own `new; dup` after it
                del self.init_of[id(self.paired.pop(id(init)))]
                self.waiting.remove(init)
                self.lower_stmt(init)

    def pushed_first(self, new: New) -> bool:
        """Whether the expression tree ``new`` is part of pushes its object before anything else (the object
        sits under nothing its consumers push: ``new; dup`` may then come before the tree is emitted)."""
        root: Stmt = new
        while (v := root.defined()) is not None and self.stackable(v) and v.id in self.consumer:
            root = self.consumer[v.id]
        while root is not new:
            ops = self.operands_of(root)  # a terminator pushes what it hands on first
            if isinstance(root, New) or not ops or not isinstance(ops[0], Var):
                return False
            d = self.defining.get(ops[0].id)
            if d is None or not self.stackable(ops[0]):
                return False
            root = d
        return True

    def tree_of(self, st: Stmt) -> set[int]:
        """Ids of the statements of ``st``'s expression tree in the block: ``st`` and, through the values kept on
        the stack (single-use, ``dup``ed, initializers), what computes its operands."""
        seen, work = {id(st)}, [st]
        while work:
            for x in work.pop().operands():
                d = self.defining.get(x.id) if isinstance(x, Var) and (self.stackable(x) or x.id in self.chains
                                                                       or x.id in self.inits) else None
                if d is not None and id(d) not in seen:
                    seen.add(id(d))
                    work.append(d)
        return seen

    def pair_class_inits(self, block: Block) -> dict[int, New]:
        """ClassInits lowered as javac does, as the ``new C; dup`` their New emits before its arguments (``id`` of
        the ClassInit -> its New): every statement between them computes the New's arguments (its operand trees,
        an array initializer with its stores), and none of those trees began before the ClassInit. (Others
        become ``new C; pop`` where they stand.)

        Why this keeps the order of every effect, class initialization included: the statements from the
        ClassInit to its New are then exactly the New's operand trees, in the IR's order, preceded by the
        ClassInit. A deferred tree is emitted whole (its statements in their IR order: operand trees in
        operand order, each before its consumer) either by the statement that takes it, which takes every
        pending tree after those before it, or at a flush, which emits them all in order (:meth:`visit`); so
        nothing that comes after the ClassInit is emitted before the New's tree, and nothing before it after
        that tree's ``new``. Emitting the ClassInit as the tree's first instruction (``new; dup`` before its
        arguments) keeps that order. What the New's consumer pushes before it (``this`` as a receiver, a field
        read before the ``new``: ``aload_0; getfield; new; dup; ...``) is emitted before, as javac does; it
        was computed before the ClassInit, or is a load of a local, which has no effect."""
        if block.id in self.receives:  # values received on the stack may have to be stored from under it
            handed = {id(x) for x in self.exits.get(block.id, ([], set()))[0]}
            # unless the block hands them all on untouched (an arm of ``list.add(c ? new A(..) : new B(..))``)
            if any(id(v) not in handed or self.reads(block, v) for v in self.entry[block.id]):
                return {}
        stmts = block.all_stmts()
        index = self.stmt_index = {id(st): k for k, st in enumerate(stmts)}
        defining = self.defining = {v.id: st for st in stmts if (v := st.defined()) is not None}
        self.consumer = {x.id: st for st in stmts for x in st.operands() if isinstance(x, Var)}
        out: dict[int, New] = {}
        # a New the reverter did not pair with its ClassInit (it pairs the latest one: `new Loud(new Noisy[]{new
        # Noisy(..)})` has Noisy's in between) takes the latest ClassInit of its class before it that no New
        # claims: the class is initialized there, and the New initializes nothing more
        claimed = {id(st.init) for st in stmts if isinstance(st, New) and st.init is not None}
        latest: dict[str, ClassInit] = {}
        for st in block.stmts:
            if isinstance(st, ClassInit) and id(st) not in claimed:
                latest[st.cls] = st
            if not isinstance(st, New):
                continue
            init = st.init if st.init is not None else latest.pop(st.cls, None)
            if init is None or id(init) not in index:
                continue
            at = index[id(init)]
            owned: set[int] = set()
            early: list[Var] = []  # single-use values computed before the ClassInit that its arguments read
            work: list[Stmt] = [st]
            while work:
                cur = work.pop()
                for x in cur.operands():
                    if not isinstance(x, Var):
                        continue
                    d = defining.get(x.id)
                    if d is not None and self.stackable(x) and x.id not in self.inits and index[id(d)] < at:
                        early.append(x)  # stored before the `new` (emit_class_init), as javac's local
                    elif d is not None and (self.stackable(x) or x.id in self.inits) and id(d) not in owned:
                        owned.add(id(d))
                        work.append(d)
                        if isinstance(d, New) and id(d) in self.init_of:
                            owned.add(id(self.init_of[id(d)]))  # an inner New's `new; dup`, emitted by it
                        if x.id in self.inits:  # its stores, and their values' trees, are part of it
                            for y in stmts:
                                if isinstance(y, ArrayStore) and y.array is x and id(y) not in owned:
                                    owned.add(id(y))
                                    work.append(y)
            between = stmts[at + 1:index[id(st)]]
            if not all(id(b) in owned for b in between) or any(index[k] < at for k in owned if k in index):
                continue
            # a value dup'ed for each use computed before the ClassInit and read inside the arguments would be on
            # the stack under the new object
            if any(isinstance(x, Var) and x.id in self.chains and x.id in defining
                   and index[id(defining[x.id])] < at
                   for d in [st, *between] for x in d.operands()):
                continue
            out[id(init)] = st
            self.init_of[id(st)] = init
            self.early[id(init)] = sorted(early, key=lambda v: index[id(defining[v.id])])
        return out

    def emit_class_init(self, init: ClassInit) -> None:
        """A paired ClassInit's ``new; dup``: first the values its New's arguments read that were computed before
        it (``early``, :meth:`pair_class_inits`) go to their slots (their trees emitted now if still deferred),
        so that neither they run after the ``new`` nor the object sits on top of them (``split(..)`` before
        ``new LinkedHashSet(Arrays.asList(parts))``: ``astore_1; new; dup; aload_1``, as javac)."""
        for x in self.early.get(id(init), []):
            st = self.pending_by_dst.pop(x.id, None)
            if st is not None:
                self.pending.remove(st)
                self.lower_stmt(st)
                if self.estack and self.estack[-1] is x:
                    self.estack.pop()
                    self.emit_store(x)
            else:
                depth = next((k for k, v in enumerate(self.estack) if v is x), None)
                if depth is not None:
                    self.spill_from(depth)
        self.lower_stmt(init)

    def stackable(self, v: Var | None) -> bool:
        return v is not None and ((v.id in self.local_only and self.block_uses[v.id] == 1) or
                                  v.id in self.handed_on)

    def operands_in(self, ops: list) -> None:
        """Push ``ops`` in order. Values already on the stack are used in place when they are its top entries
        in this order; deferred statements are emitted where their value is needed; if an operand is buried
        deeper in the stack, the stack is stored into slots from there up first."""
        est = self.estack
        if self.above and est and self.reads_stack_in(ops):
            # the operands pushed before these are not in the model: nothing under them can be taken in place
            # or stored (the caller makes whatever its later operands read its own: ``need`` below)
            raise LowerError("a value on the stack is read from under operands pushed above it")
        first = ops[0] if ops else None
        if isinstance(first, Var) and self.chains.get(first.id, 0) > 1 and est and est[-1] is first:
            # a value all of whose uses take it first (``new int[2]`` filled in place): javac's dup
            self.emit(op.DUP2 if first.type.kind.wide else op.DUP)
            est.append(first)
        for x in ops:
            if isinstance(x, Var) and x.id in self.chains:
                self.chains[x.id] -= 1
        floor, above = self.spill_floor, self.above
        if self.loaded_under is not None and self.loaded_under[0] is self.current_stmt:
            ops = self.take_loaded_under(ops)
        try:
            j = 0
            for cand in range(min(len(ops), len(est)), 0, -1):
                if all(est[len(est) - cand + i] is ops[i] for i in range(cand)):
                    j = cand
                    break
            # what the operands not on top read off the stack: themselves (a lead constant too, plan_leads), and
            # what the trees of all but the first of them read, as those run above the operands pushed before
            # them (``1.0 / (n * (c ? n - 1 : n))``: `1.0` and `n` pushed before the test, the second operand's
            # tree reads `n` and the conditional's value; commons-math3 VectorialCovariance.getResult)
            need = {id(x) for x in ops[j:]}
            for x in ops[j + 1:] if est else ():  # (an empty stack: nothing to look for)
                tree = self.pending_by_dst.get(x.id) if isinstance(x, Var) else None
                if tree is not None:
                    need.update(id(y) for y in self.pushes(tree))
            deepest = next((d for d in range(len(est) - j) if id(est[d]) in need), None)
            nested = self.under_a_tree(ops) if deepest is not None else None
            if nested is not None:
                # ``this.f = a & (c ? 1 : 0)`` with `this`, `a` and the conditional on the stack: the direct
                # operands leave the model, the tree takes the entries above them
                j, u = nested
                del est[len(est) - u - j:len(est) - u]
                self.spill_floor = max(self.spill_floor, len(est) - u)
            else:
                if deepest is not None:
                    self.spill_from(deepest)  # this also stores the j entries above it
                    j = 0
                del est[len(est) - j:]
            for x in ops[j:]:
                self.push_operand(x)
                self.above += 1
        finally:
            self.spill_floor, self.above = floor, above
        if self.current_stmt is not None:  # the statement's own instruction follows: its line again
            self.mark_line(self.current_stmt)

    def reads_stack_in(self, ops: list) -> bool:
        """Whether ``ops``, or the deferred trees that compute them, read a value of the stack's model."""
        on_stack = {id(v) for v in self.estack}
        for x in ops:
            tree = self.pending_by_dst.get(x.id) if isinstance(x, Var) else None
            if id(x) in on_stack or (tree is not None and any(id(y) in on_stack for y in self.pushes(tree))):
                return True
        return False

    def under_a_tree(self, ops: list) -> tuple[int, int] | None:
        """``(j, u)`` when the stack's top entries are ``ops[:j]`` and then the ``u`` values that the deferred tree of
        ``ops[j]`` reads, in the order it reads them, and nothing after ``ops[j]`` reads the stack: the tree's code
        runs on top of the ``j`` operands, which stay where they are (:meth:`operands_in`)."""
        est = self.estack
        on_stack = {id(v) for v in est}
        for j in range(len(ops)):
            x = ops[j]
            tree = self.pending_by_dst.get(x.id) if isinstance(x, Var) else None
            if tree is None:
                if id(x) not in on_stack:
                    return None
                continue
            reads = [y for y in self.pushes(tree) if id(y) in on_stack]
            u = len(reads)
            if not u or len(est) < j + u or any(isinstance(y, Var) and y.id in self.chains for y in [*ops, *reads]):
                return None
            top = est[len(est) - u - j:]
            if any(a is not b for a, b in zip(top, [*ops[:j], *reads])):
                return None
            for y in ops[j + 1:]:
                later = self.pending_by_dst.get(y.id) if isinstance(y, Var) else None
                if id(y) in on_stack or (later is not None and self.reads_stack(later)):
                    return None
            return j, u
        return None

    def take_loaded_under(self, ops: list) -> list:
        """The operands of the statement :meth:`load_under` prepared: its first ``n`` operands are on the stack
        under the ``m`` values the others read; they leave the stack's model, and the other operands are taken
        (returned) as usual, above them. Nothing may be stored from below the loaded locals while the statement
        takes its operands (``spill_floor``): the model no longer holds them."""
        assert self.loaded_under is not None
        _, n, m = self.loaded_under
        self.loaded_under = None
        est = self.estack
        base = len(est) - m - n
        if base < 0 or any(est[base + i] is not ops[i] for i in range(n)):
            raise LowerError("locals loaded under the stack are not the statement's first operands")
        del est[base:base + n]
        self.spill_floor = base
        return ops[n:]

    def push_operand(self, x: Var | Const) -> None:
        if isinstance(x, ClassInit):  # a lead object (plan_leads) must already be on the stack
            raise LowerError("an object under construction is not under its arguments")
        if isinstance(x, Var):
            st = self.pending_by_dst.pop(x.id, None)
            if st is not None:
                self.pending.remove(st)
                if x.id in self.inits:
                    if self.inits[x.id] is not self.current_stmt:  # not its consumer: the array goes to its slot
                        self.lower_stmt(st)
                        self.push(x)
                        return
                    self.units_wanted.add(x.id)
                self.lower_stmt(st)  # leaves its value on the stack (it is stackable)
                popped = self.estack.pop()
                assert popped is x
                return
        self.push(x)

    def spill_from(self, depth: int) -> None:
        """Store the stack entries from ``depth`` up into slots (top first)."""
        est = self.estack
        if depth < self.spill_floor:
            raise LowerError("a value under locals loaded beneath the stack would have to be stored")
        while len(est) > depth:
            v = est.pop()
            if isinstance(v, Const):  # a lead constant (plan_leads): its reader pushes it again
                self.emit(op.POP2 if v.type.kind.wide else op.POP)
                continue
            if not isinstance(v, Var):
                raise LowerError("an object under construction would have to be stored")
            self.emit_store(v)

    def result(self, dst: Var | None) -> None:
        """The statement just emitted left its value on the stack: keep it there, store it, or drop it."""
        if dst is None:
            return
        if self.stackable(dst) or dst.id in self.chains or dst.id in self.units_wanted:
            self.units_wanted.discard(dst.id)
            self.est_start.pop(id(dst), None)
            self.estack.append(dst)
        elif dst.id not in self.used_anywhere and dst.slot is None:
            self.emit(op.POP2 if dst.type.kind.wide else op.POP)  # a result nobody reads
        else:
            self.emit_store(dst)

    def lower_stmt(self, s: Stmt) -> None:
        """Emit one statement (its deferred operands inside it), with its source line."""
        outer = self.current_stmt
        start, below = len(self.items), list(self.estack)
        self.mark_line(s)
        self.current_stmt = s
        try:
            self.lower_stmt_code(s)
        finally:
            self.current_stmt = outer
        if self.loaded_under is not None and self.loaded_under[0] is s:
            raise LowerError("locals loaded under the stack were not taken")
        d = s.defined()
        if d is not None and self.estack and self.estack[-1] is d:
            # its code begins where the code of the stack values it took begins
            kept = 0
            while kept < min(len(below), len(self.estack) - 1) and below[kept] is self.estack[kept]:
                kept += 1
            starts = [self.est_start.get(id(v)) for v in below[kept:]]
            known = [x for x in starts if x is not None]
            if len(known) == len(starts):
                self.est_start[id(d)] = min([start, *known])

    def lower_stmt_code(self, s: Stmt) -> None:
        if isinstance(s, Copy):
            if s.src is s.dst:
                return
            if self.try_iinc(s.dst, s.src, None, None):
                return
            self.operands_in([s.src])
            self.result(s.dst)
        elif isinstance(s, Binary):
            if self.try_iinc(s.dst, s.a, s.op, s.b):
                return
            self.operands_in(self.operands_of(s))
            self.emit(opcode_of(Form.BINARY, s.op))
            self.result(s.dst)
        elif isinstance(s, Unary):
            self.operands_in([s.a])
            self.emit(opcode_of(Form.UNARY, s.op))
            self.result(s.dst)
        elif isinstance(s, GetField):
            self.operands_in([s.obj])
            self.emit(op.GETFIELD, self.member_index(s.field))
            self.result(s.dst)
        elif isinstance(s, PutField):
            self.operands_in([s.obj, s.value])
            self.emit(op.PUTFIELD, self.member_index(s.field))
        elif isinstance(s, GetStatic):
            self.emit(op.GETSTATIC, self.member_index(s.field))
            self.result(s.dst)
        elif isinstance(s, PutStatic):
            self.operands_in([s.value])
            self.emit(op.PUTSTATIC, self.member_index(s.field))
        elif isinstance(s, ArrayLoad):
            self.operands_in([s.array, s.index])
            self.emit(opcode_of(Form.ARRAY_LOAD, s.elem))
            self.result(s.dst)
        elif isinstance(s, ArrayStore):
            self.operands_in([s.array, s.index, s.value])
            self.emit(opcode_of(Form.ARRAY_STORE, s.elem))
        elif isinstance(s, ArrayLength):
            self.operands_in([s.array])
            self.emit(op.ARRAYLENGTH)
            self.result(s.dst)
        elif isinstance(s, NewArray):
            self.operands_in(list(s.sizes))
            comp = s.array_type[1:]
            if len(s.sizes) > 1:
                self.emit(op.MULTIANEWARRAY, self.pool.add_class(s.array_type), len(s.sizes))
            elif comp in _NEWARRAY_CODE:
                self.emit(op.NEWARRAY, _NEWARRAY_CODE[comp])
            else:
                self.emit(op.ANEWARRAY, self.pool.add_class(comp[1:-1] if comp[0] == "L" else comp))
            if s.dst.id in self.fills:
                self.estack.append(s.dst)
                self.emit_fills(s.dst)
            self.result(s.dst)
        elif isinstance(s, ClassInit):
            self.emit(op.NEW, self.pool.add_class(s.cls))
            if id(s) in self.paired:  # the object stays under the arguments, as javac leaves it
                self.waiting.remove(s)
                self.emit(op.DUP)
                self.estack.append(s)
            elif id(s) in self.cross_inits:  # its New is in the join this block's test leads to (plan_leads)
                self.emit(op.DUP)
                self.estack.append(s)
            else:
                self.emit(op.POP)  # initializes the class; the uninitialized object is dropped
        elif isinstance(s, New):
            self.lower_new(s)
        elif isinstance(s, Invoke):
            ops = ([s.receiver] if s.receiver is not None else []) + list(s.args)
            self.operands_in(ops)
            index = self.member_index(s.method)
            if s.kind is InvokeKind.INTERFACE:
                words = 1 + sum(2 if a.type.kind.wide else 1 for a in s.args)
                self.emit(op.INVOKEINTERFACE, index, words)
            else:
                self.emit(opcode_of(Form.INVOKE, s.kind), index)
            self.result(s.dst)
        elif isinstance(s, InvokeDynamic):
            self.operands_in(list(s.args))
            nat = self.pool.add_name_and_type(s.name, s.descriptor)
            self.emit(op.INVOKEDYNAMIC, self.pool.add((18, self.bootstrap_index(s.bootstrap), nat)))
            self.result(s.dst)
        elif isinstance(s, CheckCast):
            self.operands_in([s.src])
            self.emit(op.CHECKCAST, self.pool.add_class(s.cls))
            self.result(s.dst)
        elif isinstance(s, InstanceOf):
            self.operands_in([s.src])
            self.emit(op.INSTANCEOF, self.pool.add_class(s.cls))
            self.result(s.dst)
        elif isinstance(s, MonitorEnter):
            self.operands_in([s.obj])
            self.emit(op.MONITORENTER)
        elif isinstance(s, MonitorExit):
            self.operands_in([s.obj])
            self.emit(op.MONITOREXIT)
        elif isinstance(s, Catch):
            self.result(s.dst)  # the JVM pushed the exception
        else:
            raise LowerError(f"cannot lower {type(s).__name__}")

    def lower_new(self, s: New) -> None:
        init = self.init_of.get(id(s))
        if init is not None:  # its ClassInit's `new; dup` first (pair_class_inits), if no flush emitted it
            if init in self.waiting:
                self.emit_class_init(init)
            self.operands_in(list(s.args))
            if not self.estack or self.estack[-1] is not init:
                raise LowerError(f"the object of new {s.cls} is not under its constructor's arguments")
            self.estack.pop()
        else:
            self.spill_if_used(s.args)
            if s.init is None and id(s) not in self.initialized:
                self.args_before_new(s.args)
            self.emit(op.NEW, self.pool.add_class(s.cls))
            self.emit(op.DUP)
            for a in s.args:
                self.push_operand(a)
        self.emit(op.INVOKESPECIAL, self.member_index(s.constructor))
        self.result(s.dst)

    def args_before_new(self, args: list) -> None:
        """A New without a ClassInit initializes its class where it stands, after its arguments (unless the class
        is initialized on every path to it, ``initialized``): ``new`` (which initializes the class) may come
        before an operand tree only if that tree can neither throw nor read or write the heap, which the class's
        ``<clinit>`` may write or observe (copies, conversions, arithmetic that cannot throw: what lifting lets
        lie between a ``new`` and its constructor call without a ClassInit, ``lift.settle_class_init``). Any
        other deferred operand tree is emitted here, before the ``new``, and stored into a slot (``t = a.f;
        return new X(t + 1)`` with a null ``a`` throws before ``X.<clinit>`` runs, as in the original)."""
        for a in args:
            st = self.pending_by_dst.get(a.id) if isinstance(a, Var) else None
            if st is None or self.inert(st):
                continue
            del self.pending_by_dst[a.id]
            self.pending.remove(st)
            self.lower_stmt(st)
            if isinstance(a, Var) and self.estack and self.estack[-1] is a:  # kept on the stack: into its slot
                self.estack.pop()
                self.emit_store(a)

    def inert(self, st: Stmt) -> bool:
        """Whether a deferred tree can neither throw nor touch the heap (nor initialize a class)."""
        if not (isinstance(st, (Copy, Unary)) or (isinstance(st, Binary) and not st.may_throw)):
            return False
        for x in st.operands():
            child = self.pending_by_dst.get(x.id) if isinstance(x, Var) else None
            if child is not None and not self.inert(child):
                return False
        return True

    def spill_if_used(self, ops: list) -> None:
        """Before ``new; dup``: stacked values among ``ops`` cannot be reached under the new object."""
        ids = {id(x) for x in ops}
        for d, x in enumerate(self.estack):
            if id(x) in ids:
                self.spill_from(d)
                return

    def try_iinc(self, dst: Var, a: Var | Const, opname: str | None, b: Var | Const | None) -> bool:
        """``l = l + c`` (or ``- c``) on an int variable in a slot -> iinc."""
        if opname not in ("add.i", "sub.i") or dst.type.kind is not Kind.INT or a is not dst:
            return False
        if not isinstance(b, Const) or self.stackable(dst):
            return False
        assert isinstance(b.value, int), b  # an int operation's constant
        c = b.value if opname == "add.i" else -b.value
        if not -32768 <= c <= 32767:
            return False
        slot = self.slot_of(dst)
        insn = self.emit(op.IINC, slot, c)
        self.var_insns.setdefault(dst.id, []).append(insn)
        if dst.slot != slot:
            self.foreign_stores[id(insn)] = (insn, slot, 1)
        if dst.carries is not None:
            self.carried_stores[id(insn)] = (insn, dst.id)
        return True

    def lower_terminator(self, t, nxt: int | None) -> None:
        """Terminators push what they hand on to their successors (``exit_ops``) under their own operands."""
        pre = self.exit_ops
        if isinstance(t, Goto):
            self.operands_in(list(pre))
            if t.target != nxt:
                self.emit(op.GOTO, target=self.labels[t.target])
        elif isinstance(t, If):
            self.lower_if(t, nxt, pre)
        elif isinstance(t, Switch):
            self.operands_in([*pre, t.value])
            self.lower_switch(t)
        elif isinstance(t, Return):
            if t.value is None:
                self.emit(opcode_of(Form.RETURN, None))
            else:
                self.operands_in([t.value])
                self.emit(opcode_of(Form.RETURN, t.value.type.kind))
        elif isinstance(t, Throw):
            self.operands_in([t.value])
            self.emit(op.ATHROW)
        else:
            raise LowerError(f"block without a terminator ({t!r})")

    def lower_if(self, t: If, nxt: int | None, pre: list) -> None:
        cond, yes, no = t.cond, t.if_true, t.if_false
        if yes == nxt and no != nxt:  # fall into the true arm: branch on the negation
            cond, yes, no = _NEGATE[cond], no, yes
        a, b = t.a, t.b
        if isinstance(a, Const) and a.type.kind is Kind.INT and (not isinstance(b, Const) or a.value == 0):
            # 0 < n (a rotated loop's entry test, i = 0 put in) is n > 0: ifle; 0 < 16 (a nested loop's of
            # constants, kept for the JIT) is 16 > 0: bipush 16; ifle, a byte less than iconst_0; bipush 16; if_icmpge
            a, b, cond = b, a, _MIRROR[cond]
        if isinstance(b, Const) and b.type.kind is Kind.INT and (b.value, cond) in _TO_ZERO:
            b, cond = Const(b.type, 0), _TO_ZERO[b.value, cond]  # x < 1 is x <= 0: ifle, no iconst_1
        is_ref = a.type.kind is Kind.REF or b.type.kind is Kind.REF
        if is_ref:
            if isinstance(b, Const) and b.value is None and b.kind is ConstKind.VALUE:
                own, opcode = [a], opcode_of(Form.IF_NULL, cond)
            elif isinstance(a, Const) and a.value is None and a.kind is ConstKind.VALUE:
                own, opcode = [b], opcode_of(Form.IF_NULL, cond)
            else:
                own, opcode = [a, b], opcode_of(Form.IF_ACMP, cond)
        elif isinstance(b, Const) and b.value == 0:
            own, opcode = [a], opcode_of(Form.IF_ZERO, cond)
        else:
            own, opcode = [a, b], opcode_of(Form.IF_ICMP, cond)
        self.operands_in([*pre, *own])
        self.emit(opcode, target=self.labels[yes])
        if no != nxt:
            self.emit(op.GOTO, target=self.labels[no])

    def lower_switch(self, t: Switch) -> None:
        pairs = sorted(zip(t.keys, t.cases))
        if not pairs:
            self.emit(op.POP)
            self.emit(op.GOTO, target=self.labels[t.default])
            return
        lo, hi = pairs[0][0], pairs[-1][0]
        n = len(pairs)
        table_cost = 4 + (hi - lo + 1) + 3 * 3
        lookup_cost = 3 + 2 * n + 3 * n
        if hi - lo < 65536 and table_cost <= lookup_cost:
            by_key = dict(pairs)
            targets = [self.labels[by_key.get(k, t.default)] for k in range(lo, hi + 1)]
            self.emit(op.TABLESWITCH, 0, lo, default=self.labels[t.default], targets=targets)
        else:
            self.emit(op.LOOKUPSWITCH, default=self.labels[t.default], keys=[k for k, _ in pairs],
                      targets=[self.labels[c] for _, c in pairs])

    # -- exception table --------------------------------------------------------------------------------
    def handlers(self) -> list[AsmHandler]:
        order = self.ir.block_order()
        end_labels: dict[str, Label] = {}
        out: list[AsmHandler] = []
        k = 0
        while k < len(order):
            hs = order[k].handlers
            j = k
            while j + 1 < len(order) and order[j + 1].handlers == hs:
                j += 1
            if hs:
                end = self.labels[order[j + 1].id] if j + 1 < len(order) else end_labels.setdefault("end", Label("end"))
                for h in hs:
                    catch = self.pool.add_class(h.catch_type) if h.catch_type is not None else 0
                    out.append(AsmHandler(self.labels[order[k].id], end, self.labels[h.target], catch))
            k = j + 1
        if "end" in end_labels:
            self.items.append(end_labels["end"])
        return out


    # -- local-variable tables ----------------------------------------------------------------------------
    def place_origin_labels(self) -> tuple[list, list[tuple[Label, int | None]], list[tuple[Label, int, int]]]:
        """``items`` with a label where the statement origin of the instructions changes and one before each
        foreign store; returns them, the origin marks (label, origin or None) and the foreign stores (label,
        slot, width). Done after the peephole passes, which must see instructions without labels between."""
        out: list = []
        marks: list[tuple[Label, int | None]] = []
        stores: list[tuple[Label, int, int]] = []
        last: object = marks  # a sentinel no origin equals
        for x in self.items:
            if isinstance(x, Insn):
                found = self.origin_of.get(id(x))
                origin = found[1] if found is not None and found[0] is x else None
                if origin != last:
                    label = Label()
                    out.append(label)
                    marks.append((label, origin))
                    last = origin
                foreign = self.foreign_stores.get(id(x))
                if foreign is not None and foreign[0] is x:
                    label = Label()
                    out.append(label)
                    stores.append((label, foreign[1], foreign[2]))
                carried = self.carried_stores.get(id(x))
                if carried is not None and carried[0] is x:
                    label = Label()
                    out.append(label)
                    self.carried_marks.append((label, carried[1]))
            out.append(x)
        return out, marks, stores


def _dup_chains(ir: IRMethod, inits: dict[int, Stmt]) -> dict[int, int]:
    """Variable id -> number of uses, for the values lowering keeps on the stack and ``dup``s for each use but
    the last, as javac does for an array it fills in place: defined once, read only later in the same block, each
    read the first operand pushed by its statement (not a ``new``, which pushes the object first). Not the
    initializers (``inits``, :func:`_initializers`), which are trees of their own."""
    defs: Counter[int] = Counter()
    for b in ir.blocks.values():
        for st in b.stmts:
            d = st.defined()
            if d is not None:
                defs[d.id] += 1
    params = {p.id for p in ir.params}
    out: dict[int, int] = {}
    bad: set[int] = set(params)
    for b in ir.blocks.values():
        stmts = b.all_stmts()
        seen_def: set[int] = set()
        for st in stmts:
            for k, x in enumerate(st.operands()):
                if not isinstance(x, Var):
                    continue
                ok = x.id in seen_def and k == 0 and not isinstance(st, (New, ClassInit)) \
                    and sum(1 for y in st.operands() if y is x) == 1
                if ok:
                    out[x.id] = out.get(x.id, 0) + 1
                else:
                    bad.add(x.id)
            d = st.defined()
            if d is not None and defs[d.id] == 1 and not isinstance(st, Catch) and d.slot is None:
                seen_def.add(d.id)
    chains = {vid: n for vid, n in out.items() if vid not in bad and n > 1 and vid not in inits}
    for b in ir.blocks.values():
        stmts = b.all_stmts()
        for vid in [vid for vid in chains if any(_defines(st, vid) for st in b.stmts)]:
            if not _stays_on_top(stmts, vid, inits):
                del chains[vid]
    return chains


def _initializers(ir: IRMethod) -> dict[int, Stmt]:
    """The arrays created and filled in place before their one other use, javac's array initializers (``new
    int[]{a, b}``, ``new String[][]{{"x", "y"}}``): id of the variable -> the statement that consumes it. A
    ``NewArray`` defines it, once, and every read of it is in that block, later: stores into it at a constant
    index of values other than itself, then one statement (not a branch) that reads it once. Lowering emits such
    an array with its stores where its consumer pushes it (``_Lowerer.fill``)."""
    defs: Counter[int] = Counter()
    blocks_reading: dict[int, set[int]] = {}
    for b in ir.blocks.values():
        for st in b.all_stmts():
            d = st.defined()
            if d is not None:
                defs[d.id] += 1
            for x in st.operands():
                if isinstance(x, Var):
                    blocks_reading.setdefault(x.id, set()).add(b.id)
    params = {p.id for p in ir.params}
    out: dict[int, Stmt] = {}
    for b in ir.blocks.values():
        stmts = b.all_stmts()
        for k, st in enumerate(b.stmts):
            if not isinstance(st, NewArray) or defs[st.dst.id] != 1 or st.dst.id in params or st.dst.slot is not None \
                    or blocks_reading.get(st.dst.id) != {b.id}:
                continue
            a = st.dst
            users = [u for u in stmts[k + 1:] if any(x is a for x in u.operands())]
            if len(users) < 2 or any(x is a for u in stmts[:k + 1] for x in u.operands()):
                continue
            *stores, consumer = users
            if all(isinstance(u, ArrayStore) and u.array is a and u.value is not a and isinstance(u.index, Const)
                   for u in stores) and sum(x is a for x in consumer.operands()) == 1 \
                    and not isinstance(consumer, (Goto, If, Switch)) \
                    and not (isinstance(consumer, ArrayStore) and consumer.array is a):
                out[a.id] = consumer
    return out


def _initialized_news(ir: IRMethod) -> set[int]:
    """Ids of the News without a ClassInit whose class a ClassInit or New of that class initialized before them
    on every path (a forward must-analysis over the blocks; a handler starts from what held when its protected
    blocks were entered, since the statement that throws may be the initialization itself). There the ``new``
    initializes nothing: it may come before its arguments whatever they do (:meth:`_Lowerer.args_before_new`)."""
    preds: dict[int, list[int]] = {bid: [] for bid in ir.blocks}
    caught: dict[int, list[int]] = {bid: [] for bid in ir.blocks}
    for b in ir.blocks.values():
        for t in b.successors(include_exceptional=False):
            preds[t].append(b.id)
        for h in b.handlers:
            caught[h.target].append(b.id)
    entry_facts: dict[int, frozenset[str] | None] = {bid: None for bid in ir.blocks}  # None: every class (top)
    entry_facts[ir.entry] = frozenset()

    def exit_facts(b: Block, facts: frozenset[str]) -> frozenset[str]:
        return facts | {st.cls for st in b.stmts if isinstance(st, (ClassInit, New))}

    order = [b.id for b in ir.block_order()]
    changed = True
    while changed:
        changed = False
        for bid in order:
            if bid == ir.entry:
                continue
            came: list[frozenset[str]] = []
            for p in preds[bid]:
                f = entry_facts[p]
                if f is not None:
                    came.append(exit_facts(ir.blocks[p], f))
            came += [f for p in caught[bid] if (f := entry_facts[p]) is not None]
            new = frozenset.intersection(*came) if came else None
            if new != entry_facts[bid] and new is not None:
                entry_facts[bid] = new
                changed = True
    out: set[int] = set()
    for b in ir.blocks.values():
        known = set(entry_facts[b.id] or ())
        for st in b.stmts:
            if isinstance(st, New) and st.init is None and st.cls in known:
                out.add(id(st))
            if isinstance(st, (ClassInit, New)):
                known.add(st.cls)
    return out


def _first_tree(b: Block, single: Callable[[Var], bool]) -> tuple[Stmt, dict[int, Stmt]] | None:
    """The expression tree ``b``'s statements begin with: its root (the first statement whose value is not read
    once by a later statement of ``b``: ``single``, a value kept on the stack) and the statements defining the
    values read once inside it (variable id -> statement; the root under -1), when those are exactly the
    statements up to the root."""
    stmts = b.all_stmts()
    k = 0
    while (d := stmts[k].defined()) is not None and single(d):
        nxt = next((n for n in range(k + 1, len(stmts)) if any(x is d for x in stmts[n].operands())), None)
        if nxt is None:
            break
        k = nxt
    root = stmts[k]
    defs = {d.id: st for st in stmts[:k] if (d := st.defined()) is not None and single(d)}
    members: dict[int, Stmt] = {}
    work = [root]
    while work:
        for x in work.pop().operands():
            if isinstance(x, Var) and (st := defs.get(x.id)) is not None and x.id not in members:
                members[x.id] = st
                work.append(st)
    if len(members) != k:
        return None
    members[-1] = root
    return root, members


def _static_pushes(st: Stmt, members: dict[int, Stmt]) -> list:
    """What emitting ``st`` with the trees of ``members`` inside it pushes, in order (a New for its ``new; dup``,
    another statement for its result, after its operands)."""
    out: list = [st] if isinstance(st, New) else []
    for x in st.operands():
        child = members.get(x.id) if isinstance(x, Var) else None
        out.extend(_static_pushes(child, members) if child is not None else [x])
    if not isinstance(st, New):
        out.append(st)
    return out


def _defines(st: Stmt, vid: int) -> bool:
    d = st.defined()
    return d is not None and d.id == vid


def _pending_dst(st: Stmt) -> Var:
    """The variable a deferred statement defines (only a statement with a stackable result is deferred)."""
    d = st.defined()
    assert d is not None
    return d


def _stays_on_top(stmts: list[Stmt], vid: int, inits: dict[int, Stmt]) -> bool:
    """Whether nothing computed between the definition of ``vid`` and its last use waits on the stack above it
    at one of its uses: a use's own result is read by nobody (an array store, a void call, a dropped result), and
    any other result is read before the next use, or by it as a single-use operand (a tree it pushes). A use whose
    result only the next use reads (``u = t * 0.5; w = t + u``) leaves it on the copy the next use ``dup``ed for
    it, or is emitted inside that use's tree on that copy. An initializer (``inits``) is read by its consumer
    only: its stores are emitted inside it."""
    at = [k for k, st in enumerate(stmts) if any(isinstance(x, Var) and x.id == vid for x in st.operands())]
    start = next(k for k, st in enumerate(stmts) if _defines(st, vid))
    reads: dict[int, list[int]] = {}
    for k, st in enumerate(stmts):
        for x in st.operands():
            if isinstance(x, Var) and (x.id not in inits or inits[x.id] is st):
                reads.setdefault(x.id, []).append(k)
    for k in range(start + 1, at[-1]):
        d = stmts[k].defined()
        if d is None or d.id not in reads:
            continue
        nxt = next(u for u in at if u > k)
        if (k in at and reads[d.id] != [nxt]) or any(r > nxt for r in reads[d.id]) \
                or (nxt in reads[d.id] and len(reads[d.id]) > 1):
            return False
    return True


def blocks_on_cycles(blocks: dict[int, Block]) -> set[int]:
    """Ids of the blocks inside some loop (a strongly connected component with a cycle)."""
    g = nx.DiGraph()
    for b in blocks.values():
        g.add_node(b.id)
        g.add_edges_from((b.id, t) for t in b.successors())
    return {n for comp in nx.strongly_connected_components(g) for n in comp if len(comp) > 1 or g.has_edge(n, n)}


_ONE_WORD_LOADS = frozenset({op.ILOAD, op.FLOAD, op.ALOAD})


def _dup2_pairs(items: list, origin_of: dict[int, tuple[Insn, int]] | None = None) -> None:
    """``load a; load b; load a; load b`` (one-word locals, nothing in between, e.g. ``x[i] += v``) becomes
    ``load a; load b; dup2``: the second pair reads the same two values (the ``dup2`` takes the origin of the
    loads it replaces)."""
    k = 0
    while k + 3 < len(items):
        w = items[k:k + 4]
        if all(isinstance(x, Insn) and x.opcode in _ONE_WORD_LOADS for x in w) \
                and (w[0].opcode, w[0].arg, w[1].opcode, w[1].arg) == (w[2].opcode, w[2].arg, w[3].opcode, w[3].arg):
            dup2 = Insn(op.DUP2)
            if origin_of is not None:
                found = origin_of.get(id(w[2]))
                if found is not None and found[0] is w[2]:
                    origin_of[id(dup2)] = (dup2, found[1])
            items[k + 2:k + 4] = [dup2]
            k += 3
        else:
            k += 1


_LOAD_OF_STORE = {_STORE[k]: _LOAD[k] for k in _STORE}
_TWO_WORD_STORES = frozenset({op.LSTORE, op.DSTORE})
_STORE_OPS = frozenset(_STORE.values())
_LOAD_OPS = frozenset(_LOAD.values())


def _store_load_dups(items: list, origin_of: dict[int, tuple[Insn, int]], for_size: bool,
                     line_marks: frozenset[int] = frozenset()) -> None:
    """``store n; load n`` (k loads; no label between but the line-number marks ``line_marks``, by id, which no
    jump targets) becomes ``dup``/``dup2`` k times and the store: the same values on the stack and in the slot,
    a ``dup`` one byte where a load is one or two, and a dispatch of the interpreter's cheapest kind
    (docs/cost-model.md, ``stack``). A line mark between stays after the store, so the ``dup`` counts to the
    line before (``C c = new C(m, n); X x = c.getArray();`` as ``new; ...; dup; astore 8; invokevirtual``, javac's
    own shape for ``x = c = new C(m, n)``). Under ``--goal speed``
    only for an int or a reference in a slot above 3 (a byte saved): never for a float (HotSpot's interpreter
    stalls on a ``dup`` of a float just computed, ``FLOAT_SPILL_EXTRA``), nor a long or double (the prover's view
    of a loop, validate/loopshape.py, matches an entry test and a bottom test that read the local, not the
    value an ``lcmp`` in the test's tail reads off the stack: Kernels.sieve's rewrite went unproved), and never
    where the load is an ``iload`` the interpreter fuses with the next instruction (``iload n; iload m``, both
    with an operand, is one dispatch, ``fast_iload2``, and so is ``iload; caload``: BenchKernels.insertionSort's
    ``istore 5; iload 5; iload 4`` as ``dup; istore 5; iload 4`` ran 1.08-1.2x slower under ``-Xint``)."""
    def mark(y: object) -> bool:
        return isinstance(y, Label) and id(y) in line_marks

    k = 0
    while k < len(items):
        x = items[k]
        if isinstance(x, Insn) and x.opcode in _LOAD_OF_STORE and (for_size or (x.opcode in (op.ISTORE, op.ASTORE)
                                                                             and x.arg >= 4)):
            load, j, loads = _LOAD_OF_STORE[x.opcode], k + 1, []
            while j < len(items) and (mark(items[j]) or (isinstance(items[j], Insn) and items[j].opcode == load
                                                         and items[j].arg == x.arg)):
                if not mark(items[j]):
                    loads.append(j)
                j += 1
            j = loads[-1] + 1 if loads else k + 1  # the marks after the last load are left where they are
            if loads and not for_size and load == op.ILOAD:
                nxt = next((items[q] for q in range(j, len(items)) if isinstance(items[q], Insn)), None)
                # the next in the code, past labels; ``iload_0..3`` (slots below 4) are not paired
                if nxt is not None and ((nxt.opcode == op.ILOAD and nxt.arg >= 4) or nxt.opcode == op.CALOAD):
                    loads, j = [], k + 1  # a load the interpreter would pair with the next one stays
            if loads:
                dups = []
                for q in loads:
                    y = items[q]
                    d = Insn(op.DUP2 if x.opcode in _TWO_WORD_STORES else op.DUP)
                    found = origin_of.get(id(y))
                    if found is not None and found[0] is y:
                        origin_of[id(d)] = (d, found[1])
                    dups.append(d)
                marks = [y for y in items[k + 1:j] if mark(y)]
                items[k:j] = [*dups, x, *marks]
                k += len(dups) + len(marks)
        k += 1


def _drop_passing_stores(items: list, carried_stores: dict[int, tuple[Insn, int]], handlers: list[AsmHandler],
                         line_marks: frozenset[int]) -> None:
    """``store n; load n`` of an int or a reference (no label between but line marks, which no jump targets nor
    a handler's range bounds) whose slot no path reads after the load (:func:`_live_slots_after`, handlers
    included) is the value passing through a slot for nothing: both dropped, the value stays on the stack.
    :func:`_dup2_pairs` leaves such pairs: ``a[i][j] -= e`` with ``a[i]`` read twice in the IR is ``aaload;
    astore n; aload n; iload j; dup2`` once the second ``aload n; iload j`` is a ``dup2``. In a slot above 3
    :func:`_store_load_dups` and :func:`_drop_unread_stores` remove it too (``dup; astore n`` dropped); in one
    below 4 nothing did, since ``dup; astore_3`` saves no byte (JAMA ``CholeskyDecomposition.solve``: four
    ``astore_3; aload_3``). A store of a variable that carries an original local is kept (its local-variable
    entry is placed by it)."""
    live_after = _live_slots_after(items, handlers)
    drop: set[int] = set()
    for k, x in enumerate(items):
        if not (isinstance(x, Insn) and x.opcode in (op.ISTORE, op.ASTORE) and id(x) not in carried_stores):
            continue
        j = k + 1
        while j < len(items) and isinstance(items[j], Label) and id(items[j]) in line_marks:
            j += 1
        y = items[j] if j < len(items) else None
        if isinstance(y, Insn) and y.opcode == _LOAD_OF_STORE[x.opcode] and y.arg == x.arg \
                and not live_after[j] >> x.arg & 1:
            drop.update((k, j))
    if drop:
        items[:] = [x for k, x in enumerate(items) if k not in drop]


def _size_peepholes(items: list, origin_of: dict[int, tuple[Insn, int]],
                    carried_stores: dict[int, tuple[Insn, int]], line_marks: frozenset[int] = frozenset(),
                    handlers: list[AsmHandler] | None = None) -> None:
    """``--goal size``'s rewrites of the instruction list: :func:`_store_load_dups` for every kind, then a store
    whose slot no path reads before writing it again is dead (:func:`_drop_unread_stores`): dropped with the
    ``dup`` before it, else replaced by a ``pop``/``pop2``. A store of a variable that carries an original
    local is kept (its local-variable entry is placed by it). Same values on the stack and in every slot that is
    read, never more bytes."""
    _store_load_dups(items, origin_of, for_size=True, line_marks=line_marks)
    _drop_unread_stores(items, carried_stores, handlers)


def _drop_unread_stores(items: list, carried_stores: dict[int, tuple[Insn, int]],
                        handlers: list[AsmHandler] | None = None) -> None:
    """A store whose slot no path reads before writing it again (:func:`_live_slots_after`) is dead: dropped
    with the ``dup`` before it, else replaced by a ``pop``/``pop2``; a store of a variable that carries an
    original local is kept (its local-variable entry is placed by it). Both goals: under ``--goal speed``
    :func:`_dup2_pairs` and :func:`_store_load_dups` can leave a ``dup; astore n`` whose every load they replaced
    (``a[i][j] -= e`` in a rotated loop: ``aaload; dup; astore 6; iload 5; dup2``, two instructions per
    iteration for nothing). Liveness, not "no load of the slot anywhere": slots are shared by variables that
    never interfere, so the slot of such a store is usually read elsewhere, by another variable (JAMA's
    ``QRDecomposition.<init>``: ``QR[i]`` stored into the slot its ``double`` sum uses later)."""
    live_after = _live_slots_after(items, handlers or [])
    out: list = []
    for k, x in enumerate(items):
        if isinstance(x, Insn) and x.opcode in _LOAD_OF_STORE and id(x) not in carried_stores:
            width = 2 if x.opcode in _TWO_WORD_STORES else 1
            if not live_after[k] >> x.arg & ((1 << width) - 1):
                dup, pop = (op.DUP2, op.POP2) if width == 2 else (op.DUP, op.POP)
                if out and isinstance(out[-1], Insn) and out[-1].opcode == dup:
                    out.pop()
                else:
                    out.append(Insn(pop))
                continue
        out.append(x)
    items[:] = out


def _live_slots_after(items: list, handlers: list[AsmHandler]) -> list[int]:
    """For each item of ``items`` (instructions and labels), the slots (a bit per slot) some path from just after
    it reads before writing them: backward liveness over the instruction list's flow (fall-through unless the
    instruction never falls through, jump and switch targets; an instruction inside a handler's range also flows
    to the handler, which may read what any instruction of the range stored). A load, ``iinc`` or ``ret`` reads
    its slot (a ``long``/``double`` load both), a store writes its own (both of a two-word one)."""
    n = len(items)
    at = {id(x): k for k, x in enumerate(items) if isinstance(x, Label)}
    succs: list[list[int]] = []
    reads = [0] * n
    writes = [0] * n
    for k, x in enumerate(items):
        nxt: list[int] = []
        if isinstance(x, Insn):
            if x.opcode not in op.NO_FALLTHROUGH and k + 1 < n:
                nxt.append(k + 1)
            for t in (x.target, x.default, *(x.targets or ())):
                if t is not None:
                    nxt.append(at[id(t)])
            if x.opcode in _LOAD_OPS or x.opcode in (op.IINC, op.RET):
                reads[k] = (3 if x.opcode in (op.LLOAD, op.DLOAD) else 1) << x.arg
            elif x.opcode in _STORE_OPS:
                writes[k] = (3 if x.opcode in _TWO_WORD_STORES else 1) << x.arg
        elif k + 1 < n:
            nxt.append(k + 1)
        succs.append(nxt)
    ranges = [(at[id(h.start)], at.get(id(h.end), n), at[id(h.handler)]) for h in handlers]
    live_in = [0] * (n + 1)
    live_out = [0] * n
    changed = True
    while changed:
        changed = False
        extra = [0] * n
        for lo, hi, target in ranges:
            for k in range(lo, hi):
                extra[k] |= live_in[target]
        for k in range(n - 1, -1, -1):
            out = extra[k]
            for s in succs[k]:
                out |= live_in[s]
            live_out[k] = out
            inn = reads[k] | (out & ~writes[k]) | extra[k]
            if inn != live_in[k]:
                live_in[k] = inn
                changed = True
    return live_out


LocalEntry = LocalVariableEntry | LocalVariableTypeEntry


def remap_local_entries(entries: list[LocalEntry], widths: list[int], segments: list[tuple[int, int | None]],
                        code_length: int, foreign_stores: list[tuple[int, int, int]],
                        slot_widths: dict[int, set[int]], original_length: int) -> list[LocalEntry]:
    """The entries of a LocalVariableTable or LocalVariableTypeTable of the original code that stay true in the
    new code, with new offsets (see the module's invariants); ``widths[k]`` is entry k's size in slots.

    ``segments``: (start offset, statement origin or None) in increasing offsets, each running to the next
    start (the last to ``code_length``); ``foreign_stores``: (offset, slot, width) of instructions storing a
    variable into a slot it was not lifted from; ``slot_widths``: slot -> widths (1, 2) of the IR variables
    lifted from it. An entry over the whole original code (a parameter, usually) covers the whole new code:
    every instruction comes from that code, those of no statement included."""
    spans = _spans(segments, code_length)
    out: list[LocalEntry] = []
    for e, width in zip(entries, widths):
        kept = _remap_entry(e, width, spans, foreign_stores, slot_widths, original_length)
        if kept is not None:
            out.append(kept)
    return out


def _spans(segments: list[tuple[int, int | None]], code_length: int) -> list[tuple[int, int, int | None]]:
    """(start, end, origin) of the non-empty segments (see :func:`remap_local_entries`)."""
    spans = []
    for k, (start, origin) in enumerate(segments):
        end = segments[k + 1][0] if k + 1 < len(segments) else code_length
        if end > start:
            spans.append((start, end, origin))
    return spans


def _remap_entry(e: LocalEntry, width: int, spans: list[tuple[int, int, int | None]],
                 foreign_stores: list[tuple[int, int, int]], slot_widths: dict[int, set[int]],
                 original_length: int) -> LocalEntry | None:
    """Entry ``e``'s image in the new code, or None (:func:`remap_local_entries` for one entry; ``spans`` from
    :func:`_spans`, computed once per method: a method has as many entries as segments, in the hundreds)."""
    if width not in slot_widths.get(e.index, ()):
        return None  # no variable of this slot and width went through the IR
    lo, hi = e.start_pc, e.start_pc + e.length
    whole = lo == 0 and hi >= original_length
    first = last = -1
    for k, (_, _, o) in enumerate(spans):
        if (o is None and whole) or o is not None and lo <= o < hi:
            if first < 0:
                first = k
            last = k
    if first < 0:
        return None
    for k in range(first, last + 1):
        o = spans[k][2]
        if o is not None and not lo <= o < hi:
            return None  # code from outside the range lies between: the range has no image as one run
    start, end = spans[first][0], spans[last][1]
    if any(start <= at < end and slot < e.index + width and e.index < slot + w for at, slot, w in foreign_stores):
        return None  # the slot holds something else somewhere in the range
    return replace(e, start_pc=start, length=end - start)


def lower_method(cf: ClassFile, method: MethodInfo, ir: IRMethod, hierarchy: ClassHierarchy | None,
                 lines: LineNumberTable | None = None, for_size: bool = False) -> bytes:
    """The Code attribute body for ``ir``, to replace ``method``'s code in ``cf``. ``lines`` is the original
    LineNumberTable (statement origins are bytecode offsets of the original code); the new code gets one. The
    local-variable tables are read from ``method``'s (original) Code attribute and remapped where they stay
    true. ``for_size`` (``--goal size``): the most used variables in the lowest slots whatever local they carry,
    and :func:`_size_peepholes`."""
    def lowered(light: frozenset[int] = frozenset()) -> tuple[_Lowerer, list[AsmHandler]]:
        lw = _Lowerer(cf, ir)
        lw.for_size, lw.light = for_size, light
        if lines is not None:
            pairs = sorted((e.start_pc, e.line_number) for e in lines.entries)
            lw.line_starts = [pc for pc, _ in pairs]
            lw.line_numbers = [line for _, line in pairs]
        lw.lower()
        handlers = lw.handlers()
        _dup2_pairs(lw.items, lw.origin_of)
        line_marks = frozenset(id(label) for label, _ in lw.line_marks)
        if for_size:
            _size_peepholes(lw.items, lw.origin_of, lw.carried_stores, line_marks, handlers)
        elif lw.rebuilt:  # lifted code keeps javac's stores and loads (and its local-variable entries)
            _drop_passing_stores(lw.items, lw.carried_stores, handlers, line_marks)
            _store_load_dups(lw.items, lw.origin_of, for_size=False, line_marks=line_marks)
            _drop_unread_stores(lw.items, lw.carried_stores, handlers)
        return lw, handlers

    lw, handlers = lowered()
    items, origin_marks, store_marks = lw.place_origin_labels()
    asm = assemble(items, handlers)
    gone = lw.vanished() if lw.rebuilt else frozenset()
    if gone and min(lw.slots[v] for v in gone) < max((lw.slots[v] for v in lw.shared if v in lw.slots
                                                        and v not in gone), default=-1):
        # variables whose every load and store the peepholes removed held slots others wanted (JAMA
        # CholeskyDecomposition.solve: `a[i]` of `a[i][j] -= e` in slot 3, the column count its loops test in
        # slot 7): lowered again with them coloured last, kept when shorter (same pool entries: same code)
        try:
            lw2, handlers2 = lowered(gone)
        except LowerError:  # slots do not decide the stack's plan, so not expected: the first lowering stands
            pass
        else:
            items2, origin_marks2, store_marks2 = lw2.place_origin_labels()
            asm2 = assemble(items2, handlers2)
            if len(asm2.code) < len(asm.code):
                lw, handlers, asm, origin_marks, store_marks = lw2, handlers2, asm2, origin_marks2, store_marks2
    attributes = []
    if lw.line_marks:
        entries: dict[int, int] = {}
        for label, line in lw.line_marks:
            entries[asm.offsets[label]] = line  # several marks at one pc: the last one is what runs
        table = LineNumberTable([LineNumberEntry(pc, line) for pc, line in sorted(entries.items())])
        attributes.append(Attribute(cf.pool.add_utf8("LineNumberTable"), "LineNumberTable", table.to_bytes()))
    carried = _Carried({v.id: lw.slots[v.id] for v in ir.variables if v.carries is not None and v.id in lw.slots},
                       {asm.offsets[label]: vid for label, vid in lw.carried_marks},
                       {bid: asm.offsets[label] for bid, label in lw.labels.items() if label in asm.offsets})
    attributes += _local_tables(cf, method, ir, asm, origin_marks, store_marks, carried)
    return build_code_attribute(cf, method, asm.instructions, asm.code, asm.exception_table, attributes,
                                hierarchy, lw.max_locals)


def _stores(insns: list) -> list[tuple[int, int, int]]:
    """(offset, slot, width) of every instruction of the original code that writes a local."""
    out = []
    for ins in insns:
        opcode, slot = ins.opcode, ins.arg
        if opcode in op.SHORT_FORMS:
            opcode, slot = op.SHORT_FORMS[opcode]
        if op.ISTORE <= opcode <= op.ASTORE or opcode == op.IINC:
            out.append((ins.offset, slot, 2 if opcode in (op.LSTORE, op.DSTORE) else 1))
    return out


def _faithful_slots(ir: IRMethod, original: list) -> dict[int, set[int]]:
    """Slot -> widths of the IR variables lifted from it (parameters included) whose writes are exactly the
    original code's: the statements writing a variable lifted from any of the slots covered, by their origins,
    are the original instructions storing into any of them. The IR of :func:`~.lift.lift_method` is so (one
    statement per store, with its offset); IR rebuilt by later stages, whose statements have no origins, keeps
    only slots that neither code ever writes (parameters never assigned)."""
    writes: list[tuple[int, int, int]] = []  # (origin, slot, width) of IR statements writing a lifted variable
    for b in ir.blocks.values():
        for st in b.stmts:
            d = st.defined()
            if d is not None and d.slot is not None:
                writes.append((st.origin, d.slot, 2 if d.type.kind.wide else 1))
    stores = _stores(original)
    out: dict[int, set[int]] = {}
    for v in [*ir.params, *ir.variables]:
        if v.slot is None:
            continue
        k, w = v.slot, 2 if v.type.kind.wide else 1
        touches = lambda slot, width: slot < k + w and k < slot + width  # noqa: E731
        ir_origins = [o for o, slot, width in writes if touches(slot, width)]
        if any(o < 0 for o in ir_origins):
            continue
        if set(ir_origins) == {pc for pc, slot, width in stores if touches(slot, width)}:
            out.setdefault(k, set()).add(w)
    return out


def _origins_by_instruction(insns: list[Instruction], segments: list[tuple[int, int | None]]) -> list[int | None]:
    """The statement origin of each instruction (``segments``: start offset, origin; in increasing offsets)."""
    out: list[int | None] = []
    k = -1
    for ins in insns:
        while k + 1 < len(segments) and segments[k + 1][0] <= ins.offset:
            k += 1
        out.append(segments[k][1] if k >= 0 else None)
    return out


def _parameter_slots(ir: IRMethod) -> dict[int, int]:
    """Slot -> width of each parameter (``this`` included), where :meth:`_Lowerer.assign_slots` puts them."""
    out: dict[int, int] = {}
    top = 0
    for p in ir.params:
        slot = p.slot if p.slot is not None else top
        out[slot] = 2 if p.type.kind.wide else 1
        top = max(top, slot + out[slot])
    return out


def _code_length_of(code_attribute: bytes) -> int:
    return int.from_bytes(code_attribute[4:8], "big")  # max_stack u2, max_locals u2, code_length u4


class _Flow:
    """The control flow of final instructions (branches, fall-through, exception handlers), for the
    local-variable analyses below; ``ok`` is False for code with subroutines (a ``ret`` goes where this does
    not follow), where those analyses claim nothing."""

    def __init__(self, insns: list[Instruction], table: list[ExceptionEntry]) -> None:
        self.insns = insns
        self.at = {ins.offset: k for k, ins in enumerate(insns)}
        self.ok = not any(i.opcode in (op.JSR, op.JSR_W, op.RET) for i in insns)
        self.succ: list[list[int]] = []
        for k, ins in enumerate(insns):
            out = [self.at[t] for t in ins.successors_targets()] if self.ok else []
            if ins.opcode not in op.NO_FALLTHROUGH and k + 1 < len(insns):
                out.append(k + 1)
            out += [self.at[h.handler] for h in table if h.start <= ins.offset < h.end]
            self.succ.append(out)
        self.pred: list[list[int]] = [[] for _ in insns]
        for k, out in enumerate(self.succ):
            for t in out:
                self.pred[t].append(k)

    def stores_into(self, index: int, width: int) -> set[int]:
        """Indexes of the instructions writing a slot overlapping ``index`` (``width`` slots)."""
        return {self.at[pc] for pc, slot, w in _stores(self.insns) if slot < index + width and index < slot + w}

    def must(self, entry: bool, kills: set[int], gens: frozenset[int] | set[int] = frozenset(),
             resets: dict[int, bool] | None = None) -> list[bool]:
        """A fact on entering each instruction that holds on every path: ``entry`` at the start, made true after
        ``gens`` and false after ``kills``, and ``resets[k]`` on entering instruction k whatever came before.
        The greatest solution (instructions nothing reaches keep True)."""
        if not self.ok:
            return [False] * len(self.insns)
        resets = resets or {}
        fact = [True] * len(self.insns)
        out = lambda k: k in gens or (k not in kills and fact[k])  # noqa: E731
        changed = True
        while changed:
            changed = False
            for k in range(len(self.insns)):
                if k in resets:
                    new = resets[k]
                else:
                    new = all(out(p) for p in self.pred[k]) and (entry or k != 0)
                if new != fact[k]:
                    fact[k], changed = new, True
        return fact

    def loop_of(self, header: int) -> set[int]:
        """The instructions of the natural loop headed by instruction ``header``: those that reach a jump back
        to it without passing it, and it."""
        ahead, work = {header}, [header]
        while work:
            for t in self.succ[work.pop()]:
                if t not in ahead:
                    ahead.add(t)
                    work.append(t)
        body, work = {header}, [p for p in self.pred[header] if p in ahead]
        while work:
            k = work.pop()
            if k not in body:
                body.add(k)
                work.extend(p for p in self.pred[k] if p in ahead)
        return body


def _unwritten(flow: _Flow, index: int, width: int) -> list[bool]:
    """Per instruction: True when no path from the code's start to it passes a store into a slot overlapping
    ``index`` (``width`` slots), i.e. there the slot still holds what the method was called with."""
    return flow.must(True, flow.stores_into(index, width))


def _parameter_ranges(e: LocalEntry, width: int, params: dict[int, int], new: _Flow, code_length: int,
                      origin_at: list[int | None], original: _Flow, original_length: int) -> list[LocalEntry]:
    """A parameter's entry where :func:`remap_local_entries` found no single true image (code rebuilt from a
    PEG, or a parameter assigned in the new code): the runs of new instructions at which (1) the slot still
    holds the argument (:func:`_unwritten` over the new code) and (2) the source variable does too: the
    original never writes the slot, or the instruction comes from a statement (``origin_at``) of the entry's
    range before which the original has not written it. Empty unless ``e`` is a parameter's entry (from offset
    0, on a parameter's slot and width, ``params``: slot -> width)."""
    if e.start_pc != 0 or params.get(e.index) != width:
        return []
    lo, hi = e.start_pc, e.start_pc + e.length
    whole = hi >= original_length
    here = _unwritten(new, e.index, width)
    there = _unwritten(original, e.index, width)
    assigned = bool(original.stores_into(e.index, width))

    def claimed(k: int) -> bool:
        if not here[k]:
            return False
        if not assigned and whole:
            return True
        o = origin_at[k]
        return o is not None and lo <= o < hi and o in original.at and there[original.at[o]]
    return _runs(e, e.index, [claimed(k) for k in range(len(new.insns))], new.insns, code_length)


def _runs(e: LocalEntry, index: int, claimed: list[bool], insns: list[Instruction], code_length: int
          ) -> list[LocalEntry]:
    """``e`` at slot ``index`` over each maximal run of claimed instructions."""
    out: list[LocalEntry] = []
    start: int | None = None
    for k, ins in enumerate([*insns, None]):
        if ins is not None and claimed[k]:
            if start is None:
                start = ins.offset
        elif start is not None:
            end = ins.offset if ins is not None else code_length
            out.append(replace(e, start_pc=start, length=end - start, index=index))
            start = None
    return out


@dataclass(frozen=True)
class _Carried:
    """Where lowering put the variables that carry an original local (``Var.carries``): variable id -> slot,
    offset of each store of one of them -> its id, block id -> offset of the block's first instruction."""

    slots: dict[int, int]
    stores: dict[int, int]
    blocks: dict[int, int]


def _live_at_header(ir: IRMethod, v: Var, header: int) -> bool:
    """Whether some path from the start of block ``header`` reads ``v`` before writing it (normal successors
    only: an under-approximation of the liveness copy coalescing and slot sharing respect, so there ``v`` is
    the variable the reverter made for the theta, holding its value)."""
    seen, work = set(), [header]
    while work:
        bid = work.pop()
        if bid in seen or bid not in ir.blocks:
            continue
        seen.add(bid)
        b = ir.blocks[bid]
        for st in b.all_stmts():
            if any(x is v for x in st.operands()):
                return True
            if st.defined() is v:
                break
        else:
            work.extend(b.successors(include_exceptional=False))
    return False


def _carried_ranges(e: LocalEntry, width: int, kind: Kind, ir: IRMethod, carried: _Carried, new: _Flow,
                    code_length: int, origin_at: list[int | None], original: _Flow) -> list[LocalEntry]:
    """Entry ``e`` of an original local for the variables of rebuilt code that carry it (:class:`CarriedLocal`
    of a loop's theta whose loop header ``at`` lies in ``e``'s range, of ``e``'s kind and width): the runs of
    new instructions (1) inside the variable's loop, entered since the loop's header with no store into its
    slot in between, the slot holding the variable (and the variable the theta: it is live at the header)
    there; and (2) made from a statement (``origin_at``) of ``e``'s range that, in the original code, lies inside
    the original loop and is reached from its header with no store into ``e``'s slot in between. Both codes
    then hold the theta's value of the same iteration: the statement's effect runs in the same iteration of
    the same loop in both (the PEG's effect order)."""
    lo, hi = e.start_pc, e.start_pc + e.length
    claimed = [False] * len(new.insns)
    out: list[LocalEntry] = []
    for v in ir.variables:
        c = v.carries
        if c is None or c.slot != e.index or not lo <= c.at < hi or v.type.kind is not kind or \
                (2 if kind.wide else 1) != width or v.id not in carried.slots or c.at not in original.at or \
                carried.blocks.get(c.header) not in new.at or not _live_at_header(ir, v, c.header):
            continue
        slot, h = carried.slots[v.id], new.at[carried.blocks[c.header]]
        kills = new.stores_into(slot, width)
        holds = new.must(False, kills, {new.at[pc] for pc, vid in carried.stores.items() if vid == v.id})
        since = new.must(False, kills, resets={h: holds[h]})
        loop = new.loop_of(h)
        h0 = original.at[c.at]
        there = original.must(False, original.stores_into(e.index, width), resets={h0: True})
        old_loop = original.loop_of(h0)
        mine = [False] * len(new.insns)
        for k in loop:
            o = origin_at[k]
            if since[k] and not claimed[k] and o is not None and lo <= o < hi and o in original.at and \
                    original.at[o] in old_loop and there[original.at[o]]:
                mine[k] = claimed[k] = True
        out += _runs(e, slot, mine, new.insns, code_length)
    return out


def _local_tables(cf: ClassFile, method: MethodInfo, ir: IRMethod, asm: Assembled,
                  origin_marks: list[tuple[Label, int | None]], store_marks: list[tuple[Label, int, int]],
                  carried: _Carried) -> list[Attribute]:
    """The original method's LocalVariableTable and LocalVariableTypeTable, remapped to the new code (absent
    if the original had none or no entry survives); a parameter's entry with no single true image gets the
    ranges :func:`_parameter_ranges` finds true."""
    attr = method.code_attribute()
    if attr is None:
        return []
    original = [a for a in read_code(attr.data, cf.pool).attributes
                if a.name in ("LocalVariableTable", "LocalVariableTypeTable")]
    if not original:
        return []
    offsets, code_length = asm.offsets, len(asm.code)
    segments = [(offsets[label], origin) for label, origin in origin_marks]
    stores = [(offsets[label], slot, width) for label, slot, width in store_marks]
    old_code = read_code(attr.data, cf.pool)
    old_insns = read_instructions(old_code)
    slot_widths = _faithful_slots(ir, old_insns)
    origin_at = _origins_by_instruction(asm.instructions, segments)
    params = _parameter_slots(ir)
    spans, original_length = _spans(segments, code_length), _code_length_of(attr.data)
    flows: list[_Flow] = []  # the new and the original code's, made when an entry first needs them

    def flow() -> tuple[_Flow, _Flow]:
        if not flows:
            flows.extend((_Flow(asm.instructions, asm.exception_table), _Flow(old_insns, old_code.exception_table)))
        return flows[0], flows[1]
    kept: dict[str, tuple[Attribute, list]] = {}
    for a in original:
        table_entries: list[LocalEntry]
        if a.name == "LocalVariableTable":
            plain_entries = LocalVariableTable.parse(a.data).entries
            kinds = [type_of_descriptor(cf.pool.utf8(e.descriptor_index)).kind for e in plain_entries]
            table_entries = list(plain_entries)
        else:
            table_entries = list(LocalVariableTypeTable.parse(a.data).entries)
            kinds = [Kind.REF] * len(table_entries)  # signatures are of references
        widths = [2 if k.wide else 1 for k in kinds]
        entries: list[LocalEntry] = []
        for e, width, kind in zip(table_entries, widths, kinds):
            kept_e = _remap_entry(e, width, spans, stores, slot_widths, original_length)
            if kept_e is not None:
                entries.append(kept_e)
                continue
            new_flow, old_flow = flow()
            entries += _parameter_ranges(e, width, params, new_flow, code_length, origin_at, old_flow,
                                         original_length) or \
                _carried_ranges(e, width, kind, ir, carried, new_flow, code_length, origin_at, old_flow)
        unique = []  # two ranges may meet in one image; HotSpot rejects duplicated entries
        for e in entries:
            if e not in unique:
                unique.append(e)
        kept[a.name] = (a, unique)
    if "LocalVariableTypeTable" in kept:  # HotSpot: each of its entries must match an entry of the other table
        plain = {(e.start_pc, e.length, e.name_index, e.index) for e in kept.get("LocalVariableTable", (None, []))[1]}
        a, entries = kept["LocalVariableTypeTable"]
        kept["LocalVariableTypeTable"] = (a, [e for e in entries
                                              if (e.start_pc, e.length, e.name_index, e.index) in plain])
    out = []
    for a, entries in kept.values():
        if entries:
            out.append(Attribute(a.name_index, a.name, _local_table_bytes(a.name, entries)))
    return out


def _local_table_bytes(name: str, entries: list[LocalEntry]) -> bytes:
    """A LocalVariableTable's or LocalVariableTypeTable's bytes (its entries are all of its own kind)."""
    if name == "LocalVariableTable":
        return LocalVariableTable([e for e in entries if isinstance(e, LocalVariableEntry)]).to_bytes()
    return LocalVariableTypeTable([e for e in entries if isinstance(e, LocalVariableTypeEntry)]).to_bytes()
