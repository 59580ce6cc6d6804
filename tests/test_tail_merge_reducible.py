"""Tail merging must not give a loop a second entry (found by audit21's sweep of joda-time, issue 15's back end).

``revert/tidy._merge_equal_blocks`` (and ``_merge_renamed_blocks``, up to renaming) merges blocks with the same
statements and successors. A loop whose carried value is chosen by a branch before the loop and again at the end
of every iteration (joda-time's
``IslamicChronology.getYear``: ``long one = isLeapYear(y) ? L : N; while (rem >= one) { rem -= one;
one = isLeapYear(++y) ? L : N; }``, the call inlined) has two pairs of equal arms: ``one = 7`` before the loop and
in it, ``one = 5`` likewise. Merged, each pair is one block inside the loop that the entry's branch also jumps
to: the loop is entered at two places, which is irreducible control flow. The JVM runs that code correctly, but

* ``--stage peg`` writes it as it is (a loop HotSpot's compilers treat as irreducible), and
* the full stage's self-check cannot build a PEG of it ("the emitted code is no PEG: irreducible control flow"),
  so the method keeps its original code: joda-time's ``IslamicChronology.getYear`` (traced to the merge) and
  ``ConverterSet.select`` (the same refusal, not traced).

The fix (revert/tidy._keep_reducible): both merges leave apart the blocks whose merging would make reducible
code irreducible. Both tests below fail without it.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import javac_command
from support.javac_cache import run_javac
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.peg.build import build_peg
from peggy_jvm.pipeline import Stage, optimize_input

SOURCE = """
public class TailMergeLoop {
    static boolean leap(int y) { return ((y * 11 + 14) % 30) < 11; }
    static int d(int rem, int year) {
        int one = leap(year) ? 7 : 5;
        while (rem >= one) {
            rem -= one;
            one = leap(++year) ? 7 : 5;
        }
        return year;
    }
}
"""


@pytest.fixture(scope="module")
def orig(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("tailmerge")
    (work / "TailMergeLoop.java").write_text(SOURCE)
    run_javac([*javac_command(java_home), "-d", str(work / "orig"), str(work / "TailMergeLoop.java")], check=True)
    return work / "orig" / "TailMergeLoop.class"


def _peg_of(class_file: Path, name: str) -> None:
    """Build the PEG of ``name`` as the self-check does for emitted code (raises PegUnsupported if irreducible)."""
    cf = read_class(class_file.read_bytes())
    build_peg(lift_method(cf, next(m for m in cf.methods if m.name == name), None))


def test_javac_code_is_reducible(orig: Path):
    _peg_of(orig, "d")  # the original has a PEG: the irreducibility below is the back end's


def test_stage_peg_keeps_the_loop_reducible(orig: Path, tmp_path: Path):
    out = tmp_path / "TailMergeLoop.class"
    optimize_input(orig, out, Stage.PEG, jobs=1)
    _peg_of(out, "d")


def test_full_stage_does_not_emit_irreducible_code(orig: Path, tmp_path: Path):
    _, report = optimize_input(orig, tmp_path / "TailMergeLoop.class", Stage.FULL, jobs=1)
    row = next(m for m in report.methods if m.name == "d")
    assert "irreducible" not in row.reason, row.reason
