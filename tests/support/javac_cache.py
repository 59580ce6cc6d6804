"""The tests' Java compiles, each done once: a compile's class files cached under the temporary directory, keyed
by everything that decides them.

Input: a compiler command line (``javac ...`` or ``java -cp ecj.jar ... Main ...``) with ``-d OUT`` and its
source files, as a test would hand it to ``subprocess.run``. Output: the same ``subprocess.CompletedProcess``
(its exit status, stdout and stderr replayed on a hit: a warning names the source path of the compile that
filled the entry) and the same class files under OUT. A compile costs ~0.75 s of CPU (a JVM start and the
compiler's warm-up); the tests compile the same sources again and again (a parametrized test, a module fixture
per worker, the same pair in several files) and the same sources on every run, so a hit saves all of it.

Invariants
    * The key is the whole command line except OUT, each source by its file name and text (not its directory,
      a test's temporary one), the working directory (javac's default class path) by the names at its top
      (not its path, so that checkouts share entries), and for each other argument naming a file (the
      compiler's executable, ecj's jar) its real path, size and time: the JDK or the ecj jar updated, a source
      edited, a flag changed is another key. A command whose output could depend on anything else (an argument naming a directory: a
      class path, a source path; an ``@argfile``) is never cached, only run.
    * Only a compile that succeeded is stored; a failing one runs every time and its result (exit status,
      messages) is the test's, as ``subprocess.run`` gives it. An entry is written in a private directory and renamed into place: a reader sees a complete
      entry or none, whichever worker or checkout wrote it.
    * Class files are copied with a fresh modification time, as the compiler would have written them.
    * A ``javac`` compile (one the cache stores, or one it cannot: a class path directory) is run in this
      process's tool server (tests/support/toolserver.py: the JDK's javac through ``java.util.spi.ToolProvider``,
      ~0.1 s of CPU a compile instead of ~1 s for a JVM start and the compiler's warm-up: a cold run makes ~230
      of them) when the server's javac sees exactly what the command's would: every path absolute, no
      ``cwd``/``env`` of its own, no ``$CLASSPATH``; the command's default class path (the working directory) is
      then given explicitly, its ``-J`` options (the launcher's JVM) dropped. A compile the server fails is run
      again as the command, so that a failure's result is always the command's own.
    * ``PEGGY_TEST_JAVAC_CACHE=off`` runs every compile as its command (a cold run's cost, measured).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

CACHE_ENV = "PEGGY_TEST_JAVAC_CACHE"


def cache_root() -> Path:
    return Path(tempfile.gettempdir()) / f"peggy-jvm-javac-cache-{os.getuid()}"


def _working_directory_key() -> str:
    """The working directory as javac's default class path sees it at its top: its entries' names, with the text
    of each class or source file there (a type of the unnamed package javac would find). What lies deeper would
    matter only to a source naming a package after one of those directories (``tests``, ``peggy_jvm``, ...)."""
    cwd = Path.cwd()
    h = hashlib.sha256()
    for name in sorted(os.listdir(cwd)):
        h.update(name.encode() + b"\0")
        if name.endswith((".java", ".class")) and (cwd / name).is_file():
            h.update((cwd / name).read_bytes() + b"\0")
    return h.hexdigest()


def _key(command: Sequence[str], out_index: int) -> str | None:
    """The cache key of ``command`` (its ``-d`` value at ``out_index`` left out), or None when it is not
    cacheable."""
    h = hashlib.sha256()
    # javac's default class and source path: $CLASSPATH, else the working directory, by what javac could find at
    # its top (not by its path: every checkout, a CI run's fresh clone too, runs the tests from its own directory,
    # and keyed by the path each started cold: 221 of a fast-tier run's compiles, ~0.75 s of CPU each)
    h.update(f"{os.environ.get('CLASSPATH')}\0{_working_directory_key()}\0".encode())
    for i, arg in enumerate(command):
        if i == out_index:
            h.update(b"<out>\0")
            continue
        if arg.startswith("@"):
            return None
        path = Path(arg)
        if not path.is_absolute() and os.sep not in arg:
            h.update(arg.encode() + b"\0")  # a flag or value, not a path
            continue
        if path.is_dir():
            return None
        if arg.endswith(".java") and path.is_file():
            # a source by name and text, wherever the test wrote it (javac does not search its directory)
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        elif path.is_file():
            st = path.resolve().stat()
            h.update(f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}\0".encode())
        else:
            h.update(arg.encode() + b"\0")
    return h.hexdigest()


def run_javac(command: Sequence[str], *, check: bool = False, capture_output: bool = False,
              text: bool = False, via_server: bool = True, **kwargs: Any) -> subprocess.CompletedProcess:
    """``subprocess.run(command, check=..., capture_output=..., text=..., **kwargs)`` for a compile, served from
    the cache when the same compile succeeded before (``via_server=False``: a compile missing from the cache is
    run as its command, never in the tool server: the server's own compile)."""
    command = [str(a) for a in command]
    out_index = command.index("-d") + 1 if "-d" in command else -1
    key = _key(command, out_index) if out_index > 0 and os.environ.get(CACHE_ENV) != "off" else None
    if key is None:
        served = _served(command, kwargs) if via_server and os.environ.get(CACHE_ENV) != "off" else None
        if served is not None:  # not cacheable, but the server's javac sees what the command's would
            return _as_asked(command, 0, served.stdout, served.stderr, check, capture_output, text)
        return subprocess.run(command, check=check, capture_output=capture_output, text=text, **kwargs)
    entry = cache_root() / key
    if not (entry / "result.json").is_file():
        failed = _store(command, out_index, entry, kwargs, via_server)
        if failed is not None:
            return _as_asked(command, failed.returncode, failed.stdout, failed.stderr, check, capture_output, text)
    shutil.copytree(entry / "classes", command[out_index], dirs_exist_ok=True, copy_function=shutil.copyfile)
    result = json.loads((entry / "result.json").read_text())
    return _as_asked(command, 0, result["stdout"], result["stderr"], check, capture_output, text)


def _as_asked(command: list[str], status: int, stdout: str, stderr: str, check: bool, capture_output: bool,
              text: bool) -> subprocess.CompletedProcess:
    """The compiler's result as ``subprocess.run`` with these options would have given it."""
    if not capture_output:  # the compiler's messages go where they would have gone
        print(stdout, end="")
        print(stderr, end="", file=sys.stderr)
        done = subprocess.CompletedProcess(command, status, None, None)
    elif text:
        done = subprocess.CompletedProcess(command, status, stdout, stderr)
    else:
        done = subprocess.CompletedProcess(command, status, stdout.encode(), stderr.encode())
    if check:
        done.check_returncode()
    return done


def _server_request(command: list[str], kwargs: dict) -> tuple[Path, list[str]] | None:
    """The JDK home and the javac arguments that make the tool server's javac compile what ``command`` compiles,
    or None when the server could see something else (module docstring)."""
    exe = Path(command[0])
    if exe.name != "javac" or "cwd" in kwargs or "env" in kwargs or os.environ.get("CLASSPATH") is not None:
        return None
    java_home = exe.resolve().parent.parent if exe.is_absolute() else None
    if java_home is None or not (java_home / "bin" / "java").is_file():
        return None
    args = []
    for arg in command[1:]:
        if arg.startswith("-J"):
            continue  # an option of the launcher's JVM, not of the compiler
        if (os.sep in arg or arg.endswith(".java")) and not os.path.isabs(arg):
            return None  # a relative path: the server's working directory is not this one
        args.append(arg)
    if not {"-cp", "-classpath", "--class-path"} & set(args):
        # the javac command's default class (and source) path; a ToolProvider's would be the server's own
        args = ["-classpath", os.getcwd(), *args]
    return java_home, args


def _served(command: list[str], kwargs: dict) -> subprocess.CompletedProcess | None:
    """``command``'s compile done in the tool server when it can be and succeeds there, else None."""
    request = _server_request(command, kwargs)
    if request is None:
        return None
    from support.toolserver import run_tool
    code, out, err = run_tool(request[0], "javac", request[1])
    return subprocess.CompletedProcess(command, 0, out, err) if code == 0 else None


def _store(command: list[str], out_index: int, entry: Path, kwargs: dict,
           via_server: bool = True) -> subprocess.CompletedProcess | None:
    """Compile into a private directory; on success rename it to ``entry`` (a concurrent writer's equal entry
    may win the rename: either is the same compile) and return None, else return the failed compile."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{entry.name[:16]}-", dir=entry.parent))
    try:
        run = [*command[:out_index], str(work / "classes"), *command[out_index + 1:]]
        proc = _served(run, kwargs) if via_server else None
        if proc is None:  # not served, or failed in the server: the command's own result
            proc = subprocess.run(run, capture_output=True, text=True, **{k: v for k, v in kwargs.items()
                                                                         if k in ("stdin", "timeout", "env")})
        if proc.returncode != 0:
            return proc
        (work / "classes").mkdir(exist_ok=True)
        (work / "result.json").write_text(json.dumps({"stdout": proc.stdout, "stderr": proc.stderr}))
        try:
            os.rename(work, entry)
        except OSError:
            pass  # another process stored the same compile first
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)
