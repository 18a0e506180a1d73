"""torch.segment_reduce (Note [Segments as a scatter] in ``strided/segment_reduction.py``): values and gradients
against torch for every reduction, with lengths and offsets, along inner and outer axes, with and without
``initial``; torch's refusals in its words, and the bad segments torch would read past its data."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

torch = pytest.importorskip("torch")

DEVICES = [d for d in available_devices() if d != "meta"]
RNG = np.random.default_rng(11)
REDUCTIONS = ["sum", "mean", "max", "min", "prod", "amax", "amin"]
CASES = [  # (data shape, axis, lengths)
    ((7,), 0, [2, 0, 4, 1]),
    ((6, 3), 0, [3, 3]),
    ((2, 5, 3), 1, [[1, 0, 4], [5, 0, 0]]),
    ((3, 4), 1, [[1, 3], [2, 2], [4, 0]]),
]


def _both(array, device, grad):
    s = st.tensor(array, device=device).requires_grad_(grad)
    t = torch.tensor(array).requires_grad_(grad)
    return s, t


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("initial", [None, 0.5])
@pytest.mark.parametrize("by", ["lengths", "offsets"])
def test_values_and_gradients_as_torch(device, reduce, case, initial, by):
    shape, axis, lengths = CASES[case]
    if reduce in ("sum", "mean", "prod"):
        data = RNG.integers(-3, 4, shape).astype(np.float64)  # small integers: zeros for prod
    else:  # distinct values: ties are test_tied_maxima_share_the_gradient's
        data = RNG.permutation(math.prod(shape)).reshape(shape).astype(np.float64) - 5
    lengths = np.array(lengths)
    segs = {"lengths": lengths,
            "offsets": np.concatenate([np.zeros(lengths.shape[:-1] + (1,), np.int64), lengths.cumsum(-1)], -1)}[by]
    s, t = _both(data, device, True)
    kw = dict(axis=axis, initial=initial)
    out_s = st.segment_reduce(s, reduce, **{by: st.tensor(segs, device=device)}, **kw)
    out_t = torch.segment_reduce(t, reduce, **{by: torch.tensor(segs)}, **kw)
    np.testing.assert_allclose(out_s.detach().cpu().numpy(), out_t.detach().numpy(), rtol=1e-12, equal_nan=True)
    upstream = RNG.standard_normal(tuple(out_t.shape))
    out_s.backward(st.tensor(upstream, device=device))
    out_t.backward(torch.tensor(upstream))
    np.testing.assert_allclose(s.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_nan_and_dtypes(device, dtype):
    data = np.array([1.0, math.nan, 3.0, 4.0, -math.inf, 2.0], np.float32)
    for reduce in REDUCTIONS:
        got = st.segment_reduce(st.tensor(data, device=device).to(getattr(st, dtype)), reduce,
                                lengths=st.tensor([2, 1, 3], device=device, dtype=st.int32))
        want = torch.segment_reduce(torch.tensor(data).to(getattr(torch, dtype)), reduce,
                                    lengths=torch.tensor([2, 1, 3], dtype=torch.int32))
        assert got.dtype == getattr(st, dtype)
        np.testing.assert_allclose(got.float().cpu().numpy(), want.float().numpy(), rtol=1e-2, equal_nan=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_tied_maxima_share_the_gradient(device, sign):
    """Tied maxima (and minima) share a segment's gradient equally, as ``amax`` / ``scatter_reduce`` do, whatever its
    sign. A deviation: torch's segment backward divides a tied gradient only where it is positive
    (SegmentReduce.cpp), so a negative one reaches every tied element whole."""
    data = np.array([3.0, 3.0, 1.0, 4.0, 4.0, 4.0])
    for reduce, want in (("max", [0.5, 0.5, 0, 1 / 3, 1 / 3, 1 / 3]), ("min", [0, 0, 1, 1 / 3, 1 / 3, 1 / 3])):
        x = st.tensor(data, device=device).requires_grad_()
        out = st.segment_reduce(x, reduce, lengths=st.tensor([3, 3], device=device))
        out.backward(st.full((2,), sign, device=device, dtype=st.float64))
        np.testing.assert_allclose(x.grad.cpu().numpy(), sign * np.array(want), rtol=1e-12)
        t = torch.tensor(data).requires_grad_()
        torch.segment_reduce(t, reduce, lengths=torch.tensor([3, 3])).backward(torch.full((2,), sign).double())
        if sign > 0:
            np.testing.assert_allclose(x.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-12)


def test_offsets_may_leave_elements_out():
    data = np.arange(1.0, 7.0)
    got = st.segment_reduce(st.tensor(data), "sum", offsets=st.tensor([1, 2, 5]))
    want = torch.segment_reduce(torch.tensor(data), "sum", offsets=torch.tensor([1, 2, 5]))
    assert got.tolist() == want.tolist()
    got = st.segment_reduce(st.tensor(data), "sum", lengths=st.tensor([2, 2]), unsafe=True)
    assert got.tolist() == torch.segment_reduce(torch.tensor(data), "sum", lengths=torch.tensor([2, 2]),
                                                unsafe=True).tolist()


BAD = [
    (dict(reduce="MAX", lengths=[6]), RuntimeError),
    (dict(reduce="sum"), RuntimeError),
    (dict(reduce="sum", indices=[0, 1]), RuntimeError),
    (dict(reduce="sum", lengths=[2, 2]), RuntimeError),
    (dict(reduce="sum", lengths=[-1, 7]), RuntimeError),
    (dict(reduce="sum", lengths=[[6]]), RuntimeError),
    (dict(reduce="sum", lengths=[2, 4], axis=1), IndexError),
    (dict(reduce="sum", offsets=[0, 3, 2, 6]), RuntimeError),
    (dict(reduce="sum", lengths=[2.0, 4.0]), NotImplementedError),
    (dict(reduce="sum", lengths=[6], axis="a"), TypeError),
    (dict(reduce="sum", lengths=[6], unsafe="no"), TypeError),
    (dict(reduce="sum", lengths=[6], initial="z"), TypeError),
]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_refusals_in_torchs_words(case):
    kw, error = BAD[case]
    kw = dict(kw)
    messages = []
    for lib in (st, torch):
        data = lib.tensor(np.arange(6.0))
        args = {k: lib.tensor(v) if isinstance(v, list) else v for k, v in kw.items()}
        with pytest.raises(error) as info:
            lib.segment_reduce(data, **args)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_integer_data_is_refused_as_torch():
    with pytest.raises(NotImplementedError, match="\"_segment_reduce_cpu\" not implemented for 'Long'"):
        st.segment_reduce(st.arange(6), "sum", lengths=st.tensor([2, 4]))
    with pytest.raises(TypeError, match=r"segment_reduce\(\): argument 'data' \(position 1\) must be Tensor"):
        st.segment_reduce([1.0], "sum", lengths=st.tensor([1]))


@pytest.mark.parametrize("kw", [dict(offsets=[0, 2, 9]), dict(lengths=[4, 5], unsafe=True), dict(offsets=[-1, 6])])
def test_segments_past_the_data_are_refused(kw):
    """torch's kernel reads past the data here; strided names the bad segment bounds instead."""
    args = {k: st.tensor(v) if isinstance(v, list) else v for k, v in kw.items()}
    with pytest.raises(RuntimeError, match=r"must lie in \[0, 6\]"):
        st.segment_reduce(st.arange(6.0), "sum", **args)


def test_meta_gives_the_shape():
    out = st.segment_reduce(st.empty(2, 6, 3, device="meta"), "mean", lengths=st.tensor([[2, 4], [6, 0]]).to("meta"),
                            axis=1)
    assert out.shape == (2, 2, 3) and out.device.type == "meta"
