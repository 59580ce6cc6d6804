"""Rule conditions: the predicates an axiom may state after ``if``, with their e-graph meaning and, where one
exists, their meaning on concrete values (for the soundness checker).

What this module owns
    :data:`PREDICATES` (name -> :class:`Predicate`) and the facts behind them that need code: loop termination
    (:func:`index_terminates`), reference distinctness (:func:`distinct_refs`), non-nullness (:func:`nonnull`).

Each predicate is SOUND in one direction only: when it says yes the fact holds; no means "not known". So a rule
guarded by it never fires wrongly, it only sometimes fails to fire.

``invariant(?x, $l)``   the class does not vary in loop depth ``$l`` (variance analysis, see epeg.analyses)
``const(?x)``           the class equals a known constant
``nonzero(?x)``         the class is a known int/long constant other than 0
``pow2(?x)``            the class is a known int/long constant that is a positive power of two (1, 2, 4 ...)
``differ(?x, ?y)``      both are known constants and differ (two array indexes that are provably different)
``value(?x)``           the class is known not to be the heap (not a sigma, outcome or result)
``terminates(?i)``      the loop index ``?i`` is finite: ``zero``, ``succ`` of a finite index, or ``pass_l(c)``
                        where ``c`` is provably true at some iteration (see :func:`cond_terminates`)
``distinct(?a, ?b)``    the two references are provably different objects (see :func:`distinct_refs`)
``nonnull(?a)``         the reference is provably not null: a fresh allocation, a string/class literal, or
                        ``this`` (parameter 0 of an instance method)
``accessed(?s, ?a, ?i)`` element ``a[i]`` was read or written successfully earlier on heap ``?s``'s chain
                        (see :func:`accessed_before`), so accessing it again cannot throw
``read_before(?s, ?a, ?i)`` element ``a[i]`` was read earlier on ``?s``'s chain with only reads, checks and field
                        writes in between (see :func:`read_before`)
``stores($f, "IJ")``    the field / array element attribute stores one of the given descriptor kinds
                        (``I J F D B C S Z``, ``L`` for references and arrays)
``same_field($f, $g)``  the two field references are equal (owner, name and descriptor): the same field
``other_field($f, $g)`` the two field references have different names or descriptors, so they can never resolve
                        to the same field. (Different owners alone prove nothing: ``B.x`` may be ``A.x``
                        inherited, which is why plain ``$f != $g`` is not used on fields.)
``$a == $b``, ``$a != $b``  equality of two attributes or an attribute and a literal
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..ir.nodes import Const, ConstKind, FieldRef
from ..peg.ops import EFFECTS
from .attrs import stored_kind

if TYPE_CHECKING:
    from ..epeg import EPeg

__all__ = ["Predicate", "PREDICATES", "index_terminates", "cond_terminates", "distinct_refs", "nonnull", "accessed_before", "read_before"]


@dataclass(frozen=True)
class Predicate:
    name: str
    params: str  # one letter per argument: c = class variable, a = attribute variable, v = attribute or literal
    fn: Callable[..., bool]  # (egraph, *args) -> bool
    concrete: Callable[..., bool] | None = None  # (*values) -> bool, for the soundness checker; None: exempt
    deep: bool = False  # looks at classes beyond its arguments' own facts (rules using it are searched fully)


_DEPTH = 12  # how deep the code-backed facts look through a class's nodes


# -- loops ----------------------------------------------------------------------------------------------------
def index_terminates(eg: EPeg, idx: int, depth: int = 0) -> bool:
    """The iteration index ``idx`` is a finite number (so an ``eval`` at it is defined)."""
    if depth > _DEPTH:
        return False
    for op, attr, ch in eg.nodes(idx):
        if op == "zero":
            return True
        if op == "succ" and index_terminates(eg, ch[0], depth + 1):
            return True
        if op == "pass" and cond_terminates(eg, ch[0], attr, depth + 1):
            return True
    return False


def cond_terminates(eg: EPeg, c: int, loop: int, depth: int = 0) -> bool:
    """The loop-``loop`` condition ``c`` is true at some iteration. Known cases: the constant true; ``guard(s, c')``
    and ``or`` with a terminating operand (they are true at least where that operand is); and counters: ``i >= n``,
    ``i <= n`` and ``i == n`` where ``i`` steps by +1 or -1 from an invariant start and ``n`` is invariant: int
    wrap-around makes such an ``i`` visit every int value, so it meets ``n`` (and both ``MAX_VALUE >= n`` and
    ``MIN_VALUE <= n``). Not: ``i > n`` / ``i < n`` (never true for ``n`` = MAX / MIN), steps other than +-1 (they
    skip values)."""
    if depth > _DEPTH:
        return False
    if eg.const(c) == ("const.b", True):
        return True
    find = eg.find
    for op, _attr, ch in eg.nodes(c):
        if op == "guard":
            if cond_terminates(eg, ch[1], loop, depth + 1):
                return True
        elif op == "or":
            if cond_terminates(eg, ch[0], loop, depth + 1) or cond_terminates(eg, ch[1], loop, depth + 1):
                return True
        elif op in ("ge.i", "le.i", "eq.i"):
            a, b = find(ch[0]), find(ch[1])
            for ctr, bound in ((a, b), (b, a)):
                if eg.varies(bound, loop):
                    continue
                step = int_step(eg, ctr, loop)
                if step is None:
                    continue
                if step is not None:  # +-1 visits every int: any of >=, <=, == meets the bound
                    return True
    return False


def int_step(eg: EPeg, i: int, loop: int) -> int | None:
    """+1 or -1 when class ``i`` is ``theta_loop(a, i + step)`` with ``a`` invariant in ``loop``."""
    find = eg.find
    i = find(i)
    for op, attr, ch in eg.nodes(i):
        if op != "theta" or attr != loop or eg.varies(ch[0], loop):
            continue
        for nop, _a, nch in eg.nodes(ch[1]):
            if nop not in ("add.i", "sub.i"):
                continue
            for x, k in ((nch[0], nch[1]), (nch[1], nch[0])) if nop == "add.i" else ((nch[0], nch[1]),):
                kc = eg.const(k)
                if find(x) == i and kc is not None and kc[0] == "const.i":
                    step = kc[1] if nop == "add.i" else -kc[1]
                    if step in (1, -1):
                        return step
    return None


# -- references -----------------------------------------------------------------------------------------------
def _fresh(eg: EPeg, x: int) -> list[tuple[int, tuple]]:
    """(effect class, allocation node) for every fresh allocation ``x`` is known to be the result of."""
    out = []
    for op, _a, ch in eg.nodes(x):
        if op == "rho_value":
            for n in eg.nodes(ch[0]):
                if n[0] in ("new", "newarray"):
                    out.append((eg.find(ch[0]), n))
    return out


def _preexisting(eg: EPeg, x: int) -> bool:
    """``x`` is a parameter or a constant: it existed before any allocation of this method."""
    return any(op in ("param", "const.a") for op, _a, _c in eg.nodes(x))


def _history(eg: EPeg, sigma: int, limit: int = 64) -> Iterator[tuple[int, tuple]]:
    """The effects heap ``sigma`` comes after, nearest first: (effect class, effect node) for each ``rho_sigma``
    of the chain, walked back through effects' sigma inputs (not through loops or branches), at most ``limit``
    heap classes deep."""
    find = eg.find
    seen: set[int] = set()
    stack = [find(sigma)]
    while stack and len(seen) < limit:
        s = stack.pop()
        if s in seen:
            continue
        seen.add(s)
        for op, _a, ch in eg.nodes(s):
            if op != "rho_sigma":
                continue
            e = find(ch[0])
            for n in eg.nodes(e):
                if n[0] in EFFECTS:
                    yield e, n
                    stack.append(find(n[2][0]))


def _after(eg: EPeg, sigma: int, effect: int) -> bool:
    """Heap ``sigma`` comes after the outcome of ``effect`` on the sigma chain."""
    return any(e == effect for e, _n in _history(eg, sigma))


def accessed_before(eg: EPeg, sigma: int, a: int, i: int) -> bool:
    """Element ``a[i]`` was read or written successfully on heap ``sigma``'s history (:func:`_history`). Then
    ``a`` is not null and ``i`` is in bounds, and both stay so: ``a`` and ``i`` are values and an array's length
    never changes (JLS 10.7), so another access of ``a[i]`` on ``sigma`` cannot throw NullPointerException or
    ArrayIndexOutOfBoundsException."""
    find = eg.find
    a, i = find(a), find(i)
    return any(n[0] in ("aload", "astore") and find(n[2][1]) == a and find(n[2][2]) == i
               for _e, n in _history(eg, sigma))


#: effects an element read's value is looked through by the heap.array.read rules (aload-over-*)
_LOOKED_THROUGH = ("aload", "arraylength", "getfield", "putfield", "check.zero.i")


def read_before(eg: EPeg, sigma: int, a: int, i: int) -> bool:
    """Element ``a[i]`` was read successfully on heap ``sigma``'s history with only effects in between that an
    element read's value is looked through (:data:`_LOOKED_THROUGH`): then reading it again cannot throw (as
    :func:`accessed_before`) and its value is the earlier read's, so a read taken off the sigma chain on this
    ground always shares its value with one on the chain (an extraction can use it)."""
    find = eg.find
    a, i = find(a), find(i)
    s = find(sigma)
    for _ in range(64):
        step = None
        for op, _a, ch in eg.nodes(s):
            if op != "rho_sigma":
                continue
            for n in eg.nodes(ch[0]):
                if n[0] == "aload" and find(n[2][1]) == a and find(n[2][2]) == i:
                    return True
                if n[0] in _LOOKED_THROUGH and step is None:
                    step = find(n[2][0])
        if step is None:
            return False
        s = step
    return False


def distinct_refs(eg: EPeg, a: int, b: int) -> bool:
    """Provably different objects: a fresh allocation and a parameter, constant or null; two allocations of
    different classes; or two allocations where one happens after the other on the sigma chain. (Two allocation
    nodes in different e-classes are NOT enough: they may be one allocation not yet proved equal.)"""
    fa, fb = _fresh(eg, a), _fresh(eg, b)
    if fa and _preexisting(eg, b) or fb and _preexisting(eg, a):
        return True
    for ea, na in fa:
        for eb, nb in fb:
            if ea == eb:
                continue
            if na[0] != nb[0] or _alloc_class(na) != _alloc_class(nb):
                return True
            if _after(eg, nb[2][0], ea) or _after(eg, na[2][0], eb):
                return True
    return False


def _alloc_class(node: tuple) -> Any:
    attr = node[1]
    return attr[0] if node[0] == "new" and isinstance(attr, tuple) and attr else attr


def nonnull(eg: EPeg, x: int) -> bool:
    if _fresh(eg, x):
        return True
    for op, attr, _c in eg.nodes(x):
        if op == "const.a" and isinstance(attr, Const) and not (attr.kind is ConstKind.VALUE and attr.value is None):
            return True
        if op == "param" and attr == 0 and eg.info.is_static is False:
            return True
    return False


# -- the table ------------------------------------------------------------------------------------------------
def _const_int(eg: EPeg, x: int) -> Any:
    k = eg.const(x)
    return k[1] if k is not None and k[0] in ("const.i", "const.l") else None


def _is_pow2(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0 and v & (v - 1) == 0


def _differ(eg: EPeg, a: int, b: int) -> bool:
    ka, kb = eg.const(a), eg.const(b)
    return ka is not None and kb is not None and ka[0] == kb[0] and ka != kb


def _other_field(_eg: EPeg, f: Any, g: Any) -> bool:
    return isinstance(f, FieldRef) and isinstance(g, FieldRef) and (f.name != g.name or f.descriptor != g.descriptor)


def _stores(_eg: EPeg, f: Any, kinds: Any) -> bool:
    k = stored_kind(f)
    return k is not None and isinstance(kinds, str) and k in kinds


def _true(*_args: Any) -> bool:
    return True


PREDICATES: dict[str, Predicate] = {p.name: p for p in [
    Predicate("invariant", "ca", lambda eg, x, l: isinstance(l, int) and not eg.varies(x, l), _true),
    Predicate("const", "c", lambda eg, x: eg.const(x) is not None, _true),
    Predicate("nonzero", "c", lambda eg, x: _const_int(eg, x) not in (None, 0), lambda v: v != 0),
    Predicate("pow2", "c", lambda eg, x: _is_pow2(_const_int(eg, x)), _is_pow2),
    Predicate("value", "c", lambda eg, x: eg.is_linear(x) is False, _true),
    Predicate("terminates", "c", index_terminates, deep=True),
    Predicate("distinct", "cc", distinct_refs, deep=True),
    Predicate("nonnull", "c", nonnull, deep=True),
    Predicate("accessed", "ccc", accessed_before, deep=True),
    Predicate("read_before", "ccc", read_before, deep=True),
    Predicate("differ", "cc", _differ, lambda a, b: a != b),
    Predicate("stores", "av", _stores),
    Predicate("same_field", "aa", lambda _eg, f, g: isinstance(f, FieldRef) and f == g),
    Predicate("other_field", "aa", _other_field),
    Predicate("==", "vv", lambda _eg, a, b: a == b and type(a) is type(b), lambda a, b: a == b),
    Predicate("!=", "vv", lambda _eg, a, b: not (a == b and type(a) is type(b)), lambda a, b: a != b),
]}
