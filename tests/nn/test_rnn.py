"""RNN, LSTM, GRU and their cells against torch: parameter names, shapes and order, repr,
outputs, final states and the gradients of inputs, initial states and every parameter, for every
option; packed batches; dropout between layers; torch's errors for bad shapes."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error

KINDS = ["RNN", "RNN_relu", "LSTM", "LSTM_proj", "GRU"]


def build(lib, kind: str, *args, **kwargs):
    if kind == "RNN_relu":
        kwargs["nonlinearity"] = "relu"
    if kind == "LSTM_proj":
        kwargs["proj_size"] = 2
    name = kind.split("_")[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropout with one layer warns in both
        return getattr(lib.nn, name)(*args, **kwargs)


def pair(kind: str, *args, dtype=torch.float64, **kwargs):
    """The torch module and a hookgrad one holding the same weights (copied from torch)."""
    torch.manual_seed(0)
    theirs = build(torch, kind, *args, **kwargs).to(dtype)
    ours = build(hookgrad, kind, *args, **kwargs)
    ours = ours.double() if dtype == torch.float64 else ours
    ours.load_state_dict({k: hookgrad.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def states_of(kind, hidden):
    return list(hidden) if kind.startswith("LSTM") else [hidden]


def run_both(ours, theirs, kind, x, h0=None, c0=None, seed=0, make_input=None):
    """Forward both modules on the same arrays, backward a random weighting of the output
    and the final states; returns per library (outputs, input grads, parameter grads)."""
    results = []
    for lib, module in ((hookgrad, ours), (torch, theirs)):
        leaves = [lib.tensor(a.copy(), requires_grad=True) for a in (x, h0, c0) if a is not None]
        inputs = make_input(lib, leaves[0]) if make_input else leaves[0]
        hidden = None
        if h0 is not None:
            hidden = (leaves[1], leaves[2]) if kind.startswith("LSTM") else leaves[1]
        output, final = module(inputs, hidden)
        if make_input:
            output = output.data
        outputs = [output] + states_of(kind, final)
        rng = np.random.default_rng(seed)
        total = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in outputs)
        total.backward()
        params = {name: p.grad for name, p in module.named_parameters()}
        results.append((outputs, [t.grad for t in leaves], params))
    return results


def assert_same_results(results, rtol=None, atol=None):
    (h_out, h_in, h_par), (t_out, t_in, t_par) = results
    for i, (h, t) in enumerate(zip(h_out, t_out)):
        assert_close(h, t, rtol, atol, what=f"output {i}")
    for i, (h, t) in enumerate(zip(h_in, t_in)):
        assert_close(h, t, rtol, atol, what=f"grad of input {i}")
    assert list(h_par) == list(t_par)
    for name in t_par:
        assert_close(h_par[name], t_par[name], rtol, atol, what=f"grad of {name}")


def initial_states(kind, layers, batch, hidden=4, rng=None):
    h_size = 2 if kind == "LSTM_proj" else hidden
    shape = (layers,) if batch is None else (layers, batch)
    h0 = rng.standard_normal(shape + (h_size,))
    c0 = rng.standard_normal(shape + (hidden,)) if kind.startswith("LSTM") else None
    return h0, c0


OPTIONS = list(itertools.product(KINDS, [1, 2], [True, False], [False, True], [False, True]))


@pytest.mark.parametrize("kind,num_layers,bias,batch_first,bidirectional", OPTIONS)
def test_every_option_matches_torch(kind, num_layers, bias, batch_first, bidirectional):
    rng = np.random.default_rng(0)
    ours, theirs = pair(kind, 3, 4, num_layers, bias=bias, batch_first=batch_first,
                        bidirectional=bidirectional)
    x = rng.standard_normal((2, 5, 3) if batch_first else (5, 2, 3))
    directions = 2 if bidirectional else 1
    h0, c0 = initial_states(kind, num_layers * directions, 2, rng=rng)
    assert_same_results(run_both(ours, theirs, kind, x, h0, c0))


@pytest.mark.parametrize("kind", KINDS)
def test_without_initial_state(kind):
    ours, theirs = pair(kind, 3, 4, 2, bidirectional=True)
    x = np.random.default_rng(1).standard_normal((4, 3, 3))
    assert_same_results(run_both(ours, theirs, kind, x))


@pytest.mark.parametrize("kind,batch_first", list(itertools.product(KINDS, [False, True])))
def test_unbatched_input(kind, batch_first):
    rng = np.random.default_rng(2)
    ours, theirs = pair(kind, 3, 4, 2, batch_first=batch_first, bidirectional=True)
    h0, c0 = initial_states(kind, 4, None, rng=rng)
    assert_same_results(run_both(ours, theirs, kind, rng.standard_normal((5, 3)), h0, c0))
    assert_same_results(run_both(ours, theirs, kind, rng.standard_normal((5, 3))))


@pytest.mark.parametrize("kind", KINDS)
def test_float32_within_tolerance(kind):
    rng = np.random.default_rng(3)
    ours, theirs = pair(kind, 3, 4, 2, dtype=torch.float32, bidirectional=True)
    x = rng.standard_normal((6, 2, 3)).astype(np.float32)
    h0, c0 = initial_states(kind, 4, 2, rng=rng)
    h0 = h0.astype(np.float32)
    c0 = None if c0 is None else c0.astype(np.float32)
    assert_same_results(run_both(ours, theirs, kind, x, h0, c0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind,enforce_sorted,bidirectional",
                         list(itertools.product(KINDS, [True, False], [False, True])))
def test_packed_sequence_matches_torch(kind, enforce_sorted, bidirectional):
    rng = np.random.default_rng(4)
    ours, theirs = pair(kind, 3, 4, 2, bidirectional=bidirectional)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = rng.standard_normal((5, 4, 3))
    h0, c0 = initial_states(kind, 4 if bidirectional else 2, 4, rng=rng)

    def make_input(lib, tensor):
        return lib.nn.utils.rnn.pack_padded_sequence(tensor, lengths,
                                                     enforce_sorted=enforce_sorted)

    assert_same_results(run_both(ours, theirs, kind, x, h0, c0, make_input=make_input))
    assert_same_results(run_both(ours, theirs, kind, x, make_input=make_input))


@pytest.mark.parametrize("kind", ["GRU", "LSTM_proj"])
def test_packed_output_keeps_the_permutation(kind):
    ours, theirs = pair(kind, 3, 4, batch_first=True)
    x = np.random.default_rng(5).standard_normal((3, 4, 3))
    packed = []
    for lib, module in ((hookgrad, ours), (torch, theirs)):
        sequence = lib.nn.utils.rnn.pack_padded_sequence(lib.tensor(x), [2, 4, 1],
                                                         batch_first=True, enforce_sorted=False)
        output, _ = module(sequence)
        packed.append(output)
    assert isinstance(packed[0], hookgrad.nn.utils.rnn.PackedSequence)
    for field in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        assert getattr(packed[0], field).tolist() == getattr(packed[1], field).tolist()
    padded = [lib.nn.utils.rnn.pad_packed_sequence(p, batch_first=True)[0]
              for lib, p in ((hookgrad, packed[0]), (torch, packed[1]))]
    assert_close(padded[0], padded[1])


@pytest.mark.parametrize("kind", KINDS)
def test_state_dict_keys_shapes_and_repr(kind):
    kwargs = dict(num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)
    ours, theirs = build(hookgrad, kind, 3, 4, **kwargs), build(torch, kind, 3, 4, **kwargs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert repr(ours) == repr(theirs)
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]


@pytest.mark.parametrize("kind", KINDS)
def test_default_repr_and_init_range(kind):
    ours, theirs = build(hookgrad, kind, 3, 16), build(torch, kind, 3, 16)
    assert repr(ours) == repr(theirs)
    for parameter in ours.parameters():  # U(-1/sqrt(hidden), 1/sqrt(hidden))
        values = parameter.detach().numpy()
        assert np.abs(values).max() <= 0.25 and values.std() > 0.1


def test_init_draws_in_torch_order():
    """Each parameter takes its uniform_ draws in registration order; with the generator's
    stream seeded the same way, the same draws fill the same parameters."""
    hookgrad.manual_seed(7)
    module = hookgrad.nn.LSTM(3, 4, 2, bidirectional=True, proj_size=2)
    hookgrad.manual_seed(7)
    expected = []
    for parameter in module.parameters():
        expected.append(hookgrad.empty(tuple(parameter.shape)).uniform_(-0.5, 0.5))
    for parameter, values in zip(module.parameters(), expected):
        assert np.array_equal(parameter.detach().numpy(), values.numpy())


@pytest.mark.parametrize("kind", KINDS)
def test_dropout_is_off_in_eval_and_one_zeroes_between_layers(kind):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 2, 3))
    for dropout, train in ((0.5, False), (1.0, True)):
        ours, theirs = pair(kind, 3, 4, 3, dropout=dropout)
        ours.train(train)
        theirs.train(train)
        assert_same_results(run_both(ours, theirs, kind, x))


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_dropout_in_training_changes_the_output(kind):
    hookgrad.manual_seed(0)
    module = build(hookgrad, kind, 3, 8, 2, dropout=0.5)
    x = hookgrad.randn(6, 4, 3)
    first = module(x)[0].detach().numpy()
    second = module(x)[0].detach().numpy()
    module.eval()
    deterministic = module(x)[0].detach().numpy()
    assert not np.allclose(first, second)
    assert not np.allclose(first, deterministic)
    assert np.array_equal(deterministic, module(x)[0].detach().numpy())


def test_dropout_warning_and_option_errors():
    for lib in (torch, hookgrad):
        with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater"):
            lib.nn.GRU(3, 4, dropout=0.2)
    assert_same_error(lambda lib: lib.nn.LSTM(3, 4, dropout=2))
    assert_same_error(lambda lib: lib.nn.LSTM(3, 4, proj_size=4))
    assert_same_error(lambda lib: lib.nn.LSTM(3, 4, proj_size=-1))
    assert_same_error(lambda lib: lib.nn.GRU(3, 4, proj_size=2))
    assert_same_error(lambda lib: lib.nn.RNN(3, 4, nonlinearity="sigmoid"))
    assert_same_error(lambda lib: lib.nn.RNN(3, 0))
    assert_same_error(lambda lib: lib.nn.RNN(3.0, 4))
    assert_same_error(lambda lib: lib.nn.RNN(3, 4, bias=1))
    assert_same_error(lambda lib: lib.nn.RNN(3, 4, num_layers=0))


def test_nonlinearity_as_fourth_positional_argument():
    ours, theirs = hookgrad.nn.RNN(3, 4, 2, "relu"), torch.nn.RNN(3, 4, 2, "relu")
    assert ours.nonlinearity == theirs.nonlinearity == "relu"
    assert ours.mode == theirs.mode


def _hidden(lib, kind, shape):
    h = lib.randn(*shape)
    return (h, lib.randn(*shape)) if kind.startswith("LSTM") else h


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_errors_for_bad_shapes(kind):
    def module(lib):
        torch.manual_seed(0)
        return build(lib, kind, 3, 4, 2)

    assert_same_error(lambda lib: module(lib)(lib.randn(5, 2, 6)))
    assert_same_error(lambda lib: module(lib)(lib.randn(5, 2, 3, 1)))
    assert_same_error(lambda lib: module(lib)(lib.randn(5, 2, 3).double()))
    assert_same_error(lambda lib: module(lib)(lib.randn(5, 2, 3), _hidden(lib, kind, (2, 3, 4))))
    assert_same_error(lambda lib: module(lib)(lib.randn(5, 2, 3), _hidden(lib, kind, (3, 4))))
    assert_same_error(lambda lib: module(lib)(lib.randn(5, 3), _hidden(lib, kind, (2, 1, 4))))
    assert_same_error(lambda lib: module(lib)(lib.randn(5, 3), _hidden(lib, kind, (3, 4))))


def test_lstm_cell_state_size_error():
    def call(lib):
        torch.manual_seed(0)
        return lib.nn.LSTM(3, 4)(lib.randn(5, 2, 3), (lib.randn(1, 2, 4), lib.randn(1, 2, 5)))

    assert_same_error(call)


# -- cells ---------------------------------------------------------------------------------

CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("RNNCell", {"bias": False}),
         ("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {}),
         ("GRUCell", {"bias": False})]


def cell_pair(name, kwargs):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(3, 4, **kwargs).double()
    ours = getattr(hookgrad.nn, name)(3, 4, **kwargs).double()
    ours.load_state_dict({k: hookgrad.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def cell_call(name, module, lib, x, *states):
    if not states:
        result = module(x)
    elif name == "LSTMCell":
        result = module(x, (states[0], states[1]))
    else:
        result = module(x, states[0])
    return list(result) if isinstance(result, tuple) else [result]


@pytest.mark.parametrize("name,kwargs", CELLS)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [True, False])
def test_cells_match_torch(name, kwargs, batched, with_state):
    rng = np.random.default_rng(7)
    ours, theirs = cell_pair(name, kwargs)
    lead = (2,) if batched else ()
    arrays = [rng.standard_normal(lead + (3,))]
    if with_state:
        arrays += [rng.standard_normal(lead + (4,)) for _ in range(2 if name == "LSTMCell" else 1)]
    results = []
    for lib, module in ((hookgrad, ours), (torch, theirs)):
        leaves = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
        outputs = cell_call(name, module, lib, *leaves)
        rng_out = np.random.default_rng(0)
        sum((o * lib.tensor(rng_out.standard_normal(tuple(o.shape)))).sum()
            for o in outputs).backward()
        results.append((outputs, [t.grad for t in leaves],
                        {n: p.grad for n, p in module.named_parameters()}))
    assert_same_results(results)


def second_derivatives(lib, fn, arrays, seed=0):
    """Gradients of <d out/d inputs . w, v> w.r.t. the inputs and w; an unused input (None)
    counts as a zero gradient (hookgrad's relu answers None where torch gives zeros)."""
    rng = np.random.default_rng(seed)
    inputs = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
    out = fn(lib, *inputs)
    weight = lib.tensor(rng.standard_normal(tuple(out.shape)), requires_grad=True)
    firsts = lib.autograd.grad(out, inputs, weight, create_graph=True)
    total = sum((g * lib.tensor(rng.standard_normal(a.shape))).sum()
                for g, a in zip(firsts, arrays))
    seconds = lib.autograd.grad(total, inputs + [weight], allow_unused=True)
    return [np.zeros(t.shape) if g is None else g.detach().numpy()
            for g, t in zip(seconds, inputs + [weight])]


@pytest.mark.parametrize("name,kwargs", CELLS)
def test_cells_double_backward(name, kwargs):
    rng = np.random.default_rng(8)
    torch.manual_seed(0)
    weights = {k: v.detach().double().numpy()
               for k, v in getattr(torch.nn, name)(3, 4, **kwargs).state_dict().items()}
    states = 2 if name == "LSTMCell" else 1
    arrays = [rng.standard_normal((2, 3))] + [rng.standard_normal((2, 4))
                                              for _ in range(states)]
    arrays += list(weights.values())
    names = list(weights)

    def fn(lib, x, *rest):
        hidden, params = rest[:states], dict(zip(names, rest[states:]))
        module = getattr(lib.nn, name)(3, 4, **kwargs).double()
        for key, value in params.items():
            delattr(module, key)
            setattr(module, key, value)
        outputs = cell_call(name, module, lib, x, *hidden)
        return outputs[0] if len(outputs) == 1 else outputs[0] + outputs[1].sum()

    ours = second_derivatives(hookgrad, fn, arrays)
    theirs = second_derivatives(torch, fn, arrays)
    for index, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"input {index}")


def test_cell_reprs_and_state_dict():
    for name, kwargs in CELLS:
        ours, theirs = getattr(hookgrad.nn, name)(3, 4, **kwargs), \
            getattr(torch.nn, name)(3, 4, **kwargs)
        assert repr(ours) == repr(theirs)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_errors(name):
    def state(lib, *shape):
        return (lib.randn(*shape), lib.randn(*shape)) if name == "LSTMCell" else lib.randn(*shape)

    def cell(lib):
        torch.manual_seed(0)
        return getattr(lib.nn, name)(3, 4)

    assert_same_error(lambda lib: cell(lib)(lib.randn(2, 5)))
    assert_same_error(lambda lib: cell(lib)(lib.randn(2, 3), state(lib, 3, 4)))
    assert_same_error(lambda lib: cell(lib)(lib.randn(2, 3), state(lib, 2, 5)))
    assert_same_error(lambda lib: cell(lib)(lib.randn(2, 3, 3)))
    assert_same_error(lambda lib: cell(lib)(lib.randn(3), state(lib, 2, 4)))
    assert_same_error(lambda lib: cell(lib)(lib.randn(2, 3).double()))


def test_rnn_gradients_pass_gradcheck():
    module = hookgrad.nn.GRU(2, 2, 2, bidirectional=True).double()
    x = hookgrad.randn(2, 1, 2, dtype=hookgrad.float64, requires_grad=True)
    h0 = hookgrad.randn(4, 1, 2, dtype=hookgrad.float64, requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda a, b: module(a, b)[0], (x, h0))


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM_proj"])
def test_module_double_backward_matches_torch(kind):
    """Second derivatives through a whole two-layer bidirectional module, w.r.t. its input
    and initial states (weights fixed)."""
    rng = np.random.default_rng(9)
    ours, theirs = pair(kind, 3, 4, 2, bidirectional=True)
    h0, c0 = initial_states(kind, 4, 2, rng=rng)
    arrays = [rng.standard_normal((3, 2, 3)), h0] + ([c0] if c0 is not None else [])

    def fn(lib, x, *states):
        module = ours if lib is hookgrad else theirs
        output, final = module(x, tuple(states) if len(states) == 2 else states[0])
        return output.sum(-1) + states_of(kind, final)[0].sum()

    for a, b in zip(second_derivatives(hookgrad, fn, arrays),
                    second_derivatives(torch, fn, arrays)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def _generators_agree() -> bool:
    """Whether hookgrad's uniform_ reproduces torch's stream for the same seed (the premise of
    comparing default initialisations value for value)."""
    hookgrad.manual_seed(3)
    torch.manual_seed(3)
    ours = hookgrad.nn.init.uniform_(hookgrad.empty(40), -0.5, 0.5)
    theirs = torch.nn.init.uniform_(torch.empty(40), -0.5, 0.5)
    return np.array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("kind", KINDS + ["RNNCell", "LSTMCell", "GRUCell"])
def test_default_init_equals_torch(kind):
    assert _generators_agree()
    states = []
    for lib in (hookgrad, torch):
        lib.manual_seed(11)
        module = (getattr(lib.nn, kind)(3, 4) if kind.endswith("Cell")
                  else build(lib, kind, 3, 4, 2, bidirectional=True))
        states.append({k: v.detach().numpy() for k, v in module.state_dict().items()})
    assert list(states[0]) == list(states[1])
    for name in states[1]:
        assert np.array_equal(states[0][name], states[1][name]), name


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("lib", [hookgrad, torch], ids=["hookgrad", "torch"])
def test_training_dropout_is_functional_dropout_on_each_inner_layer_output(kind, lib):
    """With the same seed, a 3-layer module in training mode equals three 1-layer modules
    with ``F.dropout(p)`` on the (both-direction) output of the first two: the same masks, in
    the same order, at the same places — in torch and in hookgrad alike."""
    p = 0.4
    lib.manual_seed(0)
    full = build(lib, kind, 3, 4, 3, dropout=p, bidirectional=True).double()
    layers = [build(lib, kind, 3 if k == 0 else 8, 4, bidirectional=True).double()
              for k in range(3)]
    for k, layer in enumerate(layers):
        for name, parameter in layer.named_parameters():
            with lib.no_grad():
                parameter.copy_(getattr(full, name.replace("_l0", f"_l{k}")))
    x = lib.tensor(np.random.default_rng(10).standard_normal((5, 2, 3)))
    lib.manual_seed(1)
    expected = full(x)[0]
    lib.manual_seed(1)
    output = x
    for k, layer in enumerate(layers):
        output = layer(output)[0]
        if k < 2:
            output = lib.nn.functional.dropout(output, p, True)
    np.testing.assert_array_equal(expected.detach().numpy(), output.detach().numpy())
