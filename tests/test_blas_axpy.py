"""``_blas.axpy`` (``y += alpha * x`` in place, BLAS's axpy for large dense float arrays) against
torch's ``y.add_(x, alpha=alpha)``, on both of its paths, and SGD's update through it against
torch's SGD on parameters large enough to take BLAS's path."""
from __future__ import annotations

import time

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad import _blas, _parallel

TOL = {np.float32: 2e-7, np.float64: 1e-15}


def _pair(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype))


def _torch_axpy(alpha, x, y):
    result = torch.from_numpy(y.copy())
    result.add_(torch.from_numpy(x.copy()), alpha=alpha)
    return result.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 96), (5,), (3, 40, 41)], ids=str)
def test_axpy_is_torchs_add_with_alpha_in_place(dtype, shape):
    x, y = _pair(shape, dtype)
    expected = _torch_axpy(-0.0123, x, y)
    x_before, target = x.copy(), y
    _blas.axpy(-0.0123, x, y)
    assert y is target and y.dtype == dtype
    np.testing.assert_allclose(y, expected, rtol=TOL[dtype], atol=TOL[dtype])
    np.testing.assert_array_equal(x, x_before)


def test_large_float32_takes_blas_and_rounds_once_like_torch():
    if not _blas._axpy_table():
        pytest.skip("no OpenBLAS axpy found (threadpoolctl missing or another BLAS)")
    x, y = _pair((300, 200), np.float32)
    expected = _torch_axpy(0.37, x, y)
    terms = np.maximum(np.abs(y), np.abs(np.float32(0.37) * x))
    _blas.axpy(0.37, x, y)
    # one rounding per element, as torch's kernel (a fused multiply-add where the CPU has one):
    # BLAS and torch differ in hardly any element (NumPy's two roundings: 20 %), and
    # never by more than a unit in the last place of the larger term
    assert np.mean(y != expected) < 0.01
    assert np.all(np.abs(y - expected) <= np.spacing(terms))


@pytest.mark.parametrize("case", ["transposed", "mixed dtypes", "broadcast x", "overlap"])
def test_layouts_blas_cannot_take_give_numpys_answer(case):
    x, y = _pair((80, 60), np.float32)
    if case == "transposed":
        x, y = x.T.copy().T, y.T.copy().T  # column-major: not C-contiguous
    elif case == "mixed dtypes":
        x = x.astype(np.float64)
    elif case == "broadcast x":
        x = x[0]
    else:
        x = y[:, ::-1]
    expected = y.copy()
    expected += np.float32(0.5) * x  # NumPy's in-place answer (cast back to y's dtype)
    _blas.axpy(0.5, x, y)
    np.testing.assert_array_equal(y, expected)


def test_zero_alpha_keeps_torchs_nan_from_inf():
    x, y = _pair((64, 64), np.float32)
    x[3, 4] = np.inf
    expected = _torch_axpy(0.0, x, y)
    _blas.axpy(0.0, x, y)
    assert np.isnan(expected[3, 4]) and np.isnan(y[3, 4])
    np.testing.assert_array_equal(np.isnan(y), np.isnan(expected))


@pytest.mark.parametrize("options", [dict(), dict(momentum=0.9, dampening=0.3),
                                     dict(momentum=0.8, nesterov=True, weight_decay=0.01),
                                     dict(weight_decay=0.1, maximize=True)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sgd_on_large_parameters_matches_torch(options, dtype):
    start, _ = _pair((96, 64), dtype, seed=1)
    params = {"hookgrad": hookgrad.nn.Parameter(hookgrad.tensor(start)),
              "torch": torch.nn.Parameter(torch.tensor(start))}
    optimizers = {"hookgrad": hookgrad.optim.SGD([params["hookgrad"]], lr=0.05, **options),
                  "torch": torch.optim.SGD([params["torch"]], lr=0.05, **options)}
    for step in range(3):
        grad, _ = _pair((96, 64), dtype, seed=10 + step)
        params["hookgrad"].grad = hookgrad.tensor(grad)
        params["torch"].grad = torch.tensor(grad)
        for optimizer in optimizers.values():
            optimizer.step()
        np.testing.assert_allclose(params["hookgrad"].detach().numpy(),
                                   params["torch"].detach().numpy(), rtol=TOL[dtype],
                                   atol=TOL[dtype])
    assert params["hookgrad"]._version == params["torch"]._version


@pytest.mark.parametrize("pool_at_work, count_inside", [(True, 1), (False, 2)])
def test_long_axpy_with_blas_threaded_runs_lowered_only_while_the_pool_works(
        monkeypatch, pool_at_work, count_inside):
    # while hookgrad's pool is at work BLAS runs the update on one thread and gives the count
    # back; otherwise nothing wants the cores BLAS's workers hold and it keeps its threads
    if not _blas._axpy_table() or not _blas.available():
        pytest.skip("no OpenBLAS axpy found, or its thread count cannot be set here")
    last = time.monotonic() - (0 if pool_at_work else 2 * _parallel.RECENT_SPLIT)
    monkeypatch.setattr(_parallel, "_last_split", last)
    controller = _blas._blas_controllers()[0]
    before = controller.get_num_threads()
    seen = []
    function = _blas._axpy_functions[np.dtype(np.float32)]

    def spy(*args):
        seen.append(controller.get_num_threads())
        function(*args)

    x, y = _pair((200, 100), np.float32)
    expected = _torch_axpy(-0.5, x, y)
    controller.set_num_threads(2)
    _blas._axpy_functions[np.dtype(np.float32)] = spy
    try:
        _blas.axpy(-0.5, x, y)
        assert controller.get_num_threads() == 2
    finally:
        _blas._axpy_functions[np.dtype(np.float32)] = function
        controller.set_num_threads(before)
    assert seen == [count_inside]
    np.testing.assert_allclose(y, expected, rtol=TOL[np.float32], atol=TOL[np.float32])
