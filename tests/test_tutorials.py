"""PyTorch's beginner tutorials (examples/tutorials/) print under hookgrad what they print under
torch, with only the import changed.

Each script runs twice in this process, once as written and once with its imports rewritten to
torch, in lockstep (tests/_lockstep.py): both runs draw the same random numbers. The outputs must
agree line by line: text exactly (grad_fn names, shapes, reprs), numbers within float noise. Each
script also runs outside the harness on each library's own generator, seeded alike, as a user
would run it: hookgrad draws torch's stream, so the outputs agree there too.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from _lockstep import as_torch, first_difference, lockstep, numbers_match, run_script

import hookgrad

TUTORIALS = Path(__file__).resolve().parent.parent / "examples" / "tutorials"

SCRIPTS = sorted(TUTORIALS.glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[path.stem for path in SCRIPTS])
def test_tutorial_prints_what_torch_prints(script):
    expected = run_script(script, "torch")
    actual = run_script(script, "hookgrad")
    assert expected.strip(), "the tutorial printed nothing under torch"
    difference = first_difference(actual, expected)
    assert difference is None, f"{script.name}: {difference}"


@pytest.mark.parametrize("script", SCRIPTS, ids=[path.stem for path in SCRIPTS])
def test_tutorial_prints_what_torch_prints_on_both_own_generators(script):
    """Outside the harness, each library drawing from its own generator after the same
    ``manual_seed``: hookgrad draws torch's stream, so the outputs agree all the same."""
    default_dtype = hookgrad.get_default_dtype()
    try:
        torch.manual_seed(0)
        expected = run_script(script, "torch", in_lockstep=False)
        hookgrad.manual_seed(0)
        actual = run_script(script, "hookgrad", in_lockstep=False)
    finally:
        hookgrad.set_default_dtype(default_dtype)
        torch.set_default_dtype(torch.float32)
    difference = first_difference(actual, expected)
    assert difference is None, f"{script.name}: {difference}"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # half-run cleanup
def test_scripts_import_only_hookgrad():
    for script in SCRIPTS:
        source = script.read_text()
        assert "import hookgrad as torch" in source, script.name
        assert "import torch" not in source, f"{script.name} imports torch itself"


# -- the harness itself ---------------------------------------------------------------------------
@pytest.mark.parametrize("draw", [
    lambda lib: lib.randn(2, 3),
    lambda lib: lib.randn((4,), dtype=lib.float64),
    lambda lib: lib.rand(3, 2),
    lambda lib: lib.randint(0, 10, (5,)),
    lambda lib: lib.randint(7, size=(2, 2)),
    lambda lib: lib.randint(high=5, size=(3,), dtype=lib.int64),
    lambda lib: lib.randperm(6),
    lambda lib: lib.randn_like(lib.zeros(2, 2, dtype=lib.float64)),
    lambda lib: lib.rand_like(lib.zeros(3)),
    lambda lib: lib.nn.init.uniform_(lib.empty(3, 4), -0.5, 0.5),
    lambda lib: lib.nn.init.kaiming_uniform_(lib.empty(3, 4), a=5 ** 0.5),
    lambda lib: lib.nn.init.xavier_normal_(lib.empty(3, 4)),
    lambda lib: lib.nn.Linear(4, 2).weight,
    lambda lib: lib.nn.functional.dropout(lib.ones(4, 4), 0.5),
], ids=["randn", "randn-f64", "rand", "randint", "randint-high", "randint-keywords", "randperm",
        "randn_like", "rand_like", "init.uniform_", "kaiming_uniform_", "xavier_normal_", "Linear",
        "dropout"])
def test_lockstep_draws_the_same_numbers_in_both_libraries(draw):
    with lockstep(torch):
        torch.manual_seed(3)
        expected = draw(torch).detach()
    with lockstep(hookgrad):
        hookgrad.manual_seed(3)
        actual = draw(hookgrad).detach()
    assert str(actual.dtype) == str(expected.dtype)
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())


@pytest.mark.parametrize("replacement", [False, True])
def test_lockstep_shuffles_data_loaders_alike(replacement):
    orders = []
    for lib in (torch, hookgrad):
        with lockstep(lib):
            data = lib.utils.data.TensorDataset(lib.arange(10))
            sampler = lib.utils.data.RandomSampler(data, replacement=replacement)
            loader = lib.utils.data.DataLoader(data, batch_size=4, sampler=sampler)
            orders.append([batch[0].tolist() for _ in range(3) for batch in loader])
    assert orders[0] == orders[1]


def test_lockstep_restores_the_libraries():
    originals = (torch.randn, torch.Tensor.uniform_, torch.nn.init.uniform_, hookgrad.randn,
                 hookgrad.nn.init.uniform_)
    with lockstep(torch), lockstep(hookgrad):
        torch.set_default_dtype(torch.float64)
        assert torch.randn is not originals[0]
    assert (torch.randn, torch.Tensor.uniform_, torch.nn.init.uniform_, hookgrad.randn,
            hookgrad.nn.init.uniform_) == originals
    assert torch.get_default_dtype() == torch.float32


def test_as_torch_rewrites_only_imports():
    source = "import hookgrad as torch\nfrom hookgrad import nn\nprint('hookgrad')\n"
    assert as_torch(source) == "import torch as torch\nfrom torch import nn\nprint('hookgrad')\n"


@pytest.mark.parametrize("actual, expected, same", [
    ("0.1235", "0.1234", True),            # rounds the other way at the printed precision
    ("0.1237", "0.1234", False),
    ("1234.5678", "1234.5679", True),
    ("1000", "1001", False),               # integers (sizes, counts) are exact
    ("1.0000e-03", "1.0001e-03", True),
    ("2.0e-03", "3.0e-03", False),
    ("nan", "nan", True),
    ("nan", "0.5", False),
    ("-3.6621099486211506e-09", "-6.71270206087371e-10", True),   # noise around an exact zero
    ("1.5e-06", "1.8e-06", False),
])
def test_numbers_match(actual, expected, same):
    assert numbers_match(actual, expected) is same


@pytest.mark.parametrize("actual, expected, same", [
    ("tensor([0.1234], grad_fn=<AddBackward0>)", "tensor([0.1235], grad_fn=<AddBackward0>)", True),
    ("tensor([0.1234], grad_fn=<AddBackward0>)", "tensor([0.1234], grad_fn=<AddmmBackward0>)",
     False),
    ("<AddBackward0 object at 0x7f00>", "<AddBackward0 object at 0x7f3a59d21>", True),
    ("torch.Size([3, 784])", "torch.Size([3, 785])", False),
    ("a\nb", "a", False),
    ("a", "a\nb", False),
    ("tensor([1., 2.])", "tensor([1, 2])", False),
])
def test_first_difference(actual, expected, same):
    assert (first_difference(actual, expected) is None) is same
