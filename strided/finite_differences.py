"""``strided.gradient``: derivatives of sampled values by finite differences, as torch.gradient.

Note [Finite differences]
Interior points take the second-order central difference; the two edges take a one-sided difference of
order ``edge_order`` (1 or 2). With uniform spacing ``h`` the interior is ``(f[i+1] - f[i-1]) / 2h``; with
sample coordinates ``x`` (one 1-D tensor per dim) it is torch's non-uniform three-point formula
``a f[i-1] + b f[i] + c f[i+1]`` with ``a = -h2 / (h1 (h1 + h2))``, ``b = (h2 - h1) / (h1 h2)``,
``c = h1 / (h2 (h1 + h2))`` (``h1``, ``h2`` the spacings left and right of ``x[i]``). Everything is slices
and arithmetic, so it runs on every backend and autograd goes through it.
"""

from __future__ import annotations

from numbers import Number

from .ops import bound as _ops
from .tensor import Tensor

__all__ = ["gradient"]


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:  # noqa: A002 - torch's name
    """The derivative of ``input`` along each of ``dim`` (every dim when None), one tensor per dim.

    ``spacing`` is one number for every dim, one number per dim, or one 1-D tensor of sample coordinates
    per dim (Note [Finite differences])."""
    if not isinstance(input, Tensor):
        raise TypeError(f"gradient(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dtype.name == "uint8":  # torch's check: unsigned differences would wrap
        raise RuntimeError("torch.gradient does not support uint8 input.")
    n = input.dim()
    dims = _dims(dim, n)
    if spacing is None:  # torch's binding: None is the default spacing
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        if dim is None and len(spacing) != n:
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                               f"equal to 'self.dim() = {n}', since dim argument was not given, but got a list of "
                               f"length {len(spacing)}")
        if dim is not None and len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        spacings = list(spacing)
        for t in spacings:
            if isinstance(t, Tensor) and t.device != input.device:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, but got devices "
                                   f"{input.device} and {t.device}!")
    elif isinstance(spacing, Number) and not isinstance(spacing, bool):
        spacings = [spacing] * len(dims)
    else:
        raise TypeError(f"gradient(): argument 'spacing' must be a number or a sequence of numbers or tensors, "
                        f"not {type(spacing).__name__}")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    out = []
    for d, h in zip(dims, spacings):
        if isinstance(h, Tensor):
            out.append(_along_coordinates(input, d, h, edge_order))
        else:
            out.append(_uniform(input, d, h, edge_order))
    return tuple(out)


def _dims(dim, n: int) -> list:
    from .backends.meta.common import wrap_dim

    if dim is None:
        return list(range(n))
    dims = [wrap_dim(d, n) for d in ([dim] if isinstance(dim, int) else dim)]
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return dims


def _cut(t: Tensor, d: int, start, end=None) -> Tensor:
    return _ops.slice(t, d, start, end, 1)


def _uniform(f: Tensor, d: int, h, edge_order: int) -> Tensor:
    center = (_cut(f, d, 2) - _cut(f, d, 0, -2)) / h / 2
    if edge_order == 1:
        first = (_cut(f, d, 1, 2) - _cut(f, d, 0, 1)) / h
        last = (_cut(f, d, -1) - _cut(f, d, -2, -1)) / h
    else:
        first = (_cut(f, d, 0, 1) * -1.5 + _cut(f, d, 1, 2) * 2 - _cut(f, d, 2, 3) * 0.5) / h
        last = (_cut(f, d, -3, -2) * 0.5 + _cut(f, d, -2, -1) * -2 + _cut(f, d, -1) * 1.5) / h
    return _ops.cat([first, center, last], d)


def _along_coordinates(f: Tensor, d: int, x: Tensor, edge_order: int) -> Tensor:
    if x.dim() != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {x.dim()} dimensions!")
    if x.shape[0] != f.shape[d]:
        raise RuntimeError(f"torch.gradient expected the coordinates along dim {d} to have {f.shape[d]} elements "
                           f"(the size of that dim), but got {x.shape[0]}")
    shape = [1] * f.dim()
    shape[d] = -1
    dx = _ops.diff(x)
    h1, h2 = dx[:-1], dx[1:]
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * _cut(f, d, 0, -2) + b * _cut(f, d, 1, -1) + c * _cut(f, d, 2)
    if edge_order == 1:
        first = (_cut(f, d, 1, 2) - _cut(f, d, 0, 1)) / dx[0]
        last = (_cut(f, d, -1) - _cut(f, d, -2, -1)) / dx[-1]
    else:
        d0, d1, dl, dm = dx[0], dx[1], dx[-1], dx[-2]
        first = (-(2.0 * d0 + d1) / (d0 * (d0 + d1)) * _cut(f, d, 0, 1) + (d0 + d1) / (d0 * d1) * _cut(f, d, 1, 2)
                 - d0 / (d1 * (d0 + d1)) * _cut(f, d, 2, 3))
        last = (dl / (dm * (dl + dm)) * _cut(f, d, -3, -2) - (dl + dm) / (dl * dm) * _cut(f, d, -2, -1)
                + (2 * dl + dm) / (dl * (dl + dm)) * _cut(f, d, -1))
    return _ops.cat([first, center, last], d)
