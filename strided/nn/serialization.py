"""Save and load state dicts in the safetensors format, in pure Python (no pickle, no code).

Note [safetensors layout]
A file is: 8 bytes, little-endian u64 ``N``; ``N`` bytes of UTF-8 JSON; the data. The JSON maps
each tensor name to ``{"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}`` (byte
offsets into the data, which follows the header) and may hold ``"__metadata__"``: a str -> str
map. Tensors are C-contiguous, little-endian, packed with no gaps, and the header is padded with
spaces to a multiple of 8 bytes. The layout is Hugging Face's (github.com/huggingface/safetensors),
so files written here load with ``safetensors.numpy.load_file`` and the other way round.
"""

from __future__ import annotations

import json
import os
import struct
from collections import OrderedDict

import numpy as np

from .. import dtypes as _dt
from ..factories import from_numpy
from ..tensor import Tensor

__all__ = ["save", "load", "load_with_metadata", "read_metadata", "write_checkpoint", "SAFETENSORS_DTYPES"]

SAFETENSORS_DTYPES = {
    _dt.bool: "BOOL", _dt.uint8: "U8", _dt.int8: "I8", _dt.int16: "I16", _dt.int32: "I32", _dt.int64: "I64",
    _dt.float16: "F16", _dt.bfloat16: "BF16", _dt.float32: "F32", _dt.float64: "F64",
}
_FROM_CODE = {code: d for d, code in SAFETENSORS_DTYPES.items()}
_MAX_HEADER = 100_000_000  # the safetensors library's limit


def save(tensors: dict, path, metadata: dict | None = None) -> None:
    """Write ``tensors`` (name -> Tensor, e.g. ``module.state_dict()``) as safetensors to ``path`` (a path,
    replaced atomically: Note [Atomic checkpoint writes]) or a binary file object.

    Tensors on any device are copied to the host; views are written as their contents.
    ``metadata`` is an optional str -> str map stored in the header.
    """
    header: dict = {}
    if metadata is not None:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("save: metadata must map str to str")
        header["__metadata__"] = dict(metadata)
    arrays = []
    offset = 0
    # Largest alignment first, then by name, as the safetensors library orders the data.
    items = sorted(tensors.items(), key=lambda kv: (-_itemsize(kv), kv[0]))
    for name, t in items:
        if not isinstance(name, str):
            raise TypeError(f"save: tensor names must be str, got {type(name).__name__}")
        if name == "__metadata__":
            raise ValueError("save: '__metadata__' is reserved for the header's metadata")
        code = SAFETENSORS_DTYPES.get(t.dtype)
        if code is None:
            raise TypeError(f"save: tensor '{name}' has dtype {t.dtype}, which safetensors cannot store")
        arr = np.ascontiguousarray(t.detach().cpu().numpy())
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [offset, offset + arr.nbytes]}
        arrays.append(arr)
        offset += arr.nbytes
    blob = json.dumps(header, separators=(",", ":")).encode("utf-8")
    blob += b" " * (-len(blob) % 8)
    write_checkpoint(path, [struct.pack("<Q", len(blob)), blob, *(arr.reshape(-1).view(np.uint8) for arr in arrays)])


# Note [Atomic checkpoint writes]
# A checkpoint is usually written over the previous one. Written in place, a crash, a full disk or a Ctrl-C
# halfway through would leave neither: the file is written next to its target and renamed over it
# (``os.replace`` is atomic on POSIX and Windows), so the target holds the old checkpoint or the new one,
# never a torn one. A file object (``io.BytesIO``, an open file) is written as given.
def write_checkpoint(f, chunks) -> None:
    """Write a checkpoint to ``f``, a path (replaced atomically) or a binary file object; ``chunks`` is an iterable
    of bytes, or a function that writes into the open file (the torch-format writer's zip archive)."""
    if hasattr(f, "write"):
        _emit(f, chunks)
        return
    path = os.fspath(f)
    if os.path.isdir(path):
        raise IsADirectoryError(21, f"Is a directory: cannot write a checkpoint to {path!r}")
    tmp = os.path.join(os.path.dirname(os.path.abspath(path)), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        try:
            out = open(tmp, "wb")
        except OSError as e:  # name the file asked for, not the temporary beside it
            raise type(e)(e.errno, f"{e.strerror}: cannot write {path!r}") from None
        with out:
            _emit(out, chunks)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _emit(out, chunks) -> None:
    if callable(chunks):
        chunks(out)
        return
    for chunk in chunks:
        out.write(chunk)


def _read(f) -> tuple[bytes, str]:
    """The bytes of a path or a readable file object, and a name for messages."""
    if hasattr(f, "read"):
        try:
            data = f.read()
        except UnicodeDecodeError:  # a text-mode file of a binary checkpoint
            data = ""
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"load: the file object must be opened in binary mode (read() gave {type(data).__name__})")
        return bytes(data), getattr(f, "name", type(f).__name__)
    with open(f, "rb") as fh:
        return fh.read(), os.fspath(f)


def _itemsize(kv) -> int:
    value = kv[1]
    if not isinstance(value, Tensor):
        raise TypeError(f"save: '{kv[0]}' is a {type(value).__name__}, not a Tensor")
    return value.dtype.itemsize


def load(path, device="cpu") -> OrderedDict:
    """Read a safetensors file (a path or a binary file object) into an ordered dict name -> Tensor on
    ``device`` (file order)."""
    return load_with_metadata(path, device)[0]


def load_with_metadata(f, device="cpu") -> tuple[OrderedDict, dict]:
    """:func:`load` and the header's ``__metadata__`` map, from one read of ``f``."""
    data, path = _read(f)
    if len(data) < 8:
        raise ValueError(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
    (n,) = struct.unpack("<Q", data[:8])
    if n > _MAX_HEADER or 8 + n > len(data):
        raise ValueError(f"{path}: invalid safetensors header length {n} for a file of {len(data)} bytes")
    header = _parse_header(data[8:8 + n], path)
    metadata = dict(header.pop("__metadata__", None) or {})
    body = memoryview(data)[8 + n:]
    entries = sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0])
    out = OrderedDict()
    expected = 0
    for name, info in entries:
        code = info.get("dtype")
        dtype = _FROM_CODE.get(code)
        if dtype is None:
            raise ValueError(f"{path}: tensor '{name}' has dtype {code!r}, which strided does not support "
                             f"(supported: {', '.join(_FROM_CODE)})")
        shape = tuple(int(s) for s in info["shape"])
        begin, end = (int(o) for o in info["data_offsets"])
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if begin != expected or end - begin != nbytes or end > len(body):
            raise ValueError(f"{path}: tensor '{name}' has invalid data_offsets [{begin}, {end}] for shape "
                             f"{list(shape)} and dtype {code}")
        expected = end
        arr = np.frombuffer(body[begin:end], dtype=dtype.numpy_dtype.newbyteorder("<")).reshape(shape)
        t = from_numpy(arr.astype(dtype.numpy_dtype, copy=True))
        out[name] = t if str(device) == "cpu" else t.to(device)
    if expected != len(body):
        raise ValueError(f"{path}: {len(body) - expected} bytes after the last tensor's data")
    return out, metadata


def read_metadata(path) -> dict:
    """The header's ``__metadata__`` map of a safetensors file (empty when it has none); a file object is read
    from its position and put back there when it can seek."""
    if hasattr(path, "read"):
        where = path.tell() if path.seekable() else None
        try:
            return _read_metadata(path, getattr(path, "name", type(path).__name__))
        finally:
            if where is not None:
                path.seek(where)
    with open(path, "rb") as f:
        return _read_metadata(f, path)


def _read_metadata(f, path) -> dict:
    head = f.read(8)
    if len(head) < 8:
        raise ValueError(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
    (n,) = struct.unpack("<Q", head)
    if n > _MAX_HEADER:
        raise ValueError(f"{path}: invalid safetensors header length {n}")
    return dict(_parse_header(f.read(n), path).get("__metadata__", {}))


def _parse_header(blob: bytes, path) -> dict:
    try:
        return json.loads(blob.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: the safetensors header is not valid JSON: {e}") from None
