"""Python numbers where an operator takes a Tensor (Note [Numbers as tensors]), against torch: ``add(2, t)``,
``mul(2, 3)``, ``t.copy_(2)``, the ``.Scalar_Tensor`` overloads (``remainder(2, t)``, ``bitwise_and(True, t)``),
and the operators that refuse a number as torch's do. Values, dtypes and error types must agree."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]
NUMBERS = [2, -3, 2.5, 0.1, True, 1 + 2j, 70000, 2 ** 40]
VALUES = [1.5, -2.0, 3.0, 0.0]


def _tensor(m, dtype, shape):
    base = [v for v in VALUES] if "float" in dtype or "complex" in dtype else [1, 2, 6, 0]
    if dtype == "bool":
        base = [True, False, True, False]
    t = m.tensor(base, dtype=getattr(m, dtype))
    return t[1] if shape == () else t


def _run(m, fn):
    try:
        return fn(m)
    except Exception as e:  # noqa: BLE001 - the error type is compared with torch's
        return e


def _both(fn):
    """``fn(module)`` run in strided and in torch (warnings silenced): (ours, theirs), each a result or an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _run(st, fn), _run(torch, fn)


def _same(ours, theirs, what):
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"{what}: torch raises {theirs!r}, strided returned {ours}"
        assert type(ours).__name__ == type(theirs).__name__ or (
            isinstance(ours, type(theirs)) or isinstance(theirs, type(ours))), f"{what}: {ours!r} vs {theirs!r}"
        return
    assert not isinstance(ours, Exception), f"{what}: strided raises {ours!r}, torch gives {theirs}"
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], f"{what}: {ours.dtype} vs {theirs.dtype}"
    assert tuple(ours.shape) == tuple(theirs.shape), what
    a = np.asarray(ours.to(st.float64 if not ours.dtype.is_complex else st.complex128).tolist())
    b = np.asarray(theirs.to(torch.float64 if not theirs.dtype.is_complex else torch.complex128).tolist())
    np.testing.assert_array_equal(a, b, err_msg=what)
    zero = (a == 0) & np.isreal(a)
    assert np.array_equal(np.signbit(a.real[zero]), np.signbit(b.real[zero])), f"{what}: signed zeros {a} vs {b}"


CALLS = {
    "add": lambda m, n, t: m.add(n, t), "add alpha": lambda m, n, t: m.add(n, t, alpha=2),
    "sub": lambda m, n, t: m.sub(n, t), "sub alpha": lambda m, n, t: m.sub(n, t, alpha=2),
    "mul": lambda m, n, t: m.mul(n, t), "div": lambda m, n, t: m.div(n, t),
    "div floor": lambda m, n, t: m.div(n, t, rounding_mode="floor"),
    "div trunc": lambda m, n, t: m.div(n, t, rounding_mode="trunc"),
    "divide": lambda m, n, t: m.divide(n, t), "multiply": lambda m, n, t: m.multiply(n, t),
    "subtract": lambda m, n, t: m.subtract(n, t), "true_divide": lambda m, n, t: m.true_divide(n, t),
    "floor_divide": lambda m, n, t: m.floor_divide(n, t), "other=": lambda m, n, t: m.add(n, other=t),
    "remainder": lambda m, n, t: m.remainder(n, t),
    "bitwise_and": lambda m, n, t: m.bitwise_and(n, t), "bitwise_or": lambda m, n, t: m.bitwise_or(n, t),
    "bitwise_xor": lambda m, n, t: m.bitwise_xor(n, t),
    "bitwise_left_shift": lambda m, n, t: m.bitwise_left_shift(n, t),
    "bitwise_right_shift": lambda m, n, t: m.bitwise_right_shift(n, t),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_number_first_operand_against_torch(name):
    call = CALLS[name]
    for dtype in DTYPES:
        for shape in ((4,), ()):
            for n in NUMBERS:
                if n == 2 ** 40 and name.startswith("bitwise"):
                    continue  # shifts of 2**40: torch's CPU shift of an out-of-range value is undefined C++
                if isinstance(n, complex) and dtype in ("float16", "bfloat16"):
                    continue  # torch makes complex32 / bcomplex32, which strided does not have (its TypeError says so)
                ours, theirs = _both(lambda m, n=n, d=dtype, s=shape: call(m, n, _tensor(m, d, s)))
                _same(ours, theirs, f"{name}({n!r}, {dtype}{list(shape)})")


def test_numbers_only():
    for expr in ["mul(2, 3)", "mul(2, 3.5)", "mul(True, False)", "add(2j, 1)", "true_divide(2, 4)",
                 "floor_divide(7, 2)", "div(1, 0)", "sub(5, 2, alpha=2)", "div(7, 2, rounding_mode='floor')"]:
        ours = eval("m." + expr, {"m": st})
        theirs = eval("m." + expr, {"m": torch})
        _same(ours, theirs, expr)
    for expr in ["remainder(2, 3)", "bitwise_and(2, 3)", "maximum(2, 3)"]:  # not numbers-as-tensors ops in torch
        with pytest.raises(TypeError, match="received an invalid combination of arguments|must be Tensor"):
            eval("m." + expr, {"m": st})
        with pytest.raises(TypeError):
            eval("m." + expr, {"m": torch})


def test_out_and_autograd():
    o = st.empty(3)
    r = st.mul(2, st.tensor([1.0, 2.0, 3.0]), out=o)
    assert r is o and o.tolist() == [2.0, 4.0, 6.0]
    o = st.empty(())
    assert st.add(2, 3, out=o) is o and o.item() == 5.0 and o.dtype is st.float32
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        st.mul(2, st.tensor([1.0]), out=st.empty(1, dtype=st.int64))
    with pytest.raises(TypeError):
        st.add(st.tensor([1.0]), st.tensor([1.0]), out=2)  # out= never takes a number
    x = st.tensor([1.0, 2.0], requires_grad=True)
    y = st.sub(1, x, alpha=3)
    assert y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [-3.0, -3.0]
    z = st.tensor([4.0, 2.0], requires_grad=True)
    st.div(2, z).sum().backward()
    assert z.grad.tolist() == [-2 / 16, -2 / 4]


def test_bad_first_operands_are_refused_as_torch():
    for call in (lambda m, x: m.add("a", x), lambda m, x: m.mul(None, x), lambda m, x: m.add(x, None),
                 lambda m, x: m.remainder("2", x), lambda m, x: m.bitwise_and(2.5, m.tensor([1, 2]))):
        ours, theirs = _both(lambda m, call=call: call(m, m.tensor([1.0])))
        assert isinstance(theirs, Exception) and isinstance(ours, Exception), (ours, theirs)
        assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
    with pytest.raises(NotImplementedError, match="with a bool tensor is not supported"):
        st.sub(True, st.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        st.bitwise_and(2.5, st.tensor([1, 2]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_copy_from_a_number(dtype):
    for n in (2, 2.7, True, -1, 1 + 2j, 1e10, 2 ** 40, np.float32(0.5)):
        if n == 1e10 and dtype in ("uint8", "int32"):
            continue  # a float past the integer range: undefined behaviour in torch's C++ cast
        ours, theirs = _both(lambda m, n=n: _tensor(m, dtype, (4,)).copy_(n))
        _same(ours, theirs, f"{dtype}.copy_({n!r})")
    t = st.zeros(2)
    assert t.copy_(other=st.ones(2)) is t and t.tolist() == [1.0, 1.0]  # torch's method calls the source other
    with pytest.raises(TypeError, match=r"copy_\(\): argument 'other' \(position 1\) must be Tensor, not str"):
        t.copy_("a")


def test_remainder_zero_takes_the_dividends_sign():
    a = [2.0, -2.0, 0.0, -0.0, 3.0, -3.0, 5.5, float("inf"), -5.0, 5.0]
    b = [-2.0, 2.0, -1.0, 1.0, 3.0, 3.0, -5.5, 2.0, float("inf"), float("-inf")]
    for d in ("float16", "bfloat16", "float32", "float64"):
        ours = st.remainder(st.tensor(a, dtype=getattr(st, d)), st.tensor(b, dtype=getattr(st, d)))
        theirs = torch.remainder(torch.tensor(a, dtype=getattr(torch, d)), torch.tensor(b, dtype=getattr(torch, d)))
        _same(ours, theirs, f"remainder {d}")
        _same(st.remainder(st.tensor(a, dtype=getattr(st, d)), -2.0),
              torch.remainder(torch.tensor(a, dtype=getattr(torch, d)), -2.0), f"remainder scalar {d}")
