"""Layer norm's first-order backward on arrays (no graph of the gradient wanted) against torch:
float32 and float64, with and without the affine parameters, several normalized dims, inputs
that need no gradient, layouts that take the tensor formulas, and double backward (the tensor
formulas) unchanged."""
import numpy as np
import pytest
import torch

import hookgrad

SHAPES = {"2-d": ((12, 10), (10,)), "3-d over one dim": ((3, 5, 8), (8,)),
          "3-d over two dims": ((3, 5, 8), (5, 8)), "all dims": ((4, 6), (4, 6))}


def _run(lib, shape, normalized, dtype, affine=True, needs=(True, True, True),
         transposed_grad=False, create_graph=False):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(shape).astype(dtype) * 3 + 1, requires_grad=needs[0])
    weight = bias = None
    if affine:
        weight = lib.tensor(rng.standard_normal(normalized).astype(dtype), requires_grad=needs[1])
        bias = lib.tensor(rng.standard_normal(normalized).astype(dtype), requires_grad=needs[2])
    out = lib.nn.functional.layer_norm(x, normalized, weight, bias, eps=1e-5)
    grad_output = lib.tensor(rng.standard_normal(shape).astype(dtype))
    if transposed_grad and len(shape) == 2:
        grad_output = grad_output.t().contiguous().t()
    wanted = [t for t in (x, weight, bias) if t is not None and t.requires_grad]
    grads = lib.autograd.grad(out, wanted, grad_output, create_graph=create_graph)
    return out, grads, wanted


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(SHAPES))
def test_first_order_gradients_match_torch(case, dtype, affine):
    shape, normalized = SHAPES[case]
    (out_a, grads_a, _), (out_b, grads_b, _) = (
        _run(lib, shape, normalized, dtype, affine) for lib in (torch, hookgrad))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out_b.detach().numpy(), out_a.detach().numpy(), rtol=tol, atol=tol)
    for ga, gb in zip(grads_a, grads_b):
        assert tuple(gb.shape) == tuple(ga.shape) and gb.stride() == ga.stride()
        assert gb.dtype == out_b.dtype
        np.testing.assert_allclose(gb.numpy(), ga.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("needs", [(True, False, False), (False, True, False),
                                   (False, False, True), (False, True, True)])
def test_only_the_wanted_gradients(needs):
    (_, grads_a, _), (_, grads_b, _) = (_run(lib, (6, 7), (7,), np.float64, needs=needs)
                                        for lib in (torch, hookgrad))
    assert len(grads_b) == len(grads_a)
    for ga, gb in zip(grads_a, grads_b):
        np.testing.assert_allclose(gb.numpy(), ga.numpy(), rtol=1e-12, atol=1e-12)


def test_a_column_major_gradient_takes_the_tensor_formulas():
    (_, grads_a, _), (_, grads_b, _) = (_run(lib, (9, 6), (6,), np.float64,
                                             transposed_grad=True)
                                        for lib in (torch, hookgrad))
    for ga, gb in zip(grads_a, grads_b):
        np.testing.assert_allclose(gb.numpy(), ga.numpy(), rtol=1e-12, atol=1e-12)


def test_double_backward_matches_torch():
    results = []
    for lib in (torch, hookgrad):
        _, grads, wanted = _run(lib, (5, 6), (6,), np.float64, create_graph=True)
        # the bias's gradient does not depend on any input: only x and the weight
        second = lib.autograd.grad(sum(g.square().sum() for g in grads), wanted[:2])
        results.append([g.numpy() for g in second])
    for ga, gb in zip(*results):
        np.testing.assert_allclose(gb, ga, rtol=1e-10, atol=1e-12)


def _saved_statistics_and_grads(lib, x, normalized, weight, bias, dtype, transpose):
    leaf = lib.tensor(x.astype(dtype), requires_grad=True)
    x = leaf.transpose(0, 1) if transpose else leaf
    params = [None if p is None else lib.tensor(p.astype(dtype), requires_grad=True)
              for p in (weight, bias)]
    out = lib.nn.functional.layer_norm(x, normalized, *params, eps=1e-5)
    grad_output = lib.tensor(np.random.default_rng(5).standard_normal(tuple(out.shape))
                             .astype(dtype))
    wanted = [t for t in [leaf] + params if t is not None]
    stats = (out.grad_fn._saved_result1, out.grad_fn._saved_result2)
    input_contiguous = out.grad_fn._saved_input.is_contiguous()
    grads = lib.autograd.grad(out, wanted, grad_output)
    return out, stats, grads, input_contiguous


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["row-major", "transposed input", "weight only",
                                    "bias only", "batched block", "one row"])
def test_row_kernels_and_the_paths_that_miss_them_match_torch(layout, dtype):
    """The row-wise kernels (C-ordered input) against torch on a transformer-sized input, and
    the inputs that take the general formulas (a transposed input) or miss a parameter."""
    rng = np.random.default_rng(2)
    shape, normalized = {"batched block": ((4, 3, 5, 7), (5, 7)),
                         "one row": ((33,), (33,))}.get(layout, ((16, 64, 128), (128,)))
    x = rng.standard_normal(shape) * 3 + 1
    weight = None if layout == "bias only" else rng.standard_normal(normalized)
    bias = None if layout == "weight only" else rng.standard_normal(normalized)
    transpose = layout == "transposed input"
    results = []
    for lib in (torch, hookgrad):
        out, stats, grads, contiguous = _saved_statistics_and_grads(
            lib, x, normalized, weight, bias, dtype, transpose)
        assert contiguous == (not transpose)
        results.append((out, stats, grads))
    tol = 2e-5 if dtype == np.float32 else 1e-12
    (out_t, stats_t, grads_t), (out_h, stats_h, grads_h) = results
    for h, t in zip((out_h,) + stats_h + grads_h, (out_t,) + stats_t + grads_t):
        assert tuple(h.shape) == tuple(t.shape) and h.stride() == t.stride()
        assert h.dtype == out_h.dtype
        np.testing.assert_allclose(h.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def _grads_against_torch(x, normalized, dtype, affine=True, seed=3):
    """(torch's, hookgrad's) first-order gradients of x, weight and bias for a C-ordered x."""
    rng = np.random.default_rng(seed)
    arrays = [x.astype(dtype)]
    if affine:
        arrays += [rng.standard_normal(normalized).astype(dtype) for _ in range(2)]
    grad_output = rng.standard_normal(x.shape).astype(dtype)
    results = []
    for lib in (torch, hookgrad):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.nn.functional.layer_norm(leaves[0], normalized, *leaves[1:], eps=1e-5)
        grads = lib.autograd.grad(out, leaves, lib.tensor(grad_output))
        results.append([g.numpy() for g in grads])
    return results


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_with_a_large_mean_are_centered_first(dtype):
    """Rows whose mean is thousands of spreads away from zero beside ordinary rows: x - mean is
    taken before the sums, so float32 stays as close to the float64 gradients as torch's
    float32 (summing x * grad first lost ~2 more bits on the weight's gradient here)."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 5, 16))
    x[::2] = x[::2] * 0.01 + 40
    exact, _ = _grads_against_torch(x, (5, 16), np.float64)
    expected, ours = _grads_against_torch(x, (5, 16), dtype)
    tol = 1.5e-4 if dtype == np.float32 else 1e-9
    for e, t, o in zip(exact, expected, ours):
        np.testing.assert_allclose(t, e, rtol=0, atol=2 * tol * np.abs(e).max())  # torch's
        np.testing.assert_allclose(o, e, rtol=0, atol=tol * np.abs(e).max())


@pytest.mark.parametrize("case", ["row blocks", "rows longer than a block"])
def test_large_inputs_whose_sums_run_in_blocks(case):
    """Sums over more elements than one BLAS block (cut into row blocks, or einsum's loop for
    very long rows) give torch's gradients."""
    shape = {"row blocks": (2, 300, 600), "rows longer than a block": (2, 140000)}[case]
    x = np.random.default_rng(6).standard_normal(shape) * 2 + 0.5
    expected, ours = _grads_against_torch(x, shape[-1:], np.float64)
    for e, o in zip(expected, ours):
        np.testing.assert_allclose(o, e, rtol=1e-10, atol=1e-10)


def test_a_nan_row_gives_nan_gradients_there_only():
    x = np.random.default_rng(7).standard_normal((4, 9))
    x[1, 3] = np.nan
    expected, ours = _grads_against_torch(x, (9,), np.float64)
    np.testing.assert_allclose(ours[0], expected[0], rtol=1e-12, atol=1e-12, equal_nan=True)
    assert np.isnan(ours[0][1]).all() and not np.isnan(ours[0][[0, 2, 3]]).any()


def test_an_empty_batch_takes_the_tensor_formulas():
    results = []
    for lib in (torch, hookgrad):
        x = lib.zeros((0, 3, 5), requires_grad=True)
        weight, bias = lib.ones(5, requires_grad=True), lib.zeros(5, requires_grad=True)
        out = lib.nn.functional.layer_norm(x, (5,), weight, bias)
        grads = lib.autograd.grad(out, [x, weight, bias], lib.ones_like(out))
        results.append([(tuple(g.shape), g.stride(), g.numpy()) for g in grads])
    for (shape_t, stride_t, t), (shape_h, stride_h, h) in zip(*results):
        assert (shape_h, stride_h) == (shape_t, stride_t)
        np.testing.assert_array_equal(h, t)
