"""The back end's ``new``: code rebuilt from a PEG (``--stage peg`` and ``--stage full``) writes ``new C; dup;
<arguments>; invokespecial`` where javac does, and never moves a class's initialization across an effect.

Shapes read off the rewritten bytecode (``ir/lower._Lowerer.pair_class_inits``): what the New's consumer pushes
before it (a receiver ``aload_0``, a field read ``aload_0; getfield``) is emitted before the ``new``, and a New
that is an element of an array initializer is written inside the ``dup; index; <new>; aastore`` chain, with no
``new C; pop`` and no local. Class-initialization order, checked on the JVM with classes whose ``<clinit>``
prints (every call in a fresh class loader): a ``new`` whose argument is computed before it in the original
(``int t = a.f; return new Noisy(t + 1)``: javac initializes nothing before the field read, which throws for a
null ``a``) keeps that argument before the ``new`` (``_Lowerer.args_before_new``; the full stage's self-check
refused such a rewrite before); where the class is already
initialized on every path (``_initialized_news``), the argument may follow the ``new``, without a local. The
rewritten classes are verified (``-Xverify:all``) and run against javac's, printed output included.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import difftest as dt
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.pipeline import Stage
from support.fullstage import named_code, optimize_stages

SOURCE = """
import java.util.ArrayList;
import java.util.List;

public class News {
    static class Noisy {
        static { System.out.println("Noisy.<clinit>"); }
        final int v;
        Noisy(int v) { this.v = v; }
    }

    static class Loud {
        static { System.out.println("Loud.<clinit>"); }
        final Noisy[] parts;
        Loud(Noisy[] parts) { this.parts = parts; }
    }

    static class Cut {
        static { System.out.println("Cut.<clinit>"); }
        final long sum;
        Cut(News n, Object a, Object b, long c, boolean d) { sum = n.f + c + (a == b ? 1 : 2) + (d ? 4 : 8); }
    }

    int f;
    Object slot = "slot";
    final List<Object> list = new ArrayList<>();

    News(int f) { this.f = f; }

    int next() { System.out.println("next " + f); return f++; }

    int take(Noisy n, int k) { return n.v * 7 + k; }

    int receiverFirst(int k) { return take(new Noisy(next()), k); }

    boolean fieldFirst() { return list.add(new Noisy(next())); }

    static Loud table(News a, News b) { return new Loud(new Noisy[]{new Noisy(a.next()), new Noisy(b.next())}); }

    static Noisy argumentThrows(News a) { return new Noisy(a.f); }

    static Noisy readBeforeNew(News a) { int t = a.f; return new Noisy(t + 1); }

    static Noisy rewrittenBeforeNew(News a) { int t = a.f; int u = t * 2 + t * 2; return new Noisy(u + 1); }

    long ceil() { System.out.println("ceil " + f); return f * 3L; }

    Object obj() { System.out.println("obj " + f); return slot; }

    static long fieldStore(News a, News b) {
        long c = b.ceil();
        a.slot = new Cut(a, b.obj(), a.slot, c, false);
        return ((Cut) a.slot).sum;
    }

    static Object[] parts(String s) { System.out.println("parts " + s); return new Object[]{s, s}; }

    static int count(Object[] a) { return a.length; }

    static Noisy readBeforeClassInit(String s) { Object[] p = parts(s); return new Noisy(count(p)); }

    static int initializedBefore(News a) {
        Noisy first = new Noisy(1);
        int t = a.f;
        return new Noisy(t + 1).v + first.v;
    }

    static int run(int sel, int k, boolean nul) {
        News a = nul ? null : new News(k);
        News b = new News(k + 10);
        switch (sel) {
            case 0: return b.receiverFirst(k);
            case 1: return b.fieldFirst() ? b.list.size() : -1;
            case 2: Loud l = table(a, b); return l.parts[0].v * 100 + l.parts[1].v;
            case 3: return argumentThrows(a).v;
            case 4: return readBeforeNew(a).v;
            case 5: return readBeforeClassInit(nul ? null : "s" + k).v;
            case 6: return rewrittenBeforeNew(a).v;
            case 7: return (int) fieldStore(a, b);
            default: return initializedBefore(a);
        }
    }
}
"""
METHODS = ["receiverFirst", "fieldFirst", "table", "argumentThrows", "readBeforeNew", "rewrittenBeforeNew",
           "readBeforeClassInit", "initializedBefore", "fieldStore"]
_ICONST_1, _IADD = op.BY_NAME["iconst_1"].opcode, op.BY_NAME["iadd"].opcode


@pytest.fixture(scope="module")
def built(java_home, tmp_path_factory):
    return optimize_stages(java_home, tmp_path_factory.mktemp("news"), "News", SOURCE)


def _code(classes: Path) -> dict[str, list[tuple[int, str]]]:
    """Method name -> [(base opcode, the member or class an instruction names, else its operand)]."""
    return {name: [(opcode, arg) for _, opcode, arg in insns]
            for name, insns in named_code(classes / "News.class", METHODS).items()}


@pytest.fixture(scope="module")
def peg_code(built):
    """javac's code and ``--stage peg``'s (the lowering's own shapes: no rewrite decides them)."""
    src, outs = built
    out, report = outs[Stage.PEG]
    for name in METHODS:
        assert report[name].status == "rewritten", (name, report[name].reason)
    return _code(src), _code(out)


def test_what_the_consumer_pushes_first_comes_before_the_new(peg_code):
    # take(new Noisy(next()), k): javac's `aload_0; new; dup; aload_0; invokevirtual next; invokespecial; iload_1;
    # invokevirtual take`; list.add(new Noisy(next())): `aload_0; getfield list; new; dup; ...`. Before, the class
    # was initialized apart (`new; pop`) and the object made after the receiver: 4 bytes more each
    orig, new = peg_code
    for name in ("receiverFirst", "fieldFirst"):
        assert new[name] == orig[name], (name, new[name])
        assert op.POP not in [o for o, _ in new[name]]


def test_news_inside_an_array_initializer_are_written_in_its_chain(peg_code):
    # new Loud(new Noisy[]{new Noisy(a.next()), new Noisy(b.next())}): javac's `new Loud; dup; iconst_2; anewarray;
    # dup; iconst_0; new Noisy; dup; aload_0; invokevirtual next; invokespecial; aastore; dup; iconst_1; ...`, no
    # `new; pop` and no local (StringEscapeUtils.<clinit>'s tables: 1,846 -> 1,691 bytes)
    orig, new = peg_code
    assert new["table"] == orig["table"], new["table"]


def test_an_argument_computed_before_the_new_stays_before_it(peg_code):
    # int t = a.f; return new Noisy(t + 1): javac reads the field (NullPointerException for a null a) before `new`
    # initializes Noisy; the IR's New has no ClassInit (nothing observable lay between javac's new and its
    # constructor call), so the read, a tree of its own, must not be emitted after the `new`
    _, new = peg_code
    ops = new["readBeforeNew"]
    assert ops.index((op.GETFIELD, "f")) < ops.index((op.NEW, "Noisy")), ops


def test_the_full_stage_keeps_a_rewrite_before_a_new(built):
    # t * 2 + t * 2 is rewritten; the read of a.f stays before `new Noisy`, so the self-check proves the emitted
    # code (with the read after the `new`, its PEG initialized Noisy first: main kept javac's code, "not proved")
    _, outs = built
    out, report = outs[Stage.FULL]
    assert report["rewrittenBeforeNew"].status == "rewritten", report["rewrittenBeforeNew"].reason
    ops = _code(out)["rewrittenBeforeNew"]
    assert ops.index((op.GETFIELD, "f")) < ops.index((op.NEW, "Noisy")), ops


def test_a_value_computed_before_the_class_init_goes_to_a_local_first(peg_code):
    # Object[] p = parts(s); return new Noisy(count(p)): the call's result, read inside the arguments, is stored
    # before `new` (javac's `invokestatic parts; astore_1; new; dup; aload_1; invokestatic count; invokespecial`);
    # before, the class was initialized apart (`new; pop`) and the value stored after it
    orig, new = peg_code
    assert new["readBeforeClassInit"] == orig["readBeforeClassInit"], new["readBeforeClassInit"]


def test_an_argument_may_follow_a_new_whose_class_is_initialized(peg_code):
    # initializedBefore: the first `new Noisy` initialized the class on every path, so the second one's field
    # read may come after its `new` (javac's order, no local for the read: `new; dup; aload_0; getfield f;
    # iconst_1; iadd; invokespecial`)
    _, new = peg_code
    ops = new["initializedBefore"]
    second = [k for k, x in enumerate(ops) if x == (op.NEW, "Noisy")][1]
    assert ops[second + 1:second + 7] == [(op.DUP, "0"), (op.ALOAD, "0"), (op.GETFIELD, "f"), (_ICONST_1, "0"),
                                          (_IADD, "0"), (op.INVOKESPECIAL, "<init>")], ops


@pytest.mark.slow  # the slow tier: two stages' classes on the JVM
def test_rewritten_news_verify_and_behave_identically(built, java_home, verifier):
    # fieldStore (joda-time's GJChronology.assemble): `a.slot = new Cut(a, b.obj(), a.slot, c, false)` with `c`
    # computed before the `new` and taken after the calls: a flush emits the arguments' trees first, and the
    # `new; dup` may not go before them there, since the putfield's object is pushed after them and would sit
    # above the new object (a VerifyError, "Bad operand type when invoking <init>"): the class is initialized
    # apart (`new; pop`) instead
    src, outs = built
    # every call in its own class loader (its own group): each one initializes Noisy and Loud afresh, so the
    # printed <clinit> lines show where the initialization happened relative to `next` and to the exception
    calls = [dt.Call("News", "run", "(IIZ)I", (sel, k, nul), group=(sel, k, nul))
             for sel in range(9) for k in (0, 3) for nul in (False, True)]
    original = dt.run_jvm(src, calls, java_home=java_home, timeout_ms=3000)
    assert any("Noisy.<clinit>" in r.out and r.kind == "THROW" for r in original)  # the order is observed
    for stage, (out, _) in outs.items():
        proc = verifier(out)
        assert proc.returncode == 0 and "verify_errors=0" in proc.stdout, proc.stdout[-2000:]
        result = dt.compare(src, out, calls, java_home=java_home, timeout_ms=3000, original=original)
        assert result.mismatches == [], result.report()
        assert result.compared == len(calls), stage

