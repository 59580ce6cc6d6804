"""What the optimizer proved, ``validate`` must prove too (issue 17 item 8), on commons-collections4 (audit21).

The full stage rewrites ``functors.ComparatorPredicate.evaluate`` (166 -> 123 bytes for the class's rewrites) and
its self-check proves it, but ``validate`` of the output with its defaults ends "not proved: saturation
saturated after 13 iterations, 1633 nodes" (no difference found). In the whole jar's validation that one
unknown pair makes 1,882 more unknown through callees (``equivalent if its callees are: Iterator.hasNext ...``):
274 of the 357 rewritten methods, 1,883 of 4,493 pairs, 0 not equivalent. The same cause as closing18's
commons-math3 ``Dfp.sqrt`` (the self-check's proof inside the optimizer's saturated E-PEG, which validate's
replay does not try). The fix belongs in validate/ (another helper's this session): a strict xfail until then.
The three ComparatorPredicate classes alone give the same bytes as the whole-jar run. About 5 CPU-s.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from support.corpus import cache_dir
from peggy_jvm.pipeline import Stage, optimize_input
from peggy_jvm.validate.driver import ValidateOptions, validate_inputs

JAR = cache_dir() / "jars" / "commons-collections4.jar"
PREFIX = "org/apache/commons/collections4/functors/ComparatorPredicate"


@pytest.mark.xfail(strict=True, reason="validate does not re-prove the optimizer's self-checked rewrite of "
                                       "ComparatorPredicate.evaluate (issue 17 item 8; validate/)")
def test_validate_proves_the_optimizers_rewrite(tmp_path: Path):
    if not JAR.exists():
        pytest.skip("commons-collections4.jar not in the corpus cache (scripts/fetch_corpus.sh)")
    orig = tmp_path / "orig"
    with zipfile.ZipFile(JAR) as z:
        for name in z.namelist():
            if name.startswith(PREFIX) and name.endswith(".class"):
                z.extract(name, orig)
    out = tmp_path / "out"
    _, report = optimize_input(orig, out, Stage.FULL, classpath=[JAR], jobs=1)
    row = next(m for m in report.methods if m.name == "evaluate")
    assert row.status == "rewritten", row.reason  # what makes the test meaningful: the optimizer kept a rewrite
    v = validate_inputs(orig, out, ValidateOptions())
    pair = next(p for p in v.pairs if p.name == "evaluate" and p.class_name == PREFIX)
    assert pair.verdict.value == "equivalent", pair.reason
