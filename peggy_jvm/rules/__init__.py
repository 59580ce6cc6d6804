"""The axiom language and the rules: parsing ``axioms/*.ax``, compiling rules to e-graph rewrites, built-in rules.

Modules: :mod:`.syntax` (lexer, parser, positions, :class:`AxiomError`), :mod:`.attrs` (attribute literals),
:mod:`.opclasses` (operator variables' classes), :mod:`.types` (type inference), :mod:`.conditions` (predicates
after ``if``), :mod:`.compile` (rules -> rewrites), :mod:`.builtin` (rules that need code), :mod:`.library`
(rule sets and groups), :mod:`.check` (the soundness checker's term evaluator), :mod:`.strings` (the string
rules, and :func:`assumption_rules`: the rules of an opt-in assumption such as ``strings-by-value``, never in
the default set). Grammar: ``docs/axioms.md``.
"""
from __future__ import annotations

from .library import RuleSet, default_axiom_dir, default_rules, load_rules
from .strings import ASSUMPTIONS, assumption_rules
from .syntax import AxiomError, parse_axioms

__all__ = ["RuleSet", "default_axiom_dir", "default_rules", "load_rules", "AxiomError", "parse_axioms",
           "ASSUMPTIONS", "assumption_rules"]
