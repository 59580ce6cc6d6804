"""Rule sets: loading ``axioms/*.ax`` plus the built-in rules, and switching groups on and off.

What this module owns
    :class:`RuleSet` (every rewrite with its group, which groups are enabled) and the loaders
    :func:`load_rules` / :func:`default_rules` (the bundled axioms: :func:`default_axiom_dir`, or ``$PEGGY_AXIOMS``).

Where the bundled axioms are
    The source tree keeps them at the top level, ``axioms/`` beside ``peggy_jvm/``; an installed wheel carries them as
    package data in ``peggy_jvm/axioms/`` (``pyproject.toml`` maps the one onto the other). The package's own
    directory is looked at first, so an installed copy never reads a source tree's files.

Groups
    Every rule belongs to the group named by the last ``group`` line before it (or its file's stem). A group is
    enabled unless its ``group`` line says ``off``. :meth:`RuleSet.enable` / :meth:`RuleSet.disable` take group
    names or prefixes (``arith`` covers ``arith.int`` and ``arith.long``) and single rule names.

Invariants
    Rule names are unique across the whole set (a duplicate is an :class:`~.syntax.AxiomError`).

Switches
    :meth:`RuleSet.switch` applies a user's ``+group,-group,...`` (``optimize --rules``, docs/cli.md) in order;
    an unknown name is a :class:`ValueError` naming the known groups.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..egraph.runner import Rewrite
from .builtin import builtin_rules
from .compile import compile_rule
from .syntax import AxiomError, AxiomFile, Pos, RuleAST, parse_axioms

__all__ = ["RuleSet", "load_rules", "default_rules", "default_axiom_dir", "parse_axiom_files", "axiom_files"]


def default_axiom_dir() -> Path:
    """``$PEGGY_AXIOMS`` if set, else the bundled axioms (module docstring: an editable install maps only the Python
    packages, so the package-data copy exists only in a wheel)."""
    env = os.environ.get("PEGGY_AXIOMS")
    if env:
        return Path(env)
    package = Path(__file__).resolve().parent.parent
    installed = package / "axioms"
    return installed if installed.is_dir() else package.parent / "axioms"


@dataclass
class RuleSet:
    rewrites: list[Rewrite] = field(default_factory=list)
    groups: dict[str, bool] = field(default_factory=dict)  # group -> enabled
    disabled_rules: set[str] = field(default_factory=set)
    asts: dict[str, RuleAST] = field(default_factory=dict)  # rule name (as written) -> its AST

    def _select(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        groups, rules = [], []
        known_rules = {r.name for r in self.rewrites}
        for n in names:
            hit = [g for g in self.groups if g == n or g.startswith(n + ".")]
            if hit:
                groups.extend(hit)
            elif n in known_rules or n in self.asts:
                rules.append(n)
            else:
                raise KeyError(f"no rule group or rule named {n!r}")
        return groups, rules

    def enable(self, *names: str) -> RuleSet:
        groups, rules = self._select(names)
        for g in groups:
            self.groups[g] = True
        for r in rules:
            self.disabled_rules.discard(r)
            self.disabled_rules.discard(r + "-rev")
        return self

    def disable(self, *names: str) -> RuleSet:
        groups, rules = self._select(names)
        for g in groups:
            self.groups[g] = False
        for r in rules:
            self.disabled_rules.add(r)
            if r in self.asts and self.asts[r].bidirectional:
                self.disabled_rules.add(r + "-rev")
        return self

    def only(self, *names: str) -> RuleSet:
        """Enable exactly these groups (and every rule in them)."""
        groups, rules = self._select(names)
        for g in self.groups:
            self.groups[g] = g in groups
        self.disabled_rules.clear()
        if rules:
            raise KeyError(f"only() takes groups, not rules: {rules}")
        return self

    def switch(self, spec: str) -> RuleSet:
        """Apply ``+name,-name,...`` in order (a name without a sign is switched on): group names or prefixes and
        rule names, as :meth:`enable` / :meth:`disable` take them."""
        for item in (x.strip() for x in spec.split(",")):
            if not item or item in "+-":
                raise ValueError(f"empty group name in {spec!r}")
            name = item.lstrip("+-")
            try:
                (self.disable if item[0] == "-" else self.enable)(name)
            except KeyError:
                raise ValueError(f"no rule group or rule named {name!r} (groups: {', '.join(sorted(self.groups))})"
                                 ) from None
        return self

    def active(self) -> list[Rewrite]:
        return [r for r in self.rewrites if self.groups.get(r.group, True) and r.name not in self.disabled_rules]

    def names(self) -> list[str]:
        return [r.name for r in self.rewrites]

    def get(self, name: str) -> Rewrite:
        for r in self.rewrites:
            if r.name == name:
                return r
        raise KeyError(name)


def axiom_files(path: Path) -> list[Path]:
    """The files ``path`` names: a directory's ``*.ax`` files (sorted), or ``path`` itself."""
    return sorted(path.glob("*.ax")) if path.is_dir() else [path]


def parse_axiom_files(paths: Iterable[Path]) -> list[AxiomFile]:
    out = []
    for p in paths:
        data = Path(p).read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line_start = data.rfind(b"\n", 0, e.start) + 1
            raise AxiomError(Pos(str(p), data.count(b"\n", 0, e.start) + 1, e.start - line_start + 1),
                             "not UTF-8 text") from None
        out.append(parse_axioms(text, str(p)))
    return out


def load_rules(paths: Iterable[Path] | Path | None = None, *, builtins: bool = True,
               extra_text: str | None = None) -> RuleSet:
    """Parse and compile axiom files (a directory means its ``*.ax`` files, sorted) plus the built-in rules.
    ``extra_text`` is parsed as one more file named ``<extra>`` (tests add rules this way)."""
    if paths is None:
        paths = default_axiom_dir()
    if isinstance(paths, (str, Path)):
        files = axiom_files(Path(paths))
    else:
        files = [Path(x) for x in paths]
    parsed = parse_axiom_files(files)
    if extra_text is not None:
        parsed.append(parse_axioms(extra_text, "<extra>"))
    rs = RuleSet()
    where: dict[str, Pos | str] = {}
    if builtins:
        for b in builtin_rules():
            rs.rewrites.append(b)
            rs.groups.setdefault(b.group, True)
            where[b.name] = "builtin"
    for f in parsed:
        for g, on in f.groups.items():
            rs.groups[g] = on and rs.groups.get(g, True)
        for ast in f.rules:
            for rw in compile_rule(ast):
                if rw.name in where:
                    raise AxiomError(ast.pos, f"rule {rw.name!r} already defined at {where[rw.name]}")
                where[rw.name] = ast.pos
                rs.rewrites.append(rw)
            rs.asts[ast.name] = ast
    return rs


def default_rules() -> RuleSet:
    """The repository's axioms and the built-in rules, default groups enabled."""
    return load_rules()
