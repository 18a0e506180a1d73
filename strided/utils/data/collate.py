"""``default_collate`` (a list of samples -> one batch) and ``default_convert`` (one sample's NumPy
arrays and numbers -> tensors), with torch's rules for every container and leaf type."""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable

import numpy as np

from ... import as_tensor, float64, stack, tensor
from ...tensor import Tensor

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# NumPy dtype strings of byte strings, unicode, void and objects: arrays of these stay arrays
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _numpy_to_tensor(data) -> Tensor:
    """A NumPy array (shared), scalar or list of scalars as a tensor of the dtype torch would pick
    (Note [NumPy scalars in tensor()] in strided/factories.py)."""
    return as_tensor(data)


def _is_numpy(obj) -> bool:
    t = type(obj)
    return t.__module__ == "numpy" and t.__name__ not in ("str_", "string_")


def default_convert(data):
    """Turn the NumPy arrays and NumPy scalars in ``data`` into tensors, recursing into mappings,
    namedtuples and sequences; everything else (tensors, Python numbers, str) is returned as is.

    The DataLoader's ``collate_fn`` when automatic batching is off (``batch_size=None``). As in
    torch, a plain tuple comes back as a list and arrays of strings or objects stay arrays.
    """
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if isinstance(data, np.ndarray) and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return _numpy_to_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                # a clone keeps the mapping type's extra state (OrderedDict, defaultdict's factory)
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:  # no copy()/update() or no constructor from a dict
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # torch's backwards compatibility: tuples become lists
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:  # e.g. range
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None = None):
    """Merge a list of samples into a batch, recursing into containers.

    Parameters
    ----------
    batch : list
        The samples; all have the structure of ``batch[0]``.
    collate_fn_map : dict, optional
        Leaf handlers: ``{type or tuple of types: fn(batch, *, collate_fn_map)}``, looked up first by
        the exact type of ``batch[0]``, then by ``isinstance`` in insertion order. Extend a copy of
        ``default_collate_fn_map`` to teach ``collate`` a new leaf type.
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        merged = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(merged)
                return clone
            return elem_type(merged)
        except TypeError:
            return merged
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        merged = [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        if isinstance(elem, tuple):
            return merged  # torch's backwards compatibility: tuples become lists
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, value in enumerate(merged):
                    clone[i] = value
                return clone
            return elem_type(merged)
        except TypeError:
            return merged
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None) -> Tensor:
    """Tensors of one shape -> one tensor with a new leading batch dimension."""
    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None) -> Tensor:
    return _numpy_to_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None) -> Tensor:
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None) -> Tensor:
    return tensor(batch)  # int64, or bool for a batch of bools


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,  # and np.memmap, a subclass
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,  # NumPy's string scalars are left out
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Merge a list of samples into a batch (the DataLoader's ``collate_fn`` with automatic batching).

    Tensors are stacked along a new first dimension; NumPy arrays become tensors and are stacked;
    NumPy scalars become a 1-d tensor of their dtype; Python floats a float64 tensor, ints an int64
    tensor, bools a bool tensor; str and bytes stay a list. Mappings (per key), namedtuples and
    sequences (per position; tuples come back as lists) are collated recursively::

        default_collate([{"x": st.ones(2), "y": 0}, {"x": st.zeros(2), "y": 1}])
        # {"x": tensor([[1., 1.], [0., 0.]]), "y": tensor([0, 1])}
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
