"""OpInfo: ``einsum`` (``strided/ops/composite/einsum.py``) against ``numpy.einsum``."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, OpInfo, SampleInput, make_arg
from .helpers import err

__all__ = ["OPS"]

_CASES = (
    ("ij,jk->ik", (3, 4), (4, 5)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    ("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5)),
    ("ij,jk", (3, 4), (4, 5)),
    ("ii->i", (3, 3)),
    ("iij->j", (3, 3, 4)),
    ("ij->", (3, 4)),
    ("ij->ji", (3, 4)),
    ("i,j->ij", (3,), (4,)),
    ("...ij,...jk->...ik", (5, 1, 2, 3), (4, 3, 4)),
    ("...ij->ij", (5, 2, 3)),
    ("ijk,jkl,lm->im", (2, 3, 4), (3, 4, 5), (5, 6)),
    ("Ab,bA->", (2, 3), (3, 2)),
    ("bi,i->b", (3, 1), (4,)),
    ("", ()),
)


def _samples(d, rng):
    for eq, *shapes in _CASES:
        ts = [make_arg(s, d, rng=rng, low=-2, high=2, noncontiguous=i == 1) for i, s in enumerate(shapes)]
        yield SampleInput((eq, ts), name=eq or "0-dim, no labels")
    yield SampleInput(("ij,jk->ik", [make_arg((0, 3), d, rng=rng), make_arg((3, 2), d, rng=rng)]), name="zero-size")


def _ref(eq, arrays):
    if "...ij,...jk" in eq:  # NumPy's einsum does not broadcast size-1 ellipsis dims; matmul does
        return np.matmul(*arrays)
    if eq == "...ij->ij":  # NumPy refuses to sum dims left out of the output; torch sums them
        return arrays[0].sum(axis=tuple(range(arrays[0].ndim - 2)))
    return np.einsum(eq, *arrays)


def _errors(rng):
    a, b = make_arg((2, 3), dt.float32, rng=rng), make_arg((3, 4), dt.float32, rng=rng)
    yield err(("ij,jk,kl", [a, b]), RuntimeError,
              "einsum(): fewer operands were provided than specified in the equation")
    yield err(("ij", [a, b]), RuntimeError, "einsum(): more operands were provided than specified in the equation")
    yield err(("i1,jk", [a, b]), RuntimeError, "einsum(): invalid subscript given at index 1 in the equation string, "
                                               "subscripts must be in [a-zA-Z]")
    yield err(("ijk,jk", [a, b]), RuntimeError, "einsum(): the number of subscripts in the equation (3) does not match "
                                                "the number of dimensions (2) for operand 0 and no ellipsis was given")
    yield err(("ii", [a]), RuntimeError,
              "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2")
    yield err(("ij,ik", [a, b]), RuntimeError,
              "einsum(): subscript i has size 3 for operand 1 which does not broadcast with previously seen size 2")
    yield err(("ij,jk->iz", [a, b]), RuntimeError, "einsum(): output subscript z does not appear in the equation for "
                                                   "any input operand")


# Three-operand chains round their intermediate product to the half type (as torch's do), so half
# dtypes get wider tolerances than one GEMM's.
_TOL = {dt.float16: (1e-2, 1e-2), dt.bfloat16: (3e-2, 5e-2)}

OPS = [OpInfo("einsum", _samples, ref=_ref, dtypes=FLOATING, tolerances=_TOL, errors=_errors)]
