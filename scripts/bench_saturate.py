#!/usr/bin/env python3
"""Benchmark of equality saturation: per method, import its PEG into an e-graph and saturate it with the default
rules under the default limits; print nodes, classes, iterations, stop reason and time per method, then a summary.

    scripts/bench_saturate.py [--count N] [--seed S] [--jar JAR] [--limit N] [--time-limit S] [--max-nodes N]
                              [--iterations N] [--groups G,...] [--safe] [--profile] [--quiet]

Sources of PEGs (a callable/iterable of ``(name, PEG)``; :func:`generated_pegs` and :func:`jar_pegs` are the two
today, and any other is a one-line change in :func:`main`):

* default: ``--count`` generated method-like PEGs (seeded): int/long/double arithmetic, branches as phi, field
  reads and writes, checked divisions, library calls, and counted loops (counters, accumulators, a loop sigma,
  guarded break conditions, some nested), 10 to a few hundred nodes each;
* ``--jar JAR``: every method of the jar, through ``peggy_jvm.classfile.reader.read_class``,
  ``peggy_jvm.ir.lift.lift_method`` and ``peggy_jvm.peg.build.build_peg`` (when that module exists); methods
  that do not lift or build are counted and skipped.

Rules: the default rule set (plus ``--groups``), or with ``--safe`` the rule groups the full stage saturates with
(``peggy_jvm.rules.policy.safe_rules``, which ``optimize --stage full`` uses).

The optimizer's own saturations (issue 19): ``--optimizer FILE`` replays the saturations ``optimize --stage full``
makes (its rules, its work-budget limits: no clock; the calls it inlines) on the methods of a sample of ``--jar``
(``--classes N``: every k-th class, as ``bench_throughput.py`` samples), captured once into FILE by running the
optimizer on the sample (the PEGs and inlined bodies, pickled; a later run reuses FILE). It prints the CPU seconds
of the imports (``EPeg.add_peg`` and inlining) and of the runs (``Runner.run``), and a digest of every saturated
e-graph (classes, their nodes in order, parents and facts, the memo, the proof log, the run's report) that two
builds agree on exactly when they saturate alike. ``--old DIR`` alternates this build with the source tree DIR
(``git archive <commit> | tar -x -C DIR``), ``--repeat`` times, each run a child process, and prints both builds'
CPU and digests::

    scripts/bench_saturate.py --optimizer /tmp/g100.pkl --jar ~/.cache/peggy-jvm/corpus/jars/guava.jar \
        --classes 100 --old /tmp/old --repeat 3

Goal (issue 5): the median method saturates in under 50 ms, and no method exceeds its time budget by more than
10% (``OVER`` in the table, the summary's ``over budget`` count and list). Issue 6: the runner keeps its time
limit inside an iteration too; the summary's ``max overrun`` is the largest ``run - limit`` (ms and % of the
limit) over all methods, the runner's own time (``Runner.run``: search, application, rebuilds, final rebuild),
and ``stopped in`` counts where limits stopped runs. The runner's times (``run``) are on its clock, the CPU time of
``peggy_jvm/egraph/clock.py``, as its time limit is; the other times are wall clock; the summary also gives the
median CPU time, which is what to compare on a loaded machine.
"""
from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import random
import statistics
import sys
import time
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

ROOT = Path(__file__).resolve().parent.parent
# --build DIR (the child runs of --old): that source tree's peggy_jvm, not this one's
BUILD = Path(sys.argv[sys.argv.index("--build") + 1]) if "--build" in sys.argv[:-1] else ROOT
sys.path.insert(0, str(BUILD))

from peggy_jvm.egraph import Limits, Runner  # noqa: E402
from peggy_jvm.epeg import EPeg  # noqa: E402
from peggy_jvm.ir.nodes import FieldRef, MethodRef  # noqa: E402
from peggy_jvm.peg.graph import PEG  # noqa: E402
from peggy_jvm.rules import default_rules  # noqa: E402

PegSource = Callable[[], Iterable[tuple[str, PEG]]]


# -- generated PEGs ---------------------------------------------------------------------------------------------
class _Gen:
    """One generated method: a straight-line sequence of statements over a threaded sigma, with loops."""

    def __init__(self, rng: random.Random, name: str) -> None:
        self.rng = rng
        self.peg = PEG(name, is_static=False)
        self.peg.param_types = []
        p = self.peg
        self.sigma = p.add("sigma0")
        self.ints = [self.param("int") for _ in range(rng.randint(1, 3))]
        self.longs = [self.param("long")]
        self.doubles = [self.param("double")]
        self.this = self.param("ref")
        self.ints += [p.add("const.i", rng.choice((0, 1, 2, 3, 5, 8, 10, -1, 100)))]
        self.fields = [FieldRef("bench/C", f"f{i}", "I") for i in range(3)]

    def param(self, kind: str) -> int:
        from peggy_jvm.ir.nodes import IRType, Kind
        i = len(self.peg.param_types)
        self.peg.param_types.append(IRType(Kind(kind)))
        return self.peg.add("param", i)

    def pick(self, xs: list[int]) -> int:
        return self.rng.choice(xs[-6:] if self.rng.random() < 0.7 else xs)

    def int_expr(self, depth: int = 0) -> int:
        r, p = self.rng, self.peg
        op = r.choice(("add.i", "sub.i", "mul.i", "and.i", "shl.i", "add.i", "mul.i", "xor.i"))
        a = self.pick(self.ints)
        b = p.add("const.i", r.choice((1, 2, 4, 3, 7, 31))) if r.random() < 0.4 else self.pick(self.ints)
        v = p.add(op, None, (a, b))
        if depth < 1 and r.random() < 0.3:
            v = p.add("add.i", None, (v, self.int_expr(depth + 1)))
        return v

    def statement(self, depth: int) -> None:
        r, p = self.rng, self.peg
        k = r.random()
        if k < 0.35:
            self.ints.append(self.int_expr())
        elif k < 0.45:
            a, b = self.pick(self.doubles), self.pick(self.doubles)
            self.doubles.append(p.add(r.choice(("add.d", "mul.d", "sub.d")), None, (a, b)))
        elif k < 0.5:
            a = self.pick(self.longs)
            self.longs.append(p.add("add.l", None, (a, p.add("i2l", None, (self.pick(self.ints),)))))
        elif k < 0.6:
            c = p.add(r.choice(("lt.i", "ge.i", "eq.i", "ne.i")), None, (self.pick(self.ints), self.pick(self.ints)))
            self.ints.append(p.add("phi", None, (c, self.int_expr(), self.pick(self.ints))))
        elif k < 0.7:
            o = p.add("getfield", r.choice(self.fields), (self.sigma, self.this))
            self.sigma = p.add("rho_sigma", None, (o,))
            self.ints.append(p.add("rho_value", None, (o,)))
        elif k < 0.78:
            o = p.add("putfield", r.choice(self.fields), (self.sigma, self.this, self.pick(self.ints)))
            self.sigma = p.add("rho_sigma", None, (o,))
        elif k < 0.83:
            d = self.pick(self.ints)
            chk = p.add("check.zero.i", None, (self.sigma, d))
            self.sigma = p.add("rho_sigma", None, (chk,))
            self.ints.append(p.add("div.i", None, (self.pick(self.ints), p.add("rho_value", None, (chk,)))))
        elif k < 0.88:
            m = MethodRef("java/lang/Math", "abs", "(I)I") if r.random() < 0.5 else MethodRef("bench/C", "g", "(I)I")
            o = p.add("invoke.static", m, (self.sigma, self.pick(self.ints)))
            self.sigma = p.add("rho_sigma", None, (o,))
            self.ints.append(p.add("rho_value", None, (o,)))
        elif depth < 2:
            self.loop(depth + 1)
        else:
            self.ints.append(self.int_expr())

    def loop(self, depth: int) -> None:
        """``for (i = a; i < n; i++) { acc = acc + f(i); maybe a field write }`` at loop depth ``depth``."""
        r, p = self.rng, self.peg
        n = self.pick(self.ints)
        i = p.new_theta(depth)
        acc = p.new_theta(depth)
        s = p.new_theta(depth)
        outer_ints, outer_sigma = self.ints, self.sigma
        self.ints = self.ints + [i, acc]
        self.sigma = s
        body = r.randint(1, 4)
        for _ in range(body):
            self.statement(depth)
        step = p.add("mul.i", None, (i, p.add("const.i", r.choice((3, 4, 5)))))
        nxt = p.add("add.i", None, (acc, step if r.random() < 0.5 else self.pick(self.ints)))
        one = p.add("const.i", 1)
        p.set_theta(i, outer_ints[-1] if r.random() < 0.3 else p.add("const.i", 0), p.add("add.i", None, (i, one)))
        p.set_theta(acc, self.pick(outer_ints), nxt)
        p.set_theta(s, outer_sigma, self.sigma)
        brk = p.add("guard", None, (self.sigma, p.add("ge.i", None, (i, n))))
        ps = p.add("pass", depth, (brk,))
        self.ints = outer_ints + [p.add("eval", depth, (acc, ps)), p.add("eval", depth, (i, ps))]
        self.sigma = p.add("eval", depth, (s, ps))

    def build(self, statements: int) -> PEG:
        for _ in range(statements):
            self.statement(0)
        p = self.peg
        p.root = p.add("return", None, (self.sigma, self.ints[-1]))
        p.seal()
        return p


def generated_pegs(count: int, seed: int = 0) -> Iterator[tuple[str, PEG]]:
    rng = random.Random(seed)
    for k in range(count):
        size = int(rng.lognormvariate(2.3, 0.8)) + 2  # median ~10 statements, a long tail
        yield f"gen{k:04d}", _Gen(rng, f"gen{k:04d}").build(min(size, 120))


def jar_pegs(jar: Path, limit: int | None = None) -> Iterator[tuple[str, PEG]]:
    """Every method of ``jar`` that lifts and builds (needs ``peggy_jvm.peg.build.build_peg``)."""
    from peggy_jvm.classfile.hierarchy import ClassHierarchy
    from peggy_jvm.classfile.reader import read_class
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.peg.build import build_peg  # type: ignore[attr-defined]
    hierarchy = ClassHierarchy([jar])
    n = 0
    with zipfile.ZipFile(jar) as z:
        for entry in sorted(z.namelist()):
            if not entry.endswith(".class"):
                continue
            cf = read_class(z.read(entry))
            for m in cf.methods:
                if m.code_attribute() is None:
                    continue
                name = f"{cf.name}.{m.name}{m.descriptor}"
                try:
                    peg = build_peg(lift_method(cf, m, hierarchy))
                except Exception as e:  # noqa: BLE001 - unsupported methods are reported, not fatal
                    _SKIPPED.append(f"{name}: {type(e).__name__}: {e}")
                    continue
                yield name, peg
                n += 1
                if limit and n >= limit:
                    return


_SKIPPED: list[str] = []


# -- the optimizer's saturations ----------------------------------------------------------------------------------
def capture(jar: Path, classes: int, dest: Path) -> None:
    """Run the optimizer on a sample of ``jar`` and pickle the saturations it makes to ``dest``: per method, the
    PEG, the callee bodies inlined into it and the limits (``saturate.saturate``'s arguments, the bodies chosen as
    it chooses them)."""
    import pickle
    import tempfile

    import peggy_jvm.saturate as stage
    from peggy_jvm import pipeline
    from peggy_jvm.rules.inline import choose_bodies
    sys.path.insert(0, str(ROOT / "scripts"))
    from bench_throughput import sample_jar
    made: list[tuple] = []
    inner = stage.saturate

    def recording(peg, rewrites, limits, callees=None):  # type: ignore[no-untyped-def]
        bodies = choose_bodies(peg, [peg.root], [(peg, callees)]) if callees is not None else {}
        made.append((peg.name, peg, bodies, limits))
        return inner(peg, rewrites, limits, callees)
    stage.saturate = recording  # type: ignore[assignment]
    try:
        with tempfile.TemporaryDirectory(prefix="bench-saturate-") as tmp:
            sample = sample_jar(jar, classes, Path(tmp) / "sample.jar")
            pipeline.optimize_input(sample, Path(tmp) / "out.jar", pipeline.Stage.FULL, classpath=[jar], jobs=1,
                                    method_timeout=None)
    finally:
        stage.saturate = inner  # type: ignore[assignment]
    tmp_dest = dest.with_suffix(dest.suffix + ".tmp")
    with open(tmp_dest, "wb") as f:
        pickle.dump(made, f)
    tmp_dest.replace(dest)


def _digest(eg: EPeg, report: Any, h: Any) -> None:
    """Fold what a saturation made into ``h``: equal digests, equal e-graphs (ids, node order and all)."""
    r = report
    h.update(repr((r.iterations, r.nodes, r.classes, r.stop_reason.value, r.stopped_in, r.conflicts,
                   [(n, s.matches, s.applied, s.bans) for n, s in r.rules.items()])).encode())
    h.update(repr(eg._parent).encode())
    for cid, cls in eg._classes.items():
        h.update(repr((cid, cls.nodes, cls.parents, cls.data)).encode())
    h.update(repr(list(eg._memo.items())).encode())
    h.update(repr(sorted((op, sorted(cs)) for op, cs in eg._by_op.items())).encode())
    h.update(repr(sorted((k, [(b, x.rule, x.names, x.values) for b, x in v])
                         for k, v in eg.proof._adj.items())).encode())


def replay(path: Path) -> tuple[float, float, str, int]:
    """(import CPU s, run CPU s, digest, saturations) of the saturations pickled at ``path``, with this build."""
    import hashlib
    import pickle

    from peggy_jvm.rules.inline import inline_calls
    from peggy_jvm.rules.policy import optimizer_rules
    with open(path, "rb") as f:
        made = pickle.load(f)
    rules = optimizer_rules(None)
    h = hashlib.sha256()
    imported = ran = 0.0
    for _name, peg, bodies, limits in made:
        c0 = time.process_time()
        eg = EPeg()
        mapping = eg.add_peg(peg)
        if bodies:
            inline_calls(eg, peg, mapping, bodies)
        c1 = time.process_time()
        report = Runner(rules, limits).run(eg)
        c2 = time.process_time()
        imported += c1 - c0
        ran += c2 - c1
        _digest(eg, report, h)
    return imported, ran, h.hexdigest()[:16], len(made)


def optimizer_main(args: argparse.Namespace) -> int:
    import json
    import subprocess
    path: Path = args.optimizer
    if not path.exists():
        if args.jar is None:
            raise SystemExit(f"bench_saturate: {path} does not exist: give --jar (and --classes) to capture it")
        capture(args.jar, args.classes, path)
    if args.old is None and not args.child:
        imported, ran, digest, count = replay(path)
        print(f"{count} saturations: import {imported:.2f} s, run {ran:.2f} s CPU, digest {digest}")
        return 0
    if args.child:
        print(json.dumps(replay(path)))
        return 0
    rows: dict[str, list] = {"old": [], "new": []}
    for _ in range(args.repeat):
        for build, tree in (("old", args.old), ("new", ROOT)):
            out = subprocess.run([sys.executable, __file__, "--optimizer", str(path), "--child", "--build", str(tree)],
                                 check=True, capture_output=True, text=True).stdout
            rows[build].append(json.loads(out.splitlines()[-1]))
            imported, ran, digest, count = rows[build][-1]
            print(f"{build}: {count} saturations, import {imported:.2f} s, run {ran:.2f} s CPU, digest {digest}")
    old_run, new_run = (sum(r[1] for r in rows[b]) for b in ("old", "new"))
    same = {r[2] for r in rows["old"]} == {r[2] for r in rows["new"]}
    print(f"run CPU old {old_run:.2f} s, new {new_run:.2f} s (sums of {args.repeat}): {old_run / new_run:.2f}x; "
          f"e-graphs {'identical' if same else 'DIFFERENT'}")
    return 0 if same else 1


# -- the benchmark ----------------------------------------------------------------------------------------------
def saturate_one(peg: PEG, rules: list, limits: Limits) -> dict:
    t0 = time.perf_counter()
    c0 = time.process_time()
    eg = EPeg()
    eg.add_peg(peg)
    imported = time.perf_counter() - t0
    c1 = time.process_time()
    report = Runner(rules, limits).run(eg)
    run_cpu = time.process_time() - c1
    total = time.perf_counter() - t0
    return {"peg_nodes": len(peg.nodes), "nodes": report.nodes, "classes": report.classes,
            "iterations": report.iterations, "stop": report.stop_reason.value, "import_ms": imported * 1000,
            "run_ms": report.time_s * 1000, "total_ms": total * 1000, "conflicts": report.conflicts,
            "stopped_in": getattr(report, "stopped_in", ""), "run_cpu_ms": run_cpu * 1000,
            "cpu_ms": (time.process_time() - c0) * 1000}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=200, help="generated PEGs (default source)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jar", type=Path, help="the methods of this jar instead (needs peggy_jvm.peg.build)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N methods of the jar")
    ap.add_argument("--time-limit", type=float, default=Limits().time_limit_s, help="seconds per method")
    ap.add_argument("--max-nodes", type=int, default=Limits().max_nodes)
    ap.add_argument("--iterations", type=int, default=Limits().max_iterations)
    ap.add_argument("--groups", default="", help="comma-separated rule groups to enable in addition")
    ap.add_argument("--safe", action="store_true", help="the full stage's safe rule groups instead of the defaults")
    ap.add_argument("--profile", action="store_true", help="cProfile the whole run, print the top functions")
    ap.add_argument("--quiet", action="store_true", help="summary only")
    ap.add_argument("--optimizer", type=Path, help="replay the optimizer's saturations pickled here (captured "
                                                   "from a sample of --jar when the file does not exist)")
    ap.add_argument("--classes", type=int, default=100, help="with --optimizer: classes of --jar sampled")
    ap.add_argument("--old", type=Path, help="with --optimizer: the old build's source tree, run alternately")
    ap.add_argument("--repeat", type=int, default=3, help="with --old: alternations")
    ap.add_argument("--build", type=Path, help=argparse.SUPPRESS)  # a child's source tree (read at import)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.optimizer is not None:
        return optimizer_main(args)

    if args.jar is not None:
        if importlib.util.find_spec("peggy_jvm.peg.build") is None:
            raise SystemExit("bench_saturate: peggy_jvm.peg.build is not there yet; run without --jar")
        source: PegSource = lambda: jar_pegs(args.jar, args.limit)  # noqa: E731
        corpus = args.jar.name
    else:
        source = lambda: generated_pegs(args.count, args.seed)  # noqa: E731
        corpus = f"generated (seed {args.seed})"
    if args.safe:
        from peggy_jvm.rules.policy import safe_rules
        rules = list(safe_rules())
    else:
        rs = default_rules()
        if args.groups:
            rs.enable(*args.groups.split(","))
        rules = rs.active()
    limits = Limits(max_nodes=args.max_nodes, max_iterations=args.iterations, time_limit_s=args.time_limit)

    prof = cProfile.Profile() if args.profile else None
    rows = []
    t_all = time.perf_counter()
    if prof:
        prof.enable()
    for name, peg in source():
        r = saturate_one(peg, rules, limits)
        r["name"] = name
        rows.append(r)
        if not args.quiet:
            over = r["run_ms"] / (limits.time_limit_s * 1000)
            print(f"{name:<60} {r['peg_nodes']:>5} {r['nodes']:>6} {r['classes']:>6} {r['iterations']:>3} "
                  f"{r['stop']:<16} {r['total_ms']:>8.1f} ms{'  OVER' if over > 1.1 else ''}")
    if prof:
        prof.disable()
    wall = time.perf_counter() - t_all
    if not rows:
        print("no methods")
        return 1
    times = sorted(r["total_ms"] for r in rows)
    cpu = sorted(r["cpu_ms"] for r in rows)
    stops: dict[str, int] = {}
    for r in rows:
        stops[r["stop"]] = stops.get(r["stop"], 0) + 1
    over = sum(r["run_ms"] > 1.1 * limits.time_limit_s * 1000 for r in rows)
    limit_ms = limits.time_limit_s * 1000
    worst = max(rows, key=lambda r: r["run_ms"])
    overrun = worst["run_ms"] - limit_ms
    places: dict[str, int] = {}
    for r in rows:
        if r["stopped_in"]:
            place = r["stopped_in"].split(" (")[0].split(" of ")[0].rstrip("0123456789 ")
            places[place] = places.get(place, 0) + 1
    p90 = times[int(0.9 * (len(times) - 1))]
    print()
    print("| corpus | methods | rules | median ms | median cpu ms | p90 ms | max ms | mean nodes | stop reasons | "
          "over budget | max overrun | stopped in | conflicts | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    stop_txt = ", ".join(f"{k} {v}" for k, v in sorted(stops.items()))
    place_txt = ", ".join(f"{k} {v}" for k, v in sorted(places.items())) or "-"
    print(f"| {corpus} | {len(rows)} | {len(rules)} | {statistics.median(times):.1f} | {statistics.median(cpu):.1f} | "
          f"{p90:.1f} | {times[-1]:.1f} | "
          f"{statistics.mean(r['nodes'] for r in rows):.0f} | {stop_txt} | {over} | "
          f"{overrun:+.1f} ms ({100 * overrun / limit_ms:+.0f}%) | {place_txt} | "
          f"{sum(r['conflicts'] for r in rows)} | {wall:.1f} |")
    print(f"longest run: {worst['name']} {worst['run_ms']:.1f} ms, {worst['run_cpu_ms']:.1f} ms of CPU "
          f"(limit {limit_ms:.0f} ms, {worst['stop']}{', in ' + worst['stopped_in'] if worst['stopped_in'] else ''})")
    # on a shared machine a run can lose the CPU past its deadline: the CPU time tells the runner's own overrun
    # (when much lower than the wall time, the rest was waiting for a core)
    cpu_worst = max(rows, key=lambda r: r["run_cpu_ms"])
    print(f"max CPU overrun: {cpu_worst['run_cpu_ms'] - limit_ms:+.1f} ms ({cpu_worst['name']}, wall "
          f"{cpu_worst['run_ms']:.1f} ms)")
    for r in rows:
        if r["run_ms"] > 1.1 * limits.time_limit_s * 1000:
            print(f"over budget: {r['name']} run {r['run_ms']:.0f} ms, {r['run_cpu_ms']:.0f} ms of CPU ({r['stop']}, "
                  f"{r['nodes']} nodes, {r['iterations']} iterations{', in ' + r['stopped_in'] if r['stopped_in'] else ''})")
    if _SKIPPED:
        print(f"skipped {len(_SKIPPED)} methods that did not lift/build, e.g. {_SKIPPED[0]}")
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
