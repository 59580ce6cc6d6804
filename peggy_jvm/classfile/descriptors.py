"""Field and method descriptors (JVMS 4.3): parsing and slot sizes.

Inputs: descriptor strings such as ``(IJ[Ljava/lang/String;)V``. Outputs: lists of field descriptors, the
return descriptor, argument slot counts. Invalid descriptors raise :class:`ClassFileError`. Results are
cached: the same descriptors recur across a whole jar.
"""
from __future__ import annotations

from functools import lru_cache

from .errors import ClassFileError

_PRIMS = frozenset("BCDFIJSZ")


def _field_end(desc: str, i: int) -> int:
    start = i
    n = len(desc)
    while i < n and desc[i] == "[":
        i += 1
    if i - start > 255:
        raise ClassFileError(f"descriptor {desc!r}: more than 255 array dimensions")
    if i >= n:
        raise ClassFileError(f"invalid descriptor {desc!r}")
    c = desc[i]
    if c in _PRIMS:
        return i + 1
    if c == "L":
        j = desc.find(";", i)
        if j < 0 or j == i + 1:
            raise ClassFileError(f"invalid descriptor {desc!r}")
        return j + 1
    raise ClassFileError(f"invalid descriptor {desc!r}")


@lru_cache(maxsize=65536)
def parse_method_descriptor(desc: str) -> tuple[tuple[str, ...], str]:
    """``(args, ret)`` of a method descriptor; ``ret`` is ``'V'`` for void."""
    if not desc.startswith("("):
        raise ClassFileError(f"invalid method descriptor {desc!r}")
    args = []
    i = 1
    n = len(desc)
    while i < n and desc[i] != ")":
        j = _field_end(desc, i)
        args.append(desc[i:j])
        i = j
    if i >= n:
        raise ClassFileError(f"invalid method descriptor {desc!r}")
    ret = desc[i + 1:]
    if ret != "V" and (not ret or _field_end(ret, 0) != len(ret)):
        raise ClassFileError(f"invalid method descriptor {desc!r}")
    return tuple(args), ret


def check_field_descriptor(desc: str) -> str:
    if not desc or _field_end(desc, 0) != len(desc):
        raise ClassFileError(f"invalid field descriptor {desc!r}")
    return desc


def slot_size(desc: str) -> int:
    """Local-variable / operand-stack words taken by a value of this field descriptor (0 for ``V``)."""
    c = desc[0]
    return 2 if c in "JD" else 0 if c == "V" else 1


@lru_cache(maxsize=65536)
def argument_slots(desc: str, is_static: bool) -> int:
    """Words taken by a method's parameters (plus ``this`` when not static)."""
    args, _ = parse_method_descriptor(desc)
    return sum(slot_size(a) for a in args) + (0 if is_static else 1)


def class_of_descriptor(desc: str) -> str:
    """The internal name used in CONSTANT_Class for a reference field descriptor (``[I`` stays, ``LA;`` -> ``A``)."""
    return desc[1:-1] if desc[0] == "L" else desc
