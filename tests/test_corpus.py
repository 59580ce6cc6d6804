"""The stages on real libraries: Debian's builds of Jama, Commons Lang 3, jsoup, Commons Math 3 and Guava.

For each jar and each of the stages classfile, ir, peg and full, ``optimize_input(jar, out.jar, stage, jobs=2)``
must (the peg stage may leave a method alone for one of the reasons it names, and must put at least 95% of the
methods without exception handlers through the PEG round trip; the full stage, the optimizer, may leave a method
alone for a named reason, must rewrite at least the floor measured for the jar, each rewritten method strictly
cheaper, and runs on a deterministic sample of the big jars' classes, see ``FULL_SAMPLE``; it keeps every rewrite,
whether or not its emitted code pays (``conftest.keep_every_rewrite``), so that all of them are verified and
run, and only reports how many pay)

- re-encode every method that has code, with no fallback (today's state: any fallback is a regression, and the
  assertion lists each one with its reason);
- produce classes that HotSpot verifies (``VerifyClasses`` under ``-Xverify:all``: ``verify_errors=0``, and
  every class linked);
- and, except for Guava, leave the library's behaviour alone: our own workload in ``tests/java/workloads/``
  (compiled against the original jar) must print byte-identical stdout on the original and the rewritten jar,
  both run with ``-Xverify:all``, so the methods the workload reaches are also verified and run by the JIT.

The jars come from the ``corpus_jars`` fixture: a failure to fetch them is an error, never a skip. The workload
runner is ``support/workloads.py`` (by hand, with timings: ``scripts/side_by_side.py``). A negative control checks
that the comparison does notice a jar whose behaviour changed.
"""
from __future__ import annotations

import re
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import keep_every_rewrite
from support import corpus, workloads
from test_optimize_full import NAMED_UNCHANGED

from peggy_jvm.pipeline import RunReport, Stage, optimize_input

ROOT = Path(__file__).resolve().parent.parent
# the slow tier: real jars optimized, verified and run (make test runs it; -m "not slow" leaves it out)
pytestmark = pytest.mark.slow

WORKLOADS = ROOT / "tests" / "java" / "workloads"
# jar name (as fetched by scripts/fetch_corpus.sh) -> our workload for it
WORKLOAD_OF: dict[str, str] = corpus.WORKLOAD_OF
JOBS = 2
SUMMARY = re.compile(r": classes=(\d+) verified=(\d+) verify_errors=(\d+) other_failures=(\d+)\s*$")
CHECKSUM_LINE = re.compile(r"^lines=\d+ checksum=[0-9a-f]+$")


def _jar(corpus_jars: dict[str, Path], name: str) -> Path:
    if name not in corpus_jars:
        pytest.fail(f"the corpus has no {name}.jar (fetched: {sorted(corpus_jars)})", pytrace=False)
    return corpus_jars[name]


def _optimize(jar: Path, out: Path, stage: Stage = Stage.CLASSFILE, classpath: list[Path] | None = None
              ) -> tuple[RunReport, float]:
    start = time.perf_counter()
    _, report = optimize_input(jar, out, stage, classpath=classpath, jobs=JOBS)
    return report, time.perf_counter() - start


# Fallbacks a stage is allowed, each with the reason it is right to keep the original method:
ALLOWED_FALLBACKS = {
    # lowering turns a 64 KB static array initializer into more than the 65,535 bytes a method may have
    (Stage.IR, "org/apache/commons/math3/util/FastMathLiteralArrays.<clinit>()V"): "method code too large",
    (Stage.PEG, "org/apache/commons/math3/util/FastMathLiteralArrays.<clinit>()V"): "method code too large",
    # the reverter duplicates code into branch arms; these three long methods outgrow 64 KB (the safety net
    # keeps them; the duplication is what hoisting and tail merging must shrink)
    (Stage.PEG, "org/apache/commons/math3/dfp/Dfp.multiply(Lorg/apache/commons/math3/dfp/Dfp;)"
                "Lorg/apache/commons/math3/dfp/Dfp;"): "method code too large",
    (Stage.PEG, "org/apache/commons/math3/optim/nonlinear/scalar/noderiv/BOBYQAOptimizer.bobyqb([D[D)D"):
        "method code too large",
    (Stage.PEG, "org/apache/commons/math3/optimization/direct/BOBYQAOptimizer.bobyqb([D[D)D"):
        "method code too large",
}


PEG_HANDLERS = "exception handlers are not reverted yet"
PEG_LEAVES_ALONE = (PEG_HANDLERS, "an effect is needed again after the branch it ran in", "irreducible control flow",
                    "a loop ends the method in several ways")

# The full stage within CI's budget (about 200 s of a 20-minute suite on a 2-core machine): jar -> N, the full
# stage runs on the 1-in-N CRC-32 sample of the jar's classes (corpus.write_subset: the same classes on
# every run, spread over every package), with the whole jar on the class path (hierarchy, verifier, workload).
# The whole jars take far longer (optimize --jobs 2 on a loaded 2-core machine: jama 24 s, jsoup 113 s,
# lang3 281 s, math3 ~20 min); the samples are about a third of jsoup's and lang3's time and a twentieth of
# math3's. Jama (7 classes) runs whole.
FULL_SAMPLE = {"jama": 1, "jsoup": 3, "commons-lang3": 3, "commons-math3": 16}
# Fewest methods the full stage must rewrite (in the sample): under half of what was measured (jama 23, jsoup's
# sample 25, lang3's 78, math3's 49), so that changes of the rules and budgets do not need a new number each
# (the count no longer depends on the machine's load: the budgets are work, docs/cli.md "Budgets"). A floor,
# not an echo of today's count, but one that a silently disabled optimizer fails.
FULL_MIN_REWRITTEN = {"jama": 10, "jsoup": 10, "commons-lang3": 35, "commons-math3": 20}


# Why the full stage may leave a method alone: the fixtures' list (no cheaper PEG, the self-check's refusal, the
# reverter's named limits), the PEG stage's, and the reverter's refusal of a loop nest an extraction produced
# (2 methods of math3 with the extractor of 13:00 today; none in the sample)
FULL_LEAVES_ALONE = (*NAMED_UNCHANGED, *PEG_LEAVES_ALONE, "a loop is needed inside another loop of the same depth")


def _name(m) -> str:
    return f"{m.class_name}.{m.name}{m.descriptor}"


def _check_report(name: str, report: RunReport, stage: Stage = Stage.CLASSFILE) -> None:
    fallbacks = [f"{_name(m)}: {m.reason}" for m in report.methods
                 if m.status == "fallback" and ALLOWED_FALLBACKS.get((stage, _name(m)), "\0") not in m.reason]
    assert fallbacks == [], f"{name}: {len(fallbacks)} methods fell back:\n" + "\n".join(fallbacks[:50])
    not_rewritten = [m for m in report.methods if m.status == "unchanged" and m.bytes_before > 0]
    if stage is Stage.PEG:
        # the PEG stage leaves a method alone for a reason it names; the bar: >= 95% of the methods
        # without exception handlers go through the round trip
        unexpected = [f"{_name(m)}: {m.reason}" for m in not_rewritten if not m.reason.startswith(PEG_LEAVES_ALONE)]
        assert unexpected == [], f"{name}: left alone for unexpected reasons:\n" + "\n".join(unexpected[:20])
        with_code = [m for m in report.methods if m.bytes_before > 0 and not m.reason.startswith(PEG_HANDLERS)]
        done = sum(1 for m in with_code if m.status == "rewritten")
        print(f"{name}: {done} of {len(with_code)} methods without handlers through the PEG "
              f"({done / len(with_code):.1%})")
        assert done >= 0.95 * len(with_code)
    elif stage is Stage.FULL:
        # the optimizer leaves most methods alone, each for a named reason (the same list as the fixtures' test)
        corpus.print_full_table(corpus.full_table(name, report.to_json()))
        unexpected = [f"{_name(m)}: {m.reason}" for m in not_rewritten
                      if not m.reason.startswith(FULL_LEAVES_ALONE) and "not reverted" not in m.reason]
        assert unexpected == [], f"{name}: left alone for unexpected reasons:\n" + "\n".join(unexpected[:20])
        rewritten = [m for m in report.methods if m.status == "rewritten"]
        assert len(rewritten) >= FULL_MIN_REWRITTEN[name], f"{name}: only {len(rewritten)} methods rewritten"
        dearer = [f"{_name(m)}: {m.cost_before} -> {m.cost_after}" for m in rewritten
                  if m.cost_before is None or m.cost_after is None or not m.cost_after < m.cost_before]
        assert dearer == [], f"{name}: rewritten but not cheaper:\n" + "\n".join(dearer[:20])
        # every rewrite was priced by its emitted code (codecost.py); how many pay by --goal speed's rule
        unpriced = [_name(m) for m in rewritten if m.emitted_cost_before is None or m.emitted_cost_after is None]
        assert unpriced == [], f"{name}: rewritten without an emitted cost: {unpriced[:20]}"
        pay = sum(1 for m in rewritten if m.emitted_cost_after < m.emitted_cost_before
                  and m.bytes_after <= m.bytes_before)
        print(f"{name}: {pay} of {len(rewritten)} rewrites pay by the emitted cost")
    else:
        names = [_name(m) for m in not_rewritten]
        assert names == [], f"{name}: methods with code left alone: {names[:20]}"
    assert report.classes > 0 and any(m.status == "rewritten" for m in report.methods)


def _class_count(jar: Path) -> int:
    """What VerifyClasses loads: every .class outside META-INF/ except module-info and package-info."""
    with zipfile.ZipFile(jar) as z:
        names = [n for n in z.namelist() if n.endswith(".class") and not n.startswith("META-INF/")]
    return sum(n.rsplit("/", 1)[-1] not in ("module-info.class", "package-info.class") for n in names)


def _check_verified(name: str, out: Path, verifier, classpath: list[Path] | None = None) -> str:
    proc = verifier(out, *(classpath or []))
    lines = proc.stdout.strip().splitlines()
    found = SUMMARY.search(lines[-1]) if lines else None
    assert found, f"{name}: no VerifyClasses summary (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr}"
    classes, verified, verify_errors, other = map(int, found.groups())
    assert verify_errors == 0, f"{name}: {verify_errors} classes fail verification:\n{proc.stdout[-6000:]}"
    others = "\n".join(line for line in lines if line.startswith("OTHER"))
    assert other == 0, f"{name}: {other} classes could not be linked (so were not verified):\n{others[:4000]}"
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert classes == verified == _class_count(out), lines[-1]
    return lines[-1]


@dataclass
class Rewritten:
    name: str
    jar: Path  # the original jar
    out: Path  # the rewritten jar (for a sampled jar: only the sampled classes)
    report: RunReport
    stage: Stage
    classpath: list[Path]  # what else the output needs on the class path (the original jar, for a sample)
    seconds: float


PARAMS = [(stage, name) for stage in (Stage.CLASSFILE, Stage.IR, Stage.PEG, Stage.FULL) for name in WORKLOAD_OF]


@pytest.fixture(scope="module", params=PARAMS, ids=lambda p: f"{p[0].value}-{p[1]}")
def rewritten(request, corpus_jars, tmp_path_factory) -> Rewritten:
    """One jar through one stage (one after the other); the full stage on FULL_SAMPLE's sample of the jar."""
    stage, name = request.param
    jar = _jar(corpus_jars, name)
    work = tmp_path_factory.mktemp(f"{stage.value}-{name}")
    source, classpath = jar, []
    if stage is Stage.FULL and FULL_SAMPLE[name] > 1:
        source, classpath = work / "sample.jar", [jar]
        assert corpus.write_subset(jar, source, FULL_SAMPLE[name]), f"{name}: empty sample"
    out = work / "out.jar"
    with pytest.MonkeyPatch.context() as mp:
        if stage is Stage.FULL:
            # every rewrite the optimizer makes is verified and run below, also those whose emitted code does
            # not pay yet (most of them until the lowering improves; test_codecost.py tests the rule itself)
            keep_every_rewrite(mp)
        report, seconds = _optimize(source, out, stage, classpath)
    print(f"{stage.value} {name}: optimize {seconds:.1f} s")
    return Rewritten(name, jar, out, report, stage, classpath, seconds)


@pytest.fixture(scope="module")
def workload_classes(corpus_jars, java_home, tmp_path_factory):
    """Compiles a workload against its original jar (once per jar, into this run's temporary directory)."""
    cache = tmp_path_factory.mktemp("workloads")
    compiled: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in compiled:
            source = WORKLOADS / f"{WORKLOAD_OF[name]}.java"
            try:
                compiled[name] = workloads.compile_workload(source, [_jar(corpus_jars, name)], cache, java_home)
            except workloads.WorkloadError as e:
                pytest.fail(str(e), pytrace=False)
        return compiled[name]

    return get


@pytest.fixture(scope="module")
def original_runs(corpus_jars, workload_classes, java_home):
    """The workload on its original jar, run once per jar and compared with each of the jar's four stages (a
    jar's stages are one work unit, tests/support/schedule.py, so one worker): what the original prints does not
    depend on the stage (the comparison is byte for byte, so it must not vary between runs either)."""
    runs: dict[str, workloads.RunResult] = {}

    def get(name: str) -> workloads.RunResult:
        if name not in runs:
            try:
                runs[name] = workloads.run_workload(_jar(corpus_jars, name), workload_classes(name), WORKLOAD_OF[name],
                                                    home=java_home, timeout=120)
            except workloads.WorkloadError as e:
                pytest.fail(str(e), pytrace=False)
        return runs[name]

    return get


def test_the_stage_rewrites_every_method_without_fallback(rewritten: Rewritten):
    _check_report(rewritten.name, rewritten.report, rewritten.stage)


def test_every_rewritten_class_verifies(rewritten: Rewritten, verifier):
    _check_verified(rewritten.name, rewritten.out, verifier, rewritten.classpath)


def test_workload_prints_the_same_on_the_rewritten_jar(rewritten: Rewritten, workload_classes, original_runs,
                                                      java_home):
    name, jar, out = rewritten.name, rewritten.jar, rewritten.out
    classes = workload_classes(name)
    main = WORKLOAD_OF[name]
    original = original_runs(name)
    try:
        # a sample's other classes come from the original jar, after the rewritten ones
        recoded = workloads.run_workload(out, classes, main, extra_cp=rewritten.classpath, home=java_home, timeout=120)
    except workloads.WorkloadError as e:
        pytest.fail(str(e), pytrace=False)
    assert original.returncode == 0, f"{main} fails on the original {jar.name}:\n{original.stderr[-3000:]}"
    lines = original.stdout.splitlines()
    assert len(lines) > 50 and CHECKSUM_LINE.match(lines[-1]), f"{main} printed:\n{original.stdout[-2000:]}"
    diff = workloads.difference(original, recoded, f"{jar.name} (original)", f"{name} (rewritten)")
    assert diff is None, f"{main} prints differently on the rewritten {name}:\n{diff}"


def test_the_full_stage_output_validates(rewritten: Rewritten, tmp_path):
    """The optimizer only writes what it proved (its self-check), so `validate` on the original jar and the
    optimizer's output proves every method pair; for a sample, the other classes come from the original."""
    if rewritten.stage is not Stage.FULL:
        pytest.skip("validation of the optimizer's own output is about the full stage")
    from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs

    merged = tmp_path / "merged.jar"
    with zipfile.ZipFile(rewritten.out) as new, zipfile.ZipFile(rewritten.jar) as old, \
            zipfile.ZipFile(merged, "w") as out:
        names = set(new.namelist())
        for entry in names:
            out.writestr(entry, new.read(entry))
        for entry in old.namelist():
            if entry not in names:
                out.writestr(entry, old.read(entry))
    # validate's default budget; its proof of commons-math3's AdamsMoultonIntegrator.integrate (whose rewrite makes
    # AbstractIntegrator.integrate's virtual callee differ) is the optimizer's own (1.2 s of CPU; 2.5 s by the
    # default rules), which it tries first, in 40% of the proof budget (validate/driver.py OPTIMIZER_SHARE)
    report = validate_inputs(rewritten.jar, merged, ValidateOptions(method_timeout=10.0, counterexamples=False))
    rewritten_methods = {(m.class_name, m.name, m.descriptor) for m in rewritten.report.methods
                         if m.status == "rewritten"}
    assert rewritten_methods
    not_proved = [(p.class_name, p.name, p.descriptor, p.reason) for p in report.pairs
                  if p.verdict is not Verdict.EQUIVALENT]
    assert not not_proved, not_proved[:10]
    assert rewritten_methods <= {(p.class_name, p.name, p.descriptor) for p in report.pairs}


def test_the_comparison_notices_a_changed_jar(corpus_jars, workload_classes, java_home, tmp_path):
    """Negative control: Jama with one message changed (same length, so the class stays well-formed)."""
    jar = _jar(corpus_jars, "jama")
    changed = tmp_path / "jama-changed.jar"
    with zipfile.ZipFile(jar) as src, zipfile.ZipFile(changed, "w", zipfile.ZIP_DEFLATED) as dst:
        hits = 0
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "Jama/LUDecomposition.class":
                hits = data.count(b"Matrix is singular.")
                data = data.replace(b"Matrix is singular.", b"Matrix is SINGULAR.")
            dst.writestr(info, data)
    assert hits == 1
    classes = workload_classes("jama")
    original = workloads.run_workload(jar, classes, "JamaWork", ["5"], home=java_home, timeout=120)
    other = workloads.run_workload(changed, classes, "JamaWork", ["5"], home=java_home, timeout=120)
    diff = workloads.difference(original, other, "jama.jar", "jama-changed.jar")
    assert diff is not None and "+singular inverse: java.lang.RuntimeException: Matrix is SINGULAR." in diff


def test_the_full_stage_check_fails_on_what_it_must_reject():
    """Negative control for _check_report's full-stage branch (no optimizer run: made-up reports)."""
    from peggy_jvm.pipeline import MethodReport

    def report(*rows: MethodReport) -> RunReport:
        return RunReport(Stage.FULL.value, list(rows), classes=1)

    def good(k: int) -> MethodReport:
        return MethodReport("a/B", f"m{k}", "()I", "rewritten", "", 100.0, 80.0, 12, 10, {"full": 5.0},
                            emitted_cost_before=50, emitted_cost_after=40)

    floor = FULL_MIN_REWRITTEN["jama"]
    _check_report("jama", report(*(good(k) for k in range(floor))), Stage.FULL)  # the floor itself passes
    bad = {
        "below the floor": [good(k) for k in range(floor - 1)],
        "a fallback": [MethodReport("a/B", "f", "()V", "fallback", "KeyError: 3", bytes_before=5, bytes_after=5)],
        "an unnamed reason": [MethodReport("a/B", "u", "()V", "unchanged", "something odd", bytes_before=5,
                                           bytes_after=5)],
        "rewritten, not cheaper": [MethodReport("a/B", "d", "()I", "rewritten", "", 80.0, 80.0, 10, 10,
                                                emitted_cost_before=50, emitted_cost_after=40)],
        "rewritten, not priced": [MethodReport("a/B", "e", "()I", "rewritten", "", 90.0, 80.0, 10, 10)],
    }
    for what, rows in bad.items():
        rows = rows if what == "below the floor" else [*(good(k) for k in range(floor)), *rows]
        try:
            _check_report("jama", report(*rows), Stage.FULL)
        except AssertionError:
            continue
        pytest.fail(f"{what} was not rejected")


# About 12 s on a busy 2-core machine (optimize 10 s, verify 2 s); slow like the whole file (the corpus jars).
def test_guava_is_rewritten_without_fallback_and_verifies(corpus_jars, verifier, tmp_path):
    """Guava (2040 classes): optimize and verify only; we have no workload for it."""
    jar = _jar(corpus_jars, "guava")
    out = tmp_path / "out.jar"
    report, seconds = _optimize(jar, out)
    _check_report("guava", report)
    summary = _check_verified("guava", out, verifier)
    print(f"guava: {report.summary()} optimize {seconds:.1f} s; {summary}")
