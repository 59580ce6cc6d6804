"""HTML reports a person can look at: ``optimize --html REPORT`` and ``validate --html REPORT``.

What this module owns
    :func:`optimize_page` and :func:`validate_page` (one self-contained HTML page: inline CSS, a small inline
    script that sorts the table by a clicked column, pictures as inline SVG; nothing is fetched from the
    network), the per-method details they show (:class:`Detail`), :func:`pictured_methods` (which methods of an
    optimize run get details and pictures) and :func:`dot_picture` (Graphviz ``dot -Tsvg`` when it is installed,
    the DOT text otherwise).

Inputs
    The run's report (``pipeline.RunReport`` / ``validate.report.ValidationReport``) and the details of some of
    its rows, keyed by :func:`row_key`. The details are made by the caller (cli.py) after the run, in the main
    process, from the input and output classes (disassembly) and, for optimize, from
    ``pipeline.full_stage_view`` (PEG, E-PEG, rules fired, extraction): work budgets, not time, bound the
    full stage, so recomputing a method gives what the run saw, and runs without ``--html`` pay nothing.

Outputs / invariants
    Text; every piece of report data goes through :func:`html.escape` (method names and reasons can hold
    ``<``); the table has exactly one ``tbody`` row per report row (methods, or pairs), in the report's order.
    Same report and details, same page (no clock, no random ids).
"""
from __future__ import annotations

import html
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Sequence

if TYPE_CHECKING:
    from .archive import InputSet
    from .classfile.hierarchy import ClassHierarchy
    from .classfile.model import ClassFile
    from .codecost import Goal
    from .rules.policy import RuleOptions
    from .pipeline import FullStageView, MethodReport, RunReport
    from .validate.report import PairResult, ValidationReport

#: which methods of an optimize run get details (bytecode, rules, pictures): every rewritten method, the largest
#: byte savings first, up to this many, then the largest unchanged methods the full stage saturated (by E-PEG
#: size), up to :data:`LARGEST_OTHERS`; recomputing their E-PEGs costs what their saturation and extraction
#: cost in the run
MAX_REWRITTEN = 40
LARGEST_OTHERS = 5
#: a graph with more edges than this is not laid out (a note says so): Graphviz's time grows fast and erratically
#: with size (on the fixtures: 0.07 s for an E-PEG of 153 edges, 5 s for a PEG of 241, 30 s for one of 900),
#: and a browser cannot show such a picture usefully anyway. A size, not a clock, decides, so the same run
#: gives the same page.
MAX_DOT_EDGES = 160
#: the safety net on one layout, in seconds (then the DOT text is shown instead)
DOT_TIMEOUT = 60.0


@dataclass
class Detail:
    """What a report shows of one method (or pair) below the table."""
    title: str
    before: list[str] = field(default_factory=list)  # disassembly of the original (ORIG) method
    after: list[str] = field(default_factory=list)  # of the optimized (OPT) one
    facts: list[tuple[str, str]] = field(default_factory=list)  # (label, text): rules fired, proof, ...
    pictures: list[tuple[str, str]] = field(default_factory=list)  # (caption, DOT text)


def row_key(class_name: str, name: str, descriptor: str) -> str:
    return f"{class_name}.{name}{descriptor}"


def pictured_methods(methods: Sequence[MethodReport]) -> list[MethodReport]:
    """The rows of an optimize report that get details, by the rule of :data:`MAX_REWRITTEN`."""
    rewritten = sorted((m for m in methods if m.status == "rewritten"),
                       key=lambda m: (m.bytes_after - m.bytes_before, row_key(m.class_name, m.name, m.descriptor)))
    # not the fallbacks: a method that ran out of time would be recomputed without the run's safety net
    others = sorted((m for m in methods if m.status == "unchanged" and m.epeg_nodes),
                    key=lambda m: (-(m.epeg_nodes or 0), row_key(m.class_name, m.name, m.descriptor)))
    return rewritten[:MAX_REWRITTEN] + others[:LARGEST_OTHERS]


def dot_picture(dot: str) -> str:
    """HTML for one graph: inline SVG from ``dot -Tsvg`` when Graphviz is installed and the graph is not too
    large, else the DOT text (with why)."""
    edges = dot.count(" -> ")
    if edges > MAX_DOT_EDGES:
        return f'<p class="note">a graph of {edges} edges: too large to lay out here (over {MAX_DOT_EDGES})</p>'
    exe = shutil.which("dot")
    if exe is not None:
        try:
            done = subprocess.run([exe, "-Tsvg"], input=dot, capture_output=True, text=True, timeout=DOT_TIMEOUT)
            if done.returncode == 0 and "<svg" in done.stdout:
                # the XML prolog and DOCTYPE are not allowed inside HTML: the <svg> element alone
                return '<div class="svg">' + done.stdout[done.stdout.index("<svg"):] + "</div>"
            why = f"dot failed: {done.stderr.strip()[:200]}"
        except subprocess.TimeoutExpired:
            why = f"dot took over {DOT_TIMEOUT:g} s"
    else:
        why = "Graphviz (dot) is not installed: the DOT text"
    return f'<p class="note">{_e(why)}</p><pre class="dot">{_e(dot)}</pre>'


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _num(v: float | int | None) -> str:
    if v is None:
        return ""
    return f"{v:g}" if isinstance(v, float) else str(v)


_CSS = """
body { font: 14px/1.4 sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; border-top: 1px solid #ccc; padding-top: .8em; }
table.sum td { padding: 1px 12px 1px 0; }
table.rows { border-collapse: collapse; width: 100%; }
table.rows th, table.rows td { border: 1px solid #ddd; padding: 2px 6px; text-align: left; vertical-align: top; }
table.rows th { background: #f0f0f0; cursor: pointer; user-select: none; position: sticky; top: 0; }
table.rows th.asc::after { content: " \\25B2"; } table.rows th.desc::after { content: " \\25BC"; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.rewritten, .equivalent { color: #1a7f37; } .fallback, .not-equivalent { color: #c62828; font-weight: bold; }
.unknown { color: #9a6700; }
.side { display: flex; gap: 1em; } .side > div { flex: 1; min-width: 0; }
pre { background: #f7f7f7; padding: .5em; overflow: auto; font-size: 12px; max-height: 40em; }
.svg { overflow: auto; border: 1px solid #ddd; max-height: 50em; } .note { color: #666; font-style: italic; }
"""

# Sorts the table by the clicked column: numbers (data-v) numerically, text otherwise; a second click reverses.
_JS = """
document.querySelectorAll("table.rows th").forEach(function (th, col) {
  th.addEventListener("click", function () {
    var body = th.closest("table").tBodies[0], rows = Array.prototype.slice.call(body.rows);
    var asc = !th.classList.contains("asc");
    th.parentNode.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
    th.classList.add(asc ? "asc" : "desc");
    function key(r) { var c = r.cells[col], v = c.getAttribute("data-v");
      return v !== null && v !== "" ? parseFloat(v) : c.textContent; }
    rows.sort(function (a, b) { var x = key(a), y = key(b);
      var d = (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y));
      return asc ? d : -d; });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""


def _page(title: str, summary: Iterable[tuple[str, object]], head: Sequence[str], rows: list[str],
          details: list[str], notes: Sequence[str] = ()) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{_e(title)}</title>",
           f"<style>{_CSS}</style></head><body>", f"<h1>{_e(title)}</h1>", '<table class="sum">']
    out.extend(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in summary)
    out.append("</table>")
    out.extend(f'<p class="note">{_e(n)}</p>' for n in notes)
    out.append('<table class="rows" id="rows"><thead><tr>' + "".join(f"<th>{_e(h)}</th>" for h in head)
               + "</tr></thead><tbody>")
    out.extend(rows)
    out.append("</tbody></table>")
    out.extend(details)
    out.append(f"<script>{_JS}</script></body></html>")
    return "\n".join(out) + "\n"


def _cell(text: object, value: float | int | None = None, cls: str = "") -> str:
    attrs = f' class="{cls}"' if cls else ""
    if value is not None:
        attrs += f' data-v="{value}"'
    return f"<td{attrs}>{text}</td>"


def _anchor(i: int, key: str, label: str, details: dict[str, Detail]) -> str:
    return f'<a href="#d{i}">{_e(label)}</a>' if key in details else _e(label)


def _detail_html(i: int, d: Detail, before: str, after: str) -> str:
    parts = [f'<h2 id="d{i}">{_e(d.title)}</h2>']
    for label, text in d.facts:
        parts.append(f"<p><b>{_e(label)}</b>: {_e(text)}</p>")
    if d.before or d.after:
        parts.append(f'<div class="side"><div><h3>{_e(before)}</h3><pre>{_e(chr(10).join(d.before))}</pre></div>'
                     f'<div><h3>{_e(after)}</h3><pre>{_e(chr(10).join(d.after))}</pre></div></div>')
    for caption, dot in d.pictures:
        parts.append(f"<h3>{_e(caption)}</h3>{dot_picture(dot)}")
    return "\n".join(parts)


def optimize_page(report: RunReport, details: dict[str, Detail], title: str) -> str:
    """The page of an optimize run: summary, the sortable table of every method, the details of some."""
    s = report.summary()
    summary = [("stage", report.stage), ("goal", report.goal), ("classes", s["classes"]),
               ("methods", s["methods"]), ("rewritten", s["rewritten"]), ("unchanged", s["unchanged"]),
               ("fell back", s["fallback"]), ("bytes", f"{s['bytes_before']} -> {s['bytes_after']}"),
               ("rewritten methods' bytes", f"{s['rewritten_bytes_before']} -> {s['rewritten_bytes_after']}"),
               ("rewritten methods' emitted cost", f"{s['emitted_cost_before']} -> {s['emitted_cost_after']}"),
               ("seconds", s["seconds"])]
    notes = [*(f"warning: {w}" for w in report.warnings),
             f"Details below the table: every rewritten method (at most {MAX_REWRITTEN}, largest savings first) "
             f"and the {LARGEST_OTHERS} largest E-PEGs of unchanged methods; the method names link to them."]
    head = ["class", "method", "status", "reason", "extraction", "cost before", "cost after", "bytes before",
            "bytes after", "E-PEG nodes", "time (ms)"]
    keys: dict[str, int] = {}
    rows = []
    for i, m in enumerate(report.methods):
        key = row_key(m.class_name, m.name, m.descriptor)
        keys.setdefault(key, i)
        ms = sum(v for k, v in m.time_ms.items() if "." not in k)  # the stage totals, not their parts
        rows.append("<tr>" + "".join([
            _cell(_e(m.class_name)), _cell(_anchor(keys[key], key, m.name + m.descriptor, details)),
            _cell(_e(m.status), cls=m.status), _cell(_e(m.reason)), _cell(_e(m.extraction or "")),
            _cell(_num(m.cost_before), m.cost_before, "n"), _cell(_num(m.cost_after), m.cost_after, "n"),
            _cell(m.bytes_before, m.bytes_before, "n"), _cell(m.bytes_after, m.bytes_after, "n"),
            _cell(_num(m.epeg_nodes), m.epeg_nodes, "n"), _cell(f"{ms:.1f}", round(ms, 3), "n")]) + "</tr>")
    blocks = [_detail_html(keys[k], d, "bytecode before", "bytecode after")
              for k, d in details.items() if k in keys]
    return _page(title, summary, head, rows, blocks, notes)


def validate_page(report: ValidationReport, details: dict[str, Detail], title: str) -> str:
    """The page of a validate run: summary, the sortable table of every pair, each pair's bytecode on both
    sides with its proof (axioms used) or counterexample."""
    s = report.summary()
    summary = [("pairs", len(report.pairs)), ("equivalent", s["equivalent"]),
               ("not equivalent", s["not_equivalent"]), ("unknown", s["unknown"]),
               ("without code (skipped)", report.skipped), ("unpaired", len(report.unpaired)),
               ("seconds", f"{report.seconds:.2f}")]
    if report.assumptions:
        summary.append(("assumptions", ", ".join(report.assumptions)))
    head = ["class", "method", "verdict", "reason", "time (ms)"]
    keys: dict[str, int] = {}
    rows = []
    for i, p in enumerate(report.pairs):
        key = row_key(p.class_name, p.name, p.descriptor)
        keys.setdefault(key, i)
        rows.append("<tr>" + "".join([
            _cell(_e(p.class_name)), _cell(_anchor(keys[key], key, p.name + p.descriptor, details)),
            _cell(_e(p.verdict.value), cls=p.verdict.value), _cell(_e(p.reason)),
            _cell(f"{p.time_ms:.1f}", round(p.time_ms, 3), "n")]) + "</tr>")
    blocks = [_detail_html(keys[k], d, "ORIG", "OPT") for k, d in details.items() if k in keys]
    return _page(title, summary, head, rows, blocks, [f"unpaired: {u}" for u in report.unpaired])


def pair_facts(p: PairResult) -> list[tuple[str, str]]:
    """What a validate page says of one pair besides its bytecode: the verdict, the axioms the proof used, the
    assumptions it relied on, or the counterexample the JVM confirmed."""
    facts = [("verdict", f"{p.verdict.value}: {p.reason}" if p.reason else p.verdict.value)]
    if p.axioms is not None:
        facts.append(("axioms used", ", ".join(p.axioms) or "none (the two sides are the same graph)"))
    if p.assumptions:
        facts.append(("relies on", ", ".join(p.assumptions)))
    if p.counterexample:
        cx = p.counterexample
        facts.append(("counterexample", f"args {cx.get('args')}: ORIG {cx.get('orig')}, OPT {cx.get('opt')}"))
    return facts


def method_listing(cf: ClassFile | None, m_name: str, descriptor: str) -> list[str]:
    """The disassembly of one method of ``cf`` (:mod:`peggy_jvm.classfile.disasm`), without the class header
    it starts with; a line saying so when the class or method is not there."""
    from .classfile.disasm import disassemble
    if cf is None or not any(m.name == m_name and m.descriptor == descriptor for m in cf.methods):
        return ["(not in this input)"]
    lines = list(disassemble(cf, m_name + descriptor))
    while lines and (not lines[0] or not lines[0].startswith(" ")):  # the class line and the blank after it
        lines.pop(0)
    return lines


def _classes(inp: InputSet, names: set[str]) -> dict[str, ClassFile]:
    from .classfile.reader import read_class
    from .pipeline import classes_by_name
    return {n: read_class(data) for n, data in classes_by_name(inp).items() if n in names}


def optimize_details(report: RunReport, original: InputSet, optimized: InputSet, hierarchy: ClassHierarchy,
                     rules: RuleOptions | None, goal: Goal) -> dict[str, Detail]:
    """The details of :func:`pictured_methods`: bytecode before (``original``) and after (``optimized``), the
    outcome and, for the full stage, the rules that fired, the extraction and the pictures of the PEG, the
    E-PEG (the chosen e-nodes filled) and the chosen PEG (``pipeline.full_stage_view``)."""
    from .ir.lift import LiftError, lift_method
    from .peg.build import PegUnsupported
    from .pipeline import Stage, full_stage_view, inlinable_classes, optimizer_callees

    chosen = pictured_methods(report.methods)
    names = {m.class_name for m in chosen}
    before, after = _classes(original, names), _classes(optimized, names)
    program = inlinable_classes(original)  # what the full stage could inline from (rules/inline.py)
    out: dict[str, Detail] = {}
    for m in chosen:
        key = row_key(m.class_name, m.name, m.descriptor)
        cf = before.get(m.class_name)
        d = Detail(key, method_listing(cf, m.name, m.descriptor),
                   method_listing(after.get(m.class_name), m.name, m.descriptor))
        d.facts.append(("outcome", f"{m.status}: {m.reason}" if m.reason else m.status))
        method = next((x for x in (cf.methods if cf is not None else ())
                       if x.name == m.name and x.descriptor == m.descriptor), None)
        if report.stage == Stage.FULL.value and cf is not None and method is not None:
            try:
                view = full_stage_view(lift_method(cf, method, hierarchy), rules, goal,
                                       extract=True, callees=optimizer_callees(cf, method, hierarchy, program, goal))
            except (LiftError, PegUnsupported) as e:
                d.facts.append(("PEG", f"none: {e}"))
            else:
                _full_facts(d, view)
        out[key] = d
    return out


def _full_facts(d: Detail, view: FullStageView) -> None:
    from .epeg.printer import egraph_to_dot
    from .peg.printer import peg_to_dot
    d.pictures.append(("PEG", peg_to_dot(view.peg)))
    rep, sat = view.report, view.saturation
    if sat is None:
        d.facts.append(("saturation", "none: " + "; ".join(rep.notes if rep else [])))
        return
    d.facts.append(("rules fired", ", ".join(f"{n} ({sat.run.rules[n].applied})" for n in sat.run.fired())
                    or "none"))
    d.facts.append(("saturation", str(sat.run)))
    selected = rep.selected if rep is not None else ()
    if rep is not None:
        d.facts.append(("extraction", rep.describe()))
    d.pictures.append(("E-PEG (the extraction's choice filled)", egraph_to_dot(sat.egraph, sat.root,
                                                                              view.peg.name, selected)))
    if view.chosen is not None:
        d.pictures.append(("chosen PEG", peg_to_dot(view.chosen)))


def validate_details(report: ValidationReport, orig: InputSet, opt: InputSet,
                     mapping: dict[str, str]) -> dict[str, Detail]:
    """Every pair's bytecode on both sides (``mapping``: ``--map``'s items, class and member renames) and its proof
    or counterexample (:func:`pair_facts`). OPT's side of a pair is looked up under its new names: the class the map
    gives, the member's new name, the descriptor with renamed classes."""
    from .validate.pairing import rename_descriptor, split_map
    names = {p.class_name for p in report.pairs}
    before = _classes(orig, names)
    classes, members = split_map(mapping, before)
    after = _classes(opt, {classes.get(n, n) for n in names})
    out: dict[str, Detail] = {}
    for p in report.pairs:
        key = row_key(p.class_name, p.name, p.descriptor)
        out[key] = Detail(key, method_listing(before.get(p.class_name), p.name, p.descriptor),
                          method_listing(after.get(classes.get(p.class_name, p.class_name)),
                                         members.get((p.class_name, p.name), p.name),
                                         rename_descriptor(p.descriptor, classes)),
                          pair_facts(p))
    return out
