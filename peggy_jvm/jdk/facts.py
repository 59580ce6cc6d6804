"""Facts of the Java library that both the interpreter's models and the rewrite rules read.

What this module owns
    The identities of the library methods more than one stage relies on (:class:`~peggy_jvm.ir.nodes.MethodRef`
    constants: ``String.length``, ``String.concat``, ``Object.toString`` ...), and the JDK-specified properties
    the rules of :mod:`peggy_jvm.rules.strings` rest on: which builder methods return their receiver, which ones
    cannot tell a builder's capacity or let its reference escape, which classes the JVM initializes while it
    boots. The models of :mod:`peggy_jvm.jdk` register under the same constants (:func:`.registry.implements`),
    so one search for a name such as ``STRING_CONCAT`` finds the fact, its model and every rule using it.

Inputs / outputs
    Constants and small predicates over ``MethodRef`` attributes; no state.

Invariants
    Imports nothing but the IR's node types: the rules (below the interpreter's models in the layering) may read
    it without importing the interpreter.
"""
from __future__ import annotations

from ..ir.nodes import MethodRef

__all__ = ["OBJECT", "STRING", "THROWABLE", "BUILDER_CLASSES", "OBJECT_TO_STRING", "OBJECT_EQUALS",
           "OBJECT_HASH_CODE", "THROWABLE_GET_MESSAGE", "THROWABLE_GET_LOCALIZED_MESSAGE", "STRING_LENGTH",
           "STRING_CONCAT", "STRING_VALUE_OF", "CONCAT_FACTORY", "ARRAYCOPY", "SYSTEM", "IDENTITY_HASH_CODE", "BUILDER_CAPACITY_BLIND",
           "BOOT_CLASSES", "same_method", "is_builder_method", "returns_receiver"]

OBJECT = "java/lang/Object"
STRING = "java/lang/String"
THROWABLE = "java/lang/Throwable"
SYSTEM = "java/lang/System"
BUILDER_CLASSES = ("java/lang/StringBuilder", "java/lang/StringBuffer")
"""The string builders: the same methods with the same meaning (StringBuffer's are synchronized)."""

OBJECT_TO_STRING = MethodRef(OBJECT, "toString", "()Ljava/lang/String;")
OBJECT_EQUALS = MethodRef(OBJECT, "equals", "(Ljava/lang/Object;)Z")
OBJECT_HASH_CODE = MethodRef(OBJECT, "hashCode", "()I")
THROWABLE_GET_MESSAGE = MethodRef(THROWABLE, "getMessage", "()Ljava/lang/String;")
THROWABLE_GET_LOCALIZED_MESSAGE = MethodRef(THROWABLE, "getLocalizedMessage", "()Ljava/lang/String;")

STRING_LENGTH = MethodRef(STRING, "length", "()I")
"""The number of UTF-16 code units; pure (no effect, never throws on a non-null receiver)."""
STRING_CONCAT = MethodRef(STRING, "concat", "(Ljava/lang/String;)Ljava/lang/String;")
"""The receiver's text followed by the argument's; NullPointerException on a null argument; returns the receiver
itself when the argument is empty (otherwise a new String)."""
STRING_VALUE_OF = "valueOf"
"""The static ``String.valueOf`` overloads: ``(x)Ljava/lang/String;`` renders a primitive as
``StringBuilder.append`` does, no effect, never throws; ``valueOf(Object)`` runs ``toString()``."""
CONCAT_FACTORY = ("java/lang/invoke/StringConcatFactory", "makeConcatWithConstants")
"""(owner, name) of the bootstrap of javac's string concatenation (release 9 and later): the call site's value is
a newly created String (JLS 15.18.1) of the recipe's text, each ``\1`` replaced by the next argument rendered as
``String.valueOf`` renders its declared type (a String: itself or ``"null"``) and each ``\2`` by the next
constant of the bootstrap; an argument of another reference type has its ``toString()`` run only after every
operand was computed (JDK-8273914), unlike a builder chain."""
ARRAYCOPY = MethodRef(SYSTEM, "arraycopy", "(Ljava/lang/Object;ILjava/lang/Object;II)V")
"""Copies ``length`` elements in order; NullPointerException on a null array, ArrayStoreException when the two
arrays' component types are incompatible, IndexOutOfBoundsException on a range outside either; else no other
effect. From a source of ``n`` elements into a new array of the same class and length ``n`` at offsets 0, none of
them can happen: the array's ``clone()`` (a new array of the same class and length, a shallow copy; JLS 10.7)."""
IDENTITY_HASH_CODE = (SYSTEM, "identityHashCode")
"""(owner, name) of ``System.identityHashCode``: it observes an object's identity."""

BUILDER_CAPACITY_BLIND = frozenset({"append", "toString", "length", "charAt"})
"""Builder methods that cannot tell the builder's capacity apart and do not let the reference escape."""

BOOT_CLASSES = frozenset({"java/lang/String", "java/lang/StringBuilder"})
"""Initialized while the JVM boots, before any class of the input (JDK 17: -Xlog:class+init; StringBuffer is
not): their class initialization changes nothing a program sees."""


def same_method(attr: object, ref: MethodRef) -> bool:
    """``attr`` is a MethodRef naming ``ref``'s method (owner, name and descriptor; the interface flag aside)."""
    return isinstance(attr, MethodRef) and attr.owner == ref.owner and attr.name == ref.name \
        and attr.descriptor == ref.descriptor


def is_builder_method(attr: object, name: str | None = None) -> bool:
    """``attr`` is a MethodRef of a string builder class (named ``name``, if given)."""
    return isinstance(attr, MethodRef) and attr.owner in BUILDER_CLASSES and (name is None or attr.name == name)


def returns_receiver(attr: object) -> bool:
    """``attr`` is a builder's ``append`` that returns its receiver (the JDK specification of every ``append``
    overload whose result type is the builder's own class)."""
    return isinstance(attr, MethodRef) and attr.owner in BUILDER_CLASSES and attr.name == "append" \
        and attr.descriptor.endswith(f")L{attr.owner};")
