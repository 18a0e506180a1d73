"""torch's remaining ``_foreach_*`` functions as loops over the per-tensor ops.

Note [Composite foreach]
The ``_foreach_*`` ops strided's optimizers use (add, mul, div, sub, addcmul, addcdiv, lerp, maximum, sqrt,
neg, zero) are YAML ops with fused multi-tensor CUDA kernels (``multi_tensor.cu``). The rest of torch's
family is here, for code written against ``torch._foreach_*`` (torch.optim's foreach paths,
``clip_grad_norm_``-style loops): each applies the per-tensor op to every tensor, so it runs on every backend
and through autograd, one launch per tensor on CUDA rather than one per chunk of tensors. As torch: the
out-of-place forms return a tuple, the in-place ones the list they updated; lists must be non-empty and of
equal lengths; the second operand is a number, a list of numbers, a list of tensors, or one tensor.
(``optim/_foreach.py`` keeps the optimizers' own unchecked loops, Note [Foreach overloads outside the schema].)
"""

from __future__ import annotations

from numbers import Number

from .ops import bound as _ops
from .tensor import Tensor

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
          "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
          "sinh", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "clamp_max", "clamp_min")


def _check_list(tensors, op: str) -> list:
    """``tensors`` as a list: a non-empty list or tuple of tensors (torch's binding and list checks)."""
    if not isinstance(tensors, (list, tuple)) or not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"{op}(): argument 'self' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return list(tensors)


def _others(self: list, other) -> list:
    """The second operand per tensor: a number or one tensor for all, or a list matching ``self``."""
    if isinstance(other, (Number, Tensor)):
        return [other] * len(self)
    if not isinstance(other, (list, tuple)):  # a string or other object is no operand (torch: a TypeError)
        raise TypeError("_foreach_* operand must be a number, a tensor, or a list of numbers or tensors, not "
                        f"{type(other).__name__}")
    other = list(other)
    if other and isinstance(other[0], Tensor):
        if len(other) != len(self):
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(self)} and {len(other)}")
    elif len(other) != len(self):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    return other


def _unary(name: str):
    op = getattr(_ops, name)

    def out_of_place(self):
        return tuple(op(t) for t in _check_list(self, f"_foreach_{name}"))

    def in_place(self):
        for t in _check_list(self, f"_foreach_{name}_"):
            method = getattr(t, name + "_", None)
            method() if method is not None else t.copy_(op(t))
        return self  # the very list (or tuple) given, as torch's binding

    return out_of_place, in_place


def _binary(name: str):
    op = {"maximum": _ops.maximum, "minimum": _ops.minimum}.get(name) or getattr(_ops, name)

    def out_of_place(self, other, **kwargs):
        if isinstance(self, Number) and name == "pow":  # _foreach_pow(2.0, exponents)
            return tuple(op(self, e) for e in _check_list(other, f"_foreach_{name}"))
        self = _check_list(self, f"_foreach_{name}")
        return tuple(op(t, o, **kwargs) for t, o in zip(self, _others(self, other)))

    def in_place(self, other, **kwargs):
        items = _check_list(self, f"_foreach_{name}_")
        for t, o in zip(items, _others(items, other)):
            method = getattr(t, name + "_", None)  # maximum / minimum have no in-place Tensor method
            method(o, **kwargs) if method is not None else t.copy_(op(t, o, **kwargs))
        return self

    return out_of_place, in_place


__all__ = []
for _name in _UNARY:
    for _fn, _suffix in zip(_unary(_name), ("", "_")):
        _fn.__name__ = _fn.__qualname__ = f"_foreach_{_name}{_suffix}"
        globals()[_fn.__name__] = _fn
        __all__.append(_fn.__name__)
for _name in _BINARY:
    for _fn, _suffix in zip(_binary(_name), ("", "_")):
        _fn.__name__ = _fn.__qualname__ = f"_foreach_{_name}{_suffix}"
        globals()[_fn.__name__] = _fn
        __all__.append(_fn.__name__)


def _foreach_addcmul(self, tensor1, tensor2, value=1):
    """``self[i] + value[i] * tensor1[i] * tensor2[i]`` (``value`` a number, a list of numbers or a tensor of them)."""
    self = _check_list(self, "_foreach_addcmul")
    values = value.tolist() if isinstance(value, Tensor) else value
    return tuple(_ops.addcmul(t, a, b, value=v) for t, a, b, v in zip(self, tensor1, tensor2, _others(self, values)))


def _foreach_addcdiv(self, tensor1, tensor2, value=1):
    """``self[i] + value[i] * tensor1[i] / tensor2[i]``."""
    self = _check_list(self, "_foreach_addcdiv")
    values = value.tolist() if isinstance(value, Tensor) else value
    return tuple(_ops.addcdiv(t, a, b, value=v) for t, a, b, v in zip(self, tensor1, tensor2, _others(self, values)))


def _foreach_addcmul_(self, tensor1, tensor2, value=1):
    """In place: ``self[i] += value[i] * tensor1[i] * tensor2[i]``; the forms the YAML's fused op lacks (a list of
    numbers, a tensor of them)."""
    items = _check_list(self, "_foreach_addcmul_")
    values = value.tolist() if isinstance(value, Tensor) else value
    for t, a, b, v in zip(items, tensor1, tensor2, _others(items, values)):
        t.addcmul_(a, b, value=v)
    return self


def _foreach_addcdiv_(self, tensor1, tensor2, value=1):
    """In place: ``self[i] += value[i] * tensor1[i] / tensor2[i]``; one number runs the YAML's fused ScalarList
    op (one launch per chunk of tensors on CUDA), a tensor of numbers the per-tensor loop."""
    items = _check_list(self, "_foreach_addcdiv_")
    if isinstance(value, Number):
        _ops._foreach_addcdiv_(items, list(tensor1), list(tensor2), [value] * len(items))
        return self
    values = value.tolist() if isinstance(value, Tensor) else value
    for t, a, b, v in zip(items, tensor1, tensor2, _others(items, values)):
        t.addcdiv_(a, b, value=v)
    return self


def _foreach_lerp_(self, tensors1, weight):
    """In place: ``self[i] = lerp(self[i], tensors1[i], weight[i])``; the forms the fused op lacks (a list of
    tensors or numbers as the weight)."""
    items = _check_list(self, "_foreach_lerp_")
    for t, e, w in zip(items, _others(items, tensors1), _others(items, weight)):
        t.lerp_(e, w)
    return self


def _foreach_lerp(self, tensors1, weight):
    """``lerp(self[i], tensors1[i], weight[i])`` (``weight`` a number or a list of tensors or numbers)."""
    self = _check_list(self, "_foreach_lerp")
    return tuple(_ops.lerp(t, e, w) for t, e, w in zip(self, _others(self, tensors1), _others(self, weight)))


def _foreach_norm(self, ord=2, dtype=None):  # noqa: A002 - torch's argument name
    """The ``ord``-norm of each tensor (0-dim results; ``dtype`` may only widen, as linalg.vector_norm's)."""
    from .linalg.norms import vector_norm

    if isinstance(ord, Tensor):  # a 0-dim tensor stands for the Scalar, as torch's parser reads it
        if ord.dim() != 0:
            raise TypeError("_foreach_norm(): argument 'ord' (position 2) must be Number, not Tensor")
        ord = ord.item()  # noqa: A001
    return tuple(vector_norm(t, ord, dtype=dtype) for t in _check_list(self, "_foreach_norm"))


def with_fused(packet, loop, in_place: bool):
    """The public ``_foreach_*`` of a name the YAML has: its fused op for the forms it registers, the loop for
    the others (Note [Composite foreach]); a tuple out of place, the given list in place, as torch."""
    def function(*args, **kwargs):
        try:
            op = packet._match(args, kwargs)
        except TypeError:
            return loop(*args, **kwargs)
        result = op(*args, **kwargs)
        return args[0] if in_place else tuple(result)

    function.__name__ = function.__qualname__ = packet.__name__
    function.__doc__ = packet.__doc__
    return function


def _foreach_powsum(self, ord=2, dtype=None):  # noqa: A002
    """``sum(|t| ** ord)`` of each tensor: the norm before its root."""
    out = []
    for t in _check_list(self, "_foreach_powsum"):
        a = _ops.abs(t if dtype is None else t.to(dtype))
        out.append(_ops.sum(_ops.pow(a, ord)))
    return tuple(out)


def _foreach_max(self):
    """The largest element of each tensor."""
    return tuple(_ops.max(t) for t in _check_list(self, "_foreach_max"))


def _foreach_mm(self, mat2):
    """``self[i] @ mat2[i]`` for lists of matrices."""
    self = _check_list(self, "_foreach_mm")
    return tuple(_ops.mm(a, b) for a, b in zip(self, _others(self, mat2)))


def _foreach_clone(self):
    """A copy of each tensor."""
    return tuple(_ops.clone(t) for t in _check_list(self, "_foreach_clone"))


def _foreach_copy_(self, src, non_blocking: bool = False):
    """Copy ``src[i]`` into ``self[i]``; returns ``self``."""
    items = _check_list(self, "_foreach_copy_")
    for t, s in zip(items, _others(items, src)):
        t.copy_(s, non_blocking=non_blocking)
    return self


__all__ += ["_foreach_addcmul", "_foreach_addcdiv", "_foreach_lerp", "_foreach_addcmul_", "_foreach_addcdiv_",
            "_foreach_lerp_", "_foreach_norm", "_foreach_powsum",
            "_foreach_max", "_foreach_mm", "_foreach_clone", "_foreach_copy_"]
