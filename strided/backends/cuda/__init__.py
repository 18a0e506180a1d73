"""The CUDA backend: driver, devices, streams, caching allocator, copies and kernels.

Importing this package is cheap and never touches the driver (Note [Lazy driver] in
``driver.py``); ``cuda.bindings`` is imported on first use.  The dispatcher imports it the first
time a CUDA tensor reaches an operator: ``kernels/ops.py`` registers the CUDA kernels,
and raises ImportError there when no GPU is usable.
"""

from __future__ import annotations

from . import interop  # noqa: F401 - registers the CUDA DLPack exporter and importers
from .allocator import allocate_storage, record_stream  # noqa: F401
from .device import current_device  # noqa: F401
from .driver import CudaError, device_count, is_available  # noqa: F401
from .host_allocator import allocate_pinned_storage  # noqa: F401
from .sdp import (  # noqa: F401 - torch.backends.cuda's attention switches
    cudnn_sdp_enabled,
    enable_cudnn_sdp,
    enable_flash_sdp,
    enable_math_sdp,
    enable_mem_efficient_sdp,
    flash_sdp_enabled,
    math_sdp_enabled,
    mem_efficient_sdp_enabled,
    sdp_kernel,
)
