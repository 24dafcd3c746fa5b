"""capture() in memory: what it records equals what plain hooks see, in hookgrad and in torch.

Most tests run twice: on a hookgrad model and on its torch twin (same weights), capturing each
with the same call (``lib`` is the framework)."""
import re

import capture_models as _models
import numpy as np
import pytest
import torch
from conftest import assert_close

import hookgrad
from hookgrad.capture import KINDS, capture

# torch's (and hookgrad's) warning when a module's inputs need no gradient; expected here
pytestmark = pytest.mark.filterwarnings("ignore:Full backward hook is firing")
on_both = pytest.mark.parametrize("lib", _models.libraries(), ids=_models.lib_id)


def positions(values):
    return [("", values[0])] if len(values) == 1 else [(str(i), v) for i, v in enumerate(values)]


def hook_log(lib, model, names):
    """What plain module hooks see, keyed like capture: {key: [array per call, in call order]}.
    Backward hooks fire newest call first, so each step's grad lists are reversed."""
    log = {}

    def add(key, value):
        if value is not None:
            log.setdefault(key, []).append(_models.numpy(value))

    handles = []
    for name in names:
        module = model.get_submodule(name)

        def pre(mod, args, name=name):
            for position, value in positions(args):
                add(f"{name}.input" + (f".{position}" if position else ""), value)

        def post(mod, args, output, name=name):
            output = output if isinstance(output, tuple) else (output,)
            for position, value in positions(output):
                add(f"{name}.output" + (f".{position}" if position else ""), value)

        def backward(mod, grad_input, grad_output, name=name):
            for kind, grads in (("grad_output", grad_output), ("grad_input", grad_input)):
                for position, value in positions(grads):
                    add(f"{name}.{kind}" + (f".{position}" if position else ""), value)

        handles += [module.register_forward_pre_hook(pre), module.register_forward_hook(post),
                    module.register_full_backward_hook(backward)]
    return log, handles


NAMES = ["inp", "shared", "pair", "head"]


def grads_in_call_order(log):
    return {key: (values[::-1] if ".grad_" in key else values) for key, values in log.items()}


@on_both
def test_records_equal_what_plain_hooks_see(lib):
    model = _models.build(lib)
    log, handles = hook_log(lib, model, NAMES)
    with capture(model, layers=NAMES) as cap:
        _models.step(lib, model)
    for handle in handles:
        handle.remove()
    expected = grads_in_call_order(log)
    assert sorted(cap.keys()) == sorted(expected)
    for key, arrays in expected.items():
        assert len(cap[key]) == len(arrays), key
        for got, want in zip(cap[key], arrays):
            np.testing.assert_array_equal(got, want, err_msg=key)
            assert got.dtype == want.dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_records_equal_torch_hooks(dtype):
    model = _models.build(hookgrad, dtype=dtype)
    reference = _models.build(torch, dtype=dtype)
    log, _ = hook_log(torch, reference, NAMES)
    with capture(model, layers=NAMES) as cap:
        _models.step(hookgrad, model, dtype=dtype)
    _models.step(torch, reference, dtype=dtype)
    expected = grads_in_call_order(log)
    assert sorted(cap.keys()) == sorted(expected)
    for key, arrays in expected.items():
        assert len(cap[key]) == len(arrays), key
        for got, want in zip(cap[key], arrays):
            assert_close(got, want, what=key)


@on_both
def test_grad_input_of_an_input_without_grad_is_zeros_as_in_torch(lib):
    model = _models.build(lib)
    with capture(model, layers="pair", kinds=("grad_input",)) as cap:
        _models.step(lib, model)
    assert cap.keys() == ["pair.grad_input.0", "pair.grad_input.1"]
    assert not np.any(cap["pair.grad_input.1"][0])


@on_both
def test_a_module_called_twice_gives_two_records_tagged_by_call(lib):
    model = _models.build(lib)
    with capture(model, layers="shared", kinds=KINDS) as cap:
        _models.step(lib, model)
    for kind in KINDS:
        records = cap.records(f"shared.{kind}")
        assert [(r.step, r.call) for r in records] == [(0, 0), (0, 1)]
    # the second call's input is the first call's output; its grad_input is the first's
    # grad_output (the calls are attributed correctly although backward visits them reversed)
    np.testing.assert_array_equal(cap["shared.input"][1], cap["shared.output"][0])
    np.testing.assert_array_equal(cap["shared.grad_input"][1], cap["shared.grad_output"][0])


@on_both
def test_only_the_requested_kinds_are_recorded(lib):
    model = _models.build(lib)
    with capture(model, layers=["head"], kinds=("output", "grad_output")) as cap:
        _models.step(lib, model)
    assert cap.keys() == ["head.output", "head.grad_output"]


@on_both
def test_steps_advance_with_each_forward_of_the_root(lib):
    model = _models.build(lib)
    with capture(model, layers="head", kinds=("output", "grad_output")) as cap:
        for seed in range(3):
            _models.step(lib, model, seed=seed)
    assert [r.step for r in cap.records("head.output")] == [0, 1, 2]
    assert [r.step for r in cap.records("head.grad_output")] == [0, 1, 2]
    assert cap.current_step == 2


@on_both
def test_manual_steps(lib):
    model = _models.build(lib)
    with capture(model, layers="head", kinds=("output",), auto_step=False) as cap:
        for seed in range(4):
            _models.step(lib, model, seed=seed)
            if seed % 2:
                cap.step()
    assert [r.step for r in cap.records("head.output")] == [0, 0, 1, 1]
    assert [r.call for r in cap.records("head.output")] == [0, 1, 0, 1]


@on_both
def test_records_are_copies_unchanged_by_later_in_place_ops(lib):
    model = _models.build(lib)
    with capture(model, layers="head", kinds=("output",)) as cap, lib.no_grad():
        out = model(*_models.inputs(lib))
        before = out.numpy().copy()
        out.mul_(0)
    np.testing.assert_array_equal(cap["head.output"][0], before)


@on_both
def test_input_is_recorded_before_an_in_place_forward_changes_it(lib):
    class InPlace(lib.nn.Module):
        def forward(self, x):
            return x.relu_()

    model = lib.nn.Sequential(InPlace())
    x = lib.tensor([-1.0, 2.0])
    with capture(model, layers="0", kinds=("input", "output")) as cap:
        model(x)
    np.testing.assert_array_equal(cap["0.input"][0], [-1.0, 2.0])
    np.testing.assert_array_equal(cap["0.output"][0], [0.0, 2.0])


HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
              "_forward_hooks_always_called", "_forward_hooks_with_kwargs")


def assert_no_hooks(model):
    for name, module in model.named_modules():
        for attribute in HOOK_DICTS:
            assert not getattr(module, attribute), f"{name or 'model'}.{attribute} not empty"


@on_both
def test_hooks_are_removed_on_exit(lib):
    model = _models.build(lib)
    x, y = _models.inputs(lib)
    with capture(model, layers="*", kinds=KINDS):
        out = model(x, y)
    assert_no_hooks(model)
    out.sum().backward()  # the tensor hooks left on this graph were removed too
    assert out.grad_fn is not None


@on_both
def test_tensor_hooks_left_on_a_graph_do_not_record_after_exit(lib):
    model = _models.build(lib)
    x, y = _models.inputs(lib)
    with capture(model, layers="head", kinds=("grad_output",)) as cap:
        out = model(x, y)
    out.sum().backward()
    assert cap.keys() == []


@on_both
def test_hooks_are_removed_after_an_exception(lib):
    model = _models.build(lib)
    with pytest.raises(ZeroDivisionError), capture(model, layers=["inp", "pair"], kinds=KINDS):
        model(*_models.inputs(lib))
        raise ZeroDivisionError
    assert_no_hooks(model)


@on_both
def test_hooks_are_removed_when_forward_raises(lib):
    model = _models.build(lib)
    with pytest.raises(RuntimeError), capture(model, kinds=KINDS):
        model(lib.zeros(2, 7), lib.zeros(2, 4))  # wrong width: matmul fails
    assert_no_hooks(model)


@on_both
def test_an_unknown_name_lists_close_names(lib):
    model = _models.build(lib)
    with pytest.raises(KeyError, match=r"'shard' not found; did you mean 'shared'"):
        capture(model, layers=["head", "shard"])
    assert_no_hooks(model)


@on_both
def test_an_unknown_key_lists_close_keys(lib):
    model = _models.build(lib)
    with capture(model, layers="head", kinds=("output",)) as cap:
        model(*_models.inputs(lib))
    with pytest.raises(KeyError, match=r"'head.outputs' not found; did you mean 'head.output'"):
        cap["head.outputs"]


@on_both
def test_an_unknown_kind_is_a_value_error(lib):
    with pytest.raises(ValueError, match="unknown kind 'outputs'"):
        capture(_models.build(lib), kinds=("outputs",))


@on_both
@pytest.mark.parametrize("layers, expected", [
    ("sh*", ["shared"]),
    (re.compile(r"(inp|head)"), ["inp", "head"]),
    ("Sequential", ["seq"]),
    (None, ["inp", "shared", "head", "seq.0", "seq.1"]),
])
def test_selection_by_glob_regex_type_and_default_leaves(lib, layers, expected):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = lib.nn.Identity()
            self.shared = lib.nn.Identity()
            self.head = lib.nn.Identity()
            self.seq = lib.nn.Sequential(lib.nn.Identity(), lib.nn.Identity())

    if layers == "Sequential":
        layers = lib.nn.Sequential
    assert list(capture(Net(), layers=layers).modules) == [
        name for name in ["inp", "shared", "head", "seq", "seq.0", "seq.1"] if name in expected]


@on_both
def test_globs_do_not_select_the_root_but_the_empty_name_does(lib):
    model = _models.build(lib)
    assert "" not in capture(model, layers="*").modules
    with capture(model, layers=[""], kinds=("output",)) as cap:
        out = model(*_models.inputs(lib))
    assert cap.keys() == ["output"]
    np.testing.assert_array_equal(cap["output"][0], out.detach().numpy())


@on_both
def test_per_layer_kinds(lib):
    model = _models.build(lib)
    with capture(model, layers={"inp": ("output",), "head": ("grad_input",)}) as cap:
        _models.step(lib, model)
    assert cap.keys() == ["inp.output", "head.grad_input"]


@on_both
def test_summary_matches_numpy_over_all_records(lib):
    model = _models.build(lib)
    with capture(model, layers="shared", kinds=("output",)) as cap:
        for seed in range(3):
            _models.step(lib, model, seed=seed)
    values = np.concatenate([a.ravel() for a in cap["shared.output"]])
    row = cap.summary()["shared.output"]
    assert (row.count, row.shapes, row.dtype) == (6, [(5, 4)], "float64")
    np.testing.assert_allclose([row.mean, row.std, row.min, row.max],
                               [values.mean(), values.std(), values.min(), values.max()],
                               rtol=1e-12)
    assert "shared.output" in str(cap.summary()) and "float64" in str(cap.summary())


@pytest.mark.filterwarnings("ignore:Using a non-full backward hook")
@on_both
def test_capture_works_next_to_legacy_backward_hooks_for_grad_output(lib):
    model = _models.build(lib)
    legacy = []
    model.head.register_backward_hook(lambda m, gi, go: legacy.append(go[0].numpy().copy()))
    with capture(model, layers="head", kinds=("grad_output",)) as cap:
        _models.step(lib, model)
    np.testing.assert_array_equal(cap["head.grad_output"][0], legacy[0])


@on_both
def test_grad_input_next_to_legacy_backward_hooks_is_a_clear_error(lib):
    model = _models.build(lib)
    model.head.register_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="cannot capture head.grad_input"), \
            capture(model, layers=["inp", "head"], kinds=("grad_input",)):
        pass
    assert not model.inp._backward_hooks


def test_repr_counts_modules_and_keys_in_the_singular_and_plural():
    import hookgrad
    from hookgrad import capture
    model = hookgrad.nn.Sequential(hookgrad.nn.Linear(2, 2), hookgrad.nn.ReLU())
    with capture.capture(model, ["0"], kinds=("output",)) as one:
        model(hookgrad.ones(1, 2))
    assert repr(one) == "<capture of 1 module in memory, closed, 1 key, step 0>"
    with capture.capture(model, ["0", "1"]) as two:
        model(hookgrad.ones(1, 2))
    assert repr(two).startswith("<capture of 2 modules in memory, closed, ")
