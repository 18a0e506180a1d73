"""Note [Saved when needed]: an op saves for backward only what the formulas of the inputs that need a
gradient read, as torch's generated code does; what is not saved can be changed in place (or be an
inference tensor) without breaking backward. Outcomes compared with torch."""

from __future__ import annotations

import re

import pytest

import strided as st

torch = pytest.importorskip("torch")


def _cases(lib):
    F = lib.nn.functional

    def mul_other_changed():  # w requires grad: only x is read (w's gradient is grad * x)
        x, w = lib.ones(3), lib.ones(3, requires_grad=True)
        y = (x * w).sum()
        with lib.no_grad():
            w.mul_(2)
        y.backward()
        return w.grad.tolist()

    def mul_saved_changed():
        x, w = lib.ones(3), lib.ones(3, requires_grad=True)
        y = (x * w).sum()
        x.mul_(2)
        y.backward()

    def linear_frozen_input_weight_changed():  # the weight's gradient reads the input only
        x, w = lib.ones(2, 3), lib.ones(4, 3, requires_grad=True)
        y = F.linear(x, w).sum()
        with lib.no_grad():
            w.mul_(2)
        y.backward()
        return w.grad.tolist()

    def linear_frozen_weight_input_changed():  # the input's gradient reads the weight only
        x, w = lib.ones(2, 3, requires_grad=True), lib.ones(4, 3)
        h = x * 1
        y = F.linear(h, w).sum()
        with lib.no_grad():
            h.mul_(5)
        y.backward()
        return x.grad.tolist()

    def linear_weight_changed_input_needs_it():
        x, w = lib.ones(2, 3, requires_grad=True), lib.ones(4, 3)
        y = F.linear(x, w).sum()
        w.mul_(2)
        y.backward()

    def inference_weights_outside_the_mode():  # saved: the input (for the weight), not the weight
        with lib.inference_mode():
            lin = lib.nn.Linear(2, 2)
        lin(lib.ones(1, 2)).sum().backward()
        return lin.bias.grad.tolist()  # (torch's weight gets no gradient through its transposed view here)

    def linear_bias_gradient_3d():
        x, w, b = lib.ones(2, 5, 3), lib.ones(4, 3), lib.ones(4, requires_grad=True)
        F.linear(x, w, b).sum().backward()
        return b.grad.tolist()

    return {f.__name__: f for f in (mul_other_changed, mul_saved_changed, linear_frozen_input_weight_changed,
                                    linear_frozen_weight_input_changed, linear_weight_changed_input_needs_it,
                                    inference_weights_outside_the_mode, linear_bias_gradient_3d)}


def _outcome(fn):
    try:
        return ("ok", fn())
    except RuntimeError as e:
        # the tensor's shape is left out: torch's linear saves weight.t() ([3, 4]), strided's fused one the weight
        words = re.sub(r"\[\w+\.FloatTensor \[[\d, ]*\]\]", "[tensor]", str(e))
        return ("RuntimeError", words.replace("torch.", "strided."))


@pytest.mark.parametrize("case", sorted(_cases(st)))
def test_saved_only_when_needed_as_torch(case):
    assert _outcome(_cases(st)[case]) == _outcome(_cases(torch)[case])
