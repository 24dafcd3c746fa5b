"""torch.func's linearize, functionalize, stack_module_state and
replace_all_batch_norm_modules_ (and vmap at top level) against torch."""
import numpy as np
import pytest
import torch
import torch.func

import hookgrad
from conftest import assert_close, assert_same_error

LIBS = (torch, hookgrad)


# -- linearize ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fn,make_primals,make_tangents", [
    (lambda lib, x, y: (x * y).sin(), lambda lib: (lib.arange(3.0), lib.ones(3) * 0.5),
     lambda lib: (lib.ones(3), lib.arange(3.0))),
    (lambda lib, x: (x.sin(), x.cos().sum()), lambda lib: (lib.arange(3.0),),
     lambda lib: (lib.ones(3),)),
    (lambda lib, d: d["a"].exp() * 2, lambda lib: ({"a": lib.arange(3.0)},),
     lambda lib: ({"a": lib.ones(3)},)),
])
def test_linearize_values(fn, make_primals, make_tangents):
    results = []
    for lib in LIBS:
        output, jvp_fn = lib.func.linearize(lambda *a: fn(lib, *a), *make_primals(lib))
        results.append((output, jvp_fn(*make_tangents(lib)), jvp_fn(*make_tangents(lib))))
    for ours, theirs in zip(results[1], results[0]):
        for a, b in zip(ours if isinstance(ours, tuple) else (ours,),
                        theirs if isinstance(theirs, tuple) else (theirs,)):
            assert_close(a, b, rtol=1e-6, atol=1e-6)


def test_linearize_keeps_the_output_graph_but_not_the_tangent_one():
    flags = []
    for lib in LIBS:
        x = lib.arange(3.0, requires_grad=True)
        output, jvp_fn = lib.func.linearize(lambda v: v * 2, x)
        flags.append((output.requires_grad, jvp_fn(lib.ones(3)).requires_grad))
    assert flags[1] == flags[0]


@pytest.mark.parametrize("tangents", [
    lambda lib: (lib.ones(2), lib.ones(3)),
    lambda lib: (lib.ones(3), lib.ones(3).double()),
])
def test_linearize_tangent_errors(tangents):
    def call(lib):
        _, jvp_fn = lib.func.linearize(lambda x, y: x * y, lib.arange(3.0), lib.ones(3))
        return jvp_fn(*tangents(lib))
    assert_same_error(call)


def test_linearize_tangent_structure_error():
    for lib in LIBS:
        _, jvp_fn = lib.func.linearize(lambda x, y: x * y, lib.arange(3.0), lib.ones(3))
        with pytest.raises(RuntimeError, match="to have the same argspec as the primals"):
            jvp_fn(lib.ones(3))


# -- functionalize ------------------------------------------------------------------------------
def _mutating(x):
    y = x.clone()
    y.add_(1)
    x.mul_(2)
    return y


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_functionalize_gives_eager_results_and_input_mutations(remove):
    results = []
    for lib in LIBS:
        x = lib.ones(2)
        wrapped = lib.func.functionalize(_mutating, remove=remove)
        results.append((wrapped(x), x, wrapped.__name__))
    assert_close(results[1][0], results[0][0])
    assert_close(results[1][1], results[0][1])
    assert results[1][2] == results[0][2] == "_mutating"


def test_functionalize_keeps_gradients():
    grads = []
    for lib in LIBS:
        x = lib.arange(3.0, requires_grad=True)
        lib.func.functionalize(lambda v: (v * 2).sin())(x).sum().backward()
        grads.append(x.grad)
    assert_close(grads[1], grads[0])


def test_functionalize_remove_is_checked():
    assert_same_error(lambda lib: lib.func.functionalize(_mutating, remove="x"))


# -- modules ------------------------------------------------------------------------------------
def _models(lib, count=3):
    lib.manual_seed(0)
    models = []
    for _ in range(count):
        model = lib.nn.Linear(2, 3)
        model.register_buffer("steps", lib.ones(1))
        models.append(model)
    return models


def test_stack_module_state():
    seen = []
    for lib in LIBS:
        params, buffers = lib.func.stack_module_state(_models(lib))
        seen.append(({k: (tuple(v.shape), v.requires_grad, v.is_leaf) for k, v in params.items()},
                     {k: (tuple(v.shape), v.requires_grad) for k, v in buffers.items()},
                     params["weight"].detach().numpy()))
    assert seen[1][:2] == seen[0][:2]
    np.testing.assert_allclose(seen[1][2], seen[0][2], rtol=1e-6)


def test_stack_module_state_of_frozen_models():
    seen = []
    for lib in LIBS:
        models = [m.requires_grad_(False) for m in _models(lib, 2)]
        params, _ = lib.func.stack_module_state(lib.nn.ModuleList(models))
        seen.append({k: v.requires_grad for k, v in params.items()})
    assert seen[1] == seen[0]


@pytest.mark.parametrize("models", [
    lambda lib: [],
    lambda lib: [lib.nn.Linear(2, 3), lib.nn.Linear(2, 3).eval()],
    lambda lib: [lib.nn.Linear(2, 3), lib.nn.Conv1d(2, 2, 1)],
    lambda lib: [lib.nn.Linear(2, 3), lib.nn.Linear(2, 2)],
    lambda lib: [lib.nn.Linear(2, 3), lib.nn.Linear(2, 3).requires_grad_(False)],
])
def test_stack_module_state_errors(models):
    assert_same_error(lambda lib: lib.func.stack_module_state(models(lib)))


def test_replace_all_batch_norm_modules():
    seen = []
    for lib in LIBS:
        lib.manual_seed(0)
        root = lib.nn.Sequential(lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 3),
                                 lib.nn.InstanceNorm1d(3, track_running_stats=True))
        same = lib.func.replace_all_batch_norm_modules_(root) is root
        norm = root[0]
        root.eval()
        out = root[0](lib.arange(6.0).reshape(2, 3))
        seen.append((same, norm.running_mean, norm.running_var, norm.num_batches_tracked,
                     norm.track_running_stats, list(norm.state_dict()),
                     root[2].track_running_stats, root[2].running_mean is not None,
                     out.detach().numpy().round(5).tolist()))
    assert seen[1] == seen[0]


def test_vmap_at_top_level():
    results = [lib.vmap(lambda v: v.sum() * 2)(lib.arange(6.0).reshape(3, 2)) for lib in LIBS]
    assert_close(results[1], results[0])
    assert hookgrad.vmap is hookgrad.func.vmap


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
@pytest.mark.parametrize("fn", [lambda v: v.view(2), lambda v: v, lambda v: v[:1]])
def test_functionalize_views_of_inputs(remove, fn):
    seen = []
    for lib in LIBS:
        x = lib.ones(2)
        out = lib.func.functionalize(fn, remove=remove)(x)
        seen.append((out is x, out.data_ptr() == x.data_ptr()))
    assert seen[1] == seen[0]
