"""Property: a random chain of view ops gives the values, shape and strides that the same chain gives
in NumPy, and it never copies (only ``reshape`` may, exactly when ``view`` would refuse -- the same
cases in which NumPy's ``reshape(copy=False)`` refuses).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as hs

import strided as st


def _along(ndim: int, dim: int, index) -> tuple:
    """A basic NumPy index applying ``index`` to ``dim`` (an Ellipsis keeps 0-d results arrays)."""
    return (slice(None),) * dim + (index, Ellipsis)


def _new_shape(data, shape: tuple):
    """A shape with the same number of elements: flattened, one dim split, or two dims merged."""
    choices = ["flatten"]
    splittable = [d for d, s in enumerate(shape) if s > 1 and any(s % f == 0 for f in range(2, s))]
    if splittable:
        choices.append("split")
    if len(shape) >= 2:
        choices.append("merge")
    kind = data.draw(hs.sampled_from(choices))
    if kind == "flatten":
        return (-1,) if data.draw(hs.booleans()) else (math.prod(shape),)
    if kind == "split":
        d = data.draw(hs.sampled_from(splittable))
        f = data.draw(hs.sampled_from([f for f in range(2, shape[d]) if shape[d] % f == 0]))
        return shape[:d] + (f, shape[d] // f) + shape[d + 1 :]
    d = data.draw(hs.integers(0, len(shape) - 2))
    return shape[:d] + (shape[d] * shape[d + 1],) + shape[d + 2 :]


def _dim(data, ndim):
    return data.draw(hs.integers(-ndim, ndim - 1))


def _step(data, t, a):
    """Apply one random view op to both; returns (t, a, copied)."""
    shape, ndim = a.shape, a.ndim
    ops = ["unsqueeze", "view", "reshape", "squeeze", "expand"]
    if ndim:
        ops += ["transpose", "permute", "slice", "narrow", "movedim", "flatten", "chunk"]
        if any(shape):
            ops.append("select")
        if ndim <= 2:
            ops.append("t")
    op = data.draw(hs.sampled_from(ops))
    if op == "transpose":
        d0, d1 = _dim(data, ndim), _dim(data, ndim)
        return t.transpose(d0, d1), np.swapaxes(a, d0, d1), False
    if op == "permute":
        perm = data.draw(hs.permutations(range(ndim)))
        return t.permute(perm), np.transpose(a, perm), False  # tuple form: torch refuses permute()
    if op == "t":
        return t.t(), a.T, False
    if op == "movedim":
        src, dst = _dim(data, ndim), _dim(data, ndim)
        return t.movedim(src, dst), np.moveaxis(a, src, dst), False
    if op == "slice":
        d = data.draw(hs.integers(0, ndim - 1))
        n = shape[d]
        start = data.draw(hs.none() | hs.integers(-n - 2, n + 2))
        end = data.draw(hs.none() | hs.integers(-n - 2, n + 2))
        step = data.draw(hs.integers(1, 3))
        return (
            st.ops.aten.slice.Tensor(t, d, start, end, step),
            a[_along(ndim, d, slice(start, end, step))],
            False,
        )
    if op == "narrow":
        d = data.draw(hs.integers(0, ndim - 1))
        start = data.draw(hs.integers(0, shape[d]))
        length = data.draw(hs.integers(0, shape[d] - start))
        return t.narrow(d, start, length), a[_along(ndim, d, slice(start, start + length))], False
    if op == "select":
        d = data.draw(hs.sampled_from([d for d in range(ndim) if shape[d]]))
        i = data.draw(hs.integers(-shape[d], shape[d] - 1))
        return t.select(d, i), a[_along(ndim, d, i)], False
    if op == "chunk":
        d = data.draw(hs.integers(0, ndim - 1))
        pieces = t.chunk(data.draw(hs.integers(1, 3)), d)
        k = data.draw(hs.integers(0, len(pieces) - 1))
        size = -(-shape[d] // len(pieces)) if shape[d] else 0
        return pieces[k], a[_along(ndim, d, slice(k * size, (k + 1) * size))], False
    if op == "unsqueeze":
        d = data.draw(hs.integers(-ndim - 1, ndim))
        return t.unsqueeze(d), np.expand_dims(a, d if d >= 0 else d + ndim + 1), False
    if op == "squeeze":
        if ndim and data.draw(hs.booleans()):
            d = _dim(data, ndim)
            return t.squeeze(d), (np.squeeze(a, d) if shape[d] == 1 else a), False
        return t.squeeze(), np.squeeze(a), False
    if op == "expand":
        lead = data.draw(hs.lists(hs.integers(0, 3), max_size=2))
        target = [
            data.draw(hs.integers(0, 3)) if s == 1 else data.draw(hs.sampled_from([s, -1])) for s in shape
        ]
        full = tuple(lead) + tuple(target)
        return (
            t.expand(full),  # the tuple form: torch refuses expand() with no sizes (a 0-dim t, no lead)
            np.broadcast_to(a, tuple(lead) + tuple(s if x == -1 else x for s, x in zip(shape, target))),
            False,
        )
    if op == "flatten":
        s, e = sorted((_dim(data, ndim) % ndim, _dim(data, ndim) % ndim))
        new = shape[:s] + (math.prod(shape[s : e + 1]),) + shape[e + 1 :]
        return _reshaped(t.flatten(s, e), a, new, t)
    new = _new_shape(data, shape)
    if op == "view":
        try:
            expected = np.reshape(a, new, copy=False)
        except ValueError:
            try:
                t.view(new)
            except RuntimeError as e:
                assert "Use .reshape(...) instead" in str(e)
                return t, a, False
            raise AssertionError(
                f"view{new} of sizes {tuple(t.shape)} strides {t.stride()} should copy"
            ) from None
        return t.view(new), expected, False
    return _reshaped(t.reshape(new), a, new, t)


def _reshaped(result, a, new, t):
    """reshape/flatten: copies exactly when NumPy can't reshape without copying."""
    try:
        expected, copy = np.reshape(a, new, copy=False), False
    except ValueError:
        expected, copy = np.reshape(a, new), True
    assert (result.untyped_storage() is not t.untyped_storage()) == copy, "reshape copied iff no view exists"
    return result, expected, copy


def _check_strides(t, a):
    if a.size == 0:
        return
    want = tuple(s // a.itemsize for s in a.strides)
    for size, got, exp in zip(a.shape, t.stride(), want):
        if size > 1:
            assert got == exp, f"strides {t.stride()} != NumPy's {want} for shape {a.shape}"


@settings(max_examples=300, deadline=None)
@given(data=hs.data(), shape=hs.lists(hs.integers(0, 4), max_size=4).map(tuple))
def test_view_chains_match_numpy(data, shape):
    base_np = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    base = st.tensor(base_np)
    t, a, copied = base, base_np, False
    for _ in range(data.draw(hs.integers(1, 6))):
        t, a, c = _step(data, t, a)
        copied |= c
        assert tuple(t.shape) == a.shape
        _check_strides(t, a)
    np.testing.assert_array_equal(t.numpy(), a)
    if not copied:
        assert t.untyped_storage() is base.untyped_storage()
        assert t is base or t._base is base, "a view's _base is the root tensor"
