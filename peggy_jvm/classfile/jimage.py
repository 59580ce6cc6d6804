"""Reader for the JDK runtime image (``$JAVA_HOME/lib/modules``, "jimage").

Owns: locating the JDK in use (:func:`find_java_home`), parsing the jimage
container format and returning the raw bytes of the resources stored in it,
in particular class files (:meth:`JImage.find_class`).  It is pure Python
(stdlib only) and never starts a JVM, so the class-file layer can look up
JDK classes (superclass, interfaces, flags) cheaply, e.g. to compute
StackMapTable frames.

Inputs: a path to a jimage file (normally ``<java_home>/lib/modules``).
Outputs: ``bytes`` of resources (e.g. ``java/lang/String.class``), the list of
class names in the image, and parsed :class:`ImageHeader` /
:class:`ImageLocation` records.

File layout (all integers in the image's native byte order, detected from
the magic ``0xCAFEDADA``)::

    header      7 x u4: magic, version (major << 16 | minor), flags,
                resource count, table length, locations size, strings size
    redirect    s4 x table length   (perfect-hash redirect table)
    offsets     u4 x table length   (offset of each location's attributes)
    locations   attribute byte streams
    strings     NUL-terminated modified UTF-8 strings
    resources   resource bytes; a location's ``offset`` is relative to here

A location is a stream of attributes: a byte ``(kind << 3) | (length - 1)``
followed by ``length`` big-endian value bytes; kind 0 ends the stream.  Kinds
1-4 (module, parent, base, extension) are offsets into the strings table;
5-7 are the resource offset, compressed size (0 = stored uncompressed) and
uncompressed size.  Omitted attributes are 0.  The full name of a location is
``/module/parent/base.extension`` with empty parts (and their separator)
left out.

Lookup of a name: ``h = hash(name)`` (FNV-style over the modified UTF-8
bytes, see :func:`jimage_hash`); ``r = redirect[h % table_length]``; ``r < 0``
-> location ``-1 - r``; ``r > 0`` -> location ``hash(name, seed=r) %
table_length``; ``r == 0`` -> absent.  The candidate location is then
verified to really carry that name, since the hash is only perfect for the
names present.

Invariants: a :class:`JImage` is read-only; every lookup either returns the
exact bytes of the named resource, returns ``None`` (absent), or raises
:class:`JImageError` (a malformed/truncated image, or an unsupported
compression).  After the first :meth:`JImage.find_class` call each further
call costs O(1) dictionary/hash work plus copying the resource bytes.
"""
from __future__ import annotations

import functools
import mmap
import os
import shutil
import struct
import sys
import zlib
from array import array
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Iterator

__all__ = [
    "JImage",
    "JImageError",
    "ImageHeader",
    "ImageLocation",
    "default_image",
    "find_java_home",
    "jimage_hash",
]

IMAGE_MAGIC = 0xCAFEDADA
SUPPORTED_MAJOR_VERSION = 1
HEADER_SIZE = 7 * 4
HASH_MULTIPLIER = 0x01000193

COMPRESSED_MAGIC = 0xCAFEFAFA
# magic u4, compressed size u8, uncompressed size u8, decompressor name
# offset u4, (unused) config offset u4, is-terminal u1
COMPRESSED_HEADER_SIZE = 29

# Location attribute kinds.
ATTR_END = 0
ATTR_MODULE = 1
ATTR_PARENT = 2
ATTR_BASE = 3
ATTR_EXTENSION = 4
ATTR_OFFSET = 5
ATTR_COMPRESSED = 6
ATTR_UNCOMPRESSED = 7
_ATTR_COUNT = 8


class JImageError(ValueError):
    """The jimage file is malformed, truncated or uses an unsupported feature."""


def jimage_hash(data: bytes, seed: int = HASH_MULTIPLIER) -> int:
    """The jimage string hash of ``data`` (modified UTF-8 bytes).

    ``h = seed; for b in data: h = (h * 0x01000193) ^ b`` in 32-bit
    arithmetic, and the result masked to its low 31 bits (non-negative).
    """
    h = seed & 0xFFFFFFFF
    for b in data:
        h = ((h * 0x01000193) & 0xFFFFFFFF) ^ b
    return h & 0x7FFFFFFF


def _encode_mutf8(s: str) -> bytes:
    """Encode ``s`` as (Java) modified UTF-8, as the image stores names."""
    if s.isascii() and "\0" not in s:
        return s.encode("ascii")
    out = bytearray()
    for ch in s:
        cp = ord(ch)
        if cp == 0:
            out += b"\xc0\x80"
        elif cp > 0xFFFF:
            cp -= 0x10000
            out += chr(0xD800 | (cp >> 10)).encode("utf-8", "surrogatepass")
            out += chr(0xDC00 | (cp & 0x3FF)).encode("utf-8", "surrogatepass")
        else:
            out += ch.encode("utf-8", "surrogatepass")
    return bytes(out)


def _decode_mutf8(data: bytes) -> str:
    """Decode modified UTF-8 (NUL as C0 80, supplementary chars as surrogate pairs)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
        # Re-pair surrogates into real code points.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


@dataclass(frozen=True, slots=True)
class ImageHeader:
    """The fixed-size header at the start of a jimage file."""

    byte_order: str  # struct prefix: "<" (little-endian) or ">" (big-endian)
    major_version: int
    minor_version: int
    flags: int
    resource_count: int
    table_length: int
    locations_size: int
    strings_size: int

    @property
    def redirect_offset(self) -> int:
        return HEADER_SIZE

    @property
    def offsets_offset(self) -> int:
        return HEADER_SIZE + 4 * self.table_length

    @property
    def locations_offset(self) -> int:
        return HEADER_SIZE + 8 * self.table_length

    @property
    def strings_offset(self) -> int:
        return self.locations_offset + self.locations_size

    @property
    def index_size(self) -> int:
        """Size of header + tables + locations + strings; resources start here."""
        return self.strings_offset + self.strings_size


@dataclass(frozen=True, slots=True)
class ImageLocation:
    """One entry of the image: its name parts and where its bytes are."""

    module: str
    parent: str
    base: str
    extension: str
    offset: int  # relative to the end of the index (ImageHeader.index_size)
    compressed_size: int  # 0 when the resource is stored uncompressed
    uncompressed_size: int

    @property
    def full_name(self) -> str:
        return _full_name(self.module, self.parent, self.base, self.extension)

    @property
    def is_compressed(self) -> bool:
        return self.compressed_size != 0


def _full_name(module: str, parent: str, base: str, extension: str) -> str:
    parts: list[str] = []
    if module:
        parts.append("/" + module + "/")
    if parent:
        parts.append(parent + "/")
    parts.append(base)
    if extension:
        parts.append("." + extension)
    return "".join(parts)


class JImage:
    """A jimage file opened read-only through ``mmap``.

    The header, redirect/offsets tables, location attributes and strings are
    parsed (copied) at construction; resource bytes are read from the map on
    demand.  Use as a context manager or call :meth:`close`.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < HEADER_SIZE:
                    raise self._error(
                        f"truncated: {size} bytes, smaller than the {HEADER_SIZE}-byte header"
                    )
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as exc:
            raise JImageError(f"jimage {self.path}: cannot open: {exc}") from exc
        self._size = size
        try:
            self._parse_index()
        except BaseException:
            self._map.close()
            raise
        self._string_cache: dict[int, str] = {}
        self._packages: dict[str, tuple[str, ...]] | None = None

    # ----------------------------------------------------------------- parsing

    def _error(self, what: str) -> JImageError:
        return JImageError(f"jimage {self.path}: {what}")

    def _parse_index(self) -> None:
        m = self._map
        (raw_magic,) = struct.unpack_from("<I", m, 0)
        if raw_magic == IMAGE_MAGIC:
            order = "<"
        elif struct.unpack_from(">I", m, 0)[0] == IMAGE_MAGIC:
            order = ">"
        else:
            raise self._error(
                f"bad magic 0x{struct.unpack_from('>I', m, 0)[0]:08X} "
                f"(expected 0x{IMAGE_MAGIC:08X}); not a jimage file"
            )
        _, version, flags, rcount, tlen, lsize, ssize = struct.unpack_from(order + "7I", m, 0)
        header = ImageHeader(
            byte_order=order,
            major_version=version >> 16,
            minor_version=version & 0xFFFF,
            flags=flags,
            resource_count=rcount,
            table_length=tlen,
            locations_size=lsize,
            strings_size=ssize,
        )
        if header.major_version != SUPPORTED_MAJOR_VERSION:
            raise self._error(
                f"unsupported version {header.major_version}.{header.minor_version} "
                f"(supported: {SUPPORTED_MAJOR_VERSION}.x)"
            )
        if header.index_size > self._size:
            raise self._error(
                f"truncated: index needs {header.index_size} bytes "
                f"(table length {tlen}, locations {lsize}, strings {ssize}) "
                f"but the file has {self._size}"
            )
        self.header = header
        self._tlen = tlen
        self._index_size = header.index_size

        redirect_bytes = m[header.redirect_offset:header.offsets_offset]
        offsets_bytes = m[header.offsets_offset:header.locations_offset]
        redirect = array("i")
        offsets = array("I")
        if redirect.itemsize == 4 and offsets.itemsize == 4:
            redirect.frombytes(redirect_bytes)
            offsets.frombytes(offsets_bytes)
            if order != ("<" if sys.byteorder == "little" else ">"):
                redirect.byteswap()
                offsets.byteswap()
        else:  # pragma: no cover - platforms where C int is not 32 bits
            redirect = array("l", struct.unpack(f"{order}{tlen}i", redirect_bytes))
            offsets = array("L", struct.unpack(f"{order}{tlen}I", offsets_bytes))
        self._redirect = redirect
        self._offsets = offsets
        self._locations = m[header.locations_offset:header.strings_offset]
        self._strings = m[header.strings_offset:header.index_size]
        if tlen and max(offsets) >= lsize:
            raise self._error("corrupt: a location offset points past the locations table")

    def _attributes(self, index: int) -> list[int]:
        """The 8 attribute values of location number ``index`` (absent ones are 0)."""
        return self._attributes_at(self._offsets[index])

    def _attributes_at(self, pos: int) -> list[int]:
        """The 8 attribute values of the location at byte ``pos`` of the locations table."""
        attrs = [0] * _ATTR_COUNT
        data = self._locations
        start = pos
        end = len(data)
        while pos < end:
            byte = data[pos]
            kind = byte >> 3
            if kind == ATTR_END:
                return attrs
            length = (byte & 7) + 1
            pos += 1
            if pos + length > end:
                break
            attrs[kind] = int.from_bytes(data[pos:pos + length], "big")
            pos += length
        raise self._error(
            f"corrupt: location attributes at offset {start} run past the locations table"
        )

    def _raw_string(self, offset: int) -> bytes:
        strings = self._strings
        end = strings.find(b"\0", offset)
        if end < 0 or offset >= len(strings):
            raise self._error(
                f"corrupt: string offset {offset} is not NUL-terminated in the strings table"
            )
        return strings[offset:end]

    def _string(self, offset: int) -> str:
        s = self._string_cache.get(offset)
        if s is None:
            s = _decode_mutf8(self._raw_string(offset))
            self._string_cache[offset] = s
        return s

    def _raw_full_name(self, attrs: list[int]) -> bytes:
        rs = self._raw_string
        parts: list[bytes] = []
        if attrs[ATTR_MODULE]:
            parts += (b"/", rs(attrs[ATTR_MODULE]), b"/")
        if attrs[ATTR_PARENT]:
            parts += (rs(attrs[ATTR_PARENT]), b"/")
        parts.append(rs(attrs[ATTR_BASE]))
        if attrs[ATTR_EXTENSION]:
            parts += (b".", rs(attrs[ATTR_EXTENSION]))
        return b"".join(parts)

    def _location(self, attrs: list[int]) -> ImageLocation:
        s = self._string
        return ImageLocation(
            module=s(attrs[ATTR_MODULE]),
            parent=s(attrs[ATTR_PARENT]),
            base=s(attrs[ATTR_BASE]),
            extension=s(attrs[ATTR_EXTENSION]),
            offset=attrs[ATTR_OFFSET],
            compressed_size=attrs[ATTR_COMPRESSED],
            uncompressed_size=attrs[ATTR_UNCOMPRESSED],
        )

    # ------------------------------------------------------------------ lookup

    def _find_attributes(self, name: str) -> list[int] | None:
        """Perfect-hash lookup of a full resource name; verified, or None."""
        self._check_open()
        tlen = self._tlen
        if tlen == 0:
            return None
        key = _encode_mutf8(name)
        value = self._redirect[jimage_hash(key) % tlen]
        if value < 0:
            index = -1 - value
        elif value > 0:
            index = jimage_hash(key, value) % tlen
        else:
            return None
        if index >= tlen:
            raise self._error(f"corrupt: redirect table entry for {name!r} is out of range")
        attrs = self._attributes(index)
        if self._raw_full_name(attrs) != key:
            return None
        return attrs

    def find_location(self, name: str) -> ImageLocation | None:
        """The location named e.g. "/java.base/java/lang/String.class", or None."""
        attrs = self._find_attributes(name)
        return None if attrs is None else self._location(attrs)

    def read(self, name: str) -> bytes | None:
        """Bytes of the resource with full jimage name ``name``, or None if absent.

        ``name`` looks like "/java.base/java/lang/String.class".
        """
        attrs = self._find_attributes(name)
        if attrs is None:
            return None
        return self._resource(attrs, name)

    def _resource(self, attrs: list[int], name: str) -> bytes:
        start = self._index_size + attrs[ATTR_OFFSET]
        compressed = attrs[ATTR_COMPRESSED]
        size = compressed if compressed else attrs[ATTR_UNCOMPRESSED]
        if start + size > self._size:
            raise self._error(
                f"truncated: resource {name} needs bytes {start}..{start + size} "
                f"but the file has {self._size}"
            )
        data = self._map[start:start + size]
        if compressed:
            data = self._decompress(data, attrs[ATTR_UNCOMPRESSED], name)
        return data

    def _decompress(self, data: bytes, uncompressed_size: int, name: str) -> bytes:
        order = self.header.byte_order
        # A resource may have been compressed several times; each layer has
        # its own header.  Unwrap until the content no longer starts with one.
        while (
            len(data) >= COMPRESSED_HEADER_SIZE
            and struct.unpack_from(order + "I", data, 0)[0] == COMPRESSED_MAGIC
        ):
            _, _csize, usize, name_offset = struct.unpack_from(order + "IQQI", data, 0)
            decompressor = self._string(name_offset)
            if decompressor != "zip":
                raise self._error(
                    f"compressed resource not supported: {name} "
                    f"(decompressor {decompressor!r}; only 'zip' is implemented)"
                )
            try:
                out = zlib.decompress(data[COMPRESSED_HEADER_SIZE:])
            except zlib.error as exc:
                raise self._error(f"corrupt compressed resource {name}: {exc}") from exc
            if len(out) != usize:
                raise self._error(
                    f"corrupt compressed resource {name}: inflated to {len(out)} bytes, "
                    f"header says {usize}"
                )
            data = out
        if len(data) != uncompressed_size:
            raise self._error(
                f"corrupt compressed resource {name}: {len(data)} bytes after "
                f"decompression, location says {uncompressed_size}"
            )
        return data

    # ----------------------------------------------------------------- classes

    def _package_map(self) -> dict[str, tuple[str, ...]]:
        """Map "java/lang" -> ("java.base",): the module(s) holding classes of a package.

        Built once.  The image's ``/packages`` directory entry lists (as u4
        location offsets) its children ``/packages/<pkg.dotted>``, whose
        content is a list of (is_empty u4, module name string offset u4)
        pairs; modules in which the package is empty are left out.  Falls
        back to a scan of all locations if the image has no ``/packages``.
        """
        packages = self._packages
        if packages is None:
            root = self._find_attributes("/packages")
            found = self._packages_from_tree(root) if root is not None else self._packages_by_scan()
            packages = {pkg: tuple(mods) for pkg, mods in found.items()}
            self._packages = packages
        return packages

    def _packages_from_tree(self, root: list[int]) -> dict[str, list[str]]:
        order = self.header.byte_order
        content = self._resource(root, "/packages")
        if len(content) % 4:
            raise self._error(f"corrupt: /packages has {len(content)} bytes, not a multiple of 4")
        found: dict[str, list[str]] = {}
        for (child_pos,) in struct.iter_unpack(order + "I", content):
            if child_pos >= len(self._locations):
                raise self._error("corrupt: /packages lists a location past the locations table")
            attrs = self._attributes_at(child_pos)
            dotted = self._string(attrs[ATTR_BASE])
            if self._string(attrs[ATTR_MODULE]) != "packages" or attrs[ATTR_PARENT]:
                raise self._error(f"corrupt: /packages lists {self._location(attrs).full_name}")
            entries = self._resource(attrs, "/packages/" + dotted)
            if len(entries) % 8:
                raise self._error(f"corrupt: /packages/{dotted} has {len(entries)} bytes")
            mods = [
                self._string(module_offset)
                for is_empty, module_offset in struct.iter_unpack(order + "II", entries)
                if not is_empty
            ]
            if mods:
                found[dotted.replace(".", "/")] = mods
        return found

    def _packages_by_scan(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for index in range(self._tlen):
            attrs = self._attributes(index)
            if not attrs[ATTR_MODULE] or self._string(attrs[ATTR_EXTENSION]) != "class":
                continue
            module = self._string(attrs[ATTR_MODULE])
            mods = found.setdefault(self._string(attrs[ATTR_PARENT]), [])
            if module not in mods:
                mods.append(module)
        return found

    def module_of_package(self, package: str) -> str | None:
        """The module containing ``package`` (internal form, "java/lang"), or None."""
        mods = self._package_map().get(package)
        return mods[0] if mods else None

    def find_class(self, internal_name: str) -> bytes | None:
        """Class-file bytes of e.g. "java/lang/String", or None if not in the image."""
        self._check_open()
        package, sep, _ = internal_name.rpartition("/")
        if not sep:
            return None  # JDK images hold no classes in the unnamed package
        mods = self._package_map().get(package)
        if not mods:
            return None
        for module in mods:
            data = self.read(f"/{module}/{internal_name}.class")
            if data is not None:
                return data
        return None

    def class_names(self) -> Iterator[str]:
        """All internal class names ("java/lang/String"), excluding module-info."""
        self._check_open()
        seen: set[str] = set()
        string = self._string
        for index in range(self._tlen):
            attrs = self._attributes(index)
            if not attrs[ATTR_EXTENSION] or not attrs[ATTR_MODULE]:
                continue
            if string(attrs[ATTR_EXTENSION]) != "class":
                continue
            base = string(attrs[ATTR_BASE])
            parent = string(attrs[ATTR_PARENT])
            if not parent and base == "module-info":
                continue
            name = f"{parent}/{base}" if parent else base
            if name not in seen:
                seen.add(name)
                yield name

    def names(self) -> Iterator[str]:
        """Full names of all entries, including "/modules/..." and "/packages/..."."""
        self._check_open()
        for index in range(self._tlen):
            yield _decode_mutf8(self._raw_full_name(self._attributes(index)))

    # --------------------------------------------------------------- lifecycle

    def _check_open(self) -> None:
        if self._map.closed:
            raise ValueError(f"jimage {self.path}: image is closed")

    @property
    def closed(self) -> bool:
        return self._map.closed

    def close(self) -> None:
        self._map.close()

    def __enter__(self) -> JImage:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.header.resource_count} resources"
        return f"JImage({str(self.path)!r}, {state})"


def _has_image(home: Path) -> bool:
    return (home / "lib" / "modules").is_file()


def find_java_home() -> Path | None:
    """The home directory of the JDK in use, or None.

    ``$JAVA_HOME`` if it contains ``lib/modules``; otherwise ``javac`` and then
    ``java`` on PATH, resolved through symlinks to ``<home>/bin/<tool>``.
    """
    env = os.environ.get("JAVA_HOME")
    if env:
        home = Path(env)
        if _has_image(home):
            return home
    for tool in ("javac", "java"):
        found = shutil.which(tool)
        if not found:
            continue
        exe = Path(found).resolve()
        if exe.parent.name != "bin":
            continue
        home = exe.parent.parent
        if _has_image(home):
            return home
    return None


@functools.lru_cache(maxsize=1)
def default_image() -> JImage | None:
    """The (cached, shared) :class:`JImage` of :func:`find_java_home`, or None.

    Callers must not close the returned image.
    """
    home = find_java_home()
    if home is None:
        return None
    return JImage(home / "lib" / "modules")
