"""TorchFunctionMode: what a mode sees, nesting and popping, checked against torch's."""
import pytest
import torch

import hookgrad
from hookgrad.overrides import TorchFunctionMode, handle_torch_function, has_torch_function


def _logging_mode(lib):
    base = lib.overrides.TorchFunctionMode

    class Log(base):
        def __init__(self, log, tag=""):
            super().__init__()
            self.log, self.tag = log, tag

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.log.append(self.tag + func.__name__)
            return func(*args, **(kwargs or {}))

    return Log


def _program(lib):
    lib.manual_seed(0)
    x = lib.ones(2, 3)
    y = (x + 1) * x
    z = lib.matmul(y, y.t())
    return lib.nn.functional.relu(z).sum()


def _seen(lib, program):
    log = []
    with _logging_mode(lib)(log):
        out = program(lib)
    return log, out


def test_mode_sees_functions_methods_and_operators_as_torch_does():
    ours, out = _seen(hookgrad, _program)
    theirs, expected = _seen(torch, _program)
    assert ours == theirs
    assert out.item() == expected.item()


def test_mode_sees_a_module_call_as_torch_does():
    def program(lib):
        lib.manual_seed(0)
        return lib.nn.Linear(3, 2)(lib.ones(4, 3))

    def calls(lib):
        layer_log = []
        lib.manual_seed(0)
        layer = lib.nn.Linear(3, 2)
        x = lib.zeros(4, 3)
        with _logging_mode(lib)(layer_log):
            layer(x)
        return layer_log

    assert calls(hookgrad) == calls(torch)


def test_inner_mode_sees_first_and_func_goes_one_level_down():
    def run(lib):
        log = []
        Log = _logging_mode(lib)
        with Log(log, "outer:"), Log(log, "inner:"):
            lib.ones(2).neg()
        return log

    assert run(hookgrad) == run(torch)
    assert run(hookgrad) == ["inner:ones", "outer:ones", "inner:neg", "outer:neg"]


def test_calls_made_by_the_handler_skip_its_own_mode():
    def run(lib):
        log = []

        class Doubling(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append(func.__name__)
                result = func(*args, **(kwargs or {}))
                return result * 2 if func.__name__ == "exp" else result

        with Doubling():
            value = lib.exp(lib.zeros(2))
        return log, value.tolist()

    assert run(hookgrad) == run(torch)


def test_handler_result_replaces_the_call():
    class Constant(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return 7

    with Constant():
        assert hookgrad.ones(3) == 7
        assert hookgrad.Tensor.sum(None) == 7


def test_types_lists_tensor_subclasses_of_the_arguments():
    seen = []

    class Types(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(types)
            return func(*args, **(kwargs or {}))

    weight = hookgrad.nn.Parameter(hookgrad.ones(2, 2))
    with Types():
        hookgrad.mm(hookgrad.ones(2, 2), weight)
    assert seen[-1] == (hookgrad.Tensor, hookgrad.nn.Parameter)


def test_mode_leaves_the_stack_on_error_and_is_inactive_after_exit():
    class Failing(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            raise KeyError("boom")

    mode = Failing()
    with pytest.raises(KeyError):
        with mode:
            hookgrad.ones(1)
    assert not has_torch_function(())
    assert hookgrad.ones(1).item() == 1.0


def test_handle_torch_function_routes_through_the_mode():
    log = []
    with _logging_mode(hookgrad)(log):
        assert has_torch_function(())
        result = handle_torch_function(hookgrad.ones, (), 2)
    assert log == ["ones"] and result.shape == (2,)
    assert handle_torch_function(hookgrad.zeros, (), 1).tolist() == [0.0]


def test_tensor_methods_keep_their_names():
    assert hookgrad.Tensor.sum.__name__ == torch.Tensor.sum.__name__
    assert hookgrad.Tensor.backward.__name__ == "backward"


def test_pop_and_push_mode_take_the_innermost_mode_off_and_back_as_in_torch():
    def run(lib):
        log = []
        Log = _logging_mode(lib)
        with Log(log, "outer:"), Log(log, "inner:"):
            inner = lib.overrides._pop_mode()
            lib.ones(1)
            lib.overrides._push_mode(inner)
            lib.zeros(1)
        return log, lib.overrides._get_current_function_mode()

    assert run(hookgrad) == run(torch)
    assert run(hookgrad) == (["outer:ones", "inner:zeros", "outer:zeros"], None)
