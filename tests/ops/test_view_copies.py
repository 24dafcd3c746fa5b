"""The ``*_copy`` functions against torch: values, strides, no shared memory, node names and
saved arguments, gradients (float64, and gradcheck), double backward, ``out=`` and errors."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_same_error, compare, double_backward, error_of

RNG = np.random.default_rng(11)
X = RNG.standard_normal((3, 4))
CUBE = RNG.standard_normal((2, 1, 3))

# name: (input, function of (lib, x)); each call as torch's user would write it
CALLS = {
    "alias_copy": (X, lambda L, x: L.alias_copy(x)),
    "alias_copy_t": (X, lambda L, x: L.alias_copy(x.t())),
    "as_strided_copy": (X, lambda L, x: L.as_strided_copy(x, (2, 3), (1, 2))),
    "as_strided_copy_offset": (X, lambda L, x: L.as_strided_copy(x, (2, 2), (4, 1), 5)),
    "diagonal_copy": (X, lambda L, x: L.diagonal_copy(x)),
    "diagonal_copy_args": (CUBE, lambda L, x: L.diagonal_copy(x, -1, -1, 0)),
    "diagonal_copy_kw": (X, lambda L, x: L.diagonal_copy(x, offset=1, dim1=1, dim2=0)),
    "expand_copy": (CUBE, lambda L, x: L.expand_copy(x, (2, 2, 5, 3))),
    "expand_copy_minus_one": (CUBE, lambda L, x: L.expand_copy(x, [-1, 4, -1], implicit=True)),
    "narrow_copy": (X, lambda L, x: L.narrow_copy(x, 0, 1, 2)),
    "narrow_copy_negative": (X, lambda L, x: L.narrow_copy(x, -1, -3, 2)),
    "narrow_copy_method": (X, lambda L, x: x.narrow_copy(1, start=1, length=3)),
    "permute_copy": (CUBE, lambda L, x: L.permute_copy(x, (2, 0, 1))),
    "permute_copy_negative": (CUBE, lambda L, x: L.permute_copy(x, [-1, 1, 0])),
    "select_copy": (X, lambda L, x: L.select_copy(x, 1, -1)),
    "slice_copy": (X, lambda L, x: L.slice_copy(x, 0, 1, 3)),
    "slice_copy_defaults": (X, lambda L, x: L.slice_copy(x)),
    "slice_copy_step": (X, lambda L, x: L.slice_copy(x, -1, -3, None, 2)),
    "slice_copy_clamped": (X, lambda L, x: L.slice_copy(x, 0, -100, 100)),
    "slice_copy_empty": (X, lambda L, x: L.slice_copy(x, 1, 3, 1)),
    "split_copy": (X, lambda L, x: L.split_copy(x, 2)),
    "split_copy_dim": (X, lambda L, x: L.split_copy(x, 3, -1)),
    "split_with_sizes_copy": (X, lambda L, x: L.split_with_sizes_copy(x, [1, 2], dim=0)),
    "squeeze_copy": (CUBE, lambda L, x: L.squeeze_copy(x)),
    "squeeze_copy_dim": (CUBE, lambda L, x: L.squeeze_copy(x, -2)),
    "squeeze_copy_dims": (CUBE, lambda L, x: L.squeeze_copy(x, [0, 1])),
    "squeeze_copy_kept": (X, lambda L, x: L.squeeze_copy(x, dim=0)),
    "t_copy": (X, lambda L, x: L.t_copy(x)),
    "t_copy_1d": (X[0], lambda L, x: L.t_copy(x)),
    "transpose_copy": (CUBE, lambda L, x: L.transpose_copy(x, 0, -1)),
    "unbind_copy": (X, lambda L, x: L.unbind_copy(x)),
    "unbind_copy_dim": (CUBE, lambda L, x: L.unbind_copy(x, dim=-1)),
    "unfold_copy": (X, lambda L, x: L.unfold_copy(x, 1, 2, 1)),
    "unfold_copy_0d": (np.array(2.5), lambda L, x: L.unfold_copy(x, 0, 1, 1)),
    "unsqueeze_copy": (X, lambda L, x: L.unsqueeze_copy(x, 1)),
    "unsqueeze_copy_end": (CUBE[:, :1], lambda L, x: L.unsqueeze_copy(x, -1)),
    "view_copy": (X, lambda L, x: L.view_copy(x, (2, -1))),
    "view_copy_not_viewable": (X, lambda L, x: L.view_copy(x.t(), [12])),
    "view_copy_empty": (np.zeros((2, 0, 3)), lambda L, x: L.view_copy(x, (0, 6))),
}
NAMES = sorted(CALLS)


def _pieces(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_and_gradients(name, dtype):
    array, fn = CALLS[name]
    compare(fn, array.astype(dtype))


@pytest.mark.parametrize("name", NAMES)
def test_fresh_contiguous_tensors_like_torch(name):
    array, fn = CALLS[name]
    results = {}
    for lib in (torch, hookgrad):
        x = lib.tensor(array.copy(), requires_grad=True)
        pieces = _pieces(fn(lib, x))
        results[lib] = [(tuple(p.shape), p.stride(), p.is_contiguous(), p._base is None,
                         p.requires_grad) for p in pieces]
        for piece in pieces:  # no memory in common: writing the copy leaves the input
            with lib.no_grad():
                piece.detach().fill_(123.0)
            assert not bool((x == 123.0).any())
    assert results[hookgrad] == results[torch]


def _node_summary(tensor):
    node = tensor.grad_fn
    saved = {name: getattr(node, name) for name in dir(node) if name.startswith("_saved_")}
    return node.name(), saved


@pytest.mark.parametrize("name", NAMES)
def test_node_names_and_saved_arguments(name):
    array, fn = CALLS[name]
    summaries = []
    for lib in (torch, hookgrad):
        pieces = _pieces(fn(lib, lib.tensor(array.copy(), requires_grad=True)))
        summaries.append([_node_summary(p) for p in pieces])
    assert summaries[1] == summaries[0]


@pytest.mark.parametrize("name", [n for n in NAMES if "empty" not in n and "0d" not in n])
def test_gradcheck(name):
    array, fn = CALLS[name]
    x = hookgrad.tensor(array.copy(), requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda t: tuple(_pieces(fn(hookgrad, t))), (x,))


@pytest.mark.parametrize("name", [n for n in NAMES if "empty" not in n and "0d" not in n])
def test_double_backward(name):
    array, fn = CALLS[name]
    double_backward(lambda L, x: _pieces(fn(L, x))[0] ** 2, array)


# (as_strided's own gradient is built from other ops than torch's: the view's too)
@pytest.mark.parametrize("name", [n for n in NAMES if not n.startswith("as_strided")])
def test_double_backward_graph(name):
    """The gradient's own history (create_graph) has torch's nodes: the views' formulas."""
    array, fn = CALLS[name]
    names = []
    for lib in (torch, hookgrad):
        x = lib.tensor(array.copy(), requires_grad=True)
        pieces = _pieces(fn(lib, x))
        weights = [lib.ones(tuple(p.shape), dtype=lib.float64, requires_grad=True)
                   for p in pieces]
        grad, = lib.autograd.grad(pieces, x, weights, create_graph=True)
        names.append(None if grad.grad_fn is None else grad.grad_fn.name())
    assert names[1] == names[0]


def test_without_grad_mode_nothing_is_recorded():
    for lib in (torch, hookgrad):
        x = lib.tensor(X.copy(), requires_grad=True)
        with lib.no_grad():
            result = lib.transpose_copy(x, 0, 1)
        assert result.grad_fn is None and not result.requires_grad


def test_detach_copy_has_no_derivative():
    outcome = []
    for lib in (torch, hookgrad):
        x = lib.tensor(X.copy(), requires_grad=True)
        result = lib.detach_copy(x.t())
        outcome.append((result.requires_grad, result.grad_fn.name(), result.stride(),
                        error_of(lambda: result.sum().backward())))
    assert outcome[1] == outcome[0]


@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "bool", "float64"])
def test_view_copy_dtype(dtype):
    results = []
    for lib in (torch, hookgrad):
        x = lib.tensor(X.copy(), requires_grad=True)
        if dtype == "float64":
            result = lib.view_copy(x, dtype=lib.float64)
        else:
            assert error_of(lambda: lib.view_copy(x.t(), getattr(lib, dtype))) == error_of(
                lambda: torch.view_copy(torch.tensor(X).t(), getattr(torch, dtype)))
            result = lib.view_copy(x[:, 1:], getattr(lib, dtype))
        results.append((np.array(result.detach().numpy(), copy=True), result.requires_grad,
                        result.grad_fn, result.stride(), str(result.dtype)))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    assert results[1][1:] == results[0][1:]


# ---------------------------------------------------------------------------------------------
# out=
# ---------------------------------------------------------------------------------------------
SINGLE = [n for n in NAMES if not n.startswith(("split", "unbind", "narrow"))]


def _run_with_out(lib, name, out_shape, out_dtype, input_grad=False, out_grad=False,
                  no_grad=False):
    array, fn = CALLS[name]
    x = lib.tensor(array.copy(), requires_grad=input_grad)
    out = lib.zeros(out_shape, dtype=getattr(lib, out_dtype), requires_grad=out_grad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if no_grad:
                with lib.no_grad():
                    returned = _call_with_out(lib, name, fn, x, out)
            else:
                returned = _call_with_out(lib, name, fn, x, out)
        except Exception as error:  # noqa: BLE001  (the type and message are compared)
            return type(error).__name__, str(error)
    node = out.grad_fn
    outcome = error_of(lambda: out.sum().backward()) if node is not None else None
    return (returned is out, np.array(out.detach().numpy(), copy=True).tolist(), out.stride(),
            out._version, out.requires_grad, node and node.name(), outcome,
            [str(w.message)[:60] for w in caught])


def _call_with_out(lib, name, fn, x, out):
    """``fn`` with ``out=out`` added to its call."""
    function = getattr(lib, name.split("_copy")[0] + "_copy")
    captured = {}

    class Recorder:
        def __getattr__(self, attribute):
            def call(*args, **kwargs):
                captured["args"], captured["kwargs"] = args, kwargs
                return function(*args, **kwargs)
            return call
    fn(Recorder(), x)
    return function(*captured["args"], **captured["kwargs"], out=out)


@pytest.mark.parametrize("name", SINGLE)
def test_out_of_the_right_shape_and_dtype(name):
    array, fn = CALLS[name]
    shape = tuple(fn(torch, torch.tensor(array)).shape)
    assert _run_with_out(hookgrad, name, shape, "float64") == \
        _run_with_out(torch, name, shape, "float64")


@pytest.mark.parametrize("name", ["transpose_copy", "view_copy", "expand_copy", "t_copy_1d"])
@pytest.mark.parametrize("shape", [(0,), (2, 3), (20,)])
def test_out_resized(name, shape):
    assert _run_with_out(hookgrad, name, shape, "float64") == \
        _run_with_out(torch, name, shape, "float64")


@pytest.mark.parametrize("name", ["transpose_copy", "select_copy", "alias_copy", "squeeze_copy"])
@pytest.mark.parametrize("out_dtype", ["float32", "int64"])
def test_out_of_another_dtype_refused(name, out_dtype):
    assert _run_with_out(hookgrad, name, (1,), out_dtype) == \
        _run_with_out(torch, name, (1,), out_dtype)


@pytest.mark.parametrize("name", ["transpose_copy", "diagonal_copy", "unsqueeze_copy",
                                  "narrow_copy", "view_copy"])
@pytest.mark.parametrize("flags", [(True, False, False), (False, True, False),
                                   (True, True, True), (False, True, True)])
def test_out_under_autograd(name, flags):
    """torch refuses an out that requires grad; an input that requires grad leaves out with a
    node that refuses backward (narrow_copy refuses both)."""
    array, fn = CALLS[name]
    shape = tuple(fn(torch, torch.tensor(array)).shape)
    input_grad, out_grad, no_grad = flags
    assert _run_with_out(hookgrad, name, shape, "float64", *flags) == \
        _run_with_out(torch, name, shape, "float64", input_grad, out_grad, no_grad)


def test_out_that_is_a_view_of_a_leaf():
    outcomes = []
    for lib in (torch, hookgrad):
        x = lib.tensor(X.copy(), requires_grad=True)
        base = lib.zeros(2, 4, 3, dtype=lib.float64)
        lib.transpose_copy(x, 0, 1, out=base[1])
        outcomes.append((base.detach().numpy().tolist(), base.requires_grad,
                         base.grad_fn.name(), base[1].grad_fn.name()))
    assert outcomes[1] == outcomes[0]


def _list_outs(lib, specs, requires_grad=False):
    return [lib.zeros(shape, dtype=getattr(lib, dtype),
                      requires_grad=requires_grad and dtype.startswith("float"))
            for shape, dtype in specs]


@pytest.mark.parametrize("call,specs", [
    (lambda L, x, out: L.split_copy(x, 2, out=out), [((2, 4), "float64"), ((1, 4), "float64")]),
    (lambda L, x, out: L.split_copy(x, 2, out=tuple(out)),
     [((2, 4), "float64"), ((1, 4), "float32")]),
    (lambda L, x, out: L.split_copy(x, 2, out=out), [((2, 4), "float64"), ((2, 4), "int64")]),
    (lambda L, x, out: L.split_copy(x, 2, out=out), [((2, 4), "float64"), ((4,), "float64")]),
    (lambda L, x, out: L.split_copy(x, 2, out=out), [((2, 4), "float64"), ((0,), "float64")]),
    (lambda L, x, out: L.split_copy(x, 2, out=out), [((2, 4), "float64")]),
    (lambda L, x, out: L.split_with_sizes_copy(x, [1, 2], out=out),
     [((1, 4), "float64"), ((2, 4), "float64")]),
    (lambda L, x, out: L.split_with_sizes_copy(x, [1, 2], out=out), [((1, 4), "float64")]),
    (lambda L, x, out: L.unbind_copy(x, out=out), [((4,), "float64")] * 3),
    (lambda L, x, out: L.unbind_copy(x, out=out), [((1,), "float64")] * 3),
    (lambda L, x, out: L.unbind_copy(x, out=out), [((1, 4), "float32")] * 3),
    (lambda L, x, out: L.unbind_copy(x, out=out), [((4,), "float64")] * 2),
    (lambda L, x, out: L.split_copy(x, 2, out=out[0]), [((2, 4), "float64")]),
])
@pytest.mark.parametrize("flags", [(False, False), (True, False), (False, True), (True, True)])
def test_list_out(call, specs, flags):
    outcomes = []
    for lib in (torch, hookgrad):
        x = lib.tensor(X.copy(), requires_grad=flags[0])
        outs = _list_outs(lib, specs, flags[1])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            error = error_of(lambda: outcomes.append(call(lib, x, outs)))
        # (a refused call may leave a resized out unwritten: only its shape is compared)
        values = [(tuple(o.shape), o.requires_grad, o.grad_fn,
                   None if error else np.array(o.detach().numpy(), copy=True).tolist())
                  for o in outs]
        outcomes.append((error, values, len(caught)))
    assert outcomes[len(outcomes) // 2:] == outcomes[:len(outcomes) // 2]


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda L: L.as_strided_copy(L.ones(3, 4), (2, 2), (1, 2, 3)),
    lambda L: L.as_strided_copy(L.ones(3, 4), (20, 2), (1, 2)),
    lambda L: L.as_strided_copy(L.ones(3, 4), (2, 2), (-1, 2)),
    lambda L: L.diagonal_copy(L.ones(3, 4), 0, 0, 0),
    lambda L: L.diagonal_copy(L.ones(3, 4), 0, 0, 5),
    lambda L: L.expand_copy(L.ones(3, 4), (2, 4)),
    lambda L: L.expand_copy(L.ones(3, 4), (4,)),
    lambda L: L.narrow_copy(L.ones(3, 4), 0, 2, 2),
    lambda L: L.narrow_copy(L.ones(3, 4), 0, -5, 2),
    lambda L: L.narrow_copy(L.ones(3, 4), 0, 4, 0),
    lambda L: L.narrow_copy(L.ones(3, 4), 0, 1, -1),
    lambda L: L.narrow_copy(L.ones(3, 4), 0, -2, -1),
    lambda L: L.narrow_copy(L.ones(3, 4), 2, 0, 1),
    lambda L: L.narrow_copy(L.ones(3, 4), -3, 0, 1),
    lambda L: L.narrow_copy(L.tensor(1.0), 0, 0, 1),
    lambda L: L.permute_copy(L.ones(3, 4), (0,)),
    lambda L: L.permute_copy(L.ones(3, 4), (0, 0)),
    lambda L: L.select_copy(L.ones(3, 4), 0, 3),
    lambda L: L.select_copy(L.ones(3, 4), 2, 0),
    lambda L: L.select_copy(L.tensor(1.0), 0, 0),
    lambda L: L.slice_copy(L.ones(3, 4), 0, 0, 3, 0),
    lambda L: L.slice_copy(L.ones(3, 4), 0, 0, 3, -1),
    lambda L: L.slice_copy(L.ones(3, 4), 5),
    lambda L: L.split_copy(L.ones(3, 4), -1),
    lambda L: L.split_copy(L.ones(3, 4), [1, 2]),
    lambda L: L.split_copy(L.tensor(1.0), 1),
    lambda L: L.split_with_sizes_copy(L.ones(3, 4), [1, 1]),
    lambda L: L.squeeze_copy(L.ones(3, 4), 5),
    lambda L: L.t_copy(L.ones(2, 2, 2)),
    lambda L: L.transpose_copy(L.ones(3, 4), 0, 2),
    lambda L: L.unbind_copy(L.ones(3, 4), 2),
    lambda L: L.unbind_copy(L.tensor(1.0)),
    lambda L: L.unfold_copy(L.ones(3, 4), 0, 5, 1),
    lambda L: L.unfold_copy(L.ones(3, 4), 0, 2, 0),
    lambda L: L.unfold_copy(L.ones(3, 4), 0, -1, 1),
    lambda L: L.unsqueeze_copy(L.ones(3, 4), 3),
    lambda L: L.view_copy(L.ones(3, 4), (5,)),
    lambda L: L.view_copy(L.ones(3, 4), (-1, -1)),
    lambda L: L.view_copy(L.tensor(1.0), L.int8),
])
def test_errors_match_torch(fn):
    assert_same_error(fn)
