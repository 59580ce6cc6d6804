"""Reading class files: bytes -> :class:`~.model.ClassFile`, and a Code attribute's body -> its parts.

Inputs: the bytes of one class file (:func:`read_class`); the body of one Code attribute and the class's pool
(:func:`read_code`); a parsed Code attribute (:func:`read_instructions`). Outputs: a ClassFile whose pool,
members and attributes are exactly what the file holds (attributes raw: a method's Code is parsed only when a
caller asks :func:`read_code`, which keeps reading a whole class cheap for the callers that touch few
methods); a :class:`~.model.CodeAttribute` (its own attributes raw); the checked instruction list.

Every structural problem (truncation, wrong magic, bad index, absurd count, trailing bytes, an exception-table
bound that is not an instruction start) raises :class:`~.errors.ClassFileError` with the offset or member
where it was found. The writer (:mod:`.writer`) is the inverse: what is read and not changed writes back
byte-identical.
"""
from __future__ import annotations

import struct

from .bytecode import Instruction, decode
from .constpool import ConstantPool
from .errors import ClassFileError
from .model import Attribute, ClassFile, CodeAttribute, ExceptionEntry, FieldInfo, MethodInfo

_MEMBER = struct.Struct(">HHHH")
_NAME_LEN = struct.Struct(">HI")
_CODE_HEADER = struct.Struct(">HHI")  # max_stack, max_locals, code_length
_EXCEPTION = struct.Struct(">HHHH")  # start_pc, end_pc, handler_pc, catch_type


def read_attributes(data: bytes | memoryview, pos: int, pool: ConstantPool, where: str
                    ) -> tuple[list[Attribute], int]:
    n = len(data)
    if pos + 2 > n:
        raise ClassFileError(f"truncated before attributes_count of {where} (offset {pos})")
    count = (data[pos] << 8) | data[pos + 1]
    pos += 2
    out = []
    for k in range(count):
        if pos + 6 > n:
            raise ClassFileError(f"truncated in attribute {k} of {where} (offset {pos})")
        name_index, length = _NAME_LEN.unpack_from(data, pos)
        pos += 6
        if pos + length > n:
            raise ClassFileError(f"attribute {k} of {where} claims {length} bytes, only {n - pos} remain "
                                 f"(offset {pos})")
        try:
            name = pool.utf8(name_index)
        except ClassFileError:
            raise ClassFileError(f"attribute {k} of {where} has bad name index {name_index}") from None
        out.append(Attribute(name_index, name, bytes(data[pos:pos + length])))
        pos += length
    return out, pos


def _read_members(data: bytes, pos: int, pool: ConstantPool, kind: str, cls: type) -> tuple[list, int]:
    n = len(data)
    if pos + 2 > n:
        raise ClassFileError(f"truncated before {kind}s_count (offset {pos})")
    count = (data[pos] << 8) | data[pos + 1]
    pos += 2
    members = []
    for k in range(count):
        if pos + 8 > n:
            raise ClassFileError(f"truncated in {kind} {k} of {count} (offset {pos})")
        access, name_index, desc_index, _ = _MEMBER.unpack_from(data, pos)
        try:
            name = pool.utf8(name_index)
            desc = pool.utf8(desc_index)
        except ClassFileError as e:
            raise ClassFileError(f"{kind} {k}: {e}") from None
        attributes, pos = read_attributes(data, pos + 6, pool, f"{kind} {name}{desc if kind == 'method' else ''}")
        members.append(cls(access, name_index, desc_index, attributes, name, desc))
    return members, pos


def read_class(data: bytes) -> ClassFile:
    """Parse a whole class file."""
    if len(data) < 10:
        raise ClassFileError(f"truncated: {len(data)} bytes is too short for a class file")
    if data[:4] != b"\xca\xfe\xba\xbe":
        raise ClassFileError(f"bad magic 0x{data[:4].hex().upper()} (expected 0xCAFEBABE)")
    minor = (data[4] << 8) | data[5]
    major = (data[6] << 8) | data[7]
    if not 45 <= major <= 70:
        raise ClassFileError(f"unsupported class file version {major}.{minor}")
    pool, pos = ConstantPool.parse(data, 8)
    if pos + 8 > len(data):
        raise ClassFileError(f"truncated after constant pool (offset {pos})")
    access, this_index, super_index, icount = _MEMBER.unpack_from(data, pos)
    pos += 8
    try:
        pool.class_name(this_index)
        if super_index:
            pool.class_name(super_index)
    except ClassFileError as e:
        raise ClassFileError(f"this_class/super_class: {e}") from None
    if pos + 2 * icount > len(data):
        raise ClassFileError(f"truncated in interfaces ({icount} declared, offset {pos})")
    interfaces = list(struct.unpack_from(f">{icount}H", data, pos))
    for i in interfaces:
        try:
            pool.class_name(i)
        except ClassFileError as e:
            raise ClassFileError(f"interfaces: {e}") from None
    pos += 2 * icount
    fields, pos = _read_members(data, pos, pool, "field", FieldInfo)
    methods, pos = _read_members(data, pos, pool, "method", MethodInfo)
    attributes, pos = read_attributes(data, pos, pool, "class")
    if pos != len(data):
        raise ClassFileError(f"{len(data) - pos} trailing bytes after the class file (offset {pos})")
    return ClassFile(minor, major, pool, access, this_index, super_index, interfaces, fields, methods,
                     attributes)


def read_code(data: bytes, pool: ConstantPool) -> CodeAttribute:
    """Parse the body of a Code attribute (``Attribute.data``); its own attributes stay raw."""
    n = len(data)
    if n < 8:
        raise ClassFileError("Code attribute truncated")
    max_stack, max_locals, code_length = _CODE_HEADER.unpack_from(data, 0)
    if code_length == 0 or code_length >= 65536:
        raise ClassFileError(f"Code attribute has invalid code_length {code_length}")
    pos = 8 + code_length
    if pos + 2 > n:
        raise ClassFileError("Code attribute truncated in code")
    code = data[8:pos]
    count = (data[pos] << 8) | data[pos + 1]
    pos += 2
    if pos + 8 * count > n:
        raise ClassFileError(f"Code attribute truncated in exception table ({count} entries)")
    table = []
    for _ in range(count):
        s, e, h, t = _EXCEPTION.unpack_from(data, pos)
        pos += 8
        if not (s < e <= code_length and h < code_length):
            raise ClassFileError(f"exception table entry [{s}, {e}) -> {h} outside code of {code_length} bytes")
        table.append(ExceptionEntry(s, e, h, t))
    attributes, pos = read_attributes(data, pos, pool, "Code")
    if pos != n:
        raise ClassFileError(f"Code attribute has {n - pos} trailing bytes")
    return CodeAttribute(max_stack, max_locals, bytes(code), table, attributes)


def read_instructions(code: CodeAttribute) -> list[Instruction]:
    """The decoded code, checked: valid opcodes and operands, branch targets and exception-table bounds at
    instruction starts. Raises ClassFileError (the class is malformed) otherwise."""
    insns = decode(code.code)
    starts = {i.offset for i in insns}
    starts.add(len(code.code))
    for x in code.exception_table:
        if x.start not in starts or x.end not in starts or x.handler not in starts:
            raise ClassFileError(f"exception table entry [{x.start}, {x.end}) -> {x.handler} does not "
                                 "start and end at instructions")
    return insns
