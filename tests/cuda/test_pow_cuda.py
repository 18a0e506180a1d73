"""pow's fast paths on CUDA (Note [CUDA pow fast paths] in strided/backends/cuda/kernels/pointwise_ops.py): the
exponents torch's CUDA pow runs as a fill, a copy, sqrt / rsqrt / reciprocal or products, against strided's own
CUDA kernels for those forms (bit for bit: the same expressions), the CPU backend (which follows torch's CPU) and,
where torch is installed with CUDA, torch's CUDA kernels."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

INF, NAN = float("inf"), float("nan")
COMPLEX_VALUES = [complex(INF, 0), complex(-INF, 0), complex(NAN, 0), complex(0, INF), complex(0, 0),
                  complex(1e30, 1e30), complex(-2, 3), complex(0.5, -0.25), complex(3e18, -4e18), complex(1e-20, 1e-20)]
REAL_VALUES = [INF, -INF, NAN, 0.0, -0.0, 1e30, -2.5, 3.0, 0.1, -1e-20, 1e20]


def _bits(t: st.Tensor) -> np.ndarray:
    """The values as a NumPy array with every nan made the same nan (payloads and signs of nan differ by path)."""
    t = t.cpu()
    a = (t.float() if t.dtype is st.bfloat16 else t).numpy().copy()  # bfloat16 exactly, as float32 (nan kind)
    if a.dtype.kind == "c":
        a.real[np.isnan(a.real)] = np.nan
        a.imag[np.isnan(a.imag)] = np.nan
    elif a.dtype.kind == "f":
        a[np.isnan(a)] = np.nan
    return a


def _same(got: st.Tensor, want: st.Tensor) -> None:
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("dtype", [st.complex64, st.complex128])
def test_complex_square_is_a_product(dtype):
    z = st.tensor(COMPLEX_VALUES, dtype=dtype, device="cuda")
    for e in (2, 2.0, 2 + 0j, st.tensor(2 + 0j)):
        _same(z.pow(e), z * z)
    _same(st.square(z), z * z)
    # at the infinities the product gives torch's values (the CPU backend's), where exp(2 log z) gave nan + nan i
    cpu = st.tensor(COMPLEX_VALUES, dtype=dtype).pow(2)
    _assert_like(_bits(z.pow(2)), _bits(cpu), 1e-6 if dtype is st.complex64 else 1e-15)


@pytest.mark.parametrize("dtype", [st.complex64, st.complex128, st.float32, st.float64, st.float16, st.bfloat16])
def test_exponent_zero_fills_and_one_copies(dtype):
    values = COMPLEX_VALUES if dtype.is_complex else REAL_VALUES
    x = st.tensor(values, dtype=dtype, device="cuda")
    _same(x.pow(1), x)  # exactly the base: exp(log z) was off in the last bits
    _same(x.pow(True), x)
    _same(x.pow(0), st.ones_like(x))  # 1 even at nan and the infinities (torch fills)
    _same(x.pow(0.0), st.ones_like(x))
    _same(x.pow(False), st.ones_like(x))
    if dtype.is_complex:
        # a 0-dim CPU tensor exponent is no Python number: torch runs pow itself, exp(0 log z), nan at inf
        assert np.isnan(_bits(x.pow(st.tensor(0.0)))[0].real)
        assert np.isnan(_bits(x.pow(st.tensor(0.0)))[0].imag)


@pytest.mark.parametrize("dtype", [st.complex64, st.complex128, st.float32, st.float64, st.float16, st.bfloat16])
def test_roots_and_reciprocal(dtype):
    values = COMPLEX_VALUES if dtype.is_complex else REAL_VALUES
    x = st.tensor(values, dtype=dtype, device="cuda")
    for e in (0.5, st.tensor(0.5)):
        _same(x.pow(e), st.sqrt(x))
    _same(x.pow(-0.5), st.rsqrt(x))
    _same(x.pow(-1), st.reciprocal(x))
    _same(x.pow(-1.0), st.reciprocal(x))
    if not dtype.is_complex:
        assert np.isnan(_bits(st.tensor([-INF], dtype=dtype, device="cuda").pow(0.5))[0])  # sqrt, not powf's inf


@pytest.mark.parametrize("dtype", [st.float32, st.float64, st.float16, st.bfloat16, st.int32, st.int64, st.int8])
def test_real_products(dtype):
    if dtype.is_floating_point:
        x = st.tensor(REAL_VALUES, dtype=dtype, device="cuda")
    else:
        x = st.arange(-60, 60, dtype=dtype, device="cuda")
    _same(x.pow(2), x * x)
    if dtype in (st.float16, st.bfloat16):  # one rounding of the float product, where two kernels round twice
        for e in (3, -2):
            # (1e20 ** -2 is 0 on CUDA, as torch's CUDA: x * x overflows in float first; the CPU's is subnormal)
            np.testing.assert_allclose(_bits(x.pow(e)), _bits(x.cpu().pow(e)), rtol=1e-2, atol=1e-38)
        return
    _same(x.pow(3), x * x * x)
    _same(x.pow(st.tensor(3)), x * x * x)
    if dtype.is_floating_point:
        _same(x.pow(-2), st.reciprocal(x * x))
        _same(x.pow(st.tensor(-2.0)), st.reciprocal(x * x))
        np.testing.assert_allclose(_bits(x.pow(3)), _bits(x.cpu().pow(3)), rtol=1e-6)
    else:
        _same(x.pow(3), x.cpu().pow(3))  # integers wrap the same way


def test_other_exponents_still_pow():
    x = st.tensor([2.0, 3.0, 0.25], device="cuda")
    np.testing.assert_allclose(x.pow(2.5).cpu().numpy(), np.power([2.0, 3.0, 0.25], 2.5), rtol=1e-6)
    z = st.tensor([1 + 1j, -2 + 0.5j], dtype=st.complex128, device="cuda")
    np.testing.assert_allclose(z.pow(1 + 1j).cpu().numpy(), np.power([1 + 1j, -2 + 0.5j], 1 + 1j), rtol=1e-12)
    assert x.pow(st.tensor([2.0, 2.0, 2.0], device="cuda")).dtype is st.float32  # a tensor exponent: pow itself


@pytest.mark.parametrize("e", [0, 1, 2, 3, -2, -1, 0.5, -0.5, 2 + 0j])
@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "float64"])
def test_as_torch_cuda(dtype, e):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    if isinstance(e, complex) and "float" in dtype:
        e = 2  # a complex exponent makes a real tensor's result complex: covered by the complex rows
    values = COMPLEX_VALUES if dtype.startswith("complex") else REAL_VALUES
    if dtype.startswith("complex") and e in (3, -2, -0.5):
        # exp(y log z) and 1 / sqrt(z) at infinite z: torch's complex multiplication and division (libcu++'s) recover
        # infinities and zeros (1 / (inf + inf i) is 0) where strided's Smith division gives nan, as c10's own does
        # (and the results that overflow float32 there: which parts come out inf or nan differs the same way)
        values = [z for z in values if np.isfinite(z) and 1e-10 < abs(z) < 1e10]
    a = np.array(values, dtype=dtype)
    want = torch.from_numpy(a.copy()).cuda().pow(e).cpu().numpy()
    got = _bits(st.tensor(values, dtype=getattr(st, dtype), device="cuda").pow(e))
    _assert_like(got, want, 1e-6 if dtype in ("complex64", "float32") else 1e-14)


def _assert_like(got: np.ndarray, want: np.ndarray, rtol: float) -> None:
    """Where either part of ``want`` is not finite, the same parts (nan, +-inf) exactly; elsewhere within ``rtol`` of
    its magnitude (FMA contraction may differ between compilers in a complex product's a c - b d)."""
    parts_got, parts_want = got, want
    if got.dtype.kind == "c":
        parts_got, parts_want = got.view(got.real.dtype), want.view(want.real.dtype)
    odd = ~np.isfinite(parts_want)
    np.testing.assert_array_equal(parts_got[odd], parts_want[odd])
    finite = np.isfinite(want) if want.dtype.kind != "c" else np.isfinite(want.real) & np.isfinite(want.imag)
    err = np.abs(got[finite] - want[finite])
    assert np.all(err <= rtol * np.abs(want[finite]) + 1e-300), (got, want)
