"""The constant pool: parsing, typed access, interning and serialisation of every constant tag (1-20).

Inputs: class-file bytes positioned at ``constant_pool_count``. Outputs: a :class:`ConstantPool` whose entries
are plain tuples ``(tag, field, ...)`` (compact: the JDK has millions of them), and bytes again.

Invariants:
- index 0 and the slot after a Long/Double are ``None``; every other index holds one entry tuple;
- entries are never modified or removed, only appended (:meth:`ConstantPool.add`), so indices held by
  instructions and attributes stay valid;
- an unmodified pool serialises to exactly the bytes it was read from (the original bytes are kept and
  appended entries are encoded after them), so an unchanged class writes back byte-identical;
- Utf8 values are Python ``str`` decoded from *modified* UTF-8 (NUL as C0 80, supplementary characters as
  surrogate pairs kept as two lone surrogates), and :func:`encode_mutf8` is its exact inverse.
- Float and Double constants are kept as their raw IEEE bit patterns (``int``) so NaN payloads survive.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Iterator

from .errors import ClassFileError


class Tag(IntEnum):
    UTF8 = 1
    INTEGER = 3
    FLOAT = 4
    LONG = 5
    DOUBLE = 6
    CLASS = 7
    STRING = 8
    FIELDREF = 9
    METHODREF = 10
    INTERFACE_METHODREF = 11
    NAME_AND_TYPE = 12
    METHOD_HANDLE = 15
    METHOD_TYPE = 16
    DYNAMIC = 17
    INVOKE_DYNAMIC = 18
    MODULE = 19
    PACKAGE = 20


# tag -> struct format of the fixed-size body (Utf8 is variable-sized and handled apart)
_BODY = {
    3: struct.Struct(">i"), 4: struct.Struct(">I"), 5: struct.Struct(">q"), 6: struct.Struct(">Q"),
    7: struct.Struct(">H"), 8: struct.Struct(">H"), 9: struct.Struct(">HH"), 10: struct.Struct(">HH"),
    11: struct.Struct(">HH"), 12: struct.Struct(">HH"), 15: struct.Struct(">BH"), 16: struct.Struct(">H"),
    17: struct.Struct(">HH"), 18: struct.Struct(">HH"), 19: struct.Struct(">H"), 20: struct.Struct(">H"),
}
# which fields of an entry are indices into the pool, and the tags they must point at
_REFS: dict[int, tuple[tuple[int, ...], ...]] = {
    7: ((1,),), 8: ((1,),), 9: ((7,), (12,)), 10: ((7,), (12,)), 11: ((7,), (12,)), 12: ((1,), (1,)),
    16: ((1,),), 17: ((), (12,)), 18: ((), (12,)), 19: ((1,),), 20: ((1,),),
}
_MEMBER_REFS = (9, 10, 11)


def decode_mutf8(data: bytes) -> str:
    """Decode Java's modified UTF-8 (JVMS 4.4.7)."""
    try:
        if b"\xc0\x80" not in data:
            return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as e:
        raise ClassFileError(f"invalid modified UTF-8 at byte {e.start} of a Utf8 constant") from None


def encode_mutf8(text: str) -> bytes:
    """Encode ``text`` as modified UTF-8; characters above U+FFFF become surrogate pairs."""
    if text.isascii() and "\x00" not in text:
        return text.encode("ascii")
    if any(ord(c) > 0xFFFF for c in text):
        text = "".join(_surrogates(c) for c in text)
    return text.encode("utf-8", "surrogatepass").replace(b"\x00", b"\xc0\x80")


def _surrogates(c: str) -> str:
    o = ord(c)
    if o <= 0xFFFF:
        return c
    o -= 0x10000
    return chr(0xD800 + (o >> 10)) + chr(0xDC00 + (o & 0x3FF))


def encode_entry(entry: tuple) -> bytes:
    """The class-file bytes of one constant-pool entry (tag byte included)."""
    tag = entry[0]
    if tag == 1:
        body = encode_mutf8(entry[1])
        if len(body) > 0xFFFF:
            raise ClassFileError(f"Utf8 constant too long ({len(body)} bytes)")
        return bytes((1,)) + len(body).to_bytes(2, "big") + body
    return bytes((tag,)) + _BODY[tag].pack(*entry[1:])


@dataclass(frozen=True, slots=True)
class MemberRef:
    """A resolved Fieldref / Methodref / InterfaceMethodref."""

    tag: int
    owner: str
    name: str
    descriptor: str


class ConstantPool:
    """An append-only constant pool with typed accessors and interning."""

    __slots__ = ("entries", "_original", "_original_count", "_intern", "_members")

    def __init__(self, entries: list[tuple | None] | None = None, original: bytes = b"") -> None:
        self.entries: list[tuple | None] = entries if entries is not None else [None]
        self._original = original
        self._original_count = len(self.entries) if original else 1
        self._intern: dict[tuple, int] | None = None
        self._members: dict[int, MemberRef] = {}  # entries never change, so resolved refs can be kept

    # -- reading ---------------------------------------------------------------------------------------
    @classmethod
    def parse(cls, data: bytes | memoryview, pos: int) -> tuple["ConstantPool", int]:
        """Parse the pool starting at ``pos`` (the count field); return it and the offset after it."""
        n = len(data)
        if pos + 2 > n:
            raise ClassFileError(f"truncated before constant_pool_count (offset {pos})")
        count = (data[pos] << 8) | data[pos + 1]
        if count == 0:
            raise ClassFileError("constant_pool_count is 0")
        start = pos
        pos += 2
        entries: list[tuple | None] = [None]
        append = entries.append
        i = 1
        while i < count:
            if pos >= n:
                raise ClassFileError(f"truncated in constant pool entry #{i} (offset {pos})")
            tag = data[pos]
            pos += 1
            if tag == 1:
                if pos + 2 > n:
                    raise ClassFileError(f"truncated in constant pool entry #{i} (offset {pos})")
                ln = (data[pos] << 8) | data[pos + 1]
                pos += 2
                if pos + ln > n:
                    raise ClassFileError(f"truncated Utf8 constant #{i} (offset {pos}, length {ln})")
                try:
                    append((1, decode_mutf8(bytes(data[pos:pos + ln]))))
                except ClassFileError as e:
                    raise ClassFileError(f"constant #{i}: {e}") from None
                pos += ln
            else:
                body = _BODY.get(tag)
                if body is None:
                    raise ClassFileError(f"unknown constant tag {tag} at entry #{i} (offset {pos - 1})")
                if pos + body.size > n:
                    raise ClassFileError(f"truncated in constant pool entry #{i} (offset {pos})")
                append((tag, *body.unpack_from(data, pos)))
                pos += body.size
                if tag == 5 or tag == 6:
                    append(None)
                    i += 1
                    if i >= count:
                        raise ClassFileError(f"8-byte constant #{i - 1} overruns constant_pool_count")
            i += 1
        pool = cls(entries, bytes(data[start + 2:pos]))
        pool._check_references()
        return pool, pos

    def _check_references(self) -> None:
        entries = self.entries
        size = len(entries)
        for i, e in enumerate(entries):
            if e is None:
                continue
            refs = _REFS.get(e[0])
            if refs is None:
                if e[0] == 15:
                    kind, ref = e[1], e[2]
                    if not 1 <= kind <= 9:
                        raise ClassFileError(f"constant #{i}: bad MethodHandle kind {kind}")
                    if not (0 < ref < size and entries[ref] is not None and entries[ref][0] in _MEMBER_REFS):
                        raise ClassFileError(f"constant #{i}: MethodHandle refers to bad index {ref}")
                continue
            for field, tags in enumerate(refs, start=1):
                if not tags:
                    continue
                ref = e[field]
                if not (0 < ref < size) or entries[ref] is None or entries[ref][0] not in tags:
                    raise ClassFileError(f"constant #{i} ({Tag(e[0]).name}) refers to bad index {ref}")

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[tuple[int, tuple]]:
        for i, e in enumerate(self.entries):
            if e is not None:
                yield i, e

    def entry(self, index: int, *tags: int) -> tuple:
        """The entry at ``index``, checked to exist and (if tags are given) to have one of those tags."""
        if 0 < index < len(self.entries):
            e = self.entries[index]
            if e is not None and (not tags or e[0] in tags):
                return e
        want = "/".join(Tag(t).name for t in tags) or "any"
        raise ClassFileError(f"bad constant index {index} (expected {want})")

    def utf8(self, index: int) -> str:
        return self.entry(index, 1)[1]

    def class_name(self, index: int) -> str:
        return self.utf8(self.entry(index, 7)[1])

    def name_and_type(self, index: int) -> tuple[str, str]:
        e = self.entry(index, 12)
        return self.utf8(e[1]), self.utf8(e[2])

    def member_ref(self, index: int) -> MemberRef:
        found = self._members.get(index)
        if found is None:
            e = self.entry(index, 9, 10, 11)
            name, desc = self.name_and_type(e[2])
            found = self._members[index] = MemberRef(e[0], self.class_name(e[1]), name, desc)
        return found

    def string(self, index: int) -> str:
        return self.utf8(self.entry(index, 8)[1])

    def describe(self, index: int) -> str:
        """A javap-like readable rendering of a constant, for listings and messages."""
        e = self.entry(index)
        tag = e[0]
        if tag == 1:
            return repr(e[1])
        if tag == 3:
            return f"int {e[1]}"
        if tag == 4:
            return f"float {struct.unpack('>f', struct.pack('>I', e[1]))[0]!r}"
        if tag == 5:
            return f"long {e[1]}"
        if tag == 6:
            return f"double {struct.unpack('>d', struct.pack('>Q', e[1]))[0]!r}"
        if tag == 7:
            return f"class {self.utf8(e[1])}"
        if tag == 8:
            return f"String {self.utf8(e[1])!r}"
        if tag in _MEMBER_REFS:
            r = self.member_ref(index)
            kind = {9: "Field", 10: "Method", 11: "InterfaceMethod"}[tag]
            return f"{kind} {r.owner}.{r.name}:{r.descriptor}"
        if tag == 12:
            return "NameAndType {}:{}".format(*self.name_and_type(index))
        if tag == 15:
            return f"MethodHandle kind={e[1]} {self.describe(e[2])}"
        if tag == 16:
            return f"MethodType {self.utf8(e[1])}"
        if tag in (17, 18):
            kind = "Dynamic" if tag == 17 else "InvokeDynamic"
            return "{} #{}:{}:{}".format(kind, e[1], *self.name_and_type(e[2]))
        if tag == 19:
            return f"Module {self.utf8(e[1])}"
        return f"Package {self.utf8(e[1])}"

    # -- writing ---------------------------------------------------------------------------------------
    def copy(self) -> "ConstantPool":
        """An independent pool with the same entries: what is added to one is not in the other (the pipeline
        optimizes each method against its own copy of the class's pool, ``pipeline.optimize_methods``)."""
        twin = ConstantPool(list(self.entries), self._original)
        twin._original_count = self._original_count
        twin._intern = None if self._intern is None else dict(self._intern)
        twin._members = dict(self._members)
        return twin

    def add(self, entry: tuple) -> int:
        """Return the index of ``entry``, appending it if the pool has no equal entry yet."""
        intern = self._intern
        if intern is None:
            intern = self._intern = {}
            for i, e in enumerate(self.entries):
                if e is not None and e not in intern:
                    intern[e] = i
        found = intern.get(entry)
        if found is not None:
            return found
        index = len(self.entries)
        if index + (2 if entry[0] in (5, 6) else 1) > 0xFFFF:
            raise ClassFileError("constant pool overflow (more than 65535 entries)")
        self.entries.append(entry)
        if entry[0] in (5, 6):
            self.entries.append(None)
        intern[entry] = index
        return index

    def add_utf8(self, text: str) -> int:
        return self.add((1, text))

    def add_class(self, internal_name: str) -> int:
        return self.add((7, self.add_utf8(internal_name)))

    def add_string(self, text: str) -> int:
        return self.add((8, self.add_utf8(text)))

    def add_int(self, value: int) -> int:
        return self.add((3, value))

    def add_name_and_type(self, name: str, descriptor: str) -> int:
        return self.add((12, self.add_utf8(name), self.add_utf8(descriptor)))

    def add_member_ref(self, tag: int, owner: str, name: str, descriptor: str) -> int:
        return self.add((tag, self.add_class(owner), self.add_name_and_type(name, descriptor)))

    def to_bytes(self) -> bytes:
        """``constant_pool_count`` followed by the entries."""
        count = len(self.entries)
        parts = [count.to_bytes(2, "big")]
        start = 1
        if self._original:
            parts.append(self._original)
            start = self._original_count
        for e in self.entries[start:]:
            if e is not None:
                parts.append(encode_entry(e))
        return b"".join(parts)

    def encode_all(self) -> bytes:
        """Encode every entry afresh (ignoring the kept original bytes); used to test the encoders."""
        return b"".join(encode_entry(e) for e in self.entries if e is not None)

    @property
    def original_bytes(self) -> bytes:
        return self._original
