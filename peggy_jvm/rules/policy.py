"""The optimizer's rule policy: which rules the full stage saturates with, and which the self-check trusts.

What this module owns
    :data:`SAFE_GROUPS` (the rule groups the ``full`` stage saturates with, and why each is sound: the comment
    above it), :func:`safe_rules` (their active rewrites), :func:`safe_groups` (which groups of a rule set they
    are) and :func:`with_safe_groups` (a rule set with them on as well: ``validate``'s default rules),
    :class:`RuleOptions` (the user's say: ``optimize --axioms/--no-default-axioms/--rules``),
    :func:`load_rule_options`, :func:`optimizer_rules` (the rules saturation runs) and :func:`proof_rules` (the
    rules the self-check proves with: those and :data:`PROOF_GROUPS`, :func:`proof_only_rules`).

User rules
    The user's axiom files join the safe groups: every group they define (unless its ``group`` line says
    ``off``) is on, then ``--rules`` switches apply in order. The self-check (``validate.selfcheck``) proves
    every rewrite with :func:`proof_rules`: the default safe rules (whatever ``--rules`` switched) plus only
    those active user rules that the soundness checker (rules/check.py) evaluates and finds sound, the same
    evidence the default value rules rest on. The proof's trust comes from these verdicts, not from the command
    line having refused anything: a user rule found unsound, or one the checker cannot evaluate (exempt: loops,
    heap, effects), only steers the search and never vouches for its own rewrite (docs/axioms.md, "Your own
    axioms"). Loading and the verdicts are cached per options value (:func:`load_rule_options`), so each
    process parses, compiles and fuzzes once.

Inputs: the bundled axioms (package data), the user's axiom files and switches. Outputs: lists of rewrites.
Invariants: the same options give the same rewrites in the same order in every process; :func:`proof_rules`
never holds a user rule the soundness checker did not find sound.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..egraph.runner import Rewrite
from . import check as rule_check
from .check import CheckResult
from .compile import compile_rule
from .library import RuleSet, axiom_files, default_axiom_dir, default_rules, load_rules, parse_axiom_files
from .syntax import RuleAST

__all__ = ["safe_rules", "safe_groups", "with_safe_groups", "SAFE_GROUPS", "PROOF_GROUPS", "EXCLUDED_SUBGROUPS",
           "EXCLUDED_RULES", "proof_only_rules",
           "RuleOptions", "UserRule", "load_rule_options", "optimizer_rules", "proof_rules"]

# The rule groups the full stage saturates with, while the validator (issue 7) cannot check its output.
# Fuzzer-checked (tests/test_axioms_sound.py instantiates every rule on Java edge values, bit-exact):
#   arith.int, arith.long, arith.float, arith.double, bits.int, bits.long, logic, compare.int, compare.cmp,
#   convert, peg.phi, peg.distrib.phi: pure operators (total functions of their inputs; phi is pointwise).
#   peg.phi.cond (conditional constant folding: in the arm of phi(x == k, ..) x is k) and peg.phi.factor (an
#   operand both arms share taken out of the phi) are fuzzer-checked the same way, every %f instance included.
# Built-in rules (code): fold (folds with OPS[op].fn, the same semantics the JVM is tested against, never a
#   division by zero); arith.shift (x * 2^k == x << k is exact in two's complement; a constant shift count c
#   equals c & 31 / c & 63 by the JVM's definition of shifts).
# Exempt from the fuzzer, argued here:
#   peg.distrib.eval: eval_l picks one iteration of a sequence; a pure operator applied pointwise commutes with
#     picking (eval(f(a, b), i) = f(eval(a, i), eval(b, i))), and so does phi. Pure operators never throw
#     (div.i/rem.i only ever see a divisor checked by check.zero, an effect that stays on the sigma chain), so
#     computing them outside the loop changes nothing observable.
#   peg.loop: Tate's loop axioms by the definitions of theta/eval/pass (eval(theta(a,b),0) = a for invariant a,
#     eval(theta(a,b),succ i) = eval(b,i), pass(true) = 0, theta(a, itself) = a); eval of an invariant VALUE
#     keeps the loop itself on the sigma chain (every loop threads sigma; the method's result depends on it), so
#     non-termination and exceptions of the loop are kept; eval of an invariant SIGMA (dead-loop deletion)
#     requires terminates(i), which only accepts zero/succ and pass of a condition that is true at some
#     iteration (constant true, or a +-1 counter reaching an invariant bound, which int wrap-around guarantees);
#     an invariant sigma means the loop has no effect and no inner loop (inner loops thread the sigma too).
#     theta-bisimulation merges thetas with equal initial values whose next values are equal by induction
#     (through loop nests: a cycle of the comparison must make the loop indexes decrease lexicographically).
#   peg.loop.strength: t*k for t = theta(a, t + c) with invariant k is theta(a*k, t*k + c*k) by induction and
#     distributivity, which holds in Z/2^32 and Z/2^64 (wrap-around) for every value of c, so the step c may vary
#     per iteration; likewise << k (multiplication by 2^(k&31)). theta-factor (builtin, same group): s = theta(a,
#     s + x*k) with k invariant is a + u*k for u = theta(0, u + x), by the same induction and distributivity (int
#     and long only: float rounding does not distribute); x is read at the same index on both sides.
#   peg.loop.closed: the exit value of a +-1 counter against an invariant bound (it cannot overflow before
#     reaching the bound); the guarded form may exit earlier on an exception, but then the method ends with it
#     (handlers are not reverted, see revert.py) and the value is never read. theta-linear (builtin):
#     s = theta(a, s + c), c invariant, is a + i * c for the counter i = theta(0, i + 1), by induction and
#     distributivity in Z/2^32; with the exit value of the counter it gives accumulators in closed form.
#   peg.loop.hoist (under the peg.loop prefix): a loop's FIRST read of invariant operands (a row a[i], a length),
#     not used by the break test, with nothing on the rest of the iteration's heap chain able to change what it
#     reads, done once in front of the loop in the arm of its entry test: eval(X, pass(C)) = phi(C@0, X@0,
#     eval(X~, pass(C~))). A zero-trip loop reads nothing (the phi); otherwise the read IS the first effect of
#     iteration 0, so it throws exactly where the original's did, and by induction later iterations read the
#     same place of a heap no chain effect wrote (rules/hoist.py has the argument; docs/axioms.md, "Heap reads
#     the optimizer uses"; tests/test_hoist.py). Its variant past earlier reads (LoopHoist(after_reads=N): a
#     length after reads of the same array, an element after its array's length; sound because the first
#     earlier read then throws exactly what the hoisted read would) is off here: it pays nothing on the kernels
#     with today's lowering (rules/hoist.py).
#   peg.loop.peel (under the peg.loop prefix): loop peeling, eval(X, pass(C)) = phi(C@0, X@0, eval(X+, pass(C+)))
#     by the definition of pass (0 when C holds at 0, else one more than in the shifted loop); the first test's
#     guard is dropped because the loop's heap is selected by the same phi (see rules/peel.py).
#   peg.phi.facts (branch-facts, rules/branchfacts.py; docs/axioms.md, "Facts from branch conditions"): phi(c, a, b)
#     = phi(c, a[c := true], b[c := false]), and x := k in the arm where x == k holds (int equality is identity).
#     Every operator but a loop's own (theta/eval/pass/shift/peel) is a function of its inputs at the same loop
#     indexes; the copy replaces a target only through loop operators of loops the target does not vary in, so
#     it reads the target only at points where it equals its value whenever the phi takes that arm (the phi
#     never looks at the other arm). Heaps and effects are values like any other: a copied effect sees equal
#     inputs. Classes not copied are kept, which is always sound.
#   peg.loop.unswitch (loop-unswitch, rules/unswitch.py, under the peg.loop prefix): eval_l(X, pass_l(C)) =
#     phi(c, eval_l(X[c := true], pass_l(C[c := true])), eval_l(X[c := false], ...)) for the condition c of a phi
#     in the loop body that varies in neither l nor a deeper loop: c has one value in every iteration, so the
#     whole body equals its copy under that value (branch-facts' argument), the copies' heaps are threaded in
#     the same order (effects keep their order), and c is a value (no pure node throws; a heap value it reads
#     was read before the loop). The copies are priced in full (docs/cost-model.md): chosen only when they pay.
#   peg.loop.optimistic (loop-optimistic, rules/optimistic.py, under the peg.loop prefix; docs/optimistic.md): a
#     class merged with a constant, and a divisor check dropped, only on facts of a converged optimistic
#     analysis; the facts hold at every iteration vector by induction over the vectors (lexicographic) and, at
#     one vector, over ranks (no class's fact rests on the class itself at the same iteration), and say nothing
#     from a loop's exit test, so the unions are PEG equalities. Its value numbering merges thetas by the same
#     induction (the hypothesis used only through pointwise nodes and theta, at the same or earlier iterations).
#   heap.array.read, heap.field.read (docs/axioms.md, "Heap reads the optimizer uses"): (a) a read's VALUE over
#     an effect that cannot change what it reads (a read, a divisor check, a write of another field or of a
#     field rather than an element; for arraylength any write: lengths are final). If that effect completes
#     normally the read sees the same heap; a write that throws changes nothing (the JVM checks before it
#     stores); if it throws, the rewritten node is still on the sigma chain, so the method ends with that
#     exception, and a handler of it cannot read the later read's value (phi-profiles refuse such a read).
#     (b) a read taken off the sigma chain (`rho_sigma(E) => s`) only where it cannot throw and its value is
#     an earlier read's on the chain: the same element read before with only effects in between that (a)
#     looks through (`read_before`), the same field of the same object just read, the length of a fresh
#     array; `threw(E) => false` only for an element accessed before or a non-null reference. Extraction
#     refuses any read off the chain whose value is not shared with one on it (effects_on_sigma: the reverter
#     would emit it where the value is wanted, maybe after a write of the same place); the chain removals
#     that keep a value of their own stay out, since no extraction could use them. Reads are never moved
#     before a loop or a branch by these rules (only peg.loop.hoist does, under the loop's entry test);
#     the reverter never hoists an effect (revert.hoistable). Tested on the JVM with inputs that throw at
#     every access (tests/test_heapreads.py).
#   effects.divisor (axioms/effects.ax): a divisor check of a non-zero constant neither throws nor changes the
#     heap (JVMS idiv/irem/ldiv/lrem throw ArithmeticException for a zero divisor only); the builder checks
#     every divisor the bytecode computes, but none the bytecode gives as a constant (peg/build.py), so without
#     it the self-check cannot prove code whose divisor became a constant (BenchKernels.strideSum's `n / stride`,
#     stride = 16: its rewrite, `i * stride` hoisted as `i << 4`, was refused as not proved).
# Excluded: the rest of effects (check-twice, checkcast of null), java.lang (calls as pure operators); of
#   heap.array and heap.field the value forwarding through writes of the same place and write-over-write, and
#   read-over-write by `distinct` or `differ` (docs/axioms.md lists doubts about the exception model and
#   allocation);
#   compare.ref (distinct/nonnull reason about allocation and the receiver); the groups that are off by default
#   (sound but they blow up within a per-method budget).
SAFE_GROUPS: tuple[str, ...] = (
    "arith.int", "arith.long", "arith.float", "arith.double", "arith.shift", "bits.int", "bits.long", "logic",
    "compare.int", "compare.cmp", "convert", "fold", "peg.phi", "peg.phi.cond", "peg.phi.factor", "peg.phi.facts",
    "peg.distrib.phi", "peg.distrib.eval",
    "peg.loop", "peg.loop.strength", "peg.loop.closed", "peg.loop.unswitch", "heap.array.read", "heap.field.read",
    "effects.divisor",
)
#: Rule groups the proofs of the optimizer's output use beyond :data:`SAFE_GROUPS` (:func:`proof_rules`: the
#: self-check, and ``validate``'s replay of it), which saturation does without: they only relate forms the proofs
#: themselves bring together.
#:   compare.ref.identity (axioms/compare.ax): `a == a` is true, `a != a` false and `!(a == b)` is `a != b` for
#:   references (JVMS if_acmp compares identities, null included; nothing about allocation or null, unlike the
#:   rest of compare.ref). With phi-not, an inlined callee's `o != null` test (javac's ifnonnull; the body enters
#:   the proof as built, rules/inline.py) meets the emitted code's `o == null` with its arms swapped (the proofs
#:   lift both methods with `==` tests first, validate/branchshape.py): without it the self-check could not prove
#:   an inlined `Validate.notNull` (session 19). In the optimizer's saturation it only changed ties among equal
#:   choices (commons-lang3: 15 classes' bytes, one rewrite lost, 1.06x CPU), so it stays out of it. The value
#:   fuzzer cannot evaluate `eq.a` (exempt, tests/test_axioms_sound.py); tests/test_axioms_equalities.py checks
#:   these rules on e-graph instances, a wrong arm included.
#:   peg.exit (axioms/peg-exit.ax): a phi of two returns (two throws) is the return (throw) of the phis of their
#:   heaps and values: the method's outcome is the pair the condition picks, whichever way it is written. The
#:   emitted code returns in place (revert/tidy.py ReturnsInPlace) where a callee inlined into a `return f(x)`
#:   gave one return of a phi (commons-lang3's BooleanUtils.toStringOnOff: `return toString(b, "on", "off")`),
#:   and where the original shares one return block; without it the self-check refused such code, or the full
#:   stage fell back to jumps to a shared return (pipeline._returns_by_jumps). Exempt from the value fuzzer
#:   (outcomes, heaps); checked on e-graph instances (tests/test_axioms_equalities.py).
PROOF_GROUPS: tuple[str, ...] = ("compare.ref.identity", "peg.exit")
#: sub-groups under the prefixes above that stay off (blow-up, see axioms/*.ax)
EXCLUDED_SUBGROUPS: tuple[str, ...] = ("arith.int.ac", "arith.long.ac", "peg.distrib.phi.more",
                                       "peg.distrib.phi.one", "peg.loop.strength.varying")
#: Rules of the safe groups kept off. Dead-loop deletion (eval-invariant-heap: eval of an invariant sigma, given a
#: terminating index) is on: it takes an effect-free loop off the sigma chain, and the reverter computes such a
#: loop where its values are wanted (peg.loops.pure_loops re-checks on the extracted PEG itself that the loop has
#: no effect and ends; :func:`peggy_jvm.pegextract.select.loops_on_sigma` refuses any other loop off the chain).
EXCLUDED_RULES: tuple[str, ...] = ()

_CACHED_RULES: list[Rewrite] | None = None
_CACHED_PROOF_EXTRA: list[Rewrite] | None = None
_CACHED_DEFAULTS: RuleSet | None = None


def _default_rule_set() -> RuleSet:
    """A rule set of its own (groups and switches free to change) over the default rules, which are parsed and
    compiled once per process: :func:`safe_rules` and :func:`proof_only_rules` both select from them (each used
    to parse and compile all the bundled axioms, about 0.3 CPU-s a process each; the two selections share no
    rule, so sharing the rule objects changes no list)."""
    global _CACHED_DEFAULTS
    if _CACHED_DEFAULTS is None:
        _CACHED_DEFAULTS = default_rules()
    d = _CACHED_DEFAULTS
    return RuleSet(list(d.rewrites), dict(d.groups), set(d.disabled_rules), dict(d.asts))


def _under(group: str, names: Sequence[str]) -> bool:
    return any(group == n or group.startswith(n + ".") for n in names)


def safe_groups(groups: Iterable[str]) -> list[str]:
    """Of ``groups`` (a rule set's group names), those the optimizer saturates with: under a name of
    :data:`SAFE_GROUPS`, not under one of :data:`EXCLUDED_SUBGROUPS`."""
    return [g for g in groups if _under(g, SAFE_GROUPS) and not _under(g, EXCLUDED_SUBGROUPS)]


def with_safe_groups(rs: RuleSet) -> RuleSet:
    """``rs`` with every group of :func:`safe_groups` on as well (none switched off): ``validate``'s default
    rules, so that they hold every rule the optimizer's self-check proves with (validate/driver.py)."""
    for g in safe_groups(rs.groups):
        rs.groups[g] = True
    return rs


def _select_safe(rs: RuleSet, extra_groups: Sequence[str] = (), safe: bool = True) -> RuleSet:
    """``rs`` with exactly the safe groups present in it (none unless ``safe``) and ``extra_groups`` (by exact
    name, not as prefixes) on, the excluded sub-groups and rules of the safe groups off."""
    on = set(safe_groups(rs.groups)) if safe else set()
    for g in rs.groups:
        rs.groups[g] = g in on
    rs.disabled_rules.clear()
    for r in EXCLUDED_RULES:
        rs.disable(r)
    for g in extra_groups:  # the user asked for these: on whatever their names
        rs.groups[g] = True
    return rs


def safe_rules(rules: RuleSet | None = None) -> list[Rewrite]:
    """The active rewrites of :data:`SAFE_GROUPS` (the default rule set when ``rules`` is None; cached)."""
    global _CACHED_RULES
    if rules is None and _CACHED_RULES is not None:
        return _CACHED_RULES
    out = _select_safe(rules if rules is not None else _default_rule_set()).active()
    if rules is None:
        _CACHED_RULES = out
    return out


@dataclass(frozen=True)
class RuleOptions:
    """The user's say in the full stage's rules. Paths and switches rather than rules, so that it pickles
    cheaply to the worker processes and keys their cache."""
    axioms: tuple[Path, ...] = ()  # files or directories of ``*.ax`` files, added to the defaults
    defaults: bool = True  # False: the bundled axioms are left out and the built-in rules off
    switches: tuple[str, ...] = ()  # ``+group,-group,...`` strings, applied in order (RuleSet.switch)

    def user_files(self) -> list[Path]:
        return [f for p in self.axioms for f in axiom_files(p)]


@dataclass(frozen=True)
class UserRule:
    """One of the user's rules that will run, with the soundness checker's verdict on it."""
    ast: RuleAST
    rewrites: tuple[str, ...]  # the names of its rewrites (``NAME``, and ``NAME-rev`` for ``<=>``)
    check: CheckResult


_LOADED: dict[RuleOptions, tuple[RuleSet, list[UserRule]]] = {}


def load_rule_options(options: RuleOptions) -> tuple[RuleSet, list[UserRule]]:
    """The rule set the full stage saturates with under ``options`` (its active rewrites), and each active user
    rule with the soundness checker's verdict; cached per value. Raises
    :class:`~peggy_jvm.rules.syntax.AxiomError` (parse, type, duplicate name, non-UTF-8 text: ``file:line:col``),
    :class:`ValueError` (an unknown name in a switch) and :class:`OSError`."""
    if options in _LOADED:
        return _LOADED[options]
    user_files = options.user_files()
    parsed = parse_axiom_files(user_files)
    user_groups = [g for f in parsed for g, on in f.groups.items() if on]
    files = (axiom_files(default_axiom_dir()) if options.defaults else []) + user_files
    # the built-in rules are always loaded: without the defaults they are off, for --rules to switch on by name
    rs = _select_safe(load_rules(files), user_groups, safe=options.defaults)
    for spec in options.switches:
        rs.switch(spec)
    active = {r.name for r in rs.active()}
    user = []
    for ast in (a for f in parsed for a in f.rules):
        names = tuple(rw.name for rw in compile_rule(ast) if rw.name in active)
        if names:
            user.append(UserRule(ast, names, rule_check.check_rule(ast)))
    _LOADED[options] = rs, user
    return rs, user


def optimizer_rules(options: RuleOptions | None = None) -> list[Rewrite]:
    """:func:`safe_rules`, or the active rules of ``options`` (:func:`load_rule_options`)."""
    if options is None or options == RuleOptions():
        return safe_rules()
    return load_rule_options(options)[0].active()


def proof_only_rules() -> list[Rewrite]:
    """The rewrites of :data:`PROOF_GROUPS` (the bundled axioms; cached)."""
    global _CACHED_PROOF_EXTRA
    if _CACHED_PROOF_EXTRA is None:
        rs = _default_rule_set()
        for g in rs.groups:
            rs.groups[g] = _under(g, PROOF_GROUPS)
        rs.disabled_rules.clear()
        _CACHED_PROOF_EXTRA = rs.active()
    return _CACHED_PROOF_EXTRA


def proof_rules(options: RuleOptions | None = None) -> list[Rewrite]:
    """What the self-check proves with: :func:`safe_rules` and :func:`proof_only_rules`, plus the user's active
    rules (``options``) that the soundness checker evaluates and finds sound (see the module docstring for why).
    :func:`safe_rules`' own objects, so that the self-check knows them for the optimizer's
    (``validate.selfcheck``)."""
    if options is None or not options.axioms:
        return safe_rules() + proof_only_rules()
    rs, user = load_rule_options(options)
    vouched = {n for u in user if u.check.status == "sound" for n in u.rewrites}
    return safe_rules() + proof_only_rules() + [r for r in rs.active() if r.name in vouched]
