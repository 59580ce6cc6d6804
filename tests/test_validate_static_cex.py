"""Counterexamples that differ only in a static field (issue 17, EqBench): after each JVM run the static fields
of the class under test are compared (under ``--map``: ``Old`` against ``New``), so a pair that returns the
same but leaves another value in a static field is ``not-equivalent``, and the reason says so. Only what the call
changes is compared, from the statics both versions start with: a class initializer that differs is no
difference of a method that leaves the field alone.
"""
from __future__ import annotations

import pytest
from conftest import compile_old_new, validate_rows

from peggy_jvm.validate import Verdict

OLD = r"""
public class Old {
    static int count;
    static int[] seen = new int[2];
    int k;
    static int bump(int x) { count = count + x; return x * 2; }
    static int keep(int x) { seen[x & 1] = x; return x; }
    int inst(int x) { count = x; return x + k; }
    static int twin(int x) { count += x; return x; }
}
class Old2 {
    static int count;
    static final int START = Integer.getInteger("no.such.property", 3);
    static int start(int x) { count = START + x * 15; return x + 1; }
}
"""
NEW = r"""
public class New {
    static int count;
    static int[] seen = new int[2];
    int k;
    static int bump(int x) { count = count - x; return x + x; }
    static int keep(int x) { seen[0] = x; return x; }
    int inst(int x) { count = x + 1; return k + x; }
    static int twin(int x) { count = x + count; return x; }
}
class New2 {
    static int count;
    static final int START = Integer.getInteger("no.such.property", 4);
    static int start(int x) { count = START + (x << 4) - x; return x + 1; }
}
"""


@pytest.fixture(scope="module")
def rows(java_home, tmp_path_factory):
    base = tmp_path_factory.mktemp("static-cex")
    trees = compile_old_new(java_home, base, OLD, NEW)
    return validate_rows(trees, method_timeout=4.0, class_map={"Old": "New", "Old2": "New2"})


@pytest.mark.parametrize("name", ["bump", "keep", "inst"])
def test_a_static_field_written_differently_is_shown(rows, name):
    row = rows[name]  # the same result on every input: only the static field the call leaves differs
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert "static fields" in row.reason, row.reason
    cx = row.counterexample
    assert "static fields set: {" in cx["orig"] + cx["opt"] and cx["orig"] != cx["opt"], cx


def test_the_difference_names_the_field(rows):
    cx = rows["bump"].counterexample
    for side in ("orig", "opt"):
        if "static fields set" in cx[side]:
            assert "count=" in cx[side], cx


def test_equal_static_effects_are_no_difference(rows):
    assert rows["twin"].verdict is not Verdict.NOT_EQUIVALENT, rows["twin"].counterexample


def test_a_differing_initializer_is_no_difference_of_the_method(rows):
    """``START`` is 3 in ORIG and 4 in OPT (a difference of ``<clinit>``), and ``start`` (equivalent, not proved:
    ``x * 15`` against ``(x << 4) - x``) stores a value computed from it: the two versions start the call from
    other statics, so none of them is compared."""
    assert rows["start"].verdict is Verdict.UNKNOWN, rows["start"].reason
    assert rows["start"].verdict is not Verdict.NOT_EQUIVALENT, rows["start"].counterexample
