"""patch(): a module's output or input replaced by fn(module, value), and restored on exit."""
import capture_models as _models
import numpy as np
import pytest
import torch
from conftest import assert_close

import hookgrad
from hookgrad.capture import capture, patch


def mix(module, hidden):
    """Mixup-style: each sample's features mixed with the next sample's."""
    return 0.5 * hidden + 0.5 * hidden.roll(1, 0)


def scale_first(module, args):
    return (args[0] * 3, args[1])


def torch_patched(where, fn, layer):
    """The same replacement done with torch's own hooks, and its output and gradients."""
    model = _models.build(torch)
    module = model.get_submodule(layer)
    if where == "output":
        module.register_forward_hook(lambda m, args, output: fn(m, output))
    else:
        module.register_forward_pre_hook(lambda m, args: fn(m, args if len(args) > 1
                                                               else args[0]))
    out = _models.step(torch, model)
    return out, [p.grad for p in model.parameters()]


@pytest.mark.parametrize("where, fn, layer", [
    ("output", mix, "shared"),
    ("input", mix, "head"),
    ("input", scale_first, "pair"),
])
def test_patch_replaces_like_a_torch_hook(where, fn, layer):
    model = _models.build(hookgrad)
    with patch(model, layer, fn, where=where) as patched:
        out = _models.step(hookgrad, model)
    expected_out, expected_grads = torch_patched(where, fn, layer)
    assert_close(out, expected_out)
    for got, want in zip([p.grad for p in model.parameters()], expected_grads):
        assert_close(got, want)
    calls = 2 if layer == "shared" else 1
    assert patched.calls == calls


def test_patch_is_removed_on_exit():
    model = _models.build(hookgrad)
    x, y = _models.inputs(hookgrad)
    before = model(x, y).detach().numpy().copy()
    with patch(model, "head", lambda m, h: h * 0):
        assert not np.any(model(x, y).detach().numpy())
    assert not model.head._forward_hooks
    np.testing.assert_array_equal(model(x, y).detach().numpy(), before)


def test_patch_is_removed_after_an_exception():
    model = _models.build(hookgrad)
    with pytest.raises(ZeroDivisionError), patch(model, "inp", lambda m, h: h, where="input"):
        raise ZeroDivisionError
    assert not model.inp._forward_pre_hooks


def test_returning_none_keeps_the_value():
    model = _models.build(hookgrad)
    x, y = _models.inputs(hookgrad)
    before = model(x, y).detach().numpy().copy()
    with patch(model, "shared", lambda m, h: None):
        np.testing.assert_array_equal(model(x, y).detach().numpy(), before)


def test_capture_entered_inside_a_patch_records_the_patched_output():
    model = _models.build(hookgrad)
    with patch(model, "head", lambda m, h: h * 0), \
            capture(model, layers="head", kinds=("output",)) as cap:
        model(*_models.inputs(hookgrad))
    assert not np.any(cap["head.output"][0])


def test_a_multi_argument_input_patch_must_return_a_tuple():
    model = _models.build(hookgrad)
    with pytest.raises(TypeError, match="must return a tuple"), \
            patch(model, "pair", lambda m, args: args[0], where="input"):
        model(*_models.inputs(hookgrad))


def test_patch_of_an_unknown_layer_lists_close_names():
    with pytest.raises(KeyError, match="did you mean .*'head'"):
        patch(_models.build(hookgrad), "haed", mix)


def test_where_must_be_input_or_output():
    with pytest.raises(ValueError, match="where must be 'input' or 'output'"):
        patch(_models.build(hookgrad), "head", mix, where="grad")
