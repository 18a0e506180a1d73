"""``strided.Stream`` / ``strided.Event``, torch's device-generic classes (Note [Device-generic streams] in
``strided/device_streams.py``): the CUDA kinds are their subclasses and are what the classes make for a CUDA device;
the host devices' stream and event behave, and refuse, as torch's CPU ones."""

from __future__ import annotations

import pytest

import strided as st
from strided.testing import available_devices

CUDA = "cuda" in available_devices()


@pytest.mark.parametrize("dev", ["cpu", "meta"])
def test_host_stream(dev):
    s = st.Stream(device=dev)
    assert isinstance(s, st.Stream) and not isinstance(s, st.cuda.Stream)
    assert s.device == st.device(dev) and s.device_type == dev and s.device_index == -1 and s.stream_id == 0
    assert s.query() is True and s.synchronize() is None and s.is_capturing() is False
    other = "cpu" if dev == "meta" else "meta"
    assert s == st.Stream(device=dev) and hash(s) == hash(st.Stream(device=dev)) and s != st.Stream(device=other)
    assert repr(s) == f"strided.Stream device_type={dev}, device_index=-1, stream_id=0"
    assert st.Stream(device=dev, priority=-1).query()


def test_host_event_and_the_refusals():
    s, e = st.Stream(device="cpu"), st.Event(device="cpu", enable_timing=True)
    assert isinstance(e, st.Event) and not isinstance(e, st.cuda.Event)
    assert e.query() is True and e.synchronize() is None and e.wait(s) is None and s.wait_event(e) is None
    for call in (lambda: e.record(s), lambda: s.record_event(), lambda: s.wait_stream(s)):
        with pytest.raises(RuntimeError, match="^cpu backend doesn't support events.$"):
            call()
    with pytest.raises(RuntimeError, match="^Backend doesn't support getting stream native handle.$"):
        _ = s.native_handle
    with pytest.raises(ValueError, match="^Both events must be recorded before calculating elapsed time.$"):
        e.elapsed_time(e)


def test_cuda_classes_are_the_generic_ones_subclasses():
    assert issubclass(st.cuda.Stream, st.Stream) and issubclass(st.cuda.ExternalStream, st.Stream)
    assert issubclass(st.cuda.Event, st.Event)


@pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")
def test_cuda_streams_and_events_through_the_generic_classes():
    s = st.Stream(device="cuda")
    assert type(s) is st.cuda.Stream and isinstance(s, st.Stream) and s.device_type == "cuda"
    assert s.stream_id == s.native_handle == s.cuda_stream != 0
    default = st.Stream()  # the current accelerator
    assert type(default) is st.cuda.Stream and default.device.type == "cuda"
    start, end = st.Event(device="cuda", enable_timing=True), st.Event(enable_timing=True)
    assert type(start) is st.cuda.Event and isinstance(end, st.Event)
    with st.cuda.stream(s):
        start.record()
        x = st.ones(1 << 20, device="cuda")
        y = (x * 2).sum()
        end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0 and y.item() == 2 * (1 << 20) and start.device.type == "cuda"
    assert not s.is_capturing()
    g = st.cuda.CUDAGraph()
    capture_stream = st.cuda.Stream()
    with st.cuda.graph(g, stream=capture_stream):
        assert capture_stream.is_capturing()
        z = x + 1
    g.replay()
    assert not capture_stream.is_capturing() and z[0].item() == 2.0


def test_against_torch():
    torch = pytest.importorskip("torch")
    mine, theirs = st.Stream(device="cpu"), torch.Stream(device="cpu")
    assert repr(mine).replace("strided", "torch") == repr(theirs)
    assert (mine.device_index, mine.stream_id, mine.query()) == (theirs.device_index, theirs.stream_id, theirs.query())
    for call in (lambda lib: lib.Stream(device="cpu").record_event(),
                 lambda lib: lib.Stream(device="cpu").native_handle):
        with pytest.raises(RuntimeError) as a:
            call(st)
        with pytest.raises(RuntimeError) as b:
            call(torch)
        assert str(a.value) == str(b.value)


@pytest.mark.parametrize("call, words", [
    (lambda: st.Stream(device="cpu", priority="x"), "Stream(): argument 'priority' must be int, not str"),
    (lambda: st.Event(device="cpu", enable_timing="x"), "Event(): argument 'enable_timing' must be bool, not str"),
    (lambda: st.Stream(device=3.5), "Stream(): argument 'device' must be strided.device, not float"),
])
def test_argument_types_in_torchs_words(call, words):
    with pytest.raises(TypeError) as info:
        call()
    assert str(info.value) == words
