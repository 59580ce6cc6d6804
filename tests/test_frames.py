"""Tests for peggy_jvm.classfile.frames: StackMapTable decoding (checked against ``javap -v``), encoding (the
most compact frame kinds, byte-identical to javac on real code), frame computation (the same frame offsets as
javac, types at least as precise, exact shapes for uninitialized objects, long/double pairs, handlers and
reference merges), max_stack/max_locals, the error cases, and HotSpot accepting classes whose StackMapTables
were replaced by computed ones.

Purpose-written classes live in ``tests/java/frames/`` and are compiled here with javac (release 17 and 8)
into temporary directories. Without a JDK these tests fail; nothing is skipped.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.assembler import Handler, Insn, Label, assemble
from peggy_jvm.classfile.bytecode import Instruction, decode
from peggy_jvm.classfile.constpool import ConstantPool
from peggy_jvm.classfile.errors import ClassFileError, UnsupportedCodeError
from peggy_jvm.classfile.frames import (
    DOUBLE, FLOAT, INTEGER, LONG, NULL, RETADDR, TOP, UNINIT_THIS, ComputedFrames, Frame, compress,
    compute_frames, decode_stack_map, encode_stack_map, expand, initial_frame, type_name,
)
from peggy_jvm.classfile.hierarchy import ClassHierarchy, ClassInfo, UnknownClassError
from peggy_jvm.classfile.jimage import default_image
from peggy_jvm.classfile.model import Attribute, ClassFile, CodeAttribute, MethodInfo, attribute_named
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.classfile.recode import recode_method
from peggy_jvm.classfile.writer import write_class
from conftest import javac_command
from support.javac_cache import run_javac
from support.javap import javap

ROOT = Path(__file__).resolve().parent.parent
FRAME_SOURCES = ROOT / "tests" / "java" / "frames"
SHAPES = "FrameShapes"
OBJ = "java/lang/Object"

RELEASES = {"release17": ("17",), "release8": ("8", "-Xlint:-options")}


# ------------------------------------------------------------------------------------------ helpers

@dataclass
class Method:
    """One method with code, parsed once."""

    cf: ClassFile
    method: MethodInfo
    code: CodeAttribute
    insns: list[Instruction]

    @property
    def where(self) -> str:
        return f"{self.cf.name}.{self.method.name}{self.method.descriptor}"

    @property
    def init(self) -> list:
        return initial_frame(self.cf.name, self.method.name, self.method.descriptor, self.method.is_static)

    @property
    def smt(self) -> bytes | None:
        a = attribute_named(self.code.attributes, "StackMapTable")
        return None if a is None else a.data

    def javac_frames(self) -> list[Frame]:
        data = self.smt
        return [] if data is None else decode_stack_map(data, self.init, self.cf.pool)

    def compute(self, hierarchy: ClassHierarchy | None, need_frames: bool = True) -> ComputedFrames:
        m = self.method
        return compute_frames(self.insns, self.code.exception_table, self.cf.pool, self.cf.name, m.name,
                              m.descriptor, m.is_static, hierarchy, need_frames=need_frames)


def methods_of(cf: ClassFile) -> list[Method]:
    out = []
    for m in cf.methods:
        a = m.code_attribute()
        if a is not None:
            code = read_code(a.data, cf.pool)
            out.append(Method(cf, m, code, decode(code.code)))
    return out


def methods_in(directory: Path) -> list[Method]:
    out = []
    for p in sorted(directory.rglob("*.class")):
        out.extend(methods_of(read_class(p.read_bytes())))
    return out


def find(methods: list[Method], name: str, descriptor: str | None = None, cls: str = SHAPES) -> Method:
    found = [m for m in methods if m.cf.name == cls and m.method.name == name
             and (descriptor is None or m.method.descriptor == descriptor)]
    assert len(found) == 1, (cls, name, descriptor, [m.where for m in found])
    return found[0]


def frame_at(frames: list[Frame], offset: int) -> Frame:
    hits = [f for f in frames if f.offset == offset]
    assert len(hits) == 1, (offset, [f.offset for f in frames])
    return hits[0]


def first(insns: list[Instruction], opcode: int) -> Instruction:
    return next(i for i in insns if i.opcode == opcode)


def padded(a: list, b: list) -> tuple[list, list]:
    n = max(len(a), len(b))
    return a + [TOP] * (n - len(a)), b + [TOP] * (n - len(b))


_ARRAY_SUPERS = {OBJ, "java/lang/Cloneable", "java/io/Serializable"}


def vtype_assignable(target, source, h: ClassHierarchy) -> bool:
    """Whether a value of verification type ``source`` may stand where ``target`` is expected (JVMS 4.10.1.2)."""
    if target == source or target == TOP:
        return True
    if not isinstance(target, str):
        return False  # int/float/long/double/null/uninitialized types must match exactly
    if source == NULL:
        return True
    if not isinstance(source, str):
        return False
    if target[0] == "[":
        if source[0] != "[":
            return False
        tc, sc = target[1:], source[1:]
        if tc[0] in "L[" and sc[0] in "L[":
            return vtype_assignable(tc[1:-1] if tc[0] == "L" else tc, sc[1:-1] if sc[0] == "L" else sc, h)
        return False
    if source[0] == "[":
        return target in _ARRAY_SUPERS
    return h.is_assignable(target, source)


def imprecisions(ours: Frame, javac: Frame, h: ClassHierarchy) -> list[str]:
    """Entries where our frame is not equal to or more precise than javac's (empty: ours is fine)."""
    bad = []
    if len(ours.stack) != len(javac.stack):
        return [f"stack height {len(ours.stack)} vs javac's {len(javac.stack)}"]
    for k, (j, o) in enumerate(zip(javac.stack, ours.stack)):
        if not vtype_assignable(j, o, h):
            bad.append(f"stack[{k}]: {type_name(o)} vs javac's {type_name(j)}")
    jl, ol = padded(javac.locals, ours.locals)
    for k, (j, o) in enumerate(zip(jl, ol)):
        if not vtype_assignable(j, o, h):
            bad.append(f"local {k}: {type_name(o)} vs javac's {type_name(j)}")
    return bad


def javac(java_home: Path, sources: list[Path], out: Path, *flags: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    proc = run_javac([*javac_command(java_home), "-g", "-d", str(out), *flags, *map(str, sources)],
                     capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


# ------------------------------------------------------------------------------------------ fixtures

@pytest.fixture(scope="session")
def shapes(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """tests/java/frames/*.java compiled with --release 17 and --release 8: release -> class directory."""
    sources = sorted(FRAME_SOURCES.glob("*.java"))
    assert len(sources) >= 2
    base = tmp_path_factory.mktemp("frame-shapes")
    return {rel: javac(java_home, sources, base / rel, "--release", *flags) for rel, flags in RELEASES.items()}


@pytest.fixture(scope="session")
def shape_methods(shapes: dict[str, Path]) -> dict[str, list[Method]]:
    return {rel: methods_in(d) for rel, d in shapes.items()}


@pytest.fixture(scope="session")
def fixture_methods(fixture_classes: dict[str, Path]) -> dict[str, list[Method]]:
    return {rel: methods_in(d) for rel, d in fixture_classes.items() if rel in RELEASES}


@pytest.fixture(scope="session")
def jdk_methods() -> list[Method]:
    """Every method of ~200 java.lang / java.util classes, from the running JDK's runtime image."""
    image = default_image()
    assert image is not None, "no JDK runtime image (lib/modules) found"
    names = sorted(n for n in image.class_names()
                   if re.fullmatch(r"java/(lang|util)/[A-Za-z0-9_$]+", n))
    assert len(names) > 400
    step = len(names) // 200
    picked = names[::step][:200]
    out = []
    for n in picked:
        data = image.find_class(n)
        assert data is not None, n
        out.extend(methods_of(read_class(data)))
    return out


@pytest.fixture(scope="session")
def jdk_hierarchy() -> ClassHierarchy:
    return ClassHierarchy()


SETS = ["fixtures-release17", "fixtures-release8", "shapes-release17", "shapes-release8"]


@pytest.fixture(params=SETS)
def method_set(request, shapes, fixture_classes, shape_methods, fixture_methods):
    """(methods, hierarchy over their class directory) for each javac-compiled test corpus."""
    kind, rel = request.param.split("-")
    directory = (shapes if kind == "shapes" else fixture_classes)[rel]
    methods = (shape_methods if kind == "shapes" else fixture_methods)[rel]
    assert len(methods) > 20
    return methods, ClassHierarchy([directory])


# ------------------------------------------------------------------------------------------ javap oracle

_JAVAP_SIMPLE = {"top": TOP, "int": INTEGER, "float": FLOAT, "double": DOUBLE, "long": LONG, "null": NULL,
                 "this": UNINIT_THIS}


def _javap_type(text: str):
    text = text.strip()
    if text in _JAVAP_SIMPLE:
        return _JAVAP_SIMPLE[text]
    if text.startswith("uninitialized "):
        return -int(text.split()[1]) - 1
    if text.startswith("class "):
        return text[6:].strip().strip('"')
    raise AssertionError(f"unknown javap verification type {text!r}")


def _javap_list(text: str) -> list:
    inner = text.strip()
    assert inner.startswith("[") and inner.endswith("]"), text
    inner = inner[1:-1].strip()
    return [_javap_type(t) for t in inner.split(",")] if inner else []


def javap_frames(java_home: Path, class_file: Path, class_name: str) -> dict[tuple[str, str], list[dict]]:
    """Every method's StackMapTable entries as javap -v prints them: (name, descriptor) -> raw entries, which
    :func:`javap_decode` turns into full frames by JVMS 4.7.4's rules (an independent decoder: it shares
    nothing with frames.py but the Frame record and word expansion)."""
    text = javap(java_home, "-v", "-p", str(class_file), check=True).stdout
    lines = text.splitlines()
    dotted = class_name.replace("/", ".")
    out: dict[tuple[str, str], list[dict]] = {}
    i = 0
    key = None
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^    descriptor: (\S+)$", line)
        if m and i > 0 and "(" in m.group(1):
            header = lines[i - 1].strip()
            if header.startswith("static {}"):
                name = "<clinit>"
            else:
                name = header[:header.index("(")].split()[-1]
                if name == dotted:
                    name = "<init>"
            key = (name, m.group(1))
            out[key] = []
        elif line.strip().startswith("StackMapTable: number_of_entries") and key is not None:
            count = int(line.split("=")[1])
            i += 1
            raw = []
            while i < len(lines) and lines[i].strip().startswith(("frame_type", "offset_delta", "locals",
                                                                     "stack")):
                s = lines[i].strip()
                if s.startswith("frame_type"):
                    raw.append({"type": int(s.split("=")[1].split("/*")[0])})
                else:
                    field, _, value = s.partition("=")
                    raw[-1][field.strip()] = value.strip()
                i += 1
            assert len(raw) == count, (key, raw)
            out[key] = raw
            continue
        i += 1
    return out


def javap_decode(raw: list[dict], initial_locals: list) -> list[Frame]:
    locals_ = compress(initial_locals)
    offset = -1
    frames = []
    for e in raw:
        t = e["type"]
        stack: list = []
        if t <= 63:
            delta = t
        elif t <= 127:
            delta = t - 64
            stack = _javap_list(e["stack"])
        else:
            delta = int(e["offset_delta"])
            if t == 247:
                stack = _javap_list(e["stack"])
            elif 248 <= t <= 250:
                locals_ = locals_[:len(locals_) - (251 - t)]
            elif t == 251:
                pass
            elif 252 <= t <= 254:
                added = _javap_list(e["locals"])
                assert len(added) == t - 251
                locals_ = locals_ + added
            else:
                assert t == 255
                locals_ = _javap_list(e["locals"])
                stack = _javap_list(e["stack"])
        offset += delta + 1
        frames.append(Frame(offset, expand(locals_), expand(stack)))
    return frames


# ------------------------------------------------------------------------------------------ initial frame

def test_initial_frame_static_instance_and_constructors() -> None:
    assert initial_frame("p/C", "f", "()V", True) == []
    assert initial_frame("p/C", "f", "(IJDF[ILjava/lang/String;ZBCS)V", True) == [
        INTEGER, LONG, TOP, DOUBLE, TOP, FLOAT, "[I", "java/lang/String", INTEGER, INTEGER, INTEGER, INTEGER]
    assert initial_frame("p/C", "g", "(J)J", False) == ["p/C", LONG, TOP]
    assert initial_frame("p/C", "<init>", "(D[[Lp/C;)V", False) == [UNINIT_THIS, DOUBLE, TOP, "[[Lp/C;"]
    # only java/lang/Object's constructor starts with an initialized `this`
    assert initial_frame(OBJ, "<init>", "()V", False) == [OBJ]
    assert initial_frame("p/C", "<clinit>", "()V", True) == []


# ------------------------------------------------------------------------------------------ decoding

@pytest.mark.parametrize("release", list(RELEASES))
def test_decode_matches_javap_for_every_purpose_written_method(java_home, shapes, shape_methods, release):
    """decode_stack_map from the implicit initial frame gives the frames javap prints, for every method
    (static, instance, constructors, long/double parameters) of the purpose-written classes."""
    by_class: dict[str, list[Method]] = {}
    for m in shape_methods[release]:
        by_class.setdefault(m.cf.name, []).append(m)
    assert {SHAPES, "HandlerOnly", "FrameShapes$Box"} <= set(by_class)
    checked = 0
    for cls, methods in by_class.items():
        raw = javap_frames(java_home, shapes[release] / f"{cls}.class", cls)
        for m in methods:
            expected = javap_decode(raw.get((m.method.name, m.method.descriptor), []), m.init)
            assert m.javac_frames() == expected, m.where
            checked += len(expected)
    assert checked >= 60


@pytest.mark.parametrize("release", list(RELEASES))
def test_purpose_written_class_has_every_frame_kind(shape_methods, release):
    """The javap comparison above covers every frame kind: same, same_locals_1_stack_item(_extended), chop 1-3,
    same_frame_extended, append 1-3 and full_frame."""
    kinds = set()
    for m in shape_methods[release]:
        data = m.smt
        if data is None:
            continue
        # walk the raw table just far enough to classify each frame
        pos, count = 2, int.from_bytes(data[:2], "big")
        for _ in range(count):
            t = data[pos]
            pos += 1
            vt_count = 0
            if 64 <= t <= 127:
                vt_count = 1
            elif t >= 247:
                pos += 2
                if t == 247:
                    vt_count = 1
                elif 252 <= t <= 254:
                    vt_count = t - 251
            if t == 255:
                for _ in range(2):
                    n = int.from_bytes(data[pos:pos + 2], "big")
                    pos += 2
                    for _ in range(n):
                        pos += 3 if data[pos] in (7, 8) else 1
            for _ in range(vt_count):
                pos += 3 if data[pos] in (7, 8) else 1
            kinds.add("same" if t < 64 else "same_locals_1" if t < 128 else str(t))
        assert pos == len(data), m.where
    assert kinds >= {"same", "same_locals_1", "247", "248", "249", "250", "251", "252", "253", "254", "255"}


I, J, D = INTEGER, LONG, DOUBLE

# Hand-checked frames of small methods (javac 17 --release 17 bytecode), word-based.
HAND_CHECKED = {
    ("chopAfterLoop", "(I)I"): [Frame(4, [I, I, I], []),  # append [int, int]
                                Frame(19, [I, I], [])],  # chop 1
    ("chopTwo", "(I)I"): [Frame(12, [I, I, I], []), Frame(23, [I, I, I], []), Frame(25, [I], [])],
    ("chopThree", "(I)I"): [Frame(16, [I, I, I, I], []), Frame(30, [I, I, I, I], []), Frame(32, [I], [])],
    ("fullFrame", "(Z)I"): [Frame(8, [I], []), Frame(9, [I], [I]),  # same_locals_1_stack_item
                            Frame(19, [I, I], [I]), Frame(20, [I, I], [I, I])],  # full frames
    ("sameFrameExtended", "(I)I"): [Frame(76, [I], [])],
    ("sameLocals1Extended", "(I)I"): [Frame(8, [I], []), Frame(79, [I], [I])],
    ("longsAndDoubles", "(JDI)J"): [Frame(6, [J, TOP, D, TOP, I, J, TOP, I], []),
                                    Frame(30, [J, TOP, D, TOP, I, J, TOP], []),
                                    Frame(48, [J, TOP, D, TOP, I, J, TOP, D, TOP], [])],
    ("instanceLongs", "(JD)J"): [Frame(21, [SHAPES, J, TOP, D, TOP, J, TOP], [])],
    ("<init>", "(Z)V"): [Frame(9, [UNINIT_THIS, I], [UNINIT_THIS]),
                         Frame(10, [UNINIT_THIS, I], [UNINIT_THIS, I])],
    ("<init>", "(IJD)V"): [Frame(21, [SHAPES, I, J, TOP, D, TOP], []), Frame(26, [SHAPES, I, J, TOP, D, TOP], [])],
    ("newWithTernary", "(Z)LFrameShapes$Box;"): [Frame(15, [I, I], [-4, -4]), Frame(16, [I, I], [-4, -4, I])],
}


@pytest.mark.parametrize("key", list(HAND_CHECKED), ids=lambda k: k[0] + k[1])
def test_decode_hand_checked_frames(shape_methods, key):
    m = find(shape_methods["release17"], *key)
    assert m.javac_frames() == HAND_CHECKED[key]


def test_decode_is_relative_to_the_initial_frame(shape_methods):
    """A first SAME frame repeats the implicit initial frame: for an instance method with long/double
    parameters that is [this, long, top, double, top]."""
    m = find(shape_methods["release17"], "instanceLongs")
    frames = decode_stack_map(m.smt, m.init, m.cf.pool)
    assert frames[0].locals[:5] == [SHAPES, LONG, TOP, DOUBLE, TOP]
    # decoding the same bytes from another initial frame shifts every frame: the initial frame is used
    other = decode_stack_map(m.smt, [SHAPES], m.cf.pool)
    assert other[0].locals == [SHAPES, LONG, TOP]


def _pool_with(*classes: str) -> ConstantPool:
    pool = ConstantPool()
    for c in classes:
        pool.add_class(c)
    return pool


@pytest.mark.parametrize("data, why", [
    (b"", "empty"),
    (b"\x00\x01", "one frame announced, none present"),
    (b"\x00\x01\x40", "same_locals_1_stack_item without its type"),
    (b"\x00\x01\xff\x00\x05\x00\x01", "full_frame cut in its locals"),
    (b"\x00\x01\x80", "reserved frame type 128"),
    (b"\x00\x01\xf6", "reserved frame type 246"),
    (b"\x00\x01\x40\x09", "bad verification type tag 9"),
    (b"\x00\x01\xf8\x00\x00", "chop 3 of 1 local"),
    (b"\x00\x00\x00", "trailing byte"),
    (b"\x00\x01\x00\x00", "trailing byte after a frame"),
    (b"\x00\x01\x40\x07\x00\x63", "class index outside the pool"),
])
def test_decode_rejects_malformed_tables(data, why):
    with pytest.raises(ClassFileError):
        decode_stack_map(data, [INTEGER], _pool_with("java/lang/String"))


def test_decode_every_verification_type():
    pool = _pool_with("java/lang/String")
    s = pool.add_class("java/lang/String")
    # full_frame at offset 3: locals [top, int, float, double, long, null, uninitThis, String, uninit(7)],
    # stack [long, uninit(258)]
    data = (b"\x00\x01\xff\x00\x03\x00\x09\x00\x01\x02\x03\x04\x05\x06\x07" + s.to_bytes(2, "big")
            + b"\x08\x00\x07\x00\x02\x04\x08\x01\x02")
    (f,) = decode_stack_map(data, [], pool)
    assert f == Frame(3, [TOP, INTEGER, FLOAT, DOUBLE, TOP, LONG, TOP, NULL, UNINIT_THIS, "java/lang/String", -8],
                      [LONG, TOP, -259])
    assert [type_name(t) for t in compress(f.locals)] == [
        "top", "int", "float", "double", "long", "null", "uninitializedThis", "java/lang/String",
        "uninitialized(7)"]


# ------------------------------------------------------------------------------------------ encoding

def _check_round_trip(methods: list[Method]) -> int:
    frames_seen = 0
    mismatched = []
    for m in methods:
        data = m.smt
        if data is None:
            continue
        frames = decode_stack_map(data, m.init, m.cf.pool)
        again = encode_stack_map(frames, m.init, m.cf.pool)
        assert decode_stack_map(again, m.init, m.cf.pool) == frames, m.where
        # javac always picks the most compact kind; so must we: the bytes are javac's
        if again != data:
            mismatched.append(m.where)
        frames_seen += len(frames)
    assert mismatched == []
    return frames_seen


@pytest.mark.parametrize("release", list(RELEASES))
def test_round_trip_fixture_and_purpose_written_frames(fixture_methods, shape_methods, release):
    assert _check_round_trip(fixture_methods[release]) > 300
    assert _check_round_trip(shape_methods[release]) > 50


def test_round_trip_jdk_frames(jdk_methods):
    assert len(jdk_methods) > 2000
    assert _check_round_trip(jdk_methods) > 5000


S = "java/lang/String"


def _enc(frames: list[Frame], init: list, pool: ConstantPool) -> bytes:
    data = encode_stack_map(frames, init, pool)
    assert decode_stack_map(data, init, pool) == [Frame(f.offset, expand(compress(f.locals)), f.stack)
                                                  for f in frames]
    return data


def test_encoder_picks_the_compact_kinds():
    pool = _pool_with(S)
    s = pool.add_class(S).to_bytes(2, "big")
    init = [I, J, TOP]
    body = lambda n, b: n.to_bytes(2, "big") + b  # noqa: E731
    # same / same_frame_extended: the first frame's delta is its offset, later ones offset - prev - 1
    assert _enc([Frame(0, init, [])], init, pool) == body(1, b"\x00")
    assert _enc([Frame(63, init, [])], init, pool) == body(1, b"\x3f")
    assert _enc([Frame(64, init, [])], init, pool) == body(1, b"\xfb\x00\x40")
    assert _enc([Frame(5, init, []), Frame(69, init, [])], init, pool) == body(2, b"\x05\x3f")
    assert _enc([Frame(5, init, []), Frame(70, init, [])], init, pool) == body(2, b"\x05\xfb\x00\x40")
    # same_locals_1_stack_item(_extended), a long on the stack counting as one item
    assert _enc([Frame(9, init, [S])], init, pool) == body(1, b"\x49\x07" + s)
    assert _enc([Frame(2, init, [LONG, TOP])], init, pool) == body(1, b"\x42\x04")
    assert _enc([Frame(300, init, [NULL])], init, pool) == body(1, b"\xf7\x01\x2c\x05")
    # chop 1..3 (a long is one verification type), chop 4 needs a full frame
    big = [I, J, TOP, S, D, TOP, FLOAT]
    assert _enc([Frame(4, big[:6], [])], big, pool) == body(1, b"\xfa\x00\x04")
    assert _enc([Frame(4, big[:4], [])], big, pool) == body(1, b"\xf9\x00\x04")
    assert _enc([Frame(4, big[:3], [])], big, pool) == body(1, b"\xf8\x00\x04")
    assert _enc([Frame(4, big[:1], [])], big, pool) == body(1, b"\xff\x00\x04\x00\x01\x01\x00\x00")
    # append 1..3, append 4 needs a full frame
    assert _enc([Frame(1, init + [S], [])], init, pool) == body(1, b"\xfc\x00\x01\x07" + s)
    assert _enc([Frame(1, init + [D, TOP, NULL], [])], init, pool) == body(1, b"\xfd\x00\x01\x03\x05")
    assert _enc([Frame(1, init + [TOP, I, FLOAT], [])], init, pool) == body(1, b"\xfe\x00\x01\x00\x01\x02")
    assert _enc([Frame(1, init + [I, I, I, I], [])], init, pool) == body(
        1, b"\xff\x00\x01\x00\x06\x01\x04\x01\x01\x01\x01\x00\x00")
    # a changed local, two stack items, or one stack item with other locals: full frames
    assert _enc([Frame(7, [I, D, TOP], [])], init, pool) == body(1, b"\xff\x00\x07\x00\x02\x01\x03\x00\x00")
    assert _enc([Frame(7, init, [I, I])], init, pool) == body(1, b"\xff\x00\x07\x00\x02\x01\x04\x00\x02\x01\x01")
    assert _enc([Frame(7, [I], [S])], init, pool) == body(1, b"\xff\x00\x07\x00\x01\x01\x00\x01\x07" + s)
    assert _enc([Frame(7, init + [S], [S])], init, pool) == body(
        1, b"\xff\x00\x07\x00\x03\x01\x04\x07" + s + b"\x00\x01\x07" + s)
    # uninitialized types in a full frame
    assert _enc([Frame(10, [UNINIT_THIS], [UNINIT_THIS, -4])], [UNINIT_THIS], pool) == body(
        1, b"\xff\x00\x0a\x00\x01\x06\x00\x02\x06\x08\x00\x03")
    # trailing tops are not locals: [int, long, top, top] is the initial frame again, and chop works after them
    assert _enc([Frame(3, init + [TOP, TOP], []), Frame(5, [I], [])], init, pool) == body(2, b"\x03\xfa\x00\x01")
    # each frame is relative to the previous one, not to the initial frame
    assert _enc([Frame(2, init + [S], []), Frame(4, init + [S], [I]), Frame(6, init, [])], init, pool) == body(
        3, b"\xfc\x00\x02\x07" + s + b"\x41\x01" + b"\xfa\x00\x01")


def test_encoder_refuses_a_return_address():
    with pytest.raises(UnsupportedCodeError):
        encode_stack_map([Frame(3, [RETADDR], [])], [], ConstantPool())


# ------------------------------------------------------------------------------------------ computation

def test_computed_frame_offsets_equal_javacs(method_set):
    """Frames exactly where javac put them: branch targets, handlers, code after unconditional jumps."""
    methods, h = method_set
    differences = []
    for m in methods:
        ours = [f.offset for f in m.compute(h).frames]
        theirs = [f.offset for f in m.javac_frames()]
        if ours != theirs:
            differences.append((m.where, ours, theirs))
    assert differences == []


def test_computed_frames_are_at_least_as_precise_as_javacs(method_set):
    methods, h = method_set
    problems = []
    compared = 0
    for m in methods:
        ours = m.compute(h).frames
        for o, j in zip(ours, m.javac_frames()):
            assert o.offset == j.offset, m.where
            bad = imprecisions(o, j, h)
            if bad:
                problems.append(f"{m.where} @{o.offset}: {bad}")
            compared += 1
    assert problems == []
    assert compared > 50


def test_computed_frames_encode_and_decode_back(method_set):
    """What recode writes (encode of the computed frames) decodes to the computed frames."""
    methods, h = method_set
    for m in methods:
        frames = m.compute(h).frames
        data = encode_stack_map(frames, m.init, m.cf.pool)
        assert decode_stack_map(data, m.init, m.cf.pool) == frames, m.where


def test_jdk_computed_frames(jdk_methods, jdk_hierarchy):
    """JDK code: our frames sit at javac's offsets (javac sometimes adds frames we do not need, e.g. at dead
    labels, so ours are a subset), are at least as precise, and max_stack is javac's."""
    problems = []
    frames = 0
    for m in jdk_methods:
        c = m.compute(jdk_hierarchy)
        theirs = {f.offset: f for f in m.javac_frames()}
        for o in c.frames:
            if o.offset not in theirs:
                problems.append(f"{m.where}: frame at {o.offset}, javac has none")
                continue
            bad = imprecisions(o, theirs[o.offset], jdk_hierarchy)
            if bad:
                problems.append(f"{m.where} @{o.offset}: {bad}")
            frames += 1
        if c.max_stack != m.code.max_stack:
            problems.append(f"{m.where}: max_stack {c.max_stack}, javac {m.code.max_stack}")
        if c.max_locals > m.code.max_locals:
            problems.append(f"{m.where}: max_locals {c.max_locals} > javac's {m.code.max_locals}")
    assert problems == []
    assert frames > 5000


# javac's max_locals counts a declared variable's slot even when the code never stores into it; ours counts
# only slots the code uses. List such methods here, with the reason, as "where": (ours, javac's).
MAX_LOCALS_EXCEPTIONS: dict[str, tuple[int, int]] = {}


def test_max_stack_and_max_locals_equal_javacs(method_set):
    methods, h = method_set
    differences = []
    for m in methods:
        c = m.compute(h)
        if c.max_stack != m.code.max_stack:
            differences.append(f"{m.where}: max_stack {c.max_stack}, javac {m.code.max_stack}")
        if c.max_locals != m.code.max_locals and MAX_LOCALS_EXCEPTIONS.get(m.where) != (
                c.max_locals, m.code.max_locals):
            differences.append(f"{m.where}: max_locals {c.max_locals}, javac {m.code.max_locals}")
    assert differences == []


# -- exact shapes -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def computed17(shape_methods, shapes):
    """name+descriptor -> (Method, computed frames) for FrameShapes compiled at release 17."""
    h = ClassHierarchy([shapes["release17"]])
    return {(m.method.name, m.method.descriptor): (m, m.compute(h)) for m in shape_methods["release17"]
            if m.cf.name == SHAPES}


def test_uninitialized_objects_on_the_stack(computed17):
    """new Box(c ? k : 2): at the join both copies of the new object are uninitialized(offset of the new)."""
    m, c = computed17[("newWithTernary", "(Z)LFrameShapes$Box;")]
    new = first(m.insns, op.NEW)
    assert new.offset == 3  # after `int k = 7` (bipush, istore_1): a nonzero offset is a real check
    u = -new.offset - 1
    branch = first(m.insns, op.IFEQ)
    else_frame = frame_at(c.frames, branch.arg)
    assert else_frame.stack == [u, u]
    assert else_frame.locals == [INTEGER, INTEGER]
    join = frame_at(c.frames, first(m.insns, op.GOTO).arg)
    assert join.stack == [u, u, INTEGER]
    assert [type_name(t) for t in join.stack] == ["uninitialized(3)", "uninitialized(3)", "int"]
    assert join.describe() == "locals=[int, int] stack=[uninitialized(3), uninitialized(3), int]"


def test_uninitialized_this_in_a_constructor(computed17):
    """FrameShapes(boolean b) { this(b ? 1 : 2, ...); }: uninitializedThis in the locals and on the stack."""
    m, c = computed17[("<init>", "(Z)V")]
    assert [(f.offset, f.locals, f.stack) for f in c.frames] == [
        (9, [UNINIT_THIS, INTEGER], [UNINIT_THIS]),
        (10, [UNINIT_THIS, INTEGER], [UNINIT_THIS, INTEGER]),
    ]
    # after super(), `this` is the class in every later frame
    m, c = computed17[("<init>", "(IJD)V")]
    assert [f.locals for f in c.frames] == [[SHAPES, INTEGER, LONG, TOP, DOUBLE, TOP]] * 2
    assert all(f.stack == [] for f in c.frames)


def test_long_and_double_locals_take_two_words(computed17):
    m, c = computed17[("longsAndDoubles", "(JDI)J")]
    words = [f.locals for f in c.frames]
    assert words == [[LONG, TOP, DOUBLE, TOP, INTEGER, LONG, TOP, INTEGER],
                     [LONG, TOP, DOUBLE, TOP, INTEGER, LONG, TOP, INTEGER],
                     [LONG, TOP, DOUBLE, TOP, INTEGER, LONG, TOP, DOUBLE, TOP]]
    # at the loop exit javac chops i; ours still knows it is an int (more precise, and just as valid)
    assert [compress(w) for w in words] == [[LONG, DOUBLE, INTEGER, LONG, INTEGER],
                                           [LONG, DOUBLE, INTEGER, LONG, INTEGER],
                                           [LONG, DOUBLE, INTEGER, LONG, DOUBLE]]
    # `double d` reuses slots 7-8 where `int i` was: slot 8 is the double's second word
    assert c.max_locals == 9
    m, c = computed17[("instanceLongs", "(JD)J")]
    assert [f.locals for f in c.frames] == [[SHAPES, LONG, TOP, DOUBLE, TOP, LONG, TOP]]


def test_handler_frame_merges_the_locals_over_the_protected_range(computed17):
    """l is an ArrayList before the try and a LinkedList inside it: the handler sees AbstractList; the
    variables declared inside the range (int t, String u) are unset before it, so the handler has no
    entry for them; the stack is exactly the caught class."""
    m, c = computed17[("handlerMergesLocals", "(I)I")]
    (row,) = m.code.exception_table
    assert m.cf.pool.class_name(row.catch_type) == "java/lang/RuntimeException"
    h = frame_at(c.frames, row.handler)
    assert h.stack == ["java/lang/RuntimeException"]
    assert h.locals == [INTEGER, "java/util/AbstractList"]


def test_multi_catch_handler_stack_is_the_merge_of_the_caught_classes(computed17):
    m, c = computed17[("multiCatch", "(I)Ljava/lang/String;")]
    rows = m.code.exception_table
    handlers: dict[int, list[str]] = {}
    for r in rows:
        handlers.setdefault(r.handler, []).append(m.cf.pool.class_name(r.catch_type))
    multi = next(h for h, types in handlers.items() if len(types) == 2)
    assert sorted(handlers[multi]) == ["java/lang/IllegalArgumentException", "java/lang/IllegalStateException"]
    assert frame_at(c.frames, multi).stack == ["java/lang/RuntimeException"]
    single = next(h for h, types in handlers.items() if types == ["java/io/IOException"])
    assert frame_at(c.frames, single).stack == ["java/io/IOException"]
    assert frame_at(c.frames, single).locals == [INTEGER]


def test_catch_any_handler_catches_throwable(computed17):
    m, c = computed17[("withFinally", "(I)I")]
    any_rows = [r for r in m.code.exception_table if r.catch_type == 0]
    assert any_rows
    for r in any_rows:
        assert frame_at(c.frames, r.handler).stack == ["java/lang/Throwable"]


@pytest.mark.parametrize("name, expected", [
    ("mergeLists", "java/util/AbstractList"),  # ArrayList vs LinkedList
    ("mergeCharSequences", OBJ),  # String vs StringBuilder, typed CharSequence: interfaces merge to Object
    ("mergeObjectArrays", "[Ljava/lang/Object;"),  # String[] vs Integer[]
    ("mergeListArrays", "[Ljava/util/AbstractList;"),  # ArrayList[] vs LinkedList[]: component-wise
    ("mergePrimitiveArrays", OBJ),  # int[] vs long[]
    ("mergeArraysOfArrays", "[Ljava/lang/Object;"),  # int[][] vs String[][]
    ("mergeNull", "java/lang/String"),  # null vs String
])
def test_reference_merges(computed17, name, expected):
    """if (c) x = A; else x = B; -> at the join (the target of the if's goto) local 1 is exactly lub(A, B)."""
    m, c = computed17[(name, "(Z)I")]
    join = frame_at(c.frames, first(m.insns, op.GOTO).arg)
    assert join.locals == [INTEGER, expected]
    assert join.stack == []


def test_loop_carried_local_null_then_string(computed17):
    """Object s = null; for (...) { ...; s = String.valueOf(i); }: at the loop head s is a String (the null
    of the first entry merged with the String of the back edge, not just the first state)."""
    m, c = computed17[("loopCarried", "(I)I")]
    head = frame_at(c.frames, first(m.insns, op.GOTO).arg)
    assert head.locals == [INTEGER, "java/lang/String", INTEGER]
    # the frame inside the loop body (target of ifnull) sees it too
    inside = frame_at(c.frames, first(m.insns, op.IFNULL).arg)
    assert inside.locals == [INTEGER, "java/lang/String", INTEGER]


# -- hand-built code --------------------------------------------------------------------------------------

def _compute(items: list, handlers: list[Handler] | None = None, pool: ConstantPool | None = None,
             descriptor: str = "()V", is_static: bool = True, hierarchy: ClassHierarchy | None = None,
             need_frames: bool = True) -> tuple[ComputedFrames, dict]:
    a = assemble(items, handlers or [])
    c = compute_frames(a.instructions, a.exception_table, pool or ConstantPool(), "t/T", "m", descriptor,
                       is_static, hierarchy, need_frames=need_frames)
    return c, a.offsets


def test_unreachable_code_needing_a_frame_is_unsupported():
    """goto L; iconst_0; pop; L: return -- the iconst_0 follows an unconditional jump, so it needs a frame,
    and nothing reaches it to give it one."""
    lab = Label("L")
    items = [Insn(op.GOTO, target=lab), Insn(op.ICONST_0), Insn(op.POP), lab, Insn(op.RETURN)]
    with pytest.raises(UnsupportedCodeError, match="unreachable code at offset 3"):
        _compute(items, hierarchy=ClassHierarchy(use_jdk=False))
    # reachable, the same shape is fine and has frames at 3 and 5
    lab2, lab3 = Label(), Label()
    items = [Insn(op.ILOAD, 0), Insn(op.IFEQ, target=lab2), Insn(op.GOTO, target=lab3), lab2, Insn(op.ICONST_0),
             Insn(op.POP), lab3, Insn(op.RETURN)]
    c, offsets = _compute(items, descriptor="(I)V", hierarchy=ClassHierarchy(use_jdk=False))
    assert [f.offset for f in c.frames] == [offsets[lab2], offsets[lab3]] == [7, 9]
    assert (c.max_stack, c.max_locals) == (1, 1)


def test_lenient_mode_computes_max_stack_for_jsr_ret_code():
    """need_frames=False (old code with subroutines, no hierarchy needed): no frames, and the maxes count the
    return address jsr pushes."""
    sub = Label("SUB")
    # depth: 2 ints; jsr -> 3 at the subroutine entry; astore -> 2; two longs -> 6; ret resumes after the jsr
    items = [Insn(op.ICONST_1), Insn(op.ICONST_2), Insn(op.JSR, target=sub), Insn(op.POP2), Insn(op.RETURN),
             sub, Insn(op.ASTORE, 1), Insn(op.LCONST_0), Insn(op.LCONST_1), Insn(op.POP2), Insn(op.POP2),
             Insn(op.RET, 1)]
    c, _ = _compute(items, need_frames=False)
    assert c.frames == []
    assert (c.max_stack, c.max_locals) == (6, 2)
    # a subroutine that only stores its return address: the jsr's pushed word is still counted
    sub = Label("SUB")
    items = [Insn(op.JSR, target=sub), Insn(op.RETURN), sub, Insn(op.ASTORE, 3), Insn(op.RET, 3)]
    c, _ = _compute(items, need_frames=False)
    assert (c.max_stack, c.max_locals) == (1, 4)
    # with frames required, jsr is refused
    with pytest.raises(UnsupportedCodeError, match="jsr"):
        _compute(items, hierarchy=ClassHierarchy(use_jdk=False))


def _merge_code(pool: ConstantPool, a: str, b: str) -> list:
    """if (arg0) push (A) null else push (B) null; join: astore_1; return."""
    other, join = Label("B"), Label("JOIN")
    return [Insn(op.ILOAD, 0), Insn(op.IFEQ, target=other),
            Insn(op.ACONST_NULL), Insn(op.CHECKCAST, pool.add_class(a)), Insn(op.GOTO, target=join),
            other, Insn(op.ACONST_NULL), Insn(op.CHECKCAST, pool.add_class(b)),
            join, Insn(op.ASTORE, 1), Insn(op.RETURN)]


def test_merge_with_an_unknown_superclass_raises_unknown_class_error():
    h = ClassHierarchy(use_jdk=True)
    h.add_info(ClassInfo("u/A", "u/Missing", (), False))
    h.add_info(ClassInfo("u/B", "u/Missing", (), False))
    pool = ConstantPool()
    with pytest.raises(UnknownClassError, match="u/Missing"):
        _compute(_merge_code(pool, "u/A", "u/B"), pool=pool, descriptor="(Z)V", hierarchy=h)
    # once the missing class is known, the same code merges to it
    h.add_info(ClassInfo("u/Missing", OBJ, (), False))
    c, _ = _compute(_merge_code(pool, "u/A", "u/B"), pool=pool, descriptor="(Z)V", hierarchy=h)
    assert c.frames[-1].stack == ["u/Missing"]


@pytest.mark.parametrize("a, b, expected", [
    ("java/util/ArrayList", "java/util/LinkedList", "java/util/AbstractList"),
    ("java/lang/String", "java/lang/CharSequence", OBJ),
    ("java/util/List", "java/util/Set", OBJ),
    ("[Ljava/lang/String;", "[Ljava/lang/Integer;", "[Ljava/lang/Object;"),
    ("[[Ljava/util/ArrayList;", "[[Ljava/util/LinkedList;", "[[Ljava/util/AbstractList;"),
    ("[I", "[J", OBJ),
    ("[I", "[I", "[I"),
    ("[[I", "[Ljava/lang/String;", "[Ljava/lang/Object;"),
    ("[[I", "[[Ljava/lang/String;", "[Ljava/lang/Object;"),  # int[] vs String[] -> Object, so Object[]
    ("[[I", "[[J", "[Ljava/lang/Object;"),
    ("[Ljava/lang/String;", "java/lang/String", OBJ),
    ("[I", "java/lang/Cloneable", OBJ),
    ("java/lang/Integer", "java/lang/Long", "java/lang/Number"),
])
def test_merge_table(a, b, expected):
    """The join of two checkcast types, exactly (both orders)."""
    for x, y in ((a, b), (b, a)):
        pool = ConstantPool()
        c, _ = _compute(_merge_code(pool, x, y), pool=pool, descriptor="(Z)V", hierarchy=ClassHierarchy())
        assert c.frames[-1].stack == [expected], (x, y)


def test_merge_of_a_class_and_null_keeps_the_class():
    pool = ConstantPool()
    other, join = Label(), Label()
    items = [Insn(op.ILOAD, 0), Insn(op.IFEQ, target=other), Insn(op.ACONST_NULL), Insn(op.GOTO, target=join),
             other, Insn(op.ACONST_NULL), Insn(op.CHECKCAST, pool.add_class("java/util/Map")),
             join, Insn(op.ASTORE, 1), Insn(op.RETURN)]
    # no hierarchy at all: merging with null never needs one
    c, _ = _compute(items, pool=pool, descriptor="(Z)V", hierarchy=None)
    assert c.frames[-1].stack == ["java/util/Map"]


def test_incompatible_stack_types_at_a_join_are_unsupported():
    other, join = Label(), Label()
    items = [Insn(op.ILOAD, 0), Insn(op.IFEQ, target=other), Insn(op.ICONST_0), Insn(op.GOTO, target=join),
             other, Insn(op.FCONST_0), join, Insn(op.POP), Insn(op.RETURN)]
    with pytest.raises(UnsupportedCodeError, match="incompatible stack types"):
        _compute(items, descriptor="(Z)V", hierarchy=ClassHierarchy(use_jdk=False))
    # stack heights that differ
    items = [Insn(op.ILOAD, 0), Insn(op.IFEQ, target=other), Insn(op.ICONST_0), Insn(op.ICONST_0),
             Insn(op.GOTO, target=join), other, Insn(op.FCONST_0), join, Insn(op.POP), Insn(op.RETURN)]
    with pytest.raises(UnsupportedCodeError, match="stack heights"):
        _compute(items, descriptor="(Z)V", hierarchy=ClassHierarchy(use_jdk=False))


def test_falling_off_the_end_is_unsupported():
    with pytest.raises(UnsupportedCodeError, match="falls off the end"):
        _compute([Insn(op.ICONST_0), Insn(op.POP)], hierarchy=ClassHierarchy(use_jdk=False))


@pytest.mark.parametrize("need_frames", [True, False])
def test_handler_entry_counts_toward_max_stack(need_frames):
    """try { work(); } catch (RuntimeException e) {}: nothing but the caught exception is ever on the stack,
    and the handler stores it at once. The verifier pushes it on entry, so max_stack must be 1 (javac: 1;
    HotSpot rejects 0 with "StackMapTable format error: bad type array size")."""
    pool = ConstantPool()
    work = pool.add_member_ref(10, "t/T", "work", "()V")
    start, end, handler, done = Label(), Label(), Label(), Label()
    items = [start, Insn(op.INVOKESTATIC, work), end, Insn(op.GOTO, target=done),
             handler, Insn(op.ASTORE, 0), done, Insn(op.RETURN)]
    rows = [Handler(start, end, handler, pool.add_class("java/lang/RuntimeException"))]
    c, offsets = _compute(items, rows, pool=pool, hierarchy=ClassHierarchy(use_jdk=False),
                          need_frames=need_frames)
    if need_frames:
        assert frame_at(c.frames, offsets[handler]).stack == ["java/lang/RuntimeException"]
    assert c.max_locals == 1
    assert c.max_stack == 1


def _underflow_cases() -> list:
    pool = ConstantPool()
    field = pool.add_member_ref(9, "t/T", "f", "I")
    cls = pool.add_class("java/lang/String")
    arr = pool.add_class("[[I")
    i0 = Insn(op.ICONST_0)
    return [
        pytest.param([Insn(op.POP)], pool, id="pop-on-empty"),
        pytest.param([Insn(op.DUP)], pool, id="dup-on-empty"),
        pytest.param([i0, Insn(op.SWAP)], pool, id="swap-on-1"),
        pytest.param([i0, Insn(op.IADD)], pool, id="iadd-on-1"),
        pytest.param([i0, Insn(op.DUP_X1)], pool, id="dup_x1-on-1"),
        pytest.param([i0, Insn(op.ICONST_0), Insn(op.DUP_X2)], pool, id="dup_x2-on-2"),
        pytest.param([i0, Insn(op.DUP2)], pool, id="dup2-on-1"),
        pytest.param([i0, Insn(op.ICONST_0), Insn(op.DUP2_X1)], pool, id="dup2_x1-on-2"),
        pytest.param([i0, Insn(op.ICONST_0), Insn(op.ICONST_0), Insn(op.DUP2_X2)], pool, id="dup2_x2-on-3"),
        pytest.param([Insn(op.CHECKCAST, cls)], pool, id="checkcast-on-empty"),
        pytest.param([Insn(op.GETFIELD, field)], pool, id="getfield-on-empty"),
        pytest.param([Insn(op.PUTSTATIC, field)], pool, id="putstatic-on-empty"),
        pytest.param([Insn(op.NEWARRAY, 10)], pool, id="newarray-on-empty"),
        pytest.param([i0, Insn(op.MULTIANEWARRAY, arr, 2)], pool, id="multianewarray-2-on-1"),
        pytest.param([i0, Insn(op.AALOAD)], pool, id="aaload-on-1"),
    ]


@pytest.mark.parametrize("body, pool", _underflow_cases())
def test_stack_underflow_is_unsupported_code(body, pool):
    """Code that pops more than the stack holds cannot be typed: UnsupportedCodeError (the method is kept
    unchanged), never a silently wrong stack and never an IndexError."""
    with pytest.raises(UnsupportedCodeError):
        _compute([*body, Insn(op.RETURN)], pool=pool, hierarchy=ClassHierarchy(use_jdk=False))


# ------------------------------------------------------------------------------------------ HotSpot

def _recode_directory(src: Path, dst: Path, only: set[str] | None = None) -> dict[str, bytes]:
    """Replace every method's Code attribute (so its StackMapTable and maxes) by recode_method's."""
    h = ClassHierarchy([src])
    written = {}
    for p in sorted(src.glob("*.class")):
        cf = read_class(p.read_bytes())
        if only is None or cf.name in only:
            for m in cf.methods:
                a = m.code_attribute()
                if a is None:
                    continue
                code = read_code(a.data, cf.pool)
                result = recode_method(cf, m, code, read_instructions(code), h)
                m.attributes[m.attributes.index(a)] = Attribute(a.name_index, "Code", result.data)
        data = write_class(cf)
        (dst / p.name).write_bytes(data)
        written[cf.name] = data
    return written


def _run(java_home: Path, cp: Path, main: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(java_home / "bin" / "java"), "-Xverify:all", "-cp", str(cp), main],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


@pytest.mark.parametrize("release", list(RELEASES))
def test_hotspot_runs_frame_shapes_with_computed_frames(java_home, verifier, shapes, tmp_path, release):
    src = shapes[release]
    before = _run(java_home, src, SHAPES)
    assert before.returncode == 0, before.stderr
    assert len(before.stdout.splitlines()) > 20
    written = _recode_directory(src, tmp_path, {SHAPES, "FrameShapes$Box"})
    # the computed frames are not javac's: e.g. mergeLists now carries java/util/AbstractList
    cf = read_class(written[SHAPES])
    merge = find(methods_of(cf), "mergeLists")
    assert any("java/util/AbstractList" in f.locals for f in merge.javac_frames())
    after = _run(java_home, tmp_path, SHAPES)
    assert after.returncode == 0, after.stderr
    assert after.stdout == before.stdout
    assert after.stderr == before.stderr
    proc = verifier(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "verify_errors=0" in proc.stdout.splitlines()[-1]


@pytest.mark.parametrize("release", list(RELEASES))
def test_hotspot_runs_handler_only_with_computed_frames(java_home, shapes, tmp_path, release):
    """HandlerOnly.swallow(): the handler is the only stack user (see test_handler_entry_counts_toward_max_stack)."""
    src = shapes[release]
    before = _run(java_home, src, "HandlerOnly")
    assert before.returncode == 0, before.stderr
    _recode_directory(src, tmp_path, {"HandlerOnly"})
    after = _run(java_home, tmp_path, "HandlerOnly")
    assert after.returncode == 0, after.stderr
    assert after.stdout == before.stdout == "calls 3\n"
