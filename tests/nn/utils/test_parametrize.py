"""nn.utils.parametrize against torch: the class swap, the stored originals and their
state-dict keys, stacking, assignment through right_inverse, removal, caching and errors."""
import importlib

import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close


def _modules(lib):
    nn = lib.nn
    parametrize = importlib.import_module(lib.__name__ + ".nn.utils.parametrize")

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    class Scale(nn.Module):
        def forward(self, X):
            return X * 2.0

        def right_inverse(self, Y):
            return Y / 2.0

    class Split(nn.Module):
        def forward(self, A, B):
            return A + B * B

        def right_inverse(self, X):
            return X - 1.0, lib.ones_like(X)

    class NoInverse(nn.Module):
        def forward(self, X):
            return X.exp()

    return parametrize, dict(Symmetric=Symmetric, Scale=Scale, Split=Split, NoInverse=NoInverse)


def _linear(lib, *names, features=3):
    lib.manual_seed(0)
    parametrize, kinds = _modules(lib)
    layer = lib.nn.Linear(features, features).double()
    for name in names:
        parametrize.register_parametrization(layer, "weight", kinds[name]())
    return parametrize, layer


def _both(*names):
    return _linear(torch, *names), _linear(hookgrad, *names)


def _state(module):
    return {key: value.detach().numpy() for key, value in module.state_dict().items()}


@pytest.mark.parametrize("names", [("Symmetric",), ("Symmetric", "Scale"), ("Split",),
                                   ("Split", "Scale"), ("NoInverse",), ("Scale", "NoInverse")])
def test_names_values_and_gradients_match_torch(names):
    (_, t_layer), (_, h_layer) = _both(*names)
    assert type(h_layer).__name__ == type(t_layer).__name__ == "ParametrizedLinear"
    assert [n for n, _ in h_layer.named_parameters()] == [n for n, _ in t_layer.named_parameters()]
    assert list(h_layer.state_dict()) == list(t_layer.state_dict())
    assert repr(h_layer) == repr(t_layer)
    x = np.random.default_rng(1).standard_normal((4, 3))
    t_out, h_out = t_layer(torch.tensor(x)), h_layer(hookgrad.tensor(x))
    assert_close(h_out, t_out)
    (t_out ** 2).sum().backward()
    (h_out ** 2).sum().backward()
    for (name, t_param), (_, h_param) in zip(t_layer.named_parameters(),
                                             h_layer.named_parameters()):
        assert_close(h_param, t_param, what=name)
        assert_close(h_param.grad, t_param.grad, what=name)


def test_state_dicts_load_both_ways():
    (_, t_layer), (_, h_layer) = _both("Split", "Scale")
    rng = np.random.default_rng(2)
    t_state = {k: torch.tensor(rng.standard_normal(v.shape)) for k, v in _state(t_layer).items()}
    assert str(h_layer.load_state_dict(t_state)) == "<All keys matched successfully>"
    assert all(np.array_equal(_state(h_layer)[k], v.numpy()) for k, v in t_state.items())
    h_state = {k: hookgrad.tensor(v + 1) for k, v in _state(h_layer).items()}
    torch_layer = _linear(torch, "Split", "Scale")[1]
    torch_layer.load_state_dict({k: torch.tensor(v.numpy()) for k, v in h_state.items()})
    assert all(np.array_equal(_state(torch_layer)[k], v.numpy()) for k, v in h_state.items())


@pytest.mark.parametrize("names", [("Symmetric", "Scale"), ("Split",)])
def test_assignment_goes_through_right_inverse(names):
    (_, t_layer), (_, h_layer) = _both(*names)
    value = np.arange(9.0).reshape(3, 3)
    t_original = next(t_layer.parametrizations.weight.parameters())
    h_original = next(h_layer.parametrizations.weight.parameters())
    t_layer.weight = torch.tensor(value)
    h_layer.weight = hookgrad.tensor(value)
    assert next(h_layer.parametrizations.weight.parameters()) is h_original
    assert next(t_layer.parametrizations.weight.parameters()) is t_original
    for key, expected in _state(t_layer).items():
        np.testing.assert_array_equal(_state(h_layer)[key], expected)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_restores_the_class_and_a_plain_parameter(leave):
    results = []
    for parametrize, layer in _both("Symmetric", "Scale"):
        original = layer.parametrizations.weight.original
        parametrize.remove_parametrizations(layer, "weight", leave_parametrized=leave)
        assert layer.weight is original
        results.append((type(layer).__name__, [n for n, _ in layer.named_parameters()],
                        layer.weight.detach().numpy(), parametrize.is_parametrized(layer),
                        hasattr(layer, "parametrizations")))
    (t_name, t_names, t_weight, *t_flags), (h_name, h_names, h_weight, *h_flags) = results
    assert (h_name, h_names, h_flags) == (t_name, t_names, t_flags)
    np.testing.assert_array_equal(h_weight, t_weight)


def test_remove_a_sequence_original_leaves_a_new_parameter_or_refuses():
    for lib in (torch, hookgrad):
        parametrize, layer = _linear(lib, "Split")
        with pytest.raises(ValueError, match="sequence of tensors"):
            parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
        expected = layer.weight.detach().numpy()
        parametrize.remove_parametrizations(layer, "weight")
        assert isinstance(layer.weight, lib.nn.Parameter)
        np.testing.assert_array_equal(layer.weight.detach().numpy(), expected)


def test_buffers_are_parametrized_as_buffers():
    names = []
    for lib in (torch, hookgrad):
        parametrize, kinds = _modules(lib)
        norm = lib.nn.BatchNorm1d(3)
        parametrize.register_parametrization(norm, "running_var", kinds["Scale"]())
        names.append(([n for n, _ in norm.named_buffers()], list(norm.state_dict()),
                      type(norm).__name__, norm.running_var.numpy().tolist()))
    assert names[1] == names[0]


def test_is_parametrized_and_type_before_parametrizations():
    for lib in (torch, hookgrad):
        parametrize, layer = _linear(lib, "Scale")
        assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "weight")
        assert not parametrize.is_parametrized(layer, "bias")
        assert parametrize.type_before_parametrizations(layer) is lib.nn.Linear
        assert parametrize.type_before_parametrizations(lib.nn.ReLU()) is lib.nn.ReLU
        assert type(layer).__bases__ == (lib.nn.Linear,)
        assert "weight" not in type(_linear(lib)[1]).__dict__  # the property stays per instance


def test_cached_computes_once_and_forgets_on_exit():
    for lib in (torch, hookgrad):
        parametrize, layer = _linear(lib, "Scale")
        with parametrize.cached():
            first = layer.weight
            with parametrize.cached():
                assert layer.weight is first
            assert layer.weight is first
        assert layer.weight is not first


def test_gradcheck_through_a_stack():
    _, layer = _linear(hookgrad, "Symmetric", "Scale")
    stack = layer.parametrizations.weight
    x = hookgrad.tensor(np.random.default_rng(3).standard_normal((3, 3)), requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda t: stack[1](stack[0](t)), (x,))
    assert hookgrad.autograd.gradgradcheck(lambda t: stack[1](stack[0](t)) ** 2, (x,))


def _error(lib, build):
    with pytest.raises(Exception) as info:
        build(lib)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("case", ["missing", "shape", "dtype", "stacked_shape", "no_inverse",
                                  "inverse_type", "empty"])
def test_errors_match_torch(case):
    def build(lib):
        parametrize, kinds = _modules(lib)
        nn = lib.nn
        layer = nn.Linear(3, 3)

        class Wide(nn.Module):
            def forward(self, X):
                return lib.cat([X, X], 0)

        class Double(nn.Module):
            def forward(self, X):
                return X.double()

        class BadInverse(nn.Module):
            def forward(self, X):
                return X

            def right_inverse(self, X):
                return 3

        if case == "missing":
            parametrize.register_parametrization(layer, "gain", kinds["Scale"]())
        elif case == "shape":
            parametrize.register_parametrization(layer, "weight", Wide())
        elif case == "dtype":
            parametrize.register_parametrization(layer, "weight", Double())
        elif case == "stacked_shape":
            parametrize.register_parametrization(layer, "weight", kinds["Scale"]())
            parametrize.register_parametrization(layer, "weight", Wide())
        elif case == "no_inverse":
            parametrize.register_parametrization(layer, "weight", kinds["NoInverse"]())
            layer.weight = lib.zeros(3, 3)
        elif case == "inverse_type":
            parametrize.register_parametrization(layer, "weight", BadInverse())
        else:
            parametrize.ParametrizationList([], layer.weight)

    assert _error(hookgrad, build) == _error(torch, build)


def test_unsafe_allows_a_new_shape():
    shapes = []
    for lib in (torch, hookgrad):
        parametrize, _ = _modules(lib)
        layer = lib.nn.Linear(3, 2)

        class Stack(lib.nn.Module):
            def forward(self, X):
                return lib.cat([X, X], 0)

        parametrize.register_parametrization(layer, "weight", Stack(), unsafe=True)
        shapes.append((tuple(layer.weight.shape), layer.parametrizations.weight.unsafe))
    assert shapes[1] == shapes[0]


def test_transfer_parametrizations_and_params_shares_originals():
    for lib in (torch, hookgrad):
        parametrize, source = _linear(lib, "Split")
        target = lib.nn.Linear(3, 3).double()
        parametrize.transfer_parametrizations_and_params(source, target)
        assert target.parametrizations.weight.original0 is source.parametrizations.weight.original0
        np.testing.assert_array_equal(target.weight.detach().numpy(),
                                      source.weight.detach().numpy())


def test_deepcopy_works_and_pickling_is_refused():
    import copy
    import pickle
    for lib in (torch, hookgrad):
        _, layer = _linear(lib, "Scale")
        clone = copy.deepcopy(layer)
        assert type(clone).__name__ == "ParametrizedLinear"
        np.testing.assert_array_equal(clone.weight.detach().numpy(),
                                      layer.weight.detach().numpy())
        with pytest.raises(RuntimeError, match="only supported through state_dict"):
            pickle.dumps(layer)
