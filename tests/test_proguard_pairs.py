"""Real pairs for ``validate``: ProGuard's intra-method optimizations of JAMA, commons-lang3 and jsoup
(scripts/proguard_pairs.py; Debian's ProGuard 6.2.2, fetched like the corpus jars).

ProGuard's code is right (its outputs verify and behave like the originals) with one exception the validator
finds: it rewrites the string conversion of an arbitrary object, ``"text " + o``, into
``"text ".concat(String.valueOf(o))``, which throws NullPointerException when ``o.toString()`` returns null, where
the original gives ``"text null"`` (JLS 5.1.11). commons-lang3's ``DateUtils.round``, ``truncate`` and
``iterator`` (an ``Object`` parameter), ``TypeUtils.getRawType``, ``isAssignable`` and ``getTypeArguments`` (a
``Type`` parameter, given a stub, or a ``ParameterizedType`` stub whose ``getRawType()`` returns such a stub) and
``ConcurrentUtils.checkedException`` (a ``Throwable`` parameter) are such methods, and the JVM confirms the
difference. No other method may be
called "not equivalent", and most of the changed ones must be proved. The floors below are under what
``scripts/proguard_pairs.py`` measures (docs/ci.md has the table) so that a loaded CI machine, which gives each
proof less wall-clock time, does not fail them; a regression in the proofs or the pairing does.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import pytest
from support import proguard as pp

# the slow tier: ProGuard and validate over three real jars (make test runs it; -m "not slow" leaves it out)
pytestmark = pytest.mark.slow

# jar -> least share of the changed methods whose own change is proved (Row.own_share)
FLOORS = {"jama": 0.86, "commons-lang3": 0.95, "jsoup": 0.96}
METHOD_TIMEOUT = 4.0  # seconds per pair; the proof gets 80% (validate/driver.py PROOF_SHARE)
# methods ProGuard really changes, for an argument whose toString() returns null (module docstring)
NULL_TO_STRING_CHANGES = {"commons-lang3": {f"org/apache/commons/lang3/time/DateUtils.{m}"
                                            for m in ("round", "truncate", "iterator")}
                          | {f"org/apache/commons/lang3/reflect/TypeUtils.{m}"
                             for m in ("getRawType", "isAssignable", "getTypeArguments")}
                          | {"org/apache/commons/lang3/concurrent/ConcurrentUtils.checkedException"}}


@pytest.fixture(scope="module")
def proguarded(corpus_jars, tmp_path_factory) -> Callable[[str], Path]:
    """ProGuard's output of a jar, made once, when a test of that jar first needs it (each jar's tests are one
    work unit of a parallel run, tests/support/schedule.py: the three jars go to the workers in parallel); read
    from the corpus cache when ProGuard ran on the same inputs before (support/proguard.py)."""
    out = tmp_path_factory.mktemp("proguard")
    done: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in done:
            dst = out / f"{name}.pg.jar"
            pp.proguard_intra_cached(pp.proguard_jar(), corpus_jars[name], dst, [pp.jdk_library_jar()])
            done[name] = dst
        return done[name]
    return get


@pytest.mark.parametrize("name", list(FLOORS))
def test_proguard_changes_methods_and_keeps_every_one(proguarded, corpus_jars, name):
    # intra-method mode keeps every class and member, so each method pairs by name and descriptor
    opt = proguarded(name)
    a, b = pp.code_listings(corpus_jars[name]), pp.code_listings(opt)
    assert set(a) == set(b), name
    assert len(pp.changed_methods(corpus_jars[name], opt)) > len(a) // 50, name


@pytest.mark.parametrize("name", list(FLOORS))
def test_proguard_output_validates(proguarded, corpus_jars, name):
    row = pp.validate_pair(name, corpus_jars[name], proguarded(name), METHOD_TIMEOUT)
    found = {k.split("(")[0] for k in row.counterexamples}
    expected = NULL_TO_STRING_CHANGES.get(name, set())
    assert found <= expected, row.unknown_reasons
    # found on the first inputs tried (one of each generated object first); a subset only so that a loaded CI
    # machine whose screen runs out of time on one of them does not fail the test
    assert len(found) >= min(3, len(expected)), (found, row.unknown_reasons)
    for key, cx in row.counterexamples.items():
        assert any(a.endswith("whose toString() returns null)") for a in cx["args"]), (key, cx)
        assert cx["opt"] == "throws java/lang/NullPointerException", (key, cx)
    assert row.changed > 0
    # ProGuard's changes are intra-method: what is measured is each method's own change proved, i.e. equivalent,
    # or unknown only because a callee it calls is not proved (modular validation never assumes such a callee:
    # docs/validation.md, "Modular proofs")
    assert row.own_share >= FLOORS[name], (row.equivalent, row.given_callees, row.changed, row.unknown_reasons)


def test_jamas_svd_constructor_needs_the_loose_induction_retries(proguarded, corpus_jars, monkeypatch):
    # The loose induction search from the roots first pairs ORIG's second read of the row V[i] (on the heap
    # after the first read) with OPT's only read (on the loop's heap); those two heaps match only through a
    # cycle no order explains, so the witness was dropped. Ruling that cycle out and searching again proves it.
    from peggy_jvm.rules import default_rules
    from peggy_jvm.validate import prove
    from peggy_jvm.validate.pairing import load_side, pair_methods
    orig, opt = load_side(corpus_jars["jama"]), load_side(proguarded("jama"))
    pair = next(p for p in pair_methods(orig, opt, {}).pairs
                if p.orig_class.name == "Jama/SingularValueDecomposition" and p.orig.name == "<init>")
    rules = default_rules().active()
    # a work budget, not a clock: where a timed saturation stops decides what induction sees (30 iterations
    # prove it, 7.7 s of CPU on the 2-core machine; 20 do not, nor 55 at the node limit)
    budget = prove.ProofBudget(time_s=None, max_iterations=30)
    # since the normal forms merge a read made again right after the same read (validate/normalize.py
    # merge_repeated_reads), ORIG's second read of V[i] is its first, and no saturation is needed
    got = prove.prove_pair(pair, orig.hierarchy, opt.hierarchy, rules, budget)
    assert got.proved and got.reason.startswith("same PEG"), got.reason
    # the retries themselves, on the PEGs with both of ORIG's reads. They run after the saturation, on its
    # e-graph (prove._close_by_bisimulation), so one saturation serves both halves (each took ~30 s of CPU):
    # without the retries the proof fails, and the e-graph it saturated (prove_pair's ``keep``) has its roots
    # merged by the search from the roots with them, as prove_pair does when they are on
    monkeypatch.setattr(prove, "merge_repeated_reads", lambda peg: peg)
    retries = prove.ROOT_INDUCTION_RETRIES
    assert retries > 0
    monkeypatch.setattr(prove, "ROOT_INDUCTION_RETRIES", 0)
    kept: list[prove.Saturated] = []
    got = prove.prove_pair(pair, orig.hierarchy, opt.hierarchy, rules, budget, keep=kept)
    assert not got.proved and got.reason.startswith("not proved: saturation iteration limit after 30"), got.reason
    assert len(kept) == 1 and not kept[0].eg.equiv(kept[0].ra, kept[0].rb)
    saturated = kept[0]
    monkeypatch.setattr(prove, "ROOT_INDUCTION_RETRIES", retries)
    prove._close_by_bisimulation(saturated.eg, saturated.ra, saturated.rb, math.inf, budget.induction_steps)
    assert saturated.eg.equiv(saturated.ra, saturated.rb)
