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
    order the matcher first meets them (depth first, left to right), so binding is ``env + (value,)`` and a
    repeated variable is a comparison with ``env[slot]``. Each pattern position becomes a closure
    ``m(eg, class id, env) -> list of envs``. Ground sub-patterns (no variables, exact attributes, e.g. ``(const.i
    0)``) are not scanned: their class is looked up once per e-graph version through the hash-cons memo and
    compared. The root is only tried on the classes that contain one of its operators (``EGraph.classes_with_op``).

Invariants
    Matching runs between rebuilds only (all ids canonical, nothing added), so it never calls ``find``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Hashable, Sequence, Union

from .clock import clock as budget_clock

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
        self._root_node, self.source = gen.compile(pattern)
        self.slots = tuple(gen.slots)
        self.root_ops = tuple(sorted(root.op.ops)) if isinstance(root.op, OpVar) else (root.op,)
        self.depth = _depth(pattern)
        # every node of the pattern needs one of these op sets present in the graph (a cheap pre-filter)
        self.required_ops: tuple[frozenset[str], ...] = tuple(sorted(_required(pattern, set()), key=len))
        # the same, split for speed (the runner asks every rule every iteration): the operators needed outright,
        # and the sets of which one is needed (an operator variable's)
        self._needed = frozenset(op for ops in self.required_ops if len(ops) == 1 for op in ops)
        self._choices = tuple(ops for ops in self.required_ops if len(ops) > 1)

    def possible(self, present: dict) -> bool:
        """False when some operator the pattern needs is nowhere in the graph (``present``: the op index)."""
        ops = present.keys()
        if not self._needed <= ops:
            return False
        for choice in self._choices:
            if ops.isdisjoint(choice):
                return False
        return True

    def match_class(self, eg: EGraph, cid: int) -> list[tuple]:
        _, class_ops = eg.op_index()
        out: list = []
        for op in self.root_ops:
            for node in class_ops[cid].get(op, ()):
                self._root_node(eg, cid, node, out)
        return [env for _c, env in out]

    def search(self, eg: EGraph, limit: int = 1 << 60, deadline: float = float("inf"),
               roots: set[int] | None = None) -> tuple[list[Match], bool]:
        """All matches (up to about ``limit``) as (root class, env); the flag says the deadline passed mid-search.
        The root is matched node by node, so the limit and the deadline are checked often even when one class
        holds many nodes; the limit is also checked inside a node, whose matches alone can number millions.
        ``roots`` restricts the root classes (semi-naive matching, see :mod:`.runner`)."""
        node_fn = self._root_node
        out: list[Match] = []
        op_index, class_ops = eg.op_index()
        clock = budget_clock
        tick = 0
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
            for cid, nodes in entries:
                for node in nodes:
                    node_fn(eg, cid, node, out, limit)
                    tick += 1
                    if tick > 8:
                        tick = 0
                        if len(out) >= limit:
                            return out, False
                        if clock() > deadline:
                            return out, True
        return out, False


class _CodeGen:
    """Generates one Python function per pattern: ``m(eg, root class, root node, out)`` appends every match
    ``(root class, env)``.

    Each pattern node below the root becomes a ``for`` loop over the child class's nodes of that operator (from
    ``EGraph.op_index``'s per-class table); each check becomes ``if not ...: continue`` on the innermost loop
    (or ``return`` at the root), so nesting is one level per pattern node. A node's variable and ground children
    are checked before its other children are enumerated, and a rule's conditions as soon as their variables
    are bound. Variables live in Python locals
    ``v0, v1, ...`` (their env slots) and the env is built once, at the innermost point."""

    def __init__(self, guards: Sequence[tuple[tuple[str, ...], Callable[..., bool]]] = ()) -> None:
        self.slots: dict[str, int] = {}
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {}
        self.counter = 0
        self.guards = list(guards)

    def bind(self, key: str, expr: str, depth: int, in_loop: bool) -> None:
        """``v_k = expr`` for a new variable, then every guard whose variables are now all bound."""
        self.slots[key] = k = len(self.slots)
        self.emit(depth, f"v{k} = {expr}")
        ready = [g for g in self.guards if all(v in self.slots for v in g[0])]
        for g in ready:
            self.guards.remove(g)
            fn = self.const(g[1])
            args = "".join(f", v{self.slots[v]}" for v in g[0])
            self.emit(depth, f"if not {fn}(eg{args}): {self.fail(depth, in_loop)}")

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, value: Any) -> str:
        name = self.fresh("K")
        self.ns[name] = value
        return name

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def fail(self, depth: int, in_loop: bool) -> str:
        return "continue" if in_loop else "return"

    def compile(self, pattern: Pattern) -> tuple[Callable, str]:
        self.emit(0, f"def m(eg, cid, node, out, cap={1 << 60}):")
        self.emit(1, "CO = eg._class_ops")
        depth = 1
        root = pattern
        if isinstance(pattern, PAs):
            self.bind("?" + pattern.var, "cid", 1, False)
            root = pattern.pattern
        depth, in_loop = self.node(root, "node", depth, False)  # type: ignore[arg-type]  # __init__ refused other roots
        if self.guards:
            raise ValueError(f"a condition uses variables the pattern does not bind: {self.guards[0][0]}")
        env = ", ".join(f"v{i}" for i in range(len(self.slots)))
        self.emit(depth, f"out.append((cid, ({env}{',' if len(self.slots) == 1 else ''})))")
        # one root node can hold millions of matches (phi(c, X, X) over a class of thousands of comparisons):
        # the search stops at the limit inside the node, not after it
        self.emit(depth, "if len(out) >= cap: return")
        src = "\n".join(self.lines) + "\n"
        exec(compile(src, "<pattern>", "exec"), self.ns)  # noqa: S102 - our own generated matcher code
        return self.ns["m"], src

    def node(self, p: PNode, nv: str, depth: int, in_loop: bool) -> tuple[int, bool]:
        """Checks of node ``nv`` against ``p`` (its op is already known to be one of ``p``'s)."""
        fail = self.fail(depth, in_loop)
        n = len(p.children)
        ch = self.fresh("c")
        self.emit(depth, f"{ch} = {nv}[2]")
        self.emit(depth, f"if len({ch}) != {n}: {fail}")
        if isinstance(p.op, OpVar):
            key = "%" + p.op.name
            if key in self.slots:
                self.emit(depth, f"if {nv}[0] != v{self.slots[key]}: {fail}")
            else:
                ops = self.const(p.op.ops)
                self.emit(depth, f"if {nv}[0] not in {ops}: {fail}")
                self.bind(key, f"{nv}[0]", depth, in_loop)
        if isinstance(p.attr, AttrLit):
            if p.attr.exact:
                val, typ = self.const(p.attr.value), self.const(type(p.attr.value))
                self.emit(depth, f"if {nv}[1] != {val} or type({nv}[1]) is not {typ}: {fail}")
            else:
                fn = self.const(p.attr.match)
                self.emit(depth, f"if not {fn}({nv}[1]): {fail}")
        elif isinstance(p.attr, AttrVar):
            key = "$" + p.attr.name
            if key in self.slots:
                self.emit(depth, f"if {nv}[1] != v{self.slots[key]}: {fail}")
            else:
                self.bind(key, f"{nv}[1]", depth, in_loop)
        # variables and ground children first (cheap checks, and their guards), then the loops of the others
        order = sorted(range(n), key=lambda i: 0 if isinstance(p.children[i], PVar) or _is_ground(p.children[i])
                       else 1)
        for i in order:
            depth, in_loop = self.cls(p.children[i], f"{ch}[{i}]", depth, in_loop)
        return depth, in_loop

    def cls(self, p: Pattern, cid: str, depth: int, in_loop: bool) -> tuple[int, bool]:
        """Checks of class id expression ``cid`` against ``p``."""
        fail = self.fail(depth, in_loop)
        if isinstance(p, PVar):
            key = "?" + p.name
            if key in self.slots:
                self.emit(depth, f"if {cid} != v{self.slots[key]}: {fail}")
            else:
                self.bind(key, cid, depth, in_loop)
            return depth, in_loop
        if isinstance(p, PAs):
            depth, in_loop = self.cls(PVar(p.var), cid, depth, in_loop)
            return self.cls(p.pattern, cid, depth, in_loop)
        if _is_ground(p):
            g = self.const(_GroundClass(p))
            self.emit(depth, f"if {cid} != {g}(eg): {fail}")
            return depth, in_loop
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
        return self.node(p, nv, depth, True)


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


def compile_builder(p: Pattern, slots: dict[str, int]) -> Builder:
    """A function adding the right-hand side ``p`` under an env whose variables are at ``slots``."""
    if isinstance(p, PVar):
        k = slots["?" + p.name]
        return lambda eg, env: env[k]
    if isinstance(p, PAs):
        raise ValueError("'@' is only allowed on a left-hand side")
    if isinstance(p.op, OpVar):
        ok = slots["%" + p.op.name]
        get_op: Callable[[tuple], str] = lambda env: env[ok]  # noqa: E731
    else:
        op = p.op
        get_op = lambda env: op  # noqa: E731
    if isinstance(p.attr, AttrVar):
        ak = slots["$" + p.attr.name]
        get_attr: Callable[[tuple], Any] = lambda env: env[ak]  # noqa: E731
    else:
        val = p.attr.value if isinstance(p.attr, AttrLit) else None
        get_attr = lambda env: val  # noqa: E731
    kids = [compile_builder(c, slots) for c in p.children]

    def build(eg: EGraph, env: tuple) -> int:
        return eg.add(get_op(env), get_attr(env), [k(eg, env) for k in kids])
    return build


def compile_pattern(p: Pattern) -> Matcher:
    return Matcher(p)
