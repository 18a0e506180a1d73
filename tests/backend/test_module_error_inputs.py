"""Layer refusals found with torch's ModuleInfo error inputs (scratch/module_error_sweep.py: all 93 now as torch)."""

from __future__ import annotations

import pytest

import strided as st
import strided.nn as nn


@pytest.mark.parametrize("layer,shape", [(nn.BatchNorm1d, (2, 10)), (nn.BatchNorm2d, (2, 10, 5, 5)),
                                         (nn.BatchNorm3d, (2, 10, 4, 4, 4))])
@pytest.mark.parametrize("eps", [0.0, -1.0])
def test_batch_norm_refuses_a_non_positive_eps_in_training(layer, shape, eps):
    m = layer(10, eps=eps)
    with pytest.raises(ValueError, match=f"^batch_norm eps must be positive during training, but got {eps}$"):
        m(st.randn(*shape))
    m.eval()  # evaluation divides by the running variance plus eps, as torch allows
    assert m(st.randn(*shape)).shape == shape


@pytest.mark.parametrize("cls", [nn.Softmax, nn.LogSoftmax])
@pytest.mark.parametrize("dim", [True, 1.0])
def test_softmax_layers_refuse_a_dim_that_is_not_an_int(cls, dim):
    with pytest.raises(TypeError, match=f"^dim must be an int or None, got {type(dim)}$"):
        cls(dim=dim)
    assert cls(dim=1)(st.ones(2, 3)).shape == (2, 3)


def test_cells_take_any_bias_and_test_its_truth_as_torch():
    cell = nn.RNNCell(10, 20, "relu")  # torch's cells store the value and test its truth
    assert cell.bias == "relu" and cell.bias_ih is not None
    with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size: got 21, expected 20"):
        cell(st.randn(3, 10), st.randn(3, 21))
    assert nn.GRUCell(10, 20, 0).bias_ih is None
    with pytest.raises(TypeError, match="^bias should be of type bool, got: str$"):  # the full layers check
        nn.RNN(10, 20, bias="x")
