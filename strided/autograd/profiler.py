"""``strided.autograd.profiler``: torch.autograd.profiler's older interface over ``strided.profiler``.

``profile(use_cuda=True)`` records what ``strided.profiler.profile(activities=[CPU, CUDA])`` records; the
results are the same ``EventList`` (``prof.key_averages().table()``, ``prof.function_events``,
``prof.export_chrome_trace(path)``). ``record_function`` is the same context manager and decorator.
"""

from __future__ import annotations

from ..profiler import ProfilerActivity, record_function
from ..profiler import profile as _profile
from ..profiler.events import EventList
from ..profiler.nvtx_emitter import emit_nvtx

__all__ = ["profile", "record_function", "emit_nvtx"]


class profile:
    """torch.autograd.profiler.profile: ``with profile(use_cuda=True, record_shapes=True) as prof: ...``."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: str | None = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config=None, acc_events: bool = False):
        if use_device not in (None, "cuda"):
            raise ValueError(f"profile(): use_device must be None or 'cuda' in strided, got {use_device!r}")
        if not use_cpu:
            raise ValueError("profile(): use_cpu=False is not supported: every range is a host range in strided")
        self.enabled = enabled
        activities = [ProfilerActivity.CPU]
        if use_cuda or use_device == "cuda":
            activities.append(ProfilerActivity.CUDA)
        self._prof = _profile(activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
                              with_stack=with_stack, with_flops=with_flops, with_modules=with_modules)
        self.function_events: EventList | None = None

    def __enter__(self):
        if self.enabled:
            self._prof.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.enabled:
            self._prof.stop()
            self.function_events = self._prof.events()

    def _events(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs) -> str:
        return self._events().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def total_average(self):
        return self._events().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._events().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        self._events().export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        self._events().export_stacks(path, metric)

    def __str__(self) -> str:
        return self.table()
