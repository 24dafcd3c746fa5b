"""Behavior of Tensor hooks when Tensor is modified in-place (PyTorch's "Autograd mechanics"
note).

A hook registered on a tensor that is then modified in place sees the gradient of the value it was
registered on; a hook registered after the change sees the gradient of the new value.
"""
import hookgrad as torch

events = []


def fn(grad):
    events.append(f"fn got {grad.item()}")
    return grad * 2


t = torch.tensor(1., requires_grad=True).sin()
t.cos_()
t.register_hook(fn)
t.backward()
print(events)
events.clear()

# A hook registered before the in-place change sees the gradient of the old value
leaf = torch.tensor(0.5, requires_grad=True)
t = leaf.sin()
t.register_hook(lambda grad: events.append(f"before in-place: {grad.item()}"))
t.cos_()
t.register_hook(lambda grad: events.append(f"after in-place: {grad.item()}"))
t.backward()
print(events, leaf.grad)
