"""Reading files written by ``torch.save`` (its zip format) into strided tensors, without PyTorch and without
running any code from the file: what ``torch.load(weights_only=True)`` accepts.

Note [torch.save files]
torch.save writes a zip archive: ``<name>/data.pkl``, a pickle (protocol 2) of the object, and one record
``<name>/data/<key>`` per storage, its bytes in the order ``<name>/byteorder`` names (little-endian unless it says
otherwise). In the pickle a tensor is ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, hooks)`` and its storage a persistent id ``("storage", torch.FloatStorage, key, location, numel)``.
A restricted unpickler reads it, as torch's weights-only unpickler does: ``find_class`` admits only a fixed table
-- the tensor and Parameter rebuild functions, the storage types, ``collections.OrderedDict`` / ``Counter``,
``torch.Size``, ``torch.device``, the dtypes, ``set``, ``complex``, ``bytearray``, ``_codecs.encode`` (bytes) --
each mapped to a strided equivalent here; any other global raises ``pickle.UnpicklingError`` naming it, so a file
can never run code. Every storage is read once, as one flat tensor on its target device; the tensors of the file
are views of it with their saved offset, sizes and strides, so tensors that shared a storage in torch (tied
weights, slices) share one here. Not read: torch's legacy non-zip format (torch < 1.6 or
``_use_new_zipfile_serialization=False``), TorchScript archives, quantized, sparse, nested and subclass tensors,
and dtypes strided lacks (uint16 / 32 / 64, float8): each raises with what it found.
"""

from __future__ import annotations

import codecs
import collections
import pickle
import zipfile

import ml_dtypes
import numpy as np

from . import dtypes as dt
from .device import device as _device
from .layouts import strided as _strided_layout
from .tensor import Size

__all__ = ["is_torch_zip", "load_torch_zip"]

_ZIP_MAGIC = b"PK\x03\x04"
_LEGACY_MAGIC = b"\x80\x02\x8a\x0a"  # pickle protocol 2, then the legacy format's magic number (a LONG1)

_STORAGES = {  # torch's typed storage classes -> (strided dtype, NumPy dtype of the bytes)
    "FloatStorage": dt.float32, "DoubleStorage": dt.float64, "HalfStorage": dt.float16,
    "BFloat16Storage": dt.bfloat16, "LongStorage": dt.int64, "IntStorage": dt.int32, "ShortStorage": dt.int16,
    "CharStorage": dt.int8, "ByteStorage": dt.uint8, "BoolStorage": dt.bool, "ComplexFloatStorage": dt.complex64,
    "ComplexDoubleStorage": dt.complex128,
}
_DTYPES = {  # torch.<name> -> strided dtype
    "float32": dt.float32, "float": dt.float32, "float64": dt.float64, "double": dt.float64, "float16": dt.float16,
    "half": dt.float16, "bfloat16": dt.bfloat16, "int64": dt.int64, "long": dt.int64, "int32": dt.int32,
    "int": dt.int32, "int16": dt.int16, "short": dt.int16, "int8": dt.int8, "uint8": dt.uint8, "bool": dt.bool,
    "complex64": dt.complex64, "cfloat": dt.complex64, "complex128": dt.complex128, "cdouble": dt.complex128,
}


def _numpy_dtype(d: dt.dtype) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if d is dt.bfloat16 else np.dtype(d.numpy_dtype)


class _StorageType:
    """What ``torch.FloatStorage`` and its kind stand for in the pickle: the dtype of a storage's elements."""

    def __init__(self, name: str):
        self.name = name
        self.dtype = _STORAGES.get(name)


class _Storage:
    """One storage of the file: its record's key, element dtype, saved location and element count."""

    def __init__(self, key: str, dtype, location: str, numel: int):
        self.key, self.dtype, self.location, self.numel = key, dtype, location, numel


class _Reader:
    """Reads the storages of one archive, once per (key, dtype), onto their target devices."""

    def __init__(self, archive: zipfile.ZipFile, prefix: str, target, where: str):
        self.archive, self.prefix, self.target, self.where = archive, prefix, target, where
        order = f"{prefix}byteorder"
        self.big_endian = order in archive.namelist() and archive.read(order).strip() == b"big"
        self.flat: dict = {}

    def flat_tensor(self, storage: _Storage, d):
        """The storage's elements as a flat strided tensor of dtype ``d`` on the target device (cached)."""
        from .tensor_data import from_numpy

        cached = self.flat.get((storage.key, d))
        if cached is not None:
            return cached
        name = f"{self.prefix}data/{storage.key}"
        try:
            info = self.archive.getinfo(name)
        except KeyError:
            raise pickle.UnpicklingError(f"strided.load: {self.where} has no record data/{storage.key} for a "
                                         "storage its pickle names") from None
        raw = bytearray(info.file_size)  # read once into writable memory the tensor then owns
        with self.archive.open(info) as record:
            record.readinto(raw)
        np_dtype = _numpy_dtype(d)
        if len(raw) % np_dtype.itemsize:
            raise pickle.UnpicklingError(f"strided.load: {self.where}: storage {storage.key} holds {len(raw)} bytes, "
                                         f"not a whole number of {d.name} elements")
        array = np.frombuffer(raw, dtype=np_dtype)
        if self.big_endian:
            array = array.byteswap()  # a native-order copy
        flat = from_numpy(array)
        dev = self.target(storage.location)
        if dev.type != "cpu":
            flat = flat.to(dev)
        self.flat[(storage.key, d)] = flat
        return flat

    def tensor(self, storage, offset, size, stride, requires_grad, d=None):
        if not isinstance(storage, _Storage):
            raise pickle.UnpicklingError(f"strided.load: {self.where}: a tensor's storage is a "
                                         f"{type(storage).__name__}, not a storage record")
        d = storage.dtype if d is None else d
        flat = self.flat_tensor(storage, d)
        t = flat.as_strided(tuple(size), tuple(stride), int(offset))
        if requires_grad:
            t.requires_grad_(True)
        return t


def _rebuild_functions(reader: _Reader) -> dict:
    from .nn.parameter import Parameter

    def rebuild_tensor(storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
        return reader.tensor(storage, offset, size, stride, requires_grad)

    def rebuild_tensor_v3(storage, offset, size, stride, requires_grad, hooks, dtype, metadata=None):
        return reader.tensor(storage, offset, size, stride, requires_grad, dtype)

    def rebuild_parameter(data, requires_grad, hooks, state=None):
        return Parameter(data.detach(), requires_grad=requires_grad)

    def rebuild_meta(dtype, size, stride, requires_grad):
        from .factories import empty_strided

        return empty_strided(tuple(size), tuple(stride), dtype=dtype, device="meta").requires_grad_(requires_grad)

    return {
        ("torch._utils", "_rebuild_tensor"): lambda storage, offset, size, stride: rebuild_tensor(
            storage, offset, size, stride),
        ("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v3"): rebuild_tensor_v3,
        ("torch._utils", "_rebuild_parameter"): rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): rebuild_parameter,
        ("torch._utils", "_rebuild_meta_tensor_no_storage"): rebuild_meta,
    }


def _encode_bytes(text: str, encoding: str = "latin1") -> bytes:
    """``_codecs.encode`` as protocol 2 pickles bytes: ``encode(str, "latin1")`` only."""
    if not isinstance(text, str) or encoding != "latin1":
        raise pickle.UnpicklingError(f"strided.load: _codecs.encode({text!r}, {encoding!r}) is not a bytes literal")
    return codecs.encode(text, "latin1")


class _Unpickler(pickle.Unpickler):
    """The restricted unpickler of Note [torch.save files]."""

    def __init__(self, file, reader: _Reader):
        super().__init__(file)
        self.reader = reader
        self.table = {
            ("collections", "OrderedDict"): collections.OrderedDict,
            ("collections", "Counter"): collections.Counter,
            ("torch", "Size"): lambda sizes=(): Size(int(s) for s in sizes),
            ("torch", "device"): lambda *args: _device(*args),
            ("torch.serialization", "_get_layout"): self._layout,
            ("builtins", "set"): set,
            ("builtins", "frozenset"): frozenset,
            ("builtins", "complex"): complex,
            ("builtins", "bytearray"): bytearray,
            ("_codecs", "encode"): _encode_bytes,
            **_rebuild_functions(reader),
        }

    @staticmethod
    def _layout(name: str):
        if name != "torch.strided":
            raise pickle.UnpicklingError(f"strided.load: tensors of layout {name} (only torch.strided) are not read")
        return _strided_layout

    def find_class(self, module: str, name: str):
        if module == "__builtin__":  # protocol 2's name for builtins (pickle maps it only in its own find_class)
            module = "builtins"
        fn = self.table.get((module, name))
        if fn is not None:
            return fn
        if module == "torch" and name.endswith("Storage"):
            return _StorageType(name)
        if module == "torch" and name in _DTYPES:
            return _DTYPES[name]
        raise pickle.UnpicklingError(f"strided.load: {self.reader.where} needs the global {module}.{name}, which a "
                                     "weights-only load does not run (tensors, Parameters, containers and plain "
                                     "values only)")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"strided.load: {self.reader.where}: unknown persistent id {pid!r}")
        _, kind, key, location, numel = pid
        if not isinstance(kind, _StorageType):
            raise pickle.UnpicklingError(f"strided.load: {self.reader.where}: storage {key} has type {kind!r}")
        if kind.dtype is None:
            raise pickle.UnpicklingError(f"strided.load: {self.reader.where}: storage {key} is a torch.{kind.name}, "
                                         "whose element type strided does not have")
        return _Storage(str(key), kind.dtype, str(location), int(numel))


def is_torch_zip(head: bytes) -> bool:
    """Whether a file's first bytes are a zip archive's (torch.save's format)."""
    return head[:4] == _ZIP_MAGIC


def is_legacy_torch_file(head: bytes) -> bool:
    """Whether a file's first bytes are those of torch's legacy (non-zip) serialization."""
    return head[:4] == _LEGACY_MAGIC


def load_torch_zip(f, target, where: str):
    """The object a ``torch.save`` zip archive ``f`` (path or binary file) holds, its tensors placed by
    ``target(saved_location) -> device`` (Note [torch.save files])."""
    with zipfile.ZipFile(f) as archive:
        pickles = [n for n in archive.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
        if len(pickles) != 1:
            names = sorted(archive.namelist())[:6]
            kind = "a TorchScript archive" if any(n.endswith("constants.pkl") for n in names) else "a zip archive"
            raise ValueError(f"strided.load: {where} is {kind} without torch.save's <name>/data.pkl (it holds "
                             f"{names}{', ...' if len(archive.namelist()) > 6 else ''})")
        prefix = pickles[0][: -len("data.pkl")]
        reader = _Reader(archive, prefix, target, where)
        with archive.open(pickles[0]) as data:
            return _Unpickler(data, reader).load()
