"""``strided.profiler``: where the time goes, op by op and kernel by kernel (torch.profiler's API).

::

    from strided.profiler import profile, record_function, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        with record_function("forward"):
            loss = model(x)
        loss.backward()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")    # open in https://ui.perfetto.dev

Every operator call is a host range (``aten::addmm``, nested as the calls nest), each backward node one
more (``autograd::engine::evaluate_function: AddmmBackward0``); with CUDA, every kernel, cuBLASLt GEMM
and memcpy is timed on the GPU with events (Note [Kernel timing with events] in cuda_timing.py) and
added to the op that launched it. ``schedule`` / ``step()`` / ``on_trace_ready`` /
``tensorboard_trace_handler`` work as torch's. ``profile_memory=True`` charges every allocation and free to
the op that made it ("CPU Mem" / "CUDA Mem" columns, ``[memory]`` trace events: Note [Memory records]);
``with_stack=True`` records each op's call site ("Source Location", ``key_averages(group_by_stack_n=5)``,
``export_stacks``) and a range per ``nn.Module`` call (Note [Op call sites]); ``with_flops=True`` adds torch's
FLOP estimates of the GEMMs, ``add`` and ``mul`` (flops.py). ``strided.cuda.memory._record_memory_history``
traces the allocator itself for snapshots.
"""

from __future__ import annotations

import enum
import json
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable

from .events import EventList, FunctionEvent, FunctionEventAvg
from .recorder import Recorder, active

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule", "supported_activities",
           "tensorboard_trace_handler", "EventList", "FunctionEvent", "FunctionEventAvg"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 2


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    """CPU, and CUDA when a GPU is usable."""
    from .. import cuda

    return {ProfilerActivity.CPU, ProfilerActivity.CUDA} if cuda.is_available() else {ProfilerActivity.CPU}


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """torch's step schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle, ``warmup`` traced but
    dropped and ``active`` recorded steps (the last saves), ``repeat`` times (0: until the end)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False):
    """An ``on_trace_ready`` that writes each saved trace to ``dir_name`` as
    ``<worker_name>.<ms since epoch>.pt.trace.json`` (``.gz`` with ``use_gzip``)."""
    if not isinstance(dir_name, (str, os.PathLike)):
        raise TypeError(f"tensorboard_trace_handler(): dir_name must be a path, not {type(dir_name).__name__}")
    if worker_name is not None and not isinstance(worker_name, str):
        raise TypeError(f"tensorboard_trace_handler(): worker_name must be str, not {type(worker_name).__name__}")

    def handler(prof) -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{name}.{int(time.time() * 1000)}.pt.trace.json")
        if use_gzip:
            import gzip

            from .events import chrome_trace

            with gzip.open(path + ".gz", "wt") as f:
                json.dump(chrome_trace(prof.events()), f)
        else:
            prof.export_chrome_trace(path)

    return handler


class record_function:
    """A named range in the profile around a block (``with``) or every call of a function (decorator);
    nothing when no profile records."""

    def __init__(self, name: str, args: str | None = None):
        if not isinstance(name, str):
            raise TypeError(f"record_function(): argument 'name' must be str, not {type(name).__name__}")
        self.name = name
        self.args = args
        self._event = None
        self._recorder = None

    def __enter__(self):
        rec = active.recorder
        if rec is not None:
            self._recorder, self._event = rec, rec.push(self.name, "user_annotation")
        return self

    def __exit__(self, *exc) -> None:
        if self._event is not None:
            self._recorder.pop(self._event)
            self._event = self._recorder = None

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapped


class profile:
    """Record operator calls, ``record_function`` ranges, backward nodes and (with CUDA) GPU kernel times."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None, schedule: Callable | None = None,
                 on_trace_ready: Callable | None = None, record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False, with_modules: bool = False):
        if with_modules:
            warnings.warn("with_modules is deprecated and will be removed in a future release. It only collects data "
                          "for TorchScript models, which are themselves deprecated, and does nothing in eager mode. "
                          "Use with_stack=True, which records nn.Module events for eager models.", FutureWarning,
                          stacklevel=2)
        acts = set(supported_activities() if activities is None else activities)
        for a in acts:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"profile(): activities must be ProfilerActivity values, got {a!r}")
        if ProfilerActivity.CUDA in acts and ProfilerActivity.CUDA not in supported_activities():
            warnings.warn("CUDA is not available: the profile records host activity only", stacklevel=2)
            acts.discard(ProfilerActivity.CUDA)
        self.activities = acts
        self.record_shapes = record_shapes
        self.profile_memory, self.with_stack = bool(profile_memory), bool(with_stack)
        self.with_flops, self.with_modules = bool(with_flops), bool(with_modules)
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._recorder: Recorder | None = None
        self._step_range = None
        self._events: EventList | None = None

    # -- recording ---------------------------------------------------------------------------
    def _begin(self) -> None:
        rec = Recorder(self.record_shapes, ProfilerActivity.CUDA in self.activities, self.profile_memory,
                       self.with_stack, self.with_flops)
        rec.start()  # raises if another profile records: this one then holds nothing to stop
        self._recorder = rec
        self._step_range = self._push_step() if self.schedule is not _always_record else None

    def _push_step(self):
        """A range for the step now beginning: "ProfilerStep*" in tables, as torch's events name every step so
        that they add up in one row; "ProfilerStep#<n>" in the Chrome trace."""
        e = self._recorder.push("ProfilerStep*", "user_annotation")
        e.trace_name = f"ProfilerStep#{self.step_num}"
        return e

    def _end(self, save: bool) -> None:
        rec, self._recorder = self._recorder, None
        if rec is None:
            return
        if self._step_range is not None:
            rec.pop(self._step_range)
            self._step_range = None
        events = rec.stop()
        if save:
            self._events = events
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def start(self) -> None:
        self.current_action = self.schedule(self.step_num)
        if self.current_action is not ProfilerAction.NONE:
            self._begin()

    def stop(self) -> None:
        self._end(save=self.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE))
        self.current_action = ProfilerAction.NONE

    def step(self) -> None:
        """The next step begins: follow the schedule (save a finished cycle, start or drop a trace)."""
        prev = self.current_action
        self.step_num += 1
        now = self.current_action = self.schedule(self.step_num)
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if self._recorder is not None:
            if prev is ProfilerAction.RECORD_AND_SAVE or (prev is ProfilerAction.RECORD and now not in recording):
                self._end(save=True)
            elif prev is ProfilerAction.WARMUP and now is not ProfilerAction.WARMUP:
                self._end(save=False)  # the warm-up's events are dropped
            elif self._step_range is not None:  # the trace goes on: a range for the new step
                self._recorder.pop(self._step_range)
                self._step_range = self._push_step()
        if self._recorder is None and now is not ProfilerAction.NONE:
            self._begin()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- results -----------------------------------------------------------------------------
    def events(self) -> EventList:
        """The events of the last saved trace."""
        if self._events is None:
            raise RuntimeError("Profiler didn't finish running: no trace has been saved yet")
        return self._events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        """One row per op (and input shapes, and first ``group_by_stack_n`` call-site entries with
        ``with_stack``)."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """The recorded call stacks in flame-graph folded format (needs ``with_stack=True``)."""
        self.events().export_stacks(path, metric)

    def export_chrome_trace(self, path: str) -> None:
        self.events().export_chrome_trace(path)
