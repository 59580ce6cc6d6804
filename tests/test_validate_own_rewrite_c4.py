"""What the optimizer proved, ``validate`` must prove too (issue 17 item 8), on commons-collections4 (audit21).

The full stage rewrites ``functors.ComparatorPredicate.evaluate`` (166 -> 123 bytes for the class's rewrites) and
its self-check proves it, but ``validate`` of the output with its defaults ended "not proved: saturation saturated
after 13 iterations, 1633 nodes" (no difference found) before validate replayed the self-check's proof in the
optimizer's saturated E-PEG (``validate/replay.py``, session 19). In the whole jar's validation that one unknown
pair made 1,882 more unknown through callees (``equivalent if its callees are: Iterator.hasNext ...``): 274 of
the 357 rewritten methods, 1,883 of 4,493 pairs, 0 not equivalent; the same cause as commons-math3's
``Dfp.sqrt`` (``test_validate_replay.py``). The three ComparatorPredicate classes alone give the same bytes as
the whole-jar run. About 5 CPU-s. The jar is fetched (``scripts/fetch_corpus.sh --all``) when the corpus cache
lacks it.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from support.corpus import cache_dir, fetch_jars
from peggy_jvm.pipeline import Stage, optimize_input
from peggy_jvm.validate.driver import ValidateOptions, validate_inputs

JAR = cache_dir() / "jars" / "commons-collections4.jar"
PREFIX = "org/apache/commons/collections4/functors/ComparatorPredicate"


@pytest.fixture(scope="module")
def c4_jar() -> Path:
    if not JAR.exists():
        fetch_jars(all_jars=True)
    return JAR


def test_validate_proves_the_optimizers_rewrite(c4_jar: Path, tmp_path: Path):
    orig = tmp_path / "orig"
    with zipfile.ZipFile(c4_jar) as z:
        for name in z.namelist():
            if name.startswith(PREFIX) and name.endswith(".class"):
                z.extract(name, orig)
    out = tmp_path / "out"
    _, report = optimize_input(orig, out, Stage.FULL, classpath=[c4_jar], jobs=1)
    row = next(m for m in report.methods if m.name == "evaluate")
    assert row.status == "rewritten", row.reason  # what makes the test meaningful: the optimizer kept a rewrite
    v = validate_inputs(orig, out, ValidateOptions())
    pair = next(p for p in v.pairs if p.name == "evaluate" and p.class_name == PREFIX)
    assert pair.verdict.value == "equivalent", pair.reason
