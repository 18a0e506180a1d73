"""torch's geqrf / orgqr / ormqr (LAPACK's Householder trio) and the top-level ATen forms conv_tbc,
grid_sampler(_2d / _3d), native_layer_norm, native_dropout and native_channel_shuffle: values, gradients, result
types and refusals as torch's; geqrf's composite kernel (the one CUDA runs) against torch's LAPACK result, and on
each device against the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.dispatch.keys import DispatchKey
from strided.dispatch.library import KERNEL_TABLES
from strided.testing import available_devices

torch = pytest.importorskip("torch")
rng = np.random.default_rng(7)
SHAPES = [(4, 3), (3, 3), (2, 3), (2, 4, 3), (5, 1), (1, 5), (0, 3), (2, 0, 3), (6, 6)]


def both(x):
    return st.tensor(x), torch.tensor(x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_geqrf_is_lapacks(shape, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    s, t = both(x)
    got, want = st.geqrf(s), torch.geqrf(t)
    assert type(got) is st.return_types.geqrf and got._fields == ("a", "tau")
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got.a.numpy(), want.a.numpy(), atol=tol)
    np.testing.assert_allclose(got.tau.numpy(), want.tau.numpy(), atol=tol)
    composite = KERNEL_TABLES[DispatchKey.CompositeExplicitAutograd]["geqrf"](s)  # the reflectors CUDA runs
    np.testing.assert_allclose(composite[0].numpy(), want.a.numpy(), atol=10 * tol)
    np.testing.assert_allclose(composite[1].numpy(), want.tau.numpy(), atol=10 * tol)


@pytest.mark.parametrize("device", [d for d in available_devices() if d != "cpu"])
def test_geqrf_on_each_device_as_on_the_cpu(device):
    x = st.tensor(rng.standard_normal((3, 6, 4)))
    got, want = st.geqrf(x.to(device)), st.geqrf(x)
    assert got.a.device.type == device and got.a.shape == want.a.shape and got.tau.shape == want.tau.shape
    if device != "meta":
        np.testing.assert_allclose(got.a.cpu().numpy(), want.a.numpy(), atol=1e-12)
        np.testing.assert_allclose(got.tau.cpu().numpy(), want.tau.numpy(), atol=1e-12)


def test_geqrf_refuses_a_gradient_in_torchs_words():
    for lib in (torch, st):
        r = lib.geqrf(lib.ones(3, 3, dtype=lib.float64).requires_grad_())
        assert type(r.a.grad_fn).__name__ == "GeqrfBackward0"
        with pytest.raises(RuntimeError, match="^the derivative for 'geqrf' is not implemented.$"):
            r.a.sum().backward()


def test_orgqr_and_ormqr_of_geqrf_are_torchs_with_gradients():
    x = rng.standard_normal((2, 5, 3))
    others = {True: rng.standard_normal((2, 5, 4)), False: rng.standard_normal((2, 4, 5))}
    for left in (True, False):
        for transpose in (False, True):
            grads = []
            for lib in (torch, st):
                a, tau = lib.geqrf(lib.tensor(x))
                a, tau = a.clone().requires_grad_(), tau.clone().requires_grad_()
                c = lib.tensor(others[left], requires_grad=True)
                y = lib.ormqr(a, tau, c, left, transpose)
                q = a.orgqr(tau)
                (y.square().sum() + q.sum()).backward()
                grads.append([v.detach().numpy() for v in (y, q, a.grad, tau.grad, c.grad)])
            for got, want in zip(grads[1], grads[0]):
                np.testing.assert_allclose(got, want, atol=1e-10)


@pytest.mark.parametrize("device", [d for d in available_devices() if d != "meta"])
def test_ormqr_with_identity_reflectors_and_fewer_reflectors_than_rows(device):
    """Note [ormqr by the compact WY form]: reflectors with tau = 0 are identities; 4 reflectors of 7 rows."""
    x = rng.standard_normal((3, 7, 4))
    a, tau = torch.geqrf(torch.tensor(x))
    tau[0, 1] = 0
    tau[2, 3] = 0
    for left in (True, False):
        c = rng.standard_normal((3, 7, 5) if left else (3, 5, 7))
        for transpose in (False, True):
            want = torch.ormqr(a, tau, torch.tensor(c), left, transpose).numpy()
            got = st.ormqr(st.tensor(a.numpy(), device=device), st.tensor(tau.numpy(), device=device),
                           st.tensor(c, device=device), left, transpose)
            np.testing.assert_allclose(got.cpu().numpy(), want, atol=1e-12)


def _ormqr_bad(T):
    a, tau, c = T.ones(5, 3, dtype=T.float64), T.ones(3, dtype=T.float64), T.ones(5, 4, dtype=T.float64)
    return {
        "1-d input": lambda: T.ormqr(a[0], tau, c), "1-d other": lambda: T.ormqr(a, tau, c[0]),
        "tau's dims": lambda: T.ormqr(a, tau[None], c), "tau too long": lambda: T.ormqr(a, T.ones(4).double(), c),
        "other's rows": lambda: T.ormqr(a, tau, c[:4]), "right: other's columns": lambda: T.ormqr(a, tau, c, False),
        "other's dims": lambda: T.ormqr(a[None], tau[None], c),
        "tau's batch": lambda: T.ormqr(a.expand(2, 5, 3), tau.expand(3, 3), c.expand(2, 5, 4)),
        "other's batch": lambda: T.ormqr(a.expand(2, 5, 3), tau.expand(2, 3), c.expand(3, 5, 4)),
        "tau's dtype": lambda: T.ormqr(a, tau.float(), c), "other's dtype": lambda: T.ormqr(a, tau, c.float()),
        "integers": lambda: T.ormqr(a.long(), tau.long(), c.long()),
        "geqrf of a vector": lambda: T.geqrf(tau), "geqrf of integers": lambda: T.geqrf(a.long()),
        "geqrf of half": lambda: T.geqrf(a.half()), "orgqr of a vector": lambda: T.orgqr(tau, tau),
    }


@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc_is_torchs_with_gradients(pad):
    x, w, b = rng.standard_normal((7, 2, 3)), rng.standard_normal((3, 3, 4)), rng.standard_normal(4)
    results = []
    for lib in (torch, st):
        args = [lib.tensor(v, requires_grad=True) for v in (x, w, b)]
        y = lib.conv_tbc(*args, pad)
        y.square().sum().backward()
        results.append([y.detach().numpy()] + [a.grad.numpy() for a in args])
        assert y.is_contiguous()
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, atol=1e-10)


def test_conv_tbc_edges_and_functional_name():
    """An output of no time steps is empty, as torch's (conv1d would refuse the kernel); F.conv_tbc is conv_tbc."""
    for lib in (torch, st):
        assert tuple(lib.conv_tbc(lib.ones(2, 2, 3), lib.ones(3, 3, 4), lib.ones(4)).shape) == (0, 2, 4)
    assert st.nn.functional.conv_tbc is st.conv_tbc


def _conv_tbc_bad(T):
    x, w, b = T.ones(7, 2, 3), T.ones(3, 3, 4), T.ones(4)
    return {"2-d input": lambda: T.conv_tbc(x[0], w, b), "2-d weight": lambda: T.conv_tbc(x, w[0], b),
            "2-d bias": lambda: T.conv_tbc(x, w, b[None]), "channels": lambda: T.conv_tbc(x, T.ones(3, 5, 4), b),
            "bias size": lambda: T.conv_tbc(x, w, T.ones(5)),
            "kernel too long": lambda: T.conv_tbc(x, T.ones(9, 3, 4), b),
            "weight dtype": lambda: T.conv_tbc(x, w.double(), b)}


def _argument_bad(T):
    """torch's binding errors for arguments of the wrong type."""
    return {"conv_tbc: an int input": lambda: T.conv_tbc(3, T.ones(3, 3, 4), T.ones(4)),
            "conv_tbc: a float pad": lambda: T.conv_tbc(T.ones(7, 2, 3), T.ones(3, 3, 4), T.ones(4), 1.5),
            "grid_sampler: a list input": lambda: T.grid_sampler([1.0], T.zeros(1, 2, 2, 2), 0, 0, False),
            "grid_sampler: a str mode": lambda: T.grid_sampler(T.ones(1, 1, 4, 4), T.zeros(1, 2, 2, 2), "bilinear",
                                                               0, False),
            "native_layer_norm: a list input": lambda: T.native_layer_norm([1.0], [1], None, None, 1e-5),
            "native_dropout: a list input": lambda: T.native_dropout([1.0], 0.5, True),
            "native_dropout: p past 1": lambda: T.native_dropout(T.ones(3), 1.5, True),
            "native_channel_shuffle: a float group count": lambda: T.native_channel_shuffle(T.ones(1, 4, 2), 2.0),
            "native_channel_shuffle: 0 groups": lambda: T.native_channel_shuffle(T.ones(1, 4, 2), 0),
            "set_autocast_cache_enabled: a str": lambda: T.set_autocast_cache_enabled("yes")}


REFUSALS = [(cases, case) for cases in (_ormqr_bad, _conv_tbc_bad, _argument_bad) for case in sorted(cases(torch))]


@pytest.mark.parametrize("cases,case", REFUSALS, ids=[case for _, case in REFUSALS])
def test_refusals_are_torchs(cases, case):
    with pytest.raises(Exception) as want:
        cases(torch)[case]()
    with pytest.raises(Exception) as got:
        cases(st)[case]()
    assert got.type is want.type and str(got.value) == str(want.value)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_codes_are_torchs(mode, padding, align_corners):
    img = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    grid = rng.uniform(-1.2, 1.2, (2, 3, 6, 2)).astype(np.float32)
    got = st.grid_sampler_2d(st.tensor(img), st.tensor(grid), mode, padding, align_corners)
    want = torch.grid_sampler(torch.tensor(img), torch.tensor(grid), mode, padding, align_corners)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-5)
    if mode != 2:  # bicubic is 2-d only
        vol, grid3 = rng.standard_normal((1, 2, 3, 4, 5)), rng.uniform(-1, 1, (1, 2, 2, 3, 3))
        got = st.grid_sampler_3d(st.tensor(vol), st.tensor(grid3), mode, padding, align_corners)
        want = torch.grid_sampler_3d(torch.tensor(vol), torch.tensor(grid3), mode, padding, align_corners)
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-10)


def test_grid_sampler_refusals():
    img, grid, vol, grid3 = st.ones(1, 1, 4, 4), st.zeros(1, 2, 2, 2), st.ones(1, 1, 4, 4, 4), st.zeros(1, 2, 2, 2, 3)
    with pytest.raises(RuntimeError) as want:
        torch.grid_sampler_2d(torch.ones(1, 1, 4, 4, 4), torch.zeros(1, 2, 2, 2, 3), 0, 0, False)
    with pytest.raises(RuntimeError) as got:
        st.grid_sampler_2d(vol, grid3, 0, 0, False)
    assert str(got.value) == str(want.value)
    with pytest.raises(RuntimeError, match=r"expected 5D input"):
        st.grid_sampler_3d(img, grid, 0, 0, False)
    # torch reads an unknown code as uninitialized memory; strided refuses it
    with pytest.raises(RuntimeError, match=r"interpolation_mode to be one of 0 \(bilinear\), 1 \(nearest\), 2 "
                                           r"\(bicubic\), but got 5"):
        st.grid_sampler(img, grid, 5, 0, False)
    with pytest.raises(RuntimeError, match=r"padding_mode to be one of .*but got 7"):
        st.grid_sampler(img, grid, 0, 7, False)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("normalized", [[4], [3, 4]], ids=str)
def test_native_layer_norm_is_torchs(normalized, dtype):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    w = rng.standard_normal(normalized).astype(np.float32)
    got = st.native_layer_norm(st.tensor(x).to(getattr(st, dtype)), normalized, st.tensor(w).to(getattr(st, dtype)),
                               None, 1e-5)
    want = torch.native_layer_norm(torch.tensor(x).to(getattr(torch, dtype)), normalized,
                                   torch.tensor(w).to(getattr(torch, dtype)), None, 1e-5)
    for g, t in zip(got, want):
        assert g.shape == t.shape and str(g.dtype).split(".")[-1] == dtype
        tol = 1e-6 if dtype == "float32" else 0
        np.testing.assert_allclose(g.float().numpy(), t.detach().float().numpy(), atol=tol)
    s = st.tensor(x, requires_grad=True)
    out, mean, rstd = st.native_layer_norm(s, normalized, None, None, 1e-5)
    assert out.requires_grad and not mean.requires_grad and not rstd.requires_grad  # as torch's


@pytest.mark.parametrize("train", [True, None, False])
def test_native_dropout_draws_torchs_mask(train):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    torch.manual_seed(3)
    want = torch.native_dropout(torch.tensor(x, requires_grad=True), 0.3, train)
    st.manual_seed(3)
    s = st.tensor(x, requires_grad=True)
    got = st.native_dropout(s, 0.3, train)
    np.testing.assert_array_equal(got[0].detach().numpy(), want[0].detach().numpy())
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    assert got[1].dtype is st.bool
    got[0].sum().backward()
    scale = 1 / 0.7 if train in (True, None) else 1.0
    np.testing.assert_allclose(s.grad.numpy(), got[1].numpy() * scale, rtol=1e-6)
    assert float(st.native_dropout(st.tensor(x), 1.0, True)[0].abs().sum()) == 0  # p = 1: all dropped, no NaN


def test_native_channel_shuffle_is_torchs():
    x = np.arange(24.0).reshape(1, 6, 4)
    np.testing.assert_array_equal(st.native_channel_shuffle(st.tensor(x), 3).numpy(),
                                  torch.native_channel_shuffle(torch.tensor(x), 3).numpy())


@pytest.mark.parametrize("device", [d for d in available_devices() if d != "meta"])
@pytest.mark.parametrize("indices", [[0, 1, 1, 4], [-1, 2], []])
def test_embedding_renorm_as_torch(device, indices):
    w = rng.standard_normal((5, 3)) * 3
    got = st.tensor(w, device=device)
    assert st.embedding_renorm_(got, st.tensor(indices, dtype=st.int64, device=device), 1.0, 2.0) is got
    want = torch.tensor(w)
    torch.embedding_renorm_(want, torch.tensor(indices, dtype=torch.int64), 1.0, 2.0)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("device", [d for d in available_devices() if d != "meta"])
@pytest.mark.parametrize("size", [(2, 1, 3, 4), (1, 1, 2, 3, 2)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_generator_as_torch(device, size, align_corners):
    theta = rng.standard_normal((size[0], len(size) - 2, len(size) - 1))
    got = st.affine_grid_generator(st.tensor(theta, device=device), size, align_corners)
    want = torch.affine_grid_generator(torch.tensor(theta), size, align_corners)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


ATEN_BAD = [
    lambda T: T.embedding_renorm_(T.ones(5, 3, requires_grad=True), T.tensor([0]), 1.0, 2.0),
    lambda T: T.embedding_renorm_(T.ones(5, 1, 3), T.tensor([0]), 1.0, 2.0),
    lambda T: T.embedding_renorm_(T.ones(5, 3), T.tensor([9]), 1.0, 2.0),
    lambda T: T.embedding_renorm_(T.ones(5, 3), T.tensor([-7, 9]), 1.0, 2.0),
    lambda T: T.affine_grid_generator(T.eye(2, 3)[None], [1, 2, 2], False),
    lambda T: T.affine_grid_generator(T.eye(2, 3)[None], [1, 1, 2, 2], 1),
    lambda T: T.affine_grid_generator(T.eye(2, 3)[None], 5, False),
    lambda T: T.affine_grid_generator(T.eye(2, 3)[None], "abcd", False),
    lambda T: T.embedding_renorm_(T.ones(5, 3), T.tensor([0]), "x", 2.0),
    lambda T: T.embedding_renorm_(T.ones(5, 3), T.tensor([0]), 1.0, None),
]


@pytest.mark.parametrize("case", range(len(ATEN_BAD)))
def test_aten_form_refusals_in_torchs_words(case):
    errors = []
    for lib in (st, torch):
        with pytest.raises(Exception) as info:
            ATEN_BAD[case](lib)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


def test_embedding_renorm_names_a_wrong_index_dtype():
    with pytest.raises(RuntimeError, match=r"'indices' to have one of the following scalar types: Long, Int; but got "
                                           r"strided.FloatTensor instead \(while checking arguments for "
                                           r"embedding_renorm_\)"):
        st.embedding_renorm_(st.ones(5, 3), st.tensor([0.5]), 1.0, 2.0)
