"""Fixtures shared by the CUDA tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def sync_calls(monkeypatch):
    """Counts stream, context and event synchronizations made through the driver bindings."""
    from strided.backends.cuda import driver

    d = driver.cu()
    calls = []
    for name in ("cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize"):
        real = getattr(d, name)

        def counted(*args, _real=real, _name=name):
            calls.append(_name)
            return _real(*args)

        monkeypatch.setattr(d, name, counted)
    return calls
