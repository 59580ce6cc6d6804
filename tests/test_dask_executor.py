"""``optimize --executor dask`` (peggy_jvm/dask_executor.py, issue 19 item 3) on a two-worker ``LocalCluster``:
the same output bytes and report as a local run, a worker killed mid-run loses no class, clear one-line errors
(no scheduler, an unreachable one, a worker on another tool), the pipeline's per-class task unchanged, and
classes split into parts of their methods merged to the same bytes.

The cluster's workers are separate processes that import peggy-jvm themselves, as on a real cluster.
"""
from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import javac_command
from support.javac_cache import run_javac

from peggy_jvm import dask_executor
from peggy_jvm.cli import main
from peggy_jvm.pipeline import Stage, optimize_input

# the 'dask' extra; CI installs it with the test extra. Imported by the tests that use it, not here: every
# pytest-xdist worker imports every test file to collect it, and importing Dask costs ~1 s of CPU
if importlib.util.find_spec("distributed") is None:
    pytest.skip("could not import 'distributed' (the 'dask' extra)", allow_module_level=True)

SOURCES = {
    f"Dk{k}": f"""
public class Dk{k} {{
    static int licm(int n, int a, int b) {{ int s = 0; for (int i = 0; i < n; i++) {{ s += a * b + i + {k}; }} return s; }}
    static int strength(int n) {{ int s = 0; for (int i = 0; i < n; i++) {{ s += i * {k + 3}; }} return s; }}
    static int fold(int x) {{ int a = {k}; int b = a * 4; if (b > 10) {{ return x + b; }} else {{ return x - b; }} }}
}}
""" for k in range(6)}


@pytest.fixture(scope="module")
def classes(java_home, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("dask-in")
    for name, text in SOURCES.items():
        (d / f"{name}.java").write_text(text)
    run_javac([*javac_command(java_home), "-d", str(d), *[str(d / f"{n}.java") for n in SOURCES]],
              check=True)
    for p in d.glob("*.java"):
        p.unlink()
    return d


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    import dask
    import distributed
    # Dask's scratch space in the test's own directory: by default its scheduler and workers leave a
    # `dask-scratch-space` directory behind in the system's temporary directory
    scratch = str(tmp_path_factory.mktemp("dask-scratch"))
    with dask.config.set({"temporary-directory": scratch}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                     silence_logs=50, local_directory=scratch) as c:
        yield c


def _outputs(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.class"))}


def _statuses(report) -> list[tuple[str, str, str, str]]:
    return sorted((m.class_name, m.name + m.descriptor, m.status, m.reason) for m in report.methods)


def test_same_bytes_and_report_as_local(classes, cluster, tmp_path):
    _, local = optimize_input(classes, tmp_path / "local", Stage.FULL, jobs=1)
    _, remote = optimize_input(classes, tmp_path / "dask", Stage.FULL, scheduler=cluster.scheduler_address)
    assert _outputs(tmp_path / "dask") == _outputs(tmp_path / "local")
    assert len(_outputs(tmp_path / "dask")) == len(SOURCES)
    assert _statuses(remote) == _statuses(local)
    assert any(m.status == "rewritten" for m in remote.methods)  # a run that rewrites something, not a copy


def test_a_worker_killed_mid_run_loses_no_class(classes, cluster, tmp_path):
    _, local = optimize_input(classes, tmp_path / "local", Stage.FULL, jobs=1)
    import distributed
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as c:
        pids = list(c.run(os.getpid).values())
    killed = threading.Event()

    def progress(p) -> None:  # after the first class, while the others are queued or running on both workers
        if p.classes_done >= 1 and not killed.is_set():
            killed.set()
            os.kill(pids[0], 9)

    _, remote = optimize_input(classes, tmp_path / "dask", Stage.FULL, progress=progress,
                               scheduler=cluster.scheduler_address)
    assert killed.is_set()
    assert _outputs(tmp_path / "dask") == _outputs(tmp_path / "local")
    assert _statuses(remote) == _statuses(local)  # nothing fell back: the lost worker's classes ran again


def test_split_classes_same_bytes_with_a_worker_killed(classes, cluster, tmp_path):
    """Every class split into one task per method (``split_bytes=1``), the parts merged by the client in method
    order, a worker killed after the first part: the same bytes and report rows as the local run of whole
    classes (the lost worker's parts ran again)."""
    _, local = optimize_input(classes, tmp_path / "local", Stage.FULL, jobs=1)
    import distributed
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as c:
        pids = list(c.run(os.getpid).values())
    killed = threading.Event()

    def progress(p) -> None:
        if p.methods >= 1 and not killed.is_set():
            killed.set()
            os.kill(pids[0], 9)

    _, remote = optimize_input(classes, tmp_path / "dask", Stage.FULL, progress=progress,
                               scheduler=cluster.scheduler_address, split_bytes=1)
    assert killed.is_set()
    assert _outputs(tmp_path / "dask") == _outputs(tmp_path / "local")
    assert _statuses(remote) == _statuses(local)


def test_cli_runs_on_the_cluster(classes, cluster, tmp_path):
    r = CliRunner().invoke(main, ["optimize", str(classes), "-o", str(tmp_path / "o"), "--no-cache",
                                  "--executor", "dask", "--scheduler", cluster.scheduler_address])
    assert r.exit_code == 0, r.output
    assert len(_outputs(tmp_path / "o")) == len(SOURCES)


def test_the_scheduler_from_the_environment(classes, cluster, tmp_path, monkeypatch):
    monkeypatch.setenv(dask_executor.SCHEDULER_ENV, cluster.scheduler_address)
    r = CliRunner().invoke(main, ["optimize", str(classes), "-o", str(tmp_path / "o"), "--no-cache",
                                  "--executor", "dask"])
    assert r.exit_code == 0, r.output
    assert len(_outputs(tmp_path / "o")) == len(SOURCES)


def test_no_scheduler_is_a_one_line_error(classes, tmp_path, monkeypatch):
    monkeypatch.delenv(dask_executor.SCHEDULER_ENV, raising=False)
    r = CliRunner().invoke(main, ["optimize", str(classes), "-o", str(tmp_path / "o"), "--executor", "dask"])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        "peggy-jvm: error: --executor dask: needs --scheduler ADDRESS (or $DASK_SCHEDULER_ADDRESS)"]
    r = CliRunner().invoke(main, ["optimize", str(classes), "-o", str(tmp_path / "o"), "--scheduler", "tcp://x:1"])
    assert r.exit_code == 2 and "only with --executor dask" in r.output
    assert not (tmp_path / "o").exists()


def test_an_unreachable_scheduler_is_a_one_line_error(classes, tmp_path, monkeypatch):
    monkeypatch.setattr(dask_executor, "CONNECT_TIMEOUT", 1.0)
    r = CliRunner().invoke(main, ["optimize", str(classes), "-o", str(tmp_path / "o"), "--no-cache",
                                  "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1"])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "peggy-jvm: error: --executor dask: cannot reach the Dask scheduler at tcp://127.0.0.1:1"), r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "o").exists()  # nothing written


def test_a_worker_on_another_tool_stops_the_run(classes, cluster, tmp_path, monkeypatch):
    # the client's fingerprint differs from the workers' (they compute their own in their own processes)
    monkeypatch.setattr(dask_executor, "worker_fingerprint", lambda: "another-version")
    r = CliRunner().invoke(main, ["optimize", str(classes), "-o", str(tmp_path / "o"), "--no-cache",
                                  "--executor", "dask", "--scheduler", cluster.scheduler_address])
    assert r.exit_code == 2
    assert "runs another peggy-jvm or JDK than this client" in r.output
    assert not (tmp_path / "o").exists()


def test_without_dask_installed_the_error_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)  # `import distributed` raises ImportError
    with pytest.raises(dask_executor.ExecutorError, match=r"pip install 'peggy-jvm\[dask\]'"):
        dask_executor.run_dask([], "tcp://127.0.0.1:1", str, print, (), lambda i, r: False, lambda i, w: None)


def test_a_task_failing_on_a_worker_is_a_one_line_error(cluster):
    # `int("x")` raises on the worker: the run stops with the worker's exception in one line, not a traceback
    with pytest.raises(dask_executor.ExecutorError, match="a task failed on a Dask worker: ValueError: invalid literal"):
        dask_executor.run_dask(["x"], cluster.scheduler_address, int, dict, (), lambda i, r: False,
                               lambda i, w: None)


def test_results_of_the_generic_runner_come_back_in_full(cluster):
    got: dict[str, object] = {}
    dask_executor.run_dask(["1", "22", "333"], cluster.scheduler_address, len, dict, (),
                           lambda i, r: got.__setitem__(i, r) or False, lambda i, w: None)
    assert got == {"1": 1, "22": 2, "333": 3}


def test_a_task_runs_with_the_heap_frozen():
    """On a Dask worker each task runs with the long-lived heap frozen for the garbage collector
    (``workers.heap_frozen``, as in the local workers), and the worker's heap is unfrozen between tasks."""
    import gc
    from peggy_jvm import dask_executor

    setup = ("run-id", dask_executor.worker_fingerprint(), lambda: None, ())
    assert gc.get_freeze_count() == 0
    assert dask_executor._run_task(0, setup, lambda item: gc.get_freeze_count()) > 0
    assert gc.get_freeze_count() == 0
