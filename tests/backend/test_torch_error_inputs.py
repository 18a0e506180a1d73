"""Bad input found by running torch's own OpInfo ``error_inputs`` and ``out=`` samples through strided
(scratch/error_sweep.py, scratch/out_dtype_sweep.py): each is refused, in torch 2.14's words. The expected
messages are literal, so these run without torch; where torch is installed the pools and convolutions are also
compared with it case by case."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as st
import strided.nn.functional as F

X = st.ones(2, 3)


def _raises(exc, message, fn):
    with pytest.raises(exc, match="^" + re.escape(message)):
        fn()


# ---------------------------------------------------------------------------------------- out= dtypes
OUT_DTYPE_REFUSALS = [
    (lambda: st.mm(X, X.t(), out=st.empty(2, 2, dtype=st.float64)),
     "Expected out tensor to have dtype float, but got double instead"),
    (lambda: st.gather(X, 1, st.zeros(2, 2, dtype=st.int64), out=st.empty(2, 2, dtype=st.float64)),
     "Expected out tensor to have dtype float, but got double instead"),
    (lambda: st.argmax(X, 1, out=st.empty(2, dtype=st.float64)),
     "Expected out tensor to have dtype long int, but got double instead"),
    (lambda: st.abs(X, out=st.empty(2, 3, dtype=st.float64)), "Found dtype Double but expected Float"),
    (lambda: st.neg(st.ones(3, dtype=st.int64), out=st.empty(3)), "Found dtype Float but expected Long"),
    (lambda: st.dot(X[0], X[0], out=st.empty((), dtype=st.float64)), "result dtype Double does not match input dtype "
     "Float"),
    (lambda: st.complex(X, X, out=st.empty(2, 3, dtype=st.complex128)), "Expected object of scalar type ComplexFloat "
     "but got scalar type ComplexDouble for argument 'out'"),
    (lambda: st.amax(X, 0, out=st.empty(3, dtype=st.float64)), "Expected the dtype for input and out to match, but "
     "got Float for input's dtype and Double for out's dtype."),
    (lambda: st.all(X, out=st.empty((), dtype=st.int64)), "all only supports bool tensor for result, got: Long"),
    (lambda: st.multinomial(st.ones(1, 2), 2, out=st.empty(1, 2, dtype=st.float64)),
     "multinomial expects Long tensor out, got: Double"),
    (lambda: st.take(X, st.tensor([0]), out=st.empty(1, dtype=st.float64)), "take(): self and out expected to have the "
     "same dtype, but got self.dtype = Float and out.dtype = Double"),
    (lambda: st.tensordot(X, X, 2, out=st.empty((), dtype=st.float64)), "tensordot: Expected the output tensor to have "
     "dtype Float, but got an output tensor with dtype Double"),
    (lambda: st.norm(X, out=st.empty((), dtype=st.float64)),
     "Expected out tensor to have dtype float, but got double instead"),
    (lambda: st.norm(X, "nuc", out=st.empty((), dtype=st.float64)),
     "linalg.matrix_norm expected out tensor dtype Float but got: Double"),
    (lambda: st.linalg.norm(X, out=st.empty((), dtype=st.float64)),
     "linalg.norm expected out tensor dtype Float but got: Double"),
    (lambda: st.linalg.inv(st.eye(2), out=st.empty(2, 2, dtype=st.float64)),
     "Expected out tensor to have dtype float, but got double instead"),
    (lambda: st.fft.ifft(st.ones(4), out=st.empty(4, dtype=st.complex128)),
     "Found dtype ComplexDouble but expected ComplexFloat"),
    (lambda: st.round(X, decimals=2, out=st.empty(2, 3, dtype=st.float64)), "Found dtype Double but expected Float"),
    (lambda: st.cummax(X, 1, out=(st.empty(2, 3, dtype=st.float64), st.empty(2, 3, dtype=st.int64))),
     "expected scalar_type Float but found Double"),
    (lambda: st.kthvalue(st.ones(4), 2, out=(st.empty(()), st.empty((), dtype=st.int32))),
     "output indices must be of scalar type Long"),
    (lambda: st.permute_copy(X, (1, 0), out=st.empty(3, 2, dtype=st.float64)),
     "Expected out tensor to have dtype float, but got double instead"),
]


@pytest.mark.parametrize("call,message", OUT_DTYPE_REFUSALS, ids=[m[:50] for _, m in OUT_DTYPE_REFUSALS])
def test_out_of_another_dtype_is_refused_where_torch_refuses_it(call, message):
    _raises(RuntimeError, message, call)


def test_out_of_a_castable_dtype_still_works_where_torch_casts():
    out = st.empty(2, 3, dtype=st.float64)
    assert st.exp(X, out=out) is out and out.dtype is st.float64  # a TensorIterator op casts into out
    np.testing.assert_allclose(out.numpy(), np.e)
    flags = st.empty((), dtype=st.uint8)
    st.all(X, out=flags)  # all / any write into uint8 as well as bool
    assert flags.item() == 1
    a, b = st.randn(4, 2, dtype=st.float64), st.randn(4, 1, dtype=st.float64)
    outs = tuple(st.empty(0, dtype=d) for d in (st.float64, st.float64, st.int64, st.float64))
    st.linalg.lstsq(a, b, out=outs)  # torch's lstsq takes outs of its results' dtypes or castable ones
    np.testing.assert_allclose(outs[0].numpy(), np.linalg.lstsq(a.numpy(), b.numpy(), rcond=None)[0], rtol=1e-10)


def test_view_copies_take_out_as_torch():
    out = st.empty(3, 2)
    assert st.permute_copy(X, (1, 0), out=out) is out and out.shape == (3, 2)
    pieces = [st.empty(3), st.empty(3)]
    x = st.arange(6.0).reshape(2, 3)
    assert st.unbind_copy(x, 0, out=pieces) is None  # torch's list outs return None
    np.testing.assert_array_equal(pieces[1].numpy(), [3.0, 4.0, 5.0])
    _raises(RuntimeError, "unbind_copy_int_out expected an out= argument of size 2, got size 1",
            lambda: st.unbind_copy(x, 0, out=[st.empty(3)]))
    _raises(RuntimeError, "split_copy_Tensor_out() expected an out= argument of size 2, got size 1",
            lambda: st.split_copy(x, 1, 0, out=[st.empty(1, 3)]))
    _raises(RuntimeError, "Expected out tensor to have dtype float, but got double instead",
            lambda: st.unbind_copy(x, 0, out=[st.empty(3), st.empty(3, dtype=st.float64)]))


def test_an_out_with_repeated_elements_is_refused_before_it_is_resized():
    expanded = st.empty(1, 6).expand(2, 6)
    message = "unsupported operation: more than one element of the written-to tensor refers to a single memory location"
    _raises(RuntimeError, message, lambda: st.index_select(st.randn(3, 6), 1, st.tensor([0, 1]), out=expanded))
    _raises(RuntimeError, message, lambda: st.cat([st.ones(2), st.ones(3)], out=st.empty(1).expand(5)))
    x = st.randn(10)
    _raises(RuntimeError, "unsupported operation: some elements of the input tensor and the written-to tensor refer",
            lambda: st.kthvalue(x, 5, out=(x, st.empty((), dtype=st.int64))))


# ---------------------------------------------------------------------------------------- argument checks
REFUSALS = [
    (lambda: st.linspace(st.tensor([1.0, 2.0]), st.tensor([3.0, 4.0]), 3), RuntimeError,
     "linspace only supports 0-dimensional start and end tensors, but got start with 1 dimension(s) and end with 1 "
     "dimension(s)."),
    (lambda: st.logspace(st.tensor(1.0), st.tensor([3.0]), 3), RuntimeError,
     "logspace only supports 0-dimensional start and end tensors, but got start with 0 dimension(s) and end with 1 "
     "dimension(s)."),
    (lambda: st.logspace(1.0, st.tensor([3.0]), 3), RuntimeError,
     "logspace only supports 0-dimensional start and end tensors, but got end with 1 dimension(s)."),
    (lambda: st.linspace(0, 1, 2.0), TypeError, "linspace(): argument 'steps' (position 3) must be int, not float"),
    (lambda: st.narrow(st.ones(5, 3), 0, st.tensor([1]), 2), RuntimeError, "start must be an 0-dim integral Tensor."),
    (lambda: st.narrow(st.ones(5, 3), 0, st.tensor(1.0), 2), RuntimeError, "start must be an 0-dim integral Tensor."),
    (lambda: st.narrow_copy(st.ones(10), 0, 0, -1), RuntimeError, "start (0) + length (-1) exceeds dimension size "
     "(10)."),
    (lambda: st.roll(st.ones(5), ()), RuntimeError, "`shifts` required"),
    (lambda: st.roll(st.tensor(1.0), 0, 0), IndexError, "Dimension specified as 0 but tensor has no dimensions"),
    (lambda: st.as_strided_scatter(st.ones(4, 4), st.ones(2, 2), [2, 2], [200, 200]), RuntimeError,
     "setStorage: sizes [2, 2], strides [200, 200], storage offset 0, and itemsize 4 requiring a storage size of 1604 "
     "are out of bounds for storage of size 64"),
    (lambda: st.aminmax(st.ones(5, 0, 5), dim=1), IndexError,
     "aminmax: Expected reduction dim 1 to have non-zero size."),
    (lambda: st.dot(st.ones(3), st.ones(2, dtype=st.float16)), RuntimeError,
     "dot : expected both vectors to have same dtype, but found Float and Half"),
    (lambda: st.isclose(X, X, rtol=-1), RuntimeError, "rtol must be greater than or equal to zero, but got -1"),
    (lambda: st.isclose(X, X, atol=-0.5), RuntimeError, "atol must be greater than or equal to zero, but got -0.5"),
    (lambda: st.multinomial(st.tensor([1.0, -1.0, 2.0]), 2, True), RuntimeError,
     "invalid multinomial distribution (encountering probability entry < 0)"),
    (lambda: st.multinomial(st.tensor([1.0, float("inf"), 2.0]), 2, True), RuntimeError,
     "invalid multinomial distribution (encountering probability entry = infinity or NaN)"),
    (lambda: st.multinomial(st.tensor([1.0, float("inf"), 2.0]), 2), RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    (lambda: st.masked_fill(st.tensor([1, 2]), st.tensor(True), st.tensor(1 + 2j)), RuntimeError,
     "value cannot be converted to type int64_t without overflow"),
    (lambda: st.gradient(st.ones(3, 3), spacing=[st.tensor([1, 2, 4]), st.ones(3, device="meta")], dim=(0, 1)),
     RuntimeError, "torch.gradient expected each tensor to be on the same device, but got devices cpu and meta!"),
    (lambda: F.group_norm(st.ones(1, 0, 2), 1), RuntimeError,
     "Expected number of channels to be greater than 0, got 0"),
    # torch's argument parser names the argument (Note [One plausible overload])
    (lambda: st.cat(X), TypeError, "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"),
    (lambda: st.cat([X, None]), TypeError, "expected Tensor as element 1 in argument 0, but got NoneType"),
    (lambda: st.cat([X, X], 1.5), TypeError, "cat(): argument 'dim' (position 2) must be int, not float"),
    (lambda: st.gather(X, 0, 5), TypeError, "gather(): argument 'index' (position 3) must be Tensor, not int"),
    (lambda: st.topk(X, 1.5), TypeError, "topk(): argument 'k' (position 2) must be int, not float"),
    (lambda: st.maximum(X, "a"), TypeError, "maximum(): argument 'other' (position 2) must be Tensor, not str"),
    (lambda: st.amax(X, [1.5]), TypeError,
     "amax(): argument 'dim' (position 2) must be tuple of ints, but found element of type float at pos 0"),
]


@pytest.mark.parametrize("call,exc,message", REFUSALS, ids=[m[:50] for _, _, m in REFUSALS])
def test_bad_arguments_are_refused_in_torchs_words(call, exc, message):
    _raises(exc, message, call)


def test_the_refusals_leave_the_good_calls_alone():
    assert st.narrow(st.ones(5, 3), 0, st.tensor(1), 2).shape == (2, 3)
    np.testing.assert_array_equal(st.masked_fill(st.tensor([1, 2]), st.tensor(True), st.tensor(3 + 0j)).numpy(), [3, 3])
    assert st.aminmax(st.ones(5, 0, 5), dim=0).min.shape == (0, 5)
    assert F.group_norm(st.ones(0, 2, 3), 1).shape == (0, 2, 3)  # an empty batch normalizes nothing
    assert st.zeros(2, dtype="float32").dtype is st.float32  # a dtype's name stays strided's own spelling
    assert st.maximum(X, 2).dtype is st.float32  # a number for a Tensor argument: strided's leniency, kept


# ---------------------------------------------------------------------------------------- pools and convolutions
POOL_REFUSALS = [
    (lambda: F.max_pool1d(st.ones(2, 3, 8), (2, 2)), "max_pool1d() kernel_size must be an int, list of ints or tuple "
     "of ints of size 1 but got size 2"),
    (lambda: F.max_pool1d(st.ones(2, 3, 8), 2, padding=(1, 1)), "max_pool1d() padding must be an int, list of ints, "
     "or tuple of ints of size 1 but got size 2"),
    (lambda: F.max_pool1d(st.ones(2, 3, 8), (2, 2), return_indices=True),
     "max_pool1d() argument 'kernel_size' should contain one int (got 2)"),
    (lambda: F.avg_pool1d(st.ones(2, 3, 8), 2, stride=(1, 1)), "avg_pool1d() argument 'stride' should contain one int "
     "(got 2)"),
    (lambda: F.max_pool1d(st.ones(0), 1), "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch "
     "size for input, but got:[0]"),
    (lambda: F.max_pool1d(st.ones(3), 1, return_indices=True), "Expected 2 to 3 dimensions, but got 1-dimensional "
     "tensor for argument #1 'self' (while checking arguments for max_pool1d)"),
    (lambda: F.max_pool1d(st.ones(3, 3, 3), 1, stride=0), "max_pool1d() stride must be greater than zero, but got 0"),
    (lambda: F.max_pool1d(st.ones(2, 2, 2), 5, stride=1), "max_pool1d() Invalid computed output size: -2"),
    (lambda: F.max_pool2d(st.ones(2, 3, 8, 8), -1), "kernel size should be greater than zero, but got kH: -1 kW: -1"),
    (lambda: F.max_pool2d(st.ones(2, 3, 8, 8), 2, stride=-1), "stride should be greater than zero, but got dH: -1 "
     "dW: -1"),
    (lambda: F.max_pool2d(st.ones(2, 3, 8, 8), 1, dilation=0), "dilation should be greater than zero, but got "
     "dilationH: 0 dilationW: 0"),
    (lambda: F.max_pool2d(st.ones(2, 3, 8, 8), 3, padding=2, dilation=2), "pad should be smaller than or equal to "
     "half of kernel size, but got padW = 2, padH = 2, kW = 3, kH = 3"),
    (lambda: F.max_pool2d(st.ones(2, 3, 8, 8), 3, padding=1, dilation=-2), "pad should be at most half of effective "
     "kernel size, but got pad=1, kernel_size=3 and dilation=-2"),
    (lambda: F.max_pool2d(st.ones(0, 8, 8), 1), "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
     "for input, but got:[0, 8, 8]"),
    (lambda: F.max_pool2d(st.ones(2, 3, 8, 8), 2, dilation=(1, 1, 1)), "max_pool2d: dilation must be either a single "
     "int, or a tuple of two ints"),
    (lambda: F.max_pool3d(st.ones(2, 0, 8, 8, 8), 1), "max_pool3d_with_indices_out_cpu_template(): Expected input's "
     "non-batch dimensions to have positive length, but input has a shape of [2, 0, 8, 8, 8] and non-batch dimension "
     "0 has length zero!"),
    (lambda: F.avg_pool3d(st.ones(0, 8, 8, 8), 1), "avg_pool3d(): Expected input's non-batch dimensions to have "
     "positive length, but input has a shape of [0, 8, 8, 8] and non-batch dimension 0 has length zero!"),
    (lambda: F.max_pool3d(st.ones(2, 3, 8, 8, 8), 3, padding=(1, 2, 1), dilation=2), "pad should be smaller than or "
     "equal to half of kernel size, but got kT: 3 kW: 3 kH: 3 padT: 1 padW: 1 padH: 2"),
    (lambda: F.avg_pool3d(st.ones(2, 3, 8, 8, 8), (9, 2, 2)), "input image (T: 8 H: 8 W: 8) smaller than kernel size "
     "(kT: 9 kH: 2 kW: 2)"),
    (lambda: F.avg_pool3d(st.ones(2, 3, 8, 8, 8), (2, 2)), "avg_pool3d: kernel_size must be a single int, or a tuple "
     "of three ints"),
    (lambda: F.max_pool3d(st.ones(2, 3, 8, 8, 8), 2, stride=(1, 1)), "max_pool3d: stride must either be omitted, a "
     "single int, or a tuple of three ints"),
    (lambda: F.max_pool3d(st.ones(6), 1), "non-empty 4D or 5D (batch mode) tensor expected for input"),
    (lambda: F.adaptive_avg_pool1d(st.ones(1, 2, 3), ()), "adaptive_avg_pool1d() argument 'output_size' should contain "
     "one int (got 0)"),
    (lambda: F.adaptive_avg_pool2d(st.ones(1, 1, 1, 1), (-1, 0)), "adaptive_avg_pool2d: elements of output_size must "
     "be greater than or equal to 0 but received {-1, 0}"),
    (lambda: F.adaptive_avg_pool3d(st.ones(1, 1, 1, 1, 1), (-1, 0, 2)), "adaptive_avg_pool3d: elements of output_size "
     "must be greater than or equal to 0 but received {-1, 0,2}"),
    (lambda: F.adaptive_avg_pool3d(st.ones(1, 0, 3, 3, 3), 2), "adaptive_avg_pool3d(): Expected input to have non-zero "
     "size for non-batch dimensions, but input has sizes [1, 0, 3, 3, 3] with dimension 1 being empty"),
    (lambda: F.conv1d(st.ones(2, 4, 6), st.ones(4, 4, 3), stride=(1, 1)), "expected stride to be a single integer "
     "value or a list of 1 values to match the convolution dimensions, but got stride=[1, 1]"),
    (lambda: F.conv2d(st.ones(2, 4, 6, 6), st.ones(0, 4, 3, 3)), "Given groups=1, expected weight to be at least 1 at "
     "dimension 0, but got weight of size [0, 4, 3, 3] instead"),
    (lambda: F.conv2d(st.ones(2, 4, 6, 6), st.ones(4, 4, 3, 3), groups=3), "Given groups=3, expected weight to be "
     "divisible by 3 at dimension 0, but got weight of size [[4, 4, 3, 3]] instead"),
    (lambda: F.conv1d(st.ones(2, 4, 6), st.ones(4, 2, 3)), "Given groups=1, weight of size [4, 2, 3], expected "
     "input[2, 4, 6] to have 2 channels, but got 4 channels instead"),
    (lambda: F.conv1d(st.ones(2, 4, 6), st.ones(4, 4, 9)), "Calculated padded input size per channel: (6). Kernel "
     "size: (9). Kernel size can't be greater than actual input size"),
    (lambda: F.conv3d(st.ones(2, 4, 6, 6, 6), st.ones(4, 4, 3, 3, 3), padding="foo"), "Invalid padding string: 'foo'"),
    (lambda: F.conv2d(st.ones(1, 1, 4, 3), st.ones(1, 2, 2), padding="same"), "Expected 3-dimensional input for "
     "3-dimensional weight[1, 2, 2], but got 4-dimensional input of size [1, 1, 4, 3] instead"),
    (lambda: F.conv2d(st.ones(2, 4, 6, 6), st.ones(4, 4, 3, 3), dilation=0), "non-positive dilation is not supported"),
]


@pytest.mark.parametrize("call,message", POOL_REFUSALS, ids=[m[:50] for _, m in POOL_REFUSALS])
def test_pool_and_convolution_arguments_are_checked_in_torchs_order_and_words(call, message):
    _raises(RuntimeError, message, call)


def test_pool_and_convolution_fixes_keep_the_results():
    # an output size of 0 is an empty result, with a gradient of zeros, as torch's
    x = st.ones(1, 2, 3, 3, requires_grad=True)
    y = F.adaptive_avg_pool2d(x, (0, 2))
    assert y.shape == (1, 2, 0, 2)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)
    assert F.adaptive_avg_pool1d(st.ones(1, 2, 3), 0).shape == (1, 2, 0)
    # padding="same" of an even kernel pads the extra element at the end, for every rank
    for n in (1, 2, 3):
        x = st.randn(1, 2, *(5,) * n)
        w = st.randn(3, 2, *(4,) * n)
        conv = getattr(F, f"conv{n}d")
        padded = F.pad(x, (1, 2) * n)
        np.testing.assert_allclose(conv(x, w, padding="same").numpy(), conv(padded, w).numpy(), rtol=1e-5, atol=1e-5)
    assert F.conv1d(st.ones(4, 6), st.ones(3, 4, 3)).shape == (3, 4)  # unbatched
    assert F.max_pool1d(st.ones(2, 3, 8), (2,), return_indices=True)[0].shape == (2, 3, 4)


def _pool_and_conv_cases():
    yield "max_pool1d", (2, 3, 8), {"kernel_size": 2, "padding": 4}
    yield "max_pool1d", (2, 3, 8), {"kernel_size": 3, "dilation": 2, "padding": 3, "return_indices": True}
    yield "max_pool2d", (2, 3, 8, 8), {"kernel_size": 2, "padding": (1, 1, 1)}
    yield "max_pool2d", (2, 1, 10, 0), {"kernel_size": 1}
    yield "max_pool2d", (), {"kernel_size": 1}
    yield "max_pool3d", (2, 3, 8, 8, 8), {"kernel_size": 1, "dilation": (1, 0, 1)}
    yield "max_pool3d", (2, 3, 8, 8, 8), {"kernel_size": 9}
    yield "avg_pool1d", (), {"kernel_size": 1}
    yield "avg_pool2d", (2, 3, 8, 8), {"kernel_size": -1}
    yield "avg_pool2d", (2, 3, 8, 8), {"kernel_size": 2, "stride": (1, 1, 1)}
    yield "avg_pool3d", (2, 3, 8, 8, 8), {"kernel_size": 2, "divisor_override": 0}
    yield "adaptive_avg_pool2d", (2, 2), {"output_size": (2, 2)}
    yield "conv1d", (2, 4, 6), {"weight": (2, 4, 3), "groups": 4}
    yield "conv2d", (2, 4, 6, 6), {"weight": (4, 4, 3, 3), "stride": -1}
    yield "conv3d", (2, 4, 6, 6, 6), {"weight": (4, 4, 3, 3, 3), "padding": -1}


@pytest.mark.parametrize("name,shape,kwargs", list(_pool_and_conv_cases()))
def test_pool_and_convolution_refusals_match_torch(name, shape, kwargs):
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF

    results = []
    for lib, fns in ((torch, TF), (st, F)):
        kw = dict(kwargs)
        args = [lib.ones(shape) if shape else lib.tensor(1.0)]
        if "weight" in kw:
            args.append(lib.ones(kw.pop("weight")))
        try:
            getattr(fns, name)(*args, **kw)
            results.append("no error")
        except Exception as e:  # noqa: BLE001 - the comparison is the point
            results.append(f"{type(e).__name__}: {e}")
    assert results[1] == results[0]


def test_zero_dim_integer_tensors_stand_for_ints_as_in_torch():
    """torch's parser reads an int argument from a 0-dim integer tensor (Note [Tensors as ints])."""
    x = st.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(st.topk(x, st.tensor(2)).values.numpy(), [[2.0, 1.0], [5.0, 4.0]])
    np.testing.assert_array_equal(st.sum(x, st.tensor(1)).numpy(), [3.0, 12.0])  # an int[1] dim
    assert st.sum(x, [st.tensor(0), st.tensor(1)]).item() == 15.0
    assert st.squeeze(st.ones(1, 3), st.tensor(0)).shape == (3,)
    np.testing.assert_array_equal(st.cumsum(x, st.tensor(1)).numpy(), np.cumsum(x.numpy(), 1))
    _raises(TypeError, "topk(): argument 'k' (position 2) must be int, not Tensor", lambda: st.topk(x, st.tensor(2.0)))


# -- a Generator argument that is not a Generator: the called op names it, in torch's words ---------------------
@pytest.mark.parametrize("name, call", [
    ("poisson", lambda: st.poisson(st.ones(2), "x")),
    ("rand", lambda: st.rand(2, generator="x")),
    ("randn", lambda: st.randn(2, generator=3)),
    ("randint", lambda: st.randint(0, 3, (2,), generator=1.5)),
    ("rand_like", lambda: st.rand_like(st.ones(2), generator="x")),
    ("multinomial", lambda: st.multinomial(st.ones(3), 2, generator="x")),
    ("normal_", lambda: st.ones(2).normal_(generator="x")),
    ("uniform_", lambda: st.ones(2).uniform_(generator=3)),
    ("exponential_", lambda: st.ones(2).exponential_(generator="x")),
    ("_standard_gamma", lambda: st._standard_gamma(st.ones(2), "x")),
])
def test_generator_arguments_are_checked(name, call):
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'generator'( \(position \d\))? must be "
                                        r"strided.Generator, not (str|int|float)$"):
        call()  # it was AttributeError: 'str' object has no attribute 'device'
