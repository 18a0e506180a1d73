"""Forward AD over the op database: for each op's first float64 samples, the tangents that forward AD gives
(every floating tensor argument dual) equal the central finite difference along the tangents (Note [Forward AD
by double backward]). The ops listed below are left out, each for the reason given."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st
import strided.autograd.forward_ad as sf
from strided.autograd.kernels import DERIVATIVES
from strided.autograd.refusals import no_formula_arguments
from strided.dispatch.dispatcher import OpOverload
from strided.tensor import Tensor
from strided.testing.opdb import op_db

_EPS = 1e-6
# refused on purpose, with torch's words (tests/autograd/test_forward_ad.py checks them)
_REFUSED = ("out=", "lists of tensors")
_LEFT_OUT = {
    # no twice-differentiable backward here (torch has dedicated formulas for these backward ops)
    "_layer_norm_backward", "native_batch_norm_backward", "native_group_norm_backward", "_log_softmax_backward_data",
    "_softmax_backward_data", "gelu_backward",
    "_thnn_fused_gru_cell_backward", "_thnn_fused_lstm_cell_backward_impl", "_dirichlet_grad", "_standard_gamma_grad",
    # the finite difference is not the derivative: the output's shape or bins move with the input, detach and set_
    # cut the derivative on purpose, or the samples sit on kinks, ties and poles (torch's forward AD agrees with
    # strided's on random inputs: tests/autograd/test_forward_ad.py)
    "_unique2", "unique_consecutive", "unique_dim", "histc", "histogram.bin_ct", "detach",
    "set_.source_Storage_storage_offset", "set_.source_Storage", "set_.source_Tensor", "set_", "cummax", "cummin",
    "lgamma", "cross_entropy_loss",
    "_thnn_fused_gru_cell", "_thnn_fused_lstm_cell",
    # its saved mean and inverse standard deviation are not differentiable outputs (no tangent, as in torch); the
    # normalized output's tangent is checked through F.batch_norm / F.group_norm (tests/autograd/test_forward_ad.py)
    "native_batch_norm", "native_group_norm",
    # no derivative at all, as in torch (a NotImplemented node: tests/backend/test_linalg_ldl.py)
    "linalg_ldl_factor_ex", "linalg_ldl_solve",
    # torch refuses these samples too: src larger than index ("invalid gradient ... expected shape compatible")
    "scatter.src", "scatter_.src", "scatter_add", "scatter_add_",
}


def _swap(v, f):
    if isinstance(v, Tensor):
        return f(v)
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, Tensor) for x in v):
        return type(v)(f(x) for x in v)
    return v


def _flat(r) -> list:
    if isinstance(r, Tensor):
        return [r]
    return [x for x in r if isinstance(x, Tensor)] if isinstance(r, (list, tuple)) else []


def _call(op, args, kwargs, f):
    return op(*[_swap(a, f) for a in args], **{n: _swap(v, f) for n, v in kwargs.items()})


def _tangents_and_differences(op, sample, rng):
    """[(forward AD's tangent or None, the central difference)] per float64 output; None when refused."""
    tangents = {}

    def pick(x):
        if x.dtype is st.float64:
            tangents[id(x)] = st.tensor(rng.standard_normal(x.shape))
        return x

    # arguments without a formula (a loss's class weights) are held fixed: they get no tangent, as in torch
    info = DERIVATIVES.get(op) if isinstance(op, OpOverload) else None
    fixed = no_formula_arguments(op, info) if info is not None and op._mutated is None else ()
    fixed_pos, fixed_names = {p for p, _ in fixed}, {n for _, n in fixed}
    args = [a if i in fixed_pos else _swap(a, pick) for i, a in enumerate(sample.args)]
    kwargs = {n: v if n in fixed_names else _swap(v, pick) for n, v in sample.kwargs.items()}
    if not tangents:
        return []
    try:
        with sf.dual_level():
            out = _call(op, args, kwargs, lambda x: sf.make_dual(x, tangents[id(x)]) if id(x) in tangents else x)
            got = [sf.unpack_dual(o).tangent for o in _flat(out)]
    except NotImplementedError as e:
        assert any(words in str(e) for words in _REFUSED), str(e)
        return None
    plus = _flat(_call(op, args, kwargs, lambda x: x + _EPS * tangents[id(x)] if id(x) in tangents else x))
    minus = _flat(_call(op, args, kwargs, lambda x: x - _EPS * tangents[id(x)] if id(x) in tangents else x))
    return [(t, (p.numpy() - m.numpy()) / (2 * _EPS)) for t, p, m in zip(got, plus, minus) if p.dtype is st.float64]


CASES = [pytest.param(info, id=info.name) for info in op_db()
         if info.ref is not None and st.float64 in info.dtypes and info.name not in _LEFT_OUT]


@pytest.mark.parametrize("info", CASES)
def test_forward_ad_tangents_are_the_directional_derivative(info):
    rng = np.random.default_rng(0)
    op = info.get_op()
    for k, sample in enumerate(info.samples(st.float64, rng)):
        if k == 2:
            break
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pairs = _tangents_and_differences(op, sample, rng)
        for tangent, want in pairs or ():
            have = np.zeros_like(want) if tangent is None else tangent.numpy()
            np.testing.assert_allclose(have, want, rtol=1e-4, atol=1e-5, equal_nan=True,
                                       err_msg=f"{info.name}: {sample}")
