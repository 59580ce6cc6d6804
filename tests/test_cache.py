"""The result cache (peggy_jvm/cache.py): a cached run gives the uncached run's bytes and report; hierarchy facts,
corrupt and foreign entries, two writing processes, eviction; the CLI's --cache / --no-cache."""
from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

from peggy_jvm.budget import DEFAULT_WORK_BUDGET
from peggy_jvm.cache import MAGIC, ResultCache, default_dir, optimize_class_cached
from peggy_jvm.classfile.hierarchy import ClassHierarchy, ClassInfo
from peggy_jvm.codecost import Goal
from peggy_jvm.pipeline import MethodReport, Stage, optimize_input

CLI = [str(Path(sys.executable).parent / "peggy-jvm")]


def _rows(report) -> list[dict]:
    """The report's rows without their times (the one thing a hit may report differently)."""
    return [{k: v for k, v in m.to_json().items() if k not in ("time_ms", "cpu_ms")} for m in report.methods]


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*.class"))}


def test_cached_full_stage_is_byte_identical(fixture_classes, tmp_path):
    """Kernels through the full stage: the second run comes wholly from the cache, with the first run's bytes and
    report rows."""
    src = fixture_classes["release17"] / "Kernels.class"
    cache = ResultCache(tmp_path / "cache")
    first, r1 = optimize_input(src, tmp_path / "a.class", Stage.FULL, cache=cache)
    second, r2 = optimize_input(src, tmp_path / "b.class", Stage.FULL, cache=ResultCache(tmp_path / "cache"))
    assert r1.cache["methods_cached"] == 0 and r2.cache["methods_cached"] == len(r2.methods) > 0
    assert any(m.status == "rewritten" for m in r1.methods)  # something that a wrong hit would show
    assert first.read_bytes() == second.read_bytes()
    assert _rows(r1) == _rows(r2)
    assert all(set(m.time_ms) == {"cache"} for m in r2.methods)


def test_a_changed_class_the_result_read_is_a_miss(tmp_path):
    """A class's result that read another input class (an inlined callee, rules/inline.py) is trusted only while
    that class has the same bytes; a class it never read may change freely."""
    cache, h = ResultCache(tmp_path), ClassHierarchy(use_jdk=False)
    calls = []

    def compute(program):
        calls.append(1)
        callee = program.get("p/Callee")
        return b"out" + (callee or b""), [MethodReport("p/C", "m", "()V", "unchanged", "")]

    args = (Stage.FULL, DEFAULT_WORK_BUDGET, Goal.SPEED, None)
    program = {"p/C": b"caller", "p/Callee": b"v1", "p/Other": b"x"}
    out, _ = optimize_class_cached(cache, b"caller", h, *args, dict(program), compute)
    assert out == b"outv1" and len(calls) == 1
    out, _ = optimize_class_cached(cache, b"caller", h, *args, dict(program, **{"p/Other": b"y"}), compute)
    assert out == b"outv1" and len(calls) == 1  # a hit: p/Other was never read
    out, _ = optimize_class_cached(cache, b"caller", h, *args, dict(program, **{"p/Callee": b"v2"}), compute)
    assert out == b"outv2" and len(calls) == 2  # the callee changed: computed again


def test_cached_runs_on_workers_match_an_uncached_run(fixture_classes, tmp_path):
    """Ten classes at --stage ir: uncached, then cached on two workers (misses, stored by the workers), then
    cached again (hits in the workers): the same bytes and rows all three times."""
    inp = tmp_path / "in"
    inp.mkdir()
    for p in sorted(fixture_classes["release17"].glob("*.class"))[:10]:
        shutil.copy(p, inp)
    out0, r0 = optimize_input(inp, tmp_path / "o0", Stage.IR)
    out1, r1 = optimize_input(inp, tmp_path / "o1", Stage.IR, jobs=2, cache=ResultCache(tmp_path / "c"))
    out2, r2 = optimize_input(inp, tmp_path / "o2", Stage.IR, jobs=2, cache=ResultCache(tmp_path / "c"))
    assert r1.cache["methods_cached"] == 0 and r2.cache["methods_cached"] == len(r2.methods) > 00
    assert _files(out0) == _files(out1) == _files(out2)
    assert _rows(r0) == _rows(r1) == _rows(r2)

    # every entry corrupted in its result bytes: ignored, recomputed, rewritten, and the output still right
    entries = list((tmp_path / "c" / "v1").glob("*/*"))  # one per class, or per part of a large class
    assert len(entries) >= 10
    for entry in entries:
        data = bytearray(entry.read_bytes())
        data[-1] ^= 0xFF
        entry.write_bytes(bytes(data))
    c3 = ResultCache(tmp_path / "c")
    out3, r3 = optimize_input(inp, tmp_path / "o3", Stage.IR, cache=c3)
    assert r3.cache["methods_cached"] == 0 and len(c3.ignored) == len(entries) and c3.stored == len(entries)
    assert _files(out3) == _files(out0)
    out4, r4 = optimize_input(inp, tmp_path / "o4", Stage.IR, cache=ResultCache(tmp_path / "c"))
    assert r4.cache["methods_cached"] == len(r4.methods) and _files(out4) == _files(out0)


def _hierarchy(super_of_b: str) -> ClassHierarchy:
    h = ClassHierarchy(use_jdk=False)
    h.add_info(ClassInfo("java/lang/Object", None, (), False))
    h.add_info(ClassInfo("p/Base", "java/lang/Object", (), False))
    h.add_info(ClassInfo("p/Other", "java/lang/Object", (), False))
    h.add_info(ClassInfo("p/A", "p/Base", (), False))
    h.add_info(ClassInfo("p/B", super_of_b, (), False))
    return h


def test_a_changed_hierarchy_fact_is_a_miss(tmp_path):
    """The facts a result consulted are stored with it: the same key under another superclass of a class it
    looked at is a miss; a class it did not look at may change freely. The least-upper-bound memo, filled before
    the recording, does not hide the facts it rests on."""
    h = _hierarchy("p/Base")
    assert h.common_super("p/A", "p/B") == "p/Base"  # memoised outside any recording
    with h.recording() as facts:
        assert h.common_super("p/A", "p/B") == "p/Base"
    assert {"p/A", "p/B", "p/Base"} <= set(facts) and "p/Other" not in facts
    cache = ResultCache(tmp_path)
    cache.put("k" * 64, [facts], {"lub": "p/Base"})
    assert cache.get("k" * 64, [_hierarchy("p/Base")]) == ({"lub": "p/Base"}, b"")
    assert cache.get("k" * 64, [_hierarchy("p/Other")]) is None
    missing = ClassHierarchy(use_jdk=False)  # p/B found nowhere now
    assert cache.get("k" * 64, [missing]) is None
    changed = _hierarchy("p/Base")
    changed.add_info(ClassInfo("p/Other", "p/Base", (), False))
    assert cache.get("k" * 64, [changed]) is not None


def test_corrupt_and_foreign_entries_are_ignored_then_rewritten(tmp_path):
    cache = ResultCache(tmp_path)
    key, other = "a" * 64, "b" * 64
    cache.put(key, [{}], {"x": 1}, b"payload")
    cache.put(other, [{}], {"x": 2}, b"other")
    path, other_path = cache._path(key), cache._path(other)
    good = path.read_bytes()
    damaged = {
        "truncated": good[:-3],
        "a flipped byte": good[:-1] + bytes([good[-1] ^ 1]),
        "another version's magic": good.replace(MAGIC, b"peggy-jvm result cache 0\n", 1),
        "garbage": os.urandom(200),
        "empty": b"",
        "another key's entry": other_path.read_bytes(),
    }
    for what, data in damaged.items():
        path.write_bytes(data)
        before = len(cache.ignored)
        assert cache.get(key, [ClassHierarchy(use_jdk=False)]) is None, what
        assert len(cache.ignored) == before + 1, what
        cache.put(key, [{}], {"x": 1}, b"payload")
        assert cache.get(key, [ClassHierarchy(use_jdk=False)]) == ({"x": 1}, b"payload"), what


def _writer(root: str, ident: int, rounds: int) -> None:
    cache = ResultCache(Path(root))
    for r in range(rounds):
        for k in range(8):
            key = f"{k:064x}"
            cache.put(key, [{}], {"writer": ident, "round": r}, bytes([k]) * 100_000 + bytes([ident]))


def test_two_processes_writing_at_once(tmp_path):
    """Two processes store the same keys over and over while this one reads them: every read is a whole entry
    of one writer (or a miss before the first write), never a mix; no temporary file is left."""
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), ident, 25)) for ident in (1, 2)]
    for p in procs:
        p.start()
    reader = ResultCache(tmp_path)
    seen = 0
    while any(p.is_alive() for p in procs) or seen == 0:
        for k in range(8):
            got = reader.get(f"{k:064x}", [ClassHierarchy(use_jdk=False)])
            if got is not None:
                meta, blob = got
                assert blob == bytes([k]) * 100_000 + bytes([meta["writer"]])
                seen += 1
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert reader.ignored == []
    assert not list(tmp_path.rglob(".tmp-*"))
    assert len(list((tmp_path / "v1").glob("*/*"))) == 8


def test_least_recently_used_entries_are_evicted(tmp_path):
    cache = ResultCache(tmp_path, max_bytes=50_000)
    keys = [f"{k:064x}" for k in range(8)]
    for age, key in enumerate(keys):
        cache.put(key, [{}], {}, b"x" * 10_000)
        os.utime(cache._path(key), (1000 + age, 1000 + age))  # oldest first
    assert cache.get(keys[0], [ClassHierarchy(use_jdk=False)]) is not None  # used now: the most recent
    assert cache.evict() > 0
    left = {p.name for p in (tmp_path / "v1").glob("*/*")}
    assert keys[0] in left and keys[7] in left and keys[1] not in left
    assert sum(p.stat().st_size for p in (tmp_path / "v1").glob("*/*")) <= 50_000 * 0.9
    assert cache.evict() == 0  # under the bound: nothing more goes


def test_cli_cache_options(fixture_classes, tmp_path):
    src = fixture_classes["release17"] / "Kernels.class"
    env = {k: v for k, v in os.environ.items() if k != "PEGGY_JVM_CACHE"}  # conftest's "off"
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    base = [*CLI, "optimize", str(src), "--stage", "classfile"]
    r = subprocess.run([*base, "-o", str(tmp_path / "a.class"), "--no-cache"], env=env, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "xdg").exists()
    r = subprocess.run([*base, "-o", str(tmp_path / "b.class")], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert list((tmp_path / "xdg" / "peggy-jvm" / "results" / "v1").glob("*/*"))
    r = subprocess.run([*base, "-o", str(tmp_path / "c.class"), "--no-cache", "--cache", str(tmp_path / "d")],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 2 and "exclude each other" in r.stderr
    (tmp_path / "file").write_text("x")
    r = subprocess.run([*base, "-o", str(tmp_path / "e.class"), "--cache", str(tmp_path / "file")], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("peggy-jvm: error: ") and "Traceback" not in r.stderr
    assert default_dir() is None  # conftest's PEGGY_JVM_CACHE=off
    r = subprocess.run([*base, "-o", str(tmp_path / "f.class")], capture_output=True, text=True,
                       env=dict(env, PEGGY_JVM_CACHE=str(tmp_path / "env")))
    assert r.returncode == 0, r.stderr
    assert list((tmp_path / "env" / "v1").glob("*/*"))


def test_what_is_not_stored_or_not_readable_is_computed(tmp_path):
    """A class whose safety net fired is computed every time; a whole, checksummed entry whose rows this code
    cannot read (another layout) is computed again and rewritten, never a crash."""
    cache, h = ResultCache(tmp_path), ClassHierarchy(use_jdk=False)
    calls = []

    def compute(reason: str):
        def run(program):
            calls.append(reason)
            return b"out", [MethodReport("C", "m", "()V", "fallback" if reason else "unchanged", reason)]
        return run

    args = (Stage.FULL, DEFAULT_WORK_BUDGET, Goal.SPEED, None, None)
    for _ in range(2):
        optimize_class_cached(cache, b"timed out", h, *args, compute("timeout: 61000 ms > 60 s, at the end"))
    assert len(calls) == 2 and cache.stored == 0

    out, rows = optimize_class_cached(cache, b"fine", h, *args, compute(""))
    assert (out, len(calls), cache.stored) == (b"out", 3, 1)
    (entry,) = (tmp_path / "v1").glob("*/*")
    cache.put(entry.name, [{}], [{"not": "a row"}], b"out")  # whole and checksummed, but not rows
    out, rows = optimize_class_cached(cache, b"fine", h, *args, compute(""))
    assert len(calls) == 4 and rows[0].status == "unchanged"
    out, rows = optimize_class_cached(cache, b"fine", h, *args, compute(""))
    assert len(calls) == 4 and rows[0].time_ms.keys() == {"cache"}  # rewritten by the fourth call, hit now
