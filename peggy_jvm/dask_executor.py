"""The distributed executor of ``optimize --executor dask``: the tasks of a run (classes, and parts of the
methods of large classes: ``pipeline._tasks``) on a Dask cluster.

What this module owns
    :func:`run_dask`, the Dask counterpart of :func:`peggy_jvm.workers.run_pool` (same task, initializer and
    callbacks, so the pipeline hands a run to either), and the checks that make a cluster's result the local
    result: every worker runs the same tool (:func:`peggy_jvm.cache.code_digest`: sources, axioms, Python,
    libraries) on the same JDK (its ``release`` file) as the client, or the run stops with an error naming the
    worker (a different rule set or class library could choose other code: not the same bytes).

Why Dask (issue 19): an existing scheduler that already places tasks, moves data, notices a lost worker and
runs its tasks again elsewhere; we only adapt our task (a class or part of one) to it. Dask is an optional extra
(``pip install 'peggy-jvm[dask]'``); nothing else in the package imports it.

Inputs: the items, the module-level task and initializer (pickled by reference: the workers import
peggy-jvm themselves), the initializer's arguments (sent once, broadcast to every worker), the scheduler's
address. Outputs: the callbacks' calls, in the order items finish.

Invariants: a task's result is a function of its item and the initializer's arguments (as for the local pool),
so which worker runs it, or how often, changes nothing. A worker runs one task at a time (a lock: the
pipeline's per-process state is not shared between threads, and the work is Python, held by the GIL anyway),
with the heap frozen for the garbage collector (``workers.heap_frozen``, as the local workers have it).
A task whose workers died more often than the scheduler allows (``distributed.scheduler.allowed-failures``)
gets the caller's ``died`` substitute: the class keeps its original bytes, reported as a fallback. Dask's
tasks run off the main thread, where the per-method SIGALRM of :class:`peggy_jvm.budget.alarm` cannot be
armed: the wall-clock safety net is then checked between a method's sub-stages only (work budgets, which
decide the output, are unaffected).
"""
from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

__all__ = ["ExecutorError", "run_dask", "worker_fingerprint", "SCHEDULER_ENV"]

Item = TypeVar("Item")
Result = TypeVar("Result")

#: the environment variable Dask itself reads for the scheduler's address (its config key ``scheduler-address``)
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"

#: seconds to wait for the scheduler to answer before the run stops with an error
CONNECT_TIMEOUT = 10.0


class ExecutorError(Exception):
    """The cluster cannot run this job (unreachable scheduler, a worker on another tool or JDK): one line."""


def worker_fingerprint() -> str:
    """What a worker must share with the client for its results to be the client's: the tool's code digest and
    the JDK's identity (the ``release`` file of the Java home the class hierarchy reads)."""
    from .cache import code_digest
    from .classfile.jimage import find_java_home

    home = find_java_home()
    release = ""
    if home is not None:
        try:
            release = (Path(home) / "release").read_text(errors="replace")
        except OSError:
            release = str(home)
    jdk = next((line for line in release.splitlines() if line.startswith("JAVA_RUNTIME_VERSION=")),
               release.strip() or "no JDK")
    return f"{code_digest()} {jdk}"


# -- worker side ----------------------------------------------------------------------------------------------
_lock = threading.Lock()
_ready: dict[str, object] = {}  # "run": the run whose initializer ran last in this process; "fingerprint"


class _Mismatch(tuple):
    """A task's answer when its worker does not match the client (a tuple subclass: pickles as data)."""


def _run_task(item: Any, setup: tuple[str, str, Callable[..., None], tuple], task: Callable[[Any], Any]) -> Any:
    """One item on a worker: initialize this process for the run once (the run id says when another run's
    state is there), then ``task(item)``; one task at a time per process."""
    from .workers import heap_frozen  # here, not at the top: the CLI imports this module and starts fast
    run, expected, initializer, initargs = setup
    with _lock:
        mine = _ready.get("fingerprint")
        if mine is None:
            mine = _ready["fingerprint"] = worker_fingerprint()
        if mine != expected:
            return _Mismatch((str(mine), expected))
        if _ready.get("run") != run:
            initializer(*initargs)
            _ready["run"] = run
        with heap_frozen():  # the worker's long-lived heap (Dask, the tool, its rules) not scanned by a task
            return task(item)


def _value(x: Any) -> Any:
    return x


# -- client side ----------------------------------------------------------------------------------------------
def run_dask(items: Sequence[Item], scheduler: str, task: Callable[[Item], Result],
             initializer: Callable[..., None], initargs: tuple, record: Callable[[Item, Result], bool],
             died: Callable[[Item, str], Result], tick: Callable[[], None] | None = None,
             tick_seconds: float = 1.0) -> None:
    """``task`` of each of ``items`` on the Dask cluster at ``scheduler``, each worker process initialized once
    with ``initializer(*initargs)``; ``record``, ``died`` and ``tick`` as in :func:`peggy_jvm.workers.run_pool`
    (``record`` returning True stops the run: the items not finished are cancelled). Raises
    :class:`ExecutorError` when the scheduler cannot be reached or a worker runs another tool or JDK."""
    try:
        from distributed import Client, wait
        from distributed.client import FutureCancelledError
        from distributed.scheduler import KilledWorker
    except ImportError:
        raise ExecutorError("--executor dask needs Dask: pip install 'peggy-jvm[dask]'") from None
    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as e:
        raise ExecutorError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
    with client:
        expected = worker_fingerprint()
        setup = (uuid.uuid4().hex, expected, initializer, initargs)
        # one task whose value every class's task depends on: sent to each worker once, not with each task (the
        # input's classes can be megabytes); a task (not scattered data) so that the scheduler can recompute it
        # when the workers that held it are lost
        setup_data = client.submit(_value, setup, pure=False)
        futures = {client.submit(_run_task, item, setup_data, task, pure=False): (k, item)
                   for k, item in enumerate(items)}
        pending = set(futures)
        try:
            while pending:
                try:
                    done, pending = wait(pending, timeout=tick_seconds, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    if tick:
                        tick()
                    continue
                for fut in sorted(done, key=lambda f: futures[f][0]):  # a fixed order within one wakeup
                    item = futures[fut][1]
                    try:
                        res = fut.result()
                    except (KilledWorker, FutureCancelledError) as e:
                        res = died(item, f"dask worker lost ({type(e).__name__}: {e})")
                    except Exception as e:  # raised by the task on the worker (e.g. a --classpath jar not there)
                        raise ExecutorError(f"a task failed on a Dask worker: {type(e).__name__}: {e}") from None
                    if isinstance(res, _Mismatch):
                        raise ExecutorError(f"a Dask worker runs another peggy-jvm or JDK than this client "
                                            f"(worker {res[0]!r}, client {res[1]!r}): install the same version")
                    if record(item, res):
                        return
        finally:
            if pending:
                client.cancel(list(pending))
