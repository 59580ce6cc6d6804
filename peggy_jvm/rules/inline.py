"""Inlining as an e-graph rewrite: a call's projections made equal to the callee's body.

What this module owns
    :class:`CalleeSource` (which methods of the input may be inlined, and their PEGs, with the reason when one
    may not), :func:`inlinable_calls` (the call nodes of a PEG whose outcome only its value and heap are read
    from) and :func:`inline_calls` (for each such call of an inlinable callee: the callee's PEG copied into the
    e-graph with its parameters replaced by the call's arguments and its entry heap by the call's heap, then
    ``rho_value(call)`` merged with the value the callee returns and ``rho_sigma(call)`` with the heap it ends
    with). Extraction then chooses between the call and the body; the validator runs the same rewrite in its
    shared e-graph, so the optimizer's self-check proves an inlined method and ``validate`` proves a method
    against a version with a helper inlined by hand or by the optimizer (of its own class, or of another class
    of the same input: ``validate`` gives each side's parsed input as ``program``).

Which calls (all must hold; :meth:`CalleeSource.body` returns the reason otherwise)
    * The callee's code is in the input and the call cannot reach other code: ``invokestatic`` of a static
      method, ``invokespecial`` of a private method (for the validator, ``CalleeSource.constructors``, also of a
      constructor of the caller's class: ``this(...)``), ``invokevirtual`` of a private or final method, or of a
      method of a final class (method resolution finds the declaration in the named class: only methods
      declared in that class itself are taken). No other constructors, no ``invokeinterface``.
    * The callee's class is the caller's, or (with ``CalleeSource.program``) another class of the input in the
      same package (same jar, so the same class loader and runtime package) whose superclasses are all in the
      input; then the body must name nothing the caller could not: no member private to another class, none
      inherited (the reference must name the declaring class), no protected or package member of another
      package, no non-public class of another package, no ``invokespecial`` (resolved against the current
      class) and no ``invokedynamic`` (its bootstrap may name the callee's private methods); see
      :func:`_inaccessible`.
    * Class initialization: ``invokestatic`` initializes the callee's class and its superclasses. A static
      caller's own class and its superclasses are initialized (or being initialized by this thread) while it
      runs, so that step is a no-op there; an instance method has no such promise (``this`` may escape a
      ``<clinit>`` to another thread), so otherwise the callee's class and every superclass up to
      ``java/lang/Object`` must have no static initializer, which makes the step unobservable, or else the body's
      first effect on every path must be a static access of a member the callee's class itself declares
      (``getstatic``, ``putstatic``, ``invokestatic``: :func:`_initializes_first`), which initializes that class
      and its superclasses at the same point of the effect order as the call (every operator that may throw is
      an effect on the heap chain, so no exception comes before it).
    * Instance callees only on a receiver that cannot be null: the caller's own ``this`` (``param 0`` of an
      instance method) or an object the caller constructed (``rho_value`` of ``new``). The call's
      NullPointerException then cannot happen and dropping it is exact; on any other receiver the call stays
      (its NPE comes before the body's first effect, with the call's own message).
    * Not ``synchronized`` (the monitor would have to be modelled), not native or abstract, not recursive
      (its body calls itself; for the validator's normal forms, ``CalleeSource.recursive``, it may: the body's
      own calls of itself stay calls, so one inlining unfolds the recursion once, which is exact), no loop (a
      loop's depth attributes would have to be shifted to the call's depth; with ``CalleeSource.loops``, the
      validator's and the full stage's, a loop is allowed at a call no loop of the caller
      varies, where the callee's loops keep their own depths, and its bodies may have up to
      :data:`MAX_LOOP_CALLEE_NODES` nodes; the optimizer's, ``CalleeSource.dead_loops_only``, only where what
      the caller reads of the call leaves every loop dead, :func:`loops_dead_at`), at least one ``return`` (a callee that always throws stays a call),
      at most :data:`MAX_CALLEE_NODES` PEG nodes reachable from its root (the
      documented size threshold; :data:`MAX_SYNTHETIC_CALLEE_NODES` for a synthetic method in the validator,
      ``CalleeSource.synthetic``), and when it returns ``boolean``/``byte``/``char``/``short``, every value it
      returns is certainly in that type's range (constants, phis of them, ``i2b``/``i2c``/``i2s``): whether
      ``ireturn`` narrows (JVMS 9+) or not (older JVMs) then makes no difference.
    * The call's outcome is read by ``rho_value``/``rho_sigma`` only: a call inside a try region (read by
      ``threw``/``rho_exc``/``rho_esigma``) stays a call.
    * A callee with an explicit ``throw`` (``Body.throws``: ``throw`` leaves in its result tree) only at a call
      where the caller's results can be split at the call (:func:`split_points`): the highest subtrees of the
      root's phi-tree of results whose every result runs the call first on its heap chain, and nothing else of
      the tree reaches the call (no call in a loop, none before a join of the heap). The optimizer's e-graph
      then gets the throws as ``athrow`` effects on the call's heap (:func:`body_outcome`), which the reverter
      emits in place (the callee's test, its ``new`` and ``athrow``); the proofs (the self-check, ``validate``)
      split the results instead (:func:`inline_bodies`; :func:`inline_calls` with ``split_roots``): each such
      subtree becomes the callee's tests with its throws as results of the method and the subtree, given the
      call's normal outcome, at its returns, the form the emitted code is built into.
    * In the optimizer (``CalleeSource.max_growth``), a callee that throws only where its check and throw fit the
      bytes the caller may grow by (:attr:`Body.growth`; the emitted-code rule would refuse more, and the method
      lose any other rewrite extraction could have chosen), unless a constant argument feeds its tests. Where it
      does not fit, the call stays and, when the body's returned value is a function of its arguments alone
      (:func:`pure_value`), that value is merged with the call's (:attr:`Body.value_only`).
    * A body is flattened before it is copied (:meth:`CalleeSource.body`): the calls inside it that the caller
      could inline itself, judged from the caller (class initialization, access, the receiver being
      ``this`` or a constructed object), are replaced by their own flattened bodies
      (:func:`inline_bodies`), up to :data:`MAX_INLINE_DEPTH` callees deep, loop-free ones only, and never a
      callee inside itself (recursion through several methods stays a call, so unfolding always ends). A
      flattened body over the size threshold is copied as built instead, its calls kept.

Why it is exact
    For a callee that satisfies the above, running the call is running the callee's body on the arguments in
    the caller's heap (no dispatch, no class initialization, no null check left to fail, no monitor). The
    callee's implicit exceptions propagate through its strict projections into the caller's sigma chain, as
    they propagate out of the call; its explicit throws raise the same object (built by the inlined ``new`` and
    constructor, or the one passed in) after the same effects, and nothing after the call runs. One difference
    cannot be removed and is documented (docs/validation.md, "Inlining and stack traces"): the stack trace of an
    exception raised or built inside inlined code lacks the callee's frame and names the call site's line (the
    inlined effects carry the call's bytecode origin, ``PegInfo.copied_from``). It is accepted: a program reads
    it only through ``Throwable.getStackTrace``/``printStackTrace`` (diagnostics; the JVM itself may omit frames,
    ``-XX:-StackTraceInThrowable`` and ``OmitStackTraceInFastThrow``, so no program can rely on them), and which
    code may read it is not decidable at the call, so refusing only "observable" traces would refuse every throw
    that leaves the method. An exception passed in keeps the trace it was built with. A value-only merge
    (:func:`returned_value`) adds one equality: ``rho_value(call)`` is read only where the call returned
    normally, and then the callee ran to one of its returns, whose value (chosen by tests that read only the
    arguments, as the returns' values do: no heap) is that function of the call's arguments.

The copy of a body (:func:`body_outcome`, :func:`copy_node`) is shared by the e-graph's inlining
(:func:`inline_calls`) and the inlining on a PEG (:func:`inline_bodies`): the flattening above, and the
validator's inlining of helpers only one side calls, before its normal forms (``validate/prove.py``).

Inputs / outputs: a PEG, its import mapping into an :class:`~peggy_jvm.epeg.EPeg`, and a :class:`CalleeSource`
per side; new e-nodes and unions (reason ``inline``). Invariants: the rewrite adds only equalities that hold; a
callee that cannot be built, checked or resolved is simply not inlined.
"""
from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Mapping

from ..classfile.descriptors import parse_method_descriptor
from ..classfile.model import Access, ClassFile, MethodInfo
from ..egraph.explain import Reason
from ..ir.nodes import FieldRef, MethodRef
from ..peg.graph import Node
from ..peg.ops import EFFECTS

if TYPE_CHECKING:
    from ..classfile.hierarchy import ClassHierarchy
    from ..epeg import EPeg
    from ..peg.graph import PEG

__all__ = ["MAX_CALLEE_NODES", "MAX_INLINE_DEPTH", "CALL_BYTES", "CalleeSource", "Body", "inlinable_calls", "choose_bodies",
           "loops_dead_at", "pure_value", "returned_value",
           "inline_calls", "inline_bodies", "same_body", "inlinable_call_count", "body_outcome", "copy_node"]

#: the size threshold: PEG nodes reachable from the callee's root (its minimized PEG). 40 nodes is a getter,
#: a guard, or a one-line arithmetic helper; larger bodies would grow the e-graph more than they save.
MAX_CALLEE_NODES = 40
#: how many callees deep a body is flattened (:meth:`CalleeSource.body`): a helper's helper's helper
MAX_INLINE_DEPTH = 3
#: the same for a callee with loops (``CalleeSource.loops``): a loop over an array with its bounds checks
MAX_LOOP_CALLEE_NODES = 120
#: the same for a synthetic callee (``CalleeSource.synthetic``): javac's ``$values()`` of an enum of 20
#: constants (126 nodes) that ecj writes into the enum's ``<clinit>`` itself
MAX_SYNTHETIC_CALLEE_NODES = 200

_CALL_OPS = frozenset({"invoke.static", "invoke.special", "invoke.virtual"})
OVERRIDABLE = "may be overridden"
#: the start of the refusal of a static call whose class initialization may be observable (:meth:`_call_refusal`)
CLASS_INIT = "class initialization"
#: the effects that initialize the class declaring the static member they name (JVMS 5.5), as the call does
_INITIALIZING = frozenset({"getstatic", "putstatic", "invoke.static"})
_HANDLER_READS = frozenset({"threw", "rho_exc", "rho_esigma"})
#: the int-typed returns a JVM may narrow on ``ireturn`` (JVMS 9+ does, older JVMs do not): their range, and the
#: narrowing operator whose result is already in it
_NARROWED_RETURNS = {"Z": (0, 1, None), "B": (-128, 127, "i2b"), "C": (0, 0xFFFF, "i2c"),
                     "S": (-32768, 32767, "i2s")}
_REASON = Reason("inline")


@dataclass(frozen=True, slots=True)
class Body:
    """An inlinable callee: its PEG and whether it takes a receiver."""

    peg: PEG
    is_static: bool
    has_loop: bool = False  # only with CalleeSource.loops, and then only inlined at a call outside every loop
    #: its result tree has ``throw`` leaves (an explicit throw): only inlined at a call that every result of the
    #: caller reaching it runs first on its heap chain (:func:`split_points`)
    throws: bool = False
    #: about the bytes inlining it adds to the caller (:data:`CALL_BYTES`; its own code, before flattening)
    growth: int = 0
    #: only the value it returns is merged with the call's (:func:`value_only`): a body that throws and does not
    #: fit where it is called (:attr:`CalleeSource.max_growth`), whose returned value is a function of its
    #: arguments alone; the call stays, its value known (``Validate.notNull(x)`` is ``x`` when it returns)
    value_only: bool = False


#: what a caller saves of a callee's bytes by inlining it: the call (``invokestatic``, 3 bytes) and the callee's
#: return (1), and an argument's push per parameter (at least 1 byte, replaced by the body's own load of it). A
#: body of ``L`` bytes with ``p`` parameters adds about ``L - CALL_BYTES - p`` (``Cold.tiny``: ``positive``'s 16
#: bytes, 7 -> 18; ``Raise.passedNull``: ``positive(int, RuntimeException)``'s 8, 8 -> 10)
CALL_BYTES = 4


@dataclass
class CalleeSource:
    """The methods one caller may inline: those of its class ``cls`` and of the other classes of ``program``
    (the input's classes by internal name, as bytes or parsed: the optimizer's are bytes, ``validate``'s each
    side's parsed input; None: the caller's class only). ``caller_static``: whether
    the caller is a static method (then its class is initialized, or being initialized by this thread).
    Callee PEGs and refusals are cached per (kind, method) in ``pegs``, the input's classes parsed once in
    ``classes``; both may be shared by the callers of one class (their answers depend on the caller's class
    only), the flattened bodies (``flat``) not: they depend on ``caller_static`` too."""

    cls: ClassFile
    hierarchy: ClassHierarchy | None
    program: Mapping[str, bytes | ClassFile] | None = None
    caller_static: bool = True
    # the rest keyword-only: the caches differ in what they may be shared by (a positional ``classes`` once
    # landed in ``flat`` and gave a static caller's answers to the instance callers of its class)
    _: KW_ONLY
    pegs: dict[tuple[str, MethodRef], Body | str] = field(default_factory=dict, repr=False)
    #: the bodies :meth:`body` gives, flattened (their own inlinable calls inlined), per (kind, method): this
    #: caller's own (they depend on ``caller_static``: class initialization), never shared
    flat: dict[tuple[str, MethodRef], Body | str] = field(default_factory=dict, repr=False)
    classes: dict[str, ClassFile | None] = field(default_factory=dict, repr=False)
    #: callees with loops too (the validator's, and since session 17 the optimizer's: the full stage passes it;
    #: extraction chooses between the call and the loop, which the cost model prices above a call unless the
    #: caller's use lets it go, e.g. a loop whose result the callee does not return); such a body is only
    #: inlined at a call no loop of the caller varies, where its loops are loops of their own at their own depths
    loops: bool = False
    #: with ``loops``, a body with loops only at a call whose use of it leaves every loop dead (the optimizer's,
    #: :func:`loops_dead_at`): a loop that stays costs a ``pass`` (50 in the PEG model) and its body per
    #: iteration, more than the call (20), so only a deleted loop can pay; the others were copied into the
    #: e-graph and saturated for nothing (commons-lang3: 294 sites, none chosen, 1.45x CPU on their callers)
    dead_loops_only: bool = False
    #: the bytes the caller's code may grow by (the optimizer's: ``pipeline.MAX_GROWTH`` of its length under
    #: ``--goal speed``, 0 under ``--goal size``; None: any): a body that throws keeps its check, its ``new``
    #: and its ``athrow`` in place, so it is offered only when what it adds (:attr:`Body.growth`) fits,
    #: as the emitted-code rule would refuse it otherwise (and extraction, which chose it, would have spent the
    #: method's chance of another rewrite: ``Cold.pick`` lost a rewrite so before this bound)
    max_growth: int | None = None
    #: ``this(...)`` too: a constructor's ``invokespecial`` of another constructor of its own class on ``this``
    #: (the validator's; the optimizer keeps the call, which the verifier's ``uninitializedThis`` rules need)
    constructors: bool = False
    #: recursive callees too (the validator's, in its normal forms and value by value: validate/prove.py,
    #: validate/finite.py): the body's own calls of itself stay calls, so each inlining unfolds the recursion once
    recursive: bool = False
    #: synthetic callees up to :data:`MAX_SYNTHETIC_CALLEE_NODES` (the validator's: a helper one compiler
    #: emits where the other writes its code in place, which meets the other side only through its body)
    synthetic: bool = False
    #: the closed-world assumption (``validate --assume closed-world``, the validator's only): ref -> whether the
    #: input holds no override of the method a virtual call of ``ref`` names, so that, no class outside the input
    #: extending it, the call runs that method; None: a virtual call of an overridable method is never inlined
    only_target: Callable[[MethodRef], bool] | None = None

    def body(self, kind: str, ref: MethodRef, nested: bool = True) -> Body | str:
        """The callee's body for a call ``invoke.<kind>`` of ``ref`` from the caller, or why it is not inlined.
        ``nested``: with the callee's own inlinable calls inlined into it (:meth:`_flattened`); otherwise the body
        as built, its calls kept."""
        if not nested:
            return self._body(kind, ref, None)
        key = (kind, ref)
        if key not in self.flat:
            self.flat[key] = self._body(kind, ref, ())
        return self.flat[key]

    def _body(self, kind: str, ref: MethodRef, path: tuple[tuple[str, MethodRef], ...] | None) -> Body | str:
        """:meth:`body` for a call made inside the bodies of ``path`` (the callees being flattened, outermost
        first; None: not flattened). A function of its arguments alone, whatever was asked before: only the
        bodies as built are cached (``pegs``), so a class's output does not depend on which of its methods a
        worker optimized first."""
        why = self._call_refusal(kind, ref)
        if why is not None and not why.startswith(CLASS_INIT):
            return why
        key = (kind, ref)
        if path is not None and key in path:
            return "recursive"  # through the callees that call it: unfolding would not end
        if key not in self.pegs:
            self.pegs[key] = self._resolve(kind, ref)
        got = self.pegs[key]
        if isinstance(got, Body) and path is not None:
            got = self._flattened(got, (*path, key))
        if why is not None and not (isinstance(got, Body) and _initializes_first(got.peg, ref.owner, self._class)):
            return why  # the call's class initialization would be lost, or come after an effect or exception
        if isinstance(got, Body) and ref.owner != self.cls.name:
            leak = _inaccessible(got.peg, self.cls.name, self._class)
            if leak is not None:
                return leak
        return got

    def _flattened(self, body: Body, path: tuple[tuple[str, MethodRef], ...]) -> Body:
        """``body`` with the calls in it that this caller could inline (checked from the caller: its class
        initialization, its access to what the inner body names, a receiver that cannot be null)
        replaced by their own flattened bodies, up to :data:`MAX_INLINE_DEPTH` callees deep, no callee inside
        itself; loop-free inner bodies only. When the result passes the body's size threshold, ``body`` as it is
        (its calls stay calls, each still inlinable by the extraction where the caller makes it itself)."""
        if len(path) >= MAX_INLINE_DEPTH or body.has_loop:
            return body
        inner: dict[int, Body] = {}  # inner bodies that throw where they cannot be split are skipped there
        for n in inlinable_calls(body.peg):
            node = body.peg.nodes[n]
            assert isinstance(node.attr, MethodRef)  # inlinable_calls gives calls of a named method only
            got = self._body(node.op.split(".")[1], node.attr, path)
            if isinstance(got, Body) and not got.has_loop:
                inner[n] = got
        if not inner:
            return body
        flat = inline_bodies(body.peg, inner)
        if len(flat.reachable([flat.root])) > max(MAX_CALLEE_NODES, len(body.peg.reachable([body.peg.root]))):
            return body
        return Body(flat, body.is_static, body.has_loop,
                    any(flat.nodes[n].op == "throw" for n in _result_tree(flat)), body.growth)

    def _class(self, name: str) -> ClassFile | None:
        """The input's class ``name`` (the caller's own included), or None when it is not in the input."""
        if name == self.cls.name:
            return self.cls
        if name not in self.classes:
            data = (self.program or {}).get(name)
            self.classes[name] = None
            if isinstance(data, ClassFile):
                self.classes[name] = data
            elif data is not None:
                from ..classfile.reader import read_class
                try:
                    self.classes[name] = read_class(data)
                except Exception:  # a broken class of the input is as good as a missing one: not inlined
                    pass
        return self.classes[name]

    def _call_refusal(self, kind: str, ref: MethodRef) -> str | None:
        """What the call itself does beyond the body, from this caller: class initialization (static calls)."""
        if ref.owner == self.cls.name:
            if kind != "static" or self.caller_static:
                return None
        elif self.program is None or self._class(ref.owner) is None:
            return "another class" if self.program is None else "not in the input"
        elif _package(ref.owner) != _package(self.cls.name):
            return "another package"
        if kind != "static":  # an instance call on an existing object (inlinable_calls): its class is initialized
            return None
        # invokestatic initializes the owner and its superclasses; a static caller's own class and its
        # superclasses are initialized already, otherwise only classes with no static initializer up the chain
        # make that step unobservable
        chain = self._superclasses(ref.owner)
        if chain is None:
            return "a superclass outside the input"
        if self.caller_static and ref.owner in (self._superclasses(self.cls.name) or []):
            return None
        for c in chain:
            if any(m.name == "<clinit>" for m in c.methods):
                return f"{CLASS_INIT} ({c.name} has a static initializer)"
        return None

    def _superclasses(self, name: str) -> list[ClassFile] | None:
        """``name`` and its superclasses below java/lang/Object, all in the input; None when one is not."""
        out: list[ClassFile] = []
        cur: str | None = name
        while cur is not None and cur != "java/lang/Object":
            c = self._class(cur)
            if c is None or len(out) > 64:
                return None
            out.append(c)
            cur = c.super_name
        return out

    def _resolve(self, kind: str, ref: MethodRef) -> Body | str:
        cls = self._class(ref.owner)
        if cls is None:
            return "not in the input"
        m = next((x for x in cls.methods if x.name == ref.name and x.descriptor == ref.descriptor), None)
        if m is None:
            return "not declared in its class"
        why = _dispatch_refusal(kind, ref, m, cls, self.constructors and cls is self.cls)
        if why == OVERRIDABLE and self.only_target is not None and self.only_target(ref):
            why = None  # a closed world: the input is every class there is, and none overrides it
        if why is not None:
            return why
        if cls is not self.cls:
            if m.access & Access.PRIVATE:
                return "private to another class"
            if self._superclasses(cls.name) is None:
                return "a superclass outside the input"  # its protected members would become reachable
        return _callee_peg(cls, m, ref, self.hierarchy, self.loops, self.recursive, self.synthetic)


def _initializes_first(peg: PEG, owner: str, lookup: Callable[[str], ClassFile | None]) -> bool:
    """Whether the body's first effect, on every path, initializes class ``owner`` as ``invokestatic`` of one of
    its methods does: the entry heap ``sigma0`` has exactly one user among the nodes reachable from the root,
    and it is ``getstatic``/``putstatic``/``invoke.static`` of a static member ``owner`` itself declares (a
    member inherited from a superclass would initialize that superclass only), ``owner`` not an interface.
    Every operator that may throw is an effect on the heap chain (``peg/ops.py``), so no exception, and no
    other effect, comes before that access: every heap of the body, its final one included, is derived from
    that access's, and the class is initialized (its superclasses first, waiting for another thread's
    initialization, failing on an erroneous class) at the same point of the effect order as by the call, before
    anything else of the body is observable. A body with no effect, or one that starts with anything else,
    or with a handler of its own (inside the callee, its class's static reads were built as unable to throw),
    is refused: the call's initialization would be lost or come late."""
    reach = peg.reachable([peg.root])
    if any(peg.nodes[n].op in _HANDLER_READS for n in reach):
        return False  # a handler of the body's own: its reads of the class's statics were built as not throwing
    entry = {n for n in reach if peg.nodes[n].op == "sigma0"}
    users = [n for n in reach if any(c in entry for c in peg.nodes[n].children)]
    if len(users) != 1:
        return False
    node = peg.nodes[users[0]]
    attr = node.attr
    if node.op not in _INITIALIZING or not isinstance(attr, (FieldRef, MethodRef)) or attr.owner != owner \
            or node.children[0] not in entry:  # the heap it runs on is the entry heap itself
        return False
    c = lookup(owner)
    if c is None or c.access & Access.INTERFACE:
        return False
    members = c.fields if isinstance(attr, FieldRef) else c.methods
    d = next((x for x in members if x.name == attr.name and x.descriptor == attr.descriptor), None)
    return d is not None and bool(d.access & Access.STATIC)


def _package(name: str) -> str:
    return name.rpartition("/")[0]


def _inaccessible(peg: PEG, caller: str, lookup) -> str | None:
    """Why the body of a callee of another class (same package, superclasses all in the input) cannot be copied
    into ``caller`` (None: every class and member it names is accessible there). A member of an input class
    must be declared in the class the reference names and be public, or private to ``caller`` itself, or of
    package or protected access in ``caller``'s package; a class of the input must be public or in
    ``caller``'s package. Classes outside the input (the JDK) can only
    be reached by the callee through public members of public classes (its superclasses are all in the input,
    so it inherits no protected JDK member but Object's), so they are accessible from ``caller`` too; Object's
    protected ``clone``/``finalize`` are refused. ``invokespecial`` (resolved against the current class) and
    ``invokedynamic`` (bootstrap handles may name the callee's private methods) are refused."""
    from ..ir.nodes import ConstKind
    for n in peg.reachable([peg.root]):
        node = peg.nodes[n]
        if node.op in ("invoke.special", "invokedynamic"):
            return f"{node.op} in another class's body"
        attr = node.attr
        if node.op == "new" and isinstance(attr, tuple):
            attr = attr[1]
        kind = getattr(attr, "kind", None)
        if node.op == "const.a" and kind not in (None, ConstKind.VALUE):
            if kind is not ConstKind.CLASS:
                return "a method handle or dynamic constant in another class's body"
            attr = getattr(attr, "value")
        if isinstance(attr, (FieldRef, MethodRef)):
            if attr.owner == "java/lang/Object" and attr.name in ("clone", "finalize"):
                return "Object's protected members"
            c = lookup(attr.owner)
            if c is None:
                continue
            members = c.fields if isinstance(attr, FieldRef) else c.methods
            d = next((x for x in members if x.name == attr.name and x.descriptor == attr.descriptor), None)
            if d is None:
                return f"{attr} is inherited"
            if d.access & Access.PRIVATE and attr.owner != caller:
                return f"{attr} is private"
            if not d.access & (Access.PUBLIC | Access.PRIVATE) and _package(attr.owner) != _package(caller):
                return f"{attr} is not public"  # protected or package access from another package
            attr = attr.owner
        if isinstance(attr, str):
            name = attr.lstrip("[")
            if name.startswith("L") and name.endswith(";"):
                name = name[1:-1]
            c = lookup(name)
            if c is not None and not c.access & Access.PUBLIC and _package(name) != _package(caller):
                return f"class {name} is not public"
    return None


def _dispatch_refusal(kind: str, ref: MethodRef, m: MethodInfo, cls: ClassFile,
                      constructors: bool = False) -> str | None:
    """Why a call ``kind`` of ``m`` may reach other code or carry effects the body lacks (None: it may not).
    ``constructors``: ``invokespecial`` of a constructor of the caller's own class is inlined (only a constructor
    can make it on ``this``: ``new`` carries its own constructor; it runs exactly that constructor's body on it)."""
    if m.name == "<init>" and constructors and kind == "special" and not m.access & Access.SYNCHRONIZED:
        return None
    if m.name.startswith("<"):
        return "a constructor or initializer"
    if m.access & (Access.NATIVE | Access.ABSTRACT):
        return "no code"
    if m.access & Access.SYNCHRONIZED:
        return "synchronized"
    if kind == "static":
        return None if m.access & Access.STATIC else "not static"
    if m.access & Access.STATIC:
        return "static called as instance method"
    if kind == "special":
        return None if m.access & Access.PRIVATE else "invokespecial of a non-private method"
    if kind == "virtual":
        if m.access & (Access.PRIVATE | Access.FINAL) or cls.access & Access.FINAL:
            return None
        return OVERRIDABLE
    return f"invoke{kind}"


def _callee_peg(cls: ClassFile, m: MethodInfo, ref: MethodRef, hierarchy: ClassHierarchy | None,
                loops: bool = False, recursive: bool = False, synthetic: bool = False) -> Body | str:
    from ..ir.lift import lift_method  # the stages below the rules: imported where used, as pipeline does
    from ..peg.build import build_peg
    from ..peg.check import check_peg
    try:
        peg = build_peg(lift_method(cls, m, hierarchy))
        check_peg(peg)
    except Exception as e:  # any stage's refusal (or bug) keeps the call: inlining is only an option
        return f"no PEG ({type(e).__name__})"
    reach = peg.reachable([peg.root])
    has_loop = any(peg.nodes[n].op == "theta" for n in reach)
    limit = MAX_LOOP_CALLEE_NODES if has_loop and loops else MAX_CALLEE_NODES
    if synthetic and m.access & Access.SYNTHETIC:
        limit = max(limit, MAX_SYNTHETIC_CALLEE_NODES)
    if len(reach) > limit:
        return f"too large ({len(reach)} > {limit} PEG nodes)"
    for n in reach:
        node = peg.nodes[n]
        if node.op == "theta" and not loops:
            return "has a loop"
        if node.op in ("monitorenter", "monitorexit"):
            return f"has {node.op}"
        if node.op.startswith("invoke.") and node.attr == ref and not recursive:
            return "recursive"
    tree = _result_tree(peg)
    if not all(peg.nodes[n].op in ("return", "throw", "phi") for n in tree):
        return "ends otherwise than by return"
    if not any(peg.nodes[n].op == "return" for n in tree):
        return "always throws"  # no normal outcome to continue the caller with (a fail() helper)
    narrow = _NARROWED_RETURNS.get(parse_method_descriptor(m.descriptor)[1])
    if narrow is not None and not all(_in_range(peg, peg.nodes[n].children[1], narrow) for n in _result_tree(peg)
                                      if peg.nodes[n].op == "return"):
        return "returns boolean/byte/char/short not known in range"
    attr = m.code_attribute()
    length = 0 if attr is None else int.from_bytes(attr.data[4:8], "big")  # max_stack, max_locals, code_length
    params = len(parse_method_descriptor(m.descriptor)[0]) + (0 if m.access & Access.STATIC else 1)
    return Body(peg, peg.is_static, has_loop, any(peg.nodes[n].op == "throw" for n in tree),
                length - CALL_BYTES - params)


def _in_range(peg: PEG, v: int, narrow: tuple[int, int, str | None]) -> bool:
    """Whether value ``v`` is certainly within the return type's range (constants in range, narrowing
    operators, phis of such), so that whether the JVM narrows it on return (JVMS 9+ ``ireturn``) or not, the
    caller receives ``v``."""
    lo, hi, op = narrow
    node = peg.nodes[v]
    if node.op == "phi":
        return _in_range(peg, node.children[1], narrow) and _in_range(peg, node.children[2], narrow)
    if node.op == "const.i":
        return lo <= node.int_attr() <= hi
    return op is not None and node.op == op


def _result_tree(peg: PEG) -> list[int]:
    """The nodes of the root's phi-tree of results (phis and their leaves, not the conditions)."""
    out, stack = [], [peg.root]
    while stack:
        n = stack.pop()
        out.append(n)
        if peg.nodes[n].op == "phi":
            stack.extend(peg.nodes[n].children[1:])
    return out


def inlinable_calls(peg: PEG, roots: list[int] | None = None) -> list[int]:
    """Call nodes of ``peg`` (static, special, virtual) reachable from ``roots`` (default: its root) whose
    outcome is read only by ``rho_value`` and ``rho_sigma``, and for instance calls whose receiver cannot be null
    (:func:`_never_null`: the caller's own ``this``, an object it constructed); in node order."""
    handled = {c for node in peg.nodes if node.op in _HANDLER_READS for c in node.children}
    out = []
    reach = set(peg.reachable(roots if roots is not None else [peg.root]))
    for n in sorted(reach):
        node = peg.nodes[n]
        if node.op not in _CALL_OPS or n in handled or not isinstance(node.attr, MethodRef):
            continue
        if node.op != "invoke.static" and not _never_null(peg, node.children[1]):
            continue
        out.append(n)
    return out


def _never_null(peg: PEG, v: int) -> bool:
    """Whether value ``v`` is a reference that cannot be null: the caller's own ``this`` (``param 0`` of an
    instance method) or an object the caller constructed (``rho_value`` of a ``new``, which either yields the
    initialized object or throws). A call on any other receiver stays a call: its NullPointerException comes
    before the body runs, and no form of the body raises it at that point with the call's message."""
    node = peg.nodes[v]
    if node.op == "param":
        return not peg.is_static and node.attr == 0
    return node.op == "rho_value" and peg.nodes[node.children[0]].op == "new"


def same_body(a: Body, b: Body) -> bool:
    """Whether two sides' bodies of one callee certainly mean the same: only then may a call both sides make be
    inlined in a shared e-graph. The same built PEG (node for node, the builder being deterministic and its
    output minimized); a callee changed on one side, even in form only, is not inlined."""
    return a is b or (a.is_static == b.is_static and a.peg.root == b.peg.root and a.peg.nodes == b.peg.nodes)


def inline_calls(eg: EPeg, peg: PEG, mapping: dict[int, int], bodies: dict[int, Body],
                 split_roots: list[int] | None = None) -> int:
    """Inline each call ``n`` of ``bodies`` (PEG node -> the callee's body; the caller chose them with
    :func:`inlinable_calls` and :meth:`CalleeSource.body`) into ``eg``, where ``mapping`` maps ``peg``'s nodes;
    returns the number of calls whose projections were merged with a body. Rebuilds the e-graph.

    A body that throws (``Body.throws``): with ``split_roots`` None (the optimizer) its throws become ``athrow``
    effects on the call's heap (:func:`body_outcome`), which the reverter emits as the callee's test and throw in
    place; with ``split_roots`` (the validator's roots of ``peg``), each root is merged with the same root whose
    results are split at the calls instead (:func:`inline_bodies`), the form the code the optimizer emitted is
    built into, where the throw is a result of the method."""
    done = 0
    for n, b in sorted(bodies.items()):
        if b.value_only:  # the call stays: only its value is known (the same in the optimizer and the proofs)
            call_cls = eg.find(mapping[n])
            read = eg.lookup("rho_value", None, (call_cls,))
            if read is not None:
                returned = returned_value(b.peg, [eg.find(mapping[c]) for c in peg.nodes[n].children],
                                          lambda op, attr, kids: eg.add(op, attr, kids), {})
                done += eg.union(read, returned, _REASON)
    bodies = {n: b for n, b in bodies.items() if not b.value_only}
    if split_roots is not None:
        throwing = {n: b for n, b in bodies.items() if b.throws}
        bodies = {n: b for n, b in bodies.items() if not b.throws}
        for r in split_roots:
            view = replace(peg, root=r)
            mine = {n: b for n, b in throwing.items() if split_points(view, n) is not None}
            if not mine:
                continue
            split = inline_bodies(view, mine)
            got = eg.add_peg(split, roots=[split.root])
            done += eg.union(mapping[r], got[split.root], _REASON)
    for n in sorted(bodies):
        call = peg.nodes[n]
        call_cls = eg.find(mapping[n])
        args = [eg.find(mapping[c]) for c in call.children]
        value, sigma = _copy_body(eg, bodies[n].peg, args, call_cls)
        merged = False
        for proj, new in (("rho_value", value), ("rho_sigma", sigma)):
            old = eg.lookup(proj, None, (call_cls,))
            if old is not None and new is not None:
                merged |= eg.union(old, new, _REASON)
        done += merged
    eg.rebuild()
    return done


def _copy_body(eg: EPeg, callee: PEG, args: list[int], call_cls: int) -> tuple[int | None, int]:
    """The callee's returned value (None for void) and final heap as classes of ``eg`` (:func:`body_outcome`);
    new effect classes remember the call they came from (their line is the call's)."""
    # a callee with loops: each theta is a placeholder class first (its cycle closes through it), added and
    # merged with it once its initial and next values are copied (as EPeg.add_peg imports thetas)
    thetas = [n for n in callee.reachable([callee.root]) if callee.nodes[n].op == "theta"]
    made = {t: eg.add_placeholder() for t in thetas}

    def add(op: str, attr: object, kids: tuple[int, ...]) -> int:
        c = eg.add(op, attr, kids)
        if op in EFFECTS:
            eg.info.copied_from.setdefault(c, call_cls)
        return c

    out = body_outcome(callee, args, add, made)
    for t in thetas:
        node = callee.nodes[t]
        kids = tuple(copy_node(callee, args, add, made, node.children[k]) for k in (0, 1))
        eg.union(made[t], eg.add("theta", node.attr, kids), _REASON)
    return out


def copy_node(callee: PEG, args: list[int], add: Callable[[str, object, tuple[int, ...]], int],
              made: dict[int, int], n: int) -> int:
    """Node ``n`` of the callee copied through ``add`` (op, attribute, children -> the copy): ``sigma0`` is the
    call's heap (``args[0]``), ``param i`` the call's argument ``i`` (receiver first); ``made`` maps the nodes
    copied so far (and thetas made beforehand by the caller, whose cycles close through them). Children come
    first in a depth-first walk, thetas excepted."""
    if n in made:
        return made[n]
    nd = callee.nodes[n]
    if nd.op == "sigma0":
        c = args[0]
    elif nd.op == "param":
        c = args[1 + nd.int_attr()]
    else:
        c = add(nd.op, nd.attr, tuple(copy_node(callee, args, add, made, k) for k in nd.children))
    made[n] = c
    return c


def body_outcome(callee: PEG, args: list[int], add: Callable[[str, object, tuple[int, ...]], int],
                 made: dict[int, int], throws: bool = True) -> tuple[int | None, int]:
    """The callee's returned value (None for void) and final heap, its body copied by :func:`copy_node`: the
    root's phi-tree of results becomes a phi of values and a phi of heaps. Shared by the e-graph's inlining
    (:func:`inline_calls`) and the inlining on the PEG (:func:`inline_bodies`).

    A ``throw(s, e)`` leaf (an explicit throw) becomes the heap ``rho_sigma(athrow(s, e))``: an effect that
    always throws ``e`` (a NullPointerException when ``e`` is null, as ``athrow`` does), after which every strict
    projection propagates it, as the call's own outcome does when the callee throws. The value is the one the
    returns give (the tests that lead to a throw choose only among returns): on a path where the callee throws,
    the call's value is never read by anything that runs, since every effect and result after the call is on
    its heap chain, which is then exceptional. ``throws=False``: the normal outcome only (the returns' values
    and heaps), for :func:`inline_bodies`, which puts the throws in the caller's result tree instead
    (:func:`throw_tree`)."""
    def ends(n: int) -> tuple[int | None, int | None, bool]:
        """(value, heap, whether a return is below); the heap is None for a subtree of throws only when
        ``throws`` is False."""
        nd = callee.nodes[n]
        if nd.op == "return":
            s, v = nd.children
            value = None if callee.nodes[v].op == "unit" else copy_node(callee, args, add, made, v)
            return value, copy_node(callee, args, add, made, s), True
        if nd.op == "throw":
            if not throws:
                return None, None, False
            s, e = (copy_node(callee, args, add, made, k) for k in nd.children)
            return None, add("rho_sigma", None, (add("athrow", None, (s, e)),)), False
        cond, a, b = nd.children  # a phi of results (checked by _callee_peg)
        c = copy_node(callee, args, add, made, cond)
        (va, sa, ra), (vb, sb, rb) = ends(a), ends(b)
        if not (ra and rb):  # one side only throws: the value (and without throws the heap) is the other's
            if not throws:
                return (va, sa, True) if ra else (vb, sb, rb)
            value = va if ra else vb
        else:
            value = None if va is None or vb is None else add("phi", None, (c, va, vb))
        if sa is None or sb is None:
            return value, sa if sb is None else sb, True
        return value, add("phi", None, (c, sa, sb)), ra or rb

    value, heap, _ = ends(callee.root)
    assert heap is not None  # a body has a return (_callee_peg)
    return value, heap


def throw_tree(callee: PEG, args: list[int], add: Callable[[str, object, tuple[int, ...]], int],
               made: dict[int, int], cont: int) -> int:
    """The callee's result tree copied (:func:`copy_node`) with each return leaf replaced by ``cont`` (the
    caller's results from the call on, given the call's normal outcome: :func:`body_outcome` with
    ``throws=False``) and each ``throw`` leaf kept: the caller's results split at the call."""
    def tree(n: int) -> tuple[int, bool]:
        nd = callee.nodes[n]
        if nd.op == "return":
            return cont, False
        if nd.op == "throw":
            return copy_node(callee, args, add, made, n), True
        cond, a, b = nd.children
        c = copy_node(callee, args, add, made, cond)
        (ta, xa), (tb, xb) = tree(a), tree(b)
        if not (xa or xb):
            return cont, False
        return add("phi", None, (c, ta, tb)), True

    return tree(callee.root)[0]


def split_points(peg: PEG, n: int) -> list[int] | None:
    """Where the caller's result tree may be split at call ``n`` (a callee that throws, inlined by
    :func:`inline_bodies`): the highest nodes of the root's phi-tree of results all of whose results run ``n``
    first on their heap chain (every path back from the result's heap, through effects, phis of heaps and loops'
    initial heaps, reaches ``rho_sigma(n)``), so that whenever such a subtree decides the method's result the
    call has run, and its throw ends the method before anything the subtree does after it. None when another
    part of the tree reaches the call (a result, or a test of the tree, outside those subtrees: the call may not
    have run there) or none is found: it stays a call. The e-graph's inlining of such a callee
    (:func:`choose_bodies` with ``throws``) asks the same, so that the optimizer inlines only what the proof's
    split can show."""
    nodes = peg.nodes
    target = next((u for u, nd in enumerate(nodes) if nd.op == "rho_sigma" and nd.children[0] == n), None)
    if target is None:
        return None
    first: dict[int, bool] = {target: True}

    def runs_first(s: int) -> bool:
        """Every path back from heap ``s`` passes ``target`` (iterative: heap chains are long)."""
        stack = [s]
        while stack:
            x = stack[-1]
            if x in first:
                stack.pop()
                continue
            nd = nodes[x]
            if nd.op == "rho_sigma" and nodes[nd.children[0]].op in EFFECTS:
                deps = [nodes[nd.children[0]].children[0]]
            elif nd.op == "phi":
                deps = list(nd.children[1:])
            elif nd.op == "eval" and nodes[nd.children[0]].op == "theta":
                deps = [nodes[nd.children[0]].children[0]]  # a loop after the call: its initial heap
            else:
                deps = []
            todo = [d for d in deps if d not in first]
            if todo and not any(d in stack for d in todo):
                stack.extend(todo)
                continue
            first[x] = bool(deps) and all(first.get(d, False) for d in deps)
            stack.pop()
        return first[s]

    tree = list(dict.fromkeys(_result_tree(peg)))
    kids = {x: list(dict.fromkeys(nodes[x].children[1:])) for x in tree if nodes[x].op == "phi"}
    below: dict[int, bool] = {}  # every result below x runs the call first

    def dominated(x: int) -> bool:
        if x not in below:
            nd = nodes[x]
            below[x] = all(dominated(k) for k in kids[x]) if x in kids else \
                nd.op in ("return", "throw") and runs_first(nd.children[0])
        return below[x]

    parents: dict[int, list[int]] = {}
    for x, ks in kids.items():
        for k in ks:
            parents.setdefault(k, []).append(x)
    splits = [x for x in tree if dominated(x) and not any(dominated(p) for p in parents.get(x, ()))]
    covered: set[int] = set()
    stack = list(splits)
    while stack:
        x = stack.pop()
        if x not in covered:
            covered.add(x)
            stack.extend(kids.get(x, ()))
    for x in tree:
        if x not in covered and n in peg.reachable([nodes[x].children[0]] if x in kids else [x]):
            return None
    return sorted(splits) or None


def choose_bodies(joint: PEG, roots: list[int], sides: list[tuple[PEG, CalleeSource]],
                  throws: bool = False) -> dict[int, Body]:
    """The calls of ``joint`` (reachable from ``roots``) to inline, with their bodies. ``sides``: each side's
    own PEG and callee source; a call is inlined only when every side whose PEG makes a call to that method
    finds an inlinable body for it, and those bodies are the same (:func:`same_body`), since one e-node of
    the shared e-graph stands for the calls of both sides."""
    users: dict[tuple[str, MethodRef], list[CalleeSource]] = {}
    for peg, source in sides:
        for node in {peg.nodes[n] for n in peg.reachable([peg.root]) if peg.nodes[n].op in _CALL_OPS}:
            if isinstance(node.attr, MethodRef):  # the only calls looked up below
                users.setdefault((node.op, node.attr), []).append(source)
    out: dict[int, Body] = {}
    variance: list | None = None
    for n in inlinable_calls(joint, roots):
        node = joint.nodes[n]
        ref = node.attr
        if not isinstance(ref, MethodRef):
            continue
        kind, sources = node.op.split(".")[1], users.get((node.op, ref), [])
        body = _one_body([s.body(kind, ref) for s in sources])
        if body is None and len(sources) > 1:
            # the sides flatten the callee differently (a helper it calls differs): its bodies as built may agree
            body = _one_body([s.body(kind, ref, nested=False) for s in sources])
        if body is None:
            continue
        if body.throws and (not throws or all(split_points(replace(joint, root=r), n) is None for r in roots)):
            continue  # only where the results can be split at the call, as the proof's inline_bodies does
        if body.throws and any(s.max_growth is not None and body.growth > s.max_growth for s in sources) \
                and not any(joint.nodes[node.children[1 + i]].op.startswith("const.") for i in _tested(body.peg)):
            # its check and throw in place need more bytes than the caller may grow by (unless a constant argument
            # its tests read may decide them, and the throw go with them: Raise.constant): the call stays, and
            # its value is known when the body's is a function of the arguments alone
            if pure_value(body.peg):
                out[n] = replace(body, value_only=True)
            continue
        if body.has_loop:
            variance = variance if variance is not None else joint.variance()
            if variance[n]:  # a call some loop of the caller varies: the body's loops would need other depths
                continue
            if any(s.dead_loops_only for s in sources) and not loops_dead_at(joint, roots, n, body.peg):
                continue  # its loops would stay, priced above the call: it cannot pay (CalleeSource)
        out[n] = body
    return out


def loops_dead_at(peg: PEG, roots: list[int], n: int, callee: PEG) -> bool:
    """Whether no loop of ``callee`` is needed by what the caller ``peg`` (from ``roots``) reads of call ``n``:
    the tests of the callee's result tree, its final heaps and thrown values, and its returned values when the
    caller reads ``rho_value`` of the call, a loop's termination (the condition of a ``guard``, which a rule
    drops when it proves the loop ends) excepted. Then every loop of the inlined body may go (the rules delete a
    dead loop that ends); otherwise it stays, costing more than the call (:attr:`CalleeSource.dead_loops_only`)."""
    value_read = any(peg.nodes[u].op == "rho_value" and peg.nodes[u].children[0] == n for u in peg.reachable(roots))
    needed: list[int] = []
    for x in _result_tree(callee):
        node = callee.nodes[x]
        if node.op == "phi":
            needed.append(node.children[0])
        elif node.op == "return":
            needed.extend(node.children if value_read else node.children[:1])
        else:  # throw: its heap and its exception
            needed.extend(node.children)
    seen: set[int] = set()
    while needed:
        k = needed.pop()
        if k in seen:
            continue
        seen.add(k)
        node = callee.nodes[k]
        if node.op == "theta":
            return False
        needed.extend(node.children[:1] if node.op == "guard" else node.children)
    return True


def _tested(callee: PEG) -> set[int]:
    """The parameters (``param i``, receiver first) the tests of ``callee``'s result tree read."""
    tests = [callee.nodes[x].children[0] for x in _result_tree(callee) if callee.nodes[x].op == "phi"]
    return {callee.nodes[k].int_attr() for k in callee.reachable(tests) if callee.nodes[k].op == "param"}


def pure_value(callee: PEG) -> bool:
    """Whether the value ``callee`` returns (the values of its returns and the tests of its result tree that
    choose among them) is a function of its arguments alone: no heap (``sigma0``: every read and effect hangs
    from it), no loop, and it returns a value. Then whenever a call of it returns normally, its value is that
    function of the call's arguments (:attr:`Body.value_only`)."""
    roots: list[int] = []
    for x in _result_tree(callee):
        node = callee.nodes[x]
        if node.op == "phi":
            roots.append(node.children[0])
        elif node.op == "return":
            if callee.nodes[node.children[1]].op == "unit":
                return False
            roots.append(node.children[1])
    return not any(callee.nodes[k].op in ("sigma0", "theta") for k in callee.reachable(roots))


def returned_value(callee: PEG, args: list[int], add: Callable[[str, object, tuple[int, ...]], int],
                   made: dict[int, int]) -> int:
    """The value ``callee`` returns (a :func:`pure_value` callee), copied by :func:`copy_node`: its result tree's
    returns, chosen by its tests; a subtree of throws only is left out (on that path the call returns nothing,
    so its value is never read)."""
    def value(n: int) -> int | None:
        node = callee.nodes[n]
        if node.op == "return":
            return copy_node(callee, args, add, made, node.children[1])
        if node.op == "throw":
            return None
        cond, a, b = node.children
        va, vb = value(a), value(b)
        if va is None or vb is None:
            return va if vb is None else vb
        return add("phi", None, (copy_node(callee, args, add, made, cond), va, vb))

    got = value(callee.root)
    assert got is not None  # a body has a return (_callee_peg)
    return got


def _one_body(found: list[Body | str]) -> Body | None:
    """The body every side found (:func:`same_body`), or None when one side found none or they differ."""
    if not found or not isinstance(found[0], Body):
        return None
    first = found[0]
    return first if all(isinstance(b, Body) and same_body(first, b) for b in found[1:]) else None


def inlinable_call_count(peg: PEG, source: CalleeSource) -> int:
    """Calls reachable from ``peg``'s root of methods ``source`` finds an inlinable body for: the full stage
    reports how many of them an extracted PEG no longer makes, i.e. call sites inlined (no other rule removes a
    call of the input's own code; net of the calls inlined bodies make themselves)."""
    count = 0
    for n in peg.reachable([peg.root]):
        node = peg.nodes[n]
        if node.op in _CALL_OPS and isinstance(node.attr, MethodRef) \
                and isinstance(source.body(node.op.split(".")[1], node.attr), Body):
            count += 1
    return count


def inline_bodies(peg: PEG, bodies: dict[int, Body]) -> PEG:
    """``peg`` with each call ``n`` of ``bodies`` (callees chosen with :func:`inlinable_calls` and
    :meth:`CalleeSource.body`, whose conditions make a call and its body the same) replaced by the body: the call's ``rho_value`` by the value the body returns, its ``rho_sigma`` by the
    heap it ends with. The validator does this on the PEG, before its normal forms, so that the branch conditions
    around a call decide the body's own tests (``x > 0`` known at ``lib(x)``: ``lib``'s ``x == 0`` is false),
    which the e-graph's inlining (after them) cannot use; :meth:`CalleeSource.body` does it to flatten a callee's
    own calls into its body. The input itself when there is nothing to inline."""
    nodes = list(peg.nodes)

    def add(op: str, attr: object, kids: tuple[int, ...]) -> int:
        nodes.append(Node(op, attr, kids))
        return len(nodes) - 1

    def inlined(n: int, body: Body, made: dict[int, int] | None = None) -> tuple[int | None, int]:
        """The body's outcome at call ``n`` (with ``made``: its normal outcome only, the nodes it copied left
        there for :func:`throw_tree`)."""
        # a callee's loops keep their depths (the prover inlines one only at a call no loop varies): each theta a
        # placeholder first, its cycle closing through it, then given its initial and next values
        thetas = [t for t in body.peg.reachable([body.peg.root]) if body.peg.nodes[t].op == "theta"]
        copied = {} if made is None else made
        copied.update({t: add("theta", body.peg.nodes[t].attr, ()) for t in thetas})
        args = list(peg.nodes[n].children)
        out = body_outcome(body.peg, args, add, copied, throws=made is None)
        for t in thetas:
            kids = tuple(copy_node(body.peg, args, add, copied, k) for k in body.peg.nodes[t].children)
            nodes[copied[t]] = Node("theta", body.peg.nodes[t].attr, kids)
        return out

    # a callee that throws: only where the caller's results can be split at the call (split_points); the
    # call's projections are then its normal outcome, and each split subtree x becomes the callee's tests and
    # throws with x (a copy of the node, so that the alias does not loop) at its returns; several calls
    # splitting one subtree nest in heap order, the first call outermost
    splits: dict[int, list[int]] = {}
    for n, b in sorted(bodies.items()):
        if b.throws:
            where = split_points(peg, n)
            if where is None:
                continue
            splits[n] = where
    outcome: dict[int, tuple[int | None, int]] = {}
    copies: dict[int, tuple[Body, list[int], dict[int, int]]] = {}  # a throwing call: its body, args, copied nodes
    for n, b in sorted(bodies.items()):
        if b.throws and n not in splits:
            continue
        if not b.throws:
            outcome[n] = inlined(n, b)
            continue
        made: dict[int, int] = {}
        outcome[n] = inlined(n, b, made)
        copies[n] = (b, list(peg.nodes[n].children), made)
    alias: dict[int, int] = {}
    for i, node in enumerate(peg.nodes):
        if node.op in ("rho_value", "rho_sigma") and node.children[0] in outcome:
            value, heap = outcome[node.children[0]]
            target = value if node.op == "rho_value" else heap
            if target is not None:
                alias[i] = target
    at: dict[int, list[int]] = {}
    for n, where in splits.items():
        for x in where:
            at.setdefault(x, []).append(n)
    for x, calls in sorted(at.items()):
        inner = add(peg.nodes[x].op, peg.nodes[x].attr, peg.nodes[x].children)
        # both calls are on every heap chain of x's results: the later one's heap reaches the earlier one
        before = {c: len(set(calls) & set(peg.reachable([peg.nodes[c].children[0]]))) for c in calls}
        for n in sorted(calls, key=lambda c: (before[c], c), reverse=True):
            b, args, made = copies[n]
            inner = throw_tree(b.peg, args, add, made, inner)
        alias[x] = inner
    from ..peg.build import rebuilt_peg
    return rebuilt_peg(peg, nodes, alias) if alias else peg

