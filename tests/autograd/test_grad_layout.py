"""Gradient layout (Note [mm gradient layout], Note [Gradient layout contract]) and stolen gradients
(Note [Accumulation]), checked against torch's rules."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck
from strided.utils.profiler import count_ops


def _column_major(rows, cols, requires_grad=True):
    t = st.empty_strided((rows, cols), (1, rows), dtype=st.float64)
    t.copy_(st.rand(rows, cols, dtype=st.float64))
    return t.requires_grad_(requires_grad)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4)])
def test_linear_weight_grad_has_weight_strides(bias, shape):
    lin = st.nn.Linear(4, 6, bias=bias)
    lin(st.rand(*shape)).sum().backward()
    assert lin.weight.grad.stride() == lin.weight.stride() == (4, 1)
    assert lin.weight.grad.is_contiguous()
    if bias:
        assert lin.bias.grad.stride() == (1,)


def test_tied_lm_head_grad_is_contiguous():
    """F.linear(x, wte.weight) without bias (GPT's tied head) plus the embedding's gradient."""
    emb = st.nn.Embedding(7, 4)
    x = emb(st.tensor([[1, 2, 3]]))
    st.nn.functional.linear(x, emb.weight).sum().backward()
    assert emb.weight.grad.stride() == (4, 1)


def test_column_major_leaf_into_mm_gets_column_major_grad():
    a = st.rand(3, 4, dtype=st.float64, requires_grad=True)
    b = _column_major(4, 5)
    st.mm(a, b).sum().backward()
    assert b.grad.stride() == b.stride() == (1, 4)
    assert a.grad.stride() == (4, 1)
    c = _column_major(3, 4)
    st.mm(c, st.rand(4, 2, dtype=st.float64)).sum().backward()
    assert c.grad.stride() == (1, 3)


def test_mm_addmm_values_match_reference_for_every_layout():
    a, b = _column_major(3, 4), _column_major(4, 5)
    bias = st.rand(5, dtype=st.float64, requires_grad=True)
    g = st.rand(3, 5, dtype=st.float64)
    st.addmm(bias, a, b, beta=0.5, alpha=2.0).backward(g)
    an, bn, gn = a.detach().numpy(), b.detach().numpy(), g.numpy()
    np.testing.assert_allclose(a.grad.numpy(), 2.0 * gn @ bn.T, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), 2.0 * an.T @ gn, rtol=1e-12)
    np.testing.assert_allclose(bias.grad.numpy(), 0.5 * gn.sum(0), rtol=1e-12)


@pytest.mark.parametrize("op", ["mm", "addmm"])
def test_gradcheck_column_major_operands(op):
    a, b = _column_major(3, 4), _column_major(4, 2)
    if op == "mm":
        assert gradcheck(st.mm, (a, b))
    else:
        bias = st.rand(2, dtype=st.float64, requires_grad=True)
        assert gradcheck(lambda s, x, y: st.addmm(s, x, y, beta=0.5, alpha=3.0), (bias, a, b))


def test_non_dense_leaf_gets_contiguous_grad():
    base = st.rand(4, 6, dtype=st.float64)
    leaf = base[:, ::2].detach().requires_grad_()  # strides (6, 2): not dense
    (leaf * 3).sum().backward()
    assert leaf.grad.is_contiguous()
    np.testing.assert_allclose(leaf.grad.numpy(), np.full((4, 3), 3.0))


def test_first_gradient_is_stolen_not_copied():
    lin = st.nn.Linear(4, 6)
    out = lin(st.rand(3, 4)).sum()
    with count_ops() as stats:
        out.backward()
    copies = {op: n for (op, _), n in stats.calls.items() if op.split(".")[0] in ("aten::copy_", "aten::clone")}
    assert copies == {}


def test_stolen_gradient_never_aliases_user_memory():
    x = st.zeros(3, requires_grad=True)
    gr = st.ones(3)
    (x + 1).backward(gr)  # AddBackward passes `gr` through unchanged
    gr.add_(5)
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0])
    a = st.zeros(3, requires_grad=True)
    b = st.zeros(3, requires_grad=True)
    (a + b).sum().backward()  # the same gradient object reaches both leaves
    assert a.grad._storage is not b.grad._storage
    a.grad.add_(1)
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0, 1.0])


def test_gradient_held_elsewhere_is_copied():
    x = st.zeros(2, 3, requires_grad=True)
    keep = []

    def hook(g):
        keep.append(g)  # someone else holds the gradient: it must not become x.grad
        return None

    x.register_hook(hook)
    (x * 2).sum().backward()
    assert x.grad._storage is not keep[0]._storage
    keep[0].add_(1)
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 2.0))


def test_create_graph_grad_obeys_layout():
    b = _column_major(4, 5)
    a = st.rand(3, 4, dtype=st.float64)
    st.mm(a, b).sum().backward(create_graph=True)
    assert b.grad.stride() == (1, 4)


def test_a_slice_of_a_larger_gradient_is_not_stolen():
    a = st.zeros(3, requires_grad=True)
    b = st.zeros(5, requires_grad=True)
    (st.cat([a, b]) * 2).sum().backward()  # CatBackward hands each leaf a slice of one buffer
    for leaf in (a, b):
        assert leaf.grad._storage.nbytes() == leaf.numel() * 4
        np.testing.assert_array_equal(leaf.grad.numpy(), np.full(leaf.shape, 2.0))
