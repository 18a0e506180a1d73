"""``GradScaler``: dynamic loss scaling for float16 training (torch.amp.GradScaler).

Note [Loss scaling]
float16 gradients underflow; multiplying the loss by a large scale ``S`` before ``backward()``
keeps them representable. Before the optimizer step the gradients are divided by ``S``
(``unscale_``) and checked for inf/NaN: a step whose gradients overflowed is skipped and ``S`` is
multiplied by ``backoff_factor``; after ``growth_interval`` consecutive good steps ``S`` is
multiplied by ``growth_factor``. The scale and the growth tracker live on the device as tensors
(as torch), so ``scale`` and ``unscale_`` never wait for the device; ``step`` reads one flag and
``update`` one scalar.
"""

from __future__ import annotations

import math
import warnings
from enum import Enum

from .. import dtypes as _dt
from ..ops import bound as ops
from ..tensor import Tensor

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scale the loss, unscale and check the gradients, skip bad steps, adapt the scale.

    Parameters
    ----------
    device : str
        Device type the scaler is for ("cuda" or "cpu"); with "cuda" and no usable GPU the scaler
        warns and disables itself, as torch does.
    init_scale : float
        Initial scale factor.
    growth_factor : float
        Factor the scale is multiplied by after ``growth_interval`` steps without inf/NaN.
    backoff_factor : float
        Factor the scale is multiplied by when a step's gradients had inf/NaN.
    growth_interval : int
        Consecutive good steps before growing the scale.
    enabled : bool
        ``False`` makes every method a no-op pass-through (``step`` just calls ``optimizer.step``).

    Examples
    --------
    >>> scaler = GradScaler("cuda")
    >>> with strided.autocast("cuda"):
    ...     loss = model(x).loss
    >>> scaler.scale(loss).backward()
    >>> scaler.step(optimizer)
    >>> scaler.update()
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda":
            from .. import cuda

            if not cuda.is_available():
                warnings.warn("strided.amp.GradScaler is enabled, but CUDA is not available. "
                              "Disabling.", stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._scale: Tensor | None = None
        self._growth_tracker: Tensor | None = None
        self._per_optimizer_states: dict[int, dict] = {}

    # ------------------------------------------------------------------ scaling
    def _lazy_init(self, dev) -> None:
        self._scale = ops.full((), self._init_scale, dtype=_dt.float32, device=dev)
        self._growth_tracker = ops.full((), self._init_growth_tracker, dtype=_dt.int32, device=dev)

    def _state(self, optimizer) -> dict:
        return self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())

    def scale(self, outputs):
        """``outputs`` (a tensor or nested lists/tuples of tensors) multiplied by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(outputs.device, non_blocking=True)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale in place and record whether any is inf/NaN.

        Call it between ``backward()`` and ``step()`` to clip or inspect the true gradients.
        """
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        if self._scale is None:
            raise RuntimeError("Attempted unscale_ but _scale is None.  This may indicate your script "
                               "did not use scaler.scale(loss or outputs) earlier in the iteration.")
        inv_scale = self._scale.double().reciprocal().float()
        state["found_inf_per_device"] = self._unscale_grads(optimizer, inv_scale)
        state["stage"] = OptState.UNSCALED

    def _unscale_grads(self, optimizer, inv_scale: Tensor | None, allow_fp16: bool = False) -> dict:
        """Multiply the gradients by ``inv_scale`` (None: only check them); per device, a float32
        0-dim tensor that is 1 when some gradient there is inf/NaN."""
        per_device: dict = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.dtype is _dt.float16 and not allow_fp16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                per_device.setdefault(g.device, []).append(g)
        found = {}
        for dev, grads in per_device.items():
            scale = None if inv_scale is None else inv_scale.to(dev, non_blocking=True)
            finite = []
            for g in grads:
                if scale is not None:
                    g.mul_(scale)
                finite.append(ops.isfinite(g).all())
            all_finite = finite[0] if len(finite) == 1 else ops.stack(finite).all()
            found[dev] = ops.logical_not(all_finite).to(_dt.float32)
        return found

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless ``unscale_`` was called) and run ``optimizer.step`` unless a gradient
        was inf/NaN; returns what ``optimizer.step`` returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            return self._fused_step(optimizer, state, args, kwargs)
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def _fused_step(self, optimizer, state: dict, args, kwargs):
        """Note [Scaled fused step]: as torch, an optimizer with ``_step_supports_amp_scaling``
        (a fused one) unscales the gradients and skips the update itself, given ``grad_scale`` and
        ``found_inf`` tensors as attributes, so the step never waits for the device."""
        if self._scale is None:
            raise RuntimeError("Attempted step but _scale is None.  This may indicate your script "
                               "did not use scaler.scale(loss or outputs) earlier in the iteration.")
        if state["stage"] is OptState.READY:  # only check: the optimizer divides by grad_scale
            state["found_inf_per_device"] = self._unscale_grads(optimizer, None, allow_fp16=True)
        found = list(state["found_inf_per_device"].values())
        if not found:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        found_inf = found[0] if len(found) == 1 else ops.stack([f.to(self._scale.device) for f in found]).sum()
        optimizer.grad_scale = None if state["stage"] is OptState.UNSCALED else self._scale
        optimizer.found_inf = found_inf
        try:
            retval = optimizer.step(*args, **kwargs)
        finally:
            del optimizer.grad_scale
            del optimizer.found_inf
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back off or grow the scale from this iteration's inf checks, or set ``new_scale``."""
        if not self._enabled:
            return
        if self._scale is None:
            raise RuntimeError("Attempted update but _scale is None.  This may indicate your script "
                               "did not use scaler.scale(loss or outputs) earlier in the iteration.")
        if new_scale is not None:
            value = new_scale.item() if isinstance(new_scale, Tensor) else float(new_scale)
            self._scale.fill_(value)
        else:
            found_infs = [f for s in self._per_optimizer_states.values()
                          for f in s["found_inf_per_device"].values()]
            if not found_infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf = any(f.item() for f in found_infs)
            scale, tracker = self._scale.item(), int(self._growth_tracker.item())
            scale, tracker = self._next_scale(scale, tracker, found_inf)
            self._scale.fill_(scale)
            self._growth_tracker.fill_(tracker)
        self._per_optimizer_states = {}

    def _next_scale(self, scale: float, tracker: int, found_inf: bool) -> tuple[float, int]:
        """torch's ``_amp_update_scale_``: the new (scale, growth tracker)."""
        if found_inf:
            return scale * self._backoff_factor, 0
        tracker += 1
        if tracker == self._growth_interval:
            grown = scale * self._growth_factor
            return (grown if math.isfinite(_dt.float32.numpy_dtype.type(grown)) else scale), 0
        return scale, tracker

    # ------------------------------------------------------------------ accessors
    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """``scale``, the factors, the interval and the growth tracker (empty when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __repr__(self) -> str:
        return (f"GradScaler(device={self._device!r}, scale={self.get_scale()}, "
                f"growth_factor={self._growth_factor}, backoff_factor={self._backoff_factor}, "
                f"growth_interval={self._growth_interval}, enabled={self._enabled})")
