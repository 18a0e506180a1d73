"""``strided.masked``: torch.masked's reductions and normalizations of dense tensors with a ``mask`` argument.

Note [Masked reductions]
As torch.masked (torch/masked/_ops.py, the strided layout): ``mask`` (broadcast to the input, read as bool) marks the
elements that take part. Each function replaces the masked-out elements by its operation's identity (0 for sums,
1 for products, -inf / the dtype's lowest for maxima, +inf / its highest for minima, NaN for the median, which then
runs as nanmedian) and calls the ordinary operation, so gradients reach only the elements that were kept. ``mean``,
``var`` and ``std`` count the kept elements (a fully masked-out slice gives NaN, torch's "undefined value");
``softmax`` / ``log_softmax`` fill -inf and ``softmin`` +inf, so masked-out positions come out 0 (-inf for
log_softmax). ``mask=None`` keeps everything. torch's MaskedTensor class (a prototype) is not provided.
"""

from __future__ import annotations

import functools
import math

from . import dtypes as _dt
from .ops import bound as _ops
from .tensor import Tensor
from .type_info import iinfo as _iinfo

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean", "median", "logsumexp",
           "logaddexp", "norm", "var", "std", "softmax", "log_softmax", "softmin", "normalize"]

_SMALL_INTS = (_dt.uint8, _dt.bool, _dt.int8, _dt.int16, _dt.int32)


def _canonical_dim(dim, ndim: int) -> tuple:
    """``dim`` as a sorted tuple (None or () is every dim), with torch.masked's checks."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims: list = []
    items = (dim,) if isinstance(dim, int) else dim
    if isinstance(dim, bool) or not isinstance(items, (tuple, list)) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in items):
        raise TypeError(f"masked: dim must be an int, a tuple of ints or None, got {dim!r}")
    for d in items:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input: Tensor, mask: Tensor) -> Tensor:
    """The bool mask broadcast to ``input``'s shape."""
    if tuple(mask.shape) != tuple(input.shape):
        if mask.dim() > input.dim():
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the "
                             "input)")
        mask = _ops.broadcast_to(mask, tuple(input.shape))
    return mask if mask.dtype is _dt.bool else mask.to(_dt.bool)


def _identity(op: str, input: Tensor, ord=None):
    """The value a masked-out element takes for ``op`` (Note [Masked reductions])."""
    d = input.dtype
    if d.is_complex and op in ("amax", "argmax", "amin", "argmin", "logaddexp"):  # torch's fails in iinfo, a TypeError
        raise TypeError(f"masked {op}: complex tensors are not ordered, so {op} has no identity for masked-out "
                        "elements")
    if op in ("sum", "cumsum"):
        return 0
    if op in ("prod", "cumprod"):
        return 1
    if op in ("amax", "argmax", "logaddexp", "logsumexp"):
        if d.is_floating_point or d.is_complex:
            return -math.inf
        if d is not _dt.bool:  # bool has none in torch's table: its NotImplementedError below
            return _iinfo(d).min
    if op in ("amin", "argmin"):
        if d.is_floating_point:
            return math.inf
        if d is not _dt.bool:
            return _iinfo(d).max
    if op == "norm":
        return math.inf if ord == -math.inf else 0
    if op == "median":
        return math.nan
    raise NotImplementedError(f"identity of {op} on {d} input")


def _fill(op: str, input: Tensor, mask, ord=None) -> Tensor:
    if mask is None:
        return input
    return _ops.where(_input_mask(input, mask), input, _identity(op, input, ord))


def _reduce_dtype(input: Tensor, dtype):
    if dtype is not None:
        return dtype
    return _dt.int64 if input.dtype in _SMALL_INTS else input.dtype


def sum(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:  # noqa: A001
    """The sum of the kept elements over ``dim`` (all dims when None); small integers sum to int64."""
    return _ops.sum(_fill("sum", input, mask), list(_canonical_dim(dim, input.dim())), bool(keepdim),
                    dtype=_reduce_dtype(input, dtype))


def prod(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """The product of the kept elements over ``dim``."""
    result = _fill("prod", input, mask).to(_reduce_dtype(input, dtype))
    for d in reversed(_canonical_dim(dim, input.dim())):
        result = _ops.prod(result, d, bool(keepdim))
    return result


def cumsum(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """The running sum along ``dim``, masked-out elements counted as 0."""
    dtype = dtype or input.dtype
    return _ops.cumsum(_fill("sum", input, mask), _canonical_dim(dim, input.dim())[0], dtype=dtype).to(dtype)


def cumprod(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """The running product along ``dim``, masked-out elements counted as 1."""
    dtype = dtype or input.dtype
    return _ops.cumprod(_fill("prod", input, mask), _canonical_dim(dim, input.dim())[0], dtype=dtype).to(dtype)


def amax(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """The largest kept element over ``dim``."""
    filled = _fill("amax", input, mask)
    return _ops.amax(filled, list(_canonical_dim(dim, filled.dim())), bool(keepdim)).to(dtype or input.dtype)


def amin(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """The smallest kept element over ``dim``."""
    filled = _fill("amin", input, mask)
    return _ops.amin(filled, list(_canonical_dim(dim, filled.dim())), bool(keepdim)).to(dtype or input.dtype)


def argmax(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """The index of the largest kept element along ``dim`` (of the flattened input when None)."""
    return _ops.argmax(_fill("argmax", input, mask), dim, bool(keepdim)).to(dtype or input.dtype)


def argmin(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """The index of the smallest kept element along ``dim``."""
    return _ops.argmin(_fill("argmin", input, mask), dim, bool(keepdim)).to(dtype or input.dtype)


def mean(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """The mean of the kept elements over ``dim`` (NaN where none is kept)."""
    source = "Optional" if dtype is not None else "Input"
    dtype = dtype or input.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either a floating point or "
                         f"complex dtype. Got: {dtype}")
    if mask is None:  # the count is the reduced dims' size
        count = math.prod(input.shape[d] for d in _canonical_dim(dim, input.dim())) if input.dim() else 1
        return sum(input, dim, keepdim=keepdim, dtype=dtype) / count
    kept = _input_mask(input, mask)
    count = _ops.sum(kept, list(_canonical_dim(dim, input.dim())), bool(keepdim))
    return sum(input, dim, keepdim=keepdim, dtype=dtype, mask=kept) / count


def median(input: Tensor, dim: int = -1, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The lower median of the kept elements along ``dim`` (torch.masked's: a float result, or an integer one when
    no slice is fully masked out)."""
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.dim())[0]
    is_float = input.dtype.is_floating_point
    values = input if is_float else input.to(_dt.float32)
    output = _ops.nanmedian(_fill("median", values, mask), d, keepdim)[0]
    if is_float:
        return output
    if not bool(_ops.isnan(output).any().item()):
        return output.to(dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")


def logsumexp(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """log(sum(exp)) of the kept elements over ``dim`` (-inf where none is kept)."""
    return _ops.logsumexp(_fill("logsumexp", input, mask), list(_canonical_dim(dim, input.dim())),
                          keepdim).to(dtype or input.dtype)


def logaddexp(input: Tensor, other: Tensor, *, dtype=None, input_mask=None, other_mask=None) -> Tensor:
    """``log(exp(input) + exp(other))`` with each operand's masked-out elements taken as -inf."""
    return _ops.logaddexp(_fill("logaddexp", input, input_mask),
                          _fill("logaddexp", other, other_mask)).to(dtype or input.dtype)


def norm(input: Tensor, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """The ``ord`` vector norm of the kept elements over ``dim``."""
    from .linalg import vector_norm

    return vector_norm(_fill("norm", input, mask, ord), ord, _canonical_dim(dim, input.dim()), bool(keepdim),
                       dtype=dtype or input.dtype)


def _std_var(input: Tensor, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt: bool) -> Tensor:
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    c = 1.0 if unbiased is None or unbiased else 0.0
    if correction is not None:
        c = float(correction)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point or input.dtype.is_complex else _dt.float32
    compute = dtype if dtype.is_floating_point or dtype.is_complex else _dt.float32
    kept = None if mask is None else _input_mask(input, mask)
    ones = _ops.ones(tuple(input.shape), dtype=_dt.int64, device=input.device)
    count = sum(ones if kept is None else kept, dim, keepdim=True)
    mean_ = _ops.div(sum(input, dim, keepdim=True, dtype=dtype, mask=kept), count)
    x = _ops.sub(input, mean_)
    total = sum(x * _ops.conj(x) if x.dtype.is_complex else x * x, dim, keepdim=keepdim, dtype=compute, mask=kept)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if c != 0:
        count = _ops.clamp_min(_ops.sub(count.to(compute.to_real()), c), 0)
    output = _ops.div(total, count).to(dtype)
    return _ops.sqrt(output) if take_sqrt else output


def var(input: Tensor, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None) -> Tensor:
    """The variance of the kept elements over ``dim`` (``correction`` 1 unless given)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input: Tensor, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None) -> Tensor:
    """The standard deviation of the kept elements over ``dim``."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """softmax along ``dim`` over the kept elements (masked-out ones come out 0)."""
    return _ops.softmax(_fill("amax", input, mask), _canonical_dim(dim, input.dim())[0], dtype=dtype or input.dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """log_softmax along ``dim`` over the kept elements (masked-out ones come out -inf)."""
    return _ops.log_softmax(_fill("amax", input, mask), _canonical_dim(dim, input.dim())[0],
                            dtype=dtype or input.dtype)


def softmin(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """softmin along ``dim`` over the kept elements."""
    filled = _fill("amin", input, mask)
    return _ops.softmax(_ops.neg(filled), _canonical_dim(dim, input.dim())[0], dtype=dtype or input.dtype)


def normalize(input: Tensor, ord, dim: int, *, eps: float = 1e-12, dtype=None, mask=None) -> Tensor:
    """``input`` divided by the ``ord`` norm of its kept elements along ``dim`` (at least ``eps``); masked-out
    elements come out 0."""
    dtype = dtype or input.dtype
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _ops.div(_fill("sum", input, mask), _ops.clamp_min(nrm, eps))


def _checked(fn):
    """``fn`` with torch.masked's arguments checked by type first: a clear error naming the function and the value."""
    tensors = ("input", "other") if fn.__name__ == "logaddexp" else ("input",)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        named = dict(zip(tensors, args)) | {k: kwargs[k] for k in tensors if k in kwargs}
        named |= {k: kwargs[k] for k in ("mask", "input_mask", "other_mask") if kwargs.get(k) is not None}
        for name, value in named.items():
            if not isinstance(value, Tensor):
                raise TypeError(f"masked.{fn.__name__}(): argument '{name}' must be Tensor, not {type(value).__name__}")
        return fn(*args, **kwargs)

    return wrapper


for _name in __all__:
    globals()[_name] = _checked(globals()[_name])
del _name
