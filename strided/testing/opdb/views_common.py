"""Helpers shared by the view OpInfo modules (``views``, ``views_squeeze``)."""

from __future__ import annotations

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, OpInfo, make_arg
from .helpers import aliasing, err

__all__ = ["_info", "_a", "_ints", "_f", "_dim_error"]


def _info(name, samples, ref, errors=None, **kw):
    return OpInfo(name, samples, ref=ref, op=aliasing(name), dtypes=ALL_DTYPES, errors=errors, **kw)


def _a(shape, d, rng, nc=False):
    return make_arg(shape, d, rng=rng, noncontiguous=nc)


def _ints(v):
    return (v,) if isinstance(v, int) else tuple(v)


def _f(shape=(2, 3)):
    return make_arg(shape, dt.float32)


def _dim_error(*args):
    """Errors for a dim argument of 3 where the op accepts dims in [-3, 2]."""

    def errors(rng):
        yield err(args, IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)")

    return errors
