"""Refusals in torch's words on the CPU: complex input to the ops torch refuses it for (its own checks where they
come before AT_DISPATCH, else its kernel names), embedding_bag's weight dtypes; and integer bilinear keeping its
dtype, as torch."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")


def _complex_cases(m):
    F = m.nn.functional
    z = m.ones(2, 3, 4, dtype=m.complex64)
    i = m.zeros(2, 4, dtype=m.int64)
    return {
        "relu": lambda: F.relu(z), "relu6": lambda: F.relu6(z), "hardtanh": lambda: F.hardtanh(z),
        "clamp": lambda: m.clamp(z, 0, 1), "clamp_min": lambda: m.clamp_min(z, 0),
        "clamp_max": lambda: m.clamp_max(z, 0),
        "relu_": lambda: z.clone().relu_(), "gelu": lambda: F.gelu(z), "threshold": lambda: F.threshold(z, 0.5, 1.0),
        "softmax": lambda: F.softmax(z, 1), "log_softmax": lambda: F.log_softmax(z, 1),
        "layer_norm": lambda: F.layer_norm(z, (4,)), "dropout": lambda: F.dropout(z, 0.5),
        "cross_entropy": lambda: F.cross_entropy(z, i), "max": lambda: m.max(z), "max dim": lambda: m.max(z, 1),
        "min dim": lambda: m.min(z, 1), "amax": lambda: m.amax(z, 1), "amin": lambda: m.amin(z, 1),
        "argmax": lambda: m.argmax(z), "argmin": lambda: m.argmin(z), "sort": lambda: m.sort(z),
        "argsort": lambda: m.argsort(z), "msort": lambda: m.msort(z), "topk": lambda: m.topk(z, 1),
        "floor": lambda: m.floor(z), "ceil": lambda: m.ceil(z), "trunc": lambda: m.trunc(z), "fix": lambda: m.fix(z),
        "floor_": lambda: z.clone().floor_(), "round": lambda: m.round(z), "sign": lambda: m.sign(z),
        "signbit": lambda: m.signbit(z), "erf": lambda: m.erf(z), "erfc": lambda: m.erfc(z),
        "erfinv": lambda: m.erfinv(z), "lgamma": lambda: m.lgamma(z), "digamma": lambda: m.digamma(z),
        "i0": lambda: m.i0(z), "maximum": lambda: m.maximum(z, z), "minimum": lambda: m.minimum(z, z),
        "fmax": lambda: m.fmax(z, z), "fmin": lambda: m.fmin(z, z), "heaviside": lambda: m.heaviside(z, z),
        "rad2deg": lambda: m.rad2deg(z), "deg2rad": lambda: m.deg2rad(z), "floor_divide": lambda: m.floor_divide(z, z),
        "nanmedian": lambda: m.nanmedian(z), "histc": lambda: m.histc(z), "isin": lambda: m.isin(z, z),
        "nansum": lambda: m.nansum(z), "nanmean": lambda: m.nanmean(z), "one_hot": lambda: F.one_hot(z),
        "max_pool2d": lambda: F.max_pool2d(z, 2),
        "embedding_bag": lambda: F.embedding_bag(m.tensor([[0, 1]]), z[0]),
    }


def _outcome(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return type(e).__name__, str(e).splitlines()[0]
    return ("ok",)


@pytest.mark.parametrize("case", sorted(_complex_cases(st)))
def test_complex_refusals_in_torch_words(case):
    assert _outcome(_complex_cases(st)[case]) == _outcome(_complex_cases(torch)[case])


@pytest.mark.parametrize("dt", ["int64", "int32", "int16", "int8", "uint8", "bool"])
def test_embedding_bag_weight_dtypes_as_torch(dt):
    def call(m):
        return lambda: m.nn.functional.embedding_bag(m.tensor([[0, 1]]), m.ones(3, 2, dtype=getattr(m, dt)))

    got, want = _outcome(call(st)), _outcome(call(torch))
    assert got[0] == want[0] == "RuntimeError"
    assert got[1] == want[1].replace("torch.", "strided.")


@pytest.mark.parametrize("dt", ["int64", "int32", "int16", "uint8"])
def test_integer_bilinear_keeps_its_dtype(dt):
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 9, (2, 3)).astype(dt), rng.integers(0, 9, (2, 4)).astype(dt)
    w, bias = rng.integers(0, 9, (5, 3, 4)).astype(dt), rng.integers(0, 9, (5,)).astype(dt)
    got = st.nn.functional.bilinear(*(st.from_numpy(v) for v in (a, b, w, bias)))
    want = torch.nn.functional.bilinear(*(torch.from_numpy(v) for v in (a, b, w, bias)))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1] == dt
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def _dtype_cases(m, dt):
    F = m.nn.functional
    x = m.ones(2, 3, 4, 4, dtype=getattr(m, dt))
    return {
        "gelu": lambda: F.gelu(x), "silu": lambda: F.silu(x), "softplus": lambda: F.softplus(x),
        "logsigmoid": lambda: F.logsigmoid(x), "softmax": lambda: F.softmax(x, 1),
        "group_norm": lambda: F.group_norm(x, 3),
        "batch_norm": lambda: F.batch_norm(x, None, None, training=True), "rms_norm": lambda: F.rms_norm(x, (4,)),
        "mse_loss": lambda: F.mse_loss(x, x), "smooth_l1": lambda: F.smooth_l1_loss(x, x),
        "huber": lambda: F.huber_loss(x, x),
        "bce": lambda: F.binary_cross_entropy(x, x), "nll_loss": lambda: F.nll_loss(x, m.zeros(2, 4, 4, dtype=m.int64)),
        "clamp_": lambda: x.clone().clamp_(min=0.5), "clamp_min_": lambda: x.clone().clamp_min_(0.5),
    }


@pytest.mark.parametrize("dt", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("case", sorted(_dtype_cases(st, "int64")))
def test_integer_and_bool_refusals_in_torch_words(dt, case):
    assert _outcome(_dtype_cases(st, dt)[case]) == _outcome(_dtype_cases(torch, dt)[case])


def _more_cases(m):
    F = m.nn.functional
    h = m.ones(2, 2, 4, 4, 4, dtype=m.float16)
    b = m.ones(3, dtype=m.bool)
    z = m.tensor([[1 + 2j, -0.5j], [0.3, 2 - 1j]])
    t = m.tensor([[1.0, -1.0], [1.0, 1.0]])
    return {
        "avg_pool3d half": lambda: F.avg_pool3d(h, 2),
        "local_response_norm bfloat16": lambda: F.local_response_norm(h[0].to(m.bfloat16), 2),
        "pdist half": lambda: F.pdist(h[0, 0, 0]), "soft_margin bool": lambda: F.soft_margin_loss(b, b),
        "margin_ranking bool": lambda: F.margin_ranking_loss(b, b, b),
        "soft_margin complex grad": lambda: F.soft_margin_loss(z.clone().requires_grad_(), t),
    }


@pytest.mark.parametrize("case", sorted(_more_cases(st)))
def test_half_bool_and_complex_loss_refusals_as_torch(case):
    assert _outcome(_more_cases(st)[case]) == _outcome(_more_cases(torch)[case])


def test_complex_soft_margin_loss_values_as_torch():
    z = np.array([[1 + 2j, -0.5j], [0.3, 2 - 1j]], dtype=np.complex64)
    t = np.array([[1.0, -1.0], [1.0, 1.0]], dtype=np.float32)
    for reduction in ("none", "mean", "sum"):
        got, want = (m.nn.functional.soft_margin_loss(m.from_numpy(z.copy()), m.from_numpy(t), reduction=reduction)
                     for m in (st, torch))
        assert got.dtype == st.complex64
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def _api_cases(m):
    i = m.tensor([[0, 1], [2, 3]])
    u = m.ones(4, dtype=m.uint8)
    z = m.tensor([[1 + 1j, 2], [0, 1j]])
    b = m.ones(3, dtype=m.bool)
    return {
        "i0_ of int": lambda: i.clone().i0_(), "gradient uint8": lambda: m.gradient(u),
        "histogram half": lambda: m.histogram(m.ones(4, dtype=m.float16)),
        "histogram half edges": lambda: m.histogram(m.ones(4, dtype=m.float16), m.tensor([0.0, 2.0], dtype=m.float16)),
        "histogram int edges": lambda: m.histogram(i, m.tensor([0, 2])),
        "stack tensor": lambda: m.stack(i), "hstack tensor": lambda: m.hstack(i),
        "chain_matmul list": lambda: m.chain_matmul([i, i]), "std_mean int": lambda: m.std_mean(i),
        "var_mean int": lambda: m.var_mean(i), "frac_ complex": lambda: z.clone().frac_(),
        "abs_ complex": lambda: z.clone().abs_(), "deg2rad_ complex": lambda: z.clone().deg2rad_(),
        "isposinf complex": lambda: m.isposinf(z), "frexp complex": lambda: m.frexp(z),
        "cov bool": lambda: m.cov(b), "trapezoid bool": lambda: m.trapezoid(b),
        "nuclear_norm complex": lambda: m.linalg.matrix_norm(z, "nuc"),
        "index_reduce int16 index": lambda: m.index_reduce(m.ones(3), 0, m.tensor([0], dtype=m.int16), m.ones(1),
                                                           "prod"),
        "repeat_interleave bool": lambda: m.repeat_interleave(b),
        "repeat_interleave uint8": lambda: m.repeat_interleave(m.tensor([5.0, 6.0]), m.tensor([2, 1], dtype=m.uint8)),
        "nanmean dtype int": lambda: m.nanmean(m.ones(2), dtype=m.int32),
        "nanmean dtype bool": lambda: m.ones(2).nanmean(dtype=m.bool),
        "all repeated dims": lambda: m.ones(2, 3).all((0, 0)), "any dim out of range": lambda: m.ones(2, 3).any((5,)),
    }


@pytest.mark.parametrize("case", sorted(_api_cases(st)))
def test_api_refusals_as_torch(case):
    got, want = _outcome(_api_cases(st)[case]), _outcome(_api_cases(torch)[case])
    assert got == want


def test_values_torch_computes_as_torch():
    import warnings

    z = np.array([[1 + 1j, 2], [0, 1j]], dtype=np.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # chain_matmul's deprecation
        for f in (lambda m, x: m.chain_matmul(x, x), lambda m, x: m.chain_matmul(x), lambda m, x: m.trapz(x),
                  lambda m, x: m.conj_physical(x.real > 0), lambda m, x: m.reciprocal(x + 2)):
            got, want = f(st, st.from_numpy(z.copy())), f(torch, torch.from_numpy(z.copy()))
            g, w = got.numpy(), want.resolve_conj().numpy()
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-6)
            if g.dtype.kind == "c":  # the signs of zero parts too (NumPy's reciprocal gave 0.5 - 0i for 1 / 2)
                assert (np.signbit(g.imag) == np.signbit(w.imag)).all()


@pytest.mark.parametrize("dts", [("float16", "int64"), ("bfloat16", "int8"), ("int64", "int64"), ("bool", "float16"),
                                 ("float64", "complex64"), ("float32", "bool"), ("complex64", "bool")])
def test_ldexp_dtypes_as_torch(dts):
    a, b = np.array([0, 1, 2, 3]), np.array([1, 0, 3, 2])

    def call(m):
        x = m.from_numpy(a > 0) if dts[0] == "bool" else m.from_numpy(a).to(getattr(m, dts[0]))
        y = m.from_numpy(b > 0) if dts[1] == "bool" else m.from_numpy(b).to(getattr(m, dts[1]))
        return lambda: m.ldexp(x, y)

    got, want = _outcome(call(st)), _outcome(call(torch))
    assert got == want
    if got == ("ok",):
        g, w = call(st)(), call(torch)()
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(g.double().numpy(), w.double().numpy())


def test_dist_checks_the_promoted_dtype_and_dot_refuses_bool_as_torch():
    for m in (st, torch):
        assert float(m.dist(m.tensor([1, 2, 3]), m.tensor([1.0, 0.0, 0.0]))) == pytest.approx(13 ** 0.5)
    b = [True, False]
    for f in (lambda m: m.dist(m.tensor([1, 2]), m.tensor([1, 0])), lambda m: m.dot(m.tensor(b), m.tensor(b)),
              lambda m: m.vdot(m.tensor(b), m.tensor(b))):
        assert _outcome(lambda f=f: f(st)) == _outcome(lambda f=f: f(torch))


def _binary_cases(m):
    z, d = m.ones(4, dtype=m.complex64), m.ones(4, dtype=m.float64)
    i = m.ones(4, dtype=m.int64)
    return {
        "inner mixed": lambda: m.inner(z, d), "inner float mixed": lambda: m.inner(d, d.float()),
        "isclose mixed": lambda: m.isclose(d, d.float()), "cross without a dim of 3": lambda: m.cross(d, d),
        "bce target dtype": lambda: m.nn.functional.binary_cross_entropy(i, d),
        "atan2 complex and double": lambda: m.atan2(z, d), "lt complex and double": lambda: m.lt(z, d),
        "left shift complex": lambda: m.bitwise_left_shift(z, z), "dist bool": lambda: m.dist(i.bool(), i.to(m.int8)),
    }


@pytest.mark.parametrize("case", sorted(_binary_cases(st)))
def test_binary_refusals_as_torch(case):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cross's missing-dim deprecation
        assert _outcome(_binary_cases(st)[case]) == _outcome(_binary_cases(torch)[case])


@pytest.mark.parametrize("decimals", [None, 0, 1, 2, -1])
@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int64"])
def test_round_with_decimals_as_torch(decimals, dt):
    x = np.array([1.25, 2.5, -3.14159, 15.0, 0.05])

    def calls(m):
        t = m.from_numpy(x).to(getattr(m, dt))
        kw = {} if decimals is None else {"decimals": decimals}
        return [lambda: m.round(t, **kw), lambda: t.round(**kw), lambda: t.clone().round_(**kw)]

    for got_f, want_f in zip(calls(st), calls(torch)):
        got, want = _outcome(got_f), _outcome(want_f)
        assert got == want
        if got == ("ok",):
            np.testing.assert_array_equal(got_f().double().numpy(), want_f().double().numpy())


def _conversion_cases(m):
    return {
        "float of two": lambda: float(m.ones(2)), "int of none": lambda: int(m.ones(0)),
        "complex of two": lambda: complex(m.ones(2)), "zeros negative": lambda: m.zeros(2, -3),
        "ones negative": lambda: m.ones(-1),
        "ragged": lambda: m.tensor([[1, 2], [3, 4, 5]]), "ones size keyword": lambda: m.ones(size=(2, 3)),
        "zeros size keyword": lambda: m.zeros(size=[2]), "empty size keyword": lambda: m.empty(size=(2,)).shape,
        "rand size keyword": lambda: m.rand(size=(2,)).shape, "randn size keyword": lambda: m.randn(size=(2,)).shape,
    }


@pytest.mark.parametrize("case", sorted(_conversion_cases(st)))
def test_conversions_and_factory_sizes_as_torch(case):
    assert _outcome(_conversion_cases(st)[case]) == _outcome(_conversion_cases(torch)[case])


def _operator_cases(m):
    f, i = m.tensor([1.5, 2.0]), m.tensor([1, 2])
    return {
        "== None": lambda: f == None,  # noqa: E711 - the comparison under test
        "!= None": lambda: f != None,  # noqa: E711
        "== str": lambda: f == "a", "!= list": lambda: f != [1, 2], "in list": lambda: f in [None, f],
        "~ float": lambda: ~f, "~ int": lambda: ~i, "type()": lambda: f.type(), "type() int": lambda: i.type(),
        "type(name)": lambda: f.type(m.__name__ + ".DoubleTensor").dtype,
        "type bad name": lambda: f.type(m.__name__ + ".FooTensor"),
    }


@pytest.mark.parametrize("case", sorted(_operator_cases(st)))
def test_operators_and_type_as_torch(case):
    got, want = _outcome(_operator_cases(st)[case]), _outcome(_operator_cases(torch)[case])
    assert got == tuple(str(w).replace("torch", "strided") for w in want)
    if got == ("ok",):
        g, w = _operator_cases(st)[case](), _operator_cases(torch)[case]()
        assert str(g).replace("strided", "") == str(w).replace("torch", "")


def _optimizer_cases(m):
    def p():
        return [m.nn.Parameter(m.ones(2))]

    def retained():
        t = m.ones(2, requires_grad=True) * 2
        t.retain_grad()
        return [t]

    return {
        "tensor as params": lambda: m.optim.SGD(m.ones(2), lr=0.1),
        "non-leaf": lambda: m.optim.SGD([m.ones(2, requires_grad=True) * 2], lr=0.1),
        "mixed betas": lambda: m.optim.Adam(p(), betas=(0.9, m.tensor(0.99))),
        "retained non-leaf": lambda: m.optim.SGD(retained(), lr=0.1),
    }


@pytest.mark.parametrize("case", sorted(_optimizer_cases(st)))
def test_optimizer_argument_checks_as_torch(case):
    got, want = _outcome(_optimizer_cases(st)[case]), _outcome(_optimizer_cases(torch)[case])
    assert got == tuple(str(w).replace("torch", "strided") for w in want)


def _module_cases(m):
    nn = m.nn
    return {
        "register_parameter tensor": lambda: nn.Module().register_parameter("w", m.ones(1)),
        "assign tensor to parameter": lambda: setattr(nn.Linear(2, 2), "weight", m.ones(2, 2)),
        "register_buffer dotted": lambda: nn.Module().register_buffer("a.b", m.ones(1)),
        "Embedding padding_idx": lambda: nn.Embedding(5, 3, padding_idx=5), "Dropout p": lambda: nn.Dropout(1.5),
        "MultiheadAttention heads": lambda: nn.MultiheadAttention(10, 3),
        "GroupNorm groups": lambda: nn.GroupNorm(3, 4),
        "load_state_dict missing": lambda: nn.Linear(2, 2).load_state_dict({"weight": m.ones(2, 2)}),
        "Linear wrong width": lambda: nn.Linear(3, 2)(m.ones(2, 4)),
    }


@pytest.mark.parametrize("case", sorted(_module_cases(st)))
def test_module_checks_as_torch(case):
    got, want = _outcome(_module_cases(st)[case]), _outcome(_module_cases(torch)[case])
    assert got == tuple(str(w).replace("torch", "strided") for w in want)


def _autograd_cases(m):
    def modified():
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = x * 2
        z = y * y
        y.add_(1)
        z.sum().backward()

    def unused():
        x, w = m.ones(3, requires_grad=True), m.ones(1, requires_grad=True)
        return m.autograd.grad((x * 2).sum(), [x, w])

    def assign(value):
        x = m.ones(3, requires_grad=True)
        x.grad = value

    return {
        "modified in place": modified, "unused input": unused,
        "grad of another size": lambda: assign(m.ones(2)),
        "grad of another dtype": lambda: assign(m.ones(3, dtype=m.float64)),
        "backward gradient shape": lambda: (m.ones(3, requires_grad=True) * 2).backward(m.ones(2)),
    }


@pytest.mark.parametrize("case", sorted(_autograd_cases(st)))
def test_autograd_words_as_torch(case):
    got, want = _outcome(_autograd_cases(st)[case]), _outcome(_autograd_cases(torch)[case])
    want = tuple(str(w).replace("torch", "strided") for w in want)
    if case == "grad of another dtype":  # strided has no grad_dtype attribute: torch's first sentence
        assert got[1] == want[1].split(" The gradient must")[0] + " The gradient must match the tensor's dtype."
        return
    assert got == want


def test_non_leaf_grad_access_warns_as_torch():
    y = st.ones(3, requires_grad=True) * 2
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"):
        assert y.grad is None
    y.retain_grad()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.grad is None  # retained: no warning


def test_complex_max_min_of_two_as_torch():
    for f in (lambda m: m.max(m.ones(2, dtype=m.complex64), m.ones(2, dtype=m.complex64)),
              lambda m: m.min(m.ones(2, dtype=m.complex64), m.ones(2, dtype=m.complex64))):
        assert _outcome(lambda f=f: f(st)) == _outcome(lambda f=f: f(torch))


@pytest.mark.parametrize("decimals", ["a", 1.5, True])
def test_round_refuses_a_non_integer_decimals(decimals):
    with pytest.raises(TypeError, match=f"round\\(\\): argument 'decimals' must be int, not {type(decimals).__name__}"):
        st.round(st.tensor([1.25]), decimals=decimals)
    with pytest.raises(TypeError):  # torch refuses it too (in its argument parser's words)
        torch.round(torch.tensor([1.25]), decimals=decimals)


def _softmax_clamp_einsum_cases(m):
    F = m.nn.functional
    z = m.ones(2, 3, dtype=m.complex64)
    z3 = m.ones(2, 3, 4, dtype=m.complex64)
    b = m.tensor([True, False])
    x = m.ones(3)
    return {  # Note [Softmax refusals] in ops/complex_support.py
        "softmax dim 0": lambda: m.softmax(z, 0), "softmax last dim": lambda: m.softmax(z, -1),
        "softmax 0-dim": lambda: m.softmax(m.ones((), dtype=m.complex64), 0),
        "softmax to complex128": lambda: m.softmax(z, 1, dtype=m.complex128),
        "softmax to float32": lambda: m.softmax(z, 0, dtype=m.float32).tolist(),
        "log_softmax to float64": lambda: m.log_softmax(z, 1, dtype=m.float64).tolist(),
        "log_softmax last dim": lambda: m.log_softmax(z, 1), "softmin": lambda: F.softmin(z, 1),
        "cross_entropy 2-d": lambda: F.cross_entropy(z, m.zeros(2, dtype=m.int64)),
        "cross_entropy 3-d": lambda: F.cross_entropy(z3, m.zeros(2, 4, dtype=m.int64)),
        "clamp without bounds": lambda: m.clamp(x), "clamp bool tensor bounds": lambda: m.clamp(b, b, b),
        "clamp bool scalar bounds": lambda: m.clamp(b, False, True), "clamp_ bool": lambda: b.clone().clamp_(b, b),
        "clamp bool min only": lambda: m.clamp(b, min=b).tolist(), "clamp_min bool": lambda: m.clamp_min(b, 0).tolist(),
        "einsum no operand": lambda: m.einsum("i->i"), "einsum int equation": lambda: m.einsum(1, x),
        "einsum nothing": lambda: m.einsum(),
    }


@pytest.mark.parametrize("case", sorted(_softmax_clamp_einsum_cases(st)))
def test_softmax_clamp_einsum_words_as_torch(case):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the complex -> real casts warn in both
        got = _outcome(_softmax_clamp_einsum_cases(st)[case])
        want = _outcome(_softmax_clamp_einsum_cases(torch)[case])
    assert got == tuple(w.replace("torch.", "strided.") if isinstance(w, str) else w for w in want)


def _unsupported_dtype_cases(m):
    """Dtypes torch's OpInfos list as unsupported on the CPU, which strided computed (torch's samples for those dtypes,
    run through both)."""
    b = m.tensor([True, False, True])
    i = m.tensor([0, 1])
    h = m.ones(2, 3, dtype=m.bfloat16)
    return {
        "linspace bool": lambda: m.linspace(-3, 50, 5, dtype=m.bool),
        "logspace bool": lambda: m.logspace(0, 2, 3, dtype=m.bool),
        "arange complex": lambda: m.arange(2, 5, dtype=m.complex64),
        "arange complex128 step": lambda: m.arange(0, 2, 0.5, dtype=m.complex128),
        "index_reduce prod bool": lambda: b.index_reduce(0, i, b[:2], "prod"),
        "index_reduce amax bool exclude": lambda: b.index_reduce(0, i, b[:2], "amax", include_self=False),
        "scatter_reduce mean bool": lambda: m.zeros(3, dtype=m.bool).scatter_reduce(0, i, b[:2], "mean"),
        "scatter_reduce amax bool": lambda: m.zeros(3, dtype=m.bool).scatter_reduce(0, i, b[:2], "amax"),
        "cumsum dtype bool": lambda: m.cumsum(m.tensor([1, 2]), 0, dtype=m.bool),
        "cumprod dtype bool": lambda: m.cumprod(m.tensor([1.0, 2.0]), 0, dtype=m.bool),
        "cumsum 0-dim dtype bool": lambda: m.cumsum(m.tensor(True), 0, dtype=m.bool),
        "cdist p=1 bfloat16": lambda: m.cdist(h, m.ones(4, 3, dtype=m.bfloat16), p=1),
        "cdist matmul path half": lambda: m.cdist(h.half(), m.ones(4, 3, dtype=m.float16),
                                                  compute_mode="use_mm_for_euclid_dist"),
        "cdist empty half": lambda: m.cdist(m.ones(0, 3, dtype=m.float16), m.ones(4, 3, dtype=m.float16), p=1),
        "householder_product bfloat16": lambda: m.linalg.householder_product(m.ones(3, 2, dtype=m.bfloat16),
                                                                             m.ones(2, dtype=m.bfloat16)),
        "orgqr half": lambda: m.orgqr(m.ones(3, 2, dtype=m.float16), m.ones(2, dtype=m.float16)),
        "householder_product int64": lambda: m.linalg.householder_product(m.ones(3, 2, dtype=m.int64),
                                                                           m.ones(2, dtype=m.int64)),
    }


@pytest.mark.parametrize("case", sorted(_unsupported_dtype_cases(st)))
def test_unsupported_dtypes_refused_as_torch(case):
    assert _outcome(_unsupported_dtype_cases(st)[case]) == _outcome(_unsupported_dtype_cases(torch)[case])


@pytest.mark.parametrize("op", ["amin", "amax", "argmax", "logsumexp"])
def test_masked_reductions_of_bool_have_no_identity_as_torch(op):
    """torch.masked's identity table has no bool entry for the ordered reductions: NotImplementedError."""
    for m in (st, torch):
        with pytest.raises(NotImplementedError, match=f"identity of {op} on (strided|torch).bool input"):
            getattr(m.masked, op)(m.tensor([True, False]), 0, mask=m.tensor([True, True]))
