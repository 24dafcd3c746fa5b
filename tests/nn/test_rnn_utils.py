"""nn.utils.rnn against torch: packing, padding and unpacking, their gradients and errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare


def packed_fields(packed):
    return [None if field is None else field.tolist() for field in packed[1:]]


LENGTHS = [[4, 2, 2, 1], [2, 4, 1, 2], [3, 3, 3, 3]]


@pytest.mark.parametrize("lengths,batch_first,enforce_sorted",
                         list(itertools.product(LENGTHS, [False, True], [True, False])))
def test_pack_padded_sequence(lengths, batch_first, enforce_sorted):
    if enforce_sorted and lengths != sorted(lengths, reverse=True):
        assert_same_error(lambda lib: lib.nn.utils.rnn.pack_padded_sequence(
            lib.randn(4, 4, 2), lengths, batch_first, enforce_sorted))
        return
    x = np.random.default_rng(0).standard_normal((4, 4, 2))
    results = compare(lambda lib, t: lib.nn.utils.rnn.pack_padded_sequence(
        t, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted).data, x)
    assert results[0][0].shape == results[1][0].shape
    ours, theirs = (lib.nn.utils.rnn.pack_padded_sequence(
        lib.tensor(x), lib.tensor(lengths), batch_first, enforce_sorted)
        for lib in (hookgrad, torch))
    assert packed_fields(ours) == packed_fields(theirs)
    assert ours.batch_sizes.dtype == hookgrad.int64


@pytest.mark.parametrize("batch_first,total_length,padding_value",
                         list(itertools.product([False, True], [None, 6], [0.0, -1.5])))
def test_pad_packed_sequence(batch_first, total_length, padding_value):
    x = np.random.default_rng(1).standard_normal((4, 3, 2))
    lengths = [2, 4, 1]

    def fn(lib, t):
        packed = lib.nn.utils.rnn.pack_padded_sequence(t, lengths, enforce_sorted=False)
        return lib.nn.utils.rnn.pad_packed_sequence(packed, batch_first, padding_value,
                                                    total_length)

    compare(fn, x)


def test_pad_packed_sequence_total_length_too_short():
    def fn(lib):
        packed = lib.nn.utils.rnn.pack_sequence([lib.randn(3, 2), lib.randn(1, 2)])
        return lib.nn.utils.rnn.pad_packed_sequence(packed, total_length=2)

    assert_same_error(fn)


@pytest.mark.parametrize("batch_first,padding_side,padding_value",
                         list(itertools.product([False, True], ["right", "left"], [0.0, 7.0])))
def test_pad_sequence(batch_first, padding_side, padding_value):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((n, 2, 3)) for n in (2, 5, 1)]
    compare(lambda lib, *ts: lib.nn.utils.rnn.pad_sequence(
        ts, batch_first=batch_first, padding_value=padding_value,
        padding_side=padding_side), *arrays)


def test_pad_sequence_keeps_the_first_dtype():
    for first, second in ((np.float32, np.float64), (np.float64, np.float32)):
        compare(lambda lib, a, b: lib.nn.utils.rnn.pad_sequence([a, b]),
                np.ones((2, 3), first), np.ones((3, 3), second), grad=False)


def test_pad_sequence_errors():
    assert_same_error(lambda lib: lib.nn.utils.rnn.pad_sequence([]))
    assert_same_error(lambda lib: lib.nn.utils.rnn.pad_sequence(5))
    assert_same_error(lambda lib: lib.nn.utils.rnn.pad_sequence(
        [lib.randn(2, 3), lib.randn(3, 4)]))
    assert_same_error(lambda lib: lib.nn.utils.rnn.pad_sequence(
        [lib.randn(2, 3)], padding_side="middle"))


def test_pack_errors():
    x = np.zeros((4, 3, 2))
    for lengths in ([3, 2, 0], [2, 3, 1], [3, 2], [[3, 2, 1]]):
        assert_same_error(lambda lib: lib.nn.utils.rnn.pack_padded_sequence(
            lib.tensor(x), lib.tensor(lengths)))


def test_pack_sequence_and_unpack_sequence():
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((n, 2)) for n in (3, 5, 1, 3)]

    def fn(lib, *ts):
        packed = lib.nn.utils.rnn.pack_sequence(list(ts), enforce_sorted=False)
        return [packed.data] + lib.nn.utils.rnn.unpack_sequence(packed)

    compare(fn, *arrays)
    sorted_arrays = sorted(arrays, key=len, reverse=True)
    compare(lambda lib, *ts: lib.nn.utils.rnn.pack_sequence(list(ts)).data, *sorted_arrays)
    assert_same_error(lambda lib: lib.nn.utils.rnn.pack_sequence(
        [lib.tensor(a) for a in arrays]))


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence(batch_first):
    x = np.random.default_rng(4).standard_normal((3, 5, 2) if batch_first else (5, 3, 2))
    compare(lambda lib, t: lib.nn.utils.rnn.unpad_sequence(
        t * 1, lib.tensor([5, 2, 3]), batch_first=batch_first), x)


def test_packed_sequence_is_a_named_tuple():
    ours = hookgrad.nn.utils.rnn.pack_sequence([hookgrad.ones(2, 1), hookgrad.ones(1, 1)])
    data, batch_sizes, sorted_indices, unsorted_indices = ours
    assert ours._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert sorted_indices is None and unsorted_indices is None
    assert batch_sizes.tolist() == [2, 1]
    assert ours.double().data.dtype == hookgrad.float64
    assert ours.to(hookgrad.float32) is ours
    rebuilt = hookgrad.nn.utils.rnn.PackedSequence(data, batch_sizes,
                                                   hookgrad.tensor([1, 0]))
    assert rebuilt.unsorted_indices.tolist() == [1, 0]
    assert hookgrad.nn.utils.rnn.PackedSequence((data, batch_sizes)).batch_sizes is batch_sizes


def test_invert_permutation():
    permutation = [2, 0, 3, 1]
    ours = hookgrad.nn.utils.rnn.invert_permutation(hookgrad.tensor(permutation))
    theirs = torch.nn.utils.rnn.invert_permutation(torch.tensor(permutation))
    assert_close(ours, theirs)
    assert hookgrad.nn.utils.rnn.invert_permutation(None) is None


def test_pack_pad_double_backward():
    x = hookgrad.randn(4, 3, 2, dtype=hookgrad.float64, requires_grad=True)

    def round_trip(t):
        packed = hookgrad.nn.utils.rnn.pack_padded_sequence(t, [2, 4, 1], enforce_sorted=False)
        return hookgrad.nn.utils.rnn.pad_packed_sequence(packed)[0] ** 2

    assert hookgrad.autograd.gradcheck(round_trip, (x,))
    assert hookgrad.autograd.gradgradcheck(round_trip, (x,))


def test_length_beyond_the_padded_input_raises():
    """torch reads past the input here (undefined values); hookgrad refuses."""
    with pytest.raises(RuntimeError, match="exceeds the padded sequence length"):
        hookgrad.nn.utils.rnn.pack_padded_sequence(hookgrad.zeros(4, 3, 2), [5, 2, 1])
