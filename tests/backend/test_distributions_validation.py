"""strided.distributions' argument validation (torch's error texts), the global validation switch, constraints and
the helpers of ``strided.distributions.utils``, on every available backend (meta: shapes only, value checks
skipped), and against torch when it is installed."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import strided as st
from strided import distributions as D
from strided.distributions import constraints as C
from strided.distributions import utils as U
from strided.testing import available_devices

DEVICES = available_devices()


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


# (build(M, tensor) -> raises, the expected message with strided's Size); M is strided's or torch's distributions
ERRORS = [
    (lambda M, t: M.Normal(t([0.0, 0.0]), t([1.0, -1.0])),
     "Expected parameter scale (Tensor of shape (2,)) of distribution Normal(loc: strided.Size([2]), scale: "
     "strided.Size([2])) to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values:\n"
     "tensor([ 1., -1.])"),
    (lambda M, t: M.Normal(0.0, -1.0),
     "Expected parameter scale (Tensor of shape ()) of distribution Normal(loc: 0.0, scale: -1.0) to satisfy the "
     "constraint GreaterThan(lower_bound=0.0), but found invalid values:\n-1.0"),
    (lambda M, t: M.Normal(t([math.nan]), 1.0),
     "Expected parameter loc (Tensor of shape (1,)) of distribution Normal(loc: tensor([nan]), scale: tensor([1.])) "
     "to satisfy the constraint Real(), but found invalid values:\ntensor([nan])"),
    (lambda M, t: M.Bernoulli(t([0.5, 1.5])),
     "Expected parameter probs (Tensor of shape (2,)) of distribution Bernoulli(probs: strided.Size([2])) to satisfy "
     "the constraint Interval(lower_bound=0.0, upper_bound=1.0), but found invalid values:\ntensor([0.5000, 1.5000])"),
    (lambda M, t: M.Bernoulli(), "Either `probs` or `logits` must be specified, but not both."),
    (lambda M, t: M.Bernoulli(0.3, 0.2), "Either `probs` or `logits` must be specified, but not both."),
    (lambda M, t: M.Categorical(t(1.0)), "`probs` parameter must be at least one-dimensional."),
    (lambda M, t: M.Categorical(logits=t(1.0)), "`logits` parameter must be at least one-dimensional."),
    (lambda M, t: M.Categorical(t([-0.1, 1.1])),
     "Expected parameter probs (Tensor of shape (2,)) of distribution Categorical(probs: strided.Size([2])) to "
     "satisfy the constraint Simplex(), but found invalid values:\ntensor([-0.1000,  1.1000])"),
    (lambda M, t: M.Exponential(t([0.0])),
     "Expected parameter rate (Tensor of shape (1,)) of distribution Exponential(rate: tensor([0.])) to satisfy the "
     "constraint GreaterThan(lower_bound=0.0), but found invalid values:\ntensor([0.])"),
    (lambda M, t: M.Uniform(1.0, 0.0),
     "Expected parameter low (Tensor of shape ()) of distribution Uniform(low: 1.0, high: 0.0) to satisfy the "
     "constraint LessThan(upper_bound=0.0), but found invalid values:\n1.0"),
    (lambda M, t: M.Geometric(t([0.0, 0.5])),
     "Expected parameter probs (Tensor of shape (2,)) of distribution Geometric(probs: strided.Size([2])) to be "
     "positive but found invalid values:\ntensor([0.])"),
    (lambda M, t: M.Laplace(0.0, 0.0),
     "Expected parameter scale (Tensor of shape ()) of distribution Laplace(loc: 0.0, scale: 0.0) to satisfy the "
     "constraint GreaterThan(lower_bound=0.0), but found invalid values:\n0.0"),
    (lambda M, t: M.LogNormal(0.0, -2.0),
     "Expected parameter scale (Tensor of shape ()) of distribution Normal(loc: 0.0, scale: -2.0) to satisfy the "
     "constraint GreaterThan(lower_bound=0.0), but found invalid values:\n-2.0"),
    (lambda M, t: M.Gumbel(t([0.0]), t([-1.0])),
     "Expected parameter scale (Tensor of shape (1,)) of distribution Gumbel(loc: tensor([0.]), scale: tensor([-1.]))"
     " to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values:\ntensor([-1.])"),
    (lambda M, t: M.Normal(0.0, 1.0).log_prob(1.0), "The value argument to log_prob must be a Tensor"),
    (lambda M, t: M.Normal(t([[0.0] * 3] * 2), 1.0).log_prob(t([0.0] * 4)),
     "Value is not broadcastable with batch_shape+event_shape: strided.Size([4]) vs strided.Size([2, 3])."),
    (lambda M, t: M.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 0.0], [0.0, 1.0]])).log_prob(t([0.0] * 3)),
     "The right-most size of value must match event_shape: strided.Size([3]) vs strided.Size([2])."),
    (lambda M, t: M.Bernoulli(0.25).log_prob(t(0.5)),
     "Expected value argument (Tensor of shape ()) to be within the support (Boolean()) of the distribution "
     "Bernoulli(probs: 0.25), but found invalid values:\n0.5"),
    (lambda M, t: M.Exponential(1.0).log_prob(t([-1.0])),
     "Expected value argument (Tensor of shape (1,)) to be within the support (GreaterThanEq(lower_bound=0.0)) of "
     "the distribution Exponential(rate: 1.0), but found invalid values:\ntensor([-1.])"),
    (lambda M, t: M.Categorical(t([1.0, 1.0, 1.0])).log_prob(t([3])),
     "Expected value argument (Tensor of shape (1,)) to be within the support (IntegerInterval(lower_bound=0, "
     "upper_bound=2)) of the distribution Categorical(probs: strided.Size([3])), but found invalid values:\n"
     "tensor([3])"),
    (lambda M, t: M.OneHotCategorical(t([1.0, 1.0, 1.0])).log_prob(t([1.0, 1.0, 0.0])),
     "Expected value argument (Tensor of shape (3,)) to be within the support (OneHot()) of the distribution "
     "OneHotCategorical(), but found invalid values:\ntensor([1., 1., 0.])"),
    (lambda M, t: M.Geometric(0.5).log_prob(t(1.5)),
     "Expected value argument (Tensor of shape ()) to be within the support (IntegerGreaterThan(lower_bound=0)) of "
     "the distribution Geometric(probs: 0.5), but found invalid values:\n1.5"),
    (lambda M, t: M.Uniform(0.0, 1.0).cdf(t([2.0])),
     "Expected value argument (Tensor of shape (1,)) to be within the support (Interval(lower_bound=0.0, "
     "upper_bound=1.0)) of the distribution Uniform(low: 0.0, high: 1.0), but found invalid values:\ntensor([2.])"),
    (lambda M, t: M.Independent(M.Normal(0.0, 1.0), 1),
     "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual 1 vs 0"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_validation_errors_in_torchs_words(i):
    build, message = ERRORS[i]
    with pytest.raises(ValueError) as info:
        build(D, st.tensor)
    assert str(info.value) == message


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_validation_errors_match_torch(i):
    torch = pytest.importorskip("torch")
    build, message = ERRORS[i]
    with pytest.raises(ValueError) as tinfo:
        build(torch.distributions, torch.tensor)
    assert str(tinfo.value).replace("torch.", "strided.") == message


def test_validate_args_switches():
    assert D.Distribution._validate_args is __debug__  # on by default, off under python -O (as torch)
    D.Normal(0.0, -1.0, validate_args=False)  # no error
    d = D.Normal(st.zeros(2), 1.0, validate_args=False)
    assert not math.isnan(float(d.log_prob(st.tensor([0.0, 1.0])).sum()))
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(0.0, -1.0)
        D.Exponential(1.0).log_prob(st.tensor(-1.0))
        with pytest.raises(ValueError, match="GreaterThan"):
            D.Normal(0.0, -1.0, validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="GreaterThan"):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(3)
    e = D.Normal(st.zeros(2), 1.0, validate_args=False).expand((3, 2))
    assert e._validate_args is False
    e.log_prob(st.zeros(4, 3, 2))  # unchecked: the value broadcasts, no support check


@pytest.mark.parametrize("device", DEVICES)
def test_validation_on_device(device):
    """Checks run on the device; meta skips the value checks (no values) and keeps the shape checks."""
    bad = st.tensor([1.0, -1.0], device=device)
    if device == "meta":
        D.Normal(st.zeros(2, device=device), bad).log_prob(st.full((2,), -5.0, device=device))
    else:
        with pytest.raises(ValueError, match="GreaterThan"):
            D.Normal(st.zeros(2, device=device), bad)
        with pytest.raises(ValueError, match="to be within the support"):
            D.Exponential(st.ones(2, device=device)).log_prob(bad)
    with pytest.raises(ValueError, match="Value is not broadcastable"):
        D.Normal(st.zeros(2, device=device), 1.0).log_prob(st.zeros(3, device=device))


def test_subclass_without_constraints_warns():
    class Plain(D.Distribution):
        pass

    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        d = Plain()
    with pytest.warns(UserWarning, match="does not define `support` to enable sample validation"):
        d._validate_sample(st.zeros(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Plain(validate_args=False)
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        _ = d.mode
    with pytest.raises(NotImplementedError, match="Subclass Child of Normal that defines a custom __init__"):
        class Child(D.Normal):
            def __init__(self):
                super().__init__(0.0, 1.0)

        Child().expand((2,))
    with pytest.warns(FutureWarning, match="sample_n"):
        assert tuple(D.Normal(st.zeros(3), 1.0).sample_n(4).shape) == (4, 3)


# -- constraints ------------------------------------------------------------------------------------------------------
CHECKS = [
    ("real", C.real, [0.0, -math.inf, math.nan], [True, True, False]),
    ("positive", C.positive, [0.0, 1e-30, -1.0], [False, True, False]),
    ("nonnegative", C.nonnegative, [0.0, 2.0, -1e-30], [True, True, False]),
    ("greater_than", C.greater_than(1.0), [1.0, 1.5], [False, True]),
    ("greater_than_eq", C.greater_than_eq(1.0), [1.0, 0.5], [True, False]),
    ("less_than", C.less_than(1.0), [1.0, 0.5], [False, True]),
    ("interval", C.interval(-1.0, 1.0), [-1.0, 1.0, 1.5], [True, True, False]),
    ("half_open_interval", C.half_open_interval(-1.0, 1.0), [-1.0, 1.0], [True, False]),
    ("unit_interval", C.unit_interval, [0.0, 1.0, -0.1], [True, True, False]),
    ("boolean", C.boolean, [0.0, 1.0, 0.5], [True, True, False]),
    ("integer_interval", C.integer_interval(0, 3), [0.0, 3.0, 2.5, 4.0], [True, True, False, False]),
    ("nonnegative_integer", C.nonnegative_integer, [0.0, 7.0, -1.0, 0.5], [True, True, False, False]),
    ("positive_integer", C.positive_integer, [1.0, 0.0], [True, False]),
    ("simplex", C.simplex, [[0.25, 0.75], [0.5, 0.6], [-0.5, 1.5]], [True, False, False]),
    ("real_vector", C.real_vector, [[0.0, 1.0], [0.0, math.nan]], [True, False]),
    ("one_hot", C.one_hot, [[0.0, 1.0], [1.0, 1.0], [0.0, 0.0]], [True, False, False]),
    ("independent", C.independent(C.positive, 1), [[1.0, 2.0], [1.0, -2.0]], [True, False]),
    ("multinomial", C.multinomial(3), [[1.0, 2.0], [2.0, 2.0]], [True, False]),
    ("lower_triangular", C.lower_triangular, [[[1.0, 0.0], [2.0, -1.0]], [[1.0, 1.0], [0.0, 1.0]]], [True, False]),
    ("lower_cholesky", C.lower_cholesky, [[[1.0, 0.0], [2.0, 1.0]], [[1.0, 0.0], [2.0, -1.0]]], [True, False]),
    ("corr_cholesky", C.corr_cholesky, [[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.7]]], [True, False]),
    ("square", C.square, [[[1.0, 2.0], [3.0, 4.0]]], [True]),
    ("symmetric", C.symmetric, [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]], [True, False]),
    ("positive_semidefinite", C.positive_semidefinite, [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]],
     [True, False]),
    ("positive_definite", C.positive_definite, [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 1.0], [1.0, 1.0]]], [True, False]),
    ("cat", C.cat([C.positive, C.real], 0, [1, 2]), [1.0, -2.0, 3.0], [True, True, True]),
    ("stack", C.stack([C.positive, C.boolean], 0), [[1.0, -1.0], [1.0, 0.5]], [[True, False], [True, False]]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, constraint, values, want", CHECKS, ids=[c[0] for c in CHECKS])
def test_constraint_check(name, constraint, values, want, device):
    got = constraint.check(st.tensor(values, device=device, dtype=st.float64))
    assert got.dtype == st.bool and tuple(got.shape) == np.shape(want)
    if device != "meta":
        np.testing.assert_array_equal(_host(got), want)


@pytest.mark.parametrize("name, constraint, values, want", CHECKS, ids=[c[0] for c in CHECKS])
def test_constraint_matches_torch(name, constraint, values, want):
    torch = pytest.importorskip("torch")
    tcs = torch.distributions.constraints
    makers = {"greater_than": lambda: tcs.greater_than(1.0), "greater_than_eq": lambda: tcs.greater_than_eq(1.0),
              "less_than": lambda: tcs.less_than(1.0), "interval": lambda: tcs.interval(-1.0, 1.0),
              "half_open_interval": lambda: tcs.half_open_interval(-1.0, 1.0),
              "integer_interval": lambda: tcs.integer_interval(0, 3),
              "independent": lambda: tcs.independent(tcs.positive, 1), "multinomial": lambda: tcs.multinomial(3),
              "cat": lambda: tcs.cat([tcs.positive, tcs.real], 0, [1, 2]),
              "stack": lambda: tcs.stack([tcs.positive, tcs.boolean], 0)}
    tc = makers[name]() if name in makers else getattr(tcs, name)
    if name not in ("multinomial", "cat", "stack"):  # torch prints these with their object address
        assert repr(constraint) == repr(tc)
    assert constraint.event_dim == tc.event_dim and constraint.is_discrete == tc.is_discrete
    np.testing.assert_array_equal(_host(constraint.check(st.tensor(values, dtype=st.float64))),
                                  tc.check(torch.tensor(values, dtype=torch.float64)).numpy())


def test_dependent_constraints():
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        C.dependent.check(st.zeros(1))
    with pytest.raises(NotImplementedError, match=".is_discrete cannot be determined statically"):
        _ = C.dependent.is_discrete
    custom = C.dependent(is_discrete=True, event_dim=1)
    assert custom.is_discrete and custom.event_dim == 1
    # on the class a dependent property is a dependent constraint, on an instance the property's value
    assert C.is_dependent(D.Uniform.support) and D.Uniform.support.event_dim == 0
    assert repr(D.Uniform(0.0, 2.0).support) == "Interval(lower_bound=0.0, upper_bound=2.0)"
    assert C.is_dependent(D.Categorical.support) and D.Categorical.support.is_discrete
    with pytest.raises(ValueError, match=r"Expected value.dim\(\) >= 2 but got 1"):
        C.independent(C.real, 2).check(st.zeros(3))
    with pytest.raises(AssertionError, match="base_constraint must be a Constraint, got int"):
        C.independent(1, 1)
    assert repr(C.independent(C.real, 1)) == "IndependentConstraint(Real(), 1)" and C.real_vector.event_dim == 1


# -- utils ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_broadcast_all(device):
    a = st.zeros(3, 1, dtype=st.float64, device=device)
    x, y, z = U.broadcast_all(a, 2.0, st.ones(4, device=device, dtype=st.float64))
    assert tuple(x.shape) == tuple(y.shape) == tuple(z.shape) == (3, 4)
    assert y.dtype == st.float64 and y.device.type == device
    (s,) = U.broadcast_all(1)
    assert s.dtype == st.get_default_dtype() and s.dim() == 0
    with pytest.raises(ValueError, match="Input arguments must all be instances of Number or strided.Tensor."):
        U.broadcast_all(a, "x")


@pytest.mark.parametrize("device", DEVICES)
def test_probability_conversions(device):
    p = np.array([[0.0, 0.2, 0.8], [0.5, 0.25, 0.25]])
    tp = st.tensor(p, device=device)
    eps = np.finfo(np.float64).eps
    got = U.clamp_probs(tp)
    assert tuple(got.shape) == (2, 3)
    lg = U.probs_to_logits(tp)
    lgb = U.probs_to_logits(tp, is_binary=True)
    back = U.logits_to_probs(st.tensor(np.log(p + 1e-300), device=device))
    backb = U.logits_to_probs(lgb, is_binary=True)
    if device == "meta":
        return
    np.testing.assert_allclose(_host(got), np.clip(p, eps, 1 - eps))
    np.testing.assert_allclose(_host(lg), np.log(np.clip(p, eps, 1 - eps)))
    pc = np.clip(p, eps, 1 - eps)
    np.testing.assert_allclose(_host(lgb), np.log(pc) - np.log1p(-pc))
    np.testing.assert_allclose(_host(back), p / p.sum(-1, keepdims=True), atol=1e-15)
    np.testing.assert_allclose(_host(backb), pc, rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("diag", [0, -1, 1])
def test_tril_vec_round_trip(device, diag):
    n = 4
    mat = np.arange(2 * n * n, dtype=np.float64).reshape(2, n, n)
    mask = np.arange(n)[None, :] < np.arange(n)[:, None] + (diag + 1)
    vec = U.tril_matrix_to_vec(st.tensor(mat, device=device), diag=diag)
    assert tuple(vec.shape) == (2, int(mask.sum()))
    back = U.vec_to_tril_matrix(vec, diag=diag)
    assert tuple(back.shape) == (2, n, n)
    if device != "meta":
        np.testing.assert_array_equal(_host(vec), mat[:, mask])
        np.testing.assert_array_equal(_host(back), np.where(mask, mat, 0.0))
    with pytest.raises(ValueError, match=r"diag \(4\) provided is outside \[-4, 3\]."):
        U.tril_matrix_to_vec(st.tensor(mat, device=device), diag=4)
    with pytest.raises(ValueError, match="The size of last dimension is 5 which cannot be expressed as the lower"):
        U.vec_to_tril_matrix(st.zeros(5, device=device))


def test_tril_vec_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.distributions import utils as TU

    v = np.random.default_rng(0).standard_normal((3, 6))
    sv, tv = st.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    sm, tm = U.vec_to_tril_matrix(sv), TU.vec_to_tril_matrix(tv)
    np.testing.assert_array_equal(_host(sm), tm.detach().numpy())
    w = np.random.default_rng(1).standard_normal((3, 3, 3))
    (sg,) = st.autograd.grad((sm * st.tensor(w)).sum(), [sv])
    (tg,) = torch.autograd.grad((tm * torch.tensor(w)).sum(), [tv])
    np.testing.assert_allclose(_host(sg), tg.numpy())
