"""peggy_jvm/peg/normalize.py: conditions known inside branches, and bisimilar roots of two PEGs.

Hand-built PEGs with exact expected shapes: a phi re-testing its enclosing arm's condition (directly, negated,
deeper down) picks its arm; a phi inside a loop is left alone (other iterations); two copies of one loop are
bisimilar, a loop with another step or start is not.
"""
from __future__ import annotations

from peggy_jvm.peg.graph import PEG
from peggy_jvm.peg.normalize import bisimilar, simplify_known_conditions
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
