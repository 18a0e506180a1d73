"""Fixtures of the backend tests."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def _compare_with_torch(torch, fn, arrays, device, dtype, grad=(0,), rtol=None, atol=None, seed=0):
    from strided.nn import functional as F

    TF = torch.nn.functional
    arrays = [a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in arrays]

    def make(lib, a, i, **kw):
        if not isinstance(a, np.ndarray):
            return a
        t = lib.tensor(a, **kw)
        return t.requires_grad_() if i in grad else t

    s_in = [make(st, a, i, device=device) for i, a in enumerate(arrays)]
    t_in = [make(torch, a, i) for i, a in enumerate(arrays)]
    # the reference is torch's CPU float32: strided's CUDA convolutions run without TF32 here, as torch's own
    # tests switch it off (tests/cuda/test_conv_precision.py checks the TF32 default)
    with warnings.catch_warnings(), st.backends.cudnn.flags(enabled=True, allow_tf32=False):
        warnings.simplefilter("ignore")
        s_out, t_out = fn(F, *s_in), fn(TF, *t_in)
        assert tuple(s_out.shape) == tuple(t_out.shape)
        assert s_out.dtype.name == str(t_out.dtype).replace("torch.", "")
        assert s_out.device.type == device
        upstream = np.random.default_rng(seed).standard_normal(tuple(t_out.shape)).astype(dtype)
        s_out.backward(st.tensor(upstream, device=device))
    t_out.backward(torch.tensor(upstream))
    for i in grad:
        assert s_in[i].grad is not None and s_in[i].grad.shape == t_in[i].grad.shape, i
    if device == "meta":
        return
    if rtol is None:
        rtol = 1e-9 if dtype == "float64" else (1e-4 if device == "cuda" else 2e-5)
    if atol is None:
        atol = 1e-12 if dtype == "float64" else 1e-6
    np.testing.assert_allclose(_host(s_out), t_out.detach().double().numpy(), rtol=rtol, atol=atol)
    for i in grad:
        desired = t_in[i].grad.double().numpy()
        # an element of a float32 gradient that sums terms of the largest element's size cancels to a
        # few ulps of that size, not of itself (a different summation order on CUDA shows it)
        scale = float(np.abs(desired).max()) if desired.size and dtype == "float32" else 0.0
        np.testing.assert_allclose(
            _host(s_in[i].grad),
            desired,
            rtol=rtol,
            atol=max(atol, 1e-6 * scale),
            err_msg=f"gradient of argument {i}",
        )


@pytest.fixture
def nn_oracle():
    """``nn_oracle(fn, arrays, device, dtype, grad=(0,), rtol=None, atol=None)``: run ``fn(F, *tensors)`` with
    ``strided.nn.functional`` (tensors on ``device``) and ``torch.nn.functional`` (CPU) from the same NumPy
    arrays (floating ones cast to ``dtype``; other arguments pass through); compare shapes and dtypes and,
    except on meta, the values and the gradients of the arguments numbered in ``grad`` under a random upstream
    gradient. Skips the test when torch is not installed."""
    torch = pytest.importorskip("torch")

    def run(fn, arrays, device, dtype, grad=(0,), rtol=None, atol=None):
        _compare_with_torch(torch, fn, arrays, device, dtype, grad, rtol, atol)

    return run
