"""One Java source through the full stage with every rewrite kept, for tests of the rewrites themselves.

Inputs: a JDK, a work directory, a pytest MonkeyPatch, the class name and its source. Output: the original class
directory, the optimized one and the report rows by method name (:func:`round_trip_rotated`: the same through
``--stage peg`` with loops rotated, no rewrite). :func:`listing` reads a method's instructions off javap (or
:func:`javap` once per class, :func:`method_listing` per method), or :func:`named_code` off the class file, for the
tests' shape assertions;
:func:`assert_behaves_like_original` runs both on the JVM. The emitted-cost rule is switched off
(``conftest.keep_every_rewrite``: the rewrites' behaviour is tested, not whether they pay), and with
``self_check=False`` the self-check too (what extraction's own checks let through). :func:`optimize_stages`:
a source through ``--stage peg`` and ``--stage full`` with the defaults (every rule the CLI applies), for the
back end's shape tests.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import javac_command, keep_every_rewrite
from support.javac_cache import run_javac
from support.javap import javap as run_javap
import peggy_jvm.pipeline as pipeline
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.pipeline import Stage, optimize_input


def optimize_stages(java_home: Path, root: Path, name: str, source: str) -> tuple[Path, dict[Stage, tuple[Path, dict]]]:
    """javac's class of ``source`` (in ``root/src``) and its output under ``--stage peg`` and ``--stage full``
    (in ``root/peg``, ``root/full``), as (class directory, {stage: (output directory, report rows by name)})."""
    src = root / "src"
    src.mkdir(parents=True)
    (src / f"{name}.java").write_text(source)
    run_javac([*javac_command(java_home), "-d", str(src), str(src / f"{name}.java")], check=True)
    outs = {}
    for stage in (Stage.PEG, Stage.FULL):
        out = root / stage.value
        _, report = optimize_input(src, out, stage)
        outs[stage] = (out, {m.name: m for m in report.methods})
    return src, outs


def optimize_source(java_home: Path, work: Path, mp: pytest.MonkeyPatch, name: str, source: str,
                    self_check: bool = True) -> tuple[Path, Path, dict]:
    src = work / "src"
    src.mkdir(parents=True)
    (src / f"{name}.java").write_text(source)
    orig = work / "orig"
    run_javac([*javac_command(java_home), "-d", str(orig), str(src / f"{name}.java")], check=True)
    out = work / "out"
    keep_every_rewrite(mp)
    if not self_check:
        mp.setattr(pipeline, "_self_check", lambda *args, **kwargs: None)
    _, report = optimize_input(orig / f"{name}.class", out / f"{name}.class", Stage.FULL, jobs=1)
    return orig, out, {m.name: m for m in report.methods}


def round_trip_rotated(java_home: Path, work: Path, name: str, source: str) -> tuple[Path, Path]:
    """javac's class and its round trip through ``--stage peg`` with loops rotated as ``--goal speed`` does
    (lift, PEG, revert with ``rotate_loops``, lower: the reverter's loop shapes with no rewrite needed), as
    (orig dir, out dir); no method may fall back."""
    import functools
    from peggy_jvm.revert.revert import revert_peg
    src, orig, out = work / "src", work / "orig", work / "out"
    src.mkdir(parents=True)
    (src / f"{name}.java").write_text(source)
    run_javac([*javac_command(java_home), "-d", str(orig), str(src / f"{name}.java")], check=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline, "revert_peg", functools.partial(revert_peg, rotate_loops=True))
        _, report = optimize_input(orig / f"{name}.class", out / f"{name}.class", Stage.PEG, jobs=1)
    assert all(r.status != "fallback" for r in report.methods), [(r.name, r.reason) for r in report.methods]
    return orig, out


def assert_behaves_like_original(java_home: Path, orig: Path, out: Path, rows: dict, calls: list) -> None:
    """No method fell back, and every call gives the same result on the JVM (``-Xverify:all``) before and
    after (``difftest.compare``)."""
    import difftest as dt
    assert all(r.status != "fallback" for r in rows.values()), {n: r.reason for n, r in rows.items()}
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [], result.report()
    assert result.compared == len(calls)


def listing(java_home: Path, cp: Path, cls: str, method: str) -> list[tuple[int, str, str]]:
    """(offset, mnemonic, operands) of ``cls.method`` in the class directory ``cp``, in order (javap -c)."""
    return method_listing(javap(java_home, cp, cls), method)


def javap(java_home: Path, cp: Path, cls: str) -> str:
    """javap's listing of every method of ``cls`` (tests of many methods read it once)."""
    return run_javap(java_home, "-c", "-p", "-cp", str(cp), cls, check=True).stdout


def method_listing(text: str, method: str) -> list[tuple[int, str, str]]:
    """(offset, mnemonic, operands) of ``method`` in ``text`` (:func:`javap`'s), in order."""
    body = re.search(rf" {method}\(.*?\n(?:\n|\}})", text, re.S)  # the class's last method ends at its brace
    assert body is not None, text
    return [(int(o), op, rest.strip()) for o, op, rest in re.findall(r"(\d+): (\w+)(.*)", body.group(0))]


_MEMBER_OPS = frozenset({op.GETFIELD, op.PUTFIELD, op.GETSTATIC, op.PUTSTATIC, op.INVOKEVIRTUAL, op.INVOKESPECIAL,
                         op.INVOKESTATIC, op.INVOKEINTERFACE})


def named_code(class_file: Path, methods: list[str]) -> dict[str, list[tuple[int, int, str]]]:
    """Method name -> [(offset, base opcode, the member or class (after its last ``$``) an instruction names, else
    its operand)] for the ``methods`` of the class file (short forms as their base opcode: ``iload_1`` as
    ``iload 1``), so that two compilations of a class compare whatever their constant pools' numbering."""
    cf = read_class(class_file.read_bytes())
    out = {}
    for m in cf.methods:
        attr = m.code_attribute()
        if attr is None or m.name not in methods:
            continue
        insns = []
        for ins in read_instructions(read_code(attr.data, cf.pool)):
            opcode, arg = op.SHORT_FORMS.get(ins.opcode, (ins.opcode, ins.arg))
            name = str(arg)
            if opcode in _MEMBER_OPS:
                name = cf.pool.member_ref(arg).name
            elif opcode in (op.NEW, op.ANEWARRAY):
                name = cf.pool.class_name(arg).rpartition("$")[2]
            insns.append((ins.offset, opcode, name))
        out[m.name] = insns
    return out
