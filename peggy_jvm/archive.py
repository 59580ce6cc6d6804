"""Inputs and outputs of the command line: a ``.class`` file, a ``.jar`` or a directory of classes.

Owns: :func:`read_input` (what to process: class entries and every other entry, copied verbatim),
:func:`default_output` and :func:`write_output` (atomic: a temporary file or directory beside the target,
then a rename; a failure leaves no partial output), and the handling of signed jars.

Inputs: a path. Outputs: an :class:`InputSet`; bytes on disk. Errors are :class:`InputError` with a one-line
message naming the file (and the jar entry) at fault.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path


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
            if p.is_file():
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


def default_output(inp: InputSet) -> Path:
    """Beside the input: ``X.class`` -> ``X-opt/X.class``; ``a.jar`` -> ``a-opt.jar``; ``d`` -> ``d-opt``."""
    p = inp.path
    if p.name in ("", ".."):  # "." or "..": name the output after the directory itself
        p = p.resolve()
    if inp.kind is InputKind.CLASS:
        return p.parent / f"{p.stem}-opt" / p.name
    if inp.kind is InputKind.JAR:
        return p.with_name(f"{p.stem}-opt{p.suffix}")
    return p.with_name(p.name + "-opt")


def resolve_output(inp: InputSet, output: Path | None) -> Path:
    """The file or directory to write. For a class input, ``-o`` naming a ``.class`` is that file; any other
    ``-o`` is a directory that receives the class under its own name."""
    if output is None:
        return default_output(inp)
    if inp.kind is InputKind.CLASS and output.suffix != ".class":
        return output / inp.path.name
    return output


def write_output(inp: InputSet, target: Path, entries: list[Entry]) -> list[str]:
    """Write ``entries`` to ``target`` atomically; returns warnings (e.g. signature files dropped)."""
    warnings: list[str] = []
    target.parent.mkdir(parents=True, exist_ok=True)
    if inp.kind is InputKind.CLASS:
        _atomic_file(target, entries[0].data)
    elif inp.kind is InputKind.JAR:
        dropped = [e.name for e in entries if is_signature_file(e.name)]
        if dropped:
            warnings.append(f"{inp.path}: signed jar: dropped signature files {', '.join(dropped)} "
                            "(the signatures no longer match)")
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; the output is an ordinary file
            with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w") as z:
                for e in entries:
                    if is_signature_file(e.name):
                        continue
                    info = e.zinfo if e.zinfo is not None else zipfile.ZipInfo(e.name)
                    z.writestr(info, e.data, compress_type=info.compress_type)
            os.replace(tmp, target)
        except BaseException:
            _remove(Path(tmp))
            raise
    else:
        tmpdir = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            os.chmod(tmpdir, 0o777 & ~_umask())
            for e in entries:
                dest = tmpdir / e.name
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(e.data)
            if target.exists():
                old = target.with_name(f".{target.name}.old-{os.getpid()}")
                os.replace(target, old)
                os.replace(tmpdir, target)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmpdir, target)
        except BaseException:
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise
    return warnings


def _atomic_file(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        _remove(Path(tmp))
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove(p: Path) -> None:
    try:
        p.unlink()
    except OSError:
        pass
