"""torch's ``_foreach_*`` operand forms (Note [Composite foreach]) on CUDA tensors: each form gives the CPU's values
and keeps its results on the GPU; the in-place forms update the list they were given."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided import foreach_more

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")

_RNG = np.random.default_rng(11)
_A = [_RNG.uniform(0.1, 0.9, 5).astype(np.float32), _RNG.uniform(0.1, 0.9, (3, 4)).astype(np.float32)]
_B = [_RNG.uniform(0.5, 2.0, 5).astype(np.float32), _RNG.uniform(0.5, 2.0, (3, 4)).astype(np.float32)]


def _lists(device):
    return [st.from_numpy(a.copy()).to(device) for a in _A], [st.from_numpy(b.copy()).to(device) for b in _B]


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.device.type == "cuda"
        np.testing.assert_allclose(g.cpu().numpy(), w.numpy(), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", foreach_more._UNARY)
def test_unary_on_cuda_matches_cpu(name):
    (x, _), (c, _) = _lists("cuda"), _lists("cpu")
    _same(getattr(st, f"_foreach_{name}")(x), getattr(st, f"_foreach_{name}")(c))
    got = getattr(st, f"_foreach_{name}_")(x)
    assert got is x
    _same(got, getattr(st, f"_foreach_{name}_")(c))


@pytest.mark.parametrize("name", foreach_more._BINARY)
@pytest.mark.parametrize("form", ["scalar", "scalar list", "tensor list"])
def test_binary_forms_on_cuda_match_cpu(name, form):
    (x, y), (c, d) = _lists("cuda"), _lists("cpu")
    other = {"scalar": (1.5, 1.5), "scalar list": ([1.5, -0.5], [1.5, -0.5]), "tensor list": (y, d)}[form]
    _same(getattr(st, f"_foreach_{name}")(x, other[0]), getattr(st, f"_foreach_{name}")(c, other[1]))
    got = getattr(st, f"_foreach_{name}_")(x, other[0])
    assert got is x
    _same(got, getattr(st, f"_foreach_{name}_")(c, other[1]))


@pytest.mark.parametrize("name", ["addcdiv_", "addcmul_"])
@pytest.mark.parametrize("form", ["value=", "positional", "scalar list", "tensor", "default"])
def test_pointwise_forms_on_cuda_match_cpu(name, form):
    def args(device):
        return {"value=": ((), {"value": -0.3}), "positional": ((-0.3,), {}), "scalar list": (([0.1, -0.2],), {}),
                "tensor": ((st.tensor([0.1, -0.2]).to(device),), {}), "default": ((), {})}[form]

    (x, y), (c, d) = _lists("cuda"), _lists("cpu")
    op = getattr(st, "_foreach_" + name)
    got = op(x, y, y, *args("cuda")[0], **args("cuda")[1])
    assert got is x
    _same(got, op(c, d, d, *args("cpu")[0], **args("cpu")[1]))


def test_lerp_norm_and_reductions_on_cuda_match_cpu():
    (x, y), (c, d) = _lists("cuda"), _lists("cpu")
    _same(st._foreach_lerp(x, y, 0.25), st._foreach_lerp(c, d, 0.25))
    _same(st._foreach_lerp_(x, y, y), st._foreach_lerp_(c, d, d))
    for ord_ in (2, 1, 3, float("inf")):
        _same(st._foreach_norm(x, ord_), st._foreach_norm(c, ord_))
    _same(st._foreach_norm(x, st.tensor(1)), st._foreach_norm(c, st.tensor(1)))
    _same(st._foreach_max(x), st._foreach_max(c))
    _same(st._foreach_clone(x), st._foreach_clone(c))
    got = st._foreach_copy_(x, y)
    assert got is x
    _same(got, d)
