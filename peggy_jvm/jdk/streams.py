"""Models of sequential streams: sources, stateless stages, terminal operations, ``Collectors.joining``.

What this module owns
    ``Collection.stream()`` of the modelled lists, ``IntStream.range``/``rangeClosed``, ``String.lines``; map,
    filter, asLongStream; count (with JDK 9's skipping of SIZED pipelines), forEach, sum, reduce, collect with
    ``Collectors.joining``.

Inputs / outputs
    Models registered into :data:`~peggy_jvm.jdk.registry.MODELS` at import; a stream's state is its
    ``native["stream"]`` dict.

Invariants
    Evaluated element by element through the stages at the terminal operation, as the JDK does; a stream is
    used once (IllegalStateException after).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .. import semantics as S
from ..ir.interp import MAX_ARRAY_ELEMENTS, Interpreter, JObject, Unsupported, Value, runtime_class
from .collections import _CME, _LIST_KINDS, _OBJ, _jlist
from .facts import STRING
from .functions import _APPLY, _PREDICATE, _TEST, _call
from .objects import _non_null
from .registry import MODELS, Model, model

if TYPE_CHECKING:
    from .handler import DefaultCallHandler


# Streams: sequential pipelines, evaluated element by element through their stages at the terminal operation,
# as the JDK's are. native["stream"] = {"shape": "ref" | "int" | "long", "source": the collection object or
# None, "items": its list or a range, "sized", "stages": [(op, fn)], "used"}.
_STREAM_CLASSES = {"ref": ("java/util/stream/ReferencePipeline$Head", "java/util/stream/ReferencePipeline$StatelessOp"),
                   "int": ("java/util/stream/IntPipeline$Head", "java/util/stream/IntPipeline$StatelessOp"),
                   "long": ("java/util/stream/LongPipeline$Head", "java/util/stream/LongPipeline$StatelessOp")}


def _new_stream(interp: Interpreter, shape: str, source: Value, items, sized: bool) -> JObject:
    return JObject(_STREAM_CLASSES[shape][0], {"stream": {"shape": shape, "source": source, "items": items,
                                                          "sized": sized, "stages": [], "used": False}})


def _stream_state(interp: Interpreter, recv: Value) -> dict:
    st = recv.native.get("stream") if type(recv) is JObject else None
    if st is None:
        raise Unsupported(f"a stream of class {runtime_class(recv)}")
    if st["used"]:
        interp.throw("java/lang/IllegalStateException", "stream has already been operated upon or closed")
    st["used"] = True
    return st


def _list_stream(cls: str) -> Model:
    """``Collection.stream()`` of a modelled list: a SIZED stream over the list's elements."""
    return lambda h, i, r, a: _new_stream(i, "ref", r, _jlist(i, r, cls), sized=True)


for _cls in _LIST_KINDS:
    MODELS[(_cls, "stream", "()Ljava/util/stream/Stream;")] = _list_stream(_cls)


def _stage(shape_out: str, op: str, keeps_size: bool, fn_arg: bool = True) -> Model:
    """An intermediate operation: a new stage object; the receiver is linked (used) from now on."""
    def link(h, interp, recv, args):
        st = _stream_state(interp, recv)
        fn = _non_null(interp, args[0]) if fn_arg else None
        new = dict(st, shape=shape_out, stages=[*st["stages"], (op, fn)], used=False,
                   sized=st["sized"] and keeps_size)
        return JObject(_STREAM_CLASSES[shape_out][1], {"stream": new})
    return link


_STAGE_CALLS = {  # op -> (interface, method, descriptor) called per element
    "map.ref": ("java/util/function/Function", "apply", _APPLY),
    "filter.ref": (_PREDICATE, "test", _TEST),
    "map.int": ("java/util/function/IntUnaryOperator", "applyAsInt", "(I)I"),
    "filter.int": ("java/util/function/IntPredicate", "test", "(I)Z"),
    "map.long": ("java/util/function/LongUnaryOperator", "applyAsLong", "(J)J"),
    "filter.long": ("java/util/function/LongPredicate", "test", "(J)Z"),
}


def _run_stream(h: DefaultCallHandler, interp: Interpreter, st: dict, sink: Callable[[Any], object]) -> None:
    """Push each source element through the stages into ``sink``, in order."""
    stages = st["stages"]
    items = st["items"]
    source = st["source"]
    expected = source.native.get("mod") if type(source) is JObject else None
    n = len(items)
    for k in range(n):
        if k >= len(items):
            raise Unsupported("a stream source that shrank")
        v = items[k]
        keep = True
        for op, fn in stages:
            if op == "asLong":
                continue  # an int is a long already
            iface, name, desc = _STAGE_CALLS[op]
            r = _call(h, interp, fn, iface, name, desc, [v])
            if op.startswith("filter"):
                if not r:
                    keep = False
                    break
            else:
                v = r
        if keep:
            sink(v)
    if expected is not None and source.native.get("mod") != expected:  # ArrayListSpliterator checks at the end
        interp.throw(_CME, None)


for _shape, _desc_stream in (("ref", "Ljava/util/stream/Stream;"), ("int", "Ljava/util/stream/IntStream;"),
                             ("long", "Ljava/util/stream/LongStream;")):
    _owner = {"ref": "java/util/stream/Stream", "int": "java/util/stream/IntStream",
              "long": "java/util/stream/LongStream"}[_shape]
    _fn_desc = {"ref": ("Ljava/util/function/Function;", "Ljava/util/function/Predicate;"),
                "int": ("Ljava/util/function/IntUnaryOperator;", "Ljava/util/function/IntPredicate;"),
                "long": ("Ljava/util/function/LongUnaryOperator;", "Ljava/util/function/LongPredicate;")}[_shape]
    for _cls in _STREAM_CLASSES[_shape]:
        MODELS[(_cls, "map", f"({_fn_desc[0]}){_desc_stream}")] = _stage(_shape, f"map.{_shape}", True)
        MODELS[(_cls, "filter", f"({_fn_desc[1]}){_desc_stream}")] = _stage(_shape, f"filter.{_shape}", False)
for _cls in _STREAM_CLASSES["int"]:
    MODELS[(_cls, "asLongStream", "()Ljava/util/stream/LongStream;")] = _stage("long", "asLong", True, False)


def _stream_count(h, interp, recv, args):
    st = _stream_state(interp, recv)
    if st["sized"]:  # JDK 9+: a SIZED pipeline's count is its size; the stages do not run
        return len(st["items"])
    n = [0]
    _run_stream(h, interp, st, lambda v: n.__setitem__(0, n[0] + 1))
    return n[0]


def _stream_for_each(h, interp, recv, args):
    st = _stream_state(interp, recv)
    action = _non_null(interp, args[0])
    iface, desc = {"ref": ("java/util/function/Consumer", "(Ljava/lang/Object;)V"),
                   "int": ("java/util/function/IntConsumer", "(I)V"),
                   "long": ("java/util/function/LongConsumer", "(J)V")}[st["shape"]]
    _run_stream(h, interp, st, lambda v: _call(h, interp, action, iface, "accept", desc, [v]))
    return None


def _int_sum(h, interp, recv, args):
    st = _stream_state(interp, recv)
    total = [0]
    wrap = S.wrap_i if st["shape"] == "int" else S.wrap_l
    _run_stream(h, interp, st, lambda v: total.__setitem__(0, wrap(total[0] + v)))
    return total[0]


def _long_reduce(h, interp, recv, args):
    st = _stream_state(interp, recv)
    acc = [args[0]]
    op = _non_null(interp, args[1])
    _run_stream(h, interp, st, lambda v: acc.__setitem__(0, _call(
        h, interp, op, "java/util/function/LongBinaryOperator", "applyAsLong", "(JJ)J", [acc[0], v])))
    return acc[0]


def _stream_collect(h, interp, recv, args):
    st = _stream_state(interp, recv)
    coll = _non_null(interp, args[0])
    spec = coll.native.get("joining") if type(coll) is JObject else None
    if spec is None:
        raise Unsupported(f"collect with a {runtime_class(coll)}")
    # the collector's supplier runs first: new StringJoiner(delimiter, prefix, suffix) checks and converts them
    delim, prefix, suffix = (h.to_java_string(interp, _non_null(interp, x), _OBJ) for x in spec)
    parts: list[str] = []

    def add(v: Value) -> None:  # StringJoiner::add(CharSequence): a checkcast, then String.valueOf
        if v is not None and not interp.heap.is_assignable(runtime_class(v), "java/lang/CharSequence"):
            interp.throw("java/lang/ClassCastException")
        parts.append(h.to_java_string(interp, v, _OBJ))
    _run_stream(h, interp, st, add)
    return prefix + delim.join(parts) + suffix


for _cls in _STREAM_CLASSES["ref"]:
    MODELS[(_cls, "count", "()J")] = _stream_count
    MODELS[(_cls, "forEach", "(Ljava/util/function/Consumer;)V")] = _stream_for_each
    MODELS[(_cls, "collect", "(Ljava/util/stream/Collector;)Ljava/lang/Object;")] = _stream_collect
for _cls in _STREAM_CLASSES["int"]:
    MODELS[(_cls, "sum", "()I")] = _int_sum
    MODELS[(_cls, "count", "()J")] = _stream_count
    MODELS[(_cls, "forEach", "(Ljava/util/function/IntConsumer;)V")] = _stream_for_each
for _cls in _STREAM_CLASSES["long"]:
    MODELS[(_cls, "sum", "()J")] = _int_sum
    MODELS[(_cls, "count", "()J")] = _stream_count
    MODELS[(_cls, "reduce", "(JLjava/util/function/LongBinaryOperator;)J")] = _long_reduce
    MODELS[(_cls, "forEach", "(Ljava/util/function/LongConsumer;)V")] = _stream_for_each


@model("java/util/stream/Collectors", "joining",
       "(Ljava/lang/CharSequence;Ljava/lang/CharSequence;Ljava/lang/CharSequence;)Ljava/util/stream/Collector;")
def _collectors_joining(h, interp, recv, args):  # the arguments are only captured (checked when collecting)
    return JObject("java/util/stream/Collectors$CollectorImpl", {"joining": tuple(args)})


@model("java/util/stream/Collectors", "joining", "(Ljava/lang/CharSequence;)Ljava/util/stream/Collector;")
def _collectors_joining_delim(h, interp, recv, args):
    return _collectors_joining(h, interp, recv, [args[0], "", ""])


def _int_range(closed: bool) -> Model:
    def make(h, interp, recv, args):
        lo, hi = args
        end = hi + 1 if closed else hi
        if end - lo > MAX_ARRAY_ELEMENTS:
            raise Unsupported("a stream range too long")
        return _new_stream(interp, "int", None, range(lo, max(lo, end)), sized=True)
    return make


MODELS[("java/util/stream/IntStream", "range", "(II)Ljava/util/stream/IntStream;")] = _int_range(False)
MODELS[("java/util/stream/IntStream", "rangeClosed", "(II)Ljava/util/stream/IntStream;")] = _int_range(True)


@model(STRING, "lines", "()Ljava/util/stream/Stream;")
def _s_lines(h, interp, s, args):
    """``String.lines``: split at \\n, \\r and \\r\\n, no empty last line after a final terminator; a stream
    without a known size (its count runs the pipeline)."""
    lines, start, i, n = [], 0, 0, len(s)
    while i < n:
        c = s[i]
        if c == "\n" or c == "\r":
            lines.append(s[start:i])
            i += 2 if c == "\r" and i + 1 < n and s[i + 1] == "\n" else 1
            start = i
        else:
            i += 1
    if start < n:
        lines.append(s[start:])
    return _new_stream(interp, "ref", None, lines, sized=False)
