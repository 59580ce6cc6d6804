"""peggy_jvm/validate/normalize.py: conditions known inside branches, and bisimilar roots of two PEGs.

Hand-built PEGs with exact expected shapes: a phi re-testing its enclosing arm's condition (directly, negated,
deeper down) picks its arm; a phi inside a loop is left alone (other iterations); two copies of one loop are
bisimilar, a loop with another step or start is not.
"""
from __future__ import annotations

from peggy_jvm.peg.graph import PEG
from peggy_jvm.validate.normalize import bisimilar, equal_by_cases, joint_peg, simplify_known_conditions
from peggy_jvm.peg.printer import format_peg


def _peg(build) -> PEG:
    g = PEG(name="m", class_name="C", param_types=["boolean", "int", "int"])
    s = g.add("sigma0")
    g.root = g.add("return", None, (s, build(g)))
    g.seal()
    return g


def _params(g: PEG) -> tuple[int, int, int]:
    return g.add("param", 0), g.add("param", 1), g.add("param", 2)


def _shape(g: PEG) -> list[str]:
    return [line.split(" = ", 1)[1] for line in format_peg(g) if " = " in line]


def test_a_phi_retesting_the_arms_condition_picks_its_arm():
    def orig(g):
        c, x, y = _params(g)
        inner = g.add("phi", None, (c, x, y))
        return g.add("phi", None, (c, g.add("add.i", None, (inner, x)), y))

    def want(g):
        c, x, y = _params(g)
        return g.add("phi", None, (c, g.add("add.i", None, (x, x)), y))

    out = simplify_known_conditions(_peg(orig))
    assert bisimilar(out, _peg(want)) and len(out.nodes) == len(_peg(want).nodes), _shape(out)
    assert not bisimilar(_peg(orig), _peg(want))  # without the simplification they differ


def test_negated_conditions_are_known_too():
    def orig(g):  # phi(not c, phi(c, x, y), x): in the first arm c is false
        c, x, y = _params(g)
        return g.add("phi", None, (g.add("not", None, (c,)), g.add("phi", None, (c, x, y)), x))

    def want(g):
        c, x, y = _params(g)
        return g.add("phi", None, (g.add("not", None, (c,)), y, x))

    assert bisimilar(simplify_known_conditions(_peg(orig)), _peg(want))


def test_a_phi_inside_a_loop_keeps_its_test():
    def orig(g):  # phi(c, eval(theta(x, phi(c, T, y)), pass(...)), y): the inner phi is at other iterations
        c, x, y = _params(g)
        t = g.new_theta(1)
        g.set_theta(t, x, g.add("phi", None, (c, t, y)))
        p = g.add("pass", 1, (g.add("ge.i", None, (t, y)),))
        return g.add("phi", None, (c, g.add("eval", 1, (t, p)), y))

    g = _peg(orig)
    out = simplify_known_conditions(g)
    assert sum(n.op == "phi" for n in out.nodes) == 2, _shape(out)
    assert bisimilar(out, g)


def _loop(step: int, start: int):
    def build(g):
        _c, x, _y = _params(g)
        t = g.new_theta(1)
        g.set_theta(t, g.add("const.i", start), g.add("add.i", None, (t, g.add("const.i", step))))
        p = g.add("pass", 1, (g.add("ge.i", None, (t, x)),))
        return g.add("eval", 1, (t, p))
    return build


def test_two_copies_of_a_loop_are_bisimilar_and_other_loops_are_not():
    assert bisimilar(_peg(_loop(1, 0)), _peg(_loop(1, 0)))
    assert not bisimilar(_peg(_loop(1, 0)), _peg(_loop(2, 0)))
    assert not bisimilar(_peg(_loop(1, 0)), _peg(_loop(1, 1)))


def test_the_joint_peg_holds_a_loop_both_have_once():
    def two_loops(second_step: int):
        def build(g):
            a = _loop(1, 0)(g)
            b = _loop(second_step, 0)(g)
            return g.add("add.i", None, (a, b))
        return build

    def thetas(g: PEG) -> int:
        return sum(n.op == "theta" for n in g.nodes)

    # the first loop is the same on both sides, the second differs in its step: three loops, not four
    both, ra, rb = joint_peg(_peg(two_loops(3)), _peg(two_loops(2)))
    assert ra != rb and thetas(both) == 3, _shape(both)
    both, ra, rb = joint_peg(_peg(two_loops(2)), _peg(two_loops(2)))
    assert ra == rb and thetas(both) == 2, _shape(both)


def _dispatch(order: str):
    """Three outcomes chosen by conditions c and d, nested c-first or d-first (as two compilers may)."""
    def build_root(g):
        c, d = g.add("param", 0), g.add("param", 1)
        s = g.add("sigma0")
        one = g.add("return", None, (s, g.add("const.i", 1)))
        two = g.add("return", None, (s, g.add("const.i", 2)))
        err = g.add("throw", None, (s, g.add("param", 2)))
        if order == "c-first":  # c ? 1 : (d ? 2 : err)
            return g.add("phi", None, (c, one, g.add("phi", None, (d, two, err))))
        if order == "d-first":  # d ? (c ? 1 : 2) : (c ? 1 : err)
            return g.add("phi", None, (d, g.add("phi", None, (c, one, two)), g.add("phi", None, (c, one, err))))
        return g.add("phi", None, (d, g.add("phi", None, (c, one, two)), g.add("phi", None, (c, err, one))))

    g = PEG(name="m", class_name="C", param_types=["boolean", "boolean", "java/lang/Throwable"])
    g.root = build_root(g)
    g.seal()
    return g


def test_dispatch_nested_in_another_order_is_equal_by_cases():
    a, b = _dispatch("c-first"), _dispatch("d-first")
    assert not bisimilar(a, b)
    cases = equal_by_cases(joint_peg(a, b)[0])
    assert cases is not None and cases > 0  # shown, and only by splitting (they are not bisimilar as they are)
    assert equal_by_cases(joint_peg(a, a)[0]) == 0
    assert equal_by_cases(joint_peg(a, _dispatch("swapped"))[0]) is None  # differs when c and d are both false


def _naive_blocks(nodes, reach):
    """Reference: simultaneous partition refinement, one level per round."""
    ids: dict = {}
    cls = {n: ids.setdefault((nodes[n].op, nodes[n].attr, len(nodes[n].children)), len(ids)) for n in reach}
    while True:
        ids2: dict = {}
        cls2 = {n: ids2.setdefault((cls[n], tuple(cls[c] for c in nodes[n].children)), len(ids2)) for n in reach}
        if len(ids2) == len(ids):
            return cls
        ids, cls = ids2, cls2


def test_bisimulation_blocks_agree_with_plain_refinement_on_random_graphs():
    import random

    from peggy_jvm.peg.graph import Node, bisimulation_blocks

    rng = random.Random(7)
    for _ in range(300):
        nodes: list[Node] = []
        size = rng.randint(2, 30)
        thetas = []
        for i in range(size):
            kind = rng.random()
            if i < 2 or kind < 0.15:
                nodes.append(Node("param", rng.randint(0, 1), ()))
            elif kind < 0.35:
                nodes.append(Node("theta", rng.randint(1, 2), (-1, -1)))
                thetas.append(i)
            else:  # children among earlier nodes: cycles only through thetas' children, as in a PEG
                op = rng.choice(["add.i", "mul.i", "phi"])
                arity = 3 if op == "phi" else 2
                nodes.append(Node(op, None, tuple(rng.randrange(i) for _ in range(arity))))
        for t in thetas:  # init from anywhere before, next from anywhere (back edges)
            nodes[t] = Node("theta", nodes[t].attr, (rng.randrange(max(t, 1)), rng.randrange(size)))
        reach = list(range(size))
        fast, slow = bisimulation_blocks(nodes, reach), _naive_blocks(nodes, reach)
        pairs = [(a, b) for a in reach for b in reach if a < b]
        assert [fast[a] == fast[b] for a, b in pairs] == [slow[a] == slow[b] for a, b in pairs], nodes


def _try_chain(n: int, last: str) -> PEG:
    """``n`` calls one after another, each in its own try region whose handler (taken when ``h_k``) rethrows or
    goes on; the heap after region k is phi(threw_k, exceptional heap, normal heap). ``last``: how the method
    returns after the last region: "join" (javac: one return of the joined heap, re-testing threw_n), "copied"
    (ProGuard: the return copied into both arms), "swapped" (copied, arms wrong: a different method)."""
    g = PEG(name="m", class_name="C", param_types=["boolean"] * n)
    s = g.add("sigma0")
    unit = g.add("unit")
    exc = g.add("const.a", "e")
    regions = []
    for k in range(n):
        call = g.add("invoke.static", f"C.f{k}()V", (s,))
        t, es, ns = (g.add(op, None, (call,)) for op in ("threw", "rho_esigma", "rho_sigma"))
        regions.append((t, es, ns, g.add("param", k)))
        s = g.add("phi", None, (t, es, ns))
    t, es, ns, h = regions[-1]
    if last == "join":
        rest = g.add("return", None, (s, unit))
        rest = g.add("phi", None, (t, g.add("phi", None, (h, rest, g.add("throw", None, (es, exc)))), rest))
    else:
        a, b = (es, ns) if last == "copied" else (ns, es)
        rest = g.add("phi", None, (t, g.add("phi", None, (h, g.add("return", None, (a, unit)),
                                                           g.add("throw", None, (es, exc)))),
                                   g.add("return", None, (b, unit))))
    for t, es, _ns, h in reversed(regions[:-1]):
        rest = g.add("phi", None, (t, g.add("phi", None, (h, rest, g.add("throw", None, (es, exc)))), rest))
    g.root = rest
    g.seal()
    return g


def test_known_conditions_through_a_long_chain_of_try_regions():
    # carrying every condition into every region copies the tail once per path (2^14 here, past the bound);
    # carried only up to the effects, the re-test after the last region is still decided
    orig, opt = _try_chain(14, "join"), _try_chain(14, "copied")
    assert not bisimilar(orig, opt)
    assert bisimilar(simplify_known_conditions(orig), simplify_known_conditions(opt))
    assert not bisimilar(simplify_known_conditions(orig), simplify_known_conditions(_try_chain(14, "swapped")))


def _flag(value_on_unused_path: str) -> PEG:
    """f = c ? 0 : (d ? 0 : 1); v = c ? x : (d ? y : z); if (f == 0) use v else skip. ``z`` is computed but only
    read where the flag says it is not ("orig": z is x + y; "opt": z replaced by 0, as ProGuard does; "wrong":
    the replaced value sits where the flag does read it)."""
    g = PEG(name="m", class_name="C", param_types=["boolean", "boolean", "int", "int"])
    s = g.add("sigma0")
    c, d, x, y = (g.add("param", i) for i in range(4))
    zero, one = g.add("const.i", 0), g.add("const.i", 1)
    flag = g.add("phi", None, (c, zero, g.add("phi", None, (d, zero, one))))
    z = g.add("add.i", None, (x, y)) if value_on_unused_path == "orig" else zero
    if value_on_unused_path == "wrong":
        v = g.add("phi", None, (c, x, g.add("phi", None, (d, zero, z))))
    else:
        v = g.add("phi", None, (c, x, g.add("phi", None, (d, y, z))))
    used = g.add("phi", None, (g.add("eq.i", None, (flag, zero)), v, g.add("const.i", -1)))
    g.root = g.add("return", None, (s, used))
    g.seal()
    return g


def test_a_flag_tested_after_a_join_is_folded_in_each_case():
    # the split is on c and d (what the flag is made of), not on the flag: with them known it folds
    orig, opt = _flag("orig"), _flag("opt")
    assert not bisimilar(orig, opt)
    assert equal_by_cases(joint_peg(orig, opt)[0]) is not None
    assert equal_by_cases(joint_peg(orig, _flag("wrong"))[0]) is None


def _sign(g: PEG, tests: list[tuple[str, int, int]], default: int) -> int:
    """``if (x <op> k) return r; ... return default`` over param 1 as nested phis."""
    _c, x, _y = _params(g)
    out = g.add("const.i", default)
    for op, k, r in reversed(tests):
        out = g.add("phi", None, (g.add(op, None, (x, g.add("const.i", k))), g.add("const.i", r), out))
    return out


def test_comparisons_of_one_term_decide_each_other():
    # x > 0 ? 1 : x < 0 ? -1 : 0   against   x == 0 ? 0 : x >= 1 ? 1 : -1
    a = _peg(lambda g: _sign(g, [("gt.i", 0, 1), ("lt.i", 0, -1)], 0))
    b = _peg(lambda g: _sign(g, [("eq.i", 0, 0), ("ge.i", 1, 1)], -1))
    u, _x, _y = joint_peg(a, b)
    assert equal_by_cases(u) is not None
    # inside x > 0 the test x >= 1 is decided without a split (the relation implies it)
    inner = _peg(lambda g: _sign(g, [("gt.i", 0, 7)], 0))
    nested = _peg(lambda g: g.add("phi", None, (g.add("gt.i", None, (_params(g)[1], g.add("const.i", 0))),
                                                _sign(g, [("ge.i", 1, 7)], 5), g.add("const.i", 0))))
    assert bisimilar(simplify_known_conditions(nested), inner)


def test_a_boundary_moved_by_one_is_not_decided():
    # x > 0 ? 1 : x < 0 ? -1 : 0   against   x == 0 ? 0 : x >= 2 ? 1 : -1 (differs at x = 1)
    a = _peg(lambda g: _sign(g, [("gt.i", 0, 1), ("lt.i", 0, -1)], 0))
    b = _peg(lambda g: _sign(g, [("eq.i", 0, 0), ("ge.i", 2, 1)], -1))
    u, _x, _y = joint_peg(a, b)
    assert equal_by_cases(u) is None
    # inside x > 0, x >= 2 is undecided (x may be 1), and a test of another term is never decided
    nested = _peg(lambda g: g.add("phi", None, (g.add("gt.i", None, (_params(g)[1], g.add("const.i", 0))),
                                                _sign(g, [("ge.i", 2, 7)], 5), g.add("const.i", 0))))
    assert sum(n.op == "phi" for n in simplify_known_conditions(nested).nodes) == 2
    other = _peg(lambda g: g.add("phi", None, (g.add("gt.i", None, (_params(g)[2], g.add("const.i", 0))),
                                               _sign(g, [("ge.i", 1, 7)], 5), g.add("const.i", 0))))
    assert sum(n.op == "phi" for n in simplify_known_conditions(other).nodes) == 2


def _clamp_low(g: PEG, with_call: bool) -> int:
    """``Math.max(x, y)`` as a call (value and heap after it), or as written by hand: ``x >= y ? x : y``."""
    from peggy_jvm.ir.nodes import MethodRef
    _c, x, y = _params(g)
    if not with_call:
        return g.add("phi", None, (g.add("ge.i", None, (x, y)), x, y))
    call = g.add("invoke.static", MethodRef("java/lang/Math", "max", "(II)I"), (g.add("sigma0"), x, y))
    g.add("rho_sigma", None, (call,))
    return g.add("rho_value", None, (call,))


def test_a_pure_library_call_is_its_java_lang_definition():
    from peggy_jvm.validate.normalize import expand_library_calls
    called, written = _peg(lambda g: _clamp_low(g, True)), _peg(lambda g: _clamp_low(g, False))
    assert not bisimilar(called, written)
    out = expand_library_calls(called)
    assert bisimilar(out, written), _shape(out)
    assert not any(n.op.startswith("invoke") for n in out.nodes)
    # a call whose outcome a handler reads (inside a try region) stays a call
    def caught(g):
        from peggy_jvm.ir.nodes import MethodRef
        _c, x, y = _params(g)
        call = g.add("invoke.static", MethodRef("java/lang/Math", "max", "(II)I"), (g.add("sigma0"), x, y))
        return g.add("phi", None, (g.add("threw", None, (call,)), x, g.add("rho_value", None, (call,))))
    kept = _peg(caught)
    assert expand_library_calls(kept) is kept


def test_a_min_or_max_is_decided_by_a_non_strict_relation():
    # x <= y ? (x >= y ? x : y) : 0   is   x <= y ? y : 0: where x <= y, max(x, y) is y (at x == y both are)
    def orig(g):
        _c, x, y = _params(g)
        mx = g.add("phi", None, (g.add("ge.i", None, (x, y)), x, y))
        return g.add("phi", None, (g.add("le.i", None, (x, y)), mx, g.add("const.i", 0)))

    def want(g):
        _c, x, y = _params(g)
        return g.add("phi", None, (g.add("le.i", None, (x, y)), y, g.add("const.i", 0)))

    assert bisimilar(simplify_known_conditions(_peg(orig)), _peg(want))

    def other(g):  # the phi's arms are not what it compares: nothing is decided
        _c, x, y = _params(g)
        mx = g.add("phi", None, (g.add("ge.i", None, (x, y)), x, g.add("const.i", 3)))
        return g.add("phi", None, (g.add("le.i", None, (x, y)), mx, g.add("const.i", 0)))

    assert sum(n.op == "phi" for n in simplify_known_conditions(_peg(other)).nodes) == 2


def _built(name: str, method: str) -> PEG:
    from support import fixture_build
    from peggy_jvm.classfile.reader import read_class
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.peg.build import build_peg
    cf = read_class((fixture_build.build_pairs() / f"{name}.class").read_bytes())
    return build_peg(lift_method(cf, next(m for m in cf.methods if m.name == method), None))


def test_a_length_read_at_each_iteration_is_the_length_read_once(java_home):
    from peggy_jvm.validate.normalize import hoist_loop_lengths
    # Loop04: for (i = 0; i < a.length; i++) against for (int v : a); the for-each PEG has nothing to hoist
    indexed, each = _built("Loop04A", "total"), _built("Loop04B", "total")
    assert not bisimilar(indexed, each)
    assert hoist_loop_lengths(each) is each
    assert bisimilar(hoist_loop_lengths(indexed), each)
    # Ax13: the array the bound is read from changes inside the loop (x = b): not hoisted, and they differ
    changing, once = _built("Ax13A", "walk"), _built("Ax13B", "walk")
    assert hoist_loop_lengths(changing) is changing
    assert not bisimilar(hoist_loop_lengths(changing), hoist_loop_lengths(once))


def test_a_field_of_this_is_read_once_only_when_the_loop_only_reads(java_home):
    from peggy_jvm.validate.normalize import hoist_loop_lengths

    def field_reads_in_loops(g: PEG) -> int:
        var = g.variance()
        return sum(n.op == "getfield" and bool(var[i]) for i, n in enumerate(g.nodes) if i in g.reachable([g.root]))

    # Obj17B: i < items.length; items[i] at each iteration of a loop that only reads: both reads of this.items
    # leave the loop; Ax17A writes items inside its loop: its reads stay
    reads = _built("Obj17B", "count")
    assert field_reads_in_loops(reads) > 0 and field_reads_in_loops(hoist_loop_lengths(reads)) == 0
    writes = _built("Ax17A", "sum")
    assert field_reads_in_loops(hoist_loop_lengths(writes)) == field_reads_in_loops(writes) > 0
