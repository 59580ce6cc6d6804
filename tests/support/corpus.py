"""The corpus the slow tests and the measuring scripts share: which jars, where they are cached, their workloads,
the class sample of a big jar, and the optimizer's table computed from a JSON report.

What it owns
    * :data:`DEFAULT_JARS`, :data:`JAR_DEPS` (the class path a jar needs to link its optional parts) and
      :data:`WORKLOAD_OF` (jar name -> our workload in ``tests/java/workloads/``);
    * :func:`cache_dir` (``$PEGGY_CORPUS``, else ``${XDG_CACHE_HOME:-~/.cache}/peggy-jvm/corpus``) and
      :func:`fetch_jars` (``scripts/fetch_corpus.sh`` into it; name -> jar);
    * :func:`harness_dir`: ``tests/java/VerifyClasses.java`` compiled into the cache;
    * :func:`full_table` / :func:`print_full_table`: what one ``--stage full`` run did, from its JSON report
      alone (``peggy-jvm optimize --json``): methods rewritten / unchanged / fell back with their reasons grouped
      (:func:`reason_group`), cost before and after, bytecode size and emitted cost of the rewritten methods, the
      per-method CPU time p50 / p95 (``cpu_ms``, results from the cache counted apart) and wall time;
    * :func:`write_subset`: the deterministic 1-in-N sample of a jar's classes (CRC-32 of the entry name,
      :func:`in_sample`), the same classes on every machine and run.

``scripts/verify_corpus.py`` prints these tables for its runs; ``tests/test_corpus.py`` prints the same table and
runs on the same sample, so that CI and the hand-run numbers come from one mechanism.
"""
from __future__ import annotations

import math
import os
import re
import subprocess
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

DEFAULT_JARS = ["jama", "commons-lang3", "commons-math3", "jsoup", "guava"]
# classpath each jar needs to link its optional parts (jar name -> other corpus jars)
JAR_DEPS = {"commons-text": ["commons-lang3"]}
# jar name -> our workload for it (tests/java/workloads/NAME.java, compiled against the original jar)
WORKLOAD_OF = {
    "jama": "JamaWork",
    "commons-lang3": "Lang3Work",
    "jsoup": "JsoupWork",
    "commons-math3": "MathWork",
}


def cache_dir() -> Path:
    env = os.environ.get("PEGGY_CORPUS")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "peggy-jvm" / "corpus"


def fetch_jars(all_jars: bool = False) -> dict[str, Path]:
    cmd = ["sh", str(ROOT / "scripts" / "fetch_corpus.sh"), str(cache_dir())]
    if all_jars:
        cmd.append("--all")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return {p.stem: p for p in sorted((cache_dir() / "jars").glob("*.jar"))}


def harness_dir() -> Path:
    """tests/java/VerifyClasses.java compiled into the cache (recompiled when the source changes)."""
    src = ROOT / "tests" / "java" / "VerifyClasses.java"
    out = cache_dir() / "harness"
    cls = out / "VerifyClasses.class"
    if not cls.exists() or cls.stat().st_mtime < src.stat().st_mtime:
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run(["javac", "-d", str(out), str(src)], check=True)
    return out


# -- the optimizer's table, from the JSON report -------------------------------------------------------------
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def reason_group(reason: str) -> str:
    """The group a reason belongs to: its numbers (offsets, costs, node and iteration counts, times) replaced by
    N, so that reasons differing only in them count together."""
    return _NUMBER.sub("N", reason.split(" at offset")[0])[:110]


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty list: a value that really occurred."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


@dataclass
class FullTable:
    """What one optimizer run did, per method with code (methods without code are only counted)."""
    name: str
    stage: str
    no_code: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {"rewritten": 0, "unchanged": 0, "fallback": 0})
    reasons: dict[tuple[str, str], int] = field(default_factory=dict)  # (status, reason group) -> methods
    costed: int = 0  # methods whose report carries a cost (the full stage built and costed their PEG)
    cost_before: float = 0.0  # over the costed methods (an unchanged method's cost_after is its cost_before)
    cost_after: float = 0.0
    rewritten_cost_before: float = 0.0  # over the rewritten methods: where the reduction comes from
    rewritten_cost_after: float = 0.0
    bytes_before: int = 0  # code length of the rewritten methods
    bytes_after: int = 0
    emitted_before: int = 0  # the emitted code's price (codecost.py) of the rewritten methods
    emitted_after: int = 0
    times_ms: list[float] = field(default_factory=list)  # whole per-method wall time, methods with code
    cpu_ms: list[float] = field(default_factory=list)  # per-method CPU time (the report's cpu_ms), methods with code
    cached: int = 0  # methods with code whose result came from the cache (no CPU time of this run)
    extraction: dict[str, int] = field(default_factory=dict)  # extraction status -> methods (reports that have it)

    @property
    def with_code(self) -> int:
        return sum(self.counts.values())


def full_table(name: str, report: dict) -> FullTable:
    """The table of one JSON report (``peggy-jvm optimize --json``, or ``RunReport.to_json()``)."""
    t = FullTable(name, report["stage"])
    for m in report["methods"]:
        if m["bytes_before"] == 0:  # abstract or native: nothing to optimize
            t.no_code += 1
            continue
        t.counts[m["status"]] += 1
        key = (m["status"], reason_group(m["reason"]))
        t.reasons[key] = t.reasons.get(key, 0) + 1
        if m["cost_before"] is not None:
            t.costed += 1
            t.cost_before += m["cost_before"]
            t.cost_after += m["cost_after"] if m["cost_after"] is not None else m["cost_before"]
        if m["status"] == "rewritten":
            t.rewritten_cost_before += m["cost_before"] or 0.0
            t.rewritten_cost_after += m["cost_after"] or 0.0
            t.bytes_before += m["bytes_before"]
            t.bytes_after += m["bytes_after"]
            t.emitted_before += m.get("emitted_cost_before") or 0
            t.emitted_after += m.get("emitted_cost_after") or 0
        if t.stage in m["time_ms"]:
            t.times_ms.append(m["time_ms"][t.stage])
        if "cache" in m["time_ms"]:
            t.cached += 1
        elif m.get("cpu_ms") is not None:
            t.cpu_ms.append(m["cpu_ms"])
        if m.get("extraction"):  # only the full stage's methods that reached extraction have one
            t.extraction[m["extraction"]] = t.extraction.get(m["extraction"], 0) + 1
    return t


def _change(before: float, after: float) -> str:
    return f"{(after - before) / before:+.1%}" if before else "n/a"


def print_full_table(t: FullTable, top: int = 12) -> None:
    total = t.with_code
    print(f"\n### {t.name}: --stage {t.stage}, {total} methods with code ({t.no_code} without)\n")
    print("| status | methods | share |")
    print("|---|---|---|")
    for status, n in t.counts.items():
        print(f"| {status} | {n} | {n / total:.1%} |" if total else f"| {status} | {n} | - |")
    print(f"\n- cost (methods with a cost, {t.costed}): {t.cost_before:.6g} -> {t.cost_after:.6g} "
          f"({_change(t.cost_before, t.cost_after)}); of the rewritten methods: {t.rewritten_cost_before:.6g} -> "
          f"{t.rewritten_cost_after:.6g} ({_change(t.rewritten_cost_before, t.rewritten_cost_after)})")
    print(f"- bytecode of the rewritten methods: {t.bytes_before} -> {t.bytes_after} bytes "
          f"({_change(t.bytes_before, t.bytes_after)}); emitted cost {t.emitted_before} -> {t.emitted_after} "
          f"({_change(t.emitted_before, t.emitted_after)})")
    if t.cpu_ms:
        cached = f"; {t.cached} from the cache left out" if t.cached else ""
        print(f"- CPU time per method: p50 {percentile(t.cpu_ms, 50):.1f} ms, p95 {percentile(t.cpu_ms, 95):.1f} ms, "
              f"max {max(t.cpu_ms):.0f} ms, sum {sum(t.cpu_ms) / 1000:.1f} s{cached}")
    if t.times_ms:
        print(f"- wall time per method: p50 {percentile(t.times_ms, 50):.1f} ms, p95 {percentile(t.times_ms, 95):.1f} ms, "
              f"max {max(t.times_ms):.0f} ms, sum {sum(t.times_ms) / 1000:.1f} s")
    if t.extraction:
        print("- extraction: " + ", ".join(f"{k} {v}" for k, v in sorted(t.extraction.items(), key=lambda kv: -kv[1])))
    print("\n| status | methods | reason (numbers as N) |")
    print("|---|---|---|")
    for status in t.counts:
        groups = sorted(((n, r) for (s, r), n in t.reasons.items() if s == status), key=lambda g: (-g[0], g[1]))
        for n, r in groups[:top]:
            print(f"| {status} | {n} | {r or '-'} |")
        if len(groups) > top:
            print(f"| {status} | {sum(n for n, _ in groups[top:])} | ({len(groups) - top} other groups) |")


# -- a deterministic subset of a jar's classes -----------------------------------------------------------------
def in_sample(entry: str, modulus: int) -> bool:
    """Whether a class entry is in the 1-in-``modulus`` sample: CRC-32 of its name, so the same classes on every
    machine and run, spread over all packages (no hand-picked list to go stale)."""
    return zlib.crc32(entry.encode()) % modulus == 0


def write_subset(jar: Path, dest: Path, modulus: int) -> list[str]:
    """``dest``: a jar of the classes of ``jar`` in the 1-in-``modulus`` sample (non-class entries dropped, they
    are copied verbatim anyway). Optimize it with the original jar on the class path, so the class hierarchy
    knows every class. Returns the sampled entry names."""
    with zipfile.ZipFile(jar) as src, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as dst:
        names = [i.filename for i in src.infolist() if i.filename.endswith(".class")
                 and not i.filename.startswith("META-INF/") and in_sample(i.filename, modulus)]
        for n in names:
            dst.writestr(src.getinfo(n), src.read(n))
    return names
