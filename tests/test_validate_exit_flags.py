"""Validation of loops that leave on a flag (validate/normalize.py ``settle_exit_phis``): javac tests the flag at the
end of the body, so the loop carries a phi on it across the back edge; code that leaves where the flag is set
(ProGuard's, or what the optimizer emits, which its self-check must prove) does not. Each pair is proved only
with the phis settled, and a near miss (one more call on the way out) is shown different on the JVM.
"""
from __future__ import annotations

import pytest
from conftest import compile_versions, validate_rows

from peggy_jvm.validate import Verdict

COMMON = r"""
    static int calls;
    static boolean ready(int k) { calls++; return calls >= (k & 15); }
    static void pause() { calls += 3; }
"""

ORIG = r"""
public class F {""" + COMMON + r"""
    static int acquire(int k) { calls = 0; boolean ok; do { ok = ready(k); if (!ok) { pause(); } } while (!ok); return calls; }
    static int acquireTwice(int k) { calls = 0; boolean ok; do { ok = ready(k); if (!ok) { pause(); } } while (!ok); return calls; }
    static int retry(int k) {
        calls = 0; int v; boolean ok;
        do { v = calls * 2; ok = ready(k); if (!ok) { pause(); } } while (!ok);
        return v + calls;
    }
}
"""

OPT = r"""
public class F {""" + COMMON + r"""
    static int acquire(int k) { calls = 0; while (true) { if (ready(k)) { return calls; } pause(); } }
    static int acquireTwice(int k) { calls = 0; while (true) { if (ready(k)) { pause(); return calls; } pause(); } }
    static int retry(int k) { calls = 0; while (true) { int v = calls * 2; if (ready(k)) { return v + calls; } pause(); } }
}
"""


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    return compile_versions(java_home, tmp_path_factory.mktemp("exitflags"), "F.java", {"orig": ORIG, "opt": OPT})


@pytest.mark.parametrize("name", ["acquire", "retry"])
def test_a_loop_left_where_its_flag_is_set_is_proved(trees, name):
    row = validate_rows(trees, "F", counterexamples=False)[name]
    assert row.verdict is Verdict.EQUIVALENT, row.reason


@pytest.mark.parametrize("name", ["acquire", "retry"])
def test_without_settling_the_exit_phis_it_is_not(trees, name, monkeypatch):
    from peggy_jvm.validate import prove
    monkeypatch.setattr(prove, "settle_exit_phis", lambda peg: peg)
    row = validate_rows(trees, "F", counterexamples=False)[name]
    assert row.verdict is not Verdict.EQUIVALENT, row.reason


def test_one_more_call_on_the_way_out_is_not_equivalent(trees):
    row = validate_rows(trees, "F")["acquireTwice"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
