"""OpInfo: what the tests need to know about an operator (torch's Note [OpInfos], small).

An ``OpInfo`` names one YAML overload, how to call it, a NumPy reference, the dtypes it supports,
a generator of sample inputs (non-contiguous, broadcast, zero-size and 0-dim included) and
inputs that must raise. ``tests/backend/test_ops.py`` runs every sample on every available
backend: CPU and CUDA results against the reference (computed in float64), Meta results against
the CPU result's shape and dtype, and CUDA against CPU.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

import numpy as np

from .. import dtypes as dt
from ..tensor import Tensor

__all__ = ["OpInfo", "SampleInput", "ErrorInput", "make_arg", "available_devices", "to_device",
           "FLOATING", "INTEGRAL", "ALL_DTYPES", "COMPLEX", "TOLERANCES"]

FLOATING = (dt.float32, dt.float64, dt.float16, dt.bfloat16)
INTEGRAL = (dt.int64, dt.int32, dt.int16, dt.int8, dt.uint8)
ALL_DTYPES = FLOATING + INTEGRAL + (dt.bool,)
COMPLEX = (dt.complex64, dt.complex128)  # not in ALL_DTYPES: Note [Complex operators]

# (rtol, atol) per dtype for comparing with a float64 reference.
TOLERANCES = {
    dt.float64: (1e-7, 1e-7), dt.float32: (1.3e-6, 1e-5), dt.float16: (1e-3, 1e-3),
    dt.bfloat16: (1.6e-2, 1e-2),
}
TOLERANCES[dt.complex64], TOLERANCES[dt.complex128] = TOLERANCES[dt.float32], TOLERANCES[dt.float64]  # by part


@dataclasses.dataclass
class SampleInput:
    """Positional and keyword arguments for one call; Tensors are CPU tensors (moved per backend)."""

    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    name: str = ""

    def __repr__(self) -> str:
        def show(x):
            if isinstance(x, Tensor):
                kind = "" if x.is_contiguous() else " noncontig"
                return f"T{list(x.shape)}:{x.dtype.name}{kind}"
            if isinstance(x, (list, tuple)):
                return "[" + ", ".join(show(v) for v in x) + "]"
            return repr(x)

        parts = [show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()]
        return f"{self.name or 'sample'}({', '.join(parts)})"


@dataclasses.dataclass
class ErrorInput:
    """A call that must raise ``error`` with a message matching ``match`` (on ``devices``; None: every device)."""

    sample: SampleInput
    error: type
    match: str
    devices: tuple | None = None


@dataclasses.dataclass
class OpInfo:
    """One operator overload under test.

    name:      the YAML overload, e.g. ``"add.Tensor"`` (``"relu"`` for the default overload).
    op:        callable taking the sample's arguments (e.g. ``strided.add``); default: the OpOverload.
    ref:       NumPy reference over NumPy arrays (tensors converted, floats as float64), or None
               when ``check`` verifies the result instead (random ops).
    dtypes:    dtypes the samples are generated for.
    samples:   ``samples(dtype, rng) -> iterable of SampleInput`` (CPU tensors).
    covers:    other overloads this entry also exercises (``add_.Tensor``, ``add.out``, ...).
    check:     ``check(result, sample) -> None`` extra assertions (raise AssertionError).
    errors:    ``errors(rng) -> iterable of ErrorInput``.
    ref_dtype: the expected result dtype given the sample (default: the strided CPU result's).
    data_dependent: the result's shape depends on the values (nonzero, masked_select): on meta
               the op must raise NotImplementedError instead.
    cuda_tolerances: (rtol, atol) per dtype on CUDA where they differ from ``tolerances`` (float32
               convolutions on TF32 tensor cores by default: Note [Convolution precision]).
    """

    name: str
    samples: Callable[[dt.dtype, np.random.Generator], Iterable[SampleInput]]
    ref: Callable | None = None
    op: Callable | None = None
    dtypes: tuple = FLOATING
    covers: tuple = ()
    check: Callable | None = None
    errors: Callable | None = None
    tolerances: dict | None = None
    cuda_tolerances: dict | None = None
    exact_dtype: bool = True
    data_dependent: bool = False

    def get_op(self):
        if self.op is not None:
            return self.op
        from ..ops import registry

        aten = registry.load()
        base, _, overload = self.name.partition(".")
        return getattr(aten._get(base), overload or "default")

    def tolerance(self, d: dt.dtype, device: str = "cpu"):
        if device == "cuda" and self.cuda_tolerances and d in self.cuda_tolerances:
            return self.cuda_tolerances[d]
        table = self.tolerances or {}
        return table.get(d, TOLERANCES.get(d, (0, 0)))


def make_arg(shape, dtype=dt.float32, *, low=None, high=None, noncontiguous=False,
             rng: np.random.Generator | None = None, requires_grad=False) -> Tensor:
    """A random CPU tensor; ``noncontiguous`` gives the same values through a strided view."""
    from ..factories import from_numpy

    rng = rng or np.random.default_rng(0)
    shape = tuple(shape)
    if dtype is dt.bool:
        data = rng.random(shape) < 0.5
    elif dtype.is_floating_point or dtype.is_complex:
        lo = -9.0 if low is None else low
        hi = 9.0 if high is None else high
        data = rng.uniform(lo, hi, size=shape)
        if dtype.is_complex:  # both parts in [low, high)
            data = data + 1j * rng.uniform(lo, hi, size=shape)
    else:
        info = np.iinfo(dtype.numpy_dtype)
        lo = max(-9 if low is None else low, int(info.min))
        hi = min(10 if high is None else high, int(info.max))
        data = rng.integers(lo, hi, size=shape)
    data = np.asarray(data).astype(dtype.numpy_dtype)
    if noncontiguous and data.ndim > 0 and data.size > 1:
        # every other element of a buffer twice as wide: same values, stride 2 in the last dim
        wide = np.empty(data.shape[:-1] + (data.shape[-1] * 2,), dtype=data.dtype)
        wide[..., ::2] = data
        wide[..., 1::2] = data[..., ::-1] if data.shape[-1] else data
        t = from_numpy(wide)[..., ::2]
        t.requires_grad = requires_grad
        return t
    t = from_numpy(np.array(data, order="C"))  # (np.ascontiguousarray makes 0-dim arrays 1-dim)
    t.requires_grad = requires_grad
    return t


def available_devices() -> list[str]:
    """The backends tests run on here: cpu, meta, and cuda when a GPU is usable."""
    devices = ["cpu", "meta"]
    try:
        from .. import cuda

        if cuda.is_available():
            devices.append("cuda")
    except ImportError:
        pass
    return devices


def to_device(x, device: str):
    """Move sample tensors to ``device`` keeping their sizes and strides (layout matters)."""
    from .. import empty_strided

    if isinstance(x, Tensor):
        if device == "cpu":
            return x
        from ..autograd import no_grad

        out = empty_strided(x.shape, x.stride(), dtype=x.dtype, device=device)
        if device != "meta":
            with no_grad():  # a leaf on the device, as the sample is on the CPU
                out.copy_(x)
        out.requires_grad = x.requires_grad
        return out
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(v, device) for v in x)
    if isinstance(x, dict):
        return {k: to_device(v, device) for k, v in x.items()}
    return x
