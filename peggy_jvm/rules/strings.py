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

    * ``concat-indy-fresh`` and ``builder-tostring-fresh`` (strict): javac's (release 9+) ``invokedynamic`` of
      ``StringConcatFactory.makeConcatWithConstants`` and a confined builder chain ending in ``toString()`` (javac
      8, ecj) both make a NEW String (JLS 15.18.1) of their operands rendered in order: both are read as the one
      model effect ``FreshString.of(heap before, parts...)`` (:data:`FRESH_OWNER`, parts typed and normalized as
      in the assumption's model below, so ``char`` stays a character and a String part renders null as
      ``"null"``), its value the call's value, its heap the call's heap. An indy argument of another reference
      type is left alone (javac 9-16 ran its ``toString()`` late: JDK-8273914; javac 17 passes
      ``String.valueOf(o)``). ecj's ``new StringBuilder(String.valueOf(x))`` starts the chain with ``x``'s part;
      effects between two appends (operands computed by calls or reads) are replayed without the builder
      (:func:`_replay`), also when an operand is computed in a branch between two appends (each arm's effects
      replayed, joined by the same condition), and ``append(Object)`` is ``append(String.valueOf(o))``. A chain
      inside a loop is fine: the check that nothing uses the builder after its ``toString()`` stops at the
      builder's own ``new`` in the next iteration (:func:`_dead_after`).
    * ``concat-nothrow``: those operations (and ``String.valueOf`` of such a part, and ``classinit`` of a boot
      class) do not throw, running out of memory aside: ``threw`` of each is false (:class:`ConcatNoThrow`), so
      a concatenation inside a ``try`` block has no branch to the handlers from each builder operation.
    * ``string-classinit-noop``: ``classinit`` of ``String``/``StringBuilder`` changes nothing: both are
      initialized while the JVM boots (:class:`StringClassInit`); javac puts one between ``String.valueOf(x)``
      and ``new StringBuilder(...)``.

The assumption ``strings-by-value`` (group ``assume.strings-by-value``; never in the default rule set)
    ``peggy-jvm validate --assume strings-by-value`` adds these rules, made per method pair by
    :func:`assumption_rules`. Under the assumption, a ``String`` made by concatenation (a string builder's final
    ``toString()``, ``String.concat``, ``String.valueOf`` of a primitive or of a String) is compared by its
    characters only: nobody observes whether it is a fresh object or an existing one (``==``,
    ``identityHashCode``, ``synchronized`` on it). That is exactly what ``a + b`` -> ``a.concat(b)`` changes:
    ``concat`` returns its receiver when the argument is empty, the builder always makes a new String. Nothing
    else is assumed: exceptions, other objects and the heap stay exact.

    The value of such a String is modelled by ONE pure, never throwing operation, ``StringValue.of(parts...)``
    (an ``invoke.static`` of the pseudo-class :data:`VALUE_OWNER` on ``sigma0``, which no JVM class has): the
    concatenation of its parts, each rendered by its descriptor type exactly as ``StringBuilder.append`` and
    ``String.valueOf`` render it (``I`` int, ``J`` long, ``C`` char, ``Z`` boolean, ``F`` float, ``D`` double,
    ``Ljava/lang/String;`` a String or ``"null"``). Its normal form (:func:`_normal`) splices String parts that are
    themselves such values, renders constant parts as text (int, long, char, boolean, string literals, null),
    joins adjacent texts and drops empty ones; an all-text value is the string literal, and a single String part
    known to be non-null is that String. The rules, each sound by the JDK's specification of the call and the
    assumption:

    * ``string-valueof-value``: ``String.valueOf(x)`` for ``x`` of type int, long, char, boolean, float or
      double, and ``String.valueOf((Object) s)`` for an ``s`` known to be a String or null (then
      ``s.toString()`` is ``s`` itself, with no effect), is the value of ``[x]``; the call changes nothing else
      and cannot throw (but for running out of memory). ``valueOf(char[])`` (reads an array, throws on null) and
      ``valueOf(Object)`` of other objects (runs their ``toString()``, which may have effects or return null)
      are not modelled.
    * ``string-concat-value``: ``a.concat(b)`` with ``a`` and ``b`` known non-null is the value of ``[a, b]``;
      with either possibly null it throws NullPointerException where ``a + b`` would not, so it is left alone.
    * ``builder-tostring-value``: ``new B()`` (or ``new B(s)`` with ``s`` non-null) followed by ``append``s of
      the types above (``append(Object)``/``append(CharSequence)`` only of an argument known to be a String or
      null), each on the heap the previous one left, and ending in ``toString()`` is the value of the appended
      parts in order, and the heap after the ``toString()`` is the heap before the ``new``. None of these calls
      can throw; the builder is confined (its reference is only ever the receiver of its own ``append``,
      ``toString``, ``length``, ``charAt``) and nothing reached from the heap after this ``toString()`` uses it
      (:func:`_dead_after`), so it is garbage from there on. (Another ``toString()`` of the same ``new`` in the
      other arm of a branch is fine: a PEG shares one ``new`` between arms.)
    * ``string-value-normal``: a ``StringValue.of`` value is the value of its parts' normal form (parts' classes
      gain literals and values while saturation goes on).

    Where the method itself looks at the identity of such a String (``==``/``!=`` on it, ``synchronized``,
    ``System.identityHashCode``, through phis and loops) the assumption is visibly false, and the first three
    rules leave that call alone (:func:`_identity_observed`).

    Which String values are "known to be a String or null" (:func:`_string_typed`): string literals and
    ``null``, the values above, results of calls and fields declared ``java/lang/String`` (the verifier holds
    both to their declared types), ``checkcast java/lang/String``, parameters declared String (the pair's
    descriptor, passed in by the driver), elements of arrays declared ``String[]`` (call results, fields, casts),
    and phis, loop values (thetas, by induction) and evals of those.

The Java-library facts these rules rest on (the identities of ``String.length``/``concat``/``valueOf`` and
``System.identityHashCode``, which builder methods return their receiver or cannot tell its capacity, which
classes the JVM initializes while it boots) are read from :mod:`peggy_jvm.jdk.facts`, where the interpreter's
models of the same methods are registered too.

Inputs / outputs: each is a :class:`~peggy_jvm.egraph.runner.Rewrite` over the e-graph; listed by
:func:`~peggy_jvm.rules.builtin.builtin_rules` (the strict ones) or :func:`assumption_rules`. Used by validation
(the default rule set); ``java.lang`` and ``assume`` groups are not among the optimizer's safe groups.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..choices import ASSUMPTIONS, CLOSED_WORLD, STRINGS_BY_VALUE  # the CLI offers them without importing the rules
from ..classfile.descriptors import parse_method_descriptor
from ..egraph.explain import Reason
from ..ir.nodes import Bootstrap, Const, ConstKind, FieldRef, IRType, Kind, MethodRef
from ..peg.ops import OPS, Role
from ..jdk.facts import STRING as STRING_CLASS  # the class name; STRING below is its descriptor
from ..jdk.facts import (BOOT_CLASSES, BUILDER_CAPACITY_BLIND, CONCAT_FACTORY, IDENTITY_HASH_CODE, STRING_CONCAT,
                         STRING_LENGTH, STRING_VALUE_OF, is_builder_method, returns_receiver, same_method)
from .conditions import nonnull

if TYPE_CHECKING:
    from ..epeg import EPeg

__all__ = ["BuilderAppendReturnsThis", "BuilderInitAppend", "StringLengthConst", "ASSUMPTIONS", "STRINGS_BY_VALUE",
           "CLOSED_WORLD",
           "VALUE_OWNER", "assumption_rules", "StringValueOf", "StringConcatValue", "BuilderToStringValue",
           "StringValueNormal", "StringClassInit", "render_constant", "build_value", "FRESH_OWNER", "build_fresh",
           "BuilderToStringFresh", "ConcatIndyFresh", "ConcatNoThrow"]


class StringLengthConst:
    name = "string-length-const"
    group = "java.lang.string"
    source = "builtin"
    depth = None
    cache_matches = True

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("invoke.virtual"):
            for n in eg._classes[cid].nodes:
                if n[0] != "invoke.virtual" or not same_method(n[1], STRING_LENGTH):
                    continue
                text = _literal(eg, n[2][1])
                if text is not None:
                    out.append((cid, eg.find(n[2][0]), sum(2 if ord(ch) > 0xFFFF else 1 for ch in text)))
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        cid, sigma, length = match
        why = Reason(self.name, ("?s", "length"), (sigma, length))
        changed = eg.union(eg.add("rho_value", None, (cid,)), eg.add("const.i", length), why)
        return eg.union(eg.add("rho_sigma", None, (cid,)), sigma, why) or changed


def _literal(eg: EPeg, cid: int) -> str | None:
    """The text of the string literal in class ``cid``, if it has one."""
    for n in eg._classes[eg.find(cid)].nodes:
        if n[0] == "const.a" and isinstance(n[1], Const) and n[1].kind is ConstKind.VALUE \
                and isinstance(n[1].value, str):
            return n[1].value
    return None


class BuilderAppendReturnsThis:
    name = "builder-append-returns-this"
    group = "java.lang.builder"
    source = "builtin"
    depth = None
    cache_matches = True

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("rho_value"):
            for n in eg._classes[cid].nodes:
                if n[0] != "rho_value":
                    continue
                for e in eg._classes[eg.find(n[2][0])].nodes:
                    if e[0] == "invoke.virtual" and returns_receiver(e[1]):
                        out.append((cid, e[2][1]))
                if len(out) >= limit:
                    return out, False
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        cid, receiver = match
        return eg.union(cid, receiver, Reason(self.name, ("?b",), (receiver,)))


class BuilderInitAppend:
    name = "builder-init-append"
    group = "java.lang.builder"
    source = "builtin"
    depth = None
    cache_matches = False  # confinement can be lost when classes merge: checked at every search

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("invoke.virtual"):
            for n in eg._classes[cid].nodes:
                if n[0] != "invoke.virtual" or not is_builder_method(n[1], "append") \
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

    def apply(self, eg: EPeg, match: tuple) -> bool:
        cid, sigma, text, owner = match
        init = eg.add("new", (owner, MethodRef(owner, "<init>", "(Ljava/lang/String;)V")), (sigma, text))
        return eg.union(cid, init, Reason(self.name, ("?s", "?text"), (sigma, text)))


def _empty_new(eg: EPeg, sigma: int, builder: int, owner: str) -> int | None:
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


def _confined(eg: EPeg, builder: int, owner: str, limit: int = 256) -> bool:
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
            if node[0] != "invoke.virtual" or not is_builder_method(node[1]) or node[1].owner != owner \
                    or node[1].name not in BUILDER_CAPACITY_BLIND or kids[1] != ref or ref in kids[2:] \
                    or kids[0] == ref:
                return False
            if node[1].name == "append":
                returned = eg.lookup("rho_value", None, (eg.find(pid),))
                if returned is not None and returned not in seen:
                    if len(seen) >= limit:
                        return False
                    seen.add(returned)
                    work.append(returned)
    return True


# -- the assumption strings-by-value (named in choices.py) ------------------------------------------------------
ASSUME_GROUP = "assume." + STRINGS_BY_VALUE
#: the pseudo-class of the model's concatenation: no JVM class has this name, so no real call is ever taken for it
VALUE_OWNER = "peggy/assume/StringValue"
STRING = "Ljava/lang/String;"
_STRING_TYPE = IRType(Kind.REF, STRING_CLASS)
_PRIMS = frozenset("IJCZFD")  # the parts rendered by the same code in append(x) and String.valueOf(x)
_MAX_PARTS = 64  # a longer concatenation is left alone (the normal form is rebuilt at every search)
_MAX_NEST = 16  # how deep String parts that are themselves values are spliced
_MAX_CHAIN = 256  # builder operations followed back from a toString()

Part = tuple[str, "int | str"]  # ("T", text) or (type letter or STRING, class id)


def _text(p: Part) -> str:
    """A "T" part's text (the kind, a string, cannot tell mypy which member of the union the second is)."""
    t = p[1]
    assert isinstance(t, str), p
    return t


def _class_id(p: Part) -> int:
    """The class id of a part that is not "T"."""
    c = p[1]
    assert isinstance(c, int), p
    return c


def assumption_rules(names: Sequence[str], param_types: Sequence[str] = ()) -> list:
    """Fresh rules for the named assumptions (KeyError for an unknown one). ``param_types`` are the field
    descriptors of the method pair's ``param`` nodes by index (the receiver's class first for an instance
    method): a parameter declared ``java/lang/String`` is a String or null."""
    out: list = []
    for name in names:
        if name not in ASSUMPTIONS:
            raise KeyError(f"no assumption named {name!r} (known: {', '.join(sorted(ASSUMPTIONS))})")
        if name == STRINGS_BY_VALUE:
            strings = frozenset(i for i, t in enumerate(param_types) if t == STRING)
            out += [StringValueOf(strings), StringConcatValue(strings), BuilderToStringValue(strings),
                    StringValueNormal()]
    return out


def render_constant(kind: str, key: tuple[str, object] | None) -> str | None:
    """The text ``append``/``valueOf`` make of a constant of descriptor type ``kind`` (None: not folded here;
    float and double are never folded: their shortest-repr rules are the JDK's to apply)."""
    if key is None:
        return None
    op, v = key
    if kind == "I" and op == "const.i":
        return str(v)
    if kind == "J" and op == "const.l":
        return str(v)
    if kind == "C" and op == "const.i" and isinstance(v, int) and 0 <= v <= 0xFFFF:
        return chr(v)  # literal texts are UTF-16 code units too (constpool keeps surrogates unpaired)
    if kind == "Z" and op == "const.i" and v in (0, 1):
        return "true" if v else "false"
    return None


def _is_value_of(node: tuple) -> bool:
    """``node`` is a call of one of the one-argument ``String.valueOf`` overloads."""
    return node[0] == "invoke.static" and isinstance(node[1], MethodRef) and node[1].owner == STRING_CLASS \
        and node[1].name == STRING_VALUE_OF and len(node[2]) == 2


def _string_literal(eg: EPeg, cid: int) -> str | None:
    """"null" for the null constant, the text of a string literal, else None (rendered as append renders them)."""
    for op, attr, _ch in eg.nodes(cid):
        if op == "const.a" and isinstance(attr, Const) and attr.kind is ConstKind.VALUE:
            if attr.value is None:
                return "null"
            if isinstance(attr.value, str):
                return attr.value
    return None


def _is_value_node(node: tuple) -> bool:
    return node[0] == "invoke.static" and isinstance(node[1], MethodRef) and node[1].owner == VALUE_OWNER


def _value_nodes(eg: EPeg, cid: int) -> list[tuple]:
    """The model's ``StringValue.of`` calls whose value class ``cid`` is."""
    out: list[tuple] = []
    for op, _a, ch in eg.nodes(cid):
        if op == "rho_value":
            out.extend(n for n in eg.nodes(ch[0]) if _is_value_node(n))
    return out


def _parts_of(node: tuple) -> list[Part]:
    kinds, _ret = parse_method_descriptor(node[1].descriptor)
    return list(zip(kinds, node[2][1:]))


def _nonnull_string(eg: EPeg, cid: int) -> bool:
    lit = _string_literal(eg, cid)
    return (lit is not None and not _is_null(eg, cid)) or nonnull(eg, cid) or bool(_value_nodes(eg, cid))


def _is_null(eg: EPeg, cid: int) -> bool:
    return any(op == "const.a" and isinstance(a, Const) and a.kind is ConstKind.VALUE and a.value is None
               for op, a, _c in eg.nodes(cid))


def _string_typed(eg: EPeg, cid: int, string_params: frozenset[int], busy: frozenset[int] = frozenset(),
                  assumed: frozenset[int] = frozenset()) -> bool:
    """Class ``cid`` is certainly a ``java.lang.String`` or null (see the module docstring for the evidence).
    Through ``phi`` (both arms), ``theta`` (by induction over the loop: the initial value, then the next one
    assuming the theta itself) and ``eval`` (some iteration's value of a sequence typed at every one); any
    other cycle proves nothing."""
    cid = eg.find(cid)
    if cid in assumed:
        return True
    if cid in busy or len(busy) >= _MAX_NEST:
        return False
    if _string_literal(eg, cid) is not None or _value_nodes(eg, cid):
        return True
    inner = busy | {cid}
    for op, attr, ch in eg.nodes(cid):
        if op == "param" and attr in string_params:
            return True
        if op == "phi" and all(_string_typed(eg, c, string_params, inner, assumed) for c in ch[1:]):
            return True
        if op == "theta" and _string_typed(eg, ch[0], string_params, inner, assumed) \
                and _string_typed(eg, ch[1], string_params, inner, assumed | {cid}):
            return True
        if op == "eval" and _string_typed(eg, ch[0], string_params, inner, frozenset()):
            return True  # a value of the sequence at some iteration (an induction hypothesis does not reach it)
        if op != "rho_value":
            continue
        for e in eg.nodes(ch[0]):
            if _declared_as(e, STRING):
                return True
            if e[0] == "aload" and len(e[2]) == 3 and _string_array(eg, e[2][1]):
                return True  # an element of a String[] (String is final: no other array class is one)
    return False


def _declared_as(effect: tuple, desc: str) -> bool:
    """``effect`` is a call, field read or cast whose result is declared of type ``desc`` (the verifier holds
    those to their declared types)."""
    op, a = effect[0], effect[1]
    if op.startswith("invoke.") and isinstance(a, MethodRef):
        return a.descriptor.endswith(")" + desc)
    if op in ("getfield", "getstatic") and isinstance(a, FieldRef):
        return a.descriptor == desc
    return op == "checkcast" and a == (desc[1:-1] if desc.startswith("L") else desc)


def _string_array(eg: EPeg, cid: int) -> bool:
    """Class ``cid`` is the result of a call, field read or cast declared ``String[]``."""
    return any(op == "rho_value" and any(_declared_as(e, "[" + STRING) for e in eg.nodes(ch[0]))
               for op, _a, ch in eg.nodes(cid))


def _normal(eg: EPeg, parts: Sequence[Part]) -> list[Part] | None:
    """The normal form of a concatenation (module docstring); None when it grows past ``_MAX_PARTS``."""
    out: list[Part] = []
    for kind, x in parts:
        if not _expand(eg, kind, x, out, set()):
            return None
    merged: list[Part] = []
    for p in out:
        if p[0] == "T" and merged and merged[-1][0] == "T":
            merged[-1] = ("T", _text(merged[-1]) + _text(p))
        else:
            merged.append(p)
    return [p for p in merged if p != ("T", "")]


def _expand(eg: EPeg, kind: str, x: int | str, out: list[Part], busy: set[int]) -> bool:
    if len(out) > _MAX_PARTS:
        return False
    if kind == "T":
        out.append((kind, x))
        return True
    assert isinstance(x, int)
    x = eg.find(x)
    if kind == STRING:
        lit = _string_literal(eg, x)
        if lit is not None:
            out.append(("T", lit))
            return True
        nodes = _value_nodes(eg, x)
        if nodes and x not in busy and len(busy) < _MAX_NEST:
            # any of them is right (they are one value); the choice is made the same way on both sides
            best = max(nodes, key=lambda n: (len(n[2]), n[1].descriptor, tuple(eg.find(c) for c in n[2])))
            busy.add(x)
            ok = all(_expand(eg, k, c, out, busy) for k, c in _parts_of(best))
            busy.discard(x)
            return ok
        out.append((STRING, x))
        return True
    text = render_constant(kind, eg.const(x))
    out.append(("T", text) if text is not None else (kind, x))
    return True


def _sigma0(eg: EPeg) -> int:
    return eg.add("sigma0")


def build_value(eg: EPeg, parts: Sequence[Part]) -> int:
    """The class of the model's value of ``parts`` (already normal): a literal, a non-null String itself, or
    ``rho_value(StringValue.of(sigma0, parts...))``."""
    if not parts:
        return eg.add("const.a", Const(_STRING_TYPE, ""))
    if len(parts) == 1 and parts[0][0] == "T":
        return eg.add("const.a", Const(_STRING_TYPE, parts[0][1]))
    if len(parts) == 1 and parts[0][0] == STRING and _nonnull_string(eg, _class_id(parts[0])):
        return eg.find(_class_id(parts[0]))
    return eg.add("rho_value", None, (_model_call(eg, VALUE_OWNER, _sigma0(eg), parts),))


def _model_call(eg: EPeg, owner: str, sigma: int, parts: Sequence[Part]) -> int:
    """``owner.of(sigma, parts...)``: texts as String literals, every other part's class typed by its kind."""
    kids = [eg.find(sigma)]
    desc = []
    for p in parts:
        kind = p[0]
        if kind == "T":
            kids.append(eg.add("const.a", Const(_STRING_TYPE, p[1])))
            desc.append(STRING)
        else:
            kids.append(eg.find(_class_id(p)))
            desc.append(kind)
    return eg.add("invoke.static", MethodRef(owner, "of", f"({''.join(desc)}){STRING}"), kids)


_IDENTITY_OPS = frozenset({"eq.a", "ne.a", "monitorenter", "monitorexit"})
_FLOWS = frozenset({"phi", "theta", "eval", "shift", "peel"})


def _identity_observed(eg: EPeg, value: int, limit: int = 256) -> bool:
    """The method itself looks at the identity of ``value`` (through phis and loops): compares it by
    reference, locks on it, or asks ``System.identityHashCode``. The assumption would then be false on its face,
    so the rules leave such a String alone (what callers do with it is what the assumption is about)."""
    find = eg.find
    seen = {find(value)}
    work = [find(value)]
    while work:
        for pid in eg._classes[work.pop()].parents:
            node = eg._cur[pid]
            if node is None:
                return True
            op, attr = node[0], node[1]
            if op in _IDENTITY_OPS or (op == "invoke.static" and isinstance(attr, MethodRef)
                                       and (attr.owner, attr.name) == IDENTITY_HASH_CODE):
                return True
            if op in _FLOWS and find(pid) not in seen:
                if len(seen) >= limit:
                    return True
                seen.add(find(pid))
                work.append(find(pid))
    return False


class _ValueRule:
    """Shared by the three rules: a match is (outcome class, sigma before, parts); applying it makes the
    outcome's value the model's value of the parts and its heap the heap before."""

    name = ""
    group = ASSUME_GROUP
    source = "assumption"
    depth = None
    cache_matches = False  # the normal form improves as classes merge: recomputed at every search

    def __init__(self, string_params: frozenset[int] = frozenset()) -> None:
        self.string_params = string_params
        self.applied = 0  # unions made: the driver tells a proof that used the assumption by it

    def _resolve(self, eg: EPeg, sigma: int, parts: Sequence) -> tuple[int, Sequence[Part]]:
        """(the heap the value is made on, its parts) from a match's (heap, parts): as they are here; a builder
        chain replays the effects it interleaves (:func:`_replay`)."""
        return sigma, parts

    def apply(self, eg: EPeg, match: tuple) -> bool:
        outcome, sigma, parts, names, values = match
        value = eg.lookup("rho_value", None, (outcome,))
        if value is not None and _identity_observed(eg, value):
            return False
        sigma, parts = self._resolve(eg, sigma, parts)
        normal = _normal(eg, parts)
        if normal is None:
            return False
        why = Reason(self.name, names, values)
        changed = eg.union(eg.add("rho_value", None, (outcome,)), build_value(eg, normal), why)
        changed = eg.union(eg.add("rho_sigma", None, (outcome,)), sigma, why) or changed
        if changed:
            self.applied += 1
        return changed


class StringValueOf(_ValueRule):
    name = "string-valueof-value"

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("invoke.static"):
            for op, m, ch in eg.nodes(cid):
                if not _is_value_of((op, m, ch)):
                    continue
                kind = m.descriptor[1:-len(")" + STRING)]
                if m.descriptor != f"({kind}){STRING}":
                    continue
                if kind == "Ljava/lang/Object;" and _string_typed(eg, ch[1], self.string_params):
                    kind = STRING  # valueOf(Object) of a String or null: "null" or the String itself
                if kind not in _PRIMS and kind != STRING:
                    continue
                out.append((eg.find(cid), eg.find(ch[0]), ((kind, eg.find(ch[1])),), ("?x",), (ch[1],)))
            if len(out) >= limit:
                break
        return out, False


class StringConcatValue(_ValueRule):
    name = "string-concat-value"

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("invoke.virtual"):
            for op, m, ch in eg.nodes(cid):
                if op != "invoke.virtual" or not same_method(m, STRING_CONCAT) or len(ch) != 3:
                    continue
                a, b = eg.find(ch[1]), eg.find(ch[2])
                if not (_nonnull_string(eg, a) and _nonnull_string(eg, b)):
                    continue  # a null receiver or argument throws: the builder would not
                out.append((eg.find(cid), eg.find(ch[0]), ((STRING, a), (STRING, b)), ("?a", "?b"), (a, b)))
            if len(out) >= limit:
                break
        return out, False


class BuilderToStringValue(_ValueRule):
    name = "builder-tostring-value"

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("invoke.virtual"):
            for node in eg.nodes(cid):
                op, m, ch = node
                if op != "invoke.virtual" or not is_builder_method(m, "toString") or m.descriptor != f"(){STRING}":
                    continue
                found = self._chain(eg, node, m.owner)
                if found is not None:
                    start, plan = found
                    out.append((eg.find(cid), start, tuple(plan), ("?s",), (start,)))
            if len(out) >= limit:
                break
        return out, False

    def _chain(self, eg: EPeg, to_string: tuple, owner: str) -> tuple[int, list[Step]] | None:
        """(heap before ``new``, the chain's steps in order) when ``to_string`` ends a confined chain (module
        docstring). A step is a part, an effect of something else between two builder operations (an operand
        computed by a call, a field or array read: it cannot touch the confined builder, nor the builder's
        operations it, so it is replayed on the heap without them: :func:`_replay`), or ``append(Object)`` of an
        object not known to be a String: by its specification ``append(String.valueOf(o))``, so the call
        ``String.valueOf(o)`` (which runs ``o.toString()`` there) and its String as the part."""
        find = eg.find
        builder = find(to_string[2][1])
        sigma = find(to_string[2][0])
        plan: list[Step] = []
        seen: set[int] = set()
        while len(seen) < _MAX_CHAIN:
            if sigma in seen:
                return None
            seen.add(sigma)
            step = self._step(eg, sigma, builder, owner) or _foreign_effect(eg, sigma, builder) \
                or self._branch(eg, sigma, builder, owner)
            if step is None:
                return None
            kind, arg, before = step
            plan.append(("heap", sigma))  # the heap after this step (the plan is reversed below)
            if kind == "new":
                plan.extend(("part", k, x) for k, x in reversed(arg))
                plan.append(("builder", builder))
                plan.reverse()
                outcome = eg.lookup(to_string[0], to_string[1], to_string[2])
                if outcome is None or not _confined(eg, builder, owner) or not _dead_after(eg, outcome, builder):
                    return None
                return before, plan
            plan.append(arg if kind in ("effect", "valueof", "branch") else ("part", kind, arg))
            sigma = before
        return None

    def _branch(self, eg: EPeg, sigma: int, builder: int, owner: str) -> tuple | None:
        """("branch", (condition, each arm's steps), heap before) when ``sigma`` is a phi of two heaps that each
        arm of a branch made from one heap by foreign effects alone (ecj's ``new StringBuilder("x: ").append(o
        == null ? "<null>" : o.getClass().getName())``: the operand is computed in a branch between two builder
        operations). The condition must be a pure function of values (:func:`_plain_condition`): it is the same
        whether or not the confined builder is on the heap."""
        for op, _a, ch in eg.nodes(sigma):
            if op != "phi" or not _plain_condition(eg, ch[0]):
                continue
            then, other = (self._arm(eg, eg.find(h), builder, owner) for h in ch[1:])
            if then is None or other is None:
                continue
            heaps_a = [h for h, _ in then]
            join = next((h for h, _ in other if h in heaps_a), None)
            if join is None:
                continue
            plans = []
            for arm in (then, other):
                steps: list[Step] = []
                for h, effect in arm:
                    if h == join:
                        break
                    steps += [("heap", h), effect]
                steps.reverse()
                plans.append(tuple(steps))
            return ("branch", ("branch", eg.find(ch[0]), tuple(plans)), join)
        return None

    def _arm(self, eg: EPeg, heap: int, builder: int, owner: str, limit: int = 32) -> list | None:
        """(heap, the foreign effect that made it) back from ``heap`` until a builder operation, a heap no foreign
        effect made, or ``limit`` steps; the last heap with None. None when a step would loop."""
        out: list = []
        seen: set[int] = set()
        while len(out) < limit and heap not in seen:
            seen.add(heap)
            effect = None if self._step(eg, heap, builder, owner) else _foreign_effect(eg, heap, builder)
            out.append((heap, None if effect is None else effect[1]))
            if effect is None:
                return out
            heap = effect[2]
        return None

    def _resolve(self, eg: EPeg, sigma: int, parts: Sequence) -> tuple[int, Sequence[Part]]:
        return _replay(eg, sigma, parts)

    def _value_of(self, eg: EPeg, text: int, sigma: int) -> tuple[Part, int] | None:
        """(the part, the heap before) when ``text`` is the value of ``String.valueOf(x)`` called on the heap
        just before ``sigma`` with ``x`` a primitive or a String (ecj's ``new StringBuilder(String.valueOf(x))``
        for ``x + ...``): ``valueOf`` renders ``x`` exactly as ``append`` does, with no effect, never null."""
        find = eg.find
        for op, _a, ch in eg.nodes(text):
            if op != "rho_value" or eg.lookup("rho_sigma", None, (find(ch[0]),)) != find(sigma):
                continue
            for e in eg.nodes(ch[0]):
                m = e[1]
                if not _is_value_of(e):
                    continue
                kind = m.descriptor[1:m.descriptor.index(")")]
                if kind == "Ljava/lang/Object;" and _string_typed(eg, e[2][1], self.string_params):
                    kind = STRING  # valueOf(Object) of a String or null: "null" or the String itself
                if kind in _PRIMS or kind == STRING:
                    return (kind, find(e[2][1])), find(e[2][0])
        return None

    def _step(self, eg: EPeg, sigma: int, builder: int, owner: str) -> tuple | None:
        """The builder operation whose heap ``sigma`` is: ("new", the parts it starts with, heap before) or
        (part type, argument, heap before) for an ``append``."""
        find = eg.find
        for outcome, e in _effects_onto(eg, sigma):
            attr, kids = e[1], e[2]
            if e[0] == "new" and isinstance(attr, tuple) and attr[0] == owner \
                    and eg.lookup("rho_value", None, (outcome,)) == builder:
                desc = attr[1].descriptor
                if desc == "()V":
                    return ("new", (), find(kids[0]))
                if desc == f"({STRING})V":
                    rendered = self._value_of(eg, kids[1], kids[0])
                    if rendered is not None:
                        return ("new", (rendered[0],), rendered[1])
                    if _nonnull_string(eg, kids[1]):  # new B(null) throws
                        return ("new", ((STRING, find(kids[1])),), find(kids[0]))
            if e[0] == "invoke.virtual" and is_builder_method(attr, "append") and attr.owner == owner \
                    and len(kids) == 3 and find(kids[1]) == builder \
                    and eg.lookup("rho_value", None, (outcome,)) in (None, builder):
                kind = attr.descriptor[1:attr.descriptor.index(")")]
                if kind in ("Ljava/lang/Object;", "Ljava/lang/CharSequence;", STRING) \
                        and _string_typed(eg, kids[2], self.string_params):
                    kind = STRING  # appends "null" or the String's characters, runs no foreign code
                if kind in _PRIMS or kind == STRING:
                    return (kind, find(kids[2]), find(kids[0]))
                if kind == "Ljava/lang/Object;":  # append(String.valueOf(o)) by its specification
                    return ("valueof", ("valueof", find(kids[2])), find(kids[0]))
        return None


#: ("part", kind, class) | ("effect", op, attr, children after sigma, outcome) | ("valueof", object) | ("heap", the
#: chain's heap after the step before) | ("builder", the builder's class)
Step = tuple
_VALUE_OF_OBJECT = MethodRef(STRING_CLASS, STRING_VALUE_OF, f"(Ljava/lang/Object;){STRING}")


def _foreign_effect(eg: EPeg, sigma: int, builder: int) -> tuple | None:
    """("effect", the step, heap before) when ``sigma`` is the heap after an effect that is no operation of the
    builder (an operand's call or read between two appends); the builder's confinement, checked once the chain
    is whole, keeps the builder out of its arguments."""
    find = eg.find
    for outcome, e in _effects_onto(eg, sigma):
        spec = OPS.get(e[0])
        if spec is None or spec.role is not Role.EFFECT or not e[2] or any(find(k) == builder for k in e[2]):
            continue
        if is_builder_method(e[1]):
            continue  # another builder's operation: not looked through
        return ("effect", ("effect", e[0], e[1], tuple(find(k) for k in e[2][1:]), outcome), find(e[2][0]))
    return None


_CONDITION_OPS = frozenset({"phi", "rho_value"})


def _plain_condition(eg: EPeg, cond: int, limit: int = 64) -> bool:
    """``cond`` is a pure function of values: every class under it, down to constants, parameters and the
    values of effects (``rho_value``), has a pure operator or phi (``guard``, which reads a heap, excluded)."""
    seen = {eg.find(cond)}
    work = [eg.find(cond)]
    while work:
        node = next((n for n in eg.nodes(work.pop())
                     if n[0] in _CONDITION_OPS or ((spec := OPS.get(n[0])) is not None and n[0] != "guard"
                                                   and spec.role in (Role.PURE, Role.CONST, Role.PARAM))), None)
        if node is None:
            return False
        if node[0] == "rho_value":
            continue
        for k in node[2]:
            k = eg.find(k)
            if k not in seen:
                if len(seen) >= limit:
                    return False
                seen.add(k)
                work.append(k)
    return True


def _effects_onto(eg: EPeg, sigma: int):
    """(outcome class, node) of every node of an effect whose heap after is ``sigma``."""
    for op, _a, ch in eg.nodes(sigma):
        if op == "rho_sigma":
            outcome = eg.find(ch[0])
            for e in eg.nodes(outcome):
                yield outcome, e


def _replay(eg: EPeg, sigma: int, plan: Sequence[Step]) -> tuple[int, list[Part]]:
    """A builder chain's plan (:meth:`BuilderToStringValue._chain`) on the heap before its ``new``, without the
    builder's operations: each foreign effect made again on the heap the previous one left (its value the same as
    the original's: the builder, confined and unable to throw, changes nothing it can see), each
    ``append(Object)`` as the call ``String.valueOf(o)``; an operand read on one of the chain's heaps (such as a
    field of ``this``, a read that no longer changes the heap) read again on the replayed one (:func:`_rebase`).
    Returns the heap after the last one and the parts."""
    parts: list[Part] = []
    heaps: dict[int, int] = {}
    builder = -1
    used: list[int] = []
    for step in plan:
        if step[0] == "builder":
            builder = step[1]
            continue
        if step[0] == "heap":
            heaps[eg.find(step[1])] = sigma
            continue
        if step[0] == "part":
            parts.append((step[1], step[2]))
            if step[1] != "T":
                used.append(step[2])
            continue
        if step[0] == "valueof":
            used.append(step[1])
            call = eg.add("invoke.static", _VALUE_OF_OBJECT, (sigma, step[1]))
            parts.append((STRING, eg.add("rho_value", None, (call,))))
            sigma = eg.add("rho_sigma", None, (call,))
        elif step[0] == "branch":  # each arm's effects again, joined by the same condition
            _, cond, arms = step
            used.append(cond)
            joined = []
            for arm in arms:
                at = sigma
                for s in arm:
                    if s[0] == "heap":
                        heaps[eg.find(s[1])] = at
                    else:
                        at = _replay_effect(eg, at, s, used, builder)
                joined.append(at)
            sigma = eg.add("phi", None, (cond, *joined))
        else:
            sigma = _replay_effect(eg, sigma, step, used, builder)
    for v in used:
        _rebase(eg, v, heaps, builder, 3)
    return sigma, parts


def _replay_effect(eg: EPeg, sigma: int, step: Step, used: list[int], builder: int) -> int:
    """An ("effect", ...) step made again on ``sigma``; the heap after it. Its value, whether it throws and what
    it throws are the original's (the original's projections that exist merged with the replayed ones): the
    confined builder is all that differs between the two heaps, and the effect cannot see it. So is the heap it
    leaves when it throws, when no use of the builder comes after that (:func:`_dead_after`): the builder is
    then garbage on that path, as it is after the final ``toString()``."""
    _, op, attr, kids, outcome = step
    used.extend(kids)
    call = eg.add(op, attr, (sigma, *kids))
    why = Reason("builder-effect-replay", ("?s",), (sigma,))
    for proj in ("rho_value", "threw", "rho_exc", "rho_esigma"):
        was = eg.lookup(proj, None, (outcome,))
        if was is not None and (proj != "rho_esigma" or _dead_after(eg, outcome, builder, exceptional=True)):
            eg.union(was, eg.add(proj, None, (call,)), why)
    return eg.add("rho_sigma", None, (call,))


def _rebase(eg: EPeg, value: int, heaps: dict[int, int], builder: int, depth: int) -> None:
    """``value`` read by an effect on one of a chain's heaps (``heaps``: chain heap -> replayed heap) is the
    value the same read has on the replayed heap (the read does not take the builder, which is all that
    differs); its operands likewise, ``depth`` levels down, through pure operators too (ecj's
    ``spacer(this.spaces - 2)`` reads the field under a subtraction)."""
    find = eg.find
    if depth <= 0:
        return
    for op, _a, ch in list(eg.nodes(value)):
        if op != "rho_value":
            spec = OPS.get(op)
            if spec is not None and spec.role is Role.PURE:
                for k in ch:
                    _rebase(eg, k, heaps, builder, depth - 1)
            continue
        for e in list(eg.nodes(ch[0])):
            spec = OPS.get(e[0])
            if spec is None or spec.role is not Role.EFFECT or not e[2] or is_builder_method(e[1]) \
                    or any(find(k) == find(builder) for k in e[2]):
                continue
            for k in e[2][1:]:
                _rebase(eg, k, heaps, builder, depth - 1)
            replayed = heaps.get(find(e[2][0]))
            if replayed is not None and find(replayed) != find(e[2][0]):
                again = eg.add(e[0], e[1], (replayed, *e[2][1:]))
                eg.union(value, eg.add("rho_value", None, (again,)),
                         Reason("builder-effect-replay", ("?s",), (replayed,)))


def _builder_uses(eg: EPeg, builder: int, limit: int = 256) -> set[int] | None:
    """The ids of every node using the builder reference (followed through what ``append`` returns)."""
    uses: set[int] = set()
    refs = {eg.find(builder)}
    work = list(refs)
    while work:
        for pid in eg._classes[eg.find(work.pop())].parents:
            uses.add(pid)
            node = eg._cur[pid]
            if node is not None and node[0] == "invoke.virtual" and is_builder_method(node[1], "append"):
                returned = eg.lookup("rho_value", None, (eg.find(pid),))
                if returned is not None and returned not in refs:
                    if len(refs) >= limit:
                        return None
                    refs.add(returned)
                    work.append(returned)
    return uses


def _dead_after(eg: EPeg, outcome: int, builder: int, limit: int = 4096, exceptional: bool = False) -> bool:
    """No use of the builder comes after the effect ``outcome`` (the final ``toString()``): no effect on a heap
    made from its heap uses the builder. (Uses in another branch, on a heap before it, are allowed: javac and
    our PEG builder share one ``new`` between the two arms of a branch.) Every use is an effect (the builder is
    confined) and every effect after this one takes a heap made from this one's, so the walk follows heaps and
    outcomes only: a value such as ``this`` merged with its own value after a loop would otherwise lead it back
    to every use of ``this`` before the ``toString()``.

    A chain inside a loop: the walk stops at the builder's own ``new``, reached around the back edge. What
    lies beyond it comes after the allocation ran again: the builder being confined (no phi, theta or eval
    carries its reference), every use there takes the new object, not this one.
    ``exceptional``: the same from the heap ``outcome`` leaves when it throws."""
    uses = _builder_uses(eg, builder)
    if uses is None:
        return False
    find = eg.find
    used = {find(u) for u in uses}
    start = eg.lookup("rho_esigma" if exceptional else "rho_sigma", None, (outcome,))
    if start is None:
        return True
    made = _allocations(eg, builder)
    seen = {start}
    work = [start]
    while work:
        for pid in eg._classes[work.pop()].parents:
            if pid in uses:
                return False
            c = find(pid)
            if c in used or c == find(outcome):
                return False
            if c in made or eg.is_linear(c) is False:
                continue  # the builder made again, or a value (what reads it takes a heap made from this one)
            if c not in seen:
                if len(seen) >= limit:
                    return False
                seen.add(c)
                work.append(c)
    return True


def _allocations(eg: EPeg, builder: int) -> set[int]:
    """The outcome classes of the ``new`` whose value is ``builder``."""
    find = eg.find
    return {find(ch[0]) for op, _a, ch in eg.nodes(builder)
            if op == "rho_value" and any(e[0] == "new" for e in eg.nodes(ch[0]))}


FRESH_OWNER = "peggy/strict/FreshString"
"""The pseudo-class of the strict model of a concatenation (no JVM class has this name): ``FreshString.of(sigma,
parts...)`` is an effect that creates a new String whose text is its parts rendered in order (typed as in
:data:`VALUE_OWNER`'s model), changing nothing else and never throwing (running out of memory aside)."""


def build_fresh(eg: EPeg, sigma: int, parts: Sequence[Part]) -> int:
    """The class of the model's ``FreshString.of(sigma, parts...)`` outcome (``parts`` already normal)."""
    return _model_call(eg, FRESH_OWNER, sigma, parts)


class _FreshRule:
    """Shared by the strict concatenation rules: a match is (outcome class, heap before, parts, names, values);
    applying it makes the outcome's value and heap those of ``FreshString.of(heap before, normal parts)``."""

    name = ""
    group = "java.lang.string"
    source = "builtin"
    depth = None
    cache_matches = False  # the normal form improves as classes merge: recomputed at every search
    string_params: frozenset[int] = frozenset()

    def _resolve(self, eg: EPeg, sigma: int, parts: Sequence) -> tuple[int, Sequence[Part]]:
        return sigma, parts

    def apply(self, eg: EPeg, match: tuple) -> bool:
        outcome, sigma, parts, names, values = match
        sigma, parts = self._resolve(eg, sigma, parts)
        normal = _normal(eg, parts)
        if normal is None:
            return False
        fresh = build_fresh(eg, sigma, normal)
        why = Reason(self.name, names, values)
        changed = eg.union(eg.add("rho_value", None, (outcome,)), eg.add("rho_value", None, (fresh,)), why)
        return eg.union(eg.add("rho_sigma", None, (outcome,)), eg.add("rho_sigma", None, (fresh,)), why) or changed


class BuilderToStringFresh(_FreshRule, BuilderToStringValue):
    """``builder-tostring-fresh``: a confined builder chain ending in ``toString()`` (the chain of
    ``builder-tostring-value``, which assumes nothing about the builder: it is garbage after the ``toString()``)
    is ``FreshString.of`` its parts on the heap before its ``new``: ``toString()`` returns a new String."""

    name = "builder-tostring-fresh"
    _resolve = BuilderToStringValue._resolve

    def __init__(self) -> None:
        BuilderToStringValue.__init__(self)

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        self.string_params = eg.info.string_params
        return BuilderToStringValue.search(self, eg, limit, deadline, roots)


class ConcatIndyFresh(_FreshRule):
    """``concat-indy-fresh``: an ``invokedynamic`` bootstrapped by ``StringConcatFactory.makeConcatWithConstants``
    (:data:`.facts.CONCAT_FACTORY`) is ``FreshString.of`` its recipe's parts on the heap it is called on: literal
    text, constants, and each argument of a primitive type (``byte``/``short`` rendered as ``int``) or declared
    String, or of a reference type known to hold a String or null. Another reference argument is left alone: its
    ``toString()`` runs after every operand was computed, not where a builder's ``append`` would run it."""

    name = "concat-indy-fresh"

    def __init__(self) -> None:
        self.applied = 0

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        self.string_params = eg.info.string_params
        out = []
        for cid in eg.classes_with_op("invokedynamic"):
            for op, attr, ch in eg.nodes(cid):
                if op != "invokedynamic" or not isinstance(attr, tuple) or len(attr) != 3:
                    continue
                parts = self._parts(eg, attr[1], attr[2], ch[1:])
                if parts is not None:
                    out.append((eg.find(cid), eg.find(ch[0]), tuple(parts), ("?s",), (ch[0],)))
            if len(out) >= limit:
                break
        return out, False

    def _parts(self, eg: EPeg, desc: str, boot: object, args: Sequence[int]) -> list[Part] | None:
        if not isinstance(boot, Bootstrap):
            return None
        handle = boot.handle.value
        if not (isinstance(handle, tuple) and len(handle) == 2 and isinstance(handle[1], MethodRef)
                and (handle[1].owner, handle[1].name) == CONCAT_FACTORY):
            return None
        consts = [c.value for c in boot.arguments]
        if not consts or not isinstance(consts[0], str):
            return None
        kinds, _ret = parse_method_descriptor(desc)
        if len(kinds) != len(args):
            return None
        parts: list[Part] = []
        ai, ci = 0, 1
        for ch in consts[0]:
            if ch == "\1":
                if ai >= len(args):
                    return None
                kind = "I" if kinds[ai] in ("B", "S") else kinds[ai]
                if kind.startswith("L") and kind != STRING:
                    if not _string_typed(eg, args[ai], self.string_params):
                        return None
                    kind = STRING
                if kind not in _PRIMS and kind != STRING:
                    return None
                parts.append((kind, eg.find(args[ai])))
                ai += 1
            elif ch == "\2":
                text = consts[ci] if ci < len(consts) else None
                if not isinstance(text, str):
                    return None
                parts.append(("T", text))
                ci += 1
            elif parts and parts[-1][0] == "T":
                parts[-1] = ("T", _text(parts[-1]) + ch)  # one part per run of text
            else:
                parts.append(("T", ch))
        return parts if ai == len(args) else None


class ConcatNoThrow:
    """``concat-nothrow``: the operations of a concatenation do not throw (running out of memory aside, as
    everywhere in these models): ``new B()``; ``new B(s)`` of a non-null String; on a non-null builder,
    ``append`` of a part rendered without foreign code (a primitive, a String, or an ``Object`` or
    ``CharSequence`` known to hold a String or null: "null" or its characters) and ``toString()``;
    ``String.valueOf`` of such a part; an ``invokedynamic`` of ``makeConcatWithConstants`` whose arguments are
    such parts (:meth:`ConcatIndyFresh._parts`). So ``threw`` of each is false. Inside a ``try`` region the PEG
    branches to the handlers on every statement that may throw, and ecj's chain makes three such statements
    where javac's indy makes one: without this, a concatenation in a ``try`` block is never proved."""

    name = "concat-nothrow"
    group = "java.lang.string"
    source = "builtin"
    depth = None
    cache_matches = True

    def __init__(self) -> None:
        self.applied = 0
        self._indy = ConcatIndyFresh()

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        self._indy.string_params = eg.info.string_params
        out = []
        for cid in eg.classes_with_op("threw"):
            for op, _a, ch in eg.nodes(cid):
                if op == "threw" and eg.const(cid) is None \
                        and any(self._safe(eg, e) for e in eg.nodes(ch[0])):
                    out.append(eg.find(cid))
                    break
            if len(out) >= limit:
                break
        return out, False

    def _safe(self, eg: EPeg, e: tuple) -> bool:
        op, attr, kids = e
        if op == "new" and isinstance(attr, tuple) and is_builder_method(attr[1], "<init>"):
            desc = attr[1].descriptor
            return desc == "()V" or (desc == f"({STRING})V" and (_nonnull_string(eg, kids[1])
                                                                 or self._rendered(eg, kids[1])))
        if op == "classinit" and attr in BOOT_CLASSES:
            return True  # initialized while the JVM boots: nothing runs (string-classinit-noop)
        if op == "invoke.virtual" and is_builder_method(attr) and len(kids) >= 2 and nonnull(eg, kids[1]):
            if attr.name == "toString" and attr.descriptor == f"(){STRING}":
                return True
            return attr.name == "append" and len(kids) == 3 and self._renders(eg, attr.descriptor, kids[2])
        if _is_value_of(e):
            return self._renders(eg, attr.descriptor, kids[1])
        if op == "invokedynamic" and isinstance(attr, tuple) and len(attr) == 3:
            return self._indy._parts(eg, attr[1], attr[2], kids[1:]) is not None
        return False

    def _rendered(self, eg: EPeg, text: int) -> bool:
        """``text`` is what ``String.valueOf`` returns for a part it renders without foreign code: never null."""
        return any(op == "rho_value" and any(_is_value_of(e) and self._renders(eg, e[1].descriptor, e[2][1])
                                             for e in eg.nodes(ch[0])) for op, _a, ch in eg.nodes(text))

    def _renders(self, eg: EPeg, desc: str, arg: int) -> bool:
        """A one-argument ``desc`` whose argument is rendered without running foreign code."""
        kind = desc[1:desc.index(")")]
        if kind in ("Ljava/lang/Object;", "Ljava/lang/CharSequence;"):
            return _string_typed(eg, arg, self._indy.string_params)
        return kind in _PRIMS or kind == STRING

    def apply(self, eg: EPeg, cid: int) -> bool:
        changed = eg.union(cid, eg.add("const.b", False), Reason(self.name, ("?t",), (cid,)))
        if changed:
            self.applied += 1
        return changed


class StringClassInit:
    """``string-classinit-noop``: ``classinit`` of ``String`` or ``StringBuilder`` leaves the heap as it was:
    the JVM initializes both while it boots, before any class of the input runs (:data:`.facts.BOOT_CLASSES`). javac
    puts one before ``new StringBuilder(s)`` whose argument is computed by calls (ProGuard's ``new
    StringBuilder(a.concat(b))``), where the builder it replaces has none."""

    name = "string-classinit-noop"
    group = "java.lang.string"
    source = "builtin"
    depth = None
    cache_matches = True

    def __init__(self) -> None:
        self.applied = 0

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("classinit"):
            for op, attr, ch in eg.nodes(cid):
                if op == "classinit" and attr in BOOT_CLASSES:
                    out.append((eg.find(cid), eg.find(ch[0])))
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, match: tuple) -> bool:
        outcome, sigma = match
        changed = eg.union(eg.add("rho_sigma", None, (outcome,)), sigma, Reason(self.name, ("?s",), (sigma,)))
        if changed:
            self.applied += 1
        return changed


class StringValueNormal:
    """``string-value-normal``: a ``StringValue.of`` value equals the value of its parts' normal form (its parts'
    classes gain literals and values as the saturation goes on)."""

    name = "string-value-normal"
    group = ASSUME_GROUP
    source = "assumption"
    depth = None
    cache_matches = False

    def __init__(self) -> None:
        self.applied = 0

    def search(self, eg: EPeg, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        out = []
        for cid in eg.classes_with_op("invoke.static"):
            for node in eg.nodes(cid):
                if _is_value_node(node):
                    out.append(eg.find(cid))
                    break
            if len(out) >= limit:
                break
        return out, False

    def apply(self, eg: EPeg, cid: int) -> bool:
        changed = False
        for node in list(eg.nodes(cid)):
            if not _is_value_node(node):
                continue
            normal = _normal(eg, _parts_of(node))
            if normal is None:
                continue
            value = eg.add("rho_value", None, (cid,))
            if eg.union(value, build_value(eg, normal), Reason(self.name, ("?v",), (value,))):
                changed = True
        if changed:
            self.applied += 1
        return changed

