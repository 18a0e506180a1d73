"""Running each replica on its own device, in threads (torch.nn.parallel.parallel_apply).

Note [Replica threads]
As torch's, one thread per replica (the caller's thread when there is one), each with the caller's grad mode
and autocast state, its device current and that device's current stream (taken in the caller's thread);
an exception in a replica is re-raised in the caller naming the replica and device. torch's worker enters
``autocast(device_type, enabled=...)`` without a dtype, which in a new thread is the device's default
(float16 on CUDA) whatever the caller used; here the caller's dtype goes with it.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from ...amp.autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled
from ...autograd.grad_mode import is_grad_enabled, set_grad_enabled
from ...tensor import Tensor
from .scatter_gather import as_device

__all__ = ["parallel_apply"]


def _a_tensor(obj) -> Tensor | None:
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        for v in obj:
            t = _a_tensor(v)
            if t is not None:
                return t
    if isinstance(obj, dict):
        return _a_tensor(list(obj.values()))
    return None


def _current_stream(device):
    if device is None or device.type != "cuda":
        return None
    from ... import cuda

    return cuda.current_stream(device.index)


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None) -> list[Any]:
    """``modules[i](*inputs[i], **kwargs_tup[i])`` for every i, in parallel threads (Note [Replica threads])."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    kwargs_tup = tuple(kwargs_tup) if kwargs_tup is not None else ({},) * len(modules)
    if len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of kwargs "
                             f"{len(kwargs_tup)}")
    if devices is None:
        devices = [None] * len(modules)
    elif len(modules) != len(devices):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of devices "
                             f"{len(devices)}")
    from ...utils.data.worker import ExceptionWrapper  # (strided.utils imports strided's ops: not at import time)

    devices = [None if d is None else as_device(d) for d in devices]
    streams = [_current_stream(d) for d in devices]
    grad_enabled = is_grad_enabled()
    amp = [(t, get_autocast_dtype(t)) for t in ("cuda", "cpu") if is_autocast_enabled(t)]
    lock = threading.Lock()
    results: dict[int, Any] = {}

    def worker(i, module, input, kwargs, device, stream):
        try:
            with contextlib.ExitStack() as stack:
                stack.enter_context(set_grad_enabled(grad_enabled))
                if device is None:
                    t = _a_tensor(input)
                    if t is None:
                        raise RuntimeError(f"in replica {i}, no device was provided and no tensor input was found; "
                                           "device cannot be resolved")
                    device = t.device
                    stream = _current_stream(device)
                if device.type == "cuda":
                    from ... import cuda

                    stack.enter_context(cuda.device(device.index))
                    stack.enter_context(cuda.stream(stream))
                for device_type, dtype in amp:
                    stack.enter_context(autocast(device_type, dtype=dtype))
                output = module(*(input if isinstance(input, (list, tuple)) else (input,)), **kwargs)
            with lock:
                results[i] = output
        except Exception:  # noqa: BLE001 - carried to the caller's thread
            with lock:
                results[i] = ExceptionWrapper(where=f"in replica {i} on device {device}")

    jobs = list(zip(modules, inputs, kwargs_tup, devices, streams))
    if len(jobs) > 1:
        threads = [threading.Thread(target=worker, args=(i, *job)) for i, job in enumerate(jobs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    elif jobs:
        worker(0, *jobs[0])
    outputs = []
    for i in range(len(inputs)):
        output = results[i]
        if isinstance(output, ExceptionWrapper):
            output.reraise()
        outputs.append(output)
    return outputs
