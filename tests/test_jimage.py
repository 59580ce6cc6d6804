"""Tests for peggy_jvm.classfile.jimage against the installed JDK's runtime image.

The project requires a JDK: when none is found these tests fail, not skip.
"""
from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Iterator

import pytest

from peggy_jvm.classfile.jimage import (
    COMPRESSED_MAGIC,
    HASH_MULTIPLIER,
    IMAGE_MAGIC,
    ImageLocation,
    JImage,
    JImageError,
    default_image,
    find_java_home,
    jimage_hash,
)

# (module, internal class name) pairs compared byte-for-byte with `jimage extract`.
REFERENCE_CLASSES = [
    ("java.base", "java/lang/String"),
    ("java.base", "java/lang/Object"),
    ("java.base", "java/util/ArrayList"),
    ("java.base", "java/util/HashMap$Node"),
    ("java.sql", "java/sql/Connection"),
    ("java.desktop", "javax/swing/JButton"),
]

CAFEBABE = b"\xca\xfe\xba\xbe"


@pytest.fixture(scope="module")
def image_home() -> Path:
    home = find_java_home()
    if home is None:
        pytest.fail("no JDK found (JAVA_HOME, javac/java on PATH); peggy-jvm requires a JDK")
    return home


@pytest.fixture(scope="module")
def modules_path(image_home: Path) -> Path:
    return image_home / "lib" / "modules"


@pytest.fixture(scope="module")
def image(modules_path: Path) -> Iterator[JImage]:
    with JImage(modules_path) as img:
        yield img


@pytest.fixture(scope="module")
def extracted(
    image_home: Path, modules_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """REFERENCE_CLASSES extracted by the JDK's own `jimage` tool (one JVM start)."""
    tool = image_home / "bin" / "jimage"
    if not tool.is_file():
        found = shutil.which("jimage")
        if found is None:
            pytest.fail(f"no jimage tool in {image_home / 'bin'} or on PATH")
        tool = Path(found)
    out = tmp_path_factory.mktemp("jimage_extract")
    includes = ",".join(
        "regex:" + re.escape(f"/{module}/{name}.class") for module, name in REFERENCE_CLASSES
    )
    subprocess.run(
        [str(tool), "extract", "--dir", str(out), "--include", includes, str(modules_path)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return out


# --------------------------------------------------------------- real JDK image


def test_find_java_home(image_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert (image_home / "lib" / "modules").is_file()
    monkeypatch.setenv("JAVA_HOME", str(image_home))
    assert find_java_home() == image_home
    # A JAVA_HOME without a runtime image is ignored; javac on PATH is then
    # resolved through symlinks to <home>/bin/javac.
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    links = tmp_path / "links"
    links.mkdir()
    (links / "javac").symlink_to(image_home / "bin" / "javac")
    monkeypatch.setenv("PATH", str(links))
    assert find_java_home() == (image_home / "bin" / "javac").resolve().parent.parent
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_java_home() is None
    monkeypatch.delenv("JAVA_HOME")
    assert find_java_home() is None


def test_header(image: JImage, modules_path: Path) -> None:
    h = image.header
    assert h.major_version == 1
    assert h.table_length == h.resource_count > 20000
    assert h.index_size < modules_path.stat().st_size


@pytest.mark.parametrize(("module", "name"), REFERENCE_CLASSES)
def test_find_class_matches_jimage_extract(
    image: JImage, extracted: Path, module: str, name: str
) -> None:
    data = image.find_class(name)
    assert data is not None
    assert data[:4] == CAFEBABE
    assert data == (extracted / module / f"{name}.class").read_bytes()
    assert image.read(f"/{module}/{name}.class") == data
    assert image.module_of_package(name.rpartition("/")[0]) == module


def test_find_location(image: JImage) -> None:
    loc = image.find_location("/java.base/java/lang/String.class")
    assert loc is not None
    assert loc == ImageLocation(
        module="java.base",
        parent="java/lang",
        base="String",
        extension="class",
        offset=loc.offset,
        compressed_size=loc.compressed_size,
        uncompressed_size=loc.uncompressed_size,
    )
    assert loc.full_name == "/java.base/java/lang/String.class"
    assert loc.uncompressed_size > 1000


def test_every_name_resolves_through_the_hash_table(image: JImage) -> None:
    names = list(image.names())
    assert len(names) == image.header.resource_count
    assert "/packages/java.lang" in names and "/modules/java.base" in names
    for name in names[::10]:
        loc = image.find_location(name)
        assert loc is not None and loc.full_name == name


def test_class_names(image: JImage) -> None:
    names = list(image.class_names())
    assert len(names) > 20000
    assert len(names) == len(set(names))
    assert "java/lang/String" in names
    assert "java/sql/Connection" in names
    assert not any(n.endswith("module-info") for n in names)
    assert not any(n.startswith("/") or n.endswith(".class") for n in names)


def test_missing_returns_none(image: JImage) -> None:
    assert image.find_class("java/lang/NoSuchClassHere") is None
    assert image.find_class("no/such/pkg/Foo") is None
    assert image.find_class("NoPackage") is None
    assert image.find_class("java/lang") is None
    assert image.read("/java.base/java/lang/Strin.class") is None
    assert image.read("java.base/java/lang/String.class") is None
    assert image.read("") is None
    # Many absent names land on occupied hash slots: the name check must reject them.
    for i in range(300):
        assert image.read(f"/java.base/java/lang/Missing{i}.class") is None


def test_default_image_is_cached() -> None:
    img = default_image()
    assert img is not None
    assert default_image() is img
    assert (img.find_class("java/lang/Object") or b"")[:4] == CAFEBABE


def test_truncated_index_raises(modules_path: Path, tmp_path: Path) -> None:
    with open(modules_path, "rb") as f:
        head = f.read(100_000)
    for size in (0, 10, 27, 1000, 100_000):
        bad = tmp_path / f"cut{size}"
        bad.write_bytes(head[:size])
        with pytest.raises(JImageError, match="truncated") as info:
            JImage(bad)
        assert str(bad) in str(info.value)


def test_truncated_resources_raise(image: JImage, modules_path: Path, tmp_path: Path) -> None:
    loc = image.find_location("/java.base/java/lang/String.class")
    assert loc is not None
    cut = image.header.index_size + loc.offset + 10  # ends inside String.class
    bad = tmp_path / "cut_data"
    with open(modules_path, "rb") as f:
        bad.write_bytes(f.read(cut))
    with JImage(bad) as img:
        with pytest.raises(JImageError, match="truncated: resource /java.base/java/lang/String"):
            img.read("/java.base/java/lang/String.class")
        with pytest.raises(JImageError, match="truncated"):
            img.find_class("java/lang/String")


def test_wrong_magic_raises(modules_path: Path, tmp_path: Path) -> None:
    with open(modules_path, "rb") as f:
        head = bytearray(f.read(4096))
    head[0:4] = b"\xca\xfe\xba\xbe"
    bad = tmp_path / "not_an_image"
    bad.write_bytes(bytes(head))
    with pytest.raises(JImageError, match="bad magic") as info:
        JImage(bad)
    assert str(bad) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(JImageError, match="cannot open"):
        JImage(tmp_path / "nope")


def test_close(modules_path: Path) -> None:
    with JImage(modules_path) as img:
        assert img.find_class("java/lang/Object") is not None
    assert img.closed
    with pytest.raises(ValueError):
        img.find_class("java/lang/Object")


# ------------------------------------------------------------ synthetic images


def test_hash_definition() -> None:
    assert jimage_hash(b"") == HASH_MULTIPLIER
    h = HASH_MULTIPLIER
    for b in b"/java.base/java/lang/String.class":
        h = ((h * HASH_MULTIPLIER) ^ b) & 0xFFFFFFFF
    assert jimage_hash(b"/java.base/java/lang/String.class") == h & 0x7FFFFFFF


def _split_name(name: str) -> tuple[str, str, str, str]:
    _, module, rest = name.split("/", 2)
    parent, _, file = rest.rpartition("/")
    base, dot, ext = file.rpartition(".")
    return (module, parent, base, ext) if dot else (module, parent, file, "")


def build_image(
    resources: dict[str, bytes],
    *,
    order: str = "<",
    decompressor: dict[str, str] | None = None,
) -> bytes:
    """A minimal jimage with ``resources`` (full name -> bytes).

    ``decompressor`` maps names to a decompressor name: those resources are
    stored with a compressed-resource header (zlib content for "zip").
    """
    decompressor = decompressor or {}
    strings = bytearray(b"\0")
    string_offsets: dict[str, int] = {"": 0}

    def add_string(s: str) -> int:
        if s not in string_offsets:
            string_offsets[s] = len(strings)
            strings.extend(s.encode() + b"\0")
        return string_offsets[s]

    names = list(resources)
    n = len(names)
    data = bytearray()
    locations = bytearray(b"\0")
    location_offsets: dict[str, int] = {}
    for name in names:
        content = resources[name]
        compressed = 0
        if name in decompressor:
            payload = zlib.compress(content)
            header = struct.pack(
                order + "IQQIIB",
                COMPRESSED_MAGIC,
                len(payload),
                len(content),
                add_string(decompressor[name]),
                0,
                1,
            )
            stored = header + payload
            compressed = len(stored)
        else:
            stored = content
        attrs = [add_string(part) for part in _split_name(name)]
        attrs += [len(data), compressed, len(content)]
        data += stored
        location_offsets[name] = len(locations)
        for kind, value in enumerate(attrs, start=1):
            if value:
                length = max(1, (value.bit_length() + 7) // 8)
                locations.append((kind << 3) | (length - 1))
                locations += value.to_bytes(length, "big")
        locations.append(0)

    # Perfect hash: multi-name buckets get a seed, singletons a direct slot.
    buckets: dict[int, list[bytes]] = {}
    for name in names:
        buckets.setdefault(jimage_hash(name.encode()) % n, []).append(name.encode())
    redirect = [0] * n
    slots: list[str | None] = [None] * n
    for bucket, keys in sorted(buckets.items(), key=lambda kv: -len(kv[1])):
        if len(keys) == 1:
            continue
        seed = 1
        while True:
            targets = [jimage_hash(k, seed) % n for k in keys]
            if len(set(targets)) == len(keys) and all(slots[t] is None for t in targets):
                break
            seed += 1
        redirect[bucket] = seed
        for t, k in zip(targets, keys):
            slots[t] = k.decode()
    free = (i for i in range(n) if slots[i] is None)
    for bucket, keys in buckets.items():
        if len(keys) == 1:
            slot = next(free)
            redirect[bucket] = -1 - slot
            slots[slot] = keys[0].decode()
    offsets = [location_offsets[s] for s in slots if s is not None]

    header = struct.pack(
        order + "7I", IMAGE_MAGIC, 1 << 16, 0, n, n, len(locations), len(strings)
    )
    return b"".join(
        [
            header,
            struct.pack(f"{order}{n}i", *redirect),
            struct.pack(f"{order}{n}I", *offsets),
            bytes(locations),
            bytes(strings),
            bytes(data),
        ]
    )


SYNTHETIC = {
    f"/mod.{m}/p{m}/q/C{i}.class": CAFEBABE + bytes([m, i]) * (50 + i)
    for m in range(3)
    for i in range(40)
} | {
    "/mod.0/p0/q/data.txt": b"hello\n",
    "/mod.1/module-info.class": CAFEBABE + b"module",
    "/mod.2/META-INF/README": b"",
}


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("compress", [False, True])
def test_synthetic_image(tmp_path: Path, order: str, compress: bool) -> None:
    zipped = {name: "zip" for name in SYNTHETIC} if compress else {}
    path = tmp_path / "modules"
    path.write_bytes(build_image(SYNTHETIC, order=order, decompressor=zipped))
    with JImage(path) as img:
        assert img.header.byte_order == order
        assert sorted(img.names()) == sorted(SYNTHETIC)
        for name, content in SYNTHETIC.items():
            assert img.read(name) == content
            assert img.find_location(name).is_compressed == compress  # type: ignore[union-attr]
        classes = sorted(img.class_names())
        assert classes == sorted(f"p{m}/q/C{i}" for m in range(3) for i in range(40))
        # No /packages tree here: the package map comes from a location scan.
        assert img.find_class("p2/q/C7") == SYNTHETIC["/mod.2/p2/q/C7.class"]
        assert img.find_class("p2/q/C99") is None
        assert img.find_class("p9/q/C1") is None


def test_unsupported_compression(tmp_path: Path) -> None:
    path = tmp_path / "modules"
    path.write_bytes(build_image(SYNTHETIC, decompressor={"/mod.1/p1/q/C3.class": "compact-cp"}))
    with JImage(path) as img:
        assert img.find_class("p1/q/C2") == SYNTHETIC["/mod.1/p1/q/C2.class"]
        with pytest.raises(JImageError, match="compressed resource not supported: /mod.1/p1/q/C3"):
            img.find_class("p1/q/C3")
