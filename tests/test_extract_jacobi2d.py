"""BenchKernels.jacobi2d's extraction (peggy_jvm/pegextract/: the phi-profile checker's polarity, the builder's
forms of copied loops preferred among equals).

Before: the checker refused every candidate within its 40 checks. Its sum loop's heap ran under ``0 < n`` and
the sum's value was read under ``0 >= n`` (the class's other form of the same test): two independent
conditions to the checker, so the read looked "more conditional than every use of its value". With the
e-graph's ``not`` links the two are one condition (``select.negations``), and a hoisted extraction passes.
Then the hoisted loops are copies (``loop-hoist``), where no node was the builder's: ties went to whichever form
the solver met (``a[i][j + 1] + (a[i][j] + a[i][j - 1])``, ``j + 1`` as ``(j - 1) + 2`` making ``j - 1`` a
second value carried through the loop), and the emitted code spilled and was dearer than javac's. Copies now
count as the builder's forms of what they copy (``select.original_nodes``), and the tie-break takes those.
"""
from __future__ import annotations

import pytest

from support import fixture_build

from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.peg.graph import PEG
from peggy_jvm.pipeline import full_stage_view


@pytest.fixture(scope="module")
def view():
    cf = read_class((fixture_build.build_bench() / "BenchKernels.class").read_bytes())
    m = next(m for m in cf.methods if m.name == "jacobi2d")
    return full_stage_view(lift_method(cf, m, ClassHierarchy([])), None, extract=True)


def test_a_hoisted_extraction_passes_the_checks_within_the_budget(view) -> None:
    rep = view.report
    assert view.chosen is not None, rep.describe()
    assert rep.status == "optimal (proved)" and rep.cost_after < rep.cost_before, rep.describe()
    # javac reads six rows per inner iteration of each nest (b[i], a[i] three times, a[i + 1], a[i - 1]); the
    # extraction reads a[i] once (the heap rules) and the stored-to row before the loop (loop-hoist): three
    def row_reads_in_inner_loops(peg: PEG) -> int:
        var = peg.variance()
        return sum(1 for n in peg.reachable() if peg.nodes[n].op == "aload" and peg.nodes[n].attr == "L"
                   and 3 in var[n])
    assert (row_reads_in_inner_loops(view.chosen), row_reads_in_inner_loops(view.peg)) == (6, 12)


def test_ties_go_to_javacs_forms_in_the_hoisted_copies(view) -> None:
    """``0.2 * (((a + b) + c) + d) + e)`` as written, ``sum += a[i][j]`` as ``sum + v``, and one int loop variable
    per inner loop (``j``; ``j - 1`` and ``j + 1`` computed from it), as in the builder's PEG."""
    peg = view.chosen
    nodes = [peg.nodes[n] for n in peg.reachable()]
    ops = {n: peg.nodes[n].op for n in peg.reachable()}
    adds = [x for x in nodes if x.op == "add.d"]
    assert adds and all(ops[x.children[1]] != "add.d" for x in adds)  # left-leaning: javac's evaluation order
    assert all(ops[x.children[0]] == "const.d" for x in nodes if x.op == "mul.d")
    assert all(ops[x.children[0]] == "theta" for x in adds if "theta" in (ops[c] for c in x.children))
    inner_int_thetas = [x for x in nodes if x.op == "theta" and x.attr == 3 and ops[x.children[0]] == "const.i"]
    assert len(inner_int_thetas) == 1  # j alone (both nests' inner loops count the same)
    assert not any(x.op == "add.i" and any(ops[c] == "sub.i" for c in x.children) for x in nodes)
