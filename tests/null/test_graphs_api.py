"""strided.cuda.graphs without a GPU: argument checks and pool handles (capture itself is GPU-tier)."""

from __future__ import annotations

import pytest

import strided.cuda as cuda


def test_graph_rejects_non_graphs_and_bad_modes():
    with pytest.raises(TypeError, match="expected a strided.cuda.CUDAGraph"):
        cuda.graph(object())
    with pytest.raises(ValueError, match="capture_error_mode must be one of"):
        cuda.CUDAGraph().capture_begin(capture_error_mode="loose")


def test_pool_handles_are_fresh_user_pool_ids():
    a, b = cuda.graph_pool_handle(), cuda.graph_pool_handle()
    assert a[0] == 0 and b[0] == 0 and b[1] > a[1] > 0


def test_uncaptured_graph_errors_name_the_missing_capture():
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="replay without a preceding successful capture"):
        g.replay()
    with pytest.raises(RuntimeError, match="pool\\(\\) without a preceding successful capture"):
        g.pool()
    with pytest.raises(RuntimeError, match="capture_end: no capture is underway"):
        g.capture_end()
    with pytest.raises(RuntimeError, match="keep_graph=True"):
        g.debug_dump("/dev/null")
    g.reset()  # nothing to free: no error


def test_make_graphed_callables_checks_arguments_before_touching_cuda():
    import strided as st
    from strided import nn

    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="sample_args for each callable must contain only Tensors"):
        cuda.make_graphed_callables(lin, ("x",))
    with pytest.raises(ValueError, match="every sample arg must be a CUDA tensor"):
        cuda.make_graphed_callables(lin, (st.randn(2, 2),))
    with pytest.raises(ValueError, match="got 2 callables but 1 tuples of sample_args"):
        cuda.make_graphed_callables((lin, lin), ((st.randn(2, 2),),))
    with pytest.raises(ValueError, match="num_warmup_iters must be a non-negative int"):
        cuda.make_graphed_callables(lin, (st.randn(2, 2),), num_warmup_iters=-1)
    with pytest.raises(TypeError, match="int object is not callable"):
        cuda.make_graphed_callables(3, (st.randn(2, 2),))
