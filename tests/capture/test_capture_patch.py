"""patch(): a module's output or input replaced by fn(module, value), and restored on exit;
on a hookgrad model and on its torch twin (``lib``)."""
import capture_models as _models
import numpy as np
import pytest
import torch
from conftest import assert_close

from hookgrad.capture import capture, patch

on_both = pytest.mark.parametrize("lib", _models.libraries(), ids=_models.lib_id)


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


@on_both
@pytest.mark.parametrize("where, fn, layer", [
    ("output", mix, "shared"),
    ("input", mix, "head"),
    ("input", scale_first, "pair"),
])
def test_patch_replaces_like_a_torch_hook(lib, where, fn, layer):
    model = _models.build(lib)
    with patch(model, layer, fn, where=where) as patched:
        out = _models.step(lib, model)
    expected_out, expected_grads = torch_patched(where, fn, layer)
    assert_close(out, expected_out)
    for got, want in zip([p.grad for p in model.parameters()], expected_grads):
        assert_close(got, want)
    calls = 2 if layer == "shared" else 1
    assert patched.calls == calls


@on_both
def test_patch_is_removed_on_exit(lib):
    model = _models.build(lib)
    x, y = _models.inputs(lib)
    before = model(x, y).detach().numpy().copy()
    with patch(model, "head", lambda m, h: h * 0):
        assert not np.any(model(x, y).detach().numpy())
    assert not model.head._forward_hooks
    np.testing.assert_array_equal(model(x, y).detach().numpy(), before)


@on_both
def test_patch_is_removed_after_an_exception(lib):
    model = _models.build(lib)
    with pytest.raises(ZeroDivisionError), patch(model, "inp", lambda m, h: h, where="input"):
        raise ZeroDivisionError
    assert not model.inp._forward_pre_hooks


@on_both
def test_returning_none_keeps_the_value(lib):
    model = _models.build(lib)
    x, y = _models.inputs(lib)
    before = model(x, y).detach().numpy().copy()
    with patch(model, "shared", lambda m, h: None):
        np.testing.assert_array_equal(model(x, y).detach().numpy(), before)


@on_both
def test_capture_entered_inside_a_patch_records_the_patched_output(lib):
    model = _models.build(lib)
    with patch(model, "head", lambda m, h: h * 0), \
            capture(model, layers="head", kinds=("output",)) as cap:
        model(*_models.inputs(lib))
    assert not np.any(cap["head.output"][0])


@on_both
def test_a_multi_argument_input_patch_must_return_a_tuple(lib):
    model = _models.build(lib)
    with pytest.raises(TypeError, match="must return a tuple"), \
            patch(model, "pair", lambda m, args: args[0], where="input"):
        model(*_models.inputs(lib))


@on_both
def test_patch_of_an_unknown_layer_lists_close_names(lib):
    with pytest.raises(KeyError, match="did you mean .*'head'"):
        patch(_models.build(lib), "haed", mix)


@on_both
def test_where_must_be_input_or_output(lib):
    with pytest.raises(ValueError, match="where must be 'input' or 'output'"):
        patch(_models.build(lib), "head", mix, where="grad")
