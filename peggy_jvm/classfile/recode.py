"""Re-encoding one method's Code attribute: through the assembler, with frames and maxes computed afresh.

Owns: :func:`recode_method`, what ``optimize --stage classfile`` does to every method,
:func:`build_code_attribute`, which later stages use to emit code they generated, and
:func:`relocate_code_attributes` (with :func:`offsets_of`), the moving of Code-level tables to new offsets that
``recode_method`` and the constant-pool renumbering (:mod:`.poolorder`) share.

Inputs: a :class:`~.model.ClassFile`, one of its methods, a :class:`~.hierarchy.ClassHierarchy`. Output: the
new Code attribute's bytes (the caller decides whether to install them).

Invariants:
- the original StackMapTable is never reused: frames are recomputed from the new instructions (classes of
  major >= 50 without jsr/ret); for older classes, or code with jsr/ret, no StackMapTable is written;
- LineNumberTable, LocalVariableTable and LocalVariableTypeTable are remapped to the new offsets; any other
  Code-level attribute is kept only when every offset is unchanged (it may hold offsets we cannot remap) and
  dropped otherwise, which is reported through :attr:`RecodeResult.dropped`;
- ``max_locals`` is at least what the instructions, the parameters and the local-variable tables need.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import opcodes as op
from .assembler import reassemble
from .attributes import LineNumberTable, LocalVariableTable, LocalVariableTypeTable
from .bytecode import Instruction
from .constpool import ConstantPool
from .frames import compute_frames, encode_stack_map, initial_frame
from .hierarchy import ClassHierarchy
from .model import Attribute, ClassFile, CodeAttribute, ExceptionEntry, MethodInfo
from .writer import write_code

_LOCAL_TABLES = ("LocalVariableTable", "LocalVariableTypeTable")


@dataclass(slots=True)
class RecodeResult:
    data: bytes
    dropped: list[str] = field(default_factory=list)


def _has_subroutines(insns: list[Instruction]) -> bool:
    return any(i.opcode in (op.JSR, op.JSR_W, op.RET) for i in insns)


def build_code_attribute(cf: ClassFile, method: MethodInfo, insns: list[Instruction], code: bytes,
                         table: list[ExceptionEntry], attributes: list[Attribute],
                         hierarchy: ClassHierarchy | None, min_locals: int = 0) -> bytes:
    """Compute frames and maxes for final instructions and return the Code attribute body.

    ``attributes`` are the Code-level attributes to keep (already consistent with the new offsets; any
    StackMapTable among them is replaced).
    """
    pool: ConstantPool = cf.pool
    need_frames = cf.major >= 50 and not _has_subroutines(insns)
    computed = compute_frames(insns, table, pool, cf.name, method.name, method.descriptor, method.is_static,
                              hierarchy, need_frames=need_frames)
    kept = [a for a in attributes if a.name != "StackMapTable"]
    if computed.frames:
        init = initial_frame(cf.name, method.name, method.descriptor, method.is_static)
        body = encode_stack_map(computed.frames, init, pool)
        kept.append(Attribute(pool.add_utf8("StackMapTable"), "StackMapTable", body))
    code_attr = CodeAttribute(computed.max_stack, max(computed.max_locals, min_locals), code, table, kept)
    return write_code(code_attr)


def offsets_of(attr: Attribute) -> list[int]:
    if attr.name == "LineNumberTable":
        return [e.start_pc for e in LineNumberTable.parse(attr.data).entries]
    table = (LocalVariableTable if attr.name == "LocalVariableTable" else LocalVariableTypeTable).parse(attr.data)
    out = []
    for e in table.entries:
        out.append(e.start_pc)
        out.append(e.start_pc + e.length)
    return out


def relocate_code_attributes(attributes: list[Attribute], offset_map: dict[int, int], pool: ConstantPool
                             ) -> tuple[list[Attribute], list[str], int]:
    """The Code-level ``attributes`` moved to new offsets (``offset_map``: old instruction start -> new, and the
    old code length -> the new): LineNumberTable and LocalVariable(Type)Table remapped, any other attribute
    kept only if no offset moved and named in ``dropped`` otherwise; StackMapTable is left out (the caller
    writes frames). Returns (kept, dropped, the ``max_locals`` the local-variable tables need)."""
    moved = any(old != new for old, new in offset_map.items())
    kept: list[Attribute] = []
    dropped: list[str] = []
    min_locals = 0
    for a in attributes:
        if a.name == "StackMapTable":
            continue
        if a.name == "LineNumberTable":
            lnt = LineNumberTable.parse(a.data)
            for e in lnt.entries:
                e.start_pc = offset_map[e.start_pc]
            kept.append(Attribute(a.name_index, a.name, lnt.to_bytes()))
        elif a.name in _LOCAL_TABLES:
            lvt = (LocalVariableTable if a.name == "LocalVariableTable" else LocalVariableTypeTable).parse(a.data)
            for e in lvt.entries:
                start = offset_map[e.start_pc]
                e.length = offset_map[e.start_pc + e.length] - start
                e.start_pc = start
                size = 2 if a.name == "LocalVariableTable" and pool.utf8(e.descriptor_index) in ("J", "D") else 1
                min_locals = max(min_locals, e.index + size)
            kept.append(Attribute(a.name_index, a.name, lvt.to_bytes()))
        elif moved:
            dropped.append(a.name)
        else:
            kept.append(a)
    return kept, dropped, min_locals


def recode_method(cf: ClassFile, method: MethodInfo, code: CodeAttribute, insns: list[Instruction],
                  hierarchy: ClassHierarchy | None) -> RecodeResult:
    """Re-encode ``method``'s code (parsed as ``code``, decoded as ``insns``) through the assembler and
    recompute its frames and maxes."""
    remappable = [a for a in code.attributes if a.name == "LineNumberTable" or a.name in _LOCAL_TABLES]
    extra: list[int] = []
    for a in remappable:
        extra.extend(offsets_of(a))
    asm, offset_map = reassemble(code.code, code.exception_table, extra, insns)
    kept, dropped, min_locals = relocate_code_attributes(code.attributes, offset_map, cf.pool)
    data = build_code_attribute(cf, method, asm.instructions, asm.code, asm.exception_table, kept, hierarchy,
                                min_locals)
    return RecodeResult(data, dropped)
