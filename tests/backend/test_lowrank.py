"""strided.svd_lowrank / pca_lowrank (Note [Randomized low-rank SVD]): under torch's seed the singular values are
torch's and the vectors torch's up to each column's sign (singular vectors are unique only up to sign, and
strided's SVD of a wide matrix picks other signs than LAPACK's); the gradient of the singular values is torch's;
a low-rank matrix is recovered on every device; torch's argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

torch = pytest.importorskip("torch")
rng = np.random.default_rng(3)


def _aligned(got, want):
    """``got`` with each column's sign flipped to agree with ``want``'s."""
    signs = np.sign(np.sum(got * want, axis=-2, keepdims=True))
    return got * np.where(signs == 0, 1, signs)


@pytest.mark.parametrize("fn", ["svd_lowrank", "pca_lowrank"])
@pytest.mark.parametrize("shape,q", [((20, 8), 4), ((8, 20), 4), ((3, 30, 10), 5)], ids=str)
def test_same_seed_same_factors_as_torch(fn, shape, q):
    A = rng.standard_normal(shape)
    results = []
    for lib in (torch, st):
        lib.manual_seed(0)
        results.append([v.numpy() for v in getattr(lib, fn)(lib.tensor(A), q=q)])
    (tu, ts, tv), (su, ss, sv) = results
    np.testing.assert_allclose(ss, ts, atol=1e-10)
    np.testing.assert_allclose(_aligned(su, tu), tu, atol=1e-8)
    np.testing.assert_allclose(_aligned(sv, tv), tv, atol=1e-8)


def test_a_mean_matrix_and_the_singular_values_gradient_as_torchs():
    A, M = rng.standard_normal((12, 7)), rng.standard_normal((1, 7))
    results = []
    for lib in (torch, st):
        lib.manual_seed(1)
        a = lib.tensor(A, requires_grad=True)
        U, S, V = lib.svd_lowrank(a, 4, 3, lib.tensor(M))
        S.sum().backward()
        results.append((S.detach().numpy(), a.grad.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], atol=1e-10)
    np.testing.assert_allclose(results[1][1], results[0][1], atol=1e-8)


@pytest.mark.parametrize("device", [d for d in available_devices() if d in ("cpu", "cuda")])
def test_a_low_rank_matrix_is_recovered(device):
    A = st.tensor(rng.standard_normal((3, 40, 3)) @ rng.standard_normal((3, 3, 25)), device=device)
    U, S, V = st.svd_lowrank(A, q=5)
    assert U.shape == (3, 40, 5) and S.shape == (3, 5) and V.shape == (3, 25, 5) and U.device.type == device
    np.testing.assert_allclose(((U * S.unsqueeze(-2)) @ V.mT).cpu().numpy(), A.cpu().numpy(), atol=1e-8)
    U, S, V = st.pca_lowrank(A, q=3)
    centered = A - A.mean(dim=(-2,), keepdim=True)
    np.testing.assert_allclose(((U * S.unsqueeze(-2)) @ V.mT).cpu().numpy(), centered.cpu().numpy(), atol=1e-8)


@pytest.mark.parametrize("call", [lambda L: L.pca_lowrank(L.ones(3, 4), q=5),
                                  lambda L: L.pca_lowrank(L.ones(3, 4), q=-1),
                                  lambda L: L.pca_lowrank(L.ones(3, 4), niter=-1)],
                         ids=["q too large", "q negative", "niter negative"])
def test_argument_errors_are_torchs(call):
    with pytest.raises(ValueError) as want:
        call(torch)
    with pytest.raises(ValueError) as got:
        call(st)
    assert str(got.value) == str(want.value)


def test_a_vector_is_refused_by_name():
    """torch fails to unpack the shape ("not enough values to unpack"); strided names the function and the rank."""
    for fn in (st.svd_lowrank, st.pca_lowrank):
        with pytest.raises(RuntimeError, match=rf"^{fn.__name__}\(\): expected A to be a \(batch of\) matrices, "
                                               r"got 1 "):
            fn(st.ones(3))
