"""Lifting: a method's bytecode -> :class:`~.nodes.IRMethod` (stackless, typed, with exception edges).

Inputs: the class (pool, bootstrap methods), one method's decoded instructions and exception table, and the
class hierarchy (types come from :class:`~peggy_jvm.classfile.frames.FrameInference`, the same inference that
computes stack-map frames). Output: an IRMethod, or :class:`LiftError` with the precise reason.

How: blocks start at leaders (branch targets, handler starts, after jumps) and wherever the set of active
exception handlers changes, so every statement of a block has the same handlers. Each block is walked once with
an abstract operand stack of IR operands: constants stay constants, loads push the local's variable (copied to
a temporary first if the local is overwritten while the value is still on the stack), every computed value gets
a fresh temporary. At block ends the remaining stack goes into canonical stack variables ``s<depth>`` (parallel
copy semantics), which is what the successors start from. ``new`` pushes a marker that the constructor call
turns into one :class:`~.nodes.New`; a :class:`~.nodes.ClassInit` stays where ``new`` was whenever anything
effectful happens in between. What an opcode becomes (its form, and the operator, kind, condition ... it carries)
is its row of :data:`.opmap.LIFTED`; an opcode without a row is refused.

Invariants: every method either lifts completely or raises LiftError (nothing half-lifted escapes); local
slot ``n`` holding kind ``k`` is always the variable ``l<n><k>``; the IR has no return addresses.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ..classfile import frames as fr
from ..classfile import opcodes as op
from ..classfile.attributes import BootstrapMethods
from ..classfile.bytecode import Instruction
from ..classfile.constpool import ConstantPool
from ..classfile.descriptors import parse_method_descriptor
from ..classfile.errors import ClassFileError, UnsupportedCodeError
from ..classfile.hierarchy import ClassHierarchy
from ..classfile.model import Access, ClassFile, CodeAttribute, MethodInfo
from ..classfile.reader import read_code, read_instructions
from ..semantics import static_read_is_pure
from .opmap import LIFTED, REFERENCE_KINDS, Form
from .subroutines import has_subroutines, inline_subroutines
from .nodes import (DOUBLE, FLOAT, INT, LONG, ArrayLength, ArrayLoad, ArrayStore, Binary, Block, Bootstrap,
                    Catch, CheckCast, ClassInit, Const, ConstKind, Copy, DynamicConst, FieldRef, GetField,
                    GetStatic, Goto, Handler, If, InstanceOf, Invoke, InvokeDynamic, InvokeKind, IRMethod, IRType,
                    Kind, MethodRef, MonitorEnter, MonitorExit, New, NewArray, NULL_TYPE, PutField, PutStatic,
                    Return, Stmt, Switch, Throw, Unary, Var, type_of_descriptor)


class LiftError(UnsupportedCodeError):
    """The method cannot be lifted; the message says what and where."""


@dataclass(eq=False, slots=True)
class LiftedMethod(IRMethod):
    """An IRMethod with what only its class file tells: the fields whose ``getstatic`` in this method can
    neither throw nor initialize a class (:func:`peggy_jvm.semantics.static_read_is_pure`; the PEG builder makes
    them plain reads). A method made any other way (the reverter's) has none, which is always safe."""

    pure_static_reads: frozenset[FieldRef] = frozenset()


_KIND_OF_VTYPE = {fr.INTEGER: INT, fr.FLOAT: FLOAT, fr.LONG: LONG, fr.DOUBLE: DOUBLE}
_ELEM_TYPE = {"I": INT, "J": LONG, "F": FLOAT, "D": DOUBLE, "B": INT, "C": INT, "S": INT}
#: an operator's result type by its name's last letter (``add.l``, ``i2b``); the comparisons give int
_RESULT_TYPE = {"i": INT, "l": LONG, "f": FLOAT, "d": DOUBLE, "b": INT, "c": INT, "s": INT}
_FIELD_FORMS = frozenset({Form.GETSTATIC, Form.PUTSTATIC, Form.GETFIELD, Form.PUTFIELD})


@dataclass(frozen=True, slots=True)
class _Uninit:
    """The value ``new`` pushed before its constructor ran (offset of the ``new``, class)."""

    offset: int
    cls: str


def _is_wide(x: object) -> bool:
    return isinstance(x, (Var, Const)) and x.type.kind.wide


class _Lifter:
    def __init__(self, cf: ClassFile, method: MethodInfo, code: CodeAttribute, insns: list[Instruction],
                 hierarchy: ClassHierarchy | None) -> None:
        self.cf = cf
        self.pool: ConstantPool = cf.pool
        self.method = method
        self.insns = insns
        self.code = code
        self.hierarchy = hierarchy
        self.vars: list[Var] = []
        self.local_vars: dict[tuple[int, Kind], Var] = {}
        self.stack_vars: dict[tuple[int, Kind], Var] = {}
        self.ref_classes: dict[int, list[str | None]] = {}
        self.bootstraps: list | None = None
        self.pending_inits: dict[int, ClassInit] = {}
        self.init_blocks: dict[int, Block] = {}
        self.own_static_fields = frozenset((f.name, f.descriptor) for f in cf.fields if f.access & Access.STATIC)
        self.pure_static_reads: set[FieldRef] = set()

    # -- variables --------------------------------------------------------------------------------------
    def new_var(self, t: IRType, name: str = "") -> Var:
        v = Var(len(self.vars), t, name)
        if not name:
            v.name = f"t{v.id}"
        self.vars.append(v)
        return v

    def local(self, slot: int, kind: Kind) -> Var:
        v = self.local_vars.get((slot, kind))
        if v is None:
            v = self.local_vars[(slot, kind)] = self.new_var(IRType(kind), f"l{slot}{kind.suffix}")
            v.slot = slot
        return v

    def stack_var(self, depth: int, kind: Kind) -> Var:
        v = self.stack_vars.get((depth, kind))
        if v is None:
            v = self.stack_vars[(depth, kind)] = self.new_var(IRType(kind), f"s{depth}{kind.suffix}")
        return v

    def note_class(self, v: Var, vtype: int | str | None) -> None:
        if v.type.kind is Kind.REF:
            self.ref_classes.setdefault(v.id, []).append(vtype if isinstance(vtype, str) else None)

    def temp_for(self, vtype: int | str) -> Var:
        """A fresh temporary typed by a verification type."""
        if isinstance(vtype, str):
            return self.new_var(IRType(Kind.REF, vtype))
        if vtype == fr.NULL:
            return self.new_var(NULL_TYPE)
        t = _KIND_OF_VTYPE.get(vtype)
        if t is None:
            raise LiftError(f"value of verification type {fr.type_name(vtype)} in {self.where()}")
        return self.new_var(t)

    def where(self) -> str:
        return f"{self.method.name}{self.method.descriptor}"

    # -- constants --------------------------------------------------------------------------------------
    def loadable(self, index: int) -> Const:
        e = self.pool.entry(index)
        tag = e[0]
        if tag == 3:
            return Const(INT, e[1])
        if tag == 4:
            return Const(FLOAT, struct.unpack(">f", struct.pack(">I", e[1]))[0])
        if tag == 5:
            return Const(LONG, e[1])
        if tag == 6:
            return Const(DOUBLE, struct.unpack(">d", struct.pack(">Q", e[1]))[0])
        if tag == 8:
            return Const(IRType(Kind.REF, "java/lang/String"), self.pool.utf8(e[1]))
        if tag == 7:
            return Const(IRType(Kind.REF, "java/lang/Class"), self.pool.class_name(index), ConstKind.CLASS)
        if tag == 16:
            return Const(IRType(Kind.REF, "java/lang/invoke/MethodType"), self.pool.utf8(e[1]),
                         ConstKind.METHOD_TYPE)
        if tag == 15:
            return Const(IRType(Kind.REF, "java/lang/invoke/MethodHandle"),
                         (REFERENCE_KINDS[e[1]], self.member(e[2])), ConstKind.METHOD_HANDLE)
        if tag == 17:
            name, desc = self.pool.name_and_type(e[2])
            return Const(type_of_descriptor(desc), DynamicConst(name, desc, self.bootstrap(e[1])), ConstKind.DYNAMIC)
        raise LiftError(f"constant #{index} is not loadable ({self.where()})")

    def member(self, index: int) -> FieldRef | MethodRef:
        r = self.pool.member_ref(index)
        if r.tag == 9:
            return FieldRef(r.owner, r.name, r.descriptor)
        return MethodRef(r.owner, r.name, r.descriptor, r.tag == 11)

    def bootstrap(self, k: int) -> Bootstrap:
        if self.bootstraps is None:
            attr = next((a for a in self.cf.attributes if a.name == "BootstrapMethods"), None)
            if attr is None:
                raise LiftError(f"invokedynamic without a BootstrapMethods attribute ({self.where()})")
            self.bootstraps = BootstrapMethods.parse(attr.data).methods
        if k >= len(self.bootstraps):
            raise LiftError(f"bootstrap method {k} does not exist ({self.where()})")
        bm = self.bootstraps[k]
        return Bootstrap(self.loadable(bm.bootstrap_method_ref), tuple(self.loadable(a) for a in bm.bootstrap_arguments))

    # -- the walk ---------------------------------------------------------------------------------------
    def lift(self) -> IRMethod:
        m = self.method
        try:
            inference, states = fr.infer_frames(self.insns, self.code.exception_table, self.pool, self.cf.name,
                                                m.name, m.descriptor, m.is_static, self.hierarchy)
        except UnsupportedCodeError as e:
            raise LiftError(f"{self.where()}: {e}") from None
        self.inference = inference
        n = len(self.insns)
        starts = set(inference.leaders) | {0}
        for k in range(1, n):
            if inference.cover[k] is not inference.cover[k - 1]:
                starts.add(k)
        self.block_starts = sorted(s for s in starts if s < n)
        self.block_of_index = set(self.block_starts)
        params = self.param_vars()
        blocks: dict[int, Block] = {}
        # blocks split only because the handlers change are entered by falling through from the block before,
        # whose walk records their state here
        self.fallthrough_states: dict[int, tuple[list, list]] = {}
        for start in self.block_starts:
            state = states.get(start) or self.fallthrough_states.get(start)
            if state is None:
                continue  # unreachable code: not part of the IR
            blocks[start] = self.lift_block(start, state)
        for b in blocks.values():
            for t in b.successors():
                if t not in blocks:
                    raise LiftError(f"{self.where()}: block {b.id} jumps to unreachable block {t}")
        self.settle_ref_types()
        return LiftedMethod(self.cf.name, m.name, m.descriptor, m.is_static, params, blocks, 0,
                            bool(m.access & Access.SYNCHRONIZED), self.vars, frozenset(self.pure_static_reads))

    def param_vars(self) -> list[Var]:
        m = self.method
        out = []
        slot = 0
        if not m.is_static:
            v = self.local(0, Kind.REF)
            self.note_class(v, self.cf.name)
            out.append(v)
            slot = 1
        args, _ = parse_method_descriptor(m.descriptor)
        for a in args:
            t = type_of_descriptor(a)
            v = self.local(slot, t.kind)
            if t.kind is Kind.REF:
                self.note_class(v, t.cls)
            out.append(v)
            slot += 2 if t.kind.wide else 1
        return out

    def entry_stack(self, start: int, vstack: list) -> list:
        """The operand stack a block starts with: canonical stack variables (or the caught exception)."""
        ops: list = []
        depth = 0
        i = 0
        while i < len(vstack):
            t = vstack[i]
            if isinstance(t, int) and t < 0:
                ops.append(_Uninit(-t - 1, self.pool.class_name(self.insns[self.inference.index_of[-t - 1]].arg)))
                i += 1
            else:
                ty = self.temp_type(t)
                v = self.stack_var(depth, ty.kind)
                self.note_class(v, t)
                ops.append(v)
                i += 2 if ty.kind.wide else 1
            depth += 1
        return ops

    def temp_type(self, vtype: int | str) -> IRType:
        if vtype == fr.UNINIT_THIS:  # `this` before the super constructor ran, e.g. in this(c ? a : b)
            return IRType(Kind.REF, self.cf.name)
        if isinstance(vtype, str) or vtype == fr.NULL:
            return IRType(Kind.REF, vtype if isinstance(vtype, str) else None)
        t = _KIND_OF_VTYPE.get(vtype)
        if t is None:
            raise LiftError(f"{self.where()}: value of verification type {fr.type_name(vtype)}")
        return t

    def lift_block(self, start: int, state: tuple[list, list]) -> Block:
        insns = self.insns
        inference = self.inference
        handlers = tuple(Handler(None if caught == "java/lang/Throwable" and self._catch_any(k) else caught,
                                 inference.handlers[k][2])
                         for k, caught in ((k, inference.handlers[k][3]) for k in inference.cover[start]))
        block = Block(start, origin=insns[start].offset, handlers=handlers)
        self.block = block
        vlocals, vstack = list(state[0]), list(state[1])
        self.vlocals = vlocals
        is_handler = any(h[2] == start for h in inference.handlers)
        if is_handler:  # a temporary: it is usually stored into a local right away
            exc = self.new_var(IRType(Kind.REF, vstack[0] if isinstance(vstack[0], str) else None))
            block.stmts.append(Catch(exc))
            stack: list = [exc]
        else:
            stack = self.entry_stack(start, vstack)
            if all(isinstance(x, Var) for x in stack):
                block.entry_stack = tuple(stack)
        self.stack = stack
        k = start
        n = len(insns)
        while True:
            ins = insns[k]
            first_new = len(block.stmts)
            term = self.lift_insn(ins, k)
            for st in block.stmts[first_new:]:
                if st.origin < 0:
                    st.origin = ins.offset
            if term is not None:
                term.origin = ins.offset
            inference.step(ins, vlocals, vstack)
            self.type_pushed(vstack)
            if term is not None:
                block.terminator = term
                break
            k += 1
            if k >= n:
                raise LiftError(f"{self.where()}: execution falls off the end of the code")
            if k in self.block_of_index:
                self.spill_stack()
                block.terminator = Goto(k)
                if k not in inference.leaders:
                    self.fallthrough_states[k] = (list(vlocals), list(vstack))
                break
        return block

    def _catch_any(self, k: int) -> bool:
        return self.code.exception_table[k].catch_type == 0

    def type_pushed(self, vstack: list) -> None:
        """Give the temporary just pushed the precise class the inference knows."""
        if self.stack and isinstance(self.stack[-1], Var) and self.stack[-1].name.startswith("t"):
            v = self.stack[-1]
            if v.type.kind is Kind.REF and vstack:
                self.note_class(v, vstack[-1])

    def spill_stack(self, *keep: Var | Const) -> list[Var | Const]:
        """Copy the stack into the canonical stack variables (parallel-copy semantics). ``keep`` are operands
        the block's terminator still reads; they are returned, saved first if the spill overwrites them."""
        stack = self.stack
        stmts = self.block.stmts
        targets: list[Var | None] = []
        for depth, x in enumerate(stack):
            if isinstance(x, _Uninit):
                targets.append(None)
                continue
            targets.append(self.stack_var(depth, x.type.kind))
        # a source that is itself a stack variable about to be overwritten goes through a temporary first
        written = {id(t) for d, t in enumerate(targets) if t is not None and stack[d] is not t}
        saved: dict[int, Var] = {}

        def save(x):
            if isinstance(x, Var) and id(x) in written:
                if id(x) not in saved:
                    saved[id(x)] = self.new_var(x.type)
                    stmts.append(Copy(saved[id(x)], x))
                return saved[id(x)]
            return x

        stack[:] = [save(x) for x in stack]
        kept = [save(x) for x in keep]
        for d, x in enumerate(stack):
            t = targets[d]
            if t is not None and x is not t:
                stmts.append(Copy(t, x))
                if t.type.kind is Kind.REF:
                    self.ref_classes.setdefault(t.id, []).append(x.type.cls)
        return kept

    # -- one instruction --------------------------------------------------------------------------------
    def pop(self, n: int = 1) -> list:
        if len(self.stack) < n:
            raise LiftError(f"{self.where()}: stack underflow")
        out = self.stack[len(self.stack) - n:]
        del self.stack[len(self.stack) - n:]
        return out

    def value(self, x: Var | Const | _Uninit) -> Var | Const:
        """``x``, an entry of the stack or the locals (which hold only these), when it is a value."""
        if isinstance(x, _Uninit):
            raise LiftError(f"{self.where()}: uninitialized object used as a value")
        return x

    def emit(self, s: Stmt) -> None:
        self.block.stmts.append(s)

    def push_new(self, t: IRType) -> Var:
        v = self.new_var(t)
        self.stack.append(v)
        return v

    def lift_insn(self, ins: Instruction, k: int):
        opc = ins.opcode
        if opc in op.SHORT_FORMS:
            opc, slot = op.SHORT_FORMS[opc]
        else:
            slot = ins.arg
        row = LIFTED.get(opc)
        if row is None:
            if opc in (op.JSR, op.JSR_W, op.RET):
                raise LiftError(f"{self.where()}: jsr/ret subroutines are not lifted yet (offset {ins.offset})")
            raise LiftError(f"{self.where()}: opcode {ins.name} at offset {ins.offset} is not lifted")
        form, param = row.form, row.param  # param: Any, the type the form says (opmap.Lifted)
        stack = self.stack
        if form is Form.NOP:
            return None
        if form is Form.CONST:
            stack.append(param)
            return None
        if form is Form.PUSH:
            stack.append(Const(INT, ins.arg))
            return None
        if form is Form.LDC:
            stack.append(self.loadable(ins.arg))
            return None
        if form is Form.LOAD:
            stack.append(self.local(slot, param))
            return None
        if form is Form.STORE:
            (x,) = self.pop()
            if isinstance(x, _Uninit):
                raise LiftError(f"{self.where()}: uninitialized object stored in local {slot}")
            target = self.local(slot, param)
            self.preserve(target)
            self.emit(Copy(target, x))
            if param is Kind.REF:
                self.ref_classes.setdefault(target.id, []).append(x.type.cls)
            return None
        if form is Form.IINC:
            target = self.local(slot, Kind.INT)
            self.preserve(target)
            self.emit(Binary(target, "add.i", target, Const(INT, ins.arg2)))
            return None
        if form is Form.ARRAY_LOAD:
            arr, idx = self.pop(2)
            elem = param
            arr = self.value(arr)
            t = _ELEM_TYPE.get(elem) or self.component_type(arr)
            dst = self.new_var(t)
            self.emit(ArrayLoad(dst, arr, idx, elem))
            stack.append(dst)
            return None
        if form is Form.ARRAY_STORE:
            arr, idx, v = self.pop(3)
            self.emit(ArrayStore(self.value(arr), idx, self.value(v), param))
            return None
        if form is Form.STACK:
            self.stack_op(opc)
            return None
        if form is Form.UNARY or form is Form.BINARY:
            name: str = param
            args = self.pop(1 if form is Form.UNARY else 2)
            dst = self.new_var(INT if name.startswith("cmp") else _RESULT_TYPE[name[-1]])
            self.emit(Unary(dst, name, args[0]) if form is Form.UNARY else Binary(dst, name, args[0], args[1]))
            stack.append(dst)
            return None
        if form is Form.IF_ZERO:
            (a,) = self.spill_stack(*self.pop())
            return If(param, a, Const(INT, 0), self.target(ins.arg), self.next_block(k))
        if form is Form.IF_ICMP or form is Form.IF_ACMP:
            a, b = self.spill_stack(*(self.value(x) for x in self.pop(2)))
            return If(param, a, b, self.target(ins.arg), self.next_block(k))
        if form is Form.IF_NULL:
            (a,) = self.spill_stack(*(self.value(x) for x in self.pop()))
            return If(param, a, Const(NULL_TYPE, None),
                      self.target(ins.arg), self.next_block(k))
        if form is Form.GOTO:
            self.spill_stack()
            return Goto(self.target(ins.arg))
        if form is Form.SWITCH:
            (v,) = self.spill_stack(*self.pop())
            assert ins.targets is not None  # the decoder gives every switch its targets
            keys = ins.keys if ins.keys is not None else list(range(ins.arg2, ins.arg2 + len(ins.targets)))
            return Switch(v, list(keys), [self.target(t) for t in ins.targets], self.target(ins.arg))
        if form is Form.RETURN:
            if param is None:
                return Return(None)
            (v,) = self.pop()
            return Return(self.value(v))
        if form is Form.THROW:
            (v,) = self.pop()
            return Throw(self.value(v))
        if form in _FIELD_FORMS:
            f = self.member(ins.arg)
            assert isinstance(f, FieldRef)
            if form is Form.GETSTATIC:
                dst = self.new_var(type_of_descriptor(f.descriptor))
                self.emit(GetStatic(dst, f))
                if static_read_is_pure(f.owner, f.name, f.descriptor, self.cf.name, self.method.is_static,
                                       self.own_static_fields):
                    self.pure_static_reads.add(f)
                stack.append(dst)
            elif form is Form.PUTSTATIC:
                (v,) = self.pop()
                self.emit(PutStatic(f, self.value(v)))
            elif form is Form.GETFIELD:
                (obj,) = self.pop()
                dst = self.new_var(type_of_descriptor(f.descriptor))
                self.emit(GetField(dst, self.value(obj), f))
                stack.append(dst)
            else:
                obj, v = self.pop(2)
                self.emit(PutField(self.value(obj), f, self.value(v)))
            return None
        if form is Form.INVOKE:
            return self.invoke(ins, param)
        if form is Form.INVOKEDYNAMIC:
            e = self.pool.entry(ins.arg, 18)
            name, desc = self.pool.name_and_type(e[2])
            args_desc, ret = parse_method_descriptor(desc)
            args = [self.value(a) for a in self.pop(len(args_desc))]
            result = None if ret == "V" else self.new_var(type_of_descriptor(ret))
            self.emit(InvokeDynamic(result, name, desc, self.bootstrap(e[1]), args))
            if result is not None:
                stack.append(result)
            return None
        if form is Form.NEW:
            cls = self.pool.class_name(ins.arg)
            init = ClassInit(cls)
            self.emit(init)
            self.pending_inits[ins.offset] = init
            self.init_blocks[ins.offset] = self.block
            stack.append(_Uninit(ins.offset, cls))
            return None
        if form is Form.NEWARRAY:
            if opc == op.MULTIANEWARRAY:
                sizes = self.pop(ins.arg2)
                self.emit_newarray(self.pool.class_name(ins.arg), sizes)
                return None
            (size,) = self.pop()
            if opc == op.NEWARRAY:
                self.emit_newarray(op.NEWARRAY_TYPES[ins.arg], [size])
            else:
                self.emit_newarray(fr._array_of(self.pool.class_name(ins.arg)), [size])
            return None
        if form is Form.ARRAYLENGTH:
            (a,) = self.pop()
            dst = self.new_var(INT)
            self.emit(ArrayLength(dst, self.value(a)))
            stack.append(dst)
            return None
        if form is Form.CHECKCAST:
            (a,) = self.pop()
            cls = self.pool.class_name(ins.arg)
            dst = self.new_var(IRType(Kind.REF, cls))
            self.emit(CheckCast(dst, self.value(a), cls))
            stack.append(dst)
            return None
        if form is Form.INSTANCEOF:
            (a,) = self.pop()
            dst = self.new_var(INT)
            self.emit(InstanceOf(dst, self.value(a), self.pool.class_name(ins.arg)))
            stack.append(dst)
            return None
        (a,) = self.pop()  # the monitors: the only forms left
        self.emit(MonitorEnter(self.value(a)) if form is Form.MONITORENTER else MonitorExit(self.value(a)))
        return None

    def emit_newarray(self, array_type: str, sizes: list) -> None:
        dst = self.new_var(IRType(Kind.REF, array_type))
        self.emit(NewArray(dst, array_type, [self.value(s) for s in sizes]))
        self.stack.append(dst)

    def component_type(self, arr: Var | Const) -> IRType:
        cls = arr.type.cls
        if cls and cls.startswith("["):
            return type_of_descriptor(cls[1:])
        return IRType(Kind.REF, None)

    def target(self, offset: int) -> int:
        return self.inference.index_of[offset]

    def next_block(self, k: int) -> int:
        if k + 1 >= len(self.insns):
            raise LiftError(f"{self.where()}: a conditional branch falls off the end of the code")
        return k + 1

    def preserve(self, local: Var) -> None:
        """Before ``local`` is overwritten, copy it wherever the stack still holds its old value."""
        stack = self.stack
        saved = None
        for d, x in enumerate(stack):
            if x is local:
                if saved is None:
                    saved = self.new_var(local.type)
                    self.emit(Copy(saved, local))
                stack[d] = saved

    def stack_op(self, opc: int) -> None:
        s = self.stack
        if len(s) < {0x57: 1, 0x58: 1, 0x59: 1, 0x5a: 2, 0x5b: 2, 0x5c: 1, 0x5d: 2, 0x5e: 2, 0x5f: 2}[opc]:
            raise LiftError(f"{self.where()}: stack underflow")
        if opc == 0x57:  # pop
            self.pop()
        elif opc == 0x58:  # pop2: one category-2 value or two category-1 values
            self.pop(1 if _is_wide(s[-1]) else 2)
        elif opc == 0x59:
            s.append(s[-1])
        elif opc == 0x5a:  # dup_x1
            s.insert(-2, s[-1])
        elif opc == 0x5b:  # dup_x2: value2 may be one category-2 value
            s.insert(-2 if _is_wide(s[-2]) else -3, s[-1])
        elif opc == 0x5c:  # dup2
            s.extend(s[-1:] if _is_wide(s[-1]) else s[-2:])
        elif opc == 0x5d:  # dup2_x1
            if _is_wide(s[-1]):
                s.insert(-2, s[-1])
            else:
                s[-3:-3] = s[-2:]
        elif opc == 0x5e:  # dup2_x2: four forms
            if _is_wide(s[-1]):
                s.insert(-2 if _is_wide(s[-2]) else -3, s[-1])
            else:
                s[-3 if _is_wide(s[-3]) else -4:-3 if _is_wide(s[-3]) else -4] = s[-2:]
        else:  # swap
            s[-1], s[-2] = s[-2], s[-1]

    def invoke(self, ins: Instruction, kind: InvokeKind):
        ref = self.member(ins.arg)
        assert isinstance(ref, MethodRef)
        args_desc, ret = parse_method_descriptor(ref.descriptor)
        args = self.pop(len(args_desc))
        receiver = None
        if kind is not InvokeKind.STATIC:
            (receiver,) = self.pop()
        vargs = [self.value(a) for a in args]
        if kind is InvokeKind.SPECIAL and ref.name == "<init>" and isinstance(receiver, _Uninit):
            dst = self.new_var(IRType(Kind.REF, receiver.cls))
            new = New(dst, receiver.cls, ref, vargs)
            self.emit(new)
            new.init = self.settle_class_init(receiver)
            self.stack[:] = [dst if x == receiver else x for x in self.stack]
            return None
        result = None if ret == "V" else self.new_var(type_of_descriptor(ret))
        self.emit(Invoke(result, kind, ref, None if receiver is None else self.value(receiver), vargs))
        if result is not None:
            self.stack.append(result)
        return None

    def settle_class_init(self, u: _Uninit) -> ClassInit | None:
        """Drop the ClassInit of ``new`` if nothing observable happened between it and the constructor call;
        return it if it stays."""
        init = self.pending_inits.pop(u.offset, None)
        if init is None:
            return None
        block = self.init_blocks.pop(u.offset)
        if block is not self.block:
            return init  # the arguments were computed across blocks: keep the initialization where it was
        stmts = block.stmts
        at = next(i for i, s in enumerate(stmts) if s is init)
        between = stmts[at + 1:-1]
        if all(isinstance(s, (Copy, Unary)) or (isinstance(s, Binary) and not s.may_throw) for s in between):
            del stmts[at]
            return None
        return init

    def settle_ref_types(self) -> None:
        """Each reference variable gets the least upper bound of the classes it was assigned."""
        merger = self.inference.merger
        for v in self.vars:
            if v.type.kind is not Kind.REF:
                continue
            seen = self.ref_classes.get(v.id)
            if not seen:
                continue
            cls: str | None = None
            for c in seen:
                if c is None:
                    continue
                if cls is None:
                    cls = c
                elif cls != c:
                    try:
                        cls = merger.merge_refs(cls, c)
                    except UnsupportedCodeError:
                        cls = "java/lang/Object"
            if v.type.cls != cls and (v.name.startswith(("l", "s")) or v.type.cls is None):
                v.type = IRType(Kind.REF, cls)


def lift_method(cf: ClassFile, method: MethodInfo, hierarchy: ClassHierarchy | None,
                code: CodeAttribute | None = None, insns: list[Instruction] | None = None) -> IRMethod:
    """Lift one method with code. Raises LiftError (unsupported) or ClassFileError (malformed)."""
    if code is None:
        attr = method.code_attribute()
        if attr is None:
            raise LiftError(f"{method.name}{method.descriptor} has no code")
        code = read_code(attr.data, cf.pool)
    if insns is None:
        insns = read_instructions(code)
    if has_subroutines(insns):
        try:
            insns, table, new_code = inline_subroutines(insns, len(code.code), code.exception_table)
        except UnsupportedCodeError as e:
            raise LiftError(f"{method.name}{method.descriptor}: {e}") from None
        code = CodeAttribute(code.max_stack, code.max_locals, new_code, table, code.attributes)
    try:
        return _Lifter(cf, method, code, insns, hierarchy).lift()
    except (LiftError, ClassFileError):
        raise
    except UnsupportedCodeError as e:
        raise LiftError(f"{method.name}{method.descriptor}: {e}") from None
    except (IndexError, KeyError) as e:  # inconsistent stack shapes the inference let through
        raise LiftError(f"{method.name}{method.descriptor}: cannot lift ({type(e).__name__}: {e})") from None
