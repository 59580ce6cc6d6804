"""The labelled pair suite of issue 17 ("How it is checked"): the manifest, the validation of every pair, the
judging against the labels and the report; ``scripts/bench_pairs.py`` is its command line and
``tests/test_pairsuite.py`` checks it.

What it owns
    * :func:`load_suite`: ``fixtures/src/pairs/pairs.toml`` read and checked (unique ids and classes, a label
      of ``equivalent`` or ``different``, a witness for every ``different``) into :class:`PairSpec` rows; a
      malformed manifest raises :class:`SuiteError`.
    * :func:`stage`: the compiled pairs (``fixture_build.build_pairs``, one tree holding both versions)
      split into ORIG and OPT trees, so that ``validate ORIG OPT --map A=B ...`` pairs exactly the suite's
      classes (a class of OPT in ORIG would pair with itself).
    * :func:`run_suite`: ``peggy_jvm.validate`` on the suite, in ``jobs`` worker processes (pairs dealt out
      round-robin in manifest order, one ``validate_inputs`` per worker), folded into one :class:`PairOutcome`
      per pair: its verdict is ``not-equivalent`` when some method of the pair is, ``equivalent`` when every
      method is, else ``unknown``; its time is the sum of its methods' ``time_ms``.
    * :func:`check_witnesses`: every ``different`` label confirmed independently of the validator: the
      witness runs on both classes in one JVM and must give different outcomes.
    * :func:`summarize` / :func:`report_text`: the table against the goals (>= 70% of the equivalent pairs
      proved, >= 85% of the different ones shown with a JVM-confirmed input, 0 wrong verdicts, p50 <= 0.2 s and
      p95 <= 10 s per pair), then the pairs by kind and by tag, the open pairs by :func:`cause`, and each open
      pair with the reason of its first unsettled method.

A wrong verdict is ``not-equivalent`` on a pair labelled equivalent, on a method that cannot differ
(:func:`unchanged_methods`) or without a counterexample, and ``equivalent`` on a pair labelled different.
"""
from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import tempfile
import tomllib
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .proguard import method_listings

ROOT = Path(__file__).resolve().parent.parent.parent

MANIFEST = ROOT / "fixtures" / "src" / "pairs" / "pairs.toml"
LABELS = ("equivalent", "different")
#: issue 17's goals on the suite
GOAL_PROVED, GOAL_SHOWN, GOAL_P50_S, GOAL_P95_S = 0.70, 0.85, 0.2, 10.0


class SuiteError(ValueError):
    """The manifest is malformed or names a class the build did not produce."""


@dataclass(frozen=True, slots=True)
class PairSpec:
    id: str
    orig: str
    opt: str
    label: str
    kind: str
    tags: tuple[str, ...]
    what: str
    witness: str | None = None


@dataclass(slots=True)
class PairOutcome:
    id: str
    label: str
    verdict: str  # of the pair: not-equivalent if a method is, equivalent if all are, else unknown
    result: str  # proved / unproved (equivalent label), shown / unshown (different label), wrong
    time_ms: float
    methods: list[dict] = field(default_factory=list)  # the validator's JSON rows of the pair's methods


def load_suite(path: Path = MANIFEST) -> list[PairSpec]:
    """The manifest's pairs in order. Raises :class:`SuiteError` naming the first problem."""
    try:
        rows = tomllib.loads(path.read_text(encoding="utf-8"))["pairs"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as exc:
        raise SuiteError(f"{path}: {exc}") from exc
    specs: list[PairSpec] = []
    seen: set[str] = set()
    for row in rows:
        spec = PairSpec(row["id"], row.get("orig", row["id"] + "A"), row.get("opt", row["id"] + "B"),
                        row["label"], row["kind"], tuple(row.get("tags", ())), row["what"], row.get("witness"))
        problem = (f"id {spec.id} twice" if spec.id in seen else
                   f"class of {spec.id} used twice" if {spec.orig, spec.opt} & seen or spec.orig == spec.opt else
                   f"{spec.id}: label {spec.label!r} is not one of {LABELS}" if spec.label not in LABELS else
                   f"{spec.id}: a different pair needs a witness" if spec.label == "different" and not spec.witness
                   else None)
        if problem:
            raise SuiteError(f"{path}: {problem}")
        seen |= {spec.id, spec.orig, spec.opt}
        specs.append(spec)
    return specs


def stage(specs: list[PairSpec], classes: Path, dest: Path) -> tuple[Path, Path]:
    """``dest/orig`` and ``dest/opt``: each pair's two class files (and their nested classes) from the build
    tree ``classes``."""
    orig, opt = dest / "orig", dest / "opt"
    for side in (orig, opt):
        side.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        for name, side in ((spec.orig, orig), (spec.opt, opt)):
            files = [classes / f"{name}.class", *classes.glob(f"{name}$*.class")]
            if not files[0].is_file():
                raise SuiteError(f"{spec.id}: {files[0]} was not built")
            for f in files:
                shutil.copy2(f, side / f.name)
    return orig, opt


def _validate_chunk(specs: list[PairSpec], classes: str, work: str, method_timeout: float) -> list[dict]:
    """One worker: the JSON rows of ``validate`` on ``specs`` (imported here: a worker process's own)."""
    from peggy_jvm.validate import ValidateOptions, validate_inputs

    orig, opt = stage(specs, Path(classes), Path(work))
    options = ValidateOptions(method_timeout=method_timeout, class_map={s.orig: s.opt for s in specs})
    return [p.to_json() for p in validate_inputs(orig, opt, options).pairs]


def unchanged_methods(spec: PairSpec, classes: Path) -> set[tuple[str, str]]:
    """The methods (name, descriptor) whose code is the same in both classes up to the renaming and that call no
    method of their own class. Such a method behaves the same in both: a receiver is generated field by field,
    or built by the two constructors and used only when both built it alike, and no class of the suite has static
    state. So a
    not-equivalent verdict on one, even in a pair labelled different, is wrong. A method with an
    ``invokedynamic`` never counts: the listing does not show its bootstrap arguments (a string concatenation's
    recipe)."""
    from peggy_jvm.classfile.reader import read_class

    def listings(name: str) -> dict[tuple[str, str], list[str]]:
        return method_listings(read_class((classes / f"{name}.class").read_bytes()))

    renamed = re.compile(rf"\b{re.escape(spec.opt)}\b")
    orig, opt = listings(spec.orig), listings(spec.opt)
    own_call = re.compile(rf"Method {re.escape(spec.orig)}\.")
    return {k for k, lines in orig.items()
            if [renamed.sub(spec.orig, ln) for ln in opt.get(k, [])] == lines
            and not any(own_call.search(ln) or "invokedynamic" in ln for ln in lines)}


def classify(spec: PairSpec, methods: list[dict], unchanged: set[tuple[str, str]] = frozenset()) -> PairOutcome:
    """The pair's verdict from its methods' rows, judged against its label (and, for a not-equivalent method,
    against :func:`unchanged_methods`)."""
    verdicts = {m["verdict"] for m in methods}
    verdict = ("not-equivalent" if "not-equivalent" in verdicts else
               "equivalent" if methods and verdicts == {"equivalent"} else "unknown")
    unconfirmed = any(m["verdict"] == "not-equivalent"
                      and (not m["counterexample"] or (m["name"], m["descriptor"]) in unchanged) for m in methods)
    if spec.label == "equivalent":
        result = {"equivalent": "proved", "unknown": "unproved"}.get(verdict, "wrong")
    else:
        result = {"not-equivalent": "shown", "unknown": "unshown"}.get(verdict, "wrong")
    if unconfirmed:
        result = "wrong"
    return PairOutcome(spec.id, spec.label, verdict, result, sum(m["time_ms"] for m in methods), methods)


def run_suite(specs: list[PairSpec], classes: Path, method_timeout: float = 10.0,
              jobs: int = 1) -> list[PairOutcome]:
    """Validate every pair (``jobs`` processes); the outcomes in ``specs``' order."""
    chunks = [specs[k::jobs] for k in range(jobs) if specs[k::jobs]]
    with tempfile.TemporaryDirectory(prefix="peggy-pairs-") as tmp:
        if len(chunks) == 1:
            results = [_validate_chunk(chunks[0], str(classes), f"{tmp}/0", method_timeout)]
        else:
            with ProcessPoolExecutor(len(chunks)) as pool:
                futures = [pool.submit(_validate_chunk, c, str(classes), f"{tmp}/{k}", method_timeout)
                           for k, c in enumerate(chunks)]
                results = [f.result() for f in futures]
    by_class: dict[str, list[dict]] = defaultdict(list)
    for rows in results:
        for row in rows:
            by_class[row["class"]].append(row)
    return [classify(s, by_class.get(s.orig, []), unchanged_methods(s, classes)) for s in specs]


WITNESS_TEMPLATE = """\
import java.util.concurrent.Callable;

class PairWitnesses {{
    static String run(Callable<Object> c) {{
        try {{
            Object v = c.call();
            return "returns " + (v instanceof int[] a ? java.util.Arrays.toString(a) : String.valueOf(v));
        }} catch (Throwable t) {{
            return "throws " + t.getClass().getName();
        }}
    }}
{methods}
    public static void main(String[] args) {{
{calls}
    }}
}}
"""


def _witness_body(witness: str, cls: str) -> str:
    text = witness.replace("@", cls)
    return text if text.lstrip().startswith("{") else f"{{ return {text}; }}"


def check_witnesses(specs: list[PairSpec], classes: Path, java_home: Path | None = None) -> dict[str, tuple[str, str]]:
    """Each ``different`` pair's witness run on both classes on the JVM: id -> (orig outcome, opt outcome)."""
    bin_dir = (java_home / "bin") if java_home else Path(shutil.which("javac") or "javac").resolve().parent
    different = [s for s in specs if s.label == "different"]
    methods, calls = [], []
    for k, s in enumerate(different):
        for side, cls in (("a", s.orig), ("b", s.opt)):
            methods.append(f"    static Object w{k}{side}() throws Exception {_witness_body(s.witness, cls)}")
        calls.append(f'        System.out.println("{s.id}\\t" + run(PairWitnesses::w{k}a) + "\\t" '
                     f'+ run(PairWitnesses::w{k}b));')
    with tempfile.TemporaryDirectory(prefix="peggy-witness-") as tmp:
        src = Path(tmp) / "PairWitnesses.java"
        src.write_text(WITNESS_TEMPLATE.format(methods="\n".join(methods), calls="\n".join(calls)), encoding="utf-8")
        subprocess.run([str(bin_dir / "javac"), "-cp", str(classes), "-d", tmp, str(src)], check=True,
                       capture_output=True, text=True)
        proc = subprocess.run([str(bin_dir / "java"), "-cp", f"{tmp}{os.pathsep}{classes}", "PairWitnesses"],
                              check=True, capture_output=True, text=True, timeout=300)
    out = {}
    for line in proc.stdout.splitlines():
        pid, a, b = line.split("\t")
        out[pid] = (a, b)
    return out


@dataclass(slots=True)
class Summary:
    equivalent: int
    proved: int
    different: int
    shown: int
    wrong: list[str]
    p50_s: float
    p95_s: float

    @property
    def proved_share(self) -> float:
        return self.proved / self.equivalent if self.equivalent else 1.0

    @property
    def shown_share(self) -> float:
        return self.shown / self.different if self.different else 1.0


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def summarize(outcomes: list[PairOutcome]) -> Summary:
    results = Counter(o.result for o in outcomes)
    times = [o.time_ms / 1000 for o in outcomes]
    return Summary(sum(o.label == "equivalent" for o in outcomes), results["proved"],
                   sum(o.label == "different" for o in outcomes), results["shown"],
                   [o.id for o in outcomes if o.result == "wrong"],
                   statistics.median(times) if times else 0.0, _quantile(times, 0.95))


def _goal_rows(s: Summary) -> list[tuple[str, str, str, bool]]:
    return [("equivalent pairs proved", f"{s.proved}/{s.equivalent} = {s.proved_share:.1%}",
             f">= {GOAL_PROVED:.0%}", s.proved_share >= GOAL_PROVED),
            ("different pairs shown (JVM input)", f"{s.shown}/{s.different} = {s.shown_share:.1%}",
             f">= {GOAL_SHOWN:.0%}", s.shown_share >= GOAL_SHOWN),
            ("wrong verdicts", f"{len(s.wrong)} {' '.join(s.wrong)}".strip(), "0", not s.wrong),
            ("p50 time per pair", f"{s.p50_s:.3f} s", f"<= {GOAL_P50_S} s", s.p50_s <= GOAL_P50_S),
            ("p95 time per pair", f"{s.p95_s:.3f} s", f"<= {GOAL_P95_S} s", s.p95_s <= GOAL_P95_S)]


def _read(classes: Path, name: str):
    from peggy_jvm.classfile.reader import read_class

    return read_class((classes / f"{name}.class").read_bytes())


def _own_field_refs(classes: Path, name: str) -> bool:
    """Whether class ``name`` reads or writes a field of its own (a reference ``--map`` must rename)."""
    from peggy_jvm.classfile.constpool import Tag

    cf = _read(classes, name)
    return any(e[0] == Tag.FIELDREF and cf.pool.member_ref(i).owner == name for i, e in cf.pool if e)


def cause(spec: PairSpec, o: PairOutcome, classes: Path) -> str:
    """Why an open pair is open, the first of these that applies: for a pair labelled equivalent, a call to a
    method of its own class (``Old.h`` and ``New.h`` are different calls unless the pair of ``h`` is used in
    the proof) made on both sides, or on one side only (an extracted helper, a recursion made a loop, a
    ``this(...)`` inlined: the callee would have to be inlined or unfolded), a field of its own class, a JDK
    method called on one side only, a loop, else branches or arithmetic (what the axioms do not prove); for a
    pair labelled different, a JVM run stopped for time, else no input found."""
    reasons = " ".join(m["reason"] for m in o.methods if m["verdict"] == "unknown")
    if spec.label == "different":
        return "JVM run stopped for time" if "did not finish" in reasons else "no differing input found"
    sides = {side: " ".join(re.findall(rf"calls only in {side}: ([^;]*)", reasons)) for side in ("ORIG", "OPT")}
    own = {side: set(re.findall(rf"\b(?:{spec.orig}|{spec.opt})\.([\w<>$]+)", text)) for side, text in sides.items()}
    if own["ORIG"] or own["OPT"]:
        return ("own-class call on one side only" if own["ORIG"] ^ own["OPT"]
                else "own-class call on both sides")
    if _own_field_refs(classes, spec.orig):
        return "own-class field"
    if "java/" in sides["ORIG"] + sides["OPT"]:
        return "JDK call on one side"
    return "loop" if "loop" in spec.tags else "branches or arithmetic"


def _first_reason(o: PairOutcome) -> str:
    """The reason of the pair's first method that is not settled (the one that keeps the pair open)."""
    for m in o.methods:
        if m["verdict"] == "unknown":
            return f"{m['name']}{m['descriptor']}: {m['reason']}"
    return "no method paired" if not o.methods else ""


def report_text(specs: list[PairSpec], outcomes: list[PairOutcome], wall_s: float, classes: Path,
                reasons: int = 160) -> str:
    s = summarize(outcomes)
    lines = [f"{len(outcomes)} pairs ({s.equivalent} equivalent, {s.different} different), wall {wall_s:.1f} s",
             f"{'goal':36} {'measured':28} {'target':10} met"]
    lines += [f"{name:36} {value:28} {goal:10} {'yes' if ok else 'NO'}" for name, value, goal, ok in _goal_rows(s)]
    spec_of = {sp.id: sp for sp in specs}
    for title, key in (("by kind", lambda sp: [sp.kind]), ("by tag", lambda sp: list(sp.tags))):
        table: dict[str, Counter] = defaultdict(Counter)
        for o in outcomes:
            for k in key(spec_of[o.id]):
                table[k][o.result] += 1
        lines.append(f"\n{title}: proved/equivalent  shown/different  wrong")
        for k in sorted(table):
            c = table[k]
            eq, df = c["proved"] + c["unproved"], c["shown"] + c["unshown"]
            lines.append(f"  {k:26} {c['proved']:>3}/{eq:<3} {c['shown']:>9}/{df:<3} {c['wrong']:>8}")
    open_ = [o for o in outcomes if o.result in ("unproved", "unshown")]
    causes: dict[str, list[str]] = defaultdict(list)
    for o in open_:
        causes[f"{o.result}: {cause(spec_of[o.id], o, classes)}"].append(o.id)
    lines.append("\nopen pairs by cause:")
    lines += [f"  {k:44} {len(v):>3}  {' '.join(v)}" for k, v in sorted(causes.items(), key=lambda kv: -len(kv[1]))]
    lines.append("\nopen and wrong pairs (the first unsettled method's reason):")
    for o in outcomes:
        if o.result in ("unproved", "unshown", "wrong"):
            sp = spec_of[o.id]
            lines.append(f"  {o.id:7} {o.result:8} {sp.kind:24} {_first_reason(o)[:reasons]}")
    return "\n".join(lines)
