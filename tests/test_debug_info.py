"""Debug information of methods rebuilt from a PEG (``--stage peg`` and ``--stage full``; issue 18, item 5).

What is checked, on a class compiled with ``javac -g`` and optimized through :func:`optimize_class`: every
parameter entry the new LocalVariableTable keeps names javac's parameter (name, slot, type) and is true where it
claims, checked here by a formulation of its own (the greatest set of instructions entered only from
instructions of the set that do not store into the slot) rather than the lowering's forward analysis, so the
slot holds the argument throughout; a parameter the method never assigns covers the
whole code; the source variable too still holds the argument there (for a parameter the method assigns, no
line after the one that assigns it is claimed); what is lost is reported per method (``debug_dropped`` and
the reason text); the class verifies (-Xverify:all), prints what the original prints, and an exception thrown in
a rewritten method shows the original source line in its stack trace. A loop counter's entries (the reverted
loop's variable, in a slot of its own) are checked by running both codes with a small tracing interpreter:
wherever the new table names the counter, its slot holds what the original's counter holds when the original
runs the same effect next.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.attributes import LineNumberTable, LocalVariableTable
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.model import CodeAttribute
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.pipeline import Stage, optimize_class
from conftest import javac_command
from support.javac_cache import run_javac

SOURCE = """\
public class Dbg {
    static int scale(int[] out, int n, int k) {
        for (int i = 0; i < n; i++) {
            out[i] = i * k;
        }
        k = out[n - 1] + 1;
        out[0] = k;
        return k + n;
    }

    static int fail(int[] a, int i) {
        int x = i * 2;
        return a[x];
    }

    public static void main(String[] args) {
        int[] out = new int[10];
        System.out.println(scale(out, 10, 3) + " " + out[0] + " " + out[9]);
        try {
            fail(new int[2], 5);
        } catch (ArrayIndexOutOfBoundsException e) {
            StackTraceElement t = e.getStackTrace()[0];
            System.out.println(t.getMethodName() + ":" + t.getLineNumber());
        }
    }
}
"""
FAIL_LINE = SOURCE.splitlines().index("        return a[x];") + 1
ASSIGN_LINE = SOURCE.splitlines().index("        k = out[n - 1] + 1;") + 1


def _table(code: CodeAttribute, cls):
    found = [a for a in code.attributes if a.name == cls.NAME]
    return cls.parse(found[0].data) if found else None


def _predecessors(code: CodeAttribute) -> dict[int, set[int]]:
    """Offset -> offsets of the instructions control can come from (branches, fall-through, handlers)."""
    insns = read_instructions(code)
    preds: dict[int, set[int]] = {i.offset: set() for i in insns}
    for k, ins in enumerate(insns):
        targets = list(ins.successors_targets())
        if ins.opcode not in op.NO_FALLTHROUGH and k + 1 < len(insns):
            targets.append(insns[k + 1].offset)
        targets += [h.handler for h in code.exception_table if h.start <= ins.offset < h.end]
        for t in targets:
            preds[t].add(ins.offset)
    return preds


def _writes(code: CodeAttribute, slot: int) -> set[int]:
    out = set()
    for ins in read_instructions(code):
        opcode, index = op.SHORT_FORMS.get(ins.opcode, (ins.opcode, ins.arg))
        wide = opcode in (op.LSTORE, op.DSTORE)
        if (op.ISTORE <= opcode <= op.ASTORE or opcode == op.IINC) and index <= slot <= index + wide:
            out.add(ins.offset)
    return out


def _holds_argument(code: CodeAttribute, slot: int) -> set[int]:
    """Offsets at which the slot surely still holds the argument: the greatest set whose every instruction is
    entered only from instructions of the set that do not write the slot (offset 0 also from the entry)."""
    preds, writes = _predecessors(code), _writes(code, slot)
    held = set(preds)
    changed = True
    while changed:
        changed = False
        for pc in sorted(held):
            if any(p not in held or p in writes for p in preds[pc]):
                held.discard(pc)
                changed = True
    return held


def _line_of(code: CodeAttribute, pc: int) -> int:
    lines = _table(code, LineNumberTable)
    return max((e for e in lines.entries if e.start_pc <= pc), key=lambda e: e.start_pc).line_number


@pytest.fixture(scope="module")
def compiled(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("dbg")
    (d / "Dbg.java").write_text(SOURCE)
    run_javac([*javac_command(java_home), "-g", "-d", str(d), str(d / "Dbg.java")], check=True)
    return d


@pytest.mark.parametrize("stage", [Stage.PEG, Stage.FULL])
def test_parameters_keep_true_entries_and_lines(compiled: Path, java_home: Path, tmp_path: Path, stage: Stage):
    data = (compiled / "Dbg.class").read_bytes()
    new_data, reports = optimize_class(data, ClassHierarchy([compiled]), stage)
    by_name = {r.name: r for r in reports}
    old_cf, cf = read_class(data), read_class(new_data)
    old_codes = {m.name: read_code(m.code_attribute().data, old_cf.pool) for m in old_cf.methods}
    checked = 0
    for m in cf.methods:
        r = by_name[m.name]
        if r.status != "rewritten":
            continue
        code = read_code(m.code_attribute().data, cf.pool)
        old = old_codes[m.name]
        params = {e.index: (e.name(old_cf.pool), old_cf.pool.utf8(e.descriptor_index))
                  for e in _table(old, LocalVariableTable).entries if e.start_pc == 0}
        kept = _table(code, LocalVariableTable)
        entries = kept.entries if kept is not None else []
        offsets = sorted(_predecessors(code))
        for e in entries:
            name, desc = e.name(cf.pool), cf.pool.utf8(e.descriptor_index)
            if params.get(e.index, (None, None))[0] != name:
                assert name == "i" and m.name == "scale", (m.name, name)  # the loop counter: the test below
                continue
            assert params[e.index] == (name, desc), (m.name, name)
            inside = [pc for pc in offsets if e.start_pc <= pc < e.start_pc + e.length]
            assert inside and inside[0] == e.start_pc and e.start_pc + e.length in (*offsets, len(code.code))
            assert set(inside) <= _holds_argument(code, e.index), (m.name, name)
            if not _writes(old, e.index):
                assert (e.start_pc, e.length) == (0, len(code.code)), (m.name, name)
            else:  # the source assigns it (on ASSIGN_LINE, after reading out[n - 1]): no later line is claimed
                assert all(_line_of(code, pc) <= ASSIGN_LINE for pc in inside), (m.name, name)
        names = {e.name(cf.pool) for e in entries}
        gone = [n for _, (n, _) in sorted(params.items()) if n not in names]
        assert all(n in r.debug_dropped["variables"] for n in gone), (m.name, r.debug_dropped)
        assert not set(r.debug_dropped["variables"]) & names
        if m.name == "scale":
            assert {"out", "n"} <= names  # never assigned: whole range
            assert "k" in names  # assigned at ASSIGN_LINE: a shorter range before it
            checked += 1
        if m.name == "fail":
            assert {"a", "i"} <= names and "x" in r.debug_dropped["variables"]
            assert "dropped LocalVariableTable entries: x" in r.reason
            assert FAIL_LINE in {e.line_number for e in _table(code, LineNumberTable).entries}
            checked += 1
    assert checked >= (2 if stage is Stage.PEG else 1)
    (tmp_path / "Dbg.class").write_bytes(new_data)
    java = str(java_home / "bin" / "java")
    want = subprocess.run([java, "-cp", str(compiled), "Dbg"], capture_output=True, text=True, check=True).stdout
    got = subprocess.run([java, "-Xverify:all", "-cp", str(tmp_path), "Dbg"], capture_output=True, text=True,
                         check=True).stdout
    assert got == want and want.splitlines()[-1] == f"fail:{FAIL_LINE}"


_CMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
        "ge": lambda a, b: a >= b, "gt": lambda a, b: a > b, "le": lambda a, b: a <= b}


def _trace(code: CodeAttribute, args: list, watch: dict[int, int]) -> list[tuple[int, int, int]]:
    """Run int-only ``code`` (what javac and the reverter make of ``scale``) on ``args``; returns (effects run
    so far, watched pc, value of its slot) each time a pc of ``watch`` (pc -> slot) is about to run. The array
    loads and stores are the effects: both codes run them in the same order."""
    insns = read_instructions(code)
    at = {ins.offset: k for k, ins in enumerate(insns)}
    local = list(args) + [None] * 8
    stack: list = []
    effects, k, out = 0, 0, []
    while True:
        ins = insns[k]
        if ins.offset in watch:
            out.append((effects, ins.offset, local[watch[ins.offset]]))
        name = ins.name
        opcode, arg = op.SHORT_FORMS.get(ins.opcode, (ins.opcode, ins.arg))
        k += 1
        if op.ICONST_M1 <= opcode <= op.ICONST_5:
            stack.append(opcode - op.ICONST_0)
        elif opcode in (op.BIPUSH, op.SIPUSH):
            stack.append(arg)
        elif opcode in (op.ILOAD, op.ALOAD):
            stack.append(local[arg])
        elif opcode in (op.ISTORE, op.ASTORE):
            local[arg] = stack.pop()
        elif opcode == op.IINC:
            local[arg] += ins.arg2
        elif name in ("iadd", "isub", "imul"):
            b, a = stack.pop(), stack.pop()
            stack.append({"iadd": a + b, "isub": a - b, "imul": a * b}[name])
        elif name == "iaload":
            i, a = stack.pop(), stack.pop()
            stack.append(a[i])
            effects += 1
        elif name == "iastore":
            v, i, a = stack.pop(), stack.pop(), stack.pop()
            a[i] = v
            effects += 1
        elif name.startswith("if"):  # if_icmpXX, ifXX
            b = stack.pop() if name.startswith("if_icmp") else 0
            a = stack.pop()
            if _CMP[name[-2:]](a, b):
                k = at[ins.arg]
        elif name == "goto":
            k = at[ins.arg]
        elif name == "ireturn":
            return out
        else:
            raise AssertionError(f"unexpected {name}")


@pytest.mark.parametrize("stage", [Stage.PEG])
def test_a_loop_variable_keeps_its_name_where_it_holds_its_value(compiled: Path, stage: Stage):
    """``scale``'s loop counter ``i`` lives in a variable of the reverted loop; its entries may name a slot of
    their own. Checked by running both codes: wherever the new table says a slot is ``i`` (or ``k``), the slot
    holds what the original's ``i`` (``k``) holds when the original runs the same effect next."""
    data = (compiled / "Dbg.class").read_bytes()
    new_data, reports = optimize_class(data, ClassHierarchy([compiled]), stage)
    assert next(r for r in reports if r.name == "scale").status == "rewritten"
    old_cf, cf = read_class(data), read_class(new_data)
    old = read_code(next(m for m in old_cf.methods if m.name == "scale").code_attribute().data, old_cf.pool)
    new = read_code(next(m for m in cf.methods if m.name == "scale").code_attribute().data, cf.pool)
    old_slot = {e.name(old_cf.pool): e.index for e in _table(old, LocalVariableTable).entries}
    claims: dict[str, dict[int, int]] = {}
    for e in _table(new, LocalVariableTable).entries:
        for ins in read_instructions(new):
            if e.start_pc <= ins.offset < e.start_pc + e.length:
                claims.setdefault(e.name(cf.pool), {})[ins.offset] = e.index
    assert "i" in claims and "k" in claims
    n = 6
    for name in ("i", "k"):
        effect_pcs = {ins.offset: old_slot[name] for ins in read_instructions(old) if ins.name in ("iaload", "iastore")}
        seen = _trace(old, [[0] * n, n, 3], effect_pcs)
        before = {effects: value for effects, _, value in seen}  # the original's value as effect #n+1 runs
        got = _trace(new, [[0] * n, n, 3], claims[name])
        assert got, name
        for effects, pc, value in got:
            assert before[effects] == value, (name, pc, effects, value, before[effects])
