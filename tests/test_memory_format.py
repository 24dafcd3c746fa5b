"""Memory formats against torch: the constants, ``contiguous``/``is_contiguous``/``clone``/``to``
with ``memory_format``, the factories that take one, and ``Module.to(memory_format=...)``.

Every case builds the same tensor in both libraries (same shape, same strides) and compares
values, ``stride()``, ``is_contiguous`` under each format, identity (``is self``), grad_fn
names, gradients and errors. Shapes include size-1 and size-0 dims, where a tensor can be
row-major and channels-last at once and where torch's stride rules differ by format.
"""
from __future__ import annotations

import copy
import itertools
import pickle

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare

FORMATS = ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")
SHAPES_4D = [(2, 3, 4, 5), (1, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (1, 1, 1, 1), (1, 3, 1, 1),
             (2, 3, 1, 5), (2, 3, 4, 1), (1, 1, 4, 5), (0, 3, 4, 5), (2, 0, 4, 5), (2, 3, 0, 5)]
SHAPES_5D = [(2, 3, 2, 4, 5), (1, 3, 1, 4, 5), (2, 1, 2, 4, 5), (2, 3, 1, 1, 1), (2, 0, 2, 1, 3)]
OTHER_SHAPES = [(3,), (3, 4), (2, 3, 4), (1, 1, 1), ()]
LAYOUTS = ("contiguous", "channels_last", "transposed", "sliced", "expanded", "reversed")


def fmt(lib, name):
    return getattr(lib, name)


def make(lib, shape, layout, dtype="float64"):
    """The same tensor (values and strides) in hookgrad or torch, laid out as ``layout``."""
    n = len(shape)
    dt = getattr(lib, dtype)
    if layout == "contiguous" or n < 2:
        return (lib.arange(int(np.prod(shape)), dtype=dt) + 1).reshape(shape)
    if layout in ("channels_last", "reversed"):
        order = [0, *range(2, n), 1] if layout == "channels_last" else list(range(n))[::-1]
        base = lib.arange(int(np.prod(shape)), dtype=dt) + 1
        return base.reshape([shape[d] for d in order]).permute(*np.argsort(order).tolist())
    if layout == "transposed":
        swapped = list(shape)
        swapped[-1], swapped[-2] = swapped[-2], swapped[-1]
        return make(lib, tuple(swapped), "contiguous", dtype).transpose(-1, -2)
    if layout == "sliced":
        wider = (*shape[:-1], shape[-1] * 2)
        return make(lib, wider, "contiguous", dtype)[..., ::2]
    return make(lib, (*shape[:-1], 1), "contiguous", dtype).expand(*shape)


def layout_of(t):
    return (tuple(t.shape), t.stride(), t.is_contiguous())


def both(fn):
    """``fn(lib)`` in both libraries: (hookgrad's, torch's)."""
    return fn(hookgrad), fn(torch)


# -- the type and its constants ----------------------------------------------------------------
@pytest.mark.parametrize("name", FORMATS)
def test_constants_repr_type_and_identity_like_torch(name):
    ours, theirs = both(lambda lib: fmt(lib, name))
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    assert isinstance(ours, hookgrad.memory_format)
    assert type(ours) is hookgrad.memory_format
    assert copy.deepcopy(ours) is ours and copy.copy(ours) is ours
    assert pickle.loads(pickle.dumps(ours)) is ours
    assert ours == fmt(hookgrad, name) and hash(ours) == hash(fmt(hookgrad, name))
    assert all(ours != fmt(hookgrad, other) for other in FORMATS if other != name)


def test_memory_format_cannot_be_built_like_torch():
    assert_same_error(lambda lib: lib.memory_format())
    assert hookgrad.memory_format.__name__ == torch.memory_format.__name__


# -- is_contiguous -----------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES_4D + SHAPES_5D + OTHER_SHAPES, ids=str)
def test_is_contiguous_in_every_format_matches_torch(shape, layout):
    ours, theirs = both(lambda lib: make(lib, shape, layout))
    assert ours.stride() == theirs.stride()
    for name in FORMATS:
        assert ours.is_contiguous(memory_format=fmt(hookgrad, name)) == \
            theirs.is_contiguous(memory_format=fmt(torch, name)), name


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))), ids=str)
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 3, 1, 5), (2, 1, 4, 1), (1, 3, 4, 5)],
                         ids=str)
def test_is_contiguous_of_every_permutation_matches_torch(shape, order):
    def build(lib):
        base = lib.arange(float(np.prod(shape))).reshape([shape[d] for d in order])
        return base.permute(*np.argsort(order).tolist())

    ours, theirs = both(build)
    for name in ("contiguous_format", "channels_last"):
        assert ours.is_contiguous(memory_format=fmt(hookgrad, name)) == \
            theirs.is_contiguous(memory_format=fmt(torch, name)), name


@pytest.mark.parametrize("bad", [None, 3, "channels_last", torch.channels_last])
def test_is_contiguous_rejects_what_is_not_a_format_like_torch(bad):
    def call(lib):
        value = bad if bad is not torch.channels_last else (
            torch.channels_last if lib is hookgrad else hookgrad.channels_last)
        return lib.ones(2, 3, 4, 5).is_contiguous(memory_format=value)

    assert_same_error(call)


def test_is_contiguous_format_is_keyword_only_like_torch():
    ours = pytest.raises(TypeError, hookgrad.ones(2, 3, 4, 5).is_contiguous,
                         hookgrad.channels_last)
    theirs = pytest.raises(TypeError, torch.ones(2, 3, 4, 5).is_contiguous, torch.channels_last)
    assert type(ours.value) is type(theirs.value)


# -- contiguous(memory_format=...) -------------------------------------------------------------
def _contiguous_case(shape, layout, name):
    def run(lib):
        x = make(lib, shape, layout).requires_grad_()
        y = x.contiguous(memory_format=fmt(lib, name))
        return x, y

    return run


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES_4D, ids=str)
@pytest.mark.parametrize("name", ["channels_last", "contiguous_format"])
def test_contiguous_in_a_format_matches_torch(name, shape, layout):
    (hx, hy), (tx, ty) = both(_contiguous_case(shape, layout, name))
    assert_close(hy.detach(), ty.detach())
    assert layout_of(hy) == layout_of(ty)
    assert (hy is hx) == (ty is tx)
    assert (hy.grad_fn is None) == (ty.grad_fn is None)
    if ty.grad_fn is not None:
        assert hy.grad_fn.name() == ty.grad_fn.name()
    for name2 in ("contiguous_format", "channels_last"):
        assert hy.is_contiguous(memory_format=fmt(hookgrad, name2)) == \
            ty.is_contiguous(memory_format=fmt(torch, name2))
    # asking again gives the tensor itself, in both
    again = hy.contiguous(memory_format=fmt(hookgrad, name))
    assert (again is hy) == (ty.contiguous(memory_format=fmt(torch, name)) is ty)


@pytest.mark.parametrize("shape", SHAPES_5D, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "transposed"])
def test_contiguous_channels_last_3d_matches_torch(shape, layout):
    (hx, hy), (tx, ty) = both(_contiguous_case(shape, layout, "channels_last_3d"))
    assert_close(hy.detach(), ty.detach())
    assert layout_of(hy) == layout_of(ty) and (hy is hx) == (ty is tx)
    assert hy.is_contiguous(memory_format=hookgrad.channels_last_3d)


@pytest.mark.parametrize("name", ["channels_last", "channels_last_3d", "contiguous_format"])
def test_contiguous_in_a_format_passes_gradients_like_torch(name):
    shape = (2, 3, 2, 4, 5) if name == "channels_last_3d" else (2, 3, 4, 5)
    array = np.random.default_rng(0).standard_normal(shape)
    compare(lambda lib, x: (x * 2).contiguous(memory_format=fmt(lib, name)).sin(), array)
    compare(lambda lib, x: x.transpose(1, 2).contiguous(memory_format=fmt(lib, name)) * 3,
            array)


def test_grad_through_channels_last_has_torch_layout_and_graph():
    def run(lib):
        x = make(lib, (2, 3, 4, 5), "contiguous").requires_grad_()
        y = x.contiguous(memory_format=lib.channels_last)
        z = (y * y).relu()
        z.backward(lib.ones_like(z))
        return x.grad, z, y

    (hg, hz, hy), (tg, tz, ty) = both(run)
    assert_close(hg, tg)
    assert layout_of(hg) == layout_of(tg) and layout_of(hz) == layout_of(tz)
    assert [n.name() for n, _ in hz.grad_fn.next_functions] == \
        [n.name() for n, _ in tz.grad_fn.next_functions]
    assert hy.grad_fn.next_functions[0][0].name() == ty.grad_fn.next_functions[0][0].name()


@pytest.mark.parametrize("shape", [(3,), (3, 4), (2, 3, 4), (2, 3, 4, 5), (2, 3, 4, 5, 6)],
                         ids=str)
@pytest.mark.parametrize("name", ["channels_last", "channels_last_3d"])
def test_wrong_rank_raises_like_torch(name, shape):
    calls = [
        lambda lib: make(lib, shape, "contiguous").contiguous(memory_format=fmt(lib, name)),
        lambda lib: make(lib, shape, "contiguous").clone(memory_format=fmt(lib, name)),
        lambda lib: make(lib, shape, "contiguous").to(memory_format=fmt(lib, name)),
        lambda lib: lib.empty_like(make(lib, shape, "contiguous"), memory_format=fmt(lib, name)),
        lambda lib: lib.zeros_like(make(lib, shape, "contiguous"), memory_format=fmt(lib, name)),
        lambda lib: lib.full_like(make(lib, shape, "contiguous"), 2.0,
                                  memory_format=fmt(lib, name)),
        lambda lib: lib.empty(shape, memory_format=fmt(lib, name)),
    ]
    wants = 4 if name == "channels_last" else 5
    if len(shape) == wants:
        for call in calls:
            ours, theirs = both(call)
            assert layout_of(ours) == layout_of(theirs)
    else:
        for call in calls:
            assert_same_error(call)


def test_contiguous_preserve_format_like_torch():
    # a contiguous tensor is itself; any other raises
    ours, theirs = both(lambda lib: make(lib, (2, 3, 4, 5), "contiguous"))
    assert ours.contiguous(memory_format=hookgrad.preserve_format) is ours
    assert theirs.contiguous(memory_format=torch.preserve_format) is theirs
    assert_same_error(lambda lib: make(lib, (2, 3, 4, 5), "channels_last").contiguous(
        memory_format=lib.preserve_format))


@pytest.mark.parametrize("bad", [None, 3])
def test_contiguous_rejects_what_is_not_a_format_like_torch(bad):
    assert_same_error(lambda lib: lib.ones(2, 3, 4, 5).contiguous(memory_format=bad))


# -- clone, to, the factories ------------------------------------------------------------------
FACTORIES = {
    "clone": lambda lib, x, f: x.clone(memory_format=f),
    "torch.clone": lambda lib, x, f: lib.clone(x, memory_format=f),
    "to": lambda lib, x, f: x.to(memory_format=f),
    "to(float32)": lambda lib, x, f: x.to(lib.float32, memory_format=f),
    "to(float64)": lambda lib, x, f: x.to(lib.float64, memory_format=f),
    "to(copy)": lambda lib, x, f: x.to(lib.float64, copy=True, memory_format=f),
    "float": lambda lib, x, f: x.float(memory_format=f),
    "double": lambda lib, x, f: x.double(memory_format=f),
    "empty_like": lambda lib, x, f: lib.empty_like(x, memory_format=f).zero_(),
    "zeros_like": lambda lib, x, f: lib.zeros_like(x, memory_format=f),
    "ones_like": lambda lib, x, f: lib.ones_like(x, memory_format=f),
    "full_like": lambda lib, x, f: lib.full_like(x, 2.5, memory_format=f),
    "rand_like": lambda lib, x, f: lib.rand_like(x, memory_format=f, generator=_gen(lib)),
    "randn_like": lambda lib, x, f: lib.randn_like(x, memory_format=f, generator=_gen(lib)),
    "randint_like": lambda lib, x, f: lib.randint_like(x, 7, memory_format=f,
                                                       generator=_gen(lib)),
}


def _gen(lib):
    return lib.Generator().manual_seed(3)


@pytest.mark.parametrize("name", ["channels_last", "contiguous_format", "preserve_format"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 3, 1, 5), (2, 1, 4, 5), (2, 0, 4, 5)],
                         ids=str)
@pytest.mark.parametrize("factory", sorted(FACTORIES))
def test_factories_lay_out_as_torch(factory, shape, layout, name):
    def run(lib):
        x = make(lib, shape, layout)
        return x, FACTORIES[factory](lib, x, fmt(lib, name))

    (hx, hy), (tx, ty) = both(run)
    assert_close(hy, ty)
    assert str(hy.dtype) == str(ty.dtype)
    assert layout_of(hy) == layout_of(ty)
    assert (hy is hx) == (ty is tx)
    assert hy.is_contiguous(memory_format=hookgrad.channels_last) == \
        ty.is_contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("shape", [(2, 3, 2, 4, 5), (1, 3, 1, 4, 5)], ids=str)
@pytest.mark.parametrize("factory", sorted(FACTORIES))
def test_factories_channels_last_3d_lay_out_as_torch(factory, shape):
    (hy, ty) = both(lambda lib: FACTORIES[factory](lib, make(lib, shape, "transposed"),
                                                   lib.channels_last_3d))
    assert_close(hy, ty)
    assert layout_of(hy) == layout_of(ty)


@pytest.mark.parametrize("factory", ["clone", "to", "to(float32)", "to(float64)", "float"])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "transposed"])
def test_copies_in_a_format_record_torch_graph(factory, layout):
    def run(lib):
        x = make(lib, (2, 3, 4, 5), layout, "float32").requires_grad_()
        y = FACTORIES[factory](lib, x, lib.channels_last)
        (y * lib.arange(120.).reshape(2, 3, 4, 5)).sum().backward()
        return x, y

    (hx, hy), (tx, ty) = both(run)
    assert (hy is hx) == (ty is tx)
    assert (hy.grad_fn is None) == (ty.grad_fn is None)
    if ty.grad_fn is not None:
        assert hy.grad_fn.name() == ty.grad_fn.name()
    assert_close(hx.grad, tx.grad)
    assert layout_of(hx.grad) == layout_of(tx.grad)


@pytest.mark.parametrize("bad", [3, "channels_last"])
@pytest.mark.parametrize("factory", ["clone", "to", "zeros_like", "empty_like", "full_like"])
def test_factories_reject_what_is_not_a_format_like_torch(factory, bad):
    assert_same_error(lambda lib: FACTORIES[factory](lib, lib.ones(2, 3, 4, 5), bad))


@pytest.mark.parametrize("factory", ["clone", "to", "zeros_like", "empty_like", "rand_like"])
def test_factories_take_none_as_preserve_like_torch(factory):
    ours, theirs = both(lambda lib: FACTORIES[factory](
        lib, make(lib, (2, 3, 4, 5), "channels_last"), None))
    assert layout_of(ours) == layout_of(theirs)


@pytest.mark.parametrize("shape", SHAPES_4D, ids=str)
@pytest.mark.parametrize("name", ["channels_last", "contiguous_format"])
def test_empty_in_a_format_matches_torch(shape, name):
    ours, theirs = both(lambda lib: lib.empty(shape, memory_format=fmt(lib, name),
                                              dtype=lib.float64))
    assert layout_of(ours) == layout_of(theirs)
    assert ours.is_contiguous(memory_format=hookgrad.channels_last) == \
        theirs.is_contiguous(memory_format=torch.channels_last)
    # the factories of such a tensor keep its layout (preserve_format)
    for factory in ("clone", "zeros_like", "to(float32)"):
        assert layout_of(FACTORIES[factory](hookgrad, ours, hookgrad.preserve_format)) == \
            layout_of(FACTORIES[factory](torch, theirs, torch.preserve_format))


def test_empty_with_preserve_format_raises_like_torch():
    assert_same_error(lambda lib: lib.empty(2, 3, 4, 5, memory_format=lib.preserve_format))


# -- nn.Module.to(memory_format=...) -----------------------------------------------------------
def _modules(lib):
    model = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
                              lib.nn.Flatten(), lib.nn.Linear(4 * 3 * 3, 2))
    model.register_buffer("mask4d", lib.ones(2, 3, 1, 5, dtype=lib.int64))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.arange(float(p.numel())).reshape(p.shape) / (10 + i))
    return model


@pytest.mark.parametrize("dtype", [None, "float64"])
def test_module_to_channels_last_matches_torch(dtype):
    def run(lib):
        model = _modules(lib)
        weights = [p for p in model.parameters()]
        kwargs = {} if dtype is None else {"dtype": getattr(lib, dtype)}
        assert model.to(memory_format=lib.channels_last, **kwargs) is model
        assert all(a is b for a, b in zip(weights, model.parameters()))  # same Parameters
        x = make(lib, (2, 3, 5, 5), "contiguous", dtype or "float32").contiguous(
            memory_format=lib.channels_last).requires_grad_()
        out = model(x)
        out.sum().backward()
        return model, out, x

    (hm, ho, hx), (tm, to, tx) = both(run)
    for (name, h), (_, t) in zip(hm.state_dict().items(), tm.state_dict().items()):
        assert layout_of(h) == layout_of(t), name
        assert str(h.dtype) == str(t.dtype), name
    assert_close(ho, to, rtol=1e-5, atol=1e-5)
    assert_close(hx.grad, tx.grad, rtol=1e-5, atol=1e-5)
    assert layout_of(hx.grad) == layout_of(tx.grad)
    for h, t in zip(hm.parameters(), tm.parameters()):
        assert layout_of(h.grad) == layout_of(t.grad)


@pytest.mark.parametrize("name", ["channels_last", "channels_last_3d", "contiguous_format"])
@pytest.mark.parametrize("conv", ["Conv2d", "Conv3d"])
def test_module_to_format_of_conv_weights_like_torch(conv, name):
    def run(lib):
        return getattr(lib.nn, conv)(3, 4, 3).to(memory_format=fmt(lib, name))

    ours, theirs = raised_or(run, hookgrad), raised_or(run, torch)
    if isinstance(theirs, tuple):
        assert ours == theirs
    else:
        assert layout_of(ours.weight) == layout_of(theirs.weight)
        assert layout_of(ours.bias) == layout_of(theirs.bias)


def raised_or(fn, lib):
    try:
        return fn(lib)
    except RuntimeError as error:
        return type(error), str(error)


# -- ops on inputs laid out by the new entry points follow torch's layout rules ------------------
OPS = {
    "relu": lambda lib, x: lib.relu(x),
    "add": lambda lib, x: x + x.detach().contiguous(),
    "mul_scalar": lambda lib, x: x * 2,
    "conv2d": lambda lib, x: lib.nn.functional.conv2d(
        x, lib.arange(162.).reshape(6, 3, 3, 3).to(x.dtype) / 150),
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x, 2),
    "avg_pool2d": lambda lib, x: lib.nn.functional.avg_pool2d(x, 2),
    "batch_norm": lambda lib, x: lib.nn.functional.batch_norm(
        x, None, None, training=True),
    "sum_dim": lambda lib, x: x.sum(1, keepdim=True),
    "softmax": lambda lib, x: x.softmax(1),
    "clone": lambda lib, x: x.clone(),
    "view_as_nhwc": lambda lib, x: x.permute(0, 2, 3, 1).reshape(-1, 3),
}


@pytest.mark.parametrize("entry", ["contiguous", "to", "clone", "empty_copy"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_ops_on_channels_last_inputs_follow_torch(op, entry):
    def run(lib):
        base = make(lib, (2, 3, 6, 6), "contiguous").requires_grad_()
        if entry == "contiguous":
            x = base.contiguous(memory_format=lib.channels_last)
        elif entry == "to":
            x = base.to(memory_format=lib.channels_last)
        elif entry == "clone":
            x = base.clone(memory_format=lib.channels_last)
        else:
            x = lib.empty(2, 3, 6, 6, dtype=lib.float64, memory_format=lib.channels_last)
            x = x.copy_(base)
        y = OPS[op](lib, x / 72)
        y.backward(lib.ones_like(y))
        return y, base.grad

    (hy, hg), (ty, tg) = both(run)
    assert_close(hy, ty)
    assert layout_of(hy) == layout_of(ty)
    assert_close(hg, tg)
    assert layout_of(hg) == layout_of(tg)


POSITIONAL = {
    "contiguous": lambda lib, x: x.contiguous(lib.channels_last),
    "clone": lambda lib, x: x.clone(lib.channels_last),
    "float": lambda lib, x: x.float(lib.channels_last),
    "zeros_like": lambda lib, x: lib.zeros_like(x, lib.channels_last),
    "module_to": lambda lib, x: lib.nn.Conv2d(3, 4, 3).to(lib.channels_last),
}


@pytest.mark.parametrize("call", sorted(POSITIONAL))
def test_format_is_keyword_only_like_torch(call):
    ours = pytest.raises(TypeError, POSITIONAL[call], hookgrad, hookgrad.ones(2, 3, 4, 5))
    theirs = pytest.raises(TypeError, POSITIONAL[call], torch, torch.ones(2, 3, 4, 5))
    if call == "module_to":
        assert str(ours.value).startswith(str(theirs.value).splitlines()[0].split(",")[0])


@pytest.mark.parametrize("args", ["fmt", "dtype_fmt"])
def test_to_with_a_positional_format_raises_like_torch(args):
    def call(lib):
        x = lib.ones(2, 3, 4, 5)
        return x.to(lib.channels_last) if args == "fmt" else \
            x.to(lib.float64, lib.channels_last)

    assert_same_error(call)


@pytest.mark.parametrize("shape", [(2, 3, 6, 6), (1, 3, 6, 6), (2, 1, 6, 6), (2, 3, 1, 6),
                                   (1, 1, 1, 1)], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "transposed"])
def test_global_average_pool_keeps_channels_last_like_torch(shape, layout):
    def run(lib):
        x = make(lib, shape, layout).requires_grad_()
        y = lib.nn.functional.adaptive_avg_pool2d(x, 1)
        y.backward(lib.ones_like(y))
        return y, x.grad

    (hy, hg), (ty, tg) = both(run)
    assert_close(hy, ty)
    assert layout_of(hy) == layout_of(ty)
    assert hy.grad_fn.name() == ty.grad_fn.name()
    assert [n.name() for n, _ in hy.grad_fn.next_functions] == \
        [n.name() for n, _ in ty.grad_fn.next_functions]
    assert_close(hg, tg)
    assert layout_of(hg) == layout_of(tg)


@pytest.mark.parametrize("shape", [(1, 3, 4, 5), (1, 3, 1, 5), (2, 3, 4, 5), (1, 6, 1, 1)],
                         ids=str)
def test_group_norm_of_channels_last_keeps_torch_strides(shape):
    def run(lib):
        x = make(lib, shape, "channels_last").requires_grad_()
        y = lib.nn.functional.group_norm(x, 3)
        y.backward(lib.ones_like(y))
        return y, x.grad

    (hy, hg), (ty, tg) = both(run)
    assert_close(hy, ty)
    assert layout_of(hy) == layout_of(ty)
    assert_close(hg, tg, atol=1e-10)


@pytest.mark.parametrize("shape,groups", [((1, 3, 1, 1), 3), ((1, 6), 6), ((1, 6, 1, 1), 3)],
                         ids=str)
def test_group_norm_needs_more_than_one_value_per_group_like_torch(shape, groups):
    def call(lib):
        return lib.nn.functional.group_norm(lib.ones(shape), groups)

    if shape == (1, 6, 1, 1):
        assert_close(call(hookgrad), call(torch))
    else:
        assert_same_error(call)


# nn ops read an input's format off its strides as torch does: in the ambiguous shapes (N, C
# or spatial sizes of 1, where a tensor is row-major and channels-last at once) pooling,
# padding, interpolation and conv follow torch's strides test, batch norm its stricter one
AMBIGUOUS_4D = [(1, 6, 1, 1), (2, 3, 1, 1), (1, 3, 4, 5), (2, 1, 4, 5), (1, 3, 1, 5),
                (2, 3, 4, 1), (1, 1, 4, 5)]


@pytest.mark.parametrize("layout", ["channels_last", "sliced", "expanded", "transposed"])
@pytest.mark.parametrize("shape", AMBIGUOUS_4D, ids=str)
def test_nn_ops_on_ambiguous_channels_last_shapes_follow_torch(shape, layout):
    from ops._layout_table import NN_CALLS

    for name, call in sorted(NN_CALLS.items()):
        def run(lib):
            return call(lib, make(lib, shape, layout, "float32") / 121)

        try:
            theirs = run(torch)
        except (RuntimeError, ValueError) as error:  # e.g. a 3-channel conv of 6 channels
            pytest.raises(type(error), run, hookgrad)
            continue
        ours = run(hookgrad)
        ours, theirs = [ours] if isinstance(ours, hookgrad.Tensor) else ours, \
            [theirs] if isinstance(theirs, torch.Tensor) else theirs
        for h, t in zip(ours, theirs):
            if isinstance(t, torch.Tensor):
                assert layout_of(h) == layout_of(t), name
                assert_close(h, t, rtol=1e-4, atol=1e-5)
