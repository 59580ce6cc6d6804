"""Arrays: a built-in rule for an array's ``clone()`` (group ``java.lang.array``; validation only, not among the
optimizer's safe groups).

What this module owns
    * ``array-clone-copy``: ``a.clone()`` of an array ``a`` whose class is known exactly is a new array of that
      class and ``a.length`` elements filled by ``System.arraycopy(a, 0, copy, 0, a.length)``: JLS 10.7 (the
      clone of an array is a new array of the same class, a shallow copy) and the specification of
      ``arraycopy`` (:data:`~peggy_jvm.jdk.facts.ARRAYCOPY`; nothing of it can fail on these arguments). A null
      ``a`` throws NullPointerException in both, before any other effect (``arraylength`` is the model's first
      step). The class is exact when the ``clone`` call's owner is a primitive array or an array of a class that is
      final in both versions (``PegInfo.final_class``): the verifier holds the receiver to the owner type, and a
      final class has no subclass an array of it could hold instead. ecj's enum ``values()`` is this copy where
      javac's is ``$VALUES.clone()``. The class is exact too when the receiver is read from a static field that
      only ever holds an array made for it (``PegInfo.exact_array_field``, found by :func:`exact_array_fields`):
      the enum's array of its constants when the enum's class is not final (constants with bodies).
    * :func:`exact_array_fields`: the ``private static final`` array fields of a class whose every
      ``putstatic`` (JVMS 6.5: a final static field is only written by its own class's ``<clinit>``) stores an
      array allocated just before for exactly the field's type: ``anewarray`` of its element class followed only
      by element stores that leave it on the stack (``dup``, an index, a constant or static read, ``aastore``;
      no jump into that stretch), or the return of a private static helper whose whole code is that (javac's
      ``$values()``). Such a field holds null or an array of exactly its declared class; nothing in Java (nor
      reflection: ``Field.set`` refuses static final fields) writes it otherwise.
    * ``checkcast-new-array``: a ``checkcast`` to ``[T`` of a value that is a ``newarray [T`` is that value and
      changes nothing (the array is of that very class; JVMS checkcast).
    * ``array-store-default-new``: a store of the default value at a constant index inside a constant length,
      right after the allocation or after stores at other constant indexes of it, changes nothing (javac's
      ``{null}`` and ``{true, false}`` against ecj's nothing).

Inputs / outputs: :class:`~peggy_jvm.egraph.runner.Rewrite`-like objects over the E-PEG, listed by
:func:`~peggy_jvm.rules.builtin.builtin_rules`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..classfile import opcodes as op_
from ..classfile.bytecode import Instruction, decode
from ..classfile.errors import ClassFileError
from ..classfile.model import Access, ClassFile
from ..classfile.reader import read_code
from ..egraph.explain import Reason
from ..ir.nodes import Const, ConstKind, FieldRef, MethodRef
from ..jdk.facts import ARRAYCOPY

if TYPE_CHECKING:
    from ..epeg import EPeg

__all__ = ["ArrayCloneCopy", "CheckcastNewArray", "StoreDefaultIntoNew", "exact_array_fields"]

CLONE_DESCRIPTOR = "()Ljava/lang/Object;"


def _exact_array(eg: EPeg, desc: str) -> bool:
    """An array of class ``desc`` holds exactly that class: primitive elements, or a final element class (any
    depth of nesting)."""
    elem = desc.lstrip("[")
    if not desc.startswith("[") or not elem:
        return False
    if elem[0] != "L":
        return True
    return elem.endswith(";") and eg.info.final_class(elem[1:-1])


def _read_of_exact_field(eg: EPeg, value: int, desc: str) -> bool:
    """``value`` is read from a static field of type ``desc`` that holds arrays of exactly that class."""
    for op, _a, ch in eg.nodes(value):
        if op == "rho_value" and len(ch) == 1:
            for fop, f, _fch in eg.nodes(ch[0]):
                if fop == "getstatic" and isinstance(f, FieldRef) and f.descriptor == desc \
                        and eg.info.exact_array_field(f):
                    return True
    return False


_PRIVATE_STATIC_FINAL = Access.PRIVATE | Access.STATIC | Access.FINAL
_INT_PUSH = frozenset({*range(op_.ICONST_M1, op_.ICONST_5 + 1), op_.BIPUSH, op_.SIPUSH})
_REF_PUSH = frozenset({op_.ACONST_NULL, op_.GETSTATIC})  # an element: a constant or another static field


def exact_array_fields(cf: ClassFile) -> frozenset[tuple[str, str]]:
    """(name, descriptor) of the fields of ``cf`` that only ever hold null or an array of exactly their declared
    class (see the module docstring); a class whose code does not decode has none."""
    fields = {(f.name, f.descriptor) for f in cf.fields
              if f.access & _PRIVATE_STATIC_FINAL == _PRIVATE_STATIC_FINAL and f.descriptor.startswith("[L")}
    if not fields:
        return frozenset()
    try:
        codes = {(m.name, m.descriptor): (m, read_code(attr.data, cf.pool))
                 for m in cf.methods if (attr := m.code_attribute()) is not None}
        insns = {k: list(decode(code.code)) for k, (_m, code) in codes.items()}
    except ClassFileError:
        return frozenset()
    # javac's $values(): `n; anewarray; element stores; areturn` and nothing else
    helpers = {k for k, (m, code) in codes.items()
               if m.access & (Access.PRIVATE | Access.STATIC) == Access.PRIVATE | Access.STATIC
               and k[1].startswith("()") and not code.exception_table and len(insns[k]) >= 3
               and insns[k][-1].opcode == op_.ARETURN and insns[k][0].opcode in _INT_PUSH
               and _fresh_array_at(cf, insns[k], len(insns[k]) - 1, set()) == 1
               and _array_class(cf, insns[k][1]) == k[1][2:]}
    for k, (_m, code) in codes.items():
        entries = {e.handler for e in code.exception_table}
        entries.update(t for i in insns[k] for t in i.successors_targets())
        for at, insn in enumerate(insns[k]):
            if insn.opcode != op_.PUTSTATIC:
                continue
            ref = cf.pool.member_ref(insn.arg)
            key = (ref.name, ref.descriptor)
            if key not in fields:
                continue
            start = _fresh_array_at(cf, insns[k], at, entries)
            fresh = start is not None and _array_class(cf, insns[k][start]) == ref.descriptor \
                or _helper_call(cf, insns[k], at, entries, helpers, ref.descriptor)
            # a store named through another class (a subclass's name resolves to this field too) is not judged
            if ref.owner != cf.name or not fresh:
                fields.discard(key)
    return frozenset(fields)


def _array_class(cf: ClassFile, insn: Instruction) -> str | None:
    """The class of the array an ``anewarray`` makes, as a descriptor."""
    if insn.opcode != op_.ANEWARRAY:
        return None
    elem = cf.pool.class_name(insn.arg)
    return "[" + (elem if elem.startswith("[") else f"L{elem};")


def _fresh_array_at(cf: ClassFile, insns: list[Instruction], at: int, entries: set[int]) -> int | None:
    """The index of the ``anewarray`` whose array is on top of the stack before ``insns[at]``: only element stores
    (``dup``, an int push, a reference push, ``aastore``) in between, and no jump or handler entering them."""
    i = at - 1
    while i >= 3 and insns[i].opcode == op_.AASTORE and insns[i - 1].opcode in _REF_PUSH \
            and insns[i - 2].opcode in _INT_PUSH and insns[i - 3].opcode == op_.DUP:
        i -= 4
    if i < 0 or insns[i].opcode != op_.ANEWARRAY or any(x.offset in entries for x in insns[i + 1:at + 1]):
        return None
    return i


def _helper_call(cf: ClassFile, insns: list[Instruction], at: int, entries: set[int], helpers: set,
                 desc: str) -> bool:
    """``insns[at]`` stores what a call just before it of a fresh-array helper of ``cf`` returns."""
    if at == 0 or insns[at - 1].opcode != op_.INVOKESTATIC or insns[at].offset in entries:
        return False
    ref = cf.pool.member_ref(insns[at - 1].arg)
    return ref.owner == cf.name and (ref.name, ref.descriptor) in helpers and ref.descriptor == f"(){desc}"


class _ArrayRule:
    name = ""
    group = "java.lang.array"
    source = "builtin"
    depth = None
    cache_matches = True


class ArrayCloneCopy(_ArrayRule):
    name = "array-clone-copy"

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("invoke.virtual"):
            for op, m, ch in eg.nodes(cid):
                if op == "invoke.virtual" and isinstance(m, MethodRef) and m.name == "clone" \
                        and m.descriptor == CLONE_DESCRIPTOR and len(ch) == 2 \
                        and (_exact_array(eg, m.owner) or _read_of_exact_field(eg, ch[1], m.owner)):
                    out.append((eg.find(cid), eg.find(ch[0]), eg.find(ch[1]), m.owner))
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        outcome, sigma, array, desc = match
        length = eg.add("arraylength", None, (sigma, array))
        n = eg.add("rho_value", None, (length,))
        fresh = eg.add("newarray", desc, (eg.add("rho_sigma", None, (length,)), n))
        copy = eg.add("rho_value", None, (fresh,))
        zero = eg.add("const.i", 0)
        done = eg.add("invoke.static", ARRAYCOPY, (eg.add("rho_sigma", None, (fresh,)), array, zero, copy, zero, n))
        why = Reason(self.name, ("?s", "?a"), (sigma, array))
        changed = eg.union(eg.add("rho_value", None, (outcome,)), copy, why)
        return eg.union(eg.add("rho_sigma", None, (outcome,)), eg.add("rho_sigma", None, (done,)), why) or changed


class CheckcastNewArray(_ArrayRule):
    name = "checkcast-new-array"

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("checkcast"):
            for op, t, ch in eg.nodes(cid):
                if op != "checkcast" or not isinstance(t, str) or not t.startswith("[") or len(ch) != 2:
                    continue
                for vop, _a, vch in eg.nodes(ch[1]):
                    if vop == "rho_value" and any(e[0] == "newarray" and e[1] == t for e in eg.nodes(vch[0])):
                        out.append((eg.find(cid), eg.find(ch[0]), eg.find(ch[1])))
                        break
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        outcome, sigma, value = match
        why = Reason(self.name, ("?s", "?a"), (sigma, value))
        changed = eg.union(eg.add("rho_value", None, (outcome,)), value, why)
        return eg.union(eg.add("rho_sigma", None, (outcome,)), sigma, why) or changed


class StoreDefaultIntoNew(_ArrayRule):
    """``array-store-default-new``: storing an element's default value (``0``, ``false``, ``null``: JLS 4.12.5)
    at a constant index within a constant length into an array allocated just before (or with only stores at
    other constant indexes of it in between) changes nothing: the
    element already holds it, the index is in bounds, and ``null`` passes the store check. javac writes the
    ``null`` of ``new Type[] {null}`` and the ``false`` of ``{false, true}``; ecj leaves them out."""

    name = "array-store-default-new"

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("astore"):
            for op, _e, ch in eg.nodes(cid):
                if op != "astore" or len(ch) != 4 or not _is_default(eg, ch[3]):
                    continue
                index = eg.const(ch[2])
                if index is None or index[0] != "const.i":
                    continue
                fresh = _new_array_under(eg, _before_other_stores(eg, ch[0], ch[1], index[1]), ch[1])
                if fresh is None:
                    continue
                length = eg.const(fresh[1])
                if length is not None and length[0] == "const.i" and 0 <= index[1] < length[1]:
                    out.append((eg.find(cid), eg.find(ch[0])))
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        outcome, sigma = match
        return eg.union(eg.add("rho_sigma", None, (outcome,)), sigma, Reason(self.name, ("?s",), (sigma,)))


def _is_default(eg: EPeg, cid: int) -> bool:
    key = eg.const(cid)
    if key is not None and key[0] in ("const.i", "const.l") and key[1] == 0:
        return True
    return any(op == "const.a" and isinstance(a, Const) and a.kind is ConstKind.VALUE and a.value is None
               for op, a, _c in eg.nodes(cid))


#: stores into the same new array walked back over (javac's initializer of a long constant array stores every
#: element in turn; the walk is per match, so it stays short)
_MAX_OTHER_STORES = 64


def _before_other_stores(eg: EPeg, sigma: int, array: int, index: int) -> int:
    """The heap before the stores into ``array`` at constant indexes other than ``index`` that lead to ``sigma``
    (each leaves element ``index`` as it was; one that threw ended the method, so what follows is never seen):
    javac's ``{true, false}`` stores ``false`` at 1 after ``true`` at 0, and element 1 is still the default."""
    find = eg.find
    for _ in range(_MAX_OTHER_STORES):
        earlier = None
        for op, _a, ch in eg.nodes(sigma):
            if op != "rho_sigma":
                continue
            for node in eg.nodes(ch[0]):
                if node[0] == "astore" and len(node[2]) == 4 and find(node[2][1]) == find(array):
                    other = eg.const(node[2][2])
                    if other is not None and other[0] == "const.i" and other[1] != index:
                        earlier = node[2][0]
        if earlier is None:
            return sigma
        sigma = earlier
    return sigma


def _new_array_under(eg: EPeg, sigma: int, array: int) -> tuple | None:
    """The ``newarray`` node whose heap is ``sigma`` and whose array is ``array``, if there is one."""
    for op, _a, ch in eg.nodes(sigma):
        if op != "rho_sigma":
            continue
        for node in eg.nodes(ch[0]):
            if node[0] == "newarray" and eg.lookup("rho_value", None, (eg.find(ch[0]),)) == eg.find(array):
                return node[2]
    return None
