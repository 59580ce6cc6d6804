"""Differential execution on the JVM: generated arguments, the textual value encoding, and DiffRunner runs.

What this module owns
    The Python side of ``tests/java/DiffRunner.java`` (read its class comment for the wire format): encoding
    arguments and decoding results, seeded argument generation per method descriptor, running a batch of calls
    in one JVM (:func:`run_jvm`), and comparing two class trees call by call (:func:`compare`). It is a helper
    module for tests (the IR interpreter test, the lowering tests, later stages), not a test itself.

Inputs / outputs
    :class:`Call` (class, method, descriptor, argument values, state group) -> :class:`Result` (RET value text,
    THROW exception class, TIMEOUT or ERROR, plus what the call printed). Values on the Python side: ``int``
    (int, long, short, byte, char code unit, boolean as 0/1), ``float``, ``str`` (a Java string: UTF-16 code
    units, lone surrogates allowed), ``None``, ``list``/``tuple`` (an array; its descriptor comes from the
    parameter), :class:`ArrayVal`, :class:`BoxVal`, :class:`ObjVal`; also, duck-typed, any object with ``desc``
    and ``items`` attributes (an array, e.g. the IR interpreter's JArray), with ``cls`` and ``value`` (a boxed
    value) or with ``cls`` alone (any other object).

Invariants
    * Calls in one *group* share a class loader, hence static state, in order; a change of group starts a
      fresh loader (``!reset``), so groups never see each other's statics. The default group of a call is its
      method, so every method starts from freshly initialized classes.
    * Float results are compared bit for bit, except that every NaN equals every NaN (:func:`canonical`).
    * Everything is deterministic for a given seed.
    * A batch of calls (:func:`run_jvm`) runs as in a JVM of its own: by default one DiffRunner JVM per test
      process and JDK serves every batch (``DiffRunner --serve``, whose class comment says how a batch is kept
      from seeing an earlier one: its own class loaders, so ``<clinit>`` and static fields are the batch's own;
      its own worker thread and output capture; and the server ends after any batch that could have changed the
      JVM itself: a call stopped at its timeout, an Error outcome, a thread left running, a global setting
      changed), so a test process pays one JVM start, not one per batch. ``PEGGY_TEST_DIFFRUNNER=process``
      (or :data:`MODE` = ``"process"``) starts a JVM per batch instead.
"""
from __future__ import annotations

import atexit
import os
import random
import re
import select
import shutil
import struct
import subprocess
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from conftest import JAVAC_JVM_FLAGS
from support import cputime
from support.javac_cache import run_javac

ROOT = Path(__file__).resolve().parent.parent
RUNNER_SOURCE = ROOT / "tests" / "java" / "DiffRunner.java"

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

__all__ = [
    "ArrayVal", "BoxVal", "ObjVal", "Call", "Result", "Mismatch", "Comparison",
    "escape", "unescape", "encode_value", "decode_value", "canonical", "same_result",
    "generate_args", "harness_dir", "run_jvm", "compare", "parse_descriptor", "MODE", "SERVER_STATS",
]


# -- values ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ArrayVal:
    """A decoded array: its descriptor (``[I``) and elements."""

    desc: str
    items: tuple


@dataclass(frozen=True)
class BoxVal:
    """A decoded boxed primitive: the primitive's descriptor char and value."""

    desc: str
    value: object


@dataclass(frozen=True)
class ObjVal:
    """Any other object: only its class (internal name) is observable."""

    cls: str


# -- descriptors ----------------------------------------------------------------------------------------------
def _field_end(desc: str, i: int) -> int:
    while desc[i] == "[":
        i += 1
    return desc.index(";", i) + 1 if desc[i] == "L" else i + 1


def parse_descriptor(desc: str) -> tuple[list[str], str]:
    """``(parameter descriptors, return descriptor)`` of a method descriptor."""
    params = []
    i = 1
    while desc[i] != ")":
        j = _field_end(desc, i)
        params.append(desc[i:j])
        i = j
    return params, desc[i + 1:]


# -- the text encoding ----------------------------------------------------------------------------------------
_VERBATIM = frozenset(chr(c) for c in range(0x21, 0x7F)) - set("\\,{}")


def escape(text: str) -> str:
    """DiffRunner's escaping: printable ASCII except ``\\ , { }`` verbatim, ``\\\\``, else ``\\uXXXX`` per
    UTF-16 unit (a character above U+FFFF is written as its surrogate pair)."""
    out = []
    for ch in text:
        o = ord(ch)
        if ch in _VERBATIM:
            out.append(ch)
        elif ch == "\\":
            out.append("\\\\")
        elif o > 0xFFFF:
            o -= 0x10000
            out.append(f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}")
        else:
            out.append(f"\\u{o:04x}")
    return "".join(out)


def unescape(text: str) -> str:
    """Inverse of :func:`escape`; the result is a str of UTF-16 units (surrogates are not combined)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
        elif text.startswith("\\\\", i):
            out.append("\\")
            i += 2
        elif text.startswith("\\u", i) and i + 6 <= n:
            out.append(chr(int(text[i + 2:i + 6], 16)))
            i += 6
        else:
            raise ValueError(f"bad escape in {text!r}")
    return "".join(out)


def _f32_bits(v: float) -> int:
    try:
        return struct.unpack("<I", struct.pack("<f", v))[0]
    except OverflowError:
        return struct.unpack("<I", struct.pack("<f", float("inf") if v > 0 else float("-inf")))[0]


def _f64_bits(v: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", v))[0]


_PRIM_BOX = {"java/lang/Integer": "I", "java/lang/Long": "J", "java/lang/Float": "F", "java/lang/Double": "D",
             "java/lang/Boolean": "Z", "java/lang/Byte": "B", "java/lang/Character": "C", "java/lang/Short": "S"}


def encode_value(v: object, desc: str) -> str:
    """The DiffRunner text of value ``v`` whose static type is field descriptor ``desc``."""
    c = desc[0]
    if c in "IJSBCZ":
        return str(int(v))  # type: ignore[call-overload]
    if c == "F":
        return f"f:0x{_f32_bits(v):08x}"  # type: ignore[arg-type]
    if c == "D":
        return f"d:0x{_f64_bits(v):016x}"  # type: ignore[arg-type]
    if v is None:
        return "null"
    if isinstance(v, str):
        return "s:" + escape(v)
    if isinstance(v, (list, tuple)):
        if not desc.startswith("["):
            raise ValueError(f"a sequence for non-array type {desc}")
        return _encode_array(desc, v)
    items = getattr(v, "items", None)
    adesc = getattr(v, "desc", None)
    if isinstance(adesc, str) and adesc.startswith("[") and items is not None:
        return _encode_array(adesc, items)
    if isinstance(v, BoxVal):
        return f"box:{v.desc}:{encode_value(v.value, v.desc)}"
    cls = getattr(v, "cls", None)
    if isinstance(cls, str):
        if hasattr(v, "value") and cls in _PRIM_BOX:
            return f"box:{_PRIM_BOX[cls]}:{encode_value(v.value, _PRIM_BOX[cls])}"  # type: ignore[attr-defined]
        return f"obj:{cls}"
    raise ValueError(f"cannot encode {v!r} as {desc}")


def _encode_array(desc: str, items: Iterable) -> str:
    comp = desc[1:]
    parts = []
    for e in items:
        text = encode_value(e, comp)
        if comp[0] in "L[" and e is not None and "[" == text[:1]:
            text = "{" + text + "}"
        parts.append(text)
    return desc + ":" + ",".join(parts)


def _split_elements(s: str) -> list[str]:
    if not s:
        return []
    out, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(s[start:i])
            start = i + 1
    out.append(s[start:])
    return out


_ARRAY_HEAD = re.compile(r"^(\[+(?:[IJFDZBCS]|L[^;]+;)):")


def decode_value(text: str) -> object:
    """Python value of a DiffRunner value text (see the module doc); floats lose only NaN payloads."""
    if text == "null":
        return None
    if text.startswith("s:"):
        return unescape(text[2:])
    if text.startswith("f:0x"):
        return struct.unpack("<f", struct.pack("<I", int(text[4:], 16)))[0]
    if text.startswith("d:0x"):
        return struct.unpack("<d", struct.pack("<Q", int(text[4:], 16)))[0]
    if text.startswith("box:"):
        return BoxVal(text[4], decode_value(text[6:]))
    if text.startswith("obj:"):
        return ObjVal(text[4:])
    m = _ARRAY_HEAD.match(text)
    if m:
        items = []
        for e in _split_elements(text[m.end():]):
            items.append(decode_value(e[1:-1] if e.startswith("{") else e))
        return ArrayVal(m.group(1), tuple(items))
    return int(text)


_NAN_F = re.compile(r"f:0x([0-9a-f]{8})")
_NAN_D = re.compile(r"d:0x([0-9a-f]{16})")


def canonical(text: str | None) -> str | None:
    """``text`` with every NaN written the same way (``f:NaN`` / ``d:NaN``), so any NaN equals any NaN."""
    if text is None or ":0x" not in text:
        return text

    def f(m: re.Match) -> str:
        b = int(m.group(1), 16)
        return "f:NaN" if (b & 0x7F800000) == 0x7F800000 and b & 0x7FFFFF else m.group(0)

    def d(m: re.Match) -> str:
        b = int(m.group(1), 16)
        return "d:NaN" if (b & 0x7FF0000000000000) == 0x7FF0000000000000 and b & 0xFFFFFFFFFFFFF else m.group(0)

    return _NAN_D.sub(d, _NAN_F.sub(f, text))


# -- calls and results ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Call:
    """One call: ``cls`` internal name, method ``name`` and ``desc``, argument values. Consecutive calls with
    equal ``group`` share class loading and static state; None means the method itself is the group."""

    cls: str
    name: str
    desc: str
    args: tuple = ()
    group: object = None

    @property
    def state_group(self) -> object:
        return self.group if self.group is not None else (self.cls, self.name, self.desc)

    def line(self) -> str:
        params, _ = parse_descriptor(self.desc)
        if len(params) != len(self.args):
            raise ValueError(f"{self.name}{self.desc}: {len(self.args)} arguments for {len(params)} parameters")
        return " ".join([self.cls, self.name, self.desc, *(encode_value(a, p) for a, p in zip(self.args, params))])

    def __str__(self) -> str:
        params, _ = parse_descriptor(self.desc)
        shown = ", ".join(encode_value(a, p) for a, p in zip(self.args, params))
        return f"{self.cls}.{self.name}{self.desc}({shown})"


@dataclass(frozen=True)
class Result:
    """What one call did. ``kind``: RET, THROW, TIMEOUT or ERROR; ``value`` the RET value's text (None for void),
    ``exception`` the THROW class (internal name), ``message`` the ERROR text; ``out``/``err`` what it printed."""

    kind: str
    value: str | None = None
    exception: str | None = None
    message: str | None = None
    out: str = ""
    err: str = ""

    @property
    def decoded(self) -> object:
        return None if self.value is None else decode_value(self.value)

    def __str__(self) -> str:
        head = {"RET": f"RET {self.value}" if self.value is not None else "RET",
                "THROW": f"THROW {self.exception}", "ERROR": f"ERROR {self.message}"}.get(self.kind, self.kind)
        extra = (f" out={self.out!r}" if self.out else "") + (f" err={self.err!r}" if self.err else "")
        return head + extra


def same_result(a: Result, b: Result) -> bool:
    """Equal outcomes: same kind, value (bit-exact floats, NaN == NaN), exception class and printed text."""
    return (a.kind == b.kind and canonical(a.value) == canonical(b.value) and a.exception == b.exception
            and a.message == b.message and a.out == b.out and a.err == b.err)


# -- argument generation --------------------------------------------------------------------------------------
def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


_SMALL = {
    "I": [0, 1, -1, 2, 3, 5, 10, -7, 31, 64],
    "J": [0, 1, -1, 2, 3, 10, -5, 1000, 1 << 20, -(1 << 20)],
    "S": [0, 1, -1, 2, 100, -100],
    "B": [0, 1, -1, 2, 42, -42],
    "C": [ord("a"), ord("A"), ord("0"), ord(" "), ord("z"), 0],
    "Z": [0, 1],
    "F": [0.0, 1.0, -1.0, 0.5, 2.5, -3.25, 100.0],
    "D": [0.0, 1.0, -1.0, 0.5, 2.5, -3.25, 1e3],
    "Ljava/lang/String;": ["", "a", "abc", "hello", "Hello World", "x1y2", "aaa", "ab"],
}
_EXTREME = {
    "I": [INT_MIN, INT_MAX, INT_MIN + 1, INT_MAX - 1, 127, -128, 255, 32767, -32768, 65535, 1 << 16, -(1 << 24)],
    "J": [LONG_MIN, LONG_MAX, LONG_MIN + 1, LONG_MAX - 1, INT_MIN, INT_MAX, 1 << 32, -(1 << 40), 0xFFFFFFFF],
    "S": [32767, -32768, 255, -256],
    "B": [127, -128, 100, -100],
    "C": [0, 0xFFFF, 0xD800, 0xE9, 0x4E2D, 0x7F, 0x80],
    "Z": [0, 1],
    "F": [-0.0, float("nan"), float("inf"), float("-inf"), _f32(1.4e-45), _f32(3.4028235e38), _f32(1e10),
          2.0**31, -(2.0**63), _f32(0.1), _f32(-1.5e-40)],
    "D": [-0.0, float("nan"), float("inf"), float("-inf"), 5e-324, 1.7976931348623157e308, 1e10, 2.0**31,
          -(2.0**63), 2.0**53 + 2, 0.1, -2.2250738585072014e-308],
    "Ljava/lang/String;": [None, "h\u00e9llo", "\u65e5\u672c\u8a9e", "\ud83d\ude00", "\ud800", "a,b{c}\\ \"q\"",
                           "  spaced  ", "x" * 40, "\u0000nul", "A\u030a"],
}
_RANDOM_RANGE = {"I": (INT_MIN, INT_MAX), "J": (LONG_MIN, LONG_MAX), "S": (-32768, 32767), "B": (-128, 127),
                 "C": (0, 0xFFFF), "Z": (0, 1)}


def _random_value(desc: str, rng: random.Random, extreme: bool) -> object:
    c = desc[0]
    if desc in _SMALL or c in _SMALL:
        key = desc if desc in _SMALL else c
        pick = rng.random()
        if extreme and pick < 0.5:
            return rng.choice(_EXTREME[key])
        if pick < 0.8 or key == "Z":
            return rng.choice(_SMALL[key])
        if key in "IJ":
            return rng.randint(-100, 100) if not extreme else rng.randint(*_RANDOM_RANGE[key])
        if key in _RANDOM_RANGE:
            return rng.randint(*_RANDOM_RANGE[key])
        if key == "F":
            return _f32(rng.uniform(-1000, 1000))
        if key == "D":
            return rng.uniform(-1000, 1000)
        return "".join(rng.choice("abcxyz019 _-") for _ in range(rng.randint(0, 8)))
    if c == "[":
        if extreme and rng.random() < 0.2:
            return None
        n = rng.choice([0, 1, 2, 3, 4, 5, 8] if extreme else [0, 1, 2, 3, 4, 5])
        return [_random_value(desc[1:], rng, extreme) for _ in range(n)]
    if c == "L":
        if extreme or rng.random() < 0.1:
            return None
        raise ValueError(f"cannot generate a non-null {desc}")
    raise ValueError(f"no generator for {desc}")


def generate_args(desc: str, count: int = 20, seed: int = 0) -> list[tuple]:
    """``count`` argument tuples for method descriptor ``desc``, deterministic in ``(desc, seed)``.

    Parameters may be primitives, String, or arrays of those (any depth); other reference types get only
    null. The first half uses small, typical values (the first three inputs walk each type's typical values,
    then random picks); the second half mixes in the edge values (MIN/MAX, NaN, -0.0, infinities, subnormals,
    null, empty and non-ASCII strings, lone surrogates, longer arrays). Duplicates are avoided when possible.
    """
    params, _ = parse_descriptor(desc)
    rng = random.Random(zlib.crc32(f"{desc}/{seed}".encode()))
    out: list[tuple] = []
    seen: set[str] = set()
    attempts = 0
    while len(out) < count and attempts < count * 20:
        attempts += 1
        k = len(out)
        extreme = k >= count // 2
        args = []
        for j, p in enumerate(params):
            pool = _SMALL.get(p)
            if pool is not None and k < 3 and attempts <= count:
                args.append(pool[(k + j) % len(pool)])
            else:
                args.append(_random_value(p, rng, extreme))
        key = repr([encode_value(a, p) for a, p in zip(args, params)])
        if key in seen:
            continue
        seen.add(key)
        out.append(tuple(args))
    return out


# -- running the JVM ------------------------------------------------------------------------------------------
_HARNESS: dict[tuple[str, float], Path] = {}


def _java_tool(tool: str, java_home: Path | None) -> str:
    if java_home is not None:
        return str(Path(java_home) / "bin" / tool)
    found = shutil.which(tool)
    if found is None:
        raise RuntimeError(f"{tool} is not on PATH")
    return found


def harness_dir(java_home: Path | None = None) -> Path:
    """A directory holding the compiled DiffRunner; compiled once per process (and again if the source
    changes)."""
    key = (str(java_home), RUNNER_SOURCE.stat().st_mtime)
    found = _HARNESS.get(key)
    if found is not None and (found / "DiffRunner.class").is_file():
        return found
    out = Path(tempfile.mkdtemp(prefix="diffrunner-"))
    proc = run_javac([_java_tool("javac", java_home), *JAVAC_JVM_FLAGS, "-d", str(out), str(RUNNER_SOURCE)],
                     capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(f"could not compile {RUNNER_SOURCE}:\n{proc.stdout}{proc.stderr}")
    _HARNESS[key] = out
    return out


@atexit.register
def _remove_harnesses() -> None:
    # the compiled harness lives as long as the test process (a worker's run): 92 of these directories were
    # left in /tmp by earlier runs
    for out in _HARNESS.values():
        shutil.rmtree(out, ignore_errors=True)


#: how :func:`run_jvm` runs a batch: "server" (one DiffRunner JVM per test process and JDK answers every batch)
#: or "process" (a JVM per batch, as before session 17; ``PEGGY_TEST_DIFFRUNNER=process``)
MODE = os.environ.get("PEGGY_TEST_DIFFRUNNER", "server")

# the JVM options of a batch's JVM, whichever runs it (the server is started with them, so its class loading and
# verification are a batch JVM's: -Xverify:all applies to every class loader of the JVM)
_JVM_OPTIONS = ("-Xverify:all", "-Xss4m")


@dataclass
class _Ran:
    """What running one batch gave, as ``subprocess.run`` gives it for a batch JVM: the exit status (0 for a batch
    the server answered whole), the transcript, and what the JVM wrote on its stderr meanwhile."""

    returncode: int
    stdout: str
    stderr: str


class _Server:
    """One ``DiffRunner --serve`` JVM: batches in, transcripts out (the protocol: DiffRunner's class comment)."""

    def __init__(self, java: str, harness: Path) -> None:
        fd, name = tempfile.mkstemp(prefix="diffrunner-stderr-")
        self.stderr_path = Path(name)
        with os.fdopen(fd, "wb") as err:  # the JVM writes its stderr there; read back per batch by position
            self.proc = subprocess.Popen([java, *_JVM_OPTIONS, "-cp", str(harness), "DiffRunner", "--serve"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        cputime.track(self.proc)
        SERVER_STATS["starts"] += 1

    def alive(self) -> bool:
        return self.proc.poll() is None

    def run(self, classpath: str, timeout_ms: int, lines: list[str], process_timeout: float | None) -> _Ran:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        SERVER_STATS["batches"] += 1
        err_start = self.stderr_path.stat().st_size
        request = "\n".join([f"BATCH {timeout_ms}", classpath, *lines, "END"]) + "\n"
        try:
            # the server reads the whole batch before its first answer, so this cannot block on its output
            self.proc.stdin.write(request.encode("utf-8"))
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._ended(b"", err_start)
        fd = self.proc.stdout.fileno()
        buf = bytearray()
        deadline = None if process_timeout is None else time.monotonic() + process_timeout
        while True:
            if buf.endswith(b"\n"):
                last = buf.rfind(b"\n", 0, len(buf) - 1) + 1
                if buf.startswith(b"DONE ", last):
                    break
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                self.stop()
                raise subprocess.TimeoutExpired(self.proc.args, process_timeout or 0)
            if not select.select([fd], [], [], wait)[0]:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:  # the JVM ended inside the batch: System.exit by the code under test, a harness failure
                return self._ended(bytes(buf), err_start)
            buf += chunk
        done = buf[last:].decode("utf-8").split()
        if done[1] != "keep":  # the server ends after this batch (DiffRunner's class comment says when)
            SERVER_STATS["exits"] += 1
            self.proc.wait(timeout=60)
        return _Ran(0, buf[:last].decode("utf-8"), self._stderr(err_start))

    def _ended(self, out: bytes, err_start: int) -> _Ran:
        code = self.proc.wait()
        return _Ran(code, out.decode("utf-8", errors="replace"), self._stderr(err_start))

    def _stderr(self, start: int) -> str:
        with open(self.stderr_path, "rb") as f:
            f.seek(start)
            return f.read().decode("utf-8", errors="replace")

    def stop(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()  # end of input: the server exits
            except BrokenPipeError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr_path.unlink(missing_ok=True)


#: the servers of this process by JDK, and how often a server was started, a batch sent, a server ended by its
#: batch (a restart the next batch pays)
_SERVERS: dict[str, _Server] = {}
_SERVERS_LOCK = threading.Lock()
SERVER_STATS = {"starts": 0, "batches": 0, "exits": 0}


def _serve(java_home: Path | None, classpath: str, timeout_ms: int, lines: list[str],
           process_timeout: float | None) -> _Ran:
    key = str(java_home)
    with _SERVERS_LOCK:
        server = _SERVERS.get(key)
        if server is None or not server.alive():
            if server is not None:
                server.stop()
            server = _SERVERS[key] = _Server(_java_tool("java", java_home), harness_dir(java_home))
        try:
            return server.run(classpath, timeout_ms, lines, process_timeout)
        finally:
            if not server.alive():
                server.stop()
                del _SERVERS[key]


@atexit.register
def _stop_servers() -> None:
    # registered after _remove_harnesses, so it runs first (atexit runs last in, first out)
    for server in list(_SERVERS.values()):
        server.stop()
    _SERVERS.clear()


def _run_batch(java_home: Path | None, classpath: str, timeout_ms: int, lines: list[str],
               process_timeout: float | None) -> _Ran:
    """One batch's calls as a batch JVM runs them: in this process's server, or in a JVM of its own (:data:`MODE`)."""
    if MODE == "server":
        return _serve(java_home, classpath, timeout_ms, lines, process_timeout)
    proc = subprocess.run([_java_tool("java", java_home), *_JVM_OPTIONS, f"-Ddiff.timeout={timeout_ms}", "-cp",
                           classpath, "DiffRunner", "--batch"],
                          input="\n".join(lines) + "\n", capture_output=True, text=True, encoding="utf-8",
                          timeout=process_timeout)
    return _Ran(proc.returncode, proc.stdout, proc.stderr)


def run_jvm(classes_dir: Path | str, calls: Sequence[Call], *, java_home: Path | None = None,
            timeout_ms: int = 5000, extra_classpath: Sequence[Path | str] = (),
            process_timeout: float | None = 900, skip: frozenset[int] = frozenset()) -> list[Result]:
    """Run ``calls`` in one JVM (``-Xverify:all``) on the classes in ``classes_dir``; one Result per call.

    ``timeout_ms`` bounds each call (its result is then TIMEOUT); ``extra_classpath`` entries follow the
    classes on the class path. The calls at the indices in ``skip`` are not made (their result is a TIMEOUT
    saying so); static state is still reset where the state group changes in the whole list, so the other calls
    see what they would have seen. Raises RuntimeError if the JVM does not answer every call.
    """
    if not calls:
        return []
    if skip:
        made = [i for i in range(len(calls)) if i not in skip]
        if not made:
            return [_SKIPPED for _ in calls]
    lines = []
    group: object = object()
    for i, c in enumerate(calls):
        if c.state_group != group:
            lines.append("!reset")
            group = c.state_group
        if i not in skip:
            lines.append(c.line())
    if skip:
        answered = _run_lines(classes_dir, calls, [calls[i] for i in made], lines, java_home=java_home,
                              timeout_ms=timeout_ms, extra_classpath=extra_classpath,
                              process_timeout=process_timeout)
        if len(answered) == len(calls):  # a skipping run in trouble was made again with every call (_run_lines)
            return answered
        out = [_SKIPPED] * len(calls)
        for i, r in zip(made, answered):
            out[i] = r
        return out
    return _run_lines(classes_dir, calls, calls, lines, java_home=java_home, timeout_ms=timeout_ms,
                      extra_classpath=extra_classpath, process_timeout=process_timeout)


# a call run_jvm was asked not to make
_SKIPPED = Result("TIMEOUT", message="not run: its outcome could not be compared")


def _run_lines(classes_dir: Path | str, all_calls: Sequence[Call], calls: Sequence[Call], lines: list[str], *,
               java_home: Path | None, timeout_ms: int, extra_classpath: Sequence[Path | str],
               process_timeout: float | None) -> list[Result]:
    """One DiffRunner JVM over ``lines`` (the ``calls`` it makes, resets among them); ``all_calls`` is the list
    they were chosen from (run whole, in halves, when the harness runs out of memory)."""
    cp = os.pathsep.join([str(classes_dir), *(str(e) for e in extra_classpath), str(harness_dir(java_home))])
    for attempt in range(2):
        # a second attempt runs in a fresh JVM: a batch JVM's is fresh anyway; the server ended after the first
        # (it ends after a batch whose JVM died, and after any Error outcome such as NoClassDefFoundError)
        proc = _run_batch(java_home, cp, timeout_ms, lines, process_timeout)
        results = _parse_transcript(proc.stdout)
        # a timed-out call's thread can still hold a huge array when generated sizes are near 2**31; on a
        # loaded machine the harness itself may then die of OutOfMemoryError, sometimes too starved to print
        # anything, or a JDK class may fail to initialize under it (seen: every later string concatenation of
        # the run threw NoClassDefFoundError, StringConcatFactory being unusable in that JVM): such a batch runs
        # once more in a fresh JVM. What happens again is the result (a wrong result is never retried).
        poisoned = any(r.kind == "THROW" and r.exception == "java/lang/NoClassDefFoundError" for r in results)
        if (proc.returncode == 0 or len(results) == len(calls)) and not poisoned:
            break
    if proc.returncode != 0 or len(results) != len(calls):
        groups = _state_groups(calls)
        if len(calls) != len(all_calls):  # a skipping run in trouble: made again with every call
            return run_jvm(classes_dir, all_calls, java_home=java_home, timeout_ms=timeout_ms,
                           extra_classpath=extra_classpath, process_timeout=process_timeout)
        if "OutOfMemoryError" in proc.stderr and len(groups) > 1:
            # still dying of memory: the groups (calls sharing static state) run apart, and a group that alone
            # kills its JVM twice is inconclusive (TIMEOUT) rather than a failure of the code under test
            half = len(groups) // 2
            parts = [[c for g in groups[:half] for c in g], [c for g in groups[half:] for c in g]]
            return [r for part in parts for r in run_jvm(classes_dir, part, java_home=java_home,
                                                           timeout_ms=timeout_ms, extra_classpath=extra_classpath,
                                                           process_timeout=process_timeout)]
        if "OutOfMemoryError" in proc.stderr:
            return [Result("TIMEOUT", message="the harness ran out of memory") for _ in calls]
        raise RuntimeError(f"DiffRunner answered {len(results)} of {len(calls)} calls (exit {proc.returncode}):\n"
                           f"{proc.stderr[-3000:]}")
    return results


def _state_groups(calls: Sequence[Call]) -> list[list[Call]]:
    """``calls`` cut where the state group changes (the harness resets static state there)."""
    out: list[list[Call]] = []
    group: object = object()
    for c in calls:
        if not out or c.state_group != group:
            out.append([])
            group = c.state_group
        out[-1].append(c)
    return out


def _parse_transcript(text: str) -> list[Result]:
    results: list[Result] = []
    out = err = ""
    for line in text.splitlines():
        head, _, rest = line.partition(" ")
        if head == "OUT":
            out = unescape(rest)
        elif head == "ERR":
            err = unescape(rest)
        else:
            if head == "RET":
                r = Result("RET", value=rest or None, out=out, err=err)
            elif head == "THROW":
                r = Result("THROW", exception=rest, out=out, err=err)
            elif head == "TIMEOUT":
                r = Result("TIMEOUT", out=out, err=err)
            elif head == "ERROR":
                r = Result("ERROR", message=unescape(rest), out=out, err=err)
            else:
                raise RuntimeError(f"unexpected DiffRunner line: {line!r}")
            results.append(r)
            out = err = ""
    return results


# -- comparing two class trees --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mismatch:
    call: Call
    original: Result
    rewritten: Result

    def __str__(self) -> str:
        return f"{self.call}\n    original:  {self.original}\n    rewritten: {self.rewritten}"


@dataclass
class Comparison:
    """The outcome of :func:`compare`. ``inconclusive`` counts calls not compared: a TIMEOUT on either side, and
    every later call of the same group (its static state is then unknown)."""

    calls: list[Call]
    original: list[Result]
    rewritten: list[Result]
    mismatches: list[Mismatch] = field(default_factory=list)
    compared: int = 0
    inconclusive: int = 0

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def report(self, limit: int = 20) -> str:
        head = (f"{self.compared} calls compared, {len(self.mismatches)} differ, "
                f"{self.inconclusive} inconclusive")
        return "\n".join([head, *(str(m) for m in self.mismatches[:limit])])


def compare_results(calls: Sequence[Call], original: Sequence[Result], rewritten: Sequence[Result]) -> Comparison:
    """Pair up two result lists of the same calls (see :class:`Comparison`)."""
    cmp = Comparison(list(calls), list(original), list(rewritten))
    tainted: set = set()
    for c, a, b in zip(calls, original, rewritten):
        g = c.state_group
        if g in tainted or a.kind == "TIMEOUT" or b.kind == "TIMEOUT":
            tainted.add(g)
            cmp.inconclusive += 1
            continue
        cmp.compared += 1
        if not same_result(a, b):
            cmp.mismatches.append(Mismatch(c, a, b))
    return cmp


def compare(original_dir: Path | str, rewritten_dir: Path | str, calls: Sequence[Call], *,
            java_home: Path | None = None, timeout_ms: int = 5000,
            extra_classpath: Sequence[Path | str] = (), original: Sequence[Result] | None = None) -> Comparison:
    """Run the same calls on two class trees (one JVM each) and compare every result: return value (floats
    bit-exact, NaN == NaN), exception class, printed output. ``comparison.ok`` is True when nothing differs;
    ``comparison.report()`` lists the differences. ``original``: the original side's results of these calls,
    already run (:func:`run_jvm` with the same arguments), for a test that compares several rewritten trees
    with one original: its calls that time out spin for the whole timeout once, not once per tree."""
    a = original if original is not None else run_jvm(original_dir, calls, java_home=java_home,
                                                          timeout_ms=timeout_ms, extra_classpath=extra_classpath)
    if len(a) != len(calls):
        raise ValueError(f"{len(a)} original results for {len(calls)} calls")
    # what compare_results leaves uncompared whatever the rewritten side does (a call that timed out on the
    # original and the later calls of its group) is not run there: a call that times out spins for the whole
    # timeout, the most expensive part of many batches
    b = run_jvm(rewritten_dir, calls, java_home=java_home, timeout_ms=timeout_ms, extra_classpath=extra_classpath,
                skip=_uncomparable(calls, a))
    # A call whose outcome is an OutOfMemoryError on one side only may have met a heap an earlier call of its
    # batch filled (a timed-out call's thread still holding a huge array: _run_lines): run it again on both
    # sides, each in a fresh JVM after the calls of its state group before it; what happens again is the
    # result (seen once: FrameMerge.refTernaries(0, 1), a few small objects, "threw" it on the lowered side)
    again = [i for i, (x, y) in enumerate(zip(a, b)) if _out_of_memory(x) != _out_of_memory(y)]
    if again:
        a, b = list(a), list(b)
        for i in again:
            group = calls[i].state_group
            start = i
            while start > 0 and calls[start - 1].state_group == group:
                start -= 1
            alone = calls[start:i + 1]
            a[i] = run_jvm(original_dir, alone, java_home=java_home, timeout_ms=timeout_ms,
                           extra_classpath=extra_classpath)[-1]
            b[i] = run_jvm(rewritten_dir, alone, java_home=java_home, timeout_ms=timeout_ms,
                           extra_classpath=extra_classpath)[-1]
    return compare_results(calls, a, b)


def _out_of_memory(result: Result) -> bool:
    return result.kind == "THROW" and result.exception == "java/lang/OutOfMemoryError"


def _uncomparable(calls: Sequence[Call], original: Sequence[Result]) -> frozenset[int]:
    """The indices of the calls compare_results counts inconclusive from the original side alone."""
    tainted: set = set()
    out = set()
    for i, (c, a) in enumerate(zip(calls, original)):
        if c.state_group in tainted or a.kind == "TIMEOUT":
            tainted.add(c.state_group)
            out.add(i)
    return frozenset(out)
