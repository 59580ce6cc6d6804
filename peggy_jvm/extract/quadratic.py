"""Extraction problems that are quadratic functions of binary choices (Max-2-SAT and max-cut as e-graphs): a
tabu search for good selections and a spectral lower bound, certified in exact integer arithmetic.

What this module owns
    :func:`quadratic_model` recognises the shape and writes the problem's objective as a quadratic function;
    :func:`tabu_search` improves a selection of it; :func:`spectral_proves` proves that no selection weighs
    less than a given weight.  ``maxsat.solve`` runs them before the MaxSAT encoding, within its extra work
    share: on this shape RC2's cores prove too little (each clause left unsatisfied at the optimum needs one),
    and the LP-based bounds count every reward as collected.

The shape (checked on the problem as given; anything else gives None)
    * one root class with one node ``r``, whose children are the *decision* classes;
    * a decision class has exactly two nodes, ``plus`` and ``minus`` (variable ``x_i`` = +1 or -1), whose
      children are *leaf* classes only;
    * a leaf class has one node and no children, and is a child of at most two decision nodes (its
      *literals*); when those are the two nodes of one decision class, it is always reached.
    Valid selections are then exactly the 2^k choices of the decision classes (no cycle is possible), and a
    selection's integer weight (``problem.integer_costs``) times four is
    ``F(x) = const + sum(lin[i] x_i) + sum(quad[i, j] x_i x_j)`` with integer coefficients: a leaf of weight w
    reached by one literal ``s x_i`` costs ``2w (1 + s x_i)``, by two ``w (3 + s x_i + t x_j - s t x_i x_j)``
    (it is reached unless both literals are false), a decision node ``2w (1 +- x_i)``.

The spectral bound
    With ``y = (1, x)`` (the leading 1 dropped when no ``lin`` is non-zero) and ``A`` the symmetric matrix with
    zero diagonal, ``A[0, i] = lin[i]`` and ``A[i, j] = quad[i, j]``, ``F = const + y^T A y / 2``, and since
    ``y^T y = N`` (its length) for every ``y`` in {-1, +1}^N, ``F > const + N * nu / 2`` whenever ``A - nu I``
    is positive definite (``nu`` below the least eigenvalue).  To prove that no selection weighs less than B
    it is enough that F > 4B - 4 (F is a multiple of four): ``nu = 2 (4B - 4 - const) / N``, that is, the
    integer matrix ``N A - 2 (4B - 4 - const) I`` positive definite, checked by fraction-free (Bareiss)
    elimination: its pivots are the leading principal minors, all positive exactly when it is (Sylvester).
    A floating-point Cholesky factorisation runs first and only decides whether the exact check is worth its
    work: the proof is the exact check alone.  On max-cut it is the Laplacian's eigenvalue bound, tight where
    a top eigenvector is a +-1 cut, as on hamming6-2 (992 edges cut) and johnson8-4-4 (1085): there, with the
    tabu search's selection, it proves the optimum.  On random graphs it is far above the optimum.

Invariants
    * No clock and no randomness beyond a fixed-seed generator of its own: results and work are functions of
      the arguments.  Work units: per tabu move the variables scanned plus the neighbours updated; per
      elimination step the entries updated (both checks).
    * ``spectral_proves`` answers True only with the exact check passed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from .problem import ClassId, ExtractionProblem, NodeId, Selection

__all__ = ["QuadraticModel", "quadratic_model", "TabuResult", "tabu_search", "spectral_proves"]


@dataclass(frozen=True)
class QuadraticModel:
    """``4 * weight`` of the selection choosing ``plus[i]`` where ``x_i = +1`` and ``minus[i]`` elsewhere is
    ``const + sum(lin[i] x_i) + sum(c x_i x_j for (j, c) in adj[i] if i < j)``."""

    root: NodeId
    root_class: ClassId
    classes: tuple[ClassId, ...]
    plus: tuple[NodeId, ...]
    minus: tuple[NodeId, ...]
    #: leaf class -> its node (chosen whether or not reached: a selection ignores unreached classes)
    leaves: Mapping[ClassId, NodeId]
    const: int
    lin: tuple[int, ...]
    #: per variable, (other variable, coefficient) for each non-zero quadratic term, in variable order
    adj: tuple[tuple[tuple[int, int], ...], ...]

    def value(self, x: Sequence[int]) -> int:
        """F(x): four times the weight of the selection of ``x``."""
        total = self.const + sum(b * xi for b, xi in zip(self.lin, x))
        total += sum(c * x[i] * x[j] for i, row in enumerate(self.adj) for j, c in row if i < j)
        return total

    def selection(self, x: Sequence[int]) -> Selection:
        choices: dict[ClassId, NodeId] = dict(self.leaves)
        choices.update((c, p if xi > 0 else m) for c, p, m, xi in zip(self.classes, self.plus, self.minus, x))
        choices[self.root_class] = self.root
        return Selection(choices)

    def assignment(self, choices: Mapping[ClassId, NodeId]) -> list[int]:
        """The x of a selection (a decision class it leaves out counts as ``minus``)."""
        return [1 if choices.get(c) == p else -1 for c, p in zip(self.classes, self.plus)]


def quadratic_model(problem: ExtractionProblem, weight: Mapping[NodeId, int]) -> QuadraticModel | None:
    """The problem as a :class:`QuadraticModel` when it has the shape in the module docstring, else None."""
    if len(problem.roots) != 1 or len(problem.classes[problem.roots[0]]) != 1:
        return None
    root_class = problem.roots[0]
    r = problem.nodes[problem.classes[root_class][0]]
    decisions = list(dict.fromkeys(r.children))
    index = {c: i for i, c in enumerate(decisions)}
    if root_class in index:
        return None
    plus: list[NodeId] = []
    minus: list[NodeId] = []
    # leaf class -> the literals reaching it, as (variable, sign)
    reach: dict[ClassId, list[tuple[int, int]]] = {}
    for i, c in enumerate(decisions):
        members = problem.classes[c]
        if len(members) != 2:
            return None
        plus.append(members[0])
        minus.append(members[1])
        for sign, nid in ((1, members[0]), (-1, members[1])):
            for d in dict.fromkeys(problem.nodes[nid].children):
                if d in index or d == root_class:
                    return None
                leaf = problem.classes[d]
                if len(leaf) != 1 or problem.nodes[leaf[0]].children:
                    return None
                reach.setdefault(d, []).append((i, sign))
    const = 4 * weight[r.id]
    lin = [2 * (weight[p] - weight[m]) for p, m in zip(plus, minus)]
    const += sum(2 * (weight[p] + weight[m]) for p, m in zip(plus, minus))
    quad: dict[tuple[int, int], int] = {}
    for d, lits in reach.items():
        w = weight[problem.classes[d][0]]
        if len(lits) == 1:
            (i, s), = lits
            const += 2 * w
            lin[i] += 2 * w * s
        elif len(lits) == 2 and lits[0][0] != lits[1][0]:
            (i, s), (j, t) = lits
            const += 3 * w
            lin[i] += w * s
            lin[j] += w * t
            key = (min(i, j), max(i, j))
            quad[key] = quad.get(key, 0) - w * s * t
        elif len(lits) == 2:  # both nodes of one decision class: always reached
            const += 4 * w
        else:
            return None
    adj: list[list[tuple[int, int]]] = [[] for _ in decisions]
    for (i, j), coef in sorted(quad.items()):
        if coef:
            adj[i].append((j, coef))
            adj[j].append((i, coef))
    for row in adj:
        row.sort()
    return QuadraticModel(r.id, root_class, tuple(decisions), tuple(plus), tuple(minus),
                          {d: problem.classes[d][0] for d in reach}, const, tuple(lin),
                          tuple(tuple(row) for row in adj))


# ============================================================================================ tabu search

@dataclass(frozen=True)
class TabuResult:
    #: the best assignment met (the start when nothing better was) and its F
    x: tuple[int, ...]
    value: int
    work: int
    moves: int


#: a flipped variable stays put for this many moves plus a pseudo-random share of a tenth of the variables
#: (at most half of them: some move is always allowed)
_TENURE = 7
#: moves without a new best before the search starts again from its best with a tenth of the variables
#: flipped; after this many such restarts in a row it ends (on small problems long before its work is spent)
_STALL = 2000
_RESTARTS = 4


def tabu_search(model: QuadraticModel, start: Sequence[int], work: int) -> TabuResult:
    """Single-flip tabu search minimising F from ``start`` within ``work`` units (see the module docstring):
    each move flips the best variable not flipped in the last few moves (a flip reaching a new best is always
    allowed); ties go to the lowest index.  Stops early after ``_RESTARTS`` restarts without a new best."""
    k = len(model.lin)
    x = list(start)
    field = _fields(model, x)
    value = model.value(x)
    best, best_x = value, tuple(x)
    tabu_until = [0] * k
    spent = k + sum(len(row) for row in model.adj)
    moves = since_best = restarts = 0
    seed = 12345
    while spent < work and k:
        moves += 1
        spent += k
        pick, pick_delta = -1, 0
        for i in range(k):
            delta = -2 * x[i] * field[i]
            if (tabu_until[i] <= moves or value + delta < best) and (pick < 0 or delta < pick_delta):
                pick, pick_delta = i, delta
        value += pick_delta
        x[pick] = -x[pick]
        for j, c in model.adj[pick]:
            field[j] += 2 * c * x[pick]
        spent += len(model.adj[pick])
        seed = _next(seed)
        tabu_until[pick] = moves + min(k // 2, _TENURE + seed % (k // 10 + 1))
        if value < best:
            best, best_x, since_best, restarts = value, tuple(x), 0, 0
        else:
            since_best += 1
            if since_best >= _STALL:  # restart from the best with a few variables flipped
                restarts += 1
                if restarts > _RESTARTS:
                    break
                since_best = 0
                x = list(best_x)
                for _ in range(max(1, k // 10)):
                    seed = _next(seed)
                    x[seed % k] = -x[seed % k]
                field = _fields(model, x)
                value = model.value(x)
                spent += k + sum(len(row) for row in model.adj)
    return TabuResult(best_x, best, spent, moves)


def _next(seed: int) -> int:
    """A fixed linear congruential generator: the same moves on every run and machine."""
    return (seed * 1103515245 + 12345) % 2**31


def _fields(model: QuadraticModel, x: Sequence[int]) -> list[int]:
    """Per variable i, dF/dx_i at x: flipping x_i changes F by ``-2 x_i field[i]``."""
    return [b + sum(c * x[j] for j, c in row) for b, row in zip(model.lin, model.adj)]


# ============================================================================================ spectral bound

def _matrix(model: QuadraticModel) -> list[list[int]]:
    """``A`` of the module docstring (with the homogenising row first when some ``lin`` is non-zero)."""
    k = len(model.lin)
    off = 1 if any(model.lin) else 0
    a = [[0] * (k + off) for _ in range(k + off)]
    if off:
        for i, b in enumerate(model.lin):
            a[0][i + 1] = a[i + 1][0] = b
    for i, row in enumerate(model.adj):
        for j, c in row:
            a[i + off][j + off] = c
    return a


def spectral_proves(model: QuadraticModel, target: int, work: int) -> tuple[bool, int]:
    """Whether the spectral bound proves that no selection weighs less than ``target`` (an integer weight),
    and the work spent; False when it does not, or when the checks would need more than ``work`` units."""
    n = len(model.lin) + (1 if any(model.lin) else 0)
    if n == 0:
        return model.const >= 4 * target, 0
    cost = n * n * n // 3 + n * n
    if 2 * cost > work:  # before the matrix is built: it has n * n entries
        return False, 0
    a = _matrix(model)
    shift = 2 * (4 * target - 4 - model.const)  # N A - shift I must be positive definite
    m = [[n * v for v in row] for row in a]
    for i in range(n):
        m[i][i] -= shift
    if not _float_cholesky_ok(m):
        return False, cost
    return _bareiss_positive_definite(m), 2 * cost


def _float_cholesky_ok(m: list[list[int]]) -> bool:
    """A floating-point Cholesky factorisation of ``m`` succeeds with every pivot clearly positive (a cheap
    guess at whether the exact check will pass; it proves nothing)."""
    n = len(m)
    scale = max((abs(v) for row in m for v in row), default=1) or 1
    l: list[list[float]] = [[0.0] * n for _ in range(n)]
    for j in range(n):
        d = m[j][j] / scale - math.fsum(v * v for v in l[j][:j])
        if d <= 1e-12 * n:
            return False
        l[j][j] = root = math.sqrt(d)
        lj = l[j][:j]
        for i in range(j + 1, n):
            l[i][j] = (m[i][j] / scale - math.fsum(p * q for p, q in zip(l[i][:j], lj))) / root
    return True


def _bareiss_positive_definite(m: list[list[int]]) -> bool:
    """Whether the symmetric integer matrix ``m`` is positive definite: fraction-free elimination, whose k-th
    pivot is the k-th leading principal minor (all positive exactly for a positive definite matrix).  The
    matrix stays symmetric, so only the upper triangle is updated."""
    n = len(m)
    a = [row[:] for row in m]
    prev = 1
    for k in range(n):
        pivot = a[k][k]
        if pivot <= 0:
            return False
        rk = a[k]
        for i in range(k + 1, n):
            ri, aik = a[i], a[k][i]
            for j in range(i, n):
                ri[j] = (ri[j] * pivot - aik * rk[j]) // prev
        prev = pivot
    return True
