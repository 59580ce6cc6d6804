"""What the counterexample search of a validate run costs: the order of a blank receiver's inputs (the quick search
before a pair's proof sees as many argument lists as it runs inputs), and the interpreter's call handlers made
once per run, not per screen (issue 17: EqBench's p50 per pair).
"""
from __future__ import annotations

import pytest
from conftest import compile_versions

from peggy_jvm.validate import ValidateOptions, Verdict, driver, validate_inputs
from peggy_jvm.validate import counterexample as cx

# a class without fields whose helper multiplies by repeated addition, looping over the other factor in OPT: the
# two differ only where a factor is negative, first at times(1, -1) (0 against -1): the 13th argument list of two
# int parameters, taken in turn with a second receiver the 25th input, past the quick search's 24
ORIG = r"""
public class Calc {
    int times(int a, int b) { int s = 0; for (int i = 0; i < b; i++) s += a; return s; }
    public int scaled(int x) { return x >= 3 && x < 5 ? times(x, 4) : 0; }
}
"""
OPT = ORIG.replace("for (int i = 0; i < b; i++) s += a;", "for (int i = 0; i < a; i++) s += b;")


@pytest.fixture(scope="module")
def trees(java_home, tmp_path_factory):
    return compile_versions(java_home, tmp_path_factory.mktemp("calc"), "Calc.java", {"orig": ORIG, "opt": OPT})


def test_a_blank_receiver_repeating_a_built_ones_arguments_goes_last():
    shape = cx.Shape("instance", ctor="()V", owner="Calc")
    inputs = cx.shape_inputs(shape, "(II)I")
    n = len(cx.generate_inputs("(II)I"))
    assert len(inputs) == 2 * n
    head = [repr(a[:2]) for a in inputs[:cx.QUICK_INPUTS]]
    assert len(set(head)) == cx.QUICK_INPUTS, head  # no argument list twice among the quick search's inputs
    assert all(isinstance(a[2], cx.Built) for a in inputs[:n]) and all(len(a) == 2 for a in inputs[n:])
    # the same inputs, only in another order: the full search still tries every one
    assert sorted(map(repr, inputs)) == sorted(map(repr, [*(a + [cx.Built()] for a in cx.generate_inputs("(II)I")),
                                                         *cx.generate_inputs("(II)I")]))
    # a receiver with generated fields differs from the built one: taken in turn as before
    fielded = cx.Shape("instance", fields=(("n", "I"),), field_types=(("n", "I"),), ctor="()V", owner="Calc")
    kinds = [isinstance(a[-1], cx.Built) for a in cx.shape_inputs(fielded, "(II)I")[:6]]
    assert kinds == [True, False, True, False, True, False]


def test_the_quick_search_shows_a_helper_that_differs_at_its_13th_argument_list(trees, monkeypatch):
    proved: list[str] = []
    real = driver.prove_pair

    def counting(pair, *args, **kwargs):
        proved.append(pair.orig.name)
        return real(pair, *args, **kwargs)
    monkeypatch.setattr(driver, "prove_pair", counting)
    rep = validate_inputs(trees["orig"], trees["opt"], ValidateOptions(method_timeout=8.0))
    rows = {p.name: p for p in rep.pairs}
    row = rows["times"]
    assert row.verdict is Verdict.NOT_EQUIVALENT, row.reason
    assert row.counterexample["args"] == ["this: new Calc()", "1", "-1"], row.counterexample
    assert row.counterexample["orig"].startswith("returns 0") and row.counterexample["opt"].startswith("returns -1")
    assert "times" not in proved, proved  # settled by the quick search: no proof attempt paid for it
    assert rows["scaled"].verdict is not Verdict.NOT_EQUIVALENT, rows["scaled"].counterexample


def test_one_pair_of_call_handlers_serves_every_screen_of_a_run(trees, monkeypatch):
    made: list[object] = []

    class Counted(cx.DefaultCallHandler):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)
    monkeypatch.setattr(cx, "DefaultCallHandler", Counted)
    screens: list[int] = []
    real = cx._screen

    def counting(*args, **kwargs):
        screens.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(cx, "_screen", counting)
    validate_inputs(trees["orig"], trees["opt"], ValidateOptions(method_timeout=8.0))
    assert len(screens) >= 2, screens  # the quick searches of times and scaled at least
    assert len(made) == 2, len(made)  # ORIG's and OPT's, whatever the number of screens


def test_the_inputs_the_jvm_judges_give_each_argument_each_kind_first():
    # TypeUtils.isAssignable(Type, GenericArrayType, Map) differs (ProGuard's String.concat) once its first argument
    # is a stub whose toString() returns null; taken in order, the inputs the interpreter cannot judge gave the first
    # argument that kind only after 32 others (the JVM showed it on its 36th call)
    t, g, m = "Ljava/lang/reflect/Type;", "Ljava/lang/reflect/GenericArrayType;", "Ljava/util/Map;"
    inputs = [a for a in cx.generate_inputs(f"({t}{g}{m})Z", interfaces=frozenset({t, g, m}))
              if any(isinstance(x, cx.Opaque) for x in a)]
    assert next(n for n, a in enumerate(inputs) if a[0] == cx.Opaque("null-string")) > 30
    chosen = cx._varied(inputs, cx.MAX_UNJUDGED)
    kinds = [cx._kinds(a) for a in chosen]
    # every argument has had each of its kinds (null and the three stubs) within the first four inputs
    assert all({k[i] for k in kinds[:4]} == {"null", "plain", "null-string", "deep-null-string"} for i in range(3))
    # and, among those chosen, every two arguments every two of their kinds together
    pairs = {(i, k[i], j, k[j]) for k in kinds for i in range(3) for j in range(i + 1, 3)}
    assert len(pairs) == 3 * 16
    # the chosen ones are inputs, each once, as many as asked for
    assert len(chosen) == cx.MAX_UNJUDGED and len({repr(a) for a in chosen}) == len(chosen)
    assert all(a in inputs for a in chosen)
