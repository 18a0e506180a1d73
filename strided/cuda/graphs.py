"""``strided.cuda.graphs`` (torch.cuda.graphs): capture CUDA work once, replay it with one launch."""

from __future__ import annotations

from ..backends.cuda.capture import is_current_stream_capturing
from ..backends.cuda.graphs import CUDAGraph, graph, graph_pool_handle
from .graphed_callables import make_graphed_callables

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing", "make_graphed_callables"]
