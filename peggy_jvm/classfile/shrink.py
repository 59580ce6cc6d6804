"""Size peepholes on a method's own bytecode (``--goal size``): the bytes ProGuard's intra-method passes save,
without going through the IR.

Owns: :func:`shrink_method` and the passes it runs, in this order, over the method's symbolic form
(:func:`.assembler.to_symbolic`):

1. jumps to a ``goto`` threaded to where it leads; a ``goto`` whose target starts with a return (or ``athrow``),
   possibly after one one-byte load or constant, becomes a copy of that code (shorter than the jump);
2. unreachable instructions are removed, then a ``goto`` to the very next instruction; ``if<c> L; goto M; L:``
   becomes ``if<!c> M`` (only in methods without loops, see :func:`_has_loops`);
3. locals by *webs* (the stores and loads of one slot joined by reaching definitions): a web written once with
   a constant pushed just before is read as that constant where shorter (methods without loops);
   ``store n; load n`` with nothing jumping between becomes nothing when that load is the web's only read, else
   ``dup; store n`` (never for a float: the interpreter stalls on a ``dup`` of a float just computed,
   docs/cost-model.md); stores of a web nothing reads become ``pop``/``pop2`` (an ``iinc`` of one disappears);
4. slots re-allocated by interference of the webs' live ranges: parameters keep their slots, every other web
   the lowest slot free of the webs it interferes with, the most used first (one-byte ``xload_n`` forms), a
   copy's target in its source's slot when that is free (``load n; store n`` then goes); webs of different
   types may share a slot when they are never live at once (the frames are recomputed).

``same_graph`` runs only the passes after which the method's PEG is the same graph (no threaded, copied or
negated jumps, no constants), whose self-check is a bisimilarity check.

Inputs: the class, the method, its parsed Code attribute and decoded instructions, the class hierarchy (for the
frames). Output: a :class:`~.recode.RecodeResult` with the new Code attribute, or None when the passes do not
make the code strictly shorter or the method is out of scope (``jsr``/``ret``, a local read with types the
verifier would not have allowed).

Invariants:
- the same computation: every edit above preserves what each instruction reads and writes on every path (the
  caller still proves the pair with the self-check before keeping it);
- the exception table keeps its rows over the same instructions (a row left covering nothing is dropped); a
  copied ``athrow`` is only placed where the same handlers cover it, a copied return only in a method without
  monitors (the one exception a return can throw is about monitors);
- LineNumberTable entries move with their instructions; those of removed unreachable code are dropped;
- a LocalVariableTable (and LocalVariableTypeTable) entry is kept, with its new slot, only when over its whole
  range the new slot holds nothing but the webs of its old slot; else it is dropped (never wrong, only
  missing); other offset-bearing Code attributes are dropped when the code moves (as :mod:`.recode` does).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import opcodes as op
from .assembler import Handler, Insn, Label, assemble, to_symbolic
from .attributes import LineNumberTable, LocalVariableTable, LocalVariableTypeTable
from .bytecode import Instruction
from .descriptors import parse_method_descriptor
from .errors import ClassFileError, UnsupportedCodeError
from .constpool import Tag
from .model import Attribute, ClassFile, CodeAttribute, MethodInfo
from .hierarchy import ClassHierarchy
from .recode import RecodeResult, build_code_attribute

__all__ = ["shrink_method"]

_LOCAL_TABLES = ("LocalVariableTable", "LocalVariableTypeTable")
_RETURNS = frozenset(range(op.IRETURN, op.RETURN + 1))
_MONITORS = frozenset(op.BY_NAME[name].opcode for name in ("monitorenter", "monitorexit"))
#: one-byte instructions that only push a constant: ``aconst_null`` .. ``dconst_1`` (copied with a return)
_PUSHES = frozenset(range(op.ACONST_NULL, op.BIPUSH))
_DUP, _DUP2, _POP, _POP2 = 0x59, 0x5c, 0x57, 0x58


class _Kind:
    """Local kinds in the order of the load/store opcodes (``iload`` + k): int, long, float, double, reference."""
    INT, LONG, FLOAT, DOUBLE, REF = range(5)


_WIDE = (_Kind.LONG, _Kind.DOUBLE)
_DESC_KIND = {"J": _Kind.LONG, "D": _Kind.DOUBLE, "F": _Kind.FLOAT}


def _access(x: Insn) -> tuple[int, int, bool, bool] | None:
    """(slot, kind, reads, writes) of a canonical instruction that touches a local, else None."""
    o = x.opcode
    if op.ILOAD <= o <= op.ALOAD:
        return x.arg, o - op.ILOAD, True, False
    if op.ISTORE <= o <= op.ASTORE:
        return x.arg, o - op.ISTORE, False, True
    if o == op.IINC:
        return x.arg, _Kind.INT, True, True
    return None


class _Unsupported(Exception):
    """The method is out of the passes' scope (the caller keeps it as it is)."""


@dataclass
class _Body:
    """The method's symbolic form while the passes edit it."""

    items: list[Insn | Label]
    handlers: list[Handler]
    labels: dict[int, Label]  # original offset -> label
    removed_lines: set[int] = field(default_factory=set)  # original offsets of removed unreachable code

    def code(self) -> tuple[list[Insn], dict[Label, int]]:
        """The instructions in order and, per label, the index of the instruction it marks (len: the end)."""
        insns: list[Insn] = []
        at: dict[Label, int] = {}
        for x in self.items:
            if isinstance(x, Label):
                at[x] = len(insns)
            else:
                insns.append(x)
        return insns, at


def _targets(x: Insn) -> list[Label]:
    if x.target is not None:
        return [x.target]
    if x.targets is not None:
        return [x.default, *x.targets]  # type: ignore[list-item]  # a switch (targets set) has its default
    return []


def _falls_through(x: Insn) -> bool:
    return x.opcode not in op.NO_FALLTHROUGH


def _successors(insns: list[Insn], at: dict[Label, int], handlers: list[Handler]
                ) -> tuple[list[list[int]], list[list[int]]]:
    """Per instruction, the instructions control may reach next: by falling through or jumping, and as the
    handlers covering it (entered with the locals as they were before the instruction)."""
    normal: list[list[int]] = [[] for _ in insns]
    caught: list[list[int]] = [[] for _ in insns]
    for k, x in enumerate(insns):
        if _falls_through(x) and k + 1 < len(insns):
            normal[k].append(k + 1)
        normal[k].extend(at[t] for t in _targets(x))
    for h in handlers:
        for k in range(at[h.start], at[h.end]):
            caught[k].append(at[h.handler])
    return normal, caught


def _covering(k: int, at: dict[Label, int], handlers: list[Handler]) -> list[int]:
    return [n for n, h in enumerate(handlers) if at[h.start] <= k < at[h.end]]


# -- 1. a goto to a return ----------------------------------------------------------------------------------
def _thread_jumps(body: _Body) -> bool:
    """Every jump to a ``goto`` retargeted to where that ``goto`` leads (a ``goto`` can neither throw nor change
    anything, so the jump may skip it; the skipped ``goto`` may become unreachable)."""
    insns, at = body.code()
    label_of: dict[int, Label] = {}
    for lab, k in at.items():
        label_of.setdefault(k, lab)

    def final(lab: Label) -> Label:
        seen = set()
        k = at[lab]
        while k < len(insns) and insns[k].opcode == op.GOTO and k not in seen:
            seen.add(k)
            lab = insns[k].target  # type: ignore[assignment]  # a goto has its target
            k = at[lab]
        return lab if k not in seen else label_of.get(at[lab], lab)

    changed = False
    for x in insns:
        if x.target is not None:
            t = final(x.target)
            changed |= t is not x.target
            x.target = t
        elif x.targets is not None:
            new = [final(t) for t in x.targets]
            dflt = final(x.default)  # type: ignore[arg-type]  # a switch (targets set) has its default
            changed |= dflt is not x.default or any(a is not b for a, b in zip(new, x.targets))
            x.targets, x.default = new, dflt
    return changed


def _returns_in_place(body: _Body) -> bool:
    """Replace each ``goto`` whose target is ``[push] return`` or ``[push] athrow`` by a copy of it."""
    insns, at = body.code()
    monitors = any(x.opcode in _MONITORS for x in insns)
    replace: dict[int, list[Insn]] = {}
    for k, x in enumerate(insns):
        copy = _return_copy(x, k, insns, at, body.handlers, monitors)
        if copy is not None:
            replace[k] = copy
    _apply(body, replace)
    return bool(replace)


def _return_copy(x: Insn, k: int, insns: list[Insn], at: dict[Label, int], handlers: list[Handler],
                 monitors: bool) -> list[Insn] | None:
    if x.opcode != op.GOTO:
        return None
    t = at[x.target]  # type: ignore[index]  # a goto has its target
    ends = _RETURNS | {op.ATHROW}
    first = insns[t]
    if first.opcode in ends:
        seq = [first]
    elif (first.opcode in _PUSHES or (op.ILOAD <= first.opcode <= op.ALOAD and first.arg <= 3)) \
            and t + 1 < len(insns) and insns[t + 1].opcode in ends:
        seq = [first, insns[t + 1]]  # two bytes: still shorter than the goto
    else:
        return None
    if seq[-1].opcode == op.ATHROW or monitors:
        # the copy may throw where the goto stood: only where the same handlers would catch it
        if _covering(k, at, handlers) != _covering(t + len(seq) - 1, at, handlers):
            return None
    return [Insn(s.opcode, s.arg, s.arg2) for s in seq]


# -- 2. unreachable code, jumps to the next instruction --------------------------------------------------------
def _drop_unreachable(body: _Body) -> bool:
    insns, at = body.code()
    if not insns:
        return False
    normal, caught = _successors(insns, at, body.handlers)
    seen = [False] * len(insns)
    stack = [0]
    seen[0] = True
    while stack:
        k = stack.pop()
        for s in normal[k] + caught[k]:
            if not seen[s]:
                seen[s] = True
                stack.append(s)
    if all(seen):
        return False
    # rows whose handler is unreachable cover nothing reachable: they go with it
    body.handlers = [h for h in body.handlers if seen[at[h.handler]]]
    dead_labels = {lab for lab, k in at.items() if k < len(insns) and not seen[k]}
    body.removed_lines |= {off for off, lab in body.labels.items() if lab in dead_labels}
    out: list[Insn | Label] = []
    k = 0
    for x in body.items:
        if isinstance(x, Label):
            out.append(x)
        else:
            if seen[k]:
                out.append(x)
            k += 1
    body.items = out
    return True


def _entered(insns: list[Insn], at: dict[Label, int], handlers: list[Handler]) -> set[int]:
    """The instructions a jump or a handler reaches, or a try range starts or ends at: none of them is "straight
    after" the instruction before it."""
    return {at[t] for x in insns for t in _targets(x)} | {at[lab] for h in handlers
                                                          for lab in (h.start, h.end, h.handler)}


def _has_loops(body: _Body) -> bool:
    """Whether some jump goes backward. The self-check proves a method with loops much more slowly (JAMA's
    hqr2: minutes instead of 6 s) after a peephole that changes its PEG (a test negated, a local read as the
    constant it holds), so those two peepholes only run on methods without."""
    insns, at = body.code()
    return any(at[t] <= k for k, x in enumerate(insns) for t in _targets(x))


def _drop_jumps_to_next(body: _Body, invert: bool = True) -> bool:
    """A ``goto`` to the next instruction goes; with ``invert``, ``if<c> L; goto M; L:`` becomes ``if<!c> M``
    when nothing jumps to the ``goto`` (nor starts or ends a try range there) and the method has no loops."""
    invert = invert and not _has_loops(body)
    insns, at = body.code()
    # a goto (and, below, a conditional branch) has its target: the ignores on at[x.target]
    drop = {id(x) for k, x in enumerate(insns)
            if x.opcode == op.GOTO and at[x.target] == k + 1}  # type: ignore[index]  # a goto has a target
    jumped = _entered(insns, at, body.handlers)
    for k, x in enumerate(insns[:-1]):
        nxt = insns[k + 1]
        if invert and x.opcode in op.CONDITIONAL_BRANCHES and nxt.opcode == op.GOTO and id(nxt) not in drop \
                and at[x.target] == k + 2 and k + 1 not in jumped:  # type: ignore[index]  # a branch has a target
            x.opcode, x.target = op.INVERTED_BRANCH[x.opcode], nxt.target
            drop.add(id(nxt))
    if not drop:
        return False
    body.items = [x for x in body.items if isinstance(x, Label) or id(x) not in drop]
    return True


# -- 3., 4. webs -------------------------------------------------------------------------------------------
@dataclass
class _Web:
    slot: int
    kind: int
    defs: list[int] = field(default_factory=list)  # instruction indices (-1: the parameter at entry)
    uses: list[int] = field(default_factory=list)

    @property
    def size(self) -> int:
        return 2 if self.kind in _WIDE else 1

    @property
    def pinned(self) -> bool:
        return -1 in self.defs


@dataclass
class _Webs:
    insns: list[Insn]
    at: dict[Label, int]
    webs: list[_Web]
    of: dict[int, int]  # instruction index -> web of the local it touches
    live_in: list[int]  # per instruction: bit set of webs live before it
    live_out: list[int]


def _parameters(cf: ClassFile, m: MethodInfo) -> list[tuple[int, int]]:
    """(slot, kind) of ``this`` and each parameter."""
    out = [] if m.is_static else [(0, _Kind.REF)]
    slot = len(out)
    for a in parse_method_descriptor(m.descriptor)[0]:
        kind = _DESC_KIND.get(a, _Kind.REF if a[0] in "L[" else _Kind.INT)
        out.append((slot, kind))
        slot += 2 if kind in _WIDE else 1
    return out


def _find_webs(cf: ClassFile, m: MethodInfo, body: _Body) -> _Webs:
    """Webs by reaching definitions (bit sets over definitions), then their liveness."""
    insns, at = body.code()
    n = len(insns)
    normal, caught = _successors(insns, at, body.handlers)
    access = [_access(x) for x in insns]
    # definitions: the parameters at entry, then every store and iinc
    defs: list[tuple[int, int, int]] = [(-1, s, k) for s, k in _parameters(cf, m)]  # (insn, slot, kind)
    def_at: dict[int, int] = {}
    for k, a in enumerate(access):
        if a is not None and a[3]:
            def_at[k] = len(defs)
            defs.append((k, a[0], a[1]))
    covers: dict[int, int] = {}  # slot -> bit set of the definitions writing it
    for d, (_, s, kind) in enumerate(defs):
        for w in range(s, s + (2 if kind in _WIDE else 1)):
            covers[w] = covers.get(w, 0) | (1 << d)
    entry = (1 << len(_parameters(cf, m))) - 1
    reach_in = [0] * n
    if n:
        reach_in[0] = entry
    pending = list(range(n - 1, -1, -1))
    queued = [True] * n
    while pending:
        k = pending.pop()
        queued[k] = False
        out = reach_in[k]
        a = access[k]
        if a is not None and a[3]:
            s, kind = a[0], a[1]
            kill = 0
            for w in range(s, s + (2 if kind in _WIDE else 1)):
                kill |= covers.get(w, 0)
            out = (out & ~kill) | (1 << def_at[k])
        # a handler is entered with the locals before the throwing instruction
        for j, state in [(j, out) for j in normal[k]] + [(j, reach_in[k]) for j in caught[k]]:
            new = reach_in[j] | state
            if new != reach_in[j]:
                reach_in[j] = new
                if not queued[j]:
                    queued[j] = True
                    pending.append(j)
    # union the definitions reaching each read with the read
    parent = list(range(len(defs)))

    def find(d: int) -> int:
        while parent[d] != d:
            parent[d] = parent[parent[d]]
            d = parent[d]
        return d

    use_defs: dict[int, int] = {}
    for k, a in enumerate(access):
        if a is None or not a[2]:
            continue
        s, kind = a[0], a[1]
        reaching = reach_in[k] & covers.get(s, 0)
        if not reaching:
            raise _Unsupported(f"a read of local {s} no store reaches")
        first = None
        for d in _bits(reaching):
            if defs[d][1] != s or defs[d][2] != kind:
                raise _Unsupported(f"local {s} read as another type than written")
            if first is None:
                first = d
            else:
                parent[find(d)] = find(first)
        # reaching is not empty (above), so first is set: the two ignores below
        if a[3]:  # an iinc writes the value it read: one web
            parent[find(def_at[k])] = find(first)  # type: ignore[arg-type]  # first is set (see above)
        use_defs[k] = first  # type: ignore[assignment]  # first is set (see above)
    roots: dict[int, int] = {}
    webs: list[_Web] = []
    of: dict[int, int] = {}
    web_of_def: list[int] = []
    for d, (k, s, kind) in enumerate(defs):
        r = find(d)
        if r not in roots:
            roots[r] = len(webs)
            webs.append(_Web(s, kind))
        w = roots[r]
        web_of_def.append(w)
        webs[w].defs.append(k)
        if k >= 0:
            of[k] = w
    for k, d in use_defs.items():
        w = web_of_def[d]
        webs[w].uses.append(k)
        of[k] = w
    live_in, live_out = _liveness(normal, caught, access, of)
    return _Webs(insns, at, webs, of, live_in, live_out)


def _bits(s: int):
    while s:
        low = s & -s
        yield low.bit_length() - 1
        s ^= low


def _liveness(normal: list[list[int]], caught: list[list[int]], access: list, of: dict[int, int]
              ) -> tuple[list[int], list[int]]:
    """Per instruction, the webs live before it and after it. ``live_out`` counts what the handlers covering
    the instruction read: a slot written there must not hold one of those (a verifier may merge the locals
    after a store into the handler's frame)."""
    n = len(normal)
    preds: list[list[int]] = [[] for _ in range(n)]
    for k in range(n):
        for j in normal[k] + caught[k]:
            preds[j].append(k)
    live_in, live_out = [0] * n, [0] * n
    pending = list(range(n))
    queued = [True] * n
    while pending:
        k = pending.pop()
        queued[k] = False
        out = 0
        for j in normal[k]:
            out |= live_in[j]
        handled = 0
        for j in caught[k]:
            handled |= live_in[j]
        a = access[k]
        new = out
        if a is not None:
            w = 1 << of[k]
            if a[3]:
                new &= ~w
            if a[2]:
                new |= w
        new |= handled  # what a handler reads is live before every instruction it covers
        live_out[k] = out | handled
        if new != live_in[k]:
            live_in[k] = new
            for p in preds[k]:
                if not queued[p]:
                    queued[p] = True
                    pending.append(p)
    return live_in, live_out


# -- 3. constants through locals, stores read straight back, stores nothing reads -----------------------------
_LDC_VALUES = (Tag.INTEGER, Tag.FLOAT, Tag.STRING)  # no class or method type: their ldc resolves, may throw


def _push_size(x: Insn, cf: ClassFile) -> int | None:
    """The bytes of a push of a constant that cannot throw, else None."""
    o = x.opcode
    if op.ACONST_NULL <= o < op.BIPUSH:
        return 1
    if o == op.BIPUSH:
        return 2
    if o == op.SIPUSH:
        return 3
    if o == op.LDC and cf.pool.entry(x.arg)[0] in _LDC_VALUES:
        return 2 if x.arg < 256 else 3
    if o == op.LDC2_W:
        return 3
    return None


def _constant_locals(cf: ClassFile, m: MethodInfo, body: _Body) -> bool:
    """A local written once, with a constant pushed just before, read as that constant where that is shorter:
    ``iconst_0; istore_1 ... iload_1`` -> ``... iconst_0`` (the push and store go)."""
    if _has_loops(body):
        return False
    info = _find_webs(cf, m, body)
    insns, webs = info.insns, info.webs
    entered = _entered(insns, info.at, body.handlers)
    replace: dict[int, list[Insn]] = {}
    for w in webs:
        if len(w.defs) != 1 or w.pinned:
            continue
        k = w.defs[0]
        if k == 0 or insns[k].opcode == op.IINC or k in entered:
            continue
        push = insns[k - 1]
        size = _push_size(push, cf)
        # a load costs at least one byte, a store too: only where the copies add less than the two take away
        if size is None or k - 1 in replace or size + 1 <= len(w.uses) * (size - 1):
            continue
        replace[k - 1] = replace[k] = []
        for u in w.uses:
            replace[u] = [Insn(push.opcode, push.arg, push.arg2)]
    if not replace:
        return False
    _apply(body, replace)
    return True


def _apply(body: _Body, replace: dict[int, list[Insn]]) -> None:
    """Instruction ``k`` (in order, labels not counted) replaced by ``replace[k]`` where given."""
    out: list[Insn | Label] = []
    k = 0
    for x in body.items:
        if isinstance(x, Label):
            out.append(x)
            continue
        out.extend(replace.get(k, [x]))
        k += 1
    body.items = out



def _stack_locals(cf: ClassFile, m: MethodInfo, body: _Body) -> bool:
    """``store n; load n`` -> nothing / ``dup; store n``; stores of unread webs -> ``pop``/``pop2``."""
    info = _find_webs(cf, m, body)
    insns, webs, of = info.insns, info.webs, info.of
    # an instruction a jump or a handler reaches is not "straight after" the one before it
    targets = {info.at[t] for x in insns for t in _targets(x)} | {info.at[h.handler] for h in body.handlers}
    # nor across the bound of a try range: ``dup; store`` would move the store into or out of the range (into
    # it, the handler would see the slot before the store: a verifier merges that state into its frame)
    bounds = {info.at[lab] for h in body.handlers for lab in (h.start, h.end)}
    replace: dict[int, list[Insn]] = {}
    for k in range(len(insns) - 1):
        a, b = _access(insns[k]), _access(insns[k + 1])
        if a is None or b is None or k + 1 in targets or k in replace:
            continue
        if insns[k].opcode == op.IINC or insns[k + 1].opcode == op.IINC:
            continue
        if not (a[3] and not a[2] and b[2] and not b[3] and a[0] == b[0] and a[1] == b[1]):
            continue
        web = webs[of[k]]
        if web.uses == [k + 1] and web.defs == [k]:
            replace[k] = []
            replace[k + 1] = []
        elif a[1] != _Kind.FLOAT and k + 1 not in bounds:
            replace[k] = [Insn(_DUP2 if a[1] in _WIDE else _DUP)]
            replace[k + 1] = [insns[k]]
    for w in webs:
        if w.uses or w.pinned:
            continue
        for k in w.defs:
            if k in replace:
                continue
            replace[k] = [] if insns[k].opcode == op.IINC else [Insn(_POP2 if w.kind in _WIDE else _POP)]
    if not replace:
        return False
    _apply(body, replace)
    return True


# -- 4. slots ----------------------------------------------------------------------------------------------
def _allocate(info: _Webs) -> list[int]:
    """The new slot of every web: parameters where they are, the others greedily, most used first."""
    webs = info.webs
    nw = len(webs)
    interferes = [0] * nw
    params = [w for w in range(nw) if webs[w].pinned]
    entry = info.live_in[0] if info.live_in else 0
    for w in params:
        interferes[w] |= entry
        for v in params:
            interferes[w] |= 1 << v
    for k, w in info.of.items():
        if _access(info.insns[k])[3]:  # type: ignore[index]  # a write: against everything live after it
            interferes[w] |= info.live_out[k]
    for w in range(nw):
        for v in _bits(interferes[w]):
            interferes[v] |= 1 << w
    for w in range(nw):
        interferes[w] &= ~(1 << w)
    slot = [-1] * nw
    for w in params:
        slot[w] = webs[w].slot
    def shortened(w: int) -> int:  # the loads and stores a low slot makes one byte (an iinc gains nothing)
        return sum(1 for k in webs[w].defs + webs[w].uses if info.insns[k].opcode != op.IINC)

    # copies `load a; store b`: b in a's slot (when free) makes the pair a no-op that _drop_self_copies removes
    partners: list[list[int]] = [[] for _ in range(nw)]
    for k in range(len(info.insns) - 1):
        a, b = _access(info.insns[k]), _access(info.insns[k + 1])
        if a is not None and b is not None and a[2] and not a[3] and b[3] and not b[2] and a[1] == b[1]:
            partners[info.of[k]].append(info.of[k + 1])
            partners[info.of[k + 1]].append(info.of[k])
    order = sorted((w for w in range(nw) if slot[w] < 0), key=lambda w: (-shortened(w), min(webs[w].defs)))
    for w in order:
        taken: set[int] = set()
        for v in _bits(interferes[w]):
            if slot[v] >= 0:
                taken.update(range(slot[v], slot[v] + webs[v].size))

        def free(t: int) -> bool:
            return not any(t + i in taken for i in range(webs[w].size))
        t = 0
        while not free(t):
            t += 1
        # a partner's slot, unless it would cost w its one-byte forms
        shared = [slot[v] for v in partners[w] if slot[v] >= 0 and free(slot[v]) and (slot[v] < 4 or t >= 4)]
        slot[w] = min(shared) if shared else t
    return slot


def _drop_self_copies(body: _Body) -> bool:
    """``load n; store n`` (the same slot, nothing jumping to the store) does nothing: both go."""
    insns, at = body.code()
    entered = _entered(insns, at, body.handlers)
    replace: dict[int, list[Insn]] = {}
    for k in range(len(insns) - 1):
        a, b = _access(insns[k]), _access(insns[k + 1])
        if a is None or b is None or k in replace or k + 1 in entered:
            continue
        if a[2] and not a[3] and b[3] and not b[2] and a[:2] == b[:2]:
            replace[k] = replace[k + 1] = []
    if not replace:
        return False
    _apply(body, replace)
    return True


def _rename(body: _Body, info: _Webs, slot: list[int]) -> None:
    k = 0
    for x in body.items:
        if isinstance(x, Label):
            continue
        w = info.of.get(k)
        if w is not None:
            x.arg = slot[w]
        k += 1


# -- debug tables ----------------------------------------------------------------------------------------------
def _local_entry_slot(info: _Webs, slot: list[int], start: Label, end: Label, old: int) -> int | None:
    """The new slot of the variable a local-table entry says ``old`` holds over [start, end), or None when over
    that range the new slot would also hold other values (or the variable is gone)."""
    a, b = info.at[start], info.at[end]
    mine: set[int] = set()
    for k in range(a, min(b, len(info.insns))):
        present = info.live_in[k] | (1 << info.of[k] if k in info.of else 0)
        mine.update(w for w in _bits(present) if info.webs[w].slot == old)
    new = {slot[w] for w in mine}
    if len(new) != 1:
        return None
    t = new.pop()
    size = max(info.webs[w].size for w in mine)
    for k in range(a, min(b, len(info.insns))):
        present = info.live_in[k] | (1 << info.of[k] if k in info.of else 0)
        for w in _bits(present):
            if w not in mine and slot[w] < t + size and t < slot[w] + info.webs[w].size:
                return None
    return t


def _debug_tables(code: CodeAttribute, body: _Body, info: _Webs, slot: list[int],
                  offsets: dict[Label, int]) -> tuple[list[Attribute], list[str]]:
    """The Code attribute's other attributes for the new code: line numbers moved, local tables kept where
    true; anything else dropped (its offsets cannot be remapped)."""
    kept: list[Attribute] = []
    dropped: list[str] = []
    labels = body.labels
    for a in code.attributes:
        if a.name == "StackMapTable":
            continue
        if a.name == "LineNumberTable":
            lnt = LineNumberTable.parse(a.data)
            lnt.entries = [e for e in lnt.entries if e.start_pc not in body.removed_lines]
            for e in lnt.entries:
                e.start_pc = offsets[labels[e.start_pc]]
            kept.append(Attribute(a.name_index, a.name, lnt.to_bytes()))
        elif a.name in _LOCAL_TABLES:
            table = (LocalVariableTable if a.name == "LocalVariableTable" else LocalVariableTypeTable).parse(a.data)
            entries = []
            for e in table.entries:
                start, end = labels[e.start_pc], labels[e.start_pc + e.length]
                t = _local_entry_slot(info, slot, start, end, e.index)
                if t is None or offsets[end] <= offsets[start]:
                    continue
                e.index, e.start_pc, e.length = t, offsets[start], offsets[end] - offsets[start]
                entries.append(e)
            table.entries = entries
            kept.append(Attribute(a.name_index, a.name, table.to_bytes()))
        else:
            dropped.append(a.name)
    return kept, dropped


def _local_offsets(code: CodeAttribute) -> list[int]:
    out: list[int] = []
    for a in code.attributes:
        if a.name == "LineNumberTable":
            out.extend(e.start_pc for e in LineNumberTable.parse(a.data).entries)
        elif a.name in _LOCAL_TABLES:
            table = (LocalVariableTable if a.name == "LocalVariableTable" else LocalVariableTypeTable).parse(a.data)
            for e in table.entries:
                out += [e.start_pc, e.start_pc + e.length]
    return out


def shrink_method(cf: ClassFile, m: MethodInfo, code: CodeAttribute, insns: list[Instruction],
                  hierarchy: ClassHierarchy | None, same_graph: bool = False) -> RecodeResult | None:
    """``m``'s code after the size peepholes (module docstring), or None when it is not strictly shorter or out
    of scope. ``same_graph``: only the passes after which the method's PEG is the same graph (slots, values on
    the stack, unread stores, unreachable code; no copied returns, threaded or negated jumps, constants), whose
    self-check is a bisimilarity check: the fallback when the self-check cannot prove the full set."""
    if any(i.opcode in (op.JSR, op.JSR_W, op.RET) for i in insns) or not insns:
        return None
    try:
        extra = set(_local_offsets(code))
        for e in code.exception_table:
            extra.update((e.start, e.end, e.handler))
        sym = to_symbolic(insns, len(code.code), extra)
        labels = sym.labels
        body = _Body(sym.items, [Handler(labels[e.start], labels[e.end], labels[e.handler], e.catch_type)
                                 for e in code.exception_table], labels)
        if not same_graph:
            _thread_jumps(body)
            _returns_in_place(body)
        _drop_unreachable(body)
        _drop_jumps_to_next(body, invert=not same_graph)
        if not same_graph:
            _constant_locals(cf, m, body)
        _stack_locals(cf, m, body)
        info = _find_webs(cf, m, body)
        slot = _allocate(info)
        _rename(body, info, slot)
        _drop_self_copies(body)
        asm = assemble(body.items, body.handlers)
        if len(asm.code) >= len(code.code):
            return None
        kept, dropped = _debug_tables(code, body, info, slot, asm.offsets)
        data = build_code_attribute(cf, m, asm.instructions, asm.code, asm.exception_table, kept, hierarchy)
    except (_Unsupported, ClassFileError, UnsupportedCodeError):
        # out of scope, or code our frame inference cannot type (the method stays as it is)
        return None
    return RecodeResult(data, dropped)
