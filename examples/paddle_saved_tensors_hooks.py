"""Both examples of Paddle's paddle.autograd.saved_tensors_hooks page, with only the import
changed to hookgrad's Paddle spelling."""
import hookgrad.compat.paddle as paddle
from hookgrad.compat.paddle.autograd import PyLayer

# Example1


def pack_hook(x):
    print("Packing", x)
    return x.numpy()


def unpack_hook(x):
    print("UnPacking", x)
    return paddle.to_tensor(x)


a = paddle.ones([3, 3])
b = paddle.ones([3, 3]) * 2
a.stop_gradient = False
b.stop_gradient = False
with paddle.autograd.saved_tensors_hooks(pack_hook, unpack_hook):
    y = paddle.multiply(a, b)
y.sum().backward()

# Example2


class cus_multiply(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        y = paddle.multiply(a, b)
        ctx.save_for_backward(a, b)
        return y

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensor()
        grad_a = dy * a
        grad_b = dy * b
        return grad_a, grad_b


a = paddle.ones([3, 3])
b = paddle.ones([3, 3]) * 2
a.stop_gradient = False
b.stop_gradient = False
with paddle.autograd.saved_tensors_hooks(pack_hook, unpack_hook):
    y = cus_multiply.apply(a, b)
y.sum().backward()
print(a.grad)
print(b.grad)
