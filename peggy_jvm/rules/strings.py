"""Strings: built-in rules for ``String`` constants and ``StringBuilder`` / ``StringBuffer`` chains.

What this module owns
    * ``string-length-const`` (group ``java.lang.string``): ``"text".length()`` is the number of UTF-16 code
      units of the literal; a literal is never null, so the call cannot throw and leaves the heap as it was.
    * ``builder-append-returns-this``: ``append`` of a string builder returns its receiver (JDK specification of
      every ``append`` overload), so ``rho_value(append(s, b, x))`` is ``b``. Like the read-over-write axioms, it
      rewrites a value that depends on an effect which might throw: if the append throws, the method ends with
      that exception on the sigma chain and the value is never observed (docs/axioms.md, the model).
    * ``builder-init-append``: ``new B()`` followed at once by ``append(s)`` of a string ``s`` that is not null is
      the same outcome as ``new B(s)``: the same fresh builder holding the same characters, the same heap
      otherwise, neither can throw (but for running out of memory, which both can). The one difference is the
      builder's capacity (16 against ``s.length() + 16``), visible only through ``capacity()`` and ``trimToSize()``
      and the like. So the rule requires the builder to be *confined*: every use of the builder reference (and of
      what its ``append`` calls return, the same reference) is the receiver of ``append``, ``toString``,
      ``length`` or ``charAt`` of its own class, never an argument, a stored value, a returned value or a compared
      one. javac's string concatenation (Java 8 and older) and ProGuard's merging of the first ``append`` into the
      constructor are this pattern.

Inputs / outputs: each is a :class:`~peggy_jvm.egraph.runner.Rewrite` over the e-graph; listed by
:func:`~peggy_jvm.rules.builtin.builtin_rules`. Used by validation (the default rule set); ``java.lang`` groups
are not among the optimizer's safe groups.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..egraph.explain import Reason
from ..ir.nodes import Const, ConstKind, MethodRef
from .conditions import nonnull

if TYPE_CHECKING:
    from ..egraph.egraph import EGraph

__all__ = ["BuilderAppendReturnsThis", "BuilderInitAppend", "StringLengthConst"]

OWNERS = frozenset({"java/lang/StringBuilder", "java/lang/StringBuffer"})
# methods of a builder that cannot tell its capacity apart and do not let the reference escape
_CONFINED_USES = frozenset({"append", "toString", "length", "charAt"})


class StringLengthConst:
    name = "string-length-const"
    group = "java.lang.string"
    source = "builtin"
    depth = None
    cache_matches = True

    def search(self, eg: EGraph, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("invoke.virtual"):
            for n in eg._classes[cid].nodes:
                m = n[1]
                if n[0] != "invoke.virtual" or not isinstance(m, MethodRef) or m.owner != "java/lang/String" \
                        or m.name != "length" or m.descriptor != "()I":
                    continue
                text = _literal(eg, n[2][1])
                if text is not None:
                    out.append((cid, eg.find(n[2][0]), sum(2 if ord(ch) > 0xFFFF else 1 for ch in text)))
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EGraph, match: tuple) -> bool:
        cid, sigma, length = match
        why = Reason(self.name, ("?s", "length"), (sigma, length))
        changed = eg.union(eg.add("rho_value", None, (cid,)), eg.add("const.i", length), why)
        return eg.union(eg.add("rho_sigma", None, (cid,)), sigma, why) or changed


def _literal(eg: EGraph, cid: int) -> str | None:
    """The text of the string literal in class ``cid``, if it has one."""
    for n in eg._classes[eg.find(cid)].nodes:
        if n[0] == "const.a" and isinstance(n[1], Const) and n[1].kind is ConstKind.VALUE \
                and isinstance(n[1].value, str):
            return n[1].value
    return None


def _is_builder_method(attr: object, name: str | None = None) -> bool:
    return isinstance(attr, MethodRef) and attr.owner in OWNERS and (name is None or attr.name == name)


class BuilderAppendReturnsThis:
    name = "builder-append-returns-this"
    group = "java.lang.builder"
    source = "builtin"
    depth = None
    cache_matches = True

    def search(self, eg: EGraph, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("rho_value"):
            for n in eg._classes[cid].nodes:
                if n[0] != "rho_value":
                    continue
                for e in eg._classes[eg.find(n[2][0])].nodes:
                    if e[0] == "invoke.virtual" and _is_builder_method(e[1], "append") \
                            and e[1].descriptor.endswith(f")L{e[1].owner};"):
                        out.append((cid, e[2][1]))
                if len(out) >= limit:
                    return out, False
        return out, False

    def apply(self, eg: EGraph, match: tuple) -> bool:
        cid, receiver = match
        return eg.union(cid, receiver, Reason(self.name, ("?b",), (receiver,)))


class BuilderInitAppend:
    name = "builder-init-append"
    group = "java.lang.builder"
    source = "builtin"
    depth = None
    cache_matches = False  # confinement can be lost when classes merge: checked at every search

    def search(self, eg: EGraph, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("invoke.virtual"):
            for n in eg._classes[cid].nodes:
                if n[0] != "invoke.virtual" or not _is_builder_method(n[1], "append") \
                        or n[1].descriptor != f"(Ljava/lang/String;)L{n[1].owner};":
                    continue
                owner = n[1].owner
                sigma, builder, text = (eg.find(c) for c in n[2])
                if not nonnull(eg, text):
                    continue
                start = _empty_new(eg, sigma, builder, owner)
                if start is None or not _confined(eg, builder, owner):
                    continue
                out.append((cid, start, text, owner))
                if len(out) >= limit:
                    return out, False
        return out, False

    def apply(self, eg: EGraph, match: tuple) -> bool:
        cid, sigma, text, owner = match
        init = eg.add("new", (owner, MethodRef(owner, "<init>", "(Ljava/lang/String;)V")), (sigma, text))
        return eg.union(cid, init, Reason(self.name, ("?s", "?text"), (sigma, text)))


def _empty_new(eg: EGraph, sigma: int, builder: int, owner: str) -> int | None:
    """The sigma before ``new owner()`` when ``sigma``/``builder`` are the heap after it and its reference."""
    for p in eg._classes[sigma].nodes:
        if p[0] != "rho_sigma":
            continue
        outcome = eg.find(p[2][0])
        if eg.lookup("rho_value", None, (outcome,)) != builder:
            continue
        for e in eg._classes[outcome].nodes:
            if e[0] == "new" and e[1][0] == owner and e[1][1].descriptor == "()V" and len(e[2]) == 1:
                return eg.find(e[2][0])
    return None


def _confined(eg: EGraph, builder: int, owner: str, limit: int = 256) -> bool:
    """Every use of the builder reference, followed through what ``append`` returns, is the receiver of a
    capacity-blind method of its own class (see the module docstring)."""
    seen = {builder}
    work = [builder]
    while work:
        ref = work.pop()
        for pid in eg._classes[ref].parents:
            node = eg._cur[pid]
            if node is None:
                return False
            kids = [eg.find(c) for c in node[2]]
            if node[0] != "invoke.virtual" or not _is_builder_method(node[1]) or node[1].owner != owner \
                    or node[1].name not in _CONFINED_USES or kids[1] != ref or ref in kids[2:] or kids[0] == ref:
                return False
            if node[1].name == "append":
                returned = eg.lookup("rho_value", None, (eg.find(pid),))
                if returned is not None and returned not in seen:
                    if len(seen) >= limit:
                        return False
                    seen.add(returned)
                    work.append(returned)
    return True

