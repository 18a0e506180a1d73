"""The functional activations and rms_norm composed of operators (strided.nn.activations) on every
available backend: values and gradients against torch (the ``nn_oracle`` fixture, when torch is
installed) in float32 and float64 at every point where torch's gradient is special, in-place forms,
half inputs of rms_norm; torch's error messages; and checks that need no torch (gradcheck, NumPy
references)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck
from strided.autograd.graph import SavedTensor
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
DTYPES = ["float32", "float64"]
RNG = np.random.default_rng(4321)


def host(t):
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def _f64(*shape):
    return st.tensor(RNG.standard_normal(shape), requires_grad=True)


# every edge where torch's gradient is special: 0 (leaky_relu, elu, logsigmoid), +-1 (hardtanh), 0 and 6
# (relu6), +-3 (hardsigmoid, hardswish), the threshold itself; and large magnitudes (overflow of exp)
EDGES = np.array([-100.0, -20.0, -6.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 20.0, 100.0])
ACTIVATIONS = {
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
    "elu": lambda F, x: F.elu(x, 0.7),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, 1.5),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh_bounds": lambda F, x: F.hardtanh(x, -3.0, 0.5),
    "relu6": lambda F, x: F.relu6(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "mish": lambda F, x: F.mish(x),
    "softsign": lambda F, x: F.softsign(x),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "threshold": lambda F, x: F.threshold(x, 0.5, -2.0),
    "glu": lambda F, x: F.glu(x, -1),
    "softmin": lambda F, x: F.softmin(x, 0),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_match_torch(nn_oracle, device, dtype, name):
    x = np.concatenate([EDGES, RNG.standard_normal(13) * 4])
    nn_oracle(ACTIVATIONS[name], [x], device, dtype)  # float64 hardsigmoid's gradient too: torch's float 1/6
    nn_oracle(ACTIVATIONS[name], [x.reshape(2, 13).T], device, dtype)  # non-contiguous input


INPLACE = ["leaky_relu", "elu", "selu", "celu", "hardtanh", "relu6", "hardsigmoid", "hardswish", "mish", "threshold"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", INPLACE)
def test_inplace_activations_modify_their_input_and_backprop_like_torch(nn_oracle, device, name):
    args = (0.5, -2.0) if name == "threshold" else ()

    def fn(F, a):
        x = a * 1.0  # a non-leaf, so it may be modified in place
        out = getattr(F, name)(x, *args, inplace=True)
        assert out is x
        return x

    nn_oracle(fn, [EDGES], device, "float64", rtol=1e-7)
    for alias in ("leaky_relu_", "elu_", "selu_", "celu_", "hardtanh_", "threshold_"):
        x = st.tensor([-1.5, 0.25, 2.0], device=device)
        base = alias[:-1]
        extra = (0.5, -2.0) if base == "threshold" else ()
        expected = getattr(F, base)(x.clone(), *extra)
        assert getattr(F, alias)(x, *extra) is x
        if device != "meta":
            np.testing.assert_array_equal(host(x), host(expected))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        getattr(F, name)(st.ones(2, requires_grad=True, device=device), *args, inplace=True)


@pytest.mark.parametrize("device", DEVICES)
def test_glu_softmin_threshold_variants_match_torch(nn_oracle, device):
    x = RNG.standard_normal((4, 6, 2))
    for dim in (0, 1, -2):
        nn_oracle(lambda F, x, dim=dim: F.glu(x, dim), [x], device, "float64")
    torch = pytest.importorskip("torch")

    def softmin64(F, x):
        return F.softmin(x, 1, dtype=st.float64 if F is st.nn.functional else torch.float64)

    nn_oracle(softmin64, [x.astype(np.float32)], device, "float32", rtol=1e-6)
    nn_oracle(lambda F, x: F.threshold(x, 0.0, 10.0), [x], device, "float32")


def test_integer_inputs_keep_their_type_as_torch():
    x = st.tensor([-3, 0, 2, 7])
    assert F.threshold(x, 0, 2.5).tolist() == [2, 2, 2, 7] and F.threshold(x, 0, 2.5).dtype is st.int64
    assert F.hardtanh(x, -1.5, 1.5).tolist() == [-1, 0, 1, 1]
    assert F.relu6(x).tolist() == [0, 0, 2, 6]
    np.testing.assert_allclose(F.softsign(x).numpy(), [-0.75, 0.0, 2 / 3, 7 / 8], rtol=1e-6)
    for name, kernel in (
        ("leaky_relu", "leaky_relu"),
        ("elu", "elu"),
        ("selu", "elu"),
        ("celu", "elu"),
        ("logsigmoid", "log_sigmoid"),
        ("hardsigmoid", "hardsigmoid"),
        ("hardswish", "hardswish"),
        ("mish", "mish"),
    ):
        with pytest.raises(NotImplementedError, match=f"\"{kernel}_cpu\" not implemented for 'Long'"):
            getattr(F, name)(x)
    with pytest.raises(NotImplementedError, match="\"glu_cpu\" not implemented for 'Long'"):
        F.glu(x)


def test_activation_errors_are_torchs():
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(st.randn(3), 2.0, 1.0)
    with pytest.raises(RuntimeError, match="ZeroDivisionError: alpha cannot be 0 for CELU"):
        F.celu(st.randn(3), 0.0)
    with pytest.raises(RuntimeError, match="glu does not support scalars because halving size must be even"):
        F.glu(st.tensor(1.0))
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 5"):
        F.glu(st.randn(3, 5), -1)
    with pytest.raises(
        IndexError, match=re.escape("Dimension out of range (expected to be in range of [-2, 1], but got 2)")
    ):
        F.glu(st.randn(3, 4), 2)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin has been deprecated"):
        F.softmin(st.randn(2, 3))


def test_activations_against_numpy():
    v = np.array([-5.0, -3.0, -1.0, -0.25, 0.0, 0.25, 1.0, 3.0, 5.0])
    x = st.tensor(v)
    refs = {
        "leaky_relu": np.where(v > 0, v, 0.01 * v),
        "elu": np.where(v > 0, v, np.expm1(v)),
        "logsigmoid": -np.log1p(np.exp(-v)),
        "hardtanh": np.clip(v, -1, 1),
        "relu6": np.clip(v, 0, 6),
        "hardsigmoid": np.clip(v + 3, 0, 6) / 6,
        "hardswish": v * np.clip(v + 3, 0, 6) / 6,
        "mish": v * np.tanh(np.log1p(np.exp(v))),
        "softsign": v / (1 + np.abs(v)),
        "tanhshrink": v - np.tanh(v),
    }
    for name, ref in refs.items():
        np.testing.assert_allclose(getattr(F, name)(x).numpy(), ref, rtol=1e-12, atol=1e-15, err_msg=name)
    np.testing.assert_allclose(
        F.selu(x).numpy(), 1.0507009873554805 * np.where(v > 0, v, 1.6732632423543772 * np.expm1(v)), rtol=1e-12
    )
    np.testing.assert_allclose(F.celu(x, 2.0).numpy(), np.maximum(v, 0) + np.minimum(0, 2 * np.expm1(v / 2)))
    np.testing.assert_allclose(F.threshold(x, 0.1, 20.0).numpy(), np.where(v <= 0.1, 20.0, v))
    np.testing.assert_allclose(F.glu(x[:8]).numpy(), v[:4] / (1 + np.exp(-v[4:8])), rtol=1e-12)
    np.testing.assert_allclose(F.softmin(x, 0).numpy(), np.exp(-v) / np.exp(-v).sum(), rtol=1e-12)
    # the gradient edges, without torch: hardtanh's is zero at the bounds, hardswish's is 0 at -3 and 1 at 3
    x = st.tensor([-3.0, -1.0, 1.0, 3.0], requires_grad=True)
    F.hardtanh(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0, 0.0])
    x.grad = None
    F.hardswish(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1 / 6, 5 / 6, 1.0])
    z = st.tensor([0.0], requires_grad=True)
    F.logsigmoid(z).backward(st.ones(1))
    assert z.grad.item() == 0.5  # torch's: minimum's half gradient at the tie


@pytest.mark.parametrize(
    "name", ["elu", "selu", "celu", "logsigmoid", "mish", "softsign", "tanhshrink", "leaky_relu", "hardswish"]
)
def test_activations_gradcheck(name):
    x = st.tensor(RNG.standard_normal(7) * 2 + 0.05, requires_grad=True)  # away from the kinks
    assert gradcheck(lambda x: ACTIVATIONS[name](F, x), (x,))


def test_glu_and_rms_norm_gradcheck():
    assert gradcheck(lambda x: F.glu(x, 1), (_f64(2, 4),))
    assert gradcheck(lambda x, w: F.rms_norm(x, [3, 4], w), (_f64(2, 3, 4), _f64(3, 4)))
    assert gradcheck(lambda x: F.rms_norm(x, (4,), eps=1e-3), (_f64(3, 4),))


# ---------------------------------------------------------------------------------------------- rms_norm
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("eps", [None, 1e-5])
def test_rms_norm_matches_torch(nn_oracle, device, dtype, eps):
    x = RNG.standard_normal((3, 4, 5)) * 1e-3  # small: the default eps matters
    for shape in ([5], [4, 5]):
        w = RNG.standard_normal(shape)
        nn_oracle(
            lambda F, x, w, shape=shape: F.rms_norm(x, shape, w, eps),
            [x, w],
            device,
            dtype,
            grad=(0, 1),
            rtol=1e-8 if dtype == "float64" else 1e-4,
        )
        nn_oracle(
            lambda F, x, shape=shape: F.rms_norm(x, tuple(shape), eps=eps),
            [x],
            device,
            dtype,
            rtol=1e-8 if dtype == "float64" else 1e-4,
        )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("half", ["float16", "bfloat16"])
def test_rms_norm_half_inputs_compute_in_float32_like_torch(device, half):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((6, 8)) * 1e-3
    w = RNG.standard_normal(8)
    sx = st.tensor(x, dtype=getattr(st, half), device=device)
    tx = torch.tensor(x, dtype=getattr(torch, half))
    for wd in (half, "float32"):
        sw, tw = st.tensor(w, dtype=getattr(st, wd), device=device), torch.tensor(w, dtype=getattr(torch, wd))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: "Mismatch dtype between input and weight"
            expected = torch.nn.functional.rms_norm(tx, [8], tw)
        got = F.rms_norm(sx, [8], sw)
        assert got.dtype is sx.dtype and expected.dtype == tx.dtype
        if device != "meta":
            # eps defaults to float32's (1.2e-7), not the half type's: with x ~ 1e-3 that is visible
            np.testing.assert_allclose(host(got), expected.float().numpy(), rtol=1e-2, atol=1e-2)


def test_rms_norm_errors_are_torchs():
    x = st.randn(3, 4)
    with pytest.raises(
        RuntimeError,
        match=re.escape("Given normalized_shape=[3], expected input with shape [*3], but got input of size[3, 4]"),
    ):
        F.rms_norm(x, [3])
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "Given normalized_shape=[3, 5], expected input with shape [*3, 5], but got input of size[3, 4, 5]"
        ),
    ):
        F.rms_norm(st.randn(3, 4, 5), [3, 5])
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "Expected weight to be of same shape as normalized_shape, but got "
            "weight of shape [3] and normalized_shape = [4]"
        ),
    ):
        F.rms_norm(x, [4], weight=st.ones(3))
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "Expected normalized_shape to be at least 1-dimensional, i.e., "
            "containing at least one element, but got normalized_shape = []"
        ),
    ):
        F.rms_norm(x, [])
    with pytest.raises(ValueError, match="Input tensor must have at least 3 dimensions, but got 2"):
        F.rms_norm(x, [2, 3, 4])
    with pytest.raises(
        TypeError,
        match=re.escape("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int"),
    ):
        F.rms_norm(x, 4)
    with pytest.raises(NotImplementedError, match="\"rms_norm\" not implemented for 'Long'"):
        F.rms_norm(x.long(), [4])
    ref = x.numpy() / np.sqrt((x.numpy() ** 2).mean(-1, keepdims=True) + np.finfo(np.float32).eps)
    np.testing.assert_allclose(F.rms_norm(x, [4]).numpy(), ref, rtol=1e-5)


def test_dropout_of_integers_and_hardtanh_of_bool_and_unsigned_as_torch():
    """Integer dropout: torch scales an integer mask by a float in place, so 0 < p < 1 fails in its words and
    p = 1 gives zeros of the input's dtype; hardtanh refuses bool, and negative limits for uint8 (they would wrap
    around to 255)."""
    torch = pytest.importorskip("torch")
    for name in ("int64", "uint8", "int32", "bool"):
        x, t = st.ones(3, dtype=getattr(st, name)), torch.ones(3, dtype=getattr(torch, name))
        with pytest.raises(RuntimeError) as want:
            torch.nn.functional.dropout(t, 0.5)
        with pytest.raises(RuntimeError, match=re.escape(str(want.value))):
            F.dropout(x, 0.5)
        got = F.dropout(x, 1.0)
        assert got.dtype is x.dtype and got.tolist() == torch.nn.functional.dropout(t, 1.0).tolist()
    empty = st.ones(0, dtype=st.int64)
    assert F.dropout(empty, 0.5) is empty
    with pytest.raises(NotImplementedError, match="Bool inputs not supported for hardtanh"):
        F.relu6(st.tensor([True, False]))
    with pytest.raises(RuntimeError, match="cannot do hardtanh on an unsigned type with negative limits"):
        F.hardtanh(st.tensor([0, 5, 200], dtype=st.uint8))
    assert F.hardtanh(st.tensor([0, 5, 200], dtype=st.uint8), 0.0, 6.0).tolist() == [0, 5, 6]
    # torch checks the bounds truncated to the integer type: -0.5 is 0
    assert F.hardtanh(st.tensor([0, 5, 200], dtype=st.uint8), -0.5, 0.5).tolist() == [0, 0, 0]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, fn, saves", [
    ("HardtanhBackward0", lambda x: F.hardtanh(x, -0.5, 2.0), "output"),
    ("HardtanhBackward0", F.relu6, "output"),
    ("HardtanhBackward0", lambda x: F.relu6(x * 1, inplace=True), "output"),
    ("LeakyReluBackward0", lambda x: F.leaky_relu(x, 0.1), "input"),
    ("LeakyReluBackward1", lambda x: F.leaky_relu(x * 1, 0.1, inplace=True), "output"),
    ("EluBackward0", lambda x: F.elu(x, 0.7), "input"),
    ("EluBackward0", F.selu, "input"),
    ("CeluBackward0", lambda x: F.celu(x, 1.5), "input"),
    ("EluBackward1", lambda x: F.elu(x * 1, 0.7, inplace=True), "output"),
    ("EluBackward1", lambda x: F.selu(x * 1, inplace=True), "output"),
    ("CeluBackward1", lambda x: F.celu(x * 1, 1.5, inplace=True), "output"),
    ("HardsigmoidBackward0", F.hardsigmoid, "input"),
    ("HardswishBackward0", F.hardswish, "input"),
    ("MishBackward0", F.mish, "input"),
    ("HardsigmoidBackward0", lambda x: F.hardsigmoid(x * 1, inplace=True), "copy"),
    ("HardswishBackward0", lambda x: F.hardswish(x * 1, inplace=True), "copy"),
    ("MishBackward0", lambda x: F.mish(x * 1, inplace=True), "copy"),
    ("SoftshrinkBackward0", lambda x: F.softshrink(x, 0.3), "input"),
    ("HardshrinkBackward0", lambda x: F.hardshrink(x, 0.3), "input"),
    ("ThresholdBackward0", lambda x: F.threshold(x, 0.1, 2.0), "input"),
    ("ThresholdBackward1", lambda x: F.threshold(x * 1, 0.1, 2.0, inplace=True), "copy"),
    ("LogSigmoidBackward0", F.logsigmoid, "input"),
    ("GluBackward0", lambda x: F.glu(x, 0), "input"),
])
def test_activation_operators_record_one_node_saving_one_tensor(device, name, fn, saves):
    """Note [Functional operators]: torch's node, one edge, one saved tensor -- the explicit in-place forms save the
    tensor they wrote, the autogen ones (their formula reads the input) a copy of the old value, as torch's."""
    x = st.randn(4, 5, device=device, requires_grad=True)
    y = fn(x)
    assert type(y.grad_fn).__name__ == name
    (edge,) = y.grad_fn.next_edges  # x's accumulator, or the node of x * 1 that the in-place forms write
    assert type(edge[0]).__name__ in ("AccumulateGrad", "MulBackward0")
    saved = [v for v in y.grad_fn.saved if isinstance(v, SavedTensor)]
    assert len(saved) == 1
    value = saved[0].unpack(y.grad_fn)
    if saves == "copy":
        assert value._storage is not y._storage and value._storage is not x._storage
    else:
        assert value._storage is (y if saves == "output" else x)._storage
    y.sum().backward()
    assert x.grad is not None
    for op in ("hardtanh", "leaky_relu", "elu", "hardswish", "mish", "glu", "log_sigmoid", "softshrink"):
        assert not hasattr(st, op)  # torch's python_module: nn


@pytest.mark.parametrize("fn", [lambda x: F.elu(x, alpha=-1.0, inplace=True),
                                lambda x: F.celu(x, alpha=-1.0, inplace=True)])
def test_inplace_elu_with_a_negative_alpha_refuses_backward_as_torch(fn):
    x = st.randn(5, requires_grad=True)
    y = fn(x * 1)  # the forward runs; its gradient would read a result whose sign lost the input's
    with pytest.raises(RuntimeError, match="In-place elu backward calculation is triggered with a negative slope"):
        y.sum().backward()
    z = F.elu(x, alpha=-1.0)  # out of place: the gradient reads the input
    z.sum().backward()
    assert x.grad is not None


@pytest.mark.parametrize("device", DEVICES)
def test_prelu_is_torchs_prelu_kernel_with_both_gradients(nn_oracle, device):
    """F.prelu reshapes the weight and calls ``_prelu_kernel`` (node PreluKernelBackward0), as torch's; the weight's
    gradient is summed back to its shape."""
    x = st.randn(2, 3, 4, device=device, requires_grad=True)
    w = st.rand(3, device=device, requires_grad=True)
    y = F.prelu(x, w)
    assert type(y.grad_fn).__name__ == "PreluKernelBackward0"
    y.sum().backward()
    assert w.grad.shape == w.shape
    a = RNG.standard_normal((2, 3, 4))
    a[0, 0, :2] = 0.0  # the kink: torch's kernel takes the weight's branch at 0
    nn_oracle(lambda F, x, w: F.prelu(x, w), [a, RNG.random(3)], device, "float64", grad=(0, 1))
