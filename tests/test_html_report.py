"""``optimize --html`` and ``validate --html`` (issue 18, item 7): one self-contained page, its table row for row
the JSON report, per method the bytecode the disassembler gives before and after, the rules fired or the proof,
and pictures; loaded in headless Chromium (a screenshot is produced, the loaded DOM has the JSON's row count)."""
from __future__ import annotations

import html
import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from peggy_jvm.cli import main
from peggy_jvm.html_report import Detail, validate_page
from peggy_jvm.validate.report import PairResult, ValidationReport, Verdict

CLASSES = ("IntArith",)


def invoke(*args) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


class Rows(HTMLParser):
    """Counts the rows of ``table#rows``'s body and collects the text of the page."""

    def __init__(self) -> None:
        super().__init__()
        self.rows = 0
        self._in_table = self._in_body = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table" and ("id", "rows") in attrs:
            self._in_table = True
        elif tag == "tbody" and self._in_table:
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.rows += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self._in_body = False
        elif tag == "table":
            self._in_table = False


def table_rows(page: str) -> int:
    parser = Rows()
    parser.feed(page)
    return parser.rows


@pytest.fixture(scope="module")
def run(fixture_classes, tmp_path_factory) -> dict[str, Path]:
    """optimize (two fixture classes) and validate the result, each with --json and --html."""
    tmp = tmp_path_factory.mktemp("html")
    src = tmp / "in"
    src.mkdir()
    for name in CLASSES:
        shutil.copyfile(fixture_classes["release17"] / f"{name}.class", src / f"{name}.class")
    paths = {"in": src, "out": tmp / "out", "opt.json": tmp / "opt.json", "opt.html": tmp / "opt.html",
             "val.json": tmp / "val.json", "val.html": tmp / "val.html"}
    done = invoke("optimize", src, "-o", paths["out"], "--json", paths["opt.json"], "--html", paths["opt.html"])
    assert done.exit_code == 0, done.output
    done = invoke("validate", src, paths["out"], "--json", paths["val.json"], "--html", paths["val.html"])
    assert done.exit_code in (0, 3), done.output
    return paths


def disasm(path: Path, method: str) -> list[str]:
    done = invoke("disasm", path, "--method", method)
    assert done.exit_code == 0, done.output
    return [line for line in done.stdout.splitlines() if line.startswith(" ")]


def test_optimize_html_has_the_json_rows_and_the_rewritten_methods_details(run):
    page = run["opt.html"].read_text()
    methods = json.loads(run["opt.json"].read_text())["methods"]
    assert page.startswith("<!DOCTYPE html>")
    assert table_rows(page) == len(methods)
    assert "https://" not in page and 'src="' not in page  # self-contained: nothing to fetch
    rewritten = [m for m in methods if m["status"] == "rewritten"]
    assert any(m["name"] == "compound" for m in rewritten), rewritten
    for m in rewritten:  # each is linked from the table and has its own section
        key = f"{m['class']}.{m['name']}{m['descriptor']}"
        assert f">{html.escape(key)}</h2>" in page, key
    section = page[page.index(">IntArith.compound(I)I</h2>"):]
    section = section[:section.index("<h2", 1)] if "<h2" in section[1:] else section
    for side, cls in (("bytecode before", run["in"]), ("bytecode after", run["out"])):
        listing = "\n".join(disasm(cls / "IntArith.class", "compound(I)I"))
        assert f"<h3>{side}</h3><pre>{html.escape(listing)}</pre>" in section, side
    assert "<b>rules fired</b>: " in section and "<b>rules fired</b>: none" not in section
    assert "extraction</b>: optimal (proved)" in section
    if shutil.which("dot"):
        assert section.count("<svg") == 3  # the PEG, the E-PEG, the chosen PEG
        assert "palegreen" in section  # the chosen e-nodes, filled
    else:
        assert section.count('<pre class="dot">') == 3


def test_validate_html_has_the_json_pairs_and_each_proof(run):
    page = run["val.html"].read_text()
    pairs = json.loads(run["val.json"].read_text())["pairs"]
    assert "axioms" not in pairs[0]  # --html explains the proofs without changing the JSON report
    assert table_rows(page) == len(pairs)
    section = page[page.index(">IntArith.compound(I)I</h2>"):]
    section = section[:section.index("<h2", 1)]
    assert "<b>verdict</b>: equivalent" in section and "<b>axioms used</b>: " in section
    assert html.escape("\n".join(disasm(run["out"] / "IntArith.class", "compound(I)I"))) in section


def test_html_refuses_to_replace_a_file_that_is_not_an_html_report(run, tmp_path):
    other = tmp_path / "notes.html"
    other.write_text("my notes\n")
    done = invoke("optimize", run["in"], "-o", tmp_path / "out", "--html", other)
    assert done.exit_code == 2 and "exists and is not an HTML report" in done.stderr
    assert other.read_text() == "my notes\n" and not (tmp_path / "out").exists()


def test_validate_page_escapes_and_shows_a_counterexample():
    bad = PairResult("p/A<B>", "m", "(I)I", Verdict.NOT_EQUIVALENT, "returns differ <script>",
                     counterexample={"args": [7], "orig": "returned 1", "opt": "returned 2"})
    page = validate_page(ValidationReport(pairs=[bad]), {"p/A<B>.m(I)I": Detail("p/A<B>.m(I)I", ["x"], ["y"], [
        ("counterexample", "args [7]: ORIG returned 1, OPT returned 2")])}, "t")
    assert "<script>" not in page.replace("<script>\ndocument", "")  # only the page's own script is code
    assert "returns differ &lt;script&gt;" in page and "p/A&lt;B&gt;" in page
    assert "args [7]: ORIG returned 1, OPT returned 2" in page and table_rows(page) == 1


def chromium(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it): "
                    "the HTML report was not loaded in a browser")
    return subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-dev-shm-usage", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)


@pytest.mark.parametrize("which", ["opt", "val"])
def test_report_loads_in_headless_chromium(run, tmp_path, which):
    page = run[f"{which}.html"]
    rows = len(json.loads(run[f"{which}.json"].read_text())["methods" if which == "opt" else "pairs"])
    shot = tmp_path / "shot.png"
    done = chromium(f"--screenshot={shot}", "--window-size=1280,1024", page.as_uri())
    assert shot.exists(), done.stderr
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000, len(data)
    dom = chromium("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr
    assert table_rows(dom.stdout) == rows
