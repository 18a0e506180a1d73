"""Refusals on CUDA in the words of torch's CUDA kernels (torch 2.11, read on an H200 on 2026-11-27): complex input
where torch has no complex kernel, integer and bool input to floating-only ops; compared with torch's CUDA where it is
installed, and otherwise with the recorded words."""

from __future__ import annotations

import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def _complex_cases(m):
    F = m.nn.functional
    z = m.ones(2, 3, 4, dtype=m.complex64, device="cuda")
    return {
        "gelu": lambda: F.gelu(z), "logsigmoid": lambda: F.logsigmoid(z), "softmax": lambda: F.softmax(z, 1),
        "log_softmax": lambda: F.log_softmax(z, 1), "layer_norm": lambda: F.layer_norm(z, (4,)),
        "dropout": lambda: F.dropout(z, 0.5), "max": lambda: m.max(z), "amax": lambda: m.amax(z, 1),
        "amin": lambda: m.amin(z, 1), "sort": lambda: m.sort(z), "argsort": lambda: m.argsort(z),
        "topk": lambda: m.topk(z, 1), "median": lambda: m.median(z), "lt": lambda: m.lt(z, z),
        "histc": lambda: m.histc(z), "floor_divide": lambda: m.floor_divide(z, z),
        "cross_entropy": lambda: F.cross_entropy(z, m.zeros(2, 4, dtype=m.int64, device="cuda")),
        "relu": lambda: F.relu(z), "floor": lambda: m.floor(z), "argmax": lambda: m.argmax(z),
        "embedding_bag": lambda: F.embedding_bag(m.tensor([[0, 1]], device="cuda"), z[0]),
    }


# the recorded words, for a machine without torch's CUDA
_RECORDED = {
    "gelu": "\"GeluCUDAKernelImpl\" not implemented for 'ComplexFloat'",
    "logsigmoid": "\"log_sigmoid_forward_cuda\" not implemented for 'ComplexFloat'",
    "softmax": "\"host_softmax\" not implemented for 'ComplexFloat'",
    "layer_norm": "\"LayerNormKernelImpl\" not implemented for 'ComplexFloat'",
    "max": "\"max_all_cuda\" not implemented for 'ComplexFloat'",
    "sort": " Sort does not support complex dtypes on CPU",
    "lt": "\"compare_cuda\" not implemented for 'ComplexFloat'",
    "embedding_bag": "\"embedding_bag_cuda\" not implemented for 'ComplexFloat'",
}


def _dtype_cases(m, dt):
    F = m.nn.functional
    x = m.ones(2, 3, 4, 4, dtype=getattr(m, dt), device="cuda")
    return {
        "gelu": lambda: F.gelu(x), "silu": lambda: F.silu(x), "softplus": lambda: F.softplus(x),
        "logsigmoid": lambda: F.logsigmoid(x), "softmax": lambda: F.softmax(x, 1),
        "group_norm": lambda: F.group_norm(x, 3), "batch_norm": lambda: F.batch_norm(x, None, None, training=True),
        "rms_norm": lambda: F.rms_norm(x, (4,)), "mse_loss": lambda: F.mse_loss(x, x),
        "bce": lambda: F.binary_cross_entropy(x, x),
        "nll_loss": lambda: F.nll_loss(x, m.zeros(2, 4, 4, dtype=m.int64, device="cuda")),
        "embedding_bag": lambda: F.embedding_bag(m.tensor([[0, 1]], device="cuda"), x[0, 0]),
        "clamp_": lambda: x.clone().clamp_(min=0.5),
    }


def _outcome(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return type(e).__name__, str(e).splitlines()[0]
    return ("ok",)


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


_COMPLEX_NAMES = ["amax", "amin", "argmax", "argsort", "cross_entropy", "dropout", "embedding_bag", "floor",
                  "floor_divide", "gelu", "histc", "layer_norm", "log_softmax", "logsigmoid", "lt", "max", "median",
                  "relu", "softmax", "sort", "topk"]
_DTYPE_NAMES = ["batch_norm", "bce", "clamp_", "embedding_bag", "gelu", "group_norm", "logsigmoid", "mse_loss",
                "nll_loss", "rms_norm", "silu", "softmax", "softplus"]


@pytest.mark.parametrize("case", _COMPLEX_NAMES)
def test_complex_refusals_on_cuda_in_torch_words(case):
    got = _outcome(_complex_cases(st)[case])
    torch = _torch_cuda()
    if torch is not None:
        assert got == _outcome(_complex_cases(torch)[case])
    elif case in _RECORDED:
        assert got[1] == _RECORDED[case]
    else:
        pytest.skip("torch with CUDA is not installed: no recorded words for this case")


@pytest.mark.parametrize("dt", ["int64", "uint8"])
@pytest.mark.parametrize("case", _DTYPE_NAMES)
def test_integer_refusals_on_cuda_in_torch_words(dt, case):
    torch = _torch_cuda()
    if torch is None:
        pytest.skip("torch with CUDA is not installed: these words are compared with it")
    assert _outcome(_dtype_cases(st, dt)[case]) == _outcome(_dtype_cases(torch, dt)[case])


def _bool_clamp_cases(m):
    b = m.tensor([True, False], device="cuda")
    return {"tensor bounds": lambda: m.clamp(b, b, b), "scalar bounds": lambda: m.clamp(b, False, True),
            "min only": lambda: m.clamp(b, min=b), "clamp_min scalar": lambda: m.clamp_min(b, False),
            "clamp_max scalar": lambda: m.clamp_max(b, True)}


@pytest.mark.parametrize("case", ["clamp_max scalar", "clamp_min scalar", "min only", "scalar bounds",
                                  "tensor bounds"])
def test_bool_clamp_on_cuda_in_torch_words(case):
    torch = _torch_cuda()
    if torch is None:
        pytest.skip("torch with CUDA is not installed: these words are compared with it")
    assert _outcome(_bool_clamp_cases(st)[case]) == _outcome(_bool_clamp_cases(torch)[case])
