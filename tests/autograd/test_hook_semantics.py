"""Hook details compared with torch: node pre-hooks of a non-leaf given to backward(inputs=...),
the versions of a tensor an unpack hook gives back, and tensor hooks called with None for the
outputs of a multi-output node that got no gradient."""
import pytest
import torch

import hookgrad


def _events_for_backward_inputs(lib):
    x = lib.ones(3, requires_grad=True)
    h = x * 2
    y = (h * 3).sum()
    events = []
    h.grad_fn.register_prehook(lambda grad_outputs: events.append("pre h"))
    h.grad_fn.register_hook(lambda grad_inputs, grad_outputs: events.append("post h"))
    y.grad_fn.register_prehook(lambda grad_outputs: events.append("pre y"))
    h.register_hook(lambda grad: events.append("tensor h"))
    x.register_hook(lambda grad: events.append("tensor x"))
    y.backward(inputs=(h,))
    return events, h.grad.tolist(), x.grad


def test_backward_inputs_non_leaf_runs_its_node_hooks():
    events, h_grad, x_grad = _events_for_backward_inputs(hookgrad)
    assert (events, h_grad, x_grad) == _events_for_backward_inputs(torch)[:2] + (None,)
    assert "pre h" in events


def test_backward_inputs_non_leaf_node_pre_hook_result_is_not_its_grad():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        h = x * 2
        y = (h * 3).sum()
        h.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 10,))
        y.backward(inputs=(h,))
        return h.grad.tolist()

    assert program(hookgrad) == program(torch)


PAIRS = {
    "identity": (lambda t: t, lambda t: t),
    "detach": (lambda t: t.detach(), lambda t: t),
    "clone on unpack": (lambda t: t, lambda t: t.clone()),
    "clone on pack": (lambda t: t.clone(), lambda t: t),
}


@pytest.mark.parametrize("pair", list(PAIRS))
@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
def test_unpacked_tensor_keeps_the_versions_of_what_the_hook_returned(pair, leaf):
    def program(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t)
                return t * 2

            @staticmethod
            def backward(ctx, grad):
                (saved,) = ctx.saved_tensors
                saved.mul_(1)  # in place on the unpacked tensor
                return grad * 2

        x = lib.ones(3, requires_grad=True)
        a = x if leaf else x * 1
        with lib.autograd.graph.saved_tensors_hooks(*PAIRS[pair]):
            out = Double.apply(a)
        before = a._version
        out.sum().backward()
        return before, a._version

    assert program(hookgrad) == program(torch)


@pytest.mark.parametrize("split", ["unbind", "split", "chunk", "custom"])
def test_hook_on_an_output_without_gradient_is_called_with_none(split):
    def program(lib):
        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, first, second):
                return first * 2 + second * 3

        make = {"unbind": lambda x: x.unbind(0), "split": lambda x: x.split(1, dim=1),
                "chunk": lambda x: x.chunk(2, 0), "custom": Two.apply}[split]
        x = lib.ones(2, 3, requires_grad=True)
        outputs = make(x)
        calls = []
        for index, out in enumerate(outputs):
            out.register_hook(lambda grad, index=index: calls.append(
                (index, None if grad is None else grad.tolist())))
        (outputs[-1] * 2).sum().backward()
        return calls, x.grad.tolist()

    calls, grad = program(hookgrad)
    assert (calls, grad) == program(torch)
    assert calls[0] == (0, None)


def test_hook_replacing_a_none_gradient_raises():
    def program(lib):
        x = lib.ones(2, 3, requires_grad=True)
        first, second = x.unbind(0)
        first.register_hook(lambda grad: lib.ones(3) if grad is None else None)
        second.sum().backward()

    with pytest.raises(RuntimeError, match="can't replace a None gradient") as expected:
        program(torch)
    with pytest.raises(RuntimeError) as got:
        program(hookgrad)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("hold", ["view", "tensor"])
@pytest.mark.parametrize("build", ["add", "mul", "view", "clone"])
def test_grad_steals_an_unreferenced_buffer_as_torch(build, hold):
    """A post-accumulate hook's in-place change of .grad reaches what a tensor hook kept exactly
    when torch made .grad the incoming buffer instead of a copy."""
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        kept = []

        def scale(param):
            param.grad.mul_(10)

        x.register_post_accumulate_grad_hook(scale)
        y = {"add": lambda: x + 0, "mul": lambda: x * 1, "view": lambda: x.view(3),
             "clone": lambda: x.clone()}[build]()
        y.register_hook(lambda grad: kept.append(grad[:] if hold == "view" else grad))
        y.backward(lib.full((3,), 2.0))
        return x.grad.tolist(), kept[0].tolist()

    assert program(hookgrad) == program(torch)


def test_stolen_grad_accumulates_without_touching_the_kept_gradient():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        kept = []
        y = x + 0
        y.register_hook(lambda grad: kept.append(grad[:]))
        y.backward(lib.ones(3), retain_graph=True)
        y.backward(lib.ones(3))
        x.grad.mul_(5)
        return x.grad.tolist(), [grad.tolist() for grad in kept]

    assert program(hookgrad) == program(torch)


# A leaf's first .grad follows the leaf's layout when the leaf is dense (torch's layout
# contract): a transposed or permuted leaf gets a transposed or permuted .grad, with or
# without create_graph; a leaf with gaps or repeats gets a contiguous one.
LEAF_LAYOUTS = {
    "transposed": lambda lib: lib.zeros(3, 4).t(),
    "permuted": lambda lib: lib.zeros(2, 3, 4).permute(2, 0, 1),
    "sliced": lambda lib: lib.zeros(4, 3)[:, :2],
    "expanded": lambda lib: lib.zeros(3, 1).expand(3, 4),
    "contiguous": lambda lib: lib.zeros(2, 3),
}


@pytest.mark.parametrize("name", sorted(LEAF_LAYOUTS))
@pytest.mark.parametrize("create_graph", [False, True])
def test_first_grad_follows_a_dense_leafs_layout(name, create_graph):
    def run(lib):
        leaf = LEAF_LAYOUTS[name](lib).detach().requires_grad_()
        ((leaf * leaf) * 2).sum().backward(create_graph=create_graph)
        grad = leaf.grad
        return grad.stride(), grad.is_contiguous(), grad.requires_grad, grad.detach().tolist()

    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("create_graph", [False, True])
def test_retained_grad_is_contiguous_like_torch(create_graph):
    """retain_grad keeps a contiguous copy even when the gradient arrives transposed."""
    def run(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64, requires_grad=True)
        y = x * 2
        y.retain_grad()
        (y.t() * lib.tensor([1.0, 3.0], dtype=lib.float64)).sum().backward(
            create_graph=create_graph)
        return y.grad.is_contiguous(), y.grad.stride(), y.grad.tolist()

    assert run(hookgrad) == run(torch)
