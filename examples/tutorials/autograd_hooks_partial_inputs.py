"""Whether a particular hook will be fired, and with what (PyTorch's "Autograd mechanics" note).

When backward is asked for the gradients of only some inputs, a node computes only the gradients
that lead to them: its hooks see None in the other positions, and the other inputs' tensor hooks
never fire.
"""
import hookgrad as torch

events = []


def node_hook(name):
    def hook(grad_inputs, grad_outputs):
        shapes = [None if g is None else tuple(g.shape) for g in grad_inputs]
        events.append(f"{name}: grad_inputs {shapes}")
    return hook


u = torch.randn(2, requires_grad=True)
v = torch.randn(2, requires_grad=True)
w = u * v
u.register_hook(lambda grad: events.append("tensor hook on u"))
v.register_hook(lambda grad: events.append("tensor hook on v"))
w.grad_fn.register_hook(node_hook("hook on w.grad_fn"))
grads = torch.autograd.grad(w.sum(), inputs=(u,), retain_graph=True)
print(events, len(grads))
events.clear()
w.sum().backward(inputs=[v])
print(events, u.grad, v.grad is not None)
