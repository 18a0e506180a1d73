"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and the cells ``RNNCell``, ``LSTMCell``, ``GRUCell``.

Parameter names, shapes, initialization, argument checks and error messages are torch's, so a
torch state dict loads as it is. The layers call the ``rnn_tanh`` / ``rnn_relu`` / ``lstm`` / ``gru``
ops (ops/composite/recurrent.py) with padded (T, N, F) / (N, T, F) batches, unbatched (T, F)
sequences, or :class:`~strided.nn.utils.rnn.PackedSequence` s.
"""

from __future__ import annotations

import math
import numbers
import warnings

from ... import factories
from ...dispatch.dispatcher import autocast_state
from ...ops import bound as ops
from ...tensor import Tensor
from .. import init
from ..module import Module
from ..parameter import Parameter
from ..utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_OPS = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}
_NAMES = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}


def _check_sizes(bias, batch_first, input_size, hidden_size, cell: bool = False):
    if not isinstance(bias, bool) and not cell:  # torch's cells take any bias and test its truth
        raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
    if not isinstance(batch_first, bool):
        raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
    if not isinstance(input_size, int):
        raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if not isinstance(hidden_size, int):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")


class RNNBase(Module):
    """The multi-layer recurrent layer shared by :class:`RNN`, :class:`LSTM` and :class:`GRU`.

    Parameters per layer k and direction (suffix ``_reverse`` for the backward one):
    ``weight_ih_lk`` (gates * hidden_size, layer input), ``weight_hh_lk`` (gates * hidden_size,
    hidden), ``bias_ih_lk``, ``bias_hh_lk`` and, for an LSTM with ``proj_size``, ``weight_hr_lk``.
    All start ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        _check_sizes(bias, batch_first, input_size, hidden_size)
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input)), ("weight_hh_l{}{}", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                names = []
                for pattern, shape in shapes:
                    name = pattern.format(layer, "_reverse" if direction == 1 else "")
                    setattr(self, name, Parameter(factories.empty(shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Tensor]:
        """The parameters in the order the recurrent ops take them (read afresh, so ``.to()`` and
        reassignment are always seen)."""
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op: torch packs the weights into one cuDNN buffer here; strided's recurrent ops take the
        parameters as they are."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # -- argument checks (torch's messages) --------------------------------------------------------
    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype is not weight_dtype and not autocast_state.tls.mask:  # autocast casts them, as torch's
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). Convert "
                             f"input: input.to({weight_dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        directions = 2 if self.bidirectional else 1
        return (self.num_layers * directions, mini_batch, self.proj_size if self.proj_size > 0 else self.hidden_size)

    def check_hidden_size(self, hx: Tensor, expected: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def check_forward_args(self, input: Tensor, hidden, batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        expected = self.get_expected_hidden_size(input, batch_sizes)
        if self.mode == "LSTM":
            self.check_hidden_size(hidden[0], expected, "Expected hidden[0] size {}, got {}")
            self.check_hidden_size(hidden[1], expected[:2] + (self.hidden_size,), "Expected hidden[1] size {}, got {}")
        else:
            self.check_hidden_size(hidden, expected)

    def permute_hidden(self, hx, permutation: Tensor | None):
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(ops.index_select(h, 1, permutation) for h in hx)
        return ops.index_select(hx, 1, permutation)

    # -- forward --------------------------------------------------------------------------------
    def forward(self, input, hx=None):
        """``(output, h_n)`` -- ``(output, (h_n, c_n))`` for an LSTM; output is packed when input is."""
        lstm = self.mode == "LSTM"
        directions = 2 if self.bidirectional else 1
        packed = isinstance(input, PackedSequence)
        if hx is not None:
            self._check_hx_type(hx)
        batched = True
        if packed:
            input, batch_sizes, sorted_indices, unsorted_indices = input
            batch = int(batch_sizes[0])
            if hx is not None:
                hx = self.permute_hidden(tuple(hx) if lstm else hx, sorted_indices)
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if not isinstance(input, Tensor):
                raise TypeError(f"{_NAMES[self.mode]}: input must be a Tensor or a PackedSequence, got "
                                f"{type(input).__name__}")
            if input.dim() not in (2, 3):
                raise ValueError(f"{_NAMES[self.mode]}: Expected input to be 2D or 3D, got {input.dim()}D "
                                 f"{'instead' if lstm else 'tensor instead'}")
            batched = input.dim() == 3
            if not batched:
                input = ops.unsqueeze(input, 0 if self.batch_first else 1)
            if hx is not None:
                hx = self._batched_hidden(hx, batched)
            batch = input.shape[0] if self.batch_first else input.shape[1]
        if hx is None:
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            shape = (self.num_layers * directions, batch)
            h = factories.zeros(shape + (real_hidden,), dtype=input.dtype, device=input.device)
            hx = (h, factories.zeros(shape + (self.hidden_size,), dtype=input.dtype, device=input.device)) \
                if lstm else h
        self.check_forward_args(input, hx, batch_sizes)
        op = getattr(ops, _OPS[self.mode])
        state = list(hx) if lstm else hx
        args = (self._flat_weights, self.bias, self.num_layers, self.dropout, self.training, self.bidirectional)
        if packed:
            result = op(input, batch_sizes, state, *args)
        else:
            result = op(input, state, *args, self.batch_first)
        output, hidden = result[0], (tuple(result[1:]) if lstm else result[1])
        if packed:
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if not batched:
            output = ops.squeeze(output, 0 if self.batch_first else 1)
            hidden = tuple(ops.squeeze(h, 1) for h in hidden) if lstm else ops.squeeze(hidden, 1)
        return output, hidden

    def _check_hx_type(self, hx) -> None:
        name = _NAMES[self.mode]
        if self.mode == "LSTM":
            if not (isinstance(hx, (tuple, list)) and len(hx) == 2 and all(isinstance(h, Tensor) for h in hx)):
                raise TypeError(f"{name}: Expected hx to be a tuple of two Tensors (h_0, c_0), got "
                                f"{type(hx).__name__}")
        elif not isinstance(hx, Tensor):
            raise TypeError(f"{name}: Expected hx to be a Tensor, got {type(hx).__name__}")

    def _batched_hidden(self, hx, batched: bool):
        """hx with a batch dim, after torch's rank checks."""
        want = 3 if batched else 2
        kind = "batched 3-D" if batched else "unbatched 2-D"
        if self.mode == "LSTM":
            h, c = hx
            if h.dim() != want or c.dim() != want:
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got ({h.dim()}-D, "
                                   f"{c.dim()}-D) tensors")
            return (h, c) if batched else (ops.unsqueeze(h, 1), ops.unsqueeze(c, 1))
        if hx.dim() != want:
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {hx.dim()}-D tensor")
        return hx if batched else ops.unsqueeze(hx, 1)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (``nonlinearity='relu'``: relu).

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, device=None, dtype=None)``
    """

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.__dict__["nonlinearity"] = args[3]
            args = args[:3] + args[4:]
        else:
            self.__dict__["nonlinearity"] = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o; ``c' = f * c + i * g``, ``h' = o * tanh(c')``, then
    ``h' W_hr^T`` when ``proj_size > 0``. Takes and returns ``(h, c)``.

    ``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None)``
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit: gates r, z, n; ``n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))``,
    ``h' = (1 - z) * n + z * h``.

    ``GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)``
    """

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """One step of a recurrent layer: ``weight_ih`` (chunks * hidden, input), ``weight_hh``
    (chunks * hidden, hidden), ``bias_ih``, ``bias_hh``; all ~ U(-1/sqrt(hidden), 1/sqrt(hidden))."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        _check_sizes(bias, False, input_size, hidden_size, cell=True)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(factories.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(factories.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(factories.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(factories.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, name: str, input: Tensor, hx, count: int):
        """Batch the input and hidden state(s) (zeros when None) after torch's rank checks."""
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
        if hx is not None and not (all(isinstance(h, Tensor) for h in hx) if count == 2 else isinstance(hx, Tensor)):
            raise TypeError(f"{name}: Expected hx to be {'a tuple of two Tensors (h, c)' if count == 2 else 'a Tensor'}"
                            f", got {type(hx).__name__}")
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for i, h in enumerate(hx if count == 2 else (hx,)):
                if h.dim() not in (1, 2):
                    label = f"hx[{i}]" if count == 2 else "hidden"
                    raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {h.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = ops.unsqueeze(input, 0)
        if hx is None:
            zeros = factories.zeros((input.shape[0], self.hidden_size), dtype=input.dtype, device=input.device)
            hx = (zeros, zeros) if count == 2 else zeros
        elif not batched:
            hx = tuple(ops.unsqueeze(h, 0) for h in hx) if count == 2 else ops.unsqueeze(hx, 0)
        return input, hx, batched

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    """``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu); hx defaults to zeros."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, hx, batched = self._prepare("RNNCell", input, hx, 1)
        if self.nonlinearity == "tanh":
            out = ops.rnn_tanh_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        elif self.nonlinearity == "relu":
            out = ops.rnn_relu_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return out if batched else ops.squeeze(out, 0)


class LSTMCell(RNNCellBase):
    """One LSTM step: ``(h', c')`` from the input and ``hx = (h, c)`` (zeros when None)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        input, hx, batched = self._prepare("LSTMCell", input, hx, 2)
        h, c = ops.lstm_cell(input, list(hx), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if batched else (ops.squeeze(h, 0), ops.squeeze(c, 0))


class GRUCell(RNNCellBase):
    """One GRU step: ``h'`` from the input and ``hx`` (zeros when None)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, hx, batched = self._prepare("GRUCell", input, hx, 1)
        out = ops.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if batched else ops.squeeze(out, 0)
