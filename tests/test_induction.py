"""peggy_jvm/rules/induction.py: loop induction between two e-classes, and the check that a witness is well founded.

Two copies of a nested loop in one e-graph stay apart under congruence closure (two cycles) and are proved
equal by induction; a copy with another step is not. The well-foundedness check accepts a cycle that steps a
loop through a theta's second child and rejects cycles through an initial value or through an eval of the
stepped loop, which have many solutions.
"""
from __future__ import annotations

from peggy_jvm.epeg import EPeg
from peggy_jvm.peg.graph import PEG
from peggy_jvm.rules.induction import prove_by_induction, well_founded


def _nested(inner_step: int) -> PEG:
    """s = 0; for i < n: for j < i: s += j * inner_step ... : result eval_1(theta_1 sum, pass_1)."""
    g = PEG(name="m", class_name="C", param_types=["int"])
    n = g.add("param", 0)
    zero, one = g.add("const.i", 0), g.add("const.i", 1)
    i = g.new_theta(1)
    g.set_theta(i, zero, g.add("add.i", None, (i, one)))
    s = g.new_theta(1)
    j = g.new_theta(2)
    g.set_theta(j, zero, g.add("add.i", None, (j, one)))
    t = g.new_theta(2)
    g.set_theta(t, s, g.add("add.i", None, (t, g.add("mul.i", None, (j, g.add("const.i", inner_step))))))
    inner_exit = g.add("pass", 2, (g.add("ge.i", None, (j, i)),))
    g.set_theta(s, zero, g.add("eval", 2, (t, inner_exit)))
    outer_exit = g.add("pass", 1, (g.add("ge.i", None, (i, n)),))
    g.root = g.add("return", None, (g.add("sigma0"), g.add("eval", 1, (s, outer_exit))))
    g.seal()
    return g


def test_two_copies_of_a_loop_nest_are_equal_by_induction():
    eg = EPeg()
    pa, pb = _nested(3), _nested(3)
    a, b = eg.add_peg(pa)[pa.root], eg.add_peg(pb)[pb.root]
    eg.rebuild()
    assert not eg.equiv(a, b)  # congruence closure alone never merges the two cycles
    pairs = prove_by_induction(eg, a, b)
    assert pairs is not None
    assert {n[0] for _x, _y, n, _m in pairs} >= {"theta", "eval", "pass"}
    for x, y, _n, _m in pairs:
        eg.union(x, y)
    eg.rebuild()
    assert eg.equiv(a, b)


def test_a_loop_nest_with_another_step_is_not_equal():
    eg = EPeg()
    pa, pb = _nested(3), _nested(4)
    a, b = eg.add_peg(pa)[pa.root], eg.add_peg(pb)[pb.root]
    eg.rebuild()
    assert prove_by_induction(eg, a, b) is None


def _witness(edges: dict[str, tuple[str, int, list]]) -> dict:
    """name -> (op, loop, children names): a hand-made witness (classes named, one node pair each)."""
    ids = {k: i for i, k in enumerate(edges)}
    out = {}
    for k, (op, loop, kids) in edges.items():
        node = (op, loop, tuple(ids[c] if c else -1 for c in kids))
        out[(ids[k], ids[k] + 100)] = (ids[k], ids[k] + 100, node, node,
                                       [None if not c else (ids[c], ids[c] + 100) for c in kids])
    return out


def test_well_founded_accepts_a_step_and_rejects_an_initial_value_or_an_eval_of_the_loop():
    # t = theta_1(0, t + 1): the cycle goes through the theta's second child
    assert well_founded(_witness({"t": ("theta", 1, ["", "add"]), "add": ("add.i", None, ["t", ""])}))
    # t = theta_1(t + 1, 0): through the initial value only
    assert not well_founded(_witness({"t": ("theta", 1, ["add", ""]), "add": ("add.i", None, ["t", ""])}))
    # e = eval_1(theta_1(a, e), p): the eval moves the index the theta steps
    assert not well_founded(_witness({"e": ("eval", 1, ["t", ""]), "t": ("theta", 1, ["", "e"])}))
    # the same through an eval of an inner loop is fine: induction on the outer index
    assert well_founded(_witness({"e": ("eval", 2, ["t", ""]), "t": ("theta", 1, ["", "e"])}))


def test_a_chain_deeper_than_the_recursion_limit_is_no_proof_not_a_crash():
    import sys

    eg = EPeg()
    ends = []
    for _copy in range(2):  # two copies of a loop whose next value is a chain of 30,000 additions
        g = PEG(name="m", class_name="C", param_types=["int"])
        t = g.new_theta(1)
        x = t
        for k in range(30_000):
            x = g.add("add.i", None, (x, g.add("const.i", k % 7)))
        g.set_theta(t, g.add("param", 0), x)
        g.root = g.add("return", None, (g.add("sigma0"), g.add("eval", 1, (t, g.add("pass", 1, (g.add("const.b", True),))))))
        g.seal()
        ends.append(eg.add_peg(g)[g.root])
    eg.rebuild()
    limit = sys.getrecursionlimit()
    assert prove_by_induction(eg, ends[0], ends[1], budget=10**6) is None
    assert sys.getrecursionlimit() == limit


def test_node_pairs_tried_count_toward_the_budget(monkeypatch):
    """Two classes of K e-nodes each, every pair failing at the same recorded child pair: one step of the budget
    but K * K node pairs tried. The search must stop after its share of node pairs (JAMA's Matrix.read tried 14
    million for 20,000 steps), and only that share: with room for all of them it tries every one."""
    import peggy_jvm.rules.induction as induction

    k = 60
    eg = EPeg()
    g = PEG(name="m", class_name="C", param_types=["int"] * 4)
    p, r = g.add("param", 0), g.add("param", 1)  # unequal: the first child of every pair fails
    left = [g.add("add.i", None, (p, g.add("const.i", i))) for i in range(k)]
    right = [g.add("add.i", None, (r, g.add("const.i", 1000 + i))) for i in range(k)]
    g.root = g.add("return", None, (g.add("sigma0"), left[0]))
    g.seal()
    ids = eg.add_peg(g)
    for group in (left, right):
        for node in group[1:]:
            eg.union(ids[group[0]], ids[node])
    eg.rebuild()
    a, b = ids[left[0]], ids[right[0]]
    assert not eg.equiv(a, b)

    tried = []
    real = induction._Search._alternatives

    def counting(self, *args):
        for alternative in real(self, *args):
            tried.append(alternative)
            yield alternative

    monkeypatch.setattr(induction._Search, "_alternatives", counting)
    budget = 4
    assert prove_by_induction(eg, a, b, budget=budget) is None
    per_search = budget * induction.ALTERNATIVES_PER_STEP
    assert per_search < k * k
    assert 0 < len(tried) <= 2 * (per_search + 1)  # the strict search and one loose search, each cut short
    tried.clear()
    assert prove_by_induction(eg, a, b, budget=k * k) is None
    assert len(tried) >= k * k  # the cap, not the budget of pairs, is what stopped the first search
