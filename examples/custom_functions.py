"""Custom autograd Functions: a hand-written double backward, outputs that carry no gradient, and
gradients that may be absent.

1. ``SoftSign`` computes x / (1 + |x|). Its backward is another Function, ``SoftSignGrad``, whose
   own backward is written by hand, so second derivatives (Hessian-vector products,
   gradgradcheck) use our formulas instead of differentiating through the first backward.
2. ``RankOrder`` returns a vector sorted in ascending order and the permutation that sorts it. The
   permutation is an integer tensor, marked non-differentiable; the gradient of the sorted values
   is scattered back to where each value came from.
3. ``SignSplit`` returns the positive and the negative part of its input. With
   ``ctx.set_materialize_grads(False)`` its backward receives ``None`` for an output nobody used,
   instead of a tensor of zeros, and can skip that work.

Everything is in float64 and checked with gradcheck. Run it as it is, or with the first import
changed to ``import torch``.
"""
import hookgrad as torch
from hookgrad.autograd import Function, gradcheck, gradgradcheck
from hookgrad.autograd.function import once_differentiable


class SoftSign(Function):
    """y = x / (1 + |x|), so dy/dx = 1 / (1 + |x|)^2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x / (1 + x.abs())

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return SoftSignGrad.apply(x, grad_output)


class SoftSignGrad(Function):
    """g(x, v) = v / (1 + |x|)^2, the gradient SoftSign passes back for an incoming v.

    dg/dx = -2 v sign(x) / (1 + |x|)^3 and dg/dv = 1 / (1 + |x|)^2.
    """

    @staticmethod
    def forward(ctx, x, grad_output):
        ctx.save_for_backward(x, grad_output)
        return grad_output / (1 + x.abs()) ** 2

    @staticmethod
    def backward(ctx, grad_grad):
        x, grad_output = ctx.saved_tensors
        denominator = 1 + x.abs()
        grad_x = grad_x_of_v = None
        if ctx.needs_input_grad[0]:
            grad_x = -2 * grad_grad * grad_output * x.sign() / denominator ** 3
        if ctx.needs_input_grad[1]:
            grad_x_of_v = grad_grad / denominator ** 2
        return grad_x, grad_x_of_v


x = torch.tensor([-2.0, -0.5, 0.25, 1.0, 3.0], dtype=torch.float64, requires_grad=True)
y = SoftSign.apply(x)
print("softsign:", y)
print("graph:", y.grad_fn.name(), "->", [node.name() for node, _ in y.grad_fn.next_functions])

# First derivative, kept differentiable; then the second through SoftSignGrad.backward.
(slope,) = torch.autograd.grad(y.sum(), x, create_graph=True)
print("first derivative:", slope)
print("its node:", slope.grad_fn.name())
(curvature,) = torch.autograd.grad(slope.sum(), x)
print("second derivative:", curvature)

# The same two derivatives from the formula written with built-in ops.
reference = x / (1 + x.abs())
(reference_slope,) = torch.autograd.grad(reference.sum(), x, create_graph=True)
(reference_curvature,) = torch.autograd.grad(reference_slope.sum(), x)
print("matches built-in ops:", torch.allclose(slope, reference_slope),
      torch.allclose(curvature, reference_curvature))

probe = torch.tensor([0.3, -1.2, 0.7, 2.0, -0.4], dtype=torch.float64, requires_grad=True)
print("gradcheck:", gradcheck(SoftSign.apply, (probe,)))
print("gradgradcheck:", gradgradcheck(SoftSign.apply, (probe,)))
print("gradcheck of the backward itself:",
      gradcheck(SoftSignGrad.apply, (probe, torch.ones_like(probe).requires_grad_())))


class RankOrder(Function):
    """(values sorted ascending, the permutation that sorts them); only the values carry
    gradient."""

    @staticmethod
    def forward(ctx, values):
        order = values.argsort()
        ctx.mark_non_differentiable(order)
        ctx.save_for_backward(order)
        return values[order], order

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_sorted, grad_order):
        (order,) = ctx.saved_tensors
        grad_values = torch.zeros_like(grad_sorted)
        grad_values[order] = grad_sorted
        return grad_values


scores = torch.tensor([0.9, -1.5, 2.5, 0.1], dtype=torch.float64, requires_grad=True)
ranked, order = RankOrder.apply(scores)
print("ranked:", ranked)
print("order:", order, "requires grad:", order.requires_grad)
weights = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
(ranked * weights).sum().backward()
print("gradient of a rank-weighted sum:", scores.grad)
print("gradcheck:", gradcheck(lambda v: RankOrder.apply(v)[0], (scores.detach().requires_grad_(),)))


class SignSplit(Function):
    """(max(x, 0), min(x, 0)); backward is told which parts were used."""

    @staticmethod
    def forward(ctx, values):
        ctx.save_for_backward(values)
        ctx.set_materialize_grads(False)  # an unused output's gradient arrives as None
        return values.clamp(min=0), values.clamp(max=0)

    @staticmethod
    def backward(ctx, grad_positive, grad_negative):
        (values,) = ctx.saved_tensors
        print("  backward received:", "positive" if grad_positive is not None else "-",
              "negative" if grad_negative is not None else "-")
        grad = torch.zeros_like(values)
        if grad_positive is not None:
            grad = grad + grad_positive * (values > 0)
        if grad_negative is not None:
            grad = grad + grad_negative * (values < 0)
        return grad


signal = torch.tensor([1.5, -2.0, 0.5, -0.25], dtype=torch.float64, requires_grad=True)
positive, negative = SignSplit.apply(signal)
print("only the positive part used:")
(3 * positive).sum().backward()
print("  gradient:", signal.grad)
signal.grad = None
positive, negative = SignSplit.apply(signal)
print("both parts used:")
(positive - 2 * negative).sum().backward()
print("  gradient:", signal.grad)
