"""ChainDataset, StackDataset and DistributedSampler against torch.utils.data: the samples,
lengths, index order (shuffle, seed, epoch, padding, drop_last) and errors."""
import itertools

import pytest
import torch
import torch.utils.data as tdata
import torch.utils.data.distributed as tdistributed

import hookgrad
import hookgrad.utils.data as hdata
import hookgrad.utils.data.distributed as hdistributed
from conftest import assert_close


def _stream(data):
    class Stream(data.IterableDataset):
        def __init__(self, values):
            self.values = values

        def __iter__(self):
            return iter(self.values)

        def __len__(self):
            return len(self.values)
    return Stream


def _chains(data):
    stream = _stream(data)
    return data.ChainDataset([stream([1, 2]), stream([]), stream([3, 4, 5])])


def test_chain_iterates_each_dataset_in_turn():
    for data in (hdata, tdata):
        chain = _chains(data)
        assert list(chain) == [1, 2, 3, 4, 5] and len(chain) == 5
        added = _stream(data)([0]) + _stream(data)([9])
        assert type(added).__name__ == "ChainDataset" and list(added) == [0, 9]


def test_chain_refuses_map_style_datasets_when_reached():
    outcomes = []
    for data, lib in ((hdata, hookgrad), (tdata, torch)):
        chain = data.ChainDataset([_stream(data)([1]), data.TensorDataset(lib.ones(2))])
        iterator = iter(chain)
        assert next(iterator) == 1
        with pytest.raises(AssertionError) as info:
            next(iterator)
        outcomes.append(str(info.value))
    assert outcomes[0] == outcomes[1]


def test_chain_in_a_dataloader():
    batches = [[b.tolist() for b in lib_data.DataLoader(_chains(lib_data), batch_size=2)]
               for lib_data in (hdata, tdata)]
    assert batches[0] == batches[1]


def _stacks(data, lib, named):
    first = data.TensorDataset(lib.arange(5), lib.arange(5) * 10)
    second = [f"s{i}" for i in range(5)]
    return data.StackDataset(x=first, y=second) if named else data.StackDataset(first, second)


@pytest.mark.parametrize("named", [False, True])
def test_stack_reads_every_dataset_at_one_index(named):
    ours, theirs = _stacks(hdata, hookgrad, named), _stacks(tdata, torch, named)
    assert len(ours) == len(theirs) == 5
    for index in (0, 3, -1):
        _same_sample(ours[index], theirs[index])
    for a, b in zip(ours.__getitems__([4, 0, 2]), theirs.__getitems__([4, 0, 2])):
        _same_sample(a, b)


def _same_sample(ours, theirs):
    """Equal structure (tuples, lists, dicts) with equal tensors and equal plain values."""
    if isinstance(theirs, torch.Tensor):
        assert_close(ours, theirs)
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and ours.keys() == theirs.keys()
        for key in theirs:
            _same_sample(ours[key], theirs[key])
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same_sample(a, b)
    else:
        assert ours == theirs


@pytest.mark.parametrize("named", [False, True])
def test_stack_batches_through_a_dataloader(named):
    results = []
    for data, lib in ((hdata, hookgrad), (tdata, torch)):
        loader = data.DataLoader(_stacks(data, lib, named), batch_size=2)
        results.append(list(loader))
    for ours, theirs in zip(*results):
        _same_sample(ours, theirs)


@pytest.mark.parametrize("make", [
    lambda data, lib: data.StackDataset(),
    lambda data, lib: data.StackDataset(data.TensorDataset(lib.ones(2)), x=[1, 2]),
    lambda data, lib: data.StackDataset(data.TensorDataset(lib.ones(2)), [1, 2, 3]),
])
def test_stack_errors(make):
    messages = []
    for data, lib in ((hdata, hookgrad), (tdata, torch)):
        with pytest.raises(ValueError) as info:
            make(data, lib)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def _indices(module, *args, epoch=None, **kwargs):
    sampler = module.DistributedSampler(*args, **kwargs)
    if epoch is not None:
        sampler.set_epoch(epoch)
    return list(sampler), len(sampler), sampler.num_samples, sampler.total_size


@pytest.mark.parametrize("length, replicas", [(10, 3), (10, 4), (12, 4), (2, 7), (0, 2), (1, 1),
                                              (101, 8)])
@pytest.mark.parametrize("shuffle, drop_last", list(itertools.product([True, False], repeat=2)))
def test_every_rank_gets_torchs_indices(length, replicas, shuffle, drop_last):
    for rank in range(replicas):
        for seed, epoch in ((0, None), (7, 3)):
            options = dict(num_replicas=replicas, rank=rank, shuffle=shuffle, seed=seed,
                           drop_last=drop_last, epoch=epoch)
            assert (_indices(hdistributed, range(length), **options)
                    == _indices(tdistributed, range(length), **options))


def test_the_top_level_name_is_the_same_class():
    assert hdata.DistributedSampler is hdistributed.DistributedSampler


def test_shuffled_loader_over_a_distributed_sampler():
    batches = []
    for data, lib in ((hdata, hookgrad), (tdata, torch)):
        dataset = data.TensorDataset(lib.arange(20))
        sampler = data.DistributedSampler(dataset, num_replicas=3, rank=2, seed=11)
        sampler.set_epoch(1)
        batches.append([b[0].tolist() for b in data.DataLoader(dataset, batch_size=3,
                                                               sampler=sampler)])
    assert batches[0] == batches[1]


@pytest.mark.parametrize("options", [dict(), dict(num_replicas=3), dict(rank=1),
                                     dict(num_replicas=3, rank=3),
                                     dict(num_replicas=3, rank=-1)])
def test_sampler_errors(options):
    messages = []
    for module in (hdistributed, tdistributed):
        with pytest.raises(ValueError) as info:
            module.DistributedSampler(range(10), **options)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
