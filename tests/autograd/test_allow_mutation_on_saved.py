"""``autograd.graph.allow_mutation_on_saved_tensors`` against torch's, program for program (Note [Mutation of
saved tensors])."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.dispatch.versions import before_write
from strided.testing.opinfo import available_devices

torch = pytest.importorskip("torch")

_DATA = np.linspace(-1.5, 2.0, 6, dtype=np.float64).reshape(2, 3)


def _leaf(lib, device="cpu"):
    return lib.tensor(_DATA.copy(), requires_grad=True, device=device)


def _grads(program, device):
    out = []
    for lib in (st, torch):
        a = _leaf(lib, device)
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            program(lib, a)
        out.append(a.grad.detach().cpu().numpy())
    return out


@pytest.mark.parametrize("device", [d for d in available_devices() if d != "meta"])
@pytest.mark.parametrize("name", ["sin_ after pow", "two writes, saved twice", "out= write", "a view at offset 0",
                                  "foreach write", "saved by several ops"])
def test_gradients_use_the_value_before_the_write(name, device):
    def program(lib, a):
        b = a.clone()
        if name == "sin_ after pow":
            loss = (b ** 2).sum()
            b.sin_()
        elif name == "two writes, saved twice":
            loss = (b * b).sum() + b.exp().sum()
            b.mul_(3)
            b.add_(1)
        elif name == "out= write":
            loss = b.sigmoid().sum()
            lib.cos(a.detach(), out=b.detach())  # the same memory, written through another tensor
        elif name == "a view at offset 0":
            loss = (b ** 3).sum()
            b[0].zero_()
        elif name == "foreach write":
            loss = (b.tanh() * b).sum()
            lib._foreach_mul_([b.detach()], 2.0)
        else:
            c = b * 2
            loss = (c * c).sum() + c.log1p().abs().sum()
            c.fill_(7)
        loss.backward()

    ours, theirs = _grads(program, device)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_without_the_context_the_write_breaks_backward_and_with_it_backward_works():
    a = _leaf(st)
    b = a.clone()
    loss = (b ** 2).sum()
    b.sin_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    with st.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        b = a.clone()
        loss = (b ** 2).sum()
        b.sin_()
        assert len(ctx.cloned) == 1
        loss.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * _DATA)
    assert before_write.hook is None and not ctx.cloned and not ctx.original  # cleared on exit


def test_a_write_through_a_view_that_starts_elsewhere_is_seen_where_torch_misses_it():
    a = _leaf(st)
    with st.autograd.graph.allow_mutation_on_saved_tensors():
        b = a.clone()
        loss = (b ** 2).sum()
        b[1].sin_()  # torch keys by data pointer and misses it (its gradient then uses the sines)
        loss.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * _DATA)
    t = _leaf(torch)
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        c = t.clone()
        loss = (c ** 2).sum()
        c[1].sin_()
        loss.backward()
    assert not np.allclose(t.grad.numpy(), 2 * _DATA)  # the case this deviation is for


def test_backward_outside_the_context_and_nesting_are_refused_in_torchs_words():
    errors = []
    for lib in (st, torch):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            b = _leaf(lib).clone()
            loss = (b ** 2).sum()
        with pytest.raises(AssertionError) as e:
            loss.backward()
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    with st.autograd.graph.allow_mutation_on_saved_tensors():
        with pytest.raises(RuntimeError, match="allow_mutation_on_saved_tensors contexts cannot be nested"):
            with st.autograd.graph.allow_mutation_on_saved_tensors():
                pass
        b = _leaf(st).clone()
        (b * b).sum().backward()  # the outer context still works after the refused inner one


def test_a_leaf_written_in_place_is_still_refused():
    with st.autograd.graph.allow_mutation_on_saved_tensors():
        a = _leaf(st)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            a.mul_(2)
