"""``validate`` proves what the optimizer's self-check proved (issue 17, item 8), from the command line too.

``Own.steps`` multiplies by ``wide ? 4 : 1`` times 8 in a loop; the full stage folds that into a phi of
constants hoisted out of the loop (``wide ? 32 : 8``), which its self-check proves with
``peg.distrib.phi.const`` (on in the optimizer's safe rules, rules/policy.py). Before validate's default rules held
that group, and before the command line tried the optimizer's own proof (it passed the default rules as given
rules, which turn that attempt off), ``peggy-jvm validate`` left the rewrite unknown (saturated without meeting).
A hand-made OPT with one constant wrong is never proved: the proof is not vacuous.
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import compile_versions, keep_every_rewrite, validate_rows

from peggy_jvm.cli import main
from peggy_jvm.pipeline import Stage, optimize_input
from peggy_jvm.rules.policy import safe_rules
from peggy_jvm.validate import Verdict
from peggy_jvm.validate.driver import _default_rules

SOURCE = r"""
public class Own {
    static int steps(int[] a, boolean wide) {
        int s = 0;
        for (int i = 0; i < a.length; i++) {
            int w = wide ? 4 : 1;
            s += a[i] * (w * %s);
        }
        return s;
    }
}
"""


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    base = tmp_path_factory.mktemp("own")
    out = compile_versions(java_home, base, "Own.java", {"orig": SOURCE % "8", "wrong": SOURCE % "9"})
    out["opt"] = base / "opt"
    with pytest.MonkeyPatch.context() as mp:
        keep_every_rewrite(mp)
        _, report = optimize_input(out["orig"], out["opt"], Stage.FULL, jobs=1)
    assert {m.name for m in report.methods if m.status == "rewritten"} == {"steps"}, report.methods
    return out


def test_validate_default_rules_hold_the_optimizer_rules():
    assert {r.name for r in safe_rules()} <= {r.name for r in _default_rules()}
    # and those the self-check proves with besides (rules/policy.py PROOF_GROUPS)
    from peggy_jvm.rules.policy import proof_rules
    assert {r.name for r in proof_rules()} <= {r.name for r in _default_rules()}


def test_the_default_rules_alone_prove_the_rewrite(trees):
    """Given as rules (no optimizer's proof tried), the default rules prove it; without the phi-of-constants
    folding they do not."""
    row = validate_rows(trees, "Own", rules=_default_rules(), counterexamples=False)["steps"]
    assert row.verdict is Verdict.EQUIVALENT, row.reason
    fewer = [r for r in _default_rules() if not r.name.startswith("phi-const-")]
    row = validate_rows(trees, "Own", rules=fewer, counterexamples=False)["steps"]
    assert row.verdict is not Verdict.EQUIVALENT, row.reason


def test_the_command_line_proves_the_optimizer_output(trees):
    got = CliRunner().invoke(main, ["validate", str(trees["orig"]), str(trees["opt"]), "--all"])
    assert got.exit_code == 0, got.output
    assert "2 pairs: 2 equivalent, 0 not equivalent, 0 unknown" in got.output, got.output


def test_a_wrong_constant_is_not_proved(trees):
    row = validate_rows({"orig": trees["orig"], "opt": trees["wrong"]}, "Own", counterexamples=False)["steps"]
    assert row.verdict is not Verdict.EQUIVALENT, row.reason
