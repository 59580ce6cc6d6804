"""Why two e-classes are equal: the proof log and explanations.

What this module owns
    :class:`Reason` (the rule that caused a union and the substitution or matched ids it used), :class:`ProofLog`
    (an undirected graph over e-class ids whose edges are the unions, each labelled with its reason) and
    :class:`Explanation` (the chain of rule applications connecting two ids, with the congruence steps expanded
    into explanations of their children on demand).

Inputs / outputs
    :meth:`ProofLog.record` is called by :meth:`EGraph.union <peggy_jvm.egraph.egraph.EGraph.union>` for every
    union that merged two classes; :meth:`EGraph.explain` calls :func:`explain` with its proof log and its
    rendering of ids (so this module knows no e-graph: it imports nothing of the package).

Invariants
    * Every id ever created is a vertex; every union that merged two classes adds exactly one edge between the two
      ids it was called with (not their representatives). Two ids are connected in this graph exactly when the
      union-find says they are in one class, so a breadth-first search always finds a chain for equal classes.
      (This is egg's "proof forest" idea in its simplest form: no shortest-proof guarantee, but every step of a
      chain is a real union with its real reason.)
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

CONGRUENCE = "congruence"


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a union happened. ``rule`` names the rule (or ``congruence``, ``import``, ...). ``names``/``values``
    are the substitution (pattern variable names and the ids or attributes bound to them); for a congruence
    step ``values`` holds the two nodes' child ids, pairwise equal."""

    rule: str
    names: tuple[str, ...] = ()
    values: tuple[Any, ...] = ()

    def substitution(self) -> dict[str, Any]:
        return dict(zip(self.names, self.values))

    def __str__(self) -> str:
        if not self.names:
            return self.rule
        args = ", ".join(f"{n}={v}" for n, v in zip(self.names, self.values))
        return f"{self.rule} [{args}]"


class ProofLog:
    """Reason edges between e-class ids (see the module docstring)."""

    __slots__ = ("_adj", "unions")

    def __init__(self) -> None:
        self._adj: dict[int, list[tuple[int, Reason]]] = {}
        self.unions = 0

    def record(self, a: int, b: int, reason: Reason) -> None:
        self._adj.setdefault(a, []).append((b, reason))
        self._adj.setdefault(b, []).append((a, reason))
        self.unions += 1

    def path(self, a: int, b: int) -> list[tuple[int, int, Reason]] | None:
        """The edges of a shortest chain ``a -> ... -> b`` (breadth-first), or None when not connected."""
        if a == b:
            return []
        prev: dict[int, tuple[int, Reason]] = {a: (a, Reason("start"))}
        queue = deque([a])
        adj = self._adj
        while queue:
            x = queue.popleft()
            for y, r in adj.get(x, ()):
                if y in prev:
                    continue
                prev[y] = (x, r)
                if y == b:
                    steps: list[tuple[int, int, Reason]] = []
                    while y != a:
                        x, r = prev[y]
                        steps.append((x, y, r))
                        y = x
                    steps.reverse()
                    return steps
                queue.append(y)
        return None


@dataclass
class Step:
    """One union on the chain: ``src`` and ``dst`` are ids (each names the e-node it was created for), ``reason``
    the rule; ``children`` explains a congruence step (one explanation per differing child pair)."""

    src: int
    dst: int
    reason: Reason
    src_term: str
    dst_term: str
    children: list[Explanation] = field(default_factory=list)

    @property
    def rule(self) -> str:
        return self.reason.rule


@dataclass
class Explanation:
    """A chain of unions from id ``a`` to id ``b``."""

    a: int
    b: int
    steps: list[Step]

    def rules(self) -> list[str]:
        """Every rule used, in chain order, congruence steps replaced by the rules that justify them. An
        explanation shared by several steps (``explain`` explains each pair once) is walked once: walking the
        sharing as a tree is exponential in the depth."""
        out: list[str] = []
        seen: set[int] = set()
        stack: list[Explanation | str] = [self]
        while stack:
            e = stack.pop()
            if isinstance(e, str):
                out.append(e)
                continue
            if id(e) in seen:
                continue
            seen.add(id(e))
            todo: list[Explanation | str] = []
            for s in e.steps:
                if s.reason.rule == CONGRUENCE and s.children:
                    todo.extend(s.children)
                else:
                    todo.append(s.reason.rule)
            stack.extend(reversed(todo))
        return out

    def __str__(self) -> str:
        return "\n".join(self._lines(0))

    def _lines(self, depth: int) -> list[str]:
        pad = "  " * depth
        lines = [f"{pad}{self.steps[0].src_term if self.steps else self.a}"] if depth == 0 else []
        for s in self.steps:
            lines.append(f"{pad}  = {s.dst_term}    by {s.reason}")
            for c in s.children:
                lines.extend(c._lines(depth + 2))
        return lines


def explain(proof: ProofLog, term: Callable[[int], str], a: int, b: int, *, depth: int = 3) -> Explanation | None:
    """The chain of unions in ``proof`` connecting ids ``a`` and ``b`` (``term`` renders an id); congruence
    steps are expanded ``depth`` levels deep (each differing child pair explained in turn, each pair once: a pair
    met again shares its explanation). None when the two ids are not in one class."""
    return _explain(proof, term, a, b, depth, set(), {})


def _explain(proof: ProofLog, term: Callable[[int], str], a: int, b: int, depth: int, busy: set[tuple[int, int]],
             done: dict[tuple[int, int], Explanation | None]) -> Explanation | None:
    if (a, b) in done:
        return done[(a, b)]
    path = proof.path(a, b)
    if path is None:
        return None
    busy.add((a, b))
    steps: list[Step] = []
    for x, y, r in path:
        step = Step(x, y, r, term(x), term(y))
        if r.rule == CONGRUENCE and depth > 0 and len(r.values) == 2:
            for ca, cb in zip(*r.values):
                if ca != cb and (ca, cb) not in busy:
                    sub = _explain(proof, term, ca, cb, depth - 1, busy, done)
                    if sub is not None and sub.steps:
                        step.children.append(sub)
        steps.append(step)
    busy.discard((a, b))
    done[(a, b)] = Explanation(a, b, steps)
    return done[(a, b)]
