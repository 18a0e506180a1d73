"""Activation functions of ``strided.nn.functional`` (and ``rms_norm``).

Each follows torch.nn.functional's signature, defaults, checks and messages. Those torch implements as one
operator with its own autograd node call that operator (hardtanh / relu6, leaky_relu, elu / selu, celu,
hardsigmoid, hardswish, mish, threshold, log_sigmoid, glu: ``ops/composite/nn_activations.py``, Note [Functional
operators]), ``inplace=True`` calling its in-place form; the others (prelu, rrelu, softsign, tanhshrink, softmin,
gumbel_softmax, rms_norm) are composed of operators here and differentiate through them, as torch's Python
functions do.
"""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from ..backends.meta.pointwise import check_floating
from ..backends.meta.reductions import type_name
from ..dispatch.argument_checks import arg_tensor, check_args
from ..ops import bound as ops
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


_check_float = check_floating


def _result(input: Tensor, out: Tensor, inplace: bool) -> Tensor:
    return input.copy_(out) if inplace else out


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, else ``negative_slope * x``."""
    check_args("leaky_relu", ("input", 1, input, "Tensor"))
    _check_float(input, "leaky_relu")
    if inplace:  # Note [Functional operators]
        return ops.leaky_relu_(input, negative_slope)
    return ops.leaky_relu(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    check_args("leaky_relu_", ("input", 1, input, "Tensor"))
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
    return ops._prelu_kernel(input, weight)  # Note [Functional operators]: node PreluKernelBackward0


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: when training, each element <= 0 is scaled by its own draw from U(lower, upper)
    (the gradient is that slope); otherwise ``leaky_relu`` with slope ``(lower + upper) / 2``."""
    arg_tensor("rrelu", "input", 1, input)
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


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for x > 0, else ``alpha * (exp(x) - 1)``."""
    if inplace:  # Note [Functional operators]
        return ops.elu_(input, alpha)
    return ops.elu(input, alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalizing constants (torch's ``elu`` op, node EluBackward0)."""
    if inplace:
        return ops.elu_(input, _SELU_ALPHA, _SELU_SCALE)
    return ops.elu(input, _SELU_ALPHA, _SELU_SCALE)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if inplace:
        return ops.celu_(input, alpha)
    return ops.celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably as ``min(x, 0) - log1p(exp(-|x|))`` (the ``log_sigmoid`` op)."""
    return ops.log_sigmoid(input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``clamp(x, min_val, max_val)``; the gradient is zero outside the open interval."""
    check_args("hardtanh", ("input", 1, input, "Tensor"))
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is _dt.bool:
        raise NotImplementedError("Bool inputs not supported for hardtanh")
    if input.dtype is _dt.uint8 and (int(min_val) < 0 or int(max_val) < 0):  # torch checks the truncated bounds
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if input.dtype.is_floating_point:
        if inplace:  # Note [Functional operators]
            return ops.hardtanh_(input, min_val, max_val)
        return ops.hardtanh(input, min_val, max_val)
    # integers: torch converts the bounds to the integer type (truncation)
    return _result(input, ops.clamp(input, int(min_val), int(max_val)), inplace)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    check_args("hardtanh_", ("input", 1, input, "Tensor"))
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)`` (``hardtanh(x, 0, 6)``)."""
    check_args("relu6", ("input", 1, input, "Tensor"))
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``clamp(x + 3, 0, 6) / 6``; the gradient is 1/6 inside (-3, 3), else zero."""
    return ops.hardsigmoid_(input) if inplace else ops.hardsigmoid(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * clamp(x + 3, 0, 6) / 6``; the gradient is 0 below -3 and 1 above 3."""
    return ops.hardswish_(input) if inplace else ops.hardswish(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    return ops.mish_(input) if inplace else ops.mish(input)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    check_args("softsign", ("input", 1, input, "Tensor"))
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    check_args("tanhshrink", ("input", 1, input, "Tensor"))
    return input - input.tanh()


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: ``a * sigmoid(b)`` where ``a, b`` are the halves of ``input`` along ``dim``."""
    return ops.glu(input, dim)


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
    check_args("softmin", ("input", 1, input, "Tensor"))
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return ops.softmax(-input, dim, dtype)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where ``x <= threshold``, else ``x``."""
    return ops.threshold_(input, threshold, value) if inplace else ops.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return ops.threshold_(input, threshold, value)


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
