"""The Python forms of the combining ops (``strided.meshgrid(*tensors, indexing=)``, ``tensordot(dims=)``,
``cdist(compute_mode=)``...) and the checks the op database cannot carry, against torch where installed.
The ops themselves are in the op database (``strided/testing/opdb/combining.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st


def _t(*shape, seed=0):
    return st.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def test_python_forms_take_varargs_or_one_list():
    a, b = st.arange(3.0), st.arange(4.0)
    for grids in (st.meshgrid(a, b, indexing="xy"), st.meshgrid([a, b], indexing="xy")):
        assert [tuple(g.shape) for g in grids] == [(4, 3), (4, 3)]
        np.testing.assert_array_equal(grids[0].numpy(), np.meshgrid(a.numpy(), b.numpy())[0])
    assert [tuple(g.shape) for g in st.meshgrid(a, b)] == [(3, 4), (3, 4)]  # 'ij' by default, no warning
    assert isinstance(st.broadcast_tensors(a.reshape(3, 1), b), tuple)
    np.testing.assert_array_equal(st.cartesian_prod(st.tensor([1, 2]), st.tensor([3, 4])).numpy(),
                                  [[1, 3], [1, 4], [2, 3], [2, 4]])
    assert tuple(st.block_diag(st.ones(2, 2), st.ones(1)).shape) == (3, 3)
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got int"):
        st.meshgrid(a, 3)


def test_tensordot_dims_forms():
    a, b = _t(2, 3, 4), _t(3, 4, 5, seed=1)
    want = np.tensordot(a.numpy(), b.numpy(), 2)
    np.testing.assert_allclose(st.tensordot(a, b).numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(st.tensordot(a, b, dims=([1, 2], [0, 1])).numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(st.tensordot(a, b, dims=st.tensor(2)).numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(st.tensordot(_t(3), _t(3, seed=2), dims=([0], 0)).numpy(),
                               np.dot(_t(3).numpy(), _t(3, seed=2).numpy()), rtol=1e-5)
    with pytest.raises(RuntimeError, match="tensordot expects dims >= 0, but got dims=-1"):
        st.tensordot(a, b, dims=-1)
    with pytest.raises(RuntimeError, match="tensordot expects dims < ndim_a or ndim_b, but got dims=4"):
        st.tensordot(a, b, dims=4)
    out = st.empty(0)
    assert st.tensordot(a, b, out=out) is out
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)


def test_cdist_compute_modes_agree_and_name_a_bad_mode():
    x1, x2 = _t(40, 3), _t(30, 3, seed=1)
    direct = st.cdist(x1, x2, compute_mode="donot_use_mm_for_euclid_dist")
    for mode in ("use_mm_for_euclid_dist", "use_mm_for_euclid_dist_if_necessary"):
        np.testing.assert_allclose(st.cdist(x1, x2, compute_mode=mode).numpy(), direct.numpy(), rtol=1e-4,
                                   atol=1e-5)
    with pytest.raises(ValueError, match="foo is not a valid value for compute_mode"):
        st.cdist(x1, x2, compute_mode="foo")


def test_cdist_gradient_is_finite_at_zero_distance():
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        x = _t(3, 2).requires_grad_()
        st.cdist(x, x, compute_mode=mode).sum().backward()
        assert np.isfinite(x.grad.numpy()).all()


def test_cross_without_dim_warns_and_takes_the_first_dim_of_size_3():
    a, b = _t(3, 4), _t(3, 4, seed=1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = st.cross(a, b)
    assert any("Using torch.cross without specifying the dim arg is deprecated" in str(i.message) for i in w)
    np.testing.assert_allclose(got.numpy(), np.cross(a.numpy(), b.numpy(), axis=0), rtol=1e-6)


def test_tensor_split_tensor_spec_checks():
    x = st.arange(7.0)
    assert [t.numel() for t in x.tensor_split(st.tensor(3))] == [3, 2, 2]
    assert [t.numel() for t in st.tensor_split(x, st.tensor([2, 5]))] == [2, 3, 2]
    with pytest.raises(RuntimeError, match="to have dtype of long, but got Float"):
        st.tensor_split(x, st.tensor([1.0]))
    with pytest.raises(RuntimeError, match="to be a zero-dimensional or one-dimensional tensor, but got a tensor "
                                           "with 2 dims"):
        st.tensor_split(x, st.tensor([[1]]))
    with pytest.raises(RuntimeError, match="to be on cpu, but it's on meta"):
        st.tensor_split(x, st.tensor([1], device="meta"))
    views = x.tensor_split(3)
    assert all(v._storage is x._storage for v in views)  # views, as torch


def test_repeat_interleave_value_checks():
    with pytest.raises(RuntimeError, match="repeats can not be negative"):
        st.repeat_interleave(st.arange(3.0), st.tensor([1, -1, 1]))
    with pytest.raises(RuntimeError, match="repeat_interleave only accept 1D vector as repeat"):
        st.repeat_interleave(st.tensor([[1, 2]]))
    with pytest.raises(NotImplementedError, match="\"repeat_interleave_cpu\" not implemented for 'Float'"):  # torch's
        st.repeat_interleave(st.tensor([1.0, 2.0]))
    assert st.repeat_interleave(st.tensor([2, 1], dtype=st.int16)).dtype is st.int16  # the repeats' dtype, as torch
    with pytest.raises(RuntimeError, match="output_size 4 is not the sum of the repeats, 3"):
        st.repeat_interleave(st.arange(2.0), st.tensor([1, 2]), output_size=4)
    x = st.arange(4.0).requires_grad_()
    st.repeat_interleave(x, st.tensor([0, 1, 2, 3])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 1, 2, 3])


def test_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((5, 4)).astype(np.float32)
    for p in (0.0, 1.0, 2.0, 3.5, float("inf")):
        np.testing.assert_allclose(st.cdist(st.tensor(a), st.tensor(b), p).numpy(),
                                   torch.cdist(torch.tensor(a), torch.tensor(b), p).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(st.kron(st.tensor(a), st.tensor(b)).numpy(),
                                  torch.kron(torch.tensor(a), torch.tensor(b)).numpy())
    np.testing.assert_array_equal(st.diff(st.tensor(a), 2, 0, prepend=st.tensor(b[:1])).numpy(),
                                  torch.diff(torch.tensor(a), 2, 0, prepend=torch.tensor(b[:1])).numpy())
    for off in (-2, 0, 3):
        np.testing.assert_array_equal(st.triu_indices(4, 6, off).numpy(), torch.triu_indices(4, 6, off).numpy())
        np.testing.assert_array_equal(st.tril_indices(6, 4, off).numpy(), torch.tril_indices(6, 4, off).numpy())
    x = torch.tensor(a, requires_grad=True)
    xs = st.tensor(a, requires_grad=True)
    torch.take_along_dim(x, torch.tensor([[1], [0], [3]]), 1).sum().backward()
    st.take_along_dim(xs, st.tensor([[1], [0], [3]]), 1).sum().backward()
    np.testing.assert_array_equal(xs.grad.numpy(), x.grad.numpy())


def test_take_along_dim_wraps_indices_along_dim():
    """torch wraps every index along ``dim`` (``indices % size``); without ``dim`` an out-of-range one is refused."""
    x = np.arange(10.0).reshape(2, 5)
    for idx in ([[-6, 4], [12, -1]], [[5], [-13]], [[-1, 0, 1]]):
        for d in (1, 0, -1):
            i = np.array(idx)
            if d == 0 and i.shape[1] not in (1, 5):
                continue
            shape = list(np.broadcast_shapes(x.shape[:d % 2] + (1,) + x.shape[d % 2 + 1:],
                                             i.shape[:d % 2] + (1,) + i.shape[d % 2 + 1:]))
            xs, i_s = list(shape), list(shape)
            xs[d], i_s[d] = x.shape[d], i.shape[d]
            want = np.take_along_axis(np.broadcast_to(x, xs), np.broadcast_to(i, i_s) % x.shape[d], d)
            np.testing.assert_array_equal(st.take_along_dim(st.tensor(x), st.tensor(i), d).numpy(), want)
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 0 with size 10"):
        st.take_along_dim(st.tensor(x), st.tensor([-1]))


_SEQUENCES = {
    "split": lambda m, x: m.split(x, 2), "split sizes": lambda m, x: m.split(x, [1, 2]),
    "method split": lambda m, x: x.split(2), "method split sizes": lambda m, x: x.split([2, 1], 0),
    "chunk": lambda m, x: x.chunk(2), "unbind": lambda m, x: m.unbind(x, 1), "method unbind": lambda m, x: x.unbind(),
    "tensor_split": lambda m, x: m.tensor_split(x, 2), "hsplit": lambda m, x: m.hsplit(x, 2),
    "vsplit": lambda m, x: x.vsplit([1]), "split_with_sizes": lambda m, x: x.split_with_sizes([1, 2]),
    "unsafe_chunk": lambda m, x: m.unsafe_chunk(x, 3),
    "unravel_index": lambda m, x: m.unravel_index(m.tensor(5), (2, 3)),
    "_foreach_add": lambda m, x: m._foreach_add([x, x], 1.0),
}


@pytest.mark.parametrize("name", list(_SEQUENCES))
def test_tensor_lists_come_back_as_tuples(name):
    """Note [Tensor lists as tuples]: the public functions and methods give tuples, as torch's bindings do;
    strided.ops.aten keeps torch.ops.aten's lists."""
    torch = pytest.importorskip("torch")
    x, t = st.arange(12.0).reshape(3, 4), torch.arange(12.0).reshape(3, 4)
    got, want = _SEQUENCES[name](st, x), _SEQUENCES[name](torch, t)
    assert type(got) is type(want) is tuple and len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_aten_lists_and_indexing_with_an_unbound_index():
    x = st.arange(12.0).reshape(3, 4)
    assert type(st.ops.aten.split(x, 2)) is list
    idx = st.triu_indices(3, 4)
    np.testing.assert_array_equal(x[idx.unbind()].numpy(), [0, 1, 2, 3, 5, 6, 7, 10, 11])
    parts = x.split(2) + (x,)  # a tuple concatenates with a tuple
    assert [tuple(p.shape) for p in parts] == [(2, 4), (1, 4), (3, 4)]
    y = x.clone().requires_grad_()
    sum(p.sum() * i for i, p in enumerate(y.unbind())).backward()
    np.testing.assert_array_equal(y.grad.numpy(), np.repeat([[0.0], [1.0], [2.0]], 4, 1))


@pytest.mark.parametrize("call", [
    lambda m, x: x.var(unbiased=False), lambda m, x: x.var(False), lambda m, x: x.std(True),
    lambda m, x: m.var(x, unbiased=False), lambda m, x: m.std(x, False), lambda m, x: m.std_mean(x, unbiased=False),
    lambda m, x: m.var_mean(x, False), lambda m, x: x.var(), lambda m, x: x.var(1, unbiased=False),
    lambda m, x: m.var(x, 0, True, True),
])
def test_var_and_std_with_only_unbiased_reduce_everything(call):
    torch = pytest.importorskip("torch")
    x, t = st.arange(12.0).reshape(3, 4), torch.arange(12.0).reshape(3, 4)
    got, want = call(st, x), call(torch, t)
    for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
