"""support/same_code.py: which release 17 fixture methods run exactly as in release 8 (the slow tier's PEG
evaluator sweep of release 17 leaves those to release 8's sweep)."""
from __future__ import annotations

from support.same_code import same_methods


def test_same_code_names_shared_loops_and_not_what_javac_compiles_differently(fixture_classes):
    same = same_methods(fixture_classes["release17"], fixture_classes["release8"])
    # the same bytecode under both releases, reaching only itself and the same classes
    assert {("Kernels", "sieve", "(I)[I"), ("BigMethod", "run", "(II)J"), ("Invokes", "fib", "(I)I")} <= same
    # release 17 concatenates strings with invokedynamic, release 8 with StringBuilder
    assert ("Kernels", "main", "([Ljava/lang/String;)V") not in same
    # records exist only in release 17
    assert not any(cls == "Records17" for cls, _, _ in same)
    # nothing is the same as an empty tree
    assert same_methods(fixture_classes["release17"], fixture_classes["release17"] / "missing") == set()
