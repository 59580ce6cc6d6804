"""The axiom language's surface syntax: lexer and parser for ``axioms/*.ax`` (grammar in ``docs/axioms.md``).

What this module owns
    Text -> :class:`AxiomFile` (groups and :class:`RuleAST` s whose patterns are :mod:`peggy_jvm.egraph.pattern`
    objects), with a :class:`Pos` for every rule, pattern node and condition, and :class:`AxiomError` naming
    ``file:line:column`` for every syntax error, unknown operator, operator class or arity mismatch (checked
    against :data:`peggy_jvm.peg.ops.OPS` with ``OpSpec.arity_ok``) and malformed attribute.

Inputs / outputs
    :func:`parse_axioms` (text, file name) is called by :mod:`.library`; :mod:`.compile` turns the ASTs into
    rewrites, :mod:`.check` evaluates them.

Invariants
    Every pattern node of a parsed rule has its position in :attr:`RuleAST.positions` (keyed by ``id``).
    Operator variables carry the operator set of their class, and all occurrences of one name in a rule are the
    same :class:`~peggy_jvm.egraph.pattern.OpVar`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..egraph.pattern import AttrLit, AttrVar, OpVar, PAs, PNode, PVar, Pattern
from ..peg.ops import OPS, Role
from .attrs import AttrParseError, parse_attr, parse_const_literal
from .opclasses import OP_CLASSES

__all__ = ["Pos", "AxiomError", "CondArg", "CondAST", "RuleAST", "AxiomFile", "parse_axioms"]


@dataclass(frozen=True)
class Pos:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class AxiomError(Exception):
    """A problem in an axiom file, at ``pos`` (``str(err)`` is ``file:line:col: message``)."""

    def __init__(self, pos: Pos, message: str) -> None:
        super().__init__(f"{pos}: {message}")
        self.pos = pos
        self.message = message


@dataclass(frozen=True)
class CondArg:
    kind: str  # "class" (?x), "attr" ($f), "lit" (number, string, bare word)
    value: Any
    pos: Pos

    def __str__(self) -> str:
        return {"class": "?", "attr": "$"}.get(self.kind, "") + str(self.value)


@dataclass(frozen=True)
class CondAST:
    pred: str  # a predicate name, or "==" / "!="
    args: tuple[CondArg, ...]
    negated: bool
    pos: Pos

    def __str__(self) -> str:
        if self.pred in ("==", "!="):
            s = f"{self.args[0]} {self.pred} {self.args[1]}"
        else:
            s = f"{self.pred}({', '.join(map(str, self.args))})"
        return f"not {s}" if self.negated else s


@dataclass
class RuleAST:
    name: str
    group: str
    lhs: Pattern
    rhs: Pattern
    bidirectional: bool
    conds: list[CondAST]
    pos: Pos
    positions: dict[int, Pos] = field(default_factory=dict, repr=False)

    def pos_of(self, p: object) -> Pos:
        return self.positions.get(id(p), self.pos)


@dataclass
class AxiomFile:
    path: str
    groups: dict[str, bool] = field(default_factory=dict)  # group -> enabled by default
    rules: list[RuleAST] = field(default_factory=list)


# -- lexer ----------------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+)
  | (?P<comment>\#[^\n]*)
  | (?P<nl>\n)
  | (?P<biarrow><=>)
  | (?P<arrow>=>)
  | (?P<eq>==)
  | (?P<ne>!=)
  | (?P<lp>\()
  | (?P<rp>\))
  | (?P<attr>\[[^\]\n]*\])
  | (?P<qvar>\?[A-Za-z_][A-Za-z0-9_]*)
  | (?P<avar>\$[A-Za-z_][A-Za-z0-9_]*)
  | (?P<ovar>%[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<num>[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)[lLfFdD]?(?![A-Za-z0-9_.]))
  | (?P<name>-?[A-Za-z_][A-Za-z0-9_.\-/<>]*)
  | (?P<colon>:)
  | (?P<at>@)
  | (?P<comma>,)
""", re.VERBOSE)


@dataclass(frozen=True)
class Tok:
    kind: str
    text: str
    pos: Pos


def _lex(text: str, path: str) -> list[Tok]:
    toks: list[Tok] = []
    lines = text.split("\n")
    line, line_start, i, depth = 1, 0, 0, 0
    n = len(text)
    while i < n:
        m = _TOKEN.match(text, i)
        pos = Pos(path, line, i - line_start + 1)
        if m is None:
            raise AxiomError(pos, f"unexpected character {text[i]!r}")
        kind = m.lastgroup or ""
        tok = m.group()
        i = m.end()
        if kind == "nl":
            line += 1
            line_start = i
            if depth == 0 and not _continues(lines, line - 1):
                toks.append(Tok("nl", "\n", pos))
            continue
        if kind in ("ws", "comment"):
            continue
        if kind == "lp":
            depth += 1
        elif kind == "rp":
            depth = max(0, depth - 1)
        toks.append(Tok(kind, tok, pos))
    toks.append(Tok("nl", "\n", Pos(path, line, i - line_start + 1)))
    toks.append(Tok("eof", "", Pos(path, line, i - line_start + 1)))
    return toks


def _continues(lines: list[str], idx: int) -> bool:
    """A statement continues on the next non-blank, non-comment line when that line is indented."""
    for j in range(idx, len(lines)):
        s = lines[j]
        stripped = s.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return s[0] in " \t"
    return False


# -- parser ---------------------------------------------------------------------------------------------------
class _Parser:
    def __init__(self, toks: list[Tok], path: str) -> None:
        self.toks = toks
        self.i = 0
        self.path = path
        self.positions: dict[int, Pos] = {}
        self.opvars: dict[str, OpVar] = {}
        self.opvar_class: dict[str, str] = {}

    def peek(self, k: int = 0) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, kind: str, what: str) -> Tok:
        t = self.peek()
        if t.kind != kind:
            raise AxiomError(t.pos, f"expected {what}, found {_show(t)}")
        return self.next()

    # statements ---------------------------------------------------------------------------------------------
    def parse(self) -> AxiomFile:
        out = AxiomFile(self.path)
        stem = self.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        group = stem
        names: dict[str, Pos] = {}
        while self.peek().kind != "eof":
            t = self.peek()
            if t.kind == "nl":
                self.next()
                continue
            if t.kind == "name" and t.text == "group":
                self.next()
                g = self.expect("name", "a group name")
                group = g.text
                enabled = True
                if self.peek().kind == "name" and self.peek().text in ("on", "off"):
                    enabled = self.next().text == "on"
                out.groups[group] = enabled
                self.end_of_statement()
                continue
            if t.kind == "name" and t.text == "rule":
                self.next()
                rule = self.rule(group)
                if rule.name in names:
                    raise AxiomError(rule.pos, f"rule {rule.name!r} already defined at {names[rule.name]}")
                names[rule.name] = rule.pos
                out.groups.setdefault(group, True)
                out.rules.append(rule)
                continue
            raise AxiomError(t.pos, f"expected 'rule' or 'group', found {_show(t)}")
        return out

    def end_of_statement(self) -> None:
        t = self.peek()
        if t.kind != "nl":
            raise AxiomError(t.pos, f"expected the end of the line, found {_show(t)}")
        self.next()

    def rule(self, group: str) -> RuleAST:
        self.positions = {}
        self.opvars = {}
        name_tok = self.expect("name", "a rule name")
        self.expect("colon", "':' after the rule name")
        lhs = self.pattern()
        arrow = self.peek()
        if arrow.kind not in ("arrow", "biarrow"):
            raise AxiomError(arrow.pos, f"expected '=>' or '<=>', found {_show(arrow)}")
        self.next()
        rhs = self.pattern()
        conds: list[CondAST] = []
        if self.peek().kind == "name" and self.peek().text == "if":
            self.next()
            conds.append(self.cond())
            while self.peek().kind == "name" and self.peek().text == "and":
                self.next()
                conds.append(self.cond())
        self.end_of_statement()
        return RuleAST(name_tok.text, group, lhs, rhs, arrow.kind == "biarrow", conds, name_tok.pos, self.positions)

    # patterns -----------------------------------------------------------------------------------------------
    def pattern(self) -> Pattern:
        t = self.peek()
        if t.kind == "qvar":
            self.next()
            if self.peek().kind == "at":
                self.next()
                if self.peek().kind != "lp":
                    raise AxiomError(self.peek().pos, "expected '(' after '@'")
                p: Pattern = PAs(t.text[1:], self.term())
            else:
                p = PVar(t.text[1:])
            self.positions[id(p)] = t.pos
            return p
        if t.kind == "lp":
            return self.term()
        if t.kind == "name" and t.text in OPS:
            self.next()
            return self.node(t.text, t.pos, None, [], t.pos)
        if t.kind == "name":
            raise AxiomError(t.pos, f"unknown operator {t.text!r}")
        raise AxiomError(t.pos, f"expected a pattern, found {_show(t)}")

    def term(self) -> PNode:
        lp = self.expect("lp", "'('")
        head = self.peek()
        op: str | OpVar
        if head.kind == "name":
            self.next()
            if head.text not in OPS:
                raise AxiomError(head.pos, f"unknown operator {head.text!r}")
            op = head.text
        elif head.kind == "ovar":
            self.next()
            op = self.opvar(head)
        else:
            raise AxiomError(head.pos, f"expected an operator, found {_show(head)}")
        attr: AttrVar | AttrLit | None = None
        t = self.peek()
        if t.kind == "attr":
            self.next()
            if isinstance(op, OpVar):
                raise AxiomError(t.pos, "an operator variable takes no attribute")
            try:
                attr = parse_attr(t.text[1:-1], op)
            except AttrParseError as e:
                raise AxiomError(Pos(t.pos.file, t.pos.line, t.pos.col + 1), str(e)) from None
        elif isinstance(op, str) and OPS[op].role is Role.CONST and OPS[op].attr == "value" and \
                t.kind in ("num", "name", "str") and not (t.kind == "name" and t.text in OPS):
            self.next()
            try:
                attr = parse_const_literal(t.text, op)
            except AttrParseError as e:
                raise AxiomError(t.pos, str(e)) from None
        children: list[Pattern] = []
        while self.peek().kind != "rp":
            if self.peek().kind in ("nl", "eof"):
                raise AxiomError(self.peek().pos, "unclosed '('")
            children.append(self.pattern())
        self.expect("rp", "')'")
        return self.node(op, head.pos, attr, children, lp.pos)

    def node(self, op: str | OpVar, pos: Pos, attr: AttrVar | AttrLit | None, children: list[Pattern],
             lp: Pos) -> PNode:
        n = len(children)
        if isinstance(op, OpVar):
            arity = OP_CLASSES[self.opvar_class[op.name]][1]
            if n != arity:
                raise AxiomError(pos, f"%{op.name} ranges over operators of arity {arity}, given {n} inputs")
        else:
            spec = OPS[op]
            if not spec.arity_ok(n):
                want = f"{len(spec.inputs)}" + (" or more" if spec.variadic is not None else "")
                raise AxiomError(pos, f"{op} takes {want} input{'s' if want != '1' else ''}, given {n}")
            if attr is not None and spec.attr is None:
                raise AxiomError(pos, f"{op} has no attribute")
        p = PNode(op, attr, tuple(children))
        self.positions[id(p)] = pos
        return p

    def opvar(self, head: Tok) -> OpVar:
        name = head.text[1:]
        if self.peek().kind == "colon":
            self.next()
            cls = self.expect("name", "an operator class")
            if cls.text not in OP_CLASSES:
                raise AxiomError(cls.pos, f"unknown operator class {cls.text!r} (known: {', '.join(OP_CLASSES)})")
            if name in self.opvars:
                raise AxiomError(cls.pos, f"%{name} already has a class")
            self.opvars[name] = OpVar(name, OP_CLASSES[cls.text][0])
            self.opvar_class[name] = cls.text
        elif name not in self.opvars:
            raise AxiomError(head.pos, f"%{name} needs a class on first use, e.g. %{name}:pure2")
        return self.opvars[name]

    # conditions ---------------------------------------------------------------------------------------------
    def cond(self) -> CondAST:
        t = self.peek()
        if t.kind == "name" and t.text == "not":
            self.next()
            c = self.cond()
            return CondAST(c.pred, c.args, not c.negated, t.pos)
        if t.kind == "name" and self.peek(1).kind == "lp":
            self.next()
            self.next()
            args: list[CondArg] = []
            while self.peek().kind != "rp":
                args.append(self.cond_arg())
                if self.peek().kind == "comma":
                    self.next()
                elif self.peek().kind != "rp":
                    raise AxiomError(self.peek().pos, f"expected ',' or ')', found {_show(self.peek())}")
            self.next()
            return CondAST(t.text, tuple(args), False, t.pos)
        a = self.cond_arg()
        op = self.peek()
        if op.kind not in ("eq", "ne"):
            raise AxiomError(op.pos, f"expected a condition such as invariant(?x, $l) or $f != $g, found {_show(op)}")
        self.next()
        b = self.cond_arg()
        return CondAST(op.text, (a, b), False, a.pos)

    def cond_arg(self) -> CondArg:
        t = self.next()
        if t.kind == "qvar":
            return CondArg("class", t.text[1:], t.pos)
        if t.kind == "avar":
            return CondArg("attr", t.text[1:], t.pos)
        if t.kind == "num":
            try:
                return CondArg("lit", int(t.text.rstrip("lL"), 0), t.pos)
            except ValueError:
                raise AxiomError(t.pos, f"expected an integer, found {t.text!r}") from None
        if t.kind == "str":
            return CondArg("lit", _unquote(t.text), t.pos)
        if t.kind == "name":
            return CondArg("lit", t.text, t.pos)
        raise AxiomError(t.pos, f"expected a condition argument, found {_show(t)}")


def _unquote(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s[1:-1])


def _show(t: Tok) -> str:
    if t.kind == "nl":
        return "the end of the line"
    if t.kind == "eof":
        return "the end of the file"
    return repr(t.text)


#: (text, file name) -> its tokens, for a file parsed again in the same process (the default axioms are loaded
#: by the optimizer, its self-check and validate, each on its own: lexing was a quarter of a load). Tokens are
#: frozen; the parser builds fresh ASTs from them each time.
_TOKENS: dict[tuple[str, str], tuple[Tok, ...]] = {}


def parse_axioms(text: str, path: str = "<string>") -> AxiomFile:
    """Parse one axiom file; raises :class:`AxiomError` at the first problem."""
    toks = _TOKENS.get((text, path))
    if toks is None:
        toks = _TOKENS[(text, path)] = tuple(_lex(text, path))
    return _Parser(list(toks), path).parse()
