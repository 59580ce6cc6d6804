"""Stack-map frames: decoding and encoding StackMapTable, and computing frames and maxes from scratch.

Owns: the verification-type lattice (JVMS 4.10.1.2), the verification-type effect of every opcode, the
dataflow that infers the frame before each instruction, ``max_stack`` / ``max_locals``, and the compact
StackMapTable encoding.

Inputs: a method's final instructions (:class:`~.bytecode.Instruction`, offsets as they will be written), its
exception table, the pool, the class name, the method's name, descriptor and access flags, and a
:class:`~.hierarchy.ClassHierarchy` to merge reference types. Output: :class:`ComputedFrames` (the frames the
verifier needs, max_stack, max_locals).

Verification types are plain values, for speed:
- ``0..6`` are Top, Integer, Float, Double, Long, Null, UninitializedThis (the StackMapTable tags);
- a ``str`` is an object type: an internal class name (``java/lang/String``) or an array descriptor (``[I``);
- a negative ``int`` ``-(offset + 1)`` is Uninitialized(offset), the object made by ``new`` at ``offset``.
Frames are word-based: a Long or Double occupies its slot and a Top after it, in locals and on the stack.

Invariants: the computed frames are the least upper bounds of the states that reach each point (so they are at
least as precise as any frames the original code verified with); a handler's frame covers the locals before
every instruction of its range (and after ``<init>`` calls, which change them); nothing is guessed: a
reference merge that needs an unknown class raises :class:`~.hierarchy.UnknownClassError`, and code the
inference cannot type (unreachable code needing a frame, inconsistent stacks) raises
:class:`~.errors.UnsupportedCodeError`.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from . import opcodes as op
from .bytecode import Instruction
from .constpool import ConstantPool
from .descriptors import parse_method_descriptor
from .errors import ClassFileError, UnsupportedCodeError
from .hierarchy import OBJECT, ClassHierarchy
from .model import ExceptionEntry
from .opcodes import Operand, OPERAND_OF

TOP, INTEGER, FLOAT, DOUBLE, LONG, NULL, UNINIT_THIS = range(7)
RETADDR = 7  # only in lenient (no-frames) inference of old code with jsr/ret
VType = "int | str"

_TYPE_NAMES = {TOP: "top", INTEGER: "int", FLOAT: "float", DOUBLE: "double", LONG: "long", NULL: "null",
               UNINIT_THIS: "uninitializedThis", RETADDR: "returnAddress"}


def type_name(v: int | str) -> str:
    if isinstance(v, str):
        return v
    if v < 0:
        return f"uninitialized({-v - 1})"
    return _TYPE_NAMES[v]


@dataclass(slots=True)
class Frame:
    """The verification state before the instruction at ``offset`` (word-based locals and stack)."""

    offset: int
    locals: list
    stack: list

    def describe(self) -> str:
        return "locals=[{}] stack=[{}]".format(", ".join(type_name(t) for t in compress(self.locals)),
                                                ", ".join(type_name(t) for t in compress(self.stack)))


@dataclass(slots=True)
class ComputedFrames:
    frames: list[Frame]
    max_stack: int
    max_locals: int


# -- field descriptors as verification types ----------------------------------------------------------------
_PRIM = {"I": (INTEGER,), "Z": (INTEGER,), "B": (INTEGER,), "C": (INTEGER,), "S": (INTEGER,), "F": (FLOAT,),
         "J": (LONG, TOP), "D": (DOUBLE, TOP), "V": ()}
_desc_cache: dict[str, tuple] = {}


def desc_words(desc: str) -> tuple:
    """Verification-type words of a value of field descriptor ``desc`` (``V`` -> no words)."""
    w = _desc_cache.get(desc)
    if w is None:
        c = desc[0]
        if c == "L":
            w = (desc[1:-1],)
        elif c == "[":
            w = (desc,)
        else:
            w = _PRIM[desc]
        _desc_cache[desc] = w
    return w


def _array_of(component: int | str) -> str:
    if isinstance(component, str):
        return "[" + component if component[0] == "[" else "[L" + component + ";"
    raise UnsupportedCodeError(f"array of {type_name(component)}")


def initial_frame(class_name: str, method_name: str, descriptor: str, is_static: bool) -> list:
    """The implicit frame at offset 0 (JVMS 4.10.1.6), as word-based locals."""
    locals_: list = []
    if not is_static:
        locals_.append(UNINIT_THIS if method_name == "<init>" and class_name != OBJECT else class_name)
    args, _ = parse_method_descriptor(descriptor)
    for a in args:
        locals_.extend(desc_words(a))
    return locals_


def compress(words: list) -> list:
    """Word-based locals -> verification-type list (a Long/Double counts once; trailing Tops dropped)."""
    out = compress_stack(words)
    while out and out[-1] == TOP:
        out.pop()
    return out


def expand(types: list) -> list:
    out = []
    for t in types:
        out.append(t)
        if t == LONG or t == DOUBLE:
            out.append(TOP)
    return out


# -- merging ------------------------------------------------------------------------------------------------
class _Merger:
    __slots__ = ("hierarchy", "lenient")

    def __init__(self, hierarchy: ClassHierarchy | None, lenient: bool) -> None:
        self.hierarchy = hierarchy
        self.lenient = lenient

    def merge(self, a: int | str, b: int | str) -> int | str:
        if a == b:
            return a
        if isinstance(a, str):
            if isinstance(b, str):
                return self.merge_refs(a, b)
            return a if b == NULL else TOP
        if isinstance(b, str) and a == NULL:
            return b
        return TOP

    def merge_refs(self, a: str, b: str) -> str:
        if self.lenient or self.hierarchy is None:
            return OBJECT
        if a[0] == "[" or b[0] == "[":
            if a[0] == "[" and b[0] == "[":
                ca, cb = a[1:], b[1:]
                if ca[0] in "L[" and cb[0] in "L[":
                    ta = ca[1:-1] if ca[0] == "L" else ca
                    tb = cb[1:-1] if cb[0] == "L" else cb
                    return _array_of(self.merge_refs(ta, tb))
            return OBJECT
        return self.hierarchy.common_super(a, b)


# -- the transfer function ----------------------------------------------------------------------------------
# opcode -> (words popped, words pushed) for every opcode whose effect does not depend on operands or types
_I, _F, _J, _D = (INTEGER,), (FLOAT,), (LONG, TOP), (DOUBLE, TOP)
_SIMPLE: dict[int, tuple[int, tuple]] = {0x00: (0, ()), 0x01: (0, (NULL,))}
for _o in range(0x02, 0x09):
    _SIMPLE[_o] = (0, _I)
_SIMPLE.update({0x09: (0, _J), 0x0a: (0, _J), 0x0b: (0, _F), 0x0c: (0, _F), 0x0d: (0, _F), 0x0e: (0, _D),
                0x0f: (0, _D), 0x10: (0, _I), 0x11: (0, _I),
                0x2e: (2, _I), 0x2f: (2, _J), 0x30: (2, _F), 0x31: (2, _D), 0x33: (2, _I), 0x34: (2, _I),
                0x35: (2, _I),
                0x4f: (3, ()), 0x50: (4, ()), 0x51: (3, ()), 0x52: (4, ()), 0x53: (3, ()), 0x54: (3, ()),
                0x55: (3, ()), 0x56: (3, ()), 0x57: (1, ()), 0x58: (2, ()),
                0x74: (1, _I), 0x75: (2, _J), 0x76: (1, _F), 0x77: (2, _D),
                0x78: (2, _I), 0x79: (3, _J), 0x7a: (2, _I), 0x7b: (3, _J), 0x7c: (2, _I), 0x7d: (3, _J),
                0x84: (0, ()),
                0x85: (1, _J), 0x86: (1, _F), 0x87: (1, _D), 0x88: (2, _I), 0x89: (2, _F), 0x8a: (2, _D),
                0x8b: (1, _I), 0x8c: (1, _J), 0x8d: (1, _D), 0x8e: (2, _I), 0x8f: (2, _J), 0x90: (2, _F),
                0x91: (1, _I), 0x92: (1, _I), 0x93: (1, _I),
                0x94: (4, _I), 0x95: (2, _I), 0x96: (2, _I), 0x97: (4, _I), 0x98: (4, _I),
                0xa7: (0, ()), 0xc8: (0, ()), 0xaa: (1, ()), 0xab: (1, ()),
                0xac: (1, ()), 0xad: (2, ()), 0xae: (1, ()), 0xaf: (2, ()), 0xb0: (1, ()), 0xb1: (0, ()),
                0xbe: (1, _I), 0xbf: (1, ()), 0xc1: (1, _I), 0xc2: (1, ()), 0xc3: (1, ()),
                0xc6: (1, ()), 0xc7: (1, ())})
for _base, _push in ((0x60, (_I, _J, _F, _D)), (0x64, (_I, _J, _F, _D)), (0x68, (_I, _J, _F, _D)),
                     (0x6c, (_I, _J, _F, _D)), (0x70, (_I, _J, _F, _D))):
    for _k, _p in enumerate(_push):
        _SIMPLE[_base + _k] = (2 * len(_p), _p)
for _o, _p in ((0x7e, _I), (0x7f, _J), (0x80, _I), (0x81, _J), (0x82, _I), (0x83, _J)):
    _SIMPLE[_o] = (2 * len(_p), _p)
for _o in range(0x99, 0x9f):
    _SIMPLE[_o] = (1, ())
for _o in range(0x9f, 0xa7):
    _SIMPLE[_o] = (2, ())

_LOAD_TYPES = {op.ILOAD: _I, op.LLOAD: _J, op.FLOAD: _F, op.DLOAD: _D}
_STORE_WORDS = {op.ISTORE: 1, op.LSTORE: 2, op.FSTORE: 1, op.DSTORE: 2, op.ASTORE: 1}
_STORE_TYPES = {op.ISTORE: _I, op.LSTORE: _J, op.FSTORE: _F, op.DSTORE: _D}
_LDC_TYPES = {3: INTEGER, 4: FLOAT, 5: LONG, 6: DOUBLE, 7: "java/lang/Class", 8: "java/lang/String",
              15: "java/lang/invoke/MethodHandle", 16: "java/lang/invoke/MethodType"}
_INVOKES = frozenset({op.INVOKEVIRTUAL, op.INVOKESPECIAL, op.INVOKESTATIC, op.INVOKEINTERFACE,
                      op.INVOKEDYNAMIC})
_FIELD_OPS = frozenset({op.GETSTATIC, op.PUTSTATIC, op.GETFIELD, op.PUTFIELD})
_STORES = frozenset(_STORE_WORDS) | frozenset(range(0x3b, 0x4f))
_JUMPS = (Operand.BRANCH2, Operand.BRANCH4, Operand.TABLESWITCH, Operand.LOOKUPSWITCH)
# words an opcode needs on the stack (dup family: what it duplicates or reorders)
_DUP_DEPTH = {0x59: 1, 0x5a: 2, 0x5b: 3, 0x5c: 2, 0x5d: 3, 0x5e: 4, 0x5f: 2}
_MIN_DEPTH = {op.NEWARRAY: 1, op.ANEWARRAY: 1, op.CHECKCAST: 1, 0x32: 2}


class FrameInference:
    """One method's verification-type dataflow. Built per method; not reused.

    :meth:`run` computes the state at every leader (``states``: instruction index -> (locals, stack), word
    based); :meth:`step` applies one instruction to a state, so a client (the IR lifter) can walk a block and
    know the type of every value. ``handlers`` lists (start index, end index, handler index, caught class)."""

    def __init__(self, insns: list[Instruction], table: list[ExceptionEntry], pool: ConstantPool,
                 class_name: str, merger: _Merger, lenient: bool) -> None:
        self.insns = insns
        self.pool = pool
        self.class_name = class_name
        self.merger = merger
        self.lenient = lenient
        self.index_of = {ins.offset: k for k, ins in enumerate(insns)}
        self.max_stack = 0
        self.max_locals = 0
        # handlers: (start index, end index, handler index, caught type)
        self.handlers: list[tuple[int, int, int, str]] = []
        n = len(insns)
        code_end = insns[-1].offset + insns[-1].length
        for e in table:
            s = self.index_of.get(e.start)
            h = self.index_of.get(e.handler)
            end = n if e.end == code_end else self.index_of.get(e.end)
            if s is None or h is None or end is None:
                raise ClassFileError(f"exception table entry [{e.start}, {e.end}) -> {e.handler} does not "
                                     "fall on instruction boundaries")
            caught = pool.class_name(e.catch_type) if e.catch_type else "java/lang/Throwable"
            self.handlers.append((s, end, h, caught))
        # the handlers covering each instruction; equal tuples are shared so `is` compares them cheaply
        cover: list[tuple[int, ...]] = [()] * n
        for k, (first, last, _, _) in enumerate(self.handlers):
            for i in range(first, last):
                cover[i] = cover[i] + (k,)
        shared: dict[tuple[int, ...], tuple[int, ...]] = {}
        self.cover = [shared.setdefault(c, c) for c in cover]
        # instructions where control can arrive other than by falling through from the previous one
        self.leaders = {0}
        self.leaders.update(h for _, _, h, _ in self.handlers)
        for k, ins in enumerate(insns):
            if ins.opcode >= 0x99 and (OPERAND_OF[ins.opcode] in _JUMPS or ins.opcode in op.NO_FALLTHROUGH):
                self.leaders.add(k + 1)
                for t in ins.successors_targets():
                    self.leaders.add(self.index_of[t])

    # -- ldc and member types -----------------------------------------------------------------------------
    def ldc_type(self, index: int) -> tuple:
        e = self.pool.entry(index)
        tag = e[0]
        t = _LDC_TYPES.get(tag)
        if t is not None:
            return (t, TOP) if t == LONG or t == DOUBLE else (t,)
        if tag == 17:
            return desc_words(self.pool.name_and_type(e[2])[1])
        raise ClassFileError(f"ldc of constant #{index} ({e[0]}) is not loadable")

    def run(self, entry_locals: list) -> dict[int, tuple[list, list]]:
        insns = self.insns
        n = len(insns)
        states: dict[int, tuple[list, list]] = {0: (entry_locals, [])}
        self.max_locals = len(entry_locals)
        work = [0]
        queued = {0}
        while work:
            start = work.pop()
            queued.discard(start)
            locals_, stack = states[start]
            locals_ = list(locals_)
            stack = list(stack)
            if len(stack) > self.max_stack:  # a handler starts with its exception already pushed
                self.max_stack = len(stack)
            i = start
            prev_cover: tuple[int, ...] | None = None
            dirty = True
            while True:
                ins = insns[i]
                cover = self.cover[i]
                if cover and (dirty or cover is not prev_cover):
                    for k in cover:
                        self._flow_handler(k, locals_, states, work, queued)
                    dirty = False
                prev_cover = cover
                succ = self.step(ins, locals_, stack)
                if type(succ) is _JsrFlow:
                    if len(stack) + 1 > self.max_stack:
                        self.max_stack = len(stack) + 1
                    self._flow(self.index_of[succ.target], locals_, [*stack, RETADDR], states, work, queued)
                    succ = None
                elif succ is _INIT_CHANGED:
                    dirty = True
                    if cover:
                        for k in cover:
                            self._flow_handler(k, locals_, states, work, queued)
                    succ = None
                elif ins.opcode in _STORES:
                    dirty = True
                if len(stack) > self.max_stack:
                    self.max_stack = len(stack)
                nxt = i + 1
                if succ is None:  # falls through only
                    if nxt >= n:
                        raise UnsupportedCodeError(f"execution falls off the end of the code after offset "
                                                   f"{ins.offset}")
                    if nxt in self.leaders:
                        self._flow(nxt, locals_, stack, states, work, queued)
                        break
                    i = nxt
                    continue
                for target in succ[0]:
                    self._flow(self.index_of[target], locals_, stack, states, work, queued)
                if succ[1]:
                    if nxt >= n:
                        raise UnsupportedCodeError(f"execution falls off the end of the code after offset "
                                                   f"{ins.offset}")
                    self._flow(nxt, locals_, stack, states, work, queued)
                break
        return states

    def _flow_handler(self, k: int, locals_: list, states: dict, work: list, queued: set) -> None:
        _, _, h, caught = self.handlers[k]
        self._flow(h, locals_, [caught], states, work, queued)

    def _flow(self, target: int, locals_: list, stack: list, states: dict, work: list, queued: set) -> None:
        old = states.get(target)
        if old is None:
            states[target] = (_trimmed(locals_), list(stack))
        else:
            ol, os_ = old
            if len(os_) != len(stack):
                if self.lenient:
                    return
                raise UnsupportedCodeError(f"stack heights {len(os_)} and {len(stack)} meet at offset "
                                           f"{self.insns[target].offset}")
            merge = self.merger.merge
            changed = False
            nl = len(locals_)
            if len(ol) > nl:
                ml = [merge(a, b) for a, b in zip(ol, locals_)]
                ml.extend(TOP for _ in range(len(ol) - nl))
            else:
                ml = [merge(a, b) for a, b in zip(ol, locals_)]
            _fix_pairs(ml)
            ml = _trimmed(ml)
            if ml != ol:
                changed = True
            ms = [merge(a, b) for a, b in zip(os_, stack)]
            if ms != os_:
                if not self.lenient:
                    for a, b in zip(ms, os_):
                        if a == TOP and b != TOP:
                            raise UnsupportedCodeError("incompatible stack types meet at offset "
                                                       f"{self.insns[target].offset}")
                changed = True
            if not changed:
                return
            states[target] = (ml, ms)
        if target not in queued:
            queued.add(target)
            work.append(target)

    def step(self, ins: Instruction, locals_: list, stack: list):
        """Apply one instruction. Returns None (falls through), _INIT_CHANGED (falls through, locals changed
        by a constructor call), or (branch targets, also falls through?)."""
        opc = ins.opcode
        simple = _SIMPLE.get(opc)
        if simple is not None:
            pops, push = simple
            if pops:
                if len(stack) < pops:
                    raise UnsupportedCodeError(f"stack underflow at offset {ins.offset}")
                del stack[-pops:]
            if push:
                stack.extend(push)
            if opc >= 0x99:
                kind = OPERAND_OF[opc]
                if kind is Operand.BRANCH2 or kind is Operand.BRANCH4:
                    return ((ins.arg,), opc != op.GOTO and opc != op.GOTO_W)
                if opc == op.TABLESWITCH or opc == op.LOOKUPSWITCH:
                    assert ins.targets is not None  # a decoded switch always has targets
                    return ((ins.arg, *ins.targets), False)
                if opc in op.NO_FALLTHROUGH:
                    return ((), False)
            return None
        need = _MIN_DEPTH.get(opc)
        if need is not None and len(stack) < need:
            raise UnsupportedCodeError(f"stack underflow at offset {ins.offset}")
        kind = OPERAND_OF[opc]
        if opc in op.SHORT_FORMS:
            opc, var = op.SHORT_FORMS[opc]
        else:
            var = ins.arg
        if op.ILOAD <= opc <= op.ALOAD:
            if opc == op.ALOAD:
                t = locals_[var] if var < len(locals_) else TOP
                stack.append(t)
            else:
                stack.extend(_LOAD_TYPES[opc])
            return None
        if op.ISTORE <= opc <= op.ASTORE:
            w = _STORE_WORDS[opc]
            if len(stack) < w:
                raise UnsupportedCodeError(f"stack underflow at offset {ins.offset}")
            value = stack[-w:]
            del stack[-w:]
            top = var + w
            if top > len(locals_):
                locals_.extend(TOP for _ in range(top - len(locals_)))
                if top > self.max_locals:
                    self.max_locals = top
            if var > 0:
                before = locals_[var - 1]
                if before == LONG or before == DOUBLE:
                    locals_[var - 1] = TOP
            locals_[var:top] = value if opc == op.ASTORE else _STORE_TYPES[opc]
            return None
        if opc == op.LDC or opc == op.LDC_W or opc == op.LDC2_W:
            stack.extend(self.ldc_type(ins.arg))
            return None
        if opc in _FIELD_OPS:
            ref = self.pool.member_ref(ins.arg)
            words = desc_words(ref.descriptor)
            value_words = len(words) if opc == op.PUTSTATIC or opc == op.PUTFIELD else 0
            receiver = 1 if opc == op.GETFIELD or opc == op.PUTFIELD else 0
            if len(stack) < value_words + receiver:
                raise UnsupportedCodeError(f"stack underflow at offset {ins.offset}")
            if opc == op.GETSTATIC:
                stack.extend(words)
            elif opc == op.PUTSTATIC:
                del stack[len(stack) - len(words):]
            elif opc == op.GETFIELD:
                stack.pop()
                stack.extend(words)
            else:
                del stack[len(stack) - len(words) - 1:]
            return None
        if opc in _INVOKES:
            if opc == op.INVOKEDYNAMIC:
                name, desc = self.pool.name_and_type(self.pool.entry(ins.arg, 18)[2])
            else:
                ref = self.pool.member_ref(ins.arg)
                name, desc = ref.name, ref.descriptor
            args, ret = parse_method_descriptor(desc)
            nwords = 0
            for a in args:
                nwords += 2 if a[0] in "JD" else 1
            if opc != op.INVOKESTATIC and opc != op.INVOKEDYNAMIC:
                nwords += 1
            if len(stack) < nwords:
                raise UnsupportedCodeError(f"stack underflow at offset {ins.offset}")
            constructed = stack[-nwords] if nwords else None
            del stack[len(stack) - nwords:]
            if ret != "V":
                stack.extend(desc_words(ret))
            if opc == op.INVOKESPECIAL and name == "<init>":
                if constructed == UNINIT_THIS:
                    init = self.class_name
                elif isinstance(constructed, int) and constructed < 0:
                    new_ins = self.insns[self.index_of[-constructed - 1]]
                    init = self.pool.class_name(new_ins.arg)
                else:
                    return None
                for k, t in enumerate(locals_):
                    if t == constructed:
                        locals_[k] = init
                for k, t in enumerate(stack):
                    if t == constructed:
                        stack[k] = init
                return _INIT_CHANGED
            return None
        if opc == op.NEW:
            stack.append(-ins.offset - 1)
            return None
        if opc == op.NEWARRAY:
            stack[-1] = op.NEWARRAY_TYPES[ins.arg]
            return None
        if opc == op.ANEWARRAY:
            stack[-1] = _array_of(self.pool.class_name(ins.arg))
            return None
        if opc == op.MULTIANEWARRAY:
            if len(stack) < ins.arg2:
                raise UnsupportedCodeError(f"stack underflow at offset {ins.offset}")
            del stack[len(stack) - ins.arg2:]
            stack.append(self.pool.class_name(ins.arg))
            return None
        if opc == op.CHECKCAST:
            stack[-1] = self.pool.class_name(ins.arg)
            return None
        if opc == 0x32:  # aaload
            arr = stack[-2]
            del stack[-2:]
            if isinstance(arr, str) and arr[0] == "[":
                c = arr[1:]
                stack.append(c[1:-1] if c[0] == "L" else c)
            elif arr == NULL:
                stack.append(NULL)
            elif self.lenient:
                stack.append(TOP)
            else:
                raise UnsupportedCodeError(f"aaload on {type_name(arr)} at offset {ins.offset}")
            return None
        if 0x59 <= opc <= 0x5f:
            _dup(opc, stack, ins.offset)
            return None
        if opc == op.JSR or opc == op.JSR_W:
            if not self.lenient:
                raise UnsupportedCodeError(f"jsr at offset {ins.offset} in a class that needs stack-map frames")
            return _JsrFlow(ins.arg)
        if opc == op.RET:
            if not self.lenient:
                raise UnsupportedCodeError(f"ret at offset {ins.offset} in a class that needs stack-map frames")
            return ((), False)
        raise UnsupportedCodeError(f"cannot type opcode 0x{opc:02x} at offset {ins.offset}")


_INIT_CHANGED = object()


class _JsrFlow:
    """What a jsr does in lenient inference (only depths matter): the subroutine starts with a return address
    pushed, and the code after the jsr resumes (through ret) with the stack it had before the jsr."""

    __slots__ = ("target",)

    def __init__(self, target: int) -> None:
        self.target = target


def _trimmed(locals_: list) -> list:
    """A copy without trailing Tops, keeping the Top that is the second word of a final Long/Double."""
    n = len(locals_)
    while n and locals_[n - 1] == TOP and not (n >= 2 and (locals_[n - 2] == LONG or locals_[n - 2] == DOUBLE)):
        n -= 1
    return locals_[:n]


def _fix_pairs(locals_: list) -> None:
    """After a merge, a Long/Double must still be followed by Top, and a lone second half is Top."""
    n = len(locals_)
    i = 0
    while i < n:
        t = locals_[i]
        if t == LONG or t == DOUBLE:
            if i + 1 >= n or locals_[i + 1] != TOP:
                locals_[i] = TOP
                i += 1
                continue
            i += 2
            continue
        i += 1


def _dup(opc: int, s: list, offset: int) -> None:
    if len(s) < _DUP_DEPTH[opc]:
        raise UnsupportedCodeError(f"stack underflow at offset {offset}")
    if opc == 0x59:
        s.append(s[-1])
    elif opc == 0x5a:
        s.insert(-2, s[-1])
    elif opc == 0x5b:
        s.insert(-3, s[-1])
    elif opc == 0x5c:
        s.extend(s[-2:])
    elif opc == 0x5d:
        s[-3:-3] = s[-2:]
    elif opc == 0x5e:
        s[-4:-4] = s[-2:]
    else:
        s[-1], s[-2] = s[-2], s[-1]


def frame_offsets(insns: list[Instruction], table: list[ExceptionEntry]) -> list[int]:
    """Offsets that need a stack-map frame: branch targets, handlers, and code after a non-falling jump."""
    need = {e.handler for e in table}
    for k, ins in enumerate(insns):
        opc = ins.opcode
        if opc < 0x99:
            continue
        kind = OPERAND_OF[opc]
        if kind is Operand.BRANCH2 or kind is Operand.BRANCH4:
            need.add(ins.arg)
        elif ins.targets is not None:
            need.add(ins.arg)
            need.update(ins.targets)
        if opc in op.NO_FALLTHROUGH and k + 1 < len(insns):
            need.add(insns[k + 1].offset)
    return sorted(need)


def infer_frames(insns: list[Instruction], table: list[ExceptionEntry], pool: ConstantPool, class_name: str,
                 method_name: str, descriptor: str, is_static: bool, hierarchy: ClassHierarchy | None
                 ) -> tuple[FrameInference, dict[int, tuple[list, list]]]:
    """The inference and its states at leaders, for clients that need types at every instruction."""
    analysis = FrameInference(insns, table, pool, class_name, _Merger(hierarchy, False), False)
    return analysis, analysis.run(initial_frame(class_name, method_name, descriptor, is_static))


def compute_frames(insns: list[Instruction], table: list[ExceptionEntry], pool: ConstantPool,
                   class_name: str, method_name: str, descriptor: str, is_static: bool,
                   hierarchy: ClassHierarchy | None, need_frames: bool = True) -> ComputedFrames:
    """Infer the frame before every instruction; return the frames the verifier needs and the maxes.

    With ``need_frames=False`` (old class files, or code with jsr/ret), reference merges need no hierarchy and
    only the maxes are meaningful.
    """
    lenient = not need_frames
    analysis = FrameInference(insns, table, pool, class_name, _Merger(hierarchy, lenient), lenient)
    entry = initial_frame(class_name, method_name, descriptor, is_static)
    states = analysis.run(entry)
    frames: list[Frame] = []
    if need_frames:
        for off in frame_offsets(insns, table):
            k = analysis.index_of[off]
            st = states.get(k)
            if st is None:
                raise UnsupportedCodeError(f"unreachable code at offset {off} needs a stack-map frame")
            frames.append(Frame(off, st[0], st[1]))
    return ComputedFrames(frames, analysis.max_stack, max(analysis.max_locals, len(entry)))


# -- StackMapTable encoding / decoding ---------------------------------------------------------------------
def _write_vtype(t: int | str, pool: ConstantPool, out: bytearray) -> None:
    if isinstance(t, str):
        out.append(7)
        out += pool.add_class(t).to_bytes(2, "big")
    elif t < 0:
        out.append(8)
        out += (-t - 1).to_bytes(2, "big")
    elif t <= 6:
        out.append(t)
    else:
        raise UnsupportedCodeError(f"cannot write {type_name(t)} into a stack-map frame")


def encode_stack_map(frames: list[Frame], initial_locals: list, pool: ConstantPool) -> bytes:
    """The body of a StackMapTable attribute, with the most compact frame kind for each frame."""
    out = bytearray(len(frames).to_bytes(2, "big"))
    prev_locals = compress(initial_locals)
    prev_offset = -1
    for f in frames:
        delta = f.offset - prev_offset - 1
        prev_offset = f.offset
        loc = compress(f.locals)
        stk = compress_stack(f.stack)
        if not stk and loc == prev_locals:
            if delta < 64:
                out.append(delta)
            else:
                out.append(251)
                out += delta.to_bytes(2, "big")
        elif len(stk) == 1 and loc == prev_locals:
            if delta < 64:
                out.append(64 + delta)
            else:
                out.append(247)
                out += delta.to_bytes(2, "big")
            _write_vtype(stk[0], pool, out)
        elif not stk and len(loc) < len(prev_locals) and len(prev_locals) - len(loc) <= 3 \
                and prev_locals[:len(loc)] == loc:
            out.append(251 - (len(prev_locals) - len(loc)))
            out += delta.to_bytes(2, "big")
        elif not stk and len(prev_locals) < len(loc) <= len(prev_locals) + 3 \
                and loc[:len(prev_locals)] == prev_locals:
            out.append(251 + len(loc) - len(prev_locals))
            out += delta.to_bytes(2, "big")
            for t in loc[len(prev_locals):]:
                _write_vtype(t, pool, out)
        else:
            out.append(255)
            out += delta.to_bytes(2, "big")
            out += len(loc).to_bytes(2, "big")
            for t in loc:
                _write_vtype(t, pool, out)
            out += len(stk).to_bytes(2, "big")
            for t in stk:
                _write_vtype(t, pool, out)
        prev_locals = loc
    return bytes(out)


def compress_stack(words: list) -> list:
    """Word-based stack -> verification-type list (a Long/Double counts once)."""
    out = []
    i = 0
    n = len(words)
    while i < n:
        t = words[i]
        out.append(t)
        i += 2 if t == LONG or t == DOUBLE else 1
    return out


def decode_stack_map(data: bytes, initial_locals: list, pool: ConstantPool) -> list[Frame]:
    """Decode a StackMapTable body, starting from the method's implicit initial frame."""
    try:
        return _decode_stack_map(data, initial_locals, pool)
    except (IndexError, struct.error):
        raise ClassFileError("StackMapTable truncated") from None


def _read_vtype(data: bytes, pos: int, pool: ConstantPool) -> tuple[int | str, int]:
    tag = data[pos]
    if tag <= 6:
        return tag, pos + 1
    value = (data[pos + 1] << 8) | data[pos + 2]
    if tag == 7:
        return pool.class_name(value), pos + 3
    if tag == 8:
        return -value - 1, pos + 3
    raise ClassFileError(f"StackMapTable: bad verification type tag {tag} at byte {pos}")


def _decode_stack_map(data: bytes, initial_locals: list, pool: ConstantPool) -> list[Frame]:
    count = (data[0] << 8) | data[1]
    pos = 2
    loc = compress(initial_locals)
    offset = -1
    frames = []
    for _ in range(count):
        kind = data[pos]
        pos += 1
        stack: list = []
        if kind < 64:
            delta = kind
        elif kind < 128:
            delta = kind - 64
            t, pos = _read_vtype(data, pos, pool)
            stack = [t]
        elif kind < 247:
            raise ClassFileError(f"StackMapTable: reserved frame type {kind}")
        else:
            delta = (data[pos] << 8) | data[pos + 1]
            pos += 2
            if kind == 247:
                t, pos = _read_vtype(data, pos, pool)
                stack = [t]
            elif kind < 251:
                k = 251 - kind
                if k > len(loc):
                    raise ClassFileError(f"StackMapTable: chop {k} of {len(loc)} locals")
                loc = loc[:-k]
            elif kind == 251:
                pass
            elif kind < 255:
                loc = list(loc)
                for _ in range(kind - 251):
                    t, pos = _read_vtype(data, pos, pool)
                    loc.append(t)
            else:
                nl = (data[pos] << 8) | data[pos + 1]
                pos += 2
                loc = []
                for _ in range(nl):
                    t, pos = _read_vtype(data, pos, pool)
                    loc.append(t)
                ns = (data[pos] << 8) | data[pos + 1]
                pos += 2
                for _ in range(ns):
                    t, pos = _read_vtype(data, pos, pool)
                    stack.append(t)
        offset += delta + 1
        frames.append(Frame(offset, expand(loc), expand(stack)))
    if pos != len(data):
        raise ClassFileError(f"StackMapTable has {len(data) - pos} trailing bytes")
    return frames
