"""Meta functions for pointwise binary and ternary ops: shape, dtype, strides, and torch's checks.

Every function here validates its arguments and allocates the output with ``new_output`` on the
inputs' device; the CPU (and CUDA) kernels call them first and only fill the result. Binary ops'
``other`` may be a Python scalar: the Scalar overloads share the Tensor overload's kernel.

Note [Pointwise output layout]
The output's shape is the broadcast of the tensor operands and its strides follow the first
operand that already has that shape and a dense layout (``elementwise_strides``), so
``a.t() + b.t()`` stays transposed as it does in torch's TensorIterator.
"""

from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from ...tensor import Tensor
from .common import broadcast_shapes, check, common_device, elementwise_strides, new_output, result_dtype

__all__ = ["pointwise_output", "comparison", "check_scalar_fits", "scalar_type_name", "type_meta_name",
           "not_implemented", "check_floating", "ROUNDING_MODES"]

ROUNDING_MODES = (None, "trunc", "floor")

# c10::ScalarType names (torch's "... dtype Float" messages).
_SCALAR_TYPE_NAMES = {
    dt.float32: "Float", dt.float64: "Double", dt.float16: "Half", dt.bfloat16: "BFloat16",
    dt.int64: "Long", dt.int32: "Int", dt.int16: "Short", dt.int8: "Char", dt.uint8: "Byte",
    dt.bool: "Bool", dt.complex64: "ComplexFloat", dt.complex128: "ComplexDouble",
}
# caffe2::TypeMeta names (torch's "... dtype long int" messages: masked_fill, lerp).
_TYPE_META_NAMES = {
    dt.float32: "float", dt.float64: "double", dt.float16: "c10::Half", dt.bfloat16: "c10::BFloat16",
    dt.int64: "long int", dt.int32: "int", dt.int16: "short int", dt.int8: "signed char",
    dt.uint8: "unsigned char", dt.bool: "bool", dt.complex64: "c10::complex<float>",
    dt.complex128: "c10::complex<double>",
}


def scalar_type_name(d: dt.dtype) -> str:
    """torch's ScalarType spelling of a dtype (``Float``, ``Long``)."""
    return _SCALAR_TYPE_NAMES[d]


def type_meta_name(d: dt.dtype) -> str:
    """torch's TypeMeta spelling of a dtype (``float``, ``long int``, ``c10::Half``)."""
    return _TYPE_META_NAMES[d]


def not_implemented(kernel_name: str, d: dt.dtype) -> NotImplementedError:
    """torch's AT_DISPATCH error: ``"abs_cpu" not implemented for 'Bool'``."""
    return NotImplementedError(f'"{kernel_name}" not implemented for \'{_SCALAR_TYPE_NAMES[d]}\'')


_CUDA_NAMES = {"log_sigmoid": "log_sigmoid_forward_cuda"}  # torch's CUDA kernel names that are not "<op>_cuda"


def check_floating(t: Tensor, kernel: str) -> None:
    """torch's refusal of a non-floating ``t`` by the floating-only kernel ``kernel`` (``"elu_cpu"``/``_cuda``)."""
    if not t.dtype.is_floating_point:
        name = _CUDA_NAMES.get(kernel, f"{kernel}_cuda") if t.device.type == "cuda" else f"{kernel}_cpu"
        raise not_implemented(name, t.dtype)


def pointwise_output(dtype: dt.dtype, *operands) -> Tensor:
    """The output of a pointwise op over ``operands`` (tensors, scalars or None); see the Note."""
    if len(operands) == 2 and operands[0].__class__ is Tensor:  # the common binary call, without the scans
        a, b = operands
        if b.__class__ is Tensor:
            if b._sizes == a._sizes and b.device is a.device:
                return new_output(a._sizes, dtype, a.device, elementwise_strides(a._sizes, operands))
        elif not isinstance(b, Tensor):
            return new_output(a._sizes, dtype, a.device, elementwise_strides(a._sizes, (a,)))
    tensors = tuple(t for t in operands if isinstance(t, Tensor))
    shape, dev = tensors[0]._sizes, tensors[0].device
    if len(tensors) > 1:
        if any(t._sizes != shape for t in tensors):
            shape = broadcast_shapes(*(t._sizes for t in tensors))
        dev = common_device(*tensors)
    return new_output(shape, dtype, dev, elementwise_strides(shape, tensors))


# c10's checked_convert: a Scalar converted to the kernel's C type must fit in it.
_C_TYPE_NAMES = {
    dt.float32: "float", dt.float64: "double", dt.float16: "c10::Half", dt.bfloat16: "c10::BFloat16",
    dt.int64: "int64_t", dt.int32: "int", dt.int16: "int16_t", dt.int8: "int8_t", dt.uint8: "uint8_t",
}
_LIMITS = {d: (int(np.iinfo(d.numpy_dtype).min), int(np.iinfo(d.numpy_dtype).max))
           for d in (dt.int64, dt.int32, dt.int16, dt.int8, dt.uint8)}
_LIMITS.update({d: (-float(ml_dtypes.finfo(d.numpy_dtype).max), float(ml_dtypes.finfo(d.numpy_dtype).max))
                for d in (dt.float64, dt.float32, dt.float16, dt.bfloat16)})


def check_scalar_fits(value, d: dt.dtype) -> None:
    """Raise torch's overflow error when a Scalar argument does not fit ``d`` (bool takes anything).

    As c10's ``overflows``: unsigned types also accept negative integers down to ``-max`` (they wrap),
    floating types accept inf and nan, integer types accept neither; a float value fits an integer type
    when it truncates into it from above (127.9 fills int8 with 127, as torch) but not from below
    (-128.5 does not).
    """
    if value.__class__ is float or value.__class__ is int:  # fast path: a Python number inside the range fits
        lim = _LIMITS.get(d)
        if lim is not None and lim[0] <= value <= lim[1]:
            return
    if d is dt.bool or isinstance(value, (bool, np.bool_)) or d.is_complex:
        return
    if isinstance(value, (complex, np.complexfloating)):  # a real type holds it only with a zero imaginary part
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {_C_TYPE_NAMES[d]} without overflow")
        value = value.real
    lo, hi = _LIMITS[d]
    if isinstance(value, (int, np.integer)):
        value = int(value)
        overflow = value > hi or (value < -hi if d is dt.uint8 else value < lo)
    elif math.isnan(value) or math.isinf(value):
        overflow = not d.is_floating_point
    elif d.is_floating_point:
        overflow = value < lo or value > hi
    else:
        overflow = value < lo or value >= hi + 1
    if overflow:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPE_NAMES[d]} without overflow")


def _opmath(d: dt.dtype) -> dt.dtype:
    """The type a kernel computes ``d`` in (half types in float), which its Scalar arguments must fit."""
    return dt.float32 if d is dt.float16 or d is dt.bfloat16 else d


def _scalar_dtype(x) -> dt.dtype:
    return x.dtype if isinstance(x, Tensor) else dt.scalar_dtype(x)


# ---------------------------------------------------------------------------- arithmetic
def _check_alpha(alpha, d: dt.dtype) -> None:
    if type(alpha) is int:
        if alpha != 1:
            check_scalar_fits(alpha, d)
        return
    check(not isinstance(alpha, (bool, np.bool_)) or d is dt.bool,
          "Boolean alpha only supported for Boolean results.")
    check(d.is_floating_point or d.is_complex or isinstance(alpha, (int, np.integer, np.bool_)),
          "For integral input tensors, argument alpha must not be a floating point number.")
    check(d.is_complex or not isinstance(alpha, (complex, np.complexfloating)),
          "For non-complex input tensors, argument alpha must not be a complex number.")
    check_scalar_fits(alpha, d)


@kernel("Meta")
def add(self, other, alpha=1):
    d = result_dtype(self, other)
    _check_alpha(alpha, d)
    return pointwise_output(d, self, other)


@kernel("Meta")
def sub(self, other, alpha=1):
    if self.dtype is dt.bool or _scalar_dtype(other) is dt.bool:  # torch's TORCH_CHECK_NOT_IMPLEMENTED
        if self.dtype is dt.bool and _scalar_dtype(other) is dt.bool:
            raise NotImplementedError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                                      "Use the `^` or `logical_xor()` operator instead.")
        raise NotImplementedError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    d = result_dtype(self, other)
    _check_alpha(alpha, d)
    return pointwise_output(d, self, other)


@kernel("Meta")
def mul(self, other):
    return pointwise_output(result_dtype(self, other), self, other)


def check_rounding_mode(rounding_mode) -> None:
    check(rounding_mode in ROUNDING_MODES,
          lambda: "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                  f"'{rounding_mode}'")


@kernel("Meta")
def div(self, other, *, rounding_mode=None):
    check_rounding_mode(rounding_mode)
    d = result_dtype(self, other)
    if rounding_mode is None:
        if d.category < dt.FLOATING:
            d = dt.get_default_dtype()  # true division: int / int is float (torch's int-to-float)
    elif d is dt.bool or d.is_complex:
        raise not_implemented(f"div_{rounding_mode}_cpu", d)
    return pointwise_output(d, self, other)


@kernel("Meta")
def floor_divide(self, other):
    return div(self, other, rounding_mode="floor")


@kernel("Meta")
def remainder(self, other):
    d = result_dtype(self, other)
    if d is dt.bool:
        raise not_implemented("remainder_cpu", d)
    return pointwise_output(d, self, other)


def _check_int_pow(base_dtype: dt.dtype, exponent) -> None:
    if (base_dtype.category < dt.FLOATING and isinstance(exponent, (int, np.integer))
            and exponent < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


@kernel("Meta")
def pow(self, exponent):  # noqa: A001 - the op's name
    d = result_dtype(self, exponent)
    if isinstance(exponent, Tensor):
        if d is dt.bool:
            raise not_implemented("pow", d)
    else:
        _check_int_pow(self.dtype, exponent)
        if d not in (dt.float32, dt.float64, dt.bool) and not d.is_complex:
            check_scalar_fits(exponent, d)  # torch's pow converts it to the result's C type there
    return pointwise_output(d, self, exponent)


@kernel("Meta")
def pow_scalar_base(self, exponent):
    d = result_dtype(self, exponent)
    if d is dt.bool:
        raise not_implemented("pow", d)
    return pointwise_output(d, exponent)


@kernel("Meta")
def maximum(self, other):
    return pointwise_output(result_dtype(self, other), self, other)


@kernel("Meta")
def minimum(self, other):
    return pointwise_output(result_dtype(self, other), self, other)


# ---------------------------------------------------------------------------- comparisons, logical
_ORDERINGS = ("lt", "le", "gt", "ge")


def comparison(self, other, name: str | None = None):
    """Comparisons and binary logical ops: the broadcast shape, bool. Complex values have no order: ``lt`` ...
    ``ge`` (``name``) of a real tensor and a complex Scalar raise torch's dispatch error (complex tensors never
    get here, Note [Complex operators])."""
    if name in _ORDERINGS and (isinstance(other, (complex, np.complexfloating))
                               or isinstance(self, (complex, np.complexfloating))):
        t = self if isinstance(self, Tensor) else other
        raise not_implemented(f"{name}_{'cuda' if t.device.type == 'cuda' else 'cpu'}", result_dtype(self, other))
    return pointwise_output(dt.bool, self, other)


def _comparison(name):
    def compare(self, other):
        return comparison(self, other, name)

    compare.__name__ = compare.__qualname__ = name
    return compare


for _name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"):
    kernel("Meta", name=_name)(_comparison(_name))


@kernel("Meta")
def logical_not(self):
    return pointwise_output(dt.bool, self)


# ---------------------------------------------------------------------------- ternary
@kernel("Meta")
def where(condition, self, other):
    if condition.dtype is not dt.bool:
        check(condition.dtype is dt.uint8,
              lambda: "where expected condition to be a boolean tensor, but got a tensor with dtype "
                      f"{scalar_type_name(condition.dtype)}")
        warnings.warn(
            "where received a uint8 condition tensor. This behavior is deprecated and will be removed "
            "in a future version of PyTorch. Use a boolean condition instead.", UserWarning, stacklevel=2,
        )
    d = result_dtype(self, other)
    if _opmath(d) is d and not d.is_complex:  # torch checks scalars against the result type (half takes inf)
        for x in (self, other):
            if not isinstance(x, Tensor):
                check_scalar_fits(x, d)
    return pointwise_output(d, condition, self, other)


# torch's CPU kernels, which have no bool instantiation, by (min given, max given); its CUDA file
# (aten/src/ATen/native/cuda/TensorCompare.cu) dispatches all three as "clamp_scalar_cuda", tensor bounds as
# "clamp_cuda"
_CLAMP_KERNELS = {(True, True): "clamp_scalar_cpu", (True, False): "clamp_min_scalar_cpu",
                  (False, True): "clamp_max_scalar_cpu"}


@kernel("Meta")
def clamp(self, min=None, max=None):  # noqa: A002 - the schema's names
    if min.__class__ is float and max.__class__ is float and self.dtype.category == dt.FLOATING:  # x.clamp(0., 1.)
        check_scalar_fits(min, self.dtype)
        check_scalar_fits(max, self.dtype)
        return pointwise_output(self.dtype, self, None)
    check(min is not None or max is not None, "strided.clamp: At least one of 'min' or 'max' must not be None")
    for bound in (min, max):
        if isinstance(bound, (complex, np.complexfloating)):  # torch: a float tensor takes 1 + 0j, nothing else
            if not self.dtype.is_floating_point:
                raise NotImplementedError("clamp is not supported for complex types")
            check(bound.imag == 0, "value cannot be converted to type double without overflow")
    d = result_dtype(self, min, max)
    cuda = self.device.type == "cuda"
    if not isinstance(min, Tensor) and not isinstance(max, Tensor):
        if d is dt.bool:
            raise not_implemented("clamp_scalar_cuda" if cuda else _CLAMP_KERNELS[min is not None, max is not None], d)
        for bound in (min, max):
            if bound is not None:
                check_scalar_fits(bound, d)
    elif d is dt.bool and min is not None and max is not None:  # one bound alone runs clamp_min / clamp_max
        raise not_implemented("clamp_cuda" if cuda else "clamp_cpu", d)
    return pointwise_output(d, self, min, max)


@kernel("Meta")
def lerp(self, end, weight):
    check(end.dtype is self.dtype,
          lambda: f"expected dtype {type_meta_name(self.dtype)} for `end` but got dtype "
                  f"{type_meta_name(end.dtype)}")
    tensor_weight = isinstance(weight, Tensor)
    if tensor_weight and weight._sizes:
        check(weight.dtype is self.dtype,
              lambda: f"expected dtype {type_meta_name(self.dtype)} for `weight` but got dtype "
                      f"{type_meta_name(weight.dtype)}")
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise not_implemented("lerp_kernel_tensor" if tensor_weight else "lerp_kernel_scalar", self.dtype)
    if not tensor_weight and not self.dtype.is_complex:  # converted to the kernel's opmath type (float / double)
        check_scalar_fits(weight, _opmath(self.dtype))
    return pointwise_output(self.dtype, self, end, weight)


@kernel("Meta")
def addcmul(self, tensor1, tensor2, *, value=1):
    d = result_dtype(self, tensor1, tensor2)
    if d is dt.bool:
        raise not_implemented("addcmul_cpu_out", d)
    check_scalar_fits(value, _opmath(d))
    return pointwise_output(d, self, tensor1, tensor2)


@kernel("Meta")
def addcdiv(self, tensor1, tensor2, *, value=1):
    if tensor1.dtype.category < dt.FLOATING and tensor2.dtype.category < dt.FLOATING:  # complex divides truly
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
            "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
            "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
            "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
            "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
            "dtypes."
        )
    d = result_dtype(self, tensor1, tensor2)
    check_scalar_fits(value, _opmath(d))
    return pointwise_output(d, self, tensor1, tensor2)


@kernel("Meta")
def masked_fill(self, mask, value):
    check(mask.dtype is dt.bool,
          lambda: "masked_fill_ only supports boolean masks, but got mask with dtype "
                  f"{type_meta_name(mask.dtype)}")
    if isinstance(value, Tensor):
        check(not value._sizes,
              lambda: "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                      f"{len(value._sizes)} dimension(s).")
        if value.dtype.is_complex and not self.dtype.is_complex and value.device.type == "cpu":
            check_scalar_fits(complex(value.item()), self.dtype)  # torch reads a CPU value with item()
    else:
        check_scalar_fits(value, self.dtype)
    return pointwise_output(self.dtype, self, mask)
