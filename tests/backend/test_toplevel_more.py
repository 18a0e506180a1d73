"""torch's remaining top-level functions, against torch: the ``*_copy`` view copies, ``fill``,
``nonzero_static``, ``empty_permuted``, ``frombuffer``, ``gradient``, ``histogramdd``, the deprecated
``lu`` / ``lu_solve`` / ``nuclear_norm`` / ``frobenius_norm`` / ``norm_except_dim``, and the aliases."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")


def _pair(a):
    return st.from_numpy(np.array(a)), torch.from_numpy(np.array(a))


def _same(got, want, rtol=1e-6):
    if isinstance(want, (tuple, list)):
        assert type(got) is tuple and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, rtol)
        return
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=1e-12)


_COPIES = {
    "alias_copy": lambda m, x: m.alias_copy(x.t()), "detach_copy": lambda m, x: m.detach_copy(x),
    "as_strided_copy": lambda m, x: m.as_strided_copy(x, (2, 2), (1, 2)),
    "diagonal_copy": lambda m, x: m.diagonal_copy(x, 1), "expand_copy": lambda m, x: m.expand_copy(x[0], (2, 4)),
    "narrow_copy": lambda m, x: m.narrow_copy(x.t(), 0, 1, 2), "permute_copy": lambda m, x: m.permute_copy(x, (1, 0)),
    "select_copy": lambda m, x: m.select_copy(x, 1, 2), "slice_copy": lambda m, x: m.slice_copy(x, 1, 1, 3),
    "split_copy": lambda m, x: m.split_copy(x, 2, 1),
    "split_with_sizes_copy": lambda m, x: m.split_with_sizes_copy(x, [1, 2]),
    "squeeze_copy": lambda m, x: m.squeeze_copy(x[:1]), "t_copy": lambda m, x: m.t_copy(x),
    "transpose_copy": lambda m, x: m.transpose_copy(x, 0, 1), "unbind_copy": lambda m, x: m.unbind_copy(x, 1),
    "unfold_copy": lambda m, x: m.unfold_copy(x, 1, 2, 1), "unsqueeze_copy": lambda m, x: m.unsqueeze_copy(x, 1),
    "view_copy": lambda m, x: m.view_copy(x, (4, 3)), "view_as_real_copy": lambda m, x: m.view_as_real_copy(x * 1j),
}


@pytest.mark.parametrize("name", list(_COPIES))
def test_view_copies_are_contiguous_copies_with_the_views_values_and_gradients(name):
    a = np.arange(12.0).reshape(3, 4)
    x, t = (st.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_())
    got, want = _COPIES[name](st, x), _COPIES[name](torch, t)
    _same(got, want)
    outs = got if isinstance(got, tuple) else (got,)
    for o in outs:
        assert o.is_contiguous() and o._storage is not x._storage
    if name != "detach_copy":
        sum((st.view_as_real(o) if o.dtype.is_complex else o).pow(2).sum() for o in outs).backward()
        sum((torch.view_as_real(o) if o.is_complex() else o).pow(2).sum()
            for o in (want if isinstance(want, tuple) else (want,))).backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_fill_and_nonzero_static():
    x, t = _pair([[0, 1], [2, 0]])
    _same(st.fill(x, 2.7), torch.fill(t, 2.7))
    _same(st.fill(x.float(), st.tensor(5.0)), torch.fill(t.float(), torch.tensor(5.0)))
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor but got tensor with 1"):
        st.fill(x, st.ones(2))
    for size, fill in ((4, -7), (1, -1), (0, 3)):
        _same(st.nonzero_static(x, size=size, fill_value=fill), torch.nonzero_static(t, size=size, fill_value=fill))
    with pytest.raises(RuntimeError, match="nonzero_static: 'size' must be an non-negative integer"):
        st.nonzero_static(x, size=-1)


def test_empty_permuted_lays_dims_out_in_the_physical_order():
    for size, order in (((2, 3, 4), (2, 0, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)), ((3,), (0,))):
        got, want = st.empty_permuted(size, order), torch.empty_permuted(size, order)
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
    with pytest.raises(RuntimeError, match="Duplicate dim not allowed"):
        st.empty_permuted((2, 3), (0, 0))
    with pytest.raises(RuntimeError, match=r"len\(size\) = 2 is not equal to len\(physical_layout\) = 1"):
        st.empty_permuted((2, 3), (0,))


def test_frombuffer_shares_the_buffer_and_checks_its_length():
    buf = bytearray(range(8))
    got = st.frombuffer(buf, dtype=st.int16, count=2, offset=2)
    np.testing.assert_array_equal(got.numpy(), torch.frombuffer(bytearray(range(8)), dtype=torch.int16, count=2,
                                                                offset=2).numpy())
    got[0] = 0
    assert buf[2:4] == bytearray(2)  # shared memory
    for kwargs, match in (({}, None), ({"count": 5}, "must not be greater than actual buffer length"),
                          ({"offset": 9}, "must be non-negative and no greater than buffer length")):
        if match:
            with pytest.raises(ValueError, match=match):
                st.frombuffer(bytearray(8), dtype=st.int16, **kwargs)
    with pytest.raises(ValueError, match=r"buffer length \(7 bytes\) after offset \(0 bytes\) must be a multiple"):
        st.frombuffer(bytearray(7), dtype=st.int16)
    with pytest.raises(ValueError, match=r"both buffer length \(0\) and count \(-1\) must not be 0"):
        st.frombuffer(bytearray(0), dtype=st.int16)


def test_read_only_memory_warns_as_torch():
    st.set_warn_always(True)  # an earlier test may have had the once-per-process warning
    with pytest.warns(UserWarning, match="The given buffer is not writable"):
        st.frombuffer(bytes(8), dtype=st.float32)
    with pytest.warns(UserWarning, match="The given NumPy array is not writable"):
        st.from_numpy(np.frombuffer(bytes(8), dtype=np.int16))
    st.set_warn_always(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        st.from_numpy(np.frombuffer(bytes(8), dtype=np.int16))  # once per program, as torch


_X = [[1.0, 2.0, 4.0, 8.0], [10.0, 20.0, 40.0, 80.0], [3.0, 5.0, 9.0, 17.0]]
_GRADIENTS = [{}, {"spacing": 2.0}, {"spacing": [2.0, 3.0]}, {"dim": 1, "spacing": ([0.0, 1.0, 3.0, 7.0],)},
              {"dim": 1, "spacing": ([0.0, 1.0, 3.0, 7.0],), "edge_order": 2}, {"edge_order": 2}, {"dim": -1},
              {"dim": [1, 0], "spacing": 0.5}, {"dim": 0, "spacing": ([0.0, 2.0, 2.5],), "edge_order": 2}]


@pytest.mark.parametrize("kwargs", _GRADIENTS)
def test_gradient_as_torch(kwargs):
    x, t = _pair(_X)

    def args(m):
        sp = kwargs.get("spacing")
        if isinstance(sp, tuple):
            return {**kwargs, "spacing": tuple(m.tensor(v) for v in sp)}
        return kwargs

    _same(st.gradient(x, **args(st)), torch.gradient(t, **args(torch)), rtol=1e-6)


def test_gradient_of_integers_and_errors():
    x, t = _pair([1, 4, 9, 16])
    _same(st.gradient(x), torch.gradient(t))
    assert st.gradient(st.tensor(1.0)) == ()
    y = st.tensor(_X)
    for kwargs, match in (({"spacing": [1.0, 2.0, 3.0]}, "dim argument was not given, but got a list of length 3"),
                          ({"edge_order": 3}, "only supports edge_order=1 and edge_order=2"),
                          ({"dim": 0, "spacing": [1.0, 2.0]}, "a spacing argument of length 2 and a dim argument of"),
                          ({"dim": [0, 0]}, "dim 0 appears multiple times in the list of dims"),
                          ({"spacing": (st.ones(3, 1), st.ones(4))}, "one dimension, but got an element with 2"),
                          ({"spacing": (st.ones(2), st.ones(4))}, "to have 3 elements")):
        with pytest.raises(RuntimeError, match=match):
            st.gradient(y, **kwargs)
    with pytest.raises(RuntimeError, match="expected each dimension size to be at least edge_order\\+1"):
        st.gradient(st.tensor([1.0, 2.0]), edge_order=2)


def test_gradient_is_differentiable():
    a = np.array(_X)
    x, t = st.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()
    sum(g.pow(2).sum() for g in st.gradient(x, edge_order=2)).backward()
    sum(g.pow(2).sum() for g in torch.gradient(t, edge_order=2)).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


_POINTS = [[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0]]


@pytest.mark.parametrize("kwargs", [{"bins": [3, 3]}, {"bins": 2}, {"bins": [2, 4], "density": True},
                                    {"bins": [2, 2], "range": [0.0, 1.0, 0.0, 1.0], "density": True},
                                    {"bins": [3, 3], "weight": [1.0, 2.0, 4.0, 8.0]},
                                    {"bins": ([0.0, 1.0, 2.0], [0.0, 2.0])}])
def test_histogramdd_as_torch(kwargs):
    x, t = _pair(_POINTS)

    def args(m):
        out = dict(kwargs)
        if "weight" in out:
            out["weight"] = m.tensor(out["weight"], dtype=m.float64)
        if isinstance(out["bins"], tuple):
            out["bins"] = [m.tensor(b, dtype=m.float64) for b in out["bins"]]
        return out

    got, want = st.histogramdd(x, **args(st)), torch.histogramdd(t, **args(torch))
    _same(got.hist, want.hist)
    _same(got.bin_edges, want.bin_edges)


def test_histogramdd_batches_points_and_checks_its_arguments():
    a = np.random.default_rng(0).random((2, 3, 2)).astype(np.float32)
    got, want = st.histogramdd(st.from_numpy(a), bins=2), torch.histogramdd(torch.from_numpy(a), bins=2)
    _same(got.hist, want.hist)
    one = st.histogramdd(st.tensor([[5.0]]), bins=2)
    _same(one.bin_edges, torch.histogramdd(torch.tensor([[5.0]]), bins=2).bin_edges)
    x = st.tensor(_POINTS)
    cases = [({"bins": [2]}, "The size of bins must be equal to the innermost"),
             ({"bins": 2, "range": [0.0, 1.0]}, "range should have 4 elements, but got 2"),
             ({"bins": 0}, "bins must be > 0, but got 0 for dimension 0"),
             ({"bins": 2, "weight": st.ones(3)}, "weight with shape \\[3\\]"),
             ({"bins": 2, "weight": st.ones(4, dtype=st.float64)},
              "should have the same dtype, but got input\\(float\\), and weight\\(double\\)"),
             ({"bins": [st.tensor([0.0, 1.0], dtype=st.float64), st.tensor([0.0, 1.0])]},
              "bins for dimension 0 with dtype double")]
    for kwargs, match in cases:
        with pytest.raises(RuntimeError, match=match):
            st.histogramdd(x, **kwargs)
    with pytest.raises(NotImplementedError, match="\"histogramdd\" not implemented for 'Long'"):
        st.histogramdd(x.long(), bins=2)


def test_deprecated_linear_algebra_forms_as_torch():
    a = np.random.default_rng(1).standard_normal((3, 3))
    x, t = st.from_numpy(a.copy()), torch.from_numpy(a.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = st.lu(x, get_infos=True), torch.lu(t, get_infos=True)
        _same(tuple(got), tuple(want))
        assert got.infos.dtype is st.int32
        b = np.ones((3, 2))
        _same(st.lu_solve(st.from_numpy(b), *st.lu(x)), torch.lu_solve(torch.from_numpy(b), *torch.lu(t)), rtol=1e-10)
        _same(st.nuclear_norm(x), torch.nuclear_norm(t), rtol=1e-10)
        _same(st.nuclear_norm(x, True), torch.nuclear_norm(t, True), rtol=1e-10)
        _same(st.frobenius_norm(x, (0, 1), True), torch.frobenius_norm(t, (0, 1), True), rtol=1e-10)
    with pytest.raises(RuntimeError, match="Expected at most 2 dimensions, but got 3 dimensions instead."):
        st.frobenius_norm(st.ones(2, 2, 2), (0, 1, 2))
    v = np.random.default_rng(2).standard_normal((2, 3, 4))
    for p, d in ((2, 0), (2, 1), (2, 2), (3, -1), (1, 1)):
        want = torch.norm_except_dim(torch.from_numpy(v.copy()), p, d)
        _same(st.norm_except_dim(st.from_numpy(v.copy()), p, d), want, rtol=1e-10)


def test_lu_warns_once_in_torchs_words():
    st.set_warn_always(True)  # an earlier test may have had the once-per-process warning
    with pytest.warns(UserWarning, match="torch.lu is deprecated in favor of torch.linalg.lu_factor"):
        st.lu(st.eye(2))
    st.set_warn_always(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        st.lu(st.eye(2))


def test_aliases():
    assert st.OutOfMemoryError is st.cuda.OutOfMemoryError
    assert st.GradScaler is st.amp.GradScaler
    back = st.from_dlpack(st.to_dlpack(st.arange(3.0)))
    np.testing.assert_array_equal(back.numpy(), [0.0, 1.0, 2.0])


@pytest.mark.parametrize("call,err,match", [
    (lambda: st.frombuffer(bytearray(8), dtype="float32"), TypeError, "frombuffer\\(\\): argument 'dtype' must be"),
    (lambda: st.frombuffer([1, 2], dtype=st.int16), ValueError, "object does not implement Python buffer protocol"),
    (lambda: st.empty_permuted((2, 3), (0, 5)), RuntimeError, "Dimension out of range in physical_layout"),
    (lambda: st.fill(st.ones(2), "a"), TypeError, "fill\\(\\): argument 'value' must be Number or Tensor, not str"),
    (lambda: st.gradient([1.0, 2.0]), TypeError, "gradient\\(\\): argument 'input' \\(position 1\\) must be Tensor"),
    (lambda: st.gradient(st.ones(3), spacing="a"), TypeError, "gradient\\(\\): argument 'spacing' must be"),
    (lambda: st.histogramdd([[1.0, 2.0]], bins=2), TypeError, "histogramdd\\(\\): argument 'input' \\(position 1\\)"),
    (lambda: st.histogramdd(st.ones(2, 2), bins="a"), TypeError, "histogramdd\\(\\): argument 'bins' must be"),
    (lambda: st.norm_except_dim(st.ones(2, 3), 2, 5), IndexError, "Dimension out of range"),
    (lambda: st.permute_copy(st.ones(2, 3), (0, 0)), RuntimeError, "permute\\(\\): duplicate dims are not allowed"),
])
def test_new_functions_reject_nonsense_naming_the_op(call, err, match):
    with pytest.raises(err, match=match):
        call()


def test_utils_dlpack_names_exchange_with_torch():
    import torch.utils.dlpack as tdl

    from strided.utils import dlpack

    assert {m.name: m.value for m in dlpack.DLDeviceType} == {m.name: m.value for m in tdl.DLDeviceType}
    x = st.arange(6.0).view(2, 3)
    assert tdl.from_dlpack(dlpack.to_dlpack(x)).tolist() == x.tolist()
    assert dlpack.from_dlpack(tdl.to_dlpack(torch.arange(4.0))).tolist() == [0.0, 1.0, 2.0, 3.0]
