"""``F.interpolate`` composed of existing operators: nearest, nearest-exact, linear, bilinear,
bicubic, trilinear and area resampling of (N, C, d1, ..., dK) inputs.

Note [Separable resampling]
Every supported mode resamples one spatial dim at a time with torch's source-coordinate rule (the
scale is ``in / out``, or ``1 / scale_factor`` when a factor is given and not recomputed; for
linear modes without ``align_corners`` the source is ``(dst + 0.5) * scale - 0.5`` clamped at 0,
with it ``dst * (in - 1) / (out - 1)``): nearest modes are one ``index_select``, linear modes two
and a ``lerp``. Bicubic (torch's cubic convolution, A = -0.75, the source not clamped, the four taps
clamped to the border) is four ``index_select``s weighted per output position: the 2-D kernel is the
outer product of the 1-D ones, so one dim at a time gives torch's result. Area is adaptive average
pooling to the output size, as torch's. Autograd differentiates those ops.

Note [Antialiased resampling]
With ``antialias=True`` (bilinear / bicubic, 4-D input) a downscaling filter widens with the scale, as
torch's ``_upsample_*2d_aa`` (aten UpSample.h ``_compute_weights_aa``): for output i the center is
``scale * (i + 0.5)``, the support ``interp_size / 2 * max(scale, 1)``, the taps the inputs j in
``[trunc(center - support + 0.5), trunc(center + support + 0.5))`` (clamped to the input, at most
``2 ceil(support) + 1``), weighted by the filter at ``(j - center + 0.5) / max(scale, 1)`` -- the
triangle for bilinear, Keys' cubic with a = -0.5 (not -0.75) for bicubic -- and normalized to sum 1.
Those weights form one (out, in) matrix per dim, computed on the device in the precision torch computes
them in (float32 for float32 and lower, float64 for float64, so the truncations land alike), and the
dim is resampled by one matmul with it; autograd differentiates the matmul.
"""

from __future__ import annotations

import math
import warnings

from .. import dtypes as _dt
from ..backends.meta.pointwise import not_implemented
from ..ops import bound as ops
from ..ops.complex_support import refuse_complex
from ..tensor import Tensor
from .channels_last import keeps_channels_last

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

_LINEAR = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_CUBIC_A = -0.75  # torch's cubic convolution coefficient
_ALL = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


@keeps_channels_last()
def interpolate(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resample the spatial dims of ``input`` to ``size`` or by ``scale_factor`` (Note [Separable resampling])."""
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate(): argument 'input' must be Tensor, not {type(input).__name__}")
    k = input.dim() - 2
    if mode not in _ALL:
        supported = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
            f"the modes: {supported} (got {mode})"
        )
    if antialias and (mode not in ("bilinear", "bicubic") or input.dim() != 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor "
                         "as input")
    if mode in _LINEAR:
        if input.dim() != _LINEAR[mode]:
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_LINEAR[mode]}D input")
        align_corners = bool(align_corners)
    elif align_corners is not None:
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear"
        )
    if k < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D)")
    in_sizes = list(input.shape[2:])
    if (size is None) == (scale_factor is None):
        raise ValueError(
            "only one of size or scale_factor should be defined"
            if size is not None
            else "either size or scale_factor should be defined"
        )
    if size is not None:
        if not isinstance(size, (int, list, tuple)) or isinstance(size, bool):
            raise TypeError(f"interpolate(): size must be int or tuple of ints, not {size!r}")
        out_sizes = [size] * k if isinstance(size, int) else list(size)
        if len(out_sizes) != k:
            raise ValueError(
                f"Input and output must have the same number of spatial dimensions, but got input with "
                f"spatial dimensions of {in_sizes} and output size of {size}. Please provide input tensor "
                "in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
            )
        scales = [None] * k
    else:
        factors = [float(scale_factor)] * k if isinstance(scale_factor, (int, float)) else list(scale_factor)
        if len(factors) != k:
            raise ValueError(
                f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                f"with spatial dimensions of {in_sizes} and scale_factor of shape {scale_factor}."
            )
        out_sizes = [math.floor(n * f) for n, f in zip(in_sizes, factors)]
        scales = [None if recompute_scale_factor else f for f in factors]
    if any(not isinstance(n, int) or isinstance(n, bool) for n in out_sizes):
        raise TypeError(f"interpolate(): size must be int or tuple of ints, not {size!r}")
    if any(n <= 0 for n in out_sizes) or any(f is not None and f <= 0 for f in scales):
        letters = {1: "W", 2: "HW", 3: "DHW"}[k]
        got_in = ", ".join(f"{c}: {n}" for c, n in zip(letters, in_sizes))
        got_out = ", ".join(f"{c}: {n}" for c, n in zip(letters, out_sizes))
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input ({got_in}) output ({got_out})"
        )
    if input.dtype.is_complex and mode != "area":  # the names are built only for the refusal
        refuse_complex(input, *_complex_refusal_names(mode, k))
    if not (input.dtype.is_floating_point or input.dtype.is_complex or mode == "area"):
        if _refuses_integers(input, mode, antialias):
            raise _integer_refusal(input, mode, k, antialias)
        if mode in ("bilinear", "bicubic"):  # uint8 on the CPU: Note [uint8 resampling]
            from .interpolation_uint8 import resample_uint8

            return resample_uint8(input, in_sizes, out_sizes, scales, mode, align_corners, antialias)
    if mode == "area":
        from . import adaptive_pooling as P

        pool = (P.adaptive_avg_pool1d, P.adaptive_avg_pool2d, P.adaptive_avg_pool3d)[k - 1]
        return pool(input, out_sizes[0] if k == 1 else tuple(out_sizes))
    # half inputs resample in float32 and round once, as torch's kernels accumulate in their opmath type (one
    # rounding per pass and per term drifted ~1.5x torch's error in bfloat16 bicubic); nearest only copies
    half = input.dtype in (_dt.float16, _dt.bfloat16) and mode not in ("nearest", "nearest-exact")
    out = input.float() if half else input
    for i, (n_in, n_out, f) in enumerate(zip(in_sizes, out_sizes, scales)):
        if antialias:
            if n_in != n_out:  # at equal sizes both filters are the identity
                out = _resample_antialiased(out, 2 + i, n_in, n_out, f, mode, align_corners)
        elif n_in != n_out or f is not None:
            out = _resample(out, 2 + i, n_in, n_out, f, mode, align_corners)
    return out.to(input.dtype) if half else out


def _complex_refusal_names(mode: str, k: int) -> tuple[str, str]:
    """torch's AT_DISPATCH names (CPU, CUDA) of the upsampling kernel that refuses complex input."""
    base = "nearest" if mode == "nearest-exact" else mode
    cuda = f"upsample_{base}{k}d_out_frame"
    if base in ("nearest", "bilinear") and k == 2:
        return f"upsample_{base}2d_channels_last", cuda
    weights = {"bicubic": "cubic", "nearest": "nearest"}.get(base, "linear")
    return f"compute_indices_weights_{weights}", cuda


def _refuses_integers(input: Tensor, mode: str, antialias: bool) -> bool:
    """Whether torch refuses this integer or bool input: the nearest modes take uint8, and on the CPU so do
    bilinear and bicubic (with or without antialias); nothing else does (torch 2.14's CPU, 2.11's CUDA)."""
    if input.dtype is not _dt.uint8:
        return True
    if mode in ("nearest", "nearest-exact"):
        return False
    return mode not in ("bilinear", "bicubic") or input.device.type == "cuda"


def _integer_refusal(input: Tensor, mode: str, k: int, antialias: bool) -> NotImplementedError:
    """torch's AT_DISPATCH error for an integer or bool input it has no kernel for."""
    cpu, cuda = _complex_refusal_names(mode, k)
    if antialias:  # torch 2.11's CUDA names the bilinear kernel for both antialiased modes
        cpu, cuda = "compute_index_ranges_weights", "upsample_bilinear2d_out_frame"
    return not_implemented(cuda if input.device.type == "cuda" else cpu, input.dtype)


def _aa_filter(v: Tensor, mode: str) -> Tensor:
    """The antialiasing filter at ``v``: the triangle (bilinear) or Keys' cubic, a = -0.5 (bicubic)."""
    v = ops.abs(v)
    if mode == "bilinear":
        return ops.clamp(1.0 - v, 0.0, None)
    a = -0.5
    near = ((a + 2) * v - (a + 3)) * v * v + 1
    far = ((a * v - 5 * a) * v + 8 * a) * v - 4 * a
    return ops.where(v < 1.0, near, ops.where(v < 2.0, far, 0.0))


def _resample_antialiased(x: Tensor, d: int, n_in: int, n_out: int, factor, mode: str,
                          align_corners: bool) -> Tensor:
    """Resample dim ``d`` by one matmul with torch's antialiasing weights (Note [Antialiased resampling])."""
    wdt = _dt.float64 if x.dtype is _dt.float64 else _dt.float32
    one = wdt.numpy_dtype.type  # host scalars rounded as torch's opmath_t
    if align_corners:
        scale = one(n_in - 1) / one(n_out - 1) if n_out > 1 else one(0)
    else:
        scale = one(1) / one(factor) if factor is not None and factor > 0 else one(n_in) / one(n_out)
    half = one(1 if mode == "bilinear" else 2)  # interp_size / 2
    support = half * scale if scale >= 1 else half
    invscale = one(1) / scale if scale >= 1 else one(1)
    max_taps = int(math.ceil(support)) * 2 + 1
    dev = x.device
    center = ops.mul(ops.add(ops.arange(0, n_out, dtype=wdt, device=dev), 0.5), float(scale)).unsqueeze(-1)
    j = ops.arange(0, n_in, dtype=wdt, device=dev)
    lo = ops.clamp(ops.trunc(ops.add(ops.sub(center, float(support)), 0.5)), 0, None)
    hi = ops.clamp(ops.trunc(ops.add(ops.add(center, float(support)), 0.5)), None, n_in)
    hi = ops.clamp(hi, lo, ops.add(lo, max_taps))
    w = _aa_filter(ops.mul(ops.add(ops.sub(j, center), 0.5), float(invscale)), mode)
    w = ops.where(ops.logical_and(j >= lo, j < hi), w, 0.0)
    total = ops.sum(w, [-1], True)
    w = ops.where(total != 0, w / ops.where(total != 0, total, 1.0), w)  # (n_out, n_in)
    moved = ops.movedim(x, d, -1)
    return ops.movedim(ops.matmul(moved, w.to(x.dtype).mT), -1, d)


def _resample(x: Tensor, d: int, n_in: int, n_out: int, factor, mode: str, align_corners: bool) -> Tensor:
    dev = x.device
    pos = ops.arange(0, n_out, dtype=_dt.float64, device=dev)
    if mode in ("nearest", "nearest-exact"):
        scale = n_in / n_out if factor is None else 1.0 / factor
        src = ops.floor(ops.mul(ops.add(pos, 0.5), scale) if mode == "nearest-exact" else ops.mul(pos, scale))
        idx = ops.clamp(src, 0, n_in - 1).to(_dt.int64)
        return ops.index_select(x, d, idx)
    if align_corners:
        src = ops.mul(pos, (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        scale = n_in / n_out if factor is None else 1.0 / factor
        src = ops.sub(ops.mul(ops.add(pos, 0.5), scale), 0.5)
        if mode == "bicubic":
            return _cubic(x, d, n_in, n_out, src)
        src = ops.clamp(src, 0, None)
    if mode == "bicubic":
        return _cubic(x, d, n_in, n_out, src)
    lo = ops.clamp(ops.floor(src), 0, n_in - 1)
    hi = ops.clamp(ops.add(lo, 1), 0, n_in - 1)
    shape = [n_out if j == d else 1 for j in range(x.dim())]
    weight = ops.reshape(ops.sub(src, lo), shape).to(x.dtype if x.dtype.is_floating_point else _dt.float32)
    a = ops.index_select(x, d, lo.to(_dt.int64))
    b = ops.index_select(x, d, hi.to(_dt.int64))
    return ops.lerp(a, b, weight)


def _cubic(x: Tensor, d: int, n_in: int, n_out: int, src: Tensor) -> Tensor:
    """Cubic convolution along dim ``d`` at float64 source positions ``src`` (Note [Separable resampling])."""
    base = ops.floor(src)
    t = ops.sub(src, base)
    a = _CUBIC_A

    def near(v):  # |v| <= 1
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):  # 1 < |v| < 2
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    shape = [n_out if j == d else 1 for j in range(x.dim())]
    wdtype = x.dtype if x.dtype.is_floating_point else _dt.float32
    out = None
    for k, w in enumerate(weights):
        idx = ops.clamp(ops.add(base, k - 1), 0, n_in - 1).to(_dt.int64)
        term = ops.mul(ops.index_select(x, d, idx), ops.reshape(w, shape).to(wdtype))
        out = term if out is None else ops.add(out, term)
    return out


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners=None) -> Tensor:
    """Deprecated alias of :func:`interpolate` (torch's warning)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode="nearest")``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode="bilinear", align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _autocast_policy(device_type: str):
    """torch's upsample kernels are native, on its CUDA float32 list only; "area" is adaptive average pooling,
    which autocasts by its own policy (Note [Autocast around composed functions])."""
    def policy(input, size=None, scale_factor=None, mode="nearest", *args, **kwargs):
        if mode == "area":
            return None
        return "fp32" if device_type == "cuda" else "native"
    return policy


from ..amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

_wrap_policies(globals(), {"interpolate": {"cpu": _autocast_policy("cpu"), "cuda": _autocast_policy("cuda")}})
