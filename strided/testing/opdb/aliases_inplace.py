"""OpInfos: in-place forms, other spellings and compositions
(ops/composite/aliases_more.py, shapes_more.py). Aliases reuse the samples and references of the op
they call; in-place forms run them on a copy of ``self`` (``inplace_variant``)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ... import dtypes as dt
from ...tensor import Tensor
from ..opinfo import ALL_DTYPES, FLOATING, OpInfo, SampleInput, make_arg
from . import indexing, linalg, pointwise, pointwise_binary_math, rearranging, reductions, selection, views
from .helpers import aliasing, err
from .pointwise_samples import (
    FLOAT_RESULT_TOL,
    NO_BOOL,
    binary_samples,
    inplace_variant,
    quiet_ref,
    unary_samples,
)
from .shapes_more import OPS as SHAPE_OPS

_BASES = {info.name: info for m in (pointwise, pointwise_binary_math, rearranging, reductions, selection, views,
                                    indexing, linalg) for info in m.OPS}


def _like(base: str, name: str, **kw) -> OpInfo:
    """An alias of ``base``: its samples, reference and dtypes under the overload ``name``."""
    return dataclasses.replace(_BASES[base], name=name, op=kw.pop("op", None), covers=(), **kw)


def _inplace(base: str, name: str, method: str, dtypes=None) -> OpInfo:
    return inplace_variant(_BASES[base], name, method, dtypes)


# ---------------------------------------------------------------- autogen in-place forms of existing ops
_AUTOGEN = [(f, f"{f}_") for f in ("sign", "sin", "cos", "floor", "ceil", "round", "trunc", "log1p", "expm1",
                                   "rsqrt", "reciprocal", "atan2", "hypot", "logical_and", "logical_or",
                                   "logical_xor", "logical_not", "cumsum", "cumprod", "baddbmm")]
_AUTOGEN += [(f"{f}.{o}", f"{f}_.{o}") for f in ("eq", "ne", "lt", "le", "gt", "ge") for o in ("Tensor", "Scalar")]
_AUTOGEN += [("copysign.Tensor", "copysign_.Tensor"), ("fmod.Tensor", "fmod_.Tensor"),
             ("fmod.Scalar", "fmod_.Scalar"), ("clamp.Tensor", "clamp_.Tensor"),
             ("div.Scalar_mode", "div_.Scalar_mode"), ("true_divide.Tensor", "true_divide_.Tensor"),
             ("true_divide.Scalar", "true_divide_.Scalar"), ("clamp_min", "clamp_min_"), ("clamp_max", "clamp_max_"),
             ("clip", "clip_"), ("square", "square_"), ("nan_to_num", "nan_to_num_")]
INPLACE = [_inplace(base, name, name.partition(".")[0]) for base, name in _AUTOGEN]


def _finite_first(info: OpInfo) -> OpInfo:
    """``info`` with its samples holding NaN or inf last, finite ones first (with each keyword): gradcheck takes
    the first few, and finite differences at inf are NaN."""
    def samples(dtype, rng):
        later = []
        for s in info.samples(dtype, rng):
            finite = all(not isinstance(a, Tensor) or not a.dtype.is_floating_point or bool(a.isfinite().all())
                         for a in s.args)
            if finite:
                yield s
                yield SampleInput(s.args, {"nan": 2.0, "posinf": 10.0}, f"{s.name}, nan and posinf given")
                yield SampleInput(s.args, {"neginf": -3.0}, f"{s.name}, neginf given")
            else:
                later.append(s)
        yield from later

    return dataclasses.replace(info, samples=samples)


INPLACE = [_finite_first(i) if i.name == "nan_to_num_" else i for i in INPLACE]

# ---------------------------------------------------------------- other spellings
_ALIASES = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh", "arctan": "atan",
    "arctanh": "atanh", "negative": "neg", "fix": "trunc", "sgn": "sign", "arctan2": "atan2",
}
_OVERLOADED = {"greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
               "multiply": "mul", "subtract": "sub"}
ALIASES = []
for _name, _base in _ALIASES.items():
    ALIASES.append(_like(_base, _name))
    ALIASES.append(inplace_variant(ALIASES[-1], f"{_name}_", f"{_name}_", FLOATING if _base != "sign" else None))
for _name, _base in _OVERLOADED.items():
    for _o in ("Tensor", "Scalar"):
        ALIASES.append(_like(f"{_base}.{_o}", f"{_name}.{_o}"))
        ALIASES.append(inplace_variant(ALIASES[-1], f"{_name}_.{_o}", f"{_name}_"))
for _o in ("Tensor", "Scalar", "Tensor_mode", "Scalar_mode"):
    ALIASES.append(_like(f"div.{_o}", f"divide.{_o}"))
    ALIASES.append(inplace_variant(ALIASES[-1], f"divide_.{_o}", "divide_"))
ALIASES += [
    _like("clamp.Tensor", "clip.Tensor"), _like("cat", "concat"), _like("cat", "concatenate"),
    _like("movedim.intlist", "moveaxis.intlist", op=aliasing("moveaxis.intlist")),
    _like("chunk", "unsafe_chunk"), _like("split.Tensor", "unsafe_split.Tensor"),
    _like("split_with_sizes", "unsafe_split_with_sizes"),
]
ALIASES.append(inplace_variant(next(a for a in ALIASES if a.name == "clip.Tensor"), "clip_.Tensor", "clip_"))


def _positive_errors(rng):
    yield err((make_arg((3,), dt.bool, rng=rng),), NotImplementedError,
              "The `+` operator, on a bool tensor is not supported.")


def _rsub_samples(dtype, rng):
    yield from binary_samples(dtype, rng)
    yield SampleInput((make_arg((2, 3), dtype, rng=rng), make_arg((3,), dtype, rng=rng)), {"alpha": 2}, "alpha")


def _rsub_scalar_samples(dtype, rng):
    x = make_arg((2, 3), dtype, rng=rng)
    for s in (2, 2.5, 3):
        yield SampleInput((x, s), {}, f"scalar {s}")
    yield SampleInput((make_arg((4,), dtype, rng=rng, noncontiguous=True), 3, 2), {}, "alpha")
    yield SampleInput((make_arg((), dtype, rng=rng), 1), {}, "0-dim")


ALIASES += [
    OpInfo("positive", lambda d, rng: unary_samples(d, rng), ref=lambda a: a, dtypes=NO_BOOL,
           errors=_positive_errors),
    OpInfo("rsub.Tensor", _rsub_samples, ref=lambda a, b, alpha=1: b - alpha * a, dtypes=NO_BOOL),
    OpInfo("rsub.Scalar", _rsub_scalar_samples, ref=lambda a, b, alpha=1: b - alpha * a, dtypes=NO_BOOL,
           exact_dtype=False),
]


# ---------------------------------------------------------------- pointwise compositions
def _frac_errors(rng):
    yield err((make_arg((3,), dt.int64, rng=rng),), NotImplementedError, "\"frac_cpu\" not implemented for 'Long'")


def _float_samples(dtype, rng):
    yield from unary_samples(dtype, rng, special=(np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -1.5, 2.5))


frac = OpInfo("frac", _float_samples, ref=quiet_ref(lambda a: a - np.trunc(a)), dtypes=FLOATING,
              errors=_frac_errors)
i0 = OpInfo("i0", lambda d, rng: unary_samples(d, rng, low=-5, high=5), ref=lambda a: np.i0(np.asarray(a, np.float64)),
            dtypes=ALL_DTYPES, tolerances={**FLOAT_RESULT_TOL, dt.float32: (1e-5, 1e-5)})
POINTWISE = [frac, inplace_variant(frac, "frac_", "frac_"), i0, inplace_variant(i0, "i0_", "i0_", FLOATING)]


# ---------------------------------------------------------------- rearranging
def _nd_samples(shapes):
    def samples(dtype, rng):
        for shape in shapes:
            yield SampleInput((make_arg(shape, dtype, rng=rng),), {}, f"{shape}")
        yield SampleInput((make_arg(shapes[-1], dtype, rng=rng, noncontiguous=True),), {}, "noncontiguous")

    return samples


def _rot90_samples(dtype, rng):
    x = make_arg((2, 3, 4), dtype, rng=rng, noncontiguous=True)
    for k in (1, 2, 3, 4, -1, 5):
        yield SampleInput((x, k), {}, f"k={k}")
    yield SampleInput((x, 1, [2, 0]), {}, "dims [2, 0]")
    yield SampleInput((make_arg((0, 3), dtype, rng=rng),), {}, "zero-size")


def _rot90_errors(rng):
    x = make_arg((2, 3), rng=rng)
    yield err((x, 1, [0]), RuntimeError, "expected total rotation dims == 2, but got dims = 1")
    yield err((x, 1, [0, 0]), RuntimeError, "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0")
    yield err((make_arg((2,), rng=rng),), RuntimeError, "expected total dims >= 2, but got total dims = 1")


def _diag_embed_samples(dtype, rng):
    yield SampleInput((make_arg((3,), dtype, rng=rng),), {}, "vector")
    yield SampleInput((make_arg((2, 3), dtype, rng=rng, noncontiguous=True), 1), {}, "offset 1")
    yield SampleInput((make_arg((2, 3), dtype, rng=rng), -2, 0, 2), {}, "offset -2, dims 0, 2")
    yield SampleInput((make_arg((0,), dtype, rng=rng),), {}, "zero-size")


def _diag_embed_ref(a, offset=0, dim1=-2, dim2=-1):
    m = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (m, m), dtype=a.dtype)
    for i in range(a.shape[-1]):
        out[..., i + max(-offset, 0), i + max(offset, 0)] = a[..., i]
    n = a.ndim + 1
    return np.moveaxis(out, (-2, -1), (dim1 % n, dim2 % n))


def _diagflat_samples(dtype, rng):
    yield SampleInput((make_arg((2, 2), dtype, rng=rng, noncontiguous=True),), {}, "matrix")
    yield SampleInput((make_arg((3,), dtype, rng=rng), -1), {}, "offset -1")
    yield SampleInput((make_arg((), dtype, rng=rng), 2), {}, "0-dim")


def _adjoint_errors(rng):
    yield err((make_arg((3,), rng=rng),), RuntimeError,
              "tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor.")


def _vander_samples(dtype, rng):
    x = make_arg((4,), dtype, rng=rng, low=-3, high=3)
    yield SampleInput((x,), {}, "default")
    yield SampleInput((x, 3, True), {}, "N=3 increasing")
    yield SampleInput((make_arg((3,), dtype, rng=rng, low=-3, high=3, noncontiguous=True), 0), {}, "N=0")
    yield SampleInput((make_arg((0,), dtype, rng=rng),), {}, "zero-size")


def _vander_errors(rng):
    yield err((make_arg((2, 2), rng=rng),), RuntimeError, "x must be a one-dimensional tensor.")
    yield err((make_arg((2,), rng=rng), -1), RuntimeError, "N must be non-negative.")


def _flip_errors(name, message, shape):
    return lambda rng: [err((make_arg(shape, rng=rng),), RuntimeError, message)]


REARRANGING = [
    OpInfo("msort", _nd_samples([(), (4,), (3, 4)]), ref=lambda a: np.sort(a, axis=0) if a.ndim else a,
           dtypes=ALL_DTYPES),
    OpInfo("ravel", _nd_samples([(), (4,), (2, 3, 4)]), ref=np.ravel, dtypes=ALL_DTYPES),
    OpInfo("fliplr", _nd_samples([(2, 3), (2, 3, 4)]), ref=np.fliplr, dtypes=ALL_DTYPES,
           errors=_flip_errors("fliplr", "Input must be >= 2-d.", (3,))),
    OpInfo("flipud", _nd_samples([(3,), (2, 3)]), ref=np.flipud, dtypes=ALL_DTYPES,
           errors=_flip_errors("flipud", "Input must be >= 1-d.", ())),
    OpInfo("rot90", _rot90_samples, ref=lambda a, k=1, dims=(0, 1): np.rot90(a, k, axes=tuple(dims)),
           dtypes=ALL_DTYPES, errors=_rot90_errors),
    OpInfo("adjoint", _nd_samples([(2, 3), (2, 3, 4)]), ref=lambda a: np.swapaxes(a, -2, -1), op=aliasing("adjoint"),
           dtypes=ALL_DTYPES, errors=_adjoint_errors),
    OpInfo("diag_embed", _diag_embed_samples, ref=_diag_embed_ref, dtypes=ALL_DTYPES),
    OpInfo("diagflat", _diagflat_samples, ref=lambda a, offset=0: np.diagflat(a, offset), dtypes=ALL_DTYPES),
    OpInfo("vander", _vander_samples, ref=lambda x, N=None, increasing=False: np.vander(x, N, increasing),
           dtypes=(dt.float64, dt.float32, dt.int64, dt.int32), errors=_vander_errors),
]


OPS: list = INPLACE + ALIASES + POINTWISE + REARRANGING + SHAPE_OPS
