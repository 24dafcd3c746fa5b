"""Layer norm on inputs large enough for the one-pass forward kernel and backward's batched
sums (and on small ones, which take the two-pass kernel), against torch: float32 and float64,
with and without the affine parameters, one and two normalized dims, rows of one element,
non-contiguous inputs, rows with a large mean, constant, inf and nan rows, a weight with inf,
gradients of all three inputs, and double backward."""
import numpy as np
import pytest
import torch

import hookgrad
from hookgrad.nn.ops import normalization

TOL = {np.float32: 3e-5, np.float64: 1e-11}
SHAPES = {"rows of 128": ((16, 32, 128), (128,)), "two dims": ((16, 32, 8, 16), (8, 16)),
          "long rows": ((33, 1200), (1200,)), "rows of one": ((40000, 1), (1,))}


def _inputs(shape, normalized, dtype, seed=0, mean=1.0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3 + mean).astype(dtype)
    weight, bias = (rng.standard_normal(normalized).astype(dtype) for _ in range(2))
    grad = rng.standard_normal(shape).astype(dtype)
    return x, weight, bias, grad


def _run(lib, x, normalized, weight, bias, grad, transpose=False, create_graph=False):
    """(output, the mean and rstd its node saved, gradients, the leaves)."""
    leaf = lib.tensor(x, requires_grad=True)
    source = leaf.transpose(0, 1) if transpose else leaf
    params = [None if p is None else lib.tensor(p, requires_grad=True) for p in (weight, bias)]
    out = lib.nn.functional.layer_norm(source, normalized, *params, eps=1e-5)
    mean, rstd = out.grad_fn._saved_result1, out.grad_fn._saved_result2
    wanted = [leaf] + [p for p in params if p is not None]
    grad = lib.tensor(grad).transpose(0, 1) if transpose else lib.tensor(grad)
    grads = lib.autograd.grad(out, wanted, grad, create_graph=create_graph)
    return out, (mean, rstd), grads, wanted


def _rows_of_one_scale(x, grad):
    """One element a row: x_hat is 0, and so are the input's and the weight's gradients, up to
    the rounding of sums of terms of ~|g x| / sqrt(eps) each (torch's are not exactly 0)."""
    return float(np.abs(grad * x).sum()) / 1e-5 ** 0.5


def _compare(x, normalized, weight, bias, grad, dtype, transpose=False, tol=None,
             equal_nan=False, cancelled=1.0, small=False):
    # the kernels under test: the one-pass kernel, or the small inputs' two-pass one
    assert (x.size < normalization._ONE_PASS_MIN) == small
    tol = TOL[dtype] if tol is None else tol
    expected, ours = (_run(lib, x, normalized, weight, bias, grad, transpose)
                      for lib in (torch, hookgrad))
    pairs = [(expected[0], ours[0])] + list(zip(expected[1], ours[1])) + list(
        zip(expected[2], ours[2]))
    for index, (t, h) in enumerate(pairs):
        assert tuple(h.shape) == tuple(t.shape) and h.stride() == t.stride()
        assert h.dtype == ours[0].dtype
        t, h = t.detach().numpy(), h.detach().numpy()
        scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isinf(t), 0, t)), initial=0)))
        if index == 3 or (index == 4 and weight is not None):  # input's, weight's gradients
            scale = max(scale, cancelled)
        np.testing.assert_allclose(h, t, rtol=tol, atol=tol * scale, equal_nan=equal_nan)


@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(SHAPES))
def test_values_statistics_and_gradients_match_torch(case, dtype, affine):
    shape, normalized = SHAPES[case]
    x, weight, bias, grad = _inputs(shape, normalized, dtype)
    weight = weight if affine in ("both", "weight") else None
    bias = bias if affine in ("both", "bias") else None
    cancelled = _rows_of_one_scale(x, grad) if case == "rows of one" else 1.0
    _compare(x, normalized, weight, bias, grad, dtype, cancelled=cancelled)


SMALL = {"3-d": ((3, 5, 8), (8,)), "two dims": ((3, 5, 8), (5, 8)), "rows of one": ((7, 1), (1,)),
         "one row": ((40,), (40,))}


@pytest.mark.parametrize("affine", ["both", "weight", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(SMALL))
def test_small_inputs_take_the_two_pass_kernel_and_match_torch(case, dtype, affine):
    shape, normalized = SMALL[case]
    x, weight, bias, grad = _inputs(shape, normalized, dtype)
    if len(shape) > 1 and shape[-1] > 1:
        x[0, ..., 1] = np.nan
    weight = None if affine == "none" else weight
    bias = bias if affine == "both" else None
    cancelled = _rows_of_one_scale(x, grad) if case == "rows of one" else 1.0
    _compare(x, normalized, weight, bias, grad, dtype, equal_nan=True, cancelled=cancelled,
             small=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_transposed_input_misses_the_row_kernels_and_matches_torch(dtype):
    x, weight, bias, grad = _inputs((64, 32, 128), (128,), dtype)
    _compare(x, (128,), weight, bias, grad, dtype, transpose=True)


FIRST_ROW = ["first row far", "first row near"]  # all rows shifted at once, or those found


@pytest.mark.parametrize("first", FIRST_ROW)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_with_a_large_mean_are_as_accurate_as_torchs(dtype, first):
    """x = 1e4 + noise, beside ordinary rows: mean(x^2) - mean^2 would lose every bit of
    float32's variance there, so those rows take x - mean; float32 stays as close to the
    float64 result as torch's float32 does."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 32, 128))
    x[(0 if first == "first row far" else 1)::3] += 1e4
    x[1, 2] = x[1, 2] * 0.01 + 50
    weight, bias = rng.standard_normal(128), rng.standard_normal(128)
    grad = rng.standard_normal(x.shape)
    exact = _run(torch, x, (128,), weight, bias, grad)
    for lib_name, lib in (("torch", torch), ("hookgrad", hookgrad)):
        got = _run(lib, *(a.astype(dtype) for a in (x,)), (128,),
                   *(a.astype(dtype) for a in (weight, bias, grad)))
        pairs = [(exact[0], got[0])] + list(zip(exact[1], got[1])) + list(zip(exact[2], got[2]))
        errors = [float(np.abs(h.detach().numpy() - e.detach().numpy()).max()
                        / np.abs(e.detach().numpy()).max()) for e, h in pairs]
        if dtype == np.float64:  # the float64 reference is torch's own float64
            bounds = [1e-11] * len(errors)
        elif lib_name == "torch":
            bounds = [3 * err for err in errors]
        else:
            assert all(err <= bound for err, bound in zip(errors, bounds)), (errors, bounds)


@pytest.mark.parametrize("first", FIRST_ROW)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_constant_inf_and_nan_rows(dtype, first):
    x, weight, bias, grad = _inputs((16, 32, 128), (128,), dtype)
    at = 0 if first == "first row far" else 3
    x[at, 0] = 7.0
    x[at, 1] = 0.0  # constant rows: result == bias exactly, as torch's
    x[1, 0, 5] = np.inf
    x[1, 1, 6] = -np.inf
    x[1, 2, 7] = np.nan
    huge = 3e19 if dtype == np.float32 else 1e300
    x[2, 0] = huge  # x^2 overflows: torch's variance is nan then, even where x - mean is 0
    x[2, 0, ::2] *= -1
    x[2, 1] = huge / 2 * (1 + x[2, 1] / 1e3)  # x^2 does not overflow
    _compare(x, (128,), weight, bias, grad, dtype, equal_nan=True)
    # a large constant row too (its input gradient is left out: torch's float32 loses ~8 bits
    # to cancellation there, where x - mean is exact)
    x[at, 2] = 5e3
    out = hookgrad.nn.functional.layer_norm(hookgrad.tensor(x), (128,), hookgrad.tensor(weight),
                                            hookgrad.tensor(bias))
    np.testing.assert_array_equal(out.numpy()[at, :3], np.broadcast_to(bias, (3, 128)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_weight_with_inf_or_nan_gives_torchs_signs_and_nans(dtype):
    x, weight, bias, grad = _inputs((16, 32, 128), (128,), dtype)
    x[0, 0] = 2.0  # x_hat == 0: inf * 0
    weight[3], weight[4], weight[5] = np.inf, -np.inf, np.nan
    expected, ours = (lib.nn.functional.layer_norm(lib.tensor(x), (128,), lib.tensor(weight),
                                                   lib.tensor(bias)) for lib in (torch, hookgrad))
    np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=TOL[dtype],
                               atol=TOL[dtype] * 10, equal_nan=True)


@pytest.mark.parametrize("needs", [(True, False, False), (False, True, False),
                                   (False, False, True), (False, True, True),
                                   (True, True, False)])
def test_only_the_wanted_gradients(needs):
    x, weight, bias, grad = _inputs((16, 32, 128), (128,), np.float64)
    results = []
    for lib in (torch, hookgrad):
        tensors = [lib.tensor(a, requires_grad=need)
                   for a, need in zip((x, weight, bias), needs)]
        out = lib.nn.functional.layer_norm(tensors[0], (128,), *tensors[1:])
        wanted = [t for t in tensors if t.requires_grad]
        results.append([g.numpy() for g in lib.autograd.grad(out, wanted, lib.tensor(grad))])
    for t, h in zip(*results):
        np.testing.assert_allclose(h, t, rtol=1e-11, atol=1e-11)


def test_double_backward_matches_torch():
    x, weight, bias, grad = _inputs((16, 32, 64), (64,), np.float64)
    results = []
    for lib in (torch, hookgrad):
        _, _, grads, wanted = _run(lib, x, (64,), weight, bias, grad, create_graph=True)
        second = lib.autograd.grad(sum(g.square().sum() for g in grads), wanted[:2])
        results.append([g.numpy() for g in second])
    for t, h in zip(*results):
        np.testing.assert_allclose(h, t, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("rows", [4, 40000])  # the two-pass kernel and the one-pass kernel
def test_rows_with_inf_or_nan_give_torchs_nan_statistics_without_warnings(rows):
    import warnings

    x = np.random.default_rng(0).standard_normal((rows, 4)).astype(np.float32)
    x[0] = [1.0, np.inf, 2.0, 3.0]
    x[2] = [np.nan, 1.0, 2.0, 3.0]
    x[3] = [-np.inf, np.inf, 1.0, 2.0]
    results = []
    for lib in (hookgrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # torch warns of nothing here, nor may we
            out, mean, rstd = lib.native_layer_norm(lib.tensor(x), [4], None, None, 1e-5)
            t = lib.tensor(x, requires_grad=True)
            saved = lib.nn.functional.layer_norm(t, [4]).grad_fn._saved_result1
        results.append([a.detach().numpy()[:8] for a in (out, mean, rstd, saved)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=1e-6, equal_nan=True)
