"""``validate``'s JVM harness (peggy_jvm/validate/Harness.java) captures everything a run prints, also what it
prints before the harness's own thread gets a core back after starting it.

The capture used to be installed only when the harness began to wait for the run, after starting its thread: on a
loaded machine a call that printed at once printed to the harness's real stdout, and its outcome said it printed
nothing (test_validate.py's counterexample for the ``hello`` mutant once read "returns" where it reads "prints").
Here the harness's thread sleeps between starting the run and waiting for it, as a descheduled one would.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import javac_command
from support.javac_cache import run_javac

from peggy_jvm.validate.counterexample import HARNESS_SOURCE

PRINTS = "public class P { static void hello(int x) { System.out.println(x); } }\n"

# the harness's own calls, in the order its main loop makes them for one version of one call
PROBE = """public class CaptureProbe {
    public static void main(String[] argv) throws Exception {
        String[] f = {"P", "P", "hello", "(I)V", "(I)V", "7"};
        Harness.Run run = Harness.start(Harness.urls(argv[0]), "P", "(I)V", f);
        Thread.sleep(1000);  // the harness's thread descheduled right after starting the run
        run.await(10_000);
        System.out.println("OUTCOME " + run.outcome());
    }
}
"""


def test_what_a_run_prints_before_the_harness_waits_for_it_is_captured(java_home: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "P.java").write_text(PRINTS)
    (src / "CaptureProbe.java").write_text(PROBE)
    subject, harness = tmp_path / "subject", tmp_path / "harness"
    run_javac([*javac_command(java_home), "-d", str(subject), str(src / "P.java")], check=True)
    run_javac([*javac_command(java_home), "-d", str(harness), str(HARNESS_SOURCE), str(src / "CaptureProbe.java")],
              check=True)
    proc = subprocess.run([str(java_home / "bin" / "java"), "-cp", str(harness), "CaptureProbe", str(subject)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # "7\n" in the outcome (hex), and nothing printed around the harness
    assert proc.stdout == "OUTCOME R N ;args=7 ;out=370a\n", proc.stdout
