"""Note [Multi-output views]: the outputs of unbind / split / split_with_sizes / chunk (and views of them) refuse an
in-place write while autograd tracks them, and refuse to be used after an in-place write through their base, in
torch 2.14's words (written out here, so the test does not depend on the installed torch); the ``unsafe_`` variants
and tensors autograd does not track are written freely."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

_TAIL = (" This view is the output of a function that returns multiple views. Such functions do not allow the output "
         "views to be modified inplace. You should replace the inplace operation by an out-of-place one.")


def _direct(nr: int, name: str) -> str:
    return f"Output {nr} of {name} is a view and is being modified inplace." + _TAIL


def _through_base(nr: int, name: str) -> str:
    return (f"Output {nr} of {name} is a view and its base or another view of its base has been modified inplace."
            + _TAIL)


def _y():
    x = st.randn(4, 3, dtype=st.float64, requires_grad=True)
    return x, x * 2


@pytest.mark.parametrize("case, nr, name", [
    ("unbind", 1, "Unbind"), ("split", 1, "Split"), ("chunk", 0, "Split"), ("split_with_sizes", 1, "SplitWithSizes"),
    ("slice of unbind", 0, "Slice"), ("view of unbind", 0, "View"), ("setitem into unbind", 0, "Select"),
    ("copy_ into unbind", 0, "Unbind"), ("leaf unbind", 0, "Unbind"),
])
def test_an_inplace_write_to_a_multi_output_view_is_refused(case, nr, name):
    x, y = _y()
    write = {
        "unbind": lambda: y.unbind()[1].add_(1),
        "split": lambda: y.split(2)[1].mul_(2),
        "chunk": lambda: y.chunk(2)[0].mul_(2),
        "split_with_sizes": lambda: y.split([1, 3])[1].mul_(2),
        "slice of unbind": lambda: y.unbind()[0][0:2].mul_(2),
        "view of unbind": lambda: y.unbind()[0].view(3).mul_(2),
        "setitem into unbind": lambda: y.unbind()[0].__setitem__(0, 1.0),
        "copy_ into unbind": lambda: y.unbind()[0].copy_(st.zeros(3, dtype=st.float64)),
        "leaf unbind": lambda: x.unbind()[0].add_(1),
    }[case]
    before = y.detach().clone()
    with pytest.raises(RuntimeError) as info:
        write()
    assert str(info.value) == _direct(nr, name)
    assert st.equal(y.detach(), before)  # refused before anything was written


def test_using_a_multi_output_view_after_an_inplace_write_through_its_base_is_refused():
    x, y = _y()
    rows = y.unbind()
    part = y.unbind()[2][0:2]
    y.add_(1)
    with pytest.raises(RuntimeError) as info:
        (rows[0] * 2).sum()
    assert str(info.value) == _through_base(0, "Unbind")
    with pytest.raises(RuntimeError) as info:
        _ = part.grad_fn  # torch raises on reading it too
    assert str(info.value) == _through_base(0, "Slice")


def test_what_torch_allows_stays_allowed_and_differentiates():
    x, y = _y()
    rows = y.unbind()
    (g,) = st.autograd.grad((rows[0] * 3).sum() + (rows[1] ** 2).sum(), [x], retain_graph=True)  # out-of-place: fine
    want = np.zeros((4, 3))
    want[0] = 6.0
    want[1] = 8 * x.detach().numpy()[1]
    np.testing.assert_allclose(g.numpy(), want)
    with st.no_grad():
        y.unbind()[0].add_(1)  # autograd does not track it
    st.randn(4, 3).unbind()[0].add_(1)  # nor a base that does not require grad
    st.arange(6).view(2, 3).unbind()[0].add_(1)
    y.unbind()[0].detach().mul_(2)  # a detached alias
    for out in (y.unsafe_split(2)[0], y.unsafe_chunk(2)[1], y.unsafe_split_with_sizes([1, 3])[1]):
        out.mul_(2)  # torch's way around the rule
    y.tensor_split(2)[0].mul_(2)  # slices, not one multi-output node (as torch)
    y.hsplit(3)[0].mul_(2)
    (g,) = st.autograd.grad(y.sum(), [x])
    assert g.shape == (4, 3)


def test_a_stale_multi_output_view_still_prints_and_answers_non_differentiable_ops():
    """torch prints ``grad_fn=<Invalid>`` for a view whose history it refuses to regenerate, and lets ops that record
    no gradient (comparisons, argmax, detach) read it."""
    x, y = _y()
    rows = y.unbind()
    y.add_(1)
    assert repr(rows[0]).endswith("grad_fn=<Invalid>)")
    assert (rows[0] == 0).dtype == st.bool and rows[0].argmax().dtype == st.int64 and not rows[0].isnan().any()
    assert st.equal(rows[0].detach(), y.detach()[0])
    z = x.clone()
    z[0] = 1.0
    assert repr(z).endswith("grad_fn=<CopySlices>)")  # torch's name without its C++ namespace
