"""CPU seconds per test, for finding what makes a tier expensive (wall-clock ``--durations`` mostly measures the
machine's load on a shared machine).

Input: the environment variable :data:`CPU_LOG_ENV`, a file path; unset, nothing is measured. Output: one line
per test phase appended to that file, ``<cpu seconds>\\t<phase>\\t<node id>``: the CPU of the process running
the test (a pytest-xdist worker or pytest itself) plus that of every child process it waited for during the phase
(``peggy-jvm`` and ``java`` subprocesses, the optimizer's worker processes), so a session fixture's cost is
charged to the setup of the first test that needs it. Lines are appended with one ``write`` each, so the workers
of one run may share the file. Sort it to read it: ``sort -rn FILE | head -40``.
"""
from __future__ import annotations

import os
import resource
from typing import Generator

import pytest

CPU_LOG_ENV = "PEGGY_TEST_CPU_LOG"


def _cpu_seconds() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def _logged(phase: str, item: pytest.Item) -> Generator[None, None, None]:
    path = os.environ.get(CPU_LOG_ENV)
    if not path:
        yield
        return
    start = _cpu_seconds()
    yield
    line = f"{_cpu_seconds() - start:.2f}\t{phase}\t{item.nodeid}\n"
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
