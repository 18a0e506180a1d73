"""Meta functions for the further math kernels: igamma / igammac and nextafter (floating, same promotion as
hypot), gcd / lcm (integers), frexp (mantissa like ``self``, int32 exponent) and scatter_reduce."""

from __future__ import annotations

from ... import dtypes as dt
from ... import return_types
from ...dispatch.library import kernel
from .common import check, result_dtype
from .indexing import scatter_output
from .pointwise import not_implemented, pointwise_output
from .pointwise_binary_math import _check_other

__all__ = ["SCATTER_REDUCTIONS"]

SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")



def _floating(name):
    def meta(self, other):
        _check_other(name, other)
        d = result_dtype(self, other)
        if not d.is_floating_point:
            raise not_implemented(f"{name}_cpu", d)
        return pointwise_output(d, self, other)

    meta.__name__ = meta.__qualname__ = name
    return kernel("Meta", name=name)(meta)


def _integral(name):
    def meta(self, other):
        _check_other(name, other)
        d = result_dtype(self, other)
        if d.is_floating_point or d is dt.bool:
            raise not_implemented(f"{name}_cpu", d)
        return pointwise_output(d, self, other)

    meta.__name__ = meta.__qualname__ = name
    return kernel("Meta", name=name)(meta)


@kernel("Meta")
def special_zeta(self, other):
    """torch.special.zeta: integers and bool promote to the default float; float16, bfloat16 and complex are
    refused, as torch's kernels (which compute in float64 on the CPU) have none."""
    _check_other("special_zeta", other)
    d = result_dtype(self, other)
    if d.is_complex or d in (dt.float16, dt.bfloat16):
        raise not_implemented("zeta_cpu", d)
    return pointwise_output(d if d.is_floating_point else dt.get_default_dtype(), self, other)


igamma = _floating("igamma")
igammac = _floating("igammac")
nextafter = _floating("nextafter")
gcd = _integral("gcd")
lcm = _integral("lcm")


@kernel("Meta")
def frexp(self):
    check(self.dtype.is_floating_point, "torch.frexp() only supports floating-point dtypes")
    return return_types.frexp((pointwise_output(self.dtype, self), pointwise_output(dt.int32, self)))


@kernel("Meta")
def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    check(reduce in SCATTER_REDUCTIONS,
          f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return scatter_output(self, dim, index, src)
