"""Meta functions of the FFT ops ``_fft_r2c``, ``_fft_c2r``, ``_fft_c2c`` (torch's SpectralOps): output sizes
and dtypes, and the checks torch's CPU kernels make, in its words (Note [FFT ops]).

Note [FFT ops]
The three ops are torch's: the transform over ``dim`` of a real input to its complex spectrum (``onesided``
keeps the ``n // 2 + 1`` non-redundant entries of the last dim), of a Hermitian (onesided) spectrum back to
a real signal of ``last_dim_size`` entries in the last dim (always the inverse direction: ``hfft`` conjugates
first), and of a complex input in either direction. ``normalization`` is torch's fft_norm_mode: 0 no scale,
1 ``1 / sqrt(n)``, 2 ``1 / n``, ``n`` the product of the signal's sizes (the output's for ``_fft_c2r``).
The ``strided.fft`` front-ends (strided/fft.py) choose the mode from ``norm`` and the direction.
strided has no complex32, so half and bfloat16 inputs are refused here (torch's Meta accepts half).
"""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from .common import check, new_output, wrap_dim
from .pointwise import scalar_type_name

__all__ = ["fft_dims", "r2c_sizes", "c2r_sizes", "check_complex"]

_REAL = (dt.float32, dt.float64)


def fft_dims(self, dim, op: str) -> tuple:
    """``dim`` wrapped for ``self``, non-empty for ``_fft_r2c`` / ``_fft_c2r``, without repeats."""
    dims = tuple(wrap_dim(d, self.dim()) for d in dim)
    check(len(set(dims)) == len(dims), "FFT dims must be unique")
    check(dims or op == "_fft_c2c", lambda: f"{op} must transform at least one axis")
    empty = next((self._sizes[d] for d in dims if self._sizes[d] < 1), None)
    check(empty is None or op == "_fft_c2r", lambda: f"Invalid number of data points ({empty}) specified")
    return dims


def _check_real(self) -> None:
    d = self.dtype
    if d in (dt.float16, dt.bfloat16):
        raise NotImplementedError(f"Unsupported dtype {scalar_type_name(d)}")
    if d not in _REAL:
        raise TypeError(f"Only supports floating-point dtypes, but found: {scalar_type_name(d)}")


def check_complex(self) -> None:
    check(self.dtype.is_complex,
          lambda: f"Only supports complex dtypes, but found: {scalar_type_name(self.dtype)}")


def r2c_sizes(self, dim, onesided) -> tuple:
    """torch's checks of ``_fft_r2c``; (the wrapped dims, the output's sizes)."""
    _check_real(self)
    dims = fft_dims(self, dim, "_fft_r2c")
    sizes = list(self._sizes)
    if onesided:
        sizes[dims[-1]] = sizes[dims[-1]] // 2 + 1
    return dims, tuple(sizes)


@kernel("Meta")
def _fft_r2c(self, dim, normalization, onesided):
    _, sizes = r2c_sizes(self, dim, onesided)
    return new_output(sizes, self.dtype.to_complex(), self.device)


def c2r_sizes(self, dim, last_dim_size) -> tuple:
    """torch's checks of ``_fft_c2r``; (the wrapped dims, the output's sizes)."""
    check_complex(self)
    dims = fft_dims(self, dim, "_fft_c2r")
    n = last_dim_size
    check(n >= 1, lambda: f"Invalid number of data points ({n}) specified")
    have = self._sizes[dims[-1]]
    check(have in (n // 2 + 1, n),  # torch's CPU kernel asserts this; its front-ends resize the input first
          lambda: f"_fft_c2r expects {n // 2 + 1} (or {n}) entries in dim {dims[-1]} for last_dim_size={n}, "
                  f"but got {have}")
    check(all(self._sizes[d] > 0 for d in dims[:-1]), "Invalid number of data points (0) specified")
    sizes = list(self._sizes)
    sizes[dims[-1]] = n
    return dims, tuple(sizes)


@kernel("Meta")
def _fft_c2r(self, dim, normalization, last_dim_size):
    _, sizes = c2r_sizes(self, dim, last_dim_size)
    return new_output(sizes, self.dtype.to_real(), self.device)


@kernel("Meta")
def _fft_c2c(self, dim, normalization, forward):
    check_complex(self)
    fft_dims(self, dim, "_fft_c2c")
    return new_output(self._sizes, self.dtype, self.device)
