"""``optimize --stage ir`` (lift to the IR and lower back) on the fixtures: every method goes through the IR
except what the lifter reports it cannot do yet, every class verifies, every program prints what it printed."""
from __future__ import annotations

import pytest

from peggy_jvm.classfile.reader import read_class
from peggy_jvm.pipeline import Stage, optimize_input
from test_stage_classfile import runnable

TREES = ["release17", "release8", "old"]


@pytest.fixture(scope="module")
def lowered(fixture_classes, tmp_path_factory):
    out = {}
    for tree in TREES:
        target = tmp_path_factory.mktemp(f"ir-{tree}") / "out"
        _, report = optimize_input(fixture_classes[tree], target, Stage.IR, jobs=2)
        out[tree] = (target, report)
    return out


@pytest.mark.parametrize("tree", TREES)
def test_every_method_goes_through_the_ir(lowered, tree):
    _, report = lowered[tree]
    fallbacks = {f"{m.class_name}.{m.name}{m.descriptor}": m.reason for m in report.methods
                 if m.status == "fallback"}
    if tree == "old":  # jsr/ret subroutines are not inlined yet: those two methods keep their bytes
        assert set(fallbacks) == {"JsrFinally.compute(I)I", "JsrFinally.div(II)I"}
        assert all("jsr" in r for r in fallbacks.values())
    else:
        assert fallbacks == {}
    assert all(m.status != "unchanged" for m in report.methods if m.bytes_before)


@pytest.mark.parametrize("tree", TREES)
def test_lowered_fixtures_verify_and_print_the_same(lowered, fixture_classes, verifier, run_mains, tree):
    target, _ = lowered[tree]
    proc = verifier(target)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "verify_errors=0" in proc.stdout
    names = runnable(fixture_classes[tree])
    before = run_mains(fixture_classes[tree], names)
    assert before.count(" end: ok\n") == len(names)
    assert run_mains(target, names) == before


def test_lowered_code_keeps_temporaries_on_the_stack(lowered, fixture_classes):
    """Stack scheduling: a pure expression lowers without storing its intermediate values."""
    target, report = lowered["release17"]
    cf = read_class((target / "Kernels.class").read_bytes())
    orig = read_class((fixture_classes["release17"] / "Kernels.class").read_bytes())
    from peggy_jvm.classfile.model import CodeAttribute

    def locals_of(c):
        return {m.name: CodeAttribute.parse(m.code_attribute().data, c.pool).max_locals
                for m in c.methods if m.code_attribute() is not None}

    ours, javac = locals_of(cf), locals_of(orig)
    # every method needs at most a few slots more than javac's (stack variables across blocks)
    assert all(ours[name] <= javac[name] + 8 for name in javac), (ours, javac)
    ratio = sum(m.bytes_after for m in report.methods) / sum(m.bytes_before for m in report.methods)
    assert ratio < 1.3, ratio
