"""Text and Graphviz renderings of an :class:`~.nodes.IRMethod`, for people (``peggy-jvm show --ir``).

Inputs: an IRMethod. Outputs: lines of text (one statement per line, blocks labelled ``B<id>`` with their
bytecode offset and handlers) or a DOT graph (normal edges solid, exception edges dashed).
"""
from __future__ import annotations

from typing import Iterator

from .nodes import (ArrayLength, ArrayLoad, ArrayStore, Binary, Block, Catch, CheckCast, ClassInit, Copy,
                    GetField, GetStatic, Goto, If, InstanceOf, Invoke, InvokeDynamic, IRMethod, MonitorEnter,
                    MonitorExit, New, NewArray, PutField, PutStatic, Return, Stmt, Switch, Throw, Unary)


def _args(xs) -> str:
    return ", ".join(repr(x) for x in xs)


def format_stmt(s: Stmt) -> str:
    if isinstance(s, Copy):
        return f"{s.dst!r} = {s.src!r}"
    if isinstance(s, Unary):
        return f"{s.dst!r} = {s.op} {s.a!r}"
    if isinstance(s, Binary):
        return f"{s.dst!r} = {s.op} {s.a!r}, {s.b!r}"
    if isinstance(s, GetField):
        return f"{s.dst!r} = {s.obj!r}.{s.field.name}  // {s.field}"
    if isinstance(s, PutField):
        return f"{s.obj!r}.{s.field.name} = {s.value!r}  // {s.field}"
    if isinstance(s, GetStatic):
        return f"{s.dst!r} = static {s.field}"
    if isinstance(s, PutStatic):
        return f"static {s.field} = {s.value!r}"
    if isinstance(s, ArrayLoad):
        return f"{s.dst!r} = {s.array!r}[{s.index!r}]  // {s.elem}"
    if isinstance(s, ArrayStore):
        return f"{s.array!r}[{s.index!r}] = {s.value!r}  // {s.elem}"
    if isinstance(s, ArrayLength):
        return f"{s.dst!r} = length {s.array!r}"
    if isinstance(s, NewArray):
        return f"{s.dst!r} = new {s.array_type} [{_args(s.sizes)}]"
    if isinstance(s, ClassInit):
        return f"classinit {s.cls}"
    if isinstance(s, New):
        return f"{s.dst!r} = new {s.cls}({_args(s.args)})  // {s.constructor.descriptor}"
    if isinstance(s, Invoke):
        lhs = f"{s.dst!r} = " if s.dst is not None else ""
        recv = f"{s.receiver!r}." if s.receiver is not None else ""
        return f"{lhs}invoke{s.kind.value} {recv}{s.method.name}({_args(s.args)})  // {s.method}"
    if isinstance(s, InvokeDynamic):
        lhs = f"{s.dst!r} = " if s.dst is not None else ""
        return f"{lhs}invokedynamic {s.name}({_args(s.args)})  // {s.descriptor} via {s.bootstrap.handle!r}"
    if isinstance(s, CheckCast):
        return f"{s.dst!r} = checkcast {s.cls} {s.src!r}"
    if isinstance(s, InstanceOf):
        return f"{s.dst!r} = instanceof {s.cls} {s.src!r}"
    if isinstance(s, MonitorEnter):
        return f"monitorenter {s.obj!r}"
    if isinstance(s, MonitorExit):
        return f"monitorexit {s.obj!r}"
    if isinstance(s, Catch):
        return f"{s.dst!r} = catch"
    if isinstance(s, Goto):
        return f"goto B{s.target}"
    if isinstance(s, If):
        return f"if {s.a!r} {s.cond.value} {s.b!r} goto B{s.if_true} else B{s.if_false}"
    if isinstance(s, Switch):
        cases = ", ".join(f"{k}: B{t}" for k, t in zip(s.keys, s.cases))
        return f"switch {s.value!r} {{{cases}, default: B{s.default}}}"
    if isinstance(s, Return):
        return "return" if s.value is None else f"return {s.value!r}"
    if isinstance(s, Throw):
        return f"throw {s.value!r}"
    return repr(s)


def format_method(m: IRMethod) -> Iterator[str]:
    params = ", ".join(f"{p!r}: {p.type}" for p in m.params)
    yield f"method {m.class_name}.{m.name}{m.descriptor} ({params})"
    for b in m.block_order():
        yield from format_block(b)


def format_block(b: Block) -> Iterator[str]:
    handlers = "".join(f" catch {h.catch_type or 'any'} -> B{h.target};" for h in b.handlers)
    yield f"  B{b.id}:  // offset {b.origin}{handlers}"
    for s in b.stmts:
        yield f"    {format_stmt(s)}"
    if b.terminator is not None:
        yield f"    {format_stmt(b.terminator)}"


def to_dot(m: IRMethod) -> str:
    lines = [f'digraph "{m.name}" {{', '  node [shape=box fontname="monospace"];']
    for b in m.block_order():
        text = "\\l".join(line.strip().replace('"', '\\"') for line in format_block(b)) + "\\l"
        lines.append(f'  B{b.id} [label="{text}"];')
        if b.terminator is not None:
            for t in b.terminator.targets():
                lines.append(f"  B{b.id} -> B{t};")
        if b.can_throw():
            for h in b.handlers:
                lines.append(f'  B{b.id} -> B{h.target} [style=dashed label="{h.catch_type or "any"}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
