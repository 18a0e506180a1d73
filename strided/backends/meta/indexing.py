"""Meta functions for indexing along one dim (index_select, gather, scatter, index_add, embedding),
one_hot, and the triangular masks tril/triu.

Note [Data-dependent checks]
Checks that need the *values* of an index tensor (an index out of bounds, a negative class in
one_hot) cannot run on meta tensors, which have no data; the CPU (and CUDA) kernels make them
after calling these functions. Everything decided by metadata alone (dtypes, dims, sizes) is
checked here, once, with torch's messages.
"""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from ...tensor import Tensor
from .common import check, new_output, wrap_dim
from .pointwise import check_scalar_fits

__all__ = ["TYPE_WORDS", "type_string", "nonempty_size", "one_hot_output", "scatter_output"]

# torch's ScalarType names, as its error messages spell dtypes.
TYPE_WORDS = {
    dt.float32: "Float", dt.float64: "Double", dt.float16: "Half", dt.bfloat16: "BFloat16",
    dt.int64: "Long", dt.int32: "Int", dt.int16: "Short", dt.int8: "Char", dt.uint8: "Byte", dt.bool: "Bool",
    dt.complex64: "ComplexFloat", dt.complex128: "ComplexDouble",
}
_INDEX_DTYPES = (dt.int64, dt.int32)


def type_string(t: Tensor) -> str:
    """torch's legacy tensor type name, e.g. ``strided.FloatTensor``."""
    return f"strided.{TYPE_WORDS[t.dtype]}Tensor"


def nonempty_size(t: Tensor, d: int) -> int:
    """``t.size(d)``, treating a 0-d tensor as 1-d of size 1 (torch's ensure_nonempty_size)."""
    return t._sizes[d] if t._sizes else 1


@kernel("Meta")
def _check_index_range(index, low, high, message, op, index_error=True):
    """Meta tensors hold no values to check (Note [Index bounds in compositions])."""
    if index.dtype not in (dt.int64, dt.int32):
        raise RuntimeError(f"{op}(): _check_index_range expects an int64 or int32 index, got {index.dtype.name}")


@kernel("Meta")
def index_select(self, dim, index):
    check(index.dtype in _INDEX_DTYPES, "index_select(): Expected dtype int32 or int64 for index")
    if len(index._sizes) > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, len(self._sizes))
    n = index.numel()
    if not self._sizes:
        check(n == 1, lambda: f"index_select(): Index to scalar can have only 1 value, got {n} value(s)")
        return new_output((), self.dtype, self.device)
    check(self._sizes[d] > 0 or n == 0, "index_select(): self indexing axis dim should be positive")
    return new_output(self._sizes[:d] + (n,) + self._sizes[d + 1:], self.dtype, self.device)


def _check_index_dims(self, index, d, name, src=None) -> None:
    """torch's gather/scatter shape checks (skipped for an empty index, as torch does)."""
    ndim = max(len(self._sizes), 1)
    check(max(len(index._sizes), 1) == ndim,
          f"Index tensor must have the same number of dimensions as {name} tensor")
    if src is not None:
        check(max(len(src._sizes), 1) == ndim,
              "Index tensor must have the same number of dimensions as src tensor")
    wrong = any(k != d and nonempty_size(index, k) > nonempty_size(self, k) for k in range(ndim))
    if src is not None:
        wrong = wrong or any(nonempty_size(index, k) > nonempty_size(src, k) for k in range(ndim))
    if wrong:
        message = (f"Expected index {list(index._sizes)} to be no larger than self {list(self._sizes)} "
                   f"apart from dimension {d}")
        if name == "input":
            k = next(k for k in range(ndim) if k != d and nonempty_size(index, k) > nonempty_size(self, k))
            message = (f"Size does not match at dimension {k} expected index {list(index._sizes)} to be no "
                       f"larger than self {list(self._sizes)} apart from dimension {d}")
        elif src is not None:
            message += f" and to be no larger size than src {list(src._sizes)}"
        raise RuntimeError(message)


@kernel("Meta")
def gather(self, dim, index, *, sparse_grad=False):
    d = wrap_dim(dim, len(self._sizes))
    if index.numel():
        check(index.dtype in _INDEX_DTYPES, "gather(): Expected dtype int32/int64 for index")
        _check_index_dims(self, index, d, "input")
    return new_output(index._sizes, self.dtype, self.device)


def scatter_output(self, dim, index, src) -> Tensor:
    """Validate a scatter (``src`` a Tensor or a Scalar value); its output, shaped like ``self``."""
    d = wrap_dim(dim, len(self._sizes))
    if index.numel():
        check(index.dtype in _INDEX_DTYPES, "scatter(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor):
        check(src.dtype is self.dtype, "scatter(): Expected self.dtype to be equal to src.dtype")
    else:
        check_scalar_fits(src, self.dtype)  # torch's overflow error, not a wrapped or truncated value
    if index.numel():
        _check_index_dims(self, index, d, "self", src if isinstance(src, Tensor) else None)
    return new_output(self._sizes, self.dtype, self.device)


@kernel("Meta")
def scatter(self, dim, index, src=None, value=None):
    """``scatter.src`` and ``scatter.value`` (one kernel: a Scalar in ``src``'s place is the value)."""
    return scatter_output(self, dim, index, src if value is None else value)


@kernel("Meta")
def scatter_add(self, dim, index, src):
    return scatter_output(self, dim, index, src)


@kernel("Meta")
def index_add(self, dim, index, source, *, alpha=1):
    check_scalar_fits(alpha, self.dtype)
    d = wrap_dim(dim, len(self._sizes))
    if len(index._sizes) > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {len(index._sizes)} with type: "
            f"{TYPE_WORDS[index.dtype]} and size: {list(index._sizes)}"
        )
    check(index.dtype in _INDEX_DTYPES,
          lambda: f"index_add_(): Expected dtype int32/int64 for index but got: {TYPE_WORDS[index.dtype]}")
    check(self.dtype is source.dtype,
          lambda: f"index_add_(): self ({TYPE_WORDS[self.dtype]}) and source ({TYPE_WORDS[source.dtype]}) "
                  "must have the same scalar type")
    check(d == 0 or d < len(source._sizes),
          lambda: f"index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim "
                  f"{len(source._sizes)}")
    n = index.numel()
    if not source._sizes:
        if n != 1:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    else:
        check(n == source._sizes[d],
              lambda: f"index_add_(): Number of indices ({n}) should be equal to source.size(dim): "
                      f"({source._sizes[d]}), for dim: {d}")
    self_rest, source_rest = self._sizes, source._sizes
    if self._sizes and source._sizes:
        self_rest = self._sizes[:d] + self._sizes[d + 1:]
        source_rest = source._sizes[:d] + source._sizes[d + 1:]
    check(self_rest == source_rest,
          lambda: "source tensor shape must match self tensor shape, excluding the specified dimension. "
                  f"Got self.shape = {list(self._sizes)} source.shape = {list(source._sizes)}")
    return new_output(self._sizes, self.dtype, self.device)


@kernel("Meta")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    check(len(weight._sizes) == 2, "'weight' must be 2-D")
    check(indices.dtype in _INDEX_DTYPES,
          lambda: "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                  f"Long, Int; but got {type_string(indices)} instead (while checking arguments for "
                  "embedding)")
    return new_output(indices._sizes + (weight._sizes[1],), weight.dtype, weight.device)


def one_hot_output(self, num_classes) -> Tensor:
    """one_hot's output for a known class count (``num_classes >= 0``, or any for empty input)."""
    return new_output(self._sizes + (num_classes,), dt.int64, self.device)


@kernel("Meta")
def one_hot(self, num_classes=-1):
    check(self.dtype is dt.int64, "one_hot is only applicable to index tensor of type LongTensor.")
    if self.numel() == 0:
        check(num_classes > 0, "Can not infer total number of classes from empty tensor.")
        return one_hot_output(self, num_classes)
    # Non-negative classes are never smaller than num_classes <= 0 (-1 infers the count).
    check(num_classes > 0 or num_classes == -1, "Class values must be smaller than num_classes.")
    if num_classes == -1:
        raise RuntimeError(
            "one_hot(): num_classes=-1 infers the class count from the values, which meta tensors do "
            "not have (Tensor.item() cannot be called on meta tensors)"
        )
    return one_hot_output(self, num_classes)


def _triangle(self, name) -> Tensor:
    check(len(self._sizes) >= 2, lambda: f"{name}: input tensor must have at least 2 dimensions")
    return new_output(self._sizes, self.dtype, self.device)


@kernel("Meta")
def tril(self, diagonal=0):
    return _triangle(self, "tril")


@kernel("Meta")
def triu(self, diagonal=0):
    return _triangle(self, "triu")



# The rest of this group's Meta functions live in sibling modules; importing them here registers
# them with the backend (``backends/meta/__init__`` imports this module).
from . import advanced_indexing, joining, sorting  # noqa: E402, F401


@kernel("Meta")
def nonzero(self):
    raise NotImplementedError(
        "aten::nonzero: the number of nonzero elements is data, which meta tensors (no data) cannot compute"
    )
