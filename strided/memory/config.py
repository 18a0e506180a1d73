"""``PYTORCH_CUDA_ALLOC_CONF``-compatible allocator settings.

The string syntax, keys, defaults, validation and error messages follow c10's
``AcceleratorAllocatorConfig`` + ``CUDAAllocatorConfig`` (``key:value,key:[a:b,c:d]``; tokens
split on ``, : [ ]``; whitespace ignored; booleans are ``True``/``False``).  The environment is
read once, from ``STRIDED_CUDA_ALLOC_CONF``, else ``PYTORCH_CUDA_ALLOC_CONF``, else
``PYTORCH_ALLOC_CONF``.  :func:`set_allocator_settings` changes the process-wide settings at
run time; allocators built on that config see the change at once.

strided's own keys start with ``strided_`` (see Note [strided keys]).
"""

from __future__ import annotations

import os
import threading
import warnings
import weakref
from collections.abc import Callable

from .tokens import AllocatorConfigError, _Tokens

__all__ = [
    "AllocatorConfig",
    "AllocatorConfigError",
    "allocator_config",
    "get_allocator_settings",
    "set_allocator_settings",
    "ENV_VARS",
]

MB = 1024 * 1024
SIZE_MAX = (1 << 64) - 1
K_LARGE_BUFFER = 20 * MB
NUM_ROUNDUP_INTERVALS = 16
ENV_VARS = ("STRIDED_CUDA_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
_MAX_REGISTER_THREADS = 128


def _is_pow2(n: int) -> bool:
    return n > 0 and (n & (n - 1)) == 0


def _parse_reserve(token: str) -> tuple[bool, float] | None:
    """``expandable_segments_reserve`` value: a fraction of memory, or ``<n>G`` GiB."""
    is_gib = token[-1:] in ("G", "g")
    num = token[:-1] if is_gib else token
    try:
        value = float(num)
    except ValueError:
        value = -1.0
    if not (value > 0.0 and value != float("inf")):
        warnings.warn(
            f"Ignoring invalid expandable-segment reserve value '{token}' in PYTORCH_CUDA_ALLOC_CONF "
            "(expected a positive, finite fraction like 0.5 or an absolute size like 40G); using default.",
            stacklevel=4,
        )
        return None
    return (not is_gib, value)


class AllocatorConfig:
    """Settings of the CUDA caching allocator (one process-wide instance, or one per replay).

    Parameters
    ----------
    settings : str or None
        A ``PYTORCH_CUDA_ALLOC_CONF`` string; ``None`` or ``""`` leaves every default.

    Notes
    -----
    Note [strided keys]
    ~~~~~~~~~~~~~~~~~~~
    Keys of strided's own policies start with ``strided_`` so that a string written for
    PyTorch never collides with them:

    ``strided_large_page_mb`` (default: ``large_segment_size_mb``, 20)
        Page size in MiB of the large pool's expandable segments (PyTorch: 20 MiB).  A multiple
        of 2 (the VMM granularity).  Smaller pages waste less at the end of each mapped range.
    ``strided_eager_unmap`` (default False)
        With expandable segments, give whole free pages back to the device as soon as the
        allocation stream has finished with them (an event recorded at free time, polled at the
        next malloc), instead of only on ``empty_cache`` or an out-of-memory retry.  Reserved
        memory then tracks live memory; the price is map/unmap calls.
    ``strided_eager_unmap_min_mb`` (default 0)
        With ``strided_eager_unmap``, recycle a freed range only when its whole free pages add
        up to at least this many MiB: fewer map/unmap calls for a little more reserved memory.
    """

    def __init__(self, settings: str | None = None) -> None:
        self._lock = threading.Lock()
        self._listeners: list[weakref.WeakMethod] = []
        self.max_split_size = SIZE_MAX
        self.max_non_split_rounding_size = K_LARGE_BUFFER
        self.roundup_power2_divisions = [0] * NUM_ROUNDUP_INTERVALS
        self.garbage_collection_threshold = 0.0
        self.expandable_segments = False
        self.large_segment_size = K_LARGE_BUFFER
        self.release_lock_on_cudamalloc = False
        self.pinned_use_cuda_host_register = False
        self.pinned_num_register_threads = 1
        self.pinned_use_background_threads = False
        self.pinned_reserve_segment_size_mb = 0
        self.pinned_free_catch_all = False
        self.graph_capture_record_stream_reuse = False
        self.per_process_memory_fraction = 1.0
        self.throw_on_cudamalloc_oom = False
        self.expandable_segments_reserve: tuple[bool, float] | None = None
        self.expandable_segments_reserve_by_class: dict[str, tuple[bool, float]] = {}
        self.backend = "native"
        self.strided_large_page_size: int | None = None  # None: use large_segment_size
        self.strided_eager_unmap = False
        self.strided_eager_unmap_min_size = 0
        self.last_allocator_settings = ""
        if settings:
            self.parse(settings)

    # -- parsing ---------------------------------------------------------------------------
    def parse(self, settings: str) -> None:
        """Apply a settings string (c10 ``parseArgs``).

        As in c10, every parse first resets ``max_split_size``, ``roundup_power2_divisions``
        and ``garbage_collection_threshold`` to their defaults; other keys keep earlier values.
        On an error nothing changes.

        Parameters
        ----------
        settings : str
            ``key:value`` pairs separated by commas.

        Raises
        ------
        AllocatorConfigError
            With c10's message, e.g. ``Unrecognized key 'x' in CUDA allocator config.``
        """
        if not isinstance(settings, str):
            raise TypeError(f"set_allocator_settings: expected a str, got {type(settings).__name__}")
        staged = AllocatorConfig.__new__(AllocatorConfig)
        staged.__dict__.update({k: v for k, v in self.__dict__.items() if k not in ("_lock", "_listeners")})
        staged.roundup_power2_divisions = [0] * NUM_ROUNDUP_INTERVALS
        staged.expandable_segments_reserve_by_class = dict(self.expandable_segments_reserve_by_class)
        staged.max_split_size = SIZE_MAX
        staged.garbage_collection_threshold = 0.0
        staged._parse_into(_Tokens(settings))
        staged.last_allocator_settings = settings
        with self._lock:
            for k, v in staged.__dict__.items():
                setattr(self, k, v)
        self._notify()

    def _parse_into(self, tk: _Tokens) -> None:
        i = 0
        n = len(tk)
        while i < n:
            key = tk.get(i)
            handler = _HANDLERS.get(key)
            if handler is None:
                raise AllocatorConfigError(f"Unrecognized key '{key}' in CUDA allocator config.")
            tk.expect(i + 1, ":")
            i = handler(self, tk, i + 2)
            if i + 1 < n:
                tk.expect(i + 1, ",")
                i += 1
            i += 1

    # Each handler gets the index of the value token and returns the index of its last token.
    def _p_max_split(self, tk: _Tokens, i: int) -> int:
        v = tk.to_int(i)
        if v < K_LARGE_BUFFER // MB:
            raise AllocatorConfigError(
                f"CachingAllocator option max_split_size_mb too small, must be >= {K_LARGE_BUFFER // MB}"
            )
        self.max_split_size = min(v, SIZE_MAX // MB) * MB
        return i

    def _p_non_split(self, tk: _Tokens, i: int) -> int:
        v = tk.to_int(i)
        if v < K_LARGE_BUFFER // MB:
            raise AllocatorConfigError(
                "CachingAllocator option max_non_split_rounding_mb too small, must be >= "
                f"{K_LARGE_BUFFER // MB}"
            )
        self.max_non_split_rounding_size = min(v, SIZE_MAX // MB) * MB
        return i

    def _p_large_segment(self, tk: _Tokens, i: int) -> int:
        v = tk.to_int(i)
        if v <= 10:
            raise AllocatorConfigError(f"CachingAllocator option large_segment_size_mb must be > 10, got {v}")
        self.large_segment_size = v * MB
        return i

    def _p_gc(self, tk: _Tokens, i: int) -> int:
        v = tk.to_float(i)
        if not (0.0 < v < 1.0):
            raise AllocatorConfigError("garbage_collect_threshold is invalid, set it in (0.0, 1.0)")
        self.garbage_collection_threshold = v
        return i

    def _p_roundup(self, tk: _Tokens, i: int) -> int:
        divs = self.roundup_power2_divisions
        if tk.get(i) != "[":
            v = tk.to_int(i)
            if not _is_pow2(v):
                raise AllocatorConfigError("For roundups, the divisions has to be power of 2 ")
            divs[:] = [v] * NUM_ROUNDUP_INTERVALS
            return i
        first = True
        last_index = 0
        i += 1
        while True:
            if i >= len(tk):
                raise AllocatorConfigError(
                    "Expected closing bracket ']' in ConfigTokenizer but reached end of config"
                )
            if tk.get(i) == "]":
                return i
            bound = tk.get(i)
            tk.expect(i + 1, ":")
            value = tk.to_int(i + 2)
            if value != 0 and not _is_pow2(value):
                raise AllocatorConfigError(
                    "For roundups, the divisions has to be power of 2 or 0 to disable roundup "
                )
            if bound == ">":
                for j in range(last_index + 1, NUM_ROUNDUP_INTERVALS):
                    divs[j] = value
            else:
                b = tk.to_int(i)
                if not _is_pow2(b):
                    raise AllocatorConfigError("For roundups, the intervals have to be power of 2 ")
                index = min(b.bit_length() - 1, NUM_ROUNDUP_INTERVALS - 1)
                if first:
                    for j in range(index):
                        divs[j] = value
                    first = False
                divs[index] = value
                last_index = index
            i += 3
            if i < len(tk) and tk.get(i) == ",":
                i += 1

    def _bool_setter(attr: str) -> Callable[[AllocatorConfig, _Tokens, int], int]:  # noqa: N805
        def handler(self: AllocatorConfig, tk: _Tokens, i: int) -> int:
            setattr(self, attr, tk.to_bool(i))
            return i

        return handler

    def _p_backend(self, tk: _Tokens, i: int) -> int:
        v = tk.get(i)
        if v not in ("native", "cudaMallocAsync"):
            raise AllocatorConfigError("Unknown allocator backend, options are native and cudaMallocAsync")
        if v != "native":
            raise AllocatorConfigError(
                f"Allocator backend parsed at runtime != allocator backend parsed at load time, {v} != native"
            )
        self.backend = v
        return i

    def _p_threads(self, tk: _Tokens, i: int) -> int:
        v = tk.to_int(i)
        if not _is_pow2(v):
            raise AllocatorConfigError(f"Number of register threads has to be power of 2, got {v}")
        if v > _MAX_REGISTER_THREADS:
            raise AllocatorConfigError(
                f"Number of register threads should be less than or equal to {_MAX_REGISTER_THREADS}, got {v}"
            )
        self.pinned_num_register_threads = v
        return i

    def _p_pinned_reserve(self, tk: _Tokens, i: int) -> int:
        v = tk.to_int(i)
        if v <= 0:
            raise AllocatorConfigError("Pinned reserve segment size has to be greater than 0")
        self.pinned_reserve_segment_size_mb = v
        return i

    def _p_fraction(self, tk: _Tokens, i: int) -> int:
        v = tk.to_float(i)
        if not (0.0 <= v <= 1.0):
            raise AllocatorConfigError("per_process_memory_fraction is invalid, set it in [0.0, 1.0]")
        self.per_process_memory_fraction = v
        return i

    def _p_reserve(self, tk: _Tokens, i: int) -> int:
        spec = _parse_reserve(tk.get(i))
        if spec is not None:
            self.expandable_segments_reserve = spec
        return i

    def _p_reserve_by_class(self, tk: _Tokens, i: int) -> int:
        tk.expect(i, "[")
        parsed: dict[str, tuple[bool, float]] = {}
        while True:
            if i + 1 >= len(tk):
                raise AllocatorConfigError(
                    "Expected closing bracket ']' in ConfigTokenizer but reached end of config"
                )
            if tk.get(i + 1) == "]":
                self.expandable_segments_reserve_by_class = parsed
                return i + 1
            name = tk.get(i + 1)
            tk.expect(i + 2, ":")
            spec = _parse_reserve(tk.get(i + 3))
            if spec is not None:
                parsed[name] = spec
            i += 3
            if i + 1 < len(tk) and tk.get(i + 1) == ",":
                i += 1

    def _p_page(self, tk: _Tokens, i: int) -> int:
        v = tk.to_int(i)
        if v < 2 or v % 2:
            raise AllocatorConfigError(f"strided_large_page_mb must be a positive multiple of 2, got {v}")
        self.strided_large_page_size = v * MB
        return i

    def _p_unmap_min(self, tk: _Tokens, i: int) -> int:
        self.strided_eager_unmap_min_size = tk.to_int(i) * MB
        return i

    # -- queries used by the allocator -----------------------------------------------------
    def roundup_divisions(self, size: int) -> int:
        """Divisions for ``size`` (c10 ``roundup_power2_divisions(size)``)."""
        index = size.bit_length() - 1 - 20
        index = 0 if index < 0 else min(index, NUM_ROUNDUP_INTERVALS - 1)
        return self.roundup_power2_divisions[index]

    def settings_dict(self) -> dict:
        """The snapshot's ``allocator_settings`` dict, in PyTorch's key order."""
        max_split = -1 if self.max_split_size == SIZE_MAX else self.max_split_size
        return {
            "PYTORCH_CUDA_ALLOC_CONF": self.last_allocator_settings,
            "max_split_size": max_split,
            "garbage_collection_threshold": self.garbage_collection_threshold,
            "expandable_segments": self.expandable_segments,
            "pinned_num_register_threads": self.pinned_num_register_threads,
            "release_lock_on_cudamalloc": self.release_lock_on_cudamalloc,
            "pinned_use_cuda_host_register": self.pinned_use_cuda_host_register,
            "graph_capture_record_stream_reuse": self.graph_capture_record_stream_reuse,
            "roundup_power2_divisions": {str(1 << j): d for j, d in enumerate(self.roundup_power2_divisions)},
        }

    # -- change notification ---------------------------------------------------------------
    def subscribe(self, method: Callable[[], None]) -> None:
        """Call the bound ``method`` after every successful :meth:`parse` (weakly held)."""
        with self._lock:
            self._listeners = [w for w in self._listeners if w() is not None]
            self._listeners.append(weakref.WeakMethod(method))

    def _notify(self) -> None:
        with self._lock:
            live = [w() for w in self._listeners]
        for fn in live:
            if fn is not None:
                fn()

    def __repr__(self) -> str:
        return f"AllocatorConfig({self.last_allocator_settings!r})"


_flag = AllocatorConfig._bool_setter
_HANDLERS: dict[str, Callable[[AllocatorConfig, _Tokens, int], int]] = {
    "max_split_size_mb": AllocatorConfig._p_max_split,
    "max_non_split_rounding_mb": AllocatorConfig._p_non_split,
    "large_segment_size_mb": AllocatorConfig._p_large_segment,
    "garbage_collection_threshold": AllocatorConfig._p_gc,
    "roundup_power2_divisions": AllocatorConfig._p_roundup,
    "expandable_segments": _flag("expandable_segments"),
    "pinned_use_background_threads": _flag("pinned_use_background_threads"),
    "backend": AllocatorConfig._p_backend,
    "release_lock_on_cudamalloc": _flag("release_lock_on_cudamalloc"),
    "release_lock_on_hipmalloc": _flag("release_lock_on_cudamalloc"),
    "pinned_use_cuda_host_register": _flag("pinned_use_cuda_host_register"),
    "pinned_use_hip_host_register": _flag("pinned_use_cuda_host_register"),
    "pinned_num_register_threads": AllocatorConfig._p_threads,
    "pinned_reserve_segment_size_mb": AllocatorConfig._p_pinned_reserve,
    "graph_capture_record_stream_reuse": _flag("graph_capture_record_stream_reuse"),
    "per_process_memory_fraction": AllocatorConfig._p_fraction,
    "pinned_free_catch_all": _flag("pinned_free_catch_all"),
    "throw_on_cudamalloc_oom": _flag("throw_on_cudamalloc_oom"),
    "expandable_segments_reserve": AllocatorConfig._p_reserve,
    "expandable_segments_reserve_by_class": AllocatorConfig._p_reserve_by_class,
    "strided_large_page_mb": AllocatorConfig._p_page,
    "strided_eager_unmap": _flag("strided_eager_unmap"),
    "strided_eager_unmap_min_mb": AllocatorConfig._p_unmap_min,
}
del _flag


def _from_env() -> AllocatorConfig:
    for name in ENV_VARS:
        value = os.environ.get(name)
        if value is not None:
            return AllocatorConfig(value)
    return AllocatorConfig()


allocator_config: AllocatorConfig = _from_env()
"""The process-wide settings, parsed from the environment at import."""


def set_allocator_settings(settings: str) -> None:
    """Change the process-wide allocator settings at run time.

    The counterpart of ``torch._C._accelerator_setAllocatorSettings``; allocators built on
    :data:`allocator_config` use the new values from their next call.

    Parameters
    ----------
    settings : str
        A ``PYTORCH_CUDA_ALLOC_CONF`` string.
    """
    allocator_config.parse(settings)


def get_allocator_settings() -> str:
    """The last settings string applied to the process-wide config."""
    return allocator_config.last_allocator_settings
