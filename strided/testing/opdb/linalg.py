"""OpInfos: mm (and mm.out), bmm, addmm (and addmm_), baddbmm, matmul, linear, _grouped_mm.

Operands are small (|x| <= 2 for floats) so float32 BLAS results agree with the float64 reference
to the default tolerances; integer products wrap identically in NumPy and torch.
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, INTEGRAL, OpInfo, SampleInput, make_arg
from .pointwise_samples import error, inplace_variant, out_variant, tensor_of

DTYPES = FLOATING + INTEGRAL
# Sums of a few products rounded once to a half type.
GEMM_TOL = {dt.float16: (2e-3, 2e-3), dt.bfloat16: (1.6e-2, 2e-2)}


def _maker(dtype, rng):
    lo, hi = (-2, 2) if dtype.is_floating_point else (-3, 4)

    def a(*shape, noncontiguous=False, requires_grad=False):
        return make_arg(shape, dtype, rng=rng, low=lo, high=hi, noncontiguous=noncontiguous,
                        requires_grad=requires_grad)

    return a


def _scalars(dtype):
    """(beta, alpha) pairs of ``dtype``'s kind."""
    if dtype.is_floating_point:
        return ((0.5, 2.0), (0, -1.5))
    return ((2, 3), (0, 2))


# ---------------------------------------------------------------------------- mm, bmm


def _mm_samples(dtype, rng):
    a = _maker(dtype, rng)
    yield SampleInput((a(3, 4), a(4, 5)), {}, "contiguous")
    yield SampleInput((a(3, 4, noncontiguous=True), a(5, 4).t()), {}, "noncontiguous, transposed mat2")
    yield SampleInput((a(4, 3).t(), a(4, 5, noncontiguous=True)), {}, "transposed self")
    yield SampleInput((a(1, 1), a(1, 1)), {}, "1x1")
    yield SampleInput((a(0, 3), a(3, 4)), {}, "zero rows")
    yield SampleInput((a(2, 0), a(0, 4)), {}, "zero inner dim")


def _bmm_samples(dtype, rng):
    a = _maker(dtype, rng)
    yield SampleInput((a(2, 3, 4), a(2, 4, 5)), {}, "contiguous")
    yield SampleInput((a(2, 3, 4, noncontiguous=True), a(2, 5, 4).transpose(1, 2)), {}, "noncontiguous")
    yield SampleInput((a(3, 2, 4).transpose(0, 1), a(2, 4, 3)), {}, "batch-transposed self")
    yield SampleInput((a(0, 3, 4), a(0, 4, 5)), {}, "zero batch")
    yield SampleInput((a(2, 3, 0), a(2, 0, 5)), {}, "zero inner dim")


def _matmul_ref(a, b):
    return np.matmul(a, b)


def _mm_errors(rng):
    f = make_arg((2, 3), dt.float32, rng=rng)
    yield error((f, make_arg((4, 5), dt.float32, rng=rng)), RuntimeError,
                "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")
    yield error((f, make_arg((3, 5), dt.float64, rng=rng)), RuntimeError,
                "expected m1 and m2 to have the same dtype, but got: float != double")
    yield error((make_arg((3,), dt.float32, rng=rng), f), RuntimeError, "self must be a matrix")
    yield error((f, make_arg((3,), dt.float32, rng=rng)), RuntimeError, "mat2 must be a matrix")
    b = make_arg((2, 2), dt.bool, rng=rng)
    yield error((b, b), NotImplementedError, "\"addmm_impl_cpu_\" not implemented for 'Bool'")


def _bmm_errors(rng):
    f = make_arg((2, 2, 3), dt.float32, rng=rng)
    yield error((make_arg((2, 3), dt.float32, rng=rng), f), RuntimeError, "batch1 must be a 3D tensor")
    yield error((f, make_arg((2, 3), dt.float32, rng=rng)), RuntimeError, "batch2 must be a 3D tensor")
    yield error((f, make_arg((2, 4, 5), dt.float32, rng=rng)), RuntimeError,
                "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].")
    yield error((f, make_arg((2, 3, 5), dt.float64, rng=rng)), RuntimeError,
                "expected scalar type Float but found Double")
    b = make_arg((2, 2, 2), dt.bool, rng=rng)
    yield error((b, b), NotImplementedError, "\"bmm\" not implemented for 'Bool'")


# ---------------------------------------------------------------------------- addmm, baddbmm


def _addmm_samples(dtype, rng):
    a = _maker(dtype, rng)
    yield SampleInput((a(3, 5), a(3, 4), a(4, 5)), {}, "contiguous")
    yield SampleInput((a(5, 3).t(), a(3, 4, noncontiguous=True), a(5, 4).t()), {}, "noncontiguous")
    yield SampleInput((a(5), a(3, 4), a(4, 5)), {}, "broadcast row")
    yield SampleInput((a(3, 1), a(3, 4), a(4, 5)), {}, "broadcast column")
    yield SampleInput((a(), a(3, 4), a(4, 5)), {}, "0-dim self")
    yield SampleInput((a(2, 3), a(2, 0), a(0, 3)), {}, "zero inner dim")
    yield SampleInput((a(0, 3), a(0, 4), a(4, 3)), {}, "zero rows")
    for beta, alpha in _scalars(dtype):
        yield SampleInput((a(3, 5), a(3, 4), a(4, 5)), {"beta": beta, "alpha": alpha},
                          f"beta={beta} alpha={alpha}")
    if dtype.is_floating_point:
        nan = tensor_of(np.full((3, 5), math.nan), dtype)
        yield SampleInput((nan, a(3, 4), a(4, 5)), {"beta": 0}, "beta=0 ignores NaN in self")


def _addmm_ref(self, mat1, mat2, *, beta=1, alpha=1):
    product = np.matmul(mat1, mat2)
    if not np.asarray(product).dtype.kind == "f":
        beta, alpha = int(beta), int(alpha)
    result = alpha * product if alpha != 0 else np.zeros_like(product)
    return result + beta * np.asarray(self) if beta != 0 else result


def _addmm_errors(rng):
    f = make_arg((2, 3), dt.float32, rng=rng)
    g = make_arg((3, 2), dt.float32, rng=rng)
    yield error((make_arg((2, 2), dt.float64, rng=rng), f, g), RuntimeError,
                "self and mat2 must have the same dtype, but got Double and Float")
    f32 = make_arg((2, 2), dt.float32, rng=rng)
    yield error((f32, make_arg((2, 3), dt.float64, rng=rng), g), RuntimeError,
                "mat1 and mat2 must have the same dtype, but got Double and Float")
    yield error((make_arg((2, 2), dt.float32, rng=rng), make_arg((3,), dt.float32, rng=rng), g), RuntimeError,
                "mat1 must be a matrix, got 1-D tensor")
    yield error((make_arg((2, 2), dt.float32, rng=rng), f, f), RuntimeError,
                "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)")
    yield error((make_arg((3,), dt.float32, rng=rng), f, g), RuntimeError,
                "The expanded size of the tensor (2) must match the existing size (3) at non-singleton "
                "dimension 1.  Target sizes: [2, 2].  Tensor sizes: [3]")
    yield error((make_arg((2, 2, 1), dt.float32, rng=rng), f, g), RuntimeError,
                "expand(torch.FloatTensor{[2, 2, 1]}, size=[2, 2]): the number of sizes provided (2) must be "
                "greater or equal to the number of dimensions in the tensor (3)")
    i = make_arg((2, 2), dt.uint8, rng=rng, low=0)
    yield error((i, i, i), RuntimeError, "value cannot be converted to type uint8_t without overflow",
                {"beta": -0.5})


def _baddbmm_samples(dtype, rng):
    a = _maker(dtype, rng)
    yield SampleInput((a(2, 3, 5), a(2, 3, 4), a(2, 4, 5)), {}, "contiguous")
    yield SampleInput((a(2, 5, 3).transpose(1, 2), a(2, 3, 4, noncontiguous=True),
                       a(2, 5, 4).transpose(1, 2)), {}, "noncontiguous")
    yield SampleInput((a(5), a(2, 3, 4), a(2, 4, 5)), {}, "broadcast self")
    yield SampleInput((a(), a(2, 3, 4), a(2, 4, 5)), {}, "0-dim self")
    yield SampleInput((a(2, 3, 5), a(2, 3, 0), a(2, 0, 5)), {}, "zero inner dim")
    yield SampleInput((a(0, 3, 5), a(0, 3, 4), a(0, 4, 5)), {}, "zero batch")
    for beta, alpha in _scalars(dtype):
        yield SampleInput((a(2, 3, 5), a(2, 3, 4), a(2, 4, 5)), {"beta": beta, "alpha": alpha},
                          f"beta={beta} alpha={alpha}")


def _baddbmm_errors(rng):
    b1, b2 = make_arg((2, 2, 3), dt.float32, rng=rng), make_arg((2, 3, 2), dt.float32, rng=rng)
    yield error((make_arg((2, 2, 2), dt.float64, rng=rng), b1, b2), RuntimeError,
                "Input dtypes must be the same, got: input double, batch1: float, batch2: float")
    yield error((make_arg((3, 2, 2), dt.float32, rng=rng), b1, b2), RuntimeError,
                "The expanded size of the tensor (2) must match the existing size (3) at non-singleton "
                "dimension 0.  Target sizes: [2, 2, 2].  Tensor sizes: [3, 2, 2]")
    yield error((make_arg((2, 2, 2), dt.float32, rng=rng), b1, make_arg((2, 4, 2), dt.float32, rng=rng)),
                RuntimeError,
                "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].")
    yield error((make_arg((2, 2, 2), dt.float32, rng=rng), b1, make_arg((2, 3, 2), dt.float64, rng=rng)),
                RuntimeError, "expected scalar type Float but found Double")


# ---------------------------------------------------------------------------- matmul, linear

_MATMUL_SHAPES = (
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)),
    ((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (5, 3, 4)), ((4, 1, 2, 3), (5, 3, 4)), ((2, 3, 4), (5, 2, 4, 3)), ((0, 2, 3), (3, 4)),
    ((2, 0), (0, 3)), ((5, 2, 0), (0,)), ((0,), (0,)),
)


def _matmul_samples(dtype, rng):
    a = _maker(dtype, rng)
    for s1, s2 in _MATMUL_SHAPES:
        yield SampleInput((a(*s1), a(*s2)), {}, f"{list(s1)} @ {list(s2)}")
    yield SampleInput((a(2, 5, 3).transpose(0, 1), a(3, 4)), {}, "batch-transposed (no fold)")
    yield SampleInput((a(5, 2, 3, noncontiguous=True), a(4, 3).t()), {}, "noncontiguous")
    yield SampleInput((a(2, 3), a(5, 4, 3).transpose(1, 2)), {}, "2-d @ transposed batch")
    yield SampleInput((a(5, 3, 2).transpose(1, 2), a(3)), {}, "transposed batch @ vector")
    if dtype.is_floating_point:
        yield SampleInput((a(5, 2, 3), a(3, 4, requires_grad=True)), {}, "fold (other requires grad)")
        yield SampleInput((a(2, 3, requires_grad=True), a(5, 3, 4)), {},
                          "fold transposed (self requires grad)")
        yield SampleInput((a(1, 2, 3, requires_grad=True), a(5, 3, 4)), {}, "squeezed batch (requires grad)")


def _matmul_errors(rng):
    f = make_arg((2, 3), dt.float32, rng=rng)
    v = make_arg((3,), dt.float32, rng=rng)
    yield error((make_arg((), dt.float32, rng=rng), f), RuntimeError,
                "both arguments to matmul need to be at least 1D, but they are 0D and 2D")
    yield error((v, make_arg((4,), dt.float32, rng=rng)), RuntimeError,
                "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
                "elements, but got 3 and 4 elements respectively")
    yield error((v, make_arg((3,), dt.float64, rng=rng)), RuntimeError,
                "dot : expected both vectors to have same dtype, but found Float and Double")
    yield error((f, make_arg((4,), dt.float32, rng=rng)), RuntimeError,
                "size mismatch, got input (2), mat (2x3), vec (4)")
    yield error((make_arg((2, 3), dt.float64, rng=rng), v), RuntimeError,
                "addmv input tensors must have the same dtype, but got Float, Double, and Float")
    yield error((make_arg((5, 2, 3), dt.float32, rng=rng), make_arg((4, 3, 2), dt.float32, rng=rng)),
                RuntimeError,
                "The size of tensor a (5) must match the size of tensor b (4) at non-singleton dimension 0")
    yield error((make_arg((3,), dt.bool, rng=rng),) * 2, NotImplementedError,
                "\"dot\" not implemented for 'Bool'")


def _linear_samples(dtype, rng):
    a = _maker(dtype, rng)
    yield SampleInput((a(2, 3), a(4, 3), a(4)), {}, "2-d, bias (addmm)")
    yield SampleInput((a(2, 3), a(4, 3)), {}, "2-d, no bias")
    yield SampleInput((a(5, 2, 3), a(4, 3), a(4)), {}, "3-d contiguous, bias (flattened addmm)")
    yield SampleInput((a(2, 5, 3).transpose(0, 1), a(4, 3), a(4)), {},
                      "3-d noncontiguous, bias (matmul + add)")
    yield SampleInput((a(5, 2, 3), a(4, 3, noncontiguous=True)), {}, "3-d, noncontiguous weight, no bias")
    yield SampleInput((a(3), a(4, 3), a(4)), {}, "1-d input")
    yield SampleInput((a(5, 2, 3), a(3), a()), {}, "1-d weight, 0-dim bias (matmul + add)")
    yield SampleInput((a(6, 5, 3), a(4, 3), a(5, 4)), {}, "2-d bias")
    yield SampleInput((a(0, 2, 3), a(4, 3), a(4)), {}, "zero-size batch")


def _linear_ref(x, weight, bias=None):
    y = np.matmul(x, np.asarray(weight).T)
    return y if bias is None else y + bias


def _linear_errors(rng):
    yield error((make_arg((), dt.float32, rng=rng), make_arg((4, 3), dt.float32, rng=rng)), RuntimeError,
                "both arguments to linear need to be at least 1D, but they are 0D and 2D")
    yield error((make_arg((2, 3), dt.float32, rng=rng), make_arg((4, 3), dt.float32, rng=rng),
                 make_arg((5,), dt.float32, rng=rng)), RuntimeError,
                "The expanded size of the tensor (4) must match the existing size (5) at non-singleton "
                "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [5]")


def _offsets(values):
    return tensor_of(values, dt.int32)


def _grouped_mm_samples(d, rng):
    a = _maker(d, rng)
    yield SampleInput((a(10, 16), a(3, 16, 8)), {"offs": _offsets([3, 7, 9])}, "rows grouped, zeros past the end")
    yield SampleInput((a(3, 8, 16), a(16, 40)), {"offs": _offsets([8, 24, 32])}, "columns grouped")
    yield SampleInput((a(8, 48), a(48, 16)), {"offs": _offsets([16, 16, 40])}, "contraction grouped, an empty group")
    yield SampleInput((a(3, 5, 16), a(3, 8, 16).transpose(1, 2)), {}, "batched, column-major mat_b")


def _grouped_mm_ref(mat_a, mat_b, offs=None):
    """One product per group (Note [Grouped GEMM as GEMMs]); zeros past offs[-1]."""
    if offs is None:
        return np.matmul(mat_a, mat_b)
    bounds = list(zip([0, *offs[:-1]], offs))
    if mat_a.ndim == 2 and mat_b.ndim == 2:
        return np.stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in bounds])
    if mat_a.ndim == 2:
        out = np.zeros((mat_a.shape[0], mat_b.shape[-1]), np.result_type(mat_a, mat_b))
        for g, (s, e) in enumerate(bounds):
            out[s:e] = mat_a[s:e] @ mat_b[g]
        return out
    out = np.zeros((mat_a.shape[1], mat_b.shape[1]), np.result_type(mat_a, mat_b))
    for g, (s, e) in enumerate(bounds):
        out[:, s:e] = mat_a[g] @ mat_b[:, s:e]
    return out


def _grouped_mm_errors(rng):
    def f(*shape, d=dt.bfloat16):
        return make_arg(shape, d, rng=rng)

    offs = _offsets([3, 7, 9])
    yield error((f(10, 16, d=dt.float64), f(3, 16, 8, d=dt.float64)), RuntimeError,
                "Expected mat_a to be Float32, BFloat16 or Float16 matrix, got Double", {"offs": offs})
    yield error((f(10, 12), f(3, 12, 8)), RuntimeError, "strides should be multiple of 16 bytes", {"offs": offs})
    yield error((f(10, 16), f(3, 16, 8)), RuntimeError,
                "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d")
    yield error((f(10, 16), f(3, 16, 8)), RuntimeError, "Offsets have to be int32",
                {"offs": tensor_of([3, 7, 9], dt.int64)})


_GEMM = {"dtypes": DTYPES, "tolerances": GEMM_TOL}
mm = OpInfo("mm", _mm_samples, ref=_matmul_ref, errors=_mm_errors, **_GEMM)
addmm = OpInfo("addmm", _addmm_samples, ref=_addmm_ref, errors=_addmm_errors, **_GEMM)

OPS = [
    mm,
    out_variant(mm, "mm.out"),
    OpInfo("bmm", _bmm_samples, ref=_matmul_ref, errors=_bmm_errors, **_GEMM),
    addmm,
    inplace_variant(addmm, "addmm_", "addmm_"),
    OpInfo("baddbmm", _baddbmm_samples, ref=_addmm_ref, errors=_baddbmm_errors, **_GEMM),
    OpInfo("matmul", _matmul_samples, ref=_matmul_ref, errors=_matmul_errors, **_GEMM),
    OpInfo("linear", _linear_samples, ref=_linear_ref, errors=_linear_errors, **_GEMM),
    OpInfo("_grouped_mm", _grouped_mm_samples, ref=_grouped_mm_ref, errors=_grouped_mm_errors,
           dtypes=(dt.float32, dt.float16, dt.bfloat16), tolerances=GEMM_TOL),
]
