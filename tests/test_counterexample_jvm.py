"""The counterexample search's JVM (``counterexample.JvmHarness``, ``Harness.java``): one JVM serves a validate
run's calls one at a time, a run that does not finish is stopped within the pair's budget and a fresh JVM takes
the next call (the search goes on: the next input may differ), a JVM that does not answer is killed, and the
hang rule (one side returns, the other still runs ``HANG_FACTOR`` times as long, at least ``HANG_FLOOR_MS``)
can fire whatever the side that returned took, in either direction.

The looping methods sleep in their loops: a stopped run's thread goes on until its JVM exits, and it should not
take a core of a shared machine meanwhile.
"""
from __future__ import annotations

import stat
import time

import pytest
from conftest import compile_versions, validate_rows

from peggy_jvm.egraph.clock import clock
from peggy_jvm.validate import Verdict
from peggy_jvm.validate import counterexample as cx

SRC = """public class H {
    static int inc(int x) { return x + %(inc)s; }
    static int twice(int x) { return x * 2; }
    static int spin(int x) throws Exception {
        for (long i = 0; i < Long.MAX_VALUE; i++) { Thread.sleep(5); }
        return x + %(inc)s;
    }
    static int once(int x) throws Exception {
        Thread.sleep(0);
        if (x == 0) { for (;;) { Thread.sleep(5); } }
        return x + %(inc)s;
    }
    static int late(int x) throws Exception { %(late)s return x; }
    static int early(int x) throws Exception { %(early)s return x; }
}
"""
LOOP = "while (x > Integer.MIN_VALUE) { Thread.sleep(5); }"
BUDGET_S = 6.0


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    # OPT's late() runs for ever where ORIG's returns; ORIG's early() runs for ever where OPT's returns
    return compile_versions(java_home, tmp_path_factory.mktemp("cxjvm"), "H.java", {
        "orig": SRC % {"inc": "1", "late": "", "early": LOOP},
        "opt": SRC % {"inc": "2", "late": LOOP, "early": ""}})


def _harness(trees) -> cx.JvmHarness:
    raw = {side: {"H": (trees[side] / "H.class").read_bytes()} for side in ("orig", "opt")}
    return cx.JvmHarness(raw["orig"], raw["opt"])


def _call(name: str, x: int) -> cx.Call:
    return cx.Call("H", "H", name, "(I)I", [x])


def test_one_jvm_answers_call_after_call(trees):
    harness = _harness(trees)
    try:
        same, _ = harness.ask(_call("twice", 3), clock() + 20)
        differs, _ = harness.ask(_call("inc", 3), clock() + 20)
    finally:
        harness.close()
    assert same is not None and same.orig == same.opt and same.orig.startswith("R 6 "), same
    assert differs is not None and differs.confirms, differs
    assert (differs.orig.split()[1], differs.opt.split()[1]) == ("4", "5"), differs
    # ORIG runs again only where the two differ (is it ORIG's own nondeterminism?): not where they agree
    assert same.orig_again == "SAME" and not same.out_of_time and not same.confirms, same
    assert differs.orig_again == differs.orig, differs
    assert harness.starts == 1


def test_a_run_that_does_not_finish_is_stopped_in_the_budget_and_a_fresh_jvm_goes_on(trees):
    harness = _harness(trees)
    try:
        harness.ask(_call("twice", 1), clock() + 20)  # the JVM is up: what follows is the run's time
        t0 = time.monotonic()
        hung, why = harness.ask(_call("spin", 0), clock() + 1.0)
        took = time.monotonic() - t0
        after, _ = harness.ask(_call("inc", 0), clock() + 20)
    finally:
        harness.close()
    assert hung is not None and hung.out_of_time and not hung.confirms and hung.runs_on is None, (hung, why)
    assert took < 1.0 + cx.ANSWER_GRACE_S, took
    assert after is not None and after.confirms, after
    assert harness.starts == 2  # the JVM that ran the stopped thread exited; another answered the next call


def test_a_jvm_that_does_not_answer_is_killed_at_the_deadline(trees, tmp_path):
    mute = tmp_path / "mute-java"
    mute.write_text("#!/bin/sh\necho READY\nexec sleep 60\n")
    mute.chmod(mute.stat().st_mode | stat.S_IXUSR)
    harness = _harness(trees)
    harness.java = str(mute)
    try:
        t0 = time.monotonic()
        answer, why = harness.ask(_call("inc", 0), clock() + 0.5)
        took = time.monotonic() - t0
        proc_gone = harness._proc is None
        harness.java = cx._java_tool("java")
        again, _ = harness.ask(_call("inc", 0), clock() + 20)
    finally:
        harness.close()
    assert answer is None and "did not answer within the pair's budget: killed" in why, why
    assert took < 0.5 + cx.ANSWER_GRACE_S + 0.5, took
    assert proc_gone
    assert again is not None and again.confirms, again


@pytest.fixture(scope="module")
def rows(trees):
    # a 200 ms cap per run, below the hang rule's floor: the rule fires only if the side still running is waited
    # for past the cap (with a fixed cap per run it could not fire once the side that returned took over
    # cap / HANG_FACTOR: 20 ms with the 2 s cap)
    mp = pytest.MonkeyPatch()
    mp.setattr(cx, "CALL_TIMEOUT_MS", 200)
    try:
        t0 = time.monotonic()
        out = validate_rows(trees, "H", method_timeout=BUDGET_S)
        out["_wall"] = time.monotonic() - t0
        return out
    finally:
        mp.undo()


@pytest.mark.parametrize("name, slow, fast", [("late", "OPT", "ORIG"), ("early", "ORIG", "OPT")])
def test_one_side_running_far_longer_than_the_other_took_is_a_difference(rows, name, slow, fast):
    row = rows[name]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert f"({slow} was still running after " in row.reason and f" ms where {fast} finished in " in row.reason, \
        row.reason
    waited = int(row.reason.split(" was still running after ")[1].split(" ms")[0])
    took = int(row.reason.split(" finished in ")[1].split(" ms")[0])
    assert waited >= max(cx.HANG_FLOOR_MS, cx.HANG_FACTOR * took) > 200, row.reason
    assert row.counterexample["orig" if slow == "ORIG" else "opt"].startswith("still running after "), \
        row.counterexample
    assert row.time_ms < (BUDGET_S + cx.ANSWER_GRACE_S) * 1000, row.time_ms


def test_a_hung_pair_is_unknown_within_its_budget_and_the_next_pair_is_still_shown(rows):
    spin = rows["spin"]
    assert spin.verdict is Verdict.UNKNOWN, spin.reason
    assert "did not finish within the pair's budget: stopped" in spin.reason, spin.reason
    assert spin.time_ms < (BUDGET_S + cx.ANSWER_GRACE_S) * 1000, spin.time_ms
    assert rows["inc"].verdict is Verdict.NOT_EQUIVALENT, rows["inc"].reason
    assert rows["twice"].verdict is Verdict.EQUIVALENT, rows["twice"].reason


def test_the_search_goes_on_after_an_input_that_runs_on_in_both_versions(rows):
    # once(0) runs for ever in both versions (stopped at the cap: no evidence either way); once(1) differs
    row = rows["once"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["args"] == ["1"], row.counterexample


LOOPS_FIRST = """public class L {
    static int once(int x) throws Exception {
        Thread.sleep(0);
        if (x == 0) { for (;;) { Thread.sleep(5); } }
        return x + %s;
    }
}
"""


def test_an_input_that_runs_on_in_both_versions_leaves_the_next_one_its_time(java_home, tmp_path_factory,
                                                                             monkeypatch):
    # once(0), the first input the JVM is asked about, runs for ever in both versions; once(1) differs. ORIG's run
    # of once(0) is stopped at its cap (5 s here); OPT's then shows something only if it ends within 1/HANG_FACTOR
    # of what ORIG can still be waited for (the hang rule), so it runs no longer than that (~40 ms), and once(1)
    # gets the rest of the 9 s: a fresh JVM (a loaded machine's few seconds) and its call. OPT ran until its own
    # cap or the budget's end before, whichever came first: with a budget under twice the cap, always the end,
    # and the pair was unknown.
    monkeypatch.setattr(cx, "CALL_TIMEOUT_MS", 5000)
    trees = compile_versions(java_home, tmp_path_factory.mktemp("cxloops"), "L.java",
                             {"orig": LOOPS_FIRST % "1", "opt": LOOPS_FIRST % "2"})
    row = validate_rows(trees, "L", method_timeout=9.0)["once"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["args"] == ["1"], row.counterexample
    assert (row.counterexample["orig"], row.counterexample["opt"]) == ("returns 2", "returns 3"), row.counterexample
    assert row.time_ms < (9.0 + cx.ANSWER_GRACE_S) * 1000, row.time_ms


CRASH = """public class C {
    static final sun.misc.Unsafe U;
    static {
        try {
            java.lang.reflect.Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            U = (sun.misc.Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) { throw new Error(e); }
    }
    static long peek(long a) { return U.getLong(a + %s); }
}
"""


def test_a_call_that_crashes_the_jvm_leaves_nothing_in_the_working_directory(java_home, tmp_path, monkeypatch):
    """guava's ``LittleEndianByteArray`` given generated arguments crashed the harness's JVM (audit21): its crash
    report (``hs_err_pid*.log``) went to the user's working directory. It now goes to the run's own directory,
    which goes with the run, and the JVM runs there; the next call gets a fresh JVM."""
    trees = compile_versions(java_home, tmp_path, "C.java", {"orig": CRASH % "0L", "opt": CRASH % "8L"})
    raw = {side: {"C": (trees[side] / "C.class").read_bytes()} for side in ("orig", "opt")}
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    harness = cx.JvmHarness(raw["orig"], raw["opt"])
    try:
        crashed, why = harness.ask(cx.Call("C", "C", "peek", "(J)J", [0]), clock() + 30)
        assert crashed is None, crashed  # the JVM died: no outcomes
        after, _ = harness.ask(cx.Call("C", "C", "peek", "(J)J", [0]), clock() + 30)
    finally:
        harness.close()
    assert harness.starts >= 2, why
    assert list(work.iterdir()) == []
