"""A statement without effects whose variable is not live after it goes (ir/coalesce.drop_dead_stores, run by
the reverter's tidying once tests are threaded, issue 15), not only one whose variable nothing reads: the
threaded tests past a loop's exit flags leave ``v = null`` on the path that returns the default while the
other arm still returns ``v`` (commons-lang3's ``EnumUtils.getEnumIgnoreCase``: ``aconst_null; astore_3;
aload_2; areturn``, its rewrite 64 -> 65 bytes; now 61).

On constructed IR, and on that method of the corpus jar through the full stage (the self-check on), read off
the bytecode and run against the original on the JVM (``-Xverify:all``)."""
from __future__ import annotations

import subprocess
import zipfile

import pytest

from conftest import keep_every_rewrite
from support.fullstage import javap, method_listing
from peggy_jvm.ir.coalesce import drop_dead_stores
from peggy_jvm.ir.nodes import INT, REF, Block, Cond, Const, Copy, Goto, If, Return, Var
from peggy_jvm.pipeline import Stage, optimize_input

ENUM_UTILS = "org/apache/commons/lang3/EnumUtils"


def test_a_copy_only_paths_that_no_longer_read_it_follow_goes():
    """``p = null`` before a ``return d`` goes although another block returns ``p``; a copy one path reads
    (``v = 1`` before a branch whose arm returns ``v``) stays."""
    d, e, p, v = Var(0, REF, "d"), Var(1, REF, "e"), Var(2, REF, "p"), Var(3, INT, "v")
    blocks = {
        0: Block(0, [Copy(v, Const(INT, 1))], If(Cond.EQ, e, Const(REF, None), 1, 3)),
        1: Block(1, [Copy(p, Const(REF, None))], Return(d)),
        3: Block(3, [], If(Cond.LT, v, Const(INT, 0), 4, 5)),
        4: Block(4, [Copy(p, e)], Return(p)),
        5: Block(5, [], Goto(0)),
    }
    assert drop_dead_stores(blocks)
    assert blocks[1].stmts == [] and [st.dst for st in blocks[0].stmts] == [v] and len(blocks[4].stmts) == 1


@pytest.fixture(scope="module")
def enum_utils(corpus_jars, tmp_path_factory, java_home):
    """(original dir, optimized dir, report rows) of lang3's EnumUtils, the whole jar as class path."""
    jar = corpus_jars["commons-lang3"]
    work = tmp_path_factory.mktemp("enumutils")
    orig = work / "orig"
    (orig / ENUM_UTILS).parent.mkdir(parents=True)
    with zipfile.ZipFile(jar) as z:
        (orig / f"{ENUM_UTILS}.class").write_bytes(z.read(f"{ENUM_UTILS}.class"))
    out = work / "out"
    with pytest.MonkeyPatch.context() as mp:
        keep_every_rewrite(mp)
        _, report = optimize_input(orig, out, Stage.FULL, classpath=[jar], jobs=1)
    rows = {(m.name, m.descriptor): m for m in report.methods}
    return orig, out, rows


_THREE = "(Ljava/lang/Class;Ljava/lang/String;Ljava/lang/Enum;)Ljava/lang/Enum;"


def test_get_enum_ignore_case_returns_without_the_dead_store(enum_utils, java_home):
    orig, out, rows = enum_utils
    row = rows[("getEnumIgnoreCase", _THREE)]
    assert row.status == "rewritten" and row.bytes_after < row.bytes_before, (row.status, row.reason)
    text = javap(java_home, out, ENUM_UTILS.replace("/", "."))
    body = text[text.index("E getEnumIgnoreCase(java.lang.Class<E>, java.lang.String, E)"):]
    ops = [m for _, m, _ in method_listing(body, "getEnumIgnoreCase")]
    assert "aconst_null" not in ops, ops


RUN = r"""
import org.apache.commons.lang3.EnumUtils;
import java.util.concurrent.TimeUnit;
public class RunEnum {
    public static void main(String[] a) {
        String[] names = {null, "", "seconds", "DAYS", "nanos", "Hours", "x"};
        for (String n : names) {
            System.out.println(EnumUtils.getEnumIgnoreCase(TimeUnit.class, n, TimeUnit.MINUTES));
            System.out.println(EnumUtils.getEnumIgnoreCase(TimeUnit.class, n, null));
        }
    }
}
"""


def test_get_enum_ignore_case_behaves_like_the_original(enum_utils, corpus_jars, java_home, tmp_path):
    orig, out, _ = enum_utils
    jar = corpus_jars["commons-lang3"]
    (tmp_path / "RunEnum.java").write_text(RUN)
    subprocess.run([str(java_home / "bin" / "javac"), "-cp", str(jar), "-d", str(tmp_path),
                    str(tmp_path / "RunEnum.java")], check=True, capture_output=True)
    runs = [subprocess.run([str(java_home / "bin" / "java"), "-Xverify:all", "-cp",
                            f"{d}:{tmp_path}:{jar}", "RunEnum"], capture_output=True, text=True, check=True).stdout
            for d in (orig, out)]
    assert runs[0] == runs[1] and "SECONDS" in runs[0] and "MINUTES" in runs[0], runs
