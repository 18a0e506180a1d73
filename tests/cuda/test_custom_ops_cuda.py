"""strided.library.custom_op on a GPU (Note [Custom ops]): a kernel per device, the CUDA tensors' own stream, the
backward formula on CUDA tensors, the aliasing check, the version bump of a mutated CUDA tensor."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from strided.library import custom_op

import strided as st
import strided.cuda as cuda
from strided import Tensor

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")
_ids = itertools.count()


def _name(op: str) -> str:
    return f"custom_ops_cuda_test{next(_ids)}::{op}"


def test_kernel_per_device_and_backward_on_cuda():
    @custom_op(_name("numpy_sin"), mutates_args=(), device_types="cpu")
    def numpy_sin(x: Tensor) -> Tensor:
        return st.from_numpy(np.sin(x.numpy()))

    devices = []

    @numpy_sin.register_kernel("cuda")
    def _(x):
        devices.append((x.device.type, cuda.current_stream(x.device) == s))
        return st.from_numpy(np.sin(x.cpu().numpy())).to(x.device)

    numpy_sin.register_autograd(lambda ctx, g: g * ctx.x.cos(),
                                setup_context=lambda ctx, inputs, output: setattr(ctx, "x", inputs[0]))
    s = cuda.Stream()
    x = st.linspace(-2, 2, 9, device="cuda", requires_grad=True)
    with cuda.stream(s):
        y = numpy_sin(x)
        y.sum().backward()
    s.synchronize()
    assert devices == [("cuda", True)]
    assert y.device.type == "cuda" and st.allclose(y.cpu(), x.detach().cpu().sin())
    assert x.grad.device.type == "cuda" and st.allclose(x.grad.cpu(), x.detach().cpu().cos())
    assert st.allclose(numpy_sin(x.detach().cpu()), x.detach().cpu().sin())  # the CPU kernel still serves CPU


def test_cuda_outputs_may_not_alias_and_writes_bump_versions():
    @custom_op(_name("first_half"), mutates_args=())
    def first_half(x: Tensor) -> Tensor:
        return x[: x.shape[0] // 2]

    with pytest.raises(RuntimeError, match="may not alias any inputs"):
        first_half(st.ones(4, device="cuda"))

    @custom_op(_name("fill_twos"), mutates_args=("out",))
    def fill_twos(out: Tensor) -> None:
        out.copy_(st.full(out.shape, 2.0, device=out.device))

    out = st.zeros(3, device="cuda")
    before = out._version
    fill_twos(out)
    assert out.cpu().tolist() == [2.0, 2.0, 2.0] and out._version == before + 2  # copy_'s bump and the op's
