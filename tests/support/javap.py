"""``javap`` for the tests, run in this process's tool server (tests/support/toolserver.py) rather than one JVM
per listing.

The tests read instructions, line tables and stack maps off ``javap`` (an oracle independent of our class-file
reader) dozens of times per file; each ``javap`` command is a JVM start and costs ~0.3 s of CPU, a request to the
running server a few milliseconds, and the server runs the JDK's own javap (the same text, byte for byte).

Input: javap's arguments, as on its command line. Output: a ``subprocess.CompletedProcess`` as
``subprocess.run([javap, *args], capture_output=True, text=True)`` gives it (exit status, stdout, stderr);
``check=True`` raises ``subprocess.CalledProcessError`` on a non-zero status, as ``subprocess.run`` does.
Invariants: javap reads the class files anew on every request (nothing is cached between requests).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from support.toolserver import run_tool


def javap(java_home: Path, *args: str | Path, check: bool = False) -> subprocess.CompletedProcess:
    """``javap ARGS`` (see the module docstring)."""
    argv = [str(a) for a in args]
    code, out, err = run_tool(java_home, "javap", argv)
    done = subprocess.CompletedProcess([str(java_home / "bin" / "javap"), *argv], code, out, err)
    if check:
        done.check_returncode()
    return done
