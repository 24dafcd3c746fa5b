"""Multi-layer RNN, LSTM and GRU over whole sequences (padded or packed), as torch.nn's.

Each layer and direction projects all its time steps with one matmul (``x W_ih^T + b_ih``) and
then loops over time for the recurrent part only; that loop lives in ``nn/ops/rnn.py``, shared
with ``torch.lstm`` and its kin, and these modules add parameters and checks. A packed batch
(:class:`~hookgrad.nn.utils.rnn.PackedSequence`) is run the way torch's CPU kernel runs it:
sequences are sorted longest first, so at each step the batch shrinks from the end (or,
in the reverse direction, grows), and a sequence's final state is the one it had at its own last
step. Parameters, their names, order, shapes and initial draws are torch's.

Differs from torch: there is no fused kernel, so the graph is made of ordinary ops (torch's CPU
LSTM output has ``MkldnnRnnLayerBackward0``, hookgrad's ``StackBackward0``, as torch's RNN and
GRU); ``flatten_parameters`` does nothing.
"""
from __future__ import annotations

import math
import numbers
from typing import Optional

import hookgrad
from ... import _autocast_state as _autocast
from ..._warnings import warn
from ...tensor import Tensor

from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module
from ..ops.rnn import GATES as _GATES, run_layers
from .rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

class RNNBase(Module):
    """Shared construction, checks and layer loop of RNN, LSTM and GRU.

    Parameters per layer ``k`` and direction (suffix ``_reverse`` for the backward one):
    ``weight_ih_lk`` (gates*hidden, input), ``weight_hh_lk`` (gates*hidden, hidden or
    proj_size), ``bias_ih_lk``, ``bias_hh_lk`` and, for an LSTM with ``proj_size``,
    ``weight_hr_lk`` (proj_size, hidden). All start U(-1/sqrt(hidden), 1/sqrt(hidden)).
    """

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        # float() first, as torch does, so a non-number fails here before the option checks.
        self.dropout = float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        _check_options(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                       proj_size)
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        num_directions = 2 if bidirectional else 1
        self._flat_weights_names: list = []
        self._all_weights: list = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input_size)),
                          ("weight_hh_l{}{}", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr_l{}{}", (proj_size, hidden_size)))
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for pattern, shape in shapes:
                    name = pattern.format(layer, suffix)
                    setattr(self, name, Parameter(hookgrad.empty(shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Redraws every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), in
        torch's order and stream."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """The parameters grouped per layer and direction, in torch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op kept for torch code: only cuDNN wants the weights in one buffer."""

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        return text

    # -- checks (torch's messages) ---------------------------------------------------------

    def check_input(self, input: Tensor, batch_sizes: Optional[list]) -> None:
        """Raises torch's error when the input's dtype or rank or feature size does not fit."""
        weight_dtype = self.weight_ih_l0.dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight_dtype}). Convert input: input.to({weight_dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got "
                               f"{input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Optional[list]) -> tuple:
        """The shape ``h_0`` must have for this input."""
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple,
                          msg: str = "Expected hidden size {}, got {}") -> None:
        """Raises torch's error when ``hx`` does not have ``expected_hidden_size``."""
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(self, input: Tensor, hidden: Tensor,
                           batch_sizes: Optional[list]) -> None:
        """Checks the input and the hidden state together, as torch does before running."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Optional[Tensor]) -> Tensor:
        """``hx`` reordered along the batch dimension by ``permutation`` (packed sequences sorted by
        length)."""
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # -- the shared forward ----------------------------------------------------------------

    def _zeros(self, batch: int, size: int, like: Tensor) -> Tensor:
        num_directions = 2 if self.bidirectional else 1
        return hookgrad.zeros((self.num_layers * num_directions, batch, size), dtype=like.dtype)

    def _unpack_input(self, input, hx, name: str, hidden_count: int):
        """Normalise the input to time-major 3-D (or packed 2-D) and batched states.
        Returns (input, hx, batch_sizes, sorted_indices, unsorted_indices, batched)."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is not None:
                hx = self.permute_hidden(hx, sorted_indices)
            return data, hx, [int(b) for b in batch_sizes.tolist()], sorted_indices, \
                unsorted_indices, True
        if input.dim() not in (2, 3):
            tensor_word = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                             f"{tensor_word} instead")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if hx is not None:
            _check_hidden_dims(hx, batched, hidden_count)
            if not batched:
                hx = self._map_hidden(hx, lambda h: h.unsqueeze(1))
        return input, hx, None, None, None, batched

    def _map_hidden(self, hx, fn):
        return fn(hx)

    def _run(self, input: Tensor, states: tuple, batch_sizes: Optional[list]) -> tuple:
        """All layers and directions (``nn/ops/rnn.py``'s ``run_layers`` over this module's
        weights). Returns (output in the input's layout, final states stacked)."""
        weights = [[getattr(self, name) for name in names] for names in self._all_weights]
        if (_autocast.threads_on and _autocast.cpu_on() and self.mode == "LSTM"
                and self.proj_size == 0 and batch_sizes is None):
            return self._run_autocast(input, states, weights)
        return run_layers(self.mode, input, states, weights, self.bias, self.num_layers,
                          self.dropout, self.training, self.bidirectional, self.batch_first,
                          batch_sizes)

    def _run_autocast(self, input: Tensor, states: tuple, weights: list) -> tuple:
        """Under CPU autocast, torch 2.13 runs an LSTM without projection on a padded batch as
        one oneDNN layer, wholly in the autocast dtype; every other recurrent layer (RNN, GRU,
        a packed LSTM or one with projection) runs as its ops, each cast by its list."""
        low = _autocast.get_dtype("cpu")

        def cast(tensor: Tensor) -> Tensor:
            return tensor.to(low) if tensor.dtype in (hookgrad.float32, low) else tensor

        with _autocast.HELD_OFF:
            return run_layers(self.mode, cast(input), tuple(cast(s) for s in states),
                              [[cast(w) for w in layer] for layer in weights], self.bias,
                              self.num_layers, self.dropout, self.training, self.bidirectional,
                              self.batch_first, None)

    def _forward_single_state(self, input, hx, name: str):
        """RNN and GRU: one state tensor ``h`` of shape (layers*directions, N, hidden)."""
        orig_input = input
        input, hx, batch_sizes, sorted_indices, unsorted_indices, batched = \
            self._unpack_input(input, hx, name, 1)
        if hx is None:
            batch = batch_sizes[0] if batch_sizes is not None else \
                input.shape[0 if self.batch_first else 1]
            hx = self._zeros(batch, self.hidden_size, input)
        self.check_forward_args(input, hx, batch_sizes)
        output, (hidden,) = self._run(input, (hx,), batch_sizes)
        if isinstance(orig_input, PackedSequence):
            packed = PackedSequence(output, orig_input.batch_sizes, sorted_indices,
                                    unsorted_indices)
            return packed, self.permute_hidden(hidden, unsorted_indices)
        if not batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = hidden.squeeze(1)
        return output, hidden


def _require_type(name: str, value, kind: type) -> None:
    if not isinstance(value, kind):
        raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")


def _check_options(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                   proj_size) -> None:
    if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
            or not 0 <= dropout <= 1):
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        warn("dropout option adds dropout after all but last recurrent layer, so "
             "non-zero dropout expects num_layers greater than 1, but got "
             f"dropout={dropout} and num_layers={num_layers}")
    _require_type("bias", bias, bool)
    _require_type("batch_first", batch_first, bool)
    for name, size in (("input_size", input_size), ("hidden_size", hidden_size)):
        _require_type(name, size, int)
        if size <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    if mode not in _GATES:
        raise ValueError("Unrecognized RNN mode: " + mode)


def _check_hidden_dims(hx, batched: bool, count: int) -> None:
    want = 3 if batched else 2
    kind = "batched 3-D" if batched else "unbatched 2-D"
    if count == 1:
        if hx.dim() != want:
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                               f"{hx.dim()}-D tensor")
    elif hx[0].dim() != want or hx[1].dim() != want:
        raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                           f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu), stacked
    num_layers deep. ``forward(input, hx=None)`` returns (output, h_n); input (L, N, input_size)
    ((N, L, ...) if batch_first), (L, input_size) unbatched, or a PackedSequence."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        # nonlinearity is RNN's own fourth positional argument; RNNBase takes everything else.
        args = list(args)
        nonlinearity = args.pop(3) if len(args) > 3 else kwargs.pop("nonlinearity", "tanh")
        modes = (("tanh", "RNN_TANH"), ("relu", "RNN_RELU"))
        mode = next((code for name, code in modes if nonlinearity == name), None)
        if mode is None:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' "
                             f"or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx: Optional[Tensor] = None):
        return self._forward_single_state(input, hx, "RNN")


class GRU(RNNBase):
    """Gated recurrent unit, stacked num_layers deep; ``forward(input, hx=None)`` returns
    (output, h_n) with the layouts of :class:`RNN`."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx: Optional[Tensor] = None):
        return self._forward_single_state(input, hx, "GRU")


class LSTM(RNNBase):
    """Long short-term memory, stacked num_layers deep, with an optional projection of h
    (``proj_size``). ``forward(input, (h_0, c_0)=None)`` returns (output, (h_n, c_n)); h has
    proj_size features when projecting, c always hidden_size."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Optional[list]) -> tuple:
        """The shape ``c_0`` must have for this input (``hidden_size`` even with ``proj_size``)."""
        layers, batch, _ = self.get_expected_hidden_size(input, batch_sizes)
        return (layers, batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: tuple,
                           batch_sizes: Optional[list]) -> None:
        """Checks the input, ``h_0`` and ``c_0`` together."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: tuple, permutation: Optional[Tensor]) -> tuple:
        """``(h, c)`` reordered along the batch dimension by ``permutation``."""
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def _map_hidden(self, hx, fn):
        return fn(hx[0]), fn(hx[1])

    def forward(self, input, hx: Optional[tuple] = None):
        orig_input = input
        input, hx, batch_sizes, sorted_indices, unsorted_indices, batched = \
            self._unpack_input(input, hx, "LSTM", 2)
        if hx is None:
            batch = batch_sizes[0] if batch_sizes is not None else \
                input.shape[0 if self.batch_first else 1]
            hx = (self._zeros(batch, self.proj_size or self.hidden_size, input),
                  self._zeros(batch, self.hidden_size, input))
        self.check_forward_args(input, hx, batch_sizes)
        output, hidden = self._run(input, tuple(hx), batch_sizes)
        if isinstance(orig_input, PackedSequence):
            packed = PackedSequence(output, orig_input.batch_sizes, sorted_indices,
                                    unsorted_indices)
            return packed, self.permute_hidden(hidden, unsorted_indices)
        if not batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1))
        return output, hidden
