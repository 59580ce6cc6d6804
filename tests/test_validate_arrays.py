"""An array's ``clone()`` against a new array filled by ``System.arraycopy`` (rules/arrays.py), also of a field
that only ever holds an array made for it (an enum with constant bodies: its class is not final); enums'
``values()`` by javac and ecj are in tests/test_validate_ecj_shapes.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from peggy_jvm.validate import ValidateOptions, validate_inputs
from conftest import javac_command
from support.javac_cache import run_javac

ORIG = """
public class Arr {
    static final class Fin { }
    static class Open { }
    static int[] ints(int[] a) { return a.clone(); }
    static Fin[] fins(Fin[] a) { return a.clone(); }
    static Open[] opens(Open[] a) { return a.clone(); }
    static long[][] rows(long[][] a) { return a.clone(); }
    static int[] shorter(int[] a) { return a.clone(); }
    static Object[] nulls() { return new Object[] {null}; }
    static boolean[] flags() { return new boolean[] {false, true}; }
    static boolean[] later() { return new boolean[] {true, false, true}; }
    static int[] five() { return new int[] {0, 5}; }
    static int[] again() { int[] a = new int[2]; a[0] = 7; a[0] = 0; return a; }
    static int[] outside() { int[] a = new int[1]; a[1] = 0; return a; }
}
"""
OPT = """
public class Arr {
    static final class Fin { }
    static class Open { }
    // the length read once, as ecj's values() does
    static int[] ints(int[] a) { int n = a.length; int[] b = new int[n]; System.arraycopy(a, 0, b, 0, n); return b; }
    static Fin[] fins(Fin[] a) { int n = a.length; Fin[] b = new Fin[n]; System.arraycopy(a, 0, b, 0, n); return b; }
    // an Open[] may hold a subclass's array: its clone is of that class, this copy is not
    static Open[] opens(Open[] a) { int n = a.length; Open[] b = new Open[n]; System.arraycopy(a, 0, b, 0, n); return b; }
    static long[][] rows(long[][] a) { int n = a.length; long[][] b = new long[n][]; System.arraycopy(a, 0, b, 0, n); return b; }
    static int[] shorter(int[] a) { int n = a.length; int[] b = new int[n]; System.arraycopy(a, 0, b, 0, n - 1); return b; }
    // the default values left out, as ecj does
    static Object[] nulls() { return new Object[1]; }
    static boolean[] flags() { boolean[] b = new boolean[2]; b[1] = true; return b; }
    static boolean[] later() { boolean[] b = new boolean[3]; b[0] = true; b[2] = true; return b; }
    static int[] five() { return new int[2]; }
    static int[] again() { int[] a = new int[2]; a[0] = 7; return a; }
    static int[] outside() { return new int[1]; }
}
"""


def _compile(cmd: list[str], src: str, name: str, base: Path, out: str) -> Path:
    (base / f"{out}-src").mkdir(exist_ok=True)
    (base / f"{out}-src" / name).write_text(src)
    run_javac([*cmd, "-d", str(base / out), str(base / f"{out}-src" / name)], check=True, capture_output=True)
    return base / out


def _rows(orig: Path, opt: Path):
    rep = validate_inputs(orig, opt, ValidateOptions(method_timeout=8.0, explain=True))
    return {p.name: p for p in rep.pairs}, rep.unpaired


def test_clone_is_a_copy_into_a_new_array_of_the_exact_class(java_home, tmp_path):
    javac = [*javac_command(java_home)]
    rows, _ = _rows(_compile(javac, ORIG, "Arr.java", tmp_path, "orig"), _compile(javac, OPT, "Arr.java", tmp_path, "opt"))
    for name in ("ints", "fins", "rows"):
        assert rows[name].verdict.value == "equivalent", (name, rows[name].reason)
        assert "array-clone-copy" in (rows[name].axioms or ()), rows[name].axioms
    assert rows["opens"].verdict.value == "unknown", rows["opens"].reason  # the class is not exact: not proved
    assert rows["shorter"].verdict.value == "not-equivalent", rows["shorter"].reason


def test_a_default_value_stored_into_a_new_array_changes_nothing(java_home, tmp_path):
    javac = [*javac_command(java_home)]
    rows, _ = _rows(_compile(javac, ORIG, "Arr.java", tmp_path, "orig"), _compile(javac, OPT, "Arr.java", tmp_path, "opt"))
    # later: javac's false at 1 comes after its true at 0, another index of the same new array
    for name in ("nulls", "flags", "later"):
        assert rows[name].verdict.value == "equivalent", (name, rows[name].reason)
        assert "array-store-default-new" in (rows[name].axioms or ()), rows[name].axioms
    assert rows["five"].verdict.value == "not-equivalent", rows["five"].reason  # 5 is no default
    assert rows["again"].verdict.value == "not-equivalent", rows["again"].reason  # 0 overwrites the 7 at 0
    assert rows["outside"].verdict.value == "not-equivalent", rows["outside"].reason  # index 1 of 1 throws


# a private static final field set once from a helper returning `new ELEM[] {null}`, as javac's enum $VALUES from
# $values(); all() clones it (javac's values()) or copies it into a new Holder[] (ecj's)
HOLDER = """
public abstract class Holder {{
    {decl} Holder[] ALL = make();
    private static Holder[] make() {{ return new {elem}[] {{ null }}; }}
    static final class Sub extends Holder {{ }}
    {extra}
    static Holder[] all() {{ {body} }}
}}
"""
CLONE = "return ALL.clone();"
COPY = "Holder[] a = ALL; int n = a.length; Holder[] c = new Holder[n]; System.arraycopy(a, 0, c, 0, n); return c;"


@pytest.mark.parametrize("case", ["exact", "a subclass's array", "not final"])
def test_clone_of_a_field_holding_arrays_of_its_exact_class(java_home, tmp_path, case):
    javac = [*javac_command(java_home)]
    decl, elem, extra = "private static final", "Holder", ""
    if case == "a subclass's array":
        elem = "Sub"  # ALL holds a Sub[]: its clone is a Sub[], the copy a Holder[]
    elif case == "not final":
        decl, extra = "private static", "static void set(Holder[] a) { ALL = a; }"  # any Holder[] may be stored
    trees = [_compile(javac, HOLDER.format(decl=decl, elem=elem, extra=extra, body=body), "Holder.java", tmp_path,
                      which) for which, body in (("orig", CLONE), ("opt", COPY))]
    rows, _ = _rows(*trees)
    if case == "exact":
        assert rows["all"].verdict.value == "equivalent", rows["all"].reason
        assert "array-clone-copy" in (rows["all"].axioms or ()), rows["all"].axioms
    else:
        assert rows["all"].verdict.value != "equivalent", rows["all"].reason
