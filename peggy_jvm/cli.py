"""The ``peggy-jvm`` command line (contract: DESIGN section 8, docs/cli.md).

Owns: argument parsing (click), progress and summary output (rich), the JSON report file, and turning every
bad input into one line ``peggy-jvm: error: <file>: <what>`` with exit code 2 and no traceback.
Inputs: argv. Outputs: files written through :mod:`peggy_jvm.pipeline`, text on stdout/stderr, exit codes.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from .archive import (Form, InputError, InputKind, Output, check_outputs, os_error_words, read_input,
                      write_file)
from .classfile.errors import ClassFileError
from .codecost import Goal
from .pipeline import IMPLEMENTED_STAGES, Stage, classes_by_name, optimize_input
from .rules.strings import ASSUMPTIONS

EXIT_BAD_INPUT = 2


def fail(where: str, what: str) -> "click.exceptions.Exit":
    click.echo(f"peggy-jvm: error: {where}: {what}", err=True)
    return click.exceptions.Exit(EXIT_BAD_INPUT)


class _OneLineErrors(click.Group):
    """click, except that usage errors are one line like every other error (``peggy-jvm: error: usage: ...``)."""

    def main(self, *args, **kwargs):  # type: ignore[override]
        kwargs["standalone_mode"] = False
        try:
            result = super().main(*args, **kwargs)
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


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="peggy-jvm")
def main() -> None:
    """peggy-jvm: optimize and validate JVM bytecode by equality saturation."""


def _split_classpath(cp: str | None) -> list[Path]:
    return [Path(p) for p in cp.split(os.pathsep) if p] if cp else []


@main.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Output class, jar or directory.")
@click.option("--stage", type=click.Choice([s.value for s in Stage]), default=Stage.FULL.value, show_default=True,
              help="Stop the pipeline after this stage.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write the per-method report here.")
@click.option("--classpath", help="Jars and directories (os.pathsep-separated) for the class hierarchy.")
@click.option("--method-timeout", type=float, default=None,
              help="Per-method budget in seconds: a method over it keeps its original code (fallback, reason "
                   "'timeout'). The full stage splits it over saturation, extraction and the self-check "
                   "(without this option it splits 2 s the same way, but never falls back for time).")
@click.option("--jobs", type=click.IntRange(1, 256), default=1, show_default=True, help="Worker processes.")
@click.option("--axioms", type=click.Path(path_type=Path), help="Directory of axiom files (later stages).")
@click.option("--goal", type=click.Choice([g.value for g in Goal]), default=Goal.SPEED.value, show_default=True,
              help="Full stage: keep a rewrite whose emitted code is cheaper and no larger (speed), or smaller "
                   "and no costlier (size).")
def optimize(input_path: Path, output: Path | None, stage: str, json_path: Path | None, classpath: str | None,
             method_timeout: float | None, jobs: int, axioms: Path | None, goal: str) -> None:
    """Optimize every method of INPUT (.class, .jar or directory) and write the result."""
    st = Stage(stage)
    if st not in IMPLEMENTED_STAGES:
        available = ", ".join(s.value for s in IMPLEMENTED_STAGES)
        raise fail(str(input_path), f"stage '{st.value}' is not available yet (available: {available})")
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    progress_bar = Progress(TextColumn("[bold]optimize"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=console, transient=True, disable=not console.is_terminal)
    task = None

    def progress(done: int, total: int) -> None:
        nonlocal task
        if total < 20:
            return
        if task is None:
            progress_bar.start()
            task = progress_bar.add_task("classes", total=total)
        progress_bar.update(task, completed=done)

    reports = [Output(json_path, Form.JSON)] if json_path is not None else []
    try:
        target, report = optimize_input(input_path, output, st, _split_classpath(classpath), jobs,
                                        method_timeout, progress, reports, goal=Goal(goal))
    except InputError as e:
        raise fail(e.path, e.message) from None
    except OSError as e:  # reading the input (write errors are OutputErrors naming the output)
        raise fail(e.filename or str(input_path), os_error_words(e)) from None
    finally:
        if task is not None:
            progress_bar.stop()
    for w in report.warnings:
        click.echo(f"peggy-jvm: warning: {w}", err=True)
    for out in reports:
        _write_report(out, json.dumps(report.to_json(), indent=1))
    s = report.summary()
    click.echo(f"{target}: {s['classes']} classes, {s['methods']} methods: {s['rewritten']} rewritten, "
               f"{s['unchanged']} unchanged, {s['fallback']} fell back ({s['seconds']:.2f} s)")
    if s["rewritten"]:
        click.echo(f"  rewritten methods: {_change(s['rewritten_bytes_before'], s['rewritten_bytes_after'])} bytes, "
                   f"emitted cost {_change(s['emitted_cost_before'], s['emitted_cost_after'])}")
    for m in report.methods:
        if m.status == "fallback":
            click.echo(f"  fallback {m.class_name}.{m.name}{m.descriptor}: {m.reason}")


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
@click.option("--epeg", "what", flag_value="epeg", help="Show the method's E-PEG saturated with the axioms.")
@click.option("--axioms", "axioms", type=click.Path(path_type=Path),
              help="Axiom directory or file for --epeg (default: the bundled axioms/).")
@click.option("--dot", "dot", type=click.Path(path_type=Path), help="Also write a Graphviz DOT file here.")
@click.option("--classpath", help="Jars and directories (os.pathsep-separated) for the class hierarchy.")
def show(input_path: Path, method: str, what: str, dot: Path | None, classpath: str | None,
         axioms: Path | None) -> None:
    """Show a method of INPUT (.class, .jar or directory) in an intermediate form."""
    from .classfile.hierarchy import ClassHierarchy
    from .classfile.reader import read_class
    from .ir.lift import LiftError, lift_method
    from .ir.printer import format_method, to_dot
    from .peg.build import PegUnsupported, build_peg
    from .peg.printer import format_peg, peg_to_dot
    from .egraph import EGraph, Limits, Runner
    from .egraph.printer import egraph_to_dot, format_egraph

    cls_part, _, name_part = method.partition("(")[0].replace("/", ".").rpartition(".")
    selector = name_part + method[len(method.partition("(")[0]):]
    try:
        if dot is not None:
            check_outputs([input_path], [Output(dot, Form.DOT)])
        inp = read_input(input_path)
        hierarchy = ClassHierarchy(_split_classpath(classpath))
        hierarchy.add_lazy_classes(classes_by_name(inp))
        found = []
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
        rules = None
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
                peg = build_peg(ir)
                if rules is None:
                    rules = _load_axioms(axioms)
                eg = EGraph()
                ids = eg.add_peg(peg)
                report = Runner(rules.active(), Limits()).run(eg)
                out.extend(format_egraph(eg, ids[peg.root]))
                out.append(f"  ; saturation: {report}")
                graphs.append(egraph_to_dot(eg, ids[peg.root], peg.name))
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


@main.command()
@click.argument("orig_path", metavar="ORIG", type=click.Path(path_type=Path))
@click.argument("opt_path", metavar="OPT", type=click.Path(path_type=Path))
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write the per-pair report here.")
@click.option("--junit", "junit_path", type=click.Path(path_type=Path), help="Write JUnit XML here (one testcase per pair).")
@click.option("--map", "class_map", multiple=True, metavar="OLDCLASS=NEWCLASS",
              help="ORIG's class OLDCLASS is OPT's NEWCLASS (dotted or internal names; repeatable).")
@click.option("--method-timeout", type=click.FloatRange(min=0.01), default=10.0, show_default=True,
              help="Budget per method pair in seconds (proof, then counterexample search and its JVM runs).")
@click.option("--explain", is_flag=True, help="Report which axioms each proof used.")
@click.option("--axioms", type=click.Path(path_type=Path), help="Axiom directory or file (default: the bundled axioms/).")
@click.option("--assume", "assume", multiple=True, type=click.Choice(sorted(ASSUMPTIONS)),
              help="Also prove what holds under this assumption (repeatable); proofs that need it say so. "
                   "strings-by-value: Strings made by concatenation are compared by value, never by identity.")
def validate(orig_path: Path, opt_path: Path, json_path: Path | None, junit_path: Path | None,
             class_map: tuple[str, ...], method_timeout: float, explain: bool, axioms: Path | None,
             assume: tuple[str, ...]) -> int:
    """Check that OPT is a correct translation of ORIG, method by method (exit 0/1/3, 2 on bad input)."""
    from rich.console import Console

    from .validate import ValidateOptions, validate_inputs
    from .validate.pairing import parse_class_map
    from .validate.report import render_table

    try:
        mapping = parse_class_map(class_map)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    rules = _load_axioms(axioms).active()
    reports = [Output(path, form) for path, form in ((json_path, Form.JSON), (junit_path, Form.XML))
               if path is not None]
    try:
        check_outputs([orig_path, opt_path], reports)
        report = validate_inputs(orig_path, opt_path, ValidateOptions(mapping, method_timeout, explain, rules,
                                                                      assumptions=assume))
    except InputError as e:
        raise fail(e.path, e.message) from None
    except ClassFileError as e:
        raise fail(str(orig_path), str(e)) from None
    except OSError as e:
        raise fail(e.filename or str(orig_path), os_error_words(e)) from None
    for out in reports:
        _write_report(out, json.dumps(report.to_json(), indent=1) if out.form is Form.JSON else report.to_junit())
    Console(width=max(100, Console().width)).print(render_table(report))
    s = report.summary()
    for u in report.unpaired:
        click.echo(f"unpaired: {u}")
    relying = f" ({report.relying()} relying on --assume)" if report.assumptions else ""
    click.echo(f"{len(report.pairs)} pairs: {s['equivalent']} equivalent{relying}, {s['not_equivalent']} not "
               f"equivalent, {s['unknown']} unknown; {report.skipped} without code skipped, "
               f"{len(report.unpaired)} unpaired ({report.seconds:.2f} s)")
    return report.exit_code()


def _write_report(out: Output, text: str) -> None:
    try:
        write_file(out, lambda f: f.write(text.encode("utf-8")))
    except InputError as e:
        raise fail(e.path, e.message) from None


def _load_axioms(axioms: Path | None):
    """The rule set of ``axioms`` (a directory of ``*.ax`` files or one file; default: the bundled axioms)."""
    from .rules import AxiomError, default_rules, load_rules
    if axioms is None:
        return default_rules()
    if not axioms.exists():
        raise fail(str(axioms), "no such file or directory")
    try:
        return load_rules(axioms)
    except AxiomError as e:
        raise fail(str(axioms), str(e)) from None


if __name__ == "__main__":  # pragma: no cover
    main()
