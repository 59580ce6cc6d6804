"""A ``switch`` on an enum read as a switch on which of its named constants the value is, whoever built the table.

What this module owns
    :class:`SwitchTable` (an ``int[]`` a compiler builds for ``switch`` on an enum: the enum, and the case number
    it stores at each named constant's ordinal), :func:`find_tables` (every such table of one side of
    ``validate``, by where a method reads it: javac's ``static final`` field of a synthetic class that its
    ``<clinit>`` fills, ``DurationUtils$1.$SwitchMap$java$util$concurrent$TimeUnit``; ecj's synthetic static
    method that fills a private static field on its first call and returns it,
    ``DurationUtils.$SWITCH_TABLE$java$util$concurrent$TimeUnit()``) and :func:`read_switch_tables` (a lifted
    method's ``switch (table[i])`` rewritten to one canonical form).

    Both compilers compile ``switch (e) { case A: ... case B: ... }`` as ``switch (table[e.ordinal()])`` with
    case numbers of their own choosing (javac numbers the constants in the order the class's switches name
    them, ecj by their ordinal as compiled) from a table that maps each named constant's run-time ordinal to
    its number. The two tables differ as arrays, objects and numbers; the map from the constant to the code
    run does not. The canonical form: the table read becomes a ``getstatic`` of a field no class has,
    ``E.'switch(A,B)``, the same operator on both sides for the same enum and the same set of constants the
    ``switch`` distinguishes (its keys, sorted by name), and each key becomes its constant's place in that
    sorted set, plus one.

Why it is sound
    The table ``T`` a builder fills (checked statement by statement: ``new int[E.values().length]``, then for
    each listed constant ``K``, ``T[E.K.ordinal()] = k_K`` in a block whose only handler catches
    ``NoSuchFieldError`` and joins the next entry; nothing else; every ``K`` an ``ACC_ENUM`` field of ``E``, not
    another static field of its type that may alias a constant) holds, at an index ``i``, ``k_K`` when ``i`` is
    the ordinal of the listed constant ``K`` that exists at run time, else 0: two constants of an enum never
    share an ordinal (``Enum``'s sole constructor takes it from the compiler's own code, the constant's place in
    the declaration, JLS 8.9), so no entry overwrites another. The numbers ``k_K`` are required distinct and
    non-zero, and no key of the ``switch`` is 0. Let ``S`` be the constants whose number the ``switch`` has as
    a key and ``C`` the canonical table: ``C[i] = place(K)`` when ``i`` is the ordinal of ``K`` in ``S``, else
    0, of the same length as ``T``. At every ``i``: when ``i`` is ``K``'s ordinal for some ``K`` in ``S``,
    ``T[i] = k_K`` selects ``K``'s case and ``C[i] = place(K)`` the same case; otherwise ``T[i]`` is 0 or the
    number of a constant outside ``S``, no key, the default, and ``C[i]`` is 0, the default; an ``i`` out of
    bounds throws for both. Keys no constant of the table has select nothing (``T`` never holds them) and are
    dropped. So each side's ``switch`` goes where its canonical form goes, and two sides with the same enum and
    the same ``S`` read the same canonical table: the rewrite needs the table read's value to be used by that
    one ``switch`` only (the array by the one load, the loaded number by the ``switch``), which is checked.
    What is not compared (docs/validation.md, limits): how the table is built when building it throws anything
    but ``NoSuchFieldError`` (the enum not initialized yet, or failed), which javac's code does in a class
    initializer (an ``ExceptionInInitializerError``, then ``NoClassDefFoundError``) and ecj's on each call, as
    class initializers are not compared anywhere; and other code writing into the array once built (any class of
    the package can read javac's field or call ecj's method), which no compiler emits and which is not looked
    for (javac's class must have no code but its initializer; no other method of ecj's class may set its
    cache).

Inputs: one side's classes (parsed) and its class hierarchy; a lifted method and the tables of its side.
Outputs: ``{TableRef: SwitchTable}``; the method changed in place (True when something changed). A read of a
table used any other way, or a builder that does anything else, is left exactly as lifted.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from ..classfile.bytecode import decode
from ..classfile.errors import ClassFileError
from ..classfile.hierarchy import ClassHierarchy
from ..classfile.jimage import default_image
from ..classfile.model import Access, ClassFile, MethodInfo
from ..classfile.opcodes import PUTSTATIC
from ..classfile.reader import read_class, read_code
from ..ir.lift import LiftError, lift_method
from ..ir.nodes import (ArrayLength, ArrayLoad, ArrayStore, Block, Catch, Cond, Const, Copy, FieldRef,
                        GetStatic, Goto, If, Invoke, InvokeKind, IRMethod, NewArray, PutStatic, Return, Switch, Var)

#: where a method reads a table: ("field", owner, name) for ``getstatic``, ("method", owner, name) for an
#: ``invokestatic`` of a method ``()[I``
TableRef = tuple[str, str, str]
NO_SUCH_FIELD = "java/lang/NoSuchFieldError"
CANONICAL = "'switch"  # a field name no class file can hold (the quote), so no real field is read as the table


@dataclass(frozen=True, slots=True)
class SwitchTable:
    enum: str  # the enum's internal name
    numbers: tuple[tuple[str, int], ...]  # (constant, its case number), in the builder's order


def find_tables(classes: dict[str, ClassFile], hierarchy: ClassHierarchy) -> dict[TableRef, SwitchTable]:
    """Every switch table of one side (module docstring), by where it is read. Deterministic: classes by
    name."""
    out: dict[TableRef, SwitchTable] = {}
    constants: dict[str, frozenset[str]] = {}

    def the_enums(t: SwitchTable | None) -> SwitchTable | None:
        """``t`` when every constant it lists is a constant of its enum (an ``ACC_ENUM`` field of the enum as the
        input or the JDK holds it; another static field of the enum's type may alias one), else None."""
        if t is None:
            return None
        if t.enum not in constants:
            constants[t.enum] = _enum_constants(t.enum, classes)
        return t if {k for k, _ in t.numbers} <= constants[t.enum] else None

    for name in sorted(classes):
        cf = classes[name]
        fields = {f.name for f in cf.fields if f.descriptor == "[I"
                  and f.access & (Access.STATIC | Access.FINAL | Access.SYNTHETIC)
                  == Access.STATIC | Access.FINAL | Access.SYNTHETIC}
        clinit = next((m for m in cf.methods if m.name == "<clinit>"), None)
        if fields and clinit is not None and cf.access & Access.SYNTHETIC \
                and all(m is clinit or m.code_attribute() is None for m in cf.methods):
            # javac: a synthetic class whose initializer fills its `static final` tables (a final static field
            # is written by its class's initializer only) and that has no other code
            ir = _lift(cf, clinit, hierarchy)
            built = _built(ir, None) if ir is not None else None
            for ref, table in (built or {}).items():
                if ref.owner == cf.name and ref.name in fields and the_enums(table) is not None:
                    out["field", cf.name, ref.name] = table
        for m in cf.methods:
            if m.descriptor != "()[I" or m.access & (Access.STATIC | Access.SYNTHETIC) != Access.STATIC | \
                    Access.SYNTHETIC:
                continue
            cached = the_enums(_cached_table(cf, m, hierarchy, classes))
            if cached is not None:
                out["method", cf.name, m.name] = cached
    return out


def _enum_constants(enum: str, classes: dict[str, ClassFile]) -> frozenset[str]:
    """The names of ``enum``'s constants (its ``ACC_ENUM`` fields), read from the input or the JDK; empty when the
    class is in neither or is no enum."""
    cf = classes.get(enum)
    if cf is None:
        image = default_image()
        data = image.find_class(enum) if image is not None else None
        try:
            cf = read_class(data) if data is not None else None
        except ClassFileError:
            cf = None
    if cf is None or not cf.access & Access.ENUM:
        return frozenset()
    return frozenset(f.name for f in cf.fields if f.access & Access.ENUM and f.access & Access.STATIC
                     and f.descriptor == f"L{enum};")


def _lift(cf: ClassFile, m: MethodInfo, hierarchy: ClassHierarchy) -> IRMethod | None:
    if m.code_attribute() is None:
        return None
    try:
        return lift_method(cf, m, hierarchy)
    except (LiftError, ClassFileError):
        return None


def _cached_table(cf: ClassFile, m: MethodInfo, hierarchy: ClassHierarchy,
                  classes: dict[str, ClassFile]) -> SwitchTable | None:
    """ecj's table method: ``t = G; if (t != null) return t;`` then the build of a table, ``G = table; return
    table`` (the cache is the last statement, so no thread sees it half built), with ``G`` a private static
    field of ``cf`` that no other method of ``cf`` or of a class of its top-level class's nest (``Top``,
    ``Top$...``: a nestmate may write a private field) writes: whatever ``G`` holds was built by this code."""
    ir = _lift(cf, m, hierarchy)
    if ir is None:
        return None
    entry = ir.blocks[ir.entry]
    term = entry.terminator
    if not entry.stmts or not isinstance(entry.stmts[0], GetStatic) or entry.handlers:
        return None
    read = entry.stmts[0]
    cache = read.field
    if cache.owner != cf.name or cache.descriptor != "[I" or not isinstance(term, If) or term.cond is not Cond.EQ \
            or not (isinstance(term.b, Const) and term.b.value is None):
        return None
    held = {read.dst} | {s.dst for s in entry.stmts[1:] if isinstance(s, Copy) and s.src is read.dst}
    if len(held) != len(entry.stmts) or term.a not in held:
        return None
    hit = ir.blocks[term.if_false]
    if hit.stmts or not isinstance(hit.terminator, Return) or hit.terminator.value not in held:
        return None
    field = next((f for f in cf.fields if f.name == cache.name and f.descriptor == "[I"), None)
    if field is None or field.access & (Access.PRIVATE | Access.STATIC) != Access.PRIVATE | Access.STATIC:
        return None
    if any(_writes(cf, other, cache) for other in cf.methods if other is not m):
        return None
    top = cf.name.split("$", 1)[0]  # its nestmates: the classes of its top-level class's nest, by name
    if any(_writes(other_cf, x, cache) for n, other_cf in classes.items()
           if other_cf is not cf and (n == top or n.startswith(top + "$")) for x in other_cf.methods):
        return None
    built = _built(ir, cache, start=term.if_true)
    if built is None or set(built) != {cache}:
        return None
    return built[cache]


def _writes(cf: ClassFile, m: MethodInfo, ref: FieldRef) -> bool:
    """``m`` may write the static field ``ref`` (a ``putstatic`` of it; unreadable code counts as writing)."""
    attr = m.code_attribute()
    if attr is None:
        return False
    try:
        for insn in decode(read_code(attr.data, cf.pool).code):
            if insn.opcode == PUTSTATIC:
                r = cf.pool.member_ref(insn.arg)
                if (r.owner, r.name) == (ref.owner, ref.name):
                    return True
    except ClassFileError:
        return True
    return False


def _skip(ir: IRMethod, bid: int) -> int:
    """The first block from ``bid`` on that does something: blocks with no statement and a ``goto`` skipped."""
    seen = set()
    while bid not in seen:
        seen.add(bid)
        b = ir.blocks[bid]
        if b.stmts or b.handlers or not isinstance(b.terminator, Goto):
            return bid
        bid = b.terminator.target
    return bid


def _built(ir: IRMethod, cache: FieldRef | None, start: int | None = None) -> dict[FieldRef, SwitchTable] | None:
    """The tables a straight-line builder leaves in static fields: javac's initializer (``cache`` None: each
    table stored first, then filled through reads of its field) or the build part of ecj's method from ``start``
    (the table in a local, stored into ``cache`` last, then returned). None when the code does anything else."""
    env: dict[Var, tuple] = {}
    tables: dict[int, tuple[str, list[tuple[str, int]]]] = {}
    stored: dict[FieldRef, int] = {}
    bid = _skip(ir, ir.entry if start is None else start)
    seen: set[int] = set()
    while True:
        if bid in seen:
            return None
        seen.add(bid)
        b = ir.blocks[bid]
        guarded = bool(b.handlers)
        if guarded and (len(b.handlers) != 1 or b.handlers[0].catch_type != NO_SUCH_FIELD):
            return None
        for st in b.stmts:
            if not _step(st, env, tables, stored, cache, guarded):
                return None
        t = b.terminator
        if isinstance(t, Return):
            if b.handlers:
                return None
            if cache is None:
                if t.value is not None:
                    return None
            elif (not isinstance(t.value, Var) or env.get(t.value) != ("table", stored.get(cache, -1))
                  or not b.stmts or not isinstance(b.stmts[-1], PutStatic)):
                return None
            break
        if not isinstance(t, Goto):
            return None
        nxt = _skip(ir, t.target)
        if guarded and _rejoin(ir, b.handlers[0].target, env) != nxt:
            return None
        bid = nxt
    out = {}
    for ref, tid in stored.items():
        enum, numbers = tables[tid]
        names, keys = [k for k, _ in numbers], [n for _, n in numbers]
        if len(set(names)) != len(names) or len(set(keys)) != len(keys) or 0 in keys or not numbers:
            return None
        out[ref] = SwitchTable(enum, tuple(numbers))
    if len(set(stored.values())) != len(stored) or set(stored.values()) != set(tables):
        return None  # a table stored twice, or one built and never stored
    return out


def _rejoin(ir: IRMethod, handler: int, env: dict[Var, tuple]) -> int | None:
    """Where a ``NoSuchFieldError`` handler of an entry goes: it only takes the exception (into a local) and
    jumps on; None when it does anything else."""
    h = ir.blocks[handler]
    if h.handlers or not h.stmts or not isinstance(h.stmts[0], Catch) or not isinstance(h.terminator, Goto):
        return None
    caught = {h.stmts[0].dst}
    for st in h.stmts[1:]:
        if not (isinstance(st, Copy) and st.src in caught):
            return None
        caught.add(st.dst)
        env.pop(st.dst, None)  # the local that held the exception holds nothing the builder uses
    return _skip(ir, h.terminator.target)


def _step(st, env: dict[Var, tuple], tables: dict[int, tuple[str, list[tuple[str, int]]]],
          stored: dict[FieldRef, int], cache: FieldRef | None, guarded: bool) -> bool:
    """One statement of a builder, on the abstract values ``env``; False for anything a builder does not do.
    ``guarded``: the statement is in an entry's block (``NoSuchFieldError`` caught): only an entry's statements
    may be there, and only there may an entry be stored."""
    if isinstance(st, Invoke) and not guarded:
        r = st.method
        if st.kind is InvokeKind.STATIC and r.name == "values" and r.descriptor == f"()[L{r.owner};" \
                and not st.args and st.dst is not None:
            env[st.dst] = ("values", r.owner)
            return True
        return False
    if isinstance(st, Invoke):
        r = st.method
        got = env.get(st.receiver) if isinstance(st.receiver, Var) else None
        if st.kind is InvokeKind.VIRTUAL and r.name == "ordinal" and r.descriptor == "()I" and st.dst is not None \
                and got is not None and got[0] == "constant" and r.owner in (got[1], "java/lang/Enum"):
            env[st.dst] = ("ordinal", got[1], got[2])
            return True
        return False
    if isinstance(st, ArrayLength) and not guarded and isinstance(st.array, Var) \
            and env.get(st.array, ("",))[0] == "values":
        env[st.dst] = ("length", env[st.array][1])
        return True
    if isinstance(st, NewArray) and not guarded and st.array_type == "[I" and len(st.sizes) == 1 \
            and isinstance(st.sizes[0], Var) and env.get(st.sizes[0], ("",))[0] == "length":
        tid = len(tables)
        tables[tid] = (env[st.sizes[0]][1], [])
        env[st.dst] = ("table", tid)
        return True
    if isinstance(st, PutStatic) and not guarded and isinstance(st.value, Var):
        got = env.get(st.value)
        if got is None or got[0] != "table" or st.field in stored or (cache is not None and st.field != cache):
            return False
        stored[st.field] = got[1]
        return True
    if isinstance(st, GetStatic):
        if st.field in stored and cache is None:
            env[st.dst] = ("table", stored[st.field])
            return True
        if guarded and st.field.descriptor == f"L{st.field.owner};":
            env[st.dst] = ("constant", st.field.owner, st.field.name)
            return True
        return False
    if isinstance(st, ArrayStore) and guarded and st.elem == "I" and isinstance(st.array, Var) \
            and isinstance(st.index, Var) and isinstance(st.value, Const) and isinstance(st.value.value, int):
        arr, idx = env.get(st.array), env.get(st.index)
        if arr is None or idx is None or arr[0] != "table" or idx[0] != "ordinal":
            return False
        enum, numbers = tables[arr[1]]
        if idx[1] != enum or (cache is not None and cache in stored):
            return False  # another enum's constant, or a store after ecj's cache is set
        numbers.append((idx[2], st.value.value))
        return True
    if isinstance(st, Copy) and not guarded and isinstance(st.src, Var) and st.src in env:
        env[st.dst] = env[st.src]
        return True
    return False


def read_switch_tables(a: IRMethod, a_tables: dict[TableRef, SwitchTable], b: IRMethod,
                       b_tables: dict[TableRef, SwitchTable]) -> bool:
    """The two lifted methods of a pair (ORIG's ``a``, OPT's ``b``), each with its side's tables: each ``switch
    (table[i])`` whose table is found, its read used by that one load and the load by that one ``switch``, in
    the canonical form of the module docstring. When the two read their tables alike (the same kinds and names,
    in the same order) and some table is not found, neither is rewritten: a table the optimizer or ProGuard
    left in another shape on one side only is then read as it was before this reading existed (the same
    ``getstatic`` on both sides), not as a canonical table against a raw one. Neither is rewritten either when the
    two have different numbers of such ``switch`` es (one side's was made into tests of the table's value)."""
    sa, sb = _sites(a), _sites(b)
    if not sa and not sb:
        return False
    if len(sa) != len(sb):
        # a switch one side made into something else (the optimizer's chain of tests on the table's value,
        # commons-math3's BinomialTest.binomialTest): its canonical read could meet nothing on the other side,
        # while the tables read as they are meet when both sides read the same table
        return False
    found = all(ref in a_tables for *_, ref in sa) and all(ref in b_tables for *_, ref in sb)
    if not found and [(r[0], r[2]) for *_, r in sa] == [(r[0], r[2]) for *_, r in sb]:
        return False
    changed = False
    for m, sites, tables in ((a, sa, a_tables), (b, sb, b_tables)):
        for blk, at, ref in sites:
            table = tables.get(ref)
            if table is not None:
                _rewrite(blk, at, table)
                changed = True
    return changed


def _sites(m: IRMethod) -> list[tuple[Block, int, TableRef]]:
    """The ``switch (T[i])`` of ``m`` whose ``T`` is read by a ``getstatic`` of an ``int[]`` or an
    ``invokestatic`` of a method ``()[I`` in the same block, that read used by the one load and the load by the
    ``switch`` only, no key 0: (block, index of the read, where it reads), in block order."""
    uses: dict[Var, int] = {}
    for b in m.blocks.values():
        for st in b.all_stmts():
            for op in st.operands():
                if isinstance(op, Var):
                    uses[op] = uses.get(op, 0) + 1
    out = []
    for b in m.block_order():
        sw = b.terminator
        if not isinstance(sw, Switch) or not isinstance(sw.value, Var) or uses.get(sw.value) != 1 or 0 in sw.keys:
            continue
        load = next((s for s in b.stmts if isinstance(s, ArrayLoad) and s.dst is sw.value), None)
        if load is None or load.elem != "I" or not isinstance(load.array, Var) or uses.get(load.array) != 1:
            continue
        at = next((i for i, s in enumerate(b.stmts) if s.defined() is load.array), None)
        ref = _table_ref(b.stmts[at]) if at is not None else None
        if at is None or ref is None or _defined_twice(m, load.array):
            continue
        out.append((b, at, ref))
    return out


def _rewrite(b: Block, at: int, table: SwitchTable) -> None:
    """``b``'s ``switch`` on ``table[i]`` (read at ``b.stmts[at]``) as the canonical one."""
    sw = b.terminator
    read = b.stmts[at]
    assert isinstance(sw, Switch) and isinstance(read.defined(), Var)
    by_number = {n: k for k, n in table.numbers}
    named = sorted({by_number[k] for k in sw.keys if k in by_number})
    place = {k: i + 1 for i, k in enumerate(named)}
    cases = sorted((place[by_number[k]], t) for k, t in zip(sw.keys, sw.cases) if k in by_number)
    b.stmts[at] = GetStatic(cast(Var, read.defined()), FieldRef(table.enum, f"{CANONICAL}({','.join(named)})", "[I"),
                            origin=read.origin)
    if cases:
        b.terminator = Switch(sw.value, [k for k, _ in cases], [t for _, t in cases], sw.default, origin=sw.origin)
    else:
        b.terminator = Goto(sw.default, origin=sw.origin)


def _table_ref(st) -> TableRef | None:
    if isinstance(st, GetStatic) and st.field.descriptor == "[I":
        return "field", st.field.owner, st.field.name
    if isinstance(st, Invoke) and st.kind is InvokeKind.STATIC and st.method.descriptor == "()[I" and not st.args:
        return "method", st.method.owner, st.method.name
    return None


def _defined_twice(m: IRMethod, v: Var) -> bool:
    return sum(1 for b in m.blocks.values() for s in b.stmts if s.defined() is v) != 1

