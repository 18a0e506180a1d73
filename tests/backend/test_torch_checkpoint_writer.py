"""``strided.save(obj, f, format="torch")`` (Note [Writing torch.save files]): torch.save's zip format, read back by
strided.load everywhere and by ``torch.load(weights_only=True)`` where torch is installed -- containers, plain values,
dtypes, devices, bytes, Parameters, shared storages, every dtype -- and the refusals."""

from __future__ import annotations

import collections
import io
import zipfile

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices


def _checkpoint():
    model = st.nn.Linear(3, 2)
    W = st.randn(4, 5, generator=st.Generator().manual_seed(0))
    return {
        "model": model.state_dict(), "iter": 5, "lr": 3e-4, "name": "gpt", "inf": float("inf"),
        "ints": [True, None, 2 ** 40, -(2 ** 70), -7, 300, 70000], "tied": (W, W.t(), W[1:3]),
        "b": b"\x00\xffabc", "dtype": st.float16, "device": st.device("cpu"),
        "param": st.nn.Parameter(st.ones(2)), "frozen": st.nn.Parameter(st.ones(2), requires_grad=False),
        "od": collections.OrderedDict(a=1), "nested": {1: {"x": st.zeros(2, 2)}, 2.5: ()},
        "complex": 1 - 2j, "set": {1, "a"}, "empty set": set(),
        "rg": st.ones(2, requires_grad=True), "empty": st.empty(0, 3),
        **{f"t_{d.name}": st.arange(6).to(d).view(2, 3) for d in (
            st.float32, st.float64, st.float16, st.bfloat16, st.int64, st.int32, st.int16, st.int8, st.uint8,
            st.bool, st.complex64, st.complex128)},
    }


def _save(obj) -> bytes:
    buf = io.BytesIO()
    st.save(obj, buf, format="torch")
    return buf.getvalue()


def test_archive_layout_and_alignment():
    with zipfile.ZipFile(io.BytesIO(_save(_checkpoint()))) as archive:
        names = archive.namelist()
        assert {"archive/data.pkl", "archive/byteorder", "archive/version"} <= set(names)
        assert archive.read("archive/byteorder") == b"little"
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            if info.filename.startswith("archive/data/"):
                start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
                assert start % 64 == 0  # torch.load(mmap=True) maps the records in place


def test_round_trip_through_strided_load():
    obj = _checkpoint()
    back = st.load(io.BytesIO(_save(obj)))
    assert isinstance(back["model"], collections.OrderedDict) and list(back["model"]) == ["weight", "bias"]
    np.testing.assert_array_equal(back["model"]["weight"].numpy(), obj["model"]["weight"].numpy())
    assert (back["iter"], back["lr"], back["name"], back["inf"]) == (5, 3e-4, "gpt", float("inf"))
    assert back["ints"] == obj["ints"] and back["b"] == obj["b"] and back["dtype"] is st.float16
    assert (back["complex"], back["set"], back["empty set"]) == (1 - 2j, {1, "a"}, set())
    assert back["device"] == st.device("cpu") and back["od"] == obj["od"] and back["nested"][2.5] == ()
    a, b, c = back["tied"]
    assert a.untyped_storage() is b.untyped_storage() is c.untyped_storage()  # one storage, as saved
    assert b.stride() == (1, 5) and c.storage_offset() == 5
    assert isinstance(back["param"], st.nn.Parameter) and back["param"].requires_grad
    assert not back["frozen"].requires_grad and back["rg"].requires_grad
    for key, value in obj.items():
        if key.startswith("t_"):
            assert back[key].dtype is value.dtype and back[key].tolist() == value.tolist()
    assert back["empty"].shape == (0, 3)


def test_torch_loads_it():
    torch = pytest.importorskip("torch")
    obj = _checkpoint()
    t = torch.load(io.BytesIO(_save(obj)), weights_only=True)
    assert isinstance(t["model"], collections.OrderedDict)
    linear = torch.nn.Linear(3, 2)
    linear.load_state_dict(t["model"])
    np.testing.assert_array_equal(linear.weight.detach().numpy(), obj["model"]["weight"].numpy())
    assert t["ints"] == obj["ints"] and t["b"] == obj["b"] and t["dtype"] is torch.float16
    assert (t["complex"], t["set"], t["empty set"]) == (1 - 2j, {1, "a"}, set())
    assert t["device"] == torch.device("cpu")
    a, b, c = t["tied"]
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() and torch.equal(b, a.t())
    assert isinstance(t["param"], torch.nn.Parameter) and t["param"].requires_grad and t["rg"].requires_grad
    for key, value in obj.items():
        if key.startswith("t_"):
            assert str(t[key].dtype) == f"torch.{value.dtype.name}" and t[key].tolist() == value.tolist()


def test_torch_maps_the_file(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "ckpt.pt"
    st.save({"w": st.arange(10.0)}, path, format="torch")
    assert torch.load(path, weights_only=True, mmap=True)["w"].tolist() == list(range(10))
    st.save({"w": st.ones(1)}, path, format="torch")  # replaced atomically
    assert st.load(path)["w"].tolist() == [1.0]


def test_refusals():
    with pytest.raises(ValueError, match="format must be 'safetensors' or 'torch', got 'pickle'"):
        st.save({}, io.BytesIO(), format="pickle")
    with pytest.raises(TypeError, match=r"cannot write a object at the top level\['f'\] in torch's format"):
        st.save({"f": object()}, io.BytesIO(), format="torch")
    with pytest.raises(TypeError, match="cannot write a frozenset"):  # torch's weights-only loader refuses one
        st.save({"f": frozenset({1})}, io.BytesIO(), format="torch")
    with pytest.raises(TypeError, match="on the meta device and has no data"):
        st.save([st.ones(2, device="meta")], io.BytesIO(), format="torch")
    x = st.ones(4)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        st.save([x, x.view(st.int32)], io.BytesIO(), format="torch")


@pytest.mark.parametrize("device", [d for d in available_devices() if d != "meta"])
def test_device_tensors_keep_their_location(device):
    """A CUDA tensor is written from a host copy under its location ("cuda:0"), as torch.save writes it: strided.load
    puts it back on the device, torch.load too (or where map_location says)."""
    x = st.arange(6.0, device=device).view(2, 3)
    data = _save({"x": x, "column": x[:, 1]})
    back = st.load(io.BytesIO(data))
    assert back["x"].device == x.device and back["x"].tolist() == x.tolist()
    assert back["column"].untyped_storage() is back["x"].untyped_storage() and back["column"].tolist() == [1.0, 4.0]
    assert st.load(io.BytesIO(data), map_location="cpu")["x"].device == st.device("cpu")
    torch = pytest.importorskip("torch")
    on_cuda = device == "cuda" and torch.cuda.is_available()
    t = torch.load(io.BytesIO(data), weights_only=True, map_location=None if on_cuda else "cpu")
    assert t["x"].device.type == ("cuda" if on_cuda else "cpu") and t["x"].tolist() == x.tolist()
    assert t["column"].tolist() == [1.0, 4.0]
