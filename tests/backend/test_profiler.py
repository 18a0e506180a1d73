"""strided.profiler: ranges per op call, backward node and record_function; tables, traces and schedules as
torch.profiler's; on CUDA, every kernel timed on the GPU and added to the op that launched it."""

from __future__ import annotations

import json

import pytest

import strided as st
import strided.cuda
from strided.dispatch import dispatcher
from strided.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule
from strided.profiler.events import chrome_trace

CUDA = pytest.mark.skipif(not strided.cuda.is_available(), reason="no CUDA device")


def _step(device="cpu"):
    x = st.randn(32, 32, device=device, requires_grad=True)
    with record_function("forward"):
        y = (x @ x).relu().sum()
    y.backward()
    return x


def test_ops_nest_inside_record_function_and_backward_nodes_get_ranges():
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        _step()
    events = prof.events()
    names = [e.name for e in events]
    fwd = next(e for e in events if e.name == "forward")
    assert fwd.cat == "user_annotation" and fwd.parent is None
    matmul = next(e for e in events if e.name == "aten::matmul")
    assert matmul.parent is fwd and matmul.input_shapes == [[32, 32], [32, 32]]
    assert any(c.name == "aten::mm" for c in matmul.children)  # the composite's call of mm, nested
    assert "autograd::engine::evaluate_function: ReluBackward0" in names
    node = next(e for e in events if e.name == "ReluBackward0")
    assert node.parent.name == "autograd::engine::evaluate_function: ReluBackward0"
    # an Autograd kernel and the backend kernel it redispatches to are one range, as in torch
    assert names.count("aten::relu") == 1
    for e in events:
        assert e.end_us >= e.start_us
        assert e.self_cpu_time_total <= e.cpu_time_total + 1e-9
        assert all(e.start_us <= c.start_us and c.end_us <= e.end_us for c in e.children)


def test_hooks_are_removed_after_the_profile():
    with profile(activities=[ProfilerActivity.CPU]):
        st.ones(2) + 1
    assert dispatcher._tracing.wrapper is None and dispatcher._tracing.node_scope is None
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        pass
    assert list(prof.events()) == []
    with record_function("outside a profile"):  # no profile: nothing happens
        st.ones(2) * 2


def test_key_averages_and_table_as_torch():
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(3):
            st.ones(4) + st.ones(4)
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::add"].count == 3 and avg["aten::ones"].count == 6
    a = avg["aten::add"]
    assert a.cpu_time == pytest.approx(a.cpu_time_total / 3)
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=2)
    lines = table.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                "CPU", "time", "avg", "#", "of", "Calls"]
    assert len(lines) == 2 + 1 + 2 + 1 + 1  # rule, header, rule, 2 rows, rule, total
    assert lines[-1].startswith("Self CPU time total: ")
    grouped = prof.key_averages(group_by_input_shape=True).table(sort_by="count")
    assert "Input Shapes" in grouped and "[[4], [4]]" in grouped
    with pytest.raises(AttributeError, match="sort_by"):
        prof.key_averages().table(sort_by="bogus")


def test_chrome_trace_is_valid_json_with_every_range(tmp_path):
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _step()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    ranges = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(ranges) == len(prof.events())
    assert {"name", "ts", "dur", "pid", "tid", "cat"} <= set(ranges[0])


def test_schedule_saves_each_active_cycle_and_drops_warmup():
    assert [schedule(wait=1, warmup=1, active=2, repeat=1)(s) for s in range(5)] == [
        ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE,
        ProfilerAction.NONE]
    saved, traces = [], []
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=lambda p: (saved.append([e.name for e in p.events()]),
                                           traces.append(chrome_trace(p.events())))) as prof:
        for i in range(10):
            st.full((2,), float(i)) * 1.0
            prof.step()
    assert len(saved) == 2
    for names, trace in zip(saved, traces):  # steps 2-3 and 6-7: two recorded steps, the warm-up's left out
        assert names.count("ProfilerStep*") == 2 and names.count("aten::mul") == 2  # torch's event names
        steps = [e["name"] for e in trace["traceEvents"] if e["name"].startswith("ProfilerStep")]
        assert steps in (["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"])


def test_bad_arguments():
    with pytest.warns(FutureWarning, match="with_modules is deprecated"):  # torch's words: it records nothing
        profile(with_modules=True)
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        schedule(wait=0, warmup=0, active=0)
    with pytest.raises(TypeError, match="activities"):
        profile(activities=["cpu"])
    from strided.profiler import tensorboard_trace_handler

    with pytest.raises(TypeError, match="dir_name must be a path, not int"):
        tensorboard_trace_handler(3)
    with pytest.raises(TypeError, match="argument 'name' must be str, not int"):
        record_function(3)
    with pytest.raises(RuntimeError, match="already"):
        with profile(activities=[ProfilerActivity.CPU]), profile(activities=[ProfilerActivity.CPU]):
            pass
    assert dispatcher._tracing.wrapper is None
    with profile(activities=[ProfilerActivity.CPU]) as outer:
        inner = profile(activities=[ProfilerActivity.CPU])
        with pytest.raises(RuntimeError, match="already"):
            inner.start()
        inner.stop()  # the refused profile stops nothing of the one recording
        st.ones(2) * 3
    assert "aten::mul" in [e.name for e in outer.events()]
    if not strided.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            profile(activities=[ProfilerActivity.CUDA])


def test_tensorboard_trace_handler_writes_a_trace(tmp_path):
    from strided.profiler import tensorboard_trace_handler

    with profile(activities=[ProfilerActivity.CPU], on_trace_ready=tensorboard_trace_handler(str(tmp_path), "w")):
        st.ones(3).sum()
    (path,) = tmp_path.iterdir()
    assert path.name.startswith("w.") and path.name.endswith(".pt.trace.json")
    assert json.loads(path.read_text())["traceEvents"]


@CUDA
def test_cuda_kernels_are_timed_and_attributed():
    x = st.randn(256, 256, device="cuda")
    _step("cuda")  # kernels compiled, plans made
    st.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        _step("cuda")
        (x @ x).cpu()
    events = prof.events()
    kernels = events.kernels
    names = [k.name for k in kernels]
    assert kernels and all(k.start_us is not None and k.end_us >= k.start_us for k in kernels), names
    gemms = [n for n in names if n.startswith("cublasLtMatmul [")]
    assert len(gemms) >= 4, names  # forward x @ x, its two gradients, the last product
    assert "Memcpy DtoH" in names, names
    launches = [e for e in events if e.name == "cuLaunchKernel"]
    assert launches and all(e.cat == "cuda_runtime" and not e.kernels for e in launches)
    mm = next(e for e in events if e.name == "aten::mm")
    assert mm.self_device_time_total > 0 and mm.device_time_total >= mm.self_device_time_total
    fwd = next(e for e in events if e.name == "forward")
    assert fwd.device_time_total == pytest.approx(sum(k.duration_us for k in kernels if _under(k.parent, fwd)))
    # a kernel starts after its launch (the reference event's host time is read after a sync: late, not
    # early) and after the one launched before it on its stream ends
    for k in kernels:
        assert k.start_us >= k.launch_us - 50.0, (k.name, k.launch_us, k.start_us)
    for prev, k in zip(kernels, kernels[1:]):
        if prev.stream == k.stream:
            assert k.start_us >= prev.end_us - 1.0, (prev.name, prev.end_us, k.name, k.start_us)
    table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=5)
    assert "Self CUDA" in table and "Self CUDA time total" in table
    trace = json.loads(json.dumps(__import__("strided.profiler.events", fromlist=["x"]).chrome_trace(events)))
    assert sum(1 for e in trace["traceEvents"] if e.get("cat") == "kernel") == len(kernels)


def _under(e, root) -> bool:
    while e is not None:
        if e is root:
            return True
        e = e.parent
    return False


@CUDA
def test_cuda_graph_capture_under_the_profiler_lists_kernels_untimed():
    x = st.ones(1024, device="cuda")
    y = x * 2  # compile before capturing
    g = st.cuda.CUDAGraph()
    s = st.cuda.Stream()
    s.wait_stream(st.cuda.current_stream())
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with st.cuda.stream(s):
            with st.cuda.graph(g):
                y = x * 2
        g.replay()
    st.cuda.synchronize()
    assert y.cpu().tolist() == [2.0] * 1024
    captured = [k for k in prof.events().kernels if k.start_us is None]
    assert captured
    (replay,) = [k for k in prof.events().kernels if k.name == "CUDA graph replay"]
    assert replay.start_us is not None and replay.end_us >= replay.start_us  # the replay is timed as one range


def test_chrome_trace_places_kernels_on_numeric_gpu_lanes_with_launch_arrows():
    """The kernel half of the trace, from hand-made records (the CUDA test checks real ones)."""
    from strided.profiler.events import EventList, FunctionEvent, KernelRecord, chrome_trace

    op = FunctionEvent(1, "aten::mm", "cpu_op", 7, 10.0, None)
    op.end_us = 30.0
    k = KernelRecord("cublasLtMatmul [mm float32]", 0, 0x5A, 12.0, op, None, None)
    k.id, k.start_us, k.end_us = 2, 15.0, 40.0
    op.kernels.append(k)
    untimed = KernelRecord("ew_vec", 0, 0x5A, 20.0, op, (4, 1, 1), (128, 1, 1))  # launched during a capture
    trace = json.loads(json.dumps(chrome_trace(EventList([op], [k, untimed]))))["traceEvents"]
    assert all(isinstance(e["pid"], int) and isinstance(e["tid"], int) for e in trace)
    (kern,) = [e for e in trace if e.get("cat") == "kernel"]
    assert (kern["ts"], kern["dur"], kern["tid"], kern["args"]["External id"]) == (15.0, 25.0, 0x5A, 1)
    start, finish = [e for e in trace if e.get("cat") == "ac2g"]
    assert (start["ph"], start["tid"], start["ts"]) == ("s", 7, 12.0)
    assert (finish["ph"], finish["pid"], finish["tid"], finish["ts"]) == ("f", kern["pid"], 0x5A, 15.0)
    names = {(e["name"], e["args"]["name"]) for e in trace if e["ph"] == "M"}
    assert ("process_name", "GPU 0") in names and ("thread_name", "stream 0x5a") in names
    assert op.device_time_total == op.self_device_time_total == 25.0
