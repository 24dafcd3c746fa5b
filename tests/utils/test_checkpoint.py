"""utils.checkpoint against torch: pack/unpack hook logs around checkpointed regions, module hooks
during recomputation, gradients equal to the plain run, RNG replay, errors."""
import gc
import warnings
import weakref

import numpy as np
import pytest
import torch
import torch.utils.checkpoint  # noqa: F401  (torch.utils.checkpoint as an attribute)

import hookgrad


def describe(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return tuple(describe(v) for v in value)
    array = value.detach().numpy().astype(np.float64).ravel()
    return (tuple(value.shape), str(value.dtype), tuple(float(f"{v:.9g}") for v in array))


def model_classes(lib):
    class Lin(lib.nn.Module):
        def __init__(self, in_features, out_features, seed=0):
            super().__init__()
            rng = np.random.default_rng(seed)
            self.weight = lib.nn.Parameter(lib.tensor(rng.standard_normal((out_features,
                                                                            in_features))))
            self.bias = lib.nn.Parameter(lib.tensor(rng.standard_normal(out_features)))

        def forward(self, x):
            return x @ self.weight.t() + self.bias

    class Tanh(lib.nn.Module):
        def forward(self, x):
            return x.tanh()

    return Lin, Tanh


def make_model(lib):
    Lin, Tanh = model_classes(lib)
    return lib.nn.Sequential(Lin(3, 4, seed=1), Tanh(), Lin(4, 4, seed=2), Tanh(),
                             Lin(4, 2, seed=3))


def leaf(lib, shape=(5, 3), seed=7, requires_grad=True):
    rng = np.random.default_rng(seed)
    return lib.tensor(rng.standard_normal(shape), requires_grad=requires_grad)


def logging_hooks(lib, log, tag="outer"):
    return lib.autograd.graph.saved_tensors_hooks(
        lambda t: log.append((tag, "pack", tuple(t.shape))) or t,
        lambda t: log.append((tag, "unpack", tuple(t.shape))) or t)


def assert_same_log(scenario, *params):
    logs = []
    for lib in (torch, hookgrad):
        log = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scenario(lib, log, *params)
        logs.append(log)
    assert logs[1] == logs[0]
    assert logs[0]


# -- saved tensors: only the inputs are kept ---------------------------------------------------
def pack_counts_around_region(lib, log, reentrant):
    x = leaf(lib, (4,))

    def region(value):
        log.append("region runs")
        return (value.sin() * value).exp()

    with logging_hooks(lib, log):
        y = lib.utils.checkpoint.checkpoint(region, x, use_reentrant=reentrant)
        out = (y * y).sum()
    log.append("backward")
    out.backward()
    log.append(("x.grad", describe(x.grad)))


def pack_counts_checkpoint_sequential(lib, log, reentrant):
    model = make_model(lib)
    x = leaf(lib)
    with logging_hooks(lib, log):
        out = lib.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=reentrant)
    log.append("backward")
    out.sum().backward()
    log.append(("x.grad", describe(x.grad)))
    log.append(("weight.grad", describe(model[0].weight.grad)))


def user_hooks_inside_region(lib, log):
    x = leaf(lib, (3,))

    def region(value):
        with logging_hooks(lib, log, "inner"):
            inner = value.exp() * value
        return inner.sin()

    with logging_hooks(lib, log):
        y = lib.utils.checkpoint.checkpoint(region, x, use_reentrant=False)
    y.sum().backward()
    log.append(("x.grad", describe(x.grad)))


@pytest.mark.parametrize("reentrant", [False, True])
@pytest.mark.parametrize("scenario", [pack_counts_around_region,
                                      pack_counts_checkpoint_sequential])
def test_saved_tensor_logs_match_torch(scenario, reentrant):
    assert_same_log(scenario, reentrant)


def test_user_hooks_inside_region_match_torch():
    assert_same_log(user_hooks_inside_region)


@pytest.mark.parametrize("lib", [torch, hookgrad])
def test_region_intermediates_are_freed_after_forward(lib):
    """A saved intermediate stays alive in a plain run; inside a checkpoint only a holder is
    stored, so the intermediate is gone as soon as the forward returns."""
    refs = []

    def region(value):
        inner = value.exp()
        refs.append(weakref.ref(inner))
        return (inner * value).sin()

    x = lib.tensor(np.linspace(0.1, 1.0, 6), requires_grad=True)
    plain = region(x)
    gc.collect()
    checkpointed = lib.utils.checkpoint.checkpoint(region, x, use_reentrant=False)
    gc.collect()
    assert [ref() is not None for ref in refs] == [True, False]
    assert plain.grad_fn is not None and checkpointed.grad_fn is not None


# -- module hooks during the checkpointed forward and the recomputation ------------------------
def module_hooks_in_region(lib, log, reentrant, early_stop):
    model = make_model(lib)
    for name, module in model.named_modules():
        module.register_forward_pre_hook(lambda m, a, n=name: log.append((n, "forward_pre")))
        module.register_forward_hook(lambda m, a, o, n=name: log.append((n, "forward")))
        module.register_full_backward_hook(
            lambda m, gi, go, n=name: log.append((n, "backward", describe(gi))))
    x = leaf(lib)
    with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
        out = lib.utils.checkpoint.checkpoint(model, x, use_reentrant=reentrant)
    log.append("backward")
    out.sum().backward()
    log.append(("x.grad", describe(x.grad)))
    log.append(("grads", [describe(p.grad) for p in model.parameters()]))


@pytest.mark.parametrize("reentrant,early_stop", [(False, True), (False, False), (True, True)])
def test_module_hooks_in_region_match_torch(reentrant, early_stop):
    assert_same_log(module_hooks_in_region, reentrant, early_stop)


def hooked_module_with_saved_hooks_and_inplace(lib, log):
    class InPlace(lib.nn.Module):
        def forward(self, x):
            y = x * 2
            y.mul_(x)
            return y.tanh()

    model = InPlace()
    model.register_full_backward_pre_hook(lambda m, go: log.append(("bpre", describe(go))))
    model.register_full_backward_hook(lambda m, gi, go: log.append(("bwd", describe(gi))))
    x = leaf(lib, (3,))
    with logging_hooks(lib, log):
        out = lib.utils.checkpoint.checkpoint(model, x, use_reentrant=False)
    out.sum().backward()
    log.append(("x.grad", describe(x.grad)))


def test_hooked_module_with_saved_hooks_and_inplace_matches_torch():
    assert_same_log(hooked_module_with_saved_hooks_and_inplace)


# -- gradients ---------------------------------------------------------------------------------
def region_with_kwargs(lib, a, b, scale, *, shift):
    return (a * b).sin() * scale + (a.exp() + shift), b.tanh()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_equal_plain_run(dtype):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((4, 3)).astype(dtype) for _ in range(2)]

    def grads(checkpointed):
        a, b = (hookgrad.tensor(x.copy(), requires_grad=True) for x in arrays)
        if checkpointed:
            first, second = hookgrad.utils.checkpoint.checkpoint(
                lambda *args, **kw: region_with_kwargs(hookgrad, *args, **kw), a, b, 2.0,
                shift=1.5, use_reentrant=False)
        else:
            first, second = region_with_kwargs(hookgrad, a, b, 2.0, shift=1.5)
        (first.sum() + (second * second).sum()).backward()
        return a.grad.numpy(), b.grad.numpy()

    for plain, ckpt in zip(grads(False), grads(True)):
        assert ckpt.dtype == dtype
        np.testing.assert_array_equal(ckpt, plain)


@pytest.mark.parametrize("reentrant", [False, True])
def test_gradients_of_model_match_torch(reentrant):
    results = []
    for lib in (torch, hookgrad):
        model = make_model(lib)
        x = leaf(lib)
        out = lib.utils.checkpoint.checkpoint_sequential(model, 3, x, use_reentrant=reentrant)
        (out * out).sum().backward()
        results.append([x.grad] + [p.grad for p in model.parameters()])
    for expected, actual in zip(*results):
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)


def retain_graph_recomputes_per_backward(lib, log):
    x = leaf(lib, (3,))

    def region(value):
        log.append("region runs")
        return value.exp().sin()

    y = lib.utils.checkpoint.checkpoint(region, x, use_reentrant=False)
    y.sum().backward(retain_graph=True)
    y.sum().backward(retain_graph=True)
    log.append(("x.grad", describe(x.grad)))
    (grad,) = lib.autograd.grad(y.sum(), x)
    log.append(("autograd.grad", describe(grad)))
    try:
        y.sum().backward()
    except RuntimeError as error:
        log.append(("freed", str(error)[:60]))


def input_without_grad_params_with_grad(lib, log, reentrant):
    model = make_model(lib)
    x = leaf(lib, requires_grad=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = lib.utils.checkpoint.checkpoint(model, x, use_reentrant=reentrant)
    log.append([str(w.message) for w in caught])
    log.append(out.requires_grad)
    if out.requires_grad:
        out.sum().backward()
    log.append([describe(p.grad) for p in model.parameters()])


def test_retain_graph_recomputes_per_backward_like_torch():
    assert_same_log(retain_graph_recomputes_per_backward)


def backward_calls_through_two_outputs(lib, log):
    x = leaf(lib, (3,))

    def region(value):
        log.append("region runs")
        hidden = value.exp()
        return hidden.sin(), hidden.cos()

    first, second = lib.utils.checkpoint.checkpoint(region, x, use_reentrant=False)
    # one backward call reaching the region through both outputs recomputes once
    (first.sum() + second.sum()).backward(retain_graph=True)
    log.append(("x.grad", describe(x.grad)))
    # later calls through one output each recompute again
    second.sum().backward(retain_graph=True)
    first.sum().backward()
    log.append(("x.grad", describe(x.grad)))


def test_each_backward_call_through_any_output_recomputes_once_like_torch():
    assert_same_log(backward_calls_through_two_outputs)


@pytest.mark.parametrize("lib", [torch, hookgrad])
def test_outputs_dropped_without_backward_free_the_region(lib):
    # the mark on the outputs must not keep them (or what the region saved) alive
    x = leaf(lib, (3,))
    y = lib.utils.checkpoint.checkpoint(lambda value: value.exp().sin(), x, use_reentrant=False)
    gone = weakref.ref(y)
    del y
    assert gone() is None


@pytest.mark.parametrize("reentrant", [False, True])
def test_input_without_grad_matches_torch(reentrant):
    assert_same_log(input_without_grad_params_with_grad, reentrant)


def test_no_grad_runs_region_once_and_builds_nothing():
    calls = []
    x = hookgrad.ones(3, requires_grad=True)
    with hookgrad.no_grad():
        y = hookgrad.utils.checkpoint.checkpoint(lambda v: calls.append(1) or v.exp(), x,
                                                 use_reentrant=False)
    assert calls == [1] and y.grad_fn is None


# -- random numbers are replayed in the recomputation ------------------------------------------
def noisy_region(value):
    mask = (hookgrad.rand_like(value) > 0.5).to(value.dtype)
    return (value * mask).exp() * 2


@pytest.mark.parametrize("reentrant", [False, True])
def test_rng_state_is_replayed(reentrant):
    def grad(checkpointed, preserve=True):
        hookgrad.manual_seed(11)
        x = hookgrad.tensor(np.linspace(-1, 1, 40), requires_grad=True)
        if checkpointed:
            y = hookgrad.utils.checkpoint.checkpoint(noisy_region, x, use_reentrant=reentrant,
                                                     preserve_rng_state=preserve)
        else:
            y = noisy_region(x)
        y.sum().backward()
        return x.grad.numpy()

    np.testing.assert_array_equal(grad(True), grad(False))
    assert not np.array_equal(grad(True, preserve=False), grad(False))


def test_rng_state_after_checkpoint_backward_is_not_rewound():
    hookgrad.manual_seed(5)
    x = hookgrad.ones(4, requires_grad=True)
    y = hookgrad.utils.checkpoint.checkpoint(noisy_region, x, use_reentrant=False)
    following = hookgrad.rand(3).numpy()
    hookgrad.manual_seed(5)
    noisy_region(hookgrad.ones(4))
    assert np.array_equal(hookgrad.rand(3).numpy(), following)
    y.sum().backward()
    after_backward = hookgrad.rand(3).numpy()
    hookgrad.manual_seed(5)
    noisy_region(hookgrad.ones(4))
    hookgrad.rand(3)
    assert np.array_equal(hookgrad.rand(3).numpy(), after_backward)


# -- errors and warnings -----------------------------------------------------------------------
def warnings_and_errors(lib, log):
    ckpt = lib.utils.checkpoint
    x = leaf(lib, (2,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ckpt.checkpoint(lambda v: v * 2, x)
        ckpt.checkpoint_sequential([lambda v: v * 2, lambda v: v + 1], 2, x)
    log.append([str(w.message) for w in caught])
    for call in (lambda: ckpt.checkpoint(lambda v, k: v, x, use_reentrant=True, k=1),
                 lambda: ckpt.checkpoint(lambda v: v, x, use_reentrant=False,
                                         determinism_check="strict"),
                 lambda: ckpt.checkpoint(lambda v: v, x, use_reentrant=True, debug=True),
                 lambda: ckpt.checkpoint_sequential([lambda v: v], 1, x, use_reentrant=False,
                                                    extra=1),
                 lambda: ckpt.detach_variable([x])):
        try:
            call()
            log.append("no error")
        except (ValueError, RuntimeError) as error:
            log.append((type(error).__name__, str(error)))


def nondeterministic_region(lib, log):
    calls = []

    def region(value):
        calls.append(1)
        return value.exp() if len(calls) == 1 else value[:1].exp()

    x = leaf(lib, (3,))
    y = lib.utils.checkpoint.checkpoint(region, x, use_reentrant=False)
    try:
        y.sum().backward()
    except RuntimeError as error:
        log.append((type(error).__name__, str(error).split("\n")[:4]))


def test_warnings_and_errors_match_torch():
    assert_same_log(warnings_and_errors)


def test_metadata_mismatch_in_recomputation_matches_torch():
    assert_same_log(nondeterministic_region)


@pytest.mark.parametrize("reentrant", [False, True])
def test_dropout_mask_is_replayed(reentrant):
    block = hookgrad.nn.Sequential(hookgrad.nn.Dropout(0.5), hookgrad.nn.Tanh())

    def grad(checkpointed, preserve=True):
        hookgrad.manual_seed(3)
        x = hookgrad.tensor(np.linspace(-1, 1, 64), requires_grad=True)
        if checkpointed:
            y = hookgrad.utils.checkpoint.checkpoint(block, x, use_reentrant=reentrant,
                                                     preserve_rng_state=preserve)
        else:
            y = block(x)
        (y * y).sum().backward()
        return x.grad.numpy()

    plain = grad(False)
    assert np.count_nonzero(plain) not in (0, plain.size)  # the mask drops some, keeps some
    np.testing.assert_array_equal(grad(True), plain)
    assert not np.array_equal(grad(True, preserve=False), plain)
