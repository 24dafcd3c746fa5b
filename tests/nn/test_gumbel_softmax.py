"""F.gumbel_softmax against torch: for the same seed the noise is torch's draw from the default
generator (the stream is left where torch leaves it), values and straight-through gradients
match, soft and hard, along any dim, with torch's graph."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, compare, graph_nodes

RNG = np.random.default_rng(8)
LOGITS = RNG.standard_normal((4, 6, 5))


def _gumbel(**kwargs):
    def run(lib, logits):
        lib.manual_seed(23)
        return lib.nn.functional.gumbel_softmax(logits, **kwargs)
    return run


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_gradients_equal_torchs_for_the_same_seed(hard, dim, dtype):
    # the noise is the same draw; log and softmax may differ from torch's in the last bit
    tolerance = dict(rtol=1e-13, atol=1e-15) if dtype == np.float64 else {}
    ours, theirs = compare(_gumbel(tau=0.7, hard=hard, dim=dim), LOGITS.astype(dtype),
                           **tolerance)
    if hard:
        one_hot = [result.detach().numpy() for result in (ours[0], theirs[0])]
        np.testing.assert_array_equal(one_hot[0], one_hot[1])
        assert set(np.unique(one_hot[0])) <= {0.0, 1.0}


@pytest.mark.parametrize("hard", [False, True])
def test_the_graph_is_torchs(hard):
    graphs = []
    for lib in (torch, hookgrad):
        logits = lib.tensor(LOGITS, requires_grad=True)
        graphs.append(graph_nodes(_gumbel(hard=hard)(lib, logits)))
    assert graphs[0] == graphs[1]


@pytest.mark.parametrize("hard", [False, True])
def test_the_generator_is_left_where_torchs_is(hard):
    after = []
    for lib in (torch, hookgrad):
        _gumbel(hard=hard)(lib, lib.tensor(LOGITS))
        after.append(lib.rand(5).numpy())
    np.testing.assert_array_equal(after[0], after[1])


def test_the_noise_is_torchs_draw():
    # with zero logits and tau 1 the result is the softmax of the noise alone
    samples, draws = [], []
    for lib in (torch, hookgrad):
        lib.manual_seed(2)
        samples.append(lib.nn.functional.gumbel_softmax(lib.zeros(3, 4, dtype=lib.float64)))
        lib.manual_seed(2)
        draws.append(lib.empty(3, 4, dtype=lib.float64).exponential_())
    assert_close(draws[1], draws[0], rtol=0, atol=0)
    expected = torch.softmax(-draws[0].log(), -1)
    assert_close(samples[1], expected, rtol=1e-13, atol=0)
    assert_close(samples[0], expected, rtol=1e-13, atol=0)


def test_a_non_default_eps_warns_as_torch():
    caught = []
    for lib in (torch, hookgrad):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            lib.nn.functional.gumbel_softmax(lib.tensor(LOGITS), eps=1e-5)
        caught.append([(w.category, str(w.message)) for w in record])
    assert caught[1] == caught[0] and caught[0]


@pytest.mark.parametrize("hard", [False, True])
def test_non_contiguous_logits_get_noise_in_row_major_order_as_torchs(hard):
    compare(lambda lib, logits: _gumbel(hard=hard, dim=0)(lib, logits.transpose(0, 2)), LOGITS,
            rtol=1e-13, atol=1e-15)
