"""Counterexamples: a concrete input on which ORIG and OPT behave differently, confirmed on the JVM.

What this module owns
    * :class:`Shape`, :func:`shape_of`: how a pair's method is called: static, on a receiver allocated without a
      constructor whose own fields get generated values (compared after the call too) or on one its class's
      simplest constructor builds (:class:`Built`), or as a constructor whose outcome is the object it builds.
    * :func:`eligible`: which pairs can be searched (static and instance methods and constructors, not of an
      abstract class, whose parameters are primitives, Strings,
      ``Object``, interfaces, one-dimensional arrays of primitives or Strings, two-dimensional arrays of
      primitives).
    * Parameters of some JDK classes (:data:`_LIBRARY_VALUES`: ``Class``, ``Throwable`` and its two usual
      subclasses, boxed numbers, ``Locale``) get null and a few objects the harness builds, among them Throwables
      whose ``toString()`` returns null.
    * :func:`generate_inputs`: seeded arguments per descriptor (edge values 0, +-1, MIN/MAX, NaN, infinities,
      signed zero, 2^24 and 2^53 (where a float's or double's ``x + 1 == x``), null and empty arrays/strings,
      arrays of 10 or 7 ones with each int parameter that many (a length beside its array), then the pair's
      hints (:mod:`.hints`: its constants and the values that flip its conditions; subnormals), then random
      values). A matrix comes square, ragged, with a
      null row and with one row object twice. Two array parameters of one type are
      also passed the very same array (:class:`SameAs`: aliasing is what a wrong read-over-write shows on). An
      ``Object`` parameter gets null, a String, a plain object and an object whose ``toString()`` returns null
      (:class:`Opaque`), the case JLS 5.1.11 gives string conversion a rule for; an interface parameter gets
      null and three stubs implementing it (every method returns null, false or zero; one's ``toString()`` too;
      the third's ``toString()`` returns null and its methods returning objects return such stubs).
    * :func:`search`: runs both lifted methods in the IR interpreter (:mod:`peggy_jvm.ir.interp`, fresh heap and
      fresh arguments per run) and asks the JVM about each input where the outcomes (return value with floats
      bit-exact and NaN == NaN, exception class, printed output, arrays passed in) differ as soon as it is found,
      then about inputs the model cannot tell (those the JVM evaluates: ``Math.exp`` and the like, generated
      objects), those that vary the kinds of the arguments' values first (:func:`_varied`); the first input the
      JVM confirms ends the search.
    * :class:`JvmHarness`: compiles ``Harness.java`` (next to this file) once into a cache directory and keeps
      one JVM for a validate run that answers one call at a time (:meth:`JvmHarness.ask`), each call in two
      fresh class loaders (one per class tree), its runs within what the pair's budget has left; a run that
      does not finish ends its JVM (a fresh one, started at once, takes the next call), and a JVM that does not
      answer by the pair's deadline (plus :data:`ANSWER_GRACE_S`) is killed. Deadlines are readings of
      :func:`~peggy_jvm.egraph.clock.clock`: the screen's time is this process's CPU time, a wait for the JVM's
      answer (:class:`~peggy_jvm.egraph.clock.waiting`) counts as the wall-clock time it takes.
    * :func:`describe_outcome`, :func:`show_args`, :func:`why_different`: the counterexample as Java values, and
      why a difference that ideal arithmetic would not see is one (signed zero, NaN, rounding, wrap-around).

Inputs: method pairs with their lifted IR, both sides' classes; a deadline. Outputs: per pair, either a confirmed
counterexample (args as text, both JVM outcomes) or the reason none was confirmed.

Invariants
    * The interpreter only chooses which inputs to try: a difference counts ONLY when the JVM shows two different
      outcomes for the same call. An ``ERROR`` (e.g. a VerifyError while linking) or a run stopped or not
      started for lack of time (``TIMEOUT``, ``BUDGET``, ``SKIPPED``) on either side confirms nothing, with one
      exception: a side still running when stopped, :data:`HANG_FACTOR` times as long as the other side took
      to finish and at least :data:`HANG_FLOOR_MS` (:attr:`JvmOutcomes.runs_on`: non-termination; the harness
      waits that long past its per-run cap, budget permitting, so the rule holds whatever the other side took).
    * A call on a :class:`Built` receiver confirms something only when both versions' receivers started alike
      (:func:`_receivers_compared`): otherwise the difference would be the constructors', not the method's.
    * A pair's JVM runs never take more than what its ``--method-timeout`` has left when each is asked for.
    * Deterministic: the generator is seeded by the method's name and descriptor. ORIG runs twice per call where
      its outcome and OPT's differ: a call whose ORIG outcome differs from itself (identity hash codes, time)
      confirms nothing.
"""
from __future__ import annotations

import hashlib
import math
import os
import random
import re
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, cast

from ..classfile.descriptors import parse_method_descriptor
from ..classfile.model import Access, ClassFile, MethodInfo
from ..egraph.clock import clock, waiting
from ..ir.interp import (InterpError, Interpreter, JArray, JavaThrow, JObject, Returned, Unsupported, default_value,
                         run_method, runtime_class)
from ..ir.nodes import FieldRef, IRMethod, MethodRef
from ..jdk.handler import DefaultCallHandler
from ..semantics import to_f32
from .hints import Hints, input_hints

HARNESS_SOURCE = Path(__file__).with_name("Harness.java")
PRIMS = "IJFDZCSB"
INTERP_BUDGET = 20_000  # steps per run: enough for the small kernels this is for; a Python step is slow
SCREEN_CAP_S = 3.0  # the screen's share of a pair's budget at most (the JVM gets the undecided inputs)
MAX_CANDIDATES = 8  # inputs the interpreter found different, per pair sent to the JVM
# inputs the interpreter could not judge (a Math function it does not model, a generated object, a long loop),
# per pair sent to the JVM to evaluate; the pair's JVM budget bounds what they cost. Those that vary the kinds of
# values first (_varied): on ProGuard's lang3 output every difference among them showed by the 4th (40 before,
# in input order: the 36th), and 24 still give three arguments of four kinds each every two kinds together
MAX_UNJUDGED = 24
MAX_HINTED = 240  # inputs made from the pair's own constants and conditions (hints.py)
# inputs screened before a pair's proof (its edge values first): a difference they show, once the JVM confirms
# it, settles the pair without the proof attempts, which cost a different pair most of its time
QUICK_INPUTS = 24
# inputs of one pair whose runs may be stopped at their cap before its search ends: each keeps a core busy until
# its JVM is replaced, and an input that runs on past the cap on both sides is seldom alone
MAX_STOPPED = 2
CALL_TIMEOUT_MS = 2000  # per run of one version on one input, and never more than the pair's budget has left
JVM_SHARE = 0.15  # of a pair's budget kept from the screen for the JVM runs (the screen stops that much early)
# past a pair's deadline, how long the JVM gets to send the answer of a call whose runs it already bounded by that
# deadline (it sets up and encodes outside them) before it is killed
ANSWER_GRACE_S = 0.5

_INT_EDGES = [0, 1, -1, 2, -2, 7, 100, -100, 2**31 - 1, -2**31]
_LONG_EDGES = [0, 1, -1, 2, -7, 100, 2**31 - 1, -2**31, 2**63 - 1, -2**63]
_SMALL_EDGES = {"S": [0, 1, -1, 32767, -32768], "B": [0, 1, -1, 127, -128], "C": [0, 1, 65, 97, 65535],
                "Z": [0, 1]}
# 2^24 and 2^53: the first powers of two where x + 1 == x (a float or double counter stops there, and a sum and its
# reordering part), before NaN and the infinities: an input the interpreter cannot finish is asked of the JVM in
# this order, and a loop runs on for ever at an infinity on both sides far more often than at 2^24 (EqBench's
# ``REVE/loop``: counting up to 2^24 in floats never ends, counting down from it does)
_FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 16777216.0, float("nan"), float("inf"), float("-inf"),
                3.4028234663852886e38, 1.401298464324817e-45]
_DOUBLE_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 9007199254740992.0, float("nan"), float("inf"), float("-inf"),
                 1.7976931348623157e308, 5e-324]
# lengths of the arrays of equal elements passed with an int parameter of the same value (a length or count
# parameter): k copies of x / k summed differ from x for these k and x = 1 (EqBench's ``REVE/average``: ten
# ``1 / 10.0`` add up to 0.9999999999999999), and the edge arrays are at most 6 long
_RUN_LENGTHS = (10, 7)
_STRING_EDGES = [None, "", "a", "hello", "Hello World", "12345"]
# tried with the hints: the smallest normal values and subnormals of each sign (gradual underflow, where x * y
# and x / y lose bits that the same sum over ideal reals keeps)
_FLOAT_EXTRA = [1.1754943508222875e-38, 5.877471754111438e-39, -1.401298464324817e-45, -5.877471754111438e-39]
_DOUBLE_EXTRA = [2.2250738585072014e-308, 1.1125369292536007e-308, -5e-324, -1.1125369292536007e-308]


# -- eligibility and generation -------------------------------------------------------------------------------
OBJECT = "Ljava/lang/Object;"


@dataclass(frozen=True, slots=True)
class SameAs:
    """An argument that is the very object passed as argument ``index`` (an earlier one of the same type)."""

    index: int


@dataclass(frozen=True, slots=True)
class Opaque:
    """A generated ``Object`` or interface argument the interpreter does not model: ``plain`` an object of no
    interesting class (for ``Object`` the harness's ``Plain``, for an interface a stub whose methods return null,
    false or zero; hash codes the same in every run), ``null-string`` the same but ``toString()`` returns null,
    ``deep-null-string`` (interfaces only) a stub whose ``toString()`` returns null and whose methods returning an
    interface or ``Object`` return such an object in turn (what ``"x" + p.getRawType()`` needs to show that
    ``String.valueOf`` of it is null where string conversion gives ``"null"``)."""

    kind: str


_OBJECT_EDGES: list = [None, Opaque("plain"), "a", Opaque("null-string")]
# for an interface: the harness's stubs (random inputs draw from the first three only)
_STUB_EDGES: list = [None, Opaque("plain"), Opaque("null-string"), Opaque("deep-null-string")]


_THROWABLES = ["runtime", "checked", "null-string-runtime", "null-string-checked"]
#: parameters of these JDK classes get null and the objects the harness builds by these names (its
#: ``libraryValue``; token ``V<name>``), each an instance of the type; the interpreter does not model them, so the
#: JVM answers every input with one. A Throwable whose ``toString()`` returns null is what shows a message built by
#: string conversion (``"x: " + ex``) rewritten into ``String.concat``.
_LIBRARY_VALUES: dict[str, list[str]] = {
    "Ljava/lang/Class;": ["class-Object", "class-String", "class-int", "class-int[]", "class-Runnable"],
    "Ljava/lang/Throwable;": _THROWABLES,
    "Ljava/lang/Exception;": _THROWABLES,
    "Ljava/lang/RuntimeException;": ["runtime", "null-string-runtime"],
    "Ljava/lang/Integer;": ["int-0", "int-1", "int--1", "int-min", "int-max"],
    "Ljava/lang/Long;": ["long-0", "long-1", "long--1", "long-min", "long-max"],
    "Ljava/lang/Boolean;": ["boolean-false", "boolean-true"],
    "Ljava/lang/Character;": ["char-0", "char-a"],
    "Ljava/lang/Double;": ["double-0", "double-1", "double-nan", "double--0"],
    "Ljava/util/Locale;": ["locale-root", "locale-en-us", "locale-fr-ca"],
}


#: how reports show the library values whose name is not Java text already
_LIBRARY_SHOWN = {
    "class-Object": "Object.class", "class-String": "String.class", "class-int": "int.class",
    "class-int[]": "int[].class", "class-Runnable": "Runnable.class",
    "runtime": 'new RuntimeException("m")', "checked": 'new Exception("m")',
    "null-string-runtime": "a RuntimeException whose toString() returns null",
    "null-string-checked": "a checked Exception whose toString() returns null",
    "int-0": "Integer 0", "int-1": "Integer 1", "int--1": "Integer -1", "int-min": "Integer.MIN_VALUE",
    "int-max": "Integer.MAX_VALUE", "long-0": "Long 0", "long-1": "Long 1", "long--1": "Long -1",
    "long-min": "Long.MIN_VALUE", "long-max": "Long.MAX_VALUE", "boolean-false": "Boolean.FALSE",
    "boolean-true": "Boolean.TRUE", "char-0": "Character 0", "char-a": "Character 'a'", "double-0": "Double 0.0",
    "double-1": "Double 1.0", "double-nan": "Double NaN", "double--0": "Double -0.0", "locale-root": "Locale.ROOT",
    "locale-en-us": "Locale.US", "locale-fr-ca": "Locale.CANADA_FRENCH",
}


def _supported_param(d: str, interfaces: frozenset[str] = frozenset()) -> bool:
    if d in PRIMS or d in ("Ljava/lang/String;", OBJECT) or d in interfaces:
        return True
    if d.startswith("[[") and d[2:] in PRIMS:
        return True  # matrices: square, ragged, with a null row, with one row object twice
    return d.startswith("[") and (d[1:] in PRIMS or d[1:] == "Ljava/lang/String;")


@dataclass(frozen=True, slots=True)
class Built:
    """The receiver of an instance call built by the shape's constructor (:attr:`Shape.ctor`) on ``args``: the
    one argument after the method's own in an input. A :class:`SameAs` among ``args`` counts the method's
    arguments first, then these."""

    args: tuple = ()


@dataclass(frozen=True, slots=True)
class Shape:
    """How a call is made. ``static``; ``instance``: on a receiver allocated without running a constructor, whose
    own instance fields ``fields`` (those of a type the search generates) get generated values, the others
    their defaults, or (an input whose argument after the method's own is :class:`Built`) on the receiver that
    the class's constructor ``ctor`` (a descriptor; "" for none) builds, in each version its own;
    ``constructor``: the object it builds is the outcome; ``none``: no call can be made (``why``).
    ``field_types``: every instance field the class declares, (name, descriptor): the receiver's state after the
    call, compared and shown. ``static_types``: the static fields the class declares, compared after the call
    whatever its kind. ``owner``: the class's simple name, for reports."""

    kind: str = "static"
    fields: tuple[tuple[str, str], ...] = ()
    field_types: tuple[tuple[str, str], ...] = ()
    why: str = ""
    static_types: tuple[tuple[str, str], ...] = ()
    ctor: str = ""
    owner: str = ""

    def generated(self, descriptor: str) -> str:
        """The descriptor inputs are generated for: the parameters, then the receiver's generated fields (the
        method's own when there are none: its inputs, seeded by it, stay what they were)."""
        if not self.fields:
            return descriptor
        params, _ret = parse_method_descriptor(descriptor)
        return "(" + "".join(params) + "".join(d for _n, d in self.fields) + ")V"

    @property
    def ctor_params(self) -> list[str]:
        return list(parse_method_descriptor(self.ctor)[0]) if self.ctor else []

    def built(self, descriptor: str) -> str:
        """The descriptor inputs with a built receiver are generated for: the parameters, then the
        constructor's (the method's own descriptor for a constructor without parameters)."""
        if not self.ctor_params:
            return descriptor
        params, _ret = parse_method_descriptor(descriptor)
        return "(" + "".join(params) + "".join(self.ctor_params) + ")V"

    def flat(self, params: Sequence[str], args: list) -> tuple[list[str], list]:
        """An input's types and values in the order :class:`SameAs` counts them: the method's arguments, then
        the receiver's generated fields or its constructor's arguments."""
        n = len(params)
        if len(args) > n and isinstance(args[n], Built):
            return [*params, *self.ctor_params], [*args[:n], *args[n].args]
        return [*params, *(d for _n, d in self.fields)], list(args)


def shape_of(cf: ClassFile, method: MethodInfo, opt_method: MethodInfo | None = None) -> Shape:
    """The call shape of ``method`` of ORIG's class ``cf`` (``opt_method``: its partner in OPT)."""
    if opt_method is not None and opt_method.is_static != method.is_static:
        return Shape("none", why="the method became static or stopped being: no one call fits both")
    statics = tuple((f.name, f.descriptor) for f in cf.fields if f.access & Access.STATIC)
    if method.is_static:
        return Shape(static_types=statics)
    if method.name == "<clinit>":
        return Shape("none", why="a class initializer is not called")
    if cf.is_interface or cf.access & Access.ABSTRACT:
        return Shape("none", why="no receiver: the class is abstract")
    own = tuple((f.name, f.descriptor) for f in cf.fields if not f.access & Access.STATIC)
    if method.name == "<init>":
        return Shape("constructor", field_types=own, static_types=statics)
    settable = tuple((n, d) for n, d in own if d not in (OBJECT,) and _supported_param(d))
    return Shape("instance", settable, own, static_types=statics, ctor=_simplest_constructor(cf),
                 owner=cf.name.rsplit("/", 1)[-1])


def _simplest_constructor(cf: ClassFile) -> str:
    """The descriptor of the constructor receivers are built with: of the class's constructors that are not
    private and whose parameters the search generates, the one with the fewest parameters (the first declared
    among those); "" when there is none. A receiver its constructor builds is one a client can hold, where
    fields set one by one may be a state no client reaches, and may miss the only one that shows a difference
    (a table the constructor fills)."""
    best = ""
    for m in cf.methods:
        if m.name != "<init>" or m.access & Access.PRIVATE:
            continue
        params, _ret = parse_method_descriptor(m.descriptor)
        fewer = not best or len(params) < len(parse_method_descriptor(best)[0])
        if fewer and all(_supported_param(p) for p in params):
            best = m.descriptor
    return best


def eligible(shape: Shape, descriptor: str, interfaces: frozenset[str] = frozenset()) -> str | None:
    """None when the pair can be searched, else why not. ``interfaces``: the descriptors of the parameter types
    that are interfaces (the harness implements them with stubs)."""
    if shape.kind == "none":
        return f"counterexample search: {shape.why}"
    params, _ = parse_method_descriptor(descriptor)
    bad = [p for p in params if not _supported_param(p, interfaces) and p not in _LIBRARY_VALUES]
    if bad:
        return f"counterexample search does not generate {bad[0]} arguments"
    return None


def _edges(d: str, interfaces: frozenset[str] = frozenset()) -> list:
    if d == "I":
        return _INT_EDGES
    if d == "J":
        return _LONG_EDGES
    if d in _SMALL_EDGES:
        return _SMALL_EDGES[d]
    if d == "F":
        return _FLOAT_EDGES
    if d == "D":
        return _DOUBLE_EDGES
    if d == "Ljava/lang/String;":
        return _STRING_EDGES
    if d == OBJECT:
        return _OBJECT_EDGES
    if d in interfaces:
        return _STUB_EDGES
    if d in _LIBRARY_VALUES:
        return [None, *(Opaque("library:" + k) for k in _LIBRARY_VALUES[d])]
    if d.startswith("[["):
        return _matrix_edges(d)
    comp = d[1:]
    e = [x for x in _edges(comp) if x is not None]  # boolean has only two edge values
    return [None, [], [e[1 % len(e)]], e[:6], [e[2 % len(e)], e[0], e[1 % len(e)]]]


def _matrix_edges(d: str) -> list:
    """Two-dimensional arrays: null, no rows, an empty row, 1x1, 2x2, 3x3, ragged, a null row, and one row
    object twice (a write through one row shows in the other: what a wrong read-over-write misses)."""
    e = [x for x in _edges(d[2:]) if x is not None]
    n = len(e)

    def row(k: int, length: int) -> list:
        return [e[(k + j) % n] for j in range(length)]
    shared = row(2, 2)
    return [None, [], [[]], [row(1, 1)], [row(2, 2), row(3, 2)], [row(1, 3), row(2, 3), row(3, 3)],
            [row(1, 1), row(2, 3), []], [row(2, 2), None], [shared, shared]]


def _random(d: str, rng: random.Random, interfaces: frozenset[str] = frozenset()) -> Any:
    if d == "I":
        return rng.choice([rng.randint(-10, 10), rng.randint(-1000, 1000), rng.randint(-2**31, 2**31 - 1)])
    if d == "J":
        return rng.choice([rng.randint(-10, 10), rng.randint(-2**63, 2**63 - 1)])
    if d == "S":
        return rng.randint(-32768, 32767)
    if d == "B":
        return rng.randint(-128, 127)
    if d == "C":
        return rng.choice([rng.randint(32, 126), rng.randint(0, 65535)])
    if d == "Z":
        return rng.randint(0, 1)
    if d == "F":
        return to_f32(rng.choice([rng.uniform(-10, 10), float(rng.randint(-100, 100)), rng.uniform(-1e6, 1e6)]))
    if d == "D":
        return rng.choice([rng.uniform(-10, 10), float(rng.randint(-100, 100)), rng.uniform(-1e12, 1e12)])
    if d == "Ljava/lang/String;":
        return "".join(chr(rng.randint(32, 126)) for _ in range(rng.randint(0, 8)))
    if d == OBJECT:
        return rng.choice(_OBJECT_EDGES[1:] + [_random("Ljava/lang/String;", rng)])
    if d in interfaces:
        return rng.choice(_STUB_EDGES[1:3])
    if d in _LIBRARY_VALUES:
        return Opaque("library:" + rng.choice(_LIBRARY_VALUES[d]))
    return [_random(d[1:], rng) for _ in range(rng.randint(1, 6))]


def _product(pools: Sequence[list]) -> list[list]:
    """Every combination, the first pool varying slowest."""
    out: list[list] = [[]]
    for pool in pools:
        out = [prefix + [v] for prefix in out for v in pool]
    return out


def generate_inputs(descriptor: str, count: int = 96, interfaces: frozenset[str] = frozenset(),
                    hints: Hints | None = None) -> list[list]:
    """Argument lists (Python values: int, float, str, None, list for arrays, :class:`Opaque` and
    :class:`SameAs`): edge combinations first, then combinations of the ``hints`` (the pair's own constants and
    the values that flip its conditions), aliased arrays, random values. ``interfaces`` as for
    :func:`eligible`."""
    params, _ = parse_method_descriptor(descriptor)
    if not params:
        return [[]]  # one call: every input is the same (a constructor or method without parameters)
    rng = random.Random(zlib.crc32(descriptor.encode()))
    edges = [_edges(p, interfaces) for p in params]
    out: list[list] = []
    total = math.prod(len(e) for e in edges) if edges else 1
    if total <= 150:
        out.extend(_product(edges))
    else:
        for k in range(max(len(e) for e in edges)):
            out.append([e[k % len(e)] for e in edges])
    hinted = _hinted(params, edges, hints or Hints(), rng)
    aliased = _aliased(params, out + hinted)  # the runs of ones are no base: an aliased pair shows on short arrays
    out.extend(_equal_runs(params, edges))
    out.extend(hinted)
    out.extend(aliased)
    while len(out) < total + count // 3 and len(out) < count + (total if total <= 150 else 0):
        out.append([rng.choice(e) if rng.random() < 0.4 else _random(p, rng, interfaces)
                    for p, e in zip(params, edges)])
    return out


def _equal_runs(params: Sequence[str], edges: list[list]) -> list[list]:
    """Inputs whose arrays of numbers each hold k ones (of :data:`_RUN_LENGTHS`), with each int parameter in
    turn k (the others at their first edge value, 0), or with none when there is no int parameter: a length
    passed beside its array, where a sum divided once and a sum of quotients part."""
    arrays = [i for i, d in enumerate(params) if d[:1] == "[" and d[1:] in "IJSBFD" and len(d) == 2]
    if not arrays:
        return []
    counts: list[int | None] = [i for i, d in enumerate(params) if d == "I"] or [None]
    out: list[list] = []
    for k in _RUN_LENGTHS:
        for c in counts:
            args = [e[0] for e in edges]
            for i in arrays:
                args[i] = [1.0 if params[i][1] in "FD" else 1] * k
            if c is not None:
                args[c] = k
            out.append(args)
    return out


def _hinted(params: Sequence[str], edges: list[list], hints: Hints, rng: random.Random) -> list[list]:
    """Inputs from each parameter's hints (for floating point also subnormals), the other parameters taking
    their first few edge values: all combinations when there are at most :data:`MAX_HINTED`, else each hint
    with the others at their first value and then seeded random combinations."""
    pools = []
    for i, d in enumerate(params):
        extra = _FLOAT_EXTRA if d == "F" else _DOUBLE_EXTRA if d == "D" else []
        pools.append(hints.get(i) + extra)
    if not any(pools):
        return []
    pools = [p or e[:3] for p, e in zip(pools, edges)]
    if math.prod(len(p) for p in pools) <= MAX_HINTED:
        return _product(pools)
    out: list[list] = []
    for i, pool in enumerate(pools):
        out.extend([p[0] for p in pools[:i]] + [v] + [p[0] for p in pools[i + 1:]] for v in pool[1:])
    while len(out) < MAX_HINTED:
        out.append([rng.choice(p) for p in pools])
    return out


def _aliased(params: Sequence[str], inputs: list[list], per_pair: int = 4) -> list[list]:
    """Copies of some ``inputs`` in which a later array parameter is the same array as an earlier one of the
    same type (non-empty ones first: an empty array shows no aliasing)."""
    out: list[list] = []
    for j, pj in enumerate(params):
        for i in range(j):
            if params[i] != pj or not pj.startswith("["):
                continue
            bases = sorted((a for a in inputs if isinstance(a[i], list)), key=lambda a: -len(a[i]))[:per_pair]
            for a in bases:
                b = list(a)
                b[j] = SameAs(i)
                out.append(b)
    return out


# -- the IR interpreter as a screen --------------------------------------------------------------------------
def _to_interp(d: str, v: Any, made: dict[int, JArray] | None = None) -> Any:
    """The interpreter's value of argument ``v``; a row list that occurs twice in ``v`` is one array twice."""
    if isinstance(v, Opaque):
        what = _LIBRARY_SHOWN.get(v.kind[len("library:"):], v.kind) if v.kind.startswith("library:") else \
            f"{v.kind} object"
        raise Unsupported(f"generated {what}")  # the JVM answers for it
    if v is None or not d.startswith("["):
        return v
    made = {} if made is None else made
    if id(v) not in made:
        made[id(v)] = JArray(d, [_to_interp(d[1:], x, made) for x in v])
    return made[id(v)]


def _canon(v: Any) -> Any:
    """A comparable form: floats by bits (every NaN alike), arrays by descriptor and elements."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else ("f", struct.pack(">d", v))
    if isinstance(v, JArray):
        return ("array", v.desc, tuple(_canon(x) for x in v.items))
    if v is None or isinstance(v, (int, str)):
        return v
    return ("object", getattr(v, "cls", type(v).__name__))


def _interp_outcome(ir: IRMethod, params: Sequence[str], args: list, handler: DefaultCallHandler,
                    shape: Shape) -> tuple[Any, Any]:
    """The receiver's state before the call (None unless it is :class:`Built`: the two versions' receivers
    must start alike for a difference to be the method's) and the call's outcome."""
    heap = handler.make_heap()
    actual: list = []
    for p, a in zip(*shape.flat(params, args)):
        actual.append(actual[a.index] if isinstance(a, SameAs) else _to_interp(p, a))
    n = len(params)
    this: tuple = ()
    before = None
    if shape.kind == "static":
        out = run_method(ir, actual, heap, handler, budget=INTERP_BUDGET)
    else:
        if len(args) > n and isinstance(args[n], Built):
            recv = _construct(ir.class_name, shape.ctor, actual[n:], heap, handler)
            if not isinstance(recv, JObject):
                return ("no receiver", recv), None  # its constructor threw: no call is made
            before = (_fields_of(recv, ir.class_name, shape), _statics_of(heap, ir.class_name))
        else:
            recv = JObject(ir.class_name)  # each side's own class name: --map may rename it
            for (name, d), v in zip(shape.fields, actual[n:]):
                recv.fields[FieldRef(ir.class_name, name, d)] = v
        out = run_method(ir, [recv, *actual[:n]], heap, handler, budget=INTERP_BUDGET)
        this = _fields_of(recv, ir.class_name, shape)
    printed = heap.take_output()
    after = tuple(_canon(a) for a in actual[:n])
    statics = _statics_of(heap, ir.class_name)
    if isinstance(out, Returned):
        return before, ("R", _canon(out.value), after, this, statics, printed)
    return before, ("T", out.exception, after, this, statics, printed)


def _construct(cls: str, ctor: str, args: list, heap: Any, handler: DefaultCallHandler) -> JObject | str:
    """``new cls(args)`` by constructor ``ctor`` in the interpreter: the object, or the class of the exception
    the constructor threw."""
    interp = Interpreter(heap, handler, budget=INTERP_BUDGET)
    try:
        obj = handler.new(interp, cls, MethodRef(cls, "<init>", ctor), list(args))
    except JavaThrow as e:
        return runtime_class(e.obj)
    return cast(JObject, obj)  # as before: what the constructor built (typed as the object it is in practice)


def _fields_of(recv: JObject, cls: str, shape: Shape) -> tuple:
    return tuple(_canon(recv.fields.get(FieldRef(cls, name, d), default_value(d))) for name, d in shape.field_types)


def _statics_of(heap: Any, cls: str) -> tuple:
    """The static fields of class ``cls`` (each side's own: --map may rename it); a field at its default is one
    the model may never have stored: left out on both sides alike."""
    return tuple(sorted((f.name, f.descriptor, _canon(v)) for f, v in heap.statics.items()
                        if f.owner == cls and _canon(v) != _canon(default_value(f.descriptor))))


@dataclass(slots=True)
class Screening:
    candidates: list[list] = field(default_factory=list)  # inputs sent (or, without a JVM, to send) to the JVM
    tried: int = 0
    differing: int = 0
    unsupported: str = ""


@dataclass(slots=True)
class Search:
    """A pair's counterexample search: its screen, and what the JVM said of the candidates it was asked about,
    each right after the screen found it (``found``: the first confirmed input and its outcomes)."""

    screened: Screening = field(default_factory=Screening)
    found: tuple[list, JvmOutcomes] | None = None
    late: list | None = None  # the first input whose runs were stopped for time
    stopped_runs: int = 0  # inputs whose runs were stopped for time (the search went on after each)
    no_time: bool = False  # nothing was left of the budget to start an input's runs, and none was stopped
    unanswered: str = ""  # why the JVM gave no answer (the search stopped there)
    jvm_ms: int = 0  # the JVM's time on the pair's calls
    unclear: list[list] = field(default_factory=list)  # inputs the interpreter could not judge
    orig_ir: IRMethod | None = None  # what was screened (a resumed search screens the same)
    opt_ir: IRMethod | None = None


#: asks the JVM about one input before a deadline: (outcomes, "") or (None, why there is no answer)
Confirm = Callable[[list], tuple["JvmOutcomes | None", str]]


def search(orig_ir: IRMethod, opt_ir: IRMethod, descriptor: str, orig_classes: dict, opt_classes: dict,
           screen_deadline: float, interfaces: frozenset[str] = frozenset(), shape: Shape = Shape(),
           confirm: Confirm | None = None, *, quick: int = 0, resume: Search | None = None,
           handlers: tuple[DefaultCallHandler, DefaultCallHandler] | None = None) -> Search:
    """Screen the generated inputs in the interpreter until ``screen_deadline`` (at most :data:`SCREEN_CAP_S`)
    and ask ``confirm`` about each input found different as soon as it is found: the first the JVM confirms
    ends the search, as does a call with nothing left of the pair's budget or that got no answer, and the
    :data:`MAX_STOPPED`-th input whose runs were stopped at their cap (before it, the next input may still show
    a difference); at most :data:`MAX_CANDIDATES` such inputs. Then up to :data:`MAX_UNJUDGED` inputs the
    interpreter could not judge are asked about the same way. Without ``confirm`` (no JVM) the inputs are only
    collected as candidates.

    ``quick``: screen only the first ``quick`` inputs and ask only about those found different (the search
    before the proof: :data:`QUICK_INPUTS`); ``resume``: go on from where that search (of the same pair, on
    the same IR) stopped, its counts and the inputs it could not judge kept. ``handlers``: ORIG's and OPT's call
    handlers over ``orig_classes`` and ``opt_classes``, shared by the searches of one run (:func:`call_handlers`);
    made afresh when not given."""
    res = resume if resume is not None else Search()
    res.orig_ir, res.opt_ir = orig_ir, opt_ir
    for args, differs in _screen(orig_ir, opt_ir, descriptor, orig_classes, opt_classes, screen_deadline,
                                 interfaces, shape, res.screened, quick or None, handlers):
        if not differs:
            res.unclear.append(args)
        elif _ask(res, args, confirm):
            return res
        elif res.screened.differing >= MAX_CANDIDATES:
            break
    if quick:
        return res
    # inputs the model could not judge go to the JVM too (after the ones it found different), one of each kind of
    # generated object first: the first few would otherwise all pass the same object
    for args in _varied(res.unclear, MAX_UNJUDGED):
        if _ask(res, args, confirm):
            break
    return res


def _ask(res: Search, args: list, confirm: Confirm | None) -> bool:
    """Ask the JVM about ``args`` (a candidate); True when that ends the search."""
    res.screened.candidates.append(args)
    if confirm is None:
        return False
    t0 = time.monotonic()
    answer, why = confirm(args)
    res.jvm_ms += int((time.monotonic() - t0) * 1000)
    if answer is None:
        res.unanswered = why
        return True
    if answer.confirms or answer.runs_on:
        res.found = (args, answer)
        return True
    if answer.out_of_time:
        if all(o.startswith("BUDGET") for o in (answer.orig, answer.opt)):
            res.no_time = res.late is None  # nothing left to run it in: the search is over
            return True
        # a run stopped at its cap with no evidence either way: the next input may still show a difference
        # (Loop02's loop of 2^31 steps on both sides at MAX_VALUE, one side only at MIN_VALUE), as long as the
        # pair's budget lasts (its JVM ended; the next call starts a fresh one)
        res.late = res.late if res.late is not None else args
        res.stopped_runs += 1
        return res.stopped_runs >= MAX_STOPPED
    return False


def _screen(orig_ir: IRMethod, opt_ir: IRMethod, descriptor: str, orig_classes: dict, opt_classes: dict,
            deadline: float, interfaces: frozenset[str], shape: Shape, res: Screening,
            limit: int | None = None,
            handlers: tuple[DefaultCallHandler, DefaultCallHandler] | None = None) -> Iterator[tuple[list, bool]]:
    """Both methods run on the generated inputs (edge values, the pair's hints, random ones) from the
    ``res.tried``-th on, until time is up or ``res.tried`` reaches ``limit``: yields each input whose outcomes
    differ (True) or that the interpreter could not judge (False); counts in ``res``."""
    params, _ = parse_method_descriptor(descriptor)
    hints = input_hints(orig_ir, opt_ir, descriptor)
    handlers = handlers or call_handlers(orig_classes, opt_classes)
    deadline = min(deadline, clock() + SCREEN_CAP_S)
    inputs = shape_inputs(shape, descriptor, interfaces, hints)
    for args in inputs[res.tried:limit]:
        if clock() > deadline:
            return
        res.tried += 1
        try:
            pre_a, a = _interp_outcome(orig_ir, params, args, handlers[0], shape)
            pre_b, b = _interp_outcome(opt_ir, params, args, handlers[1], shape)
        except Unsupported as e:
            res.unsupported = res.unsupported or e.reason
            yield args, False
            continue
        except (InterpError, RecursionError, Exception) as e:  # the model failed: the JVM can still answer
            res.unsupported = res.unsupported or f"{type(e).__name__}: {e}"
            yield args, False
            continue
        if pre_a != pre_b:
            continue  # the constructors built different receivers: a difference of theirs, not the method's
        if a != b:
            res.differing += 1
            yield args, True


def call_handlers(orig_classes: dict, opt_classes: dict) -> tuple[DefaultCallHandler, DefaultCallHandler]:
    """The interpreter's call handlers of ORIG's and OPT's classes. One pair of them can serve every screen of a
    validate run: what a handler keeps (the class hierarchy its heaps share, the lifted methods, the resolved
    call targets) are facts of the class files, which no run changes, and each run gets a fresh heap
    (:meth:`~peggy_jvm.jdk.handler.DefaultCallHandler.make_heap`). Made per screen, every pair's screens built
    a hierarchy of all the run's classes again and lifted the callees again: in one run of 63 EqBench pairs
    about a sixth of the quick search's CPU (profiled), and growing with the number of classes in the run."""
    return DefaultCallHandler(orig_classes), DefaultCallHandler(opt_classes)


def shape_inputs(shape: Shape, descriptor: str, interfaces: frozenset[str] = frozenset(),
                 hints: Hints | None = None) -> list[list]:
    """The inputs of a call of ``shape``: :func:`generate_inputs`; for an instance method with a constructor
    (:attr:`Shape.ctor`) those with generated fields taken in turn with those whose receiver is :class:`Built`
    (each kind gets its edge values and hints early), except that an input on a receiver with no generated fields
    whose arguments a built input already passed comes after all the others."""
    fielded = generate_inputs(shape.generated(descriptor), interfaces=interfaces, hints=hints)
    if shape.kind != "instance" or not shape.ctor:
        return fielded
    n = len(parse_method_descriptor(descriptor)[0])
    built = [[*a[:n], Built(tuple(a[n:]))]
             for a in generate_inputs(shape.built(descriptor), interfaces=interfaces, hints=hints)]
    out: list[list] = []
    # A receiver with no generated fields is a blank object: an input with it passes the same arguments as the
    # built one before it whenever the constructor takes none, and taken in turn the two would show the quick
    # search (the first QUICK_INPUTS) half as many argument lists: EqBench's helpers ``foo(a, b)`` of classes
    # without fields differ first at ``foo(1, -1)``, the 13th list and so the 25th input, one past the quick
    # search, and each such pair then paid two failed proofs (0.1-0.25 s of CPU) before its full search found it.
    # Such a repeat goes after all the others: the full search still tries it, only later.
    seen: set[str] = set()
    repeats: list[list] = []
    for k in range(max(len(fielded), len(built))):
        if k < len(built):
            out.append(built[k])
            seen.add(repr(built[k][:n]))
        if k < len(fielded):
            (repeats if not shape.fields and repr(fielded[k]) in seen else out).append(fielded[k])
    return out + repeats


def _kinds(args: list) -> tuple:
    """What kind of value each argument of an input is (a :class:`Built` receiver's arguments after the method's):
    a generated object's kind, null, or some other value ("v": a number, a string, an array)."""
    flat: list = []
    for a in args:
        flat.extend(a.args if isinstance(a, Built) else (a,))
    return tuple(a.kind if isinstance(a, Opaque) else "null" if a is None else "v" for a in flat)


def _varied(inputs: list[list], limit: int) -> list[list]:
    """At most ``limit`` of ``inputs``, those that vary the kinds of values (:func:`_kinds`) most first: each next
    one is the first input that gives some argument a kind no input chosen gave it yet, the most such arguments
    first; once every argument had each of its kinds, the first that gives two arguments a combination of kinds
    not chosen together yet, the most such pairs first; then the others in order. Taken in order, an input with
    three interface arguments had its first argument a null-string stub only after the 32nd (``TypeUtils.
    isAssignable(Type, GenericArrayType, Map)``, shown different on its 36th JVM call); so it is the 2nd."""
    kinds = [_kinds(a) for a in inputs]
    singles = [{(i, k) for i, k in enumerate(ks)} for ks in kinds]
    pairs = [{(i, ks[i], j, ks[j]) for i in range(len(ks)) for j in range(i + 1, len(ks))} for ks in kinds]
    seen1: set = set()
    seen2: set = set()
    chosen: list[int] = []
    left = list(range(len(inputs)))
    while left and len(chosen) < limit:
        best, score = -1, (0, 0)
        for n in left:  # the first with the most new kinds, then new pairs of kinds (ties: the earlier input)
            s = (len(singles[n] - seen1), len(pairs[n] - seen2))
            if s > score:
                best, score = n, s
        if best < 0:
            break  # nothing new left to show: the rest in order
        chosen.append(best)
        left.remove(best)
        seen1 |= singles[best]
        seen2 |= pairs[best]
    return [inputs[n] for n in chosen] + [inputs[n] for n in left[:max(0, limit - len(chosen))]]


# -- the JVM ---------------------------------------------------------------------------------------------------
def _bits_f(v: float) -> int:
    return struct.unpack(">i", struct.pack(">f", v))[0]


def _bits_d(v: float) -> int:
    return struct.unpack(">q", struct.pack(">d", v))[0]


_SEPARATORS = "|~"  # between array elements, by nesting depth (a row of a matrix uses the second)


def encode_arg(d: str, v: Any, depth: int = 0) -> str:
    """The harness's argument token for value ``v`` of type ``d`` (see Harness.java); in a matrix, a row object
    that occurred before is ``^K`` (the same array as row K)."""
    if isinstance(v, SameAs):
        return f"@{v.index}"
    if isinstance(v, Opaque):
        if v.kind.startswith("library:"):
            return "V" + v.kind[len("library:"):]
        return {"plain": "P", "null-string": "Q", "deep-null-string": "R"}[v.kind]
    if d in "IJSBCZ" and len(d) == 1:
        return str(int(v))
    if d == "F":
        return str(_bits_f(v))
    if d == "D":
        return str(_bits_d(v))
    if v is None:
        return "N"
    if isinstance(v, str):  # a String parameter, or a String passed for an Object
        return "S" + ".".join(f"{ord(c):x}" for c in v)
    items = _rows(v, lambda x: encode_arg(d[1:], x, depth + 1), lambda k: f"^{k}")
    return "A" + _SEPARATORS[depth].join(items)


def _rows(v: list, render, again) -> list[str]:
    """The elements of array ``v`` rendered, a row (list) that occurred before as ``again(its first index)``."""
    first: dict[int, int] = {}
    out = []
    for k, x in enumerate(v):
        if isinstance(x, list) and id(x) in first:
            out.append(again(first[id(x)]))
            continue
        if isinstance(x, list):
            first[id(x)] = k
        out.append(render(x))
    return out


def show_call(params: Sequence[str], args: list, shape: Shape) -> list[str]:
    """A call's inputs for reports: for an instance method first the receiver's generated fields
    (``this: {n=1, xs={1, 2}}``), then the arguments."""
    n = len(params)
    if len(args) > n and isinstance(args[n], Built):
        types, values = shape.flat(params, args)
        shown = show_args(types, values, [f"argument {k + 1}" for k in range(n)]
                          + [f"constructor argument {k + 1}" for k in range(len(types) - n)])
        return [f"this: new {shape.owner}({', '.join(shown[n:])})", *shown[:n]]
    names = [f"argument {k + 1}" for k in range(n)] + [f"field {name}" for name, _d in shape.fields]
    shown = show_args([*params, *(d for _n, d in shape.fields)], args, names)
    if shape.kind != "instance":
        return shown[:n]
    fields = ", ".join(f"{name}={v}" for (name, _d), v in zip(shape.fields, shown[n:]))
    return [f"this: {{{fields}}}", *shown[:n]]


def show_args(params: Sequence[str], args: list, names: Sequence[str] = ()) -> list[str]:
    """Arguments as Java-like text for reports; ``names`` says what a :class:`SameAs` index refers to
    (default: argument K)."""
    def one(d: str, v: Any) -> str:
        if isinstance(v, SameAs):
            return f"(the same array as {names[v.index] if names else f'argument {v.index + 1}'})"
        if isinstance(v, Opaque):
            if v.kind.startswith("library:"):
                return f"({_LIBRARY_SHOWN.get(v.kind[len('library:'):], v.kind[len('library:'):])})"
            what = "Object" if d == OBJECT else d[1:-1].rsplit("/", 1)[-1] + " stub"
            art = "an" if what[0] in "AEIOU" else "a"
            if v.kind == "plain":
                return f"(a plain {what})"
            if v.kind == "deep-null-string":
                return f"({art} {what} whose methods return such stubs and whose toString() returns null)"
            return f"({art} {what} whose toString() returns null)"
        if v is None:
            return "null"
        if d == "Z":
            return "true" if v else "false"
        if d == "C":
            return repr(chr(v))
        if d in ("F", "D"):
            if math.isnan(v):
                return "NaN"
            return repr(v) + ("f" if d == "F" else "")
        if d == "J":
            return f"{v}L"
        if isinstance(v, str):
            return '"' + v.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
        if d.startswith("["):
            return "{" + ", ".join(_rows(v, lambda x: one(d[1:], x), lambda k: f"(row {k} again)")) + "}"
        return str(v)
    return [one(p, a) for p, a in zip(params, args)]


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "peggy-jvm" / "harness"


def _java_tool(name: str) -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).is_file():
        return str(Path(home) / "bin" / name)
    return shutil.which(name)


@dataclass(slots=True)
class Call:
    orig_class: str
    opt_class: str
    name: str
    descriptor: str
    args: list
    shape: Shape = Shape()
    group: int = 0  # the pair the call belongs to: its calls share one JVM budget
    budget_ms: int = 3 * CALL_TIMEOUT_MS  # that pair's whole JVM budget (the same for all calls of a group)
    opt_descriptor: str = ""  # the method's descriptor in OPT when --map renamed a class it names


@dataclass(slots=True)
class JvmOutcomes:
    orig: str
    opt: str
    # ORIG's second run: a different outcome means the call is not deterministic; "SAME" (not run) where ORIG and
    # OPT agreed (no difference to check)
    orig_again: str = ""
    ms: int = 0  # the call's time in the JVM (its three runs)
    orig_ms: int = -1  # ORIG's first run and OPT's run (a run stopped for time: how long it ran); -1 unknown
    opt_ms: int = -1
    stopped: bool = False  # a run was stopped for time (its JVM then ends), whatever the outcomes now read

    @property
    def confirms(self) -> bool:
        """The JVM itself behaved differently (both calls really ran), and ORIG run twice behaved the same: an
        outcome that depends on identity hash codes is no counterexample."""
        bad = ("ERROR",) + NOT_RUN
        return (not self.orig.startswith(bad) and not self.opt.startswith(bad) and self.orig != self.opt
                and self.orig == self.orig_again)

    @property
    def runs_on(self) -> str | None:
        """``"ORIG"`` or ``"OPT"``: that side was still running when stopped, at least :data:`HANG_FACTOR` times
        as long as the other side took to return or throw and at least :data:`HANG_FLOOR_MS` (evidence that it
        does not terminate on this input); None otherwise."""
        for name, slow, slow_ms, fast, fast_ms in (("OPT", self.opt, self.opt_ms, self.orig, self.orig_ms),
                                                   ("ORIG", self.orig, self.orig_ms, self.opt, self.opt_ms)):
            if (slow.startswith("TIMEOUT") and fast.startswith(("R ", "T ")) and fast_ms >= 0
                    and slow_ms >= max(HANG_FLOOR_MS, HANG_FACTOR * fast_ms)):
                return name
        return None

    @property
    def out_of_time(self) -> bool:
        """Some run of the call did not finish, or did not start, within the pair's budget."""
        return self.stopped or any(o.startswith(NOT_RUN) for o in (self.orig, self.opt, self.orig_again))


NOT_RUN = ("TIMEOUT", "BUDGET", "SKIPPED")  # harness outcomes of a run stopped or never started for lack of time
# one side still running when stopped, the other done: a difference (non-termination) when the running side was
# waited for at least this many times as long as the other took, and at least this long (far from any pair that is
# only slower). The harness waits that long for the second side, past the 2 s cap per run (and for ORIG again
# after OPT finished), within the pair's budget: the rule can fire whatever the fast side took, budget permitting
HANG_FACTOR = 100
HANG_FLOOR_MS = 1000


class JvmUnavailable(Exception):
    pass


class JvmHarness:
    """The compiled Harness and the two class trees, each written to a directory by its declared names, and the
    one JVM that serves a validate run's calls (:meth:`ask`), started on first use (or earlier by :meth:`warm`,
    so that it boots while the caller proves), replaced at once after a run it had to stop, and killed when it does not
    answer in time or the run ends (:meth:`close`)."""

    def __init__(self, orig_raw: dict[str, bytes], opt_raw: dict[str, bytes],
                 class_map: dict[str, str] | None = None) -> None:
        # OPT's outcomes name OPT's classes; --map's renames are undone so that a renamed class is no difference
        self.renames = [(re.compile(rf"(?<=[OL ]){re.escape(new)}(?=[;\s,\]|]|$)"), old)
                        for old, new in sorted((class_map or {}).items()) if old != new]
        java = _java_tool("java")
        if java is None:
            raise JvmUnavailable("no java on PATH or in JAVA_HOME")
        self.java: str = java
        self.classes = self._compile()
        self._tmp = tempfile.TemporaryDirectory(prefix="peggy-validate-")
        self.dirs = []
        for tag, raw in (("orig", orig_raw), ("opt", opt_raw)):
            d = Path(self._tmp.name) / tag
            for name, data in raw.items():
                p = d / (name + ".class")
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data)
            d.mkdir(parents=True, exist_ok=True)
            self.dirs.append(d)
        self._proc: subprocess.Popen | None = None
        self._buf = b""
        self._ready = False
        self.starts = 0  # JVMs started (the first, and one after each run stopped or JVM killed)

    def close(self) -> None:
        self._stop()
        self._tmp.cleanup()

    @staticmethod
    def _compile() -> Path:
        """Harness.class in the cache, compiled on first use; keyed by the source's hash so edits recompile."""
        try:
            src = HARNESS_SOURCE.read_bytes()
        except OSError as e:  # e.g. a wheel built without package data
            raise JvmUnavailable(f"harness source missing: {HARNESS_SOURCE}: {e.strerror}") from None
        target = _cache_dir() / hashlib.sha256(src).hexdigest()[:16]
        if (target / "Harness.class").is_file():
            return target
        javac = _java_tool("javac")
        if javac is None:
            raise JvmUnavailable("no javac to compile the validation harness")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".harness-", dir=target.parent))
        try:
            proc = subprocess.run([javac, "-d", str(tmp), str(HARNESS_SOURCE)], capture_output=True, text=True)
        except BaseException:  # an interruption (javac is killed by run): no half-compiled directory left
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        if proc.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            first = (proc.stderr.strip().splitlines() or ["no message"])[0]  # a reason is one line
            raise JvmUnavailable(f"javac failed on the harness: {first[:200]}")
        try:
            os.replace(tmp, target)
        except OSError:  # someone else compiled it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
        return target

    def warm(self) -> None:
        """Start the JVM now if none runs: it gets ready while the caller does other work."""
        if self._proc is None or self._proc.poll() is not None:
            self._stop()
            # a call that crashes the JVM (Unsafe given generated addresses) writes its crash report in the run's
            # own directory, not in the user's working directory, and no core file
            cmd = [os.path.abspath(self.java), "-Xss8m", f"-XX:ErrorFile={Path(self._tmp.name) / 'hs_err_pid%p.log'}",
                   "-XX:-CreateCoredumpOnCrash", f"-Dharness.timeout={CALL_TIMEOUT_MS}",
                   f"-Dharness.hangFactor={HANG_FACTOR}", f"-Dharness.hangFloor={HANG_FLOOR_MS}",
                   "-cp", os.path.abspath(self.classes), "Harness", str(self.dirs[0]), str(self.dirs[1])]
            # its own session: a JVM that does not answer is killed with every thread it runs, and nothing else;
            # started in the run's directory, so that a method writing files by relative names writes them there
            self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, start_new_session=True, cwd=self._tmp.name)
            self._buf, self._ready = b"", False
            self.starts += 1

    def _stop(self) -> None:
        """End the JVM (if one runs) and reap it."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pipe in (proc.stdin, proc.stdout):
            if pipe is None:
                continue
            try:
                pipe.close()
            except OSError:
                pass
        proc.wait()

    def _line(self, deadline: float) -> str | None:
        """The JVM's next line, or None: none by ``deadline`` (:func:`~peggy_jvm.egraph.clock.clock`: the wait counts
        in it), or the JVM ended (``_proc`` then None)."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - clock()
            if left <= 0:
                return None
            with waiting():
                ready = select.select([fd], [], [], left)[0]
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:  # it exited (after a run it had to stop) or died
                self._stop()
                return None
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line.decode("utf-8", "replace")

    def ask(self, call: Call, deadline: float) -> tuple[JvmOutcomes | None, str]:
        """One call's outcomes, its runs bounded by what is left until ``deadline`` (a reading of
        :func:`~peggy_jvm.egraph.clock.clock`, in which the wait for the JVM counts as wall-clock time); (None, why)
        when the JVM gave no answer: not up by the deadline (it is kept for the calls after), or not answering
        :data:`ANSWER_GRACE_S` past it, or dead (it is ended; the next call starts another)."""
        self.warm()
        while not self._ready:
            line = self._line(deadline)
            if line is None:
                if self._proc is None:
                    return None, "the JVM ended before it was ready"
                return None, "the JVM was not up within the pair's budget"
            self._ready = line == "READY"
        left_ms = int((deadline - clock()) * 1000)
        if left_ms <= 0:
            return JvmOutcomes("BUDGET", "BUDGET", "BUDGET"), ""
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write((self._encode(call, left_ms) + "\n").encode("utf-8"))
            self._proc.stdin.flush()
        except OSError:  # it died meanwhile
            self._stop()
            return None, "the JVM died"
        while True:
            line = self._line(deadline + ANSWER_GRACE_S)
            if line is None:
                why = "the JVM died" if self._proc is None else \
                    "the JVM did not answer within the pair's budget: killed"
                self._stop()
                return None, why
            if line.startswith("OUT\t"):
                break
        answer = self._parse(line)
        if answer is not None and answer.stopped:
            # it exits after answering a run it stopped: a fresh one boots now, while the caller screens and
            # proves, not on the clock of the next pair that asks (one validate run of many pairs)
            self._stop()
            self.warm()
        return answer, "" if answer is not None else "the JVM answered garbled"

    def run(self, calls: list[Call]) -> list[JvmOutcomes | None]:
        """Outcomes per call, in order; None for calls the JVM did not answer. The calls of one group (a pair)
        share its ``budget_ms``, counted from its first call; after a call of a group that did not fit it, or
        that the JVM did not answer, the group's other calls are not run (``BUDGET``)."""
        answers: list[JvmOutcomes | None] = []
        deadlines: dict[int, float] = {}
        spent: set[int] = set()
        for c in calls:
            if c.group in spent:
                answers.append(JvmOutcomes("BUDGET", "BUDGET", "BUDGET"))
                continue
            deadline = deadlines.setdefault(c.group, clock() + c.budget_ms / 1000)
            answer, _why = self.ask(c, deadline)
            answers.append(answer)
            if answer is None or answer.out_of_time:
                spent.add(c.group)
        return answers

    @staticmethod
    def _encode(c: Call, budget_ms: int) -> str:
        params, _ = parse_method_descriptor(c.descriptor)
        toks = [encode_arg(p, a) for p, a in zip(params, c.args)]
        rest = c.args[len(params):]
        if rest and isinstance(rest[0], Built):
            toks += [f"K{c.shape.ctor}", *(f"C{encode_arg(d, a)}" for d, a in zip(c.shape.ctor_params, rest[0].args))]
        else:
            toks += [f"F{name}={encode_arg(d, a)}" for (name, d), a in zip(c.shape.fields, rest)]
        return "\t".join([str(c.group), str(budget_ms), c.orig_class, c.opt_class, c.name, c.descriptor,
                          c.opt_descriptor or c.descriptor, *toks])

    def _parse(self, line: str) -> JvmOutcomes | None:
        parts = line.split("\t")
        if len(parts) != 7:
            return None
        opt = parts[2]
        for pattern, old in self.renames:
            opt = pattern.sub(old, opt)
        # a run stopped on a built receiver may read BUILT_APART now: its JVM ended all the same
        stopped = any(o.startswith("TIMEOUT") for o in (parts[1], opt, parts[3]))
        orig, opt, again = _receivers_compared(parts[1], opt, parts[3])
        orig, opt, again = _statics_compared(orig, opt, again)
        return JvmOutcomes(orig, opt, again, int(parts[4]), int(parts[5]), int(parts[6]), stopped)


#: the outcome put for OPT when the two versions' constructors built receivers that are not alike: what the call
#: then does is no difference of the method (an ``ERROR``: it confirms nothing)
BUILT_APART = "ERROR the two constructors built different receivers"


def _receivers_compared(orig: str, opt: str, again: str) -> tuple[str, str, str]:
    """The outcomes of a call on a :class:`Built` receiver with its state before the call (``;this0=``: its
    fields, arrays shared among them, and the class's static fields, after the constructor) taken out. When
    ORIG's and OPT's differ (or ORIG's second run's), or hold an object the harness cannot compare (``?``),
    OPT's outcome becomes :data:`BUILT_APART`: only calls on receivers alike in both versions can show the
    method's difference."""
    split = [_cut_before_state(t) for t in (orig, opt, again)]
    (a, pre_a), (b, pre_b), (c, pre_c) = split
    if pre_a is None and pre_b is None:
        return a, b, c
    # ORIG's second run (when it ran) must have built the same too: a constructor that builds differently
    # each time (a clock, a hash code) builds nothing the two versions can be compared on
    if pre_a is not None and pre_a == pre_b and pre_c in (None, pre_a) and "?" not in pre_a:
        return a, b, c
    return a, BUILT_APART, c


def _cut_before_state(text: str) -> tuple[str, str | None]:
    """A harness outcome without its ``;this0=...`` part (its last), and that part."""
    front, mark, state = text.rpartition(";this0=")
    return (front, state) if mark else (text, None)


def _split_statics(text: str) -> tuple[str, str, str | None, str]:
    """A harness outcome cut around its static fields: the text before them, the ``;out=`` part after them, the
    statics before the call (None: not reported) and those the call changed (``name=value|...``)."""
    front, mark, out = text.rpartition(";out=")
    if not mark:
        return text, "", None, ""
    front, mark, statics = front.partition(";static0=")
    if not mark:
        return front, ";out=" + out, None, ""
    before, _, changed = statics.partition(";static=")
    return front, ";out=" + out, before, changed


def _compared_statics(text: str) -> tuple[str, str]:
    """An outcome as compared (:func:`_statics_compared`) without its static fields, and those (``""``: none)."""
    front, mark, rest = text.partition(";static=")
    if not mark:
        return text, ""
    changed, _, out = rest.rpartition(";out=")
    return f"{front};out={out}", changed


def _statics_compared(orig: str, opt: str, again: str) -> tuple[str, str, str]:
    """The three outcomes of a call with the static fields of the class under test in the form compared: the
    fields each run changed, with their values after it, when both versions started the call with the same
    statics (then the values after are equal exactly when the changes are); none of them when the statics
    before differ (the class initializers differ: a difference of ``<clinit>``, not of the method, which is
    judged from one initial heap)."""
    split = [_split_statics(t) for t in (orig, opt, again)]
    alike = split[0][2] is not None and split[0][2] == split[1][2]
    a, b, c = (front + (f";static={changed}" if alike and before is not None and changed else "") + tail
               for front, tail, before, changed in split)
    return a, b, c


def _show_value(v: str, ret: str) -> str:
    """A harness value of return type ``ret`` as Java-like text (floats from their bits, null, strings)."""
    if v == "N":
        return "null"
    if v == "NaN" or not ret or ret not in "FDZC":
        if v.startswith("S"):
            units = v[1:].split(".") if len(v) > 1 else []
            return '"' + "".join(chr(int(u, 16)) for u in units) + '"'
        return v
    if ret == "F":
        return repr(struct.unpack(">f", struct.pack(">i", int(v)))[0]) + "f"
    if ret == "D":
        return repr(struct.unpack(">d", struct.pack(">q", int(v)))[0])
    if ret == "Z":
        return "true" if v == "1" else "false"
    return repr(chr(int(v)))


def _show_harness(text: str, i: int, typ: str) -> tuple[str, int]:
    """The harness value starting at ``text[i]`` (of static type ``typ``) as Java-like text, and where it ends:
    arrays as ``{...}`` with their elements shown by the array's own element type (floats from their bits)."""
    if text.startswith("[", i):
        j = i + 1
        while j < len(text) and text[j] not in " ]":
            j += 1
        desc = text[i + 1:j]
        items = []
        while j < len(text) and text[j] in " ,":
            item, j = _show_harness(text, j + 1, desc[1:])
            items.append(item)
        return "{" + ", ".join(items) + "}", j + 1  # past the ']'
    j = i
    while j < len(text) and text[j] not in " ,]":
        j += 1
    return _show_value(text[i:j], typ), j


def _show_arrays_after(args_after: str) -> str:
    """The array arguments' state after the call (the harness's space-separated values), shown."""
    shown, i = [], 0
    while i < len(args_after):
        if args_after[i] == " ":
            i += 1
            continue
        start = i
        text, i = _show_harness(args_after, i, "")
        if args_after.startswith("[", start):
            shown.append(text)
    return "; ".join(shown)


def _returned_float(text: str, ret: str) -> float | None:
    head = text.partition(" ;args=")[0]
    if ret not in ("F", "D") or not head.startswith("R "):
        return None
    v = head[2:]
    if v == "NaN":
        return math.nan
    return struct.unpack(">f", struct.pack(">i", int(v)))[0] if ret == "F" else \
        struct.unpack(">d", struct.pack(">q", int(v)))[0]


def why_different(params: Sequence[str], args: list, orig: str, opt: str, ret: str) -> str:
    """Why two JVM outcomes that a reader might take for equal are not (exact Java semantics, not ideal
    arithmetic), or "" when it is plain to see."""
    (a, sa), (b, sb) = _compared_statics(orig), _compared_statics(opt)
    if a == b and sa != sb:
        return "the same outcome but for the static fields of the class the call leaves"
    overflow = "T java/lang/StackOverflowError"
    for side, o, other in (("ORIG", orig, opt), ("OPT", opt, orig)):
        if o.startswith(overflow) and other.startswith("R "):
            return f"{side} overflows the stack where the other returns: its recursion does not end, or goes deeper"
    fa, fb = _returned_float(orig, ret), _returned_float(opt, ret)
    if fa is not None and fb is not None and orig.partition(" ;")[0] != opt.partition(" ;")[0]:
        if fa == 0 and fb == 0:
            return "-0.0 and 0.0 are equal as reals but not in Java (1/x, Math.copysign, their string forms)"
        if math.isnan(fa) != math.isnan(fb):
            return "NaN on one side only (a NaN fails every comparison, so a reordered test can flip)"
        if math.isfinite(fa) and math.isfinite(fb) and abs(fa - fb) <= 4 * math.ulp(max(abs(fa), abs(fb))):
            return "the results differ in the last bits: floating point rounding (not associative)"
        if math.isinf(fa) != math.isinf(fb):
            return "overflow to infinity on one side only"
    floats = [v for d, v in zip(params, args) if d in ("F", "D") and isinstance(v, float)]
    if any(math.isnan(v) for v in floats):
        return "at a NaN argument, which fails every comparison (x >= 0 is not !(x < 0) there)"
    if any(v == 0 and math.copysign(1, v) < 0 for v in floats):
        return "at -0.0, which equals 0.0 in comparisons but not in division or its string form"
    bounds = {"I": (-2**31, 2**31 - 1), "J": (-2**63, 2**63 - 1)}
    if any(d in bounds and v in bounds[d] for d, v in zip(params, args)):
        return "at the end of the integer range, where Java's arithmetic wraps around (-MIN_VALUE == MIN_VALUE)"
    return ""


def _show_fields(this: str, field_types: Sequence[tuple[str, str]]) -> str:
    """The harness's ``name=value|...`` of an object's fields, shown with their declared types."""
    types = dict(field_types)
    shown = []
    for item in this.split("|") if this else []:
        name, _, v = item.partition("=")
        shown.append(f"{name}={_show_harness(v, 0, types.get(name, ''))[0]}")
    return "{" + ", ".join(shown) + "}"


def describe_outcome(text: str, ret: str = "", shape: Shape = Shape()) -> str:
    """A JVM outcome line made readable: 'returns 3', 'throws java/lang/ArithmeticException' (+ output, the
    arrays passed in as they were left, and for an instance method or constructor the object's fields after)."""
    text, statics = _compared_statics(text)
    head, _, rest = text.partition(" ;args=")
    rest, _, out = rest.partition(";out=")
    args_after, _, this = rest.partition(";this=")
    if head.startswith("R "):
        s = "returns" if ret == "V" else f"returns {_show_harness(head[2:], 0, ret)[0]}"
    elif head.startswith("T "):
        s = f"throws {head[2:]}"
    else:
        s = head
    if out:
        try:
            s += f", prints {bytes.fromhex(out).decode('utf-8', 'replace')!r}"
        except ValueError:
            s += f", prints hex {out}"
    if "[" in args_after:
        s += f", arrays after: {_show_arrays_after(args_after.strip())}"
    if shape.kind == "constructor" and head.startswith("R "):
        s = f"builds {_show_fields(this, shape.field_types)}" + s[len("returns"):]
    elif shape.kind == "instance" and head[:2] in ("R ", "T "):
        s += f", this after: {_show_fields(this, shape.field_types)}"
    if statics:
        s += f", static fields set: {_show_fields(statics, shape.static_types)}"
    return s
