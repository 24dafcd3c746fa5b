"""hookgrad.compat.paddle: Paddle's names over the same machinery, checked against hookgrad's
torch spelling (Paddle itself is not installed here)."""
import numpy as np
import pytest

import hookgrad
import hookgrad.compat.paddle as paddle
from hookgrad.compat.paddle.autograd import PyLayer


def test_stop_gradient_is_the_inverse_of_requires_grad():
    a = paddle.ones([2, 2])
    assert a.stop_gradient is True
    a.stop_gradient = False
    assert a.requires_grad is True


def test_saved_tensors_hooks_see_paddle_tensors_and_numpy_round_trip():
    seen = []

    def pack(x):
        seen.append(type(x).__name__)
        return x.numpy()

    def unpack(x):
        return paddle.to_tensor(x)

    left = paddle.to_tensor([[1.0, -2.0], [0.5, 4.0]], stop_gradient=False)
    right = paddle.zeros([2, 2]) + 3
    right.stop_gradient = False
    with paddle.autograd.saved_tensors_hooks(pack, unpack):
        product = paddle.multiply(left, right)
    product.sum().backward()
    assert seen == ["Tensor", "Tensor"]
    np.testing.assert_array_equal(left.grad.numpy(), np.full((2, 2), 3.0, np.float32))
    np.testing.assert_array_equal(right.grad.numpy(), left.numpy())


class Cube(PyLayer):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * x * x * scale

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return dy * 3 * x * x * ctx.scale


def test_pylayer_gradient_equals_the_torch_spelling():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    Cube.apply(x, 2.0).sum().backward()
    reference = hookgrad.tensor([1.0, 2.0], requires_grad=True)
    (reference ** 3 * 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), reference.grad.numpy())


def test_pylayer_saves_through_the_single_door():
    packed = []
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    with paddle.autograd.saved_tensors_hooks(lambda t: packed.append(t.shape) or t, lambda t: t):
        y = Cube.apply(x, 1.0)
    assert packed == [[2]]
    y.sum().backward()


def test_pylayer_wrong_number_of_gradients_names_the_layer():
    class Bad(PyLayer):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, dy):
            return dy

    a = paddle.to_tensor([1.0], stop_gradient=False)
    b = paddle.to_tensor([2.0], stop_gradient=False)
    with pytest.raises(RuntimeError, match="Bad.backward returned 1 gradients"):
        Bad.apply(a, b).sum().backward()


def test_repr_is_paddle_style():
    text = repr(paddle.to_tensor([1.0, 2.0]))
    assert text.startswith("Tensor(shape=[2], dtype=float32, place=Place(cpu), "
                           "stop_gradient=True,")
