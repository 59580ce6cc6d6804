"""Patterns over e-nodes and their compilation to matchers and builders.

What this module owns
    The pattern data model, independent of any surface syntax (:mod:`peggy_jvm.rules` parses ``.ax`` files into
    it): :class:`PVar` (``?x``, an e-class), :class:`PNode` (an operator -- or an operator variable ranging over
    a set of operators -- an attribute constraint and child patterns), :class:`PAs` (``?t@(...)``: bind the class
    matched by a sub-pattern, which is how a rule says "the theta whose next refers to itself"), and attribute
    constraints :class:`AttrVar` / :class:`AttrLit`. :func:`compile_pattern` turns a left-hand side into a
    :class:`Matcher`; :func:`compile_builder` turns a right-hand side into a function that adds it.

How matching works (e-matching compiled to Python code)
    A substitution is a flat tuple: variables (class ``?x``, attribute ``$f``, operator ``%f``) get a slot in the
    order the matcher first meets them (depth first, left to right). Each left-hand side becomes one generated
    Python function that searches a root operator's classes whole (:class:`_CodeGen`): the root node is a loop
    body, each pattern node below it a nested loop over the child class's nodes of its operator
    (``EGraph.op_index``), each check a ``continue``, variables Python locals, a repeated variable a comparison,
    a rule's conditions checked as soon as their variables are bound. Ground sub-patterns (no variables, exact
    attributes, e.g. ``(const.i 0)``) are not scanned: their class is looked up once per search through the
    hash-cons memo and compared. The root is only tried on the classes that contain one of its operators (the
    op index), or on the given roots. A right-hand side becomes a generated function too
    (:func:`compile_builder`: nested ``eg.add`` calls, children before parents, left to right).

Invariants
    Matching runs between rebuilds only (all ids canonical, nothing added), so it never calls ``find``.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Sequence, Union

from .clock import clock as budget_clock
from .egraph import op_bit

if TYPE_CHECKING:
    from .egraph import EGraph

__all__ = ["PVar", "PNode", "PAs", "AttrVar", "AttrLit", "OpVar", "Pattern", "Matcher", "compile_pattern",
           "compile_builder", "pattern_vars", "pattern_ops", "Match"]


@dataclass(frozen=True, slots=True)
class PVar:
    name: str  # without the '?'


@dataclass(frozen=True, slots=True)
class AttrVar:
    name: str  # without the '$'


@dataclass(frozen=True, slots=True, eq=False)
class AttrLit:
    """An attribute literal. ``match`` (optional) decides what attributes it stands for when plain equality is
    too strict (a method reference written without its ``interface`` flag; any NaN)."""

    value: Hashable
    match: Callable[[Any], bool] | None = None
    text: str = ""

    @property
    def exact(self) -> bool:
        return self.match is None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AttrLit) and self.value == other.value and self.match is other.match

    def __hash__(self) -> int:
        return hash(self.value)


@dataclass(frozen=True, slots=True)
class OpVar:
    """An operator variable (``%f``) ranging over ``ops`` (all of one arity)."""

    name: str
    ops: frozenset[str]


@dataclass(frozen=True, slots=True)
class PNode:
    op: str | OpVar
    attr: AttrVar | AttrLit | None  # None: any attribute (left side) / no attribute (right side)
    children: tuple[Pattern, ...] = ()


@dataclass(frozen=True, slots=True)
class PAs:
    var: str
    pattern: PNode


Pattern = Union[PVar, PNode, PAs]
Match = tuple  # (root class id, env tuple)
_NODICT: dict = {}


def pattern_vars(p: Pattern, out: dict[str, None] | None = None) -> dict[str, None]:
    """Variables in first-occurrence order, prefixed: ``?x``, ``$f``, ``%f`` (the matcher's slot order)."""
    out = {} if out is None else out
    if isinstance(p, PVar):
        out.setdefault("?" + p.name)
    elif isinstance(p, PAs):
        out.setdefault("?" + p.var)
        pattern_vars(p.pattern, out)
    else:
        if isinstance(p.op, OpVar):
            out.setdefault("%" + p.op.name)
        if isinstance(p.attr, AttrVar):
            out.setdefault("$" + p.attr.name)
        for c in p.children:
            pattern_vars(c, out)
    return out


def pattern_ops(p: Pattern) -> set[str]:
    if isinstance(p, PVar):
        return set()
    if isinstance(p, PAs):
        return pattern_ops(p.pattern)
    ops = set(p.op.ops) if isinstance(p.op, OpVar) else {p.op}
    for c in p.children:
        ops |= pattern_ops(c)
    return ops


def _required(p: Pattern, out: set[frozenset[str]]) -> set[frozenset[str]]:
    if isinstance(p, PAs):
        return _required(p.pattern, out)
    if isinstance(p, PNode):
        out.add(p.op.ops if isinstance(p.op, OpVar) else frozenset((p.op,)))
        for c in p.children:
            _required(c, out)
    return out


def _mask(ops: Iterable[str]) -> int:
    out = 0
    for op in ops:
        out |= op_bit(op)
    return out


def _depth(p: Pattern) -> int:
    """How many edges below the root the matcher looks (a variable leaf counts: its id is compared/bound)."""
    if isinstance(p, PVar):
        return 0
    if isinstance(p, PAs):
        return _depth(p.pattern)
    return 1 + max((_depth(c) for c in p.children), default=-1)


def _is_ground(p: Pattern) -> bool:
    if not isinstance(p, PNode) or isinstance(p.op, OpVar):
        return False
    if p.attr is not None and not (isinstance(p.attr, AttrLit) and p.attr.exact):
        return False
    return all(_is_ground(c) for c in p.children)


def _lookup_ground(eg: EGraph, p: PNode) -> int | None:
    ch = []
    for c in p.children:
        cid = _lookup_ground(eg, c)  # type: ignore[arg-type]  # a ground pattern's children are ground nodes
        if cid is None:
            return None
        ch.append(cid)
    attr = p.attr.value if p.attr is not None else None  # type: ignore[union-attr]  # ground: an exact AttrLit
    return eg.lookup(p.op, attr, ch)  # type: ignore[arg-type]  # ground: op is an operator, not an OpVar


class Matcher:
    """A compiled left-hand side. ``slots`` lists the variables in env order; ``source`` is the generated code."""

    def __init__(self, pattern: Pattern, guards: Sequence[tuple[tuple[str, ...], Callable[..., bool]]] = ()) -> None:
        """``guards``: (variable keys such as ``?x``/``$l``, ``fn(eg, *their values) -> bool``) checked inside the
        matcher as soon as those variables are bound (a rule's conditions: failing early, not after enumerating
        every combination of the rest)."""
        self.pattern = pattern
        root = pattern.pattern if isinstance(pattern, PAs) else pattern
        if not isinstance(root, PNode):
            raise ValueError("a left-hand side must not be a bare variable")
        gen = _CodeGen(guards)
        self._search, self.source = gen.compile(pattern)
        self.slots = tuple(gen.slots)
        self.root_ops = tuple(sorted(root.op.ops)) if isinstance(root.op, OpVar) else (root.op,)
        self.depth = _depth(pattern)
        # every node of the pattern needs one of these op sets present in the graph (a cheap pre-filter)
        self.required_ops: tuple[frozenset[str], ...] = tuple(sorted(_required(pattern, set()), key=len))
        # the same as op masks (EGraph.op_mask; the runner asks every rule every time the graph's operators
        # change): the operators needed outright, and the sets of which one is needed (an operator variable's)
        self.needed_mask = _mask(op for ops in self.required_ops if len(ops) == 1 for op in ops)
        self.choice_masks = tuple(_mask(ops) for ops in self.required_ops if len(ops) > 1)

    def possible(self, present: int) -> bool:
        """False when some operator the pattern needs is nowhere in the graph (``present``: its op mask)."""
        if self.needed_mask & ~present:
            return False
        for choice in self.choice_masks:
            if not choice & present:
                return False
        return True

    def search(self, eg: EGraph, limit: int = 1 << 60, deadline: float = float("inf"),
               roots: set[int] | None = None) -> tuple[list[Match], bool]:
        """All matches (up to ``limit``) as (root class, env); the flag says the deadline passed mid-search.
        The root is matched node by node, so the limit is checked at every match and the deadline every 9 root
        nodes, even when one class holds many nodes (one node's matches alone can number millions).
        ``roots`` restricts the root classes (semi-naive matching, see :mod:`.runner`)."""
        search = self._search
        out: list[Match] = []
        op_index, class_ops = eg.op_index()
        # no deadline (the optimizer's untimed runs): nothing to read the clock for (a read can be a system call)
        clock = budget_clock if deadline != _INF else _no_clock
        tick = 0  # root nodes since the deadline was last checked (carried from one root operator to the next)
        for op in self.root_ops:
            entries = op_index.get(op)
            if not entries:
                continue
            if roots is not None:
                # rules share root operators and the runner shares root sets: filter once per (op, set)
                key = (op, id(roots))
                cached = eg._root_cache.get(key)
                if cached is None or cached[0] is not roots:
                    if len(roots) < len(entries):
                        cached = (roots, [(c, class_ops[c][op]) for c in roots if op in class_ops.get(c, _NODICT)])
                    else:
                        cached = (roots, [e for e in entries if e[0] in roots])
                    eg._root_cache[key] = cached
                entries = cached[1]
            tick, stop = search(eg, entries, out, limit, tick, deadline, clock)
            if stop:
                return out, stop == _LATE
        # the check the 9th root node since the last one is owed
        return out, tick > 8 and len(out) < limit and clock() > deadline


_INF = float("inf")


def _no_clock() -> float:
    """The clock of a search without a deadline: never past one."""
    return -_INF


_FULL, _LATE = 1, 2  # why a generated search stopped early: the limit reached, the deadline passed


class _CodeGen:
    """Generates one Python function per pattern, the whole search: ``m(eg, entries, out, cap, tick, deadline,
    clock)`` visits the root nodes of ``entries`` (``(class, its nodes of a root operator)`` pairs) and appends
    every match ``(root class, env)`` to ``out``; it returns the root-node count since the last deadline check
    and why it stopped (0: done, ``_FULL``: ``cap`` matches, ``_LATE``: the deadline passed). One call per root
    operator, so no Python call per root node.

    The root node is the body of a ``for`` loop; each pattern node below it becomes a ``for`` loop over the child
    class's nodes of that operator (from ``EGraph.op_index``'s per-class table); each check becomes ``if not
    ...: continue`` on the innermost loop, so nesting is one level per pattern node. A node's variable and ground
    children are checked before its other children are enumerated, and a rule's conditions as soon as their
    variables are bound. Ground sub-patterns' classes are looked up once per search (the graph does not change
    while it is searched). Variables live in Python locals ``v0, v1, ...`` (their env slots) and the env is built
    once, at the innermost point."""

    def __init__(self, guards: Sequence[tuple[tuple[str, ...], Callable[..., bool]]] = ()) -> None:
        self.slots: dict[str, int] = {}
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {}
        self.counter = 0
        self.guards = list(guards)
        self.grounds: dict[PNode, str] = {}  # ground sub-pattern -> the local holding its class

    def bind(self, key: str, expr: str, depth: int) -> None:
        """``v_k = expr`` for a new variable, then every guard whose variables are now all bound."""
        self.slots[key] = k = len(self.slots)
        self.emit(depth, f"v{k} = {expr}")
        ready = [g for g in self.guards if all(v in self.slots for v in g[0])]
        for g in ready:
            self.guards.remove(g)
            fn = self.const(g[1])
            args = "".join(f", v{self.slots[v]}" for v in g[0])
            self.emit(depth, f"if not {fn}(eg{args}): continue")

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, value: Any) -> str:
        name = self.fresh("K")
        self.ns[name] = value
        return name

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def compile(self, pattern: Pattern) -> tuple[Callable, str]:
        self.emit(0, "def m(eg, entries, out, cap, tick, deadline, clock):")
        self.emit(1, "CO = eg._class_ops")
        head = len(self.lines)  # the ground classes' lookups go here, once the body has named them
        self.emit(1, "for cid, nodes in entries:")
        self.emit(2, "for node in nodes:")
        # the deadline is checked after every 9 root nodes (here: before the 10th), as often as a Python call per
        # root node used to
        self.emit(3, "if tick > 8:")
        self.emit(4, "tick = 0")
        self.emit(4, f"if len(out) >= cap: return tick, {_FULL}")
        self.emit(4, f"if clock() > deadline: return tick, {_LATE}")
        self.emit(3, "tick += 1")
        root = pattern
        if isinstance(pattern, PAs):
            self.bind("?" + pattern.var, "cid", 3)
            root = pattern.pattern
        depth = self.node(root, "node", 3)  # type: ignore[arg-type]  # Matcher refused other roots
        if self.guards:
            raise ValueError(f"a condition uses variables the pattern does not bind: {self.guards[0][0]}")
        env = ", ".join(f"v{i}" for i in range(len(self.slots)))
        self.emit(depth, f"out.append((cid, ({env}{',' if len(self.slots) == 1 else ''})))")
        # one root node can hold millions of matches (phi(c, X, X) over a class of thousands of comparisons):
        # the search stops at the limit inside the node
        self.emit(depth, f"if len(out) >= cap: return tick, {_FULL}")
        self.emit(1, "return tick, 0")
        self.lines[head:head] = [f"    {name} = {self.const(_GroundClass(p))}(eg)" for p, name in self.grounds.items()]
        src = "\n".join(self.lines) + "\n"
        exec(_code(src, "<pattern>"), self.ns)  # noqa: S102 - our own generated matcher code
        return self.ns["m"], src

    def node(self, p: PNode, nv: str, depth: int) -> int:
        """Checks of node ``nv`` against ``p`` (its op is already known to be one of ``p``'s)."""
        n = len(p.children)
        ch = self.fresh("c")
        self.emit(depth, f"{ch} = {nv}[2]")
        self.emit(depth, f"if len({ch}) != {n}: continue")
        if isinstance(p.op, OpVar):
            key = "%" + p.op.name
            if key in self.slots:
                self.emit(depth, f"if {nv}[0] != v{self.slots[key]}: continue")
            else:
                ops = self.const(p.op.ops)
                self.emit(depth, f"if {nv}[0] not in {ops}: continue")
                self.bind(key, f"{nv}[0]", depth)
        if isinstance(p.attr, AttrLit):
            if p.attr.exact:
                val, typ = self.const(p.attr.value), self.const(type(p.attr.value))
                self.emit(depth, f"if {nv}[1] != {val} or type({nv}[1]) is not {typ}: continue")
            else:
                fn = self.const(p.attr.match)
                self.emit(depth, f"if not {fn}({nv}[1]): continue")
        elif isinstance(p.attr, AttrVar):
            key = "$" + p.attr.name
            if key in self.slots:
                self.emit(depth, f"if {nv}[1] != v{self.slots[key]}: continue")
            else:
                self.bind(key, f"{nv}[1]", depth)
        # variables and ground children first (cheap checks, and their guards), then the loops of the others
        order = sorted(range(n), key=lambda i: 0 if isinstance(p.children[i], PVar) or _is_ground(p.children[i])
                       else 1)
        for i in order:
            depth = self.cls(p.children[i], f"{ch}[{i}]", depth)
        return depth

    def cls(self, p: Pattern, cid: str, depth: int) -> int:
        """Checks of class id expression ``cid`` against ``p``."""
        if isinstance(p, PVar):
            key = "?" + p.name
            if key in self.slots:
                self.emit(depth, f"if {cid} != v{self.slots[key]}: continue")
            else:
                self.bind(key, cid, depth)
            return depth
        if isinstance(p, PAs):
            depth = self.cls(PVar(p.var), cid, depth)
            return self.cls(p.pattern, cid, depth)
        if _is_ground(p):
            g = self.grounds.get(p)
            if g is None:
                g = self.grounds[p] = self.fresh("G")
            self.emit(depth, f"if {cid} != {g}: continue")
            return depth
        nv = self.fresh("n")
        if isinstance(p.op, OpVar):
            opn, nsn = self.fresh("o"), self.fresh("s")
            ops = self.const(p.op.ops)
            self.emit(depth, f"for {opn}, {nsn} in CO[{cid}].items():")
            self.emit(depth + 1, f"if {opn} not in {ops}: continue")
            self.emit(depth + 1, f"for {nv} in {nsn}:")
            depth += 2
        else:
            self.emit(depth, f"for {nv} in CO[{cid}].get({p.op!r}, ()):")
            depth += 1
        return self.node(p, nv, depth)


class _GroundClass:
    """The class of a ground sub-pattern, looked up through the memo once per e-graph version. The key is the
    e-graph's serial number with its version: a rule set serves many e-graphs in turn, and two of them can be at
    the same version (a class id cached from one e-graph is another class, or none, in the next)."""

    def __init__(self, p: PNode) -> None:
        self.p = p
        self.key: tuple[int, int] = (-1, -1)
        self.cid: int | None = None

    def __call__(self, eg: EGraph) -> int | None:
        key = (eg.serial, eg.version)
        if self.key != key:
            self.cid = _lookup_ground(eg, self.p)
            self.key = key
        return self.cid


Builder = Callable[["EGraph", tuple], int]

#: generated source -> its compiled code. A code object is immutable and holds no constants of the rule (they are
#: names in the namespace each ``exec`` gets), so a rule set compiled again in the same process (the optimizer's,
#: the self-check's and validate's each load the default axioms) reuses it: ``compile`` was a third of loading
#: them. Bounded by the distinct rules a process compiles.
_CODE: dict[tuple[str, str], CodeType] = {}


def _code(src: str, name: str) -> CodeType:
    code = _CODE.get((src, name))
    if code is None:
        code = _CODE[(src, name)] = compile(src, name, "exec")
    return code


def compile_builder(p: Pattern, slots: dict[str, int]) -> Builder:
    """A function adding the right-hand side ``p`` under an env whose variables are at ``slots``: generated
    code, one nested ``eg.add`` call per node, children added before their parent, left to right."""
    ns: dict[str, Any] = {}

    def const(value: Any) -> str:
        name = f"K{len(ns)}"
        ns[name] = value
        return name

    def expr(q: Pattern) -> str:
        if isinstance(q, PVar):
            return f"env[{slots['?' + q.name]}]"
        if isinstance(q, PAs):
            raise ValueError("'@' is only allowed on a left-hand side")
        op = f"env[{slots['%' + q.op.name]}]" if isinstance(q.op, OpVar) else const(q.op)
        if isinstance(q.attr, AttrVar):
            attr = f"env[{slots['$' + q.attr.name]}]"
        else:
            attr = const(q.attr.value if isinstance(q.attr, AttrLit) else None)
        return f"add({op}, {attr}, [{', '.join(expr(c) for c in q.children)}])"
    body = expr(p)
    src = f"def build(eg, env):\n    add = eg.add\n    return {body}\n"
    exec(_code(src, "<builder>"), ns)  # noqa: S102 - our own generated builder code
    return ns["build"]


def compile_pattern(p: Pattern) -> Matcher:
    return Matcher(p)
