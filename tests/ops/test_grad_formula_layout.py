"""Gradients laid out as torch lays them out when the incoming gradient is an expanded scalar
(``out.sum()``) and the input is transposed or sliced: torch's formulas (and fused backward
kernels) take their layout from the saved input, so the gradient keeps the input's order.
Each op runs in torch and hookgrad on the same input: values, strides, and second
derivatives through the formula."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close

F_OPS = {
    "maximum": lambda lib, t: lib.maximum(t, lib.zeros((), dtype=t.dtype)),
    "minimum": lambda lib, t: lib.minimum(t, lib.zeros((), dtype=t.dtype)),
    "softplus": lambda lib, t: lib.nn.functional.softplus(t),
    "softplus_threshold": lambda lib, t: lib.nn.functional.softplus(t, beta=2, threshold=0.5),
    "hardswish": lambda lib, t: lib.nn.functional.hardswish(t * 4),
    "hardsigmoid": lambda lib, t: lib.nn.functional.hardsigmoid(t * 4),
    "sinc": lambda lib, t: lib.sinc(t),
    "logit": lambda lib, t: lib.logit(t.sigmoid()),
    "logit_eps": lambda lib, t: lib.logit(t.sigmoid(), eps=0.3),
    "copysign": lambda lib, t: lib.copysign(t, lib.ones((), dtype=t.dtype)),
    "erf": lambda lib, t: lib.erf(t),
    "erfc": lambda lib, t: lib.erfc(t),
    "norm_dim": lambda lib, t: t.norm(dim=0),
    "norm": lambda lib, t: t.norm(),
    "atan2_self": lambda lib, t: lib.atan2(t, lib.ones((), dtype=t.dtype)),
    "atan2_other": lambda lib, t: lib.atan2(lib.full((), 0.5, dtype=t.dtype), t),
    "pow_exponent": lambda lib, t: lib.full((), 1.5, dtype=t.dtype) ** t,
    "pow_base": lambda lib, t: t.abs() ** lib.full((), 1.5, dtype=t.dtype),
    # torch's kernel allocates its output like the incoming gradient: row-major from out.sum()
    "logsigmoid": lambda lib, t: lib.nn.functional.logsigmoid(t),
    "logaddexp2_self": lambda lib, t: lib.logaddexp2(t, lib.full((), 0.3, dtype=t.dtype)),
    "logaddexp2_other": lambda lib, t: lib.logaddexp2(lib.full((), 0.3, dtype=t.dtype), t),
    # the losses' backward kernels allocate their output contiguous
    "mse_input": lambda lib, t: lib.nn.functional.mse_loss(t, t.detach() * 0.5 + 0.2,
                                                           reduction="none"),
    "mse_target": lambda lib, t: lib.nn.functional.mse_loss(t.detach() * 0.5 + 0.2, t,
                                                            reduction="none"),
    "smooth_l1_input": lambda lib, t: lib.nn.functional.smooth_l1_loss(
        t, t.detach() * 0.5 + 0.2, reduction="none", beta=0.5),
    "smooth_l1_target": lambda lib, t: lib.nn.functional.smooth_l1_loss(
        t.detach() * 0.5 + 0.2, t, reduction="none", beta=0.5),
    "huber_input": lambda lib, t: lib.nn.functional.huber_loss(
        t, t.detach() * 0.5 + 0.2, reduction="none", delta=0.3),
    "huber_target": lambda lib, t: lib.nn.functional.huber_loss(
        t.detach() * 0.5 + 0.2, t, reduction="none", delta=0.3),
}
LAYOUTS = {"transposed": lambda t: t.t(), "sliced": lambda t: t[:, ::2]}
DATA = np.array([[0.3, -0.7, 1.2, -0.1], [0.9, -1.5, 0.0, 0.6], [-0.4, 0.8, -0.2, 3.1]])


def _grad(lib, name, layout, dtype):
    leaf = lib.tensor(DATA.astype(dtype), requires_grad=True)
    shaped = LAYOUTS[layout](leaf * 1)
    (grad,) = lib.autograd.grad(F_OPS[name](lib, shaped).sum(), [shaped])
    return grad


@pytest.mark.parametrize("name", sorted(F_OPS))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grad_keeps_the_inputs_layout(name, layout, dtype):
    ours, theirs = _grad(hookgrad, name, layout, dtype), _grad(torch, name, layout, dtype)
    assert_close(ours, theirs)
    assert ours.stride() == theirs.stride()


@pytest.mark.parametrize("name", sorted(set(F_OPS) - {"hardsigmoid"}))
def test_second_derivative_through_the_formula(name):
    results = []
    for lib in (torch, hookgrad):
        x = lib.tensor(DATA, requires_grad=True)
        out = F_OPS[name](lib, x)
        weight = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)),
                            requires_grad=True)
        (first,) = lib.autograd.grad(out, [x], weight, create_graph=True)
        results.append(lib.autograd.grad((first * first).sum(), [x, weight],
                                         allow_unused=True))
    for ours, theirs in zip(results[1], results[0]):
        if theirs is None:
            assert ours is None or not np.any(ours.detach().numpy())
        else:
            assert_close(ours, theirs)


def _addressing(tensor) -> tuple:
    """The strides that address memory (a size-1 dim's stride addresses nothing)."""
    return tuple(s for n, s in zip(tensor.shape, tensor.stride()) if n != 1)


# a scan over a size-1 dim is the input itself: torch hands the incoming gradient on as it is
# (an expanded one stays expanded), and so does hookgrad
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("shape,dim", [((3, 1, 1), 1), ((2, 1, 3), 1), ((1,), 0), ((3, 1), 0),
                                       ((1, 3), 0)])
def test_scan_over_a_size_one_dim_passes_the_gradient_on(name, shape, dim):
    grads = []
    for lib in (torch, hookgrad):
        x = lib.tensor(np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape),
                       requires_grad=True)
        (grad,) = lib.autograd.grad(getattr(x, name)(dim).sum(), [x])
        grads.append(grad)
    assert_close(grads[1], grads[0])
    assert _addressing(grads[1]) == _addressing(grads[0])
    assert grads[1].squeeze().is_contiguous() == grads[0].squeeze().is_contiguous()


# two operands laid out differently: torch compares them in its elementwise order (the first
# operand's layout), so the masks and the gradients built on them follow the first operand
PAIRS = {
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "minimum": lambda lib, a, b: lib.minimum(a, b),
    "clamp_both": lambda lib, a, b: lib.clamp(a, b - 1, b + 1),
    "clamp_min": lambda lib, a, b: lib.clamp(a, min=b),
    "clamp_max": lambda lib, a, b: lib.clamp(a, max=b),
    "pow": lambda lib, a, b: a.abs() ** b,
    "float_power": lambda lib, a, b: a.abs().float_power(b),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("transposed", ["first", "second", "both"])
def test_two_operand_grads_follow_torchs_layout(name, transposed):
    results = []
    for lib in (torch, hookgrad):
        a0 = lib.tensor(DATA, requires_grad=True)
        b0 = lib.tensor(DATA[::-1].copy() * 0.5, requires_grad=True)
        a = (a0 * 1).t() if transposed in ("first", "both") else (a0 * 1).t().contiguous()
        b = (b0 * 1).t() if transposed in ("second", "both") else (b0 * 1).t().contiguous()
        grads = lib.autograd.grad(PAIRS[name](lib, a, b).sum(), [a, b])
        results.append(grads)
    for ours, theirs in zip(results[1], results[0]):
        assert_close(ours, theirs)
        assert ours.stride() == theirs.stride()


# an incoming gradient that is dense decides the layout of a gradient torch allocates like it
GRAD_LIKE = ["logsigmoid", "logaddexp2_self", "logaddexp2_other", "mse_input", "huber_target"]


@pytest.mark.parametrize("name", GRAD_LIKE)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("incoming", ["row_major", "column_major"])
def test_grad_with_a_dense_incoming_gradient(name, layout, incoming):
    grads = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor(DATA, requires_grad=True)
        shaped = LAYOUTS[layout](leaf * 1)
        out = F_OPS[name](lib, shaped)
        rows, columns = out.shape
        weight = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(rows, columns))
        if incoming == "column_major":
            weight = weight.t().contiguous().t()
        (grad,) = lib.autograd.grad(out, [shaped], weight)
        grads.append(grad)
    assert_close(grads[1], grads[0])
    assert grads[1].stride() == grads[0].stride()


def _operand(lib, kind, scale):
    """A (4, 3) operand: transposed, row-major, or a 0-d tensor broadcast against the others."""
    leaf = lib.tensor(DATA * scale + 2, requires_grad=True)
    if kind == "scalar":
        return lib.tensor(1.5, dtype=lib.float64, requires_grad=True) * 1
    return (leaf * 1).t() if kind == "transposed" else (leaf * 1).t().contiguous()


KINDS = ["transposed", "row_major", "scalar"]


# torch's formula for tensor1 is grad * (value / tensor2): tensor2's layout decides when the
# incoming gradient is expanded
@pytest.mark.parametrize("name", ["addcdiv", "addcmul"])
@pytest.mark.parametrize("kinds", [(a, b, c) for a in KINDS for b in KINDS for c in KINDS])
def test_addc_grads_follow_torchs_layout(name, kinds):
    results = []
    for lib in (torch, hookgrad):
        operands = [_operand(lib, kind, scale) for kind, scale in zip(kinds, (1, 2, 3))]
        out = getattr(lib, name)(*operands, value=0.5)
        results.append(lib.autograd.grad(out.sum(), operands))
    for ours, theirs in zip(results[1], results[0]):
        assert_close(ours, theirs)
        assert ours.stride() == theirs.stride()


EXPONENTS = {
    "transposed": lambda lib, ints: ints.t(),
    "row_major": lambda lib, ints: ints.t().contiguous(),
    "scalar": lambda lib, ints: lib.tensor(2),
    "float_transposed": lambda lib, ints: ints.t().to(lib.float64),
}


# torch's 2^other is row-major whatever other's layout: it decides against an expanded
# incoming gradient, a dense one keeps its own
@pytest.mark.parametrize("exponent", sorted(EXPONENTS))
@pytest.mark.parametrize("layout", ["transposed", "row_major"])
@pytest.mark.parametrize("incoming", ["expanded", "column_major"])
def test_ldexp_grad_follows_torchs_layout(exponent, layout, incoming):
    grads = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor(DATA, requires_grad=True)
        shaped = (leaf * 1).t() if layout == "transposed" else (leaf * 1).t().contiguous()
        ints = lib.tensor(np.arange(12).reshape(3, 4) % 3)
        out = lib.ldexp(shaped, EXPONENTS[exponent](lib, ints))
        if incoming == "expanded":
            weight = lib.ones((), dtype=lib.float64).expand(4, 3)
        else:
            weight = lib.tensor(np.linspace(0.5, 1.5, 12).reshape(3, 4)).t()
        (grad,) = lib.autograd.grad(out, [shaped], weight)
        grads.append(grad)
    assert_close(grads[1], grads[0])
    assert grads[1].stride() == grads[0].stride()


def test_logaddexp2_relaid_gradient_keeps_its_graph():
    """Under create_graph the row-major copy of logaddexp2's gradient still leads back to both
    operands: second derivatives as torch's."""
    results = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor(DATA, requires_grad=True)
        shaped = (leaf * 1).t()
        other = lib.tensor(0.3, dtype=lib.float64, requires_grad=True)
        grad, grad_other = lib.autograd.grad(lib.logaddexp2(shaped, other).sum(),
                                             [shaped, other], create_graph=True)
        second = lib.autograd.grad((grad * grad).sum() + grad_other * 2, [leaf, other])
        results.append((grad.stride(), grad.requires_grad, second))
    assert results[1][:2] == results[0][:2]
    for ours, theirs in zip(results[1][2], results[0][2]):
        assert_close(ours, theirs)
