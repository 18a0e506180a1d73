"""``strided.from_file`` / ``UntypedStorage.from_file`` (Note [Memory-mapped files] in ``strided/mapped_files.py``):
private mappings leave the file alone, shared ones write through and create or extend it; the refusals in torch's
words; and the same results as torch's where it is installed."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import strided as st


@pytest.fixture
def ten_floats(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(10, dtype=np.float32).tofile(path)
    return path


def test_private_mapping_reads_the_file_and_never_writes_it(ten_floats):
    t = st.from_file(ten_floats, shared=False, size=10, dtype=st.float32)
    assert t.tolist() == list(range(10)) and t.dtype is st.float32 and t.is_shared()
    t[0] = 100.0
    assert t[0].item() == 100.0 and np.fromfile(ten_floats, dtype=np.float32)[0] == 0.0
    assert (st.from_file(str(ten_floats), size=3, dtype=st.float32) * 2).tolist() == [0.0, 2.0, 4.0]
    assert st.from_file(ten_floats, size=5, dtype=st.int32).numpy().tolist() == \
        np.fromfile(ten_floats, dtype=np.int32)[:5].tolist()  # the same bytes read as another dtype


def test_shared_mapping_writes_through_and_creates_the_file(ten_floats, tmp_path):
    t = st.from_file(ten_floats, shared=True, size=10, dtype=st.float32)
    t[1:3] = st.tensor([50.0, 60.0])
    t.mul_(2)
    del t
    assert np.fromfile(ten_floats, dtype=np.float32)[:4].tolist() == [0.0, 100.0, 120.0, 6.0]
    new = tmp_path / "new.bin"
    u = st.from_file(new, shared=True, size=4, dtype=st.float64)
    assert u.tolist() == [0.0] * 4 and os.path.getsize(new) == 32
    u.fill_(1.5)
    del u
    assert np.fromfile(new).tolist() == [1.5] * 4


def test_shared_between_processes(tmp_path):
    path = tmp_path / "counter.bin"
    st.from_file(path, shared=True, size=1, dtype=st.int64).fill_(41)
    code = ("import strided as st, sys; t = st.from_file(sys.argv[1], shared=True, size=1, dtype=st.int64); "
            "t.add_(1)")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert st.from_file(path, size=1, dtype=st.int64).item() == 42


def test_storage_from_file_and_empty(ten_floats):
    s = st.UntypedStorage.from_file(ten_floats, False, 8)
    assert s.nbytes() == 8 and s.is_shared() and bytes(s.buffer[:4]) == np.float32(0).tobytes()
    assert st.from_file(ten_floats).shape == (0,)
    t = st.from_file(ten_floats, size=2, dtype=st.float32)
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        t.resize_(100)
    assert t.untyped_storage().share_memory_() is t.untyped_storage() and t.tolist() == [0.0, 1.0]
    assert st.from_file(ten_floats, size=2, dtype=st.float32, requires_grad=True).requires_grad


@pytest.mark.parametrize("call, words", [
    (lambda p: st.from_file(p, size=20, dtype=st.float32),
     "size <40> is smaller than the required mapping size <80>"),
    (lambda p: st.from_file(p.parent / "missing.bin", size=2),
     "in read-only mode: No such file or directory (2)"),
    (lambda p: st.from_file(p.parent / "no_dir" / "x.bin", shared=True, size=2),
     "in read-write mode: No such file or directory (2)"),
    (lambda p: st.from_file(p, size=2, pin_memory=True), "tensors constructed from a file cannot be pinned"),
    (lambda p: st.from_file(p, size=2, device="meta"), "from_file: only CPU tensors can be mapped to files"),
    (lambda p: st.from_file(p, size=-1, dtype=st.float32), "unable to mmap -4 bytes from file <"),
])
def test_refusals(ten_floats, call, words):
    with pytest.raises(RuntimeError) as info:
        call(ten_floats)
    assert words in str(info.value)


def test_against_torch(ten_floats):
    torch = pytest.importorskip("torch")
    for dtype in ("float32", "int16", "uint8"):
        mine = st.from_file(ten_floats, size=6, dtype=getattr(st, dtype)).tolist()
        theirs = torch.from_file(str(ten_floats), size=6, dtype=getattr(torch, dtype)).tolist()
        assert mine == theirs
    for call in (lambda lib, p: lib.from_file(p, size=20, dtype=lib.float32),
                 lambda lib, p: lib.from_file(p + ".missing", size=2)):
        with pytest.raises(RuntimeError) as a:
            call(st, str(ten_floats))
        with pytest.raises(RuntimeError) as b:
            call(torch, str(ten_floats))
        assert str(a.value) == str(b.value)


@pytest.mark.parametrize("kwargs, words", [
    ({"size": 2.5}, "from_file(): argument 'size' must be int, not float"),
    ({"size": True}, "from_file(): argument 'size' must be int, not bool"),
    ({"size": 2, "shared": "yes"}, "from_file(): argument 'shared' must be bool, not str"),
])
def test_argument_types_in_torchs_words(ten_floats, kwargs, words):
    with pytest.raises(TypeError) as info:
        st.from_file(ten_floats, **kwargs)
    assert str(info.value) == words
    with pytest.raises(TypeError, match=r"^from_file\(\): argument 'filename' \(position 1\) must be str, not int$"):
        st.from_file(3, size=2)
