"""The JDK's command-line tools (``javap``, ``javac``) for the tests, run in one JVM per test process and JDK.

A ``javap`` or ``javac`` command is a JVM start plus the tool's warm-up: ~0.3 s of CPU for a small javap, ~1 s
for a small compile (measured: 20 fixture sources, 22.4 s of CPU as commands). A request to a running JVM that
has loaded the tool costs a few milliseconds (javap) or ~0.1 s (a compile; the same 40 sources, 4.0 s of CPU
with the server's start). :func:`run_tool` hands a tool's arguments to ``tests/java/ToolServer.java``, which
runs the JDK's own tool through ``java.util.spi.ToolProvider`` (the code the command runs: the same output,
byte for byte), started on the first request and ended when the process exits (end of its input).

Input: a JDK's home, a tool's name, its arguments (each without a line break, every path absolute: the
server's working directory is not the caller's). Output: the tool's exit status, output and error text.
Invariants: one server per process and JDK, its requests one at a time; a tool reads its files anew on each
request; the server's compiled class and the server itself are gone when the process exits (nothing left in
the temporary directory).

:func:`run_harness` does the same for a test harness of this project's that answers requests in the same format
with ``--serve`` (``tests/java/VerifyClasses.java``, conftest's ``verifier``): one server per process and
(JDK, class path, class, JVM options).
"""
from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from support import cputime

SERVER_SOURCE = Path(__file__).resolve().parent.parent / "java" / "ToolServer.java"

# C1 only and the serial collector: the server's requests are many short ones (javac's compiles of a few
# classes), for which C2's compiles never pay back: 40 compiles 9.4 s of CPU with both tiers, 4.0 s with C1
SERVER_JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")

_servers: dict[str, subprocess.Popen] = {}
_class_dirs: list[Path] = []
_lock = threading.Lock()


def _start(java_home: Path) -> subprocess.Popen:
    # the server's own compile goes through the cache but not through a server (there is none yet)
    from support.javac_cache import run_javac
    out = Path(tempfile.mkdtemp(prefix="toolserver-"))
    _class_dirs.append(out)
    run_javac([str(java_home / "bin" / "javac"), "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-d",
               str(out), str(SERVER_SOURCE)], check=True, capture_output=True, stdin=subprocess.DEVNULL,
              via_server=False)
    server = subprocess.Popen([str(java_home / "bin" / "java"), *SERVER_JVM_FLAGS, "-cp", str(out), "ToolServer"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    cputime.track(server)  # its CPU charged to the tests that use it, not to the process's exit
    return server


def _request(server: subprocess.Popen, tool: str, args: list[str]) -> tuple[int, str, str]:
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(f"{len(args)}\n{tool}\n".encode() + "".join(f"{a}\n" for a in args).encode())
    server.stdin.flush()
    head = server.stdout.readline().split()
    if len(head) != 3:
        raise RuntimeError(f"{tool} server ended without answering ({tool} {' '.join(args)})")
    out = server.stdout.read(int(head[1])).decode()
    err = server.stdout.read(int(head[2])).decode()
    return int(head[0]), out, err


def run_tool(java_home: Path, tool: str, args: list[str]) -> tuple[int, str, str]:
    """Run ``tool ARGS`` of the JDK at ``java_home`` in this process's server: (exit status, output, errors)."""
    if any("\n" in a for a in args):
        raise ValueError(f"an argument with a line break cannot be sent to the ToolServer: {args}")
    key = str(java_home)
    with _lock:
        server = _servers.get(key)
        if server is None or server.poll() is not None:
            server = _servers[key] = _start(java_home)
        return _request(server, tool, args)


def run_harness(java_home: Path, classpath: Path, main_class: str, jvm_flags: tuple[str, ...],
                args: list[str]) -> tuple[int, str, str]:
    """``java JVM_FLAGS -cp CLASSPATH MAIN_CLASS ARGS`` answered by this process's ``MAIN_CLASS --serve`` server
    (started on the first request; again if it died): (exit status, output, errors)."""
    if any("\n" in a for a in args):
        raise ValueError(f"an argument with a line break cannot be sent to {main_class} --serve: {args}")
    key = "\0".join([str(java_home), str(classpath), main_class, *jvm_flags])
    with _lock:
        server = _servers.get(key)
        if server is None or server.poll() is not None:
            server = _servers[key] = subprocess.Popen(
                [str(java_home / "bin" / "java"), *jvm_flags, "-cp", str(classpath), main_class, "--serve"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            cputime.track(server)
        return _request(server, main_class, args)


@atexit.register
def _stop_servers() -> None:
    for server in _servers.values():
        if server.stdin is not None:
            server.stdin.close()  # end of input: the server returns from main
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    for out in _class_dirs:
        shutil.rmtree(out, ignore_errors=True)
