"""F.linear_cross_entropy and nn.LinearCrossEntropyLoss against torch 2.14's: the reference path, the chunked
path (every reduction, bias, class weights, ignored rows, probability targets, chunk sizes) against torch's
reference, the options' chunk-size rules, the one-backward rule, and torch's errors and warnings."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.nn.functional as SF

torch = pytest.importorskip("torch")
if not hasattr(torch.nn.functional, "linear_cross_entropy"):
    pytest.skip("torch.nn.functional.linear_cross_entropy needs torch >= 2.14", allow_module_level=True)
TF = torch.nn.functional

N, D, C = 37, 8, 50


def _data(seed=0):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, C, N)
    t[3] = -100
    return dict(x=rng.standard_normal((N, D)).astype(np.float32), w=rng.standard_normal((C, D)).astype(np.float32),
                b=rng.standard_normal(C).astype(np.float32), cw=rng.random(C).astype(np.float32), t=t,
                p=rng.standard_normal((N, C)).astype(np.float32), g=rng.standard_normal(N).astype(np.float32))


def _run(lib, data, reduction, bias, class_weight, probs, options=None):
    F = TF if lib is torch else SF
    x = lib.tensor(data["x"], requires_grad=True)
    w = lib.tensor(data["w"], requires_grad=True)
    b = lib.tensor(data["b"], requires_grad=True) if bias else None
    t = lib.tensor(data["p"]).softmax(1) if probs else lib.tensor(data["t"])
    loss = F.linear_cross_entropy(x, w, t, linear_bias=b, weight=lib.tensor(data["cw"]) if class_weight else None,
                                  reduction=reduction, options=options)
    (loss * lib.tensor(data["g"])).sum().backward() if reduction == "none" else loss.backward()
    return [v.detach().numpy() for v in (loss, x.grad, w.grad, *((b.grad,) if bias else ()))]


CASES = [(r, bias, cw, probs) for r in ("mean", "sum", "none") for bias in (False, True) for cw in (False, True)
         for probs in ((False, True) if r != "none" else (False,))]


@pytest.mark.parametrize("reduction,bias,class_weight,probs", CASES)
@pytest.mark.parametrize("chunk", [None, 1, 5, 64])
def test_chunked_equals_torchs_reference(reduction, bias, class_weight, probs, chunk):
    data = _data()
    want = _run(torch, data, reduction, bias, class_weight, probs)
    opts = st.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk, chunking_method=None if chunk else "auto")
    got = _run(st, data, reduction, bias, class_weight, probs, opts)
    for a, b in zip(want, got):
        np.testing.assert_allclose(b, a, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_reference_path_equals_torchs(label_smoothing):
    data = _data(1)
    out = []
    for lib, F in ((torch, TF), (st, SF)):
        x = lib.tensor(data["x"], requires_grad=True)
        loss = F.linear_cross_entropy(x, lib.tensor(data["w"]), lib.tensor(data["t"]), ignore_index=-100,
                                      label_smoothing=label_smoothing)
        loss.backward()
        out.append((loss.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-5)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("n,d,c,kw", [(1024, 768, 50257, {}), (37, 8, 50, {}), (64, 512, 100, {}),
                                      (4096, 128, 32000, {"chunking_method": "aspect_ratio:4"}),
                                      (100, 16, 1000, {"acc_policy": "accurate"}), (9, 4, 7, {"batch_chunk_size": 4,
                                                                                            "chunking_method": None})])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("probs", [False, True])
def test_options_resolve_as_torchs(n, d, c, kw, dtype, probs):
    t = torch.nn.LinearCrossEntropyOptions(**kw)._adjust(n, d, c, getattr(torch, dtype), torch.device("cpu"), probs)
    s = st.nn.LinearCrossEntropyOptions(**kw)._adjust(n, d, c, getattr(st, dtype), st.device("cpu"), probs)
    assert (s.batch_chunk_size, s.acc_policy, s.chunking_method) == (t.batch_chunk_size, t.acc_policy,
                                                                      t.chunking_method)
    assert str(s.acc_dtype).split(".")[-1] == str(t.acc_dtype).split(".")[-1]


def test_second_backward_raises_unless_retained():
    data = _data()
    x = st.tensor(data["x"], requires_grad=True)
    loss = SF.linear_cross_entropy(x, st.tensor(data["w"]), st.tensor(data["t"]),
                                   options=st.nn.LinearCrossEntropyOptions())
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match=r"linear_cross_entropy chunked backward called twice; retain_graph=True "
                                           r"/ double backward are not supported\."):
        loss.backward()
    x2 = st.tensor(data["x"], requires_grad=True)
    loss = SF.linear_cross_entropy(x2, st.tensor(data["w"]), st.tensor(data["t"]),
                                   options=st.nn.LinearCrossEntropyOptions(allow_retain_graph=True))
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_allclose(x2.grad.numpy(), 2 * x.grad.numpy(), rtol=1e-6)


def test_only_the_inputs_that_require_grad_get_one():
    data = _data()
    x = st.tensor(data["x"])
    w = st.tensor(data["w"], requires_grad=True)
    SF.linear_cross_entropy(x, w, st.tensor(data["t"]), options=st.nn.LinearCrossEntropyOptions()).backward()
    assert x.grad is None and w.grad is not None and w.grad.shape == (C, D)


def test_unbatched_input_and_bfloat16():
    data = _data()
    for lib, F, opts in ((torch, TF, None), (st, SF, st.nn.LinearCrossEntropyOptions())):
        x = lib.tensor(data["x"][0])
        assert F.linear_cross_entropy(x, lib.tensor(data["w"]), lib.tensor(data["t"][0]), options=opts).shape == ()
    want = _run(torch, data, "mean", True, False, False)
    for policy in ("accurate", "compact"):
        xb = st.tensor(data["x"]).bfloat16().requires_grad_()
        wb = st.tensor(data["w"]).bfloat16().requires_grad_()
        loss = SF.linear_cross_entropy(xb, wb, st.tensor(data["t"]), linear_bias=st.tensor(data["b"]).bfloat16(),
                                       options=st.nn.LinearCrossEntropyOptions(acc_policy=policy,
                                                                              batch_chunk_size=8,
                                                                              chunking_method=None))
        loss.backward()
        assert loss.dtype is st.bfloat16 and xb.grad.dtype is st.bfloat16 and wb.grad.dtype is st.bfloat16
        np.testing.assert_allclose(loss.float().item(), want[0], rtol=2e-2)
        np.testing.assert_allclose(xb.grad.float().numpy(), want[1], rtol=5e-2, atol=5e-3)


def test_module_with_out_features_equals_torchs():
    torch.manual_seed(0)
    tm = torch.nn.LinearCrossEntropyLoss(5, 10, out_features=(4, 3), bias=True)
    sm = st.nn.LinearCrossEntropyLoss(5, 10, out_features=(4, 3), bias=True)
    sm.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5)).astype(np.float32)
    t = rng.integers(0, 10, (2, 4, 3))
    np.testing.assert_allclose(sm(st.tensor(x), st.tensor(t)).item(), tm(torch.tensor(x), torch.tensor(t)).item(),
                               rtol=1e-5)
    assert repr(sm).splitlines()[1] == repr(tm).splitlines()[1]


def test_unchunkable_options_warn_in_torchs_words_and_use_the_reference():
    data = _data()
    with pytest.warns(UserWarning, match=r"linear_cross_entropy: ``options`` ignored; chunked path needs reduction"):
        loss = SF.linear_cross_entropy(st.tensor(data["x"]), st.tensor(data["w"]), st.tensor(data["t"]),
                                       label_smoothing=0.1, options=st.nn.LinearCrossEntropyOptions())
    want = TF.linear_cross_entropy(torch.tensor(data["x"]), torch.tensor(data["w"]), torch.tensor(data["t"]),
                                   label_smoothing=0.1)
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-5)


@pytest.mark.parametrize("call", [
    lambda lib, F: F.linear_cross_entropy(lib.zeros(2, 3, 4), lib.zeros(5, 4), lib.zeros(2, dtype=lib.int64)),
    lambda lib, F: F.linear_cross_entropy(lib.zeros(2, 4), lib.zeros(4), lib.zeros(2, dtype=lib.int64)),
    lambda lib, F: F.linear_cross_entropy(lib.zeros(2, 3), lib.zeros(5, 4), lib.zeros(2, dtype=lib.int64)),
    lambda lib, F: F.linear_cross_entropy(lib.zeros(2, 4), lib.zeros(5, 4), lib.zeros(2, dtype=lib.int64),
                                          linear_bias=lib.zeros(4)),
    lambda lib, F: F.linear_cross_entropy(lib.zeros(4), lib.zeros(5, 2, 4), lib.zeros(2, dtype=lib.int64)),
    lambda lib, F: F.linear_cross_entropy(lib.zeros(2, 4), lib.zeros(5, 4), lib.zeros(2, 5), ignore_index=1),
    lambda lib, F: lib.nn.LinearCrossEntropyLoss(4, 5, weight=lib.ones(4)),
    lambda lib, F: lib.nn.LinearCrossEntropyLoss(4, 5, label_smoothing=1.5),
])
def test_errors_are_torchs(call):
    with pytest.raises(Exception) as want:
        call(torch, TF)
    with pytest.raises(type(want.value)) as got:
        call(st, SF)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("kw", [dict(acc_policy="fast"), dict(chunking_method="rows"),
                                dict(chunking_method="aspect_ratio:0"), dict(batch_chunk_size=0),
                                dict(batch_chunk_size=2.5)])
def test_bad_options_raise_torchs_value_errors(kw):
    with pytest.raises(ValueError) as want:
        torch.nn.LinearCrossEntropyOptions(**kw)
    with pytest.raises(ValueError) as got:
        st.nn.LinearCrossEntropyOptions(**kw)
    assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="acc_dtype must be one of"):
        st.nn.LinearCrossEntropyOptions(acc_dtype=st.int32)


@pytest.mark.parametrize("make", [
    lambda: (st.ones(4, 3), st.ones(5, 3), st.zeros(3, dtype=st.int64)),
    lambda: (st.ones(4, 3), st.ones(5, 3), st.zeros(4, 2, dtype=st.int64)),
    lambda: (st.ones(4, 3), st.ones(5, 3, dtype=st.float64), st.zeros(4, dtype=st.int64)),
])
def test_chunked_refuses_what_the_reference_refuses(make):
    with pytest.raises(Exception) as want:
        SF.linear_cross_entropy(*make())
    with pytest.raises(type(want.value)) as got:
        SF.linear_cross_entropy(*make(), options=st.nn.LinearCrossEntropyOptions())
    assert str(got.value) == str(want.value)


def test_wrong_argument_types_are_named():
    with pytest.raises(TypeError, match="linear_cross_entropy\\(\\): argument 'input' must be Tensor, not list"):
        SF.linear_cross_entropy([1.0], st.ones(2, 1), st.zeros((), dtype=st.int64))
    with pytest.raises(TypeError, match="argument 'options' must be LinearCrossEntropyOptions or None, not str"):
        SF.linear_cross_entropy(st.ones(2, 3), st.ones(4, 3), st.zeros(2, dtype=st.int64), options="fast")
