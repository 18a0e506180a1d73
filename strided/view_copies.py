"""The ``*_copy`` functional forms of the view ops (``torch.permute_copy``, ``view_copy``, ``narrow_copy``...).

Note [View copies]
torch generates one ``<view>_copy`` op per view op for functionalization: the same result as the view, in
new memory, contiguous. Here each is the view followed by ``contiguous`` (a copy when the view already is
contiguous), so autograd goes through the view's formula and the copy's; a list-returning view gives a tuple
of copies. ``alias_copy`` and ``detach_copy`` always copy (their views would share storage).
"""

from __future__ import annotations

from .dispatch.out_arguments import accepting_out as _accepting_out
from .ops import bound as _ops
from .tensor import Tensor

__all__ = ["alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy", "narrow_copy",
           "permute_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy",
           "t_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy",
           "view_as_real_copy", "view_as_complex_copy"]


def _fresh(view: Tensor) -> Tensor:
    """``view`` in new contiguous memory (Note [View copies])."""
    return _ops.clone(view, memory_format="contiguous_format")


def alias_copy(input: Tensor) -> Tensor:  # noqa: A002 - torch's argument names throughout
    """A contiguous copy of ``input``."""
    return _fresh(input)


def detach_copy(input: Tensor) -> Tensor:  # noqa: A002
    """A contiguous copy of ``input`` outside the autograd graph."""
    return _fresh(_ops.detach(input))


def as_strided_copy(input: Tensor, size, stride, storage_offset=None) -> Tensor:  # noqa: A002
    return _fresh(_ops.as_strided(input, size, stride, storage_offset))


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    return _fresh(_ops.diagonal(input, offset, dim1, dim2))


def expand_copy(input: Tensor, size, *, implicit: bool = False) -> Tensor:  # noqa: A002
    return _fresh(_ops.expand(input, size))


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:  # noqa: A002
    if isinstance(input, Tensor) and input.dim() and isinstance(length, int) and length < 0:
        from .backends.meta.common import wrap_dim

        size = input.shape[wrap_dim(dim, input.dim())]
        first = start + size if isinstance(start, int) and start < 0 else start
        raise RuntimeError(f"start ({first}) + length ({length}) exceeds dimension size ({size}).")  # torch's words
    return _fresh(_ops.narrow(input, dim, start, length))


def permute_copy(input: Tensor, dims) -> Tensor:  # noqa: A002
    return _fresh(_ops.permute(input, dims))


def select_copy(input: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    return _fresh(_ops.select(input, dim, index))


def slice_copy(input: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:  # noqa: A002
    return _fresh(_ops.slice(input, dim, start, end, step))


def split_copy(input: Tensor, split_size, dim: int = 0) -> tuple:  # noqa: A002
    return tuple(_fresh(t) for t in input.split(split_size, dim))


def split_with_sizes_copy(input: Tensor, split_sizes, dim: int = 0) -> tuple:  # noqa: A002
    return tuple(_fresh(t) for t in _ops.split_with_sizes(input, split_sizes, dim))


def squeeze_copy(input: Tensor, dim=None) -> Tensor:  # noqa: A002
    return _fresh(_ops.squeeze(input) if dim is None else _ops.squeeze(input, dim))


def t_copy(input: Tensor) -> Tensor:  # noqa: A002
    return _fresh(_ops.t(input))


def transpose_copy(input: Tensor, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    return _fresh(_ops.transpose(input, dim0, dim1))


def unbind_copy(input: Tensor, dim: int = 0) -> tuple:  # noqa: A002
    return tuple(_fresh(t) for t in _ops.unbind(input, dim))


def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:  # noqa: A002
    return _fresh(input.unfold(dimension, size, step))


def unsqueeze_copy(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    return _fresh(_ops.unsqueeze(input, dim))


def view_copy(input: Tensor, size) -> Tensor:  # noqa: A002
    """``input.view(size)`` in new memory (``size`` a shape, or a dtype as ``Tensor.view(dtype)``)."""
    return _fresh(input.view(size))


def view_as_real_copy(input: Tensor) -> Tensor:  # noqa: A002
    return _fresh(_ops.view_as_real(input))


def view_as_complex_copy(input: Tensor) -> Tensor:  # noqa: A002
    return _fresh(_ops.view_as_complex(input))


def _writing_pieces(fn, out_name: str):
    """A list-returning copy given torch's ``out=``: a list of tensors, one per piece, written in turn; the call
    then returns None, as torch's ``Tensor(a!)[] out`` overloads do."""
    import functools

    from .dispatch.out_arguments import write_out

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if not isinstance(out, (list, tuple)) or not all(isinstance(o, Tensor) for o in out):
            raise TypeError(f"{fn.__name__}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        pieces = fn(*args, **kwargs)
        if len(out) != len(pieces):
            raise RuntimeError(f"{out_name} expected an out= argument of size {len(pieces)}, got size {len(out)}")
        for piece, o in zip(pieces, out):
            write_out(piece, o, fn.__name__)  # Note [Exact out dtypes]
        return None

    return wrapper


split_copy = _writing_pieces(split_copy, "split_copy_Tensor_out()")
split_with_sizes_copy = _writing_pieces(split_with_sizes_copy, "split_with_sizes_copy_out")
unbind_copy = _writing_pieces(unbind_copy, "unbind_copy_int_out")
# Note [Out arguments]
_accepting_out(globals(), [n for n in __all__ if n not in ("split_copy", "split_with_sizes_copy", "unbind_copy")])
