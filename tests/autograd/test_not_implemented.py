"""Ops without derivative formulas (Note [Not-implemented derivatives]): their floating outputs get torch's
``NotImplemented`` node when an input requires grad, and a backward through it raises torch's error instead of
silently giving no gradient."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.dispatch.keys import DispatchKey
from strided.ops.registry import load
from strided.testing import available_devices

DATA_DEVICES = [d for d in available_devices() if d != "meta"]


def _spd(device):
    return st.tensor(np.array([[4.0, 1.0], [1.0, 3.0]]), device=device).requires_grad_()


def _calls(device):
    a = _spd(device)
    p = st.tensor([0.2, 0.7], device=device, requires_grad=True)
    c = st.tensor([1.5, 2.0], device=device, requires_grad=True)
    aten = st.ops.aten
    return {
        "_linalg_cholesky_lower": lambda: aten._linalg_cholesky_lower(a)[0],
        "_linalg_householder_qr": lambda: aten._linalg_householder_qr(a)[1],
        "_linalg_symmetric_jacobi": lambda: aten._linalg_symmetric_jacobi(a)[0],
        "binomial": lambda: aten.binomial(st.tensor([5.0, 6.0], device=device), p),
        "_sample_dirichlet": lambda: aten._sample_dirichlet(c),
        "_standard_gamma_grad": lambda: aten._standard_gamma_grad(c, st.tensor([0.3, 0.7], device=device)),
    }


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("name", list(_calls("cpu")))
def test_backward_through_an_op_without_formula_raises(device, name):
    out = _calls(device)[name]()
    assert out.requires_grad and out.grad_fn is not None and out.grad_fn.name() == "torch::autograd::NotImplemented"
    assert repr(out.grad_fn).startswith("<NotImplemented object")
    with pytest.raises(RuntimeError, match=f"^derivative for aten::{name} is not implemented$"):
        out.sum().backward()


def test_torch_gives_the_same_node_and_error():
    torch = pytest.importorskip("torch")
    c = torch.tensor([1.5, 2.0], requires_grad=True)
    out = torch._sample_dirichlet(c)
    assert type(out.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="^derivative for aten::_sample_dirichlet is not implemented$"):
        out.sum().backward()


def test_without_grad_the_op_records_nothing():
    a = _spd("cpu")
    with st.no_grad():
        L, info = st.ops.aten._linalg_cholesky_lower(a)
    assert not L.requires_grad and L.grad_fn is None
    L, info = st.ops.aten._linalg_cholesky_lower(a.detach())
    assert not L.requires_grad
    # integer outputs of the same call never require grad; the edges reach the input
    L, info = st.ops.aten._linalg_cholesky_lower(a)
    assert not info.requires_grad and L.grad_fn.next_functions[0][0] is not None
    np.testing.assert_allclose(L.detach().numpy(), np.linalg.cholesky(a.detach().numpy()))


def test_grad_mode_is_restored_after_the_op():
    a = _spd("cpu")
    st.ops.aten._linalg_cholesky_lower(a)
    assert st.is_grad_enabled()
    with pytest.raises(RuntimeError):
        st.ops.aten._linalg_cholesky_lower(st.ones(2, 3, dtype=st.float64, requires_grad=True))
    assert st.is_grad_enabled()


def test_public_functions_still_differentiate():
    a = _spd("cpu")
    st.linalg.cholesky(a).sum().backward()
    assert a.grad is not None and np.isfinite(a.grad.numpy()).all()


def test_comparisons_and_factories_get_no_fallback():
    """torch's non-differentiable ops keep going straight to their backend (no Python layer per call)."""
    aten = load()
    for name in ("eq", "lt", "argmax", "isnan", "zeros_like", "detach", "nonzero"):
        for op in aten._get(name)._ordered:
            assert not op.has_kernel(DispatchKey.Autograd), op
    x = st.ones(3, requires_grad=True)
    assert not (x > 0).requires_grad and not st.zeros_like(x).requires_grad
