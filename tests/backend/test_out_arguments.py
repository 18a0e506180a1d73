"""``out=`` on the operators and Python functions that declare no out overload (Note [Out arguments]), against
torch: values written in place, dtype casts and refusals, resizing with torch's warning, several outputs, factories
in out's dtype, and torch's errors (autograd, internal overlap, a non-tensor out, views)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

torch = pytest.importorskip("torch")

X = np.array([[0.5, -1.5, 2.0], [3.0, -0.25, 1.0]])
DEVICES = [d for d in available_devices() if d != "meta"]

# name -> (function of (module, x), the out tensor's shape and dtype name per output)
CASES = {
    "exp": (lambda m, x: m.exp(x, out=m.empty(2, 3, dtype=x.dtype, device=x.device)), None),
    "pow": (lambda m, x: m.pow(x, 2, out=m.empty(2, 3, dtype=x.dtype, device=x.device)), None),
    "maximum": (lambda m, x: m.maximum(x, -x, out=m.empty(2, 3, dtype=x.dtype, device=x.device)), None),
    "clamp": (lambda m, x: m.clamp(x, -1, 1, out=m.empty(2, 3, dtype=x.dtype, device=x.device)), None),
    "add scalar": (lambda m, x: m.add(x, 2, alpha=3, out=m.empty(2, 3, dtype=x.dtype, device=x.device)), None),
    "mul scalar into float32": (lambda m, x: m.mul(x, 2.5, out=m.empty(2, 3, device=x.device)), None),
    "eq into float": (lambda m, x: m.eq(x, 1.0, out=m.empty(2, 3, dtype=x.dtype, device=x.device)), None),
    "sum dim": (lambda m, x: m.sum(x, 1, out=m.empty(2, dtype=x.dtype, device=x.device)), None),
    "sum int into float": (lambda m, x: m.sum(x.long(), 0, out=m.empty(3, device=x.device)), None),
    "cumsum": (lambda m, x: m.cumsum(x, 1, out=m.empty(2, 3, dtype=x.dtype, device=x.device)), None),
    "matmul": (lambda m, x: m.matmul(x, x.t(), out=m.empty(2, 2, dtype=x.dtype, device=x.device)), None),
    "where": (lambda m, x: m.where(x > 0, x, m.zeros_like(x), out=m.empty(2, 3, dtype=x.dtype, device=x.device)),
              None),
    "index_select": (lambda m, x: m.index_select(x, 1, m.tensor([2, 0], device=x.device),
                                                 out=m.empty(2, 2, dtype=x.dtype, device=x.device)), None),
    "max dim": (lambda m, x: m.max(x, 1, out=(m.empty(2, dtype=x.dtype, device=x.device),
                                              m.empty(2, dtype=m.int64, device=x.device))), None),
    "sort": (lambda m, x: m.sort(x, 1, out=(m.empty(2, 3, dtype=x.dtype, device=x.device),
                                            m.empty(2, 3, dtype=m.int64, device=x.device))), None),
    "topk list out": (lambda m, x: m.topk(x, 2, out=[m.empty(0, dtype=x.dtype, device=x.device),
                                                     m.empty(0, dtype=m.int64, device=x.device)]), None),
    "linalg.inv": (lambda m, x: m.linalg.inv(x[:, :2], out=m.empty(2, 2, dtype=x.dtype, device=x.device)), None),
    "linalg.eigh": (lambda m, x: m.linalg.eigh(x[:, :2] @ x[:, :2].t(), out=(m.empty(0, dtype=x.dtype, device=x.device),
                                                                           m.empty(0, dtype=x.dtype,
                                                                                   device=x.device)))[0], None),
    "nonzero": (lambda m, x: m.nonzero(x > 0, out=m.empty(0, dtype=m.int64, device=x.device)), None),
    "normal of tensors": (lambda m, x: m.normal(x, x.abs(), out=m.empty(2, 3, dtype=x.dtype, device=x.device)).abs()
                          >= 0, None),  # random values: the shape, dtype and device are compared
    "zeros into int": (lambda m, x: m.zeros(2, 3, out=m.empty(6, dtype=m.int64, device=x.device)), None),
    "full": (lambda m, x: m.full((2,), 7, out=m.empty(2, dtype=x.dtype, device=x.device)), None),
    "arange": (lambda m, x: m.arange(1, 7, 2, out=m.empty(3, dtype=m.int32, device=x.device)), None),
    "linspace": (lambda m, x: m.linspace(0, 1, 5, out=m.empty(5, dtype=x.dtype, device=x.device)), None),
    "logspace": (lambda m, x: m.logspace(0, 2, 3, out=m.empty(3, dtype=x.dtype, device=x.device)), None),
    "eye": (lambda m, x: m.eye(2, 3, out=m.empty(0, dtype=x.dtype, device=x.device)), None),
    "narrow_copy": (lambda m, x: m.narrow_copy(x, 1, 1, 2, out=m.empty(2, 2, dtype=x.dtype, device=x.device)), None),
}


def _values(r):
    return [t.cpu().numpy() for t in r] if isinstance(r, (tuple, list)) else [r.cpu().numpy()]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_out_values_and_dtypes_as_torch(case, device):
    f = CASES[case][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # eye's resize of an empty out warns in neither; the others are sized
        got = f(st, st.from_numpy(X.copy()).to(device))
        want = f(torch, torch.from_numpy(X.copy()))
    for g, w in zip(_values(got), _values(want)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_out_is_the_tensor_written_and_returned():
    x = st.from_numpy(X.copy())
    o = st.empty(2, 3, dtype=st.float64)
    assert st.exp(x, out=o) is o
    vals, idx = st.empty(2, dtype=st.float64), st.empty(2, dtype=st.int64)
    r = st.max(x, 1, out=(vals, idx))
    assert r.values is vals and r.indices is idx and type(r).__name__ == "max"
    z = st.zeros(3, out=st.empty(3, dtype=st.int64))
    assert z.dtype is st.int64
    assert st.bernoulli(st.full((4,), 1.0), out=st.empty(4, dtype=st.int64)).tolist() == [1, 1, 1, 1]


def _error_cases(m, t):
    return [
        (lambda: m.exp(t, out=m.empty(2, 3, dtype=m.int64)), RuntimeError,
         "result type Double can't be cast to the desired output type Long"),
        (lambda: m.max(t, 1, out=(m.empty(2, dtype=m.float64), m.empty(2, dtype=m.float64))), RuntimeError,
         "Expected out tensor to have dtype long int, but got double instead"),
        (lambda: m.exp(t.clone().requires_grad_(), out=m.empty(2, 3, dtype=m.float64)), RuntimeError,
         r"exp\(\): functions with out=\.\.\. arguments don't support automatic differentiation, but one of the "
         "arguments requires grad."),
        (lambda: m.exp(t, out=m.ones(1, 1, dtype=m.float64).expand(2, 3)), RuntimeError,
         "more than one element of the written-to tensor refers to a single memory location"),
        (lambda: m.exp(t, out=5), TypeError, "exp\\(\\): argument 'out' must be Tensor, not int"),
        (lambda: m.zeros(3, dtype=m.float64, out=m.empty(3)), RuntimeError,
         r"dtype Double does not match dtype of out parameter \(Float\)"),
        (lambda: m.exp(t, out=m.empty(2, 3, dtype=m.float64, device="meta")), RuntimeError,
         "Attempting to copy from device cpu to device meta, but cross-device copies are not allowed!"),
    ]


def test_out_errors_as_torch():
    x = st.from_numpy(X.copy())
    for m, t in ((st, x), (torch, torch.from_numpy(X.copy()))):
        for call, exc, msg in _error_cases(m, t):
            with pytest.raises(exc, match=msg):
                call()
    with pytest.raises(TypeError):  # views take no out=, as torch
        st.transpose(x, 0, 1, out=st.empty(3, 2, dtype=st.float64))
    with st.no_grad():
        assert st.exp(x.clone().requires_grad_(), out=st.empty(2, 3, dtype=st.float64)).shape == (2, 3)


def test_out_resizes_with_torch_warning():
    x = st.from_numpy(X.copy())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        o = st.empty(4, dtype=st.float64)
        st.exp(x, out=o)
        empty = st.empty(0, dtype=st.float64)
        st.exp(x, out=empty)
    assert o.shape == (2, 3) and empty.shape == (2, 3)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and messages[0].startswith(
        "An output with one or more elements was resized since it had shape [4], which does not match the required "
        "output shape [2, 3].")


def test_reductions_take_their_dtype_from_out_as_torch():
    """sum / prod / cumsum / cumprod without dtype= compute in out's dtype (torch's get_dtype_from_result: a float
    input summed into a long out is cast first, not refused), and mean into a double out computes in double."""
    torch = pytest.importorskip("torch")
    for name in ("sum", "prod", "cumsum", "cumprod", "mean"):
        for out_dtype in ("int64", "float64", "float16"):
            got, want = [], []
            for m, into in ((st, got), (torch, want)):
                a = m.tensor([[0.5, -1.5, 2.0], [3.0, 0.25, -0.75]])
                o = m.empty(0, dtype=getattr(m, out_dtype))
                try:
                    getattr(m, name)(a, 1, out=o)
                    into.append(o.tolist())
                except RuntimeError as e:
                    into.append(str(e).splitlines()[0])
            assert got == want, (name, out_dtype)
