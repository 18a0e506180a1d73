"""strided.linalg.ldl_factor(_ex) and ldl_solve (Note [Bunch-Kaufman LDL]): LD and pivots bit for bit torch's
(LAPACK's sytrf) on matrices that take 1x1 and 2x2 pivots, solves against torch and NumPy, info and errors, batches
and broadcasting, no derivative, and every backend."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

DEVICES = available_devices()


def _symmetric(rng, shape):
    a = rng.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n", [1, 2, 3, 7, 24, 70])
def test_factor_is_torchs(dtype, n):
    torch = pytest.importorskip("torch")
    a = _symmetric(np.random.default_rng(n), (2, n, n))
    if n >= 2:  # a zero diagonal entry with a nonzero column: an interchange or a 2x2 block
        a[1, :, 0] = a[1, 0, :] = 0
        a[1, 0, 1] = a[1, 1, 0] = 1.5
    LD, pivots, info = st.linalg.ldl_factor_ex(st.tensor(a, dtype=getattr(st, dtype)))
    tLD, tpivots, tinfo = torch.linalg.ldl_factor_ex(torch.tensor(a, dtype=getattr(torch, dtype)))
    np.testing.assert_array_equal(pivots.numpy(), tpivots.numpy())
    np.testing.assert_array_equal(info.numpy(), tinfo.numpy())
    # past LAPACK's block size (64) torch's sytrf may run blocked updates: the same pivots, other roundings (the GPU
    # host's torch 2.11: float32 entries 5e-5 apart at n = 70)
    tol = (1e-5 if n <= 64 else 1e-3) if dtype == "float32" else (1e-12 if n <= 64 else 1e-9)
    np.testing.assert_allclose(LD.numpy(), tLD.numpy(), rtol=tol, atol=tol)
    assert LD.stride() == tLD.stride() and pivots.dtype is st.int32
    if n >= 2:
        assert (pivots.numpy()[1] != np.arange(1, n + 1)).any()  # the second matrix pivoted


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_solve_matches_torch_and_numpy_with_broadcast_batches(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a, b = _symmetric(rng, (2, 9, 9)), rng.standard_normal((3, 2, 9, 4))
    d = getattr(st, dtype)
    LD, pivots = st.linalg.ldl_factor(st.tensor(a, dtype=d))
    x = st.linalg.ldl_solve(LD, pivots, st.tensor(b, dtype=d))
    assert x.shape == (3, 2, 9, 4) and x.dtype is d
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), rtol=2e-3 if dtype == "float32" else 1e-10,
                               atol=2e-4 if dtype == "float32" else 1e-10)
    tLD, tpivots = torch.linalg.ldl_factor(torch.tensor(a, dtype=getattr(torch, dtype)))
    tx = torch.linalg.ldl_solve(tLD, tpivots, torch.tensor(b[0], dtype=getattr(torch, dtype)))  # torch: no broadcast
    np.testing.assert_allclose(x.numpy()[0], tx.numpy(), rtol=1e-5 if dtype == "float32" else 1e-13, atol=1e-6)
    assert st.linalg.ldl_solve(LD, pivots.long(), st.tensor(b[0], dtype=d)).shape == (2, 9, 4)  # int64 pivots too


def test_singular_input_info_errors_and_edges():
    LD, pivots, info = st.linalg.ldl_factor_ex(st.tensor([[0.0, 0.0], [0.0, 1.0]]))
    assert info.item() == 1 and pivots.tolist() == [1, 2] and LD.tolist() == [[0.0, 0.0], [0.0, 1.0]]
    with pytest.raises(st.linalg.LinAlgError, match=r"ldl_factor: The factorization could not be completed because "
                                                    r"the input is singular \(D\[1,1\] is zero\)"):
        st.linalg.ldl_factor(st.tensor([[0.0, 0.0], [0.0, 1.0]]))
    with pytest.raises(st.linalg.LinAlgError, match=r"\(Batch element 1\)"):
        st.linalg.ldl_factor_ex(st.tensor([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]]), check_errors=True)
    LD, pivots, info = st.linalg.ldl_factor_ex(st.tensor([[1.0, 2.0], [2.0, float("nan")]]))
    assert pivots.tolist() == [-2, -2] and info.item() == 0  # as torch's: a 2x2 block holding the NaN
    empty = st.linalg.ldl_factor_ex(st.zeros(0, 0))
    assert empty.LD.shape == (0, 0) and empty.pivots.shape == (0,) and empty.info.item() == 0
    for bad, exc, words in ((st.ones(3, 4), RuntimeError, "A must be batches of square matrices, but they are 3 by 4"),
                            (st.ones(3), RuntimeError, "The input tensor A must have at least 2 dimensions"),
                            (st.ones(3, 3, dtype=st.int64), RuntimeError,
                             "Expected a floating point or complex tensor as input. Got Long"),
                            (st.ones(3, 3, dtype=st.float16), NotImplementedError,
                             "\"ldl_factor_kernel_cpu\" not implemented for 'Half'")):
        with pytest.raises(exc, match=words):
            st.linalg.ldl_factor(bad)
    LD, pivots = st.linalg.ldl_factor(st.eye(4, dtype=st.float64))
    for args, words in (((LD, pivots.float(), st.ones(4, 1, dtype=st.float64)), "Expected pivots to be integers"),
                        ((LD, pivots, st.ones(4, 1)), "Expected b and A to have the same dtype"),
                        ((LD, pivots, st.ones(5, 1, dtype=st.float64)),
                         "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is 4 by 4"),
                        ((LD, pivots[:3], st.ones(4, 1, dtype=st.float64)),
                         r"Expected LD.shape\[:-1\] and pivots.shape to be the same"),
                        ((LD, pivots, st.ones(4, dtype=st.float64)), "The input tensor B must have at least 2")):
        with pytest.raises(RuntimeError, match=words):
            st.linalg.ldl_solve(*args)
    LD, pivots = st.linalg.ldl_factor(st.tensor([[1.0, 2, 3], [2, 0, 5], [3, 5, 1]], dtype=st.float64))
    assert pivots.tolist() == [-3, -3, 3]
    for bad in ([0, 2, 3], [1, 2, 9], [-1, -1, 3], [2, 1, 3], [-3, 2, 3], [1, 2, -3]):  # not sytrf's: no silent answer
        with pytest.raises(RuntimeError, match=r"ldl_solve: pivots must be the ones ldl_factor returned .* but "
                                               r"pivots\[\d\] of matrix 0 is"):
            st.linalg.ldl_solve(LD, st.tensor(bad, dtype=st.int32), st.ones(3, 1, dtype=st.float64))
    with pytest.raises(TypeError, match="argument 'hermitian' must be bool"):
        st.linalg.ldl_factor(st.eye(2), hermitian=1)


def test_no_derivative_as_torch():
    a = st.tensor(_symmetric(np.random.default_rng(2), (3, 3)), requires_grad=True)
    LD, pivots = st.linalg.ldl_factor(a)
    assert LD.requires_grad and not pivots.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"):
        LD.sum().backward()
    b = st.ones(3, 1, dtype=st.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not implemented"):
        st.linalg.ldl_solve(LD.detach(), pivots, b).sum().backward()
    out = (st.empty(0, dtype=st.float64), st.empty(0, dtype=st.int32))
    assert st.linalg.ldl_factor(a.detach(), out=out)[0] is out[0]


@pytest.mark.parametrize("device", DEVICES)
def test_every_backend_as_the_cpu(device):
    rng = np.random.default_rng(3)
    a, b = _symmetric(rng, (2, 6, 6)), rng.standard_normal((2, 6, 2))
    a[0, :, 0] = a[0, 0, :] = 0
    a[0, 0, 2] = a[0, 2, 0] = 1.0
    LD, pivots, info = st.linalg.ldl_factor_ex(st.tensor(a, device=device))
    x = st.linalg.ldl_solve(LD, pivots, st.tensor(b, device=device))
    assert LD.device.type == device and x.shape == (2, 6, 2) and LD.stride() == (36, 1, 6) and x.stride() == (12, 1, 6)
    if device != "meta":
        want = st.linalg.ldl_factor_ex(st.tensor(a))
        for got, ref in zip((LD, pivots, info), want):
            np.testing.assert_array_equal(got.cpu().numpy(), ref.numpy())  # the same host algorithm
        np.testing.assert_allclose(x.cpu().numpy(), np.linalg.solve(a, b), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_two_by_two_blocks_are_torchs(dtype):
    """Zero diagonals force 2x2 blocks of D (and their trailing updates) throughout."""
    torch = pytest.importorskip("torch")
    a = _symmetric(np.random.default_rng(5), (30, 30))
    np.fill_diagonal(a, 0)
    for m in (a, np.array([[1.0, 2, 3], [2, 0, 5], [3, 5, 1]])):
        LD, pivots = st.linalg.ldl_factor(st.tensor(m, dtype=getattr(st, dtype)))
        tLD, tpivots = torch.linalg.ldl_factor(torch.tensor(m, dtype=getattr(torch, dtype)))
        assert (pivots.numpy() < 0).sum() >= 2
        np.testing.assert_array_equal(pivots.numpy(), tpivots.numpy())
        np.testing.assert_allclose(LD.numpy(), tLD.numpy(), rtol=1e-4 if dtype == "float32" else 1e-12, atol=1e-5)


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("n", [2, 3, 9, 30])
def test_complex_symmetric_and_hermitian_are_torchs(n, hermitian, dtype):
    """sytf2 / sytrs on complex symmetric input (|re| + |im| magnitudes) and hetf2 / hetrs on Hermitian input (a
    real diagonal, conjugated interchanges and updates), against torch's LAPACK."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    a = a + (a.conj().T if hermitian else a.T)
    np.fill_diagonal(a[: n // 2, : n // 2], 0)  # 2x2 blocks and interchanges
    b = rng.standard_normal((n, 2)) + 1j * rng.standard_normal((n, 2))
    d, td = getattr(st, dtype), getattr(torch, dtype)
    LD, pivots, info = st.linalg.ldl_factor_ex(st.tensor(a, dtype=d), hermitian=hermitian)
    tLD, tpivots, tinfo = torch.linalg.ldl_factor_ex(torch.tensor(a, dtype=td), hermitian=hermitian)
    np.testing.assert_array_equal(pivots.numpy(), tpivots.numpy())
    assert info.item() == tinfo.item() == 0 and LD.dtype is d
    tol = 1e-3 if dtype == "complex64" else 1e-11
    np.testing.assert_allclose(LD.numpy(), tLD.numpy(), rtol=tol, atol=tol)
    x = st.linalg.ldl_solve(LD, pivots, st.tensor(b, dtype=d), hermitian=hermitian)
    tx = torch.linalg.ldl_solve(tLD, tpivots, torch.tensor(b, dtype=td), hermitian=hermitian)
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(a @ x.numpy().astype(np.complex128), b, atol=1e-2 if dtype == "complex64" else 1e-9)
