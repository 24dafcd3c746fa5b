"""Where hookgrad's warnings point: at the user's line, whatever route the call took.

Each case is a one-line lambda ``fn(lib)``; the warning's record must name this file and that
line, reached through ``out=``'s wrapper, the ``__torch_function__`` seam, a Tensor method or
property, a module calling functional, or a module's constructor. torch runs the same lambda:
its category and message must match, and where torch's own record names the caller we check it
names the same line. A few of torch's Python-side warnings name a line inside torch (a
stacklevel torch counted for a shorter route); hookgrad names the user's line there too, and
those cases say so (``TORCH_POINTS_INSIDE``).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import hookgrad
from hookgrad import _warnings

HERE = os.path.abspath(__file__)
TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))


def records(fn, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(lib)
    return caught


def plain_message(record) -> str:
    """The message without the C++ location torch appends to warnings from its kernels."""
    return re.sub(r" \(Triggered internally at .*\)$", "", str(record.message), flags=re.S)


CASES = {
    "arange_out_resized": lambda lib: lib.arange(5, out=lib.zeros(3)),
    "functional_size_average": lambda lib: lib.nn.functional.mse_loss(lib.ones(3), lib.ones(3), size_average=True),  # noqa: E501
    "module_size_average": lambda lib: lib.nn.MSELoss(size_average=True),
    "functional_target_size": lambda lib: lib.nn.functional.mse_loss(lib.ones(3, 1), lib.ones(3)),
    "module_target_size": lambda lib: lib.nn.L1Loss()(lib.ones(3, 1), lib.ones(3)),
    "softmax_without_dim": lambda lib: lib.nn.functional.softmax(lib.ones(3, 2)),
    "log_softmax_without_dim": lambda lib: lib.nn.functional.log_softmax(lib.ones(3, 2)),
    "softmin_without_dim": lambda lib: lib.nn.functional.softmin(lib.ones(3, 2)),
    "module_softmax_without_dim": lambda lib: lib.nn.Softmax()(lib.ones(3, 2)),
    "tensor_method_var": lambda lib: lib.ones(1).var(),
    "function_var": lambda lib: lib.var(lib.ones(1)),
    "cov": lambda lib: lib.cov(lib.ones(1)),
    "non_leaf_grad_property": lambda lib: (lib.ones(2, requires_grad=True) * 2).grad,
    "tensor_from_tensor": lambda lib: lib.tensor(lib.ones(2)),
    "uint8_index": lambda lib: lib.ones(3)[lib.tensor([1, 0, 1], dtype=lib.uint8)],
    "kl_div_mean": lambda lib: lib.nn.functional.kl_div(lib.ones(3), lib.ones(3)),
    "upsample": lambda lib: lib.nn.functional.upsample(lib.ones(1, 1, 2), scale_factor=2),
    "rnn_dropout_one_layer": lambda lib: lib.nn.RNN(2, 2, dropout=0.5),
}

# torch's record names one of torch's files for these (measured with torch 2.13).
TORCH_POINTS_INSIDE = {"functional_size_average", "module_size_average", "module_target_size",
                       "module_softmax_without_dim", "rnn_dropout_one_layer"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_warning_names_the_calling_line_as_torch(name):
    fn = CASES[name]
    ours, theirs = records(fn, hookgrad), records(fn, torch)
    assert len(ours) == len(theirs) == 1, (ours, theirs)
    ours, theirs = ours[0], theirs[0]
    assert (ours.filename, ours.lineno) == (HERE, fn.__code__.co_firstlineno)
    assert ours.category is theirs.category
    assert str(ours.message) == plain_message(theirs)
    if name in TORCH_POINTS_INSIDE:
        assert theirs.filename.startswith(TORCH_DIR)
    else:
        assert (theirs.filename, theirs.lineno) == (ours.filename, ours.lineno)


def test_factories_resize_out_silently_as_torch():
    fn = lambda lib: lib.randint(0, 5, (4,), out=lib.zeros(3, dtype=lib.int64))  # noqa: E731
    assert records(fn, hookgrad) == [] and records(fn, torch) == []


# torch warns these once per process, so its side runs in a fresh interpreter; hookgrad's
# once-state is forgotten before each test, and its record is checked here.
WARNED_ONCE_BY_TORCH = {
    "cross_through_out_wrapper": "lib.cross(lib.ones(3, 3), lib.ones(3, 3))",
    "meshgrid_without_indexing": "lib.meshgrid(lib.ones(3), lib.ones(2))",
    "tensor_T_property": "lib.ones(3, 2, 2).T",
}


def torch_locations_in_a_fresh_process(calls: dict) -> dict:
    script = textwrap.dedent("""\
        import sys, warnings
        import torch as lib
        warnings.simplefilter("always")
        found = {}
        for name, call in sorted(CALLS.items()):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                eval(compile(call, "<" + name + ">", "eval"))
            found[name] = [(r.filename, r.lineno, r.category.__name__) for r in caught]
        print(repr(found))
    """).replace("CALLS", repr(calls))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    return eval(done.stdout)


def test_warnings_torch_gives_once_name_the_calling_line():
    theirs = torch_locations_in_a_fresh_process(WARNED_ONCE_BY_TORCH)
    for name, call in WARNED_ONCE_BY_TORCH.items():
        ((filename, lineno, category),) = theirs[name]
        if name == "meshgrid_without_indexing":  # torch's Python wrapper names its own line
            assert filename.startswith(TORCH_DIR)
        else:
            assert (filename, lineno) == (f"<{name}>", 1), name
        fn = eval(f"lambda lib: {call}")  # the calling line is line 1 of "<string>"
        (ours,) = records(fn, hookgrad)
        assert (ours.filename, ours.lineno, ours.category.__name__) == ("<string>", 1, category)


def test_padding_same_warns_once_at_the_calling_line():
    def conv(lib):
        return lib.nn.functional.conv1d(lib.ones(1, 1, 5), lib.ones(1, 1, 2), padding="same")
    message = ("Using padding='same' with even kernel lengths and odd dilation may require a "
               "zero-padded copy of the input be created")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        conv(hookgrad)
        conv(hookgrad)
    assert [(str(r.message), r.filename, r.lineno) for r in caught] == [
        (message, HERE, conv.__code__.co_firstlineno + 1)]
    theirs = torch_locations_in_a_fresh_process({"conv": (
        "[lib.nn.functional.conv1d(lib.ones(1, 1, 5), lib.ones(1, 1, 2), padding='same') "
        "for _ in range(2)]")})
    assert theirs["conv"] == [("<conv>", 1, "UserWarning")]


def test_helper_names_the_first_frame_outside_the_package():
    def user_code():
        _warnings.warn("from the user's side", DeprecationWarning)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        user_code()
    assert [(r.category, r.filename, r.lineno) for r in caught] == [
        (DeprecationWarning, HERE, user_code.__code__.co_firstlineno + 1)]
