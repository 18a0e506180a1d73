"""strided.masked: torch.masked's dense-tensor functions (Note [Masked reductions]); values are torch 2.14's."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st

M = st.masked


def _x():
    return st.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])


def _m():
    return st.tensor([[True, False, True], [False, False, True]])


def _close(t, expected):
    np.testing.assert_allclose(np.asarray(t.detach().numpy(), dtype=np.float64), expected, rtol=1e-6)


def test_reductions():
    x, m = _x(), _m()
    _close(M.sum(x, 1, mask=m), [4.0, -6.0])
    _close(M.prod(x, 1, mask=m), [3.0, -6.0])
    _close(M.amax(x, 1, mask=m), [3.0, -6.0])
    _close(M.amin(x, 0, mask=m), [1.0, math.inf, -6.0])
    assert M.argmax(x, 1, mask=m).tolist() == [2.0, 2.0] and M.argmin(x, 1, mask=m).tolist() == [0.0, 2.0]
    _close(M.mean(x, 1, mask=m), [2.0, -6.0])
    _close(M.mean(x, 0, mask=m), [1.0, math.nan, -1.5])
    _close(M.median(x, 1, mask=m), [1.0, -6.0])
    _close(M.logsumexp(x, 1, mask=m), [3.1269280910491943, -6.0])
    _close(M.norm(x, 2.0, 1, mask=m), [3.1622776985168457, 6.0])
    _close(M.var(x, 1, mask=m), [2.0, math.nan])
    _close(M.std(x, 1, mask=m, unbiased=False), [1.0, 0.0])
    _close(M.sum(x, mask=st.tensor([True, False, True])), 2.0)  # a broadcast mask, every dim
    assert M.sum(st.tensor([1, 2, 3], dtype=st.int8), mask=st.tensor([True, False, True])).dtype is st.int64


def test_normalizations_and_scans():
    x, m = _x(), _m()
    _close(M.softmax(x, 1, mask=m), [[0.11920291185379028, 0.0, 0.8807970285415649], [0.0, 0.0, 1.0]])
    _close(M.log_softmax(x, 1, mask=m), [[-2.1269280910491943, -math.inf, -0.12692804634571075],
                                         [-math.inf, -math.inf, 0.0]])
    _close(M.softmin(x, 1, mask=m), [[0.8807970285415649, 0.0, 0.11920291185379028], [0.0, 0.0, 1.0]])
    _close(M.normalize(x, 2.0, 1, mask=m), [[0.3162277638912201, 0.0, 0.9486832618713379], [0.0, 0.0, -1.0]])
    _close(M.cumsum(x, 1, mask=m), [[1.0, 1.0, 4.0], [0.0, 0.0, -6.0]])
    _close(M.cumprod(x, 1, mask=m), [[1.0, 1.0, 3.0], [1.0, 1.0, -6.0]])
    _close(M.logaddexp(x, x * 0, input_mask=m, other_mask=st.logical_not(m)), [[1.0, 0.0, 3.0], [0.0, 0.0, -6.0]])


def test_gradients_reach_only_kept_elements():
    x = _x().requires_grad_()
    M.mean(x, 1, mask=_m()).sum().backward()
    _close(x.grad, [[0.5, 0.0, 0.5], [0.0, 0.0, 1.0]])


def test_errors_in_torchs_words():
    with pytest.raises(IndexError, match="expected broadcastable mask"):
        M.sum(_x(), mask=st.ones(1, 2, 3, dtype=st.bool))
    with pytest.raises(ValueError, match="mean\\(\\): Could not infer output dtype. Input dtype must be either"):
        M.mean(st.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="dim=1 appears multiple times in the list of dims"):
        M.sum(_x(), (1, 1))
    with pytest.raises(ValueError, match="masked median expects no fully masked out rows"):
        M.median(st.tensor([[1, 2], [3, 4]]), 1, mask=st.tensor([[True, True], [False, False]]))


def test_ordered_reductions_refuse_complex():
    with pytest.raises(TypeError, match="masked amin: complex tensors are not ordered"):
        M.amin(st.ones(2, dtype=st.complex64), mask=st.ones(2, dtype=st.bool))


@pytest.mark.parametrize("call, words", [
    (lambda: M.sum("a"), "masked.sum\\(\\): argument 'input' must be Tensor, not str"),
    (lambda: M.sum(_x(), mask=[True]), "masked.sum\\(\\): argument 'mask' must be Tensor, not list"),
    (lambda: M.logaddexp(_x(), 2.0), "masked.logaddexp\\(\\): argument 'other' must be Tensor, not float"),
    (lambda: M.mean(_x(), "x"), "masked: dim must be an int, a tuple of ints or None, got 'x'"),
    (lambda: M.amax(_x(), 1.5), "masked: dim must be an int, a tuple of ints or None, got 1.5"),
])
def test_arguments_of_the_wrong_type_are_named(call, words):
    with pytest.raises(TypeError, match=words):
        call()
