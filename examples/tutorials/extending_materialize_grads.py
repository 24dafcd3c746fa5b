"""Extending torch.autograd: set_materialize_grads (PyTorch's "Extending PyTorch" notes).

With materialization off, backward receives None for an output that got no gradient instead of a
tensor of zeros, and must handle it.
"""
import hookgrad as torch
from hookgrad.autograd import Function
from hookgrad.autograd.function import once_differentiable


class SimpleFunc(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return x.clone(), x.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):
        print("SimpleFunc.backward got", g1, g2)
        x_grad = None
        if g1 is not None:
            x_grad = g1
        if g2 is not None:
            if x_grad is None:
                x_grad = g2
            else:
                x_grad += g2
        return x_grad


a = torch.tensor(1., requires_grad=True)
b, _ = SimpleFunc.apply(a)
b.backward()  # this will trigger backward with g2 = None
print(a.grad)

c, d = SimpleFunc.apply(a)
(c * 2 + d * 3).backward()
print(a.grad)
