"""The ``peggy-jvm`` command line (contract: DESIGN section 8, docs/cli.md).

Owns: argument parsing (click), progress and summary output (rich on a terminal, plain paced lines otherwise:
:class:`_ProgressDisplay`), the JSON report file, turning every bad input into one line
``peggy-jvm: error: <file>: <what>`` with exit code 2 and no traceback, and turning SIGINT/SIGTERM into one line
``peggy-jvm: interrupted (SIGINT)`` with exit code 130/143 (:mod:`peggy_jvm.interrupt`; the pipeline stops its
workers and the archive layer leaves no temporaries on the way out).
Inputs: argv, the environment variable :data:`PROGRESS_INTERVAL_ENV`. Outputs: files written through
:mod:`peggy_jvm.pipeline`, text on stdout/stderr, exit codes.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import click

from .archive import (Form, InputError, InputKind, Output, check_outputs, os_error_words, read_input,
                      write_file)
from .budget import DEFAULT_METHOD_TIMEOUT
from .choices import ASSUMPTIONS, IMPLEMENTED_STAGES, Goal, SizeBudget, Stage
from .classfile.errors import ClassFileError
from .dask_executor import SCHEDULER_ENV, ExecutorError
from .interrupt import Interrupted, catching_signals

# The optimizer (pipeline, rules, networkx) and the result cache are imported by the commands that use them:
# `--help`, `--version`, usage errors and `disasm` start in a tenth of the time (tests/test_cli.py holds it).
if TYPE_CHECKING:
    import rich.progress

    from .cache import ResultCache
    from .classfile.model import ClassFile, MethodInfo
    from .pipeline import Progress
    from .rules.inline import CalleeSource
    from .rules.policy import RuleOptions
    from .rules.check import CheckResult

EXIT_BAD_INPUT = 2
#: seconds between plain progress lines when stderr is not a terminal (docs/cli.md); 0 turns them off
PROGRESS_INTERVAL_ENV = "PEGGY_JVM_PROGRESS_INTERVAL"
DEFAULT_PROGRESS_INTERVAL = 30.0
#: inputs smaller than this (classes, pairs) get no progress bar on a terminal: they are done before it helps
MIN_BAR_TOTAL = 20


def fail(where: str, what: str) -> "click.exceptions.Exit":
    click.echo(f"peggy-jvm: error: {where}: {what}", err=True)
    return click.exceptions.Exit(EXIT_BAD_INPUT)


class _OneLineErrors(click.Group):
    """click, except that usage errors are one line like every other error (``peggy-jvm: error: usage: ...``)."""

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            result = self._main_interruptible(*args, **kwargs)
        except click.ClickException as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # a bare `peggy-jvm`: the help text is the answer
                click.echo(e.format_message(), err=True)
                sys.exit(e.exit_code)
            hint = f" (see '{e.ctx.command_path} --help')" if isinstance(e, click.UsageError) and e.ctx else ""
            click.echo(f"peggy-jvm: error: usage: {e.format_message()}{hint}", err=True)
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("peggy-jvm: error: aborted", err=True)
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)

    def _main_interruptible(self, *args, **kwargs):
        """SIGINT and SIGTERM end the command with one line and 128 + the signal's number; the clean-up (workers
        stopped, temporaries removed) runs while the exception comes here."""
        with catching_signals():
            try:
                return super().main(*args, **kwargs)
            except Interrupted as e:
                click.echo(f"peggy-jvm: interrupted ({e.name})", err=True)
                sys.exit(e.exit_code)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="peggy-jvm")
def main() -> None:
    """peggy-jvm: optimize and validate JVM bytecode by equality saturation."""


def _split_classpath(cp: str | None) -> list[Path]:
    return [Path(p) for p in cp.split(os.pathsep) if p] if cp else []


def _cache_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--cache DIR`` and ``--no-cache`` of ``optimize`` (:func:`_result_cache`)."""
    command = click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")(command)
    return click.option(
        "--cache", "cache_dir", type=click.Path(path_type=Path),
        help="Result cache directory (default: $PEGGY_JVM_CACHE, where the value 'off' means no cache; else "
             "$XDG_CACHE_HOME/peggy-jvm/results or ~/.cache/peggy-jvm/results): a class or pair seen before with "
             "the same bytes, hierarchy facts, rules, options and tool version is not computed again. "
             "--no-cache: none.")(command)


@main.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Output class, jar or directory.")
@click.option("--stage", type=click.Choice([s.value for s in Stage]), default=Stage.FULL.value, show_default=True,
              help="Stop the pipeline after this stage.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write the per-method report here.")
@click.option("--html", "html_path", type=click.Path(path_type=Path),
              help="Write an HTML report here: summary, sortable table of methods, and for the rewritten methods "
                   "(and the largest E-PEGs) bytecode before/after, rules fired and pictures.")
@click.option("--classpath", help="Jars and directories (os.pathsep-separated) for the class hierarchy.")
@click.option("--method-timeout", type=click.FloatRange(min=0.001), default=DEFAULT_METHOD_TIMEOUT,
              show_default=True,
              help="Per-method wall-clock safety net in seconds: a method over it keeps its original code "
                   "(fallback, reason 'timeout'). What the optimizer does is bounded by work, not time (the "
                   "same input gives the same output on any machine): this only catches runaway methods.")
@click.option("--jobs", type=click.IntRange(1, 256), default=1, show_default=True, help="Worker processes.")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where the classes run: local worker processes (--jobs), or a Dask cluster (--scheduler; "
                   "needs pip install 'peggy-jvm[dask]'). The output is the same either way.")
@click.option("--scheduler", metavar="ADDRESS",
              help="With --executor dask: the scheduler's address, e.g. tcp://host:8786 (default: "
                   "$DASK_SCHEDULER_ADDRESS).")
@click.option("--axioms", "axioms", multiple=True, type=click.Path(path_type=Path),
              help="Full stage: also saturate with the rules of this axiom file or directory of *.ax files "
                   "(repeatable); each is checked (types, soundness fuzzer) before any work starts.")
@click.option("--no-default-axioms", is_flag=True,
              help="Full stage: leave out the bundled axioms and turn the built-in rules off (--rules +fold "
                   "turns one on); needs --axioms.")
@click.option("--rules", "switches", multiple=True, metavar="+GROUP,-GROUP,...",
              help="Full stage: switch rule groups (or prefixes, or single rules) on (+) or off (-), in order.")
@click.option("--goal", type=click.Choice([g.value for g in Goal]), default=Goal.SPEED.value, show_default=True,
              help="Full stage: keep a rewrite whose emitted code is cheaper and grows no more than it gains "
                   "(speed), or smaller and no costlier (size).")
@click.option("--size-budget", type=click.Choice([b.value for b in SizeBudget]), default=SizeBudget.INPUT.value,
              show_default=True,
              help="Full stage, --goal speed: hold the rewritten methods of the whole input together to their "
                   "original bytes, withdrawing the rewrites that gain the least (input), or only each method to "
                   "its own allowance (method).")
@_cache_options
def optimize(input_path: Path, output: Path | None, stage: str, json_path: Path | None, html_path: Path | None,
             classpath: str | None, method_timeout: float | None, jobs: int, executor: str,
             scheduler: str | None, axioms: tuple[Path, ...], no_default_axioms: bool, switches: tuple[str, ...],
             goal: str, size_budget: str, cache_dir: Path | None, no_cache: bool) -> None:
    """Optimize every method of INPUT (.class, .jar or directory) and write the result."""
    from .pipeline import optimize_input

    st = Stage(stage)
    if executor == "dask":
        scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
        if scheduler is None:
            raise fail("--executor dask", f"needs --scheduler ADDRESS (or ${SCHEDULER_ENV})")
    elif scheduler is not None:
        raise fail("--scheduler", "only with --executor dask")
    if st not in IMPLEMENTED_STAGES:
        available = ", ".join(s.value for s in IMPLEMENTED_STAGES)
        raise fail(str(input_path), f"stage '{st.value}' is not available yet (available: {available})")
    rules = _rule_options(axioms, no_default_axioms, switches, st)
    display = _ProgressDisplay("optimize", "classes")

    def progress(p: Progress) -> None:
        left = (p.bytes_total - p.bytes_done) / p.bytes_done if p.bytes_done else None
        display.update(p.classes_done, p.classes, f"{p.methods} methods, {p.rewritten} rewritten", left)

    reports = [Output(path, form) for path, form in ((json_path, Form.JSON), (html_path, Form.HTML))
               if path is not None]
    try:
        target, report = optimize_input(input_path, output, st, _split_classpath(classpath), jobs,
                                        method_timeout, progress, reports, goal=Goal(goal), rules=rules,
                                        cache=_result_cache(cache_dir, no_cache), scheduler=scheduler,
                                        size_budget=SizeBudget(size_budget))
    except InputError as e:
        raise fail(e.path, e.message) from None
    except ExecutorError as e:
        raise fail("--executor dask", str(e)) from None
    except OSError as e:  # reading the input (write errors are OutputErrors naming the output)
        raise fail(e.filename or str(input_path), os_error_words(e)) from None
    finally:
        display.close()
    for w in report.warnings:
        click.echo(f"peggy-jvm: warning: {w}", err=True)
    for out in reports:
        if out.form is Form.HTML:
            _write_report(out, _optimize_html(input_path, target, report, classpath, rules, Goal(goal)))
        else:
            _write_report(out, json.dumps(report.to_json(), indent=1))
    s = report.summary()
    withdrawn = f" ({s['withdrawn']} withdrawn by the input size budget)" if s["withdrawn"] else ""
    click.echo(f"{target}: {s['classes']} classes, {s['methods']} methods: {s['rewritten']} rewritten, "
               f"{s['unchanged']} unchanged{withdrawn}, {s['fallback']} fell back ({s['seconds']:.2f} s)")
    if s["rewritten"]:
        # the emitted cost is priced by the full stage only (the earlier stages do not decide by it)
        cost = (f", emitted cost {_change(s['emitted_cost_before'], s['emitted_cost_after'])}"
                if s["emitted_cost_before"] else "")
        click.echo(f"  rewritten methods: {_change(s['rewritten_bytes_before'], s['rewritten_bytes_after'])} bytes"
                   f"{cost}")
    for m in report.methods:
        if m.status == "fallback":
            click.echo(f"  fallback {m.class_name}.{m.name}{m.descriptor}: {m.reason}")


def _optimize_html(input_path: Path, target: Path, report, classpath: str | None, rules: RuleOptions | None,
                   goal: Goal) -> str:
    """``optimize --html``'s page (html_report.py): the details are made here, after the run, for the methods
    the report pictures."""
    from .classfile.hierarchy import ClassHierarchy
    from .html_report import optimize_details, optimize_page
    from .pipeline import classes_by_name
    try:
        original, optimized = read_input(input_path), read_input(target)
        hierarchy = ClassHierarchy(_split_classpath(classpath))
        hierarchy.add_lazy_classes(classes_by_name(original))
        details = optimize_details(report, original, optimized, hierarchy, rules, goal)
    except InputError as e:
        raise fail(e.path, e.message) from None
    except ClassFileError as e:
        raise fail(str(target), str(e)) from None
    return optimize_page(report, details, f"peggy-jvm optimize {input_path} -> {target}")


def _change(before: int, after: int) -> str:
    """``before -> after (+x.x%)``."""
    pct = f" ({(after - before) / before:+.1%})" if before else ""
    return f"{before} -> {after}{pct}"


@main.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--method", "method", help="Only this method (name or name+descriptor).")
def disasm(file: Path, method: str | None) -> None:
    """Print a javap-like listing of FILE.class, including stack-map frames."""
    from .classfile.disasm import disassemble
    from .classfile.reader import read_class

    try:
        inp = read_input(file)
        if inp.kind is not InputKind.CLASS:
            raise InputError(str(file), "disasm takes a single .class file")
        cf = read_class(inp.entries[0].data)
        if method is not None:
            name, paren, desc = method.partition("(")  # Class.name and a/b/C.name select by name too
            method = name.replace("/", ".").rsplit(".", 1)[-1] + paren + desc
            if not any(m.name == method or m.name + m.descriptor == method for m in cf.methods):
                raise InputError(str(file), f"no method {method!r} in class {cf.name}")
        lines = list(disassemble(cf, method))
    except InputError as e:
        raise fail(e.path, e.message) from None
    except ClassFileError as e:
        raise fail(str(file), str(e)) from None
    sys.stdout.write("\n".join(lines) + "\n")


@main.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("--method", "method", required=True, help="Method name, name+descriptor, or Class.name.")
@click.option("--ir", "what", flag_value="ir", default=True, help="Show the method's IR (default).")
@click.option("--peg", "what", flag_value="peg", help="Show the method's PEG (theta back edges dashed in DOT).")
@click.option("--epeg", "what", flag_value="epeg",
              help="Show the method's E-PEG as the optimizer saturates it (its rules and work budget).")
@click.option("--extracted", is_flag=True,
              help="With --epeg: also the PEG the optimizer's extraction chose, its e-nodes marked (* and, in "
                   "DOT, filled).")
@click.option("--axioms", "axioms", multiple=True, type=click.Path(path_type=Path),
              help="With --epeg: as optimize's --axioms (rules added to the optimizer's; repeatable).")
@click.option("--no-default-axioms", is_flag=True, help="With --epeg: as optimize's --no-default-axioms.")
@click.option("--rules", "switches", multiple=True, metavar="+GROUP,-GROUP,...",
              help="With --epeg: as optimize's --rules.")
@click.option("--goal", type=click.Choice([g.value for g in Goal]), default=Goal.SPEED.value, show_default=True,
              help="With --extracted: the goal extraction prices for, as optimize's --goal.")
@click.option("--dot", "dot", type=click.Path(path_type=Path), help="Also write a Graphviz DOT file here.")
@click.option("--classpath", help="Jars and directories (os.pathsep-separated) for the class hierarchy.")
def show(input_path: Path, method: str, what: str, dot: Path | None, classpath: str | None,
         axioms: tuple[Path, ...], no_default_axioms: bool, switches: tuple[str, ...], goal: str,
         extracted: bool) -> None:
    """Show a method of INPUT (.class, .jar or directory) in an intermediate form."""
    from .classfile.hierarchy import ClassHierarchy
    from .classfile.reader import read_class
    from .ir.lift import LiftError, lift_method
    from .ir.printer import format_method, to_dot
    from .peg.build import PegUnsupported, build_peg
    from .peg.printer import format_peg, peg_to_dot
    from .pipeline import classes_by_name, inlinable_classes, optimizer_callees

    if (axioms or no_default_axioms or switches or extracted) and what != "epeg":
        raise click.UsageError("--axioms, --no-default-axioms, --rules and --extracted apply to --epeg only")
    rule_options = _rule_options(axioms, no_default_axioms, switches, Stage.FULL) if what == "epeg" else None

    cls_part, _, name_part = method.partition("(")[0].replace("/", ".").rpartition(".")
    selector = name_part + method[len(method.partition("(")[0]):]
    try:
        if dot is not None:
            check_outputs([input_path], [Output(dot, Form.DOT)])
        inp = read_input(input_path)
        hierarchy = ClassHierarchy(_split_classpath(classpath))
        hierarchy.add_lazy_classes(classes_by_name(inp))
        program = inlinable_classes(inp)
        found: list[tuple[ClassFile, MethodInfo]] = []
        for entry in inp.entries:
            if not entry.is_class:
                continue
            cf = read_class(entry.data)
            if cls_part and cf.name.replace("/", ".") != cls_part and cf.name.rsplit("/", 1)[-1] != cls_part:
                continue
            found.extend((cf, m) for m in cf.methods if m.name == selector or m.name + m.descriptor == selector)
        if not found:
            raise InputError(str(input_path), f"no method {method!r}")
        out = []
        graphs = []
        for cf, m in found:
            if m.code_attribute() is None:
                out.append(f"method {cf.name}.{m.name}{m.descriptor}: no code")
                continue
            ir = lift_method(cf, m, hierarchy)
            if what == "peg":
                peg = build_peg(ir)
                out.extend(format_peg(peg))
                graphs.append(peg_to_dot(peg))
            elif what == "epeg":
                text, dots = _show_epeg(ir, rule_options, Goal(goal), extracted,
                                        optimizer_callees(cf, m, hierarchy, program, Goal(goal)))
                out.extend(text)
                graphs.extend(dots)
            else:
                out.extend(format_method(ir))
                graphs.append(to_dot(ir))
    except InputError as e:
        raise fail(e.path, e.message) from None
    except ClassFileError as e:
        raise fail(str(input_path), str(e)) from None
    except LiftError as e:
        raise fail(str(input_path), f"cannot lift: {e}") from None
    except PegUnsupported as e:
        raise fail(str(input_path), f"no PEG: {e}") from None
    sys.stdout.write("\n".join(out) + "\n")
    if dot is not None:
        _write_report(Output(dot, Form.DOT), "".join(graphs))


def _show_epeg(ir, rules: RuleOptions | None, goal: Goal, extracted: bool, callees: CalleeSource | None = None
               ) -> tuple[list[str], list[str]]:
    """``show --epeg``: the E-PEG of the method as the full stage saturates it (``callees``: what it may
    inline, the input's classes), and with ``extracted`` the extraction's choice
    (``pipeline.full_stage_view``). Text lines and DOT graphs."""
    from .epeg.printer import egraph_to_dot, format_egraph
    from .peg.printer import format_peg, peg_to_dot
    from .pipeline import full_stage_view

    view = full_stage_view(ir, rules, goal, extracted, callees=callees)
    rep, sat = view.report, view.saturation
    if sat is None:  # extraction gave up before saturating (its checker could not handle the original PEG)
        return [f"; not saturated: {'; '.join(rep.notes if rep else [])}"], []
    selected = rep.selected if rep is not None else ()
    text = format_egraph(sat.egraph, sat.root, selected) + [f"  ; saturation: {sat.run}"]
    dots = [egraph_to_dot(sat.egraph, sat.root, view.peg.name, selected)]
    if rep is not None:
        text.append(f"  ; extraction: {rep.describe()}")
    if view.chosen is not None:
        text.extend(format_peg(view.chosen))
        dots.append(peg_to_dot(view.chosen))
    return text, dots


def _validate_html(orig_path: Path, opt_path: Path, report, mapping: dict[str, str]) -> str:
    """``validate --html``'s page (html_report.py)."""
    from .html_report import validate_details, validate_page
    try:
        details = validate_details(report, read_input(orig_path), read_input(opt_path), mapping)
    except InputError as e:
        raise fail(e.path, e.message) from None
    except ClassFileError as e:
        raise fail(str(orig_path), str(e)) from None
    return validate_page(report, details, f"peggy-jvm validate {orig_path} {opt_path}")


@main.command()
@click.argument("orig_path", metavar="ORIG", type=click.Path(path_type=Path))
@click.argument("opt_path", metavar="OPT", type=click.Path(path_type=Path))
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write the per-pair report here.")
@click.option("--junit", "junit_path", type=click.Path(path_type=Path), help="Write JUnit XML here (one testcase per pair).")
@click.option("--html", "html_path", type=click.Path(path_type=Path),
              help="Write an HTML report here: summary, sortable table of pairs, each pair's bytecode on both sides "
                   "with the proof's axioms or the counterexample.")
@click.option("--map", "class_map", multiple=True, metavar="OLDCLASS=NEWCLASS",
              help="ORIG's class OLDCLASS is OPT's NEWCLASS (dotted or internal names; repeatable); "
                   "Cls.old=Cls.new renames a method or field of Cls.")
@click.option("--method-timeout", type=click.FloatRange(min=0.01), default=10.0, show_default=True,
              help="Budget per method pair in seconds (proof, then counterexample search and its JVM runs).")
@click.option("--explain", is_flag=True, help="Report which axioms each proof used.")
@click.option("--axioms", type=click.Path(path_type=Path), help="Axiom directory or file (default: the bundled axioms/).")
@click.option("--assume", "assume", multiple=True, type=click.Choice(sorted(ASSUMPTIONS)),
              help="Also prove what holds under this assumption (repeatable); proofs that need it say so. "
                   "strings-by-value: Strings made by concatenation are compared by value, never by identity. "
                   "closed-world: no class outside the input extends its classes (a virtual call of a method the "
                   "input does not override runs it).")
@click.option("--rules", "switches", multiple=True, metavar="+GROUP,-GROUP,...",
              help="Switch rule groups (or rules) on or off for the proofs, as optimize's --rules: e.g. "
                   "+peg.loop.strength.varying for hand-reduced loops with a varying step.")
@click.option("--all", "every", is_flag=True,
              help="List every pair in the table (default: only the pairs not proved equivalent).")
def validate(orig_path: Path, opt_path: Path, json_path: Path | None, junit_path: Path | None,
             html_path: Path | None, class_map: tuple[str, ...], method_timeout: float, explain: bool,
             axioms: Path | None, assume: tuple[str, ...], switches: tuple[str, ...], every: bool) -> int:
    """Check that OPT is a correct translation of ORIG, method by method (exit 0/1/3, 2 on bad input)."""
    from rich.console import Console

    from .validate import ValidateOptions, validate_inputs
    from .validate.pairing import parse_class_map
    from .validate.report import render_table, shown_pairs

    try:
        mapping = parse_class_map(class_map)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    rules = None  # validate's default rules, the optimizer's own proof tried first (validate/driver.py)
    if axioms is not None or switches:
        rule_set = _load_axioms(axioms)
        if axioms is None:  # switched from validate's defaults, which hold the optimizer's rules
            from .rules.policy import with_safe_groups
            with_safe_groups(rule_set)
        for spec in switches:
            try:
                rule_set.switch(spec)
            except ValueError as e:
                raise click.UsageError(f"--rules: {e}") from None
        rules = rule_set.active()
    reports = [Output(path, form) for path, form in ((json_path, Form.JSON), (junit_path, Form.XML),
                                                     (html_path, Form.HTML)) if path is not None]
    display = _ProgressDisplay("validate", "pairs")

    def progress(done: int, total: int, proved: int) -> None:
        display.update(done, total, f"{proved} proved", (total - done) / done)

    try:
        check_outputs([orig_path, opt_path], reports)
        # the HTML report shows each proof's axioms: explained whenever it is asked for
        report = validate_inputs(orig_path, opt_path, ValidateOptions(mapping, method_timeout,
                                                                      explain or html_path is not None, rules,
                                                                      assumptions=assume),
                                 progress)
        report.explain = explain  # the JSON report's keys stay what the options say
    except InputError as e:
        raise fail(e.path, e.message) from None
    except ClassFileError as e:
        raise fail(str(orig_path), str(e)) from None
    except OSError as e:
        raise fail(e.filename or str(orig_path), os_error_words(e)) from None
    finally:
        display.close()
    for out in reports:
        if out.form is Form.HTML:
            _write_report(out, _validate_html(orig_path, opt_path, report, mapping))
        else:
            _write_report(out, json.dumps(report.to_json(), indent=1) if out.form is Form.JSON
                          else report.to_junit())
    if shown_pairs(report, every):
        Console(width=max(100, Console().width)).print(render_table(report, every))
    s = report.summary()
    for u in report.unpaired:
        click.echo(f"unpaired: {u}")
    relying = f" ({report.relying()} relying on --assume)" if report.assumptions else ""
    click.echo(f"{len(report.pairs)} pairs: {s['equivalent']} equivalent{relying}, {s['not_equivalent']} not "
               f"equivalent, {s['unknown']} unknown; {report.skipped} without code skipped, "
               f"{len(report.unpaired)} unpaired ({report.seconds:.2f} s)")
    if s["equivalent"] and not every:
        plural = "s" if s["equivalent"] != 1 else ""
        click.echo(f"({s['equivalent']} equivalent pair{plural} not listed; --all lists every pair)")
    return report.exit_code()


class _ProgressDisplay:
    """A long command's progress on stderr. On a terminal: a rich bar (inputs of :data:`MIN_BAR_TOTAL` items or
    more) with the counts, the time elapsed and the estimate of the time left, gone when the command ends.
    Otherwise (a CI log, a pipe): one plain line every :data:`PROGRESS_INTERVAL_ENV` seconds (the first after
    that long, so short runs print none), with no control sequences: ``peggy-jvm: optimize: 120/2000 classes,
    3400 methods, 560 rewritten, 1m30s elapsed, about 24m12s left``."""

    def __init__(self, command: str, unit: str) -> None:
        from rich.console import Console

        self.command, self.unit = command, unit
        self.console = Console(stderr=True)
        self.started = self.last = time.monotonic()
        self.interval = _progress_interval()
        self.bar: rich.progress.Progress | None = None
        self.task: rich.progress.TaskID | None = None

    def update(self, done: int, total: int, detail: str, left_per_elapsed: float | None) -> None:
        """``left_per_elapsed``: the time still to go as a multiple of the time so far (None: unknown yet)."""
        now = time.monotonic()
        elapsed = now - self.started
        left = f"about {_duration(elapsed * left_per_elapsed)} left" if left_per_elapsed is not None else ""
        if self.console.is_terminal:
            self._update_bar(done, total, detail, left)
            return
        if self.interval <= 0 or now - self.last < self.interval:
            return
        self.last = now
        click.echo(f"peggy-jvm: {self.command}: {done}/{total} {self.unit}, {detail}, {_duration(elapsed)} "
                   f"elapsed{', ' + left if left else ''}", err=True)

    def _update_bar(self, done: int, total: int, detail: str, left: str) -> None:
        if total < MIN_BAR_TOTAL:
            return
        if self.bar is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
            # the time left is the caller's estimate (optimize: from the class bytes done), not rich's rate of
            # items: one large class would make an item rate wrong for minutes
            self.bar = Progress(TextColumn(f"[bold]{self.command}"), BarColumn(), MofNCompleteColumn(),
                                TextColumn(self.unit), TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                                TextColumn("{task.fields[left]}"), console=self.console, transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.unit, total=total, detail=detail, left=left)
        assert self.task is not None  # set with the bar
        self.bar.update(self.task, completed=done, detail=detail, left=left)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _progress_interval() -> float:
    raw = os.environ.get(PROGRESS_INTERVAL_ENV)
    if raw is None:
        return DEFAULT_PROGRESS_INTERVAL
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:  # NaN too
        raise fail(PROGRESS_INTERVAL_ENV, f"not a number of seconds (0 or more): {raw!r}")
    return value


def _duration(seconds: float) -> str:
    """``42s``, ``4m05s``, ``1h02m``: short enough for a log line, as exact as a person reading it needs."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _write_report(out: Output, text: str) -> None:
    try:
        write_file(out, lambda f: f.write(text.encode("utf-8")))
    except InputError as e:
        raise fail(e.path, e.message) from None


def _load_axioms(axioms: Path | None):
    """The rule set of ``axioms`` (a directory of ``*.ax`` files or one file; default: the bundled axioms)."""
    from .rules import default_rules, load_rules
    if axioms is None:
        return default_rules()
    _check_axiom_path(axioms)
    with _axiom_errors():
        return load_rules(axioms)


def _check_axiom_path(path: Path) -> None:
    from .rules.library import axiom_files
    if not path.exists():
        raise fail(str(path), "no such file or directory")
    if not axiom_files(path):
        raise fail(str(path), "no axiom files (*.ax) in this directory")


@contextlib.contextmanager
def _axiom_errors() -> Iterator[None]:
    """Loading axiom files: a problem in one is ``peggy-jvm: error: FILE:LINE:COL: what``, exit 2."""
    from .rules import AxiomError
    try:
        yield
    except AxiomError as e:
        raise fail(str(e.pos), e.message) from None
    except OSError as e:
        raise fail(e.filename or "axioms", os_error_words(e)) from None


def _result_cache(cache_dir: Path | None, no_cache: bool) -> ResultCache | None:
    """``--cache DIR`` / ``--no-cache`` (cache.py). A path that is not a directory is a one-line error; a directory
    that cannot be written only means nothing is stored (the run is the same without the cache)."""
    if no_cache:
        if cache_dir is not None:
            raise click.UsageError("--cache and --no-cache exclude each other")
        return None
    from .cache import ResultCache, default_dir

    root = cache_dir if cache_dir is not None else default_dir()
    if root is None:
        return None
    if root.exists() and not root.is_dir():
        raise fail(str(root), "the cache is not a directory")
    return ResultCache(root)


def _rule_options(axioms: tuple[Path, ...], no_defaults: bool, switches: tuple[str, ...],
                  stage: Stage) -> RuleOptions | None:
    """``optimize``'s rule options, loaded and checked here, before any work starts (exit 2 on any problem):
    parsed, typed, names unique with the defaults, switches naming known groups, and every active user rule
    fuzzed (rules/check.py): an unsound one is refused. None when the user asked for nothing."""
    if not axioms and not no_defaults and not switches:
        return None
    if stage is not Stage.FULL:
        raise click.UsageError("--axioms, --no-default-axioms and --rules apply to --stage full only")
    if no_defaults and not axioms:
        raise click.UsageError("--no-default-axioms needs --axioms (no rules would be left)")
    from .rules.policy import RuleOptions, load_rule_options
    for p in axioms:
        _check_axiom_path(p)
    options = RuleOptions(tuple(axioms), not no_defaults, switches)
    with _axiom_errors():
        try:
            _, user = load_rule_options(options)
        except ValueError as e:
            raise click.UsageError(f"--rules: {e}") from None
    for u in user:
        if u.check.status == "unsound":
            raise fail(str(u.ast.pos), f"rule {u.ast.name} is unsound: {_counterexample(u.check)} "
                                       "(see 'peggy-jvm check-axioms')")
    return options


def _counterexample(res: CheckResult) -> str:
    values = ", ".join(f"{k} = {v!r}" for k, v in res.counterexample.items())
    return f"{values}: {res.reason}" if values else res.reason


@main.command("check-axioms")
@click.argument("paths", metavar="PATH...", nargs=-1, required=True, type=click.Path(path_type=Path))
def check_axioms(paths: tuple[Path, ...]) -> int:
    """Parse, type-check and fuzz every rule of the axiom files PATH (files, or directories of *.ax files).

    One line per rule (sound, UNSOUND with the counterexample, or exempt with the reason), then a summary.
    Exit 0 when every rule is sound or exempt, 1 when some rule is unsound, 2 on a parse or type error or a
    bad path."""
    from .rules.check import check_rule
    from .rules.library import axiom_files, load_rules, parse_axiom_files
    for p in paths:
        _check_axiom_path(p)
    files = [f for p in paths for f in axiom_files(p)]
    with _axiom_errors():
        load_rules(files, builtins=False)  # types and unique names, each error at its file:line:col
        asts = [a for f in parse_axiom_files(files) for a in f.rules]
        results = [(ast, check_rule(ast)) for ast in asts]  # a rule the checker cannot take: an error, no lines
    counts = {"sound": 0, "unsound": 0, "exempt": 0}
    for ast, res in results:
        counts[res.status] += 1
        if res.status == "sound":
            what = f"sound    {ast.name} ({res.cases} cases)"
        elif res.status == "unsound":
            what = f"UNSOUND  {ast.name}: {_counterexample(res)}"
        else:
            what = f"exempt   {ast.name}: {res.reason}"
        click.echo(f"{ast.pos}: {what}")
    click.echo(f"{len(asts)} rules: {counts['sound']} sound, {counts['unsound']} unsound, "
               f"{counts['exempt']} exempt")
    return 1 if counts["unsound"] else 0


if __name__ == "__main__":  # pragma: no cover
    main()
