"""strided.distributions' further transforms (transforms_more.py) and the constraint registry (``biject_to`` /
``transform_to``) on every available backend: forward, inverse and log |det J| against torch (values and gradients,
when installed) and against autograd Jacobians, round trips, shapes, equality, caching, errors; every registered
constraint's transform lands in its support, inverts, and matches torch's. Meta checks shapes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided import distributions as D
from strided.distributions import constraints as C
from strided.distributions import transforms as T
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
RNG = np.random.default_rng(515)


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def _t(a, device="cpu", grad=False):
    t = st.tensor(np.asarray(a), device=device)
    return t.requires_grad_() if grad else t


def _check(got, want, device, rtol=1e-10, atol=1e-12):
    want = np.asarray(want, dtype=np.float64)
    assert tuple(got.shape) == want.shape
    if device != "meta":
        np.testing.assert_allclose(_host(got), want, rtol=rtol, atol=atol)


def _grads_match(torch, s_out, s_in, t_out, t_in, device, rtol=1e-8):
    w = RNG.standard_normal(tuple(t_out.shape))
    s_grads = st.autograd.grad((s_out * _t(w, device)).sum(), s_in, allow_unused=True, retain_graph=True)
    t_grads = torch.autograd.grad((t_out * torch.tensor(w)).sum(), t_in, allow_unused=True, retain_graph=True)
    for sg, tg in zip(s_grads, t_grads):
        if tg is None:
            assert sg is None or device == "meta" or not _host(sg).any()
        else:
            _check(sg, tg.numpy(), device, rtol=rtol, atol=1e-10)


def _spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


# (name, make(M) -> transform, x in the domain); M is strided's or torch's transforms module
_EXP = RNG.uniform(0.5, 2.0, (3,))
TRANSFORMS = [
    ("Power", None, RNG.uniform(0.2, 3.0, (4, 3))),  # built below: a tensor exponent of the module
    ("PowerScalar", lambda M: M.PowerTransform(2.5), RNG.uniform(0.2, 3.0, (4, 3))),
    ("Abs", lambda M: M.AbsTransform(), RNG.standard_normal((4, 3))),
    ("Reshape", lambda M: M.ReshapeTransform((2, 3), (3, 2)), RNG.standard_normal((4, 2, 3))),
    ("Softmax", lambda M: M.SoftmaxTransform(), RNG.standard_normal((4, 3))),
    ("StickBreaking", lambda M: M.StickBreakingTransform(), RNG.standard_normal((4, 3))),
    ("LowerCholesky", lambda M: M.LowerCholeskyTransform(), RNG.standard_normal((4, 3, 3))),
    ("PositiveDefinite", lambda M: M.PositiveDefiniteTransform(), RNG.standard_normal((4, 3, 3))),
    ("CorrCholesky", lambda M: M.CorrCholeskyTransform(), RNG.standard_normal((4, 6))),
    ("Cat", lambda M: M.CatTransform([M.ExpTransform(), M.AffineTransform(1.0, 2.0), M.SigmoidTransform()], 1,
                                     [2, 1, 3]), RNG.standard_normal((4, 6))),
    ("CatEvent", lambda M: M.CatTransform([M.IndependentTransform(M.ExpTransform(), 1),
                                           M.AffineTransform(0.5, 2.0, event_dim=1)], -1, [2, 3]),
     RNG.standard_normal((4, 5))),  # event_dim 1 along the concatenated dim: the log |det J| parts are summed
    ("Stack", lambda M: M.StackTransform([M.ExpTransform(), M.TanhTransform(), M.AffineTransform(0.5, -3.0)], 1),
     RNG.standard_normal((4, 3))),
    ("CDF", None, RNG.standard_normal((4, 3))),  # built below: needs a distribution of the module
]
IDS = [t[0] for t in TRANSFORMS]
NO_JACOBIAN = {"Abs", "Softmax", "LowerCholesky", "PositiveDefinite"}  # torch defines none for these


def _make(name, make, M, dist_module, device_tensor):
    if name == "Power":
        return M.PowerTransform(device_tensor(_EXP))
    if name == "CDF":
        return M.CumulativeDistributionTransform(dist_module.Normal(device_tensor([0.5, -1.0, 0.0]),
                                                                    device_tensor([1.0, 2.0, 0.5])))
    return make(M)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("entry", TRANSFORMS, ids=IDS)
def test_transform_matches_torch(entry, device):
    torch = pytest.importorskip("torch")
    import torch.distributions.transforms as TT

    name, make, x = entry
    s = _make(name, make, T, D, lambda v: _t(v, device))
    t = _make(name, make, TT, torch.distributions, lambda v: torch.tensor(v, dtype=torch.float64))
    assert type(s).__name__ == type(t).__name__ and s.bijective == t.bijective
    assert repr(s.domain).replace("torch.", "strided.") == repr(t.domain).replace("torch.", "strided.") or \
        device == "meta"
    assert repr(s.codomain) == repr(t.codomain)
    assert (s.domain.event_dim, s.codomain.event_dim) == (t.domain.event_dim, t.codomain.event_dim)
    sx, tx = _t(x, device, grad=True), torch.tensor(x, requires_grad=True)
    sy, ty = s(sx), t(tx)
    _check(sy, ty.detach().numpy(), device)
    _grads_match(torch, sy, [sx], ty, [tx], device)
    assert tuple(s.forward_shape(x.shape)) == tuple(t.forward_shape(torch.Size(x.shape)))
    assert tuple(s.inverse_shape(tuple(ty.shape))) == tuple(t.inverse_shape(ty.shape))
    # the inverse at the forward's values (a fresh tensor: no cache)
    y = ty.detach().numpy()
    sy2, ty2 = _t(y, device, grad=True), torch.tensor(y, requires_grad=True)
    sxi, txi = s.inv(sy2), t.inv(ty2)
    _check(sxi, txi.detach().numpy(), device, rtol=1e-9)
    _grads_match(torch, sxi, [sy2], txi, [ty2], device, rtol=1e-7)
    if name not in NO_JACOBIAN:
        s_ladj, t_ladj = s.log_abs_det_jacobian(sx, sy), t.log_abs_det_jacobian(tx, ty)
        _check(s_ladj, t_ladj.detach().numpy(), device)
        if t_ladj.requires_grad:  # (a reshape's is a constant 0)
            _grads_match(torch, s_ladj, [sx], t_ladj, [tx], device)
        s_inv_ladj = s.inv.log_abs_det_jacobian(sy2, s.inv(sy2))
        _check(s_inv_ladj, t.inv.log_abs_det_jacobian(ty2, t.inv(ty2)).detach().numpy(), device)
    if device != "meta":
        assert _host(s.codomain.check(sy)).all()
        if s.bijective:  # round trip (to 1e-7: PowerTransform(2.5)'s exponent is a float32 tensor, as torch's)
            np.testing.assert_allclose(_host(s.inv(s(sx))), x, rtol=1e-7, atol=1e-10)


def _jacobian(f, x):
    """The Jacobian of ``f`` at the vector ``x`` by autograd, row by row."""
    x = x.detach().requires_grad_()
    y = f(x)
    rows = [st.autograd.grad(y[i], [x], retain_graph=True)[0] for i in range(y.shape[0])]
    return np.stack([_host(r) for r in rows])


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_log_abs_det_jacobians_by_autograd(device):
    """log |det J| against autograd Jacobians: elementwise maps, stick breaking (its first K outputs are a
    coordinate chart of the simplex), and the tanh / stick breaking of CorrCholesky (w.r.t. the strict lower
    triangle)."""
    x = _t(RNG.uniform(0.2, 2.0, 4), device)  # positive: in every domain here
    for t in (T.PowerTransform(_t([0.5, 1.5, 2.0, 3.0], device)), T.StickBreakingTransform(),
              T.StackTransform([T.ExpTransform(), T.TanhTransform(), T.PowerTransform(2.0), T.SigmoidTransform()])):
        jac = _jacobian(lambda v, t=t: t(v)[: v.shape[0]], x)
        ladj = t.log_abs_det_jacobian(x, t(x))
        total = float(ladj.sum())  # elementwise maps: the sum of the diagonal terms
        assert total == pytest.approx(np.linalg.slogdet(jac)[1], rel=1e-9, abs=1e-12), type(t).__name__
    t = T.CorrCholeskyTransform()
    x = _t(RNG.standard_normal(6), device)
    rows, cols = np.tril_indices(4, -1)
    jac = _jacobian(lambda v: t(v)[rows, cols], x)
    assert float(t.log_abs_det_jacobian(x, t(x))) == pytest.approx(np.linalg.slogdet(jac)[1], rel=1e-9)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_matrix_transforms(device):
    x = RNG.standard_normal((2, 3, 3))
    L = _host(T.LowerCholeskyTransform()(_t(x, device)))
    np.testing.assert_allclose(L, np.tril(x, -1) + np.exp(x) * np.eye(3), rtol=1e-12)
    P = _host(T.PositiveDefiniteTransform()(_t(x, device)))
    np.testing.assert_allclose(P, L @ np.swapaxes(L, -1, -2), rtol=1e-12)
    np.testing.assert_allclose(_host(T.PositiveDefiniteTransform().inv(_t(P, device))), np.tril(x), rtol=1e-8,
                               atol=1e-10)
    inf = T.LowerCholeskyTransform()(_t([[800.0, 0.0], [1.0, 0.0]], device))  # exp overflows: no NaN off it
    np.testing.assert_array_equal(_host(inf), [[np.inf, 0.0], [1.0, 1.0]])
    corr = _host(T.CorrCholeskyTransform()(_t(RNG.standard_normal((5, 10)), device)))
    assert corr.shape == (5, 5, 5)
    np.testing.assert_allclose((corr**2).sum(-1), 1.0, rtol=1e-12)
    assert np.all(np.diagonal(corr, 0, -2, -1) > 0) and np.all(np.triu(corr, 1) == 0)


def test_transform_protocol():
    """Equality, caching, signs, event dims and errors, as torch's."""
    assert T.PowerTransform(2.0) == T.PowerTransform(2.0) and T.PowerTransform(2.0) != T.PowerTransform(3.0)
    assert T.AbsTransform() == T.AbsTransform() and T.SoftmaxTransform() != T.StickBreakingTransform()
    assert float(T.PowerTransform(-2.0).sign) == -1.0 and T.CumulativeDistributionTransform(D.Normal(0, 1)).sign == 1
    for t, n in ((T.PowerTransform(2.0), 4), (T.ReshapeTransform((4,), (2, 2)), 4),
                 (T.CatTransform([T.ExpTransform(), T.PowerTransform(3.0)], 0, [3, 1]), 4),
                 (T.StackTransform([T.ExpTransform()]), 1), (T.CumulativeDistributionTransform(D.Normal(0.0, 1.0)), 4)):
        cached = t.with_cache(1)
        assert type(cached) is type(t) and cached._cache_size == 1 and t.with_cache(0) is t
        x = st.rand(n) + 0.5
        y = cached(x)
        assert cached(x) is y and cached.inv(y) is x
    r = T.ReshapeTransform((2, 3), (6,))
    assert r.domain.event_dim == 2 and r.codomain.event_dim == 1
    assert tuple(r.log_abs_det_jacobian(st.zeros(4, 2, 3), st.zeros(4, 6)).shape) == (4,)
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers of elements"):
        T.ReshapeTransform((2, 3), (5,))
    with pytest.raises(ValueError, match=r"Shape mismatch: expected strided.Size\(\[2, 2\]\) but got "
                                         r"strided.Size\(\[2, 3\]\)"):
        r.forward_shape((4, 2, 2))
    for t, shape in ((r, (3,)), (T.StickBreakingTransform(), ()), (T.SoftmaxTransform(), ()),
                     (T.CorrCholeskyTransform(), ())):
        with pytest.raises(ValueError, match="Too few dimensions on input"):
            t.forward_shape(shape)
    with pytest.raises(ValueError, match="Input is not a flattened lower-diagonal number"):
        T.CorrCholeskyTransform().forward_shape((4,))
    with pytest.raises(ValueError, match="Input is not square"):
        T.CorrCholeskyTransform().inverse_shape((3, 4))
    cat = T.CatTransform([T.ExpTransform(), T.ExpTransform()], 0, [2, 3])
    assert cat.length == 5 and cat.event_dim == 0 and cat.bijective
    with pytest.raises(AssertionError, match=r"x.size\(0\) = 4 must equal length 5"):
        cat(st.zeros(4))
    with pytest.raises(AssertionError, match="dim 0 out of range for tensor with 0 dimensions"):
        cat.inv(st.tensor(1.0))
    with pytest.raises(AssertionError, match="lengths \\(1\\) must match transforms \\(2\\)"):
        T.CatTransform([T.ExpTransform(), T.ExpTransform()], 0, [3])
    with pytest.raises(AssertionError, match="All elements of tseq must be Transform instances"):
        T.StackTransform([T.ExpTransform(), "exp"])
    stack = T.StackTransform([T.ExpTransform(), T.AbsTransform()], 0)
    assert not stack.bijective
    with pytest.raises(AssertionError, match=r"y.size\(0\) = 3 must equal len\(transforms\) 2"):
        stack.inv(st.zeros(3))
    with pytest.raises(AssertionError, match=r"dim 0 out of range for x with 0 dimensions"):
        stack.log_abs_det_jacobian(st.tensor(1.0), st.tensor(1.0))
    assert repr(T.PowerTransform(2.0)) == "PowerTransform()"
    assert T.identity_transform.inv(st.ones(2)).shape == (2,)
    for name in ("PowerTransform", "StickBreakingTransform", "CatTransform", "CumulativeDistributionTransform"):
        assert getattr(T, name) is getattr(D, name) and name in T.__all__


@pytest.mark.parametrize("device", DEVICES)
def test_transformed_distributions_with_new_transforms(device):
    """TransformedDistribution over the new transforms matches torch's: a power of an exponential, a reshaped
    normal, a Gaussian copula's marginal."""
    torch = pytest.importorskip("torch")
    TDs = torch.distributions
    rate = RNG.uniform(0.5, 2.0, (2, 3))
    builds = [
        (lambda M, r: M.TransformedDistribution(M.Exponential(r), [M.transforms.PowerTransform(0.5)]),
         RNG.uniform(0.1, 2.0, (4, 2, 3))),
        (lambda M, r: M.TransformedDistribution(M.Normal(r, 1.0), [M.transforms.ReshapeTransform((2, 3), (6,))]),
         RNG.standard_normal((4, 6))),
        (lambda M, r: M.TransformedDistribution(M.Normal(r, r), [M.transforms.CumulativeDistributionTransform(
            M.Normal(0.0, 1.0))]), RNG.uniform(0.05, 0.95, (4, 2, 3))),
    ]
    for build, value in builds:
        sr, tr = _t(rate, device, grad=True), torch.tensor(rate, requires_grad=True)
        sd, td = build(D, sr), build(TDs, tr)
        assert sd.batch_shape == td.batch_shape and sd.event_shape == td.event_shape
        s_lp, t_lp = sd.log_prob(_t(value, device)), td.log_prob(torch.tensor(value))
        _check(s_lp, t_lp.detach().numpy(), device, rtol=1e-9)
        _grads_match(torch, s_lp, [sr], t_lp, [tr], device)


# -- biject_to / transform_to -----------------------------------------------------------------------------------------
# (name, constraint(M), unconstrained input shape); M is strided's or torch's constraints module
CONSTRAINTS = [
    ("real", lambda M: M.real, (4, 3)),
    ("real_vector", lambda M: M.real_vector, (4, 3)),
    ("independent_positive", lambda M: M.independent(M.positive, 2), (4, 2, 3)),
    ("positive", lambda M: M.positive, (4, 3)),
    ("nonnegative", lambda M: M.nonnegative, (4, 3)),
    ("greater_than", lambda M: M.greater_than(1.5), (4, 3)),
    ("greater_than_eq", lambda M: M.greater_than_eq(-2.0), (4, 3)),
    ("less_than", lambda M: M.less_than(0.5), (4, 3)),
    ("interval", lambda M: M.interval(-1.0, 3.0), (4, 3)),
    ("half_open_interval", lambda M: M.half_open_interval(2.0, 2.5), (4, 3)),
    ("unit_interval", lambda M: M.unit_interval, (4, 3)),
    ("simplex", lambda M: M.simplex, (4, 3)),
    ("lower_cholesky", lambda M: M.lower_cholesky, (4, 3, 3)),
    ("positive_definite", lambda M: M.positive_definite, (4, 3, 3)),
    ("positive_semidefinite", lambda M: M.positive_semidefinite, (4, 3, 3)),
    ("corr_cholesky", lambda M: M.corr_cholesky, (4, 3)),
    ("cat", lambda M: M.cat([M.positive, M.real, M.unit_interval], 1, [2, 1, 2]), (4, 5)),
    ("stack", lambda M: M.stack([M.positive, M.real, M.interval(0.0, 2.0)], 1), (4, 3)),
]
BIJECTIVE_ONLY_IN_TORCH_TRANSFORM_TO = {"lower_cholesky", "positive_definite", "positive_semidefinite"}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("entry", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_constraint_registry_matches_torch(entry, registry, device):
    """The registered transform lands in the constraint, is torch's (by class, values and log |det J|), and a
    bijection inverts."""
    torch = pytest.importorskip("torch")
    import torch.distributions.constraint_registry as TCR
    import torch.distributions.constraints as TC

    name, build, shape = entry
    s_reg, t_reg = getattr(D, registry), getattr(TCR, registry)
    if registry == "biject_to" and name in BIJECTIVE_ONLY_IN_TORCH_TRANSFORM_TO:
        with pytest.raises(NotImplementedError) as te:
            t_reg(build(TC))
        with pytest.raises(NotImplementedError) as se:
            s_reg(build(C))
        assert str(se.value) == str(te.value)
        return
    s, t = s_reg(build(C)), t_reg(build(TC))
    assert type(s).__name__ == type(t).__name__
    if hasattr(t, "parts"):
        assert [type(p).__name__ for p in s.parts] == [type(p).__name__ for p in t.parts]
    x = RNG.standard_normal(shape)
    sx, tx = _t(x, device, grad=True), torch.tensor(x, requires_grad=True)
    sy, ty = s(sx), t(tx)
    _check(sy, ty.detach().numpy(), device, rtol=1e-9)
    _grads_match(torch, sy, [sx], ty, [tx], device)
    if device != "meta":
        assert _host(build(C).check(sy)).all()
    if registry == "biject_to":
        _check(s.inv(sy), x, device, rtol=1e-7, atol=1e-9)
        s_ladj, t_ladj = s.log_abs_det_jacobian(sx, sy), t.log_abs_det_jacobian(tx, ty)
        _check(s_ladj, t_ladj.detach().numpy(), device, rtol=1e-9)
        if t_ladj.requires_grad:  # (the identity's is a constant 0)
            _grads_match(torch, s_ladj, [sx], t_ladj, [tx], device)


def test_constraint_registry_protocol():
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(C.boolean)
    with pytest.raises(NotImplementedError, match="Cannot transform _IntegerInterval constraints"):
        D.transform_to(C.integer_interval(0, 3))
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance, but got"):
        D.biject_to.register(int, lambda c: T.ExpTransform())
    registry = D.constraint_registry.ConstraintRegistry()

    class _Odd(C.Constraint):
        pass

    @registry.register(_Odd)
    def _odd(constraint):
        return T.AbsTransform()

    assert isinstance(registry(_Odd()), T.AbsTransform)
    registry.register(C.positive, lambda c: T.SoftplusTransform())  # an instance registers its class
    assert isinstance(registry(C.greater_than(3.0)), T.SoftplusTransform)
    assert D.biject_to(C.unit_interval) == T.SigmoidTransform()  # the unit interval's special case
    t = D.biject_to(C.interval(st.tensor([0.0, 1.0]), st.tensor([1.0, 3.0])))  # tensor bounds: affine after
    assert isinstance(t, T.ComposeTransform)
    np.testing.assert_allclose(_host(t(st.zeros(2))), [0.5, 2.0])


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_unconstrained_optimization_through_transform_to(device):
    """A use: fit a simplex-valued and a positive parameter by gradient steps on unconstrained values."""
    target = np.array([0.2, 0.5, 0.3])
    u = _t(np.zeros(3), device, grad=True)
    v = _t(np.zeros(1), device, grad=True)
    to_simplex, to_positive = D.transform_to(C.simplex), D.transform_to(C.positive)
    for _ in range(300):
        p, s = to_simplex(u), to_positive(v)
        loss = -(_t(target, device) * p.log()).sum() + (s - 2.5).pow(2).sum()
        gu, gv = st.autograd.grad(loss, [u, v])
        with st.no_grad():
            u -= 0.5 * gu
            v -= 0.1 * gv
    np.testing.assert_allclose(_host(to_simplex(u)), target, atol=1e-3)
    assert float(to_positive(v)) == pytest.approx(2.5, abs=1e-3)
    assert math.isclose(float(to_simplex(u).sum()), 1.0, rel_tol=1e-12)
