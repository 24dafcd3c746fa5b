"""Process-wide switches (deterministic algorithms, float32 matmul precision, inter-op threads,
warn-always, flush-denormal): the same values, defaults and errors as torch, each test putting
back what it changed in both libraries."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error

LIBS = (torch, hookgrad)


@pytest.fixture
def restore_deterministic():
    yield
    for lib in LIBS:
        lib.use_deterministic_algorithms(False)


def _deterministic_state(lib):
    return (lib.are_deterministic_algorithms_enabled(),
            lib.is_deterministic_algorithms_warn_only_enabled(),
            lib.get_deterministic_debug_mode())


def test_deterministic_defaults_match():
    assert _deterministic_state(hookgrad) == _deterministic_state(torch) == (False, False, 0)


@pytest.mark.parametrize("calls", [
    [(True, {})], [(True, {"warn_only": True})], [(False, {"warn_only": True})],
    [(True, {"warn_only": True}), (True, {})], [(True, {}), (False, {})],
])
def test_use_deterministic_algorithms_states(calls, restore_deterministic):
    seen = []
    for lib in LIBS:
        results = [lib.use_deterministic_algorithms(mode, **kwargs) for mode, kwargs in calls]
        seen.append((results, _deterministic_state(lib)))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("mode", [0, 1, 2, "default", "warn", "error", True, False])
def test_set_deterministic_debug_mode(mode, restore_deterministic):
    seen = []
    for lib in LIBS:
        seen.append((lib.set_deterministic_debug_mode(mode), _deterministic_state(lib)))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("mode", [3, -1, "x", "Warn", 1.0, None])
def test_set_deterministic_debug_mode_errors(mode, restore_deterministic):
    assert_same_error(lambda lib: lib.set_deterministic_debug_mode(mode))


@pytest.mark.parametrize("call", [
    lambda lib: lib.use_deterministic_algorithms(1),
    lambda lib: lib.use_deterministic_algorithms("x"),
    lambda lib: lib.use_deterministic_algorithms(True, warn_only=1),
    lambda lib: lib.use_deterministic_algorithms(True, True),
])
def test_use_deterministic_algorithms_errors(call, restore_deterministic):
    assert_same_error(call)


@pytest.fixture
def restore_precision():
    yield
    for lib in LIBS:
        lib.set_float32_matmul_precision("highest")


@pytest.mark.parametrize("values", [["high"], ["medium"], ["high", "highest"], ["medium", "x"],
                                    ["HIGH"]])
def test_float32_matmul_precision(values, restore_precision):
    seen = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = [lib.set_float32_matmul_precision(v) for v in values]
        seen.append((lib.get_float32_matmul_precision(), results, len(caught)))
    assert seen[1] == seen[0]


def test_float32_matmul_precision_default():
    assert hookgrad.get_float32_matmul_precision() == torch.get_float32_matmul_precision()


@pytest.mark.parametrize("value", [1, None, 1.5])
def test_float32_matmul_precision_refuses_non_strings(value):
    assert_same_error(lambda lib: lib.set_float32_matmul_precision(value))


def test_interop_threads_default_and_errors():
    assert hookgrad.get_num_interop_threads() == torch.get_num_interop_threads()
    for value in (0, -1, "a", 2.0):
        assert_same_error(lambda lib: lib.set_num_interop_threads(value))
    assert hookgrad.init_num_threads() is torch.init_num_threads() is None


def test_interop_threads_set_once(monkeypatch):
    from hookgrad import _flags
    monkeypatch.setattr(_flags, "_interop", {"threads": None, "set": False})
    hookgrad.set_num_interop_threads(3)
    assert hookgrad.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        hookgrad.set_num_interop_threads(3)


@pytest.fixture
def restore_warn_always():
    yield
    for lib in LIBS:
        lib.set_warn_always(False)


def test_warn_always_flag(restore_warn_always):
    assert hookgrad.is_warn_always_enabled() is torch.is_warn_always_enabled() is False
    for lib in LIBS:
        lib.set_warn_always(True)
    assert hookgrad.is_warn_always_enabled() is torch.is_warn_always_enabled() is True
    assert_same_error(lambda lib: lib.set_warn_always(1))


def test_warn_always_repeats_once_only_warnings(restore_warn_always):
    counts = []
    for lib in LIBS:
        lib.set_warn_always(True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):  # a torch.frombuffer warning given once per process by default
                lib.frombuffer(b"\x00\x00\x00\x00", dtype=lib.int32)
        counts.append(len(caught))
    assert counts[1] == counts[0] == 2


def test_flush_denormal_returns_and_flushes():
    try:
        results = [lib.set_flush_denormal(True) for lib in LIBS]
        assert results[1] == results[0]
        if results[1]:  # NumPy's arithmetic in this thread now reads a denormal as zero
            tiny = np.array([1e-310])
            assert (tiny * 1.0)[0] == 0.0
            assert (hookgrad.tensor([1e-310], dtype=hookgrad.float64) * 1).item() == 0.0
    finally:
        results = [lib.set_flush_denormal(False) for lib in LIBS]
    assert results[1] == results[0]
    assert (np.array([1e-310]) * 1.0)[0] != 0.0
    assert_same_error(lambda lib: lib.set_flush_denormal(1))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int8",
                                   "uint8", "bool"])
@pytest.mark.parametrize("make", [
    lambda lib, dtype: lib.empty(2, 3, dtype=dtype),
    lambda lib, dtype: lib.empty_like(lib.ones(3, 2, dtype=dtype).t()),
    lambda lib, dtype: lib.empty_strided((2, 2), (1, 3), dtype=dtype),
    lambda lib, dtype: lib.empty_permuted((2, 3), (1, 0), dtype=dtype),
    lambda lib, dtype: lib.ones(1, dtype=dtype).new_empty(3),
])
def test_deterministic_mode_fills_uninitialised_memory(make, dtype, restore_deterministic):
    made = []
    for lib in LIBS:
        lib.use_deterministic_algorithms(True)
        made.append(make(lib, getattr(lib, dtype)))
    np.testing.assert_array_equal(made[1].numpy(), made[0].numpy())
    assert made[1].stride() == made[0].stride()


def test_fill_uninitialized_memory_switch(restore_deterministic):
    import hookgrad.utils.deterministic  # noqa: F401
    import torch.utils.deterministic  # noqa: F401
    try:
        for lib in LIBS:
            assert lib.utils.deterministic.fill_uninitialized_memory is True
            lib.utils.deterministic.fill_uninitialized_memory = False
            lib.use_deterministic_algorithms(True)
        assert hookgrad.empty(2).tolist() == [0.0, 0.0]
        assert_same_error(
            lambda lib: setattr(lib.utils.deterministic, "fill_uninitialized_memory", 1))
    finally:
        for lib in LIBS:
            lib.utils.deterministic.fill_uninitialized_memory = True
