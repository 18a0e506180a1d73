"""CUDA kernels for the further elementwise math on the elementwise engine: ``igamma``, ``igammac``,
``special_zeta``, ``gcd``, ``lcm``, ``nextafter`` and ``frexp`` (Meta functions in ``backends/meta/math_more.py``;
the device functions are the "further math" section of ``elementwise.cuh`` and ``igamma.cuh``).

Note [Part B math compute types]
Each kernel converts its operands to the type the CPU kernel (``backends/cpu/math_more.py``) computes
in, so the two backends round alike: igamma / igammac / special_zeta in float64 for every dtype (the CPU
converts each operand straight to float64, then rounds the result once), nextafter in the result dtype itself (a step
of a float16 is not a step of its float32 opmath), gcd / lcm in the integer result dtype (NumPy's
wrapping), frexp in the opmath type (float32 for 16-bit floats, as the CPU). frexp has two outputs:
two elementwise passes, the mantissa and the int32 exponent.
"""

from __future__ import annotations

from .... import dtypes as dt
from .... import return_types
from ....dispatch.library import kernel
from ...meta import math_more as meta
from ..elementwise import opmath, run

__all__ = ["NAMES", "sample_calls"]

NAMES = ("igamma", "igammac", "special_zeta", "gcd", "lcm", "nextafter")
_EXPRS = {"igamma": "ew_igamma(x0, x1)", "igammac": "ew_igammac(x0, x1)", "special_zeta": "ew_zeta(x0, x1)",
          "gcd": "ew_gcd(x0, x1)",
          "lcm": "ew_lcm(x0, x1)", "nextafter": "ew_nextafter(x0, x1)"}
_F64 = (dt.float64, dt.float64)


def _binary(name: str):
    meta_fn = getattr(meta, name)
    expr = _EXPRS[name]
    in_double = name.startswith("igamma") or name == "special_zeta"

    def binary(self, other):
        out = meta_fn(self, other)
        d = out.dtype
        return run(expr, out, (self, other), _F64 if in_double else (d, d))  # Note [Part B math compute types]

    binary.__name__ = binary.__qualname__ = name
    return kernel("CUDA", name=name)(binary)


for _name in NAMES:
    globals()[_name] = _binary(_name)


@kernel("CUDA")
def frexp(self):
    mantissa, exponent = meta.frexp(self)
    c = (opmath(self.dtype),)
    run("ew_frexp_mantissa(x0)", mantissa, (self,), c)
    run("ew_frexp_exponent(x0)", exponent, (self,), c)
    return return_types.frexp((mantissa, exponent))


def sample_calls(d: dt.dtype):
    """``(kernel, args)`` covering every instantiation of this module for result dtype ``d``: a same-dtype
    pair, an int64 (or float64) partner and a 0-dim CPU partner (for ``pointwise_instantiations``)."""
    from .... import factories as f

    def t(x=d):
        return f.ones(3, dtype=x)

    g = globals()
    partner = dt.float64 if d.is_floating_point else dt.int64
    for name in NAMES:
        for other in (t(), t(partner), f.tensor(2, dtype=d)):
            yield g[name], (t(), other)
        yield g[name], (t(dt.int64), t())
    yield frexp, (t(),)
