"""What a backward node keeps of its op's inputs and outputs: saved tensors, their metadata alone
(``Geometry``) or plain values, and only what the formulas that will run read (Note [Saved when needed])."""

from __future__ import annotations

from ..tensor import Tensor
from .graph import SavedTensor

__all__ = ["Geometry", "save_value", "saved_inputs", "needed_how", "needed_mask"]


class Geometry:
    """The metadata of a tensor a formula reads only through ``.shape``/``.stride()``/``.dtype``/``.device``."""

    __slots__ = ("_sizes", "_strides", "dtype", "device", "_offset", "_storage_nbytes")

    def __init__(self, t: Tensor):
        self._sizes, self._strides, self.dtype, self.device = t._sizes, t._strides, t.dtype, t.device
        self._offset, self._storage_nbytes = t._offset, t._storage._nbytes

    @property
    def storage_elements(self) -> int:
        """Elements of the tensor's dtype its storage holds (as_strided's backward reads it)."""
        return self._storage_nbytes // self.dtype.itemsize

    @property
    def shape(self) -> tuple:
        return self._sizes

    @property
    def ndim(self) -> int:
        return len(self._sizes)

    def dim(self) -> int:
        return len(self._sizes)

    def size(self, dim=None):
        return self._sizes if dim is None else self._sizes[dim]

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def numel(self) -> int:
        n = 1
        for s in self._sizes:
            n *= s
        return n


def save_value(value, how: str, output_nr=None):
    if value is None or how == "value":
        return value
    if isinstance(value, (list, tuple)):
        return [save_value(v, how, output_nr) for v in value]
    if not isinstance(value, Tensor):
        return value
    if how == "geometry":
        return Geometry(value)
    return SavedTensor(value, output_nr)


def needed_mask(needs) -> int:
    """Bit k set when input k needs a gradient (callers test ``all(needs)`` first: then -1, every bit)."""
    mask = 0
    for k, need in enumerate(needs):
        if need:
            mask |= 1 << k
    return mask


# Note [Saved when needed]
# As torch's generated autograd code, an entry is saved only when a formula that reads it will run: one
# for an input that needs a gradient, and only as its metadata (a Geometry) when those formulas read no
# more. ``x * w`` with ``w`` requiring grad and ``x`` not saves x (w's gradient reads it) but not w, which
# then keeps no reference to w and no version check on it; in place, no copy of an old self that no
# running formula reads.
def needed_how(users, how: str, mask: int):
    """How to save an entry read by ``users`` (tensor bits, metadata bits) when the formulas of ``mask``
    run: ``how`` itself, "geometry" when they read only its metadata, None when none of them reads it."""
    tensor_bits, meta_bits = users
    if tensor_bits & mask:
        return how
    if meta_bits & mask:
        return "geometry" if how == "tensor" else how
    return None


def saved_inputs(info, bound, self_edge, needs=None) -> list:
    """What the formulas of the inputs that need a gradient read (outputs: None, filled in by ``_attach``)."""
    if needs is not None and not all(needs):
        return _saved_for(info, bound, self_edge, needed_mask(needs))
    saved = []  # the common case: every formula may run, every entry is saved as its formulas read it
    for _name, pos, how in info.saved:
        if pos is None:
            saved.append(None)  # an output: filled in by _attach
            continue
        saved.append(_saved_entry(bound[pos], pos, how, self_edge))
    return saved


def _saved_for(info, bound, self_edge, mask: int) -> list:
    """``saved_inputs`` when only the formulas of ``mask``'s inputs run (Note [Saved when needed])."""
    saved = []
    users = info.saved_users
    for k, (_name, pos, how) in enumerate(info.saved):
        how = None if pos is None else needed_how(users[k], how, mask)
        saved.append(None if how is None else _saved_entry(bound[pos], pos, how, self_edge))
    return saved


def _saved_entry(value, pos, how, self_edge):
    if type(value) is Tensor and how != "value":
        if how == "geometry":
            return Geometry(value)
        if pos == 0 and self_edge is not None:
            value = value.clone()  # in-place: the old value of self
        return SavedTensor(value)
    return save_value(value, how)
