"""torch's aliases take what their targets take (complex tensors included), and the dtype refusals raise torch's
exception types and words: bool negation, relu and subtraction (NotImplementedError, as torch's
TORCH_CHECK_NOT_IMPLEMENTED), bool median / nanmedian / kthvalue / trace, rsub's Scalar cast as torch's wrapped number.
Each case runs in torch and in strided on the CPU.
Convolutions check their operands' dtypes and pooling its padding in torch's words.
"""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

_Z = [1 + 2j, -0.5 + 0.25j, 3 - 1j]

ALIASES = {
    "absolute": lambda m, z: m.absolute(z),
    "negative": lambda m, z: m.negative(z), "negative_": lambda m, z: z.clone().negative_(),
    "positive": lambda m, z: m.positive(z), "arccos": lambda m, z: m.arccos(z),
    "arcsin_": lambda m, z: z.clone().arcsin_(),
    "arctan": lambda m, z: m.arctan(z), "arcsinh": lambda m, z: m.arcsinh(z), "arccosh": lambda m, z: m.arccosh(z),
    "arctanh_": lambda m, z: z.clone().arctanh_(), "multiply": lambda m, z: m.multiply(z, 2j),
    "multiply_": lambda m, z: z.clone().multiply_(z), "divide": lambda m, z: m.divide(z, 1 - 1j),
    "divide_": lambda m, z: z.clone().divide_(z + 1), "subtract": lambda m, z: m.subtract(z, z * 2, alpha=1j),
    "subtract_": lambda m, z: z.clone().subtract_(1j), "rsub": lambda m, z: m.rsub(z, 2 + 1j),
    "true_divide_": lambda m, z: z.clone().true_divide_(2),
    "not_equal": lambda m, z: m.not_equal(z, z.conj()), "not_equal_": lambda m, z: z.clone().not_equal_(z),
    "arctan2 real parts": lambda m, z: m.arctan2(z.real, z.imag),
    # the *_scatter ops: src written into a clone through a view
    "select_scatter": lambda m, z: m.select_scatter(z.reshape(3, 1).expand(3, 2).contiguous(), z * 1j, 1, 0),
    "slice_scatter": lambda m, z: m.slice_scatter(z, z[:2] * 2, 0, 1, 3),
    "diagonal_scatter": lambda m, z: m.diagonal_scatter(m.outer(z, z), z.conj(), 0),
    "as_strided_scatter": lambda m, z: m.as_strided_scatter(m.outer(z, z), z[:2], (2,), (4,), 1),
    "ldexp_": lambda m, z: z.clone().ldexp_(m.tensor([1, -2, 3])),
    "ldexp complex exponent": lambda m, z: m.ldexp(z, z.conj()),  # 2 ** (a + bi): the imaginary part was dropped
    "ldexp real, complex exponent": lambda m, z: m.ldexp(z.real, z),
    "reshape_as": lambda m, z: z.reshape_as(m.zeros(3, 1)),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", list(ALIASES))
def test_aliases_take_complex_tensors_as_torch(name, dtype):
    got = ALIASES[name](st, st.tensor(_Z, dtype=getattr(st, dtype)))
    want = ALIASES[name](torch, torch.tensor(_Z, dtype=getattr(torch, dtype))).resolve_conj().resolve_neg()
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-5)


REFUSALS = {
    "-bool": lambda m: -m.tensor([True, False]),
    "neg bool": lambda m: m.neg(m.tensor([True])),
    "relu bool": lambda m: m.relu(m.tensor([True])),
    "bool - bool": lambda m: m.tensor([True]) - m.tensor([False]),
    "int - True": lambda m: m.tensor([1, 2]) - True,
    "True - int": lambda m: True - m.tensor([1, 2]),
    "rsub True": lambda m: m.rsub(m.tensor([1, 2]), True),
    "median bool": lambda m: m.tensor([True, False, True]).median(),
    "median dim bool": lambda m: m.tensor([True, False, True]).median(0),
    "nanmedian bool": lambda m: m.tensor([True, False]).nanmedian(),
    "kthvalue bool": lambda m: m.tensor([True, False]).kthvalue(1),
    "trace bool": lambda m: m.tensor([[True, False], [False, True]]).trace(),
    "trace bool vector": lambda m: m.trace(m.tensor([True])),
    # a float target of another shape than the input is read as class indices: the dims are checked first
    "cross_entropy float target of another shape": lambda m: m.nn.functional.cross_entropy(m.ones(4, 5),
                                                                                          m.ones(4, 3)),
    "nll_loss int32 target": lambda m: m.nn.functional.nll_loss(m.ones(4, 5), m.ones(4, dtype=m.int32)),
    # convolutions check their operands' dtypes (the GEMM below would promote float and double silently)
    "conv1d double bias": lambda m: m.nn.functional.conv1d(m.ones(1, 3, 8), m.ones(4, 3, 3), m.ones(4).double()),
    "conv2d half bias": lambda m: m.nn.functional.conv2d(m.ones(1, 3, 5, 5).half(), m.ones(4, 3, 3, 3).half(),
                                                         m.ones(4)),
    "conv2d double weight": lambda m: m.nn.functional.conv2d(m.ones(1, 3, 5, 5), m.ones(4, 3, 3, 3).double()),
    "conv3d double weight": lambda m: m.nn.functional.conv3d(m.ones(1, 1, 4, 4, 4), m.ones(1, 1, 2, 2, 2).double()),
    "conv_transpose2d double weight": lambda m: m.nn.functional.conv_transpose2d(m.ones(1, 3, 4, 4),
                                                                                 m.ones(3, 2, 2, 2).double()),
    "conv2d same with stride": lambda m: m.nn.functional.conv2d(m.ones(1, 3, 5, 5), m.ones(4, 3, 3, 3), stride=2,
                                                                padding="same"),
    # view(dtype): torch's layout checks, in its order
    "view dtype size": lambda m: m.ones(3, 3)[:, :1].view(m.float64),
    "view dtype stride": lambda m: m.ones(3, 4)[:, ::2].view(m.float64),
    "view dtype offset": lambda m: m.ones(5)[1:].view(m.float64),
    "view dtype 0-dim": lambda m: m.tensor(1.0).view(m.float64),
    "view dtype transposed": lambda m: m.ones(4, 4).t().view(m.float16),
    "view dtype row stride": lambda m: m.ones(3, 5)[:, :4].view(m.float64),
    "max_pool1d pad": lambda m: m.nn.functional.max_pool1d(m.ones(1, 1, 4), 2, padding=2),
    "max_pool2d pad": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 4, 4), 2, padding=2),
    "avg_pool1d pad": lambda m: m.nn.functional.avg_pool1d(m.ones(1, 1, 4), 2, padding=2),
    "avg_pool3d pad": lambda m: m.nn.functional.avg_pool3d(m.ones(1, 1, 4, 4, 4), 2, padding=2),
    # operands of two dtypes: no promotion (mv's message names its result, made with vec's dtype, first)
    "linalg.cross float bfloat16": lambda m: m.linalg.cross(m.ones(4, 3), m.ones(4, 3).bfloat16()),
    "cross float double": lambda m: m.cross(m.ones(4, 3), m.ones(4, 3).double(), dim=1),
    "linalg.cross float long": lambda m: m.linalg.cross(m.ones(4, 3), m.ones(4, 3, dtype=m.int64)),
    "tensordot float bfloat16": lambda m: m.tensordot(m.ones(4, 3), m.ones(4, 3).bfloat16(), dims=([1], [1])),
    "mv float bfloat16": lambda m: m.mv(m.ones(3, 4), m.ones(4).bfloat16()),
    # complex: an alias refuses in its op's words; special functions without complex kernels never drop the
    # imaginary part (they did: xlogy / xlog1py computed on the real parts, ndtri and log_ndtr on garbage)
    "greater_equal complex": lambda m: m.greater_equal(m.tensor([1j]), m.tensor([2j])),
    "less complex": lambda m: m.tensor([1j]).less(1),
    "special.ndtri complex": lambda m: m.special.ndtri(m.tensor([0.5 + 0.1j])),
    "special.log_ndtr complex": lambda m: m.special.log_ndtr(m.tensor([0.5 + 0.1j])),
    "special.erfcx complex": lambda m: m.special.erfcx(m.tensor([0.5 + 0.1j])),
    "special.xlogy complex": lambda m: m.special.xlogy(m.tensor([0.5 + 0.1j]), m.tensor([2.0])),
    "special.xlogy number, complex": lambda m: m.special.xlogy(2, m.tensor([0.5 + 0.1j])),
    "special.xlog1py complex": lambda m: m.special.xlog1py(m.tensor([1.0]), m.tensor([0.5 + 0.1j], dtype=m.complex128)),
    # dtypes torch's kernels do not take (a dtype sweep of every torch function against torch found them computed)
    "isin bool": lambda m: m.isin(m.tensor([True]), m.tensor([True, False])),
    "isin bool scalar": lambda m: m.isin(True, m.tensor([True])),
    "linalg.vander half": lambda m: m.linalg.vander(m.tensor([1.0, 2.0], dtype=m.float16)),
    "linalg.vecdot long": lambda m: m.linalg.vecdot(m.tensor([1, 2]), m.tensor([1, 2])),
    "linalg.vecdot float double": lambda m: m.linalg.vecdot(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)),
    "special.modified_bessel_i0 half": lambda m: m.special.modified_bessel_i0(m.tensor([1.0], dtype=m.float16)),
    "special.modified_bessel_i1 bfloat16": lambda m: m.special.modified_bessel_i1(m.tensor([1.0], dtype=m.bfloat16)),
    "special.spherical_bessel_j0 half": lambda m: m.special.spherical_bessel_j0(m.tensor([1.0], dtype=m.float16)),
    # a tensor where a Scalar / float is taken: only a 0-dim one without grad stands for a number (Note [Tensors as
    # Scalars]); these computed elementwise with the tensor
    "elu alpha tensor": lambda m: m.nn.functional.elu(m.ones(2, 2), m.ones(2, 2)),
    "elu alpha requiring grad": lambda m: m.nn.functional.elu(m.ones(2), m.tensor(1.0, requires_grad=True)),
    "hardshrink lambd tensor": lambda m: m.nn.functional.hardshrink(m.ones(2, 2), m.ones(2, 2)),
    "softplus beta tensor": lambda m: m.nn.functional.softplus(m.ones(2, 2), m.ones(2, 2)),
    "leaky_relu slope tensor": lambda m: m.nn.functional.leaky_relu(m.ones(2, 2), m.ones(2, 2)),
    "logit eps tensor": lambda m: m.logit(m.ones(2, 2), m.ones(2, 2)),
    "nan_to_num_ nan tensor": lambda m: m.nan_to_num_(m.ones(2, 2), m.ones(2, 2)),
    "pinverse rcond tensor": lambda m: m.pinverse(m.ones(2, 2), m.ones(2, 2)),
    "pinverse rcond str": lambda m: m.pinverse(m.ones(2, 2), "a"),
    # a Tensor-method sweep against torch: arguments torch's bindings require, half-type linear algebra
    "expand no size": lambda m: m.ones(2, 2).expand(),
    "permute no dims": lambda m: m.ones(2, 2).permute(),
    "reshape no shape": lambda m: m.ones(2, 2).reshape(),
    "repeat no repeats": lambda m: m.ones(2, 2).repeat(),
    "flip no dims": lambda m: m.ones(2, 2).flip(),
    "tile no dims": lambda m: m.ones(2, 2).tile(),
    "new_ones no size": lambda m: m.ones(2, 2).new_ones(),
    "new_zeros no size": lambda m: m.ones(2, 2).new_zeros(),
    "resize_ no size": lambda m: m.ones(2, 2).resize_(),
    "sum_to_size no size": lambda m: m.ones(2, 2).sum_to_size(),
    "inverse half": lambda m: m.inverse(m.eye(2, dtype=m.float16)),
    "linalg.inv_ex bfloat16": lambda m: m.linalg.inv_ex(m.eye(2, dtype=m.bfloat16)),
    "slogdet half": lambda m: m.slogdet(m.eye(2, dtype=m.float16)),
    "logdet bfloat16": lambda m: m.logdet(m.eye(2, dtype=m.bfloat16)),
    "linalg.pinv vector": lambda m: m.linalg.pinv(m.ones(3)),
    "pinverse half": lambda m: m.pinverse(m.ones(2, 2, dtype=m.float16)),
    "quantile complex": lambda m: m.quantile(m.tensor([1j, 2j]), 0.3),
    "nanquantile complex": lambda m: m.nanquantile(m.tensor([1j, 2j]), m.tensor([0.3])),
}


def test_the_complex_alias_list_is_the_alias_table():
    from strided.ops.complex_support import _ALIAS_TARGETS
    from strided.ops.composite import aliases_more

    assert _ALIAS_TARGETS == set(aliases_more._UNARY) | set(aliases_more._BINARY)


@pytest.mark.parametrize("name", list(REFUSALS))
def test_refusals_raise_torchs_type_and_words(name):
    with pytest.raises(Exception) as want:
        REFUSALS[name](torch)
    with pytest.raises(Exception) as got:
        REFUSALS[name](st)
    assert got.type is want.type and str(got.value).splitlines()[0] == str(want.value).splitlines()[0]


_AUTOCAST_CONVS = {
    "conv2d": lambda m, x, w, b: m.nn.functional.conv2d(x, w, b),
    "conv2d bf16 input": lambda m, x, w, b: m.nn.functional.conv2d(x.to(m.bfloat16), w, b),
    "conv2d float64": lambda m, x, w, b: m.nn.functional.conv2d(x.double(), w.double()),
    "conv1d": lambda m, x, w, b: m.nn.functional.conv1d(x[:, :, 0], w[:, :, 0], b),
    "conv3d": lambda m, x, w, b: m.nn.functional.conv3d(x[:, :, None], w[:, :, None]),
    "conv_transpose2d": lambda m, x, w, b: m.nn.functional.conv_transpose2d(x, w.transpose(0, 1).contiguous()),
}


@pytest.mark.parametrize("name", list(_AUTOCAST_CONVS))
def test_convolutions_under_autocast_as_torch(name):
    """Convolutions are on autocast's lower-precision list: float32 and half operands run (and return) in the
    autocast dtype, float64 stays; the dtype check then sees one dtype."""
    rng = np.random.default_rng(5)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((1, 3, 6, 6), (4, 3, 3, 3), (4,)))
    with st.autocast("cpu", dtype=st.bfloat16):
        got = _AUTOCAST_CONVS[name](st, *(st.from_numpy(a) for a in (x, w, b)))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = _AUTOCAST_CONVS[name](torch, *(torch.from_numpy(a) for a in (x, w, b)))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(got.float()), want.float().numpy(), rtol=0.05, atol=0.1)


def test_view_dtype_reads_the_same_bytes_as_torch():
    """Tensor.view(dtype): the same bytes as another dtype (the last dim scales with the element size), an alias of
    the input, never differentiable."""
    rng = np.random.default_rng(9)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    for target in ("int32", "uint8", "float16", "float64", "complex64", "int16"):
        for make in (lambda m: m.from_numpy(a.copy()), lambda m: m.from_numpy(a.copy())[::2]):
            got, want = make(st).view(getattr(st, target)), make(torch).view(getattr(torch, target))
            assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
            np.testing.assert_array_equal(np.asarray(got).view(np.uint8), want.numpy().view(np.uint8))
    x = st.from_numpy(a.copy()).requires_grad_()
    y = x.view(st.int32)
    assert not y.requires_grad and not x.view(st.float32).requires_grad and y._base is x
    with pytest.raises(TypeError, match="view\\(\\): argument 'dtype' must be strided.dtype, not int"):
        x.view(dtype=5)


def test_rsub_scalar_is_cast_as_torchs_wrapped_number():
    """torch.rsub(int8, 300) computes 44 - x (the number cast into the result type), not an overflow error."""
    for lib in (st, torch):
        assert lib.rsub(lib.tensor([1, 2, 3], dtype=lib.int8), 300).tolist() == [43, 42, 41]
        assert lib.rsub(lib.tensor([1, 2], dtype=lib.int8), 2.5).tolist() == [1.5, 0.5]


def test_vecdot_conjugates_x_and_cumulative_trapezoid_keeps_torchs_integer_order():
    x, y = [1 + 2j, 3j, -1 - 1j], [1 - 1j, 2 + 0j, 0.5j]
    got = st.linalg.vecdot(st.tensor(x), st.tensor(y))
    want = torch.linalg.vecdot(torch.tensor(x), torch.tensor(y))
    assert complex(got.item()) == complex(want.item())  # sum(conj(x) * y): it was sum(x * y)
    yv, xv = [[1, 3, 200], [250, 7, 9]], [[1, 2, 4], [0, 3, 9]]
    for d in ("uint8", "int64", "float32"):  # torch adds and multiplies in the operands' dtype, halves last
        got = st.cumulative_trapezoid(st.tensor(yv, dtype=getattr(st, d)), st.tensor(xv, dtype=getattr(st, d)))
        want = torch.cumulative_trapezoid(torch.tensor(yv, dtype=getattr(torch, d)),
                                          torch.tensor(xv, dtype=getattr(torch, d)))
        assert got.tolist() == want.tolist(), d


def test_zero_dim_tensors_stand_for_numbers_as_in_torch():
    for call in (lambda m: m.nn.functional.elu(m.tensor([-1.0, 2.0]), m.tensor(2.0)),
                 lambda m: m.logit(m.tensor([0.05, 0.5]), m.tensor(0.1)),
                 lambda m: m.nan_to_num(m.tensor([float("nan"), 1.0]), m.tensor(3.0)),
                 lambda m: m.clamp_min(m.tensor([1.0, -2.0]), m.tensor([0.0, 0.0])),  # clamp_min.Tensor
                 lambda m: m.clip_(m.tensor([0.1, 1.0, 3.0]), m.tensor(0.5), m.full((3,), 2.0)),  # clip_.Tensor
                 lambda m: m.tensor([0.1, 3.0]).clip_(m.zeros(2), m.ones(2)),
                 lambda m: m.tensor([0.1, 3.0]).clip_(0.5, 2.0)):
        assert call(st).tolist() == call(torch).tolist()


def test_complex_expand_refusal_and_keyword_only_memory_format():
    with pytest.raises(RuntimeError, match=r"expand\(strided.ComplexFloatTensor\{\[2, 2\]\}, size=\[3\]\): the number"):
        st.ones(2, 2, dtype=st.complex64).expand(3)  # was a KeyError: the type-name table had no complex dtypes
    with pytest.raises(TypeError):  # torch's is_contiguous takes memory_format by keyword only
        st.ones(2, 2).is_contiguous("channels_last")
    assert st.ones(1, 2, 3, 4).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).is_contiguous(
        memory_format=st.channels_last)


MIXED_DTYPES = {  # a sweep of every two-tensor torch function over mixed dtypes found these differing from torch
    "block_diag 0-dim bfloat16 + half": lambda m: m.block_diag(m.tensor(1.0, dtype=m.bfloat16),
                                                               m.ones(2, 2, dtype=m.float16)),
    "block_diag 0-dim int8 + uint8": lambda m: m.block_diag(m.tensor(1, dtype=m.int8), m.ones(2, 2, dtype=m.uint8)),
    "ldexp 0-dim bfloat16, half": lambda m: m.ldexp(m.tensor(1.0, dtype=m.bfloat16), m.ones(2, dtype=m.float16)),
    "l1_loss 0-dim half, float": lambda m: m.nn.functional.l1_loss(m.tensor(0.5, dtype=m.float16), m.ones(3)),
    "l1_loss 0-dim double, float": lambda m: m.nn.functional.l1_loss(m.tensor(0.5, dtype=m.float64), m.ones(3)),
    "mse_loss bool, float": lambda m: m.nn.functional.mse_loss(m.tensor([True, False]), m.tensor([0.5, 1.0])),
    "smooth_l1_loss float, bool": lambda m: m.nn.functional.smooth_l1_loss(m.tensor([0.5, 1.0]),
                                                                           m.tensor([True, False])),
    "smooth_l1_loss 0-dim bfloat16, half": lambda m: m.nn.functional.smooth_l1_loss(
        m.tensor(0.5, dtype=m.bfloat16), m.tensor([0.5, 1.5], dtype=m.float16)),
    "huber_loss half, float": lambda m: m.nn.functional.huber_loss(m.tensor([0.5, 1.5], dtype=m.float16),
                                                                   m.tensor([0.5, 1.0])),
    "bce_with_logits double, float": lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        m.tensor([0.5, -1.0], dtype=m.float64), m.tensor([1.0, 0.0])),
    "bce_with_logits float, half": lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        m.tensor([0.5, -1.0]), m.tensor([1.0, 0.0], dtype=m.float16), reduction="none"),
    "cumsum 0-dim int dim": lambda m: m.cumsum(m.ones(2, 3), m.tensor(1)),
    "amax 0-dim int dim": lambda m: m.amax(m.ones(2, 3), m.tensor(1)),
}


@pytest.mark.parametrize("name", list(MIXED_DTYPES))
def test_mixed_dtypes_give_torchs_dtype_and_values(name):
    got, want = MIXED_DTYPES[name](st), MIXED_DTYPES[name](torch)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(got.to(st.float64)), want.double().numpy(), rtol=1e-3)


@pytest.mark.parametrize("name", ["mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy_with_logits"])
def test_loss_dtype_refusals_as_torch(name):
    for a, b in (("b", "b"), ("i", "i"), ("i", "f"), ("b", "i"), ("f", "i")):
        def call(m, a=a, b=b):
            values = {"b": m.tensor([True, False]), "i": m.tensor([1, 2]), "f": m.tensor([0.5, 1.0])}
            return getattr(m.nn.functional, name)(values[a], values[b])

        try:
            want = call(torch)
        except Exception as e:  # noqa: BLE001 - compared with strided's
            with pytest.raises(type(e)) as got:
                call(st)
            assert str(got.value).splitlines()[0][:60] == str(e).splitlines()[0][:60], (a, b)
        else:
            got = call(st)
            assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (a, b)
