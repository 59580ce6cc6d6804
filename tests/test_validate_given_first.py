"""A pair that waits for an unproved callee is proved given its callees first (validate/driver.py
``_Run._prove_strictly``, prove.py ``kept_apart_for_good``): when ORIG's PEG keeps a call of that callee which no
body replaces, the strict proof could only fail (or show the call dead), so it is not tried once the proof with
every callee assumed succeeds; the verdict and reason are what they were. Pairs whose strict proof can take the
unproved call away (dead in ORIG and gone from OPT, or inlined with each side's own body) are still proved
strictly, so equivalent.
"""
from __future__ import annotations

import pytest
from conftest import compile_versions, validate_rows

from peggy_jvm.validate import Verdict, driver

# swapped is FizzBuzz's classification written two ways: equivalent, but no axiom proves it, so it is never a
# proved pair, and a public instance method (overridable: its call is never inlined)
ORIG = """public class W {
    public int swapped(int x) { if (x % 15 == 0) return 3; if (x % 3 == 0) return 1; return x % 5 == 0 ? 2 : 0; }
    int caller(int x) { return swapped(x) * 2 + 1; }
    int deadCall(int x) { int z = x * 0; if (z != 0) return swapped(x); return x + 1; }
    static int pick(int x, int k) { if (k == 3) return x * 2; if (x % 15 == 0) return 3; return x % 3 == 0 ? 1 : 0; }
    static int callsPick(int x) { return pick(x, 3) + 1; }
}
"""
OPT = """public class W {
    public int swapped(int x) { int r = 0; if (x % 3 == 0) r += 1; if (x % 5 == 0) r += 2; return r; }
    int caller(int x) { return swapped(x) * 2 + 1; }
    int deadCall(int x) { return x + 1; }
    static int pick(int x, int k) { if (k == 3) return x + x; int r = 0; if (x % 3 == 0) r += 1; if (x % 5 == 0) r += 2; return r; }
    static int callsPick(int x) { return pick(x, 3) + 1; }
}
"""


@pytest.fixture(scope="module")
def attempts(java_home, tmp_path_factory):
    """The rows (no counterexample search: no JVM) and, per method, the views of its proof attempts in order."""
    trees = compile_versions(java_home, tmp_path_factory.mktemp("given_first"), "W.java", {"orig": ORIG, "opt": OPT})
    seen: dict[str, list[str]] = {}
    prove_one = driver._Run._prove_one

    def counted(self, pair, i, view, *rest):
        seen.setdefault(pair.orig.name, []).append("given" if view.assumed is None else "strict")
        return prove_one(self, pair, i, view, *rest)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(driver._Run, "_prove_one", counted)
        rows = validate_rows(trees, "W", counterexamples=False)
    return rows, seen


def test_a_caller_of_an_unproved_callee_is_proved_given_it_without_the_strict_attempt(attempts):
    rows, seen = attempts
    assert rows["swapped"].verdict is Verdict.UNKNOWN, rows["swapped"].reason
    assert rows["caller"].verdict is Verdict.UNKNOWN
    assert rows["caller"].reason == "not proved: equivalent if its callees are: W.swapped (not proved equivalent)"
    # one proof, with the callee given (before: the strict one first, saturated for nothing, then this one)
    assert seen["caller"] == ["given"], seen


@pytest.mark.parametrize("name", ["deadCall", "callsPick"])
def test_a_pair_whose_unproved_call_can_go_is_still_proved_strictly(attempts, name):
    # deadCall: ORIG's call of swapped sits in a branch never taken (x * 0 != 0), and OPT has none;
    # callsPick: pick is not proved, but inlined with each side's own body at k = 3 both are x * 2
    rows, seen = attempts
    assert rows[name].verdict is Verdict.EQUIVALENT, rows[name].reason
    assert seen[name] == ["strict"], seen
