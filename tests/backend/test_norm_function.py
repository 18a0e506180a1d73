"""strided.norm / Tensor.norm with torch.norm's Python signature: dim without p (x.norm(dim=-1)), "fro" and "nuc",
dtype=, out=, and torch's errors; each call against torch's."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

CALLS = ["x.norm()", "x.norm(dim=1)", "x.norm(dim=-1, keepdim=True)", "x.norm(2, 1)", "x.norm(p=1, dim=1, keepdim=True)",
         "L.norm(x, dim=1)", "x.norm(dim=(0, 1))", "x.norm(p='fro', dim=1)", "x[0].norm(p='nuc')",
         "x.norm(p=float('inf'), dim=2)", "x.norm(p=0)", "x.norm(None, 2)", "x.norm(3, (1, 2))",
         "L.norm(x, dtype=L.float64)", "L.norm(x, p='nuc', dim=(0, 1))", "x.norm(p='fro', dim=(0, 1, 2))",
         "L.arange(4).norm()", "x.norm(dim=5)", "x.norm(p='nuc')"]


@pytest.mark.parametrize("call", CALLS)
def test_norm_is_torchs(call):
    a = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    results = []
    for L in (torch, st):
        x = L.tensor(a)  # noqa: F841 - read by eval
        try:
            v = eval(call)
            results.append((v.dtype.__repr__().split(".")[-1], tuple(v.shape), v.double().numpy()))
        except Exception as e:  # noqa: BLE001 - the comparison is of the failure
            results.append((type(e).__name__, str(e)))
    want, got = results
    if isinstance(want[1], str):
        assert got[0] == want[0] and got[1].split("(")[0] == want[1].split("(")[0]
    else:
        assert got[:2] == want[:2]
        np.testing.assert_allclose(got[2], want[2], rtol=1e-5)


def test_out_and_gradient():
    a = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    out = st.empty(0)
    r = st.norm(st.tensor(a), dim=1, out=out)
    assert r is out and out.shape == (4,)
    np.testing.assert_allclose(out.numpy(), np.linalg.norm(a, axis=1), rtol=1e-6)
    xs, xt = st.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    xs.norm(dim=-1).sum().backward()
    xt.norm(dim=-1).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
