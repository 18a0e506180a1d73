"""OpInfos: shapes and joining (``atleast_2d``, ``hstack``, ``hsplit``...),
``Tensor.unfold``, the ``*_scatter`` ops and the in-place views (``squeeze_``, ``t_``...); gathered into
``aliases_inplace.OPS``."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..opinfo import ALL_DTYPES, OpInfo, SampleInput, make_arg
from . import views
from .helpers import aliasing, err
from .pointwise_samples import _writable_copy

_BASES = {info.name: info for info in views.OPS}


# ---------------------------------------------------------------- shapes and joining
def _atleast_samples(dtype, rng):
    for shape in ((), (3,), (2, 3), (2, 3, 4)):
        yield SampleInput((make_arg(shape, dtype, rng=rng),), {}, f"{shape}")


def _atleast_seq_samples(dtype, rng):
    yield SampleInput(([make_arg(s, dtype, rng=rng) for s in ((), (3,), (2, 3))],), {}, "mixed ranks")


def _stack_samples(shapes_list):
    def samples(dtype, rng):
        for shapes in shapes_list:
            yield SampleInput(([make_arg(s, dtype, rng=rng, noncontiguous=i == 1) for i, s in enumerate(shapes)],),
                              {}, f"{shapes}")

    return samples


def _stack_errors(name):
    return lambda rng: [err(([],), RuntimeError, f"{name} expects a non-empty TensorList")]


_ATLEAST = {1: np.atleast_1d, 2: np.atleast_2d, 3: np.atleast_3d}
JOINING = []
for _n, _fn in _ATLEAST.items():
    JOINING.append(OpInfo(f"atleast_{_n}d", _atleast_samples, ref=_fn, dtypes=ALL_DTYPES))
    JOINING.append(OpInfo(f"atleast_{_n}d.Sequence", _atleast_seq_samples, ref=lambda ts, _fn=_fn: [_fn(t) for t in ts],
                          dtypes=ALL_DTYPES))
JOINING += [
    OpInfo("hstack", _stack_samples([((3,), (2,)), ((2, 3), (2, 1)), ((), ())]), ref=np.hstack, dtypes=ALL_DTYPES,
           errors=_stack_errors("hstack")),
    OpInfo("vstack", _stack_samples([((3,), (3,)), ((2, 3), (1, 3))]), ref=np.vstack, dtypes=ALL_DTYPES,
           errors=_stack_errors("vstack")),
    OpInfo("row_stack", _stack_samples([((3,), (3,)), ((2, 3), (1, 3))]), ref=np.vstack, dtypes=ALL_DTYPES),
    OpInfo("dstack", _stack_samples([((3,), (3,)), ((2, 3), (2, 3)), ((2, 3, 1), (2, 3, 2))]), ref=np.dstack,
           dtypes=ALL_DTYPES, errors=_stack_errors("dstack")),
    OpInfo("column_stack", _stack_samples([((3,), (3, 2)), ((), ()), ((2, 3), (2,))]), ref=np.column_stack,
           dtypes=ALL_DTYPES, errors=_stack_errors("column_stack")),
]


_SPLITS = {"hsplit": (np.hsplit, (3, 4), 2), "vsplit": (np.vsplit, (4, 3), 2), "dsplit": (np.dsplit, (2, 3, 4), 2)}


def _split_samples(shape, sections, array):
    def samples(dtype, rng):
        x = make_arg(shape, dtype, rng=rng, noncontiguous=True)
        yield SampleInput((x, [1, 3] if array else sections), {}, "indices" if array else "sections")
        if not array:
            yield SampleInput((make_arg((4,), dtype, rng=rng) if shape == (3, 4) else x, 1), {}, "one section")

    return samples


def _split_errors(name):
    def errors(rng):
        if name == "hsplit":
            yield err((make_arg((), rng=rng), 2), RuntimeError, "torch.hsplit requires a tensor with at least 1 "
                      "dimension, but got a tensor with 0 dimensions!")
            yield err((make_arg((3, 3), rng=rng), 2), RuntimeError, "torch.hsplit attempted to split along dimension "
                      "1, but the size of the dimension 3 is not divisible by the split_size 2!")
        else:
            least = 2 if name == "vsplit" else 3
            yield err((make_arg((3,) * (least - 1), rng=rng), 2), RuntimeError, f"torch.{name} requires a tensor "
                      f"with at least {least} dimension, but got a tensor with {least - 1} dimensions!")

    return errors


for _name, (_fn, _shape, _sections) in _SPLITS.items():
    JOINING.append(OpInfo(f"{_name}.int", _split_samples(_shape, _sections, False), ref=_fn, dtypes=ALL_DTYPES,
                          op=aliasing(f"{_name}.int"), errors=_split_errors(_name)))
    JOINING.append(OpInfo(f"{_name}.array", _split_samples(_shape, _sections, True), ref=_fn, dtypes=ALL_DTYPES,
                          op=aliasing(f"{_name}.array")))


def _unfold_samples(dtype, rng):
    x = make_arg((3, 5), dtype, rng=rng, noncontiguous=True)
    yield SampleInput((x, 1, 2, 1), {}, "size 2 step 1")
    yield SampleInput((x, -1, 3, 2), {}, "size 3 step 2")
    yield SampleInput((x, 0, 3, 3), {}, "whole dim")
    yield SampleInput((make_arg((), dtype, rng=rng), 0, 1, 1), {}, "0-dim")
    yield SampleInput((make_arg((4,), dtype, rng=rng), 0, 0, 1), {}, "size 0")


def _unfold_ref(a, dimension, size, step):
    if a.ndim == 0:
        return a.reshape(1)
    w = np.lib.stride_tricks.sliding_window_view(a, size, axis=dimension)
    index = [slice(None)] * a.ndim
    index[dimension] = slice(None, None, step)
    return w[tuple(index)]


def _unfold_errors(rng):
    x = make_arg((3,), rng=rng)
    yield err((x, 0, 4, 1), RuntimeError, "maximum size for tensor at dimension 0 is 3 but size is 4")
    yield err((x, 0, 2, 0), RuntimeError, "step is 0 but must be > 0")


# ---------------------------------------------------------------- scatters
def _diagonal_scatter_samples(dtype, rng):
    yield SampleInput((make_arg((3, 3), dtype, rng=rng, noncontiguous=True), make_arg((3,), dtype, rng=rng)), {},
                      "main")
    yield SampleInput((make_arg((3, 4), dtype, rng=rng), make_arg((3,), dtype, rng=rng), 1), {}, "offset 1")
    yield SampleInput((make_arg((2, 3, 4), dtype, rng=rng), make_arg((3, 1), dtype, rng=rng), -1, 0, 2), {},
                      "offset -1 dims 0, 2")


def _diagonal_scatter_ref(a, src, offset=0, dim1=0, dim2=1):
    out = a.copy()
    view = np.moveaxis(out, (dim1, dim2), (-2, -1))
    for i in range(src.shape[-1]):
        view[..., i + max(-offset, 0), i + max(offset, 0)] = src[..., i]
    return out


def _select_scatter_samples(dtype, rng):
    yield SampleInput((make_arg((3, 4), dtype, rng=rng, noncontiguous=True), make_arg((4,), dtype, rng=rng), 0, 1),
                      {}, "row")
    yield SampleInput((make_arg((3, 4), dtype, rng=rng), make_arg((3,), dtype, rng=rng), 1, -1), {}, "last column")


def _select_scatter_ref(a, src, dim, index):
    out = a.copy()
    np.moveaxis(out, dim, 0)[index] = src
    return out


def _slice_scatter_samples(dtype, rng):
    yield SampleInput((make_arg((5, 2), dtype, rng=rng), make_arg((2, 2), dtype, rng=rng), 0, 1, 3), {}, "rows 1:3")
    yield SampleInput((make_arg((2, 6), dtype, rng=rng, noncontiguous=True), make_arg((2, 3), dtype, rng=rng), 1,
                       None, None, 2), {}, "step 2")


def _slice_scatter_ref(a, src, dim=0, start=None, end=None, step=1):
    out = a.copy()
    index = [slice(None)] * a.ndim
    index[dim] = slice(start, end, step)
    out[tuple(index)] = src
    return out


def _as_strided_scatter_samples(dtype, rng):
    yield SampleInput((make_arg((3, 3), dtype, rng=rng), make_arg((3,), dtype, rng=rng), (3,), (4,)), {}, "diagonal")
    yield SampleInput((make_arg((6,), dtype, rng=rng), make_arg((2, 2), dtype, rng=rng), (2, 2), (1, 2), 1), {},
                      "offset 1")


def _as_strided_scatter_ref(a, src, size, stride, storage_offset=0):
    out = a.copy()
    flat = out.reshape(-1)
    item = flat.itemsize
    view = np.lib.stride_tricks.as_strided(flat[storage_offset or 0:], size, [s * item for s in stride])
    view[...] = src
    return out


def _scatter_errors(rng):
    yield err((make_arg((3, 4), rng=rng), make_arg((3,), rng=rng), 0, 0), RuntimeError,
              "expected src to have a size equal to the slice of self. src size = [3], slice size = [4]")


SCATTERS = [
    OpInfo("unfold", _unfold_samples, ref=_unfold_ref, op=aliasing("unfold"), dtypes=ALL_DTYPES,
           errors=_unfold_errors),
    OpInfo("diagonal_scatter", _diagonal_scatter_samples, ref=_diagonal_scatter_ref, dtypes=ALL_DTYPES),
    OpInfo("select_scatter", _select_scatter_samples, ref=_select_scatter_ref, dtypes=ALL_DTYPES,
           errors=_scatter_errors),
    OpInfo("slice_scatter", _slice_scatter_samples, ref=_slice_scatter_ref, dtypes=ALL_DTYPES),
    OpInfo("as_strided_scatter", _as_strided_scatter_samples, ref=_as_strided_scatter_ref, dtypes=ALL_DTYPES),
]


# ---------------------------------------------------------------- in-place views
def _inplace_view(base: str, name: str, method: str) -> OpInfo:
    """``self.<method>(...)`` on a copy of ``self``: the result is ``self`` with the view's metadata."""
    info = _BASES[base]

    def op(self, *args, **kwargs):
        target = _writable_copy(self)
        out = getattr(target, method)(*args, **kwargs)
        assert out is target, f"{name} must return self"
        return out

    return OpInfo(name, info.samples, ref=info.ref, op=op, dtypes=info.dtypes, errors=None)


def _as_strided_inplace_samples(dtype, rng):
    # as_strided addresses the storage: contiguous copies at offset 0 (as the as_strided OpInfo)
    for s in _BASES["as_strided"].samples(dtype, rng):
        if s.args[0].is_contiguous() and s.args[0].storage_offset() == 0:
            yield s


VIEWS_INPLACE = [
    _inplace_view("squeeze", "squeeze_", "squeeze_"), _inplace_view("squeeze.dims", "squeeze_.dims", "squeeze_"),
    _inplace_view("unsqueeze", "unsqueeze_", "unsqueeze_"), _inplace_view("t", "t_", "t_"),
    _inplace_view("transpose.int", "transpose_", "transpose_"),
    _inplace_view("transpose.int", "swapaxes_", "swapaxes_"), _inplace_view("transpose.int", "swapdims_", "swapdims_"),
    dataclasses.replace(_inplace_view("as_strided", "as_strided_", "as_strided_"),
                        samples=_as_strided_inplace_samples),
]

OPS: list = JOINING + SCATTERS + VIEWS_INPLACE
