"""Interop: ``Tensor.numpy``/``__array__``, DLPack both ways (NumPy, strided, torch when installed),
and ``Tensor.to``.
"""

from __future__ import annotations

import gc
import importlib.util

import ml_dtypes
import numpy as np
import pytest

import strided as st
from strided import interop
from strided.testing import available_devices

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (it is only a yardstick)")
HAS_CUDA = "cuda" in available_devices()


def _live_after_gc() -> int:
    gc.collect()
    return len(interop._LIVE)


# ------------------------------------------------------------------------------------- numpy()
def test_numpy_shares_memory():
    t = st.arange(12.0).view(3, 4).t()
    a = t.numpy()
    assert a.shape == (4, 3) and a.strides == (4, 16)
    a[0, 1] = -1
    assert t[0, 1].item() == -1
    assert np.shares_memory(np.asarray(t), a)


def test_numpy_keeps_storage_alive():
    a = st.from_numpy(np.arange(6.0)).numpy()  # the tensor and its storage are gone after this line
    gc.collect()
    np.testing.assert_array_equal(a, np.arange(6.0))


@pytest.mark.parametrize("dtype", [st.bfloat16, st.float16, st.bool, st.uint8, st.int64])
def test_numpy_dtypes(dtype):
    t = st.ones(2, 3, dtype=dtype)
    a = t.numpy()
    assert a.dtype == dtype.numpy_dtype and a.shape == (2, 3)
    assert st.from_numpy(a).dtype is dtype


def test_numpy_zero_dim_and_empty():
    assert st.tensor(2.5).numpy().shape == () and st.tensor(2.5).numpy()[()] == 2.5
    assert st.empty(0, 3).numpy().shape == (0, 3)
    assert np.asarray(st.tensor([1, 2]), dtype=np.float64).dtype == np.float64


def test_numpy_errors():
    with pytest.raises(
        RuntimeError,
        match=r"Can't call numpy\(\) on Tensor that requires grad. "
        r"Use tensor.detach\(\).numpy\(\) instead.",
    ):
        st.ones(2, requires_grad=True).numpy()
    np.testing.assert_array_equal(st.ones(2, requires_grad=True).numpy(force=True), [1, 1])
    with st.no_grad():  # torch refuses only while grad mode is on
        np.testing.assert_array_equal(st.ones(2, requires_grad=True).numpy(), [1, 1])
        np.testing.assert_array_equal(np.asarray(st.ones(2, requires_grad=True)), [1, 1])
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        st.ones(2, device="meta").numpy()


@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
def test_numpy_of_cuda_tensors():
    t = st.arange(4.0, device="cuda")
    with pytest.raises(
        TypeError,
        match=r"can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu\(\) to "
        r"copy the tensor to host memory first.",
    ):
        t.numpy()
    np.testing.assert_array_equal(t.numpy(force=True), np.arange(4.0))


# ------------------------------------------------------------------------------------- DLPack
def test_dlpack_device():
    assert st.ones(2).__dlpack_device__() == (1, 0)
    with pytest.raises(ValueError, match="Unknown device type meta for Dlpack"):
        st.ones(2, device="meta").__dlpack_device__()
    with pytest.raises(BufferError, match="Cannot pack tensors on meta"):
        st.ones(2, device="meta").__dlpack__()


@pytest.mark.parametrize(
    "make",
    [
        lambda: st.arange(12.0).view(3, 4),
        lambda: st.arange(24).view(2, 3, 4).permute(2, 0, 1)[1:, :, ::2],
        lambda: st.tensor(3.5),
        lambda: st.tensor([True, False, True]),
        lambda: st.empty(0, 3),
        lambda: st.arange(6, dtype=st.uint8).view(2, 3).t(),
    ],
    ids=["contiguous", "strided view", "0-dim", "bool", "zero-size", "uint8 transposed"],
)
def test_numpy_from_dlpack_shares_memory(make):
    t = make()
    a = np.from_dlpack(t)
    assert a.shape == tuple(t.shape) and a.dtype == t.dtype.numpy_dtype
    np.testing.assert_array_equal(a, t.numpy())
    if t.numel():
        assert a.ctypes.data == t.data_ptr()
        assert a.strides == tuple(s * t.element_size() for s in t.stride())


@pytest.mark.parametrize(
    "array",
    [
        np.arange(12.0).reshape(3, 4),
        np.arange(24, dtype=np.int32).reshape(2, 3, 4).transpose(2, 0, 1)[:, 1:, ::2],
        np.array(7, dtype=np.int16),
        np.array([True, False]),
        np.zeros((0, 2), dtype=np.float32),
    ],
    ids=["contiguous", "strided", "0-dim", "bool", "zero-size"],
)
def test_from_dlpack_numpy_shares_memory(array):
    t = st.from_dlpack(array)
    assert tuple(t.shape) == array.shape and t.dtype.numpy_dtype == array.dtype
    np.testing.assert_array_equal(t.numpy(), array)
    if array.size:
        assert t.data_ptr() == array.ctypes.data
        t.fill_(1)
        assert np.all(array == 1)


def test_from_dlpack_keeps_the_producer_alive():
    a = np.arange(1000.0)
    t = st.from_dlpack(a)
    del a
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), np.arange(1000.0))


def test_bfloat16_round_trip_through_a_capsule():
    t = st.from_numpy(np.arange(6, dtype=np.float32).astype(ml_dtypes.bfloat16)).view(2, 3).t()
    back = st.from_dlpack(t.__dlpack__(max_version=(1, 0)))
    assert back.dtype is st.bfloat16 and back.stride() == (1, 3) and back.data_ptr() == t.data_ptr()
    np.testing.assert_array_equal(back.numpy(), t.numpy())


@pytest.mark.parametrize(
    "max_version,name",
    [
        (None, "dltensor"),
        ((0, 8), "dltensor"),
        ((1, 0), "dltensor_versioned"),
        ((1, 3), "dltensor_versioned"),
    ],
)
def test_capsule_kinds(max_version, name):
    t = st.arange(4.0)
    capsule = t.__dlpack__(max_version=max_version)
    assert f'"{name}"' in repr(capsule)
    back = st.from_dlpack(capsule)
    assert back.data_ptr() == t.data_ptr()
    assert '"used_' in repr(capsule)
    with pytest.raises(BufferError, match="has not been consumed yet"):
        st.from_dlpack(capsule)


def test_capsules_are_released():
    baseline = _live_after_gc()
    t = st.arange(4.0)
    for kwargs in ({}, {"max_version": (1, 0)}):
        t.__dlpack__(**kwargs)  # never consumed: the capsule destructor frees it
        assert _live_after_gc() == baseline
        back = st.from_dlpack(t.__dlpack__(**kwargs))
        assert _live_after_gc() == baseline + 1  # the consumer owns it until its tensor dies
        del back
        assert _live_after_gc() == baseline
    a = np.from_dlpack(t)
    assert _live_after_gc() == baseline + 1
    del a
    assert _live_after_gc() == baseline


def test_dlpack_options():
    t = st.arange(4.0)
    copy = st.from_dlpack(t.__dlpack__(copy=True))
    assert copy.data_ptr() != t.data_ptr() and copy.tolist() == t.tolist()
    assert st.from_dlpack(t.__dlpack__(dl_device=(1, 0))).data_ptr() == t.data_ptr()
    with pytest.raises(BufferError, match=r"DLPack export to device \(2, 0\) is not supported"):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(
        BufferError, match=r"Can't export tensors that require gradient, use tensor.detach\(\)"
    ):
        st.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(TypeError, match="from_dlpack: expected an object with __dlpack__"):
        st.from_dlpack([1, 2])
    assert st.from_dlpack(t).data_ptr() == t.data_ptr()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_rejected_capsule_is_still_freed():
    """NumPy refuses bfloat16, so the capsule dies with an exception pending: it is still freed, but
    pure Python can't keep NumPy's error (Note [Borrowed capsule destructor])."""
    baseline = _live_after_gc()
    t = st.ones(2, dtype=st.bfloat16)
    with pytest.raises((BufferError, SystemError)):
        np.from_dlpack(t)
    assert _live_after_gc() == baseline


@needs_torch
def test_torch_round_trips():
    import torch

    t = st.arange(24.0).view(2, 3, 4).permute(2, 0, 1)[1:]
    tt = torch.from_dlpack(t)
    assert tt.shape == t.shape and tt.stride() == t.stride() and tt.data_ptr() == t.data_ptr()
    tt.mul_(2)
    np.testing.assert_array_equal(t.numpy(), tt.numpy())
    back = st.from_dlpack(tt)
    assert back.data_ptr() == tt.data_ptr() and back.stride() == tt.stride()
    bf = torch.arange(6, dtype=torch.bfloat16).view(2, 3)
    b = st.from_dlpack(bf)
    assert b.dtype is st.bfloat16 and b.tolist() == bf.tolist()
    assert torch.from_dlpack(b).dtype == torch.bfloat16
    assert torch.from_dlpack(st.tensor([True, False])).tolist() == [True, False]
    assert torch.from_dlpack(st.tensor(1.5)).shape == ()


# ------------------------------------------------------------------------------------- Tensor.to
def test_to_returns_self_when_nothing_changes():
    t = st.ones(2, 3).t()
    assert t.to(st.float32) is t and t.to("cpu") is t and t.to(t) is t and t.to() is t
    assert t.to(memory_format="contiguous_format") is t  # a 2-d tensor suggests contiguous_format
    copy = t.to(copy=True)
    assert copy is not t and copy.stride() == t.stride() and copy.untyped_storage() is not t.untyped_storage()


def test_to_forms():
    t = st.arange(4.0)
    assert t.to(st.int32).dtype is st.int32 and t.to(st.int32).tolist() == [0, 1, 2, 3]
    assert t.to("cpu", st.float64).dtype is st.float64
    assert t.to(device="meta", dtype=st.int64).device.type == "meta"
    assert t.to(st.device("meta")).shape == (4,)
    assert t.to(st.ones(1, dtype=st.bool)).dtype is st.bool
    assert t.to(st.float16, False, True).dtype is st.float16
    assert t.half().dtype is st.float16 and t.long().dtype is st.int64 and t.cpu() is t
    m = st.ones(2, 3, 4, 5)
    assert m.to(memory_format="channels_last").stride() == (60, 1, 15, 3)


def test_to_bad_arguments():
    t = st.ones(2)
    for args, kwargs in [
        ((st.float64, st.float64), {}),
        ((st.float32,), {"foo": 1}),
        ((1.5,), {}),
        ((st.float32, True, True, True), {}),
        ((t,), {"dtype": st.float64}),
    ]:
        with pytest.raises(TypeError, match="to\\(\\) received an invalid combination of arguments"):
            t.to(*args, **kwargs)
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, meta device type"):
        t.to("foo")


def test_from_dlpack_device_and_copy_follow_the_array_api():
    a = np.arange(4.0)
    shared = st.from_dlpack(a, device="cpu")  # already there: no copy
    copied = st.from_dlpack(a, copy=True)
    refused = st.from_dlpack(a, copy=False)
    a[0] = 7.0
    assert shared[0].item() == 7.0 and refused[0].item() == 7.0 and copied[0].item() == 0.0
    assert st.from_dlpack(a, device=st.device("cpu"), copy=True)[0].item() == 7.0
    with pytest.raises(TypeError, match="copy must be a bool or None"):
        st.from_dlpack(a, copy="yes")
    with pytest.raises(AssertionError, match="not supported when ext_tensor is already a DLPack capsule"):
        st.from_dlpack(st.ones(2).__dlpack__(), copy=True)
    if HAS_CUDA:
        moved = st.from_dlpack(a, device="cuda")
        assert moved.device.type == "cuda" and moved.cpu().tolist() == a.tolist()
        with pytest.raises(BufferError, match="needs a copy, and copy=False"):
            st.from_dlpack(a, device="cuda", copy=False)
        back = st.from_dlpack(moved, device="cpu")
        assert back.device.type == "cpu" and back.tolist() == a.tolist()


def test_operators_take_numpy_arrays_as_tensors_as_torchs_do():
    # Note [NumPy operands]: `==` used to fall back to identity and answer False
    t, a = st.ones(2), np.array([1.0, 3.0])
    eq = t == a
    assert isinstance(eq, st.Tensor) and eq.tolist() == [True, False]
    assert (t != a).tolist() == [False, True] and (t < a).tolist() == [False, True]
    s = t + a
    assert s.dtype == st.float64 and s.tolist() == [2.0, 4.0]  # a float64 array promotes, as torch's
    assert (a - t).tolist() == [0.0, 2.0] and (a * t).tolist() == [1.0, 3.0]  # reflected through the tensor
    assert (np.arange(4).reshape(2, 2) @ st.ones(2, dtype=st.int64)).tolist() == [1, 5]
    assert (np.full(2, 2.0) / t).tolist() == [2.0, 2.0]  # torch's __rdiv__ takes an array too
    u = st.ones(2)
    u += a  # in place (torch rebinds u to u + a, a float64 tensor, through its NotImplemented fallback)
    assert u.dtype == st.float32 and u.tolist() == [2.0, 4.0]
    with pytest.raises(TypeError, match="add"):  # the function form refuses an array, as torch.add does
        st.add(t, a)


class _Producer:
    """Another library's tensor, as far as strided can tell: a DLPack producer that is not a NumPy array."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_tensor_as_tensor_and_load_state_dict_take_foreign_tensors():
    """Note [Foreign tensors]: DLPack, not NumPy's __array__ -- bfloat16 works, tensor copies, as_tensor shares."""
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    copied = st.tensor(_Producer(base))
    shared = st.as_tensor(_Producer(base))
    base[0, 0] = 100
    assert copied[0, 0].item() == 0 and shared[0, 0].item() == 100
    assert st.tensor(_Producer(base), dtype=st.float64).dtype is st.float64
    bf = st.tensor(_Producer(st.ones(3, dtype=st.bfloat16)))  # NumPy cannot export bfloat16 by DLPack
    assert bf.dtype is st.bfloat16 and bf.tolist() == [1.0, 1.0, 1.0]
    assert st.tensor(_Producer(base), requires_grad=True).requires_grad
    lin = st.nn.Linear(3, 2)
    state = {"weight": _Producer(np.full((2, 3), 0.5, np.float32)), "bias": _Producer(np.zeros(2, np.float32))}
    assert str(lin.load_state_dict(state)) == "<All keys matched successfully>"
    assert lin.weight.detach().tolist() == [[0.5] * 3] * 2


def test_torch_tensors_and_state_dicts_come_in_by_dlpack():
    torch = pytest.importorskip("torch")
    t = torch.arange(6.0).view(2, 3)[:, 1:]
    assert st.tensor(t).tolist() == [[1.0, 2.0], [4.0, 5.0]]
    assert st.tensor(torch.ones(2, dtype=torch.bfloat16)).dtype is st.bfloat16
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4))
    mine = st.nn.Sequential(st.nn.Linear(3, 4), st.nn.LayerNorm(4))
    assert str(mine.load_state_dict(model.state_dict())) == "<All keys matched successfully>"
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(mine(st.tensor(x)).detach().numpy(), model(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
