"""``set_warn_always`` / ``is_warn_always_enabled`` and the warnings given once per process (Note [Warn once] in
``strided/warn_once.py``), against torch's TORCH_WARN_ONCE."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _restore():
    yield
    st.set_warn_always(False)
    torch.set_warn_always(False)


def _count(lib, call, n):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(n):
            call(lib)
    return len(caught)


CALLS = {
    "chain_matmul": lambda lib: lib.chain_matmul(lib.ones(2, 2), lib.ones(2, 2)),
    "from_numpy not writable": lambda lib: lib.from_numpy(np.frombuffer(bytes(8), dtype=np.int16)),
    "lu": lambda lib: lib.lu(lib.eye(2)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_once_per_process_unless_warn_always(name):
    call = CALLS[name]
    for lib in (st, torch):
        call(lib)  # whatever earlier tests did, the warning has now been given once
    for lib in (st, torch):
        assert _count(lib, call, 3) == 0, lib.__name__
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled()
        assert _count(lib, call, 3) == 3, lib.__name__
        lib.set_warn_always(False)
        assert not lib.is_warn_always_enabled()
        assert _count(lib, call, 3) == 0, lib.__name__


@pytest.mark.parametrize("value", [1, "yes", None])
def test_the_switch_takes_only_a_bool(value):
    messages = []
    for lib in (st, torch):
        with pytest.raises(RuntimeError) as info:
            lib.set_warn_always(value)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert not st.is_warn_always_enabled()
