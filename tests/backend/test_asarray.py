"""``strided.asarray`` against torch.asarray: what is shared, what is copied, and the refusals of copy=False."""

from __future__ import annotations

import array

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")


def test_tensors_are_returned_or_copied_as_torch():
    t = st.ones(3, requires_grad=True) * 2
    assert st.asarray(t) is t
    alias = st.asarray(t, requires_grad=False)
    assert not alias.requires_grad and alias.data_ptr() == t.data_ptr()
    copied = st.asarray(t, copy=True)
    assert copied.requires_grad and copied.grad_fn is not None and copied.data_ptr() != t.data_ptr()
    assert st.asarray(t, dtype=st.float64).dtype is st.float64
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'Float' into dtype 'Double'."):
        st.asarray(t, dtype=st.float64, copy=False)
    with pytest.raises(ValueError, match="can't alias tensor from device 'cpu' to 'meta'."):
        st.asarray(t, device="meta", copy=False)


def test_numpy_arrays_and_buffers_are_shared():
    n = np.arange(3.0)
    shared, copied = st.asarray(n), st.asarray(n, copy=True)
    n[0] = 7
    assert shared.tolist() == [7.0, 1.0, 2.0] and copied.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'Double' into dtype 'Float'."):
        st.asarray(n, dtype=st.float32, copy=False)
    buf = array.array("d", [1, 2])  # read as the default dtype, as torch does
    assert st.asarray(buf).tolist() == torch.asarray(buf).tolist()
    raw = bytearray(8)
    st.asarray(raw, dtype=st.int32)[0] = 5
    assert raw[:4] == b"\x05\x00\x00\x00"
    with pytest.raises(ValueError, match=r"buffer length \(2 bytes\) after offset \(0 bytes\) must be a multiple of "
                                         r"element size \(4\)"):
        st.asarray(bytearray(b"\x01\x02"))


def test_sequences_scalars_and_dlpack_objects():
    for obj in (3.5, [1, 2], [[1.0, 2.0]], np.float32(2), True):
        got, want = st.asarray(obj), torch.asarray(obj)
        assert got.tolist() == want.tolist() and got.dtype.name == str(want.dtype).removeprefix("torch.")
    with pytest.raises(ValueError, match="can't alias arbitrary sequence into a tensor."):
        st.asarray([1, 2], copy=False)
    theirs = torch.arange(3.0)
    ours = st.asarray(theirs)
    theirs[0] = 9
    assert ours.tolist() == [9.0, 1.0, 2.0]  # zero-copy through __dlpack__
