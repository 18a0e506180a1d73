"""torch's ``sym_*`` helpers on concrete numbers (``strided/sym_numbers.py``) and ``default_generator``, against
torch's own where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

CASES = [
    ("sym_int", (3.7,)), ("sym_int", (-3.7,)), ("sym_int", (np.int64(4),)), ("sym_float", (2,)),
    ("sym_max", (2, 3.5)), ("sym_max", (2, 3)), ("sym_max", (np.int64(2), 3)), ("sym_min", (2, 3.0)),
    ("sym_min", (-1, 3)), ("sym_not", (True,)), ("sym_not", (0,)), ("sym_sqrt", (2,)), ("sym_ite", (True, 1, 2)),
    ("sym_ite", (False, "a", "b")), ("sym_sum", ([1, 2, 3],)), ("sym_sum", (1, 2.5)), ("sym_sum", ((),)),
]


@pytest.mark.parametrize("name, args", CASES)
def test_values_and_types(name, args):
    got = getattr(st, name)(*args)
    expected = {"sym_int": lambda a: int(a), "sym_float": float, "sym_not": lambda a: not a,
                "sym_sqrt": lambda a: a ** 0.5, "sym_ite": lambda b, t, f: t if b else f,
                "sym_max": lambda a, b: float(max(a, b)) if isinstance(a, float) or isinstance(b, float) else max(a, b),
                "sym_min": lambda a, b: float(min(a, b)) if isinstance(a, float) or isinstance(b, float) else min(a, b),
                "sym_sum": lambda *a: sum(a[0] if len(a) == 1 else a)}[name](*args)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("call, words", [
    (lambda: st.sym_max("a", 1), "expected (<class 'numpy.integer'>, <class 'numpy.floating'>, <class 'int'>, "
                                 "<class 'float'>), got <class 'str'>"),
    (lambda: st.sym_ite(1, 2, 3), "expected SymBool or bool, got <class 'int'>"),
    (lambda: st.sym_ite(True, 1, 2.0), "type mismatch: <class 'int'> vs <class 'float'>"),
])
def test_checks(call, words):
    with pytest.raises(AssertionError) as info:
        call()
    assert str(info.value) == words


def test_default_generator_is_the_cpu_generator_manual_seed_resets():
    g = st.default_generator
    assert isinstance(g, st.Generator) and g.device.type == "cpu"
    st.manual_seed(5)
    a = st.rand(3)
    g.manual_seed(5)
    assert st.rand(3).tolist() == a.tolist()


def test_against_torch():
    torch = pytest.importorskip("torch")
    for name, args in CASES:
        mine, theirs = getattr(st, name)(*args), getattr(torch, name)(*args)
        assert mine == theirs and type(mine) is type(theirs), name
