"""cross_entropy's gradient against torch's for every combination of its arguments: class indices or
probabilities, class weights, label smoothing, ignore_index, each reduction, 1-d / 2-d / K-dimensional
logits (weighted or smoothed "mean" once raised a TypeError in backward)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

CASES = list(itertools.product([(6, 5), (5,), (3, 5, 4)], ["mean", "sum", "none"], [False, True], [0.0, 0.3],
                               [False, True]))


@pytest.mark.parametrize("shape,reduction,weighted,smoothing,probs", CASES)
def test_cross_entropy_forward_and_gradient_equal_torchs(shape, reduction, weighted, smoothing, probs):
    rng = np.random.default_rng(len(shape) * 7 + int(weighted) + 2 * int(probs))
    c = 5
    x = rng.standard_normal(shape).astype(np.float32)
    tshape = (shape[0], *shape[2:]) if len(shape) > 1 else ()
    target = rng.random(shape).astype(np.float32) if probs else rng.integers(0, c, tshape)
    if not probs and tshape:
        target.reshape(-1)[0] = -100  # one ignored position
    class_weight = rng.random(c).astype(np.float32)
    g = rng.standard_normal(tshape).astype(np.float32)
    out = []
    for lib in (torch, st):
        xt = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(xt, lib.tensor(target), weight=lib.tensor(class_weight) if weighted
                                               else None, reduction=reduction, label_smoothing=smoothing)
        (loss * lib.tensor(g)).sum().backward() if reduction == "none" else loss.backward()
        out.append((loss.detach().numpy(), xt.grad.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=2e-5, atol=1e-6)
