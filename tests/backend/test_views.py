"""View ops through the public API: bad input per op, memory sharing, the view-vs-reshape rule,
torch's Python-level call forms (``x.view(2, 3)``, ``x.permute(1, 0)``, ``x.movedim(0, 1)``) and
``_base`` bookkeeping, on every available backend.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]


def _x(shape=(2, 3, 4), device="cpu"):
    """A base tensor (not a view) holding 0, 1, 2, ... in float32."""
    return st.tensor(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape), device=device)


# ------------------------------------------------------------------------------------- bad input
BAD_INPUT = [
    (
        "view",
        lambda x: x.transpose(0, 1).view(-1),
        RuntimeError,
        "view size is not compatible with input tensor's size and stride (at least one dimension spans "
        "across two contiguous subspaces). Use .reshape(...) instead.",
    ),
    ("view size", lambda x: x.view(5, 5), RuntimeError, "shape '[5, 5]' is invalid for input of size 24"),
    ("view two -1", lambda x: x.view(-1, -1), RuntimeError, "only one dimension can be inferred"),
    ("reshape", lambda x: x.reshape(7, -1), RuntimeError, "shape '[7, -1]' is invalid for input of size 24"),
    (
        "as_strided",
        lambda x: x.as_strided((5, 5), (5, 1)),
        RuntimeError,
        "setStorage: sizes [5, 5], strides [5, 1], storage offset 0, and itemsize 4 requiring a storage "
        "size of 100 are out of bounds for storage of size 96",
    ),
    (
        "transpose",
        lambda x: x.transpose(0, 3),
        IndexError,
        "Dimension out of range (expected to be in range of [-3, 2], but got 3)",
    ),
    ("t", lambda x: x.t(), RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is 3D"),
    (
        "permute count",
        lambda x: x.permute(0, 1),
        RuntimeError,
        "input.dim() = 3 is not equal to len(dims) = 2",
    ),
    (
        "permute repeat",
        lambda x: x.permute(0, 1, 1),
        RuntimeError,
        "permute(): duplicate dims are not allowed.",
    ),
    (
        "movedim",
        lambda x: x.movedim((0, 0), (1, 2)),
        RuntimeError,
        "movedim: repeated dim in `source` ([0, 0])",
    ),
    (
        "expand",
        lambda x: x.expand(2, 5, 4),
        RuntimeError,
        "The expanded size of the tensor (5) must match the existing size (3) at non-singleton dimension 1.  "
        "Target sizes: [2, 5, 4].  Tensor sizes: [2, 3, 4]",
    ),
    (
        "expand_as",
        lambda x: x.expand_as(st.empty(4, device=x.device)),
        RuntimeError,
        "the number of sizes provided (1) must be greater or equal to the number of dimensions in the "
        "tensor (3)",
    ),
    (
        "broadcast_to",
        lambda x: x.broadcast_to((3, 3, 4)),
        RuntimeError,
        "must match the existing size (2) at non-singleton dimension 0",
    ),
    ("squeeze", lambda x: x.squeeze(3), IndexError, "Dimension out of range"),
    (
        "unsqueeze",
        lambda x: x.unsqueeze(4),
        IndexError,
        "Dimension out of range (expected to be in range of [-4, 3], but got 4)",
    ),
    (
        "flatten",
        lambda x: x.flatten(2, 0),
        RuntimeError,
        "flatten() has invalid args: start_dim cannot come after end_dim",
    ),
    (
        "unflatten",
        lambda x: x.unflatten(1, (2, 2)),
        RuntimeError,
        "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input tensor",
    ),
    (
        "narrow",
        lambda x: x.narrow(2, 3, 2),
        RuntimeError,
        "start (3) + length (2) exceeds dimension size (4).",
    ),
    (
        "select",
        lambda x: x.select(1, 3),
        IndexError,
        "select(): index 3 out of range for tensor of size [2, 3, 4] at dimension 1",
    ),
    ("slice", lambda x: st.ops.aten.slice.Tensor(x, 0, 0, 2, 0), RuntimeError, "slice step must be positive"),
    (
        "split",
        lambda x: x.split(-1),
        RuntimeError,
        "split expects split_size be non-negative, but got split_size=-1",
    ),
    (
        "split_with_sizes",
        lambda x: x.split([1, 1], 1),
        RuntimeError,
        "split_with_sizes expects split_sizes to sum exactly to 3",
    ),
    ("chunk", lambda x: x.chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    (
        "unbind",
        lambda x: x.select(0, 0).select(0, 0).select(0, 0).unbind(),
        IndexError,
        "Dimension specified as 0 but tensor has no dimensions",
    ),
    (
        "contiguous",
        lambda x: x.contiguous(memory_format="channels_last"),
        RuntimeError,
        "required rank 4 tensor to use channels_last format",
    ),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("call,exc,message", [pytest.param(*case[1:], id=case[0]) for case in BAD_INPUT])
def test_bad_input(call, exc, message, device):
    with pytest.raises(exc, match=re.escape(message)):
        call(_x(device=device))


# ------------------------------------------------------------------------------------- sharing memory
VIEWS = [
    ("view", lambda x: x.view(6, 4)),
    ("view -1", lambda x: x.view(-1)),
    ("reshape of contiguous", lambda x: x.reshape(4, 6)),
    ("as_strided", lambda x: x.as_strided((2, 2), (1, 4), 1)),
    ("transpose", lambda x: x.transpose(0, 2)),
    ("permute", lambda x: x.permute(2, 0, 1)),
    ("movedim", lambda x: x.movedim(0, 2)),
    ("expand", lambda x: x[:, :1].expand(2, 5, 4)),
    ("squeeze", lambda x: x.unsqueeze(0).squeeze()),
    ("unsqueeze", lambda x: x.unsqueeze(1)),
    ("flatten", lambda x: x.flatten(1)),
    ("unflatten", lambda x: x.unflatten(2, (2, 2))),
    ("narrow", lambda x: x.narrow(1, 1, 2)),
    ("select", lambda x: x.select(2, 3)),
    ("slice", lambda x: st.ops.aten.slice.Tensor(x, 2, 1, None, 2)),
    ("split", lambda x: x.split(2, 1)[1]),
    ("chunk", lambda x: x.chunk(2, 2)[1]),
    ("unbind", lambda x: x.unbind(1)[2]),
    ("detach", lambda x: x.detach()),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make", [pytest.param(m, id=name) for name, m in VIEWS])
def test_views_share_storage(make, device):
    x = _x(device=device)
    v = make(x)
    assert v.untyped_storage() is x.untyped_storage()
    assert v.device == x.device


@pytest.mark.parametrize("make", [pytest.param(m, id=name) for name, m in VIEWS if name != "expand"])
def test_writes_through_views(make):
    x = _x()
    v = make(x)
    v.fill_(-1)
    assert (x.numpy() == -1).sum() == v.numel()
    np.testing.assert_array_equal(v.numpy(), -1)


def test_base_is_the_root():
    x = _x()
    v = x.transpose(0, 1).select(0, 1).unsqueeze(0)
    assert v._base is x and x._base is None
    for piece in x.split(1):
        assert piece._base is x


# ------------------------------------------------------------------------------------- view vs reshape
@pytest.mark.parametrize("device", DEVICES)
def test_view_vs_reshape(device):
    x = _x(device=device)
    t = x.transpose(1, 2)  # (2, 4, 3), strides (12, 1, 4)
    # merging t's dims 1 and 2 (strides 1 and 4) would span two contiguous subspaces: no view
    with pytest.raises(RuntimeError, match="Use .reshape"):
        t.view(2, 12)
    copied = t.reshape(2, 12)
    assert copied.untyped_storage() is not x.untyped_storage() and copied.is_contiguous()
    # splitting a dim or merging dims that are contiguous with each other stays a view
    kept = t.reshape(2, 2, 2, 3)
    assert kept.untyped_storage() is x.untyped_storage() and kept.stride() == (12, 2, 1, 4)
    assert x.permute(1, 0, 2).view(3, 2, 2, 2).stride() == (4, 12, 2, 1)
    if device != "meta":
        np.testing.assert_array_equal(copied.numpy(force=True), t.numpy(force=True).reshape(2, 12))


def test_view_of_size_one_and_zero_size_dims():
    x = _x((3, 1, 4)).transpose(0, 2)  # size-1 dims never block a view
    assert x.view(4, 3).untyped_storage() is x.untyped_storage()
    e = st.empty(0, 3).t()
    assert e.view(0).shape == (0,) and e.view(3, 0, 1).stride() == (1, 1, 1)


def test_contiguous_returns_self_or_copy():
    x = _x()
    assert x.contiguous() is x
    t = x.transpose(0, 1)
    c = t.contiguous()
    assert c is not t and c.is_contiguous() and c.untyped_storage() is not x.untyped_storage()
    n = _x((2, 3, 2, 2))
    cl = n.contiguous(memory_format="channels_last")
    assert cl.stride() == (12, 1, 6, 3) and cl.contiguous(memory_format="channels_last") is cl


# ------------------------------------------------------------------------------------- call forms
def test_varargs_and_sequence_forms():
    x = _x()
    assert x.view(4, 6).shape == x.view((4, 6)).shape == x.view([4, 6]).shape == (4, 6)
    assert x.view(st.Size([24])).shape == (24,)
    assert x.reshape(-1, 2).shape == x.reshape((-1, 2)).shape == (12, 2)
    assert x.permute(2, 1, 0).shape == x.permute((2, 1, 0)).shape == (4, 3, 2)
    assert x[:, :1].expand(2, 3, 4).shape == x[:, :1].expand((2, 3, 4)).shape == (2, 3, 4)
    assert st.reshape(x, (6, 4)).shape == (6, 4) and st.permute(x, (1, 0, 2)).shape == (3, 2, 4)
    assert x.movedim(0, -1).shape == (3, 4, 2) and st.movedim(x, [0, 1], [2, 0]).shape == (3, 4, 2)
    assert x.squeeze(0).shape == (2, 3, 4) and x.unsqueeze(0).squeeze(0).shape == (2, 3, 4)
    assert [p.shape[1] for p in x.split([1, 2], 1)] == [1, 2]
    assert [p.shape[1] for p in x.split(2, 1)] == [2, 1]
    assert [p.shape[0] for p in st.chunk(x, 2)] == [1, 1]


def test_expand_strides_and_values():
    x = st.arange(3.0)
    e = x.expand(4, -1)
    assert e.stride() == (0, 1)
    np.testing.assert_array_equal(e.numpy(), np.broadcast_to(np.arange(3.0), (4, 3)))
    assert st.tensor(5.0).expand(2, 2).stride() == (0, 0)


def test_slice_clamps_like_python():
    x = _x((10,))
    for start, end, step in [(-3, None, 1), (2, 100, 3), (8, 2, 1), (-100, 4, 2), (None, -1, 4)]:
        got = st.ops.aten.slice.Tensor(x, 0, start, end, step).numpy()
        np.testing.assert_array_equal(got, np.arange(10.0)[start:end:step])


def test_unbind_and_chunk_edge_cases():
    assert x_shapes(_x((0, 3)).unbind(0)) == []
    assert x_shapes(_x((0, 3)).chunk(3)) == [(0, 3)] * 3
    assert x_shapes(_x((5,)).chunk(3)) == [(2,), (2,), (1,)]
    assert x_shapes(_x((6,)).chunk(4)) == [(2,), (2,), (2,)]  # torch: fewer chunks than asked


def x_shapes(tensors):
    return [tuple(t.shape) for t in tensors]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("call, where", [
    (lambda x: x.view(True, 12), r"view\(\): argument 'size' must be tuple of ints, but found element of type bool "
                                 r"at pos 0"),
    (lambda x: x.reshape(2, True, 12), r"reshape\(\): argument 'shape' .* bool at pos 1"),
    (lambda x: x.permute(True, 0, 2), r"permute\(\): argument 'dims' .* bool at pos 0"),
    (lambda x: x.expand(True, 3, 4), r"expand\(\): argument 'size' .* bool at pos 0")])
def test_bool_sizes_are_rejected(call, where, device):
    # torch's int[] arguments take no bools (operator.index(True) would read 1)
    with pytest.raises(TypeError, match=where):
        call(_x(device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_view_memo_gives_the_same_geometry_as_the_first_call(device):
    x = _x((4, 6), device)
    for _ in range(3):  # the first call computes, the later ones read the memo (Note [View memo])
        v = x.t().reshape(24)  # not viewable: a copy
        assert v._base is not x and v.shape == (24,)
        w = x.view(2, -1, 3)
        assert w.shape == (2, 4, 3) and w.stride() == (12, 3, 1) and w._base is x
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            x.t().view(24)
    assert x.view(2, 12).shape == (2, 12)
    with pytest.raises(TypeError):
        x.view(2.0, 12)  # 2.0 == 2: must not find the memo entry of (2, 12)


@pytest.mark.parametrize("device", DEVICES)
def test_expand_memo_gives_the_same_geometry_and_errors_on_every_call(device):
    x = _x((3, 1), device)
    for _ in range(3):  # the first call computes, the later ones read the memo (Note [Expand memo])
        e = x.expand(2, 3, 4)
        assert e.shape == (2, 3, 4) and e.stride() == (0, 1, 0) and e._base is x
        assert x.expand(-1, 5).shape == (3, 5)
        assert x.t().expand(7, 3).stride() == (0, 1)
        with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(4\) must match the existing "
                                               r"size \(3\) at non-singleton dimension 0"):
            x.expand(4, 4)
        with pytest.raises(RuntimeError, match="isn't allowed in a leading, non-existing dimension 0"):
            x.expand(-1, 3, 1)
    with pytest.raises(TypeError):
        x.expand(2.0, 3, 4)  # 2.0 == 2: must not find the memo entry of (2, 3, 4)


def test_T_of_other_ranks_reverses_with_torchs_warning():
    """torch 2.x still reverses every dim for x.T when x is not 2-D, with a deprecation warning."""
    x = st.arange(24.0).view(2, 3, 4)
    with pytest.warns(UserWarning, match="The use of `x.T` on tensors of dimension other than 2"):
        t = x.T
    assert tuple(t.shape) == (4, 3, 2) and t.stride() == (1, 4, 12) and t.untyped_storage() is x.untyped_storage()


def test_memory_format_constants_and_resize_varargs():
    """strided.channels_last / contiguous_format / preserve_format are torch's names for the format strings, so
    torch code runs unchanged; resize_ takes sizes as varargs, as torch's."""
    assert st.channels_last == "channels_last" and repr(st.channels_last) == "strided.channels_last"
    y = st.ones(1, 3, 4, 4).contiguous(memory_format=st.channels_last)
    assert y.stride() == (48, 1, 12, 3) and y.is_contiguous(memory_format=st.channels_last)
    assert st.empty(2, 3, 4, 5, memory_format=st.contiguous_format).is_contiguous()
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        st.ones(2, 3, 4).contiguous(memory_format=st.channels_last)
    assert tuple(st.ones(6).resize_(2, 2).shape) == (2, 2) and tuple(st.ones(6).resize_((3,)).shape) == (3,)
