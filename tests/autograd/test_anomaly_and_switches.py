"""Anomaly mode's flags as torch's top-level functions and ``autograd.detect_anomaly`` /
``set_detect_anomaly`` see them, the NaN-gradient error anomaly mode raises, and the engine
switches (multithreading, view replay):
values after each call, block or decorator, and argument errors, compared with torch."""
import warnings

import pytest
import torch

import hookgrad
from conftest import assert_same_error

LIBS = (torch, hookgrad)


def _anomaly(lib):
    return lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()


@pytest.fixture(autouse=True)
def restore_anomaly():
    yield
    for lib in LIBS:
        lib.set_anomaly_enabled(False, True)


def test_anomaly_defaults():
    assert _anomaly(hookgrad) == _anomaly(torch) == (False, True)


@pytest.mark.parametrize("calls", [[(True,)], [(True, False)], [(True, False), (False,)],
                                   [(False, False)], [(True,), (False, True)]])
def test_set_anomaly_enabled(calls):
    seen = []
    for lib in LIBS:
        seen.append(([lib.set_anomaly_enabled(*c) for c in calls], _anomaly(lib)))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("args", [(1,), ("x",), (True, 1), (None,)])
def test_set_anomaly_enabled_errors(args):
    assert_same_error(lambda lib: lib.set_anomaly_enabled(*args))


@pytest.mark.parametrize("before", [(False, True), (False, False), (True, False)])
@pytest.mark.parametrize("block", [
    lambda lib: lib.autograd.detect_anomaly(),
    lambda lib: lib.autograd.detect_anomaly(check_nan=False),
    lambda lib: lib.autograd.set_detect_anomaly(True, check_nan=False),
    lambda lib: lib.autograd.set_detect_anomaly(False),
])
def test_anomaly_blocks_agree_with_the_flags(before, block):
    seen = []
    for lib in LIBS:
        lib.set_anomaly_enabled(*before)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with block(lib):
                inside = _anomaly(lib)
        seen.append((inside, _anomaly(lib), [str(w.message) for w in caught]))
    assert seen[1] == seen[0]


def test_set_detect_anomaly_as_a_call():
    seen = []
    for lib in LIBS:
        lib.autograd.set_detect_anomaly(True, check_nan=False)
        first = _anomaly(lib)
        lib.autograd.set_detect_anomaly(True)
        seen.append((first, _anomaly(lib)))
    assert seen[1] == seen[0]


def test_detect_anomaly_is_no_decorator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(lambda lib: lib.autograd.detect_anomaly()(lambda: None))


# -- engine switches ---------------------------------------------------------------------------
@pytest.fixture
def restore_switches():
    yield
    for lib in LIBS:
        lib.autograd.set_multithreading_enabled(True)
        lib.autograd._force_original_view_tracking(False)


def test_multithreading_switch(restore_switches):
    seen = []
    for lib in LIBS:
        steps = [lib.autograd.is_multithreading_enabled()]
        switch = lib.autograd.set_multithreading_enabled(False)
        steps.append(lib.autograd.is_multithreading_enabled())
        with switch:
            steps.append(lib.autograd.is_multithreading_enabled())
        steps.append(lib.autograd.is_multithreading_enabled())
        lib.autograd.set_multithreading_enabled(False)
        with lib.autograd.set_multithreading_enabled(True):
            steps.append(lib.autograd.is_multithreading_enabled())
        steps.append(lib.autograd.is_multithreading_enabled())

        @lib.autograd.set_multithreading_enabled(True)
        def probe():
            return lib.autograd.is_multithreading_enabled()

        steps += [lib.autograd.is_multithreading_enabled(), probe(),
                  lib.autograd.is_multithreading_enabled()]
        seen.append(steps)
    assert seen[1] == seen[0]


def test_view_replay_switch(restore_switches):
    seen = []
    for lib in LIBS:
        steps = [lib.autograd.is_view_replay_enabled()]
        with lib.autograd._force_original_view_tracking(True):
            steps.append(lib.autograd.is_view_replay_enabled())
        steps.append(lib.autograd.is_view_replay_enabled())

        @lib.autograd._force_original_view_tracking(True)
        def probe():
            return lib.autograd.is_view_replay_enabled()

        steps += [probe(), lib.autograd.is_view_replay_enabled()]
        seen.append(steps)
    assert seen[1] == seen[0]


@pytest.mark.parametrize("call", [
    lambda lib: lib.autograd.set_multithreading_enabled(1),
    lambda lib: lib.autograd._force_original_view_tracking("yes"),
    lambda lib: lib.autograd.variable(lib.ones(2)),
    lambda lib: lib.autograd.variable(),
])
def test_switch_errors(call, restore_switches):
    assert_same_error(call)


@pytest.mark.parametrize("fn", [lambda lib, x: (x.sqrt() * 0).sum(),
                                lambda lib, x: (x / x).sum(),
                                lambda lib, x: (x * 2).sum()])
@pytest.mark.parametrize("mode", ["detect", "detect_no_nan", "set", "off"])
def test_nan_gradients_raise_in_anomaly_mode(fn, mode):
    outcomes = []
    for lib in LIBS:
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            block = {"detect": lambda: lib.autograd.detect_anomaly(),
                     "detect_no_nan": lambda: lib.autograd.detect_anomaly(check_nan=False),
                     "set": lambda: lib.autograd.set_detect_anomaly(True),
                     "off": lambda: lib.autograd.set_detect_anomaly(False)}[mode]()
            with block:
                try:
                    lib.autograd.grad(fn(lib, x), x)
                    outcomes.append(None)
                except RuntimeError as error:
                    outcomes.append(str(error))
    assert outcomes[1] == outcomes[0]


def test_nan_check_also_runs_on_hooked_nodes():
    outcomes = []
    for lib in LIBS:
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        y = x.sqrt()
        y.register_hook(lambda g: g * 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                with pytest.raises(RuntimeError) as info:
                    y.sum().backward()
        outcomes.append(str(info.value))
    assert outcomes[1] == outcomes[0]
