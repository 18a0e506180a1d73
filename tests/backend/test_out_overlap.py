"""``out=`` that overlaps an input (Note [Out overlap] in ``strided/ops/memory_overlap.py``): the gathering and
concatenating ops refuse any overlap, the scans a partial one, as torch's; disjoint parts of one storage and a
separate ``out`` compute."""

from __future__ import annotations

import pytest

import strided as st
from strided.ops.memory_overlap import PARTIAL_OVERLAP
from strided.testing import available_devices

CASES = {
    "cat full": lambda T: (lambda a: T.cat([a[:2], T.ones(2)], out=a))(T.arange(4.0)),
    "cat partial": lambda T: (lambda x: T.cat([x[:2], x[1:3]], out=x))(T.arange(4.0)),
    "cat separate out": lambda T: T.cat([T.arange(2.0), T.ones(2)], out=T.empty(4)),
    "cat disjoint parts": lambda T: (lambda x: T.cat([x[:1], x[1:2]], out=x[2:]))(T.arange(4.0)),
    "index_select same": lambda T: (lambda x: T.index_select(x, 0, T.tensor([3, 2, 1, 0]), out=x))(T.arange(4.0)),
    "index_select partial": lambda T: (lambda x: T.index_select(x[:2], 0, T.tensor([1, 0]), out=x[1:3]))(
        T.arange(4.0)),
    "gather same": lambda T: (lambda x: T.gather(x, 0, T.tensor([3, 2, 1, 0]), out=x))(T.arange(4.0)),
    "gather disjoint": lambda T: (lambda x: T.gather(x[:2], 0, T.tensor([1, 0]), out=x[2:]))(T.arange(4.0)),
    "stack": lambda T: (lambda x: T.stack([x[:2], x[2:]], out=x.view(2, 2)))(T.arange(4.0)),
    "hstack": lambda T: (lambda x: T.hstack([x[:2], x[2:]], out=x))(T.arange(4.0)),
    "take same": lambda T: (lambda x: T.take(x, T.tensor([3, 2, 1, 0]), out=x))(T.arange(4.0)),
    "masked_select": lambda T: (lambda x: T.masked_select(x, x > 0, out=x))(T.arange(4.0)),
    "cumsum same": lambda T: (lambda x: T.cumsum(x, 0, out=x))(T.arange(4.0)),
    "cumsum partial": lambda T: (lambda x: T.cumsum(x[:3], 0, out=x[1:]))(T.arange(4.0)),
    "cumprod partial": lambda T: (lambda x: T.cumprod(x[:3], 0, out=x[1:]))(T.arange(4.0)),
    "logcumsumexp partial": lambda T: (lambda x: T.logcumsumexp(x[:3], 0, out=x[1:]))(T.arange(4.0)),
}
REFUSED = {"cat full", "cat partial", "index_select same", "index_select partial", "gather same", "stack", "hstack",
           "take same", "masked_select", "cumsum partial", "cumprod partial", "logcumsumexp partial"}


@pytest.mark.parametrize("device", [d for d in available_devices() if d != "meta"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_out_overlap(name, device):
    """On every backend: a CUDA kernel with an ``.out`` overload of its own must not bypass the check."""
    with st.device(device):
        if name in REFUSED:
            with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor"):
                CASES[name](st)
        else:
            out = CASES[name](st)
            assert out.device.type == device


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_overlap_as_torch(name):
    torch = pytest.importorskip("torch")
    try:
        CASES[name](torch)
        refused = False
    except RuntimeError as e:
        assert str(e) == PARTIAL_OVERLAP
        refused = True
    assert refused == (name in REFUSED)
