"""Tensor API details that follow torch: ``Tensor.where``'s argument order, ``new_*`` sizes,
``copy.deepcopy``, ``max(a, b)``, and tensor() refusing integers that do not fit."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import strided as st


def test_tensor_where_is_where_condition_self_other():
    # torch: x.where(cond, y) == where(cond, x, y); a bool self must not be taken for the condition
    out = st.tensor([True, False]).where(st.tensor([True, True]), 0.5)
    np.testing.assert_array_equal(out.numpy(), [1.0, 0.0])
    out = st.tensor([1.0, 2.0]).where(st.tensor([True, False]), st.tensor([7.0, 8.0]))
    np.testing.assert_array_equal(out.numpy(), [1.0, 8.0])


def test_max_min_of_two_tensors_and_aliases():
    a, b = st.tensor([1.0, 5.0, float("nan")]), st.tensor([3.0, 1.0, 0.0])
    np.testing.assert_array_equal(st.max(a, b).numpy(), [3.0, 5.0, np.nan])
    np.testing.assert_array_equal(a.min(b).numpy(), [1.0, 1.0, np.nan])
    assert a.max().item() != a.max().item()  # nan propagates; the one-tensor overload still works
    np.testing.assert_array_equal(st.square(st.tensor([2, -3])).numpy(), [4, 9])
    x = st.arange(6.0, requires_grad=True)
    y = x.view_as(st.empty(2, 3))
    assert y.shape == (2, 3) and y._base is x
    assert x.reshape_as(st.empty(3, 2)).shape == (3, 2)
    assert x.type_as(st.tensor([1])).dtype is st.int64
    x.square().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.arange(6.0))


def test_new_factories_take_sizes_as_ints_or_one_sequence():
    x = st.ones(2, dtype=st.float64)
    for t in (x.new_zeros(2, 3), x.new_zeros((2, 3)), x.new_ones([2, 3]), x.new_empty(2, 3)):
        assert t.shape == (2, 3) and t.dtype is st.float64
    assert x.new_zeros(()).shape == ()
    np.testing.assert_array_equal(x.new_ones(2).numpy(), [1.0, 1.0])


def test_deepcopy_of_leaves_and_of_modules_with_buffers():
    x = st.ones(3, requires_grad=True)
    x.grad = st.full((3,), 2.0)
    y = copy.deepcopy(x)
    assert y is not x and y.requires_grad and y.is_leaf and y.grad is not x.grad
    y.detach().add_(1)
    np.testing.assert_array_equal(x.detach().numpy(), [1.0] * 3)  # no shared memory
    np.testing.assert_array_equal(y.grad.numpy(), [2.0] * 3)
    pair = copy.deepcopy([x, x])
    assert pair[0] is pair[1]  # the memo keeps one copy per tensor
    m = st.nn.Linear(2, 2)
    m.register_buffer("steps", st.zeros(1))
    m2 = copy.deepcopy(m)
    assert m2.steps is not m.steps and m2.weight is not m.weight
    np.testing.assert_array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(x * 2)


def test_tensor_refuses_python_integers_that_do_not_fit():
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        st.tensor([2 ** 63])
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        st.tensor(2 ** 64)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8 without overflow"):
        st.tensor([1, 128], dtype=st.int8)
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8 without overflow"):
        st.tensor([256], dtype=st.uint8)
    assert st.tensor([-1], dtype=st.uint8).item() == 255  # torch's c10 rule: unsigned takes -max..max
    assert st.tensor([2 ** 63 - 1]).item() == 2 ** 63 - 1
    assert st.tensor([-(2 ** 63)]).item() == -(2 ** 63)


def test_isclose_allclose_equal_follow_torch():
    a = st.tensor([1.0, float("nan"), float("inf"), -float("inf"), 1e-9, 2.0])
    b = st.tensor([1.0 + 1e-6, float("nan"), float("inf"), float("inf"), 0.0, 2.1])
    assert st.isclose(a, b).tolist() == [True, False, True, False, True, False]
    assert st.isclose(a, b, equal_nan=True).tolist() == [True, True, True, False, True, False]
    assert st.isclose(st.tensor([1, 5]), st.tensor([1, 6]), atol=1).tolist() == [True, True]
    assert st.allclose(st.ones(3), st.ones(3) + 1e-7) and not st.allclose(st.ones(3), st.zeros(3))
    assert st.equal(st.ones(2), st.ones(2)) and not st.equal(st.ones(2), st.ones(3))
    assert not st.equal(st.tensor([float("nan")]), st.tensor([float("nan")]))
    with pytest.raises(RuntimeError, match="^Float did not match Double$"):  # torch's words
        st.isclose(st.ones(2), st.ones(2, dtype=st.float64))


def test_finfo_iinfo_and_functional_aliases():
    f = st.finfo(st.bfloat16)
    assert (f.bits, f.eps, f.max, f.resolution) == (16, 0.0078125, 3.3895313892515355e38, 0.01)
    assert st.finfo().dtype == "float32" and st.finfo(st.float16).eps == 2.0 ** -10
    assert (st.iinfo(st.int8).min, st.iinfo(st.int8).max, st.iinfo(st.int64).bits) == (-128, 127, 64)
    with pytest.raises(TypeError, match="requires a floating point input type"):
        st.finfo(st.int32)
    with pytest.raises(TypeError, match="requires an integer input type"):
        st.iinfo(st.float32)
    F = st.nn.functional
    x = st.tensor([-1.0, 0.0, 25.0])
    np.testing.assert_allclose(F.sigmoid(x).numpy(), 1 / (1 + np.exp([1.0, 0.0, -25.0])), rtol=1e-6)
    np.testing.assert_allclose(F.tanh(x).numpy(), np.tanh([-1.0, 0.0, 25.0]), rtol=1e-6)
    np.testing.assert_allclose(F.softplus(x, beta=2).numpy(), [np.log1p(np.exp(-2.0)) / 2, np.log(2) / 2, 25.0],
                               rtol=1e-6)
    assert F.one_hot(st.tensor([0, 2])).tolist() == [[1, 0, 0], [0, 0, 1]]


def test_multinomial_refuses_bad_weights_in_torchs_words():
    for bad in ([1.0, -1.0], [1.0, float("nan")], [1.0, float("inf")]):
        with pytest.raises(RuntimeError, match="probability tensor contains either `inf`, `nan` or element < 0"):
            st.multinomial(st.tensor(bad), 1)
    with pytest.raises(TypeError, match="multinomial\\(\\): argument 'num_samples' must be int, not float"):
        st.multinomial(st.ones(3), 1.5)
    with pytest.raises(RuntimeError, match=r"invalid multinomial distribution \(sum of probabilities <= 0\)"):
        st.multinomial(st.zeros(2, 3), 1)
    g = st.Generator().manual_seed(3)
    a = st.multinomial(st.tensor([0.2, 0.8]), 8, True, generator=g)
    g.manual_seed(3)
    assert st.multinomial(st.tensor([0.2, 0.8]), 8, True, generator=g).tolist() == a.tolist()
    assert st.multinomial(st.ones(3, device="meta"), 2).shape == (2,)


def test_functional_pad_and_normalize():
    F = st.nn.functional
    x = st.arange(6.0).reshape(1, 2, 3)
    assert F.pad(x, (1, -1, 1, 0), value=9.0)[0].tolist() == [[9, 9, 9], [9, 0, 1], [9, 3, 4]]
    assert F.pad(x, (2, 1), mode="reflect")[0].tolist() == [[2, 1, 0, 1, 2, 1], [5, 4, 3, 4, 5, 4]]
    assert F.pad(x, (2, 1), mode="replicate")[0].tolist() == [[0, 0, 0, 1, 2, 2], [3, 3, 3, 4, 5, 5]]
    assert F.pad(x, (2, 1), mode="circular")[0].tolist() == [[1, 2, 0, 1, 2, 0], [4, 5, 3, 4, 5, 3]]
    assert F.pad(x, (0, 0, 0, 0, 1, 1)).shape == (3, 2, 3)
    w = st.randn(2, 3, dtype=st.float64, requires_grad=True)
    assert st.autograd.gradcheck(lambda t: F.pad(t, (1, 2), mode="reflect"), (w,))
    assert st.autograd.gradcheck(lambda t: F.pad(t, (1, -1, 2, 0), value=1.5), (w,))
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(RuntimeError, match=r"padding \(3, 3\) at dimension 2 of input \[1, 2, 3\]"):
        F.pad(x, (3, 3), mode="reflect")
    with pytest.raises(TypeError, match="argument 'pad' \\(position 2\\) must be tuple of ints, not int"):
        F.pad(x, 3)
    with pytest.raises(TypeError, match="must be tuple of ints, not tuple with a float"):
        F.pad(x, (1.5, 1))
    with pytest.raises(TypeError, match="normalize\\(\\): argument 'input' must be Tensor, not list"):
        F.normalize([1.0])
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode bogus"):
        F.pad(x, (1, 1), mode="bogus")
    with pytest.raises(RuntimeError, match="doesn't take in value argument"):
        F.pad(x, (1, 1), mode="reflect", value=2.0)
    np.testing.assert_allclose(F.normalize(st.tensor([[3.0, 4.0], [0.0, 0.0]])).numpy(), [[0.6, 0.8], [0.0, 0.0]])
    assert st.autograd.gradcheck(F.normalize, (w,))


def test_loss_modules_match_the_functional_losses():
    rng = np.random.default_rng(0)
    x = st.tensor(rng.standard_normal((4, 5)).astype(np.float32))
    t = st.tensor([0, 4, -100, 2])
    w = st.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    F = st.nn.functional
    for kw in ({}, {"reduction": "sum"}, {"label_smoothing": 0.1}, {"reduction": "none"}):
        got = st.nn.CrossEntropyLoss(weight=w, **kw)(x, t)
        np.testing.assert_allclose(got.numpy(), F.cross_entropy(x, t, weight=w, **kw).numpy(), rtol=1e-6)
    assert "weight" in dict(st.nn.CrossEntropyLoss(weight=w).named_buffers())  # follows .to(device)
    y = st.zeros(4, 5)
    np.testing.assert_allclose(st.nn.MSELoss(reduction="sum")(x, y).item(), float((x * x).sum()), rtol=1e-6)
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        st.nn.MSELoss(reduction="avg")


def test_layout_and_device_predicates_answer_as_a_dense_torch_tensor():
    """Note [Layouts and devices strided lacks]: every ``is_*`` a torch tensor has, with a dense CPU tensor's answer
    (is_cuda / is_cpu / is_meta follow the device)."""
    torch = pytest.importorskip("torch")
    s, t = st.zeros(2), torch.zeros(2)
    names = [n for n in dir(t) if n.startswith("is_") and not callable(getattr(t, n))]
    assert {"is_sparse", "is_quantized", "is_mps", "is_leaf", "is_cuda"} <= set(names)
    for name in names:
        assert getattr(s, name) == getattr(t, name), name
    assert s.is_distributed() is t.is_distributed() is False
    meta = st.empty(2, device="meta")
    assert meta.is_meta and not meta.is_cpu and not meta.is_sparse


@pytest.mark.parametrize("make", [lambda m: m.tensor(np.float32(2.7), dtype=m.int32),
                                  lambda m: m.tensor(np.float16(2.7), dtype=m.int64),
                                  lambda m: m.tensor(np.float32(2.7), dtype=m.bool),
                                  lambda m: m.tensor([[np.float32(1.5), 2]], dtype=m.uint8),
                                  lambda m: m.tensor(np.complex64(2.7), dtype=m.int32),
                                  lambda m: m.tensor(np.float64(2.7), dtype=m.int32),
                                  lambda m: m.tensor([np.float32(2.5)], dtype=m.float64)])
def test_numpy_float_scalars_into_an_integer_dtype_as_torchs(make):
    # torch reads np.float32 / float16 / complex64 scalars into an integer or bool dtype as indices and refuses them;
    # np.float64 is a Python float and truncates
    torch = pytest.importorskip("torch")
    outcomes = []
    for m in (st, torch):
        try:
            outcomes.append(make(m).tolist())
        except TypeError as e:
            outcomes.append(str(e))
    assert outcomes[0] == outcomes[1]
