"""Verdicts and their renderings: the rich table, the JSON report (DESIGN section 8), JUnit XML, the exit code.

What this module owns
    :class:`Verdict`, :class:`PairResult` (one row: a paired method, or an unpaired class/method), and
    :class:`ValidationReport` with :meth:`~ValidationReport.to_json`, :meth:`~ValidationReport.to_junit`,
    :meth:`~ValidationReport.exit_code` and :func:`render_table` (by default only the pairs not proved
    equivalent: :func:`shown_pairs`).

Inputs: results from :mod:`.driver`. Outputs: a dict (JSON), XML text, a rich table, an int.

Invariants
    * The JSON keys are exactly DESIGN section 8's (``pairs``: class, name, descriptor, verdict, reason,
      counterexample, time_ms; ``summary``: equivalent, not_equivalent, unknown), plus, only when asked for with
      ``--explain``, ``axioms`` per pair, and ``unpaired`` (a list, outside the verdict counts).
    * With ``--assume`` (only then): ``assumptions`` per pair (the assumptions its proof relied on, ``[]`` for
      none) and at the top level (the assumptions given); a relying pair's reason ends with
      :func:`assumption_note`, which the table and JUnit show too. Without it the output is unchanged.
    * Exit code: 0 every pair equivalent, 1 some pair not equivalent, 3 none not-equivalent but some unknown
      (code 2, bad input, never comes from here).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from enum import Enum

EXIT_EQUIVALENT = 0
EXIT_NOT_EQUIVALENT = 1
EXIT_UNKNOWN = 3


class Verdict(str, Enum):
    EQUIVALENT = "equivalent"
    NOT_EQUIVALENT = "not-equivalent"
    UNKNOWN = "unknown"


@dataclass(slots=True)
class PairResult:
    class_name: str
    name: str
    descriptor: str
    verdict: Verdict
    reason: str = ""
    counterexample: dict | None = None  # {"args": [...], "orig": outcome text, "opt": outcome text}
    time_ms: float = 0.0
    axioms: list[str] | None = None  # with --explain: the rules the proof used
    assumptions: list[str] | None = None  # with --assume: the assumptions the proof relied on ([]: none)

    def to_json(self, with_axioms: bool = False) -> dict:
        d: dict[str, object] = {"class": self.class_name, "name": self.name, "descriptor": self.descriptor,
             "verdict": self.verdict.value, "reason": self.reason, "counterexample": self.counterexample,
             "time_ms": round(self.time_ms, 3)}
        if with_axioms:
            d["axioms"] = self.axioms
        if self.assumptions is not None:
            d["assumptions"] = self.assumptions
        return d


def assumption_note(names: list[str], lead: str = "relies on") -> str:
    """The reason suffix of a proof that relied on assumptions (``--assume``), or, with ``lead`` "proved
    under", of a strict unknown that these assumptions would prove."""
    return f"; {lead} " + ", ".join(f"--assume {n}" for n in names)


@dataclass(slots=True)
class ValidationReport:
    pairs: list[PairResult] = field(default_factory=list)
    unpaired: list[str] = field(default_factory=list)  # "only in ORIG: class a/B", "only in OPT: method ..."
    skipped: int = 0  # methods without code on both sides (no verdict)
    explain: bool = False
    seconds: float = 0.0
    assumptions: list[str] = field(default_factory=list)  # given with --assume

    def relying(self) -> int:
        """Equivalent pairs whose proof relied on an assumption."""
        return sum(1 for p in self.pairs if p.verdict is Verdict.EQUIVALENT and p.assumptions)

    def summary(self) -> dict[str, int]:
        counts = {"equivalent": 0, "not_equivalent": 0, "unknown": 0}
        for p in self.pairs:
            counts[p.verdict.value.replace("-", "_")] += 1
        return counts

    def exit_code(self) -> int:
        s = self.summary()
        if s["not_equivalent"]:
            return EXIT_NOT_EQUIVALENT
        if s["unknown"]:
            return EXIT_UNKNOWN
        return EXIT_EQUIVALENT

    def to_json(self) -> dict:
        d = {"pairs": [p.to_json(self.explain) for p in self.pairs], "summary": self.summary(),
             "unpaired": list(self.unpaired)}
        if self.assumptions:
            d["assumptions"] = list(self.assumptions)
        return d

    def to_junit(self) -> str:
        """One testcase per pair: not-equivalent is a failure, unknown is skipped with the reason."""
        s = self.summary()
        suite = ET.Element("testsuite", name="peggy-jvm validate", tests=str(len(self.pairs)),
                           failures=str(s["not_equivalent"]), skipped=str(s["unknown"]), errors="0",
                           time=f"{self.seconds:.3f}")
        for p in self.pairs:
            case = ET.SubElement(suite, "testcase", classname=p.class_name.replace("/", "."),
                                 name=p.name + p.descriptor, time=f"{p.time_ms / 1000:.3f}")
            if p.verdict is Verdict.NOT_EQUIVALENT:
                fail = ET.SubElement(case, "failure", message=p.reason, type="not-equivalent")
                fail.text = _counterexample_text(p.counterexample)
            elif p.verdict is Verdict.UNKNOWN:
                ET.SubElement(case, "skipped", message=p.reason)
            elif p.assumptions:  # a pass, but only under an assumption: say so where CI shows test output
                ET.SubElement(case, "system-out").text = p.reason
        root = ET.Element("testsuites")
        root.append(suite)
        ET.indent(root)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _counterexample_text(cx: dict | None) -> str:
    if not cx:
        return ""
    return f"args: {cx.get('args')}\norig: {cx.get('orig')}\nopt:  {cx.get('opt')}"


_STYLE = {Verdict.EQUIVALENT: "green", Verdict.NOT_EQUIVALENT: "bold red", Verdict.UNKNOWN: "yellow"}


def shown_pairs(report: ValidationReport, every: bool = False) -> list[PairResult]:
    """The rows the table shows: by default the pairs that are not proved equivalent (not-equivalent and
    unknown: what a person reading a CI log must look at); ``every`` (``--all``): all of them."""
    return list(report.pairs) if every else [p for p in report.pairs if p.verdict is not Verdict.EQUIVALENT]


def render_table(report: ValidationReport, every: bool = False):
    """A rich Table of :func:`shown_pairs`: class, method, verdict, reason (with the counterexample or the
    axioms), time."""
    from rich.table import Table

    t = Table(title="peggy-jvm validate", show_lines=False)
    for col in ("class", "method", "verdict", "reason", "ms"):
        t.add_column(col, justify="right" if col == "ms" else "left", overflow="fold")
    for p in shown_pairs(report, every):
        reason = p.reason
        if p.counterexample:
            reason += f"; args={p.counterexample.get('args')} orig={p.counterexample.get('orig')} " \
                      f"opt={p.counterexample.get('opt')}"
        if report.explain and p.axioms:
            reason += f"; axioms: {', '.join(p.axioms)}"
        t.add_row(p.class_name, p.name + p.descriptor, f"[{_STYLE[p.verdict]}]{p.verdict.value}[/]", reason,
                  f"{p.time_ms:.0f}")
    return t
