"""The phi-profile validity checker of a selected PEG (DESIGN section 4; Stepp 2011, section 8.7).

What this module owns
    :func:`phi_profiles` (the pruned phi-profiles of some nodes), :func:`find_violation` (the first effect whose
    side effect is more conditional than the use of its value, with the nodes that explain it) and
    :class:`Violation`.

Why
    Equality saturation can prove ``rho_value(E)`` equal to something an extraction reads on every path while the
    sigma chain the extraction picks runs the effect ``E`` only under some condition (or the other way round in
    the sigma's favour, which is fine). Such a PEG has no CFG: the value exists only where the effect ran. The
    checker rejects it; the extractor then blocks the choices that made it and solves again.

The definitions
    * A *step* is ``(c, b)``: passing from a ``phi(c, t, f)`` into its true (``b = True``) or false arm, ``c`` the
      condition's node. Conditions, not phi nodes, name steps: two phis on one condition (a value and the sigma
      of one ``if``) are the same branch.
    * The *phi-profile* of a node is the set of routes from the root to it, each route recorded as the set of its
      steps, i.e. the conjunction of the branches it takes (entering a phi's condition adds no step). Sets, not
      sequences: the order in which nested phis are met says nothing about when a value exists, and a route
      around a loop's back edge meets the same branches again; sets keep every profile finite. Stepp's "linear
      path p is a prefix of value path q" becomes "q takes every branch p takes" (``p <= q``).
    * *Pruning* (:func:`prune`) is Stepp's merge of two routes that differ only in one step's branch into the
      route without that step, closed under absorption (a route that takes every branch of a shorter one is
      dropped): the Blake canonical form of the routes' disjunction, with conditions as independent variables.
      It is canonical, so profiles of two PEGs compare by equality whatever order they were computed in.
    * For every effect ``E`` (an outcome node) whose outcome is read both by a linear projection (``rho_sigma``,
      ``rho_esigma``) and by a value projection (``rho_value``, ``threw``, ``rho_exc``): every pruned linear
      route must be a prefix of some pruned value route (Stepp's condition: the effect is never more
      conditional than the use of its value), and every pruned value route must extend some linear route (the
      value is never read where the effect did not happen; with the canonical form this is exactly "the value's
      condition implies the effect's").
    * Baseline: the builder's PEG is trusted (its phi-trees follow the CFG), yet real PEGs have profiles the
      plain condition refuses (a route around a loop's back edge passes both arms of one condition; a condition
      tested twice). So the extractor passes the builder's PEG's profiles, with steps and effects named by
      e-class: an effect whose linear profile is the baseline's and whose value is read only where the baseline
      read it (each value route extends a baseline value route) is no worse than the original, and passes.
    * Polarity (``polarity``, the extractor's :func:`peggy_jvm.pegextract.select.negations`): a condition the
      e-graph proved the negation of another (``0 >= n`` in the class of ``not (0 < n)``) names the same step
      variable with its arms swapped: ``(0 >= n, T)`` is ``(0 < n, F)``. The builder tests one condition node per
      branch, but an extraction may take a test's two forms in two places (jacobi2d's sum loop: the heap under
      ``0 < n``, the sum under ``0 >= n``), which as independent variables look like a value read where its effect
      may not have run. Why it is sound: ``phi(not c, a, b)`` and ``phi(c, b, a)`` are the same value, and so
      the profiles computed with the polarity are exactly the plain profiles of the PEG with every such ``phi``
      rewritten on the named condition with its arms swapped, a PEG of the same meaning whose branches are
      the same tests; the checker's verdict on that PEG is the one given. The two forms vary in the same loops
      (one e-class pair, equal values), so nothing is merged across iterations that one node would not merge.
      A value read on the arm where the effect did not run stays refused (tests/test_phi_profile.py).
    * When the profiles of a node exceed :data:`MAX_PATHS` routes, or their computation its work allowance
      (:class:`Effort`, route-step comparisons: never a clock), the checker cannot decide; it then reports
      a violation (sound: the selection is refused, the method keeps a PEG that passed).

Blocking (DESIGN: "the smallest set of choices that explains the violation")
    A violation's explanation is the nodes of one shortest route from the root to the linear projection, of one
    shortest route to the value projection, and the effect and its projections: the choices that put the effect
    on a conditional sigma path and its value on another. That is much smaller than the whole selection (Peggy
    blocked the whole assignment). It is not guaranteed to be a proof (other choices could add a route that
    makes the profiles agree), so a blocking clause may cut an acceptable selection: that costs optimality,
    never soundness, because every selection is checked before it is accepted.

Inputs: a sealed PEG. Outputs: ``None`` (valid) or a :class:`Violation`.
Invariants: pure functions of the PEG (the extractor calls them in worker processes).
"""
from __future__ import annotations

from collections import deque
from itertools import filterfalse
from dataclasses import dataclass
from typing import Callable, Hashable, cast

from ..peg.graph import PEG
from ..peg.ops import OPS, T

__all__ = ["Step", "Path", "Polarity", "Violation", "Effort", "MAX_PATHS", "phi_profiles", "prune",
           "effect_profiles", "find_violation"]

Key = Hashable
"""What names a phi's condition in a step: its node id, or (effect_profiles) a key that compares two PEGs."""
Step = tuple[Key, bool]
Path = frozenset[Step]  # the conjunction of the steps of a route (order does not matter, see the docstring)

#: pruned routes per node beyond which the profile is "unknown" (a violation, to be safe)
MAX_PATHS = 64
#: propagation steps beyond which the profiles are "unknown"
MAX_WORK = 50_000
#: route-step comparisons (:class:`Effort`) one :func:`prune` may make by default, and one profile computation
#: (:func:`phi_profiles`, :func:`effect_profiles`) in all: about 0.2 s on the 2-core development machine
MAX_PRUNE_WORK = 2_000_000
MAX_PROFILE_WORK = 2_000_000

LINEAR_PROJECTIONS = frozenset({"rho_sigma", "rho_esigma"})
VALUE_PROJECTIONS = frozenset({"rho_value", "threw", "rho_exc"})


@dataclass(frozen=True)
class Violation:
    effect: int  # the effect node
    reason: str
    explanation: frozenset[int]  # PEG node ids whose choices explain it


class Effort:
    """A work allowance in route-step comparisons (testing a route of k steps against another costs k), shared
    by the prunes of one computation: work, not time, so that where it runs out does not depend on the
    machine's speed."""

    def __init__(self, units: int) -> None:
        self.left = units

    def spend(self, units: int) -> bool:
        """Take ``units``; False once the allowance is overdrawn."""
        self.left -= units
        return self.left >= 0

    @property
    def spent_out(self) -> bool:
        return self.left < 0


def prune(paths: set[Path] | frozenset[Path], limit: int | None = None, effort: Effort | None = None
          ) -> set[Path] | None:
    """The canonical form of a set of routes (Blake's: every prime implicant of their disjunction, conditions
    taken as independent variables): two routes that differ only in one step's branch also give the route
    without that step (consensus), and a route implied by a shorter one is dropped (absorption), to a fixpoint.
    Canonical, so profiles of two PEGs compare by equality whatever order they were computed in. None when
    more than ``limit`` routes remain, or when ``effort`` (default: :data:`MAX_PRUNE_WORK` step comparisons)
    runs out."""
    effort = effort if effort is not None else Effort(MAX_PRUNE_WORK)
    if len(paths) <= 1:  # what the loops below do with one route (or none), charges included, without them
        if not paths:
            return set()
        if effort.spent_out:
            return None
        (only,) = paths
        return {only} if effort.spend(len(only)) else None
    terms: set[Path] = set()
    # the scans below are C loops over ``terms`` (``map``, ``filter``) in the order a Python loop would take:
    # the same terms found, removed and added in the same order, so the same charges and the same result

    def add(t: Path) -> bool:
        effort.spend(len(terms) * len(t))
        if any(map(t.issuperset, terms)):
            return False
        for u in list(filter(t.__lt__, terms)):
            terms.discard(u)
        terms.add(t)
        return True

    # absorption only: sorted by length, no route is a proper subset of one added before it (so ``add``'s
    # removal would find nothing), and a route is dropped exactly when a shorter one added before is its subset
    for t in sorted(paths, key=len):
        effort.spend(len(terms) * len(t))
        if not any(map(t.issuperset, terms)):
            terms.add(t)
        if effort.spent_out:
            return None
    work = list(terms)
    while work:
        t = work.pop()
        if not effort.spend(len(terms) * len(t)):
            return None
        if t not in terms:
            continue
        # the steps of t with their branch flipped: u and t disagree on exactly the steps u shares with these.
        # Only routes sharing one of them can give a consensus (which routes do is fixed for the loop's snapshot)
        flipped = {(c, not b) for c, b in t}
        for u in list(filterfalse(flipped.isdisjoint, terms)):
            if u not in terms or t not in terms:
                continue
            opposed = flipped & u
            if len(opposed) != 1:
                continue
            (c, b) = next(iter(opposed))  # the step of u; t takes the other branch
            r = (t - {(c, not b)}) | (u - {(c, b)})
            if add(r):
                work.append(r)
                if limit is not None and len(terms) > limit:
                    return None
            if effort.spent_out:
                return None
    return terms


def _extend(paths: frozenset[Path], step: Step | None) -> set[Path]:
    if step is None:
        return set(paths)
    return {p | {step} for p in paths}


def phi_profiles(peg: PEG, effort: Effort | None = None) -> dict[int, frozenset[Path]] | None:
    """The pruned phi-profile of every node the root reaches (None: too many routes or too much work: ``effort``,
    default :data:`MAX_PROFILE_WORK` step comparisons in all)."""
    effort = effort if effort is not None else Effort(MAX_PROFILE_WORK)
    nodes = peg.nodes
    prof: dict[int, frozenset[Path]] = {peg.root: frozenset({frozenset()})}
    work = deque([peg.root])
    queued = {peg.root}
    spent = 0
    while work:
        n = work.popleft()
        queued.discard(n)
        node = nodes[n]
        mine = prof[n]
        for pos, c in enumerate(node.children):
            step: Step | None = None
            if node.op == "phi" and pos > 0:
                step = (node.children[0], pos == 1)
            new = _extend(mine, step) | set(prof.get(c, frozenset()))
            spent += len(new)
            if spent > MAX_WORK:
                return None
            pruned = prune(new, MAX_PATHS, effort)
            if pruned is None:
                return None
            fz = frozenset(pruned)
            if fz != prof.get(c):
                prof[c] = fz
                if c not in queued:
                    queued.add(c)
                    work.append(c)
    return prof


#: the last :func:`phi_profiles` that :func:`effect_profiles` computed: (the PEG, the work left before and the
#: limits, the profiles, the work left after). The pipeline asks about the original PEG twice with a fresh allowance (its
#: ``checkable`` test before saturation, then extraction's baseline): the second time gets the first's result
#: and is charged what it cost, which is what computing it again would give (a function of the PEG, the
#: allowance and the limits; node ids name the steps, so the callers' keys play no part)
_LAST: tuple[PEG, tuple[int, int, int], dict[int, frozenset[Path]] | None, int] | None = None


def _node_profiles(peg: PEG, effort: Effort) -> dict[int, frozenset[Path]] | None:
    """``phi_profiles(peg, effort)``, remembered for the last PEG (``_LAST``); the result is only read."""
    global _LAST
    last = _LAST
    before = (effort.left, MAX_WORK, MAX_PATHS)
    if last is not None and last[0] is peg and last[1] == before and peg.sealed:
        effort.left = last[3]
        return last[2]
    prof = phi_profiles(peg, effort)
    if peg.sealed:  # no node can be added to it any more
        _LAST = (peg, before, prof, effort.left)
    return prof


def _route(peg: PEG, target: int) -> list[int]:
    """The nodes of one shortest route from the root to ``target`` (both included)."""
    prev: dict[int, int] = {peg.root: -1}
    q = deque([peg.root])
    while q:
        n = q.popleft()
        if n == target:
            break
        for c in peg.nodes[n].children:
            if c not in prev:
                prev[c] = n
                q.append(c)
    out: list[int] = []
    n = target
    while n != -1 and n in prev:
        out.append(n)
        n = prev[n]
    return out


def _is_prefix(p: Path, q: Path) -> bool:
    """Stepp's "p is a prefix of q" for routes as conjunctions: q takes every branch p takes (q implies p)."""
    return p <= q


def _show(p: Path) -> str:
    return "[" + ", ".join(f"{'n' if isinstance(c, int) else ''}{c}:{'T' if b else 'F'}"
                           for c, b in sorted(p, key=repr)) + "]"


#: per effect key: its pruned (linear, value) profiles, steps keyed by ``key``; None: too large to decide
Profiles = dict[Key, "tuple[frozenset[Path], frozenset[Path]] | None"]
#: a condition's key -> the key that names it in steps and whether the condition is that key's negation
#: (:func:`peggy_jvm.pegextract.select.negations`: ``x < n`` and its e-class's ``not (x >= n)`` are one variable)
Polarity = Callable[[Key], "tuple[Key, bool]"]


def _effect_users(peg: PEG) -> dict[int, tuple[list[int], list[int]]]:
    """Effects whose outcome is read both by a linear and by a value projection -> (linear, value) readers."""
    users: dict[int, tuple[list[int], list[int]]] = {}
    for n in peg.reachable():
        node = peg.nodes[n]
        if node.op in LINEAR_PROJECTIONS or node.op in VALUE_PROJECTIONS:
            lin, val = users.setdefault(node.children[0], ([], []))
            (lin if node.op in LINEAR_PROJECTIONS else val).append(n)
    return {e: lv for e, lv in sorted(users.items())
            if lv[0] and lv[1] and OPS[peg.nodes[e].op].output is T.OUTCOME}


def effect_profiles(peg: PEG, key: Callable[[int], Key] | None = None, effort: Effort | None = None,
                    polarity: Polarity | None = None,
                    users: dict[int, tuple[list[int], list[int]]] | None = None) -> Profiles:
    """The pruned (linear, value) phi-profiles of every effect read both ways, effects and the condition of
    every step named by ``key`` (default: the node id), so profiles of two PEGs of one e-graph compare; with
    ``polarity``, a condition proved the negation of another is named by the same key, its branches swapped
    (see the module docstring). An effect whose profiles could not be computed within the work limits
    (``effort``, default :data:`MAX_PROFILE_WORK` step comparisons for the whole computation) gets None. Keys
    should hash the same in every process (ints, not strings: string hashing is randomised per process, and the
    order sets of routes are visited in decides where a work limit stops). ``users``: ``_effect_users(peg)``,
    when the caller has it."""
    key = key or (lambda n: n)
    polar = polarity or (lambda k: (k, False))

    def step(c: int, b: bool) -> Step:
        k, negated = polar(key(c))
        return k, b != negated
    effort = effort if effort is not None else Effort(MAX_PROFILE_WORK)
    users = _effect_users(peg) if users is None else users
    prof = _node_profiles(peg, effort) if users else {}
    out: Profiles = {}
    for e, (lin, val) in users.items():
        if prof is None:
            out[key(e)] = None
            continue

        def keyed(ns: list[int]) -> frozenset[Path] | None:
            paths: set[Path] = set()
            for n in ns:
                for p in prof.get(n, frozenset()):
                    # phi_profiles names conditions by node id
                    paths.add(frozenset(step(cast(int, c), b) for c, b in p))
            pruned = prune(paths, effort=effort)
            return None if pruned is None else frozenset(pruned)

        lin_paths, val_paths = keyed(lin), keyed(val)
        out[key(e)] = None if lin_paths is None or val_paths is None else (lin_paths, val_paths)
    return out


def _problem(lpaths: frozenset[Path], vpaths: frozenset[Path]) -> str | None:
    for lp in sorted(lpaths, key=repr):
        if not any(_is_prefix(lp, vp) for vp in vpaths):
            return f"its effect on sigma path {_show(lp)} is more conditional than every use of its value"
    for vp in sorted(vpaths, key=repr):
        if not any(_is_prefix(lp, vp) for lp in lpaths):
            return f"its value is read on path {_show(vp)} where the effect does not happen"
    return None


def _excused(now: tuple[frozenset[Path], frozenset[Path]], base: tuple[frozenset[Path], frozenset[Path]] | None
             ) -> bool:
    """The effect runs under exactly the conditions it ran under in the baseline (a trusted PEG), and its value
    is only read where the baseline read it or under more conditions: no worse than the baseline."""
    if base is None:
        return False
    return now[0] == base[0] and all(any(_is_prefix(bv, vp) for bv in base[1]) for vp in now[1])


def find_violation(peg: PEG, key: Callable[[int], Key] | None = None, baseline: Profiles | None = None,
                   effort: Effort | None = None, polarity: Polarity | None = None) -> Violation | None:
    """The first effect (by node id) whose pruned phi-profiles break the condition, or None when all pass.

    With ``baseline`` (the :func:`effect_profiles` of the PEG the builder made, keyed by e-class through ``key``),
    an effect whose profiles are no worse than in the baseline is accepted: the builder's PEG is trusted (its
    phi-trees follow the CFG), and real PEGs have profiles Stepp's plain condition does not accept (a route
    through a loop's back edge passes both arms of a condition)."""
    users = _effect_users(peg)
    if not users:
        return None
    kf = key or (lambda n: n)
    profs = effect_profiles(peg, key, effort, polarity, users)
    for e, (lin, val) in users.items():
        now = profs.get(kf(e))
        if now is None:
            return _violation(peg, e, lin[0], val[0], f"effect n{e} ({peg.nodes[e].op}): phi-profiles too large "
                                                      "to decide")
        why = _problem(*now)
        if why is None or (baseline is not None and _excused(now, baseline.get(kf(e)))):
            continue
        return _violation(peg, e, lin[0], val[0], f"effect n{e} ({peg.nodes[e].op}): {why}")
    return None


def _violation(peg: PEG, effect: int, lin: int, val: int, reason: str) -> Violation:
    explain = set(_route(peg, lin)) | set(_route(peg, val)) | {effect, lin, val}
    return Violation(effect, reason, frozenset(explain))
