"""strided.cuda.jiterator on a GPU against torch.cuda.jiterator with the same code strings: values, dtypes, shapes and
strides over dtypes, layouts (broadcast, transposed, offset views, 0-dim, empty), mixed-dtype promotion, extra
arguments of every type, several outputs, the current stream; and the refusals."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("torch has no CUDA here", allow_module_level=True)

sj, tj = st.cuda.jiterator, torch.cuda.jiterator
AXPY = "template <typename T> T axpy(T x, T y, T alpha) { return -x + alpha * y; }"
MIX = "template <typename T> T mix(T x, T y) { return x * y + x; }"
RNG = np.random.default_rng(5)


def _pair(shape, dtype):
    """The same values on both libraries' GPUs (``dtype`` a name both know)."""
    if dtype == "bool":
        a = RNG.random(shape) > 0.5
    elif dtype.startswith(("int", "uint")):
        a = RNG.integers(0 if dtype == "uint8" else -20, 20, shape).astype(dtype)
    elif dtype.startswith("complex"):
        a = (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    else:
        a = RNG.standard_normal(shape).astype(np.float32)
    s, t = st.tensor(a), torch.tensor(a)
    if dtype in ("float16", "bfloat16"):
        s, t = s.to(getattr(st, dtype)), t.to(getattr(torch, dtype))
    return s.cuda(), t.cuda()


def _same(s, t, exact=False):
    assert str(s.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(s.shape) == tuple(t.shape) and s.stride() == t.stride()
    sv = s.cpu().float().numpy() if s.dtype in (st.float16, st.bfloat16) else s.cpu().numpy()
    tv = t.cpu().float().numpy() if t.dtype in (torch.float16, torch.bfloat16) else t.cpu().numpy()
    if exact:
        np.testing.assert_array_equal(sv, tv)
    else:
        np.testing.assert_allclose(sv, tv, rtol=1e-6, atol=1e-6, equal_nan=True)


DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "complex64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_values_match_torchs_jiterator(dtype):
    (a, ta), (b, tb) = _pair((37, 29), dtype), _pair((37, 29), dtype)
    alpha = 3 if dtype.startswith(("int", "uint")) else 0.75
    out = sj._create_jit_fn(AXPY, alpha=1.0 if alpha != 3 else 1)(a, b, alpha=alpha)
    want = tj._create_jit_fn(AXPY, alpha=1.0 if alpha != 3 else 1)(ta, tb, alpha=alpha)
    _same(out, want, exact=not dtype.startswith("complex"))


LAYOUTS = {
    "transposed": lambda x: x.t(),
    "broadcast row": lambda x: x[:1],
    "offset view": lambda x: x[1:, 3:],
    "step": lambda x: x[::2, ::3],
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_layouts_broadcasting_and_output_strides_match(layout):
    (a, ta), (b, tb) = _pair((40, 40), "float32"), _pair((40, 40), "float32")
    fn, tfn = sj._create_jit_fn(MIX), tj._create_jit_fn(MIX)
    f = LAYOUTS[layout]
    other = (lambda x: x) if layout in ("transposed", "broadcast row") else f
    _same(fn(f(a), other(b)), tfn(f(ta), other(tb)))
    _same(fn(other(b), f(a)), tfn(other(tb), f(ta)))  # the first input's layout picks the output's


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "uint8", "float64"])
@pytest.mark.parametrize("offset", [0, 1, 8])
def test_dense_inputs_aligned_or_not(dtype, offset):
    """Aligned dense operands take the vector kernel, misaligned ones the element kernel; both with a tail."""
    (a, ta), (b, tb) = _pair((4099,), dtype), _pair((4099,), dtype)
    fn, tfn = sj._create_jit_fn(MIX), tj._create_jit_fn(MIX)
    _same(fn(a[offset:], b[offset:]), tfn(ta[offset:], tb[offset:]), exact=True)


def test_zero_dim_empty_and_three_dim_inputs():
    fn, tfn = sj._create_jit_fn(MIX), tj._create_jit_fn(MIX)
    (a, ta), (b, tb) = _pair((), "float32"), _pair((3, 4, 5), "float32")
    _same(fn(a, b), tfn(ta, tb))
    _same(fn(a, a), tfn(ta, ta))
    (e, te) = _pair((0, 5), "float32")
    _same(fn(e, e), tfn(te, te))
    (c, tc) = _pair((3, 1, 5), "float32")
    _same(fn(c, b.permute(0, 2, 1).permute(0, 2, 1)), tfn(tc, tb))


@pytest.mark.parametrize("x,y", [("float16", "int32"), ("float32", "float64"), ("int32", "uint8"), ("bool", "int64"),
                                 ("bfloat16", "float16"), ("complex64", "float64")])
def test_mixed_dtypes_promote_as_torch(x, y):
    (a, ta), (b, tb) = _pair((16, 9), x), _pair((16, 9), y)
    fn, tfn = sj._create_jit_fn(MIX), tj._create_jit_fn(MIX)
    _same(fn(a, b), tfn(ta, tb))
    _same(fn(b, a), tfn(tb, ta))


def test_a_zero_dim_tensor_does_not_promote_a_dimensioned_one():
    (a, ta), (b, tb) = _pair((8,), "float16"), _pair((), "float64")
    fn, tfn = sj._create_jit_fn(MIX), tj._create_jit_fn(MIX)
    _same(fn(a, b), tfn(ta, tb))


EXTRAS = ("template <typename T> T ex(T x, T y, T a, bool flip, int64_t shift, double scale) {"
          " T r = flip ? y - x : x * a; return r + T(shift) * T(scale); }")


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_extra_arguments_of_every_type_and_call_overrides(dtype):
    (a, ta), (b, tb) = _pair((64,), dtype), _pair((64,), dtype)
    kw = dict(a=2.0, flip=False, shift=3, scale=0.5)
    fn, tfn = sj._create_jit_fn(EXTRAS, **kw), tj._create_jit_fn(EXTRAS, **kw)
    _same(fn(a, b), tfn(ta, tb), exact=True)
    _same(fn(a, b, flip=True, shift=-7), tfn(ta, tb, flip=True, shift=-7), exact=True)


def test_a_complex_extra_argument():
    code = "template <typename T> T rot(T x, T z) { return x * z; }"
    (a, ta) = _pair((33,), "complex128")
    _same(sj._create_jit_fn(code, z=1j)(a, z=2 - 1j), tj._create_jit_fn(code, z=1j)(ta, z=2 - 1j))


SPLIT = ("template <typename T> void split(T x, T y, T scale, T& lo, T& hi, T& both) {"
         " lo = x * scale; hi = y - x; both = lo + hi; }")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_several_outputs_by_reference(dtype):
    (a, ta), (b, tb) = _pair((9, 7), dtype), _pair((7,), dtype)
    outs = sj._create_multi_output_jit_fn(SPLIT, 3, scale=0.5)(a.t().contiguous().t(), b)
    wants = tj._create_multi_output_jit_fn(SPLIT, 3, scale=0.5)(ta.t().contiguous().t(), tb)
    assert isinstance(outs, tuple) and len(outs) == 3
    for o, w in zip(outs, wants):
        _same(o, w, exact=True)
    one = "template <typename T> void one(T x, T& o) { o = x + T(1); }"
    got, want = sj._create_multi_output_jit_fn(one, 1)(a), tj._create_multi_output_jit_fn(one, 1)(ta)
    assert isinstance(got, st.Tensor) == isinstance(want, torch.Tensor)
    _same(got, want, exact=True)


def test_eight_inputs_and_helper_functions():
    code = ("template <typename T> T sq(T v) { return v * v; }\n"
            "template <typename T> T eight(T a, T b, T c, T d, T e, T f, T g, T h) {"
            " return sq(a) + b * c - d / (::fabs(e) + T(1)) + ::max(f, g) * h; }")
    pairs = [_pair((5, 6), "float32") for _ in range(8)]
    _same(sj._create_jit_fn(code)(*(p[0] for p in pairs)), tj._create_jit_fn(code)(*(p[1] for p in pairs)))


def test_runs_on_the_current_stream():
    fn = sj._create_jit_fn(MIX)
    a = st.ones(1 << 20, device="cuda")
    s = cuda.Stream()
    s.wait_stream(cuda.current_stream())
    with cuda.stream(s):
        out = fn(a, a)
        done = cuda.Event()
        done.record()
    done.synchronize()
    assert out.sum().item() == 2 * (1 << 20)


def test_outputs_do_not_record_autograd_history():
    a = st.ones(4, device="cuda", requires_grad=True)
    out = sj._create_jit_fn(MIX)(a, a)
    assert out.grad_fn is None and not out.requires_grad


def test_refusals():
    fn = sj._create_jit_fn(AXPY, alpha=1.0)
    g, c = st.ones(3, device="cuda"), st.ones(3)
    with pytest.raises(RuntimeError, match="argument 0: expected a CUDA device but found cpu"):
        fn(c, c)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least two"):
        fn(g, c)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        fn(g, st.ones(()))  # no CPU scalars, as torch's
    with pytest.raises(KeyError, match="beta is not declared in function definition"):
        fn(g, g, beta=2.0)
    with pytest.raises(AssertionError, match="jiterator only supports up to 8 tensor inputs, got 9"):
        fn(*([g] * 9))
    with pytest.raises(TypeError, match="input 1 must be a Tensor, got float"):
        fn(g, 2.0)
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        fn(g, st.ones(4, device="cuda"))
    bad = sj._create_jit_fn("template <typename T> T bad(T x) { return no_such_function(x); }")
    from strided.backends.cuda.compiler import CompileError

    with pytest.raises(CompileError, match=r"jiterator function 'bad'(.|\n)*no_such_function"):
        bad(g)


def test_a_jiterator_function_as_gelus_cuda_kernel_as_torchs_documented_example():
    """torch.cuda.jiterator's docstring: ``Library("aten", "IMPL").impl("gelu", jitted, "CUDA")`` overrides
    F.gelu / nn.GELU on CUDA (Note [Python kernel arguments]: they call it without gelu's default ``approximate``);
    the node stays GeluBackward0 with gelu's own backward, in both libraries."""
    code = "template <typename T> T my_gelu(T a) { return a > 0 ? a : 0; }"
    (x, tx) = _pair((5, 7), "float32")
    x.requires_grad_(True)
    tx.requires_grad_(True)
    slib, tlib = st.library.Library("aten", "IMPL"), torch.library.Library("aten", "IMPL")
    try:
        slib.impl("gelu", sj._create_jit_fn(code), "CUDA")
        tlib.impl("gelu", tj._create_jit_fn(code), "CUDA")
        y, ty = st.nn.GELU()(x), torch.nn.GELU()(tx)
        _same(y.detach(), ty.detach(), exact=True)
        np.testing.assert_array_equal(y.detach().cpu().numpy(), np.maximum(x.detach().cpu().numpy(), 0))
        assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__ == "GeluBackward0"
        y.sum().backward()
        ty.sum().backward()
        _same(x.grad, tx.grad)
    finally:
        slib._destroy()
        tlib._destroy()
    _same(st.nn.functional.gelu(x.detach()), torch.nn.functional.gelu(tx.detach()))  # gelu's own kernel again
