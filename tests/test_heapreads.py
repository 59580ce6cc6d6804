"""The heap reads the optimizer uses (``heap.array.read``, ``heap.field.read`` in axioms/heap-*.ax; soundness argued
above ``SAFE_GROUPS`` in peggy_jvm/rules/policy.py and in docs/axioms.md): purpose-written Java whose reads share,
look through other effects and leave the sigma chain, optimized by the full stage (every rewrite kept) and run
against the original on the JVM with inputs that throw NullPointerException, ArrayIndexOutOfBoundsException and
ArithmeticException at each access in turn; the arrays' contents after the call (the heap) are compared too.
A deliberately unsound read-over-write rule added to the same rules makes the comparison fail: the inputs are
strong enough to catch a wrong heap rule."""
from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

import difftest as dt
from support.fullstage import optimize_source
from support.javap import javap
from peggy_jvm.rules import policy
from peggy_jvm.rules.library import default_rules, load_rules

SOURCE = r"""
import java.util.Arrays;

public class HeapReads {
    int f, g;
    HeapReads(int f) { this.f = f; }

    // the second x[i] * y[i] is the first (aload-over-aload, aload-read-heap): two loads, not four
    static double twice(double[] x, double[] y, int i) { return x[i] * y[i] + (x[i] * y[i]) * 0.5; }
    static double prodLoop(double[] x, double[] y, int n) {
        double s = 0.0;
        for (int i = 0; i < n; i++) { s += x[i] * y[i] + (x[i] * y[i]) * 0.5; }
        return s;
    }
    // reads over a divisor check and over length reads (aload-over-check.i, alen-over-aload, aload-over-alen)
    static int checks(int[] a, int k, int i) { int x = a[i]; int q = 100 / k; int n = a.length; return x + q + a[i] + n + a.length; }
    // a length over an element write that may throw (alen-over-astore); b[i] after a[i] = v must be read again
    // (a and b may be one array: no read over that write)
    static int stores(int[] a, int[] b, int i, int v) { int n = a.length; int x = b[i]; a[i] = v; return n + a.length + x + b[i]; }
    // fields: over a read of an element, over a write of another field (get-over-aload, get-over-put-field,
    // aload-over-put)
    static int fields(int[] a, int i, int v, boolean nul) {
        HeapReads h = nul ? null : new HeapReads(v);
        int x = h.f; int y = a[i]; h.g = y; int z = h.f; int w = a[i];
        return x + y + z + w + h.g;
    }
    // a fresh array's length is its size (alen-nonnull-heap, alen-of-newarray)
    static int fresh(int n, int v) { HeapReads h = new HeapReads(v); int[] t = new int[n]; t[0] = h.f; return h.f + t.length + t[0] + t.length; }
    // the length of an array in a loop that reads it (the read after a[i] cannot throw)
    static long lenLoop(int[] a, int n) { long s = 0; for (int i = 0; i < n; i++) { s += a[i] * (a.length * 2) + a[i]; } return s; }
    // a handler of the second read's exception uses the value read before the try
    static int handler(int[] a, int[] b, int i) {
        int t = a[i];
        try { int u = b[i]; return t + u + a[i]; } catch (ArrayIndexOutOfBoundsException e) { return -t - a.length; }
    }

    // what the heap looks like after a call: the exception's class or the result, then the arrays
    static String observe(int[] a, int[] b, int i, int v) {
        String r;
        try { r = String.valueOf(stores(a, b, i, v)); } catch (RuntimeException e) { r = e.getClass().getName(); }
        return r + Arrays.toString(a) + Arrays.toString(b);
    }
    static String observeAlias(int[] a, int i, int v) {
        String r;
        try { r = String.valueOf(stores(a, a, i, v)); } catch (RuntimeException e) { r = e.getClass().getName(); }
        return r + Arrays.toString(a);
    }
}
"""

INTS = [None, [], [3], [3, -4, 5]]
DOUBLES = [None, [], [1.5], [1.5, -2.25, 3.0]]
INDEXES = [-1, 0, 1, 2, 3]


def _calls() -> list[dt.Call]:
    """Every method on inputs that throw at each of its accesses in turn (null arrays, short arrays, an index out
    of bounds for one array and not the other, a zero divisor), and on inputs that do not throw."""
    c = "HeapReads"
    calls = []
    for x, y, i in itertools.product(DOUBLES, DOUBLES, INDEXES):
        calls.append(dt.Call(c, "twice", "([D[DI)D", (x, y, i)))
        calls.append(dt.Call(c, "prodLoop", "([D[DI)D", (x, y, i + 1)))
    for a, k, i in itertools.product(INTS, (0, 3), INDEXES):
        calls.append(dt.Call(c, "checks", "([III)I", (a, k, i)))
    for a, b, i in itertools.product(INTS, INTS, INDEXES):
        calls.append(dt.Call(c, "observe", "([I[III)Ljava/lang/String;", (a, b, i, 7)))
        calls.append(dt.Call(c, "handler", "([I[II)I", (a, b, i)))
    for a, i in itertools.product(INTS, INDEXES):
        calls.append(dt.Call(c, "observeAlias", "([III)Ljava/lang/String;", (a, i, 7)))
        calls.append(dt.Call(c, "lenLoop", "([II)J", (a, i + 1)))
        for nul in (False, True):
            calls.append(dt.Call(c, "fields", "([IIIZ)I", (a, i, 9, nul)))
    for n in (-1, 0, 1, 4):
        calls.append(dt.Call(c, "fresh", "(II)I", (n, 6)))
    return calls


def _optimize(java_home: Path, work: Path, mp: pytest.MonkeyPatch, source: str = SOURCE,
              self_check: bool = True) -> tuple[Path, Path, dict]:
    return optimize_source(java_home, work, mp, "HeapReads", source, self_check)


@pytest.fixture(scope="module")
def optimized(java_home, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        return _optimize(java_home, tmp_path_factory.mktemp("heapreads"), mp)


def _ops(java_home: Path, cp: Path, method: str) -> list[str]:
    """The mnemonics of ``HeapReads.method`` in ``cp``, in order."""
    text = javap(java_home, "-c", "-p", "-cp", str(cp), "HeapReads", check=True).stdout
    body = re.search(rf" {method}\(.*?\n\n", text, re.S)
    assert body is not None, text
    return re.findall(r"\d+: (\w+)", body.group(0))


def test_the_safe_heap_groups_are_the_reads_only():
    """The optimizer's rules hold the read subset and none of the forwarding or aliasing rules."""
    names = {r.name for r in policy.safe_rules()}
    assert {"aload-over-aload", "aload-read-heap", "alen-over-astore", "get-over-put-field",
            "get-after-same-get-heap", "alen-nonnull-heap", "aload-accessed-nothrow"} <= names
    # forwarding and aliasing; reads off the chain whose value no read on the chain shares (an extraction
    # could not use them: pegextract.select.effects_on_sigma)
    assert not names & {"aload-after-astore", "aload-over-astore-index", "aload-over-astore-array",
                        "aload-over-astore-kind", "astore-after-astore", "get-after-put", "get-over-put-object",
                        "put-after-put", "aload-accessed-heap", "aload-after-astore-heap", "get-nonnull-heap",
                        "get-after-get-heap", "get-after-put-heap"}


def test_redundant_loads_are_shared(optimized, java_home):
    """x[i] * y[i] twice: the rewritten code loads each element once (the self-check proves it)."""
    orig, out, rows = optimized
    for name in ("twice", "prodLoop"):
        assert rows[name].status == "rewritten", (name, rows[name].reason)
        assert _ops(java_home, orig, name).count("daload") == 4
        assert _ops(java_home, out, name).count("daload") == 2


def test_shared_loads_stay_on_the_operand_stack(optimized, java_home):
    """The product of the two loads is taken as javac wrote it (x[i] * y[i], not the commuted y[i] * x[i] that
    would spill both loads to reorder them): extraction prefers the builder's form among equal-cost ones
    (``pegextract.select.prefer_original``); the product, read twice, is kept on the stack by ``dup2`` with the
    accumulator loaded under it (``ir/lower.py``)."""
    _orig, out, _rows = optimized
    ops = _ops(java_home, out, "prodLoop")
    first = ops.index("daload")
    assert ops[first:first + 5] == ["daload", "aload_1", "iload", "daload", "dmul"], ops
    # the product, used twice, stays on the stack (`dup2`; the accumulator `s` loaded first, under it): no local
    # holds it and no load is spilled; `s` itself lives in slot 3 (`dstore_3`)
    assert ops[first:first + 6] == ["daload", "aload_1", "iload", "daload", "dmul", "dup2"], ops
    assert ops.count("dstore") == 0, ops


def test_rewritten_reads_behave_like_the_originals(optimized, java_home):
    """Same results, same exception classes, same arrays afterwards, on inputs that throw at every access."""
    orig, out, rows = optimized
    assert all(r.status != "fallback" for r in rows.values()), {n: r.reason for n, r in rows.items()}
    assert sum(r.status == "rewritten" for r in rows.values()) >= 5, {n: r.reason for n, r in rows.items()}
    calls = _calls()
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [], result.report()
    assert result.compared == len(calls)


# the unsound rule, and (sound) the read it shares taken off the chain, so that sharing it pays
UNSOUND = """
group test.unsound
rule read-over-any-store: (rho_value (aload[$e] (rho_sigma (astore[$g] ?s ?a ?i ?v)) ?b ?j)) => (rho_value (aload[$e] ?s ?b ?j))
rule test-accessed-heap:  (rho_sigma (aload[$e] ?s ?a ?i)) => ?s if accessed(?s, ?a, ?i)
"""


def test_an_unsound_read_over_write_is_caught(java_home, tmp_path, monkeypatch):
    """The same comparison with a read-over-write rule that ignores aliasing in the optimizer's (and the
    self-check's) rules: ``stores(a, a, ...)`` then reads the old element, and the comparison says so."""
    wrong = [r for r in load_rules([], builtins=False, extra_text=UNSOUND).active()]
    assert [r.name for r in wrong] == ["read-over-any-store", "test-accessed-heap"]
    real = policy.safe_rules
    monkeypatch.setattr(policy, "safe_rules", lambda rules=None: real(rules) + wrong)
    orig, out, rows = _optimize(java_home, tmp_path, monkeypatch)
    assert rows["stores"].status == "rewritten", rows["stores"].reason
    calls = [c for c in _calls() if c.name == "observeAlias"]
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches, "an unsound read over an aliased write went unnoticed"


OFF_CHAIN = r"""
public class HeapReads {
    // the second a[i] cannot throw (aload-accessed-heap, not among the optimizer's rules, takes it off the sigma
    // chain), but it must still read the heap between the two writes: the reverter would emit it where its value
    // is wanted, after a[i] = 7
    static int offChain(int[] a, int[] b, int i) { int u = a[i]; b[0] = 1; int t = a[i]; a[i] = 7; return t * 10 + u + a[i] + (i - i); }
    static int alias(int[] a, int i) { return offChain(a, a, i); }
}
"""


def test_a_read_off_the_sigma_chain_is_not_extracted(java_home, tmp_path, monkeypatch):
    """With ``aload-accessed-heap`` (a read of an element accessed before, whatever happened in between, taken
    off the chain) among the rules, extraction's own checks (``pegextract.select.effects_on_sigma``), without the
    self-check behind them, keep that read from being emitted after a write of its element."""
    extra = [r for r in default_rules().active() if r.name == "aload-accessed-heap"]
    assert len(extra) == 1 and extra[0].name not in {r.name for r in policy.safe_rules()}
    real = policy.safe_rules
    monkeypatch.setattr(policy, "safe_rules", lambda rules=None: real(rules) + extra)
    orig, out, rows = _optimize(java_home, tmp_path, monkeypatch, OFF_CHAIN, self_check=False)
    assert "no selection passed the checks" in rows["offChain"].reason
    calls = [dt.Call("HeapReads", "alias", "([II)I", (a, i)) for a, i in itertools.product(INTS, INDEXES)]
    calls += [dt.Call("HeapReads", "offChain", "([I[II)I", (a, b, i))
              for a, b, i in itertools.product(INTS, INTS, INDEXES)]
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [], result.report()
