"""The extracted PEG's code generated once (issue 19, pay19's note): the reverter's acceptance test of the
candidate extraction returns (``revert.check_revertible``) generated its code, and reverting it generated the
same code again before tidying. Now the full stage tidies the code the acceptance test generated
(``revert.Generated``, ``pipeline.Revertible``): the class's bytes and every report row are those of the run
that generates it again, with fewer generations; the debug information is given to each candidate before the
test (``pegextract.select``'s ``carry``), so the generated code's line numbers and locals are the final ones,
and a PEG whose debug information changed since is generated again."""
from __future__ import annotations

from pathlib import Path

import pytest

import peggy_jvm.pipeline as pipeline
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.peg.build import build_peg
from peggy_jvm.pipeline import Stage, optimize_input
from peggy_jvm.revert import revert
from conftest import javac_command
from support.javac_cache import run_javac

SOURCE = """
public class Once {
    static int invariantSum(int[] a, int x, int y) {
        int s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * (x + y);
        }
        return s;
    }
    static int twice(int x) {
        int a = x * 4;
        int b = x * 4;
        return a + b;
    }
    static void fill(int[] a, int n, int k) {
        for (int i = 0; i < n; i++) {
            a[i] = k * n + i;
        }
    }
    static long scale(long[] v, long f) {
        long t = 0;
        for (int i = 0; i < v.length; i++) {
            v[i] = v[i] * (f + 1);
            t += v[i];
        }
        return t;
    }
}
"""


@pytest.fixture(scope="module")
def once_class(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("once")
    (work / "Once.java").write_text(SOURCE)
    run_javac([*javac_command(java_home), "-g", "-d", str(work / "classes"), str(work / "Once.java")], check=True)
    return work / "classes" / "Once.class"


def _run(src: Path, out: Path, reuse: bool, mp: pytest.MonkeyPatch) -> tuple[list, int]:
    generations: list[int] = []
    generate = revert._Emitter.generate

    def counted(self):
        generations.append(1)
        return generate(self)
    mp.setattr(revert._Emitter, "generate", counted)
    if not reuse:  # as before: reverting the extracted PEG generates its code again
        mp.setattr(pipeline.Revertible, "generated", lambda self, peg: None)
    _, report = optimize_input(src, out, Stage.FULL, jobs=1, method_timeout=None)
    return [(m.name, m.status, m.reason, m.bytes_after, m.cost_after, m.emitted_cost_after)
            for m in report.methods], len(generations)


def test_the_extracted_pegs_code_is_generated_once(once_class, tmp_path, monkeypatch):
    with monkeypatch.context() as mp:
        rows_on, on = _run(once_class, tmp_path / "on" / "Once.class", True, mp)
    with monkeypatch.context() as mp:
        rows_off, off = _run(once_class, tmp_path / "off" / "Once.class", False, mp)
    assert (tmp_path / "on" / "Once.class").read_bytes() == (tmp_path / "off" / "Once.class").read_bytes()
    assert rows_on == rows_off
    rewritten = [r for r in rows_on if r[1] == "rewritten"]
    assert len(rewritten) >= 2, rows_on
    # one generation fewer for each method whose extraction was reverted (every rewritten one at least)
    assert off - on >= len(rewritten), (on, off)


def test_generated_code_is_tidied_once_and_only_for_its_own_peg_and_debug_information(once_class):
    cf = read_class(once_class.read_bytes())
    m = next(m for m in cf.methods if m.name == "fill")
    ir = lift_method(cf, m, None)
    peg = build_peg(ir)
    expected = revert.revert_peg(peg, ir, rotate_loops=True)
    generated = revert.check_revertible(peg, ir)
    assert not generated.fits(build_peg(ir), ir)  # an equal PEG, but another object
    assert generated.fits(peg, ir)
    got = revert.revert_peg(peg, ir, rotate_loops=True, generated=generated)
    assert repr(sorted(got.blocks.items())) == repr(sorted(expected.blocks.items()))
    assert not generated.fits(peg, ir)  # tidied in place: used once
    again = revert.check_revertible(peg, ir)
    peg.origins[next(iter(peg.origins))] = -7  # the debug information changed after generation
    assert not again.fits(peg, ir)
