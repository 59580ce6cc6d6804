"""The budgets of ``peggy-jvm optimize``: work units that decide the output, and a wall-clock safety net that
never does.

Owns: :class:`WorkBudget` (the full stage's limits in units of work, :data:`DEFAULT_WORK_BUDGET`),
:data:`DEFAULT_METHOD_TIMEOUT`, :class:`SafetyNet` (one method's wall-clock limit), :class:`MethodTimeout`,
:class:`alarm` (the interruption of code that reads no clock) and :class:`cooperative` with :func:`checkpoint`
(the stop of code that may not be interrupted anywhere, at the places it chooses).

Why two kinds (issue 15, reproducible output): everything that chooses between outputs (how far saturation
goes, how long the MaxSAT solver searches, whether the self-check's proof succeeds) is bounded by work (e-graph
iterations and nodes, SAT propagations, induction steps), so the same input and options give byte-identical
output on a fast or a slow machine, loaded or idle, with ``--jobs 1`` or ``--jobs N``. The wall clock only
guards against a method the work limits do not bound well enough: when the safety net fires, the method keeps
its original bytes (status ``fallback``, reason ``timeout: ...``): a different output, but reported as such.
The defaults are set so that the net does not fire on the corpora (docs/cli.md, "Budgets").

Inputs: the options (``--method-timeout``). Outputs: limits for :mod:`peggy_jvm.egraph.runner`,
:mod:`peggy_jvm.extract.maxsat` and :mod:`peggy_jvm.validate.prove`; :class:`MethodTimeout` when the net fires.

``validate`` is the one command bounded by time rather than work (its budget is the user's ``--method-timeout``);
it counts that time on :mod:`peggy_jvm.egraph.clock` (CPU time, so that its verdicts do not flip with the
machine's load), as every time limit of saturation does.

Invariants: no limit of :class:`WorkBudget` reads a clock; the safety net is checked between sub-stages and at
the end of a method, interrupts saturation + extraction (which touch nothing shared) by an alarm, and stops the
self-check (which reads the shared class hierarchy, so no alarm) at its checkpoints: between its attempts and
stages, once per saturation iteration and every 64 steps of loop induction (``validate/prove.py``,
``rules/induction.py``). A checkpoint only reads the clock and raises; it decides nothing, so a net that does
not fire leaves the output as it was.
"""
from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the e-graph and proof stacks are imported by the stage that needs them, not by every command
    from .egraph.runner import Limits
    from .validate.prove import ProofBudget

__all__ = ["WorkBudget", "DEFAULT_WORK_BUDGET", "DEFAULT_SOLVER_WORK", "DEFAULT_METHOD_TIMEOUT",
           "SafetyNet", "MethodTimeout", "alarm", "cooperative", "checkpoint"]

#: work units per RC2 configuration (the default of :func:`peggy_jvm.extract.maxsat.solve` too): the SAT
#: oracle's unit propagations, all its calls summed, plus the formula's variable count per call
DEFAULT_SOLVER_WORK = 1_000_000

#: the default safety net per method (seconds, ``--method-timeout``): generous, so that it fires only on a
#: method the work limits do not bound (on commons-lang3 the slowest method takes well under it)
DEFAULT_METHOD_TIMEOUT = 60.0


@dataclass(frozen=True)
class WorkBudget:
    """The full stage's limits per method, in units of work (none reads a clock)."""

    #: saturation: e-nodes in the e-graph, iterations of the runner
    saturate_nodes: int = 5_000
    saturate_iterations: int = 20
    #: extraction: work units per RC2 configuration (:data:`DEFAULT_SOLVER_WORK`)
    solver_work: int = DEFAULT_SOLVER_WORK
    #: extraction: checker rejections (blocking clauses) per configuration before it gives up
    max_blocks: int = 100
    #: the self-check's proof: e-nodes and iterations of its saturation, steps of loop induction from the roots
    proof_nodes: int = 20_000
    proof_iterations: int = 30
    proof_induction_steps: int = 20_000

    def saturation(self) -> Limits:
        from .egraph.runner import Limits
        return Limits(max_nodes=self.saturate_nodes, max_iterations=self.saturate_iterations, time_limit_s=None)

    def proof(self) -> ProofBudget:
        from .validate.prove import ProofBudget
        return ProofBudget(time_s=None, max_nodes=self.proof_nodes, max_iterations=self.proof_iterations,
                           induction_steps=self.proof_induction_steps, retry_inlined=False)


DEFAULT_WORK_BUDGET = WorkBudget()


class MethodTimeout(BaseException):
    """The method's safety net fired (the method keeps its original bytes; the message says where).

    A BaseException, like KeyboardInterrupt, because it may be raised asynchronously inside library code
    (:class:`alarm`): the ``except Exception`` fallbacks there (e.g. "solver failed, try greedy") must not
    swallow it and carry on past the limit."""


class SafetyNet:
    """One method's wall-clock limit (``perf_counter`` from ``start``); ``seconds`` None: none."""

    def __init__(self, seconds: float | None, start: float | None = None) -> None:
        self.seconds = seconds
        self.start = time.perf_counter() if start is None else start

    def spent(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float | None:
        return None if self.seconds is None else self.seconds - self.spent()

    def over(self) -> bool:
        return self.seconds is not None and self.spent() > self.seconds

    def check(self, before: str) -> None:
        """Stop the method when its limit has passed."""
        if self.over():
            raise MethodTimeout(f"{self.spent() * 1000:.0f} ms > {self.seconds:g} s, before {before}")


class alarm:
    """``with alarm(net, what):`` interrupts the block with :class:`MethodTimeout` when ``net``'s limit passes
    (a one-shot SIGALRM timer for the time it has left).

    Only around code that touches nothing shared (saturation and extraction work on their own e-graph,
    problem and PEGs; the rules they share reset their state per e-graph), so that an interruption anywhere in
    it loses only this method's work; never around lifting, lowering or the self-check, which consult the
    shared class hierarchy and its caches. It never raises inside ``__exit__`` (which must disarm it and give
    SIGALRM back). A no-op (the end-of-method check still holds) without a limit, off the main thread (signals
    are delivered there only), without ``setitimer``, or when someone else owns SIGALRM."""

    def __init__(self, net: SafetyNet, what: str) -> None:
        self.net, self.what = net, what
        self.armed = False
        self.old: object = None

    def __enter__(self) -> alarm:
        left = self.net.left()
        if (left is None or not hasattr(signal, "setitimer")
                or threading.current_thread() is not threading.main_thread()
                or signal.getitimer(signal.ITIMER_REAL)[0] != 0):
            return self
        old = signal.getsignal(signal.SIGALRM)
        if old not in (signal.SIG_DFL, signal.SIG_IGN) and not getattr(old, "_peggy_alarm", False):
            return self
        self.old = old
        signal.signal(signal.SIGALRM, self._fire)
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3))
        return self

    def _fire(self, _signum: int, frame: object) -> None:
        if not self.armed or getattr(frame, "f_code", None) is alarm.__exit__.__code__:
            return  # being disarmed: too late to matter
        raise MethodTimeout(f"{self.what} interrupted at the {self.net.seconds:g} s safety net "
                            f"({self.net.spent() * 1000:.0f} ms spent)")

    _fire._peggy_alarm = True  # type: ignore[attr-defined]  # marks our handler, should one be left installed

    def __exit__(self, *exc: object) -> None:
        if self.armed:
            self.armed = False
            # disarm first: a signal already pending when the old handler is back is dropped by Python
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)  # type: ignore[arg-type]  # what signal.signal returned


class cooperative:
    """``with cooperative(net, what):`` makes every :func:`checkpoint` reached inside the block raise
    :class:`MethodTimeout` once ``net``'s limit has passed: for code that consults shared state (the self-check
    lifts against the shared class hierarchy and its caches), where :class:`alarm` could interrupt an update
    half done. The code decides where it may stop; between two checkpoints it runs on. Blocks nest (the inner
    one's net is the one checked); outside every block a checkpoint does nothing (``validate``'s proofs, tests)."""

    def __init__(self, net: SafetyNet, what: str) -> None:
        self.net, self.what = net, what
        self.outer: cooperative | None = None

    def __enter__(self) -> cooperative:
        global _ACTIVE
        self.outer, _ACTIVE = _ACTIVE, self
        return self

    def __exit__(self, *exc: object) -> None:
        global _ACTIVE
        _ACTIVE = self.outer


_ACTIVE: cooperative | None = None  # the innermost cooperative block being run (the pipeline runs one method at a time)


def checkpoint() -> None:
    """A place where the enclosing :class:`cooperative` block may stop: raises :class:`MethodTimeout` when its
    net's limit has passed, else nothing (nothing at all outside such a block)."""
    block = _ACTIVE
    if block is not None and block.net.over():
        raise MethodTimeout(f"{block.what} stopped at the {block.net.seconds:g} s safety net "
                            f"({block.net.spent() * 1000:.0f} ms spent)")
