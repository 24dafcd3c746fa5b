"""One step of an Elman RNN, an LSTM and a GRU, and the cell modules built on them.

The step functions take the input projection ``x W_ih^T + b_ih`` already computed, so a
whole-sequence layer can project every time step with one matmul and loop only over the
recurrent part. Everything is composed from hookgrad Tensor ops, so gradients and double
backward come from the engine. Gate order is torch's: LSTM (input, forget, cell, output),
GRU (reset, update, new).
"""
from __future__ import annotations

import math
from typing import Optional

import hookgrad
from ...tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def rnn_tanh_step(input_proj: Tensor, hidden: Tensor, weight_hh: Tensor,
                  bias_hh: Optional[Tensor]) -> Tensor:
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)"""
    return hookgrad.tanh(input_proj + F.linear(hidden, weight_hh, bias_hh))


def rnn_relu_step(input_proj: Tensor, hidden: Tensor, weight_hh: Tensor,
                  bias_hh: Optional[Tensor]) -> Tensor:
    """h' = relu(x W_ih^T + b_ih + h W_hh^T + b_hh)"""
    return hookgrad.relu(input_proj + F.linear(hidden, weight_hh, bias_hh))


def lstm_step(input_proj: Tensor, hidden: tuple, weight_hh: Tensor, bias_hh: Optional[Tensor],
              weight_hr: Optional[Tensor] = None) -> tuple:
    """c' = f * c + i * g, h' = o * tanh(c') (then h' W_hr^T with a projection)."""
    h, c = hidden
    gates = F.linear(h, weight_hh, bias_hh) + input_proj
    in_gate, forget_gate, cell_gate, out_gate = gates.chunk(4, 1)
    cell = (hookgrad.sigmoid(forget_gate) * c
            + hookgrad.sigmoid(in_gate) * hookgrad.tanh(cell_gate))
    h = hookgrad.sigmoid(out_gate) * hookgrad.tanh(cell)
    if weight_hr is not None:
        h = F.linear(h, weight_hr)
    return h, cell


def gru_step(input_proj: Tensor, hidden: Tensor, weight_hh: Tensor,
             bias_hh: Optional[Tensor]) -> Tensor:
    """n = tanh(x_n + r * h_n), h' = n + z * (h - n), with r and z sigmoid gates."""
    input_reset, input_update, input_new = input_proj.chunk(3, 1)
    hidden_reset, hidden_update, hidden_new = F.linear(hidden, weight_hh, bias_hh).chunk(3, 1)
    reset = hookgrad.sigmoid(hidden_reset + input_reset)
    update = hookgrad.sigmoid(hidden_update + input_update)
    new = hookgrad.tanh(input_new + hidden_new * reset)
    return (hidden - new) * update + new


class RNNCellBase(Module):
    """Weights ``weight_ih`` (chunks*hidden, input), ``weight_hh`` (chunks*hidden, hidden) and
    optional biases, all drawn from U(-1/sqrt(hidden), 1/sqrt(hidden)) in that order."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(hookgrad.empty((num_chunks * hidden_size, input_size),
                                                  dtype=dtype))
        self.weight_hh = Parameter(hookgrad.empty((num_chunks * hidden_size, hidden_size),
                                                  dtype=dtype))
        # Without bias the names still exist, holding None, as torch's cells have them.
        for name in ("bias_ih", "bias_hh"):
            self.register_parameter(name, Parameter(hookgrad.empty(num_chunks * hidden_size,
                                                                   dtype=dtype)) if bias else None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text

    def reset_parameters(self) -> None:
        """Redraws every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as
        torch."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def _prepare(self, input: Tensor, hidden: tuple, what: str) -> tuple:
        """Batch an unbatched step, fill missing states with zeros, and check sizes with
        torch's messages. Returns (input, states, batched)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        for index, state in enumerate(hidden):
            if state is not None and state.dim() not in (1, 2):
                name = what if len(hidden) == 1 else f"hx[{index}]"
                raise ValueError(f"{type(self).__name__}: Expected {name} to be 1D or 2D, got "
                                 f"{state.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        states = []
        for state in hidden:
            if state is None:
                state = hookgrad.zeros((input.shape[0], self.hidden_size), dtype=input.dtype)
            elif not batched:
                state = state.unsqueeze(0)
            states.append(state)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        for index, state in enumerate(states):
            if input.shape[0] != state.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match "
                                   f"hidden{index} batch size {state.shape[0]}")
            if state.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{index} has inconsistent hidden_size: got "
                                   f"{state.shape[1]}, expected {self.hidden_size}")
        if input.dtype != self.weight_ih.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                               f"{_short_name(input.dtype)} and "
                               f"{_short_name(self.weight_ih.dtype)}")
        return input, states, batched

    def _input_proj(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight_ih, self.bias_ih)


def _short_name(dtype) -> str:
    names = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long"}
    text = str(dtype).replace("torch.", "")
    return names.get(text, text)


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu); input (N, input_size) or
    (input_size,), hidden likewise with hidden_size; a missing hidden is zeros."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        input, (hx,), batched = self._prepare(input, (hx,), "hidden")
        if self.nonlinearity == "tanh":
            step = rnn_tanh_step
        elif self.nonlinearity == "relu":
            step = rnn_relu_step
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        result = step(self._input_proj(input), hx, self.weight_hh, self.bias_hh)
        return result if batched else result.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c'); ``hx`` is a pair (h, c) or None for zeros."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input: Tensor, hx: Optional[tuple] = None) -> tuple:
        input, states, batched = self._prepare(input, (None, None) if hx is None else tuple(hx),
                                               "hidden")
        h, c = lstm_step(self._input_proj(input), tuple(states), self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: h' = n + z * (h - n) with n = tanh(x_n + r * (h W_hn^T + b_hn))."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        input, (hx,), batched = self._prepare(input, (hx,), "hidden")
        result = gru_step(self._input_proj(input), hx, self.weight_hh, self.bias_hh)
        return result if batched else result.squeeze(0)
