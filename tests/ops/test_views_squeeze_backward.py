"""squeeze's gradient puts each removed dimension back with ``unsqueeze``, lowest first, as
torch's does: a graph of the gradient shows one ``UnsqueezeBackward0`` per removed dimension
(none when nothing was removed), and values, shapes and strides are torch's."""
import numpy as np
import pytest
import torch

import hookgrad

SQUEEZES = {
    "all": lambda t: t.squeeze(),
    "one_dim": lambda t: t.squeeze(1),
    "negative_dim": lambda t: t.squeeze(-1),
    "dims": lambda t: t.squeeze((3, 1)),
    "not_one": lambda t: t.squeeze(0),
    "of_a_select": lambda t: t[0].squeeze(),
    "transposed": lambda t: t.transpose(0, 2).squeeze(),
    "in_place": lambda t: (t * 1).squeeze_(1),
}


def _chain(node):
    names = []
    while node is not None and not node.name().startswith("torch::"):
        names.append(node.name())
        node = node.next_functions[0][0] if node.next_functions else None
    return names


@pytest.mark.parametrize("name", sorted(SQUEEZES))
def test_gradient_graph_and_layout_match_torch(name):
    seen = []
    for lib in (hookgrad, torch):
        x = lib.tensor(np.arange(6.0).reshape(2, 1, 3, 1), requires_grad=True)
        y = SQUEEZES[name](x)
        grad_output = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)),
                                 requires_grad=True)
        (grad,) = lib.autograd.grad(y, x, grad_output, create_graph=True)
        seen.append((y.grad_fn.name(), _chain(grad.grad_fn), tuple(grad.shape), grad.stride(),
                     grad.detach().numpy().copy()))
    ours, theirs = seen
    assert ours[:4] == theirs[:4]
    np.testing.assert_array_equal(ours[4], theirs[4])
