"""strided.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) against torch.autograd.functional."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.autograd.functional as F

torch = pytest.importorskip("torch")
TF = torch.autograd.functional

RNG = np.random.default_rng(0)


def _pair(*shapes, requires_grad=False):
    """The same float64 values as strided and torch tensors (a tuple of each)."""
    arrays = [RNG.standard_normal(shape) for shape in shapes]
    return (tuple(st.tensor(a, requires_grad=requires_grad) for a in arrays),
            tuple(torch.tensor(a, requires_grad=requires_grad) for a in arrays))


def _same(ours, theirs, path="result"):
    """Same nesting (tuple vs list vs Tensor), shapes, values and requires_grad as torch's result."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, st.Tensor), f"{path}: {type(ours)}"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: {ours.shape} vs {theirs.shape}"
        assert ours.requires_grad == theirs.requires_grad, f"{path}: requires_grad {ours.requires_grad}"
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=path)
        return
    assert type(ours) is type(theirs) and len(ours) == len(theirs), f"{path}: {type(ours)} vs {type(theirs)}"
    for i, (a, b) in enumerate(zip(ours, theirs)):
        _same(a, b, f"{path}[{i}]")


# the same source runs on both libraries: only methods and operators common to both
def elementwise(x):
    return (x.sin() * x).exp()


def matmul(x, w):
    return (x @ w).tanh()


def multi(x, w):
    return (x @ w).sum(0), x.pow(3)


def scalar(x, w):
    return ((x @ w).tanh() ** 2).sum()


def cube_sum(x):
    return (x ** 3).sum()


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("func,shapes", [(elementwise, [(3,)]), (matmul, [(2, 3), (3, 4)]), (multi, [(2, 3), (3, 4)])])
def test_jacobian_matches_torch(func, shapes, vectorize):
    ours, theirs = _pair(*shapes)
    arg = (lambda t: t[0]) if len(shapes) == 1 else (lambda t: t)
    _same(F.jacobian(func, arg(ours), vectorize=vectorize), TF.jacobian(func, arg(theirs), vectorize=vectorize))


@pytest.mark.parametrize("requires_grad", [False, True])
def test_forward_mode_jacobian_matches_torch(requires_grad):
    ours, theirs = _pair((2, 3), (3, 4), requires_grad=requires_grad)
    _same(F.jacobian(multi, ours, vectorize=True, strategy="forward-mode"),
          TF.jacobian(multi, theirs, vectorize=True, strategy="forward-mode"))  # lists of lists, as torch's
    _same(F.jacobian(elementwise, ours[0], vectorize=True, strategy="forward-mode"),
          TF.jacobian(elementwise, theirs[0], vectorize=True, strategy="forward-mode"))


@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian_matches_torch(vectorize):
    ours, theirs = _pair((2, 3), (3, 4))
    _same(F.hessian(scalar, ours, vectorize=vectorize), TF.hessian(scalar, theirs, vectorize=vectorize))
    _same(F.hessian(cube_sum, ours[0], vectorize=vectorize), TF.hessian(cube_sum, theirs[0], vectorize=vectorize))
    ours, theirs = _pair((2, 3), (3, 4), requires_grad=True)
    _same(F.hessian(scalar, ours, vectorize=True, outer_jacobian_strategy="forward-mode"),
          TF.hessian(scalar, theirs, vectorize=True, outer_jacobian_strategy="forward-mode"))


def test_vector_products_match_torch():
    ours, theirs = _pair((2, 3), (3, 4))
    (vo_out,), (vt_out,) = _pair((4,))
    (vo_x,), (vt_x,) = _pair((2, 3))
    _same(F.vjp(multi, ours, (vo_out, vo_x)), TF.vjp(multi, theirs, (vt_out, vt_x)))
    (vo_in,), (vt_in,) = _pair((3, 4))
    _same(F.jvp(multi, ours, (vo_x, vo_in)), TF.jvp(multi, theirs, (vt_x, vt_in)))
    _same(F.vhp(scalar, ours, (vo_x, vo_in)), TF.vhp(scalar, theirs, (vt_x, vt_in)))
    _same(F.hvp(scalar, ours, (vo_x, vo_in)), TF.hvp(scalar, theirs, (vt_x, vt_in)))
    _same(F.vjp(elementwise, ours[0], vo_x), TF.vjp(elementwise, theirs[0], vt_x))
    _same(F.jvp(elementwise, ours[0], vo_x), TF.jvp(elementwise, theirs[0], vt_x))
    # a one-element input or output needs no v
    one_o, one_t = _pair((1,))
    _same(F.vjp(cube_sum, one_o[0]), TF.vjp(cube_sum, one_t[0]))
    _same(F.jvp(elementwise, one_o[0]), TF.jvp(elementwise, one_t[0]))


def test_unused_input_gives_zeros():
    ours, theirs = _pair((3,), (2,))
    _same(F.jacobian(lambda x, y: x * 2, ours), TF.jacobian(lambda x, y: x * 2, theirs))
    _same(F.vjp(lambda x, y: x.sum(), ours), TF.vjp(lambda x, y: x.sum(), theirs))


@pytest.mark.parametrize("name", ["jacobian", "vjp", "jvp", "vhp", "hvp"])
def test_create_graph_then_second_order_grad(name):
    (xo,), (xt,) = _pair((3,), requires_grad=True)
    (vo,), (vt,) = _pair((3,))
    if name == "jacobian":
        ro, rt = F.jacobian(elementwise, xo, create_graph=True), TF.jacobian(elementwise, xt, create_graph=True)
        so, stt = ro.sum(), rt.sum()
    else:
        func = cube_sum if name in ("vhp", "hvp") else elementwise
        ro = getattr(F, name)(func, xo, vo, create_graph=True)
        rt = getattr(TF, name)(func, xt, vt, create_graph=True)
        so, stt = ro[1].sum(), rt[1].sum()
    _same(ro, rt)
    _same(st.autograd.grad(so, xo), torch.autograd.grad(stt, xt))


def test_without_create_graph_results_are_detached():
    (xo,), _ = _pair((3,), requires_grad=True)
    out, res = F.vjp(elementwise, xo, st.ones(3))
    assert not out.requires_grad and not res.requires_grad
    assert not F.hessian(cube_sum, xo).requires_grad
    assert xo.grad is None


def _error(fn, *args, **kwargs):
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)
    return type(info.value), str(info.value).replace("torch.", "strided.")


def _same_error(call):
    """``call(module, tensor_factory)`` raises the same exception type and words with both libraries."""
    ours = _error(call, F, lambda *s: st.ones(*s, dtype=st.float64))
    theirs = _error(call, TF, lambda *s: torch.ones(*s, dtype=torch.float64))
    assert ours == theirs


@pytest.mark.parametrize("call", [
    # strict mode
    lambda m, t: m.vjp(lambda x, y: x * 2, (t(3), t(2)), t(3), strict=True),
    lambda m, t: m.jacobian(lambda x, y: x * 2, (t(3), t(2)), strict=True),
    lambda m, t: m.jacobian(lambda x: x.detach(), t(3), strict=True),
    lambda m, t: m.jvp(lambda x, y: x * 2, (t(3), t(2)), (t(3), t(2)), strict=True),
    lambda m, t: m.hessian(lambda x: x.sum() * 2, t(3), strict=True),
    lambda m, t: m.hvp(lambda x: (x * 2).sum(), t(3), t(3), strict=True),
    lambda m, t: m.vhp(lambda x, y: (x ** 2).sum(), (t(3), t(2)), (t(3), t(2)), strict=True),
    lambda m, t: m.jacobian(lambda x: x * 2, t(3), strict=True, vectorize=True),
    lambda m, t: m.jacobian(lambda x: x * 2, t(3), strict=True, vectorize=True, strategy="forward-mode"),
    lambda m, t: m.jacobian(lambda x: x * 2, t(3), strict=True, create_graph=True),
    lambda m, t: m.vjp(lambda x: x * 2, t(3), t(3), strict=True, create_graph=True),
    # bad v
    lambda m, t: m.vjp(lambda x: x * 2, t(3), t(4)),
    lambda m, t: m.vjp(lambda x, y: (x, y), (t(3), t(2)), (t(3), t(3))),
    lambda m, t: m.vjp(lambda x, y: (x, y), (t(3), t(2)), (t(3),)),
    lambda m, t: m.vjp(lambda x: x * 2, t(3), (t(3), t(3))),
    lambda m, t: m.vjp(lambda x: x * 2, t(3)),
    lambda m, t: m.jvp(lambda x: x * 2, t(3), [1.0, 2.0, 3.0]),
    lambda m, t: m.jvp(lambda x: x * 2, (t(3), t(2)), (t(3), 5)),
    lambda m, t: m.jvp(lambda x: x * 2, t(3)),
    lambda m, t: m.hvp(lambda x: x.sum(), t(3), t(2)),
    # bad inputs / outputs
    lambda m, t: m.jacobian(lambda x: x * 2, [t(3)]),
    lambda m, t: m.vjp(lambda x: 3.0, t(1)),
    lambda m, t: m.hessian(lambda x: x * 2, t(3)),
    lambda m, t: m.hessian(lambda x: (x, x), t(3)),
    lambda m, t: m.vhp(lambda x: x * 2, t(3), t(3)),
    # strategy arguments
    lambda m, t: m.jacobian(lambda x: x * 2, t(3), strategy="sideways"),
    lambda m, t: m.jacobian(lambda x: x * 2, t(3), strategy="forward-mode"),
    lambda m, t: m.jacobian(lambda x: x * 2, t(3), create_graph=True, strategy="forward-mode"),
    lambda m, t: m.hessian(lambda x: x.sum(), t(3), outer_jacobian_strategy="sideways"),
])
def test_errors_match_torch(call):
    _same_error(call)


def test_strict_mode_words():
    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 1. "
                                           "This is not allowed in strict mode."):
        F.vjp(lambda x, y: x * 2, (st.ones(3), st.ones(2)), st.ones(3), strict=True)
