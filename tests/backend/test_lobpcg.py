"""``strided.lobpcg`` (Note [LOBPCG] in ``strided/lobpcg.py``): the extreme eigenpairs of standard and generalized
symmetric positive definite problems by both methods, with a preconditioner, batches, a tracker, on every available
device; the gradient (Note [LOBPCG backward]) against the full ``linalg.eigh``'s; the refusals; and agreement with
torch.lobpcg where torch is installed."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

DEVICES = [d for d in available_devices() if d != "meta"]
RNG = np.random.default_rng(11)


def _spd(m, shift):
    M = RNG.standard_normal((m, m))
    return M @ M.T + shift * np.eye(m)


A40 = _spd(40, 40.0)
B40 = _spd(40, 40.0) / 40
EV = np.linalg.eigvalsh(A40)
L = np.linalg.cholesky(B40)
GEN = np.linalg.eigvalsh(np.linalg.solve(L, np.linalg.solve(L, A40).T).T)  # eigenvalues of A x = l B x


def _wanted(values, k, largest):
    return values[::-1][:k] if largest else values[:k]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
def test_standard_problem(device, method, largest):
    st.manual_seed(0)
    A = st.tensor(A40, device=device)
    E, X = st.lobpcg(A, k=3, largest=largest, method=method)
    assert E.shape == (3,) and X.shape == (40, 3) and E.dtype is st.float64
    np.testing.assert_allclose(E.cpu().numpy(), _wanted(EV, 3, largest), rtol=1e-9)
    residual = (A @ X - X * E).abs().max().item()
    assert residual < 1e-5 * EV[-1]
    np.testing.assert_allclose((X.T @ X).cpu().numpy(), np.eye(3), atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("largest", [True, False])
def test_generalized_problem_with_start_and_preconditioner(device, largest):
    A, B = st.tensor(A40, device=device), st.tensor(B40, device=device)
    X0 = st.tensor(RNG.standard_normal((40, 5)), device=device)
    iK = st.tensor(np.linalg.inv(A40 + 1.0 * np.eye(40)), device=device)  # an approximate inverse of A
    E, X = st.lobpcg(A, k=2, B=B, X=X0, iK=iK, largest=largest)
    assert E.shape == (2,) and X.shape == (40, 2)
    np.testing.assert_allclose(E.cpu().numpy(), _wanted(GEN, 2, largest), rtol=1e-8)
    np.testing.assert_allclose((X.T @ B @ X).cpu().numpy(), np.eye(2), atol=1e-9)


@pytest.mark.parametrize("device", DEVICES)
def test_float32_and_batches(device):
    batch = np.stack([_spd(30, 30.0), _spd(30, 30.0)])
    st.manual_seed(1)
    E, X = st.lobpcg(st.tensor(batch, dtype=st.float32, device=device), k=2)
    assert E.shape == (2, 2) and X.shape == (2, 30, 2) and E.dtype is st.float32
    for b in range(2):
        np.testing.assert_allclose(E[b].cpu().numpy(), np.linalg.eigvalsh(batch[b])[::-1][:2], rtol=1e-4)


def test_tracker_sees_the_iteration_and_can_stop_it():
    seen = []

    def tracker(worker):
        seen.append((worker.ivars["istep"], worker.ivars["converged_count"], tuple(worker.tvars["rerr"].shape),
                     worker.X.shape, worker.E.shape, worker.R.shape))
        if worker.ivars["istep"] == 3:
            worker.bvars["force_stop"] = True

    st.manual_seed(0)
    st.lobpcg(st.tensor(A40), k=2, tracker=tracker)
    assert [s[0] for s in seen] == [1, 2, 3]
    assert all(s[2] == (2,) and s[3] == (40, 2) and s[4] == (2,) and s[5] == (40, 2) for s in seen)
    counts = [s[1] for s in seen]
    assert counts == sorted(counts)  # soft locking: converged pairs stay converged


def test_niter_limits_the_updates():
    steps = []
    st.manual_seed(0)
    st.lobpcg(st.tensor(A40), k=2, niter=4, tol=1e-30, tracker=lambda w: steps.append(w.ivars["istep"]))
    assert steps == [1, 2, 3, 4]


def _sign_free_loss(E, U, W):
    """Eigenvalues and the eigenspace projector: what a gradient can be compared on (eigenvector signs are free)."""
    return E.sum() + (E * E).sum() + ((U @ U.mT) * W).sum()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("largest", [True, False])
def test_gradient_is_the_partial_eigendecomposition_one(device, largest):
    W = st.tensor(RNG.standard_normal((40, 40)), device=device)
    A = st.tensor(A40, device=device, requires_grad=True)
    E, U = st.lobpcg(A, k=3, largest=largest, tol=1e-12)
    assert type(E.grad_fn).__name__ == "LOBPCGAutogradFunctionBackward"
    _sign_free_loss(E, U, W).backward()
    ref = st.tensor(A40, device=device, requires_grad=True)
    values, vectors = st.linalg.eigh((ref + ref.mT) / 2)
    pick = [39, 38, 37] if largest else [0, 1, 2]
    _sign_free_loss(values[pick], vectors[:, pick], W).backward()
    np.testing.assert_allclose(A.grad.cpu().numpy(), ref.grad.cpu().numpy(), atol=1e-7)
    np.testing.assert_allclose(A.grad.cpu().numpy(), A.grad.cpu().numpy().T)  # symmetrized as torch's


def test_gradient_of_a_batch_and_no_gradient_with_B():
    A = st.tensor(np.stack([A40, A40 + np.eye(40)]), requires_grad=True)
    E, U = st.lobpcg(A, k=2, tol=1e-12)
    E.sum().backward()
    for b in range(2):  # d(sum of eigenvalues) / dA is the projector onto their eigenvectors
        np.testing.assert_allclose(A.grad[b].numpy(), (U[b] @ U[b].T).detach().numpy(), atol=1e-9)
    A = st.tensor(A40, requires_grad=True)
    E, _ = st.lobpcg(A, k=2, B=st.tensor(B40))
    with pytest.raises(ValueError, match="^lobpcg.backward does not support backward with B != I yet.$"):
        E.sum().backward()


@pytest.mark.parametrize("call, error, words", [
    (lambda: st.lobpcg(st.tensor(A40), k=14), ValueError,
     "LOBPCG algorithm is not applicable when the number of A rows (=40) is smaller than 3 x the number of requested "
     "eigenpairs (=14)"),
    (lambda: st.lobpcg(st.tensor(A40)[:, :39], k=2), AssertionError, "A must be square, got shape"),
    (lambda: st.lobpcg(st.tensor(A40), k=2, B=st.eye(39, dtype=st.float64)), AssertionError,
     "A and B must have same shape"),
    (lambda: st.lobpcg(st.tensor(A40), X=st.zeros(39, 2, dtype=st.float64)), AssertionError, "X shape mismatch"),
    (lambda: st.lobpcg(st.tensor(A40), k=0), ValueError, "lobpcg: k must be a positive int, got 0"),
    (lambda: st.lobpcg(st.tensor(A40), k=3, n=2), ValueError, "must be at least k (=3)"),
    (lambda: st.lobpcg(st.tensor(A40), k=2, method="lanczos"), ValueError, "method must be 'ortho' or 'basic'"),
    (lambda: st.lobpcg(st.tensor(A40).int(), k=2), TypeError, "lobpcg: A must be float32 or float64"),
    (lambda: st.lobpcg(A40, k=2), TypeError, "lobpcg"),
    (lambda: st.lobpcg(st.tensor(A40), k=2.0), TypeError, "lobpcg(): argument 'k' must be int, not float"),
    (lambda: st.lobpcg(st.tensor(A40), niter=2.5), TypeError, "lobpcg(): argument 'niter' must be int, not float"),
    (lambda: st.lobpcg(st.tensor(A40), niter=-2), ValueError, "niter must be -1 (no limit) or a non-negative int"),
    (lambda: st.lobpcg(st.tensor(A40), tol="small"), TypeError, "lobpcg(): argument 'tol' must be float, not str"),
    (lambda: st.lobpcg(st.tensor(A40), largest=1), TypeError, "lobpcg(): argument 'largest' must be bool, not int"),
    (lambda: st.lobpcg(st.tensor(A40), tracker=3), TypeError, "lobpcg(): argument 'tracker' must be callable"),
])
def test_refusals(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value)


def test_against_torch():
    torch = pytest.importorskip("torch")
    for largest in (True, False):
        mine = st.lobpcg(st.tensor(A40), k=3, B=st.tensor(B40), largest=largest)[0].numpy()
        theirs = torch.lobpcg(torch.tensor(A40), k=3, B=torch.tensor(B40), largest=largest)[0].numpy()
        np.testing.assert_allclose(mine, theirs, rtol=1e-7)
    W = np.random.default_rng(2).standard_normal((40, 40))
    mine = st.tensor(A40, requires_grad=True)
    theirs = torch.tensor(A40, requires_grad=True)
    _sign_free_loss(*st.lobpcg(mine, k=2, tol=1e-12), st.tensor(W)).backward()
    _sign_free_loss(*torch.lobpcg(theirs, k=2, tol=1e-12), torch.tensor(W)).backward()
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), atol=1e-6)
    with pytest.raises(ValueError) as a:
        st.lobpcg(st.tensor(A40), k=14)
    with pytest.raises(ValueError) as b:
        torch.lobpcg(torch.tensor(A40), k=14)
    assert str(a.value) == str(b.value).replace("LPBPCG", "LOBPCG")  # torch < 2.14 misspelt it
