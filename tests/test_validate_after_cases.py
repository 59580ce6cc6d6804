"""The case split after saturation (validate/aftercases.py), on the shape of commons-lang3's
``ClassUtils.getClass(ClassLoader, String, boolean)`` compiled by javac and by ecj (issue 17 item 7): a branch
before a ``try`` block whose handler retries with a concatenated name. javac's one ``makeConcatWithConstants``
against ecj's ``StringBuilder`` chain, whose calls each branch to the handler until saturation shows that none
throws; the two compilers nest the handler's ``instanceof`` test and the calls' ``threw`` tests in other orders,
which only the case split of the terms read back after saturation lines up. Mutants of the concatenation (another
character, the operands swapped) are other strings: never proved. (No mutant is shown different on the JVM: the
counterexample search does not generate a ``ClassLoader``.)"""
from __future__ import annotations

from pathlib import Path

import pytest
from support import ecjpair

from peggy_jvm.validate import ValidateOptions, validate_inputs
from conftest import JAVAC_JVM_FLAGS, javac_command
from support.javac_cache import run_javac

# the slow tier with the other ecj tests (ecj fetched like the corpus; three validates of 3 pairs each)
pytestmark = pytest.mark.slow

LOADER = """
import java.util.HashMap;
import java.util.Map;
public class Loader {
    static final Map<String, Class<?>> KNOWN = new HashMap<>();
    static Class<?> find(ClassLoader cl, String name, boolean init) throws ClassNotFoundException {
        try {
            return KNOWN.containsKey(name) ? KNOWN.get(name) : Class.forName(name, init, cl);
        } catch (ClassNotFoundException ex) {
            int dot = name.lastIndexOf('.');
            if (dot != -1) {
                try {
                    return find(cl, name.substring(0, dot) + '$' + name.substring(dot + 1), init);
                } catch (ClassNotFoundException ex2) {
                    // the name as it was, below
                }
            }
            throw ex;
        }
    }
}
"""
CONCAT = "name.substring(0, dot) + '$' + name.substring(dot + 1)"
MUTANTS = {"other-char": "name.substring(0, dot) + '#' + name.substring(dot + 1)",
           "swapped": "name.substring(dot + 1) + '$' + name.substring(0, dot)"}
FIND = ("Loader", "find(Ljava/lang/ClassLoader;Ljava/lang/String;Z)Ljava/lang/Class;")


def _compile(command: list[str], src: str, out: Path) -> Path:
    (out.parent / f"{out.name}-src").mkdir()
    (out.parent / f"{out.name}-src" / "Loader.java").write_text(src)
    run_javac([*command, "-d", str(out), str(out.parent / f"{out.name}-src" / "Loader.java")], check=True,
              capture_output=True)
    return out


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory) -> dict[str, Path]:
    ecj, _src = ecjpair.fetch_inputs()
    javac = [*javac_command(java_home), "--release", "11"]
    ecjc = [str(java_home / "bin" / "java"), *(f.removeprefix("-J") for f in JAVAC_JVM_FLAGS), "-cp", str(ecj),
            ecjpair.ECJ_MAIN, "-proc:none", "--release", "11"]
    base = tmp_path_factory.mktemp("aftercases")
    assert CONCAT in LOADER
    out = {"javac": _compile(javac, LOADER, base / "javac"), "ecj": _compile(ecjc, LOADER, base / "ecj")}
    for name, text in MUTANTS.items():
        out[name] = _compile(ecjc, LOADER.replace(CONCAT, text), base / name)
    return out


def _find_row(orig: Path, opt: Path):
    rep = validate_inputs(orig, opt, ValidateOptions(method_timeout=8.0, explain=True))
    return next(p for p in rep.pairs if (p.class_name, p.name + p.descriptor) == FIND)


def test_concatenation_in_a_try_block_after_a_branch(trees):
    row = _find_row(trees["javac"], trees["ecj"])
    assert row.verdict.value == "equivalent", row.reason
    assert "case-split-after-saturation" in (row.axioms or ()), row.axioms


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutated_concatenation_is_not_proved(trees, mutant):
    row = _find_row(trees["javac"], trees[mutant])
    assert row.verdict.value != "equivalent", row.reason
