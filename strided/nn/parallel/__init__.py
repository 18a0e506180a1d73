"""``strided.nn.parallel``: torch's single-process multi-GPU data parallelism (DataParallel and its parts)."""

from __future__ import annotations

from .data_parallel import DataParallel, data_parallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter, scatter_kwargs

__all__ = ["DataParallel", "data_parallel", "parallel_apply", "replicate", "gather", "scatter", "scatter_kwargs"]
