"""Worker processes for ``optimize --jobs N``: the pool loop, the workers' process groups, and stopping them.

What this module owns
    :func:`run_pool` (items on N worker processes, at most ``2 * N`` in flight, each result handed to the
    caller as it comes; a worker's death turned into the caller's substitute result) and the process machinery
    around it: each worker leads its own process group (:func:`_init_pool_worker`), ignores SIGINT, ends its
    group on SIGTERM (:func:`_end_worker`) and on its parent's death (Linux parent-death signal); an exception
    in the main process while the pool runs kills every worker group at once (:func:`_kill_workers`) instead
    of waiting for the items in flight; Ctrl-Z is passed on to the worker groups (:class:`_JobControl`);
    :func:`heap_frozen`, the garbage collector kept off the long-lived heap while tasks run (the pipeline's
    process and its workers, and each task on a Dask worker).

Why (:mod:`peggy_jvm.interrupt`): a Ctrl-C at the terminal must reach the main process alone, which decides;
no worker, nor any process a worker starts, may outlive the run. The pool is a
:class:`concurrent.futures.ProcessPoolExecutor` over ``fork``, whose workers are not daemonic (a
``multiprocessing.Pool``'s are), so that a task may still start processes of its own there.

Inputs: the items, the task and the workers' initializer (module-level functions of the caller), and the
caller's callbacks. Outputs: the callbacks' calls, in the order items finish.
Invariants: nothing here decides a result (which worker takes which item changes nothing: the task's result is
a function of its item and the initializer's arguments); when :func:`run_pool` returns or raises, no worker
process is left running.
"""
from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import threading
from contextlib import contextmanager
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterator, Sequence, TypeVar

from . import interrupt

__all__ = ["heap_frozen", "largest_first", "run_pool"]

Item = TypeVar("Item")
Result = TypeVar("Result")

#: held back while the workers are forked and made group leaders: a Ctrl-Z then is passed on once they can be
#: reached (before, :class:`_JobControl` would find a worker still in the main process's group, or none yet)
_FORK_BLOCKED = (*interrupt.SIGNALS, *((signal.SIGTSTP,) if hasattr(signal, "SIGTSTP") else ()))


def largest_first(items: Sequence[Item], size: Callable[[Item], int]) -> list[Item]:
    """``items`` by decreasing ``size``, equal sizes in their given order: the order :func:`run_pool` should get
    them in when size predicts an item's time. Longest first is what keeps N workers busy to the end (Graham's
    LPT rule: within 4/3 of the best finishing time); in input order one large item started last leaves every
    other worker idle while it runs."""
    return sorted(items, key=lambda item: -size(item))  # sorted is stable: ties keep their order


#: the collector's thresholds while tasks run (Python's default is (700, 10, 10)): a young collection every
#: 10 000 net container allocations rather than 700. The tasks allocate millions of short-lived containers
#: (e-nodes, profiles, candidate PEGs), most freed by reference counting before a collection would scan them;
#: at 700 guava's 100-class sample ran 1 067 young collections (0.57 CPU-s of the collector in all), at
#: 10 000 47 (0.27 CPU-s). Memory: at most that many more young objects alive at once
TASK_GC_THRESHOLD = (10_000, 10, 10)


@contextmanager
def heap_frozen() -> Iterator[None]:
    """While tasks run: the objects alive now (modules, compiled rules, the input) moved out of the garbage
    collector's generations (``gc.freeze``, and ``gc.unfreeze`` after: both O(1)), so that its full
    collections, a dozen or so in a run, no longer scan them (0.5 of 13.7 CPU-s on guava's 150-class sample
    with ``--jobs 1``) and workers forked meanwhile do not copy their pages by touching them; and the young
    generation collected less often (:data:`TASK_GC_THRESHOLD`). Undone at the end (whatever became garbage
    meanwhile is collected as usual later, the thresholds are the caller's again); left alone when someone
    else froze the heap already. The collector's timing decides nothing the optimizer does (no result depends
    on object ids or finalizers)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(*TASK_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _init_pool_worker(parent: int, initializer: Callable[..., None], *args: object) -> None:
    """A pool worker's start: its own process group and signal handling (module docstring), then
    ``initializer(*args)``. The worker was forked with the signals blocked (:func:`interrupt.blocked`); they are
    taken again only once its own handlers are in place."""
    try:
        os.setpgid(0, 0)
    except OSError:  # the parent made it the leader already (both try: whichever comes first)
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)
    # outside the terminal's foreground group a write to the terminal (a warning) would stop the worker when
    # the terminal has `tostop` set; ignoring SIGTTOU lets the write through
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    if hasattr(signal, "SIGTSTP"):  # the main process's _JobControl handler, inherited by the fork
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
    interrupt.die_with_parent(signal.SIGTERM, parent)  # a SIGTERM still blocked here comes at the unblock
    interrupt.unblock(_FORK_BLOCKED)
    initializer(*args)


def _end_worker(*_: object) -> None:
    """SIGTERM in a worker: end its process group (itself and any process it started) at once."""
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    os._exit(128 + signal.SIGTERM)


def _workers(pool: ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    """The pool's worker processes (``_processes``, pid -> Process: private, but stable since Python 3.2; with
    ``fork`` all of them are started by the first submit)."""
    return list((getattr(pool, "_processes", None) or {}).values())


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Kill every worker's process group (the worker and any process it started) and reap the workers. A group
    id is the pid of the worker that leads it, which cannot be reused while the group has a member; a worker
    not yet leading its group is killed by its pid while it is known to be alive (not reaped)."""
    procs = _workers(pool)
    for proc in procs:
        alive = proc.exitcode is None
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # type: ignore[arg-type]  # a started worker has a pid
        except OSError:
            pass
        if alive:
            try:
                os.kill(proc.pid, signal.SIGKILL)  # type: ignore[arg-type]  # a started worker has a pid
            except OSError:
                pass
    for proc in procs:
        proc.join(2)


class _JobControl:
    """While the pool has workers: Ctrl-Z (SIGTSTP, which the terminal sends to the main process's group only)
    stops the workers' groups too, and they continue when the main process does (``fg``, ``bg``), as they would
    in one process group. Entered before the first fork and left once the pool is shut down, so that no Ctrl-Z
    stops the main process alone while a worker lives (a worker left running, or idle and waiting for the main
    process, until ``fg``). Main thread only (signal handlers are set there); restores the old handler."""

    def __init__(self, pool: ProcessPoolExecutor) -> None:
        self.pool = pool
        self.old: object = None

    def __enter__(self) -> _JobControl:
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGTSTP"):
            self.old = signal.signal(signal.SIGTSTP, self._stop)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.old is not None:
            signal.signal(signal.SIGTSTP, self.old)  # type: ignore[arg-type]  # what signal.signal returned

    def _signal_groups(self, signum: int) -> None:
        for proc in self._alive():
            try:
                os.killpg(proc.pid, signum)  # type: ignore[arg-type]  # a started worker has a pid
            except OSError:
                pass

    def _alive(self) -> list[multiprocessing.process.BaseProcess]:
        return [p for p in _workers(self.pool) if p.exitcode is None]

    def _stop(self, _signum: int, _frame: object) -> None:
        self._signal_groups(signal.SIGSTOP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        try:
            os.kill(os.getpid(), signal.SIGTSTP)  # stops here until SIGCONT
        finally:
            signal.signal(signal.SIGTSTP, self._stop)
            self._signal_groups(signal.SIGCONT)


def run_pool(items: Sequence[Item], jobs: int, task: Callable[[Item], Result], initializer: Callable[..., None],
             initargs: tuple, record: Callable[[Item, Result], bool], died: Callable[[Item, str], Result],
             tick: Callable[[], None] | None = None, tick_seconds: float = 1.0) -> None:
    """``task`` of each of ``items`` on ``jobs`` worker processes, each started with ``initializer(*initargs)``.

    ``record(item, result)`` gets every result as it comes and returns True to stop the run (the items not
    started yet are never run); an item whose worker died gets ``died(item, why)`` as its result instead.
    ``tick`` is called whenever ``tick_seconds`` pass without a result (so a time-paced display never waits for
    a slow item). At most ``2 * jobs`` items are in flight, so that a stop comes after the items already
    started rather than after all of them. An exception here (an interruption) kills the workers' process
    groups instead of waiting for the items in flight."""
    ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    pending = iter(items)
    pool = ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_pool_worker,
                               initargs=(os.getpid(), initializer, *initargs))
    running: dict[Future, Item] = {}

    def refill() -> bool:
        for item in pending:
            try:
                running[pool.submit(task, item)] = item
            except BrokenProcessPool as e:  # no worker left to take it
                if record(item, died(item, f"worker process died ({e})")):
                    return True
                continue
            if len(running) >= 2 * jobs:
                break
        return False

    with _JobControl(pool):
        try:
            # the first submit forks the workers: none may run the parent's handlers, and a Ctrl-Z waits until
            # each leads its group (_FORK_BLOCKED)
            with interrupt.blocked(_FORK_BLOCKED):
                stop = refill()
                for proc in _workers(pool):
                    try:
                        # as the worker does itself: whichever runs first, no window (a started worker has a pid)
                        os.setpgid(proc.pid, proc.pid)  # type: ignore[arg-type]  # a started worker has a pid
                    except OSError:
                        pass
            while running and not stop:
                finished, _ = wait(running, timeout=tick_seconds, return_when=FIRST_COMPLETED)
                if not finished and tick:
                    tick()
                for fut in finished:
                    item = running.pop(fut)
                    try:
                        res = fut.result()
                    except BrokenProcessPool as e:  # a worker died (killed, out of memory): the caller's substitute
                        res = died(item, f"worker process died ({e})")
                    if record(item, res):
                        stop = True
                        break
                stop = stop or refill()
            for fut in running:  # stopped: the items not started yet are never run
                fut.cancel()
        except BaseException:
            _kill_workers(pool)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
