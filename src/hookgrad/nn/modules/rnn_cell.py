"""The cell modules RNNCell, LSTMCell and GRUCell: parameters and checks here, the step
itself in ``nn/ops/rnn.py`` (shared with ``torch.*_cell`` and the whole-sequence layers)."""
from __future__ import annotations

import math
from typing import Optional

import hookgrad
from ...tensor import Tensor

from .. import functional as F
from .. import init
from ..ops.rnn import check_cell, gru_step, lstm_step, rnn_relu_step, rnn_tanh_step
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


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
        check_cell(input, states, self.hidden_size, self.input_size)
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
