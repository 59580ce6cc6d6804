"""Rule soundness: every shipped rule over pure operators and constants is evaluated on both sides with Java
values of the right types (edge values: 0, -1, MIN, MAX, NaN, -0.0, inf, subnormals...), so an unsound axiom
fails CI. Rules over the heap, loops and calls cannot be evaluated on values; which ones are exempt is pinned
here, and they are tested on e-graph instances in tests/test_axioms_equalities.py instead. The right-hand sides
of the library-method rules are checked against independent models of the JDK methods."""
from __future__ import annotations

import itertools
import math
import random

import pytest

from peggy_jvm import semantics as S
from peggy_jvm.rules import parse_axioms
from peggy_jvm.rules.check import check_rule, evaluate, same_value
from peggy_jvm.rules.library import axiom_files, default_axiom_dir, parse_axiom_files

# the shipped axioms' rules as parsed (what default_rules() compiles): the tests check the parsed rules, and
# compiling them at import would cost every pytest-xdist worker that collects this file ~0.5 s of CPU
ASTS = {ast.name: ast for f in parse_axiom_files(axiom_files(default_axiom_dir())) for ast in f.rules}

# Groups whose rules mention effects, projections, loop operators, method exits or reference comparison, or
# conditions with no meaning on plain values. Everything else must be checkable, and sound. (peg.exit is proved
# necessary and checked on the JVM by tests/test_validate_rewrites.py.)
EXEMPT_GROUPS = ("peg.loop", "peg.distrib.theta", "peg.distrib.eval", "peg.exit", "heap.", "effects", "java.lang",
                 "compare.ref", "validate.heap", "compilers.bool.heap")


def _exempt_group(g: str) -> bool:
    return any(g == e or g.startswith(e if e.endswith(".") else e + ".") or g == e.rstrip(".") for e in EXEMPT_GROUPS)


@pytest.mark.parametrize("name", sorted(n for n, a in ASTS.items() if not _exempt_group(a.group)))
def test_pure_rule_is_sound(name):
    res = check_rule(ASTS[name])
    assert res.status == "sound", str(res)
    assert res.cases > 0 or "ill-typed" in res.reason


def test_exempt_rules_are_exactly_the_heap_loop_and_call_rules():
    exempt = {n for n, a in ASTS.items() if check_rule(a, samples=1).status == "exempt"}
    expected = {n for n, a in ASTS.items() if _exempt_group(a.group)}
    assert exempt == expected


@pytest.mark.parametrize("text,witness", [
    ("rule bad: (gt.i (add.i ?x (const.i 1)) ?x) => (const.b true)", {"?x": S.INT_MAX}),
    ("rule bad: (add.f (add.f ?a ?b) ?c) => (add.f ?a (add.f ?b ?c))", None),
    ("rule bad: (add.d (add.d ?a ?b) ?c) => (add.d ?a (add.d ?b ?c))", None),
    ("rule bad: (sub.d ?x ?x) => (const.d 0.0)", None),  # NaN, infinities
    ("rule bad: (mul.f ?x (const.f 0.0)) => (const.f 0.0)", None),  # -0.0, NaN
    ("rule bad: (add.d ?x (const.d 0.0)) => ?x", {"?x": -0.0}),
    ("rule bad: (lt.i (neg.i ?a) (neg.i ?b)) => (gt.i ?a ?b)", None),  # neg MIN == MIN
    ("rule bad: (f2i (i2f ?x)) => ?x", None),  # i2f rounds above 2^24
    ("rule bad: (shl.i ?x (const.i 32)) => (const.i 0)", None),  # the count is masked
    ("rule bad: (%f:pure2 ?x ?y) => (%f ?y ?x)", None),  # not every operator is commutative
    # conditional constant folding in the wrong arm, and factoring an operand the arms do not share
    ("rule bad: (phi (ne.i ?x ?k) (%f:pure2 ?x ?y) ?b) => (phi (ne.i ?x ?k) (%f ?k ?y) ?b) if const(?k)", None),
    ("rule bad: (phi ?c (%f:pure2 ?x ?a) (%f ?y ?b)) => (%f ?x (phi ?c ?a ?b))", None),
    # validate.ax's rules without the facts that make them true: the sign test, the power of two, int operands
    ("rule bad: (rem.i ?x ?k) => (and.i ?x (sub.i ?k (const.i 1))) if pow2(?k)", {"?x": -3, "?k": 8}),
    ("rule bad: (phi (ge.i ?x (const.i 0)) (rem.i ?x ?k) ?b) => (phi (ge.i ?x (const.i 0)) (and.i ?x (sub.i ?k "
     "(const.i 1))) ?b)", None),
    ("rule bad: (phi (lt.i ?x (const.i 0)) (shr.i ?x ?s) ?b) => (phi (lt.i ?x (const.i 0)) (div.i ?x (shl.i "
     "(const.i 1) ?s)) ?b)", None),
    ("rule bad: (phi (lt.i (cmpg.d ?x ?y) (const.i 0)) ?x ?y) => (phi (le.i (cmpg.d ?x ?y) (const.i 0)) ?x ?y)",
     None),  # -0.0 against 0.0
    ("rule bad: (and.i (i2b ?x) (const.i 65535)) => (and.i ?x (const.i 65535))", {"?x": 128}),
])
def test_the_checker_catches_unsound_rules(text, witness):
    (rule,) = parse_axioms(text, "bad.ax").rules
    res = check_rule(rule)
    assert res.status == "unsound", str(res)
    if witness:
        env = {k: v for k, v in witness.items()}
        assert not same_value(evaluate(rule.lhs, env), evaluate(rule.rhs, env))


def test_conditions_restrict_the_checked_cases():
    (rule,) = parse_axioms("rule ok: (div.i ?x ?x) => (const.i 1) if nonzero(?x)", "c.ax").rules
    assert check_rule(rule).status == "sound"
    (rule,) = parse_axioms("rule bad: (div.i ?x ?y) => (const.i 1) if nonzero(?x)", "c.ax").rules
    assert check_rule(rule).status == "unsound"


# -- library methods against independent models ----------------------------------------------------------------
def _abs_d(x: float) -> float:  # Double.longBitsToDouble(doubleToRawLongBits(a) & 0x7fff_ffff_ffff_ffff)
    return S.long_bits_to_double(S.double_to_raw_long_bits(x) & 0x7FFFFFFFFFFFFFFF)


def _abs_f(x: float) -> float:
    return S.int_bits_to_float(S.float_to_raw_int_bits(x) & 0x7FFFFFFF)


def _sign(a: int, b: int) -> int:
    return (a > b) - (a < b)


MODELS = {
    "math-abs-int": (lambda x: S.wrap_i(abs(x)), "I"),
    "math-abs-long": (lambda x: S.wrap_l(abs(x)), "J"),
    "math-abs-double": (_abs_d, "D"),
    "math-abs-float": (_abs_f, "F"),
    "math-max-int": (max, "II"), "math-min-int": (min, "II"),
    "math-max-long": (max, "JJ"), "math-min-long": (min, "JJ"),
    "integer-max": (max, "II"), "integer-min": (min, "II"),
    "integer-sum": (lambda x, y: S.wrap_i(x + y), "II"),
    "long-sum": (lambda x, y: S.wrap_l(x + y), "JJ"),
    "integer-compare": (_sign, "II"), "long-compare": (_sign, "JJ"),
    "integer-signum": (lambda x: _sign(x, 0), "I"),
}
_VALUES = {
    "I": [0, 1, -1, 7, -7, S.INT_MAX, S.INT_MIN, S.INT_MIN + 1],
    "J": [0, 1, -1, 7, -7, S.LONG_MAX, S.LONG_MIN, S.LONG_MIN + 1, S.INT_MIN],
    "D": [0.0, -0.0, 1.5, -1.5, math.inf, -math.inf, math.nan, 5e-324, -5e-324],
    "F": [0.0, -0.0, 1.5, -1.5, math.inf, -math.inf, math.nan, S.to_f32(1.4e-45), -S.to_f32(1.4e-45)],
}


def test_every_library_value_rule_has_a_model():
    value_rules = {n for n, a in ASTS.items() if a.group == "java.lang" and not n.endswith("-heap")}
    assert value_rules == set(MODELS)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_library_rule_matches_the_jdk_model(name):
    model, sig = MODELS[name]
    rule = ASTS[name]
    rng = random.Random(name)
    names = ["?x", "?y"][:len(sig)]
    domains = [_VALUES[c] + [rng.randint(-(2 ** 40), 2 ** 40) if c in "IJ" else rng.uniform(-1e9, 1e9)
                             for _ in range(20)] for c in sig]
    domains = [[S.wrap_i(v) if c == "I" and isinstance(v, int) else (S.to_f32(v) if c == "F" else v)
                for v in d] for c, d in zip(sig, domains)]

    for vals in itertools.product(*domains):
        env = dict(zip(names, vals))
        got = evaluate(rule.rhs, env)
        want = model(*vals)
        assert same_value(got, want), (name, vals, got, want)


# -- the built-in rules' arithmetic facts, on values ----------------------------------------------------------
@pytest.mark.parametrize("bits,mul,shl,wrap", [(32, S.imul, S.ishl, S.wrap_i), (64, S.lmul, S.lshl, S.wrap_l)])
def test_builtin_powers_of_two_and_shift_masks(bits, mul, shl, wrap):
    from peggy_jvm.rules.builtin import _pow2
    rng = random.Random(bits)
    xs = [0, 1, -1, 3, wrap(1 << (bits - 1)), wrap((1 << (bits - 1)) - 1)] + \
         [wrap(rng.getrandbits(bits)) for _ in range(50)]
    for k in range(1, bits):
        c = wrap(1 << k)
        assert _pow2(c, bits) == k
        for x in xs:
            assert mul(x, c) == shl(x, k)  # mul-pow2-shl / shl-pow2-mul
    assert _pow2(0, bits) is None and _pow2(1, bits) is None and _pow2(6, bits) is None
    for count in (-1, bits, bits + 1, 2 * bits - 1, -bits, 1000):
        for x in xs:
            for op in ((S.ishl, S.ishr, S.iushr) if bits == 32 else (S.lshl, S.lshr, S.lushr)):
                assert op(x, count) == op(x, count & (bits - 1))  # shift-count-mask
