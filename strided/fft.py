"""``strided.fft``: torch.fft's functions over the ops ``_fft_r2c``, ``_fft_c2r`` and ``_fft_c2c``.

Each function takes torch's arguments (``n`` / ``s``, ``dim``, ``norm``, ``out=``), promotes as torch
(integer and bool inputs to the default float dtype, real to complex where the transform needs it), pads
with zeros or trims the signal to ``n`` / ``s`` and raises torch's errors (torch's SpectralOps.cpp). The
transforms run on the CPU (numpy.fft's pocketfft), CUDA (strided's own kernels, Note [CUDA FFT] in
backends/cuda/kernels/fft_ops.py) and Meta backends (Note [FFT ops]); gradients come from the ops' formulas.
"""

from __future__ import annotations

import functools
import math
import warnings

from . import dtypes as _dt
from .autograd.grad_mode import is_grad_enabled
from .backends.meta.common import wrap_dim
from .backends.meta.pointwise import scalar_type_name
from .dispatch.argument_checks import arg_tensor
from .dispatch.out_dtypes import check_out_dtype
from .ops import bound as _ops
from .tensor import Tensor

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2  # torch's fft_norm_mode


def _norm_mode(norm, forward: bool) -> int:
    """torch's norm_from_string: NumPy's norm names mean a scale per direction."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x: Tensor, require_complex: bool = False) -> Tensor:
    """torch's promote_tensor_fft: integers to the default float dtype, real to complex when required."""
    d = x.dtype
    if d.is_complex:
        return x
    if not d.is_floating_point:
        d = _dt.get_default_dtype()
    if d not in (_dt.float32, _dt.float64):  # no complex32 in strided, on any device
        raise NotImplementedError(f"Unsupported dtype {scalar_type_name(d)}")
    if require_complex:
        d = d.to_complex()
    return x if d is x.dtype else x.to(d)


def _check_n(n) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x: Tensor, dims, sizes) -> Tensor:
    """torch's resize_fft_input: ``x`` trimmed (a view) or zero-padded at the end to ``sizes`` in ``dims``."""
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if n == -1 or n == have:
            continue
        if have > n:
            x = _ops.narrow(x, d, 0, n)
        else:
            pad = list(x.shape)
            pad[d] = n - have
            x = _ops.cat([x, x.new_zeros(pad)], d)
    return x


def _out(fname: str, result: Tensor, out, inputs, want_complex: bool) -> Tensor:
    """``result``, or ``result`` written into ``out`` (torch's dtype check, then its out= rules)."""
    if out is None:
        return result
    if want_complex and not out.dtype.is_complex:
        raise RuntimeError(f"{fname} expects a complex output tensor, but got {scalar_type_name(out.dtype)}")
    if not want_complex and not out.dtype.is_floating_point:
        raise RuntimeError(f"{fname} expects a floating point output tensor, but got {scalar_type_name(out.dtype)}")
    if is_grad_enabled() and any(t._requires_grad for t in inputs):
        raise RuntimeError(f"fft_{fname}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if out.shape != result.shape:
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(result.shape)}. This behavior "
                          "is deprecated.", UserWarning, stacklevel=3)
        out.resize_(result.shape)
    return out.copy_(result)


# ---------------------------------------------------------------------------- one-dimensional
def _c2c(fname, input, n, dim, norm, forward, out):
    if not input.dtype.is_complex:
        raise TypeError(f"{fname} expects a complex input tensor, but got {scalar_type_name(input.dtype)}")
    d = wrap_dim(dim, input.dim()) if input.dim() else _no_dims(dim)
    n = input.shape[d] if n is None else n
    _check_n(n)
    x = _resize(input, [d], [n])
    return _out(fname, _ops._fft_c2c(x, [d], _norm_mode(norm, forward), forward), out, (input,), True)


def _r2c(fname, input, n, dim, norm, forward, onesided, out):
    if input.dtype.is_complex:
        raise TypeError(f"{fname} expects a real input tensor, but got {scalar_type_name(input.dtype)}")
    x = _promote(input)
    d = wrap_dim(dim, x.dim()) if x.dim() else _no_dims(dim)
    n = x.shape[d] if n is None else n
    _check_n(n)
    x = _resize(x, [d], [n])
    result = _ops._fft_r2c(x, [d], _norm_mode(norm, forward), onesided)
    if not forward and out is not None:  # torch's 1-d inverse of a real signal: out in the result's dtype
        check_out_dtype("fft.ifft", result.dtype, out.dtype)  # Note [Exact out dtypes]
    return _out(fname, result if forward else _ops.conj(result), out, (input,), True)


def _c2r(fname, input, n, dim, norm, forward, out):
    x = _promote(input, require_complex=True)
    d = wrap_dim(dim, x.dim()) if x.dim() else _no_dims(dim)
    n = 2 * (x.shape[d] - 1) if n is None else n
    _check_n(n)
    x = _resize(x, [d], [n // 2 + 1])
    if forward:
        x = _ops.conj(x)
    return _out(fname, _ops._fft_c2r(x, [d], _norm_mode(norm, forward), n), out, (input,), False)


def _no_dims(dim):
    raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """The 1-D discrete Fourier transform of ``input`` (torch.fft.fft)."""
    if input.dtype.is_complex:
        return _c2c("fft", input, n, dim, norm, True, out)
    return _r2c("fft", input, n, dim, norm, True, False, out)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """The 1-D inverse discrete Fourier transform (torch.fft.ifft)."""
    if input.dtype.is_complex:
        return _c2c("ifft", input, n, dim, norm, False, out)
    return _r2c("ifft", input, n, dim, norm, False, False, out)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """The onesided 1-D transform of a real signal (torch.fft.rfft)."""
    return _r2c("rfft", input, n, dim, norm, True, True, out)


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """The inverse of ``rfft``: a real signal of ``n`` (default ``2 (m - 1)``) points (torch.fft.irfft)."""
    return _c2r("irfft", input, n, dim, norm, False, out)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """The transform of a Hermitian-symmetric signal given by its first half: real (torch.fft.hfft)."""
    return _c2r("hfft", input, n, dim, norm, True, out)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """The inverse of ``hfft``: the onesided inverse transform of a real signal (torch.fft.ihfft)."""
    return _r2c("ihfft", input, n, dim, norm, False, True, out)


# ---------------------------------------------------------------------------- n-dimensional
def _shape_and_dims(input: Tensor, s, dim):
    """torch's canonicalize_fft_shape_and_dim_args: wrapped unique dims and the signal size in each."""
    ndim, sizes = input.dim(), input.shape
    dims = None
    if dim is not None:
        dims = [wrap_dim(d, ndim) if ndim else _no_dims(d) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = list(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [sizes[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dims is None:
        dims, shape = list(range(ndim)), list(sizes)
    else:
        shape = [sizes[d] for d in dims]
    for n in shape:
        _check_n(n)
    return shape, dims


def _c2r_shape_and_dims(fname, input, s, dim):
    """torch's canonicalize_fft_c2r_shape_and_dim_args: and the output's size in the last dim."""
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    last = 2 * (input.shape[dims[-1]] - 1) if s is None or list(s)[-1] == -1 else shape[-1]
    _check_n(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _fftn(fname, input, s, dim, norm, forward, out):
    shape, dims = _shape_and_dims(input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _out(fname, _ops._fft_c2c(x, dims, _norm_mode(norm, forward), forward), out, (input,), True)


def _rfftn(fname, input, s, dim, norm, out):
    if input.dtype.is_complex:
        raise TypeError(f"rfftn expects a real-valued input tensor, but got {scalar_type_name(input.dtype)}")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    return _out(fname, _ops._fft_r2c(x, dims, _norm_mode(norm, True), True), out, (input,), True)


def _irfftn(fname, input, s, dim, norm, out):
    shape, dims, last = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _out(fname, _ops._fft_c2r(x, dims, _norm_mode(norm, False), last), out, (input,), False)


def _hfftn(fname, input, s, dim, norm, out):
    shape, dims, last = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = _ops._fft_c2c(x, dims[:-1], mode, True)
    return _out(fname, _ops._fft_c2r(_ops.conj(x), dims[-1:], mode, last), out, (input,), False)


def _ihfftn(fname, input, s, dim, norm, out):
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    mode = _norm_mode(norm, False)
    result = _ops.conj(_ops._fft_r2c(x, dims[-1:], mode, True))
    if len(dims) > 1:
        result = _ops._fft_c2c(result, dims[:-1], mode, False)
    return _out(fname, result, out, (input,), True)


def fftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """The N-D discrete Fourier transform over ``dim`` (default: all, or the last ``len(s)``) (torch.fft.fftn)."""
    return _fftn("fftn", input, s, dim, norm, True, out)


def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """The N-D inverse discrete Fourier transform (torch.fft.ifftn)."""
    return _fftn("ifftn", input, s, dim, norm, False, out)


def rfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """The N-D transform of a real signal, onesided in the last dim (torch.fft.rfftn)."""
    return _rfftn("rfftn", input, s, dim, norm, out)


def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """The inverse of ``rfftn`` (torch.fft.irfftn)."""
    return _irfftn("irfftn", input, s, dim, norm, out)


def hfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """The N-D transform of a Hermitian-symmetric signal given by its onesided half (torch.fft.hfftn)."""
    return _hfftn("hfftn", input, s, dim, norm, out)


def ihfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """The inverse of ``hfftn`` (torch.fft.ihfftn)."""
    return _ihfftn("ihfftn", input, s, dim, norm, out)


def fft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """``fftn`` over the last two dims (torch.fft.fft2)."""
    return _fftn("fft2", input, s, dim, norm, True, out)


def ifft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """``ifftn`` over the last two dims (torch.fft.ifft2)."""
    return _fftn("ifft2", input, s, dim, norm, False, out)


def rfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """``rfftn`` over the last two dims (torch.fft.rfft2)."""
    return _rfftn("rfft2", input, s, dim, norm, out)


def irfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """``irfftn`` over the last two dims (torch.fft.irfft2)."""
    return _irfftn("irfft2", input, s, dim, norm, out)


def hfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """``hfftn`` over the last two dims (torch.fft.hfft2)."""
    return _hfftn("hfft2", input, s, dim, norm, out)


def ihfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:  # noqa: A002
    """``ihfftn`` over the last two dims (torch.fft.ihfft2)."""
    return _ihfftn("ihfft2", input, s, dim, norm, out)


# ---------------------------------------------------------------------------- helpers
def _freq_dtype(fname, dtype):
    d = _dt.get_default_dtype() if dtype is None else dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    return d


def fftfreq(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False) -> Tensor:
    """The sample frequencies ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d n)`` (torch.fft.fftfreq)."""
    from .factories import arange, tensor

    dt = _freq_dtype("fftfreq", dtype)
    k = _ops.cat([arange((n + 1) // 2, dtype=_dt.int64, device=device),
                  arange(-(n // 2), 0, dtype=_dt.int64, device=device)]) if n > 0 else arange(0, device=device)
    result = k.to(dt) * tensor(1.0 / (n * d) if n else math.inf, dtype=dt, device=device)
    return _freq_result(result, out, layout, requires_grad, pin_memory)


def rfftfreq(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False) -> Tensor:
    """The onesided sample frequencies ``[0, 1, ..., n // 2] / (d n)`` (torch.fft.rfftfreq)."""
    from .factories import arange, tensor

    dt = _freq_dtype("rfftfreq", dtype)
    result = arange(n // 2 + 1, device=device).to(dt) * tensor(1.0 / (n * d), dtype=dt, device=device)
    return _freq_result(result, out, layout, requires_grad, pin_memory)


def _freq_result(result: Tensor, out, layout, requires_grad: bool, pin_memory: bool) -> Tensor:
    """The factory options of fftfreq / rfftfreq: layout (strided only), pinned memory, requires_grad, out=."""
    if layout not in (None, "strided"):
        raise RuntimeError(f"fftfreq(): only the strided layout is supported, got {layout!r}")
    if pin_memory:
        result = result.pin_memory()
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result.requires_grad_(requires_grad)


def _roll(input: Tensor, dim, shift_of) -> Tensor:
    """``input`` rolled in each of ``dim`` (default: all) by ``shift_of(size)``, as ``narrow`` + ``cat``
    (layout ops: complex tensors too)."""
    dims = range(input.dim()) if dim is None else [dim] if isinstance(dim, int) else dim
    x = input
    for d in [wrap_dim(d, input.dim()) for d in dims]:
        n = x.shape[d]
        k = shift_of(n) % n if n else 0
        if k:
            x = _ops.cat([_ops.narrow(x, d, n - k, k), _ops.narrow(x, d, 0, n - k)], d)
    return x if x is not input else _ops.clone(input)


def fftshift(input: Tensor, dim=None) -> Tensor:  # noqa: A002
    """``input`` with the zero frequency moved to the middle of each of ``dim`` (torch.fft.fftshift)."""
    return _roll(input, dim, lambda n: n // 2)


def ifftshift(input: Tensor, dim=None) -> Tensor:  # noqa: A002
    """The inverse of ``fftshift`` (torch.fft.ifftshift)."""
    return _roll(input, dim, lambda n: (n + 1) // 2)


from .amp.composed_functions import CPU_FP32 as _CPU_FP32  # noqa: E402
from .amp.composed_functions import NATIVE as _NATIVE  # noqa: E402
from .amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

# torch's FFTs are native kernels; these are on its CPU float32 autocast list (Note [Autocast around composed
# functions]); the Hermitian 2-d / n-d ones on no list
_wrap_policies(globals(), {name: _CPU_FP32 for name in (
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn", "hfft",
    "ihfft")})
_wrap_policies(globals(), {name: _NATIVE for name in ("hfft2", "ihfft2", "hfftn", "ihfftn")})


# torch's fft functions are generated bindings: a non-tensor ``input`` is refused in its words, before any work
def _input_checked(fn):
    @functools.wraps(fn)
    def checked(input, *args, **kwargs):  # noqa: A002 - torch's argument name
        if not isinstance(input, Tensor):
            arg_tensor(f"fft_{fn.__name__}", "input", 1, input)
        return fn(input, *args, **kwargs)

    return checked


for _name in __all__:
    if _name not in ("fftfreq", "rfftfreq"):
        globals()[_name] = _input_checked(globals()[_name])
