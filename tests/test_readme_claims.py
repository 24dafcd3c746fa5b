"""The README's claims about errors and saved-tensor inspection, each run as its example and
compared with torch (or, for what hookgrad adds, checked to differ from torch as stated)."""
import numpy as np
import pytest
import torch

import hookgrad

LIBS = [torch, hookgrad]


def _outcome(fn, lib):
    """What ``fn(lib)`` gives: ("value", result) or ("error", type name, message)."""
    try:
        return ("value", fn(lib))
    except Exception as error:  # noqa: BLE001 - compared between libraries
        return ("error", type(error).__name__, str(error))


def _same(fn):
    theirs, ours = _outcome(fn, torch), _outcome(fn, hookgrad)
    assert ours == theirs
    return theirs


# -- devices: "`.to("cuda")`, `device="cuda"` or `.cuda()` raise torch's AssertionError" ---------
@pytest.mark.parametrize("call", ["to", "factory", "cuda"])
def test_cuda_requests_raise_torchs_error(call):
    def run(lib):
        if call == "to":
            return lib.ones(2).to("cuda")
        if call == "factory":
            return lib.zeros(2, device="cuda")
        return lib.ones(2).cuda()

    assert _same(run)[:2] == ("error", "AssertionError")


# -- hooks: "a returned tensor replaces the gradient (same shape and dtype, or an error naming
# the hook)" -------------------------------------------------------------------------------------
@pytest.mark.parametrize("change", ["shape", "dtype"])
def test_tensor_hook_changing_shape_or_dtype_raises_naming_the_hook(change):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2

        def my_hook(grad):
            return grad[:1] if change == "shape" else grad.double()

        y.register_hook(my_hook)
        y.sum().backward()

    outcome = _same(run)
    assert outcome[0] == "error" and "my_hook" in outcome[2]


def test_hook_example_runs_as_in_torch():
    def run(lib):
        events = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 3
        b.register_hook(lambda g: g * 10)
        b.grad_fn.register_prehook(lambda go: events.append(("pre", go[0].tolist())))
        b.grad_fn.register_hook(lambda gi, go: events.append(("post", gi[0].tolist())))
        a.register_post_accumulate_grad_hook(lambda p: events.append(("acc", p.grad.tolist())))
        b.sum().backward()
        return events

    _same(run)


# -- saved tensors: the README's example and the claims listed under it --------------------------
def test_saved_tensor_example_keeps_what_torch_keeps():
    def run(lib, v_requires_grad):
        kept = []

        def pack(t):
            kept.append(tuple(t.shape))
            return t

        w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        v = lib.tensor([1.0, 3.0], requires_grad=v_requires_grad)
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = (w @ v).tanh().sum()
        out.backward()
        return kept

    assert run(hookgrad, False) == run(torch, False) == [(2,), (2,)]
    assert run(hookgrad, True) == run(torch, True)
    assert (2, 2) in run(hookgrad, True)  # "with v.requires_grad_() w is kept too"


def test_disable_saved_tensors_hooks_raises_the_message():
    def run(lib):
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    assert _same(run) == ("error", "RuntimeError", "no hooks here")


def test_saved_attributes_inspection():
    def run(lib):
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        product, power = a * b, a.exp()
        return (product.grad_fn._saved_self.tolist(), product.grad_fn._saved_other.tolist(),
                product.grad_fn._saved_self is a, power.grad_fn._saved_result.tolist(),
                (a * 3).grad_fn._saved_other.tolist(), (a * 3).grad_fn._saved_self,
                hasattr((a / 2).grad_fn, "_saved_other"), a.pow(2).grad_fn._saved_exponent)

    _same(run)


def test_raw_saved_hooks_pack_at_once_and_unpack_in_backward():
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        e = a.exp()
        calls = []
        e.grad_fn._raw_saved_result.register_hooks(lambda t: calls.append("pack") or t,
                                                   lambda t: calls.append("unpack") or t)
        at_registration = list(calls)
        e.sum().backward()
        return at_registration, calls

    assert _same(run) == ("value", (["pack"], ["pack", "unpack"]))


@pytest.mark.parametrize("misuse", ["second_pair", "after_free", "saved_after_free"])
def test_raw_saved_hooks_errors(misuse):
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        e = a.exp()
        if misuse == "second_pair":
            e.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
            e.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
        e.sum().backward()
        if misuse == "after_free":
            e.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
        return e.grad_fn._saved_result

    assert _same(run)[:2] == ("error", "RuntimeError")


class Boom(Exception):
    pass


@pytest.mark.parametrize("which", ["pack", "unpack"])
def test_exceptions_in_saved_tensor_hooks_propagate_unchanged(which):
    def raise_boom(t):
        raise Boom(which)

    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        pair = (raise_boom, lambda t: t) if which == "pack" else (lambda t: t, raise_boom)
        with lib.autograd.graph.saved_tensors_hooks(*pair):
            e = a.exp()
        e.sum().backward()

    assert _same(run) == ("error", "Boom", which)


# -- what hookgrad adds: an unpack hook must give back the saved shape and dtype -----------------
@pytest.mark.parametrize("change", ["shape", "dtype"])
def test_unpack_hook_changing_shape_or_dtype_raises_where_torch_does_not(change):
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)

        def my_unpack(t):
            return t[:1] if change == "shape" else t.double()

        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, my_unpack):
            e = a.exp()
        e.sum().backward()
        return a.grad.tolist()

    assert _outcome(run, torch)[0] == "value"  # torch goes on with what the hook returned
    ours = _outcome(run, hookgrad)
    assert ours[:2] == ("error", "RuntimeError") and "my_unpack" in ours[2]


def test_version_check_with_hooks_raises_where_torch_does_not():
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            e = h * h
        h.add_(1.0)
        e.sum().backward()
        return a.grad.tolist()

    assert _outcome(run, torch)[0] == "value"  # torch skips the check when hooks are set
    assert _outcome(run, hookgrad)[:2] == ("error", "RuntimeError")


# -- custom Functions: "wrong numbers or shapes of gradients raise PyTorch's errors naming the
# Function" ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mistake", ["too_many", "too_few", "wrong_shape"])
def test_custom_function_gradient_errors(mistake):
    def run(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, grad):
                if mistake == "too_many":
                    return grad, grad, grad
                if mistake == "too_few":
                    return (grad,)
                return grad[:1], grad

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        Scale.apply(x, x).sum().backward()

    outcome = _same(run)
    assert outcome[0] == "error" and "Scale" in outcome[2]


def test_numpy_of_bfloat16_differs_as_stated():
    assert _outcome(lambda lib: lib.ones(2, dtype=lib.bfloat16).numpy(), torch)[0] == "error"
    assert np.asarray(hookgrad.ones(2, dtype=hookgrad.bfloat16).numpy(), np.float32).tolist() == [
        1.0, 1.0]
