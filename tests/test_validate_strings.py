"""``validate --assume strings-by-value`` (peggy_jvm/rules/strings.py, docs/validation.md): ProGuard's string
rewrites (a builder chain turned into ``String.concat``/``String.valueOf``, ``valueOf`` of a constant folded to a
literal) are proved only under the assumption, and say so; without it they stay unknown. Every value claim the
rules make is checked on the JVM first (the renderings of ``append``/``valueOf``, ``concat`` against the builder,
the null cases), and the near misses (parts swapped, another constant, another variable, a char appended as an
int, a receiver that may be null, an object whose ``toString()`` may return null, a ``char[]``, a builder used
after its ``toString()``, a method that compares the String by reference) are never proved, with or without it.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import compile_versions, javac_command, validate_rows
from support.javac_cache import run_javac

from peggy_jvm.cli import main
from peggy_jvm.rules import default_rules
from peggy_jvm.jdk.facts import BOOT_CLASSES
from peggy_jvm.rules.strings import ASSUMPTIONS, STRINGS_BY_VALUE, assumption_rules, render_constant
from peggy_jvm.validate import Verdict

ORIG = r"""
public class S {
    static String name() { return "nm"; }
    static String label(int x) { return new StringBuilder().append("n=").append(x).toString(); }
    static String message(String s) { return new StringBuilder().append("bad: ").append(s).toString(); }
    static String quote() { return String.valueOf('"'); }
    static String mixed(long a, char c, boolean z) {
        return new StringBuilder().append(a).append(c).append(z).append('!').toString();
    }
    static String floats(float f, double d) { return new StringBuilder().append(f).append(';').append(d).toString(); }
    static String folded() {
        return new StringBuilder().append("a").append(1).append('b').append(true).append(-7L).toString();
    }
    static String reopened(int i) { return new StringBuilder().append("[").append(i).append("]").toString(); }
    static String fromCall() { String n = name(); return new StringBuilder().append("x").append(n).toString(); }
    static int check(int i) {
        if (i < 0) { throw new IllegalArgumentException(new StringBuilder().append("neg: ").append(i).toString()); }
        return i;
    }
    static String buffer(int i) { return new StringBuffer().append("b").append(i).toString(); }
    static String nullObject() { return String.valueOf((Object) null); }
    static String strict(int x) { return new StringBuilder().append("n=").append(x).toString(); }
    static String afterLoop(int n) {
        String t = "start";
        for (int i = 0; i < n; i++) { t = name(); }
        return new StringBuilder().append("x").append(t).toString();
    }
    static String branch(boolean c) {
        String t = c ? name() : "lit";
        return new StringBuilder().append("y").append(t).toString();
    }

    static String mixedPhi(boolean c, Object o) {
        Object t = c ? name() : o;
        return new StringBuilder().append("z").append(t).toString();
    }
    static String swapped(int x) { return new StringBuilder().append("n=").append(x).toString(); }
    static String otherConst(int x) { return new StringBuilder().append("n=").append(x).toString(); }
    static String otherVar(int x, int y) { return new StringBuilder().append("n=").append(x).toString(); }
    static String charAsInt(char c) { return new StringBuilder().append("c").append((int) c).toString(); }
    static String nullable(String s) { return new StringBuilder().append(s).append("!").toString(); }
    static String object(Object o) { return new StringBuilder().append("o=").append(o).toString(); }
    static String chars(char[] a) { return new StringBuilder().append("a=").append(a).toString(); }
    static String later(int x) {
        StringBuilder b = new StringBuilder();
        b.append("a");
        String r = b.toString();
        b.append(x);
        return r.concat(b.toString());
    }
    static boolean identity(int x) {
        String t = new StringBuilder().append("k").append(x).toString();
        String u = new StringBuilder().append("k").append(x).toString();
        return t == u;
    }
}
"""

# what ProGuard makes of ORIG (its shapes: valueOf(Object) for a String, a literal for valueOf of a constant, the
# builder seeded with a concat), and below the mutants, which must never be proved
OPT = r"""
public class S {
    static String name() { return "nm"; }
    static String label(int x) { return "n=".concat(String.valueOf(x)); }
    static String message(String s) { return "bad: ".concat(String.valueOf((Object) s)); }
    static String quote() { return "\""; }
    static String mixed(long a, char c, boolean z) {
        return String.valueOf(a).concat(String.valueOf(c)).concat(String.valueOf(z).concat("!"));
    }
    static String floats(float f, double d) { return String.valueOf(f).concat(";").concat(String.valueOf(d)); }
    static String folded() { return "a1btrue-7"; }
    static String reopened(int i) { return new StringBuilder("[".concat(String.valueOf(i))).append("]").toString(); }
    static String fromCall() { String n = name(); return "x".concat(String.valueOf((Object) n)); }
    static int check(int i) {
        if (i < 0) { throw new IllegalArgumentException("neg: ".concat(String.valueOf(i))); }
        return i;
    }
    static String buffer(int i) { return "b".concat(String.valueOf(i)); }
    static String nullObject() { return "null"; }
    static String strict(int x) { return new StringBuilder("n=").append(x).toString(); }
    static String afterLoop(int n) {
        String t = "start";
        for (int i = 0; i < n; i++) { t = name(); }
        return "x".concat(String.valueOf((Object) t));
    }
    static String branch(boolean c) {
        String t = c ? name() : "lit";
        return "y".concat(String.valueOf((Object) t));
    }

    static String mixedPhi(boolean c, Object o) { Object t = c ? name() : o; return "z".concat(String.valueOf(t)); }
    static String swapped(int x) { return String.valueOf(x).concat("n="); }
    static String otherConst(int x) { return "m=".concat(String.valueOf(x)); }
    static String otherVar(int x, int y) { return "n=".concat(String.valueOf(y)); }
    static String charAsInt(char c) { return "c".concat(String.valueOf(c)); }
    static String nullable(String s) { return s.concat("!"); }
    static String object(Object o) { return "o=".concat(String.valueOf(o)); }
    static String chars(char[] a) { return "a=".concat(String.valueOf((Object) a)); }
    static String later(int x) { return "a".concat(String.valueOf(x)); }
    static boolean identity(int x) { String t = "k".concat(String.valueOf(x)); return t == t; }
}
"""

PROVED_WITH_ASSUMPTION = ["label", "message", "quote", "mixed", "floats", "folded", "reopened", "fromCall", "check",
                          "buffer", "nullObject", "afterLoop", "branch"]
MUTANTS = ["mixedPhi", "swapped", "otherConst", "otherVar", "charAsInt", "nullable", "object", "chars", "later",
           "identity"]
# a value difference the JVM shows on generated arguments (object: on the generated Object whose toString() is null)
CONFIRMED = ["swapped", "otherConst", "otherVar", "charAsInt", "nullable", "object", "later", "identity"]


@pytest.fixture(scope="module")
def trees(java_home: Path, tmp_path_factory) -> dict[str, Path]:
    return compile_versions(java_home, tmp_path_factory.mktemp("strings"), "S.java", {"orig": ORIG, "opt": OPT})


def _run(trees, assumptions: tuple[str, ...]) -> dict:
    return validate_rows(trees, explain=True, assumptions=assumptions)


@pytest.fixture(scope="module")
def strict(trees):
    return _run(trees, ())


@pytest.fixture(scope="module")
def assumed(trees):
    return _run(trees, (STRINGS_BY_VALUE,))


# -- the value claims, on the JVM --------------------------------------------------------------------------------
ORACLE = r"""
public class Oracle {
    static String units(String s) {
        if (s == null) return "<null>";
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) { if (i > 0) b.append(','); b.append((int) s.charAt(i)); }
        return "[" + b + "]";
    }
    static void out(String what, String s) { System.out.println(what + " " + units(s)); }
    static void check(String what, boolean ok) { System.out.println(what + " " + ok); }
    static String npe(Runnable r) {
        try { r.run(); return "no exception"; } catch (NullPointerException e) { return "NPE"; }
    }
    public static void main(String[] args) {
        for (int v : new int[] {0, 1, -1, 42, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
            out("I " + v, String.valueOf(v));
            check("append(I)=valueOf " + v, new StringBuilder().append(v).toString().equals(String.valueOf(v)));
        }
        for (long v : new long[] {0L, -7L, Long.MIN_VALUE, Long.MAX_VALUE}) {
            out("J " + v, String.valueOf(v));
            check("append(J)=valueOf " + v, new StringBuilder().append(v).toString().equals(String.valueOf(v)));
        }
        for (int v : new int[] {0, 34, 65, 0x80, 0xE9, 0xD83D, 0xDE00, 0xFFFF}) {
            char c = (char) v;
            out("C " + v, String.valueOf(c));
            check("append(C)=valueOf " + v, new StringBuilder().append(c).toString().equals(String.valueOf(c)));
        }
        for (int v = 0; v <= 1; v++) {
            boolean z = v != 0;
            out("Z " + v, String.valueOf(z));
            check("append(Z)=valueOf " + v, new StringBuilder().append(z).toString().equals(String.valueOf(z)));
        }
        for (float f : new float[] {0f, -0f, 1f, 1e7f, 1e-5f, Float.NaN, Float.MIN_VALUE, Float.MAX_VALUE,
                                    Float.NEGATIVE_INFINITY, 2.8E-45f, 1.17549435E-38f, 0.1f}) {
            check("append(F)=valueOf " + Float.floatToRawIntBits(f),
                  new StringBuilder().append(f).toString().equals(String.valueOf(f)));
        }
        for (double d : new double[] {0d, -0d, 1d, 1e7, 1e-3, 1e-4, Double.NaN, Double.MIN_VALUE, Double.MAX_VALUE,
                                      Double.POSITIVE_INFINITY, 2e-323, 0.1, 1.0E23}) {
            check("append(D)=valueOf " + Double.doubleToRawLongBits(d),
                  new StringBuilder().append(d).toString().equals(String.valueOf(d)));
        }
        String[] ss = {"", "a", "xy", "\ud83d", "\ude00"};
        for (String a : ss) {
            for (String b : ss) {
                check("concat=builder " + units(a) + units(b),
                      a.concat(b).equals(new StringBuilder().append(a).append(b).toString())
                      && a.concat(b).equals(new StringBuffer(a).append(b).toString()));
            }
            check("valueOf(Object)String=append(String) " + units(a),
                  String.valueOf((Object) a).equals(new StringBuilder().append(a).toString())
                  && new StringBuilder().append((Object) a).toString().equals(a)
                  && new StringBuilder().append((CharSequence) a).toString().equals(a));
        }
        out("valueOf(Object)null", String.valueOf((Object) null));
        out("append(String)null", new StringBuilder().append((String) null).toString());
        out("append(Object)null", new StringBuilder().append((Object) null).toString());
        out("append(CharSequence)null", new StringBuilder().append((CharSequence) null).toString());
        System.out.println("new(String)null " + npe(() -> new StringBuilder((String) null)));
        System.out.println("concat(null) " + npe(() -> "x".concat(null)));
        System.out.println("null.concat " + npe(() -> ((String) null).concat("x")));
        String x = "x";
        check("concat(empty) is its receiver", x.concat("") == x);
        check("builder makes a new String", new StringBuilder().append(x).toString() != x);
        Object o = new Object() { public String toString() { return null; } };
        out("append(Object with null toString)", new StringBuilder().append("x").append(o).toString());
        System.out.println("concat(valueOf(Object with null toString)) " + npe(() -> "x".concat(String.valueOf(o))));
        char[] cs = {'h', 'i'};
        out("append(char[])", new StringBuilder().append(cs).toString());
        check("valueOf((Object) char[]) is not its characters", !String.valueOf((Object) cs).equals("hi"));
    }
}
"""


@pytest.fixture(scope="module")
def oracle(java_home: Path, tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("oracle")
    (d / "Oracle.java").write_text(ORACLE)
    run_javac([*javac_command(java_home), "-d", str(d), str(d / "Oracle.java")], check=True,
              capture_output=True)
    out = subprocess.run([str(java_home / "bin" / "java"), "-cp", str(d), "Oracle"], check=True,
                         capture_output=True, text=True, timeout=120).stdout
    return dict(line.rsplit(" ", 1) for line in out.splitlines())


def _units(text: str | None) -> str:
    return "<null>" if text is None else "[" + ",".join(str(ord(c)) for c in text) + "]"


@pytest.mark.parametrize("kind,op,values", [
    ("I", "const.i", [0, 1, -1, 42, -2**31, 2**31 - 1]),
    ("J", "const.l", [0, -7, -2**63, 2**63 - 1]),
    ("C", "const.i", [0, 34, 65, 0x80, 0xE9, 0xD83D, 0xDE00, 0xFFFF]),
    ("Z", "const.i", [0, 1]),
])
def test_constants_render_as_the_jdk_renders_them(oracle, kind, op, values):
    for v in values:
        assert oracle[f"{kind} {v}"] == _units(render_constant(kind, (op, v))), (kind, v)
        assert oracle[f"append({kind})=valueOf {v}"] == "true"  # the two calls the model calls one


def test_what_is_not_folded_is_left_alone():
    assert render_constant("F", ("const.f", 0)) is None  # float/double: the JDK's digits, not ours
    assert render_constant("D", ("const.d", 0)) is None
    assert render_constant("Z", ("const.i", 2)) is None  # not a boolean the JVM would make
    assert render_constant("C", ("const.i", 0x10000)) is None
    assert render_constant("I", ("const.l", 1)) is None  # wrong constant kind for the part


def test_append_and_valueof_agree_on_floats_and_doubles(oracle):
    checks = {k: v for k, v in oracle.items() if k.startswith(("append(F)", "append(D)"))}
    assert len(checks) == 25 and set(checks.values()) == {"true"}, checks


def test_concat_of_non_null_strings_is_the_builder(oracle):
    checks = {k: v for k, v in oracle.items() if k.startswith(("concat=builder", "valueOf(Object)String"))}
    assert len(checks) == 30 and set(checks.values()) == {"true"}, checks


def test_the_null_cases_the_model_relies_on(oracle):
    for k in ("valueOf(Object)null", "append(String)null", "append(Object)null", "append(CharSequence)null"):
        assert oracle[k] == _units("null"), k
    # the cases the rules exclude: each throws where the builder does not
    assert oracle["new(String)null"] == "NPE"
    assert oracle["concat(null)"] == "NPE" and oracle["null.concat"] == "NPE"
    assert oracle["append(Object with null toString)"] == _units("xnull")
    assert oracle["concat(valueOf(Object with null toString))"] == "NPE"
    assert oracle["append(char[])"] == _units("hi")
    assert oracle["valueOf((Object) char[]) is not its characters"] == "true"


def test_string_classes_are_initialized_before_any_application_class(java_home, oracle, tmp_path):
    # string-classinit-noop: classinit of these classes never runs code once the input's classes run
    (tmp_path / "M.java").write_text("public class M { public static void main(String[] a) { } }")
    run_javac([*javac_command(java_home), "-d", str(tmp_path), str(tmp_path / "M.java")], check=True)
    log = subprocess.run([str(java_home / "bin" / "java"), "-Xlog:class+init=info", "-cp", str(tmp_path), "M"],
                         check=True, capture_output=True, text=True, timeout=60).stdout
    order = [line.split("Initializing '")[1].split("'")[0] for line in log.splitlines() if "Initializing '" in line]
    assert "M" in order
    for cls in BOOT_CLASSES:
        assert cls in order[:order.index("M")], cls


def test_identity_is_what_the_assumption_is_about(oracle):
    assert oracle["concat(empty) is its receiver"] == "true"
    assert oracle["builder makes a new String"] == "true"


# -- validation ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", PROVED_WITH_ASSUMPTION)
def test_string_rewrite_is_proved_only_under_the_assumption(strict, assumed, name):
    assert strict[name].verdict is Verdict.UNKNOWN, strict[name].reason
    assert strict[name].assumptions is None  # no --assume: the report is as it always was
    row = assumed[name]
    assert row.verdict is Verdict.EQUIVALENT, row.reason
    assert row.assumptions == [STRINGS_BY_VALUE], row
    assert row.reason.endswith(f"relies on --assume {STRINGS_BY_VALUE}"), row.reason
    assert any(a.startswith(("string-", "builder-tostring")) for a in row.axioms), row.axioms


@pytest.mark.parametrize("name", PROVED_WITH_ASSUMPTION)
def test_a_strict_unknown_names_the_assumption_that_proves_it(strict, name):
    assert strict[name].verdict is Verdict.UNKNOWN
    assert f"proved under --assume {STRINGS_BY_VALUE}" in strict[name].reason, strict[name].reason


@pytest.mark.parametrize("name", MUTANTS)
def test_mutants_are_never_proved(strict, assumed, name):
    assert strict[name].verdict is not Verdict.EQUIVALENT, strict[name].reason
    assert assumed[name].verdict is not Verdict.EQUIVALENT, assumed[name].reason
    assert "proved under" not in strict[name].reason, strict[name].reason


@pytest.mark.parametrize("name", CONFIRMED)
def test_mutants_differ_on_the_jvm(assumed, name):
    assert assumed[name].verdict is Verdict.NOT_EQUIVALENT, assumed[name].reason


def test_a_builder_used_after_its_to_string_is_not_a_value(trees):
    # later(): b.toString() and then b.append(x): the first toString() is not the builder's last use, so the heap
    # after it still holds a live builder; only the chain's own end may be modelled
    from peggy_jvm.classfile.reader import read_class
    from peggy_jvm.classfile.hierarchy import ClassHierarchy
    from peggy_jvm.egraph import Runner
    from peggy_jvm.epeg import EPeg
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.peg.build import build_peg
    from peggy_jvm.rules.strings import BuilderAppendReturnsThis, BuilderToStringValue, _dead_after

    cf = read_class((trees["orig"] / "S.class").read_bytes())
    graphs = {}
    for m in cf.methods:
        if m.name in ("later", "label"):
            eg = EPeg()
            eg.add_peg(build_peg(lift_method(cf, m, ClassHierarchy([trees["orig"]]))))
            Runner([BuilderAppendReturnsThis()]).run(eg)  # one class for the builder and what append returns
            graphs[m.name] = eg
    rule = BuilderToStringValue()
    assert rule.search(graphs["later"], 100, float("inf"))[0] == []
    assert len(rule.search(graphs["label"], 100, float("inf"))[0]) == 1
    eg = graphs["later"]
    to_strings = [(cid, n) for cid in eg.classes_with_op("invoke.virtual") for n in eg.nodes(cid)
                  if n[0] == "invoke.virtual" and n[1].name == "toString"]
    assert len(to_strings) == 2
    verdicts = sorted(_dead_after(eg, cid, n[2][1]) for cid, n in to_strings)
    assert verdicts == [False, True]  # the first is followed by an append, the last is not


def test_a_pair_the_strict_rules_prove_is_not_marked(strict, assumed):
    # new StringBuilder("n=") for new StringBuilder().append("n="): builder-init-append, no assumption needed
    assert strict["strict"].verdict is Verdict.EQUIVALENT and assumed["strict"].verdict is Verdict.EQUIVALENT
    assert assumed["strict"].assumptions == [] and "relies on" not in assumed["strict"].reason
    assert not any(a.startswith(("string-", "builder-tostring")) for a in assumed["strict"].axioms)


def test_unknown_assumption_is_refused():
    with pytest.raises(KeyError, match="no assumption named"):
        assumption_rules(["strings-by-identity"])
    assert STRINGS_BY_VALUE in ASSUMPTIONS


def test_assumption_rules_are_not_in_the_default_rule_set():
    names = set(default_rules().names())
    assert not names & {r.name for r in assumption_rules([STRINGS_BY_VALUE])}
    assert not any(r.group.startswith("assume") for r in default_rules().rewrites)


def test_cli_assume_reports_what_relied_on_it(trees, tmp_path):
    js = tmp_path / "r.json"
    xml = tmp_path / "r.xml"
    result = CliRunner().invoke(main, ["validate", str(trees["orig"]), str(trees["opt"]), "--assume",
                                       STRINGS_BY_VALUE, "--json", str(js), "--junit", str(xml),
                                       "--method-timeout", "8"])
    assert result.exit_code == 1, result.output  # the mutants
    doc = json.loads(js.read_text())
    assert doc["assumptions"] == [STRINGS_BY_VALUE]
    rows = {p["name"]: p for p in doc["pairs"]}
    assert rows["label"]["verdict"] == "equivalent" and rows["label"]["assumptions"] == [STRINGS_BY_VALUE]
    assert rows["strict"]["verdict"] == "equivalent" and rows["strict"]["assumptions"] == []
    assert "relying on --assume" in result.output
    assert f"relies on --assume {STRINGS_BY_VALUE}" in xml.read_text()
    plain = tmp_path / "p.json"
    result = CliRunner().invoke(main, ["validate", str(trees["orig"]), str(trees["opt"]), "--json", str(plain),
                                       "--method-timeout", "8"])
    doc = json.loads(plain.read_text())
    assert "assumptions" not in doc and all("assumptions" not in p for p in doc["pairs"])
    assert {p["name"]: p for p in doc["pairs"]}["label"]["verdict"] == "unknown"


def test_cli_unknown_assumption_is_a_usage_error(trees):
    result = CliRunner().invoke(main, ["validate", str(trees["orig"]), str(trees["opt"]), "--assume", "nothing"])
    assert result.exit_code == 2


def test_proguard_pairs_table_shows_strict_and_assumed_numbers(capsys):
    from support import proguard as pp

    pp.print_table([pp.Row("lib", methods=100, changed=10, equivalent=5, unknown=5)], 0)  # the default, as before
    strict_only = capsys.readouterr().out
    assert "+assumed" not in strict_only and "assuming" not in strict_only
    assert strict_only.splitlines()[-1].split()[:7] == ["lib", "100", "10", "5", "0", "5", "50.0%"]
    row = pp.Row("lib", methods=100, changed=10, equivalent=8, unknown=2, assumed=3)
    pp.print_table([row], 0, (STRINGS_BY_VALUE,))
    both = capsys.readouterr().out
    assert f"assuming: {STRINGS_BY_VALUE}" in both
    line = both.splitlines()[-1].split()
    assert line[:7] == ["lib", "100", "10", "5", "0", "2", "50.0%"] and line[7:9] == ["3", "80.0%"], line
