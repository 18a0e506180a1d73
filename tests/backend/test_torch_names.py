"""torch's names beyond the op database: top-level in-place functions, predicates, Tensor methods,
factories and windows, and the torch.nn.functional names torch exports at top level -- against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

torch = pytest.importorskip("torch")

DEVICES = available_devices()
VALUED = [d for d in DEVICES if d != "meta"]


def _t(values, device="cpu", dtype=None):
    return st.tensor(values, dtype=dtype, device=device)


def _close(a, b, rtol=1e-6, atol=1e-6):
    got = a.numpy(force=True) if hasattr(a, "numpy") else np.asarray(a)
    want = b.detach().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)


def _raises_like(fn_st, fn_torch, exc=Exception):
    """Both raise; strided's message is torch's."""
    with pytest.raises(exc) as t_err:
        fn_torch()
    with pytest.raises(type(t_err.value)) as s_err:
        fn_st()
    assert str(s_err.value).splitlines()[0] == str(t_err.value).splitlines()[0]


# ---------------------------------------------------------------- top-level in-place
INPLACE_TOP = ["abs_", "acos_", "asin_", "atan_", "ceil_", "cos_", "erf_", "exp_", "exp2_", "expm1_", "floor_",
               "frac_", "log1p_", "neg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sqrt_", "square_",
               "tanh_", "trunc_", "relu_", "fix_", "negative_", "arccos_", "arctan_", "i0_", "nan_to_num_"]


@pytest.mark.parametrize("device", VALUED)
@pytest.mark.parametrize("name", INPLACE_TOP)
def test_top_level_inplace(name, device):
    values = [[0.25, -0.5, 0.75], [0.1, 0.9, -0.3]]
    x, tx = _t(values, device), torch.tensor(values)
    out = getattr(st, name)(x)
    getattr(torch, name)(tx)
    assert out is x
    _close(x, tx, rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_methods_return_self_and_keep_layout(device):
    x = st.ones(3, 4, device=device).t()
    assert x.clamp_min_(0.5) is x and x.clamp_max_(2) is x and x.clip_(0, 1) is x and x.sgn_() is x
    assert x.stride() == (1, 4)
    assert st.detach_(x) is x
    for name in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "logical_and_", "logical_or_", "logical_xor_"):
        assert getattr(x, name)(x) is x


def test_inplace_cast_error_is_torchs():
    _raises_like(lambda: st.ones(2, dtype=st.int64).sin_(), lambda: torch.ones(2, dtype=torch.int64).sin_())


def test_inplace_autograd_through_composites():
    for name in ("square_", "clamp_min_", "frac_", "arctan_", "negative_", "eq_"):
        args = (0.1,) if name == "clamp_min_" else ((torch.zeros(3),) if name == "eq_" else ())
        sargs = tuple(_t([0.0, 0.0, 0.0]) if isinstance(a, torch.Tensor) else a for a in args)
        x = st.tensor([0.3, -0.4, 0.7], requires_grad=True)
        tx = torch.tensor([0.3, -0.4, 0.7], requires_grad=True)
        y, ty = x * 1.5, tx * 1.5
        getattr(y, name)(*sargs).sum().backward()
        getattr(ty, name)(*args).sum().backward()
        _close(x.grad, tx.grad)


def test_inplace_views_and_autograd():
    x = st.ones(3, 1, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.squeeze_()
    w = st.tensor([[1.0, 2.0], [3.0, 4.0]])
    z = st.zeros(2, 2, requires_grad=True)
    y = z.clone()
    assert y.t_() is y
    (y * w).sum().backward()
    tz = torch.zeros(2, 2, requires_grad=True)
    ty = tz.clone().t_()
    (ty * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    _close(z.grad, tz.grad)
    u = st.ones(2, 3).unsqueeze_(1).transpose_(0, 2).swapaxes_(0, 1)
    assert u.shape == torch.ones(2, 3).unsqueeze_(1).transpose_(0, 2).swapaxes_(0, 1).shape


# ---------------------------------------------------------------- predicates and methods
@pytest.mark.parametrize("device", DEVICES)
def test_predicates(device):
    f, i, u = st.ones(2, device=device), st.ones(2, dtype=st.int32, device=device), st.ones(1, dtype=st.uint8)
    assert st.is_tensor(f) and not st.is_tensor(np.ones(2)) and not st.is_tensor([1])
    assert st.is_storage(f.untyped_storage()) and not st.is_storage(f)
    assert st.is_floating_point(f) and not st.is_floating_point(i)
    assert not st.is_complex(f) and not f.is_conj() and not st.is_neg(f)
    assert st.is_signed(f) and i.is_signed() and not u.is_signed()
    assert st.numel(st.ones(2, 3, device=device)) == 6
    assert st.is_same_size(f, i) and not f.is_same_size(st.ones(3))
    assert st.resolve_conj(f) is f and f.resolve_neg() is f and st.conj(f) is f
    # torch returns a real tensor itself; strided's conj_physical is a backend kernel with a derivative, so it
    # copies (an op's output must not be its input): Note [No conjugate bit] in ops/composite/complex_ops.py
    assert st.conj_physical(f) is not f and st.conj_physical(f).dtype is f.dtype
    assert st.real(f) is f and f.real is f


def test_is_nonzero_matches_torch():
    assert st.is_nonzero(st.tensor([1.5])) and not st.tensor([0]).is_nonzero()
    for shape in ((2,), (0,)):
        _raises_like(lambda s=shape: st.is_nonzero(st.ones(s)), lambda s=shape: torch.is_nonzero(torch.ones(s)))


def test_typename():
    for dtype, tdtype in ((st.float32, torch.float32), (st.int64, torch.int64), (st.bool, torch.bool)):
        assert st.typename(st.ones(1, dtype=dtype)) == torch.typename(torch.ones(1, dtype=tdtype))
    assert st.typename(st.ones(1, device="meta")) == torch.typename(torch.ones(1, device="meta"))
    assert st.typename(3) == torch.typename(3) == "int"


def test_tensor_methods():
    x, tx = st.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    assert x.byte().dtype is st.uint8 and x.char().dtype is st.int8 and x.short().dtype is st.int16
    _close(x.mH, tx.mH)
    _close(x.H, tx.H)
    _raises_like(lambda: st.ones(2, 3, 4).H, lambda: torch.ones(2, 3, 4).H)
    _raises_like(lambda: st.ones(2).mH, lambda: torch.ones(2).mH)
    assert x.dim_order() == tx.dim_order() and x.permute(1, 0).dim_order() == tx.permute(1, 0).dim_order()
    assert st.ones(2, 3, 4).permute(2, 0, 1).dim_order() == torch.ones(2, 3, 4).permute(2, 0, 1).dim_order()
    assert x.const_data_ptr() == x.data_ptr()
    assert x.is_set_to(x) and not x[:1].is_set_to(x)
    assert x.output_nr == 0 and not x.is_shared()
    e = x.new_empty_strided((2, 3), (1, 2))
    assert e.stride() == (1, 2) and e.dtype is st.float32
    _close(x.sum_to_size(1, 3), tx.sum_to_size(1, 3))
    _close(x.sum_to_size(3), tx.sum_to_size(3))
    _raises_like(lambda: x.sum_to_size(3, 3), lambda: tx.sum_to_size(3, 3))
    r = st.ones(5)
    assert st.resize_as_(r, x) is r and r.shape == (2, 3)
    _close(x.hardshrink(2.5), tx.hardshrink(2.5))


def test_apply_map_cpu_only():
    x, tx = st.tensor([1, 2, 3]), torch.tensor([1, 2, 3])
    _close(x.apply_(lambda v: v * 2), tx.apply_(lambda v: v * 2))
    _close(x.map_(st.tensor([10, 20, 30]), lambda a, b: a + b), tx.map_(torch.tensor([10, 20, 30]), lambda a, b: a + b))
    _close(x.map2_(st.tensor(1), st.tensor([1, 1, 2]), lambda a, b, c: a - b * c),
           tx.map2_(torch.tensor(1), torch.tensor([1, 1, 2]), lambda a, b, c: a - b * c))
    if "cuda" in DEVICES:
        with pytest.raises(TypeError, match="apply_ is only implemented on CPU tensors"):
            st.ones(2, device="cuda").apply_(lambda v: v)


# ---------------------------------------------------------------- factories
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
def test_windows(name, device):
    for n in (0, 1, 2, 5, 8):
        for periodic in (True, False):
            got = getattr(st, name)(n, periodic, device=device)
            want = getattr(torch, name)(n, periodic)
            assert got.dtype is st.float32 and got.shape == tuple(want.shape) and got.device.type == device
            if device != "meta":
                _close(got, want, rtol=2e-6, atol=1e-6)
    got = getattr(st, name)(6, dtype=st.float64, device=device)
    assert got.dtype is st.float64
    if device != "meta":
        _close(got, getattr(torch, name)(6, dtype=torch.float64), rtol=1e-12, atol=1e-12)
    _raises_like(lambda: getattr(st, name)(-1), lambda: getattr(torch, name)(-1))


def test_window_arguments():
    _close(st.hamming_window(7, False, 0.5, 0.4), torch.hamming_window(7, False, 0.5, 0.4))
    _close(st.kaiser_window(7, True, 5.0), torch.kaiser_window(7, True, 5.0), rtol=1e-5)
    with pytest.raises(RuntimeError, match="hann_window expects floating point dtypes, got: "):
        st.hann_window(4, dtype=st.int64)
    assert st.hann_window(3, requires_grad=True).requires_grad


@pytest.mark.parametrize("device", DEVICES)
def test_factories(device):
    s = st.scalar_tensor(3, device=device)
    assert s.shape == () and s.dtype is st.float32 and s.device.type == device
    assert st.scalar_tensor(2, dtype=st.int64).item() == 2
    for args, kw in (((0, 2, 3), {}), ((1, 3, 5), {"base": 2.0}), ((0, 3, 4), {"dtype": st.int64}),
                     ((2, 0, 3), {})):
        tkw = {k: (torch.int64 if v is st.int64 else v) for k, v in kw.items()}
        got, want = st.logspace(*args, device=device, **kw), torch.logspace(*args, **tkw)
        assert got.shape == tuple(want.shape) and got.dtype.name == str(want.dtype).split(".")[1]
        if device != "meta":
            _close(got, want, rtol=1e-6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = st.range(1, 4, 0.5, device=device)
    assert any("torch.range is deprecated" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.range(1, 4, 0.5)
    assert r.dtype is st.float32 and r.shape == tuple(want.shape)
    if device != "meta":
        _close(r, want)


def test_broadcast_shapes_and_atleast():
    assert st.broadcast_shapes((2, 1), (3,), 1) == torch.broadcast_shapes((2, 1), (3,), 1)
    assert st.broadcast_shapes() == torch.broadcast_shapes()
    _raises_like(lambda: st.broadcast_shapes((2, 2), (3,)), lambda: torch.broadcast_shapes((2, 2), (3,)))
    a, b = st.atleast_2d(st.ones(()), st.ones(3))
    ta, tb = torch.atleast_2d(torch.ones(()), torch.ones(3))
    assert a.shape == ta.shape and b.shape == tb.shape
    assert isinstance(st.atleast_3d([st.ones(2)]), tuple) and st.atleast_1d(st.ones(())).shape == (1,)


# ---------------------------------------------------------------- nn.functional names at top level
def _pair(shape, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(np.float32)
    return st.tensor(a), torch.tensor(a)


def test_functional_reexports_with_torch_signatures():
    x, tx = _pair((2, 4, 6))
    w, tw = _pair((3, 4, 2), 1)
    _close(st.conv1d(x, w, None, 1, 1), torch.conv1d(tx, tw, None, 1, 1), rtol=1e-5, atol=1e-5)
    _close(st.celu(x, 0.5), torch.celu(tx, 0.5))
    _close(st.threshold(x, 0.1, -1.0), torch.threshold(tx, 0.1, -1.0))
    _close(st.max_pool1d(x, 2), torch.max_pool1d(tx, 2))
    v, i = st.max_pool1d_with_indices(x, 3, 2)
    tv, ti = torch.max_pool1d_with_indices(tx, 3, 2)
    _close(v, tv)
    _close(i, ti)
    v, i = st.adaptive_max_pool1d(x, 3)
    tv, ti = torch.adaptive_max_pool1d(tx, 3)
    _close(v, tv)
    _close(i, ti)
    _close(st.avg_pool1d(x, 2, 1, 1), torch.avg_pool1d(tx, 2, 1, 1))
    _close(st.constant_pad_nd(x, [1, 2], 0.5), torch.constant_pad_nd(tx, [1, 2], 0.5))
    rm, trm = st.zeros(4), torch.zeros(4)
    rv, trv = st.ones(4), torch.ones(4)
    _close(st.batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5, True),
           torch.batch_norm(tx, None, None, trm, trv, True, 0.1, 1e-5, True), rtol=1e-5, atol=1e-5)
    _close(rm, trm, rtol=1e-5, atol=1e-6)
    _close(st.group_norm(x, 2, None, None, 1e-5, True), torch.group_norm(tx, 2, None, None, 1e-5, True),
           rtol=1e-5, atol=1e-5)
    _close(st.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, True),
           torch.instance_norm(tx, None, None, None, None, True, 0.1, 1e-5, True), rtol=1e-5, atol=1e-5)
    p, tp = _pair((2, 4, 6), 2)
    _close(st.kl_div(x, p.abs(), 2), torch.kl_div(tx, tp.abs(), 2), rtol=1e-5)
    _close(st.binary_cross_entropy_with_logits(x, p.sigmoid(), None, None, 0),
           torch.binary_cross_entropy_with_logits(tx, tp.sigmoid(), None, None, 0), rtol=1e-5)
    _close(st.poisson_nll_loss(x, p.abs(), True, False, 1e-8, 1), torch.poisson_nll_loss(tx, tp.abs(), True, False,
                                                                                        1e-8, 1), rtol=1e-5)
    y, ty = st.tensor([1.0, -1.0]), torch.tensor([1.0, -1.0])
    a, ta = _pair((2, 5), 3)
    b, tb = _pair((2, 5), 4)
    _close(st.cosine_embedding_loss(a, b, y, 0.1, 2), torch.cosine_embedding_loss(ta, tb, ty, 0.1, 2), rtol=1e-5)
    _close(st.margin_ranking_loss(a[:, 0], b[:, 0], y), torch.margin_ranking_loss(ta[:, 0], tb[:, 0], ty), rtol=1e-5)
    _close(st.hinge_embedding_loss(a, st.ones(2, 5)), torch.hinge_embedding_loss(ta, torch.ones(2, 5)), rtol=1e-5)
    _close(st.triplet_margin_loss(a, b, a * 2), torch.triplet_margin_loss(ta, tb, ta * 2), rtol=1e-5)
    _close(st.kl_div(x, p.abs()), torch.kl_div(tx, tp.abs()), rtol=1e-5)  # torch's default: unreduced
    with pytest.raises(ValueError, match="3 is not a valid value for reduction"):
        st.kl_div(x, p, 3)


def test_dropout_family():
    x = st.ones(4, 3, 5)
    assert st.alpha_dropout(x, 0.5, False) is x and st.feature_dropout(x, 0.5, False) is x
    y = st.ones(4, 3, 5)
    assert st.dropout_(y, 0.5, True) is y
    kept = y.numpy()
    assert set(np.unique(kept)) <= {0.0, 2.0}
    z = st.ones(8, 6, 5)
    out = st.feature_dropout(z, 0.5, True).numpy()
    assert all(len(np.unique(out[i, c])) == 1 for i in range(8) for c in range(6))  # whole channels
    _raises_like(lambda: st.feature_dropout(st.ones(3), 0.5, True), lambda: torch.feature_dropout(torch.ones(3), 0.5,
                                                                                                   True))
