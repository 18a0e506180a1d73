"""Reading and writing snapshot files (PyTorch's ``_dump_snapshot`` format).

Note [Snapshot files are untrusted]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A snapshot is a pickle, usually from another machine, and unpickling can run arbitrary
code.  :func:`load_snapshot` uses an unpickler that refuses every global reference, so only
plain builtins (dict, list, tuple, str, int, float, bool, None, bytes, set) can be built.
Files are written with protocol 4: pytorch.org/memory_viz's JavaScript unpickler reads
protocols 2-4 only and renders a protocol-5 file blank.
"""

from __future__ import annotations

import gzip
import io
import os
import pickle
import zlib

__all__ = ["load_snapshot", "dump_snapshot", "loads_snapshot", "SnapshotFormatError"]

_GZIP_MAGIC = b"\x1f\x8b"


class SnapshotFormatError(ValueError, pickle.UnpicklingError):
    """The bytes are not a memory snapshot: not a pickle (or gzip of one), truncated, or referring to code."""


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):  # noqa: D102 - see Note above
        raise SnapshotFormatError(
            f"snapshot refers to {module}.{name}; only plain builtins are allowed in a memory snapshot"
        )


def loads_snapshot(data: bytes) -> dict:
    """Decode snapshot bytes (optionally gzip-compressed) with the restricted unpickler."""
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as e:
            raise SnapshotFormatError(f"a truncated or corrupt gzip file ({type(e).__name__}: {e})") from e
    try:
        obj = _PlainUnpickler(io.BytesIO(data)).load()
    except SnapshotFormatError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, KeyError, IndexError, TypeError) as e:
        raise SnapshotFormatError(f"not a pickle, or a truncated one ({type(e).__name__}: {e})") from e
    if isinstance(obj, list):  # a bare segment list, as torch.cuda.memory_snapshot() returns
        obj = {"segments": obj, "device_traces": []}
    if not isinstance(obj, dict):
        raise SnapshotFormatError(f"expected a dict or a list, got {type(obj).__name__}")
    return obj


def load_snapshot(path: str | os.PathLike) -> dict:
    """Read a snapshot pickle (``.pickle`` or gzip-compressed) written by PyTorch or strided.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    dict
        The snapshot; a bare segment list becomes ``{"segments": ..., "device_traces": []}``.
    """
    with open(path, "rb") as f:
        return loads_snapshot(f.read())


def dump_snapshot(snapshot: dict, path: str | os.PathLike) -> None:
    """Write ``snapshot`` with pickle protocol 4; gzip-compressed when ``path`` ends in ``.gz``."""
    data = pickle.dumps(snapshot, protocol=4)
    if str(path).endswith(".gz"):
        data = gzip.compress(data)
    with open(path, "wb") as f:
        f.write(data)
