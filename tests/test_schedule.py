"""The work units of a ``--dist loadfile`` run (tests/support/schedule.py): a file is one unit (its module fixture
computed once) unless it is split, the tests of a split file go to their own units, and the costliest unit is
handed out first (pytest-xdist's own order, most tests first, started the heavy few-test files last)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

CONFTEST = '''
from support import schedule
schedule.SPLITS["test_z.py"] = [(r"::test_z_(heavy)$", r"\\1")]
schedule.UNIT_CPU["test_z.py[heavy]"] = 1000.0
pytest_plugins = ["support.schedule"]
'''

# each test appends "<worker> <test>" to the log; a.py's module fixture appends "fixture a" when computed
LOGGING = '''
import os, pytest
def log(what):
    with open(os.environ["SCHEDULE_LOG"], "a") as f:
        f.write(os.environ.get("PYTEST_XDIST_WORKER", "-") + " " + what + "\\n")
'''

FILES = {
    "test_a.py": LOGGING + '''
@pytest.fixture(scope="module")
def shared():
    log("fixture a")
@pytest.mark.parametrize("i", range(6))
def test_a(shared, i):
    log(f"a{i}")
''',
    "test_b.py": LOGGING + '''
@pytest.mark.parametrize("i", range(4))
def test_b(i):
    log(f"b{i}")
''',
    "test_z.py": LOGGING + '''
def test_z_heavy():
    log("z-heavy")
def test_z_light():
    log("z-light")
''',
}


def test_files_are_units_and_the_heaviest_unit_goes_first(tmp_path):
    for name, text in {"conftest.py": CONFTEST, **FILES}.items():
        (tmp_path / name).write_text(text)
    log = tmp_path / "log"
    env = {**os.environ, "SCHEDULE_LOG": str(log), "PYTHONPATH": str(TESTS)}
    env.pop("PEGGY_TEST_CPU_LOG", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "--dist", "loadfile", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line.split(" ", 1) for line in log.read_text().splitlines()]
    worker = {what: w for w, what in lines}
    assert len(lines) == 13 and sum(what == "fixture a" for _, what in lines) == 1
    assert len({worker[f"a{i}"] for i in range(6)}) == 1 and len({worker[f"b{i}"] for i in range(4)}) == 1
    # the heavy unit (the last file's, split off it: one test) is the first its worker runs
    first = {}
    for w, what in lines:
        first.setdefault(w, what)
    assert first[worker["z-heavy"]] == "z-heavy", lines


def test_replay_hands_out_the_units_as_the_scheduler_does(monkeypatch):
    from support import schedule
    monkeypatch.setattr(schedule, "UNIT_CPU", {})
    costs = {"tests/a.py::t1": 1.0, "tests/a.py::t2": 1.0, "tests/a.py::t3": 1.0, "tests/b.py::t": 10.0,
             "tests/c.py::t": 1.0}
    # xdist's order, most tests first: a to the first worker, b to the second, which takes c too (1 test left)
    assert schedule.replay(costs) == [3.0, 11.0]
    # b known to be costly: it goes first, to the first worker, which takes c after it; the second runs a
    monkeypatch.setattr(schedule, "UNIT_CPU", {"tests/b.py": 100.0})
    assert schedule.replay(costs) == [11.0, 3.0]
    # a file split into units by SPLITS is replayed as its units; a worker with 2 or fewer tests left takes the
    # next unit at once, so b waits behind the heavy t3 while the other worker runs out of work
    monkeypatch.setitem(schedule.SPLITS, "tests/a.py", [(r"::(t3)$", r"\1")])
    monkeypatch.setattr(schedule, "UNIT_CPU", {"tests/a.py[t3]": 50.0})
    assert schedule.replay({**costs, "tests/a.py::t3": 20.0}) == [30.0, 3.0]
