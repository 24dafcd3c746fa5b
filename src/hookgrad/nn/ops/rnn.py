"""Recurrent layers as functions: one step of each cell, a layer loop over time, and torch's
low-level ``torch.lstm`` / ``gru`` / ``rnn_tanh`` / ``rnn_relu`` and ``*_cell`` entry points.

This is the one implementation behind ``nn.RNN``/``LSTM``/``GRU`` and their cells too. A step
takes the input projection ``x W_ih^T + b_ih`` already computed, so a whole sequence is
projected with one matmul per layer and direction and only the recurrent part loops over time.
Everything is composed from Tensor ops, so gradients and double backward come from the engine.
Gate order is torch's: LSTM (input, forget, cell, output), GRU (reset, update, new).

Packed batches (``batch_sizes``) run as torch's CPU kernel runs them: sequences are sorted
longest first, so at each step the batch shrinks from the end (or, in reverse, grows), and a
sequence's final state is the one it had at its own last step.
"""
from __future__ import annotations

from typing import Optional, Sequence

import hookgrad
from ... import _dtype
from ...tensor import Tensor
from .. import functional as F

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
           "rnn_relu_cell"]


# -- one time step ---------------------------------------------------------------------------

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


_SINGLE_STEPS = {"RNN_TANH": rnn_tanh_step, "RNN_RELU": rnn_relu_step, "GRU": gru_step}
GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _tuple_step(mode: str):
    """The step over a tuple of states: RNN and GRU carry one, LSTM two (h, c)."""
    if mode == "LSTM":
        return lstm_step
    single = _SINGLE_STEPS[mode]
    return lambda x, states, weight_hh, bias_hh: (single(x, states[0], weight_hh, bias_hh),)


# -- one layer in one direction ----------------------------------------------------------------

def _run_direction(step, projections: list, initial: tuple, reverse: bool) -> tuple:
    """Run one layer in one direction over per-step input projections (batch sizes may shrink
    over time, as in a packed batch). Returns (outputs in time order, final states)."""
    outputs = [None] * len(projections)
    if not reverse:
        states, finished = initial, []
        for t, projection in enumerate(projections):
            size = projection.shape[0]
            if size < states[0].shape[0]:  # sequences that ended at t-1 keep their state
                finished.append(tuple(s[size:] for s in states))
                states = tuple(s[:size] for s in states)
            states = step(projection, states)
            outputs[t] = states[0]
        if finished:
            finished.append(states)
            states = tuple(hookgrad.cat([part[i] for part in reversed(finished)])
                           for i in range(len(states)))
        return outputs, states
    size = projections[-1].shape[0]
    states = tuple(s[:size] for s in initial) if size < initial[0].shape[0] else initial
    for t in range(len(projections) - 1, -1, -1):
        projection = projections[t]
        grown = projection.shape[0]
        if grown > size:  # longer sequences join at their last step
            states = tuple(hookgrad.cat([s, start[size:grown]])
                           for s, start in zip(states, initial))
            size = grown
        states = step(projection, states)
        outputs[t] = states[0]
    return outputs, states


def run_layers(mode: str, input: Tensor, states: tuple, weights: Sequence[Sequence[Tensor]],
               has_biases: bool, num_layers: int, dropout: float, train: bool,
               bidirectional: bool, batch_first: bool,
               batch_sizes: Optional[list] = None) -> tuple:
    """Every layer and direction of a stacked RNN.

    ``input`` is (T, B, I) (or (B, T, I) with ``batch_first``), or packed data (N, I) with
    ``batch_sizes``; ``states`` holds (layers*directions, B, size) tensors (h, or h and c);
    ``weights[layer * directions + direction]`` is ``[w_ih, w_hh, (b_ih, b_hh), (w_hr)]``.
    Dropout with probability ``dropout`` falls between layers when ``train``. Returns (output in
    the input's layout, tuple of final states stacked like ``states``).
    """
    if batch_sizes is None and batch_first:
        input = input.transpose(0, 1)
    num_directions = 2 if bidirectional else 1
    step = _tuple_step(mode)
    initial = [s.unbind(0) for s in states]
    finals = []
    layer_input = input
    for layer in range(num_layers):
        directions = []
        for direction in range(num_directions):
            index = layer * num_directions + direction
            group = list(weights[index])
            weight_ih, weight_hh = group[0], group[1]
            bias_ih, bias_hh = (group[2], group[3]) if has_biases else (None, None)
            extra = group[4 if has_biases else 2:]  # the LSTM projection, when there is one
            projection = F.linear(layer_input, weight_ih, bias_ih)
            if batch_sizes is None:
                projections = list(projection.unbind(0))
            else:
                projections = list(projection.split(batch_sizes))

            def layer_step(x, s, weight_hh=weight_hh, bias_hh=bias_hh, extra=extra):
                return step(x, s, weight_hh, bias_hh, *extra)

            outputs, final = _run_direction(layer_step, projections,
                                            tuple(start[index] for start in initial),
                                            reverse=direction == 1)
            finals.append(final)
            directions.append(hookgrad.stack(outputs) if batch_sizes is None
                              else hookgrad.cat(outputs))
        layer_input = directions[0] if num_directions == 1 else hookgrad.cat(directions, -1)
        if dropout and train and layer < num_layers - 1:
            layer_input = F.dropout(layer_input, dropout, True)
    output = layer_input
    if batch_sizes is None and batch_first:
        output = output.transpose(0, 1)
    stacked = tuple(hookgrad.stack([final[i] for final in finals]) for i in range(len(states)))
    return output, stacked


# -- torch.lstm / gru / rnn_tanh / rnn_relu ----------------------------------------------------

def _group_params(name: str, params, has_biases: bool, num_layers: int,
                  bidirectional: bool) -> list:
    """The flat parameter list cut into one group per layer and direction, as torch reads it
    (an LSTM group may carry a fifth or third tensor, the projection W_hr)."""
    params = list(params)
    groups = num_layers * (2 if bidirectional else 1)
    base = 4 if has_biases else 2
    if groups <= 0 or len(params) % groups:
        raise RuntimeError("got an incorrect number of RNN parameters")
    per_group = len(params) // groups
    if per_group != base and not (name == "lstm" and per_group == base + 1):
        raise RuntimeError("got an incorrect number of RNN parameters")
    return [params[i * per_group:(i + 1) * per_group] for i in range(groups)]


def _split_packed_args(name: str, args: tuple, kwargs: dict) -> tuple:
    """torch's two signatures: (input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first) and (data, batch_sizes, hx, params, has_biases, num_layers,
    dropout, train, bidirectional); the second is told apart by a tensor in second place."""
    padded = ("input", "hx", "params", "has_biases", "num_layers", "dropout", "train",
              "bidirectional", "batch_first")
    packed = ("data", "batch_sizes", "hx", "params", "has_biases", "num_layers", "dropout",
              "train", "bidirectional")
    is_packed = "batch_sizes" in kwargs or "data" in kwargs or (
        len(args) > 3 and isinstance(args[3], (list, tuple)))
    names = packed if is_packed else padded
    if len(args) > len(names):
        raise TypeError(f"{name}() takes at most {len(names)} arguments ({len(args)} given)")
    values = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in values:
            raise TypeError(f"{name}() got an unexpected or repeated argument '{key}'")
        values[key] = value
    missing = [key for key in names if key not in values]
    if missing:
        raise TypeError(f"{name}() missing required argument '{missing[0]}'")
    return is_packed, values


def _stacked_rnn(name: str, mode: str, args: tuple, kwargs: dict) -> tuple:
    is_packed, values = _split_packed_args(name, args, kwargs)
    hx = values["hx"]
    if mode == "LSTM":
        hx = tuple(hx)
        if len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
    else:
        hx = (hx,)
    num_layers, bidirectional = int(values["num_layers"]), bool(values["bidirectional"])
    has_biases = bool(values["has_biases"])
    needed = num_layers * (2 if bidirectional else 1)
    if bidirectional and any(h.ndim == 0 or h.shape[0] % 2 for h in hx):
        raise RuntimeError("Odd number of params or hiddens given to a bidirectional RNN")
    # torch's message for any count of states other than layers * directions
    if any(h.ndim == 0 or h.shape[0] != needed for h in hx):
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    groups = _group_params(name, values["params"], has_biases, num_layers, bidirectional)
    if is_packed:
        data, batch_first = values["data"], False
        batch_sizes = [int(b) for b in values["batch_sizes"].tolist()]
        # rows past the batch sizes' total are not read (as in torch)
        data = data[:sum(batch_sizes)] if sum(batch_sizes) < data.shape[0] else data
        for h in hx:
            if batch_sizes and (h.ndim != 3 or h.shape[1] != batch_sizes[0]):
                raise RuntimeError(f"The size of tensor a ({h.shape[1] if h.ndim > 1 else 1})"
                                   f" must match the size of tensor b ({batch_sizes[0]}) at "
                                   f"non-singleton dimension 0")
    else:
        data, batch_first, batch_sizes = values["input"], bool(values["batch_first"]), None
        if data.ndim != 3:  # torch fails on a dim of a per-step slice, in these words
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                             "got 1)")
        batch = data.shape[0 if batch_first else 1]
        for h in hx:
            # a padded batch never shrinks, so a state of another batch size is an error here
            # (the layer loop would read it as a packed batch's finished sequences)
            if h.ndim != 3 or h.shape[1] != batch:
                raise RuntimeError(f"The size of tensor a ({h.shape[1] if h.ndim > 1 else 1})"
                                   f" must match the size of tensor b ({batch}) at "
                                   f"non-singleton dimension 0")
    _check_dtypes(data, groups[0][0], groups[0][2] if has_biases else None)
    output, finals = run_layers(mode, data, hx, groups, has_biases, num_layers,
                                float(values["dropout"]), bool(values["train"]), bidirectional,
                                batch_first, batch_sizes)
    return (output,) + finals


def lstm(*args, **kwargs) -> tuple:
    """torch's low-level LSTM over flat parameters: ``lstm(input, (h0, c0), params, has_biases,
    num_layers, dropout, train, bidirectional, batch_first)`` or, packed, ``lstm(data,
    batch_sizes, (h0, c0), params, has_biases, num_layers, dropout, train, bidirectional)``.
    Returns (output, h_n, c_n)."""
    return _stacked_rnn("lstm", "LSTM", args, kwargs)


def gru(*args, **kwargs) -> tuple:
    """torch's low-level GRU over flat parameters (signatures as :func:`lstm`, with one hidden
    tensor). Returns (output, h_n)."""
    return _stacked_rnn("gru", "GRU", args, kwargs)


def rnn_tanh(*args, **kwargs) -> tuple:
    """torch's low-level Elman RNN with tanh (signatures as :func:`gru`). Returns (output,
    h_n)."""
    return _stacked_rnn("rnn_tanh", "RNN_TANH", args, kwargs)


def rnn_relu(*args, **kwargs) -> tuple:
    """torch's low-level Elman RNN with relu (signatures as :func:`gru`). Returns (output,
    h_n)."""
    return _stacked_rnn("rnn_relu", "RNN_RELU", args, kwargs)


# -- torch.*_cell ------------------------------------------------------------------------------

def _check_dtypes(input: Tensor, weight: Tensor, bias: Optional[Tensor]) -> None:
    """torch's message for an input whose dtype is not the weights': the addmm one with a bias,
    the matmul one without."""
    if input.dtype == weight.dtype:
        return
    if bias is not None:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{_dtype.scalar_type_name(input.dtype)} and "
                           f"{_dtype.scalar_type_name(weight.dtype)}")
    raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                       f"{_dtype.cpp_type_name(input.dtype)} != "
                       f"{_dtype.cpp_type_name(weight.dtype)}")


def check_cell(input: Tensor, states: Sequence[Tensor], hidden_size: int,
               input_size: int) -> None:
    """torch's size checks of one cell step on a batched (N, input_size) input."""
    if input.shape[1] != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                           f"expected {input_size}")
    for index, state in enumerate(states):
        if input.shape[0] != state.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match "
                               f"hidden{index} batch size {state.shape[0]}")
        if state.shape[1] != hidden_size:
            raise RuntimeError(f"hidden{index} has inconsistent hidden_size: got "
                               f"{state.shape[1]}, expected {hidden_size}")


def _cell_projection(name: str, input: Tensor, states: Sequence[Tensor], w_ih: Tensor,
                     w_hh: Tensor, b_ih: Optional[Tensor]) -> Tensor:
    if input.ndim != 2:  # torch's cells take batched input only, and fail on dim 1
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-{max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got 1)")
    check_cell(input, states, w_hh.shape[1], w_ih.shape[1])
    _check_dtypes(input, w_ih, b_ih)
    return F.linear(input, w_ih, b_ih)


def lstm_cell(input: Tensor, hx, w_ih: Tensor, w_hh: Tensor, b_ih: Optional[Tensor] = None,
              b_hh: Optional[Tensor] = None) -> tuple:
    """One LSTM step on (N, input_size) input with ``hx = (h, c)``; returns (h', c')."""
    if isinstance(hx, Tensor):
        raise TypeError("lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, "
                        "not Tensor")
    hx = tuple(hx)
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    projection = _cell_projection("lstm_cell", input, hx, w_ih, w_hh, b_ih)
    return lstm_step(projection, hx, w_hh, b_hh)


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
             b_ih: Optional[Tensor] = None, b_hh: Optional[Tensor] = None) -> Tensor:
    """One GRU step on (N, input_size) input and (N, hidden_size) state; returns h'."""
    projection = _cell_projection("gru_cell", input, (hx,), w_ih, w_hh, b_ih)
    return gru_step(projection, hx, w_hh, b_hh)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Optional[Tensor] = None, b_hh: Optional[Tensor] = None) -> Tensor:
    """One Elman step with tanh: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    projection = _cell_projection("rnn_tanh_cell", input, (hx,), w_ih, w_hh, b_ih)
    return rnn_tanh_step(projection, hx, w_hh, b_hh)


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Optional[Tensor] = None, b_hh: Optional[Tensor] = None) -> Tensor:
    """One Elman step with relu: h' = relu(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    projection = _cell_projection("rnn_relu_cell", input, (hx,), w_ih, w_hh, b_ih)
    return rnn_relu_step(projection, hx, w_hh, b_hh)
