"""Modular validation across ``--map`` (issue 17 items 1 and 4): ORIG's references renamed to OPT's before the
PEGs meet; a call to the input's own method is one operator on both sides only once that method's pair is proved
(callees first); recursive and mutually recursive pairs by the regression-verification rule; a callee that is not
proved is never assumed; a side that keeps running where the other returns is shown on the JVM.
"""
from __future__ import annotations

import pytest
from conftest import compile_old_new, compile_versions, validate_rows

from peggy_jvm.validate import Verdict
from peggy_jvm.validate import modular

ORIG = """public class Old {
    int base;
    static int helper(int x) { return x * 2 + 1; }
    public static int entry(int x) { return helper(x) + helper(x + 1); }
    static int bad(int x) { return x + 1; }
    static int twice(int x) { return x + x; }
    static int swapped(int x) { if (x % 15 == 0) return 3; if (x % 3 == 0) return 1; return x % 5 == 0 ? 2 : 0; }
    public static int callsSwapped(int x) { return swapped(x) * 2; }
    public static int callsBad(int x) { return bad(x) * 3; }
    static Old make(int b) { Old o = new Old(); o.base = b; return o; }
    static Object[] array(int n) { return new Old[n]; }
    static Object literal() { return Old.class; }
    static boolean isSelf(Object o) { return o instanceof Old; }
    static Old cast(Object o) { return (Old) o; }
    int plus(int x) { return helper(x) + base; }
    Old rebase(int b) { base = b + 1; return this; }
    static int viaObject(int b, int x) { return make(b).plus(x); }
    static int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
    static boolean isEven(int n) { return n == 0 ? true : isOdd(n - 1); }
    static boolean isOdd(int n) { return n == 0 ? false : isEven(n - 1); }
    static int sum(int n) { return n <= 0 ? 0 : n + sum(n - 1); }
    static int halve(int n) { int k = 0; while (n > 0) { n -= 2; k++; } return k; }
    static int square(int v) { return v * v; }
    public static int norm(int a, int b) { return square(a) + square(b); }
}
"""
OPT = """public class New {
    int base;
    static int helper(int x) { return 1 + (x << 1); }
    public static int entry(int x) { return helper(x) + helper(x + 1); }
    static int bad(int x) { return x + 2; }
    static int twice(int x) { return 2 * x; }
    static int swapped(int x) { int r = 0; if (x % 3 == 0) r += 1; if (x % 5 == 0) r += 2; return r; }
    public static int callsSwapped(int x) { return swapped(x) * 2; }
    public static int callsBad(int x) { return bad(x) * 3; }
    static New make(int b) { New o = new New(); o.base = b; return o; }
    static Object[] array(int n) { return new New[n]; }
    static Object literal() { return New.class; }
    static boolean isSelf(Object o) { return o instanceof New; }
    static New cast(Object o) { return (New) o; }
    int plus(int x) { int h = helper(x); return h + base; }
    New rebase(int b) { base = b - 1; return this; }
    static int viaObject(int b, int x) { return make(b).plus(x); }
    static int fact(int n) { if (n > 1) return fact(n - 1) * n; return 1; }
    static int fib(int n) { if (n < 2) return n; int a = fib(n - 1); return a + fib(n - 2); }
    static boolean isEven(int n) { if (n != 0) return isOdd(n - 1); return true; }
    static boolean isOdd(int n) { if (n != 0) return isEven(n - 1); return false; }
    static int sum(int n) { return n <= 0 ? 0 : n + sum(n - 2); }
    static int halve(int n) { int k = 0; while (n != 0) { n -= 2; k++; } return k; }
    public static int norm(int a, int b) { return a * a + b * b; }
}
"""


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    base = tmp_path_factory.mktemp("modular")
    return compile_old_new(java_home, base, ORIG, OPT)


@pytest.fixture(scope="module")
def rows(trees):
    return validate_rows(trees, "Old", class_map={"Old": "New"})


# every kind of reference renamed by --map: calls, new, fields, arrays, class literals, instanceof, checkcast,
# descriptors; then recursion
PROVED = ["helper", "entry", "make", "array", "literal", "isSelf", "cast", "plus", "viaObject",
          "fact", "fib", "isEven", "isOdd", "norm"]
# norm: ORIG's own helper square (no partner: OPT inlined it by hand) is inlined from ORIG's class although
# --map names its call New.square


@pytest.mark.parametrize("name", PROVED)
def test_pairs_through_the_map_and_their_callers_are_proved(rows, name):
    assert rows[name].verdict is Verdict.EQUIVALENT, rows[name].reason


@pytest.mark.parametrize("name", ["fact", "fib", "isEven", "isOdd"])
def test_recursive_pairs_say_what_is_proved(rows, name):
    assert "partial equivalence" in rows[name].reason, rows[name].reason


@pytest.mark.parametrize("name, args, orig, opt", [("bad", ["0"], "returns 1", "returns 2"),
                                                    ("callsBad", ["0"], "returns 3", "returns 6"),
                                                    ("sum", ["2"], "returns 3", "returns 2")])
def test_mutants_and_callers_of_mutants_are_shown_with_an_input(rows, name, args, orig, opt):
    row = rows[name]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample == {"args": args, "orig": orig, "opt": opt}, row.counterexample


def test_a_method_whose_descriptor_names_a_mapped_class_is_run_on_both_sides(rows):
    # rebase(I)LOld; pairs with rebase(I)LNew;, and the harness finds OPT's by OPT's descriptor
    row = rows["rebase"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["orig"] == "returns Oself, this after: {base=1}", row.counterexample
    assert row.counterexample["opt"] == "returns Oself, this after: {base=-1}", row.counterexample


def test_a_loop_that_runs_on_where_the_original_returns_is_not_equivalent(rows):
    row = rows["halve"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert "OPT was still running after" in row.reason and "where ORIG finished in" in row.reason, row.reason
    assert row.counterexample["orig"].startswith("returns "), row.counterexample
    assert row.counterexample["opt"].startswith("still running after "), row.counterexample


def test_unproved_callees_are_never_assumed(trees, monkeypatch):
    # without the screen, callsBad's only obstacle is its callee: once bad's pair is taken as proved (the
    # assumption this rule forbids), callsBad is proved too, so the rule is what keeps it unknown
    rows = validate_rows(trees, "Old", class_map={"Old": "New"}, counterexamples=False)
    assert rows["callsBad"].verdict is Verdict.UNKNOWN
    # proved only once bad is taken as equivalent: still unknown, and the reason names the callee
    assert rows["callsBad"].reason == "not proved: equivalent if its callees are: Old.bad (not proved equivalent)"
    monkeypatch.setattr(modular.CallView, "_assumes", lambda self, ref, virtual: True)
    wrong = validate_rows(trees, "Old", class_map={"Old": "New"}, counterexamples=False)
    assert wrong["callsBad"].verdict is Verdict.EQUIVALENT, wrong["callsBad"].reason


def test_a_caller_waiting_for_a_callee_that_showed_no_difference_is_not_searched(rows):
    # swapped is FizzBuzz's classification written two ways (x % 15 == 0 is x % 3 == 0 and x % 5 == 0: number
    # theory no axiom has, so not proved), and no input shows a difference; its caller is proved given it, and not searched (the search of every such caller cost jsoup's
    # ProGuard output 14 times its time)
    assert rows["swapped"].verdict is Verdict.UNKNOWN, rows["swapped"].reason
    row = rows["callsSwapped"]
    assert row.verdict is Verdict.UNKNOWN, row.reason
    assert row.reason == ("not proved: equivalent if its callees are: Old.swapped (not proved equivalent); "
                          "not searched: no callee it waits for behaved differently in the interpreter"), row.reason


def test_a_failed_member_leaves_the_recursive_hypothesis(java_home, tmp_path):
    # a and b call each other; b is a mutant: a is proved only if b's equality was assumed, so neither is
    src = "public class {c} {{ static int a(int n) {{ return n <= 0 ? 0 : b(n - 1) + 1; }} " \
          "static int b(int n) {{ return n <= 0 ? {k} : a(n - 1) + 2; }} }}"
    trees = compile_versions(java_home, tmp_path, "M.java", {"orig": src.format(c="M", k=0),
                                                             "opt": src.format(c="M", k=1)})
    rows = validate_rows(trees, "M")
    assert rows["b"].verdict is Verdict.NOT_EQUIVALENT, rows["b"].reason
    assert rows["a"].verdict is not Verdict.EQUIVALENT, rows["a"].reason


def test_non_termination_needs_the_factor_and_the_floor():
    from peggy_jvm.validate.counterexample import HANG_FACTOR, HANG_FLOOR_MS, JvmOutcomes
    done = "R 1 ;args=;out="
    assert JvmOutcomes(done, "TIMEOUT", "SKIPPED", 0, 5, 2000).runs_on == "OPT"
    assert JvmOutcomes("TIMEOUT", "T java/lang/ArithmeticException ;args=", "SKIPPED", 0, 2000, 3).runs_on == "ORIG"
    slow = 2000 // HANG_FACTOR + 1  # the finished side took too long for 2 s to be evidence
    assert JvmOutcomes(done, "TIMEOUT", "SKIPPED", 0, slow, 2000).runs_on is None
    assert JvmOutcomes(done, "TIMEOUT", "SKIPPED", 0, 0, HANG_FLOOR_MS - 1).runs_on is None
    assert JvmOutcomes("TIMEOUT", "TIMEOUT", "SKIPPED", 0, 2000, 2000).runs_on is None
    assert JvmOutcomes("ERROR java/lang/VerifyError", "TIMEOUT", "SKIPPED", 0, 1, 2000).runs_on is None
    assert JvmOutcomes(done, "BUDGET", "SKIPPED", 0, 1, 2000).runs_on is None


def test_a_stack_overflow_on_one_side_is_explained():
    from peggy_jvm.validate.counterexample import why_different
    why = why_different(["I"], [100000], "R 5 ;args=", "T java/lang/StackOverflowError ;args=", "I")
    assert why.startswith("OPT overflows the stack where the other returns"), why


def test_a_constructor_chained_by_this_is_proved_against_one_written_out(java_home, tmp_path):
    # Old's C(int) runs this(a, 1); New writes the field itself; a mutant writes a + 1: the inlined constructor
    # body proves the first and the second is shown (rows keyed by descriptor: both constructors are <init>)
    src = "class {c} {{ int v; {c}(int a) {{ {body} }} {c}(int a, int b) {{ v = a * b; }} }}"
    trees = compile_versions(java_home, tmp_path, "C.java", {
        "orig": src.format(c="Old", body="this(a, 1);"), "opt": src.format(c="New", body="v = a;"),
        "wrong": src.format(c="New", body="v = a + 1;")})
    from peggy_jvm.validate import ValidateOptions, validate_inputs
    for side, want in (("opt", Verdict.EQUIVALENT), ("wrong", Verdict.NOT_EQUIVALENT)):
        rep = validate_inputs(trees["orig"], trees[side], ValidateOptions(method_timeout=8.0, class_map={"Old": "New"}))
        row = next(p for p in rep.pairs if p.name == "<init>" and p.descriptor == "(I)V")
        assert row.verdict is want, (side, row.reason)


def test_each_method_is_decoded_once_for_the_call_graph(trees, monkeypatch):
    # the proof order, each byte-identical pair's check of its calls (more than once) and each view's callees
    # all read a method's invoke instructions: decoding its code every time cost most of validating a jar
    # against itself (commons-math3: 9,379 pairs, decoded about five times each). The two sides' copies of a
    # byte-identical method are one code; a class without an invokedynamic constant has no lambda call site
    # for the pairing to decode.
    from peggy_jvm.validate import pairing
    seen: list[bytes] = []
    real = modular.decode

    def counting(code):
        seen.append(bytes(code))
        return real(code)

    monkeypatch.setattr(modular, "decode", counting)
    monkeypatch.setattr(pairing, "decode", lambda code: pytest.fail("pairing decoded a class without lambdas"))
    rows = validate_rows({"orig": trees["orig"], "opt": trees["orig"]}, "Old", counterexamples=False)
    assert rows and all(r.verdict is Verdict.EQUIVALENT for r in rows.values()), rows
    assert seen and len(seen) == len(set(seen)), f"{len(seen)} decodes of {len(set(seen))} codes"


def test_a_snapshot_of_the_proved_pairs_never_sees_later_ones():
    # a pair's view is taken before the pairs of its component are added: it must not assume them afterwards
    # (the view is read again for the pair's unproved callees and its counterexample search)
    proved = modular.Proved()
    a, b, c = ("A", "a", "()V"), ("A", "b", "()V"), ("A", "c", "()V")
    proved.add(a)
    snap = proved.snapshot({c})
    proved.add(b)
    proved.add(a)  # added again: still the first key added
    assert a in snap and c in snap and b not in snap
    assert list(proved) == [a, b] and b in proved.snapshot()
