"""One class's methods spread over tasks (issue 19 item 2, ``pipeline.optimize_methods`` / ``merge_class``):
each method is optimized against the original class with its own copy of the constant pool, and the rewrites'
added entries are merged in method order, so ``--jobs 1``, ``--jobs 2`` with the class split into parts, and
any order of the parts give the same bytes.

The class is purpose-written: most methods fold constants into new pool entries (each method's own, so the
merge renumbers every rewrite after the first), one inlines a same-class callee that is itself rewritten (the
callee's PEG comes from the original code), and the pool is padded to just below 256 entries, so that merged
constants land above 255 and their ``ldc`` must become ``ldc_w``. Outputs are verified and run against the
original on the JVM (``-Xverify:all``).
"""
from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from conftest import javac_command
from support.javac_cache import run_javac

from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.constpool import ConstantPool
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.poolorder import merge_entries
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.pipeline import (Stage, _tasks, merge_class, optimize_class, optimize_input,
                                optimize_methods)

BODY = """
    static int helper(int x) { int a = 6; int b = a * 7000; return x + b; }
    static int caller(int x) { return helper(x) * 2 + 1; }
    static int f1(int x) { int a = 123; int b = a * 1000; return x + b; }
    static int f2(int x) { int a = 321; int b = a * 1000; return x - b; }
    static int f3(int x) { int a = 55; int b = a * 1001; return x ^ b; }
    static long g(long x) { long a = 77; long b = a * 100000; return x + b; }
    static double d(double x) { double a = 1.5; return x * (a * 3.0); }
    public static void main(String[] args) {
        for (int x : new int[] {0, 1, -7, 123456, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
            System.out.println(helper(x) + " " + caller(x) + " " + f1(x) + " " + f2(x) + " " + f3(x) + " "
                               + g(x) + " " + d(x));
        }
    }
"""
#: the pool's size before the rewrites: the merged constants of later methods then need ``ldc_w``
POOL_TARGET = 254


def _source(strings: int, ints: int) -> str:
    texts = ", ".join(f'"p{k}"' for k in range(strings))
    ints_ = ", ".join(f"{100000 + k}" for k in range(ints))
    return (f"public class Sp {{{BODY}    static Object[] pad() {{ return new Object[] {{ new String[] {{{texts}}}, "
            f"new int[] {{{ints_}}} }}; }}\n}}\n")


def _compile(java_home: Path, src: str, d: Path) -> bytes:
    d.mkdir(parents=True, exist_ok=True)
    (d / "Sp.java").write_text(src)
    run_javac([*javac_command(java_home), "-g", "-d", str(d), str(d / "Sp.java")], check=True)
    (d / "Sp.java").unlink()
    return (d / "Sp.class").read_bytes()


@pytest.fixture(scope="module")
def sp(java_home, tmp_path_factory) -> Path:
    """``Sp.class`` with its pool padded to :data:`POOL_TARGET` entries (each string adds two, an int one)."""
    d = tmp_path_factory.mktemp("split-in")
    size = len(read_class(_compile(java_home, _source(0, 0), d)).pool.entries)
    strings, ints = divmod(POOL_TARGET - size, 2)
    data = _compile(java_home, _source(strings, ints), d)
    assert len(read_class(data).pool.entries) == POOL_TARGET
    return d


def _run(java_home: Path, classes: Path) -> str:
    proc = subprocess.run([str(java_home / "bin" / "java"), "-Xverify:all", "-cp", str(classes), "Sp"],
                          capture_output=True, text=True, check=True)
    return proc.stdout


def _opcodes(data: bytes) -> dict[str, list[int]]:
    cf = read_class(data)
    return {m.name: [i.opcode for i in read_instructions(read_code(a.data, cf.pool))]
            for m in cf.methods if (a := m.code_attribute()) is not None}


def test_split_class_same_bytes_as_one_task(sp, tmp_path, java_home):
    """``--jobs 1`` (the class whole) and ``--jobs 2`` with the class in one task per method (parts run in
    the pool's order, largest first, not the method order): the same bytes and report rows; the rewrites verify
    and behave as the original; merged constants past 255 are loaded by ``ldc_w``."""
    data = (sp / "Sp.class").read_bytes()
    assert len(_tasks([(0, "Sp", data)], 1)) == len(read_class(data).methods)  # really split
    _, one = optimize_input(sp, tmp_path / "one", Stage.FULL, jobs=1)
    _, two = optimize_input(sp, tmp_path / "two", Stage.FULL, jobs=2, split_bytes=1)
    out = (tmp_path / "one" / "Sp.class").read_bytes()
    assert (tmp_path / "two" / "Sp.class").read_bytes() == out
    rows = [(m.name, m.status, m.reason, m.bytes_after) for m in one.methods]
    assert [(m.name, m.status, m.reason, m.bytes_after) for m in two.methods] == rows
    rewritten = {m.name for m in one.methods if m.status == "rewritten"}
    assert {"helper", "caller", "f1", "f2", "f3"} <= rewritten
    assert next(m for m in one.methods if m.name == "caller").inlined  # helper's body, not a call
    assert not any("merge" in m.reason for m in one.methods)
    before, after = _opcodes(data), _opcodes(out)
    assert not any(op.LDC_W in code for code in before.values())
    assert any(op.LDC_W in after[name] for name in rewritten)  # renumbered past 255: the wide form
    assert _run(java_home, tmp_path / "one") == _run(java_home, sp)


def test_merge_does_not_depend_on_task_order(sp):
    """The methods optimized one per task, the tasks in a shuffled order (each against the original class,
    whatever ran before in the process), then merged: the same bytes as the class in one call; the tasks'
    rewrites really needed renumbering (two of them added different entries at the same private index)."""
    data = (sp / "Sp.class").read_bytes()
    hierarchy = ClassHierarchy([])
    whole, rows = optimize_class(data, hierarchy, Stage.FULL)
    n = len(read_class(data).methods)
    order = list(range(n))
    random.Random(19).shuffle(order)
    got = {j: optimize_methods(data, ClassHierarchy([]), Stage.FULL, methods=range(j, j + 1))[0] for j in order}
    outcomes = [got[j] for j in range(n)]
    firsts = [o.added[0] for o in outcomes if o.code is not None and o.added]
    assert len(set(firsts)) >= 2
    merged, merged_rows = merge_class(data, outcomes)
    assert merged == whole
    assert [(r.name, r.status, r.bytes_after) for r in merged_rows] == [(r.name, r.status, r.bytes_after)
                                                                         for r in rows]


def test_a_part_lost_keeps_its_methods(sp, tmp_path, monkeypatch):
    """A part whose worker died keeps its methods' original code (``fallback``) while the other parts' rewrites
    are merged; the class is still written whole and readable."""
    import peggy_jvm.pipeline as pipeline
    data = (sp / "Sp.class").read_bytes()
    names = [m.name for m in read_class(data).methods]

    def pool(items, jobs, task, initializer, initargs, record, died, tick=None, tick_seconds=1.0):
        initializer(*initargs)
        for item in items:
            lost = item.part is not None and names[item.part[0]] == "f1"
            if record(item, died(item, "worker process died (test)") if lost else task(item)):
                return
    monkeypatch.setattr(pipeline, "run_pool", pool)
    _, rep = optimize_input(sp, tmp_path / "out", Stage.FULL, jobs=2, split_bytes=1)
    status = {m.name: m.status for m in rep.methods}
    assert status["f1"] == "fallback" and status["f2"] == "rewritten"
    out = read_class((tmp_path / "out" / "Sp.class").read_bytes())
    f1 = next(m for m in out.methods if m.name == "f1")
    assert f1.code_attribute().data == next(m for m in read_class(data).methods if m.name == "f1"
                                            ).code_attribute().data


def test_merge_entries_shares_and_renumbers():
    """Two rewrites' private pools, each grown from the same class pool: merged in order, the second's entries
    land after the first's, an entry both added is shared, references are renumbered, and a Long keeps two
    slots."""
    base = ConstantPool()
    base.add_class("java/lang/Object")
    start = len(base.entries)
    first, second = base.copy(), base.copy()
    ref = first.add_member_ref(10, "p/X", "m", "()V")
    big = first.add((5, 1 << 40))
    cls, num = second.add_class("p/X"), second.add_int(70000)
    assert cls < ref and num >= start  # the same private indices as the first's entries
    merged = base.copy()
    m1 = merge_entries(merged, first, start)
    assert all(m1[i] == i for i in range(start, len(m1)) if first.entries[i])  # the first: where it was
    m2 = merge_entries(merged, second, start)
    assert merged.describe(m1[ref]) == "Method p/X.m:()V" and merged.describe(m1[big]) == f"long {1 << 40}"
    assert m2[cls] == merged.entries[m1[ref]][1]  # class p/X: the first's entry, shared
    assert merged.describe(m2[num]) == "int 70000" and m2[num] == len(first.entries)  # after the Long's 2 slots
    assert len(base.entries) == start  # the copies grew, not the class's pool
