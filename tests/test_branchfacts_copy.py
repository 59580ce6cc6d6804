"""The substitution copier (``rules/branchfacts.Assume``) makes a copy whole or not at all.

A copy that meets a cycle of copied classes no theta closes is refused (``CopyTooLarge``) before anything is
added: found half-way, it left the copied thetas' placeholders without nodes while copies already made read
them, and once later rules merged such a copy into what the root reaches, the extraction problem had a child
class without nodes (jsoup ``Elements.siblings`` fell back with ``ValueError: ... not a class``).
"""
from __future__ import annotations

import pytest

from peggy_jvm.epeg import EPeg
from peggy_jvm.rules.branchfacts import Assume, CopyTooLarge


def _cycle_below_a_theta() -> tuple[EPeg, int, int, int]:
    """(e-graph, theta class, target, its value): ``theta_1(x, a)`` with ``a = neg(b)``, ``b = add(a, t)``, a
    cycle without a theta (made through a placeholder, as an import or a rule's union can), ``t`` the target."""
    eg = EPeg()
    x = eg.add("param", 0)
    t = eg.add("param", 1)
    ph = eg.add_placeholder()
    a = eg.add("neg.i", None, (ph,))
    b = eg.add("add.i", None, (a, t))
    eg.union(ph, b)
    theta = eg.add("theta", 1, (x, a))
    eg.rebuild()
    return eg, theta, t, eg.add("const.i", 7)


def test_a_copy_meeting_a_cycle_without_a_theta_adds_nothing():
    eg, theta, t, seven = _cycle_below_a_theta()
    copier = Assume(eg, {t: seven}, limit=32)
    assert eg.find(theta) in copier.plan([theta])  # the theta would be copied: its placeholder made first
    classes, nodes = eg.class_count, eg.node_count
    with pytest.raises(CopyTooLarge):
        copier.copy([theta])
    eg.rebuild()
    assert (eg.class_count, eg.node_count) == (classes, nodes)
    assert all(eg.nodes(c) for c in eg.class_ids())  # no class left without a node


def test_a_copy_without_such_a_cycle_is_made():
    """The check refuses only what the copy itself would: the same shape closed by a theta is copied."""
    eg = EPeg()
    x = eg.add("param", 0)
    t = eg.add("param", 1)
    ph = eg.add_placeholder()
    a = eg.add("neg.i", None, (ph,))
    loop = eg.add("theta", 1, (x, eg.add("add.i", None, (a, t))))
    eg.union(ph, loop)
    eg.rebuild()
    seven = eg.add("const.i", 7)
    copier = Assume(eg, {t: seven}, limit=32)
    (copy,) = copier.copy([loop])
    eg.rebuild()
    assert not eg.equiv(copy, loop)
    assert any(op == "theta" for op, _attr, _ch in eg.nodes(copy))
    assert all(eg.nodes(c) for c in eg.class_ids())
