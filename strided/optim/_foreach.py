"""The ``_foreach_*`` overloads the newer optimizers use that ``native_functions.yaml`` lacks.

Note [Foreach overloads outside the schema]
The foreach implementations of RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, ASGD, Rprop and Adafactor
follow torch's ``_multi_tensor_*`` functions op for op. Where strided registers the overload, they call it
(``ops._foreach_*``, one multi-tensor launch per group on CUDA). The overloads below are not in the
schema yet, so each runs as the loop over the per-tensor op that torch's foreach slow path runs
(Note [Foreach slow path]): same numbers, one launch per tensor. Registering the overload in the YAML
(with a CUDA multi-tensor kernel) and calling it here is the whole change needed to speed them up.
"""

from __future__ import annotations

from .. import dtypes as dt
from ..ops import bound as ops
from .optimizer import add_to_steps

__all__ = ["scalar_dtype", "bump_steps", "mul_list", "mul_list_", "neg_", "mul_scalar_list_", "mul_scalar_list",
           "div_list_", "sqrt_", "abs_", "abs", "sign_", "addcmul", "addcmul_list_", "addcdiv_", "sub_list",
           "reciprocal_", "copy_", "add_scalar_list_", "lerp_scalar_list_", "clamp_min_", "rsqrt_"]


def scalar_dtype():
    """torch's ``_get_scalar_dtype()``: float64 when that is the default dtype, else float32."""
    return dt.float64 if dt.get_default_dtype() is dt.float64 else dt.float32


def bump_steps(steps) -> list[float]:
    """``steps += 1`` and the new values as floats (torch's ``_get_value`` after the bump)."""
    values = add_to_steps(steps, 1.0)
    return values if values is not None else [float(s.item()) for s in steps]


def mul_list(xs, ys) -> list:
    """``_foreach_mul.List``."""
    return [x.mul(y) for x, y in zip(xs, ys)]


def neg_(xs) -> None:
    """``_foreach_neg_``."""
    for x in xs:
        x.neg_()


def mul_list_(xs, ys) -> None:
    """``_foreach_mul_.List``."""
    for x, y in zip(xs, ys):
        x.mul_(y)


def mul_scalar_list_(xs, scalars) -> None:
    """``_foreach_mul_.ScalarList``."""
    for x, s in zip(xs, scalars):
        x.mul_(s)


def mul_scalar_list(xs, scalars) -> list:
    """``_foreach_mul.ScalarList``."""
    return [x.mul(s) for x, s in zip(xs, scalars)]


def div_list_(xs, ys) -> None:
    """``_foreach_div_.List``."""
    for x, y in zip(xs, ys):
        x.div_(y)


def sqrt_(xs) -> None:
    """``_foreach_sqrt_``."""
    for x in xs:
        x.sqrt_()


def abs_(xs) -> None:
    """``_foreach_abs_``."""
    for x in xs:
        x.abs_()


def abs(xs) -> list:  # noqa: A001 - torch's name
    """``_foreach_abs``."""
    return [x.abs() for x in xs]


def sign_(xs) -> None:
    """``_foreach_sign_``."""
    for x in xs:
        x.sign_()


def addcmul(xs, t1, t2, value) -> list:
    """``_foreach_addcmul.Scalar``."""
    return [x.addcmul(a, b, value=value) for x, a, b in zip(xs, t1, t2)]


def addcmul_list_(xs, t1, t2, value=1) -> None:
    """``_foreach_addcmul_.Scalar`` where ``t2`` may hold 0-dim tensors of another dtype (ASGD's etas
    and mus): per tensor, as the multi-tensor kernel neither broadcasts nor mixes dtypes."""
    for x, a, b in zip(xs, t1, t2):
        x.addcmul_(a, b, value=value)


def addcdiv_(xs, t1, t2, value=1) -> None:
    """``_foreach_addcdiv_.Scalar``, through the registered ScalarList overload."""
    ops._foreach_addcdiv_.ScalarList(xs, t1, t2, [value] * len(xs))


def sub_list(xs, ys) -> list:
    """``_foreach_sub.List``, through the registered ``_foreach_add.List`` with alpha=-1 (exact)."""
    return ops._foreach_add.List(xs, ys, alpha=-1)


def reciprocal_(xs) -> None:
    """``_foreach_reciprocal_``."""
    for x in xs:
        x.reciprocal_()


def copy_(xs, srcs) -> None:
    """``_foreach_copy_``."""
    for x, s in zip(xs, srcs):
        x.copy_(s)


def add_scalar_list_(xs, scalars) -> None:
    """``_foreach_add_.ScalarList``."""
    for x, s in zip(xs, scalars):
        x.add_(s)


def lerp_scalar_list_(xs, ends, weights) -> None:
    """``_foreach_lerp_.ScalarList``."""
    for x, e, w in zip(xs, ends, weights):
        x.lerp_(e, w)


def clamp_min_(xs, value) -> None:
    """``_foreach_clamp_min_.Scalar``."""
    for x in xs:
        x.clamp_(min=value)


def rsqrt_(xs) -> None:
    """``_foreach_rsqrt_``."""
    for x in xs:
        x.rsqrt_()
