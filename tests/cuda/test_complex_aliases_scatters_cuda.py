"""torch's aliases, the *_scatter ops and ldexp_ take complex tensors on CUDA as on the CPU (their targets' kernels
decide, Note [Complex operators]); an alias of an op without complex kernels refuses in that op's words; the
numbers-as-tensors forms (add(2, t), remainder(2, t)) and the .Scalar_Tensor overloads run on CUDA as on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

_Z = [1 + 2j, -0.5 + 0.25j, 3 - 1j]

CALLS = {
    "not_equal": lambda z: st.not_equal(z, z.conj()), "not_equal_": lambda z: z.clone().not_equal_(z),
    "arccos": lambda z: st.arccos(z), "negative_": lambda z: z.clone().negative_(),
    "multiply": lambda z: st.multiply(z, 2j),
    "select_scatter": lambda z: st.select_scatter(z.reshape(3, 1).expand(3, 2).contiguous(), z * 1j, 1, 0),
    "slice_scatter": lambda z: st.slice_scatter(z, z[:2] * 2, 0, 1, 3),
    "diagonal_scatter": lambda z: st.diagonal_scatter(st.outer(z, z), z.conj(), 0),
    "as_strided_scatter": lambda z: st.as_strided_scatter(st.outer(z, z), z[:2], (2,), (4,), 1),
    "ldexp_": lambda z: z.clone().ldexp_(st.tensor([1, -2, 3], device=z.device)),
    "ldexp complex exponent": lambda z: st.ldexp(z, z.conj()), "reshape_as": lambda z: z.reshape_as(z[:, None]),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", list(CALLS))
def test_complex_aliases_and_scatters_match_the_cpu(name, dtype):
    z = st.tensor(_Z, dtype=getattr(st, dtype))
    want = CALLS[name](z)
    got = CALLS[name](z.cuda())
    assert got.device.type == "cuda" and got.dtype is want.dtype
    np.testing.assert_allclose(np.asarray(got.cpu()), np.asarray(want), rtol=1e-6)


def test_alias_refuses_complex_in_its_ops_words():
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexFloat'"):
        st.greater_equal(st.tensor([1j], device="cuda"), st.tensor([2j], device="cuda"))


NUMBER_FIRST = {
    "add": lambda n, t: st.add(n, t, alpha=2), "sub": lambda n, t: st.sub(n, t), "mul": lambda n, t: st.mul(n, t),
    "div": lambda n, t: st.div(n, t), "div floor": lambda n, t: st.div(n, t, rounding_mode="floor"),
    "true_divide": lambda n, t: st.true_divide(n, t), "floor_divide": lambda n, t: st.floor_divide(n, t),
    "remainder": lambda n, t: st.remainder(n, t), "bitwise_and": lambda n, t: st.bitwise_and(n, t),
    "bitwise_xor": lambda n, t: st.bitwise_xor(n, t), "bitwise_left_shift": lambda n, t: st.bitwise_left_shift(n, t),
    "bitwise_right_shift": lambda n, t: st.bitwise_right_shift(n, t),
}


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", list(NUMBER_FIRST))
def test_number_first_operands_match_the_cpu(name, dtype):
    d = getattr(st, dtype)
    if name.startswith("bitwise") and d.is_floating_point:
        return
    t = st.tensor([1, 2, 3, 6, 7], dtype=d)
    for n in (5, -3, 2.5, True) if d.is_floating_point else (5, -3, True):
        if n is True and name == "sub":
            continue  # sub(True, t) is refused, as torch's (a bool operand of subtraction)
        want = NUMBER_FIRST[name](n, t)
        got = NUMBER_FIRST[name](n, t.cuda())
        assert got.device.type == "cuda" and got.dtype is want.dtype, (n, got.dtype, want.dtype)
        np.testing.assert_allclose(np.asarray(got.cpu().to(st.float64)), np.asarray(want.to(st.float64)), rtol=2e-3)


def test_numbers_only_and_copy_on_cuda():
    o = st.empty((), device="cuda")
    assert st.add(2, 3, out=o) is o and o.item() == 5.0
    t = st.zeros(3, device="cuda", dtype=st.int32)
    assert t.copy_(2.7) is t and t.tolist() == [2, 2, 2]
    r = st.remainder(st.tensor([2.0, -2.0], device="cuda"), st.tensor([-2.0, 2.0], device="cuda"))
    assert [str(v) for v in r.tolist()] == ["0.0", "-0.0"]  # the dividend's sign, as torch's fmod-based kernel


MIXED = {  # dtype rules fixed against torch on the CPU (tests/backend/test_alias_and_refusal_parity.py): same on CUDA
    "block_diag": lambda d: st.block_diag(st.tensor(1.0, dtype=st.bfloat16, device=d), st.ones(2, 2, dtype=st.float16,
                                                                                                   device=d)),
    "ldexp": lambda d: st.ldexp(st.tensor(1.5, dtype=st.bfloat16, device=d), st.ones(2, dtype=st.float16, device=d)),
    "l1_loss": lambda d: st.nn.functional.l1_loss(st.tensor(0.5, dtype=st.float16, device=d), st.ones(3, device=d)),
    "mse_loss bool": lambda d: st.nn.functional.mse_loss(st.tensor([True, False], device=d),
                                                         st.tensor([0.5, 1.0], device=d)),
    "huber_loss": lambda d: st.nn.functional.huber_loss(st.tensor([0.5, 1.5], dtype=st.float16, device=d),
                                                        st.tensor([0.5, 3.0], device=d)),
    "bce_with_logits": lambda d: st.nn.functional.binary_cross_entropy_with_logits(
        st.tensor([0.5, -1.0], dtype=st.float64, device=d), st.tensor([1.0, 0.0], device=d)),
    "cumsum 0-dim dim": lambda d: st.cumsum(st.ones(2, 3, device=d), st.tensor(1)),
}


@pytest.mark.parametrize("name", list(MIXED))
def test_mixed_dtype_rules_match_the_cpu(name):
    want, got = MIXED[name]("cpu"), MIXED[name]("cuda")
    assert got.device.type == "cuda" and got.dtype is want.dtype
    np.testing.assert_allclose(np.asarray(got.cpu().to(st.float64)), np.asarray(want.to(st.float64)), rtol=1e-3)


@pytest.mark.parametrize("call", ["arange(0.5, 2.5, 0.5, dtype=st.int32, device=D)",
                                  "arange(-3, 3, 1.5, dtype=st.int64, device=D)",
                                  "linspace(0.5, 10.5, 4, dtype=st.int32, device=D)",
                                  "linspace(-2, 2, 7, dtype=st.uint8, device=D)",
                                  "logspace(0, 2, 5, dtype=st.int32, device=D)",
                                  "linspace(0.0, 1.0, 5, device=D)"])
def test_integer_ranges_match_the_cpu(call):
    want = eval("st." + call, {"st": st, "D": "cpu"})
    got = eval("st." + call, {"st": st, "D": "cuda"})
    assert got.device.type == "cuda" and got.dtype is want.dtype and got.tolist() == want.tolist()
