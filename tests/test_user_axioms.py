"""User axioms in ``optimize`` (``--axioms``, ``--no-default-axioms``, ``--rules``) and ``check-axioms``
(docs/cli.md, docs/axioms.md "Your own axioms").

Covered: a sound user rule fires, pays by the emitted cost and the output runs like the original; ``--rules
-group`` takes a default rewrite away; ``--no-default-axioms`` leaves only the user's rules; every documented
error (parse and type errors at FILE:LINE:COL, a name clashing with the defaults, an unknown group, a bad path,
the options outside ``--stage full``, an unsound rule refused at load time) is one line and exit 2 with nothing
written; ``check-axioms`` exits 0/1/2; an unsound rule that gets past the load-time check (the pipeline called
directly) is refused by the self-check and the class behaves like the original (with a control: the same rule
trusted by the proof does produce the wrong code); the proof's rules add only the user rules the checker finds
sound; ``--jobs 2`` gives the bytes of ``--jobs 1``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import javac_command, keep_every_rewrite
from support.javac_cache import run_javac
from test_cli import files_under, invoke, java, one_error_line, run_cli
from test_optimize_full import _javap
from peggy_jvm.archive import OUTPUT_MARKER

SOURCE = """
public class U {
    static int mask(int x) { return (x & 0xff) & 0x0f; }
    static int cancel(int x, int y) { return (x ^ y) ^ y; }
    static int triple(int x) { return x * 3; }
    public static void main(String[] a) {
        for (String s : a) { int v = Integer.parseInt(s); System.out.println(mask(v) + " " + cancel(v, 77) + " " + triple(v)); }
    }
}
"""
#: two small classes for --jobs (small methods: equally cheap selections, which the solver may return in any
#: order from run to run, would make the bytes differ for another reason)
OTHERS = {"V": "public class V { static int m(int x) { return (x & 0xf0) & 0x3c; } }",
          "W": "public class W { static long m(int x) { return ((x & 0x7f) & 0x3f) + 1L; } }"}
ARGS = ["0", "1", "-1", "255", "-256", "2147483647", "-2147483648", "12345"]

#: sound: two masks are one (the defaults have no such rule: `mask` stays as javac wrote it without it)
MASKS = """# user rules
group user.masks
rule and-and-const: (and.i (and.i ?x (const.i[$a])) (const.i[$b])) => (and.i ?x (and.i (const.i[$a]) (const.i[$b])))
"""
#: unsound: x * 3 is not x << 1 (x = 1: 3 vs 2)
WRONG = """group user.wrong
rule times3-shl: (mul.i ?x (const.i 3)) => (shl.i ?x (const.i 1))
"""


@pytest.fixture(scope="module")
def compiled(java_home, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("user-axioms")
    sources = {"U": SOURCE, **OTHERS}
    for name, src in sources.items():
        (d / f"{name}.java").write_text(src)
    run_javac([*javac_command(java_home), "-d", str(d / "classes"),
                    *(str(d / f"{name}.java") for name in sources)], check=True)
    return d / "classes"


def _ax(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _optimize(cls: Path, out: Path, *options) -> dict:
    """``optimize --json``: method name -> its row (the command must succeed)."""
    result = invoke("optimize", cls, "-o", out, "--json", out.parent / "r.json", *options)
    assert result.exit_code == 0, result.output
    return {m["name"]: m for m in json.loads((out.parent / "r.json").read_text())["methods"]}


def _ops(java_home: Path, cp: Path, method: str) -> list[str]:
    return [op for _, op, _ in _javap(java_home, cp, "U")[method]]


def _runs_like_the_original(java_home: Path, original: Path, new: Path) -> None:
    before = java(java_home, "-cp", original, "U", *ARGS)
    after = java(java_home, "-cp", new, "U", *ARGS)
    assert before.returncode == 0 and len(before.stdout.split("\n")) > len(ARGS), before.stderr
    assert (after.returncode, after.stdout, after.stderr) == (0, before.stdout, before.stderr)


def test_a_sound_user_axiom_fires_and_pays(compiled, java_home, tmp_path):
    rows = _optimize(compiled / "U.class", tmp_path / "plain" / "U.class")
    assert rows["mask"]["status"] == "unchanged", rows["mask"]
    out = tmp_path / "user" / "U.class"
    rows = _optimize(compiled / "U.class", out, "--axioms", _ax(tmp_path, "masks.ax", MASKS))
    row = rows["mask"]
    assert row["status"] == "rewritten", row
    assert row["emitted_cost_after"] < row["emitted_cost_before"] and row["bytes_after"] < row["bytes_before"]
    assert _ops(java_home, compiled, "mask").count("iand") == 2
    assert _ops(java_home, out.parent, "mask").count("iand") == 1
    _runs_like_the_original(java_home, compiled, out.parent)


def test_rules_minus_a_group_takes_its_rewrite_away(compiled, java_home, tmp_path):
    rows = _optimize(compiled / "U.class", tmp_path / "on" / "U.class")
    assert rows["cancel"]["status"] == "rewritten", rows["cancel"]  # xor-cancel, group bits.int
    assert "ixor" not in _ops(java_home, tmp_path / "on", "cancel")
    rows = _optimize(compiled / "U.class", tmp_path / "off" / "U.class", "--rules", "-bits.int")
    assert rows["cancel"]["status"] == "unchanged", rows["cancel"]
    rows = _optimize(compiled / "U.class", tmp_path / "again" / "U.class", "--rules", "-bits.int,+bits.int")
    assert rows["cancel"]["status"] == "rewritten", rows["cancel"]


def test_no_default_axioms_leaves_only_the_users_rules(compiled, tmp_path):
    masks = _ax(tmp_path, "masks.ax", MASKS)
    rows = _optimize(compiled / "U.class", tmp_path / "only" / "U.class", "--no-default-axioms", "--axioms", masks)
    assert rows["mask"]["status"] == "unchanged", rows["mask"]  # 0xff & 0x0f is not folded: no gain
    assert rows["cancel"]["status"] == "unchanged", rows["cancel"]
    rows = _optimize(compiled / "U.class", tmp_path / "fold" / "U.class", "--no-default-axioms", "--axioms", masks,
                     "--rules", "+fold")  # a built-in rule, switched on by name
    assert rows["mask"]["status"] == "rewritten", rows["mask"]
    assert rows["cancel"]["status"] == "unchanged", rows["cancel"]


@pytest.mark.parametrize("text, where, what", [
    ("group user\nrule r: (add.i ?x\n   (const.l 0)) => ?x\n", ":3:5", "must be int"),  # a type error
    ("rule r: (add.i ?x 0) => ?x\n", ":1:19", ""),  # syntax
    ("rule r: (frob.i ?x) => ?x\n", ":1:10", "frob.i"),  # an unknown operator
    ("rule xor-cancel: (xor.i ?x ?x) => (const.i 0)\n", ":1:6", "already defined at"),  # a default rule's name
    (WRONG, ":2:6", "rule times3-shl is unsound: ?x = "),  # refused at load time (the fuzzer)
    ("rule r: (add.i ?x (const.i)) => ?x\n", ":1:20", "(const.i) without a value cannot be checked"),  # any constant
])
def test_rule_file_errors_are_one_line_at_file_line_col(compiled, tmp_path, text, where, what):
    ax = _ax(tmp_path, "bad.ax", text)
    result = invoke("optimize", compiled / "U.class", "-o", tmp_path / "out" / "U.class", "--axioms", ax)
    assert result.exit_code == 2, result.output
    line = one_error_line(result.stderr)
    assert line.startswith(f"peggy-jvm: error: {ax}{where}: ") and what in line, line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, what", [
    (["--rules", "+no.such.group"], "usage: --rules: no rule group or rule named 'no.such.group' (groups: "),
    (["--rules", "-bits.int,"], "usage: --rules: empty group name"),
    (["--axioms", "missing.ax"], "missing.ax: no such file or directory"),
    (["--axioms", "."], ".: no axiom files (*.ax) in this directory"),
    (["--no-default-axioms"], "usage: --no-default-axioms needs --axioms"),
    (["--stage", "ir", "--rules", "-bits.int"], "usage: --axioms, --no-default-axioms and --rules apply to "
                                                "--stage full only"),
])
def test_bad_rule_options_exit_2(compiled, tmp_path, monkeypatch, args, what):
    monkeypatch.chdir(tmp_path)
    result = invoke("optimize", compiled / "U.class", "-o", tmp_path / "out" / "U.class", *args)
    assert result.exit_code == 2, result.output
    assert what in one_error_line(result.stderr)
    assert not (tmp_path / "out").exists()


def test_unknown_group_error_names_the_known_groups(compiled, tmp_path):
    result = invoke("optimize", compiled / "U.class", "-o", tmp_path / "o" / "U.class",
                    "--axioms", _ax(tmp_path, "masks.ax", MASKS), "--rules", "-nope")
    line = one_error_line(result.stderr)
    assert result.exit_code == 2 and "arith.int" in line and "user.masks" in line, line


def test_check_axioms_exit_codes(tmp_path):
    masks, wrong = _ax(tmp_path, "masks.ax", MASKS), _ax(tmp_path, "wrong.ax", WRONG)
    done = invoke("check-axioms", masks)
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[0].startswith(f"{masks}:3:6: sound    and-and-const (")
    assert done.stdout.splitlines()[-1] == "1 rules: 1 sound, 0 unsound, 0 exempt"
    done = invoke("check-axioms", masks, wrong)
    assert done.exit_code == 1, done.output
    assert f"{wrong}:2:6: UNSOUND  times3-shl: ?x = " in done.stdout and "left gives" in done.stdout
    assert done.stdout.splitlines()[-1] == "2 rules: 1 sound, 1 unsound, 0 exempt"
    exempt = _ax(tmp_path, "loop.ax", "rule eval-any: (eval[$l] ?x ?i) => ?x if invariant(?x, $l)\n")
    done = invoke("check-axioms", exempt)
    assert done.exit_code == 0 and "exempt   eval-any: " in done.stdout, done.output
    latin1 = tmp_path / "latin1.ax"
    latin1.write_bytes(b"# caf\xe9\n")
    for bad, what in ((_ax(tmp_path, "typo.ax", "rule r: (add.i ?x (const.l 0)) => ?x\n"),
                       ":1:20: add.i input 2 must be int: long vs int"),
                      (tmp_path / "missing", ": no such file or directory"),
                      (latin1, ":1:6: not UTF-8 text"),
                      # a left-hand constant without its value (any constant) was an AttributeError in the fuzzer
                      (_ax(tmp_path, "any.ax", "rule ok: (add.i ?x (const.i 0)) => ?x\n"
                                               "rule r: (add.i ?x (const.i)) => ?x\n"),
                       ":2:20: (const.i) without a value cannot be checked: write (const.i[$c]) to match any "
                       "constant")):
        done = invoke("check-axioms", bad)
        assert done.exit_code == 2 and done.stdout == "", done.output
        assert one_error_line(done.stderr) == f"peggy-jvm: error: {bad}{what}"


def test_an_unsound_rule_past_the_load_time_check_never_makes_a_wrong_class(compiled, java_home, tmp_path,
                                                                              monkeypatch):
    """The command line refuses WRONG before any work; called directly, the pipeline takes it. It fires (the
    e-graph has x << 1 for x * 3), but the self-check proves only with the defaults and the user rules the
    fuzzer finds sound, so `triple` keeps its code and the class runs like the original. Control: with the
    fuzzer made to vouch for every rule, the same run emits wrong code (x + x). (Every rewrite is kept whether or
    not its emitted code pays: a shift costs what a multiplication does.)"""
    import peggy_jvm.rules.check as check
    from peggy_jvm.rules.policy import RuleOptions
    from peggy_jvm.pipeline import Stage, optimize_input

    keep_every_rewrite(monkeypatch)
    wrong = RuleOptions((_ax(tmp_path, "wrong.ax", WRONG),))
    out = tmp_path / "safe"
    _, report = optimize_input(compiled / "U.class", out / "U.class", Stage.FULL, rules=wrong)
    row = next(m for m in report.methods if m.name == "triple")
    assert row.status == "unchanged" and row.reason.startswith("self-check: "), row
    assert "imul" in _ops(java_home, out, "triple")
    _runs_like_the_original(java_home, compiled, out)

    trusting = RuleOptions((_ax(tmp_path, "wrong-again.ax", WRONG),))  # another value: not cached
    monkeypatch.setattr(check, "check_rule", lambda ast, **kw: check.CheckResult(ast.name, "sound"))
    _, report = optimize_input(compiled / "U.class", tmp_path / "bad" / "U.class", Stage.FULL, rules=trusting)
    row = next(m for m in report.methods if m.name == "triple")
    assert row.status == "rewritten" and "imul" not in _ops(java_home, tmp_path / "bad", "triple"), row
    before = java(java_home, "-cp", compiled, "U", *ARGS)
    after = java(java_home, "-cp", tmp_path / "bad", "U", *ARGS)
    assert after.returncode == 0 and after.stdout != before.stdout


def test_the_proof_trusts_only_user_rules_the_checker_finds_sound(tmp_path):
    """All three rules steer the search; the self-check's rules add only the sound one to the defaults (not the
    unsound one, nor the exempt `eval-drop`, which is wrong for a heap: it would drop a loop that may not end)."""
    from peggy_jvm.rules.policy import RuleOptions, optimizer_rules, proof_only_rules, proof_rules, safe_rules

    ax = _ax(tmp_path, "three.ax", MASKS + WRONG + "rule eval-drop: (eval[$l] ?x ?i) => ?x\n")
    options = RuleOptions((ax,))
    mine = {"and-and-const", "times3-shl", "eval-drop"}
    assert mine <= {r.name for r in optimizer_rules(options)}
    proof = [r.name for r in proof_rules(options)]
    assert proof == [r.name for r in safe_rules() + proof_only_rules()] + ["and-and-const"]
    assert [r.name for r in proof_rules(RuleOptions((ax,), switches=("-user.masks",)))] == proof[:-1]


def test_jobs_2_with_user_axioms_gives_the_bytes_of_jobs_1(compiled, tmp_path):
    masks = _ax(tmp_path, "masks.ax", MASKS)
    src = tmp_path / "in"
    src.mkdir()
    for name in OTHERS:
        (src / f"{name}.class").write_bytes((compiled / f"{name}.class").read_bytes())
    outputs = []
    for jobs in (1, 2):
        target = tmp_path / f"j{jobs}"
        done = run_cli("optimize", src, "-o", target, "--jobs", jobs, "--axioms", masks, "--rules", "-bits.int")
        assert done.returncode == 0, done.stderr
        assert "2 rewritten" in done.stdout, done.stdout  # V.m and W.m, by the user's rule
        outputs.append(files_under(target))
        del outputs[-1][OUTPUT_MARKER]
    assert outputs[0] == outputs[1]
