"""The in-memory class-file model: a class, its fields, methods and (raw) attributes.

Owns: :class:`ClassFile`, :class:`FieldInfo`, :class:`MethodInfo`, :class:`Attribute`, :class:`CodeAttribute`
and :class:`ExceptionEntry`, the access-flag enum, and the pure (de)serialisers of the class-file structure
(``read_class`` / ``write_class`` live in :mod:`.reader` and :mod:`.writer`).

Invariants:
- attributes are kept as raw bytes plus the index of their name in the pool; typed views are decoded on
  demand (:mod:`.attributes`, :meth:`CodeAttribute.parse`) so an attribute nobody touched is written back
  byte for byte, and an unknown attribute is never lost;
- a member's ``name`` and ``descriptor`` strings are resolved at read time for convenience; the indices remain
  the truth that is written.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntFlag

from typing import TYPE_CHECKING

from .constpool import ConstantPool
from .errors import ClassFileError

if TYPE_CHECKING:
    from .bytecode import Instruction


class Access(IntFlag):
    PUBLIC = 0x0001
    PRIVATE = 0x0002
    PROTECTED = 0x0004
    STATIC = 0x0008
    FINAL = 0x0010
    SYNCHRONIZED = 0x0020  # ACC_SUPER on classes
    VOLATILE = 0x0040  # ACC_BRIDGE on methods
    TRANSIENT = 0x0080  # ACC_VARARGS on methods
    NATIVE = 0x0100
    INTERFACE = 0x0200
    ABSTRACT = 0x0400
    STRICT = 0x0800
    SYNTHETIC = 0x1000
    ANNOTATION = 0x2000
    ENUM = 0x4000
    MODULE = 0x8000


@dataclass(slots=True)
class Attribute:
    """One attribute: its name (resolved) and name index, and its body bytes (without name and length)."""

    name_index: int
    name: str
    data: bytes


def attribute_named(attributes: list[Attribute], name: str) -> Attribute | None:
    for a in attributes:
        if a.name == name:
            return a
    return None


@dataclass(slots=True)
class FieldInfo:
    access: int
    name_index: int
    descriptor_index: int
    attributes: list[Attribute]
    name: str = ""
    descriptor: str = ""


@dataclass(slots=True)
class MethodInfo:
    access: int
    name_index: int
    descriptor_index: int
    attributes: list[Attribute]
    name: str = ""
    descriptor: str = ""

    @property
    def is_static(self) -> bool:
        return bool(self.access & Access.STATIC)

    def code_attribute(self) -> Attribute | None:
        return attribute_named(self.attributes, "Code")


@dataclass(slots=True)
class ClassFile:
    minor: int
    major: int
    pool: ConstantPool
    access: int
    this_index: int
    super_index: int
    interface_indices: list[int]
    fields: list[FieldInfo]
    methods: list[MethodInfo]
    attributes: list[Attribute]

    @property
    def name(self) -> str:
        return self.pool.class_name(self.this_index)

    @property
    def super_name(self) -> str | None:
        return self.pool.class_name(self.super_index) if self.super_index else None

    @property
    def interfaces(self) -> list[str]:
        return [self.pool.class_name(i) for i in self.interface_indices]

    @property
    def is_interface(self) -> bool:
        return bool(self.access & Access.INTERFACE)

    def attribute_name_index(self, name: str) -> int:
        """Pool index of the Utf8 ``name``, for building a new attribute."""
        return self.pool.add_utf8(name)


@dataclass(slots=True)
class ExceptionEntry:
    """One row of a Code attribute's exception table; ``catch_type`` 0 means any (finally)."""

    start: int
    end: int
    handler: int
    catch_type: int


_U2U2U4 = struct.Struct(">HHI")
_EXC = struct.Struct(">HHHH")


@dataclass(slots=True)
class CodeAttribute:
    max_stack: int
    max_locals: int
    code: bytes
    exception_table: list[ExceptionEntry]
    attributes: list[Attribute] = field(default_factory=list)

    @classmethod
    def parse(cls, data: bytes, pool: ConstantPool) -> "CodeAttribute":
        from .reader import read_attributes  # the attribute-list reader is shared with the class reader

        n = len(data)
        if n < 8:
            raise ClassFileError("Code attribute truncated")
        max_stack, max_locals, code_length = _U2U2U4.unpack_from(data, 0)
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
            s, e, h, t = _EXC.unpack_from(data, pos)
            pos += 8
            if not (s < e <= code_length and h < code_length):
                raise ClassFileError(f"exception table entry [{s}, {e}) -> {h} outside code of {code_length} bytes")
            table.append(ExceptionEntry(s, e, h, t))
        attributes, pos = read_attributes(data, pos, pool, "Code")
        if pos != n:
            raise ClassFileError(f"Code attribute has {n - pos} trailing bytes")
        return cls(max_stack, max_locals, bytes(code), table, attributes)

    def instructions(self) -> list[Instruction]:
        """The decoded code, checked: valid opcodes and operands, branch targets and exception-table bounds at
        instruction starts. Raises ClassFileError (the class is malformed) otherwise."""
        from .bytecode import decode

        insns = decode(self.code)
        starts = {i.offset for i in insns}
        starts.add(len(self.code))
        for x in self.exception_table:
            if x.start not in starts or x.end not in starts or x.handler not in starts:
                raise ClassFileError(f"exception table entry [{x.start}, {x.end}) -> {x.handler} does not "
                                     "start and end at instructions")
        return insns

    def to_bytes(self) -> bytes:
        from .writer import write_attributes

        if not 0 < len(self.code) < 65536:
            raise ClassFileError(f"method code is {len(self.code)} bytes (must be 1..65535)")
        parts = [_U2U2U4.pack(self.max_stack, self.max_locals, len(self.code)), self.code,
                 len(self.exception_table).to_bytes(2, "big")]
        parts.extend(_EXC.pack(x.start, x.end, x.handler, x.catch_type) for x in self.exception_table)
        parts.append(write_attributes(self.attributes))
        return b"".join(parts)
