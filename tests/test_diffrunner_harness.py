"""The differential runner (tests/java/DiffRunner.java): a call's timeout counts its CPU time, and when the runner
dies, the failure says why.

A call times out on its thread's CPU time (with a wall-clock cap of 20 times it for a call that blocks), so a
call that returns at once does not time out on a loaded machine where it waits for a core (test_interp.py's
runner test did at load 16-35 with a wall-clock timeout); a call that sleeps uses no CPU and shows the
difference on any machine.

CI once saw ``DiffRunner answered 0 of 404 calls (exit 1)`` with an empty stderr (docs/ci.md, session 14). That is
what any error thrown inside the harness itself (not by the code under test, whose errors are call outcomes) did:
it escaped ``main`` while ``System.err`` was still the call's captured stream, so its trace went nowhere, and the
answers so far were still in the output buffer. An OutOfMemoryError while parsing an argument or finding a method
(a timed-out call's thread can still hold the heap) is one such error. The harness now writes the answers so far,
names the call and the error on the real stderr and exits 3; a JVM ended by the code under test (System.exit) says
so too. ``difftest.run_jvm`` runs a failed batch once more and then raises with that stderr (or, for running out
of memory, splits the batch: see ``_run_lines``).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import javac_command
from support.javac_cache import run_javac

sys.path.insert(0, str(Path(__file__).resolve().parent))

import difftest as dt  # noqa: E402

SOURCE = """public class Sum {
  static int one() { return 1; }
  static int len(int[] a) { return a == null ? -1 : a.length; }
  static int quit(int status) { System.out.println("bye"); System.exit(status); return 0; }
  static int nap(int ms) throws InterruptedException { Thread.sleep(ms); return ms; }
  static int spin(int a) { while (a != 0) { a |= 1; } return a; }
}
"""


@pytest.fixture(scope="module")
def classes(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("diffrunner-failures")
    (out / "Sum.java").write_text(SOURCE)
    run_javac([*javac_command(java_home), "-d", str(out), str(out / "Sum.java")], check=True)
    return out


def test_an_error_in_the_harness_itself_is_reported_with_its_call_and_the_answers_before_it(java_home: Path,
                                                                                          classes: Path) -> None:
    # an array argument of three million elements parsed in a 64 MB heap: OutOfMemoryError inside the harness
    # (splitting the argument text), outside any call's outcome
    lines = "Sum one ()I\nSum len ([I)I [I:" + ",".join(["7"] * 3_000_000) + "\n"
    proc = subprocess.run([str(java_home / "bin" / "java"), "-Xmx64m", "-cp",
                           f"{classes}:{dt.harness_dir(java_home)}", "DiffRunner", "--batch"],
                          input=lines, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout == "RET 1\n"  # the call answered before the failure is not lost
    first = proc.stderr.splitlines()[0]
    assert first.startswith("DiffRunner: harness failure after 1 answered calls, in call: Sum len ([I)I [I:7,7")
    assert len(first) < 400, len(first)  # the call's line is cut, not megabytes of arguments
    assert "java.lang.OutOfMemoryError" in proc.stderr


def test_a_call_that_ends_the_jvm_is_named_in_the_error(java_home: Path, classes: Path) -> None:
    calls = [dt.Call("Sum", "one", "()I", ()), dt.Call("Sum", "quit", "(I)I", (1,)), dt.Call("Sum", "one", "()I", ())]
    with pytest.raises(RuntimeError) as failed:
        dt.run_jvm(classes, calls, java_home=java_home, timeout_ms=60_000)
    message = str(failed.value)
    assert "DiffRunner answered 1 of 3 calls (exit 1)" in message, message
    assert "the JVM exited during call 1 (System.exit or halt by the code under test?): Sum quit (I)I 1" in message


def test_a_call_s_timeout_counts_its_cpu_time_and_a_blocked_call_stops_at_the_wall_clock_cap(java_home: Path,
                                                                                            classes: Path) -> None:
    # a short timeout: the test waits out the cap (the largest wall-clock wait of the fast tier at 300 ms: 6 s)
    calls = [dt.Call("Sum", "nap", "(I)I", (450,)),  # three times its timeout asleep: no CPU time
             dt.Call("Sum", "spin", "(I)I", (1,)),  # spins: its CPU time reaches the timeout
             dt.Call("Sum", "one", "()I", ()),  # a fresh thread after the stopped one
             dt.Call("Sum", "nap", "(I)I", (60_000,))]  # blocked past the cap, 20 times its timeout (3 s)
    results = dt.run_jvm(classes, calls, java_home=java_home, timeout_ms=150)
    assert [str(r) for r in results] == ["RET 450", "TIMEOUT", "RET 1", "TIMEOUT"]
