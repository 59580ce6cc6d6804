"""Renumbering a class's constant pool so that the constants ``ldc`` loads get the one-byte indices (``--goal size``).

Owns: :func:`ldc_first_order` (the new order: the constants loaded by ``ldc``/``ldc_w`` first, most load sites
first, then every other entry in its old order), :func:`renumber_class` (a class rewritten for any order of its
entries) and :func:`reorder_for_ldc` (both, on class bytes: what ``pipeline.py`` calls under ``--goal size``);
and, with the same renumbering, the merge of methods rewritten against private copies of one pool
(:func:`merge_entries`, :func:`renumber_code`: ``pipeline.merge_class``).

Inputs: a :class:`~.model.ClassFile` as :func:`~.reader.read_class` gives it (a pool possibly with appended
entries). Output: a new ClassFile (a fresh :class:`~.constpool.ConstantPool`, every entry encoded anew) in which
every pool index is renumbered: this/super/interfaces, member names and descriptors, every attribute's name, the
pool's own cross-references, instruction operands and catch types, StackMapTable object types, and every index
held by the standard attributes (their typed views in :mod:`.attributes`, walked with the table
:data:`_POOL_FIELDS` of which fields hold pool indices). An ``ldc_w`` whose constant now sits below 256 becomes
``ldc`` (and an ``ldc`` whose constant moved above 255 becomes ``ldc_w``): that method is re-assembled
(:func:`~.assembler.reassemble`), its exception table, LineNumberTable and LocalVariable(Type)Table moved
(:func:`~.recode.relocate_code_attributes`) and its StackMapTable's frames moved to the new offsets (the frames
themselves stay: the instructions are the same, only their encodings change).

Invariants:
- the identity order gives back the class byte for byte (tested over the fixtures, lang3 and JDK classes);
- a Long/Double keeps its two slots (its unusable second slot follows it in the new order);
- nothing is guessed: a class with an attribute this module does not know (it may hold pool indices), a pool
  whose entries do not encode back to the bytes they were read from, a method whose Code-level attribute would
  have to move without a known way to move it (a type annotation on code) or whose re-assembly changes its
  instruction count makes :func:`renumber_class` raise :class:`PoolOrderRefused`, and :func:`reorder_for_ldc`
  then keeps the class as it was;
- the output depends only on the input bytes (ties in the order are broken by the old index).
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from typing import TypeVar

from . import attributes as at
from .assembler import reassemble
from .bytecode import Instruction, encode
from .constpool import ConstantPool
from .errors import ClassFileError, UnsupportedCodeError
from .frames import Frame, decode_stack_map, encode_stack_map, initial_frame
from .model import Attribute, ClassFile, CodeAttribute, ExceptionEntry, FieldInfo, MethodInfo
from .opcodes import LDC, LDC_W, OPERAND_OF, Operand
from .reader import read_class, read_code, read_instructions
from .recode import offsets_of, relocate_code_attributes
from .writer import write_class, write_code


class PoolOrderRefused(ClassFileError):
    """The class cannot be renumbered safely (the caller keeps it as it was)."""


#: Instruction operand kinds whose ``arg`` is a pool index.
_Member = TypeVar("_Member", FieldInfo, MethodInfo)

_POOL_OPERANDS = frozenset((Operand.CP1, Operand.CP2, Operand.INVOKEINTERFACE, Operand.INVOKEDYNAMIC,
                            Operand.MULTIANEWARRAY))

#: For each constant tag, which fields of its entry tuple are pool indices (Dynamic/InvokeDynamic's first field
#: indexes BootstrapMethods, a MethodHandle's first is its kind).
_ENTRY_REFS: dict[int, tuple[int, ...]] = {
    1: (), 3: (), 4: (), 5: (), 6: (), 7: (1,), 8: (1,), 9: (1, 2), 10: (1, 2), 11: (1, 2), 12: (1, 2),
    15: (2,), 16: (1,), 17: (2,), 18: (2,), 19: (1,), 20: (1,),
}

#: For each typed view (and nested value) of :mod:`.attributes`, the fields that hold pool indices (an int, 0
#: meaning none where the JVMS allows it, or a list of ints). Every other field is walked into; a value whose type
#: is not in this table refuses the class, so a view added to attributes.py cannot be silently left unmapped.
_POOL_FIELDS: dict[type, frozenset[str]] = {t: frozenset(f) for t, f in {
    at.ConstantValue: ("constantvalue_index",), at.Signature: ("signature_index",),
    at.SourceFile: ("sourcefile_index",), at.ModuleMainClass: ("main_class_index",),
    at.NestHost: ("host_class_index",), at.EnclosingMethod: ("class_index", "method_index"),
    at.Synthetic: (), at.Deprecated: (), at.SourceDebugExtension: (),
    at.Exceptions: ("exception_index_table",), at.NestMembers: ("classes",), at.PermittedSubclasses: ("classes",),
    at.ModulePackages: ("package_index",),
    at.InnerClasses: (), at.InnerClassEntry: ("inner_class_info_index", "outer_class_info_index", "inner_name_index"),
    at.LineNumberTable: (), at.LineNumberEntry: (),
    at.LocalVariableTable: (), at.LocalVariableEntry: ("name_index", "descriptor_index"),
    at.LocalVariableTypeTable: (), at.LocalVariableTypeEntry: ("name_index", "signature_index"),
    at.ConstElementValue: ("const_value_index",), at.EnumElementValue: ("type_name_index", "const_name_index"),
    at.ClassElementValue: ("class_info_index",), at.AnnotationElementValue: (), at.ArrayElementValue: (),
    at.ElementValuePair: ("element_name_index",), at.Annotation: ("type_index",),
    at.RuntimeVisibleAnnotations: (), at.RuntimeInvisibleAnnotations: (),
    at.RuntimeVisibleParameterAnnotations: (), at.RuntimeInvisibleParameterAnnotations: (),
    at.AnnotationDefault: (),
    at.TypeAnnotation: ("type_index",), at.TypePathEntry: (), at.LocalVarTargetEntry: (),
    at.TypeParameterTarget: (), at.SupertypeTarget: (), at.TypeParameterBoundTarget: (), at.EmptyTarget: (),
    at.FormalParameterTarget: (), at.ThrowsTarget: (), at.LocalVarTarget: (), at.CatchTarget: (),
    at.OffsetTarget: (), at.TypeArgumentTarget: (),
    at.RuntimeVisibleTypeAnnotations: (), at.RuntimeInvisibleTypeAnnotations: (),
    at.BootstrapMethods: (), at.BootstrapMethod: ("bootstrap_method_ref", "bootstrap_arguments"),
    at.MethodParameters: (), at.MethodParameter: ("name_index",),
    at.Module: ("module_name_index", "module_version_index", "uses"),
    at.ModuleRequires: ("requires_index", "requires_version_index"), at.ModuleExports: ("index", "to"),
    at.ModuleOpens: ("index", "to"), at.ModuleProvides: ("provides_index", "provides_with"),
    at.Record: (), at.RecordComponent: ("name_index", "descriptor_index"),
}.items()}


#: The Code-level tables whose offsets :func:`~.recode.relocate_code_attributes` moves.
_OFFSET_TABLES = ("LineNumberTable", "LocalVariableTable", "LocalVariableTypeTable")


# -- the order ----------------------------------------------------------------------------------------------
def _code_of(m: MethodInfo, pool: ConstantPool) -> tuple[CodeAttribute, list[Instruction]] | None:
    attr = m.code_attribute()
    if attr is None:
        return None
    code = read_code(attr.data, pool)
    return code, read_instructions(code)


def ldc_first_order(cf: ClassFile) -> list[int]:
    """The old indices in their new order: the constants loaded by ``ldc``/``ldc_w``, the most load sites first
    (ties: the lower old index first), then every other entry in its old order. A Long/Double stands for its
    two slots."""
    sites: Counter[int] = Counter()
    for m in cf.methods:
        parsed = _code_of(m, cf.pool)
        if parsed is not None:
            sites.update(i.arg for i in parsed[1] if i.opcode == LDC or i.opcode == LDC_W)
    loaded = sorted(sites, key=lambda i: (-sites[i], i))
    chosen = set(loaded)
    return loaded + [i for i, _ in cf.pool if i not in chosen]


def _mapping(pool: ConstantPool, order: list[int]) -> list[int]:
    """old index -> new index (0 stays 0) for ``order``; checks it is a permutation of the pool's entries."""
    real = dict(pool)  # index -> entry, the pool's entries without the unusable slots
    if sorted(order) != list(real):
        raise ValueError("the order is not a permutation of the pool's entries")
    new = [0] * len(pool.entries)
    at_ = 1
    for old in order:
        new[old] = at_
        at_ += 2 if real[old][0] in (5, 6) else 1
    return new


# -- renumbering --------------------------------------------------------------------------------------------
class _Renumber:
    """One class's renumbering: the old pool, the old -> new map, the new pool."""

    def __init__(self, cf: ClassFile, order: list[int]) -> None:
        self.cf = cf
        self.class_name = cf.name
        self.old = cf.pool
        self.map = _mapping(cf.pool, order)
        entries: list[tuple | None] = [None] * len(cf.pool.entries)
        for old, e in cf.pool:
            fields = list(e)
            for k in _ENTRY_REFS[e[0]]:
                fields[k] = self.map[fields[k]]
            entries[self.map[old]] = tuple(fields)
        self.pool = ConstantPool(entries)

    @classmethod
    def between(cls, class_name: str, old: ConstantPool, mapping: list[int], new: ConstantPool) -> _Renumber:
        """A renumbering of code read against ``old`` into ``new`` by ``mapping`` (:func:`renumber_code`): no
        class to rewrite, only its name (for the frames' ``this``)."""
        self = cls.__new__(cls)
        self.class_name, self.old, self.map, self.pool = class_name, old, mapping, new
        return self

    def walk(self, value: object) -> None:
        """Renumber, in place, every pool index inside a typed attribute view (see :data:`_POOL_FIELDS`)."""
        if isinstance(value, list):
            for k, item in enumerate(value):
                if isinstance(item, Attribute):  # a Record component's own attributes
                    value[k] = self.attribute(item, None)
                else:
                    self.walk(item)
            return
        if value is None or isinstance(value, (int, str, bytes)):
            return
        fields = _POOL_FIELDS.get(type(value))
        if fields is None or not dataclasses.is_dataclass(value):
            raise PoolOrderRefused(f"no pool-index table for {type(value).__name__}")
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if f.name in fields:
                setattr(value, f.name, [self.map[i] for i in v] if isinstance(v, list) else self.map[v])
            else:
                self.walk(v)

    def attribute(self, a: Attribute, method: MethodInfo | None) -> Attribute:
        if a.name == "Code":
            if method is None:
                raise PoolOrderRefused("a Code attribute outside a method")
            data = self.code(a, method)
        elif a.name == "StackMapTable":
            data = _renumber_stack_map(a.data, self.map)
        else:
            cls = at.ATTRIBUTE_TYPES.get(a.name)
            if cls is None:
                raise PoolOrderRefused(f"unknown attribute {a.name}")
            view = at.Record.parse(a.data, self.old) if cls is at.Record else cls.parse(a.data)
            self.walk(view)
            data = view.to_bytes()
        return Attribute(self.map[a.name_index], a.name, data)

    def code(self, a: Attribute, m: MethodInfo) -> bytes:
        code = read_code(a.data, self.old)
        insns = read_instructions(code)
        resize = False
        for i in insns:
            if OPERAND_OF[i.opcode] in _POOL_OPERANDS:
                i.arg = self.map[i.arg]
                resize |= (i.opcode == LDC_W and i.arg < 256) or (i.opcode == LDC and i.arg > 255)
        table = [ExceptionEntry(x.start, x.end, x.handler, self.map[x.catch_type]) for x in code.exception_table]
        attrs = [self.attribute(x, m) for x in code.attributes]
        if not resize:
            return write_code(CodeAttribute(code.max_stack, code.max_locals, encode(insns), table, attrs))
        return self._relocated(m, code, insns, table, attrs)

    def _relocated(self, m: MethodInfo, code: CodeAttribute, insns: list[Instruction], table: list[ExceptionEntry],
                   attrs: list[Attribute]) -> bytes:
        """The code re-assembled for the new ``ldc`` forms, with its tables and frames moved along."""
        extra = [pc for x in attrs if x.name in _OFFSET_TABLES for pc in offsets_of(x)]
        count = len(insns)
        asm, offset_map = reassemble(code.code, table, extra, insns)
        if len(asm.instructions) != count:  # a branch grew into two instructions: frames would be needed there
            raise PoolOrderRefused(f"method {m.name}{m.descriptor}: re-assembly changed the instructions")
        kept, dropped, min_locals = relocate_code_attributes(attrs, offset_map, self.pool)
        if dropped:
            raise PoolOrderRefused(f"method {m.name}{m.descriptor}: cannot move {', '.join(dropped)}")
        stack_map = next((x for x in code.attributes if x.name == "StackMapTable"), None)
        if stack_map is not None:
            init = initial_frame(self.class_name, m.name, m.descriptor, m.is_static)
            frames = [_moved(f, offset_map) for f in decode_stack_map(stack_map.data, init, self.old)]
            body = encode_stack_map(frames, init, self.pool)
            kept.append(Attribute(self.map[stack_map.name_index], "StackMapTable", body))
        max_locals = max(code.max_locals, min_locals)
        return write_code(CodeAttribute(code.max_stack, max_locals, asm.code, asm.exception_table, kept))

    def member(self, m: _Member) -> _Member:
        method = m if isinstance(m, MethodInfo) else None
        attrs = [self.attribute(a, method) for a in m.attributes]
        return type(m)(m.access, self.map[m.name_index], self.map[m.descriptor_index], attrs, m.name, m.descriptor)

    def renumbered(self) -> ClassFile:
        cf = self.cf
        fields = [self.member(f) for f in cf.fields]
        methods = [self.member(m) for m in cf.methods]
        attrs = [self.attribute(a, None) for a in cf.attributes]
        return ClassFile(cf.minor, cf.major, self.pool, cf.access, self.map[cf.this_index],
                         self.map[cf.super_index], [self.map[i] for i in cf.interface_indices],
                         fields, methods, attrs)


def _moved(f: Frame, offset_map: dict[int, int]) -> Frame:
    """A frame at its new offset; Uninitialized(offset) types (negative ints) follow their ``new``."""
    def vtype(t: int | str) -> int | str:
        return -offset_map[-t - 1] - 1 if isinstance(t, int) and t < 0 else t
    return Frame(offset_map[f.offset], [vtype(t) for t in f.locals], [vtype(t) for t in f.stack])


def _renumber_stack_map(data: bytes, mapping: list[int]) -> bytes:
    """A StackMapTable body with its Object_variable_info indices renumbered and everything else as it was."""
    out = bytearray(data)
    try:
        pos = 2

        def vtypes(n: int) -> None:
            nonlocal pos
            for _ in range(n):
                tag = out[pos]
                if tag == 7:
                    out[pos + 1:pos + 3] = mapping[(out[pos + 1] << 8) | out[pos + 2]].to_bytes(2, "big")
                pos += 3 if tag in (7, 8) else 1
        for _ in range((data[0] << 8) | data[1]):
            kind = out[pos]
            pos += 1
            if kind < 64:
                continue
            if kind < 128:
                vtypes(1)
                continue
            if kind < 247:
                raise PoolOrderRefused(f"StackMapTable: reserved frame type {kind}")
            pos += 2  # offset_delta
            if kind == 247:
                vtypes(1)
            elif 251 < kind < 255:
                vtypes(kind - 251)
            elif kind == 255:
                nl = (out[pos] << 8) | out[pos + 1]
                pos += 2
                vtypes(nl)
                ns = (out[pos] << 8) | out[pos + 1]
                pos += 2
                vtypes(ns)
    except IndexError:
        raise PoolOrderRefused("StackMapTable truncated") from None
    if pos != len(data):
        raise PoolOrderRefused("StackMapTable has trailing bytes")
    return bytes(out)


def renumber_class(cf: ClassFile, order: list[int]) -> ClassFile:
    """``cf`` with its pool in ``order`` (old indices, as :func:`ldc_first_order` gives) and every index
    renumbered; raises :class:`PoolOrderRefused` when that cannot be done safely (see the module docstring)."""
    if cf.pool.to_bytes()[2:] != cf.pool.encode_all():
        raise PoolOrderRefused("the pool does not encode back to its bytes")
    return _Renumber(cf, order).renumbered()


def merge_entries(pool: ConstantPool, private: ConstantPool, start: int) -> list[int]:
    """The entries of ``private`` from index ``start`` on (those a method's rewrite added to its own copy of the
    class's pool, whose first ``start`` entries are ``pool``'s) added to ``pool`` in their order, with their
    references renumbered; returns ``private``'s index -> ``pool``'s (the identity below ``start``). Entries
    ``pool`` holds already (added by an earlier method) are shared, so the result depends on the order of the
    calls only, never on which process made the rewrites."""
    mapping = list(range(start)) + [0] * (len(private.entries) - start)
    for i in range(start, len(private.entries)):
        e = private.entries[i]
        if e is None:  # the second slot of a Long/Double
            continue
        fields = list(e)
        for k in _ENTRY_REFS[e[0]]:
            if not 0 < fields[k] < i:  # interning adds what an entry refers to first
                raise PoolOrderRefused(f"constant #{i} refers forward to #{fields[k]}")
            fields[k] = mapping[fields[k]]
        mapping[i] = pool.add(tuple(fields))
    return mapping


def renumber_code(class_name: str, m: MethodInfo, data: bytes, old: ConstantPool, mapping: list[int],
                  new: ConstantPool) -> bytes:
    """Method ``m``'s Code attribute body ``data``, read against ``old``, with every pool index it holds
    (instructions, catch types, its attributes' names and indices, StackMapTable object types) through
    ``mapping`` into ``new`` (:func:`merge_entries`); an ``ldc`` whose constant moved above 255 becomes
    ``ldc_w``, re-assembled with its tables and frames moved as in :func:`renumber_class`. Raises
    :class:`PoolOrderRefused` when that cannot be done safely."""
    return _Renumber.between(class_name, old, mapping, new).code(Attribute(0, "Code", data), m)


def _resolved_code(cf: ClassFile) -> list[tuple[str, list[tuple[int, str]], list[str]]]:
    """Per method: its name and descriptor, its pool-operand instructions (``ldc_w`` read as ``ldc``) with their
    constants spelled out, and its catch types spelled out: what renumbering must not change."""
    out = []
    for m in cf.methods:
        parsed = _code_of(m, cf.pool)
        insns: list[tuple[int, str]] = []
        catches: list[str] = []
        if parsed is not None:
            code, decoded = parsed
            insns = [(LDC if i.opcode == LDC_W else i.opcode, cf.pool.describe(i.arg)) for i in decoded
                     if OPERAND_OF[i.opcode] in _POOL_OPERANDS]
            catches = [cf.pool.describe(x.catch_type) if x.catch_type else "" for x in code.exception_table]
        out.append((m.name + m.descriptor, insns, catches))
    return out


def reorder_for_ldc(data: bytes) -> bytes:
    """``data`` with its pool in :func:`ldc_first_order`, or ``data`` itself when that saves nothing or the
    class cannot be renumbered safely. The result is read back and its code compared with the original's, its
    constants resolved (a slip in the renumbering keeps the class as it was rather than changing a program)."""
    cf = read_class(data)
    order = ldc_first_order(cf)
    if order == sorted(order):
        return data
    try:
        out = write_class(renumber_class(cf, order))
        if len(out) >= len(data):
            return data
        back = read_class(out)
    except (ClassFileError, UnsupportedCodeError, IndexError, KeyError):
        # refused; a method grew past what its fields hold; or an index the attribute views do not check (they
        # parse structure only) or a frame offset is not in the class: the class stays as it was
        return data
    same = (back.name, back.super_name, back.interfaces) == (cf.name, cf.super_name, cf.interfaces) \
        and _resolved_code(back) == _resolved_code(cf)
    return out if same else data
