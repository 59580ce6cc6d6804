"""Translation validation: is OPT a correct translation of ORIG, method by method? (DESIGN sections 1, 6, 8)

What this package owns
    ``peggy-jvm validate ORIG OPT``: :mod:`.pairing` matches classes and methods of the two inputs, :mod:`.prove`
    proves a pair equivalent in one merged e-graph, :mod:`.counterexample` looks for an input on which the two
    behave differently (confirmed on the JVM), :mod:`.report` turns verdicts into the table, JSON, JUnit XML and
    the exit code, and :mod:`.driver` runs the whole thing.

Invariant (the one that matters)
    A pair is ``equivalent`` only when the e-graph proved its two PEG roots equal (or the code is byte-identical),
    and ``not-equivalent`` only when the JVM itself showed two different outcomes on one input. Everything else
    is ``unknown`` with the reason.
"""
from __future__ import annotations

from .driver import ValidateOptions, validate_inputs
from .report import PairResult, ValidationReport, Verdict

__all__ = ["ValidateOptions", "validate_inputs", "PairResult", "ValidationReport", "Verdict"]
