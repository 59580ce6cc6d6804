"""CPU seconds per test, for finding what makes a tier expensive (wall-clock ``--durations`` mostly measures the
machine's load on a shared machine).

Input: the environment variable :data:`CPU_LOG_ENV`, a file path; unset, nothing is measured. Output: one line
per test phase appended to that file, ``<cpu seconds>\\t<phase>\\t<node id>\\t<programs started>``: the CPU of the
process running the test (a pytest-xdist worker or pytest itself) plus that of every child process it waited for
during the phase (``peggy-jvm`` and ``java`` subprocesses, the optimizer's worker processes), so a session
fixture's cost is charged to the setup of the first test that needs it; then the programs the phase started
through :mod:`subprocess` (``java:3,javap:1``: each command's executable by name, and how often; what those start
in turn is not seen), which tells the cost of starting JVMs and ``peggy-jvm`` processes from the work itself; then
the pytest-xdist worker that ran it (``gw0``, ``main`` without xdist) and the phase's start and end (wall clock,
seconds since the epoch), from which a run's schedule can be replayed (which files ran where and ended last).
Lines are appended with one ``write`` each, so the workers of one run may share the file. Sort it to read it:
``sort -rn FILE | head -40``.

Long-lived helper processes (the tool server, the DiffRunner server: :func:`track`) serve many tests and are
waited for only when the process exits; their CPU is read from ``/proc`` instead and charged to the phase that
spent it (a server that ends during a phase and is waited for is counted once: what it had spent before the
phase is taken off again).
"""
from __future__ import annotations

import os
import resource
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any, Generator

import pytest

CPU_LOG_ENV = "PEGGY_TEST_CPU_LOG"

#: the programs started through subprocess.Popen in this process so far, by the name of their executable
_started: Counter[str] = Counter()


def _cpu_seconds() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


#: long-lived helper processes whose CPU is read from /proc (track)
_tracked: list[subprocess.Popen] = []
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def track(proc: subprocess.Popen) -> None:
    """Charge ``proc``'s CPU to the test phases that spend it (a server kept for the whole process)."""
    _tracked[:] = [p for p in _tracked if p.returncode is None]
    _tracked.append(proc)


def _helpers_cpu() -> dict[int, float]:
    """CPU seconds so far of each tracked process still readable in /proc (alive, or ended but not reaped)."""
    out = {}
    for proc in _tracked:
        try:
            stat = Path(f"/proc/{proc.pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[proc.pid] = (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime
    return out


def _program(args: Any) -> str:
    """The executable's name in a Popen command (a sequence, or one string: its first word)."""
    if isinstance(args, (str, bytes)):
        words = os.fsdecode(args).split()
        return Path(words[0]).name if words else ""
    first = args if isinstance(args, os.PathLike) else next(iter(args), "")
    return Path(os.fsdecode(first)).name


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get(CPU_LOG_ENV) or getattr(subprocess.Popen.__init__, "_counts_programs", False):
        return
    init = subprocess.Popen.__init__

    def counting_init(self: subprocess.Popen, args: Any, *rest: Any, **kwargs: Any) -> None:
        _started[_program(args)] += 1
        init(self, args, *rest, **kwargs)

    counting_init._counts_programs = True  # type: ignore[attr-defined]  # marks the wrapper: installed once
    subprocess.Popen.__init__ = counting_init  # type: ignore[method-assign]  # it only counts, then starts


def _logged(phase: str, item: pytest.Item) -> Generator[None, None, None]:
    path = os.environ.get(CPU_LOG_ENV)
    if not path:
        yield
        return
    before = Counter(_started)
    began = time.time()
    start = _cpu_seconds()
    helpers = _helpers_cpu()
    yield
    cpu = _cpu_seconds() - start
    now = _helpers_cpu()
    # a helper still readable: what it spent in the phase; one reaped in the phase: RUSAGE_CHILDREN holds all it
    # ever spent, so take off what it had spent before
    cpu += sum(now[pid] - helpers.get(pid, 0.0) for pid in now)
    cpu -= sum(t for pid, t in helpers.items() if pid not in now)
    programs = ",".join(f"{name}:{n}" for name, n in sorted((_started - before).items()))
    # the worker's id from xdist's own config (the environment variable is inherited by a pytest a test starts)
    worker = getattr(item.config, "workerinput", {}).get("workerid", "main")
    line = f"{cpu:.2f}\t{phase}\t{item.nodeid}\t{programs}\t{worker}\t{began:.3f}\t{time.time():.3f}\n"
    with open(path, "a", encoding="utf-8") as log:
        log.write(line)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    yield from _logged("setup", item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    yield from _logged("call", item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    yield from _logged("teardown", item)
