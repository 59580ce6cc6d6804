"""Stopping a run (issue 18, item 2; peggy_jvm/interrupt.py, peggy_jvm/workers.py, docs/cli.md "Exit status").

A real ``peggy-jvm optimize --jobs 2`` is started in its own process group (as a shell starts a job), its tree
is watched through /proc while it runs (the CLI and its pool workers), and it is stopped:
SIGINT sent to its process group (what Ctrl-C at a terminal does), SIGTERM to the CLI alone (what ``kill`` and
CI timeouts do), SIGKILL to the CLI alone (nothing can be cleaned up; the workers must still go). Each must end
within seconds with one line and 130/143, no process of the tree left, no temporary file beside the output, and
the earlier output byte for byte as it was. ``validate`` is stopped while its JVM (the counterexample harness)
runs. The in-process tests pin the two windows an interruption must not cut: the atomic write's clean-up, and
the rename of a directory output (signals are deferred there).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from conftest import compile_versions

from peggy_jvm import archive, interrupt
from peggy_jvm.archive import Form, Output

_SCRIPT = Path(sys.executable).parent / "peggy-jvm"
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "peggy_jvm.cli"]
#: generous for a loaded 2-core machine: the stop itself takes well under a second (measured 0.2-0.3 s)
STOP_WITHIN = 10.0
PROGRESS_PREFIX = "peggy-jvm: optimize: "

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


# -- watching a process tree -----------------------------------------------------------------------------------
def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (state first), or None when gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def descendants(root: int) -> set[tuple[int, str]]:
    """(pid, start time) of every live descendant of ``root``; the start time tells a reused pid apart."""
    children: dict[int, list[tuple[int, str]]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and (st := _stat(int(d.name))) is not None:
            children.setdefault(int(st[1]), []).append((int(d.name), st[19]))
    found: set[tuple[int, str]] = set()
    todo = [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            found.add(kid)
            todo.append(kid[0])
    return found


def still_running(seen: set[tuple[int, str]]) -> list[str]:
    """The processes of ``seen`` that still exist and are not zombies (a zombie has ended; PID 1 of a container
    may never reap it)."""
    left = []
    for pid, start in seen:
        st = _stat(pid)
        if st is not None and st[19] == start and st[0] != "Z":
            left.append(f"{pid} {st[0]} {_cmdline(pid)[:120]!r}")
    return left


_started: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _no_run_outlives_its_test():
    """A failed test must not leave its run behind: SIGKILL to the CLI's group (its workers follow it)."""
    yield
    while _started:
        proc = _started.pop()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)


def start(args: list[str], cwd: Path, **env: str) -> subprocess.Popen:
    """The CLI as a shell's job: its own process group in our session (a new session would be an orphaned
    group, in which the kernel discards Ctrl-Z)."""
    _started.append(subprocess.Popen([*CLI, *args], cwd=cwd, process_group=0, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **env}))
    return _started[-1]


def watch_until(proc: subprocess.Popen, ready, timeout: float = 120.0) -> set[tuple[int, str]]:
    """Collect the tree's processes until ``ready(seen)``; fails if the command ends first."""
    seen: set[tuple[int, str]] = set()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        seen |= descendants(proc.pid)
        if ready(seen):
            return seen
        assert proc.poll() is None, f"ended before it could be stopped: {proc.communicate()}"
        time.sleep(0.02)
    proc.kill()
    pytest.fail("the run never got going")


def stop(proc: subprocess.Popen, signum: int, seen: set[tuple[int, str]]) -> tuple[float, str, str]:
    """Send ``signum`` (to the process group for SIGINT, like a terminal), keep watching the tree while it
    stops (processes forked meanwhile count too), and return how long it took and its output."""
    t0 = time.monotonic()
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signum)
    else:
        os.kill(proc.pid, signum)
    while proc.poll() is None and time.monotonic() - t0 < STOP_WITHIN:
        seen |= descendants(proc.pid)
        time.sleep(0.01)
    took = time.monotonic() - t0
    if proc.poll() is None:
        proc.kill()
    out, err = proc.communicate(timeout=30)
    return took, out, err


def no_process_left(seen: set[tuple[int, str]]) -> None:
    end = time.monotonic() + 3  # an orphan's SIGKILL is delivered at once; its exit may take a moment
    while still_running(seen) and time.monotonic() < end:
        time.sleep(0.05)
    assert not still_running(seen)


# -- optimize --------------------------------------------------------------------------------------------------
def _big_class_source(methods: int = 80, name: str = "Big") -> str:
    """A class whose methods (small loops, each saturated, extracted and self-checked) take the full stage far
    longer than :data:`STOP_WITHIN` in all: a run that waited for the classes in flight would be caught."""
    body = "".join(f"    public static int m{k}(int x) {{ int s = {k}; for (int i = 0; i < x; i++) "
                   f"{{ s += i * {k + 2} + (x ^ i) * 3; }} return s * 2 + {k}; }}\n" for k in range(methods))
    return f"public class {name} {{\n" + body + "}\n"


@pytest.fixture(scope="module")
def fixtures_jar(fixture_classes, java_home, tmp_path_factory) -> Path:
    """A slow class first, then every release-17 fixture class, in one jar: far more than a few seconds of
    work for two workers."""
    base = tmp_path_factory.mktemp("interrupt")
    big = compile_versions(java_home, base, "Big.java", {"big": _big_class_source()})["big"] / "Big.class"
    jar = base / "fixtures.jar"
    root = fixture_classes["release17"]
    with zipfile.ZipFile(jar, "w") as z:
        z.write(big, "Big.class")
        for p in sorted(root.rglob("*.class")):
            z.write(p, p.relative_to(root).as_posix())
    return jar


@pytest.fixture(scope="module")
def slow_jar(java_home, tmp_path_factory) -> Path:
    """Two slow classes only: with two workers, no class finishes for many seconds."""
    base = tmp_path_factory.mktemp("slow")
    jar = base / "slow.jar"
    with zipfile.ZipFile(jar, "w") as z:
        for name in ("Big1", "Big2"):
            # 400 methods: several seconds each even for the work-budgeted optimizer (80 took about 2 s)
            tree = compile_versions(java_home, base, f"{name}.java",
                                    {name: _big_class_source(methods=400, name=name)})[name]
            z.write(tree / f"{name}.class", f"{name}.class")
    return jar


def earlier_output(path: Path) -> bytes:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("Earlier.txt", "an earlier run's output")
    return path.read_bytes()


def workers_busy(seen: set[tuple[int, str]]) -> bool:
    """Both pool workers exist and have started (each leads its own process group, which it makes first thing:
    before that, a signal passed on to its group has nowhere to go). The solver runs inside them, in-process:
    they are the whole tree."""
    started = [pid for pid, _ in seen if (st := _stat(pid)) is not None and int(st[2]) == pid]
    return len(seen) >= 2 and len(started) >= 2


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_optimize_jobs_2_stops_at_once_and_leaves_nothing(fixtures_jar, tmp_path, signum):
    out = tmp_path / "out" / "opt.jar"
    out.parent.mkdir()
    before = earlier_output(out)
    proc = start(["optimize", str(fixtures_jar), "-o", str(out), "--jobs", "2", "--json", "r.json"], tmp_path,
                 PEGGY_JVM_PROGRESS_INTERVAL="0.2")
    seen = watch_until(proc, workers_busy)
    took, stdout, stderr = stop(proc, signum, seen)
    assert proc.returncode == 128 + signum, stderr
    assert took < STOP_WITHIN
    lines = [ln for ln in stderr.splitlines() if not ln.startswith(PROGRESS_PREFIX)]
    assert lines == [f"peggy-jvm: interrupted ({signal.Signals(signum).name})"], stderr
    assert stdout == ""
    no_process_left(seen)
    assert sorted(os.listdir(out.parent)) == ["opt.jar"]  # no temporary beside the output
    assert out.read_bytes() == before
    assert not (tmp_path / "r.json").exists()


def test_workers_end_when_the_main_process_is_killed(fixtures_jar, tmp_path):
    """SIGKILL cannot be caught: the workers notice their parent's death (parent-death signal) and end."""
    out = tmp_path / "opt.jar"
    proc = start(["optimize", str(fixtures_jar), "-o", str(out), "--jobs", "2"], tmp_path)
    seen = watch_until(proc, workers_busy)
    stop(proc, signal.SIGKILL, seen)
    assert proc.returncode == -signal.SIGKILL
    no_process_left(seen)


@pytest.mark.slow  # the slow tier: 5 s of CPU, over the fast tier's share (docs/ci.md, session 16)
def test_progress_lines_keep_coming_while_no_class_finishes(slow_jar, tmp_path):
    """Without a terminal the log gets a line every interval even while every worker is inside a slow class
    (the pool loop's ticks), not only when a class finishes."""
    proc = start(["optimize", str(slow_jar), "-o", str(tmp_path / "opt.jar"), "--jobs", "2"], tmp_path,
                 PEGGY_JVM_PROGRESS_INTERVAL="0.2")
    seen = watch_until(proc, workers_busy)
    time.sleep(3.0)
    _, _, stderr = stop(proc, signal.SIGTERM, seen)
    lines = [ln for ln in stderr.splitlines() if ln.startswith(PROGRESS_PREFIX)]
    assert len(lines) >= 2, stderr  # the pool loop ticks every second (PROGRESS_TICK)
    assert all(ln.startswith(PROGRESS_PREFIX + "0/2 classes, 0 methods, 0 rewritten, ") for ln in lines), lines
    assert proc.returncode == 143


def _state(pid: int) -> str:
    st = _stat(pid)
    return st[0] if st is not None else "gone"


def test_ctrl_z_stops_the_workers_and_fg_continues_them(fixtures_jar, tmp_path):
    """The workers are not in the terminal's foreground group, so the main process passes Ctrl-Z on to them;
    SIGCONT to the job (``fg``) lets them go on."""
    proc = start(["optimize", str(fixtures_jar), "-o", str(tmp_path / "opt.jar"), "--jobs", "2"], tmp_path)
    seen = watch_until(proc, workers_busy)
    workers = [pid for pid, _ in seen if int(_stat(pid)[1]) == proc.pid]
    assert len(workers) == 2
    os.killpg(proc.pid, signal.SIGTSTP)
    end = time.monotonic() + STOP_WITHIN
    while {_state(p) for p in [proc.pid, *workers]} != {"T"} and time.monotonic() < end:
        time.sleep(0.05)
    assert {_state(p) for p in [proc.pid, *workers]} == {"T"}
    os.killpg(proc.pid, signal.SIGCONT)
    end = time.monotonic() + STOP_WITHIN
    while "T" in {_state(p) for p in [proc.pid, *workers]} and time.monotonic() < end:
        time.sleep(0.05)
    assert "T" not in {_state(p) for p in [proc.pid, *workers]}
    took, _, stderr = stop(proc, signal.SIGTERM, seen)
    assert proc.returncode == 143, stderr
    no_process_left(seen)


# A pool whose Ctrl-Z comes at a chosen moment: right after the first submit (which forks the workers) or as
# the pool is shut down once every item is done, the two edges of the pool's life where a Ctrl-Z once stopped
# the main process alone (its handler was not yet, or no longer, in place) and left the workers running.
_POOL_EDGE = """
import os, signal, sys, time
from concurrent.futures import ProcessPoolExecutor
from peggy_jvm import workers

WHEN = sys.argv[1]

def task(item):
    time.sleep(0.2)
    return item * 2

def init():
    pass

class Hooked(ProcessPoolExecutor):
    sent = False

    def submit(self, *args, **kwargs):
        fut = super().submit(*args, **kwargs)
        if WHEN == "start" and not Hooked.sent:
            Hooked.sent = True
            os.kill(os.getpid(), signal.SIGTSTP)
        return fut

    def shutdown(self, *args, **kwargs):
        if WHEN == "end":
            os.kill(os.getpid(), signal.SIGTSTP)
        super().shutdown(*args, **kwargs)

workers.ProcessPoolExecutor = Hooked
got = []
workers.run_pool(list(range(6)), 2, task, init, (), lambda item, res: got.append(res) or False,
                 lambda item, why: why)
print(sorted(got))
"""


@pytest.mark.parametrize("when", ["start", "end"])
def test_ctrl_z_at_the_edges_of_the_pool_stops_the_workers_too(tmp_path, when):
    """Ctrl-Z delivered deterministically as the workers are forked, and as the pool shuts down with every
    item done (a run ending as Ctrl-Z is pressed): the main process and both workers stop, and SIGCONT to the
    job lets the run finish with every result."""
    script = tmp_path / "pool_edge.py"
    script.write_text(_POOL_EDGE)
    _started.append(subprocess.Popen([sys.executable, str(script), when], cwd=tmp_path, process_group=0,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True))
    proc = _started[-1]
    seen = watch_until(proc, lambda seen: _state(proc.pid) == "T" and len(seen) >= 2)
    workers = [pid for pid, _ in seen if int(_stat(pid)[1]) == proc.pid]
    assert len(workers) == 2
    end = time.monotonic() + STOP_WITHIN
    while {_state(p) for p in workers} != {"T"} and time.monotonic() < end:
        time.sleep(0.05)
    assert {p: _state(p) for p in workers} == {p: "T" for p in workers}
    assert _state(proc.pid) == "T"
    os.killpg(proc.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.strip() == str([2 * k for k in range(6)])
    no_process_left(seen)


# -- validate --------------------------------------------------------------------------------------------------
LOOPS = "public class L {{ public static int f(int x) {{ int s = 0; for (int i = 0; i < x; i++) {{ s += i{} ; }} " \
        "return s; }} }}"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_validate_stops_its_jvm(java_home, tmp_path, signum):
    """Stopped while the counterexample harness's JVM runs: the JVM (which SIGTERM to the CLI does not reach
    by itself) ends too, and the harness's class directory is removed."""
    trees = compile_versions(java_home, tmp_path, "L.java",
                             {"orig": LOOPS.format(""), "opt": LOOPS.format(" * 2")})
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = start(["validate", str(trees["orig"]), str(trees["opt"]), "--method-timeout", "1"], tmp_path,
                 TMPDIR=str(tmp))

    def jvm_running(seen: set[tuple[int, str]]) -> bool:
        return any(b"Harness" in _cmdline(pid) for pid, _ in seen)

    seen = watch_until(proc, jvm_running)
    took, stdout, stderr = stop(proc, signum, seen)
    assert proc.returncode == 128 + signum, stderr
    assert stderr.splitlines() == [f"peggy-jvm: interrupted ({signal.Signals(signum).name})"]
    assert took < STOP_WITHIN
    no_process_left(seen)
    assert not list(tmp.iterdir())


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


# -- the windows an interruption must not cut (in-process) ------------------------------------------------------
def test_an_interrupted_write_leaves_the_earlier_file_and_no_temporary(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("{}")

    def fill(f) -> None:
        f.write(b'{"half": ')
        raise interrupt.Interrupted(signal.SIGINT)

    with pytest.raises(interrupt.Interrupted):
        archive.write_file(Output(target, Form.JSON), fill)
    assert target.read_text() == "{}"
    assert os.listdir(tmp_path) == ["r.json"]


def test_a_signal_during_the_rename_is_raised_after_it(tmp_path, monkeypatch):
    """A signal that comes while an earlier directory output is swapped for the new one waits until both renames
    are done; the run then stops with the new output whole (never neither, never a temporary)."""
    inp = tmp_path / "in"
    inp.mkdir()
    (inp / "A.class").write_bytes(b"\xca\xfe\xba\xbe new")
    out = tmp_path / "out"
    entries = [archive.Entry("A.class", b"\xca\xfe\xba\xbe old")]
    archive.write_output(archive.InputSet(archive.InputKind.DIR, inp, []), out, entries)
    real_swap = archive._swap_in

    def swap_with_a_signal(new: Path, real: Path) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # the handler has run by now (it only recorded the signal)
        real_swap(new, real)

    monkeypatch.setattr(archive, "_swap_in", swap_with_a_signal)
    handler = signal.getsignal(signal.SIGTERM)
    with interrupt.catching_signals(), pytest.raises(interrupt.Interrupted) as caught:
        archive.write_output(archive.InputSet(archive.InputKind.DIR, inp, []), out,
                             [archive.Entry("A.class", b"\xca\xfe\xba\xbe new")])
    assert caught.value.exit_code == 143
    assert (out / "A.class").read_bytes() == b"\xca\xfe\xba\xbe new"
    assert sorted(os.listdir(tmp_path)) == ["in", "out"]
    assert signal.getsignal(signal.SIGTERM) is handler  # the handlers are given back


def test_only_the_first_signal_raises():
    handler = signal.getsignal(signal.SIGINT)
    with interrupt.catching_signals():
        with pytest.raises(interrupt.Interrupted):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        os.kill(os.getpid(), signal.SIGINT)  # the clean-up goes on
        time.sleep(0.05)
    assert signal.getsignal(signal.SIGINT) is handler



def test_die_with_parent_follows_a_killed_parent():
    """What the pool workers rely on: a child that called ``die_with_parent`` ends
    when its parent ends, even by SIGKILL (here the parent exits at once, without waiting for it)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("parent-death signals are Linux's")
    read, write = os.pipe()
    middle = os.fork()
    if middle == 0:  # the parent-to-be: forks the child, reports its pid, then dies
        try:
            me = os.getpid()
            child = os.fork()
            if child == 0:
                os.close(write)
                interrupt.die_with_parent(signal.SIGKILL, me)
                time.sleep(60)
            else:
                os.write(write, f"{child}\n".encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(middle, 0)
    with os.fdopen(read) as r:
        lines = r.read().split()
    child = int(next(x for x in lines if x.isdigit()))
    end = time.monotonic() + 5
    while _state(child) not in ("gone", "Z") and time.monotonic() < end:
        time.sleep(0.02)
    assert _state(child) in ("gone", "Z")


@pytest.mark.parametrize("command", ["disasm", "show"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_every_command_ends_with_one_line_and_128_plus_the_signal(fixture_classes, monkeypatch, command, signum):
    """The handlers belong to the command line as a whole: a signal while disasm or show reads its input is the
    same one line and exit status as for optimize and validate."""
    from click.testing import CliRunner

    import peggy_jvm.cli as cli

    def read_input_slowly(path: Path):
        os.kill(os.getpid(), signum)
        time.sleep(5)
        raise AssertionError("the signal did not stop the command")

    monkeypatch.setattr(cli, "read_input", read_input_slowly)
    args = [command, str(fixture_classes["release17"] / "IntArith.class")]
    if command == "show":
        args += ["--method", "add"]

    def not_caught(signum: int, _frame: object) -> None:  # instead of SIGTERM's default: end this test run
        raise AssertionError(f"{signal.Signals(signum).name} reached the test's own handler")

    previous = signal.signal(signal.SIGTERM, not_caught)
    try:
        handlers = {s: signal.getsignal(s) for s in interrupt.SIGNALS}
        result = CliRunner().invoke(cli.main, args)
        assert {s: signal.getsignal(s) for s in interrupt.SIGNALS} == handlers  # given back
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert result.exit_code == 128 + signum, result.output
    assert result.output.splitlines() == [f"peggy-jvm: interrupted ({signal.Signals(signum).name})"]
