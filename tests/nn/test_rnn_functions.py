"""torch.lstm / gru / rnn_tanh / rnn_relu (padded and packed signatures) and torch.*_cell
against torch: outputs, gradients, double backward and errors."""
import numpy as np
import pytest

import hookgrad

from tests.conftest import assert_same_error, compare, compare_double_backward, double_backward

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _params(rng, name, input_size, hidden, layers, bidirectional, has_biases, proj=0):
    directions = 2 if bidirectional else 1
    out_size = proj or hidden
    params = []
    for layer in range(layers):
        width = input_size if layer == 0 else out_size * directions
        for _ in range(directions):
            group = [rng.standard_normal((GATES[name] * hidden, width)) * 0.5,
                     rng.standard_normal((GATES[name] * hidden, out_size)) * 0.5]
            if has_biases:
                group += [rng.standard_normal(GATES[name] * hidden) * 0.5,
                          rng.standard_normal(GATES[name] * hidden) * 0.5]
            if proj:
                group.append(rng.standard_normal((proj, hidden)) * 0.5)
            params += group
    return params


CASES = [  # name, layers, bidirectional, has_biases, batch_first, proj
    ("lstm", 1, False, True, False, 0), ("lstm", 2, True, True, True, 0),
    ("lstm", 2, False, False, False, 0), ("lstm", 2, True, True, False, 2),
    ("gru", 1, False, True, False, 0), ("gru", 2, True, False, True, 0),
    ("rnn_tanh", 2, True, True, False, 0), ("rnn_relu", 1, False, False, True, 0),
]


@pytest.mark.parametrize("name,layers,bidirectional,has_biases,batch_first,proj", CASES)
def test_padded_signature_matches_torch(name, layers, bidirectional, has_biases, batch_first,
                                        proj):
    rng = np.random.default_rng(0)
    hidden, batch, steps = 4, 3, 5
    directions = 2 if bidirectional else 1
    x = rng.standard_normal((batch, steps, 3) if batch_first else (steps, batch, 3))
    h = rng.standard_normal((layers * directions, batch, proj or hidden))
    c = rng.standard_normal((layers * directions, batch, hidden))
    params = _params(rng, name, 3, hidden, layers, bidirectional, has_biases, proj)

    def run(lib, x, h, c, *params):
        hx = (h, c) if name == "lstm" else h
        return getattr(lib, name)(x, hx, list(params), has_biases, layers, 0.0, False,
                                  bidirectional, batch_first)

    hg_out, th_out = compare(run, x, h, c, *params)
    assert len(hg_out) == len(th_out) == (3 if name == "lstm" else 2)


@pytest.mark.parametrize("name,layers,bidirectional", [("lstm", 2, True), ("gru", 1, False),
                                                        ("rnn_tanh", 2, False),
                                                        ("rnn_relu", 1, True)])
def test_packed_signature_matches_torch(name, layers, bidirectional):
    rng = np.random.default_rng(1)
    hidden, batch_sizes = 4, [3, 3, 2, 1]
    directions = 2 if bidirectional else 1
    data = rng.standard_normal((sum(batch_sizes), 3))
    h = rng.standard_normal((layers * directions, 3, hidden))
    c = rng.standard_normal((layers * directions, 3, hidden))
    params = _params(rng, name, 3, hidden, layers, bidirectional, True)

    def run(lib, data, h, c, *params):
        hx = (h, c) if name == "lstm" else h
        sizes = lib.tensor(batch_sizes)
        return getattr(lib, name)(data, sizes, hx, list(params), True, layers, 0.0, False,
                                  bidirectional)

    compare(run, data, h, c, *params)


def test_gru_double_backward_matches_torch():
    rng = np.random.default_rng(2)
    x, h = rng.standard_normal((3, 2, 3)), rng.standard_normal((1, 2, 4))
    params = _params(rng, "gru", 3, 4, 1, False, True)
    compare_double_backward(
        lambda lib, x, h, *p: lib.gru(x, h, list(p), True, 1, 0.0, False, False, False)[0],
        x, h, *params)


def test_dropout_between_layers_draws_torch_masks():
    rng = np.random.default_rng(3)
    x, h = rng.standard_normal((4, 2, 3)), rng.standard_normal((2, 2, 4))
    params = _params(rng, "rnn_tanh", 3, 4, 2, False, True)

    def run(lib, x, h, *p):
        lib.manual_seed(5)
        return lib.rnn_tanh(x, h, list(p), True, 2, 0.5, True, False, False)

    compare(run, x, h, *params)


@pytest.mark.parametrize("case", ["hidden_batch", "few_layers", "many_states", "param_count",
                                  "dtype", "lstm_one_state", "lstm_few_states", "unbatched"])
def test_stacked_errors_match_torch(case):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 2, 3))
    gru_params = _params(rng, "gru", 3, 4, 1, False, True)
    lstm_params = _params(rng, "lstm", 3, 4, 2, True, True)

    def run(lib):
        t = lambda a: lib.tensor(a)  # noqa: E731
        p, lp = [t(a) for a in gru_params], [t(a) for a in lstm_params]
        h1, h4 = t(np.zeros((1, 2, 4))), t(np.zeros((4, 2, 4)))
        if case == "hidden_batch":
            return lib.gru(t(x), t(np.zeros((1, 3, 4))), p, True, 1, 0.0, False, False, False)
        if case == "few_layers":
            return lib.gru(t(x), h1, p, True, 2, 0.0, False, False, False)
        if case == "many_states":
            return lib.gru(t(x), h4[:2], p, True, 1, 0.0, False, False, False)
        if case == "unbatched":
            return lib.gru(t(x[:, 0]), h1, p, True, 1, 0.0, False, False, False)
        if case == "param_count":
            return lib.gru(t(x), h1, p[:3], True, 1, 0.0, False, False, False)
        if case == "dtype":
            return lib.gru(t(x).float(), h1, p, True, 1, 0.0, False, False, False)
        if case == "lstm_one_state":
            return lib.lstm(t(x), (h4,), lp, True, 2, 0.0, False, True, False)
        return lib.lstm(t(x), (h4[:2], h4[:2]), lp, True, 2, 0.0, False, True, False)

    assert_same_error(run)


@pytest.mark.parametrize("name", ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"])
@pytest.mark.parametrize("biases", ["both", "none", "hh_only"])
def test_cells_match_torch(name, biases):
    rng = np.random.default_rng(5)
    gates = GATES[name[:-5]] * 4
    arrays = [rng.standard_normal((2, 3)), rng.standard_normal((2, 4)),
              rng.standard_normal((2, 4)), rng.standard_normal((gates, 3)),
              rng.standard_normal((gates, 4)), rng.standard_normal(gates),
              rng.standard_normal(gates)]

    def run(lib, x, h, c, w_ih, w_hh, b_ih, b_hh):
        hx = (h, c) if name == "lstm_cell" else h
        if biases == "none":
            return getattr(lib, name)(x, hx, w_ih, w_hh)
        if biases == "hh_only":
            return getattr(lib, name)(x, hx, w_ih, w_hh, None, b_hh)
        return getattr(lib, name)(x, hx, w_ih, w_hh, b_ih, b_hh)

    compare(run, *arrays)
    double_backward(lambda lib, *a: run(lib, *a)[0] if name == "lstm_cell" else run(lib, *a),
                    *arrays)


@pytest.mark.parametrize("case", ["unbatched", "batch", "hidden", "input", "lstm_one",
                                  "lstm_tensor", "dtype"])
def test_cell_errors_match_torch(case):
    rng = np.random.default_rng(6)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    w, wh = rng.standard_normal((12, 3)), rng.standard_normal((12, 4))
    lw, lwh = rng.standard_normal((16, 3)), rng.standard_normal((16, 4))

    def run(lib):
        t = lib.tensor
        if case == "unbatched":
            return lib.gru_cell(t(x[0]), t(h[0]), t(w), t(wh))
        if case == "batch":
            return lib.gru_cell(t(x), t(h[:1]), t(w), t(wh))
        if case == "hidden":
            return lib.gru_cell(t(x), t(h[:, :3]), t(w), t(wh))
        if case == "input":
            return lib.gru_cell(t(x[:, :2]), t(h), t(w), t(wh))
        if case == "lstm_one":
            return lib.lstm_cell(t(x), (t(h),), t(lw), t(lwh))
        if case == "lstm_tensor":
            return lib.lstm_cell(t(x), t(h), t(lw), t(lwh))
        return lib.gru_cell(t(x).float(), t(h), t(w), t(wh))

    assert_same_error(run)


def test_float32_lstm_matches_torch():
    rng = np.random.default_rng(7)
    arrays = [a.astype(np.float32) for a in
              [rng.standard_normal((4, 2, 3)), rng.standard_normal((2, 2, 4)),
               rng.standard_normal((2, 2, 4))] + _params(rng, "lstm", 3, 4, 1, True, True)]

    def run(lib, x, h, c, *p):
        return lib.lstm(x, (h, c), list(p), True, 1, 0.0, False, True, False)

    hg_out, _ = compare(run, *arrays)
    assert all(t.dtype == hookgrad.float32 for t in hg_out)


@pytest.mark.parametrize("case", ["packed_hidden_batch", "bidirectional_odd_states"])
def test_packed_errors_match_torch(case):
    rng = np.random.default_rng(8)
    data = rng.standard_normal((6, 3))
    params = _params(rng, "gru", 3, 4, 1, False, True)

    def run(lib):
        p = [lib.tensor(a) for a in params]
        if case == "packed_hidden_batch":
            hx = lib.zeros(1, 4, 4, dtype=lib.float64)
            return lib.gru(lib.tensor(data), lib.tensor([3, 2, 1]), hx, p, True, 1, 0.0, False,
                           False)
        hx = lib.zeros(1, 2, 4, dtype=lib.float64)
        return lib.gru(lib.tensor(data), lib.tensor([2, 2, 2]), hx, p, True, 1, 0.0, False, True)

    assert_same_error(run)


def test_packed_rows_past_the_batch_sizes_are_not_read():
    rng = np.random.default_rng(9)
    arrays = [rng.standard_normal((6, 3)), rng.standard_normal((1, 3, 4))]
    arrays += _params(rng, "gru", 3, 4, 1, False, True)
    compare(lambda lib, d, h, *p: lib.gru(d, lib.tensor([3, 2]), h, list(p), True, 1, 0.0, False,
                                          False), *arrays)
