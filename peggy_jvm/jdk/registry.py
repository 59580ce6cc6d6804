"""The registry of library models: :data:`MODELS` and the decorators that fill it.

What this module owns
    The shape of a model (:data:`Model`: ``(handler, interp, receiver or None, args) -> result``, raising
    :class:`~peggy_jvm.ir.interp.JavaThrow` or :class:`~peggy_jvm.ir.interp.Unsupported` like any call) and the
    one table every area module of :mod:`peggy_jvm.jdk` registers into, keyed by (declaring class, name,
    descriptor).

Inputs / outputs
    Area modules register at import time (:func:`model`, :func:`implements`, or ``MODELS[key] = fn`` for models
    made by factories); :class:`~peggy_jvm.jdk.handler.DefaultCallHandler` imports every area module and copies
    the table.

Invariants
    One model per key, enforced: registering a key twice raises ValueError at import (the handler's dispatch
    looks a method up along the receiver's class chain, so a model stands for exactly the JDK method of that
    key, whatever the order the area modules are imported in).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..ir.interp import Interpreter, Value
from ..ir.nodes import MethodRef

if TYPE_CHECKING:
    from .handler import DefaultCallHandler


__all__ = ["Model", "MODELS", "model", "implements"]

Model = Callable[["DefaultCallHandler", Interpreter, Value, list], Value]
"""A library method's model: ``(handler, interp, receiver or None, args) -> result``."""


class _OneModelPerKey(dict):
    """A dict that refuses to replace an entry: two area modules modelling one method is a bug, and which
    one won would depend on the order the modules were imported in."""

    def __setitem__(self, key: tuple[str, str, str], fn: Model) -> None:
        if key in self:
            raise ValueError(f"a second model for {key[0]}.{key[1]}{key[2]}")
        super().__setitem__(key, fn)


MODELS: dict[tuple[str, str, str], Model] = _OneModelPerKey()
"""(declaring class, name, descriptor) -> model. Looked up along the receiver's class chain like a method."""


def model(owners: str | tuple[str, ...], name: str, *descs: str) -> Callable[[Model], Model]:
    """Register the decorated function as the model of ``name`` with each descriptor, on each owner."""
    def register(fn: Model) -> Model:
        for owner in (owners,) if isinstance(owners, str) else owners:
            for d in descs:
                MODELS[(owner, name, d)] = fn
        return fn
    return register


def implements(*methods: MethodRef) -> Callable[[Model], Model]:
    """Register the decorated function as the model of each of ``methods`` (the references of
    :mod:`peggy_jvm.jdk.facts` that rules read too)."""
    def register(fn: Model) -> Model:
        for m in methods:
            MODELS[(m.owner, m.name, m.descriptor)] = fn
        return fn
    return register
