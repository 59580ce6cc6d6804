"""The axiom language and the rules: parsing ``axioms/*.ax``, compiling rules to e-graph rewrites, built-in rules.

Modules: :mod:`.syntax` (lexer, parser, positions, :class:`AxiomError`), :mod:`.attrs` (attribute literals),
:mod:`.opclasses` (operator variables' classes), :mod:`.types` (type inference), :mod:`.conditions` (predicates
after ``if``), :mod:`.compile` (rules -> rewrites), :mod:`.builtin` (rules that need code), :mod:`.library`
(rule sets and groups), :mod:`.check` (the soundness checker's term evaluator). Grammar: ``docs/axioms.md``.
"""
from __future__ import annotations

from .library import RuleSet, default_axiom_dir, default_rules, load_rules
from .syntax import AxiomError, parse_axioms

__all__ = ["RuleSet", "default_axiom_dir", "default_rules", "load_rules", "AxiomError", "parse_axioms"]
