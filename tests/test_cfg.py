"""Tests for peggy_jvm.ir.cfg: reachability, reverse postorder, dominators, post-dominators (virtual exit, infinite
loops), back edges, natural loops (merging per header, nesting, exits), reducibility with a witness, exceptional
edges, DOT export.

Hand-built graphs check known answers; hypothesis checks random graphs against brute-force definitions written
here independently of the module: dominance by "b is unreachable once a is removed", loop bodies by "reaches a
latch without passing through the header", reducibility by T1/T2 reduction to a single node, reverse postorder
by a recursive DFS.
"""
from __future__ import annotations

import re

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from peggy_jvm.ir import cfg
from peggy_jvm.ir.cfg import VIRTUAL_EXIT


def graph(*edges: tuple, nodes: tuple = ()) -> nx.DiGraph:
    """A DiGraph from ``(u, v)`` or ``(u, v, kind)`` edges, nodes first in ``nodes`` order."""
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    for e in edges:
        if len(e) == 3:
            g.add_edge(e[0], e[1], kind=e[2])
        else:
            g.add_edge(e[0], e[1])
    return g


def bodies(forest: cfg.LoopForest) -> dict:
    return {loop.header: set(loop.body) for loop in forest.loops}


# ---------------------------------------------------------------------------------------------------------------
# Hand-built graphs with known answers


def test_diamond() -> None:
    g = graph(("e", "a"), ("e", "b"), ("a", "j"), ("b", "j"))
    # DFS: e -> a -> j (done), a done, b (j seen) done, e done: postorder j a b e.
    assert cfg.reverse_postorder(g, "e") == ["e", "b", "a", "j"]
    assert cfg.dominators(g, "e") == {"e": "e", "a": "e", "b": "e", "j": "e"}
    assert cfg.post_dominators(g, "e") == {"e": "j", "a": "j", "b": "j", "j": VIRTUAL_EXIT,
                                           VIRTUAL_EXIT: VIRTUAL_EXIT}
    t = cfg.dominator_tree(g, "e")
    assert t.children["e"] == ("b", "a", "j")  # in RPO
    assert t.depth == {"e": 0, "a": 1, "b": 1, "j": 1}
    assert t.dominates("e", "j") and not t.dominates("a", "j") and t.dominates("j", "j")
    assert not t.strictly_dominates("j", "j")
    assert len(cfg.natural_loops(g, "e")) == 0
    assert cfg.back_edges(g, "e") == []
    assert cfg.is_reducible(g, "e") and cfg.irreducible_witness(g, "e") is None


def test_while_loop() -> None:
    g = graph(("e", "h"), ("h", "b"), ("b", "h"), ("h", "x"))
    forest = cfg.natural_loops(g, "e")
    (loop,) = forest.loops
    assert loop.header == "h" and loop.body == frozenset({"h", "b"})
    assert loop.latches == ("b",) and loop.exits == (("h", "x"),) and loop.exit_targets == ("x",)
    assert loop.depth == 1 and loop.parent is None and loop.children == ()
    assert forest.roots == (loop,) and forest.back_edges == (("b", "h"),)
    assert forest.loop_of("b") is loop and forest.loop_of("h") is loop
    assert forest.loop_of("e") is None and forest.loop_of("x") is None
    assert forest.depth_of("b") == 1 and forest.depth_of("x") == 0
    assert forest.is_header("h") and not forest.is_header("b") and forest.loop_with_header("h") is loop
    assert "b" in loop and "x" not in loop
    assert cfg.back_edges(g, "e") == [("b", "h")]
    assert cfg.post_dominators(g, "e") == {"e": "h", "h": "x", "b": "h", "x": VIRTUAL_EXIT,
                                           VIRTUAL_EXIT: VIRTUAL_EXIT}
    # A retreating edge that is a back edge: still reducible.
    assert cfg.is_reducible(g, "e")


def test_do_while() -> None:
    g = graph(("e", "b"), ("b", "c"), ("c", "b"), ("c", "x"))
    (loop,) = cfg.natural_loops(g, "e").loops
    assert loop.header == "b" and loop.body == {"b", "c"}
    assert loop.latches == ("c",) and loop.exits == (("c", "x"),)
    assert cfg.dominators(g, "e")["x"] == "c"
    assert cfg.post_dominators(g, "e")["b"] == "c"


def test_self_loop_and_entry_header() -> None:
    g = graph(("a", "a"), ("a", "x"))
    (loop,) = cfg.natural_loops(g, "a").loops
    assert loop.header == "a" and loop.body == {"a"} and loop.latches == ("a",)
    assert loop.exits == (("a", "x"),)
    assert cfg.back_edges(g, "a") == [("a", "a")]
    assert cfg.is_reducible(g, "a")
    g2 = graph(("e", "m"), ("m", "e"), ("m", "x"))  # the entry itself heads a loop
    (loop2,) = cfg.natural_loops(g2, "e").loops
    assert loop2.header == "e" and loop2.body == {"e", "m"} and loop2.exits == (("m", "x"),)


def nested3() -> nx.DiGraph:
    return graph(("e", "h1"), ("h1", "h2"), ("h2", "h3"), ("h3", "b"), ("b", "h3"), ("h3", "l2"), ("l2", "h2"),
                 ("h2", "l1"), ("l1", "h1"), ("h1", "x"))


def test_nested_loops_depths() -> None:
    forest = cfg.natural_loops(nested3(), "e")
    assert [loop.header for loop in forest.loops] == ["h1", "h2", "h3"]
    l1, l2, l3 = forest.loops
    assert [l1.depth, l2.depth, l3.depth] == [1, 2, 3]
    assert l1.parent is None and l2.parent is l1 and l3.parent is l2
    assert l1.children == (l2,) and l2.children == (l3,) and l3.children == ()
    assert forest.roots == (l1,)
    assert l3.body == {"h3", "b"}
    assert l2.body == {"h2", "h3", "b", "l2"}
    assert l1.body == {"h1", "h2", "h3", "b", "l2", "l1"}
    assert l3.exits == (("h3", "l2"),) and l2.exits == (("h2", "l1"),) and l1.exits == (("h1", "x"),)
    assert forest.loop_of("b") is l3 and forest.loop_of("l2") is l2 and forest.loop_of("l1") is l1
    assert forest.loop_of("h2") is l2 and forest.depth_of("b") == 3 and forest.depth_of("l1") == 1
    assert l3.ancestors() == [l3, l2, l1]


def test_break_out_of_three_loops_exits_each() -> None:
    g = nested3()
    g.add_edge("b", "x")
    forest = cfg.natural_loops(g, "e")
    l1, l2, l3 = forest.loops
    assert l3.exits == (("h3", "l2"), ("b", "x"))  # by the RPO of the source: h3 dominates b
    order = {n: i for i, n in enumerate(cfg.reverse_postorder(g, "e"))}
    for loop in (l1, l2, l3):
        assert [order[u] for u, _ in loop.exits] == sorted(order[u] for u, _ in loop.exits)
    assert ("b", "x") in l1.exits and ("b", "x") in l2.exits and ("b", "x") in l3.exits
    assert ("h3", "l2") not in l2.exits  # l2 is inside the middle loop: not an exit of it


def test_two_back_edges_one_header_merge() -> None:
    g = graph(("e", "h"), ("h", "a"), ("a", "h"), ("h", "b"), ("b", "h"), ("h", "x"))
    forest = cfg.natural_loops(g, "e")
    (loop,) = forest.loops
    assert loop.header == "h" and loop.body == {"h", "a", "b"}
    # Latches in RPO: the DFS from e goes h, a, b, x, so the RPO is e h x b a.
    assert cfg.reverse_postorder(g, "e") == ["e", "h", "x", "b", "a"]
    assert loop.latches == ("b", "a")
    assert set(forest.back_edges) == {("a", "h"), ("b", "h")}


def test_loop_with_two_exits() -> None:
    g = graph(("e", "h"), ("h", "a"), ("a", "b"), ("b", "h"), ("h", "x1"), ("a", "x2"), ("x1", "r"), ("x2", "r"))
    (loop,) = cfg.natural_loops(g, "e").loops
    assert loop.body == {"h", "a", "b"}
    assert loop.exits == (("h", "x1"), ("a", "x2"))
    assert loop.exit_targets == ("x1", "x2")
    pdom = cfg.post_dominators(g, "e")
    assert pdom["h"] == "r" and pdom["a"] == "r" and pdom["b"] == "h" and pdom["x1"] == "r"


def test_break_and_continue() -> None:
    # while (h) { a; if (..) continue; d; if (..) break; f; }  x
    g = graph(("e", "h"), ("h", "a"), ("h", "x"), ("a", "h"), ("a", "d"), ("d", "x"), ("d", "f"), ("f", "h"))
    forest = cfg.natural_loops(g, "e")
    (loop,) = forest.loops
    assert loop.body == {"h", "a", "d", "f"}
    assert set(loop.latches) == {"a", "f"}
    assert set(loop.exits) == {("h", "x"), ("d", "x")}
    assert cfg.dominators(g, "e")["x"] == "h"
    assert cfg.is_reducible(g, "e")


def test_infinite_loop_has_post_dominators() -> None:
    g = graph(("e", "h"), ("h", "a"), ("a", "h"))
    # The loop is a sink component; its first node in RPO (the header) is joined to the virtual exit.
    assert cfg.post_dominators(g, "e") == {"e": "h", "h": VIRTUAL_EXIT, "a": "h", VIRTUAL_EXIT: VIRTUAL_EXIT}
    t = cfg.post_dominator_tree(g, "e")
    assert t.root is VIRTUAL_EXIT and t.dominates("h", "e") and t.dominates(VIRTUAL_EXIT, "a")
    assert not t.dominates("a", "e")
    # An infinite loop on one branch, a return on the other: the branch point is post-dominated by the exit only.
    g2 = graph(("e", "c"), ("c", "r"), ("c", "h"), ("h", "a"), ("a", "b"), ("b", "h"))
    pdom = cfg.post_dominators(g2, "e")
    assert pdom["e"] == "c" and pdom["c"] is VIRTUAL_EXIT and pdom["r"] is VIRTUAL_EXIT
    assert pdom["h"] is VIRTUAL_EXIT and pdom["b"] == "h" and pdom["a"] == "b"
    # Every node of a non-exiting loop nest reaches the exit through its outer header.
    g3 = graph(("e", "h1"), ("h1", "h2"), ("h2", "b"), ("b", "h2"), ("h2", "l"), ("l", "h1"))
    pdom3 = cfg.post_dominators(g3, "e")
    assert pdom3["h1"] is VIRTUAL_EXIT and set(pdom3) == {"e", "h1", "h2", "b", "l", VIRTUAL_EXIT}


def test_classic_irreducible() -> None:
    g = graph(("entry", "a"), ("entry", "b"), ("a", "b"), ("b", "a"))
    assert not cfg.is_reducible(g, "entry")
    # DFS visits a first, then b; b -> a retreats to a, which does not dominate b.
    assert cfg.irreducible_witness(g, "entry") == ("b", "a")
    assert cfg.dominators(g, "entry") == {"entry": "entry", "a": "entry", "b": "entry"}
    assert len(cfg.natural_loops(g, "entry")) == 0  # the a-b cycle is not a natural loop
    assert cfg.back_edges(g, "entry") == []
    info = cfg.analyze(g, "entry")
    assert not info.reducible and info.witness == ("b", "a")


def test_irreducible_region_inside_a_natural_loop() -> None:
    g = graph(("e", "h"), ("h", "a"), ("h", "b"), ("a", "b"), ("b", "a"), ("b", "h"), ("h", "x"))
    w = cfg.irreducible_witness(g, "e")
    assert w in {("b", "a"), ("a", "b")}
    (loop,) = cfg.natural_loops(g, "e").loops
    assert loop.header == "h" and loop.body == {"h", "a", "b"}


def test_unreachable_nodes() -> None:
    g = graph(("e", "a"), ("u0", "u1"), ("u0", "u2"), ("u1", "u2"), ("u2", "u1"), ("u1", "a"), ("a", "r"))
    g.nodes["a"]["label"] = "A"
    g.edges["e", "a"]["weight"] = 7
    g.graph["method"] = "m()V"
    assert cfg.reachable(g, "e") == {"e", "a", "r"}
    h = cfg.remove_unreachable(g, "e")
    assert set(h.nodes) == {"e", "a", "r"} and set(h.edges) == {("e", "a"), ("a", "r")}
    assert h.nodes["a"]["label"] == "A" and h.edges["e", "a"]["weight"] == 7 and h.graph["method"] == "m()V"
    assert h is not g and "u1" in g  # a copy; the input is untouched
    h.nodes["a"]["label"] = "changed"
    assert g.nodes["a"]["label"] == "A"
    assert set(cfg.dominators(g, "e")) == {"e", "a", "r"}
    assert set(cfg.post_dominators(g, "e")) == {"e", "a", "r", VIRTUAL_EXIT}
    assert cfg.is_reducible(g, "e")  # the irreducible part is unreachable
    t = cfg.dominator_tree(g, "e")
    assert not t.dominates("u1", "u1") and not t.dominates("e", "u1") and "u1" not in t
    assert cfg.reverse_postorder(g, "e") == ["e", "a", "r"]


def test_exceptional_edges() -> None:
    # try { b } catch -> handler; the handler loops back into the protected region.
    g = graph(("e", "b"), ("b", "c"), ("b", "h", "exception"), ("h", "b"), ("c", "r"))
    assert cfg.reachable(g, "e") == {"e", "b", "c", "h", "r"}
    assert cfg.reachable(g, "e", include_exceptional=False) == {"e", "b", "c", "r"}
    assert cfg.successors(g, "b") == ["c", "h"] and cfg.successors(g, "b", include_exceptional=False) == ["c"]
    (loop,) = cfg.natural_loops(g, "e").loops
    assert loop.header == "b" and loop.body == {"b", "h"}
    assert len(cfg.natural_loops(g, "e", include_exceptional=False)) == 0
    assert "h" not in cfg.dominators(g, "e", include_exceptional=False)
    assert cfg.remove_unreachable(g, "e", include_exceptional=False).number_of_nodes() == 4
    # A block that only throws is an exit when exceptional edges are ignored.
    g2 = graph(("e", "t"), ("e", "n"), ("t", "k", "exception"), ("n", "k"), ("k", "r"))
    assert cfg.post_dominators(g2, "e")["e"] == "k"
    pd = cfg.post_dominators(g2, "e", include_exceptional=False)
    assert pd["t"] is VIRTUAL_EXIT and pd["e"] is VIRTUAL_EXIT
    # An exceptional retreating edge into a two-entry cycle is irreducible only when counted.
    g3 = graph(("e", "a"), ("e", "b"), ("a", "b"), ("b", "a", "exception"))
    assert not cfg.is_reducible(g3, "e") and cfg.is_reducible(g3, "e", include_exceptional=False)


def test_unknown_edge_kind_and_missing_entry() -> None:
    g = graph(("e", "a", "jump"))
    with pytest.raises(ValueError, match="unknown kind 'jump'"):
        cfg.reachable(g, "e")
    with pytest.raises(ValueError, match="not a node"):
        cfg.dominators(graph(("e", "a")), "nope")


def test_multidigraph_parallel_normal_and_exception_edges() -> None:
    g = nx.MultiDiGraph()
    g.add_edge("e", "b")
    g.add_edge("b", "h", kind="exception")
    g.add_edge("b", "h", kind="normal")
    g.add_edge("b", "t", kind="exception")
    assert cfg.reachable(g, "e", include_exceptional=False) == {"e", "b", "h"}
    assert cfg.successors(g, "b") == ["h", "t"]
    dot = cfg.to_dot(g, "e")
    assert dot.count("->") == 4 and dot.count("style=dashed") == 2


def test_dominates_on_mappings() -> None:
    g = graph(("e", "a"), ("a", "b"), ("e", "c"), ("c", "b"), ("b", "d"), ("u", "d"))
    idom = cfg.dominators(g, "e")
    t = cfg.dominator_tree(g, "e")
    nx_idom = nx.immediate_dominators(g, "e")  # networkx leaves the root out
    for mapping in (idom, t, nx_idom):
        assert cfg.dominates(mapping, "e", "d")
        assert cfg.dominates(mapping, "b", "d")
        assert not cfg.dominates(mapping, "a", "b")
        assert not cfg.dominates(mapping, "d", "b")
        assert cfg.dominates(mapping, "e", "e") and cfg.dominates(mapping, "d", "d")
        assert not cfg.dominates(mapping, "u", "u") and not cfg.dominates(mapping, "e", "u")
        assert not cfg.dominates(mapping, "u", "d")
    assert t.dominators_of("d") == ["d", "b", "e"]
    assert t.children["b"] == ("d",) and t.children["d"] == ()


def test_deep_graphs_do_not_recurse() -> None:
    depth = 3000
    g = nx.DiGraph()
    for i in range(depth):  # h0 -> h1 -> ... each h_i heads a loop closed by l_i; l_i -> h_{i-1}... nested
        g.add_edge(f"h{i}", f"h{i + 1}" if i + 1 < depth else "core")
    g.add_edge("core", f"h{depth - 1}")
    for i in range(depth - 1, 0, -1):
        g.add_edge(f"h{i}", f"l{i}")
        g.add_edge(f"l{i}", f"h{i - 1}")
    g.add_edge("h0", "x")
    info = cfg.analyze(g, "h0")
    assert info.reducible and len(info.loops) == depth
    assert info.loops.loop_of("core").depth == depth
    assert info.loops.loops[0].header == "h0" and len(info.loops.loops[0].body) == 2 * depth
    assert info.domtree.depth["core"] == depth
    pdom = cfg.post_dominators(g, "h0")
    assert pdom["core"] == f"h{depth - 1}" and pdom["h0"] == "x"


def test_to_dot() -> None:
    g = graph(("e", "h"), ("h", "b"), ("b", "h"), ("h", "x"), ("b", "k", "exception"), ("u", "x"))
    dot = cfg.to_dot(g, "e", labels={"b": 'x = "s"\ny = a\\b', "h": "head"})
    assert dot.startswith('digraph "cfg" {') and dot.rstrip().endswith("}")
    ids = dict(re.findall(r'^  (n\d+) \[label="((?:[^"\\]|\\.)*)"', dot, re.M))
    assert set(ids) == {f"n{i}" for i in range(6)}
    assert ids["n0"] == "e"  # RPO first, unreachable last
    assert ids["n5"] == "u"
    assert 'x = \\"s\\"\\ly = a\\\\b\\l' in dot  # quotes and backslashes escaped, lines left-aligned
    by_label = {v: k for k, v in ids.items()}
    head = by_label["head"]
    assert re.search(rf'^  {head} \[.*fillcolor=.*loop depth 1', dot, re.M)
    assert re.search(rf'^  {by_label["e"]} \[.*peripheries=2', dot, re.M)
    assert re.search(rf'^  {by_label["u"]} \[.*color=gray', dot, re.M)
    b = next(k for k, v in ids.items() if v.startswith("x = "))
    assert re.search(rf'^  {b} -> {by_label["k"]} \[style=dashed\];$', dot, re.M)
    assert re.search(rf'^  {b} -> {head} \[color=blue\];$', dot, re.M)
    assert re.search(rf'^  {head} -> {by_label["x"]};$', dot, re.M)
    assert len(re.findall(r" -> ", dot)) == g.number_of_edges()


# ---------------------------------------------------------------------------------------------------------------
# Brute-force references for the property tests


def kept_edges(g: nx.DiGraph, include_exceptional: bool) -> list[tuple]:
    return [(u, v) for u, v, k in g.edges(data="kind", default="normal")
            if include_exceptional or k != "exception"]


def succ_map(g: nx.DiGraph, include_exceptional: bool) -> dict:
    s: dict = {n: [] for n in g.nodes}
    for u, v in kept_edges(g, include_exceptional):
        s[u].append(v)
    return s


def reach(succ: dict, start, removed=None) -> set:
    if start == removed:
        return set()
    seen = {start}
    todo = [start]
    while todo:
        u = todo.pop()
        for v in succ[u]:
            if v != removed and v not in seen:
                seen.add(v)
                todo.append(v)
    return seen


def brute_dom(succ: dict, entry) -> dict:
    """{(a, b): a dominates b} for reachable a, b: b is unreachable once a is removed (or a == b)."""
    r = reach(succ, entry)
    out = {}
    for a in r:
        without = reach(succ, entry, removed=a)
        for b in r:
            out[a, b] = a == b or b not in without
    return out


def reference_dfs(succ: dict, entry) -> tuple[list, set]:
    """Recursive DFS: (reverse postorder, retreating edges: to an ancestor on the stack or to itself)."""
    post: list = []
    seen: set = set()
    on_stack: set = set()
    retreating: set = set()

    def visit(u) -> None:
        seen.add(u)
        on_stack.add(u)
        for v in succ[u]:
            if v in on_stack:
                retreating.add((u, v))
            elif v not in seen:
                visit(v)
        on_stack.discard(u)
        post.append(u)

    visit(entry)
    return post[::-1], retreating


def t1t2_reducible(succ: dict, entry) -> bool:
    r = reach(succ, entry)
    s = {u: {v for v in succ[u] if v != u} for u in r}  # T1: drop self-loops
    p: dict = {u: set() for u in r}
    for u in r:
        for v in s[u]:
            p[v].add(u)
    changed = True
    while changed:
        changed = False
        for v in list(s):
            if v == entry or v not in s or len(p[v]) != 1:
                continue
            (u,) = p[v]  # T2: v has one predecessor: fold v into it
            s[u].discard(v)
            for w in s[v]:
                p[w].discard(v)
                if w != u:  # w == u would be a self-loop, dropped by T1
                    s[u].add(w)
                    p[w].add(u)
            del s[v], p[v]
            changed = True
    return len(s) == 1


def brute_loops(succ: dict, entry, dom: dict) -> dict:
    """{header: (body, latches)} from the definition: body = header + nodes reaching a latch avoiding the header."""
    r = reach(succ, entry)
    latches: dict = {}
    for u in r:
        for v in succ[u]:
            if dom[v, u]:
                latches.setdefault(v, set()).add(u)
    out = {}
    for h, ls in latches.items():
        body = {h}
        for x in r:
            if x != h and reach(succ, x, removed=h) & ls:
                body.add(x)
        out[h] = (body, ls)
    return out


@st.composite
def random_cfgs(draw, max_nodes: int = 9) -> nx.DiGraph:
    n = draw(st.integers(1, max_nodes))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.booleans()),
                          max_size=3 * n))
    for u, v, exc in pairs:
        if not g.has_edge(u, v):
            g.add_edge(u, v, kind="exception" if exc else "normal")
    return g


PROPS = settings(max_examples=300, deadline=None)


@PROPS
@given(random_cfgs(), st.booleans())
def test_rpo_and_reachability_match_a_recursive_dfs(g: nx.DiGraph, exc: bool) -> None:
    succ = succ_map(g, exc)
    rpo, _ = reference_dfs(succ, 0)
    assert cfg.reverse_postorder(g, 0, include_exceptional=exc) == rpo
    assert cfg.reachable(g, 0, include_exceptional=exc) == reach(succ, 0)


@PROPS
@given(random_cfgs(), st.booleans())
def test_dominators_match_brute_force(g: nx.DiGraph, exc: bool) -> None:
    succ = succ_map(g, exc)
    dom = brute_dom(succ, 0)
    r = reach(succ, 0)
    t = cfg.dominator_tree(g, 0, include_exceptional=exc)
    idom = cfg.dominators(g, 0, include_exceptional=exc)
    assert idom == t.idom and set(idom) == r and idom[0] == 0
    for a in r:
        for b in r:
            assert t.dominates(a, b) == dom[a, b], (a, b)
    for b in r - {0}:
        d = idom[b]
        strict = {a for a in r if a != b and dom[a, b]}
        assert d in strict and all(dom[a, d] for a in strict)  # the closest strict dominator
        assert t.depth[b] == len(strict)
    plain = nx.DiGraph()
    plain.add_nodes_from(g.nodes)
    plain.add_edges_from(kept_edges(g, exc))
    ref = nx.immediate_dominators(plain, 0)
    assert {k: v for k, v in idom.items() if k != 0} == {k: v for k, v in ref.items() if k != 0}


@PROPS
@given(random_cfgs(), st.booleans())
def test_post_dominators_match_brute_force(g: nx.DiGraph, exc: bool) -> None:
    succ = succ_map(g, exc)
    r = reach(succ, 0)
    rpo, _ = reference_dfs(succ, 0)
    order = {n: i for i, n in enumerate(rpo)}
    # Join one node (first in RPO) of every sink strongly-connected component to the exit X.
    sub = nx.DiGraph()
    sub.add_nodes_from(r)
    sub.add_edges_from((u, v) for u in r for v in succ[u])
    cond = nx.condensation(sub)
    X = "X"
    aug = {u: list(succ[u]) for u in r}
    aug[X] = []
    for c in cond.nodes:
        if cond.out_degree(c) == 0:
            aug[min(cond.nodes[c]["members"], key=order.__getitem__)].append(X)
    assert all(X in reach(aug, u) for u in r)
    t = cfg.post_dominator_tree(g, 0, include_exceptional=exc)
    pdom = cfg.post_dominators(g, 0, include_exceptional=exc)
    assert set(pdom) == r | {VIRTUAL_EXIT} and pdom == t.idom and pdom[VIRTUAL_EXIT] is VIRTUAL_EXIT
    name = {X: VIRTUAL_EXIT}
    for a in list(r) + [X]:
        for b in r:
            expected = a == b or a == X or X not in reach(aug, b, removed=a)
            assert t.dominates(name.get(a, a), b) == expected, (a, b)
    # Without infinite loops nothing was chosen: plain reachability of a return decides.
    if all(cond.out_degree(c) or len(cond.nodes[c]["members"]) == 1 and not succ[next(iter(cond.nodes[c]["members"]))]
           for c in cond.nodes):
        exits = {u for u in r if not succ[u]}
        for a in r:
            for b in r:
                expected = a == b or not any(e in reach(succ, b, removed=a) for e in exits)
                assert t.dominates(a, b) == expected


@PROPS
@given(random_cfgs(), st.booleans())
def test_loops_match_definition(g: nx.DiGraph, exc: bool) -> None:
    succ = succ_map(g, exc)
    r = reach(succ, 0)
    dom = brute_dom(succ, 0)
    expected = brute_loops(succ, 0, dom)
    forest = cfg.natural_loops(g, 0, include_exceptional=exc)
    assert {loop.header: (set(loop.body), set(loop.latches)) for loop in forest.loops} == expected
    rpo = cfg.reverse_postorder(g, 0, include_exceptional=exc)
    pos = {n: i for i, n in enumerate(rpo)}
    assert [pos[loop.header] for loop in forest.loops] == sorted(pos[loop.header] for loop in forest.loops)
    assert set(forest.back_edges) == {(u, v) for u in r for v in succ[u] if dom[v, u]}
    assert set(cfg.back_edges(g, 0, include_exceptional=exc)) == set(forest.back_edges)
    seen: list = []
    for loop in forest.loops:
        containing = [m for m in forest.loops if m is not loop and loop.body < m.body]
        # Disjoint or nested; the parent is the smallest strict container; outer loops are listed first.
        for m in forest.loops:
            assert m is loop or not (loop.body & m.body) or loop.body < m.body or m.body < loop.body
        assert loop.depth == len(containing) + 1
        if containing:
            assert loop.parent is min(containing, key=lambda m: len(m.body))
            assert loop.parent in seen and loop in loop.parent.children
        else:
            assert loop.parent is None and loop in forest.roots
        assert loop.exits == tuple((u, v) for u in sorted(loop.body, key=pos.__getitem__)
                                   for v in succ[u] if v not in loop.body)
        assert set(loop.latches) == {u for u, v in forest.back_edges if v == loop.header}
        seen.append(loop)
    for x in r:
        holders = [m for m in forest.loops if x in m.body]
        if holders:
            assert forest.loop_of(x) is min(holders, key=lambda m: len(m.body))
        else:
            assert forest.loop_of(x) is None
        assert forest.depth_of(x) == len(holders)


@PROPS
@given(random_cfgs(), st.booleans())
def test_reducibility_matches_t1_t2(g: nx.DiGraph, exc: bool) -> None:
    succ = succ_map(g, exc)
    reducible = t1t2_reducible(succ, 0)
    assert cfg.is_reducible(g, 0, include_exceptional=exc) == reducible
    w = cfg.irreducible_witness(g, 0, include_exceptional=exc)
    assert (w is None) == reducible
    if w is not None:
        u, v = w
        _, retreating = reference_dfs(succ, 0)
        assert v in succ[u] and (u, v) in retreating and not brute_dom(succ, 0)[v, u]
    info = cfg.analyze(g, 0, include_exceptional=exc)
    assert info.witness == w and info.reducible == reducible


@PROPS
@given(random_cfgs())
def test_ignoring_exceptional_edges_is_deleting_them(g: nx.DiGraph) -> None:
    h = nx.DiGraph()
    h.add_nodes_from(g.nodes)
    h.add_edges_from(kept_edges(g, False))
    a = cfg.analyze(g, 0, include_exceptional=False)
    b = cfg.analyze(h, 0)
    assert a.rpo == b.rpo and a.domtree == b.domtree and a.witness == b.witness
    assert [(m.header, m.body, m.latches, m.exits, m.depth) for m in a.loops] == \
        [(m.header, m.body, m.latches, m.exits, m.depth) for m in b.loops]
    assert cfg.post_dominators(g, 0, include_exceptional=False) == cfg.post_dominators(h, 0)
    assert cfg.post_dominator_tree(g, 0, include_exceptional=False) == cfg.post_dominator_tree(h, 0)


@PROPS
@given(random_cfgs(), st.booleans())
def test_analyze_agrees_with_separate_calls_and_domtree_reuse(g: nx.DiGraph, exc: bool) -> None:
    info = cfg.analyze(g, 0, include_exceptional=exc)
    t = cfg.dominator_tree(g, 0, include_exceptional=exc)
    assert info.domtree == t
    assert list(info.rpo) == cfg.reverse_postorder(g, 0, include_exceptional=exc)
    f1 = cfg.natural_loops(g, 0, include_exceptional=exc)
    f2 = cfg.natural_loops(g, 0, domtree=t, include_exceptional=exc)
    key = [(m.header, m.body, m.latches, m.exits, m.depth) for m in info.loops]
    assert key == [(m.header, m.body, m.latches, m.exits, m.depth) for m in f1]
    assert key == [(m.header, m.body, m.latches, m.exits, m.depth) for m in f2]
    assert cfg.back_edges(g, 0, domtree=t, include_exceptional=exc) == list(info.loops.back_edges)
    assert cfg.irreducible_witness(g, 0, domtree=t, include_exceptional=exc) == info.witness


@PROPS
@given(random_cfgs())
def test_strongly_connected_components_match_networkx(g: nx.DiGraph) -> None:
    # The post-dominator exits depend on these components; checked on their own (private helper).
    nodes = list(g.nodes)
    pos = {v: i for i, v in enumerate(nodes)}
    comp = cfg._scc_ids([[pos[v] for v in g.successors(u)] for u in nodes])
    ours = {frozenset(nodes[i] for i in range(len(nodes)) if comp[i] == c) for c in set(comp)}
    assert ours == {frozenset(c) for c in nx.strongly_connected_components(g)}
