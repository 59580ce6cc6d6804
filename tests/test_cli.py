"""The ``peggy-jvm`` command line against its contract (docs/cli.md).

A few checks run the installed console script in a subprocess (what users and CI run); the rest use click's
CliRunner in-process. Every rewritten program is run under ``java -Xverify:all`` and must print exactly what
the original printed. Covered: ``optimize`` on a class (``-o`` file, ``-o`` directory, default output), on a
directory and on jars (plain, and really signed with keytool + jarsigner), the JSON report, ``--jobs``
determinism, classes written back byte-identical, unimplemented stages and usage errors, and ``disasm``.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from peggy_jvm.archive import OUTPUT_MARKER
from peggy_jvm.classfile.bytecode import decode
from peggy_jvm.classfile.opcodes import OPERAND_OF, Operand
from peggy_jvm.classfile.reader import read_class, read_code
from peggy_jvm.cli import main

_SCRIPT = Path(sys.executable).parent / "peggy-jvm"
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "peggy_jvm.cli"]
STATUSES = {"rewritten", "unchanged", "fallback"}
METHOD_KEYS = {"class", "name", "descriptor", "status", "reason", "cost_before", "cost_after", "bytes_before",
               "bytes_after", "time_ms"}
MAIN_DESC = "([Ljava/lang/String;)V"


# -- helpers ---------------------------------------------------------------------------------------------------
def run_cli(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          cwd=cwd, timeout=600)


def invoke(*args) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def java(java_home: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(java_home / "bin" / "java"), "-Xverify:all", *map(str, args)], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120)


def tool(java_home: Path, name: str, *args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([str(java_home / "bin" / name), *map(str, args)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, cwd=cwd, timeout=300)
    assert done.returncode == 0, f"{name} {args}: {done.stdout}{done.stderr}"
    return done


def same_behaviour(java_home: Path, original_cp: str, new_cp: str, main_class: str) -> None:
    before = java(java_home, "-cp", original_cp, main_class)
    after = java(java_home, "-cp", new_cp, main_class)
    assert before.returncode == 0, before.stderr
    assert (after.returncode, after.stdout, after.stderr) == (0, before.stdout, before.stderr), main_class


def one_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("peggy-jvm: error: "), stderr
    return lines[0]


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def default_file_mode() -> int:
    return 0o666 & ~_umask()


def default_dir_mode() -> int:
    return 0o777 & ~_umask()


@pytest.fixture(scope="module")
def classes(fixture_classes, tmp_path_factory) -> dict[str, Path]:
    """A private snapshot of the compiled fixtures (immune to a concurrent rebuild of fixtures/classes)."""
    snap = tmp_path_factory.mktemp("fixtures")
    out = {}
    for tree in ("release17", "release8", "old"):
        out[tree] = snap / tree
        shutil.copytree(fixture_classes[tree], out[tree])
    return out


# -- optimize a single class ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["IntArith", "Switches", "Exceptions"])
def test_class_to_an_explicit_class_file_runs_identically(java_home, classes, tmp_path, name):
    src = classes["release17"]
    target = tmp_path / "out" / f"{name}.class"
    done = run_cli("optimize", src / f"{name}.class", "-o", target, "--stage", "classfile")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert target.is_file() and sorted(p.name for p in target.parent.iterdir()) == [f"{name}.class"]
    assert read_class(target.read_bytes()).name == name
    same_behaviour(java_home, str(src), f"{target.parent}{os.pathsep}{src}", name)


@pytest.mark.parametrize("name", ["IntArith", "Switches", "Exceptions"])
def test_class_to_a_directory_runs_identically(java_home, classes, tmp_path, name):
    src = classes["release8"]
    outdir = tmp_path / "outdir"
    result = invoke("optimize", src / f"{name}.class", "-o", outdir, "--stage", "classfile")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in outdir.iterdir()) == [f"{name}.class"]
    same_behaviour(java_home, str(src), f"{outdir}{os.pathsep}{src}", name)
    # an existing directory is fine too, and a second run replaces the file
    again = invoke("optimize", src / f"{name}.class", "-o", outdir, "--stage", "classfile")
    assert again.exit_code == 0, again.output
    assert sorted(p.name for p in outdir.iterdir()) == [f"{name}.class"]


def test_class_default_output_is_beside_the_input(java_home, classes, tmp_path):
    src = classes["release17"]
    work = tmp_path / "in"
    work.mkdir()
    shutil.copy(src / "Exceptions.class", work / "Exceptions.class")
    done = run_cli("optimize", "in/Exceptions.class", "--stage", "classfile", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    target = work / "Exceptions-opt" / "Exceptions.class"
    assert sorted(p.name for p in work.iterdir()) == ["Exceptions-opt", "Exceptions.class"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["Exceptions.class"]
    assert "Exceptions-opt" in done.stdout
    # an ordinary file, not the private mode of a temporary file
    assert stat.S_IMODE(target.stat().st_mode) == default_file_mode()
    same_behaviour(java_home, str(src), f"{target.parent}{os.pathsep}{src}", "Exceptions")


# -- optimize a directory ------------------------------------------------------------------------------------
def test_directory_mirrors_the_input_and_every_program_behaves_the_same(java_home, classes, verifier, tmp_path):
    d = tmp_path / "d"
    shutil.copytree(classes["release8"], d)
    (d / "res").mkdir()
    (d / "res" / "notes.txt").write_bytes(b"not a class\r\n\x00\xff")
    done = run_cli("optimize", d, "--stage", "classfile")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "d-opt"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "d-opt"]
    before, after = files_under(d), files_under(out)
    marker = json.loads(after.pop(OUTPUT_MARKER))  # the bookkeeping that lets the next run replace it
    assert sorted(before) == sorted(after) == sorted(marker["files"])
    for name, data in before.items():
        if not name.endswith(".class"):
            assert after[name] == data, name
        else:
            assert read_class(after[name]).name == read_class(data).name
    assert stat.S_IMODE(out.stat().st_mode) == default_dir_mode()
    checked = verifier(out)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for name in ["IntArith", "Switches", "Exceptions", "Lambdas", "Invokes"]:
        same_behaviour(java_home, str(d), str(out), name)


def test_directory_given_as_dot_writes_beside_it(classes, tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    shutil.copy(classes["release8"] / "IntArith.class", d / "IntArith.class")
    done = run_cli("optimize", ".", "--stage", "classfile", cwd=d)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(files_under(tmp_path / "d-opt")) == [OUTPUT_MARKER, "IntArith.class"]


def test_jobs_2_gives_the_same_output_as_jobs_1(classes, tmp_path):
    src = classes["release17"]
    outputs, reports = [], []
    for jobs in (1, 2):
        target, report = tmp_path / f"j{jobs}", tmp_path / f"j{jobs}.json"
        done = run_cli("optimize", src, "-o", target, "--stage", "classfile", "--jobs", jobs, "--json", report)
        assert done.returncode == 0, done.stderr
        outputs.append(files_under(target))
        del outputs[-1][OUTPUT_MARKER]
        reports.append([{k: v for k, v in m.items() if k not in ("time_ms", "cpu_ms")}
                        for m in json.loads(report.read_text())["methods"]])
    assert sorted(outputs[0]) == sorted(outputs[1]) == sorted(files_under(src))
    for name in outputs[0]:
        assert outputs[0][name] == outputs[1][name], name
    assert reports[0] == reports[1]


# -- optimize a jar ------------------------------------------------------------------------------------------
def build_jar(path: Path, class_dir: Path, main_class: str) -> list[str]:
    """A jar with directory entries, a manifest, a resource (stored and deflated), a service file and classes."""
    manifest = f"Manifest-Version: 1.0\r\nMain-Class: {main_class}\r\nCreated-By: peggy-jvm tests\r\n\r\n"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("META-INF/"), b"")
        z.writestr("META-INF/MANIFEST.MF", manifest, compress_type=zipfile.ZIP_DEFLATED)
        z.writestr(zipfile.ZipInfo("META-INF/services/"), b"")
        z.writestr("META-INF/services/java.lang.Runnable", "Switches$Runner\n", compress_type=zipfile.ZIP_STORED)
        z.writestr(zipfile.ZipInfo("res/"), b"")
        z.writestr("res/greeting.txt", "hello\n" * 100, compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("res/raw.bin", bytes(range(256)), compress_type=zipfile.ZIP_STORED)
        for p in sorted(class_dir.glob("*.class")):
            z.write(p, p.name, compress_type=zipfile.ZIP_DEFLATED)
        return z.namelist()


def test_jar_keeps_every_entry_and_runs(java_home, classes, tmp_path):
    jar = tmp_path / "app.jar"
    names = build_jar(jar, classes["release8"], "Switches")
    done = run_cli("optimize", jar, "--stage", "classfile")
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    out = tmp_path / "app-opt.jar"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app-opt.jar", "app.jar"]
    assert stat.S_IMODE(out.stat().st_mode) == default_file_mode()
    with zipfile.ZipFile(jar) as zin, zipfile.ZipFile(out) as zout:
        assert zout.namelist() == names
        assert zout.testzip() is None
        for info in zin.infolist():
            new = zout.getinfo(info.filename)
            if info.filename.endswith(".class"):
                assert read_class(zout.read(new)).name == info.filename[:-len(".class")]
            else:
                assert zout.read(new) == zin.read(info), info.filename
                assert new.compress_type == info.compress_type, info.filename
                assert new.is_dir() == info.is_dir()
    before = java(java_home, "-jar", jar)
    after = java(java_home, "-jar", out)
    assert before.returncode == 0, before.stderr
    assert (after.returncode, after.stdout) == (0, before.stdout)


@pytest.mark.slow  # the slow tier: 6 s of CPU, over the fast tier's share (docs/ci.md, session 16)
def test_signed_jar_loses_its_signature_with_a_warning_and_runs(java_home, classes, tmp_path):
    content = tmp_path / "content"
    shutil.copytree(classes["release17"], content, ignore=shutil.ignore_patterns(".*"))
    (content / "res").mkdir()
    (content / "res" / "data.properties").write_text("answer=42\n")
    jar = tmp_path / "signed.jar"
    tool(java_home, "jar", "--create", "--file", jar, "--main-class", "IntArith", "-C", content, ".")
    store = tmp_path / "keys.p12"
    tool(java_home, "keytool", "-genkeypair", "-alias", "peggy", "-keyalg", "RSA", "-keysize", "2048",
         "-dname", "CN=peggy-jvm test", "-validity", "2", "-storetype", "PKCS12", "-keystore", store,
         "-storepass", "changeit", "-keypass", "changeit", "-noprompt")
    tool(java_home, "jarsigner", "-keystore", store, "-storepass", "changeit", jar, "peggy")
    with zipfile.ZipFile(jar) as z:
        names = z.namelist()
        manifest = z.read("META-INF/MANIFEST.MF")
    signature = [n for n in names if n.upper().endswith((".SF", ".RSA"))]
    assert sorted(s.upper() for s in signature) == ["META-INF/PEGGY.RSA", "META-INF/PEGGY.SF"]
    assert b"Digest" in manifest

    out = tmp_path / "out.jar"
    done = run_cli("optimize", jar, "-o", out, "--stage", "classfile")
    assert done.returncode == 0, done.stderr
    warnings = done.stderr.splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("peggy-jvm: warning: "), done.stderr
    assert all(s in warnings[0] for s in signature)
    with zipfile.ZipFile(out) as z:
        assert z.namelist() == [n for n in names if n not in signature]
        assert z.read("META-INF/MANIFEST.MF") == manifest  # digests kept: harmless without the .SF
        assert z.read("res/data.properties") == b"answer=42\n"
    before = java(java_home, "-jar", jar)
    after = java(java_home, "-jar", out)
    assert before.returncode == 0, before.stderr
    assert (after.returncode, after.stdout) == (0, before.stdout)


# -- the JSON report -----------------------------------------------------------------------------------------
NATIVE_SRC = """
public abstract class NativeAbstract {
    native int nat(int x);
    abstract int abs();
    static native void snat();
    int plain(int x) { return x > 0 ? x + 1 : -x; }
}
"""


def test_json_report(java_home, classes, tmp_path):
    d = tmp_path / "d"
    shutil.copytree(classes["release17"], d, ignore=shutil.ignore_patterns(".*"))
    (tmp_path / "NativeAbstract.java").write_text(NATIVE_SRC)
    tool(java_home, "javac", "-d", d, tmp_path / "NativeAbstract.java")
    report_path = tmp_path / "reports" / "report.json"
    result = invoke("optimize", d, "-o", tmp_path / "out", "--stage", "classfile", "--json", report_path)
    assert result.exit_code == 0, result.output
    report = json.loads(report_path.read_text())
    assert report["stage"] == "classfile"

    expected = {}  # (class, name, descriptor) -> has code
    for p in d.glob("*.class"):
        cf = read_class(p.read_bytes())
        for m in cf.methods:
            expected[(cf.name, m.name, m.descriptor)] = m.code_attribute() is not None
    rows = report["methods"]
    assert sorted((r["class"], r["name"], r["descriptor"]) for r in rows) == sorted(expected)
    for r in rows:
        assert set(r) >= METHOD_KEYS, r
        assert r["status"] in STATUSES, r
        assert r["reason"] is None or isinstance(r["reason"], str)
        assert r["cost_before"] is None and r["cost_after"] is None  # no cost model at this stage
        assert isinstance(r["time_ms"], dict)
        assert all(isinstance(v, (int, float)) and v >= 0 for v in r["time_ms"].values())
        if expected[(r["class"], r["name"], r["descriptor"])]:
            assert r["bytes_before"] > 0 and r["bytes_after"] > 0, r
            assert "classfile" in r["time_ms"]
        else:
            assert r["status"] == "unchanged" and r["reason"], r
        if r["status"] == "fallback":
            assert r["reason"], r
    by_name = {(r["class"], r["name"]): r for r in rows}
    for name in ("nat", "abs", "snat"):
        assert by_name[("NativeAbstract", name)]["status"] == "unchanged"
    assert by_name[("NativeAbstract", "plain")]["status"] == "rewritten"

    summary = report["summary"]
    for status in STATUSES:
        assert summary[status] == sum(r["status"] == status for r in rows), status
    assert summary["methods"] == len(rows)
    assert summary["classes"] == len(list(d.glob("*.class")))
    # the same counts are printed on stdout
    assert f"{len(rows)} methods: {summary['rewritten']} rewritten" in result.stdout


# -- classes written back unchanged --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["Lambdas$Thrower", "Sealed17$Shape", "Interfaces17$Loud", "Records17$HasArea"])
def test_a_class_without_code_is_written_byte_identical(classes, tmp_path, name):
    src = classes["release17"] / f"{name}.class"
    target = tmp_path / f"{name}.class"
    report = tmp_path / "r.json"
    result = invoke("optimize", src, "-o", target, "--stage", "classfile", "--json", report)
    assert result.exit_code == 0, result.output
    assert target.read_bytes() == src.read_bytes()
    rows = json.loads(report.read_text())["methods"]
    assert all(r["status"] == "unchanged" for r in rows)


def test_a_class_whose_methods_are_rewritten_identically_is_loadable(classes, verifier, tmp_path):
    src = classes["release17"]
    candidates = ["Exceptions$Res", "Inheritance$Shape", "Records17$Point", "Switches$Color", "Invokes$Greeter",
                  "Fields$Derived"]
    identical = []
    for name in candidates:
        out = tmp_path / name.replace("$", "_")
        report = tmp_path / f"{name}.json"
        result = invoke("optimize", src / f"{name}.class", "-o", out, "--stage", "classfile", "--json", report)
        assert result.exit_code == 0, result.output
        assert any(r["status"] == "rewritten" for r in json.loads(report.read_text())["methods"])
        original, new = src / f"{name}.class", out / f"{name}.class"
        a, b = read_class(original.read_bytes()), read_class(new.read_bytes())
        assert [m.name for m in a.methods] == [m.name for m in b.methods]
        checked = verifier(out, src)
        assert checked.returncode == 0 and "verify_errors=0" in checked.stdout, checked.stdout + checked.stderr
        assert "verified=1" in checked.stdout.splitlines()[-1]
        if all((m.code_attribute() and m.code_attribute().data) == (n.code_attribute() and n.code_attribute().data)
               for m, n in zip(a.methods, b.methods)):
            identical.append(name)
            # nothing changed: the pipeline's invariant is a byte-identical class
            assert new.read_bytes() == original.read_bytes(), name
    assert identical, "no candidate class was re-encoded identically; pick others"


# -- stages and usage ----------------------------------------------------------------------------------------
def test_full_stage_writes_its_output_and_reports_costs(classes, tmp_path):
    """Every stage is available; the full stage writes the class and the report carries costs per method."""
    target = tmp_path / "out"
    report = tmp_path / "r.json"
    done = run_cli("optimize", classes["release17"] / "IntArith.class", "-o", target, "--stage", "full",
                   "--json", report)
    assert done.returncode == 0, done.stderr
    assert (target).exists()
    rows = json.loads(report.read_text())["methods"]
    assert json.loads(report.read_text())["stage"] == "full"
    assert all(r["cost_before"] is not None for r in rows if r["bytes_before"] and "handlers" not in r["reason"])


def test_unknown_option_and_bad_values_exit_2(classes, tmp_path):
    cls = classes["release17"] / "IntArith.class"
    for args in (["optimize", cls, "--no-such-option"], ["optimize", cls, "--stage", "bogus"],
                 ["optimize", cls, "--jobs", "0"], ["optimize"], ["frobnicate"], ["disasm"]):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stdout == "", args
        line = one_error_line(result.stderr)  # usage errors are one line like every other error
        assert line.startswith("peggy-jvm: error: usage: "), (args, line)
    assert not (classes["release17"] / "IntArith-opt").exists()
    done = run_cli("optimize", cls, "--no-such-option")
    assert done.returncode == 2 and "no such option" in done.stderr.lower() and "Traceback" not in done.stderr
    assert one_error_line(done.stderr).startswith("peggy-jvm: error: usage: ")


def test_version_and_help(classes):
    assert invoke("--version").exit_code == 0
    helped = invoke("optimize", "--help")
    assert helped.exit_code == 0
    for option in ("--stage", "--json", "--classpath", "--jobs", "-o"):
        assert option in helped.stdout


# Runs the CLI in a fresh interpreter and names, on stderr's last line, the heavy modules it imported.
_IMPORT_PROBE = """
import sys
from peggy_jvm.cli import main
try:
    main(args=sys.argv[1:], prog_name="peggy-jvm")
finally:
    heavy = ("networkx", "pysat", "rich", "distributed", "peggy_jvm.pipeline", "peggy_jvm.codecost",
             "peggy_jvm.rules", "peggy_jvm.cache")
    sys.stderr.write("\\nIMPORTED " + " ".join(sorted(m for m in sys.modules if m.startswith(heavy))) + "\\n")
"""


def test_help_version_and_usage_errors_do_not_load_the_optimizer(classes, tmp_path):
    """The optimizer (its stages, networkx, the solver, rich, the cache) is imported by the commands that run
    it: ``--help``, ``--version`` and a usage error start in a tenth of the time (0.05 s of CPU instead of 0.4;
    the tests start the CLI hundreds of times). An eager import put back in ``cli.py`` fails here."""
    cls = classes["release17"] / "IntArith.class"
    for args, status in ((["--version"], 0), (["--help"], 0), (["optimize", "--help"], 0),
                         (["validate", "--help"], 0), (["show", "--help"], 0),
                         (["optimize", cls, "--stage", "bogus"], 2)):
        done = subprocess.run([sys.executable, "-c", _IMPORT_PROBE, *map(str, args)], capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=120)
        assert done.returncode == status, (args, done.stderr)
        assert done.stderr.splitlines()[-1] == "IMPORTED ", (args, done.stderr.splitlines()[-1])
    # the probe sees what a command that runs the optimizer imports
    done = subprocess.run([sys.executable, "-c", _IMPORT_PROBE, "optimize", str(cls), "--stage", "classfile",
                           "-o", str(tmp_path / "IntArith.class")],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 0, done.stderr
    assert {"networkx", "peggy_jvm.pipeline"} <= set(done.stderr.splitlines()[-1].split()[1:]), done.stderr


# -- disasm --------------------------------------------------------------------------------------------------
def _method_headers(text: str) -> list[str]:
    """The method header lines of a listing: ``  [flags] name(desc)ret``."""
    return [line.strip().split()[-1] for line in text.splitlines()
            if line.startswith("  ") and not line.startswith("   ") and "(" in line]


def _branching_method(cf) -> str:
    for m in cf.methods:
        attr = m.code_attribute()
        if attr is None:
            continue
        code = read_code(attr.data, cf.pool)
        if any(a.name == "StackMapTable" for a in code.attributes) and any(
                OPERAND_OF[i.opcode] in (Operand.BRANCH2, Operand.BRANCH4) for i in decode(code.code)):
            return m.name
    raise AssertionError(f"{cf.name} has no branching method")


def _handler_method(cf) -> str:
    for m in cf.methods:
        attr = m.code_attribute()
        if attr is not None and read_code(attr.data, cf.pool).exception_table:
            return m.name
    raise AssertionError(f"{cf.name} has no exception handler")


def test_disasm_lists_every_method_with_frames_and_handlers(classes):
    path = classes["release17"] / "Exceptions.class"
    cf = read_class(path.read_bytes())
    done = run_cli("disasm", path)
    assert done.returncode == 0, done.stderr
    headers = _method_headers(done.stdout)
    assert headers == [m.name + m.descriptor for m in cf.methods]
    assert "frame:" in done.stdout
    assert "catch [" in done.stdout


def test_disasm_method_filter_frames_and_catch(classes):
    branches = classes["release17"] / "Branches.class"
    cf = read_class(branches.read_bytes())
    name = _branching_method(cf)
    result = invoke("disasm", branches, "--method", name)
    assert result.exit_code == 0, result.output
    headers = _method_headers(result.stdout)
    assert headers and all(h.startswith(name + "(") for h in headers), headers
    assert len(headers) == sum(m.name == name for m in cf.methods)
    assert "frame:" in result.stdout
    others = {m.name for m in cf.methods} - {name}
    assert not any(h.split("(")[0] in others for h in headers)

    exceptions = classes["release17"] / "Exceptions.class"
    ecf = read_class(exceptions.read_bytes())
    handler = _handler_method(ecf)
    result = invoke("disasm", exceptions, "--method", handler)
    assert result.exit_code == 0, result.output
    assert "catch [" in result.stdout
    # name+descriptor selects exactly one method
    m = next(m for m in ecf.methods if m.name == handler)
    exact = invoke("disasm", exceptions, "--method", m.name + m.descriptor)
    assert exact.exit_code == 0 and _method_headers(exact.stdout) == [m.name + m.descriptor]


def test_disasm_of_a_rewritten_class_shows_recomputed_frames(classes, tmp_path):
    out = tmp_path / "Branches.class"
    assert invoke("optimize", classes["release8"] / "Branches.class", "-o", out, "--stage", "classfile"
                  ).exit_code == 0
    result = invoke("disasm", out)
    assert result.exit_code == 0, result.output
    assert "frame:" in result.stdout


def test_disasm_missing_method_and_bad_input_exit_2(classes, tmp_path):
    path = classes["release17"] / "IntArith.class"
    result = invoke("disasm", path, "--method", "noSuchMethod")
    assert result.exit_code == 2
    line = one_error_line(result.stderr)
    assert str(path) in line and "noSuchMethod" in line
    assert result.stdout == ""
    jar = tmp_path / "a.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.write(path, "IntArith.class")
    result = invoke("disasm", jar)
    assert result.exit_code == 2 and str(jar) in one_error_line(result.stderr)
    result = invoke("disasm", tmp_path / "Missing.class")
    assert result.exit_code == 2 and "Missing.class" in one_error_line(result.stderr)


# -- show --------------------------------------------------------------------------------------------------
def test_show_prints_the_ir_and_writes_dot(classes, tmp_path):
    dot = tmp_path / "sieve.dot"
    result = invoke("show", classes["release17"] / "Kernels.class", "--method", "sieve", "--dot", dot)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "method Kernels.sieve(I)[I (l0i: int)"
    assert "  B0:  // offset 0" in lines and any(line.strip().startswith("if ") for line in lines)
    text = dot.read_text()
    assert text.startswith('digraph "sieve" {') and "B0 -> " in text
    # Class.name selects within a directory; an absent method is a one-line error
    assert invoke("show", classes["release17"], "--method", "Kernels.sieve").stdout.splitlines()[0] == lines[0]
    missing = invoke("show", classes["release17"], "--method", "Kernels.nope")
    assert missing.exit_code == 2 and one_error_line(missing.stderr).endswith("no method 'Kernels.nope'")


def test_show_peg_and_epeg(classes, tmp_path):
    """--peg prints the PEG (and DOT with dashed theta back edges); --epeg saturates it with the axioms, so the
    class of Kernels.xorshift's shifts holds more than one node; a broken --axioms file is a one-line error."""
    dot = tmp_path / "trace.dot"
    peg = invoke("show", classes["release17"] / "Kernels.class", "--method", "trace", "--peg", "--dot", dot)
    assert peg.exit_code == 0, peg.output
    lines = peg.stdout.splitlines()
    assert lines[0].startswith("peg Kernels.trace([[D)D: ") and any("theta[1]" in line for line in lines)
    assert any(line.lstrip().startswith("n") and "= return(" in line for line in lines)
    assert "style=dashed, constraint=false, label=next" in dot.read_text()
    epeg = invoke("show", classes["release17"] / "IntArith.class", "--method", "mul", "--epeg")
    assert epeg.exit_code == 0, epeg.output
    assert epeg.stdout.splitlines()[0].startswith("e-peg: ")
    assert any("mul.i(" in line and " | " in line for line in epeg.stdout.splitlines())  # commuted at least
    assert "saturated" in epeg.stdout
    bad = tmp_path / "bad.ax"
    bad.write_text("rule broken: (add.i ?x\n")
    failed = invoke("show", classes["release17"] / "IntArith.class", "--method", "mul", "--epeg", "--axioms", bad)
    assert failed.exit_code == 2 and "bad.ax:2:1" in one_error_line(failed.stderr)


def test_show_reports_a_method_it_cannot_lift_in_one_line(tmp_path):
    """A version-49 class whose subroutine pops its return address instead of storing it: the lifter
    refuses to inline it, and show says so in one line."""
    from peggy_jvm.classfile import opcodes as op
    from peggy_jvm.classfile.assembler import Insn, Label, assemble
    from peggy_jvm.classfile.constpool import ConstantPool
    from peggy_jvm.classfile.model import Access, Attribute, ClassFile, MethodInfo
    from peggy_jvm.classfile.recode import build_code_attribute
    from peggy_jvm.classfile.writer import write_class

    pool = ConstantPool()
    cf = ClassFile(0, 49, pool, Access.PUBLIC, pool.add_class("Odd"), pool.add_class("java/lang/Object"),
                   [], [], [], [])
    m = MethodInfo(Access.STATIC, pool.add_utf8("m"), pool.add_utf8("()V"), [], "m", "()V")
    sub = Label()
    asm = assemble([Insn(op.JSR, target=sub), Insn(op.RETURN), sub, Insn(0x57), Insn(op.RETURN)])
    body = build_code_attribute(cf, m, asm.instructions, asm.code, asm.exception_table, [], None)
    m.attributes.append(Attribute(pool.add_utf8("Code"), "Code", body))
    cf.methods.append(m)
    (tmp_path / "Odd.class").write_bytes(write_class(cf))
    result = invoke("show", tmp_path / "Odd.class", "--method", "m")
    assert result.exit_code == 2
    line = one_error_line(result.stderr)
    assert "cannot lift" in line and "return address" in line
