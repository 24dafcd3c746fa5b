"""bfloat16 as a real dtype (through ml_dtypes), checked against torch's CPU kernels."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import hookgrad

pytest.importorskip("ml_dtypes")

DTYPES = ("bfloat16", "float16", "float32", "float64", "int64", "int32", "int16", "int8",
          "uint8", "bool")


def _bits(value) -> np.ndarray:
    """A bfloat16 tensor's raw 16-bit patterns, to compare rounding bit for bit."""
    if isinstance(value, torch.Tensor):
        return value.detach().view(torch.int16).numpy().view(np.uint16)
    return np.asarray(value.detach()._data).view(np.uint16)


def _values(seed: int = 0, n: int = 257) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = (rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))).astype(np.float32)
    # halfway cases between two bfloat16 values, both parities, and specials
    ties = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8), 3.0e38, 0.0, -0.0,
                     np.inf, -np.inf, 1e-40], np.float32)
    return np.concatenate([values, ties])


def _pair(values, requires_grad=False):
    return (hookgrad.tensor(values, requires_grad=requires_grad),
            torch.tensor(values, requires_grad=requires_grad))


def test_dtype_object_matches_torch():
    assert repr(hookgrad.bfloat16) == repr(torch.bfloat16) == "torch.bfloat16"
    assert hookgrad.bfloat16.is_floating_point is torch.bfloat16.is_floating_point
    assert hookgrad.bfloat16.itemsize == torch.bfloat16.itemsize
    assert hookgrad.bfloat16.is_signed is torch.bfloat16.is_signed


@pytest.mark.parametrize("how", ["to", "method", "factory"])
def test_conversion_from_float32_rounds_to_nearest_even(how):
    values = _values()
    ours, theirs = _pair(values)
    if how == "to":
        ours, theirs = ours.to(hookgrad.bfloat16), theirs.to(torch.bfloat16)
    elif how == "method":
        ours, theirs = ours.bfloat16(), theirs.bfloat16()
    else:
        ours = hookgrad.tensor(values, dtype=hookgrad.bfloat16)
        theirs = torch.tensor(values, dtype=torch.bfloat16)
    assert ours.dtype is hookgrad.bfloat16 and theirs.dtype is torch.bfloat16
    np.testing.assert_array_equal(_bits(ours), _bits(theirs))
    assert ours.is_floating_point() and theirs.is_floating_point()


def test_nan_survives_conversion():
    ours = hookgrad.tensor([np.nan]).bfloat16().float()
    assert np.isnan(ours.numpy()).all()
    assert torch.tensor([np.nan]).bfloat16().float().isnan().all()


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "full", "arange", "linspace"])
def test_factories_take_bfloat16(factory):
    args = {"zeros": ((2, 3),), "ones": ((2, 3),), "empty": ((2, 3),), "full": ((2, 3), 1.7),
            "arange": (0, 5, 0.3), "linspace": (0, 1, 7)}[factory]
    ours = getattr(hookgrad, factory)(*args, dtype=hookgrad.bfloat16)
    theirs = getattr(torch, factory)(*args, dtype=torch.bfloat16)
    assert ours.dtype is hookgrad.bfloat16 and tuple(ours.shape) == tuple(theirs.shape)
    if factory != "empty":
        np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


def test_back_to_other_dtypes_matches_torch():
    ours, theirs = _pair(_values()[:200])
    ours, theirs = ours.bfloat16(), theirs.bfloat16()
    for name in ("float16", "float32", "float64"):
        np.testing.assert_array_equal(ours.to(getattr(hookgrad, name)).numpy(),
                                      theirs.to(getattr(torch, name)).numpy())
    small_ours, small_theirs = _pair(np.linspace(-100, 100, 41, dtype=np.float32))
    np.testing.assert_array_equal(small_ours.bfloat16().long().numpy(),
                                  small_theirs.bfloat16().long().numpy())


@pytest.mark.parametrize("a,b", list(itertools.product(DTYPES, repeat=2)))
def test_promote_types_matches_torch(a, b):
    ours = hookgrad.promote_types(getattr(hookgrad, a), getattr(hookgrad, b))
    theirs = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("other", [
    2, 2.5, True, ("tensor0", "float32"), ("tensor0", "float16"), ("tensor0", "int64"),
    ("tensor0", "float64"), ("tensor1", "float16"), ("tensor1", "float32"), ("tensor1", "int32")])
def test_result_type_of_mixed_operands_matches_torch(other):
    def operand(lib):
        if not isinstance(other, tuple):
            return other
        kind, name = other
        value = 3 if kind == "tensor0" else [3, 4]
        return lib.tensor(value, dtype=getattr(lib, name))
    ours = hookgrad.ones(2, dtype=hookgrad.bfloat16) + operand(hookgrad)
    theirs = torch.ones(2, dtype=torch.bfloat16) + operand(torch)
    assert repr(ours.dtype) == repr(theirs.dtype)
    np.testing.assert_array_equal(ours.double().numpy(), theirs.double().numpy())
    zero_ours = hookgrad.tensor(1.5, dtype=hookgrad.bfloat16) + operand(hookgrad)
    zero_theirs = torch.tensor(1.5, dtype=torch.bfloat16) + operand(torch)
    assert repr(zero_ours.dtype) == repr(zero_theirs.dtype)


ELEMENTWISE = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y, "add_number": lambda x, y: x + 1.1, "mul_number": lambda x, y: x * 3,
    "pow": lambda x, y: x.abs() ** 1.5, "exp": lambda x, y: x.exp(), "sin": lambda x, y: x.sin(),
    "tanh": lambda x, y: x.tanh(), "sigmoid": lambda x, y: x.sigmoid(),
    "sqrt_abs": lambda x, y: x.abs().sqrt(), "neg": lambda x, y: -x,
    "maximum": lambda x, y: x.maximum(y), "relu": lambda x, y: x.relu(),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_computes_in_float32_and_rounds_once(name):
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal((2, 64)).astype(np.float32) for _ in range(2))
    fn = ELEMENTWISE[name]
    ours = fn(hookgrad.tensor(x).bfloat16(), hookgrad.tensor(y).bfloat16())
    theirs = fn(torch.tensor(x).bfloat16(), torch.tensor(y).bfloat16())
    assert ours.dtype is hookgrad.bfloat16 and theirs.dtype is torch.bfloat16
    if name in ("exp", "sin", "tanh", "sigmoid", "pow"):
        # transcendental kernels differ in the last float32 bit, which may flip one rounding
        np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=2 ** -7)
    else:
        np.testing.assert_array_equal(_bits(ours), _bits(theirs))


@pytest.mark.parametrize("shape_a,shape_b", [((5, 7), (7, 3)), ((2, 4, 6), (6, 5)), ((9,), (9,))])
def test_matmul_accumulates_in_float32(shape_a, shape_b):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    ours = hookgrad.tensor(a).bfloat16() @ hookgrad.tensor(b).bfloat16()
    theirs = torch.tensor(a).bfloat16() @ torch.tensor(b).bfloat16()
    assert ours.dtype is hookgrad.bfloat16
    # the float32 sum order differs from torch's kernel: at most one bfloat16 step apart
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=2 ** -7,
                               atol=1e-6)


@pytest.mark.parametrize("reduction", ["sum", "mean", "sum_dim", "mean_dim", "max", "amin"])
def test_reductions_accumulate_in_float32(reduction):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 300)) + 10).astype(np.float32)
    call = {"sum": lambda t: t.sum(), "mean": lambda t: t.mean(), "sum_dim": lambda t: t.sum(1),
            "mean_dim": lambda t: t.mean(1), "max": lambda t: t.max(), "amin": lambda t: t.amin(1)}
    ours = call[reduction](hookgrad.tensor(x).bfloat16())
    theirs = call[reduction](torch.tensor(x).bfloat16())
    assert ours.dtype is hookgrad.bfloat16 and theirs.dtype is torch.bfloat16
    # summing 300 values near 10 in bfloat16 itself would be far off; in float32 it is one rounding
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=2 ** -7)


def test_gradients_flow_in_bfloat16():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    w = rng.standard_normal((5, 2)).astype(np.float32)
    results = []
    for lib in (hookgrad, torch):
        xt = lib.tensor(x, dtype=lib.bfloat16, requires_grad=True)
        wt = lib.tensor(w, dtype=lib.bfloat16, requires_grad=True)
        ((xt @ wt).tanh() * xt.sum(1, keepdim=True)).sum().backward()
        assert repr(xt.grad.dtype) == repr(wt.grad.dtype) == "torch.bfloat16"
        results.append((xt.grad.float().numpy(), wt.grad.float().numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=2 ** -6, atol=2e-2)


def test_elementwise_gradient_is_bit_exact():
    x = _values()[:100]
    ours, theirs = (lib.tensor(x, dtype=lib.bfloat16, requires_grad=True)
                    for lib in (hookgrad, torch))
    (ours * ours * 3).sum().backward()
    (theirs * theirs * 3).sum().backward()
    np.testing.assert_array_equal(_bits(ours.grad), _bits(theirs.grad))


@pytest.mark.parametrize("values", [[1.0, 2.5, -3.25], [1e-3, 1 / 3, 12345.0, -7e-8],
                                    [[1.0, 2.0], [3.0, 4.0]], 2.5, [np.inf, np.nan, 1.0]])
def test_repr_matches_torch(values):
    ours = hookgrad.tensor(values, dtype=hookgrad.bfloat16)
    theirs = torch.tensor(values, dtype=torch.bfloat16)
    assert repr(ours) == repr(theirs)
    grad_ours = hookgrad.tensor(values, dtype=hookgrad.bfloat16, requires_grad=True) * 2
    grad_theirs = torch.tensor(values, dtype=torch.bfloat16, requires_grad=True) * 2
    assert repr(grad_ours).split("grad_fn")[0] == repr(grad_theirs).split("grad_fn")[0]


@pytest.mark.parametrize("writer", ["torch", "hookgrad"])
def test_checkpoint_round_trips_with_torch(tmp_path, writer):
    x = _values()[:60].reshape(5, 12)
    ours, theirs = hookgrad.tensor(x).bfloat16(), torch.tensor(x).bfloat16()
    path = tmp_path / "state.pt"
    if writer == "torch":
        torch.save({"w": theirs, "view": theirs[1:, ::2]}, path)
        loaded = hookgrad.load(path)
        assert loaded["w"].dtype is hookgrad.bfloat16
        np.testing.assert_array_equal(_bits(loaded["w"]), _bits(theirs))
        np.testing.assert_array_equal(_bits(loaded["view"]), _bits(theirs[1:, ::2]))
    else:
        hookgrad.save({"w": ours, "view": ours[1:, ::2]}, path)
        loaded = torch.load(path)
        assert loaded["w"].dtype is torch.bfloat16
        np.testing.assert_array_equal(_bits(loaded["w"]), _bits(theirs))
        np.testing.assert_array_equal(_bits(loaded["view"]), _bits(theirs[1:, ::2]))


@pytest.mark.parametrize("writer", ["torch", "hookgrad"])
def test_safetensors_round_trips_with_torch(tmp_path, writer):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    from hookgrad.utils import safetensors as ours_safetensors

    x = _values()[:24].reshape(4, 6)
    ours, theirs = hookgrad.tensor(x).bfloat16(), torch.tensor(x).bfloat16()
    path = tmp_path / "state.safetensors"
    if writer == "torch":
        safetensors_torch.save_file({"w": theirs}, path)
        loaded = ours_safetensors.load_file(path)["w"]
        assert loaded.dtype is hookgrad.bfloat16
    else:
        ours_safetensors.save_file({"w": ours}, path)
        loaded = safetensors_torch.load_file(path)["w"]
        assert loaded.dtype is torch.bfloat16
    np.testing.assert_array_equal(_bits(loaded), _bits(theirs))


def test_without_ml_dtypes_the_dtype_exists_but_tensors_need_the_extra():
    import subprocess
    import sys

    script = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import hookgrad\n"
        "assert repr(hookgrad.bfloat16) == 'torch.bfloat16'\n"
        "assert (hookgrad.ones(3) * 2).sum().item() == 6.0\n"
        "for make in (lambda: hookgrad.zeros(2, dtype=hookgrad.bfloat16),\n"
        "             lambda: hookgrad.ones(2).to(hookgrad.bfloat16),\n"
        "             lambda: hookgrad.ones(2).bfloat16()):\n"
        "    try:\n"
        "        make()\n"
        "    except ImportError as error:\n"
        "        assert 'hookgrad[bfloat16]' in str(error), error\n"
        "    else:\n"
        "        raise AssertionError('no ImportError')\n"
    )
    import os
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("call", ["linear3d", "linear2d", "addmm", "einsum", "bmm"])
def test_fused_products_round_once_and_backpropagate(call):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    fns = {"linear3d": lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
           "linear2d": lambda lib, x, w, b: lib.nn.functional.linear(x[0], w, b),
           "addmm": lambda lib, x, w, b: lib.addmm(b, x[0], w.t()),
           "einsum": lambda lib, x, w, b: lib.einsum("bij,kj->bik", x, w),
           "bmm": lambda lib, x, w, b: lib.bmm(x, x.transpose(1, 2))}
    results = []
    for lib in (hookgrad, torch):
        leaves = [lib.tensor(v, dtype=lib.bfloat16, requires_grad=True) for v in (x, w, b)]
        out = fns[call](lib, *leaves)
        (out * out).sum().backward()
        assert repr(out.dtype) == "torch.bfloat16"
        results.append([out.float().detach().numpy()] + [
            leaf.grad.float().numpy() for leaf in leaves if leaf.grad is not None])
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=2 ** -7, atol=1e-6)
    for ours, theirs in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(ours, theirs, rtol=2 ** -6, atol=5e-2)


def test_a_bfloat16_model_takes_a_torch_bfloat16_state_dict_bit_for_bit():
    source = torch.nn.Linear(3, 2).to(torch.bfloat16)
    ours = hookgrad.nn.Linear(3, 2).to(hookgrad.bfloat16)
    ours.load_state_dict(source.state_dict())
    assert ours.weight.dtype is hookgrad.bfloat16
    np.testing.assert_array_equal(_bits(ours.weight), _bits(source.weight))
    np.testing.assert_array_equal(_bits(ours.bias), _bits(source.bias))


def test_module_bfloat16_casts_floating_parameters_and_buffers_as_torch():
    # the same module in both libraries: float parameters and buffers become bfloat16, the
    # integer buffer (num_batches_tracked) stays, and the values round the same way
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    ours = hookgrad.nn.Sequential(hookgrad.nn.Linear(3, 4), hookgrad.nn.BatchNorm1d(4))
    ours.load_state_dict({k: hookgrad.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    weight = ours[0].weight
    assert ours.bfloat16() is ours and ours[0].weight is weight
    theirs.bfloat16()
    mine, reference = ours.state_dict(), theirs.state_dict()
    for key in reference:
        assert str(mine[key].dtype) == str(reference[key].dtype), key
        np.testing.assert_array_equal(mine[key].float().numpy(), reference[key].float().numpy())


NAN_AWARE = {
    "sort": lambda lib, x: x.sort(-1).values,
    "sort_descending": lambda lib, x: x.sort(-1, descending=True),
    "argsort_stable": lambda lib, x: x.argsort(dim=-1, stable=True),
    "msort": lambda lib, x: lib.msort(x),
    "nansum": lambda lib, x: lib.nansum(x, -1),
    "nanmean": lambda lib, x: lib.nanmean(x),
    "nan_to_num": lambda lib, x: lib.nan_to_num(x),
    "nan_to_num_numbers": lambda lib, x: lib.nan_to_num(x, nan=1.5, posinf=7.0, neginf=-7.0),
    "unique": lambda lib, x: lib.unique(x, return_inverse=True, return_counts=True),
    "mode_values": lambda lib, x: lib.mode(x, -1).values,
    "argmax": lambda lib, x: x.argmax(-1),
    "argmin": lambda lib, x: x.argmin(),
    "amax": lambda lib, x: x.amax(0),
    "cummax": lambda lib, x: lib.cummax(x, -1),
    "topk": lambda lib, x: lib.topk(x, 2).values,
}


@pytest.mark.parametrize("name", sorted(NAN_AWARE))
def test_nan_aware_ops_treat_bfloat16_nan_as_torch_does(name):
    """NumPy sorts and tests for NaN only in its own float types: bfloat16 NaN must still sort
    last, be skipped by the nan-reductions and be replaced by nan_to_num."""
    rows = np.array([[np.nan, 1.0, -np.inf, 3.0, 0.0, np.nan],
                     [2.0, np.inf, -0.0, 2.0, np.nan, -1.5],
                     [np.nan, 1.0, -np.inf, 3.0, 0.0, np.nan]], np.float32)
    fn = NAN_AWARE[name]
    ours = fn(hookgrad, hookgrad.tensor(rows).bfloat16())
    theirs = fn(torch, torch.tensor(rows).bfloat16())
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for mine, torchs in zip(ours, theirs):
        assert repr(mine.dtype) == repr(torchs.dtype)
        np.testing.assert_array_equal(mine.double().numpy(), torchs.double().numpy())
