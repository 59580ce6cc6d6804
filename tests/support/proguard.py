"""ProGuard's intra-method optimizations as a source of real method pairs for the validator: the steps
``scripts/proguard_pairs.py`` (the table over corpus jars) and ``tests/test_proguard_pairs.py`` share.

What it owns
    * :func:`proguard_jar`: ProGuard's jar (``scripts/fetch_corpus.sh --proguard``, fetched on first use).
    * :func:`jdk_library_jar`: a jar of the running JDK's classes for ProGuard to link against. Debian's ProGuard
      6.2.2 refuses class files newer than major 57 and JDK 17's are major 61; a library class is read only for
      its hierarchy and member signatures, so the copy is relabelled as major 55 and otherwise left as it is. It
      is read with our own jimage reader (no `jimage extract`) and cached next to the corpus.
    * :func:`proguard_intra`: ProGuard with only its intra-method code optimizations (simplification, removal,
      variable allocation, merging), nothing shrunk and every class and member kept, so that each method of the
      output pairs with the method of the same name and descriptor in the input. The output jar is written whole
      or not at all.
    * :func:`proguard_intra_cached`: the same output, kept next to the corpus keyed by everything ProGuard reads
      (its jar, the input, the libraries, the configuration, the JVM that runs it), so that a machine runs
      ProGuard on a jar once (commons-lang3: ~25 s of CPU). ProGuard's output is the same class files run after
      run (only the zip entries' times differ), so a stored output is what a new run would write.
    * :func:`changed_methods`: which pairs differ in their code (instructions with constants resolved, so a
      rewritten constant pool alone is not a change).
    * :func:`validate_pair` and :func:`print_table`: ``validate`` of a jar against its ProGuard output as one
      :class:`Row` (methods, changed, equivalent / not-equivalent / unknown among the changed, share proved, the
      unknown ones proved once the callees they wait for are taken as equivalent (``given``: a method calling a
      pair that is not proved is not proved itself) and the share whose own change is proved (``own``), median
      and p95 time per pair, the commonest reasons); under an assumption (``validate --assume``) the
      pairs proved only by relying on it are counted apart.

A missing ProGuard or JDK image, or a ProGuard failure, raises SystemExit with a one-line message.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from peggy_jvm.classfile.disasm import disassemble
from peggy_jvm.classfile.jimage import default_image
from peggy_jvm.classfile.model import ClassFile
from peggy_jvm.classfile.reader import read_class

from .corpus import cache_dir

ROOT = Path(__file__).resolve().parent.parent.parent
LIBRARY_MAJOR = 55  # the newest major ProGuard 6.2.2 reads is 57; 55 (Java 11) is enough for linking
# the Java SE API and sun.misc.Unsafe: what libraries link against (the JDK's own tools are not needed, and
# every class ProGuard reads costs time)
LIBRARY_MODULES = ("java.", "jdk.unsupported")
FETCH = ROOT / "scripts" / "fetch_corpus.sh"

# ProGuard's intra-method optimizations only. Everything is kept (-dontshrink, -keep every member) so methods
# pair one to one. Obfuscation stays nominally on because -keepattributes only applies to it; everything is kept,
# so nothing is renamed. LocalVariableTypeTable is dropped: after variable allocation ProGuard 6.2.2 can write
# LVTT entries without a matching LocalVariableTable entry, which HotSpot rejects (ClassFormatError).
INTRA_CONFIG = """\
-injars {injar}
-outjars {outjar}
{libraries}
-optimizationpasses 3
-optimizations code/simplification/*,code/removal/*,code/allocation/variable,code/merging
-dontshrink
-dontwarn
-dontnote
-keepattributes !LocalVariableTypeTable,*
-keep class * {{ *; }}
"""


def proguard_jar() -> Path:
    """The path of ProGuard's jar, fetched by fetch_corpus.sh --proguard when missing."""
    proc = subprocess.run(["sh", str(FETCH), "--proguard"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    lines = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip().endswith(".jar")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"proguard_pairs: could not fetch ProGuard: {proc.stderr.strip()[-500:]}")
    return Path(lines[-1])


def jdk_library_jar(out: Path | None = None) -> Path:
    """The JDK's API classes relabelled as major LIBRARY_MAJOR (for linking only); built once, then cached."""
    image = default_image()
    if image is None:
        raise SystemExit("proguard_pairs: no JDK runtime image (lib/modules) found")
    out = out or cache_dir() / "tools" / f"jdk-library-v{LIBRARY_MAJOR}.jar"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")  # two test workers may build it at once
    with image, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for name in image.class_names():
            module = image.module_of_package(name.rpartition("/")[0])
            if module is None or not module.startswith(LIBRARY_MODULES):
                continue
            data = image.find_class(name)
            if data is None or data[:4] != b"\xca\xfe\xba\xbe":
                continue
            if int.from_bytes(data[6:8], "big") > LIBRARY_MAJOR:
                data = data[:6] + LIBRARY_MAJOR.to_bytes(2, "big") + data[8:]
            z.writestr(name + ".class", data)
    tmp.replace(out)
    return out


def proguard_intra(pg_jar: Path, in_jar: Path, out_jar: Path, libraries: list[Path]) -> float:
    """Run ProGuard's intra-method optimizations over IN_JAR into OUT_JAR (written whole or not at all)."""
    out_jar.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        partial = Path(tmp) / out_jar.name
        cfg = Path(tmp) / "intra.pro"
        cfg.write_text(INTRA_CONFIG.format(injar=in_jar, outjar=partial,
                                           libraries="\n".join(f"-libraryjars {p}" for p in libraries)))
        t0 = time.perf_counter()
        # ProGuard's own launcher passes -Xss300000: its optimizer recurses deeply on long methods
        proc = subprocess.run(["java", "-Xss300000", "-jar", str(pg_jar), f"@{cfg}"], capture_output=True,
                              text=True, timeout=1800)
        seconds = time.perf_counter() - t0
        if proc.returncode != 0 or not partial.is_file():
            raise SystemExit(f"proguard_pairs: ProGuard failed on {in_jar} (exit {proc.returncode}):\n"
                             + "\n".join((proc.stdout + proc.stderr).splitlines()[-20:]))
        partial.replace(out_jar)
    return seconds


#: ``off``: proguard_intra_cached runs ProGuard every time (a cold machine's cost)
CACHE_ENV = "PEGGY_TEST_PROGUARD_CACHE"


def _java_identity() -> bytes:
    """What names the JVM that runs ProGuard (``java`` on PATH): its resolved path and its ``release`` file."""
    found = shutil.which("java")
    if found is None:
        return b""
    exe = Path(found).resolve()
    release = exe.parent.parent / "release"
    return str(exe).encode() + b"\0" + (release.read_bytes() if release.is_file() else b"")


def proguard_intra_cached(pg_jar: Path, in_jar: Path, out_jar: Path, libraries: list[Path]) -> bool:
    """What :func:`proguard_intra` writes to OUT_JAR, from the cache when ProGuard ran on the same inputs before
    (``$PEGGY_TEST_PROGUARD_CACHE=off``: always run). Returns whether the cache served it."""
    digest = hashlib.sha256()
    for part in (Path(pg_jar).read_bytes(), Path(in_jar).read_bytes(), *(Path(p).read_bytes() for p in libraries),
                 INTRA_CONFIG.encode(), _java_identity()):
        digest.update(len(part).to_bytes(8, "big") + part)
    stored = cache_dir() / "tools" / "proguard-out" / f"{Path(in_jar).stem}-{digest.hexdigest()[:24]}.jar"
    out_jar.parent.mkdir(parents=True, exist_ok=True)
    if os.environ.get(CACHE_ENV) != "off" and stored.is_file():
        shutil.copyfile(stored, out_jar)
        return True
    proguard_intra(pg_jar, in_jar, out_jar, libraries)
    stored.parent.mkdir(parents=True, exist_ok=True)
    tmp = stored.with_name(f"{stored.name}.{os.getpid()}.tmp")  # two test workers may store it at once
    shutil.copyfile(out_jar, tmp)
    tmp.replace(stored)
    return False


_POOL_INDEX = re.compile(r"#\d+")
_LINE = re.compile(r"\s*// line \d+")


def code_listings(jar: Path) -> dict[tuple[str, str, str], list[str]]:
    """(class, name, descriptor) -> disassembled code, constants resolved (javap-like lines, no offsets). Read
    once per jar and version (a listing of commons-lang3 takes seconds, and a test asks for it several times);
    callers must not change the mapping."""
    st = Path(jar).stat()
    return _code_listings(Path(jar).resolve(), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _code_listings(jar: Path, _size: int, _mtime_ns: int) -> dict[tuple[str, str, str], list[str]]:
    out: dict[tuple[str, str, str], list[str]] = {}
    with zipfile.ZipFile(jar) as z:
        for entry in z.namelist():
            if not entry.endswith(".class") or entry.endswith("module-info.class"):
                continue
            cf = read_class(z.read(entry))
            out.update({(cf.name, *k): v for k, v in method_listings(cf).items()})
    return out


def method_listings(cf: ClassFile) -> dict[tuple[str, str], list[str]]:
    """(name, descriptor) -> the disassembled code of each method of ``cf`` that has code, constants resolved."""
    out = {}
    for m in cf.methods:
        if m.code_attribute() is None:
            continue
        # the class header, pool indexes, line numbers, verifier frames (ProGuard recomputes them) and the
        # list of code attributes are not code
        lines = list(disassemble(cf, f"{m.name}{m.descriptor}"))[1:]
        out[(m.name, m.descriptor)] = [_POOL_INDEX.sub("#", _LINE.sub("", ln)) for ln in lines
                                       if not ln.strip().startswith(("code attributes:", "frame:"))]
    return out


def changed_methods(orig: Path, opt: Path) -> set[tuple[str, str, str]]:
    a, b = code_listings(orig), code_listings(opt)
    return {k for k, v in a.items() if k in b and b[k] != v}


@dataclass
class Row:
    jar: str
    methods: int = 0
    changed: int = 0
    equivalent: int = 0
    not_equivalent: int = 0
    unknown: int = 0
    assumed: int = 0  # equivalent only under --assume (included in ``equivalent``)
    # unknown, but proved once the callees it waits for (not proved themselves) are taken as equivalent: the
    # method's own change is proved (validate/driver.py GIVEN_CALLEES)
    given_callees: int = 0
    median_ms: float = 0.0
    p95_ms: float = 0.0
    proguard_s: float = 0.0
    validate_s: float = 0.0
    unknown_reasons: dict[str, int] = field(default_factory=dict)
    counterexamples: dict[str, dict] = field(default_factory=dict)  # "class.name(desc)" -> args and outcomes

    @property
    def proved_share(self) -> float:
        return self.equivalent / self.changed if self.changed else 1.0

    @property
    def own_share(self) -> float:
        """The share of changed methods whose own change is proved: equivalent, or equivalent given callees."""
        return (self.equivalent + self.given_callees) / self.changed if self.changed else 1.0

    @property
    def strict_share(self) -> float:
        return (self.equivalent - self.assumed) / self.changed if self.changed else 1.0


def _reason_kind(reason: str) -> str:
    """An unknown's reason without method-specific numbers: the first clause, plus which calls differ and which
    assumption would prove it."""
    clauses = [c.strip() for c in reason.split(";")]
    kept = [clauses[0]] + [c for c in clauses[1:] if c.startswith(("calls only in", "proved under"))]
    return re.sub(r"\d+", "N", "; ".join(kept))[:160]


def validate_pair(name: str, orig: Path, opt: Path, method_timeout: float, assumptions: tuple[str, ...] = ()) -> Row:
    from peggy_jvm.validate.driver import GIVEN_CALLEES, ValidateOptions, validate_inputs

    changed = changed_methods(orig, opt)
    t0 = time.perf_counter()
    report = validate_inputs(orig, opt, ValidateOptions(method_timeout=method_timeout, assumptions=assumptions))
    row = Row(name, methods=len(report.pairs), changed=len(changed), validate_s=time.perf_counter() - t0)
    times = []
    reasons: Counter[str] = Counter()
    for p in report.pairs:
        times.append(p.time_ms)
        if (p.class_name, p.name, p.descriptor) not in changed:
            continue
        if p.verdict.value == "equivalent":
            row.equivalent += 1
            row.assumed += bool(p.assumptions)
        elif p.verdict.value == "not-equivalent":
            row.not_equivalent += 1
            key = f"{p.class_name}.{p.name}{p.descriptor}"
            row.counterexamples[key] = p.counterexample or {}
            cx = p.counterexample or {}
            reasons[f"NOT-EQUIVALENT {key}: args {', '.join(cx.get('args', []))}; ORIG {cx.get('orig')}; "
                    f"OPT {cx.get('opt')}"] += 1
        else:
            row.unknown += 1
            row.given_callees += p.reason.startswith(GIVEN_CALLEES)
            reasons[_reason_kind(p.reason)] += 1
    if times:
        times.sort()
        row.median_ms = statistics.median(times)
        row.p95_ms = times[min(len(times) - 1, int(0.95 * len(times)))]
    row.unknown_reasons = dict(reasons.most_common())
    return row


def print_table(rows: list[Row], unknowns: int, assumptions: tuple[str, ...] = ()) -> None:
    """The table; under ``--assume`` ``equiv``/``proved`` are the strict numbers and ``+assumed``/``proved*``
    add the pairs proved only by relying on the assumption."""
    extra = f"{'+assumed':>9}{'proved*':>9}" if assumptions else ""
    head = f"{'jar':<16}{'methods':>8}{'changed':>8}{'equiv':>7}{'not-eq':>7}{'unknown':>8}{'proved':>8}{extra}" \
           f"{'given':>7}{'own':>7}" \
           f"{'median ms':>10}{'p95 ms':>8}{'pg s':>6}{'val s':>7}"
    if assumptions:
        print(f"assuming: {', '.join(assumptions)} (equiv/proved: strict; +assumed/proved*: relying on it)")
    print(head)
    print("-" * len(head))
    for r in rows:
        more = f"{r.assumed:>9}{100 * r.proved_share:>8.1f}%" if assumptions else ""
        print(f"{r.jar:<16}{r.methods:>8}{r.changed:>8}{r.equivalent - r.assumed:>7}{r.not_equivalent:>7}"
              f"{r.unknown:>8}{100 * r.strict_share:>7.1f}%{more}{r.given_callees:>7}{100 * r.own_share:>6.1f}%"
              f"{r.median_ms:>10.1f}{r.p95_ms:>8.1f}"
              f"{r.proguard_s:>6.0f}{r.validate_s:>7.0f}")
    for r in rows:
        if unknowns and r.unknown_reasons:
            print(f"\n{r.jar}: commonest reasons among the changed methods not proved")
            for reason, n in list(r.unknown_reasons.items())[:unknowns]:
                print(f"  {n:>5}  {reason}")
