"""What ecj compiles differently from javac, proved the same (issue 17 item 7), on small sources compiled by both
(ecj fetched like the corpus, tests/support/ecjpair.py): an enum's ``values()`` (javac ``$VALUES.clone()``, ecj
``System.arraycopy`` out of ``ENUM$VALUES``: the two fields pair as the enum's array of constants,
validate/pairing.py; the copy is rules/arrays.py's) and the null check of a method reference's receiver (javac
``Objects.requireNonNull``, ecj ``getClass()``: axioms/java-null-check.ax) and ``!=`` of two booleans (javac a
branch to ``0``/``1``, ecj ``ixor``: axioms/java-compilers.ax), and a concatenation with an operand read under an
operator between two appends (rules/strings.py ``_rebase``), and javac's bridge in a final nested subclass of a
``Comparable`` class, which ecj does not emit (the class inherits its superclass's bridge: validate/pairing.py pairs
the two, validate/modular.py reads javac's ``invokespecial`` as the ``invokevirtual`` it runs; javac as ORIG and as
OPT); the last four each with a mutant that must not be proved; and two switches (a tableswitch's holes against a
lookupswitch, a switch on a String as javac's two switches against ecj's one: validate/branchshape.py) and an
enum's ``<clinit>`` through javac's ``$values()`` helper (rules/inline.py's synthetic callees), with mutants."""
from __future__ import annotations

from pathlib import Path

import pytest
from support import ecjpair
from support import proguard as pp

from peggy_jvm.classfile.model import Access
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.classfile.writer import write_class
from peggy_jvm.validate import ValidateOptions, validate_inputs
from conftest import JAVAC_JVM_FLAGS, javac_command
from support.javac_cache import run_javac

# the slow tier: ecj's compiles and their proofs, 32 s of CPU in all (docs/ci.md, session 16), like test_ecj_pair.py
pytestmark = pytest.mark.slow

ENUM = "public enum Planet { MERCURY, VENUS, EARTH; static int count() { return values().length; } }"
REFS = """
import java.util.Objects;
import java.util.function.Supplier;
public class Refs {
    static Supplier<String> trimmer(String s) { return s::trim; }
    static int checked(String s) { Objects.requireNonNull(s); return 1; }
}
"""
BOOLS = """
public class Flags {
    boolean negated; static boolean on; char lo, hi;
    boolean differ() { return negated != on; }
    boolean same() { return negated == on; }
    boolean contains(char c) { return (c >= lo && c <= hi) != negated; }
}
"""
# ecj's chain starts with new StringBuilder(String.valueOf(String)) and appends spacer()'s builder as an Object, an
# operand read under an operator (this.spaces - 2) between two appends; javac calls String.valueOf(spacer(..))
# first (commons-lang3's MultilineRecursiveToStringStyle.resetIndent)
SPACER = """
public class Indent {
    int spaces; String end;
    StringBuilder spacer(int n) { StringBuilder sb = new StringBuilder(); for (int i = 0; i < n; i++) sb.append(' '); return sb; }
    void reset() { end = System.lineSeparator() + spacer(spaces - 2) + "}"; }
}
"""
# javac emits a bridge compareTo(Object) into Empty (invokespecial of Box.compareTo(Box)); ecj does not, so an
# Empty runs Box's own bridge (invokevirtual of compareTo(Box)); cmp's call may reach either
BRIDGE = """
public abstract class Box<T> implements Comparable<Box<T>> {
    private static final class Empty<T> extends Box<T> { @Override public T get() { return null; } }
    public abstract T get();
    @Override public int compareTo(Box<T> o) { return o == this ? 0 : 1; }
    public static <T> Box<T> empty() { return new Empty<>(); }
    static int cmp(Comparable<Object> a, Object b) { return a.compareTo(b); }
}
"""
# the mutant: Box's compareTo(Object) is a method of its own (returns 2), no bridge to compareTo(Box)
BRIDGE_MUTANT = BRIDGE.replace("Comparable<Box<T>>", "Comparable<Object>").replace(
    "@Override public int compareTo(Box<T> o) { return o == this ? 0 : 1; }",
    "@Override public int compareTo(Object o) { return o == this ? 0 : 2; }")
# the mutant: `!=` of ints that are not booleans is not `^` (2 != 0 is 1, 2 ^ 0 is 2)
INTS = "public class Flags {{ int a, b; int differ() {{ return {}; }} }}"


@pytest.fixture(scope="module")
def compilers(java_home) -> dict[str, list[str]]:
    ecj, _src = ecjpair.fetch_inputs()
    return {"javac": [*javac_command(java_home), "--release", "11"],
            # ecj's JVM as javac's (conftest.JAVAC_JVM_FLAGS): C1 and the serial collector
            "ecj": [str(java_home / "bin" / "java"), *(f.removeprefix("-J") for f in JAVAC_JVM_FLAGS), "-cp", str(ecj),
                    ecjpair.ECJ_MAIN, "-proc:none", "--release", "11"]}


def _build(compilers, src: str, name: str, base: Path) -> tuple[Path, Path]:
    (base / "src").mkdir()
    (base / "src" / name).write_text(src)
    out = []
    for which in ("javac", "ecj"):
        run_javac([*compilers[which], "-d", str(base / which), str(base / "src" / name)], check=True,
                  capture_output=True)
        out.append(base / which)
    return out[0], out[1]


def _compile(compilers, which: str, src: str, name: str, out: Path) -> Path:
    """``src`` (one file ``name``) compiled by ``which`` into ``out``, its source kept beside it."""
    (out.parent / f"{out.name}-src").mkdir()
    (out.parent / f"{out.name}-src" / name).write_text(src)
    run_javac([*compilers[which], "-d", str(out), str(out.parent / f"{out.name}-src" / name)], check=True,
              capture_output=True)
    return out


def _rows(orig: Path, opt: Path):
    rep = validate_inputs(orig, opt, ValidateOptions(method_timeout=8.0, explain=True))
    return {p.name: p for p in rep.pairs}, rep.unpaired


def _methods(orig: Path, opt: Path):
    """(class, method name + descriptor) -> row, and the unpaired list."""
    rep = validate_inputs(orig, opt, ValidateOptions(method_timeout=8.0))
    return {(p.class_name, p.name + p.descriptor): p for p in rep.pairs}, rep.unpaired


def _patch_access(path: Path, cls: int = 0, method: tuple[str, int] | None = None) -> None:
    """Clear access flags in a class file: ``cls`` of the class, ``method``'s (name + descriptor, flags)."""
    cf = read_class(path.read_bytes())
    cf.access &= ~cls
    for m in cf.methods:
        if method is not None and m.name + m.descriptor == method[0]:
            m.access &= ~method[1]
    path.write_bytes(write_class(cf))


def test_enum_values_by_javac_and_ecj(compilers, tmp_path):
    rows, unpaired = _rows(*_build(compilers, ENUM, "Planet.java", tmp_path))
    assert rows["values"].verdict.value == "equivalent", rows["values"].reason
    assert rows["count"].verdict.value == "equivalent", rows["count"].reason
    # $VALUES and ENUM$VALUES pair; javac's $values() helper has no partner
    assert unpaired == ["only in ORIG: method Planet.$values()[LPlanet;"], unpaired


def test_null_check_of_a_method_references_receiver(compilers, tmp_path):
    orig, opt = _build(compilers, REFS, "Refs.java", tmp_path)
    rows, _ = _rows(orig, opt)
    assert rows["trimmer"].verdict.value == "equivalent", rows["trimmer"].reason
    assert "requirenonnull-getclass" in (rows["trimmer"].axioms or ()), rows["trimmer"].axioms
    # the check is an effect: dropping it is a difference (null throws on one side only)
    nocheck = _compile(compilers, "javac", REFS.replace("Objects.requireNonNull(s); return 1;", "return 1;"),
                       "Refs.java", tmp_path / "nocheck")
    rows, _ = _rows(orig, nocheck)
    assert rows["checked"].verdict.value == "not-equivalent", rows["checked"].reason


def test_boolean_not_equal_is_xor(compilers, tmp_path):
    orig, opt = _build(compilers, BOOLS, "Flags.java", tmp_path)
    rows, _ = _rows(orig, opt)
    for name in ("differ", "same", "contains"):
        assert rows[name].verdict.value == "equivalent", (name, rows[name].reason)
    assert "bit-ne-xor" in (rows["contains"].axioms or ()), rows["contains"].axioms


def test_int_not_equal_is_not_xor(compilers, tmp_path):
    trees = [_compile(compilers, "javac", INTS.format(expr), "Flags.java", tmp_path / which)
             for which, expr in (("ne", "a != b ? 1 : 0"), ("xor", "a ^ b"))]
    rows, _ = _rows(*trees)
    assert rows["differ"].verdict.value == "not-equivalent", rows["differ"].reason


def test_concatenation_with_an_operand_read_under_an_operator(compilers, tmp_path):
    orig, opt = _build(compilers, SPACER, "Indent.java", tmp_path)
    rows, _ = _rows(orig, opt)
    assert rows["reset"].verdict.value == "equivalent", rows["reset"].reason
    assert "builder-tostring-fresh" in (rows["reset"].axioms or ()), rows["reset"].axioms
    # another operand (spaces - 1) is another string: not proved
    mutant = _compile(compilers, "ecj", SPACER.replace("spaces - 2", "spaces - 1"), "Indent.java", tmp_path / "m")
    rows, _ = _rows(orig, mutant)
    assert rows["reset"].verdict.value != "equivalent", rows["reset"].reason


# three concatenations commons-lang3 has where ecj's chain is not a straight line of builder operations: inside a
# loop (DiffBuilder.append: each iteration's builder is a new one, the walk for later uses must not go around the
# back edge), an operand computed in a branch between two appends (FastDatePrinter.format), and inside a try
# block (EventUtils.addEventListener: every builder operation is a branch to the handler unless it cannot throw)
CONCAT = """
import java.util.ArrayList;
import java.util.List;
public class Concat {
    static List<String> prefixed(String prefix, List<String> names) {
        List<String> out = new ArrayList<>();
        for (String n : names) out.add(prefix + "." + n.trim());
        return out;
    }
    static String describe(Object o) { return "Unknown class: " + (o == null ? "<null>" : o.getClass().getName()); }
    static Object lookup(Object target, Class<?> type) {
        try {
            return target.getClass().getMethod("add" + type.getSimpleName());
        } catch (NoSuchMethodException e) {
            return "none: " + type.getName();
        }
    }
}
"""
# one operand order, one branch's arms and one literal changed: other strings
CONCAT_MUTANTS = {"prefixed": ('prefix + "." + n.trim()', 'prefix + n.trim() + "."'),
                  "describe": ('o == null ? "<null>" : o.getClass().getName()',
                               'o != null ? "<null>" : o.getClass().getName()'),
                  "lookup": ('"add" + type', '"remove" + type')}
# near misses of those shapes that differ (ORIG, OPT): a builder that lives across the iterations (its toString()
# is the text so far, not this iteration's part), an object's toString() that may throw inside a try block, and
# new StringBuilder(s) of a String that may be null (throws NullPointerException) inside a try block
CONCAT_NEAR = ("""
import java.util.ArrayList;
import java.util.List;
public class Near {
    static List<String> acc(List<String> names) {
        List<String> out = new ArrayList<>();
        for (String n : names) out.add("" + n);
        return out;
    }
    static String show(Object o) { try { return "a" + o; } catch (RuntimeException e) { return "err"; } }
    static String wrap(String s) {
        try { return new StringBuilder(s).append('x').toString(); } catch (NullPointerException e) { return "!"; }
    }
}
""", """
import java.util.ArrayList;
import java.util.List;
public class Near {
    static List<String> acc(List<String> names) {
        List<String> out = new ArrayList<>();
        StringBuilder sb = new StringBuilder();
        for (String n : names) { sb.append(n); out.add(sb.toString()); }
        return out;
    }
    static String show(Object o) { return "a" + o; }
    static String wrap(String s) { return new StringBuilder(s).append('x').toString(); }
}
""")


def test_concatenations_in_a_loop_a_branch_and_a_try_block(compilers, tmp_path):
    orig, opt = _build(compilers, CONCAT, "Concat.java", tmp_path)
    rows, _ = _rows(orig, opt)
    for name in CONCAT_MUTANTS:
        assert rows[name].verdict.value == "equivalent", (name, rows[name].reason)
    # (the loop's proof lists only theta-bisimulation: the loops' bodies were merged inside it)
    for name in ("describe", "lookup"):
        assert "builder-tostring-fresh" in (rows[name].axioms or ()), (name, rows[name].axioms)
    assert "concat-nothrow" in (rows["lookup"].axioms or ()) or "phi-false" in rows["lookup"].axioms
    _assert_mutants_not_proved(compilers, orig, CONCAT, CONCAT_MUTANTS, "Concat.java", tmp_path)


def _assert_mutants_not_proved(compilers, orig: Path, src: str, mutants: dict[str, tuple[str, str]], name: str,
                               tmp_path: Path) -> None:
    """``src`` with every mutant's text replaced, compiled by ecj: none of the mutated methods is proved."""
    for old, new in mutants.values():
        assert old in src
        src = src.replace(old, new)
    rows, _ = _rows(orig, _compile(compilers, "ecj", src, name, tmp_path / "mutant"))
    for method in mutants:
        assert rows[method].verdict.value != "equivalent", (method, rows[method].reason)


def test_concatenation_near_misses_are_not_proved(compilers, tmp_path):
    orig = _compile(compilers, "javac", CONCAT_NEAR[0], "Near.java", tmp_path / "orig")
    for which in ("javac", "ecj"):
        rows, _ = _rows(orig, _compile(compilers, which, CONCAT_NEAR[1], "Near.java", tmp_path / which))
        for name in ("acc", "show", "wrap"):
            assert rows[name].verdict.value != "equivalent", (which, name, rows[name].reason)
    # the JVM shows wrap's (at null); show's needs an object whose toString() throws, which is not generated
    assert rows["wrap"].verdict.value == "not-equivalent", rows["wrap"].reason


# ecj casts each element of a for-each loop over an Iterable<T> to T's erasure Object (EventListenerSupport's
# proxy handler), javac does not; a cast to String instead is a ClassCastException for other elements
EACH = """
import java.util.ArrayList;
import java.util.List;
public class Each {
    static <T> List<Object> copy(List<T> items) {
        List<Object> out = new ArrayList<>();
        for (T o : items) out.add(o);
        return out;
    }
}
"""


def test_cast_to_object_of_each_element(compilers, tmp_path):
    orig, opt = _build(compilers, EACH, "Each.java", tmp_path)
    assert "checkcast" in "".join(pp_listing(opt, "Each", "copy"))
    rows, _ = _rows(orig, opt)
    assert rows["copy"].verdict.value == "equivalent", rows["copy"].reason
    mutant = _compile(compilers, "ecj", EACH.replace("out.add(o)", "out.add((String) o)"), "Each.java", tmp_path / "m")
    rows, _ = _rows(orig, mutant)
    assert rows["copy"].verdict.value != "equivalent", rows["copy"].reason


def pp_listing(tree: Path, cls: str, name: str) -> list[str]:
    """The disassembled code of method ``name`` of class ``cls`` in ``tree``."""
    cf = read_class((tree / f"{cls}.class").read_bytes())
    return next(v for (n, _d), v in pp.method_listings(cf).items() if n == name)


BRIDGE_KEY = ("Box$Empty", "compareTo(Ljava/lang/Object;)I")
CMP_KEY = ("Box", "cmp(Ljava/lang/Comparable;Ljava/lang/Object;)I")


@pytest.mark.parametrize("javac_side", ["ORIG", "OPT"])
def test_bridge_one_compiler_emits_and_the_other_inherits(compilers, tmp_path, javac_side):
    javac, ecj = _build(compilers, BRIDGE, "Box.java", tmp_path)
    assert "compareTo" not in {m.name for m in read_class((ecj / "Box$Empty.class").read_bytes()).methods}
    rows, unpaired = _methods(*((javac, ecj) if javac_side == "ORIG" else (ecj, javac)))
    assert unpaired == [], unpaired
    for key in (BRIDGE_KEY, CMP_KEY):
        assert rows[key].verdict.value == "equivalent", (key, rows[key].reason)


@pytest.mark.parametrize("javac_side", ["ORIG", "OPT"])
def test_bridge_against_another_inherited_method_is_not_proved(compilers, tmp_path, javac_side):
    javac = _compile(compilers, "javac", BRIDGE, "Box.java", tmp_path / "javac")
    ecj = _compile(compilers, "ecj", BRIDGE_MUTANT, "Box.java", tmp_path / "ecj")
    rows, _ = _methods(*((javac, ecj) if javac_side == "ORIG" else (ecj, javac)))
    # javac's bridge of Empty pairs with the compareTo(Object) the mutant's Empty inherits: another method
    for key in (BRIDGE_KEY, CMP_KEY):
        assert rows[key].verdict.value != "equivalent", (key, rows[key].reason)


@pytest.mark.parametrize("javac_side", ["ORIG", "OPT"])
@pytest.mark.parametrize("patch", ["not final", "not a bridge"])
def test_bridge_pairing_and_reading_need_their_conditions(compilers, tmp_path, patch, javac_side):
    javac, ecj = _build(compilers, BRIDGE, "Box.java", tmp_path)
    if patch == "not final":
        # a subclass of Empty that overrides compareTo(Box) would run Box's through javac's invokespecial and
        # its own through the inherited bridge's invokevirtual: the reading as invokevirtual needs a final class
        _patch_access(javac / "Box$Empty.class", cls=Access.FINAL)
    else:
        # a method one side's class lacks that is not a bridge is no pair: a call that may reach it stays apart
        _patch_access(javac / "Box$Empty.class", method=(BRIDGE_KEY[1], Access.VOLATILE))  # ACC_BRIDGE's bit
    rows, unpaired = _methods(*((javac, ecj) if javac_side == "ORIG" else (ecj, javac)))
    assert rows[CMP_KEY].verdict.value != "equivalent", rows[CMP_KEY].reason
    if patch == "not final":
        assert rows[BRIDGE_KEY].verdict.value != "equivalent", rows[BRIDGE_KEY].reason
    else:
        assert BRIDGE_KEY not in rows
        assert f"only in {javac_side}: method Box$Empty.compareTo(Ljava/lang/Object;)I" in unpaired, unpaired


# two switches (validate/branchshape.py): a sparse switch in a loop, javac's lookupswitch of the keys it names
# against ecj's tableswitch whose key 4 jumps to the default (FastDateParser$TimeZoneStrategy.<init>), and a
# switch on a String, javac's switch on hashCode() setting an index and a second switch on it against ecj's one
# (JavaVersion.get)
SWITCHES = """
public class Sw {
    static Object pick(String[] names, Object a) {
        Object r = a;
        for (int i = 1; i < names.length; i++) {
            switch (i) { case 3: r = new StringBuilder(); break; case 5: r = a; break; }
            if (names[i] != null) r = names[i];
        }
        return r;
    }
    static int version(String s) {
        if (s == null) return -1;
        switch (s) {
        case "0.9": return 9;
        case "1.1": return 11;
        case "10": return 10;
        case "11": return s.hashCode();
        default: return s.length();
        }
    }
}
"""
# the mutants: key 4 takes case 5's arm; two strings' results swapped
SWITCH_MUTANTS = {"pick": ("case 5: r = a;", "case 4: case 5: r = a;"),
                  "version": ('case "1.1": return 11;', 'case "1.1": return 10;')}
# a switch on an index that one path sets to a value not known (q): jumping past the switch there would be wrong
INDEX = """
public class Idx {{
    static int f(int p, int q) {{
        int k = 0;
        if (p > 0) k = {};
        switch (k) {{ case 0: return 10; case 1: return 20; default: return 30; }}
    }}
}}
"""


def test_switches_by_javac_and_ecj(compilers, tmp_path):
    orig, opt = _build(compilers, SWITCHES, "Sw.java", tmp_path)
    assert any("lookupswitch" in ln for ln in pp_listing(orig, "Sw", "pick"))
    assert any("tableswitch" in ln for ln in pp_listing(opt, "Sw", "pick"))
    assert sum("switch" in ln for ln in pp_listing(orig, "Sw", "version")) == 2
    assert sum("switch" in ln for ln in pp_listing(opt, "Sw", "version")) == 1
    rows, _ = _rows(orig, opt)
    for name in SWITCH_MUTANTS:
        assert rows[name].verdict.value == "equivalent", (name, rows[name].reason)
    # javac's two switches threaded into one and its ifeq read as ecj's ifne: the same graph, no search
    assert rows["version"].axioms == ["bisimulation"], rows["version"].axioms
    _assert_mutants_not_proved(compilers, orig, SWITCHES, SWITCH_MUTANTS, "Sw.java", tmp_path)


def test_switch_on_an_index_not_known_is_not_threaded(compilers, tmp_path):
    trees = [_compile(compilers, "javac", INDEX.format(k), "Idx.java", tmp_path / name)
             for name, k in (("q", "q"), ("one", "1"))]
    rows, _ = _rows(*trees)
    assert rows["f"].verdict.value == "not-equivalent", rows["f"].reason


# javac's <clinit> of an enum calls its synthetic $values() (no partner: ecj builds the array in place); with 12
# constants its body is over the inlining size of other helpers (rules/inline.py MAX_SYNTHETIC_CALLEE_NODES)
LEVELS = "public enum Level { A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, B0, B1; }"


def test_enum_initializer_through_javacs_values_helper(compilers, tmp_path):
    orig, opt = _build(compilers, LEVELS, "Level.java", tmp_path)
    rows, unpaired = _rows(orig, opt)
    assert unpaired == ["only in ORIG: method Level.$values()[LLevel;"], unpaired
    assert rows["<clinit>"].verdict.value == "equivalent", rows["<clinit>"].reason
    # two constants in the other order: other ordinals, another array
    mutant = _compile(compilers, "ecj", LEVELS.replace("A0, A1,", "A1, A0,"), "Level.java", tmp_path / "m")
    rows, _ = _rows(orig, mutant)
    assert rows["<clinit>"].verdict.value != "equivalent", rows["<clinit>"].reason
