"""``javap`` for the tests, run in one JVM per test process rather than one JVM per listing.

The tests read instructions, line tables and stack maps off ``javap`` (an oracle independent of our class-file
reader) dozens of times per file; each ``javap`` command is a JVM start and costs ~0.3 s of CPU, a request to a
running JVM a few milliseconds. :func:`javap` hands its arguments to ``tests/java/ToolServer.java``, which runs
the JDK's own javap through ``java.util.spi.ToolProvider`` (the same tool the ``javap`` command runs: the same
text, byte for byte), started on the first request and ended when the process exits (end of its input).

Input: javap's arguments, as on its command line. Output: a ``subprocess.CompletedProcess`` as
``subprocess.run([javap, *args], capture_output=True, text=True)`` gives it (exit status, stdout, stderr);
``check=True`` raises ``subprocess.CalledProcessError`` on a non-zero status, as ``subprocess.run`` does.
Invariants: javap reads the class files anew on every request (nothing is cached between requests); one server
per process and JDK, its requests one at a time.
"""
from __future__ import annotations

import atexit
import subprocess
import tempfile
import threading
from pathlib import Path

from conftest import javac_command

from support.javac_cache import run_javac

SERVER_SOURCE = Path(__file__).resolve().parent.parent / "java" / "ToolServer.java"

_servers: dict[str, subprocess.Popen] = {}
_lock = threading.Lock()


def _start(java_home: Path) -> subprocess.Popen:
    out = Path(tempfile.mkdtemp(prefix="toolserver-"))
    run_javac([*javac_command(java_home), "-d", str(out), str(SERVER_SOURCE)], check=True, capture_output=True,
              stdin=subprocess.DEVNULL)
    return subprocess.Popen([str(java_home / "bin" / "java"), "-cp", str(out), "ToolServer"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def _request(server: subprocess.Popen, tool: str, args: list[str]) -> tuple[int, str, str]:
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(f"{len(args)}\n{tool}\n".encode() + "".join(f"{a}\n" for a in args).encode())
    server.stdin.flush()
    head = server.stdout.readline().split()
    if len(head) != 3:
        raise RuntimeError(f"ToolServer ended without answering ({tool} {' '.join(args)})")
    out = server.stdout.read(int(head[1])).decode()
    err = server.stdout.read(int(head[2])).decode()
    return int(head[0]), out, err


def javap(java_home: Path, *args: str | Path, check: bool = False) -> subprocess.CompletedProcess:
    """``javap ARGS`` (see the module docstring)."""
    argv = [str(a) for a in args]
    if any("\n" in a for a in argv):
        raise ValueError(f"an argument with a line break cannot be sent to the ToolServer: {argv}")
    key = str(java_home)
    with _lock:
        server = _servers.get(key)
        if server is None or server.poll() is not None:
            server = _servers[key] = _start(java_home)
        code, out, err = _request(server, "javap", argv)
    done = subprocess.CompletedProcess([str(java_home / "bin" / "javap"), *argv], code, out, err)
    if check:
        done.check_returncode()
    return done


@atexit.register
def _stop_servers() -> None:
    for server in _servers.values():
        if server.stdin is not None:
            server.stdin.close()  # end of input: the server returns from main
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
