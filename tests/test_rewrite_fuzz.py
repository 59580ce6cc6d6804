"""The rewrite fuzzer for the built-in rules that copy terms (rules/branchfacts.py ``branch-facts``,
rules/unswitch.py ``loop-unswitch``), for ``theta-factor`` (rules/builtin.py: accumulators of products) and for
the unions of the optimistic analysis (rules/optimistic.py ``loop-optimistic``, also its loop copies under an exit
test): seeded random PEGs (branches on ``x == k``, ``x != k``, ``x < k``, loops with a loop-invariant test in the
body, loops whose carried value is tested against constants, counted loops whose body tests the counter,
accumulators of products by an invariant), one rule applied to every match in a fresh E-PEG, then each class the
rule merged read back as a PEG through the rule's own new nodes (the newest node of every class; for
``loop-optimistic`` a class's constant first) and evaluated against the original PEG (peggy_jvm.peg.evaluate) on
edge arguments. The rules' deliberate mutants must be caught by the same inputs, so the fuzzer is shown able to
fail."""
from __future__ import annotations

import itertools
import random

import pytest

from peggy_jvm.epeg import EPeg
from peggy_jvm.ir import interp as I
from peggy_jvm.peg.evaluate import evaluate_peg
from peggy_jvm.peg.graph import PEG
from peggy_jvm.rules.boundfacts import BoundFacts
from peggy_jvm.rules.branchfacts import BranchFacts
from peggy_jvm.rules.builtin import ThetaFactor
from peggy_jvm.rules.optimistic import LoopOptimism
from peggy_jvm.rules.unswitch import LoopUnswitch

ARGS = [(x, y, n) for x, y, n in itertools.product([-1, 0, 3, 4, 5], [0, 5, -7], [-1, 0, 1, 3])]
CONSTS = [0, 1, 4, 5, -1]


def _expr(g: PEG, rng: random.Random, leaves: list[int], depth: int) -> int:
    """A random int term over ``leaves``: arithmetic, and phis on tests of a leaf against a constant."""
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(leaves) if rng.random() < 0.8 else g.add("const.i", rng.choice(CONSTS))
    if rng.random() < 0.35:
        test = g.add(rng.choice(["eq.i", "ne.i", "lt.i"]), None, (rng.choice(leaves), g.add("const.i", rng.choice(CONSTS))))
        return g.add("phi", None, (test, _expr(g, rng, leaves, depth - 1), _expr(g, rng, leaves, depth - 1)))
    op = rng.choice(["add.i", "sub.i", "mul.i", "shl.i", "xor.i"])
    return g.add(op, None, (_expr(g, rng, leaves, depth - 1), _expr(g, rng, leaves, depth - 1)))


def random_peg(seed: int, loop: bool) -> PEG:
    """``f(x, y, n)``: a term (``loop`` False), or ``s = e0; for (i = 0; i < n; i++) s = phi(t, e1, e2)`` with
    ``t`` a test of ``x`` or ``y`` (invariant) and ``e1``, ``e2`` terms over ``s``, ``i``, ``x``, ``y``."""
    rng = random.Random(seed)
    g = PEG(name=f"fuzz{seed}", param_types=["int", "int", "int"])
    s0 = g.add("sigma0")
    x, y, n = (g.add("param", k) for k in range(3))
    if not loop:
        g.root = g.add("return", None, (s0, _expr(g, rng, [x, y], 4)))
    else:
        zero, one = g.add("const.i", 0), g.add("const.i", 1)
        i, s = g.new_theta(1), g.new_theta(1)
        g.set_theta(i, zero, g.add("add.i", None, (i, one)))
        test = g.add(rng.choice(["eq.i", "ne.i", "lt.i"]), None, (rng.choice([x, y]), g.add("const.i", rng.choice(CONSTS))))
        body = g.add("phi", None, (test, _expr(g, rng, [s, i, x, y], 2), _expr(g, rng, [s, i, x], 2)))
        g.set_theta(s, _expr(g, rng, [x, y], 2), body)
        stop = g.add("guard", None, (s0, g.add("phi", None, (g.add("ge.i", None, (i, n)), g.add("const.b", True),
                                                                g.add("const.b", False)))))
        p = g.add("pass", 1, (stop,))
        g.root = g.add("return", None, (g.add("eval", 1, (s0, p)), g.add("eval", 1, (s, p))))
    g.seal()
    return g


def random_carried_peg(seed: int) -> PEG:
    """``f(x, y, n)``: ``s = c; for (i = 0; i < n; i++) s = phi(t, e1, e2)`` with ``t`` a test of ``s`` against a
    constant and ``e1``, ``e2`` terms over ``s``, ``i``, ``y``: the carried value often never changes, or stays
    in a range that decides a test (what the optimistic analysis finds), and often does not."""
    rng = random.Random(seed)
    g, (_x, y, n), i, s = _counted_loop(f"carried{seed}")
    test = g.add(rng.choice(["eq.i", "ne.i", "lt.i"]), None, (s, g.add("const.i", rng.choice(CONSTS))))
    body = g.add("phi", None, (test, _expr(g, rng, [s, i, y], 2), _expr(g, rng, [s], 2)))
    g.set_theta(s, g.add("const.i", rng.choice(CONSTS)), body)
    return _returning_s(g, i, s, n)


def _counted_loop(name: str) -> tuple[PEG, tuple[int, int, int], int, int]:
    """A PEG ``f(x, y, n)`` with ``i = theta_1(0, i + 1)`` and a theta ``s`` of the same loop left to set:
    (PEG, parameters, ``i``, ``s``)."""
    g = PEG(name=name, param_types=["int", "int", "int"])
    g.add("sigma0")
    params = tuple(g.add("param", k) for k in range(3))
    zero, one = g.add("const.i", 0), g.add("const.i", 1)
    i, s = g.new_theta(1), g.new_theta(1)
    g.set_theta(i, zero, g.add("add.i", None, (i, one)))
    return g, (params[0], params[1], params[2]), i, s


def _returning_s(g: PEG, i: int, s: int, n: int) -> PEG:
    """``g`` of :func:`_counted_loop` returning ``s`` after the loop's last iteration with ``i < n``, sealed."""
    s0 = g.add("sigma0")
    p = g.add("pass", 1, (g.add("guard", None, (s0, g.add("ge.i", None, (i, n)))),))
    g.root = g.add("return", None, (g.add("eval", 1, (s0, p)), g.add("eval", 1, (s, p))))
    g.seal()
    return g


def random_accumulator_peg(seed: int) -> PEG:
    """``f(x, y, n)``: ``s = e0; for (i = 0; i < n; i++) s += e1 * k`` (either operand order of ``+`` and ``*``)
    with ``k`` a term over ``x``, ``y`` (invariant) and ``e1`` one over ``s``, ``i``, ``x``: what ``theta-factor``
    matches, from a start often not 0."""
    rng = random.Random(seed)
    g, (x, y, n), i, s = _counted_loop(f"accumulator{seed}")
    k = _expr(g, rng, [x, y], 1)
    e1 = _expr(g, rng, [s, i, x], 2) if rng.random() < 0.5 else i
    product = g.add("mul.i", None, (e1, k) if rng.random() < 0.5 else (k, e1))
    step = g.add("add.i", None, (s, product) if rng.random() < 0.5 else (product, s))
    g.set_theta(s, _expr(g, rng, [x, y], 1), step)
    return _returning_s(g, i, s, n)


def random_counted_peg(seed: int) -> PEG:
    """``f(x, y, n)``: a counted loop, ``i`` from a constant up while ``i < n`` (or a constant bound) or from ``n``
    down while ``i > k``, whose body tests ``i`` against a constant, ``n`` or ``x`` (``s = phi(t, e1, e2)``), what
    the facts from its exit test decide at some seeds; often a second loop after it with a counter of the same
    class up to ``y`` and its own test of that counter (a sibling loop); the result ``eval(s)``, plus at some
    seeds a value of the body read at the exit (``phi(t, 1, 2)``)."""
    rng = random.Random(seed)
    g = PEG(name=f"counted{seed}", param_types=["int", "int", "int"])
    s0 = g.add("sigma0")
    x, y, n = (g.add("param", k) for k in range(3))
    one, two = g.add("const.i", 1), g.add("const.i", 2)

    def loop(bound: int, up: bool, start: int, init: int) -> int:
        i, s = g.new_theta(1), g.new_theta(1)
        g.set_theta(i, start, g.add("add.i" if up else "sub.i", None, (i, one)))
        other = rng.choice([g.add("const.i", rng.choice(CONSTS + [2, 9])), n, x])
        test = g.add(rng.choice(["eq.i", "ne.i", "lt.i", "le.i", "gt.i", "ge.i"]), None, (i, other))
        g.set_theta(s, init, g.add("phi", None, (test, _expr(g, rng, [s, i, y], 2), _expr(g, rng, [s, x], 2))))
        stop = g.add("ge.i" if up else "le.i", None, (i, bound))
        p = g.add("pass", 1, (g.add("guard", None, (s0, stop)),))
        value = g.add("eval", 1, (s, p))
        if rng.random() < 0.3:
            value = g.add("add.i", None, (value, g.add("eval", 1, (g.add("phi", None, (test, one, two)), p))))
        return value
    up = rng.random() < 0.6
    bound = rng.choice([n, g.add("const.i", rng.choice([3, 5]))]) if up else g.add("const.i", rng.choice([0, 1]))
    result = loop(bound, up, g.add("const.i", rng.choice([0, 1])) if up else n, g.add("const.i", rng.choice(CONSTS)))
    if rng.random() < 0.5:  # a sibling: a counter of the same class (same start and step) up to y
        result = loop(y, up, g.add("const.i", 0) if up else n, result)
    g.root = g.add("return", None, (s0, result))
    g.seal()
    return g


class _Cycle(Exception):
    pass


def _read_back(eg: EPeg, root: int, template: PEG, constants: bool = False) -> PEG:
    """The PEG of ``root`` through the newest node of every class (the rule's own nodes where it made any); where
    those choices close a cycle not through a theta, the innermost class of the cycle that chose its newest node
    is read through its oldest instead (the original PEG's choices have no such cycle). With ``constants`` a class
    with a constant node reads as that constant (a rule merged it with one)."""
    oldest: set[int] = set()
    while True:
        try:
            return _read_back_once(eg, root, template, oldest, constants)
        except _Cycle as c:
            if c.args[0] is None:
                raise AssertionError("no acyclic reading") from None
            oldest.add(c.args[0])


def _read_back_once(eg: EPeg, root: int, template: PEG, oldest: set[int], constants: bool) -> PEG:
    g = PEG(name=template.name, param_types=list(template.param_types))
    find = eg.find

    def choose(cid: int) -> tuple:
        leaf = [n for n in eg.nodes(cid) if n[0] == "const.i" or n[0] == "const.b"]
        if constants and leaf:
            return leaf[0]
        age = [(eg._memo.get(n, -1), n) for n in eg.nodes(cid)]
        return (min(age) if cid in oldest else max(age))[1]

    chosen: dict[int, tuple] = {}
    stack = [find(root)]
    while stack:  # the classes the choices reach; thetas first get their PEG node, as EPeg.add_peg does
        cid = stack.pop()
        if cid not in chosen:
            chosen[cid] = choose(cid)
            stack.extend(find(c) for c in chosen[cid][2])
    memo = {cid: g.new_theta(n[1]) for cid, n in sorted(chosen.items()) if n[0] == "theta"}
    path: list[int] = []  # non-theta classes being built

    def build(cid: int) -> int:
        cid = find(cid)
        if cid in memo:
            return memo[cid]
        if cid in path:
            cycle = path[path.index(cid):]
            raise _Cycle(next((c for c in reversed(cycle) if c not in oldest and len(eg.nodes(c)) > 1), None))
        op, attr, ch = chosen[cid]
        path.append(cid)
        out = g.add(op, attr, tuple(build(c) for c in ch))
        path.pop()
        memo[cid] = out
        return out

    g.root = build(root)
    for cid, (op, _attr, ch) in sorted(chosen.items()):
        if op == "theta":
            g.set_theta(memo[cid], build(ch[0]), build(ch[1]))
    g.seal()
    return g


def _outcome(peg: PEG, args: tuple) -> object:
    try:
        got = evaluate_peg(peg, list(args), I.Heap(), budget=20_000)
    except I.Unsupported:  # out of steps: a loop that no longer ends (the originals' all end within it)
        return "no end"
    return got.value if isinstance(got, I.Returned) else type(got).__name__


def _fuzz(rule_factory, loop: bool | str, seeds: range) -> tuple[int, list]:
    """(rewrites checked, mismatches) of the rule on the random PEGs of ``seeds`` (``loop`` "carried": the
    loops of :func:`random_carried_peg`, "counted": those of :func:`random_counted_peg`, both read back constants
    first; "accumulator": those of :func:`random_accumulator_peg`)."""
    checked, bad = 0, []
    carried = loop in ("carried", "counted")
    for seed in seeds:
        peg = random_counted_peg(seed) if loop == "counted" else random_carried_peg(seed) if carried \
            else random_accumulator_peg(seed) if loop == "accumulator" else random_peg(seed, bool(loop))
        eg = EPeg()
        root = eg.add_peg(peg)[peg.root]
        eg.rebuild()
        rule = rule_factory()
        fired = False
        for _round in range(3):
            matches, _ = rule.search(eg, 100, 0.0)
            changed = [rule.apply(eg, m) for m in matches]
            eg.rebuild()
            fired |= any(changed)
            if not any(changed):
                break
        if not fired:
            continue
        new = _read_back(eg, root, peg, constants=carried)
        checked += 1
        for args in ARGS:
            want, got = _outcome(peg, args), _outcome(new, args)
            if want != got:
                bad.append((seed, args, want, got))
                break
    return checked, bad


@pytest.mark.parametrize("make,loop", [(BranchFacts, False), (BranchFacts, True), (LoopUnswitch, True),
                                       (LoopOptimism, "carried"), (LoopOptimism, "counted"), (BoundFacts, False),
                                       (BoundFacts, True), (ThetaFactor, "accumulator")],
                         ids=["branch-facts", "branch-facts-loops", "loop-unswitch", "loop-optimistic",
                              "loop-optimistic-exit", "branch-bounds", "branch-bounds-loops", "theta-factor"])
def test_the_rewrites_keep_every_value(make, loop):
    checked, bad = _fuzz(make, loop, range(100))
    assert bad == []
    assert checked >= 20, checked  # the rule fired on enough of the random PEGs to mean something


@pytest.mark.parametrize("make,loop", [(lambda: BranchFacts(mutant="wrong-constant"), False),
                                       (lambda: BranchFacts(mutant="wrong-arm"), False),
                                       (lambda: LoopUnswitch(mutant="swap"), True),
                                       (lambda: LoopOptimism(mutant="trust-init"), "carried"),
                                       (lambda: LoopOptimism(mutant="range-high"), "counted"),
                                       (lambda: LoopOptimism(mutant="range-low"), "counted"),
                                       (lambda: LoopOptimism(mutant="sibling"), "counted"),
                                       (lambda: LoopOptimism(mutant="after-exit"), "counted"),
                                       (lambda: BoundFacts(mutant="wrong-arm"), False),
                                       (lambda: ThetaFactor(mutant="drop-init"), "accumulator")],
                         ids=["wrong-constant", "wrong-arm", "swap", "trust-init", "range-high", "range-low", "sibling",
                              "after-exit", "bounds-wrong-arm", "drop-init"])
def test_the_fuzzer_catches_the_mutants(make, loop):
    _checked, bad = _fuzz(make, loop, range(60))
    assert bad, "a wrong rewrite went unnoticed"
