"""Lazy layers (strided/nn/modules/lazy.py), the uninitialized placeholders and ``Buffer``
(strided/nn/parameter.py): the first forward infers the input size, materializes the same parameter objects
(an optimizer built before keeps working), initializes them as the eager layer does and turns the module into
it; state dicts load into lazy layers; placeholders move with ``.to`` and refuse a shape; assigning a Buffer
registers it; torch's reprs and errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.nn.parameter import Parameter, UninitializedBuffer, UninitializedParameter, is_lazy
from strided.testing import available_devices

DEVICES = [d for d in available_devices() if d != "meta"]

CASES = [
    (nn.LazyLinear, (3,), (2, 5), nn.Linear, "LazyLinear(in_features=0, out_features=3, bias=True)",
     [(3, 5), (3,)]),
    (nn.LazyConv1d, (4, 3), (3, 8), nn.Conv1d, "LazyConv1d(0, 4, kernel_size=(3,), stride=(1,))", [(4, 3, 3), (4,)]),
    (nn.LazyConv2d, (4, 3), (2, 6, 8, 8), nn.Conv2d, "LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1))",
     [(4, 6, 3, 3), (4,)]),
    (nn.LazyConv3d, (2, 1), (1, 2, 3, 3, 3), nn.Conv3d, "LazyConv3d(0, 2, kernel_size=(1, 1, 1), stride=(1, 1, 1))",
     [(2, 2, 1, 1, 1), (2,)]),
    (nn.LazyConvTranspose1d, (4, 3), (2, 3, 5), nn.ConvTranspose1d,
     "LazyConvTranspose1d(0, 4, kernel_size=(3,), stride=(1,))", [(3, 4, 3), (4,)]),
    (nn.LazyConvTranspose2d, (4, 3), (2, 3, 5, 5), nn.ConvTranspose2d,
     "LazyConvTranspose2d(0, 4, kernel_size=(3, 3), stride=(1, 1))", [(3, 4, 3, 3), (4,)]),
    (nn.LazyConvTranspose3d, (4, 2), (3, 4, 4, 4), nn.ConvTranspose3d,
     "LazyConvTranspose3d(0, 4, kernel_size=(2, 2, 2), stride=(1, 1, 1))", [(3, 4, 2, 2, 2), (4,)]),
    (nn.LazyBatchNorm1d, (), (4, 6), nn.BatchNorm1d,
     "LazyBatchNorm1d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)", [(6,), (6,)]),
    (nn.LazyBatchNorm2d, (), (4, 3, 2, 2), nn.BatchNorm2d, None, [(3,), (3,)]),
    (nn.LazyBatchNorm3d, (), (2, 3, 2, 2, 2), nn.BatchNorm3d, None, [(3,), (3,)]),
    (nn.LazyInstanceNorm1d, (), (2, 3, 4), nn.InstanceNorm1d, None, [(3,), (3,)]),
    (nn.LazyInstanceNorm2d, (), (2, 3, 4, 4), nn.InstanceNorm2d,
     "LazyInstanceNorm2d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)",
     [(3,), (3,)]),
    (nn.LazyInstanceNorm3d, (), (2, 3, 2, 2, 2), nn.InstanceNorm3d, None, [(3,), (3,)]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cls,args,shape,becomes,text,param_shapes", CASES, ids=[c[0].__name__ for c in CASES])
def test_first_forward_materializes_and_becomes_the_eager_layer(device, cls, args, shape, becomes, text,
                                                                   param_shapes):
    m = cls(*args, device=device)
    if text is not None:
        assert repr(m) == text
    params = list(m.parameters())
    assert all(isinstance(p, UninitializedParameter) for p in params) and m.has_uninitialized_params()
    assert st.nn.UninitializedParameter is UninitializedParameter  # torch.nn's names
    assert st.nn.UninitializedBuffer is UninitializedBuffer
    opt = st.optim.SGD(params, lr=0.1)  # built before the shapes are known, as torch allows
    x = st.randn(*shape, device=device)
    out = m(x)
    assert type(m) is becomes and not hasattr(m, "_initialize_hook")
    assert [tuple(p.shape) for p in m.parameters()] == param_shapes
    assert all(a is b and type(a) is Parameter for a, b in zip(m.parameters(), params))  # the same objects
    assert all(p.device.type == device for p in m.parameters())
    eager = becomes(*(_eager_args(m)), device=device)
    assert repr(m) == repr(eager)
    if hasattr(m, "running_mean"):
        assert type(m.running_mean) is st.Tensor and int(m.num_batches_tracked.item()) in (0, 1)  # instance norm: 0
        np.testing.assert_array_equal(m.weight.detach().cpu().numpy(), 1.0)  # reset_parameters ran
        np.testing.assert_array_equal(m.bias.detach().cpu().numpy(), 0.0)
    before = [p.detach().clone() for p in params]
    (out.float() * st.randn(*out.shape, device=device)).sum().backward()
    opt.step()
    assert all(not np.array_equal(a.cpu().numpy(), p.detach().cpu().numpy()) for a, p in zip(before, params))
    assert tuple(m(x).shape) == tuple(out.shape)  # later calls are plain eager calls


def _eager_args(m):
    if isinstance(m, nn.Linear):
        return (m.in_features, m.out_features)
    if hasattr(m, "in_channels"):
        return (m.in_channels, m.out_channels, m.kernel_size)
    return (m.num_features, m.eps, m.momentum, m.affine, m.track_running_stats)


def test_init_matches_the_eager_layers_bounds():
    st.manual_seed(0)
    m = nn.LazyLinear(200)
    m(st.ones(1, 16))
    bound = 1 / np.sqrt(16)
    w = m.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound  # U(-1/sqrt(in), 1/sqrt(in))


def test_state_dicts_of_lazy_layers():
    lazy = nn.LazyBatchNorm2d()
    sd = lazy.state_dict()
    assert isinstance(sd["weight"], UninitializedParameter) and isinstance(sd["running_mean"], UninitializedBuffer)
    src = nn.Linear(6, 4)
    dst = nn.LazyLinear(4)
    dst.load_state_dict(src.state_dict())
    assert not dst.has_uninitialized_params() and tuple(dst.weight.shape) == (4, 6)
    x = st.randn(3, 6)
    np.testing.assert_array_equal(dst(x).detach().numpy(), src(x).detach().numpy())
    assert type(dst) is nn.Linear
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter or buffer"):
        nn.Linear(6, 4).load_state_dict(nn.LazyLinear(4).state_dict())


def test_placeholders_move_and_refuse_a_shape():
    m = nn.LazyBatchNorm1d().to(st.float64)
    assert is_lazy(m.running_mean) and m.running_mean.dtype == st.float64 and m.weight.dtype == st.float64
    m(st.randn(4, 3, dtype=st.float64))
    assert m.running_mean.dtype == st.float64 and tuple(m.running_mean.shape) == (3,)
    p = UninitializedParameter()
    assert repr(p) == "<UninitializedParameter>" and p.requires_grad
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        _ = p.shape
    with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized parameter"):
        p.share_memory_()
    q = copy.deepcopy(p)
    assert q is not p and isinstance(q, UninitializedParameter)
    p.materialize((2, 3), dtype=st.float64)
    assert type(p) is Parameter and tuple(p.shape) == (2, 3) and p.dtype == st.float64 and p.requires_grad
    b = UninitializedBuffer()
    assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad


def test_lazy_errors_in_torchs_words():
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d, but "
                       "got input of size"):
        nn.LazyConv2d(4, 3)(st.ones(2, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(st.ones(1, 3, 5, 5))
    m = nn.LazyLinear(3)
    m.initialize_parameters = lambda *a: None  # a broken initializer leaves placeholders behind
    with pytest.raises(RuntimeError, match="module LazyLinear has not been fully initialized"):
        m(st.ones(2, 2))


def test_buffer_assignment_registers_a_buffer():
    m = nn.Module()
    m.running = nn.Buffer(st.ones(3))
    m.scratch = nn.Buffer(st.zeros(2), persistent=False)
    assert type(m.running) is st.Tensor and type(m.scratch) is st.Tensor  # plain tensors once registered
    assert [n for n, _ in m.named_buffers()] == ["running", "scratch"]
    assert list(m.state_dict()) == ["running"]
    m.to(st.float64)
    assert m.running.dtype == st.float64 and m.scratch.dtype == st.float64
    m.extra = 5
    m.extra = nn.Buffer()  # replaces a plain attribute, as torch's
    assert "extra" in dict(m.named_buffers()) and tuple(m.extra.shape) == (0,)
    m.w = nn.Parameter(st.ones(1))
    with pytest.raises(TypeError, match="cannot assign 'strided.FloatTensor' as parameter 'w'"):  # torch.typename's
        m.w = nn.Buffer(st.ones(1))
    with pytest.raises(TypeError, match="Buffer: data must be a Tensor, got list"):
        nn.Buffer([1, 2])
    assert nn.Buffer(st.ones(1), persistent=False).persistent is False


def test_lazy_norms_take_bias_as_torchs():
    import inspect

    torch = pytest.importorskip("torch")
    if "bias" not in inspect.signature(torch.nn.LazyBatchNorm1d.__init__).parameters:
        pytest.skip("this torch's lazy norms have no bias=")
    for name, shape in (("LazyBatchNorm1d", (3, 4)), ("LazyInstanceNorm1d", (2, 3, 5))):
        ours = getattr(st.nn, name)(bias=False)
        theirs = getattr(torch.nn, name)(bias=False)
        assert ours.bias is None and theirs.bias is None
        ours(st.randn(*shape))
        theirs(torch.randn(*shape))
        assert repr(ours) == repr(theirs) and ours.bias is None
