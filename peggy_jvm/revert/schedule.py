"""The reverter's scheduling: what is computed where, asked by the emitter (:mod:`.revert`) as it writes code.

What this module owns
    :class:`Schedule`: the PEG's facts the reverter needs (users, loop variance, the ``eval`` nodes of each loop,
    the pure loops off the sigma chain, value types, which nodes are heaps or method results) and the scope
    state of the code written so far (the nodes bound in each open branch arm or loop iteration, the effects
    arms already joined ran, the conditions known on the current path, the loops whose iteration is open).
    From these it answers the scheduling questions: whether a node can be computed here (``available``), the
    nodes certainly evaluated with another (``must``), reach sets, the values to hoist before a pure node's
    operands, before a branch and out of a loop, the phis fused into one branch (``siblings``), a loop's
    thetas, the sigma chains that give the effects two arms share, and for a continuation several paths reach
    (:meth:`Schedule.continuation`) what each path computes before the join and what the join settles, with
    the code sizes that decide between a join and copies (:meth:`Schedule.code_weight`).
    :class:`RevertUnsupported`, raised by both halves for a PEG the reverter cannot turn into code.

Inputs: a PEG and the original method's parameters; then, from the emitter, the scope changes (``push``,
``pop``, ``arms``, ``join``, ``bind``, ``push_join``) as it opens and closes arms, joins and loops and binds
computed nodes.
Outputs: answers only: the schedule writes no code and creates no variable.
Invariants: a binding lives until its scope is popped and the innermost one is what ``lookup`` sees; every
answer depends only on the PEG and the scope state (so the same input gives the same code; node lists come in
a fixed order); the PEG is never changed.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from ..ir.nodes import (INT, LONG, FLOAT, DOUBLE, REF, Const, FieldRef, InvokeKind, IRType, Kind, MethodRef, Var,
                        type_of_descriptor)
from ..peg.graph import PEG
from ..peg.loops import pure_loops
from ..peg.ops import OPS, THROWING_DIVISIONS, Role, T


class RevertUnsupported(Exception):
    """The PEG cannot be turned into code by this reverter (one line saying why)."""


DONE = object()  # memo marker of an emitted sigma (or of a node with no value: a loop, an effect without one)
_KIND_TYPE = {T.INT: INT, T.LONG: LONG, T.FLOAT: FLOAT, T.DOUBLE: DOUBLE, T.REF: REF, T.BOOL: INT}
INVOKE = {f"invoke.{k.value}": k for k in InvokeKind}  # PEG operator -> invoke kind


def common_suffix(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The part two sigma chains share (once chains meet they coincide: sigma is linear)."""
    inb = set(b)
    for i, x in enumerate(a):
        if x in inb:
            return a[i:]
    return ()


class Schedule:
    """What is computed where: the PEG's facts and the scope state of the code the emitter has written."""

    def __init__(self, peg: PEG, params: list[Var]) -> None:
        self.nodes = peg.nodes
        self.params = params
        self.variance = peg.variance()
        self.types: dict[int, IRType | None] = {}
        self.scopes: list[dict[int, object]] = [{}]
        self.spent: list[set[int]] = [set()]  # per scope: effects that ran in arms already joined
        self.joined: list[set[int]] = []  # per branch being generated: effects its finished arms ran
        self.facts: list[dict[int, bool]] = [{}]  # per scope: conditions known on the current path
        # per scope: phis known equal to another node (at a join, one that every path to it decides the same way)
        self.settled: list[dict[int, int]] = [{}]
        self.users: dict[int, list[int]] = {}
        for i, n in enumerate(peg.nodes):
            for c in n.children:
                self.users.setdefault(c, []).append(i)
        self.evals_of: dict[int, list[int]] = {}
        for i, n in enumerate(peg.nodes):
            if n.op == "eval" and self.nodes[n.children[1]].op == "pass":
                self.evals_of.setdefault(n.children[1], []).append(i)
        # loops without effects that provably end: computed where their values are wanted (see pure_loops)
        self.pure = pure_loops(peg, self.variance)
        self.open_depths: list[int] = []  # depths of the loops whose iteration is being generated
        for i, n in enumerate(self.nodes):
            if n.op == "sigma0":  # the entry heap: every path starts from it
                self.scopes[0][i] = DONE

    # -- scopes ----------------------------------------------------------------------------------------------
    def lookup(self, n: int) -> object:
        for s in reversed(self.scopes):
            v = s.get(n)
            if v is not None:
                return v
        return None

    def bind(self, n: int, v: object) -> None:
        self.scopes[-1][n] = v

    def push(self, start: dict | None = None, known: tuple[int, bool] | None = None) -> None:
        """Enter a branch arm or loop iteration; ``known``: the condition this arm knows the value of."""
        self.scopes.append(start if start is not None else {})
        self.spent.append(set())
        if known is not None:
            known = self.tested(*known)  # kept under the operand: fact() looks through negations the same way
        self.facts.append({} if known is None else {known[0]: known[1]})
        self.settled.append({})

    def depth(self) -> int:
        """How many scopes are open (a branch's arms are the scopes above the depth before them)."""
        return len(self.scopes)

    def since(self, base: int) -> tuple[set[int], dict[int, bool]]:
        """What the current path did and learnt in the scopes above ``base``: the effects and loops it ran
        (also in arms already joined) and the conditions it knows."""
        ran: set[int] = set()
        known: dict[int, bool] = {}
        for i in range(base, len(self.scopes)):
            ran |= self.spent[i]
            ran.update(k for k in self.scopes[i] if OPS[self.nodes[k].op].role is Role.EFFECT
                       or self.nodes[k].op == "pass")
            known.update(self.facts[i])
        return ran, known

    def push_join(self, start: dict[int, object], ran: set[int], known: dict[int, bool],
                  settled: dict[int, int]) -> None:
        """Enter the join of several paths (:meth:`continuation`): ``start``, what every one of them computed
        (in the join's variables); ``ran``, the effects and loops some of them ran, which the code after the
        join may not run again; ``known``, the conditions all of them know; ``settled``, the phis each of them
        decides to the same node."""
        self.scopes.append(start)
        self.spent.append(set(ran))
        self.facts.append(dict(known))
        self.settled.append(dict(settled))

    def settled_as(self, x: int) -> int | None:
        """The node phi ``x`` is on the current path when a join settled it (:meth:`continuation`), else None."""
        for s in reversed(self.settled):
            y = s.get(x)
            if y is not None:
                return y
        return None

    def settled_here(self) -> dict[int, int]:
        """Every phi settled on the current path (:meth:`settled_as`), the innermost join's word last."""
        out: dict[int, int] = {}
        for s in self.settled:
            out.update(s)
        return out

    def tested(self, c: int, value: bool = True) -> tuple[int, bool]:
        """Bool node ``c`` having ``value`` as the fact it gives: the condition under its negations, and that
        condition's value (the form :meth:`push` keeps and :meth:`fact` looks up)."""
        while self.nodes[c].op == "not":
            c, value = self.nodes[c].children[0], not value
        return c, value

    def fact(self, c: int, assumed: dict[int, bool] | None = None) -> bool | None:
        """The value of bool node ``c`` on the current path, if a branch on it (or its negation) led here;
        ``assumed``: more conditions known (in :meth:`tested`'s form), for a path not generated yet."""
        c, pos = self.tested(c)
        neg = not pos
        if self.nodes[c].op == "const.b":
            return bool(self.nodes[c].attr) != neg
        if assumed is not None and c in assumed:
            return assumed[c] != neg
        for f in reversed(self.facts):
            v = f.get(c)
            if v is not None:
                return v != neg
        return None

    def pop(self, joined: bool = True) -> None:
        """Leave a branch arm or loop. When control goes on after it (``joined``), the effects it ran have
        happened for everything after the join, so no later code may run them again."""
        d = self.scopes.pop()
        self.facts.pop()
        self.settled.pop()
        gone = self.spent.pop() | {k for k in d if OPS[self.nodes[k].op].role is Role.EFFECT
                                   or self.nodes[k].op == "pass"}
        if joined:
            self.joined[-1] |= gone

    def arms(self) -> None:
        """Start a branch whose arms are generated next: their spent effects apply only after all of them."""
        self.joined.append(set())

    def join(self) -> None:
        self.spent[-1] |= self.joined.pop()

    def ran_in_joined_arm(self, o: int) -> bool:
        """Whether effect ``o`` ran in a branch arm already joined (it cannot run again on this path)."""
        return any(o in sp for sp in self.spent)

    def open_loop(self, d: int) -> None:
        """The iteration of a loop of depth ``d`` is being generated (until :meth:`close_loop`)."""
        self.open_depths.append(d)

    def close_loop(self) -> None:
        self.open_depths.pop()

    # -- types -----------------------------------------------------------------------------------------------
    def type_of(self, n: int) -> IRType:
        t = self.types.get(n)
        if t is None:
            t = self._type(n, set())
            self.types[n] = t
        return t

    def _type(self, n: int, seen: set) -> IRType:
        known = self.types.get(n)
        if known is not None:
            return known
        if n in seen:
            return REF
        seen.add(n)
        node = self.nodes[n]
        # a node's attribute has the type its operator gives it (peg/ops.py, OpSpec.attr): the casts say which
        op, attr = node.op, node.attr
        spec = OPS[op]
        if op == "param":
            return self.params[cast(int, attr)].type
        if op == "const.a":
            return cast(Const, attr).type
        if spec.output in _KIND_TYPE and op not in ("rho_value",):
            if op in ("checkcast",):
                return IRType(Kind.REF, cast(str, attr))
            return _KIND_TYPE[spec.output]
        if op in ("phi", "theta", "eval", "shift", "peel"):
            kids = node.children[1:] if op == "phi" else node.children[:1]
            for c in kids:
                t = self._type(c, seen)
                if t is not None:
                    return t
            return REF
        if op == "rho_value":
            return self.value_type(node.children[0])
        raise RevertUnsupported(f"no value type for {op}")

    def value_type(self, o: int) -> IRType:
        node = self.nodes[o]
        op, attr = node.op, node.attr  # typed by the operator, as in ``_type``
        if op in ("getfield", "getstatic"):
            return type_of_descriptor(cast(FieldRef, attr).descriptor)
        if op == "aload":
            elem = cast(str, attr)
            return type_of_descriptor(elem if elem != "L" else "Ljava/lang/Object;")
        if op == "arraylength":
            return INT
        if op in ("newarray", "checkcast"):
            return IRType(Kind.REF, cast(str, attr))
        if op == "new":
            return IRType(Kind.REF, cast(tuple[str, MethodRef], attr)[0])
        if op in INVOKE:
            desc = cast(MethodRef, attr).descriptor
            return type_of_descriptor(desc[desc.index(")") + 1:])
        if op == "invokedynamic":
            d = cast(tuple[str, str, object], attr)[1]
            return type_of_descriptor(d[d.index(")") + 1:])
        if op in ("check.zero.i",):
            return INT
        if op in ("check.zero.l",):
            return LONG
        raise RevertUnsupported(f"no value type for {op}")

    def is_sigma(self, n: int) -> bool:
        op = self.nodes[n].op
        spec = OPS[op]
        if spec.output is T.SIGMA:
            return True
        if op in ("phi", "theta", "eval"):
            return self._sigma_poly(n, set())
        return False

    def is_result(self, n: int) -> bool:
        node = self.nodes[n]
        if node.op == "phi":
            return self.is_result(node.children[1]) or self.is_result(node.children[2])
        if node.op == "eval":
            return self.is_result(node.children[0])
        return node.op in ("return", "throw")

    def _sigma_poly(self, n: int, seen: set) -> bool:
        if n in seen:
            return False
        seen.add(n)
        node = self.nodes[n]
        if node.op not in ("phi", "theta", "eval"):
            return OPS[node.op].output is T.SIGMA
        kids = node.children[1:] if node.op == "phi" else node.children[:1]
        return any(self._sigma_poly(c, seen) for c in kids)

    # -- availability ----------------------------------------------------------------------------------------
    def available(self, n: int, loops: bool = False, inside: frozenset[int] = frozenset()) -> bool:
        """Whether ``n`` can be computed here without running an effect, loop or theta this path has not run.
        With ``loops``, a pure loop (:func:`pure_loops`) not run yet counts as computable (it is then run
        here) when everything it needs is; ``inside``: the pure loops (passes) being judged (their thetas are
        computed by those loops)."""
        seen: set[tuple[int, frozenset[int]]] = set()
        stack = [(n, inside)]
        while stack:
            x, ins = stack.pop()
            if (x, ins) in seen or self.lookup(x) is not None:
                continue
            seen.add((x, ins))
            node = self.nodes[x]
            op = node.op
            depths = {self.nodes[q].attr for q in ins}
            if (op == "theta" and node.attr in depths) or x in ins:
                stack.extend((c, ins) for c in node.children)
                continue
            if op == "eval" and self.lookup(node.children[1]) is None:
                p = node.children[1]
                if p in ins:
                    stack.append((node.children[0], ins))
                    continue
                if not loops or p not in self.pure or node.attr in depths or node.attr in self.open_depths:
                    return False
                stack.append((node.children[0], ins | {p}))
                stack.append((p, ins | {p}))
                continue
            role = OPS[op].role
            if role is Role.EFFECT or op in ("pass", "theta", "sigma0"):
                return False
            if op == "eval":
                continue
            if op == "phi":
                k = self.fact(node.children[0])
                if k is not None:
                    stack.append((node.children[1 if k else 2], ins))
                    continue
                y = self.settled_as(x)
                if y is not None:
                    stack.append((y, ins))
                    continue
            stack.extend((c, ins) for c in node.children)
        return True

    # -- needs: reach sets, must-sets, branch fusion, sigma chains -------------------------------------------
    def reaches_node(self, starts, target: int) -> bool:
        return any(target in self.reach_set(x) for x in starts)

    def siblings(self, n: int, c: int) -> list[int]:
        """The phis on condition ``c`` wanted with ``n`` (branch fusion): same condition, same loops, not yet
        emitted, and computable inside the arms without effects or loops beyond the arms' own."""
        out = [n]
        var = self.variance[n]
        for u in self.users.get(c, ()):
            if u == n or self.nodes[u].op != "phi" or self.nodes[u].children[0] != c or self.variance[u] != var:
                continue
            if self.lookup(u) is not None or self.is_result(u) or self.settled_as(u) is not None:
                continue  # a phi of method results is code, generated where the result is wanted
            if self.is_sigma(u) and not self.is_sigma(n):
                continue  # a value phi never pulls effects forward: its sigma phi is emitted in sigma order
            out.append(u)
        if len(out) == 1:
            return out
        # keep value phis whose arms need no effect or loop other than what the sigma phi's same arm runs, and
        # none that needs another value sibling (that one may come later in the program); sigma phis on the same
        # condition inside the arms are fine: the arms resolve them
        sig = [p for p in out if self.is_sigma(p)]
        members = {p for p in out if p == n or not self.is_sigma(p)}
        arm_reach = [self.reach_set(self.nodes[sig[0]].children[k]) if sig else set() for k in (1, 2)]
        keep = []
        for p in out:
            if p == n or self.is_sigma(p):
                keep.append(p)
                continue
            if all(self.arm_ok(self.nodes[p].children[k], arm_reach[k - 1], members) for k in (1, 2)):
                keep.append(p)
        return keep

    def reach_set(self, n: int) -> set[int]:
        """Nodes ``n`` needs that are not computed yet (through every child)."""
        seen: set[int] = set()
        stack = [n]
        while stack:
            x = stack.pop()
            if x in seen or self.lookup(x) is not None:
                continue
            seen.add(x)
            stack.extend(self.nodes[x].children)
        return seen

    def arm_ok(self, a: int, sigma_arm: set[int], members: set[int]) -> bool:
        """Whether value ``a`` can be computed at the end of an arm that runs ``sigma_arm``: every effect and
        loop it needs is one the arm runs, and it needs no other value sibling."""
        for x in self.reach_set(a):
            if x != a and x in members:
                return False
            op = self.nodes[x].op
            if (OPS[op].role is Role.EFFECT or op == "pass") and x not in sigma_arm:
                return False
            if op == "sigma0":
                return False
        return True

    def effects_needed(self, n: int) -> set[int]:
        """The effects ``n`` needs that are not emitted yet."""
        return {x for x in self.reach_set(n) if OPS[self.nodes[x].op].role is Role.EFFECT}

    def sigma_chain(self, s: int, memo: dict[int, tuple[int, ...]]) -> tuple[int, ...]:
        """The sigma nodes every computation of ``s`` passes through, nearest first, down to the first one
        already emitted (a phi contributes only what both its arms pass through; a loop, what its sigma theta's
        initial value does)."""
        out: list[int] = []
        x: int | None = s
        while x is not None:
            if x in memo:
                out.extend(memo[x])
                break
            out.append(x)
            if self.lookup(x) is not None:
                break
            node = self.nodes[x]
            if node.op == "rho_sigma":
                x = self.nodes[node.children[0]].children[0]
            elif node.op == "theta":
                x = node.children[0]
            elif node.op == "eval":  # what the loop starts from: its iteration's own sigmas are not shared
                d = node.attr
                out.extend(y for y in self.sigma_chain(node.children[0], memo) if d not in self.variance[y])
                break
            elif node.op == "phi":
                rest = common_suffix(self.sigma_chain(node.children[1], memo),
                                      self.sigma_chain(node.children[2], memo))
                out.extend(rest)
                break
            else:
                break
        memo[s] = tuple(out)
        return memo[s]

    def must(self, n: int, memo: dict[int, frozenset[int]]) -> frozenset[int]:
        """Nodes certainly evaluated whenever ``n`` is (not through one arm of a phi only, nor into loops), that
        are not computed yet."""
        got = memo.get(n)
        if got is not None:
            return got
        memo[n] = frozenset()
        if self.lookup(n) is not None:
            return memo[n]
        node = self.nodes[n]
        if node.op == "phi":
            r = self.must(node.children[0], memo) | (self.must(node.children[1], memo) &
                                                     self.must(node.children[2], memo))
        elif node.op == "eval" and node.attr not in self.variance[node.children[0]]:
            r = self.must(node.children[0], memo)  # a value the loop does not change: computed for its eval
        elif node.op in ("theta", "eval", "pass"):
            r = frozenset()
        else:
            r = frozenset().union(*(self.must(c, memo) for c in node.children)) if node.children else frozenset()
        r = r | {n}
        memo[n] = r
        return r

    def must_bounded(self, n: int, budget: list[int], memo: dict[int, frozenset[int]]) -> frozenset[int]:
        """A subset of :meth:`must` (nodes certainly evaluated whenever ``n`` is) found within ``budget`` steps."""
        got = memo.get(n)
        if got is not None:
            return got
        if self.lookup(n) is not None:
            return frozenset()
        budget[0] -= 1
        node = self.nodes[n]
        if budget[0] < 0 or node.op in ("theta", "eval", "pass"):
            r: frozenset[int] = frozenset()
        elif node.op == "phi":
            r = self.must_bounded(node.children[0], budget, memo) | \
                (self.must_bounded(node.children[1], budget, memo) & self.must_bounded(node.children[2], budget, memo))
        else:
            r = frozenset().union(*(self.must_bounded(c, budget, memo) for c in node.children))
        memo[n] = r | {n}
        return memo[n]

    def hoistable(self, x: int, seen: set[int]) -> bool:
        """``x`` needs only pure operators, constants and parameters (and branches on such conditions), so it
        can be computed ahead of where it is needed: it has no effect and always ends."""
        if x in seen or self.lookup(x) is not None:
            return True
        seen.add(x)
        node = self.nodes[x]
        role = OPS[node.op].role
        if node.op == "unit":
            return False  # the value of a void return (a loop that never exits returns it): nothing to compute
        if role in (Role.CONST,) or node.op == "param":
            return True
        if node.op == "rho_value" and self.lookup(node.children[0]) not in (None, DONE):
            # the result of an effect this path already ran (a call's, a field's): its variable, read anywhere
            # after it; a value computed from it and a loop's invariants leaves the loop like one of parameters
            return True
        if role is Role.PURE and OPS[node.op].output is not T.BOOL and node.op != "guard":
            return all(self.hoistable(c, seen) for c in node.children)
        if node.op == "eval" and self.lookup(node.children[1]) is not None \
                and node.attr not in self.variance[node.children[0]] \
                and (self.lookup(node.children[0]) is not None or self.reads_effect_result(node.children[0], set())):
            # a value that does not vary in a loop already run here, read through its eval (`f / h` after the
            # loop summing f, h from before it: JAMA orthes): that value, which gen_eval computes for it. Only
            # one computed already or read off an effect's result, which leaves a loop when every iteration
            # computes it (hoist_invariants); one of parameters and constants through an eval stays where it is
            # read, as before (`k + 2` after a loop: TreeJoins.rows would store three such sums before the next)
            return self.hoistable(node.children[0], seen)
        if node.op == "phi" and not self.is_sigma(x) and not self.is_result(x):
            # a branch on an invariant condition (branch hoisting): the condition is tested, not materialized
            return self.cond_hoistable(node.children[0], seen) and \
                all(self.hoistable(c, seen) for c in node.children[1:])
        return False

    def reads_effect_result(self, x: int, seen: set[int]) -> bool:
        """Whether hoistable ``x`` (not computed yet) reads the result of an effect already run, not only
        parameters and constants."""
        if x in seen or self.lookup(x) is not None:
            return False
        seen.add(x)
        node = self.nodes[x]
        if node.op == "rho_value":
            return True
        return any(self.reads_effect_result(c, seen) for c in node.children)

    def cond_hoistable(self, c: int, seen: set[int]) -> bool:
        """Bool ``c`` is a condition :meth:`gen_cond` tests with pure, hoistable operands."""
        node = self.nodes[c]
        if node.op == "const.b":
            return True
        if node.op in ("not", "and", "or"):
            return all(self.cond_hoistable(k, seen) for k in node.children)
        if node.op == "phi":
            return self.cond_hoistable(node.children[0], seen) and \
                all(self.cond_hoistable(k, seen) for k in node.children[1:])
        if node.op in ("eq.a", "ne.a") or (node.op.endswith(".i") and
                                           node.op[:-2] in ("eq", "ne", "lt", "ge", "gt", "le")):
            return all(self.hoistable(k, seen) for k in node.children)
        return False

    def result_sigma_chain(self, r: int, memo: dict[int, tuple[int, ...]],
                           results: dict[int, tuple[int, ...]]) -> tuple[int, ...]:
        """The sigma nodes every path to result ``r`` (a ``return``/``throw`` or a phi of them) passes through,
        nearest first (:meth:`sigma_chain`; a result computed by a loop: none)."""
        got = results.get(r)
        if got is not None:
            return got
        node = self.nodes[r]
        if node.op == "phi":
            out = common_suffix(self.result_sigma_chain(node.children[1], memo, results),
                                 self.result_sigma_chain(node.children[2], memo, results))
        elif node.op in ("return", "throw"):
            out = self.sigma_chain(node.children[0], memo)
        else:
            out = ()
        results[r] = out
        return out

    # -- loops -----------------------------------------------------------------------------------------------
    def loop_thetas(self, p: int, d: int, evals: list[int]) -> list[int]:
        roots = [self.nodes[p].children[0]] + [self.nodes[e].children[0] for e in evals]
        return sorted(x for x in self._loop_body(roots, d, own_next_only=True)
                      if self.nodes[x].op == "theta" and self.nodes[x].attr == d)

    def _loop_body(self, roots: list[int], d: int, *, own_next_only: bool) -> Iterator[int]:
        """The nodes varying in loop ``d`` reached from ``roots``, stopping at its ``eval``s (what runs after it);
        ``own_next_only``: through a theta of ``d`` only into its next value."""
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            x = stack.pop()
            if x in seen or d not in self.variance[x]:
                continue
            seen.add(x)
            yield x
            node = self.nodes[x]
            if own_next_only and node.op == "theta" and node.attr == d:
                stack.append(node.children[1])
            elif not (node.op == "eval" and node.attr == d):
                stack.extend(node.children)

    def split(self, wanted: list[int], c: int, k: int) -> list[int]:
        return [self.arm(x, c, k) for x in wanted]

    def arm(self, x: int, c: int, k: int) -> int:
        """``x`` on the arm ``k`` of a branch on ``c`` (phis on ``c`` resolved)."""
        while self.nodes[x].op == "phi" and self.nodes[x].children[0] == c:
            x = self.nodes[x].children[k]
        return x

    # -- decisions the emitter acts on -----------------------------------------------------------------------
    def branch_to_pull(self, n: int, c: int) -> int | None:
        """Value phi ``n`` is wanted before the sigma phi of its branch (by a condition, say). If its arms need
        effects that only that branch's arms run, that branch's sigma phi, to be emitted now with ``n`` fused into
        it (otherwise the arms would run those effects a second time after the branch); else None."""
        arms_n = self.nodes[n].children[1:]
        need: set[int] = set()
        for a in arms_n:
            need |= self.effects_needed(a)
        if not need:
            return None
        for u in self.users.get(c, ()):
            node = self.nodes[u]
            if node.op != "phi" or node.children[0] != c or u == n or self.lookup(u) is not None or \
                    self.variance[u] != self.variance[n] or not self.is_sigma(u):
                continue
            e1 = self.effects_needed(node.children[1])
            e2 = self.effects_needed(node.children[2])
            if not need & (e1 ^ e2):
                continue
            if self.reaches_node(node.children[1:], n):
                continue  # that branch comes after n's use: not n's branch
            return u
        return None

    def split_point(self, p: int) -> int | None:
        """The nearest sigma both arms of sigma phi ``p`` certainly start from (where control split), or None."""
        memo: dict[int, tuple[int, ...]] = {}
        a, b = self.nodes[p].children[1], self.nodes[p].children[2]
        common = common_suffix(self.sigma_chain(a, memo), self.sigma_chain(b, memo))
        return common[0] if common else None

    def operand_hoists(self, n: int) -> list[int]:
        """The pure non-bool values operand ``n`` certainly needs that something else uses too, in node order:
        what :meth:`~.revert._Emitter.hoist_common` may compute before the earlier operands. The walk is bounded
        (a smaller must-set is still one)."""
        out: list[int] = []
        for x in sorted(self.must_bounded(n, [64], {})):
            node = self.nodes[x]
            if OPS[node.op].role is not Role.PURE or OPS[node.op].output is T.BOOL or node.op == "guard" or \
                    len(self.users.get(x, ())) < 2:
                continue
            out.append(x)
        return out

    def shared_needs(self, arms: list[tuple[int, int]]) -> list[int]:
        """The values (not constants, parameters, heaps or bools) both arms of each pair certainly need, in node
        order: what may be computed once before the branch."""
        memo: dict[int, frozenset[int]] = {}
        shared: set[int] = set()
        for a, b in arms:
            shared |= self.must(a, memo) & self.must(b, memo)
        out: list[int] = []
        for x in sorted(shared):
            node = self.nodes[x]
            if OPS[node.op].role in (Role.CONST, Role.PARAM) or self.is_sigma(x) or OPS[node.op].output is T.BOOL:
                continue
            out.append(x)
        return out

    def continuation(self, roots: list[int], paths: list[dict[int, bool]], retest: frozenset[int] = frozenset()
                     ) -> tuple[list[int], dict[int, int], set[int]]:
        """The code several paths of a branch reach in common, ``roots`` (a result, or a leaf of a loop
        iteration's sigma tree with its break condition and next values), split where the paths differ. Each
        path knows some of the branch's conditions (``paths``); a phi on one of them is *settled* when every
        path decides it to the same node (the join reads that node: a loop's next value that every path takes
        from the same inner loop), else on the *frontier* when it varies in no loop that is not open and is not
        bool: each path computes it before the join (sigma phis: the effects each path ran; value phis: each
        path's value into a variable); the *rest*: the nodes the code after the join computes, not computed
        before the branch (a condition phi is tested again there, and so are the phis ``retest``: their test is
        written in the join again). Frontier in node order."""
        conds = set().union(*paths)
        frontier: list[int] = []
        settled: dict[int, int] = {}
        rest: set[int] = set()
        open_ = frozenset(self.open_depths)
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            x = stack.pop()
            if x in seen or self.lookup(x) is not None:
                continue
            seen.add(x)
            node = self.nodes[x]
            if node.op == "phi" and x not in retest and self.tested(node.children[0])[0] in conds:
                ends = {self.decided(x, a) for a in paths}
                if len(ends) == 1 and x not in ends:
                    y = ends.pop()
                    settled[x] = y
                    stack.append(y)
                    continue
                if self.variance[x] <= open_ and not self.is_bool(x):
                    frontier.append(x)
                    continue
            rest.add(x)
            stack.extend(node.children)
        return sorted(frontier), settled, rest

    def decided(self, x: int, assumed: dict[int, bool]) -> int:
        """``x`` through the phis a path that knows ``assumed`` (besides this one's facts and settled phis)
        decides."""
        for _ in range(len(self.nodes)):
            node = self.nodes[x]
            if node.op != "phi":
                break
            k = self.fact(node.children[0], assumed)
            if k is None:
                y = self.settled_as(x)
                if y is None:
                    break
                x = y
                continue
            x = node.children[1 if k else 2]
        return x

    def is_bool(self, x: int) -> bool:
        """Whether value ``x`` is a condition (a phi of conditions too)."""
        seen: set[int] = set()
        while self.nodes[x].op == "phi" and x not in seen:
            seen.add(x)
            x = self.nodes[x].children[1]
        node = self.nodes[x]
        return node.op == "const.b" or (OPS[node.op].output is T.BOOL and node.op != "phi")

    def code_weight(self, roots: list[int], assumed: dict[int, bool], stop: frozenset[int] = frozenset(),
                    settled: dict[int, int] | None = None, limit: int | None = None) -> int:
        """About how many statements and tests the code computing ``roots`` here takes, on a path that also
        knows ``assumed`` (its phis on known conditions resolved; ``settled`` ones taken as their node), not
        counting ``stop`` and what they need: one per operation, effect, phi, loop node and test; constants,
        parameters and projections are free. Counting stops past ``limit`` (the answer is then over it)."""
        seen: set[int] = set()
        stack = list(roots)
        n = 0
        while stack:
            x = stack.pop()
            if x in seen or x in stop or self.lookup(x) is not None:
                continue
            seen.add(x)
            node = self.nodes[x]
            if node.op == "phi":
                k = self.fact(node.children[0], assumed)
                if k is not None:
                    stack.append(node.children[1 if k else 2])
                    continue
                if settled is not None and x in settled:
                    stack.append(settled[x])
                    continue
            role = OPS[node.op].role
            if role not in (Role.CONST, Role.PARAM, Role.PROJECTION) and node.op not in ("param", "sigma0", "not"):
                n += 1
                if limit is not None and n > limit:
                    break
            stack.extend(node.children)
        return n

    def refuse_unless_dead(self, x: int) -> None:
        """Raise unless no run of this path can need ``x``: it needs an effect or loop on the sigma chain that
        no path reaching this point has run. If one of those ran in a branch already joined, the value was
        computed there and is lost: that is not dead, and the method is left alone. A pure loop (off the sigma
        chain) proves nothing about the path: a value that needs only such loops is not dead, and when it
        cannot be computed here the method is left alone."""
        reach = self.reach_set(x)
        spent = set().union(*self.spent)
        if spent & reach:
            raise RevertUnsupported("an effect is needed again after the branch it ran in")
        if not any(OPS[self.nodes[y].op].role is Role.EFFECT or
                   (self.nodes[y].op == "pass" and y not in self.pure) for y in reach):
            if any(self.nodes[y].op == "theta" for y in reach):  # e.g. an inner loop's counter at an outer latch
                raise RevertUnsupported("a value that varies in a loop is needed outside it")
            raise RevertUnsupported("a value of a loop off the sigma chain cannot be computed where it is needed")

    def invariant_inputs(self, p: int, d: int, thetas: list[int], evals: list[int]) -> list[int]:
        """The inputs of loop ``p``'s body (depth ``d``; its ``thetas`` and wanted ``evals``) that do not vary in
        it, the candidates for computing before the loop (loop-invariant code motion)."""
        roots = [self.nodes[th].children[1] for th in thetas] + [self.nodes[p].children[0]]
        roots += [self.nodes[e].children[0] for e in evals]
        seen: set[int] = set()
        inputs: list[int] = []
        stack = list(roots)
        while stack:
            x = stack.pop()
            if x in seen:
                continue
            seen.add(x)
            if d not in self.variance[x]:
                inputs.append(x)
                continue
            node = self.nodes[x]
            if node.op == "eval" and node.attr == d:
                continue
            stack.extend(node.children)
        return inputs

    def nested_thetas(self, p: int, d: int, thetas: list[int], evals: list[int]) -> list[int]:
        """The thetas of the loops nested in loop ``p`` (depth ``d``; its ``thetas`` and wanted ``evals``) that its
        body reads, in node order."""
        roots = [self.nodes[th].children[1] for th in thetas] + [self.nodes[p].children[0]]
        roots += [self.nodes[e].children[0] for e in evals]
        return sorted(x for x in self._loop_body(roots, d, own_next_only=False) if self._inner_theta(x, d))

    def _inner_theta(self, x: int, d: int) -> bool:
        """Whether node ``x`` is the theta of a loop nested deeper than depth ``d``."""
        attr = self.nodes[x].attr
        return self.nodes[x].op == "theta" and isinstance(attr, int) and attr > d

    def results_split_point(self, a: int, b: int) -> int | None:
        """The nearest sigma every path to results ``a`` and ``b`` passes through (:meth:`result_sigma_chain`),
        or None."""
        common = common_suffix(self.result_sigma_chain(a, {}, {}), self.result_sigma_chain(b, {}, {}))
        return common[0] if common else None

    def division_checked_by(self, o: int) -> int | None:
        """A division by the value zero-check ``o`` checks that the method needs, not computed yet, whose
        dividend can be computed here: the emitter writes it in place of the check (javac's own shape)."""
        for rv in self.users.get(o, ()):
            if self.nodes[rv].op != "rho_value":
                continue
            for d in self.users.get(rv, ()):
                dn = self.nodes[d]
                if dn.op in THROWING_DIVISIONS and dn.children[1] == rv and \
                        self.lookup(d) is None and self.available(dn.children[0]):
                    return d
        return None
