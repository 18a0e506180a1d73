"""The Optimizer base class (torch.optim.Optimizer's contract) and shared helpers.

Note [Implementation selection]
As torch: ``fused=True`` runs one fused kernel per (device, dtype) group (CUDA or CPU floating
params); ``foreach=True`` runs the ``_foreach_*`` multi-tensor ops; otherwise a for-loop over the
single-tensor ops. With ``foreach=None, fused=None`` the default is foreach when every param is a
CUDA tensor, else the for-loop (torch's ``_default_to_fused_or_foreach``).
"""

from __future__ import annotations

import contextlib
import struct
import warnings
from collections import defaultdict

from .. import dtypes as dt
from ..dispatch.dispatcher import grad_mode
from ..tensor import Tensor
from .optimizer_hooks import (
    OptimizerHooksMixin,
    hooked_step,
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
    zero_grad_range,
)
from .optimizer_state_dict import OptimizerStateDictMixin

__all__ = ["Optimizer", "no_grad", "default_to_fused_or_foreach", "group_by_device_and_dtype",
           "check_fused", "step_value", "add_to_steps", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]

_FUSED_DEVICES = ("cuda", "cpu")
_FOREACH_DEVICES = ("cuda",)


_VALUE_WORDS = {"lr": "learning rate", "eps": "epsilon value"}


def host_step_flags(name: str, **flags) -> dict:
    """torch's ``capturable`` / ``differentiable`` (and Adagrad's ``fused``) for an optimizer whose step strided
    runs only on the host path: accepted at their defaults and returned for the param groups (torch's keys),
    refused when set, naming the optimizer and the flag (Note [Capturable steps])."""
    if flags.get("capturable"):
        raise ValueError(f"strided.optim.{name}: capturable=True is not supported: its step computes with values "
                         "read on the host, which a CUDA graph would freeze (Note [Capturable steps]); Adam, AdamW "
                         "and SGD with fused=True can be captured")
    if flags.get("differentiable"):
        raise ValueError(f"strided.optim.{name}: differentiable=True is not supported: its step runs without "
                         "autograd recording it")
    if flags.get("fused"):
        raise ValueError(f"strided.optim.{name}: fused=True is not supported: strided has no fused {name} kernel "
                         "(foreach=True is the multi-tensor path)")
    return flags


def check_hyperparameters(**values) -> None:
    """torch's constructor checks, in the order given: each value non-negative, ``betas`` each in [0, 1)."""
    for name, v in values.items():
        if name == "lr" and isinstance(v, Tensor) and v.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if name == "betas":
            for i, b in enumerate(v):
                if not 0.0 <= b < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {b}")
        elif not 0.0 <= v:
            raise ValueError(f"Invalid {_VALUE_WORDS.get(name, name + ' value')}: {v}")


@contextlib.contextmanager
def no_grad():
    """Grad mode off for the optimizer's in-place updates."""
    prev = grad_mode.enabled
    grad_mode.enabled = False
    try:
        yield
    finally:
        grad_mode.enabled = prev


@contextlib.contextmanager
def _enable_grad():
    prev = grad_mode.enabled
    grad_mode.enabled = True
    try:
        yield
    finally:
        grad_mode.enabled = prev


def default_to_fused_or_foreach(params, differentiable: bool = False, use_fused: bool = False):
    """torch's ``_default_to_fused_or_foreach``: (fused, foreach) for these params."""
    if differentiable:
        return False, False
    fused = use_fused and all(p is None or (p.device.type in _FUSED_DEVICES and p.is_floating_point())
                              for p in params)
    foreach = not fused and all(p is None or p.device.type in _FOREACH_DEVICES for p in params)
    return fused, foreach


def check_fused(params, foreach, differentiable, devices=_FUSED_DEVICES) -> None:
    """torch's checks of ``fused=True`` (``devices``: where the optimizer's fused kernel runs)."""
    if foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if not all(p.device.type in devices and p.is_floating_point() for p in params):
        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors of "
                           f"supported devices: {list(devices)}.")


def group_by_device_and_dtype(lists):
    """torch's ``_group_tensors_by_device_and_dtype``: ``{(device, dtype): ([lists...], [indices])}``
    grouped by the first list's tensors; ``None`` entries (absent state) are kept."""
    first = lists[0]
    if len({(t.device, t.dtype) for t in first}) == 1:  # the common case: one group, lists as given
        lists = [lst if len(lst) else [None] * len(first) for lst in lists]
        return {(first[0].device, first[0].dtype): (lists, list(range(len(first))))}
    out: dict = {}
    for i, t in enumerate(first):
        key = (t.device, t.dtype)
        entry = out.get(key)
        if entry is None:
            entry = out[key] = ([[] for _ in lists], [])
        for lst, src in zip(entry[0], lists):
            lst.append(src[i] if len(src) else None)
        entry[1].append(i)
    return out


def step_value(step) -> float:
    """``_get_value``: a Python float of a step tensor (host read for CPU steps)."""
    return float(step.item()) if isinstance(step, Tensor) else float(step)


def add_to_steps(steps, delta: float) -> list[float] | None:
    """``steps += delta``: CPU 0-dim step tensors are bumped on the host (no op dispatch per step,
    Note [Step tensors]) and their new values returned, read in the same pass; device steps are
    bumped by one ``_foreach_add_`` (None is returned: reading them would synchronize)."""
    from ..backends.cpu.common import as_numpy
    from ..ops import bound as ops

    if not steps:
        return []
    if steps[0].device.type == "cpu":
        values = []
        for s in steps:
            fmt = _STEP_FORMATS.get(s.dtype)
            if fmt is not None and not s._sizes and s._storage.buffer is not None:  # Note [Step bumps]
                buf, off = s._storage.buffer, s._offset * s.dtype.itemsize
                fmt.pack_into(buf, off, fmt.unpack_from(buf, off)[0] + delta)
                values.append(fmt.unpack_from(buf, off)[0])
            else:
                a = as_numpy(s)
                a += delta
                values.append(float(a))
        return values
    ops._foreach_add_.Scalar(steps, delta)
    return None


# Note [Step bumps]
# The for-loop and foreach steps bump every param's CPU step count each step (148 for GPT-2). A 0-dim
# float32 / float64 count is read and written in place with ``struct`` on its storage's bytes: about
# 0.3 µs a count, where a NumPy view and ``+=`` cost 2.3 µs (the foreach AdamW step spent ~350 µs of
# host time here). The sum is rounded to the count's dtype when packed; every caller adds 1.0 to
# an integral count, which is exact in float32 up to 2^24 steps either way.
_STEP_FORMATS = {dt.float32: struct.Struct("<f"), dt.float64: struct.Struct("<d")}


# Note [Step tensors]
# torch keeps ``state['step']`` as a CPU float tensor for the for-loop and foreach paths (its
# value is read on the host for the bias corrections) and as a float32 tensor on the param's
# device for fused and capturable steps (the kernel reads it). strided does the same.


class Optimizer(OptimizerHooksMixin, OptimizerStateDictMixin):
    """Base class of all optimizers (``torch.optim.Optimizer``)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = hooked_step(step)  # Note [Hooked steps]

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or "
                            f"dicts, but got {params.type()}")  # torch.typename's words
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of params (with per-group options) to ``param_groups``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the "
                            "ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        # Note [Named parameters]: torch's optimizers take (name, tensor) pairs too, as model.named_parameters()
        # yields them; the names go to the group's "param_names" (and so into state_dict), all or none per group
        # and per optimizer, and a loaded state dict without them keeps the optimizer's
        named = [p for p in param_group["params"] if isinstance(p, tuple)]
        if named:
            if len(named) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = [name for name, _ in named]
            param_group["params"] = [p for _, p in named]
        differentiable = self.defaults.get("differentiable", False)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not differentiable and not (p.is_leaf or p.retains_grad):  # its .grad is never filled
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is _REQUIRED and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization "
                                 f"parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in param_group["params"]}) != len(param_group["params"]):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                words = "with names" if "param_names" in param_group else "without names"
                raise ValueError(f"all optimizer param groups should be with/without names. cannot add param group "
                                 f"{words} to the optimizer")
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every param's ``.grad``: to None (default), or to zeros in place."""
        rng = zero_grad_range(self)  # the profiler's range, while one records
        if rng is None:
            return self._zero_grad(set_to_none)
        with rng:
            return self._zero_grad(set_to_none)

    def _zero_grad(self, set_to_none: bool) -> None:
        foreach = self.defaults.get("foreach", False) or self.defaults.get("fused", False)
        grouped: dict = defaultdict(list)
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if g.grad_fn is not None:  # torch's: a gradient made with create_graph=True
                    g.detach_()
                else:
                    g.requires_grad_(False)
                if foreach:
                    grouped[(g.device, g.dtype)].append(g)
                else:
                    g.zero_()
        if grouped:
            from ..ops import bound as ops

            for grads in grouped.values():
                ops._foreach_zero_(grads)

    def step(self, closure=None):
        """One optimization step; ``closure`` re-evaluates the model and returns the loss."""
        raise NotImplementedError

    def _cuda_graph_capture_health_check(self) -> None:
        """Refuse a step being captured into a CUDA graph unless every group is capturable.

        Note [Capturable steps]: the for-loop and foreach steps compute bias corrections on the
        host from the step count, so a captured step would replay the capture-time values
        forever. The fused step reads the step count from device memory and increments it there,
        so fused (or ``capturable=True``, which strided accepts only with fused) is safe.
        """
        from ..backends.cuda.capture import captures_underway, is_current_stream_capturing

        if captures_underway() and is_current_stream_capturing():
            if not all(g.get("capturable") or g.get("fused") for g in self.param_groups):
                raise RuntimeError(f"Attempting CUDA graph capture of step() for an instance of "
                                   f"{self.__class__.__name__} but param_groups' capturable is False.")

    def _gather(self, group, keys, init=None):
        """The params of ``group`` that have a ``.grad``, their grads, and a list per state key in ``keys``
        (torch's ``_init_group``; None where a param's state has no such key); ``init(state, p, group)`` fills the
        state of a param seen for the first time."""
        params, grads = [], []
        lists = tuple([] for _ in keys)
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if init is not None and len(state) == 0:
                init(state, p, group)
            for out, key in zip(lists, keys):
                out.append(state.get(key))
        return params, grads, lists

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with _enable_grad():
            return closure()


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


_REQUIRED = _RequiredParameter()
