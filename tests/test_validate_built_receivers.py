"""Counterexamples on receivers built by their class's constructor (issue 17 item 2): a difference that shows only
on the state a constructor establishes (an array longer than any the search generates field by field) is shown
with ``this: new Sum()``; when the two versions' constructors build different receivers, no call on them counts
as the method's difference.
"""
from __future__ import annotations

import pytest
from conftest import compile_versions, validate_rows

from peggy_jvm.validate import Verdict
from peggy_jvm.validate.counterexample import BUILT_APART, _receivers_compared

# a sum unrolled by hand eight elements at a time: OPT's ``sum`` reads data[k + 6] twice. Only an array of at least
# eight elements reaches that line; the constructor builds ten, the field-by-field search makes at most six
ORIG = r"""
public class Sum {
    int[] data;
    Sum() { data = new int[10]; for (int k = 0; k < data.length; k++) data[k] = FILL; }
    int sum() { int s = 0; for (int k = 0; k < data.length; k++) s += data[k]; return s; }
    int sumTwin() { int s = 0; for (int k = 0; k < data.length; k++) s += data[k]; return s; }
}
"""
UNROLLED = r"""
    int NAME() {
        int s = 0, k = 0;
        for (; k + 8 <= data.length; k += 8)
            s += data[k] + data[k + 1] + data[k + 2] + data[k + 3]
                + data[k + 4] + data[k + 5] + data[k + 6] + data[k + LAST];
        for (; k < data.length; k++) s += data[k];
        return s;
    }
"""
OPT = ("public class Sum {\n    int[] data;\n    Sum() { data = new int[10]; for (int k = 0; k < data.length; k++) "
       "data[k] = FILL; }\n" + UNROLLED.replace("NAME", "sum").replace("LAST", "6")
       + UNROLLED.replace("NAME", "sumTwin").replace("LAST", "7") + "}\n")


def _rows(trees: dict):
    # no rewrite rules: the proof, not the subject here, gives up at once and leaves the budget to the search
    return validate_rows(trees, "Sum", method_timeout=4.0, rules=[])


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    out = {}
    for name, opt_fill in (("same", "k + 1"), ("apart", "k + 2")):
        base = tmp_path_factory.mktemp(name)
        out[name] = compile_versions(java_home, base, "Sum.java", {"orig": ORIG.replace("FILL", "k + 1"),
                                                                  "opt": OPT.replace("FILL", opt_fill)})
    return out


def test_difference_only_on_the_receiver_its_constructor_builds(trees):
    rows = _rows(trees["same"])
    row = rows["sum"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    cx = row.counterexample
    assert cx["args"] == ["this: new Sum()"], cx
    assert cx["orig"].startswith("returns 55,") and cx["opt"].startswith("returns 54,"), cx
    assert rows["sumTwin"].verdict is not Verdict.NOT_EQUIVALENT, rows["sumTwin"].counterexample


def test_receivers_built_apart_show_nothing_of_the_method(trees):
    """OPT's constructor fills other values: the correct unrolling gives other sums on the two receivers, which is
    the constructors' difference (shown on ``<init>``), never ``sumTwin``'s."""
    rows = _rows(trees["apart"])
    assert rows["<init>"].verdict is Verdict.NOT_EQUIVALENT, rows["<init>"].reason
    assert rows["sumTwin"].verdict is not Verdict.NOT_EQUIVALENT, rows["sumTwin"].counterexample


def test_the_state_before_the_call_must_be_alike():
    out = "R 3 ;args=;this=data=[[I 1,2];out="
    # the same state: the outcomes are compared without it
    same = out + ";this0=data=[[I 1,2]/"
    assert _receivers_compared(same, same, same) == (out, out, out)
    # ORIG's second run built another receiver: its constructor is not deterministic
    assert _receivers_compared(same, same, out + ";this0=data=[[I 1,3]/")[1] == BUILT_APART
    # another state, an array shared where it was not, an object the encoding cannot show: no comparison
    for a, b in (("data=[[I 1,2]/", "data=[[I 1,3]/"), ("a=[[I 1]|b=#0/", "a=[[I 1]|b=[[I 1]/"), ("o=?/", "o=?/")):
        assert _receivers_compared(out + ";this0=" + a, out + ";this0=" + b, out)[1] == BUILT_APART
    # a run stopped while the call ran still carries the state its receiver started from
    assert _receivers_compared("R 1;this0=n=1/", "TIMEOUT;this0=n=2/", "R 1") == ("R 1", BUILT_APART, "R 1")


SPIN = r"""
public class Spin {
    int base;
    Spin(int n) { while (n < 0) n = n | 1; base = n; }
    int f(int x) { return x + base + DELTA; }
}
"""


@pytest.mark.slow  # the slow tier: 6 s of CPU, over the fast tier's share (docs/ci.md, session 16)
def test_a_constructor_that_never_ends_stops_only_its_own_pair(java_home, tmp_path):
    """``new Spin(-1)`` never returns: that run is stopped, its call confirms nothing, and a fresh JVM answers the
    next pair's call (which differs: 1 + 1 + 0 against 1 + 1 + 1)."""
    from peggy_jvm.validate.counterexample import Built, Call, JvmHarness, Shape

    trees = compile_versions(java_home, tmp_path, "Spin.java",
                             {"orig": SPIN.replace("DELTA", "0"), "opt": SPIN.replace("DELTA", "1")})
    raw = {side: {"Spin": (trees[side] / "Spin.class").read_bytes()} for side in ("orig", "opt")}
    shape = Shape("instance", field_types=(("base", "I"),), ctor="(I)V", owner="Spin")
    calls = [Call("Spin", "Spin", "f", "(I)I", [1, Built((n,))], shape=shape, group=g, budget_ms=5000)
             for g, n in ((0, -1), (1, 1))]
    harness = JvmHarness(raw["orig"], raw["opt"])
    try:
        hung, other = harness.run(calls)
    finally:
        harness.close()
    assert hung is not None and hung.out_of_time and not hung.confirms and hung.runs_on is None, hung
    assert other is not None and other.confirms, other
    assert other.orig.startswith("R 2 ") and other.opt.startswith("R 3 "), other
