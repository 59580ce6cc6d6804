"""The class-hierarchy oracle used to merge reference types in stack-map frames.

Owns: :class:`ClassHierarchy`, which answers "superclass, interfaces, is-interface" for an internal class name
from, in order: the classes being processed (added with :meth:`add_class_bytes` / :meth:`add_info`), a
classpath of jars and directories, and the running JDK's runtime image (:mod:`.jimage`); and
:meth:`ClassHierarchy.common_super`, the least upper bound the frame computer needs.

Invariants: nothing is guessed. A class that none of the sources has raises :class:`UnknownClassError` (the
frame computer turns that into "method left unchanged"). Merging follows the verifier (JVMS 4.10.1.2):
interfaces are treated as ``java/lang/Object``, so the merge of two class types is their nearest common
superclass, and arrays of references merge component-wise. Every fact goes through :meth:`ClassHierarchy.info`,
so :meth:`ClassHierarchy.recording` sees all that a computation consulted.
"""
from __future__ import annotations

import struct
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .errors import UnsupportedCodeError

OBJECT = "java/lang/Object"


class UnknownClassError(UnsupportedCodeError):
    """A class needed to merge two types is in none of the hierarchy's sources."""


@dataclass(frozen=True, slots=True)
class ClassInfo:
    name: str
    super_name: str | None
    interfaces: tuple[str, ...]
    is_interface: bool
    is_final: bool = False  # ACC_FINAL: no subclass exists (an array of it holds exactly this class)


def read_class_info(data: bytes) -> ClassInfo:
    """Only the header of a class file: name, super, interfaces, flags (no full parse)."""
    from .constpool import ConstantPool

    pool, pos = ConstantPool.parse(data, 8)
    access, this_index, super_index, icount = struct.unpack_from(">HHHH", data, pos)
    ifaces = struct.unpack_from(f">{icount}H", data, pos + 8)
    return ClassInfo(pool.class_name(this_index), pool.class_name(super_index) if super_index else None,
                     tuple(pool.class_name(i) for i in ifaces), bool(access & 0x0200), bool(access & 0x0010))


class ClassHierarchy:
    """Lazily loaded superclass/interface facts, with memoised least-upper-bound queries."""

    def __init__(self, classpath: list[Path] | None = None, use_jdk: bool = True) -> None:
        self._infos: dict[str, ClassInfo | None] = {}
        self._pending: dict[str, bytes] = {}
        self._classpath: list[Path | zipfile.ZipFile] = []  # in order: the first entry that has a class wins
        self._lub: dict[tuple[str, str], str] = {}
        #: inside :meth:`recording`: every class fact looked up (name -> info, None: not found)
        self._recorded: dict[str, ClassInfo | None] | None = None
        for entry in classpath or []:
            self.add_classpath_entry(Path(entry))
        self._jdk = None
        if use_jdk:
            from .jimage import default_image

            self._jdk = default_image()

    def add_classpath_entry(self, path: Path) -> None:
        if path.is_dir():
            self._classpath.append(path)
        elif path.is_file():
            self._classpath.append(zipfile.ZipFile(path))
        self._forget_missing()

    def _forget_missing(self) -> None:
        """A new source may hold classes that were looked up in vain before."""
        self._infos = {k: v for k, v in self._infos.items() if v is not None}
        self._lub.clear()

    def add_info(self, info: ClassInfo) -> None:
        self._infos[info.name] = info
        self._lub.clear()

    def add_class_bytes(self, data: bytes) -> None:
        self.add_info(read_class_info(data))

    def add_lazy_classes(self, by_name: dict[str, bytes]) -> None:
        """Classes of the input, keyed by the name their path implies; parsed only if a merge asks for them
        (and used only if the parsed name agrees)."""
        self._pending.update(by_name)
        self._forget_missing()

    def _load(self, name: str) -> ClassInfo | None:
        pending = self._pending.pop(name, None)
        if pending is not None:
            try:
                info = read_class_info(pending)
            except Exception:
                info = None
            if info is not None and info.name == name:
                return info
        rel = name + ".class"
        data: bytes | None = None
        for entry in self._classpath:
            if isinstance(entry, Path):
                p = entry / rel
                if p.is_file():
                    data = p.read_bytes()
                    break
            else:
                try:
                    data = entry.read(rel)
                    break
                except KeyError:
                    continue
        if data is None and self._jdk is not None:
            data = self._jdk.find_class(name)
        if data is None:
            return None
        try:
            return read_class_info(data)
        except Exception:  # a broken library class is as good as a missing one: never guess
            return None

    def info(self, name: str) -> ClassInfo:
        try:
            found = self._infos[name]
        except KeyError:
            found = self._infos[name] = self._load(name)
        if self._recorded is not None:
            self._recorded[name] = found
        if found is None:
            raise UnknownClassError(f"class {name} not found on the classpath or in the JDK")
        return found

    @contextmanager
    def recording(self) -> Iterator[dict[str, ClassInfo | None]]:
        """Every class fact :meth:`info` gives inside the block, by name (None: a class found nowhere): all that a
        result computed inside it knows of the hierarchy (the result cache, ``peggy_jvm/cache.py``, stores them
        and trusts the result only where they still hold). Nested recordings each see their own facts."""
        outer, self._recorded = self._recorded, {}
        recorded = self._recorded
        try:
            yield recorded
        finally:
            self._recorded = outer
            if outer is not None:
                outer.update(recorded)

    def is_interface(self, name: str) -> bool:
        return self.info(name).is_interface

    def superclasses(self, name: str) -> list[str]:
        """``name`` and its superclass chain up to java/lang/Object."""
        chain = []
        seen = set()
        cur: str | None = name
        while cur is not None:
            if cur in seen:
                raise UnknownClassError(f"cyclic superclass chain at {cur}")
            seen.add(cur)
            chain.append(cur)
            cur = self.info(cur).super_name if cur != OBJECT else None
        return chain

    def common_super(self, a: str, b: str) -> str:
        """Least upper bound of two class (non-array) types as the verifier computes it."""
        if a == b:
            return a
        key = (a, b) if a < b else (b, a)
        # while recording, the memo is not read: its answer rests on facts that must be seen again
        found = self._lub.get(key) if self._recorded is None else None
        if found is not None:
            return found
        if a == OBJECT or b == OBJECT:
            result = OBJECT
        elif self.is_interface(a) or self.is_interface(b):
            result = OBJECT
        else:
            chain_a = self.superclasses(a)
            set_b = set(self.superclasses(b))
            result = next((c for c in chain_a if c in set_b), OBJECT)
        self._lub[key] = result
        return result

    def is_assignable(self, target: str, source: str) -> bool:
        """Whether class type ``source`` may be used where ``target`` is expected (interfaces: always)."""
        if target == source or target == OBJECT:
            return True
        if self.is_interface(target):
            return True
        return target in self.superclasses(source)
