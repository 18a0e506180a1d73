"""torch's deprecated argument orders (Note [Deprecated argument orders]): ``add(t, number, other)`` and the
in-place forms old optimizer code calls, with torch's warning naming the old and new signature."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st

WORDS = {
    "add": "This overload of add is deprecated:\n\tadd(Tensor input, Number alpha, Tensor other, *, Tensor out = "
           "None)\nConsider using one of the following signatures instead:\n\tadd(Tensor input, Tensor other, *, "
           "Number alpha = 1, Tensor out = None)",
    "add_": "This overload of add_ is deprecated:\n\tadd_(Number alpha, Tensor other)\nConsider using one of the "
            "following signatures instead:\n\tadd_(Tensor other, *, Number alpha = 1)",
    "addcmul_": "This overload of addcmul_ is deprecated:\n\taddcmul_(Number value, Tensor tensor1, Tensor tensor2)"
                "\nConsider using one of the following signatures instead:\n\taddcmul_(Tensor tensor1, Tensor "
                "tensor2, *, Number value = 1)",
}  # torch 2.14's words


def _run(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [str(w.message) for w in caught], [w.filename for w in caught]


@pytest.mark.parametrize("call, expected", [
    (lambda a, b: st.add(a, 2, b), [3.0, 6.0]),
    (lambda a, b: st.sub(a, 2, b), [-1.0, -2.0]),
    (lambda a, b: a.add(0.5, b), [1.5, 3.0]),
    (lambda a, b: st.addcmul(a, 2, b, b), [3.0, 10.0]),
    (lambda a, b: st.addcdiv(a, 2, b, b), [3.0, 4.0]),
    (lambda a, b: a.clone().add_(-1, b), [0.0, 0.0]),
    (lambda a, b: a.clone().sub_(0.5, b), [0.5, 1.0]),
    (lambda a, b: a.clone().addcmul_(0.5, b, b), [1.5, 4.0]),
    (lambda a, b: a.clone().addcdiv_(3, b, b), [4.0, 5.0]),
])
def test_deprecated_orders_compute_as_torch(call, expected):
    a, b = st.tensor([1.0, 2.0]), st.tensor([1.0, 2.0])
    result, messages, files = _run(lambda: call(a, b))
    assert result.tolist() == expected
    assert len(messages) == 1 and "is deprecated" in messages[0] and files == [__file__]  # the caller's line


def test_warnings_are_torchs_words_and_out_is_taken():
    a, b = st.ones(2), st.ones(2)
    assert _run(lambda: st.add(a, 2, b))[1] == [WORDS["add"]]
    assert _run(lambda: a.clone().add_(2, b))[1] == [WORDS["add_"]]
    assert _run(lambda: a.clone().addcmul_(2, b, b))[1] == [WORDS["addcmul_"]]
    out = st.empty(2)
    assert _run(lambda: st.add(a, 2, b, out=out))[0] is out and out.tolist() == [3.0, 3.0]


def test_old_style_sgd_step_and_its_gradient():
    w = st.tensor([1.0, -2.0], requires_grad=True)
    (w * w).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w.data.add_(-0.1, w.grad)  # SGD as torch 1.x optimizers wrote it
    np.testing.assert_allclose(w.detach().numpy(), [0.8, -1.6])
    x = st.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st.add(st.zeros(2), 3, x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_other_wrong_calls_keep_their_errors():
    a = st.ones(2)
    with pytest.raises(TypeError):
        st.add(a, a, a)
    with pytest.raises(TypeError):
        st.add(a, "2", a)
    with pytest.raises(TypeError):
        a.add_(2, a, alpha=3)
