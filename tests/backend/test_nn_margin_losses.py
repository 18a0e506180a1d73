"""The margin, embedding and likelihood losses (strided.nn.margin_losses, strided.nn.likelihood_losses) and
their layers on every available backend: values and gradients against torch (the ``nn_oracle`` fixture,
when torch is installed) for every reduction, weight, p, margin, swap, log_input/full and var shape, in
float32 and float64, including the kinks of the native multi-margin kernels; the legacy size_average/reduce
flags; torch's error messages; the layers' reprs and buffers; and checks that need no torch (gradcheck,
NumPy references, the subgradients at the kinks).

Note [Hinge subgradients across torch versions]
torch 2.14 (the oracle) gives ``clamp``/``clamp_min`` the minimum-norm subgradient, 0 at the bound
(pytorch#184572); earlier versions (2.11 on the GPU machine) give 1. The hinges of hinge_embedding,
cosine_embedding and triplet losses go through torch's ``clamp_min``, so the oracle data keeps off
their kinks and ``test_clamp_kinks_have_the_minimum_norm_subgradient`` checks them without torch.
The multi-margin kernels test ``z > 0`` in every version: their kinks are in the oracle data."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.autograd import gradcheck
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
OFF_HOST = [d for d in DEVICES if d not in ("cpu", "meta")]
DTYPES = ["float32", "float64"]
REDUCTIONS = ["none", "mean", "sum"]
RNG = np.random.default_rng(4321)


def host(t):
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


# ------------------------------------------------------------------------------ hinge / cosine / soft
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [1.0, 0.5])
def test_hinge_embedding_loss_matches_torch(nn_oracle, device, dtype, reduction, margin):
    x = RNG.standard_normal((5, 4))
    t = RNG.choice([-1.0, 1.0], (5, 4))
    x[0, :2], t[0, :2] = margin + 0.25, -1.0  # near the hinge's kink (the kink: Note [Hinge subgradients ...])
    t[1, 0] = 0.0  # neither 1 nor -1: both terms
    fn = lambda F, x, t: F.hinge_embedding_loss(x, t, margin=margin, reduction=reduction)  # noqa: E731
    nn_oracle(fn, [x, t], device, dtype)
    nn_oracle(fn, [x[0], t[0]], device, dtype)  # 1-D
    nn_oracle(fn, [x, t[2]], device, dtype)  # broadcast target


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.3, -0.2])
def test_cosine_embedding_loss_matches_torch(nn_oracle, device, dtype, reduction, margin):
    a, b = RNG.standard_normal((6, 4)), RNG.standard_normal((6, 4))
    a[0], b[0] = [1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]  # orthogonal: cos = 0 (target 1, off the kink)
    a[1] = 0.0  # a zero row: EPSILON keeps it finite
    t = np.array([1.0, 1.0, -1.0, 1.0, -1.0, 0.0])
    fn = lambda F, a, b, t: F.cosine_embedding_loss(a, b, t, margin=margin, reduction=reduction)  # noqa: E731
    nn_oracle(fn, [a, b, t], device, dtype, grad=(0, 1))
    nn_oracle(fn, [a[2], b[2], np.array(-1.0)], device, dtype, grad=(0, 1))  # 1-D inputs, 0-d target
    nn_oracle(fn, [a[3], b[3], np.array(1)], device, dtype, grad=(0, 1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_losses_match_torch(nn_oracle, device, dtype, reduction):
    x = RNG.standard_normal((5, 4)) * 3
    t = RNG.choice([-1.0, 1.0], (5, 4))
    nn_oracle(lambda F, x, t: F.soft_margin_loss(x, t, reduction=reduction), [x, t], device, dtype)
    nn_oracle(lambda F, x, t: F.soft_margin_loss(x, t, reduction=reduction), [x, t[0]], device, dtype)
    labels = RNG.integers(0, 2, (5, 4)).astype(np.float64)
    w = RNG.uniform(0.5, 2.0, 4)
    for weight in (None, w):
        nn_oracle(
            lambda F, x, t, w: F.multilabel_soft_margin_loss(x, t, w, reduction=reduction),
            [x, labels, weight],
            device,
            dtype,
            grad=(0, 1),
        )
    nn_oracle(
        lambda F, x, t: F.multilabel_soft_margin_loss(x, t, reduction=reduction), [x[0], labels[0]], device, dtype
    )


# ------------------------------------------------------------------------------------- multi margin
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss_matches_torch(nn_oracle, device, dtype, reduction, p, weighted):
    x = RNG.standard_normal((6, 4))
    t = RNG.integers(0, 4, 6)
    x[0, t[0]] = 1.5  # margin - x[y] + x[d] = 0 exactly (margin 1): torch's gradient there is 0
    x[0, (t[0] + 1) % 4] = 0.5
    w = RNG.uniform(0.5, 2.0, 4) if weighted else None
    for margin in (1.0, 0.3):
        fn = lambda F, x, t, w, m=margin: F.multi_margin_loss(x, t, p, m, w, reduction=reduction)  # noqa: E731
        nn_oracle(fn, [x, t, w], device, dtype)
    fn = lambda F, x, t, w: F.multi_margin_loss(x, t, p=p, weight=w, reduction=reduction)  # noqa: E731
    nn_oracle(fn, [x[1], t[1:2], w], device, dtype)  # 1-D input, (1,) target: (1,) unreduced
    nn_oracle(fn, [x[1], np.array(t[1]), w], device, dtype)  # 0-d target: a 0-d result
    nn_oracle(fn, [x[:1], np.array(t[0]), w], device, dtype)  # (1, C) input, 0-d target
    nn_oracle(fn, [np.array(0.7), np.array(0), None], device, dtype)  # 0-d input: one class


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss_matches_torch(nn_oracle, device, dtype, reduction):
    x = RNG.standard_normal((6, 5))
    t = np.array(
        [
            [0, 2, -1, 1, 4],  # targets after the first -1 do not count
            [3, -1, -1, -1, -1],
            [1, 1, 2, -1, 0],  # a repeated target counts twice
            [-1, 0, 1, 2, 3],  # no target: 0
            [0, 1, 2, 3, 4],  # every class a target: 0
            [4, 0, -1, 2, 2],
        ]
    )
    x[0, 0], x[0, 3] = 1.5, 0.5  # 1 - x[y] + x[d] = 0 exactly: torch's gradient there is 0
    fn = lambda F, x, t: F.multilabel_margin_loss(x, t, reduction=reduction)  # noqa: E731
    nn_oracle(fn, [x, t], device, dtype)
    nn_oracle(fn, [x[0], t[0]], device, dtype)  # 1-D: a 0-d result, also unreduced
    nn_oracle(fn, [x[5:], t[5:]], device, dtype)  # (1, C): (1,) unreduced
    nn_oracle(fn, [np.array(0.3), np.array([0])], device, dtype)


# -------------------------------------------------------------------------------------------- triplet
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_losses_match_torch(nn_oracle, device, dtype, reduction, swap):
    a, pos, neg = (RNG.standard_normal((5, 4)) for _ in range(3))
    abc = (0, 1, 2)
    for margin, p, eps in ((1.0, 2.0, 1e-6), (0.5, 1.0, 1e-3), (2.0, 3.0, 0.0)):
        nn_oracle(
            lambda F, a, b, c, m=margin, p=p, eps=eps: F.triplet_margin_loss(
                a, b, c, m, p, eps, swap, reduction=reduction
            ),
            [a, pos, neg],
            device,
            dtype,
            grad=abc,
        )
    nn_oracle(
        lambda F, a, b, c: F.triplet_margin_loss(a, b, c, swap=swap, reduction=reduction),
        [a[0], pos[0], neg[0]],
        device,
        dtype,
        grad=abc,
    )
    nn_oracle(
        lambda F, a, b, c: F.triplet_margin_with_distance_loss(a, b, c, swap=swap, reduction=reduction),
        [a, pos, neg],
        device,
        dtype,
        grad=abc,
    )
    nn_oracle(
        lambda F, a, b, c: F.triplet_margin_with_distance_loss(
            a,
            b,
            c,
            distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v),
            margin=0.4,
            swap=swap,
            reduction=reduction,
        ),
        [a, pos, neg],
        device,
        dtype,
        grad=abc,
    )


@pytest.mark.parametrize("device", DEVICES)
def test_triplet_margin_loss_swap_tie_has_torchs_gradients(nn_oracle, device):
    # d(a, n) = d(p, n) exactly (eps 0): with swap, minimum splits the gradient in half
    a = np.array([[1.0, 2.0], [0.0, 0.0]])
    pos = np.array([[3.0, 2.0], [0.0, 2.0]])
    neg = np.array([[2.0, 5.0], [0.0, 5.0]])
    for swap in (False, True):
        nn_oracle(
            lambda F, a, b, c, swap=swap: F.triplet_margin_loss(a, b, c, 2.5, eps=0.0, swap=swap, reduction="sum"),
            [a, pos, neg],
            device,
            "float64",
            grad=(0, 1, 2),
        )


# ------------------------------------------------------------------------------------ poisson / gaussian
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll_loss_matches_torch(nn_oracle, device, dtype, reduction, log_input, full):
    x = RNG.uniform(0.1, 3.0, (4, 5)) if not log_input else RNG.standard_normal((4, 5))
    t = RNG.poisson(2.0, (4, 5)).astype(np.float64)
    t[0, :3] = [0.0, 1.0, 1.5]  # the Stirling term is masked where target <= 1
    for eps in (1e-8, 0.5):
        nn_oracle(
            lambda F, x, t, eps=eps: F.poisson_nll_loss(x, t, log_input, full, eps=eps, reduction=reduction),
            [x, t],
            device,
            dtype,
            grad=(0, 1),
        )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("var_shape", [(4, 3), (4,), (4, 1), (1, 3), "float"])
def test_gaussian_nll_loss_matches_torch(nn_oracle, device, dtype, reduction, var_shape):
    x, t = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    if var_shape == "float":
        var, grad = 0.7, (0, 1)
    else:
        var, grad = RNG.uniform(0.1, 2.0, var_shape), (0, 1, 2)
        var.reshape(-1)[0] = 0.0  # clamped to eps with the gradient of the unclamped value, as torch
    for full, eps in ((False, 1e-6), (True, 0.05)):
        nn_oracle(
            lambda F, x, t, v, full=full, eps=eps: F.gaussian_nll_loss(
                x, t, v, full=full, eps=eps, reduction=reduction
            ),
            [x, t, var],
            device,
            dtype,
            grad=grad,
        )
    nn_oracle(lambda F, x, t, v: F.gaussian_nll_loss(x, t, v), [x, t[0], var], device, dtype, grad=grad)


# ------------------------------------------------------------------------------------------ legacy flags
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size_average,reduce", [(False, None), (None, False), (True, True), (False, True)])
def test_legacy_flags_match_torch(nn_oracle, device, size_average, reduce):
    x, y, z = (RNG.standard_normal((4, 3)) for _ in range(3))
    t = RNG.choice([-1.0, 1.0], (4, 3))
    legacy = {"size_average": size_average, "reduce": reduce}
    cases = [
        (lambda F, x, t: F.hinge_embedding_loss(x, t, **legacy), [x, t]),
        (lambda F, a, b, t: F.cosine_embedding_loss(a, b, t, **legacy), [x, y, t[:, 0]]),
        (lambda F, x, t: F.soft_margin_loss(x, t, **legacy), [x, t]),
        (lambda F, x, t: F.multilabel_soft_margin_loss(x, t, **legacy), [x, (t > 0) * 1.0]),
        (lambda F, x, t: F.multi_margin_loss(x, t, **legacy), [x, np.array([0, 2, 1, 1])]),
        (lambda F, x, t: F.multilabel_margin_loss(x, t, **legacy), [x, np.array([[0, -1, 2]] * 4)]),
        (lambda F, a, b, c: F.triplet_margin_loss(a, b, c, **legacy), [x, y, z]),
        (lambda F, x, t: F.poisson_nll_loss(x, t, **legacy), [x, np.abs(y)]),
    ]
    for fn, arrays in cases:
        nn_oracle(fn, arrays, device, "float64")


def test_legacy_flags_warn_as_torch():
    x, t = st.randn(3, 4), st.ones(3, 4)
    msg = "size_average and reduce args will be deprecated, please use reduction='{}' instead."
    with pytest.warns(UserWarning, match=re.escape(msg.format("sum"))) as record:
        got = F.hinge_embedding_loss(x, t, size_average=False)
    assert record[0].filename == __file__  # points at the caller
    assert got.item() == pytest.approx(x.sum().item(), rel=1e-5)
    with pytest.warns(UserWarning, match=re.escape(msg.format("none"))):
        assert F.multilabel_soft_margin_loss(x, t, reduce=False).shape == (3,)
    with pytest.warns(UserWarning, match=re.escape(msg.format("none"))):
        assert F.poisson_nll_loss(x, t, reduce=False).shape == (3, 4)
    with pytest.warns(UserWarning, match=re.escape(msg.format("mean"))):
        assert F.triplet_margin_loss(x, t, t, size_average=True).shape == ()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.multi_margin_loss(x, st.tensor([0, 1, 2]), reduction="sum")


# ------------------------------------------------------------------------------------------------ errors
def test_margin_loss_errors_are_torchs():
    x = st.randn(3, 4)
    for fn in (
        lambda r: F.hinge_embedding_loss(x, st.ones(3, 4), reduction=r),
        lambda r: F.soft_margin_loss(x, st.ones(3, 4), reduction=r),
        lambda r: F.multi_margin_loss(x, st.tensor([0, 1, 2]), reduction=r),
        lambda r: F.triplet_margin_loss(x, x, x, reduction=r),
        lambda r: F.triplet_margin_with_distance_loss(x, x, x, reduction=r),
        lambda r: F.poisson_nll_loss(x, x, reduction=r),
    ):
        with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
            fn("bad")
    with pytest.raises(ValueError, match="bad is not valid"):
        F.multilabel_soft_margin_loss(x, st.ones(3, 4), reduction="bad")
    with pytest.raises(ValueError, match="bad is not valid"):
        F.gaussian_nll_loss(x, x, 1.0, reduction="bad")
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target not supported"):
        F.cosine_embedding_loss(x, x, st.ones(3, 1))
    with pytest.raises(
        RuntimeError,
        match=re.escape("1D target tensor expects 2D input tensors, but found inputs with sizes [3, 4] and [3]."),
    ):
        F.cosine_embedding_loss(x, st.randn(3), st.ones(3))
    with pytest.raises(
        RuntimeError,
        match=re.escape("0D target tensor expects 1D input tensors, but found inputs with sizes [3] and [3, 4]."),
    ):
        F.cosine_embedding_loss(st.randn(3), x, st.tensor(1.0))
    with pytest.raises(
        RuntimeError,
        match=re.escape("The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    ):
        F.cosine_embedding_loss(x, st.randn(2, 4), st.ones(3))
    with pytest.raises(
        RuntimeError,
        match=re.escape("The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1"),
    ):
        F.soft_margin_loss(x, st.ones(3))
    with pytest.raises(RuntimeError, match=re.escape("output with shape [4] doesn't match the broadcast shape [3, 4]")):
        F.soft_margin_loss(st.randn(4), st.ones(3, 4))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        F.soft_margin_loss(st.ones(3).long(), st.ones(3).long())
    for margin in (0, -1.0):
        for fn in (F.triplet_margin_loss, F.triplet_margin_with_distance_loss):
            with pytest.raises(ValueError, match=f"margin must be greater than 0, got {margin}"):
                fn(x, x, x, margin=margin)
    for fn in (F.triplet_margin_loss, F.triplet_margin_with_distance_loss):
        with pytest.raises(
            RuntimeError,
            match=re.escape(
                "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
                "but got: anchor 2D, positive 2D, and negative 1D inputs"
            ),
        ):
            fn(x, x, st.randn(4))


def test_multi_margin_loss_errors_are_torchs():
    x, t = st.randn(3, 4), st.tensor([0, 1, 2])
    with pytest.raises(ValueError, match=re.escape("only p == 1 and p == 2 supported")):
        F.multi_margin_loss(x, t, p=3)
    with pytest.raises(ValueError, match="weight must be one-dimensional"):
        F.multi_margin_loss(x, t, weight=st.ones(2, 2))
    with pytest.raises(RuntimeError, match=re.escape("inconsistent weight size, expected 4 but got [3]")):
        F.multi_margin_loss(x, t, weight=st.ones(3))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        F.multi_margin_loss(x, t, weight=st.ones(4, dtype=st.float64))
    for target in (st.tensor([0, 1]), st.tensor([[0, 1, 2]])):
        with pytest.raises(
            RuntimeError,
            match=re.escape(
                "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples "
                f"(batch size). Expected target size [3], but got {list(target.shape)}. Input has shape [3, 4]."
            ),
        ):
            F.multi_margin_loss(x, target)
    for bad in (st.randn(2, 3, 4), st.randn(3, 0), st.randn(0)):
        with pytest.raises(
            RuntimeError,
            match=re.escape(
                f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {list(bad.shape)}"
            ),
        ):
            F.multi_margin_loss(bad, t)
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Int"):
        F.multi_margin_loss(x, t.int())
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.multi_margin_loss(x, t.float())
    with pytest.raises(NotImplementedError, match="\"multi_margin_loss_cpu_kernel\" not implemented for 'Long'"):
        F.multi_margin_loss(x.long(), t)
    for target in ([0, 1, 4], [0, -1, 2]):
        with pytest.raises(RuntimeError, match="target out of range"):
            F.multi_margin_loss(x, st.tensor(target))


def test_multilabel_margin_loss_errors_are_torchs():
    x = st.randn(3, 4)
    ok = st.tensor([[0, 1, -1, 2]] * 3)
    for target in ([[0, 1, -2, 2]] * 3, [[0, 1, -1, 4]] * 3, [[0, -1, 1, 7]] * 3):
        with pytest.raises(RuntimeError, match="argument #2 'target' is out of range"):
            F.multilabel_margin_loss(x, st.tensor(target))
    for target in (st.tensor([[0, 1, -1]] * 3), st.tensor([0, 1, -1, 2])):
        with pytest.raises(
            RuntimeError,
            match=re.escape(f"inconsistent target size: {list(target.shape)} for input of size: [3, 4]"),
        ):
            F.multilabel_margin_loss(x, target)
    with pytest.raises(
        RuntimeError,
        match=re.escape("Expected non-empty vector or matrix with optional 0-dim batch size, but got: [2, 3, 4]"),
    ):
        F.multilabel_margin_loss(st.randn(2, 3, 4), st.zeros(2, 3, 4, dtype=st.int64))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Int"):
        F.multilabel_margin_loss(x, ok.int())
    with pytest.raises(
        NotImplementedError, match="\"multilabel_margin_loss_forward_out_frame\" not implemented for 'Long'"
    ):
        F.multilabel_margin_loss(x.long(), ok)


@pytest.mark.parametrize("dtype, word", [(st.float16, "Half"), (st.bfloat16, "BFloat16")])
def test_multi_class_margin_losses_refuse_half_precision_on_the_cpu(dtype, word):
    """torch's CPU kernels of these two losses are float / double only (its CUDA kernels take the half types)."""
    x = st.randn(3, 4).to(dtype)
    with pytest.raises(NotImplementedError, match=f"\"multi_margin_loss_cpu_kernel\" not implemented for '{word}'"):
        F.multi_margin_loss(x, st.tensor([0, 1, 2]))
    with pytest.raises(NotImplementedError,
                       match=f"\"multilabel_margin_loss_forward_out_frame\" not implemented for '{word}'"):
        F.multilabel_margin_loss(x, st.tensor([[0, 1, -1, 2]] * 3))
    assert F.multi_margin_loss(x.float(), st.tensor([0, 1, 2])).dtype is st.float32


def test_gaussian_nll_loss_errors_are_torchs():
    x = st.randn(3, 4)
    for var in (-1.0, st.full((3, 4), -0.5), st.tensor([1.0, -1e-9, 1.0])):
        with pytest.raises(ValueError, match="var has negative entry/entries"):
            F.gaussian_nll_loss(x, x, var)
    for shape in ((3, 2), (1, 1), (4,), (2, 3, 4)):
        with pytest.raises(ValueError, match="var is of incorrect size"):
            F.gaussian_nll_loss(x, x, st.ones(shape))
    with pytest.raises(TypeError, match=re.escape("any() received an invalid combination of arguments - got (bool)")):
        F.gaussian_nll_loss(x, x, 1)  # an int var, as torch: only a float is broadcast


@pytest.mark.parametrize("device", OFF_HOST)
def test_out_of_range_targets_off_the_host_are_nan_without_sync(device):
    x = st.randn(3, 4, device=device)
    got = host(F.multi_margin_loss(x, st.tensor([1, 9, 2], device=device), reduction="none"))
    assert np.isnan(got[1]) and np.isfinite(got[[0, 2]]).all()
    t = st.tensor([[0, -1, 0, 0], [1, 2, -1, 5], [-3, 0, 0, 0]], device=device)
    got = host(F.multilabel_margin_loss(x, t, reduction="none"))
    assert np.isfinite(got[0]) and np.isnan(got[1:]).all()


# ------------------------------------------------------------------------------------------------ modules
def test_modules_reprs_buffers_and_constructor_errors():
    assert repr(nn.HingeEmbeddingLoss()) == "HingeEmbeddingLoss()"
    assert repr(nn.GaussianNLLLoss(full=True)) == "GaussianNLLLoss()"
    assert repr(nn.TripletMarginWithDistanceLoss()) == (
        "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)"
    )
    assert repr(nn.TripletMarginWithDistanceLoss(distance_function=lambda a, b: (a - b).abs().sum(-1))) == (
        "TripletMarginWithDistanceLoss()"
    )
    w = st.tensor([1.0, 2.0, 0.5])
    for cls in (nn.MultiMarginLoss, nn.MultiLabelSoftMarginLoss):
        layer = cls(weight=w)
        assert list(layer.state_dict()) == ["weight"] and list(layer.parameters()) == []
        assert layer.to("meta").weight.device.type == "meta"
        assert cls().weight is None and list(cls().state_dict()) == []
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead"):
        nn.MultiMarginLoss(weight=st.ones(2, 2))
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than 0, got 0 instead"):
        nn.TripletMarginLoss(margin=0)
    with pytest.raises(
        ValueError, match="TripletMarginWithDistanceLoss: expected margin to be greater than 0, got -1 instead"
    ):
        nn.TripletMarginWithDistanceLoss(margin=-1)
    with pytest.raises(TypeError):
        nn.GaussianNLLLoss(True)  # keyword-only, as torch
    with pytest.warns(UserWarning, match="please use reduction='none' instead"):
        assert nn.PoissonNLLLoss(reduce=False).reduction == "none"
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        assert nn.SoftMarginLoss(size_average=False).reduction == "sum"
    layer = nn.CosineEmbeddingLoss(reduction="bad")  # as torch: the name is checked when the loss is computed
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        layer(st.randn(2, 3), st.randn(2, 3), st.ones(2))


@pytest.mark.parametrize("device", DEVICES)
def test_modules_match_torch_modules(device):
    torch = pytest.importorskip("torch")
    x, y, z = (RNG.standard_normal((4, 3)) for _ in range(3))
    t = RNG.choice([-1.0, 1.0], (4, 3))
    w = RNG.uniform(0.5, 2.0, 3)
    cases = [
        ("HingeEmbeddingLoss", {"margin": 0.5}, [x, t]),
        ("CosineEmbeddingLoss", {"margin": 0.1, "reduction": "sum"}, [x, y, t[:, 0]]),
        ("SoftMarginLoss", {"reduction": "none"}, [x, t]),
        ("MultiLabelSoftMarginLoss", {"weight": w}, [x, (t > 0) * 1.0]),
        ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": w}, [x, np.array([0, 2, 1, 1])]),
        ("MultiLabelMarginLoss", {"reduction": "none"}, [x, np.array([[0, -1, 2], [2, 1, -1]] * 2)]),
        ("TripletMarginLoss", {"margin": 0.5, "p": 1.0, "swap": True}, [x, y, z]),
        ("TripletMarginWithDistanceLoss", {"swap": True}, [x, y, z]),
        ("PoissonNLLLoss", {"log_input": False, "full": True}, [np.abs(x) + 0.1, np.abs(y) * 3]),
        ("GaussianNLLLoss", {"full": True, "eps": 0.01}, [x, y, np.abs(z)]),
    ]
    for name, kwargs, arrays in cases:
        s_layer = getattr(nn, name)(**{k: st.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()})
        t_layer = getattr(torch.nn, name)(
            **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        )
        assert repr(s_layer) == repr(t_layer)
        s_layer = s_layer.to(device)
        s_in = [st.tensor(a, device=device) for a in arrays]
        s_in[0].requires_grad_()
        t_in = [torch.tensor(a) for a in arrays]
        t_in[0].requires_grad_()
        s_out, t_out = s_layer(*s_in), t_layer(*t_in)
        assert tuple(s_out.shape) == tuple(t_out.shape), name
        s_out.sum().backward()
        t_out.sum().backward()
        if device != "meta":
            np.testing.assert_allclose(host(s_out), t_out.detach().numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
            np.testing.assert_allclose(host(s_in[0].grad), t_in[0].grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)


# ------------------------------------------------------------------------------------ no torch needed
def _multilabel_margin_reference(x, t):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        ys = []
        for y in t[i]:
            if y < 0:
                break
            ys.append(y)
        for y in ys:
            for d in range(c):
                if d not in ys:
                    out[i] += max(0.0, 1.0 - x[i, y] + x[i, d])
    return out / c


def _multi_margin_reference(x, t, p, margin, w):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        y = t[i]
        for d in range(c):
            if d != y:
                out[i] += w[y] * max(0.0, margin - x[i, y] + x[i, d]) ** p
    return out / c


def test_losses_against_numpy_references():
    x = RNG.standard_normal((5, 6))
    t = np.array(
        [[0, 3, -1, 2, 2, 5], [5, 4, 3, 2, 1, 0], [-1, 1, 1, 1, 1, 1], [2, 2, -1, -1, 0, 1], [1, -1, 0, 0, 0, 0]]
    )
    got = F.multilabel_margin_loss(st.tensor(x), st.tensor(t), reduction="none").numpy()
    np.testing.assert_allclose(got, _multilabel_margin_reference(x, t), rtol=1e-12)
    y, w = np.array([0, 5, 2, 3, 1]), RNG.uniform(0.5, 2.0, 6)
    for p, margin in ((1, 1.0), (2, 0.4)):
        got = F.multi_margin_loss(st.tensor(x), st.tensor(y), p, margin, st.tensor(w), reduction="none").numpy()
        np.testing.assert_allclose(got, _multi_margin_reference(x, y, p, margin, w), rtol=1e-12)
    s = np.sign(RNG.standard_normal((5, 6)))
    got = F.hinge_embedding_loss(st.tensor(x), st.tensor(s), margin=0.5, reduction="sum").item()
    assert got == pytest.approx(np.where(s > 0, x, np.maximum(0.0, 0.5 - x)).sum(), rel=1e-12)
    got = F.soft_margin_loss(st.tensor(x), st.tensor(s)).item()
    assert got == pytest.approx(np.log1p(np.exp(-s * x)).mean(), rel=1e-12)
    rate, k = np.abs(x) + 0.1, RNG.poisson(3.0, (5, 6)).astype(np.float64)
    stirling = np.where(k > 1, k * np.log(np.maximum(k, 1)) - k + 0.5 * np.log(2 * np.pi * np.maximum(k, 1)), 0.0)
    got = F.poisson_nll_loss(st.tensor(rate), st.tensor(k), log_input=False, full=True, reduction="none").numpy()
    np.testing.assert_allclose(got, rate - k * np.log(rate + 1e-8) + stirling, rtol=1e-12)
    var = np.abs(x[:, :1]) + 0.2
    got = F.gaussian_nll_loss(st.tensor(x), st.tensor(k), st.tensor(var), full=True, reduction="sum").item()
    ref = 0.5 * (np.log(var) + (x - k) ** 2 / var) + 0.5 * math.log(2 * math.pi)
    assert got == pytest.approx(ref.sum(), rel=1e-12)
    a, b = x[:, :3], x[:, 3:]
    cos = (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))
    got = F.cosine_embedding_loss(st.tensor(a), st.tensor(b), st.tensor(s[:, 0]), margin=0.1, reduction="none").numpy()
    np.testing.assert_allclose(got, np.where(s[:, 0] > 0, 1 - cos, np.maximum(0.0, cos - 0.1)), rtol=1e-9)


def test_clamp_kinks_have_the_minimum_norm_subgradient():
    # Note [Hinge subgradients across torch versions]: torch 2.14's 0 at the kink, checked without torch
    h = st.tensor([1.0, 0.5, 2.0], dtype=st.float64, requires_grad=True)
    F.hinge_embedding_loss(h, st.tensor([-1.0, -1.0, -1.0]), reduction="sum").backward()
    np.testing.assert_allclose(h.grad.numpy(), [0.0, -1.0, 0.0])
    a = st.tensor([[1.0, 0.0], [1.0, 0.0]], dtype=st.float64, requires_grad=True)
    b = st.tensor([[0.0, 2.0], [1.0, 1.0]], dtype=st.float64, requires_grad=True)
    F.cosine_embedding_loss(a, b, st.tensor([-1.0, -1.0]), margin=0.0, reduction="sum").backward()
    assert not a.grad[0].numpy().any() and not b.grad[0].numpy().any()  # cos = 0 = margin
    assert a.grad[1].numpy().any() and b.grad[1].numpy().any()
    anchor = st.tensor([[0.0, 0.0], [0.0, 0.0]], dtype=st.float64, requires_grad=True)
    pos = st.tensor([[1.0, 0.0], [1.0, 0.0]], dtype=st.float64, requires_grad=True)
    neg = st.tensor([[2.0, 0.0], [0.0, 1.5]], dtype=st.float64, requires_grad=True)  # 1 + 1 - 2 = 0; 1 + 1 - 1.5
    for loss in (
        F.triplet_margin_loss(anchor, pos, neg, margin=1.0, eps=0.0, reduction="sum"),
        F.triplet_margin_with_distance_loss(
            anchor, pos, neg, distance_function=lambda u, v: ((u - v) ** 2).sum(-1).sqrt(), reduction="sum"
        ),
    ):
        anchor.grad = pos.grad = neg.grad = None
        loss.backward()
        np.testing.assert_allclose(anchor.grad.numpy(), [[0.0, 0.0], [-1.0, 1.0]])
        np.testing.assert_allclose(pos.grad.numpy(), [[0.0, 0.0], [1.0, 0.0]])
        np.testing.assert_allclose(neg.grad.numpy(), [[0.0, 0.0], [0.0, -1.0]])


def test_multi_margin_kinks_pass_no_gradient_without_torch():
    x = st.tensor([[1.5, 1.0, 0.5]], dtype=st.float64, requires_grad=True)
    F.multi_margin_loss(x, st.tensor([0]), reduction="sum").backward()  # z = 1 - 1.5 + 0.5 = 0 for d = 2
    np.testing.assert_allclose(x.grad.numpy(), [[-1 / 3, 1 / 3, 0.0]])
    x.grad = None
    F.multilabel_margin_loss(x, st.tensor([[0, -1, 1]]), reduction="sum").backward()
    np.testing.assert_allclose(x.grad.numpy(), [[-1 / 3, 1 / 3, 0.0]])


# ------------------------------------------------------------------------------ gradcheck (no torch)
def _f64(*shape, low=None, high=None):
    a = RNG.standard_normal(shape) if low is None else RNG.uniform(low, high, shape)
    return st.tensor(a, requires_grad=True)


@pytest.mark.parametrize(
    "name,fn,inputs",
    [
        (
            "cosine_embedding",
            lambda a, b: F.cosine_embedding_loss(a, b, st.tensor([1, -1, 1]), 0.1),
            (_f64(3, 4), _f64(3, 4)),
        ),
        ("soft_margin", lambda x: F.soft_margin_loss(x, st.tensor([1.0, -1.0, 1.0], dtype=st.float64)), (_f64(2, 3),)),
        (
            "multilabel_soft_margin",
            lambda x, t: F.multilabel_soft_margin_loss(x, t, st.tensor([1.0, 2.0, 0.5], dtype=st.float64)),
            (_f64(2, 3), _f64(2, 3, low=0, high=1)),
        ),
        ("multi_margin_p2", lambda x: F.multi_margin_loss(x, st.tensor([0, 2, 1]), p=2, margin=0.8), (_f64(3, 4),)),
        (
            "triplet_swap",
            lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=3.0, swap=True),
            (_f64(3, 4), _f64(3, 4), _f64(3, 4)),
        ),
        (
            "poisson_full",
            lambda x, t: F.poisson_nll_loss(x, t, log_input=False, full=True, reduction="sum"),
            (_f64(2, 3, low=0.5, high=2.0), _f64(2, 3, low=1.5, high=4.0)),
        ),
        (
            "gaussian",
            lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True),
            (_f64(3, 2), _f64(3, 2), _f64(3, 1, low=0.5, high=2.0)),
        ),
    ],
)
def test_losses_gradcheck(name, fn, inputs):
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)
