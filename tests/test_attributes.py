"""Tests for peggy_jvm.classfile.attributes: typed views of the standard attributes (JVMS 4.7).

Round trips (``decode_attribute(a, pool).to_bytes() == a.data`` at class, field, method, Code and
record-component level) over

- a deterministic sample of JDK classes: every ``ROUND_TRIP_STRIDE``-th class of ``java.base``'s
  ``java/lang`` and ``java/util`` trees (sorted by path) plus :data:`EXTRA_CLASSES`, chosen because they hold
  attribute kinds that are rare in the JDK; extracted once per session with the JDK's own ``jimage`` tool;
- classes compiled here by ``javac`` (and a module jar made by ``jar --main-class``) that exercise what the
  JDK's own classes never contain: every type-annotation target type, parameter annotations, ModuleMainClass.

Then hand-built rare shapes (every element_value tag, every target type 0x00-0x4B, a full Module) and
malformed data: every truncation, trailing bytes and random corruption must raise ClassFileError (or, for a
corruption that is still well formed, round-trip exactly), never IndexError / struct.error.

The project requires a JDK: without one these tests fail (conftest's ``java_home``), they never skip.
"""
from __future__ import annotations

import random
import re
import shutil
import struct
import subprocess
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from peggy_jvm.classfile.attributes import (
    ATTRIBUTE_TYPES,
    CONST_TAGS,
    MAX_NESTING,
    TARGET_INFO_TYPES,
    Annotation,
    AnnotationDefault,
    AnnotationElementValue,
    ArrayElementValue,
    BootstrapMethod,
    BootstrapMethods,
    CatchTarget,
    ClassElementValue,
    ConstantValue,
    ConstElementValue,
    Deprecated,
    ElementValuePair,
    EmptyTarget,
    EnclosingMethod,
    EnumElementValue,
    Exceptions,
    FormalParameterTarget,
    InnerClassEntry,
    InnerClasses,
    LineNumberEntry,
    LineNumberTable,
    LocalVarTarget,
    LocalVarTargetEntry,
    LocalVariableEntry,
    LocalVariableTable,
    LocalVariableTypeEntry,
    LocalVariableTypeTable,
    MethodParameter,
    MethodParameters,
    Module,
    ModuleExports,
    ModuleMainClass,
    ModuleOpens,
    ModulePackages,
    ModuleProvides,
    ModuleRequires,
    NestHost,
    NestMembers,
    OffsetTarget,
    PermittedSubclasses,
    Record,
    RecordComponent,
    RuntimeInvisibleAnnotations,
    RuntimeInvisibleParameterAnnotations,
    RuntimeInvisibleTypeAnnotations,
    RuntimeVisibleAnnotations,
    RuntimeVisibleParameterAnnotations,
    RuntimeVisibleTypeAnnotations,
    Signature,
    SourceDebugExtension,
    SourceFile,
    SupertypeTarget,
    Synthetic,
    ThrowsTarget,
    TypeAnnotation,
    TypeArgumentTarget,
    TypeParameterBoundTarget,
    TypeParameterTarget,
    TypePathEntry,
    decode_attribute,
)
from peggy_jvm.classfile.constpool import ConstantPool
from peggy_jvm.classfile.errors import ClassFileError
from peggy_jvm.classfile.model import Attribute, ClassFile
from peggy_jvm.classfile.reader import read_class, read_code
from peggy_jvm.classfile.writer import write_code

# -- the JDK sample -------------------------------------------------------------------------------------------
SAMPLE_REGEX = r"/java.base/java/(lang|util)/.*\.class"
ROUND_TRIP_STRIDE = 3  # every 3rd class of java/lang + java/util: ~670 classes of JDK 17's 2020

# Classes holding attribute kinds that are rare in the JDK (found by a scan of all 26,588 JDK 17 classes).
EXTRA_CLASSES = [
    "java.base/module-info.class",  # Module, ModulePackages (and the JDK-only ModuleHashes, ModuleTarget)
    "jdk.compiler/module-info.class",  # Module
    "java.desktop/module-info.class",  # Module
    "jdk.compiler/com/sun/tools/javac/tree/TreeInfo$PatternPrimaryType.class",  # Record, MethodParameters
    "java.base/sun/nio/ch/IOUtil$LinkedRunnable.class",  # Record
    "jdk.jfr/jdk/jfr/internal/jfc/model/Constraint.class",  # Record whose component has a Signature
    "java.desktop/java/beans/BeanProperty.class",  # AnnotationDefault
    "java.base/java/lang/Deprecated.class",  # AnnotationDefault
    "jdk.compiler/com/sun/source/util/TreeScanner.class",  # RuntimeInvisibleAnnotations
    "java.base/java/lang/runtime/SwitchBootstraps.class",  # RuntimeInvisibleAnnotations
    "java.base/java/lang/constant/ClassDesc.class",  # PermittedSubclasses
    "java.base/java/lang/Thread.class",  # Deprecated, RuntimeVisibleAnnotations
    "java.desktop/javax/swing/JButton.class",  # general desktop class
]

# Standard attribute kinds that no class of the JDK 17 image holds (measured over all 26,588 classes):
# javac never writes Synthetic or SourceDebugExtension, and the JDK's own sources use no parameter or type
# annotations and no module main class.  They are covered by the javac-compiled and hand-built tests.
ABSENT_FROM_JDK = frozenset({
    "Synthetic", "SourceDebugExtension", "RuntimeVisibleParameterAnnotations",
    "RuntimeInvisibleParameterAnnotations", "RuntimeVisibleTypeAnnotations",
    "RuntimeInvisibleTypeAnnotations", "ModuleMainClass",
})

LEVELS = ("class", "field", "method", "code", "component")


def _jimage_tool(java_home: Path) -> Path:
    tool = java_home / "bin" / "jimage"
    if tool.is_file():
        return tool
    found = shutil.which("jimage")
    if found is None:
        pytest.fail(f"no jimage tool in {java_home / 'bin'} or on PATH", pytrace=False)
    return Path(found)


@pytest.fixture(scope="session")
def jdk_sample(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, bytes]]:
    """[(module/path.class, bytes)] of the deterministic JDK sample, extracted by one ``jimage`` run."""
    modules = java_home / "lib" / "modules"
    if not modules.is_file():
        pytest.fail(f"{modules} not found: the JDK has no runtime image", pytrace=False)
    out = tmp_path_factory.mktemp("jdk-attributes")
    includes = ",".join(["regex:" + SAMPLE_REGEX] + ["regex:/" + re.escape(p) for p in EXTRA_CLASSES])
    done = subprocess.run(
        [str(_jimage_tool(java_home)), "extract", "--dir", str(out), "--include", includes, str(modules)],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,
    )
    if done.returncode != 0:
        pytest.fail(f"jimage extract failed ({done.returncode}): {done.stderr.strip()}", pytrace=False)
    base = sorted(p.relative_to(out).as_posix() for p in (out / "java.base" / "java").rglob("*.class"))
    base = [p for p in base if re.fullmatch(SAMPLE_REGEX, "/" + p)]
    chosen = base[::ROUND_TRIP_STRIDE]
    missing = [p for p in EXTRA_CLASSES if not (out / p).is_file()]
    if missing:
        pytest.fail(f"jimage did not extract {missing} (is this a JDK 17 image?)", pytrace=False)
    chosen += [p for p in EXTRA_CLASSES if p not in chosen]
    return [(p, (out / p).read_bytes()) for p in chosen]


def _round_trip_list(attrs: list[Attribute], pool: ConstantPool, where: str, level: str, seen: Counter,
                     views: dict) -> None:
    """Decode and re-encode every attribute of one list, recursing into Code and Record components."""
    for a in attrs:
        seen[(a.name, level)] += 1
        view = decode_attribute(a, pool)
        if a.name in ATTRIBUTE_TYPES:
            assert type(view) is ATTRIBUTE_TYPES[a.name], (where, a.name)
            encoded = view.to_bytes()
            assert encoded == a.data, f"{where}: {level} attribute {a.name} does not round-trip"
            views.setdefault(a.name, []).append(view)
        else:
            assert view is a, f"{where}: {a.name} should stay raw"
        if a.name == "Code":
            code = read_code(a.data, pool)
            assert write_code(code) == a.data, f"{where}: the Code attribute does not round-trip"
            _round_trip_list(code.attributes, pool, where, "code", seen, views)
        elif a.name == "Record":
            assert isinstance(view, Record)
            for comp in view.components:
                for ca in comp.attributes:
                    assert ca.name == pool.utf8(ca.name_index)
                _round_trip_list(comp.attributes, pool, where, "component", seen, views)


def round_trip_class(cf: ClassFile, where: str, seen: Counter, views: dict) -> None:
    _round_trip_list(cf.attributes, cf.pool, where, "class", seen, views)
    for f in cf.fields:
        _round_trip_list(f.attributes, cf.pool, f"{where} field {f.name}", "field", seen, views)
    for m in cf.methods:
        _round_trip_list(m.attributes, cf.pool, f"{where} method {m.name}{m.descriptor}", "method", seen,
                         views)


@pytest.fixture(scope="session")
def jdk_round_trip(jdk_sample: list[tuple[str, bytes]]) -> tuple[Counter, dict]:
    seen: Counter = Counter()
    views: dict = {}
    for path, data in jdk_sample:
        round_trip_class(read_class(data), path, seen, views)
    return seen, views


def test_jdk_sample_is_large_and_deterministic(jdk_sample: list[tuple[str, bytes]]) -> None:
    paths = [p for p, _ in jdk_sample]
    assert len(paths) >= 300
    assert len(set(paths)) == len(paths)
    assert all(p in paths for p in EXTRA_CLASSES)


def test_jdk_sample_round_trips_every_attribute(jdk_round_trip: tuple[Counter, dict]) -> None:
    seen, _ = jdk_round_trip
    kinds = {name for name, _ in seen}
    expected = set(ATTRIBUTE_TYPES) - ABSENT_FROM_JDK
    missing = sorted(expected - kinds)
    assert not missing, f"attribute kinds never seen in the JDK sample: {missing}"
    assert {level for _, level in seen} == set(LEVELS)
    assert ABSENT_FROM_JDK <= set(ATTRIBUTE_TYPES)
    print("absent from the JDK sample:", sorted(set(ATTRIBUTE_TYPES) - kinds))


def test_jdk_truncations_raise(jdk_round_trip: tuple[Counter, dict]) -> None:
    """The largest JDK instance of each kind, cut at several points, raises ClassFileError."""
    _, views = jdk_round_trip
    for name, found in views.items():
        data = max((v.to_bytes() for v in found), key=len)
        if not data or name == "SourceDebugExtension":
            continue
        for cut in sorted({0, 1, 2, 3, len(data) // 3, len(data) // 2, len(data) - 2, len(data) - 1}):
            if 0 <= cut < len(data):
                _assert_malformed(name, data[:cut])


# -- javac-compiled rare shapes ------------------------------------------------------------------------------
RARE_SOURCES = {
    "p/RareShapes.java": r"""
package p;

import java.io.Serializable;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

@Retention(RetentionPolicy.RUNTIME) @Target({ElementType.TYPE_USE, ElementType.TYPE_PARAMETER})
@interface TV { int value() default 0; }

@Retention(RetentionPolicy.CLASS) @Target({ElementType.TYPE_USE, ElementType.TYPE_PARAMETER})
@interface TI { String value() default ""; }

@Retention(RetentionPolicy.RUNTIME) @Target(ElementType.PARAMETER) @interface PV { int value() default 1; }

@Retention(RetentionPolicy.CLASS) @Target(ElementType.PARAMETER) @interface PI { }

@Retention(RetentionPolicy.CLASS) @interface Invisible { }

@Retention(RetentionPolicy.RUNTIME) @Target(ElementType.RECORD_COMPONENT) @interface RC { }

@Retention(RetentionPolicy.RUNTIME)
@interface All {
    byte b() default 1; char c() default 'x'; double d() default 1.5; float f() default 2.5f;
    int i() default 3; long j() default 4L; short s() default 5; boolean z() default true;
    String str() default "s"; ElementType e() default ElementType.FIELD; Class<?> cls() default String.class;
    Retention ann() default @Retention(RetentionPolicy.SOURCE); int[] arr() default {1, 2};
}

record Rec<E>(@RC @TV int x, List<@TI E> ys) { }

sealed interface Shape permits Circle { }

final class Circle implements Shape { }

class Gen {
    <X> Gen(X x) { }
}

@Invisible
@All(b = 2, c = 'y', d = 2.5, f = 3.5f, i = 4, j = 5L, s = 6, z = false, str = "t", e = ElementType.METHOD,
     cls = void.class, ann = @Retention(RetentionPolicy.CLASS), arr = {})
public class RareShapes<@TV(1) T extends @TI("b") Object & @TV(2) Comparable<T>>
        extends @TV(3) ArrayList<@TI T> implements @TV(4) Runnable, Serializable {

    static final int CONSTANT = 12345;

    class Inner { }

    @TV int plain;
    Map<@TV String, @TI List<@TV ? extends @TI Object>> generic;
    @TV int @TI [] @TV [] array;
    Map.@TV Entry<String, String> nested;
    RareShapes<T>.@TV Inner inner;

    public @TV RareShapes() { }

    public void run() {
        Runnable r = new Runnable() { public void run() { } };
        r.run();
    }

    /** @deprecated use something else */
    @Deprecated
    void old() { }

    <@TV U extends @TI Number> @TV String methodTypeParam(U u) { return null; }

    void receiver(@TV RareShapes<T> this) { }

    void params(@TV int x, @PV(7) @PI String y, @PI long z) { }

    void throwing() throws @TV Exception { }

    static <Y> Y sgm(Y y) { return y; }

    <Y> Y gm(Y y) { return y; }

    Object code(Object o) throws Exception {
        @TV String local = "x";
        try (@TI AutoCloseable ac = () -> { }) {
            local = local + ac;
        } catch (@TV RuntimeException ex) {
            return ex;
        }
        if (o instanceof @TV String) { local = (@TV String) o; }
        Object made = new @TI Object();
        Supplier<List<String>> ctorRef = @TV ArrayList::new;
        Function<Object, String> methodRef = @TV Object::toString;
        Gen g = new <@TV String>Gen("a");
        String s = this.<@TI String>gm("b");
        Function<String, Gen> genericCtorRef = Gen::<@TV String>new;
        Function<String, String> genericMethodRef = RareShapes::<@TI String>sgm;
        return List.of(local, made, ctorRef, methodRef, g, s, genericCtorRef, genericMethodRef);
    }
}
""",
    "p/Main.java": """
package p;
public class Main implements Runnable {
    public Main() { }
    public void run() { }
    public static void main(String[] args) { System.out.println("main"); }
}
""",
    "q/Q.java": "package q;\npublic class Q { }\n",
    "module-info.java": """
module rare.mod {
    requires transitive java.logging;
    requires static java.sql;
    exports p;
    exports q to java.logging, java.sql;
    opens p to java.logging;
    opens q;
    uses java.lang.Runnable;
    provides java.lang.Runnable with p.Main, p.RareShapes;
}
""",
}

# What javac + jar cannot produce; covered by the hand-built tests below.
NOT_FROM_JAVAC = frozenset({"Synthetic", "SourceDebugExtension"})


@pytest.fixture(scope="module")
def rare_classes(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, bytes]]:
    """The classes of :data:`RARE_SOURCES`, compiled ``-g -parameters`` and jarred with a main class."""
    root = tmp_path_factory.mktemp("rare-attributes")
    src, out = root / "src", root / "out"
    files = []
    for rel, text in RARE_SOURCES.items():
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        files.append(str(path))
    bin_dir = java_home / "bin"
    steps = [
        [str(bin_dir / "javac"), "-g", "-parameters", "-d", str(out), *files],
        [str(bin_dir / "jar"), "--create", "--file", str(root / "rare.jar"), "--main-class", "p.Main",
         "-C", str(out), "."],
    ]
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
        if done.returncode != 0:
            pytest.fail(f"{Path(cmd[0]).name} failed:\n{done.stdout}{done.stderr}", pytrace=False)
    with zipfile.ZipFile(root / "rare.jar") as jar:
        return [(n, jar.read(n)) for n in sorted(jar.namelist()) if n.endswith(".class")]


def _walk_element_value(v, tags: Counter) -> None:
    tags[v.tag] += 1
    if isinstance(v, ArrayElementValue):
        for x in v.values:
            _walk_element_value(x, tags)
    elif isinstance(v, AnnotationElementValue):
        for p in v.annotation.elements:
            _walk_element_value(p.value, tags)


def test_javac_rare_shapes_round_trip(rare_classes: list[tuple[str, bytes]]) -> None:
    seen: Counter = Counter()
    views: dict = {}
    for path, data in rare_classes:
        round_trip_class(read_class(data), path, seen, views)
    kinds = {name for name, _ in seen}
    missing = sorted(set(ATTRIBUTE_TYPES) - NOT_FROM_JAVAC - kinds)
    assert not missing, f"javac output lacks {missing}"
    assert {level for _, level in seen} == set(LEVELS)

    type_annotations = views["RuntimeVisibleTypeAnnotations"] + views["RuntimeInvisibleTypeAnnotations"]
    targets = {t.target_type for v in type_annotations for t in v.annotations}
    assert targets == set(TARGET_INFO_TYPES)
    assert {p.type_path_kind for v in type_annotations for t in v.annotations for p in t.type_path} == {0, 1, 2, 3}
    for level in LEVELS:
        assert seen[("RuntimeVisibleTypeAnnotations", level)], level
    assert any(v.references_code_offsets() for v in type_annotations)
    assert any(not v.references_code_offsets() for v in type_annotations)
    assert any(v.depends_on_code() and any(t.target_type == 0x42 for t in v.annotations)
               for v in type_annotations)

    tags: Counter = Counter()
    for name in ("RuntimeVisibleAnnotations", "RuntimeInvisibleAnnotations"):
        for v in views.get(name, []):
            for a in v.annotations:
                for p in a.elements:
                    _walk_element_value(p.value, tags)
    for v in views["AnnotationDefault"]:
        _walk_element_value(v.default_value, tags)
    assert set(tags) == set(CONST_TAGS) | set("ec@[")

    (module,) = views["Module"]
    assert module.requires and module.uses and module.provides
    assert any(e.to for e in module.exports) and any(o.to for o in module.opens)
    assert views["ModuleMainClass"]


def test_javac_module_resolves(rare_classes: list[tuple[str, bytes]]) -> None:
    cf = read_class(dict(rare_classes)["module-info.class"])
    pool = cf.pool
    by_name = {a.name: decode_attribute(a, pool) for a in cf.attributes}
    module = by_name["Module"]
    assert module.module_name(pool) == "rare.mod"
    required = {r.module_name(pool): r.requires_flags for r in module.requires}
    assert required["java.logging"] & 0x0020  # ACC_TRANSITIVE
    assert required["java.sql"] & 0x0040  # ACC_STATIC_PHASE
    assert "java.base" in required
    exports = {e.package_name(pool): e.to_modules(pool) for e in module.exports}
    assert exports == {"p": [], "q": ["java.logging", "java.sql"]}
    opens = {o.package_name(pool): o.to_modules(pool) for o in module.opens}
    assert opens == {"p": ["java.logging"], "q": []}
    assert [pool.class_name(u) for u in module.uses] == ["java/lang/Runnable"]
    (provides,) = module.provides
    assert pool.class_name(provides.provides_index) == "java/lang/Runnable"
    assert [pool.class_name(i) for i in provides.provides_with] == ["p/Main", "p/RareShapes"]
    assert by_name["ModuleMainClass"].main_class(pool) == "p/Main"
    assert sorted(by_name["ModulePackages"].package_names(pool)) == ["p", "q"]


def test_javac_record_components(rare_classes: list[tuple[str, bytes]]) -> None:
    cf = read_class(dict(rare_classes)["p/Rec.class"])
    pool = cf.pool
    (attr,) = [a for a in cf.attributes if a.name == "Record"]
    record = decode_attribute(attr, pool)
    assert [(c.name(pool), c.descriptor(pool)) for c in record.components] == [
        ("x", "I"), ("ys", "Ljava/util/List;")]
    assert {a.name for a in record.components[0].attributes} == {
        "RuntimeVisibleAnnotations", "RuntimeVisibleTypeAnnotations"}
    assert {a.name for a in record.components[1].attributes} == {"Signature", "RuntimeInvisibleTypeAnnotations"}
    # without a pool, names stay unresolved but the bytes still round-trip
    bare = Record.parse(attr.data)
    assert all(a.name == "" for c in bare.components for a in c.attributes)
    assert bare.to_bytes() == attr.data
    bare.resolve_names(pool)
    assert bare == record


def test_javac_code_level_views(rare_classes: list[tuple[str, bytes]]) -> None:
    cf = read_class(dict(rare_classes)["p/RareShapes.class"])
    pool = cf.pool
    (method,) = [m for m in cf.methods if m.name == "code"]
    code = read_code(method.code_attribute().data, pool)
    views = {a.name: decode_attribute(a, pool) for a in code.attributes}
    lvt = views["LocalVariableTable"]
    names = {e.name(pool): e.descriptor(pool) for e in lvt.entries}
    assert names["local"] == "Ljava/lang/String;" and names["this"] == "Lp/RareShapes;"
    assert all(e.start_pc + e.length <= len(code.code) for e in lvt.entries)
    lnt = views["LineNumberTable"]
    assert all(e.start_pc < len(code.code) for e in lnt.entries)
    rvta = views["RuntimeVisibleTypeAnnotations"]
    assert rvta.references_code_offsets()
    for t in rvta.annotations:
        assert t.in_code
        info = t.target_info
        if isinstance(info, LocalVarTarget):
            assert all(e.start_pc + e.length <= len(code.code) for e in info.table)
        elif isinstance(info, (OffsetTarget, TypeArgumentTarget)):
            assert info.offset < len(code.code)
        elif isinstance(info, CatchTarget):
            assert info.exception_table_index < len(code.exception_table)
    (params,) = [decode_attribute(a, pool) for m in cf.methods if m.name == "params" for a in m.attributes
                 if a.name == "MethodParameters"]
    assert [p.name(pool) for p in params.parameters] == ["x", "y", "z"]
    (rvpa,) = [decode_attribute(a, pool) for m in cf.methods if m.name == "params" for a in m.attributes
               if a.name == "RuntimeVisibleParameterAnnotations"]
    assert [len(p) for p in rvpa.parameters] == [0, 1, 0]
    assert rvpa.parameters[1][0].type_descriptor(pool) == "Lp/PV;"
    (cv,) = [decode_attribute(a, pool) for f in cf.fields for a in f.attributes if a.name == "ConstantValue"]
    assert cv.constant(pool) == (3, 12345)


# -- hand-built shapes ---------------------------------------------------------------------------------------
def u1(*xs: int) -> bytes:
    return bytes(xs)


def u2(*xs: int) -> bytes:
    return struct.pack(f">{len(xs)}H", *xs)


def u4(*xs: int) -> bytes:
    return struct.pack(f">{len(xs)}I", *xs)


def _check(view, expected: bytes) -> None:
    """``view`` encodes to ``expected`` and ``expected`` decodes back to an equal view."""
    assert view.to_bytes() == expected
    assert type(view).parse(expected) == view


def test_simple_attributes_layout() -> None:
    _check(ConstantValue(7), u2(7))
    _check(Signature(8), u2(8))
    _check(SourceFile(9), u2(9))
    _check(ModuleMainClass(10), u2(10))
    _check(NestHost(11), u2(11))
    _check(EnclosingMethod(12, 0), u2(12, 0))
    _check(Synthetic(), b"")
    _check(Deprecated(), b"")
    _check(SourceDebugExtension(b"SMAP\nfoo\xc0\x80"), b"SMAP\nfoo\xc0\x80")
    _check(Exceptions([1, 2, 3]), u2(3, 1, 2, 3))
    _check(NestMembers([4, 5]), u2(2, 4, 5))
    _check(PermittedSubclasses([]), u2(0))
    _check(ModulePackages([6]), u2(1, 6))
    _check(InnerClasses([InnerClassEntry(1, 2, 3, 0x19), InnerClassEntry(4, 0, 0, 0)]),
           u2(2, 1, 2, 3, 0x19, 4, 0, 0, 0))
    _check(LineNumberTable([LineNumberEntry(0, 10), LineNumberEntry(5, 9), LineNumberEntry(5, 9)]),
           u2(3, 0, 10, 5, 9, 5, 9))
    _check(LocalVariableTable([LocalVariableEntry(0, 10, 1, 2, 0)]), u2(1, 0, 10, 1, 2, 0))
    _check(LocalVariableTypeTable([LocalVariableTypeEntry(2, 8, 3, 4, 1)]), u2(1, 2, 8, 3, 4, 1))
    _check(BootstrapMethods([BootstrapMethod(1, [2, 3]), BootstrapMethod(4, [])]), u2(2, 1, 2, 2, 3, 4, 0))
    _check(MethodParameters([MethodParameter(1, 0x10), MethodParameter(0, 0x8000)]),
           u1(2) + u2(1, 0x10, 0, 0x8000))


def test_entries_can_be_rewritten() -> None:
    lnt = LineNumberTable.parse(u2(2, 0, 10, 4, 11))
    for e in lnt.entries:
        e.start_pc += 3
    assert lnt.to_bytes() == u2(2, 3, 10, 7, 11)
    lvt = LocalVariableTable.parse(u2(1, 0, 10, 1, 2, 0))
    lvt.entries[0].start_pc, lvt.entries[0].length = 2, 20
    assert lvt.to_bytes() == u2(1, 2, 20, 1, 2, 0)
    lvtt = LocalVariableTypeTable.parse(u2(1, 0, 10, 1, 2, 0))
    lvtt.entries[0].length = 4
    assert lvtt.to_bytes() == u2(1, 0, 4, 1, 2, 0)


def _all_tags_pool() -> tuple[ConstantPool, dict[str, int]]:
    pool = ConstantPool()
    idx = {
        "int": pool.add((3, 42)), "char": pool.add((3, 0x41)), "bool": pool.add((3, 1)),
        "float": pool.add((4, 0x3FC00000)), "long": pool.add((5, -7)), "double": pool.add((6, 0x4004000000000000)),
        "str": pool.add_utf8("hello"), "enum_type": pool.add_utf8("Ljava/lang/annotation/ElementType;"),
        "enum_const": pool.add_utf8("FIELD"), "cls": pool.add_utf8("Ljava/lang/String;"),
        "ann": pool.add_utf8("Lp/A;"), "name": pool.add_utf8("value"),
    }
    return pool, idx


def test_element_value_every_tag() -> None:
    pool, i = _all_tags_pool()
    consts = {"B": i["int"], "C": i["char"], "D": i["double"], "F": i["float"], "I": i["int"], "J": i["long"],
              "S": i["int"], "Z": i["bool"], "s": i["str"]}
    values = [ConstElementValue(tag, index) for tag, index in consts.items()]
    values.append(EnumElementValue(i["enum_type"], i["enum_const"]))
    values.append(ClassElementValue(i["cls"]))
    nested = Annotation(i["ann"], [ElementValuePair(i["name"], ConstElementValue("I", i["int"]))])
    values.append(AnnotationElementValue(nested))
    values.append(ArrayElementValue([ConstElementValue("s", i["str"]), ArrayElementValue([])]))
    annotation = Annotation(i["ann"], [ElementValuePair(i["name"], v) for v in values])

    expected_values = [u1(ord(t)) + u2(x) for t, x in consts.items()]
    expected_values.append(b"e" + u2(i["enum_type"], i["enum_const"]))
    expected_values.append(b"c" + u2(i["cls"]))
    expected_values.append(b"@" + u2(i["ann"], 1, i["name"]) + b"I" + u2(i["int"]))
    expected_values.append(b"[" + u2(2) + b"s" + u2(i["str"]) + b"[" + u2(0))
    body = u2(i["ann"], len(values)) + b"".join(u2(i["name"]) + v for v in expected_values)

    for cls in (RuntimeVisibleAnnotations, RuntimeInvisibleAnnotations):
        _check(cls([annotation, nested]), u2(2) + body + u2(i["ann"], 1, i["name"]) + b"I" + u2(i["int"]))
    for cls in (RuntimeVisibleParameterAnnotations, RuntimeInvisibleParameterAnnotations):
        _check(cls([[], [annotation], [nested, nested]]),
               u1(3) + u2(0) + u2(1) + body + u2(2) + (u2(i["ann"], 1, i["name"]) + b"I" + u2(i["int"])) * 2)
    for v, raw in zip(values, expected_values):
        _check(AnnotationDefault(v), raw)

    resolved = {p.value.tag: p.value.value(pool) for p in annotation.elements if hasattr(p.value, "value")}
    assert resolved == {"B": 42, "C": "A", "D": 2.5, "F": 1.5, "I": 42, "J": -7, "S": 42, "Z": True,
                        "s": "hello", "e": ("Ljava/lang/annotation/ElementType;", "FIELD"),
                        "c": "Ljava/lang/String;"}
    assert annotation.type_descriptor(pool) == "Lp/A;"
    assert annotation.elements[0].name(pool) == "value"


def test_unknown_element_value_tag() -> None:
    for tag in b"AaXz\x00\xff":
        with pytest.raises(ClassFileError, match=r"AnnotationDefault: unknown element_value tag"):
            AnnotationDefault.parse(u1(tag) + u2(1))
    with pytest.raises(ClassFileError, match="AnnotationDefault"):
        AnnotationDefault(ConstElementValue("q", 1)).to_bytes()


def test_deep_nesting_is_an_error_not_a_recursion_error() -> None:
    array_level = b"[" + u2(1)
    annotation_level = b"@" + u2(1, 1, 2)  # type 1, one pair named 2
    for level in (array_level, annotation_level, array_level + annotation_level):
        with pytest.raises(ClassFileError, match="^AnnotationDefault: .* nested deeper than"):
            AnnotationDefault.parse(level * 5000 + b"I" + u2(1))
    for level in (array_level, annotation_level):
        ok = level * MAX_NESTING + b"I" + u2(1)
        assert AnnotationDefault.parse(ok).to_bytes() == ok
        with pytest.raises(ClassFileError, match="nested deeper"):
            AnnotationDefault.parse(level * (MAX_NESTING + 1) + b"I" + u2(1))
    value = ConstElementValue("I", 1)
    for _ in range(5000):  # built by hand, far deeper than any decoder accepts
        value = ArrayElementValue([value])
    with pytest.raises(ClassFileError, match="^AnnotationDefault: cannot encode"):
        AnnotationDefault(value).to_bytes()


def _target_for(target_type: int):
    """A target_info of the right kind for ``target_type`` and its expected bytes."""
    kind = TARGET_INFO_TYPES[target_type]
    if kind is TypeParameterTarget:
        return TypeParameterTarget(3), u1(3)
    if kind is SupertypeTarget:
        return SupertypeTarget(0xFFFF), u2(0xFFFF)
    if kind is TypeParameterBoundTarget:
        return TypeParameterBoundTarget(1, 2), u1(1, 2)
    if kind is EmptyTarget:
        return EmptyTarget(), b""
    if kind is FormalParameterTarget:
        return FormalParameterTarget(4), u1(4)
    if kind is ThrowsTarget:
        return ThrowsTarget(5), u2(5)
    if kind is LocalVarTarget:
        return (LocalVarTarget([LocalVarTargetEntry(0, 10, 1), LocalVarTargetEntry(20, 5, 1)]),
                u2(2, 0, 10, 1, 20, 5, 1))
    if kind is CatchTarget:
        return CatchTarget(6), u2(6)
    if kind is OffsetTarget:
        return OffsetTarget(300), u2(300)
    assert kind is TypeArgumentTarget
    return TypeArgumentTarget(301, 2), u2(301) + u1(2)


def test_type_annotation_every_target_type() -> None:
    path = [TypePathEntry(0, 0), TypePathEntry(1, 0), TypePathEntry(2, 0), TypePathEntry(3, 1)]
    path_bytes = u1(4, 0, 0, 1, 0, 2, 0, 3, 1)
    pair = ElementValuePair(9, ConstElementValue("I", 8))
    pair_bytes = u2(1, 9) + b"I" + u2(8)
    code_offsets = {0x40, 0x41} | set(range(0x43, 0x4C))
    for target_type in range(0x00, 0x4C + 1):
        if target_type not in TARGET_INFO_TYPES:
            for cls in (RuntimeVisibleTypeAnnotations, RuntimeInvisibleTypeAnnotations):
                with pytest.raises(ClassFileError, match=rf"{cls.NAME}: unknown target_type 0x{target_type:02x}"):
                    cls.parse(u2(1) + u1(target_type) + u1(0) + u2(7, 0))
            continue
        info, info_bytes = _target_for(target_type)
        ta = TypeAnnotation(target_type, info, path, 7, [pair])
        plain = TypeAnnotation(target_type, info, [], 7, [])
        expected = u2(2) + u1(target_type) + info_bytes + path_bytes + u2(7) + pair_bytes
        expected += u1(target_type) + info_bytes + u1(0) + u2(7, 0)
        for cls in (RuntimeVisibleTypeAnnotations, RuntimeInvisibleTypeAnnotations):
            view = cls([ta, plain])
            _check(view, expected)
            assert view.references_code_offsets() == (target_type in code_offsets)
            assert view.depends_on_code() == (target_type >= 0x40)
        assert ta.references_code_offsets == (target_type in code_offsets)
        assert ta.in_code == (target_type >= 0x40)
        assert info.references_exception_table == (target_type == 0x42)
    assert sorted(TARGET_INFO_TYPES) == [*range(0x00, 0x02), *range(0x10, 0x18), *range(0x40, 0x4C)]


def test_type_annotation_offsets_can_be_rewritten() -> None:
    data = u2(2) + u1(0x47) + u2(10) + u1(0) + u1(0) + u2(7, 0) + u1(0x40) + u2(1, 3, 4, 2) + u1(0) + u2(7, 0)
    view = RuntimeVisibleTypeAnnotations.parse(data)
    view.annotations[0].target_info.offset = 12
    view.annotations[1].target_info.table[0].start_pc = 5
    assert view.to_bytes() == (u2(2) + u1(0x47) + u2(12) + u1(0) + u1(0) + u2(7, 0) + u1(0x40)
                               + u2(1, 5, 4, 2) + u1(0) + u2(7, 0))


def test_type_annotation_bad_shapes() -> None:
    with pytest.raises(ClassFileError, match="bad type_path_kind 4"):
        RuntimeVisibleTypeAnnotations.parse(u2(1) + u1(0x13, 1, 4, 0) + u2(7, 0))
    wrong = TypeAnnotation(0x13, OffsetTarget(1), [], 7, [])
    with pytest.raises(ClassFileError, match="RuntimeVisibleTypeAnnotations: target_type 0x13 needs EmptyTarget"):
        RuntimeVisibleTypeAnnotations([wrong]).to_bytes()
    unknown = TypeAnnotation(0x20, EmptyTarget(), [], 7, [])
    with pytest.raises(ClassFileError, match="unknown target_type 0x20"):
        RuntimeInvisibleTypeAnnotations([unknown]).to_bytes()


def _module_pool() -> tuple[ConstantPool, dict[str, int]]:
    pool = ConstantPool()
    i = {}
    for m in ("my.mod", "java.base", "java.sql", "friend.a", "friend.b"):
        i[m] = pool.add((19, pool.add_utf8(m)))
    for p in ("my/pkg", "my/internal"):
        i[p] = pool.add((20, pool.add_utf8(p)))
    for c in ("my/Service", "my/Impl", "my/Impl2", "my/Main"):
        i[c] = pool.add_class(c)
    i["1.0"] = pool.add_utf8("1.0")
    i["17"] = pool.add_utf8("17")
    return pool, i


def test_module_full_shape() -> None:
    pool, i = _module_pool()
    module = Module(
        i["my.mod"], 0x0020, i["1.0"],
        [ModuleRequires(i["java.base"], 0x8000, i["17"]), ModuleRequires(i["java.sql"], 0x0060, 0)],
        [ModuleExports(i["my/pkg"], 0, []), ModuleExports(i["my/internal"], 0x1000, [i["friend.a"], i["friend.b"]])],
        [ModuleOpens(i["my/internal"], 0, [i["friend.b"]])],
        [i["my/Service"]],
        [ModuleProvides(i["my/Service"], [i["my/Impl"], i["my/Impl2"]])],
    )
    expected = (u2(i["my.mod"], 0x0020, i["1.0"])
                + u2(2, i["java.base"], 0x8000, i["17"], i["java.sql"], 0x0060, 0)
                + u2(2, i["my/pkg"], 0, 0, i["my/internal"], 0x1000, 2, i["friend.a"], i["friend.b"])
                + u2(1, i["my/internal"], 0, 1, i["friend.b"])
                + u2(1, i["my/Service"])
                + u2(1, i["my/Service"], 2, i["my/Impl"], i["my/Impl2"]))
    _check(module, expected)
    parsed = Module.parse(expected)
    assert type(parsed.opens[0]) is ModuleOpens and type(parsed.exports[0]) is ModuleExports
    assert parsed.module_name(pool) == "my.mod"
    assert [r.module_name(pool) for r in parsed.requires] == ["java.base", "java.sql"]
    assert parsed.exports[1].package_name(pool) == "my/internal"
    assert parsed.exports[1].to_modules(pool) == ["friend.a", "friend.b"]
    assert parsed.opens[0].to_modules(pool) == ["friend.b"]
    empty = Module(i["my.mod"], 0, 0, [], [], [], [], [])
    _check(empty, u2(i["my.mod"], 0, 0, 0, 0, 0, 0, 0))
    _check(ModulePackages([i["my/pkg"], i["my/internal"]]), u2(2, i["my/pkg"], i["my/internal"]))
    assert ModulePackages([i["my/pkg"]]).package_names(pool) == ["my/pkg"]
    assert ModuleMainClass(i["my/Main"]).main_class(pool) == "my/Main"


def test_record_with_and_without_pool() -> None:
    pool = ConstantPool()
    sig, rva = pool.add_utf8("Signature"), pool.add_utf8("RuntimeVisibleAnnotations")
    x, desc, gsig = pool.add_utf8("x"), pool.add_utf8("Ljava/util/List;"), pool.add_utf8("Ljava/util/List<TT;>;")
    ann = pool.add_utf8("Lp/A;")
    data = (u2(2)
            + u2(x, desc, 2) + u2(sig) + u4(2) + u2(gsig) + u2(rva) + u4(6) + u2(1, ann, 0)
            + u2(x, desc, 0))
    with_pool = Record.parse(data, pool)
    assert with_pool.to_bytes() == data
    comp = with_pool.components[0]
    assert [a.name for a in comp.attributes] == ["Signature", "RuntimeVisibleAnnotations"]
    assert decode_attribute(comp.attributes[0], pool) == Signature(gsig)
    assert comp.name(pool) == "x" and comp.descriptor(pool) == "Ljava/util/List;"
    assert decode_attribute(Attribute(pool.add_utf8("Record"), "Record", data), pool) == with_pool
    bare = Record.parse(data)
    assert bare.to_bytes() == data and bare.components[0].attributes[0].name == ""
    built = Record([RecordComponent(x, desc, [Attribute(sig, "Signature", u2(gsig))])])
    assert built.to_bytes() == u2(1, x, desc, 1, sig) + u4(2) + u2(gsig)
    with pytest.raises(ClassFileError, match="Record: attribute 0 of component 0 has bad name index 999"):
        Record.parse(u2(1, x, desc, 1, 999) + u4(0), pool)
    with pytest.raises(ClassFileError, match="Record: truncated in attribute 0 of component 0"):
        Record.parse(u2(1, x, desc, 1, sig) + u4(5) + u2(gsig))


def test_resolving_helpers() -> None:
    pool = ConstantPool()
    s = pool.add_string("text")
    cls = pool.add_class("java/io/IOException")
    nat = pool.add_name_and_type("run", "()V")
    utf = pool.add_utf8("Foo.java")
    assert ConstantValue(s).constant(pool) == (8, pool.add_utf8("text"))
    assert Exceptions([cls]).class_names(pool) == ["java/io/IOException"]
    assert NestMembers([cls]).class_names(pool) == ["java/io/IOException"]
    assert PermittedSubclasses([cls]).class_names(pool) == ["java/io/IOException"]
    assert NestHost(cls).host_class(pool) == "java/io/IOException"
    assert SourceFile(utf).source_file(pool) == "Foo.java"
    assert Signature(utf).signature(pool) == "Foo.java"
    assert EnclosingMethod(cls, nat).method(pool) == ("run", "()V")
    assert EnclosingMethod(cls, 0).method(pool) is None
    assert EnclosingMethod(cls, 0).class_name(pool) == "java/io/IOException"
    entry = InnerClassEntry(cls, 0, 0, 0)
    assert (entry.inner_class(pool), entry.outer_class(pool), entry.inner_name(pool)) == (
        "java/io/IOException", None, None)
    assert MethodParameter(0, 0).name(pool) is None
    assert SourceDebugExtension(b"a\xc0\x80b").text() == "a\x00b"
    with pytest.raises(ClassFileError, match="bad constant index"):
        ConstantValue(utf).constant(pool)
    attr = SourceFile(utf).to_attribute(pool)
    assert attr.name == "SourceFile" and pool.utf8(attr.name_index) == "SourceFile" and attr.data == u2(utf)


def test_registry_and_decode_attribute() -> None:
    names = {
        "ConstantValue", "Exceptions", "InnerClasses", "EnclosingMethod", "Synthetic", "Signature", "SourceFile",
        "SourceDebugExtension", "LineNumberTable", "LocalVariableTable", "LocalVariableTypeTable", "Deprecated",
        "RuntimeVisibleAnnotations", "RuntimeInvisibleAnnotations", "RuntimeVisibleParameterAnnotations",
        "RuntimeInvisibleParameterAnnotations", "RuntimeVisibleTypeAnnotations",
        "RuntimeInvisibleTypeAnnotations", "AnnotationDefault", "BootstrapMethods", "MethodParameters", "Module",
        "ModulePackages", "ModuleMainClass", "NestHost", "NestMembers", "Record", "PermittedSubclasses",
    }
    assert set(ATTRIBUTE_TYPES) == names
    assert all(cls.NAME == name for name, cls in ATTRIBUTE_TYPES.items())
    pool = ConstantPool()
    for raw_name in ("Code", "StackMapTable", "ModuleHashes", "SomethingElse"):
        a = Attribute(pool.add_utf8(raw_name), raw_name, b"\x00\x01garbage")
        assert decode_attribute(a, pool) is a
    bad = Attribute(pool.add_utf8("LineNumberTable"), "LineNumberTable", u2(5, 0, 1))
    with pytest.raises(ClassFileError, match=r"^LineNumberTable: truncated in line_number_table \(5 entries\)"):
        decode_attribute(bad, pool)


def test_encoding_overflow_raises() -> None:
    with pytest.raises(ClassFileError, match="^Exceptions: cannot encode"):
        Exceptions(list(range(70000))).to_bytes()
    with pytest.raises(ClassFileError, match="^ConstantValue: cannot encode"):
        ConstantValue(0x10000).to_bytes()
    with pytest.raises(ClassFileError, match="^MethodParameters: 256 parameters"):
        MethodParameters([MethodParameter(0, 0)] * 256).to_bytes()
    with pytest.raises(ClassFileError, match="^RuntimeVisibleParameterAnnotations: 300 parameters"):
        RuntimeVisibleParameterAnnotations([[]] * 300).to_bytes()
    with pytest.raises(ClassFileError, match="^RuntimeVisibleTypeAnnotations: cannot encode"):
        RuntimeVisibleTypeAnnotations([TypeAnnotation(0x00, TypeParameterTarget(256), [], 1, [])]).to_bytes()
    with pytest.raises(ClassFileError, match="^LineNumberTable: cannot encode"):
        LineNumberTable([LineNumberEntry(-1, 0)]).to_bytes()


# -- malformed data ------------------------------------------------------------------------------------------
def _instances() -> dict[str, bytes]:
    """One rich, well-formed body per registry entry (built by hand, checked to round-trip)."""
    pool, i = _all_tags_pool()
    ev = ArrayElementValue([
        ConstElementValue("I", i["int"]), EnumElementValue(i["enum_type"], i["enum_const"]),
        ClassElementValue(i["cls"]),
        AnnotationElementValue(Annotation(i["ann"], [ElementValuePair(i["name"], ConstElementValue("J", 5))])),
    ])
    ann = Annotation(i["ann"], [ElementValuePair(i["name"], ev),
                                ElementValuePair(i["name"], ConstElementValue("s", 2))])
    type_anns = [TypeAnnotation(tt, _target_for(tt)[0], [TypePathEntry(3, 1)], i["ann"], [ElementValuePair(1, ev)])
                 for tt in (0x00, 0x10, 0x11, 0x13, 0x16, 0x17, 0x40, 0x42, 0x43, 0x4B)]
    module = Module(1, 0x20, 2, [ModuleRequires(3, 0x8000, 0)], [ModuleExports(4, 0, [5, 6])],
                    [ModuleOpens(4, 0, [5])], [7, 8], [ModuleProvides(7, [9, 10])])
    views = [
        ConstantValue(1), Exceptions([1, 2]), InnerClasses([InnerClassEntry(1, 2, 3, 4)] * 2),
        EnclosingMethod(1, 2), Synthetic(), Signature(3), SourceFile(4), SourceDebugExtension(b"debug"),
        LineNumberTable([LineNumberEntry(0, 1), LineNumberEntry(3, 2)]),
        LocalVariableTable([LocalVariableEntry(0, 5, 1, 2, 0)] * 2),
        LocalVariableTypeTable([LocalVariableTypeEntry(0, 5, 1, 2, 0)] * 2), Deprecated(),
        RuntimeVisibleAnnotations([ann, ann]), RuntimeInvisibleAnnotations([ann]),
        RuntimeVisibleParameterAnnotations([[ann], [], [ann]]), RuntimeInvisibleParameterAnnotations([[], [ann]]),
        RuntimeVisibleTypeAnnotations(type_anns), RuntimeInvisibleTypeAnnotations(type_anns[::-1]),
        AnnotationDefault(ev), BootstrapMethods([BootstrapMethod(1, [2, 3]), BootstrapMethod(4, [5])]),
        MethodParameters([MethodParameter(1, 0), MethodParameter(2, 0x10)]), module, ModulePackages([1, 2]),
        ModuleMainClass(3), NestHost(4), NestMembers([5, 6]),
        Record([RecordComponent(1, 2, [Attribute(3, "", u2(4)), Attribute(5, "", b"")]),
                RecordComponent(6, 7, [])]),
        PermittedSubclasses([8, 9]),
    ]
    out = {v.NAME: v.to_bytes() for v in views}
    assert set(out) == set(ATTRIBUTE_TYPES)
    for name, data in out.items():
        assert ATTRIBUTE_TYPES[name].parse(data).to_bytes() == data
    return out


INSTANCES = _instances()


def _assert_malformed(name: str, data: bytes) -> None:
    with pytest.raises(ClassFileError) as info:
        ATTRIBUTE_TYPES[name].parse(data)
    assert str(info.value).startswith(f"{name}: "), str(info.value)


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_every_truncation_raises(name: str) -> None:
    data = INSTANCES[name]
    if name == "SourceDebugExtension":  # any bytes are a valid body: nothing to detect
        assert SourceDebugExtension.parse(data[:2]).to_bytes() == data[:2]
        return
    for cut in range(len(data)):
        _assert_malformed(name, data[:cut])


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_trailing_bytes_raise(name: str) -> None:
    if name == "SourceDebugExtension":
        return
    _assert_malformed(name, INSTANCES[name] + b"\x00")
    with pytest.raises(ClassFileError, match=f"^{name}: 3 trailing bytes"):
        ATTRIBUTE_TYPES[name].parse(INSTANCES[name] + b"abc")


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_overrunning_counts_raise(name: str) -> None:
    data = INSTANCES[name]
    if name in ("SourceDebugExtension", "Synthetic", "Deprecated") or len(data) < 2:
        return
    # set each u2-aligned and u1 position to a huge value in turn: either malformed or exactly round-tripped
    for pos in range(len(data)):
        for patch in (b"\xff", b"\xff\xff"):
            mutated = data[:pos] + patch + data[pos + len(patch):]
            mutated = mutated[:len(data)]
            _parse_or_round_trip(name, mutated)


def _parse_or_round_trip(name: str, data: bytes) -> None:
    try:
        view = ATTRIBUTE_TYPES[name].parse(data)
    except ClassFileError as e:
        assert str(e).startswith(f"{name}: "), str(e)
        return
    assert view.to_bytes() == data


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_random_corruption_is_malformed_or_exact(name: str) -> None:
    data = INSTANCES[name]
    if not data:
        return
    rng = random.Random(f"attributes-{name}")
    for _ in range(300):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        if rng.random() < 0.3:
            del mutated[rng.randrange(len(mutated)):]
        _parse_or_round_trip(name, bytes(mutated))


def test_empty_markers_reject_content() -> None:
    for cls in (Synthetic, Deprecated):
        with pytest.raises(ClassFileError, match=f"^{cls.NAME}: 1 trailing bytes"):
            cls.parse(b"\x00")
