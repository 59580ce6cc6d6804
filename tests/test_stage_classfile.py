"""``optimize --stage classfile`` on the fixtures: byte-identical reading and writing, every method re-encoded,
every class verified by HotSpot, every program printing what it printed before; debug tables remapped when
offsets move; methods whose types cannot be merged kept unchanged; old jsr/ret classes handled."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from peggy_jvm.classfile import bytecode
from peggy_jvm.classfile.attributes import LineNumberTable, LocalVariableTable
from peggy_jvm.classfile.bytecode import Instruction
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.model import Attribute, CodeAttribute, ExceptionEntry
from peggy_jvm.classfile.opcodes import OPERAND_OF, SHORT_FORMS, Operand
from peggy_jvm.classfile.reader import read_class, read_code
from peggy_jvm.classfile.recode import build_code_attribute
from peggy_jvm.classfile.writer import write_class
from peggy_jvm.pipeline import Stage, optimize_class, optimize_input
from conftest import javac_command
from support.javac_cache import run_javac

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures" / "old"))
import jsr_fixture  # noqa: E402

TREES = ["release17", "release8", "old"]


def runnable(directory: Path) -> list[str]:
    names = []
    for p in sorted(directory.glob("*.class")):
        cf = read_class(p.read_bytes())
        if any(m.name == "main" and m.descriptor == "([Ljava/lang/String;)V" for m in cf.methods):
            names.append(cf.name)
    return names


def run_java(java_home: Path, cp: Path, name: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(java_home / "bin" / "java"), "-Xverify:all", "-cp", str(cp), name],
                          capture_output=True, timeout=120)


@pytest.mark.parametrize("tree", TREES)
def test_every_fixture_class_writes_back_byte_identical(fixture_classes, tree):
    files = sorted(fixture_classes[tree].glob("*.class"))
    assert files
    for p in files:
        data = p.read_bytes()
        assert write_class(read_class(data)) == data, p.name


@pytest.fixture(scope="module")
def recoded(fixture_classes, tmp_path_factory):
    out = {}
    for tree in TREES:
        target = tmp_path_factory.mktemp(tree) / "out"
        _, report = optimize_input(fixture_classes[tree], target, Stage.CLASSFILE, jobs=2)
        out[tree] = (target, report)
    return out


@pytest.mark.parametrize("tree", TREES)
def test_stage_classfile_rewrites_every_method_with_code(recoded, tree):
    _, report = recoded[tree]
    fallbacks = [f"{m.class_name}.{m.name}{m.descriptor}: {m.reason}" for m in report.methods
                 if m.status == "fallback"]
    assert fallbacks == []
    assert all(m.status == "rewritten" for m in report.methods if m.bytes_before)
    assert sum(m.status == "rewritten" for m in report.methods) >= (3 if tree == "old" else 400)


@pytest.mark.parametrize("tree", TREES)
def test_recoded_fixtures_verify_and_print_the_same(recoded, fixture_classes, verifier, run_mains, tree):
    target, _ = recoded[tree]
    proc = verifier(target)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "verify_errors=0" in proc.stdout
    names = runnable(fixture_classes[tree])
    assert len(names) >= (1 if tree == "old" else 15)
    before = run_mains(fixture_classes[tree], names)
    assert before.count(" end: ok\n") == len(names), before[-3000:]
    after = run_mains(target, names)
    assert after == before


def test_old_jsr_fixture_keeps_subroutines_and_gets_no_frames(recoded, java_home):
    target, _ = recoded["old"]
    cf = read_class((target / "JsrFinally.class").read_bytes())
    assert cf.major == 49
    names = set()
    for m in cf.methods:
        code = read_code(m.code_attribute().data, cf.pool)
        assert all(a.name != "StackMapTable" for a in code.attributes)
        names.update(i.name for i in bytecode.decode(code.code))
    assert {"jsr", "ret"} <= names
    assert run_java(java_home, target, "JsrFinally").stdout.decode() == jsr_fixture.EXPECTED_OUTPUT


# -- debug tables when offsets move -------------------------------------------------------------------------
def inflate(code: CodeAttribute) -> tuple[list[Instruction], bytes, list[ExceptionEntry], dict[int, int]]:
    """The same instructions with every implicit-local form (``iload_1``) spelled long (``iload 1``)."""
    old = bytecode.decode(code.code)
    new_offsets: dict[int, int] = {}
    pos = 0
    shaped = []
    for ins in old:
        opc, arg = SHORT_FORMS.get(ins.opcode, (ins.opcode, ins.arg))
        new_offsets[ins.offset] = pos
        length = bytecode.instruction_length(opc, pos, ins.wide, len(ins.targets or ()))
        shaped.append(Instruction(pos, opc, arg, ins.arg2, ins.wide, ins.keys, ins.targets, length))
        pos += length
    new_offsets[len(code.code)] = pos
    for ins in shaped:
        kind = OPERAND_OF[ins.opcode]
        if kind in (Operand.BRANCH2, Operand.BRANCH4) or ins.targets is not None:
            ins.arg = new_offsets[ins.arg]
        if ins.targets is not None:
            ins.targets = [new_offsets[t] for t in ins.targets]
    table = [ExceptionEntry(new_offsets[e.start], new_offsets[e.end], new_offsets[e.handler], e.catch_type)
             for e in code.exception_table]
    return shaped, bytecode.encode(shaped), table, new_offsets


def test_line_and_local_variable_tables_follow_moved_offsets(fixture_classes, java_home, tmp_path):
    original = (fixture_classes["release17"] / "Kernels.class").read_bytes()
    cf = read_class(original)
    h = ClassHierarchy([fixture_classes["release17"]])
    moved = 0
    for m in cf.methods:
        attr = m.code_attribute()
        if attr is None:
            continue
        code = read_code(attr.data, cf.pool)
        insns, new_code, table, remap = inflate(code)
        moved += len(new_code) != len(code.code)
        kept = []
        for a in code.attributes:
            if a.name == "LineNumberTable":
                t = LineNumberTable.parse(a.data)
                for e in t.entries:
                    e.start_pc = remap[e.start_pc]
                kept.append(Attribute(a.name_index, a.name, t.to_bytes()))
            elif a.name == "LocalVariableTable":
                t = LocalVariableTable.parse(a.data)
                for e in t.entries:
                    e.start_pc, e.length = remap[e.start_pc], remap[e.start_pc + e.length] - remap[e.start_pc]
                kept.append(Attribute(a.name_index, a.name, t.to_bytes()))
        attr.data = build_code_attribute(cf, m, insns, new_code, table, kept, h, code.max_locals)
    assert moved >= 5
    inflated = write_class(cf)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "Kernels.class").write_bytes(inflated)
    assert run_java(java_home, tmp_path / "in", "Kernels").stdout == run_java(
        java_home, fixture_classes["release17"], "Kernels").stdout

    back, reports = optimize_class(inflated, h, Stage.CLASSFILE)
    assert all(r.status == "rewritten" for r in reports if r.bytes_before)
    assert any(r.bytes_after < r.bytes_before for r in reports)
    # javac uses the shortest forms, so re-encoding restores javac's code and debug tables exactly
    javac_cf, ours = read_class(original), read_class(back)
    for jm, om in zip(javac_cf.methods, ours.methods):
        if jm.code_attribute() is None:
            continue
        jc = read_code(jm.code_attribute().data, javac_cf.pool)
        oc = read_code(om.code_attribute().data, ours.pool)
        assert oc.code == jc.code, jm.name
        assert oc.exception_table == jc.exception_table
        for name in ("LineNumberTable", "LocalVariableTable", "LocalVariableTypeTable"):
            assert [a.data for a in jc.attributes if a.name == name] == \
                   [a.data for a in oc.attributes if a.name == name], (jm.name, name)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "Kernels.class").write_bytes(back)
    assert run_java(java_home, tmp_path / "out", "Kernels").stdout == run_java(
        java_home, fixture_classes["release17"], "Kernels").stdout


# -- the class hierarchy: never guess ------------------------------------------------------------------------
HIERARCHY_SRC = {
    "Base.java": "public class Base { public String toString() { return getClass().getName(); } }",
    "Left.java": "public class Left extends Base {}",
    "Right.java": "public class Right extends Base {}",
    "Use.java": """public class Use {
        static Object pick(boolean b) { Base x = b ? new Left() : new Right(); return x; }
        static int plain(int a) { return a > 0 ? a : -a; }
        public static void main(String[] args) { System.out.println(pick(true) + " " + pick(false) + " " + plain(-3)); }
    }""",
}


def test_a_merge_needing_an_unknown_class_keeps_the_method_and_the_classpath_fixes_it(java_home, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name, text in HIERARCHY_SRC.items():
        (src / name).write_text(text)
    lib = tmp_path / "lib"
    run_javac([*javac_command(java_home), "-d", str(lib), *map(str, src.glob("*.java"))], check=True)
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(lib / "Use.class", alone / "Use.class")

    out, report = optimize_input(alone / "Use.class", tmp_path / "o1" / "Use.class", Stage.CLASSFILE)
    by_name = {m.name: m for m in report.methods}
    assert by_name["pick"].status == "fallback"
    assert "Left" in by_name["pick"].reason or "Right" in by_name["pick"].reason
    assert "not found" in by_name["pick"].reason
    assert by_name["plain"].status == "rewritten" and by_name["main"].status == "rewritten"
    orig_cf, new_cf = read_class((lib / "Use.class").read_bytes()), read_class(out.read_bytes())
    pick_orig = next(m for m in orig_cf.methods if m.name == "pick").code_attribute().data
    assert next(m for m in new_cf.methods if m.name == "pick").code_attribute().data == pick_orig
    shutil.copy(out, lib / "Use.class")
    assert run_java(java_home, lib, "Use").stdout.decode().strip() == "Left Right 3"

    out2, report2 = optimize_input(alone / "Use.class", tmp_path / "o2" / "Use.class", Stage.CLASSFILE,
                                   classpath=[lib])
    assert all(m.status == "rewritten" for m in report2.methods if m.bytes_before)
    shutil.copy(out2, lib / "Use.class")
    assert run_java(java_home, lib, "Use").stdout.decode().strip() == "Left Right 3"
