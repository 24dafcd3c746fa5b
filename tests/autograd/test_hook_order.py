"""The order in which gradient hooks fire during backward, compared with torch by event logs.

Each scenario is written once as a function of the library, run under torch and hookgrad, and
the two event lists must be equal.
"""
import numpy as np
import pytest
import torch

import hookgrad


def _grad_repr(value):
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return tuple(_grad_repr(v) for v in value)
    # 5 significant digits: float32 kernels may differ from torch's in the last ulp
    return [float(f"{v:.5g}") for v in value.detach().numpy().astype(np.float64).ravel()]


def chain_with_every_hook(lib, log):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 2
    c = b.exp()
    out = c.sum()
    a.register_hook(lambda g: log.append(("a.tensor_hook", _grad_repr(g))))
    a.register_post_accumulate_grad_hook(lambda t: log.append(("a.post_accumulate",
                                                               _grad_repr(t.grad))))
    b.register_hook(lambda g: log.append(("b.tensor_hook_1", _grad_repr(g))))
    b.register_hook(lambda g: log.append(("b.tensor_hook_2", _grad_repr(g))))
    b.retain_grad()
    b.grad_fn.register_prehook(lambda go: log.append(("b.node_prehook", _grad_repr(go))))
    b.grad_fn.register_hook(lambda gi, go: log.append(("b.node_hook", _grad_repr(gi),
                                                       _grad_repr(go))))
    c.grad_fn.register_prehook(lambda go: log.append(("c.node_prehook", _grad_repr(go))))
    c.grad_fn.register_hook(lambda gi, go: log.append(("c.node_hook", _grad_repr(gi),
                                                       _grad_repr(go))))
    c.register_hook(lambda g: log.append(("c.tensor_hook", _grad_repr(g))))
    out.backward()
    log.append(("b.grad", _grad_repr(b.grad)))
    log.append(("a.grad", _grad_repr(a.grad)))


def replacing_hooks(lib, log):
    a = lib.tensor([1.0, -2.0], requires_grad=True)
    b = a * lib.tensor([3.0, 3.0])
    b.register_hook(lambda g: g * 10)
    b.register_hook(lambda g: log.append(("second sees", _grad_repr(g))))
    b.retain_grad()
    b.grad_fn.register_prehook(lambda go: (go[0] + 1,))
    b.grad_fn.register_hook(lambda gi, go: (gi[0] * 2, None))
    a.register_hook(lambda g: log.append(("leaf hook sees", _grad_repr(g))))
    b.sum().backward()
    log.append(("b.grad", _grad_repr(b.grad)))
    log.append(("a.grad", _grad_repr(a.grad)))


def branches(lib, log):
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    y = lib.tensor([2.0, 3.0], requires_grad=True)
    p = x * y
    q = x + y
    r = p.sin()
    s = q.cos()
    for name, t in (("x", x), ("y", y), ("p", p), ("q", q), ("r", r), ("s", s)):
        t.register_hook(lambda g, name=name: log.append((name, _grad_repr(g))))
    for name, t in (("p", p), ("q", q), ("r", r), ("s", s)):
        t.grad_fn.register_prehook(lambda go, name=name: log.append((name + ".pre",)))
        t.grad_fn.register_hook(lambda gi, go, name=name: log.append((name + ".post",)))
    (r.sum() + s.sum()).backward()


def accumulation_twice(lib, log):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    w.register_post_accumulate_grad_hook(lambda t: log.append(("post", _grad_repr(t.grad))))
    w.register_hook(lambda g: log.append(("pre", _grad_repr(g))))
    (w * w).sum().backward()
    (w * 3).sum().backward()
    log.append(("grad", _grad_repr(w.grad)))


def hook_removes_itself(lib, log):
    a = lib.tensor([1.0], requires_grad=True)
    handles = []

    def once(g):
        log.append(("once", _grad_repr(g)))
        handles[0].remove()

    handles.append(a.register_hook(once))
    a.register_hook(lambda g: log.append(("always", _grad_repr(g))))
    (a * 2).sum().backward()
    (a * 2).sum().backward()


def handle_context_manager(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with a.register_hook(lambda g: g * 0):
        (a * 2).sum().backward()
    log.append(("inside", _grad_repr(a.grad)))
    (a * 2).sum().backward()
    log.append(("after", _grad_repr(a.grad)))


def autograd_grad_hooks(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * a
    a.register_hook(lambda g: log.append(("a hook", _grad_repr(g))))
    b.register_hook(lambda g: log.append(("b hook", _grad_repr(g))))
    (ga,) = lib.autograd.grad(b.sum(), a)
    log.append(("grad", _grad_repr(ga)))
    log.append(("a.grad", _grad_repr(a.grad)))


def multi_grad_hook_all(lib, log):
    a = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([2.0], requires_grad=True)
    c = lib.tensor([3.0], requires_grad=True)
    lib.autograd.graph.register_multi_grad_hook(
        (a, b, c), lambda grads: log.append(("all", _grad_repr(grads))))
    (a * b).sum().backward()
    (b * c * a).sum().backward()


def multi_grad_hook_any(lib, log):
    a = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([2.0], requires_grad=True)
    lib.autograd.graph.register_multi_grad_hook(
        (a, b), lambda grad: log.append(("any", _grad_repr(grad))), mode="any")
    (a * b * 5).sum().backward()


def backward_with_inputs(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    a.register_hook(lambda g: log.append(("a", _grad_repr(g))))
    b.register_hook(lambda g: log.append(("b", _grad_repr(g))))
    (a * b).sum().backward(inputs=[b])
    log.append(("grads", _grad_repr(a.grad), _grad_repr(b.grad)))


def create_graph_hooks(lib, log):
    x = lib.tensor([1.5], requires_grad=True)
    y = x ** 3
    y.register_hook(lambda g: log.append(("y hook requires_grad", g.requires_grad)))
    (gx,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    log.append(("first", _grad_repr(gx)))
    gx.sum().backward()
    log.append(("second", _grad_repr(x.grad)))


SCENARIOS = [chain_with_every_hook, replacing_hooks, branches, accumulation_twice,
             hook_removes_itself, handle_context_manager, autograd_grad_hooks,
             multi_grad_hook_all, multi_grad_hook_any, backward_with_inputs, create_graph_hooks]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_event_log_matches_torch(scenario):
    expected, actual = [], []
    scenario(torch, expected)
    scenario(hookgrad, actual)
    assert actual == expected
    assert expected  # every scenario logs something


def test_hook_changing_shape_names_the_hook():
    a = hookgrad.ones(3, requires_grad=True)

    def widen(grad):
        return hookgrad.ones(4)

    a.register_hook(widen)
    with pytest.raises(RuntimeError, match="hook 'widen' has changed the size of value"):
        (a * 2).sum().backward()


def test_hook_changing_dtype_names_the_hook():
    a = hookgrad.ones(3, requires_grad=True)
    b = a * 2

    def to_double(grad):
        return grad.double()

    b.register_hook(to_double)
    with pytest.raises(RuntimeError, match="hook 'to_double' has changed the type of value"):
        b.sum().backward()


def test_register_hook_on_tensor_without_grad_raises_like_torch():
    with pytest.raises(RuntimeError) as torch_error:
        torch.ones(2).register_hook(lambda g: g)
    with pytest.raises(RuntimeError) as ours:
        hookgrad.ones(2).register_hook(lambda g: g)
    assert str(ours.value) == str(torch_error.value)


def test_post_accumulate_hook_on_non_leaf_raises():
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered "
                                           "on non-leaf tensors"):
        (hookgrad.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(print)


def test_handles_hold_no_strong_reference_to_the_graph():
    import gc
    import weakref

    a = hookgrad.ones(2, requires_grad=True)
    b = a * 2
    handle = b.grad_fn.register_hook(lambda gi, go: None)
    node_ref = weakref.ref(b.grad_fn)
    del b
    gc.collect()
    assert node_ref() is None
    handle.remove()
    handle.remove()  # idempotent


def _captured_with_tensor_hook(lib, wrt_leaf_too: bool):
    """autograd.grad w.r.t. a non-leaf that has a tensor hook doubling its gradient. When the
    non-leaf's node must run anyway (a leaf further up is wanted too), torch captures the
    gradient before the hook (the hook then runs once, with the node, and feeds the leaf);
    when nothing beyond it is wanted, the hook runs first and the capture sees its result."""
    x = lib.tensor([-1.0, 0.5], dtype=lib.float64, requires_grad=True)
    y = lib.stack([x, x], 0)
    calls = []
    y.register_hook(lambda grad: calls.append("hook") or grad * 2)
    inputs = [y, x] if wrt_leaf_too else [y]
    grads = lib.autograd.grad(y.sum(), inputs)
    return [g.tolist() for g in grads], calls


@pytest.mark.parametrize("wrt_leaf_too", [False, True])
def test_autograd_grad_capture_and_tensor_hooks_order_as_torch(wrt_leaf_too):
    assert (_captured_with_tensor_hook(hookgrad, wrt_leaf_too)
            == _captured_with_tensor_hook(torch, wrt_leaf_too))
