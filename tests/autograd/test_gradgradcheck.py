"""autograd.gradgradcheck: second derivatives of common training ops pass (as in torch), a backward that is not
itself differentiable is caught, grad_outputs may be given or non-contiguous."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.nn.functional as F
from strided.autograd.gradcheck import GradcheckError

CASES = {
    "matmul_tanh": lambda a, b: (a @ b.t()).tanh(),
    "softmax": lambda a, b: a.softmax(-1),
    "log_softmax": lambda a, b: a.log_softmax(0),
    "gelu_tanh": lambda a, b: F.gelu(a, approximate="tanh"),
    "gelu": lambda a, b: F.gelu(a),
    "silu": lambda a, b: F.silu(a),
    "sigmoid_mul": lambda a, b: a.sigmoid() * b,
    "layer_norm": lambda a, b: F.layer_norm(a, (4,)),
    "mse_loss": lambda a, b: F.mse_loss(a, b),
    "cross_entropy": lambda a, b: F.cross_entropy(a, st.tensor([0, 2, 3])),
    "cross_entropy_weight_smoothing": lambda a, b: F.cross_entropy(
        a, st.tensor([0, 2, 3]), weight=st.tensor([1.0, 2.0, 0.5, 1.5], dtype=st.float64), label_smoothing=0.1),
    "pow": lambda a, b: a.abs().add(0.5).pow(b),
    "norm_dim": lambda a, b: a.norm(dim=1),
    "var": lambda a, b: a.var(1),
    "attention": lambda a, b: F.scaled_dot_product_attention(a[None], b[None], b[None]),
    "logsumexp": lambda a, b: a.logsumexp(1),
    "cumsum_cumprod": lambda a, b: a.cumsum(1) * b.cumprod(0),
    # composites that write into a view (their CopySlices backward reads as_strided's geometry only)
    "diag": lambda a, b: st.diag(a[0]) * b[1, 0],
    "diagflat": lambda a, b: st.diagflat(a[:2, :2]).sin(),
    "select_scatter": lambda a, b: st.select_scatter(a, b[0] * 2, 0, 1),
    "slice_scatter": lambda a, b: st.slice_scatter(a, b[:1] * 3, 0, 0, 1),
    "scatter_add": lambda a, b: a.scatter_add(0, st.tensor([[2, 0, 1, 0]]), b[:1]),
    "as_strided": lambda a, b: a.as_strided((2, 2), (1, 2), 1) * b[:2, :2],
}


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return tuple(st.tensor(rng.standard_normal((3, 4)), requires_grad=True) for _ in range(2))


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivatives_pass(name):
    assert st.autograd.gradgradcheck(CASES[name], _inputs())


def test_given_and_non_contiguous_grad_outputs():
    a, b = _inputs(1)
    seed = st.tensor(np.random.default_rng(2).standard_normal((3, 3)), requires_grad=True)
    assert st.autograd.gradgradcheck(lambda x, y: (x @ y.t()).sin(), (a, b), (seed,))
    assert st.autograd.gradgradcheck(lambda x, y: (x * y).exp(), (a, b), gen_non_contig_grad_outputs=True)


class _FlatBackward(st.autograd.Function):
    """``x ** 3`` whose backward is computed outside the graph: first derivatives right, second ones zero."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (3 * x.detach() ** 2)


def test_a_backward_that_is_not_differentiable_is_caught():
    (a, _) = _inputs(3)
    assert st.autograd.gradcheck(_FlatBackward.apply, (a,))
    assert not st.autograd.gradgradcheck(_FlatBackward.apply, (a,), raise_exception=False)
    with pytest.raises(GradcheckError):
        st.autograd.gradgradcheck(_FlatBackward.apply, (a,))
