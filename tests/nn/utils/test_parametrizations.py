"""nn.utils.parametrizations against torch on the same seed: orthogonal's maps, spectral_norm's
power iteration (buffers drawn from the default generator) and weight_norm's g and v."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close

_LAYERS = {"linear": lambda nn: nn.Linear(4, 3), "wide": lambda nn: nn.Linear(5, 3),
           "tall": lambda nn: nn.Linear(3, 5), "square": lambda nn: nn.Linear(4, 4),
           "conv": lambda nn: nn.Conv2d(2, 3, 3), "conv_t": lambda nn: nn.ConvTranspose2d(2, 3, 3),
           "conv1d": lambda nn: nn.Conv1d(2, 3, 3)}


def _both(layer, apply, seed=3):
    built = []
    for lib in (torch, hookgrad):
        lib.manual_seed(seed)
        module = _LAYERS[layer](lib.nn).double()
        apply(lib.nn.utils.parametrizations, module)
        built.append(module)
    return built


def _check_same(t_module, h_module, seed=0):
    """Names, buffers, the parametrized weight, its node and the originals' gradients."""
    assert type(h_module).__name__ == type(t_module).__name__
    assert repr(h_module) == repr(t_module)
    assert [n for n, _ in h_module.named_parameters()] == \
        [n for n, _ in t_module.named_parameters()]
    assert list(h_module.state_dict()) == list(t_module.state_dict())
    for (name, t_buffer), (_, h_buffer) in zip(t_module.named_buffers(),
                                               h_module.named_buffers()):
        assert_close(h_buffer, t_buffer, what=name)
    t_weight, h_weight = t_module.weight, h_module.weight
    assert_close(h_weight, t_weight)
    assert h_weight.grad_fn.name() == t_weight.grad_fn.name()
    grad = np.random.default_rng(seed).standard_normal(tuple(t_weight.shape))
    t_weight.backward(torch.tensor(grad))
    h_weight.backward(hookgrad.tensor(grad))
    for (name, t_param), (_, h_param) in zip(t_module.named_parameters(),
                                             h_module.named_parameters()):
        if t_param.grad is None:
            assert h_param.grad is None
        else:
            assert_close(h_param.grad, t_param.grad, rtol=1e-9, atol=1e-12, what=name)


@pytest.mark.parametrize("layer", ["square", "wide", "tall"])
@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("use_trivialization", [True, False])
def test_orthogonal_matches_torch(layer, orthogonal_map, use_trivialization):
    t_module, h_module = _both(layer, lambda p, m: p.orthogonal(
        m, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization))
    _check_same(t_module, h_module)
    weight = h_module.weight.detach()
    small = min(weight.shape)
    gram = weight @ weight.mT if weight.shape[0] == small else weight.mT @ weight
    np.testing.assert_allclose(gram.numpy(), np.eye(small), atol=1e-12)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_assignment_and_batches(orthogonal_map):
    value = np.linalg.qr(np.random.default_rng(4).standard_normal((2, 4, 4)))[0]
    results = []
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        module = lib.nn.Module()
        module.weight = lib.nn.Parameter(lib.tensor(np.ones((2, 4, 4))))
        lib.nn.utils.parametrizations.orthogonal(module, orthogonal_map=orthogonal_map)
        module.weight = lib.tensor(value)
        results.append((module.weight.detach().numpy(), module.parametrizations.weight[0].base
                        .numpy()))
    for h, t in zip(results[1], results[0]):
        np.testing.assert_allclose(h, t, atol=1e-12)


def test_orthogonal_gradcheck():
    hookgrad.manual_seed(0)
    module = hookgrad.nn.Linear(3, 4).double()
    hookgrad.nn.utils.parametrizations.orthogonal(module, orthogonal_map="cayley")
    mapping = module.parametrizations.weight[0]
    x = hookgrad.tensor(np.random.default_rng(5).standard_normal((4, 3)) * 0.3,
                        requires_grad=True)
    assert hookgrad.autograd.gradcheck(mapping, (x,))


@pytest.mark.parametrize("error_case", ["vector", "bad_map", "missing"])
def test_orthogonal_errors_match_torch(error_case):
    messages = []
    for lib in (torch, hookgrad):
        module = lib.nn.Linear(3, 3)
        with pytest.raises(ValueError) as info:
            if error_case == "vector":
                lib.nn.utils.parametrizations.orthogonal(module, "bias")
            elif error_case == "bad_map":
                lib.nn.utils.parametrizations.orthogonal(module, orthogonal_map="qr")
            else:
                lib.nn.utils.parametrizations.orthogonal(lib.nn.ReLU())
        messages.append(str(info.value))
    assert messages[1] == messages[0]


@pytest.mark.parametrize("layer", ["linear", "conv", "conv_t"])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("iterations", [1, 3])
def test_spectral_norm_matches_torch(layer, dim, iterations):
    t_module, h_module = _both(layer, lambda p, m: p.spectral_norm(
        m, n_power_iterations=iterations, dim=dim))
    _check_same(t_module, h_module)


def test_spectral_norm_iterates_in_training_only():
    t_module, h_module = _both("linear", lambda p, m: p.spectral_norm(m))
    x = np.random.default_rng(6).standard_normal((2, 4))
    for step in range(3):
        if step == 2:
            t_module.eval()
            h_module.eval()
        t_u = t_module.parametrizations.weight[0]._u.clone()
        h_u = h_module.parametrizations.weight[0]._u.clone()
        assert_close(h_module(hookgrad.tensor(x)), t_module(torch.tensor(x)))
        changed = not torch.equal(t_u, t_module.parametrizations.weight[0]._u)
        assert changed == (not hookgrad.equal(h_u, h_module.parametrizations.weight[0]._u))
        assert changed == (step < 2)
    for (name, t_buffer), (_, h_buffer) in zip(t_module.named_buffers(),
                                               h_module.named_buffers()):
        assert_close(h_buffer, t_buffer, what=name)


def test_spectral_norm_of_a_vector_normalizes_it():
    t_module, h_module = _both("linear", lambda p, m: p.spectral_norm(m, "bias"))
    assert_close(h_module.bias, t_module.bias)
    assert [n for n, _ in h_module.named_buffers()] == []


@pytest.mark.parametrize("case", [("dim", 2), ("iterations", 0)])
def test_spectral_norm_errors_match_torch(case):
    errors = []
    for lib in (torch, hookgrad):
        kwargs = {"dim": case[1]} if case[0] == "dim" else {"n_power_iterations": case[1]}
        with pytest.raises((IndexError, ValueError)) as info:
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(3, 2), **kwargs)
        errors.append((type(info.value), str(info.value)))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("dim", [0, 1, 2, -1, None])
def test_weight_norm_matches_torch(dim):
    t_module, h_module = _both("conv1d", lambda p, m: p.weight_norm(m, dim=dim))
    g = h_module.parametrizations.weight.original0
    assert tuple(g.shape) == tuple(t_module.parametrizations.weight.original0.shape)
    _check_same(t_module, h_module)


def test_weight_norm_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(7)
    v = hookgrad.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    for dim, g_shape in ((0, (3, 1)), (1, (1, 4)), (-1, ())):
        g = hookgrad.tensor(rng.standard_normal(g_shape), requires_grad=True)
        assert hookgrad.autograd.gradcheck(lambda v, g: hookgrad._weight_norm(v, g, dim), (v, g))
        assert hookgrad.autograd.gradgradcheck(lambda v, g: hookgrad._weight_norm(v, g, dim),
                                               (v, g))


def test_weight_norm_loads_the_hook_based_keys():
    state = {}
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        if lib is torch:
            with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
                old = lib.nn.utils.weight_norm(lib.nn.Linear(4, 3))
            state = {k: v.numpy() + 1 for k, v in old.state_dict().items()}
        new = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 3))
        assert str(new.load_state_dict({k: lib.tensor(v) for k, v in state.items()})) == \
            "<All keys matched successfully>"
        np.testing.assert_array_equal(new.parametrizations.weight.original0.detach().numpy(),
                                      state["weight_g"])


def test_spectral_norm_float32_draws_match_torch():
    # 16 or more draws take torch's vectorized normal path: the buffers must still agree
    results = []
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(16, 40, 3)
        lib.nn.utils.parametrizations.spectral_norm(conv)
        x = lib.ones(1, 16, 5, 5)
        results.append((conv.parametrizations.weight[0]._u, conv.parametrizations.weight[0]._v,
                        conv(x)))
    for h, t in zip(results[1], results[0]):
        assert_close(h, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dim", [0, 1])
def test_weight_norm_node_saves_what_torch_saves(dim):
    rng = np.random.default_rng(8)
    v = rng.standard_normal((3, 4))
    g = rng.standard_normal((3, 1) if dim == 0 else (1, 4))
    nodes = []
    for lib in (torch, hookgrad):
        v_t, g_t = lib.tensor(v, requires_grad=True), lib.tensor(g, requires_grad=True)
        node = lib._weight_norm(v_t, g_t, dim).grad_fn
        assert node._saved_v is v_t and node._saved_g is g_t
        nodes.append((node.name(), node._saved_dim, node._saved_result1))
    assert nodes[1][:2] == nodes[0][:2]
    assert_close(nodes[1][2], nodes[0][2])
    assert_close(hookgrad.norm_except_dim(hookgrad.tensor(v), 2, dim),
                 torch.norm_except_dim(torch.tensor(v), 2, dim))


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "householder"])
def test_orthogonal_maps_gradcheck(orthogonal_map):
    hookgrad.manual_seed(0)
    module = hookgrad.nn.Linear(3, 4).double()
    hookgrad.nn.utils.parametrizations.orthogonal(module, orthogonal_map=orthogonal_map)
    mapping = module.parametrizations.weight[0]
    x = hookgrad.tensor(np.random.default_rng(9).standard_normal((4, 3)) * 0.3 + 1.5 * np.eye(4, 3),
                        requires_grad=True)
    assert hookgrad.autograd.gradcheck(mapping, (x,))


def test_spectral_norm_gradcheck_in_eval_mode():
    # in eval mode u and v are fixed, so the map is a function of the weight alone
    hookgrad.manual_seed(0)
    module = hookgrad.nn.Linear(4, 3).double()
    hookgrad.nn.utils.parametrizations.spectral_norm(module)
    module.eval()
    mapping = module.parametrizations.weight[0]
    x = hookgrad.tensor(np.random.default_rng(10).standard_normal((3, 4)), requires_grad=True)
    assert hookgrad.autograd.gradcheck(mapping, (x,))
    assert hookgrad.autograd.gradgradcheck(mapping, (x,))
