#!/usr/bin/env python3
"""Issue 17's goals on pairs we did not write: ``peggy-jvm validate`` on the EqBench benchmark, judged by its labels.

EqBench (github.com/shrBadihi/EqBench) holds pairs ``benchmarks/<SUITE>/<NAME>/<Eq|Neq>/{oldV,newV}.java``: each a
class ``oldV`` / ``newV`` in package ``benchmarks.<SUITE>.<NAME>.<Eq|Neq>``, some with helper classes beside them,
labelled equivalent (``Eq``) or not (``Neq``). Its code is reference data and never goes into this repository:
fetch it yourself into a folder outside the checkout, keeping the layout below ``benchmarks/`` (``git clone
https://github.com/shrBadihi/EqBench && python3 scripts/bench_eqbench.py EqBench/benchmarks``, or copy single
suites: the script takes every folder under SRC holding both ``oldV.java`` and ``newV.java``).

For each pair the script compiles each version into its own directory (``javac``: ``oldV.java`` and the folder's
helper classes into ``old/``, ``newV.java`` and the same helpers into ``new/``), runs what ``peggy-jvm validate old
new --map <pkg>.oldV=<pkg>.newV --method-timeout S`` runs (``validate_inputs``, in this process: a Python start
per pair costs seconds on a loaded machine), and judges the outcome against the label **on the pair's entry
methods**: the methods of ``oldV`` no other method of ``oldV`` calls (EqBench's claim is about what a client
calls; a private helper such as ``foo(a, b)`` may well differ on inputs the entry never passes it, and a
JVM-confirmed difference there is a true finding, counted apart as ``helper differs``). The pairs that declare
packages of their own (all but a few) are validated in ONE run, every oldV tree against every newV tree with one
``--map`` entry per pair (:func:`run_batch`: as a user validates a jar, one process, the classes read once, one
JVM for every search; each method pair keeps its own budget), the others one call each (``--apart``: every pair
so, the way earlier sessions measured).

* ``proved``: an Eq pair whose every entry method is ``equivalent`` under exact JVM semantics;
* ``proved-assuming``: the same, some entry method relying on an assumption given by ``--assume`` (e.g.
  ``closed-world``: no class outside the pair extends it); counted apart, never as ``proved``;
* ``shown``: a Neq pair with an entry method ``not-equivalent`` (a counterexample the JVM confirmed);
* ``contradicted``: an Eq pair with an entry method ``not-equivalent`` on an input the JVM ran both versions on
  with different outcomes. EqBench labels some pairs equivalent that are so only over unbounded integers (Java's
  ints wrap), or whose one version does not terminate on some input, and one that is simply different; such a
  verdict is the exact-semantics answer, not an error, but it is counted and listed with its input (check it
  yourself: the report prints the arguments and both outcomes);
* ``wrong``: a Neq pair proved equivalent, or an Eq pair called different without a counterexample;
* else open, grouped by the cause read off the reason of its first unsettled entry method.

Outputs: the table (proved % of Eq, shown % of Neq, wrong, p50/p95 of the validator's time per pair, summed over
its methods, and of each pair's whole validate call, or in the shared run its phases: wall clock and CPU, this
process's and its JVMs'), where the time goes (:class:`Profile`: per phase, the quick search before the proofs,
the proofs, the search after them and the JVM's answers, wall and CPU, and what no pair was charged), the open
pairs by cause and each open or wrong pair's reason on stdout; ``--json FILE`` the outcomes (with each pair's
phases). SRC without any pair,
or no ``javac``, is one line on stderr and exit 2.

Usage::

    python3 scripts/bench_eqbench.py SRC [--method-timeout S] [--only SUBSTRING ...] [--json FILE] [--work DIR]
                                         [--assume NAME ...] [--apart]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.pairsuite import GOAL_P50_S, GOAL_P95_S, GOAL_PROVED, GOAL_SHOWN, _quantile  # noqa: E402

@dataclass(frozen=True, slots=True)
class Pair:
    id: str  # SUITE/NAME/Eq
    folder: Path
    label: str  # Eq or Neq

    def package(self, side: str) -> str:
        """The package ``side`` (oldV or newV) declares (a few EqBench files declare their Eq twin's)."""
        text = (self.folder / f"{side}.java").read_text(encoding="utf-8", errors="replace")
        m = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M)
        return m.group(1) if m else ""

    def internal(self, side: str) -> str:
        pkg = self.package(side)
        return f"{pkg.replace('.', '/')}/{side}" if pkg else side


@dataclass(slots=True)
class Outcome:
    id: str
    label: str
    result: str  # proved / unproved / shown / unshown / wrong / error
    cause: str  # why it is open (or the error), "" when settled
    time_ms: float
    helper_differs: bool = False
    methods: list[dict] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    wall_ms: float = 0.0  # the whole validate call (reading, pairing, the JVM's start too); shared run: its phases
    cpu_ms: float = 0.0  # its CPU: this process's and its children's (the JVM), all threads
    phases: dict[str, list[float]] = field(default_factory=dict)  # phase -> [wall ms, CPU ms] (Profile)


def find_pairs(src: Path) -> list[Pair]:
    """Every folder under ``src`` with both versions, in path order; its id the last three path parts."""
    pairs = []
    for old in sorted(src.rglob("oldV.java")):
        folder = old.parent
        if (folder / "newV.java").is_file() and folder.name in ("Eq", "Neq"):
            pairs.append(Pair("/".join(folder.parts[-3:]), folder, folder.name))
    return pairs


def _sources(pair: Pair, side: str) -> list[Path]:
    """``side``'s file and the folder's helper classes."""
    return [pair.folder / f"{side}.java",
            *(f for f in sorted(pair.folder.glob("*.java")) if f.name not in ("oldV.java", "newV.java"))]


def _javac(files: list[Path], out: Path) -> subprocess.CompletedProcess:
    out.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d", str(out), *map(str, files)],
                          capture_output=True, text=True)


def compile_all(pairs: list[Pair], work: Path) -> tuple[dict[str, str], set[str]]:
    """Each side of every pair compiled into ``work/<id>/{old,new}``: (the pairs that did not build -> javac's
    first error, the ids of the pairs compiled alone). javac starts slowly, so the pairs whose classes cannot
    collide (each package declared once per side) are compiled in one run per side and split by package; a
    pair whose file fails, or shares a package, is compiled alone (to get its own error; it is then validated
    alone too)."""
    errors: dict[str, str] = {}
    alone: list[Pair] = []
    for side, short in (("oldV", "old"), ("newV", "new")):
        seen: Counter = Counter(p.package(side) for p in pairs)
        batch = [p for p in pairs if seen[p.package(side)] == 1 and p.package(side)]
        alone += [p for p in pairs if p not in batch and p not in alone]
        shared = work / f"_all_{short}"
        for _attempt in range(3):
            if not batch:
                break
            proc = _javac([f for p in batch for f in _sources(p, side)], shared)
            if proc.returncode == 0:
                break
            bad = {Path(m).resolve() for m in re.findall(r"^(\S+\.java):\d+: error", proc.stderr, re.M)}
            failed = [p for p in batch if any(f.resolve() in bad for f in _sources(p, side))] or batch
            alone += [p for p in failed if p not in alone]
            batch = [p for p in batch if p not in failed]
        for p in batch:
            if p in alone:
                continue
            dest = work / p.id / short / p.package(side).replace(".", "/")
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(shared / p.package(side).replace(".", "/"), dest)
    for p in alone:
        for side, short in (("oldV", "old"), ("newV", "new")):
            shutil.rmtree(work / p.id / short, ignore_errors=True)
            proc = _javac(_sources(p, side), work / p.id / short)
            if proc.returncode:
                first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:200])
                errors[p.id] = f"javac {side}: {first.split('/')[-1]}"
                break
    return errors, {p.id for p in alone}


def entry_methods(old_dir: Path, pair: Pair) -> set[tuple[str, str]]:
    """The methods (name, descriptor) of ``oldV`` that no other method of ``oldV`` calls."""
    from peggy_jvm.classfile.reader import read_class
    from tests.support.proguard import method_listings

    internal = pair.internal("oldV")
    listings = method_listings(read_class((old_dir / f"{internal}.class").read_bytes()))
    called = set()
    own = re.compile(rf"Method {re.escape(internal)}\.(\S+?):?(\(\S*)")
    for key, lines in listings.items():
        for ln in lines:
            for name, desc in own.findall(ln):
                if (name.strip('"'), desc) != key:
                    called.add((name.strip('"'), desc))
    return {k for k in listings if k not in called}


def cause_of(reason: str, label: str) -> str:
    """A short bucket for an unsettled method's reason: for an Eq pair why the proof failed (the reason's first
    part), for a Neq pair why the search found nothing (the rest)."""
    proof, _, search = reason.partition("; ")
    buckets = ((("equivalent if its callees are", "own code proved, a callee not"),
                ("calls whose pair is not proved", "calls an unproved pair"),
                ("time limit", "saturation time limit"), ("node limit", "saturation node limit"),
                ("cannot lift", "not modelled (lift)"), ("no PEG", "not modelled (PEG)"),
                ("saturated", "axioms do not prove it"))
               if label == "Eq" else
               (("did not finish", "JVM run stopped for time"), ("no receiver", "no receiver built"),
                ("did not confirm", "interpreter difference not confirmed"),
                ("not searched", "not searched (callee given)"),
                ("no difference found", "no differing input found"), ("step budget", "interpreter step budget")))
    text = proof if label == "Eq" else search or proof
    for needle, bucket in buckets:
        if needle in text:
            return bucket
    return text[:60] or "no method paired"


def judge(pair: Pair, rows: list[dict], entries: set[tuple[str, str]]) -> Outcome:
    entry_rows = [m for m in rows if (m["name"], m["descriptor"]) in entries]
    helper_differs = any(m["verdict"] == "not-equivalent" and m not in entry_rows for m in rows)
    verdicts = {m["verdict"] for m in entry_rows}
    if pair.label == "Eq":
        differs = [m for m in entry_rows if m["verdict"] == "not-equivalent"]
        assumed = any(m.get("assumptions") for m in entry_rows)
        result = (("contradicted" if all(m["counterexample"] for m in differs) else "wrong") if differs else
                  ("proved-assuming" if assumed else "proved") if entry_rows and verdicts == {"equivalent"} else
                  "unproved")
    else:
        result = ("shown" if any(m["verdict"] == "not-equivalent" and m["counterexample"] for m in entry_rows) else
                  "wrong" if entry_rows and verdicts == {"equivalent"} else "unshown")
    open_rows = [m for m in entry_rows if m["verdict"] == "unknown"]
    cause = cause_of(open_rows[0]["reason"], pair.label) if result in ("unproved", "unshown") and open_rows else ""
    if result in ("unproved", "unshown") and not entry_rows:
        cause = "no entry method paired"
    return Outcome(pair.id, pair.label, result, cause, sum(m["time_ms"] for m in rows), helper_differs, rows,
                   [f"{n}{d}" for n, d in sorted(entries)])


def run_pair(pair: Pair, work: Path, method_timeout: float, assume: tuple[str, ...] = ()) -> Outcome:
    """``validate old new --map <pkg>.oldV=<pkg>.newV --method-timeout S [--assume NAME ...]`` in this process
    (javac and the interpreter start slowly on a loaded machine; the CLI is a thin wrapper of the same call)."""
    from peggy_jvm.validate import ValidateOptions, validate_inputs

    old, new = work / "old", work / "new"
    options = ValidateOptions(method_timeout=method_timeout,
                              class_map={pair.internal("oldV"): pair.internal("newV")}, assumptions=assume)
    wall, cpu = time.perf_counter(), cpu_seconds()
    try:
        report = validate_inputs(old, new, options)
    except Exception as exc:  # noqa: BLE001 - a crash is a measured outcome of this benchmark, not its end
        return Outcome(pair.id, pair.label, "error", f"validate: {type(exc).__name__}: {exc}"[:200], 0.0)
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    rows = [p.to_json() for p in report.pairs if p.class_name == pair.internal("oldV")]
    out = judge(pair, rows, entry_methods(old, pair))
    out.wall_ms, out.cpu_ms = wall * 1000, cpu * 1000
    return out


def run_batch(pairs: list[Pair], work: Path, method_timeout: float, assume: tuple[str, ...] = ()) -> list[Outcome]:
    """The pairs, each compiled apart (no two declare one package), in ONE validate run: every oldV tree under
    ``work/_batch/old``, every newV tree under ``work/_batch/new``, ``--map`` holding each pair's renaming, as a
    user validates a jar of many classes (one process, the classes read once, one JVM for every search). No
    class of one pair names another's, so each method pair is proved and searched as in a run of its own, within
    its own ``--method-timeout``; what the run shares is the start-up. A pair's ``wall_ms``/``cpu_ms`` are then
    its phases' (:class:`Profile`), the run's reading, pairing and JVM start counted apart."""
    from peggy_jvm.validate import ValidateOptions, validate_inputs

    old, new = work / "_batch" / "old", work / "_batch" / "new"
    for tree in (old, new):
        shutil.rmtree(tree, ignore_errors=True)
    for p in pairs:
        shutil.copytree(work / p.id / "old", old, dirs_exist_ok=True)
        shutil.copytree(work / p.id / "new", new, dirs_exist_ok=True)
    options = ValidateOptions(method_timeout=method_timeout,
                              class_map={p.internal("oldV"): p.internal("newV") for p in pairs}, assumptions=assume)
    try:
        report = validate_inputs(old, new, options)
    except Exception as exc:  # noqa: BLE001 - a crash is a measured outcome of this benchmark, not its end
        return [Outcome(p.id, p.label, "error", f"validate: {type(exc).__name__}: {exc}"[:200], 0.0) for p in pairs]
    by_class: dict[str, list[dict]] = defaultdict(list)
    for row in report.pairs:
        by_class[row.class_name].append(row.to_json())
    return [judge(p, by_class[p.internal("oldV")], entry_methods(work / p.id / "old", p)) for p in pairs]


PHASES = ("quick search", "proof", "search", "JVM")


@dataclass(slots=True)
class Spent:
    wall: float = 0.0
    cpu: float = 0.0  # this process's, and for the JVM phase the JVM's


class Profile:
    """Where each pair's time goes, per phase (:data:`PHASES`): the quick search before its proofs (its
    interpreter screen), its proofs (``prove_pair``, every attempt), its search after them, and the JVM's
    answers to both searches (``JvmHarness.ask``: waiting for the JVM to come up too), wall clock and CPU, each
    phase without the phases inside it. Measured by wrapping those four functions while the context is open
    (validate's code is not changed for it); a pair is found by the package of its class."""

    def __init__(self, pairs: list[Pair]) -> None:
        self.owner = {p.internal("oldV").rpartition("/")[0]: p.id for p in pairs}
        self.spent: dict[str, dict[str, Spent]] = defaultdict(lambda: defaultdict(Spent))
        self._stack: list[list[float]] = []
        self._saved: list[tuple[object, str, object]] = []

    def __enter__(self) -> Profile:
        from peggy_jvm.validate import counterexample as cx
        from peggy_jvm.validate import driver

        self._wrap(driver, "prove_pair", "proof", lambda pair, *_a, **_k: pair.orig_class.name)
        self._wrap(driver._Searcher, "quick", "quick search", lambda _s, pair, *_a, **_k: pair.orig_class.name)
        self._wrap(driver._Searcher, "full", "search", lambda _s, pair, *_a, **_k: pair.orig_class.name)
        self._wrap(cx.JvmHarness, "ask", "JVM", lambda _s, call, *_a, **_k: call.orig_class)
        return self

    def __exit__(self, *exc: object) -> None:
        for obj, name, fn in reversed(self._saved):
            setattr(obj, name, fn)

    def _wrap(self, obj: object, name: str, phase: str, cls_of) -> None:
        fn = getattr(obj, name)
        self._saved.append((obj, name, fn))

        def wrapped(*args, **kwargs):
            pid = self.owner.get(cls_of(*args, **kwargs).rpartition("/")[0], "?")
            inner = [0.0, 0.0]  # the wall and CPU of the phases inside this one
            self._stack.append(inner)
            jvm = _jvm_cpu_before(args[0]) if phase == "JVM" else None
            w0, c0 = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                wall, cpu = time.perf_counter() - w0, time.process_time() - c0
                self._stack.pop()
                if self._stack:
                    self._stack[-1][0] += wall
                    self._stack[-1][1] += cpu
                spent = self.spent[pid][phase]
                spent.wall += wall - inner[0]
                spent.cpu += cpu - inner[1] + (_jvm_cpu_after(args[0], jvm) if jvm is not None else 0.0)
        setattr(obj, name, wrapped)

    def totals(self, pid: str) -> tuple[float, float]:
        """The pair's wall clock and CPU over all phases, in ms."""
        phases = self.spent.get(pid, {})
        return sum(s.wall for s in phases.values()) * 1000, sum(s.cpu for s in phases.values()) * 1000


def _proc_cpu(pid: int | None) -> float:
    """The CPU seconds of a live process (user + system), 0 when it is gone."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def _jvm_pid(harness) -> int | None:
    proc = getattr(harness, "_proc", None)
    return proc.pid if proc is not None and proc.poll() is None else None


def _jvm_cpu_before(harness) -> tuple[int | None, float, float]:
    pid = _jvm_pid(harness)
    return pid, _proc_cpu(pid), _children_cpu()


def _jvm_cpu_after(harness, before: tuple[int | None, float, float]) -> float:
    """The JVMs' CPU during one ask: the live one's growth, a JVM ended (and reaped) during it counted from
    what it had when the ask began, one started during it in full."""
    pid0, cpu0, kids0 = before
    pid1 = _jvm_pid(harness)
    spent = _children_cpu() - kids0
    if pid0 is not None and pid1 == pid0:
        return spent + _proc_cpu(pid1) - cpu0
    return spent - (cpu0 if pid0 is not None else 0.0) + _proc_cpu(pid1)


def cpu_seconds() -> float:
    """CPU time of this process and of its children waited for (validate's JVMs), user and system."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def report_text(outcomes: list[Outcome], wall_s: float) -> str:
    results = Counter(o.result for o in outcomes)
    eq = sum(o.label == "Eq" for o in outcomes if o.result != "error")
    neq = sum(o.label == "Neq" for o in outcomes if o.result != "error")
    times = [o.time_ms / 1000 for o in outcomes if o.result != "error"]
    p50, p95 = (statistics.median(times) if times else 0.0), _quantile(times, 0.95)
    wrong = [o.id for o in outcomes if o.result == "wrong"]
    contradicted = [o.id for o in outcomes if o.result == "contradicted"]
    share = lambda n, d: f"{n}/{d} = {n / d:.1%}" if d else "0/0"  # noqa: E731
    lines = [f"{len(outcomes)} pairs ({eq} Eq, {neq} Neq, {results['error']} not built or not run), "
             f"wall {wall_s:.1f} s",
             f"{'goal':34} {'measured':22} {'target':9} met",
             f"{'Eq pairs proved':34} {share(results['proved'], eq):22} {'>= ' + format(GOAL_PROVED, '.0%'):9} "
             f"{'yes' if eq and results['proved'] / eq >= GOAL_PROVED else 'NO'}",
             f"{'Neq pairs shown (JVM input)':34} {share(results['shown'], neq):22} "
             f"{'>= ' + format(GOAL_SHOWN, '.0%'):9} {'yes' if neq and results['shown'] / neq >= GOAL_SHOWN else 'NO'}",
             *([f"{'Eq pairs proved relying on --assume':34} {share(results['proved-assuming'], eq):22} "
                f"(apart: {' '.join(o.id for o in outcomes if o.result == 'proved-assuming')})"]
               if results['proved-assuming'] else []),
             f"{'Eq pairs proved, of those not contradicted':34} "
             f"{share(results['proved'], eq - len(contradicted)):22}",
             f"{'wrong verdicts':34} {len(wrong):<22} {'0':9} {'yes' if not wrong else 'NO'}",
             f"{'Eq labels contradicted (JVM input)':34} {len(contradicted):<22}",
             f"{'p50 time per pair':34} {p50:<22.3f} {'<= ' + str(GOAL_P50_S):9} "
             f"{'yes' if p50 <= GOAL_P50_S else 'NO'}",
             f"{'p95 time per pair':34} {p95:<22.3f} {'<= ' + str(GOAL_P95_S):9} "
             f"{'yes' if p95 <= GOAL_P95_S else 'NO'}",
             *timing_rows([o.wall_ms / 1000 for o in outcomes if o.result != "error"],
                          [o.cpu_ms / 1000 for o in outcomes if o.result != "error"])]
    helpers = [o.id for o in outcomes if o.helper_differs]
    if helpers:
        lines.append(f"helper differs (JVM-confirmed, not an entry): {len(helpers)}  {' '.join(helpers)}")
    by_suite: dict[str, Counter] = defaultdict(Counter)
    for o in outcomes:
        by_suite[o.id.split("/")[0]][o.result] += 1
    lines.append("\nby suite: proved/Eq  shown/Neq  wrong  contradicted  error")
    for suite, c in sorted(by_suite.items()):
        eq_total = c['proved'] + c['proved-assuming'] + c['unproved'] + c['contradicted']
        lines.append(f"  {suite:14} {c['proved']:>3}/{eq_total:<3} "
                     f"{c['shown']:>5}/{c['shown'] + c['unshown']:<3} {c['wrong']:>5} {c['contradicted']:>13} "
                     f"{c['error']:>6}")
    causes: dict[str, list[str]] = defaultdict(list)
    for o in outcomes:
        if o.result in ("unproved", "unshown", "error"):
            causes[f"{o.result}: {o.cause if o.result != 'error' else 'not built or not run'}"].append(o.id)
    lines.append("\nopen pairs by cause:")
    lines += [f"  {k:52} {len(v):>3}  {' '.join(v)}" for k, v in sorted(causes.items(), key=lambda kv: -len(kv[1]))]
    lines.append("\nopen, wrong, contradicted and failed pairs (the first unsettled entry method's reason):")
    for o in outcomes:
        if o.result in ("proved", "shown", "proved-assuming"):
            continue
        entry = [m for m in o.methods if f"{m['name']}{m['descriptor']}" in o.entries]
        row = next((m for m in entry if m["verdict"] == "unknown"), None) or next(
            (m for m in entry if m["verdict"] == ("not-equivalent" if o.label == "Eq" else "equivalent")), None)
        text = (f"{row['name']}{row['descriptor']}: {row['verdict']}: {row['reason']}"
                + (f" [{row['counterexample']}]" if row["counterexample"] else "")) if row else o.cause
        lines.append(f"  {o.id:34} {o.result:8} {text[:220]}")
    return "\n".join(lines)


def timing_rows(wall: list[float], cpu: list[float]) -> list[str]:
    """p50/p95 per pair of its whole validate call (in the shared run: its phases), wall clock and CPU (the time
    rows above are the methods' own ``time_ms``: wall clock, without reading the classes or the JVM's start; the
    CPU does not grow with the machine's load as the wall clock does)."""
    return [f"{'p50 / p95 wall per pair, all of it':34} {statistics.median(wall) if wall else 0.0:.3f} / "
            f"{_quantile(wall, 0.95):.3f}",
            f"{'p50 / p95 CPU per pair, all of it':34} {statistics.median(cpu) if cpu else 0.0:.3f} / "
            f"{_quantile(cpu, 0.95):.3f}  (sum {sum(cpu):.1f} s, this process + its JVMs)"]


def phase_text(outcomes: list[Outcome], profile: Profile, batch: list[Pair], compiled_s: float, validate_s: float,
               validate_cpu: float, total_cpu: float) -> str:
    """Where the time went: per phase the sum over pairs and the median pair's share, wall clock and CPU, then
    what no pair was charged (reading the classes, pairing, the JVM's start, javac)."""
    ran = [o for o in outcomes if o.result != "error"]
    lines = [f"\nwhere the time goes ({len(batch)} pairs in one validate run, {len(ran) - len(batch)} apart; "
             f"per phase: sum over pairs, then the median over pairs, wall / CPU in s):"]
    for phase in PHASES:
        spent = [profile.spent.get(o.id, {}).get(phase, Spent()) for o in ran]
        lines.append(f"  {phase:14} sum {sum(s.wall for s in spent):7.2f} / {sum(s.cpu for s in spent):6.2f}   "
                     f"median {statistics.median([s.wall for s in spent]) if spent else 0.0:6.3f} / "
                     f"{statistics.median([s.cpu for s in spent]) if spent else 0.0:6.3f}")
    charged = sum(sum(s.wall for s in profile.spent.get(o.id, {}).values()) for o in ran)
    charged_cpu = sum(sum(s.cpu for s in profile.spent.get(o.id, {}).values()) for o in ran)
    lines.append(f"  {'no pair':14} wall {validate_s - charged:6.2f}, CPU {validate_cpu - charged_cpu:6.2f} "
                 f"(reading, pairing, JVM starts, judging); javac {compiled_s:.1f} s wall; all CPU {total_cpu:.1f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path, help="folder holding <SUITE>/<NAME>/<Eq|Neq>/{oldV,newV}.java")
    parser.add_argument("--method-timeout", type=float, default=10.0, help="validate's budget per method pair")
    parser.add_argument("--only", nargs="*", help="pairs whose id (SUITE/NAME/Eq) contains one of these")
    parser.add_argument("--json", type=Path, help="write the outcomes here")
    parser.add_argument("--work", type=Path, help="keep the compiled pairs and reports here")
    parser.add_argument("--apart", action="store_true",
                        help="one validate call per pair (each reading its classes and starting its JVM) instead of "
                             "one for every pair that can share it")
    parser.add_argument("--assume", action="append", default=[],
                        help="validate's --assume NAME (repeatable); pairs proved relying on it are counted apart")
    args = parser.parse_args(argv)
    pairs = find_pairs(args.src)
    if args.only:
        pairs = [p for p in pairs if any(s in p.id for s in args.only)]
    if not pairs:
        print(f"bench_eqbench: error: {args.src}: no <SUITE>/<NAME>/<Eq|Neq>/ folder with oldV.java and newV.java",
              file=sys.stderr)
        return 2
    if not shutil.which("javac"):
        print("bench_eqbench: error: javac: not on PATH", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="peggy-eqbench-"))
    t0, cpu0 = time.perf_counter(), cpu_seconds()
    errors, alone = compile_all(pairs, work)
    compiled_s = time.perf_counter() - t0
    batch = [] if args.apart else [p for p in pairs if p.id not in errors and p.id not in alone]
    done: dict[str, Outcome] = {}
    with Profile(pairs) as profile:
        v0, vcpu0 = time.perf_counter(), cpu_seconds()
        for o in run_batch(batch, work, args.method_timeout, tuple(args.assume)) if batch else []:
            o.wall_ms, o.cpu_ms = profile.totals(o.id)
            done[o.id] = o
        for pair in pairs:
            if pair.id not in done:
                done[pair.id] = (Outcome(pair.id, pair.label, "error", errors[pair.id], 0.0) if pair.id in errors
                                 else run_pair(pair, work / pair.id, args.method_timeout, tuple(args.assume)))
        validate_s, validate_cpu = time.perf_counter() - v0, cpu_seconds() - vcpu0
    outcomes = [done[p.id] for p in pairs]
    for o in outcomes:
        o.phases = {k: [round(v.wall * 1000, 1), round(v.cpu * 1000, 1)]
                    for k, v in profile.spent.get(o.id, {}).items()}
    for o in outcomes:
        print(f"{o.id:40} {o.result:8} {o.time_ms / 1000:7.2f} s  (wall {o.wall_ms / 1000:.2f} s, "
              f"CPU {o.cpu_ms / 1000:.2f} s)", file=sys.stderr)
    print(report_text(outcomes, time.perf_counter() - t0))
    print(phase_text(outcomes, profile, batch, compiled_s, validate_s, validate_cpu, cpu_seconds() - cpu0))
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1), encoding="utf-8")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
