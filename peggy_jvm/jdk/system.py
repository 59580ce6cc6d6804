"""Models of ``System`` and ``Thread``: ``System.out``'s print methods, ``arraycopy``, ``holdsLock``.

What this module owns
    ``PrintStream.print``/``println`` on ``System.out`` (text appended to :attr:`~peggy_jvm.ir.interp.Heap.out`
    as a UTF-8 stream writes it), ``System.arraycopy`` with the JVM's checks, ``Thread.holdsLock``. The
    ``System.out`` field itself is served by the handler's ``get_static``.

Inputs / outputs
    Models registered into :data:`~peggy_jvm.jdk.registry.MODELS` at import.

Invariants
    Only ``System.out`` prints (any other stream is Unsupported).
"""
from __future__ import annotations

from ..ir.interp import NPE, JArray, JObject, Unsupported, _class_of, runtime_class
from .registry import MODELS, Model, model
from .strings import _printable


# System, Thread
@model("java/lang/Thread", "holdsLock", "(Ljava/lang/Object;)Z")
def _holds_lock(h, interp, recv, args):
    if args[0] is None:
        interp.throw(NPE)
    return int(interp.heap.monitor_count(args[0]) > 0)


@model("java/lang/System", "arraycopy", "(Ljava/lang/Object;ILjava/lang/Object;II)V")
def _arraycopy(h, interp, recv, args):
    src, sp, dst, dp, n = args
    if src is None or dst is None:
        interp.throw(NPE)
    if type(src) is not JArray or type(dst) is not JArray:
        interp.throw("java/lang/ArrayStoreException")
    sc, dc = src.desc[1:], dst.desc[1:]
    refs = sc[0] in "L[" and dc[0] in "L["
    if not refs and sc != dc:
        interp.throw("java/lang/ArrayStoreException")
    if sp < 0 or dp < 0 or n < 0 or sp + n > len(src.items) or dp + n > len(dst.items):
        interp.throw("java/lang/ArrayIndexOutOfBoundsException")
    chunk = src.items[sp:sp + n]
    if refs and not interp.heap.is_assignable(src.desc, dst.desc):
        target = _class_of(dc)
        for k, v in enumerate(chunk):
            if v is not None and not interp.heap.is_assignable(runtime_class(v), target):
                dst.items[dp:dp + k] = chunk[:k]
                interp.throw("java/lang/ArrayStoreException")
    dst.items[dp:dp + n] = chunk
    interp.steps += n // 16
    return None


# java.io.PrintStream (System.out only)
def _print(newline: bool, desc: str) -> Model:
    def write(h, interp, recv, args):
        if type(recv) is not JObject or recv.native.get("stream") != "out":
            raise Unsupported("a PrintStream other than System.out")
        if not args:
            text = ""
        elif desc == "[C":
            if args[0] is None:
                interp.throw(NPE)
            text = "".join(map(chr, args[0].items))
        else:
            text = h.to_java_string(interp, args[0], desc)
        interp.heap.out.append(_printable(text + ("\n" if newline else "")))
        return None
    return write


MODELS[("java/io/PrintStream", "println", "()V")] = _print(True, "")
for _d in ("I", "J", "F", "D", "C", "Z", "Ljava/lang/String;", "Ljava/lang/Object;", "[C"):
    MODELS[("java/io/PrintStream", "println", f"({_d})V")] = _print(True, _d)
    MODELS[("java/io/PrintStream", "print", f"({_d})V")] = _print(False, _d)
