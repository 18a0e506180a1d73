"""Layers that are one op in torch are one op here: every convolution of ``nn.functional`` is the ``convolution``
op, group norm the ``native_group_norm`` op. The autograd node is torch's (``ConvolutionBackward0``,
``NativeGroupNormBackward0``) and keeps what torch's keeps between the passes (the input and the weight; the group
statistics), not the columns of a GEMM or a normalized copy (Note [Convolution backward], Note [Group-norm
node])."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")  # the oracle

RNG = np.random.default_rng(11)

# (function, input shape, weight shape, keyword arguments)
CASES = [
    ("conv1d", (2, 4, 9), (6, 4, 3), {"padding": 1}),
    ("conv2d", (2, 4, 7, 6), (6, 2, 3, 3), {"stride": 2, "groups": 2}),
    ("conv_transpose1d", (2, 4, 9), (4, 3, 3), {"stride": 2, "output_padding": 1}),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 2), {"stride": 2, "padding": 1}),
    ("conv_transpose2d", (1, 2, 4, 4), (2, 3, 3, 3), {"padding": 1, "dilation": 2, "output_padding": 1}),
    ("conv3d", (2, 4, 5, 4, 6), (6, 2, 3, 2, 3), {"padding": 1, "groups": 2}),
    ("conv3d", (1, 2, 4, 5, 4), (3, 2, 2, 3, 2), {"padding": "same"}),  # an odd row padded first, as torch
    ("conv_transpose3d", (2, 4, 3, 4, 3), (4, 3, 3, 2, 2), {"stride": 2, "padding": 1, "output_padding": 1}),
]


def _saved_shapes(lib, out_fn):
    shapes = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: shapes.append(tuple(t.shape)) or t, lambda t: t):
        out = out_fn()
    return out, sorted(shapes)


@pytest.mark.parametrize("name,xs,ws,kw", CASES, ids=[c[0] + str(c[3]) for c in CASES])
def test_one_node_keeping_input_and_weight_as_torch(name, xs, ws, kw):
    x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
    b = RNG.standard_normal(ws[1] * kw.get("groups", 1) if "transpose" in name else ws[0])
    tensors = {}
    for lib in (st, torch):
        args = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        fn = getattr(lib.nn.functional, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's note on 'same' padding with an even kernel
            out, saved = _saved_shapes(lib, lambda fn=fn, args=args: fn(*args, **kw))
        tensors[lib.__name__] = out, saved, args
    (s_out, s_saved, s_args), (t_out, t_saved, t_args) = tensors["strided"], tensors["torch"]
    assert type(s_out.grad_fn).__name__ == type(t_out.grad_fn).__name__ == "ConvolutionBackward0"
    assert s_saved == t_saved and len(s_saved) == 2 and tuple(ws) in s_saved  # the (padded) input and the weight
    upstream = RNG.standard_normal(tuple(t_out.shape))
    s_out.backward(st.tensor(upstream))
    t_out.backward(torch.tensor(upstream))
    for s_arg, t_arg in zip(s_args, t_args):
        np.testing.assert_allclose(s_arg.grad.numpy(), t_arg.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_is_one_node_keeping_what_torch_keeps(affine):
    x, w, b = RNG.standard_normal((4, 6, 5, 3)), RNG.standard_normal(6), RNG.standard_normal(6)
    results = {}
    for lib in (st, torch):
        args = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        fn = lib.nn.functional.group_norm
        out, saved = _saved_shapes(lib, lambda fn=fn, args=args: fn(args[0], 3, *(args[1:] if affine else ())))
        results[lib.__name__] = out, saved, args
    (s_out, s_saved, s_args), (t_out, t_saved, t_args) = results["strided"], results["torch"]
    assert type(s_out.grad_fn).__name__ == type(t_out.grad_fn).__name__ == "NativeGroupNormBackward0"
    assert s_saved == t_saved
    upstream = RNG.standard_normal(x.shape)
    s_out.backward(st.tensor(upstream))
    t_out.backward(torch.tensor(upstream))
    for s_arg, t_arg in zip(s_args, t_args):
        if t_arg.grad is not None:
            np.testing.assert_allclose(s_arg.grad.numpy(), t_arg.grad.numpy(), rtol=1e-10, atol=1e-10)
