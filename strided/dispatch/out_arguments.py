"""``out=`` on every operator: the result written into a tensor the caller provides (Note [Out arguments]).

Note [Out arguments]
torch gives nearly every function an ``out=`` overload (``exp.out``, ``sum.IntList_out``, ``max.dim_max``). strided
declares ``.out`` schemas only where a kernel writes into ``out`` itself (``add.out``, ``mm.out``, ``cat.out``: the
YAML's ``autogen``); for every other operator an ``out=`` keyword reaching the packet (``packet.py``) comes here,
and the rules are torch's:

* ``out`` is a Tensor (a tuple of them for ops returning several), else torch's TypeError; ``out=None`` is no out;
* no autograd: with grad mode on, an argument or ``out`` that requires grad raises torch's error;
* factories (ops taking ``dtype`` / ``device`` options and no tensor) build in ``out``'s dtype and device; an
  explicit different dtype is refused in torch's words; sum / prod / cumsum / cumprod (and mean into a floating
  ``out``) without ``dtype`` compute in ``out``'s dtype, as torch's;
* the result is computed by the functional overload and copied into ``out``: its dtype must be castable to
  ``out``'s (each of several outputs must match exactly, as torch's ``Expected out tensor to have dtype``); a
  wrong shape resizes ``out`` with torch's deprecation warning when it held elements; a device other than the
  result's, or an ``out`` with repeated elements (expanded), is refused.

The copy costs one pass over the output; ops whose speed matters with ``out=`` declare a real ``.out`` kernel.
"""

from __future__ import annotations

import warnings

from ..backends.meta.pointwise import scalar_type_name as dtype_word

__all__ = ["call_with_out", "run_with_out", "write_out", "accepting_out"]

_FACTORY_OPTIONS = frozenset(("dtype", "device", "layout"))
# the reductions whose out= gives their dtype when none is passed (torch's get_dtype_from_result): sum(x, 1, out=long)
# casts x to int64 and sums, where a computed float result could not be written into a long out; mean(x, 1,
# out=double) computes in double
_DTYPE_FROM_OUT = frozenset(("sum", "prod", "cumsum", "cumprod", "mean"))


def _tensors(values):
    from ..tensor import Tensor

    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (t for t in v if isinstance(t, Tensor))


def _is_factory(packet) -> bool:
    return any(_FACTORY_OPTIONS <= {a.name for a in op.schema.arguments if a.kwarg_only} for op in packet._ordered)


def call_with_out(packet, args, kwargs):
    """``packet(*args, **kwargs)`` with ``kwargs["out"]`` given and no declared out overload (Note [Out arguments])."""
    from ..ops.memory_overlap import any_pointwise, check_no_partial_overlap
    from ..tensor import Tensor

    kwargs = dict(kwargs)
    out = kwargs.pop("out")
    if out is None:
        return packet(*args, **kwargs)
    factory = _is_factory(packet) and next(_tensors(args), None) is None  # not any(): a tensor's truth is ambiguous
    if isinstance(out, Tensor) and any_pointwise(packet):  # Note [Partial overlap]
        check_no_partial_overlap(out, args, kwargs)
    return run_with_out(packet, packet.name, args, kwargs, out, factory)


def run_with_out(fn, name: str, args, kwargs, out, factory: bool = False, key: str | None = None):
    """``fn(*args, **kwargs)`` written into ``out`` (a tensor, or a tuple for several results) with torch's rules
    (Note [Out arguments]); ``factory``: ``fn`` takes ``dtype`` / ``device`` and builds in ``out``'s; ``key``: the
    name ``out_dtypes`` knows the function by when not ``name`` (``linalg.norm``)."""
    from ..ops.memory_overlap import check_out_overlap
    from ..tensor import Tensor
    from .dispatcher import grad_mode

    outs = tuple(out) if isinstance(out, (list, tuple)) else (out,)
    if not outs or not all(isinstance(o, Tensor) for o in outs):
        bad = out if not isinstance(out, (list, tuple)) else next((o for o in outs if not isinstance(o, Tensor)), out)
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(bad).__name__}")
    check_out_overlap(name, out, args, kwargs)  # Note [Out overlap]
    if grad_mode.enabled and any(t._requires_grad for t in (*_tensors(args), *_tensors(kwargs.values()), *outs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, but "
                           "one of the arguments requires grad.")
    if factory and len(outs) == 1:
        kwargs = dict(kwargs)
        given = kwargs.get("dtype")
        if given is not None:
            from ..dtypes import to_dtype

            if to_dtype(given) is not outs[0].dtype:
                raise RuntimeError(f"dtype {dtype_word(to_dtype(given))} does not match dtype of out parameter "
                                   f"({dtype_word(outs[0].dtype)})")
        kwargs["dtype"] = outs[0].dtype
        if kwargs.get("device") is None:
            kwargs["device"] = outs[0].device
    elif name in _DTYPE_FROM_OUT and len(outs) == 1 and kwargs.get("dtype") is None and (
            name != "mean" or outs[0].dtype.is_floating_point or outs[0].dtype.is_complex):
        kwargs = {**kwargs, "dtype": outs[0].dtype}  # mean into an integer out: the cast check below refuses
    result = fn(*args, **kwargs)
    if isinstance(result, Tensor):
        if len(outs) != 1 or isinstance(out, (list, tuple)):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        return write_out(result, outs[0], key or name)
    if len(outs) != len(result):
        raise RuntimeError(f"{name}(): expected {len(result)} out tensors, got {len(outs)}")
    from .out_dtypes import CASTING_TUPLE_OUTS, tuple_out_dtype_error

    for i, (r, o) in enumerate(zip(result, outs)):
        if r.dtype is not o.dtype and (key or name) not in CASTING_TUPLE_OUTS:
            raise tuple_out_dtype_error(key or name, i, r.dtype, o.dtype)  # Note [Exact out dtypes]
    written = tuple(write_out(r, o) for r, o in zip(result, outs))
    return type(result)(written) if hasattr(type(result), "_fields") else written


def write_out(result, out, name: str | None = None):
    """Copy ``result`` into ``out`` with torch's out= checks: the dtype operator ``name`` accepts (Note [Exact out
    dtypes]), castable, the same device, resize (warning when ``out`` held elements), no internal overlap."""
    from ..dtypes import can_cast
    from ..ops.memory_overlap import check_no_internal_overlap
    from .out_dtypes import check_out_dtype

    check_out_dtype(name, result.dtype, out.dtype)
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {dtype_word(result.dtype)} can't be cast to the desired output type "
                           f"{dtype_word(out.dtype)}")
    if result.device != out.device:
        raise RuntimeError(f"Attempting to copy from device {result.device} to device {out.device}, but cross-device "
                           "copies are not allowed!")
    if out._sizes != result._sizes:
        if out.numel() != 0:
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out._sizes)}, "
                          f"which does not match the required output shape {list(result._sizes)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=4)
        out.resize_(result._sizes)
    check_no_internal_overlap(out)
    return out.copy_(result)


def accepting_out(namespace: dict, names, factory: bool = False, prefix: str = "") -> None:
    """Give the Python functions ``names`` of a module's ``namespace`` torch's ``out=`` keyword (Note [Out
    arguments]); a call without it goes straight to the function. ``prefix``: the module's torch namespace
    (``linalg.``), for the functions' out dtype rules (Note [Exact out dtypes])."""
    import functools

    for name in names:
        fn = namespace[name]

        def wrapper(*args, out=None, _fn=fn, _name=name, **kwargs):
            if out is None:
                return _fn(*args, **kwargs)
            return run_with_out(_fn, _name, args, kwargs, out, factory, prefix + _name)

        namespace[name] = functools.wraps(fn)(wrapper)
