"""``PEGGY_TEST_CPU_LOG`` (tests/support/cputime.py): each test phase's CPU seconds, the children it waited for
included, appended to the log."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

_SAMPLE = '''
import subprocess, sys, time

def test_spins_in_a_child():
    subprocess.run([sys.executable, "-c", "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.3: pass"],
                   check=True)

def test_idle():
    time.sleep(0.3)
'''


def _run(tmp_path: Path, log: Path) -> None:
    (tmp_path / "test_sample.py").write_text(_SAMPLE)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    env["PEGGY_TEST_CPU_LOG"] = str(log)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "support.cputime", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(tmp_path / "test_sample.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_each_phase_is_logged_with_its_childrens_cpu(tmp_path):
    log = tmp_path / "cpu.log"
    _run(tmp_path, log)
    lines = [line.split("\t") for line in log.read_text().splitlines()]
    rows = {(phase, node.split("::")[-1]): (float(cpu), programs) for cpu, phase, node, programs, *_ in lines}
    assert set(rows) == {(p, t) for p in ("setup", "call", "teardown") for t in ("test_spins_in_a_child", "test_idle")}
    assert rows["call", "test_spins_in_a_child"][0] >= 0.25  # the child's CPU, waited for, is counted
    assert rows["call", "test_idle"][0] < 0.2  # sleeping is not CPU
    # and the programs each phase started, by executable name: the child, once
    python = Path(sys.executable).name
    assert {key: programs for key, (_, programs) in rows.items() if programs} == {
        ("call", "test_spins_in_a_child"): f"{python}:1"}
    # then where it ran and when, for replaying a run's schedule: the worker ("main" without xdist), the phase's
    # start and end (seconds since the epoch): the idle test's call spans its 0.3 s asleep
    assert {worker for _, _, _, _, worker, _, _ in lines} == {"main"}
    spans = {(phase, node.split("::")[-1]): float(end) - float(start) for _, phase, node, _, _, start, end in lines}
    assert 0.29 <= spans["call", "test_idle"] < 5  # times written to the millisecond
    assert all(float(lines[i][5]) <= float(lines[i + 1][5]) for i in range(len(lines) - 1))

