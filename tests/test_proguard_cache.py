"""ProGuard's output kept next to the corpus (``support.proguard.proguard_intra_cached``, which
tests/test_proguard_pairs.py reads its ProGuard outputs through): served only for the same inputs, ProGuard run
again when any of them changes or the cache is off. ProGuard itself is replaced here by a stand-in that records
its calls (the slow tier runs the real one)."""
from __future__ import annotations

from pathlib import Path

import pytest
from support import proguard as pp


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """ProGuard's calls: the stand-in writes the input's bytes reversed as the output, and records the input."""
    monkeypatch.setenv("PEGGY_CORPUS", str(tmp_path / "corpus"))
    monkeypatch.delenv(pp.CACHE_ENV, raising=False)
    calls: list[bytes] = []

    def proguard(pg_jar: Path, in_jar: Path, out_jar: Path, libraries: list[Path]) -> float:
        calls.append(in_jar.read_bytes())
        out_jar.write_bytes(in_jar.read_bytes()[::-1])
        return 0.0
    monkeypatch.setattr(pp, "proguard_intra", proguard)
    return calls


def test_the_same_inputs_run_proguard_once(tmp_path: Path, runs: list[bytes], monkeypatch) -> None:
    pg, lib, src = tmp_path / "proguard.jar", tmp_path / "lib.jar", tmp_path / "app.jar"
    pg.write_bytes(b"proguard 6.2.2")
    lib.write_bytes(b"library")
    src.write_bytes(b"app v1")

    assert not pp.proguard_intra_cached(pg, src, tmp_path / "a" / "out.jar", [lib])
    assert pp.proguard_intra_cached(pg, src, tmp_path / "b" / "out.jar", [lib])
    assert runs == [b"app v1"]
    assert (tmp_path / "b" / "out.jar").read_bytes() == (tmp_path / "a" / "out.jar").read_bytes() == b"1v ppa"

    # any input changed: ProGuard runs again, and its output is served
    src.write_bytes(b"app v2")
    assert not pp.proguard_intra_cached(pg, src, tmp_path / "c" / "out.jar", [lib])
    assert (tmp_path / "c" / "out.jar").read_bytes() == b"2v ppa"
    lib.write_bytes(b"library, another JDK")
    assert not pp.proguard_intra_cached(pg, src, tmp_path / "d" / "out.jar", [lib])
    pg.write_bytes(b"proguard 7")
    assert not pp.proguard_intra_cached(pg, src, tmp_path / "e" / "out.jar", [lib])
    monkeypatch.setattr(pp, "INTRA_CONFIG", pp.INTRA_CONFIG + "-dontoptimize\n")
    assert not pp.proguard_intra_cached(pg, src, tmp_path / "f" / "out.jar", [lib])
    assert len(runs) == 5
    assert pp.proguard_intra_cached(pg, src, tmp_path / "g" / "out.jar", [lib])
    assert len(runs) == 5

    # off: always run
    monkeypatch.setenv(pp.CACHE_ENV, "off")
    assert not pp.proguard_intra_cached(pg, src, tmp_path / "h" / "out.jar", [lib])
    assert len(runs) == 6
