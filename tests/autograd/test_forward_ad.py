"""strided.autograd.forward_ad against torch's, program for program (Note [Forward AD by double backward])."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.autograd.forward_ad as sf
from strided.dispatch.dispatcher import _tracing

torch = pytest.importorskip("torch")
import torch.autograd.forward_ad as tf  # noqa: E402

_RNG = np.random.default_rng(7)
X, V = _RNG.standard_normal((3, 4)), _RNG.standard_normal((3, 4))
W = _RNG.standard_normal((4, 5))
TARGET = np.array([1, 0, 3])

PROGRAMS = {
    "pointwise": lambda lib, d, w: d.sin() * d.exp() - d.tanh() / (1 + d * d),
    "matmul chain": lambda lib, d, w: d @ w @ w.T @ d.T,
    "reductions": lambda lib, d, w: lib.stack([d.sum(), d.mean(), d.norm(), d.amax(), d.var()]),
    "softmax and log_softmax": lambda lib, d, w: d.softmax(-1) + d.log_softmax(0),
    "layer_norm and gelu": lambda lib, d, w: lib.nn.functional.gelu(lib.nn.functional.layer_norm(d, (4,))),
    "linear and cross_entropy": lambda lib, d, w: lib.nn.functional.cross_entropy(
        lib.nn.functional.linear(d, w.T), lib.tensor(TARGET)),
    "views and indexing": lambda lib, d, w: d[1:, ::2].t().reshape(-1)[[0, 2, 3]] * d[0, 1],
    "cat of a list": lambda lib, d, w: lib.cat([d, d * 2, w.T[:1]], 0).cumsum(0),
    "max with indices": lambda lib, d, w: d.max(1).values * 3,
    "in-place chain": lambda lib, d, w: d.clone().mul_(3).add_(d).clamp_(-1.0, 1.0).sigmoid_(),
    "where and pow": lambda lib, d, w: lib.where(d > 0, d ** 3, d.exp()),
    "the same dual twice": lambda lib, d, w: d * d + d,
    "several outputs of one op": lambda lib, d, w: lib.stack([*d.unbind(0), *d.chunk(2, 0)[1].unbind(0)]),
    "logcumsumexp (log |v| in its backward)": lambda lib, d, w: d.logcumsumexp(1),
    "lstm_cell": lambda lib, d, w: lib.lstm_cell(d[:, :3], (d, d), lib.cat([w.T] * 4)[:16, :3],
                                                 lib.cat([w.T] * 4)[:16])[1],
    "cross_entropy with smoothing": lambda lib, d, w: lib.nn.functional.cross_entropy(
        d, lib.tensor(TARGET), label_smoothing=0.1),
    "batch_norm, training": lambda lib, d, w: lib.nn.functional.batch_norm(
        d, None, None, w[:, 0] + 2, w[:, 1], training=True),
    "batch_norm, evaluation": lambda lib, d, w: lib.nn.functional.batch_norm(
        d, w[:, 2] * 0, w[:, 3] ** 2 + 1, w[:, 0], None, training=False),
    "group_norm": lambda lib, d, w: lib.nn.functional.group_norm(d.reshape(3, 2, 2), 2, w[:2, 0], w[:2, 1]),
}


def _tangent(lib, fw, program, no_grad=False):
    with fw.dual_level():
        d = fw.make_dual(lib.tensor(X), lib.tensor(V))
        if no_grad:
            with lib.no_grad():
                out = program(lib, d, lib.tensor(W))
        else:
            out = program(lib, d, lib.tensor(W))
        primal, tangent = fw.unpack_dual(out)
        return primal.detach().numpy(), tangent.numpy()


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_tangents_match_torchs(name):
    ours, theirs = _tangent(st, sf, PROGRAMS[name]), _tangent(torch, tf, PROGRAMS[name])
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-9, atol=1e-12)


def test_no_grad_does_not_stop_forward_ad_and_reverse_mode_still_works():
    ours = _tangent(st, sf, PROGRAMS["matmul chain"], no_grad=True)
    theirs = _tangent(torch, tf, PROGRAMS["matmul chain"], no_grad=True)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10)
    grads = []
    for lib, fw in ((st, sf), (torch, tf)):
        leaf = lib.tensor(X, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(leaf, lib.tensor(V))
            loss = (d.sin() * d).sum()
            loss.backward()
            grads.append((leaf.grad.numpy(), fw.unpack_dual(loss).tangent.item()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12)
    assert grads[0][1] == pytest.approx(grads[1][1], rel=1e-12)


def test_tangents_end_with_the_level_and_the_dispatcher_is_unhooked():
    with sf.dual_level():
        assert _tracing.wrapper is not None
        d = sf.make_dual(st.ones(2), st.ones(2))
        y = d * 2
        assert sf.unpack_dual(y).tangent.tolist() == [2.0, 2.0]
        assert sf.unpack_dual(st.ones(2)).tangent is None  # a tensor without one
        assert sf.unpack_dual(d.argmax()).tangent is None  # an integer output
        assert sf.unpack_dual(y).primal is not y and sf.unpack_dual(y).primal.tolist() == [2.0, 2.0]
    assert _tracing.wrapper is None and not sf._tangents
    assert sf.unpack_dual(y) == (y, None)


def test_misuse_is_refused_in_torchs_words():
    for lib, fw in ((st, sf), (torch, tf)):
        with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
            fw.make_dual(lib.ones(3), lib.ones(3))
        with fw.dual_level():
            with pytest.raises(RuntimeError, match=r"Tensor is of size \[3\] while the given forward gradient is "
                                                   r"of size \[2\]"):
                fw.make_dual(lib.ones(3), lib.ones(2))
            with pytest.raises(ValueError, match="Expected primal to be floating point or complex, but got"):
                fw.make_dual(lib.arange(3), lib.ones(3))
            with pytest.raises(ValueError, match="Expected tangent to be floating point or complex, but got"):
                fw.make_dual(lib.ones(3), lib.arange(3))
            with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
                fw.enter_dual_level()
    with sf.dual_level():
        with pytest.raises(NotImplementedError, match="real tensors only"):
            sf.make_dual(st.ones(2, dtype=st.complex64), st.ones(2, dtype=st.complex64))
    from strided.utils.profiler import count_ops

    with count_ops():
        with pytest.raises(RuntimeError, match="forward AD cannot run while the profiler or count_ops"):
            sf.enter_dual_level()
    with sf.dual_level():
        pass  # the refused level left nothing behind


def test_the_profiler_and_count_ops_refuse_to_start_inside_a_level():
    from strided.profiler import profile
    from strided.utils.profiler import count_ops

    with sf.dual_level():
        with pytest.raises(RuntimeError, match="a forward AD level"):
            with count_ops():
                pass
        with pytest.raises(RuntimeError, match="a forward AD level is open"):
            with profile():
                pass
        d = sf.make_dual(st.ones(2), st.full((2,), 3.0))
        assert sf.unpack_dual(d.exp()).tangent.tolist() == pytest.approx([3 * np.e] * 2)  # still hooked


def test_out_and_list_writing_ops_are_refused_in_torchs_words():
    with sf.dual_level():
        d = sf.make_dual(st.ones(3), st.ones(3))
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with mul_out that does not support it "
                                                      "because it is an out= function"):
            st.ops.aten.mul.out(d, d, out=st.empty(3))
        with pytest.raises(NotImplementedError, match="does not run ops that write lists of tensors"):
            st._foreach_mul_([d.clone()], 2.0)
