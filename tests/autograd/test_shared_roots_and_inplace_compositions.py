"""Reverse mode, against torch: several outputs of one node given together as roots (unbind, chunk, max), and the
in-place compositions whose functional op saves its input (Note [In-place composition sources])."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

_X = np.random.default_rng(3).uniform(0.1, 0.9, (3, 4))


@pytest.mark.parametrize("case", ["unbind", "chunk", "max values and a chunk", "split into three"])
def test_outputs_of_one_node_as_roots_together(case):
    def run(lib):
        a = lib.tensor(_X, requires_grad=True)
        if case == "unbind":
            outs = list(a.unbind(0))
        elif case == "chunk":
            outs = list(a.chunk(2, 1))
        elif case == "max values and a chunk":
            outs = [a.max(1).values, a.chunk(2, 1)[1]]
        else:
            outs = list(a.split(1, 0))
        grads = [lib.full(o.shape, float(k + 1), dtype=lib.float64) for k, o in enumerate(outs)]
        (g,) = lib.autograd.grad(outs, [a], grads, retain_graph=True)
        lib.autograd.backward(outs, grads)
        return g.numpy(), a.grad.numpy()

    ours, theirs = run(st), run(torch)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.parametrize("call", ["logit_()", "float_power_(2.0)", "float_power_(e)", "xlogy_(2.0)", "xlogy_(e)",
                                  "i0_()", "sinc_()", "ldexp_(e)"])
def test_an_inplace_composition_of_a_non_leaf_differentiates(call):
    def run(lib):
        a = lib.tensor(_X, requires_grad=True)
        e = lib.tensor(_X[::-1].copy(), requires_grad=True)
        b = a * 0.9  # inside (0, 1): logit's domain
        eval(f"b.{call}", {"b": b, "e": e})  # noqa: S307 - the calls above
        (b * lib.tensor(_X)).sum().backward()
        return a.grad.numpy(), None if e.grad is None else e.grad.numpy()

    ours, theirs = run(st), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, atol=1e-15)
    assert (ours[1] is None) == (theirs[1] is None)
    if ours[1] is not None:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-15)
