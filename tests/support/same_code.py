"""Which methods of one compiled fixture tree run exactly as in another: the same code, reaching only the same code.

Why: the slow tier holds the IR interpreter to the JVM (``test_interp.py``) and the PEG evaluator to the
interpreter (``test_peg.py``) on every candidate method of the release 17 tree and of the release 8 tree, and javac
writes the same bytecode under both releases for most methods (165 of release 17's 274 candidates, among them the
costliest loops): the second sweep repeated the first one's work on them. A sweep of ``tree`` can leave out the
methods :func:`same_methods` names, since the sweep of ``other`` runs them on the same inputs.

Input: two directories of class files (``fixtures/classes/release17`` and ``release8``). Output:
:func:`same_methods` (the (class, name, descriptor) of ``tree``'s methods that run as in ``other``).

The rule, conservative (a method not shown the same is run in both sweeps). Method M of ``tree`` is the same when:

* ``other`` has M with the same access flags, and the same code: instruction by instruction, constants by value
  (the trees' pool indexes differ), the same exception table (catch types by name), ``max_stack``, ``max_locals``;
* M's code has no ``invokedynamic`` and loads no method handle, method type or dynamic constant (bootstrap methods
  are not compared: javac's string concatenation and lambdas make those differ anyway);
* everything M may run is the same, recursively. A reference to a member of a class of ``tree`` reaches every
  method of ``tree`` with that name and descriptor (a virtual call may dispatch to any class), and the class: its
  shape (access flags, superclass, interfaces, fields with their attributes) and its static initializer, and those
  of its superclasses and interfaces in ``tree``. A class whose objects the code may make (``new``) or whose
  ``Class`` object it loads (``ldc``) reaches every method of that class and of its supertypes, which must be the
  same methods in both trees, since the library calls methods of an object (``toString``, ``compareTo``, an enum's
  ``values``) that no instruction names. The fixtures reach no class of their own by reflection on a name.

Invariants: a method is named only when both runs execute the same instructions on classes of the same shape, so
the interpreter's, the evaluator's and the JVM's outcomes on the same inputs are the same in both trees (neither the
lifter, the interpreter nor the evaluator reads a class file's version). Deterministic: a function of the bytes of
the two trees.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from peggy_jvm.classfile.model import ClassFile, MethodInfo
from peggy_jvm.classfile.opcodes import OPERAND_OF, Operand
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions

MethodKey = tuple[str, str, str]  # (class, name, descriptor)

_POOL_OPERANDS = (Operand.CP1, Operand.CP2, Operand.INVOKEINTERFACE, Operand.MULTIANEWARRAY)
_MEMBER_TAGS = (9, 10, 11)  # Fieldref, Methodref, InterfaceMethodref
_CLASS_TAG = 7
_BOOTSTRAPPED_TAGS = (15, 16, 17, 18)  # MethodHandle, MethodType, Dynamic, InvokeDynamic
_NEW, _LDC_OPS = 0xbb, (0x12, 0x13)


@dataclass(frozen=True)
class _Code:
    """A method's code read for comparison: ``fingerprint`` (None: never the same) and what it reaches."""
    fingerprint: tuple | None
    members: frozenset[tuple[str, str, str]]  # (owner, name, descriptor) of the members it names
    classes: frozenset[str]  # classes it names (instructions, catch types)
    whole: frozenset[str]  # classes whose objects it may make or whose Class object it loads


def _read_code(cf: ClassFile, m: MethodInfo) -> _Code:
    attr = m.code_attribute()
    assert attr is not None
    code = read_code(attr.data, cf.pool)
    out: list = [m.access, code.max_stack, code.max_locals]
    members: set[tuple[str, str, str]] = set()
    classes: set[str] = set()
    whole: set[str] = set()
    bootstrapped = False
    for i in read_instructions(code):
        kind = OPERAND_OF[i.opcode]
        if kind is Operand.INVOKEDYNAMIC:
            bootstrapped = True
            continue
        if kind not in _POOL_OPERANDS:
            out.append((i.opcode, i.arg, i.arg2, i.wide, tuple(i.keys or ()), tuple(i.targets or ())))
            continue
        tag = cf.pool.entry(i.arg)[0]
        if tag in _BOOTSTRAPPED_TAGS:
            bootstrapped = True
            continue
        out.append((i.opcode, cf.pool.describe(i.arg), i.arg2))
        if tag in _MEMBER_TAGS:
            ref = cf.pool.member_ref(i.arg)
            members.add((ref.owner, ref.name, ref.descriptor))
        elif tag == _CLASS_TAG:
            name = cf.pool.class_name(i.arg)
            classes.add(name)
            if i.opcode == _NEW or i.opcode in _LDC_OPS:
                whole.add(name)
    for h in code.exception_table:
        catch = cf.pool.class_name(h.catch_type) if h.catch_type else None
        out.append(("handler", h.start, h.end, h.handler, catch))
        if catch is not None:
            classes.add(catch)
    return _Code(None if bootstrapped else tuple(out), frozenset(members), frozenset(classes), frozenset(whole))


class _Tree:
    def __init__(self, directory: Path) -> None:
        self.classes = {cf.name: cf for cf in (read_class(p.read_bytes()) for p in sorted(directory.glob("*.class")))}
        self.code: dict[MethodKey, _Code] = {}
        self.by_signature: dict[tuple[str, str], list[MethodKey]] = {}
        for cf in self.classes.values():
            for m in cf.methods:
                key = (cf.name, m.name, m.descriptor)
                self.by_signature.setdefault((m.name, m.descriptor), []).append(key)
                if m.code_attribute() is not None:
                    self.code[key] = _read_code(cf, m)

    def shape(self, name: str) -> tuple:
        cf = self.classes[name]
        fields = sorted((f.name, f.descriptor, f.access, tuple((a.name, bytes(a.data)) for a in f.attributes))
                        for f in cf.fields)
        return cf.access, cf.super_name, tuple(cf.interfaces), tuple(fields)

    def methods(self, name: str) -> list[tuple[str, str, int]]:
        return sorted((m.name, m.descriptor, m.access) for m in self.classes[name].methods)

    def supertypes(self, name: str) -> list[str]:
        """``name`` and its superclasses and interfaces that are classes of this tree."""
        out, work = [], [name]
        while work:
            c = work.pop()
            if c in self.classes and c not in out:
                out.append(c)
                cf = self.classes[c]
                work.extend([*([cf.super_name] if cf.super_name else []), *cf.interfaces])
        return out


def same_methods(tree: Path, other: Path) -> set[MethodKey]:
    """The methods of ``tree`` (with code) that run exactly as in ``other`` (the rule of the module docstring)."""
    a, b = _Tree(tree), _Tree(other)

    def same(start: MethodKey) -> bool:
        # everything the method reaches, as work items: ("method", key), ("class", name), ("whole", name); the
        # method is the same when every item is (the reached set is closed, so a cycle of calls is no problem)
        seen: set[tuple] = set()
        work: list[tuple] = [("method", start)]
        while work:
            item = work.pop()
            if item in seen:
                continue
            seen.add(item)
            kind, what = item
            if kind == "method":
                mine = a.code.get(what)
                if mine is None:
                    continue  # abstract or native: its class's shape is compared
                theirs = b.code.get(what)
                if mine.fingerprint is None or theirs is None or mine.fingerprint != theirs.fingerprint:
                    return False
                for owner, name, desc in mine.members:
                    if owner in a.classes:
                        work.append(("class", owner))
                        work.extend(("method", k) for k in a.by_signature.get((name, desc), ()))
                work.extend(("class", c) for c in mine.classes if c in a.classes)
                work.extend(("whole", c) for c in mine.whole if c in a.classes)
            else:
                for c in a.supertypes(what):
                    if c not in b.classes or a.shape(c) != b.shape(c):
                        return False
                    if kind == "whole":
                        if a.methods(c) != b.methods(c):
                            return False  # a method the library may call on its objects exists in one tree only
                        work.extend(("method", (c, m.name, m.descriptor)) for m in a.classes[c].methods)
                    else:
                        work.append(("method", (c, "<clinit>", "()V")))
        return True

    return {key for key in a.code if same(key)}
