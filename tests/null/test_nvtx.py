"""strided.cuda.nvtx and strided.autograd.profiler.emit_nvtx: checked against torch.cuda.nvtx's results and,
through a test NVTX tool (nvtx_tool.py), by the ranges a tool really receives. No GPU needed."""

from __future__ import annotations

import pytest
from nvtx_tool import run_under_tool

import strided as st
import strided.cuda.nvtx as nvtx
from strided.autograd.profiler import emit_nvtx
from strided.backends.cuda import nvtx_library
from strided.dispatch import dispatcher
from strided.profiler import profile

torch = pytest.importorskip("torch")


def test_without_a_tool_the_results_are_torchs():
    ours = [nvtx.range_push("a"), nvtx.range_push("b"), nvtx.range_pop(), nvtx.range_pop(), nvtx.mark("m"),
            nvtx.range_start("r")]
    theirs = [torch.cuda.nvtx.range_push("a"), torch.cuda.nvtx.range_push("b"), torch.cuda.nvtx.range_pop(),
              torch.cuda.nvtx.range_pop(), torch.cuda.nvtx.mark("m"), torch.cuda.nvtx.range_start("r")]
    assert ours == theirs == [-2, -2, -2, -2, None, 0]
    assert nvtx.range_end(0) is None


def _enter_range(msg):
    with nvtx.range(msg):
        pass


@pytest.mark.parametrize("call", [lambda: nvtx.range_push(3), lambda: nvtx.mark(b"x"), lambda: nvtx.range_start(None),
                                  lambda: _enter_range(3)])
def test_a_message_that_is_not_a_str_is_refused(call):
    with pytest.raises(TypeError, match="argument 'msg' must be str"):
        call()


@pytest.mark.parametrize("bad", [-1, 1 << 64, "1", True])
def test_range_end_refuses_what_is_not_a_handle(bad):
    with pytest.raises(TypeError, match="range_end\\(\\): argument 'range_id'"):
        nvtx.range_end(bad)


def test_a_tool_receives_every_range_and_mark(tmp_path):
    log = run_under_tool(tmp_path, """
import strided.cuda.nvtx as nvtx
assert [nvtx.range_push("outer"), nvtx.range_push("inner"), nvtx.range_pop(), nvtx.range_pop()] == [0, 1, 1, 0]
nvtx.mark("here")
h = nvtx.range_start("across threads")
nvtx.range_end(h)
with nvtx.range("step {} of {n}", 3, n=5):
    pass

@nvtx.range("decorated")
def f():
    return 7

assert f() == 7
""")
    assert log == ["push outer", "push inner", "pop", "pop", "mark here", "start across threads", "end 1",
                   "push step 3 of 5", "pop", "push decorated", "pop"]


def test_emit_nvtx_opens_one_range_per_op_and_backward_node(tmp_path):
    log = run_under_tool(tmp_path, """
import strided as st
from strided.autograd.profiler import emit_nvtx
a = st.ones(2, 3, requires_grad=True)
b = st.ones(3, 4)
(a @ b).sum()  # every kernel resolved before the block: they are wrapped in place
with emit_nvtx(record_shapes=True):
    y = (a @ b).sum()
    y.backward()
with emit_nvtx():
    z = a.detach().relu()
z = a.detach().relu()  # after the block: no range
""")
    text = "\\n".join(log)
    assert log[0] == "push aten::matmul, sizes = [[2, 3], [3, 4]]"
    assert log[1] == "push aten::mm, sizes = [[2, 3], [3, 4]]"
    assert "push aten::sum, sizes = [[2, 4]]" in log
    nodes = [line.split(": ")[1] for line in log if line.startswith("push autograd::engine::evaluate_function: ")]
    assert nodes[0] == "SumBackward0" and nodes[-1] == "torch::autograd::AccumulateGrad" and len(nodes) == 3
    for node in nodes:  # the engine's range around the node's own
        assert log[log.index(f"push autograd::engine::evaluate_function: {node}") + 1] == f"push {node}"
    assert "push aten::relu" in log and "sizes" not in log[-2]
    assert log[-2:] == ["push aten::relu", "pop"]  # the call after the block is not annotated
    assert sum(line.startswith("push") for line in log) == log.count("pop")  # balanced
    assert text.count("push aten::mm,") == 2  # forward and a's gradient
    depth = 0
    for line in log:
        depth += 1 if line.startswith("push") else -1
        assert depth >= 0


def test_an_op_under_its_autograd_kernel_is_one_range(tmp_path):
    log = run_under_tool(tmp_path, """
import strided as st
from strided.autograd.profiler import emit_nvtx
a = st.ones(4, requires_grad=True)
with emit_nvtx():
    a * 2
""")
    assert log == ["push aten::mul", "pop"]


def test_emit_nvtx_refuses_to_nest_or_to_run_inside_the_profiler():
    e = emit_nvtx()
    with e:
        with pytest.raises(RuntimeError, match="NVTX annotation context manager is already entered"):
            e.__enter__()
        with pytest.raises(RuntimeError, match="Profiler is already enabled"):
            with emit_nvtx():
                pass
        with pytest.raises(RuntimeError, match="Profiler is already enabled"):
            with profile():
                pass
    assert dispatcher._tracing.wrapper is None and dispatcher._tracing.node_scope is None
    with profile():
        with pytest.raises(RuntimeError, match="Profiler is already enabled"):
            with emit_nvtx():
                pass
    with emit_nvtx(enabled=False):
        assert dispatcher._tracing.wrapper is None
    assert (st.ones(2) * 3).tolist() == [3.0, 3.0]


def test_without_the_library_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setattr(nvtx_library, "_lib", None)
    monkeypatch.setattr(nvtx_library, "_candidates", lambda: [])
    with pytest.raises(RuntimeError, match="NVTX functions not installed.*pip install nvidia-nvtx"):
        nvtx.range_push("x")
    with pytest.raises(RuntimeError, match="NVTX functions not installed"):
        with emit_nvtx():
            pass
    assert dispatcher._tracing.wrapper is None  # refused before anything was hooked


@pytest.mark.skipif(st.cuda.is_available(), reason="a GPU is present: this checks the no-CUDA message")
def test_cuda_profiler_without_a_gpu_says_so():
    import strided.cuda.profiler as cuda_profiler

    for call in (cuda_profiler.start, cuda_profiler.stop):
        with pytest.raises(RuntimeError, match="no CUDA device is available"):
            call()
