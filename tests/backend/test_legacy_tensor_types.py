"""The legacy tensor types and constructors (Note [Legacy constructors] in ``strided/legacy_tensor_types.py``):
``strided.FloatTensor(2, 3)``, ``strided.Tensor([1, 2])``, ``nn.Parameter(strided.Tensor(out, in))``,
``isinstance(x, strided.LongTensor)``, ``x.type(strided.DoubleTensor)``, ``set_default_tensor_type`` -- each form and
each refusal as torch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

NAMES = {"DoubleTensor": st.float64, "FloatTensor": st.float32, "HalfTensor": st.float16,
         "BFloat16Tensor": st.bfloat16, "LongTensor": st.int64, "IntTensor": st.int32, "ShortTensor": st.int16,
         "CharTensor": st.int8, "ByteTensor": st.uint8, "BoolTensor": st.bool}
CUDA = "cuda" in available_devices()


@pytest.fixture(autouse=True)
def _default_type():
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st.set_default_tensor_type(st.FloatTensor)


@pytest.mark.parametrize("name", NAMES)
def test_each_type_constructs_its_dtype_and_is_an_isinstance_check(name):
    cls = getattr(st, name)
    d = NAMES[name]
    assert cls.dtype is d and cls.is_cuda is False and repr(cls) == f"<class 'strided.{name}'>"
    assert getattr(st.cuda, name).is_cuda and repr(getattr(st.cuda, name)) == f"<class 'strided.cuda.{name}'>"
    x = cls(2, 3)
    assert type(x) is st.Tensor and x.shape == (2, 3) and x.dtype is d and x.device.type == "cpu"
    assert isinstance(x, cls) and isinstance(x, st.Tensor) and not isinstance(x, getattr(st.cuda, name))
    other = st.FloatTensor if d is not st.float32 else st.DoubleTensor
    assert not isinstance(x, other) and not isinstance(3, cls)
    assert cls([1, 0]).tolist() == st.tensor([1, 0], dtype=d).tolist()
    assert x.type() == f"strided.{name}" and st.zeros(2).type(cls).dtype is d


def test_the_constructor_forms():
    F = st.FloatTensor
    assert F().shape == (0,) and F(st.Size([2, 3])).shape == (2, 3) and F(np.int64(3)).shape == (3,)
    assert F((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, as in torch
    assert F(np.array([1, 2])).tolist() == [1.0, 2.0]
    assert st.LongTensor([1.7, -2.5]).tolist() == [1, -2]
    t = st.arange(6.0).reshape(2, 3).t()
    a = F(t)  # an alias: same memory and layout
    assert a._base is t._base and a.data_ptr() == t.data_ptr() and a.stride() == t.stride()
    storage = st.arange(4.0).untyped_storage()
    assert F(storage).tolist() == [0.0, 1.0, 2.0, 3.0] and F(storage).data_ptr() == storage.data_ptr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage's deprecation warning
        assert F(st.arange(3.0).storage()).tolist() == [0.0, 1.0, 2.0]
    assert F(2, device="cpu").device.type == "cpu"


def test_tensor_is_the_default_dtype_legacy_constructor():
    x = st.Tensor(3, 4)
    assert type(x) is st.Tensor and x.shape == (3, 4) and x.dtype is st.float32
    assert st.Tensor([1, 2]).tolist() == [1.0, 2.0] and st.Tensor().shape == (0,)
    ints = st.ones(2, dtype=st.int64)
    assert st.Tensor(ints).dtype is st.int64  # Tensor(other) aliases any dtype
    p = st.nn.Parameter(st.Tensor(5, 4))  # the classic custom layer
    st.nn.init.kaiming_uniform_(p, a=5 ** 0.5)
    assert p.shape == (5, 4) and p.requires_grad and bool((p.abs() <= 0.5).all())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st.set_default_tensor_type(st.DoubleTensor)
    assert st.Tensor(2).dtype is st.float64 and st.ones(1).dtype is st.float64
    with st.device("meta"):  # the default-device context does not reach legacy constructors, as in torch
        assert st.Tensor(2).device.type == "cpu"


@pytest.mark.parametrize("call, error, words", [
    (lambda: st.FloatTensor(2.5), TypeError, "new(): data must be a sequence (got float)"),
    (lambda: st.FloatTensor(True), TypeError, "new(): data must be a sequence (got bool)"),
    (lambda: st.FloatTensor(None), TypeError, "new(): data must be a sequence (got NoneType)"),
    (lambda: st.FloatTensor("a"), TypeError, "new(): invalid data type 'str'"),
    (lambda: st.FloatTensor(2, 3.0), TypeError,
     "new(): argument 'size' failed to unpack the object at pos 2 with error \"type must be tuple of ints,but got "
     "float\""),
    (lambda: st.FloatTensor(2, dtype=st.float32), TypeError,
     "new() received an invalid combination of arguments - got (int, dtype=strided.dtype), but expected one of:"),
    (lambda: st.FloatTensor(st.ones(2, dtype=st.int64)), TypeError,
     "expected TensorOptions(dtype=float, device=cpu, layout=Strided, requires_grad=false (default), "
     "pinned_memory=false (default), memory_format=(nullopt)) (got TensorOptions(dtype=long int, device=cpu,"),
    (lambda: st.FloatTensor(2, device="meta"), RuntimeError,
     "legacy constructor expects device type: cpu but device type: meta was passed"),
    (lambda: st.Tensor(st.ones(2), device="cpu"), RuntimeError,
     "Legacy tensor constructor of the form strided.Tensor(tensor, device=device) is not supported."),
    (lambda: st.FloatTensor(-1), RuntimeError, "Trying to create tensor with negative dimension -1: [-1]"),
    (lambda: st.FloatTensor(st.arange(2).untyped_storage(), 3), TypeError,
     "new() received an invalid combination of arguments"),
])
def test_refusals_in_torchs_words(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value)


def test_typed_storage_of_another_dtype_is_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = st.ones(2, dtype=st.int64).storage()
    with pytest.raises(RuntimeError, match="Expected a Storage of type Float or an UntypedStorage, but got type Long "
                                           "for argument 1 'storage'"):
        st.FloatTensor(s)


def test_set_default_tensor_type():
    with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated as of PyTorch 2.1"):
        st.set_warn_always(True)
        try:
            st.set_default_tensor_type("torch.DoubleTensor")
        finally:
            st.set_warn_always(False)
    assert st.get_default_dtype() is st.float64
    with pytest.raises(TypeError, match="^only floating-point types are supported as the default type$"):
        st.set_default_tensor_type(st.LongTensor)
    with pytest.raises(TypeError, match="^invalid type object: only floating-point types are supported"):
        st.set_default_tensor_type(st.float64)


@pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")
def test_cuda_types():
    x = st.cuda.FloatTensor(2, 3)
    assert x.device.type == "cuda" and x.dtype is st.float32 and isinstance(x, st.cuda.FloatTensor)
    assert not isinstance(x, st.FloatTensor)
    assert st.cuda.LongTensor([1, 2]).cpu().tolist() == [1, 2]
    y = st.ones(2).type(st.cuda.DoubleTensor)
    assert y.device.type == "cuda" and y.dtype is st.float64 and y.type() == "strided.cuda.DoubleTensor"
    assert y.type(st.cuda.DoubleTensor) is y and y.type(st.FloatTensor).device.type == "cpu"
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cuda but device type: cpu"):
        st.cuda.FloatTensor(2, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st.set_default_tensor_type(st.cuda.FloatTensor)
    try:
        assert st.Tensor(2).device.type == "cuda" and st.ones(2).device.type == "cuda"
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            st.set_default_tensor_type(st.FloatTensor)
    assert st.ones(2).device.type == "cpu" and st.Tensor(2).device.type == "cpu"


def test_against_torch():
    torch = pytest.importorskip("torch")
    for name in NAMES:
        assert getattr(st, name).dtype.name == str(getattr(torch, name).dtype).split(".")[-1]
    for call in (lambda lib: lib.FloatTensor(2.5), lambda lib: lib.FloatTensor("a"),
                 lambda lib: lib.FloatTensor(2, 3.0), lambda lib: lib.FloatTensor(lib.ones(2, dtype=lib.int64)),
                 lambda lib: lib.FloatTensor(-1)):
        with pytest.raises(Exception) as mine:
            call(st)
        with pytest.raises(Exception) as theirs:
            call(torch)
        assert type(mine.value) is type(theirs.value) and str(mine.value) == str(theirs.value)
    assert st.FloatTensor((2, 3)).tolist() == torch.FloatTensor((2, 3)).tolist()
    assert st.IntTensor(np.array([1.5, -2.5])).tolist() == torch.IntTensor(np.array([1.5, -2.5])).tolist()


def test_tensor_new_is_the_legacy_constructor_with_the_tensors_type():
    x = st.ones(2, dtype=st.float64)
    assert x.new(2, 3).dtype == st.float64 and x.new(2, 3).shape == (2, 3)
    assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new().shape == (0,)
    assert x.new(st.Size([2])).shape == (2,)  # a Size is sizes; a tuple is data, as torch's
    assert st.ones(2, dtype=st.int32).new((2,)).tolist() == [2]
    same = st.ones(2, dtype=st.float64)
    assert x.new(same) is not same and x.new(same).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="expected TensorOptions\\(dtype=double"):
        x.new(st.ones(2))  # a tensor of another type
