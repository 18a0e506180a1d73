"""fold (col2im, ``strided/nn/fold.py``) and ``nn.Fold`` on every available backend: values and gradients against
torch (when installed), a NumPy col2im reference and round trips through unfold without it, gradcheck, torch's
repr and errors."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.autograd import gradcheck
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
RNG = np.random.default_rng(29)

# (output_size, fold keywords): overlapping windows, padding, dilation, stride, non-square
FOLD = [
    ((5, 6), {"kernel_size": 2}),
    ((5, 6), {"kernel_size": (2, 3), "stride": 2, "padding": 1}),
    ((7, 6), {"kernel_size": 3, "dilation": 2, "padding": (2, 1)}),
    ((6, 7), {"kernel_size": (3, 2), "dilation": (1, 2), "padding": (0, 1), "stride": (2, 1)}),
    ((4, 4), {"kernel_size": 2, "stride": 2}),  # non-overlapping: a pure rearrangement
    (5, {"kernel_size": 4, "stride": 3, "padding": 2}),  # windows partly in the padding only
]


def _blocks(size, k, d, p, s):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _two(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _geometry(output_size, kw):
    o, k = _two(output_size), _two(kw["kernel_size"])
    d, p, s = _two(kw.get("dilation", 1)), _two(kw.get("padding", 0)), _two(kw.get("stride", 1))
    return o, k, d, p, s


def _col2im_reference(cols: np.ndarray, output_size, kw) -> np.ndarray:
    """torch's col2im, one block element at a time, in NumPy: (N, C * KH * KW, L) -> (N, C, H, W)."""
    o, k, d, p, s = _geometry(output_size, kw)
    lh, lw = _blocks(o[0], k[0], d[0], p[0], s[0]), _blocks(o[1], k[1], d[1], p[1], s[1])
    n, planes, _ = cols.shape
    c = planes // (k[0] * k[1])
    out = np.zeros((n, c, o[0], o[1]), dtype=cols.dtype)
    blocks = cols.reshape(n, c, k[0], k[1], lh, lw)
    for a in range(k[0]):
        for b in range(k[1]):
            for i in range(lh):
                for j in range(lw):
                    y, x = i * s[0] + a * d[0] - p[0], j * s[1] + b * d[1] - p[1]
                    if 0 <= y < o[0] and 0 <= x < o[1]:
                        out[:, :, y, x] += blocks[:, :, a, b, i, j]
    return out


def _cols(output_size, kw, n=2, c=3):
    o, k, d, p, s = _geometry(output_size, kw)
    length = _blocks(o[0], k[0], d[0], p[0], s[0]) * _blocks(o[1], k[1], d[1], p[1], s[1])
    return RNG.standard_normal((n, c * k[0] * k[1], length))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("output_size,kw", FOLD, ids=str)
def test_fold_matches_torch(nn_oracle, device, output_size, kw):
    cols = _cols(output_size, kw)
    nn_oracle(lambda F, x: F.fold(x, output_size, **kw), [cols], device, "float32")
    nn_oracle(lambda F, x: F.fold(x, output_size, **kw), [cols[1]], device, "float32")  # unbatched


@pytest.mark.parametrize("device", DEVICES)
def test_fold_of_a_non_contiguous_input_and_float64_match_torch(nn_oracle, device):
    cols = RNG.standard_normal((2, 9, 12))  # used as its (2, 12, 9) transpose: 2 channels, 3 x 3 blocks
    kw = {"kernel_size": (2, 3), "padding": 1, "stride": 2}
    nn_oracle(lambda F, x: F.fold(x.transpose(1, 2), (5, 6), **kw), [cols], device, "float64")


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
@pytest.mark.parametrize("output_size,kw", FOLD, ids=str)
def test_fold_matches_a_numpy_col2im_and_inverts_unfold_up_to_counts(device, output_size, kw):
    cols = _cols(output_size, kw)
    out = F.fold(st.tensor(cols, device=device), output_size, **kw)
    np.testing.assert_allclose(out.numpy(force=True), _col2im_reference(cols, output_size, kw), rtol=1e-12,
                               atol=1e-12)
    # fold(unfold(x)) == x * (the number of blocks that cover each position)
    o = _two(output_size)
    x = RNG.standard_normal((2, 3, *o))
    counts = _col2im_reference(np.ones_like(cols), output_size, kw)
    round_trip = F.fold(F.unfold(st.tensor(x, device=device), **kw), output_size, **kw)
    np.testing.assert_allclose(round_trip.numpy(force=True), x * counts, rtol=1e-12, atol=1e-12)
    assert round_trip.is_contiguous()


def test_fold_is_the_adjoint_of_unfold_and_gradchecks():
    # <fold(c), y> == <c, unfold(y)>
    kw = {"kernel_size": (3, 2), "dilation": (2, 1), "padding": 1, "stride": (1, 2)}
    y = RNG.standard_normal((2, 3, 7, 6))
    c = _cols((7, 6), kw)
    lhs = float((F.fold(st.tensor(c), (7, 6), **kw) * st.tensor(y)).sum())
    rhs = float((st.tensor(c) * F.unfold(st.tensor(y), **kw)).sum())
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs))
    x = st.tensor(_cols((4, 3), {"kernel_size": 2, "padding": 1, "stride": 2}, n=1, c=2), requires_grad=True)
    assert gradcheck(lambda x: F.fold(x, (4, 3), 2, padding=1, stride=2), (x,))


@pytest.mark.parametrize("device", DEVICES)
def test_fold_of_an_empty_batch_and_of_bool(device):
    out = F.fold(st.zeros(0, 8, 9, device=device), (4, 4), 2)
    assert tuple(out.shape) == (0, 2, 4, 4) and out.device.type == device
    if device == "meta":
        return
    # bool columns fold with a logical or, as torch's
    cols = np.zeros((4, 9), dtype=bool)
    cols[0, 4] = cols[3, 0] = True
    folded = F.fold(st.tensor(cols, device=device), (4, 4), 2).numpy(force=True)
    expected = np.zeros((1, 4, 4), dtype=bool)
    expected[0, 1, 1] = True  # block 4 is at (1, 1), kernel offset (0, 0); block 0 with offset (1, 1)
    np.testing.assert_array_equal(folded, expected)


def test_fold_module_repr_and_forward():
    m = nn.Fold(output_size=(5, 6), kernel_size=(2, 3), stride=2, padding=1)
    text = "Fold(output_size=(5, 6), kernel_size=(2, 3), dilation=1, padding=1, stride=2)"
    assert repr(m) == text
    cols = _cols((5, 6), {"kernel_size": (2, 3), "stride": 2, "padding": 1})
    np.testing.assert_allclose(m(st.tensor(cols)).numpy(),
                               _col2im_reference(cols, (5, 6), {"kernel_size": (2, 3), "stride": 2, "padding": 1}),
                               rtol=1e-12, atol=1e-12)
    assert dict(m.named_parameters()) == {}
    torch = pytest.importorskip("torch")
    assert repr(torch.nn.Fold(output_size=(5, 6), kernel_size=(2, 3), stride=2, padding=1)) == text


ERRORS = [
    (lambda: F.fold(st.ones(4), (4, 4), 2), RuntimeError,
     r"Expected 2D or 3D \(batch mode\) tensor for input with possibly 0 batch size and non-zero dimensions for "
     r"input, but got: \[4\]"),
    (lambda: F.fold(st.ones(2, 0, 4), (4, 4), 2), RuntimeError, r"non-zero dimensions for input, but got: \[2, 0, 4\]"),
    (lambda: F.fold(st.ones(2, 3, 4, 5), (4, 4), 2), RuntimeError, r"but got: \[2, 3, 4, 5\]"),
    (lambda: F.fold(st.ones(2, 5, 9), (4, 4), 2), RuntimeError,
     r"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size\(1\)=5 "
     r"and kernel_size=\(2, 2\)."),
    (lambda: F.fold(st.ones(2, 8, 8), (4, 4), 2), RuntimeError,
     r"Given output_size=\(4, 4\), kernel_size=\(2, 2\), dilation=\(1, 1\), padding=\(0, 0\), stride=\(1, 1\), "
     r"expected size of input's dimension 2 to match the calculated number of sliding blocks 3 \* 3 = 9, but got "
     r"input.size\(2\)=8."),
    (lambda: F.fold(st.ones(4, 1), (0, 0), 2), RuntimeError,
     r"calculated shape of the array of sliding blocks as \(-1, -1\), which is too small \(non-positive\)"),
    (lambda: F.fold(st.ones(4, 4), (0, 0), 1, padding=1), RuntimeError,
     r"Expected output spatial size to be positive, but got: output_size=\(0, 0\)."),
    (lambda: F.fold(st.ones(2, 8, 9), (4, 4), 0), RuntimeError,
     "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 0"),
    (lambda: F.fold(st.ones(2, 8, 9), (4, 4), 2, stride=(1, 0)), RuntimeError,
     "stride should be greater than zero, but got stride_height: 1 stride_width: 0"),
    (lambda: F.fold(st.ones(2, 8, 9), (4, 4), 2, dilation=0), RuntimeError,
     "dilation should be greater than zero, but got dilation_height: 0 dilation_width: 0"),
    (lambda: F.fold(st.ones(2, 8, 9), (4, 4), 2, padding=-1), RuntimeError,
     "padding should be non-negative, but got pad_height: -1 pad_width: -1"),
    (lambda: F.fold(st.ones(2, 8, 9), (4, 4, 4), 2), RuntimeError, "It is expected output_size equals to 2, but got "
     "size 3"),
    (lambda: F.fold(st.ones(2, 8, 9), (4, 4), 2, stride=(1,)), RuntimeError,
     "It is expected stride equals to 2, but got size 1"),
    (lambda: F.fold(st.ones(2, 8, 9), (4.0, 4), 2), TypeError,
     r"col2im\(\): argument 'output_size' \(position 2\) must be tuple of ints, but found element of type float at "
     r"pos 0"),
    (lambda: F.fold(st.ones(2, 8, 9), None, 2), TypeError,
     r"col2im\(\): argument 'output_size' \(position 2\) must be tuple of ints, but found element of type NoneType "
     r"at pos 0"),
    (lambda: F.fold([1.0], (4, 4), 2), TypeError, r"fold\(\): argument 'input' must be Tensor, not list"),
    (lambda: F.fold(st.ones(4, 9, dtype=st.int64), (4, 4), 2), NotImplementedError,
     "\"col2im_out_cpu\" not implemented for 'Long'"),
    (lambda: nn.Fold((4, 4), 2)(st.ones(2, 8, 8)), RuntimeError, r"sliding blocks 3 \* 3 = 9, but got input.size"),
]


@pytest.mark.parametrize("call,error,text", ERRORS, ids=range(len(ERRORS)))
def test_fold_errors_in_torchs_words(call, error, text):
    with pytest.raises(error, match=text):
        call()
