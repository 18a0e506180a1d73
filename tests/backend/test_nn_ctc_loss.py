"""F.ctc_loss and nn.CTCLoss (strided.nn.ctc_loss) on every available backend.

Without torch: values against a per-sample NumPy forward algorithm written here (float64) and, on tiny
cases, against the sum over every frame-level path; torch's explicit gradient ``exp(lp) - occupancy``
against central differences of that reference; a gradient check through ``log_softmax`` (where torch's
``exp(lp)`` term cancels); the infinite-loss rules (``zero_infinity``, ``nan`` gradients otherwise);
torch's error messages (written out here, and compared with torch's when it is installed). With torch:
values and gradients through the ``nn_oracle`` fixture for padded and concatenated targets, repeated
labels, a blank other than 0, varying lengths, unbatched input, every reduction and ``zero_infinity``.
On meta only shapes and dtypes are checked.
"""

from __future__ import annotations

import itertools
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


def host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def ctc_reference(lp: np.ndarray, targets, il, tl, blank: int = 0) -> np.ndarray:
    """Per-sample negative log-likelihoods by the textbook forward algorithm (float64, one sample at a time)."""
    lp = np.asarray(lp, dtype=np.float64)
    out = []
    for b in range(lp.shape[1]):
        label = [int(v) for v in targets[b][: tl[b]]]
        ext = [blank]
        for v in label:
            ext += [v, blank]
        if il[b] == 0:
            out.append(0.0 if not label else np.inf)
            continue
        alpha = np.full(len(ext), -np.inf)
        alpha[0] = lp[0, b, blank]
        if label:
            alpha[1] = lp[0, b, ext[1]]
        for t in range(1, il[b]):
            new = np.full(len(ext), -np.inf)
            for s, k in enumerate(ext):
                acc = alpha[s]
                if s >= 1:
                    acc = np.logaddexp(acc, alpha[s - 1])
                if s >= 2 and ext[s - 2] != k:
                    acc = np.logaddexp(acc, alpha[s - 2])
                new[s] = acc + lp[t, b, k]
            alpha = new
        out.append(-(np.logaddexp(alpha[-1], alpha[-2]) if label else alpha[0]))
    return np.array(out)


def reduce(loss: np.ndarray, tl, reduction: str):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return (loss / np.maximum(np.asarray(tl, dtype=np.float64), 1)).mean()


def make_case(seed, T, N, C, S, blank=0, il=None, tl=None, repeats=True):
    """Normalized log-probs (T, N, C), padded targets (N, S) with no blank, and the lengths (lists)."""
    rng = np.random.default_rng(seed)
    lp = log_softmax(rng.standard_normal((T, N, C)) * 2)
    labels = [c for c in range(C) if c != blank]
    targets = rng.choice(labels, (N, S))
    if repeats and S >= 3:
        targets[0, 1] = targets[0, 2]  # a repeated label: the skip over the blank between them is not allowed
    il = list(il) if il is not None else [T] * N
    tl = list(tl) if tl is not None else [S] * N
    return lp, targets, il, tl


def concatenate(targets, tl) -> np.ndarray:
    return np.concatenate([targets[b, : tl[b]] for b in range(len(tl))]).astype(np.int64)


def run(lp, targets, il, tl, device, dtype, **kw):
    x = st.tensor(lp.astype(dtype), device=device, requires_grad=True)
    return x, F.ctc_loss(x, st.tensor(targets, device=device), il, tl, **kw)


# ------------------------------------------------------------------------------ values without torch
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_matches_numpy_reference(device, dtype, layout, reduction):
    lp, targets, il, tl = make_case(1, T=9, N=5, C=6, S=4, blank=2, il=[9, 7, 8, 3, 1], tl=[4, 3, 0, 1, 0])
    tg = targets if layout == "padded" else concatenate(targets, tl)
    x, out = run(lp, tg, il, tl, device, dtype, blank=2, reduction=reduction)
    assert out.dtype.name == dtype and out.device.type == device
    assert tuple(out.shape) == ((5,) if reduction == "none" else ())
    out.sum().backward()
    assert tuple(x.grad.shape) == lp.shape and x.grad.dtype.name == dtype
    if device == "meta":
        return
    expected = reduce(ctc_reference(lp.astype(dtype), targets, il, tl, blank=2), tl, reduction)
    tol = 1e-10 if dtype == "float64" else 2e-5
    np.testing.assert_allclose(host(out), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
def test_large_case_matches_numpy_reference(device):
    """T=200, N=8, C=30, S=40 with varying lengths: the size the recursion is meant for."""
    rng = np.random.default_rng(7)
    il, tl = rng.integers(120, 201, 8).tolist(), rng.integers(0, 41, 8).tolist()
    lp, targets, il, tl = make_case(2, T=200, N=8, C=30, S=40, il=il, tl=tl)
    x, out = run(lp, targets, st.tensor(il), st.tensor(tl), device, "float64", reduction="none")
    out.sum().backward()
    assert tuple(out.shape) == (8,) and tuple(x.grad.shape) == (200, 8, 30)
    if device == "meta":
        return
    np.testing.assert_allclose(host(out), ctc_reference(lp, targets, il, tl), rtol=1e-10)
    g = host(x.grad)
    # the occupancies of each frame sum to 1, as exp(lp) does: torch's gradient sums to 0 over the classes
    np.testing.assert_allclose(g.sum(-1), 0.0, atol=1e-10)
    assert all(not g[il[b]:, b].any() for b in range(8))


@pytest.mark.parametrize("device", DEVICES)
def test_matches_the_sum_over_all_paths(device):
    """The likelihood is the total probability of the frame-level paths that collapse to the target."""
    T, C = 4, 3
    rng = np.random.default_rng(3)
    lp = log_softmax(rng.standard_normal((T, 1, C)))
    for target in ([], [1], [1, 1], [1, 2], [2, 1, 2], [1, 1, 2]):
        total = 0.0
        for path in itertools.product(range(C), repeat=T):
            collapsed = [k for i, k in enumerate(path) if k != 0 and (i == 0 or path[i - 1] != k)]
            if collapsed == target:
                total += np.exp(sum(lp[t, 0, k] for t, k in enumerate(path)))
        tg = np.array([target + [1] * (3 - len(target))])
        _, out = run(lp, tg, [T], [len(target)], device, "float64", reduction="none")
        if device != "meta":
            np.testing.assert_allclose(host(out), [-np.log(total)], rtol=1e-12, err_msg=str(target))


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
def test_gradient_is_torchs_explicit_formula(device):
    """torch's gradient w.r.t. log_probs is ``(exp(lp) - occupancy) * upstream``, where ``-occupancy`` is the
    derivative of the loss in lp (central differences of the NumPy reference) and ``exp(lp)`` the term that
    cancels through a log_softmax."""
    blank = 1
    lp, targets, il, tl = make_case(4, T=6, N=3, C=4, S=3, blank=blank, il=[6, 5, 4], tl=[3, 2, 0])
    x, out = run(lp, targets, il, tl, device, "float64", blank=blank, reduction="none")
    up = np.array([0.5, -1.5, 2.0])
    out.backward(st.tensor(up, device=device))
    numeric = np.zeros_like(lp)
    eps = 1e-6
    for idx in np.ndindex(*lp.shape):
        hi, lo = lp.copy(), lp.copy()
        hi[idx] += eps
        lo[idx] -= eps
        diff = (ctc_reference(hi, targets, il, tl, blank) - ctc_reference(lo, targets, il, tl, blank)) / (2 * eps)
        numeric[idx] = diff[idx[1]]
    frames = np.arange(6)[:, None, None] < np.array(il)[None, :, None]
    expected = np.where(frames, (np.exp(lp) + numeric) * up[None, :, None], 0.0)
    np.testing.assert_allclose(host(x.grad), expected, atol=1e-8)


def test_gradcheck_through_log_softmax():
    rng = np.random.default_rng(5)
    logits = st.tensor(rng.standard_normal((5, 2, 4)), dtype=st.float64, requires_grad=True)
    targets = st.tensor([[1, 1, 3], [2, 3, 0]])

    def fn(z):
        return F.ctc_loss(F.log_softmax(z, 2), targets, [5, 4], [3, 2], reduction="none")

    assert gradcheck(fn, (logits,), eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_unbatched_input(device, reduction):
    lp, targets, il, tl = make_case(6, T=7, N=1, C=5, S=3)
    x, out = run(lp[:, 0], targets[0], st.tensor(il[0]), st.tensor(tl[0]), device, "float64", reduction=reduction)
    assert tuple(out.shape) == ()
    out.backward()
    assert tuple(x.grad.shape) == (7, 5)
    if device == "meta":
        return
    expected = reduce(ctc_reference(lp, targets, il, tl), tl, reduction)
    np.testing.assert_allclose(host(out), np.reshape(expected, -1)[0], rtol=1e-12)
    y, batched = run(lp, targets, il, tl, device, "float64", reduction="sum")
    batched.backward()
    np.testing.assert_allclose(host(x.grad) * (3 if reduction == "mean" else 1), host(y.grad)[:, 0], rtol=1e-12)


# ------------------------------------------------------------------------------ infinite and empty cases
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_impossible_alignment(device, reduction):
    """Sample 0 cannot be aligned (3 repeated labels need 5 frames, it has 4): torch's inf loss with nan
    gradients on its frames before the input length, or 0 and a zero gradient with zero_infinity."""
    lp, _, _, _ = make_case(8, T=5, N=2, C=4, S=3)
    targets = np.array([[1, 1, 1], [1, 2, 3]])
    il, tl = [4, 3], [3, 3]
    finite = ctc_reference(lp, targets, il, tl)[1]
    for zero_infinity in (False, True):
        x, out = run(lp, targets, il, tl, device, "float64", reduction=reduction, zero_infinity=zero_infinity)
        out.sum().backward()
        if device == "meta":
            continue
        g = host(x.grad)
        loss = np.array([0.0 if zero_infinity else np.inf, finite])
        np.testing.assert_allclose(host(out), reduce(loss, tl, reduction), rtol=1e-12)
        assert not g[:, 0].any() if zero_infinity else np.isnan(g[:4, 0]).all() and not g[4:, 0].any()
        assert np.isfinite(g[:, 1]).all() and not g[3:, 1].any() and g[:3, 1].any()


@pytest.mark.parametrize("device", DEVICES)
def test_empty_targets_and_inputs(device):
    """Target length 0: the all-blank path; input length 0: certain for an empty target, impossible else
    (torch gives those samples a zero gradient, also the impossible one)."""
    lp, targets, _, _ = make_case(9, T=4, N=4, C=3, S=2)
    il, tl = [4, 0, 0, 3], [0, 0, 2, 2]
    x, out = run(lp, targets, il, tl, device, "float64", reduction="none")
    out.sum().backward()
    if device == "meta":
        return
    expected = [-lp[:4, 0, 0].sum(), 0.0, np.inf, ctc_reference(lp, targets, il, tl)[3]]
    np.testing.assert_allclose(host(out), expected, rtol=1e-12)
    g = host(x.grad)
    assert not g[:, 1:3].any() and not np.isnan(g).any()
    np.testing.assert_allclose(g[:, 0], np.exp(lp[:, 0]) - np.eye(3)[[0, 0, 0, 0]], atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_minus_infinity_log_probs_give_nan_gradients(device):
    """A class masked out with -inf: torch's gradient there is nan (``-inf - -inf``) on the used frames."""
    lp, targets, il, tl = make_case(10, T=5, N=2, C=4, S=2)
    targets[:] = [[1, 2], [2, 1]]
    x = lp.copy()
    x[:, :, 3] = -np.inf
    xt, out = run(x, targets, [5, 4], tl, device, "float64", reduction="none")
    out.sum().backward()
    if device == "meta":
        return
    g = host(xt.grad)
    np.testing.assert_allclose(host(out), ctc_reference(x, targets, [5, 4], tl), rtol=1e-12)
    assert np.isnan(g[:, 0, 3]).all() and np.isnan(g[:4, 1, 3]).all() and g[4, 1, 3] == 0
    assert np.isfinite(g[..., :3]).all()


# ------------------------------------------------------------------------------ argument forms
@pytest.mark.parametrize("device", DEVICES)
def test_target_and_length_forms_agree(device):
    lp, targets, il, tl = make_case(11, T=6, N=3, C=5, S=3, il=[6, 4, 5], tl=[3, 1, 2])
    _, base = run(lp, targets, il, tl, device, "float64", reduction="none")
    forms = [
        (targets.astype(np.int32), tuple(il), tuple(tl)),
        (targets.astype(np.float64), st.tensor(il, dtype=st.int32), st.tensor(tl, dtype=st.int32)),
        (concatenate(targets, tl), st.tensor([il], device=device), st.tensor([tl], device=device)),
        (targets, [st.tensor(v) for v in il], [np.int64(v) for v in tl]),
    ]
    for tg, a, b in forms:
        _, out = run(lp, tg, a, b, device, "float64", reduction="none")
        assert tuple(out.shape) == (3,) and out.dtype.name == "float64"
        if device != "meta":
            np.testing.assert_array_equal(host(out), host(base))


@pytest.mark.parametrize("device", OFF_HOST)
def test_targets_and_lengths_on_the_host_with_device_log_probs(device):
    lp, targets, il, tl = make_case(12, T=6, N=3, C=5, S=3, il=[6, 4, 5], tl=[3, 1, 2])
    x = st.tensor(lp, device=device, requires_grad=True)
    out = F.ctc_loss(x, st.tensor(targets), st.tensor(il), st.tensor(tl), reduction="none")
    out.sum().backward()
    y, ref = run(lp, targets, il, tl, "cpu", "float64", reduction="none")
    ref.sum().backward()
    assert out.device.type == device
    np.testing.assert_allclose(host(out), host(ref), rtol=1e-12)
    np.testing.assert_allclose(host(x.grad), host(y.grad), rtol=1e-10, atol=1e-13)


def test_out_of_range_targets_raise_on_cpu():
    lp, _, _, _ = make_case(13, T=5, N=2, C=4, S=2)
    with pytest.raises(RuntimeError, match=re.escape("Target 7 is out of bounds.")):
        run(lp, np.array([[1, 7], [2, 1]]), [5, 5], [2, 2], "cpu", "float64")
    # past the target length a value is never read (padding may be anything)
    _, out = run(lp, np.array([[1, 7], [2, -1]]), [5, 5], [1, 1], "cpu", "float64", reduction="none")
    np.testing.assert_allclose(host(out), ctc_reference(lp, [[1], [2]], [5, 5], [1, 1]), rtol=1e-12)


@pytest.mark.parametrize("device", OFF_HOST)
def test_out_of_range_targets_give_nan_off_host(device):
    lp, _, _, _ = make_case(13, T=5, N=2, C=4, S=2)
    _, out = run(lp, np.array([[1, 7], [2, 1]]), [5, 5], [2, 2], device, "float64", reduction="none")
    got = host(out)
    assert np.isnan(got[0])
    np.testing.assert_allclose(got[1], ctc_reference(lp[:, 1:2], [[2, 1]], [5], [2])[0], rtol=1e-12)


# ------------------------------------------------------------------------------ errors
_LP = np.log(np.full((6, 2, 5), 0.2))
_TG = np.array([[1, 2, 2], [3, 1, 0]])
_CK = " (while checking arguments for ctc_loss_allocate_outputs)"
ERRORS = [
    ("target length > input length is no error: an inf loss", None, None,
     lambda L: (L.tensor(_LP), L.tensor(_TG), [2, 5], [3, 2]), {}),
    ("input length > T", RuntimeError, "Expected input_lengths to have value at most 6, but got value 7" + _CK,
     lambda L: (L.tensor(_LP), L.tensor(_TG), [7, 5], [3, 2]), {}),
    ("negative input length", RuntimeError, "Expected input_lengths to have value at least 0, but got value -1" + _CK,
     lambda L: (L.tensor(_LP), L.tensor(_TG), [-1, 5], [3, 2]), {}),
    ("negative target length", RuntimeError,
     "Expected target_lengths to have value at least 0, but got value -1" + _CK,
     lambda L: (L.tensor(_LP), L.tensor(_TG), [6, 5], [-1, 2]), {}),
    ("target length > S", RuntimeError, "Expected tensor to have size at least 4 at dimension 1, but got size 3 for "
     "argument #2 'targets'" + _CK, lambda L: (L.tensor(_LP), L.tensor(_TG), [6, 5], [4, 2]), {}),
    ("concatenated size", RuntimeError, "Expected tensor to have size 5 at dimension 0, but got size 4 for argument "
     "#2 'targets'" + _CK, lambda L: (L.tensor(_LP), L.tensor([1, 2, 2, 3]), [6, 5], [3, 2]), {}),
    ("targets batch", RuntimeError, "Expected tensor to have size 2 at dimension 0, but got size 1 for argument "
     "#2 'targets'" + _CK, lambda L: (L.tensor(_LP), L.tensor(_TG[:1]), [6, 5], [3, 2]), {}),
    ("targets 3-d", RuntimeError, "Expected 1 to 2 dimensions, but got 3-dimensional tensor for argument #2 "
     "'targets'" + _CK, lambda L: (L.tensor(_LP), L.tensor(_TG[None]), [6, 5], [3, 2]), {}),
    ("log_probs 4-d", RuntimeError, "Expected 3-dimensional tensor, but got 5-dimensional tensor for argument #1 "
     "'log_probs'" + _CK, lambda L: (L.tensor(_LP[None]), L.tensor(_TG), [6, 5], [3, 2]), {}),
    ("log_probs 1-d", RuntimeError, "Expected 3-dimensional tensor, but got 2-dimensional tensor for argument #1 "
     "'log_probs'" + _CK, lambda L: (L.tensor(_LP[:, 0, 0]), L.tensor(_TG), [6], [3]), {}),
    ("input_lengths size", RuntimeError, "input_lengths must be of size batch_size",
     lambda L: (L.tensor(_LP), L.tensor(_TG), [6, 5, 4], [3, 2]), {}),
    ("target_lengths size", RuntimeError, "target_lengths must be of size batch_size",
     lambda L: (L.tensor(_LP), L.tensor(_TG), [6, 5], [3]), {}),
    ("blank", RuntimeError, "blank must be in label range",
     lambda L: (L.tensor(_LP), L.tensor(_TG), [6, 5], [3, 2]), {"blank": 5}),
    ("integer log_probs", NotImplementedError, "\"ctc_loss_cpu\" not implemented for 'Long'",
     lambda L: (L.tensor(_LP).long(), L.tensor(_TG), [6, 5], [3, 2]), {}),
    ("half log_probs", NotImplementedError, "\"ctc_loss_cpu\" not implemented for 'Half'",
     lambda L: (L.tensor(_LP).half(), L.tensor(_TG), [6, 5], [3, 2]), {}),
    ("empty", RuntimeError, "log_probs tensor must not be empty",
     lambda L: (L.tensor(_LP[:0]), L.tensor(_TG), [0, 0], [0, 0]), {}),
    ("float lengths", RuntimeError, "input_lengths must be integral",
     lambda L: (L.tensor(_LP), L.tensor(_TG), L.tensor([6.0, 5.0]), L.tensor([3, 2])), {}),
    ("bool lengths", RuntimeError, "target_lengths must be integral",
     lambda L: (L.tensor(_LP), L.tensor(_TG), L.tensor([6, 5]), L.tensor([True, True])), {}),
    ("mixed lengths", TypeError, "ctc_loss() received an invalid combination of arguments - got (Tensor, Tensor, "
     "Tensor, list, int, int, bool), but expected one of:",
     lambda L: (L.tensor(_LP), L.tensor(_TG), L.tensor([6, 5]), [3, 2]), {}),
    ("float in list", TypeError, "ctc_loss() received an invalid combination of arguments - got (Tensor, Tensor, "
     "list, list, int, int, bool), but expected one of:",
     lambda L: (L.tensor(_LP), L.tensor(_TG), [6.0, 5], [3, 2]), {}),
    ("reduction", ValueError, "foo is not a valid value for reduction",
     lambda L: (L.tensor(_LP), L.tensor(_TG), [6, 5], [3, 2]), {"reduction": "foo"}),
]


@pytest.mark.parametrize("name,exc,message,args,kwargs", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_in_torchs_words(name, exc, message, args, kwargs):
    def check(lib, functional):
        if exc is None:
            out = functional.ctc_loss(*args(lib), **kwargs)
            assert float(out.detach()) == np.inf
            return
        with pytest.raises(exc) as info:
            functional.ctc_loss(*args(lib), **kwargs)
        assert str(info.value).split("\n")[0] == message

    check(st, F)
    try:
        import torch
    except ImportError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(torch, torch.nn.functional)


# ------------------------------------------------------------------------------ against torch
CASES = {
    "padded": dict(T=8, N=3, C=5, S=4, il=[8, 8, 8], tl=[4, 4, 4]),
    "varying lengths": dict(T=9, N=4, C=6, S=4, il=[9, 6, 7, 2], tl=[4, 2, 3, 1]),
    "blank 3": dict(T=7, N=3, C=5, S=3, blank=3, il=[7, 5, 6], tl=[3, 3, 1]),
    "target length 0": dict(T=5, N=3, C=4, S=2, il=[5, 3, 0], tl=[0, 2, 0]),
    "last class blank": dict(T=6, N=2, C=4, S=3, blank=3, il=[6, 4], tl=[3, 2]),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", list(CASES))
def test_matches_torch(nn_oracle, device, dtype, reduction, case):
    spec = dict(CASES[case])
    blank = spec.pop("blank", 0)
    lp, targets, il, tl = make_case(20, blank=blank, **spec)
    tol = {} if dtype == "float64" else {"rtol": 1e-4, "atol": 2e-5}

    def fn(F, x, t, a, b):
        return F.ctc_loss(x, t, a, b, blank=blank, reduction=reduction)

    nn_oracle(fn, [lp, targets, il, tl], device, dtype, **tol)  # lists of ints
    nn_oracle(fn, [lp, concatenate(targets, tl), np.array(il), np.array(tl)], device, dtype, **tol)  # tensors


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_unbatched_and_infinite_losses_match_torch(nn_oracle, device, dtype, reduction, zero_infinity):
    lp, _, _, _ = make_case(21, T=5, N=2, C=4, S=3)
    targets = np.array([[1, 1, 1], [1, 2, 3]])
    tol = {} if dtype == "float64" else {"rtol": 1e-4, "atol": 2e-5}

    def fn(F, x, t, a, b):
        return F.ctc_loss(x, t, a, b, reduction=reduction, zero_infinity=zero_infinity)

    nn_oracle(fn, [lp, targets, [4, 3], [3, 3]], device, dtype, **tol)  # sample 0 cannot be aligned
    nn_oracle(fn, [lp[:, 1], targets[1], np.array(5), np.array(3)], device, dtype, **tol)  # unbatched
    nn_oracle(fn, [lp[:, 0], targets[0], np.array(4), np.array(3)], device, dtype, **tol)  # unbatched, inf


# ------------------------------------------------------------------------------ nn.CTCLoss
@pytest.mark.parametrize("device", DEVICES)
def test_ctc_loss_layer(device):
    layer = nn.CTCLoss(blank=2, reduction="sum", zero_infinity=True)
    assert repr(layer) == "CTCLoss()" and repr(nn.CTCLoss()) == "CTCLoss()"
    assert (layer.blank, layer.reduction, layer.zero_infinity) == (2, "sum", True)
    assert (nn.CTCLoss().blank, nn.CTCLoss().reduction, nn.CTCLoss().zero_infinity) == (0, "mean", False)
    lp, targets, il, tl = make_case(30, T=6, N=3, C=4, S=3, blank=2, il=[6, 2, 5], tl=[3, 3, 2])
    x = st.tensor(lp, device=device, requires_grad=True)
    out = layer(x, st.tensor(targets, device=device), il, tl)
    out.backward()
    assert tuple(out.shape) == () and tuple(x.grad.shape) == lp.shape
    if device != "meta":  # sample 1 cannot be aligned: zero_infinity drops it
        loss = ctc_reference(lp, targets, il, tl, blank=2)
        np.testing.assert_allclose(host(out), loss[[0, 2]].sum(), rtol=1e-12)
        assert not host(x.grad)[:, 1].any()
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        nn.CTCLoss(reduction="foo")(x, st.tensor(targets, device=device), il, tl)


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
def test_autocast_runs_in_float32(device):
    """ctc_loss is on torch's autocast fp32 lists: a bfloat16 input is cast to float32, not refused."""
    lp, targets, il, tl = make_case(31, T=6, N=2, C=5, S=3)
    x = st.tensor(lp, dtype=st.float32, device=device).to(st.bfloat16)
    tg = st.tensor(targets, device=device)
    with pytest.raises(NotImplementedError, match=f"\"ctc_loss_{device}\" not implemented for 'BFloat16'"):
        F.ctc_loss(x, tg, il, tl)
    with st.autocast(device, dtype=st.bfloat16):
        out = F.ctc_loss(x, tg, il, tl, reduction="none")
    assert out.dtype is st.float32
    np.testing.assert_allclose(host(out), host(F.ctc_loss(x.to(st.float32), tg, il, tl, reduction="none")),
                               rtol=1e-6)
