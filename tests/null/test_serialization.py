"""strided.nn.save / load: the safetensors layout byte for byte, every dtype, views, errors, and
interchange with the ``safetensors`` package when it is installed."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

import strided as st
from strided import nn

ALL_DTYPES = [st.bool, st.uint8, st.int8, st.int16, st.int32, st.int64, st.float16, st.bfloat16, st.float32,
              st.float64]


def sample(dtype, shape=(2, 3)):
    return st.arange(int(np.prod(shape))).reshape(shape).to(dtype)


def test_round_trip_every_dtype(tmp_path):
    tensors = {f"t_{d.name}": sample(d) for d in ALL_DTYPES}
    tensors["scalar"] = st.tensor(2.5)
    tensors["empty"] = st.empty(0, 4)
    path = tmp_path / "all.safetensors"
    nn.save(tensors, path, metadata={"format": "pt"})
    loaded = nn.load(path)
    assert set(loaded) == set(tensors)
    for name, t in tensors.items():
        got = loaded[name]
        assert got.dtype is t.dtype and got.shape == t.shape, name
        np.testing.assert_array_equal(got.numpy(), t.numpy())


def test_header_layout(tmp_path):
    path = tmp_path / "h.safetensors"
    nn.save({"b": st.ones(2, dtype=st.float16), "a": st.ones(3, dtype=st.float64)}, path)
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0
    header = json.loads(raw[8:8 + n])
    # larger alignment first, packed without gaps
    assert header["a"] == {"dtype": "F64", "shape": [3], "data_offsets": [0, 24]}
    assert header["b"] == {"dtype": "F16", "shape": [2], "data_offsets": [24, 28]}
    assert len(raw) == 8 + n + 28
    assert np.frombuffer(raw[8 + n:8 + n + 24], "<f8").tolist() == [1.0, 1.0, 1.0]


def test_views_are_written_as_contents(tmp_path):
    base = st.arange(12.0).reshape(3, 4)
    view = base.t()[1:]
    path = tmp_path / "v.safetensors"
    nn.save({"v": view}, path)
    np.testing.assert_array_equal(nn.load(path)["v"].numpy(), np.arange(12.0).reshape(3, 4).T[1:])


def test_module_state_dict_round_trip(tmp_path):
    a = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4))
    b = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4))
    path = tmp_path / "m.safetensors"
    nn.save(a.state_dict(), path)
    b.load_state_dict(nn.load(path))
    for (na, pa), (nb, pb) in zip(a.named_parameters(), b.named_parameters()):
        assert na == nb
        np.testing.assert_array_equal(pa.detach().numpy(), pb.detach().numpy())


def test_errors(tmp_path):
    path = tmp_path / "bad.safetensors"
    with pytest.raises(TypeError, match="'x' is a list, not a Tensor"):
        nn.save({"x": [1, 2]}, path)
    with pytest.raises(TypeError, match="metadata must map str to str"):
        nn.save({"x": st.ones(1)}, path, metadata={"k": 1})
    header = json.dumps({"x": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0\0")
    with pytest.raises(ValueError, match="tensor 'x' has dtype 'F8_E4M3', which strided does not support"):
        nn.load(path)
    header = json.dumps({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)
    with pytest.raises(ValueError, match=r"invalid data_offsets \[0, 4\] for shape \[2\]"):
        nn.load(path)
    path.write_bytes(struct.pack("<Q", 1 << 40))
    with pytest.raises(ValueError, match="invalid safetensors header length"):
        nn.load(path)


def test_interchange_with_safetensors_package(tmp_path):
    stn = pytest.importorskip("safetensors.numpy", reason="the safetensors package is not installed")
    ours = tmp_path / "ours.safetensors"
    tensors = {f"t_{d.name}": sample(d) for d in ALL_DTYPES}
    nn.save(tensors, ours)
    theirs = stn.load_file(str(ours))
    for name, t in tensors.items():
        assert theirs[name].dtype == t.numpy().dtype and theirs[name].shape == tuple(t.shape)
        np.testing.assert_array_equal(theirs[name], t.numpy())
    other = tmp_path / "theirs.safetensors"
    stn.save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3), "i": np.array([1, 2], np.int64)}, str(other))
    back = nn.load(other)
    np.testing.assert_array_equal(back["w"].numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    assert back["i"].dtype is st.int64


def test_checkpoint_of_nested_containers_round_trips(tmp_path):
    m = st.nn.Linear(3, 2)
    opt = st.optim.AdamW(m.parameters(), lr=1e-3)
    m(st.randn(4, 3)).sum().backward()
    opt.step()
    ckpt = {"model": m.state_dict(), "optimizer": opt.state_dict(), "iter_num": 5, "best_val_loss": float("inf"),
            "config": {"n_layer": 2, "bias": True, "dataset": "shakespeare", "lr": 1e-3, "none": None, 3: "int key"},
            "tied": (m.weight, m.weight), "history": [1.5, float("nan")]}
    path = tmp_path / "ckpt.st"
    st.save(ckpt, path)
    back = st.load(path, map_location="cpu")
    assert back["iter_num"] == 5 and back["best_val_loss"] == float("inf") and back["config"] == ckpt["config"]
    assert back["history"][0] == 1.5 and back["history"][1] != back["history"][1]
    a, b = back["tied"]
    assert isinstance(back["tied"], tuple) and a is b and a.requires_grad  # one tensor, written once
    m2 = st.nn.Linear(3, 2)
    m2.load_state_dict(back["model"])
    assert st.equal(m2.weight.detach(), m.weight.detach())
    opt2 = st.optim.AdamW(m2.parameters(), lr=1e-3)
    opt2.load_state_dict(back["optimizer"])
    assert opt2.state_dict()["param_groups"][0]["betas"] == opt.state_dict()["param_groups"][0]["betas"]
    st.nn.save(m.state_dict(), tmp_path / "flat.st")  # a flat safetensors file loads as its dict
    assert sorted(st.load(tmp_path / "flat.st")) == ["bias", "weight"]


def test_checkpoint_refuses_objects_and_names_where_they_are(tmp_path):
    with pytest.raises(TypeError, match=r"cannot save a set at the top level\[1\]\['a'\]"):
        st.save([st.randn(2), {"a": {1.5}}], tmp_path / "bad.st")
    with pytest.raises(TypeError, match="keys must be str, int, float, bool or None"):
        st.save({(1, 2): 3}, tmp_path / "bad.st")
    with pytest.raises(TypeError, match="map_location must be a device, a str or a dict"):
        st.load(tmp_path / "bad.st", map_location=lambda s, loc: s)


def test_file_objects_round_trip(tmp_path):
    """torch.save / torch.load's file-object form: io.BytesIO and open binary files, for both layers."""
    import io

    model = nn.Linear(3, 2)
    buf = io.BytesIO()
    st.save({"model": model.state_dict(), "step": 7}, buf)
    buf.seek(0)
    ck = st.load(buf)
    assert ck["step"] == 7
    np.testing.assert_array_equal(ck["model"]["weight"].numpy(), model.weight.detach().numpy())
    raw = io.BytesIO()
    nn.save({"w": st.ones(2)}, raw, metadata={"k": "v"})
    raw.seek(0)
    from strided.nn.serialization import read_metadata

    assert read_metadata(raw) == {"k": "v"} and raw.tell() == 0  # read_metadata puts the position back
    assert nn.load(raw)["w"].tolist() == [1.0, 1.0]
    path = tmp_path / "ck.safetensors"
    with open(path, "wb") as f:
        st.save([st.arange(3)], f)
    with open(path, "rb") as f:
        assert st.load(f)[0].tolist() == [0, 1, 2]
    with open(path, "r", encoding="utf-8") as f, pytest.raises(TypeError, match="binary mode"):
        st.load(f)


def test_saving_over_a_checkpoint_is_atomic(tmp_path, monkeypatch):
    """A save that fails halfway (here: a tensor's host copy raises) leaves the previous checkpoint whole and no
    temporary file behind (Note [Atomic checkpoint writes])."""
    from strided.nn import serialization

    path = tmp_path / "ck.safetensors"
    st.save({"a": st.ones(4)}, path)
    before = path.read_bytes()
    chunks = []

    def failing_write(f, parts):
        real_write(f, _fail_after_first(parts, chunks))

    real_write = serialization.write_checkpoint
    monkeypatch.setattr(serialization, "write_checkpoint", failing_write)
    with pytest.raises(OSError, match="disk full"):
        st.save({"a": st.zeros(4), "b": st.zeros(8)}, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck.safetensors"]
    assert chunks  # the write had started


def _fail_after_first(parts, seen):
    for i, part in enumerate(parts):
        if i == 1:
            raise OSError("disk full")
        seen.append(part)
        yield part


def test_map_location_dict_and_refusals(tmp_path):
    path = tmp_path / "ck.safetensors"
    st.save({"w": st.ones(2)}, path)
    assert st.load(path, map_location={"cpu": "meta"})["w"].device.type == "meta"
    assert st.load(path, map_location={"cuda:1": "cuda:0"})["w"].device.type == "cpu"  # names it lacks stay
    with pytest.raises(TypeError, match="map_location must be a device, a str or a dict"):
        st.load(path, map_location=lambda storage, location: storage)
    with pytest.raises(TypeError, match="maps device names"):
        st.load(path, map_location={0: "cpu"})


def test_save_to_a_bad_path_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="cannot write .*missing"):
        st.save({"a": st.ones(1)}, tmp_path / "missing" / "ck.safetensors")
    with pytest.raises(IsADirectoryError, match="cannot write a checkpoint to"):
        st.save({"a": st.ones(1)}, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_complex_tensors_round_trip():
    """Note [Complex tensors in checkpoints]: stored as their real view, loaded back complex (views and ties kept)."""
    import io

    z = st.tensor([1 + 2j, -3j, 0.5], dtype=st.complex64)
    w = st.tensor([[1 + 1j, 2], [3, 4j]], dtype=st.complex128).t()  # non-contiguous
    buf = io.BytesIO()
    st.save({"z": z, "w": w, "tied": [z, z], "grad": z.clone().requires_grad_()}, buf)
    buf.seek(0)
    got = st.load(buf)
    assert got["z"].dtype is st.complex64 and got["z"].tolist() == z.tolist()
    assert got["w"].dtype is st.complex128 and st.equal(got["w"], w)
    assert got["tied"][0] is got["tied"][1] and got["grad"].requires_grad
    buf.seek(0)
    assert nn.load(buf)["t0"].shape == (3, 2)  # what the safetensors library sees: the real view
