"""``validate`` proves what the optimizer's self-check proved in its own saturated E-PEG (validate/replay.py; issue
17 item 8): commons-math3's ``Dfp.sqrt``, whose rewrite the self-check proves only there (the full proof of the
pair saturates without meeting the roots), is proved equivalent by ``validate``; the replay refuses a broken
lowering (a constant changed in the emitted code), and it reads calls through the pair's view, so a call of a
helper whose pair differs is never taken for the other side's. A method the optimizer did not rewrite in a
class it did is proved as the same code on the same constants (validate/driver.py ``_same_code``) even where no
proof could be built (commons-math3's ``BOBYQAOptimizer.bobyqb``: irreducible control flow)."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from peggy_jvm import pipeline
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.model import Attribute, MethodInfo
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.validate import ValidateOptions, replay, validate_inputs
from peggy_jvm.validate import driver
from peggy_jvm.validate.modular import CallView, Program
from peggy_jvm.validate.pairing import MethodPair, load_side, pair_methods
from conftest import javac_command, keep_every_rewrite
from support.javac_cache import run_javac

DFP = "org/apache/commons/math3/dfp/Dfp"


@pytest.fixture(scope="module")
def dfp_pair(corpus_jars, tmp_path_factory) -> tuple[Path, Path]:
    """``Dfp`` as in commons-math3 (ORIG) and with only ``sqrt()`` rewritten by the optimizer (OPT), each alone in
    a directory (their pools differ: the rewrite's entries are added)."""
    jar = corpus_jars["commons-math3"]
    data = zipfile.ZipFile(jar).read(DFP + ".class")
    cf = read_class(data)
    j = next(i for i, m in enumerate(cf.methods) if m.name == "sqrt" and m.descriptor == f"()L{DFP};")
    outcomes = [pipeline.MethodOutcome(pipeline.MethodReport(DFP, m.name, m.descriptor, "unchanged"))
                for m in cf.methods]
    outcomes[j] = pipeline.optimize_methods(data, ClassHierarchy([jar]), pipeline.Stage.FULL, methods=range(j, j + 1))[0]
    assert outcomes[j].report.status == "rewritten", outcomes[j].report.reason
    new, _ = pipeline.merge_class(data, outcomes)
    base = tmp_path_factory.mktemp("dfp")
    for side, b in (("orig", data), ("opt", new)):
        (base / side / DFP).parent.mkdir(parents=True)
        (base / side / f"{DFP}.class").write_bytes(b)
    return base / "orig", base / "opt"


def test_validate_proves_the_optimizers_dfp_sqrt(dfp_pair, monkeypatch):
    """Every pair equivalent, ``sqrt`` through the replay (without it: unknown, "saturation saturated after 9
    iterations, 959 nodes"), and the replay asked of no other pair (it runs only where the other proofs fail)."""
    asked = []
    real = driver.prove_in_optimizer_saturation

    def spy(pair, *args):
        asked.append(pair.orig.name)
        return real(pair, *args)

    monkeypatch.setattr(driver, "prove_in_optimizer_saturation", spy)
    rep = validate_inputs(*dfp_pair, ValidateOptions(counterexamples=False))
    rows = {(p.name, p.descriptor): p for p in rep.pairs}
    sqrt = rows[("sqrt", f"()L{DFP};")]
    assert sqrt.verdict.value == "equivalent" and sqrt.reason.startswith(replay.REASON), sqrt.reason
    assert asked == ["sqrt"]
    assert all(p.verdict.value == "equivalent" for p in rep.pairs), [(p.name, p.reason) for p in rep.pairs
                                                                     if p.verdict.value != "equivalent"]


# ``helper`` may be overridden: the optimizer does not inline it, and its rewrite of ``viaHelper`` (the two
# products as one, ``(helper(x) + helper(x + 1)) * 77``) keeps both calls
SOURCE = r"""
public class Own {
    static int scaled(int[] a, int k) {
        int s = 0;
        for (int i = 0; i < a.length; i++) { s += a[i] * (k * 77); }
        return s;
    }
    static int twice(int x, int y) { int t = x * 77 + y; return (x * 77 + y) - t + (t << 1); }
    int viaHelper(int x) { return helper(x) * 77 + helper(x + 1) * 77; }
    int helper(int x) { return x + HELPER; }
    int callsHelper(int x) { return helper(x); }
}
"""


@pytest.fixture(scope="module")
def own(java_home, tmp_path_factory) -> tuple[Path, Path]:
    """``Own`` compiled (ORIG) and optimized with every rewrite kept (OPT); a third tree with ``helper`` changed."""
    base = tmp_path_factory.mktemp("own")
    for name, helper in (("orig", "0"), ("changed", "1")):
        (base / f"{name}-src").mkdir()
        (base / f"{name}-src" / "Own.java").write_text(SOURCE.replace("HELPER", helper))
        run_javac([*javac_command(java_home), "-d", str(base / name), str(base / f"{name}-src" / "Own.java")],
                  check=True, capture_output=True)
    with pytest.MonkeyPatch.context() as mp:
        keep_every_rewrite(mp)
        _, report = pipeline.optimize_input(base / "orig" / "Own.class", base / "opt" / "Own.class",
                                            pipeline.Stage.FULL, jobs=1, method_timeout=None)
    rewritten = {r.name for r in report.methods if r.status == "rewritten"}
    assert {"scaled", "twice", "viaHelper"} <= rewritten, [(r.name, r.reason) for r in report.methods]
    return base / "orig", base / "opt"


def _pairs(orig: Path, opt: Path) -> tuple[dict[str, MethodPair], Program, ClassHierarchy, ClassHierarchy]:
    a, b = load_side(orig), load_side(opt)
    pairing = pair_methods(a, b, {}, {})
    program = Program(pairing.pairs, a.classes, a.hierarchy, b.classes, b.hierarchy, {}, pairing.members)
    return {p.orig.name: p for p in pairing.pairs}, program, a.hierarchy, b.hierarchy


def _with_code(m: MethodInfo, code: bytes) -> MethodInfo:
    return MethodInfo(m.access, m.name_index, m.descriptor_index,
                      [Attribute(a.name_index, a.name, code) if a.name == "Code" else a for a in m.attributes],
                      m.name, m.descriptor)


def test_the_replay_refuses_a_broken_lowering(own):
    """Each rewrite is proved by the replay; the same emitted code with 77 turned into 78 is not."""
    pairs, program, orig_h, opt_h = _pairs(*own)
    view = CallView(program, frozenset(p.key for p in pairs.values()))
    for name in ("scaled", "twice", "viaHelper"):
        pair = pairs[name]
        proof = replay.prove_in_optimizer_saturation(pair, orig_h, opt_h, view, 30.0)
        assert proof is not None and proof.proved, name
        code = pair.opt.code_attribute()
        assert code is not None and b"\x10\x4d" in code.data, name  # bipush 77
        bad = MethodPair(pair.orig_class, pair.opt_class, pair.orig,
                         _with_code(pair.opt, code.data.replace(b"\x10\x4d", b"\x10\x4e", 1)))
        assert replay.prove_in_optimizer_saturation(bad, orig_h, opt_h, view, 30.0) is None, name


def test_the_replay_reads_calls_through_the_view(own):
    """``viaHelper`` against the optimizer's rewrite of it in a program whose ``helper`` returns ``x + 1``: with
    ``helper``'s pair not assumed, the two calls are different operators and the replay proves nothing; assumed
    (as the view does once that pair is proved), the same calls meet. Through ``validate``: not equivalent."""
    orig, opt = own
    changed = orig.parent / "changed"
    pairs, program, orig_h, opt_h = _pairs(changed, opt)
    pair = pairs["viaHelper"]
    assert replay.prove_in_optimizer_saturation(pair, orig_h, opt_h, CallView(program, frozenset()), 30.0) is None
    assumed = CallView(program, frozenset(p.key for p in pairs.values()))
    proof = replay.prove_in_optimizer_saturation(pair, orig_h, opt_h, assumed, 30.0)
    assert proof is not None and proof.proved
    rows = {p.name: p for p in validate_inputs(changed, opt, ValidateOptions(counterexamples=False)).pairs}
    assert rows["helper"].verdict.value != "equivalent"
    assert rows["viaHelper"].verdict.value != "equivalent", rows["viaHelper"].reason


def test_an_unrewritten_method_of_a_rewritten_class_is_the_same_code(own, monkeypatch):
    """The proofs of ``<init>`` and ``callsHelper``, which the optimizer left alone (the same code bytes; OPT's
    pool extends ORIG's), made to prove nothing (``prove_pair`` and the replay): both are still proved; against
    the tree whose ``helper`` differs, ``callsHelper``'s call of it is not assumed, so it is not proved (its code
    and constants are the same: only the modular rule stops it)."""
    alone = {"<init>", "callsHelper"}
    real_pair, real_replay = driver.prove_pair, driver.prove_in_optimizer_saturation

    def pair_proof(pair, *args, **kwargs):
        return driver.ProofResult(False, "not proved: (the test's)") if pair.orig.name in alone else \
            real_pair(pair, *args, **kwargs)

    monkeypatch.setattr(driver, "prove_pair", pair_proof)
    monkeypatch.setattr(driver, "prove_in_optimizer_saturation",
                        lambda pair, *a: None if pair.orig.name in alone else real_replay(pair, *a))
    orig, opt = own
    rows = {p.name: p for p in validate_inputs(orig, opt, ValidateOptions(counterexamples=False)).pairs}
    assert all(p.verdict.value == "equivalent" for p in rows.values()), {n: p.reason for n, p in rows.items()}
    assert rows["callsHelper"].reason == rows["<init>"].reason == driver.SAME_CODE
    rows = {p.name: p for p in validate_inputs(orig.parent / "changed", opt,
                                               ValidateOptions(counterexamples=False)).pairs}
    assert rows["<init>"].verdict.value == "equivalent" and rows["callsHelper"].verdict.value != "equivalent", \
        {n: p.reason for n, p in rows.items()}
