"""The extraction engine's fast paths give exactly what the plain computations they replace give.

Each test runs the plain computation (the definition, written out here as it stood before the fast path) and the
engine's on random problems and selections, valid and invalid, and compares every output field: the
optimizer's output must not change with how fast extraction computes it.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from typing import Mapping

from peggy_jvm.codecost import Goal
from peggy_jvm.epeg import EPeg
from peggy_jvm.extract import bound as bound_module
from peggy_jvm.extract.bound import LagrangianResult, _Model, lagrangian_bound
from peggy_jvm.extract import maxsat
from peggy_jvm.extract import problem as problem_module
from peggy_jvm.extract.greedy import greedy_extract
from peggy_jvm.extract.problem import (ClassId, ExtractionProblem, InfeasibleProblemError, Selection,
                                       SelectionReport, evaluate_selection, integer_costs, usable_nodes)
from peggy_jvm.peg.graph import PEG
from peggy_jvm.pegextract.peg_problem import _build_problem, build_problem
from peggy_jvm.pegextract import phi_profile
from peggy_jvm.pegextract.phi_profile import MAX_PROFILE_WORK, MAX_PRUNE_WORK, Effort, effect_profiles, prune
from support.extraction import random_problem


# ============================================================================================ reference versions

def plain_evaluate(problem: ExtractionProblem, selection: Selection, max_errors: int = 5) -> SelectionReport:
    """The validity walk and DAG cost as first written: one depth-first walk over all children from the roots,
    then a three-colour walk over the strict edges of the chosen nodes."""
    errors: list[str] = []
    reached: dict[ClassId, None] = {}
    stack: list[ClassId] = list(reversed(problem.roots))
    while stack:
        c = stack.pop()
        if c in reached:
            continue
        reached[c] = None
        nid = selection.choices.get(c)
        if nid is None:
            errors.append(f"class {c!r} is reached but has no chosen node")
            continue
        node = problem.nodes.get(nid)
        if node is None or node.eclass != c:
            errors.append(f"class {c!r} chooses {nid!r}, which is not one of its nodes")
            continue
        stack.extend(reversed(node.children))
    if errors:
        return SelectionReport(tuple(errors[:max_errors]), tuple(reached), math.inf)
    cycle = _plain_cycle(problem, selection, reached)
    if cycle is not None:
        shown = " -> ".join(repr(selection.choices[c]) for c in cycle)
        return SelectionReport((f"cycle without a may-close edge: {shown}",), tuple(reached), math.inf)
    return SelectionReport((), tuple(reached), math.fsum(problem.nodes[selection.choices[c]].cost for c in reached))


def _plain_cycle(problem: ExtractionProblem, selection: Selection, reached: Mapping[ClassId, None]
                 ) -> list[ClassId] | None:
    colour = dict.fromkeys(reached, 0)
    for start in reached:
        if colour[start]:
            continue
        path = [start]
        iters = [iter(dict.fromkeys(problem.nodes[selection.choices[start]].strict_children()))]
        colour[start] = 1
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                colour[path.pop()] = 2
                iters.pop()
                continue
            if colour[nxt] == 1:
                return path[path.index(nxt):] + [nxt]
            if colour[nxt] == 0:
                colour[nxt] = 1
                path.append(nxt)
                iters.append(iter(dict.fromkeys(problem.nodes[selection.choices[nxt]].strict_children())))
    return None


def random_selection(problem: ExtractionProblem, rng: random.Random) -> Selection:
    """One node per class, sometimes a class left out or given another class's node (invalid on purpose)."""
    choices = {}
    all_nodes = list(problem.nodes)
    for c, members in problem.classes.items():
        roll = rng.random()
        if roll < 0.05:
            continue
        if roll < 0.08:
            choices[c] = rng.choice(all_nodes)
        elif members:
            choices[c] = rng.choice(members)
    return Selection(choices)


# ============================================================================================ the tests

def test_evaluate_selection_equals_the_plain_walk_on_random_problems() -> None:
    outcomes = {"valid": 0, "cycle": 0, "unchosen": 0}
    for seed in range(150):
        rng = random.Random(seed)
        problem = random_problem(seed, n_classes=rng.randint(2, 14), max_nodes=rng.randint(1, 4),
                                 may_close=rng.choice([0.0, 0.2, 0.5]), fractional=seed % 3 == 0)
        for _ in range(8):
            sel = random_selection(problem, rng)
            got, want = evaluate_selection(problem, sel), plain_evaluate(problem, sel)
            assert got == want, (seed, sel)
            assert got.reached_nodes(sel) == want.reached_nodes(sel)
            if got.valid:
                outcomes["valid"] += 1
            elif got.errors[0].startswith("cycle"):
                outcomes["cycle"] += 1
            else:
                outcomes["unchosen"] += 1
    assert min(outcomes.values()) > 50, outcomes  # every kind of outcome was compared, many times


def plain_prune(paths, limit=None, effort=None):
    """The phi-profiles' Blake canonical form as first written (consensus by a scan of each pair's steps)."""
    effort = effort if effort is not None else Effort(MAX_PRUNE_WORK)
    terms: set = set()

    def add(t) -> bool:
        effort.spend(len(terms) * len(t))
        if any(u <= t for u in terms):
            return False
        for u in [u for u in terms if t < u]:
            terms.discard(u)
        terms.add(t)
        return True

    for t in sorted(paths, key=len):
        add(t)
        if effort.spent_out:
            return None
    work = list(terms)
    while work:
        t = work.pop()
        if not effort.spend(len(terms) * len(t)):
            return None
        if t not in terms:
            continue
        for u in list(terms):
            if u not in terms or t not in terms:
                continue
            opposed = [(c, b) for c, b in t if (c, not b) in u]
            if len(opposed) != 1:
                continue
            c, b = opposed[0]
            r = (t - {(c, b)}) | (u - {(c, not b)})
            if add(r):
                work.append(r)
                if limit is not None and len(terms) > limit:
                    return None
            if effort.spent_out:
                return None
    return terms


def test_prune_equals_the_plain_form_and_charges_the_same_work() -> None:
    """Same routes out and the same work charged, also where the allowance or the route limit runs out."""
    outcomes = {"pruned": 0, "out of work": 0, "one route": 0}
    for seed in range(600):
        rng = random.Random(seed)
        conditions = rng.randint(1, 6)
        paths = {frozenset((c, rng.random() < 0.5) for c in range(conditions) if rng.random() < 0.6)
                 for _ in range(rng.choice([0, 1, 1, 2, 3, 5, 8, 12]))}
        limit = rng.choice([None, None, 2, 4, 64])
        units = rng.choice([-1, 0, 3, 20, 60, 200, 10_000])
        got_effort, want_effort = Effort(units), Effort(units)
        got, want = prune(paths, limit, got_effort), plain_prune(paths, limit, want_effort)
        assert got == want, (seed, paths)
        assert got_effort.left == want_effort.left, (seed, paths)
        if len(paths) == 1:
            outcomes["one route"] += 1
        elif got is None:
            outcomes["out of work"] += 1
        else:
            outcomes["pruned"] += 1
    assert min(outcomes.values()) > 50, outcomes


def test_a_problem_and_its_usable_nodes_are_computed_once_and_again_after_a_change() -> None:
    """The triage and then extraction ask for one method's problem: the second ask gets the same problem (with
    the indexes, usable nodes and weights computed for it); an e-graph changed since, or another goal, gets a
    new one, equal to one built afresh."""
    peg = PEG("m", is_static=True)
    peg.param_types = ["I"]
    x = peg.add("param", 0)
    peg.root = peg.add("add.i", None, (x, peg.add("const.i", 0)))
    eg = EPeg()
    root = eg.add_peg(peg)[peg.root]
    first = build_problem(eg, root, peg)
    assert build_problem(eg, root, peg) is first
    assert usable_nodes(first.problem) is usable_nodes(first.problem)
    assert integer_costs(first.problem) is integer_costs(first.problem)
    assert build_problem(eg, root, peg, Goal.SIZE) is not first
    eg.union(root, x)  # x + 0 = x: the root's class gains the parameter's node
    eg.rebuild()
    again = build_problem(eg, root, peg)
    assert again is not first and dict(again.problem.classes) != dict(first.problem.classes)
    fresh = _build_problem(eg, root, peg, Goal.SPEED)
    assert (dict(again.problem.nodes), dict(again.problem.classes), again.enodes) == \
        (dict(fresh.problem.nodes), dict(fresh.problem.classes), fresh.enodes)
    assert usable_nodes(again.problem) == usable_nodes(fresh.problem)


def plain_lagrangian_step(model: _Model, z: list[int], chosen: list[int], t_of) -> tuple[int, list[int]] | None:
    """One ascent step's projected supergradient and new multipliers as first written (None: no direction)."""
    grad = [0] * len(z)
    for c, i in enumerate(chosen):
        if i >= 0:
            for e in model.out[i]:
                grad[e] = 1
    grad = [g - (chosen[d] >= 0) for g, d in zip(grad, model.head)]
    grad = [0 if g < 0 and ze == 0 else g for g, ze in zip(grad, z)]
    norm = sum(g * g for g in grad)
    if norm == 0:
        return None
    t = t_of(norm)
    return norm, [max(0, ze + round(t * g)) if g else ze for ze, g in zip(z, grad)]


def plain_evaluate_model(model: _Model, z: list[int]) -> tuple[int, list[int], list[int], list[int]]:
    """``_Model.evaluate`` as first written."""
    inflow = [0] * len(model.members)
    for d, ze in zip(model.head, z):
        inflow[d] += ze
    rc = [w - inflow[c] + sum(z[e] for e in es) for w, c, es in zip(model.weight, model.cls, model.out)]
    total = 0
    chosen = [-1] * len(model.members)
    contrib = [0] * len(model.members)
    for c, ms in enumerate(model.members):
        best = min(ms, key=rc.__getitem__)
        if model.forced[c] or rc[best] < 0:
            chosen[c], contrib[c] = best, rc[best]
            total += rc[best]
    return total, rc, chosen, contrib


def plain_lagrangian(problem: ExtractionProblem, weight, forced, upper: int, work: int) -> LagrangianResult:
    """``lagrangian_bound`` as first written, on the plain evaluation and step above."""
    largest = max((abs(weight[nid]) for nid in problem.nodes), default=0)
    scale = 1 << max(0, bound_module._SCALE_BITS - largest.bit_length())
    model = _Model.of(problem, weight, forced, scale)
    per_iteration = len(model.nodes) + len(model.head)
    target = upper * scale
    z = model.start()
    spent, iterations, best, step, stale = per_iteration, 0, None, bound_module._STEP_START, 0
    while spent + per_iteration <= work:
        spent += per_iteration
        iterations += 1
        total, rc, chosen, contrib = plain_evaluate_model(model, z)
        if best is None or total > best[0]:
            best, stale = (total, rc, contrib), 0
        else:
            stale += 1
            if stale >= bound_module._PATIENCE:
                step, stale = step / 2, 0
        if total >= target or step < bound_module._STEP_MIN:
            break
        goal = best[0] + (target - best[0]) * bound_module._TARGET_SHARE if best[0] < target else target
        moved = plain_lagrangian_step(model, z, chosen, lambda norm: step * (goal - total) / norm)
        if moved is None:
            break
        z = moved[1]
    if best is None:
        return LagrangianResult(None, frozenset(), spent, iterations)
    total, rc, contrib = best
    prunable = frozenset(model.nodes[i] for i in range(len(model.nodes))
                         if total - contrib[model.cls[i]] + rc[i] > target)
    return LagrangianResult(-(-total // scale), prunable, spent, iterations)


def test_lagrangian_bound_equals_the_plain_ascent() -> None:
    """The ascent's evaluation (a class of one node taken without ``min``) and its step (the projected
    supergradient in one pass, ``round(t)`` and ``round(-t)`` for ``round(t * g)``) give the same bound, pruned
    nodes, work and iterations as the plain ascent, on random problems with shared, negative and fractional
    costs, forced classes and incumbents above, at and below the optimum."""
    seen = {"pruned some": 0, "bound": 0, "stopped early": 0}
    for seed in range(300):
        rng = random.Random(seed)
        problem = random_problem(seed, n_classes=rng.randint(2, 14), max_nodes=rng.choice([1, 2, 4]),
                                 negative=seed % 3 == 0, fractional=seed % 4 == 0)
        weight = integer_costs(problem)[0]
        forced = frozenset(c for c in problem.classes if rng.random() < 0.3) | frozenset(problem.roots)
        upper = sum(max(0, w) for w in weight.values()) // rng.choice([1, 2, 3, 5])
        work = rng.choice([0, 50, 400, 5_000, 100_000])
        got = lagrangian_bound(problem, weight, forced, upper, work)
        assert got == plain_lagrangian(problem, weight, forced, upper, work), seed
        seen["pruned some"] += bool(got.prunable)
        seen["bound"] += got.bound is not None
        seen["stopped early"] += got.iterations > 1 and got.work + got.work // max(1, got.iterations) <= work
    assert min(seen.values()) > 20, seen


def test_lagrangian_ascent_evaluates_afresh_once_and_shifts_after(monkeypatch) -> None:
    """After its first evaluation the ascent updates the reduced costs and the classes' choices of only the
    constraints its step moved (``_Model.shift``): the model is evaluated in full once per call, and the bound,
    pruned nodes, work and iterations are the plain ascent's, which evaluates every iteration afresh."""
    fresh: list[int] = []
    real = _Model.evaluate
    monkeypatch.setattr(_Model, "evaluate", lambda self, z: fresh.append(1) or real(self, z))
    shifted = 0
    for seed in range(60):
        rng = random.Random(seed)
        problem = random_problem(seed, n_classes=rng.randint(4, 14), max_nodes=rng.choice([2, 4]),
                                 negative=seed % 3 == 0, fractional=seed % 4 == 0)
        weight = integer_costs(problem)[0]
        forced = frozenset(c for c in problem.classes if rng.random() < 0.3) | frozenset(problem.roots)
        upper = sum(max(0, w) for w in weight.values()) // rng.choice([1, 2, 3, 5])
        fresh.clear()
        got = lagrangian_bound(problem, weight, forced, upper, 100_000)
        assert len(fresh) == 1, seed
        monkeypatch.setattr(_Model, "evaluate", real)
        assert got == plain_lagrangian(problem, weight, forced, upper, 100_000), seed
        monkeypatch.setattr(_Model, "evaluate", lambda self, z: fresh.append(1) or real(self, z))
        shifted += got.iterations > 1
    assert shifted > 30


def test_the_original_pegs_profiles_are_computed_once(monkeypatch) -> None:
    """``checkable`` and extraction's baseline ask for the profiles of one sealed PEG with fresh allowances: the
    second ask computes nothing, and gets the profiles and the charge a fresh computation gives (other keys and
    polarity included); another allowance, or another PEG, is computed afresh."""
    peg = PEG("m", is_static=True)
    peg.param_types = ["I", "I"]
    a, b = peg.add("param", 0), peg.add("param", 1)
    sigma = peg.add("sigma0", None)
    cond = peg.add("lt.i", None, (a, b))
    call = peg.add("invoke.static", "C.f(I)I", (sigma, a))
    value = peg.add("rho_value", None, (call,))
    after = peg.add("phi", None, (cond, peg.add("rho_sigma", None, (call,)), sigma))
    peg.root = peg.add("return", None, (after, peg.add("phi", None, (cond, value, b))))
    peg.seal()
    calls = []
    real = phi_profile.phi_profiles
    monkeypatch.setattr(phi_profile, "phi_profiles", lambda *args: calls.append(1) or real(*args))
    monkeypatch.setattr(phi_profile, "_LAST", None)
    first_effort, again_effort = Effort(MAX_PROFILE_WORK), Effort(MAX_PROFILE_WORK)
    first = effect_profiles(peg, effort=first_effort)
    again = effect_profiles(peg, key=lambda n: n + 100, effort=again_effort, polarity=lambda k: (k, False))
    assert len(calls) == 1 and first and again_effort.left == first_effort.left < MAX_PROFILE_WORK
    assert set(again) == {k + 100 for k in first} and all(v is not None for v in again.values())
    monkeypatch.setattr(phi_profile, "_LAST", None)
    fresh = Effort(MAX_PROFILE_WORK)
    assert effect_profiles(peg, key=lambda n: n + 100, effort=fresh) == again and fresh.left == again_effort.left
    assert len(calls) == 2
    effect_profiles(peg, effort=Effort(MAX_PROFILE_WORK - 1))  # another allowance: computed again
    assert len(calls) == 3


def plain_structural_bound(problem: ExtractionProblem, empty: list[int] | None = None) -> float | None:
    """``triage.structural_bound`` as first written: every class of M's extra grouped by ``group_sum``, those
    whose region is empty included (``empty`` gets one entry per such class)."""
    from peggy_jvm.extract.problem import must_reach
    from peggy_jvm.extract.shrink import group_sum, settle
    if problem.has_may_close or problem.has_negative_cost:
        return None
    weight, unit = integer_costs(problem)
    usable = usable_nodes(problem)
    must = must_reach(problem, usable)
    if any(r not in must for r in problem.roots):
        return None
    classes = list(problem.classes)
    mandatory_mask = 0
    for r in problem.roots:
        mandatory_mask |= must[r]
    mandatory = {c for i, c in enumerate(classes) if mandatory_mask >> i & 1}
    kids = problem.strict_kids
    reach = {c: 1 << i for i, c in enumerate(classes) if c not in mandatory}
    changed = True
    while changed:
        changed = False
        for c in reversed(classes):
            if c in mandatory:
                continue
            mask = reach[c]
            for nid in problem.classes[c]:
                for k in kids[nid]:
                    if k not in mandatory:
                        mask |= reach[k]
            if mask != reach[c]:
                reach[c], changed = mask, True

    def grouped(children, bound) -> int:
        return group_sum((reach[k], bound[k]) for k in children if k not in mandatory and k in bound)

    bound = settle(problem, weight, grouped)
    total = 0
    extras: list[tuple[int, int]] = []
    for c in classes:
        if c not in mandatory:
            continue
        mine = [nid for nid in problem.classes[c] if nid in usable]
        if not mine:
            return None
        least = min(weight[nid] for nid in mine)
        total += least
        region = 0
        for nid in mine:
            for k in kids[nid]:
                if k not in mandatory:
                    region |= reach[k]
        extras.append((region, min(weight[nid] - least + grouped(kids[nid], bound) for nid in mine)))
        if empty is not None and not region:
            empty.append(1)
    return float((total + group_sum(extras)) * unit)


def test_structural_bound_equals_the_plain_form_and_groups_no_empty_region(monkeypatch) -> None:
    """The triage's structural bound adds the classes of M whose region is empty apart (each is a group of its
    own) instead of grouping them: the same bound as grouping everything on random problems (with a bound, and
    with classes of M of both kinds), and ``group_sum`` is never handed an empty region (it was, 1 973 times in
    one call on a math3 method: quadratic)."""
    from peggy_jvm import triage
    handed: list[int] = []
    real = triage.group_sum

    def recording(items):
        items = list(items)
        handed.extend(mask for mask, _ in items)
        return real(items)

    monkeypatch.setattr(triage, "group_sum", recording)
    seen = Counter()
    for seed in range(600):
        problem = random_problem(seed, n_classes=random.Random(seed).randint(2, 14), max_nodes=4)
        handed.clear()
        empty: list[int] = []
        got = triage.structural_bound(problem)
        assert got == plain_structural_bound(problem, empty), seed
        assert 0 not in handed, seed
        seen["bound"] += got is not None
        seen["an empty region"] += bool(empty) and got is not None
        seen["a region grouped"] += any(handed)
    assert min(seen.values()) > 20, seen


def test_evaluate_selection_remembers_by_content_and_equals_the_walk() -> None:
    """The latest reports of a problem are kept by the choices' contents: the same choices in a new Selection
    give the kept report itself (not a new walk), other or changed choices a fresh one equal to the walk's,
    and after more than ``EVALUATIONS_KEPT`` others the first is walked again."""
    walks = 0
    plain = problem_module._evaluate

    def counted(*args):
        nonlocal walks
        walks += 1
        return plain(*args)
    problem_module._evaluate = counted
    try:
        for seed in range(40):
            rng = random.Random(seed)
            problem = random_problem(seed, n_classes=rng.randint(3, 12), max_nodes=rng.randint(1, 4),
                                     may_close=rng.choice([0.0, 0.3]))
            first = random_selection(problem, rng)
            report = evaluate_selection(problem, first)
            assert report == plain_evaluate(problem, first)
            before = walks
            again = evaluate_selection(problem, Selection(dict(reversed(list(first.choices.items())))))
            assert again is report and walks == before  # the same contents, in another order: no walk
            assert evaluate_selection(problem, first, max_errors=1) == plain_evaluate(problem, first, 1)
            others = [random_selection(problem, rng) for _ in range(problem_module.EVALUATIONS_KEPT + 2)]
            for sel in others:
                assert evaluate_selection(problem, sel) == plain_evaluate(problem, sel), seed
            changed = dict(first.choices)
            if changed:
                c = next(iter(changed))
                changed[c] = rng.choice(list(problem.nodes))
                assert evaluate_selection(problem, Selection(changed)) == plain_evaluate(problem, Selection(changed))
            assert len(problem.__dict__["_evaluations"]) <= problem_module.EVALUATIONS_KEPT
    finally:
        problem_module._evaluate = plain


def test_solve_stop_below_answers_the_triage_question_as_the_full_search() -> None:
    """``maxsat.solve(stop_below=T)`` (the triage's solve) gives the same answer to "does every selection cost
    at least T?" (``lower_bound >= T``) as the full search, and ends early when a selection below T is found:
    after the greedies, and inside the solver at an RC2 model."""
    stops: Counter = Counter()
    for seed in range(120):
        rng = random.Random(seed)
        problem = random_problem(seed, n_classes=rng.randint(20, 60), max_nodes=rng.randint(2, 5),
                                 fractional=seed % 3 == 0)
        try:
            full = maxsat.solve(problem, work=20_000)
        except InfeasibleProblemError:
            continue
        assert full.lower_bound is not None, seed
        greedy = greedy_extract(problem).cost
        for below in sorted({full.lower_bound, full.lower_bound + 0.5, full.cost, greedy, greedy + 1,
                             (full.lower_bound + greedy) / 2}):
            got = maxsat.solve(problem, work=20_000, stop_below=below)
            assert (got.lower_bound is not None and got.lower_bound >= below) == (full.lower_bound >= below)
            stopped = [n for n in got.notes if n.startswith("stopped")]
            if stopped:
                assert got.lower_bound is None and got.cost is not None and got.cost < below, (seed, below)
                stops[stopped[0].split(":")[0]] += 1
            else:  # no selection below: the very same search
                assert got.lower_bound == full.lower_bound and got.selection == full.selection, (seed, below)
    assert stops["stopped after the greedies"] > 100 and stops["stopped in the solver"] >= 5, stops
