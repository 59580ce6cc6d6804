"""Synthetic members paired by what they are, and member renames in ``--map`` (validate/pairing.py).

javac names a lambda body ``lambda$f$0``, ecj ``lambda$0``: the two methods pair because the same call site
binds them. The OPT classes here are javac's with the lambda bodies renamed in the constant pool, exactly the
difference of names between the two compilers (tests/test_ecj_pair.py runs the real pair); the negative case
swaps the two bodies' names, so each site binds the other lambda.
"""
from __future__ import annotations

import re

from pathlib import Path

import pytest
from click.testing import CliRunner

from peggy_jvm.classfile.constpool import ConstantPool
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.classfile.writer import write_class
from peggy_jvm.cli import main
from peggy_jvm.validate import ValidateOptions, validate_inputs
from peggy_jvm.validate.pairing import load_side, pair_methods, parse_class_map, split_map
from conftest import javac_command
from support.javac_cache import run_javac

SOURCE = """
import java.util.function.IntUnaryOperator;
public class Lam {
    int base = 3;
    static IntUnaryOperator twice() { return x -> x * 2; }
    static IntUnaryOperator plusOne() { return x -> x + 1; }
    IntUnaryOperator scaled(int k) { return x -> x * k + base; }
    static int apply(int v) { IntUnaryOperator f = twice(); IntUnaryOperator g = plusOne(); return f.applyAsInt(g.applyAsInt(v)); }
    static IntUnaryOperator nested(int a) { return x -> { IntUnaryOperator h = y -> y - a; return h.applyAsInt(x) * 5; }; }
    static int useNested(int v) { return nested(7).applyAsInt(v); }
    int plain(int v) { return v + base; }
}
"""


def _renamed(cf_bytes: bytes, names: dict[str, str], swap_bodies: bool = False) -> bytes:
    """The class with Utf8 constants renamed (every use: definitions and handles), or with only the method
    definitions' names exchanged (``swap_bodies``: each handle then names the other body)."""
    cf = read_class(cf_bytes)
    entries = list(cf.pool.entries)
    if not swap_bodies:
        for i, e in enumerate(entries):
            if e is not None and e[0] == 1 and e[1] in names:
                entries[i] = (1, names[e[1]])
        cf.pool = ConstantPool(entries)
        return write_class(cf)
    index = {m.name: m for m in cf.methods}
    a, b = names  # the two methods whose names are exchanged
    index[a].name_index, index[b].name_index = index[b].name_index, index[a].name_index
    return write_class(cf)


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("synthetic")
    (base / "Lam.java").write_text(SOURCE)
    orig = base / "orig"
    run_javac([*javac_command(java_home), "-d", str(orig), str(base / "Lam.java")], check=True,
              capture_output=True)
    data = (orig / "Lam.class").read_bytes()
    lambdas = sorted(m.name for m in read_class(data).methods if m.name.startswith("lambda$"))
    assert len(lambdas) == 5, lambdas
    ecj_like = {name: f"lambda${i}" for i, name in enumerate(lambdas)}  # ecj's numbering, per class
    swap = {ecj_like["lambda$twice$0"]: "", ecj_like["lambda$plusOne$1"]: ""}
    out = {"orig": orig}
    for name, new in (("ecj", _renamed(data, ecj_like)), ("swapped", _renamed(_renamed(data, ecj_like), swap, True))):
        (base / name).mkdir()
        (base / name / "Lam.class").write_bytes(new)
        out[name] = base / name
    return out


def _rows(orig: Path, opt: Path, *maps: str) -> dict[str, object]:
    rep = validate_inputs(orig, opt, ValidateOptions(parse_class_map(list(maps)), method_timeout=8.0))
    return {p.name: p for p in rep.pairs}, rep.unpaired


def test_lambdas_pair_by_the_site_that_binds_them(trees):
    orig, opt = load_side(trees["orig"]), load_side(trees["ecj"])
    members = pair_methods(orig, opt, {}).members
    names = {m.name for m in orig.classes["Lam"].methods}
    # each javac name goes to the ecj name of the same body (renamed by the same table), nested ones included
    assert members == {("Lam", n): f"lambda${i}"
                       for i, n in enumerate(sorted(x for x in names if x.startswith("lambda$")))}
    rows, unpaired = _rows(trees["orig"], trees["ecj"])
    assert unpaired == []
    assert {n for n in rows if n.startswith("lambda$")} == {n for n in names if n.startswith("lambda$")}
    not_proved = {n: r.reason for n, r in rows.items() if r.verdict.value != "equivalent"}
    assert not_proved == {}  # the lambdas, and their callers through the renamed handles


def test_a_lambda_paired_with_the_wrong_body_is_not_proved(trees):
    rows, _ = _rows(trees["orig"], trees["swapped"])
    # twice()'s site now binds x + 1: the pair of bodies is not proved, nor is the factory binding it
    swapped = [r for n, r in rows.items() if n.startswith("lambda$") and r.verdict.value != "equivalent"]
    assert len(swapped) == 2, {n: r.verdict.value for n, r in rows.items()}
    for name in ("twice", "plusOne"):
        assert rows[name].verdict.value != "equivalent", rows[name].reason
    assert rows["apply"].verdict.value != "equivalent"  # 2 * (v + 1) against (2 * v) + 1
    assert rows["plain"].verdict.value == "equivalent"


def test_map_renames_a_member(trees, tmp_path):
    # Lam.plain renamed in OPT: paired only through --map Lam.plain=Lam.simple
    cf = read_class((trees["orig"] / "Lam.class").read_bytes())
    renamed = _renamed(write_class(cf), {"plain": "simple"})
    (tmp_path / "opt").mkdir()
    (tmp_path / "opt" / "Lam.class").write_bytes(renamed)
    rows, unpaired = _rows(trees["orig"], tmp_path / "opt")
    assert "plain" not in rows and "only in ORIG: method Lam.plain(I)I" in unpaired
    rows, unpaired = _rows(trees["orig"], tmp_path / "opt", "Lam.plain=Lam.simple")
    assert rows["plain"].verdict.value == "equivalent" and unpaired == []
    # the HTML report shows OPT's side of the pair under its new name (not "no such method")
    page = tmp_path / "val.html"
    result = CliRunner().invoke(main, ["validate", str(trees["orig"]), str(tmp_path / "opt"), "--map",
                                       "Lam.plain=Lam.simple", "--html", str(page)])
    assert result.exit_code == 0, result.output
    section = page.read_text().split("Lam.plain(I)I</h2>", 1)[1].split("<h2", 1)[0]
    listings = re.findall(r"<pre>(.*?)</pre>", section, re.S)
    assert len(listings) == 2 and "simple(I)I" in listings[1] and "iadd" in listings[1], listings
    assert listings[0].replace("plain(I)I", "simple(I)I") == listings[1], listings
    # a member rename that moves the member to another class is bad input, in one line
    result = CliRunner().invoke(main, ["validate", str(trees["orig"]), str(tmp_path / "opt"),
                                       "--map", "Lam.plain=Other.simple"])
    assert result.exit_code == 2, result.output
    assert "a member keeps its class" in result.output and "Traceback" not in result.output


def test_split_map_tells_classes_from_members(trees):
    orig = load_side(trees["orig"]).classes
    classes, members = split_map(parse_class_map(["Lam=Lam2", "Lam.base=Lam2.b0", "a.b.C=a.b.D"]), orig)
    assert classes == {"Lam": "Lam2", "a/b/C": "a/b/D"}
    assert members == {("Lam", "base"): "b0"}
    with pytest.raises(ValueError, match="a member keeps its class"):
        split_map(parse_class_map(["Lam.base=Lam.x.y"]), orig)
    # a rename onto another member's name and descriptor would read two methods of ORIG as one
    with pytest.raises(ValueError, match="give two of its members one name"):
        split_map(parse_class_map(["Lam.plain=Lam.useNested"]), orig)
    # an exchange of two names is fine
    assert split_map(parse_class_map(["Lam.plain=Lam.useNested", "Lam.useNested=Lam.plain"]), orig)[1] == {
        ("Lam", "plain"): "useNested", ("Lam", "useNested"): "plain"}
