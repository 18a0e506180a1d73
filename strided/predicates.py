"""torch's top-level predicates and queries: ``is_tensor``, ``is_floating_point``, ``is_nonzero``, ``numel``,
``typename``... (the Tensor methods of the same names are in tensor_extras.py)."""

from __future__ import annotations

from .dispatch.argument_checks import arg_tensor, check_args
from .storage import UntypedStorage
from .tensor import Tensor

__all__ = ["is_tensor", "is_storage", "is_floating_point", "is_complex", "is_nonzero", "is_same_size", "is_signed",
           "numel", "typename", "is_conj", "is_neg", "is_inference", "resize_as_"]

# torch's legacy tensor type names (``torch.FloatTensor``), by dtype name
_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
               "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def is_tensor(obj) -> bool:
    """True if ``obj`` is a strided Tensor."""
    return isinstance(obj, Tensor)


def is_storage(obj) -> bool:
    """True if ``obj`` is a storage."""
    return isinstance(obj, UntypedStorage)


def is_floating_point(input: Tensor) -> bool:  # noqa: A002 - torch's argument name
    """True if ``input``'s dtype is a floating-point dtype."""
    if not isinstance(input, Tensor):
        arg_tensor("is_floating_point", "input", 1, input)
    return input.is_floating_point()


def is_complex(input: Tensor) -> bool:  # noqa: A002
    """True if ``input``'s dtype is complex (complex64 or complex128)."""
    if not isinstance(input, Tensor):
        arg_tensor("is_complex", "input", 1, input)
    return input.is_complex()


def is_nonzero(input: Tensor) -> bool:  # noqa: A002
    """The truth value of a one-element tensor (torch's errors for none or several elements)."""
    if not isinstance(input, Tensor):
        arg_tensor("is_nonzero", "input", 1, input)
    return input.is_nonzero()


def is_same_size(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """True if both tensors have the same shape."""
    check_args("is_same_size", ("input", 1, input, "Tensor"), ("other", 2, other, "Tensor"))
    return input.is_same_size(other)


def is_signed(input: Tensor) -> bool:  # noqa: A002
    """True if ``input``'s dtype is signed."""
    if not isinstance(input, Tensor):
        arg_tensor("is_signed", "input", 1, input)
    return input.is_signed()


def numel(input: Tensor) -> int:  # noqa: A002
    """The number of elements of ``input``."""
    if not isinstance(input, Tensor):
        arg_tensor("numel", "input", 1, input)
    return input.numel()


def typename(obj) -> str:
    """torch's type name: ``torch.FloatTensor`` (``torch.cuda.FloatTensor``) for tensors, else the class name."""
    if isinstance(obj, Tensor):
        prefix = "torch." if obj.device.type == "cpu" else f"torch.{obj.device.type}."
        return f"{prefix}{_TYPE_NAMES[obj.dtype.name]}Tensor"
    module = getattr(type(obj), "__module__", "") or ""
    name = type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


def is_conj(input: Tensor) -> bool:  # noqa: A002
    """Whether ``input``'s conjugate bit is set (never: Note [No conjugate bit] in ops/composite/complex_ops.py)."""
    if not isinstance(input, Tensor):
        arg_tensor("is_conj", "input", 1, input)
    return input.is_conj()


def is_neg(input: Tensor) -> bool:  # noqa: A002
    """Whether ``input``'s negative bit is set (never: Note [No conjugate bit] in ops/composite/complex_ops.py)."""
    if not isinstance(input, Tensor):
        arg_tensor("is_neg", "input", 1, input)
    return input.is_neg()


def is_inference(input: Tensor) -> bool:  # noqa: A002
    """Whether ``input`` is an inference tensor (Note [Inference tensors] in storage.py)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.is_inference()


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:  # noqa: A002
    """``input.resize_as_(the_template)``."""
    check_args("resize_as_", ("input", 1, input, "Tensor"), ("the_template", 2, the_template, "Tensor"))
    return input.resize_as_(the_template, memory_format=memory_format)
