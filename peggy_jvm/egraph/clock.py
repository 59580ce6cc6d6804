"""The clock that time limits are read on: this process's CPU time, not the wall clock.

What this module owns
    :func:`clock` (budget seconds), :class:`metered` (a stretch of work whose wall-clock cap counts from its
    start: one of ``validate``'s pairs), :class:`waiting` (a wait for a child process, counted as the wall-clock
    time it takes), :data:`WALL_FACTOR`, :data:`CPU_SAMPLE_S`.

Why (issue 17): ``validate`` bounds each pair's proof by time (``--method-timeout``). Read on the wall clock, that
time shrinks with the machine's load (a process gets a tenth of a core on two cores at load 20), and the same
pair came out proved or unknown from run to run. Read on this clock, a pair gets the same work, and the same
verdict, on a loaded machine as on an idle one. The runner's time limit (:mod:`.runner`), pattern search, and
every deadline of ``peggy_jvm.rules`` and ``peggy_jvm.validate`` (normal forms, induction, the interpreter
screen, the JVM calls) are readings of it plus seconds. It lives in the e-graph package because the runner, its
lowest reader, imports nothing outside it; it knows nothing of e-graphs.

Invariants: readings are non-decreasing between origins (a new outermost :class:`metered` block restarts them at
0, so a deadline holds only within the block that read it); a reading is at most :data:`CPU_SAMPLE_S` ahead of
the CPU time (plus waits) since the origin, never behind; inside a metered block a reading is at least the
wall-clock time since its start over :data:`WALL_FACTOR`, so a deadline ``d`` seconds ahead passes within
``WALL_FACTOR * d`` seconds of wall-clock time, whatever CPU the process gets. One clock per process (module
state), read by validate from one thread; the optimizer's runs read it too but set no time limit.
"""
from __future__ import annotations

import math
import time

__all__ = ["WALL_FACTOR", "CPU_SAMPLE_S", "clock", "metered", "waiting"]


#: a pair's wall-clock cap, as a multiple of its budget in :func:`clock` seconds: only a pair that got less than
#: 1/20 of a core for its whole budget meets it (at a load of 24 on two cores a process still gets about 1/12)
WALL_FACTOR = 20.0
#: the CPU clock is read at most this often (wall seconds; a read costs ~2.5 us, eight times ``perf_counter``,
#: and the e-graph runner asks after every application); in between it is taken to run with the wall clock, so
#: a reading is at most this much ahead of the CPU time, never behind
CPU_SAMPLE_S = 0.002

_perf, _cpu = time.perf_counter, time.process_time
_origin_cpu = 0.0  # the CPU time (plus waits) at the clock's origin
_origin_wall = math.inf  # the wall-clock time at the start of the open metered block (inf: none is open)
_waited = 0.0  # wall-clock seconds spent in waiting blocks, since the process began
_sample_wall = -math.inf  # when the CPU time was last read
_base = 0.0  # a reading at wall-clock time w, until the next sample: w + _base
_last = 0.0  # the last reading: readings never go back
_metered = 0  # depth of metered blocks


def clock() -> float:
    """Budget seconds since the origin (the start of the last outermost :class:`metered` block): this process's
    CPU time plus the wall-clock time of :class:`waiting` blocks, or, inside a metered block, the wall-clock time
    since its start over :data:`WALL_FACTOR` when that is more (the cap). Non-decreasing between origins."""
    global _last
    w = _perf()
    if w - _sample_wall > CPU_SAMPLE_S:
        _sample(w)
    v = w + _base
    cap = (w - _origin_wall) / WALL_FACTOR
    if cap > v:
        v = cap
    if v > _last:
        _last = v
    return _last


def _sample(w: float) -> None:
    """Read the CPU time (at wall-clock time ``w``)."""
    global _sample_wall, _base
    _sample_wall = w
    _base = _cpu() - w + _waited - _origin_cpu


def _restart() -> None:
    global _origin_cpu, _origin_wall, _last, _sample_wall, _base
    _origin_wall = _perf()
    _origin_cpu = _cpu() + _waited
    _last = 0.0
    # a sample taken now, without reading the CPU clock again (validate opens a block per pair or two)
    _sample_wall, _base = _origin_wall, -_origin_wall


class metered:
    """``with metered():`` sets :func:`clock`'s origin to now (a pair's work starts: its wall-clock cap counts
    from here), unless a metered block is already open (then nothing: the outer block's origin stays, so
    deadlines read before stay valid). A deadline read inside a block holds only there (the next block starts
    the clock from 0 again)."""

    def __enter__(self) -> metered:
        global _metered
        if _metered == 0:
            _restart()
        _metered += 1
        return self

    def __exit__(self, *exc: object) -> None:
        global _metered, _origin_wall
        _metered -= 1
        if _metered == 0:
            _origin_wall = math.inf  # the cap is a pair's: outside its block the clock counts CPU time and waits


class waiting:
    """``with waiting():`` around a wait for a child process (``validate``'s JVM): its wall-clock time counts in
    :func:`clock`, since the process's own CPU time does not advance while it waits."""

    def __enter__(self) -> waiting:
        self.start = _perf()
        return self

    def __exit__(self, *exc: object) -> None:
        global _waited
        now = _perf()
        _waited += now - self.start
        _sample(now)  # the CPU time read afresh: the wait is no CPU time
