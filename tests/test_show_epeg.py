"""``show --epeg`` shows the optimizer's own E-PEG (issue 18, item 4): the same saturation (rules, work budget)
as the full stage, so its size equals what ``optimize --json`` reports for the method (``epeg_nodes``,
``epeg_classes``); ``--extracted`` marks the e-nodes extraction chose and prints the chosen PEG."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conftest import javac_command
from support.javac_cache import run_javac
from peggy_jvm.cli import main

SIZE = re.compile(r"^e-peg: \d+ classes reachable from c\d+ \((\d+) classes, (\d+) nodes in all\)$")


def invoke(*args) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture(scope="module")
def int_arith(fixture_classes, tmp_path_factory) -> Path:
    snap = tmp_path_factory.mktemp("epeg") / "IntArith.class"
    shutil.copyfile(fixture_classes["release17"] / "IntArith.class", snap)
    return snap


@pytest.fixture(scope="module")
def optimized(int_arith, tmp_path_factory) -> dict[str, dict]:
    """``optimize --json`` of IntArith: method name -> its row."""
    out = tmp_path_factory.mktemp("epeg-out")
    done = invoke("optimize", int_arith, "-o", out / "IntArith.class", "--json", out / "r.json")
    assert done.exit_code == 0, done.output
    return {m["name"]: m for m in json.loads((out / "r.json").read_text())["methods"]}


@pytest.mark.parametrize("method", ["compound", "constants", "mul"])
def test_show_epeg_matches_the_optimizers_epeg_size(int_arith, optimized, method):
    row = optimized[method]
    assert row["epeg_nodes"] and row["epeg_classes"], row  # the full stage saturated it
    shown = invoke("show", int_arith, "--method", method, "--epeg")
    assert shown.exit_code == 0, shown.output
    size = SIZE.match(shown.stdout.splitlines()[0])
    assert size, shown.stdout
    assert (int(size[1]), int(size[2])) == (row["epeg_classes"], row["epeg_nodes"])


def test_show_epeg_uses_the_optimizers_rule_options(int_arith, optimized):
    """--rules switches the same groups as optimize's: without the integer rules, mul's operands no longer
    commute, so the E-PEG is smaller than the optimizer's default one."""
    shown = invoke("show", int_arith, "--method", "mul", "--epeg", "--rules", "-arith.int")
    assert shown.exit_code == 0, shown.output
    assert int(SIZE.match(shown.stdout.splitlines()[0])[2]) < optimized["mul"]["epeg_nodes"]
    wrong = invoke("show", int_arith, "--method", "mul", "--peg", "--extracted")
    assert wrong.exit_code == 2 and "apply to --epeg only" in wrong.stderr


def test_show_extracted_marks_the_chosen_enodes(int_arith, optimized, tmp_path):
    """compound is rewritten by the optimizer: --extracted prints the chosen PEG, whose nodes are exactly the
    starred e-nodes (one per reached class; no two fold here), the DOT fills the same ones, and the extraction
    line gives the cost the optimizer reported."""
    row = optimized["compound"]
    assert row["status"] == "rewritten", row
    dot = tmp_path / "c.dot"
    shown = invoke("show", int_arith, "--method", "compound", "--epeg", "--extracted", "--dot", dot)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    starred = [alt for line in lines if re.match(r"^  c\d+ = ", line)
               for alt in line.split(" = ", 1)[1].split(" | ") if alt.startswith("*")]
    head = next(i for i, line in enumerate(lines) if line.startswith("peg "))
    peg_ops = sorted(re.sub(r"\(.*", "", line.split(" = ", 1)[1]) for line in lines[head + 1:])
    assert sorted(re.sub(r"\(.*", "", alt[1:]) for alt in starred) == peg_ops
    assert f"cost {row['cost_before']:g} -> {row['cost_after']:g}" in shown.stdout
    graphs = dot.read_text()
    assert graphs.count("fillcolor=palegreen") == len(starred)
    assert graphs.count("digraph") == 2  # the E-PEG and the chosen PEG
    kept = invoke("show", int_arith, "--method", "mul", "--epeg", "--extracted")
    assert "; extraction: original" in kept.stdout and "*" not in kept.stdout and "\npeg " not in kept.stdout


@pytest.fixture(scope="module")
def inline_loops(java_home, tmp_path_factory) -> tuple[Path, dict[str, dict]]:
    """``fixtures/src/inline/inl/Loops.java`` compiled and optimized (``optimize --json``): its directory and
    method name -> row."""
    work = tmp_path_factory.mktemp("epeg-inline")
    src = Path(__file__).parents[1] / "fixtures" / "src" / "inline" / "inl" / "Loops.java"
    run_javac([*javac_command(java_home), "-g", "-d", str(work / "in"), str(src)], check=True)
    done = invoke("optimize", work / "in", "-o", work / "out", "--json", work / "r.json")
    assert done.exit_code == 0, done.output
    return work / "in", {m["name"]: m for m in json.loads((work / "r.json").read_text())["methods"]}


def test_show_epeg_offers_the_optimizers_callees(inline_loops):
    """``callsWaste`` calls a callee with a loop whose result it does not read: the optimizer offers that body
    (``pipeline.optimizer_callees``: loop callees where their loops die) and inlines it; ``show --epeg`` builds
    the same E-PEG, so the same size (with a callee source of its own, without loop callees, it was smaller)."""
    classes, rows = inline_loops
    row = rows["callsWaste"]
    assert row["status"] == "rewritten" and row["inlined"], row
    shown = invoke("show", classes, "--method", "inl.Loops.callsWaste", "--epeg")
    assert shown.exit_code == 0, shown.output
    size = SIZE.match(shown.stdout.splitlines()[0])
    assert size, shown.stdout
    assert (int(size[1]), int(size[2])) == (row["epeg_classes"], row["epeg_nodes"])
