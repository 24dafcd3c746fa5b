"""hookgrad.autocast against torch.autocast on the CPU: state functions, nesting, the decorator,
threads, warnings and errors, and a small MLP and CNN trained one step (outputs, gradients and
their dtypes, grad_fn names)."""
import threading
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close

LIBS = (hookgrad, torch)


def _dtype(lib, name):
    return getattr(lib, name)


def _caught(fn):
    """(result or exception type and message, [(category, message)]) of ``fn()``."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            result = fn()
        except Exception as error:
            result = (type(error).__name__, str(error))
    return result, [(w.category.__name__, str(w.message).split(" (Triggered")[0])
                    for w in seen]


def _same(fn):
    ours, theirs = _caught(lambda: fn(hookgrad)), _caught(lambda: fn(torch))
    assert repr(ours) == repr(theirs)


@pytest.fixture(autouse=True)
def _fresh_state():
    yield
    for lib in LIBS:
        lib.set_autocast_enabled("cpu", False)
        lib.set_autocast_dtype("cpu", lib.bfloat16)
        lib.set_autocast_cache_enabled(True)


# -- state functions -----------------------------------------------------------------------------
@pytest.mark.parametrize("query", [
    lambda lib: lib.is_autocast_enabled(),
    lambda lib: lib.is_autocast_enabled("cpu"),
    lambda lib: lib.is_autocast_enabled("cuda"),
    lambda lib: lib.is_autocast_enabled("xyz"),
    lambda lib: lib.get_autocast_dtype("cpu"),
    lambda lib: lib.get_autocast_dtype("cuda"),
    lambda lib: lib.get_autocast_cpu_dtype(),
    lambda lib: lib.get_autocast_gpu_dtype(),
    lambda lib: lib.is_autocast_cpu_enabled(),
    lambda lib: lib.is_autocast_cache_enabled(),
    lambda lib: lib.amp.is_autocast_available("cpu"),
    lambda lib: lib.amp.is_autocast_available("cuda"),
    lambda lib: lib.amp.is_autocast_available("xyz"),
], ids=range(13))
def test_state_queries_match_torch(query):
    _same(query)


@pytest.mark.parametrize("change", [
    lambda lib: (lib.set_autocast_enabled("cpu", True), lib.is_autocast_enabled("cpu"),
                 lib.is_autocast_cpu_enabled()),
    lambda lib: (lib.set_autocast_enabled(True), lib.is_autocast_enabled(),
                 lib.is_autocast_enabled("cpu"), lib.set_autocast_enabled(False)),
    lambda lib: (lib.set_autocast_dtype("cpu", lib.float16), lib.get_autocast_dtype("cpu"),
                 lib.get_autocast_cpu_dtype()),
    lambda lib: (lib.set_autocast_cpu_dtype(lib.float16), lib.get_autocast_dtype("cpu")),
    lambda lib: (lib.set_autocast_cpu_enabled(True), lib.is_autocast_enabled("cpu")),
    lambda lib: (lib.set_autocast_cache_enabled(False), lib.is_autocast_cache_enabled()),
    lambda lib: lib.clear_autocast_cache(),
    lambda lib: [lib.autocast_increment_nesting(), lib.autocast_increment_nesting(),
                 lib.autocast_decrement_nesting(), lib.autocast_decrement_nesting(),
                 lib.autocast_decrement_nesting(), lib.autocast_increment_nesting()],
], ids=range(8))
def test_state_setters_match_torch(change):
    _same(change)


_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "vulkan", "hip", "maia", "xla", "mps", "meta",
                 "hpu", "mtia", "privateuseone")


@pytest.mark.parametrize("device_type", _DEVICE_TYPES)
def test_each_device_type_answers_as_torch(device_type):
    _same(lambda lib: (_caught(lambda: lib.get_autocast_dtype(device_type)),
                       _caught(lambda: lib.is_autocast_enabled(device_type)),
                       _caught(lambda: lib.amp.is_autocast_available(device_type)),
                       _caught(lambda: (lambda ac: (ac.fast_dtype, ac._enabled))(
                           lib.autocast(device_type)))))


def test_set_autocast_enabled_turns_casting_on():
    def program(lib):
        lib.set_autocast_enabled("cpu", True)
        out = lib.mm(lib.ones(2, 3), lib.ones(3, 2))
        lib.set_autocast_enabled("cpu", False)
        return str(out.dtype), str(lib.mm(lib.ones(2, 3), lib.ones(3, 2)).dtype)
    _same(program)


# -- the context manager: arguments, warnings, errors --------------------------------------------
@pytest.mark.parametrize("make", [
    lambda lib: lib.autocast("cpu"),
    lambda lib: lib.autocast("cpu", dtype=lib.float16, enabled=False),
    lambda lib: lib.autocast("cpu", cache_enabled=False),
    lambda lib: lib.autocast("cpu", dtype=lib.float64),
    lambda lib: lib.autocast("cpu", dtype=lib.float32),
    lambda lib: lib.autocast("cpu", dtype=lib.int32),
    lambda lib: lib.autocast("cuda"),
    lambda lib: lib.autocast("cuda", dtype=lib.bfloat16),
    lambda lib: lib.amp.autocast("cpu", dtype=lib.float16),
    lambda lib: lib.cpu.amp.autocast(),
    lambda lib: lib.cpu.amp.autocast(dtype=lib.float16, cache_enabled=False),
], ids=range(11))
def test_settings_and_warnings_match_torch(make):
    _same(lambda lib: (lambda ac: (ac.device, ac.fast_dtype, ac._enabled, ac._cache_enabled))(
        make(lib)))


@pytest.mark.parametrize("make", [
    lambda lib: lib.autocast(1),
    lambda lib: lib.autocast("xyz"),
    lambda lib: lib.autocast(),
    lambda lib: lib.amp.custom_fwd(lambda ctx: None),
    lambda lib: lib.amp.custom_fwd(device_type=1),
], ids=range(5))
def test_errors_match_torch(make):
    _same(make)


def test_unsupported_dtype_disables_autocast_but_records_the_dtype():
    def program(lib):
        with lib.autocast("cpu", dtype=lib.float64) as context:
            inside = (context is not None, lib.is_autocast_enabled("cpu"),
                      lib.get_autocast_dtype("cpu"), lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype)
        return inside, lib.get_autocast_dtype("cpu")
    _same(program)


# -- nesting, decorator, threads -----------------------------------------------------------------
def test_nesting_and_disabling_inside_match_torch():
    def program(lib):
        a, b = lib.ones(2, 3), lib.ones(3, 2)
        seen = []
        with lib.autocast("cpu", dtype=lib.float16):
            seen.append(lib.mm(a, b).dtype)
            with lib.autocast("cpu"):  # dtype None: the current one (float16)
                seen.append((lib.get_autocast_dtype("cpu"), lib.mm(a, b).dtype))
                with lib.autocast("cpu", dtype=lib.bfloat16):
                    seen.append(lib.mm(a, b).dtype)
                    with lib.autocast("cpu", enabled=False):
                        seen.append((lib.is_autocast_enabled("cpu"), lib.mm(a, b).dtype))
                    seen.append(lib.mm(a, b).dtype)
                seen.append(lib.mm(a, b).dtype)
        seen.append((lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu"),
                     lib.mm(a, b).dtype))
        return seen
    _same(program)


def test_decorator_form_matches_torch():
    def program(lib):
        @lib.autocast("cpu", dtype=lib.float16)
        def product(a, b):
            """a doc"""
            return lib.matmul(a, b), lib.is_autocast_enabled("cpu")

        return (product(lib.ones(2, 3), lib.ones(3, 2))[0].dtype, product.__name__,
                product.__doc__, lib.is_autocast_enabled("cpu"))
    _same(program)


def test_autocast_is_thread_local():
    def program(lib):
        seen = {}

        def worker():
            seen["worker"] = (lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu"),
                              lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype)

        with lib.autocast("cpu", dtype=lib.float16):
            thread = threading.Thread(target=worker)
            thread.start()
            thread.join()
            seen["main"] = lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype
        return seen
    _same(program)


def test_a_thread_with_autocast_leaves_others_alone():
    started, finish = threading.Event(), threading.Event()

    def worker():
        with hookgrad.autocast("cpu"):
            started.set()
            finish.wait(10)

    thread = threading.Thread(target=worker)
    thread.start()
    started.wait(10)
    try:
        assert hookgrad.mm(hookgrad.ones(2, 2), hookgrad.ones(2, 2)).dtype is hookgrad.float32
    finally:
        finish.set()
        thread.join()


def test_tensors_created_inside_keep_their_dtypes():
    def program(lib):
        with lib.autocast("cpu"):
            made = (lib.ones(2), lib.zeros(2, dtype=lib.float64), lib.tensor([1.0]),
                    lib.randn(2), lib.arange(3), lib.ones(2) + 1, lib.ones(2).half() * 2)
        return [str(t.dtype) for t in made]
    _same(program)


def test_out_variants_and_in_place_products_are_not_cast():
    def program(lib):
        a, b = lib.ones(2, 3), lib.ones(3, 2)
        with lib.autocast("cpu"):
            return [str(t.dtype) for t in (
                lib.mm(a, b, out=lib.empty(2, 2)), lib.ones(2, 2).addmm_(a, b),
                lib.nn.functional.linear(input=a, weight=b.t()),
                lib.conv2d(lib.ones(1, 1, 3, 3), lib.ones(1, 1, 2, 2)))]
    _same(program)


def test_integer_and_double_inputs_are_not_cast():
    def program(lib):
        a = lib.ones(2, 3, dtype=lib.float64)
        with lib.autocast("cpu"):
            return [str(t.dtype) for t in (
                lib.mm(a, a.t()), lib.mm(a.long(), a.t().long()), lib.prod(a),
                lib.prod(a.bfloat16()), lib.cat([a.bfloat16(), a]),
                lib.cat([a.bfloat16(), a.long()]))]
    _same(program)


@pytest.mark.parametrize("low,other", [("bfloat16", "float16"), ("float16", "bfloat16")])
def test_promote_list_refuses_the_other_half_type(low, other):
    def program(lib):
        x = lib.ones(2, dtype=_dtype(lib, other))
        with lib.autocast("cpu", dtype=_dtype(lib, low)):
            return lib.stack([x, x]).dtype
    _same(program)


# -- gradients -----------------------------------------------------------------------------------
def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.ReLU(), lib.nn.Linear(16, 16),
                             lib.nn.Tanh(), lib.nn.Linear(16, 3))


def _cnn(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3, padding=1), lib.nn.ReLU(),
                             lib.nn.MaxPool2d(2), lib.nn.Conv2d(4, 4, 3, padding=1),
                             lib.nn.GELU(), lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 3))


def _step(lib, build, shape, dtype_name):
    rng = np.random.default_rng(0)
    net = build(lib)
    with lib.no_grad():
        for parameter in net.parameters():
            parameter.copy_(lib.tensor(
                (rng.standard_normal(tuple(parameter.shape)) * 0.3).astype(np.float32)))
    x = lib.tensor(rng.standard_normal(shape).astype(np.float32))
    target = lib.tensor([0, 1, 2, 1, 0])
    with lib.autocast("cpu", dtype=_dtype(lib, dtype_name)):
        out = net(x)
        loss = lib.nn.functional.cross_entropy(out, target)
    loss.backward()
    names = (out.grad_fn.name(),
             [n.name() if n is not None else None for n, _ in out.grad_fn.next_functions])
    return out, loss, [p.grad for p in net.parameters()], names


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
@pytest.mark.parametrize("build,shape", [(_mlp, (5, 6)), (_cnn, (5, 2, 8, 8))],
                         ids=["mlp", "cnn"])
def test_training_step_matches_torch(build, shape, dtype_name):
    ours = _step(hookgrad, build, shape, dtype_name)
    theirs = _step(torch, build, shape, dtype_name)
    tolerance = 2e-2 if dtype_name == "bfloat16" else 5e-3
    assert_close(ours[0].float(), theirs[0].float(), rtol=tolerance, atol=tolerance, what="output")
    assert_close(ours[1], theirs[1], rtol=tolerance, atol=tolerance, what="loss")
    for i, (grad, expected) in enumerate(zip(ours[2], theirs[2])):
        assert grad.dtype is hookgrad.float32
        scale = float(np.abs(expected.numpy()).max())
        assert_close(grad, expected, rtol=tolerance, atol=tolerance * max(scale, 1.0),
                     what=f"grad {i}")
    assert ours[3] == theirs[3]


def test_gradients_keep_each_leaf_dtype():
    def program(lib):
        w = lib.ones(3, 3, requires_grad=True)
        h = lib.ones(3, 3, dtype=lib.bfloat16, requires_grad=True)
        d = lib.ones(3, 3, dtype=lib.float64, requires_grad=True)
        with lib.autocast("cpu"):
            out = lib.mm(w, h).float().sum() + lib.mm(d, d).sum() + lib.prod(h).float()
        out.backward()
        return [str(t.grad.dtype) for t in (w, h, d)], str(out.dtype)
    _same(program)


def test_backward_inside_autocast_casts_its_products_as_torch():
    """Called inside autocast, backward runs under it: an inverse's formula (products) is
    computed in bfloat16, the gradient reaches the float32 leaf in float32, and a user
    Function's backward sees autocast on, as in torch."""
    def program(lib):
        a = (lib.eye(3) * 2 + 0.1).requires_grad_()
        seen = []

        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * x

            @staticmethod
            def backward(ctx, grad):
                seen.append((lib.is_autocast_enabled("cpu"), str(lib.mm(grad, grad).dtype)))
                return grad * 2

        with lib.autocast("cpu"):
            out = lib.linalg.inv(a)
            grad, = lib.autograd.grad(Square.apply(out).sum(), a, create_graph=True)
        return str(out.dtype), str(grad.dtype), grad.detach().numpy().round(4).tolist(), seen
    _same(program)


def test_a_mode_sees_the_listed_call_and_not_the_casts():
    def program(lib):
        log = []

        class Log(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append(func.__name__)
                return func(*args, **(kwargs or {}))

        a, b = lib.ones(2, 3), lib.ones(3, 2)
        with lib.autocast("cpu"), Log():
            out = lib.mm(a, b)
        return log, str(out.dtype)
    _same(program)


# -- custom_fwd / custom_bwd ---------------------------------------------------------------------
def _custom(lib, cast_inputs):
    amp = lib.amp

    class Scaled(lib.autograd.Function):
        @staticmethod
        @amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            ctx.seen = (str(x.dtype), str(w.dtype), lib.is_autocast_enabled("cpu"))
            return lib.mm(x, w)

        @staticmethod
        @amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            ctx.backward_seen = (lib.is_autocast_enabled("cpu"), str(lib.mm(grad, w.t()).dtype))
            return grad.mm(w.t()), x.t().mm(grad)

    return Scaled


@pytest.mark.parametrize("cast_inputs", [None, "float32", "float16"])
@pytest.mark.parametrize("inside", [True, False])
def test_custom_fwd_and_bwd_match_torch(cast_inputs, inside):
    def program(lib):
        Scaled = _custom(lib, None if cast_inputs is None else _dtype(lib, cast_inputs))
        x = lib.ones(2, 3, requires_grad=True)
        w = lib.full((3, 2), 0.5, requires_grad=True)
        with lib.autocast("cpu", enabled=inside):
            out = Scaled.apply(x, w)
        out.float().sum().backward()
        node = out.grad_fn
        return (str(out.dtype), node.seen, node.backward_seen, str(x.grad.dtype),
                str(w.grad.dtype))
    _same(program)
