"""Extending torch.autograd: mark_non_differentiable, as the docs show it, on sort.

The indices that sort returns are not differentiable; backward still receives a (zero) gradient
for them and scatters the values' gradient back with index_add_.
"""
import hookgrad as torch
from hookgrad.autograd import Function
from hookgrad.autograd.function import once_differentiable


class Func(Function):
    @staticmethod
    def forward(ctx, x):
        sorted, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(x, idx)
        return sorted, idx

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):  # still need to accept g2
        x, idx = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        grad_input.index_add_(0, idx, g1)
        return grad_input


x = torch.randn(6, dtype=torch.double, requires_grad=True)
sorted, idx = Func.apply(x)
print(sorted, idx)
print(idx.requires_grad)
(sorted * torch.arange(6.0, dtype=torch.double)).sum().backward()
print(x.grad)
print(torch.autograd.gradcheck(lambda t: Func.apply(t)[0], (x,)))
