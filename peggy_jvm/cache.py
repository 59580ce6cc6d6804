"""The content-addressed result cache of ``optimize`` (``--cache DIR``, ``--no-cache``).

What this module owns
    :class:`ResultCache` (entries on disk: format, checksum, atomic writes, least-recently-used eviction),
    :func:`default_dir`, :func:`code_digest` (the tool's version), :func:`rules_digest`, and its use:
    :func:`optimize_class_cached` (one class of ``optimize``). ``validate`` is not cached: with modular
    validation a pair's verdict rests on the verdicts of its callees' pairs (validate/modular.py), which a key
    of the pair's own classes does not cover.

What a result depends on, and so what its key holds
    * ``optimize``, one class or one part of it (a range of its methods, ``pipeline.optimize_methods``: a class
      split over workers): the class's bytes (every method's code and every constant-pool entry it can use),
      the part (a part's entry holds its methods' new code and the pool entries each added, before the merge;
      a class's, the merged class), the stage, goal and work budget, the rules (:func:`rules_digest`: the
      user's axiom texts and switches) and the tool (:func:`code_digest`: the package's sources, the bundled axioms, the
      libraries' versions).
      ``--method-timeout`` is not in the key: a class whose safety net fired is never stored (its result depends
      on the machine), and every other result is what any timeout would give.
    * The bytes of every other input class the computation read (inlined callees, their classes' initializers,
      rules/inline.py), recorded while it runs (:class:`_ProgramReads`) and checked on a hit like the facts below.
    * The class-hierarchy facts the computation consulted (``ClassHierarchy.recording``: superclass,
      interfaces, interface flag of each class looked up, or its absence). They are not known before the work,
      so they are stored in the entry and checked on a hit against the current hierarchy (the input's classes,
      ``--classpath``, the JDK): an entry whose facts no longer hold is a miss, recomputed and rewritten.

Entries
    ``DIR/v1/ab/<sha256 key>``: the line :data:`MAGIC`, the SHA-256 of the body, the body (JSON: the key, the
    facts, the result's metadata; then a NUL and the result's bytes). A file that does not start with the magic
    line, whose checksum or key does not match, or whose JSON does not parse is ignored (a miss) and rewritten.
    Writes go to a temporary file in the same directory, then ``os.replace``: a reader sees a whole entry or
    none, and several processes may write the same key at once (the last rename wins; both are right).

Size
    A hit sets the entry's modification time (the least-recently-used order). :meth:`ResultCache.evict`, called
    once at the end of a run by the main process, removes the least recently used entries until the directory
    holds at most 90% of ``max_bytes`` (default :data:`DEFAULT_MAX_BYTES`, 512 MiB). An entry removed while
    another process reads it is just a miss there.

Invariant: a hit gives what the computation gave: same output bytes, same report rows (only ``time_ms``
differs: a hit reports the lookup's time, under the key ``cache``).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from . import __version__
from .classfile.hierarchy import ClassHierarchy, ClassInfo, UnknownClassError

if TYPE_CHECKING:
    from .budget import WorkBudget
    from .codecost import Goal
    from .pipeline import MethodReport, Stage
    from .rules.policy import RuleOptions

MAGIC = b"peggy-jvm result cache 1\n"
#: the bound on the cache directory's size unless ``ResultCache(max_bytes=...)`` says otherwise
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
#: eviction stops at this share of ``max_bytes``, so that a full cache is not scanned again on every run
EVICT_TO = 0.9

Facts = dict[str, ClassInfo | None]


def default_dir() -> Path | None:
    """Where the cache is when no option says: ``$PEGGY_JVM_CACHE`` (``off``: no cache; the tests set it, so that
    no test reads what an earlier run left), else ``$XDG_CACHE_HOME/peggy-jvm/results``, else
    ``~/.cache/peggy-jvm/results``."""
    env = os.environ.get("PEGGY_JVM_CACHE")
    if env:
        return None if env == "off" else Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "peggy-jvm" / "results"


def _digest(*parts: bytes | str) -> str:
    """SHA-256 of the parts, each length-prefixed (no two different part lists hash alike by concatenation)."""
    h = hashlib.sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "big"))
        h.update(b)
    return h.hexdigest()


@functools.cache
def code_digest() -> str:
    """The tool's version as the cache sees it: the package's sources, the bundled axioms, the Python version and
    the versions of the libraries it runs on (the MaxSAT solver decides extractions). Any change to the code
    changes every key (a version number is not bumped on every commit)."""
    from .rules.library import default_axiom_dir
    package = Path(__file__).resolve().parent
    parts: list[bytes | str] = [__version__, f"{sys.version_info.major}.{sys.version_info.minor}"]
    for p in sorted(p for p in package.rglob("*") if p.suffix in (".py", ".ax", ".java") and p.is_file()):
        parts += [str(p.relative_to(package)), p.read_bytes()]
    axioms = default_axiom_dir()
    for p in sorted(p for p in axioms.rglob("*.ax") if p.is_file()) if axioms.is_dir() else []:
        parts += [str(p.relative_to(axioms)), p.read_bytes()]
    try:
        requirements = metadata.requires("peggy-jvm") or []
    except metadata.PackageNotFoundError:  # run from a source tree without installing
        requirements = []
    for req in requirements:
        if "extra ==" not in req:
            name = re.split(r"[ ;<>=!~\[]", req, maxsplit=1)[0]
            try:
                parts.append(f"{name}=={metadata.version(name)}")
            except metadata.PackageNotFoundError:
                parts.append(f"{name} missing")
    return _digest(*parts)


def rules_digest(options: RuleOptions | None) -> str:
    """The user's say in the optimizer's rules: the texts of the axiom files (not their paths), the defaults
    switch, the ``--rules`` switches."""
    if options is None:
        return "default"
    return _digest(str(options.defaults), *options.switches, files_digest(options.user_files()))


def files_digest(files: list[Path]) -> str:
    """The texts of axiom files, in order (their paths do not matter)."""
    return _digest(*(f.read_bytes() for f in files))


def _facts_json(facts: Facts) -> list:
    return [[n, None] if i is None else [n, i.super_name, list(i.interfaces), i.is_interface]
            for n, i in sorted(facts.items())]


def _facts_hold(stored: list, hierarchy: ClassHierarchy) -> bool:
    """Every stored fact is what ``hierarchy`` says now."""
    for item in stored:
        name = item[0]
        try:
            info = hierarchy.info(name)
        except UnknownClassError:
            info = None
        now = None if info is None else [info.super_name, list(info.interfaces), info.is_interface]
        if now != (None if item[1] is None and len(item) == 2 else item[1:]):
            return False
    return True


@dataclass
class ResultCache:
    """One cache directory. ``hits`` and ``misses`` count this process's lookups."""
    root: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    hits: int = 0
    misses: int = 0
    stored: int = 0
    ignored: list[str] = field(default_factory=list)  # entries found corrupt or foreign (then rewritten)

    def _path(self, key: str) -> Path:
        return self.root / "v1" / key[:2] / key

    def get(self, key: str, hierarchies: list[ClassHierarchy]) -> tuple[Any, bytes] | None:
        """The stored metadata and bytes under ``key`` if the entry is whole, ours and its facts still hold in
        ``hierarchies`` (one fact list per hierarchy, in order); else None."""
        path = self._path(key)
        try:
            raw = path.read_bytes()
        except OSError:
            self.misses += 1
            return None
        found = self._parse(key, raw)
        if found is None:
            self.ignored.append(path.name)
            self.misses += 1
            return None
        meta, blob = found
        facts = meta.get("facts")
        try:
            hold = (isinstance(facts, list) and len(facts) == len(hierarchies)
                    and all(_facts_hold(f, h) for f, h in zip(facts, hierarchies)))
        except (IndexError, KeyError, TypeError, AttributeError, ValueError):  # whole, but not laid out as ours
            self.ignored.append(path.name)
            hold = False
        if not hold:
            self.misses += 1
            return None
        try:
            os.utime(path)  # the least-recently-used order
        except OSError:
            pass
        self.hits += 1
        return meta["result"], blob

    @staticmethod
    def _parse(key: str, raw: bytes) -> tuple[dict, bytes] | None:
        if not raw.startswith(MAGIC):
            return None
        rest = raw[len(MAGIC):]
        checksum, body = rest[:64], rest[65:]
        if rest[64:65] != b"\n" or hashlib.sha256(body).hexdigest().encode() != checksum:
            return None
        text, sep, blob = body.partition(b"\0")
        try:
            meta = json.loads(text)
        except ValueError:
            return None
        if not sep or not isinstance(meta, dict) or meta.get("key") != key or "result" not in meta:
            return None
        return meta, blob

    def put(self, key: str, facts: list[Facts], result: dict | list, blob: bytes = b"") -> None:
        """Store an entry atomically (temporary file + rename); an OS error (full disk, read-only directory) only
        means it is not stored."""
        body = json.dumps({"key": key, "facts": [_facts_json(f) for f in facts], "result": result},
                          sort_keys=True).encode() + b"\0" + blob
        data = MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
        path = self._path(key)
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            tmp = None
            self.stored += 1
        except OSError:
            pass
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def evict(self) -> int:
        """Remove the least recently used entries while the cache holds more than ``max_bytes`` (down to
        :data:`EVICT_TO` of it); returns how many were removed. Temporary files older than an hour (a writer
        that was killed) go too."""
        entries: list[tuple[float, int, Path]] = []
        now = time.time()
        for p in (self.root / "v1").glob("*/*"):
            try:
                st = p.stat()
            except OSError:
                continue
            if p.name.startswith(".tmp-"):
                if now - st.st_mtime > 3600:
                    _unlink(p)
                continue
            entries.append((st.st_mtime, st.st_size, p))
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return 0
        removed = 0
        for _, size, p in sorted(entries, key=lambda e: (e[0], e[2].name)):
            if total <= self.max_bytes * EVICT_TO:
                break
            _unlink(p)
            total -= size
            removed += 1
        return removed

    def stats(self) -> dict:
        return {"dir": str(self.root), "hits": self.hits, "misses": self.misses, "stored": self.stored,
                "ignored": len(self.ignored)}


def _unlink(p: Path) -> None:
    try:
        p.unlink()
    except OSError:
        pass


# -- optimize -------------------------------------------------------------------------------------------------
def _storable(reports: list[MethodReport]) -> bool:
    """A class whose result depends on the machine is not stored: the safety net fired, or memory ran out."""
    return not any(r.reason.startswith(("timeout", "MemoryError")) for r in reports)


class _ProgramReads(dict):
    """The input's classes by name (as given to ``optimize_class``), recording each name looked up: the classes
    a result read (inlined callees, their superclasses' initializers, ``rules/inline.py``) are facts of it like
    the hierarchy's, stored with the digest of their bytes (None: not in the input) and checked on a hit."""

    def __init__(self, classes: dict[str, bytes]) -> None:
        super().__init__(classes)
        self.read: dict[str, str | None] = {}

    def _note(self, name: object) -> None:
        if isinstance(name, str) and name not in self.read:
            data = dict.get(self, name)
            self.read[name] = None if data is None else _digest(data)

    def get(self, name, default=None):  # records, then dict.get
        self._note(name)
        return dict.get(self, name, default)

    def __getitem__(self, name):
        self._note(name)
        return dict.__getitem__(self, name)

    def __contains__(self, name):
        self._note(name)
        return dict.__contains__(self, name)


def _reads_hold(stored: object, program: dict[str, bytes] | None) -> bool:
    """Whether every input class a stored result read still has the bytes it had (or is still absent)."""
    if not isinstance(stored, dict):
        return False
    current = program or {}
    for name, digest in stored.items():
        data = current.get(name)
        if (None if data is None else _digest(data)) != digest:
            return False
    return True


def optimize_class_cached(cache: ResultCache | None, data: bytes, hierarchy: ClassHierarchy, stage: Stage,
                          work: WorkBudget, goal: Goal, rules: RuleOptions | None,
                          program: dict[str, bytes] | None,
                          compute: Callable[[dict[str, bytes] | None], tuple[bytes, list[MethodReport]]],
                          part: tuple[int, int] | None = None) -> tuple[bytes, list[MethodReport]]:
    """``compute(program)`` (one class through ``optimize_class``, given the input's classes it may inline from;
    with ``part``, the methods ``part = (lo, hi)`` of it through ``optimize_methods``, as
    ``pipeline.encode_part`` gives them), or its stored result when everything it depends on is the same (module
    docstring): the class-hierarchy facts and the bytes of every other input class it read."""
    if cache is None:
        return compute(program)
    from .pipeline import MethodReport
    start = time.perf_counter()
    key = _digest("optimize", code_digest(), stage.value, goal.value, repr(work), rules_digest(rules), data,
                  "class" if part is None else f"methods {part[0]}-{part[1]}")
    hit = cache.get(key, [hierarchy])
    if hit is not None:
        stored, out = hit
        try:
            if _reads_hold(stored["program"], program):
                rows = stored["rows"]
                ms = (time.perf_counter() - start) * 1000 / max(1, len(rows))
                return out, [MethodReport.from_json(r, {"cache": ms}) for r in rows]
        except (KeyError, TypeError):
            pass  # checksummed, so whole, but not laid out as this code writes: computed and rewritten
    reads = _ProgramReads(program or {})
    with hierarchy.recording() as facts:
        out, reports = compute(reads if program is not None else None)
    if _storable(reports):
        cache.put(key, [facts], {"rows": [r.to_json() for r in reports], "program": reads.read}, out)
    return out, reports
