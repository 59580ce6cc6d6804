"""Equality saturation: rewrites, explicit limits, the scheduler and the run report.

What this module owns
    The :class:`Rewrite` protocol (a named search + apply; pattern rules and the built-in rules of
    :mod:`peggy_jvm.rules.builtin` both implement it), :class:`PatternRewrite` (left-hand matcher, optional
    condition, right-hand builder), :class:`Limits` (the budget as data), :class:`Runner` and :class:`RunReport`.

How a run goes (egg's loop, with semi-naive matching)
    Each iteration: search every rule that is not banned (rules are visited in an order rotated every iteration,
    so a deadline does not always starve the same ones), then apply all matches round-robin across rules (so a
    node limit reached mid-iteration has given every rule its share), then rebuild once. Backoff scheduling as
    egg's ``BackoffScheduler``: a rule with more than ``match_limit << bans`` matches in one iteration is not
    applied but banned for ``ban_length << bans`` iterations. The run stops when an iteration changes nothing and
    no rule is banned (saturated; if some were banned they are unbanned and the run goes on), or at a limit.
    A rule that was searched in the previous iteration is only tried at roots within its pattern's depth of a
    class that changed since (:meth:`EGraph.take_touched`, :meth:`EGraph.ancestor_levels`): every other match was
    found and applied then, and re-applying a match is a no-op (hash-consing). Rules whose conditions look
    further than their pattern (``terminates``, ``distinct``...) and built-in rules report ``depth = None`` and
    are searched everywhere every time.
    What a rule list needs each iteration is read once per list (:class:`_RulePlan`, cached across runners: the
    optimizer makes one per method with the same rules): names, depths, and for each set of operators present
    (``EGraph.op_mask``) which pattern rules could match at all. A pattern rule an operator of which is nowhere
    is not searched; it counts as searched (the next iteration searches it near the changes only, where any new
    match must be), as it always did.

Limits and how exactly they hold
    * ``max_nodes``: checked before the run, before every iteration and after every application; the run can end
      above it by at most the nodes of one right-hand side plus the constants of the final rebuild.
    * ``time_limit_s``: seconds of :func:`peggy_jvm.egraph.clock.clock` (this process's CPU time, so that a loaded
      machine stops the run where an idle one does; validate's pairs cap it by the wall clock); checked before
      every iteration, after every rule's search, every 9 root nodes in a
      search, every 8 matches while a :class:`PatternRewrite`'s condition filters them, and after every
      application, where the applications stop early enough for the rebuild they queued (estimated from the
      rebuilds seen so far) to fit; a queue whose rebuild would take more than 2% of the limit is rebuilt on the
      spot. The overshoot is one application (or 9 root nodes' matching, or 8 conditions), the error of that
      estimate and the final rebuild: on jama and commons-lang3 a few milliseconds (scripts/bench_saturate.py).
      A rebuild is never cut short (the e-graph must stay consistent), so a rule set whose rebuild cascades
      explode can still overshoot by one rebuild.
    * ``max_iterations``: iterations started.
    * ``time_limit_s`` None: no clock decides anything (the optimizer's work budget, docs/cli.md "Budgets"):
      the run is a function of the e-graph, the rules and the other limits only, so its result is the same on
      a fast or a slow machine; the e-graph is rebuilt once per iteration, never early for time. Such a run
      reads the clock only at its start and end (:attr:`RunReport.time_s`), and pattern searches none.

Invariants
    The e-graph is rebuilt when :meth:`Runner.run` returns, whatever the stop reason; the report says where a
    limit stopped the run (:attr:`RunReport.stopped_in`: the start of an iteration, the search of a rule, or
    the application of matches).
"""
from __future__ import annotations

import bisect
import math
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol, Sequence

from .clock import clock as budget_clock
from .explain import Reason
from .pattern import Builder, Match, Matcher

if TYPE_CHECKING:
    from .egraph import EGraph

__all__ = ["Rewrite", "PatternRewrite", "Limits", "StopReason", "RuleStats", "RunReport", "Runner", "saturate"]


class Rewrite(Protocol):
    name: str
    group: str

    @property
    def depth(self) -> int | None:
        """How deep below its root a match looks; None: unknown (always searched everywhere)."""
        ...

    def search(self, eg: EGraph, limit: int, deadline: float, roots: set[int] | None = None) -> tuple[list, bool]:
        """Matches (at most about ``limit``, any representation ``apply`` understands) and whether the deadline
        passed. ``roots``, when given, are the only classes a new match can be rooted at (semi-naive)."""
        ...

    def apply(self, eg: EGraph, match: Any) -> bool:
        """Apply one match; True when it merged two classes. A rewrite whose ``cache_matches`` is true promises
        that re-applying an equal match is a no-op, and its matches are hashable; the runner then skips
        repeats."""
        ...


Condition = Callable[["EGraph", tuple], bool]


@dataclass(eq=False)
class PatternRewrite:
    """``lhs => rhs if condition``. ``source`` says where the rule was written (file:line)."""

    name: str
    lhs: Matcher
    rhs: Builder
    condition: Condition | None = None
    group: str = ""
    source: str = ""
    deep_condition: bool = False  # the condition looks beyond the matched classes (so no semi-naive search)
    cache_matches = True  # applying a match twice is a no-op (the runner skips repeats)

    @property
    def depth(self) -> int | None:
        return None if self.deep_condition else self.lhs.depth

    def search(self, eg: EGraph, limit: int, deadline: float,
               roots: set[int] | None = None) -> tuple[list[Match], bool]:
        ms, late = self.lhs.search(eg, limit, deadline, roots)
        cond = self.condition
        if cond is not None and ms:
            # a condition may be slow (it can look far beyond the match): the deadline is checked while
            # filtering too, and the matches not filtered yet are dropped (the run stops at this deadline)
            kept: list[Match] = []
            clock = budget_clock
            for k, m in enumerate(ms):
                if (k & 7) == 7 and clock() > deadline:
                    return kept, True
                if cond(eg, m[1]):
                    kept.append(m)
            ms = kept
        return ms, late

    def apply(self, eg: EGraph, match: Match) -> bool:
        cid, env = match
        new = self.rhs(eg, env)
        return eg.union(cid, new, Reason(self.name, self.lhs.slots, env))


@dataclass(frozen=True)
class Limits:
    max_nodes: int = 10_000
    max_iterations: int = 30
    #: seconds of egraph/clock.py (CPU time); None: no time limit (work limits only: the result does not depend on the
    #: machine's speed)
    time_limit_s: float | None = 1.0
    match_limit: int = 1_000  # per rule and iteration, doubled after every ban (egg's default)
    ban_length: int = 5  # iterations, doubled after every ban


class StopReason(Enum):
    SATURATED = "saturated"
    NODE_LIMIT = "node limit"
    ITERATION_LIMIT = "iteration limit"
    TIME_LIMIT = "time limit"


@dataclass
class RuleStats:
    search_s: float = 0.0
    apply_s: float = 0.0
    matches: int = 0
    applied: int = 0  # applications that merged two classes
    bans: int = 0

    @property
    def time_s(self) -> float:
        return self.search_s + self.apply_s


@dataclass
class RunReport:
    iterations: int = 0
    nodes: int = 0
    classes: int = 0
    stop_reason: StopReason = StopReason.SATURATED
    time_s: float = 0.0
    rebuild_s: float = 0.0
    #: the rules searched at least once, in the runner's order (a rule whose operators were never all present, or
    #: whose pattern never reached a change, has none)
    rules: dict[str, RuleStats] = field(default_factory=dict)
    conflicts: int = 0  # analysis contradictions seen (each one means an unsound rule)
    #: where a limit stopped the run: "start of iteration N", "search of RULE (iteration N)", "application
    #: (iteration N)"; empty when saturated. The e-graph is rebuilt whatever the place.
    stopped_in: str = ""

    def fired(self) -> list[str]:
        """Names of the rules that merged something, most productive first."""
        return [n for n, s in sorted(self.rules.items(), key=lambda kv: -kv[1].applied) if s.applied]

    def slowest(self, n: int = 10) -> list[tuple[str, RuleStats]]:
        return sorted(self.rules.items(), key=lambda kv: -kv[1].time_s)[:n]

    def __str__(self) -> str:
        where = f" (in {self.stopped_in})" if self.stopped_in else ""
        return (f"{self.stop_reason.value}{where} after {self.iterations} iterations, {self.nodes} nodes, "
                f"{self.classes} classes, {self.time_s * 1000:.1f} ms")


class _RulePlan:
    """What the runner reads of a rule list on every iteration, computed once per list (the optimizer makes a
    Runner per method, all with the same rules): names, depths, matchers, and for each set of operators present
    (an op mask) which rules could match at all, in the list's order."""

    def __init__(self, rules: tuple[Rewrite, ...]) -> None:
        names = [r.name for r in rules]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"duplicate rule names: {', '.join(dup)}")
        self.rules = rules
        self.names = names
        self.depths = [r.depth for r in rules]
        self.matchers: list[Matcher | None] = [getattr(r, "lhs", None) for r in rules]
        # the operators some pattern asks about: the others change no rule's answer, so they are left out of the
        # key (methods differ mostly in operators no pattern names: far fewer keys, far fewer misses)
        self.relevant = 0
        for lhs in self.matchers:
            if lhs is not None:
                self.relevant |= lhs.needed_mask
                for choice in lhs.choice_masks:
                    self.relevant |= choice
        self._by_mask: dict[int, tuple[list[int], list[int]]] = {}

    def split(self, present: int) -> tuple[list[int], list[int]]:
        """(indexes of the rules that may match, indexes of the pattern rules that cannot: an operator they need
        is not ``present``), each in the list's order."""
        present &= self.relevant
        got = self._by_mask.get(present)
        if got is None:
            if len(self._by_mask) >= 4096:
                self._by_mask.clear()
            live: list[int] = []
            dead: list[int] = []
            for i, lhs in enumerate(self.matchers):
                (live if lhs is None or lhs.possible(present) else dead).append(i)
            got = self._by_mask[present] = (live, dead)
        return got


_PLANS: dict[tuple[int, ...], _RulePlan] = {}  # rule ids -> plan (the plan holds the rules: ids stay theirs)


def _plan(rules: Sequence[Rewrite]) -> _RulePlan:
    key = tuple(map(id, rules))
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= 64:
            _PLANS.clear()
        plan = _PLANS[key] = _RulePlan(tuple(rules))
    return plan


class Runner:
    def __init__(self, rules: Sequence[Rewrite], limits: Limits | None = None, *, semi_naive: bool = True) -> None:
        self._plan = _plan(rules)
        self.rules = list(rules)
        self.limits = limits or Limits()
        self.semi_naive = semi_naive  # off: every rule searches everywhere every iteration (tests compare)
        self._rebuild_rate = 5e-6  # seconds of rebuild per queued repair, learnt from the rebuilds seen
        self._timed = True  # whether the current run has a time limit (set by run)

    def run(self, eg: EGraph) -> RunReport:
        lim = self.limits
        clock = budget_clock
        start = clock()
        deadline = math.inf if lim.time_limit_s is None else start + lim.time_limit_s
        # untimed (the optimizer's work budget): no deadline to compare with, so no clock reads in the loop (each
        # can read the CPU time, a system call)
        timed = self._timed = deadline != math.inf
        report = RunReport()
        plan = self._plan
        rules, names, depths = plan.rules, plan.names, plan.depths
        n = len(rules)
        stats: list[RuleStats | None] = [None] * n  # made when a rule is first searched: most never are in most runs
        banned_until = [0] * n
        bans = [0] * n
        searched = [-1] * n  # the iteration each rule was last searched in
        done: dict[str, set] = {}  # per rule, the matches already applied (hashable ones)
        eg.rebuild()
        eg.take_touched()
        stop: StopReason | None = None
        it = 0
        try:
            while stop is None:
                if it >= lim.max_iterations:
                    stop = StopReason.ITERATION_LIMIT
                    break
                if timed and clock() >= deadline:
                    stop, report.stopped_in = StopReason.TIME_LIMIT, f"start of iteration {it + 1}"
                    break
                if eg.node_count >= lim.max_nodes:
                    stop, report.stopped_in = StopReason.NODE_LIMIT, f"start of iteration {it + 1}"
                    break
                version = eg.version
                any_banned = False
                found: list[tuple[Rewrite, list, RuleStats]] = []
                k = it % n if n else 0
                it += 1
                # Semi-naive matching: a rule searched in the previous iteration only needs the roots from which
                # its pattern can reach a class that changed since (anything else was matched, and applied,
                # already; applying a match twice changes nothing).
                touched = eg.take_touched()
                near: list[set[int]] = []
                live, dead = plan.split(eg.op_mask())
                # a pattern rule an operator of which is nowhere is searched, trivially (what semi-naive matching
                # next time needs to know); a banned one is skipped. Neither depends on the order of the rules,
                # and a limit that stops this iteration ends the run (where the rest stops mattering).
                for i in dead:
                    if banned_until[i] > it:
                        any_banned = True
                    else:
                        searched[i] = it
                j = bisect.bisect_left(live, k)  # the rules in the order rotated by k, each iteration anew
                for i in live[j:] + live[:j]:
                    rule = rules[i]
                    if banned_until[i] > it:
                        any_banned = True
                        continue
                    threshold = lim.match_limit << bans[i]
                    roots = None
                    depth = depths[i]
                    if depth is not None and searched[i] == it - 1 and self.semi_naive:
                        if depth >= len(near):
                            near = eg.ancestor_levels(touched, max(depth, 6))
                        roots = near[depth]
                        if not roots:
                            searched[i] = it
                            continue
                    searched[i] = it
                    st = stats[i]
                    if st is None:
                        st = stats[i] = RuleStats()
                    t0 = time.perf_counter()  # statistics: the wall clock
                    ms, late = rule.search(eg, threshold + 1, deadline, roots)
                    st.search_s += time.perf_counter() - t0
                    if len(ms) > threshold:
                        searched[i] = -1  # its matches were not applied: search everywhere next time
                        banned_until[i] = it + (lim.ban_length << bans[i])
                        bans[i] += 1
                        st.bans += 1
                        any_banned = True
                    elif ms:
                        st.matches += len(ms)
                        found.append((rule, ms, st))
                    if late or (timed and clock() > deadline):
                        stop, report.stopped_in = StopReason.TIME_LIMIT, f"search of {rule.name} (iteration {it})"
                        break
                if stop is None:
                    stop = self._apply(eg, found, deadline, done, report)
                    if stop is not None:
                        report.stopped_in = f"application (iteration {it})"
                self._rebuild(eg, report)
                if stop is None and eg.version == version:
                    if not any_banned:
                        stop = StopReason.SATURATED
                    else:  # nothing left to do but the banned rules: give them their turn now
                        banned_until = [0] * n
        finally:
            eg.rebuild()
            report.rules = {names[i]: st for i, st in enumerate(stats) if st is not None}  # in the rules' order
            report.iterations = it
            report.nodes = eg.node_count
            report.classes = eg.class_count
            report.stop_reason = stop or StopReason.SATURATED
            report.time_s = clock() - start
            report.conflicts = len(eg.conflicts)
        return report

    def _rebuild(self, eg: EGraph, report: RunReport) -> None:
        if not self._timed:  # nothing decides by the rate: the statistics on the wall clock, a cheaper read
            t0 = time.perf_counter()
            eg.rebuild()
            report.rebuild_s += time.perf_counter() - t0
            return
        work = eg.pending_work()
        t0 = budget_clock()
        eg.rebuild()
        took = budget_clock() - t0
        report.rebuild_s += took
        if work > 64:  # learn the cost per queued repair (cascades included), forgetting slowly
            self._rebuild_rate = max(self._rebuild_rate * 0.7, took / work)

    def _apply(self, eg: EGraph, found: list[tuple[Rewrite, list, RuleStats]], deadline: float,
               done: dict[str, set], report: RunReport) -> StopReason | None:
        clock = budget_clock
        perf = time.perf_counter  # the rules' statistics: wall clock, a cheaper read than the budget clock
        max_nodes = self.limits.max_nodes
        limit = self.limits.time_limit_s
        timed = limit is not None
        rebuild_slice = 0.02 * limit if limit is not None else math.inf
        queues: list[tuple[Rewrite, Iterator, RuleStats, set | None]] = [
            (rule, iter(ms), st, done.setdefault(rule.name, set()) if getattr(rule, "cache_matches", False) else None)
            for rule, ms, st in found]
        while queues:
            alive: list[tuple[Rewrite, Iterator, RuleStats, set | None]] = []
            for rule, it, st, seen in queues:
                m = next(it, None)
                if m is None:
                    continue
                if seen is not None:
                    # the same match (same representatives) was applied before: applying it again adds nothing
                    if m in seen:
                        alive.append((rule, it, st, seen))
                        continue
                    seen.add(m)
                t0 = perf()
                if rule.apply(eg, m):
                    st.applied += 1
                st.apply_s += perf() - t0
                alive.append((rule, it, st, seen))
                if eg.node_count >= max_nodes:
                    return StopReason.NODE_LIMIT
                if not timed:  # the early rebuilds below are timed decisions: without a clock, none
                    continue
                # after EVERY application (a clock read and two lengths: well under 1% of an application), so a
                # rule whose applications are slow cannot carry the run past its deadline by a batch of them
                work = eg.pending_work()
                if work > 64 and self._rebuild_rate * work > rebuild_slice:
                    # a long queue of repairs: rebuild now, so the rebuild that ends the run stays short
                    self._rebuild(eg, report)
                    work = eg.pending_work()
                # stop early enough that the rebuild this iteration still needs fits in the time limit
                if clock() + self._rebuild_rate * work > deadline:
                    return StopReason.TIME_LIMIT
            queues = alive
        return None


def saturate(eg: EGraph, rules: Sequence[Rewrite], limits: Limits | None = None) -> RunReport:
    """Run ``rules`` on ``eg`` within ``limits``."""
    return Runner(rules, limits).run(eg)
