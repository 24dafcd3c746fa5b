"""A network written from scratch whose graph changes shape from one step to the next.

The model separates two interleaved spirals of points. It is built from ``nn.Parameter`` and
plain tensor operations only (no ``nn.Linear``), and its forward pass is ordinary Python: the
number of times the shared middle block is applied depends on the step, so every step records a
different graph and backward follows whichever one was recorded. The first third of training
updates the parameters by hand; the rest hands the same job to ``torch.optim.SGD`` with
momentum.

Hooks watch from outside: a forward pre-hook counts calls, a full backward hook on the middle
block collects the gradient norms flowing out of it (one per application), a tensor hook clips
the gradient of the hidden features, and a post-accumulate-grad hook counts how often each
parameter received its gradient. Run it as it is, or with the first import changed to
``import torch``.
"""
import math

import numpy as np

import hookgrad as torch
from hookgrad import nn

torch.set_default_dtype(torch.float64)  # long training: keep rounding out of the comparison

# Two spirals of 48 points each, laid out with NumPy so both libraries see the same data.
turn = np.linspace(0.25, 2.5 * math.pi, 48)
arm = np.stack([turn * np.cos(turn), turn * np.sin(turn)], axis=1) / (2.5 * math.pi)
points = torch.tensor(np.concatenate([arm, -arm]), dtype=torch.get_default_dtype())
labels = torch.tensor([0.0] * 48 + [1.0] * 48)


def initial(rows, columns, seed):
    values = np.random.default_rng(seed).normal(0.0, columns ** -0.5, (rows, columns))
    return nn.Parameter(torch.tensor(values, dtype=torch.get_default_dtype()))


class Dense(nn.Module):
    """x @ weight.T + bias, written out by hand."""

    def __init__(self, inputs, outputs, seed):
        super().__init__()
        self.weight = initial(outputs, inputs, seed)
        self.bias = nn.Parameter(torch.zeros(outputs))

    def forward(self, x):
        return x @ self.weight.t() + self.bias


class Residual(nn.Module):
    """x + tanh(dense(x)): applying it again and again keeps the width."""

    def __init__(self, width, seed):
        super().__init__()
        self.dense = Dense(width, width, seed)

    def forward(self, x):
        return x + torch.tanh(self.dense(x))


class SpiralNet(nn.Module):
    def __init__(self, width=24):
        super().__init__()
        self.lift = Dense(2, width, seed=1)
        self.middle = Residual(width, seed=2)
        self.readout = Dense(width, 1, seed=3)

    def forward(self, x, repeats):
        hidden = torch.tanh(self.lift(x * 3))
        for _ in range(repeats):  # the graph's depth is decided here, at run time
            hidden = self.middle(hidden)
        if hidden.requires_grad:
            hidden.register_hook(lambda grad: grad.clamp(-0.05, 0.05))
        return self.readout(hidden).squeeze(1)


model = SpiralNet()
calls = []
model.register_forward_pre_hook(lambda module, args: calls.append(args[1]))
outflow = []
model.middle.register_full_backward_hook(
    lambda module, grad_input, grad_output: outflow.append(grad_input[0].norm().item()))
received = {name: 0 for name, _ in model.named_parameters()}
for name, param in model.named_parameters():
    param.register_post_accumulate_grad_hook(
        lambda p, name=name: received.__setitem__(name, received[name] + 1))

loss_fn = nn.BCEWithLogitsLoss()
step_size = 0.3
for step in range(40):
    repeats = 1 + step % 3
    loss = loss_fn(model(points, repeats), labels)
    outflow.clear()
    loss.backward()
    if step == 0:
        print("graph of the first step:", loss.grad_fn.name(), "<-",
              loss.grad_fn.next_functions[0][0].name())
    if step < 3:
        print(f"step {step}: {repeats} pass(es) through the middle block, gradient norms out of "
              f"it: {[round(norm, 4) for norm in outflow]}")
    with torch.no_grad():
        for param in model.parameters():
            param -= step_size * param.grad
            param.grad = None
    if step % 10 == 9:
        print(f"step {step}: loss {loss.item():.4f}")

optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(40, 120):
    repeats = 1 + step % 3
    optimizer.zero_grad()
    loss = loss_fn(model(points, repeats), labels)
    loss.backward()
    optimizer.step()
    if step % 20 == 19:
        print(f"step {step}: loss {loss.item():.4f}")

with torch.no_grad():
    for repeats in (1, 2, 3):
        guesses = model(points, repeats) > 0
        print(f"{repeats} pass(es): {int((guesses == labels.bool()).sum())}/96 points right")
print("forward calls by depth:", {depth: calls.count(depth) for depth in (1, 2, 3)})
print("gradients received per parameter:", received)
