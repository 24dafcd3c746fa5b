"""AdaptiveLogSoftmaxWithLoss: the adaptive softmax of Grave et al. (2016) for large vocabularies.

The frequent classes (below ``cutoffs[0]``) and one entry per rarer cluster share a ``head``
linear layer; each cluster's classes get their own two-layer ``tail`` projection, narrower by
``div_value`` per cluster. A class's log-probability is its head entry, or its cluster's head
entry plus its log-probability within the cluster. Submodules, parameter names and their
creation order are torch's, so state dicts move either way and a seeded construction draws the
same initial weights.
"""
from __future__ import annotations

from collections import namedtuple
from typing import Sequence

from ...tensor import Tensor
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _checked_cutoffs(cutoffs: Sequence[int], n_classes: int) -> list:
    values = list(cutoffs)
    if not values:
        raise ValueError("cutoffs should be a sequence of length larger than 0")
    well_formed = (all(int(c) == c for c in values)
                   and all(a < b for a, b in zip(values, values[1:]))
                   and 0 < values[0] and values[-1] < n_classes)
    if not well_formed:
        raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                         "in an increasing order, where each value is between 1 and "
                         "n_classes-1")
    return values


def _check_shapes(input: Tensor, target: Tensor) -> None:
    # a 1-D target goes with a 2-D batch of rows, a 0-D target with one 1-D row
    target_dims = target.dim()
    if target_dims > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target_dims == 1 and input.size(0) != target.size(0):
        raise RuntimeError("Input and target should have the same size in the batch "
                           "dimension.")
    if input.dim() != target_dims + 1:
        raise RuntimeError(f"{target_dims}D target tensor expects {target_dims + 1}D input "
                           f"tensors, but found inputs with size {input.size()}")


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of ``target`` under an adaptive softmax, and their negative mean.

    ``forward(input, target)`` returns the named tuple ``(output, loss)``: ``output[i]`` is the
    log-probability of ``target[i]`` given ``input[i]`` (shape ``(N,)``, or ``()`` for an
    unbatched ``(in_features,)`` input and 0-d target) and ``loss`` is ``-output.mean()``.
    ``log_prob(input)`` gives all ``n_classes`` log-probabilities, ``predict(input)`` the most
    likely class. ``cutoffs`` splits the classes, sorted by frequency, into a shortlist and
    clusters, e.g. ``[10, 100, 1000]`` for ``n_classes=5000``."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        bounds = _checked_cutoffs(cutoffs, n_classes) + [n_classes]
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = bounds
        self.div_value, self.head_bias = div_value, head_bias
        # the head scores the shortlist plus one entry standing for each cluster
        self.shortlist_size, self.n_clusters = bounds[0], len(bounds) - 1
        self.head_size = bounds[0] + len(bounds) - 1
        kwargs = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kwargs)
        self.tail = ModuleList(
            self._cluster_projection(i, bounds[i + 1] - bounds[i], kwargs)
            for i in range(self.n_clusters))

    def _cluster_projection(self, index: int, n_members: int, kwargs: dict) -> Sequential:
        # each later cluster is rarer, so its bottleneck shrinks by another div_value
        narrow = int(self.in_features // self.div_value ** (index + 1))
        return Sequential(Linear(self.in_features, narrow, bias=False, **kwargs),
                          Linear(narrow, n_members, bias=False, **kwargs))

    def reset_parameters(self) -> None:
        """Re-draw the head's and every tail layer's initial parameters."""
        self.head.reset_parameters()
        for to_hidden, to_output in self.tail:
            to_hidden.reset_parameters()
            to_output.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor):
        _check_shapes(input_, target_)
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        batch_size = target.size(0)
        output = input.new_zeros(batch_size)
        # the head entry each row reads: its class if in the shortlist, else its cluster's
        head_index = target.new_empty(batch_size)
        used_rows = 0
        bounds = [0] + self.cutoffs
        for cluster, (low, high) in enumerate(zip(bounds[:-1], bounds[1:])):
            in_cluster = (target >= low) & (target < high)
            rows = in_cluster.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            if cluster == 0:
                head_index.index_copy_(0, rows, target[in_cluster])
            else:
                head_index.index_fill_(0, rows, self.shortlist_size + cluster - 1)
                logits = self.tail[cluster - 1](input.index_select(0, rows))
                within = F.log_softmax(logits, dim=1).gather(
                    1, (target[in_cluster] - low).unsqueeze(1))
                output.index_copy_(0, rows, within.squeeze(1))
            used_rows += rows.numel()
        if used_rows != batch_size:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output += head_logprob.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        """All classes' log-probabilities from ``input`` and the head's output for it."""
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for cluster, (start, stop) in enumerate(zip(self.cutoffs[:-1], self.cutoffs[1:])):
            within = F.log_softmax(self.tail[cluster](input), dim=1)
            out[:, start:stop] = within + head_logprob[:, self.shortlist_size + cluster
                                                       ].unsqueeze(1)
        return out

    def log_prob(self, input: Tensor) -> Tensor:
        """``(N, n_classes)`` log-probabilities of every class for each row of ``input``."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row: ``log_prob(input).argmax(1)``, computing the
        clusters only for rows whose best head entry is a cluster."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        outside = output >= self.shortlist_size
        if not outside.any():
            return output
        if outside.all():
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        log_prob = self._get_full_log_prob(input[outside], head_output[outside])
        output[outside] = log_prob.argmax(dim=1)
        return output
