"""Strength reduction over a step that varies per iteration (issue 16, item 4): ``i * k`` where ``i`` advances by
``phi(c, k1, k2)`` with constant arms (``c`` invariant or varying) is the induction variable stepped by
``phi(c, k1 * k, k2 * k)`` (axioms/peg-loop.ax ``peg.loop.strength``, axioms/peg-distrib.ax
``peg.distrib.phi.const``).

Checked three ways: on hand-built PEGs (the equality is found, and the mutants with an arm's constant wrong or the
arms swapped are not merged); by ``validate`` on tests/java/varstep (the hand strength-reduced ``equiv`` is proved,
each ``mutant`` refuted with a counterexample confirmed on the JVM); by the full stage on ``inv`` (no
multiplication left, verified and run on the JVM against the original); and with mutants of the rules (a wrong
step refused by the self-check, swapped arms by the fuzzer)."""
from __future__ import annotations

import functools
from pathlib import Path

import pytest
from conftest import javac_command, keep_every_rewrite, validate_rows
from support.javac_cache import run_javac
from support.javap import javap
from test_axioms_equalities import LIMITS, ci, peg_with
from test_axioms_equalities import saturate as saturate_with

from peggy_jvm.egraph import Runner
from peggy_jvm.epeg import EPeg
from peggy_jvm.ir.nodes import INT
from peggy_jvm.peg.graph import PEG
from peggy_jvm.pipeline import Stage, optimize_input
from peggy_jvm.rules import default_rules, parse_axioms
from peggy_jvm.rules.check import check_rule
from peggy_jvm.rules.policy import RuleOptions

SOURCES = Path(__file__).resolve().parent / "java" / "varstep"


@functools.cache
def varying_rules() -> list:
    """The default rules with the varying-step group and the phi-of-constants folding (both off by default in
    validate's rules, axioms/peg-loop.ax and axioms/peg-distrib.ax) switched on; compiled when a test first needs
    them, not at import (every pytest-xdist worker imports every test file to collect it)."""
    return default_rules().enable("peg.loop.strength.varying", "peg.distrib.phi.const").active()


def saturate(peg: PEG, roots: list[int]) -> tuple[EPeg, dict[int, int]]:
    return saturate_with(peg, roots, varying_rules())


def _stepped(peg: PEG, loop: int, zero: int, step: int, add: str = "add.i") -> int:
    t = peg.new_theta(loop)
    peg.set_theta(t, zero, peg.add(add, None, (t, step)))
    return t


def _phi(peg: PEG, c: int, a: int, b: int) -> int:
    return peg.add("phi", None, (c, a, b))


def test_varying_step_times_a_constant_is_stepped_by_a_phi_of_constants():
    """for (i = 0; ; i += c ? 2 : 3) use(i * 50), c = (i * 50 <= 1000) varying: i * 50 is theta(0, t + phi(c,
    100, 150)); with the arms swapped or one constant wrong it is not."""
    peg, (n,) = peg_with(INT)
    i = peg.new_theta(1)
    c = peg.add("le.i", None, (i, n))
    peg.set_theta(i, ci(peg, 0), peg.add("add.i", None, (i, _phi(peg, c, ci(peg, 2), ci(peg, 3)))))
    times50 = peg.add("mul.i", None, (i, ci(peg, 50)))
    right = _stepped(peg, 1, ci(peg, 0), _phi(peg, c, ci(peg, 100), ci(peg, 150)))
    swapped = _stepped(peg, 1, ci(peg, 0), _phi(peg, c, ci(peg, 150), ci(peg, 100)))
    wrong = _stepped(peg, 1, ci(peg, 0), _phi(peg, c, ci(peg, 100), ci(peg, 151)))
    # theta-factor finds the same equality another way (right's step is phi(c, 2, 3) * 50: right is i * 50 by
    # factoring 50 out of the accumulator); without it, the varying step's rule must
    eg, m = saturate_with(peg, [times50, right, swapped, wrong],
                          [r for r in varying_rules() if r.name != "theta-factor"])
    assert eg.equiv(m[times50], m[right])
    assert "sr-mul-int-var" in eg.explain(m[times50], m[right]).rules()  # type: ignore[union-attr]
    assert not eg.equiv(m[times50], m[swapped]) and not eg.equiv(m[times50], m[wrong])
    # the step's product is folded by distributing mul over the phi of constants: without it, not found
    eg = EPeg()
    m = eg.add_peg(peg, roots=[times50, right])
    Runner([r for r in varying_rules() if not r.name.startswith("phi-const-")], LIMITS).run(eg)
    assert not eg.equiv(m[times50], m[right])


def test_invariant_phi_step_shift_and_long():
    """i += (d == 150 ? 4 : 1): i << 3 is stepped by phi(d == 150, 32, 8); a long i * 12 by phi(c, 36L, 84L)."""
    peg, (d, n) = peg_with(INT, INT)
    c = peg.add("eq.i", None, (d, ci(peg, 150)))
    i = _stepped(peg, 1, ci(peg, 0), _phi(peg, c, ci(peg, 4), ci(peg, 1)))
    shl3 = peg.add("shl.i", None, (i, ci(peg, 3)))
    right = _stepped(peg, 1, ci(peg, 0), _phi(peg, c, ci(peg, 32), ci(peg, 8)))
    cl = peg.add("lt.i", None, (n, ci(peg, 7)))
    zl = peg.add("const.l", 0)
    j = _stepped(peg, 1, zl, _phi(peg, cl, peg.add("const.l", 3), peg.add("const.l", 7)), "add.l")
    times12 = peg.add("mul.l", None, (j, peg.add("const.l", 12)))
    rightl = _stepped(peg, 1, zl, _phi(peg, cl, peg.add("const.l", 36), peg.add("const.l", 84)), "add.l")
    eg, m = saturate(peg, [shl3, right, times12, rightl])
    assert eg.equiv(m[shl3], m[right])
    assert eg.equiv(m[times12], m[rightl])


@pytest.fixture(scope="module")
def trees(java_home: Path, tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("varstep")
    out = {}
    for name in ("orig", "equiv", "mutant"):
        out[name] = base / name
        run_javac([*javac_command(java_home), "-d", str(out[name]), str(SOURCES / name / "VarStep.java")],
                  check=True, capture_output=True)
    return out


def test_validate_proves_the_hand_reduced_loops_and_refutes_the_mutants(trees):
    proved = validate_rows({"orig": trees["orig"], "opt": trees["equiv"]}, "VarStep", rules=varying_rules())
    assert {n: p.verdict.value for n, p in proved.items() if n != "main"} == dict.fromkeys(
        ("<init>", "inv", "var2", "var3", "varl"), "equivalent"), {n: p.reason for n, p in proved.items()}
    refuted = validate_rows({"orig": trees["orig"], "opt": trees["mutant"]}, "VarStep", rules=varying_rules())
    for name in ("inv", "var2", "varl"):  # a wrong constant, the arms swapped, a wrong long constant
        assert refuted[name].verdict.value == "not-equivalent", (name, refuted[name].reason)
        assert "confirmed on the JVM" in refuted[name].reason, refuted[name].reason


def test_full_stage_reduces_the_invariant_phi_step(trees, java_home, tmp_path, verifier, run_mains):
    """inv: no multiplication left anywhere (step * 50 folded into the branch's arms), verified, proved by the
    self-check (status rewritten) and identical on the JVM. The emitted-cost rule is off (keep_every_rewrite):
    with it, inv's 36 bytes may grow by 9 only, and the second induction variable and the hoisted step take 23.
    ``theta-factor`` is off: it takes inv's multiplication out of the loop instead (the sum of ``i`` times 50 after
    it: one ``imul`` left, tests/test_classic.py), a cheaper route that is not the one under test here."""
    out = tmp_path / "out"
    with pytest.MonkeyPatch.context() as mp:
        keep_every_rewrite(mp)
        _, report = optimize_input(trees["orig"], out, Stage.FULL, jobs=1, rules=NO_FACTOR)
    row = {m.name: m for m in report.methods}["inv"]
    assert row.status == "rewritten", row.reason
    text = javap(java_home, "-c", "-p", "-cp", str(out), "VarStep", check=True).stdout
    body = text.split("static int inv(int, int);")[1].split("static int var2")[0]
    assert "goto" in body and "imul" not in body, body
    assert verifier(out).returncode == 0
    assert run_mains(out, ["VarStep"]) == run_mains(trees["orig"], ["VarStep"])


#: the default rules without ``theta-factor`` (the full stage's tests of the strength-reduced loop)
NO_FACTOR = RuleOptions(switches=("-theta-factor",))

MUTANT_SR = """group mutant.sr
rule bad-sr-const: (mul.i ?t@(theta[$l] ?a (add.i ?t ?c)) ?k)
                   => (theta[$l] (mul.i ?a ?k) (add.i (mul.i ?t ?k) (add.i (mul.i ?c ?k) (const.i 1))))
                   if invariant(?k, $l)
"""


def test_mutants_of_the_rules_are_refused(trees, tmp_path, run_mains):
    """A strength-reduction rule with a wrong step (the fuzzer cannot evaluate loop rules) steers extraction to a
    wrong loop for inv (``theta-factor`` off, whose cheaper route extraction would take), which the self-check does
    not prove: inv keeps its code and the program prints the same.
    A distribution over a phi with the arms swapped is found unsound by the fuzzer."""
    ax = tmp_path / "bad.ax"
    ax.write_text(MUTANT_SR)
    out = tmp_path / "out"
    with pytest.MonkeyPatch.context() as mp:
        keep_every_rewrite(mp)
        _, report = optimize_input(trees["orig"], out, Stage.FULL, jobs=1,
                                   rules=RuleOptions(axioms=(ax,), switches=NO_FACTOR.switches))
    row = {m.name: m for m in report.methods}["inv"]
    assert row.status == "unchanged" and row.reason.startswith("self-check: the emitted code is not proved"), row
    assert run_mains(out, ["VarStep"]) == run_mains(trees["orig"], ["VarStep"])
    (swap,) = parse_axioms("rule bad: (%f:pure2 (phi ?c ?a ?b) ?k) => (phi ?c (%f ?b ?k) (%f ?a ?k))"
                           " if const(?a) and const(?b) and const(?k)", "bad.ax").rules
    assert check_rule(swap).status == "unsound"


@pytest.mark.slow  # the slow tier: 8 s of CPU, over the fast tier's share (docs/ci.md, session 16)
def test_validate_cli_rules_switch_the_groups_on(trees):
    """``validate --rules``: the hand-reduced varying-step loops need the two default-off groups. Without them the
    CLI proves fewer pairs (exit 3: some unknown); with ``--rules +...`` every pair is proved (exit 0); an unknown
    group name is a usage error (exit 2) naming it."""
    from click.testing import CliRunner

    from peggy_jvm.cli import main

    def run(*extra: str):
        return CliRunner().invoke(main, ["validate", str(trees["orig"]), str(trees["equiv"]), "--all", *extra])

    plain = run("--method-timeout", "2")  # its pairs end unknown: a short budget keeps the test quick
    switched = run("--rules", "+peg.loop.strength.varying,+peg.distrib.phi.const")
    assert plain.exit_code == 3, plain.output
    assert switched.exit_code == 0, switched.output
    assert "0 unknown" in switched.output and "0 unknown" not in plain.output
    bad = run("--rules", "+no.such.group")
    assert bad.exit_code == 2 and "no rule group or rule named 'no.such.group'" in bad.output, bad.output
