"""Autograd through complex tensors against torch (Note [Complex gradients] in
strided/autograd/functions_complex.py): each formula's gradients for complex64/complex128 and mixed
real/complex operands under real losses, the engine's dtype rules, finite differences through real
wrappers, and LLaMA's rotary embedding end to end."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

_TOL = {"float32": 2e-5, "complex64": 2e-5, "float64": 1e-10, "complex128": 1e-10}


def _array(shape, dtype: str, seed: int):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _leaves(arrays):
    ours = [st.from_numpy(a.copy()).requires_grad_() for a in arrays]
    theirs = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    return ours, theirs


def _loss(lib, out, kind: str):
    """A real scalar of ``out`` (real or complex) that weighs real and imaginary parts differently."""
    if kind == "abs":
        return out.abs().sum()
    parts = lib.view_as_real(out) if out.is_complex() else out
    w = np.linspace(0.5, 1.5, parts.numel()).reshape(tuple(parts.shape))
    weights = lib.from_numpy(w.astype(str(parts.dtype).split(".")[-1]))
    return (parts * weights).pow(2).sum() if kind == "square" else (parts * weights).sum()


def _check(fn, arrays, kind="square"):
    """``fn(lib, *leaves)`` in strided and torch: each leaf's ``.grad`` is torch's, in the leaf's dtype."""
    ours, theirs = _leaves(arrays)
    _loss(st, fn(st, *ours), kind).backward()
    _loss(torch, fn(torch, *theirs), kind).backward()
    for a, x, t in zip(arrays, ours, theirs):
        assert x.grad is not None, "no gradient"
        assert x.grad.dtype.name == str(a.dtype), (x.grad.dtype, a.dtype)
        tol = _TOL[str(a.dtype)]
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)


_BINARY = {
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / b,
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "add_alpha": lambda lib, a, b: lib.add(a, b, alpha=2.5),
    "sub_alpha": lambda lib, a, b: lib.sub(a, b, alpha=-0.5),
}
_DTYPES = [("complex64", "complex64"), ("complex128", "complex128"), ("float32", "complex64"),
           ("complex64", "float32"), ("float64", "complex128"), ("complex128", "float64")]


@pytest.mark.parametrize("dtypes", _DTYPES, ids=lambda d: "-".join(d))
@pytest.mark.parametrize("name", sorted(_BINARY))
@pytest.mark.parametrize("kind", ["abs", "square"])
def test_binary(name, dtypes, kind):
    _check(_BINARY[name], [_array((3, 4), dtypes[0], 0), _array((4,), dtypes[1], 1)], kind)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_alpha_is_conjugated(dtype):
    _check(lambda lib, a, b: lib.add(a, b, alpha=1 - 2j), [_array((5,), dtype, 0), _array((5,), dtype, 1)])
    _check(lambda lib, a, b: lib.sub(a, b, alpha=0.5 + 1j), [_array((5,), dtype, 0), _array((5,), dtype, 1)])


@pytest.mark.parametrize("dtype", ["float32", "complex64", "complex128"])
@pytest.mark.parametrize("scalar", [2.0, 1 + 2j])
def test_scalar_operands(dtype, scalar):
    if scalar == 2.0 or dtype != "float32":
        _check(lambda lib, a: a * scalar, [_array((4,), dtype, 0)])
        _check(lambda lib, a: a / scalar, [_array((4,), dtype, 0)])
    _check(lambda lib, a: a * scalar + scalar, [_array((4,), dtype, 0)])


_UNARY = {
    "neg": lambda lib, z: -z,
    "abs": lambda lib, z: z.abs() * 1.5,
    "sgn": lambda lib, z: lib.sgn(z),
    "exp": lambda lib, z: lib.exp(z),
    "sum": lambda lib, z: z.sum(0),
    "mean": lambda lib, z: z.mean(1, keepdim=True),
    "conj": lambda lib, z: lib.conj(z) * z[0],
    "conj_physical": lambda lib, z: lib.conj_physical(z) * z[0],
    "angle": lambda lib, z: lib.angle(z),
    "real": lambda lib, z: lib.real(z) * 2,
    "imag": lambda lib, z: lib.imag(z) * 2,
    "view_as_real": lambda lib, z: lib.view_as_real(z) * 2,
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(_UNARY))
@pytest.mark.parametrize("kind", ["abs", "square"])
def test_unary(name, dtype, kind):
    _check(_UNARY[name], [_array((3, 4), dtype, 0)], kind)


@pytest.mark.parametrize("name", ["abs", "sgn", "angle"])
def test_zero_is_masked(name):
    a = _array((6,), "complex128", 0)
    a[2] = 0
    _check(_UNARY[name], [a], "square")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_view_as_complex(dtype):
    _check(lambda lib, x: lib.view_as_complex(x) * (2 - 1j), [_array((3, 2), dtype, 0)])
    _check(lambda lib, x: lib.view_as_complex(x.reshape(2, 3, 2)).exp(), [_array((6, 2), dtype, 0)], "abs")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polar_and_complex(dtype):
    _check(lambda lib, r, t: lib.polar(r, t), [_array((5,), dtype, 0) + 2, _array((5,), dtype, 1)])
    _check(lambda lib, r, t: lib.complex(r, t) * (1 + 1j), [_array((5,), dtype, 0), _array((5,), dtype, 1)])


def _write_real_view(lib, z, x):
    y = z * 1
    lib.view_as_real(y)[:, 1].add_(x)
    return y * y


def _write_real_part(lib, z, x):
    y = z * 1
    y.real.mul_(x)
    return y * y[0]


def _write_complex_view(lib, z, x):
    y = lib.view_as_real(z) * 1
    lib.view_as_complex(y).mul_(x)
    return y * y[:, :1]


@pytest.mark.parametrize("fn", [_write_real_view, _write_real_part, _write_complex_view], ids=lambda f: f.__name__)
def test_inplace_through_views_of_another_dtype(fn):
    """Note [Views of another dtype]: CopySlices / a rebased view's history across view_as_real,
    real and view_as_complex."""
    _check(fn, [_array((4,), "complex128", 0), _array((4,), "float64", 1)])


# ---------------------------------------------------------------------------- the engine


def test_complex_scalar_backward_needs_a_grad():
    z = st.ones(1, dtype=st.complex64, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs"):
        (z * 2).sum().backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs"):
        st.autograd.grad((z * 2).sum(), z)


def test_explicit_complex_grad_output():
    a = _array((4,), "complex128", 0)
    g = _array((4,), "complex128", 1)
    (x,), (t,) = _leaves([a])
    (ours,) = st.autograd.grad(x * x, x, st.from_numpy(g.copy()))
    (theirs,) = torch.autograd.grad(t * t, t, torch.from_numpy(g.copy()))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_requires_grad_and_grad_dtypes():
    z = st.zeros(3, dtype=st.complex64, requires_grad=True)
    assert z.requires_grad and st.ones(2, dtype=st.complex128).requires_grad_().requires_grad
    x = st.ones(3, requires_grad=True)
    (x * z + x).abs().sum().backward()
    assert x.grad.dtype is st.float32 and z.grad.dtype is st.complex64


class _ComplexGrad(st.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        return g * (1 + 1j)


class _RealGrad(st.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        return z * 1

    @staticmethod
    def backward(ctx, g):
        return st.real(g)


def test_validate_outputs():
    """torch's validate_outputs: a complex gradient for a real input is an error (outside
    handle_r_to_c); a real one for a complex input is cast."""
    x = st.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Expected isFloatingType\(grad.scalar_type\(\)\) \|\| "
                                           r"\(input_is_complex == grad_is_complex\) to be true"):
        _ComplexGrad.apply(x).sum().backward()
    z = st.from_numpy(_array((3,), "complex64", 0)).requires_grad_()
    _RealGrad.apply(z).abs().sum().backward()
    assert z.grad.dtype is st.complex64
    np.testing.assert_allclose(z.grad.numpy().imag, 0)


def test_handle_r_to_c_takes_a_whole_formula(tmp_path):
    from strided.autograd.derivatives import load_derivatives
    from strided.ops.schema import SchemaError

    path = tmp_path / "derivatives.yaml"
    path.write_text("- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: 2 * handle_r_to_c(grad)\n")
    with pytest.raises(SchemaError, match="unknown name 'handle_r_to_c'"):
        load_derivatives(str(path))
    path.write_text("- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: handle_r_to_c(grad * other)\n")
    (info,) = load_derivatives(str(path)).values()
    assert info.r_to_c == (True,) and [s[0] for s in info.saved] == ["other"]


# ---------------------------------------------------------------------------- finite differences


def _finite_difference(loss, arrays, eps=1e-6):
    """dL/dRe + i dL/dIm of each complex array (dL/dx of a real one) by central differences."""
    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros(a.shape, dtype=a.dtype)
        parts = (1, 1j) if np.iscomplexobj(a) else (1,)
        for idx in np.ndindex(a.shape):
            for unit in parts:
                hi = [b.copy() for b in arrays]
                lo = [b.copy() for b in arrays]
                hi[k][idx] += eps * unit
                lo[k][idx] -= eps * unit
                g[idx] += unit * (loss(hi) - loss(lo)) / (2 * eps)
        grads.append(g)
    return grads


_FD_CASES = {
    "mul_div": lambda lib, a, b: (a * b) / (b + 2),
    "exp_sgn": lambda lib, a, b: lib.exp(a) * lib.sgn(b),
    "abs_mixed": lambda lib, a, b: (a - b.abs()) * a,
    "view_as_real": lambda lib, a, b: lib.view_as_complex(lib.view_as_real(a * b) * 1.5),
    "polar_angle": lambda lib, a, b: lib.polar(a.abs(), lib.angle(b)),
}


@pytest.mark.parametrize("name", sorted(_FD_CASES))
def test_finite_differences(name):
    fn = _FD_CASES[name]
    arrays = [_array((3,), "complex128", 0), _array((3,), "complex128", 1)]

    def loss(arrs):
        out = fn(st, *[st.from_numpy(a) for a in arrs])
        return float(_loss(st, out, "square").item())

    leaves = [st.from_numpy(a.copy()).requires_grad_() for a in arrays]
    _loss(st, fn(st, *leaves), "square").backward()
    for x, expected in zip(leaves, _finite_difference(loss, arrays)):
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------- LLaMA's rotary embedding


def _rope(lib, xq, f):
    """LLaMA's apply_rotary_emb: pairs of features as complex numbers, rotated by ``polar(1, f)``."""
    freqs_cis = lib.polar(lib.ones_like(f), f)
    xq_ = lib.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])  # reshape_for_broadcast
    return lib.view_as_real(xq_ * freqs_cis).flatten(3).type_as(xq)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["sum", "square"])
def test_rope(dtype, kind):
    xq = _array((2, 5, 3, 8), dtype, 0)
    pos = np.arange(5)[:, None] * (10000.0 ** (-np.arange(0, 8, 2) / 8))[None, :]
    f = pos.astype("float32")
    ours, theirs = _leaves([xq, f])
    for lib, (x, t) in ((st, ours), (torch, theirs)):
        out = _rope(lib, x, t)
        assert out.dtype == x.dtype and tuple(out.shape) == xq.shape
        (out.sum() if kind == "sum" else (out * out).sum()).backward()
    for x, t in zip(ours, theirs):  # computed in float32 (``xq.float()``) whatever xq's dtype
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=2e-5, atol=2e-5)
