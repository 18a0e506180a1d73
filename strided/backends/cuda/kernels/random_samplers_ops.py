"""CUDA kernels of the gamma-family samplers (``random_samplers.cu``: ``_standard_gamma``, ``_sample_dirichlet``,
``poisson``, ``binomial``) and of their reparameterization gradients (``sampler_grads.cu``: ``_standard_gamma_grad``,
``_dirichlet_grad``).

Note [Sampler streams]
A rejection sampler draws a number of uniforms that differs from element to element, so the samplers cannot share
the fill kernels' layout (element i reads the Philox block of counter ``(i / 4, offset)``). Each element here owns
a Philox4x32-10 stream instead: counter ``(i, draw << 16 | i >> 32, offset)``, key ``seed``, where ``draw`` counts
the element's 4-word blocks (two 53-bit uniforms each). Elements are independent of the launch shape and of each
other, a ``(seed, offset)`` pair reproduces every draw, and a call takes one generator offset, as every other random
op does (under CUDA graph capture the offset is the draw's place in the graph: Note [Random ops under capture]).
The algorithms are torch's: Marsaglia and Tsang's gamma (``alpha < 1`` boosted by ``U^(1/alpha)``), Hoermann's
PTRS for Poisson rates >= 10 and the product of uniforms below (torch's CPU sampler; torch's CUDA kernel calls
cuRAND's), BTRS for binomials with ``count * min(p, 1 - p) >= 10`` and inversion below. They compute in double
for every dtype and give up after 1000 rejections with NaN (a probability below 1e-119 for valid parameters), so a
NaN or out-of-domain parameter returns NaN instead of looping. ``_sample_dirichlet`` draws float64 gammas, then
normalizes with strided's ops in float64 and clamps as the CPU kernel does (Note [CPU samplers]).
"""

from __future__ import annotations

from functools import cache

from .... import dtypes as dt
from ....dispatch.library import kernel
from ....random import default_generator_for
from ....type_info import finfo
from ...meta import random_samplers as meta
from ...meta.common import new_output
from ..capture import captures_underway, stream_is_capturing
from ..graphs import capture_philox
from ..launch import get_kernel
from ..streams import current_stream_handle
from . import CTYPES, _text, launch_config

__all__ = ["sampler_sources", "SAMPLER_FMT", "GRAD_FMT"]

SAMPLER_FMT = "<QQQqQQQd"  # SamplerParams: out, a, b, n, seed, offset, state, tiny
GRAD_FMT = "<QQQQq"  # GradParams: out, a, b, c, n
_FLOATS = ("float32", "float64", "float16", "bfloat16")
SAMPLERS = ("standard_gamma_kernel", "poisson_kernel", "binomial_kernel")
GRADS = ("standard_gamma_grad_kernel", "dirichlet_grad_kernel")


@cache
def sampler_source(in_name: str, out_name: str) -> str:
    """random_samplers.cu for parameters of dtype ``in_name`` and results of dtype ``out_name`` (after
    random.cu, whose ``philox`` and ``u01`` it uses)."""
    head = f"#define IN_T {CTYPES[in_name]}\n#define OUT_T {CTYPES[out_name]}\n#define DST_T OUT_T\n"
    return head + _text("common.cuh") + "\n" + _text("random.cu") + "\n" + _text("random_samplers.cu")


@cache
def grad_source(name: str) -> str:
    """sampler_grads.cu for operands and results of dtype ``name`` (after elementwise.cuh: ``ew_digamma``)."""
    head = f"#define OUT_T {CTYPES[name]}\n"
    return head + _text("common.cuh") + "\n" + _text("elementwise.cuh") + "\n" + _text("sampler_grads.cu")


def sampler_sources():
    """(file, kernel names, source) of every instantiation the ops use (NVRTC null test): each floating dtype,
    and each with float64 results (the Dirichlet's gammas)."""
    for name in _FLOATS:
        yield "random_samplers.cu", SAMPLERS, sampler_source(name, name)
        if name != "float64":
            yield "random_samplers.cu", SAMPLERS, sampler_source(name, "float64")
        yield "sampler_grads.cu", GRADS, grad_source(name)


def _dense(t, sizes):
    """``t`` broadcast to ``sizes`` as a dense row-major tensor (a copy unless it is one already)."""
    if t._sizes == sizes and t.is_contiguous():
        return t
    return t.expand(sizes).contiguous()


def _philox(gen, stream: int, device) -> tuple[int, int, int]:
    """(seed, offset, state pointer) of one draw from ``gen`` (Note [Sampler streams])."""
    if captures_underway() and stream_is_capturing(stream):  # Note [Random ops under capture]
        state_ptr, offset = capture_philox(gen, stream, device)
    else:
        state_ptr, offset = 0, gen.philox_offset
        gen.philox_offset = offset + 1
    return gen.initial_seed() & ((1 << 64) - 1), offset, state_ptr


def _sample(name: str, out, a, b=None, generator=None, tiny: float = 0.0):
    n = out.numel()
    if not n:
        return out
    dev = out.device.index
    stream = current_stream_handle(dev)
    gen = generator if generator is not None else default_generator_for(out.device)
    seed, offset, state_ptr = _philox(gen, stream, out.device)
    a = _dense(a, out._sizes)
    b = None if b is None else _dense(b, out._sizes)
    k = get_kernel(sampler_source(a.dtype.name, out.dtype.name), name, SAMPLER_FMT, dev)
    grid, block = launch_config(n)
    k(grid, block, stream, out.data_ptr(), a.data_ptr(), 0 if b is None else b.data_ptr(), n, seed, offset,
      state_ptr, float(tiny))
    return out


def _grad(name: str, out, *operands):
    n = out.numel()
    if not n:
        return out
    dev = out.device.index
    ptrs = [_dense(t, out._sizes) for t in operands]
    args = [t.data_ptr() for t in ptrs] + [0] * (3 - len(ptrs))
    k = get_kernel(grad_source(out.dtype.name), name, GRAD_FMT, dev)
    grid, block = launch_config(n)
    k(grid, block, current_stream_handle(dev), out.data_ptr(), *args, n)
    return out


@kernel("CUDA")
def _standard_gamma(self, generator=None):
    out = meta._standard_gamma(self)
    return _sample("standard_gamma_kernel", out, self, generator=generator, tiny=finfo(out.dtype).tiny)


@kernel("CUDA")
def poisson(self, generator=None):
    return _sample("poisson_kernel", meta.poisson(self), self, generator=generator)


@kernel("CUDA")
def binomial(count, prob, generator=None):
    return _sample("binomial_kernel", meta.binomial(count, prob), count, prob, generator=generator)


@kernel("CUDA")
def _sample_dirichlet(self, generator=None):
    out = meta._sample_dirichlet(self)
    if not out.numel():
        return out
    gamma = new_output(self._sizes, dt.float64, self.device)
    _sample("standard_gamma_kernel", gamma, self, generator=generator, tiny=finfo(dt.float64).tiny)
    x = (gamma / gamma.sum(-1, keepdim=True)).to(out.dtype)
    info = finfo(out.dtype)
    return out.copy_(x.clamp(info.tiny, 1 - info.eps / 2))  # [tiny, nextafter(1, 0)]


@kernel("CUDA")
def _standard_gamma_grad(self, output):
    return _grad("standard_gamma_grad_kernel", meta._standard_gamma_grad(self, output), self, output)


@kernel("CUDA")
def _dirichlet_grad(x, alpha, total):
    return _grad("dirichlet_grad_kernel", meta._dirichlet_grad(x, alpha, total), x, alpha, total)
