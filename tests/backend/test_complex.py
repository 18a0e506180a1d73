"""Complex tensors beyond the OpInfos: views that alias and write through, printing, tensor() inference,
promotion, the guard's error (Note [Complex operators]), conversions and interop. torch is the oracle."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")  # the oracle


def _pair(values, dtype="complex64"):
    a = np.array(values, dtype=dtype)
    return st.from_numpy(a.copy()), torch.from_numpy(a.copy())


def test_view_as_real_aliases_and_writes_reach_the_base():
    z, tz = _pair([[1 + 2j, 3 - 4j], [5j, -6 + 0j]])
    r, tr = st.view_as_real(z), torch.view_as_real(tz)
    assert r.shape == tr.shape and r.stride() == tr.stride() and r.dtype is st.float32
    assert r._base is z and r.untyped_storage() is z.untyped_storage()
    r[0, 1, 1] = 7.0
    tr[0, 1, 1] = 7.0
    np.testing.assert_array_equal(z.numpy(), tz.numpy())
    back = st.view_as_complex(r)
    assert back._base is z and back.dtype is st.complex64
    back.mul_(2)
    tz.mul_(2)
    np.testing.assert_array_equal(z.numpy(), tz.numpy())


def test_views_of_views_keep_offsets_and_the_root():
    z, tz = _pair(np.arange(8) + 1j * np.arange(8), "complex128")
    v, tv = z[3:].view(5)[1::2], tz[3:].view(5)[1::2]
    for fn in (torch.view_as_real, torch.real, torch.imag):
        got, want = getattr(st, fn.__name__)(v), fn(tv)
        assert (got.shape, got.stride(), got.storage_offset()) == (want.shape, want.stride(), want.storage_offset())
        assert got._base is z
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_real_and_imag_properties_and_setters():
    z, tz = _pair([1 + 2j, 3 - 4j])
    z.real.add_(10)
    tz.real.add_(10)
    z.imag = st.tensor([0.5, -0.5])
    tz.imag = torch.tensor([0.5, -0.5])
    np.testing.assert_array_equal(z.numpy(), tz.numpy())
    z.real = 0
    tz.real = 0
    np.testing.assert_array_equal(z.numpy(), tz.numpy())
    x = st.ones(3)
    assert x.real is x and st.real(x) is x and st.conj(x) is x and x.resolve_conj() is x
    x.real = st.full((3,), 2.0)
    assert x.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes."):
        x.imag  # noqa: B018


def test_view_as_complex_refuses_an_odd_storage_offset():
    x = st.zeros(9)[1:].view(4, 2)
    with pytest.raises(RuntimeError, match="Tensor must have a storage_offset divisible by 2"):
        st.view_as_complex(x)
    with pytest.raises(RuntimeError, match="Tensor must have a storage_offset divisible by 2"):
        torch.view_as_complex(torch.zeros(9)[1:].view(4, 2))


def test_views_on_meta_have_torch_metadata():
    z = st.empty((3, 4), dtype=st.complex128, device="meta")[:, 1:]
    r = st.view_as_real(z)
    want = torch.view_as_real(torch.empty((3, 4), dtype=torch.complex128, device="meta")[:, 1:])
    assert (r.shape, r.stride(), r.storage_offset()) == (want.shape, want.stride(), want.storage_offset())
    assert r.dtype is st.float64 and st.imag(z).storage_offset() == 3


def test_conj_is_a_new_tensor_without_a_conjugate_bit():
    z, tz = _pair([1 + 2j, -3j])
    c = z.conj()
    assert not c.is_conj() and not st.is_conj(c) and not z.is_neg()
    assert c.untyped_storage() is not z.untyped_storage()  # Note [No conjugate bit]
    np.testing.assert_array_equal(c.numpy(), tz.conj().resolve_conj().numpy())
    m = st.from_numpy(np.array([[1 + 1j, 2], [3j, 4 - 1j]], np.complex64))
    np.testing.assert_array_equal(m.mH.numpy(), m.numpy().conj().T)
    np.testing.assert_array_equal(m.H.numpy(), m.numpy().conj().T)


@pytest.mark.parametrize("values,dtype", [
    ([1 + 2j, 3 - 1j], "complex64"), ([1 + 2j, 3], "complex128"), (1.5 - 2j, "complex64"),
    ([[0.1234 + 5j, -7.5 - 0.001j], [1e-6j, 2]], "complex64"), ([0j, complex(float("nan"), float("inf"))], "complex64"),
    ([1e10 + 1j, 1 - 2j], "complex128"), (np.zeros((0, 2)), "complex64"),
])
def test_repr_matches_torch(values, dtype):
    a = np.array(values, dtype=dtype)
    want = repr(torch.from_numpy(a.copy())).replace("torch.", "strided.")
    assert repr(st.from_numpy(a.copy())) == want


def test_repr_of_a_summarized_complex_tensor():
    a = (np.arange(2000) * (0.5 - 1j)).astype(np.complex64)
    assert repr(st.from_numpy(a.copy())) == repr(torch.from_numpy(a.copy()))


def test_tensor_infers_the_default_complex_dtype():
    for data in ([1 + 2j, 3], 1j, [[1, 2.5], [1j, True]], [np.float32(1), 1j], [np.complex64(1), 1.0],
                 np.complex128(1j)):
        assert st.tensor(data).dtype.name == str(torch.tensor(data).dtype).split(".")[1], data
    assert st.tensor([1 + 2j, 3]).tolist() == [1 + 2j, 3 + 0j]
    old = st.get_default_dtype()
    st.set_default_dtype(st.float64)
    try:
        assert st.tensor([1j]).dtype is st.complex128 and (st.ones(1, dtype=st.float32) * 1j).dtype is st.complex64
    finally:
        st.set_default_dtype(old)


def test_promotion_with_python_complex_scalars():
    assert (st.ones(2, dtype=st.float64) * 1j).dtype is st.complex128
    assert (st.ones(2, dtype=st.int64) + 1j).dtype is st.complex64
    assert (1 / st.tensor([2j])).item() == pytest.approx(-0.5j)
    with pytest.raises(TypeError, match="no complex dtype of float16 precision"):
        st.ones(2, dtype=st.float16) * 1j
    with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast to the desired output type Float"):
        st.zeros(3).mul_(1j)


@pytest.mark.parametrize("call,exc,words", [  # torch 2.14's words (tests/backend/test_refusal_words.py compares)
    (lambda z: st.relu(z), NotImplementedError, "clamp is not supported for complex types"),
    (lambda z: st.max(z), NotImplementedError, "\"max_all\" not implemented for '{}'"),
    (lambda z: st.sort(z), RuntimeError, " Sort does not support complex dtypes on CPU"),
    (lambda z: st.amax(z), NotImplementedError, "\"max_values_cpu\" not implemented for '{}'"),
])
def test_ops_without_complex_kernels_raise_torchs_error(call, exc, words):
    z = st.tensor([1 + 1j, 2 - 1j])
    for x, name in ((z, "ComplexFloat"), (z.to(st.complex128), "ComplexDouble")):
        with pytest.raises(exc) as info:
            call(x)
        assert str(info.value) == words.format(name)


def test_copy_into_a_real_tensor_discards_the_imaginary_part_with_torchs_warning():
    z = st.tensor([1 + 2j, -3 + 4j])
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        out = st.zeros(2).copy_(z)
    assert out.tolist() == [1.0, -3.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert z.to(st.float64).tolist() == [1.0, -3.0]
        assert z.sum(dtype=st.float32).item() == -2.0


def test_item_tolist_numpy_and_dlpack():
    z, tz = _pair([[1 + 2j, 3 - 1j]], "complex128")
    assert z[0, 1].item() == 3 - 1j and isinstance(z[0, 0].item(), complex)
    assert z.tolist() == tz.tolist()
    assert z.numpy().dtype == np.complex128 and np.shares_memory(z.numpy(), np.asarray(z))
    np.testing.assert_array_equal(torch.from_dlpack(z).numpy(), tz.numpy())
    np.testing.assert_array_equal(np.from_dlpack(z), tz.numpy())
    back = st.from_dlpack(torch.tensor([1j, 2], dtype=torch.complex64))
    assert back.dtype is st.complex64 and back.tolist() == [1j, 2 + 0j]


def test_abs_and_angle_dtypes_follow_torch():
    for d, td in ((st.complex64, torch.complex64), (st.complex128, torch.complex128), (st.int32, torch.int32),
                  (st.bool, torch.bool), (st.float16, torch.float16)):
        x, tx = st.ones(2, dtype=d), torch.ones(2, dtype=td)
        assert str(st.angle(x).dtype).split(".")[1] == str(torch.angle(tx).dtype).split(".")[1]
        if d is not st.bool:
            assert str(st.abs(x).dtype).split(".")[1] == str(torch.abs(tx).dtype).split(".")[1]
