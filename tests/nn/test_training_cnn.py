"""A small CNN (conv-bn-relu-pool-linear) trained 20 SGD steps in both libraries from the same
weights: the loss of every step, and the final parameters and buffers, match torch (float64)."""
from __future__ import annotations

import numpy as np
import torch

import hookgrad
from conftest import assert_close, graph_nodes


def model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, stride=2, padding=1), nn.ReLU(),
                         nn.Flatten(), nn.Linear(6 * 2 * 2, 3))


def train(lib, net, images, labels, steps=20):
    net.train()
    optimizer = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    loss_fn = lib.nn.CrossEntropyLoss()
    losses = []
    for step in range(steps):
        batch = slice((step % 4) * 8, (step % 4) * 8 + 8)
        optimizer.zero_grad()
        loss = loss_fn(net(lib.tensor(images[batch])), lib.tensor(labels[batch]))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_cnn_training_matches_torch_step_by_step():
    rng = np.random.default_rng(0)
    images = rng.standard_normal((32, 2, 8, 8))
    labels = (images[:, 0, :4].mean((1, 2)) > 0).astype(np.int64) + (
        images[:, 1].std((1, 2)) > 1).astype(np.int64)
    torch.manual_seed(0)
    theirs = model(torch).double()
    ours = model(hookgrad).double()
    ours.load_state_dict({k: hookgrad.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    ours_losses = train(hookgrad, ours, images, labels)
    theirs_losses = train(torch, theirs, images, labels)
    np.testing.assert_allclose(ours_losses, theirs_losses, rtol=1e-9)
    assert theirs_losses[-1] < theirs_losses[0]  # it learns something
    theirs_state = theirs.state_dict()
    for name, value in ours.state_dict().items():
        assert_close(value, theirs_state[name], rtol=1e-8, atol=1e-10, what=name)
    ours.eval(), theirs.eval()
    assert_close(ours(hookgrad.tensor(images[:5])), theirs(torch.tensor(images[:5])).detach(),
                 rtol=1e-8, atol=1e-10)


def test_cnn_backward_graph_has_torch_nodes():
    graphs = []
    for lib in (hookgrad, torch):
        x = lib.randn(2, 2, 8, 8, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(model(lib)(x), lib.tensor([0, 2]))
        graphs.append(graph_nodes(loss))
    assert graphs[0] == graphs[1]
