"""``strided.cuda``: the torch.cuda-like public API (thin re-exports from ``backends.cuda``).

Importing it never initializes CUDA; ``is_available()`` and ``device_count()`` never raise.
"""

from __future__ import annotations

from ..backends.cuda import driver as _driver
from ..backends.cuda.device import (  # noqa: F401
    current_device,
    device,
    get_device_capability,
    get_device_name,
    get_device_properties,
    mem_get_info,
    set_device,
    synchronize,
)
from ..backends.cuda.driver import CudaError  # noqa: F401
from ..backends.cuda.nvml_queries import (  # noqa: F401
    clock_rate,
    device_memory_used,
    memory_usage,
    power_draw,
    temperature,
    utilization,
)
from ..backends.cuda.sync_debug import get_sync_debug_mode, set_sync_debug_mode  # noqa: F401
from ..legacy_tensor_types import CUDA_TYPES as _CUDA_TYPES
from ..memory.errors import OutOfMemoryError  # noqa: F401
from . import (
    amp,  # noqa: F401
    graphs,  # noqa: F401
    jiterator,  # noqa: F401
    memory,  # noqa: F401
    nvtx,  # noqa: F401
    profiler,  # noqa: F401
    tunable,  # noqa: F401
)
from .graphs import (  # noqa: F401
    CUDAGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)
from .memory import (  # noqa: F401
    CUDAPluggableAllocator,
    MemPool,
    caching_allocator_alloc,
    caching_allocator_delete,
    caching_allocator_disabled,
    caching_allocator_enable,
    change_current_allocator,
    empty_cache,
    empty_host_cache,
    get_allocator_backend,
    get_per_process_memory_fraction,
    host_memory_stats,
    host_memory_stats_as_nested_dict,
    list_gpu_processes,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_host_memory_stats,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_max_memory_cached,
    reset_peak_host_memory_stats,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
    use_mem_pool,
)
from .streams import (  # noqa: F401
    Event,
    ExternalStream,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    get_stream_from_external,
    set_stream,
    stream,
)


def is_available() -> bool:
    """True when an NVIDIA driver and at least one GPU are present (no context is created)."""
    return _driver.is_available()


def device_count() -> int:
    return _driver.device_count()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 tensors work on the current device: natively from compute capability 8.0, as
    torch's check; ``including_emulation`` (the default) also counts older GPUs, where strided's
    bfloat16 kernels load and store bfloat16 and compute in float32 (cuda_bf16.h emulates it)."""
    if not is_available():
        return False
    return including_emulation or get_device_capability()[0] >= 8


def is_initialized() -> bool:
    return _driver.is_initialized()


def init() -> None:
    """Initialize CUDA on the current device now (normally lazy)."""
    _driver.ensure_context(current_device())


def manual_seed(seed: int) -> None:
    """Seed the current device's generator."""
    from ..random import default_generator_for

    default_generator_for(f"cuda:{current_device()}").manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    from ..random import default_generator_for

    for i in range(max(device_count(), 1)):
        default_generator_for(f"cuda:{i}").manual_seed(seed)


def _generator(dev):
    from ..device import device as _dev
    from ..random import default_generator_for

    d = _dev(f"cuda:{dev}" if isinstance(dev, int) and not isinstance(dev, bool) else dev)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return default_generator_for(d if d.index is not None else f"cuda:{current_device()}")


def get_rng_state(device="cuda"):  # noqa: F811 - torch's argument name
    """The state of ``device``'s default generator (Philox seed and offset), for :func:`set_rng_state`."""
    return _generator(device).get_state()


def set_rng_state(new_state, device="cuda") -> None:  # noqa: F811 - torch's argument name
    """Restore ``device``'s default generator to a state from :func:`get_rng_state`."""
    _generator(device).set_state(new_state)


def get_rng_state_all() -> list:
    """Every device's generator state, by index."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    """Restore every device's generator from :func:`get_rng_state_all`'s list."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def seed() -> None:
    """Seed the current device's generator from OS entropy."""
    _generator(current_device()).seed()


def seed_all() -> None:
    """Seed every device's generator with one seed from OS entropy."""
    from ..random import default_generator_for

    s = _generator(current_device()).seed()
    for i in range(device_count()):
        default_generator_for(f"cuda:{i}").manual_seed(s)


def initial_seed() -> int:
    """The current device's generator's seed."""
    return _generator(current_device()).initial_seed()


def can_device_access_peer(device, peer_device) -> bool:
    """Whether ``device`` can read ``peer_device``'s memory directly (``cuDeviceCanAccessPeer``)."""
    from ..backends.cuda.device import _index

    _driver.require()
    i, j = _index(device), _index(peer_device)
    n = device_count()
    if not 0 <= i < n or not 0 <= j < n:
        raise AssertionError("Invalid device id" if not 0 <= i < n else "Invalid peer device id")
    d = _driver.cu()
    return bool(_driver.check(d.cuDeviceCanAccessPeer(_driver.check(d.cuDeviceGet(i)),
                                                       _driver.check(d.cuDeviceGet(j)))))


class device_of(device):
    """``with device_of(t):`` runs the block on ``t``'s CUDA device (nothing for a CPU tensor)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


# Note [Arch list]
# torch's get_arch_list() names the architectures its kernels were compiled for ahead of time. strided
# compiles each kernel with NVRTC for the device it runs on, so its list is every architecture that NVRTC
# can target (``nvrtcGetSupportedArchs``); empty where NVRTC cannot be loaded, as torch's is in a CPU build.
def get_arch_list() -> list[str]:
    """The CUDA architectures strided's kernels can be compiled for, as ``sm_XY`` (Note [Arch list])."""
    from ..backends.cuda.compiler import supported_archs

    try:
        return [f"sm_{a}" for a in supported_archs()]
    except Exception:  # noqa: BLE001 - no NVRTC library: nothing can be compiled
        return []


def get_gencode_flags() -> str:
    """:func:`get_arch_list` as NVCC ``-gencode`` flags, as torch's."""
    return " ".join(f"-gencode compute=compute_{a[3:]},code=sm_{a[3:]}" for a in get_arch_list())


def is_tf32_supported() -> bool:
    """Whether the current device has TF32 tensor cores (compute capability 8.0 or newer)."""
    return is_available() and get_device_capability()[0] >= 8


def __getattr__(name: str):
    if name == "default_generators":  # one per device, made on first use (as torch's tuple)
        from ..random import default_generator_for

        return tuple(default_generator_for(f"cuda:{i}") for i in range(device_count()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

globals().update(_CUDA_TYPES)  # strided.cuda.FloatTensor ... (Note [Legacy constructors])
