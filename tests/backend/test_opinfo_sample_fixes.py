"""Differences from torch found by running torch's own OpInfo sample inputs (common_methods_invocations.op_db)
through strided: each case pins torch 2.14's answer (values written out, so the test needs no torch).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st

L = st.int64


def _ones(*shape, dtype=L):
    return st.ones(*shape, dtype=dtype)


# -- the GEMM family's beta / alpha: a float factor of an integer product truncates (torch's Scalar.to<T>) ----
@pytest.mark.parametrize("name, args", [
    ("addmv", lambda: (_ones(2), _ones(2, 2), _ones(2))),
    ("addbmm", lambda: (_ones(2, 2), _ones(1, 2, 2), _ones(1, 2, 2))),
    ("addmm", lambda: (_ones(2, 2), _ones(2, 2), _ones(2, 2))),
])
@pytest.mark.parametrize("kwargs, value", [({"beta": 2.5}, 4), ({"alpha": 1.5}, 3), ({"beta": 2.5, "alpha": 1.5}, 4),
                                           ({"beta": True}, 3), ({"beta": 0.2, "alpha": 0.6}, 0)])
def test_integer_gemm_factors_truncate(name, args, kwargs, value):
    out = getattr(st, name)(*args(), **kwargs)
    assert out.dtype is L
    assert (out == value).all().item()


@pytest.mark.parametrize("name, args", [
    ("addmv", lambda: (_ones(2), _ones(2, 2), _ones(2))),
    ("addbmm", lambda: (_ones(2, 2), _ones(1, 2, 2), _ones(1, 2, 2))),
])
def test_complex_factor_of_a_real_product_overflows(name, args):
    with pytest.raises(RuntimeError, match="value cannot be converted to type int64_t without overflow"):
        getattr(st, name)(*args(), alpha=1 + 1j)
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        st.addmv(st.ones(2), st.ones(2, 2), st.ones(2), beta=1 + 1j)
    assert st.addmv(st.ones(2), st.ones(2, 2), st.ones(2), beta=1 + 0j).tolist() == [3.0, 3.0]


@pytest.mark.parametrize("kwargs, words", [
    ({"beta": 2.5}, "For integral input tensors, argument beta must not be a floating point number."),
    ({"alpha": 1.5}, "For integral input tensors, argument alpha must not be a floating point number."),
    ({"beta": True}, "Boolean beta only supported for Boolean results."),
    ({"alpha": 1 + 1j}, "For integral input tensors, argument alpha must not be a floating point number."),
])
def test_addr_scalar_checks(kwargs, words):
    with pytest.raises(RuntimeError, match=words):
        st.addr(_ones(2, 2), _ones(2), _ones(2), **kwargs)


def test_addr_bool_is_logical_and_mixed_dtypes_promote():
    s, v1, v2 = st.tensor([[True, False]]), st.tensor([True, False]), st.tensor([False, True])
    assert st.addr(s, v1, v2, beta=0, alpha=5).tolist() == [[False, True], [False, False]]
    assert st.addr(s, v1, v2, beta=1, alpha=0).tolist() == [[True, False], [True, False]]
    assert st.addr(_ones(2, 2, dtype=st.bool), _ones(2, dtype=st.bool), _ones(2, dtype=st.bool), beta=3,
                   alpha=2).dtype is st.bool
    assert st.addr(st.tensor([[1, 2]]), st.tensor([2]), st.tensor([1, 3]), beta=2, alpha=3).tolist() == [[8, 22]]
    with pytest.raises(RuntimeError, match="Boolean beta only supported for Boolean results."):
        st.addr(st.ones(2, 2), st.ones(2), st.ones(2), beta=True)
    mixed = st.addr(st.ones(2, 2), st.ones(2, dtype=L), st.ones(2))
    assert mixed.dtype is st.float32 and mixed.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_addmv_bool_and_addbmm_checks():
    with pytest.raises(NotImplementedError, match="\"addmv_impl_cpu\" not implemented for 'Bool'"):
        st.addmv(_ones(2, dtype=st.bool), _ones(2, 2, dtype=st.bool), _ones(2, dtype=st.bool))
    with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype, but got Float and Long"):
        st.addbmm(st.ones(2, 2), _ones(1, 2, 2), _ones(1, 2, 2))
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype, but got Float and Long"):
        st.addbmm(_ones(2, 2), st.ones(1, 2, 2), _ones(1, 2, 2))
    empty_rows = st.addbmm(st.ones(0, 10), st.ones(5, 0, 5), st.ones(5, 5, 10))  # -1 in a reshape was ambiguous
    assert tuple(empty_rows.shape) == (0, 10)


# -- logit with crossed bounds and a negative eps ---------------------------------------------------------------
def test_logit_eps_past_one_half_and_negative():
    out = st.logit(st.tensor([0.1, 0.5, 0.7, math.nan]), eps=0.6).tolist()
    np.testing.assert_allclose(out[:3], [0.4054651, 0.4054651, -0.4054651], rtol=1e-6)
    assert math.isnan(out[3])
    x = st.tensor([-0.5, 0.3, 1.5], requires_grad=True)
    st.logit(x, eps=-0.1).backward(st.ones(3))  # a negative eps does not clamp: NaN outside [0, 1]
    g = x.grad.tolist()
    assert math.isnan(g[0]) and math.isnan(g[2]) and g[1] == pytest.approx(4.7619047)


# -- circular padding crops first, then wraps ---------------------------------------------------------------------
@pytest.mark.parametrize("pad, expected", [
    ((-2, 1), [[[2.0, 3.0, 4.0, 2.0]]]),
    ((2, -3), [[[0.0, 1.0, 0.0, 1.0]]]),
])
def test_circular_pad_with_a_negative_side(pad, expected):
    assert st.nn.functional.pad(st.arange(5.0).reshape(1, 1, 5), pad, mode="circular").tolist() == expected


def test_circular_pad_two_dims_and_empty_result():
    x = st.arange(12.0).reshape(1, 1, 3, 4)
    out = st.nn.functional.pad(x, (-1, 1, 1, -1), mode="circular")
    assert out.tolist() == [[[[5.0, 6.0, 7.0, 5.0], [1.0, 2.0, 3.0, 1.0], [5.0, 6.0, 7.0, 5.0]]]]
    assert tuple(st.nn.functional.pad(x, (-2, -2, 0, 0), mode="circular").shape) == (1, 1, 3, 0)
    with pytest.raises(RuntimeError, match="^Negative padding value is resulting in an empty dimension$"):
        st.nn.functional.pad(x, (-3, -2, 0, 0), mode="circular")


# -- factories, shapes, small ops ------------------------------------------------------------------------------
def test_complex_logspace_is_not_rounded():
    out = st.logspace(-3, 2, 2, dtype=st.complex64)
    np.testing.assert_allclose(out.numpy(), [1e-3, 100.0], rtol=1e-6)
    np.testing.assert_allclose(st.logspace(0, 1, 3, dtype=st.complex128).numpy(), [1, 10 ** 0.5, 10], rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda x: st.quantile(x, 0.5, dim=0, keepdim=True), lambda x: st.nanquantile(x, 0.5, dim=-1, keepdim=True),
    lambda x: st.linalg.vector_norm(x, 6, dim=0, keepdim=True), lambda x: st.norm(x, dim=0, keepdim=True),
    lambda x: st.linalg.vector_norm(x, keepdim=True),
])
def test_zero_dim_input_keeps_no_dim(fn):
    assert tuple(fn(st.tensor(1.5)).shape) == ()


def test_masked_select_of_zero_dim_operands():
    assert st.masked_select(st.tensor(1.5), st.tensor(True)).tolist() == [1.5]
    assert st.masked_select(st.tensor(1.5), st.tensor(False)).tolist() == []
    x = st.tensor(1.5, requires_grad=True)
    st.masked_select(x, st.tensor(True)).sum().backward()
    assert x.grad.item() == 1.0


def test_tensordot_broadcasts_a_size_one_contracted_dim():
    out = st.tensordot(st.arange(6.0).reshape(2, 3), st.arange(4.0).reshape(1, 4), dims=([0], [0]))
    assert out.tolist() == [[0.0, 3.0, 6.0, 9.0], [0.0, 5.0, 10.0, 15.0], [0.0, 7.0, 14.0, 21.0]]
    a = st.ones(1, 3, requires_grad=True)
    b = st.arange(8.0).reshape(2, 4).requires_grad_()
    st.tensordot(a, b, dims=([0], [0])).sum().backward()
    assert a.grad.tolist() == [[28.0, 28.0, 28.0]] and b.grad.tolist() == [[3.0] * 4] * 2
    with pytest.raises(RuntimeError, match="contracted dimensions need to match, but first has size 2"):
        st.tensordot(st.ones(2, 3), st.ones(3, 4), dims=([0], [0]))


def test_gradient_spacing_none_rdiv_and_vander_of_a_zero_dim_tensor():
    assert st.gradient(st.arange(5.0), spacing=None, dim=None, edge_order=1)[0].tolist() == [1.0] * 5
    assert st.tensor(2.0).__rdiv__(st.tensor(3.0)).item() == 1.5
    assert st.tensor([2, 4]).__rdiv__(3).tolist() == [1.5, 0.75]
    assert st.linalg.vander(st.tensor(2.0), N=3).tolist() == [[1.0, 2.0, 4.0]]
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        st.linalg.vander(st.tensor(2.0))


def test_unsafe_splits_and_combinations_take_complex():
    z = st.tensor([1 + 2j, 3 - 1j, 2j])
    assert st.combinations(z).tolist() == [[1 + 2j, 3 - 1j], [1 + 2j, 2j], [3 - 1j, 2j]]
    assert [t.tolist() for t in st.unsafe_chunk(z, 2)] == [[1 + 2j, 3 - 1j], [2j]]
    assert [t.tolist() for t in st.unsafe_split(z, 2)] == [[1 + 2j, 3 - 1j], [2j]]
    assert [t.tolist() for t in z.unsafe_split_with_sizes([1, 2])] == [[1 + 2j], [3 - 1j, 2j]]
    zr = z.clone().requires_grad_()
    st.combinations(zr).abs().sum().backward()
    np.testing.assert_allclose(zr.grad.numpy(), [0.8944272 + 1.7888544j, 1.8973666 - 0.6324555j, 2j], rtol=1e-6)


# -- half transposed convolutions round once (Note [Half transposed convolutions]) ------------------
@pytest.mark.parametrize("dtype", [st.bfloat16, st.float16])
@pytest.mark.parametrize("fn, x_shape, w_shape, kwargs", [
    (st.nn.functional.conv_transpose1d, (1, 4, 5), (4, 8, 3), {}),
    (st.nn.functional.conv_transpose2d, (4, 4, 4), (4, 1, 3, 3), {"groups": 4}),
    (st.nn.functional.conv_transpose3d, (1, 4, 5, 5, 5), (4, 8, 3, 3, 3), {"stride": 2, "output_padding": 1}),
])
def test_half_transposed_convolution_is_the_float32_one_rounded(dtype, fn, x_shape, w_shape, kwargs):
    g = st.Generator().manual_seed(0)
    x = st.randn(x_shape, generator=g).to(dtype)
    w = st.randn(w_shape, generator=g).to(dtype)
    expected = fn(x.float(), w.float(), **kwargs).to(dtype)
    assert st.equal(fn(x, w, **kwargs), expected)


# -- Tensor methods: torch's keyword forms -------------------------------------------------------------------------
def test_varargs_methods_take_their_keyword():
    x = st.arange(6.0).reshape(2, 3)
    assert x.reshape(shape=(3, 2)).shape == (3, 2)
    assert x.permute(dims=(1, 0)).shape == (3, 2)
    assert x.expand(size=(2, 2, 3)).shape == (2, 2, 3)
    assert x.repeat(repeats=(1, 2)).shape == (2, 6)
    assert x.tile(dims=(2,)).shape == (2, 6)
    assert x.flip(dims=(0,)).tolist() == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    assert x.view(size=(3, 2)).shape == (3, 2)
    with pytest.raises(TypeError, match="flip\\(\\) got an unexpected keyword argument 'dim'"):
        x.flip(dim=(0,))
    with pytest.raises(TypeError, match="flip\\(\\) got multiple values for argument 'dims'"):
        x.flip(0, dims=(1,))


@pytest.mark.parametrize("method, dtype", [("float", st.float32), ("double", st.float64), ("half", st.float16),
                                           ("bfloat16", st.bfloat16), ("long", st.int64), ("int", st.int32),
                                           ("bool", st.bool), ("byte", st.uint8), ("char", st.int8),
                                           ("short", st.int16), ("cfloat", st.complex64), ("cdouble", st.complex128)])
def test_cast_methods_take_memory_format(method, dtype):
    x = st.ones(2, 3, 4, 5)
    out = getattr(x, method)(memory_format=st.channels_last)
    assert out.dtype is dtype and out.is_contiguous(memory_format=st.channels_last)
    assert getattr(x, method)(st.contiguous_format).is_contiguous()


def test_sum_to_size_of_an_empty_shape_is_a_full_sum():
    assert st.tensor(3, dtype=st.int8).sum_to_size(()).dtype is st.int64
    assert st.tensor([[3]], dtype=st.int8).sum_to_size(()).dtype is st.int64
    assert st.tensor([3], dtype=st.int8).sum_to_size(1).dtype is st.int8


def test_batch_norm_of_an_empty_batch_in_training():
    m = st.nn.BatchNorm1d(5)
    x = st.ones(0, 5, 9, requires_grad=True)
    y = m(x)
    assert y.shape == (0, 5, 9)
    assert m.running_mean.tolist() == [0.0] * 5 and m.running_var.tolist() == [1.0] * 5
    assert m.num_batches_tracked.item() == 1
    y.sum().backward()
    assert x.grad.shape == (0, 5, 9) and m.weight.grad.tolist() == [0.0] * 5
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        m(st.ones(1, 5, 1))


def test_in_place_forms_of_complex_ops_take_complex():
    def z():
        return st.tensor([[1 + 2j, 3 - 1j, 0.5j], [2, -1 + 1j, 4 - 2j]], dtype=st.complex64)

    assert z().as_strided_((3,), (1,), 1).tolist() == [3 - 1j, 0.5j, 2]
    assert z().t_().tolist() == [[1 + 2j, 2], [3 - 1j, -1 + 1j], [0.5j, 4 - 2j]]
    added = z().index_add_(1, st.tensor([0, 2, 0]), z() * 1j, alpha=2)
    np.testing.assert_allclose(added.numpy(), [[-4 + 4j, 3 - 1j, 2 + 6.5j], [6 + 12j, -1 + 1j, 2 - 4j]], rtol=1e-6)
    scattered = z().scatter_add_(1, st.tensor([[0, 0, 2], [1, 1, 1]]), z())
    np.testing.assert_allclose(scattered.numpy(), [[5 + 3j, 3 - 1j, 1j], [2, 4, 4 - 2j]], rtol=1e-6)
    np.testing.assert_allclose(z().renorm_(2, 0, 1.5).numpy()[0], [0.38411063 + 0.76822126j, 1.1523318 - 0.38411063j,
                                                                   0.19205531j], rtol=1e-6)


# -- gradients (torch's OpInfo samples with requires_grad, the same cotangents) ------------------------------------
_GEQRF = ([[-2.23606797749979, -2.2360679774997894, -0.4472135954999579],
           [0.2360679774997897, -2.449489742783178, -2.4494897427831783],
           [0.0, 0.2134217652833884, 3.286335345030997]], [1.8944271909999157, 1.912870929175277, 0.0])


def test_ormqr_gradient_of_a_zero_tau():
    """geqrf's last tau of a square matrix is 0; d/dtau of I - tau v v^H is -v v^H there too (it read 0)."""
    a = st.tensor(_GEQRF[0], dtype=st.float64, requires_grad=True)
    tau = st.tensor(_GEQRF[1], dtype=st.float64, requires_grad=True)
    st.ormqr(a, tau, st.eye(3, dtype=st.float64)).sum().backward()
    np.testing.assert_allclose(tau.grad.numpy(), [-0.8505705845095863, -0.8016293256903566, -0.7302967433402214],
                               rtol=1e-12)
    with st.no_grad():  # the compact WY form, the same product
        wy = st.ormqr(a, tau, st.eye(3, dtype=st.float64))
    np.testing.assert_allclose(st.ormqr(a, tau, st.eye(3, dtype=st.float64)).detach().numpy(), wy.numpy(), atol=1e-14)


@pytest.mark.parametrize("ord_, grad", [(-0.5, [0.01614244, 0.08387857, 0.02965555]),
                                        (-1, [0.03305785, 0.29752066, 0.07438017]),
                                        (-2, [0.02332362, 0.62973761, 0.0787172])])
def test_negative_order_norm_gradient_is_zero_where_the_norm_is(ord_, grad):
    x = st.tensor([[0.0, 1.0, 2.0], [3.0, 1.0, 2.0]], dtype=st.float64, requires_grad=True)
    st.linalg.norm(x, ord_, dim=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.0, 0.0, 0.0], grad], rtol=1e-6)


# -- forward mode (torch.func.jvp over torch's OpInfo samples) -----------------------------------------------------
def test_jvp_of_functions_returning_structseqs_and_integer_outputs():
    x = st.tensor([[1.0, 5.0], [3.0, 2.0]], dtype=st.float64)
    out, tangent = st.func.jvp(lambda a: st.max(a, 0), (x,), (st.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=st.float64),))
    assert type(tangent) is type(out) and type(out).__name__ == "max"
    assert tangent.values.tolist() == [3.0, 2.0] and tangent.indices.tolist() == [0, 0]
    assert tangent.indices.dtype is st.int64
    _, t = st.func.jvp(lambda a: st.nn.functional.max_pool1d(a.unsqueeze(0), 2, return_indices=True), (x,),
                       (st.ones_like(x),))
    assert t[1].dtype is st.int64 and t[1].shape == (1, 2, 1)
    from collections import namedtuple

    pair = namedtuple("pair", "a b")
    _, t = st.func.jvp(lambda a: pair(a * 2, a.sum()), (x,), (st.ones_like(x),))
    assert isinstance(t, pair) and t.b.item() == 4.0


@pytest.mark.parametrize("p, grad, tangent", [
    (0.5, [0.0, 2.41421, -1.70711], 0.70711), (1.5, [0.0, 0.63923, -0.90401], -0.26478),
    (2, [0.0, 0.44721, -0.89443], -0.44721), (3, [0.0, 0.23112, -0.92448], -0.69336),
])
def test_norm_gradients_and_tangents_with_zero_entries_and_zero_norms(p, grad, tangent):
    """torch's norm_backward masks |x|^(p - 1) at 0 (p < 1) and the zero-norm slices; the jvp (by reverse mode
    twice) no longer meets a NaN in a masked branch."""
    x = st.tensor([[0.0, 1.0, -2.0], [0.0, 0.0, 0.0]], dtype=st.float64, requires_grad=True)
    st.linalg.vector_norm(x, p, dim=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [grad, [0.0, 0.0, 0.0]], atol=1e-5)
    _, t = st.func.jvp(lambda y: st.linalg.vector_norm(y, p, dim=1), (x.detach(),), (st.ones_like(x),))
    np.testing.assert_allclose(t.numpy(), [tangent, 0.0], atol=1e-5)


@pytest.mark.parametrize("x, grads", [
    (-9.0, [-1030.914794921875, 979.0422973632812, 0.007734537124633789, -0.006401583552360535]),
    (9.0, [1030.914794921875, 979.0422973632812, -0.007734537124633789, -0.006401583552360535]),
    (19.5, [26065070.0, 25423854.0, -0.002363339066505432, -0.0021790266036987305]),
])
def test_float32_modified_bessel_gradients_do_not_overflow(x, grads):
    """The series' gradient overflowed float32 past |x| ~ 7 (NaN); torch's are finite (Note [Modified Bessel
    series])."""
    for fn, want in zip((st.i0, st.special.i1, st.special.i0e, st.special.i1e), grads):
        t = st.tensor([x], requires_grad=True)
        y = fn(t)
        y.backward(st.ones(1))
        assert y.dtype is st.float32
        np.testing.assert_allclose(t.grad.item(), want, rtol=2e-4)


def test_real_times_complex_matmul_refuses_in_torchs_words():
    """The C++ type names of complex dtypes were missing (a KeyError leaked)."""
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != "
                                           "c10::complex<float>"):
        st.matmul(st.ones(2, 2), st.ones(2, 2, dtype=st.complex64))
    with pytest.raises(RuntimeError, match="Input dtypes must be the same, got: input c10::complex<float>, batch1: "
                                           "float, batch2: float"):
        st.baddbmm(st.ones(1, 2, 2, dtype=st.complex64), st.ones(1, 2, 2), st.ones(1, 2, 2))
