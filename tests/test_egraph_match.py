"""The e-graph's compiled search structures against naive definitions, on random e-graphs: the compiled matcher
(whole-search code, roots, limit, deadline cadence), the generated right-hand-side builders, the op index kept
up to date class by class, and the runner's per-rule-list plan (rules an absent operator rules out)."""
from __future__ import annotations

import collections
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from peggy_jvm.egraph import EGraph, Limits, Runner
from peggy_jvm.egraph.egraph import op_bit
from peggy_jvm.egraph.pattern import AttrLit, AttrVar, Matcher, OpVar, PAs, PNode, PVar, compile_builder
from peggy_jvm.rules import load_rules

_ARITY = {"f": 2, "g": 2, "h": 1, "k": 0, "x": 0}
_FG = OpVar("fg", frozenset({"f", "g"}))


def _random_graph(rng: random.Random, size: int) -> EGraph:
    eg = EGraph()
    ids = [eg.add("x", i) for i in range(3)] + [eg.add("k", rng.randint(0, 2)) for _ in range(2)]
    for _ in range(size):
        op = rng.choice("ffgghk")
        ids.append(eg.add(op, rng.randint(0, 1) if op != "h" else None,
                          [rng.choice(ids) for _ in range(_ARITY[op])]))
        if rng.random() < 0.3:
            eg.union(rng.choice(ids), rng.choice(ids), "random")
        if rng.random() < 0.1:
            eg.rebuild()
    eg.rebuild()
    return eg


def _random_pattern(rng: random.Random, depth: int, root: bool = False) -> object:
    if not root and (depth == 0 or rng.random() < 0.35):
        if rng.random() < 0.15:
            return PNode("k", AttrLit(rng.randint(0, 2)))  # ground
        return PVar(rng.choice("abc"))
    op = rng.choice(["f", "g", "h", _FG, "k"] if not root else ["f", "g", "h", _FG])
    arity = 2 if op is _FG else _ARITY[op]  # type: ignore[index]
    attr = rng.choice([None, AttrVar("t"), AttrLit(rng.randint(0, 1))]) if op != "h" else None
    node = PNode(op, attr, tuple(_random_pattern(rng, depth - 1) for _ in range(arity)))  # type: ignore[arg-type]
    if not root and rng.random() < 0.15:
        return PAs(rng.choice("pq"), node)
    return node


def _even(eg: EGraph, cid: int) -> bool:
    return cid % 2 == 0


def _naive_class(eg: EGraph, p, cid: int, env: dict) -> list[dict]:
    if isinstance(p, PVar):
        key = "?" + p.name
        if key in env:
            return [env] if env[key] == cid else []
        return [{**env, key: cid}]
    if isinstance(p, PAs):
        return [e2 for e in _naive_class(eg, PVar(p.var), cid, env) for e2 in _naive_class(eg, p.pattern, cid, e)]
    if _ground(p):  # a sub-pattern without variables stands for one node: None is no attribute, not any
        return [env] if _ground_class(eg, p) == cid else []
    return [e for n in eg.nodes(cid) for e in _naive_node(eg, p, n, env)]


def _ground(p) -> bool:
    return isinstance(p, PNode) and not isinstance(p.op, OpVar) and (p.attr is None or isinstance(p.attr, AttrLit)) \
        and all(_ground(c) for c in p.children)


def _ground_class(eg: EGraph, p: PNode) -> int | None:
    kids = [_ground_class(eg, c) for c in p.children]
    if None in kids:
        return None
    return eg.lookup(p.op, p.attr.value if p.attr is not None else None, kids)  # type: ignore[union-attr,arg-type]


def _naive_node(eg: EGraph, p: PNode, node: tuple, env: dict) -> list[dict]:
    op, attr, ch = node
    if isinstance(p.op, OpVar):
        if op not in p.op.ops:
            return []
        key = "%" + p.op.name
        if env.get(key, op) != op:
            return []
        env = {**env, key: op}
    elif op != p.op:
        return []
    if len(ch) != len(p.children):
        return []
    if isinstance(p.attr, AttrLit) and not (attr == p.attr.value and type(attr) is type(p.attr.value)):
        return []
    if isinstance(p.attr, AttrVar):
        key = "$" + p.attr.name
        if env.get(key, attr) != attr:
            return []
        env = {**env, key: attr}
    envs = [env]
    for sub, c in zip(p.children, ch):
        envs = [e2 for e in envs for e2 in _naive_class(eg, sub, c, e)]
    return envs


def _naive_search(eg: EGraph, mt: Matcher, guard_even: str | None) -> list[list[tuple]]:
    """Per root node, in the index's order (root operators sorted, classes by id, nodes as the class lists
    them), the matches as (root, env) in the matcher's slot order."""
    root = mt.pattern.pattern if isinstance(mt.pattern, PAs) else mt.pattern
    out = []
    for op in mt.root_ops:
        for cid in sorted(eg.classes_with_op(op)):
            for node in eg.nodes(cid):
                if node[0] != op:
                    continue
                start = {"?" + mt.pattern.var: cid} if isinstance(mt.pattern, PAs) else {}
                envs = _naive_node(eg, root, node, start)
                out.append([(cid, tuple(e[s] for s in mt.slots)) for e in envs
                            if guard_even is None or e[guard_even] % 2 == 0])
    return out


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10 ** 9))
def test_the_compiled_matcher_finds_what_a_naive_matcher_finds(seed):
    rng = random.Random(seed)
    eg = _random_graph(rng, rng.randint(5, 40))
    pat = _random_pattern(rng, 3, root=True)
    if rng.random() < 0.3:
        pat = PAs("r", pat)  # type: ignore[arg-type]
    plain = Matcher(pat)  # type: ignore[arg-type]
    guard = next((s for s in plain.slots if s.startswith("?")), None) if rng.random() < 0.5 else None
    mt = Matcher(pat, [((guard,), _even)] if guard else [])  # type: ignore[arg-type]
    per_node = _naive_search(eg, mt, guard)
    want = [m for ms in per_node for m in ms]
    got, late = mt.search(eg)
    assert not late
    assert collections.Counter(got) == collections.Counter(want)
    # the limit: a prefix of the full search, exactly as long
    if len(got) > 1:
        cut = rng.randint(1, len(got) - 1)
        assert mt.search(eg, limit=cut) == (got[:cut], False)
    # roots: the matches rooted there
    roots = {c for c in eg.class_ids() if rng.random() < 0.4}
    got_r, _ = mt.search(eg, roots=roots)
    assert collections.Counter(got_r) == collections.Counter(m for m in want if m[0] in roots)
    # a deadline already passed: checked after every 9th root node, so the matches of the first 9 and the flag
    # when a 9th was reached
    got_d, late_d = mt.search(eg, deadline=0.0)
    assert collections.Counter(got_d) == collections.Counter(m for ms in per_node[:9] for m in ms)
    assert late_d == (len(per_node) >= 9)


def _naive_build(eg: EGraph, p, slots: dict[str, int], env: tuple) -> int:
    if isinstance(p, PVar):
        return env[slots["?" + p.name]]
    op = env[slots["%" + p.op.name]] if isinstance(p.op, OpVar) else p.op
    attr = env[slots["$" + p.attr.name]] if isinstance(p.attr, AttrVar) else \
        p.attr.value if isinstance(p.attr, AttrLit) else None
    kids = [_naive_build(eg, c, slots, env) for c in p.children]
    return eg.add(op, attr, kids)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10 ** 9))
def test_a_generated_builder_adds_what_a_recursive_one_adds(seed):
    lhs = PNode(_FG, AttrVar("t"), (PVar("a"), PVar("b")))
    mt = Matcher(lhs)
    slots = {v: i for i, v in enumerate(mt.slots)}
    rhs = _random_pattern(random.Random(seed), 3, root=True)
    rhs = _bound_only(rhs)
    one, two = _random_graph(random.Random(seed), 20), _random_graph(random.Random(seed), 20)
    build = compile_builder(rhs, slots)
    for _cid, env in mt.search(one)[0][:5]:
        assert build(one, env) == _naive_build(two, rhs, slots, env)
    # the same nodes, created in the same order (ids are creation order)
    assert one._origin == two._origin


def _bound_only(p):
    """``p`` with only the variables a (f|g)[t](?a, ?b) left-hand side binds, and no '@'."""
    if isinstance(p, PAs):
        return _bound_only(p.pattern)
    if isinstance(p, PVar):
        return PVar("a" if p.name != "b" else "b")
    return PNode(p.op, p.attr, tuple(_bound_only(c) for c in p.children))


def _regrouped(eg: EGraph) -> tuple[dict, dict]:
    """The op index as defined: every class's nodes grouped by operator, each operator's classes in id order."""
    op_index: dict[str, list] = {}
    class_ops: dict[int, dict] = {}
    for cid in sorted(eg._classes):
        d: dict[str, list] = {}
        for n in eg._classes[cid].nodes:
            d.setdefault(n[0], []).append(n)
        class_ops[cid] = d
        for op, ns in d.items():
            op_index.setdefault(op, []).append((cid, ns))
    return op_index, class_ops


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10 ** 9))
def test_the_op_index_refreshed_class_by_class_is_a_regrouping(seed):
    rng = random.Random(seed)
    eg = EGraph()
    ids = [eg.add("x", i) for i in range(3)]
    want = None
    seen_version = None
    for _step in range(60):
        r = rng.random()
        if r < 0.45:
            op = rng.choice("ffgghk")
            ids.append(eg.add(op, rng.randint(0, 1), [rng.choice(ids) for _ in range(_ARITY[op])]))
        elif r < 0.6:
            ids.append(eg.add_placeholder())
        elif r < 0.8:
            eg.union(rng.choice(ids), rng.choice(ids), "random")
        elif r < 0.88:
            keep = rng.choice("fgh")
            eg.prune(rng.choice(ids), lambda n, keep=keep: n[0] == keep)
        else:
            eg.rebuild()
        if rng.random() < 0.5:  # asked at any time, also between a union and the rebuild that repairs it
            if eg.version != seen_version:
                want, seen_version = _regrouped(eg), eg.version
            got_index, got_classes = eg.op_index()
            assert {op: [(c, list(ns)) for c, ns in v] for op, v in got_index.items()} == want[0]
            assert {c: {op: list(ns) for op, ns in d.items()} for c, d in got_classes.items()} == want[1]
            for c, d in got_classes.items():  # each class's operators in the order of its nodes
                assert list(d) == list(want[1][c])
            mask = 0
            for op in want[0]:
                mask |= op_bit(op)
            assert eg.op_mask() == mask


_CHAIN = """
group chain
rule b-to-e: (neg.i ?x) => (i2b ?x)
rule e-to-f: (i2b ?x) => (i2c ?x)
rule never: (i2s (i2s ?x)) => ?x
"""


def test_a_rule_whose_operator_appears_later_still_fires():
    """``e-to-f`` cannot match until ``b-to-e`` made an ``i2b``: ruled out at first, it is searched once its
    operator is there, only near the change (semi-naive), and finds it; ``never`` is never searched (no stats)."""
    rules = load_rules([], builtins=False, extra_text=_CHAIN).active()
    eg = EGraph()
    b = eg.add("neg.i", None, [eg.add("param", 0)])
    rep = Runner(rules, Limits(time_limit_s=None)).run(eg)
    assert eg.lookup("i2c", None, [eg.lookup("param", 0)]) == eg.find(b)
    assert "never" not in rep.rules and rep.rules["e-to-f"].applied == 1
    # the same rules in another order are another plan, with the same outcome
    eg2 = EGraph()
    b2 = eg2.add("neg.i", None, [eg2.add("param", 0)])
    Runner(rules[::-1], Limits(time_limit_s=None)).run(eg2)
    assert eg2.lookup("i2c", None, [eg2.lookup("param", 0)]) == eg2.find(b2)
