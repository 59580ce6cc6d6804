"""A loop whose first statements are merged into its top and which is tested at its bottom (ProGuard's code of
jsoup's ``StructuralEvaluator$Parent.matches``), against javac's top-tested loop that computes the first value
before the loop and again at the end of each iteration: validate/loopshape.py copies the merged statements back
onto each edge into the loop, and the pair is proved; the mutants (the bottom test or the test after the merged
statement off by one) are never proved and are shown different on the JVM.
"""
from __future__ import annotations

import pytest
from conftest import compile_old_new, validate_rows

import peggy_jvm.validate.loopshape as loopshape
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.ir.nodes import Goto, If
from peggy_jvm.validate import Verdict

WALK = """
        if (n == k) return -1;
        int x = n / 2;
        while (x != 0) {
            if (x % 7 == k) return -x;
            if (x == k) break;
            x = x / 2;
        }
        return x;
"""
OLD = f"""
public class Old {{
    Old up;
    int tag;
    Old up() {{ return up; }}
    boolean under(Old root, int t) {{
        if (root == this) return false;
        Old p = up();
        while (p != null) {{
            if (p.tag == t) return true;
            if (p == root) break;
            p = p.up();
        }}
        return false;
    }}
    static int walk(int n, int k) {{ {WALK} }}
    static int walkBottom(int n, int k) {{ {WALK} }}
    static int walkFirst(int n, int k) {{ {WALK} }}
    static int count(java.util.Iterator<String> it) {{
        int c = 0;
        while (it.hasNext()) {{ String s = it.next(); c++; if (s.isEmpty()) continue; c += s.length(); }}
        return c;
    }}
    static int countDown(int n, int[] a) {{
        int c = 0;
        while (n-- > 0) {{ c++; if (a[n] == 0) continue; c += a[n]; }}
        return c;
    }}
}}
"""
NEW = """
public class New {
    New up;
    int tag;
    New up() { return up; }
    boolean under(New root, int t) {
        if (root == this) return false;
        New p = this;
        do {
            p = p.up();
            if (p == null) break;
            if (p.tag == t) return true;
        } while (p != root);
        return false;
    }
    static int walk(int n, int k) {
        if (n == k) return -1;
        do { n = n / 2; if (n == 0) break; if (n % 7 == k) return -n; } while (n != k);
        return n;
    }
    static int walkBottom(int n, int k) {
        if (n == k) return -1;
        do { n = n / 2; if (n == 0) break; if (n % 7 == k) return -n; } while (n != k + 1);
        return n;
    }
    static int walkFirst(int n, int k) {
        if (n == k) return -1;
        do { n = n / 2; if (n == 1) break; if (n % 7 == k) return -n; } while (n != k);
        return n;
    }
}
"""


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    return compile_old_new(java_home, tmp_path_factory.mktemp("loop-rotation"), OLD, NEW)


@pytest.fixture(scope="module")
def rows(trees):
    return validate_rows(trees, method_timeout=6.0, class_map={"Old": "New"})


@pytest.mark.parametrize("name", ["walk", "under"])
def test_a_loop_with_its_first_statements_merged_into_its_top_is_proved(rows, name):
    assert rows[name].verdict is Verdict.EQUIVALENT, rows[name].reason


@pytest.mark.parametrize("name", ["walkBottom", "walkFirst"])
def test_mutants_of_the_rotated_loop_are_shown_different(rows, name):
    """The bottom test stops at ``k + 1`` (``walk(16, 3)``: 0 against 4), the test after the merged statement at
    1 (``walk(2, 5)``: 0 against 1)."""
    row = rows[name]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] != row.counterexample["opt"], row.counterexample


def _lifted(tree, cls: str, name: str):
    cf = read_class((tree / f"{cls}.class").read_bytes())
    return lift_method(cf, next(m for m in cf.methods if m.name == name), None)


def test_the_merged_statements_are_copied_onto_each_edge_into_the_loop(trees):
    """New's ``walk``: the loop's top block keeps only its test, and each of its two ways in (the entry and the
    bottom test's back edge) goes through its own copy of ``n = n / 2``; javac's top-tested loop is left alone."""
    new = _lifted(trees["opt"], "New", "walk")
    top = next(b for b in new.blocks.values() if b.stmts and any(
        isinstance(p.terminator, If) and b.id in p.terminator.targets() and p.id >= b.id for p in new.blocks.values()))
    merged = [(type(st), getattr(st, "op", None)) for st in top.stmts]
    assert loopshape._split_header_statements(new)
    assert not top.stmts and isinstance(top.terminator, If)
    ins = [p for p in new.blocks.values() if top.id in p.successors()]
    assert len(ins) == 2 and all(isinstance(p.terminator, Goto) for p in ins)
    assert all([(type(st), getattr(st, "op", None)) for st in p.stmts] == merged for p in ins)
    assert not loopshape._split_header_statements(_lifted(trees["orig"], "Old", "walk"))


@pytest.mark.parametrize("name", ["count", "countDown"])
def test_a_top_tested_loop_continued_by_a_backward_if_is_left_alone(trees, name):
    """javac's ``while (it.hasNext())`` and ``while (n-- > 0)`` whose ``continue`` (``ifeq; goto top``) is
    threaded into one backward ``if``, as ProGuard does (lang3's ``CharSequenceUtils.regionMatches``): that
    ``if``'s other arm goes on with the body, so it is no bottom test, and the top keeps its statements (copying
    them would only part the two sides' PEGs: the pair took 1 s, not 18 ms, proved by the retry on the code as
    lifted). ``count``'s top steps no variable either."""
    m = _lifted(trees["orig"], "Old", name)
    top = next(b for b in m.blocks.values() if b.stmts and isinstance(b.terminator, If) and any(
        isinstance(p.terminator, Goto) and p.terminator.target == b.id and p.id > b.id for p in m.blocks.values()))
    threaded = 0
    for b in m.blocks.values():
        t = b.terminator
        if isinstance(t, If):
            for arm in ("if_true", "if_false"):
                j = m.blocks[getattr(t, arm)]
                if not j.stmts and isinstance(j.terminator, Goto) and j.terminator.target == top.id:
                    setattr(t, arm, top.id)
                    threaded += 1
    assert threaded == 1
    assert not loopshape._split_header_statements(m) and top.stmts


def test_without_the_copies_the_pair_is_not_proved(trees, monkeypatch):
    """What proves ``walk`` is the copying (not some rule that would prove it anyway)."""
    monkeypatch.setattr(loopshape, "_split_header_statements", lambda m: False)
    row = validate_rows(trees, method_timeout=3.0, class_map={"Old": "New"})["walk"]
    assert row.verdict is not Verdict.EQUIVALENT, row.reason
