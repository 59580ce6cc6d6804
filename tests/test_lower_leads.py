"""The back end keeps a tree's earlier operands on the stack under a conditional expression, as javac does.

``this.f = a == b`` is javac's ``aload_0; iload_1; iload_2; if_icmpne; iconst_1; goto; iconst_0; putfield``: the
receiver is pushed before the test and stays on the stack through both arms. Code rebuilt from a PEG (``--stage
peg``) passes the conditional's value into the join on the stack (``revert/tidy._values_into_joins``, also when an
arm computes it by a call: ``x == null ? d : x.intValue()``), and the lowering now pushes what the join's first
tree reads before that value in the test's block (``ir/lower._Lowerer.plan_leads``): a load of a local
(``this``, an array and its index), a constant, a value the test block computes for it, and the object of a
``new`` whose ClassInit the test block runs (``new Noisy(a.name(), 0, n - (c ? 1 : 0))``: ``new; dup`` where the
ClassInit stands, the class initialized before ``a.name()`` as in javac's code, not ``new; pop`` and the object
built after the join). A deferred tree reading values above the tree's own stacked operands
(``ok = ok & (x[i] == y[i])``: ``this`` and the field's value, then the comparison) takes them in place
(``_Lowerer.under_a_tree``). Before, each was stored and loaded back after the join: 2 to 16 bytes a site
(lang3 ``EqualsBuilder.append`` x6, ``ArrayUtils.toPrimitive`` x8, ``StringUtils.normalizeSpace``, jsoup
``Element.shallowClone``, JAMA ``CholeskyDecomposition.<init>`` and ``Matrix.identity``: the row ``x[i]`` of
``x[i][j] = i == j ? 1.0 : 0.0`` is read before the test, ``revert/tidy._read_before_a_conditional``). A lead
constant that is a direct operand of the tree's root, the other leads read by the tree of a later operand
(``1.0 / (x[a] - (c ? x[a] : x[b]))``, commons-math3 ``VectorialCovariance.getResult``), is taken in place too
(``_Lowerer.operands_in``). Each shape is javac's instruction for
instruction here; the classes verify (``-Xverify:all``) and behave as javac's, the order of ``Noisy.<clinit>``
against a NullPointerException included (every call in a fresh class loader).
"""
from __future__ import annotations

import pytest

import difftest as dt
from conftest import javac_command
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.pipeline import Stage, optimize_input
from support.fullstage import named_code
from support.javac_cache import run_javac

SOURCE = """
public class Leads {
    static class Noisy {
        static { System.out.println("Noisy.<clinit>"); }
        final int v;
        Noisy(String s, int a, int b) { v = s.length() * 31 + a * 7 + b; }
    }

    boolean eq = true;
    boolean ok = true;
    final String name;

    Leads(String name) { this.name = name; }

    String name() { System.out.println("name " + name); return name; }

    Leads same(int a, int b) { eq = a == b; return this; }

    static int[] toInts(Integer[] a, int d) {
        int[] r = new int[a.length];
        for (int i = 0; i < a.length; i++) {
            Integer x = a[i];
            r[i] = x == null ? d : x.intValue();
        }
        return r;
    }

    static Noisy make(Leads a, int n, boolean c) { return new Noisy(a.name(), 0, n - (c ? 1 : 0)); }

    boolean both(double[] x, double[] y, int i) { ok = ok & (x[i] == y[i]); return ok; }

    static int rank(double[] s, int m, int n) {
        double eps = Math.pow(2.0, -52.0);
        double tol = Math.max(m, n) * s[0] * eps;
        int r = 0;
        for (int i = 0; i < s.length; i++) {
            if (s[i] > tol) {
                r++;
            }
        }
        return r;
    }

    static double[][] ident(int m, int n) {
        double[][] x = new double[m][n];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                x[i][j] = i == j ? 1.0 : 0.0;
            }
        }
        return x;
    }

    static double recip(double[] x, int a, int b, double x0) { return 1.0 / (x[a] - (x0 > 1 ? x[a] : x[b])); }

    static int run(int sel, int k, boolean nul) {
        Leads a = nul ? null : new Leads("L" + k);
        switch (sel) {
            case 0: return new Leads("x").same(k, 3).eq ? 1 : 0;
            case 1: { int[] r = toInts(new Integer[]{k, nul ? null : 5, 7}, -1); return r[0] * 100 + r[1] * 10 + r[2]; }
            case 2: return make(a, k, k > 1).v;
            case 4: return rank(new double[]{k, 1e-300, -1, 2}, k, 2);
            case 3: { double[][] x = ident(k, 2); return x.length * 10 + (x.length > 1 ? (int) (x[1][1] * 4 + x[1][0]) : 0); }
            case 6: return (int) (1000 * recip(new double[]{k, 2.5}, k & 1, 1, k));
            default: return new Leads("y").both(new double[]{1, k}, new double[]{1, 2}, k & 1) ? 1 : 0;
        }
    }
}
"""
METHODS = ["same", "toInts", "make", "both", "ident", "recip"]


@pytest.fixture(scope="module")
def built(java_home, tmp_path_factory):
    """javac's class and its ``--stage peg`` round trip (the lowering's own shapes: no rewrite decides them)."""
    root = tmp_path_factory.mktemp("leads")
    src, out = root / "src", root / "peg"
    src.mkdir()
    (src / "Leads.java").write_text(SOURCE)
    run_javac([*javac_command(java_home), "-d", str(src), str(src / "Leads.java")], check=True)
    _, report = optimize_input(src, out, Stage.PEG)
    rows = {m.name: m for m in report.methods}
    for name in [*METHODS, "rank"]:
        assert rows[name].status == "rewritten", (name, rows[name].reason)
    return src, out


def _code(classes) -> dict[str, list[tuple[int, str]]]:
    return {name: [(opcode, arg) for _, opcode, arg in insns]
            for name, insns in named_code(classes / "Leads.class", [*METHODS, "rank"]).items()}


@pytest.mark.parametrize("name", METHODS)
def test_operands_before_a_conditional_stay_on_the_stack(built, name):
    # same: `aload_0; iload_1; iload_2; if_icmpne; iconst_1; goto; iconst_0; putfield eq` (before: `istore_3;
    # aload_0; iload_3` after the join); toInts: `aload_2; iload_3; aload 4; ifnonnull; iload_1; goto; aload 4;
    # invokevirtual intValue; iastore`; make: `new Noisy; dup; aload_0; invokevirtual name; iconst_0; iload_1;
    # iload_2; ifeq; ...; isub; invokespecial` (before: `new; pop`, two locals); both: `aload_0; aload_0;
    # getfield ok; <x[i]>; <y[i]>; dcmpl; ifne; iconst_1; goto; iconst_0; iand; putfield ok`; ident (JAMA's
    # Matrix.identity): `aload_2; iload_3; aaload; iload 4; iload_3; iload 4; if_icmpne; dconst_1; goto; dconst_0;
    # dastore` (before: the row read after the join, `x[i]` and the value in locals, 6 bytes), the conditional's
    # value holding no slot (`_Lowerer.recolor`: `x` in slot 2 as javac, not above a slot left to the double)
    # (toInts's locals come in another order: `r` gets slot 4 and `x` slot 2, as many bytes); recip (commons-math3
    # VectorialCovariance.getResult, LoessInterpolator.smooth): `dconst_1; aload_0; iload_1; daload; <test>;
    # <x[a]>; goto; <x[b]>; dsub; ddiv`, the lead constant a direct operand of the root `ddiv`, the other leads
    # read by the tree of its second operand (before: `dconst_1` pushed again in the join, the tree taking `x[a]`
    # from under it: a LowerError, and the method lowered a second time without leads)
    src, out = built
    orig, new = _code(src)[name], _code(out)[name]
    assert [o for o, _ in new] == [o for o, _ in orig], (name, new, orig)
    if name != "toInts":
        assert new == orig, (name, new, orig)


def test_a_commutative_operator_takes_its_operands_as_they_were_computed(built):
    # tol = max(m, n) * s[0] * eps with eps (a call) computed first and on the stack under the product: `dmul` commutes
    # (axioms/arith-float.ax, dmul-comm), so it takes them in that order; before, both doubles were stored and
    # loaded back (JAMA SingularValueDecomposition.rank: 76 bytes, javac's 72, now 68). No double goes to a local
    # between the call and the second `dmul`
    _, out = built
    ops = [o for o, _ in _code(out)["rank"]]
    _DMUL = op.BY_NAME["dmul"].opcode
    start = ops.index(op.INVOKESTATIC)
    end = [k for k, o in enumerate(ops) if o == _DMUL][1]
    assert not {op.DSTORE, op.DLOAD} & set(ops[start:end]), ops


def test_leads_verify_and_behave_identically(built, java_home, verifier):
    src, out = built
    proc = verifier(out)
    assert proc.returncode == 0 and "verify_errors=0" in proc.stdout, proc.stdout[-2000:]
    # each call in its own class loader: Noisy.<clinit> prints where the class is initialized, before `name`
    # runs or throws (a null `a`)
    calls = [dt.Call("Leads", "run", "(IIZ)I", (sel, k, nul), group=(sel, k, nul))
             for sel in range(7) for k in (0, 3) for nul in (False, True)]
    original = dt.run_jvm(src, calls, java_home=java_home, timeout_ms=3000)
    assert any("Noisy.<clinit>" in r.out and r.kind == "THROW" for r in original)  # the order is observed
    result = dt.compare(src, out, calls, java_home=java_home, timeout_ms=3000, original=original)
    assert result.mismatches == [], result.report()
    assert result.compared == len(calls)
