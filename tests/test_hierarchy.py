"""Tests for peggy_jvm.classfile.hierarchy: class facts from input classes, from a classpath (jar and
directory) and from the JDK's runtime image; superclass chains; common_super (the verifier's merge of two
class types: nearest common superclass, interfaces as java/lang/Object); is_assignable; memoisation staying
correct when classes are added; UnknownClassError naming the missing class; cyclic superclass chains.

The small hierarchy in ``tests/java/frames/hierarchy/Zoo.java`` (package ``zoo``) is compiled here with javac.
"""
from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from peggy_jvm.classfile.errors import UnsupportedCodeError
from peggy_jvm.classfile.hierarchy import OBJECT, ClassHierarchy, ClassInfo, UnknownClassError, read_class_info
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.classfile.writer import write_class
from conftest import javac_command
from support.javac_cache import run_javac

ROOT = Path(__file__).resolve().parent.parent
ZOO_SOURCE = ROOT / "tests" / "java" / "frames" / "hierarchy" / "Zoo.java"
ZOO_CLASSES = ["Zoo", "Pet", "Loud", "Animal", "Dog", "Puppy", "Cat", "Robot"]


def z(name: str) -> str:
    return f"zoo/{name}"


@pytest.fixture(scope="session")
def zoo_dir(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zoo-classes")
    proc = run_javac([*javac_command(java_home), "-d", str(out), str(ZOO_SOURCE)],
                     capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = sorted(p.stem for p in (out / "zoo").glob("*.class"))
    assert found == sorted(ZOO_CLASSES)
    return out


@pytest.fixture(scope="session")
def zoo_bytes(zoo_dir: Path) -> dict[str, bytes]:
    return {z(n): (zoo_dir / "zoo" / f"{n}.class").read_bytes() for n in ZOO_CLASSES}


@pytest.fixture(scope="session")
def zoo_jar(zoo_bytes: dict[str, bytes], tmp_path_factory: pytest.TempPathFactory) -> Path:
    jar = tmp_path_factory.mktemp("zoo-jar") / "zoo.jar"
    with zipfile.ZipFile(jar, "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
        for name, data in zoo_bytes.items():
            zf.writestr(f"{name}.class", data)
    return jar


@pytest.fixture(scope="session")
def jdk() -> ClassHierarchy:
    return ClassHierarchy()


def _from_bytes(zoo_bytes: dict[str, bytes]) -> ClassHierarchy:
    h = ClassHierarchy(use_jdk=False)
    for data in zoo_bytes.values():
        h.add_class_bytes(data)
    return h


def zoo_hierarchies(zoo_bytes, zoo_dir, zoo_jar) -> dict[str, ClassHierarchy]:
    return {
        "input-classes": _from_bytes(zoo_bytes),
        "directory": ClassHierarchy([zoo_dir], use_jdk=False),
        "jar": ClassHierarchy([zoo_jar], use_jdk=False),
        "jar-and-jdk": ClassHierarchy([str(zoo_jar)], use_jdk=True),  # classpath entries may be strings
    }


@pytest.fixture(params=["input-classes", "directory", "jar", "jar-and-jdk"])
def zoo(request, zoo_bytes, zoo_dir, zoo_jar) -> ClassHierarchy:
    return zoo_hierarchies(zoo_bytes, zoo_dir, zoo_jar)[request.param]


# ------------------------------------------------------------------------------------------ class facts

def test_read_class_info(zoo_bytes):
    assert read_class_info(zoo_bytes[z("Dog")]) == ClassInfo(z("Dog"), z("Animal"), (z("Pet"),), False)
    assert read_class_info(zoo_bytes[z("Cat")]) == ClassInfo(z("Cat"), z("Animal"), (z("Pet"), z("Loud")), False)
    assert read_class_info(zoo_bytes[z("Loud")]) == ClassInfo(z("Loud"), OBJECT, (z("Pet"),), True)
    assert read_class_info(zoo_bytes[z("Animal")]) == ClassInfo(z("Animal"), OBJECT, (), False)


def test_info_from_every_source(zoo):
    assert zoo.info(z("Puppy")) == ClassInfo(z("Puppy"), z("Dog"), (), False)
    assert zoo.is_interface(z("Pet")) and zoo.is_interface(z("Loud"))
    assert not zoo.is_interface(z("Animal")) and not zoo.is_interface(z("Robot"))


def test_superclass_chains(zoo):
    assert zoo.superclasses(z("Puppy")) == [z("Puppy"), z("Dog"), z("Animal"), OBJECT]
    assert zoo.superclasses(z("Cat")) == [z("Cat"), z("Animal"), OBJECT]
    assert zoo.superclasses(z("Robot")) == [z("Robot"), OBJECT]
    # an interface's superclass is Object
    assert zoo.superclasses(z("Loud")) == [z("Loud"), OBJECT]
    # java/lang/Object itself needs no source (these hierarchies may have no JDK)
    assert zoo.superclasses(OBJECT) == [OBJECT]


def test_jdk_superclass_chains(jdk):
    assert jdk.superclasses("java/util/ArrayList") == [
        "java/util/ArrayList", "java/util/AbstractList", "java/util/AbstractCollection", OBJECT]
    assert jdk.superclasses("java/lang/Integer") == ["java/lang/Integer", "java/lang/Number", OBJECT]
    assert jdk.superclasses("java/lang/IllegalStateException") == [
        "java/lang/IllegalStateException", "java/lang/RuntimeException", "java/lang/Exception",
        "java/lang/Throwable", OBJECT]
    info = jdk.info("java/lang/String")
    assert info.super_name == OBJECT and not info.is_interface
    assert {"java/io/Serializable", "java/lang/Comparable", "java/lang/CharSequence"} <= set(info.interfaces)
    assert jdk.is_interface("java/util/List")
    assert jdk.is_interface("java/lang/Runnable")
    assert jdk.info(OBJECT).super_name is None


def test_jdk_is_not_consulted_when_disabled():
    h = ClassHierarchy(use_jdk=False)
    with pytest.raises(UnknownClassError):
        h.info("java/util/ArrayList")


def test_input_classes_come_before_the_classpath_and_the_jdk(zoo_jar):
    h = ClassHierarchy([zoo_jar], use_jdk=True)
    h.add_info(ClassInfo(z("Puppy"), z("Animal"), (), False))
    h.add_info(ClassInfo("java/util/ArrayList", OBJECT, (), False))
    assert h.superclasses(z("Puppy")) == [z("Puppy"), z("Animal"), OBJECT]
    assert h.superclasses("java/util/ArrayList") == ["java/util/ArrayList", OBJECT]


def test_classpath_comes_before_the_jdk(tmp_path):
    # a class directory that shadows a JDK class with another superclass
    h_jdk = ClassHierarchy()
    real = h_jdk.info("java/util/LinkedList")
    assert real.super_name == "java/util/AbstractSequentialList"
    data = _class_with_super(_jdk_class_bytes("java/util/LinkedList"), OBJECT)
    (tmp_path / "java" / "util").mkdir(parents=True)
    (tmp_path / "java" / "util" / "LinkedList.class").write_bytes(data)
    h = ClassHierarchy([tmp_path])
    assert h.superclasses("java/util/LinkedList") == ["java/util/LinkedList", OBJECT]


def _jdk_class_bytes(name: str) -> bytes:
    from peggy_jvm.classfile.jimage import default_image

    image = default_image()
    assert image is not None
    data = image.find_class(name)
    assert data is not None
    return data


def _class_with_super(data: bytes, super_name: str) -> bytes:
    cf = read_class(data)
    cf.super_index = cf.pool.add_class(super_name)
    return write_class(cf)


def test_classpath_order_is_honoured(zoo_bytes, tmp_path):
    """Like the JVM's class path, the first entry that has a class wins: a jar listed before a directory
    shadows the directory's copy (and the other way round)."""
    jar = tmp_path / "first.jar"
    with zipfile.ZipFile(jar, "w") as zf:
        zf.writestr("zoo/Dog.class", zoo_bytes[z("Dog")])  # Dog extends Animal
    directory = tmp_path / "dir"
    (directory / "zoo").mkdir(parents=True)
    (directory / "zoo" / "Dog.class").write_bytes(_class_with_super(zoo_bytes[z("Dog")], OBJECT))
    assert ClassHierarchy([jar, directory], use_jdk=False).info(z("Dog")).super_name == z("Animal")
    assert ClassHierarchy([directory, jar], use_jdk=False).info(z("Dog")).super_name == OBJECT


def test_a_broken_class_file_is_an_unknown_class(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "Broken.class").write_bytes(b"\xca\xfe\xba\xbe\x00\x00\x00\x3d\x00")
    h = ClassHierarchy([tmp_path], use_jdk=False)
    with pytest.raises(UnknownClassError, match="b/Broken"):
        h.info("b/Broken")


# ------------------------------------------------------------------------------------------ common_super

@pytest.mark.parametrize("a, b, expected", [
    ("Dog", "Cat", "Animal"),
    ("Puppy", "Cat", "Animal"),
    ("Puppy", "Dog", "Dog"),
    ("Dog", "Dog", "Dog"),
    ("Puppy", "Animal", "Animal"),
    ("Dog", "Robot", OBJECT),
    ("Animal", "Robot", OBJECT),
    # interfaces are java/lang/Object to the verifier, even when the class implements them
    ("Dog", "Pet", OBJECT),
    ("Cat", "Loud", OBJECT),
    ("Pet", "Loud", OBJECT),
    ("Pet", "Pet", "Pet"),
    ("Puppy", OBJECT, OBJECT),
])
def test_common_super(zoo, a, b, expected):
    full = lambda n: n if n == OBJECT else z(n)  # noqa: E731
    assert zoo.common_super(full(a), full(b)) == full(expected)
    assert zoo.common_super(full(b), full(a)) == full(expected)


@pytest.mark.parametrize("a, b, expected", [
    ("java/util/ArrayList", "java/util/LinkedList", "java/util/AbstractList"),
    ("java/util/ArrayList", "java/util/HashSet", "java/util/AbstractCollection"),
    ("java/lang/Integer", "java/lang/Long", "java/lang/Number"),
    ("java/lang/StringBuilder", "java/lang/StringBuffer", "java/lang/AbstractStringBuilder"),
    ("java/lang/String", "java/lang/StringBuilder", OBJECT),
    ("java/lang/String", "java/lang/CharSequence", OBJECT),
    ("java/util/List", "java/util/Set", OBJECT),
    ("java/lang/IllegalStateException", "java/lang/IllegalArgumentException", "java/lang/RuntimeException"),
    ("java/io/IOException", "java/lang/IllegalStateException", "java/lang/Exception"),
    ("java/lang/Error", "java/lang/Exception", "java/lang/Throwable"),
])
def test_jdk_common_super(jdk, a, b, expected):
    assert jdk.common_super(a, b) == expected
    assert jdk.common_super(b, a) == expected


def test_user_classes_over_jdk_classes(zoo_jar):
    h = ClassHierarchy([zoo_jar])
    h.add_info(ClassInfo("u/MyList", "java/util/ArrayList", (), False))
    h.add_info(ClassInfo("u/MyError", "java/lang/IllegalStateException", (), False))
    assert h.common_super("u/MyList", "java/util/LinkedList") == "java/util/AbstractList"
    assert h.common_super("u/MyError", "java/lang/ArithmeticException") == "java/lang/RuntimeException"
    assert h.common_super("u/MyError", z("Dog")) == OBJECT


def test_memoised_results_follow_add_info():
    h = ClassHierarchy(use_jdk=False)
    h.add_info(ClassInfo("m/A", OBJECT, (), False))
    h.add_info(ClassInfo("m/B", "m/A", (), False))
    h.add_info(ClassInfo("m/C", "m/A", (), False))
    assert h.common_super("m/B", "m/C") == "m/A"
    assert h.common_super("m/C", "m/B") == "m/A"  # the memoised answer, asked the other way round
    # B is redefined under C: the memoised A must not survive
    h.add_info(ClassInfo("m/B", "m/C", (), False))
    assert h.common_super("m/B", "m/C") == "m/C"
    assert h.common_super("m/C", "m/B") == "m/C"
    assert h.superclasses("m/B") == ["m/B", "m/C", "m/A", OBJECT]
    # C becomes an interface: classes merged with it give Object
    h.add_info(ClassInfo("m/C", OBJECT, (), True))
    assert h.common_super("m/B", "m/C") == OBJECT


def test_a_failed_lookup_is_retried_after_add_info():
    h = ClassHierarchy(use_jdk=False)
    h.add_info(ClassInfo("m/X", "m/Base", (), False))
    h.add_info(ClassInfo("m/Y", OBJECT, (), False))
    with pytest.raises(UnknownClassError, match="m/Base"):
        h.common_super("m/X", "m/Y")
    with pytest.raises(UnknownClassError, match="m/Base"):  # the failure itself is not memoised as a result
        h.common_super("m/Y", "m/X")
    h.add_info(ClassInfo("m/Base", OBJECT, (), False))
    h.add_info(ClassInfo("m/Y", "m/Base", (), False))
    assert h.common_super("m/X", "m/Y") == "m/Base"


# ------------------------------------------------------------------------------------------ is_assignable

@pytest.mark.parametrize("target, source, expected", [
    ("Animal", "Dog", True),
    ("Animal", "Puppy", True),
    ("Dog", "Puppy", True),
    ("Dog", "Dog", True),
    ("Dog", "Animal", False),
    ("Dog", "Cat", False),
    ("Puppy", "Dog", False),
    ("Animal", "Robot", False),
    (OBJECT, "Robot", True),
    (OBJECT, "Pet", True),
    # an interface target accepts any class (the verifier leaves interface checks to invokeinterface)
    ("Pet", "Robot", True),
    ("Loud", "Dog", True),
    ("Pet", "Loud", True),
    # a class target does not accept an interface type
    ("Animal", "Pet", False),
])
def test_is_assignable(zoo, target, source, expected):
    full = lambda n: n if n == OBJECT else z(n)  # noqa: E731
    assert zoo.is_assignable(full(target), full(source)) is expected


def test_jdk_is_assignable(jdk):
    assert jdk.is_assignable("java/util/AbstractList", "java/util/ArrayList")
    assert not jdk.is_assignable("java/util/ArrayList", "java/util/AbstractList")
    assert jdk.is_assignable("java/lang/Number", "java/lang/Integer")
    assert not jdk.is_assignable("java/lang/Integer", "java/lang/Number")
    assert jdk.is_assignable("java/util/List", "java/lang/String")  # interfaces: always
    assert jdk.is_assignable("java/lang/Throwable", "java/io/UncheckedIOException")
    assert not jdk.is_assignable("java/lang/RuntimeException", "java/io/IOException")


# ------------------------------------------------------------------------------------------ errors

def test_unknown_class_error_names_the_class(zoo_jar):
    h = ClassHierarchy([zoo_jar])
    with pytest.raises(UnknownClassError) as e:
        h.info("no/such/Clazz")
    assert "no/such/Clazz" in str(e.value)
    assert isinstance(e.value, UnsupportedCodeError)  # a fallback reason, not bad input
    # the missing class is named even when it is only the superclass of the class asked about
    h.add_info(ClassInfo("u/Orphan", "u/MissingParent", (), False))
    with pytest.raises(UnknownClassError, match="u/MissingParent"):
        h.superclasses("u/Orphan")
    with pytest.raises(UnknownClassError, match="u/MissingParent"):
        h.common_super("u/Orphan", z("Dog"))
    with pytest.raises(UnknownClassError, match="u/MissingParent"):
        h.is_assignable(z("Dog"), "u/Orphan")
    with pytest.raises(UnknownClassError, match="u/Nowhere"):
        h.is_interface("u/Nowhere")
    # a class in the unnamed package is never in the JDK image
    with pytest.raises(UnknownClassError, match="NoPackage"):
        ClassHierarchy().info("NoPackage")


@pytest.mark.parametrize("infos, start", [
    ([("c/A", "c/A")], "c/A"),
    ([("c/A", "c/B"), ("c/B", "c/A")], "c/A"),
    ([("c/A", "c/B"), ("c/B", "c/C"), ("c/C", "c/B")], "c/A"),
])
def test_cyclic_superclass_chain_is_detected(infos, start):
    h = ClassHierarchy(use_jdk=False)
    for name, sup in infos:
        h.add_info(ClassInfo(name, sup, (), False))
    h.add_info(ClassInfo("c/Other", OBJECT, (), False))
    with pytest.raises(UnknownClassError, match="cyclic"):
        h.superclasses(start)
    with pytest.raises(UnknownClassError, match="cyclic"):
        h.common_super(start, "c/Other")
    with pytest.raises(UnknownClassError, match="cyclic"):
        h.common_super("c/Other", start)


# ------------------------------------------------------------------------------------------ lazy input classes

def test_lazy_input_classes(zoo_bytes):
    h = ClassHierarchy(use_jdk=False)
    h.add_lazy_classes(dict(zoo_bytes))
    assert h.superclasses(z("Puppy")) == [z("Puppy"), z("Dog"), z("Animal"), OBJECT]
    assert h.common_super(z("Puppy"), z("Cat")) == z("Animal")
    assert h.is_interface(z("Loud"))


def test_lazy_input_classes_come_before_the_classpath_and_the_jdk(zoo_bytes, zoo_dir):
    h = ClassHierarchy([zoo_dir])
    h.add_lazy_classes({z("Dog"): _class_with_super(zoo_bytes[z("Dog")], OBJECT),
                        "java/util/LinkedList": _class_with_super(_jdk_class_bytes("java/util/LinkedList"),
                                                                  OBJECT)})
    assert h.superclasses(z("Dog")) == [z("Dog"), OBJECT]
    assert h.superclasses("java/util/LinkedList") == ["java/util/LinkedList", OBJECT]
    assert h.common_super("java/util/LinkedList", "java/util/ArrayList") == OBJECT


def test_lazy_input_class_under_the_wrong_name_is_not_used(zoo_bytes, zoo_dir):
    # keyed by a name its path implies, but the class inside is another: ignored, the next source answers
    h = ClassHierarchy([zoo_dir], use_jdk=False)
    h.add_lazy_classes({z("Dog"): zoo_bytes[z("Cat")], "zoo/Ghost": zoo_bytes[z("Robot")],
                        "zoo/Junk": b"not a class file"})
    assert h.info(z("Dog")) == ClassInfo(z("Dog"), z("Animal"), (z("Pet"),), False)
    with pytest.raises(UnknownClassError, match="zoo/Ghost"):
        h.info("zoo/Ghost")
    with pytest.raises(UnknownClassError, match="zoo/Junk"):  # broken bytes: missing, never an exception
        h.info("zoo/Junk")


def test_add_lazy_classes_refreshes_memoised_merges(zoo_bytes):
    h = ClassHierarchy(use_jdk=False)
    h.add_lazy_classes(dict(zoo_bytes))
    assert h.common_super(z("Dog"), z("Robot")) == OBJECT
    h.add_info(ClassInfo(z("Robot"), z("Animal"), (), False))
    assert h.common_super(z("Dog"), z("Robot")) == z("Animal")
