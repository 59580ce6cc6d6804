"""Branches seen in one form where compilers write them in several, before their PEG is built (the prover's view).

What this module owns
    :func:`equal_tests_first`: an ``if`` on ``a != b`` is read as the ``if`` on ``a == b`` with its two targets
    swapped. javac writes ``if (s.equals(x)) A else B`` as ``ifeq B``, ecj as ``ifne A``; the PEG builder makes
    ``phi(x == 0, B, A)`` of one and ``phi(x != 0, A, B)`` of the other, which only saturation lines up (24
    iterations for the 18 ``equals`` of commons-lang3's ``JavaVersion.get``).
    :func:`strict_tests_first`: the same for order: ``if a >= b`` is read as ``if a < b`` and ``if a <= b`` as
    ``if a > b``, each with its targets swapped. javac writes ``if (x < y) A else B`` as ``if_icmpge B``,
    ProGuard flips a branch to fall through to the code it placed next (JAMA's ``hqr2``: ``(x >= 0 ? ..)``
    against ``(x < 0 ? ..)`` on a ``dcmpg``), and the two PEGs test ``ge`` and ``lt`` with their arms swapped.
    :func:`drop_default_cases`: in a lifted method, each ``switch`` loses the keys whose target is its default
    target (a ``switch`` left with no key becomes a ``goto`` to the default). javac writes a sparse ``switch``
    as a ``lookupswitch`` of the keys it names; ecj (and javac for denser keys) as a ``tableswitch`` over the
    whole range, the keys it does not name jumping to the default. The PEG builder tests each key in turn
    (``x == 4``), so the two forms build to different decision trees whose equality needs the fact that ``x ==
    4`` excludes ``x == 5``, which saturation does not find inside loops (commons-lang3's
    ``FastDateParser$TimeZoneStrategy.<init>``: ``case 3``, ``case 5``).

    :func:`thread_constant_switches`: a jump into a block that does nothing but ``switch`` on an int variable the
    jumping block certainly leaves holding a known int constant goes straight to the
    target that constant selects; blocks no longer reached are dropped. javac compiles a ``switch`` on a String
    as two: one on ``hashCode()`` whose cases set an index (``idx = 3`` after ``equals``, ``idx = -1`` before
    it), then one on that index; ecj as one, each ``equals`` jumping to the case's code. Threaded, javac's
    code has ecj's paths (commons-lang3's ``JavaVersion.get``: 18 strings, 76 cases for the case split).

Why it is sound
    ``if a != b goto T else F`` and ``if a == b goto F else T`` go to the same target on every pair of values;
    so do ``if a >= b goto T else F`` and ``if a < b goto F else T`` (an ``If`` orders ints only, a total
    order: exactly one of ``a < b`` and ``a >= b`` holds), and ``<=`` against ``>``.
    A ``switch`` jumps to the target of the key equal to its value, or to the default when no key is. A key
    whose target is the default's sends its value where the default would: without the key that value still
    reaches the default, every other value the same target as before. So every run takes the same path through
    the method; it is a rewrite of the code, not an assumption.
    Threading: the block ``J`` jumped into has no statement and no value on its operand stack, so running it
    only selects a target by the value of its variable ``v``; ``v`` is known at the jump: the jumping block
    ``B``'s last write of ``v`` copies a constant ``k`` into it, or ``B`` does not write ``v`` and neither do
    the blocks of the chain of only predecessors before it (entered by their predecessors' jumps, not by
    exceptions), up to one whose last write of ``v`` copies ``k``. Every run through that jump reaches ``J``
    with ``v == k`` and goes on to the target ``k`` selects, which the jump now goes to directly (the same
    statements run, in the same order). A block no path from the entry reaches (jumps and handlers) runs in
    no execution.

Inputs / outputs: an :class:`~peggy_jvm.ir.nodes.IRMethod` from ``ir.lift``, changed in place; True when
something changed. Code without a ``!=`` test, a ``switch`` key that repeats the default or a jump into a
test of a known constant is left exactly as lifted.
"""
from __future__ import annotations

from typing import cast

from ..ir.known import MAX_CHAIN, constant_set
from ..ir.nodes import INT, Block, Cond, Goto, If, IRMethod, Switch, Var


def equal_tests_first(m: IRMethod) -> bool:
    """See the module docstring."""
    changed = False
    for b in m.blocks.values():
        t = b.terminator
        if isinstance(t, If) and t.cond is Cond.NE:
            b.terminator = If(Cond.EQ, t.a, t.b, t.if_false, t.if_true, origin=t.origin)
            changed = True
    return changed


#: each non-strict comparison and the strict one it is the negation of (on ints: ``a >= b`` is ``!(a < b)``)
_STRICT = {Cond.GE: Cond.LT, Cond.LE: Cond.GT}


def strict_tests_first(m: IRMethod) -> bool:
    """See the module docstring."""
    changed = False
    for b in m.blocks.values():
        t = b.terminator
        if isinstance(t, If) and t.cond in _STRICT:
            b.terminator = If(_STRICT[t.cond], t.a, t.b, t.if_false, t.if_true, origin=t.origin)
            changed = True
    return changed


def drop_default_cases(m: IRMethod) -> bool:
    """See the module docstring."""
    changed = False
    for b in m.blocks.values():
        sw = b.terminator
        if not isinstance(sw, Switch) or sw.default not in sw.cases:
            continue
        kept = [(k, t) for k, t in zip(sw.keys, sw.cases) if t != sw.default]
        if kept:
            sw.keys, sw.cases = [k for k, _ in kept], [t for _, t in kept]
        else:
            b.terminator = Goto(sw.default, origin=sw.origin)
        changed = True
    return changed


def thread_constant_switches(m: IRMethod) -> bool:
    """See the module docstring. One jump at a time, each on the code the ones before it left: a jump
    redirected into a block gives that block another predecessor, which the next one's chain must see."""
    changed = False
    # each step is sound on its own; the bound only stops two switch-only blocks sending a constant to each
    # other (a loop without statements) from being threaded forever
    for _ in range(2 * len(m.blocks)):
        preds, handled = _predecessors(m)
        step = next(((b, j, got) for b in m.blocks.values() if b.terminator is not None
                     for j in dict.fromkeys(b.terminator.targets())
                     for got in [_selected(m.blocks[j], _known_int(m.blocks, b.id, m.blocks[j], preds, handled))]
                     if got is not None and got != j), None)
        if step is None:
            break
        b, j, got = step
        b.retarget(lambda t: got if t == j else t, handlers=False)
        changed = True
    if changed:
        _drop_unreached(m)
    return changed


def _predecessors(m: IRMethod) -> tuple[dict[int, list[int]], set[int]]:
    """Block -> the blocks that may go to it (jumps, and handlers of blocks that may throw); the blocks entered
    by an exception."""
    preds: dict[int, list[int]] = {}
    handled: set[int] = set()
    for b in m.blocks.values():
        for t in dict.fromkeys(b.successors()):
            preds.setdefault(t, []).append(b.id)
        if b.can_throw():
            handled.update(h.target for h in b.handlers)
    return preds, handled


def _tested_var(j: Block) -> Var | None:
    """The variable ``j`` only switches on: no statement, nothing on its stack, a ``switch`` of an int variable."""
    t = j.terminator
    if j.stmts or j.entry_stack or not isinstance(t, Switch) or not isinstance(t.value, Var):
        return None
    return t.value if t.value.type == INT else None


def _known_int(blocks: dict[int, Block], bid: int, j: Block, preds: dict[int, list[int]],
               handled: set[int]) -> int | None:
    """The int constant ``j``'s tested variable certainly holds when ``bid`` jumps to ``j`` (module docstring)."""
    v = _tested_var(j)
    if v is None:
        return None
    cur = bid
    for _ in range(MAX_CHAIN):
        b = blocks[cur]
        if any(st.defined() is v for st in b.stmts):
            c = constant_set(b, v)
            return cast(int, c.value) if c is not None else None  # constant_set gives an int constant
        ps = preds.get(cur, [])
        if len(ps) != 1 or ps[0] == cur or cur in handled or cur == j.id:
            return None
        cur = ps[0]
    return None


def _selected(j: Block, k: int | None) -> int | None:
    """The target ``j``'s ``switch`` goes to when its variable holds ``k``."""
    if k is None:
        return None
    t = j.terminator
    assert isinstance(t, Switch)
    return t.cases[t.keys.index(k)] if k in t.keys else t.default


def _drop_unreached(m: IRMethod) -> None:
    """Drops the blocks that no jump or handler of a block reached from the entry leads to (the handler of a
    block that cannot throw is kept too: the block still names it)."""
    seen = {m.entry}
    work = [m.entry]
    while work:
        b = m.blocks[work.pop()]
        for t in [*b.successors(False), *(h.target for h in b.handlers)]:
            if t not in seen:
                seen.add(t)
                work.append(t)
    for bid in [b for b in m.blocks if b not in seen]:
        del m.blocks[bid]
