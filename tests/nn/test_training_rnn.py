"""A small sequence classifier (Embedding -> packed bidirectional LSTM -> Linear) and a GRU
seq2seq-style tagger, trained with Adam in both libraries from the same weights: every step's
loss and the final parameters match torch (float64)."""
from __future__ import annotations

import numpy as np
import torch

import hookgrad
from conftest import assert_close


def classifier(lib):
    class Classifier(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = lib.nn.Embedding(10, 4, padding_idx=0)
            self.lstm = lib.nn.LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True,
                                    proj_size=3)
            self.head = lib.nn.Linear(2 * 3, 3)

        def forward(self, tokens, lengths):
            packed = lib.nn.utils.rnn.pack_padded_sequence(self.embedding(tokens), lengths,
                                                           batch_first=True,
                                                           enforce_sorted=False)
            output, (h_n, _) = self.lstm(packed)
            padded, _ = lib.nn.utils.rnn.pad_packed_sequence(output, batch_first=True)
            last = lib.cat([h_n[-2], h_n[-1]], dim=1)
            return self.head(last) + padded.mean(dim=1).sum(dim=1, keepdim=True)

    return Classifier()


def batches(rng, steps):
    for _ in range(steps):
        lengths = rng.integers(1, 7, size=5)
        tokens = rng.integers(1, 10, size=(5, 6)) * (np.arange(6)[None, :] < lengths[:, None])
        labels = (tokens.sum(1) % 3).astype(np.int64)
        yield tokens.astype(np.int64), lengths.tolist(), labels


def train(lib, net, steps=8):
    optimizer = lib.optim.Adam(net.parameters(), lr=0.01)
    losses = []
    for tokens, lengths, labels in batches(np.random.default_rng(0), steps):
        optimizer.zero_grad()
        loss = lib.nn.functional.cross_entropy(net(lib.tensor(tokens), lengths),
                                               lib.tensor(labels))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_packed_lstm_classifier_trains_like_torch():
    torch.manual_seed(0)
    theirs = classifier(torch).double()
    ours = classifier(hookgrad).double()
    ours.load_state_dict({k: hookgrad.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(train(hookgrad, ours), train(torch, theirs), rtol=1e-9)
    theirs_state = theirs.state_dict()
    for name, value in ours.state_dict().items():
        assert_close(value, theirs_state[name], rtol=1e-8, atol=1e-10, what=name)


def test_gru_cell_loop_trains_like_torch():
    """A hand-written loop over a GRUCell (teacher forcing), as tutorials write decoders."""
    def run(lib, cell, head, inputs, targets):
        optimizer = lib.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.5)
        losses = []
        for _ in range(5):
            optimizer.zero_grad()
            hidden, loss = None, 0
            for t in range(inputs.shape[0]):
                hidden = cell(lib.tensor(inputs[t]), hidden)
                loss = loss + lib.nn.functional.mse_loss(head(hidden), lib.tensor(targets[t]))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses

    rng = np.random.default_rng(1)
    inputs, targets = rng.standard_normal((6, 3, 2)), rng.standard_normal((6, 3, 1))
    torch.manual_seed(0)
    modules = {"torch": (torch.nn.GRUCell(2, 5).double(), torch.nn.Linear(5, 1).double())}
    ours = (hookgrad.nn.GRUCell(2, 5).double(), hookgrad.nn.Linear(5, 1).double())
    for mine, theirs in zip(ours, modules["torch"]):
        mine.load_state_dict({k: hookgrad.tensor(v.detach().numpy().copy())
                              for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(run(hookgrad, *ours, inputs, targets),
                               run(torch, *modules["torch"], inputs, targets), rtol=1e-9)
