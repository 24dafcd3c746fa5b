"""Layouts where operands disagree: advanced indexing of reordered tensors, and broadcasting
operands whose size-1 dimensions carry strides (both ranked by torch's TensorIterator).

Each case runs in hookgrad and torch on the same values; values, ``is_contiguous()`` and
``stride()`` must agree (so which later ``view`` calls are legal agrees too).
"""
import itertools

import numpy as np
import pytest
import torch

import hookgrad

BASES = [(2, 3, 4), (3, 1, 4), (4, 2, 1), (2, 3), (1, 3, 2, 2)]
SLICES = [(slice(None),), (slice(None, None, 2),), (slice(None), slice(0, 1))]


def _keys(shape):
    """One index list per dimension, two lists apart, and two broadcast against each other."""
    keys = [tuple([slice(None)] * d + [[0, shape[d] - 1]]) for d in range(len(shape))]
    if len(shape) >= 3:
        keys.append(([0, 1 % shape[0]], slice(None), [0, 0]))
        keys.append((slice(None), [[0], [shape[1] - 1]], [0, shape[2] - 1]))
    return keys


def _cases():
    for shape in BASES:
        for perm in itertools.permutations(range(len(shape))):
            for first in SLICES:
                permuted = tuple(shape[p] for p in perm)
                for key in _keys(permuted):
                    yield shape, perm, first, key


def _layout(t):
    return t.tolist(), t.is_contiguous(), tuple(t.stride())


@pytest.mark.parametrize("shape,perm,first,key", list(_cases()))
def test_advanced_index_of_reordered_tensor_matches_torch(shape, perm, first, key):
    values = np.random.default_rng(0).standard_normal(shape)

    def run(lib):
        try:
            return _layout(lib.tensor(values).permute(*perm)[first][key]), None
        except IndexError as error:
            return None, type(error)

    assert run(hookgrad) == run(torch)


def test_advanced_index_of_transposed_tensor_keeps_its_order():
    def run(lib):
        x = lib.arange(8.).reshape(2, 4, 1).transpose(0, 1)
        return _layout(x[:, :, [0]])

    assert run(hookgrad) == run(torch)


BROADCASTS = {
    # a permuted (4, 1, 1, 1) whose size-1 dimensions keep strides, minus a (1, 2, 1, 4)
    "permuted_size1_minus_unsqueezed": lambda L: (
        L.arange(8.).reshape(1, 2, 4).unsqueeze(2).narrow(1, 1, 1).permute(3, 1, 0, 2)
        - L.arange(8.).reshape(1, 2, 4).unsqueeze(2)),
    "unsqueezed_times_permuted_size1": lambda L: (
        L.arange(8.).reshape(1, 2, 4).unsqueeze(2)
        * L.arange(8.).reshape(1, 2, 4).unsqueeze(2).narrow(1, 1, 1).permute(3, 1, 0, 2)),
    "permuted_column_plus_row": lambda L: (L.arange(3.).reshape(3, 1, 1).permute(1, 0, 2)
                                           + L.arange(4.).reshape(1, 1, 4)),
    "maximum_of_permuted_size1": lambda L: L.maximum(
        L.arange(6.).reshape(3, 1, 2).permute(2, 1, 0), L.ones(2, 5, 3)),
}


@pytest.mark.parametrize("name", sorted(BROADCASTS))
def test_broadcast_with_strided_size1_dims_matches_torch(name):
    assert _layout(BROADCASTS[name](hookgrad)) == _layout(BROADCASTS[name](torch))


@pytest.mark.parametrize("name", sorted(BROADCASTS))
def test_broadcast_with_strided_size1_dims_under_autograd(name):
    """The tracked path (operands that require grad) lays results out the same way."""
    def run(lib):
        with lib.enable_grad():
            real = lib.ones(1, requires_grad=True)
            out = BROADCASTS[name](lib)
            return _layout(out + real * 0)

    assert run(hookgrad) == run(torch)


UNARY_ON_EXPANDED = {
    "neg": lambda t: -t, "abs": lambda t: t.abs(), "sign": lambda t: t.sign(),
    "sgn": lambda t: t.sgn(), "round": lambda t: t.round(), "floor": lambda t: t.floor(),
    "trunc": lambda t: t.trunc(), "frac": lambda t: t.frac(),
    "round_decimals": lambda t: t.round(decimals=1), "relu": lambda t: t.relu(),
    "clamp": lambda t: t.clamp(-1, 1), "exp": lambda t: t.exp(), "times_two": lambda t: t * 2,
    "hardtanh": None,
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", sorted(UNARY_ON_EXPANDED))
def test_unary_of_expanded_permuted_tensor_matches_torch(name, requires_grad):
    """A permuted tensor expanded along a middle dimension: torch keeps the expanded dimension
    where the iterator ranks it, NumPy's own order does not."""
    def run(lib):
        x = (lib.arange(12., dtype=lib.float64) - 5.5).reshape(1, 3, 4).requires_grad_(
            requires_grad)
        t = x.permute(2, 0, 1).expand(4, 3, 3)
        if name == "hardtanh":
            return _layout(lib.nn.functional.hardtanh(t))
        return _layout(UNARY_ON_EXPANDED[name](t))

    assert run(hookgrad) == run(torch)


# unsqueeze keeps every existing dimension's stride, size-1 ones included (NumPy's expand_dims
# may rewrite them), and gives the new dimension torch's stride: what broadcasting then ranks
UNSQUEEZE_INPUTS = {
    "column_transposed": lambda lib: lib.arange(24.).reshape(24, 1).t(),
    "row_of_matrix": lambda lib: lib.arange(6.).reshape(2, 3)[:1],
    "sliced_column": lambda lib: lib.arange(12.).reshape(3, 4)[:, 1:2],
    "permuted": lambda lib: lib.arange(6.).reshape(1, 2, 3).permute(2, 0, 1),
}


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", sorted(UNSQUEEZE_INPUTS))
def test_unsqueeze_keeps_torchs_strides(name, dim):
    def run(lib):
        view = UNSQUEEZE_INPUTS[name](lib).unsqueeze(dim)
        other = lib.ones(*[3 if n == 1 else 1 for n in view.shape])
        product = view * other
        return view.stride(), product.is_contiguous(), product.stride(), product.tolist()

    assert run(hookgrad) == run(torch)
