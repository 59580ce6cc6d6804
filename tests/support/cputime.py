"""CPU seconds per test, for finding what makes a tier expensive (wall-clock ``--durations`` mostly measures the
machine's load on a shared machine).

Input: the environment variable :data:`CPU_LOG_ENV`, a file path; unset, nothing is measured. Output: one line
per test phase appended to that file, ``<cpu seconds>\\t<phase>\\t<node id>\\t<programs started>``: the CPU of the
process running the test (a pytest-xdist worker or pytest itself) plus that of every child process it waited for
during the phase (``peggy-jvm`` and ``java`` subprocesses, the optimizer's worker processes), so a session
fixture's cost is charged to the setup of the first test that needs it; then the programs the phase started
through :mod:`subprocess` (``java:3,javap:1``: each command's executable by name, and how often; what those start
in turn is not seen), which tells the cost of starting JVMs and ``peggy-jvm`` processes from the work itself.
Lines are appended with one ``write`` each, so the workers of one run may share the file. Sort it to read it:
``sort -rn FILE | head -40``.
"""
from __future__ import annotations

import os
import resource
import subprocess
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
    start = _cpu_seconds()
    yield
    cpu = _cpu_seconds() - start
    programs = ",".join(f"{name}:{n}" for name, n in sorted((_started - before).items()))
    line = f"{cpu:.2f}\t{phase}\t{item.nodeid}\t{programs}\n"
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
