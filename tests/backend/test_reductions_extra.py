"""Reduction, normalization and matmul behaviour the OpInfos can't express: named-tuple results,
result dtypes, empty reductions, warnings, data-dependent errors and output layouts."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

DEVICES = available_devices()


def _t(values, dtype=st.float32, device="cpu"):
    return st.tensor(values, dtype=dtype, device=device)


def _values(t):
    return t.numpy(force=True).tolist() if t.device.type != "meta" else None


# ---------------------------------------------------------------------------- return_types


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_return_named_tuples(name, device):
    x = _t([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]], device=device)
    result = getattr(st, name)(x, 1)
    cls = getattr(st.return_types, name)
    assert type(result) is cls and isinstance(result, tuple) and len(result) == 2
    values, indices = result
    assert result.values is values and result.indices is indices
    assert result[0] is values and result[-1] is indices
    assert values.dtype is st.float32 and indices.dtype is st.int64
    assert values.shape == indices.shape == (2,)
    if device != "meta":
        expected = ([5.0, 7.0], [1, 0]) if name == "max" else ([1.0, 0.0], [0, 1])
        assert (_values(values), _values(indices)) == expected
    kept = getattr(x, name)(dim=0, keepdim=True)
    assert type(kept) is cls and kept.values.shape == kept.indices.shape == (1, 3)


def test_return_type_repr_and_tuple_protocol():
    r = st.return_types.max((1, 2))
    assert repr(r) == "strided.return_types.max(\nvalues=1,\nindices=2)"
    assert r == (1, 2) and r._fields == ("values", "indices") and r.n_fields == 2
    assert pickle.loads(pickle.dumps(r)) == r and type(pickle.loads(pickle.dumps(r))) is st.return_types.max
    with pytest.raises(AttributeError):
        r.values = 3
    with pytest.raises(TypeError, match="takes a 2-sequence"):
        st.return_types.min((1, 2, 3))


# ---------------------------------------------------------------------------- result dtypes


@pytest.mark.parametrize("device", DEVICES)
def test_sum_prod_cumsum_accumulate_integers_in_int64(device):
    for dtype in (st.bool, st.uint8, st.int8, st.int16, st.int32, st.int64):
        x = st.ones((2, 3), dtype=dtype, device=device)
        assert st.sum(x).dtype is st.int64
        assert st.sum(x, 1).dtype is st.int64
        assert st.prod(x).dtype is st.int64
        assert st.prod(x, 0).dtype is st.int64
        assert st.cumsum(x, 1).dtype is st.int64
        assert st.sum(x, dtype=st.int16).dtype is st.int16
        assert st.cumsum(x, 0, dtype=st.float32).dtype is st.float32
    assert st.sum(st.ones(3, dtype=st.float16, device=device)).dtype is st.float16


@pytest.mark.parametrize("device", DEVICES)
def test_sum_with_integral_dtype_truncates_elements_first(device):
    x = _t([0.5, 0.9, -0.9, 2.5], device=device)
    s = st.sum(x, dtype=st.int32)
    assert s.dtype is st.int32
    if device != "meta":
        assert s.item() == 2  # 0 + 0 + 0 + 2, not trunc(3.0)


@pytest.mark.parametrize("device", DEVICES)
def test_all_any_keep_uint8_and_return_bool_otherwise(device):
    u = _t([[0, 3], [1, 2]], st.uint8, device)
    assert st.all(u).dtype is st.uint8 and st.any(u, 1).dtype is st.uint8
    assert st.all(_t([1.0, 2.0], device=device)).dtype is st.bool
    assert st.any(_t([0, 0], st.int32, device=device), 0).dtype is st.bool
    if device != "meta":
        assert _values(st.all(u, 1)) == [0, 1] and _values(st.any(u)) == 1


@pytest.mark.parametrize("device", DEVICES)
def test_logsumexp_of_integers_uses_the_default_dtype(device):
    x = _t([[0, 1], [2, 3]], st.int64, device)
    assert st.logsumexp(x, 1).dtype is st.float32
    st.set_default_dtype(st.float64)
    try:
        assert st.logsumexp(x, 1).dtype is st.float64
        assert st.logsumexp(_t([True, False], st.bool, device), 0).dtype is st.float64
    finally:
        st.set_default_dtype(st.float32)


@pytest.mark.parametrize("device", DEVICES)
def test_mean_var_norm_reject_integers_with_torch_messages(device):
    i = _t([1, 2], st.int64, device)
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype. Input dtype must be "
                                           "either a floating point or complex dtype. Got: Long"):
        st.mean(i)
    assert st.mean(i, dtype=st.float64).dtype is st.float64
    with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
        st.var(i)
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or complex tensor "
                                           "as input. Got Long"):
        st.norm(i)


# ---------------------------------------------------------------------------- empty reductions


@pytest.mark.parametrize("device", DEVICES)
def test_reductions_over_empty_dims(device):
    e = st.empty((0, 3), device=device)
    cases = {
        "sum": (st.sum(e), 0.0, ()), "sum0": (st.sum(e, 0), [0.0] * 3, (3,)),
        "prod": (st.prod(e), 1.0, ()), "prod0": (st.prod(e, 0), [1.0] * 3, (3,)),
        "mean": (st.mean(e), math.nan, ()), "all": (st.all(e), True, ()),
        "any": (st.any(e, 0), [False] * 3, (3,)),
        "norm": (st.norm(e), 0.0, ()), "logsumexp": (st.logsumexp(e, 0), [-math.inf] * 3, (3,)),
        "amax1": (st.amax(e, 1), [], (0,)), "max1": (st.max(e, 1).values, [], (0,)),
        "sum_int": (st.sum(st.empty((0,), dtype=st.int32, device=device)), 0, ()),
    }
    for name, (result, expected, shape) in cases.items():
        assert result.shape == shape, name
        if device != "meta":
            np.testing.assert_array_equal(np.asarray(_values(result)), np.asarray(expected), err_msg=name)


@pytest.mark.parametrize("device", DEVICES)
def test_max_of_empty_raises_torch_errors(device):
    e = st.empty((0, 3), device=device)
    full = ("(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
            "with the 'dim' argument.")
    for name in ("max", "min", "amax", "amin"):
        with pytest.raises(RuntimeError) as info:
            getattr(st, name)(e)
        assert str(info.value) == name + full
    with pytest.raises(IndexError) as info:
        st.amax(e, 0)
    assert str(info.value) == "amax(): Expected reduction dim 0 to have non-zero size."
    with pytest.raises(IndexError) as info:
        st.max(e, -2)
    assert str(info.value) == "max(): Expected reduction dim 0 to have non-zero size."
    with pytest.raises(IndexError) as info:
        st.argmax(e)
    assert str(info.value) == "argmax(): Expected reduction dim to be specified for input.numel() == 0."


@pytest.mark.parametrize("device", DEVICES)
def test_var_warns_when_degrees_of_freedom_are_not_positive(device):
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0") as record:
        v = st.var(_t([1.0], device=device))
    assert len(record) == 1
    if device != "meta":
        assert math.isnan(v.item())
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        v = st.var(_t([1.0, 2.0], device=device), correction=3)
    if device != "meta":
        assert v.item() == math.inf


# ---------------------------------------------------------------------------- NaN and ties


def test_amax_amin_aminmax_gradients_of_a_nan_extreme_are_torchs():
    # torch's scale_grad_by_count: grad / count * mask; a NaN extreme equals no element, so 1 / 0 * 0 = NaN
    torch = pytest.importorskip("torch")
    values = [[1.0, math.nan, 4.0], [2.0, 5.0, 5.0]]
    for call in (lambda m, x: m.amax(x, 1).sum(), lambda m, x: m.amin(x, 1).sum(),
                 lambda m, x: sum(m.aminmax(x[0])), lambda m, x: m.amax(x)):
        grads = []
        for m in (st, torch):
            x = m.tensor(values, requires_grad=True)
            call(m, x).backward()
            grads.append(np.asarray(x.grad.tolist()))
        np.testing.assert_array_equal(*grads)


def test_max_min_argmax_propagate_the_first_nan():
    x = _t([[1.0, math.nan, 2.0, math.nan], [3.0, 1.0, 3.0, 0.0]])
    assert math.isnan(st.amax(x).item()) and math.isnan(st.max(x).item()) and math.isnan(st.min(x).item())
    values, indices = st.max(x, 1)
    assert math.isnan(values[0].item()) and indices.tolist() == [1, 0]
    assert st.argmax(x, 1).tolist() == [1, 0] and st.argmin(x, 1).tolist() == [1, 3]
    assert st.argmax(x).item() == 1


# ---------------------------------------------------------------------------- losses, softmax


def test_cross_entropy_rejects_out_of_range_targets():
    x = _t([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
    with pytest.raises(IndexError, match="^Target 3 is out of bounds.$"):
        st.cross_entropy_loss(x, _t([0, 3], st.int64))
    with pytest.raises(IndexError, match="^Target -1 is out of bounds.$"):
        st.cross_entropy_loss(x, _t([-1, 0], st.int64), label_smoothing=0.1)
    # an out-of-range class equal to ignore_index is ignored
    loss = st.cross_entropy_loss(x, _t([0, 7], st.int64), ignore_index=7, reduction=0)
    assert loss.tolist()[1] == 0.0


def test_cross_entropy_probability_targets_promote():
    x = _t([[0.1, 0.2, 0.3]])
    p = _t([[0.2, 0.3, 0.5]], st.float64)
    assert st.cross_entropy_loss(x, p).dtype is st.float64
    assert st.cross_entropy_loss(x.half(), _t([[0.2, 0.3, 0.5]])).dtype is st.float32


def test_softmax_of_half_is_computed_in_float32():
    x = _t([10.0, 10.0 + 2.0 ** -8, 9.0], st.float16)
    got = st.softmax(x, 0).float().numpy()
    a = x.float().numpy().astype(np.float64)
    e = np.exp(a - a.max())
    np.testing.assert_allclose(got, e / e.sum(), rtol=1e-3)
    assert st.log_softmax(x, 0, dtype=st.float32).dtype is st.float32


# ---------------------------------------------------------------------------- matmul / linear layouts


def test_matmul_fold_and_transposed_fold_outputs_are_contiguous():
    a = st.randn((5, 2, 3))
    w = st.randn((3, 4))
    assert st.matmul(a, w).stride() == (8, 4, 1)
    r = st.matmul(st.randn((2, 3), requires_grad=True), st.randn((5, 3, 4)))
    assert r.shape == (5, 2, 4) and r.is_contiguous()
    assert st.matmul(st.randn((3,)), st.randn((3,))).shape == ()


def test_linear_matches_matmul_plus_bias_on_every_path():
    x3 = st.randn((5, 2, 3))
    w, b = st.randn((4, 3)), st.randn((4,))
    expected = x3.numpy() @ w.numpy().T + b.numpy()
    np.testing.assert_allclose(st.linear(x3, w, b).numpy(), expected, rtol=1e-5, atol=1e-5)
    xt = x3.transpose(0, 1)  # non-contiguous: matmul then add_
    np.testing.assert_allclose(st.linear(xt, w, b).numpy(), xt.numpy() @ w.numpy().T + b.numpy(),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="mat2 must be a matrix, got 1-D tensor"):
        st.linear(st.randn((2, 3)), st.randn((3,)), st.randn(()))  # torch's addmm path


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
def test_batched_matmul_layouts_match_numpy(device):
    """The batched lowering builds views directly when batch dims collapse (Note [Views below
    autograd]) and reshapes otherwise: batch dims that collapse and that do not (a permuted
    slice), a size-1 batch dim with an odd stride, a broadcast (stride-0) batch, a zero-size batch."""
    base = st.randn((2, 5, 9, 4), device=device)
    cases = [
        (base[:, :, :3, :].transpose(2, 3), st.randn((2, 5, 3, 6), device=device)),
        (base.permute(1, 0, 2, 3)[:, :, 1:4, :], st.randn((5, 2, 4, 2), device=device)),
        (st.randn((3, 4, 2, 8), device=device)[:, :1, :, :4], st.randn((3, 1, 4, 5), device=device)),
        (st.randn((1, 2, 3), device=device).expand(4, 2, 3), st.randn((4, 3, 2), device=device)),
        (st.randn((4, 2, 3), device=device), st.randn((1, 3, 5), device=device).expand(4, 3, 5)),
        (st.randn((0, 2, 3), device=device), st.randn((0, 3, 4), device=device)),
    ]
    for a, b in cases:
        r = st.matmul(a, b)
        expected = np.matmul(a.numpy(force=True), b.numpy(force=True))
        assert r.shape == expected.shape and r.is_contiguous()
        np.testing.assert_allclose(r.numpy(force=True), expected, rtol=1e-4, atol=1e-4)


def test_addmm_beta_zero_ignores_nan_and_integer_scalars_truncate():
    nan = st.full((2, 2), math.nan)
    m = st.ones((2, 3))
    assert st.addmm(nan, m, st.ones((3, 2)), beta=0).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    i = st.ones((2, 2), dtype=st.int64)
    assert st.addmm(i, i, i, beta=2.5, alpha=-1.7).tolist() == [[0, 0], [0, 0]]  # 2*1 + (-1)*2


@pytest.mark.parametrize("device", DEVICES)
def test_softmax_backward_data_has_the_gradients_dtype(device):
    # torch's meta function: grad_output's dtype, float16 for a float32 gradient of a float16 input (autocast's case)
    cases = ((st.float32, st.float64, st.float32), (st.float32, st.float16, st.float16),
             (st.float32, st.bfloat16, st.float32), (st.float16, st.float32, st.float16))
    for grad_dtype, input_dtype, expected in cases:
        g = st.ones(2, 3, dtype=grad_dtype, device=device)
        y = st.full((2, 3), 1 / 3, dtype=grad_dtype, device=device)
        # softmax: y (g - sum(g y)) = 0; log_softmax: g - exp(y) sum(g) = 1 - 3 e^(1/3)
        for op, value in ((st.ops.aten._softmax_backward_data, 0.0),
                          (st.ops.aten._log_softmax_backward_data, 1 - 3 * math.exp(1 / 3))):
            r = op(g, y, 1, input_dtype)
            assert r.dtype is expected, (op, grad_dtype, input_dtype, r.dtype)
            if device != "meta":
                np.testing.assert_allclose(r.float().cpu().numpy(), value, atol=1e-2, rtol=1e-2)
