"""NVTX and the CUDA profiler's collection switch on a real GPU: ``strided.cuda.profiler`` start / stop, and
``emit_nvtx`` around CUDA work as a tool sees it (the test tool of tests/null/nvtx_tool.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def _nvtx_tool():
    spec = importlib.util.spec_from_file_location("nvtx_tool", Path(__file__).parents[1] / "null" / "nvtx_tool.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cuda_profiler_start_stop_and_block():
    cuda.profiler.start()
    cuda.profiler.stop()
    with cuda.profiler.profile():
        y = st.ones(4, device="cuda") * 2
    assert y.cpu().tolist() == [2.0] * 4


def test_emit_nvtx_cuda_training_step_under_a_tool(tmp_path):
    log = _nvtx_tool().run_under_tool(tmp_path, """
import strided as st
import strided.nn as nn
from strided.autograd.profiler import emit_nvtx
model = nn.Linear(8, 4).cuda()
x = st.randn(16, 8, device="cuda")
with emit_nvtx(record_shapes=True):
    model(x).square().mean().backward()
st.cuda.synchronize()
assert model.weight.grad is not None and model.weight.grad.device.type == "cuda"
""")
    assert "push aten::linear, sizes = [[16, 8], [4, 8], [4]]" in log
    nodes = [line.split(": ")[1] for line in log if line.startswith("push autograd::engine::evaluate_function: ")]
    assert nodes[0] == "MeanBackward0" and nodes.count("torch::autograd::AccumulateGrad") == 2
    assert sum(line.startswith("push") for line in log) == log.count("pop")
