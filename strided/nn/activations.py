"""Activation functions of ``strided.nn.functional`` (and ``rms_norm``), composed of existing operators.

Each follows torch.nn.functional's signature, defaults, checks and messages, and is differentiable
through the operators it calls (no derivative formula of its own; hardtanh / relu6 and leaky_relu call their
operators, Note [Functional operators]). ``inplace=True`` computes the
result out of place and copies it into the input (``copy_``), which is what autograd records.

Note [Composed activation gradients]
The compositions are chosen so that values *and* gradients equal torch's kernels, at the edges too:

* torch's hardsigmoid passes the gradient only strictly inside (-3, 3), while ``clamp`` passes it on
  the closed interval. The inside is computed from the input and the saturated part from a clamped
  *detached* input, joined with ``where`` (``_saturate``).
* elu-family: ``expm1`` sees ``where(x > 0, 0, x)``, so a large positive x neither overflows nor
  sends ``0 * inf = nan`` into the gradient through the branch ``where`` did not pick.
* logsigmoid is ``minimum(x, 0) - log1p(exp(-|x|))``: stable, and ``minimum``'s half gradient at a
  tie gives torch's 0.5 at x = 0.
* hardswish is torch's ``x * clamp(x + 3, 0, 6) / 6`` with that clamp saturated as above, so the
  gradient is torch's 0 at x = -3 and 1 at x = 3.

One deliberate difference: torch's float64 hardsigmoid gradient multiplies by the float literal 1/6
(0.16666667163...); here it is the double 1/6 (a relative difference of 3e-8).
"""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from ..backends.meta.pointwise import check_scalar_fits
from ..backends.meta.reductions import type_name
from ..ops import bound as ops
from ..ops.complex_support import refuse_complex
from ..tensor import Tensor
from ..type_info import finfo

__all__ = [
    "relu_",
    "leaky_relu",
    "leaky_relu_",
    "prelu",
    "rrelu",
    "rrelu_",
    "elu",
    "elu_",
    "selu",
    "selu_",
    "celu",
    "celu_",
    "logsigmoid",
    "hardtanh",
    "hardtanh_",
    "relu6",
    "hardsigmoid",
    "hardswish",
    "mish",
    "softsign",
    "tanhshrink",
    "glu",
    "softmin",
    "gumbel_softmax",
    "threshold",
    "threshold_",
    "rms_norm",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


_CUDA_KERNEL_NAMES = {"log_sigmoid": "log_sigmoid_forward_cuda"}  # torch's CUDA names that are not "<op>_cuda"


def _check_float(input: Tensor, kernel: str) -> None:
    if not input.dtype.is_floating_point:
        cuda = input.device.type == "cuda"
        name = _CUDA_KERNEL_NAMES.get(kernel, f"{kernel}_cuda") if cuda else f"{kernel}_cpu"
        raise NotImplementedError(f"\"{name}\" not implemented for '{type_name(input.dtype)}'")


def _result(input: Tensor, out: Tensor, inplace: bool) -> Tensor:
    return input.copy_(out) if inplace else out


def _operand(input: Tensor, inplace: bool) -> Tensor:
    """The input to compute from when the composition saves it for backward: a copy if it is about to be
    overwritten in place while autograd records (else backward would find it modified)."""
    return input.clone() if inplace and input.requires_grad else input


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _saturate(input: Tensor, lo: float, hi: float, fn) -> Tensor:
    """``fn(clamp(input, lo, hi))`` whose gradient flows only where ``lo < input < hi``
    (Note [Composed activation gradients])."""
    inside = ops.logical_and(ops.gt(input, lo), ops.lt(input, hi))
    return ops.where(inside, fn(input), fn(ops.clamp(input.detach(), lo, hi)))


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, else ``negative_slope * x``."""
    _check_float(input, "leaky_relu")
    if inplace:  # Note [Functional operators]
        return ops.leaky_relu_(input, negative_slope)
    return ops.leaky_relu(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def relu_(input: Tensor) -> Tensor:
    """``relu`` in place (torch's ``F.relu_``)."""
    return ops.relu_(input)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where ``x > 0``, else ``weight * x``; ``weight`` has one element or one per channel (dim 1)."""
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' (position 2) must be Tensor, not {type(weight).__name__}")
    _check_float(input, "prelu")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {type_name(input.dtype)} and "
                           f"{type_name(weight.dtype)}")
    nd = input.dim()
    if weight.numel() != 1:
        if nd == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if nd > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if nd != weight.dim():
        weight = ops.reshape(weight, [weight.numel() if i == 1 else 1 for i in range(nd)])
    return ops.where(ops.gt(input, 0), input, weight * input)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: when training, each element <= 0 is scaled by its own draw from U(lower, upper)
    (the gradient is that slope); otherwise ``leaky_relu`` with slope ``(lower + upper) / 2``."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        _check_float(input, "leaky_relu")
        return leaky_relu(input, (lower + upper) / 2, inplace)
    _check_float(input, "rrelu_with_noise_out")
    slopes = ops.uniform_(ops.empty_like(input), lower, upper)
    noise = ops.where(ops.le(input, 0), slopes, 1.0)
    return ops.mul_(input, noise) if inplace else input * noise


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


def _elu(input: Tensor, alpha: float, scale: float, input_scale: float, inplace: bool) -> Tensor:
    """torch's ``elu(x, alpha, scale, input_scale)``: ``scale * x`` for x > 0, else
    ``alpha * scale * expm1(input_scale * x)``."""
    _check_float(input, "elu")
    pos = ops.gt(input, 0)
    neg = ops.where(pos, 0.0, input)
    if input_scale != 1.0:
        neg = neg * input_scale
    out = ops.where(pos, input * scale if scale != 1.0 else input, ops.expm1(neg) * (alpha * scale))
    return _result(input, out, inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for x > 0, else ``alpha * (exp(x) - 1)``."""
    return _elu(input, alpha, 1.0, 1.0, inplace)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalizing constants."""
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _elu(input, alpha, 1.0, 1.0 / alpha, inplace)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably as ``min(x, 0) - log1p(exp(-|x|))``."""
    _check_float(input, "log_sigmoid")
    zero = ops.zeros((), dtype=input.dtype, device=input.device)
    return ops.minimum(input, zero) - ops.log1p(ops.exp(-input.abs()))


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``clamp(x, min_val, max_val)``; the gradient is zero outside the open interval."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is _dt.bool:
        raise NotImplementedError("Bool inputs not supported for hardtanh")
    if input.dtype is _dt.uint8 and (min_val < 0 or max_val < 0):  # a negative bound would wrap around
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if input.dtype.is_floating_point:
        if inplace:  # Note [Functional operators]
            return ops.hardtanh_(input, min_val, max_val)
        return ops.hardtanh(input, min_val, max_val)
    # integers: torch converts the bounds to the integer type (truncation)
    return _result(input, ops.clamp(input, int(min_val), int(max_val)), inplace)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)`` (``hardtanh(x, 0, 6)``)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``clamp(x + 3, 0, 6) / 6``; the gradient is 1/6 inside (-3, 3), else zero."""
    _check_float(input, "hardsigmoid")
    return _result(input, _saturate(input, -3.0, 3.0, lambda x: (x + 3.0) / 6.0), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * clamp(x + 3, 0, 6) / 6``; the gradient is 0 for x <= -3 and 1 for x >= 3."""
    _check_float(input, "hardswish")
    x = _operand(input, inplace)
    return _result(input, x * _saturate(x, -3.0, 3.0, lambda v: v + 3.0) / 6.0, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    _check_float(input, "mish")
    x = _operand(input, inplace)
    return _result(input, x * ops.tanh(ops.softplus(x)), inplace)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return input - input.tanh()


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: ``a * sigmoid(b)`` where ``a, b`` are the halves of ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.size(dim)
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {n}")
    _check_float(input, "glu")
    a, b = input.chunk(2, dim)
    return a * ops.sigmoid(b)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """A sample from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with g ~ Gumbel(0, 1);
    ``hard=True`` returns the one-hot of its argmax with the soft sample's gradient (straight through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    # -log(E) with E ~ Exp(1) = -log(U), U ~ U[0, 1): U = 0 gives g = -inf (probability 0), never a NaN
    gumbels = -ops.log(-ops.log(ops.rand_like(logits)))
    y_soft = ops.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = ops.argmax(y_soft, dim, True)
    y_hard = ops.scatter(ops.zeros_like(logits), dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-input, dim)``; ``dtype`` casts the input first."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return ops.softmax(-input, dim, dtype)


def _threshold(input: Tensor, limit: float, value: float, inplace: bool) -> Tensor:
    refuse_complex(input, "threshold_cpu", "threshold_cuda")
    if input.dtype is _dt.bool:
        raise NotImplementedError(f"\"threshold_{'cuda' if input.device.type == 'cuda' else 'cpu'}\" not implemented "
                                  "for 'Bool'")
    # torch's threshold kernel converts the threshold to its compute type and the value to the input's type
    check_scalar_fits(limit, _dt.float32 if input.dtype in (_dt.float16, _dt.bfloat16) else input.dtype)
    check_scalar_fits(value, input.dtype)
    out = ops.where(ops.le(input, limit), value, input)
    if out.dtype is not input.dtype:  # an integer input keeps its type (value truncated, as torch)
        out = out.to(input.dtype)
    return _result(input, out, inplace)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where ``x <= threshold``, else ``x``."""
    return _threshold(input, threshold, value, inplace)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _threshold(input, threshold, value, True)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims.

    As torch: half inputs are computed in float32 (and the weight cast to it), the result has the
    input's dtype, and ``eps=None`` means the machine epsilon of that computation type.
    """
    if not isinstance(normalized_shape, (list, tuple)):
        raise TypeError(
            "rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
            f"{type(normalized_shape).__name__}"
        )
    shape = [int(s) for s in normalized_shape]
    k = len(shape)
    if k == 0:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
            "element, but got normalized_shape = []"
        )
    if weight is not None and list(weight.shape) != shape:
        raise RuntimeError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {shape}"
        )
    if input.dim() < k:
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {input.dim()}")
    if list(input.shape[input.dim() - k :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={shape}, expected input with shape [*{', '.join(map(str, shape))}"
            f"], but got input of size{list(input.shape)}"
        )
    # complex: x / sqrt(mean(x ** 2) + eps), the square complex, eps the real part's (as torch)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        kernel = "LayerNormKernelImpl" if input.device.type == "cuda" else "rms_norm"  # torch 2.11's CUDA: fused
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(input.dtype)}'")
    opmath = _dt.float32 if input.dtype in (_dt.float16, _dt.bfloat16) else input.dtype
    x = input if input.dtype is opmath else input.to(opmath)
    if eps is None:
        eps = finfo(opmath.to_real() if opmath.is_complex else opmath).eps
    out = x * ops.rsqrt(x.pow(2).mean(list(range(-k, 0)), keepdim=True) + eps)
    if weight is not None:
        out = out * (weight if weight.dtype is opmath else weight.to(opmath))
    return out if out.dtype is input.dtype else out.to(input.dtype)


from ..amp.composed_functions import wrap_native as _wrap_native  # noqa: E402

# torch's prelu is one kernel on both autocast lists (lower precision): Note [Autocast around composed functions]
_wrap_native(globals(), ("prelu",), low=("prelu",))
