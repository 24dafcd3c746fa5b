"""Misuse of the autograd API raises as torch does (same error type, torch's key words), rather
than being accepted and giving a corrupted tensor or a wrong graph."""
import pytest
import torch

import hookgrad


def _error(fn):
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - the test compares the exception with torch's
        return type(error), str(error)
    return None


def _same_error(program, *key_words):
    """Both libraries raise the same error type, and hookgrad's message has torch's words."""
    expected = _error(lambda: program(torch))
    got = _error(lambda: program(hookgrad))
    assert expected is not None, "the oracle accepted the program"
    assert got is not None, f"hookgrad accepted what torch rejects: {expected}"
    assert got[0].__name__ == expected[0].__name__, (got, expected)
    for word in key_words:
        assert word in expected[1] and word in got[1], (word, got[1], expected[1])


def test_pack_hook_modifying_its_input_in_place_raises():
    def program(lib):
        x = lib.ones(3, requires_grad=True)

        def pack(tensor):
            tensor.mul_(2)
            return tensor

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            (x * 1).exp()

    _same_error(program, "pack hook is modifying its input in place")


@pytest.mark.parametrize("returned", ["tensor", "number"])
def test_post_accumulate_grad_hook_returning_a_value_raises(returned):
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        x.register_post_accumulate_grad_hook(
            lambda param: param * 2 if returned == "tensor" else 5)
        x.sum().backward()

    _same_error(program, "return" if returned == "tensor" else "hook returned")


def test_grad_with_no_inputs_raises():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        lib.autograd.grad(x.sum(), [])

    _same_error(program, "`inputs` argument to `grad()` cannot be empty")


@pytest.mark.parametrize("requires_grad", [True, False])
def test_mark_dirty_on_a_tensor_not_returned_raises(requires_grad):
    def program(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.mark_dirty(y)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        Scale.apply(lib.ones(3, requires_grad=requires_grad), lib.ones(3))

    _same_error(program, "marked as dirty", "not returned as output")


def test_save_for_backward_of_a_number_is_a_type_error_naming_the_argument():
    def program(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad

        Double.apply(lib.ones(3, requires_grad=True))

    _same_error(program, "save_for_backward can only save variables", "argument 1",
                "of type int")


@pytest.mark.parametrize("shape, dim, index", [
    ((5,), 0, [5]), ((5,), 0, [-1]), ((3, 4), 0, [0, 3]), ((3, 4), 1, [0, 4]),
    ((2, 3, 4), 1, [3]), ((2, 3, 4), 2, [0, 4]), ((2, 3, 4), -1, [-2]), ((), 0, [1]),
])
def test_index_select_out_of_range_raises_as_torch(shape, dim, index):
    def program(lib):
        lib.ones(shape).index_select(dim, lib.tensor(index))

    _same_error(program)
    expected = _error(lambda: program(torch))
    got = _error(lambda: program(hookgrad))
    assert got == expected


# An in-place op torch refuses on a view must leave everything as it was: the data, the
# version counter and so the histories of sibling views (found by the program fuzzer).
REFUSED_VIEW_WRITES = {
    # a view of a custom Function's output (here the backward-hook identity of a module)
    "module_output_sigmoid_": lambda lib, x, out: out.sigmoid_(),
    "module_output_slice_set": lambda lib, x, out: out[:, 1:2].fill_(2.0),
    # an output of unbind
    "unbind_output_relu_": lambda lib, x, out: x.unbind(1)[1].relu_(),
}


@pytest.mark.parametrize("name", sorted(REFUSED_VIEW_WRITES))
def test_refused_in_place_on_a_view_changes_nothing(name):
    def program(lib):
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=lib.float64,
                       requires_grad=True) * 1
        layer = lib.nn.Linear(3, 3, dtype=lib.float64)
        with lib.no_grad():
            layer.weight.copy_(lib.eye(3, dtype=lib.float64) * 2)
            layer.bias.zero_()
        layer.register_full_backward_pre_hook(lambda module, grad_output: None)
        out = layer(x)
        siblings = x.unbind(1)
        before = (out.detach().clone(), x.detach().clone(), out._version, x._version)
        with pytest.raises(RuntimeError):
            REFUSED_VIEW_WRITES[name](lib, x, out)
        # still usable: the sibling views' history was not invalidated
        flags = [(s.requires_grad, s.grad_fn is not None) for s in siblings]
        return before, (out.detach(), x.detach(), out._version, x._version), flags

    for lib in (torch, hookgrad):
        before, after, flags = program(lib)
        assert after[0].tolist() == before[0].tolist(), lib.__name__
        assert after[1].tolist() == before[1].tolist(), lib.__name__
        assert after[2:] == before[2:], lib.__name__
        assert flags == [(True, True)] * 3, lib.__name__


def _stale_split_output(lib):
    """An unbind output whose base then changed in place: torch cannot regenerate its
    history, so grad_fn and is_leaf raise every time they are asked, while requires_grad
    answers from the recorded history."""
    x = lib.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=lib.float64, requires_grad=True)
    base = x * 1
    first, _ = base.unbind(0)
    base.mul_(2)
    results = [first.requires_grad]
    for _ in range(2):  # asked twice: the first failure must not leave a stale answer behind
        for read in (lambda: first.is_leaf, lambda: first.grad_fn):
            try:
                read()
                results.append("no error")
            except RuntimeError:
                results.append("RuntimeError")
    return results


def test_stale_split_output_properties_as_torch():
    assert _stale_split_output(hookgrad) == _stale_split_output(torch)


@pytest.mark.parametrize("case", ["grad_none_input", "grad_int_input", "copy_none", "copy_list",
                                  "gelu_none", "softplus_none", "leaky_relu_none", "relu_none",
                                  "elu_none", "silu_none"])
def test_non_tensor_arguments_raise_torchs_error_type(case):
    def program(lib):
        x = lib.ones(2, requires_grad=True) * 1
        F = lib.nn.functional
        run = {"grad_none_input": lambda: lib.autograd.grad(x.sum(), [x, None]),
               "grad_int_input": lambda: lib.autograd.grad(x.sum(), [3]),
               "copy_none": lambda: x.detach().copy_(None),
               "copy_list": lambda: x.detach().copy_([1.0, 2.0]),
               "gelu_none": lambda: F.gelu(None), "softplus_none": lambda: F.softplus(None),
               "leaky_relu_none": lambda: F.leaky_relu(None, 0.1),
               "relu_none": lambda: F.relu(None), "elu_none": lambda: F.elu(None),
               "silu_none": lambda: F.silu(None)}[case]
        run()

    _same_error(program)
    assert _error(lambda: program(hookgrad))[0] is _error(lambda: program(torch))[0]


def test_in_place_op_reading_a_stale_split_output_changes_nothing():
    """The source of an in-place op is a split output whose base changed: torch raises before
    writing, so the target keeps its values (found by the program fuzzer)."""
    def run(lib):
        x = lib.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=lib.float64, requires_grad=True)
        base = x * 1
        _, second = base.split(1, 1)
        target = x * 3
        base.unsqueeze(2).sub_(0.5)
        with pytest.raises(RuntimeError):
            target.add_(second)
        return target.detach().tolist(), target._version

    assert run(hookgrad) == run(torch)
