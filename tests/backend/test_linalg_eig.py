"""strided.linalg.eig / eigvals against torch (the oracle): values compared through phase-invariant quantities
(Note [Phase-invariant eig checks] in strided/testing/opdb/linalg_eig.py), gradients of phase-invariant losses,
torch's errors, out=."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")  # the oracle

DTYPES = {"float32": (st.float32, torch.float32), "float64": (st.float64, torch.float64),
          "complex64": (st.complex64, torch.complex64), "complex128": (st.complex128, torch.complex128)}
TOL = {"float32": 2e-5, "complex64": 2e-5, "float64": 1e-12, "complex128": 1e-12}


def _matrix(shape, name, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if name.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(DTYPES[name][0].numpy_dtype)


def _same_set(w, ref, tol):
    gap = np.abs(w[..., :, None] - ref[..., None, :])
    assert gap.size == 0 or gap.min(-1).max() <= tol and gap.min(-2).max() <= tol, (w, ref)


@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 5), (1, 1), (0, 3, 3), (3, 0, 0)])
def test_eig_matches_torch(name, shape):
    a = _matrix(shape, name)
    w, V = st.linalg.eig(st.from_numpy(a))
    tw, tV = torch.linalg.eig(torch.from_numpy(a))
    assert type(w).__name__ == "Tensor" and (w.dtype.name, V.dtype.name) == (str(tw.dtype)[6:], str(tV.dtype)[6:])
    assert tuple(w.shape) == tuple(tw.shape) and tuple(V.shape) == tuple(tV.shape)
    assert V.stride() == tV.stride()  # LAPACK's column-major eigenvectors
    wn, vn, tol = w.numpy().astype(np.complex128), V.numpy().astype(np.complex128), TOL[name] * 10
    an = a.astype(np.complex128)
    np.testing.assert_allclose(an @ vn - vn * wn[..., None, :], 0, atol=tol * max(1, np.abs(an).max(initial=0)))
    _same_set(wn, tw.numpy().astype(np.complex128), tol)
    # geev's normalization (unit 2-norm, largest component real) is torch's: |v| agrees entry by entry
    np.testing.assert_allclose(np.abs(vn), tV.abs().numpy(), atol=tol)
    np.testing.assert_allclose(st.linalg.eigvals(st.from_numpy(a)).numpy(), w.numpy(), atol=tol)


def test_named_tuple_and_meta():
    r = st.linalg.eig(st.eye(3, dtype=st.float64))
    assert type(r).__name__ == "linalg_eig" and r.eigenvalues is r[0] and r.eigenvectors is r[1]
    w, V = st.linalg.eig(st.empty(2, 4, 4, device="meta"))
    assert w.dtype is st.complex64 and V.dtype is st.complex64 and V.shape == (2, 4, 4) and V.stride() == (16, 1, 4)
    assert st.linalg.eigvals(st.empty(3, 3, dtype=st.float64, device="meta")).dtype is st.complex128


LOSSES = {
    "|w|": lambda m, A: m.linalg.eig(A)[0].abs().sum(),
    "Re eigvals": lambda m, A: m.linalg.eigvals(A).real.sum(),
    "Im w^2": lambda m, A: (m.linalg.eig(A)[0] * m.linalg.eig(A)[0]).imag.sum(),
    "|V|": lambda m, A: m.linalg.eig(A)[1].abs().sum(),
    "w and |V|^2": lambda m, A: (lambda w, V: w.real.sum() + (V.abs() * V.abs() * 3).sum())(*m.linalg.eig(A)),
}


@pytest.mark.parametrize("name", ["float64", "complex128"])
@pytest.mark.parametrize("loss", list(LOSSES))
def test_gradients_match_torch(name, loss):
    a = _matrix((2, 4, 4), name, seed=3)
    A, T = st.from_numpy(a).requires_grad_(), torch.from_numpy(a).requires_grad_()
    LOSSES[loss](st, A).backward()
    LOSSES[loss](torch, T).backward()
    assert A.grad.dtype is A.dtype
    np.testing.assert_allclose(A.grad.numpy(), T.grad.numpy(), rtol=1e-9, atol=1e-9)


def test_gradient_float32():
    a = _matrix((3, 3), "float32", seed=5)
    A, T = st.from_numpy(a).requires_grad_(), torch.from_numpy(a).requires_grad_()
    st.linalg.eig(A)[1].abs().sum().backward()
    torch.linalg.eig(T)[1].abs().sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), T.grad.numpy(), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", ["float64", "complex128"])
def test_phase_dependent_loss_is_refused(name):
    a = _matrix((3, 3), name, seed=1)
    msg = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by "
           "e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.")
    with pytest.raises(RuntimeError) as theirs:
        torch.linalg.eig(torch.from_numpy(a).requires_grad_())[1].real.sum().backward()
    assert str(theirs.value) == msg
    with pytest.raises(RuntimeError) as ours:
        st.linalg.eig(st.from_numpy(a).requires_grad_())[1].real.sum().backward()
    assert str(ours.value) == msg


def test_double_backward():
    a = _matrix((3, 3), "float64", seed=2)
    A, T = st.from_numpy(a).requires_grad_(), torch.from_numpy(a).requires_grad_()
    (g,) = st.autograd.grad(st.linalg.eigvals(A).abs().sum(), A, create_graph=True)
    (tg,) = torch.autograd.grad(torch.linalg.eigvals(T).abs().sum(), T, create_graph=True)
    (g * g).sum().backward()
    (tg * tg).sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), T.grad.numpy(), rtol=1e-7, atol=1e-8)


def _message(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value), str(e.value)


@pytest.mark.parametrize("case", ["int", "bool", "1-d", "2x3", "half", "nan", "inf"])
@pytest.mark.parametrize("api", ["eig", "eigvals"])
def test_errors_match_torch(case, api):
    a = {"int": np.eye(3, dtype=np.int64), "bool": np.eye(3, dtype=bool), "1-d": np.ones(3),
         "2x3": np.ones((2, 3)), "half": np.eye(3, dtype=np.float16),
         "nan": np.array([[1.0, np.nan], [0.0, 1.0]]), "inf": np.array([[1.0, np.inf], [0.0, 1.0]])}[case]
    if api == "eigvals" and case in ("nan", "inf"):  # no check without gradients, as torch
        assert np.isnan(st.linalg.eigvals(st.from_numpy(a)).numpy()).all()
        a = a.copy()
    theirs = _message(lambda: getattr(torch.linalg, api)(torch.from_numpy(a).requires_grad_(case in ("nan", "inf"))))
    ours = _message(lambda: getattr(st.linalg, api)(st.from_numpy(a).requires_grad_(case in ("nan", "inf"))))
    assert ours == theirs


def test_out():
    a = _matrix((3, 3), "float64")
    w, V = st.empty(0, dtype=st.complex128), st.empty(0, dtype=st.complex64)
    r = st.linalg.eig(st.from_numpy(a), out=(w, V))
    assert r[0] is w and r[1] is V and V.dtype is st.complex64 and V.shape == (3, 3)
    np.testing.assert_allclose(w.numpy(), st.linalg.eigvals(st.from_numpy(a)).numpy())
    out = st.empty(0, dtype=st.complex128)
    assert st.linalg.eigvals(st.from_numpy(a), out=out) is out and out.shape == (3,)
    t = torch.from_numpy(a)
    for bad in [(st.empty(0), st.empty(0, dtype=st.complex64))]:
        ours = _message(lambda b=bad: st.linalg.eig(st.from_numpy(a), out=b))
        theirs = _message(lambda: torch.linalg.eig(t, out=(torch.empty(0), torch.empty(0, dtype=torch.cfloat))))
        assert ours == theirs
    ours = _message(lambda: st.linalg.eigvals(st.from_numpy(a), out=st.empty(0)))
    theirs = _message(lambda: torch.linalg.eigvals(t, out=torch.empty(0)))
    assert ours == theirs
    ours = _message(lambda: st.linalg.eig(st.from_numpy(a).requires_grad_(), out=(w, V)))
    theirs = _message(lambda: torch.linalg.eig(t.clone().requires_grad_(), out=(torch.empty(0, dtype=torch.cdouble),
                                                                                 torch.empty(0, dtype=torch.cdouble))))
    assert ours == theirs
