"""Interruption by SIGINT (Ctrl-C) and SIGTERM: one exception, raised once, and the windows it must not cut.

Owns: :class:`Interrupted` (a BaseException, like KeyboardInterrupt, so that no ``except Exception`` fallback
swallows it), :func:`catching_signals` (the command line's handlers for one command), :func:`deferred` (signals
held back while an output is renamed into place), :func:`blocked` (signals blocked in the OS while worker
processes are forked, so a worker never sees the parent's handler) and :func:`die_with_parent` (a child
process that must not outlive the process that forked it, even one killed with SIGKILL).

Inputs: signals. Outputs: :class:`Interrupted` raised in the main thread; its ``exit_code`` (128 + signal
number: 130 for SIGINT, 143 for SIGTERM) is the process's exit status (docs/cli.md).

Invariants:
- only the FIRST signal raises; later ones are swallowed, so the clean-up that the exception runs through
  (``finally`` blocks: stopping worker processes, removing temporary files) is never cut short by a second
  Ctrl-C;
- inside :func:`deferred` a signal is recorded and raised only when the block ends, so a rename pair (an
  earlier directory output moved aside, the new one moved in) is never left half done;
- without :func:`catching_signals` (library use, tests in-process) nothing changes: Python's own handlers stay.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: the signals a command ends on; anything else keeps its default action
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """The command was asked to stop by a signal; ``exit_code`` is 128 + its number (the shell's convention)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.name = signal.Signals(signum).name
        self.exit_code = 128 + signum


class _State:
    installed = False
    raised = False  # the first signal has been turned into Interrupted
    deferring = 0  # depth of deferred() blocks
    pending: int | None = None  # a signal that came during deferred()


def _handler(signum: int, _frame: object) -> None:
    if _State.raised:
        return  # already stopping: let the clean-up finish
    if _State.deferring:
        _State.pending = _State.pending or signum
        return
    _State.raised = True
    raise Interrupted(signum)


@contextmanager
def catching_signals() -> Iterator[None]:
    """For the duration of a command: SIGINT and SIGTERM raise :class:`Interrupted` (once). Handlers are put
    back afterwards. A no-op off the main thread (signals are delivered to Python there only)."""
    if threading.current_thread() is not threading.main_thread() or _State.installed:
        yield
        return
    old = {s: signal.getsignal(s) for s in SIGNALS}
    _State.installed, _State.raised, _State.deferring, _State.pending = True, False, 0, None
    for s in SIGNALS:
        signal.signal(s, _handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        _State.installed = False


@contextmanager
def deferred() -> Iterator[None]:
    """Hold back an interruption until the block ends (it is then raised, if it is the first)."""
    _State.deferring += 1
    try:
        yield
    finally:
        _State.deferring -= 1
        if not _State.deferring and _State.pending is not None and not _State.raised:
            signum, _State.pending = _State.pending, None
            _State.raised = True
            raise Interrupted(signum)


@contextmanager
def blocked(signals: tuple[int, ...] = SIGNALS) -> Iterator[None]:
    """Block ``signals`` in the OS for the block (children forked inside inherit the mask and unblock once
    they have their own handlers: :func:`unblock`); a signal that came meanwhile is delivered at the end."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def unblock(signals: tuple[int, ...] = SIGNALS) -> None:
    """In a child forked inside :func:`blocked`: take ``signals`` again."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)


def die_with_parent(signum: int, parent: int) -> None:
    """In a forked child: have ``signum`` sent to it when its parent ``parent`` dies, however it dies (Linux
    ``PR_SET_PDEATHSIG``; elsewhere nothing). A parent already gone by now sends it at once. The signal is
    tied to the thread that forked the child: fork from the main thread (or one living as long)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signum)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os.kill(os.getpid(), signum)
