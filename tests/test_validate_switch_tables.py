"""A ``switch`` on an enum compiled by javac (a ``$SwitchMap`` field of a synthetic class ``Pick$1``, case numbers
in the order the switches name the constants) and by ecj (a synthetic ``$SWITCH_TABLE`` method, numbers by
ordinal), proved the same by reading both as a switch on which named constant the value is
(validate/switchtables.py; issue 17 item 7, commons-lang3's ``DurationUtils.toChronoUnit``); mutants that change
which constant selects which case, and a hand-made "table" that is not what a compiler builds, are not proved."""
from __future__ import annotations

from pathlib import Path

import pytest
from support import ecjpair

from peggy_jvm.classfile.model import Access
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.classfile.writer import write_class
from peggy_jvm.validate import ValidateOptions, validate_inputs
from peggy_jvm.validate.pairing import load_side
from peggy_jvm.validate.replay import REASON as REPLAYED
from peggy_jvm.validate.switchtables import find_tables
from conftest import JAVAC_JVM_FLAGS, javac_command
from support.javac_cache import run_javac

# cases named out of ordinal order, so javac's numbers (BLUE 1, RED 2) are not ecj's (RED 1, GREEN 2, BLUE 3);
# `two` switches twice on one enum with other constants, `unit` on a JDK enum (the commons-lang3 shape)
SRC = """
import java.util.concurrent.TimeUnit;
enum Color { RED, GREEN, BLUE }
public class Pick {
    static int one(Color c) { switch (c) { case BLUE: return 1; case RED: return 2; default: return 3; } }
    static int two(Color c, Color d) {
        int r;
        switch (c) { case GREEN: r = 10; break; case BLUE: r = 20; break; default: r = 30; }
        switch (d) { case RED: return r + 1; case GREEN: return r + 2; default: return r; }
    }
    static String unit(TimeUnit u) {
        switch (u) { case SECONDS: return "s"; case MILLISECONDS: return "ms"; default: throw new IllegalArgumentException(); }
    }
}
"""
MUTANTS = {
    "one": ("case BLUE: return 1; case RED: return 2;", "case BLUE: return 2; case RED: return 1;"),  # swapped
    "two": ("case RED: return r + 1;", "case BLUE: return r + 1;"),  # another constant selects the case
    "unit": ("case SECONDS: return \"s\";", "case MINUTES: return \"s\";"),
}


@pytest.fixture(scope="module")
def compilers(java_home) -> dict[str, list[str]]:
    ecj, _src = ecjpair.fetch_inputs()
    return {"javac": [*javac_command(java_home), "--release", "11"],
            "ecj": [str(java_home / "bin" / "java"), *(f.removeprefix("-J") for f in JAVAC_JVM_FLAGS), "-cp", str(ecj),
                    ecjpair.ECJ_MAIN, "-proc:none", "--release", "11"]}


def _compile(compilers, which: str, src: str, out: Path) -> Path:
    (out.parent / f"{out.name}-src").mkdir()
    (out.parent / f"{out.name}-src" / "Pick.java").write_text(src)
    run_javac([*compilers[which], "-d", str(out), str(out.parent / f"{out.name}-src" / "Pick.java")], check=True,
              capture_output=True)
    return out


@pytest.fixture(scope="module")
def built(compilers, tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("switch-tables")
    out = {which: _compile(compilers, which, SRC, base / which) for which in ("javac", "ecj")}
    for name, (old, new) in MUTANTS.items():
        assert old in SRC
        out[name] = _compile(compilers, "ecj", SRC.replace(old, new), base / name)
    return out


def _verdicts(orig: Path, opt: Path) -> dict[str, str]:
    rep = validate_inputs(orig, opt, ValidateOptions(method_timeout=8.0))
    return {p.name: p.verdict.value for p in rep.pairs if p.class_name == "Pick"}


def test_both_compilers_tables_are_found(built):
    tables = {}
    for which in ("javac", "ecj"):
        side = load_side(built[which])
        tables[which] = {ref[0]: t for ref, t in find_tables(side.classes, side.hierarchy).items()
                         if t.enum == "Color"}
    # javac numbers the constants as the class's switches name them, ecj by ordinal: the tables differ
    assert dict(tables["javac"]["field"].numbers) == {"BLUE": 1, "RED": 2, "GREEN": 3}
    assert dict(tables["ecj"]["method"].numbers) == {"RED": 1, "GREEN": 2, "BLUE": 3}


def test_switch_on_an_enum_by_javac_and_ecj(built):
    # either way round: javac's map as ORIG and as OPT
    assert _verdicts(built["javac"], built["ecj"]) == {"<init>": "equivalent", "one": "equivalent",
                                                     "two": "equivalent", "unit": "equivalent"}
    assert _verdicts(built["ecj"], built["javac"])["two"] == "equivalent"


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_another_constant_to_case_map_is_not_proved(built, name):
    got = _verdicts(built["javac"], built[name])
    assert got[name] != "equivalent", got
    assert all(v == "equivalent" for k, v in got.items() if k != name), got


# ecj's table method written by hand (a cached table filled entry by entry, each guarded against a constant that is
# gone), flagged synthetic as a compiler's would be; `extra` is one more store, outside the guarded entries
HAND = """
enum Color { RED, GREEN, BLUE }
public class Pick {
    private static volatile int[] cache;
    static int[] tab() {
        int[] c = cache;
        if (c != null) return c;
        int[] t = new int[Color.values().length];
        try { t[Color.BLUE.ordinal()] = 1; } catch (NoSuchFieldError e) { }
        try { t[Color.RED.ordinal()] = 2; } catch (NoSuchFieldError e) { }
        EXTRA
        cache = t;
        return t;
    }
    static int one(Color c) { switch (tab()[c.ordinal()]) { case 1: return 1; case 2: return 2; default: return 3; } }
}
"""


@pytest.mark.parametrize("extra", ["", "t[0] = 1;"])
def test_a_table_built_otherwise_is_not_read(compilers, tmp_path, built, extra):
    opt = _hand(compilers, HAND.replace("EXTRA", extra), tmp_path / "hand")
    side = load_side(opt)
    found = {ref[2]: t for ref, t in find_tables(side.classes, side.hierarchy).items()}
    got = _verdicts(built["javac"], opt)["one"]
    if extra:  # RED's ordinal is 0: t[0] = 1 sends RED to BLUE's case
        assert "tab" not in found and got != "equivalent", (found, got)
    else:  # the hand-made one is what ecj builds: read, and proved
        assert dict(found["tab"].numbers) == {"BLUE": 1, "RED": 2} and got == "equivalent", (found, got)


def test_a_table_found_on_one_side_of_two_alike_is_read_as_before(compilers, tmp_path, built):
    # javac against javac: both read Pick$1's field; on OPT's side Pick$1 is no longer flagged synthetic (as if a
    # tool had rewritten it), so its table is not found. Neither side is rewritten, and `one` (another body of the
    # same meaning) is proved through the two same reads, as it was before tables were read at all
    opt = _compile(compilers, "javac", SRC.replace("static int one(Color c) { switch",
                                                   "static int one(Color c) { int three = 3; switch").replace(
        "case RED: return 2; default: return 3;", "case RED: return 2; default: return three;"), tmp_path / "other")
    cls = opt / "Pick$1.class"
    cf = read_class(cls.read_bytes())
    cf.access &= ~Access.SYNTHETIC
    cls.write_bytes(write_class(cf))
    side = load_side(opt)
    assert not any(t.enum == "Color" for t in find_tables(side.classes, side.hierarchy).values())
    assert _verdicts(built["javac"], opt)["one"] == "equivalent"


# two hand-made tables (as in HAND) listing an alias of BLUE (FAV, a static field of the enum's type that is no
# constant) in another order: BLUE's ordinal gets the number written last, FAV's on one side and BLUE's on the
# other, so BLUE's case is 20 on one side and 10 on the other; read as constants, FAV and BLUE would be two
ALIAS = """
enum Color { RED, GREEN, BLUE; static final Color FAV = BLUE; }
public class Pick {
    private static volatile int[] cache;
    static int[] tab() {
        int[] c = cache;
        if (c != null) return c;
        int[] t = new int[Color.values().length];
        try { t[Color.RED.ordinal()] = 1; } catch (NoSuchFieldError e) { }
        try { t[Color.FIRST.ordinal()] = 2; } catch (NoSuchFieldError e) { }
        try { t[Color.LAST.ordinal()] = 3; } catch (NoSuchFieldError e) { }
        cache = t;
        return t;
    }
    static int one(Color c) { switch (tab()[c.ordinal()]) { case 2: return FIRST_CASE; case 3: return LAST_CASE; default: return 0; } }
}
"""


def test_an_alias_of_a_constant_is_no_constant(compilers, tmp_path):
    trees = []
    for name, (first, last, first_case, last_case) in {"orig": ("FAV", "BLUE", "10", "20"),
                                                       "opt": ("BLUE", "FAV", "20", "10")}.items():
        src = ALIAS.replace("FIRST_CASE", first_case).replace("LAST_CASE", last_case).replace(
            "Color.FIRST", f"Color.{first}").replace("Color.LAST", f"Color.{last}")
        tree = _hand(compilers, src, tmp_path / name)
        side = load_side(tree)
        assert not find_tables(side.classes, side.hierarchy)  # FAV is no constant of Color
        trees.append(tree)
    assert _verdicts(*trees)["one"] != "equivalent"


# the optimizer's rewrite of a switch on a table (commons-math3's BinomialTest.binomialTest, on javac's map): the
# switch made into a chain of tests of the table's value; swapped: the chain with two cases exchanged
CHAINS = {"same": "int k = tab()[c.ordinal()]; if (k == 1) return 1; if (k == 2) return 2; return 3;",
          "swapped": "int k = tab()[c.ordinal()]; if (k == 1) return 2; if (k == 2) return 1; return 3;"}


def _hand(compilers, src: str, out: Path) -> Path:
    """HAND-like source compiled by javac, its ``tab`` flagged synthetic (ecj's table method)."""
    tree = _compile(compilers, "javac", src, out)
    cls = tree / "Pick.class"
    cf = read_class(cls.read_bytes())
    for m in cf.methods:
        if m.name == "tab":
            m.access |= Access.SYNTHETIC
    cls.write_bytes(write_class(cf))
    return tree


def test_a_switch_made_into_tests_on_one_side_is_read_as_before(compilers, tmp_path):
    # both sides' table is found, ORIG's switch is one site and OPT has none: neither is rewritten, and the two
    # reads of the same table meet (before, ORIG's read alone became the canonical one: unknown)
    plain = HAND.replace("EXTRA", "")
    switch = "switch (tab()[c.ordinal()]) { case 1: return 1; case 2: return 2; default: return 3; }"
    assert switch in plain
    orig = _hand(compilers, plain, tmp_path / "orig")
    side = load_side(orig)
    assert any(ref[2] == "tab" for ref in find_tables(side.classes, side.hierarchy))
    got = {}
    for name, chain in CHAINS.items():
        rep = validate_inputs(orig, _hand(compilers, plain.replace(switch, chain), tmp_path / name),
                              ValidateOptions(method_timeout=8.0))
        got[name] = next(p for p in rep.pairs if p.name == "one")
    # by the pair's own proof (validate/replay.py's saturation of ORIG alone, which reads no table, also proves
    # this small one: not commons-math3's)
    assert got["same"].verdict.value == "equivalent" and not got["same"].reason.startswith(REPLAYED), \
        got["same"].reason
    assert got["swapped"].verdict.value != "equivalent", got["swapped"].reason
