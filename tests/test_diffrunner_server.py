"""The DiffRunner server (``DiffRunner --serve``, ``difftest.MODE == "server"``): one JVM per test process answers
every batch of calls, and each batch sees what a JVM of its own would give it.

What a fresh JVM per batch gave for free, the server must give by construction or end itself: the classes under
test loaded, verified and initialized anew for each batch (their static fields and ``<clinit>`` output the
batch's own), and after a batch that may have left the JVM itself changed (a call stopped at its timeout, an
Error outcome such as VerifyError, a thread left running, a system property changed) the next batch gets a new
JVM. A batch whose JVM dies (System.exit by the code under test) is run again and reported as before. And the
answers are the per-batch JVM's: a sample of the fixtures' static methods gives the same transcript both ways.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import javac_command
from peggy_jvm.classfile.model import Access
from peggy_jvm.classfile.reader import read_class
from support.javac_cache import run_javac

sys.path.insert(0, str(Path(__file__).resolve().parent))

import difftest as dt  # noqa: E402

SOURCE = """public class Served {
  static int counter;
  static { System.out.println("clinit"); }
  static int next() { return ++counter; }
  static int spin(int a) { while (a != 0) { a |= 1; } return a; }
  static int quit(int status) { System.exit(status); return 0; }
  static int leaveThread() {
    Thread t = new Thread(() -> { try { Thread.sleep(600_000); } catch (InterruptedException e) { } });
    t.setDaemon(true);
    t.start();
    return 1;
  }
  static int setProperty() { System.setProperty("served.by", "a call"); return 1; }
  static int one() { return 77; }
  static void echo(String s) { System.out.print(s); }
  static String prop() { return System.getProperty("served.late", "no"); }
  static int mark() { System.setProperty("served.late", "ran"); return 1; }
  // holds the calling worker thread (suspended) once it waits for its next call, for ms milliseconds: what a
  // worker thread starved on a loaded machine does (Thread.suspend works up to JDK 19)
  @SuppressWarnings("removal")
  static int stall(int ms) {
    Thread worker = Thread.currentThread();
    Thread h = new Thread(() -> {
      while (worker.getState() != Thread.State.WAITING) Thread.onSpinWait();
      worker.suspend();
      try { Thread.sleep(ms); } catch (InterruptedException e) { }
      worker.resume();
    });
    h.setDaemon(true);
    h.start();
    return 1;
  }
}
"""


@pytest.fixture(scope="module")
def classes(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("diffrunner-server")
    (out / "Served.java").write_text(SOURCE)
    run_javac([*javac_command(java_home), "-d", str(out), str(out / "Served.java")], check=True)
    # a copy whose one() fails verification: its bipush 77 (0x10 0x4d) before ireturn (0xac) made aconst_null,
    # nop (0x01 0x00)
    broken = out / "broken"
    broken.mkdir()
    data = (out / "Served.class").read_bytes()
    assert data.count(b"\x10\x4d\xac") == 1
    (broken / "Served.class").write_bytes(data.replace(b"\x10\x4d\xac", b"\x01\x00\xac"))
    return out


def _call(name: str, desc: str = "()I", args: tuple = ()) -> dt.Call:
    return dt.Call("Served", name, desc, args)


def _stats() -> dict[str, int]:
    return dict(dt.SERVER_STATS)


def test_a_batch_s_statics_and_class_initialization_are_its_own(java_home: Path, classes: Path) -> None:
    assert dt.MODE == "server"
    dt.run_jvm(classes, [_call("one")], java_home=java_home)  # a server is running
    before = _stats()
    first = dt.run_jvm(classes, [_call("next"), _call("next")], java_home=java_home)
    second = dt.run_jvm(classes, [_call("next"), _call("next")], java_home=java_home)
    # each batch initializes Served again (its <clinit> prints in the batch's first call) and counts from 0
    assert [str(r) for r in first] == ["RET 1 out='clinit\\n'", "RET 2"]
    assert [str(r) for r in second] == ["RET 1 out='clinit\\n'", "RET 2"]
    after = _stats()
    assert after["batches"] == before["batches"] + 2
    assert after["starts"] == before["starts"]  # the same JVM answered both


@pytest.mark.parametrize("call, reason", [
    (_call("spin", "(I)I", (1,)), "timeout"),
    (_call("leaveThread"), "thread"),
    (_call("setProperty"), "property"),
])
def test_a_batch_that_may_change_the_jvm_ends_the_server_and_the_next_batch_is_answered(
        java_home: Path, classes: Path, call: dt.Call, reason: str) -> None:
    dt.run_jvm(classes, [_call("one")], java_home=java_home)
    before = _stats()
    results = dt.run_jvm(classes, [call], java_home=java_home, timeout_ms=300)
    assert results[0].kind == ("TIMEOUT" if reason == "timeout" else "RET"), results
    assert _stats()["exits"] == before["exits"] + 1, reason
    # the next batch: a new JVM, statics fresh, and the property gone with the old JVM
    again = dt.run_jvm(classes, [_call("next")], java_home=java_home)
    assert [str(r) for r in again] == ["RET 1 out='clinit\\n'"]
    assert _stats()["starts"] == before["starts"] + 1


def test_a_class_failing_verification_is_reported_as_by_a_batch_jvm_and_ends_the_server(
        java_home: Path, classes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [_call("next"), _call("one")]
    exits = _stats()["exits"]
    served = dt.run_jvm(classes / "broken", calls, java_home=java_home)
    exits = _stats()["exits"] - exits
    monkeypatch.setattr(dt, "MODE", "process")
    alone = dt.run_jvm(classes / "broken", calls, java_home=java_home)
    assert [str(r) for r in served] == [str(r) for r in alone] == ["THROW java/lang/VerifyError"] * 2
    assert exits == 1  # a LinkageError outcome: the next batch gets a new JVM


def test_a_batch_whose_jvm_is_ended_is_reported_and_the_next_batch_is_answered(java_home: Path,
                                                                             classes: Path) -> None:
    dt.run_jvm(classes, [_call("one")], java_home=java_home)  # a server is running (whatever ran before)
    before = _stats()
    with pytest.raises(RuntimeError) as failed:
        dt.run_jvm(classes, [_call("next"), _call("quit", "(I)I", (4,)), _call("one")], java_home=java_home)
    message = str(failed.value)
    assert "DiffRunner answered 1 of 3 calls (exit 4)" in message, message
    assert "the JVM exited during call 1 (System.exit or halt by the code under test?): Served quit (I)I 4" \
        in message
    assert [str(r) for r in dt.run_jvm(classes, [_call("one")], java_home=java_home)] == ["RET 77 out='clinit\\n'"]
    # the batch twice (the running server, then a new one, each ended by it), then the next batch in a new one
    assert _stats()["starts"] == before["starts"] + 2


def test_the_server_answers_a_fixture_sample_as_a_jvm_per_batch_does(java_home: Path, fixture_classes,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # every static method with generatable parameters of a few fixture classes, in two batches (the second
    # after the first in the same server), against a JVM per batch
    tree = Path(fixture_classes["release17"])
    batches: list[list[dt.Call]] = [[], []]
    for k, name in enumerate(["Kernels", "StringsBoxing", "FloatDouble", "LongArith"]):
        path = tree / f"{name}.class"
        if not path.is_file():
            continue
        cf = read_class(path.read_bytes())
        for m in cf.methods:
            if not m.access & Access.STATIC or m.code_attribute() is None or m.name in ("main", "<clinit>"):
                continue
            params, _ = dt.parse_descriptor(m.descriptor)
            if all(d[0] in "ZBCSIJFD" or d == "Ljava/lang/String;" or
                   (d[0] == "[" and d.lstrip("[")[0] in "ZBCSIJFD") for d in params):
                batches[k % 2].extend(dt.Call(cf.name, m.name, m.descriptor, args)
                                      for args in dt.generate_args(m.descriptor, count=3, seed=5))
    assert min(len(b) for b in batches) > 30, [len(b) for b in batches]
    served = [dt.run_jvm(tree, b, java_home=java_home, timeout_ms=3000) for b in batches]
    monkeypatch.setattr(dt, "MODE", "process")
    alone = [dt.run_jvm(tree, b, java_home=java_home, timeout_ms=3000) for b in batches]
    for batch, s, a in zip(batches, served, alone):
        differ = [(str(c), str(x), str(y)) for c, x, y in zip(batch, s, a)
                  if not dt.same_result(x, y) and "TIMEOUT" not in (x.kind, y.kind)]
        assert differ == []
        assert sum("TIMEOUT" not in (x.kind, y.kind) for x, y in zip(s, a)) > 0.9 * len(batch)


def test_the_verifier_s_server_answers_as_a_verifier_jvm_of_its_own(verifier, classes: Path, fixture_classes,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # conftest's verifier runs VerifyClasses --serve: the same output and exit status as the command it stands
    # for, for a class failing verification after a tree that verifies (one server, one after the other), and
    # the runs start no JVM of their own (at most the server, if no test of this process started it yet)
    import subprocess
    trees = [(Path(fixture_classes["release17"]), 0), (classes / "broken", 1), (classes, 0)]
    started: list[object] = []
    init = subprocess.Popen.__init__

    def counting(self: subprocess.Popen, args: object, *rest: object, **kwargs: object) -> None:
        started.append(args)
        init(self, args, *rest, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(subprocess.Popen, "__init__", counting)
        served = [verifier(path) for path, _ in trees]
    assert len(started) <= 1, started
    for (path, code), run in zip(trees, served):
        alone = subprocess.run(run.args, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
        assert (run.returncode, run.stdout, run.stderr) == (alone.returncode, alone.stdout, alone.stderr)
        assert run.returncode == code, run.stdout
    assert "VERIFY Served: java.lang.VerifyError" in verifier(classes / "broken").stdout


def test_a_call_given_up_on_before_its_worker_took_it_never_runs(java_home: Path, classes: Path) -> None:
    # The mechanism of session 17's wrong answer (Sync.blockOnClass(0) answered with the static state a timed-out
    # Sync.staticIncr left): on a loaded machine the worker thread may not take its next call before the call's
    # wall-clock timeout. The harness then stopped that idle thread, which killed it in the executor's queue
    # instead of the call; the executor made a new thread and it ran the "timed out" call afterwards, against
    # the class loader the harness held by then (a later group's). Here Served.stall holds the worker while the
    # harness makes 3,000 resets (the skipped calls' groups) and then hands it mark(): mark() must time out and
    # never run, so prop() still reads "no" (before the fix: "ran" in 5 of 6 tries). stall() and prop() each
    # follow one() in their group, so that loading Served is not part of them. (The server's Runner is a batch
    # JVM's: one mode is enough.)
    filler = [dt.Call("Served", "one", "()I", (), group=k) for k in range(3000)]
    calls = [dt.Call("Served", "one", "()I", (), group="a"), dt.Call("Served", "stall", "(I)I", (8000,), group="a"),
             *filler, _call("mark"),
             dt.Call("Served", "one", "()I", (), group="b"),
             dt.Call("Served", "prop", "()Ljava/lang/String;", (), group="b")]
    valid = []
    for attempt in range(5):  # on a loaded machine a call of the set-up may itself time out: tried again
        results = dt.run_jvm(classes, calls, java_home=java_home, timeout_ms=150,
                             skip=frozenset(range(2, 2 + len(filler))))
        made = [str(results[1]), str(results[-3]), str(results[-1])]
        if made[0] == "RET 1" and made[1] == "TIMEOUT" and "TIMEOUT" not in (results[-2].kind, results[-1].kind):
            valid.append(made)  # the worker was held and mark() handed to it: the case under test
        if len(valid) == 2:
            break
    assert len(valid) == 2, "the worker could not be held while mark() was handed to it"
    assert valid == [["RET 1", "TIMEOUT", "RET s:no"]] * 2
