"""nn.init's orthogonal_, dirac_ and sparse_ and torch's deprecated names, on every device (meta: a no-op, as
torch's), against their defining properties and torch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]


def _host(t):
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("shape", [(6, 10), (10, 6), (8, 8), (12, 2, 3), (3, 4, 5, 5)])
def test_orthogonal_rows_or_columns_are_orthonormal(device, shape):
    w = st.empty(shape, device=device, requires_grad=True)
    assert nn.init.orthogonal_(w, gain=2.0) is w
    assert w.grad_fn is None  # no history, as every initializer
    a = _host(w).reshape(shape[0], -1)
    gram = a @ a.T if a.shape[0] <= a.shape[1] else a.T @ a
    np.testing.assert_allclose(gram, 4 * np.eye(min(a.shape)), atol=2e-5)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_orthogonal_is_reproducible_and_uniform_in_sign(device):
    g = st.Generator(device).manual_seed(3)
    a = _host(nn.init.orthogonal_(st.empty(5, 5, device=device), generator=g))
    g.manual_seed(3)
    np.testing.assert_array_equal(a, _host(nn.init.orthogonal_(st.empty(5, 5, device=device), generator=g)))
    # the sign correction makes Q Haar-distributed: the first entries' signs are balanced over draws
    st.manual_seed(0)
    signs = [np.sign(_host(nn.init.orthogonal_(st.empty(4, 4, device=device)))[0, 0]) for _ in range(200)]
    assert 60 < sum(s > 0 for s in signs) < 140


def test_orthogonal_errors_and_no_ops():
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        nn.init.orthogonal_(st.empty(3))
    empty = st.empty(0, 3)
    assert nn.init.orthogonal_(empty) is empty
    meta = st.empty(4, 4, device="meta")
    assert nn.init.orthogonal_(meta) is meta


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,groups", [((4, 3, 5), 1), ((6, 4, 3, 3), 2), ((2, 5, 3, 3, 3), 1), ((6, 2, 3, 3), 3)])
def test_dirac_matches_torch(device, shape, groups):
    w = st.empty(shape, device=device)
    assert nn.init.dirac_(w, groups) is w
    if device == "meta":
        return
    torch = pytest.importorskip("torch")
    want = torch.nn.init.dirac_(torch.empty(shape), groups).numpy()
    np.testing.assert_array_equal(_host(w), want)


def test_dirac_errors():
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        nn.init.dirac_(st.empty(3, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        nn.init.dirac_(st.empty(5, 3, 3), groups=2)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_sparse_zeros_per_column(device):
    st.manual_seed(1)
    w = nn.init.sparse_(st.empty(40, 30, device=device), sparsity=0.25, std=0.5)
    a = _host(w)
    assert ((a == 0).sum(0) == 10).all()  # ceil(0.25 * 40) zeros in every column
    rows_hit = (a == 0).sum(1)
    assert rows_hit.min() >= 1 and rows_hit.max() < 20  # different rows in different columns
    nonzero = a[a != 0]
    assert abs(nonzero.std() - 0.5) < 0.05
    assert not (_host(nn.init.sparse_(st.empty(4, 3, device=device), sparsity=0.0)) == 0).any()


def test_sparse_errors_and_meta():
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        nn.init.sparse_(st.empty(3, 3, 3), 0.1)
    meta = st.empty(4, 4, device="meta")
    assert nn.init.sparse_(meta, 0.5) is meta


@pytest.mark.parametrize("name", ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                                  "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"])
def test_deprecated_names_warn_and_fill(name):
    args = {"constant": (0.5,), "sparse": (0.5,)}.get(name, ())
    shape = (4, 2, 3) if name == "dirac" else (4, 6)
    w = st.zeros(shape)
    with pytest.warns(FutureWarning, match=f"^`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.$"):
        assert getattr(nn.init, name)(w, *args) is w
    assert _host(w).any()


def test_every_torch_initializer_exists():
    torch = pytest.importorskip("torch")
    names = {n for n in torch.nn.init.__all__} if hasattr(torch.nn.init, "__all__") else set()
    names |= {n for n in dir(torch.nn.init) if n.endswith("_") and not n.startswith("_")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        missing = sorted(n for n in names if not hasattr(nn.init, n))
    assert not missing, missing
