"""Complex values through the Python compositions, against torch on the CPU: the grids and repeats that take
complex tensors (values and gradients), and the losses, pools, normalizations and interpolations that torch
refuses for complex input, refused here in torch's words (refuse_complex in ops/complex_support.py) rather
than computed."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

_GRIDS = {
    "meshgrid ij": lambda m, x, y: m.stack(m.meshgrid(x[0], y, indexing="ij")),
    "meshgrid xy": lambda m, x, y: m.stack(m.meshgrid(x[:, 0], y, indexing="xy")),
    "cartesian_prod": lambda m, x, y: m.cartesian_prod(x[0], y),
    "repeat_interleave int": lambda m, x, y: m.repeat_interleave(x, 2, 0),
    "repeat_interleave tensor": lambda m, x, y: x.repeat_interleave(m.tensor([1, 0, 2, 3]), dim=1),
    "repeat_interleave flat": lambda m, x, y: x.repeat_interleave(3),
    "fill_diagonal_": lambda m, x, y: x.clone().fill_diagonal_(2 - 1j),
    "fill_diagonal_ wrap": lambda m, x, y: m.cat([x, x, x]).fill_diagonal_(1j, wrap=True),
    "cumulative_trapezoid": lambda m, x, y: m.cumulative_trapezoid(x),
    "cumulative_trapezoid dx": lambda m, x, y: m.cumulative_trapezoid(x, dx=0.5, dim=0),
    "cumulative_trapezoid x": lambda m, x, y: m.cumulative_trapezoid(x, y.real),
}


@pytest.mark.parametrize("name", list(_GRIDS))
def test_grids_and_repeats_of_complex_as_torch(name):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    b = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    got = _GRIDS[name](st, st.from_numpy(a.copy()), st.from_numpy(b.copy()))
    want = _GRIDS[name](torch, torch.from_numpy(a.copy()), torch.from_numpy(b.copy()))
    assert got.dtype is st.complex128
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    grads = []
    for lib in (st, torch):
        x, y = lib.from_numpy(a.copy()).requires_grad_(), lib.from_numpy(b.copy()).requires_grad_()
        lib.view_as_real(_GRIDS[name](lib, x, y)).pow(2).sum().backward()
        grads.append([None if g is None else g.resolve_conj().numpy() for g in (x.grad, y.grad)])
    for g, w in zip(*grads):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def _z(*shape):
    rng = np.random.default_rng(2)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


_REFUSED = {
    "mse_loss": lambda m, t: m.nn.functional.mse_loss(t(_z(2, 3)), t(_z(2, 3))),
    "smooth_l1_loss": lambda m, t: m.nn.functional.smooth_l1_loss(t(_z(2, 3)), t(_z(2, 3))),
    "huber_loss": lambda m, t: m.nn.functional.huber_loss(t(_z(2, 3)), t(_z(2, 3))),
    "special.erfcx": lambda m, t: m.special.erfcx(t(_z(2, 3))),
    "group_norm": lambda m, t: m.nn.functional.group_norm(t(_z(1, 2, 3, 3)), 1),
    "avg_pool1d": lambda m, t: m.nn.functional.avg_pool1d(t(_z(1, 2, 6)), 2),
    "avg_pool2d": lambda m, t: m.nn.functional.avg_pool2d(t(_z(1, 2, 6, 6)), 2),
    "avg_pool3d": lambda m, t: m.nn.functional.avg_pool3d(t(_z(1, 2, 4, 4, 4)), 2),
    "local_response_norm 3-d": lambda m, t: m.nn.functional.local_response_norm(t(_z(1, 2, 6)), 2),
    "local_response_norm 4-d": lambda m, t: m.nn.functional.local_response_norm(t(_z(1, 2, 6, 6)), 2),
    "interpolate nearest 1d": lambda m, t: m.nn.functional.interpolate(t(_z(1, 2, 6)), scale_factor=2),
    "interpolate nearest-exact": lambda m, t: m.nn.functional.interpolate(t(_z(1, 2, 6)), scale_factor=2,
                                                                           mode="nearest-exact"),
    "interpolate nearest 2d": lambda m, t: m.nn.functional.interpolate(t(_z(1, 2, 6, 6)), scale_factor=2),
    "interpolate nearest 3d": lambda m, t: m.nn.functional.interpolate(t(_z(1, 2, 4, 4, 4)), scale_factor=2),
    "interpolate linear": lambda m, t: m.nn.functional.interpolate(t(_z(1, 2, 6)), scale_factor=2, mode="linear"),
    "interpolate bilinear": lambda m, t: m.nn.functional.interpolate(t(_z(1, 2, 6, 6)), scale_factor=2,
                                                                      mode="bilinear"),
    "interpolate bicubic": lambda m, t: m.nn.functional.interpolate(t(_z(1, 2, 6, 6)), scale_factor=2,
                                                                     mode="bicubic"),
    "interpolate trilinear": lambda m, t: m.nn.functional.interpolate(t(_z(1, 2, 4, 4, 4)), scale_factor=2,
                                                                       mode="trilinear"),
}


@pytest.mark.parametrize("name", list(_REFUSED))
def test_complex_input_refused_in_torchs_words(name):
    with pytest.raises(NotImplementedError) as want:
        _REFUSED[name](torch, lambda a: torch.from_numpy(a.copy()))
    with pytest.raises(NotImplementedError, match=re.escape(str(want.value))):
        _REFUSED[name](st, lambda a: st.from_numpy(a.copy()))


def test_kl_div_of_complex_refused_in_torchs_words():
    x = st.from_numpy(_z(2, 3))
    with pytest.raises(RuntimeError, match=re.escape("kl_div: Complex inputs not supported.")):
        st.nn.functional.kl_div(x, x, reduction="sum")
    with pytest.raises(RuntimeError, match=re.escape("kl_div: Integral inputs not supported.")):
        st.nn.functional.kl_div(st.ones(2, dtype=st.int64), st.ones(2, dtype=st.int64), reduction="sum")


def test_real_inputs_still_run():
    """The refusals look at the dtype only: the real forms are unchanged."""
    x = st.ones(1, 2, 6, 6)
    assert st.nn.functional.avg_pool2d(x, 2).shape == (1, 2, 3, 3)
    assert st.nn.functional.interpolate(x, scale_factor=2, mode="bilinear").shape == (1, 2, 12, 12)
    assert float(st.nn.functional.mse_loss(x, x * 2)) == 1.0
    assert st.nn.functional.group_norm(x, 1).shape == (1, 2, 6, 6)

