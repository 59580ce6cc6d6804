"""Models of ``java.lang.Throwable``: message, cause, suppressed exceptions, ``toString``.

What this module owns
    Throwable's constructors (also those of the JDK's plain exception classes, which the handler maps onto
    these), ``getMessage``/``getLocalizedMessage``, ``getCause``/``initCause``, ``addSuppressed``/
    ``getSuppressed``, ``fillInStackTrace`` and ``toString``.

Inputs / outputs
    Models registered into :data:`~peggy_jvm.jdk.registry.MODELS` at import; an exception's state lives in its
    ``native`` dict (message, cause, cause_set, suppressed).

Invariants
    The message of an exception the VM made is :data:`~peggy_jvm.ir.interp.VM_MESSAGE` until the model knows
    its text: reading it is Unsupported.
"""
from __future__ import annotations

from ..ir.interp import NPE, VM_MESSAGE, JArray, Unsupported, runtime_class
from .facts import THROWABLE, THROWABLE_GET_LOCALIZED_MESSAGE, THROWABLE_GET_MESSAGE
from .registry import implements, model


# java.lang.Throwable: native message / cause / suppressed
@model(THROWABLE, "<init>", "()V", "(Ljava/lang/String;)V", "(Ljava/lang/String;Ljava/lang/Throwable;)V")
def _throwable_init(h, interp, recv, args):
    n = recv.native
    n.setdefault("suppressed", [])
    n["message"] = args[0] if args else None
    n["cause"] = args[1] if len(args) == 2 else None
    n["cause_set"] = len(args) == 2
    return None


@model(THROWABLE, "<init>", "(Ljava/lang/Throwable;)V")
def _throwable_init_cause(h, interp, recv, args):
    cause = args[0]
    recv.native.setdefault("suppressed", [])
    recv.native.update(cause=cause, cause_set=True,
                       message=None if cause is None else h.to_java_string(interp, cause, "Ljava/lang/Object;"))
    return None


@implements(THROWABLE_GET_MESSAGE)
@model(NPE, "getMessage", "()Ljava/lang/String;")  # the helpful message exists only for the VM's own NPEs
def _throwable_get_message(h, interp, recv, args):
    m = recv.native.get("message")
    if m is VM_MESSAGE:
        raise Unsupported(f"the JVM's message of a {recv.cls}")
    return m


@implements(THROWABLE_GET_LOCALIZED_MESSAGE)
def _throwable_get_localized(h, interp, recv, args):
    return h.call_virtual(interp, THROWABLE_GET_MESSAGE, recv, [])


@model(THROWABLE, "getCause", "()Ljava/lang/Throwable;")
def _throwable_get_cause(h, interp, recv, args):
    return recv.native.get("cause")


@model(THROWABLE, "initCause", "(Ljava/lang/Throwable;)Ljava/lang/Throwable;")
def _throwable_set_cause(h, interp, recv, args):
    if recv.native.get("cause_set"):
        interp.throw("java/lang/IllegalStateException")
    if args[0] is recv:
        interp.throw("java/lang/IllegalArgumentException")
    recv.native.update(cause=args[0], cause_set=True)
    return recv


@model(THROWABLE, "toString", "()Ljava/lang/String;")
def _throwable_to_string(h, interp, recv, args):
    msg = h.call_virtual(interp, THROWABLE_GET_LOCALIZED_MESSAGE, recv, [])
    name = runtime_class(recv).replace("/", ".")
    return name if msg is None else f"{name}: {msg}"


@model(THROWABLE, "fillInStackTrace", "()Ljava/lang/Throwable;")
def _throwable_fill(h, interp, recv, args):
    return recv


@model(THROWABLE, "addSuppressed", "(Ljava/lang/Throwable;)V")
def _throwable_add_suppressed(h, interp, recv, args):
    e = args[0]
    if e is recv:
        interp.throw("java/lang/IllegalArgumentException", "Self-suppression not permitted")
    if e is None:
        interp.throw(NPE, "Cannot suppress a null exception.")
    recv.native.setdefault("suppressed", []).append(e)
    return None


@model(THROWABLE, "getSuppressed", "()[Ljava/lang/Throwable;")
def _throwable_get_suppressed(h, interp, recv, args):
    return JArray("[Ljava/lang/Throwable;", list(recv.native.get("suppressed", [])))
