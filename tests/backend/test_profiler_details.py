"""strided.profiler's optional records, each checked against torch.profiler on the same program:
``profile_memory`` (bytes charged to the op that allocated or freed them), ``with_flops`` (torch's FLOP
formulas), ``with_stack`` (each op's call site; a range per nn.Module call) and ``export_stacks``."""

from __future__ import annotations

import gc
import json

import numpy as np
import pytest

import strided as st
import strided.cuda
from strided.profiler import ProfilerActivity, profile, record_function

torch = pytest.importorskip("torch")
CUDA = pytest.mark.skipif(not strided.cuda.is_available(), reason="no CUDA device")


def _program(lib, x, old):
    """The same steps in either library; ``old`` (allocated before the profile) is freed inside it."""
    with lib.profiler.record_function("blk"):
        y = x @ x
        z = y.relu()
        del y  # freed inside blk: blk's own memory goes negative
    w = lib.cat([z, z])
    del z  # freed outside every range: a "[memory]" event
    old.clear()
    s = w + w
    return w, s


def _profiled(lib, **kwargs):
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal((100, 100)).astype(np.float32))
    old = [lib.ones(64, 64)]
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], **kwargs) as prof:
        keep = _program(lib, x, old)
    del keep
    return prof


def _by_name(prof, attr):
    out = {}
    for e in prof.events():
        out.setdefault(e.name, []).append(getattr(e, attr))
    return out


def test_profile_memory_charges_bytes_as_torch():
    mine, theirs = _profiled(st, profile_memory=True), _profiled(torch, profile_memory=True)
    # torch's relu calls clamp_min, which allocates: compare relu's total only
    for attr, names in (("cpu_memory_usage", ("blk", "aten::matmul", "aten::relu")),
                        ("self_cpu_memory_usage", ("blk", "aten::mm", "aten::cat", "aten::add", "[memory]"))):
        got, want = _by_name(mine, attr), _by_name(theirs, attr)
        for name in names:
            assert got[name] == want[name], (attr, name, got[name], want[name])
    avg = {e.key: e for e in mine.key_averages()}
    assert avg["blk"].self_cpu_memory_usage == -40000 and avg["blk"].cpu_memory_usage == 40000
    table = mine.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=3)
    head = table.splitlines()[1]
    assert "CPU Mem" in head and "Self CPU Mem" in head and "CUDA Mem" not in head
    first = table.splitlines()[3]
    assert first.split()[0] == "aten::cat" and "78.12 KB" in first  # torch's cell format
    trace = json.loads(json.dumps(__import__("strided.profiler.events", fromlist=["x"]).chrome_trace(mine.events())))
    marks = [e for e in trace["traceEvents"] if e["name"] == "[memory]"]
    assert [m["args"]["Bytes"] for m in marks] == [r.nbytes for r in mine.events().memory_records]
    assert all(m["ph"] == "i" and m["args"]["Device Type"] == 0 for m in marks)
    assert marks[-1]["args"]["Total Allocated"] == sum(m["args"]["Bytes"] for m in marks)
    plain = _profiled(st)  # without profile_memory: no columns, no records
    assert "CPU Mem" not in plain.key_averages().table() and plain.events().memory_records == []


def test_profile_memory_hooks_are_removed():
    from strided.backends import STORAGE_ALLOCATORS

    before = dict(STORAGE_ALLOCATORS)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        a = st.ones(1000)
    assert STORAGE_ALLOCATORS == before
    n = len(prof.events().memory_records)
    del a  # freed after the profile: not recorded, and nothing fails
    assert len(prof.events().memory_records) == n == 1


def test_with_flops_uses_torchs_formulas():
    def run(lib):
        g = lib.Generator().manual_seed(0) if lib is st else torch.Generator().manual_seed(0)
        a, b = lib.randn(8, 16, generator=g), lib.randn(16, 4, generator=g)
        p, q = lib.randn(3, 8, 16, generator=g), lib.randn(3, 16, 4, generator=g)
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], with_flops=True) as prof:
            a @ b
            lib.addmm(lib.zeros(8, 4), a, b)
            lib.bmm(p, q)
            lib.baddbmm(lib.zeros(3, 8, 4), p, q)
            a * 2.0
            a + a
        return prof

    got, want = _by_name(run(st), "flops"), _by_name(run(torch), "flops")
    for name in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::mul", "aten::add"):
        assert got[name] == want[name], (name, got[name], want[name])
    assert got["aten::mm"] == [2 * 8 * 16 * 4]
    table = run(st).key_averages().table()
    assert "Total FLOPs" in table.splitlines()[1]  # scaled to the smallest non-zero count (mul: 128), as torch


def _model_step():
    m = st.nn.Sequential(st.nn.Linear(4, 4), st.nn.ReLU(), st.nn.Linear(4, 4))
    x = st.randn(2, 4)
    with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
        m(x)  # the call site of every op below
    return prof


def test_with_stack_records_call_sites_and_module_ranges(tmp_path):
    prof = _model_step()
    events = prof.events()
    mods = [e.name for e in events if e.name.startswith("nn.Module: ")]
    assert mods == ["nn.Module: Sequential_0", "nn.Module: Linear_0", "nn.Module: ReLU_0", "nn.Module: Linear_1"]
    addmm = [e for e in events if e.name == "aten::addmm"]
    assert [e.parent.parent.name for e in addmm] == ["nn.Module: Linear_0", "nn.Module: Linear_1"]
    stack = addmm[0].stack
    assert stack[0].endswith(": linear") and "strided/nn/functional.py(" in stack[0]  # innermost first
    assert any(s.endswith(": _model_step") and __file__ in s for s in stack)
    assert not any("/strided/dispatch/" in s or "/strided/profiler/" in s for s in stack)  # the runtime's frames
    avg = prof.key_averages()
    assert not any(e.key.startswith("nn.Module") for e in avg)  # torch leaves python functions out
    assert any(e.key.startswith("nn.Module") for e in events.key_averages(include_python_functions=True))
    grouped = prof.key_averages(group_by_stack_n=1)
    assert all(len(e.stack) <= 1 for e in grouped)
    table = grouped.table()
    assert "Source Location" in table.splitlines()[1] and "functional.py(" in table
    prof.export_stacks(str(tmp_path / "stacks.txt"))
    lines = (tmp_path / "stacks.txt").read_text().splitlines()
    assert lines and all(" " not in line.rsplit(" ", 1)[0] and int(line.rsplit(" ", 1)[1]) > 0 for line in lines)
    with pytest.raises(ValueError, match="metric should be one of"):
        prof.export_stacks(str(tmp_path / "x.txt"), metric="bogus")
    from strided.nn.module import Module

    assert not hasattr(Module.__call__, "unprofiled")  # the module hook is removed


def test_trace_carries_stacks_flops_and_module_ranges(tmp_path):
    m = st.nn.Linear(4, 4)
    with profile(activities=[ProfilerActivity.CPU], with_stack=True, with_flops=True) as prof:
        with record_function("step"):
            m(st.randn(2, 4))
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    mod = next(e for e in events if e["name"] == "nn.Module: Linear_0")
    assert mod["cat"] == "python_function" and mod["ph"] == "X"
    addmm = next(e for e in events if e["name"] == "aten::addmm")
    assert addmm["args"]["flops"] == 2 * 2 * 4 * 4 and "Call stack" in addmm["args"]


def test_key_averages_bad_group_by_stack_n():
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        st.ones(2) + 1
    with pytest.raises(ValueError, match="group_by_stack_n must be a non-negative int, got -1"):
        prof.key_averages(group_by_stack_n=-1)
    with pytest.raises(ValueError, match="time_unit"):
        prof.key_averages().table(time_unit="ns")
    assert "ms" in prof.key_averages().table(time_unit="ms")


@CUDA
def test_cuda_memory_is_charged_in_allocator_blocks():
    old = st.empty(1000, device="cuda")  # allocated before the profile: its free is still seen
    st.ones(10, device="cuda") * 2  # kernels compiled
    gc.collect()  # earlier tests' cyclic garbage would otherwise be freed (and recorded) inside the profile
    gc.disable()
    try:
        alloc = strided.cuda.memory_allocated()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True) as prof:
            a = st.ones(1000, device="cuda")  # 4000 B: a 4096-byte block, as torch counts it
            b = a * 2
            del old
    finally:
        gc.enable()
    events = prof.events()
    ones = next(e for e in events if e.name == "aten::ones")
    mul = next(e for e in events if e.name == "aten::mul")
    assert ones.device_memory_usage == 4096 and mul.self_device_memory_usage == 4096
    assert ones.cpu_memory_usage == 0
    records = [r for r in events.memory_records if r.device_type == "cuda"]
    assert [r.nbytes for r in records] == [4096, 4096, -4096]
    assert records[-1].total_allocated == alloc + 4096 and records[-1].total_reserved >= records[-1].total_allocated
    table = events.key_averages().table(sort_by="self_cuda_memory_usage", row_limit=3)
    assert "CUDA Mem" in table.splitlines()[1] and "4.00 KB" in table
    from strided.backends.cuda.allocator import get_allocator

    assert "malloc" not in vars(get_allocator(0)) and "free" not in vars(get_allocator(0))  # hooks removed
    del a, b


def test_autograd_profiler_is_the_older_interface_to_the_same_recorder():
    from strided.autograd import profiler as legacy

    with legacy.profile(record_shapes=True, profile_memory=True) as prof:
        with legacy.record_function("block"):
            st.ones(8) + 1
    names = [e.name for e in prof.function_events]
    assert "block" in names and "aten::add" in names
    assert "CPU Mem" in prof.key_averages().table() and "aten::add" in str(prof)
    assert prof.self_cpu_time_total > 0
    with legacy.profile(enabled=False) as off:
        st.ones(2)
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        off.key_averages()
    with pytest.raises(ValueError, match="use_device must be None or 'cuda'"):
        legacy.profile(use_device="xpu")
