"""``optimize --stage peg`` (lift, build the PEG, revert it, lower) on the fixtures, and the PEG evaluator.

Every method without exception handlers goes through the PEG round trip; every class verifies under
-Xverify:all and every program prints what it printed; the differential runner calls every static method with
generated arguments on the original and the round-tripped classes. The PEG evaluator agrees with the IR
interpreter (itself held to the JVM in test_interp.py) on every fixture method both can run.
"""
from __future__ import annotations

import pytest

from peggy_jvm.classfile.reader import read_class, read_code
from peggy_jvm.pipeline import Stage, optimize_input
from test_stage_classfile import runnable
from test_stage_ir import assert_static_methods_agree

# the slow tier, the whole file: its module fixture takes every fixture tree through the PEG stage (112 s of a
# loaded fast-tier run's 3,041 s) and its tests run every fixture program on the JVM; the fast tier keeps the
# IR stage's round trip (test_stage_ir.py) and the full stage on chosen methods (test_optimize_full.py)
pytestmark = pytest.mark.slow

TREES = ["release17", "release8", "old"]
# methods the reverter leaves alone today, with its reason (a value computed inside a branch arm that has joined
# would be needed again after the join; the reverter does not yet carry it out of the arm)
LEFT_ALONE = {("Branches", "labeled", "an effect is needed again after the branch it ran in"),
              ("Switches", "strFall", "an effect is needed again after the branch it ran in")}


@pytest.fixture(scope="module")
def reverted(fixture_classes, tmp_path_factory):
    out = {}
    for tree in TREES:
        target = tmp_path_factory.mktemp(f"peg-{tree}") / "out"
        _, report = optimize_input(fixture_classes[tree], target, Stage.PEG, jobs=2)
        out[tree] = (target, report)
    return out


def _has_handlers(fixture_dir, report_row) -> bool:
    cf = read_class((fixture_dir / (report_row.class_name + ".class")).read_bytes())
    m = next(m for m in cf.methods if m.name == report_row.name and m.descriptor == report_row.descriptor)
    return bool(read_code(m.code_attribute().data, cf.pool).exception_table)


@pytest.mark.parametrize("tree", TREES)
def test_every_method_without_handlers_goes_through_the_peg(reverted, fixture_classes, tree):
    _, report = reverted[tree]
    fallbacks = {f"{m.class_name}.{m.name}{m.descriptor}": m.reason for m in report.methods
                 if m.status == "fallback"}
    assert fallbacks == {}
    unchanged = [m for m in report.methods if m.status == "unchanged" and m.bytes_before]
    for m in unchanged:
        if m.reason.startswith("exception handlers are not reverted yet"):
            assert _has_handlers(fixture_classes[tree], m)
        else:  # the reverter refused rather than risk running an effect twice: at most a few, each named
            assert (m.class_name, m.name, m.reason) in LEFT_ALONE, (m.class_name, m.name, m.reason)
    # the old tree is one class of three methods (jsr/ret), two of which go through the PEG
    assert sum(1 for m in report.methods if m.status == "rewritten") >= (2 if tree == "old" else 300)


@pytest.mark.parametrize("tree", TREES)
def test_reverted_fixtures_verify_and_print_the_same(reverted, fixture_classes, verifier, run_mains, tree):
    target, _ = reverted[tree]
    proc = verifier(target)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "verify_errors=0" in proc.stdout
    names = runnable(fixture_classes[tree])
    before = run_mains(fixture_classes[tree], names)
    assert before.count(" end: ok\n") == len(names)
    assert run_mains(target, names) == before


@pytest.mark.slow  # the slow tier: every static fixture method against the JVM (130 s of a loaded run's 3,200)
@pytest.mark.parametrize("tree", ["release17", "release8"])
def test_reverted_static_methods_agree_with_the_originals(reverted, fixture_classes, java_home, tree):
    target, _ = reverted[tree]
    assert_static_methods_agree(fixture_classes[tree], target, java_home, seed=3)
