"""capture(model, ops=[...]): functional calls inside ``forward``, recorded under the module
that made them, on a hookgrad model and on its torch twin (through torch's own
``torch.overrides.TorchFunctionMode``), checked against each other and against the tensors the
model computed."""
import contextlib
import re
from pathlib import Path

import capture_models as _models
import numpy as np
import pytest
import torch
from conftest import assert_close

from hookgrad.capture import CaptureKeyError, capture, load
from hookgrad.overrides import has_torch_function

pytestmark = pytest.mark.filterwarnings("ignore:Full backward hook is firing")
on_both = pytest.mark.parametrize("lib", _models.libraries(), ids=_models.lib_id)
OPS = ["matmul", "div", "softmax", "scaled_dot_product_attention", "cat", "linear", "relu"]


def metadata(cap):
    return [(r.key, r.module, r.kind, r.position, r.step, r.call, r.shape, r.dtype)
            for r in cap.records()]


def attention_capture(lib, dtype=np.float64, steps=1, **options):
    model = _models.build_attention(lib, dtype=dtype)
    options.setdefault("ops", OPS)
    with capture(model, **options) as cap:
        for seed in range(steps):
            _models.attention_step(lib, model, seed=seed, dtype=dtype)
    return model, cap


def mode_active(lib):
    if lib is torch:
        return torch.overrides._get_current_function_mode() is not None
    return has_torch_function(())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_hookgrad_model_and_its_torch_twin_record_the_same_ops(dtype):
    (_, ours), (_, theirs) = [attention_capture(lib, dtype, steps=2)
                              for lib in _models.libraries()]
    assert ours.keys() == theirs.keys()
    assert metadata(ours) == metadata(theirs)
    for key in ours:
        for got, want in zip(ours[key], theirs[key]):
            assert_close(got, want, what=key)


@on_both
def test_keys_name_the_module_the_op_and_its_index_in_that_forward(lib):
    _, cap = attention_capture(lib, kinds=("output",))
    assert cap.keys() == [
        "attn/matmul:0.output", "attn/matmul:1.output", "attn/div:0.output",
        "attn/softmax:0.output", "attn/matmul:2.output",
        "attn/scaled_dot_product_attention:0.output", "attn/cat:0.output",
        "attn/linear:0.output", "relu:0.output", "softmax:0.output"]
    # the shared attention runs twice per forward: two calls, as its module records would be
    assert [r.call for r in cap.records("attn/softmax:0.output")] == [0, 1]
    assert [r.call for r in cap.records("softmax:0.output")] == [0]


@on_both
def test_records_are_the_tensors_forward_computed_and_their_gradients(lib):
    model, cap = attention_capture(lib)
    trace = model.attn.trace
    names = {"div:0": "scores", "softmax:0": "weights", "matmul:2": "mixed",
             "scaled_dot_product_attention:0": "fused", "linear:0": "out"}
    for site, name in names.items():
        outputs = cap[f"attn/{site}.output"]
        assert len(outputs) == 2
        for got, call in zip(outputs, trace[:2]):
            np.testing.assert_array_equal(got, _models.numpy(call[name]), err_msg=site)
    # inputs: the softmax saw the scaled scores, the first matmul x and the qkv weight
    np.testing.assert_array_equal(cap["attn/softmax:0.input"][0], cap["attn/div:0.output"][0])
    np.testing.assert_array_equal(cap["attn/matmul:0.input.1"][0], _models.numpy(model.attn.qkv))


@on_both
def test_grad_output_equals_autograd_grad_of_the_op_output(lib):
    model = _models.build_attention(lib)
    x = lib.tensor(np.random.default_rng(3).standard_normal((2, 3, 4)))
    with capture(model, ops=["softmax", "linear"], kinds=("grad_output",)) as cap:
        out = model(x)
        weights = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))
        loss = (out * weights).sum()
        loss.backward(retain_graph=True)
    # after the block: a tensor hook fires for autograd.grad too, but no longer records
    trace = model.attn.trace
    wanted = [trace[0]["weights"], trace[1]["weights"], trace[0]["out"], trace[1]["out"]]
    expected = lib.autograd.grad(loss, wanted)
    got = cap["attn/softmax:0.grad_output"] + cap["attn/linear:0.grad_output"]
    for value, want in zip(got, expected):
        np.testing.assert_allclose(value, _models.numpy(want), rtol=1e-12, atol=1e-15)
    assert [r.call for r in cap.records("attn/softmax:0.grad_output")] == [0, 1]


@on_both
def test_every_spelling_of_a_call_is_recorded_under_the_torch_name(lib):
    functional = lib.nn.functional

    class Spellings(lib.nn.Module):
        def forward(self, a, b):
            first = functional.softmax(a, -1) + lib.softmax(a, dim=-1) + a.softmax(-1)
            product = (a @ b) - lib.matmul(a, b) + a.matmul(b)
            product += 1
            return first / 2, product * 2

    a = lib.tensor(np.random.default_rng(0).standard_normal((3, 3)))
    model = Spellings()
    with capture(model, ops=["softmax", "matmul", "add", "add_", "div"],
                 kinds=("output",)) as cap:
        model(a, a)
    assert cap.keys() == ["softmax:0.output", "softmax:1.output", "add:0.output",
                          "softmax:2.output", "add:1.output", "matmul:0.output",
                          "matmul:1.output", "matmul:2.output", "add:2.output",
                          "add_:0.output", "div:0.output"]
    expected = _models.numpy(functional.softmax(a, -1))
    for index in range(3):
        np.testing.assert_array_equal(cap[f"softmax:{index}.output"][0], expected)


@on_both
def test_qualified_and_operator_spellings_of_an_op_name_select_the_same_calls(lib):
    _, bare = attention_capture(lib, ops=["softmax", "matmul"], kinds=("output",))
    for spelled in (["F.softmax", "__matmul__"], ["torch.softmax", "Tensor.matmul"],
                    ["Tensor.softmax", "torch.nn.functional.softmax", "__rmatmul__"]):
        _, cap = attention_capture(lib, ops=spelled, kinds=("output",))
        assert cap.keys() == bare.keys()


@on_both
def test_an_unknown_op_lists_close_names_before_any_hook(lib):
    model = _models.build_attention(lib)
    with pytest.raises(KeyError, match=r"op 'softmx' not found; did you mean 'softmax'"):
        capture(model, ops=["softmax", "softmx"])
    with pytest.raises(CaptureKeyError, match="module 'atn' not found"):
        capture(model, ops=["atn/softmax"])
    with pytest.raises(TypeError, match="ops are names"):
        capture(model, ops=[len])
    assert not model.attn._forward_pre_hooks and not mode_active(lib)


@on_both
def test_an_op_has_no_grad_input(lib):
    model = _models.build_attention(lib)
    with pytest.raises(ValueError, match="unknown kind 'grad_input' for op 'softmax'"):
        capture(model, ops={"softmax": ("output", "grad_input")})
    _, cap = attention_capture(lib, ops=["relu"])  # the default kinds: grad_input left out
    assert cap.keys() == ["relu:0.input", "relu:0.output", "relu:0.grad_output"]


@on_both
def test_a_module_glob_restricts_where_an_op_is_recorded(lib):
    _, cap = attention_capture(lib, ops={"attn/softmax": ("output",), "relu": "input"})
    assert cap.keys() == ["attn/softmax:0.output", "relu:0.input"]
    _, root = attention_capture(lib, ops=["*/softmax"], kinds=("output",))
    assert root.keys() == ["attn/softmax:0.output"]  # globs match submodules only


@on_both
def test_ops_alone_record_no_module_and_layers_add_module_records(lib):
    _, ops_only = attention_capture(lib, ops=["softmax"], kinds=("output",))
    assert ops_only.keys() == ["attn/softmax:0.output", "softmax:0.output"]
    _, both = attention_capture(lib, ops=["softmax"], layers=["attn"], kinds=("output",))
    assert both.keys() == ["attn/softmax:0.output", "attn.output", "softmax:0.output"]
    # the op records line up with the calls of the module that made them
    assert ([r.call for r in both.records("attn.output")]
            == [r.call for r in both.records("attn/softmax:0.output")] == [0, 1])


@on_both
def test_steps_and_calls_of_op_records(lib):
    _, cap = attention_capture(lib, ops=["softmax"], kinds=("output",), steps=3)
    assert ([(r.step, r.call) for r in cap.records("attn/softmax:0.output")]
            == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)])
    # calls in the root's own forward: one per step
    assert ([(r.step, r.call) for r in cap.records("softmax:0.output")]
            == [(0, 0), (1, 0), (2, 0)])


@on_both
def test_calls_inside_an_op_and_the_captures_own_copies_are_not_recorded(lib):
    # scaled_dot_product_attention and linear may be built from matmul and softmax; only the
    # calls forward makes are seen. ``detach`` and ``numpy`` are what the capture copies with.
    model = _models.build_attention(lib)
    with capture(model, layers=["attn"], ops=["scaled_dot_product_attention", "detach",
                                               "numpy", "clone"]) as cap:
        _models.attention_step(lib, model)
    assert [key for key in cap.keys() if "/" in key] == [
        "attn/scaled_dot_product_attention:0.input.0",
        "attn/scaled_dot_product_attention:0.input.1",
        "attn/scaled_dot_product_attention:0.input.2",
        "attn/scaled_dot_product_attention:0.output",
        "attn/scaled_dot_product_attention:0.grad_output"]


@on_both
def test_a_users_own_mode_sees_the_same_calls_inside_or_outside_the_capture(lib):
    class Log(lib.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    def run(order):
        model = _models.build_attention(lib)
        log = Log()
        x = lib.tensor(np.random.default_rng(0).standard_normal((2, 3, 4)))
        if order == "alone":
            with log:
                model(x).sum().backward()
            return log.names, None
        # grad_output: the capture registers tensor hooks, which the user's mode must not see
        cap = capture(model, layers=["attn"], ops=["softmax", "matmul"],
                      kinds=("output", "grad_output"))
        first, second = (log, cap) if order == "outside" else (cap, log)
        with first, second:
            model(x).sum().backward()
        return log.names, metadata(cap)

    alone, _ = run("alone")
    outside, outside_records = run("outside")
    inside, inside_records = run("inside")
    assert alone == outside == inside
    assert outside_records == inside_records and outside_records


@on_both
def test_nested_ops_captures_record_the_same(lib):
    model = _models.build_attention(lib)
    with capture(model, ops=["softmax"]) as outer, capture(model, ops=["softmax"]) as inner:
        _models.attention_step(lib, model)
    assert metadata(outer) == metadata(inner) and outer.keys()
    for key in outer:
        for got, want in zip(outer[key], inner[key]):
            np.testing.assert_array_equal(got, want)


@on_both
def test_no_mode_and_no_extra_hook_without_ops(lib):
    model = _models.build_attention(lib)
    seen = []
    model.attn.register_forward_hook(lambda *args: seen.append(mode_active(lib)))
    with capture(model, layers=["attn"]):
        model(lib.zeros(1, 2, 4, dtype=lib.float64))
    assert seen == [False, False]
    assert len(model.attn._forward_pre_hooks) == 0 and len(model._forward_pre_hooks) == 0
    with capture(model, ops=["softmax"]):
        model(lib.zeros(1, 2, 4, dtype=lib.float64))
    assert seen[2:] == [True, True]


@on_both
def test_exit_removes_the_mode_and_hooks_also_after_an_error(lib):
    model = _models.build_attention(lib)
    hooks_before = len(model.attn._forward_hooks)
    with pytest.raises(ZeroDivisionError):
        with capture(model, ops=["softmax"]):
            model(lib.zeros(1, 2, 4, dtype=lib.float64))
            1 / 0
    assert not mode_active(lib)
    assert len(model.attn._forward_hooks) == hooks_before and not model.attn._forward_pre_hooks


@on_both
def test_an_in_place_op_has_its_input_copied_before_it_runs(lib):
    class InPlace(lib.nn.Module):
        def forward(self, x):
            return (x * 1).relu_()

    x = lib.tensor([-1.0, 2.0, -3.0])
    with capture(InPlace(), ops=["relu_"]) as cap:
        cap.model(x)
    np.testing.assert_array_equal(cap["relu_:0.input"][0], [-1.0, 2.0, -3.0])
    np.testing.assert_array_equal(cap["relu_:0.output"][0], [0.0, 2.0, 0.0])


@on_both
def test_no_grad_records_no_gradients(lib):
    model = _models.build_attention(lib)
    with capture(model, ops=["softmax"]) as cap, lib.no_grad():
        model(lib.zeros(1, 2, 4, dtype=lib.float64))
    assert cap.keys() == ["attn/softmax:0.input", "attn/softmax:0.output", "softmax:0.input",
                          "softmax:0.output"]


@on_both
def test_ops_stream_to_disk_and_read_back_equal(lib, tmp_path):
    _, memory = attention_capture(lib, steps=2)
    _, disk = attention_capture(lib, steps=2, to=tmp_path / "run")
    run = load(tmp_path / "run")
    assert run.keys() == memory.keys() and metadata(run) == metadata(memory)
    for key in memory:
        for got, want in zip(run[key], memory[key]):
            np.testing.assert_array_equal(got, want)
    meta = (tmp_path / "run" / "capture.json").read_text()
    assert '"scaled_dot_product_attention"' in meta and '"modules": {}' in meta


def test_a_wrapped_torch_model_is_named_as_the_model_it_wraps():
    model = _models.build_attention(torch)
    dp = torch.nn.DataParallel(model)
    with capture(dp, ops=["softmax"], kinds=("output",)) as wrapped:
        _models.attention_step(torch, dp)
    _, plain = attention_capture(torch, ops=["softmax"], kinds=("output",))
    assert metadata(wrapped) == metadata(plain)



@on_both
def test_an_unknown_kind_is_a_value_error_also_for_ops_alone(lib):
    with pytest.raises(ValueError, match="unknown kind 'outputs'"):
        capture(_models.build_attention(lib), ops=["softmax"], kinds=("outputs",))


DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("name", ["capture.md", "pytorch.md"])
def test_the_documented_example_prints_what_the_docs_show(name, tmp_path, monkeypatch, capsys):
    text = (DOCS / name).read_text()
    section = text[text.index("### Functional calls inside `forward`"):]
    (_, code), (_, shown) = re.findall(r"```(\w*)\n(.*?)```", section, re.DOTALL)[:2]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(DOCS / name), "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out == shown


@on_both
def test_grad_output_is_of_the_value_the_op_returned_even_if_changed_in_place_later(lib):
    class ScaledInPlace(lib.nn.Module):
        def forward(self, x, w):
            hidden = x @ w
            hidden.mul_(3)
            return hidden.sum(-1)

    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((3, 2)))
    w = lib.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    scale = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
    with capture(ScaledInPlace(), ops=["matmul", "mul_"], kinds=("grad_output",)) as cap:
        (cap.model(x, w) * scale).sum().backward()
    expected = np.repeat(np.array([[1.0], [2.0], [3.0]]), 2, axis=1)
    np.testing.assert_array_equal(cap["mul_:0.grad_output"][0], expected)
    np.testing.assert_array_equal(cap["matmul:0.grad_output"][0], 3 * expected)


class Logged(torch.Tensor):
    """A torch tensor subclass that logs the functions called on it."""

    names: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.names.append(getattr(func, "__name__", ""))
        return super().__torch_function__(func, types, args, kwargs or {})


def test_a_torch_tensor_subclass_still_handles_its_own_calls_under_an_ops_capture():
    # the capture hides its copies from modes only; a subclass's __torch_function__ is the
    # tensor's own behaviour and still runs, as it does without a capture
    model = _models.build_attention(torch)
    x = torch.tensor(np.random.default_rng(0).standard_normal((2, 3, 4))).as_subclass(Logged)
    Logged.names = []
    with capture(model, ops=["softmax"], kinds=("input", "output")) as cap:
        model(x)
    assert "detach" in Logged.names and "numpy" in Logged.names  # the capture's own copies
    assert cap.keys() == ["attn/softmax:0.input", "attn/softmax:0.output", "softmax:0.input",
                          "softmax:0.output"]


@on_both
@pytest.mark.parametrize("order", ["counter_outside", "counter_inside"])
def test_a_flop_counter_counts_the_same_under_an_ops_capture(lib, order):
    if lib is torch:
        from torch.utils.flop_counter import FlopCounterMode
    else:
        from hookgrad.utils.flop_counter import FlopCounterMode

    def total(with_capture):
        model = _models.build_attention(lib)
        counter = FlopCounterMode(display=False)
        contexts = [counter]
        if with_capture:
            cap = capture(model, ops=["matmul", "linear", "scaled_dot_product_attention"])
            contexts = [counter, cap] if order == "counter_outside" else [cap, counter]
        with contextlib.ExitStack() as stack:
            for context in contexts:
                stack.enter_context(context)
            _models.attention_step(lib, model)
        return counter.get_total_flops()

    plain = total(False)
    assert plain > 0 and total(True) == plain
