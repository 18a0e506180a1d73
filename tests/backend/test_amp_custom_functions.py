"""``strided.amp.custom_fwd`` / ``custom_bwd`` on the CPU's autocast, as torch's."""

from __future__ import annotations

import pytest

import strided as st
from strided.amp import custom_bwd, custom_fwd


def _function(**fwd_options):
    seen = {}

    class MatmulTwice(st.autograd.Function):
        @staticmethod
        @custom_fwd(device_type="cpu", **fwd_options)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            seen["forward inputs"] = (a.dtype, b.dtype)
            out = a @ b
            seen["forward"] = out.dtype
            return out

        @staticmethod
        @custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            ga, gb = grad @ b.t(), a.t() @ grad
            seen["backward"] = ga.dtype
            return ga, gb

    return MatmulTwice, seen


def test_backward_runs_under_the_forwards_autocast_state():
    fn, seen = _function()
    a = st.randn(4, 3, requires_grad=True)
    b = st.randn(3, 2, requires_grad=True)
    with st.autocast("cpu", dtype=st.bfloat16):
        out = fn.apply(a, b)
    out.float().sum().backward()  # outside the region: custom_bwd restores autocast for the backward
    assert seen == {"forward inputs": (st.float32, st.float32), "forward": st.bfloat16, "backward": st.bfloat16}
    assert a.grad.dtype is st.float32 and b.grad.dtype is st.float32

    fn, seen = _function()
    fn.apply(a, b).sum().backward()  # no autocast in forward: none in backward either
    assert seen["forward"] is st.float32 and seen["backward"] is st.float32


def test_cast_inputs_casts_and_turns_autocast_off_inside_forward():
    fn, seen = _function(cast_inputs=st.float32)
    a = st.randn(4, 3).to(st.bfloat16).requires_grad_()
    b = st.randn(3, 2).to(st.bfloat16).requires_grad_()
    with st.autocast("cpu", dtype=st.bfloat16):
        out = fn.apply(a, b)
    assert seen["forward inputs"] == (st.float32, st.float32) and out.dtype is st.float32
    out.sum().backward()
    assert seen["backward"] is st.float32  # the forward ran without autocast, so the backward does too
    assert a.grad.dtype is st.bfloat16


def test_device_type_must_be_a_string_and_cuda_names_warn():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        custom_fwd(lambda ctx: None, device_type=None)
    with pytest.warns(FutureWarning, match="custom_fwd\\(args..., device_type='cuda'\\)"):
        decorate = st.cuda.amp.custom_fwd(cast_inputs=st.float32)
    assert callable(decorate)
    with pytest.warns(FutureWarning, match="custom_bwd"):
        st.cuda.amp.custom_bwd(lambda ctx, g: g)
