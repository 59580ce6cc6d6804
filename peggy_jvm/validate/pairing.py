"""Pairing: which class of OPT and which method of it stands for which of ORIG.

What this module owns
    :class:`Side` (one input read: its classes parsed, its raw class bytes by name, the class hierarchy that
    knows them plus the JDK), :func:`load_side`, :func:`parse_class_map` (``--map OLD=NEW``, dotted or internal
    names), :func:`split_map` (which items rename a member, ``Cls.old=Cls.new``: those naming a method or field
    of a class of ORIG rather than a class), :func:`rename_class` / :func:`rename_descriptor` (what the map does
    to one of ORIG's class references: :mod:`.modular` applies them, and the member renames, to every reference
    before the PEGs meet) and :func:`pair_methods` (the method pairs, the member renames in force, and what has
    no partner).
    * Synthetic members paired by what they are: a lambda body (``lambda$f$0`` by javac, ``lambda$0`` by ecj) is
      the method a call site binds, so the methods named by the method handles of the ``invokedynamic``
      sites of two paired methods, site by site in code order, are paired too (:func:`_site_renames`; then the
      lambdas' own sites, so nested lambdas pair as well); an enum's array of its constants (javac ``$VALUES``,
      ecj ``ENUM$VALUES``) is the one synthetic static field of the enum's array type (:func:`_enum_array_rename`).
    * A bridge one side declares and the other inherits (javac emits ``compareTo(Object)`` into a final nested
      subclass of a ``Comparable`` class, ``invokespecial`` of the superclass's ``compareTo(T)``; ecj emits none
      there, so the class inherits its superclass's bridge): the bridge is paired with the method the other
      side's class runs for that name and descriptor, found up its superclasses (:func:`_inherited_bridge`), and
      the pair says which class inherits it (``MethodPair.opt_receiver`` when ORIG declares the bridge,
      ``orig_receiver`` when OPT does). It is what each side runs on a receiver of that class, so proving the two
      equal on such a receiver is what a call that may reach the bridge needs; only methods flagged
      ``ACC_BRIDGE | ACC_SYNTHETIC`` are paired so (any other method one side lacks stays unpaired and blocks
      its callers).
    * Switch tables on enums (javac's ``$SwitchMap`` field of a synthetic class, ecj's ``$SWITCH_TABLE``
      method) pair with nothing: each side's are found by what their builders do (:mod:`.switchtables`) and
      carried by every pair (``MethodPair.orig_tables``, ``opt_tables``), so that the prover reads a ``switch``
      through one as a switch on which named constant the value is.

Inputs: two paths (a .class, a .jar or a directory each), the class map and the member renames. Outputs:
:class:`MethodPair` list plus the unpaired list. Errors: :class:`~peggy_jvm.archive.InputError` naming the file
(and entry) at fault.

Invariants
    * Classes pair by internal name after the map is applied to ORIG's names; methods by name + descriptor (with
      the map applied to ORIG's descriptors: ``Old make()`` pairs with ``New make()``); the one exception, a
      bridge the other side's class inherits, pairs with a method of that side's superclass and says which class
      inherits it: its key is the class the pair stands for (``MethodPair.key``), its name and descriptor.
    * A member rename (given or derived) is only which methods are compared: a wrong one is a pair that is not
      proved (the lambda with another body), never an assumption. A derived one is taken only when both names are
      free (the ORIG name absent from OPT's class, the OPT name absent from ORIG's), both methods synthetic, of
      the same descriptor (after the map) and unpaired otherwise, and the two sites agree in name and descriptor.
    * A method with no code on both sides (abstract, native) is no pair and no verdict: it is counted as skipped.
      Code on one side only is a pair the prover will answer ``unknown``.
    * Order is deterministic: classes by name, methods in ORIG's declaration order.
    * A run in which nothing pairs (a wrong ``--map``, a package that differs from the directory, unrelated
      inputs) is bad input, not a vacuous success: :func:`nothing_paired` says so, naming the unpaired classes.
      Only inputs whose methods are all without code (interfaces) may pair nothing and pass.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..archive import InputError, read_input
from ..classfile.attributes import BootstrapMethods
from ..classfile.bytecode import decode
from ..classfile.constpool import Tag
from ..classfile.errors import ClassFileError
from ..classfile.hierarchy import ClassHierarchy
from ..classfile.model import Access, ClassFile, MethodInfo
from ..classfile.opcodes import INVOKEDYNAMIC
from ..classfile.reader import read_class, read_code
from ..ir.nodes import MethodRef
from .switchtables import SwitchTable, TableRef, find_tables

#: (ORIG class, ORIG member name) -> OPT member name: methods and fields renamed (``--map Cls.old=Cls.new``)
Members = dict[tuple[str, str], str]


@dataclass(slots=True)
class Side:
    path: Path
    classes: dict[str, ClassFile]  # internal name (as the class file says) -> parsed class
    raw: dict[str, bytes]  # internal name -> class bytes
    hierarchy: ClassHierarchy


@dataclass(slots=True)
class MethodPair:
    orig_class: ClassFile
    opt_class: ClassFile
    orig: MethodInfo
    opt: MethodInfo
    #: OPT's class whose instances run ``opt``, inherited from ``opt_class`` (a bridge ORIG declares and OPT's
    #: class inherits); None: ``opt_class`` itself declares it
    opt_receiver: ClassFile | None = None
    #: the same for ORIG (a bridge OPT declares and ORIG's class inherits from ``orig_class``)
    orig_receiver: ClassFile | None = None
    #: each side's switch tables on enums (javac's switch-map fields, ecj's table methods; :mod:`.switchtables`),
    #: shared by all the pairs of a run: the prover reads ``switch (table[i])`` through them
    orig_tables: dict[TableRef, SwitchTable] = field(default_factory=dict)
    opt_tables: dict[TableRef, SwitchTable] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.orig_receiver or self.orig_class).name, self.orig.name, self.orig.descriptor

    @property
    def inherited(self) -> bool:
        """One side's method is inherited from another class than the one the pair stands for."""
        return self.opt_receiver is not None or self.orig_receiver is not None


@dataclass(slots=True)
class Pairing:
    pairs: list[MethodPair] = field(default_factory=list)
    unpaired: list[str] = field(default_factory=list)
    skipped: int = 0
    members: Members = field(default_factory=dict)  # the renames given and those derived from call sites


def internal_name(name: str) -> str:
    """``a.b.C`` or ``a/b/C`` -> ``a/b/C`` (DESIGN section 8: both forms are accepted)."""
    return name.strip().replace(".", "/")


def parse_class_map(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``OLD=NEW`` items -> {old internal name: new internal name}; ValueError on a malformed item."""
    out: dict[str, str] = {}
    for item in items:
        old, eq, new = item.partition("=")
        if not eq or not old.strip() or not new.strip():
            raise ValueError(f"--map {item!r}: expected OLDCLASS=NEWCLASS")
        out[internal_name(old)] = internal_name(new)
    return out


def split_map(class_map: dict[str, str], orig: dict[str, ClassFile]) -> tuple[dict[str, str], Members]:
    """``--map`` items as class renames and member renames. ``a.b.C.m=a.b.C.n`` reads like a class rename;
    it is a member rename when ``a/b/C/m`` is no class of ORIG but ``a/b/C`` is one with a method or field
    ``m``. ValueError when a member rename moves the member to a class the map does not give its class."""
    classes: dict[str, str] = {}
    members: Members = {}
    for old, new in class_map.items():
        owner, _, name = old.rpartition("/")
        cf = orig.get(owner)
        if old in orig or cf is None or name not in {m.name for m in cf.methods} | {f.name for f in cf.fields}:
            classes[old] = new
            continue
        new_owner, _, new_name = new.rpartition("/")
        members[owner, name] = new_name
        if new_owner != class_map.get(owner, owner) or not new_name:
            raise ValueError(f"--map {old.replace('/', '.')}={new.replace('/', '.')}: a member keeps its class "
                             f"(expected {class_map.get(owner, owner).replace('/', '.')}.NEWNAME)")
    for owner in sorted({c for c, _ in members}):
        # two members of ORIG made one would read two places (or methods) as the same
        cf = orig[owner]
        fields = [members.get((owner, f.name), f.name) for f in cf.fields]
        methods = [(members.get((owner, m.name), m.name), m.descriptor) for m in cf.methods]
        if len(set(fields)) < len(fields) or len(set(methods)) < len(methods):
            raise ValueError(f"--map: the member renames of {owner.replace('/', '.')} give two of its members "
                             "one name")
    return classes, members


def rename_class(name: str, class_map: dict[str, str]) -> str:
    """A class reference of ORIG (an internal name, or an array descriptor as ``anewarray``/``checkcast`` hold
    it) in OPT's names."""
    if name.startswith("["):
        return rename_descriptor(name, class_map)
    return class_map.get(name, name)


_CLASS_IN_DESCRIPTOR = re.compile(r"L([^;]+);")


def rename_descriptor(desc: str, class_map: dict[str, str]) -> str:
    """A field or method descriptor of ORIG with every class ``--map`` renames in OPT's names."""
    if not class_map or "L" not in desc:
        return desc
    return _CLASS_IN_DESCRIPTOR.sub(lambda m: f"L{class_map.get(m.group(1), m.group(1))};", desc)


def load_side(path: Path) -> Side:
    """Read and parse every class of one input; a malformed class is an InputError naming the file."""
    inp = read_input(path)
    classes: dict[str, ClassFile] = {}
    raw: dict[str, bytes] = {}
    for entry in inp.entries:
        if not entry.is_class:
            continue
        where = str(path) if entry.name == path.name and not path.is_dir() else f"{path}:{entry.name}"
        try:
            cf = read_class(entry.data)
        except ClassFileError as e:
            raise InputError(where, str(e)) from None
        if entry.name.startswith("META-INF/versions/") and cf.name in classes:
            continue  # the base version of a multi-release jar is what a plain class loader sees
        classes[cf.name] = cf
        raw[cf.name] = entry.data
    hierarchy = ClassHierarchy()
    hierarchy.add_lazy_classes(raw)  # keyed by the names the classes declare
    return Side(path, classes, raw, hierarchy)


def pair_methods(orig: Side, opt: Side, class_map: dict[str, str], members: Members | None = None) -> Pairing:
    members = dict(members or {})
    for old_name in sorted(orig.classes):
        ncf = opt.classes.get(class_map.get(old_name, old_name))
        if ncf is not None:
            members.update(_site_renames(orig.classes[old_name], ncf, class_map, members))
            members.update(_enum_array_rename(orig.classes[old_name], ncf, class_map, members))
    result = Pairing(members=members)
    tables = find_tables(orig.classes, orig.hierarchy), find_tables(opt.classes, opt.hierarchy)
    targets: set[str] = set()
    for old_name in sorted(orig.classes):
        new_name = class_map.get(old_name, old_name)
        ocf = orig.classes[old_name]
        ncf = opt.classes.get(new_name)
        if ncf is None:
            result.unpaired.append(f"only in ORIG: class {old_name}")
            continue
        targets.add(new_name)
        # fields are not validated, but a field that appeared or went away is worth a line (methods that use it
        # differ as pairs anyway)
        of = {(members.get((old_name, f.name), f.name), rename_descriptor(f.descriptor, class_map)): f
              for f in ocf.fields}
        nf = {(f.name, f.descriptor) for f in ncf.fields}
        result.unpaired.extend(f"only in ORIG: field {old_name}.{of[k].name}:{of[k].descriptor}"
                               for k in sorted(of.keys() - nf))
        result.unpaired.extend(f"only in OPT: field {new_name}.{n}:{d}" for n, d in sorted(nf - of.keys()))
        opt_methods = {(m.name, m.descriptor): m for m in ncf.methods}
        seen: set[tuple[str, str]] = set()
        for m in ocf.methods:
            # OLD's own type is NEW's there
            key = (members.get((old_name, m.name), m.name), rename_descriptor(m.descriptor, class_map))
            seen.add(key)
            n = opt_methods.get(key)
            inherited = None if n is not None else _inherited_bridge(
                m, ncf, opt.classes, _same_key(key))
            if inherited is not None:
                result.pairs.append(MethodPair(ocf, inherited[0], m, inherited[1], opt_receiver=ncf,
                                               orig_tables=tables[0], opt_tables=tables[1]))
                continue
            if n is None:
                result.unpaired.append(f"only in ORIG: method {old_name}.{m.name}{m.descriptor}")
                continue
            if m.code_attribute() is None and n.code_attribute() is None:
                result.skipped += 1
                continue
            result.pairs.append(MethodPair(ocf, ncf, m, n, orig_tables=tables[0], opt_tables=tables[1]))
        for key, n in opt_methods.items():
            if key in seen:
                continue
            inherited = _inherited_bridge(n, ocf, orig.classes, _renamed_key(key, members, class_map))
            if inherited is not None:
                result.pairs.append(MethodPair(inherited[0], ncf, inherited[1], n, orig_receiver=ocf,
                                               orig_tables=tables[0], opt_tables=tables[1]))
            else:
                result.unpaired.append(f"only in OPT: method {new_name}.{key[0]}{key[1]}")
    for new_name in sorted(opt.classes):
        if new_name not in targets:
            result.unpaired.append(f"only in OPT: class {new_name}")
    return result


BRIDGE = Access.VOLATILE | Access.SYNTHETIC  # ACC_BRIDGE shares ACC_VOLATILE's bit (JVMS 4.6)
#: the flags a bridge and the method it is paired with must agree on (how it is found by callers, and dispatched)
_DISPATCH = Access.PUBLIC | Access.PROTECTED | Access.PRIVATE | Access.STATIC


def _same_key(key: tuple[str, str]) -> Callable[[ClassFile, MethodInfo], bool]:
    """A counterpart test for :func:`_inherited_bridge`: the method's own name and descriptor are ``key``."""
    return lambda _c, x: (x.name, x.descriptor) == key


def _renamed_key(key: tuple[str, str], members: Members,
                 class_map: dict[str, str]) -> Callable[[ClassFile, MethodInfo], bool]:
    """A counterpart test for :func:`_inherited_bridge`: the method's name and descriptor as renamed by the map
    are ``key``."""
    return lambda c, x: (members.get((c.name, x.name), x.name), rename_descriptor(x.descriptor, class_map)) == key


def _inherited_bridge(m: MethodInfo, cls: ClassFile, classes: dict[str, ClassFile],
                      counterpart: Callable[[ClassFile, MethodInfo], bool]) -> tuple[ClassFile, MethodInfo] | None:
    """For one side's bridge ``m`` that the other side's ``cls`` does not declare: the class and method a
    receiver of ``cls`` runs instead, the first declaration up ``cls``'s superclasses (all of them in the input:
    ``classes``, that side's) that is ``m``'s ``counterpart`` (the same name and descriptor, in the pairing's
    names); None when ``m`` is no instance bridge with code or that method is not found so (a class outside the
    input, an interface's default method) or is not dispatched alike (other access or ``static``) or has no
    code."""
    if m.access & BRIDGE != BRIDGE or m.is_static or m.code_attribute() is None:
        return None
    name = cls.super_name
    while name is not None and name in classes:
        cf = classes[name]
        found = next((x for x in cf.methods if counterpart(cf, x)), None)
        if found is not None:
            if found.access & _DISPATCH != m.access & _DISPATCH or found.code_attribute() is None:
                return None
            return cf, found
        name = cf.super_name
    return None


def bootstrap_handles(cf: ClassFile, k: int) -> list[MethodRef]:
    """The methods named by the method-handle arguments of bootstrap method ``k`` of ``cf`` (a lambda's body)."""
    attr = next((a for a in cf.attributes if a.name == BootstrapMethods.NAME), None)
    methods = BootstrapMethods.parse(attr.data).methods if attr is not None else []
    if k >= len(methods):
        return []
    out = []
    for arg in methods[k].bootstrap_arguments:
        e = cf.pool.entry(arg)
        if e[0] == 15:  # CONSTANT_MethodHandle: (tag, kind, reference)
            r = cf.pool.member_ref(e[2])
            if r.tag != 9:  # a field's handle runs no method
                out.append(MethodRef(r.owner, r.name, r.descriptor))
    return out


def _binding_sites(cf: ClassFile, m: MethodInfo) -> list[tuple[str, str, list[MethodRef]]]:
    """The ``invokedynamic`` sites of ``m`` that bind a method of its own class (lambdas, method references),
    in code order: (name, descriptor, the handles). A string concatenation binds none, so one compiler's
    ``makeConcatWithConstants`` sites do not shift the others."""
    attr = m.code_attribute()
    if attr is None:
        return []
    out = []
    for insn in decode(read_code(attr.data, cf.pool).code):
        if insn.opcode == INVOKEDYNAMIC:
            _, k, nat = cf.pool.entry(insn.arg)
            handles = bootstrap_handles(cf, k)
            if any(h.owner == cf.name for h in handles):
                name, desc = cf.pool.name_and_type(nat)
                out.append((name, desc, handles))
    return out


def _has_indy(cf: ClassFile) -> bool:
    return any(e[0] == Tag.INVOKE_DYNAMIC for _, e in cf.pool)


def _site_renames(ocf: ClassFile, ncf: ClassFile, class_map: dict[str, str], given: Members) -> Members:
    """Synthetic methods of ``ocf`` renamed in ``ncf``, found by the call sites binding them (module docstring):
    the sites of every pair of methods (first the pairs by name, then the lambdas this pairs, and so on).
    A class without an ``invokedynamic`` constant on either side has no site, so its code is not decoded."""
    if not (_has_indy(ocf) and _has_indy(ncf)):
        return {}  # no site on a side: the sites line up only when neither has any, and then derive nothing
    o_methods = {(m.name, m.descriptor): m for m in ocf.methods}
    n_methods = {(m.name, m.descriptor): m for m in ncf.methods}
    o_names, n_names = {m.name for m in ocf.methods}, {m.name for m in ncf.methods}
    found: Members = {}
    conflicts: set[tuple[str, str]] = set()

    def partner(m: MethodInfo) -> MethodInfo | None:
        name = found.get((ocf.name, m.name)) or given.get((ocf.name, m.name), m.name)
        return n_methods.get((name, rename_descriptor(m.descriptor, class_map)))

    todo = [m for m in ocf.methods if partner(m) is not None]
    done: set[tuple[str, str]] = set()
    while todo:
        m = todo.pop(0)
        n = partner(m)
        if n is None or (m.name, m.descriptor) in done:
            continue
        done.add((m.name, m.descriptor))
        try:
            o_sites, n_sites = _binding_sites(ocf, m), _binding_sites(ncf, n)
        except ClassFileError:
            continue  # malformed code: its pair's proof says so; nothing is derived from it
        if [(a, rename_descriptor(d, class_map)) for a, d, _ in o_sites] != [(a, d) for a, d, _ in n_sites]:
            continue  # the sites do not line up: nothing is derived from them
        for (_, _, o_handles), (_, _, n_handles) in zip(o_sites, n_sites):
            for oh, nh in zip(o_handles, n_handles):
                om, nm = o_methods.get((oh.name, oh.descriptor)), n_methods.get((nh.name, nh.descriptor))
                if (oh.owner != ocf.name or nh.owner != ncf.name or om is None or nm is None or oh.name == nh.name
                        or rename_descriptor(oh.descriptor, class_map) != nh.descriptor
                        or not om.access & nm.access & Access.SYNTHETIC
                        or oh.name in n_names or nh.name in o_names or (ocf.name, oh.name) in given):
                    continue
                key = (ocf.name, oh.name)
                if found.get(key, nh.name) != nh.name:
                    conflicts.add(key)
                found[key] = nh.name
                todo.append(om)
    for key in conflicts:
        del found[key]
    # two ORIG methods renamed to one OPT name: neither is kept
    taken: dict[str, list[tuple[str, str]]] = {}
    for key, new in found.items():
        taken.setdefault(new, []).append(key)
    return {k: v for k, v in found.items() if len(taken[v]) == 1}


def _enum_array_rename(ocf: ClassFile, ncf: ClassFile, class_map: dict[str, str], given: Members) -> Members:
    """An enum's array of its constants (javac ``$VALUES``, ecj ``ENUM$VALUES``): the one synthetic static field
    of the enum's own array type on each side, both names free on the other side."""
    if not ocf.access & ncf.access & Access.ENUM:
        return {}

    def arrays(cf: ClassFile, other: ClassFile) -> list[str]:
        names = {f.name for f in other.fields}
        return [f.name for f in cf.fields if f.access & Access.SYNTHETIC and f.access & Access.STATIC
                and f.descriptor == f"[L{cf.name};" and f.name not in names]

    o, n = arrays(ocf, ncf), arrays(ncf, ocf)
    if len(o) != 1 or len(n) != 1 or (ocf.name, o[0]) in given or class_map.get(ocf.name, ocf.name) != ncf.name:
        return {}
    return {(ocf.name, o[0]): n[0]}


MAX_NAMED = 8  # unpaired classes named in the one-line error; the rest are counted


def nothing_paired(pairing: Pairing, orig_path: Path, opt_path: Path) -> InputError | None:
    """The error for a pairing with no method pair (None when something paired, or when every common method is
    without code and nothing is unpaired): exit 0 must mean every method was proved, never that none was
    looked at."""
    if pairing.pairs or (pairing.skipped and not pairing.unpaired):
        return None
    classes = [u.removeprefix("only in ").replace(": class ", " ") for u in pairing.unpaired if ": class " in u]
    what = classes or [u.removeprefix("only in ") for u in pairing.unpaired]
    shown = ", ".join(what[:MAX_NAMED]) + (f" and {len(what) - MAX_NAMED} more" if len(what) > MAX_NAMED else "")
    hint = "; check --map OLD=NEW and the package names" if classes else ""
    return InputError(str(opt_path), f"no method of {orig_path} paired with one here (0 pairs); unpaired: "
                                     f"{shown or 'nothing: no classes'}{hint}")
