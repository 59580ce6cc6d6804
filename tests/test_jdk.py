"""The JDK package (peggy_jvm/jdk/): its place in the layering, and the facts the rules read agreeing with the
models the interpreter runs.

The models themselves are held to the JVM by tests/test_interp.py; here: nothing below ``jdk`` imports it (but
``jdk.facts``, which loads no model), every method reference of ``jdk.facts`` has its model, a second model for
one method is refused, and the builder ``append`` overloads ``facts.returns_receiver`` vouches for (the fact
``builder-append-returns-this`` rests on) do return their receiver when the models run.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from peggy_jvm.ir import interp as I
from peggy_jvm.ir.nodes import MethodRef
from peggy_jvm.jdk import facts
from peggy_jvm.jdk.handler import DefaultCallHandler
from peggy_jvm.jdk.registry import MODELS

PACKAGE = Path(__file__).resolve().parent.parent / "peggy_jvm"
# the packages the interpreter's models sit above (rules reads jdk.facts only)
BELOW_JDK = ("classfile", "ir", "peg", "egraph", "rules", "extract", "revert")


def _imported_modules(path: Path) -> set[str]:
    """The absolute names of the peggy_jvm modules ``path`` imports (relative imports resolved)."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base]) if base else ".".join(parts)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


@pytest.mark.parametrize("package", BELOW_JDK)
def test_nothing_below_jdk_imports_its_models(package: str) -> None:
    offenders = []
    for path in sorted((PACKAGE / package).rglob("*.py")):
        for name in _imported_modules(path):
            if name.startswith("peggy_jvm.jdk") and name not in ("peggy_jvm.jdk", "peggy_jvm.jdk.facts") \
                    and not name.startswith("peggy_jvm.jdk.facts."):
                offenders.append(f"{path.relative_to(PACKAGE)}: {name}")
    assert not offenders


def test_reading_the_facts_loads_no_model() -> None:
    code = ("import sys, peggy_jvm.rules.strings\n"
            "print(sorted(m for m in sys.modules if m.startswith(('peggy_jvm.jdk', 'peggy_jvm.ir.interp'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['peggy_jvm.jdk', 'peggy_jvm.jdk.facts']"


def test_every_method_of_the_facts_has_its_model() -> None:
    refs = [v for v in vars(facts).values() if isinstance(v, MethodRef)]
    assert len(refs) >= 7
    missing = [str(r) for r in refs if (r.owner, r.name, r.descriptor) not in MODELS]
    assert not missing


def test_a_second_model_for_one_method_is_refused() -> None:
    key = (facts.STRING_CONCAT.owner, facts.STRING_CONCAT.name, facts.STRING_CONCAT.descriptor)
    before = MODELS[key]
    with pytest.raises(ValueError, match="second model for java/lang/String.concat"):
        MODELS[key] = lambda h, i, r, a: None
    assert MODELS[key] is before


def test_appends_the_facts_say_return_their_receiver_do() -> None:
    handler = DefaultCallHandler()
    interp = I.Interpreter(I.Heap(), handler)
    checked = 0
    for (owner, name, desc), fn in sorted(MODELS.items(), key=lambda kv: kv[0]):
        ref = MethodRef(owner, name, desc)
        if not facts.returns_receiver(ref):
            continue
        param = desc[1:desc.index(")")]
        arg = {"I": 7, "J": 7, "C": 65, "Z": 1, "F": 1.5, "D": 1.5, "Ljava/lang/String;": "s",
               "Ljava/lang/Object;": "o", "Ljava/lang/CharSequence;": "cs", "[C": I.JArray("[C", [66])}.get(param)
        if arg is None:
            continue
        sb = I.JObject(owner, {"sb": []})
        assert fn(handler, interp, sb, [arg]) is sb, desc
        assert "".join(sb.native["sb"]), desc
        checked += 1
    assert checked >= 16  # 8 overloads at least, on both builders
    assert not facts.returns_receiver(MethodRef("java/lang/StringBuilder", "toString", "()Ljava/lang/String;"))
    assert not facts.returns_receiver(MethodRef("java/lang/String", "concat", facts.STRING_CONCAT.descriptor))
