"""torch.cond / torch.while_loop run eagerly (Note [Eager control flow] in ``strided/control_flow.py``): the branch
or the loop as Python runs it, gradients through the ops inside, and torch's argument checks in its words."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

torch = pytest.importorskip("torch")

DEVICES = [d for d in available_devices() if d != "meta"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_takes_the_branch_and_its_gradient(device, sign):
    x = st.tensor([sign, 2.0 * sign, 3.0 * sign], device=device, requires_grad=True)
    y = st.cond(x.sum() > 0, lambda t: t.cos(), lambda t: t.sin() * 2, (x,))
    y.sum().backward()
    a = np.array([sign, 2.0 * sign, 3.0 * sign])
    want_y, want_g = (np.cos(a), -np.sin(a)) if sign > 0 else (2 * np.sin(a), 2 * np.cos(a))
    np.testing.assert_allclose(y.detach().cpu().numpy(), want_y, rtol=1e-6)
    np.testing.assert_allclose(x.grad.cpu().numpy(), want_g, rtol=1e-6)
    assert st.cond(sign > 0, lambda: 1, lambda: 2) == (1 if sign > 0 else 2)  # a Python predicate, no operands


@pytest.mark.parametrize("device", DEVICES)
def test_while_loop_carries_nested_values_and_gradients(device):
    w = st.ones(2, device=device, requires_grad=True)
    i, state = st.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, {"y": s["y"] * w}),
                             (st.tensor(0, device=device), {"y": st.full((2,), 2.0, device=device)}))
    assert int(i) == 3
    state["y"].sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), [6.0, 6.0])
    x = st.ones(3, device=device)
    never = st.while_loop(lambda t: t.sum() < 0, lambda t: (t + 1,), (x,))
    assert never[0] is not x and never[0].tolist() == [1.0, 1.0, 1.0]  # copies, as torch's
    assert st.while_loop(lambda k: k < 5, lambda k: (k + 2,), (0,)) == (6,)


COND_BAD = [
    lambda L, x: L.cond(x > 0, lambda t: t, lambda t: t, (x,)),
    lambda L, x: L.cond("a", lambda t: t, lambda t: t, (x,)),
    lambda L, x: L.cond(x.sum() > 0, 1, lambda t: t, (x,)),
    lambda L, x: L.cond(x.sum() > 0, lambda t: t, lambda t: t, (x, 1)),
    lambda L, x: L.while_loop(1, lambda t: (t,), (x,)),
]


@pytest.mark.parametrize("case", range(len(COND_BAD)))
def test_refusals_in_torchs_words(case):
    messages = []
    for lib in (st, torch):
        with pytest.raises(RuntimeError) as info:
            COND_BAD[case](lib, lib.ones(3))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_loop_checks():
    x = st.ones(3)
    with pytest.raises(RuntimeError, match="cond_fn must return a boolean scalar tensor or a boolean but got"):
        st.while_loop(lambda t: t, lambda t: (t,), (x,))
    with pytest.raises(AssertionError, match="body_fn should return a tuple but got"):
        st.while_loop(lambda t: t.sum() < 5, lambda t: t + 1, (x,))
    with pytest.raises(AssertionError, match="the same number of elements as carried_inputs, got 2 vs 1"):
        st.while_loop(lambda t: t.sum() < 5, lambda t: (t + 1, t), (x,))
    with pytest.raises(RuntimeError, match="onlyconsists of tensor or int leaves"):
        st.while_loop(lambda t, s: True, lambda t, s: (t, s), (x, "a"))
    with pytest.raises(RuntimeError, match="carried_inputs must be a tuple or list"):
        st.while_loop(lambda t: t.sum() < 5, lambda t: (t + 1,), x)
