"""Writing class files: :class:`~.model.ClassFile` -> bytes, and :class:`~.model.CodeAttribute` -> its body.

Inputs: a ClassFile (possibly with appended constants and replaced attributes); a CodeAttribute (a new one a
stage built, or one :func:`~.reader.read_code` parsed). Outputs: the class-file bytes; the body of a Code
attribute (``Attribute.data``). Invariant: what :mod:`.reader` read and nobody modified writes back
byte-identical. A value that does not fit its field (code of 0 or more than 65535 bytes, more than 65535
attributes) raises :class:`~.errors.ClassFileError`.
"""
from __future__ import annotations

import struct

from .errors import ClassFileError
from .model import Attribute, ClassFile, CodeAttribute

_MEMBER = struct.Struct(">HHH")
_NAME_LEN = struct.Struct(">HI")
_CODE_HEADER = struct.Struct(">HHI")  # max_stack, max_locals, code_length
_EXCEPTION = struct.Struct(">HHHH")  # start_pc, end_pc, handler_pc, catch_type


def write_attributes(attributes: list[Attribute]) -> bytes:
    if len(attributes) > 0xFFFF:
        raise ClassFileError("more than 65535 attributes")
    parts = [len(attributes).to_bytes(2, "big")]
    for a in attributes:
        parts.append(_NAME_LEN.pack(a.name_index, len(a.data)))
        parts.append(a.data)
    return b"".join(parts)


def write_code(code: CodeAttribute) -> bytes:
    """The body of a Code attribute."""
    if not 0 < len(code.code) < 65536:
        raise ClassFileError(f"method code is {len(code.code)} bytes (must be 1..65535)")
    parts = [_CODE_HEADER.pack(code.max_stack, code.max_locals, len(code.code)), code.code,
             len(code.exception_table).to_bytes(2, "big")]
    parts.extend(_EXCEPTION.pack(x.start, x.end, x.handler, x.catch_type) for x in code.exception_table)
    parts.append(write_attributes(code.attributes))
    return b"".join(parts)


def write_class(cf: ClassFile) -> bytes:
    parts = [b"\xca\xfe\xba\xbe", struct.pack(">HH", cf.minor, cf.major), cf.pool.to_bytes(),
             struct.pack(">HHHH", cf.access, cf.this_index, cf.super_index, len(cf.interface_indices))]
    parts.append(struct.pack(f">{len(cf.interface_indices)}H", *cf.interface_indices))
    for members in (cf.fields, cf.methods):
        parts.append(len(members).to_bytes(2, "big"))
        for m in members:
            parts.append(_MEMBER.pack(m.access, m.name_index, m.descriptor_index))
            parts.append(write_attributes(m.attributes))
    parts.append(write_attributes(cf.attributes))
    return b"".join(parts)
