"""``peggy-jvm validate`` (peggy_jvm/validate, docs/validation.md) against its contract (DESIGN section 8).

Purpose-written pairs (tests/java/validate): ``equiv/V.java`` rewrites every method of ``orig/V.java`` in an
equivalent way (operands reordered, ``x*2`` vs ``x<<1``, other local slots, a strength-reduced loop, a flipped
branch with swapped arms) and must be proved; ``mutant/V.java`` changes each method (operator, constant +-1,
branch, dropped call, exception type) and must never be called equivalent, and gets a JVM-confirmed
counterexample. Also: the exit codes 0/1/3/2, the JSON and JUnit shapes, ``--map``, ``--explain``, and the
``--stage peg`` output of a fixture class validated against its original.
"""
from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import compile_versions, javac_command
from support.javac_cache import run_javac
from click.testing import CliRunner

from peggy_jvm.cli import main
from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs
from peggy_jvm.validate.counterexample import encode_arg, generate_inputs

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "tests" / "java" / "validate"
_SCRIPT = Path(sys.executable).parent / "peggy-jvm"
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "peggy_jvm.cli"]
PAIR_KEYS = {"class", "name", "descriptor", "verdict", "reason", "counterexample", "time_ms"}


def _javac(java_home: Path, out: Path, *sources: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    run_javac([*javac_command(java_home), "-d", str(out), *map(str, sources)], check=True,
              capture_output=True)
    return out


@pytest.fixture(scope="module")
def trees(java_home: Path, tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("validate")
    return {name: _javac(java_home, base / name, SOURCES / name / "V.java") for name in ("orig", "equiv", "mutant")}


@pytest.fixture(scope="module")
def mutant_report(trees):
    return validate_inputs(trees["orig"], trees["mutant"], ValidateOptions(method_timeout=5.0))


def invoke(*args):
    # wide enough that no verdict cell of the table is folded over two lines
    result = CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": "400"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def verdict_cells(output: str) -> dict[str, int]:
    """How many rows of the printed table have each verdict (cells are separated by the box character)."""
    cells = [c.strip() for line in output.splitlines() for c in line.split("\u2502")]
    return {v: cells.count(v) for v in ("equivalent", "not-equivalent", "unknown")}


# -- proofs ----------------------------------------------------------------------------------------------------
def test_equivalent_pairs_are_proved(trees):
    report = validate_inputs(trees["orig"], trees["equiv"], ValidateOptions(explain=True))
    not_proved = [(p.name, p.reason) for p in report.pairs if p.verdict is not Verdict.EQUIVALENT]
    assert not not_proved
    assert {p.name for p in report.pairs} >= {"add", "dbl", "mul", "sum5", "sign", "check", "lsum", "dmul"}
    assert report.exit_code() == 0
    used = {p.name: p.axioms for p in report.pairs}
    assert "add-comm" in used["add"]
    assert "mul-pow2-shl" in used["dbl"]


def test_identical_inputs_are_equivalent(trees):
    report = validate_inputs(trees["orig"], trees["orig"], ValidateOptions())
    assert all(p.verdict is Verdict.EQUIVALENT and p.reason == "byte-identical code" for p in report.pairs)


# -- mutants ---------------------------------------------------------------------------------------------------
def test_mutants_are_never_equivalent(mutant_report):
    mutated = [p for p in mutant_report.pairs if p.name != "<init>"]
    assert len(mutated) == 15
    assert not [p.name for p in mutated if p.verdict is Verdict.EQUIVALENT]
    caught = [p for p in mutated if p.verdict is Verdict.NOT_EQUIVALENT]
    assert len(caught) >= 13, [(p.name, p.reason) for p in mutated if p not in caught]
    for p in caught:
        cx = p.counterexample
        assert cx and cx["args"] is not None and cx["orig"] != cx["opt"]
    assert mutant_report.exit_code() == 1


def test_counterexamples_name_the_difference(mutant_report):
    by_name = {p.name: p for p in mutant_report.pairs}
    check = by_name["check"].counterexample
    assert "IllegalArgumentException" in check["orig"] and "IllegalStateException" in check["opt"]
    assert "prints" in by_name["hello"].counterexample["orig"]
    assert "arrays after" in by_name["fill"].counterexample["orig"]  # the dropped call's effect


def test_abstract_class_mutant_is_unknown_and_exit_3(java_home, tmp_path):
    """An instance method of an abstract class has no receiver to call it on (tests/test_validate_instances.py
    has the instance methods that do): unknown, exit 3."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    src = "public abstract class W {{ int k; public int f(int x) {{ return x * 3{} + k; }} }}"
    (tmp_path / "a" / "W.java").write_text(src.format(""))
    (tmp_path / "b" / "W.java").write_text(src.format(" + 1"))
    a = _javac(java_home, tmp_path / "ca", tmp_path / "a" / "W.java")
    b = _javac(java_home, tmp_path / "cb", tmp_path / "b" / "W.java")
    report = validate_inputs(a, b, ValidateOptions(method_timeout=2.0))
    f = next(p for p in report.pairs if p.name == "f")
    assert f.verdict is Verdict.UNKNOWN and "no receiver: the class is abstract" in f.reason
    assert report.exit_code() == 3
    assert invoke("validate", a, b).exit_code == 3


# -- command line ----------------------------------------------------------------------------------------------
def test_cli_json_and_junit(trees, tmp_path):
    js, xml = tmp_path / "r.json", tmp_path / "r.xml"
    result = invoke("validate", trees["orig"], trees["mutant"], "--json", js, "--junit", xml,
                    "--method-timeout", "5")
    assert result.exit_code == 1
    data = json.loads(js.read_text())
    assert set(data) >= {"pairs", "summary"}
    assert set(data["summary"]) == {"equivalent", "not_equivalent", "unknown"}
    for p in data["pairs"]:
        assert set(p) == PAIR_KEYS
        assert p["verdict"] in {"equivalent", "not-equivalent", "unknown"}
    assert data["summary"]["not_equivalent"] >= 13
    # the table lists what a person reading the log must look at: every pair not proved, none proved
    shown = verdict_cells(result.output)
    assert shown == {"equivalent": 0, "not-equivalent": data["summary"]["not_equivalent"],
                     "unknown": data["summary"]["unknown"]}
    n = data["summary"]["equivalent"]
    assert f"({n} equivalent pair{'s' if n != 1 else ''} not listed; --all lists every pair)" in result.output
    suite = ET.parse(xml).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == len(data["pairs"])
    assert len([c for c in cases if c.find("failure") is not None]) == data["summary"]["not_equivalent"]
    assert len([c for c in cases if c.find("skipped") is not None]) == data["summary"]["unknown"]


def test_cli_exit_0_with_map_and_explain(trees, java_home, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "U.java").write_text(
        "public class U { public static int add(int a, int b) { return b + a; } }")
    u = _javac(java_home, tmp_path / "u", tmp_path / "src" / "U.java")
    js = tmp_path / "r.json"
    result = invoke("validate", trees["orig"], u, "--map", "V=U", "--explain", "--json", js)
    data = json.loads(js.read_text())
    assert result.exit_code == 0, result.output
    assert {p["name"] for p in data["pairs"]} == {"<init>", "add"}
    assert "add-comm" in next(p for p in data["pairs"] if p["name"] == "add")["axioms"]
    assert "only in ORIG: method V.dbl(I)I" in data["unpaired"]
    assert "peggy-jvm validate" not in result.output  # nothing to list: no table, the summary says it all
    assert "2 pairs: 2 equivalent" in result.output and "(2 equivalent pairs not listed" in result.output
    every = invoke("validate", trees["orig"], u, "--map", "V=U", "--all")
    assert every.exit_code == 0
    assert verdict_cells(every.output) == {"equivalent": 2, "not-equivalent": 0, "unknown": 0}
    assert "not listed" not in every.output


@pytest.mark.parametrize("bad", ["missing", "truncated", "map"])
def test_bad_input_is_one_line_exit_2(trees, tmp_path, bad):
    args = [str(trees["orig"]), str(trees["equiv"])]
    if bad == "missing":
        args[0] = str(tmp_path / "nothere.jar")
    elif bad == "truncated":
        t = tmp_path / "V.class"
        t.write_bytes((trees["orig"] / "V.class").read_bytes()[:120])
        args[1] = str(t)
    else:
        args.append("--map=V")
    proc = subprocess.run([*CLI, "validate", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("peggy-jvm: error: "), proc.stderr
    if bad != "map":
        assert (tmp_path / "nothere.jar").as_posix() in lines[0] or "V.class" in lines[0]


# -- the optimizer's own output --------------------------------------------------------------------------------
def test_stage_peg_output_is_proved(fixture_classes, tmp_path):
    src = fixture_classes["release17"] / "IntArith.class"
    out = tmp_path / "opt"
    assert invoke("optimize", src, "-o", out, "--stage", "peg").exit_code == 0
    report = validate_inputs(src, out / "IntArith.class", ValidateOptions(method_timeout=2.0))
    verdicts = [p.verdict for p in report.pairs]
    assert Verdict.NOT_EQUIVALENT not in verdicts
    assert verdicts.count(Verdict.EQUIVALENT) >= 0.9 * len(verdicts)


# -- generation ------------------------------------------------------------------------------------------------
def test_inputs_are_deterministic_and_cover_edges():
    a, b = generate_inputs("(IJ)I"), generate_inputs("(IJ)I")
    assert a == b
    firsts = {args[0] for args in a}
    assert {0, 1, -1, 2**31 - 1, -2**31} <= firsts
    arrays = generate_inputs("([I)I")
    assert [None] in arrays and [[]] in arrays
    assert encode_arg("F", float("nan")) == str(0x7FC00000)
    assert encode_arg("Ljava/lang/String;", "Ab") == "S41.62"
    assert encode_arg("[I", [1, -2]) == "A1|-2"


def test_no_axioms_no_proof(trees):
    """Without rules only hash-consing can prove: a reordered sum is then unknown (no difference exists), never
    equivalent and never not-equivalent."""
    report = validate_inputs(trees["orig"], trees["equiv"], ValidateOptions(rules=[], method_timeout=2.0))
    by_name = {p.name: p for p in report.pairs}
    assert by_name["add"].verdict is Verdict.UNKNOWN
    assert "no difference found" in by_name["add"].reason
    assert by_name["mul"].verdict is Verdict.EQUIVALENT and by_name["mul"].reason == "same PEG"
    assert Verdict.NOT_EQUIVALENT not in {p.verdict for p in report.pairs}


def test_inputs_are_generated_for_every_supported_array_type():
    # boolean has two edge values; the array edges once assumed three (found on ProGuard's output of jsoup)
    for desc in ("([Z)V", "([B)V", "([C)V", "([S)V", "([I)V", "([J)V", "([F)V", "([D)V", "([Ljava/lang/String;)V"):
        inputs = list(generate_inputs(desc))
        assert [None] in inputs and [[]] in inputs, desc
        assert any(a[0] and len(a[0]) >= 2 for a in inputs), desc


# -- aliasing, Object arguments, nondeterminism -------------------------------------------------------------
COUNTER_ORIG = r"""
public class W {
    static int sameKind(int[] a, int[] b) { int x = a[0]; b[0] = 7; return x + a[0]; }
    static String label(Object o) { return "x=" + o; }
    static int nonNull(Object o, int k) { return o == null ? k : k + 1; }
    static String printed(int[] a) { return "" + a; }
    static String printedObject(Object o) { return "" + o.hashCode(); }
}
"""
COUNTER_OPT = r"""
public class W {
    static int sameKind(int[] a, int[] b) { int x = a[0]; b[0] = 7; return x + x; }
    static String label(Object o) { return "x=".concat(String.valueOf(o)); }
    static int nonNull(Object o, int k) { return o == null ? k : k + 2; }
    static String printed(int[] a) { return String.valueOf(a).concat(""); }
    static String printedObject(Object o) { return String.valueOf(o.hashCode()).concat(""); }
}
"""


@pytest.fixture(scope="module")
def counter_report(java_home, tmp_path_factory):
    dirs = compile_versions(java_home, tmp_path_factory.mktemp("counter"), "W.java",
                            {"orig": COUNTER_ORIG, "opt": COUNTER_OPT})
    rep = validate_inputs(dirs["orig"], dirs["opt"], ValidateOptions(method_timeout=4.0))
    return {p.name: p for p in rep.pairs}


def test_aliased_arrays_give_a_counterexample(counter_report):
    row = counter_report["sameKind"]  # only a == b shows the read-over-write wrong
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["args"][1] == "(the same array as argument 1)", row.counterexample
    assert row.counterexample["orig"].startswith("returns 7") and row.counterexample["opt"].startswith("returns 0")


def test_object_arguments_include_one_whose_to_string_is_null(counter_report):
    # JLS 5.1.11: string conversion of such an object is "null"; String.valueOf(o).concat is not
    row = counter_report["label"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["args"] == ["(an Object whose toString() returns null)"], row.counterexample
    assert row.counterexample["orig"] == 'returns "x=null"', row.counterexample
    assert "NullPointerException" in row.counterexample["opt"], row.counterexample
    assert counter_report["nonNull"].verdict is Verdict.NOT_EQUIVALENT, counter_report["nonNull"].reason


@pytest.mark.parametrize("name", ["printed", "printedObject"])
def test_identity_hash_codes_are_never_a_counterexample(counter_report, name):
    # "[I@1b6d3586" and Object.hashCode() differ from run to run: ORIG disagrees with itself, nothing is confirmed
    row = counter_report[name]
    assert row.verdict is not Verdict.NOT_EQUIVALENT, (row.reason, row.counterexample)


def test_aliasing_inputs_pair_only_arrays_of_one_type():
    from peggy_jvm.validate.counterexample import SameAs
    same = [a for a in generate_inputs("([I[I)I") if isinstance(a[1], SameAs)]
    assert same and all(a[1] == SameAs(0) and isinstance(a[0], list) and a[0] for a in same)
    assert not any(isinstance(x, SameAs) for a in generate_inputs("([I[J)I") for x in a)
    assert encode_arg("[I", SameAs(0)) == "@0"


def test_interface_arguments_are_stubs(java_home, tmp_path):
    # Runnable is an interface: the harness implements it; the stub's toString() is null in one of them
    orig = "public class I { static String show(Runnable r) { if (r == null) return \"none\"; return \"r=\" + r; } }"
    opt = "public class I { static String show(Runnable r) { if (r == null) return \"none\"; " \
          "return \"r=\".concat(String.valueOf(r)); } }"
    dirs = compile_versions(java_home, tmp_path, "I.java", {"orig": orig, "opt": opt})
    rep = validate_inputs(dirs["orig"], dirs["opt"], ValidateOptions(method_timeout=4.0))
    row = next(p for p in rep.pairs if p.name == "show")
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["args"] == ["(a Runnable stub whose toString() returns null)"], row.counterexample
    assert row.counterexample["orig"] == 'returns "r=null"', row.counterexample


def test_interface_arguments_include_stubs_whose_methods_return_null_strings(java_home, tmp_path):
    # what ProGuard's `"x" + p.getRawType()` -> `"x".concat(String.valueOf(p.getRawType()))` needs: the argument's
    # method must return an object whose toString() is null (a stub returning null gives "null" on both sides)
    head = "import java.lang.reflect.*; public class D { static String raw(ParameterizedType p) { " \
           "Type r = p.getRawType(); if (r instanceof Class) return \"class\"; "
    orig = head + "return \"raw=\" + r; } }"
    opt = head + "return \"raw=\".concat(String.valueOf(r)); } }"
    dirs = compile_versions(java_home, tmp_path, "D.java", {"orig": orig, "opt": opt})
    rep = validate_inputs(dirs["orig"], dirs["opt"], ValidateOptions(method_timeout=4.0))
    row = next(p for p in rep.pairs if p.name == "raw")
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["args"] == [
        "(a ParameterizedType stub whose methods return such stubs and whose toString() returns null)"], \
        row.counterexample
    assert row.counterexample["orig"] == 'returns "raw=null"', row.counterexample
    assert "NullPointerException" in row.counterexample["opt"], row.counterexample
    # the equivalent twin is not shown different by the same stubs
    (tmp_path / "same").mkdir()
    dirs = compile_versions(java_home, tmp_path / "same", "D.java", {"orig": orig, "opt": orig.replace(
        "\"raw=\" + r", "\"raw=\".concat(r == null ? \"null\" : r.toString() == null ? \"null\" : r.toString())")})
    rep = validate_inputs(dirs["orig"], dirs["opt"], ValidateOptions(method_timeout=4.0))
    assert next(p for p in rep.pairs if p.name == "raw").verdict is not Verdict.NOT_EQUIVALENT


LIBRARY_ORIG = """
import java.util.Locale;
public class L {
    static String message(Throwable t) { if (t instanceof Error) return "error"; return "failed: " + t; }
    static boolean primitive(Class<?> c) { return c != null && c.isPrimitive(); }
    static int next(Integer i) { return i == null ? 0 : i + 1; }
    static String tag(Locale l) { return l == null ? "-" : l.getCountry(); }
    static String same(Throwable t) { return "failed: " + t; }
}
"""
LIBRARY_OPT = """
import java.util.Locale;
public class L {
    static String message(Throwable t) { if (t instanceof Error) return "error"; return "failed: ".concat(String.valueOf(t)); }
    static boolean primitive(Class<?> c) { return c != null && c.isArray(); }
    static int next(Integer i) { return i == null ? 0 : i - 1; }
    static String tag(Locale l) { return l == null ? "-" : l.getLanguage(); }
    static String same(Throwable t) { String s = t == null ? null : t.toString(); return "failed: " + (s == null ? "null" : s); }
}
"""


def test_library_arguments_are_generated(java_home, tmp_path):
    # Class, Throwable, boxed numbers and Locale parameters get JDK objects the harness builds; a Throwable whose
    # toString() returns null shows string conversion rewritten into String.concat (ProGuard's rewrite)
    dirs = compile_versions(java_home, tmp_path, "L.java", {"orig": LIBRARY_ORIG, "opt": LIBRARY_OPT})
    rows = {p.name: p for p in validate_inputs(dirs["orig"], dirs["opt"], ValidateOptions(method_timeout=4.0)).pairs}
    expected = {"message": ["(a RuntimeException whose toString() returns null)"], "primitive": ["(int.class)"],
                "next": ["(Integer 0)"], "tag": ["(Locale.US)"]}
    for name, args in expected.items():
        assert rows[name].verdict is Verdict.NOT_EQUIVALENT, (name, rows[name].reason)
        assert rows[name].counterexample["args"] == args, (name, rows[name].counterexample)
    assert rows["message"].counterexample["orig"] == 'returns "failed: null"', rows["message"].counterexample
    assert rows["same"].verdict is not Verdict.NOT_EQUIVALENT, rows["same"].counterexample


def test_a_harness_that_does_not_compile_is_a_one_line_reason(tmp_path, monkeypatch):
    from peggy_jvm.validate import counterexample as cxm
    broken = tmp_path / "Harness.java"
    broken.write_text("public class Harness { void f() { int x = ; }\n")
    monkeypatch.setattr(cxm, "HARNESS_SOURCE", broken)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(cxm.JvmUnavailable) as err:
        cxm.JvmHarness._compile()
    text = str(err.value)
    assert text.startswith("javac failed on the harness: ") and "\n" not in text, text
    assert "Harness.java" in text, text
