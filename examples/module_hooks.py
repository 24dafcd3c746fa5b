"""register_forward_hook and register_backward_hook as the module-hook article describes them,
with only the import changed; the full backward hook is shown beside the legacy one."""
import numpy as np

import hookgrad as torch
import hookgrad.nn as nn

model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.tensor(np.cos(np.arange(p.numel()) + i).reshape(tuple(p.shape)),
                             dtype=torch.float32))

events = []
model[0].register_forward_hook(
    lambda m, inp, out: events.append(("forward", type(m).__name__, tuple(out.shape))))
model[2].register_full_backward_hook(
    lambda m, gin, gout: events.append(("full backward", [tuple(g.shape) for g in gin],
                                        [tuple(g.shape) for g in gout])))
model[2].register_full_backward_pre_hook(
    lambda m, gout: events.append(("backward pre", [tuple(g.shape) for g in gout])))


def double_input_grad(module, grad_input, grad_output):
    return tuple(None if g is None else g * 2 for g in grad_input)


model[0].register_full_backward_hook(double_input_grad)

x = torch.tensor([[0.1, 0.2, 0.3], [-0.4, 0.5, -0.6]], requires_grad=True)
model(x).pow(2).sum().backward()
for event in events:
    print(event)
print(x.grad)
print(model)
