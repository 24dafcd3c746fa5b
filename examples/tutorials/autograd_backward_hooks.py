"""Backward hooks execution (PyTorch's "Autograd mechanics" note).

Hooks on tensors, on graph nodes (pre-hooks and hooks) and post-accumulate-grad hooks on leaves:
the order they fire in, which fire when only some inputs are asked for, what a returned value
does. (Tensor hooks and in-place changes: autograd_hooks_inplace.py; what a node hook receives
when only some inputs are asked for: autograd_hooks_partial_inputs.py.)
"""
import hookgrad as torch

events = []


def log(name):
    def hook(*args):
        shapes = [None if a is None else (tuple(a.shape) if isinstance(a, torch.Tensor)
                                          else [None if g is None else tuple(g.shape) for g in a])
                  for a in args]
        events.append(f"{name} {shapes}")
    return hook


# The order in which the different hooks are fired
a = torch.randn(3, requires_grad=True)
b = a * 2
b.retain_grad()
c = b.sin()
b.register_hook(log("tensor hook on b"))
b.grad_fn.register_prehook(log("pre-hook on b.grad_fn"))
b.grad_fn.register_hook(log("hook on b.grad_fn"))
a.register_hook(log("tensor hook on a"))
a.register_post_accumulate_grad_hook(lambda t: events.append(f"post accumulate on a {t.grad}"))
c.sum().backward()
print("\n".join(events))
print(b.grad.equal(b.cos()), a.grad.equal(2 * b.cos()))
events.clear()

# A tensor hook's return value replaces the gradient; a node pre-hook's replaces its inputs
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * x
y.register_hook(lambda grad: grad * 10)
y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] + 1,))
y.sum().backward()
print(x.grad)

# A node hook's return value replaces the gradients it passes on
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x.exp()
y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 0,))
y.sum().backward()
print(x.grad)

# Whether a particular hook will be fired: only for what backward actually computes
u = torch.randn(2, requires_grad=True)
v = torch.randn(2, requires_grad=True)
w = u * v
u.register_hook(log("tensor hook on u"))
v.register_hook(log("tensor hook on v"))
w.grad_fn.register_hook(lambda grad_inputs, grad_outputs: events.append("hook on w.grad_fn"))
grads = torch.autograd.grad(w.sum(), inputs=(u,), retain_graph=True)
print(events, len(grads))
events.clear()
w.sum().backward(inputs=[v])
print(events, u.grad, v.grad is not None)
events.clear()


# Removing hooks with their handles
x = torch.ones(2, requires_grad=True)
handle = x.register_hook(lambda grad: grad * 100)
handle.remove()
(x * 3).sum().backward()
print(x.grad)

# Hooks on leaves that are not used by the graph are never called
unused = torch.ones(2, requires_grad=True)
unused.register_hook(lambda grad: print("never printed"))
(x * 2).sum().backward()
print(unused.grad)
