"""Inlining of jsr/ret subroutines, so that old class files (version < 50) lift like any other code.

Inputs: a method's decoded instructions and exception table. Output: equivalent instructions and table
without ``jsr``/``ret`` (:func:`inline_subroutines`), or :class:`SubroutineError` with the reason.

How: on the assembler's symbolic form, each ``jsr L`` site gets its own copy of the subroutine at L (the
instructions reachable from L without following ``ret``; a nested ``jsr`` counts as falling through). In the
copy, the first instruction (which must store the return address: ``astore n``) becomes ``nop``, every
``ret n`` becomes a ``goto`` to the instruction after the site, and every exception-table entry covering an
instruction of the body gets a twin covering its copy (appended, so the handler order of every instruction is
unchanged). The site becomes a ``goto`` to the copy. Copies may contain jsr sites of their own; the loop goes
on until none is left. The original subroutines become unreachable and are ignored by the lifter.

Invariant: every path through the result executes the same instructions, in the same order, with the same
handlers, as the original did through its jsr/ret pairs.
"""
from __future__ import annotations

from ..classfile import opcodes as op
from ..classfile.assembler import Handler, Insn, Label, assemble, to_symbolic
from ..classfile.bytecode import Instruction
from ..classfile.errors import UnsupportedCodeError
from ..classfile.model import ExceptionEntry

_JSRS = (op.JSR, op.JSR_W)
_ENDS = op.NO_FALLTHROUGH | {op.RET}
MAX_SITES = 256


class SubroutineError(UnsupportedCodeError):
    pass


def has_subroutines(insns: list[Instruction]) -> bool:
    return any(i.opcode in _JSRS or i.opcode == op.RET for i in insns)


def _targets(x: Insn) -> list[Label]:
    out = []
    if x.target is not None:
        out.append(x.target)
    if x.default is not None:
        out.append(x.default)
    if x.targets is not None:
        out.extend(x.targets)
    return out


def _body(items: list, start: int, pos_of: dict[int, int]) -> list[int]:
    """Indices of the instructions reachable from ``start`` without following ret (nested jsr falls through)."""
    seen: set[int] = set()
    work = [start]
    n = len(items)
    while work:
        k = work.pop()
        while k < n and isinstance(items[k], Label):
            k += 1
        if k >= n or k in seen:
            continue
        seen.add(k)
        x: Insn = items[k]
        if x.opcode not in _JSRS:
            work.extend(pos_of[id(t)] for t in _targets(x))
        if x.opcode not in _ENDS:
            work.append(k + 1)
    return sorted(seen)


def inline_subroutines(insns: list[Instruction], code_length: int, table: list[ExceptionEntry]
                       ) -> tuple[list[Instruction], list[ExceptionEntry], bytes]:
    extra = {o for e in table for o in (e.start, e.end, e.handler)}
    items, labels = to_symbolic(insns, code_length, extra)
    handlers = [Handler(labels[e.start], labels[e.end], labels[e.handler], e.catch_type) for e in table]
    for _ in range(MAX_SITES):
        site = next((k for k, x in enumerate(items) if isinstance(x, Insn) and x.opcode in _JSRS), None)
        if site is None:
            break
        pos_of = {id(x): k for k, x in enumerate(items) if isinstance(x, Label)}
        jsr = items[site]
        assert isinstance(jsr, Insn)  # `site` was chosen as an instruction
        body = _body(items, pos_of[id(jsr.target)], pos_of)
        first = items[body[0]]
        assert isinstance(first, Insn)  # `_body` returns instruction positions only
        if first.opcode != op.ASTORE:
            raise SubroutineError(f"subroutine does not start by storing its return address ({first!r})")
        ret_local = first.arg
        # labels inside the body's span that the copy needs: every label placed right before a body insn
        copy_of: dict[int, Label] = {}  # id(original label) -> its copy
        insn_label: dict[int, Label] = {}  # body index -> label of its copy
        for k in body:
            insn_label[k] = Label()
            j = k - 1
            while j >= 0 and isinstance(items[j], Label):
                copy_of[id(items[j])] = insn_label[k]
                j -= 1
        back = Label()
        items.insert(site + 1, back)
        shift = lambda k: k + 1 if k > site else k  # noqa: E731  (indices after the inserted label move)
        copy: list = []
        body_set = set(body)

        def remap(t: Label) -> Label:
            return copy_of.get(id(t), t)

        for idx, k in enumerate(body):
            x: Insn = items[shift(k)]
            copy.append(insn_label[k])
            if idx == 0:
                copy.append(Insn(op.NOP))  # the return address is not pushed any more
            elif x.opcode == op.RET:
                if x.arg != ret_local:
                    raise SubroutineError(f"ret {x.arg} returns from another subroutine than the one it is in")
                copy.append(Insn(op.GOTO, target=back))
                continue
            else:
                copy.append(Insn(x.opcode, x.arg, x.arg2, remap(x.target) if x.target is not None else None,
                                 remap(x.default) if x.default is not None else None,
                                 [remap(t) for t in x.targets] if x.targets is not None else None,
                                 list(x.keys) if x.keys is not None else None))
            if x.opcode in _ENDS:
                continue
            nxt = k + 1  # where the original falls through to (a nested jsr returns there too)
            while nxt < len(items) - 1 and isinstance(items[shift(nxt)], Label):
                nxt += 1
            if nxt not in body_set:
                raise SubroutineError("subroutine falls through out of its body")
            if idx + 1 >= len(body) or body[idx + 1] != nxt:
                copy.append(Insn(op.GOTO, target=insn_label[nxt]))
        items[site] = Insn(op.GOTO, target=insn_label[body[0]])
        # the copy's handlers: a twin of every entry for each run of covered body instructions
        pos_of = {id(x): k for k, x in enumerate(items) if isinstance(x, Label)}
        end_of_copy = Label()
        twins = []
        for h in handlers:
            lo, hi = pos_of[id(h.start)], pos_of[id(h.end)] if id(h.end) in pos_of else len(items)
            covered = [k for k in body if lo < shift(k) < hi]
            run_start = None
            for idx, k in enumerate(body):
                inside = k in covered
                if inside and run_start is None:
                    run_start = k
                if run_start is not None and (not inside or idx + 1 == len(body)):
                    end = insn_label[k] if not inside else (insn_label[body[idx + 1]] if idx + 1 < len(body)
                                                           else end_of_copy)
                    twins.append(Handler(insn_label[run_start], end, copy_of.get(id(h.handler), h.handler),
                                         h.catch_type))
                    run_start = None
        handlers.extend(twins)
        items.extend(copy)
        items.append(end_of_copy)
    else:
        raise SubroutineError(f"more than {MAX_SITES} subroutine call sites")
    asm = assemble(items, handlers)
    return asm.instructions, asm.exception_table, asm.code
