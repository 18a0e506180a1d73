"""torch names that code written for torch reaches for beyond the ops: constants, the layout, the
accelerator API, autocast's state functions, deprecated linear-algebra functions and small Tensor methods."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import strided as st
import strided.accelerator as acc

torch = pytest.importorskip("torch")


def test_constants_are_torchs():
    for name in ("pi", "e", "inf", "nan"):
        got, want = getattr(st, name), getattr(torch, name)
        assert got == want or (math.isnan(got) and math.isnan(want)), name
    assert st.newaxis is None is torch.newaxis
    assert st.arange(3)[:, st.newaxis].shape == (3, 1)


def test_layout_constant():
    x = st.ones(2, 3)
    assert x.layout is st.strided and x.layout == "strided" and isinstance(st.strided, st.layout)
    assert repr(st.strided) == "strided.strided" and str(x.layout) == "strided.strided"
    for factory in (lambda: st.empty(2, layout=st.strided), lambda: st.zeros(2, layout=st.strided),
                    lambda: st.empty_strided((2,), (1,), layout=st.strided)):
        assert factory().layout is st.strided
    with pytest.raises(RuntimeError, match="only the strided layout is supported, got 'sparse_coo'"):
        st.empty(2, layout="sparse_coo")


def test_accelerator_without_a_usable_gpu(monkeypatch):
    # Note [The current accelerator]: the CUDA backend installed, no GPU, as a CUDA build of torch there
    monkeypatch.setattr(st.cuda, "is_available", lambda: False)
    monkeypatch.setattr(st.cuda, "device_count", lambda: 0)
    assert acc.is_available() is False and acc.device_count() == 0
    if acc._cuda_backend_present():
        assert acc.current_accelerator() == st.device("cuda")
    else:
        assert acc.current_accelerator() is None
    assert acc.current_accelerator(check_available=True) is None
    for fn in (acc.current_device_index, acc.synchronize, acc.current_stream, acc.get_memory_info,
               acc.get_device_capability, lambda: acc.set_device_index(0)):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
            fn()
    assert acc.memory_stats() == {} and acc.memory_allocated() == 0 and acc.max_memory_reserved() == 0
    acc.empty_cache()  # nothing to release: no error
    acc.reset_peak_memory_stats()
    with acc.device_index(None):  # None switches nothing, as torch's
        pass


def test_accelerator_reached_from_the_package():
    assert st.accelerator is acc
    assert {"current_accelerator", "current_device_index", "device_count", "is_available", "synchronize",
            "current_stream", "set_stream", "device_index", "memory_allocated"} <= set(acc.__all__)
    assert acc.current_device_idx is acc.current_device_index and acc.set_device_idx is acc.set_device_index


def test_accelerator_device_arguments(monkeypatch):
    monkeypatch.setattr(acc, "_cuda_backend_present", lambda: True)
    monkeypatch.setattr(st.cuda, "current_device", lambda: 0)
    assert acc._index(2) == 2 and acc._index("cuda:1") == 1 and acc._index(st.device("cuda", 3)) == 3
    with pytest.raises(ValueError, match="cpu doesn't match the current accelerator cuda"):
        acc._index("cpu")
    with pytest.raises(ValueError, match="Expected a device with a specified index or an integer"):
        acc._index("cuda", optional=False)
    with pytest.raises(TypeError, match="Expected a device index or a device"):
        acc._index(True)
    monkeypatch.setattr(acc, "is_available", lambda: True)
    with pytest.raises(TypeError, match=r"set_stream\(\): expected a strided.cuda.Stream, got int"):
        acc.set_stream(0)


def test_autocast_state_functions_match_torch():
    assert st.is_autocast_enabled() is torch.is_autocast_enabled() is False
    assert st.is_autocast_enabled("cpu") is torch.is_autocast_enabled("cpu") is False
    assert str(st.get_autocast_dtype("cpu")).split(".")[-1] == str(torch.get_autocast_dtype("cpu")).split(".")[-1]
    with st.autocast("cpu", cache_enabled=False):  # accepted as torch's (nothing is cached)
        assert st.is_autocast_enabled("cpu")
        y = st.ones(2, 3) @ st.ones(3, 2)
    assert y.dtype == st.bfloat16 and not st.is_autocast_enabled("cpu")
    st.set_autocast_enabled("cpu", True)
    try:
        assert st.is_autocast_enabled("cpu")
    finally:
        st.set_autocast_enabled("cpu", False)
    st.set_autocast_dtype("cpu", st.float16)
    try:
        assert st.get_autocast_dtype("cpu") == st.float16
    finally:
        st.set_autocast_dtype("cpu", st.bfloat16)


def test_inference_mode_state_and_get_device():
    assert st.is_inference_mode_enabled() is False
    with st.inference_mode():
        assert st.is_inference_mode_enabled() is True
    assert st.get_device(st.ones(2)) == torch.get_device(torch.ones(2)) == -1
    with pytest.raises(TypeError) as t_err:
        torch.get_device(5)
    with pytest.raises(TypeError) as s_err:
        st.get_device(5)
    assert str(s_err.value) == str(t_err.value)


def _pair(values, dtype=np.float64):
    a = np.asarray(values, dtype=dtype)
    return st.from_numpy(a.copy()), torch.from_numpy(a.copy())


def test_removed_qr_and_cholesky_raise_torchs_words():
    # Note [Removed linear-algebra functions]: torch 2.14 removed them; older torch ran them with a warning
    x, t = _pair(np.eye(3))
    cases = [(lambda m, a: m.qr(a), "qr"), (lambda m, a: m.qr(a, False), "qr"), (lambda m, a: a.qr(some=False), "qr"),
             (lambda m, a: m.cholesky(a), "cholesky"), (lambda m, a: a.cholesky(upper=True), "cholesky")]
    removed = "This function was deprecated since version 1.9 and is now removed"
    for f, name in cases:
        with pytest.raises(RuntimeError, match=removed) as s_err:
            f(st, x)
        assert f"`torch.linalg.{name}`" in str(s_err.value)
        try:
            f(torch, t)
        except RuntimeError as t_err:  # torch >= 2.14
            assert str(s_err.value) == str(t_err)


REMOVED_BEFORE = [  # removed in torch 2.0: functions and the Tensor methods torch keeps
    lambda m, a: m.solve(a, a), lambda m, a: a.solve(a), lambda m, a: m.lstsq(a, a), lambda m, a: a.lstsq(a),
    lambda m, a: m.eig(a), lambda m, a: a.eig(True), lambda m, a: m.symeig(a, True), lambda m, a: a.symeig(True),
    lambda m, a: m.matrix_rank(a),
]


@pytest.mark.parametrize("case", range(len(REMOVED_BEFORE)))
def test_removed_linear_algebra_raises_torchs_words(case):
    """Note [Removed linear-algebra functions]."""
    x, t = _pair(np.eye(3))
    with pytest.raises(RuntimeError) as s_err:
        REMOVED_BEFORE[case](st, x)
    with pytest.raises(RuntimeError) as t_err:
        REMOVED_BEFORE[case](torch, t)
    assert str(s_err.value) == str(t_err.value)


def test_deprecated_lu_methods_are_torchs():
    A = np.array([[4.0, 3.0, 2.0], [6.0, 3.0, 1.0], [2.0, 5.0, 7.0]])
    b = np.array([[1.0], [2.0], [3.0]])
    x, t = _pair(A)
    bx, bt = _pair(b)
    LU, piv = x.lu()
    tLU, tpiv = t.lu()
    np.testing.assert_allclose(LU.numpy(), tLU.numpy(), atol=1e-12)
    np.testing.assert_array_equal(piv.numpy(), tpiv.numpy())
    assert len(x.lu(get_infos=True)) == 3
    np.testing.assert_allclose(bx.lu_solve(LU, piv).numpy(), bt.lu_solve(tLU, tpiv).numpy(), atol=1e-12)


def test_small_tensor_methods_are_torchs():
    x, t = _pair([0.0, 1.5, 0.0, -2.0])
    assert x.cfloat().dtype == st.complex64 and x.cdouble().dtype == st.complex128
    np.testing.assert_array_equal(x.cdouble().numpy(), t.cdouble().numpy())
    assert x.to_dense() is x and x.to_dense(st.float32).dtype == st.float32 and x.is_nested is t.is_nested is False
    c = x.narrow_copy(0, 1, 2)
    np.testing.assert_array_equal(c.numpy(), t.narrow_copy(0, 1, 2).numpy())
    c[0] = 9.0
    assert float(x[1]) == 1.5  # a copy, not a view
    for size, fill in ((1, -1), (4, 7), (0, 0)):
        np.testing.assert_array_equal(x.nonzero_static(size=size, fill_value=fill).numpy(),
                                      t.nonzero_static(size=size, fill_value=fill).numpy())
    bad = ((dict(size=2.0), "size"), (dict(size=True), "size"), (dict(size=2, fill_value=1.5), "fill_value"))
    for kwargs, word in bad:
        with pytest.raises(TypeError) as t_err:
            torch.nonzero_static(t, **kwargs)
        with pytest.raises(TypeError) as s_err:
            st.nonzero_static(x, **kwargs)
        assert str(s_err.value) == str(t_err.value) and word in str(s_err.value)


def test_typed_storage_is_torchs():
    import strided.typed_storage as ts

    ts._warned[0] = False
    base_s, base_t = st.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    x, t = base_s[:, 1:], base_t[:, 1:]
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        s = x.storage()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process
        s = x.storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        u = t.storage()
    assert isinstance(s, st.TypedStorage) and type(s.untyped()) is st.UntypedStorage
    assert (s.size(), len(s), s.element_size(), s.nbytes()) == (u.size(), len(u), u.element_size(), u.nbytes())
    assert s.tolist() == u.tolist() and list(s) == list(u) and s[1] == u[1] and s[-1] == u[-1]
    assert s.data_ptr() == x.untyped_storage().data_ptr() and s.dtype == st.float32 and not s.is_cuda
    assert s.is_pinned() is False and x.untyped_storage().is_pinned() is False
    assert repr(s).splitlines()[-1] == "[strided.storage.TypedStorage(dtype=strided.float32, device=cpu) of size 6]"
    s[0] = 9.0  # shares the memory: seen by every tensor over it
    assert float(base_s[0, 0]) == 9.0
    s.fill_(2.0)
    assert float(x.sum()) == 8.0
    for idx, exc, words in ((10, IndexError, "index 10 out of range for storage of size 6"),
                            (slice(1, 3), RuntimeError, "slices are only supported in UntypedStorage.__getitem__")):
        with pytest.raises(exc) as t_err:
            u[idx]
        with pytest.raises(exc, match=re.escape(words)):
            s[idx]
        assert str(t_err.value) == words
    with pytest.raises(TypeError, match="wrap_storage must be an UntypedStorage"):
        st.TypedStorage(wrap_storage=x, dtype=st.float32)
