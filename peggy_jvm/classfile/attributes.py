"""Typed views of the standard class-file attributes (JVMS 4.7): decode and encode, byte-exact.

Owns: one dataclass per standard attribute except ``Code`` (:func:`~.reader.read_code`) and
``StackMapTable`` (the frames module), the registry :data:`ATTRIBUTE_TYPES` (attribute name -> view class),
:func:`decode_attribute`, and the nested value types (annotations and element values, type-annotation targets
and type paths, table entries, module directives, record components).

Inputs: the body bytes of one attribute (``Attribute.data``: without the name index and the length); for
:class:`Record` optionally the constant pool, to resolve the names of the components' own attributes.
Outputs: a view whose fields are exactly the values stored in the attribute, pool indices left unresolved
(they are what gets written); ``to_bytes()`` gives the body bytes again and ``to_attribute(pool)`` a raw
:class:`~.model.Attribute`.  Small helper methods resolve indices through a :class:`~.constpool.ConstantPool`.

Invariants:
- ``X.parse(data).to_bytes() == data`` for every well-formed ``data``: nothing is normalised, sorted or
  resolved, and every index (including 0 where the spec allows it) is kept as found;
- parsing is structural: lengths, counts, tags, target types and type-path kinds are checked, pool indices
  are not (the resolving helpers check them and raise ClassFileError for a bad one);
- malformed data (truncated, trailing bytes, a count that overruns the data, an unknown tag or target type,
  element values nested deeper than :data:`MAX_NESTING`) raises :class:`~.errors.ClassFileError` whose
  message names the attribute, what is wrong and the offset in the attribute body; never IndexError or
  struct.error;
- encoding a value that does not fit its field (a count or index above 65535, a u1 above 255, a target_info
  of the wrong kind for its target_type) raises ClassFileError naming the attribute;
- views are mutable slots dataclasses, so a code re-encoder can rewrite pcs in place (the ``start_pc`` /
  ``length`` of LineNumberTable and LocalVariable(Type)Table entries, the offsets held by type-annotation
  targets; see :meth:`RuntimeVisibleTypeAnnotations.references_code_offsets`).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, ClassVar, Union

from .constpool import ConstantPool, decode_mutf8
from .errors import ClassFileError
from .model import Attribute
from .writer import write_attributes

__all__ = [
    "ATTRIBUTE_TYPES", "MAX_NESTING", "decode_attribute", "AttributeView",
    # simple attributes
    "ConstantValue", "Exceptions", "InnerClasses", "InnerClassEntry", "EnclosingMethod", "Synthetic",
    "Signature", "SourceFile", "SourceDebugExtension", "Deprecated",
    # code-level tables
    "LineNumberTable", "LineNumberEntry", "LocalVariableTable", "LocalVariableEntry",
    "LocalVariableTypeTable", "LocalVariableTypeEntry",
    # annotations
    "Annotation", "ElementValuePair", "ElementValue", "ConstElementValue", "EnumElementValue",
    "ClassElementValue", "AnnotationElementValue", "ArrayElementValue", "CONST_TAGS",
    "RuntimeVisibleAnnotations", "RuntimeInvisibleAnnotations", "RuntimeVisibleParameterAnnotations",
    "RuntimeInvisibleParameterAnnotations", "AnnotationDefault",
    # type annotations
    "TypeAnnotation", "TypePathEntry", "TargetInfo", "TypeParameterTarget", "SupertypeTarget",
    "TypeParameterBoundTarget", "EmptyTarget", "FormalParameterTarget", "ThrowsTarget", "LocalVarTarget",
    "LocalVarTargetEntry", "CatchTarget", "OffsetTarget", "TypeArgumentTarget", "TARGET_INFO_TYPES",
    "RuntimeVisibleTypeAnnotations", "RuntimeInvisibleTypeAnnotations",
    # the rest
    "BootstrapMethods", "BootstrapMethod", "MethodParameters", "MethodParameter", "Module", "ModuleRequires",
    "ModuleExports", "ModuleOpens", "ModuleProvides", "ModulePackages", "ModuleMainClass", "NestHost",
    "NestMembers", "Record", "RecordComponent", "PermittedSubclasses",
]

#: How many levels of nested arrays / annotations an element value may have before the data is rejected; this
#: keeps the (recursive) decoder and encoder far from Python's recursion limit.  javac output nests a few levels.
MAX_NESTING = 64

_U2 = struct.Struct(">H")
_U2U2 = struct.Struct(">HH")
_U1U1 = struct.Struct(">BB")
_U2U2U2 = struct.Struct(">HHH")
_U2U2U2U2 = struct.Struct(">HHHH")
_U2U2U2U2U2 = struct.Struct(">HHHHH")


def _u2s(values: list[int]) -> bytes:
    """A u2 count followed by the u2 values."""
    return struct.pack(f">H{len(values)}H", len(values), *values)


# -- reading -------------------------------------------------------------------------------------------------
class _Cursor:
    """Bounds-checked big-endian reader over one attribute body; every failure names the attribute."""

    __slots__ = ("data", "pos", "end", "what")

    def __init__(self, data: bytes, what: str) -> None:
        self.data = data
        self.pos = 0
        self.end = len(data)
        self.what = what

    def fail(self, problem: str, pos: int | None = None) -> ClassFileError:
        return ClassFileError(f"{self.what}: {problem} (offset {self.pos if pos is None else pos})")

    def need(self, n: int, item: str) -> None:
        if self.pos + n > self.end:
            raise self.fail(f"truncated in {item}: needs {n} bytes, {self.end - self.pos} remain")

    def u1(self, item: str) -> int:
        p = self.pos
        if p >= self.end:
            raise self.fail(f"truncated in {item}: needs 1 byte, 0 remain")
        self.pos = p + 1
        return self.data[p]

    def u2(self, item: str) -> int:
        p = self.pos
        if p + 2 > self.end:
            raise self.fail(f"truncated in {item}: needs 2 bytes, {self.end - p} remain")
        self.pos = p + 2
        d = self.data
        return (d[p] << 8) | d[p + 1]

    def u4(self, item: str) -> int:
        self.need(4, item)
        p = self.pos
        self.pos = p + 4
        return int.from_bytes(self.data[p:p + 4], "big")

    def raw(self, n: int, item: str) -> bytes:
        self.need(n, item)
        p = self.pos
        self.pos = p + n
        return bytes(self.data[p:p + n])

    def u2_list(self, item: str) -> list[int]:
        """A u2 count followed by that many u2 values."""
        count = self.u2(f"{item} count")
        self.need(2 * count, f"{item} ({count} entries)")
        out = list(struct.unpack_from(f">{count}H", self.data, self.pos))
        self.pos += 2 * count
        return out

    def rows(self, st: struct.Struct, count: int, item: str) -> list[tuple]:
        size = st.size * count
        self.need(size, f"{item} ({count} entries)")
        p = self.pos
        self.pos = p + size
        return list(st.iter_unpack(self.data[p:p + size]))

    def done(self) -> None:
        if self.pos != self.end:
            raise self.fail(f"{self.end - self.pos} trailing bytes")


# -- the common base -----------------------------------------------------------------------------------------
class AttributeView:
    """Base of every typed view: ``NAME`` is the attribute name; subclasses implement ``_read``/``_write``."""

    __slots__ = ()
    NAME: ClassVar[str] = ""

    @classmethod
    def parse(cls, data: bytes) -> Any:
        """Decode an attribute body; raises ClassFileError if it is malformed."""
        c = _Cursor(data, cls.NAME)
        view = cls._read(c)
        c.done()
        return view

    @classmethod
    def _read(cls, c: _Cursor) -> Any:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def _write(self, out: bytearray) -> None:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def to_bytes(self) -> bytes:
        """The attribute body (no name index, no length)."""
        out = bytearray()
        try:
            self._write(out)
        except ClassFileError as e:
            raise ClassFileError(f"{self.NAME}: {e}") from None
        except (struct.error, OverflowError, ValueError, TypeError) as e:
            raise ClassFileError(f"{self.NAME}: cannot encode: {e}") from None
        except RecursionError:  # only a hand-built value nested far beyond MAX_NESTING gets here
            raise ClassFileError(f"{self.NAME}: cannot encode: element values nested too deeply") from None
        return bytes(out)

    def to_attribute(self, pool: ConstantPool) -> Attribute:
        """A raw attribute (name interned in ``pool``) holding :meth:`to_bytes`."""
        return Attribute(pool.add_utf8(self.NAME), self.NAME, self.to_bytes())


def _package_name(pool: ConstantPool, index: int) -> str:
    return pool.utf8(pool.entry(index, 20)[1])


def _module_name(pool: ConstantPool, index: int) -> str:
    return pool.utf8(pool.entry(index, 19)[1])


# -- single-index and empty attributes -----------------------------------------------------------------------
@dataclass(slots=True)
class ConstantValue(AttributeView):
    """``constantvalue_index``: an Integer/Float/Long/Double/String constant (JVMS 4.7.2)."""

    NAME: ClassVar[str] = "ConstantValue"
    constantvalue_index: int

    @classmethod
    def _read(cls, c: _Cursor) -> ConstantValue:
        return cls(c.u2("constantvalue_index"))

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(self.constantvalue_index)

    def constant(self, pool: ConstantPool) -> tuple:
        """The pool entry tuple (tag, value...) of the constant."""
        return pool.entry(self.constantvalue_index, 3, 4, 5, 6, 8)


@dataclass(slots=True)
class Signature(AttributeView):
    """``signature_index``: Utf8 of a class, method or field signature (JVMS 4.7.9)."""

    NAME: ClassVar[str] = "Signature"
    signature_index: int

    @classmethod
    def _read(cls, c: _Cursor) -> Signature:
        return cls(c.u2("signature_index"))

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(self.signature_index)

    def signature(self, pool: ConstantPool) -> str:
        return pool.utf8(self.signature_index)


@dataclass(slots=True)
class SourceFile(AttributeView):
    """``sourcefile_index``: Utf8 of the source file name (JVMS 4.7.10)."""

    NAME: ClassVar[str] = "SourceFile"
    sourcefile_index: int

    @classmethod
    def _read(cls, c: _Cursor) -> SourceFile:
        return cls(c.u2("sourcefile_index"))

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(self.sourcefile_index)

    def source_file(self, pool: ConstantPool) -> str:
        return pool.utf8(self.sourcefile_index)


@dataclass(slots=True)
class ModuleMainClass(AttributeView):
    """``main_class_index``: Class constant (JVMS 4.7.27)."""

    NAME: ClassVar[str] = "ModuleMainClass"
    main_class_index: int

    @classmethod
    def _read(cls, c: _Cursor) -> ModuleMainClass:
        return cls(c.u2("main_class_index"))

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(self.main_class_index)

    def main_class(self, pool: ConstantPool) -> str:
        return pool.class_name(self.main_class_index)


@dataclass(slots=True)
class NestHost(AttributeView):
    """``host_class_index``: Class constant of the nest host (JVMS 4.7.28)."""

    NAME: ClassVar[str] = "NestHost"
    host_class_index: int

    @classmethod
    def _read(cls, c: _Cursor) -> NestHost:
        return cls(c.u2("host_class_index"))

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(self.host_class_index)

    def host_class(self, pool: ConstantPool) -> str:
        return pool.class_name(self.host_class_index)


@dataclass(slots=True)
class EnclosingMethod(AttributeView):
    """``class_index`` (Class) and ``method_index`` (NameAndType, or 0 outside a method) (JVMS 4.7.7)."""

    NAME: ClassVar[str] = "EnclosingMethod"
    class_index: int
    method_index: int

    @classmethod
    def _read(cls, c: _Cursor) -> EnclosingMethod:
        return cls(c.u2("class_index"), c.u2("method_index"))

    def _write(self, out: bytearray) -> None:
        out += _U2U2.pack(self.class_index, self.method_index)

    def class_name(self, pool: ConstantPool) -> str:
        return pool.class_name(self.class_index)

    def method(self, pool: ConstantPool) -> tuple[str, str] | None:
        """(name, descriptor) of the enclosing method, None if the class is not enclosed by one."""
        return pool.name_and_type(self.method_index) if self.method_index else None


@dataclass(slots=True)
class Synthetic(AttributeView):
    """Empty marker attribute (JVMS 4.7.8)."""

    NAME: ClassVar[str] = "Synthetic"

    @classmethod
    def _read(cls, c: _Cursor) -> Synthetic:
        return cls()

    def _write(self, out: bytearray) -> None:
        pass


@dataclass(slots=True)
class Deprecated(AttributeView):
    """Empty marker attribute (JVMS 4.7.15)."""

    NAME: ClassVar[str] = "Deprecated"

    @classmethod
    def _read(cls, c: _Cursor) -> Deprecated:
        return cls()

    def _write(self, out: bytearray) -> None:
        pass


@dataclass(slots=True)
class SourceDebugExtension(AttributeView):
    """Uninterpreted debug bytes (modified UTF-8 by convention, kept as bytes) (JVMS 4.7.11)."""

    NAME: ClassVar[str] = "SourceDebugExtension"
    debug_extension: bytes

    @classmethod
    def _read(cls, c: _Cursor) -> SourceDebugExtension:
        return cls(c.raw(c.end - c.pos, "debug_extension"))

    def _write(self, out: bytearray) -> None:
        out += self.debug_extension

    def text(self) -> str:
        """The bytes decoded as modified UTF-8 (raises ClassFileError if they are not)."""
        return decode_mutf8(self.debug_extension)


# -- lists of class indices ----------------------------------------------------------------------------------
@dataclass(slots=True)
class _ClassList(AttributeView):
    classes: list[int]

    @classmethod
    def _read(cls, c: _Cursor) -> Any:
        return cls(c.u2_list("classes"))

    def _write(self, out: bytearray) -> None:
        out += _u2s(self.classes)

    def class_names(self, pool: ConstantPool) -> list[str]:
        return [pool.class_name(i) for i in self.classes]


@dataclass(slots=True)
class Exceptions(AttributeView):
    """``exception_index_table``: Class constants of the declared thrown types (JVMS 4.7.5)."""

    NAME: ClassVar[str] = "Exceptions"
    exception_index_table: list[int]

    @classmethod
    def _read(cls, c: _Cursor) -> Exceptions:
        return cls(c.u2_list("exception_index_table"))

    def _write(self, out: bytearray) -> None:
        out += _u2s(self.exception_index_table)

    def class_names(self, pool: ConstantPool) -> list[str]:
        return [pool.class_name(i) for i in self.exception_index_table]


@dataclass(slots=True)
class NestMembers(_ClassList):
    """``classes``: Class constants of the nest members (JVMS 4.7.29)."""

    NAME: ClassVar[str] = "NestMembers"


@dataclass(slots=True)
class PermittedSubclasses(_ClassList):
    """``classes``: Class constants of the permitted direct subclasses (JVMS 4.7.31)."""

    NAME: ClassVar[str] = "PermittedSubclasses"


@dataclass(slots=True)
class ModulePackages(AttributeView):
    """``package_index``: Package constants of every package of the module (JVMS 4.7.26)."""

    NAME: ClassVar[str] = "ModulePackages"
    package_index: list[int]

    @classmethod
    def _read(cls, c: _Cursor) -> ModulePackages:
        return cls(c.u2_list("package_index"))

    def _write(self, out: bytearray) -> None:
        out += _u2s(self.package_index)

    def package_names(self, pool: ConstantPool) -> list[str]:
        return [_package_name(pool, i) for i in self.package_index]


# -- InnerClasses --------------------------------------------------------------------------------------------
@dataclass(slots=True)
class InnerClassEntry:
    """One ``classes`` row; outer and name indices are 0 for local/anonymous classes."""

    inner_class_info_index: int
    outer_class_info_index: int
    inner_name_index: int
    inner_class_access_flags: int

    def inner_class(self, pool: ConstantPool) -> str:
        return pool.class_name(self.inner_class_info_index)

    def outer_class(self, pool: ConstantPool) -> str | None:
        return pool.class_name(self.outer_class_info_index) if self.outer_class_info_index else None

    def inner_name(self, pool: ConstantPool) -> str | None:
        return pool.utf8(self.inner_name_index) if self.inner_name_index else None


@dataclass(slots=True)
class InnerClasses(AttributeView):
    """JVMS 4.7.6."""

    NAME: ClassVar[str] = "InnerClasses"
    classes: list[InnerClassEntry]

    @classmethod
    def _read(cls, c: _Cursor) -> InnerClasses:
        count = c.u2("number_of_classes")
        return cls([InnerClassEntry(*row) for row in c.rows(_U2U2U2U2, count, "classes")])

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(len(self.classes))
        for e in self.classes:
            out += _U2U2U2U2.pack(e.inner_class_info_index, e.outer_class_info_index, e.inner_name_index,
                                  e.inner_class_access_flags)


# -- Code-level tables ---------------------------------------------------------------------------------------
@dataclass(slots=True)
class LineNumberEntry:
    start_pc: int
    line_number: int


@dataclass(slots=True)
class LineNumberTable(AttributeView):
    """JVMS 4.7.12; entries kept in file order (which need not be pc order), duplicates kept."""

    NAME: ClassVar[str] = "LineNumberTable"
    entries: list[LineNumberEntry]

    @classmethod
    def _read(cls, c: _Cursor) -> LineNumberTable:
        count = c.u2("line_number_table_length")
        return cls([LineNumberEntry(pc, line) for pc, line in c.rows(_U2U2, count, "line_number_table")])

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(len(self.entries))
        for e in self.entries:
            out += _U2U2.pack(e.start_pc, e.line_number)


@dataclass(slots=True)
class LocalVariableEntry:
    """Variable ``index`` holds a value in pcs [start_pc, start_pc + length)."""

    start_pc: int
    length: int
    name_index: int
    descriptor_index: int
    index: int

    def name(self, pool: ConstantPool) -> str:
        return pool.utf8(self.name_index)

    def descriptor(self, pool: ConstantPool) -> str:
        return pool.utf8(self.descriptor_index)


@dataclass(slots=True)
class LocalVariableTypeEntry:
    """Like :class:`LocalVariableEntry`, with a generic ``signature_index`` instead of a descriptor."""

    start_pc: int
    length: int
    name_index: int
    signature_index: int
    index: int

    def name(self, pool: ConstantPool) -> str:
        return pool.utf8(self.name_index)

    def signature(self, pool: ConstantPool) -> str:
        return pool.utf8(self.signature_index)


@dataclass(slots=True)
class LocalVariableTable(AttributeView):
    """JVMS 4.7.13."""

    NAME: ClassVar[str] = "LocalVariableTable"
    entries: list[LocalVariableEntry]

    @classmethod
    def _read(cls, c: _Cursor) -> LocalVariableTable:
        count = c.u2("local_variable_table_length")
        return cls([LocalVariableEntry(*row) for row in c.rows(_U2U2U2U2U2, count, "local_variable_table")])

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(len(self.entries))
        for e in self.entries:
            out += _U2U2U2U2U2.pack(e.start_pc, e.length, e.name_index, e.descriptor_index, e.index)


@dataclass(slots=True)
class LocalVariableTypeTable(AttributeView):
    """JVMS 4.7.14."""

    NAME: ClassVar[str] = "LocalVariableTypeTable"
    entries: list[LocalVariableTypeEntry]

    @classmethod
    def _read(cls, c: _Cursor) -> LocalVariableTypeTable:
        count = c.u2("local_variable_type_table_length")
        return cls([LocalVariableTypeEntry(*row)
                    for row in c.rows(_U2U2U2U2U2, count, "local_variable_type_table")])

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(len(self.entries))
        for e in self.entries:
            out += _U2U2U2U2U2.pack(e.start_pc, e.length, e.name_index, e.signature_index, e.index)


# -- annotations and element values (JVMS 4.7.16.1) ----------------------------------------------------------
#: element_value tags whose value is a single ``const_value_index``.
CONST_TAGS = "BCDFIJSZs"
# constant tag expected for each const element tag
_CONST_POOL_TAG = {"B": 3, "C": 3, "I": 3, "S": 3, "Z": 3, "D": 6, "F": 4, "J": 5, "s": 1}


@dataclass(slots=True)
class ConstElementValue:
    """Tags B C D F I J S Z (an Integer/Float/Long/Double constant) and s (a Utf8 constant)."""

    tag: str
    const_value_index: int

    def _write(self, out: bytearray) -> None:
        if len(self.tag) != 1 or self.tag not in CONST_TAGS:
            raise ClassFileError(f"bad constant element_value tag {self.tag!r}")
        out.append(ord(self.tag))
        out += _U2.pack(self.const_value_index)

    def value(self, pool: ConstantPool) -> Any:
        """The Python value: int, bool (Z), str (C: one character; s), float (F, D)."""
        e = pool.entry(self.const_value_index, _CONST_POOL_TAG[self.tag])
        v = e[1]
        if self.tag == "Z":
            return bool(v)
        if self.tag == "C":
            return chr(v & 0xFFFF)
        if self.tag == "F":
            return struct.unpack(">f", struct.pack(">I", v))[0]
        if self.tag == "D":
            return struct.unpack(">d", struct.pack(">Q", v))[0]
        return v


@dataclass(slots=True)
class EnumElementValue:
    """Tag e: ``type_name_index`` (Utf8 field descriptor) and ``const_name_index`` (Utf8 simple name)."""

    type_name_index: int
    const_name_index: int
    tag: ClassVar[str] = "e"

    def _write(self, out: bytearray) -> None:
        out.append(0x65)
        out += _U2U2.pack(self.type_name_index, self.const_name_index)

    def value(self, pool: ConstantPool) -> tuple[str, str]:
        return pool.utf8(self.type_name_index), pool.utf8(self.const_name_index)


@dataclass(slots=True)
class ClassElementValue:
    """Tag c: ``class_info_index`` is a Utf8 return descriptor (e.g. ``Ljava/lang/String;``, ``V``)."""

    class_info_index: int
    tag: ClassVar[str] = "c"

    def _write(self, out: bytearray) -> None:
        out.append(0x63)
        out += _U2.pack(self.class_info_index)

    def value(self, pool: ConstantPool) -> str:
        return pool.utf8(self.class_info_index)


@dataclass(slots=True)
class AnnotationElementValue:
    """Tag @: a nested annotation."""

    annotation: Annotation
    tag: ClassVar[str] = "@"

    def _write(self, out: bytearray) -> None:
        out.append(0x40)
        self.annotation._write(out)


@dataclass(slots=True)
class ArrayElementValue:
    """Tag [: an array of element values."""

    values: list[ElementValue]
    tag: ClassVar[str] = "["

    def _write(self, out: bytearray) -> None:
        out.append(0x5B)
        out += _U2.pack(len(self.values))
        for v in self.values:
            v._write(out)


ElementValue = Union[ConstElementValue, EnumElementValue, ClassElementValue, AnnotationElementValue,
                     ArrayElementValue]


def _read_element_value(c: _Cursor, depth: int) -> ElementValue:
    if depth > MAX_NESTING:
        raise c.fail(f"element values nested deeper than {MAX_NESTING}")
    start = c.pos
    tag = c.u1("element_value tag")
    if tag == 0x5B:  # [
        count = c.u2("array_value num_values")
        c.need(3 * count, f"array_value ({count} values)")  # every element_value is at least 3 bytes
        return ArrayElementValue([_read_element_value(c, depth + 1) for _ in range(count)])
    if tag == 0x65:  # e
        return EnumElementValue(c.u2("enum type_name_index"), c.u2("enum const_name_index"))
    if tag == 0x63:  # c
        return ClassElementValue(c.u2("class_info_index"))
    if tag == 0x40:  # @
        return AnnotationElementValue(_read_annotation(c, depth + 1))
    ch = chr(tag)
    if ch in CONST_TAGS:
        return ConstElementValue(ch, c.u2("const_value_index"))
    raise c.fail(f"unknown element_value tag 0x{tag:02x}", start)


@dataclass(slots=True)
class ElementValuePair:
    element_name_index: int
    value: ElementValue

    def name(self, pool: ConstantPool) -> str:
        return pool.utf8(self.element_name_index)

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(self.element_name_index)
        self.value._write(out)


def _read_pairs(c: _Cursor, depth: int) -> list[ElementValuePair]:
    count = c.u2("num_element_value_pairs")
    c.need(5 * count, f"element_value_pairs ({count} pairs)")  # a pair is at least 5 bytes
    out = []
    for _ in range(count):
        name = c.u2("element_name_index")
        out.append(ElementValuePair(name, _read_element_value(c, depth)))
    return out


def _write_pairs(out: bytearray, pairs: list[ElementValuePair]) -> None:
    out += _U2.pack(len(pairs))
    for p in pairs:
        p._write(out)


@dataclass(slots=True)
class Annotation:
    """``type_index`` (Utf8 field descriptor of the annotation interface) and its element-value pairs."""

    type_index: int
    elements: list[ElementValuePair]

    def type_descriptor(self, pool: ConstantPool) -> str:
        return pool.utf8(self.type_index)

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(self.type_index)
        _write_pairs(out, self.elements)


def _read_annotation(c: _Cursor, depth: int) -> Annotation:
    if depth > MAX_NESTING:
        raise c.fail(f"annotations nested deeper than {MAX_NESTING}")
    type_index = c.u2("annotation type_index")
    return Annotation(type_index, _read_pairs(c, depth))


def _read_annotations(c: _Cursor) -> list[Annotation]:
    count = c.u2("num_annotations")
    c.need(4 * count, f"annotations ({count} annotations)")  # an annotation is at least 4 bytes
    return [_read_annotation(c, 0) for _ in range(count)]


def _write_annotations(out: bytearray, annotations: list[Annotation]) -> None:
    out += _U2.pack(len(annotations))
    for a in annotations:
        a._write(out)


@dataclass(slots=True)
class _Annotations(AttributeView):
    annotations: list[Annotation]

    @classmethod
    def _read(cls, c: _Cursor) -> Any:
        return cls(_read_annotations(c))

    def _write(self, out: bytearray) -> None:
        _write_annotations(out, self.annotations)


@dataclass(slots=True)
class RuntimeVisibleAnnotations(_Annotations):
    """JVMS 4.7.16."""

    NAME: ClassVar[str] = "RuntimeVisibleAnnotations"


@dataclass(slots=True)
class RuntimeInvisibleAnnotations(_Annotations):
    """JVMS 4.7.17."""

    NAME: ClassVar[str] = "RuntimeInvisibleAnnotations"


@dataclass(slots=True)
class _ParameterAnnotations(AttributeView):
    """``parameters[i]`` is the annotation list of the i-th parameter (u1 num_parameters)."""

    parameters: list[list[Annotation]]

    @classmethod
    def _read(cls, c: _Cursor) -> Any:
        count = c.u1("num_parameters")
        c.need(2 * count, f"parameter_annotations ({count} parameters)")
        return cls([_read_annotations(c) for _ in range(count)])

    def _write(self, out: bytearray) -> None:
        if len(self.parameters) > 0xFF:
            raise ClassFileError(f"{len(self.parameters)} parameters (at most 255)")
        out.append(len(self.parameters))
        for per_parameter in self.parameters:
            _write_annotations(out, per_parameter)


@dataclass(slots=True)
class RuntimeVisibleParameterAnnotations(_ParameterAnnotations):
    """JVMS 4.7.18."""

    NAME: ClassVar[str] = "RuntimeVisibleParameterAnnotations"


@dataclass(slots=True)
class RuntimeInvisibleParameterAnnotations(_ParameterAnnotations):
    """JVMS 4.7.19."""

    NAME: ClassVar[str] = "RuntimeInvisibleParameterAnnotations"


@dataclass(slots=True)
class AnnotationDefault(AttributeView):
    """The default value of an annotation interface element (JVMS 4.7.22)."""

    NAME: ClassVar[str] = "AnnotationDefault"
    default_value: ElementValue

    @classmethod
    def _read(cls, c: _Cursor) -> AnnotationDefault:
        return cls(_read_element_value(c, 0))

    def _write(self, out: bytearray) -> None:
        self.default_value._write(out)


# -- type annotations (JVMS 4.7.20) --------------------------------------------------------------------------
class _Target:
    """Base of the target_info variants."""

    __slots__ = ()
    #: True when the target holds bytecode offsets (pcs) that move when the code is re-encoded.
    references_code_offsets: ClassVar[bool] = False
    #: True when the target holds an index into the Code attribute's exception table.
    references_exception_table: ClassVar[bool] = False


@dataclass(slots=True)
class TypeParameterTarget(_Target):
    """0x00, 0x01: a type parameter of a generic class / method."""

    type_parameter_index: int

    @classmethod
    def _read(cls, c: _Cursor) -> TypeParameterTarget:
        return cls(c.u1("type_parameter_index"))

    def _write(self, out: bytearray) -> None:
        out.append(self.type_parameter_index)


@dataclass(slots=True)
class SupertypeTarget(_Target):
    """0x10: the superclass (65535) or an interface (index into ``interfaces``)."""

    supertype_index: int

    @classmethod
    def _read(cls, c: _Cursor) -> SupertypeTarget:
        return cls(c.u2("supertype_index"))

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(self.supertype_index)


@dataclass(slots=True)
class TypeParameterBoundTarget(_Target):
    """0x11, 0x12: a bound of a type parameter."""

    type_parameter_index: int
    bound_index: int

    @classmethod
    def _read(cls, c: _Cursor) -> TypeParameterBoundTarget:
        return cls(c.u1("type_parameter_index"), c.u1("bound_index"))

    def _write(self, out: bytearray) -> None:
        out += _U1U1.pack(self.type_parameter_index, self.bound_index)


@dataclass(slots=True)
class EmptyTarget(_Target):
    """0x13, 0x14, 0x15: field type, method return / constructed type, receiver type."""

    @classmethod
    def _read(cls, c: _Cursor) -> EmptyTarget:
        return cls()

    def _write(self, out: bytearray) -> None:
        pass


@dataclass(slots=True)
class FormalParameterTarget(_Target):
    """0x16: a formal parameter."""

    formal_parameter_index: int

    @classmethod
    def _read(cls, c: _Cursor) -> FormalParameterTarget:
        return cls(c.u1("formal_parameter_index"))

    def _write(self, out: bytearray) -> None:
        out.append(self.formal_parameter_index)


@dataclass(slots=True)
class ThrowsTarget(_Target):
    """0x17: an entry of the Exceptions attribute."""

    throws_type_index: int

    @classmethod
    def _read(cls, c: _Cursor) -> ThrowsTarget:
        return cls(c.u2("throws_type_index"))

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(self.throws_type_index)


@dataclass(slots=True)
class LocalVarTargetEntry:
    """Local variable ``index`` has its value in pcs [start_pc, start_pc + length)."""

    start_pc: int
    length: int
    index: int


@dataclass(slots=True)
class LocalVarTarget(_Target):
    """0x40 (local variable), 0x41 (resource variable)."""

    table: list[LocalVarTargetEntry]
    references_code_offsets: ClassVar[bool] = True

    @classmethod
    def _read(cls, c: _Cursor) -> LocalVarTarget:
        count = c.u2("localvar_target table_length")
        return cls([LocalVarTargetEntry(*row) for row in c.rows(_U2U2U2, count, "localvar_target table")])

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(len(self.table))
        for e in self.table:
            out += _U2U2U2.pack(e.start_pc, e.length, e.index)


@dataclass(slots=True)
class CatchTarget(_Target):
    """0x42: the exception parameter of an exception-table entry."""

    exception_table_index: int
    references_exception_table: ClassVar[bool] = True

    @classmethod
    def _read(cls, c: _Cursor) -> CatchTarget:
        return cls(c.u2("exception_table_index"))

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(self.exception_table_index)


@dataclass(slots=True)
class OffsetTarget(_Target):
    """0x43-0x46: instanceof, new, ``::new``, ``::name`` at bytecode ``offset``."""

    offset: int
    references_code_offsets: ClassVar[bool] = True

    @classmethod
    def _read(cls, c: _Cursor) -> OffsetTarget:
        return cls(c.u2("offset"))

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(self.offset)


@dataclass(slots=True)
class TypeArgumentTarget(_Target):
    """0x47-0x4B: a type argument of a cast / generic call / method reference at bytecode ``offset``."""

    offset: int
    type_argument_index: int
    references_code_offsets: ClassVar[bool] = True

    @classmethod
    def _read(cls, c: _Cursor) -> TypeArgumentTarget:
        return cls(c.u2("offset"), c.u1("type_argument_index"))

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(self.offset)
        out.append(self.type_argument_index)


TargetInfo = Union[TypeParameterTarget, SupertypeTarget, TypeParameterBoundTarget, EmptyTarget,
                   FormalParameterTarget, ThrowsTarget, LocalVarTarget, CatchTarget, OffsetTarget,
                   TypeArgumentTarget]

#: target_type -> the target_info class it must carry (JVMS tables 4.7.20-A/B/C).
TARGET_INFO_TYPES: dict[int, type] = {
    0x00: TypeParameterTarget, 0x01: TypeParameterTarget,
    0x10: SupertypeTarget,
    0x11: TypeParameterBoundTarget, 0x12: TypeParameterBoundTarget,
    0x13: EmptyTarget, 0x14: EmptyTarget, 0x15: EmptyTarget,
    0x16: FormalParameterTarget,
    0x17: ThrowsTarget,
    0x40: LocalVarTarget, 0x41: LocalVarTarget,
    0x42: CatchTarget,
    0x43: OffsetTarget, 0x44: OffsetTarget, 0x45: OffsetTarget, 0x46: OffsetTarget,
    0x47: TypeArgumentTarget, 0x48: TypeArgumentTarget, 0x49: TypeArgumentTarget, 0x4A: TypeArgumentTarget,
    0x4B: TypeArgumentTarget,
}


@dataclass(slots=True)
class TypePathEntry:
    """``type_path_kind`` 0 array, 1 nested type, 2 wildcard bound, 3 type argument (``type_argument_index``)."""

    type_path_kind: int
    type_argument_index: int


@dataclass(slots=True)
class TypeAnnotation:
    """One type_annotation: where (target_type, target_info, type_path) and what (type_index, elements)."""

    target_type: int
    target_info: TargetInfo
    type_path: list[TypePathEntry]
    type_index: int
    elements: list[ElementValuePair]

    @property
    def references_code_offsets(self) -> bool:
        """True when the target holds bytecode offsets (localvar, offset and type-argument targets)."""
        return self.target_info.references_code_offsets

    @property
    def in_code(self) -> bool:
        """True for targets that only make sense in a Code attribute (0x40-0x4B, including catch targets)."""
        return self.target_type >= 0x40

    def type_descriptor(self, pool: ConstantPool) -> str:
        return pool.utf8(self.type_index)

    def _write(self, out: bytearray) -> None:
        want = TARGET_INFO_TYPES.get(self.target_type)
        if want is None:
            raise ClassFileError(f"unknown target_type 0x{self.target_type:02x}")
        if type(self.target_info) is not want:
            raise ClassFileError(f"target_type 0x{self.target_type:02x} needs {want.__name__}, "
                                 f"not {type(self.target_info).__name__}")
        out.append(self.target_type)
        self.target_info._write(out)
        if len(self.type_path) > 0xFF:
            raise ClassFileError(f"type_path of {len(self.type_path)} entries (at most 255)")
        out.append(len(self.type_path))
        for p in self.type_path:
            out += _U1U1.pack(p.type_path_kind, p.type_argument_index)
        out += _U2.pack(self.type_index)
        _write_pairs(out, self.elements)


def _read_type_annotation(c: _Cursor) -> TypeAnnotation:
    start = c.pos
    target_type = c.u1("target_type")
    kind = TARGET_INFO_TYPES.get(target_type)
    if kind is None:
        raise c.fail(f"unknown target_type 0x{target_type:02x}", start)
    info = kind._read(c)
    path_length = c.u1("type_path path_length")
    path_start = c.pos
    path = [TypePathEntry(k, i) for k, i in c.rows(_U1U1, path_length, "type_path")]
    for n, p in enumerate(path):
        if p.type_path_kind > 3:
            raise c.fail(f"bad type_path_kind {p.type_path_kind}", path_start + 2 * n)
    type_index = c.u2("type_index")
    return TypeAnnotation(target_type, info, path, type_index, _read_pairs(c, 0))


@dataclass(slots=True)
class _TypeAnnotations(AttributeView):
    annotations: list[TypeAnnotation]

    @classmethod
    def _read(cls, c: _Cursor) -> Any:
        count = c.u2("num_annotations")
        c.need(6 * count, f"annotations ({count} type annotations)")  # at least 6 bytes each
        return cls([_read_type_annotation(c) for _ in range(count)])

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(len(self.annotations))
        for a in self.annotations:
            a._write(out)

    def references_code_offsets(self) -> bool:
        """True if some annotation's target holds bytecode offsets (target types 0x40, 0x41, 0x43-0x4B).

        A re-encoder that moves code must rewrite those offsets (or drop the annotation); catch targets (0x42)
        hold exception-table indices instead, see :meth:`depends_on_code`.
        """
        return any(a.target_info.references_code_offsets for a in self.annotations)

    def depends_on_code(self) -> bool:
        """True if some annotation targets code at all (0x40-0x4B: offsets or exception-table indices)."""
        return any(a.target_type >= 0x40 for a in self.annotations)


@dataclass(slots=True)
class RuntimeVisibleTypeAnnotations(_TypeAnnotations):
    """JVMS 4.7.20."""

    NAME: ClassVar[str] = "RuntimeVisibleTypeAnnotations"


@dataclass(slots=True)
class RuntimeInvisibleTypeAnnotations(_TypeAnnotations):
    """JVMS 4.7.21."""

    NAME: ClassVar[str] = "RuntimeInvisibleTypeAnnotations"


# -- BootstrapMethods, MethodParameters ----------------------------------------------------------------------
@dataclass(slots=True)
class BootstrapMethod:
    """``bootstrap_method_ref`` (MethodHandle) and its static ``bootstrap_arguments`` (loadable constants)."""

    bootstrap_method_ref: int
    bootstrap_arguments: list[int]


@dataclass(slots=True)
class BootstrapMethods(AttributeView):
    """JVMS 4.7.23."""

    NAME: ClassVar[str] = "BootstrapMethods"
    methods: list[BootstrapMethod]

    @classmethod
    def _read(cls, c: _Cursor) -> BootstrapMethods:
        count = c.u2("num_bootstrap_methods")
        c.need(4 * count, f"bootstrap_methods ({count} methods)")
        out = []
        for _ in range(count):
            ref = c.u2("bootstrap_method_ref")
            out.append(BootstrapMethod(ref, c.u2_list("bootstrap_arguments")))
        return cls(out)

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(len(self.methods))
        for m in self.methods:
            out += _U2.pack(m.bootstrap_method_ref)
            out += _u2s(m.bootstrap_arguments)


@dataclass(slots=True)
class MethodParameter:
    """``name_index`` 0 means a parameter without a name."""

    name_index: int
    access_flags: int

    def name(self, pool: ConstantPool) -> str | None:
        return pool.utf8(self.name_index) if self.name_index else None


@dataclass(slots=True)
class MethodParameters(AttributeView):
    """JVMS 4.7.24 (u1 parameters_count)."""

    NAME: ClassVar[str] = "MethodParameters"
    parameters: list[MethodParameter]

    @classmethod
    def _read(cls, c: _Cursor) -> MethodParameters:
        count = c.u1("parameters_count")
        return cls([MethodParameter(*row) for row in c.rows(_U2U2, count, "parameters")])

    def _write(self, out: bytearray) -> None:
        if len(self.parameters) > 0xFF:
            raise ClassFileError(f"{len(self.parameters)} parameters (at most 255)")
        out.append(len(self.parameters))
        for p in self.parameters:
            out += _U2U2.pack(p.name_index, p.access_flags)


# -- Module (JVMS 4.7.25) ------------------------------------------------------------------------------------
@dataclass(slots=True)
class ModuleRequires:
    """``requires_index`` (Module), flags, ``requires_version_index`` (Utf8 or 0)."""

    requires_index: int
    requires_flags: int
    requires_version_index: int

    def module_name(self, pool: ConstantPool) -> str:
        return _module_name(pool, self.requires_index)


@dataclass(slots=True)
class ModuleExports:
    """``index`` (Package), flags, and the Module constants it is exported to (empty: to everyone)."""

    index: int
    flags: int
    to: list[int]

    def package_name(self, pool: ConstantPool) -> str:
        return _package_name(pool, self.index)

    def to_modules(self, pool: ConstantPool) -> list[str]:
        return [_module_name(pool, i) for i in self.to]


@dataclass(slots=True)
class ModuleOpens(ModuleExports):
    """Same layout as :class:`ModuleExports` (``opens_index``, ``opens_flags``, ``opens_to_index``)."""


@dataclass(slots=True)
class ModuleProvides:
    """``provides_index`` (Class of the service) and ``provides_with`` (Class constants of implementations)."""

    provides_index: int
    provides_with: list[int]


@dataclass(slots=True)
class Module(AttributeView):
    """A module declaration (module-info.class)."""

    NAME: ClassVar[str] = "Module"
    module_name_index: int
    module_flags: int
    module_version_index: int
    requires: list[ModuleRequires]
    exports: list[ModuleExports]
    opens: list[ModuleOpens]
    uses: list[int]
    provides: list[ModuleProvides]

    @classmethod
    def _read(cls, c: _Cursor) -> Module:
        name = c.u2("module_name_index")
        flags = c.u2("module_flags")
        version = c.u2("module_version_index")
        count = c.u2("requires_count")
        requires = [ModuleRequires(*row) for row in c.rows(_U2U2U2, count, "requires")]
        exports = cls._read_grants(c, "exports", ModuleExports)
        opens = cls._read_grants(c, "opens", ModuleOpens)
        uses = c.u2_list("uses_index")
        count = c.u2("provides_count")
        c.need(4 * count, f"provides ({count} entries)")
        provides = []
        for _ in range(count):
            service = c.u2("provides_index")
            provides.append(ModuleProvides(service, c.u2_list("provides_with_index")))
        return cls(name, flags, version, requires, exports, opens, uses, provides)  # type: ignore[arg-type]

    @staticmethod
    def _read_grants(c: _Cursor, what: str, kind: type) -> list:
        count = c.u2(f"{what}_count")
        c.need(6 * count, f"{what} ({count} entries)")
        out = []
        for _ in range(count):
            index = c.u2(f"{what}_index")
            flags = c.u2(f"{what}_flags")
            out.append(kind(index, flags, c.u2_list(f"{what}_to_index")))
        return out

    def _write(self, out: bytearray) -> None:
        out += _U2U2U2.pack(self.module_name_index, self.module_flags, self.module_version_index)
        out += _U2.pack(len(self.requires))
        for r in self.requires:
            out += _U2U2U2.pack(r.requires_index, r.requires_flags, r.requires_version_index)
        for grants in (self.exports, self.opens):
            out += _U2.pack(len(grants))
            for g in grants:
                out += _U2U2.pack(g.index, g.flags)
                out += _u2s(g.to)
        out += _u2s(self.uses)
        out += _U2.pack(len(self.provides))
        for p in self.provides:
            out += _U2.pack(p.provides_index)
            out += _u2s(p.provides_with)

    def module_name(self, pool: ConstantPool) -> str:
        return _module_name(pool, self.module_name_index)


# -- Record (JVMS 4.7.30) ------------------------------------------------------------------------------------
@dataclass(slots=True)
class RecordComponent:
    """A component: name and descriptor (Utf8 indices) and its own raw attributes.

    Each attribute's ``name`` is resolved when the Record was parsed with a pool, and is ``""`` otherwise
    (see :meth:`Record.resolve_names`); the ``name_index`` is always the truth that is written.
    """

    name_index: int
    descriptor_index: int
    attributes: list[Attribute]

    def name(self, pool: ConstantPool) -> str:
        return pool.utf8(self.name_index)

    def descriptor(self, pool: ConstantPool) -> str:
        return pool.utf8(self.descriptor_index)


@dataclass(slots=True)
class Record(AttributeView):
    """The components of a record class."""

    NAME: ClassVar[str] = "Record"
    components: list[RecordComponent]

    @classmethod
    def parse(cls, data: bytes, pool: ConstantPool | None = None) -> Record:
        """Decode; with ``pool`` the components' attribute names are resolved (and checked) too."""
        c = _Cursor(data, cls.NAME)
        count = c.u2("components_count")
        c.need(6 * count, f"components ({count} components)")
        components = []
        for k in range(count):
            name_index = c.u2(f"component {k} name_index")
            descriptor_index = c.u2(f"component {k} descriptor_index")
            n_attrs = c.u2(f"component {k} attributes_count")
            c.need(6 * n_attrs, f"component {k} attributes ({n_attrs} attributes)")
            attributes = []
            for j in range(n_attrs):
                where = f"attribute {j} of component {k}"
                start = c.pos
                attr_name_index = c.u2(f"{where} name_index")
                length = c.u4(f"{where} length")
                body = c.raw(length, where)
                name = ""
                if pool is not None:
                    try:
                        name = pool.utf8(attr_name_index)
                    except ClassFileError:
                        raise c.fail(f"{where} has bad name index {attr_name_index}", start) from None
                attributes.append(Attribute(attr_name_index, name, body))
            components.append(RecordComponent(name_index, descriptor_index, attributes))
        c.done()
        return cls(components)

    def _write(self, out: bytearray) -> None:
        out += _U2.pack(len(self.components))
        for comp in self.components:
            out += _U2U2.pack(comp.name_index, comp.descriptor_index)
            out += write_attributes(comp.attributes)

    def resolve_names(self, pool: ConstantPool) -> None:
        """Fill in the ``name`` of every component attribute from its ``name_index``."""
        for comp in self.components:
            for a in comp.attributes:
                a.name = pool.utf8(a.name_index)


# -- registry ------------------------------------------------------------------------------------------------
#: Attribute name -> typed view class, for every standard attribute except Code and StackMapTable.
ATTRIBUTE_TYPES: dict[str, type] = {cls.NAME: cls for cls in (
    ConstantValue, Exceptions, InnerClasses, EnclosingMethod, Synthetic, Signature, SourceFile,
    SourceDebugExtension, LineNumberTable, LocalVariableTable, LocalVariableTypeTable, Deprecated,
    RuntimeVisibleAnnotations, RuntimeInvisibleAnnotations, RuntimeVisibleParameterAnnotations,
    RuntimeInvisibleParameterAnnotations, RuntimeVisibleTypeAnnotations, RuntimeInvisibleTypeAnnotations,
    AnnotationDefault, BootstrapMethods, MethodParameters, Module, ModulePackages, ModuleMainClass, NestHost,
    NestMembers, Record, PermittedSubclasses,
)}


def decode_attribute(attr: Attribute, pool: ConstantPool) -> object:
    """The typed view of ``attr``; the Attribute itself for unknown names and for Code / StackMapTable.

    Raises ClassFileError (naming the attribute) when a known attribute's body is malformed.
    """
    cls = ATTRIBUTE_TYPES.get(attr.name)
    if cls is None:
        return attr
    if cls is Record:
        return Record.parse(attr.data, pool)
    return cls.parse(attr.data)
