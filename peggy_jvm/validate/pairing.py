"""Pairing: which class of OPT and which method of it stands for which of ORIG.

What this module owns
    :class:`Side` (one input read: its classes parsed, its raw class bytes by name, the class hierarchy that
    knows them plus the JDK), :func:`load_side`, :func:`parse_class_map` (``--map OLD=NEW``, dotted or internal
    names), :func:`rename_class` / :func:`rename_descriptor` (what the map does to one of ORIG's class
    references: :mod:`.modular` applies them to every reference before the PEGs meet) and :func:`pair_methods`
    (the method pairs, and what has no partner).

Inputs: two paths (a .class, a .jar or a directory each), the class map. Outputs: :class:`MethodPair` list plus
the unpaired list. Errors: :class:`~peggy_jvm.archive.InputError` naming the file (and entry) at fault.

Invariants
    * Classes pair by internal name after the map is applied to ORIG's names; methods by name + descriptor (with
      the map applied to ORIG's descriptors: ``Old make()`` pairs with ``New make()``).
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

from ..archive import InputError, read_input
from ..classfile.errors import ClassFileError
from ..classfile.hierarchy import ClassHierarchy
from ..classfile.model import ClassFile, MethodInfo
from ..classfile.reader import read_class


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

    @property
    def key(self) -> tuple[str, str, str]:
        return self.orig_class.name, self.orig.name, self.orig.descriptor


@dataclass(slots=True)
class Pairing:
    pairs: list[MethodPair] = field(default_factory=list)
    unpaired: list[str] = field(default_factory=list)
    skipped: int = 0


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


def pair_methods(orig: Side, opt: Side, class_map: dict[str, str]) -> Pairing:
    result = Pairing()
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
        of = {(f.name, rename_descriptor(f.descriptor, class_map)): f.descriptor for f in ocf.fields}
        nf = {(f.name, f.descriptor) for f in ncf.fields}
        result.unpaired.extend(f"only in ORIG: field {old_name}.{n}:{of[n, d]}" for n, d in sorted(of.keys() - nf))
        result.unpaired.extend(f"only in OPT: field {new_name}.{n}:{d}" for n, d in sorted(nf - of.keys()))
        opt_methods = {(m.name, m.descriptor): m for m in ncf.methods}
        seen: set[tuple[str, str]] = set()
        for m in ocf.methods:
            key = (m.name, rename_descriptor(m.descriptor, class_map))  # OLD's own type is NEW's there
            seen.add(key)
            n = opt_methods.get(key)
            if n is None:
                result.unpaired.append(f"only in ORIG: method {old_name}.{m.name}{m.descriptor}")
                continue
            if m.code_attribute() is None and n.code_attribute() is None:
                result.skipped += 1
                continue
            result.pairs.append(MethodPair(ocf, ncf, m, n))
        for key, n in opt_methods.items():
            if key not in seen:
                result.unpaired.append(f"only in OPT: method {new_name}.{key[0]}{key[1]}")
    for new_name in sorted(opt.classes):
        if new_name not in targets:
            result.unpaired.append(f"only in OPT: class {new_name}")
    return result


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
