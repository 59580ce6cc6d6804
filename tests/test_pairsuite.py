"""Issue 17's check suite: labelled equivalence pairs (``fixtures/src/pairs``, labels in ``pairs.toml``), each two
classes with different names validated with ``--map``, written as refactorings and as mutants
(``support/pairsuite.py``; scripts/bench_pairs.py validates all of them and prints the table against the issue's
goals).

* The labels are checked themselves: every pair labelled different has a witness input, run here on both
  classes on the JVM, that must give different outcomes.
* ``validate`` must never contradict a label: a not-equivalent verdict on a pair labelled equivalent, one
  without a counterexample or on a method whose code is unchanged up to the renaming, or an equivalent verdict
  on a pair labelled different fails.
* The shares proved and shown must not fall below today's (:data:`PROVED_FLOOR`, :data:`SHOWN_FLOOR`).

The whole suite takes about 100 s of validation (95-108 s wall on two workers on a loaded machine), too long
for CI, so the verdict test validates a fixed sample, every third pair of the manifest (:data:`SAMPLE_STEP`: it
holds both labels and every tag), on two worker processes (43-56 s wall). The floors are the sample's measured
counts.
"""
from __future__ import annotations

import pytest
from support import fixture_build
from support import pairsuite as bp

SAMPLE_STEP = 3
METHOD_TIMEOUT = 10.0  # validate's default: the time goes to the JVM runs of loops, not to this budget
#: of the sample (every third pair: 48 labelled equivalent, 29 different since Grd01 and Grd04 joined it), measured
#: before they did: 36 proved, 26 shown (not shown: Loop02, whose difference needs n = MIN_VALUE and a loop of 2^31
#: steps, and Ax09, whose difference needs an object of the class under test as an argument, which the search does
#: not generate)
PROVED_FLOOR = 36
SHOWN_FLOOR = 26
#: what the suite must exercise (issue 17): each among the pairs of both labels
REQUIRED_TAGS = ("instance", "constructor", "recursion", "helper", "loop", "float", "array")


@pytest.fixture(scope="module")
def suite(java_home):
    return bp.load_suite(), fixture_build.build_pairs()


def test_the_suite_covers_what_issue_17_asks(suite):
    specs, classes = suite
    assert len(specs) >= 150
    for label in bp.LABELS:
        tagged = {t for s in specs if s.label == label for t in s.tags}
        assert sum(s.label == label for s in specs) >= 60, label
        assert set(REQUIRED_TAGS) <= tagged, (label, set(REQUIRED_TAGS) - tagged)
    for s in specs:  # two classes with different names, both built
        assert s.orig != s.opt and (classes / f"{s.orig}.class").is_file() and (classes / f"{s.opt}.class").is_file()


def test_every_different_label_is_shown_by_its_witness_on_the_jvm(suite, java_home):
    specs, classes = suite
    outcomes = bp.check_witnesses(specs, classes, java_home)
    different = {s.id for s in specs if s.label == "different"}
    assert set(outcomes) == different
    same = {pid: a for pid, (a, b) in outcomes.items() if a == b}
    assert not same, f"witnesses that show no difference: {same}"


def test_a_malformed_manifest_is_one_clear_error(tmp_path):
    bad = tmp_path / "pairs.toml"
    bad.write_text('pairs = [{ id = "X", label = "different", kind = "k", what = "w" }]\n')
    with pytest.raises(bp.SuiteError, match="needs a witness"):
        bp.load_suite(bad)
    bad.write_text('pairs = [{ id = "X", label = "same", kind = "k", what = "w" }]\n')
    with pytest.raises(bp.SuiteError, match="label 'same'"):
        bp.load_suite(bad)


def _row(name, descriptor, verdict, cx=None):
    return {"name": name, "descriptor": descriptor, "verdict": verdict, "counterexample": cx, "reason": "",
            "time_ms": 1.0}


def test_what_counts_as_a_wrong_verdict(suite):
    """The judging itself: a difference on a pair labelled equivalent, a difference without a counterexample, a
    difference on a method whose code is unchanged (Obj27's ``contains``: only its constructor changed), and a
    proof of a pair labelled different are wrong; the difference in Obj27's constructor is what it should be."""
    specs, classes = suite
    by_id = {s.id: s for s in specs}
    cx = {"args": ["5", "1"], "orig": "builds {hi=5, lo=1}", "opt": "builds {hi=1, lo=5}"}
    obj27, unchanged = by_id["Obj27"], bp.unchanged_methods(by_id["Obj27"], classes)
    assert unchanged == {("contains", "(I)Z")}
    ctor, contains = ("<init>", "(II)V"), ("contains", "(I)Z")
    judge = lambda spec, rows: bp.classify(spec, rows, bp.unchanged_methods(spec, classes)).result  # noqa: E731
    assert judge(obj27, [_row(*ctor, "not-equivalent", cx), _row(*contains, "unknown")]) == "shown"
    assert judge(obj27, [_row(*ctor, "unknown"), _row(*contains, "not-equivalent", cx)]) == "wrong"
    assert judge(obj27, [_row(*ctor, "not-equivalent"), _row(*contains, "unknown")]) == "wrong"
    assert judge(obj27, [_row(*ctor, "equivalent"), _row(*contains, "equivalent")]) == "wrong"
    obj26 = by_id["Obj26"]  # labelled equivalent
    assert judge(obj26, [_row(*ctor, "equivalent"), _row(*contains, "not-equivalent", cx)]) == "wrong"
    assert judge(obj26, [_row(*ctor, "equivalent"), _row(*contains, "unknown")]) == "unproved"
    assert judge(obj26, [_row(*ctor, "equivalent"), _row(*contains, "equivalent")]) == "proved"


@pytest.mark.slow  # the slow tier: validates a third of the suite (43-56 s wall on a loaded machine)
def test_validate_never_contradicts_a_label_and_keeps_its_shares(suite):
    specs, classes = suite
    sample = specs[::SAMPLE_STEP]
    outcomes = bp.run_suite(sample, classes, METHOD_TIMEOUT, jobs=2)
    summary = bp.summarize(outcomes)
    wrong = {o.id: [(m["name"], m["verdict"], m["counterexample"]) for m in o.methods]
             for o in outcomes if o.result == "wrong"}
    assert not wrong, wrong
    assert all(o.methods for o in outcomes), [o.id for o in outcomes if not o.methods]
    for o in outcomes:  # a difference is reported with the input and both JVM outcomes
        for m in o.methods:
            if m["verdict"] == "not-equivalent":
                cx = m["counterexample"]
                assert cx["args"] is not None and cx["orig"] != cx["opt"], (o.id, cx)
    assert summary.proved >= PROVED_FLOOR, bp.report_text(sample, outcomes, 0.0, classes)
    assert summary.shown >= SHOWN_FLOOR, bp.report_text(sample, outcomes, 0.0, classes)


def test_a_helper_replaced_by_one_equal_only_where_the_client_calls_it(suite):
    """Grd01/Grd03/Grd05: each side's helper, inlined before the normal forms, is decided by the client's guard
    (the helpers differ outside it, so only their bodies can meet; Grd05's loops are dead under the guard);
    Grd02/Grd04/Grd06, the guard moved to where the helpers differ, must be shown, never proved."""
    specs, classes = suite
    grd = [s for s in specs if s.id.startswith("Grd")]
    results = {o.id: o.result for o in bp.run_suite(grd, classes, METHOD_TIMEOUT)}
    assert results == {"Grd01": "proved", "Grd02": "shown", "Grd03": "proved", "Grd04": "shown",
                       "Grd05": "proved", "Grd06": "shown"}, results
