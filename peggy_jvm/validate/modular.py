"""Modular validation: which calls of ORIG and OPT may be read as one call, and in which order pairs are proved.

What this module owns
    * :class:`Program`: the input's own methods on both sides (those with code), and :meth:`Program.targets`:
      the methods of the input a call reference may run (resolution up the supertypes, and for a virtual or
      interface call every override in a subtype), as pair keys (ORIG's class names).
    * :func:`proof_order`: the pairs grouped into strongly connected components of the call graph among
      them, callees first (ties by pairing order), each marked recursive or not.
    * :class:`CallView`: ORIG's PEG read in OPT's terms before the two PEGs meet: every class reference renamed
      by ``--map`` (calls, fields, types, class constants, array types, descriptors, method handles), every
      member reference by the member renames (given, or derived by :mod:`.pairing` from call sites), and each
      reference to the input's own methods kept as OPT's only when every method it may run is *assumed*: a pair
      proved equivalent, or a pair of the recursive component being proved (the regression-verification rule).
      Any other such reference gets a name no OPT method has (:data:`UNPROVED`), so the two calls are different
      operators and nothing about the callee is assumed. One call is read as another that runs the same method:
      ``invokespecial`` of a superclass's method on ``this`` of a final class that does not declare it (javac's
      bridge in a final subclass) is ``invokevirtual`` of it (:meth:`_Side.super_call_is_virtual`): both select
      the first declaration above the class. ORIG's are read so in the view, OPT's by :meth:`CallView.opt`.
    * :class:`Proved`: the pairs proved so far, grow-only, and its snapshots (:class:`Assumed`), each view's
      assumed set without a copy per pair.
    * :meth:`Program.invokes`: a method's calls, its code decoded once per run (the one decoder of code here).

Inputs: the pairing, both sides, the class map and member renames, the set of assumed pair keys. Outputs: an
order of pair indexes; a PEG -> PEG function for ORIG.

Invariants
    * A call is one operator on both sides only if every method of the input it may run (on either side) is an
      assumed pair; a method without a partner, or an unproved one, is never assumed.
    * A component's hypothesis is only kept if every pair of it is proved under it (the driver drops the failed
      ones and proves the rest again): what is then proved is *partial* equivalence (docs/validation.md).
    * Deterministic: classes and methods in sorted or declaration order, components ordered by their first pair.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Container, Hashable, Iterator, cast

import networkx as nx

from ..classfile.bytecode import decode
from ..classfile.constpool import ConstantPool
from ..classfile.hierarchy import ClassHierarchy, UnknownClassError
from ..classfile.model import Access, ClassFile, MethodInfo
from ..classfile.reader import read_code
from ..classfile.opcodes import INVOKEDYNAMIC, INVOKEINTERFACE, INVOKESPECIAL, INVOKESTATIC, INVOKEVIRTUAL
from ..ir.nodes import Bootstrap, Const, ConstKind, DynamicConst, FieldRef, IRType, MethodRef
from ..peg.graph import PEG, Node
from .pairing import Members, MethodPair, bootstrap_handles, rename_class, rename_descriptor

Key = tuple[str, str, str]  # a pair's key: ORIG class name, method name, descriptor

#: appended to the name of a call of ORIG whose callee is not assumed: no OPT method is named so
UNPROVED = "'unproved"
_NO_PAIR: Key = ("", "", "")  # a target of the input without a partner: never assumed


@dataclass(slots=True)
class _Side:
    classes: dict[str, ClassFile]
    hierarchy: ClassHierarchy
    to_orig: dict[str, str]  # this side's class names -> ORIG's (empty for ORIG)
    members_to_orig: Members  # this side's (class, member) -> ORIG's member name (empty for ORIG)
    declared: dict[tuple[str, str], list[tuple[str, bool]]] = field(default_factory=dict)  # (class, static)
    _supers: dict[str, frozenset[str] | None] = field(default_factory=dict)
    _targets: dict[tuple[str, str, str, bool], frozenset[Key]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in sorted(self.classes):
            for m in self.classes[name].methods:
                if m.code_attribute() is not None:  # abstract and native methods run none of the input's code
                    self.declared.setdefault((m.name, m.descriptor), []).append((name, m.is_static))

    def supertypes(self, name: str) -> frozenset[str] | None:
        """``name`` and all its superclasses and superinterfaces; None when some class is unknown."""
        if name in self._supers:
            return self._supers[name]
        out: set[str] = set()
        todo = [name]
        found: frozenset[str] | None
        try:
            while todo:
                c = todo.pop()
                if c in out:
                    continue
                out.add(c)
                if c in self.classes:
                    cf = self.classes[c]
                    todo.extend([s for s in [cf.super_name] if s] + list(cf.interfaces))
                elif not c.startswith("["):
                    info = self.hierarchy.info(c)
                    todo.extend([s for s in [info.super_name] if s] + list(info.interfaces))
            found = frozenset(out)
        except UnknownClassError:
            found = None
        self._supers[name] = found
        return found

    def targets(self, owner: str, name: str, desc: str, virtual: bool) -> frozenset[Key]:
        """The input's methods (as pair keys) a reference to ``owner.name desc`` may run on this side (computed
        once per reference: the proof order asks for each call of each method)."""
        hit = self._targets.get((owner, name, desc, virtual))
        if hit is None:
            hit = self._targets[(owner, name, desc, virtual)] = frozenset(self._find(owner, name, desc, virtual))
        return hit

    def _find(self, owner: str, name: str, desc: str, virtual: bool) -> set[Key]:
        out: set[Key] = set()
        up = self.supertypes(owner)
        for cls, static in self.declared.get((name, desc), ()):
            if up is None or cls in up:  # resolved there (or the hierarchy is not known: assume it may be)
                out.add(self.key(cls, name, desc))
            elif virtual and not static:
                down = self.supertypes(cls)
                if down is None or owner in down:  # an override a receiver of a subtype runs
                    out.add(self.key(cls, name, desc))
        return out

    def super_call_is_virtual(self, cls: str, ref: MethodRef) -> bool:
        """Whether ``invokespecial ref`` on ``this`` of an instance method of ``cls`` runs what ``invokevirtual
        ref`` does there. Both select by walking up from a class (JVMS 6.5: ``invokespecial`` of a superclass's
        method from the direct superclass, since Java 8 every class counts as ACC_SUPER; ``invokevirtual`` from
        the receiver's class), so they agree when the receiver's class is exactly ``cls`` (``cls`` final: ``this``
        is then no subclass's), ``cls`` does not declare the method, and the first declaration above it is the
        one ``ref`` names, with code (so the two ways of matching a declaration, by name and descriptor or by
        being able to override it, meet the same method). Only classes of this side are walked: a superclass
        outside the input answers False."""
        cf = self.classes.get(cls)
        if cf is None or not cf.access & Access.FINAL or ref.name.startswith("<") or _declared(cf, ref) is not None:
            return False
        name = cf.super_name
        while name is not None and name in self.classes:
            m = _declared(self.classes[name], ref)
            if name == ref.owner:
                return m is not None and m.code_attribute() is not None and not m.is_static
            if m is not None:
                return False
            name = self.classes[name].super_name
        return False

    def key(self, cls: str, name: str, desc: str) -> Key:
        """The pair key of this side's method ``cls.name desc`` (ORIG's names)."""
        return (rename_class(cls, self.to_orig), self.members_to_orig.get((cls, name), name),
                rename_descriptor(desc, self.to_orig))


def _declared(cf: ClassFile, ref: MethodRef):
    return next((m for m in cf.methods if m.name == ref.name and m.descriptor == ref.descriptor), None)


def _exact_super_call(side: _Side, peg: PEG, n: Node) -> bool:
    """``invokespecial`` on ``this`` that runs what ``invokevirtual`` would (:meth:`_Side.super_call_is_virtual`;
    the PEG is that side's, in its own names)."""
    if n.op != "invoke.special" or peg.is_static or len(n.children) < 2 or not isinstance(n.attr, MethodRef):
        return False
    receiver = peg.nodes[n.children[1]]
    return receiver.op == "param" and receiver.attr == 0 and side.super_call_is_virtual(peg.class_name, n.attr)


class Program:
    """The input's own methods on both sides, for deciding which calls may be read as one."""

    def __init__(self, pairs: list[MethodPair], orig_classes: dict[str, ClassFile], orig_h: ClassHierarchy,
                 opt_classes: dict[str, ClassFile], opt_h: ClassHierarchy, class_map: dict[str, str],
                 members: Members | None = None) -> None:
        self.class_map = dict(class_map)
        self.members = dict(members or {})
        inverse = {new: old for old, new in sorted(class_map.items())}
        inverse_members = {(rename_class(c, class_map), new): old for (c, old), new in sorted(self.members.items())}
        self.orig = _Side(orig_classes, orig_h, {}, {})
        self.opt = _Side(opt_classes, opt_h, inverse, inverse_members)
        self.keys = {p.key for p in pairs}
        # a method -> (the method, its invokes): each method's code is decoded once per run, though the proof
        # order, each byte-identical pair's check (more than once) and each view's callees all ask for its calls;
        # keyed by identity (the method is held in the value, so the id is not reused while the entry lives)
        self._invokes: dict[int, tuple[MethodInfo, list[tuple[int, MethodRef]]]] = {}
        self._targets: dict[tuple[MethodRef, bool], frozenset[Key]] = {}
        self._sites: dict[bytes, list[tuple[int, int]]] = {}  # a method's code -> its _call_sites

    def invokes(self, cf: ClassFile, m: MethodInfo) -> list[tuple[int, MethodRef]]:
        """:func:`_invokes` of ``m`` (of ``cf``), found once per method, and its code decoded once per distinct
        code (a byte-identical method of the other side reads the same sites in its own pool)."""
        hit = self._invokes.get(id(m))
        if hit is None or hit[0] is not m:
            hit = self._invokes[id(m)] = (m, _invokes(cf, m, self._sites))
        return hit[1]

    def targets(self, ref: MethodRef, virtual: bool) -> frozenset[Key]:
        """Pair keys a reference of ORIG (ORIG's names) may run on either side (its renamed self on OPT's);
        :data:`_NO_PAIR` among them for a method of the input without a partner. Computed once per reference:
        every view of the run asks again for each call of each method it reads."""
        hit = self._targets.get((ref, virtual))
        if hit is not None:
            return hit
        renamed = self.rename_ref(ref)
        out = self.orig.targets(ref.owner, ref.name, ref.descriptor, virtual)
        out = out | self.opt.targets(renamed.owner, renamed.name, renamed.descriptor, virtual)
        hit = self._targets[(ref, virtual)] = frozenset(k if k in self.keys else _NO_PAIR for k in out)
        return hit

    def rename_ref(self, ref: MethodRef) -> MethodRef:
        return replace(ref, owner=rename_class(ref.owner, self.class_map),
                       name=self.members.get((ref.owner, ref.name), ref.name),
                       descriptor=rename_descriptor(ref.descriptor, self.class_map))

    def callees(self, pair: MethodPair) -> set[Key]:
        """Pair keys the pair's two methods may call directly (invoke instructions; ORIG's names)."""
        out: set[Key] = set()
        for cf, m, side in ((pair.orig_class, pair.orig, self.orig), (pair.opt_class, pair.opt, self.opt)):
            for opcode, ref in self.invokes(cf, m):
                virtual = opcode in (INVOKEVIRTUAL, INVOKEINTERFACE)
                out |= {k for k in side.targets(ref.owner, ref.name, ref.descriptor, virtual) if k in self.keys}
        return out


def _invokes(cf: ClassFile, m: MethodInfo,
             sites: dict[bytes, list[tuple[int, int]]] | None = None) -> list[tuple[int, MethodRef]]:
    """The method references ``m`` calls: its invoke instructions, and for an ``invokedynamic`` the method
    handles among its bootstrap arguments (a lambda's body), as virtual calls. ``sites``: :func:`_call_sites`
    by code bytes, filled here (their pool indexes are read in ``cf``'s own pool)."""
    attr = m.code_attribute()
    if attr is None:
        return []
    pool: ConstantPool = cf.pool
    code = read_code(attr.data, pool).code  # parsed per method: a malformed attribute is reported per side
    found = sites.get(code) if sites is not None else None
    if found is None:
        found = _call_sites(code)
        if sites is not None:
            sites[code] = found
    out: list[tuple[int, MethodRef]] = []
    for opcode, index in found:
        if opcode == INVOKEDYNAMIC:
            out.extend((INVOKEVIRTUAL, ref) for ref in bootstrap_handles(cf, pool.entry(index)[1]))
        else:
            r = pool.member_ref(index)
            out.append((opcode, MethodRef(r.owner, r.name, r.descriptor)))
    return out


def _call_sites(code: bytes) -> list[tuple[int, int]]:
    """The invoke instructions of a method's code, in code order: (opcode, pool index)."""
    return [(insn.opcode, insn.arg) for insn in decode(code)
            if insn.opcode in (INVOKEVIRTUAL, INVOKESPECIAL, INVOKESTATIC, INVOKEINTERFACE, INVOKEDYNAMIC)]


@dataclass(frozen=True, slots=True)
class Component:
    pairs: tuple[int, ...]  # indexes into the pairing, in pairing order
    recursive: bool  # more than one pair, or a pair that may call itself


def proof_order(pairs: list[MethodPair], program: Program) -> list[Component]:
    """The call graph's strongly connected components among the pairs, callees first (ties: the component
    whose first pair comes first in the pairing). A malformed method has no callees here (its proof says why)."""
    index = {p.key: i for i, p in enumerate(pairs)}
    g = nx.DiGraph()
    g.add_nodes_from(range(len(pairs)))
    for i, p in enumerate(pairs):
        try:
            callees = program.callees(p)
        except Exception:  # noqa: BLE001 - bad code is the proof's to report; it only loses its ordering here
            continue
        g.add_edges_from((i, index[k]) for k in sorted(callees))
    cond = nx.condensation(g)
    order = nx.lexicographical_topological_sort(cond.reverse(copy=False),
                                                key=lambda c: min(cond.nodes[c]["members"]))
    out = []
    for c in order:
        members = tuple(sorted(cond.nodes[c]["members"]))
        out.append(Component(members, len(members) > 1 or g.has_edge(members[0], members[0])))
    return out


class Proved:
    """A grow-only set of pair keys (those proved so far), whose :meth:`snapshot` is taken without copying it: a
    run makes a view per pair, and a copy per pair made validating a jar quadratic in its pairs (commons-math3
    against itself: 9,379 pairs)."""

    def __init__(self) -> None:
        self._order: dict[Key, int] = {}  # key -> when it was added (0, 1, ...)

    def add(self, key: Key) -> None:
        self._order.setdefault(key, len(self._order))

    def __contains__(self, key: object) -> bool:
        return key in self._order

    def __iter__(self) -> Iterator[Key]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def snapshot(self, extra: frozenset[Key] | set[Key] = frozenset()) -> Assumed:
        """The keys added so far (never those added later) and ``extra``."""
        return Assumed(self._order, len(self._order), frozenset(extra))


@dataclass(frozen=True, slots=True)
class Assumed:
    """The keys of a :class:`Proved` added before the snapshot (``order`` value below ``upto``) and ``extra``."""

    order: dict[Key, int]
    upto: int
    extra: frozenset[Key]

    def __contains__(self, key: object) -> bool:
        i = self.order.get(cast(Key, key))
        return (i is not None and i < self.upto) or key in self.extra


@dataclass(frozen=True, slots=True)
class CallView:
    """ORIG's PEG in OPT's terms, given the pairs that may be assumed equivalent (see the module docstring)."""

    program: Program
    # the assumed pair keys (a set, or a :class:`Proved` snapshot); None: every call of the input read as OPT's
    # (its callees taken as given)
    assumed: Container[Key] | None

    def __call__(self, peg: PEG) -> PEG:
        out = PEG(peg.name, rename_class(peg.class_name, self.program.class_map), peg.is_static,
                  peg.synchronized, root=peg.root, param_types=[self._type(t) for t in peg.param_types],
                  origins=dict(peg.origins), locals=dict(peg.locals))
        for n in peg.nodes:
            op = "invoke.virtual" if _exact_super_call(self.program.orig, peg, n) else n.op
            out.nodes.append(Node(op, self._attr(op, n.attr), n.children))
        for i, n in enumerate(out.nodes):
            if n.op != "theta":
                out._index.setdefault(n, i)
        out.sealed = peg.sealed
        return out

    def opt(self, peg: PEG) -> PEG:
        """OPT's PEG with its ``invokespecial`` calls that run what ``invokevirtual`` would read so, as ORIG's are
        (:func:`_exact_super_call`); the PEG itself when there is none."""
        special = [i for i, n in enumerate(peg.nodes) if _exact_super_call(self.program.opt, peg, n)]
        if not special:
            return peg
        out = PEG(peg.name, peg.class_name, peg.is_static, peg.synchronized, root=peg.root,
                  param_types=list(peg.param_types), origins=dict(peg.origins), locals=dict(peg.locals))
        out.nodes = [Node("invoke.virtual", n.attr, n.children) if i in special else n for i, n in enumerate(peg.nodes)]
        for i, n in enumerate(out.nodes):
            if n.op != "theta":
                out._index.setdefault(n, i)
        out.sealed = peg.sealed
        return out

    def unassumed(self, pair: MethodPair) -> dict[str, set[Key]]:
        """The methods of the input that ORIG's method calls (by its bytecode) and that are not assumed, as
        ``Class.name`` -> the pair keys the call may run that are not assumed: empty when byte-identical code
        behaves the same."""
        out: dict[str, set[Key]] = {}
        assumed = self.assumed
        if assumed is None:
            return out
        for op, ref in self.program.invokes(pair.orig_class, pair.orig):
            targets = self.program.targets(ref, op in (INVOKEVIRTUAL, INVOKEINTERFACE))
            keys = {k for k in targets if k not in assumed}
            if keys:
                out.setdefault(f"{ref.owner}.{ref.name}", set()).update(keys)
        return out

    def calls_assumed(self, pair: MethodPair) -> bool:
        return not self.unassumed(pair)

    def inputs(self) -> tuple[dict[str, ClassFile], dict[str, ClassFile]]:
        """ORIG's and OPT's classes by their own names: where a call of another class of that side's input finds
        its callee, to inline its body under the optimizer's conditions (validate/prove.py)."""
        return self.program.orig.classes, self.program.opt.classes

    def original(self, ref: MethodRef) -> MethodRef:
        """ORIG's own reference for a method reference of a viewed PEG (``--map`` undone, the :data:`UNPROVED`
        mark dropped): where ORIG's callee is found, to inline its body (validate/prove.py)."""
        back = self.program.opt.to_orig
        name = ref.name[:-len(UNPROVED)] if ref.name.endswith(UNPROVED) else ref.name
        return MethodRef(rename_class(ref.owner, back), name, rename_descriptor(ref.descriptor, back))

    def _assumes(self, ref: MethodRef, virtual: bool) -> bool:
        assumed = self.assumed
        return assumed is None or all(k in assumed for k in self.program.targets(ref, virtual))

    def _attr(self, op: str, attr: Hashable) -> Hashable:
        cmap = self.program.class_map
        if op.startswith("invoke."):
            return self._method(cast(MethodRef, attr), virtual=op in ("invoke.virtual", "invoke.interface"))
        if op == "new":
            cls, ctor = cast("tuple[str, MethodRef]", attr)
            return rename_class(cls, cmap), self._method(ctor, virtual=False)
        if op == "invokedynamic":
            name, desc, boot = cast("tuple[str, str, Bootstrap]", attr)
            return name, rename_descriptor(desc, cmap), self._bootstrap(boot)
        if op in ("getfield", "putfield", "getstatic", "putstatic"):
            return self._field(cast(FieldRef, attr))
        if op in ("instanceof", "checkcast", "classinit", "newarray") and isinstance(attr, str):
            return rename_class(attr, cmap)
        if op == "const.a":
            return self._const(cast(Const, attr))
        return attr

    def _method(self, ref: MethodRef, virtual: bool) -> MethodRef:
        renamed = self.program.rename_ref(ref)
        if self._assumes(ref, virtual):
            return renamed
        return replace(renamed, name=renamed.name + UNPROVED)

    def field(self, ref: FieldRef) -> FieldRef:
        """ORIG's field reference in OPT's names (``--map``, member renames)."""
        return self._field(ref)

    def _field(self, ref: FieldRef) -> FieldRef:
        cmap = self.program.class_map
        return FieldRef(rename_class(ref.owner, cmap), self.program.members.get((ref.owner, ref.name), ref.name),
                        rename_descriptor(ref.descriptor, cmap))

    def _type(self, t):
        if isinstance(t, IRType) and t.cls:
            return replace(t, cls=rename_class(t.cls, self.program.class_map))
        return t

    def _const(self, c: Const) -> Const:
        cmap = self.program.class_map
        value = c.value  # its type follows c.kind (ir/nodes.ConstKind)
        if c.kind is ConstKind.CLASS:
            value = rename_class(cast(str, value), cmap)
        elif c.kind is ConstKind.METHOD_TYPE:
            value = rename_descriptor(cast(str, value), cmap)
        elif c.kind is ConstKind.METHOD_HANDLE:
            kind, ref = cast("tuple[int, MethodRef | FieldRef]", value)
            value = (kind, self._method(ref, virtual=True) if isinstance(ref, MethodRef) else self._field(ref))
        elif c.kind is ConstKind.DYNAMIC:
            d = cast(DynamicConst, value)
            value = DynamicConst(d.name, rename_descriptor(d.descriptor, cmap), self._bootstrap(d.bootstrap))
        return Const(self._type(c.type), value, c.kind)

    def _bootstrap(self, b: Bootstrap) -> Bootstrap:
        return Bootstrap(self._const(b.handle), tuple(self._const(a) for a in b.arguments))
