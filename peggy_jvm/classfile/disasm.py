"""A javap-like listing of a class: members, code with resolved operands, exception tables and frames.

Inputs: a :class:`~.model.ClassFile`. Output: text lines. Frames are decoded from the method's StackMapTable
starting from its implicit initial frame and shown before the instruction they describe.
"""
from __future__ import annotations

from typing import Iterator

from .attributes import LineNumberTable
from .frames import decode_stack_map, initial_frame
from .model import Access, ClassFile, MethodInfo
from .reader import read_code, read_instructions
from .opcodes import NEWARRAY_NAMES, OPERAND_OF, Operand

_METHOD_FLAGS = [(Access.PUBLIC, "public"), (Access.PRIVATE, "private"), (Access.PROTECTED, "protected"),
                 (Access.STATIC, "static"), (Access.FINAL, "final"), (Access.SYNCHRONIZED, "synchronized"),
                 (Access.VOLATILE, "bridge"), (Access.TRANSIENT, "varargs"), (Access.NATIVE, "native"),
                 (Access.ABSTRACT, "abstract"), (Access.STRICT, "strict"), (Access.SYNTHETIC, "synthetic")]


def method_matches(m: MethodInfo, selector: str) -> bool:
    """``name`` or ``name(desc)...`` selects a method; ``Class.name`` forms are stripped by the caller."""
    return selector == m.name or selector == m.name + m.descriptor


def disassemble(cf: ClassFile, method: str | None = None) -> Iterator[str]:
    pool = cf.pool
    kind = "interface" if cf.is_interface else "class"
    sup = f" extends {cf.super_name}" if cf.super_name else ""
    ifs = f" implements {', '.join(cf.interfaces)}" if cf.interfaces else ""
    yield f"{kind} {cf.name}{sup}{ifs}  // version {cf.major}.{cf.minor}, {len(pool) - 1} constants"
    if method is None:
        for f in cf.fields:
            yield f"  field {f.name}:{f.descriptor}  flags=0x{f.access:04x}"
    for m in cf.methods:
        if method is not None and not method_matches(m, method):
            continue
        yield from _method(cf, m)


def _method(cf: ClassFile, m: MethodInfo) -> Iterator[str]:
    pool = cf.pool
    flags = " ".join(n for f, n in _METHOD_FLAGS if m.access & f)
    yield ""
    yield f"  {flags + ' ' if flags else ''}{m.name}{m.descriptor}"
    attr = m.code_attribute()
    if attr is None:
        yield "    (no code)"
        return
    code = read_code(attr.data, pool)
    yield f"    stack={code.max_stack}, locals={code.max_locals}, code_length={len(code.code)}"
    frames = {}
    lines = {}
    for a in code.attributes:
        if a.name == "StackMapTable":
            init = initial_frame(cf.name, m.name, m.descriptor, m.is_static)
            frames = {f.offset: f for f in decode_stack_map(a.data, init, pool)}
        elif a.name == "LineNumberTable":
            for e in LineNumberTable.parse(a.data).entries:
                lines.setdefault(e.start_pc, e.line_number)
    for ins in read_instructions(code):
        if ins.offset in frames:
            yield f"        frame: {frames[ins.offset].describe()}"
        line = f"  // line {lines[ins.offset]}" if ins.offset in lines else ""
        yield f"    {ins.offset:5d}: {_operands(ins, pool)}{line}"
    for e in code.exception_table:
        caught = pool.class_name(e.catch_type) if e.catch_type else "any"
        yield f"    catch [{e.start}, {e.end}) -> {e.handler}  {caught}"
    others = [a.name for a in code.attributes if a.name not in ("StackMapTable", "LineNumberTable")]
    if others:
        yield f"    code attributes: {', '.join(others)}"


def _operands(ins, pool) -> str:
    name = ("wide " if ins.wide else "") + ins.name
    kind = OPERAND_OF[ins.opcode]
    if kind is Operand.NONE:
        return name
    if kind in (Operand.LOCAL, Operand.S1, Operand.S2):
        return f"{name} {ins.arg}"
    if kind is Operand.IINC:
        return f"{name} {ins.arg} {ins.arg2}"
    if kind in (Operand.BRANCH2, Operand.BRANCH4):
        return f"{name} {ins.arg}"
    if kind in (Operand.CP1, Operand.CP2, Operand.INVOKEINTERFACE, Operand.INVOKEDYNAMIC):
        return f"{name} #{ins.arg}  // {pool.describe(ins.arg)}"
    if kind is Operand.MULTIANEWARRAY:
        return f"{name} #{ins.arg} dims={ins.arg2}  // {pool.describe(ins.arg)}"
    if kind is Operand.NEWARRAY:
        return f"{name} {NEWARRAY_NAMES.get(ins.arg, ins.arg)}"
    if kind is Operand.TABLESWITCH:
        cases = ", ".join(f"{ins.arg2 + k}: {t}" for k, t in enumerate(ins.targets))
        return f"{name} {{{cases}, default: {ins.arg}}}"
    cases = ", ".join(f"{k}: {t}" for k, t in zip(ins.keys, ins.targets))
    return f"{name} {{{cases}{', ' if cases else ''}default: {ins.arg}}}"
