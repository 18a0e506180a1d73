"""Activations (hardshrink, softshrink, prelu, rrelu, gumbel_softmax), channel-wise and alpha dropout, the padding
layers, pdist, bilinear, local_response_norm, channel_shuffle and max_pool*_with_indices, with their modules, on
every available backend: values and gradients against torch (when installed), NumPy references and the
structure of random results without it, torch's reprs, errors and warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
DTYPES = ["float32", "float64"]
RNG = np.random.default_rng(29)
# values at the activations' kinks: the closed dead zone [-0.5, 0.5] and 0, plus ordinary values
EDGES = np.array([-2.0, -0.5, -0.3, 0.0, 0.3, 0.5, 0.7, 1.5, -0.5000001, 0.5000001])


def host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


# ------------------------------------------------------------------------------------------ activations
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_shrink_activations_match_torch_at_the_edges(nn_oracle, device, dtype):
    x = np.concatenate([EDGES, RNG.standard_normal(14)]).reshape(4, 6)
    nn_oracle(lambda F, x: F.hardshrink(x), [x], device, dtype)
    nn_oracle(lambda F, x: F.hardshrink(x, 0.3), [x], device, dtype)
    nn_oracle(lambda F, x: F.softshrink(x), [x], device, dtype)
    nn_oracle(lambda F, x: F.softshrink(x, 0.0), [x], device, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,wsize", [((2, 3, 4), 3), ((2, 3, 4), 1), ((5,), 1), ((4, 3), 3), ((2, 3, 2, 2), 3)])
def test_prelu_matches_torch_with_weight_gradients(nn_oracle, device, dtype, shape, wsize):
    x = RNG.standard_normal(shape)
    x.flat[0] = 0.0
    w = RNG.uniform(0.05, 0.5, wsize)
    nn_oracle(lambda F, x, w: F.prelu(x, w), [x, w], device, dtype, grad=(0, 1))


@pytest.mark.parametrize("device", DEVICES)
def test_rrelu_in_eval_is_torchs_leaky_relu(nn_oracle, device):
    x = np.concatenate([EDGES, RNG.standard_normal(6)])
    nn_oracle(lambda F, x: F.rrelu(x, 0.1, 0.3, training=False), [x], device, "float32")


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_rrelu_training_draws_one_slope_per_negative_element(device):
    x0 = np.concatenate([EDGES, RNG.standard_normal(500)])
    x = st.tensor(x0, device=device, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    y.backward(st.ones_like(y))
    g = host(x.grad)
    assert np.all(g[x0 > 0] == 1.0)
    neg = g[x0 <= 0]
    assert neg.min() >= 0.1 - 1e-7 and neg.max() <= 0.3 + 1e-7 and len(np.unique(neg)) > 100
    np.testing.assert_allclose(host(y), x0 * g, rtol=1e-6)  # the gradient is exactly the slope used
    z = x.detach().clone()
    assert F.rrelu_(z, 0.1, 0.3, training=True) is z


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_gumbel_softmax_samples_the_softmax(device):
    st.manual_seed(3)
    logits = np.log(np.array([0.6, 0.3, 0.1]))
    x = st.tensor(np.tile(logits, (4000, 1)), dtype=st.float32, device=device, requires_grad=True)
    soft = F.gumbel_softmax(x, tau=0.5)
    np.testing.assert_allclose(host(soft).sum(-1), 1.0, rtol=1e-5)
    hard = F.gumbel_softmax(x, hard=True)
    h = host(hard)
    assert set(np.unique(h)) == {0.0, 1.0} and np.all(h.sum(-1) == 1.0)
    freq = h.mean(0)  # argmax of logits + Gumbel noise is a sample of softmax(logits)
    np.testing.assert_allclose(freq, [0.6, 0.3, 0.1], atol=0.035)
    hard.backward(st.tensor(RNG.standard_normal((4000, 3)), dtype=st.float32, device=device))
    assert x.grad is not None and np.abs(host(x.grad)).sum() > 0  # straight through: the soft sample's gradient
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(x.detach(), eps=1e-5)


def test_activation_modules_reprs_and_prelu_weights_from_torch():
    assert repr(nn.Hardshrink()) == "Hardshrink(0.5)"
    assert repr(nn.Softshrink(0.3)) == "Softshrink(0.3)"
    assert repr(nn.PReLU(3)) == "PReLU(num_parameters=3)"
    assert repr(nn.RReLU(0.1, 0.3, True)) == "RReLU(lower=0.1, upper=0.3, inplace=True)"
    assert repr(nn.RReLU()) == f"RReLU(lower={1 / 8}, upper={1 / 3})"
    m = nn.PReLU(3, init=0.1)
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.full(3, 0.1, np.float32))
    x = st.tensor(RNG.standard_normal((2, 3, 4)), dtype=st.float32)
    np.testing.assert_allclose(m(x).detach().numpy(), np.where(x.numpy() > 0, x.numpy(), 0.1 * x.numpy()), rtol=1e-6)
    y = nn.Softmax2d()(x)
    np.testing.assert_allclose(y.detach().numpy().sum(-3), 1.0, rtol=1e-6)
    r = nn.RReLU(0.1, 0.3).eval()
    np.testing.assert_allclose(r(x).numpy(), np.where(x.numpy() > 0, x.numpy(), 0.2 * x.numpy()), rtol=1e-6)


def test_activation_errors_in_torchs_words():
    with pytest.raises(NotImplementedError, match="\"hardshrink_cpu\" not implemented for 'Long'"):
        F.hardshrink(st.arange(3))
    with pytest.raises(NotImplementedError, match="\"softshrink_check\" not implemented for 'Long'"):
        F.softshrink(st.arange(3))
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 3.40282e\+38\] for input dtype Float, but "
                       "found -1"):
        F.softshrink(st.ones(3), -1.0)
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 1.79769e\+308\] for input dtype Double, "
                       "but found -1.5"):
        F.softshrink(st.ones(3, dtype=st.float64), -1.5)
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size. Found parameter "
                       "numbers = 2 and channel size = 3."):
        F.prelu(st.ones(2, 3), st.ones(2))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size. Found parameter "
                       "numbers = 3 and channel size = 1."):
        F.prelu(st.ones(3), st.ones(3))
    with pytest.raises(RuntimeError, match="prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"):
        F.prelu(st.ones(2, 3), st.ones(1, 3))
    with pytest.raises(RuntimeError, match="prelu: Type promoting not supported. Got Float and Double"):
        F.prelu(st.ones(2, 3), st.ones(3, dtype=st.float64))
    with pytest.raises(RuntimeError, match="Not allow zero-dim input tensor."):
        F.prelu(st.tensor(1.0), st.ones(3))
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(st.ones(3), 0.5, 0.1, True)
    with pytest.raises(NotImplementedError, match="\"rrelu_with_noise_out_cpu\" not implemented for 'Long'"):
        F.rrelu(st.arange(3), training=True)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(st.ones(3, 3))


# ------------------------------------------------------------------------------------------ dropout
@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("fn,shape,channels", [
    (F.dropout1d, (8, 16, 5), (8, 16)), (F.dropout1d, (16, 5), (1, 16)),
    (F.dropout2d, (8, 16, 3, 4), (8, 16)), (F.dropout3d, (4, 16, 2, 3, 2), (4, 16)),
    (F.dropout3d, (16, 2, 3, 2), (1, 16)),
])
def test_channel_dropout_keeps_or_zeroes_whole_channels(device, fn, shape, channels):
    x0 = RNG.uniform(0.5, 1.5, shape)
    x = st.tensor(x0, device=device, requires_grad=True)
    y = fn(x, 0.25)
    y.backward(st.ones_like(y))
    out, g = host(y).reshape(*channels, -1), host(x.grad).reshape(*channels, -1)
    kept = out[..., 0] != 0
    assert np.all((out != 0) == kept[..., None])  # a channel is dropped whole or kept whole
    np.testing.assert_allclose(out[kept], (x0.reshape(*channels, -1) / 0.75)[kept], rtol=1e-6)
    np.testing.assert_allclose(g, np.broadcast_to(np.where(kept[..., None], 1 / 0.75, 0.0), g.shape), rtol=1e-6)
    assert 0.4 < kept.mean() < 0.95 or kept.size < 20


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_alpha_dropout_keeps_mean_and_variance(device):
    st.manual_seed(0)
    p, alpha = 0.2, 1.7580993408473766
    a = 1 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    x0 = RNG.standard_normal(200_000)
    x = st.tensor(x0, device=device, requires_grad=True)
    y = F.alpha_dropout(x, p, training=True)
    out = host(y)
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02
    y.backward(st.ones_like(y))
    g = host(x.grad)
    dropped = g == 0  # the gradient is the noise times a
    np.testing.assert_allclose(g[~dropped], a, rtol=1e-9)
    assert 0.18 < dropped.mean() < 0.22
    np.testing.assert_allclose(out[dropped], -alpha * a * (1 - p), rtol=1e-9)  # SELU's saturation, mapped
    np.testing.assert_allclose(out[~dropped], (x0 * a + alpha * a * p)[~dropped], rtol=1e-9)
    f = host(F.feature_alpha_dropout(st.tensor(RNG.standard_normal((400, 50, 10)), device=device), p, True))
    const = np.all(f == f[..., :1], axis=-1)  # a dropped channel is one constant
    assert 0.17 < const.mean() < 0.23


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_variants_identity_and_zero_cases(device):
    x = st.ones(2, 3, 4, device=device)
    for fn in (F.dropout1d, F.alpha_dropout, F.feature_alpha_dropout):
        assert fn(x, 0.5, training=False) is x
        assert fn(x, 0.0, training=True) is x
    assert F.alpha_dropout(x, 0.5) is x  # off unless training, as torch's default
    z = F.dropout3d(st.ones(2, 3, 2, 2, 2, device=device), 1.0)
    assert tuple(z.shape) == (2, 3, 2, 2, 2)
    if device != "meta":
        assert not host(z).any()
        y = st.ones(3, 4, device=device)
        assert F.dropout1d(y, 0.5, inplace=True) is y
        assert set(np.unique(host(y))) <= {0.0, 2.0}


def test_dropout_variants_errors_warnings_and_modules():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout2d(st.ones(2, 3, 4, 4), 1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        nn.AlphaDropout(-0.1)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(st.ones(2, 3, 4, 4))
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in the input"):
        F.feature_alpha_dropout(st.ones(4), 0.5, True)
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired"):
        F.dropout2d(st.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="dropout3d: Received a 3-D input to dropout3d, which is deprecated"):
        F.dropout3d(st.ones(2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.dropout2d(st.ones(2, 3, 4, 4))
    assert repr(nn.Dropout2d(0.2)) == "Dropout2d(p=0.2, inplace=False)"
    assert repr(nn.FeatureAlphaDropout()) == "FeatureAlphaDropout(p=0.5, inplace=False)"
    m = nn.Dropout3d(0.5).eval()
    x = st.ones(2, 3, 2, 2, 2)
    assert m(x) is x
    out = nn.Dropout1d(0.5)(st.ones(4, 6, 3)).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0}


# ------------------------------------------------------------------------------------------ padding layers
PAD_CASES = [
    ("ConstantPad1d", ((1, 2), 3.5), (2, 3, 5)), ("ConstantPad2d", (1, -1.0), (3, 4, 5)),
    ("ConstantPad3d", ((1, 0, 2, 1, 0, 1), 0.5), (1, 2, 3, 4, 3)), ("ZeroPad1d", (2,), (3, 5)),
    ("ZeroPad2d", ((1, 2, -1, 1),), (2, 3, 4, 5)), ("ZeroPad3d", (1,), (2, 3, 2, 3)),
    ("ReflectionPad1d", ((2, 3),), (2, 3, 5)), ("ReflectionPad2d", (2,), (3, 4, 5)),
    ("ReflectionPad3d", ((1, 1, 2, 0, 1, 2),), (1, 2, 3, 4, 3)), ("ReplicationPad1d", (3,), (3, 5)),
    ("ReplicationPad2d", ((1, 2, 3, 0),), (2, 3, 4, 5)), ("ReplicationPad3d", (2,), (2, 3, 2, 3)),
    ("CircularPad1d", ((2, 1),), (2, 3, 5)), ("CircularPad2d", (2,), (3, 4, 5)),
    ("CircularPad3d", ((1, 0, 1, 2, 1, 1),), (1, 2, 3, 4, 3)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,args,shape", PAD_CASES, ids=[c[0] for c in PAD_CASES])
def test_padding_layers_match_torch(device, name, args, shape):
    torch = pytest.importorskip("torch")
    x0 = RNG.standard_normal(shape).astype(np.float32)
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    x, tx = st.tensor(x0, device=device, requires_grad=True), torch.tensor(x0, requires_grad=True)
    y, ty = ours(x), theirs(tx)
    assert tuple(y.shape) == tuple(ty.shape)
    up = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
    y.backward(st.tensor(up, device=device))
    ty.backward(torch.tensor(up))
    if device != "meta":
        np.testing.assert_array_equal(host(y), ty.detach().double().numpy())
        np.testing.assert_allclose(host(x.grad), tx.grad.double().numpy(), rtol=1e-6, atol=1e-6)


def test_padding_layers_without_torch():
    x = st.tensor(np.arange(4.0).reshape(1, 1, 4))
    np.testing.assert_array_equal(nn.ReflectionPad1d(2)(x).numpy()[0, 0], [2, 1, 0, 1, 2, 3, 2, 1])
    np.testing.assert_array_equal(nn.ReplicationPad1d((1, 2))(x).numpy()[0, 0], [0, 0, 1, 2, 3, 3, 3])
    np.testing.assert_array_equal(nn.CircularPad1d(1)(x).numpy()[0, 0], [3, 0, 1, 2, 3, 0])
    np.testing.assert_array_equal(nn.ConstantPad1d(1, 9.0)(x).numpy()[0, 0], [9, 0, 1, 2, 3, 9])
    assert repr(nn.ZeroPad2d((1, 2, 3, 4))) == "ZeroPad2d((1, 2, 3, 4))"
    assert repr(nn.ConstantPad3d(1, 2.0)) == "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=2.0)"
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.CircularPad2d(1)(st.ones(3, 3))
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        nn.ReflectionPad1d(4)(x)


# ------------------------------------------------------------------------------------------ distances, products
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", [2.0, 1.0, 0.5, 3.0, float("inf"), 0.0])
def test_pdist_matches_torch_including_tied_rows(nn_oracle, device, p):
    x = RNG.standard_normal((6, 4))
    x[3] = x[1]  # a zero distance: torch's gradient there is 0
    x[4, :2] = x[0, :2] + 1.0  # |d| ties across coordinates: the inf-norm's gradient goes to each in full
    x[4, 2:] = x[0, 2:] - 1.0
    nn_oracle(lambda F, x: F.pdist(x, p), [x], device, "float64")
    nn_oracle(lambda F, x: F.pdist(x, p), [x[:1]], device, "float64")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lead", [(5,), (), (2, 3)])
def test_bilinear_matches_torch(nn_oracle, device, dtype, lead):
    x1, x2 = RNG.standard_normal((*lead, 3)), RNG.standard_normal((*lead, 4))
    w, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal(2)
    nn_oracle(lambda F, a, c, w, b: F.bilinear(a, c, w, b), [x1, x2, w, b], device, dtype, grad=(0, 1, 2, 3))
    nn_oracle(lambda F, a, c, w: F.bilinear(a, c, w), [x1, x2, w], device, dtype, grad=(0, 1, 2))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(2, 5, 7), (2, 6, 3, 4), (1, 4, 2, 3, 2)])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_local_response_norm_matches_torch(nn_oracle, device, shape, size):
    nn_oracle(lambda F, x: F.local_response_norm(x, size, alpha=0.3, beta=0.6, k=2.0), [RNG.standard_normal(shape)],
              device, "float64")


@pytest.mark.parametrize("device", DEVICES)
def test_channel_shuffle_matches_torch(nn_oracle, device):
    nn_oracle(lambda F, x: F.channel_shuffle(x, 3), [RNG.standard_normal((2, 6, 3))], device, "float32")
    nn_oracle(lambda F, x: F.channel_shuffle(x, 2), [RNG.standard_normal((2, 4, 3, 2))], device, "float32")


def test_products_and_distances_without_torch():
    x0 = RNG.standard_normal((5, 3))
    d = F.pdist(st.tensor(x0)).numpy()
    i, j = np.triu_indices(5, 1)
    np.testing.assert_allclose(d, np.linalg.norm(x0[i] - x0[j], axis=1), rtol=1e-12)
    a, c, w, b = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 2)), RNG.standard_normal((5, 3, 2)), np.ones(5)
    y = F.bilinear(st.tensor(a), st.tensor(c), st.tensor(w), st.tensor(b)).numpy()
    np.testing.assert_allclose(y, np.einsum("bi,oij,bj->bo", a, w, c) + 1, rtol=1e-12)
    s = F.channel_shuffle(st.tensor(np.arange(6.0).reshape(1, 6, 1)), 2).numpy()
    np.testing.assert_array_equal(s.ravel(), [0, 3, 1, 4, 2, 5])
    sq = RNG.uniform(0.5, 1.5, (1, 3, 2))
    lrn = F.local_response_norm(st.tensor(sq), 3, alpha=0.3, beta=0.5, k=1.0).numpy()
    padded = np.pad(sq ** 2, ((0, 0), (1, 1), (0, 0)))
    mean = (padded[:, :-2] + padded[:, 1:-1] + padded[:, 2:]) / 3
    np.testing.assert_allclose(lrn, sq / np.sqrt(1 + 0.3 * mean), rtol=1e-12)
    m = nn.Bilinear(3, 2, 5)
    assert repr(m) == "Bilinear(in1_features=3, in2_features=2, out_features=5, bias=True)"
    bound = 1 / np.sqrt(3)
    assert np.abs(m.weight.detach().numpy()).max() <= bound and tuple(m.weight.shape) == (5, 3, 2)
    assert repr(nn.ChannelShuffle(3)) == "ChannelShuffle(groups=3)"
    np.testing.assert_array_equal(nn.ChannelShuffle(2)(st.tensor(np.arange(4.0).reshape(1, 4, 1))).numpy().ravel(),
                                  [0, 2, 1, 3])
    assert repr(nn.LocalResponseNorm(3)) == "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)"
    v, idx = F.max_pool2d_with_indices(st.tensor(np.arange(16.0).reshape(1, 1, 4, 4)), 2)
    np.testing.assert_array_equal(idx.numpy().ravel(), [5, 7, 13, 15])
    v3, idx3 = F.max_pool3d_with_indices(st.tensor(np.arange(8.0).reshape(1, 1, 2, 2, 2)), 2)
    assert idx3.numpy().ravel().tolist() == [7]
    v1, idx1 = F.max_pool1d_with_indices(st.tensor(np.arange(4.0).reshape(1, 1, 4)), 2)
    assert idx1.numpy().ravel().tolist() == [1, 3]


def test_distance_and_product_errors_in_torchs_words():
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 1D"):
        F.pdist(st.ones(3))
    with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
        F.pdist(st.ones(3, 2), -1)
    with pytest.raises(RuntimeError, match="pdist only supports floating-point dtypes"):
        F.pdist(st.ones(3, 2, dtype=st.int64))
    w = st.ones(6, 2, 5)
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input batch dimensions do not match at dim 0: got 3 and 4"):
        F.bilinear(st.ones(3, 2), st.ones(4, 5), w)
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input1 size does not match weight size: got 3 but "
                       "expected 2"):
        F.bilinear(st.ones(3, 3), st.ones(3, 5), w)
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input2 size does not match weight size: got 4 but "
                       "expected 5"):
        F.bilinear(st.ones(3, 2), st.ones(3, 4), w)
    with pytest.raises(RuntimeError, match=r"bilinear\(\): bias size does not match weight size: got 5 but expected 6"):
        F.bilinear(st.ones(3, 2), st.ones(3, 5), w, st.ones(5))
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input dimensions do not match: got 2 and 3"):
        F.bilinear(st.ones(3, 2), st.ones(3, 1, 5), w)
    with pytest.raises(RuntimeError, match="bilinear\\(\\): expected a 3-D weight"):
        F.bilinear(st.ones(3, 2), st.ones(3, 5), st.ones(6, 2, 5, 1))
    with pytest.raises(RuntimeError, match=r"channel_shuffle expects input with > 2 dims, but got input with sizes "
                       r"\[2, 6\]"):
        F.channel_shuffle(st.ones(2, 6), 3)
    with pytest.raises(RuntimeError, match="Number of groups to divide channels in must be positive. Value of "
                       "groups:0"):
        F.channel_shuffle(st.ones(2, 6, 3), 0)
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups. Got 6 channels and 4 "
                       "groups."):
        F.channel_shuffle(st.ones(2, 6, 3), 4)
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality\s+input \(got 2 dimensions\)"):
        F.local_response_norm(st.ones(2, 3), 2)


@pytest.mark.parametrize("device", DEVICES)
def test_deprecated_aliases_warn_and_match_their_targets(device):
    x = st.tensor(RNG.standard_normal((1, 2, 3, 4)), device=device)
    cases = [
        (lambda: F.upsample(x, scale_factor=2), F.interpolate(x, scale_factor=2), "`nn.functional.upsample` is"),
        (lambda: F.upsample_nearest(x, size=(5, 6)), F.interpolate(x, size=(5, 6)), "upsample_nearest` is deprecated"),
        (lambda: F.upsample_bilinear(x, scale_factor=2), F.interpolate(x, scale_factor=2, mode="bilinear",
                                                                       align_corners=True), "upsample_bilinear` is"),
    ]
    for call, want, message in cases:
        with pytest.warns(UserWarning, match=message):
            got = call()
        assert tuple(got.shape) == tuple(want.shape)
        if device != "meta":
            np.testing.assert_array_equal(host(got), host(want))
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        m = nn.NLLLoss2d(ignore_index=1)
    assert isinstance(m, nn.NLLLoss) and m.ignore_index == 1
