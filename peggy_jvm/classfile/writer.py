"""Writing class files: :class:`~.model.ClassFile` -> bytes.

Inputs: a ClassFile (possibly with appended constants and replaced attributes). Output: the class-file bytes.
Invariant: a ClassFile read by :func:`~.reader.read_class` and not modified writes back byte-identical.
"""
from __future__ import annotations

import struct

from .errors import ClassFileError
from .model import Attribute, ClassFile

_MEMBER = struct.Struct(">HHH")
_NAME_LEN = struct.Struct(">HI")


def write_attributes(attributes: list[Attribute]) -> bytes:
    if len(attributes) > 0xFFFF:
        raise ClassFileError("more than 65535 attributes")
    parts = [len(attributes).to_bytes(2, "big")]
    for a in attributes:
        parts.append(_NAME_LEN.pack(a.name_index, len(a.data)))
        parts.append(a.data)
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
