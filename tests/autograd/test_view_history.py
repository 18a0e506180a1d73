"""Views whose base starts requiring grad after they were made (Note [Late-requiring views]): their
values come from the base's new history, so gradients flow through them as in torch; views made
under no_grad stay non-differentiable."""

from __future__ import annotations

import pytest

import strided as st


def _leaves():
    return st.tensor([1.0, 2.0, 3.0], requires_grad=True), st.tensor([10.0, 20.0, 30.0], requires_grad=True)


def test_overlapping_inplace_adds_through_a_view_made_before_the_base_required_grad():
    a, b = _leaves()
    z = st.zeros(6)
    rows = z[0:6]  # made while z did not require grad
    rows[0:3].add_(a)
    rows[1:4].add_(b)  # overlaps the first add: its old values carry a's gradient
    (z * st.arange(6.0)).sum().backward()
    assert a.grad.tolist() == [0.0, 1.0, 2.0]  # torch's values (the second view used to drop them: zeros)
    assert b.grad.tolist() == [1.0, 2.0, 3.0]


def test_out_of_place_use_of_a_view_after_its_base_was_modified_in_place():
    a, b = _leaves()
    z = st.zeros(6)
    r = z[1:5]
    z[0:3].mul_(a.sum())  # z now requires grad; r's first two elements depend on a
    z.add_(1.0)
    y = (r * 3 + b[0]).sum()
    assert r.requires_grad
    y.backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0]  # z was zero where a.sum() scaled it
    assert b.grad.tolist() == [4.0, 0.0, 0.0]
    a.grad = None
    z2 = st.ones(4)
    r2 = z2[1:3]
    z2.mul_(a[0])
    (r2 * 2).sum().backward()
    assert a.grad.tolist() == [4.0, 0.0, 0.0]


def test_a_view_made_under_no_grad_stays_non_differentiable():
    w = st.tensor([1.0, 2.0], requires_grad=True)
    with st.no_grad():
        v = w[0:1]
    assert not v.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        (v * 3).sum().backward()
    assert w.grad is None


def test_transpose_of_a_0_dim_tensor_differentiates():
    """``x.transpose(0, -1)`` of a 0-dim tensor is itself (dims wrap as for one dim); its backward used to index
    an empty size list."""
    import strided as st

    x = st.tensor(2.0, dtype=st.float64, requires_grad=True)
    (g,) = st.autograd.grad(x.transpose(0, -1) * 3, [x])
    assert g.item() == 3.0


def test_a_view_made_under_no_grad_refuses_an_inplace_write_with_grad_on():
    """Note [No-grad views]: torch's error, where strided changed the base behind its history (a wrong gradient,
    silently) or a leaf that requires grad; inside no_grad the write is fine, and reading the view records nothing."""
    import pytest

    import strided as st

    x = st.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    with st.no_grad():
        v, w = x[:2], y[:2]
    for view in (v, w):
        with pytest.raises(RuntimeError, match="^A view was created in no_grad mode and is being modified inplace"):
            view.mul_(2)
    assert x.tolist() == [1.0, 2.0, 3.0] and y.tolist() == [1.0, 2.0, 3.0]
    with st.no_grad():
        w.mul_(2)  # both inside no_grad: allowed, not tracked (as torch)
    assert y.tolist() == [2.0, 4.0, 3.0]
    assert not (v * 2).requires_grad
    y2 = x.clone()
    y2[0].mul_(2)  # a view made with grad on is tracked as before
    y2.sum().backward()
    assert x.grad.tolist() == [2.0, 1.0, 1.0]
