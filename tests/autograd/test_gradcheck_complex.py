"""``gradcheck`` with complex inputs and outputs against torch.autograd.gradcheck (Note [Complex gradcheck]
in strided/autograd/gradcheck.py): the same verdict on correct and wrong functions, torch's messages."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck
from strided.autograd.gradcheck import GradcheckError

torch = pytest.importorskip("torch")
torch_gradcheck = importlib.import_module("torch.autograd.gradcheck")  # the module (the name is the function's)


def _arrays(seed: int, *specs):
    """One array per ``(shape, kind)``: kind "c" complex128, "r" float64, "p" positive float64."""
    rng = np.random.default_rng(seed)
    out = []
    for shape, kind in specs:
        a = rng.standard_normal(shape)
        out.append(a + 1j * rng.standard_normal(shape) if kind == "c" else np.abs(a) + 0.1 if kind == "p" else a)
    return out


def _pair(arrays):
    ours = tuple(st.from_numpy(a.copy()).requires_grad_() for a in arrays)
    theirs = tuple(torch.from_numpy(a.copy()).requires_grad_() for a in arrays)
    return ours, theirs


# (id, strided function, torch function, input specs)
CORRECT = [
    ("mul", lambda z, w: z * w, lambda z, w: z * w, [((3,), "c"), ((3,), "c")]),
    ("mul real by complex", lambda x, w: x * w, lambda x, w: x * w, [((2, 3), "r"), ((3,), "c")]),
    ("exp", st.exp, torch.exp, [((2, 3), "c")]),
    ("abs", st.abs, torch.abs, [((4,), "c")]),
    ("view_as_real(z * w)", lambda z, w: st.view_as_real(z * w), lambda z, w: torch.view_as_real(z * w),
     [((3,), "c"), ((3,), "c")]),
    ("polar", st.polar, torch.polar, [((3,), "p"), ((3,), "r")]),
    ("fft", st.fft.fft, torch.fft.fft, [((5,), "c")]),
    ("rfft", st.fft.rfft, torch.fft.rfft, [((6,), "r")]),
    ("irfft", lambda z: st.fft.irfft(z, 6), lambda z: torch.fft.irfft(z, 6), [((4,), "c")]),
    ("complex and real outputs", lambda z: (z * z, st.abs(z)), lambda z: (z * z, torch.abs(z)), [((3,), "c")]),
    ("sum of squares to 0-dim", lambda z: (z * z).sum(), lambda z: (z * z).sum(), [((2, 2), "c")]),
]


@pytest.mark.parametrize("name, ours, theirs, specs", CORRECT, ids=[c[0] for c in CORRECT])
def test_correct_functions_pass_as_in_torch(name, ours, theirs, specs):
    a, b = _pair(_arrays(0, *specs))
    assert torch.autograd.gradcheck(theirs, b)
    assert gradcheck(ours, a)


def _functions(lib):
    """Custom autograd.Functions of ``lib`` (strided or torch): one correct, three with wrong backwards."""

    class Mul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, z, w):
            ctx.save_for_backward(z, w)
            return z * w

        @staticmethod
        def backward(ctx, grad):
            z, w = ctx.saved_tensors
            return grad * w.conj(), grad * z.conj()

    class MulNoConj(Mul):  # the forward's Jacobian, not its conjugate
        @staticmethod
        def backward(ctx, grad):
            z, w = ctx.saved_tensors
            return grad * w, grad * z

    class SquaredAbs(lib.autograd.Function):  # |z|^2, real: its gradient is 2 z, not z
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return (z * z.conj()).real

        @staticmethod
        def backward(ctx, grad):
            (z,) = ctx.saved_tensors
            return grad * z

    class Identity(lib.autograd.Function):  # right for an imaginary grad, doubles a real one
        @staticmethod
        def forward(ctx, z):
            return z * 1.0

        @staticmethod
        def backward(ctx, grad):
            return grad + grad.real

    return {"mul": Mul.apply, "mul without conj": MulNoConj.apply, "squared abs": SquaredAbs.apply,
            "identity doubling real grads": Identity.apply}


# (function, input specs, None when gradcheck passes, else the start of torch's message)
CUSTOM = [
    ("mul", [((3,), "c"), ((3,), "c")], None),
    ("mul without conj", [((3,), "c"), ((3,), "c")],
     "While considering the imaginary part of complex outputs only, Jacobian mismatch for output 0 with respect to "
     "input 0,\nnumerical:"),
    ("squared abs", [((3,), "c")], "Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"),
    ("identity doubling real grads", [((3,), "c")],
     "While considering the real part of complex outputs only, Jacobian mismatch for output 0 with respect to "
     "input 0,\nnumerical:"),
]


@pytest.mark.parametrize("name, specs, message", CUSTOM, ids=[c[0] for c in CUSTOM])
def test_custom_functions_agree_with_torch(name, specs, message):
    a, b = _pair(_arrays(1, *specs))
    ours, theirs = _functions(st)[name], _functions(torch)[name]
    assert gradcheck(ours, a, raise_exception=False) == torch.autograd.gradcheck(
        theirs, b, raise_exception=False) == (message is None)
    if message is None:
        return
    with pytest.raises(torch_gradcheck.GradcheckError) as want:
        torch.autograd.gradcheck(theirs, b)
    with pytest.raises(GradcheckError) as got:
        gradcheck(ours, a)
    assert str(want.value).startswith(message)
    assert str(got.value).startswith(message)


def test_numerical_jacobian_is_the_conjugate_wirtinger_derivative():
    """The numerical column of a complex input is ``ds/dx + 1j ds/dy``, torch's."""
    from strided.autograd.gradcheck import _numerical

    (z,), (tz,) = _pair(_arrays(2, ((3,), "c")))
    ours = _numerical(lambda v: (v * st.conj(v)).real, (z,), [z], [3], 1e-6)[0][0]
    theirs = torch_gradcheck._get_numerical_jacobian(lambda v: (v * v.conj()).real, (tz,), eps=1e-6)[0][0]
    np.testing.assert_allclose(ours, np.diag(2 * z.detach().numpy()), atol=1e-8)  # d|z|^2/dx + 1j d|z|^2/dy
    np.testing.assert_allclose(ours, theirs.numpy(), atol=1e-8)


def test_real_tensors_keep_their_messages():
    """Real inputs and outputs: strided's per-element message, unchanged."""

    class Double(st.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = st.tensor([1.0, 2.0], dtype=st.float64).requires_grad_()
    with pytest.raises(GradcheckError, match=r"^Jacobian mismatch for output 0 element 0 with respect to input 0,\n"):
        gradcheck(Double.apply, (x,))


def test_input_dtypes():
    z = st.tensor([1 + 2j], dtype=st.complex64).requires_grad_()
    with pytest.raises(GradcheckError, match="gradcheck expects complex128 inputs, got"):
        gradcheck(st.exp, (z,))
    x = st.tensor([1.0], dtype=st.float32).requires_grad_()
    with pytest.raises(GradcheckError, match="gradcheck expects float64 inputs, got"):
        gradcheck(st.exp, (x,))
