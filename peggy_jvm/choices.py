"""The closed sets of names the command line offers and the stages act on: the pipeline's stages, the optimizer's
goals, the size budget's scopes and the validator's assumptions.

Owns only the names (enums and a table of descriptions), no behaviour: :mod:`peggy_jvm.pipeline`,
:mod:`peggy_jvm.codecost` and :mod:`peggy_jvm.rules.strings` give them their meaning and re-export them.
Invariant: this module imports nothing from the package, so that the CLI can build its options (``--stage``,
``--goal``, ``--assume``) and answer ``--help``, ``--version`` and a usage error without loading the optimizer
(networkx and the whole stage stack, ~0.3 s of CPU per process; ``tests/test_cli.py`` checks it).
"""
from __future__ import annotations

from enum import Enum

__all__ = ["Stage", "IMPLEMENTED_STAGES", "Goal", "SizeBudget", "STRINGS_BY_VALUE", "CLOSED_WORLD", "ASSUMPTIONS"]


class Stage(str, Enum):
    CLASSFILE = "classfile"
    IR = "ir"
    PEG = "peg"
    FULL = "full"


IMPLEMENTED_STAGES = (Stage.CLASSFILE, Stage.IR, Stage.PEG, Stage.FULL)


class Goal(str, Enum):
    """What ``optimize --goal`` aims at: ``speed`` (the emitted cost first) or ``size`` (the bytes first)."""

    SPEED = "speed"
    SIZE = "size"


class SizeBudget(str, Enum):
    """Over what ``optimize --size-budget`` holds ``--goal speed``'s rewrites to their originals' bytes: ``input``,
    the rewritten methods of the whole run together (``sizebudget.py``: rewrites withdrawn until they fit), or
    ``method``, each method's own allowance only (``pipeline.size_allowance``)."""

    INPUT = "input"
    METHOD = "method"


STRINGS_BY_VALUE = "strings-by-value"
CLOSED_WORLD = "closed-world"
#: every assumption ``validate --assume`` accepts, with what it assumes (docs/validation.md)
ASSUMPTIONS: dict[str, str] = {
    STRINGS_BY_VALUE: "Strings made by concatenation (builder toString, String.concat, String.valueOf) are "
                      "compared by value: their identity (==, identityHashCode, synchronized) is never observed",
    # no rules of its own: it lets the callee sources inline (and unfold) virtual calls (validate/driver.py)
    CLOSED_WORLD: "The input is the whole program: no class outside it extends its classes, so a virtual call "
                  "of a method the input does not override runs that method (its body may be unfolded)",
}
