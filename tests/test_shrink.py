"""The size peepholes on a method's own bytecode (``classfile/shrink.py``) and ``--goal size``'s use of them.

Each peephole's shape is read off the shrunk code of purpose-written Java (exact instruction lists); the
shrunk classes are verified (``-Xverify:all``) and run against javac's on generated arguments; a
LocalVariableTable (``javac -g``) keeps only entries that stay true; through the pipeline the peepholed
original is kept only when the self-check proves it (a broken one is refused).
"""
from __future__ import annotations

from pathlib import Path

import pytest

import difftest as dt
from peggy_jvm import pipeline
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile import shrink
from peggy_jvm.classfile.assembler import Handler, Insn, Label, assemble
from peggy_jvm.classfile.attributes import LocalVariableTable
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.classfile.recode import RecodeResult
from peggy_jvm.classfile.writer import write_class
from peggy_jvm.codecost import Goal
from peggy_jvm.pipeline import Stage, optimize_input
from conftest import javac_command
from support.javac_cache import run_javac

SOURCE = """
public class Shrunk {
    static void branch(int a, int[] x) {
        if (a > 0) { x[0] = 1; } else { x[1] = 2; }
    }

    static int late(int a, int b, int c) {
        int s = a + b;
        int t = s * c;
        for (int i = 0; i < t; i++) s += i;
        return s;
    }

    static long stacked(long a, int k) {
        long v = a * k;
        long w = v + 1;
        return w * v;
    }

    static float floats(float f, float g) {
        float h = f * g;
        return h + h;
    }

    static String caught(String s, int k) {
        String r;
        try {
            r = s.substring(k);
        } catch (RuntimeException e) {
            r = "bad";
        }
        return r;
    }

    static int constant(int n) {
        int k = 7;
        return n * k + k;
    }

    static int copy(int n, int m) {
        int x = n;
        m += 3;
        return x * m + x;
    }

    static int wide(int n) {
        int a0 = n, a1 = n + 1, a2 = n + 2, a3 = n + 3, a4 = n + 4;
        int s = a0 * a1;
        int u = a2 * a3 - a4;
        for (int i = 0; i < n; i++) { s += i * u; u ^= s; }
        return s + u;
    }
}
"""
METHODS = {"branch": "(I[I)V", "late": "(III)I", "stacked": "(JI)J", "floats": "(FF)F",
           "caught": "(Ljava/lang/String;I)Ljava/lang/String;", "wide": "(I)I",
           "constant": "(I)I", "copy": "(II)I"}


@pytest.fixture(scope="module")
def javac_out(java_home, tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("shrunk")
    (src / "Shrunk.java").write_text(SOURCE)
    run_javac([*javac_command(java_home), "-g", "-d", str(src), str(src / "Shrunk.java")], check=True)
    return src


def _shrunk(classes: Path) -> dict[str, tuple[list[str], list[str], RecodeResult | None]]:
    """Method name -> (javac's instructions, the shrunk ones, the result), instructions as text."""
    cf = read_class((classes / "Shrunk.class").read_bytes())
    out = {}
    for m in cf.methods:
        code = read_code(m.code_attribute().data, cf.pool)
        r = shrink.shrink_method(cf, m, code, read_instructions(code), ClassHierarchy([]))
        new = read_code(r.data, cf.pool) if r is not None else code
        out[m.name] = (_listing(code), _listing(new), r)
    return out


def _listing(code) -> list[str]:
    text = []
    for i in read_instructions(code):
        shows_arg = op.OPERAND_OF[i.opcode] in (op.Operand.LOCAL, op.Operand.BRANCH2, op.Operand.IINC)
        text.append(f"{i.offset}: {i.name}" + (f" {i.arg}" if shows_arg else ""))
    return text


def _names(listing: list[str]) -> list[str]:
    return [line.split()[1] for line in listing]


def test_a_goto_to_a_return_becomes_the_return(javac_out):
    before, after, _ = _shrunk(javac_out)["branch"]
    assert "8: goto 15" in before and before[-1] == "15: return"
    assert after == ["0: iload_0", "1: ifle 9", "4: aload_1", "5: iconst_0", "6: iconst_1", "7: iastore",
                     "8: return", "9: aload_1", "10: iconst_1", "11: iconst_2", "12: iastore", "13: return"]


def test_values_stay_on_the_stack(javac_out):
    shrunk = _shrunk(javac_out)
    # v read twice: `dup2; lstore`; w read once, straight after its store: neither store nor load is left;
    # v then takes the dead parameter a's slots
    before, after, _ = shrunk["stacked"]
    assert "4: lstore_3" in before and "8: lstore 5" in before
    assert after == ["0: lload_0", "1: iload_2", "2: i2l", "3: lmul", "4: dup2", "5: lstore_0", "6: lconst_1",
                     "7: ladd", "8: lload_0", "9: lmul", "10: lreturn"]
    # the catch block's unread exception popped; r never stored: both arms return where they compute it
    before, after, _ = shrunk["caught"]
    assert _names(before)[3:] == ["astore_2", "goto", "astore_3", "ldc", "astore_2", "aload_2", "areturn"]
    assert _names(after) == ["aload_0", "iload_1", "invokevirtual", "areturn", "pop", "ldc", "areturn"]


def test_a_constant_local_is_read_as_the_constant(javac_out):
    before, after, _ = _shrunk(javac_out)["constant"]
    assert _names(before) == ["bipush", "istore_1", "iload_0", "iload_1", "imul", "iload_1", "iadd", "ireturn"]
    assert _names(after) == ["iload_0", "bipush", "imul", "bipush", "iadd", "ireturn"]


def test_a_copy_shares_the_slot_of_its_source(javac_out):
    # n is dead after `x = n`: x takes slot 0 and the copy `iload_0; istore_0` is gone
    before, after, _ = _shrunk(javac_out)["copy"]
    assert before[:2] == ["0: iload_0", "1: istore_2"]
    assert after == ["0: iinc 1", "3: iload_0", "4: iload_1", "5: imul", "6: iload_0", "7: iadd", "8: ireturn"]


def test_same_graph_peepholes_leave_jumps_and_constants(javac_out):
    cf = read_class((javac_out / "Shrunk.class").read_bytes())
    out = {}
    for m in cf.methods:
        code = read_code(m.code_attribute().data, cf.pool)
        r = shrink.shrink_method(cf, m, code, read_instructions(code), ClassHierarchy([]), same_graph=True)
        out[m.name] = None if r is None else _listing(read_code(r.data, cf.pool))
    shrunk = _shrunk(javac_out)
    assert out["branch"] is None  # its one gain is a copied return
    assert out["late"] == shrunk["late"][1] and out["stacked"] == shrunk["stacked"][1]
    assert out["constant"] is None  # k stays a local (its one gain is the constant read in its place)


def test_a_float_is_not_duplicated(javac_out):
    # `dup` of a float just computed stalls the interpreter (docs/cost-model.md): h keeps its store and loads
    before, after, result = _shrunk(javac_out)["floats"]
    assert result is None and after == before


def test_slots_follow_live_ranges(javac_out):
    before, after, _ = _shrunk(javac_out)["late"]
    assert "7: istore 4" in before and "24: iinc 5" in before
    # a and b die at s = a + b, c at t = s * c: s, t, i take their slots; every access is one byte but iinc
    assert after == ["0: iload_0", "1: iload_1", "2: iadd", "3: dup", "4: istore_0", "5: iload_2", "6: imul",
                     "7: istore_2", "8: iconst_0", "9: istore_1", "10: iload_1", "11: iload_2",
                     "12: if_icmpge 25", "15: iload_0", "16: iload_1", "17: iadd", "18: istore_0", "19: iinc 1",
                     "22: goto 10", "25: iload_0", "26: ireturn"]
    # wide: javac gives a0..a4, s, u, i slots 1-8; n and a0..a4 are live at once (six slots), but once they
    # are read s, u and i fit in slots 1-3: only a3 and a4 stay above 3 (a load or store with an operand)
    before, after, _ = _shrunk(javac_out)["wide"]
    explicit = [line.split(" ", 1)[1] for line in after if line.split()[1] in ("iload", "istore")]
    assert "iload 8" in " ".join(before) and explicit == ["istore 4", "istore 5", "iload 4", "iload 5"], after


def _table(result: RecodeResult, cf) -> list[tuple[str, int, int, int]]:
    code = read_code(result.data, cf.pool)
    a = next(a for a in code.attributes if a.name == "LocalVariableTable")
    return sorted((cf.pool.utf8(e.name_index), e.index, e.start_pc, e.length)
                  for e in LocalVariableTable.parse(a.data).entries)


def test_the_local_variable_table_stays_true(javac_out):
    cf = read_class((javac_out / "Shrunk.class").read_bytes())
    shrunk = _shrunk(javac_out)
    # late: a, b, c give their slots to s, t, i: their entries go (the debugger would show s as a); s, t, i
    # keep theirs in their new slots over the moved ranges
    assert _table(shrunk["late"][2], cf) == [("i", 1, 10, 15), ("s", 0, 4, 23), ("t", 2, 8, 19)]
    # stacked: w no longer exists, v lives in a's slots after a is read for the last time
    assert _table(shrunk["stacked"][2], cf) == [("k", 2, 0, 11), ("v", 0, 5, 6)]
    # in every method: a kept entry's slot is only ever accessed with its type over its range
    kinds = {"I": "i", "J": "l", "F": "f", "D": "d"}
    for name, (_, after, result) in shrunk.items():
        if result is None:
            continue
        code = read_code(result.data, cf.pool)
        insns = read_instructions(code)
        for var, slot, start, length in _table(result, cf):
            desc = next(cf.pool.utf8(e.descriptor_index) for e in LocalVariableTable.parse(
                next(a for a in code.attributes if a.name == "LocalVariableTable").data).entries
                if cf.pool.utf8(e.name_index) == var)
            kind = kinds.get(desc, "a")
            for i in insns:
                short = op.SHORT_FORMS.get(i.opcode)
                base, local = short if short else (i.opcode, i.arg)
                if start <= i.offset < start + length and local == slot and (
                        op.ILOAD <= base <= op.ALOAD or op.ISTORE <= base <= op.ASTORE or base == op.IINC):
                    assert op.NAME_OF[base][0] == kind or base == op.IINC and kind == "i", (name, var, i)


def test_unreachable_code_and_jumps_to_the_next_instruction_go(javac_out):
    # javac writes no dead code: a body assembled by hand, `goto B` over two dead instructions
    b = Label("B")
    items = [Insn(op.ILOAD, 0), Insn(op.GOTO, target=b), Insn(op.ICONST_5), Insn(0x57), b, Insn(op.ICONST_0 + 1),
             Insn(0x60), Insn(op.IRETURN)]
    body = shrink._Body(items, [], {})
    assert shrink._drop_unreachable(body) and shrink._drop_jumps_to_next(body)
    code = assemble(body.items, body.handlers)
    assert [i.name for i in code.instructions] == ["iload_0", "iconst_1", "iadd", "ireturn"]
    # a handler whose range holds only dead code goes with it
    s, e, h, skip = Label("s"), Label("e"), Label("h"), Label("skip")
    items = [Insn(op.GOTO, target=skip), s, Insn(op.ICONST_0), Insn(op.IRETURN), e, h, Insn(op.ATHROW), skip,
             Insn(op.ICONST_0 + 1), Insn(op.IRETURN)]
    body = shrink._Body(items, [Handler(s, e, h, 0)], {})
    assert shrink._drop_unreachable(body) and shrink._drop_jumps_to_next(body)
    assert body.handlers == []
    assert [i.name for i in assemble(body.items, body.handlers).instructions] == ["iconst_1", "ireturn"]


def _write_shrunk(javac_out: Path, dest: Path) -> None:
    cf = read_class((javac_out / "Shrunk.class").read_bytes())
    for m in cf.methods:
        attr = m.code_attribute()
        code = read_code(attr.data, cf.pool)
        r = shrink.shrink_method(cf, m, code, read_instructions(code), ClassHierarchy([]))
        if r is not None:
            attr.data = r.data
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "Shrunk.class").write_bytes(write_class(cf))


def _calls() -> list[dt.Call]:
    calls = [dt.Call("Shrunk", name, desc, args) for name, desc in METHODS.items() if name not in ("late", "wide")
             for args in dt.generate_args(desc, 20, seed=5)]
    # the loops run t (n) times: small values only
    calls += [dt.Call("Shrunk", "late", "(III)I", (a, b, c)) for a, b, c in ((1, 2, 3), (-4, 2, 7), (0, 0, 0),
                                                                              (5, 9, -1), (30, 1, 40))]
    calls += [dt.Call("Shrunk", "wide", "(I)I", (n,)) for n in (-1, 0, 1, 7, 300)]
    return calls


def test_shrunk_code_verifies_and_behaves_identically(javac_out, tmp_path, java_home, verifier):
    out = tmp_path / "shrunk"
    _write_shrunk(javac_out, out)
    proc = verifier(out)
    assert proc.returncode == 0 and "verify_errors=0" in proc.stdout, proc.stdout[-2000:]
    calls = _calls()
    result = dt.compare(javac_out, out, calls, java_home=java_home, timeout_ms=3000)
    assert result.mismatches == [], result.report()
    assert result.compared == len(calls)


def test_goal_size_keeps_the_proved_peepholes(javac_out, tmp_path, java_home, monkeypatch):
    out = tmp_path / "size"
    _, report = optimize_input(javac_out, out, Stage.FULL, goal=Goal.SIZE)
    rows = {m.name: m for m in report.methods}
    mine = _shrunk(javac_out)
    for name in ("branch", "late", "stacked", "caught"):
        row = rows[name]
        assert row.status == "rewritten", (name, row.reason)
        # at least as small as the peepholes alone (the full stage's rewrite may be smaller still)
        assert row.bytes_after <= len(read_code(mine[name][2].data, read_class(
            (javac_out / "Shrunk.class").read_bytes()).pool).code) < row.bytes_before
    # dropped debug entries are reported as for any rewrite
    assert set(rows["late"].debug_dropped["variables"]) >= {"a", "b", "c"}
    result = dt.compare(javac_out, out, _calls(), java_home=java_home, timeout_ms=3000)
    assert result.mismatches == [] and result.compared == len(_calls()), result.report()

    # a peephole that changed the meaning is refused by the self-check: the method keeps javac's code, or the
    # peepholes that keep the PEG's graph (here unbroken) where they shorten it
    def broken(cf, m, code, insns, hierarchy, same_graph=False):
        r = shrink.shrink_method(cf, m, code, insns, hierarchy, same_graph)
        if r is None or same_graph or m.name not in ("branch", "late"):
            return r
        data = bytearray(r.data)
        if m.name == "branch":
            at = data.index(bytes([op.ICONST_0 + 2, 0x4f]))  # x[1] = 2 -> x[1] = 3
            data[at] = op.ICONST_0 + 3
        else:
            at = data.index(bytes([op.ICONST_0, op.ISTORE_0 + 1]))  # i = 0 -> i = 1
            data[at] = op.ICONST_0 + 1
        return RecodeResult(bytes(data), r.dropped)
    monkeypatch.setattr(pipeline, "shrink_method", broken)
    monkeypatch.setattr(pipeline, "_full", _never_smaller)
    _, report = optimize_input(javac_out, tmp_path / "broken", Stage.FULL, goal=Goal.SIZE)
    rows = {m.name: m for m in report.methods}
    # branch: only a copied return shortens it, which the fallback does not do
    assert rows["branch"].status == "unchanged" and "peepholes: self-check" in rows["branch"].reason
    assert rows["late"].status == "rewritten" and rows["late"].bytes_after == rows["late"].bytes_before - 5
    result = dt.compare(javac_out, tmp_path / "broken", _calls(), java_home=java_home, timeout_ms=3000)
    assert result.mismatches == [], result.report()


def _never_smaller(*args, **kwargs):
    raise pipeline.MethodUnchanged("no cheaper PEG (test)")


def test_jumps_are_threaded_and_inverted():
    # `ifeq L; goto M; L:` is `ifne M`; a jump to a goto goes where the goto goes
    lab, m, g = Label("L"), Label("M"), Label("G")
    items = [Insn(op.ILOAD, 0), Insn(op.IFEQ, target=lab), Insn(op.GOTO, target=m), lab, Insn(op.ILOAD, 1),
             Insn(op.IFNE, target=g), Insn(op.ICONST_0 + 1), Insn(op.IRETURN), g, Insn(op.GOTO, target=m), m,
             Insn(op.ICONST_0), Insn(op.IRETURN)]
    body = shrink._Body(items, [], {})
    assert shrink._thread_jumps(body)
    assert shrink._drop_unreachable(body) and shrink._drop_jumps_to_next(body)
    code = assemble(body.items, body.handlers)
    # the goto at G is gone (nothing reaches it any more), and so is the one after `ifeq`
    assert [(i.offset, i.name, i.arg) for i in code.instructions] == [
        (0, "iload_0", 0), (1, "ifne", 10), (4, "iload_1", 0), (5, "ifne", 10), (8, "iconst_1", 0),
        (9, "ireturn", 0), (10, "iconst_0", 0), (11, "ireturn", 0)]
