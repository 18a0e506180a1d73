"""Autocast around what strided composes in Python (Note [Autocast around composed functions]) and ops listed for
one device only: result dtypes as torch's under CPU autocast, no low-precision step inside a function torch runs
as one kernel, and the inner ops of a composite still autocast where torch's do."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

DEVICES = [d for d in available_devices() if d in ("cpu", "cuda")]
A = (np.ones((4, 4)) * 0.5 + 4 * np.eye(4)).astype(np.float32)

CASES = {
    "linalg.inv": lambda T, a: T.linalg.inv(a),
    "inverse": lambda T, a: T.inverse(a),
    "Tensor.inverse": lambda T, a: a.inverse(),
    "linalg.solve": lambda T, a: T.linalg.solve(a, a),
    "linalg.cholesky": lambda T, a: T.linalg.cholesky(a),
    "linalg.qr": lambda T, a: T.linalg.qr(a)[0],
    "linalg.svd": lambda T, a: T.linalg.svd(a)[0],
    "linalg.eigh": lambda T, a: T.linalg.eigh(a)[0],
    "linalg.lstsq": lambda T, a: T.linalg.lstsq(a, a)[0],
    "linalg.cond": lambda T, a: T.linalg.cond(a),
    "linalg.det": lambda T, a: T.linalg.det(a),
    "linalg.matrix_exp": lambda T, a: T.linalg.matrix_exp(a),
    "linalg.solve_triangular": lambda T, a: T.linalg.solve_triangular(a, a, upper=True),
    "linalg.pinv": lambda T, a: T.linalg.pinv(a),  # composite in torch too: its matmuls autocast
    "linalg.vecdot": lambda T, a: T.linalg.vecdot(a, a),
    "prelu": lambda T, a: T.nn.functional.prelu(a, T.ones(1)),
    "addbmm": lambda T, a: T.addbmm(a, a[None], a[None]),
    "einsum": lambda T, a: T.einsum("ij,jk->ik", a, a),  # listed for CUDA only: on the CPU its matmul autocasts
    "trace": lambda T, a: T.trace(a.bfloat16()),
    "cdist": lambda T, a: T.cdist(a.bfloat16(), a.bfloat16()),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("low_input", [False, True], ids=["float32 input", "bfloat16 input"])
def test_cpu_autocast_result_dtype_as_torch(name, low_input):
    torch = pytest.importorskip("torch")
    got = []
    for lib in (torch, st):
        a = lib.tensor(A)
        a = a.bfloat16() if low_input else a
        with lib.autocast("cpu", dtype=lib.bfloat16):
            try:
                got.append(str(CASES[name](lib, a).dtype).split(".")[-1])
            except (RuntimeError, NotImplementedError):
                got.append("error")
    if got[0] != "error":  # strided refuses some bfloat16 factorizations torch computes (matrix_exp)
        assert got[1] == got[0], f"{name}: torch {got[0]}, strided {got[1]}"


@pytest.mark.parametrize("device", DEVICES)
def test_native_functions_do_not_autocast_inside(device):
    """linalg.inv of a float32 matrix under autocast: float32, and exactly the result without autocast (its inner
    matmuls do not drop to the low dtype)."""
    a = st.tensor(A, device=device)
    plain = st.linalg.inv(a)
    with st.autocast(device, dtype=st.bfloat16):
        cast = st.linalg.inv(a)
        det = st.linalg.det(a)
        assert st.is_autocast_enabled(device)  # the guard restores the state
    assert cast.dtype is st.float32 and det.dtype is st.float32
    np.testing.assert_array_equal(cast.cpu().numpy(), plain.cpu().numpy())
    with st.autocast(device, dtype=st.bfloat16):
        assert st.linalg.pinv(a).dtype is st.bfloat16  # torch composes pinv: its matmuls autocast


LOSSES = {
    "nll_loss": lambda T, F, x, p, t: F.nll_loss(x, t),
    "nll_loss 4-d": lambda T, F, x, p, t: F.nll_loss(x.reshape(4, 5, 1, 1), t.reshape(4, 1, 1)),
    "nll_loss 3-d": lambda T, F, x, p, t: F.nll_loss(x.reshape(4, 5, 1), t.reshape(4, 1)),
    "binary_cross_entropy": lambda T, F, x, p, t: F.binary_cross_entropy(T.sigmoid(x), p),
    "binary_cross_entropy_with_logits": lambda T, F, x, p, t: F.binary_cross_entropy_with_logits(x, p),
    "mse_loss": lambda T, F, x, p, t: F.mse_loss(x, p),
    "smooth_l1_loss": lambda T, F, x, p, t: F.smooth_l1_loss(x, p),
    "huber_loss": lambda T, F, x, p, t: F.huber_loss(x, p),
    "l1_loss": lambda T, F, x, p, t: F.l1_loss(x, p),
    "kl_div": lambda T, F, x, p, t: F.kl_div(x, p, reduction="batchmean"),
    "poisson_nll_loss": lambda T, F, x, p, t: F.poisson_nll_loss(x, p),
    "hinge_embedding_loss": lambda T, F, x, p, t: F.hinge_embedding_loss(x, p),
    "soft_margin_loss": lambda T, F, x, p, t: F.soft_margin_loss(x, p),
    "multi_margin_loss": lambda T, F, x, p, t: F.multi_margin_loss(x, t),
    "triplet_margin_loss": lambda T, F, x, p, t: F.triplet_margin_loss(x, p, p),
    "elu (not listed)": lambda T, F, x, p, t: F.elu(x),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses_on_torchs_cpu_float32_list_run_in_float32(name):
    """torch's CPU autocast float32 list holds the losses (ops there): a bfloat16 input gives a float32 loss, as
    torch's; an activation not on the list stays bfloat16."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x, p, t = rng.standard_normal((4, 5)), rng.random((4, 5)), rng.integers(0, 5, 4)
    dtypes = []
    for T in (st, torch):
        args = (T.tensor(x).bfloat16(), T.tensor(p).bfloat16(), T.tensor(t))
        with T.autocast("cpu", dtype=T.bfloat16):
            dtypes.append(str(LOSSES[name](T, T.nn.functional, *args).dtype).split(".")[-1])
    assert dtypes[0] == dtypes[1]
