"""String concatenation by ``invokedynamic`` (``makeConcatWithConstants``, javac --release 9+) against a
``StringBuilder`` chain (javac --release 8, and ecj at every level, whose ``x + ...`` starts with
``new StringBuilder(String.valueOf(x))``): the same fresh String by JLS 15.18.1, proved by the strict rules
``concat-indy-fresh`` and ``builder-tostring-fresh`` (rules/strings.py) without ``--assume``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from peggy_jvm.validate import ValidateOptions, validate_inputs
from conftest import javac_command
from support.javac_cache import run_javac

SOURCE = """
public class Cat {
    static String all(int a, String s, char c, long l, boolean z, double d, float f) {
        return "x" + a + s + c + l + z + d + f + "y";
    }
    static String first(String s) { return s + "!"; }
    static String firstInt(int i) { return i + "?" + i; }
    static String small(byte b, short sh, char c) { return "b" + b + sh + c + 'q'; }
    static String twice(String a, int n) { String t = a + n; return t + "/" + t; }
    static String obj(Object o) { return "o" + o; }
    static String pair(int a, String s) { return "x" + a + s; }
    static int calls;
    static int f() { return calls += 1; }
    static int g() { return calls *= 3; }
    // operands computed by effects between two appends (a field, an array's length, calls)
    static String effects(int i, int[] a) { return "Index: " + i + ", Length: " + a.length + " " + f() + g(); }
    // fields of this read between appends (reads of this that no longer change the heap), objects among them
    Object min, max; int n;
    // a literal longer than the normal form's 64 parts: the recipe's text is one part, not one per character
    // elements of a String[] (String.split's result): ecj's new StringBuilder(String.valueOf(parts[0]))
    static String joined(String v) { String[] parts = v.split(","); return parts[0] + '.' + parts[1]; }
    static String longText(int v) { return "Supplied value must be a valid byte literal between -128 and 127: [" + v + "]"; }
    String show() { return "[" + min + ".." + max + "]" + n; }
}
"""
SWAPPED = SOURCE.replace('return "x" + a + s; }', 'return "x" + s + a; }').replace(
    'a.length + " " + f() + g(); }', 'a.length + " " + g() + f(); }')
# an ecj-shaped builder: the first operand through String.valueOf into the constructor, char appended as char
ECJ_SHAPED = SOURCE.replace('static String first(String s) { return s + "!"; }',
                            'static String first(String s) { return new StringBuilder(String.valueOf(s))'
                            '.append("!").toString(); }').replace(
    "return parts[0] + '.' + parts[1]; }",
    "return new StringBuilder(String.valueOf(parts[0])).append('.').append(parts[1]).toString(); }")


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("concat")
    out = {}
    for name, src, release in (("indy", SOURCE, "11"), ("builder", SOURCE, "8"), ("swapped", SWAPPED, "8"),
                               ("ecj", ECJ_SHAPED, "8")):
        (base / f"{name}-src").mkdir()
        (base / f"{name}-src" / "Cat.java").write_text(src)
        out[name] = base / name
        run_javac([*javac_command(java_home), "--release", release, "-d", str(out[name]),
                        str(base / f"{name}-src" / "Cat.java")], check=True, capture_output=True)
    return out


def _rows(orig: Path, opt: Path, rules: list | None = None):
    rep = validate_inputs(orig, opt, ValidateOptions(method_timeout=8.0, explain=True, rules=rules))
    return {p.name: p for p in rep.pairs}


def test_indy_concat_is_the_builder_chain(trees):
    rows = _rows(trees["indy"], trees["builder"])
    # obj: javac passes an Object operand through String.valueOf(o) before the indy call, in operand order, and
    # append(Object) is append(String.valueOf(o)) by its specification
    for name in ("all", "first", "firstInt", "small", "twice", "pair", "obj", "effects", "show", "longText"):
        assert rows[name].verdict.value == "equivalent", (name, rows[name].reason)
        assert {"concat-indy-fresh", "builder-tostring-fresh"} & set(rows[name].axioms or ()), rows[name].axioms


def test_without_the_fresh_rules_nothing_is_proved(trees):
    from peggy_jvm.rules import default_rules
    rules = [r for r in default_rules().active() if r.name not in ("concat-indy-fresh", "builder-tostring-fresh")]
    rows = _rows(trees["indy"], trees["builder"], rules)
    assert all(rows[n].verdict.value != "equivalent" for n in ("all", "first", "pair")), \
        {n: r.verdict.value for n, r in rows.items()}


def test_ecj_shaped_builder_is_the_indy_concat(trees):
    rows = _rows(trees["indy"], trees["ecj"])
    for name in ("first", "joined"):
        assert rows[name].verdict.value == "equivalent", (name, rows[name].reason)


def test_swapped_operands_are_not_proved(trees):
    rows = _rows(trees["indy"], trees["swapped"])
    assert rows["pair"].verdict.value == "not-equivalent", rows["pair"].reason
    # the two calls made in the other order: calls is 3 then 4 against 1 then 3
    assert rows["effects"].verdict.value == "not-equivalent", rows["effects"].reason
    assert rows["all"].verdict.value == "equivalent"
