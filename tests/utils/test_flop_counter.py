"""FlopCounterMode against torch's own counter on the same models and calls."""
import pytest
import torch
import torch.utils.flop_counter

import hookgrad
from hookgrad.utils.flop_counter import FlopCounterMode


def _counts(lib, run):
    counter_class = (torch.utils.flop_counter.FlopCounterMode if lib is torch
                     else FlopCounterMode)
    lib.manual_seed(0)
    with counter_class(display=False) as counter:
        run(lib)
    counts = {module: {str(op): n for op, n in ops.items()}
              for module, ops in counter.get_flop_counts().items()}
    return counter.get_total_flops(), counts


def _same_as_torch(run):
    ours, theirs = _counts(hookgrad, run), _counts(torch, run)
    assert ours == theirs
    return ours


def _convnet(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1, stride=2), nn.ReLU(), nn.Flatten(),
                         nn.Linear(3 * 3 * 3, 5), nn.Sequential(nn.Linear(5, 6, bias=False)))


@pytest.mark.parametrize("backward", [False, True])
def test_convnet_totals_and_per_module_counts(backward):
    def run(lib):
        out = _convnet(lib)(lib.randn(2, 2, 6, 6))
        if backward:
            out.sum().backward()

    total, counts = _same_as_torch(run)
    assert total > 0 and "Sequential.0" in counts


@pytest.mark.parametrize("input_grad", [False, True])
def test_linear_on_batched_input_with_and_without_input_grad(input_grad):
    def run(lib):
        layer = lib.nn.Linear(4, 3)
        x = lib.randn(2, 5, 4, requires_grad=input_grad)
        layer(x).sum().backward()

    _same_as_torch(run)


@pytest.mark.parametrize("call", [
    lambda lib, a, b, c: lib.mm(a, b),
    lambda lib, a, b, c: a @ b,
    lambda lib, a, b, c: lib.matmul(c, b),
    lambda lib, a, b, c: lib.bmm(c, c.transpose(1, 2)),
    lambda lib, a, b, c: lib.addmm(lib.ones(4, 4), a, b),
    lambda lib, a, b, c: lib.baddbmm(lib.ones(3, 4, 4), c, c.transpose(1, 2)),
    lambda lib, a, b, c: lib.matmul(c, c.transpose(1, 2)),
    lambda lib, a, b, c: a.matmul(b[:, 0]),
])
def test_matrix_products_forward_and_backward(call):
    def run(lib):
        a = lib.randn(4, 5, requires_grad=True)
        b = lib.randn(5, 4)
        c = lib.randn(3, 4, 5, requires_grad=True)
        call(lib, a, b, c).sum().backward()

    _same_as_torch(run)


@pytest.mark.parametrize("make", [
    lambda nn: nn.Conv1d(2, 4, 3, padding=2, dilation=2),
    lambda nn: nn.Conv2d(4, 6, 3, groups=2, bias=False),
    lambda nn: nn.ConvTranspose2d(2, 3, 3, stride=2),
])
def test_convolutions_forward_and_backward(make):
    def run(lib):
        layer = make(lib.nn)
        shape = (2, 2, 9) if isinstance(layer, lib.nn.Conv1d) else (2, layer.in_channels, 5, 5)
        layer(lib.randn(*shape, requires_grad=True)).sum().backward()

    _same_as_torch(run)


def test_attention_on_cpu_counts_what_torch_counts():
    def run(lib):
        q = lib.randn(2, 3, 4, 5, requires_grad=True)
        lib.nn.functional.scaled_dot_product_attention(q, q, q).sum().backward()

    _same_as_torch(run)


def test_backward_outside_the_mode_is_not_counted():
    layer = hookgrad.nn.Linear(3, 2)
    with FlopCounterMode(display=False) as counter:
        out = layer(hookgrad.randn(4, 3))
    before = counter.get_total_flops()
    out.sum().backward()
    assert counter.get_total_flops() == before == 2 * 4 * 3 * 2


def test_display_prints_a_table_with_the_modules(capsys):
    with FlopCounterMode(depth=1):
        _convnet(hookgrad)(hookgrad.randn(2, 2, 6, 6))
    printed = capsys.readouterr().out
    assert "Global" in printed and "Sequential" in printed and "aten.convolution" in printed
    assert "Sequential.4.0" not in printed
