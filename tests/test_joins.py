"""A continuation several paths reach is written once (the reverter's joins, ``revert.plan_joins``).

Purpose-written Java whose code after a branch is reached from two of its arms, with a value that differs per
arm: after the method's tests (a result reached on two paths of the result tree) and at the end of a loop
iteration (a ``continue`` on one path). The reverter used to generate the continuation on each path,
specialised by what the path knows (lang3 ``RandomStringUtils.random``: its loop written three times, 428 ->
1,561 bytes; JAMA ``hqr2``: the k-loop's body twice). Each continuation calls ``Integer.rotateLeft`` once: the
rebuilt code (``--stage peg`` and ``--stage full``) calls it once too, is no longer than javac's where javac's
is the join, verifies (``-Xverify:all``) and returns what javac's code returns.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

import difftest as dt
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.pipeline import Stage
from support.fullstage import optimize_stages

SOURCE = """
public class Joins {
    static int after(int[] a, int x) {
        int y;
        if (x > 0) {
            a[0] = 1;
            if (a[1] == 2) return 7;
            y = 5;
        } else {
            y = 9;
        }
        a[2] = Integer.rotateLeft(y, x) + Integer.bitCount(a[3]);
        return a[4] ^ Integer.reverse(y + x);
    }

    static int iteration(int[] a, int n) {
        int s = 0;
        for (int k = 0; k < n; k++) {
            if (k != 3) {
                a[k] = k * 2;
                if (a[k] == 0) continue;
                s += 1;
            }
            a[k] += Integer.rotateLeft(s, k);
            s = s * 3 + Integer.bitCount(a[k]);
        }
        return s;
    }
}
"""
METHODS = {"after": "([II)I", "iteration": "([II)I"}
ROTATE = "java/lang/Integer.rotateLeft(II)I"


@pytest.fixture(scope="module")
def built(java_home):
    root = Path(tempfile.mkdtemp(prefix="joins-"))
    try:
        yield optimize_stages(java_home, root, "Joins", SOURCE)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _code(classes: Path) -> dict[str, tuple[int, list[str]]]:
    """Method name -> (code length, the methods its invokestatic instructions call)."""
    cf = read_class((classes / "Joins.class").read_bytes())
    out = {}
    for m in cf.methods:
        attr = m.code_attribute()
        if attr is None or m.name not in METHODS:
            continue
        code = read_code(attr.data, cf.pool)
        calls = []
        for ins in read_instructions(code):
            if ins.opcode == op.INVOKESTATIC:
                ref = cf.pool.member_ref(ins.arg)
                calls.append(f"{ref.owner}.{ref.name}{ref.descriptor}")
        out[m.name] = (len(code.code), calls)
    return out


@pytest.mark.parametrize("stage", [Stage.PEG, Stage.FULL], ids=["peg", "full"])
def test_a_continuation_two_paths_reach_is_written_once(built, stage):
    src, outs = built
    out, report = outs[stage]
    orig, new = _code(src), _code(out)
    for name in METHODS:
        assert report[name].status in ("rewritten", "unchanged"), (name, report[name].reason)
        assert orig[name][1].count(ROTATE) == 1
        assert new[name][1].count(ROTATE) == 1, (stage, name, new[name])
    # javac jumps from both arms to the shared code: so does the rebuilt method, no longer than javac's
    assert new["after"][0] <= orig["after"][0], new["after"]


def test_joined_code_verifies_and_behaves_identically(built, java_home):
    src, outs = built
    calls = [dt.Call("Joins", name, desc, args) for name, desc in METHODS.items()
             for args in dt.generate_args(desc, 12, seed=17)]
    calls += [dt.Call("Joins", "after", "([II)I", ([3, b, 5, 6, 7], x)) for b in (2, 4) for x in (-3, 0, 1, 31)]
    calls += [dt.Call("Joins", "iteration", "([II)I", (list(a), n))
              for a in ([0, 1, 2, 3, 4, 5, 6], [5, -1, 0, 9, 2, 8, 1]) for n in (0, 3, 4, 7, 8)]
    original = dt.run_jvm(src, calls, java_home=java_home, timeout_ms=3000)
    for stage, (out, _) in outs.items():
        result = dt.compare(src, out, calls, java_home=java_home, timeout_ms=3000, original=original)
        assert result.mismatches == [], (stage, result.report())
        assert result.compared > 0.8 * len(calls), stage
