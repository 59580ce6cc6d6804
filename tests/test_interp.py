"""The IR interpreter (peggy_jvm/ir/interp.py) and the JDK models (peggy_jvm/jdk/) against the JVM, and the
differential-testing helpers.

The main check: every static method of the fixture classes (release17, release8, and the jsr/ret classes of
fixtures/classes/old) whose parameters are primitives, Strings or arrays of those is lifted with ``lift_method``,
interpreted with ``run_method`` on generated arguments (``difftest.generate_args``), and the same calls are
made on the JVM by DiffRunner; return values (floats bit-exact, NaN == NaN), exception classes and printed output
must agree. The inputs of one method share static state in order, on both sides (a fresh heap / class loader
per method). A method whose interpretation raises ``Unsupported`` (an unmodelled library call, the step budget,
...) is not compared from that input on; such methods are listed with their reasons, and a minimum share of
candidate methods must be compared on every input (a method some call of which the JVM did not finish counts
as not compared). The interpreter is told the JVM's MaxHeapSize, so an array larger than that heap is an
OutOfMemoryError on both sides. Purpose-written methods (tests/java/interp/: exception routing, VM exceptions,
edge arithmetic, loops, recursion, monitors, stack shapes, class initialization order, the library models,
boxing, lambdas and records, collections, comparators and streams, float/double text) must all be modelled and
agree. The model's Double.toString/Float.toString is also held to the JVM's on ~590k values
(tests/java/interp/oracle/FloatToStringOracle.java).
"""
from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
from conftest import javac_command
from support.javac_cache import run_javac

sys.path.insert(0, str(Path(__file__).resolve().parent))

import difftest as dt  # noqa: E402
from peggy_jvm import semantics as S  # noqa: E402
from peggy_jvm.classfile.hierarchy import ClassHierarchy  # noqa: E402
from peggy_jvm.classfile.reader import read_class  # noqa: E402
from peggy_jvm.ir import interp as I  # noqa: E402
from peggy_jvm.ir.lift import LiftError, lift_method  # noqa: E402
from peggy_jvm.ir.nodes import (INT, ArrayStore, Binary, Block, Catch, Cond, Const, Goto, Handler,  # noqa: E402
                                If, Invoke, InvokeKind, IRMethod, IRType, Kind, MethodRef, MonitorEnter,
                                MonitorExit, New, NewArray, Return, Throw, Var)
from peggy_jvm.ir.printer import format_method  # noqa: E402
from peggy_jvm.jdk.floattext import double_to_string, float_to_string  # noqa: E402
from peggy_jvm.jdk.handler import DefaultCallHandler  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EDGE_SOURCES = ROOT / "tests" / "java" / "interp"
INPUTS = 20
SEED = 7
# Steps one call may take. Inputs beyond these are not compared (Unsupported "step budget"): generated sizes
# reach 2^31 (loops of 10^9 and more iterations, quadratic in some methods), exponential recursion (fib(43)) and
# collatz of negative longs (which never ends on the JVM either). 1M covers every input of every fixture method
# that a Python interpreter can finish in about a second; a main runs a whole program (Kernels.main: 15.5M steps).
BUDGET = 1_000_000
MAIN_BUDGET = 20_000_000
RELEASES = ("release17", "release8", "old")  # old: version-49 classes with jsr/ret (inlined by the lifter)
MAIN_INPUTS = 2  # a fixture's main ignores its arguments and runs a whole program: two runs suffice
MIN_FULLY_COMPARED = 0.87  # share of candidate fixture methods compared on every input (measured: 89%)
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


# -- running both sides -----------------------------------------------------------------------------------
def _is_candidate_type(desc: str) -> bool:
    d = desc.lstrip("[")
    return d in ("I", "J", "F", "D", "Z", "B", "C", "S") or d == "Ljava/lang/String;"


def candidates(classes_dir: Path) -> list[tuple[str, str, str]]:
    """(class, name, descriptor) of every static method with code whose parameters are primitives, Strings
    or arrays of those (static initializers excluded)."""
    out = []
    for p in sorted(classes_dir.glob("*.class")):
        cf = read_class(p.read_bytes())
        for m in cf.methods:
            if not m.is_static or m.name == "<clinit>" or m.code_attribute() is None:
                continue
            params, _ = dt.parse_descriptor(m.descriptor)
            if all(_is_candidate_type(t) for t in params):
                out.append((cf.name, m.name, m.descriptor))
    return out


def to_interp(v: object, desc: str) -> object:
    """A generated argument as an interpreter value (arrays become fresh JArrays)."""
    if isinstance(v, (list, tuple)):
        return I.JArray(desc, [to_interp(e, desc[1:]) for e in v])
    return v


def to_result(outcome: I.Outcome, out: str, ret: str) -> dt.Result:
    if isinstance(outcome, I.Threw):
        return dt.Result("THROW", exception=outcome.exception, out=out)
    v = outcome.value
    if ret == "V":
        return dt.Result("RET", out=out)
    if isinstance(v, I.ClassValue):
        return dt.Result("RET", value="obj:java/lang/Class", out=out)
    return dt.Result("RET", value=dt.encode_value(v, ret), out=out)


@dataclass
class MethodRun:
    cls: str
    name: str
    desc: str
    ir: IRMethod | None = None
    calls: list[dt.Call] = field(default_factory=list)
    results: list[dt.Result] = field(default_factory=list)
    unsupported: str | None = None
    error: str | None = None  # InterpError: malformed IR

    @property
    def key(self) -> str:
        return f"{self.cls}.{self.name}{self.desc}"


def jvm_max_heap(java_home: Path) -> int:
    """The MaxHeapSize of the JVM DiffRunner runs (same flags: none about the heap), in bytes."""
    proc = subprocess.run([str(java_home / "bin" / "java"), "-Xss4m", "-XX:+PrintFlagsFinal", "-version"],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, check=True)
    line = next(x for x in proc.stdout.splitlines() if x.split()[1:2] == ["MaxHeapSize"])
    return int(line.split()[3])


def interpret_all(classes_dir: Path, methods: list[tuple[str, str, str]], inputs: dict | None = None,
                  count: int = INPUTS, max_heap_bytes: int | None = None) -> list[MethodRun]:
    """Lift and interpret each method on its inputs (``inputs[(cls, name, desc)]`` or generated ones), one fresh
    heap per method; stop a method at its first Unsupported input (its later inputs would start from a heap the
    model no longer knows). ``max_heap_bytes``: the JVM's heap, beyond which an array allocation must throw
    OutOfMemoryError (None: such allocations are Unsupported)."""
    handler = DefaultCallHandler(classes_dir)
    hierarchy = ClassHierarchy(classpath=[classes_dir])
    runs = []
    for cls, name, desc in methods:
        run = MethodRun(cls, name, desc)
        runs.append(run)
        cf = handler.program.get(cls)
        mi = next(m for m in cf.methods if m.name == name and m.descriptor == desc)  # type: ignore[union-attr]
        try:
            run.ir = lift_method(cf, mi, hierarchy)  # type: ignore[arg-type]
        except LiftError as e:
            run.unsupported = f"lift: {e}"
            continue
        heap = I.Heap(hierarchy)
        params, ret = dt.parse_descriptor(desc)
        args_list = (inputs or {}).get((cls, name, desc)) or \
            dt.generate_args(desc, MAIN_INPUTS if name == "main" else count, SEED)
        for args in args_list:
            call = dt.Call(cls, name, desc, tuple(args))
            try:
                outcome = I.run_method(run.ir, [to_interp(a, p) for a, p in zip(args, params)], heap, handler,
                                       budget=MAIN_BUDGET if name == "main" else BUDGET,
                                       max_heap_bytes=max_heap_bytes)
            except I.Unsupported as e:
                run.unsupported = e.reason
                break
            except I.InterpError as e:
                run.error = f"{call}: {e}"
                break
            if isinstance(outcome, I.Threw) and outcome.exception == "java/lang/StackOverflowError":
                run.unsupported = "StackOverflowError (the model's depth limit is not the JVM's)"
                break
            run.calls.append(call)
            run.results.append(to_result(outcome, heap.take_output(), ret))
    return runs


@dataclass
class Report:
    runs: list[MethodRun]
    jvm: list[dt.Result]
    mismatches: list[tuple[MethodRun, dt.Call, dt.Result, dt.Result]]
    inconclusive: int
    seconds: float
    timed_out: set[str] = field(default_factory=set)  # methods some call of which the JVM did not finish

    @property
    def fully_compared(self) -> list[MethodRun]:
        return [r for r in self.runs if r.unsupported is None and r.error is None and r.key not in self.timed_out]

    def summary(self, title: str) -> str:
        reasons = Counter(_reason_class(r.unsupported) for r in self.runs if r.unsupported)
        calls = sum(len(r.calls) for r in self.runs)
        lines = [f"{title}: {len(self.runs)} candidate methods, {len(self.fully_compared)} fully compared "
                 f"({len(self.fully_compared) / max(len(self.runs), 1):.0%}), "
                 f"{sum(1 for r in self.runs if r.unsupported)} unsupported, "
                 f"{sum(1 for r in self.runs if r.error)} malformed IR; {calls} calls compared, "
                 f"{len(self.mismatches)} differ, {self.inconclusive} inconclusive; {self.seconds:.1f}s"]
        lines += [f"    {n:3d} x {reason}" for reason, n in reasons.most_common()]
        return "\n".join(lines)

    def not_compared(self) -> str:
        """Every method not compared on all its inputs, with the reason and how many inputs were compared."""
        return "\n".join(f"    {r.key}: {r.unsupported or r.error or 'the JVM timed out'} "
                         f"({len(r.calls)} inputs compared before)"
                         for r in self.runs if r.unsupported or r.error or r.key in self.timed_out)


def _reason_class(reason: str | None) -> str:
    if reason is None:
        return ""
    return reason if len(reason) < 110 else reason[:107] + "..."


def compare_with_jvm(classes_dir: Path, java_home: Path, runs: list[MethodRun], started: float) -> Report:
    calls = [c for r in runs for c in r.calls]
    owners = [(r, k) for r in runs for k in range(len(r.calls))]
    jvm = dt.run_jvm(classes_dir, calls, java_home=java_home) if calls else []
    mismatches = []
    inconclusive = 0
    tainted: set[str] = set()
    for (run, k), got in zip(owners, jvm):
        if run.key in tainted or got.kind == "TIMEOUT":
            tainted.add(run.key)
            inconclusive += 1
            continue
        mine = run.results[k]
        if not dt.same_result(mine, got):
            mismatches.append((run, run.calls[k], mine, got))
    return Report(runs, jvm, mismatches, inconclusive, time.perf_counter() - started, tainted)


def explain(mismatches, limit: int = 8) -> str:
    out = []
    shown: set[str] = set()
    for run, call, mine, got in mismatches:
        out.append(f"{call}\n    interpreter: {mine}\n    JVM:         {got}")
        if run.key not in shown and len(shown) < limit and run.ir is not None:
            shown.add(run.key)
            out.append("\n".join("      " + line for line in format_method(run.ir)))
    return "\n".join(out)


# -- the fixture comparison ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fixture_reports(fixture_classes: dict[str, Path], java_home: Path) -> Callable[[str], Report]:
    """A release's comparison, made once, when its test first needs it (each release's test is a work unit of its
    own in a parallel run, tests/support/schedule.py: the releases go to the workers in parallel)."""
    reports: dict[str, Report] = {}
    heap = jvm_max_heap(java_home)

    def get(release: str) -> Report:
        if release not in reports:
            started = time.perf_counter()
            d = fixture_classes[release]
            runs = interpret_all(d, candidates(d), max_heap_bytes=heap)
            reports[release] = compare_with_jvm(d, java_home, runs, started)
        return reports[release]
    return get


@pytest.mark.slow  # the slow tier: every fixture method against the JVM (300 s of a loaded run's 3,200)
@pytest.mark.parametrize("release", RELEASES)
def test_interpreter_agrees_with_jvm_on_fixtures(fixture_reports: Callable[[str], Report], release: str) -> None:
    report = fixture_reports(release)
    print("\n" + report.summary(release))
    print("  not compared on every input:\n" + (report.not_compared() or "    none"))
    errors = [r.error for r in report.runs if r.error]
    assert not errors, "malformed IR:\n" + "\n".join(errors)
    assert not report.mismatches, (f"{len(report.mismatches)} calls differ between the IR interpreter and the "
                                   f"JVM:\n{explain(report.mismatches)}")
    share = len(report.fully_compared) / len(report.runs)
    assert share >= MIN_FULLY_COMPARED, report.summary(release)


def test_the_comparison_is_not_vacuous(fixture_classes: dict[str, Path], java_home: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """With a wrong operator table the same pipeline reports differences."""
    d = fixture_classes["release17"]
    wrong = dict(I._OPS)
    wrong["sub.i"] = wrong["add.i"]
    monkeypatch.setattr(I, "_OPS", wrong)
    runs = interpret_all(d, [("IntArith", "sub", "(II)I"), ("IntArith", "add", "(II)I")])
    report = compare_with_jvm(d, java_home, runs, time.perf_counter())
    differing = {run.name for run, *_ in report.mismatches}
    assert differing == {"sub"}


# -- purpose-written edge cases -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def edge_classes(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("interp-edges")
    sources = sorted(str(p) for p in EDGE_SOURCES.glob("*.java"))
    proc = run_javac([*javac_command(java_home), "--release", "17", "-g", "-d", str(out), *sources],
                     capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


# explicit inputs on top of the generated ones, where the interesting values are specific
EDGE_INPUTS = {
    "nestedTry": [(m,) for m in range(-1, 18)] + [(INT_MIN,), (INT_MAX,)],
    "handlerOrder": [(m,) for m in range(0, 16)],
    "finallyWins": [(0,), (5,), (-5,), (-1,), (0,), (1,)],
    "causes": [(m,) for m in range(0, 9)],
    "wrapped": [(m,) for m in range(0, 9)],
    "divInTry": [(7, 0), (7, 2), (-7, 2), (INT_MIN, -1), (INT_MIN, 1), (0, 0), (5, -3)],
    "longDivRem": [(7, 0), (-(2**63), -1), (-(2**63), 1), (2**63 - 1, -7), (0, 0)],
    "arrayIndex": [([1, 2, 3], 0), ([1, 2, 3], 3), ([1, 2, 3], -1), ([], 0), (None, 0)],
    "arrayStore": [([1, 2, 3], 0, 9), ([1, 2, 3], 3, 9), (None, 0, 1), ([5], -1, 1)],
    "negativeSize": [(-1,), (0,), (1,), (2,), (7,), (-8,), (INT_MIN,)],
    "ack": [(0, 0), (1, 3), (1, 15), (3, 7)],
    "syncNull": [(0,), (1,)],
    "throwNull": [(0,), (1,), (2,), (3,)],
    "charAt": [("abc", 0), ("abc", 2), ("abc", 3), ("abc", -1), (None, 0), ("", 0)],
    "stringSwitch": [("",), ("a",), ("hello",), ("Aa",), ("BB",), ("zz",), (None,), ("h\u00e9llo",)],
}


@pytest.fixture(scope="module")
def edge_report(edge_classes: Path, java_home: Path) -> Report:
    started = time.perf_counter()
    methods = candidates(edge_classes)
    inputs = {}
    for cls, name, desc in methods:
        extra = [tuple(a) for a in EDGE_INPUTS.get(name, [])]
        inputs[(cls, name, desc)] = extra + dt.generate_args(desc, INPUTS, SEED)
    runs = interpret_all(edge_classes, methods, inputs)
    return compare_with_jvm(edge_classes, java_home, runs, started)


def test_edge_methods_are_all_modelled(edge_report: Report) -> None:
    print("\n" + edge_report.summary("edge methods"))
    assert len(edge_report.runs) >= 70
    not_compared = [f"{r.key}: {r.unsupported or r.error}" for r in edge_report.runs if r.unsupported or r.error]
    assert not not_compared, "\n".join(not_compared)


def test_edge_methods_agree_with_jvm(edge_report: Report) -> None:
    assert not edge_report.mismatches, explain(edge_report.mismatches)
    assert edge_report.inconclusive == 0


def _results(report: Report, name: str) -> list[str]:
    run = next(r for r in report.runs if r.name == name)
    return [str(x) for x in run.results]


def test_edge_outcomes_are_the_expected_ones(edge_report: Report) -> None:
    """A few outcomes spelled out, so a wrong model that the JVM comparison would also catch reads clearly."""
    nested = _results(edge_report, "nestedTry")
    # modes -1..17: -1 & 7 == 7 (Error caught by Throwable), 0 no exception, 1 Boom, 2 Checked, 3 ISE with a
    # Boom from the inner finally, 4 AIOOBE, 5 NPE, 6 ArithmeticException
    assert nested[0] == "RET s:a|f1|any:java.lang.Error|f2"
    assert nested[1] == "RET s:ab|f1|mid|f2"
    assert nested[2] == "RET s:aboom1|f1|mid|f2"
    assert nested[3] == "RET s:a|f1|checked:c2|f2"
    assert nested[4] == "RET s:art:IllegalStateException|f1|outer-boom33|f2"
    assert nested[5] == "RET s:aarith-or-bounds:java.lang.ArrayIndexOutOfBoundsException|f1|mid|f2"
    assert nested[6] == "RET s:art:NullPointerException|f1|mid|f2"
    assert nested[7] == "RET s:aarith-or-bounds:java.lang.ArithmeticException|f1|mid|f2"
    assert nested[10] == "RET s:aboom1|f1|any:java.lang.IllegalArgumentException|f2"  # mode 9: from the handler
    assert _results(edge_report, "handlerOrder")[:8] == ["RET 0", "RET 1", "RET 4", "RET 3", "RET 3", "RET 3",
                                                         "RET 2", "RET 5"]
    assert _results(edge_report, "arrayIndex")[:5] == ["RET 1", "RET -3", "RET -3", "RET -1000",
                                                      "THROW java/lang/NullPointerException"]
    assert _results(edge_report, "divInTry")[:4] == ["RET s:div0:/\\u0020by\\u0020zero", "RET s:3\\u002c1",
                                                    "RET s:-3\\u002c-1", "RET s:-2147483648\\u002c0"]
    assert _results(edge_report, "syncNull")[:2] == ["RET 1", "THROW java/lang/NullPointerException"]
    # `new` initializes its class before the constructor's arguments are evaluated
    assert _results(edge_report, "newWithCallArgument")[:2] == ["RET 0 out='Loud.<clinit>\\narg 0\\nLoud(0)\\n'",
                                                               "RET 1 out='arg 1\\nLoud(1)\\n'"]
    assert _results(edge_report, "failingInitializer")[:2] == ["RET s:eiie\\u0020then\\u0020ncdfe",
                                                              "THROW java/lang/NoClassDefFoundError"]
    assert _results(edge_report, "stackOverflow")[0] == "RET s:overflow\\u00200"


# -- the interpreter on hand-made IR (no JVM) -----------------------------------------------------------------
def _method(blocks: dict[int, Block], params: list[Var], *, desc: str = "(I)I", static: bool = True,
            synchronized: bool = False) -> IRMethod:
    return IRMethod("T", "m", desc, static, params, blocks, 0, synchronized)


def test_step_budget_ends_an_infinite_loop() -> None:
    x = Var(0, INT, "x")
    m = _method({0: Block(0, [Binary(x, "add.i", x, Const(INT, 1))], Goto(0))}, [x])
    with pytest.raises(I.Unsupported, match="step budget"):
        I.run_method(m, [0], I.Heap(), budget=10_000)


def test_arithmetic_goes_through_semantics_and_wraps() -> None:
    x, y = Var(0, INT, "x"), Var(1, INT, "y")
    m = _method({0: Block(0, [Binary(y, "mul.i", x, Const(INT, 65536))], Return(y))}, [x])
    assert I.run_method(m, [65536], I.Heap()) == I.Returned(0)
    assert I.run_method(m, [3], I.Heap()) == I.Returned(196608)


def test_division_by_zero_routes_to_the_matching_handler_in_order() -> None:
    x, y, e = Var(0, INT, "x"), Var(1, INT, "y"), Var(2, IRType(Kind.REF, "java/lang/Throwable"), "e")
    blocks = {
        0: Block(0, [Binary(y, "div.i", Const(INT, 10), x)], Return(y),
                 handlers=(Handler("java/lang/NullPointerException", 1), Handler("java/lang/RuntimeException", 2),
                           Handler(None, 3))),
        1: Block(1, [Catch(e)], Return(Const(INT, -1))),
        2: Block(2, [Catch(e)], Return(Const(INT, -2))),
        3: Block(3, [Catch(e)], Return(Const(INT, -3))),
    }
    m = _method(blocks, [x])
    assert I.run_method(m, [5], I.Heap()) == I.Returned(2)
    assert I.run_method(m, [0], I.Heap()) == I.Returned(-2)


def test_uncaught_exception_is_the_outcome() -> None:
    x, y = Var(0, INT, "x"), Var(1, INT, "y")
    m = _method({0: Block(0, [Binary(y, "rem.i", x, Const(INT, 0))], Return(y))}, [x])
    out = I.run_method(m, [1], I.Heap())
    assert isinstance(out, I.Threw) and out.exception == "java/lang/ArithmeticException"


def test_array_store_checks_assignability_through_the_hierarchy() -> None:
    a = Var(0, IRType(Kind.REF, "[Ljava/lang/Object;"), "a")
    v = Var(1, IRType(Kind.REF, "java/lang/Object"), "v")
    m = _method({0: Block(0, [ArrayStore(a, Const(INT, 0), v, "L")], Return(None))}, [a, v],
                desc="([Ljava/lang/Object;Ljava/lang/Object;)V")
    strings = I.JArray("[Ljava/lang/String;", [None])
    assert I.run_method(m, [strings, "ok"], I.Heap()) == I.Returned(None)
    assert strings.items == ["ok"]
    out = I.run_method(m, [strings, I.JArray("[I", [])], I.Heap())
    assert isinstance(out, I.Threw) and out.exception == "java/lang/ArrayStoreException"
    numbers = I.JArray("[Ljava/lang/Number;", [None])  # Integer is a Number: assignable via the JDK's classes
    assert I.run_method(m, [numbers, I.Boxed("java/lang/Integer", 1)], I.Heap()) == I.Returned(None)


def test_monitors_are_counted_and_unbalanced_exit_throws() -> None:
    o = Var(0, IRType(Kind.REF, "java/lang/Object"), "o")
    heap = I.Heap()
    lock = I.JObject("java/lang/Object")
    enter2 = _method({0: Block(0, [MonitorEnter(o), MonitorEnter(o)], Return(None))}, [o], desc="(Ljava/lang/Object;)V")
    exit1 = _method({0: Block(0, [MonitorExit(o)], Return(None))}, [o], desc="(Ljava/lang/Object;)V")
    I.run_method(enter2, [lock], heap)
    assert heap.monitor_count(lock) == 2
    I.run_method(exit1, [lock], heap)
    I.run_method(exit1, [lock], heap)
    assert heap.monitor_count(lock) == 0
    out = I.run_method(exit1, [lock], heap)
    assert isinstance(out, I.Threw) and out.exception == "java/lang/IllegalMonitorStateException"
    out = I.run_method(exit1, [None], heap)
    assert isinstance(out, I.Threw) and out.exception == "java/lang/NullPointerException"


def test_synchronized_method_releases_its_monitor_when_it_throws() -> None:
    this = Var(0, IRType(Kind.REF, "T"), "this")
    m = _method({0: Block(0, [], Throw(Const(IRType(Kind.REF, None), None)))}, [this], desc="()V", static=False,
                synchronized=True)
    heap = I.Heap()
    obj = I.JObject("java/lang/Object")
    out = I.run_method(m, [obj], heap)
    assert isinstance(out, I.Threw) and out.exception == "java/lang/NullPointerException"
    assert heap.monitor_count(obj) == 0


def test_base_handler_refuses_calls_honestly() -> None:
    x = Var(0, INT, "x")
    call = Invoke(x, InvokeKind.STATIC, MethodRef("java/lang/Math", "abs", "(I)I"), None, [x])
    m = _method({0: Block(0, [call], Return(x))}, [x])
    with pytest.raises(I.Unsupported, match="java/lang/Math.abs"):
        I.run_method(m, [-3], I.Heap())
    # the default handler models Math.abs exactly (Integer.MIN_VALUE stays negative)
    assert I.run_method(m, [-3], I.Heap(), DefaultCallHandler()) == I.Returned(3)
    assert I.run_method(m, [INT_MIN], I.Heap(), DefaultCallHandler()) == I.Returned(INT_MIN)


def test_recursion_deeper_than_the_limit_is_a_stack_overflow() -> None:
    x = Var(0, INT, "x")
    r = Var(1, INT, "r")
    recurse = Invoke(r, InvokeKind.STATIC, MethodRef("T", "m", "(I)I"), None, [x])
    m = _method({0: Block(0, [recurse], Return(r))}, [x])

    class Self(I.BaseCallHandler):
        def invoke(self, interp, kind, method, receiver, args):
            return interp.execute(m, args)

    out = I.run_method(m, [1], I.Heap(), Self(), max_depth=50)
    assert isinstance(out, I.Threw) and out.exception == "java/lang/StackOverflowError"


def test_identity_of_equal_strings_is_not_guessed() -> None:
    a, b = Var(0, IRType(Kind.REF, "java/lang/String"), "a"), Var(1, IRType(Kind.REF, "java/lang/String"), "b")
    m = _method({0: Block(0, [], If(Cond.EQ, a, b, 1, 2)), 1: Block(1, [], Return(Const(INT, 1))),
                 2: Block(2, [], Return(Const(INT, 0)))}, [a, b], desc="(Ljava/lang/String;Ljava/lang/String;)I")
    assert I.run_method(m, ["x", "y"], I.Heap()) == I.Returned(0)
    assert I.run_method(m, ["x", None], I.Heap()) == I.Returned(0)
    with pytest.raises(I.Unsupported, match="equal strings"):
        I.run_method(m, ["x", "x"], I.Heap())


def test_negative_array_size() -> None:
    n = Var(0, INT, "n")
    arr = Var(1, IRType(Kind.REF, "[[I"), "arr")
    m = _method({0: Block(0, [NewArray(arr, "[[I", [Const(INT, 2), n])], Return(arr))}, [n], desc="(I)[[I")
    out = I.run_method(m, [3], I.Heap())
    assert isinstance(out, I.Returned) and [len(r.items) for r in out.value.items] == [3, 3]
    out = I.run_method(m, [-1], I.Heap())
    assert isinstance(out, I.Threw) and out.exception == "java/lang/NegativeArraySizeException"


def test_new_of_an_unmodelled_class_is_unsupported() -> None:
    r = Var(0, IRType(Kind.REF, "java/util/TreeMap"), "r")
    m = _method({0: Block(0, [New(r, "java/util/TreeMap", MethodRef("java/util/TreeMap", "<init>", "()V"), [])],
                          Return(r))}, [], desc="()Ljava/util/TreeMap;")
    with pytest.raises(I.Unsupported, match="new java/util/TreeMap"):
        I.run_method(m, [], I.Heap(), DefaultCallHandler())


def test_an_array_larger_than_the_jvms_heap_is_an_out_of_memory_error() -> None:
    n = Var(0, INT, "n")
    arr = Var(1, IRType(Kind.REF, "[J"), "arr")
    m = _method({0: Block(0, [NewArray(arr, "[J", [n])], Return(arr))}, [n], desc="(I)[J")
    with pytest.raises(I.Unsupported, match="array of"):  # 2 GiB of longs fit the heap, not the model
        I.run_method(m, [1 << 28], I.Heap(), max_heap_bytes=1 << 31)
    out = I.run_method(m, [(1 << 28) + 1], I.Heap(), max_heap_bytes=1 << 31)
    assert isinstance(out, I.Threw) and out.exception == "java/lang/OutOfMemoryError"
    with pytest.raises(I.Unsupported, match="array of"):  # the heap unknown: not modelled
        I.run_method(m, [(1 << 28) + 1], I.Heap())


# -- Double.toString / Float.toString (JDK 17's FloatingDecimal) ------------------------------------------------
ORACLE_SOURCE = EDGE_SOURCES / "oracle" / "FloatToStringOracle.java"
FLOAT_TEXT_RANDOM = 50_000  # per kind: random bit patterns and random short decimals, each value also negated


@pytest.mark.slow  # the slow tier: ~590k values through the JVM and the model (151 s of a loaded fast-tier run)
def test_float_and_double_to_string_are_the_jdks(java_home: Path, tmp_path: Path) -> None:
    """The model's Double.toString and Float.toString against the JVM's on ~590k values in one JVM run: per
    type 200k random values (50k random bit patterns and 50k random short decimals, each also negated) and ~95k
    fixed ones: every power of two and of ten with neighbours, the format's switch points, subnormals, integers
    near 2^53 and 2^63, and values whose midpoints to a neighbour are short decimals (the digit loop's ties).
    Not one may differ. (Checked once with 500k per family: 4.15M values, none differ.)"""
    run_javac([*javac_command(java_home), "-d", str(tmp_path), str(ORACLE_SOURCE)], check=True)
    proc = subprocess.run([str(java_home / "bin" / "java"), "-cp", str(tmp_path), "FloatToStringOracle",
                           str(FLOAT_TEXT_RANDOM), str(SEED)], capture_output=True, text=True, check=True)
    counts = Counter()
    differ = []
    for line in proc.stdout.splitlines():
        kind, bits, text = line.split(" ")
        if kind == "d":
            mine = double_to_string(S.long_bits_to_double(int(bits, 16)))
        else:
            mine = float_to_string(S.int_bits_to_float(int(bits, 16)))
        counts[kind] += 1
        if mine != text:
            differ.append(f"{kind} {bits}: JVM {text}, model {mine}")
    assert counts["d"] >= 4 * FLOAT_TEXT_RANDOM + 90_000 and counts["f"] >= 4 * FLOAT_TEXT_RANDOM + 90_000, counts
    assert not differ, f"{len(differ)} of {sum(counts.values())} differ:\n" + "\n".join(differ[:20])


def test_float_to_string_examples() -> None:
    """A few values spelled out, among them where JDK 17 is not the shortest (2^60, 1e23)."""
    assert double_to_string(2.0 ** 60) == "1.15292150460684698E18"  # the integer fast path keeps 18 digits
    assert repr(2.0 ** 60) == "1.152921504606847e+18"
    assert double_to_string(2e-3) == "0.002" and double_to_string(1e7) == "1.0E7"
    assert double_to_string(9_999_999.0) == "9999999.0" and double_to_string(1e-3) == "0.001"
    assert double_to_string(1e23) == "9.999999999999999E22"  # the same double; the shortest is 1.0E23
    assert double_to_string(2e23) == "1.9999999999999998E23" and double_to_string(3e23) == "3.0E23"
    assert double_to_string(5e-324) == "4.9E-324" and float_to_string(1.401298464324817e-45) == "1.4E-45"
    assert double_to_string(-0.0) == "-0.0" and double_to_string(float("nan")) == "NaN"
    assert float_to_string(0.1) == "0.1" and float_to_string(S.to_f32(1 / 3)) == "0.33333334"
    assert double_to_string(100.0) == "100.0" and double_to_string(1.0e-5) == "1.0E-5"


# -- difftest itself ------------------------------------------------------------------------------------------
def test_encoding_round_trips() -> None:
    for s in ["", "abc", "a b,c{d}\\e", "h\u00e9llo", "\ud83d\ude00", "\ud800", "\x00\n"]:
        assert dt.unescape(dt.escape(s)) == s
        assert dt.decode_value(dt.encode_value(s, "Ljava/lang/String;")) == s
    assert dt.encode_value(-0.0, "D") == "d:0x8000000000000000"
    assert dt.encode_value(1.0, "F") == "f:0x3f800000"
    assert dt.encode_value([1, -2], "[I") == "[I:1,-2"
    nested = dt.encode_value([[1], None, []], "[[I")
    assert nested == "[[I:{[I:1},null,{[I:}"
    assert dt.decode_value(nested) == dt.ArrayVal("[[I", (dt.ArrayVal("[I", (1,)), None, dt.ArrayVal("[I", ())))
    assert dt.encode_value(["a,b", None], "[Ljava/lang/String;") == "[Ljava/lang/String;:s:a\\u002cb,null"
    assert dt.canonical("f:0x7fc00000") == dt.canonical("f:0xffc00001") == "f:NaN"
    assert dt.canonical("d:0x7ff0000000000000") == "d:0x7ff0000000000000"


def test_generated_arguments_are_deterministic_and_cover_edges() -> None:
    a = dt.generate_args("(IJLjava/lang/String;[D)V", 20, 1)
    assert a == dt.generate_args("(IJLjava/lang/String;[D)V", 20, 1)
    assert len(a) == 20 and len({repr(x) for x in a}) == 20
    ints = {x[0] for x in dt.generate_args("(I)V", 40, 0)}
    assert {0, 1, -1} <= ints and ints & {INT_MIN, INT_MAX}
    strings = {x[0] for x in dt.generate_args("(Ljava/lang/String;)V", 40, 0)}
    assert None in strings and "" in strings and any(s and not s.isascii() for s in strings)


def test_compare_finds_a_changed_class(java_home: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    trees = []
    for k, body in enumerate(["return a * 2;", "return a + a;", "return a << 1 | (a == 3 ? 1 : 0);"]):
        (src / "Twice.java").write_text(
            "public class Twice { static int calls;\n"
            f"  static int twice(int a) {{ calls++; System.out.println(calls); {body} }}\n}}\n")
        out = tmp_path / f"t{k}"
        run_javac([*javac_command(java_home), "-d", str(out), str(src / "Twice.java")], check=True)
        trees.append(out)
    calls = [dt.Call("Twice", "twice", "(I)I", (a,)) for a in (1, 3, -7, INT_MAX)]
    same = dt.compare(trees[0], trees[1], calls, java_home=java_home)
    assert same.ok and same.compared == 4, same.report()
    diff = dt.compare(trees[0], trees[2], calls, java_home=java_home)
    assert not diff.ok and [m.call.args for m in diff.mismatches] == [(3,)]
    # one method is one state group: the static counter runs 1..4 within it
    results = dt.run_jvm(trees[0], calls, java_home=java_home)
    assert [r.out for r in results] == ["1\n", "2\n", "3\n", "4\n"]
    bad = dt.run_jvm(trees[0], [dt.Call("Twice", "nope", "()V")], java_home=java_home)
    assert bad[0].kind == "ERROR"


def test_an_out_of_memory_error_on_one_side_only_is_run_again(java_home: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """An OutOfMemoryError may come from the batch's heap, filled by an earlier call (seen once, in the lowered
    fixtures' comparison: a call allocating a few small objects "threw" it): a call with one on one side only is
    run again on both sides in fresh JVMs, and what happens again is the result."""
    src = tmp_path / "src"
    src.mkdir()
    trees = []
    for k, body in enumerate(["return a * 2;", "if (a == 3) return new long[Integer.MAX_VALUE].length; return a * 2;"]):
        (src / "Grow.java").write_text(
            "public class Grow { static int calls;\n"
            f"  static int grow(int a) {{ calls++; System.out.println(calls); {body} }}\n}}\n")
        out = tmp_path / f"t{k}"
        run_javac([*javac_command(java_home), "-d", str(out), str(src / "Grow.java")], check=True)
        trees.append(out)
    calls = [dt.Call("Grow", "grow", "(I)I", (a,)) for a in (1, 2, 3, 4)]
    real_run = dt.run_jvm
    runs = []

    def heap_full_once(classes_dir, batch, **kwargs):
        results = real_run(classes_dir, batch, **kwargs)
        runs.append(len(batch))
        if len(runs) == 2:  # the rewritten side's batch: its third call meets a full heap
            results[2] = dt.Result("THROW", exception="java/lang/OutOfMemoryError")
        return results
    monkeypatch.setattr(dt, "run_jvm", heap_full_once)
    same = dt.compare(trees[0], trees[0], calls, java_home=java_home)
    assert same.ok and same.compared == 4, same.report()
    assert runs == [4, 4, 3, 3]  # again: the calls of its state group up to it, on each side
    monkeypatch.setattr(dt, "run_jvm", real_run)
    real = dt.compare(trees[0], trees[1], calls, java_home=java_home)  # an OutOfMemoryError that happens again
    assert [(m.call.args, m.rewritten.exception) for m in real.mismatches] == [((3,), "java/lang/OutOfMemoryError")]


def test_runner_times_out_and_goes_on(java_home: Path, tmp_path: Path) -> None:
    src = tmp_path / "Spin.java"
    src.write_text("public class Spin { static int n;\n"
                   "  static int spin(int a) { n++; while (a != 0) { a |= 1; } return n; }\n}\n")
    run_javac([*javac_command(java_home), "-d", str(tmp_path), str(src)], check=True)
    calls = [dt.Call("Spin", "spin", "(I)I", (0,)), dt.Call("Spin", "spin", "(I)I", (1,)),
             dt.Call("Spin", "spin", "(I)I", (0,)), dt.Call("Spin", "spin", "(I)I", (0,), group="fresh")]
    # 1.5 s per call: at 300 ms a call that returns at once timed out about one run in three at load 16 (the
    # JVM's share of a core on this 2-core machine is then ~1/8, and the first call also loads the class)
    results = dt.run_jvm(tmp_path, calls, java_home=java_home, timeout_ms=1500)
    assert [str(r) for r in results] == ["RET 1", "TIMEOUT", "RET 3", "RET 1"]
    cmp = dt.compare_results(calls, results, results)
    assert cmp.ok and cmp.compared == 2 and cmp.inconclusive == 2  # the rest of a timed-out group is unknown


def test_compare_does_not_run_what_the_original_left_uncomparable(java_home: Path, tmp_path: Path) -> None:
    # a call that timed out on the original side (and the rest of its group) is not made on the rewritten side;
    # the group between two runs of another group still resets its statics there (the second "h" call sees a
    # fresh n: 1, not 2), so the comparison is the one of two full runs
    src = tmp_path / "Spin.java"
    src.write_text("public class Spin { static int n;\n"
                   "  static int spin(int a) { n++; while (a != 0) { a |= 1; } return n; }\n}\n")
    run_javac([*javac_command(java_home), "-d", str(tmp_path), str(src)], check=True)
    calls = [dt.Call("Spin", "spin", "(I)I", (0,), group="h"), dt.Call("Spin", "spin", "(I)I", (1,), group="g"),
             dt.Call("Spin", "spin", "(I)I", (0,), group="g"), dt.Call("Spin", "spin", "(I)I", (0,), group="h")]
    cmp = dt.compare(tmp_path, tmp_path, calls, java_home=java_home, timeout_ms=2000)
    assert [str(r) for r in cmp.original] == ["RET 1", "TIMEOUT", "RET 2", "RET 1"]
    assert [r.message for r in cmp.rewritten[1:3]] == ["not run: its outcome could not be compared"] * 2
    assert [str(r) for r in (cmp.rewritten[0], cmp.rewritten[3])] == ["RET 1", "RET 1"]
    assert cmp.ok and cmp.compared == 2 and cmp.inconclusive == 2, cmp.report()


def test_a_skipping_run_made_again_whole_keeps_each_result_on_its_call(java_home: Path, tmp_path: Path,
                                                                        monkeypatch) -> None:
    # a skipping run whose JVM fails is made again with every call (difftest._run_lines); its results are then
    # one per call, and must not be spread over the calls that were to be made (that shifted every result by
    # the skipped calls before it: CI saw test_stage_ir's 806 calls compared, 735 "differ", each rewritten
    # result being the call before's)
    src = tmp_path / "Count.java"
    src.write_text("public class Count { static int n; static int next() { return ++n; } }\n")
    run_javac([*javac_command(java_home), "-d", str(tmp_path), str(src)], check=True)
    calls = [dt.Call("Count", "next", "()I", group="a"), dt.Call("Count", "next", "()I", group="b"),
             dt.Call("Count", "next", "()I", group="b")]
    real = dt._run_lines

    def in_trouble(classes_dir, all_calls, calls_made, lines, **kw):
        if len(calls_made) != len(all_calls):  # the skipping run: as if its JVM had died
            return dt.run_jvm(classes_dir, all_calls, java_home=kw["java_home"], timeout_ms=kw["timeout_ms"])
        return real(classes_dir, all_calls, calls_made, lines, **kw)
    monkeypatch.setattr(dt, "_run_lines", in_trouble)
    results = dt.run_jvm(tmp_path, calls, java_home=java_home, skip=frozenset({0}))
    assert [str(r) for r in results] == ["RET 1", "RET 1", "RET 2"]


def test_runner_keeps_a_no_class_def_found_error_that_happens_again(java_home: Path, tmp_path: Path) -> None:
    # a batch with NoClassDefFoundError runs once more in a fresh JVM (a JDK class can fail to initialize under
    # memory pressure); a missing class is missing again, so it stays the result
    src = tmp_path / "Uses.java"
    src.write_text("class Gone { static int v() { return 1; } }\n"
                   "public class Uses { static int call() { return Gone.v(); } static int two() { return 2; } }\n")
    run_javac([*javac_command(java_home), "-d", str(tmp_path), str(src)], check=True)
    (tmp_path / "Gone.class").unlink()
    calls = [dt.Call("Uses", "call", "()I"), dt.Call("Uses", "two", "()I")]
    results = dt.run_jvm(tmp_path, calls, java_home=java_home)
    assert [str(r) for r in results] == ["THROW java/lang/NoClassDefFoundError", "RET 2"]
