"""Saved-tensor hooks: torch's behaviour, checked by event logs, plus hookgrad's additions."""
import contextlib
import io
import threading

import numpy as np
import pytest
import torch

import hookgrad


def _run_printing(lib, program) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        program(lib)
    return buffer.getvalue()


def printing_example(lib):
    """Hooks that print each saved tensor as it is packed and unpacked; a product of a leaf and
    a non-leaf saves both."""

    def announce_pack(tensor):
        print("pack", tensor)
        return tensor

    def announce_unpack(tensor):
        print("unpack", tensor)
        return tensor

    weights = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    shifted = lib.tensor([1.0, 2.0, 3.0], requires_grad=True) + 1
    with lib.autograd.graph.saved_tensors_hooks(announce_pack, announce_unpack):
        product = weights * shifted
    product.sum().backward()


def test_printing_hooks_print_what_torch_prints():
    assert _run_printing(hookgrad, printing_example) == _run_printing(torch, printing_example)


def _events(lib, program):
    log = []

    def pack(tag):
        def hook(t):
            log.append(("pack", tag, tuple(t.shape), str(t.dtype)))
            return t
        return hook

    def unpack(tag):
        def hook(t):
            log.append(("unpack", tag, tuple(t.shape)))
            return t
        return hook

    program(lib, pack, unpack, log)
    return log


def nested(lib, pack, unpack, log):
    x = lib.ones(3, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack("outer"), unpack("outer")):
        y = x.exp()
        with lib.autograd.graph.saved_tensors_hooks(pack("inner"), unpack("inner")):
            z = y.sin()
        w = z * y
    w.sum().backward()


def ops_mix(lib, pack, unpack, log):
    x = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    w = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack("h"), unpack("h")):
        h = (x @ w).tanh().relu()
        s = h.sigmoid() * h.exp() / (w + 3)
    s.sum().backward()


def retain_graph_twice(lib, pack, unpack, log):
    x = lib.ones(2, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack("h"), unpack("h")):
        y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()


def autograd_grad_create_graph(lib, pack, unpack, log):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack("h"), unpack("h")):
        y = (x.sin() * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()


@pytest.mark.parametrize("program", [nested, ops_mix, retain_graph_twice,
                                     autograd_grad_create_graph], ids=lambda f: f.__name__)
def test_pack_unpack_events_match_torch(program):
    assert _events(hookgrad, program) == _events(torch, program)


def test_custom_function_saves_pass_the_same_door():
    for lib in (torch, hookgrad):
        seen = []

        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * b

            @staticmethod
            def backward(ctx, grad):
                a, b = ctx.saved_tensors
                return grad * b, grad * a

        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append("pack") or t,
                                                    lambda t: seen.append("unpack") or t):
            Mul.apply(a, b).sum().backward()
        assert seen == ["pack", "pack", "unpack", "unpack"]


def test_disable_saved_tensors_hooks_raises_with_the_message():
    for lib in (torch, hookgrad):
        with lib.autograd.graph.disable_saved_tensors_hooks("not here"):
            with pytest.raises(RuntimeError, match="not here"):
                with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass  # allowed again outside


def test_save_on_cpu_keeps_a_copy_independent_of_later_changes():
    grads = []
    for lib in (torch, hookgrad):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            y = x * x
        y.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


def test_unpack_hook_returning_wrong_shape_names_the_hook():
    x = hookgrad.ones(3, requires_grad=True)

    def bad_unpack(packed):
        return hookgrad.ones(4)

    with hookgrad.autograd.graph.saved_tensors_hooks(lambda t: t, bad_unpack):
        y = x.exp()
    with pytest.raises(RuntimeError, match="unpack hook 'bad_unpack'"):
        y.sum().backward()


def test_unpack_hook_returning_wrong_dtype_names_the_hook():
    x = hookgrad.ones(3, requires_grad=True)

    def to_double(packed):
        return packed.double()

    with hookgrad.autograd.graph.saved_tensors_hooks(lambda t: t, to_double):
        y = x.exp()
    with pytest.raises(RuntimeError, match="unpack hook 'to_double'"):
        y.sum().backward()


def test_exceptions_in_hooks_propagate_unchanged():
    class Boom(Exception):
        pass

    def pack(t):
        raise Boom("from pack")

    x = hookgrad.ones(2, requires_grad=True)
    with pytest.raises(Boom, match="from pack"):
        with hookgrad.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            x.exp()

    def unpack(t):
        raise Boom("from unpack")

    with hookgrad.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        y = x.exp()
    with pytest.raises(Boom, match="from unpack"):
        y.sum().backward()


def test_hooks_are_thread_local():
    seen = []
    x = hookgrad.ones(2, requires_grad=True)

    def other_thread():
        seen.append(("thread", x.exp().grad_fn._raw_saved_result._hooked))

    with hookgrad.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        seen.append(("main", x.exp().grad_fn._raw_saved_result._hooked))
    assert seen == [("thread", False), ("main", True)]


# -- torch's inspection API for saved tensors ---------------------------------------------------
@pytest.mark.parametrize("expression, names", [
    ("x.exp()", ["_saved_result"]),
    ("x * y", ["_saved_self", "_saved_other"]),
    ("x.sin()", ["_saved_self"]),
    ("x.tanh()", ["_saved_result"]),
    ("x.sigmoid()", ["_saved_result"]),
    ("x.relu()", ["_saved_result"]),
    ("x / y", ["_saved_self", "_saved_other"]),
])
def test_saved_attributes_match_torch(expression, names):
    values = []
    for lib in (torch, hookgrad):
        x = lib.tensor([0.5, 1.5], requires_grad=True, dtype=lib.float64)  # noqa: F841 - eval
        y = lib.tensor([2.0, 3.0], requires_grad=True, dtype=lib.float64)  # noqa: F841 - eval
        out = eval(expression)
        values.append([getattr(out.grad_fn, name).detach().numpy() for name in names])
    for ours, theirs in zip(*values):
        np.testing.assert_allclose(ours, theirs, rtol=1e-15)


def test_raw_saved_register_hooks_rules_match_torch():
    for lib in (torch, hookgrad):
        log = []
        x = lib.ones(3, requires_grad=True)
        y = x.exp()
        raw = y.grad_fn._raw_saved_result
        raw.register_hooks(lambda t: log.append("pack") or t, lambda t: log.append("unpack") or t)
        assert log == ["pack"]  # packs at once
        with pytest.raises(RuntimeError, match="hooks have already been set"):
            raw.register_hooks(lambda t: t, lambda t: t)
        y.sum().backward()
        assert log == ["pack", "unpack"]
        with pytest.raises(RuntimeError, match="after it has been freed"):
            raw.register_hooks(lambda t: t, lambda t: t)


@pytest.mark.parametrize("input_kind", ["leaf", "non_leaf"])
def test_raw_saved_input_unpacks_with_its_history_after_register_hooks(input_kind):
    # a saved input keeps no edge of its own until hooks are set on it (torch reads the
    # input's history then): the unpacked tensor, its history and the gradient match torch
    results = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor([0.5, 1.5, 2.5], requires_grad=True, dtype=lib.float64)
        x = leaf if input_kind == "leaf" else leaf * 2
        y = x.sin()
        raw = y.grad_fn._raw_saved_self
        raw.register_hooks(lambda t: t * 1, lambda t: t)
        unpacked = y.grad_fn._saved_self
        history = None if unpacked.grad_fn is None else type(unpacked.grad_fn).__name__
        y.sum().backward()
        results.append((history, unpacked.requires_grad, unpacked.is_leaf,
                        leaf.grad.numpy().tolist()))
    assert results[1] == results[0]


def test_raw_saved_input_edge_is_read_when_hooks_are_set_as_torch():
    # the input's history changed (in place) between saving and setting the hooks: the
    # unpacked tensor carries the history it has when the hooks are set, as in torch
    histories = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor([0.5, 1.5], requires_grad=True, dtype=lib.float64)
        x = leaf * 2
        y = x.sin()
        x.add_(1)
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t.clone(), lambda t: t)
        histories.append(type(y.grad_fn._saved_self.grad_fn).__name__)
    assert histories[1] == histories[0]


def test_accessing_freed_saved_tensor_raises_like_torch():
    messages = []
    for lib in (torch, hookgrad):
        x = lib.ones(2, requires_grad=True)
        y = x.exp()
        y.sum().backward()
        try:
            y.grad_fn._saved_result
        except RuntimeError as error:
            messages.append(str(error))
    assert len(messages) == 2 and messages[0] == messages[1]


# -- hookgrad's additions -------------------------------------------------------------------------
def test_current_saved_tensor_describes_what_is_saved():
    infos = []

    def pack(t):
        info = hookgrad.autograd.graph.current_saved_tensor()
        infos.append((info.node.name(), info.is_parameter, info.is_input, info.is_output,
                      info.nbytes))
        return t

    w = hookgrad.ones(2, 2, requires_grad=True)
    x = hookgrad.ones(3, 2)
    with hookgrad.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        h = (x @ w).exp()
    assert infos == [("MmBackward0", False, True, False, 24),
                     ("ExpBackward0", False, False, True, 24)]
    assert hookgrad.autograd.graph.current_saved_tensor() is None
    del h


def test_current_saved_tensor_flags_parameters_and_shared_buffers():
    infos = []

    def pack(t):
        infos.append(hookgrad.autograd.graph.current_saved_tensor())
        return t

    w = hookgrad.ones(4, requires_grad=True)
    base = hookgrad.ones(2, 4)
    with hookgrad.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        _a = base[0] * w  # saves base[0] only: w's gradient needs it
        _b = base[1] * w
        _c = w.sin()  # saves w itself
    assert [i.is_parameter for i in infos] == [False, False, True]
    assert infos[0].storage_key == infos[1].storage_key  # two views of one buffer
    assert infos[0].storage_key != infos[2].storage_key


def test_compose_applies_every_pair_in_order():
    log = []

    def tag(name):
        return (lambda t: log.append(f"pack {name}") or t,
                lambda t: log.append(f"unpack {name}") or t)

    x = hookgrad.ones(2, requires_grad=True)
    with hookgrad.autograd.graph.saved_tensors_hooks(*tag("outer")):
        with hookgrad.autograd.graph.saved_tensors_hooks(*tag("inner"), compose=True):
            y = x.exp()
    y.sum().backward()
    assert log == ["pack outer", "pack inner", "unpack inner", "unpack outer"]


def test_plain_nesting_keeps_innermost_wins():
    log = []
    x = hookgrad.ones(2, requires_grad=True)
    with hookgrad.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t,
                                                     lambda t: t):
        with hookgrad.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t,
                                                         lambda t: t):
            x.exp()
    assert log == ["inner"]


def test_in_place_change_is_caught_even_with_identity_hooks():
    # torch returns a silently wrong gradient here; hookgrad raises
    x = hookgrad.tensor([1.0, 2.0], requires_grad=True)
    with hookgrad.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.exp()
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_copying_hooks_stay_exempt_from_the_version_check():
    results = []
    for lib in (torch, hookgrad):
        x = lib.tensor([1.0, 2.0], requires_grad=True, dtype=lib.float64)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            y = x.exp()
            z = y * 1
        y.mul_(2)
        z.sum().backward()
        results.append(x.grad.tolist())
    assert results[0] == results[1]


def test_to_dot_lists_saved_tensors():
    x = hookgrad.ones(2, 3, requires_grad=True)
    dot = hookgrad.autograd.graph.to_dot((x.exp() * 2).sum())
    assert dot.startswith("digraph")
    assert "ExpBackward0" in dot and "result: [2, 3] float32 24 B" in dot
    assert "AccumulateGrad" in dot


def test_no_hooks_means_no_pack_work():
    x = hookgrad.ones(2, requires_grad=True)
    y = x.exp()
    saved = y.grad_fn._raw_saved_result
    assert saved._hooked is False and saved._packed is None
    np.testing.assert_array_equal(y.grad_fn._saved_result.numpy(force=True), y.numpy(force=True))
