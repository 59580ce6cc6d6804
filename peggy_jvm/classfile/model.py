"""The in-memory class-file model, as plain data: a class, its fields, methods and (raw) attributes.

Owns: :class:`ClassFile`, :class:`FieldInfo`, :class:`MethodInfo`, :class:`Attribute`, :class:`CodeAttribute`
and :class:`ExceptionEntry`, and the access-flag enum. Nothing here parses or encodes: bytes become these
objects in :mod:`.reader` (``read_class``, ``read_code``), typed attribute views in :mod:`.attributes`, and
these objects become bytes in :mod:`.writer` (``write_class``, ``write_code``). The model imports neither, so
the three modules form a line (model <- reader, writer), not a circle.

Invariants:
- attributes are kept as raw bytes plus the index of their name in the pool; a Code attribute is parsed only
  when a caller asks :func:`.reader.read_code` for it, so an attribute nobody touched is written back byte
  for byte, and an unknown attribute is never lost;
- a member's ``name`` and ``descriptor`` strings are resolved at read time for convenience; the indices remain
  the truth that is written;
- the accessors below only look things up (in the pool or the attribute list); none changes the model.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntFlag

from .constpool import ConstantPool


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


@dataclass(slots=True)
class ExceptionEntry:
    """One row of a Code attribute's exception table; ``catch_type`` 0 means any (finally)."""

    start: int
    end: int
    handler: int
    catch_type: int


@dataclass(slots=True)
class CodeAttribute:
    """A parsed Code attribute (:func:`.reader.read_code`); ``code`` is the raw bytecode, ``attributes`` raw."""

    max_stack: int
    max_locals: int
    code: bytes
    exception_table: list[ExceptionEntry]
    attributes: list[Attribute] = field(default_factory=list)
