"""strided.linalg's solvers (``triangular.py``: solve_triangular, cholesky(_ex); ``lu.py``: lu_factor(_ex), lu,
lu_solve, solve(_ex), inv(_ex), det, slogdet, matrix_power) on every available backend: values against NumPy (and a
NumPy getrf reference for the exact pivots), shapes and dtypes on meta, ``info`` and torch's errors for singular and
non-positive-definite input, gradients against torch (when installed) and gradcheck."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck
from strided.ops.composite import linalg_solvers as _solve_kernels
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
RNG = np.random.default_rng(7)
LA = st.linalg


def _t(a, device="cpu", grad=False, dtype=None):
    t = st.tensor(np.asarray(a), device=device)
    if dtype is not None:
        t = t.to(dtype)
    return t.requires_grad_() if grad else t


def _host(t):
    return np.asarray(t.detach().cpu().numpy())


def _check(got, want, device, rtol=1e-10, atol=1e-10):
    """Shape and dtype always; values except on meta."""
    want = np.asarray(want)
    assert tuple(got.shape) == want.shape
    assert got.device.type == device
    if device != "meta":
        np.testing.assert_allclose(_host(got), want, rtol=rtol, atol=atol)


def _mT(a):
    return np.swapaxes(a, -1, -2)


def _well(shape, seed=0):
    """A random square matrix (batch) with a dominant diagonal: well-conditioned."""
    a = np.random.default_rng(seed).standard_normal(shape)
    return a + shape[-1] ** 0.5 * 2 * np.eye(shape[-1]) if shape[-1] else a


def _spd(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return a @ _mT(a) + shape[-1] * np.eye(shape[-1])


def _getrf(a):
    """LAPACK's getrf with partial pivoting (first max on ties, zero pivot columns left unscaled), one
    matrix, in NumPy: (LU, 1-based pivots, info)."""
    a = np.array(a, dtype=np.float64)
    m, n = a.shape
    pivots, info = [], 0
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        pivots.append(p + 1)
        a[[j, p]] = a[[p, j]]
        if a[j, j] != 0:
            a[j + 1:, j] /= a[j, j]
        elif info == 0:
            info = j + 1
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, np.array(pivots, dtype=np.int32), info


def _getrf_batch(a):
    batch, k = a.shape[:-2], min(a.shape[-2:])
    outs = [_getrf(a[i]) for i in np.ndindex(*batch)]
    if not outs or a.size == 0:  # torch's pivots of an empty factorization: 1..k
        return a.copy(), np.broadcast_to(np.arange(1, k + 1), (*batch, k)), np.zeros(batch)
    LU = np.stack([o[0] for o in outs]).reshape(a.shape)
    piv = np.stack([o[1] for o in outs]).reshape(*batch, k)
    return LU, piv, np.array([o[2] for o in outs]).reshape(batch)


# -- solve_triangular -----------------------------------------------------------------------------
TRI_SHAPES = [((3, 3), (3, 2)), ((2, 5, 5), (2, 5, 3)), ((5, 5), (2, 5, 3)), ((2, 1, 4, 4), (3, 4, 1)),
              ((1, 1), (1, 4)), ((0, 4, 4), (4, 2)), ((40, 40), (40, 3)), ((2, 70, 70), (70, 2))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shapes", TRI_SHAPES, ids=str)
@pytest.mark.parametrize("upper,left,unit", [(False, True, False), (True, True, False), (False, False, False),
                                             (True, False, True), (False, True, True)])
def test_solve_triangular_matches_numpy(device, shapes, upper, left, unit):
    a_shape, b_shape = shapes
    a = _well(a_shape, 1)
    b = RNG.standard_normal(b_shape)
    if not left:
        b = _mT(b)
    if unit:  # off-diagonal entries small next to the implicit ones (well-conditioned); the diagonal is never read
        eye = np.eye(a_shape[-1], dtype=bool)
        a = np.where(eye, np.nan, a / (2 * a_shape[-1] ** 0.5))
        tri = np.where(eye, 1.0, np.triu(a) if upper else np.tril(a))
    else:
        tri = np.triu(a) if upper else np.tril(a)
    want = np.linalg.solve(tri, b) if left else _mT(np.linalg.solve(_mT(tri), _mT(b)))
    got = LA.solve_triangular(_t(a, device), _t(b, device), upper=upper, left=left, unitriangular=unit)
    _check(got, want, device)


@pytest.mark.parametrize("device", DEVICES)
def test_solve_triangular_non_contiguous_float32_and_mixed_dtype(device):
    a = np.tril(_well((6, 6), 2))
    b = RNG.standard_normal((4, 6))
    got = LA.solve_triangular(_t(a.T, device).to(st.float32), _t(b, device).mT, upper=True)  # result: A's dtype
    assert got.dtype is st.float32
    _check(got, np.linalg.solve(a.T, b.T), device, rtol=1e-4, atol=1e-5)


# -- cholesky -------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 5, 5), (2, 1, 4, 4), (0, 3, 3), (0, 0), (45, 45)], ids=str)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_matches_numpy(device, shape, upper):
    a = _spd(shape, 3)
    want = np.linalg.cholesky(a) if a.size else np.zeros(shape)
    if upper:
        want = _mT(want)
    noise = np.triu(RNG.standard_normal(shape), 1)  # only the lower (upper: upper) triangle is read
    got, info = LA.cholesky_ex(_t(a + (_mT(noise) if upper else noise), device), upper=upper)
    _check(got, want, device)
    _check(info, np.zeros(shape[:-2], dtype=np.int32), device)
    assert info.dtype is st.int32
    _check(LA.cholesky(_t(a, device), upper=upper), want, device)


@pytest.mark.parametrize("device", DEVICES)
def test_cholesky_info_and_errors_of_non_positive_definite_input(device):
    a = np.stack([_spd((4, 4)), np.diag([1.0, 2.0, -1.0, 1.0]), np.eye(4), np.zeros((4, 4))])
    a[2, :2, :2] = [[1.0, 2.0], [2.0, 1.0]]  # leading minor of order 2: -3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        L, info = LA.cholesky_ex(_t(a, device))
    assert tuple(L.shape) == (4, 4, 4) and info.dtype is st.int32
    if device == "meta":
        return
    assert _host(info).tolist() == [0, 3, 2, 1]
    np.testing.assert_allclose(_host(L)[0], np.linalg.cholesky(a[0]), rtol=1e-10)
    msg = ("linalg.cholesky: (Batch element 1): The factorization could not be completed because the input is not "
           "positive-definite (the leading minor of order 3 is not positive-definite).")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(LA.LinAlgError) as e:
            LA.cholesky(_t(a, device))
        assert str(e.value) == msg
        with pytest.raises(RuntimeError, match=r"^linalg.cholesky_ex: The factorization .* minor of order 1 is not"):
            LA.cholesky_ex(_t(np.zeros((2, 2)), device), check_errors=True)


# -- LU -------------------------------------------------------------------------------------------
LU_SHAPES = [(1, 1), (3, 3), (2, 5, 5), (6, 4), (4, 6), (2, 1, 3, 5), (0, 4, 4), (2, 3, 0), (0, 0), (40, 40), (70, 45),
             (45, 70)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", LU_SHAPES, ids=str)
def test_lu_factor_and_lu_match_numpy_getrf(device, shape):
    a = RNG.standard_normal(shape)
    LU_want, piv_want, info_want = _getrf_batch(a)
    LU, piv, info = LA.lu_factor_ex(_t(a, device))
    assert piv.dtype is st.int32 and info.dtype is st.int32
    _check(LU, LU_want, device, rtol=1e-9, atol=1e-9)
    _check(piv, piv_want, device)
    _check(info, info_want, device)
    P, L, U = LA.lu(_t(a, device))
    m, n = shape[-2:]
    k = min(m, n)
    assert tuple(P.shape) == (*shape[:-2], m, m) and tuple(L.shape) == (*shape[:-2], m, k)
    assert tuple(U.shape) == (*shape[:-2], k, n)
    if device != "meta":
        P, L, U = _host(P), _host(L), _host(U)
        np.testing.assert_allclose(P @ L @ U, a, atol=1e-12)
        np.testing.assert_array_equal(L, np.tril(L))
        np.testing.assert_array_equal(U, np.triu(U))
        np.testing.assert_allclose(np.diagonal(L, 0, -2, -1), 1.0)
        assert set(np.unique(P)) <= {0.0, 1.0}  # a permutation matrix
        np.testing.assert_array_equal(P.sum(-1), np.ones(P.shape[:-1]))
        np.testing.assert_array_equal(P.sum(-2), np.ones(P.shape[:-1]))


@pytest.mark.parametrize("device", DEVICES)
def test_lu_factor_of_singular_input(device):
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 1.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]])
    LU, piv, info = LA.lu_factor_ex(_t(a, device))
    LU_want, piv_want, info_want = _getrf_batch(a)  # torch / LAPACK: pivots [2, 2], [1, 2]; info 2, 1
    _check(LU, LU_want, device)
    _check(piv, piv_want, device)
    _check(info, info_want, device)
    if device != "meta":
        assert _host(info).tolist() == [2, 1, 0]
        msg = ("torch.linalg.lu_factor: (Batch element 0): U[2,2] is zero and using it on lu_solve would result in a "
               "division by zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) "
               "or linalg.lu_factor_ex(A, pivot)")
        with pytest.raises(RuntimeError) as e:
            LA.lu_factor(_t(a, device))
        assert str(e.value) == msg
        P, L, U = LA.lu(_t(a, device))  # no error
        np.testing.assert_allclose(_host(P) @ _host(L) @ _host(U), a, atol=1e-15)


@pytest.mark.parametrize("device", DEVICES)
def test_lu_without_pivoting(device):
    a = RNG.standard_normal((2, 40, 37)) + 40 * np.eye(40, 37)  # diagonally dominant: no pivoting needed
    if device == "cpu":
        with pytest.raises(RuntimeError, match="^linalg.lu_factor: LU without pivoting is not implemented on the CPU$"):
            LA.lu_factor(_t(a), pivot=False)
        LU, piv, _, info = _solve_kernels.lu_factor_core(_t(a), pivot=False)  # the algorithm the other devices run
    else:
        LU, piv, info = LA.lu_factor_ex(_t(a, device), pivot=False)
        assert tuple(LA.lu(_t(a, device), pivot=False).P.shape) == (0,)
    _check(piv, np.broadcast_to(np.arange(1, 38), (2, 37)), device)
    _check(info, np.zeros(2), device)
    if device != "meta":
        LU = _host(LU)
        L = np.tril(LU, -1)[..., :, :37] + np.eye(40, 37)
        np.testing.assert_allclose(L @ np.triu(LU[..., :37, :]), a, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, False), (False, True)])
@pytest.mark.parametrize("shapes", [((4, 4), (4, 3)), ((2, 5, 5), (3, 1, 5, 2)), ((1, 1), (1, 1)), ((0, 3, 3), (3, 1)),
                                    ((40, 40), (40, 2))], ids=str)
def test_lu_solve_matches_numpy(device, left, adjoint, shapes):
    a = _well(shapes[0], 6)
    b = RNG.standard_normal(shapes[1]) if left else _mT(RNG.standard_normal(shapes[1]))
    op = _mT(a) if adjoint else a
    want = np.linalg.solve(op, np.broadcast_to(b, np.broadcast_shapes(b.shape[:-2], a.shape[:-2]) + b.shape[-2:])) \
        if left else _mT(np.linalg.solve(_mT(op), _mT(b)))
    LU, piv = LA.lu_factor(_t(a, device))
    _check(LA.lu_solve(LU, piv, _t(b, device), left=left, adjoint=adjoint), want, device)


def test_permutation_from_pivots_in_chunks(monkeypatch):
    piv = RNG.integers(0, 9, (3, 7))
    piv = np.maximum(piv, np.arange(7))  # LAPACK's pivots: row i swaps with a row >= i
    want = np.tile(np.arange(9), (3, 1))
    for b in range(3):
        for i, p in enumerate(piv[b]):
            want[b, [i, p]] = want[b, [p, i]]
    got = _solve_kernels.perm_from_pivots(_t(piv + 1).to(st.int32), 9)
    np.testing.assert_array_equal(_host(got), want)
    monkeypatch.setattr(_solve_kernels, "_CHUNK", 60)  # 2 swaps (of 3 x 9 elements) composed at a time
    np.testing.assert_array_equal(_host(_solve_kernels.perm_from_pivots(_t(piv + 1).to(st.int32), 9)), want)


# -- solve, inv, det, slogdet, matrix_power ---------------------------------------------------------
SOLVE_CASES = [((3, 3), (3,), True), ((2, 3, 3), (2, 3), True), ((2, 3, 3), (3,), True), ((2, 3, 3), (3, 3), True),
               ((2, 3, 3), (4, 1, 3, 2), True), ((3, 3), (2, 3), False), ((2, 3, 3), (5, 1, 2, 3), False),
               ((1, 1), (1, 1), True), ((0, 3, 3), (3,), True), ((0, 0), (0, 2), True)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("a_shape,b_shape,left", SOLVE_CASES, ids=str)
def test_solve_matches_numpy(device, a_shape, b_shape, left):
    a, b = _well(a_shape, 8), RNG.standard_normal(b_shape)
    vector = len(b_shape) == 1 or b_shape == a_shape[:-1]
    if left:
        bb = b[..., None] if vector else b
        batch = np.broadcast_shapes(a_shape[:-2], bb.shape[:-2])
        want = np.linalg.solve(np.broadcast_to(a, batch + a_shape[-2:]), np.broadcast_to(bb, batch + bb.shape[-2:]))
        want = want[..., 0] if vector else want
    else:
        want = _mT(np.linalg.solve(_mT(a), _mT(b)))
    X, info = LA.solve_ex(_t(a, device), _t(b, device), left=left)
    _check(X, want, device)
    _check(info, np.zeros(a_shape[:-2]), device)
    _check(LA.solve(_t(a, device), _t(b, device), left=left), want, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4), (2, 1, 5, 5), (0, 3, 3), (0, 0), (40, 40)], ids=str)
def test_inv_det_slogdet_match_numpy(device, shape):
    a = RNG.standard_normal(shape) + 0.5 * np.eye(shape[-1])
    inverse, info = LA.inv_ex(_t(a, device))
    _check(inverse, np.linalg.inv(a) if a.size else a, device, rtol=1e-9, atol=1e-10)
    _check(info, np.zeros(shape[:-2]), device)
    _check(LA.inv(_t(a, device)), np.linalg.inv(a) if a.size else a, device, rtol=1e-9, atol=1e-10)
    _check(LA.det(_t(a, device)), np.linalg.det(a), device)
    sign, logabsdet = LA.slogdet(_t(a, device))
    want_sign, want_log = np.linalg.slogdet(a)
    _check(sign, want_sign, device)
    _check(logabsdet, want_log, device)
    assert type(LA.slogdet(_t(a, device))).__name__ == "linalg_slogdet"


@pytest.mark.parametrize("device", DEVICES)
def test_singular_input_info_values_and_errors(device):
    a = np.stack([np.eye(3), np.diag([1.0, 0.0, 1.0]), np.zeros((3, 3))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, info = LA.inv_ex(_t(a, device))
        _, solve_info = LA.solve_ex(_t(a, device), _t(np.ones(3), device))
        det = LA.det(_t(a, device))
        sign, logabsdet = LA.slogdet(_t(a, device))
    _check(info, [0, 2, 1], device)
    _check(solve_info, [0, 2, 1], device)
    _check(det, [1.0, 0.0, 0.0], device)
    _check(sign, [1.0, 0.0, 0.0], device)
    _check(logabsdet, [0.0, -np.inf, -np.inf], device)
    if device == "meta":
        return
    single = _t(np.diag([1.0, 0.0, 1.0]), device)
    cases = [
        (lambda: LA.inv(_t(a, device)), "linalg.inv: (Batch element 1): The diagonal element 2 is zero, the inversion "
                                        "could not be completed because the input matrix is singular."),
        (lambda: LA.inv(single), "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed "
                                 "because the input matrix is singular."),
        (lambda: LA.inv_ex(single, check_errors=True), "linalg.inv_ex: The diagonal element 2 is zero, the inversion "
                                                       "could not be completed because the input matrix is singular."),
        (lambda: LA.solve(single, _t(np.ones(3), device)), "torch.linalg.solve: The solver failed because the input "
                                                           "matrix is singular."),
        (lambda: LA.solve_ex(_t(a, device), _t(np.ones((3, 1)), device), check_errors=True),
         "torch.linalg.solve_ex: (Batch element 1): The solver failed because the input matrix is singular."),
        (lambda: LA.matrix_power(single, -1), "linalg.inv: The diagonal element 2 is zero, the inversion could not be "
                                              "completed because the input matrix is singular."),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn, msg in cases:
            with pytest.raises(LA.LinAlgError) as e:
                fn()
            assert str(e.value) == msg
            assert isinstance(e.value, RuntimeError)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 3, 6, 13])
def test_matrix_power_matches_numpy(device, n):
    a = _well((2, 4, 4), 9) / 4
    want = np.linalg.matrix_power(a, n)
    _check(LA.matrix_power(_t(a, device), n), want, device)
    ints = np.arange(9).reshape(3, 3) % 3
    if n >= 2 and device == "cuda":  # as torch: no integer GEMM on CUDA
        with pytest.raises(NotImplementedError, match="\"addmm_cuda\" not implemented for 'Long'"):
            LA.matrix_power(_t(ints, device), n)
    elif n >= 0:
        got = LA.matrix_power(_t(ints, device), n)
        assert got.dtype is st.int64
        _check(got, np.linalg.matrix_power(ints, n), device)


@pytest.mark.parametrize("device", DEVICES)
def test_a_300_by_300_well_conditioned_system(device):
    a = _well((300, 300), 11)
    spd = _spd((300, 300), 12)
    b = RNG.standard_normal((300, 2))
    _check(LA.solve(_t(a, device), _t(b, device)), np.linalg.solve(a, b), device)
    _check(LA.cholesky(_t(spd, device)), np.linalg.cholesky(spd), device)
    _check(LA.inv(_t(a, device)), np.linalg.inv(a), device)
    _check(LA.slogdet(_t(a, device)).logabsdet, np.linalg.slogdet(a)[1], device)
    tri = np.tril(a)
    _check(LA.solve_triangular(_t(tri, device), _t(b, device), upper=False), np.linalg.solve(tri, b), device)


@pytest.mark.parametrize("device", DEVICES)
def test_float32_and_non_contiguous_input_match_float64_within_float32_precision(device):
    a, spd, b = _well((2, 70, 70), 13), _spd((2, 70, 70), 14), RNG.standard_normal((2, 70, 3))
    f = st.float32
    At, St = _t(_mT(a), device, dtype=f).mT, _t(spd, device, dtype=f).mT  # transposed views
    for got, want in [(LA.solve(At, _t(b, device, dtype=f)), np.linalg.solve(a, b)),
                      (LA.cholesky(St), np.linalg.cholesky(spd)),
                      (LA.inv(At), np.linalg.inv(a)),
                      (LA.slogdet(At).logabsdet, np.linalg.slogdet(a)[1])]:
        assert got.dtype is f
        _check(got, want, device, 1e-3, 1e-4)
    _check(LA.det(At / 8), np.linalg.det(a / 8), device, 1e-3, 0)


# -- gradients ------------------------------------------------------------------------------------
def _grads_match_torch(torch, device, sfn, tfn, arrays, rtol=1e-9, atol=1e-11):
    s_in = [_t(a, device, grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    s_out, t_out = sfn(*s_in), tfn(*t_in)
    s_out = s_out if isinstance(s_out, tuple) else (s_out,)
    t_out = t_out if isinstance(t_out, tuple) else (t_out,)
    s_loss = t_loss = 0
    for s, t in zip(s_out, t_out):
        assert tuple(s.shape) == tuple(t.shape)
        if t.dtype.is_floating_point:
            u = RNG.standard_normal(tuple(t.shape))
            s_loss = s_loss + (s * _t(u, device)).sum()
            t_loss = t_loss + (t * torch.tensor(u)).sum()
    s_loss.backward()
    t_loss.backward()
    for s, t in zip(s_in, t_in):
        assert tuple(s.grad.shape) == tuple(t.grad.shape)
        if device != "meta":
            np.testing.assert_allclose(_host(s.grad), t.grad.numpy(), rtol=rtol, atol=atol)


def _grad_cases(torch):
    a, b = _well((2, 5, 5), 20), RNG.standard_normal((2, 5, 3))
    spd, tri = _spd((2, 5, 5), 21), np.tril(_well((2, 5, 5), 22))
    L = torch.linalg
    for left in (True, False):
        bb = b if left else _mT(b)
        yield (f"solve_triangular-left{left}", lambda m, A, B, left=left: m.solve_triangular(
            A, B, upper=True, left=left), [_mT(tri), bb])
        yield (f"solve_triangular-unit-left{left}", lambda m, A, B, left=left: m.solve_triangular(
            A, B, upper=False, left=left, unitriangular=True), [tri, bb])
        yield (f"solve-left{left}", lambda m, A, B, left=left: m.solve(A, B, left=left), [a, bb])
        for adjoint in (False, True):
            LU, piv = L.lu_factor(torch.tensor(a))

            def lu_solve(m, LU, B, left=left, adjoint=adjoint, piv=piv):
                piv = piv if m is L else st.tensor(piv.numpy(), device=LU.device)
                return m.lu_solve(LU, piv, B, left=left, adjoint=adjoint)

            yield f"lu_solve-left{left}-adjoint{adjoint}", lu_solve, [LU.numpy(), bb]
    yield "solve_triangular-broadcast", lambda m, A, B: m.solve_triangular(A, B, upper=False), [tri[0], b]
    yield "solve-vector", lambda m, A, B: m.solve(A, B), [a, b[..., 0]]
    yield "solve-broadcast", lambda m, A, B: m.solve(A, B), [a[0], b]
    for upper in (False, True):
        yield f"cholesky-upper{upper}", lambda m, A, upper=upper: m.cholesky(A, upper=upper), [spd]
    for shape in [(2, 5, 5), (7, 4), (4, 7), (40, 40), (45, 38), (38, 45)]:
        x = RNG.standard_normal(shape)
        yield f"lu_factor-{shape}", lambda m, A: m.lu_factor(A).LU, [x]
        yield f"lu-{shape}", lambda m, A: tuple(m.lu(A))[1:], [x]
    yield "inv", lambda m, A: m.inv(A), [a]
    yield "det", lambda m, A: m.det(A), [a]
    yield "slogdet", lambda m, A: tuple(m.slogdet(A)), [a]
    yield "matrix_power-3", lambda m, A: m.matrix_power(A, -3), [a]
    yield "matrix_power0", lambda m, A: m.matrix_power(A, 0), [a]


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_match_torch(device):
    torch = pytest.importorskip("torch")
    for name, fn, arrays in _grad_cases(torch):
        try:
            _grads_match_torch(torch, device, lambda *x, fn=fn: fn(LA, *x), lambda *x, fn=fn: fn(torch.linalg, *x),
                               arrays)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


GRADCHECK = [
    ("solve_triangular", lambda A, B: LA.solve_triangular(A, B, upper=True, left=False, unitriangular=True),
     [np.triu(_well((2, 4, 4), 30)), RNG.standard_normal((2, 3, 4))]),
    ("solve_triangular-lower", lambda A, B: LA.solve_triangular(A, B, upper=False), [np.tril(_well((4, 4), 31)),
                                                                                       RNG.standard_normal((2, 4, 2))]),
    ("cholesky", lambda A: LA.cholesky(A + A.mT), [_spd((2, 4, 4), 32) / 2]),  # symmetrized: only a triangle is read
    ("cholesky-upper", lambda A: LA.cholesky(A + A.mT, upper=True), [_spd((4, 4), 33) / 2]),
    ("lu_factor-tall", lambda A: LA.lu_factor(A).LU, [RNG.standard_normal((5, 3))]),
    ("lu-wide", lambda A: tuple(LA.lu(A))[1:], [RNG.standard_normal((2, 3, 5))]),
    ("lu_solve", lambda LU, B: LA.lu_solve(LU, LA.lu_factor(LU.detach()).pivots, B, adjoint=True),
     [_well((3, 3), 34), RNG.standard_normal((3, 2))]),
    ("solve", lambda A, B: LA.solve(A, B), [_well((2, 3, 3), 35), RNG.standard_normal((2, 3))]),
    ("solve-right", lambda A, B: LA.solve(A, B, left=False), [_well((3, 3), 36), RNG.standard_normal((2, 3))]),
    ("inv", lambda A: LA.inv(A), [_well((2, 3, 3), 37)]),
    ("det", lambda A: LA.det(A), [RNG.standard_normal((2, 3, 3))]),
    ("det-1x1", lambda A: LA.det(A), [RNG.standard_normal((1, 1))]),
    ("slogdet", lambda A: tuple(LA.slogdet(A)), [RNG.standard_normal((3, 3))]),
    ("matrix_power", lambda A: LA.matrix_power(A, -2), [_well((3, 3), 38)]),
]


@pytest.mark.parametrize("name,fn,arrays", GRADCHECK, ids=[c[0] for c in GRADCHECK])
def test_gradcheck(name, fn, arrays):
    assert gradcheck(fn, tuple(_t(a, grad=True) for a in arrays))


def test_integer_outputs_do_not_require_grad():
    a = _t(_well((2, 3, 3), 41), grad=True)
    LU, piv, info = LA.lu_factor_ex(a)
    assert LU.requires_grad and not piv.requires_grad and not info.requires_grad
    P, L, U = LA.lu(a)
    assert not P.requires_grad and L.requires_grad and U.requires_grad
    assert not LA.cholesky_ex(a @ a.mT).info.requires_grad and not LA.inv_ex(a).info.requires_grad
    assert LA.slogdet(a).sign.requires_grad  # as torch: differentiable, with a zero gradient


def test_det_gradient_of_a_nearly_singular_matrix_is_the_cofactor_matrix():
    y = _t(np.array([[1.0, 2.0], [2.0, 4.0 + 1e-9]]), grad=True)
    LA.det(y).backward()
    np.testing.assert_allclose(_host(y.grad), [[4.0, -2.0], [-2.0, 1.0]], rtol=1e-6)


# -- argument errors and results ------------------------------------------------------------------
def _f(shape, dtype=np.float64):
    return _t(np.ones(shape, dtype=dtype))


ERRORS = [
    (lambda: LA.cholesky(_f((2, 3))), RuntimeError, "linalg.cholesky: A must be batches of square matrices, but they "
                                                    "are 2 by 3 matrices"),
    (lambda: LA.cholesky(_f(3)), RuntimeError, "linalg.cholesky: The input tensor A must have at least 2 dimensions."),
    (lambda: LA.cholesky(_f((3, 3), np.int64)), RuntimeError, "linalg.cholesky: Expected a floating point or complex "
                                                              "tensor as input. Got Long"),
    (lambda: LA.cholesky(_f((3, 3), np.float16)), NotImplementedError, "\"cholesky_cpu\" not implemented for 'Half'"),
    (lambda: LA.cholesky(_f((3, 3)), upper=1), TypeError, "linalg_cholesky(): argument 'upper' must be bool, not int"),
    (lambda: LA.cholesky([1]), TypeError, "linalg_cholesky(): argument 'input' (position 1) must be Tensor, not list"),
    (lambda: LA.solve_triangular(_f((3, 3)), _f(3), upper=True), RuntimeError,
     "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."),
    (lambda: LA.solve_triangular(_f((3, 3)), _f((4, 2)), upper=True), RuntimeError,
     "linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x2)"),
    (lambda: LA.solve_triangular(_f((3, 3)), _f((2, 4)), upper=True, left=False), RuntimeError,
     "linalg.solve_triangular: Incompatible shapes of A and B for the equation XA = B (3x3 and 2x4)"),
    (lambda: LA.solve_triangular(_f((2, 3, 3)), _f((4, 3, 2)), upper=True), RuntimeError,
     "The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 0"),
    (lambda: LA.solve_triangular(_f((3, 3), np.int64), _f((3, 2), np.int64), upper=True), NotImplementedError,
     "\"triangular_solve_cpu\" not implemented for 'Long'"),
    (lambda: LA.solve_triangular(_f((3, 3)), _f((3, 2)), upper=None), TypeError,
     "linalg_solve_triangular(): argument 'upper' must be bool, not NoneType"),
    (lambda: LA.lu_factor(_f(3)), RuntimeError, "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
                                                "[3] instead"),
    (lambda: LA.lu(_f(3)), RuntimeError, "linalg.lu: Expected tensor with 2 or more dimensions. Got size: [3] instead"),
    (lambda: LA.lu_factor(_f((3, 3), np.int32)), NotImplementedError, "\"lu_cpu\" not implemented for 'Int'"),
    (lambda: LA.lu_factor_ex(_f((2, 3, 3)) * 0, check_errors=True), RuntimeError,
     "torch.linalg.lu_factor_ex: (Batch element 0): U[1,1] is zero and using it on lu_solve would result in a division "
     "by zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
     "linalg.lu_factor_ex(A, pivot)"),
    (lambda: LA.lu_solve(_f((3, 3)), _f(3, np.int64), _f((3, 2))), RuntimeError,
     "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32"),
    (lambda: LA.lu_solve(_f((3, 3)), _f(2, np.int32), _f((3, 2))), RuntimeError,
     "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix"),
    (lambda: LA.lu_solve(_f((2, 3, 3)), _f((4, 3), np.int32), _f((3, 2))), RuntimeError,
     "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with shape [4, 3] "
     "instead"),
    (lambda: LA.lu_solve(_f((3, 3)), _f(3, np.int32), _f((3, 2), np.float32)), RuntimeError,
     "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type Double and B of type Float "
     "instead"),
    (lambda: LA.lu_solve(_f((3, 4)), _f(3, np.int32), _f((3, 2))), RuntimeError,
     "torch.linalg.lu_solve: A must be batches of square matrices, but they are 3 by 4 matrices"),
    (lambda: LA.solve(_f((3, 3)), _f(4)), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)"),
    (lambda: LA.solve(_f((3, 3)), _f((3, 4)), left=False), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation XA = B (3x3 and 3x4)"),
    (lambda: LA.solve(_f((1, 1)), _f(1), left=False), RuntimeError,
     "linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. In this case "
     "linalg.solve is equivalent to B / A.squeeze(-1)"),
    (lambda: LA.solve(_f((3, 3), np.float32), _f(3)), RuntimeError,
     "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B of type Double instead"),
    (lambda: LA.solve(_f((3, 3), np.int64), _f(3, np.int64)), RuntimeError,
     "linalg.solve: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: LA.solve(_f((2, 3, 3)), _f((4, 3, 1))), RuntimeError,
     "The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 0"),
    (lambda: LA.solve(_f((3, 3)), _f((2, 3))), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x3)"),
    (lambda: LA.inv(_f((2, 3))), RuntimeError, "linalg.inv: A must be batches of square matrices, but they are 2 by 3 "
                                               "matrices"),
    (lambda: LA.inv(_f((3, 3), np.int32)), RuntimeError, "linalg.inv: Expected a floating point or complex tensor as "
                                                         "input. Got Int"),
    (lambda: LA.det(_f(3)), RuntimeError, "linalg.det: The input tensor A must have at least 2 dimensions."),
    (lambda: LA.det(_f((3, 3), np.int64)), RuntimeError, "linalg.det: Expected a floating point or complex tensor as "
                                                         "input. Got Long"),
    (lambda: LA.slogdet(_f((2, 3))), RuntimeError, "linalg.slogdet: A must be batches of square matrices, but they are "
                                                   "2 by 3 matrices"),
    (lambda: LA.matrix_power(_f((2, 3)), 2), RuntimeError, "linalg.matrix_power: A must be batches of square matrices, "
                                                          "but they are 2 by 3 matrices"),
    (lambda: LA.matrix_power(_f((3, 3)), 1.5), TypeError, "linalg_matrix_power(): argument 'n' (position 2) must be "
                                                          "int, not float"),
    (lambda: LA.matrix_power(_f((3, 3), np.int64), -1), RuntimeError, "linalg.inv: Expected a floating point or "
                                                                      "complex tensor as input. Got Long"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_in_torchs_words(case):
    fn, exc, message = ERRORS[case]
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value) == message


def test_named_results_print_as_torchs():
    a = _well((3, 3), 40)
    results = {
        "linalg_cholesky_ex": (LA.cholesky_ex(_t(_spd((3, 3)))), ("L", "info")),
        "linalg_lu_factor": (LA.lu_factor(_t(a)), ("LU", "pivots")),
        "linalg_lu_factor_ex": (LA.lu_factor_ex(_t(a)), ("LU", "pivots", "info")),
        "linalg_lu": (LA.lu(_t(a)), ("P", "L", "U")),
        "linalg_solve_ex": (LA.solve_ex(_t(a), _t(np.ones(3))), ("result", "info")),
        "linalg_inv_ex": (LA.inv_ex(_t(a)), ("inverse", "info")),
        "linalg_slogdet": (LA.slogdet(_t(a)), ("sign", "logabsdet")),
    }
    for name, (value, fields) in results.items():
        assert type(value).__name__ == name and isinstance(value, tuple)
        assert repr(value).startswith(f"strided.return_types.{name}(\n{fields[0]}=")
        assert all(getattr(value, f) is value[i] for i, f in enumerate(fields))


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_det_gradient_of_an_exactly_singular_matrix_is_the_cofactor_matrix(device):
    # LU meets an exactly zero pivot here on every device; d det / dA is still the cofactor matrix
    # (Note [Solver gradients]: det), nonzero at rank n - 1 and zero below
    a = st.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=st.float64, device=device, requires_grad=True)
    LA.det(a).backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), [[4.0, -2.0], [-2.0, 1.0]], rtol=1e-10, atol=1e-12)
    b = st.tensor(np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0]), device=device, requires_grad=True)  # rank 1
    LA.det(b).backward()
    np.testing.assert_allclose(b.grad.cpu().numpy(), np.zeros((3, 3)), atol=1e-12)
