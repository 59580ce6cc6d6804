"""Local-variable tables through ``--stage ir`` (peggy_jvm/ir/lower.py): javac's LocalVariableTable and
LocalVariableTypeTable are remapped to the lowered code where they stay true, and dropped where they do not.

What is checked: on every fixture method, each kept entry names the variable javac's entry names (same name,
type and slot, in javac's order), covers the same source lines (both codes' LineNumberTables), and at every
instruction of its new range the slot's verification type (our frame inference over the new code) is the
entry's type wherever it is in javac's code; where lowering reproduces javac's code byte for byte, the tables
are javac's exactly (``javap -l`` text). The dropping rules are checked on constructed cases: a temporary stored
into a variable's slot inside its range (a monkeypatched slot assignment), IR without bytecode origins (what
later stages rebuild from a PEG: only parameters never assigned keep their entries), and
:func:`remap_local_entries` on hand-made layouts. HotSpot's own format checks (-Xverify:all) run in
test_stage_ir.py over every fixture.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from pathlib import Path

import pytest

from peggy_jvm.classfile import frames as F
from peggy_jvm.classfile.attributes import (LineNumberTable, LocalVariableEntry, LocalVariableTable,
                                            LocalVariableTypeEntry, LocalVariableTypeTable)
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.model import ClassFile, CodeAttribute, MethodInfo
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.ir import lower as L
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.ir.lower import lower_method, remap_local_entries
from conftest import javac_command
from support.javac_cache import run_javac
from support.javap import javap

_ENDS_FLOW = {0xa7, 0xc8, 0xbf, 0xac, 0xad, 0xae, 0xaf, 0xb0, 0xb1, 0xaa, 0xab}  # goto, throw, returns, switches


def _table(code: CodeAttribute, cls):
    found = [a for a in code.attributes if a.name == cls.NAME]
    return cls.parse(found[0].data) if found else None


def _lower(cf: ClassFile, m: MethodInfo, h: ClassHierarchy) -> CodeAttribute:
    """What ``--stage ir`` makes of ``m`` (the pipeline passes the original LineNumberTable the same way)."""
    orig = read_code(m.code_attribute().data, cf.pool)
    return read_code(lower_method(cf, m, lift_method(cf, m, h), h, _table(orig, LineNumberTable)), cf.pool)


def _slot_types(cf: ClassFile, m: MethodInfo, code: CodeAttribute, h: ClassHierarchy) -> dict[int, list]:
    """Offset -> the verification types of the locals before that instruction (reachable code only)."""
    insns = read_instructions(code)
    analysis, states = F.infer_frames(insns, code.exception_table, cf.pool, cf.name, m.name, m.descriptor,
                                      m.is_static, h)
    out: dict[int, list] = {}
    for start, (locals_, stack) in states.items():
        loc, st, k = list(locals_), list(stack), start
        while True:
            out[insns[k].offset] = list(loc)
            analysis.step(insns[k], loc, st)
            k += 1
            if k >= len(insns) or k in analysis.leaders or insns[k - 1].opcode in _ENDS_FLOW:
                break
    return out


_PRIMITIVE = {"I": F.INTEGER, "Z": F.INTEGER, "B": F.INTEGER, "C": F.INTEGER, "S": F.INTEGER, "F": F.FLOAT,
              "J": F.LONG, "D": F.DOUBLE}


def _has_type(t: object, desc: str) -> bool:
    expected = _PRIMITIVE.get(desc[0])
    return t == expected if expected is not None else isinstance(t, str) or t == F.NULL


def _typed_everywhere(types: dict[int, list], offsets: list[int], e: LocalVariableEntry, desc: str) -> bool:
    # ``offsets`` increase: only the instructions of the entry's range are looked at (a scan of the whole method
    # per entry was half of the release 17 sweep's CPU)
    inside = offsets[bisect_left(offsets, e.start_pc):bisect_left(offsets, e.start_pc + e.length)]
    return all(_has_type(types[pc][e.index] if e.index < len(types[pc]) else F.TOP, desc)
               for pc in inside if pc in types)


def _line_of(code: CodeAttribute) -> dict[int, int]:
    """Instruction offset -> its source line (instructions before the first entry: none)."""
    table = _table(code, LineNumberTable)
    pairs = sorted((x.start_pc, x.line_number) for x in table.entries) if table else []
    out, k, line = {}, 0, None
    for i in read_instructions(code):
        while k < len(pairs) and pairs[k][0] <= i.offset:
            line = pairs[k][1]
            k += 1
        if line is not None:
            out[i.offset] = line
    return out


def _lines(line_of: dict[int, int], start: int, end: int) -> set[int]:
    return {line for pc, line in line_of.items() if start <= pc < end}


# the old tree's classes have no tables; the release 8 sweep is the slow tier's (5 s of CPU), release 17's the
# fast tier's (the same code: every fixture method lowered, its tables held to javac's)
@pytest.mark.parametrize("tree", ["release17", pytest.param("release8", marks=pytest.mark.slow)])
def test_fixture_local_tables_name_javacs_variables_over_the_same_code(fixture_classes: dict[str, Path], tree: str):
    d = fixture_classes[tree]
    h = ClassHierarchy([d])
    total = kept = typed = same_lines = 0
    for p in sorted(d.glob("*.class")):
        cf = read_class(p.read_bytes())
        for m in cf.methods:
            if m.code_attribute() is None:
                continue
            orig = read_code(m.code_attribute().data, cf.pool)
            new = _lower(cf, m, h)
            types = None
            lines_of = (_line_of(orig), _line_of(new))
            offsets = ([i.offset for i in read_instructions(orig)], [i.offset for i in read_instructions(new)])
            for cls, type_of in ((LocalVariableTable, LocalVariableEntry.descriptor),
                                 (LocalVariableTypeTable, LocalVariableTypeEntry.signature)):
                before, after = _table(orig, cls), _table(new, cls)
                if before is None:
                    assert after is None, (cf.name, m.name, cls.NAME)
                    continue
                queue: dict[tuple, list] = defaultdict(list)
                for e in after.entries if after else []:
                    queue[(e.name(cf.pool), e.index, type_of(e, cf.pool))].append(e)
                for e in before.entries:
                    total += 1
                    key = (e.name(cf.pool), e.index, type_of(e, cf.pool))
                    if not queue[key]:
                        continue  # dropped
                    ne = queue[key].pop(0)  # kept entries keep javac's order
                    kept += 1
                    assert 0 < ne.length and ne.start_pc + ne.length <= len(new.code)
                    lines_before = _lines(lines_of[0], e.start_pc, e.start_pc + e.length)
                    lines_after = _lines(lines_of[1], ne.start_pc, ne.start_pc + ne.length)
                    assert lines_after and lines_after <= lines_before, (cf.name, m.name, key)
                    same_lines += lines_after == lines_before
                    if cls is LocalVariableTable and cf.major >= 50:
                        if types is None:
                            types = (_slot_types(cf, m, orig, h), _slot_types(cf, m, new, h))
                        if _typed_everywhere(types[0], offsets[0], e, key[2]):  # javac's `this` in <init> is not
                            assert _typed_everywhere(types[1], offsets[1], ne, key[2]), (cf.name, m.name, key)
                            typed += 1
                assert not any(queue.values()), f"{cf.name}.{m.name}: entries javac does not have"
    print(f"\n{tree}: {kept}/{total} entries kept, {same_lines} over the same lines, {typed} type-checked")
    assert total > 0 and kept >= 0.98 * total  # measured: all of them
    assert same_lines >= 0.98 * kept


SAME_CODE = """
import java.util.ArrayList;
import java.util.List;
public class SameCode {
    static int addTwice(int a, int b) { int c = a + b; return c * 2; }
    static long widen(int a, long b) { long s = a + b; return s; }
    static int keepOld(int i) { int j = i; i = i + 1; return j * i; }
    static int sum(int[] xs) { int s = 0; for (int k = 0; k < xs.length; k++) { s += xs[k]; } return s; }
    static List<String> names(String first) { List<String> out = new ArrayList<>(); out.add(first); return out; }
}
"""


def test_where_the_code_is_javacs_the_tables_are_javacs(java_home: Path, tmp_path: Path, monkeypatch):
    """Lowering reproduces javac's bytecode for these methods: then the remapped tables must be javac's exactly,
    as ``javap -l`` prints them. Every entry there has its image in one run, so lowering builds none of the
    flow graphs that only the entries without one need (two per method were a tenth of ``--stage ir``'s CPU)."""
    flows = []

    class CountedFlow(L._Flow):
        def __init__(self, *args) -> None:
            flows.append(args)
            super().__init__(*args)

    monkeypatch.setattr(L, "_Flow", CountedFlow)
    (tmp_path / "SameCode.java").write_text(SAME_CODE)
    orig = tmp_path / "orig"
    run_javac([*javac_command(java_home), "-g", "-d", str(orig), str(tmp_path / "SameCode.java")],
              check=True)
    cf = read_class((orig / "SameCode.class").read_bytes())
    h = ClassHierarchy([orig])
    identical = []
    for m in cf.methods:
        javac = read_code(m.code_attribute().data, cf.pool)
        ours = _lower(cf, m, h)
        if ours.code != javac.code:
            continue
        identical.append(m.name)
        for cls in (LocalVariableTable, LocalVariableTypeTable):
            assert _table(ours, cls) == _table(javac, cls), (m.name, cls.NAME)
    assert {"addTwice", "widen", "keepOld", "names"} <= set(identical)
    assert flows == []
    # and through the pipeline, as a debugger's class reader (javap) sees the written class
    from peggy_jvm.pipeline import Stage, optimize_input

    out = tmp_path / "out"
    optimize_input(orig, out, Stage.IR)

    def tables(where: Path) -> dict[str, str]:
        text = javap(java_home, "-l", "-cp", str(where), "SameCode", check=True).stdout
        found, method = {}, None
        for line in text.splitlines():
            if "(" in line and line.strip().endswith(";"):
                method = line.strip()
            elif method is not None:
                found[method] = found.get(method, "") + line + "\n"
        return {k: v[v.index("LocalVariableTable"):] for k, v in found.items() if "LocalVariableTable" in v}

    before, after = tables(orig), tables(out)
    assert before.keys() == after.keys()
    for name in identical:
        key = next(k for k in before if f" {name}(" in k or name == "<init>" and " SameCode(" in k)
        assert after[key] == before[key], key


SLOTS = """
public class Slots {
    static int f(int a) {
        int x = a + 1;
        int y, z;
        y = z = a * 3;
        return x + y + z;
    }
}
"""


def test_a_slot_reused_inside_a_range_drops_that_entry(java_home: Path, tmp_path: Path, monkeypatch):
    """Today lowering never stores anything but a variable's own values into its slot. Force it (the kind of
    slot reuse finer allocation will bring): the temporary holding ``a * 3`` (read twice, so stored) goes to
    x's slot inside x's range; x's entry must go, the others stay."""
    (tmp_path / "Slots.java").write_text(SLOTS)
    run_javac([*javac_command(java_home), "-g", "-d", str(tmp_path), str(tmp_path / "Slots.java")],
              check=True)
    cf = read_class((tmp_path / "Slots.class").read_bytes())
    m = next(m for m in cf.methods if m.name == "f")
    h = ClassHierarchy([tmp_path])
    names = lambda code: [e.name(cf.pool) for e in _table(code, LocalVariableTable).entries]  # noqa: E731
    assert names(_lower(cf, m, h)) == ["a", "x", "y", "z"]

    real_slot_of = L._Lowerer.slot_of

    def reuse_x(self, v):
        if v.slot is None and v.id not in self.slots:
            self.slots[v.id] = 1  # x's slot
        return real_slot_of(self, v)

    monkeypatch.setattr(L._Lowerer, "slot_of", reuse_x)
    lowered = _lower(cf, m, h)
    assert any(i.name.startswith("istore") and (i.arg if i.name == "istore" else int(i.name[-1])) == 1
               for i in read_instructions(lowered)[2:])  # the temporary really went to slot 1
    assert names(lowered) == ["a", "y", "z"]


def _entry(start: int, length: int, index: int) -> LocalVariableEntry:
    return LocalVariableEntry(start, length, 1, 2, index)


def test_remap_keeps_only_what_stays_true():
    # the new code: [0,4) from origin 0 | [4,10) origin 5 | [10,12) a spill (no statement) | [12,20) origin 9 |
    # [20,30) origin 20
    segments: list[tuple[int, int | None]] = [(0, 0), (4, 5), (10, None), (12, 9), (20, 20)]
    slots = {0: {1}, 1: {1}, 2: {2}}

    def remap(entries, widths=None, stores=(), segs=segments, length=30, original_length=30):
        return remap_local_entries(entries, widths or [1] * len(entries), segs, length, list(stores), slots,
                                   original_length)

    # [5, 15) holds the origins 5 and 9: their run, the spill between them included
    assert remap([_entry(5, 10, 1)]) == [_entry(4, 16, 1)]
    assert remap([_entry(0, 6, 1)]) == [_entry(0, 10, 1)]
    assert remap([_entry(0, 10, 1)]) == [_entry(0, 20, 1)]
    # code from outside the range in the middle of its image: no contiguous image, dropped
    moved = [(0, 0), (4, 5), (10, None), (12, 25), (20, 20)]
    assert remap([_entry(5, 16, 1)], segs=moved) == []
    assert remap([_entry(5, 4, 1)], segs=moved) == [_entry(4, 6, 1)]  # origin 5 alone is fine
    # a store of something else into the slot inside the image: dropped; elsewhere or into another slot: kept
    assert remap([_entry(5, 10, 1)], stores=[(12, 1, 1)]) == []
    assert remap([_entry(5, 10, 1)], stores=[(12, 3, 1)]) == [_entry(4, 16, 1)]
    assert remap([_entry(5, 10, 1)], stores=[(12, 0, 2)]) == []  # a long in slots 0-1 overlaps slot 1
    assert remap([_entry(5, 10, 1)], stores=[(25, 1, 1)]) == [_entry(4, 16, 1)]
    # no variable of that slot and width went through the IR: dropped
    assert remap([_entry(5, 10, 7)]) == []
    assert remap([_entry(5, 10, 2)], widths=[1]) == []
    assert remap([_entry(5, 10, 2)], widths=[2]) == [_entry(4, 16, 2)]
    # nothing of the range is left in the new code: dropped
    assert remap([_entry(21, 5, 1)]) == []
    # an entry over the whole original code (a parameter) covers the whole new code, code of no statement
    # included; a shorter one does not get that code at its edges
    edges = [(0, None), (3, 0), (10, 7)]
    assert remap([_entry(0, 12, 0)], segs=edges, length=20, original_length=12) == [_entry(0, 20, 0)]
    assert remap([_entry(0, 12, 0)], segs=edges, length=20, original_length=40) == [_entry(3, 17, 0)]
    # type-table entries are remapped alike
    typed = LocalVariableTypeEntry(5, 10, 1, 2, 1)
    assert remap([typed]) == [LocalVariableTypeEntry(4, 16, 1, 2, 1)]


REASSIGNED = """
public class Reassigned {
    static int f(int a, int b) {
        b = b + a;
        int c = a * b;
        return c;
    }
}
"""


def test_ir_without_origins_keeps_only_parameters_never_assigned(java_home: Path, tmp_path: Path):
    """Later stages rebuild the IR from a PEG: statements without bytecode origins, values in fresh variables.
    There a slot no longer holds its source variable wherever the source assigned it, so only the entries of
    parameters that are never assigned may stay (over the whole code). Simulated by clearing the origins of the
    lifted IR: b (assigned) and c go, a stays."""
    (tmp_path / "Reassigned.java").write_text(REASSIGNED)
    run_javac([*javac_command(java_home), "-g", "-d", str(tmp_path), str(tmp_path / "Reassigned.java")],
              check=True)
    cf = read_class((tmp_path / "Reassigned.class").read_bytes())
    m = next(m for m in cf.methods if m.name == "f")
    h = ClassHierarchy([tmp_path])
    ir = lift_method(cf, m, h)
    lowered = read_code(lower_method(cf, m, ir, h), cf.pool)
    assert [e.name(cf.pool) for e in _table(lowered, LocalVariableTable).entries] == ["a", "b", "c"]
    for b in ir.blocks.values():
        for st in [*b.stmts, b.terminator]:
            st.origin = -1
    lowered = read_code(lower_method(cf, m, ir, h), cf.pool)
    entries = _table(lowered, LocalVariableTable).entries
    assert [(e.name(cf.pool), e.start_pc, e.length) for e in entries] == [("a", 0, len(lowered.code))]
