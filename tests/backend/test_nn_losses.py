"""The functional losses composed of operators (strided.nn.losses) on every available backend: values
and gradients against torch (the ``nn_oracle`` fixture, when torch is installed) for every reduction,
weight, ignore_index, pos_weight, log_target and batchmean, in float32 and float64, including the
points where torch's gradients are special; torch's error messages and warnings; and checks that
need no torch (gradcheck, NumPy references)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
DTYPES = ["float32", "float64"]
REDUCTIONS = ["none", "mean", "sum"]
RNG = np.random.default_rng(1234)


def host(t):
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


# ------------------------------------------------------------------------------------------ nll_loss
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(6, 4), (4,), (3, 4, 5), (2, 4, 3, 2), (2, 4, 2, 1, 3)])
def test_nll_loss_matches_torch(nn_oracle, device, dtype, reduction, weighted, shape):
    x = RNG.standard_normal(shape)
    tshape = () if len(shape) == 1 else (shape[0], *shape[2:])
    t = RNG.integers(0, 4, tshape)
    w = RNG.uniform(0.5, 2.0, 4) if weighted else None
    nn_oracle(lambda F, x, t, w: F.nll_loss(x, t, w, reduction=reduction), [x, t, w], device, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_nll_loss_ignore_index_matches_torch(nn_oracle, device, reduction, ignore_index):
    x = RNG.standard_normal((8, 4))
    x[1, 0] = -np.inf  # an ignored row whose class-0 log-probability is -inf must still give 0
    t = np.array([1, ignore_index, 2, 3, ignore_index, 0, 2, 1])
    w = RNG.uniform(0.5, 2.0, 4)
    for weight in (None, w):
        nn_oracle(
            lambda F, x, t, w: F.nll_loss(x, t, w, ignore_index=ignore_index, reduction=reduction),
            [x, t, weight],
            device,
            "float64",
        )
    # uint8 targets, as torch accepts
    nn_oracle(
        lambda F, x, t: F.nll_loss(x, t, reduction=reduction),
        [x[2:], t[2:].clip(0).astype(np.uint8)],
        device,
        "float32",
    )


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_nll_loss_all_ignored_mean_is_nan_and_weighted_mean_divides_by_weights(device):
    x = st.tensor([[-1.0, -2.0, -3.0], [-0.5, -0.25, -4.0]], device=device)
    t = st.tensor([-100, -100], device=device)
    assert np.isnan(F.nll_loss(x, t).item()) and F.nll_loss(x, t, reduction="sum").item() == 0.0
    w = st.tensor([1.0, 2.0, 3.0], device=device)
    got = F.nll_loss(x, st.tensor([2, 1], device=device), w).item()
    assert got == pytest.approx((3 * 3.0 + 2 * 0.25) / (3 + 2))


def test_nll_loss_errors_are_torchs():
    x = st.randn(3, 4)
    with pytest.raises(ValueError, match=re.escape("Expected input batch_size (3) to match target batch_size (2).")):
        F.nll_loss(x, st.tensor([1, 2]))
    with pytest.raises(IndexError, match=re.escape("Target 5 is out of bounds.")):
        F.nll_loss(x, st.tensor([1, 2, 5]))
    with pytest.raises(IndexError, match=re.escape("Target -5 is out of bounds.")):
        F.nll_loss(x, st.tensor([1, -5, 2]))
    with pytest.raises(IndexError, match=re.escape("Target 7 is out of bounds.")):
        F.nll_loss(st.randn(3, 4, 5), st.tensor([[1, 2, 7, 0, 0]] * 3))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.nll_loss(x, st.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "weight tensor should be defined either for all 4 classes or no classes but got weight tensor of shape: [3]"
        ),
    ):
        F.nll_loss(x, st.tensor([1, 2, 3]), weight=st.ones(3))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        F.nll_loss(x, st.tensor([1, 2, 3]), weight=st.ones(4, dtype=st.float64))
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.nll_loss(x, st.tensor([1, 2, 3]), reduction="bad")
    with pytest.raises(NotImplementedError, match="\"nll_loss_out_frame\" not implemented for 'Long'"):
        F.nll_loss(x.long(), st.tensor([1, 2, 3]))
    with pytest.raises(NotImplementedError, match="\"nll_loss2d_forward_out_frame\" not implemented for 'Long'"):
        F.nll_loss(st.ones(2, 3, 4).long(), st.zeros(2, 4, dtype=st.int64))


@pytest.mark.parametrize("device", [d for d in DATA_DEVICES if d != "cpu"])
def test_nll_loss_bad_target_off_the_host_is_nan_without_sync(device):
    # as strided's cross_entropy there: no device sync, the loss is nan where a target is out of range
    x = st.randn(3, 4, device=device)
    out = F.nll_loss(x, st.tensor([1, 9, 2], device=device), reduction="none")
    got = host(out)
    assert np.isnan(got[1]) and np.isfinite(got[[0, 2]]).all()
    assert np.isnan(F.nll_loss(x, st.tensor([1, 9, 2], device=device)).item())


# -------------------------------------------------------------------------------- binary cross entropy
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weight_shape", [None, (3, 4), (4,), (1, 4)])
def test_binary_cross_entropy_matches_torch(nn_oracle, device, dtype, reduction, weight_shape):
    x, t = RNG.uniform(0.02, 0.98, (3, 4)), RNG.uniform(0, 1, (3, 4))
    w = None if weight_shape is None else RNG.uniform(0.5, 2, weight_shape)
    nn_oracle(
        lambda F, x, t, w: F.binary_cross_entropy(x, t, w, reduction=reduction), [x, t, w], device, dtype, grad=(0, 1)
    )


@pytest.mark.parametrize("device", DEVICES)
def test_binary_cross_entropy_at_0_and_1_has_torchs_gradients(nn_oracle, device):
    # torch: log clamped at -100, d/dx = (x - t) / max(x (1 - x), 1e-12), d/dt = -logit(x)
    x = np.array([0.0, 1.0, 0.0, 1.0, 0.5, 1e-30])
    t = np.array([1.0, 0.0, 0.0, 1.0, 0.3, 0.7])
    nn_oracle(lambda F, x, t: F.binary_cross_entropy(x, t, reduction="none"), [x, t], device, "float64", rtol=1e-12)
    nn_oracle(
        lambda F, x, t: F.binary_cross_entropy(x, t, reduction="sum"),
        [x[:2], t[:2]],
        device,
        "float64",
        grad=(0, 1),
        rtol=1e-12,
    )
    if device != "meta":
        xs = st.tensor([0.0, 1.0, 1.0], requires_grad=True, device=device)
        loss = F.binary_cross_entropy(xs, st.tensor([1.0, 0.0, 1.0], device=device), reduction="none")
        np.testing.assert_allclose(host(loss), [100.0, 100.0, 0.0])
        loss.sum().backward()
        np.testing.assert_allclose(host(xs.grad), [-1e12, 1e12, 0.0])  # finite, where the composed logs give nan


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted,pos_weighted", [(False, False), (True, False), (False, True), (True, True)])
def test_binary_cross_entropy_with_logits_matches_torch(nn_oracle, device, dtype, reduction, weighted, pos_weighted):
    x = RNG.standard_normal((5, 4)) * 8
    x[0, :2] = [60.0, -60.0]  # exp overflows in float32 here unless the form is the stable one
    t = RNG.uniform(0, 1, (5, 4))
    w = RNG.uniform(0.5, 2, (5, 4)) if weighted else None
    pw = RNG.uniform(0.5, 3, 4) if pos_weighted else None
    nn_oracle(
        lambda F, x, t, w, pw: F.binary_cross_entropy_with_logits(x, t, w, reduction=reduction, pos_weight=pw),
        [x, t, w, pw],
        device,
        dtype,
        grad=(0, 1),
    )


def test_binary_cross_entropy_errors_are_torchs():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Using a target size (strided.Size([3, 1])) that is different to "
            "the input size (strided.Size([3])) is deprecated. Please ensure "
            "they have the same size."
        ),
    ):
        F.binary_cross_entropy(st.rand(3), st.rand(3, 1))
    for bad in ([1.5, 0.2], [-0.5, 0.2], [float("nan"), 0.5]):
        with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
            F.binary_cross_entropy(st.tensor(bad), st.rand(2))
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "Attempting to broadcast a dimension of length 2 at -1! Mismatching argument at index 1 had "
            "strided.Size([2]); but expected shape should be broadcastable to [2, 3]"
        ),
    ):
        F.binary_cross_entropy(st.rand(2, 3), st.rand(2, 3), weight=st.ones(2))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        F.binary_cross_entropy(st.rand(2, 3), st.rand(2, 3).double())
    with pytest.raises(NotImplementedError, match="\"binary_cross_entropy\" not implemented for 'Long'"):
        F.binary_cross_entropy(st.ones(2).long(), st.ones(2).long())
    with pytest.raises(
        ValueError,
        match=re.escape("Target size (strided.Size([3, 1])) must be the same as input size (strided.Size([3]))"),
    ):
        F.binary_cross_entropy_with_logits(st.rand(3), st.rand(3, 1))
    with pytest.raises(
        RuntimeError,
        match=re.escape("The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1"),
    ):
        F.binary_cross_entropy_with_logits(st.rand(2, 3), st.rand(2, 3), pos_weight=st.ones(2))
    with pytest.raises(NotImplementedError, match="\"log_sigmoid_cpu\" not implemented for 'Long'"):
        F.binary_cross_entropy_with_logits(st.ones(2).long(), st.ones(2).long())


# ------------------------------------------------------------------------------- l1 / smooth_l1 / huber
@pytest.mark.parametrize("device", DATA_DEVICES)
def test_huber_loss_has_the_inputs_dtype(device):
    # torch writes the loss into empty_like(input): a float64 target does not promote it (mse / smooth_l1 do)
    x = st.tensor([0.25, -3.0, 1.5], device=device)
    t = st.tensor([0.0, 0.0, 1.0], dtype=st.float64, device=device)
    for reduction in ("none", "mean", "sum"):
        loss = F.huber_loss(x, t, reduction=reduction, delta=1.0)
        assert loss.dtype is st.float32
    np.testing.assert_allclose(host(F.huber_loss(x, t, reduction="none")), [0.03125, 2.5, 0.125])
    assert F.mse_loss(x, t).dtype is st.float64 and F.smooth_l1_loss(x, t).dtype is st.float64


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses_match_torch(nn_oracle, device, dtype, reduction):
    x, t = RNG.standard_normal((4, 5)) * 2, RNG.standard_normal((4, 5))
    x[0, :3] = t[0, :3] + np.array([0.5, -0.5, 0.0])  # |d| exactly beta (0.5) and 0: the branch edges
    w = RNG.uniform(0.5, 2, (4, 5))
    both = (0, 1)
    nn_oracle(lambda F, x, t: F.l1_loss(x, t, reduction=reduction), [x, t], device, dtype, grad=both)
    nn_oracle(lambda F, x, t, w: F.l1_loss(x, t, reduction=reduction, weight=w), [x, t, w], device, dtype, grad=both)
    for beta in (1.0, 0.5, 0.0):
        nn_oracle(
            lambda F, x, t, beta=beta: F.smooth_l1_loss(x, t, reduction=reduction, beta=beta),
            [x, t],
            device,
            dtype,
            grad=both,
        )
    for delta in (1.0, 0.5, 3.0):
        nn_oracle(
            lambda F, x, t, delta=delta: F.huber_loss(x, t, reduction=reduction, delta=delta),
            [x, t],
            device,
            dtype,
            grad=both,
        )
        nn_oracle(
            lambda F, x, t, w, delta=delta: F.huber_loss(x, t, reduction=reduction, delta=delta, weight=w),
            [x, t, w],
            device,
            dtype,
            grad=both,
        )
    # broadcast target (torch warns and broadcasts)
    nn_oracle(lambda F, x, t: F.smooth_l1_loss(x, t, reduction=reduction), [x, t[:1]], device, dtype, grad=both)


def test_regression_losses_against_numpy_and_their_errors():
    d = np.array([-2.0, -0.5, -0.2, 0.0, 0.3, 1.0, 4.0])
    x, t = st.tensor(d), st.zeros(7, dtype=st.float64)
    np.testing.assert_allclose(F.l1_loss(x, t, reduction="none").numpy(), np.abs(d))
    z = np.abs(d)
    np.testing.assert_allclose(
        F.smooth_l1_loss(x, t, reduction="sum", beta=0.5).item(), np.where(z < 0.5, 0.5 * z * z / 0.5, z - 0.25).sum()
    )
    np.testing.assert_allclose(F.huber_loss(x, t, delta=2.0).item(), np.where(z < 2, 0.5 * z * z, 2 * (z - 1)).mean())
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values for beta."):
        F.smooth_l1_loss(x, t, beta=-1)
    for delta in (0, -1):
        with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta."):
            F.huber_loss(x, t, delta=delta)
    with pytest.raises(ValueError, match="Weights and input must have the same size."):
        F.l1_loss(x, t, weight=st.ones(3, dtype=st.float64))
    with pytest.raises(
        ValueError, match=re.escape("Invalid reduction mode: bad. Expected one of 'none', 'mean', 'sum'.")
    ):
        F.huber_loss(x, t, reduction="bad", weight=st.ones(7, dtype=st.float64))
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.l1_loss(x, t, reduction="bad")
    with pytest.raises(NotImplementedError, match="\"smooth_l1_cpu\" not implemented for 'Long'"):
        F.smooth_l1_loss(st.ones(2).long(), st.ones(2).long())
    with pytest.warns(
        UserWarning,
        match=re.escape(
            "Using a target size (strided.Size([2])) that is different to the "
            "input size (strided.Size([3])). This will likely lead to "
            "incorrect results due to broadcasting."
        ),
    ):
        with pytest.raises(
            RuntimeError,
            match=re.escape(
                "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"
            ),
        ):
            F.l1_loss(st.randn(3), st.randn(2))
    with pytest.warns(
        UserWarning, match="size_average and reduce args will be deprecated, please use reduction='sum' instead."
    ):
        np.testing.assert_allclose(F.l1_loss(x, t, size_average=False).item(), z.sum())


# ---------------------------------------------------------------------------------------------- kl_div
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_matches_torch(nn_oracle, device, dtype, reduction, log_target):
    x = np.log(RNG.dirichlet(np.ones(5), 4))
    p = RNG.dirichlet(np.ones(5), 4)
    p[0, 1] = 0.0  # xlogy(0, 0) = 0, and its gradient
    t = np.log(p + 1e-3) if log_target else p
    nn_oracle(
        lambda F, x, t: F.kl_div(x, t, reduction=reduction, log_target=log_target), [x, t], device, dtype, grad=(0, 1)
    )


def test_kl_div_warning_batchmean_and_errors():
    x, t = st.randn(4, 3).log_softmax(1), st.rand(4, 3)
    with pytest.warns(
        UserWarning,
        match=re.escape(
            "reduction: 'mean' divides the total loss by both the batch size "
            "and the support size.'batchmean' divides only by the batch size, "
            "and aligns with the KL div math definition.'mean' will be changed "
            "to behave the same as 'batchmean' in the next major release."
        ),
    ):
        mean = F.kl_div(x, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        total = F.kl_div(x, t, reduction="sum").item()
        assert F.kl_div(x, t, reduction="batchmean").item() == pytest.approx(total / 4)
    assert mean.item() == pytest.approx(total / 12)
    ref = np.where(t.numpy() > 0, t.numpy() * (np.log(t.numpy()) - x.numpy()), 0.0)
    np.testing.assert_allclose(F.kl_div(x, t, reduction="none").numpy(), ref, rtol=1e-5, atol=1e-7)
    with pytest.raises(RuntimeError, match="kl_div: Integral inputs not supported."):
        F.kl_div(st.ones(2).long(), st.ones(2), reduction="sum")
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.kl_div(x, t, reduction="bad")


# ------------------------------------------------------------------------- cosine / pairwise / ranking
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_distances_match_torch(nn_oracle, device, dtype):
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    az = a.copy()
    az[1] = 0.0  # a zero row: its norm is clamped to eps, the gradient flows as torch's
    az[2] = 1e-10
    both = (0, 1)
    nn_oracle(lambda F, x, y: F.cosine_similarity(x, y), [az, b], device, dtype, grad=both)
    # one column of four: a gradient element of b[:1] can cancel to ~1e-6 in float32 (the module's shared RNG
    # decides the values, so it showed only when this test ran alone)
    nn_oracle(lambda F, x, y: F.cosine_similarity(x, y, dim=0, eps=1e-3), [a, b[:1]], device, dtype, grad=both,
              atol=1e-5 if dtype == "float32" else None)
    nn_oracle(lambda F, x, y: F.cosine_similarity(x, y, -1), [a[None], b[:, None]], device, dtype, grad=both)
    for p, keepdim in ((2.0, False), (1.0, True), (3.0, False)):
        nn_oracle(
            lambda F, x, y, p=p, keepdim=keepdim: F.pairwise_distance(x, y, p, keepdim=keepdim),
            [a, b],
            device,
            dtype,
            grad=both,
        )
    nn_oracle(lambda F, x, y: F.pairwise_distance(x, y), [a, b[0]], device, dtype, grad=both)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_ranking_loss_matches_torch(nn_oracle, device, reduction):
    x1, x2 = RNG.standard_normal(6), RNG.standard_normal(6)
    t = np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
    for margin in (0.0, 0.5):
        nn_oracle(
            lambda F, a, b, t, margin=margin: F.margin_ranking_loss(a, b, t, margin, reduction=reduction),
            [x1, x2, t],
            device,
            "float64",
            grad=(0, 1, 2),
        )


def test_margin_ranking_loss_of_integers_is_float_as_torch():
    """torch adds the margin as a double: integer inputs give float32, so the mean exists."""
    x, t = np.arange(6).reshape(2, 3), np.array([[1, -1, 1], [-1, 1, -1]])
    for margin, reduction in ((0, "mean"), (1, "sum"), (0.5, "none")):
        got = F.margin_ranking_loss(st.from_numpy(x), st.from_numpy(x[::-1].copy()), st.from_numpy(t), margin,
                                    reduction=reduction)
        assert got.dtype is st.float32
        want = np.maximum(-t * (x - x[::-1]) + margin, 0).astype(np.float32)
        want = {"mean": want.mean(), "sum": want.sum(), "none": want}[reduction]
        np.testing.assert_allclose(got.numpy(), want)
    ones = st.ones(3)
    for bad, name in (("a", "str"), (None, "NoneType")):
        with pytest.raises(TypeError, match=f"margin_ranking_loss\\(\\): argument 'margin' \\(position 4\\) must be "
                                            f"float, not {name}"):
            F.margin_ranking_loss(ones, ones, ones, bad)
    assert float(F.margin_ranking_loss(ones, 2 * ones, ones, st.tensor(1.5))) == 2.5  # a 1-element tensor margin


def test_distance_errors_are_torchs():
    with pytest.raises(RuntimeError, match="expected common dtype to be floating point, yet common dtype is Long"):
        F.cosine_similarity(st.ones(2, 3).long(), st.ones(2, 3).long())
    with pytest.raises(
        RuntimeError,
        match=re.escape("The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    ):
        F.cosine_similarity(st.randn(3, 4), st.randn(2, 4))
    np.testing.assert_allclose(F.cosine_similarity(st.ones(2, 3).long(), st.ones(2, 3)).numpy(), [1.0, 1.0])
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: "
            "strided.Size([3]), input2: strided.Size([3, 1]), target: strided.Size([3]) "
        ),
    ):
        F.margin_ranking_loss(st.randn(3), st.randn(3, 1), st.randn(3))


# ------------------------------------------------------------------------------ gradcheck (no torch)
def _f64(*shape, low=None, high=None):
    a = RNG.standard_normal(shape) if low is None else RNG.uniform(low, high, shape)
    return st.tensor(a, requires_grad=True)


@pytest.mark.parametrize(
    "name,fn,inputs",
    [
        ("nll_loss", lambda x, w: F.nll_loss(x, st.tensor([0, 2, -100, 1]), w), (_f64(4, 3), None)),
        ("nll_loss_2d", lambda x: F.nll_loss(x, st.tensor([[[0, 2], [1, 1]]]), reduction="sum"), (_f64(1, 3, 2, 2),)),
        (
            "bce",
            lambda x, t: F.binary_cross_entropy(x, t, st.tensor([1.0, 2.0, 0.5], dtype=st.float64)),
            (_f64(2, 3, low=0.1, high=0.9), _f64(2, 3, low=0, high=1)),
        ),
        (
            "bce_logits",
            lambda x, t: F.binary_cross_entropy_with_logits(
                x, t, pos_weight=st.tensor([2.0, 0.5, 1.0], dtype=st.float64)
            ),
            (_f64(2, 3), _f64(2, 3, low=0, high=1)),
        ),
        ("smooth_l1", lambda x, t: F.smooth_l1_loss(x, t, beta=0.7), (_f64(3, 4), _f64(3, 4))),
        ("huber", lambda x, t: F.huber_loss(x, t, delta=0.6, reduction="sum"), (_f64(3, 4), _f64(3, 4))),
        ("kl_div", lambda x, t: F.kl_div(x, t, reduction="batchmean"), (_f64(3, 4), _f64(3, 4, low=0.1, high=1))),
        ("kl_div_log", lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True), (_f64(3, 4), _f64(3, 4))),
        ("cosine", lambda a, b: F.cosine_similarity(a, b), (_f64(3, 4), _f64(3, 4))),
        ("pairwise", lambda a, b: F.pairwise_distance(a, b, 3.0), (_f64(3, 4), _f64(3, 4))),
        (
            "margin",
            lambda a, b: F.margin_ranking_loss(a, b, st.tensor([1.0, -1.0, 1.0], dtype=st.float64), 0.2),
            (_f64(3), _f64(3)),
        ),
    ],
)
def test_losses_gradcheck(name, fn, inputs):
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)


# ------------------------------------------------------------------ operators, nodes, arguments without a formula
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, fn", [
    ("NllLossBackward0", lambda x: F.nll_loss(x, st.tensor([1, 0, 3], device=x.device))),
    ("NllLoss2DBackward0", lambda x: F.nll_loss(x.reshape(1, 4, 3, 1), st.tensor([[[1], [0], [3]]], device=x.device))),
    ("BinaryCrossEntropyBackward0", lambda x: F.binary_cross_entropy(st.sigmoid(x).detach().requires_grad_(),
                                                                     st.ones(3, 4, device=x.device) * 0.3)),
    ("BinaryCrossEntropyWithLogitsBackward0",
     lambda x: F.binary_cross_entropy_with_logits(x, st.ones(3, 4, device=x.device) * 0.3)),
])
def test_losses_are_one_operator_with_torchs_node(device, name, fn):
    """Note [Functional operators]: one node of torch's name, whatever the loss composes below autograd."""
    x = st.randn(3, 4, device=device, requires_grad=True)
    y = fn(x)
    assert type(y.grad_fn).__name__ == name
    y.backward()
    assert not hasattr(st, "nll_loss_forward")  # torch's python_module: nn


@pytest.mark.parametrize("call, fn, arg", [
    (lambda w: F.nll_loss(st.randn(3, 5), st.tensor([1, 2, 3]), weight=w), "nll_loss_forward", "weight"),
    (lambda w: F.nll_loss(st.randn(3, 5, 2), st.zeros(3, 2, dtype=st.int64), weight=w), "nll_loss2d_forward",
     "weight"),
    (lambda w: F.cross_entropy(st.randn(3, 5), st.tensor([1, 2, 3]), weight=w), "nll_loss_forward", "weight"),
    (lambda w: F.cross_entropy(st.randn(3, 5, 2, 2), st.zeros(3, 2, 2, dtype=st.int64), weight=w),
     "nll_loss2d_forward", "weight"),
    (lambda w: F.binary_cross_entropy(st.rand(4, 5), st.rand(4, 5), weight=w), "binary_cross_entropy", "weight"),
    (lambda w: F.binary_cross_entropy_with_logits(st.randn(4, 5), st.rand(4, 5), pos_weight=w),
     "binary_cross_entropy_with_logits", "pos_weight"),
    (lambda w: F.batch_norm(st.randn(2, 5), w, st.ones(5), training=True), "native_batch_norm", "running_mean"),
])
def test_an_argument_without_a_formula_may_not_require_grad_as_torch(call, fn, arg):
    """Note [Arguments without a formula]: torch's check_no_requires_grad, at the call; none under no_grad."""
    w = st.rand(5, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(f"The function '{fn}' is not differentiable with respect to "
                                                     f"argument '{arg}'. This input cannot have requires_grad True.")):
        call(w)
    with st.no_grad():
        call(w)


def test_cross_entropy_weight_gets_a_gradient_with_probability_targets_as_torch():
    """torch composes the probability-target loss, so its weight is differentiable there (and only there)."""
    torch = pytest.importorskip("torch")
    x, t, w = RNG.standard_normal((3, 5, 2)), RNG.random((3, 5, 2)), RNG.random(5)
    for reduction in REDUCTIONS:
        for smoothing in (0.0, 0.25):
            sw, tw = st.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
            F.cross_entropy(st.tensor(x), st.tensor(t), weight=sw, reduction=reduction,
                            label_smoothing=smoothing).sum().backward()
            torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(t), weight=tw, reduction=reduction,
                                              label_smoothing=smoothing).sum().backward()
            np.testing.assert_allclose(sw.grad.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_nextafter_has_torchs_gradient():
    """torch's formulas: ``grad`` where self != other, else 0; none for ``other``."""
    a = st.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = st.tensor([1.0, 3.0, 2.0], requires_grad=True)
    st.nextafter(a, b).sum().backward()
    assert a.grad.tolist() == [0.0, 1.0, 1.0] and b.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_mse_loss_is_torchs(reduction):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x, t, w = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(3))
    w = np.abs(w)
    ours = st.tensor(x, requires_grad=True)
    theirs = torch.from_numpy(x.copy()).requires_grad_()
    out = st.nn.functional.mse_loss(ours, st.tensor(t), reduction=reduction, weight=st.tensor(w))
    want = torch.nn.functional.mse_loss(theirs, torch.from_numpy(t), reduction=reduction, weight=torch.from_numpy(w))
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Weights and input must have the same size."):
        st.nn.functional.mse_loss(st.tensor(x), st.tensor(t), weight=st.ones(4))
    with pytest.raises(TypeError, match="mse_loss\\(\\): argument 'weight' \\(position 6\\) must be Tensor, not list"):
        st.nn.functional.mse_loss(st.tensor(x), st.tensor(t), weight=[1.0])
