"""strided.load reads torch.save files (Note [torch.save files]): a committed file written by torch 2.14
(tests/data/make_torch_checkpoint.py), hand-made pickles for the byte order, locations and refusals, and, where
torch is installed, a random model's checkpoint compared tensor by tensor."""

from __future__ import annotations

import io
import pickle
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

import strided as st

DATA = Path(__file__).parent.parent / "data" / "torch_checkpoint.pt"


@pytest.fixture(scope="module")
def ckpt():
    return st.load(DATA)


def test_every_dtype_loads_with_its_values(ckpt):
    want = {"float32": st.float32, "float64": st.float64, "float16": st.float16, "bfloat16": st.bfloat16,
            "int64": st.int64, "int32": st.int32, "int16": st.int16, "int8": st.int8, "uint8": st.uint8,
            "bool": st.bool, "complex64": st.complex64, "complex128": st.complex128}
    assert sorted(ckpt["dtypes"]) == sorted(want)
    for name, d in want.items():
        t = ckpt["dtypes"][name]
        assert t.dtype is d and t.device.type == "cpu", name
        expected = np.arange(5) != 0 if d is st.bool else np.arange(5)
        np.testing.assert_array_equal(t.numpy().astype(np.complex128), expected.astype(np.complex128))


def test_views_share_one_storage_as_in_torch():
    ckpt = st.load(DATA)  # its own copy: this test writes into it
    base, view, tail = ckpt["base"], ckpt["view"], ckpt["tail"]
    assert view.tolist() == [2.0, 5.0, 8.0] and view.stride() == (3,) and view.storage_offset() == 2
    assert tail.tolist() == [7.0, 8.0, 9.0]
    base[8] = -1.0
    assert view.tolist() == [2.0, 5.0, -1.0] and tail.tolist() == [7.0, -1.0, 9.0]
    a, b = ckpt["tied"]
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() and a.tolist() == [[0, 1], [2, 3]]
    t = ckpt["transposed"]
    assert t.shape == (3, 2) and t.stride() == (1, 3) and t.tolist() == [[0, 3], [1, 4], [2, 5]]


def test_parameters_scalars_and_plain_values(ckpt):
    p = ckpt["param"]
    assert isinstance(p, st.nn.Parameter) and p.requires_grad and p.tolist() == [0.0, 1.0, 2.0]
    assert ckpt["scalar"].shape == () and ckpt["scalar"].item() == 2.5
    assert ckpt["empty"].shape == (0, 3)
    assert ckpt["size"] == (2, 3) and ckpt["device"] == st.device("cpu") and ckpt["dtype"] is st.float16
    assert ckpt["plain"] == {"iter": 5, "lr": 1e-3, "name": "run", "flags": (True, None), "ids": {1, 2},
                             "blob": b"\x00\x01"}


def test_a_torch_state_dict_loads_into_a_strided_module(ckpt):
    model = st.nn.Sequential(st.nn.Linear(3, 2), st.nn.LayerNorm(2))
    assert str(model.load_state_dict(ckpt["model"])) == "<All keys matched successfully>"
    # the saved weights are arange / 10 after one AdamW step (lr 1e-3: each moved by at most 1e-3)
    np.testing.assert_allclose(model[0].weight.detach().numpy(), np.arange(6.0).reshape(2, 3) / 10, atol=1.1e-3)
    assert model[0].weight.detach().numpy()[0, 1] == ckpt["model"]["0.weight"].numpy()[0, 1]
    state = ckpt["optimizer"]
    assert sorted(state["state"][0]) == ["exp_avg", "exp_avg_sq", "step"] and state["param_groups"][0]["lr"] == 1e-3
    opt = st.optim.AdamW(model.parameters(), lr=1e-3)
    opt.load_state_dict(state)
    assert opt.state_dict()["state"][0]["step"].item() == 1.0


def test_map_location_and_file_objects():
    with open(DATA, "rb") as f:
        f.read(3)  # the reader starts where the file object is
        f.seek(0)
        got = st.load(io.BytesIO(f.read()), map_location="meta")
    assert got["base"].device.type == "meta" and got["view"].device.type == "meta"
    assert st.load(DATA, map_location={"cpu": "meta"})["param"].device.type == "meta"


# -- hand-made files: a one-tensor pickle in torch's opcodes --------------------------------------------------------
def _unicode(s: str) -> bytes:
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def _one_tensor_pickle(storage="FloatStorage", location="cpu", numel=3, glob=b"ctorch._utils\n_rebuild_tensor_v2\n"):
    pid = b"(" + _unicode("storage") + f"ctorch\n{storage}\n".encode() + _unicode("0") + _unicode(location) + \
        b"K" + bytes([numel]) + b"tQ"
    return (b"\x80\x02" + glob + b"(" + pid + b"K\x00" + b"K" + bytes([numel]) + b"\x85" + b"K\x01\x85" + b"\x89" +
            b"ccollections\nOrderedDict\n)R" + b"tR.")


def _archive(pkl: bytes, records: dict, byteorder: bytes = b"little") -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", byteorder)
        for key, data in records.items():
            z.writestr(f"archive/data/{key}", data)
    buf.seek(0)
    return buf


def test_hand_made_file_and_big_endian_storages():
    values = np.array([1.5, -2.0, 3.25], dtype=np.float32)
    assert st.load(_archive(_one_tensor_pickle(), {"0": values.tobytes()})).tolist() == [1.5, -2.0, 3.25]
    big = _archive(_one_tensor_pickle(), {"0": values.astype(">f4").tobytes()}, byteorder=b"big")
    assert st.load(big).tolist() == [1.5, -2.0, 3.25]


def test_a_cuda_tensor_needs_cuda_or_a_map_location():
    f = _archive(_one_tensor_pickle(location="cuda:0"), {"0": np.zeros(3, np.float32).tobytes()})
    if not st.cuda.is_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device but "
                                               r"strided.cuda.is_available\(\) is False"):
            st.load(f)
        f.seek(0)
    assert st.load(f, map_location="cpu").device.type == "cpu"


def test_no_code_runs_and_unreadable_files_say_why(tmp_path):
    marker = tmp_path / "ran"
    evil = pickle.dumps(_Evil(str(marker)), protocol=2)
    with pytest.raises(pickle.UnpicklingError, match=r"needs the global (posix|os|nt)\.system, which a weights-only "
                                                     "load does not run"):
        st.load(_archive(evil, {}))
    assert not marker.exists()
    with pytest.raises(pickle.UnpicklingError, match="torch.QInt8Storage, whose element type strided does not have"):
        st.load(_archive(_one_tensor_pickle(storage="QInt8Storage"), {"0": b"\x00" * 3}))
    with pytest.raises(pickle.UnpicklingError, match="has no record data/0"):
        st.load(_archive(_one_tensor_pickle(), {}))
    with pytest.raises(pickle.UnpicklingError, match="needs the global torch._utils._rebuild_qtensor"):
        st.load(_archive(_one_tensor_pickle(glob=b"ctorch._utils\n_rebuild_qtensor\n"), {"0": b"\x00" * 12}))
    script = io.BytesIO()
    with zipfile.ZipFile(script, "w") as z:
        z.writestr("model/constants.pkl", b"")
        z.writestr("model/code/__torch__.py", b"")
    script.seek(0)
    with pytest.raises(ValueError, match="is a TorchScript archive without torch.save's <name>/data.pkl"):
        st.load(script)
    legacy = tmp_path / "legacy.pt"
    legacy.write_bytes(b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.")
    with pytest.raises(ValueError, match="is in torch's legacy \\(non-zip\\) format"):
        st.load(legacy)


class _Evil:
    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        import os

        return os.system, (f"touch {self.path}",)


def test_a_random_model_matches_torch_tensor_by_tensor(tmp_path):
    torch = pytest.importorskip("torch")
    model = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
    opt = torch.optim.Adam(model.parameters())
    model(torch.randn(2, 5, 16)).sum().backward()
    opt.step()
    path = tmp_path / "m.pt"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "half": model.state_dict()["linear1.weight"]
                .to(torch.bfloat16)}, path)
    want = torch.load(path)
    got = st.load(path)
    for k, v in want["model"].items():
        np.testing.assert_array_equal(got["model"][k].numpy(), v.numpy(), err_msg=k)
    for i, s in want["opt"]["state"].items():
        for k, v in s.items():
            np.testing.assert_array_equal(got["opt"]["state"][i][k].numpy(), v.numpy(), err_msg=f"{i} {k}")
    np.testing.assert_array_equal(got["half"].float().numpy(), want["half"].float().numpy())
