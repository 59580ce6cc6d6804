"""The constant-pool renumbering of ``--goal size`` (``classfile/poolorder.py``): the identity order writes every
class back byte for byte (fixtures, commons-lang3, JDK classes read with our jimage reader, ``module-info``
included); the ``ldc`` order keeps a hand-written class's meaning exactly (constants, catch types, frames,
annotation, lambdas, string concatenation's bootstrap arguments) and it runs the same under ``-Xverify:all``, as
it does with the pool reversed (``ldc`` growing to ``ldc_w``; a record, an annotation interface); commons-lang3
renumbered verifies and prints the same workload output; a class with an attribute the module does not know, or
an attribute index past the pool, is left as it was; ``optimize --goal size`` applies it and reports the shorter
methods.
"""
from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from peggy_jvm.classfile import attributes as at
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.frames import decode_stack_map, initial_frame
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.jimage import default_image
from peggy_jvm.classfile.model import Attribute, ClassFile
from peggy_jvm.classfile.poolorder import PoolOrderRefused, ldc_first_order, renumber_class, reorder_for_ldc
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.classfile.writer import write_class
from peggy_jvm.codecost import Goal
from peggy_jvm.pipeline import Stage, optimize_class
from support import workloads
from conftest import javac_command
from support.javac_cache import run_javac

FIXTURE_CLASSES = Path(__file__).resolve().parent.parent / "fixtures" / "classes"

MANY = ", ".join(f'"s{i:03d}"' for i in range(200))
# ``many`` comes first, so javac gives its 200 strings (400 entries) the low indices and everything the other
# methods load sits above 255: loaded with ldc_w until the renumbering. "HOT" is loaded three times by ``hot``.
SOURCE = """
import java.lang.annotation.*;
import java.util.function.*;

@Retention(RetentionPolicy.RUNTIME)
@interface Tag { String name(); int weight() default 7; Class<?> kind(); RetentionPolicy policy();
                 String[] aliases() default {}; }

public class PoolShapes {
    static String[] many() { return new String[] { MANY }; }

    @Tag(name = "hot", kind = StringBuilder.class, policy = RetentionPolicy.CLASS, aliases = {"a", "b"})
    static String hot(Object o, int n) {
        StringBuilder sb = new StringBuilder("HOT");
        Object cur = o;
        for (int i = 0; i < n; i++) {
            sb.append("HOT").append(i);
            cur = (i % 2 == 0) ? (Object) sb : "HOT";
        }
        try {
            if (n > 4) throw new IllegalStateException("HOT" + n);
            sb.append(Integer.parseInt(String.valueOf(o)));
        } catch (NumberFormatException e) {
            sb.append("HOT!");
        }
        return sb.toString() + cur;
    }

    record P(@Tag(name = "c", kind = int.class, policy = RetentionPolicy.SOURCE) int x,
             java.util.List<String> names) {}

    static int lambda(int k) {
        IntUnaryOperator f = x -> x * k + 100000;
        Supplier<String> s = () -> "HOT" + k;
        return f.applyAsInt(k) + s.get().length();
    }

    public static void main(String[] args) throws Exception {
        for (int n = 0; n < 5; n++) System.out.println(hot(n % 2 == 0 ? "12" : "x", n));
        try { hot("1", 6); } catch (IllegalStateException e) { System.out.println(e.getMessage()); }
        System.out.println(lambda(3));
        Tag t = PoolShapes.class.getDeclaredMethod("hot", Object.class, int.class).getAnnotation(Tag.class);
        System.out.println(t.name() + " " + t.weight() + " " + t.kind() + " " + t.policy() + " "
                           + String.join(",", t.aliases()));
        P p = new P(4, java.util.List.of("u", "v"));
        System.out.println(p + " " + p.equals(new P(4, java.util.List.of("u", "v"))) + " " + p.hashCode());
        for (var c : P.class.getRecordComponents())
            System.out.println(c.getName() + " " + c.getGenericType() + " " + java.util.Arrays.toString(c.getAnnotations()));
        String[] m = many();
        System.out.println(m.length + m[199]);
    }
}
""".replace("MANY", MANY)


def _identity(cf: ClassFile) -> bytes:
    return write_class(renumber_class(cf, [i for i, _ in cf.pool]))


def _jdk_sample() -> list[tuple[str, bytes]]:
    image = default_image()
    assert image is not None, "no JDK image"
    names = sorted(n for n in image.class_names() if n.startswith(("java/lang/", "java/util/", "jdk/internal/")))
    sample = [(n, image.find_class(n)) for n in names[::40]]
    # java.base's module-info, without the JDK's own ModuleHashes/ModuleTarget/ModuleResolution (not in the JVMS:
    # such a class is refused, see the test below), for Module and ModulePackages
    module = read_class(image.read("/java.base/module-info.class"))
    with pytest.raises(PoolOrderRefused, match="unknown attribute Module"):
        _identity(module)
    module.attributes = [a for a in module.attributes if a.name in at.ATTRIBUTE_TYPES]
    sample.append(("java.base module-info", write_class(module)))
    return [(n, d) for n, d in sample if d is not None]


def test_identity_order_writes_every_class_back_byte_for_byte(corpus_jars):
    classes = [(str(p), p.read_bytes()) for p in sorted(FIXTURE_CLASSES.rglob("*.class"))]
    with zipfile.ZipFile(corpus_jars["commons-lang3"]) as z:
        names = sorted(n for n in z.namelist() if n.endswith(".class"))
        classes += [(n, z.read(n)) for n in names[::3]]
    classes += _jdk_sample()
    assert len(classes) > 300
    attrs = set()
    for name, data in classes:
        cf = read_class(data)
        attrs.update(a.name for a in cf.attributes)
        assert _identity(cf) == data, name
    # the sample holds the attributes whose indices are easiest to miss
    assert {"Module", "BootstrapMethods", "InnerClasses", "NestMembers", "RuntimeVisibleAnnotations"} <= attrs


@pytest.fixture(scope="module")
def shapes(java_home, tmp_path_factory) -> tuple[Path, Path]:
    """(javac's classes, the same with PoolShapes renumbered for ldc)."""
    base = tmp_path_factory.mktemp("poolshapes")
    (base / "PoolShapes.java").write_text(SOURCE)
    orig = base / "orig"
    run_javac([*javac_command(java_home), "-d", str(orig), str(base / "PoolShapes.java")], check=True,
              capture_output=True)
    new = base / "new"
    shutil.copytree(orig, new)
    data = (orig / "PoolShapes.class").read_bytes()
    (new / "PoolShapes.class").write_bytes(reorder_for_ldc(data))
    return orig, new


def _methods(classes: Path) -> tuple[ClassFile, dict[str, tuple]]:
    cf = read_class((classes / "PoolShapes.class").read_bytes())
    out = {}
    for m in cf.methods:
        code = read_code(m.code_attribute().data, cf.pool)
        out[m.name] = (m, code, read_instructions(code))
    return cf, out


def test_ldc_order_puts_the_most_loaded_constant_first_and_drops_every_ldc_w(shapes):
    orig, new = shapes
    before, old = _methods(orig)
    after, now = _methods(new)
    assert after.pool.entry(1) == (8, after.pool.add_utf8("HOT"))  # loaded three times, the most
    order = ldc_first_order(before)
    assert before.pool.string(order[0]) == "HOT"
    ldc_w = [sum(i.opcode == op.LDC_W for i in m[2]) for m in old.values()]
    assert sum(ldc_w) > 80  # javac needed ldc_w for the strings of many() above 255 and for every later one
    assert all(i.opcode != op.LDC_W for m in now.values() for i in m[2])
    for name, (_, code, insns) in old.items():
        new_code, new_insns = now[name][1], now[name][2]
        # the same instructions, with the same constants, ldc_w read as ldc; each ldc_w one byte shorter
        assert len(new_insns) == len(insns)
        for a, b in zip(insns, new_insns):
            assert (op.LDC if a.opcode == op.LDC_W else a.opcode) == b.opcode
            if op.OPERAND_OF[a.opcode] in (op.Operand.CP1, op.Operand.CP2, op.Operand.INVOKEDYNAMIC,
                                           op.Operand.INVOKEINTERFACE):
                assert before.pool.describe(a.arg) == after.pool.describe(b.arg)
        assert len(new_code.code) == len(code.code) - sum(i.opcode == op.LDC_W for i in insns)


def test_try_catch_and_frames_move_with_the_shorter_code(shapes):
    orig, new = shapes
    before, old = _methods(orig)
    after, now = _methods(new)
    m, code, insns = old["hot"]
    _, new_code, new_insns = now["hot"]
    shift = {i.offset: sum(x.opcode == op.LDC_W for x in insns if x.offset < i.offset) for i in insns}
    [row], [new_row] = code.exception_table, new_code.exception_table
    assert before.pool.class_name(row.catch_type) == after.pool.class_name(new_row.catch_type) \
        == "java/lang/NumberFormatException"
    assert (new_row.start, new_row.end, new_row.handler) == \
        (row.start - shift[row.start], row.end - shift[row.end], row.handler - shift[row.handler])
    init = initial_frame("PoolShapes", m.name, m.descriptor, m.is_static)

    def frames(cf, c):
        [smt] = [a for a in c.attributes if a.name == "StackMapTable"]
        return decode_stack_map(smt.data, init, cf.pool)
    old_frames, new_frames = frames(before, code), frames(after, new_code)
    assert any("java/lang/Object" in f.locals for f in old_frames)  # an Object_variable_info is renumbered
    assert [(f.offset - shift[f.offset], f.locals, f.stack) for f in old_frames] == \
        [(f.offset, f.locals, f.stack) for f in new_frames]
    [lnt] = [a for a in code.attributes if a.name == "LineNumberTable"]
    [new_lnt] = [a for a in new_code.attributes if a.name == "LineNumberTable"]
    assert [(e.start_pc - shift[e.start_pc], e.line_number) for e in at.LineNumberTable.parse(lnt.data).entries] \
        == [(e.start_pc, e.line_number) for e in at.LineNumberTable.parse(new_lnt.data).entries]


def test_annotation_and_bootstrap_methods_keep_their_constants(shapes):
    orig, new = shapes
    views = []
    for classes in (orig, new):
        cf, methods = _methods(classes)
        m = methods["hot"][0]
        [ann] = at.RuntimeVisibleAnnotations.parse(
            next(a for a in m.attributes if a.name == "RuntimeVisibleAnnotations").data).annotations
        values = []
        for pair in ann.elements:
            v = pair.value
            items = v.values if isinstance(v, at.ArrayElementValue) else [v]
            for item in items:
                if isinstance(item, at.EnumElementValue):
                    values.append((cf.pool.utf8(item.type_name_index), cf.pool.utf8(item.const_name_index)))
                elif isinstance(item, at.ClassElementValue):
                    values.append(cf.pool.utf8(item.class_info_index))
                else:
                    values.append(item.value(cf.pool))
            values.append(cf.pool.utf8(pair.element_name_index))
        bsm = at.BootstrapMethods.parse(next(a for a in cf.attributes if a.name == "BootstrapMethods").data)
        boot = [(cf.pool.describe(b.bootstrap_method_ref), [cf.pool.describe(x) for x in b.bootstrap_arguments])
                for b in bsm.methods]
        views.append((cf.pool.utf8(ann.type_index), values, boot))
    assert views[0] == views[1]
    assert views[0][1] == ["hot", "name", "Ljava/lang/StringBuilder;", "kind", ("Ljava/lang/annotation/RetentionPolicy;",
                           "CLASS"), "policy", "a", "b", "aliases"]
    assert any(repr("HOT\u0001") in arg for _, args in views[0][2] for arg in args)  # the concatenation's recipe


def _run(java_home: Path, classes: Path) -> str:
    """PoolShapes' output under -Xverify:all."""
    proc = subprocess.run([str(java_home / "bin" / "java"), "-Xverify:all", "-cp", str(classes), "PoolShapes"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_renumbered_class_runs_the_same_under_verify_all(shapes, java_home):
    outputs = [_run(java_home, classes) for classes in shapes]
    assert outputs[0] == outputs[1]
    assert "hot 7 class java.lang.StringBuilder CLASS a,b" in outputs[1] and "100013" in outputs[1]


def test_any_order_keeps_every_class_running_the_same(shapes, java_home, tmp_path):
    """The pool reversed (the most demanding order: javac's low-index constants, loaded by ldc, move above 255
    and need ldc_w) for the class, its record (Record, its components' Signature and annotations, the
    ObjectMethods bootstrap) and the annotation interface (AnnotationDefault)."""
    orig, _ = shapes
    rev = tmp_path / "reversed"
    rev.mkdir()
    for path in orig.glob("*.class"):
        cf = read_class(path.read_bytes())
        (rev / path.name).write_bytes(write_class(renumber_class(cf, [i for i, _ in cf.pool][::-1])))
    record = read_class((rev / "PoolShapes$P.class").read_bytes())
    assert {"Record", "BootstrapMethods"} <= {a.name for a in record.attributes}
    assert "AnnotationDefault" in {a.name for m in read_class((rev / "Tag.class").read_bytes()).methods
                                   for a in m.attributes}
    _, methods = _methods(rev)
    assert sum(i.opcode == op.LDC_W for i in methods["many"][2]) > 150  # the growth path was taken
    outputs = [_run(java_home, classes) for classes in (orig, rev)]
    assert outputs[0] == outputs[1]
    assert "x int [@Tag(" in outputs[1] and "names java.util.List<java.lang.String>" in outputs[1]


def test_a_class_with_an_unknown_attribute_is_left_as_it_was(shapes):
    orig, _ = shapes
    cf = read_class((orig / "PoolShapes.class").read_bytes())
    # a non-standard attribute holding a pool index (here the class's own): renumbering could not know
    cf.attributes.append(Attribute(cf.pool.add_utf8("org.example.Owner"), "org.example.Owner",
                                   cf.this_index.to_bytes(2, "big")))
    data = write_class(cf)
    with pytest.raises(PoolOrderRefused, match="unknown attribute org.example.Owner"):
        renumber_class(read_class(data), ldc_first_order(read_class(data)))
    assert reorder_for_ldc(data) == data
    # the control: without it the class is renumbered
    assert reorder_for_ldc((orig / "PoolShapes.class").read_bytes()) != (orig / "PoolShapes.class").read_bytes()


def test_goal_size_renumbers_and_reports_the_shorter_code(shapes):
    orig, _ = shapes
    data = (orig / "PoolShapes.class").read_bytes()
    h = ClassHierarchy([orig])
    sized, rows = optimize_class(data, h, Stage.CLASSFILE, goal=Goal.SIZE)
    speed, _ = optimize_class(data, h, Stage.CLASSFILE, goal=Goal.SPEED)
    assert sized == reorder_for_ldc(speed) != speed
    by_name = {r.name: r for r in rows}
    cf, methods = _methods(orig)
    for name in ("many", "hot", "main"):
        ldc_w = sum(i.opcode == op.LDC_W for i in methods[name][2])
        assert by_name[name].bytes_after == by_name[name].bytes_before - ldc_w > 0


# the slow tier: a whole jar renumbered, verified and run (7 s of CPU); the fast tier runs PoolShapes renumbered
# (every order) under -Xverify:all
@pytest.mark.slow
def test_commons_lang3_renumbered_verifies_and_runs_its_workload(corpus_jars, verifier, java_home, tmp_path):
    jar = corpus_jars["commons-lang3"]
    out = tmp_path / "lang3-ldc.jar"
    changed = 0
    with zipfile.ZipFile(jar) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(".class"):
                new = reorder_for_ldc(data)
                changed += new != data
                data = new
            dst.writestr(info, data)
    assert changed >= 20
    proc = verifier(out)
    assert proc.returncode == 0 and "verify_errors=0 other_failures=0" in proc.stdout, proc.stdout[-3000:]
    classes = workloads.compile_workload(workloads.resolve_workload("Lang3Work"), [jar], tmp_path / "wl", java_home)
    runs = [workloads.run_workload(j, classes, "Lang3Work", home=java_home, timeout=180) for j in (jar, out)]
    assert runs[0].returncode == 0 and len(runs[0].stdout_bytes) > 1000
    assert workloads.difference(runs[0], runs[1], "original", "renumbered") is None


def test_a_bad_index_in_an_attribute_leaves_the_class_as_it_was(shapes):
    orig, _ = shapes
    cf = read_class((orig / "PoolShapes.class").read_bytes())
    # a Signature pointing past the pool: the views parse structure only, so the renumbering meets it
    cf.attributes.append(Attribute(cf.pool.add_utf8("Signature"), "Signature", (len(cf.pool) + 9).to_bytes(2, "big")))
    data = write_class(cf)
    assert reorder_for_ldc(data) == data
