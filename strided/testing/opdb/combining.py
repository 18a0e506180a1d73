"""OpInfos: broadcast_tensors, meshgrid, cartesian_prod, block_diag, kron, tensordot, cross,
linalg_cross, cdist (``ops/composite/combining.py``), take_along_dim, tensor_split,
repeat_interleave, diff, tril_indices / triu_indices, against NumPy."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, FLOATING, INTEGRAL, OpInfo, SampleInput, make_arg
from .helpers import err, on_probe_device, probe

__all__ = ["OPS"]

NO_BOOL = FLOATING + INTEGRAL
_F = dt.float32


def _a(shape, d, rng, nc=False, **kw):
    return make_arg(shape, d, rng=rng, noncontiguous=nc, **kw)


def _i(values):
    from ...factories import tensor

    return tensor(np.asarray(values, dtype=np.int64))


# ---------------------------------------------------------------------------- broadcasting, grids
def _broadcast_samples(d, rng):
    yield SampleInput(([_a((3, 1), d, rng), _a((4,), d, rng), _a((), d, rng)],), name="three shapes")
    yield SampleInput(([_a((2, 3), d, rng, nc=True), _a((2, 3), d, rng)],), name="noncontiguous, equal shapes")
    yield SampleInput(([_a((0, 1), d, rng), _a((3,), d, rng)],), name="zero-size")


def _broadcast_errors(rng):
    yield err(([_a((2, 3), _F, rng), _a((4,), _F, rng)],), RuntimeError,
              "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1")


def _meshgrid_samples(d, rng, indexing=None):
    kw = {} if indexing is None else {"indexing": indexing}
    yield SampleInput(([_a((3,), d, rng), _a((4,), d, rng)],), kw, name="two vectors")
    yield SampleInput(([_a((2,), d, rng), _a((), d, rng), _a((3,), d, rng, nc=True)],), kw, name="0-dim, noncontig")
    yield SampleInput(([_a((0,), d, rng), _a((2,), d, rng)],), kw, name="zero-size")
    yield SampleInput(([_a((5,), d, rng)],), kw, name="one vector")


def _meshgrid_errors(rng):
    yield err(([],), RuntimeError, "meshgrid expects a non-empty TensorList")
    yield err(([_a((2,), _F, rng), _a((2,), dt.float64, rng)],), RuntimeError,
              "meshgrid expects all tensors to have the same dtype")


def _cartesian_samples(d, rng):
    yield SampleInput(([_a((2,), d, rng), _a((3,), d, rng)],), name="two vectors")
    yield SampleInput(([_a((2,), d, rng, nc=True), _a((1,), d, rng), _a((2,), d, rng)],), name="three, noncontig")
    yield SampleInput(([_a((3,), d, rng)],), name="one vector")
    yield SampleInput(([_a((0,), d, rng), _a((2,), d, rng)],), name="zero-size")


def _combinations_samples(d, rng):
    yield SampleInput((_a((4,), d, rng),), name="pairs")
    yield SampleInput((_a((4,), d, rng, nc=True), 3), name="triples, noncontig")
    yield SampleInput((_a((3,), d, rng), 2, True), name="with replacement")
    yield SampleInput((_a((3,), d, rng), 4), name="r > n")
    yield SampleInput((_a((3,), d, rng), 0), name="r = 0")
    yield SampleInput((_a((0,), d, rng), 2), name="zero-size")


def _combinations_ref(a, r=2, with_replacement=False):
    if r == 0:
        return np.empty((0,), a.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(a.tolist(), r))
    return np.array(rows, dtype=a.dtype).reshape(len(rows), r)


def _cartesian_ref(tensors):
    if len(tensors) == 1:
        return tensors[0]
    rows = list(itertools.product(*[t.tolist() for t in tensors]))
    return np.array(rows, dtype=tensors[0].dtype).reshape(len(rows), len(tensors))


def _block_diag_samples(d, rng):
    yield SampleInput(([_a((), d, rng), _a((2,), d, rng), _a((2, 1), d, rng), _a((1, 3), d, rng, nc=True)],),
                      name="0-, 1- and 2-D blocks")
    yield SampleInput(([_a((2, 2), d, rng), _a((0, 3), d, rng)],), name="an empty block")


def _block_diag_ref(tensors):
    blocks = [np.atleast_2d(t) if t.ndim < 2 else t for t in tensors]
    dtype = np.result_type(*blocks)
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype=dtype)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


# ---------------------------------------------------------------------------- products
def _kron_samples(d, rng):
    yield SampleInput((_a((2, 3), d, rng), _a((3, 2), d, rng)), name="matrices")
    yield SampleInput((_a((2,), d, rng), _a((2, 2, 2), d, rng, nc=True)), name="different ranks, noncontig")
    yield SampleInput((_a((), d, rng), _a((3,), d, rng)), name="0-dim")


def _tensordot_samples(d, rng):
    yield SampleInput((_a((2, 3, 4), d, rng), _a((3, 4, 5), d, rng), [1, 2], [0, 1]), name="two dims")
    yield SampleInput((_a((3, 2), d, rng, nc=True), _a((2, 3), d, rng), [0, 1], [1, 0]), name="full, noncontig")
    yield SampleInput((_a((2, 3), d, rng), _a((4,), d, rng), [], []), name="outer product")


def _tensordot_errors(rng):
    yield err((_a((2, 3), _F, rng), _a((4, 4), _F, rng), [1], [0]), RuntimeError,
              "contracted dimensions need to match, but first has size 3 in dim 1 and second has size 4 in dim 0")
    yield err((_a((2, 3), _F, rng), _a((3, 4), _F, rng), [1, 0], [0]), RuntimeError,
              "both dimension lists should have same length")


def _cross_samples(d, rng):
    yield SampleInput((_a((4, 3), d, rng), _a((4, 3), d, rng)), {"dim": 1}, name="rows")
    yield SampleInput((_a((3, 2), d, rng, nc=True), _a((3, 1), d, rng)), {"dim": 0}, name="broadcast, noncontig")


def _cross_errors(rng):
    yield err((_a((4, 4), _F, rng), _a((4, 4), _F, rng)), RuntimeError,
              "linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4")
    yield err((_a((2, 3), _F, rng), _a((3,), _F, rng)), RuntimeError,
              "linalg.cross: inputs must have the same number of dimensions.")


def _cdist_samples(d, rng):
    for p in (2.0, 1.0, 0.0, float("inf"), 3.0):
        yield SampleInput((_a((3, 4), d, rng), _a((5, 4), d, rng), p), name=f"p={p}")
    yield SampleInput((_a((2, 3, 2), d, rng, nc=True), _a((1, 4, 2), d, rng)), name="batched, broadcast")
    yield SampleInput((_a((30, 3), d, rng), _a((4, 3), d, rng), 2.0), name="p=2 through a matmul")
    yield SampleInput((_a((3, 3), d, rng), _a((2, 3), d, rng), 2.0, 1), name="compute_mode 1")
    yield SampleInput((_a((0, 3), d, rng), _a((2, 3), d, rng)), name="zero rows")


def _cdist_ref(x1, x2, p=2.0, compute_mode=None):
    diff = np.asarray(x1, np.float64)[..., :, None, :] - np.asarray(x2, np.float64)[..., None, :, :]
    if diff.size == 0:
        return np.zeros(diff.shape[:-1])
    return np.linalg.norm(diff, ord=p, axis=-1)


def _cdist_errors(rng):
    yield err((_a((3,), _F, rng), _a((3,), _F, rng)), RuntimeError, "cdist only supports at least 2D tensors, "
                                                                    "X1 got: 1D")
    yield err((_a((2, 3), _F, rng), _a((2, 4), _F, rng)), RuntimeError,
              "X1 and X2 must have the same number of columns. X1: 3 X2: 4")
    yield err((_a((2, 3), _F, rng), _a((2, 3), _F, rng), -1.0), RuntimeError,
              "cdist only supports non-negative p values")
    yield err((_a((2, 3), dt.int64, rng), _a((2, 3), dt.int64, rng)), RuntimeError,
              "cdist only supports floating-point dtypes, X1 got: Long")
    for d, word in ((dt.float16, "Half"), (dt.bfloat16, "BFloat16")):  # torch's CPU distance kernel: float, double
        e = err((_a((2, 3), d, rng), _a((4, 3), d, rng), 1.0), NotImplementedError,
                f"\"cdist\" not implemented for '{word}'")
        yield dataclasses.replace(e, devices=("cpu",))


# ---------------------------------------------------------------------------- selection, splitting
def _take_along_samples(d, rng):
    idx = _i([[0, 2], [1, 1]])
    yield SampleInput((_a((2, 3), d, rng), idx, 1), name="dim 1")
    yield SampleInput((_a((2, 3), d, rng, nc=True), _i([[1, 0, 1]]), 0), name="broadcast, noncontig")
    yield SampleInput((_a((2, 3), d, rng), _i([5, 0, 3])), name="flattened")


def _take_along_ref(a, indices, dim=None):
    if dim is None:
        return a.reshape(-1)[indices.reshape(-1)]
    shape = np.broadcast_shapes(tuple(1 if k == dim else s for k, s in enumerate(a.shape)),
                                tuple(1 if k == dim else s for k, s in enumerate(indices.shape)))
    a = np.broadcast_to(a, tuple(a.shape[dim] if k == dim else s for k, s in enumerate(shape)))
    indices = np.broadcast_to(indices, tuple(indices.shape[dim] if k == dim else s for k, s in enumerate(shape)))
    return np.take_along_axis(a, indices, dim)


def _take_along_errors(rng):
    yield err((_a((2, 3), _F, rng), _i([0]), 1), RuntimeError, "torch.take_along_dim(): input and indices should have "
              "the same number of dimensions, but got 2 dimensions for input, and 1 dimensions for indices")


def _tensor_split_samples(d, rng, kind):
    x = _a((7, 4), d, rng)
    if kind == "sections":
        for n, dim in ((3, 0), (5, 1), (1, 0), (9, 0)):
            yield SampleInput((x, n, dim), name=f"{n} sections dim {dim}")
    elif kind == "indices":
        yield SampleInput((x, [2, 5], 0), name="two cuts")
        yield SampleInput((_a((7, 4), d, rng, nc=True), [3, 1, 9], 1), name="unsorted, beyond, noncontig")
        yield SampleInput((x, [], 0), name="no cut")
    else:  # the spec stays a list / int: _split_by_cpu_tensor makes the CPU tensor torch requires
        yield SampleInput((x, 3, 0), name="0-dim: sections")
        yield SampleInput((x, [1, 4], 1), name="1-dim: indices")


def _split_by_cpu_tensor(x, spec, dim=0):
    """tensor_split.tensor_indices_or_sections with a CPU int64 tensor of ``spec``, on any device's ``x``."""
    from ...ops import bound

    return bound.tensor_split.tensor_indices_or_sections(x, _i(spec), dim)


def _tensor_split_ref(a, spec, dim=0):
    if isinstance(spec, np.ndarray):
        spec = spec.tolist()
    return np.array_split(a, spec, axis=dim)


def _tensor_split_errors(rng):
    yield err((_a((3,), _F, rng), 0), RuntimeError, "number of sections must be larger than 0, got 0")
    yield err((_a((), _F, rng), 2), RuntimeError,
              "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")


def _repeat_int_samples(d, rng):
    yield SampleInput((_a((2, 3), d, rng), 2), name="flattened")
    yield SampleInput((_a((2, 3), d, rng, nc=True), 3, 1), name="dim 1, noncontig")
    yield SampleInput((_a((2, 3), d, rng), 0, 0), name="zero repeats")


def _repeat_tensor_samples(d, rng):
    yield SampleInput((_a((3, 2), d, rng), _i([1, 0, 2]), 0), name="per row")
    yield SampleInput((_a((3, 2), d, rng, nc=True), _i(2), 1), name="0-dim repeats, noncontig")
    yield SampleInput((_a((2, 2), d, rng), _i([3])), name="one repeat, flattened")


def _repeat_ref(a, repeats, dim=None, output_size=None):
    return np.repeat(a, repeats.reshape(-1) if isinstance(repeats, np.ndarray) and repeats.ndim else int(repeats),
                     axis=dim)


def _repeat_errors(rng):
    yield err((_a((3,), _F, rng), -1), RuntimeError, "Repeats must be non-negative")


def _repeat_tensor_errors(rng):
    yield err((_a((3,), _F, rng), _i([1, 2])), RuntimeError, "repeats must have the same size as input along dim, "
              "but got repeats.size(0) = 2 and input.size(0) = 3")
    yield err((_a((3,), _F, rng), _i([[1, 2]])), RuntimeError, "repeats must be 0-dim or 1-dim tensor")


def _repeat_index_samples(d, rng):
    yield SampleInput((_i([2, 0, 3]),), name="counts")
    yield SampleInput((_i([]),), name="empty")


def _diff_samples(d, rng):
    yield SampleInput((_a((5,), d, rng),), name="vector")
    yield SampleInput((_a((3, 4), d, rng, nc=True), 2, 0), name="second order, dim 0, noncontig")
    yield SampleInput((_a((3, 4), d, rng), 1, -1, _a((3, 1), d, rng), _a((3, 2), d, rng)), name="prepend, append")
    yield SampleInput((_a((3,), d, rng), 5), name="order beyond the length")
    yield SampleInput((_a((3,), d, rng), 0), name="order 0")


def _diff_ref(a, n=1, dim=-1, prepend=None, append=None):
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(a, n, axis=dim, **kw)


def _diff_errors(rng):
    yield err((_a((), _F, rng),), RuntimeError, "diff expects input to be at least one-dimensional")
    yield err((_a((3,), _F, rng), -1), RuntimeError, "order must be non-negative but got -1")
    yield err((_a((3, 2), _F, rng), 1, -1, _a((2,), _F, rng)), RuntimeError,
              "diff expects prepend or append to be the same dimension as input")


def _tri_samples(d, rng):
    for row, col, off in ((3, 4, 0), (4, 3, 1), (3, 3, -1), (0, 3, 0), (2, 5, 7)):
        yield SampleInput((probe(), row, col, off), {"dtype": d}, f"{row}x{col} offset {off}")


def _tri_ref(fn):
    def ref(_, row, col, offset=0, **kw):
        return np.stack(fn(row, offset, col)).reshape(2, -1)

    return ref


def _tri_errors(rng):
    yield err((probe(), -1, 3), RuntimeError, "row must be non-negative, got-1")


OPS = [
    OpInfo("broadcast_tensors", _broadcast_samples, ref=lambda ts: np.broadcast_arrays(*ts), dtypes=ALL_DTYPES,
           errors=_broadcast_errors),
    OpInfo("meshgrid", _meshgrid_samples, ref=lambda ts: np.meshgrid(*ts, indexing="ij"), dtypes=ALL_DTYPES,
           errors=_meshgrid_errors),
    OpInfo("meshgrid.indexing", lambda d, rng: itertools.chain(_meshgrid_samples(d, rng, "xy"),
                                                               _meshgrid_samples(d, rng, "ij")),
           ref=lambda ts, indexing: np.meshgrid(*ts, indexing=indexing), dtypes=ALL_DTYPES,
           errors=lambda rng: iter([err(([_a((2,), _F, rng)],), RuntimeError, 'torch.meshgrid: indexing must be one '
                                        'of "xy" or "ij", but received: ab', {"indexing": "ab"})])),
    OpInfo("cartesian_prod", _cartesian_samples, ref=_cartesian_ref, dtypes=ALL_DTYPES,
           errors=lambda rng: iter([err(([_a((2, 2), _F, rng), _a((3,), _F, rng)],), RuntimeError,
                                        "Expect a 1D vector, but got shape [2, 2]")])),
    OpInfo("combinations", _combinations_samples, ref=_combinations_ref, dtypes=ALL_DTYPES,
           errors=lambda rng: iter([err((_a((2, 2), _F, rng),), RuntimeError,
                                        "Expect a 1D vector, but got shape [2, 2]"),
                                    err((_a((3,), _F, rng), -1), RuntimeError,
                                        "Expect a non-negative number, but got -1")])),
    OpInfo("block_diag", _block_diag_samples, ref=_block_diag_ref, dtypes=ALL_DTYPES,
           errors=lambda rng: iter([err(([_a((2, 2, 2), _F, rng)],), RuntimeError, "torch.block_diag: Input tensors "
                                        "must have 2 or fewer dimensions. Input 0 has 3 dimensions")])),
    OpInfo("kron", _kron_samples, ref=np.kron, dtypes=NO_BOOL),
    OpInfo("tensordot", _tensordot_samples, ref=lambda a, b, da, db: np.tensordot(a, b, (da, db)), dtypes=FLOATING,
           errors=_tensordot_errors, tolerances={dt.float16: (1e-2, 1e-2), dt.bfloat16: (3e-2, 5e-2)}),
    OpInfo("linalg_cross", _cross_samples, ref=lambda a, b, dim=-1: np.cross(a, b, axis=dim), dtypes=NO_BOOL,
           errors=_cross_errors),
    OpInfo("cross", _cross_samples, ref=lambda a, b, dim=None: np.cross(a, b, axis=dim), dtypes=NO_BOOL),
    # float32 / float64: the half types go to the CPU's distance kernel, which refuses them (the errors above)
    OpInfo("cdist", _cdist_samples, ref=_cdist_ref, dtypes=(dt.float32, dt.float64), errors=_cdist_errors,
           tolerances={dt.float32: (1e-4, 1e-4)}),
    OpInfo("take_along_dim", _take_along_samples, ref=_take_along_ref, dtypes=ALL_DTYPES, errors=_take_along_errors),
    OpInfo("tensor_split.sections", lambda d, rng: _tensor_split_samples(d, rng, "sections"), ref=_tensor_split_ref,
           dtypes=ALL_DTYPES, errors=_tensor_split_errors),
    OpInfo("tensor_split.indices", lambda d, rng: _tensor_split_samples(d, rng, "indices"), ref=_tensor_split_ref,
           dtypes=ALL_DTYPES),
    OpInfo("tensor_split.tensor_indices_or_sections", lambda d, rng: _tensor_split_samples(d, rng, "tensor"),
           ref=_tensor_split_ref, op=_split_by_cpu_tensor, dtypes=ALL_DTYPES),
    OpInfo("repeat_interleave.self_int", _repeat_int_samples, ref=_repeat_ref, dtypes=ALL_DTYPES,
           errors=_repeat_errors),
    OpInfo("repeat_interleave.self_Tensor", _repeat_tensor_samples, ref=_repeat_ref, dtypes=ALL_DTYPES,
           errors=_repeat_tensor_errors, data_dependent=True),
    OpInfo("repeat_interleave.Tensor", _repeat_index_samples, ref=lambda r, output_size=None: np.repeat(
        np.arange(len(r)), r), dtypes=(dt.int64,), data_dependent=True),
    OpInfo("diff", _diff_samples, ref=_diff_ref, dtypes=ALL_DTYPES, errors=_diff_errors,
           tolerances={dt.float16: (1e-2, 1e-2), dt.bfloat16: (5e-2, 5e-2)}),  # stepwise rounding, as torch
    OpInfo("tril_indices", _tri_samples, ref=_tri_ref(np.tril_indices), op=on_probe_device("tril_indices"),
           dtypes=(dt.int64, dt.int32), errors=_tri_errors),
    OpInfo("triu_indices", _tri_samples, ref=_tri_ref(np.triu_indices), op=on_probe_device("triu_indices"),
           dtypes=(dt.int64, dt.int32)),
]
