"""dtype table, torch's promotion rules, and devices."""

from __future__ import annotations

import pytest

import strided as st
from strided import dtypes as dt


@pytest.mark.parametrize("a, b, want", [
    (st.uint8, st.int8, st.int16), (st.bool, st.int32, st.int32), (st.int64, st.float16, st.float16),
    (st.bfloat16, st.float16, st.float32), (st.float32, st.float64, st.float64),
    (st.int8, st.uint8, st.int16), (st.bool, st.bool, st.bool), (st.bfloat16, st.int64, st.bfloat16),
])
def test_promote_types(a, b, want):
    assert st.promote_types(a, b) is want
    assert st.promote_types(b, a) is want


def test_python_scalars_do_not_promote_within_category():
    i32 = st.empty(2, dtype=st.int32)
    f16 = st.empty(2, dtype=st.float16)
    assert st.result_type(i32, 5) is st.int32
    assert st.result_type(f16, 2.5) is st.float16
    assert st.result_type(i32, 2.5) is st.float32
    assert st.result_type(st.empty(2, dtype=st.bool), 3) is st.int64


def test_zero_dim_tensors_promote_only_across_categories():
    i16 = st.empty(2, dtype=st.int16)
    assert st.result_type(i16, st.tensor(3)) is st.int16
    assert st.result_type(i16, st.tensor(3.0, dtype=st.float64)) is st.float64
    assert st.result_type(st.tensor(1, dtype=st.int8), st.tensor(1, dtype=st.int32)) is st.int32


def test_default_dtype():
    assert st.get_default_dtype() is st.float32
    st.set_default_dtype(st.float64)
    try:
        assert st.tensor([1.5]).dtype is st.float64
        assert st.result_type(st.empty(1, dtype=st.int32), 1.5) is st.float64
    finally:
        st.set_default_dtype(st.float32)
    with pytest.raises(TypeError, match="only floating-point types"):
        st.set_default_dtype(st.int32)


def test_dtype_names_and_aliases():
    assert dt.to_dtype("float") is st.float32 and dt.to_dtype("torch.long") is st.int64
    assert st.half is st.float16 and st.double is st.float64
    with pytest.raises(TypeError, match="unknown dtype 'float8'"):
        dt.to_dtype("float8")
    assert st.bfloat16.itemsize == 2 and st.bfloat16.dlpack_code == 4


def test_devices():
    d = st.device("cuda:1")
    assert (d.type, d.index, str(d)) == ("cuda", 1, "cuda:1")
    assert st.device("cuda", 1) is d
    assert st.device("cpu") == "cpu"
    assert repr(st.device("meta")) == "device(type='meta')"
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, meta device type"):
        st.device("gpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        st.device("cuda:x")
    with pytest.raises(RuntimeError, match="must not be negative"):
        st.device("cuda", -1)
    # True == 1 and hashes alike: a bool must not find device(1)'s interned entry
    assert st.device(1) is d and st.device(0).index == 0
    for bad in (True, False):
        with pytest.raises(TypeError, match="expected a str, int or device, got bool"):
            st.device(bad)
        with pytest.raises(TypeError, match="argument 'index' \\(position 2\\) must be int, not bool"):
            st.device("cuda", bad)
    with pytest.raises(TypeError, match="must be int, not float"):
        st.device("cuda", 1.0)
    with pytest.raises(TypeError, match="got float"):
        st.device(1.0)


def test_the_meta_functions_fast_result_dtype_agrees_with_result_type():
    # backends/meta/common.result_dtype skips result_type when no operand can change the first tensor's dtype
    from strided.backends.meta.common import result_dtype

    scalars = [True, 3, -2, 2.5, 1j, None]
    for d in [*dt.all_dtypes, *dt.complex_dtypes]:
        for shape in ((), (2,)):
            t = st.empty(shape, dtype=d)
            for s in scalars:
                for ops in ((t, s), (t, s, 2), (t, st.empty(shape, dtype=d), s)):
                    try:
                        want = st.result_type(*(o for o in ops if o is not None))
                    except TypeError:  # a half type with a complex scalar: complex32 does not exist
                        with pytest.raises(TypeError):
                            result_dtype(*ops)
                        continue
                    assert result_dtype(*ops) is want, (d, shape, ops)


def test_factories_refuse_impossible_sizes_and_fills_in_torchs_words():
    # found by comparing torch's and strided's answers to bad factory arguments
    with pytest.raises(RuntimeError, match=r"Storage size calculation overflowed with sizes=\[2305843009213693952\]"):
        st.empty(2**61, device="meta")  # 2**63 bytes: past an int64 byte count, as c10 checks
    assert st.empty(2**60, device="meta").shape == (2**60,)
    with pytest.raises(RuntimeError, match=r"overflowed with sizes=\[1099511627776, 1073741824\]"):
        st.zeros(2**40, 2**30)
    with pytest.raises(RuntimeError, match=r"overflowed"):
        st.empty_strided((2**62,), (1,))
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator: not enough memory: you tried to allocate"):
        st.empty(2**60)  # fits the count, not the machine (was NumPy's MemoryError)
    with pytest.raises(TypeError, match=r"full\(\): argument 'fill_value' \(position 2\) must be Number, not str"):
        st.full((2,), "x")
    with pytest.raises(TypeError, match=r"zeros\(\): argument 'size' must be tuple of ints, but found element of "
                                        r"type str"):
        st.zeros((2, "a"))  # named zeros (was empty, the op it calls)
    assert st.zeros((st.tensor(2), 3)).shape == (2, 3)  # 0-dim integer tensors are sizes, as torch's
