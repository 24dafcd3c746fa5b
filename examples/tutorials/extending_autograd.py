"""Extending torch.autograd (PyTorch's "Extending PyTorch" notes).

Custom Functions with forward / setup_context / backward: LinearFunction (optional bias,
needs_input_grad), MulConstant (a non-tensor argument), MyCube (two outputs, the second one usable
for double backward), a Function whose second output is marked non-differentiable; a Linear module
built on LinearFunction; everything checked with gradcheck.
"""
import hookgrad as torch
import hookgrad.nn as nn
from hookgrad.autograd import Function, gradcheck
from hookgrad.autograd.function import once_differentiable


# Inherit from Function
class LinearFunction(Function):

    # Note that forward, setup_context, and backward are @staticmethods
    @staticmethod
    def forward(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    # inputs is a Tuple of all of the inputs passed to forward.
    # output is the output of the forward().
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    # This function has only a single output, so it gets only one gradient
    @staticmethod
    def backward(ctx, grad_output):
        # This is a pattern that is very convenient - at the top of backward
        # unpack saved_tensors and initialize all gradients w.r.t. inputs to
        # None. Thanks to the fact that additional trailing Nones are
        # ignored, the return statement is simple even when the function has
        # optional inputs.
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None

        # These needs_input_grad checks are optional and there only to
        # improve efficiency. If you want to make your code simpler, you can
        # skip them. Returning gradients for inputs that don't require it is
        # not an error.
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)

        return grad_input, grad_weight, grad_bias


# Option 1: alias
linear = LinearFunction.apply


# Option 2: wrap in a function, to support default args and keyword args.
def linear_fn(input, weight, bias=None):
    return LinearFunction.apply(input, weight, bias)


class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        # ctx is a context object that can be used to stash information
        # for backward computation
        tensor, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        # We return as many input gradients as there were arguments.
        # Gradients of non-Tensor arguments to forward must be None.
        return grad_output * ctx.constant, None


class MyCube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        # We wish to save dx for backward. In order to do so, it must
        # be returned as an output.
        dx = 3 * x ** 2
        result = x ** 3
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        # In order for the autograd.Function to work with higher-order
        # gradients, we must add the gradient contribution of `dx`,
        # which is grad_dx * 6 * x.
        result = grad_output * dx + grad_dx * 6 * x
        return result


# Wrap MyCube in a function so that it is clearer what the output is
def my_cube(x):
    result, dx = MyCube.apply(x)
    return result


class MaxWithIndex(Function):
    """The largest entry of each column and where it is; the index is not differentiable."""

    @staticmethod
    def forward(ctx, x):
        values, idx = x.max(dim=0)
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(x, idx)
        return values, idx

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):  # still need to accept g2
        x, idx = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        grad_input.scatter_(0, idx.unsqueeze(0), g1.unsqueeze(0))
        return grad_input


# gradcheck takes a tuple of tensors as input, check if your gradient
# evaluated with these tensors are close enough to numerical
# approximations and returns True if they all verify this condition.
input = (torch.randn(20, 20, dtype=torch.double, requires_grad=True),
         torch.randn(30, 20, dtype=torch.double, requires_grad=True),
         torch.randn(30, dtype=torch.double, requires_grad=True))
test = gradcheck(linear, input, eps=1e-6, atol=1e-4)
print(test)

# Without a bias, needs_input_grad has a False for it and backward returns None there.
x = torch.randn(4, 3, requires_grad=True)
w = torch.randn(2, 3)
out = linear_fn(x, w)
print(out.grad_fn, out.grad_fn.needs_input_grad)
out.sum().backward()
print(x.grad, w.grad)

x = torch.randn(3, requires_grad=True)
y = MulConstant.apply(x, 2.5)
y.sum().backward()
print(y, x.grad)
print(gradcheck(lambda t: MulConstant.apply(t, 2.5),
                (torch.randn(5, dtype=torch.double, requires_grad=True),)))

x = torch.tensor([1.0, 2.0, -0.5], dtype=torch.double, requires_grad=True)
print(gradcheck(my_cube, (x,)))
print(torch.autograd.gradgradcheck(my_cube, (x,)))
result, dx = MyCube.apply(x)
print(result, dx)
grad_x, = torch.autograd.grad(result.sum(), x, create_graph=True)
grad_grad_x, = torch.autograd.grad(grad_x.sum(), x)
print(grad_x, grad_grad_x)

x = torch.randn(4, 3, dtype=torch.double, requires_grad=True)
values, idx = MaxWithIndex.apply(x)
print(values.requires_grad, idx.requires_grad, idx.dtype, idx.grad_fn)
values.sum().backward()
print(x.grad)
print(gradcheck(lambda t: MaxWithIndex.apply(t)[0], (x,)))

class Linear(nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super().__init__()
        self.input_features = input_features
        self.output_features = output_features

        # nn.Parameter is a special kind of Tensor, that will get
        # automatically registered as Module's parameter once it's assigned
        # as an attribute. Parameters and buffers need to be registered, or
        # they won't appear in .parameters() (doesn't apply to buffers), and
        # won't be converted when e.g. .cuda() is called. You can use
        # .register_buffer() to register buffers.
        # nn.Parameters require gradients by default.
        self.weight = nn.Parameter(torch.empty(output_features, input_features))
        if bias:
            self.bias = nn.Parameter(torch.empty(output_features))
        else:
            # You should always register all possible parameters, but the
            # optional ones can be None if you want.
            self.register_parameter('bias', None)

        # Not a very smart way to initialize weights
        nn.init.uniform_(self.weight, -0.1, 0.1)
        if self.bias is not None:
            nn.init.uniform_(self.bias, -0.1, 0.1)

    def forward(self, input):
        # See the autograd section for explanation of what happens here.
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        # (Optional)Set the extra information about this module. You can test
        # it by printing an object of this class.
        return 'input_features={}, output_features={}, bias={}'.format(
            self.input_features, self.output_features, self.bias is not None
        )


module = Linear(3, 2)
print(module)
print(Linear(3, 2, bias=False))
out = module(torch.randn(5, 3))
print(out)
out.sum().backward()
print(module.weight.grad, module.bias.grad)
