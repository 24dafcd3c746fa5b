"""A transformer block (TransformerEncoderLayer + Linear head) trained 20 SGD steps in both
libraries from the same weights: every step's loss and the final parameters match (float64)."""
from __future__ import annotations

import numpy as np
import torch

import hookgrad
from conftest import assert_close


def build(lib):
    nn = lib.nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(3, 8)
            self.block = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
            self.head = nn.Linear(8, 2)

        def forward(self, x, padding):
            hidden = self.block(self.embed(x), src_key_padding_mask=padding)
            return self.head(hidden.mean(1))

    return Classifier()


def train(lib, net, data, labels, padding, steps=20):
    optimizer = lib.optim.SGD(net.parameters(), lr=0.05)
    losses = []
    for step in range(steps):
        rows = slice((step % 3) * 6, (step % 3) * 6 + 6)
        optimizer.zero_grad()
        logits = net(lib.tensor(data[rows]), lib.tensor(padding[rows]))
        loss = lib.nn.functional.cross_entropy(logits, lib.tensor(labels[rows]))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_transformer_training_matches_torch_step_by_step():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((18, 5, 3))
    labels = (data[:, :, 0].sum(1) > 0).astype(np.int64)
    padding = np.zeros((18, 5), dtype=bool)
    padding[::2, -1] = True
    torch.manual_seed(0)
    theirs = build(torch).double()
    ours = build(hookgrad).double()
    ours.load_state_dict({k: hookgrad.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    assert repr(ours) == repr(theirs).replace("torch.", "")
    ours_losses = train(hookgrad, ours, data, labels, padding)
    theirs_losses = train(torch, theirs, data, labels, padding)
    np.testing.assert_allclose(ours_losses, theirs_losses, rtol=1e-9)
    assert theirs_losses[-1] < theirs_losses[0]
    theirs_params = dict(theirs.named_parameters())
    for name, value in ours.named_parameters():
        assert_close(value, theirs_params[name], rtol=1e-8, atol=1e-10, what=name)
