"""Static fields in validation and in the PEG: what ProGuard does to them (a read right after a write of the same
field replaced by the value written, a second read of a field replaced by the first, a dead read of the class's
own field dropped) is proved; every near miss, where a read could run another class's <clinit> or see another
value, is never called equivalent. The PEG itself drops exactly the dead reads that cannot initialize anything,
which is what lets the optimizer remove them.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import compile_versions, validate_rows

from peggy_jvm.classfile.reader import read_class
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.peg.build import build_peg
from peggy_jvm.validate import Verdict

COMMON = r"""
class Other {
    static Object G = make();
    static Object make() { System.out.println("Other initialized"); return new Object(); }
    static void run() { S.F = "changed"; }
}
interface I { Object K = Other.make(); }
"""

ORIG = r"""
public class S implements I {
    static Object F = new Object();
    static Object G2;
    static byte B;
    static boolean Z;
    Object inst;
    static Object use(Object a, Object b) { return a; }
    static Object putGet(Object x) { F = x; return use(F, F); }
    static int narrow(int x) { B = (byte) x; return B; }
    static Object twice() { return use(F, F); }
    static int dead(int x) { Object o = F; return x + 1; }
    // near misses: NOT equivalent to their OPT versions
    static int other(int x) { Object o = Other.G; return x + 1; }
    static int inherited(int x) { Object o = S.K; return x + 1; }
    int instance(int x) { Object o = F; return x + 1; }
    static Object overCall(Object x) { F = x; Other.run(); return F; }
    static Object overOther(Object x) { F = x; Object o = Other.G; return F; }
    static Object twiceOverCall() { Object a = F; Other.run(); return use(a, F); }
    static int narrowWrong(int x) { Z = (x & 2) != 0; return Z ? 1 : 0; }
}
"""

OPT = r"""
public class S implements I {
    static Object F = new Object();
    static Object G2;
    static byte B;
    static boolean Z;
    Object inst;
    static Object use(Object a, Object b) { return a; }
    static Object putGet(Object x) { F = x; return use(x, x); }
    static int narrow(int x) { B = (byte) x; return (byte) x; }
    static Object twice() { Object f = F; return use(f, f); }
    static int dead(int x) { return x + 1; }
    static int other(int x) { return x + 1; }
    static int inherited(int x) { return x + 1; }
    int instance(int x) { return x + 1; }
    static Object overCall(Object x) { F = x; Other.run(); return x; }
    static Object overOther(Object x) { F = x; Object o = Other.G; return x; }
    static Object twiceOverCall() { Object a = F; Other.run(); return use(a, a); }
    static int narrowWrong(int x) { Z = (x & 2) != 0; return x & 2; }
}
"""

PROVED = ["putGet", "narrow", "twice", "dead"]
NEAR_MISSES = ["other", "inherited", "instance", "overCall", "overOther", "twiceOverCall", "narrowWrong"]


@pytest.fixture(scope="module")
def trees(java_home: Path, tmp_path_factory) -> dict[str, Path]:
    return compile_versions(java_home, tmp_path_factory.mktemp("statics"), "S.java",
                            {"orig": ORIG + COMMON, "opt": OPT + COMMON})


@pytest.fixture(scope="module")
def report(trees):
    return validate_rows(trees, "S", explain=True)


@pytest.mark.parametrize("name", PROVED)
def test_static_field_rewrites_are_proved(report, name):
    assert report[name].verdict is Verdict.EQUIVALENT, report[name].reason


@pytest.mark.parametrize("name", NEAR_MISSES)
def test_static_near_misses_are_never_equivalent(report, name):
    assert report[name].verdict is not Verdict.EQUIVALENT, report[name].reason


def test_a_read_of_another_class_is_confirmed_different_on_the_jvm(report):
    # Other's <clinit> prints: the JVM shows the difference the dropped read makes
    row = report["other"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason


def _getstatics(tree: Path, name: str) -> list[str]:
    cf = read_class((tree / "S.class").read_bytes())
    m = next(m for m in cf.methods if m.name == name)
    peg = build_peg(lift_method(cf, m, None))
    return [str(n.attr) for n in peg.nodes if n.op == "getstatic"]


def test_the_peg_drops_only_dead_reads_that_cannot_initialize_a_class(trees):
    assert _getstatics(trees["orig"], "dead") == []  # own static field, static method: a plain dead read
    assert _getstatics(trees["orig"], "other") == ["Other.G:Ljava/lang/Object;"]  # may run Other.<clinit>
    assert _getstatics(trees["orig"], "inherited") == ["S.K:Ljava/lang/Object;"]  # I.K: I is not initialized
    assert _getstatics(trees["orig"], "instance") == ["S.F:Ljava/lang/Object;"]  # no promise in an instance method
    assert _getstatics(trees["orig"], "twice") == ["S.F:Ljava/lang/Object;"] * 2  # used reads stay where they are
