"""Meta functions for binary math functions: atan2, copysign, xlogy (integers promote to the default
float), hypot, logaddexp, logaddexp2 (floating only, as torch), fmod (remainder's dtypes), fmax,
fmin (any dtype)."""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from ...tensor import Tensor
from .common import result_dtype
from .pointwise import not_implemented, pointwise_output

__all__ = ["FLOAT_PROMOTING", "FLOAT_ONLY"]

FLOAT_PROMOTING = ("atan2", "copysign", "xlogy")
FLOAT_ONLY = ("hypot", "logaddexp", "logaddexp2")
_COMPLEX_TOO = ("logaddexp",)  # torch's complex logaddexp (Note [Complex log-sum-exp])


def _check_other(name: str, other) -> None:
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")


def _float_promoting(name):
    def meta(self, other):
        _check_other(name, other)
        d = result_dtype(self, other)
        return pointwise_output(d if d.is_floating_point else dt.get_default_dtype(), self, other)

    meta.__name__ = meta.__qualname__ = name
    return meta


def _float_only(name):
    def meta(self, other):
        _check_other(name, other)
        d = result_dtype(self, other)
        if not (d.is_floating_point or (d.is_complex and name in _COMPLEX_TOO)):
            raise not_implemented(f"{name}_cpu", d)
        return pointwise_output(d, self, other)

    meta.__name__ = meta.__qualname__ = name
    return meta


for _name in FLOAT_PROMOTING:
    globals()[_name] = kernel("Meta", name=_name)(_float_promoting(_name))
for _name in FLOAT_ONLY:
    globals()[_name] = kernel("Meta", name=_name)(_float_only(_name))


@kernel("Meta")
def fmod(self, other):
    d = result_dtype(self, other)
    if d is dt.bool:
        raise not_implemented("fmod_cpu", d)
    return pointwise_output(d, self, other)


@kernel("Meta")
def fmax(self, other):
    _check_other("fmax", other)
    return pointwise_output(result_dtype(self, other), self, other)


@kernel("Meta")
def fmin(self, other):
    _check_other("fmin", other)
    return pointwise_output(result_dtype(self, other), self, other)
