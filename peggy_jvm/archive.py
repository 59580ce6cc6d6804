"""Inputs and outputs of the command line: a ``.class`` file, a ``.jar`` or a directory of classes.

Owns: :func:`read_input` (what to process: class entries and every other entry, copied verbatim),
:func:`resolve_output` (``-o`` and the default output), :func:`check_outputs` (whether each output path may be
written, before any work: never over an input, never over a file or directory that is not ours to replace),
:func:`write_output` and :func:`write_file` (atomic: a temporary file or directory beside the target, then a
rename; a failure or an interruption leaves the previous output as it was and no temporaries: the rename is
never cut in half by a signal, :func:`~peggy_jvm.interrupt.deferred`), and the handling of signed jars.

"Ours to replace" (docs/cli.md, Output): a missing path; an empty file or directory; a file of the output's
own form (class file, jar, JSON, XML, Graphviz); a directory every file of which an earlier run wrote, as its
:data:`OUTPUT_MARKER` lists. Nothing else is ever removed or overwritten.

Inputs: paths. Outputs: an :class:`InputSet`; bytes on disk. Errors are :class:`InputError` (and its
:class:`OutputError`) with a one-line message naming the user's path (or the jar entry) and, for OS errors, the
failure in words; never a temporary file's name.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from .interrupt import deferred


class InputError(Exception):
    """Unreadable or malformed input; ``path`` is what the user named (or the entry inside it)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


class InputKind(Enum):
    CLASS = "class"
    JAR = "jar"
    DIR = "dir"


@dataclass(slots=True)
class Entry:
    """One file of the input: its name inside the container (``/``-separated) and its bytes."""

    name: str
    data: bytes
    zinfo: zipfile.ZipInfo | None = None

    @property
    def is_class(self) -> bool:
        return self.name.endswith(".class")


@dataclass(slots=True)
class InputSet:
    kind: InputKind
    path: Path
    entries: list[Entry] = field(default_factory=list)

    def describe(self, entry: Entry) -> str:
        """How to name an entry in messages: the file itself, ``jar!/entry`` or ``dir/entry``."""
        if self.kind is InputKind.CLASS:
            return str(self.path)
        if self.kind is InputKind.JAR:
            return f"{self.path}!/{entry.name}"
        return str(self.path / entry.name)


_SIGNATURE_SUFFIXES = (".SF", ".RSA", ".DSA", ".EC")


def is_signature_file(name: str) -> bool:
    upper = name.upper()
    if not upper.startswith("META-INF/") or "/" in upper[len("META-INF/"):]:
        return False
    base = upper[len("META-INF/"):]
    return base.endswith(_SIGNATURE_SUFFIXES) or base.startswith("SIG-")


def read_input(path: Path) -> InputSet:
    if not path.exists():
        raise InputError(str(path), "no such file or directory")
    if path.is_dir():
        found = InputSet(InputKind.DIR, path)
        for p in sorted(path.rglob("*")):
            if p.is_file() and p != path / OUTPUT_MARKER:  # an earlier output's bookkeeping, not its content
                try:
                    found.entries.append(Entry(p.relative_to(path).as_posix(), p.read_bytes()))
                except OSError as e:
                    raise InputError(str(p), e.strerror or str(e)) from None
        return found
    try:
        with path.open("rb") as f:
            head = f.read(4)
    except OSError as e:
        raise InputError(str(path), e.strerror or str(e)) from None
    if path.suffix == ".class" or head == b"\xca\xfe\xba\xbe":
        return InputSet(InputKind.CLASS, path, [Entry(path.name, path.read_bytes())])
    if path.suffix in (".jar", ".zip") or head[:2] == b"PK":
        return _read_jar(path)
    raise InputError(str(path), "not a .class file, a .jar or a directory")


def _read_jar(path: Path) -> InputSet:
    found = InputSet(InputKind.JAR, path)
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if not info.filename:
                    raise InputError(str(path), "not a valid jar: an entry has an empty name")
                if info.is_dir():
                    found.entries.append(Entry(info.filename, b"", info))
                    continue
                try:
                    data = z.read(info)
                except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError,
                        RuntimeError) as e:  # RuntimeError: an encrypted entry
                    raise InputError(f"{path}!/{info.filename}", f"broken jar entry: {e}") from None
                found.entries.append(Entry(info.filename, data, info))
    except (zipfile.BadZipFile, ValueError, NotImplementedError) as e:  # e.g. "zip file version 25.5"
        raise InputError(str(path), f"not a valid jar: {e}") from None
    except OSError as e:
        raise InputError(str(path), e.strerror or str(e)) from None
    return found


def default_output(kind: InputKind, path: Path) -> Path:
    """Beside the input: ``X.class`` -> ``X-opt/X.class``; ``a.jar`` -> ``a-opt.jar``; ``d`` -> ``d-opt``."""
    p = path
    if p.name in ("", ".."):  # "." or "..": name the output after the directory itself
        p = p.resolve()
    if kind is InputKind.CLASS:
        return p.parent / f"{p.stem}-opt" / p.name
    if kind is InputKind.JAR:
        return p.with_name(f"{p.stem}-opt{p.suffix}")
    return p.with_name(p.name + "-opt")


def resolve_output(kind: InputKind, path: Path, output: Path | None) -> Path:
    """The file or directory to write. For a class input, ``-o`` naming a ``.class`` is that file; any other
    ``-o`` is a directory that receives the class under its own name."""
    if output is None:
        return default_output(kind, path)
    if kind is InputKind.CLASS and output.suffix != ".class":
        return output / path.name
    return output


# -- where output may go ----------------------------------------------------------------------------------------
OUTPUT_MARKER = ".peggy-jvm-output"
"""The file in every directory output: it lists the files written, so the next run may replace exactly those."""


class OutputError(InputError):
    """An output path that cannot or must not be written; ``path`` is the user's spelling of it."""


class Form(Enum):
    """What an output is; an existing file there is replaced only when it has this form (or is empty)."""

    CLASS = "a class file"
    JAR = "a jar (zip archive)"
    JSON = "a JSON report"
    XML = "an XML report"
    DOT = "a Graphviz file"
    HTML = "an HTML report"
    DIR = "a directory"


@dataclass(frozen=True, slots=True)
class Output:
    """A path the command will write, as the user spelled it (every message names it so), and its form."""

    path: Path
    form: Form


def output_form(kind: InputKind) -> Form:
    return {InputKind.CLASS: Form.CLASS, InputKind.JAR: Form.JAR, InputKind.DIR: Form.DIR}[kind]


def check_outputs(inputs: Sequence[Path], outputs: Sequence[Output]) -> None:
    """Raise :class:`OutputError` unless every output may be written, before any work is done.

    Refused: an output that is an input, lies inside an input directory, or (a directory output) contains an
    input or the current directory; two outputs that are one path, or one inside a directory output; a path
    whose nearest existing parent is a file or not writable; a file output over a directory, a non-regular
    file or a non-empty file of another form; a directory output over a file or over a non-empty directory that
    is not entirely an earlier peggy-jvm output (:data:`OUTPUT_MARKER`). Paths are compared resolved
    (symlinks, ``.``, ``..``)."""
    seen: list[tuple[Output, Path]] = []
    for out in outputs:
        real = _real(out.path)
        for inp in inputs:
            _check_apart(out, real, inp, _real(inp))
        for other, other_real in seen:
            if real == other_real:
                raise OutputError(str(out.path), f"is also the output {other.path}")
            if other.form is Form.DIR and real.is_relative_to(other_real):
                raise OutputError(str(out.path), f"is inside the output directory {other.path}")
            if out.form is Form.DIR and other_real.is_relative_to(real):
                raise OutputError(str(out.path), f"contains the output {other.path}")
        _check_place(out, real)
        seen.append((out, real))


def _real(path: Path) -> Path:
    """``path`` with symlinks, ``.`` and ``..`` resolved (what the kernel will write to)."""
    try:
        return path.resolve()
    except RuntimeError:  # Python 3.11's word for ELOOP
        raise OutputError(str(path), "is a symlink loop") from None
    except OSError as e:
        raise OutputError(str(path), os_error_words(e)) from None


def _check_apart(out: Output, real: Path, inp: Path, inp_real: Path) -> None:
    if real == inp_real:
        raise OutputError(str(out.path), f"is the input {inp}: choose another output")
    if real.is_relative_to(inp_real) and inp_real.is_dir():  # the next run would read it back
        raise OutputError(str(out.path), f"is inside the input directory {inp}: choose an output outside it")
    if out.form is Form.DIR and inp_real.is_relative_to(real):  # replacing the output would remove the input
        raise OutputError(str(out.path), f"contains the input {inp}: choose an output that does not")


def _check_place(out: Output, real: Path) -> None:
    """The output's own path and its nearest existing parent (see :func:`check_outputs`)."""
    for parent in out.path.parents:  # the user's spelling; the kernel resolves each prefix
        if parent.exists():
            if not parent.is_dir():
                raise OutputError(str(out.path), f"{parent} is a file, not a directory")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise OutputError(str(out.path), f"permission denied (cannot write in {parent})")
            break
    if not os.path.lexists(real):
        return
    try:
        if out.form is Form.DIR:
            if not real.is_dir():
                raise OutputError(str(out.path), "is a file (a directory input's output is a directory)")
            _check_ours(out, real)
        elif real.is_dir():
            raise OutputError(str(out.path), "is a directory")
        elif not real.is_file():
            raise OutputError(str(out.path), "is not a regular file")
        elif not _has_form(real, out.form):
            raise OutputError(str(out.path), f"exists and is not {out.form.value}: remove it or choose "
                                             "another path")
    except OSError as e:
        raise OutputError(str(out.path), os_error_words(e)) from None


def _has_form(real: Path, form: Form) -> bool:
    """Empty, or the form's signature: ``CAFEBABE``, a zip central directory, or a text form's first word."""
    with real.open("rb") as f:
        head = f.read(64)
    if not head:
        return True
    if form is Form.JAR:
        return zipfile.is_zipfile(real)
    if form is Form.CLASS:
        return head.startswith(b"\xca\xfe\xba\xbe")
    return head.lstrip().startswith(_TEXT_SIGNATURES[form])


_TEXT_SIGNATURES: dict[Form, bytes | tuple[bytes, ...]] = {
    Form.JSON: b"{", Form.XML: b"<", Form.DOT: (b"digraph", b"graph", b"strict"), Form.HTML: b"<!DOCTYPE html"}


def _check_ours(out: Output, real: Path) -> None:
    """An existing directory output may be replaced only when it is empty or entirely an earlier output."""
    cwd = Path.cwd().resolve()
    if cwd.is_relative_to(real):
        raise OutputError(str(out.path), "is or contains the current directory, which replacing it would remove: "
                                         "choose another output")
    if not any(real.iterdir()):
        return
    written = _marker_files(real)
    if written is None:
        raise OutputError(str(out.path), f"exists, is not empty and is not a peggy-jvm output (no {OUTPUT_MARKER}): "
                                         "choose a new or empty directory, or move it away")
    wanted_dirs = {parent for name in written for parent in PurePosixPath(name).parents}
    for dirpath, dirnames, filenames in os.walk(real, onerror=_raise):  # an unread directory is not known ours
        here = Path(dirpath)
        if not os.access(here, os.W_OK | os.X_OK):
            raise OutputError(str(out.path), f"permission denied (cannot remove the earlier output's {here})")
        for name in dirnames + filenames:
            p = here / name
            rel = PurePosixPath(p.relative_to(real).as_posix())
            mine = rel in wanted_dirs if p.is_dir() and not p.is_symlink() else (
                str(rel) in written or str(rel) == OUTPUT_MARKER)
            if not mine:
                raise OutputError(str(out.path), f"holds {rel}, which peggy-jvm did not write there: move it "
                                                 "away or choose another output")


def _raise(e: OSError) -> None:
    raise e


def _marker_files(real: Path) -> set[str] | None:
    """The files an earlier run wrote into ``real``, or None when ``real`` is no peggy-jvm output."""
    try:
        marker = json.loads((real / OUTPUT_MARKER).read_text(encoding="utf-8"))
        files = marker["files"]
        if (marker.get("written_by") != _WRITTEN_BY or not isinstance(files, list)
                or not all(isinstance(f, str) for f in files)):
            return None
        return set(files)
    except (OSError, ValueError, TypeError, KeyError):
        return None


_WRITTEN_BY = "peggy-jvm optimize"

_OS_WORDS = {errno.EACCES: "permission denied", errno.EPERM: "permission denied",
             errno.ENOSPC: "no space left on the device", errno.EDQUOT: "disk quota exceeded",
             errno.EROFS: "read-only file system", errno.EISDIR: "is a directory",
             errno.ENOTDIR: "a part of the path is a file, not a directory",
             errno.EEXIST: "a part of the path is a file, not a directory",
             errno.ENOTEMPTY: "is a directory that is not empty", errno.ELOOP: "is a symlink loop",
             errno.ENAMETOOLONG: "the name is too long"}


def os_error_words(e: OSError) -> str:
    """An OS error in words, without the file name (messages name the user's path themselves)."""
    return _OS_WORDS.get(e.errno or 0) or (e.strerror or str(e)).lower()


# -- writing ------------------------------------------------------------------------------------------------------
def write_output(inp: InputSet, target: Path, entries: list[Entry]) -> list[str]:
    """Write ``entries`` to ``target`` atomically; returns warnings (e.g. signature files dropped).

    ``target`` is checked again (:func:`check_outputs`'s rules for its own place) just before it is replaced.
    Any OS error is an :class:`OutputError` naming ``target``; nothing is left behind."""
    warnings: list[str] = []
    out = Output(target, output_form(inp.kind))
    if inp.kind is InputKind.CLASS:
        write_file(out, lambda f: f.write(entries[0].data))
    elif inp.kind is InputKind.JAR:
        dropped = [e.name for e in entries if is_signature_file(e.name)]
        if dropped:
            warnings.append(f"{inp.path}: signed jar: dropped signature files {', '.join(dropped)} "
                            "(the signatures no longer match)")
        write_file(out, lambda f: _write_jar(f, entries))
    else:
        _write_dir(out, inp, entries)
    return warnings


def write_file(out: Output, fill: Callable[[BinaryIO], object]) -> None:
    """Write one file atomically: ``fill`` writes a temporary file beside it, which is then renamed over it."""
    real = _real(out.path)
    tmp: Path | None = None
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{real.name}.", dir=real.parent)
        tmp = Path(name)
        os.chmod(fd, 0o666 & ~_umask())  # mkstemp makes it private; the output is an ordinary file
        with os.fdopen(fd, "wb") as f:
            fill(f)
        with deferred():  # an interruption comes before the check or after the rename, never between
            _check_place(out, real)
            os.replace(tmp, real)
    except OSError as e:
        raise OutputError(str(out.path), os_error_words(e)) from None
    finally:
        if tmp is not None:
            _remove(tmp)


def _write_jar(f: BinaryIO, entries: list[Entry]) -> None:
    with zipfile.ZipFile(f, "w") as z:
        for e in entries:
            if is_signature_file(e.name):
                continue
            info = e.zinfo if e.zinfo is not None else zipfile.ZipInfo(e.name)
            z.writestr(info, e.data, compress_type=info.compress_type)


def _write_dir(out: Output, inp: InputSet, entries: list[Entry]) -> None:
    """A new directory beside the target, with the marker, renamed over it (an earlier one moved aside first
    and put back if the rename fails)."""
    real = _real(out.path)
    new: Path | None = None
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        new = Path(tempfile.mkdtemp(prefix=f".{real.name}.new-", dir=real.parent))
        os.chmod(new, 0o777 & ~_umask())
        for e in entries:
            dest = new / e.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(e.data)
        marker = {"written_by": _WRITTEN_BY, "input": inp.path.resolve().name,
                  "files": [e.name for e in entries],
                  "note": "this directory is replaced as a whole by the next peggy-jvm run onto it, as long as "
                          "it holds only the files listed here"}
        (new / OUTPUT_MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")
        with deferred():  # never between moving the earlier output aside and the new one in
            _check_place(out, real)
            if real.exists():
                _swap_in(new, real)
            else:
                os.replace(new, real)
    except OSError as e:
        raise OutputError(str(out.path), os_error_words(e)) from None
    finally:
        if new is not None:
            shutil.rmtree(new, ignore_errors=True)


def _swap_in(new: Path, real: Path) -> None:
    """Move the earlier output ``real`` aside, ``new`` into its place, then delete the earlier one. Should the
    second rename fail, the earlier output is put back; the aside copy is deleted only once ``new`` is in."""
    old = Path(tempfile.mkdtemp(prefix=f".{real.name}.old-", dir=real.parent))
    try:
        os.replace(real, old)  # over the empty directory just made: a fresh name nobody else holds
    except OSError:
        old.rmdir()
        raise
    try:
        os.replace(new, real)
    except OSError:
        os.replace(old, real)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove(p: Path) -> None:
    try:
        p.unlink()
    except OSError:
        pass
