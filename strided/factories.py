"""Public factory functions with torch's Python signatures (``zeros(2, 3)`` and ``zeros((2, 3))``).

Each normalizes its arguments and calls the operator (``strided.ops.aten.zeros`` ...), so the
dispatcher picks the backend from ``device=``.
"""

from __future__ import annotations

import numbers

import numpy as np

from .ops import bound as ops
from .tensor import Tensor
from .tensor_data import _warn_not_writable, as_tensor, from_numpy, tensor, wrap_array  # noqa: F401
from .tensor_data import finish_new_tensor as _finish

__all__ = [
    "empty", "empty_strided", "zeros", "ones", "full", "arange", "linspace", "eye", "rand", "randn",
    "randint", "tensor", "as_tensor", "from_numpy", "empty_like", "zeros_like", "ones_like", "full_like",
    "rand_like", "randn_like", "bernoulli",
]


def _size(size, op):
    """``(2, 3)`` from ``f(2, 3)`` or ``f((2, 3))``; other element types are checked by the kernel."""
    if len(size) == 1 and size[0].__class__ is not int:
        first = size[0]
        if isinstance(first, (list, tuple)):
            size = tuple(first)
    for s in size:
        if s.__class__ is not int:
            break
    else:
        return size
    for s in size:
        if isinstance(s, bool) or not (isinstance(s, (int, np.integer)) or hasattr(s, "__index__")):
            raise TypeError(
                f"{op}(): argument 'size' must be tuple of ints, but found element of type "
                f"{type(s).__name__}"
            )
    return tuple(s.__index__() for s in size)


def _size_keyword(sizes: tuple, size, op: str) -> tuple:
    """The positional sizes, or torch's ``size=`` keyword (not both)."""
    if size is None:
        return sizes
    if sizes:
        raise TypeError(f"{op}() got multiple values for argument 'size'")
    return (size,)


def _into(fn, name: str, args, kwargs: dict, out):
    """``fn(*args, **kwargs)`` built in ``out``'s dtype and device and written into it (Note [Out arguments])."""
    from .dispatch.out_arguments import run_with_out

    return run_with_out(fn, name, args, kwargs, out, factory=True)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False, pin_memory=False, memory_format=None,
          layout=None, out=None) -> Tensor:
    """An uninitialized tensor of the given size (``empty(2, 3)``, ``empty((2, 3))`` or ``empty(size=(2, 3))``)."""
    if size is None and not (requires_grad or pin_memory or memory_format or layout or out is not None):  # hot path
        return _EMPTY(_size(sizes, "empty"), dtype=dtype, device=device)
    size = _size_keyword(sizes, size, "empty")
    if out is not None:
        return _into(empty, "empty", size, {"dtype": dtype, "device": device, "memory_format": memory_format}, out)
    return _finish(ops.empty(_size(size, "empty"), dtype=dtype, layout=layout, device=device,
                             pin_memory=pin_memory, memory_format=memory_format), requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, pin_memory=False,
                  layout=None) -> Tensor:
    """An uninitialized tensor with explicit strides (in elements), on any backend."""
    return _finish(ops.empty_strided(size, stride, dtype=dtype, layout=layout, device=device,
                                     pin_memory=pin_memory), requires_grad)


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False, pin_memory=False, layout=None,
          out=None) -> Tensor:
    """A tensor filled with 0."""
    size = _size_keyword(sizes, size, "zeros")
    if out is not None:
        return _into(zeros, "zeros", size, {"dtype": dtype, "device": device}, out)
    return _finish(ops.zeros(_size(size, "zeros"), dtype=dtype, layout=layout, device=device,
                             pin_memory=pin_memory), requires_grad)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False, pin_memory=False, layout=None,
         out=None) -> Tensor:
    """A tensor filled with 1."""
    size = _size_keyword(sizes, size, "ones")
    if out is not None:
        return _into(ones, "ones", size, {"dtype": dtype, "device": device}, out)
    return _finish(ops.ones(_size(size, "ones"), dtype=dtype, layout=layout, device=device,
                            pin_memory=pin_memory), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, pin_memory=False,
         layout=None, out=None) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from it when not given)."""
    if out is not None:
        return _into(full, "full", (size, fill_value), {"dtype": dtype, "device": device}, out)
    return _finish(ops.full(_size((size,), "full"), fill_value, dtype=dtype, layout=layout, device=device,
                            pin_memory=pin_memory), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, layout=None,
           out=None) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; ``arange(end)`` starts at 0."""
    if out is not None:
        return _into(arange, "arange", (start, end, step), {"dtype": dtype, "device": device}, out)
    if end is None:
        start, end = 0, start
    return _finish(ops.arange(start, end, step, dtype=dtype, layout=layout, device=device), requires_grad)


def check_space_arguments(name: str, start, end, steps) -> None:
    """torch's checks of linspace / logspace (``name``): an int ``steps``, 0-dim ``start`` / ``end`` tensors."""
    import operator

    try:
        if isinstance(steps, bool):
            raise TypeError
        operator.index(steps)
    except TypeError:
        raise TypeError(f"{name}(): argument 'steps' (position 3) must be int, not {type(steps).__name__}") from None
    tensors = [(word, t) for word, t in (("start", start), ("end", end)) if isinstance(t, Tensor)]
    if any(t.dim() for _, t in tensors):
        parts = [f"{word} with {t.dim()} dimension(s)" for word, t in tensors]
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got {' and '.join(parts)}.")


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, layout=None, out=None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    check_space_arguments("linspace", start, end, steps)
    if out is not None:
        return _into(linspace, "linspace", (start, end, steps), {"dtype": dtype, "device": device}, out)
    return _finish(ops.linspace(start, end, steps, dtype=dtype, layout=layout, device=device), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, layout=None, out=None) -> Tensor:
    """A 2-D tensor with ones on the diagonal."""
    if out is not None:
        return _into(eye, "eye", (n, m), {"dtype": dtype, "device": device}, out)
    return _finish(ops.eye(n, n if m is None else m, dtype=dtype, layout=layout, device=device), requires_grad)


def rand(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False,
         layout=None, out=None) -> Tensor:
    """Uniform samples from [0, 1)."""
    size = _size_keyword(sizes, size, "rand")
    if out is not None:
        return _into(rand, "rand", size, {"generator": generator, "dtype": dtype, "device": device}, out)
    return _finish(ops.rand(_size(size, "rand"), generator=generator, dtype=dtype, layout=layout,
                            device=device, pin_memory=pin_memory), requires_grad)


def randn(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False,
          layout=None, out=None) -> Tensor:
    """Standard normal samples."""
    size = _size_keyword(sizes, size, "randn")
    if out is not None:
        return _into(randn, "randn", size, {"generator": generator, "dtype": dtype, "device": device}, out)
    return _finish(ops.randn(_size(size, "randn"), generator=generator, dtype=dtype, layout=layout,
                             device=device, pin_memory=pin_memory), requires_grad)


def randint(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False,
            layout=None, out=None) -> Tensor:
    """``randint(high, size)`` or ``randint(low, high, size)``: integers in [low, high)."""
    if out is not None:
        return _into(randint, "randint", args, {"size": size, "generator": generator, "dtype": dtype,
                                                "device": device}, out)
    if size is None:
        if not args:
            raise TypeError("randint() missing required argument 'size'")
        *args, size = args
    if len(args) == 1:
        low, high = 0, args[0]
    elif len(args) == 2:
        low, high = args
    else:
        raise TypeError("randint() expects randint(high, size) or randint(low, high, size)")
    return _finish(ops.randint(low, high, _size((size,), "randint"), generator=generator, dtype=dtype,
                               layout=layout, device=device), requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None) -> Tensor:
    """Samples 0/1 with probabilities ``input`` (or the scalar ``p``)."""
    if out is not None:
        from .dispatch.out_arguments import run_with_out

        def sample(input, p, generator):  # torch samples straight into out's dtype
            return bernoulli(input, p, generator=generator).to(out.dtype)

        return run_with_out(sample, "bernoulli", (input, p), {"generator": generator}, out)
    if p is not None:
        return empty_like(input).bernoulli_(p, generator=generator)
    return ops.bernoulli(input, generator=generator)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
               pin_memory=False, layout=None) -> Tensor:
    return _finish(ops.empty_like(input, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                  memory_format=memory_format), requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
               pin_memory=False, layout=None) -> Tensor:
    return _finish(ops.zeros_like(input, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                  memory_format=memory_format), requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
              pin_memory=False, layout=None) -> Tensor:
    return _finish(ops.ones_like(input, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                 memory_format=memory_format), requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None,
              pin_memory=False, layout=None) -> Tensor:
    return _finish(ops.full_like(input, fill_value, dtype=dtype, layout=layout, device=device,
                                 pin_memory=pin_memory, memory_format=memory_format), requires_grad)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False, memory_format=None,
              layout=None) -> Tensor:
    return _finish(ops.rand_like(input, generator=generator, dtype=dtype, layout=layout, device=device,
                                 memory_format=memory_format), requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False, memory_format=None,
               layout=None) -> Tensor:
    return _finish(ops.randn_like(input, generator=generator, dtype=dtype, layout=layout, device=device,
                                  memory_format=memory_format), requires_grad)


_EMPTY = ops.empty.memory_format  # the overload itself: no overload matching per call


def _is_number(x) -> bool:
    return isinstance(x, numbers.Number)
