"""strided.linalg: norms against NumPy (and torch where installed), gradients, torch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st

A = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -4.0]], dtype=np.float64)


@pytest.mark.parametrize("ord", [2, 1, 0, 3.5, math.inf, -math.inf, -1])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
def test_vector_norm_matches_numpy(ord, dim):
    got = st.linalg.vector_norm(st.tensor(A), ord, dim).numpy()
    flat = A.reshape(-1) if dim is None or isinstance(dim, tuple) else A
    axis = None if dim is None or isinstance(dim, tuple) else dim
    with np.errstate(divide="ignore"):
        want = np.linalg.norm(flat, ord=ord, axis=axis)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("ord", ["fro", 1, -1, math.inf, -math.inf])
def test_matrix_norm_matches_numpy(ord):
    batch = np.stack([A, -2 * A])
    got = st.linalg.matrix_norm(st.tensor(batch), ord).numpy()
    want = [np.linalg.norm(m, ord=ord) for m in batch]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    kept = st.linalg.matrix_norm(st.tensor(batch), ord, keepdim=True)
    assert tuple(kept.shape) == (2, 1, 1)


def test_norm_picks_vector_or_matrix_as_torch():
    t = st.tensor(A)
    np.testing.assert_allclose(st.linalg.norm(t).numpy(), np.linalg.norm(A.reshape(-1)))
    np.testing.assert_allclose(st.linalg.norm(t, 1).numpy(), np.linalg.norm(A, 1))  # 2-D with ord: matrix
    np.testing.assert_allclose(st.linalg.norm(t, math.inf, dim=1).numpy(), np.abs(A).max(1))
    np.testing.assert_allclose(st.linalg.norm(t, dim=(0, 1)).numpy(), np.linalg.norm(A, "fro"))


def test_gradients_are_finite_at_zero():
    x = st.zeros(3, dtype=st.float64, requires_grad=True)
    st.linalg.vector_norm(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))
    y = st.tensor(A, requires_grad=True)
    st.linalg.matrix_norm(y, "fro").backward()
    np.testing.assert_allclose(y.grad.numpy(), A / np.linalg.norm(A), rtol=1e-12)


def test_products_and_views():
    a, b = st.tensor([[1.0, 0, 0]]), st.tensor([[0.0, 1, 0]])
    np.testing.assert_array_equal(st.linalg.cross(a, b).numpy(), [[0, 0, 1]])
    np.testing.assert_allclose(st.linalg.vecdot(st.tensor(A), st.tensor(A)).numpy(), (A * A).sum(-1))
    t = st.tensor(A)
    d = st.linalg.diagonal(t)
    assert d._storage is t._storage  # a view
    np.testing.assert_array_equal(d.numpy(), np.diagonal(A))


def test_errors_in_torch_words():
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        st.linalg.vector_norm(st.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="cannot compute the -1 norm on an empty tensor"):
        st.linalg.vector_norm(st.empty(0), -1)
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        st.linalg.matrix_norm(st.ones(3))
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        st.linalg.matrix_norm(st.ones(3, 3), 3)
    with pytest.raises(RuntimeError, match=r"dims must be different. Got \(0, 0\)"):
        st.linalg.matrix_norm(st.ones(3, 3), dim=(0, 0))
    with pytest.raises(RuntimeError, match="the input must be 1D or 2D. Got 3D"):
        st.linalg.norm(st.ones(2, 2, 2), 2)
    # the singular-value norms: ones(3, 3) has singular values 3, 0, 0
    np.testing.assert_allclose(st.linalg.matrix_norm(st.ones(3, 3, dtype=st.float64), "nuc").item(), 3.0, rtol=1e-12)
    np.testing.assert_allclose(st.linalg.matrix_norm(st.ones(3, 3, dtype=st.float64), 2).item(), 3.0, rtol=1e-12)
    assert abs(st.linalg.matrix_norm(st.ones(3, 3, dtype=st.float64), -2).item()) < 1e-12
    with pytest.raises(TypeError, match="argument 'ord' \\(position 2\\) must be Number, not str"):
        st.linalg.vector_norm(st.ones(2), "fro")


def test_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    for ord in (2, 1, math.inf, -math.inf, 0.5):
        np.testing.assert_allclose(st.linalg.vector_norm(st.tensor(x), ord, dim=(1, 2)).numpy(),
                                   torch.linalg.vector_norm(torch.tensor(x), ord, dim=(1, 2)).numpy(), rtol=1e-5)
    for ord in ("fro", 1, -1, math.inf, -math.inf):
        np.testing.assert_allclose(st.linalg.matrix_norm(st.tensor(x), ord, dim=(0, 2)).numpy(),
                                   torch.linalg.matrix_norm(torch.tensor(x), ord, dim=(0, 2)).numpy(), rtol=1e-5)


def test_non_tensor_arguments_are_named():
    for call, message in [
        (lambda: st.linalg.matrix_norm([[1.0]]), "linalg.matrix_norm\\(\\): argument 'input' \\(position 1\\) must be "
                                                "Tensor, not list"),
        (lambda: st.linalg.norm("x"), "linalg.norm\\(\\): argument 'input'"),
        (lambda: st.linalg.cross([1, 0, 0], st.ones(3)), "linalg.cross\\(\\): argument 'input'"),
        (lambda: st.linalg.vecdot(st.ones(3), 2), "linalg.vecdot\\(\\): argument 'y' \\(position 2\\) must be Tensor, "
                                                  "not int"),
        (lambda: st.linalg.diagonal(None), "linalg.diagonal\\(\\): argument 'A'"),
    ]:
        with pytest.raises(TypeError, match=message):
            call()


@pytest.mark.parametrize("fn", ["vector_norm", "matrix_norm", "norm"])
def test_norm_dtype_may_only_widen_within_real_or_complex(fn):
    """torch's dtype= checks: a complex input cast to a real dtype would lose its imaginary parts silently."""
    f = getattr(st.linalg, fn)
    word = "vector_norm" if fn == "norm" else fn
    with pytest.raises(RuntimeError, match=rf"linalg.{word}: the dtype of the input \(Double\) should be convertible"):
        f(st.ones(2, 2, dtype=st.float64), dtype=st.float32)
    with pytest.raises(RuntimeError, match=rf"{word}: dtype should be complex for complex inputs, but got Double"):
        f(st.ones(2, 2, dtype=st.complex64), dtype=st.float64)
    with pytest.raises(RuntimeError, match=rf"{word}: dtype should be real for real inputs, but got ComplexFloat"):
        f(st.ones(2, 2), dtype=st.complex64)
    assert f(st.ones(2, 2), dtype=st.float64).dtype is st.float64
    assert f(st.ones(2, 2, dtype=st.complex64), dtype=st.complex128).dtype is st.float64
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        st.linalg.vector_norm(st.ones(2, dtype=st.int64), dtype=st.float32)
