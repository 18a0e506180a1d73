"""Python indexing (``x[i]``, ``x[i] = v``) against NumPy, views sharing memory, and the indexing
ops' data-dependent errors (index values out of bounds), which meta tensors cannot raise and the
op database therefore does not cover.

The NumPy reference follows Note [Indexing as views] in ``strided/indexing.py``: the basic part of
the index (ints, slices, None, Ellipsis) is applied first as a NumPy view, then the tensor parts
with NumPy's advanced indexing on that view. It differs from a single NumPy index only in that an
int is never an advanced index (torch's rule).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import strided as st
from strided.dispatch.dispatcher import NotImplementedForBackend
from strided.testing import available_devices

DEVICES = [d for d in available_devices() if d != "meta"]


def _on(device, call):
    """Run ``call``; on CUDA an op without a CUDA kernel yet is an honest skip.

    On CUDA the device is synchronized afterwards: an out-of-range index found by a kernel is
    reported at the next synchronizing call (Note [Deferred index errors]).
    """
    try:
        out = call()
        if device == "cuda":
            st.cuda.synchronize()
        return out
    except NotImplementedForBackend as e:
        if device == "cuda" and "'CUDA' backend" in str(e):
            pytest.skip(f"no CUDA kernel yet: {e}")
        raise


def _tensor(a: np.ndarray, device="cpu"):
    return st.tensor(a, device=device)


def _numpy(t) -> np.ndarray:
    return t.numpy(force=True)


# ------------------------------------------------------------------------------------------ reference
def _to_strided_index(index, device):
    """The test index with NumPy arrays replaced by tensors (lists stay lists).

    On the CPU, 1-d arrays become stride-2 views: index tensors need not be contiguous.
    """
    def conv(obj):
        if not isinstance(obj, np.ndarray):
            return obj
        if device == "cpu" and obj.ndim == 1 and obj.size > 1:
            wide = np.repeat(obj, 2)
            return st.from_numpy(wide)[::2]
        return _tensor(obj, device)

    return tuple(conv(o) for o in index) if isinstance(index, tuple) else conv(index)


def _numpy_parts(a: np.ndarray, index):
    """Split ``index`` into a basic NumPy index and the advanced one applied to its view."""
    items = index if isinstance(index, tuple) else (index,)
    basic, advanced, has_advanced = [], [], False
    for obj in items:
        if isinstance(obj, list):
            obj = np.asarray(obj) if len(obj) else np.zeros(0, np.intp)
        if obj is None or isinstance(obj, slice):
            basic.append(obj)
            advanced.append(slice(None))
        elif obj is Ellipsis:
            basic.append(obj)
            advanced.append(obj)
        elif isinstance(obj, bool):
            basic.append(None)
            advanced.append(np.arange(1 if obj else 0))
            has_advanced = True
        elif isinstance(obj, (int, np.integer)):
            basic.append(int(obj))
        else:
            basic.extend([slice(None)] * (obj.ndim if obj.dtype == np.bool_ else 1))
            advanced.append(obj)
            has_advanced = True
    return tuple(basic), (tuple(advanced) if has_advanced else None)


def _torch_adjacency(view: np.ndarray, advanced):
    """Drop an Ellipsis that expands to no dims: torch (unlike NumPy) then treats the advanced
    indices around it as adjacent, so their dims stay in place instead of moving to the front
    (torch 2.13: ``zeros(2, 3)[:, [0], ..., [1]]`` has shape (2, 1); NumPy gives (1, 2))."""
    if advanced is None or not any(o is Ellipsis for o in advanced):
        return advanced
    used = sum(o.ndim if isinstance(o, np.ndarray) and o.dtype == np.bool_ else 1
               for o in advanced if o is not Ellipsis)
    if used == view.ndim:
        return tuple(o for o in advanced if o is not Ellipsis)
    return advanced


def numpy_getitem(a: np.ndarray, index) -> np.ndarray:
    basic, advanced = _numpy_parts(a, index)
    view = a[basic]
    return view if advanced is None else view[_torch_adjacency(view, advanced)]


def numpy_setitem(a: np.ndarray, index, value) -> None:
    """``a[index] = value``; as torch, leading size-1 dims of the value are dropped first."""
    basic, advanced = _numpy_parts(a, index)
    value = np.asarray(value)
    while value.ndim and value.shape[0] == 1:
        value = value[0]
    if advanced is None:
        a[basic] = value
    else:
        view = a[basic]  # with a tensor part, a[basic] is an array view
        view[_torch_adjacency(view, advanced)] = value


# ------------------------------------------------------------------------------------------ hypothesis
@hs.composite
def _indexed(draw):
    """A small array and a random index of every kind that fits its shape."""
    ndim = draw(hs.integers(0, 4))
    shape = tuple(draw(hs.lists(hs.integers(0, 4), min_size=ndim, max_size=ndim)))
    a = (np.arange(int(np.prod(shape)), dtype=np.float64) - 7).reshape(shape)
    length = draw(hs.integers(0, 3))  # of every list / array index, so that most broadcast
    items, d = [], 0
    ellipsis_left = True
    for _ in range(draw(hs.integers(0, 5))):
        kind = draw(hs.sampled_from(["int", "slice", "none", "ellipsis", "bool", "list", "array", "mask"]))
        if kind == "none":
            items.append(None)
        elif kind == "bool":
            items.append(draw(hs.booleans()))
        elif kind == "ellipsis" and ellipsis_left:
            items.append(Ellipsis)
            ellipsis_left = False
            d = draw(hs.integers(d, ndim))  # the items after it index the last ndim - d dims
        elif d >= ndim:
            continue
        elif kind == "int" and shape[d]:
            items.append(draw(hs.integers(-shape[d], shape[d] - 1)))
            d += 1
        elif kind == "slice":
            bound = hs.none() | hs.integers(-6, 6)
            items.append(slice(draw(bound), draw(bound), draw(hs.none() | hs.integers(1, 3))))
            d += 1
        elif kind in ("list", "array") and shape[d]:
            values = draw(hs.lists(hs.integers(-shape[d], shape[d] - 1), min_size=length, max_size=length))
            items.append(values if kind == "list" else np.asarray(values, dtype=np.int64))
            d += 1
        elif kind == "mask":
            mask_shape = shape[d:d + draw(hs.integers(1, ndim - d))]
            n = int(np.prod(mask_shape))
            bits = draw(hs.lists(hs.booleans(), min_size=n, max_size=n))
            items.append(np.asarray(bits, dtype=bool).reshape(mask_shape))
            d += len(mask_shape)
    if not ellipsis_left:
        items.extend([slice(None)] * (ndim - d))  # index the last dims exactly
    index = tuple(items) if draw(hs.booleans()) or len(items) != 1 else items[0]
    return a, index


def _broadcast_ok(shapes) -> bool:
    try:
        np.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False


def _advanced_shapes(a, index):
    _, advanced = _numpy_parts(a, index)
    if advanced is None:
        return []
    out = []
    for o in advanced:
        if isinstance(o, np.ndarray):
            out.extend([(int(o.sum()),)] * o.ndim if o.dtype == np.bool_ else [o.shape])
    return out


@settings(max_examples=300, deadline=None)
@given(_indexed())
def test_getitem_matches_numpy(case):
    a, index = case
    if not _broadcast_ok(_advanced_shapes(a, index)):
        with pytest.raises(IndexError, match="shape mismatch"):
            st.from_numpy(a)[_to_strided_index(index, "cpu")]
        return
    expected = numpy_getitem(a, index)
    got = st.from_numpy(a)[_to_strided_index(index, "cpu")]
    assert got.shape == expected.shape, (index, got.shape, expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected)


@settings(max_examples=200, deadline=None)
@given(_indexed(), hs.data())
def test_setitem_matches_numpy(case, data):
    a, index = case
    if not _broadcast_ok(_advanced_shapes(a, index)):
        return
    target = numpy_getitem(a, index).shape
    # a value that broadcasts to the indexed shape: full, trailing dims, with leading 1s, or a scalar
    trail = data.draw(hs.integers(0, len(target)))
    shape = data.draw(hs.sampled_from([target, target[trail:], (1, 1) + target[trail:]]))
    use_scalar = data.draw(hs.booleans())
    value = 2.5 if use_scalar else (np.arange(int(np.prod(shape)), dtype=np.float64) + 100).reshape(shape)
    expected = a.copy()
    numpy_setitem(expected, index, value)
    x = st.from_numpy(a.copy())
    x[_to_strided_index(index, "cpu")] = value if use_scalar else st.from_numpy(value)
    np.testing.assert_array_equal(x.numpy(), expected)


# ------------------------------------------------------------------------------------------ semantics
@pytest.mark.parametrize("device", DEVICES)
def test_indexing_examples(device):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = _tensor(a, device)
    cases = [
        (1, (3, 4)), (-1, (3, 4)), ((0, 2, -1), ()), (slice(1, None), (1, 3, 4)), ((..., 0), (2, 3)),
        ((None, 0, ..., None), (1, 3, 4, 1)), (True, (1, 2, 3, 4)), (False, (0, 2, 3, 4)),
        ([1, 0], (2, 3, 4)), ((0, slice(None), [0, 1]), (3, 2)), (([0, 1], slice(None), [0, 1]), (2, 3)),
        (([0, 1], None, [0, 1]), (2, 1, 4)), ((slice(None), [[0], [2]], [1, 3]), (2, 2, 2)),
        (np.array([[True, False, True]] * 2), (4, 4)), ((np.array([True, False, True]),), (0,)),
    ]
    for index, shape in cases[:-1]:
        got = _on(device, lambda index=index: x[_to_strided_index(index, device)])
        assert tuple(got.shape) == shape, index
        np.testing.assert_array_equal(_numpy(got), numpy_getitem(a, index), err_msg=str(index))
    # a 0-dim integer tensor indexes like an int (a view); a 0-dim bool like a Python bool
    assert x[st.tensor(1, device=device)].shape == (3, 4)
    assert x[st.tensor(1, device=device)].untyped_storage() is x.untyped_storage()
    assert _on(device, lambda: x[st.tensor(True, device=device)]).shape == (1, 2, 3, 4)
    # slices take tensors and NumPy ints as bounds
    assert x[:, st.tensor(1):np.int64(3)].shape == (2, 2, 4)


@pytest.mark.parametrize("device", DEVICES)
def test_basic_indexing_returns_views(device):
    x = _tensor(np.arange(20.0).reshape(4, 5), device)
    v = x[1:, ::2]
    assert v.shape == (3, 3) and v.stride() == (5, 2) and v.untyped_storage() is x.untyped_storage()
    v[0, 0] = -1.0  # writing through the view changes x
    v[1:] = st.tensor([[7.0, 8.0, 9.0]], device=device)
    expected = np.arange(20.0).reshape(4, 5)
    expected[1, 0] = -1
    expected[2:, ::2] = [7, 8, 9]
    np.testing.assert_array_equal(_numpy(x), expected)
    for view in (x[2], x[None], x[...], x[:], x[..., 1], x[:, 1:2]):
        assert view.untyped_storage() is x.untyped_storage()
    assert x[...] is not x and x[:] is not x
    x[1:, ::2] = 0  # a scalar fills the view
    expected[1:, ::2] = 0
    np.testing.assert_array_equal(_numpy(x), expected)


@pytest.mark.parametrize("device", DEVICES)
def test_setitem_values(device):
    x = _tensor(np.zeros((3, 4), np.int64), device)
    x[0] = 2.7  # scalars are cast to the tensor's dtype
    x[1] = st.tensor([1.5, 2.5, 3.5, 4.5], dtype=st.float64, device=device)  # basic: copy_ casts
    x[2] = st.ones(1, 1, 4, dtype=st.int64, device=device)  # leading 1s are dropped
    np.testing.assert_array_equal(_numpy(x), [[2] * 4, [1, 2, 3, 4], [1] * 4])
    _on(device, lambda: x.__setitem__(x > 1, 9))  # a mask with a scalar
    np.testing.assert_array_equal(_numpy(x), [[9] * 4, [1, 9, 9, 9], [1] * 4])
    _on(device, lambda: x.__setitem__(([0, 0], [1, 1]), st.tensor([5, 6], device=device)))
    assert x[0, 1].item() in (5, 6)  # duplicate targets: one of the values
    x[True] = 4
    assert (_numpy(x) == 4).all()
    x[False] = 5  # selects nothing
    assert (_numpy(x) == 4).all()
    y = _tensor(np.zeros(5), device)
    mask = st.tensor([True, False, True, False, False], device=device)
    # torch's masked_fill shortcut: a one-element CPU value through a single mask is cast
    _on(device, lambda: y.__setitem__(mask, st.tensor([1], dtype=st.int64)))
    np.testing.assert_array_equal(_numpy(y), [1, 0, 1, 0, 0])
    if device != "cpu":  # on the tensor's own device the value goes to index_put_, which needs equal dtypes
        with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
            y[mask] = st.tensor([1], dtype=st.int64, device=device)


def test_index_errors():
    x = st.zeros(3, 4)
    raises = [
        (lambda: x[5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
        (lambda: x[-4], IndexError, "index -4 is out of bounds for dimension 0 with size 3"),
        (lambda: x[None, 0, 9], IndexError, "index 9 is out of bounds for dimension 1 with size 4"),
        (lambda: x[0, 0, 0], IndexError, "too many indices for tensor of dimension 2"),
        (lambda: x[::-1], ValueError, "step must be greater than zero"),
        (lambda: x[:, ::0], ValueError, "slice step cannot be zero"),
        (lambda: x[1.5], IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                                     "Variables are valid indices (got float)"),
        (lambda: x[..., ...], IndexError, "an index can only have a single ellipsis ('...')"),
        (lambda: x[st.tensor([0.5])], IndexError,
         "tensors used as indices must be long, int, byte or bool tensors"),
        (lambda: x[st.tensor([0, 3])], IndexError, "index 3 is out of bounds for dimension 0 with size 3"),
        (lambda: x[:, [0, -5]], IndexError, "index -5 is out of bounds for dimension 0 with size 4"),
        (lambda: x[[0, 1], [0, 1, 2]], IndexError, "shape mismatch: indexing tensors could not be broadcast "
                                                   "together with shapes [2], [3]"),
        (lambda: x[st.ones(4, dtype=st.bool)], IndexError,
         "The shape of the mask [4] at index 0 does not match the shape of the indexed tensor [3, 4] at "
         "index 0"),
        (lambda: st.tensor(1.0)[0], IndexError, "invalid index of a 0-dim tensor. Use `tensor.item()`"),
        (lambda: x.__setitem__(0, [1, 2]), TypeError, "can't assign a list to a strided.FloatTensor"),
        (lambda: x.__setitem__(0, np.ones(2)), TypeError, "can't assign a numpy.ndarray to a strided.FloatTensor"),
        (lambda: x.__setitem__(0, st.ones(3)), RuntimeError,
         "The expanded size of the tensor (4) must match"),
        (lambda: x.__setitem__([0], st.ones(4, dtype=st.float64)), RuntimeError,
         "Index put requires the source and destination dtypes match, got Float for the destination and "
         "Double for the source."),
        (lambda: x.__setitem__([0, 1], st.ones(3)), RuntimeError,
         "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2, 4]"),
    ]
    for call, exc, message in raises:
        with pytest.raises(exc, match=re.escape(message)):
            call()


def test_uint8_mask_is_deprecated_but_works():
    x = st.arange(6).view(2, 3)
    with pytest.warns(UserWarning, match="indexing with dtype strided.uint8 is now deprecated"):
        got = x[st.tensor([1, 0], dtype=st.uint8)]
    np.testing.assert_array_equal(got.numpy(), [[0, 1, 2]])


def test_meta_indexing_shapes():
    x = st.empty(2, 3, 4, device="meta")
    assert x[0, 1:, None].shape == (2, 1, 4)
    assert x[[0, 1], :, st.tensor([1, 2], device="meta")].shape == (2, 3)
    with pytest.raises(NotImplementedError, match="data-dependent shape"):
        x[st.empty(2, dtype=st.bool, device="meta")]


# ------------------------------------------------------------------------------------------ op errors
@pytest.mark.parametrize("device", DEVICES)
def test_data_dependent_errors(device):
    def t(values, dtype=None):
        return st.tensor(values, dtype=dtype, device=device)

    x = st.arange(12.0, device=device).view(3, 4) if device == "cpu" else t(np.arange(12.0).reshape(3, 4))
    cases = [
        (lambda: st.index_select(x, 0, t([0, 3])), IndexError, "index out of range in self"),
        (lambda: st.index_select(x, 1, t([-1])), IndexError, "index out of range in self"),
        (lambda: st.embedding(x, t([[0, 3]])), IndexError, "index out of range in self"),
        (lambda: st.gather(x, 1, t([[0, 4]])), RuntimeError,
         "index 4 is out of bounds for dimension 1 with size 4"),
        (lambda: st.gather(x, 1, t([[0, -1]])), RuntimeError,
         "index -1 is out of bounds for dimension 1 with size 4"),
        (lambda: st.scatter(x, 0, t([[0, 3]]), 1.0), RuntimeError,
         "index 3 is out of bounds for dimension 0 with size 3"),
        (lambda: st.scatter_add(x, 0, t([[0, 5]]), x), RuntimeError,
         "index 5 is out of bounds for dimension 0 with size 3"),
        (lambda: st.index_add(x, 0, t([0, 5]), x[:2]), RuntimeError,
         "index 5 is out of bounds for dimension 0 with size 3"),
        (lambda: st.ops.aten.index.Tensor(x, [None, t([1, -5])]), IndexError,
         "index -5 is out of bounds for dimension 0 with size 4"),
        (lambda: x.index_put([t([0, 3])], t(1.0, x.dtype)), IndexError,
         "index 3 is out of bounds for dimension 0 with size 3"),
        (lambda: x.index_put([t([True, False])], t(1.0)), IndexError, "The shape of the mask [2] at index 0"),
        (lambda: x.index_put([x > 4], t([1.0, 2.0])), RuntimeError,
         "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [7]"),
        (lambda: st.one_hot(t([0, -2, 1]), 5), RuntimeError, "Class values must be non-negative."),
        (lambda: st.one_hot(t([0, 7, 1]), 5), RuntimeError, "Class values must be smaller than num_classes."),
    ]
    for call, exc, message in cases:
        with pytest.raises(exc, match=re.escape(message)):
            _on(device, call)


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_scatter_value_that_does_not_fit_raises_as_torch(device):
    """scatter's Scalar is checked like any other: torch's overflow error, never a wrapped int8, a truncated
    nan or a dropped imaginary part; a complex value with no imaginary part fits a real tensor."""
    idx = st.tensor([0], device=device)
    for dtype, value, ctype in ((st.int8, 1000, "int8_t"), (st.int64, float("nan"), "int64_t"),
                                (st.float32, 1.5 - 1j, "float")):
        with pytest.raises(RuntimeError, match=f"value cannot be converted to type {ctype} without overflow"):
            st.zeros(3, dtype=dtype, device=device).scatter(0, idx, value)
        with pytest.raises(RuntimeError, match=f"value cannot be converted to type {ctype} without overflow"):
            st.zeros(3, dtype=dtype, device=device).scatter_(0, idx, value)
    out = st.zeros(3, device=device).scatter(0, idx, 2.5 + 0j)
    if device == "cpu":
        assert out.tolist() == [2.5, 0.0, 0.0]


def test_cpu_only_behaviour():
    with pytest.raises(RuntimeError, match="topk does not support bool dtypes on CPU"):
        st.tensor([True, False]).topk(1)
    expected = np.eye(3, dtype=np.int64)[[0, 2, 1]]
    np.testing.assert_array_equal(st.one_hot(st.tensor([0, 2, 1])).numpy(), expected)  # infers 3 classes
    with pytest.raises(RuntimeError, match="num_classes=-1 infers the class count"):
        st.one_hot(st.empty(2, dtype=st.int64, device="meta"))


def test_sort_stability_and_nan_order():
    v = st.tensor([3.0, float("nan"), 1.0, 3.0, -0.0, 0.0, float("nan"), 1.0])
    values, indices = v.sort(stable=True)
    assert indices.tolist() == [4, 5, 2, 7, 0, 3, 1, 6]
    values, indices = v.sort(descending=True, stable=True)
    assert indices.tolist() == [1, 6, 0, 3, 2, 7, 4, 5]
    assert np.isnan(values.numpy()[:2]).all()
    top = v.topk(3)
    assert top.indices.tolist() == [1, 6, 0] and type(top).__name__ == "topk"


def test_cat_and_index_put_accumulate():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = st.cat([st.empty(0, dtype=st.float64), st.ones(2, 3)], 1)  # legacy (0,) skipped, promotes
    assert out.shape == (2, 3) and out.dtype is st.float64
    x = st.zeros(3)
    x.index_put_([st.tensor([0, 0, 2, 0])], st.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True)
    assert x.tolist() == [7.0, 0.0, 3.0]
