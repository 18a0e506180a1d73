"""Derivative helpers of the activation operators (derivatives.yaml formulas call them): torch's backward kernels
(``softplus_backward``, ``hardtanh_backward``, ``elu_backward``, ...) composed of ops, so that they differentiate
again (Note [Functional operators] in ``ops/composite/nn_operators.py``).

Each keeps torch's kernel's branch tests exactly, so the gradient at an edge or at NaN is torch's: a test that is
false for NaN (``x <= 0``) sends NaN down the other branch as torch's ternary does.
"""

from __future__ import annotations

from ..ops import bound as ops

__all__ = [
    "softplus_backward",
    "hardtanh_backward",
    "leaky_relu_backward",
    "elu_backward",
    "hardsigmoid_backward",
    "hardswish_backward",
    "mish_backward",
    "shrink_backward",
    "threshold_backward",
    "log_sigmoid_backward",
    "glu_backward",
    "prelu_kernel_backward",
]


def softplus_backward(grad, self, beta, threshold):
    z = self * beta
    return ops.where(ops.gt(z, threshold), grad, grad * ops.sigmoid(z))


def hardtanh_backward(grad, self, min_val, max_val):
    """torch's hardtanh_backward: zero where ``self <= min_val`` or ``self >= max_val``, else ``grad`` (NaN inside).
    The result in place of ``self`` gives the same answer."""
    return ops.where(ops.logical_or(ops.le(self, min_val), ops.ge(self, max_val)), 0.0, grad)


_LEAKY_INPLACE = ("In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
                  "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
                  "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
                  "in-place leakRelu backward calculation with negative slope")


def leaky_relu_backward(grad, self, negative_slope, self_is_result=False):
    """torch's leaky_relu_backward: ``grad`` where ``self > 0``, else ``grad * negative_slope``; from the in-place
    op's result when ``self_is_result`` (its sign is the input's unless the slope is negative: torch's error)."""
    if self_is_result and negative_slope < 0:
        raise RuntimeError(_LEAKY_INPLACE)
    return ops.where(ops.gt(self, 0), grad, grad * negative_slope)


_ELU_INPLACE = ("In-place elu backward calculation is triggered with a negative slope which is not supported. This is "
                "caused by calling in-place forward function with a negative slope, please call out-of-place version "
                "instead.")


def elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result):
    """torch's elu_backward: ``grad * scale`` where ``x > 0`` (and at NaN); else ``grad * input_scale * alpha * scale *
    exp(x * input_scale)`` from the input, or ``grad * input_scale * (y + alpha * scale)`` from the result ``y`` of
    the in-place op (``is_result``: a negative ``alpha`` is torch's error)."""
    if is_result and alpha < 0:
        raise RuntimeError(_ELU_INPLACE)
    x = self_or_result
    negative = ops.le(x, 0)
    if is_result:
        inside = (x + alpha * scale) * input_scale
    else:  # exp of the non-positive part only: a large x neither overflows nor sends 0 * inf into a double backward
        inside = ops.exp(ops.where(negative, x, 0.0) * input_scale) * (input_scale * alpha * scale)
    return ops.where(negative, grad * inside, grad * scale)


_ONE_SIXTH = 0.1666666716337204  # torch's kernels multiply by the float 1.0f / 6.0f, in float64 too


def hardsigmoid_backward(grad, self):
    """torch's hardsigmoid_backward: ``grad / 6`` strictly inside (-3, 3), else zero (NaN outside)."""
    return ops.where(ops.logical_and(ops.gt(self, -3.0), ops.lt(self, 3.0)), grad * _ONE_SIXTH, 0.0)


def hardswish_backward(grad, self):
    """torch's hardswish_backward: 0 up to -3, ``grad * (x / 3 + 0.5)`` inside (-3, 3), ``grad`` from 3 (and at
    NaN)."""
    return ops.where(ops.le(self, -3.0), 0.0, ops.where(ops.lt(self, 3.0), grad * (self / 3.0 + 0.5), grad))


def mish_backward(grad, self):
    """torch's (infinitely differentiable) mish backward: ``grad * (t + x * sigmoid(x) * (1 - t**2))``,
    ``t = tanh(softplus(x))``."""
    t = ops.tanh(ops.softplus(self))
    return grad * (t + self * ops.sigmoid(self) * (1 - t * t))


def shrink_backward(grad, self, lambd):
    """torch's softshrink_backward and hardshrink_backward (one kernel): zero where ``-lambd <= x <= lambd``, else
    ``grad`` (NaN outside)."""
    return ops.where(ops.logical_and(ops.ge(self, -lambd), ops.le(self, lambd)), 0.0, grad)


def threshold_backward(grad, self, threshold):
    """torch's threshold_backward: zero where ``x <= threshold``, else ``grad``."""
    return ops.where(ops.le(self, threshold), 0.0, grad)


def log_sigmoid_backward(grad, self):
    """torch's log_sigmoid_backward: ``grad * sigmoid(-x)`` (its kernel's two branches, ``1 - z / (1 + z)`` and
    ``z / (1 + z)`` with ``z = exp(-|x|)``, are that value on either side of 0)."""
    return grad * ops.sigmoid(-self)


def glu_backward(grad, self, dim):
    """torch's glu_backward: ``[grad * s, grad * a * s * (1 - s)]`` along ``dim``, ``a, b`` the halves of ``self``
    and ``s = sigmoid(b)``."""
    a, b = ops.chunk(self, 2, dim)
    s = ops.sigmoid(b)
    gs = grad * s
    return ops.cat([gs, gs * a * (1 - s)], dim)


def prelu_kernel_backward(grad, self, weight):
    """torch's _prelu_kernel_backward: ``(grad, 0)`` where ``x > 0``, else ``(weight * grad, x * grad)`` (the
    engine sums the weight's part back to its broadcast shape)."""
    positive = ops.gt(self, 0)
    return ops.where(positive, grad, weight * grad), ops.where(positive, 0.0, self * grad)
