"""Gradients of the complex math ops against torch (Note [Complex gradients]): each formula's conjugated
Jacobian for complex64 / complex128 under a real loss that weighs the parts differently, mixed real / complex
pow, and real inputs unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

_TOL = {"complex64": 2e-4, "complex128": 1e-9}


def _array(shape, dtype: str, seed: int, offset: float = 0.0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.3, 1.2, shape) * rng.choice([-1, 1], shape) + offset
    if dtype.startswith("complex"):
        a = a + 1j * rng.uniform(0.3, 1.2, shape) * rng.choice([-1, 1], shape)
    return a.astype(dtype)


def _loss(lib, out):
    parts = lib.view_as_real(out) if out.is_complex() else out
    w = np.linspace(0.5, 1.5, parts.numel()).reshape(tuple(parts.shape))
    return (parts * lib.from_numpy(w.astype(str(parts.dtype).split(".")[-1]))).sum()


def _check(fn, arrays, tol):
    ours = [st.from_numpy(a.copy()).requires_grad_() for a in arrays]
    theirs = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    _loss(st, fn(st, *ours)).backward()
    _loss(torch, fn(torch, *theirs)).backward()
    for o, t in zip(ours, theirs):
        assert o.grad is not None and o.grad.dtype.name == str(t.grad.dtype).split(".")[-1]
        np.testing.assert_allclose(np.asarray(o.grad), t.grad.numpy(), rtol=tol, atol=tol)


_UNARY = ["sqrt", "rsqrt", "log", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sigmoid", "reciprocal",
          "square", "exp"]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", _UNARY)
def test_unary(name, dtype):
    _check(lambda lib, x: getattr(lib, name)(x), [_array((3, 4), dtype, 0)], _TOL[dtype])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("case", ["tensor_tensor", "scalar_exp", "complex_scalar_exp", "scalar_base", "real_base",
                                  "real_exponent", "int_exp"])
def test_pow(case, dtype):
    tol = _TOL[dtype]
    real = "float32" if dtype == "complex64" else "float64"
    x, y = _array((2, 3), dtype, 1), _array((2, 3), dtype, 2)
    if case == "tensor_tensor":
        _check(lambda lib, a, b: lib.pow(a, b), [x, y], tol)
    elif case == "scalar_exp":
        _check(lambda lib, a: a ** 2.5, [x], tol)
    elif case == "complex_scalar_exp":
        _check(lambda lib, a: a ** (1.5 - 0.5j), [x], tol)
    elif case == "int_exp":
        _check(lambda lib, a: a ** 3, [x], tol)
    elif case == "scalar_base":
        _check(lambda lib, b: (2 - 1j) ** b, [y], tol)
    elif case == "real_base":
        _check(lambda lib, a, b: lib.pow(a, b), [_array((2, 3), real, 3, offset=2.0), y], tol)
    else:
        _check(lambda lib, a, b: lib.pow(a, b), [x, _array((2, 3), real, 4)], tol)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_prod_cumsum_and_selection(dtype):
    tol = _TOL[dtype]
    x = _array((3, 4), dtype, 5)
    _check(lambda lib, a: a.prod().reshape(1), [x], tol)
    _check(lambda lib, a: a.prod(1), [x], tol)
    _check(lambda lib, a: a.cumsum(0), [x], tol)
    _check(lambda lib, a: a.flip([0, 1]), [x], tol)
    _check(lambda lib, a: a.roll(2, 1), [x], tol)
    _check(lambda lib, a: a.index_select(1, lib.tensor([2, 0, 2])), [x], tol)
    _check(lambda lib, a: a.gather(1, lib.tensor([[0, 3], [1, 1], [2, 0]])), [x], tol)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_where_masked_fill(dtype):
    tol = _TOL[dtype]
    x, y = _array((3, 4), dtype, 6), _array((3, 4), dtype, 7)
    mask = np.arange(12).reshape(3, 4) % 3 == 0
    _check(lambda lib, a, b: lib.where(lib.from_numpy(mask), a, b), [x, y], tol)
    _check(lambda lib, a: a.masked_fill(lib.from_numpy(mask), 1 - 2j), [x], tol)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shapes", [((3, 4), (4, 2)), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)),
                                    ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5))])
def test_matmul(shapes, dtype):
    a, b = _array(shapes[0], dtype, 8), _array(shapes[1], dtype, 9)
    _check(lambda lib, p, q: lib.matmul(p, q), [a, b], _TOL[dtype])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_mm_bmm(dtype):
    tol = _TOL[dtype]
    _check(lambda lib, p, q: lib.mm(p, q), [_array((3, 4), dtype, 10), _array((4, 2), dtype, 11)], tol)
    _check(lambda lib, p, q: lib.bmm(p, q), [_array((2, 3, 4), dtype, 12), _array((2, 4, 2), dtype, 13)], tol)


def test_real_inputs_unchanged():
    """The conj wrappers are the identity on real tensors: real gradients as before."""
    x = _array((3, 4), "float64", 14, offset=2.0)
    for name in _UNARY:
        _check(lambda lib, a, name=name: getattr(lib, name)(a), [x], 1e-10)
    _check(lambda lib, a, b: lib.pow(a, b), [x, _array((3, 4), "float64", 15)], 1e-10)
