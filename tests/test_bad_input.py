"""Bad input to ``peggy-jvm optimize`` (and ``disasm``): exit status 2, exactly one stderr line
``peggy-jvm: error: <file>: <what>`` naming the file (or ``jar!/entry``), no traceback, and no output (not even a
temporary file) left behind.

Explicit cases cover missing/empty files, truncation at many points of a real class, wrong magic, a bad
constant reference, absurd counts and lengths, invalid code (opcodes, branch and handler targets), broken jars
and a directory holding a bad class. A hypothesis test then mutates real fixture classes at random: each run
must either succeed (exit 0 with a class our reader parses) or be a clean bad-input error.
"""
from __future__ import annotations

import random
import shutil
import struct
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from peggy_jvm.classfile.bytecode import decode
from peggy_jvm.classfile.constpool import ConstantPool, encode_mutf8
from peggy_jvm.classfile.errors import ClassFileError
from peggy_jvm.classfile.model import CodeAttribute
from peggy_jvm.classfile.opcodes import OPERAND_OF, Operand
from peggy_jvm.classfile.reader import read_class, read_code
from peggy_jvm.cli import main

_SCRIPT = Path(sys.executable).parent / "peggy-jvm"
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "peggy_jvm.cli"]
PREFIX = "peggy-jvm: error: "


# -- where things are in a class file ------------------------------------------------------------------------
_FIXED_SIZE = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2,
               20: 2}


@dataclass
class AttrAt:
    name: str
    header: int  # offset of attribute_name_index; the u4 length follows
    data: int  # offset of the body
    length: int


@dataclass
class MethodAt:
    name: str
    descriptor: str
    attributes: list[AttrAt] = field(default_factory=list)

    def code(self) -> AttrAt | None:
        return next((a for a in self.attributes if a.name == "Code"), None)


@dataclass
class Layout:
    pool: ConstantPool
    constants: dict[int, int]  # constant index -> offset of its tag byte
    pool_end: int
    fields_count: int
    methods_count: int
    methods: list[MethodAt]
    class_attributes_count: int


def layout(data: bytes) -> Layout:
    """Byte offsets of the parts of a well-formed class file (walked by hand, checked against the reader)."""
    pool, pool_end = ConstantPool.parse(data, 8)
    constants, pos = {}, 10
    for i, e in pool:
        constants[i] = pos
        pos += 3 + len(encode_mutf8(e[1])) if e[0] == 1 else 1 + _FIXED_SIZE[e[0]]
    assert pos == pool_end
    icount = struct.unpack_from(">H", data, pool_end + 6)[0]
    pos = pool_end + 8 + 2 * icount
    counts, members = [], []
    for _ in ("fields", "methods"):
        counts.append(pos)
        n = struct.unpack_from(">H", data, pos)[0]
        pos += 2
        for _ in range(n):
            _, name, desc, acount = struct.unpack_from(">HHHH", data, pos)
            m = MethodAt(pool.utf8(name), pool.utf8(desc))
            pos += 8
            for _ in range(acount):
                aname, length = struct.unpack_from(">HI", data, pos)
                m.attributes.append(AttrAt(pool.utf8(aname), pos, pos + 6, length))
                pos += 6 + length
            members.append(m)
    methods = members[struct.unpack_from(">H", data, counts[0])[0]:]
    cf = read_class(data)
    assert [(m.name, m.descriptor) for m in methods] == [(m.name, m.descriptor) for m in cf.methods]
    return Layout(pool, constants, pool_end, counts[0], counts[1], methods, pos)


def patched(data: bytes, offset: int, new: bytes) -> bytes:
    return data[:offset] + new + data[offset + len(new):]


# -- running the command and checking the outcome -------------------------------------------------------------
def invoke(*args) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_clean_error(result: Result, names: str) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(PREFIX), lines[0]
    assert names in lines[0], (names, lines[0])
    return lines[0]


def assert_nothing_written(target: Path) -> None:
    assert not target.exists(), target
    if target.parent.exists():
        leftovers = [p.name for p in target.parent.iterdir() if p.name.startswith(f".{target.name}.")]
        assert leftovers == []


def check_bad(inp: Path, names: str, kind: str, tmp_path: Path) -> str:
    """Run optimize with ``-o`` and with the default output; both must fail cleanly and write nothing."""
    target = tmp_path / "out" / {"class": inp.name, "jar": "o.jar", "dir": "o"}[kind]
    line = assert_clean_error(invoke("optimize", inp, "-o", target, "--stage", "classfile"), names)
    assert_nothing_written(target)
    assert not target.parent.exists()
    before = sorted(p.name for p in inp.parent.iterdir()) if inp.parent.exists() else []
    assert_clean_error(invoke("optimize", inp, "--stage", "classfile"), names)
    after = sorted(p.name for p in inp.parent.iterdir()) if inp.parent.exists() else []
    assert after == before
    if kind == "class" and inp.exists():
        assert_clean_error(invoke("disasm", inp), str(inp))
    return line


@pytest.fixture(scope="module")
def originals(fixture_classes) -> dict[str, bytes]:
    """Bytes of the fixture classes used below (read once, immune to a concurrent rebuild)."""
    out = {}
    for name in ("IntArith", "Branches", "Exceptions", "Switches"):
        out[name] = (fixture_classes["release17"] / f"{name}.class").read_bytes()
    return out


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


# -- single class files --------------------------------------------------------------------------------------
def test_missing_file(tmp_path):
    inp = tmp_path / "in" / "Nope.class"
    line = check_bad(inp, str(inp), "class", tmp_path)
    assert "no such file" in line
    missing_dir = tmp_path / "no-such-dir"
    assert "no such file" in check_bad(missing_dir, str(missing_dir), "dir", tmp_path)


def test_empty_file(tmp_path):
    inp = write(tmp_path / "in" / "Empty.class", b"")
    assert "truncated" in check_bad(inp, str(inp), "class", tmp_path)


def test_wrong_magic(originals, tmp_path):
    inp = write(tmp_path / "in" / "IntArith.class", b"\xde\xad\xbe\xef" + originals["IntArith"][4:])
    assert "magic" in check_bad(inp, str(inp), "class", tmp_path).lower()


def _cut_points(data: bytes) -> dict[str, int]:
    lay = layout(data)
    utf8 = next(i for i, e in lay.pool if e[0] == 1 and len(e[1]) > 4)
    mref = next(i for i, e in lay.pool if e[0] == 10)
    code = next(m.code() for m in lay.methods if m.code() is not None and m.code().length > 40)
    return {
        "in the magic": 3,
        "in the version": 7,
        "in constant_pool_count": 9,
        "before the first constant": 10,
        "inside a Utf8 constant": lay.constants[utf8] + 5,
        "inside a Methodref": lay.constants[mref] + 2,
        "right after the constant pool": lay.pool_end + 3,
        "in the methods count": lay.methods_count + 1,
        "inside a method's code": code.data + 8 + 3,
        "inside a Code attribute's own attributes": code.data + code.length - 3,
        "inside the class attributes": len(data) - 3,
        "one byte short": len(data) - 1,
    }


@pytest.mark.parametrize("where", ["in the magic", "in the version", "in constant_pool_count",
                                   "before the first constant", "inside a Utf8 constant", "inside a Methodref",
                                   "right after the constant pool", "in the methods count",
                                   "inside a method's code", "inside a Code attribute's own attributes",
                                   "inside the class attributes", "one byte short"])
def test_truncated_class(originals, tmp_path, where):
    data = originals["IntArith"]
    cut = _cut_points(data)[where]
    inp = write(tmp_path / "in" / "IntArith.class", data[:cut])
    check_bad(inp, str(inp), "class", tmp_path)


def test_trailing_garbage(originals, tmp_path):
    inp = write(tmp_path / "in" / "IntArith.class", originals["IntArith"] + b"\x00junk")
    assert "trailing" in check_bad(inp, str(inp), "class", tmp_path)


def test_bad_constant_index(originals, tmp_path):
    data = originals["IntArith"]
    lay = layout(data)
    index = next(i for i, e in lay.pool if e[0] == 10)  # a Methodref: tag, class_index, name_and_type_index
    at = lay.constants[index] + 1
    assert struct.unpack_from(">H", data, at)[0] == lay.pool.entries[index][1]
    inp = write(tmp_path / "in" / "IntArith.class", patched(data, at, b"\xff\xff"))
    line = check_bad(inp, str(inp), "class", tmp_path)
    assert "65535" in line and f"#{index}" in line


@pytest.mark.parametrize("what", ["constant_pool_count", "methods_count", "fields_count", "attribute_length",
                                  "code_length", "exception_table_length"])
def test_absurd_counts(originals, tmp_path, what):
    data = originals["Exceptions"]
    lay = layout(data)
    code = next(m.code() for m in lay.methods if m.code() is not None)
    at, value = {
        "constant_pool_count": (8, b"\xff\xff"),
        "methods_count": (lay.methods_count, b"\xff\xff"),
        "fields_count": (lay.fields_count, b"\xff\xff"),
        "attribute_length": (lay.methods[0].attributes[0].header + 2, b"\x7f\xff\xff\xff"),
        "code_length": (code.data + 4, b"\x7f\xff\xff\xff"),
        "exception_table_length": (code.data + 8 + struct.unpack_from(">I", data, code.data + 4)[0],
                                   b"\xff\xff"),
    }[what]
    inp = write(tmp_path / "in" / "Exceptions.class", patched(data, at, value))
    check_bad(inp, str(inp), "class", tmp_path)


@pytest.mark.parametrize("opcode", [0xCB, 0xE4, 0xFE, 0xFF])
def test_invalid_opcode(originals, tmp_path, opcode):
    data = originals["IntArith"]
    lay = layout(data)
    method = next(m for m in lay.methods if m.code() is not None and m.name != "<init>")
    inp = write(tmp_path / "in" / "IntArith.class", patched(data, method.code().data + 8, bytes([opcode])))
    line = check_bad(inp, str(inp), "class", tmp_path)
    assert f"invalid opcode 0x{opcode:02x}" in line and method.name in line


def _code_of(data: bytes, lay: Layout, method: MethodAt) -> CodeAttribute:
    return read_code(data[method.code().data:method.code().data + method.code().length], lay.pool)


def test_branch_into_the_middle_of_an_instruction(originals, tmp_path):
    data = originals["Branches"]
    lay = layout(data)
    for method in (m for m in lay.methods if m.code() is not None):
        insns = decode(_code_of(data, lay, method).code)
        branch = next((i for i in insns if OPERAND_OF[i.opcode] is Operand.BRANCH2), None)
        wide = [i for i in insns if i.length >= 2]
        if branch is not None and wide:
            break
    else:
        raise AssertionError("no method with a branch")
    target = wide[0].offset + 1  # the second byte of an instruction
    at = method.code().data + 8 + branch.offset + 1
    inp = write(tmp_path / "in" / "Branches.class", patched(data, at, struct.pack(">h", target - branch.offset)))
    line = check_bad(inp, str(inp), "class", tmp_path)
    assert "not an instruction start" in line and method.name in line


def test_exception_handler_in_the_middle_of_an_instruction(originals, tmp_path):
    data = originals["Exceptions"]
    lay = layout(data)
    for method in (m for m in lay.methods if m.code() is not None):
        code = _code_of(data, lay, method)
        wide = [i for i in decode(code.code) if i.length >= 2]
        if code.exception_table and wide:
            break
    else:
        raise AssertionError("no method with a handler")
    at = method.code().data + 8 + len(code.code) + 2 + 4  # handler_pc of the first entry
    assert struct.unpack_from(">H", data, at)[0] == code.exception_table[0].handler
    inp = write(tmp_path / "in" / "Exceptions.class", patched(data, at, struct.pack(">H", wide[0].offset + 1)))
    line = check_bad(inp, str(inp), "class", tmp_path)
    assert "exception table" in line and method.name in line


def test_real_console_script_reports_bad_input_in_one_line(originals, tmp_path):
    inp = write(tmp_path / "in" / "IntArith.class", originals["IntArith"][:200])
    target = tmp_path / "out" / "IntArith.class"
    done = subprocess.run([*CLI, "optimize", str(inp), "-o", str(target), "--stage", "classfile"],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert done.returncode == 2
    assert done.stderr.startswith(PREFIX + str(inp) + ": ") and done.stderr.count("\n") == 1, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert_nothing_written(target)


# -- jars and directories ------------------------------------------------------------------------------------
def _jar(path: Path, entries: dict[str, bytes], compress=zipfile.ZIP_DEFLATED) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=compress) as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
        for name, data in entries.items():
            z.writestr(name, data)
    return path


def test_jar_that_is_not_a_zip(tmp_path):
    inp = write(tmp_path / "in" / "garbage.jar", b"this is not a zip file\n" * 20)
    assert "not a valid jar" in check_bad(inp, str(inp), "jar", tmp_path)
    inp = write(tmp_path / "in" / "pk.jar", b"PK\x03\x04" + b"\x00" * 40)
    check_bad(inp, str(inp), "jar", tmp_path)


def test_jar_with_a_corrupted_entry(originals, tmp_path):
    text = "".join(f"line {k}: {k * k % 977}\n" for k in range(3000)).encode()
    inp = _jar(tmp_path / "in" / "app.jar", {"IntArith.class": originals["IntArith"], "res/big.txt": text})
    data = bytearray(inp.read_bytes())
    with zipfile.ZipFile(inp) as z:
        info = z.getinfo("res/big.txt")
    assert info.compress_type == zipfile.ZIP_DEFLATED
    name_len, extra_len = struct.unpack_from("<HH", data, info.header_offset + 26)
    start = info.header_offset + 30 + name_len + extra_len
    for k in range(start + info.compress_size // 2, start + info.compress_size // 2 + 4):
        data[k] ^= 0x5A
    inp.write_bytes(data)
    line = check_bad(inp, f"{inp}!/res/big.txt", "jar", tmp_path)
    assert "broken jar entry" in line


def test_jar_containing_a_truncated_class(originals, tmp_path):
    inp = _jar(tmp_path / "in" / "app.jar", {"IntArith.class": originals["IntArith"],
                                             "pkg/Switches.class": originals["Switches"][:500]})
    check_bad(inp, f"{inp}!/pkg/Switches.class", "jar", tmp_path)


def _patch_central(path: Path, offset: int, value: bytes) -> None:
    """Patch a field of every central-directory record (offset from the record's signature)."""
    data = bytearray(path.read_bytes())
    k = data.find(b"PK\x01\x02")
    assert k > 0
    while k >= 0:
        data[k + offset:k + offset + len(value)] = value
        k = data.find(b"PK\x01\x02", k + 4)
    path.write_bytes(data)


def test_jar_with_an_encrypted_entry(originals, tmp_path):
    inp = _jar(tmp_path / "in" / "app.jar", {"IntArith.class": originals["IntArith"]})
    _patch_central(inp, 8, b"\x01\x00")  # general purpose flag bit 0: encrypted
    assert "app.jar" in check_bad(inp, str(inp), "jar", tmp_path)


def test_jar_needing_an_unknown_zip_version(originals, tmp_path):
    inp = _jar(tmp_path / "in" / "app.jar", {"IntArith.class": originals["IntArith"]})
    _patch_central(inp, 6, b"\xff")  # version needed to extract: 25.5
    assert "not a valid jar" in check_bad(inp, str(inp), "jar", tmp_path)


def test_jar_with_an_entry_without_a_name(originals, tmp_path):
    inp = tmp_path / "in" / "app.jar"
    inp.parent.mkdir(parents=True)
    with zipfile.ZipFile(inp, "w") as z:
        z.writestr("IntArith.class", originals["IntArith"])
        z.writestr(zipfile.ZipInfo(""), b"nameless")
    assert "empty name" in check_bad(inp, str(inp), "jar", tmp_path)


def test_directory_containing_a_bad_class(originals, tmp_path):
    d = tmp_path / "in" / "classes"
    write(d / "IntArith.class", originals["IntArith"])
    write(d / "pkg" / "Branches.class", originals["Branches"][:-7])
    write(d / "readme.txt", b"hello")
    check_bad(d, str(d / "pkg" / "Branches.class"), "dir", tmp_path)


def test_directory_with_a_class_of_bad_code(originals, tmp_path):
    data = originals["IntArith"]
    lay = layout(data)
    method = next(m for m in lay.methods if m.code() is not None)
    d = tmp_path / "in" / "classes"
    write(d / "IntArith.class", patched(data, method.code().data + 8, b"\xcb"))
    write(d / "Switches.class", originals["Switches"])
    line = check_bad(d, str(d / "IntArith.class"), "dir", tmp_path)
    assert "invalid opcode" in line


# -- random mutations of real classes ------------------------------------------------------------------------
@dataclass(frozen=True)
class Sample:
    name: str
    data: bytes
    code_ranges: tuple[tuple[int, int], ...]  # [start, end) of each Code attribute's body


@pytest.fixture(scope="module")
def samples(fixture_classes) -> list[Sample]:
    out = []
    for tree in ("release17", "release8"):
        for p in sorted(fixture_classes[tree].glob("*.class")):
            data = p.read_bytes()
            if len(data) > 16000:  # keep each run fast (BigMethod)
                continue
            lay = layout(data)
            ranges = tuple((m.code().data, m.code().data + m.code().length) for m in lay.methods if m.code())
            out.append(Sample(p.name, data, ranges))
    assert len(out) > 50
    return out


_pos = st.integers(0, 1 << 20)
_IN_CODE = st.tuples(st.just("code"), _pos, st.integers(0, 255))  # a byte inside some method's Code attribute
MUTATION = st.one_of(  # in-code changes weigh double: most other changes break the class outright
    _IN_CODE,
    _IN_CODE,
    st.tuples(st.just("flip"), _pos, st.integers(0, 7)),
    st.tuples(st.just("truncate"), _pos),
    st.tuples(st.just("insert"), _pos, st.binary(min_size=1, max_size=12)),
    st.tuples(st.just("delete"), _pos, st.integers(1, 24)),
    st.tuples(st.just("u2"), _pos, st.sampled_from([b"\x00\x00", b"\xff\xff"])),
)


def mutate(sample: Sample, mutations: list[tuple]) -> bytes:
    data = bytearray(sample.data)
    for m in mutations:
        if not data:
            break
        kind, pos = m[0], m[1] % len(data)
        if kind == "flip":
            data[pos] ^= 1 << m[2]
        elif kind == "truncate":
            del data[pos:]
        elif kind == "insert":
            data[pos:pos] = m[2]
        elif kind == "delete":
            del data[pos:pos + m[2]]
        elif kind == "u2":
            data[pos:pos + 2] = m[2]
        elif sample.code_ranges:  # code: offsets of the unmutated sample, clamped to the current length
            start, end = sample.code_ranges[m[1] % len(sample.code_ranges)]
            at = start + (m[1] >> 8) % (end - start)
            if at < len(data):
                data[at] = m[2]
    return bytes(data)


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_random_mutations_exit_0_or_2_and_never_crash(samples, tmp_path_factory, data):
    sample = data.draw(st.sampled_from(samples), label="class")
    mutations = data.draw(st.lists(MUTATION, min_size=1, max_size=3), label="mutations")
    mutated = mutate(sample, mutations)
    work = tmp_path_factory.mktemp("mutant")
    inp = write(work / "in" / sample.name, mutated)
    target = work / "out" / sample.name
    result = invoke("optimize", inp, "-o", target, "--stage", "classfile")
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 2), (result.exit_code, result.output)
    assert "Traceback" not in result.output
    if result.exit_code == 0:
        read_class(target.read_bytes())  # the output must be a class our reader parses
    else:
        assert_clean_error(result, str(inp))
        assert_nothing_written(target)
    shutil.rmtree(work)


def test_the_mutation_layout_helper_matches_the_reader(samples):
    """The offsets used above really point at Code bodies (guards the test itself)."""
    for s in samples[:10]:
        cf = read_class(s.data)
        bodies = [m.code_attribute().data for m in cf.methods if m.code_attribute() is not None]
        assert [s.data[a:b] for a, b in s.code_ranges] == bodies
        with pytest.raises(ClassFileError):
            read_class(s.data[:-1])


def _random_mutation(rng: random.Random) -> tuple:
    pos = rng.randrange(1 << 20)
    return rng.choice([("flip", pos, rng.randrange(8)), ("truncate", pos), ("delete", pos, rng.randint(1, 24)),
                       ("u2", pos, rng.choice([b"\x00\x00", b"\xff\xff"])), ("code", pos, rng.randrange(256))])


def test_disasm_of_random_mutations_never_crashes(samples, tmp_path):
    """A cheaper deterministic sweep over ``disasm``, which reads classes on its own path."""
    rng = random.Random(20240601)
    for k in range(150):
        s = samples[rng.randrange(len(samples))]
        inp = write(tmp_path / f"m{k}" / s.name, mutate(s, [_random_mutation(rng) for _ in range(2)]))
        result = invoke("disasm", inp)
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        assert result.exit_code in (0, 2), result.output
        if result.exit_code == 2:
            assert_clean_error(result, str(inp))
