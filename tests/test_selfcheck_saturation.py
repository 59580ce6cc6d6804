"""The self-check proved in the optimizer's own saturated E-PEG (validate/selfcheck.py ``prove_in_saturation``).

Each rewrite of a small class is proved there without the full proof; the same emitted code with one constant
changed (a broken lowering) is refused there and by the full proof, and the optimizer keeps the original bytes;
a rule the optimizer used that the proof does not (a mutant under the same name) sends the proof to the full
path. One optimizer run of the class is shared by the module."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from peggy_jvm import pipeline
from peggy_jvm.budget import DEFAULT_WORK_BUDGET
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.model import ClassFile, MethodInfo
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.rules.policy import optimizer_rules, proof_rules
from peggy_jvm.saturate import Saturation
from peggy_jvm.validate import selfcheck
from conftest import javac_command, keep_every_rewrite
from support.javac_cache import run_javac

SOURCE = r"""
public class Own {
    static int scaled(int[] a, int k) {
        int s = 0;
        for (int i = 0; i < a.length; i++) { s += a[i] * (k * 77); }
        return s;
    }
    static int twice(int x, int y) { int t = x * 77 + y; return (x * 77 + y) - t + (t << 1); }
    static int poly(int x) { int a = x * 77; int b = x * 77; return a + b + 99; }
}
"""

#: bipush 77 or bipush 99: one of them is in every rewrite's emitted code; the mutant pushes one more
BIPUSHES = (b"\x10\x4d", b"\x10\x63")


@dataclass
class Check:
    cf: ClassFile
    m: MethodInfo
    data: bytes
    sat: Saturation


@pytest.fixture(scope="module")
def run(java_home, tmp_path_factory) -> tuple[Path, dict[str, Check], dict]:
    """The class compiled, optimized with every rewrite kept; each self-check's inputs recorded (before it runs,
    so the saturation is as extraction left it: the self-check adds to it) and the report rows."""
    work = tmp_path_factory.mktemp("own")
    (work / "Own.java").write_text(SOURCE)
    run_javac([*javac_command(java_home), "-d", str(work), str(work / "Own.java")], check=True)
    checks: dict[str, Check] = {}
    real = pipeline._self_check
    with pytest.MonkeyPatch.context() as mp:
        keep_every_rewrite(mp)
        saturated: list[Saturation] = []
        real_saturate = pipeline._saturate

        def saturate(*args, **kwargs):
            got = real_saturate(*args, **kwargs)
            saturated.append(got)
            return got

        def self_check(cf, m, data, hierarchy, work_budget, net=None, rules=None, callees=None, sat=None):
            if sat is not None:  # a copy of the saturation as extraction left it, for the tests below
                checks.setdefault(m.name, Check(cf, m, data, pipeline._saturate(
                    pipeline._build(pipeline.lift_method(cf, m, hierarchy)), optimizer_rules(rules),
                    work_budget, callees)))
            return real(cf, m, data, hierarchy, work_budget, net, rules, callees, sat)

        mp.setattr(pipeline, "_saturate", saturate)
        mp.setattr(pipeline, "_self_check", self_check)
        _, report = pipeline.optimize_input(work / "Own.class", work / "out" / "Own.class", pipeline.Stage.FULL,
                                            jobs=1, method_timeout=None)
    return work, checks, {r.name: r for r in report.methods}


def _mutated(data: bytes) -> bytes:
    push = next((p for p in BIPUSHES if p in data), None)
    assert push is not None, "the emitted code pushes neither 77 nor 99"
    return data.replace(push, push[:1] + bytes([push[1] + 1]), 1)


def test_every_rewrite_is_proved_in_the_optimizers_saturation(run, monkeypatch):
    """The three methods are rewritten, and each emitted code is proved in the optimizer's E-PEG: the full proof
    (``prove_pair``) is never asked."""
    work, checks, rows = run
    assert {n: rows[n].status for n in ("scaled", "twice", "poly")} == dict.fromkeys(("scaled", "twice", "poly"),
                                                                                       "rewritten")
    assert set(checks) == {"scaled", "twice", "poly"}
    monkeypatch.setattr(selfcheck, "prove_pair", lambda *a, **k: pytest.fail("the full proof was asked"))
    h = ClassHierarchy([work])
    for name, c in checks.items():
        proof = selfcheck.prove_rewrite(c.cf, c.m, c.data, h, proof_rules(None), DEFAULT_WORK_BUDGET.proof(), None,
                                        c.sat, optimizer_rules(None))
        assert proof.proved and proof.axioms[0] == "saturation", (name, proof.reason)


def test_a_broken_lowering_is_refused_in_the_saturation_and_by_the_full_proof(run):
    """The emitted code with 77 turned into 78 (or 99 into 100): not proved in the optimizer's E-PEG (None:
    the full proof is asked), and the full proof refuses it too."""
    work, checks, _rows = run
    h = ClassHierarchy([work])
    assert set(checks) == {"scaled", "twice", "poly"}
    for name, c in checks.items():
        bad = _mutated(c.data)
        assert selfcheck.prove_in_saturation(c.cf, c.m, bad, h, c.sat, DEFAULT_WORK_BUDGET.proof()) is None, name
        proof = selfcheck.prove_rewrite(c.cf, c.m, bad, h, proof_rules(None), DEFAULT_WORK_BUDGET.proof(), None,
                                        c.sat, optimizer_rules(None))
        assert not proof.proved, (name, proof.reason)


def test_the_optimizer_keeps_the_original_bytes_of_a_broken_lowering(run, tmp_path, monkeypatch):
    """Through the pipeline: the lowering made to emit 78 for 77 (or 100 for 99); every method keeps its
    original code and the report says the self-check refused it."""
    work, _checks, _rows = run
    real = pipeline._lower
    monkeypatch.setattr(pipeline, "_lower", lambda *a, **k: _mutated(real(*a, **k)))
    keep_every_rewrite(monkeypatch)
    _, report = pipeline.optimize_input(work / "Own.class", tmp_path / "Own.class", pipeline.Stage.FULL, jobs=1,
                                        method_timeout=None)
    rows = {r.name: r for r in report.methods}
    for name in ("scaled", "twice", "poly"):
        assert rows[name].status == "unchanged" and rows[name].reason.startswith("self-check: "), rows[name]
    before, after = read_class((work / "Own.class").read_bytes()), read_class((tmp_path / "Own.class").read_bytes())
    for name in ("scaled", "twice", "poly"):
        code = [next(m for m in cf.methods if m.name == name).code_attribute().data for cf in (before, after)]
        assert code[0] == code[1], name


def test_a_rule_the_proof_does_not_use_sends_it_to_the_full_proof(run, monkeypatch):
    """Saturated with a rule object the proof's rules do not hold (the same name, another object: a mutant),
    the optimizer's E-PEG is not trusted: the full proof is asked."""
    work, checks, _rows = run
    asked: list[str] = []
    real = selfcheck.prove_pair
    monkeypatch.setattr(selfcheck, "prove_pair", lambda pair, *a, **k: asked.append(pair.orig.name) or real(
        pair, *a, **k))
    c = checks["twice"]
    rules = proof_rules(None)
    other = [*rules[:-1], type(rules[-1]).__new__(type(rules[-1]))]
    other[-1].__dict__.update(getattr(rules[-1], "__dict__", {}))
    proof = selfcheck.prove_rewrite(c.cf, c.m, c.data, ClassHierarchy([work]), rules, DEFAULT_WORK_BUDGET.proof(),
                                    None, c.sat, other)
    assert proof.proved and asked == ["twice"], proof.reason
