"""Writing ``torch.save``'s zip format (``strided.save(obj, f, format="torch")``), for ``torch.load`` to read, without
PyTorch: the reverse of ``torch_checkpoints.py``.

Note [Writing torch.save files]
The archive is the one Note [torch.save files] reads: ``archive/data.pkl``, ``archive/byteorder`` ("little"),
``archive/version`` ("3"), ``archive/.data/serialization_id`` and one record ``archive/data/<key>`` per storage,
stored (not compressed) and its bytes aligned to 64 as torch's writer aligns them (so ``torch.load(mmap=True)`` can
map them). ``data.pkl`` is a protocol-2 pickle written opcode by opcode here -- torch's classes cannot be imported
to let ``pickle`` find them -- of exactly what ``torch.load(weights_only=True)`` accepts: dicts (an ``OrderedDict``
as ``collections.OrderedDict``), lists, tuples, sets, str, int, float, complex, bool, None, bytes (as protocol 2
pickles them, ``_codecs.encode``), dtypes and devices (``torch.float32``, ``torch.device("cuda:0")``), and tensors
as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())`` -- Parameters
wrapped in ``_rebuild_parameter`` -- whose storage is the persistent id ``("storage", torch.FloatStorage, key,
location, numel)``. (A frozenset, which torch's weights-only loader refuses, is refused here too.) Each storage is
written once, whole, so tensors sharing one (tied weights, views) share it in torch too. CUDA storages are copied to
the host and keep their location ("cuda:0"), as torch's do. Anything else raises, naming the value's type and where
it is; meta tensors have no data and are refused.
"""

from __future__ import annotations

import collections
import os
import struct
import zipfile

import numpy as np

from . import dtypes as dt
from .device import device as _device
from .tensor import Tensor

__all__ = ["save_torch_zip"]

_STORAGE_NAMES = {  # strided dtype -> torch's typed storage class
    dt.float32: "FloatStorage", dt.float64: "DoubleStorage", dt.float16: "HalfStorage",
    dt.bfloat16: "BFloat16Storage", dt.int64: "LongStorage", dt.int32: "IntStorage", dt.int16: "ShortStorage",
    dt.int8: "CharStorage", dt.uint8: "ByteStorage", dt.bool: "BoolStorage", dt.complex64: "ComplexFloatStorage",
    dt.complex128: "ComplexDoubleStorage",
}
_ALIGN = 64


class _Pickle:
    """A protocol-2 pickle of plain values and tensors, written opcode by opcode (Note [Writing torch.save files])."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")  # PROTO 2
        self.storages: dict = {}  # id of a storage -> (key, the UntypedStorage, the dtype its tensors view it as)

    def global_(self, module: str, name: str) -> None:
        self.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"

    def tuple_(self, items, where: str) -> None:
        if not items:
            self.out += b")"
            return
        if len(items) > 3:
            self.out += b"("
        for i, v in enumerate(items):
            self.value(v, f"{where}[{i}]")
        self.out += {1: b"\x85", 2: b"\x86", 3: b"\x87"}.get(len(items), b"t")

    def call(self, module: str, name: str, args: tuple, where: str) -> None:
        self.global_(module, name)
        self.tuple_(args, where)
        self.out += b"R"  # REDUCE

    def items(self, pairs, where: str) -> None:
        self.out += b"("  # MARK ... SETITEMS
        for k, v in pairs:
            self.value(k, where)
            self.value(v, f"{where}[{k!r}]")
        self.out += b"u"

    def value(self, x, where: str) -> None:
        out = self.out
        if x is None:
            out += b"N"
        elif x is True or x is False:
            out += b"\x88" if x else b"\x89"
        elif isinstance(x, Tensor):
            self.tensor(x, where)
        elif isinstance(x, int):
            self.integer(int(x))
        elif isinstance(x, float):
            out += b"G" + struct.pack(">d", x)
        elif isinstance(x, complex):
            self.call("builtins", "complex", (x.real, x.imag), where)
        elif isinstance(x, set):  # builtins.set of a list, as protocol 2 pickles it (a frozenset torch does not load)
            self.call("builtins", "set", (list(x),), where)
        elif isinstance(x, str):
            data = x.encode("utf-8", "surrogatepass")
            out += b"X" + struct.pack("<I", len(data)) + data
        elif isinstance(x, (bytes, bytearray)):
            self.call("_codecs", "encode", (bytes(x).decode("latin1"), "latin1"), where)
        elif isinstance(x, dt.dtype):
            self.global_("torch", x.name)
        elif isinstance(x, _device):
            self.call("torch", "device", (str(x),), where)
        elif isinstance(x, dict):
            if isinstance(x, collections.OrderedDict):
                self.call("collections", "OrderedDict", (), where)
            else:
                out += b"}"
            if x:
                self.items(x.items(), where)
        elif isinstance(x, list):
            out += b"]"
            if x:
                out += b"("
                for i, v in enumerate(x):
                    self.value(v, f"{where}[{i}]")
                out += b"e"  # APPENDS
        elif isinstance(x, tuple):
            self.tuple_(tuple(x), where)
        else:
            raise TypeError(f"strided.save: cannot write a {type(x).__name__} at {where} in torch's format: it holds "
                            "tensors, dicts, lists, tuples, sets, str, bytes, int, float, complex, bool, None, dtypes "
                            "and devices")

    def integer(self, n: int) -> None:
        if 0 <= n < 256:
            self.out += b"K" + bytes([n])
        elif 0 <= n < 65536:
            self.out += b"M" + struct.pack("<H", n)
        elif -(2 ** 31) <= n < 2 ** 31:
            self.out += b"J" + struct.pack("<i", n)
        else:  # LONG1: two's complement, little-endian
            data = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
            self.out += b"\x8a" + bytes([len(data)]) + data

    def tensor(self, t: Tensor, where: str) -> None:
        from .nn.parameter import Parameter

        if t.device.type == "meta":
            raise TypeError(f"strided.save: the tensor at {where} is on the meta device and has no data to write")
        storage_name = _STORAGE_NAMES.get(t.dtype)
        if storage_name is None:
            raise TypeError(f"strided.save: the tensor at {where} has dtype {t.dtype}, which torch's format does not "
                            "store")
        parameter = isinstance(t, Parameter)
        if parameter:
            self.global_("torch._utils", "_rebuild_parameter")
            self.out += b"("
        storage = t.untyped_storage()
        key, _, first_dtype = self.storages.setdefault(id(storage), (str(len(self.storages)), storage, t.dtype))
        if first_dtype is not t.dtype:  # torch's loader would read the second view with the first one's dtype
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        self.global_("torch._utils", "_rebuild_tensor_v2")
        self.out += b"("
        # the persistent id ("storage", torch.<Type>Storage, key, location, numel), then BINPERSID
        self.out += b"("
        self.value("storage", where)
        self.global_("torch", storage_name)
        self.value(key, where)
        self.value(str(t.device), where)
        self.integer(storage.nbytes() // t.dtype.itemsize)
        self.out += b"tQ"
        self.integer(t.storage_offset())
        self.tuple_(tuple(t.shape), where)
        self.tuple_(tuple(t.stride()), where)
        self.value(bool(t.requires_grad) and not parameter, where)
        self.call("collections", "OrderedDict", (), where)
        self.out += b"tR"
        if parameter:
            self.value(bool(t.requires_grad), where)
            self.call("collections", "OrderedDict", (), where)
            self.out += b"tR"


def _storage_bytes(storage) -> bytes:
    """A storage's bytes on the host (a CUDA storage copied back), little-endian as strided keeps them."""
    from .factories import empty

    flat = empty(0, dtype=dt.uint8, device=storage.device).set_(storage)
    return np.ascontiguousarray(flat.cpu().numpy()).tobytes()


def _aligned_record(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    """Write one stored record whose data starts at a multiple of 64 bytes (torch's writer pads the same way, with a
    local extra field)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    start = archive.fp.tell() + 30 + len(name.encode()) + 4  # local header, name, the extra field's own header
    pad = -start % _ALIGN
    info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad  # "FB", as torch's PyTorchFileWriter
    archive.writestr(info, data)


def save_torch_zip(obj, f) -> None:
    """Write ``obj`` in torch.save's zip format to ``f``, a path (replaced atomically, Note [Atomic checkpoint
    writes]) or a seekable binary file object (Note [Writing torch.save files])."""
    from .nn.serialization import write_checkpoint

    pickler = _Pickle()
    pickler.value(obj, "the top level")
    pickler.out += b"."  # STOP

    def write(out) -> None:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
            for name, data in (("data.pkl", bytes(pickler.out)), (".format_version", b"1"), ("byteorder", b"little")):
                _aligned_record(archive, f"archive/{name}", data)
            for key, storage, _ in pickler.storages.values():  # one storage on the host at a time
                _aligned_record(archive, f"archive/data/{key}", _storage_bytes(storage))
            _aligned_record(archive, "archive/version", b"3\n")
            _aligned_record(archive, "archive/.data/serialization_id", os.urandom(20).hex().encode())

    write_checkpoint(f, write)
