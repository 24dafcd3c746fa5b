"""Datasets, samplers, default_collate and DataLoader against torch.utils.data."""
from __future__ import annotations

import collections
import itertools
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as torch_data

import hookgrad
import hookgrad.utils.data as hg_data
from conftest import assert_close, error_of

DATA = {torch: torch_data, hookgrad: hg_data}
Point = collections.namedtuple("Point", ["x", "label"])


def assert_same_structure(actual, expected, where="batch"):
    """Nested containers of the same types, tensors equal in dtype, shape and value."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, hookgrad.Tensor), f"{where}: {type(actual)}"
        assert_close(actual, expected, what=where)
        return
    assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"
    if isinstance(expected, dict):
        assert list(actual) == list(expected), where
        for key in expected:
            assert_same_structure(actual[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same_structure(a, e, f"{where}[{i}]")
    else:
        assert actual == expected, where


def _tensor_dataset(lib, n=10):
    features = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    labels = np.arange(n) % 3
    return DATA[lib].TensorDataset(lib.tensor(features), lib.tensor(labels))


SAMPLES = {
    "tensors": lambda lib: [lib.tensor(np.full((2, 3), i, np.float32)) for i in range(4)],
    "numpy arrays": lambda lib: [np.full(3, i, np.float64) for i in range(4)],
    "numpy scalars": lambda lib: [np.float32(i) / 3 for i in range(4)],
    "numpy ints": lambda lib: [np.int32(i) for i in range(4)],
    "floats": lambda lib: [i / 3 for i in range(4)],
    "ints": lambda lib: list(range(4)),
    "bools": lambda lib: [True, False, True, True],
    "strings": lambda lib: ["a", "b", "c", "d"],
    "tuples": lambda lib: [(lib.tensor([float(i)]), i, "s") for i in range(4)],
    "lists": lambda lib: [[i, float(i)] for i in range(4)],
    "dicts": lambda lib: [{"x": lib.tensor([i, i + 1]), "meta": {"id": i, "w": 0.5}}
                          for i in range(4)],
    "namedtuples": lambda lib: [Point(lib.tensor([float(i)]), i) for i in range(4)],
    "ordered dicts": lambda lib: [collections.OrderedDict(a=i, b=float(i)) for i in range(4)],
}


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_default_collate_matches_torch(kind):
    assert_same_structure(hg_data.default_collate(SAMPLES[kind](hookgrad)),
                          torch_data.default_collate(SAMPLES[kind](torch)))


@pytest.mark.parametrize("kind", ["numpy arrays", "numpy scalars", "dicts", "tuples", "ints"])
def test_unbatched_loader_converts_like_torch(kind):
    hg_items = list(hg_data.DataLoader(SAMPLES[kind](hookgrad), batch_size=None))
    th_items = list(torch_data.DataLoader(SAMPLES[kind](torch), batch_size=None))
    assert_same_structure(hg_items, th_items)


COLLATE_ERRORS = {
    "unequal sequence sizes": [[1, 2], [3]],
    "unsupported element": [object(), object()],
    "string arrays": [np.array(["a"]), np.array(["b"])],
}


@pytest.mark.parametrize("case", list(COLLATE_ERRORS))
def test_collate_errors_match_torch(case):
    expected = error_of(lambda: torch_data.default_collate(COLLATE_ERRORS[case]))
    assert expected is not None
    assert error_of(lambda: hg_data.default_collate(COLLATE_ERRORS[case])) == expected


@pytest.mark.parametrize("batch_size", [1, 3, 4, 10, 13])
@pytest.mark.parametrize("drop_last", [False, True])
def test_sequential_batches_match_torch(batch_size, drop_last):
    hg_loader = hg_data.DataLoader(_tensor_dataset(hookgrad), batch_size=batch_size,
                                   drop_last=drop_last)
    th_loader = torch_data.DataLoader(_tensor_dataset(torch), batch_size=batch_size,
                                      drop_last=drop_last)
    assert len(hg_loader) == len(th_loader)
    hg_batches, th_batches = list(hg_loader), list(th_loader)
    assert len(hg_batches) == len(th_loader)
    assert_same_structure(hg_batches, th_batches)


def test_shuffle_covers_every_item_once_per_epoch_in_a_new_order():
    hookgrad.manual_seed(0)
    dataset = _tensor_dataset(hookgrad, n=23)
    loader = hg_data.DataLoader(dataset, batch_size=5, shuffle=True)
    orders = []
    for _ in range(3):
        batches = list(loader)
        assert [len(b[1]) for b in batches] == [5, 5, 5, 5, 3]
        rows = np.concatenate([b[0].numpy() for b in batches])
        order = (rows[:, 0] / 3).astype(int)
        assert sorted(order.tolist()) == list(range(23))
        np.testing.assert_array_equal(rows, dataset.tensors[0].numpy()[order])
        orders.append(order.tolist())
    assert orders[0] != orders[1] or orders[1] != orders[2]


def test_shuffle_with_drop_last_drops_only_the_short_batch():
    loader = hg_data.DataLoader(list(range(23)), batch_size=5, shuffle=True, drop_last=True)
    batches = list(loader)
    assert len(loader) == len(batches) == 4
    items = np.concatenate([b.numpy() for b in batches])
    assert len(set(items.tolist())) == 20


def test_shuffle_is_reproducible_with_a_seeded_generator():
    def epoch(seed):
        generator = hookgrad.Generator().manual_seed(seed)
        loader = hg_data.DataLoader(list(range(30)), batch_size=4, shuffle=True,
                                    generator=generator)
        return [b.tolist() for b in loader]

    assert epoch(7) == epoch(7)
    assert sorted(itertools.chain.from_iterable(epoch(7))) == list(range(30))


def test_shuffle_is_reproducible_under_manual_seed():
    loader = hg_data.DataLoader(list(range(30)), batch_size=4, shuffle=True)
    hookgrad.manual_seed(3)
    first = [b.tolist() for b in loader]
    hookgrad.manual_seed(3)
    assert [b.tolist() for b in loader] == first


def test_workers_load_in_process_with_the_same_batches():
    hg = list(hg_data.DataLoader(_tensor_dataset(hookgrad), batch_size=4, num_workers=2))
    th = list(torch_data.DataLoader(_tensor_dataset(torch), batch_size=4, num_workers=0))
    assert_same_structure(hg, th)


def test_custom_collate_fn_receives_the_list_of_samples():
    seen = []
    loader = hg_data.DataLoader(list("abcde"), batch_size=2, collate_fn=lambda b: seen.append(b)
                                or "".join(b))
    assert list(loader) == ["ab", "cd", "e"]
    assert seen == [["a", "b"], ["c", "d"], ["e"]]


def test_samplers_and_batch_sampler_match_torch():
    for make in (lambda d: d.SequentialSampler(range(7)),
                 lambda d: d.BatchSampler(d.SequentialSampler(range(7)), 3, False),
                 lambda d: d.BatchSampler(range(7), 3, True)):
        assert list(make(hg_data)) == list(make(torch_data))
        assert len(make(hg_data)) == len(make(torch_data))


def test_loader_with_a_batch_sampler_or_sampler_matches_torch():
    hg = list(hg_data.DataLoader(list(range(8)), batch_sampler=[[3, 1], [0, 7, 2]]))
    th = list(torch_data.DataLoader(list(range(8)), batch_sampler=[[3, 1], [0, 7, 2]]))
    assert_same_structure(hg, th)
    hg = list(hg_data.DataLoader(list(range(8)), sampler=[5, 4, 3], batch_size=2))
    th = list(torch_data.DataLoader(list(range(8)), sampler=[5, 4, 3], batch_size=2))
    assert_same_structure(hg, th)


def test_random_samplers_give_permutations_and_draws_in_range():
    generator = hookgrad.Generator().manual_seed(1)
    assert sorted(hg_data.RandomSampler(range(9), generator=generator)) == list(range(9))
    draws = list(hg_data.RandomSampler(range(4), replacement=True, num_samples=70,
                                       generator=generator))
    assert len(draws) == 70 and set(draws) <= set(range(4))
    longer = list(hg_data.RandomSampler(range(4), num_samples=10, generator=generator))
    assert len(longer) == 10 and sorted(longer[:4]) == list(range(4))
    subset = list(hg_data.SubsetRandomSampler([10, 20, 30], generator=generator))
    assert sorted(subset) == [10, 20, 30]


LOADER_ERRORS = {
    "zero batch size": lambda d: d.DataLoader(range(3), batch_size=0),
    "bool batch size": lambda d: d.BatchSampler(range(3), True, False),
    "non-bool drop_last": lambda d: d.BatchSampler(range(3), 2, 1),
    "sampler and shuffle": lambda d: d.DataLoader(range(3), shuffle=True, sampler=[0, 1]),
    "batch_sampler and batch_size": lambda d: d.DataLoader(range(3), batch_size=2,
                                                           batch_sampler=[[0]]),
    "batch_sampler and drop_last": lambda d: d.DataLoader(range(3), batch_sampler=[[0]],
                                                          drop_last=True),
    "no batching and drop_last": lambda d: d.DataLoader(range(3), batch_size=None,
                                                        drop_last=True),
    "negative workers": lambda d: d.DataLoader(range(3), num_workers=-1),
    "negative timeout": lambda d: d.DataLoader(range(3), timeout=-1),
    "prefetch without workers": lambda d: d.DataLoader(range(3), prefetch_factor=2),
    "negative prefetch": lambda d: d.DataLoader(range(3), num_workers=1, prefetch_factor=-1),
    "persistent without workers": lambda d: d.DataLoader(range(3), persistent_workers=True),
    "tensor size mismatch": lambda d: d.TensorDataset(
        (torch if d is torch_data else hookgrad).zeros(3),
        (torch if d is torch_data else hookgrad).zeros(4)),
    "random_split lengths": lambda d: d.random_split(range(10), [3, 4]),
    "random_split fraction": lambda d: d.random_split(range(10), [1.5, -0.5]),
    "random sampler num_samples": lambda d: d.RandomSampler(range(3), num_samples=0),
    "random sampler replacement": lambda d: d.RandomSampler(range(3), replacement=1),
    "concat of nothing": lambda d: d.ConcatDataset([]),
    "concat index": lambda d: d.ConcatDataset([range(2), range(3)])[-6],
}


@pytest.mark.parametrize("case", list(LOADER_ERRORS))
def test_loader_errors_match_torch(case):
    expected = error_of(lambda: LOADER_ERRORS[case](torch_data))
    assert expected is not None
    assert error_of(lambda: LOADER_ERRORS[case](hg_data)) == expected


def test_tensor_dataset_items_and_length_match_torch():
    hg, th = _tensor_dataset(hookgrad), _tensor_dataset(torch)
    assert len(hg) == len(th) == 10
    for index in (0, 7, -1, slice(2, 5)):
        assert_same_structure(hg[index], th[index])


def test_subset_and_concat_index_like_torch():
    for make in (lambda d, lib: d.Subset(_tensor_dataset(lib), [4, 0, 9]),
                 lambda d, lib: d.ConcatDataset([_tensor_dataset(lib, 3), _tensor_dataset(lib)]),
                 lambda d, lib: _tensor_dataset(lib, 2) + _tensor_dataset(lib, 4)):
        hg, th = make(hg_data, hookgrad), make(torch_data, torch)
        assert len(hg) == len(th)
        assert_same_structure([hg[i] for i in range(-len(th), len(th))],
                              [th[i] for i in range(-len(th), len(th))])


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.25, 0.25, 0.5], [0.34, 0.33, 0.33]])
def test_random_split_sizes_match_torch_and_cover_the_dataset(lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hg_parts = hg_data.random_split(range(10), lengths,
                                        generator=hookgrad.Generator().manual_seed(0))
        th_parts = torch_data.random_split(range(10), lengths)
    assert [len(p) for p in hg_parts] == [len(p) for p in th_parts]
    items = [item for part in hg_parts for item in part]
    assert sorted(items) == list(range(10))


def test_random_split_warns_about_an_empty_split_like_torch():
    for d in (torch_data, hg_data):
        with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
            d.random_split(range(3), [1.0, 0.0])


def test_subset_of_a_subset_fetches_through_getitems():
    inner = hg_data.Subset(list(range(10, 20)), [9, 8, 7, 6])
    outer = hg_data.Subset(inner, [3, 1])
    assert outer.__getitems__([0, 1]) == [16, 18]
    assert [b.tolist() for b in hg_data.DataLoader(outer, batch_size=2)] == [[16, 18]]


def test_dataset_base_requires_getitem():
    with pytest.raises(NotImplementedError):
        hg_data.Dataset()[0]


def counting_dataset(base):
    """An iterable dataset of 0 .. n-1 (with a length) on either library's base class."""

    class Counting(base):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    return Counting


Counting = counting_dataset(hg_data.IterableDataset)
TorchCounting = counting_dataset(torch_data.IterableDataset)


@pytest.mark.parametrize("drop_last", [False, True])
def test_iterable_dataset_batches_consecutive_items_like_torch(drop_last):
    hg_loader = hg_data.DataLoader(Counting(11), batch_size=4, drop_last=drop_last)
    th_loader = torch_data.DataLoader(TorchCounting(11), batch_size=4, drop_last=drop_last)
    assert len(hg_loader) == len(th_loader)
    assert_same_structure(list(hg_loader), list(th_loader))


def test_iterable_dataset_refuses_shuffle_like_torch():
    expected = error_of(lambda: torch_data.DataLoader(TorchCounting(3), shuffle=True))
    assert error_of(lambda: hg_data.DataLoader(Counting(3), shuffle=True)) == expected


def test_training_loop_over_a_loader_runs_end_to_end():
    """The pieces together: loader, model, loss, clipping, optimizer and scheduler."""
    hookgrad.manual_seed(0)
    rng = np.random.default_rng(0)
    features = rng.standard_normal((32, 2)).astype(np.float32)
    targets = (features @ np.array([[2.0], [-1.0]], np.float32)).astype(np.float32)
    dataset = hg_data.TensorDataset(hookgrad.tensor(features), hookgrad.tensor(targets))
    weight = hookgrad.zeros(2, 1, requires_grad=True)
    optimizer = hookgrad.optim.SGD([weight], lr=0.1, momentum=0.5)
    scheduler = hookgrad.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    for _ in range(20):
        for x, y in hg_data.DataLoader(dataset, batch_size=8, shuffle=True):
            optimizer.zero_grad()
            loss = ((x @ weight - y) ** 2).mean()
            loss.backward()
            hookgrad.nn.utils.clip_grad_norm_([weight], 5.0)
            optimizer.step()
        scheduler.step()
    np.testing.assert_allclose(weight.detach().numpy(), [[2.0], [-1.0]], atol=1e-3)


# -- torch's order, not just a permutation -------------------------------------------------------
def _epochs(lib, seed: int, **kwargs) -> list:
    lib.manual_seed(seed)
    dataset = lib.utils.data.TensorDataset(lib.arange(23))
    loader = lib.utils.data.DataLoader(dataset, batch_size=4, shuffle=True, **kwargs)
    epochs = [[batch.tolist() for (batch,) in loader] for _ in range(3)]
    return epochs + [lib.randn(2).tolist()]


@pytest.mark.parametrize("seed", [0, 7])
def test_shuffled_epochs_equal_torchs_order(seed):
    assert _epochs(hookgrad, seed) == _epochs(torch, seed)


def test_shuffled_epochs_with_a_generator_equal_torchs():
    ours = _epochs(hookgrad, 1, generator=hookgrad.Generator().manual_seed(9))
    theirs = _epochs(torch, 1, generator=torch.Generator().manual_seed(9))
    assert ours == theirs


def test_random_samplers_equal_torchs_order():
    results = []
    for lib in (hookgrad, torch):
        lib.manual_seed(4)
        data = list(range(10))
        results.append([list(lib.utils.data.RandomSampler(data)),
                        list(lib.utils.data.RandomSampler(data, replacement=True,
                                                          num_samples=40)),
                        list(lib.utils.data.SubsetRandomSampler([3, 5, 7, 9]))])
    assert results[0] == results[1]


@pytest.mark.parametrize("lengths", [[0.7, 0.3], [5, 10, 8]], ids=str)
def test_random_split_equals_torchs(lengths):
    splits = []
    for lib in (hookgrad, torch):
        lib.manual_seed(2)
        parts = lib.utils.data.random_split(range(23), lengths)
        seeded = lib.utils.data.random_split(range(23), lengths,
                                             generator=lib.Generator().manual_seed(42))
        splits.append([list(part.indices) for part in parts + seeded])
    assert splits[0] == splits[1]


@pytest.mark.parametrize("replacement", [True, False])
def test_weighted_random_sampler_equals_torchs(replacement):
    draws = []
    for lib in (hookgrad, torch):
        lib.manual_seed(6)
        sampler = lib.utils.data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.0, 0.7], 4,
                                                       replacement=replacement)
        draws.append([list(sampler), list(sampler), len(sampler)])
    assert draws[0] == draws[1]
